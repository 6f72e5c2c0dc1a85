"""Large wide CSVs go the columnar path (arrays, not one record per cell) and store exactly what the record path stores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import harness_ext.adapters.csv_columnar as csv_columnar
import harness_ext.adapters.csv_table as csv_table
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.types import ColumnarResults

LEADERBOARD = """Model,Family,Size (B),MMLU,GSM8K %,ARC,Average,ARC
a/m1,llama,7,0.5,40%,0.3,0.4,0.3
a/m2,llama,13,0.6,50%,0.4,0.5,0.41
a/m1,llama,7,0.55,40%,,0.4,0.3
a/m3,mistral,7,n/a,60%,0.5,0.55,0.5

a/m4,mistral,70,0.7,1,0.6,0.65,0.6
"""

QUERIES = (
    "SELECT m.name, d.name, d.metric, r.value, r.num_fewshot FROM results r JOIN models m USING (model_id) "
    "JOIN datasets d USING (dataset_id) ORDER BY ALL",
    "SELECT m.name, d.name, rr.value FROM result_repeats rr JOIN models m USING (model_id) "
    "JOIN datasets d USING (dataset_id) ORDER BY ALL",
    "SELECT benchmark, name, metric, higher_is_better, random_baseline, min_score, max_score, is_primary, kind, scale, "
    "metadata FROM datasets ORDER BY ALL",
    "SELECT m.name, key, value FROM model_metadata JOIN models m USING (model_id) ORDER BY ALL",
    "SELECT n_results FROM sources",
)


def _ingest(db, path, threshold, monkeypatch, queries=QUERIES):
    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", threshold)
    with Store.open(db) as store:
        report = ingest_paths(store, [path], show_progress=False)
        again = ingest_paths(store, [path], show_progress=False)
        rows = [store.con.execute(q).fetchall() for q in queries]
        conflicts = store.conflicts()
    return report, again, rows, conflicts


def test_columnar_path_stores_what_the_record_path_stores(tmp_path, monkeypatch):
    path = tmp_path / "board.csv"
    path.write_text(LEADERBOARD)
    seen = []
    real = csv_columnar._read_wide_columnar
    monkeypatch.setattr(csv_columnar, "_read_wide_columnar", lambda *a: seen.append(1) or real(*a))
    col = _ingest(tmp_path / "col.duckdb", path, 0, monkeypatch)
    assert seen, "the columnar path was not taken"
    rec = _ingest(tmp_path / "rec.duckdb", path, 1 << 40, monkeypatch)
    assert len(seen) == 1
    assert col[0].summary() == rec[0].summary()
    assert [str(c) for c in col[0].conflicts] == [str(c) for c in rec[0].conflicts]
    assert len(col[0].conflicts) == 2  # a model named twice, a column named twice: reported as conflicts
    assert col[1].summary() == rec[1].summary() and col[1].by_status("unchanged")
    assert col[2] == rec[2]
    pd.testing.assert_frame_equal(col[3], rec[3])


def test_columnar_conflicts_with_another_file(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", 0)
    (tmp_path / "1").mkdir()
    (tmp_path / "2").mkdir()
    a, b = tmp_path / "1" / "board.csv", tmp_path / "2" / "board.csv"  # one benchmark (the stem)
    a.write_text("model,x,y\nm1,0.5,0.6\nm2,0.1,0.2\n")
    b.write_text("model,x,y\nm1,0.5,0.7\nm3,0.1,0.2\n")
    with Store.open(tmp_path / "s.duckdb") as store:
        ingest_paths(store, [a], show_progress=False)
        report = ingest_paths(store, [b], show_progress=False)
        assert [str(c).split(" from ")[0] for c in report.conflicts] == ["m1 on y (score): stored 0.6"]
        assert store.counts()["results"] == 8


def test_columnar_refuses_nul_bytes_and_keeps_the_store(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", 0)
    path = tmp_path / "nul.csv"
    path.write_bytes(b"model,x,y\nm\x001,0.5,0.6\nm2,0.1,0.2\n")
    with Store.open(tmp_path / "s.duckdb") as store:
        report = ingest_paths(store, [path], show_progress=False)
        assert report.by_status("skipped") and "NUL" in report.files[0].reason
        assert store.counts()["results"] == 0


@pytest.mark.slow
def test_wide_csv_2000_x_500_goes_columnar_and_round_trips_exactly(tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    X = np.round(rng.random((2000, 500)), 4)
    X[rng.random(X.shape) < 0.1] = np.nan
    frame = pd.DataFrame(X, columns=[f"task_{j:03d}" for j in range(500)])
    frame.insert(0, "model", [f"org/model-{i:05d}" for i in range(2000)])
    path = tmp_path / "wide.csv"
    frame.to_csv(path, index=False, float_format="%.4f")
    assert path.stat().st_size >= csv_table.COLUMNAR_MIN_BYTES
    kinds = []
    real = csv_table.read
    monkeypatch.setattr(csv_table, "read", lambda src: kinds.append(type(r := real(src)).__name__) or r)
    from harness_ext.plugin_manager import get_registration

    monkeypatch.setattr(get_registration("adapters", "csv"), "read", csv_table.read)
    with Store.open(tmp_path / "s.duckdb") as store:
        report = ingest_paths(store, [path], show_progress=False)
        assert kinds == [ColumnarResults.__name__]
        assert report.n_results == int(np.count_nonzero(~np.isnan(X)))
        got = load_matrix(store, MatrixQuery(normalise="none"))
    got = got.loc[frame["model"], frame.columns[1:]]
    np.testing.assert_array_equal(got.to_numpy(), X)


def test_can_handle_never_raises_on_a_bare_carriage_return(tmp_path):
    """Found by test_ingest_hardening's fuzzing (cut=0, junk=b'\\x00\\r\\x00'): csv.Error escaped can_handle."""
    from harness_ext.types import SourceFile

    path = tmp_path / "scores.csv"
    path.write_bytes(b"\x00\r\x00")
    assert csv_table.can_handle(SourceFile(path)) is False


