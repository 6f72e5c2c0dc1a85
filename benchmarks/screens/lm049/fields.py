"""fields.py VER: one line of tests/fixtures/lm_eval_versions/fields.jsonl for the installed lm-eval (run in its venv)."""
import dataclasses, json, sys

import lm_eval.api.task as T

try:
    import lm_eval.api.group as G
    gc, gcls = sorted(f.name for f in dataclasses.fields(G.GroupConfig)), hasattr(G, "Group")
except Exception:  # no lm_eval.api.group (0.4.3 and older)
    gc, gcls = None, False
print(json.dumps({"version": sys.argv[1], "task_config_fields": sorted(f.name for f in dataclasses.fields(T.TaskConfig)),
                  "group_config_fields": gc, "group_class": gcls}))
