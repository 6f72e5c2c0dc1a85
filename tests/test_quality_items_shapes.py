"""``benchmarks/quality_items.py --items-dir`` on item tables as users hold them: gaps, graded scores, CSV, other
column names, repeated rows. Each used to stop the run with a traceback (NaN in a ridge fit, the 2PL refusing
graded scores, a Parquet-only folder scan)."""

import numpy as np
import pandas as pd
import pytest
from conftest import import_benchmark, one_factor_answers


@pytest.fixture(scope="module")
def mod():
    return import_benchmark("quality_items")


def _long(M, names=None):
    m, n = M.shape
    names = names or [f"m{i:02d}" for i in range(m)]
    return pd.DataFrame({"model": np.repeat(names, n), "item": np.tile(np.arange(n), m), "score": M.ravel()})


def _run(mod, folder, capsys, *extra):
    mod.main(["--items-dir", str(folder), "--items", "20", "--seeds", "2", "--protocols", "interpolation",
              "extrapolation", *extra])
    return capsys.readouterr().out


def test_gaps_are_filled_as_reduce_fills_them_and_counted(mod, tmp_path, capsys):
    df = _long(one_factor_answers()).sample(frac=0.9, random_state=0)
    thin = _long(one_factor_answers(1, 120, 1), ["sparse"]).head(30)  # 30 of 120 items: left out, as reduce leaves it out
    (tmp_path / "b").mkdir()
    pd.concat([df, thin]).to_parquet(tmp_path / "b" / "t.parquet")
    out = _run(mod, tmp_path, capsys, "--estimators", "sample_mean", "random_learn", "crosstask")
    assert "note: b/t: 1 model with scores on fewer than half of the items left out" in out
    assert f"note: b/t: {len(_long(one_factor_answers())) - len(df):,} missing item scores filled" in out
    rows = [r for r in out.splitlines() if r.startswith("b/t | extrapolation | 20 | crosstask |")]
    assert rows and "nan" not in rows[0]


def test_graded_scores_leave_out_the_2pl_estimators_with_a_note(mod, tmp_path, capsys):
    M = one_factor_answers() * 0.7 + np.random.default_rng(2).beta(2, 5, (40, 120)) * 0.3
    (tmp_path / "b").mkdir()
    _long(M).to_parquet(tmp_path / "b" / "t.parquet")
    out = _run(mod, tmp_path, capsys, "--estimators", "sample_mean", "aipw", "irt", "aipw_irt", "crosstask",
               "--designs", "stratified", "irt-anchors")
    assert "so irt, aipw_irt, irt-anchors (built on the 2PL model of 0/1 answers) left out" in out
    assert "b/t | interpolation | 20 | crosstask |" in out
    assert "b/t | interpolation | 20 | stratified/stratified_aipw |" in out
    assert "| irt |" not in out and "irt-anchors/" not in out


def test_a_csv_table_with_ingests_column_names_and_repeated_rows(mod, tmp_path, capsys):
    df = _long(one_factor_answers()).rename(columns={"model": "model_name", "item": "doc_id", "score": "correct"})
    (tmp_path / "b").mkdir()
    pd.concat([df, df.head(3)]).to_csv(tmp_path / "b" / "t.csv", index=False)
    out = _run(mod, tmp_path, capsys, "--estimators", "sample_mean")
    assert "note: b/t: 3 second scores of a model for the same item left out (the first kept)" in out
    assert "b/t | extrapolation | 20 | sample_mean |" in out


def test_an_item_count_at_or_above_the_tasks_size_is_skipped(mod, tmp_path, capsys):
    (tmp_path / "b").mkdir()
    _long(one_factor_answers(40, 30)).to_parquet(tmp_path / "b" / "t.parquet")
    mod.main(["--items-dir", str(tmp_path), "--items", "20", "30", "--seeds", "2", "--protocols", "interpolation",
              "--estimators", "sample_mean"])
    out = capsys.readouterr().out
    assert "note: b/t: 30 items of 30 is the whole task; skipped" in out
    assert "b/t | interpolation | 20 | sample_mean |" in out


def test_a_table_without_a_score_column_names_the_file(mod, tmp_path):
    (tmp_path / "b").mkdir()
    _long(one_factor_answers()).rename(columns={"score": "points"}).to_parquet(tmp_path / "b" / "t.parquet")
    with pytest.raises(SystemExit, match=r"t\.parquet: no score column"):
        mod.main(["--items-dir", str(tmp_path), "--items", "20", "--seeds", "1", "--estimators", "sample_mean"])


def test_sibling_tables_of_either_format_line_up_by_model(mod, tmp_path, monkeypatch):
    (tmp_path / "b").mkdir()
    M = one_factor_answers()
    _long(M).to_parquet(tmp_path / "b" / "a.parquet")
    _long(M[::-1][:30], [f"m{i:02d}" for i in range(39, 9, -1)]).to_csv(tmp_path / "b" / "c.csv", index=False)
    monkeypatch.setattr(mod, "ITEMS", tmp_path)
    assert mod.table_paths(tmp_path) == ["b/a", "b/c"]
    scores, models = mod.load_named(mod.table_file("b/a"))
    (other,) = mod.sibling_tables("b/a", models)
    np.testing.assert_array_equal(other[10:], M[10:])
    assert np.isnan(other[:10]).all()


def test_a_table_of_several_tasks_is_refused_with_the_store_named(mod, tmp_path):
    (tmp_path / "b").mkdir()
    df = pd.concat([_long(one_factor_answers()).assign(task="x"), _long(one_factor_answers(seed=1)).assign(task="y")])
    df.to_csv(tmp_path / "b" / "t.csv", index=False)
    with pytest.raises(SystemExit, match=r"t\.csv: its task column names 2 tasks.*--store DB"):
        mod.main(["--items-dir", str(tmp_path), "--items", "20", "--seeds", "1", "--estimators", "sample_mean"])
