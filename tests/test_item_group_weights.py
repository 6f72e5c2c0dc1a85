"""``reduce --items`` weights the tasks of an lm-eval group as lm-eval's group does, and says what a query left out.

Open LLM Leaderboard v2 runs of early 2025 (lm-eval 0.4.7) write ``leaderboard_bbh``, ``leaderboard_math_hard``, ...
as ``{" ": " ", "alias": ...}``, groups without a score, which ``ingest`` stores as their tasks' mean weighted by
their documents, as lm-eval's group YAMLs (``weight_by_size: true``) make it; other groups carry lm-eval's own score.
The benchmark row of a reduction of exactly such a group's tasks is that group's score, not the unweighted mean of
its tasks (for ``leaderboard_math_hard``, sizes 123 to 307, the two differ by about 2 points on the run mirrored
here). The files here are built by hand after the results files of ``csabakecskemeti/lm_eval_results`` (commit
3a119928, ``meta-llama__Llama-3.1-8B-Instruct/results_2025-01-25T04-48-43.622918.json`` and
``deepseek-ai__DeepSeek-R1-Distill-Llama-8B/results_2025-01-24T19-02-29.392595.json``; no licence, so no copy):
their layout, group blocks, task names, sizes and the math tasks' scores; a third model is made up.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.item_design_only import design_only_text
from harness_ext.methods.reduction.manifest import load_manifest

LOGS = Path(__file__).resolve().parent / "fixtures" / "samples" / "lm_eval_output"

#: leaderboard_math_hard's tasks and documents (n-samples of the mirrored files).
MATH = {"leaderboard_math_algebra_hard": 307, "leaderboard_math_counting_and_prob_hard": 123,
        "leaderboard_math_geometry_hard": 132, "leaderboard_math_intermediate_algebra_hard": 280,
        "leaderboard_math_num_theory_hard": 154, "leaderboard_math_prealgebra_hard": 193,
        "leaderboard_math_precalculus_hard": 135}
MUSR = {"leaderboard_musr_murder_mysteries": 250, "leaderboard_musr_object_placements": 256,
        "leaderboard_musr_team_allocation": 250}
SCORES = {  # exact_match per math task (the first two as in the mirrored files), then acc_norm per MuSR task
    "meta-llama/Llama-3.1-8B-Instruct": ([0.31596091205211724, 0.08130081300813008, 0.05303030303030303,
                                         0.02857142857142857, 0.12337662337662338, 0.31088082901554404,
                                         0.044444444444444446], [0.532, 0.35546875, 0.308]),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": ([0.5439739413680782, 0.22764227642276422, 0.25, 0.125,
                                                 0.42857142857142855, 0.5077720207253886, 0.07407407407407407],
                                                [0.52, 0.30859375, 0.312]),
    "toy/made-up-7b": ([0.2, 0.1, 0.1, 0.05, 0.15, 0.25, 0.04], [0.5, 0.3, 0.3]),
}


def _config(task: str, metric: str) -> dict:
    return {"task": task, "dataset_path": "lighteval/MATH-Hard" if "math" in task else "TAUR-Lab/MuSR",
            "test_split": "test", "num_fewshot": 4 if "math" in task else 0,
            "output_type": "generate_until" if metric == "exact_match" else "multiple_choice",
            "metric_list": [{"metric": metric, "aggregation": "mean", "higher_is_better": True}],
            "metadata": {"version": 1.0}}


def _leaderboard_run(folder: Path, model: str, math_group=None) -> Path:
    """One model's results file of leaderboard_math_hard and leaderboard_musr as lm-eval 0.4.7 wrote them: groups
    without a score (``math_group``: the math group's own score instead, as a file of lm-eval's writes it)."""
    math, musr = SCORES[model]
    doc = {"results": {}, "group_subtasks": {}, "configs": {}, "versions": {}, "n-shot": {}, "n-samples": {}}
    for group, tasks, values, metric in (("leaderboard_math_hard", MATH, math, "exact_match"),
                                         ("leaderboard_musr", MUSR, musr, "acc_norm")):
        doc["results"][group] = {" ": " ", "alias": group}
        doc["group_subtasks"][group] = list(tasks)
        for (task, n), v in zip(tasks.items(), values):
            doc["results"][task] = {"alias": f" - {task}", f"{metric},none": v, f"{metric}_stderr,none": 0.02}
            doc["configs"][task] = _config(task, metric)
            doc["versions"][task] = 1.0
            doc["n-shot"][task] = doc["configs"][task]["num_fewshot"]
            doc["n-samples"][task] = {"original": n, "effective": n}
    if math_group is not None:
        doc["results"]["leaderboard_math_hard"] = {"alias": "leaderboard_math_hard",
                                                   "exact_match,none": math_group(math)}
    doc.update({"config": {"model": "hf", "model_args": f"pretrained={model},dtype=float16", "limit": None},
                "git_hash": "0230356", "date": 1737783980.8, "model_source": "hf", "model_name": model,
                "model_name_sanitized": model.replace("/", "__")})
    path = folder / model.replace("/", "__") / "results_2025-01-25T04-48-43.622918.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc, indent=2))
    return path


def _store(tmp_path, models=tuple(SCORES), math_group=None) -> Path:
    db = tmp_path / "store.duckdb"
    files = [str(_leaderboard_run(tmp_path / "runs", m, math_group)) for m in models]
    assert main(["ingest", "--db", str(db), "-q", *files]) == 0
    return db


def _reduce(db, out, *extra) -> int:
    return main(["reduce", "--db", str(db), "--items", "10", "--out", str(out), "--no-plot", *extra])


def test_the_tasks_of_a_size_weighted_group_are_weighted_by_their_documents(tmp_path, capsys):
    db = _store(tmp_path)
    out = tmp_path / "math"
    assert _reduce(db, out, "--datasets", "leaderboard_math*") == 0
    text = capsys.readouterr().out
    assert "the benchmark's score: tasks weighted by their documents, as lm-eval's leaderboard_math_hard group" in text
    assert "that mean for 3 models" in text
    m = load_manifest(out)
    assert m["weights"] == {t: float(n) for t, n in MATH.items()}
    # The design's figures are of that score: each model's benchmark is its size-weighted math score.
    sizes = np.array(list(MATH.values()), dtype=float)
    for model, (math, _) in SCORES.items():
        weighted, plain = np.dot(math, sizes) / sizes.sum(), np.mean(math)
        assert abs(weighted - plain) > 0.005  # the two differ: the test tells them apart
    # MuSR's sizes (250, 256, 250) are not alike either: its group, made the same way, is weighted alike.
    assert _reduce(db, tmp_path / "musr", "--datasets", "leaderboard_musr*") == 0
    assert load_manifest(tmp_path / "musr")["weights"] == {t: float(n) for t, n in MUSR.items()}
    # Both groups at once are no one group: the unweighted mean over the tasks, as before.
    assert _reduce(db, tmp_path / "both", "--datasets", "leaderboard_m*") == 0
    both = load_manifest(tmp_path / "both")
    assert set(both["weights"].values()) == {1.0} and both["weighting"] == "uniform over tasks"
    capsys.readouterr()


def test_a_group_whose_own_score_is_the_unweighted_mean_keeps_its_tasks_alike(tmp_path, capsys):
    db = _store(tmp_path, math_group=lambda v: float(np.mean(v)))  # a group YAML without weight_by_size
    assert _reduce(db, tmp_path / "math", "--datasets", "leaderboard_math*") == 0
    m = load_manifest(tmp_path / "math")
    assert set(m["weights"].values()) == {1.0} and m["weighting"] == "uniform over tasks"
    capsys.readouterr()


def test_a_group_score_of_other_tasks_does_not_weight_these(tmp_path, capsys):
    db = _store(tmp_path)
    # Three of the seven math tasks: the group's score is no mean of them, so nothing is taken from it.
    assert _reduce(db, tmp_path / "part", "--datasets", "leaderboard_math_[acg]*") == 0
    m = load_manifest(tmp_path / "part")
    assert len(m["tasks"]) == 3 and m["weighting"] == "uniform over tasks"
    capsys.readouterr()


def test_tasks_without_the_metric_asked_for_are_named(tmp_path, capsys):
    db = _store(tmp_path)
    assert _reduce(db, tmp_path / "r", "--metric", "acc_norm") == 0
    captured = capsys.readouterr()
    assert "7 tasks without acc_norm left out: leaderboard_math_algebra_hard" in captured.out + captured.err
    assert set(load_manifest(tmp_path / "r")["tasks"]) == set(MUSR)


@pytest.mark.parametrize("flag,name,tip", [
    ("--datasets", "leaderboard_musr", "--datasets 'leaderboard_musr_*' (3 tasks)"),
    ("--benchmark", "leaderboard_musr", "--datasets 'leaderboard_musr_*' (3 tasks)"),
    ("--datasets", "leaderboard_math_hard", "its tasks by name with --benchmark lm_eval --datasets"),
])
def test_a_group_named_where_tasks_are_drawn_is_told_to_name_its_tasks(tmp_path, capsys, flag, name, tip):
    """A store read before groups kept their members (tests/test_group_members.py: the group's tasks are taken)."""
    db = _store(tmp_path)
    forget_members(db)
    assert _reduce(db, tmp_path / "r", flag, name) != 0
    err = capsys.readouterr().err
    assert f"{name} is an lm-eval group the store holds only as its score" in err and tip in err
    assert "'harness-ext ingest --reread PATHS' reads them again and keeps it" in err


def forget_members(db) -> None:
    """Make ``db`` as the lm-eval 0.4 reader before revision 6 left it: no group's members, an older reader."""
    import duckdb

    with duckdb.connect(str(db)) as con:
        for did, md in con.execute("SELECT dataset_id, metadata FROM datasets WHERE kind = 'aggregate'").fetchall():
            md = json.loads(md)
            md.pop("members", None)
            con.execute("UPDATE datasets SET metadata = ? WHERE dataset_id = ?", [json.dumps(md), did])
        con.execute("UPDATE sources SET reader = '5' WHERE adapter = 'lm_eval_v04'")


def test_one_models_figures_are_said_in_the_singular(tmp_path, capsys):
    db = _store(tmp_path, models=("toy/made-up-7b",))
    assert _reduce(db, tmp_path / "r", "--datasets", "leaderboard_musr*") == 0
    text = capsys.readouterr().out
    assert "for the store's 1 model's own task scores" in text and "1 model'" + " own" not in text
    m = load_manifest(tmp_path / "r")
    assert "2 models' own" in design_only_text(dict(m, source=dict(m["source"], n_models=2)), "points", "90%")


def _with_a_second_mc_task(folder: Path, model: str, keep: int = 10) -> None:
    """The toy run of ``model`` with a task ``toy_arith_mc2`` (the first ``keep`` documents of ``toy_arith_mc``) and a
    group ``toy_mc`` of the two written without a score, as lm-eval 0.4.7 writes a group whose YAML has none."""
    src = LOGS / model
    run = folder / model
    shutil.copytree(src, run)
    [res] = run.glob("results_*.json")
    [mc] = run.glob("samples_toy_arith_mc_*.jsonl")
    rows = [json.loads(line) for line in mc.read_text().splitlines()[:keep]]
    (run / mc.name.replace("toy_arith_mc_", "toy_arith_mc2_")).write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = json.loads(res.read_text())
    block = dict(doc["results"]["toy_arith_mc"], name="toy_arith_mc2", alias="toy_arith_mc2", sample_len=keep)
    for metric in ("acc", "acc_norm"):
        block[f"{metric},none"] = float(np.mean([r[metric] for r in rows]))
    doc["results"]["toy_arith_mc2"] = block
    doc["results"]["toy_mc"] = {" ": " ", "alias": "toy_mc"}
    doc["group_subtasks"] = {"toy_mc": ["toy_arith_mc", "toy_arith_mc2"], "toy_arith_gen": []}
    for key in ("configs", "versions", "n-shot", "higher_is_better"):
        if isinstance(doc.get(key), dict) and "toy_arith_mc" in doc[key]:
            value = doc[key]["toy_arith_mc"]
            doc[key]["toy_arith_mc2"] = dict(value, task="toy_arith_mc2") if key == "configs" else value
    doc["n-samples"]["toy_arith_mc2"] = {"original": keep, "effective": keep}
    res.write_text(json.dumps(doc))


def test_item_level_tasks_of_a_size_weighted_group_are_weighted_by_their_items(tmp_path, capsys):
    for m in ("toy__lm-small", "toy__lm-medium"):
        _with_a_second_mc_task(tmp_path / "pop", m)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "pop")]) == 0
    out = tmp_path / "r"
    assert main(["reduce", "--db", str(db), "--items", "6", "--datasets", "toy_arith_mc*", "--out", str(out),
                 "--no-plot"]) == 0
    text = capsys.readouterr().out
    m = load_manifest(out)
    assert "population" in m["tasks"]["toy_arith_mc"]  # drawn from the population's answers
    assert m["weights"] == {"toy_arith_mc": 18.0, "toy_arith_mc2": 10.0}
    assert "as lm-eval's toy_mc group" in text


