"""A task every population model scores alike (saturated: all solved, or none): ``crosstask`` estimates it from the
new model's own answers, and ``reduce --items`` measures it like any other task. Its regression had no error to
learn, so the correlation of the parts' errors was 0/0 and every estimate of the task, and the benchmark's figures
with it, came out NaN, with numpy's and scipy's warnings printed raw."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.methods.engine.item_agreement import sources_agreement
from harness_ext.methods.engine.item_crosstask import CrossTask


def _population(models=30, items=60, seed=0):
    rng = np.random.default_rng(seed)
    p = 1 / (1 + np.exp(-(np.linspace(-1.5, 1.5, models)[:, None] + rng.normal(0, 1, items)[None, :])))
    return (rng.random(p.shape) < p).astype(float)


def test_crosstask_on_a_saturated_task_is_the_design_estimate():
    O = _population()
    S = np.ones((30, 40))
    Y = np.ones((2, 20))
    Y[1, :2] = 0.0  # a new model that misses two of the sampled items the whole population solved
    est = CrossTask().fit(S, np.arange(20), others=[(O, np.arange(20))])
    assert est.learn_ is None
    res = est.predict(Y, others=[O[:2, :20]])
    assert np.isfinite(res.estimate).all() and np.isfinite(res.lower).all()
    assert res.estimate[0] == 1.0 and res.estimate[1] == pytest.approx(0.9)
    assert res.lower[1] < 0.9 < res.upper[1]


def test_the_agreement_of_a_saturated_task_is_undefined_without_a_warning(recwarn):
    assert np.isnan(sources_agreement(np.zeros((30, 40)), [(_population(), np.arange(20))]))
    assert not recwarn.list


def test_reduce_measures_a_saturated_task_and_the_benchmark(tmp_path, capsys):
    M = _population(items=80)
    names = [f"m{i:02d}" for i in range(M.shape[0])]
    rows = [pd.DataFrame({"model": np.repeat(names, n), "task": task, "item": np.tile(np.arange(n), len(names)),
                          "score": A.ravel()}) for task, A, n in (("varied", M, 80), ("solved", np.ones((30, 40)), 40))]
    pd.concat(rows).to_csv(tmp_path / "b.csv", index=False)
    (tmp_path / "b.csv.meta.yaml").write_text("benchmark: b\nitems:\n  layout: long\n  metric: acc\n")
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, str(tmp_path / "b.csv")]) == 0
    capsys.readouterr()
    assert main(["reduce", "--db", db, "--items", "20", "--out", str(tmp_path / "r"), "--no-plot"]) == 0
    out, err = capsys.readouterr()
    assert "constant" not in err and "invalid value" not in err
    row = next(line for line in out.splitlines() if line.startswith("solved")).split()
    assert len(row) == 10 and row[4] == "0.00" and row[7] == "0.00"  # every figure there; no error on it
    bench = next(line for line in out.splitlines() if line.startswith("benchmark")).split()
    assert len(bench) == 9 and "nan" not in bench
