"""load_matrix's DuckDB path (selection, de-duplication, pivot in SQL) against the pandas path it replaced.

``_pandas_raw`` is the former implementation, kept here as the reference: a long
string table from ``query_results``, ``drop_duplicates`` and ``pivot``. Both must
give the same raw matrix, labels, column metadata and fingerprint, on the real
stores and on a small store built to exercise every rule: conflicting values
(first ingested wins), a model at several shot counts, a dataset name shared by
two benchmarks, several runs of a model (rows="run").
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness_ext.store.matrix import MatrixQuery, _raw_matrix, load_matrix, query_results
from harness_ext.store.db import Store
from harness_ext.store.tables import UNKNOWN_SHOTS
from harness_ext.types import ResultRecord


def _pandas_raw(store, query):
    long = query_results(store, query).copy()
    clash = long.groupby("dataset")["benchmark"].nunique()
    qualify = set(clash[clash > 1].index)
    long["column"] = np.where(long["dataset"].isin(qualify), long["benchmark"] + "/" + long["dataset"], long["dataset"])
    if query.rows == "run":
        long["row"] = long["model"] + " [" + long["source"].map(lambda p: p.rsplit("/", 1)[-1]) + "]"
    else:
        shots = long.groupby("model")["num_fewshot"].nunique()
        multi = set(shots[shots > 1].index)
        label = long["num_fewshot"].map(lambda k: "" if k == UNKNOWN_SHOTS else f" [{k}-shot]")
        long["row"] = np.where(long["model"].isin(multi), long["model"] + label, long["model"])
    first = long.drop_duplicates(["row", "column"], keep="first")
    raw = first.pivot(index="row", columns="column", values="value")
    raw = raw.loc[sorted(raw.index), sorted(raw.columns)]
    raw.index.name, raw.columns.name = "model", "dataset"
    meta = (first.drop_duplicates("column").set_index("column")[
        ["benchmark", "dataset", "metric", "task", "higher_is_better", "random_baseline", "baseline_source",
         "min_score", "max_score", "kind", "scale"]].loc[raw.columns])
    shots = first[first["num_fewshot"] != UNKNOWN_SHOTS].groupby("column")["num_fewshot"].agg(
        lambda s: int(s.mode().iloc[0]))
    meta["num_fewshot"] = shots.reindex(meta.index).astype("Int64")
    return raw, meta


def _same(store, query):
    raw, meta = _raw_matrix(store, query)
    ref, ref_meta = _pandas_raw(store, query)
    assert list(raw.index) == list(ref.index)
    assert list(raw.columns) == list(ref.columns)
    np.testing.assert_array_equal(raw.to_numpy(), ref.to_numpy().astype(float))
    meta = meta.rename(columns={"scale_kind": "scale"})  # load_matrix's meta names the stored kind scale_kind
    for col in ("benchmark", "dataset", "metric", "task", "baseline_source", "kind", "scale"):
        assert list(meta[col].fillna("~")) == list(ref_meta[col].fillna("~")), col
    for col in ("random_baseline", "min_score", "max_score"):
        np.testing.assert_array_equal(meta[col].to_numpy(float), ref_meta[col].to_numpy(float))
    assert list(meta["higher_is_better"].astype(object)) == list(ref_meta["higher_is_better"].astype(object))
    assert list(meta["num_fewshot"].astype(object)) == list(ref_meta["num_fewshot"].astype(object))
    return raw


# The reference labels a model's shot settings apart: rows="model_shots" (rows="model" keeps one setting per dataset).
QUERIES = [
    MatrixQuery(rows="model_shots"),
    MatrixQuery(rows="run"),
    MatrixQuery(benchmarks=("mmlu",), rows="run"),
    MatrixQuery(benchmarks=("helm_classic",)),
    MatrixQuery(benchmarks=("mmlu",), models="*pythia-v1.1-1*", rows="model_shots"),
    MatrixQuery(metric="acc_norm", rows="model_shots"),
    MatrixQuery(num_fewshot=5),
    MatrixQuery(source="*zero-shot*"),
    MatrixQuery(datasets="high_school_*", rows="model_shots"),
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: repr({k: v for k, v in q.to_dict().items() if v}))
def test_sql_path_matches_pandas_path_on_real_data(real_store, query):
    with Store.open(real_store, read_only=True) as store:
        assert len(query_results(store, query)), "the query should select something on this store"
        _same(store, query)
        df = load_matrix(store, query)
        assert df.attrs["fingerprint"]


def _rec(model, dataset, value, benchmark="b1", shots=None, metric="acc", primary=True):
    return ResultRecord(model=model, benchmark=benchmark, dataset=dataset, metric=metric, value=value,
                        num_fewshot=shots, random_baseline=0.25, primary=primary)


@pytest.fixture()
def rule_store(tmp_path):
    with Store.open(tmp_path / "rules.duckdb") as store:
        store.ingest_source("a/run1.json", "s1", "csv", [
            _rec("m1", "d1", 0.5), _rec("m1", "d2", 0.6), _rec("m2", "d1", 0.7, shots=0),
            _rec("m2", "d1", 0.71, shots=5), _rec("m3", "shared", 0.4, benchmark="b1"),
            _rec("m3", "shared", 0.45, benchmark="b2"), _rec("m1", "d1", 0.9, metric="acc_norm", primary=False)])
        # conflicts: the first ingested value must win
        store.ingest_source("b/run1.json", "s2", "csv", [_rec("m1", "d1", 0.1), _rec("m4", "d2", 0.3, shots=5)])
        store.ingest_source("c/run2.json", "s3", "csv", [_rec("m1", "d2", 0.2), _rec("m4", "d2", 0.35, shots=5)])
    return tmp_path / "rules.duckdb"


@pytest.mark.parametrize("rows", ["model_shots", "run"])
def test_sql_path_matches_pandas_path_on_every_rule(rule_store, rows):
    with Store.open(rule_store, read_only=True) as store:
        raw = _same(store, MatrixQuery(rows=rows))
        _same(store, MatrixQuery(rows=rows, metric="acc_norm"))
        _same(store, MatrixQuery(rows=rows, benchmarks=("b2",)))
        assert {"b1/shared", "b2/shared"} <= set(raw.columns)
        if rows == "model_shots":
            assert raw.loc["m1", "d1"] == 0.5 and raw.loc["m1", "d2"] == 0.6  # first ingested wins
            assert {"m2 [0-shot]", "m2 [5-shot]"} <= set(raw.index)
        else:
            assert raw.loc["m1 [run1.json]", "d1"] == 0.5  # a/run1.json and b/run1.json share a label


def test_empty_selection_errors(rule_store):
    from harness_ext.errors import StoreError

    with Store.open(rule_store, read_only=True) as store, pytest.raises(StoreError, match="no benchmark 'nope'"):
        load_matrix(store, MatrixQuery(benchmarks=("nope",)))


def test_metric_tensor_is_built_in_the_store_with_the_query_options(real_store):
    """load_metric_tensor honours rows (and the rest of the query): each slice is load_matrix at that metric."""
    from dataclasses import replace

    from harness_ext.store.matrix import load_metric_tensor

    q = MatrixQuery(benchmarks=("mmlu",), rows="run", datasets="high_school_*")
    with Store.open(real_store, read_only=True) as store:
        df = load_matrix(store, q)
        T, metrics = load_metric_tensor(store, q, df.index, df.columns)
        assert T.shape == df.shape + (len(metrics),) and len(metrics) >= 1
        for i, m in enumerate(metrics):
            ref = load_matrix(store, replace(q, metric=m)).reindex(index=list(df.index), columns=list(df.columns))
            np.testing.assert_array_equal(T[:, :, i], ref.to_numpy(dtype=float))


# ----------------------------------------------------------------------------- the one-scan path (pivot._one_setting_arrays)


def _general(store, query):
    """load_matrix through the general (ranking) path only."""
    from unittest import mock

    from harness_ext.store import pivot

    with mock.patch.object(pivot, "_one_setting_arrays", lambda *a, **k: None):
        return load_matrix(store, query)


def _fast_taken(store, query) -> bool:
    from unittest import mock

    from harness_ext.store import pivot

    taken = []
    real = pivot._one_setting_arrays

    def spy(*a, **k):
        out = real(*a, **k)
        taken.append(out is not None)
        return out

    with mock.patch.object(pivot, "_one_setting_arrays", spy):
        load_matrix(store, query)
    return bool(taken and taken[0])


def _identical(a, b):
    assert list(a.index) == list(b.index) and a.index.name == b.index.name and a.index.dtype == b.index.dtype
    assert list(a.columns) == list(b.columns) and a.columns.name == b.columns.name
    assert a.to_numpy().dtype == b.to_numpy().dtype and a.to_numpy().tobytes() == b.to_numpy().tobytes()
    assert a.attrs == b.attrs


@pytest.fixture()
def one_setting_store(tmp_path):
    """Every result at 5 shots: the one-scan path's case, with its edges (sparse cells, a model and a dataset
    without results in some selections, a dataset name in two benchmarks, sample counts, aliases, odd names)."""
    def rec(model, dataset, value, benchmark="b1", n=None, **kw):
        return ResultRecord(model=model, benchmark=benchmark, dataset=dataset, metric="acc", value=value, num_fewshot=5,
                            random_baseline=0.25, n_samples=n, **kw)

    with Store.open(tmp_path / "one.duckdb") as store:
        store.ingest_source("a/run.json", "s1", "csv", [
            rec("zeta", "d1", 0.5, n=100), rec("Alpha", "d1", 0.6, n=300), rec("alpha", "d2", 0.7),
            rec("émile", "d1", 0.8, n=200), rec("émile", "d2", 0.81), rec("m-2", "shared", 0.4),
            rec("m-2", "shared", 0.45, benchmark="b2"), rec("old-name", "d3", 0.3), rec("zeta", "d3", 0.9),
            rec("zeta", "acc2", 0.2, benchmark="b3"), rec("lonely", "d4", 0.33, benchmark="b4"),
            ResultRecord(model="zeta", benchmark="b1", dataset="d1", metric="acc_norm", value=0.55, num_fewshot=5,
                         primary=False)])
        store.con.execute("INSERT INTO model_aliases VALUES ('old-name', 'Alpha', 'test'), ('alias-x', 'zeta', 'test')")
    return tmp_path / "one.duckdb"


ONE_SETTING_QUERIES = [
    MatrixQuery(), MatrixQuery(normalise="none"), MatrixQuery(normalise="minmax"), MatrixQuery(rows="model_shots"),
    MatrixQuery(aliases=False), MatrixQuery(benchmarks=("b1",)), MatrixQuery(benchmarks=("b1", "b2")),
    MatrixQuery(models="*a*"), MatrixQuery(models="Alpha"), MatrixQuery(datasets="d*"), MatrixQuery(source="a/*"),
    MatrixQuery(num_fewshot=5), MatrixQuery(metric="acc_norm"), MatrixQuery(dense=True), MatrixQuery(datasets="d[12]", dense="models"),
]


@pytest.mark.parametrize("query", ONE_SETTING_QUERIES, ids=lambda q: repr({k: v for k, v in q.to_dict().items() if v}))
def test_one_scan_path_matches_the_general_path(one_setting_store, query):
    with Store.open(one_setting_store, read_only=True) as store:
        assert _fast_taken(store, query)
        _identical(load_matrix(store, query), _general(store, query))
        _same(store, query if query.rows != "model" else MatrixQuery(**{**query.to_dict(), "rows": "model_shots",
                                                                         "benchmarks": query.benchmarks}))


def test_one_scan_path_sparse_names_and_aliases(one_setting_store):
    with Store.open(one_setting_store, read_only=True) as store:
        df = load_matrix(store, MatrixQuery(normalise="none"))
        # Python's string order (upper case before lower, accents last), an alias merged into its canonical row
        assert list(df.index) == ["Alpha", "alpha", "lonely", "m-2", "zeta", "émile"]
        assert df.attrs["model_aliases"] == {"Alpha": ["Alpha", "old-name"]}
        assert df.loc["Alpha", "d3"] == 0.3 and np.isnan(df.loc["lonely", "d1"])
        assert {"b1/shared", "b2/shared", "acc2"} <= set(df.columns)
        ds = df.attrs["datasets"]
        assert ds["d1"]["n_samples"] == 200.0 and ds["d2"]["n_samples"] is None and ds["d1"]["num_fewshot"] == 5
        # a selection without b2: "shared" is no longer qualified, and rows and columns without results go
        sub = load_matrix(store, MatrixQuery(benchmarks=("b1",), models="[amz]*", normalise="none"))
        assert list(sub.columns) == ["d1", "d2", "d3", "shared"] and list(sub.index) == ["alpha", "m-2", "zeta"]


def test_one_scan_path_leaves_conflicts_and_other_cases_to_the_general_path(one_setting_store, rule_store):
    with Store.open(one_setting_store) as store:
        assert _fast_taken(store, MatrixQuery(datasets="d3"))
        store.ingest_source("b/run.json", "s2", "csv", [
            ResultRecord(model="zeta", benchmark="b1", dataset="d1", metric="acc", value=0.1, num_fewshot=5),
            ResultRecord(model="alias-x", benchmark="b1", dataset="d3", metric="acc", value=0.95, num_fewshot=5)])
    with Store.open(one_setting_store, read_only=True) as store:
        for q in (MatrixQuery(normalise="none"), MatrixQuery(datasets="d3", normalise="none")):
            # a cell came twice (in one name, or in two names of one model): ranked, the first ingested wins
            assert not _fast_taken(store, q)
            df = load_matrix(store, q)
            assert df.loc["zeta", "d3"] == 0.9 and ("d1" not in df or df.loc["zeta", "d1"] == 0.5)
            _identical(df, _general(store, q))
    with Store.open(rule_store, read_only=True) as store:  # several shot settings
        assert not _fast_taken(store, MatrixQuery())
        assert not _fast_taken(store, MatrixQuery(num_fewshot=5))  # m4's d2 from two files
        assert _fast_taken(store, MatrixQuery(num_fewshot=5, models="m2"))
        for q in (MatrixQuery(num_fewshot=5), MatrixQuery(num_fewshot=5, models="m2")):
            _identical(load_matrix(store, q), _general(store, q))


@pytest.mark.parametrize("query", [MatrixQuery(), MatrixQuery(benchmarks=("helm_classic",)), MatrixQuery(num_fewshot=0),
                                   MatrixQuery(num_fewshot=5, rows="model_shots"), MatrixQuery(source="*zero-shot*"),
                                   MatrixQuery(benchmarks=("helm_classic",), aggregates=True, normalise="minmax")],
                         ids=lambda q: repr({k: v for k, v in q.to_dict().items() if v}))
def test_one_scan_path_matches_the_general_path_on_real_data(real_store, query):
    with Store.open(real_store, read_only=True) as store:
        _identical(load_matrix(store, query), _general(store, query))


def test_one_scan_path_counts_missing_cells_across_blocks(tmp_path, monkeypatch):
    """Blocks with and without missing cells, and models with no result in the selection, over several count
    blocks: the same matrix, labels and attrs as the general path."""
    from harness_ext.store import pivot

    rng = np.random.default_rng(3)
    recs = []
    for i in range(60):
        for j in range(7):
            if i < 20 or rng.random() > 0.3:  # the first blocks complete, the rest sparse
                recs.append(ResultRecord(model=f"m{i:03d}", benchmark="b1", dataset=f"d{j}", metric="acc",
                                         value=float(rng.random()), num_fewshot=0))
        if i % 9 == 4:  # a model with results only outside the selection
            recs.append(ResultRecord(model=f"other{i:03d}", benchmark="b2", dataset="x", metric="acc", value=0.5,
                                     num_fewshot=0))
    with Store.open(tmp_path / "blocks.duckdb") as store:
        store.ingest_source("a/run.json", "s1", "csv", recs)
    monkeypatch.setattr(pivot, "_BLOCK_CELLS", 7 * 4)  # four rows a block
    with Store.open(tmp_path / "blocks.duckdb", read_only=True) as store:
        for q in (MatrixQuery(normalise="none"), MatrixQuery(benchmarks=("b1",)), MatrixQuery(datasets="d[0-2]")):
            assert _fast_taken(store, q)
            _identical(load_matrix(store, q), _general(store, q))


@pytest.mark.parametrize("stored", ["nan", "inf_pair"])
def test_one_scan_complete_runs_with_nan_stored(tmp_path, stored):
    """A complete store read as runs skips the missing-cell pass only when no stored value is NaN (asked of
    DuckDB before the scan): a NaN makes a missing cell, and the matrix is the general path's; +inf and -inf
    are values like others (no cell missing), and the one-scan path answers."""
    recs = [ResultRecord(model=f"m{i}", benchmark="b", dataset=f"d{j}", metric="acc", value=0.1 * j + 0.01 * i,
                         num_fewshot=0) for i in range(6) for j in range(4)]
    cell = ("model_id = (SELECT model_id FROM models WHERE name = 'm2') AND "
            "dataset_id = (SELECT dataset_id FROM datasets WHERE name = ?)")
    with Store.open(tmp_path / "nan.duckdb") as store:
        store.ingest_source("a/run.json", "s1", "csv", recs)
        q = MatrixQuery(normalise="none")
        assert _fast_taken(store, q)
        if stored == "nan":
            store.con.execute(f"UPDATE results SET value = 'nan'::DOUBLE WHERE {cell}", ["d1"])
        else:
            store.con.execute(f"UPDATE results SET value = 'inf'::DOUBLE WHERE {cell}", ["d1"])
            store.con.execute(f"UPDATE results SET value = '-inf'::DOUBLE WHERE {cell}", ["d3"])
        df = load_matrix(store, q)
        _identical(df, _general(store, q))
        assert _fast_taken(store, q) == (stored == "inf_pair")
        assert np.isnan(df.loc["m2", "d1"]) == (stored == "nan")


@pytest.mark.parametrize("shape", [(0, 3), (1, 70_000), (10_007, 3), (5, 0)])
def test_fingerprint_hashes_np_round_bytes(shape):
    """The blocked, buffered rounding hashes exactly the bytes of np.round(X, 12), awkward values included."""
    import hashlib

    from harness_ext.store.digest import fingerprint_arrays

    rng = np.random.default_rng(0)
    X = rng.standard_normal(shape) * 10.0 ** rng.integers(-14, 14, shape)
    odd = np.array([np.nan, np.inf, -np.inf, -0.0, 0.5e-12, 2.5e-12, -1.5e-12, 1e300, 5e-324, 0.1 + 0.2])
    X.reshape(-1)[:min(X.size, len(odd))] = odd[:min(X.size, len(odd))]
    index, columns = [f"r{i}" for i in range(shape[0])], [f"c{j}" for j in range(shape[1])]
    h = hashlib.sha256()
    h.update("\x1f".join(index).encode() + b"\x1e" + "\x1f".join(columns).encode() + b"\x1e")
    with np.errstate(over="ignore"):
        h.update(np.round(X, 12).tobytes())
    assert fingerprint_arrays(X, index, columns) == h.hexdigest()
    assert fingerprint_arrays(X, index, columns, block_bytes=64) == h.hexdigest()


def test_row_hasher_rounding_here_or_in_its_thread_is_one_digest():
    """RowHasher hands rows over rounded in the caller's thread (advance(here=True), a few reused buffers) or in
    its own, in any mix of ranges, blocks not aligned to rows and buffers reused many times: the digest is
    fingerprint_arrays'."""
    from harness_ext.store.digest import RowHasher, fingerprint_arrays

    rng = np.random.default_rng(3)
    X = rng.standard_normal((103, 7)) * 10.0 ** rng.integers(-14, 14, (103, 7))
    X.reshape(-1)[:6] = [np.nan, np.inf, -0.0, 2.5e-12, 1e300, 5e-324]
    index, columns = [f"r{i:03d}" for i in range(103)], [f"c{j}" for j in range(7)]
    want = fingerprint_arrays(X, index, columns)
    for bounds in ([(103, True)], [(1, True), (2, False), (50, True), (51, True), (90, False), (103, True)],
                   [(40, True), (30, True)], []):
        h = RowHasher(X, index, columns, block_bytes=40)  # 10 cells a block rounded here: 73 through 4 buffers
        for rows, here in bounds:
            h.advance(rows, here=here)
        assert h.result() == want