def test_results_of_lm_eval_0_4_2_without_sizes_are_told_which_releases_write_them(tmp_path, capsys):
    # After saucam/model_evals (commit 576818f2, meta-llama/Meta-Llama-3-8B/openllm/gsm8k.json): lm-eval at git hash
    # 3196e907 (April 2024, after 0.4.2) wrote results, configs, versions and n-shot but no n-samples.
    doc = {"results": {"gsm8k": {"exact_match,strict-match": 0.5087187263078089,
                                 "exact_match_stderr,strict-match": 0.013770390697002123,
                                 "exact_match,flexible-extract": 0.511751326762699,
                                 "exact_match_stderr,flexible-extract": 0.013768680408142792, "alias": "gsm8k"}},
           "group_subtasks": {"gsm8k": []},
           "configs": {"gsm8k": {"task": "gsm8k", "dataset_path": "gsm8k", "dataset_name": "main", "test_split": "test",
                                 "num_fewshot": 5, "output_type": "generate_until",
                                 "metric_list": [{"metric": "exact_match", "aggregation": "mean",
                                                  "higher_is_better": True}],
                                 "filter_list": [{"name": "strict-match", "filter": [{"function": "take_first"}]},
                                                 {"name": "flexible-extract", "filter": [{"function": "take_first"}]}],
                                 "metadata": {"version": 3.0}}},
           "versions": {"gsm8k": 3.0}, "n-shot": {"gsm8k": 5},
           "config": {"model": "hf", "model_args": "pretrained=meta-llama/Meta-Llama-3-8B,dtype=auto", "limit": None},
           "git_hash": "3196e907", "date": 1713534156.1473145, "transformers_version": "4.40.0"}
    path = tmp_path / "Meta-Llama-3-8B" / "gsm8k.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(path)]) == 0
    assert _reduce(db, tmp_path / "r") != 0
    err = capsys.readouterr().err
    assert "number of documents" in err and "from 0.4.3 on" in err and "0.4.0 to 0.4.2 have none" in err


