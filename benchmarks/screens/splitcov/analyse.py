"""Offline analysis of diag.py's per-split records: who misses, by how much, and whether the calibration varies.

    python benchmarks/screens/splitcov/analyse.py diag_crosspred.json
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter

import numpy as np
from scipy.stats import binom, spearmanr

sys.path.insert(0, __import__("pathlib").Path(__file__).resolve().parents[3].as_posix())
from harness_ext.methods.engine.conformal import conformal_quantile, cv_plus_bounds  # noqa: E402


def family(name: str) -> str:
    """A coarse family: the name's first token, lower-cased (prism-clip+7b -> prism, BLIP2-opt -> blip2)."""
    return re.split(r"[-+_ .]", name.lower())[0]


def rows(path):
    out = []
    for r in json.load(open(path)):
        u = np.array(r["usable"])
        t, lo, hi, c = (np.array(r[k]) for k in ("agg_true", "lo", "hi", "centre"))
        half = (hi - lo) / 2
        cov = (t >= lo) & (t <= hi)
        out.append(dict(r=r, u=u, t=t, lo=lo, hi=hi, c=c, half=half, cov=cov, z=(t - (lo + hi) / 2) / half))
    return out


def main(path):
    R = rows(path)
    covs = np.array([x["cov"][x["u"]].mean() for x in R])
    n_te = np.array([x["u"].sum() for x in R])
    print(f"splits {len(R)}, test models {n_te.min()}-{n_te.max()}, pooled {covs.mean():.3f}, "
          f"p05 {np.percentile(covs, 5):.3f}, sorted {np.round(np.sort(covs), 3).tolist()}")
    # calibration per split
    q = np.array([conformal_quantile(np.array(x["r"]["scores"]), 0.9) for x in R])
    n_cal = np.array([len(x["r"]["scores"]) for x in R])
    width = np.array([np.median(2 * x["half"][x["u"]]) for x in R])
    ranks = [x["r"]["rank"] for x in R]
    blends = [x["r"]["blend"] for x in R]
    print("split cov  n_cal  q90(scores)  rank blend  med_width  misses: name (family) z=miss/half frontier n_subset")
    order = np.argsort(covs)
    for i in order:
        x = R[i]
        miss = np.flatnonzero(~x["cov"] & x["u"])
        fr = np.array(x["r"]["frontier"] or [0] * len(x["u"]))
        desc = "; ".join(f"{x['r']['test'][j]} z={x['z'][j]:+.2f} fr={fr[j]:+.2f}" for j in miss)
        print(f"{x['r']['split']:5d} {covs[i]:.3f} {n_cal[i]:4d} {q[i]:8.3f} {ranks[i]:5d} {blends[i]:5.2f} "
              f"{width[i]:8.2f}   {desc}")
    print(f"spearman(cov, q90) = {spearmanr(covs, q)[0]:+.2f}; (cov, width) = {spearmanr(covs, width)[0]:+.2f}")
    # misses overall
    allmiss = Counter()
    alltest = Counter()
    for x in R:
        for j, nm in enumerate(x["r"]["test"]):
            if x["u"][j]:
                alltest[nm] += 1
                if not x["cov"][j]:
                    allmiss[nm] += 1
    print("models missed (times missed / times tested):",
          ", ".join(f"{k} {v}/{alltest[k]}" for k, v in allmiss.most_common()))
    fam_t, fam_m = Counter(), Counter()
    for nm, n in alltest.items():
        fam_t[family(nm)] += n
        fam_m[family(nm)] += allmiss.get(nm, 0)
    print("families (missed/tested):", ", ".join(f"{f} {fam_m[f]}/{fam_t[f]}" for f in sorted(fam_t, key=lambda f: -fam_m[f]) if fam_m[f]))
    # binomial check: per-model miss probability heterogeneity vs independent binomial at pooled rate
    p = covs.mean()
    n = int(np.median(n_te))
    print(f"independent binomial at p={p:.3f}, n={n}: P(split <= 17/22) = {binom.cdf(17, n, p):.3f}; "
          f"expected splits <= 17 of {len(R)}: {len(R) * binom.cdf(17, n, p):.2f}; observed {(covs * n_te <= 17.01).sum()}")
    sd_obs, sd_bin = covs.std(ddof=1), np.sqrt(p * (1 - p) / n)
    print(f"sd of per-split coverage: observed {sd_obs:.3f}, binomial {sd_bin:.3f}")
    # per-model miss rates: heterogeneity (overdispersion) across models
    rates = np.array([allmiss.get(k, 0) / v for k, v in alltest.items()])
    print(f"models tested >=1: {len(rates)}; share of all misses from the top 5 models: "
          f"{sum(v for _, v in allmiss.most_common(5)) / max(1, sum(allmiss.values())):.2f}")
    return R, covs


if __name__ == "__main__":
    main(sys.argv[1])
