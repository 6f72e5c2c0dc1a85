"""The design part's residual variance: pooled over the cross-fitting folds (the product) against within the folds
(each fold's residuals about their own mean); targets vs the interleaved folds' held-out sources, and what the
within-fold variance would do to the design interval's standardised errors. ``python folds_var.py TABLE PROTOCOL A B``."""
import sys

import numpy as np

from dump import qi  # noqa: F401 (sets the path and threads)
from harness_ext.methods.engine import item_estimators as ie
from harness_ext.methods.engine.item_crosstask import CrossTask

LAST = {}
_orig = ie.design_interval


def _spy(est, resid, n_total, level, binary=False):
    LAST.update(resid=np.atleast_2d(resid).copy(), N=n_total)
    return _orig(est, resid, n_total, level, binary)


ie.design_interval = _spy


def ratio(resid, K=5):
    n = resid.shape[1]
    fold = np.arange(n) % K
    pooled = resid.var(axis=1, ddof=1)
    within = sum(((resid[:, fold == k] - resid[:, fold == k].mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
                 for k in range(K)) / (n - K)
    return within, pooled


table, protocol, s0, s1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
scores, models = qi.load_named(qi.ITEMS / f"{table}.parquet")
others = qi.sibling_tables(table, models)
out = {"t": [], "c": []}
for seed in range(s0, s1):
    d = qi.draw(scores, protocol, 50, seed, others)
    est = CrossTask(calibrate=False).fit(d["S"], d["items"], others=d["fit_o"])
    a = est.design_.predict(d["T"][:, d["items"]], others=d["pred_o"])
    w_, p_ = ratio(LAST["resid"])
    out["t"].append((a.estimate, d["truth"], a.se, w_, p_))
    # one interleaved fold's held-out sources (fold 0), the design part fitted on the rest
    from harness_ext.methods.engine.item_irt import model_folds
    S = d["S"]
    held = model_folds(S.shape[0], 5) == 0
    fit_o = [(o[~held], it) for o, it in d["fit_o"]]
    pred_o = [np.asarray(o, dtype=float)[held][:, it] for o, it in d["fit_o"]]
    des = type(est.design_)(level=0.9).fit(S[~held], d["items"], others=fit_o)
    ah = des.predict(S[held][:, d["items"]], others=pred_o)
    w_, p_ = ratio(LAST["resid"])
    out["c"].append((ah.estimate, S[held].mean(axis=1), ah.se, w_, p_))
for name, key in (("targets", "t"), ("held-out sources", "c")):
    a, t, se, w_, p_ = (np.concatenate(x) for x in zip(*out[key]))
    z = (a - t) / se
    z_w = (a - t) / (se * np.sqrt(np.maximum(w_, 1e-12) / np.maximum(p_, 1e-12)))
    hi = a >= 0.85
    print(f"{table} {protocol} {s0}-{s1} {name:16s} n {len(a)}: within/pooled variance median {np.median(w_ / p_):.3f} "
          f"(a>=0.85: {np.median(w_[hi] / p_[hi]) if hi.any() else np.nan:.3f}, n {hi.sum()}); rms z pooled {np.sqrt(np.mean(z**2)):.2f} "
          f"within {np.sqrt(np.mean(z_w**2)):.2f}; |z|<1.645 pooled {np.mean(np.abs(z) < 1.645):.3f} within {np.mean(np.abs(z_w) < 1.645):.3f}")
