"""What each fit sees on a board's frontier split: the store's normalisation of each column (fitted on the split's
training models, as --fit store does) against the raw fit's detected scale (transforms.detect_scales).

    python benchmarks/screens/storenorm/scales.py FILE
"""
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _holdout_matrices import load_user_matrices  # noqa: E402
from _holdout_frontier import frontier_splits  # noqa: E402
from quality_holdout import aggregate_scale  # noqa: E402
from _holdout_store import store_records  # noqa: E402
from harness_ext.store.matrix import normalisation_params  # noqa: E402
from harness_ext.methods.engine.transforms import detect_scales  # noqa: E402

for name, (raw, meta) in load_user_matrices(csv=[sys.argv[1]], verbose=False).items():
    X = raw.to_numpy(float)
    a, c = aggregate_scale(X, meta)
    tr, te = frontier_splits(raw, X, a, c)["frontier"]
    recs = store_records(meta)
    p = normalisation_params(X[tr], pd.DataFrame(recs))
    det = detect_scales(X[tr], meta)
    print(f"== {name}: {X.shape}, train {len(tr)} test {len(te)}")
    for j, col in enumerate(raw.columns):
        r = recs[j]
        print(f"{col:>14}: store {p['how'].iloc[j]!s:<28} lo {p['lo'].iloc[j]:8.3f} span {p['span'].iloc[j]:8.3f} "
              f"chance {p['chance'].iloc[j]:.3f} clip {bool(p['clip'].iloc[j])} | metric {r.get('metric')} "
              f"kind {r.get('scale_kind')} hib {r.get('higher_is_better')} | raw fit: {det[j]['kind']} "
              f"{det[j]['reason']} | train {np.nanmin(X[tr, j]):.2f}..{np.nanmax(X[tr, j]):.2f} "
              f"test {np.nanmin(X[te, j]):.2f}..{np.nanmax(X[te, j]):.2f} | points a {a[j]:.3f}")
