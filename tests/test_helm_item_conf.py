"""The HELM item loop on a population of HELM runs: ``reduce --items`` writes a conf whose entry runs exactly the drawn
count (``max_eval_instances=N`` in the entry, HELM's own seed-0 draw), and ``predict`` takes the instances HELM ran as
the task's random sample, saying so with counts.

The runs are the committed real HELM slice (tests/fixtures/helm_instances/babi_qa_task15: 40 test instances of
AlephAlpha/luminous-base): the population is 20 copies of it under other model names with resampled 0/1 scores, so
the instance ids, splits, metric and file layout are HELM's own. The new model's run keeps the instances helm-run's
downsampling keeps for ``max_eval_instances=N`` (``np.random.seed(0)``, ``np.random.choice`` without replacement over
the run's eval instances in scenario order, as HELM's ``downsample_eval_instances``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.item_predict import predict_items
from harness_ext.methods.reduction.manifest import load_manifest

RUN = Path(__file__).parent / "fixtures" / "helm_instances" / "babi_qa_task15"
METRIC, TASK = "quasi_exact_match", "babi_qa:task=15"


def _as_model(src: Path, dest: Path, model: str, rng, keep=None) -> Path:
    """A copy of the real run named for ``model``, its scores resampled (``rng``) or kept (``rng`` None), with only
    the instances ``keep`` (instance ids) when given."""
    shutil.copytree(src, dest)
    spec = json.loads((dest / "run_spec.json").read_text())
    spec["name"] = spec["name"].replace("AlephAlpha_luminous-base", model.replace("/", "_"))
    spec["adapter_spec"]["model"] = model
    (dest / "run_spec.json").write_text(json.dumps(spec))
    doc = json.loads((dest / "per_instance_stats.json").read_text())
    if keep is not None:
        doc = [b for b in doc if b["instance_id"] in keep]
    if rng is not None:
        p = {b["instance_id"]: rng.uniform(0.1, 0.9) for b in doc}
        for b in doc:
            for s in b["stats"]:
                if s["name"]["name"] == METRIC:
                    v = float(rng.random() < p[b["instance_id"]])
                    s.update(mean=v, sum=v, count=1)
    (dest / "per_instance_stats.json").write_text(json.dumps(doc))
    return dest


def _helm_draw(n: int) -> set:
    """The eval instances helm-run keeps for ``max_eval_instances=n`` (HELM's ``downsample_eval_instances``)."""
    evals = [x["id"] for x in json.loads((RUN / "instances.json").read_text()) if x["split"] in ("valid", "test")]
    np.random.seed(0)
    return set(np.random.choice(evals, n, replace=False).tolist())


@pytest.mark.slow
def test_helm_run_population_conf_runs_the_drawn_count_and_predict_uses_helms_draw(tmp_path, capsys):
    rng = np.random.default_rng(3)
    runs = tmp_path / "runs"
    for j in range(20):
        _as_model(RUN, runs / f"m{j:02d}", f"org/m{j:02d}", rng)
    db, out = tmp_path / "store.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(runs)]) == 0
    assert main(["reduce", "--db", str(db), "--items", "10", "--out", str(out), "--no-plot"]) == 0
    printed = capsys.readouterr().out
    m = load_manifest(out)
    [task] = m["tasks"]
    assert m["tasks"][task]["helm_instances"] is True and m["tasks"][task]["n_run"] == 10
    [conf] = out.glob("run_entries_*.conf")
    text = conf.read_text()
    assert text.count("description:") == 1 and "max_eval_instances=10" in text
    assert "--max-eval-instances" not in text.split("\n")[1]  # the entry carries its own count
    assert "HELM runs 10 instances: 1 task" in text and "1 of the 1 tasks came from HELM runs" in text
    assert "HELM conf: HELM runs 10 instances" in printed
    # The new model runs the conf: HELM keeps its own seed-0 draw of 10, not the manifest's.
    new = _as_model(RUN, tmp_path / "new", "org/new", np.random.default_rng(9), keep=_helm_draw(10))
    pred = predict_items(m, [new])
    [row] = pred.table.to_dict("records")
    assert row["n_used"] == 10 and row["raw_lower"] <= row["raw"] <= row["raw_upper"]
    [note] = [w for w in pred.warnings if "HELM's own draw" in w]
    assert "HELM's own draw of 10 of the task's items used as its random sample" in note
    drawn = decode_ids(m["tasks"][task]["sample"]).tolist()
    both = sum(f"id{i}" in _helm_draw(10) for i in drawn)
    assert f"the run holds {both} of the manifest's 10 drawn items" in note
    assert "item table" not in note  # the population's items are HELM's instance numbers
