"""``benchmarks/quality_items.py --store DB``: the item protocol on the item tables of a store filled with ``ingest``,
read as ``reduce --items`` reads them, printing what ``--items-dir`` prints on the same tables."""

import numpy as np
import pandas as pd
import pytest
from conftest import import_benchmark, one_factor_answers


@pytest.fixture(scope="module")
def mod():
    return import_benchmark("quality_items")


def _write(folder, bench, task, M, names=None, drop=0.0):
    """A long CSV ``model, item, score`` (models in name order, as the store lists them) with its sidecar; ``drop``
    leaves out that share of the rows at random (gaps)."""
    m, n = M.shape
    names = names or [f"m{i:02d}" for i in range(m)]
    df = pd.DataFrame({"model": np.repeat(names, n), "item": np.tile(np.arange(n), m), "score": M.ravel()})
    if drop:
        df = df.drop(df.sample(frac=drop, random_state=1).index)
    (folder / bench).mkdir(parents=True, exist_ok=True)
    df.to_csv(folder / bench / f"{task}.csv", index=False)
    (folder / bench / f"{task}.csv.meta.yaml").write_text(
        f"benchmark: {bench}\nitems:\n  layout: long\n  task: {task}\n  metric: acc\n")


def _store(folder, db):
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    with Store.open(db) as store:
        ingest_paths(store, [folder], show_progress=False)
    return db


@pytest.fixture
def tables(tmp_path):
    """Two tasks of one benchmark (the second with gaps and 30 of the 40 models) and a second benchmark, as CSV
    files with sidecars, and a store they were ingested into."""
    folder = tmp_path / "items"
    _write(folder, "bench", "t1", one_factor_answers(), drop=0.05)
    _write(folder, "bench", "t2", one_factor_answers(seed=1)[10:], [f"m{i:02d}" for i in range(10, 40)])
    _write(folder, "other", "t3", one_factor_answers(30, 80, seed=2))
    return folder, _store(folder, tmp_path / "s.duckdb")


ARGS = ["--items", "20", "--seeds", "2", "--protocols", "interpolation", "extrapolation", "benchmark-frontier",
        "--estimators", "sample_mean", "random_learn", "aipw", "crosstask"]


def _out(mod, capsys, *argv):
    mod.main([*argv, *ARGS])
    return capsys.readouterr().out


def test_store_prints_what_the_folder_prints_on_the_same_tables(mod, tables, capsys):
    folder, db = tables
    by_folder = _out(mod, capsys, "--items-dir", str(folder))
    by_store = _out(mod, capsys, "--store", str(db))
    assert by_store == by_folder
    # the gaps were made whole and said so, and the cross-task estimator saw the sibling task
    assert "note: bench/t1: " in by_store and "missing item scores filled" in by_store
    assert "bench/t2 | benchmark-frontier | 20 | crosstask |" in by_store
    assert "other/t3 | interpolation | 20 | sample_mean |" in by_store


def test_the_benchmark_filter_keeps_its_tables(mod, tables, capsys):
    folder, db = tables
    out = _out(mod, capsys, "--store", str(db), "--benchmark", "other")
    assert "other/t3 | extrapolation | 20 | aipw |" in out
    assert "bench/" not in out
    assert _out(mod, capsys, "--store", str(db), "--tables", "bench/t2") == \
        _out(mod, capsys, "--items-dir", str(folder), "--tables", "bench/t2")


def test_a_store_without_item_level_results_gives_reduce_items_message(mod, tmp_path):
    from harness_ext.store.db import Store

    with Store.open(tmp_path / "empty.duckdb"):
        pass
    with pytest.raises(SystemExit, match="the store has no item-level results: ingest lm-eval samples_"):
        mod.main(["--store", str(tmp_path / "empty.duckdb"), "--seeds", "1"])


def test_wrong_combinations_and_names_stop_with_one_message(mod, tables):
    folder, db = tables
    with pytest.raises(SystemExit, match="--store and --items-dir both name the item tables"):
        mod.main(["--store", str(db), "--items-dir", str(folder)])
    with pytest.raises(SystemExit, match=r"--tables bench/t9: not in the store .*bench/t1, bench/t2, other/t3"):
        mod.main(["--store", str(db), "--tables", "bench/t9"])
    with pytest.raises(SystemExit, match="no item-level results match --benchmark nope"):
        mod.main(["--store", str(db), "--benchmark", "nope"])
    with pytest.raises(SystemExit, match="only with --store"):
        mod.main(["--items-dir", str(folder), "--benchmark", "bench"])
    with pytest.raises(SystemExit, match="no such store file"):
        mod.main(["--store", str(folder / "missing.duckdb")])


def test_a_metric_the_tasks_lack_leaves_them_out_with_a_note(mod, tables, capsys):
    _, db = tables
    out = _out(mod, capsys, "--store", str(db), "--metric", "exact_match")
    assert "note: bench/t1: no per-item 'exact_match' (it has acc); left out" in out
    assert " | sample_mean |" not in out


def test_too_few_models_skip_the_protocol_with_a_note(mod, tmp_path, capsys):
    _write(tmp_path / "items", "tiny", "t", one_factor_answers(3, 30))
    db = _store(tmp_path / "items", tmp_path / "s.duckdb")
    out = _out(mod, capsys, "--store", str(db))
    assert "note: tiny/t: interpolation: 0 targets and 3 sources among 3 models; skipped" in out
    assert "note: tiny/t: extrapolation: 0 targets and 1 source among 3 models; skipped" in out
    assert "tiny/t | " not in out
