"""The item-level benchmark score is the harness's: lm-eval's MMLU subjects weighted by their items.

lm-eval 0.4's ``mmlu`` group (and its four category groups) aggregates ``acc`` with ``weight_by_size: True``, so a
model's MMLU score is its subjects' accuracies weighted by their numbers of questions, as the dataset-level manifest
weighs them. An item-level reduction of MMLU's subject tasks used to give the unweighted mean of the subjects, which
differs from what lm-eval prints for the full run (by 0.7 points on the table below). Subject sizes are MMLU's own
test sizes (Hendrycks et al. 2021); the answers come from a one-factor population (conftest).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness_ext.benchmarks import MMLU_TEST_SIZES
from harness_ext.cli import main
from harness_ext.methods.reduction.item_benchmark import BY_SIZE, UNIFORM, task_weights
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.item_predict import predict_items
from harness_ext.methods.reduction.manifest import load_manifest

from conftest import one_factor_answers

SUBJECTS = ("abstract_algebra", "anatomy", "high_school_psychology", "professional_law")


def _table(path, names, n_models: int = 13, new: bool = False):
    """A long item table of ``names`` (task -> subject): ``n_models`` models, the last one held out as the new model
    (``new``: its rows only; else the others')."""
    rows = []
    for k, (task, subject) in enumerate(names.items()):
        A = one_factor_answers(n_models, MMLU_TEST_SIZES[subject], seed=k)
        A[:, : k + 1] = 0.0  # subjects of other difficulty, so the weighting matters
        for i in ([n_models - 1] if new else range(n_models - 1)):
            rows += [(f"org/model-{i:02d}", task, j, int(v)) for j, v in enumerate(A[i])]
    pd.DataFrame(rows, columns=["model", "task", "item", "score"]).to_csv(path, index=False)
    return path


def _lm_eval_group_score(frame: pd.DataFrame) -> float:
    """lm-eval's group aggregation with ``weight_by_size``: sum of acc x size over the sum of sizes."""
    g = frame.groupby("task")["score"].agg(["mean", "size"])
    return float((g["mean"] * g["size"]).sum() / g["size"].sum())


@pytest.fixture()
def mmlu_items(tmp_path):
    names = {f"mmlu_{s}": s for s in SUBJECTS}
    pop, new = _table(tmp_path / "pop.csv", names), _table(tmp_path / "new.csv", names, new=True)
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(pop)]) == 0
    return db, new


def test_mmlu_subjects_are_weighted_by_their_items_as_lm_evals_group(mmlu_items, tmp_path, capsys):
    db, new = mmlu_items
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "30", "--out", str(out), "--no-plot"]) == 0
    assert "the benchmark's score: subjects weighted by their items" in capsys.readouterr().out
    m = load_manifest(out)
    assert m["weighting"] == BY_SIZE
    assert m["weights"] == {f"mmlu_{s}": float(MMLU_TEST_SIZES[s]) for s in SUBJECTS}
    # Every item of the new model logged: the benchmark row is lm-eval's mmlu group score, not the subjects' mean.
    frame = pd.read_csv(new)
    want, unweighted = _lm_eval_group_score(frame), float(frame.groupby("task")["score"].mean().mean())
    assert abs(want - unweighted) > 0.005
    pred = predict_items(m, [new])
    [agg] = pred.aggregate.to_dict("records")
    assert agg["aggregate"] == pytest.approx(want, abs=1e-12) and agg["lower"] == agg["upper"]
    assert "subjects weighted by their items" in pred.score_heading()
    # The expected benchmark figures and the Neyman spread of a total use the same weights: the largest subject
    # (professional law, 1,534 questions) gets the most items.
    out2 = tmp_path / "total"
    assert main(["reduce", "--db", str(db), "--items-total", "120", "--out", str(out2), "--no-plot"]) == 0
    runs = {t: b["n_run"] for t, b in load_manifest(out2)["tasks"].items()}
    assert max(runs, key=runs.get) == "mmlu_professional_law" and runs["mmlu_professional_law"] > 60


def test_a_sampled_run_is_estimated_on_the_weighted_score(mmlu_items, tmp_path, capsys):
    """With 30 items per subject the benchmark's interval is built on the size weights (and holds the truth here)."""
    db, new = mmlu_items
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "30", "--out", str(out), "--no-plot"]) == 0
    m = load_manifest(out)
    frame = pd.read_csv(new)
    keep = np.zeros(len(frame), dtype=bool)
    for task, b in m["tasks"].items():
        keep |= (frame["task"] == task).to_numpy() & frame["item"].isin(decode_ids(b["sample"])).to_numpy()
    part = tmp_path / "part.csv"
    frame[keep].to_csv(part, index=False)
    pred = predict_items(m, [part])
    [agg], rows = pred.aggregate.to_dict("records"), pred.table.set_index("dataset")
    assert not rows["observed"].any()
    w = np.array([MMLU_TEST_SIZES[t[5:]] for t in rows.index], dtype=float)
    assert agg["aggregate"] == pytest.approx(float(rows["raw"].to_numpy() @ (w / w.sum())), abs=1e-12)
    assert agg["lower"] < agg["aggregate"] < agg["upper"]
    capsys.readouterr()


@pytest.mark.parametrize("names,weighting", [
    (["mmlu_anatomy", "mmlu_virology"], BY_SIZE),
    (["mmlu_anatomy", "gsm8k"], UNIFORM),  # not all MMLU: a mean over the tasks
    (["mmlu:subject=anatomy", "mmlu:subject=virology"], UNIFORM),  # HELM averages its subjects' runs
    (["hendrycksTest-anatomy", "hendrycksTest-virology"], UNIFORM),  # the Open LLM Leaderboard v1 likewise
    (["mmlu_stem", "mmlu_other"], UNIFORM),  # groups, not subjects
    (["mmlu_flan_n_shot_generative_anatomy"], UNIFORM),  # a prompt variant scores otherwise
])
def test_which_tasks_are_weighted_by_size(names, weighting):
    weights, how = task_weights({n: 10 + i for i, n in enumerate(names)})
    assert how == weighting and set(weights) == set(names)
    assert list(weights.values()) == ([10.0 + i for i in range(len(names))] if how == BY_SIZE else [1.0] * len(names))