def _two_logged_models(tmp_path: Path) -> Path:
    """A store of two toy models' logs with a second multiple-choice task (the large model's left for predict)."""
    for m in ("toy__lm-small", "toy__lm-medium", "toy__lm-large"):
        _with_a_second_mc_task(tmp_path / "pop", m)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "pop" / "toy__lm-small"),
                 str(tmp_path / "pop" / "toy__lm-medium")]) == 0
    return db


def test_predict_on_every_document_gives_the_groups_own_score(tmp_path, capsys):
    from harness_ext.methods.reduction.item_predict import predict_items

    db = _two_logged_models(tmp_path)
    out = tmp_path / "r"
    assert main(["reduce", "--db", str(db), "--items", "6", "--datasets", "toy_arith_mc*", "--out", str(out),
                 "--no-plot"]) == 0
    pred = predict_items(load_manifest(out), [tmp_path / "pop" / "toy__lm-large"])
    [res] = (tmp_path / "pop" / "toy__lm-large").glob("results_*.json")
    scores = json.loads(res.read_text())["results"]
    group = (18 * scores["toy_arith_mc"]["acc,none"] + 10 * scores["toy_arith_mc2"]["acc,none"]) / 28
    assert pred.aggregate.iloc[0]["aggregate"] == pytest.approx(group, abs=1e-12)
    capsys.readouterr()