def test_one_scan_path_inside_an_open_transaction_sees_its_writes(tmp_path):
    """Inside a transaction that has written results, the matrix has them: every query of the one-scan path
    runs on the caller's connection (a scan on a cursor of its own would miss them)."""
    recs = [ResultRecord(model=f"m{i}", benchmark="b", dataset=f"d{j}", metric="acc", value=0.1 * j + 0.01 * i,
                         num_fewshot=0) for i in range(5) for j in range(3) if (i, j) != (4, 2)]
    with Store.open(tmp_path / "tx.duckdb") as store:
        store.ingest_source("a/run.json", "s1", "csv", recs)
        assert _fast_taken(store, MatrixQuery(normalise="none"))
        with store.transaction() as con:
            con.execute("""INSERT INTO results (model_id, dataset_id, num_fewshot, value, stderr, n_samples, source_id)
                           SELECT m.model_id, d.dataset_id, 0, 0.77, NULL, NULL, 1 FROM models m, datasets d
                           WHERE m.name = 'm4' AND d.name = 'd2'""")
            df = load_matrix(store, MatrixQuery(normalise="none"))
            assert df.loc["m4", "d2"] == 0.77
            _identical(df, _general(store, MatrixQuery(normalise="none")))


def _small_batches(monkeypatch, rows: int):
    """pivot._batches yielding ``rows`` results at a time (DuckDB hands over 122,880): several batches in a small
    store."""
    from harness_ext.store import pivot

    real = pivot._batches

    def split(*a, **k):
        for b in real(*a, **k):
            for s in range(0, len(next(iter(b.values()))), rows):
                yield {key: v[s:s + rows] for key, v in b.items()}

    monkeypatch.setattr(pivot, "_batches", split)


