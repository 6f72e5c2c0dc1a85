"""What a user tries next with ``benchmarks/quality_items.py`` and ``reduce --items`` on their own item tables:
``--items-dir`` on one benchmark's folder or on one table, a missing folder, an unknown ``--tables``; a binary task
beside a graded one (``aipw_crosstask`` fits one 2PL model across both); a task every model solves (its ratios
0/0); one seed; the ``irt-anchors`` design on graded answers. Each printed nothing, a traceback, numpy's warnings
or NaN averages, or ran the 2PL fit on graded scores without a word."""

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import import_benchmark, one_factor_answers


@pytest.fixture(scope="module")
def mod():
    return import_benchmark("quality_items")


def _long(M):
    m, n = M.shape
    names = [f"m{i:02d}" for i in range(m)]
    return pd.DataFrame({"model": np.repeat(names, n), "item": np.tile(np.arange(n), m), "score": M.ravel()})


def _bench(root, graded_sibling=False, solved=False):
    (root / "b").mkdir(parents=True)
    _long(one_factor_answers()).to_csv(root / "b" / "t.csv", index=False)
    if graded_sibling:
        _long(one_factor_answers(seed=1) * 0.6 + 0.2).to_csv(root / "b" / "u.csv", index=False)
    if solved:
        _long(np.ones((40, 60))).to_csv(root / "b" / "solved.csv", index=False)
    return root / "b"


def _run(mod, path, capsys, *extra, seeds="2"):
    mod.main(["--items-dir", str(path), "--items", "20", "--seeds", seeds, "--protocols", "interpolation", *extra])
    return capsys.readouterr().out


def test_a_benchmarks_own_folder_is_read_as_that_benchmark(mod, tmp_path, capsys):
    folder = _bench(tmp_path / "d")
    out = _run(mod, folder, capsys, "--estimators", "sample_mean", "crosstask")
    assert "holds its tables directly: read as one benchmark, b (1 tables)" in out
    assert "b/t | interpolation | 20 | crosstask |" in out


def test_one_table_is_measured_with_its_folders_others_as_siblings(mod, tmp_path, capsys):
    folder = _bench(tmp_path / "d", graded_sibling=True)
    out = _run(mod, folder / "t.csv", capsys, "--estimators", "sample_mean", "crosstask")
    assert "measuring b/t, with the 1 other tables of its folder" in out
    assert "b/t | interpolation | 20 | crosstask |" in out and "b/u |" not in out


@pytest.mark.parametrize("what", ["missing", "empty", "yaml"])
def test_a_path_holding_no_table_is_refused_saying_why(mod, tmp_path, what):
    path = {"missing": tmp_path / "nope", "empty": tmp_path, "yaml": tmp_path / "t.csv.meta.yaml"}[what]
    if what == "yaml":
        path.write_text("benchmark: b\n")
    with pytest.raises(SystemExit) as exc:
        mod.main(["--items-dir", str(path)])
    said = str(exc.value)
    assert {"missing": "no such folder", "empty": "no item tables there", "yaml": "harness-ext ingest"}[what] in said


def test_an_unknown_table_is_refused_naming_the_folders_tables(mod, tmp_path):
    _bench(tmp_path / "d")
    with pytest.raises(SystemExit, match=r"--tables b/x: no such table in .*b/t"):
        mod.main(["--items-dir", str(tmp_path / "d"), "--tables", "b/x"])


def test_a_graded_sibling_leaves_out_the_cross_task_2pl_estimator(mod, tmp_path, capsys):
    _bench(tmp_path / "d", graded_sibling=True)
    out = _run(mod, tmp_path / "d", capsys, "--estimators", "sample_mean", "irt", "aipw_crosstask", "crosstask")
    assert ("note: b/t: another task of its benchmark has scores other than 0 and 1 (graded scores, or a model's "
            "missing answers filled with the item's mean), so aipw_crosstask (built on the 2PL model") in out
    assert "b/t | interpolation | 20 | irt |" in out  # per-task 2PL: its own answers are 0/1
    assert "| aipw_crosstask |" not in out


def test_a_task_every_model_solves_is_left_out_of_the_ratios_without_warnings(mod, tmp_path, capsys):
    _bench(tmp_path / "d", solved=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = _run(mod, tmp_path / "d", capsys, "--estimators", "sample_mean", "aipw_paper", "crosstask")
    assert "note: b/solved | interpolation | 20: sample_mean errs 0" in out
    average = out.split("average over tables:")[1].splitlines()[1:]
    assert len(average) == 3 and "inf" not in "".join(average)
    assert all(float(r.split(" | ")[3]) > 0 for r in average)  # the other table's ratios, not NaN


def test_one_seed_prints_no_standard_error(mod, tmp_path, capsys):
    _bench(tmp_path / "d")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = _run(mod, tmp_path / "d", capsys, "--estimators", "sample_mean", seeds="1")
    row = next(r for r in out.splitlines() if r.startswith("b/t | interpolation | 20 | sample_mean |"))
    assert row.split(" | ")[5] == "n/a" and row.split(" | ")[7:9] == ["n/a", "n/a"]


def test_reduce_refuses_the_irt_anchors_design_on_gradedone_factor_answers(tmp_path, capsys):
    from harness_ext.cli import main

    folder = tmp_path / "b"
    folder.mkdir()
    _long(one_factor_answers() * 0.6 + 0.2).to_csv(folder / "t.csv", index=False)
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", str(folder), "--db", db]) == 0
    assert main(["reduce", "--db", db, "--items", "10", "--item-design", "irt-anchors", "--out",
                 str(tmp_path / "r")]) != 0
    assert not (tmp_path / "r").exists()
    assert ("the irt-anchors design chooses its anchors with the 2PL model of 0/1 answers, and 1 task has scores "
            "other than 0 and 1" in capsys.readouterr().err)


def test_quick_on_a_users_folder_measures_its_tables(mod, tmp_path, capsys):
    _bench(tmp_path / "d")
    mod.main(["--items-dir", str(tmp_path / "d"), "--quick", "--estimators", "sample_mean",
              "--protocols", "interpolation"])
    assert "b/t | interpolation | 50 | sample_mean |" in capsys.readouterr().out
