"""Large-matrix paths: in-place normalisation, blocked column ranges and fingerprint, reduce's model sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness_ext.store.digest import fingerprint_arrays
from harness_ext.store.matrix import _column_range, apply_normalisation, fingerprint, params_frame


def _params(d, rng):
    return pd.DataFrame({"lo": rng.random(d) * 0.1, "span": 1 + rng.random(d), "flip": rng.random(d) < 0.3,
                         "chance": rng.random(d) * 0.3, "how": "x", "clip": True, "transform": "linear", "ref": 0.0})


def test_in_place_normalisation_equals_the_copy_bit_for_bit():
    rng = np.random.default_rng(0)
    X = rng.random((9_000, 7))  # more rows than one block
    X[rng.random(X.shape) < 0.2] = np.nan
    p = _params(7, rng)
    lo, span, flip, r = (p[c].to_numpy() for c in ("lo", "span", "flip", "chance"))
    Z = (X - lo) / span
    Z = np.where(flip, 1.0 - Z, Z)
    ref = np.clip(np.maximum(0.0, (Z - r) / (1.0 - r)), 0.0, 1.0)
    out = apply_normalisation(X, p)
    assert np.array_equal(out.view(np.int64), ref.view(np.int64))
    Y = X.copy()
    assert apply_normalisation(Y, p, out=Y) is Y
    assert np.array_equal(Y.view(np.int64), ref.view(np.int64))


def test_column_range_ignores_missing_and_infinite_cells():
    X = np.array([[np.nan, 1.0, np.inf], [np.nan, -2.0, 3.0], [np.nan, 5.0, -np.inf]])
    lo, hi = _column_range(X, block=2)
    assert np.isnan(lo[0]) and np.isnan(hi[0])
    assert (lo[1], hi[1], lo[2], hi[2]) == (-2.0, 5.0, 3.0, 3.0)
    lo, hi = _column_range(X, finite_only=False, block=2)
    assert (lo[0], hi[0], lo[2], hi[2]) == (np.inf, -np.inf, -np.inf, np.inf)


def test_blocked_fingerprint_is_the_whole_matrix_hash():
    import hashlib

    rng = np.random.default_rng(1)
    X = rng.random((10_000, 3))
    index, columns = [f"m{i:05d}" for i in range(len(X))], ["a", "b", "c"]
    h = hashlib.sha256()
    h.update("\x1f".join(index).encode() + b"\x1e" + "\x1f".join(columns).encode() + b"\x1e")
    h.update(np.round(X, 12).tobytes())
    assert fingerprint_arrays(X, index, columns) == h.hexdigest()
    shuffled = pd.DataFrame(X, index=index, columns=columns).iloc[::-1, ::-1]
    assert fingerprint(shuffled) == h.hexdigest()


@pytest.mark.slow
def test_reduce_selects_on_a_seeded_model_sample_and_says_so():
    from harness_ext.methods.reduction.manifest import build_manifest

    rng = np.random.default_rng(0)
    m, d = 60, 8
    X = np.clip(rng.random((m, 2)) @ rng.random((2, d)) / 2 + 0.05 * rng.standard_normal((m, d)), 0, 1)
    df = pd.DataFrame(X, index=[f"m{i:02d}" for i in range(m)], columns=[f"d{j}" for j in range(d)])
    kw = dict(budget="3", predictor="ridge", n_random=10, n_random_subsets=5)
    a = build_manifest(df, max_models=30, **kw)
    b = build_manifest(df, max_models=30, **kw)
    assert a == b
    assert a["selection"]["model_sample"]["n_models"] == 30 and a["selection"]["model_sample"]["of"] == m
    assert a["source"]["n_models"] == m and len(a["source"]["models"]) == m
    full = build_manifest(df, max_models=0, **kw)
    assert "model_sample" not in full["selection"]
    assert params_frame({c["name"]: c["normalisation"] for c in a["datasets"]}, df.columns).shape[0] == d