@pytest.mark.parametrize("keyed", [True, False])
@pytest.mark.parametrize("order", ["models", "datasets", "late", "gap", "sparse", "unused_model"])
def test_one_scan_fingerprint_while_reading(tmp_path, monkeypatch, order, keyed):
    """The fingerprint hashed while the store is read (pivot's RowHasher) is the finished matrix's, whatever the
    order the results come in: model by model (runs of cells copied, hashed beside the scan), dataset by dataset
    (hashed after it), model by model with a late result for an early model (started again), with one result
    stored last (runs, then scattered), sparse, or with a model whose results are all outside the selection (a
    row dropped: the cut matrix is hashed). Ids come as one cell key, or (keys too large) as two columns."""
    from harness_ext.store import digest, pivot
    from harness_ext.store.matrix import fingerprint

    if not keyed:
        monkeypatch.setattr(pivot, "_KEY_MAX", 0)

    rng = np.random.default_rng(5)
    cells = [(i, j) for i in range(40) for j in range(6)]
    if order == "datasets":
        cells.sort(key=lambda c: (c[1], c[0]))
    if order == "late":
        cells.append(cells.pop(3))
    if order == "gap":
        cells.append(cells.pop(62))
    if order == "sparse":
        cells = [c for c in cells if rng.random() > 0.3]
    recs = [ResultRecord(model=f"m{i:03d}", benchmark="b1", dataset=f"d{j}", metric="acc",
                         value=float(rng.random()), num_fewshot=0) for i, j in cells]
    if order == "unused_model":
        recs.insert(50, ResultRecord(model="m010x", benchmark="b2", dataset="x", metric="acc", value=0.5,
                                     num_fewshot=0))
    with Store.open(tmp_path / "order.duckdb") as store:
        store.ingest_source("a/run.json", "s1", "csv", recs)
    made = []

    class Spy(digest.RowHasher):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.bounds = []
            made.append(self)

        def advance(self, rows, **k):
            self.bounds.append(rows)
            super().advance(rows, **k)

    monkeypatch.setattr(pivot, "RowHasher", Spy)
    runs = []
    real_is_run = pivot._is_run
    monkeypatch.setattr(pivot, "_is_run", lambda *a: runs.append(real_is_run(*a)) or runs[-1])
    sql = []
    real_batches = pivot._batches
    monkeypatch.setattr(pivot, "_batches", lambda con, q, *a, **k: sql.append(q) or real_batches(con, q, *a, **k))
    _small_batches(monkeypatch, 25)
    with Store.open(tmp_path / "order.duckdb", read_only=True) as store:
        q = MatrixQuery(normalise="none", benchmarks=("b1",))
        assert _fast_taken(store, q)
        made.clear()
        runs.clear()
        df = load_matrix(store, q)
        assert df.attrs["fingerprint"] == fingerprint(df)
        _identical(df, _general(store, q))
    # Model by model: rows hashed during the scan. Dataset by dataset: all of them after it. A late result
    # for a row already hashed: a second hasher after the scan.
    assert len(made) == (2 if order in ("late", "gap") else 1)
    assert (made[0].bounds[0] < 40) == (order != "datasets")
    # Runs of consecutive cells are copied while they last; the first batch that is not one ends them.
    assert runs.count(False) <= 1 and (runs and runs[0]) == (order in ("models", "gap", "unused_model"))
    assert all(runs) == (order == "models")
    assert ("AS key" in sql[0]) == keyed


