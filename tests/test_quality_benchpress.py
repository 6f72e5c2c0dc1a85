"""benchmarks/quality_benchpress.py: point-only runs and the saved held-out errors that pool runs over disjoint seeds."""

from __future__ import annotations

import json

import numpy as np
import pytest


@pytest.fixture(scope="module")
def qb():
    from conftest import import_benchmark

    return import_benchmark("quality_benchpress")


def _table(path):
    rng = np.random.default_rng(0)
    X = 100 / (1 + np.exp(-(rng.normal(size=(24, 2)) @ rng.normal(size=(2, 7)) + rng.normal(0, 0.2, (24, 7)))))
    X[rng.random(X.shape) < 0.15] = np.nan
    lines = ["model," + ",".join(f"b{j}" for j in range(X.shape[1]))]
    lines += [f"m{i}," + ",".join("" if np.isnan(v) else f"{v:.3f}" for v in row) for i, row in enumerate(X)]
    path.write_text("\n".join(lines) + "\n")


def test_points_only_run_saves_the_errors_its_medae_pools(qb, tmp_path, capsys):
    csv = tmp_path / "scores.csv"
    _table(csv)
    out = tmp_path / "err"
    # probabilistic matrix factorisation in place of the default keeps the run to seconds; the plumbing is the same
    assert qb.main(["--csv", str(csv), "--seeds", "1", "--first-seed", "7", "--predictor", "pmf", "--points-only",
                    "--intervals", "support", "--save-errors", str(out), "--json", str(tmp_path / "rows.json")]) == 0
    saved = np.load(out / "scores_seeds7-7.npz")
    row = json.loads((tmp_path / "rows.json").read_text())[0]
    assert set(saved.files) == {"benchpress", "pmf", "n_folds", "fold_sizes"} and int(saved["n_folds"]) == 3
    assert saved["fold_sizes"].sum() == saved["pmf"].size
    for meth in ("benchpress", "pmf"):
        assert saved[meth].size == row[meth]["n_cells"] and np.isclose(np.median(saved[meth]), row[meth]["medae"])
        assert np.isnan(row[meth]["cov"]) and np.isnan(row[meth]["width"])  # no intervals computed
    assert np.isclose(row["ratio"], np.median(saved["benchpress"]) / np.median(saved["pmf"]))
    assert "seeds (7-7)" in capsys.readouterr().out
