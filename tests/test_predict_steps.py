"""The steps of a prediction (harness_ext.methods.reduction.predict_steps), and the named steps split out of the
new-model calibration, the store's matrix and the Python API's reduce."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction import predict_steps as P


class _Bar:
    def set_postfix_str(self, name):
        self.name = name

    def update(self):
        pass

    def close(self):
        self.closed = True


def _matrix(m=24, d=8, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(m, 2)) @ rng.normal(size=(2, d)) + rng.normal(0, 0.1, size=(m, d))
    return pd.DataFrame(1 / (1 + np.exp(-Z)), index=[f"m{i}" for i in range(m)], columns=[f"d{j}" for j in range(d)])


@pytest.fixture(scope="module")
def manifests():
    """A small reduction with the default (conformal) predictor and one with ridge."""
    import json

    from harness_ext.methods.reduction.manifest import build_manifest

    df = _matrix()
    out = {}
    for predictor in ("lowrank", "ridge"):
        doc = build_manifest(df, budget="3", predictor=predictor, n_random=10, n_random_subsets=5)
        out[predictor] = json.loads(json.dumps(doc))
    return df, out


def test_subset_warnings_refuse_a_model_without_subset_results():
    Z = np.array([[0.5, np.nan], [0.4, 0.3]])
    have, warnings = P.subset_warnings(["a", "b"], Z, ["s1", "s2"])
    assert have.tolist() == [[True, False], [True, True]]
    assert len(warnings) == 1 and warnings[0].startswith("a: no result for s2; predicted from the other 1")
    with pytest.raises(HarnessExtError, match="c: no result on any subset dataset"):
        P.subset_warnings(["b", "c"], np.array([[0.1, 0.2], [np.nan, np.nan]]), ["s1", "s2"])


def test_provenance_and_range_warnings(manifests):
    df, docs = manifests
    doc = docs["lowrank"]
    train = df
    subset = [s["name"] for s in doc["subset"]]
    idx = np.array([list(df.columns).index(n) for n in subset])
    raw_new = df.iloc[[0]].copy()
    raw_new.index = ["m0"]
    notes = P.provenance_warnings(doc, raw_new, train, raw_new.to_numpy(), subset, {("m0", subset[0]): 0})
    assert any("among the manifest's training models" in w for w in notes)
    assert any(w.startswith("m0: run with another shot count") for w in notes)
    far = np.full((1, df.shape[1]), 5.0)
    assert P.range_warnings(train, far, idx, ["x"])[0].startswith("x: mean normalised subset score 5.000 is outside")
    have, both = P.input_warnings(doc, raw_new, train, raw_new.to_numpy(), idx, {})
    assert have.all() and both == P.provenance_warnings(doc, raw_new, train, raw_new.to_numpy(), subset, {}) + \
        P.range_warnings(train, raw_new.to_numpy(), idx, raw_new.index)


def _inputs(df, doc, n_new=2):
    subset = [s["name"] for s in doc["subset"]]
    idx = np.array([list(df.columns).index(n) for n in subset])
    Z_new = np.full((n_new, df.shape[1]), np.nan)
    Z_new[:, idx] = df.to_numpy()[:n_new, idx]
    Z_new[1, idx[-1]] = np.nan  # the second model ran part of the subset
    observed = np.zeros(Z_new.shape, dtype=bool)
    observed[:, idx] = ~np.isnan(Z_new[:, idx])
    w = np.array([d["weight"] for d in doc["datasets"]])
    return idx, Z_new, observed, w


@pytest.mark.parametrize("predictor", ["lowrank", "ridge"])
def test_predict_cells_half_widths_and_table(manifests, predictor):
    df, docs = manifests
    doc = docs[predictor]
    idx, Z_new, observed, w = _inputs(df, doc)
    bar = _Bar()
    cells = P.predict_cells(doc, df, df.to_numpy(), Z_new, observed, idx, w, None, 0.9, ["a", "b"], bar)
    assert cells.conformal == (predictor == "lowrank") and cells.mean.shape == Z_new.shape
    assert (cells.p is not None) == cells.conformal and (cells.std is None or cells.std.shape == Z_new.shape)
    assert bar.name.startswith(f"fitting {predictor} on 24 models")
    items = P.anchor_item_variance(doc, cells, df.to_numpy(), Z_new, observed, idx, w, None, list(df.columns))
    assert items == (None, None, None)  # no anchor items in this manifest
    mean = np.clip(cells.mean, 0, 1)
    h_lo, h_hi, a_lo, a_hi, r_lo, r_hi = P.half_widths(doc, cells, mean, df.to_numpy(), observed, idx, w, None, 1.645,
                                                       items)
    assert h_lo.shape == Z_new.shape and (h_lo >= 0).all() and (a_lo > 0).all() and r_lo is None
    if not cells.conformal:
        assert (h_lo[observed] == 0).all() and a_lo[1] > a_lo[0]  # part of the subset: a wider aggregate
    from harness_ext.store.matrix import params_frame

    raw_new = pd.DataFrame(np.where(observed, Z_new, np.nan), index=["a", "b"], columns=df.columns)
    params = params_frame({d["name"]: d["normalisation"] for d in doc["datasets"]}, list(df.columns))
    table = P.prediction_table(raw_new, params, observed, Z_new, mean, mean - h_lo, mean + h_hi, observed)
    assert len(table) == 2 * df.shape[1] and (table["raw_lower"] <= table["raw_upper"]).all()
    assert table.loc[table["observed"], "raw"].tolist() == raw_new.to_numpy()[observed].tolist()


def test_predict_cells_names_a_refused_parameter(manifests, monkeypatch):
    """A predictor that refuses the manifest's values: a named error, and the progress bar closed."""
    import harness_ext.methods.engine.from_subset as from_subset

    df, docs = manifests
    doc = docs["ridge"]
    idx, Z_new, observed, w = _inputs(df, doc)

    def refuse(*args, **kwargs):
        raise ValueError("alpha out of range")

    monkeypatch.setattr(from_subset, "predict_new_models", refuse)
    bar = _Bar()
    with pytest.raises(HarnessExtError, match="predictor 'ridge' with the manifest's parameters .* alpha out of range"):
        P.predict_cells(doc, df, df.to_numpy(), Z_new, observed, idx, w, None, 0.9, ["a", "b"], bar)
    assert bar.closed


