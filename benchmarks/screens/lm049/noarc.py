"""noarc.py SRC DST TASK: a copy of item folder SRC without TASK in its group and samples file (to run --samples alone
on releases where a task of lm-eval's own name would otherwise stop the run offline)."""
import json, shutil, sys
from pathlib import Path

src, dst, task = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)
(dst / f"{task}.yaml").unlink()
g = dst / "harness_ext_reduced.yaml"
g.write_text("".join(l for l in g.read_text().splitlines(True) if l.strip() != f"- {task}"))
s = dst / "harness_ext_reduced_samples.json"
d = json.loads(s.read_text()); d.pop(task); s.write_text(json.dumps(d))
