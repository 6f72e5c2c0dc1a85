"""make_tasks.py FOLDER: two local 20-item tasks for lm-eval 0.4.0-0.4.2's --log_samples shape.

t_mc: multiple choice, acc and acc_norm (the stand-in's loglikelihood). t_gen: generate_until scored by exact_match
under two filters, strict-match (only "The answer is X.") and flexible-extract (any option's name), so the two
filters' scores of one item differ (tests/lm_eval_standin.py answers "The answer is X." on about half the items).
"""
import json
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from lm_eval_standin import write_tasks  # noqa: E402

folder = Path(sys.argv[1]).resolve()
write_tasks(folder, n_tasks=1, n_items=20, seed=3)
data = folder / "toy_task_00.jsonl"
mc = yaml.safe_load((folder / "toy_task_00.yaml").read_text())
mc["task"] = "t_mc"
# Jinja templates, not column names: lm-eval 0.4.0 reads doc_to_choice only as a template.
mc.update(doc_to_text="{{question}}", doc_to_choice="{{choices}}", doc_to_target="{{answer}}")
mc["metric_list"] = [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in ("acc", "acc_norm")]
(folder / "toy_task_00.yaml").write_text(yaml.safe_dump(mc, sort_keys=False))
gen = {"task": "t_gen", "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(data)}},
       "test_split": "test", "output_type": "generate_until", "doc_to_text": "{{question}}",
       "doc_to_target": "{{choices[answer]}}", "generation_kwargs": {"until": ["\n"], "do_sample": False},
       "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
       "filter_list": [{"name": "strict-match", "filter": [{"function": "regex",
                                                            "regex_pattern": r"The answer is (\w+)\."},
                                                           {"function": "take_first"}]},
                       {"name": "flexible-extract", "filter": [{"function": "regex",
                                                                "regex_pattern": r"(alpha|beta|gamma|delta)"},
                                                               {"function": "take_first"}]}],
       "metadata": {"version": 1.0}}
(folder / "t_gen.yaml").write_text(yaml.safe_dump(gen, sort_keys=False))
print(json.dumps(sorted(p.name for p in folder.iterdir())))
