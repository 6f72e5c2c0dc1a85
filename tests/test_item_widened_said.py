"""`crosstask`'s widening for a model beyond the population on the other tasks is said where the estimate is seen.

A synthetic benchmark whose first task follows its own ability and whose two other tasks share a second one: a new
model far stronger on the other tasks, and like the population on the first, gets the first task's interval widened.
`reduce --items` counts its folds' widened estimates (manifest and summary); `predict` warns with the distance and the
tasks, and its table and benchmark row carry the flag.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import harness_ext as hx
from harness_ext.cli import main
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.item_predict import frontier_of, predict_items, widened_text

TASKS = ("own", "other_a", "other_b")


def _answers(n_models, seed, shift=0.0, n_items=120):
    """task -> models x items 0/1 answers (the items' parameters fixed, the models drawn with ``seed``)."""
    rng_items, rng = np.random.default_rng(4321), np.random.default_rng(seed)
    own, shared = rng.normal(size=n_models), rng.normal(size=n_models) + shift
    out = {}
    for task, theta in zip(TASKS, (own, shared, shared)):
        a, b = rng_items.gamma(4.0, 0.3, size=n_items), rng_items.normal(size=n_items)
        p = 1 / (1 + np.exp(-(theta[:, None] * a - b)))
        out[task] = (rng.random(p.shape) < p).astype(float)
    return out


def _long(answers: dict, names) -> dict:
    return {task: pd.DataFrame({"model": np.repeat(names, Y.shape[1]), "item": np.tile(np.arange(Y.shape[1]), len(names)),
                                "score": Y.ravel()}) for task, Y in answers.items()}


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    base = tmp_path_factory.mktemp("widened")
    folder = base / "bench"
    folder.mkdir()
    for task, frame in _long(_answers(60, seed=1), [f"m{i:02d}" for i in range(60)]).items():
        frame.to_parquet(folder / f"{task}.parquet", index=False)
    db = base / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(folder)]) == 0
    return base, hx.reduce_items(db, 30, seed=0)


def test_reduce_counts_the_folds_widened_estimates_in_the_manifest_and_the_summary(reduced):
    _, red = reduced
    ex = red.manifest["expected_error"]
    assert red.manifest["design"]["estimator"] == "crosstask"
    for split in ("interpolation", "extrapolation"):
        for f in ex[split]["tasks"].values():
            assert 0 <= f["n_widened"] <= f["n_models"]
    text = red.render()
    n_in = sum(f["n_widened"] for f in ex["interpolation"]["tasks"].values())
    n_fr = sum(f["n_widened"] for f in ex["extrapolation"]["tasks"].values())
    assert (f"crosstask widened the interval of {n_in} of {sum(f['n_models'] for f in ex['interpolation']['tasks'].values())} "
            f"'in' and {n_fr} of") in text
    assert "mean over the other tasks' sampled items lies above every training model's" in text
    # The task whose scores the other tasks do not rank (its own ability) is named, with the agreement recorded (the
    # two others are below the threshold too: their other tasks' mean is half the unrelated one's).
    agreement = {t: f["agreement"] for t, f in ex["extrapolation"]["tasks"].items()}
    assert agreement["own"] < 0.3 and max(agreement.values()) < 0.7071
    assert "a new model's estimate is unchanged except on other_a, other_b, own: the scores there do not rank" \
        in " ".join(text.split())


def test_predict_warns_with_the_distance_and_flags_the_widened_tasks(reduced, tmp_path):
    _, red = reduced
    manifest = red.manifest
    new = _long(_answers(1, seed=9, shift=4.0), ["strong-elsewhere"])
    rows = pd.concat([f[f["item"].isin(decode_ids(manifest["tasks"][t]["sample"]))].assign(task=t)
                      for t, f in new.items()])
    rows.to_parquet(tmp_path / "new.parquet", index=False)
    pred = predict_items(manifest, [tmp_path / "new.parquet"])
    table = pred.table.set_index("dataset")
    assert bool(table.loc["own", "widened"]) and table.loc["own", "beyond_other_tasks"] > 0
    widened = table.index[table["widened"]].tolist()
    assert pred.aggregate["n_widened"].tolist() == [len(widened)]
    [said] = [w for w in pred.warnings if "beyond the population on the other tasks' sampled items" in w]
    assert said.startswith("strong-elsewhere: ")
    assert f"for {len(widened)} of 3 tasks" in said and f"own by {table.loc['own', 'beyond_other_tasks']:.3f}" in said
    assert "crosstask widened" in said and "design-based part's (AIPW)" in said
    assert "mean of the design-based part's and of the estimator fitted on that task's items alone" in said
    # In the JSON the API writes.
    assert "beyond_other_tasks" in pred.to_json() and "n_widened" in pred.to_json()


def test_the_widening_is_said_whether_or_not_the_benchmark_score_is_beyond_the_population():
    reach = (np.array([0.2, 0.8]), [np.array([0.2, 0.8])] * 2)
    w = np.array([0.5, 0.5])
    inside = frontier_of("m", 0.5, np.array([0.5, 0.5]), w, reach, "crosstask", None, widened={"a": 0.04})
    assert inside[0] == 0.0 and inside[1].startswith("m: beyond the population on the other tasks' sampled items "
                                                     "for 1 of 2 tasks") and "a by 0.040" in inside[1]
    assert "that task's interval" in inside[1]
    assert frontier_of("m", 0.5, np.array([0.5, 0.5]), w, reach, "crosstask", None) == (0.0, None)
    assert "those tasks' intervals" in widened_text("crosstask", {"a": 0.1, "b": 0.2}, 3)
    assert widened_text("crosstask", {}, 3) == ""
