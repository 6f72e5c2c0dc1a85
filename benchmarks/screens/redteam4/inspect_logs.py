"""Hostile Inspect AI logs for the item path, from the committed real popularity log (tests/fixtures/inspect).

python inspect_logs.py OUT KIND: KIND names what is hostile: tasks, ids, models, scorers, mixed (scorers beside a
HELM population), eval (an .eval archive with hostile member and header values)."""
import json, sys, zipfile
from pathlib import Path

import numpy as np

from names import NAMES

FIX = Path(__file__).resolve().parents[3] / "tests/fixtures/inspect/samples/2025-05-12T20-28-13-04-00_popularity_gpt-4o-mini.json"
BASE = json.loads(FIX.read_text())
IDS = ["../../x", "*", "a,b", " s ", "-1", "$(id)", "`id`", "'; rm -rf ~ #", "\u202eevil", "{{ 7*7 }}", "x" * 5000,
       "/etc/passwd", "C:\\x", "id7", "1e3", "NaN", "!function evil.fn", "include: /etc/passwd", "\u0663", "plain"]
SAFE_TASKS = [n for n in NAMES if "/" not in n and "*" not in n and "@" not in n and ".yaml" not in n and "\\" not in n
              and not n.startswith("~")]


def log(task, model, ids, rng, scorer="match", metadata=None):
    d = json.loads(json.dumps(BASE))
    d["status"] = "success"
    d["eval"].update(task=task, model=model, task_registry_name=task)
    d["eval"]["dataset"]["sample_ids"] = ids
    d["results"]["scores"][0].update(name=scorer, scorer=scorer)
    s0 = d["samples"][0]
    p = rng.uniform(0.2, 0.8)
    d["samples"] = [dict(s0, id=i, scores={scorer: {"value": "C" if rng.random() < p else "I", "answer": "Yes"}},
                         metadata=metadata or s0["metadata"]) for i in ids]
    return d


def main(out, kind, n_models=8):
    out, rng = Path(out), np.random.default_rng(5)
    out.mkdir(parents=True, exist_ok=True)
    plain = list(range(1, 21))
    for m in range(n_models):
        docs = []
        if kind == "tasks":
            docs = [(f"t{k}", log(n, f"org/m{m}", plain, rng)) for k, n in enumerate(SAFE_TASKS)]
        elif kind == "ids":
            docs = [("ids", log("popularity", f"org/m{m}", IDS, rng))]
        elif kind == "models":
            docs = [("mod", log("popularity", NAMES[m % len(NAMES)] if m else "org/plain", plain, rng))]
        elif kind in ("scorers", "mixed"):
            docs = [(f"sc{k}", log(f"task{k}", f"org/m{m}", plain, rng, scorer=n)) for k, n in enumerate(NAMES[:12])]
        elif kind == "metadata":
            md = {"include": "/etc/passwd", "dataset_path": "../../x", "{{ 7*7 }}": "!function evil.fn"}
            docs = [("md", log("popularity", f"org/m{m}", plain, rng, metadata=md))]
        for tag, d in docs:
            (out / f"{tag}_{m}.json").write_text(json.dumps(d))
    if kind == "mixed":  # a HELM population of the same models beside the Inspect logs
        sys.path.insert(0, str(Path(__file__).parent))
        import helm_runs
        for m in range(n_models):
            helm_runs.run(out / f"helm{m}", f"babi_qa:task=15,model=org_m{m}", f"org/m{m}", rng)


if __name__ == "__main__":
    main(*sys.argv[1:3])
