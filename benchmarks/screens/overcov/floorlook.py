"""The design part's interval by the target's score band and whether the 0/1 variance floor set its standard error:
``python floorlook.py N X.pkl [...]`` (``N`` the task's items; ``dump.py`` pickles)."""
import sys

import numpy as np

from look import load

N = int(sys.argv[1])
n = 50
p0 = 2 / (n + 4)
se_floor = np.sqrt((1 - n / N) * p0 * (1 - p0) / n)
for path in sys.argv[2:]:
    d, cal, _ = load(path)
    t, a, s = d["truth"], d["a"], d["se_a"]
    fl = np.isclose(s, se_floor, rtol=1e-6)
    flc = np.isclose(cal["sd_a"], se_floor, rtol=1e-6)
    z = (a - t) / s
    dc = (d["al"] <= t) & (t <= d["au"])
    c = (d["lo"] <= t) & (t <= d["hi"])
    print(f"{path}: floor active targets {fl.mean():.3f} calibration sources {flc.mean():.3f}")
    for name, g in (("floor", fl), ("no floor", ~fl), ("a>=0.9", a >= 0.9), ("0.8<=a<0.9", (a >= 0.8) & (a < 0.9)),
                    ("a<0.8", a < 0.8)):
        if g.sum():
            print(f"  {name:11s} {g.sum():4d} design cover {dc[g].mean():.3f} composite {c[g].mean():.3f} sd z {z[g].std():.2f} "
                  f"rms z {np.sqrt(np.mean(z[g]**2)):.2f} mean z {z[g].mean():+.2f} median se {np.median(s[g])*100:.2f} "
                  f"rms err {np.sqrt(np.mean((a[g]-t[g])**2))*100:.2f}")
