"""The HELM loop as a new user: reduce a HELM leaderboard, run its conf for a new model, predict from the run dirs.

A manifest chosen from a HELM leaderboard (Every Eval Ever records of HELM Classic: titles such as ``QuAC``) is
predicted from the new model's HELM run directories, which helm-run names by their run entries
(``quac:model=...``; MMLU subjects under benchmark ``mmlu``). They are the same harness: read as the leaderboard's
datasets (the mean of a title's runs), not as another harness's results, and never from a run of an ablation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from harness_ext.adapters.helm import MAIN_METRICS, parse_run_name
from harness_ext.methods.reduction.harness_names import RAFT_SUBSETS
from harness_ext.methods.reduction.helm_runs import helm_run_rows

SHARED = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
CLASSIC = SHARED / "every_eval_ever" / "data" / "helm_classic"


def _ds(name, metric):
    return {"name": name, "benchmark": "helm_classic", "metric": metric, "task": None, "num_fewshot": None}


def _row(model, benchmark, dataset, metric, value):
    return {"model": model, "benchmark": benchmark, "dataset": dataset, "metric": metric, "num_fewshot": 5,
            "value": value, "task": None}


def test_helm_runs_are_read_as_the_leaderboard_titles():
    datasets = [_ds("QuAC", "F1"), _ds("MMLU", "EM"), _ds("TruthfulQA", "EM"), _ds("RAFT", "EM")]
    subjects = ("abstract_algebra", "college_chemistry", "computer_security", "econometrics", "us_foreign_policy")
    rows = [_row("org/new", "helm", "quac", "f1_score", 0.5),
            # the run-spec function writes the method into TruthfulQA's name; the entry does not name it
            _row("org/new", "helm", "truthful_qa:task=mc_single,method=multiple_choice_joint", "exact_match", 0.4),
            # an ablation of QuAC is another measurement: never read as QuAC
            _row("org/abl", "helm", "quac:groups=ablation_prompts", "f1_score", 0.9),
            # 3 of RAFT's 11 subsets: HELM's RAFT is the mean of all 11, so it is not read
            *[_row("org/new", "helm", f"raft:subset={s}", "quasi_exact_match", 0.7) for s in RAFT_SUBSETS[:3]]]
    rows += [dict(_row("org/new", "mmlu", s, "acc", v), task=f"mmlu:subject={s},method=multiple_choice_joint,model=org_new")
             for s, v in zip(subjects, (0.2, 0.4, 0.6, 0.8, 1.0))]
    # lm-eval's results of the same subjects share benchmark and metric: the other harness, never read here
    rows += [dict(_row("org/lm", "mmlu", s, "acc", 0.3), task=f"mmlu_{s}") for s in subjects]
    out = helm_run_rows(datasets, pd.DataFrame(rows))
    got = {(m, c): v for m, c, v in zip(out["model"], out["column"], out["value"])}
    assert got == {("org/new", "QuAC"): 0.5, ("org/new", "MMLU"): pytest.approx(0.6), ("org/new", "TruthfulQA"): 0.4}
    (msg,) = out.attrs["incomplete"]
    assert "RAFT is the mean of 11 HELM runs" in msg and "hold 3 of them" in msg


def test_helm_lite_math_is_the_mean_of_its_seven_subject_runs():
    # HELM Lite's runs carry the arguments of its conf's entries and the model's stop setting (stop=none)
    from harness_ext.methods.reduction.harness_names import MATH_SUBJECTS

    args = "level=1,use_official_examples=False,use_chain_of_thought=True"
    rows = [_row("org/new", "helm", f"math:subject={s},{args}", "math_equiv_chain_of_thought", 0.1 * (i + 1))
            for i, s in enumerate(MATH_SUBJECTS)]
    rows.append(_row("org/new", "helm", "gsm", "exact_match_indicator", 0.75))  # the adapter's main metric of gsm
    lite = [{"name": n, "benchmark": "helm_lite", "metric": "EM", "task": None} for n in ("MATH", "GSM8K")]
    out = helm_run_rows(lite, pd.DataFrame(rows))
    assert dict(zip(out["column"], out["value"])) == {"MATH": pytest.approx(0.4), "GSM8K": 0.75}


def test_civil_comments_is_its_nine_demographic_runs():
    # helm-summarize merges every run of the civil_comments group into HELM Classic's CivilComments cell (Every Eval
    # Ever's records count 18 or 54 stats, not those of demographic=all alone): the conf runs all 9, predict their mean.
    from harness_ext.methods.reduction.harness_names import CIVIL_COMMENTS_DEMOGRAPHICS, helm_description_list

    descs = helm_description_list(_ds("CivilComments", "EM"))
    assert [parse_run_name(d).arg_dict["demographic"] for d in descs] == list(CIVIL_COMMENTS_DEMOGRAPHICS)
    rows = [_row("org/new", "helm", f"civil_comments:demographic={g}", "quasi_exact_match", 0.5 + 0.05 * i)
            for i, g in enumerate(CIVIL_COMMENTS_DEMOGRAPHICS)]
    out = helm_run_rows([_ds("CivilComments", "EM")], pd.DataFrame(rows))
    assert out["value"].tolist() == [pytest.approx(0.7)]


def test_max_eval_instances_in_a_run_name_is_the_same_dataset():
    # HELM's own confs write max_eval_instances=N into entries (it outranks helm-run --max-eval-instances), and the
    # run expander appends it to the run's name: the run is still QuAC, on a sample of its instances.
    run = parse_run_name("quac:model=org_m,data_augmentation=canonical,max_eval_instances=1000")
    assert run.dataset == "quac"


def _write_runs(conf: Path, record: dict, model: str, out: Path) -> int:
    """The run directories helm-run writes for ``conf``'s entries (run_spec.json, stats.json), each run's main metric
    set to the model's leaderboard score of its title (an MMLU subject to the leaderboard's MMLU, the mean of 5)."""
    from pyhocon import ConfigFactory

    scores = {e["evaluation_name"]: e["score_details"]["score"] for e in record["evaluation_results"]}
    titles = {"quac": "QuAC", "imdb": "IMDB", "boolq": "BoolQ", "mmlu": "MMLU", "truthful_qa": "TruthfulQA",
              "narrative_qa": "NarrativeQA", "civil_comments": "CivilComments", "raft": "RAFT"}
    n = 0
    for entry in ConfigFactory.parse_file(str(conf))["entries"]:
        name = entry["description"].replace("model=text", f"model={model.replace('/', '_')}")
        run = parse_run_name(name)
        if run.scenario not in titles:
            continue
        value = scores[titles[run.scenario]]
        metric, split = MAIN_METRICS[run.group]
        folder = out / name
        folder.mkdir(parents=True)
        (folder / "run_spec.json").write_text(json.dumps({
            "name": name, "scenario_spec": {"class_name": "x", "args": {}},
            "adapter_spec": {"method": "generation", "max_train_instances": 5, "model": model}, "groups": [run.group]}))
        (folder / "stats.json").write_text(json.dumps([{"name": {"name": metric, "split": split}, "count": 1,
                                                        "sum": value, "mean": value}]))
        n += 1
    return n


@pytest.mark.slow
@pytest.mark.skipif(not CLASSIC.is_dir(), reason="shared HELM Classic records not present")
def test_strongest_model_predicted_from_its_helm_runs(tmp_path, capsys):
    from harness_ext.cli import main

    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(CLASSIC)]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "helm_classic", "--budget", "4", "--exclude-models",
                 "meta/Llama-2-70B", "--out", str(out), "--no-plot"]) == 0
    conf = next(out.glob("run_entries_*.conf"))
    # the leaderboard's runs were made at HELM's default shots, which the entries ask for: no "may differ"
    assert "as the HELM leaderboard's runs did" in conf.read_text() and "may differ" not in conf.read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    subset = [e["name"] for e in manifest["subset"]]
    record = json.loads(next((CLASSIC / "meta" / "Llama-2-70B").glob("*.json")).read_text())
    runs = tmp_path / "benchmark_output" / "runs" / "subset"
    assert _write_runs(conf, record, "meta/llama-2-70b", runs) >= len(subset)
    capsys.readouterr()
    assert main(["predict", "--manifest", str(out), str(runs), "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (agg,) = doc["aggregate"]
    assert agg["n_observed"] == len(subset)  # every subset dataset read from the model's own HELM runs
    assert agg["frontier"] > 0  # the strongest model is marked at the frontier
    observed = {d["dataset"]: d["raw"] for d in doc["datasets"] if d["observed"]}
    truth = {e["evaluation_name"]: e["score_details"]["score"] for e in record["evaluation_results"]}
    assert observed == {t: pytest.approx(truth[t]) for t in subset}
    assert not any("other harness" in w for w in doc["warnings"])
    # the leaderboard's headline is named as not predicted, not left for the user to look for
    assert "mean win rate" in doc["score"]["reason"]