LONG = """model,benchmark,dataset,metric,value,stderr,n_samples,num_fewshot,higher_is_better,random_baseline,min_score,max_score,scale,kind
a/m1,b1,d1,acc,0.5,0.01,100,5,true,0.25,0,1,proportion,dataset
a/m1, b1 ,d1,acc_norm,0.6,,,5,,,,,,
a/m2,b1,d1,acc,0.7,0.02,100.0,0,yes,,,,,
a/m2,,d2,acc,0.3,,,,,,,,,aggregate
 a/m1,b1,d1,acc,0.55,,,5,,,,,,
a/m1,b1,d1,acc,0.5,,,5,,,,,,
a/m3,b1,d1,acc,0.1,,1e30,,,,,,,
"""
LONG_QUERIES = (
    "SELECT m.name, d.benchmark, d.name, d.metric, r.value, r.num_fewshot, r.stderr, r.n_samples FROM results r "
    "JOIN models m USING (model_id) JOIN datasets d USING (dataset_id) ORDER BY ALL",
    "SELECT m.name, d.name, rr.value, rr.num_fewshot, rr.stderr, rr.n_samples FROM result_repeats rr "
    "JOIN models m USING (model_id) JOIN datasets d USING (dataset_id) ORDER BY ALL",
    "SELECT benchmark, name, metric, higher_is_better, random_baseline, baseline_source, min_score, max_score, "
    "is_primary, kind, scale, metadata FROM datasets ORDER BY ALL",
    "SELECT name, metadata FROM models ORDER BY ALL",
    "SELECT n_results FROM sources",
)


def _ingest_long(db, paths, threshold, monkeypatch):
    """Each file, then all again (unchanged): summaries, conflicts and the stored rows of LONG_QUERIES."""
    reports = [_ingest(db, p, threshold, monkeypatch, LONG_QUERIES) for p in paths]
    return ([r[0].summary() for r in reports], [sorted(map(str, r[0].conflicts)) for r in reports],
            [r[1].summary() for r in reports], reports[-1][2])


def test_long_columnar_path_stores_what_the_record_path_stores(tmp_path, monkeypatch):
    """Padded names, optional columns, a key given twice (same and different value), a conflict with another file."""
    first, second = tmp_path / "1" / "long.csv", tmp_path / "2" / "long.csv"
    first.parent.mkdir()
    second.parent.mkdir()
    first.write_text(LONG)
    second.write_text("model,dataset,value,benchmark,metric,num_fewshot\na/m2,d1,0.71,b1,acc,0\na/m9,d1,0.2,b1,acc,0\n")
    kinds = []
    real = csv_columnar._read_long_columnar
    monkeypatch.setattr(csv_columnar, "_read_long_columnar", lambda *a: kinds.append(type(r := real(*a)).__name__) or r)
    col = _ingest_long(tmp_path / "col.duckdb", [first, second], 0, monkeypatch)
    assert kinds == ["ColumnarCells", "ColumnarCells"]
    rec = _ingest_long(tmp_path / "rec.duckdb", [first, second], 1 << 40, monkeypatch)
    assert col == rec
    assert len(col[1][0]) == 1 and len(col[1][1]) == 1  # the repeat within the file; the value another file stored