def test_stored_reselect_and_partial_subset_errors(manifests):
    df, docs = manifests
    from harness_ext.plugin_manager import get_registration

    doc = docs["lowrank"]
    est = get_registration("predictors", "lowrank").cls()
    reselect, why = P.stored_reselect(doc, df, est)
    assert why is None and len(reselect.labels) == 24
    _, why = P.stored_reselect(doc, df.iloc[1:], est)
    assert "not the one the manifest's fold subsets were chosen on" in why
    idx, _, observed, w = _inputs(df, docs["ridge"])
    ridge = get_registration("predictors", "ridge").cls()
    cell, agg = P.partial_subset_errors(docs["ridge"], df.to_numpy(), ridge, idx, observed[:, idx], w)
    assert cell.shape == (2, 8) and agg[0] == docs["ridge"]["prediction"]["expected_error"]["aggregate_rmse"]
    assert agg[1] != agg[0]


# -- the new-model calibration's steps (methods.engine.newmodel_intervals) ---------------------------------------
def test_calibration_folds_grid_and_score_book():
    from harness_ext.methods.engine import newmodel_intervals as N
    from harness_ext.methods.engine.completion import LowRankCompleter

    est = LowRankCompleter(random_state=0).fit(_matrix().to_numpy())
    fold, K = N._calibration_folds(est, None, 24)
    assert fold.shape == (24,) and K == int(min(est.calibration_folds, 24)) and set(fold.tolist()) == set(range(K))
    stored = N.FoldSubsets(np.arange(24) % 3, [[0], [1], [2]])
    fold, K = N._calibration_folds(est, stored, 24)
    assert K == 3 and np.array_equal(fold, np.arange(24) % 3)
    with pytest.raises(Exception, match="label 24 models, the predictor was fitted on 10"):
        N._calibration_folds(est, stored, 10)
    ranks, alphas = N._calibration_grid(est, 24, 8, K)
    assert est.rank_ in ranks and len(alphas) >= 1
    book = N._ScoreBook(ranks, alphas, 1)
    assert len(book.grid) == len(ranks) * len(alphas) and book.fits == {r: [] for r in ranks}
    w = np.full((1, 8), 1 / 8)
    test = np.flatnonzero(fold == 0)
    t = N._FoldTargets.of(est, test, w)
    assert t.Zt.shape == (8, 8) and np.allclose(t.wt.sum(2), 1.0)
    pat = np.zeros((test.size, 8), bool)
    pat[:, :3] = True
    N._score_fold(est, book, t, 0, np.flatnonzero(fold != 0), pat, pat, split_choice=False, pool=False)
    g = book.grid[0]
    assert book.cell_scores[g][0].size == 8 * 5 and len(book.fits[g[0]]) == 1 and book.sq[g] > 0
    out = N._calibration_result(est, book, 8, w)
    assert len(out) == 7 and out[2][0] == 40 and out[6]["fits"] == book.fits[out[3]]


