import sys, numpy as np
sys.argv = ["diag.py"]
from harness_ext.methods.engine import frontier as fr
from harness_ext.methods.engine.frontier_design import min_calibration_models
print("min_calibration_models(0.9) =", min_calibration_models(0.9))
ORIG = fr._widen_thin
CALLS = []
def wt(est, out, rows, O, W, W_extra, z_agg=None):
    if out.get("ex") is not None and out["ex"].shape[0] > 1:
        before = (out["ex_lo"][:, 0].copy(), out["ex_hi"][:, 0].copy())
        ORIG(est, out, rows, O, W, W_extra, z_agg)
        CALLS.append((rows.copy(), before, (out["ex_lo"][:, 0].copy(), out["ex_hi"][:, 0].copy()), None if z_agg is None else np.asarray(z_agg)))
        return
    return ORIG(est, out, rows, O, W, W_extra, z_agg)
fr._widen_thin = wt
exec(open(str(__import__("pathlib").Path(__file__).resolve().parent / "diag.py")).read().replace("sys.argv", "['x']") if False else "")
import runpy
g = runpy.run_path(str(__import__("pathlib").Path(__file__).resolve().parent / "diag.py"), run_name="diag")
t = g["t"]
for rows, (l0, h0), (l1, h1), z in CALLS:
    print("widen_thin rows", rows.size, "z_agg", None if z is None else (np.nanmin(z), np.nanmax(z), int(np.isnan(z).sum())),
          "cover before", np.mean((l0<=t)&(t<=h0)).round(3), "after", np.mean((l1<=t)&(t<=h1)).round(3),
          "upper raised", int(np.sum(h1 > h0 + 1e-12)), "lower lowered", int(np.sum(l1 < l0 - 1e-12)))