def test_one_scan_row_labels_in_python_order_under_any_collation(one_setting_store, tmp_path):
    """The row labels come from DuckDB in Arrow in the order the models are stored: only checked when that is
    Python's order, sorted in Arrow otherwise ('zeta' stored first; 'Beta', stored last, sorts between 'Alpha'
    and 'alpha'); a collation (NOCASE: 'Alpha' and 'alpha' tie, accents fold) changes nothing. The index and
    the fingerprint are those of the general path either way."""
    from unittest import mock

    import pyarrow.compute as pc

    with Store.open(tmp_path / "in_order.duckdb") as store:
        store.ingest_source("a/run.json", "s1", "csv", [ResultRecord(
            model=m, benchmark="b1", dataset="d1", metric="acc", value=0.5, num_fewshot=0) for m in ("A", "B", "a")])
        with mock.patch.object(pc, "sort_indices", wraps=pc.sort_indices) as sort:
            df = load_matrix(store, MatrixQuery(normalise="none"))
        assert sort.call_count == 0 and list(df.index) == ["A", "B", "a"]
    with Store.open(one_setting_store) as store:
        # 'Beta' sorts before 'alpha' in Python (upper case first), after it without case
        store.ingest_source("b/run.json", "s2", "csv", [ResultRecord(
            model="Beta", benchmark="b1", dataset="d1", metric="acc", value=0.42, num_fewshot=5)])
        q = MatrixQuery(normalise="none")
        with mock.patch.object(pc, "sort_indices", wraps=pc.sort_indices) as sort:
            plain = load_matrix(store, q)
        assert sort.call_count == 1  # stored out of order: the labels sorted in Arrow
        assert list(plain.index[:3]) == ["Alpha", "Beta", "alpha"]
        _identical(plain, _general(store, q))
        store.con.execute("SET default_collation = 'nocase'")
        assert _fast_taken(store, q)
        df = load_matrix(store, q)
        _identical(df, plain)
        _identical(df, _general(store, q))
        store.con.execute("RESET default_collation")


