"""A similarity measure given twice with two values (``reduce --similarity X --selector-param similarity=Y``, or
``reduce(similarity=X, selector_params={"similarity": Y})``) is refused naming both, before any work; the same
measure given twice runs. ``prowl_table`` refuses a ``similarity`` in ``selector_params``: each row's measure
would replace it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.errors import MethodError


def _matrix(m: int = 20, d: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    X = np.clip(rng.random((m, 2)) @ rng.random((2, d)) / 2 + 0.05 * rng.standard_normal((m, d)), 0.01, 0.99)
    return pd.DataFrame(X, index=[f"m{i}" for i in range(m)], columns=[f"d{j}" for j in range(d)])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("simconflict")
    df = _matrix()
    rows = ["model,dataset,value"] + [f"{m},{c},{df.loc[m, c]:.4f}" for m in df.index for c in df.columns]
    (root / "scores.csv").write_text("\n".join(rows) + "\n")
    db = root / "s.duckdb"
    assert main(["ingest", "-q", "--db", str(db), str(root / "scores.csv")]) == 0
    return db


def _reduce(db, tmp_path, *extra):
    js = tmp_path / "r.json"
    rc = main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "10", "--n-random-subsets", "5",
               "--selector", "greedy_coverage", "--no-plot", "--out", str(tmp_path / "r"), "--json", str(js), *extra])
    return rc, (json.loads(js.read_text()) if js.exists() else None)


def test_reduce_refuses_two_different_similarity_measures(store, tmp_path, capsys):
    rc, doc = _reduce(store, tmp_path, "--similarity", "cosine", "--selector-param", "similarity=pearson")
    err = capsys.readouterr().err
    assert rc == 1 and doc is None
    assert "two similarity measures given: 'cosine'" in err and "--selector-param similarity=pearson" in err
    assert not (tmp_path / "r").exists()  # refused before any work


def test_reduce_accepts_the_same_measure_given_twice(store, tmp_path, capsys):
    rc, doc = _reduce(store, tmp_path, "--similarity", "cosine", "--selector-param", "similarity=Cosine")
    assert rc == 0, capsys.readouterr().err
    assert doc["manifest"]["selection"]["similarity"] == "cosine"


def test_python_reduce_refuses_two_different_similarity_measures():
    import harness_ext as hx

    with pytest.raises(MethodError, match=r"two similarity measures given: 'cosine'.*'pearson'"):
        hx.reduce(_matrix(), budget=2, selector="greedy_coverage", similarity="cosine",
                  selector_params={"similarity": "pearson"}, n_random=10, n_random_subsets=5)


def test_prowl_table_refuses_a_similarity_among_selector_params():
    from harness_ext.methods.prowl import prowl_table

    with pytest.raises(MethodError, match="give the measure there"):
        prowl_table(_matrix(), similarities=["cosine"], selector_params={"similarity": "pearson"}, n_random=10)
