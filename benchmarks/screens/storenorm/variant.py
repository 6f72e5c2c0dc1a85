"""quality_holdout.main with one fit changed per column, to find which scale choice moves the frontier figures.

    python benchmarks/screens/storenorm/variant.py VARIANT -- QUALITY_HOLDOUT_ARGS
VARIANT (comma-separated list of items, "none" for the product):
  rawunits=COL[+COL]   --fit store: those min-max (unbounded) columns normalised as raw / 100 instead of min-max over
                       the training models (still standardised by the predictor), i.e. the raw fit's units
  std=COL[+COL]        --fit store: those columns marked standardise (scale_meta), as the raw fit's detection does
  logit=COL[+COL]      --fit raw: those columns given declared bounds [0, 100] (the raw fit's logit, as the store)
Prints, per frontier split, what the instrumented predictor chose (transform kinds, the frontier blend, the stages).
"""
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))
import _holdout_store as hs  # noqa: E402
import quality_holdout as qh  # noqa: E402
from harness_ext.methods import pounce  # noqa: E402
from harness_ext.methods.engine import frontier as fr  # noqa: E402

argv = sys.argv[1:]
spec, rest = argv[0], argv[argv.index("--") + 1:]
V = {}
for item in ([] if spec == "none" else spec.split(",")):
    k, v = item.split("=")
    V[k] = v.split("+")
COLS = {}  # set by the patched loader: the matrix's columns


orig_init = hs.StoreFit.__init__


def init(self, X_train, records, clip=False):
    orig_init(self, X_train, records, clip)
    from harness_ext.methods.reduction.benchmark_score import affine_inverse
    from harness_ext.store.floor import normalised_bounds
    names = [r.get("dataset") or r.get("name") for r in records]
    changed = False
    for c in V.get("rawunits", []):
        j = names.index(c)
        assert self.params["scale"].iloc[j] == "unbounded", c
        self.params.iloc[j, self.params.columns.get_loc("lo")] = 0.0
        self.params.iloc[j, self.params.columns.get_loc("span")] = 100.0
        changed = True
    if changed:
        maps = [affine_inverse(rec) for rec in self.params.to_dict("records")]
        self.alpha, self.beta = (np.array(v, float) for v in zip(*maps))
        self.ends = normalised_bounds(self.params, clip)
    self._names = names


hs.StoreFit.__init__ = init
orig_pred = hs.StoreFit.predictor


def predictor(self, name, seed):
    est = orig_pred(self, name, seed)
    if name == "lowrank" and V.get("std"):
        sm = list(est.get_params().get("scale_meta") or [{} for _ in self._names])
        for c in V["std"]:
            sm[self._names.index(c)] = {"scale": "standardise"}
        est.set_params(scale_meta=sm)
    return est


hs.StoreFit.predictor = predictor

orig_make = pounce.make_predictor
LOGIT_META = {}


def make(name, **kw):
    est = orig_make(name, **kw)
    if name == "lowrank" and LOGIT_META.get("meta") is not None and qh.FIT == "raw":
        est.set_params(scale_meta=LOGIT_META["meta"])
    return est


pounce.make_predictor = make

orig_apply = fr.apply_frontier
LOG = []


def apply(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra=None, extra_truth=None):
    before = (out["agg"].copy(), out["agg_lo"].copy(), out["agg_hi"].copy()) if out.get("agg") is not None else None
    res = orig_apply(est, fit, fi, mz, z, X_new, O, W, w_cal, out, W_extra, extra_truth)
    if X_new.shape[0] >= 5 and W is not None:  # the split's test models, not a calibration fold
        t = getattr(est.transform_, "inner", est.transform_)
        cals = res[1] or {}
        up = cals.get(1) if isinstance(cals, dict) else None
        LOG.append(dict(kinds=t.kinds_() if hasattr(t, "kinds_") else None, cal=up, before=before,
                        after=(out["agg"].copy(), out["agg_lo"].copy(), out["agg_hi"].copy()),
                        prior=cals.get("prior") if isinstance(cals, dict) else None, dist=res[0]))
    return res


fr.apply_frontier = apply

orig_load = qh.user_matrices


def load(args):
    mats = orig_load(args)
    if V.get("logit"):
        for name, (raw, meta) in mats.items():
            cols = list(raw.columns)
            LOGIT_META["meta"] = [{"min_score": 0.0, "max_score": 100.0} if c in V["logit"] else {} for c in cols]
    return mats


qh.user_matrices = load
rc = qh.main(rest)
for i, L in enumerate(LOG):
    c = L["cal"]
    print(f"[apply {i}] kinds {L['kinds']}")
    if c is not None:
        print(f"   up-cal: cand {c.candidate} w {c.weight} q_agg {c.q_aggregate} q_agg_eng {c.q_aggregate_engine} "
              f"n {c.n_models} distinct {c.n_distinct} foldsMAE {c.aggregate_mae} pts {c.points_mae}")
    b, a = L["before"], L["after"]
    print("   agg width before frontier (raw units) median", float(np.median(b[2] - b[1])) if b else None,
          "after", float(np.median(a[2] - a[1])), "prior raised", None if L["prior"] is None else len(L["prior"].raised))
sys.exit(rc)