def test_sorted_labels_and_joined_header_match_python():
    """pivot._sorted_labels is np.unique(..., return_inverse=True) on Arrow strings (sorted or not, repeats,
    non-ASCII); digest._joined gives the bytes of '\\x1f'.join for lists, Arrow arrays and an Index over one."""
    import pyarrow as pa

    from harness_ext.store.digest import _joined
    from harness_ext.store.pivot import _label_index, _sorted_labels

    for names in (["a", "a", "b", "é", "é", "z"], ["zeta", "Alpha", "alpha", "émile", "Alpha"], ["x"], []):
        arr = pa.array(names, type=pa.string())
        uniq, code = _sorted_labels(pa.chunked_array([arr], type=pa.string()))
        want_uniq, want_code = np.unique(np.array(names, dtype=object), return_inverse=True)
        assert uniq.to_pylist() == list(want_uniq) and list(code) == list(want_code)
        index = _label_index(uniq)
        assert list(index) == list(want_uniq) and index.name == "model"
        assert index.dtype == pd.Index(list(want_uniq) or ["x"]).dtype
        joined = "\x1f".join(want_uniq).encode()
        for labels in (list(want_uniq), uniq, index, pa.array(list(want_uniq), type=pa.large_string())):
            assert bytes(_joined(labels)) == joined