@pytest.mark.parametrize("bad, reason", [
    ("a/m1,d1,\n", "row 3: value '' is not a number"),
    ("a/m1,d1,inf\n", "not finite"),
    (",d1,0.5\n", "model must be a non-empty string"),
    ("a/m1,d1,0.5,7\n", "row 3 ('a/m1') has 4 fields"),
    ("a/m\x001,d1,0.5\n", "NUL"),
])
def test_long_columnar_errors_name_the_row_and_keep_the_store(tmp_path, monkeypatch, bad, reason):
    """A row the fast path cannot take goes to the record path, whose error names it; nothing is stored."""
    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", 0)
    path = tmp_path / "long.csv"
    path.write_text("model,dataset,value\na/m0,d0,0.5\n" + bad)
    with Store.open(tmp_path / "s.duckdb") as store:
        report = ingest_paths(store, [path], show_progress=False)
        assert report.by_status("skipped") and reason in report.files[0].reason, report.files[0].reason
        assert store.counts()["results"] == 0 and store.counts()["sources"] == 0


@pytest.mark.parametrize("chunk", [7, 1_000_000])
def test_wide_cells_are_the_present_cells_in_row_order(monkeypatch, chunk):
    """columnar._wide_cells (mask compression) gives what np.nonzero and gathers gave: same cells, same order."""
    from harness_ext.store import columnar

    monkeypatch.setattr(columnar, "CHUNK_CELLS", chunk)
    rng = np.random.default_rng(3)
    V = rng.random((23, 5))
    V[rng.random(V.shape) < 0.3] = np.nan
    V[4] = np.nan  # a row without a present cell
    row_mid, col_did = rng.permutation(40)[:23] + 1, np.array([9, 2, 9, 5, 1])  # a dataset in two columns
    got = pd.concat([t.to_pandas() for t in columnar._wide_cells(V, row_mid, col_did)], ignore_index=True)
    r, c = np.nonzero(~np.isnan(V))
    assert got["model_id"].tolist() == row_mid[r].tolist() and got["dataset_id"].tolist() == col_did[c].tolist()
    assert got["value"].to_numpy().tobytes() == V[r, c].tobytes() and (got["num_fewshot"] == -1).all()
    assert [str(t) for t in got.dtypes] == ["int32", "int32", "int32", "float64"]


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["columnar", "records"])
def test_a_column_read_as_percent_from_one_value_is_noted(tmp_path, monkeypatch, threshold):
    """Proportions with one stray percentage (0.5, 0.6, 40, 0.7): the one value makes the column percentages, which
    the ingest notes say with the counts; both reading paths."""
    path = tmp_path / "board.csv"
    path.write_text("model,MMLU,GSM8K\na,0.5,0.3\nb,0.6,0.4\nc,40,0.5\nd,0.7,0.6\n")
    report = _ingest(tmp_path / "s.duckdb", path, threshold, monkeypatch)[0]
    notes = [n for f in report.files for n in f.notes]
    assert any("'MMLU' read as percentages (0-100) because 1 of its 4 values is above 1 (largest 40), though 3 "
               "are at most 1" in n for n in notes), notes
    assert not any("GSM8K" in n for n in notes)


@pytest.mark.parametrize("threshold", [0, 1 << 40], ids=["columnar", "records"])
def test_a_score_outside_the_sidecars_scale_refuses_the_file(tmp_path, monkeypatch, threshold):
    """A sidecar's ``scale: proportion`` bounds the column: 40 is refused naming the model (it was stored as 40 and
    normalised to 40 times the scale's top), and the store keeps nothing of the file."""
    path = tmp_path / "board.csv"
    path.write_text("model,MMLU,GSM8K\na,0.5,0.3\nb,0.6,0.4\nc,40,0.5\nd,0.7,0.6\n")
    (tmp_path / "board.csv.meta.yaml").write_text("columns:\n  MMLU: {scale: proportion}\n")
    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", threshold)
    with Store.open(tmp_path / "s.duckdb") as store:
        report = ingest_paths(store, [path], show_progress=False)
        (skipped,) = report.by_status("skipped")
        assert "column 'MMLU': 'c' scores 40, outside the column's proportion scale [0, 1]" in skipped.reason
        assert store.con.execute("SELECT count(*) FROM results").fetchone()[0] == 0
