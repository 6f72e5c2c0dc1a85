import sys, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import quality_round_trip as qrt
from harness_ext.store.db import Store
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.floor import unfloored
from harness_ext.methods.engine.frontier import frontier_distance, positions
root = qrt.bundled_data_path()
with Store.open(":memory:") as store:
    ingest_paths(store, [p for p in sorted(root.iterdir()) if p.is_dir()], show_progress=False)
    df = load_matrix(store, MatrixQuery(benchmarks=("mmlu",)))
order = df.index[np.argsort(df.mean(axis=1).to_numpy(), kind="stable")]
weak, strong = order[:len(order) // 2], order[len(order) - int(round(0.3 * len(order))):]
m = qrt._manifest(df.loc[weak], "8", 200, 0, False)
cols = [d["name"] for d in m["datasets"]]; sub = [s["name"] for s in m["subset"]]
U = unfloored(df).reindex(columns=cols)
pat = np.isin(cols, sub)
for name, M in (("unfloored normalised", U), ("floored normalised", df.reindex(columns=cols))):
    tr, te = M.loc[weak].to_numpy(float), M.loc[strong].to_numpy(float)
    d = frontier_distance(positions(te, pat), positions(tr, pat))
    print(name, "median", np.median(d).round(2), "max", d.max().round(2), "train pos sd", np.nanstd(positions(tr, pat)).round(4))