def test_predict_on_a_results_file_alone_says_what_it_holds(tmp_path, capsys):
    db = _store(tmp_path, models=tuple(SCORES)[:2])
    out = tmp_path / "r"
    assert _reduce(db, out, "--datasets", "leaderboard_musr*") == 0
    new = tmp_path / "runs" / "toy__made-up-7b"
    _leaderboard_run(tmp_path / "runs", "toy/made-up-7b")
    assert main(["predict", "-m", str(out), str(new)]) != 0
    err = capsys.readouterr().err
    assert "no per-item logs" in err and "--log_samples" in err
    assert "is an lm-eval results file: a task's score, not each document's" in err


def test_a_models_two_runs_are_each_compared_with_their_own_group_score(tmp_path, capsys):
    files = [str(_leaderboard_run(tmp_path / "runs", m)) for m in SCORES]
    again = dict(SCORES)
    model = "toy/made-up-7b"
    SCORES[model] = ([v + 0.01 for v in again[model][0]], again[model][1])  # a rerun with other scores
    try:
        files.append(str(_leaderboard_run(tmp_path / "rerun", model)))
    finally:
        SCORES.update(again)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *files]) == 0
    assert _reduce(db, tmp_path / "r", "--datasets", "leaderboard_math*") == 0
    assert load_manifest(tmp_path / "r")["weights"] == {t: float(n) for t, n in MATH.items()}
    capsys.readouterr()
