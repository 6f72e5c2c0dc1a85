"""An item estimator built on the 2PL model (``irt``, ``pirt``, ``gpirt``, ``aipw_irt``) asked for graded scores:
one clear error from ``reduce --items`` and ``predict``, naming the tasks and the estimators that fit, not an
unexpected ``ValueError`` from inside the fit. The default (``crosstask``) runs on graded scores."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main


def _table(path, graded: bool, models=24, items=40, seed=0):
    rng = np.random.default_rng(seed)
    ability = np.linspace(-1.0, 1.0, models)[:, None]
    p = 1 / (1 + np.exp(-(ability + rng.normal(0, 1, items)[None, :])))
    M = rng.beta(4 * p + 0.1, 4 * (1 - p) + 0.1) if graded else (rng.random(p.shape) < p).astype(float)
    names = [f"m{i:02d}" for i in range(models)]
    pd.DataFrame({"model": np.repeat(names, items), "item": np.tile(np.arange(items), models),
                  "score": M.ravel().round(3)}).to_csv(path, index=False)
    path.with_name(path.name + ".meta.yaml").write_text("benchmark: b\nitems:\n  layout: long\n  task: t\n"
                                                        "  metric: f1\n")


@pytest.fixture
def graded(tmp_path):
    _table(tmp_path / "t.csv", graded=True)
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(tmp_path / "t.csv")]) == 0
    return tmp_path, db


@pytest.mark.parametrize("name", ["irt", "gpirt", "aipw_irt"])
def test_reduce_refuses_a_2pl_estimator_on_graded_scores(graded, capsys, name):
    tmp_path, db = graded
    rc = main(["reduce", "--db", str(db), "--items", "10", "--item-estimator", name, "--out", str(tmp_path / "r"),
               "--no-plot", "-q"])
    err = capsys.readouterr().err
    assert rc != 0 and not (tmp_path / "r").exists()
    assert f"item estimator '{name}' is built on the 2PL model of 0/1 answers" in err
    assert re.search(r"1 task has scores other than 0 and 1: t \(9\d\d of 960\)", err) and "unexpected" not in err


def test_predict_refuses_it_too_and_the_default_runs(graded, capsys):
    tmp_path, db = graded
    assert main(["reduce", "--db", str(db), "--items", "10", "--out", str(tmp_path / "r"), "--no-plot", "-q"]) == 0
    new = tmp_path / "new.csv"
    df = pd.read_csv(tmp_path / "t.csv")
    df[df.model == "m23"].assign(model="new").to_csv(new, index=False)
    new.with_name("new.csv.meta.yaml").write_text((tmp_path / "t.csv.meta.yaml").read_text())
    capsys.readouterr()
    assert main(["predict", "--manifest", str(tmp_path / "r"), str(new), "--item-estimator", "irt"]) != 0
    assert "item estimator 'irt' is built on the 2PL model" in capsys.readouterr().err
    assert main(["predict", "--manifest", str(tmp_path / "r"), str(new)]) == 0
