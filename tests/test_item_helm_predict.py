"""``predict`` from a new model's HELM run (per_instance_stats.json + instances.json), matched to the manifest's items.

The new model's run is the committed real HELM slice (tests/fixtures/helm_instances/babi_qa_task15: 40 test
instances of AlephAlpha/luminous-base, README there). The population is synthetic: item tables on the same
instance ids, task and metric, ingested as users hold them. Checked: the whole run gives HELM's own score
exactly; a run of the manifest's items gives the same estimates as lm-eval per-sample logs of the same
scores; a run of HELM's own draw (``--max-eval-instances``) is used as the random sample, said so; broken
runs give one clear error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.item_predict import predict_items
from harness_ext.methods.reduction.manifest import load_manifest

RUN = Path(__file__).parent / "fixtures" / "helm_instances" / "babi_qa_task15"
TASK, METRIC, MODEL = "babi_qa:task=15", "quasi_exact_match", "AlephAlpha/luminous-base"
DATE = "2026-01-01T00-00-00.000000"


def _run_scores() -> pd.Series:
    """The run's per-instance score on the test split (mean over its train trials), by item number."""
    split = {x["id"]: x["split"] for x in json.loads((RUN / "instances.json").read_text())}
    rows = [(int(b["instance_id"][2:]), s["mean"]) for b in json.loads((RUN / "per_instance_stats.json").read_text())
            if b.get("perturbation") is None and split[b["instance_id"]] == "test"
            for s in b["stats"] if s["name"]["name"] == METRIC]
    return pd.DataFrame(rows, columns=["item", "v"]).groupby("item")["v"].mean()


def _reduce(tmp_path, n_items=12, design="random") -> Path:
    ids = _run_scores().index.to_numpy()
    rng = np.random.default_rng(5)
    p_item = rng.uniform(0.1, 0.9, size=len(ids))
    rows = [(f"org/m{j:02d}", int(i), float(rng.random() < p)) for j in range(25) for i, p in zip(ids, p_item)]
    tables = tmp_path / "tables"
    tables.mkdir()
    pd.DataFrame(rows, columns=["model", "item", "score"]).to_parquet(tables / "babi.parquet", index=False)
    (tables / "babi.parquet.meta.yaml").write_text(f"items:\n  task: '{TASK}'\n  metric: {METRIC}\n  benchmark: helm\n")
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tables)]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", str(n_items), "--item-design", design, "--out", str(out),
                 "--no-plot"]) == 0
    return out


def _helm_slice(folder: Path, keep) -> Path:
    """The real run with only the instances ``keep`` (item numbers) in per_instance_stats.json."""
    shutil.copytree(RUN, folder)
    doc = json.loads((folder / "per_instance_stats.json").read_text())
    kept = [b for b in doc if int(b["instance_id"][2:]) in set(int(k) for k in keep)]
    (folder / "per_instance_stats.json").write_text(json.dumps(kept))
    return folder


