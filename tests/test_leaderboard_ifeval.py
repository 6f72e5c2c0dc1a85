"""The Open LLM Leaderboard v2's IFEval score: the mean of two lm-eval metrics of ``leaderboard_ifeval``.

The leaderboard's IFEval is neither ``prompt_level_strict_acc`` nor ``inst_level_strict_acc`` but their mean: its
results file of Llama-2-7b-hf has 0.18484288354898337 and 0.31894484412470026, Every Eval Ever stores 0.2519 (so
do Pythia-410m, -1b and -2.8b's files). The table named no lm-eval metric for it, so ``predict`` read no lm-eval
results for an ``hf_open_llm_v2`` manifest and ``reduce`` warned that none was known. Now an Equivalent may name
several metrics whose mean is the score, and every reader goes through ``lm_eval_score``.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.cross_harness import cross_harness_rows
from harness_ext.methods.reduction.harness_names import (LEADERBOARD_IFEVAL_METRIC, lm_eval_metric, lm_eval_score,
                                                       metric_label, metric_parts, unknown_metric_warnings)

from conftest import SHARED_DATA, load_group_yaml

PROMPT, INST = 0.18484288354898337, 0.31894484412470026  # the leaderboard's Llama-2-7b-hf results file
EEE_IFEVAL = 0.2519  # Every Eval Ever's hf_open_llm_v2 IFEval of meta-llama/Llama-2-7b-hf
HFOPENLLM = SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2"


def _eee(name: str) -> dict:
    return {"name": name, "benchmark": "hf_open_llm_v2", "metric": "Accuracy", "task": None, "num_fewshot": None}


def test_lm_eval_score_is_the_mean_of_every_metric_or_says_what_is_missing():
    both = {"prompt_level_strict_acc": PROMPT, "inst_level_strict_acc": INST, "prompt_level_loose_acc": 0.9}
    value, missing = lm_eval_score(LEADERBOARD_IFEVAL_METRIC, both)
    assert missing == [] and round(value, 4) == EEE_IFEVAL
    # One metric: itself; a filtered one by its full name.
    assert lm_eval_score("acc", {"acc": 0.5, "acc_norm": 0.7}) == (0.5, [])
    assert lm_eval_score("exact_match,strict-match", {"exact_match,strict-match": 0.3}) == (0.3, [])
    # Part of a mean is never the score: absent, NaN and lm-eval's "N/A" are missing, and named.
    for values in ({"prompt_level_strict_acc": PROMPT}, {"prompt_level_strict_acc": PROMPT, "inst_level_strict_acc": "N/A"},
                   {"prompt_level_strict_acc": PROMPT, "inst_level_strict_acc": math.nan}):
        assert lm_eval_score(LEADERBOARD_IFEVAL_METRIC, values) == (None, ["inst_level_strict_acc"])
    assert lm_eval_score(None, both) == (None, [])
    assert metric_parts(None) == () and metric_parts("acc") == ("acc",)
    assert metric_label(LEADERBOARD_IFEVAL_METRIC) == "the mean of prompt_level_strict_acc and inst_level_strict_acc"
    assert metric_label("acc_norm") == "acc_norm"


def test_the_leaderboards_ifeval_is_the_mean_and_no_unknown_metric_warning():
    e = _eee("IFEval")
    assert metric_parts(lm_eval_metric(e)) == ("prompt_level_strict_acc", "inst_level_strict_acc")
    assert unknown_metric_warnings([e]) == []


def _lm_rows(model: str, values: dict) -> list:
    return [{"model": model, "benchmark": "lm_eval", "dataset": "leaderboard_ifeval", "metric": m,
             "task": "leaderboard_ifeval", "num_fewshot": 0, "value": v} for m, v in values.items()]


def test_cross_harness_rows_read_the_mean_and_name_what_is_missing():
    long = pd.DataFrame(_lm_rows("full", {"prompt_level_strict_acc": PROMPT, "inst_level_strict_acc": INST,
                                          "prompt_level_loose_acc": 0.2})
                        + _lm_rows("half", {"prompt_level_strict_acc": PROMPT}))
    out = cross_harness_rows([_eee("IFEval"), _eee("BBH")], long)
    assert out[["model", "column"]].values.tolist() == [["full", "IFEval"]]
    assert round(out["value"].iloc[0], 4) == EEE_IFEVAL
    assert out.attrs["own_tasks"] == ["IFEval"]  # the leaderboard's own task: no other harness
    [msg] = out.attrs["incomplete"]
    assert msg.startswith("half: IFEval is the mean of prompt_level_strict_acc and inst_level_strict_acc of "
                          "leaderboard_ifeval") and "lack inst_level_strict_acc of leaderboard_ifeval" in msg


def test_group_of_ifeval_alone_says_the_yaml_cannot_take_the_mean_and_the_estimate_does(tmp_path):
    """lm-eval's aggregate_metric_list aggregates one metric over the tasks: the group aggregates the first part
    so that harness-ext's estimate runs, and the estimate reads the task's score as the mean."""
    pytest.importorskip("yaml")
    from harness_ext.methods.reduction import lm_eval_group_estimate as est
    from harness_ext.methods.reduction.lm_eval_group import write_lm_eval_yaml

    subset = [{"step": 1, **_eee("IFEval"), "coverage": 0.9}]
    m = {"tool": {"version": "x"}, "group_name": "g", "subset": subset,
         "datasets": [{**subset[0], "in_subset": True}, {**_eee("BBH"), "in_subset": False}]}
    path = write_lm_eval_yaml(m, tmp_path)[0]
    doc, text = load_group_yaml(path), path.read_text()
    assert doc["aggregate_metric_list"][0]["metric"] == "prompt_level_strict_acc"
    assert "the mean of prompt_level_strict_acc and inst_level_strict_acc, which lm-eval's group YAML cannot " \
           "express" in text
    block = {"prompt_level_strict_acc,none": PROMPT, "inst_level_strict_acc,none": INST,
             "inst_level_strict_acc_stderr,none": "N/A", "prompt_level_loose_acc,none": 0.2}
    scores = est._scores("prompt_level_strict_acc", {"leaderboard_ifeval": block}, ["leaderboard_ifeval"], m)
    assert round(scores["leaderboard_ifeval"], 4) == EEE_IFEVAL
    half = {"leaderboard_ifeval": {"prompt_level_strict_acc,none": PROMPT}}
    assert est._scores("prompt_level_strict_acc", half, ["leaderboard_ifeval"], m) == {}


def _results_file(folder, model: str, ifeval: dict) -> None:
    """An lm-eval v0.4 results file of the leaderboard's tasks, laid out as the leaderboard's own files are:
    ``leaderboard_musr`` is a group over its subtasks (Llama-2-7b-hf's numbers)."""
    folder.mkdir(exist_ok=True)
    musr = {"alias": " - leaderboard_musr", "acc_norm,none": 0.3701, "acc_norm_stderr,none": 0.017}
    results = {"leaderboard_ifeval": {"alias": " - leaderboard_ifeval", **ifeval}, "leaderboard_musr": musr,
               "leaderboard_musr_team_allocation": {"alias": "  - leaderboard_musr_team_allocation",
                                                    "acc_norm,none": 0.3, "acc_norm_stderr,none": 0.03}}
    doc = {"results": results, "groups": {"leaderboard_musr": musr},
           "group_subtasks": {"leaderboard_musr": ["leaderboard_musr_team_allocation"], "leaderboard_ifeval": []},
           "n-shot": {"leaderboard_ifeval": 0, "leaderboard_musr_team_allocation": 0},
           "configs": {t: {"task": t, "num_fewshot": 0} for t in results if t != "leaderboard_musr"}, "model_name": model,
           "config": {"model": "hf", "model_args": f"pretrained={model}"}, "lm_eval_version": "0.4.3"}
    (folder / f"results_{model.replace('/', '__')}.json").write_text(json.dumps(doc))


@pytest.mark.skipif(not HFOPENLLM.is_dir(), reason="needs the shared Every Eval Ever data")
@pytest.mark.slow
def test_predict_reads_the_leaderboards_ifeval_from_lm_eval_results(tmp_path, capsys):
    """reduce on Every Eval Ever's hf_open_llm_v2 with IFEval in the subset, then predict from lm-eval results of
    leaderboard_ifeval: IFEval is read as the mean (0.2519 for Llama-2-7b-hf, as the leaderboard shows it); a model
    with one of the two metrics is not read, and the warning names the missing one; MuSR is read from its lm-eval
    group. Before: nothing was read ("none of the results is on a dataset of this manifest")."""
    files = sorted(HFOPENLLM.rglob("*.json"))[:300]
    db, out, new = tmp_path / "store.duckdb", tmp_path / "red", tmp_path / "new"
    assert main(["ingest", "--db", str(db), "-q", *map(str, files)]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "hf_open_llm_v2", "--budget", "5", "--n-random", "20",
                 "--no-plot", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert "IFEval" in [s["name"] for s in manifest["subset"]]
    assert "no known lm-eval metric gives" not in err and not any("no known lm-eval metric" in w
                                                                   for w in manifest["warnings"])
    assert "cannot express" in (out / "harness_ext_reduced.yaml").read_text()
    _results_file(new, "meta-llama/Llama-2-7b-hf", {"prompt_level_strict_acc,none": PROMPT,
                                                    "prompt_level_strict_acc_stderr,none": 0.0167,
                                                    "inst_level_strict_acc,none": INST,
                                                    "inst_level_strict_acc_stderr,none": "N/A"})
    _results_file(new, "org/half", {"prompt_level_strict_acc,none": PROMPT})
    report = tmp_path / "pred.json"
    assert main(["predict", "-m", str(out), str(new), "--json", str(report)]) == 0
    doc = json.loads(report.read_text())
    rows = {(r["model"], r["dataset"]): r for r in doc["datasets"]}
    llama = rows[("meta-llama/Llama-2-7b-hf", "IFEval")]
    assert llama["observed"] and round(llama["raw"], 4) == EEE_IFEVAL
    # The leaderboard's MuSR is lm-eval's group leaderboard_musr, stored as an aggregate: read through the table too.
    musr = rows[("meta-llama/Llama-2-7b-hf", "MUSR")]
    assert musr["observed"] and musr["raw"] == pytest.approx(0.3701)
    assert not rows[("org/half", "IFEval")]["observed"]
    assert any(w.startswith("org/half: IFEval is the mean of prompt_level_strict_acc and inst_level_strict_acc")
               and "lack inst_level_strict_acc" in w for w in doc["warnings"])
    # The leaderboard ran these lm-eval tasks: no warning that another harness's prompts were used.
    assert not any("read from the other harness" in w for w in doc["warnings"])
    # The lm-eval-layout file beside the run names IFEval's row by the mean it is, as lm-eval's metrics.
    written = [json.loads(p.read_text()) for p in new.glob("harness_ext_prediction_*.json")]
    llama_doc = next(d for d in written if d["model_name"] == "meta-llama/Llama-2-7b-hf")
    row = llama_doc["results"]["leaderboard_ifeval"]
    assert round(row[f"{IFEVAL_KEY},predicted"], 4) == EEE_IFEVAL and "Accuracy,predicted" not in row
    assert llama_doc["higher_is_better"]["leaderboard_ifeval"] == {IFEVAL_KEY: True}


IFEVAL_KEY = "mean_of_prompt_level_strict_acc_and_inst_level_strict_acc"


def test_prediction_file_names_the_leaderboards_ifeval_by_the_mean_of_lm_evals_metrics():
    """predict's lm-eval-layout file named the leaderboard's IFEval row ``Accuracy,predicted`` (the Every Eval Ever
    records' word, a metric lm-eval never writes for leaderboard_ifeval), while BBH's row got lm-eval's
    ``acc_norm``. The score is the mean of prompt_level_strict_acc and inst_level_strict_acc: the key says so."""
    from harness_ext.methods.reduction.harness_names import metric_key
    from harness_ext.methods.reduction.predict_export import _lm_eval_metric_name

    manifest = {"kind": "datasets"}
    assert _lm_eval_metric_name(manifest, _eee("IFEval")) == IFEVAL_KEY
    assert _lm_eval_metric_name(manifest, _eee("BBH")) == "acc_norm"
    assert metric_key(LEADERBOARD_IFEVAL_METRIC) == IFEVAL_KEY
    assert metric_key("exact_match,strict-match") == "exact_match" and metric_key(None) is None
    assert "," not in IFEVAL_KEY and " " not in IFEVAL_KEY  # lm-eval splits a key at its comma


@pytest.mark.skipif(not HFOPENLLM.is_dir(), reason="needs the shared Every Eval Ever data")
@pytest.mark.slow
def test_repeated_dataset_globs_give_a_manifest_predict_reads(tmp_path):
    """reduce --datasets A --datasets B (repeatable, any of them) recorded the list in source.query, which the
    manifest schema refused as 'not of type string, null': predict could not read the folder reduce wrote."""
    files = sorted(HFOPENLLM.rglob("*.json"))[:120]
    db, out, new = tmp_path / "store.duckdb", tmp_path / "red", tmp_path / "new"
    assert main(["ingest", "--db", str(db), "-q", *map(str, files)]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "hf_open_llm_v2", "--datasets", "IFEval", "--datasets",
                 "MUSR", "--datasets", "BBH", "--budget", "1", "--n-random", "20", "--no-plot", "--out", str(out)]) == 0
    assert json.loads((out / "manifest.json").read_text())["source"]["query"]["datasets"] == ["IFEval", "MUSR", "BBH"]
    _results_file(new, "meta-llama/Llama-2-7b-hf", {"prompt_level_strict_acc,none": PROMPT,
                                                    "inst_level_strict_acc,none": INST})
    assert main(["predict", "-m", str(out), str(new)]) == 0