RULE_QUERIES = [MatrixQuery(), MatrixQuery(rows="model_shots"), MatrixQuery(rows="run", normalise="minmax"),
                MatrixQuery(dense=True), MatrixQuery(num_fewshot=5, normalise="none")]


@pytest.mark.parametrize("which", ["one_setting", "rules"])
@pytest.mark.slow
def test_load_matrix_without_fingerprint_is_the_same_matrix(one_setting_store, rule_store, which):
    """fingerprint=False (the commands that write and check no manifest) gives the matrix and attrs of the
    default load but for attrs["fingerprint"], None, and attrs["conflicts"] and ["conflicts_by_documents"] (counted for
    a manifest's matrix only);
    the default's fingerprint is fingerprint() of the raw matrix it normalised, on the one-scan path (hashed while
    the store is read) and the general path, dense or not."""
    from dataclasses import replace

    from harness_ext.store.matrix import fingerprint

    db, queries = (one_setting_store, ONE_SETTING_QUERIES) if which == "one_setting" else (rule_store, RULE_QUERIES)
    with Store.open(db, read_only=True) as store:
        for q in queries:
            full, plain = load_matrix(store, q), load_matrix(store, q, fingerprint=False)
            assert plain.attrs["fingerprint"] is None
            assert full.attrs["fingerprint"] == fingerprint(load_matrix(store, replace(q, normalise="none"),
                                                                        fingerprint=False)), q
            plain.attrs["fingerprint"] = full.attrs["fingerprint"]
            for key in ("conflicts", "conflicts_by_documents", "conflicts_one_file"):
                if key in full.attrs:
                    plain.attrs[key] = full.attrs[key]
            _identical(plain, full)


