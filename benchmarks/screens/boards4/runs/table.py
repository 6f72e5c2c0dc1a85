import json, sys
names = {"proteingym": "ProteinGym zero-shot substitutions, Spearman (protein fitness)",
         "evoeval": "EvoEval data.json (code generation)",
         "mmmu": "MMMU leaderboard_data.json (multi-discipline vision-language, sparse)",
         "parsebench": "ParseBench leaderboard.csv (document parsing / OCR)"}
print("| board (field) | shape | (a) aggMAE / aggCov (p05) / width / cellCov | (a) Ridge / SubM / ColM | (f) MAE / bias / aggCov / width / cellCov | (f) Ridge / SubM / ColM | reduce's claimed frontier MAE (real) | loop: MAE (cov) / claim |")
print("|---|---|---|---|---|---|---|---|")
for b, nm in names.items():
    r = json.load(open(f"runs/{b}.json"))[0]
    L = json.load(open(f"loop/{b}/loop_summary.json"))
    f = "f_frontier_"
    a = f"{r['a_agg_mae']:.2f} / {r['a_agg_cov']:.3f} ({r['a_agg_cov_p05']:.2f}) / {r['a_agg_width']:.1f} / {r['a_cov']:.3f}"
    ab = f"{r['a_ridge_agg_mae']:.2f} / {r['a_subset_mean_agg_mae']:.2f} / {r['a_colmeans_agg_mae']:.2f}"
    fr = (f"{r[f+'lowrank_agg_mae']:.2f} / {r[f+'lowrank_agg_bias']:+.2f} / {r[f+'lowrank_agg_cov']:.3f} / "
          f"{r[f+'lowrank_agg_width']:.1f} / {r[f+'lowrank_cell_cov']:.3f}")
    fb = (f"{r[f+'random_ridge_agg_mae']:.2f} / {r[f+'subset_mean_agg_mae']:.2f} / {r[f+'column_means_agg_mae']:.2f}")
    cl = r.get(f + "claimed_agg_mae")
    cls = f"{cl:.2f} (real {r[f+'lowrank_agg_mae']:.2f})" if cl == cl and cl is not None else "none"
    cov = f"{L['covered']}/{L['covered_of']}" if L['covered_of'] else "n/a, sparse rows"
    lp = f"{L['loop_mae']:.2f} ({cov}) / {L['claimed']}"
    print(f"| {nm} | {r['shape']} | {a} | {ab} | {fr} | {fb} | {cls} | {lp} |")
    print("   test/train:", r.get(f+"n"), "flagged", r.get(f+"flagged"), "claimed cov", r.get(f+"claimed_agg_cov"), "held", r.get(f+"claimed_held_out"), "a_ratio_ridge", round(r['a_ratio_ridge'],2), "k", r['k'], file=sys.stderr)
