"""Every similarity measure of measures._FUNCS but Jaccard and Hamming (0/1 matrices only) on two shared matrices
(HELM Classic 67 x 14 with 17% of its cells missing: the masked kernels; Open LLM v2 4,574 x 6, complete), saved to
compare across checkouts byte for byte.

usage: python measures_dump.py OUT.npz REPO   (REPO: the checkout whose benchmarks/_holdout_matrices.py loads them)
"""
import sys
import numpy as np
import harness_ext
from harness_ext.methods.similarity import measures as S
sys.path.insert(0, sys.argv[2] + "/benchmarks")
from _holdout_matrices import load_matrices
print(harness_ext.__file__, file=sys.stderr)
mats = load_matrices(["helm_classic", "open_llm_v2"], verbose=False)
out = {}
for name, m in mats.items():
    X = (m[0] if isinstance(m, tuple) else m)
    X = X.to_numpy(dtype=float) if hasattr(X, "to_numpy") else np.asarray(X, dtype=float)
    print(name, X.shape, np.isnan(X).mean(), file=sys.stderr)
    for k, (fn, *_rest) in S._FUNCS.items():
        if k in ("jaccard", "hamming"):
            continue
        out[f"{name}:{k}"] = fn(X)
np.savez(sys.argv[1], **out)