class _LoggedConnection:
    """A DuckDB connection whose ``execute`` statements are logged (the rest passes through)."""

    def __init__(self, con):
        self._con, self.log = con, []

    def execute(self, sql, *a, **k):
        self.log.append(" ".join(str(sql).split()))
        return self._con.execute(sql, *a, **k)

    def __getattr__(self, name):
        return getattr(self._con, name)


@pytest.mark.parametrize("how", ["done", "failed", "transaction"])
def test_one_thread_scan_puts_the_thread_setting_back(one_setting_store, monkeypatch, how):
    """The one-scan path reads the results in one DuckDB thread (SET threads = 1 for the scan) and puts the
    database's setting back after it: when the scan ends, when the scatter fails mid-scan, inside a transaction."""
    from harness_ext.store import pivot

    q = MatrixQuery(aliases=False)  # runs of cells are checked (pivot._is_run) from the first batch
    with Store.open(one_setting_store) as store:
        store.con.execute("SET threads = 3")
        assert _fast_taken(store, q)
        want = load_matrix(store, q)
        real = store.con
        store.con = logged = _LoggedConnection(real)
        try:
            if how == "failed":
                def boom(*a):
                    raise RuntimeError("scatter failed")
                monkeypatch.setattr(pivot, "_is_run", boom)
                with pytest.raises(RuntimeError, match="scatter failed"):
                    load_matrix(store, q)
            elif how == "transaction":
                real.execute("BEGIN TRANSACTION")
                _identical(load_matrix(store, q), want)
                real.execute("ROLLBACK")
            else:
                _identical(load_matrix(store, q), want)
        finally:
            store.con = real
        assert [s for s in logged.log if s.startswith("SET threads")] == ["SET threads = 1", "SET threads = 3"]
        assert real.execute("SELECT current_setting('threads')").fetchall()[0][0] == 3
        real.execute("RESET threads")


