"""The design part's standardised error on the sources' own frontier split (the strongest share held out from a fit on
the rest) and on the interleaved folds, against the targets': ``python frontz.py TABLE PROTOCOL FIRST LAST``."""
import sys

import numpy as np

from dump import CrossTask, qi  # noqa: F401  (dump sets the BLAS threads and the path)

table, protocol, s0, s1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
scores, models = qi.load_named(qi.ITEMS / f"{table}.parquet")
others = qi.sibling_tables(table, models)
zf, zi, zt, af, at = [], [], [], [], []
for seed in range(s0, s1):
    d = qi.draw(scores, protocol, 50, seed, others)
    est = CrossTask()
    est.fit(d["S"], d["items"], others=d["fit_o"])
    held = est._held_out_errors(d["fit_o"])
    z = held["e_a"] / held["sd_a"]
    zf.append(z[held["frontier"]]); zi.append(z[~held["frontier"]]); af.append(held["a"][held["frontier"]])
    a = est.design_.predict(d["T"][:, d["items"]], others=d["pred_o"])
    zt.append((a.estimate - d["truth"]) / a.se); at.append(a.estimate)
for name, z, a in (("frontier split", zf, af), ("interleaved", zi, None), ("targets", zt, at)):
    z = np.concatenate(z)
    print(f"{table} {protocol} {s0}-{s1} {name:15s} n {len(z):4d} rms z {np.sqrt(np.mean(z**2)):.2f} sd z {z.std():.2f} "
          f"mean z {z.mean():+.2f} cover(|z|<1.645) {np.mean(np.abs(z) < 1.645):.3f}"
          + (f" median a {np.median(np.concatenate(a)):.2f}" if a is not None else ""))
