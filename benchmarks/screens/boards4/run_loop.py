"""The README's reduce/predict loop on one board, the 5 strongest models (by chance-normalised row mean) held out.

usage: python run_loop.py FILE STORE OUTDIR   (the store already filled by `harness-ext ingest FILE --db STORE`)
"""
import csv, glob as _g, json, os, subprocess, sys
import pandas as pd

f, store, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
env = dict(os.environ, HARNESS_EXT_NO_PROGRESS="1")
he = "harness-ext"


def run(args, log):
    p = subprocess.run([he] + args, capture_output=True, text=True, env=env)
    open(os.path.join(out, log), "w").write("$ harness-ext " + " ".join(args) + "\n" + p.stdout + p.stderr +
                                           f"\nexit {p.returncode}\n")
    return p


run(["matrix", "--db", store, "-o", os.path.join(out, "norm.csv")], "matrix_norm.log")
run(["matrix", "--db", store, "--normalise", "none", "-o", os.path.join(out, "raw.csv")], "matrix_raw.log")
norm = pd.read_csv(os.path.join(out, "norm.csv"), index_col=0)
raw = pd.read_csv(os.path.join(out, "raw.csv"), index_col=0)
# on a sparse board the strongest are ranked among the models with at least half the most-observed row's cells
obs = norm.notna().sum(axis=1)
cand = norm[obs >= 0.5 * obs.max()]
top = cand.mean(axis=1).sort_values(ascending=False).index[:5].tolist()
esc = [m.replace("[", "[[]") for m in top]
red = os.path.join(out, "reduced")
p = run(["reduce", "--db", store, "--exclude-models", *esc, "--out", red, "--no-plot"], "reduce.log")
print(p.stdout[-3000:], p.stderr[-2000:])
man = json.load(open(os.path.join(red, "manifest.json")))
subset = [s["name"] for s in man["subset"]]
rows = []
for m in top:
    fn = os.path.join(out, "new_" + "".join(c if c.isalnum() else "_" for c in m) + ".csv")
    with open(fn, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model"] + list(subset))
        w.writerow([m] + [raw.loc[m, d] for d in subset])
    jf = fn[:-4] + ".json"
    p = run(["predict", "--manifest", red, fn, "--json", jf, "--all"], os.path.basename(fn)[:-4] + ".predict.log")
    rows.append((m, jf, p.returncode))
print("held out:", top, "subset:", subset)
for r in rows:
    print(r)
# the loop's figures: predict's normalised aggregate against the held-out row's (the default matrix's row mean)
import re
claim = re.search(r"at the frontier of these models.*?mean \|error\| ([0-9.]+)", open(os.path.join(out, "reduce.log")).read())
res = []
for m, jf, rc in rows:
    J = json.load(open(jf))
    a = J["aggregate"][0]
    truth = float(norm.loc[m].mean())
    row = norm.loc[m].dropna()
    if len(row) < norm.shape[1]:
        # a row the board does not fill: compare on its own datasets (predict's aggregate spans them all)
        per = {d["dataset"]: d["score"] for d in J["datasets"]}
        pred = sum(per[d] for d in row.index) / len(row)
        res.append(dict(model=m, pred=pred, lo=None, hi=None, truth=truth, err=100 * (pred - truth), covered=None,
                        n_own=len(row)))
        continue
    res.append(dict(model=m, pred=a["normalised"], lo=a["normalised_lower"], hi=a["normalised_upper"], truth=truth,
                    err=100 * (a["normalised"] - truth), covered=a["normalised_lower"] <= truth <= a["normalised_upper"]))
mae = sum(abs(r["err"]) for r in res) / len(res)
summ = dict(held_out=top, subset=subset, loop_mae=mae, loop_bias=sum(r["err"] for r in res) / len(res),
            covered=sum(bool(r["covered"]) for r in res), covered_of=sum(r["covered"] is not None for r in res), claimed=float(claim.group(1)) if claim else None, rows=res)
json.dump(summ, open(os.path.join(out, "loop_summary.json"), "w"), indent=1)
print(f"loop MAE {mae:.2f} (covered {summ['covered']}/{summ['covered_of']}), bias {summ['loop_bias']:+.2f}; reduce claimed {summ['claimed']}")