def test_matrix_command_fingerprints_only_what_it_writes_to_parquet(one_setting_store, tmp_path, monkeypatch):
    """``matrix`` computes the fingerprint only for a Parquet file (which keeps the attrs: a matrix read back
    from it can go to reduce()); printed or written as CSV it skips it. Analyses that write no manifest skip it,
    reduce computes it."""
    from harness_ext.cli import main
    from harness_ext.store import matrix

    asked = []
    real = matrix.load_matrix
    monkeypatch.setattr(matrix, "load_matrix",
                        lambda *a, **k: asked.append(k.get("fingerprint", True)) or real(*a, **k))
    db = str(one_setting_store)
    assert main(["matrix", "--db", db, "-o", str(tmp_path / "m.csv")]) == 0
    assert main(["matrix", "--db", db, "-o", str(tmp_path / "m.parquet")]) == 0
    assert asked == [False, True]
    back = pd.read_parquet(tmp_path / "m.parquet")
    with Store.open(one_setting_store, read_only=True) as store:
        assert back.attrs["fingerprint"] == real(store, MatrixQuery()).attrs["fingerprint"]


def test_batches_put_the_thread_setting_back_when_the_query_fails():
    """scan.batches with ``threads``: the setting goes back after the scan, and when DuckDB refuses the
    query before a batch is read."""
    import duckdb

    from harness_ext.store.scan import batches

    con = duckdb.connect()
    con.execute("SET threads = 3")
    got = list(batches(con, "SELECT range AS x FROM range(300000)", [], rows=122_880, threads=3))
    assert [len(b["x"]) for b in got] == [122_880, 122_880, 54_240]
    assert con.execute("SELECT current_setting('threads')").fetchall()[0][0] == 3
    with pytest.raises(duckdb.CatalogException):
        list(batches(con, "SELECT * FROM no_such_table", [], threads=3))
    assert con.execute("SELECT current_setting('threads')").fetchall()[0][0] == 3
    con.close()


def test_the_printed_matrix_says_what_its_scores_are(one_setting_store, capsys):
    """The CSV on stdout held chance-normalised scores (ZeroEval's 76.64 on MMLU-Redux printed as 0.6885) and the
    shape line on stderr did not say so."""
    from harness_ext.cli import main

    db = str(one_setting_store)
    assert main(["matrix", "--db", db]) == 0
    assert "; scores normalised per dataset: chance 0, best 1 (--normalise chance)" in capsys.readouterr().err
    assert main(["matrix", "--db", db, "--normalise", "none"]) == 0
    assert "; scores in each dataset's own units (--normalise none)" in capsys.readouterr().err
