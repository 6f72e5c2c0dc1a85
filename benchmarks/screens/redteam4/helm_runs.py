"""Hostile HELM run directories for the item path, from the committed real babi_qa slice (as test_helm_item_conf).

python helm_runs.py OUT KIND: KIND names what is hostile: scenario, args, model, ids, groups."""
import json, shutil, sys
from pathlib import Path

import numpy as np

from names import NAMES

RUN = Path(__file__).resolve().parents[3] / "tests/fixtures/helm_instances/babi_qa_task15"
METRIC = "quasi_exact_match"
ARGS = [f"task={n}" for n in NAMES] + ["task=15,data_path=/etc/passwd", "task=15,max_eval_instances=../../x",
        "task=15,prompt_file=evil.py", 'task=15"}, {description: "evil:data_path=/etc/passwd', "task=15\n  include required(file(\"/etc/passwd\"))",
        "task=15,model=../../m", "task=15,groups=../x", "task=15,method=!function evil.fn"]


def run(dest: Path, name: str, model: str, rng, ids=None, groups=None):
    shutil.copytree(RUN, dest)
    spec = json.loads((dest / "run_spec.json").read_text())
    spec["name"], spec["adapter_spec"]["model"] = name, model
    if groups is not None:
        spec["groups"] = groups
    (dest / "run_spec.json").write_text(json.dumps(spec))
    doc = json.loads((dest / "per_instance_stats.json").read_text())
    inst = json.loads((dest / "instances.json").read_text())
    if ids is not None:  # rename instance ids: the first few to hostile ones
        ren = {b["instance_id"]: i for b, i in zip(doc[: len(ids)], ids)}
        for b in doc:
            b["instance_id"] = ren.get(b["instance_id"], b["instance_id"])
        for x in inst:
            x["id"] = ren.get(x["id"], x["id"])
        (dest / "instances.json").write_text(json.dumps(inst))
    p = {b["instance_id"]: rng.uniform(0.1, 0.9) for b in doc}
    for b in doc:
        for s in b["stats"]:
            if s["name"]["name"] == METRIC:
                v = float(rng.random() < p[b["instance_id"]])
                s.update(mean=v, sum=v, count=1)
    (dest / "per_instance_stats.json").write_text(json.dumps(doc))


def main(out, kind, n_models=12):
    out, rng = Path(out), np.random.default_rng(4)
    for m in range(n_models):
        model = f"org/m{m:02d}"
        if kind == "scenario":
            for k, n in enumerate(NAMES):
                run(out / f"s{k}_{m}", f"{n}:task=15,model=org_m{m:02d}", model, rng)
        elif kind == "args":
            for k, a in enumerate(ARGS):
                run(out / f"a{k}_{m}", f"babi_qa:{a},model=org_m{m:02d}", model, rng)
        elif kind == "model":  # hostile model names: one per model slot
            bad = NAMES[m % len(NAMES)]
            run(out / f"mod{m}", f"babi_qa:task=15,model={bad}", bad, rng)
        elif kind == "ids":
            run(out / f"i{m}", f"babi_qa:task=15,model=org_m{m:02d}", model, rng,
                ids=["../../x", "id*", "id1e3", "{{x}}", "id-5", "id\u0663", "id 7", "idNaN", "id,8", "/etc/passwd"])
        elif kind == "groups":
            run(out / f"g{m}", f"babi_qa:task=15,model=org_m{m:02d}", model, rng,
                groups=["../../x", "include: /etc/passwd", "!function evil.fn", "mmlu"])


if __name__ == "__main__":
    main(*sys.argv[1:3])