# -- the store's matrix (store.matrix) ----------------------------------------------------------------------------
def test_matrix_steps_dense_records_scales_and_chance():
    from harness_ext.errors import StoreError
    from harness_ext.store import matrix as SM
    from harness_ext.store.matrix import MatrixQuery

    meta = pd.DataFrame({"metric": ["acc", "acc", "elo"], "dataset": ["a", "b", "c"], "task": [None, None, None],
                         "scale_kind": [None, None, None], "higher_is_better": [True, True, True],
                         "min_score": [np.nan, np.nan, np.nan], "max_score": [np.nan, np.nan, np.nan],
                         "random_baseline": [0.25, np.nan, np.nan], "baseline_source": ["file", None, None]},
                        index=["a", "b", "c"])
    X = np.array([[0.5, 0.6, 1200.0], [0.7, np.nan, 1100.0], [0.9, 0.8, 1000.0]])
    X2, index, columns, meta2, dropped = SM._dense_block(X, ["x", "y", "z"], ["a", "b", "c"], meta,
                                                         MatrixQuery(dense="models"))
    assert index == ["x", "z"] and dropped["models"] == ["y"] and dropped["observed_cells"] == 2
    with pytest.raises(StoreError, match="no complete block"):
        SM._dense_block(np.full((2, 3), np.nan), ["x", "y"], ["a", "b", "c"], meta, MatrixQuery(dense="models"))
    kinds, lo, hi = SM._scale_kinds(X, meta.index, meta["metric"].to_numpy(object), meta["scale_kind"].to_numpy(object),
                                    meta["dataset"].to_numpy(object), meta)
    assert kinds[0] == "proportion" and (lo[0], hi[0]) == (0.0, 1.0)
    params = SM.normalisation_params(X, meta)
    linear = (params["transform"] == "linear").to_numpy()
    r, sources = SM._chance_levels(meta, meta.index, meta["dataset"].to_numpy(object), meta["metric"].to_numpy(object),
                                   meta["task"].to_numpy(object), params["lo"].to_numpy(), params["span"].to_numpy(),
                                   params["flip"].to_numpy(bool), linear, ~linear & False, None)
    assert r[0] == 0.25 and sources[0] == "file" and np.array_equal(r, params["chance"].to_numpy())
    normalisation, datasets = SM._dataset_records(params, meta)
    assert normalisation[0]["chance"] == 0.25 and datasets["a"]["normalisation"] is normalisation[0]
    notes = SM._scale_notes(MatrixQuery(), pd.Index(["a", "b", "c"]), normalisation, params)
    assert set(notes) == {"no_chance", "training_dependent"}
    assert SM._scale_notes(MatrixQuery(normalise="none"), pd.Index(["a"]), normalisation[:1], params.iloc[:1]) == {
        "no_chance": [], "training_dependent": []}


# -- the Python API's reduce (methods.api) ------------------------------------------------------------------------
def test_reduce_input_takes_a_frame_or_a_store(tmp_path):
    from harness_ext.methods.api import _reduce_input

    df = _matrix().astype("float32")
    df.attrs["fingerprint"] = "f"
    out, db = _reduce_input(df, None, tmp_path / "s.duckdb")
    assert out.dtypes.eq(float).all() and out.attrs["fingerprint"] == "f" and db == str(tmp_path / "s.duckdb")
    with pytest.raises(HarnessExtError, match="not list"):
        _reduce_input([1, 2], None, None)
