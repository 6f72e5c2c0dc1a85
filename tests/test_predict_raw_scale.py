"""``predict`` on a raw-scale manifest (``--normalise none``): intervals keep the scores' own units.

CrossPred's open-ended datasets are BARTScores around -5; a manifest built with
``--normalise none`` must not clip their intervals (or the aggregate's) to [0, 1].
"""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.manifest import load_manifest
from harness_ext.methods.reduction.predict import predict_from_manifest


def _write_wide_csv(path, X, names, models):
    rows = ["model," + ",".join(names)]
    rows += [f"{m}," + ",".join(f"{v:.6f}" for v in x) for m, x in zip(models, X)]
    path.write_text("\n".join(rows) + "\n")


@pytest.mark.slow
def test_predict_keeps_raw_scale_intervals(tmp_path):
    rng = np.random.default_rng(0)
    n, d = 41, 8
    ability = rng.random((n, 1))
    X = 0.2 + 0.6 * ability @ rng.uniform(0.5, 1.0, (1, d)) + 0.02 * rng.standard_normal((n, d))
    X[:, 5:] = -7 + 4 * X[:, 5:]  # BARTScore-like columns: negative, higher is better
    names = [f"task{j}" for j in range(d)]
    models = [f"m{i:02d}" for i in range(n)]
    (tmp_path / "train").mkdir()
    (tmp_path / "new").mkdir()
    # the CSV adapter takes the benchmark name from the file stem: same stem for both
    _write_wide_csv(tmp_path / "train" / "toy.csv", X[:-1], names, models[:-1])
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", str(tmp_path / "train" / "toy.csv"), "--db", db, "-q"]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", db, "--normalise", "none", "--budget", "3", "--n-random", "20", "--selector", "greedy_coverage",
                 "--out", str(out), "--format", "json"]) == 0
    manifest = load_manifest(out / "manifest.json")
    subset = [s["name"].split("/", 1)[-1] for s in manifest["subset"]]
    keep = [names.index(s) for s in subset]
    new = tmp_path / "new" / "toy.csv"
    _write_wide_csv(new, X[-1:, keep], subset, models[-1:])

    pred = predict_from_manifest(manifest, [new])
    rows = pred.table[~pred.table["observed"]]
    assert (rows["lower"] < rows["score"]).all() and (rows["score"] < rows["upper"]).all()
    bart = rows[rows["dataset"].str.contains("task[567]")]
    assert len(bart) and (bart["upper"] < 0).all()  # not clipped to [0, 1]
    agg = pred.aggregate.iloc[0]
    assert agg["lower"] < agg["aggregate"] < agg["upper"]
    truth = X[-1].mean()
    assert abs(agg["aggregate"] - truth) < 0.3