def _lm_eval_logs(folder: Path, scores: pd.Series) -> Path:
    folder.mkdir()
    (folder / f"results_{DATE}.json").write_text(json.dumps(
        {"config": {"model": "hf", "model_args": f"pretrained={MODEL}"}, "model_name": MODEL, "results": {}}))
    lines = [json.dumps({"doc_id": int(d), "filter": "none", "metrics": [METRIC], METRIC: float(v)})
             for d, v in scores.items()]
    (folder / f"samples_{TASK}_{DATE}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_the_whole_helm_run_gives_helm_score_exactly(tmp_path, capsys):
    out = _reduce(tmp_path)
    stats = json.loads((RUN / "stats.json").read_text())
    want = next(s["mean"] for s in stats if s["name"] == {"name": METRIC, "split": "test"})
    pred = predict_items(load_manifest(out), [RUN])
    [row] = pred.table.to_dict("records")
    assert row["model"] == MODEL and row["observed"] and row["n_used"] == 40
    assert row["raw"] == pytest.approx(want, abs=1e-12) and row["raw_lower"] == row["raw_upper"] == row["raw"]
    assert any("other splits than test" in w for w in pred.warnings)  # the 5 valid instances, said
    # Through the command line, the run's per_instance_stats.json named as a file works too.
    assert main(["predict", "-m", str(out), str(RUN / "per_instance_stats.json"), "--no-lm-eval-results"]) == 0
    assert MODEL in capsys.readouterr().out


@pytest.mark.parametrize("design", ["random", "stratified"])
def test_a_helm_run_of_the_manifest_items_equals_lm_eval_logs_of_them(tmp_path, design):
    out = _reduce(tmp_path, design=design)
    m = load_manifest(out)
    sample = decode_ids(m["tasks"][TASK]["sample"])
    helm = _helm_slice(tmp_path / "helm_run", sample)
    lm = _lm_eval_logs(tmp_path / "lm_eval", _run_scores().loc[sample])
    a, b = predict_items(m, [helm]), predict_items(m, [lm])
    cols = ["model", "dataset", "raw", "raw_lower", "raw_upper", "n_used", "observed"]
    assert a.table[cols].to_dict("records") == b.table[cols].to_dict("records")
    assert a.aggregate[["aggregate", "lower", "upper"]].equals(b.aggregate[["aggregate", "lower", "upper"]])
    [row] = a.table.to_dict("records")
    assert row["n_used"] == len(sample) == 12 and not row["observed"]
    assert row["raw_lower"] < row["raw"] < row["raw_upper"]


@pytest.mark.slow
def test_helm_own_draw_is_the_sample_under_the_random_design(tmp_path):
    out = _reduce(tmp_path)
    m = load_manifest(out)
    sample = set(decode_ids(m["tasks"][TASK]["sample"]).tolist())
    others = [i for i in _run_scores().index if i not in sample][:15]  # what --max-eval-instances 15 might run
    pred = predict_items(m, [_helm_slice(tmp_path / "helm_run", others)])
    [row] = pred.table.to_dict("records")
    assert row["n_used"] == 15 and row["raw_lower"] < row["raw"] < row["raw_upper"]
    [note] = [w for w in pred.warnings if "HELM's own draw" in w]
    assert "HELM's own draw of 15 of the task's items used as its random sample" in note
    assert "the run holds 0 of the manifest's 12 drawn items" in note
    # The population here is an item table on HELM's instance numbers: matched by number, and said so.
    assert "came from an item table: matched by number" in note
    # The stratified design cannot take another draw: the strata fix the inclusion probabilities.
    (tmp_path / "s").mkdir()
    ms = load_manifest(_reduce(tmp_path / "s", design="stratified"))
    keep = set(decode_ids(ms["tasks"][TASK]["sample"]).tolist())
    pred = predict_items(ms, [_helm_slice(tmp_path / "s" / "helm_run", [i for i in others if i not in keep][:3])])
    assert np.isnan(pred.table["raw"].iloc[0])
    assert any("0 of the manifest's 12 items logged" in w for w in pred.warnings)


@pytest.mark.slow
def test_broken_helm_runs_give_one_clear_error(tmp_path):
    out = _reduce(tmp_path)
    m = load_manifest(out)
    run = tmp_path / "broken"
    shutil.copytree(RUN, run)
    (run / "per_instance_stats.json").write_text('{"not": "a list"}')
    with pytest.raises(HarnessExtError, match="cannot read the HELM run .*broken.*expected a list"):
        predict_items(m, [run])
    run2 = tmp_path / "nostats"
    shutil.copytree(RUN, run2)
    (run2 / "stats.json").unlink()
    with pytest.raises(HarnessExtError, match="cannot read the HELM run .*nostats"):
        predict_items(m, [run2])
    run3 = tmp_path / "badspec"
    shutil.copytree(RUN, run3)
    (run3 / "run_spec.json").write_text("{}")
    with pytest.raises(HarnessExtError, match="cannot read the HELM run .*badspec"):
        predict_items(m, [run3])
    stray = tmp_path / "notes.json"
    stray.write_text("{}")
    with pytest.raises(HarnessExtError, match="not a per-item log"):
        predict_items(m, [stray])


def test_helm_conf_runs_the_drawn_count_per_entry_and_leaves_out_several_entry_tasks(tmp_path):
    """HELM Lite's MMLU runs as 5 subject entries: each would run its own N, numbered from id0 and named by its
    subject, so no run of it matches the task's items: the conf leaves it out, counted. GSM8K's one entry carries
    max_eval_instances=50 (it outranks helm-run's flag), so HELM runs exactly the manifest's count."""
    from harness_ext.plugins.manifest_writers import helm_items_summary, write_helm_conf

    entry = {"name": "mmlu", "benchmark": "helm_lite", "metric": "acc", "task": "mmlu", "num_fewshot": None}
    gsm = dict(entry, name="gsm", task="gsm")
    manifest = {"kind": "items", "subset": [entry, gsm], "design": {"n_per_task": 50},
                "tasks": {"mmlu": {"n_items": 567, "n_run": 50}, "gsm": {"n_items": 1000, "n_run": 40}},
                "cost": {"items_run": 90}}
    [path] = write_helm_conf(manifest, tmp_path)
    text = path.read_text()
    assert "--max-eval-instances" not in text.split("\n")[1] and text.count("description:") == 1
    assert 'gsm:model=text_code,max_eval_instances=40"' in text
    assert "HELM runs 40 instances: 1 task" in text and "0 of the 1 tasks came from HELM runs" in text
    assert 'Not in this conf: 1 task HELM runs as several entries ("mmlu": 5)' in text and "Run their 50 drawn" in text
    assert any(line.startswith("HELM runs 40 instances") for line in helm_items_summary(manifest))
    # A population's run name with its own max_eval_instances is replaced, not doubled.
    from harness_ext.plugins.manifest_writers import with_max_eval_instances

    assert with_max_eval_instances("gsm:model=x,max_eval_instances=1000", 7) == "gsm:model=x,max_eval_instances=7"
    # Only multi-entry tasks: nothing to run, and said why.
    [path] = write_helm_conf(dict(manifest, subset=[entry]), tmp_path)
    assert "entries: []" in path.read_text() and "Run:" not in path.read_text()
