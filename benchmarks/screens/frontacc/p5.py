"""P5: synthetic near-chance population, fit on the weakest 150, predict the strongest 100 (frontier on)."""
import sys
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3] / "tests")); sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import screen
from test_acc_interval_union import _near_chance
from harness_ext.methods.engine.completion import LowRankCompleter
cand = sys.argv[1] if len(sys.argv) > 1 else None
screen.apply(cand)
d = 16
w = np.full(d, 1 / d)
u = np.arange(1, d + 1, dtype=float); u = 0.75 * u / u.sum()
covs, widths, biases = [], [], []
for seed in (1, 2, 3, 4):
    T, X = _near_chance(seed, m=150, n=300, d=d)
    order = np.argsort(T @ u, kind="stable")
    train, strong = order[:150], order[-100:]
    new = T[strong].copy(); new[:, 5:] = np.nan
    est = LowRankCompleter(random_state=0).fit(T[train])
    p = est.predict_new_models(new, weights=w, extra_weights=u[None, :], extra_truth=T[train])
    truth = T[strong] @ u
    lo, hi = p.extra_lower[:, 0], p.extra_upper[:, 0]
    covs.append(float(((lo <= truth) & (truth <= hi)).mean())); widths.append(float((hi - lo).mean()))
    biases.append(float((p.extra_aggregate[:, 0] - truth).mean()))
print(cand, "cover", np.round(covs, 3), "mean", round(float(np.mean(covs)), 3), "width", round(float(np.mean(widths)), 4),
      "bias", round(float(np.mean(biases)), 4))
screen.report()
