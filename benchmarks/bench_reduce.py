"""Speed and peak memory of the full ``reduce`` against straightforward references, in one process.

"Full reduce" is the SimBA pipeline of ``harness-ext reduce --selector
greedy_coverage --predictor ridge`` with every SimBA similarity evaluated:
:func:`harness_ext.methods.reduction.manifest.build_manifest` (greedy coverage with
Pearson, the 1000-run RANDOM baseline, ridge with cross-validation, the
evidence against random subsets, weights, the manifest) plus
:func:`harness_ext.methods.prowl.run_prowl` with greedy coverage for the other
eight similarity measures (reusing the manifest's random baseline for their
"matched or beaten" proportions and one win-rate matrix, as ``prowl_table``
does). reduce's defaults (prediction_greedy + lowrank) do other work, with no
per-phase reference; bench_reduce_sparse.py times them. Each phase is timed
by wrapping the module functions the product calls (an inner phase call
counts for the outer phase only):

* similarity: ``methods.prowl.coverage_search.coverage_matrix`` (nine measures)
* selection: ``methods.prowl.coverage_search.greedy_coverage_order`` (nine orders)
* random baseline: ``prowl.selection.random_baseline`` (1000 runs)
* prediction/CV: ``subset_cv.subset_errors`` (ridge, 5 folds)
* evidence: ``evidence.compare_with_random`` and ``evidence.budget_curve``
  (random subsets and the budget curve under the same folds; reference = ours)
* other: the rest (win rates, nine coverage curves, weights, manifest dict)

The reference is the straightforward implementation of each phase, run in the
same process on the same matrix and checked to agree with ours:

* similarity: a double loop over column pairs calling scipy.stats /
  scipy.spatial.distance (``bench_prowl.REFERENCES``);
* selection: Algorithm 1 with a Python loop over candidates, each scored as
  ``max(cover, C[:, c]).mean()`` (timed on Pearson, counted nine times);
* random baseline: mean win rate recomputed from scratch for every prefix of
  every run (``bench_prowl.ref_curve``), then Pearson with scipy;
* prediction/CV: ``sklearn.linear_model.Ridge`` refitted per fold on the
  same folds;
* other: our own time (no speed-up claimed).

Those are naive loops, so they are the second column
(``loop_s``). The headline reference (``ref_s``) is what a user would
otherwise run with the libraries, phase by phase, in the same process:

* similarity: per measure, the library routine of bench_similarity_libs.py
  (``np.corrcoef``, ``scipy spearmanr``, ``DataFrame.corr``, sklearn, ``pdist``,
  ``wasserstein_distance`` per pair; on the matrix as it is);
* selection: Algorithm 1 vectorised over candidates in numpy (one
  ``np.maximum(cover[:, None], C).mean(0)`` per step, no lazy bounds), timed on
  Pearson, counted nine times;
* random baseline: ``scipy.stats.rankdata`` + ``pearsonr`` for every prefix of
  every run (``bench_prowl.scipy_curve``);
* prediction/CV: sklearn Ridge refitted per fold (as above);
* other: our own time.

Where running a reference in full would take longer than ``--ref-budget``
seconds per phase, it is run on a part (a subset of columns for similarities,
the first candidates for selection, a few dataset columns of the win-rate
recount) and scaled by the count of identical work units (pairs, candidate
evaluations, column recounts); such rows say "extrapolated".

Cases: real matrices built through the store (HELM Classic 30 x 14, Open LLM
Leaderboard v2 ~4,500 x 6, Pythia MMLU 838 x 57, CrossPred 108 x 176, when
../shared/data is present) and seeded low-rank synthetic matrices of
100 x 60, 1,000 x 200 and 10,000 x 1,000. The largest runs in a subprocess so
its peak memory is its own.

Targets: 100 x 60 under 2 s; 10,000 x 1,000 under 120 s and 4 GB peak.

Usage::

    python benchmarks/bench_reduce.py            # everything, 10,000 x 1,000 included (tens of minutes)
    python benchmarks/bench_reduce.py --quick    # 100 x 60, HELM/Pythia/CrossPred with fewer random runs,
                                                 # 500 x 100 in the subprocess (< ~15 s)
    python benchmarks/bench_reduce.py --case 10000x1000   # one synthetic case only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from bench_prowl import REFERENCES, ref_curve, ref_mean_win_rate  # noqa: E402

BENCH = "reduce"
PHASES = (
    ("similarity", "harness_ext.methods.prowl.coverage_search", "coverage_matrix"),
    ("selection", "harness_ext.methods.prowl.coverage_search", "greedy_coverage_order"),
    ("random baseline", "harness_ext.methods.prowl.selection", "random_baseline"),
    ("prediction/CV", "harness_ext.methods.engine.subset_cv", "subset_errors"),
    ("evidence", "harness_ext.methods.reduction.evidence", "compare_with_random"),
    ("evidence", "harness_ext.methods.reduction.evidence", "budget_curve"),
)
NAMES = ("similarity", "selection", "random baseline", "prediction/CV", "evidence", "other")
TARGETS = {"100 x 60": (2.0, None), "10,000 x 1,000": (120.0, 4096.0)}


# ----------------------------------------------------------------------------------- ours


@contextmanager
def phase_timers():
    """The product's phase functions timed (:func:`_common.phase_timers` on :data:`PHASES`).

    Yields ``(times, captured)``: seconds per phase and the last return value per phase;
    ``times["by measure"]`` holds the similarity seconds per measure.
    """
    by_measure = {}

    def on_call(label, a, kw, dt):
        if label == "similarity":
            key = kw.get("similarity", a[1] if len(a) > 1 else "?")
            by_measure[key] = by_measure.get(key, 0.0) + dt

    with C.phase_timers(PHASES, on_call=on_call) as (times, captured):
        try:
            yield times, captured
        finally:
            times["by measure"] = by_measure


def full_reduce(df, n_random: int = 1000, random_state: int = 0):
    """The full reduce; returns (total seconds, phase seconds, manifest, prowl results, baseline)."""
    from harness_ext.errors import MethodError
    from harness_ext.methods.reduction.manifest import build_manifest
    from harness_ext.methods.similarity.measures import PAPER_MEASURES
    from harness_ext.methods.prowl import run_prowl, win_rates

    results, notes = {}, []
    with phase_timers() as (times, captured):
        t0 = time.perf_counter()
        manifest = build_manifest(df, selector="greedy_coverage", predictor="ridge", similarity=PAPER_MEASURES[0],
                                  n_random=n_random, random_state=random_state)
        baseline = captured.get("random baseline")
        wr = win_rates(df.to_numpy(dtype=float))  # once for the eight, as prowl_table does
        for sim in PAPER_MEASURES[1:]:
            try:
                results[sim] = run_prowl(df, similarity=sim, random_state=random_state, n_random=0 if baseline is None else n_random,
                                         baseline=baseline, wr=wr)
            except MethodError as exc:  # e.g. Jensen-Shannon on negative scores
                notes.append(f"{sim}: {exc}")
        total = time.perf_counter() - t0
    phases = {k: v for k, v in times.items() if k != "by measure"}
    phases["other"] = max(0.0, total - sum(phases.values()))
    phases["by measure"] = times.get("by measure", {})
    return total, phases, manifest, baseline, notes


# ----------------------------------------------------------------------------------- references


def _ref_similarity_one(X, name, budget):
    """One measure: time the per-pair reference on a column subset and scale by the number of pairs."""
    d = X.shape[1]
    pairs = d * (d + 1) // 2
    q = min(d, 4)
    REFERENCES[name](X[:, :2])  # warm-up: first calls pay one-off costs that must not be scaled up
    while True:
        cols = np.arange(q)
        dt, R = C.timed(lambda: REFERENCES[name](X[:, cols]), 1)
        if dt < 0.02:
            dt = min(dt, C.timed(lambda: REFERENCES[name](X[:, cols]), 2)[0])
        done = q * (q + 1) // 2
        if q == d:
            return dt, False, cols, R
        per = dt / done
        want = int(budget / max(per, 1e-9))
        q_next = min(d, int((np.sqrt(8 * max(want, 1) + 1) - 1) / 2))
        if dt * 4 > budget or q_next <= q:
            return per * pairs, True, cols, R
        q = q_next


def ref_similarities(X, budget: float) -> dict:
    """Per measure: ``(reference seconds, extrapolated?, max |diff| vs ours on the columns compared)``."""
    from harness_ext.methods.similarity import measures as sim

    out = {}
    for name in sim.PAPER_MEASURES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            secs, ex, cols, R = _ref_similarity_one(X, name, budget / len(sim.PAPER_MEASURES))
        diff = float("nan")
        try:
            ours = sim._FUNCS[name][0](X[:, cols])
            np.fill_diagonal(R, np.diag(ours))
            # Wasserstein is normalised by the max over the columns used, so compare only on all columns.
            if name != "wasserstein" or len(cols) == X.shape[1]:
                diff = float(np.nanmax(np.abs(ours - R)))
        except Exception:  # noqa: BLE001 - a measure that cannot run here (JS on negative scores)
            pass
        out[name] = (secs, ex, diff)
    return out


def ref_greedy(C, priority, max_candidates=None):
    """Algorithm 1, one candidate at a time; returns (order, candidate evaluations done)."""
    d = C.shape[0]
    chosen = np.zeros(d, bool)
    cover = np.full(d, -np.inf)
    order, evals = [], 0
    for _ in range(d):
        best, best_val = None, -np.inf
        for c in range(d):
            if chosen[c]:
                continue
            lam = np.maximum(cover, C[:, c])
            lam[chosen] = 1.0
            lam[c] = 1.0
            val = round(float(lam.mean()), 12)
            evals += 1
            if val > best_val or (val == best_val and priority[c] < priority[best]):
                best, best_val = c, val
        chosen[best] = True
        cover = np.maximum(cover, C[:, best])
        cover[chosen] = 1.0
        order.append(best)
        if max_candidates is not None and evals >= max_candidates:
            break
    return np.array(order), evals


def ref_selection(X, budget: float, random_state: int = 0):
    """Reference greedy on the Pearson coverage matrix; seconds for nine measures, extrapolated?, orders agree?"""
    from harness_ext.methods.prowl.coverage_search import coverage_matrix, greedy_coverage_order

    d = X.shape[1]
    Cm = coverage_matrix(X, "pearson")
    priority = np.random.default_rng(random_state).permutation(d)
    total_evals = d * (d + 1) // 2
    cap = 50
    while True:
        t = time.perf_counter()
        order, evals = ref_greedy(Cm, priority, max_candidates=cap)
        dt = time.perf_counter() - t
        if evals >= total_evals or dt * 4 > budget:
            break
        cap = min(total_evals, max(cap * 2, int(cap * budget / max(dt, 1e-9) / 2)))
    ours, _ = greedy_coverage_order(Cm, priority=priority)
    agree = bool(np.array_equal(ours[: len(order)], order))
    return 9 * dt / evals * total_evals, evals < total_evals, agree


def ref_random_baseline(X, n_runs: int, budget: float, baseline=None):
    """From-scratch MWR per prefix; seconds for n_runs, extrapolated?, max |diff| on the runs compared."""
    m, d = X.shape
    # Cost unit: recounting the win rates of one dataset column (ref_mean_win_rate is a loop over models per column).
    k0 = min(d, 2)
    t = time.perf_counter()
    ref_mean_win_rate(X[:, :k0])
    unit = (time.perf_counter() - t) / k0
    per_run = unit * (d * (d + 1) // 2 + d)
    diff = float("nan")
    extrap = True
    if baseline is not None and per_run * 2 <= budget:
        runs = int(min(n_runs, max(1, budget // max(per_run, 1e-9) // 2)))
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = np.array([ref_curve(X, o) for o in baseline.orders[:runs]])
        per_run = (time.perf_counter() - t) / runs
        diff = float(np.nanmax(np.abs(ref - baseline.curves[:runs])))
        extrap = runs < n_runs
    return per_run * n_runs, extrap, diff


def lib_similarities(X, budget: float):
    """Seconds of the library routine per measure (bench_similarity_libs' table), extrapolated?; None if absent."""
    try:
        from bench_similarity_libs import REFERENCES as LIB, VECTORISED, _reference_time
    except ImportError:  # its owner renamed something: no library row rather than a wrong one
        return None
    from harness_ext.methods.similarity import measures as sim

    missing = bool(np.isnan(X).any())
    out = {}
    for name in sim.PAPER_MEASURES:
        f, ref_name = LIB[name][1 if missing else 0]
        secs, est, _ = _reference_time(f, X, budget / len(sim.PAPER_MEASURES), per_pair=ref_name not in VECTORISED)
        out[name] = (secs, est, ref_name)
    return out


def numpy_greedy(C, priority, max_steps=None):
    """Algorithm 1 as a numpy user writes it: every candidate's coverage in one product per step, no lazy bounds."""
    d = C.shape[0]
    chosen = np.zeros(d, bool)
    cover = None
    order = []
    for _ in range(d if max_steps is None else min(d, max_steps)):
        G = C if cover is None else np.maximum(cover[:, None], C)
        cand = np.round(G.mean(axis=0), 12)
        cand[chosen] = -np.inf
        ties = np.flatnonzero(cand == cand.max())
        c = int(ties[np.argmin(priority[ties])])
        chosen[c] = True
        cover = C[:, c].copy() if cover is None else np.maximum(cover, C[:, c])
        cover[chosen] = 1.0
        order.append(c)
    return np.array(order)


def lib_selection(X, budget: float, random_state: int = 0):
    """numpy greedy on the Pearson coverage matrix; seconds for nine measures, extrapolated?, orders agree?"""
    from harness_ext.methods.prowl.coverage_search import coverage_matrix, greedy_coverage_order

    d = X.shape[1]
    Cm = coverage_matrix(X, "pearson")
    priority = np.random.default_rng(random_state).permutation(d)
    steps = min(d, 8)
    while True:  # every step costs the same (d x d), so a prefix of the steps scales linearly
        t = time.perf_counter()
        order = numpy_greedy(Cm, priority, max_steps=steps)
        dt = time.perf_counter() - t
        if steps == d or dt * 4 > budget:
            break
        steps = min(d, max(steps * 2, int(steps * budget / max(dt, 1e-9) / 4)))
    ours, _ = greedy_coverage_order(Cm, priority=priority)
    return 9 * dt / steps * d, steps < d, bool(np.array_equal(ours[: len(order)], order))


def lib_random_baseline(X, n_runs: int, budget: float, baseline=None):
    """scipy rankdata + pearsonr per prefix; seconds for n_runs, extrapolated?, max |diff| on the runs compared."""
    from bench_prowl import scipy_curve

    if baseline is None:
        return float("nan"), False, float("nan")
    t = time.perf_counter()
    ref = [scipy_curve(X, baseline.orders[0])]
    per_run = time.perf_counter() - t
    runs = int(min(n_runs, max(1, budget // max(per_run, 1e-9) // 2)))
    if runs > 1:
        t = time.perf_counter()
        ref += [scipy_curve(X, o) for o in baseline.orders[1:runs]]
        per_run = (time.perf_counter() - t) / (runs - 1)
    diff = float(np.nanmax(np.abs(np.array(ref) - baseline.curves[:runs])))
    return per_run * n_runs, runs < n_runs, diff


def ref_cv(X, subset, n_splits: int, random_state: int = 0, ours=None):
    """sklearn Ridge refitted per fold on the folds cross_validated_error uses; seconds, max |diff| per-dataset RMSE."""
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold

    m, d = X.shape
    subset = np.asarray(subset)
    rest = np.setdiff1d(np.arange(d), subset)
    t = time.perf_counter()
    sq = np.zeros(d)
    cnt = np.zeros(d)
    for tr, te in KFold(n_splits=min(n_splits, m), shuffle=True, random_state=random_state).split(X):
        pred = Ridge(alpha=1.0).fit(X[tr][:, subset], X[tr][:, rest]).predict(X[te][:, subset])
        err = pred.reshape(len(te), -1) - X[te][:, rest]
        sq[rest] += (err**2).sum(0)
        cnt[rest] += len(te)
    secs = time.perf_counter() - t
    per = np.full(d, np.nan)
    per[rest] = np.sqrt(sq[rest] / cnt[rest])
    diff = float("nan") if ours is None else float(np.nanmax(np.abs(np.asarray(ours, dtype=float) - per)))
    return secs, diff


# ----------------------------------------------------------------------------------- one case


def run_case(label: str, df, n_random: int, ref_budget: float, per_measure: bool = False) -> list:
    """Time the full reduce and its references on one matrix; returns result rows."""
    from harness_ext.methods.pounce import cross_validated_error, make_predictor

    X = df.to_numpy(dtype=float)
    m, d = X.shape
    size = C.fmt_size((m, d))
    with C.PeakMemory() as mem:
        total, phases, manifest, baseline, notes = full_reduce(df, n_random=n_random)
    cols = list(map(str, df.columns))
    subset = [cols.index(s["name"]) for s in manifest["subset"]]
    n_splits = int(manifest["prediction"]["cross_validation"]["n_splits"])

    per_sim = ref_similarities(X, ref_budget)
    r_sim = sum(v[0] for v in per_sim.values())
    x_sim = any(v[1] for v in per_sim.values())
    diff_sim = np.nanmax([v[2] for v in per_sim.values()] + [0.0])
    r_sel, x_sel, agree_sel = ref_selection(X, ref_budget)
    r_rnd, x_rnd, diff_rnd = ref_random_baseline(X, n_random, ref_budget, baseline)
    ours_cv = cross_validated_error(X, subset, make_predictor("ridge"), n_splits=n_splits, random_state=0)
    r_cv, diff_cv = ref_cv(X, subset, n_splits, ours=ours_cv.per_dataset)
    loops = {"similarity": r_sim, "selection": r_sel, "random baseline": r_rnd, "prediction/CV": r_cv,
             "evidence": phases["evidence"], "other": phases["other"]}
    # Headline: what a user would run with the libraries (the loops above become the second column).
    lib_sim = lib_similarities(X, ref_budget)
    l_sel, lx_sel, lagree = lib_selection(X, ref_budget)
    l_rnd, lx_rnd, ldiff_rnd = lib_random_baseline(X, n_random, ref_budget, baseline)
    libs = {"similarity": None if lib_sim is None else sum(v[0] for v in lib_sim.values()), "selection": l_sel,
            "random baseline": l_rnd, "prediction/CV": r_cv, "evidence": phases["evidence"], "other": phases["other"]}
    lib_names = {"similarity": "library routine per measure", "selection": "numpy greedy (no lazy bounds)",
                 "random baseline": "scipy rankdata + pearsonr per prefix", "prediction/CV": "sklearn Ridge per fold",
                 "evidence": "ours", "other": "ours"}
    lib_ex = {"similarity": lib_sim is not None and any(v[1] for v in lib_sim.values()), "selection": lx_sel,
              "random baseline": lx_rnd, "prediction/CV": False, "evidence": False, "other": False}
    refs = loops
    ex = {"similarity": x_sim, "selection": x_sel, "random baseline": x_rnd, "prediction/CV": False, "evidence": False,
          "other": False}
    checks = {"similarity": f"max |diff| {diff_sim:.1e}", "selection": f"orders agree: {agree_sel}",
              "random baseline": "" if np.isnan(diff_rnd) else f"max |diff| {diff_rnd:.1e}",
              "prediction/CV": f"max |diff| {diff_cv:.1e} (cross_validated_error)", "evidence": "reference = ours",
              "other": "reference = ours"}
    ref_total = sum(refs.values())
    lib_total = None if any(v is None or not np.isfinite(v) for v in libs.values()) else sum(libs.values())
    target = TARGETS.get(size)
    met = ""
    if target:
        ok_t = total < target[0]
        ok_m = target[1] is None or mem.mb < target[1]
        met = f"target {target[0]:g} s" + (f", {target[1] / 1024:g} GB" if target[1] else "") + (
            ": met" if ok_t and ok_m else ": MISSED")
    extr = "reference extrapolated" if any(ex.values()) or any(lib_ex.values()) else ""
    rows = [C.row(BENCH, f"full reduce: {label}", size, total, lib_total, mem.mb,
                  note="; ".join(p for p in (f"{n_random} random runs", met, extr) if p), phase="total", label=label,
                  ref_kind="user", ref_name="libraries per phase", loop_s=ref_total,
                  target_met=None if not target else (total < target[0] and (target[1] is None or mem.mb < target[1])),
                  n_random=n_random, peak_own=mem.own)]
    for name in NAMES:
        lib_check = {"selection": f"numpy greedy agrees: {lagree}",
                     "random baseline": "" if np.isnan(ldiff_rnd) else f"scipy max |diff| {ldiff_rnd:.1e}"}.get(name, "")
        rows.append(C.row(BENCH, f"  {name}", size, phases[name], libs[name], None,
                          note="; ".join(p for p in ("extrapolated" if ex[name] or lib_ex[name] else "", checks[name],
                                                     lib_check) if p),
                          phase=name, label=label, ref_kind="user", ref_name=lib_names[name], loop_s=refs[name]))
        if name == "similarity" and per_measure:
            for meas, secs in phases["by measure"].items():
                r, x, diff = per_sim.get(meas, (None, False, float("nan")))
                lr, lx, lname = (lib_sim or {}).get(meas, (None, False, ""))
                rows.append(C.row(BENCH, f"    {meas}", size, secs, lr, None, phase="measure", label=label,
                                  ref_kind="user", ref_name=lname, loop_s=r,
                                  note="; ".join(p for p in ("extrapolated" if x or lx else "",
                                                             "" if np.isnan(diff) else f"max |diff| {diff:.1e}") if p)))
    for n in notes:
        rows[0]["note"] += f"; {n}"
    return rows


# ----------------------------------------------------------------------------------- driver


def parse_shape(text: str) -> tuple:
    m, d = text.lower().replace(",", "").split("x")
    return int(m), int(d)


def run_in_subprocess(shape: tuple, n_random: int, ref_budget: float) -> list:
    """Run one synthetic case in a fresh interpreter (its peak memory is its own); returns its rows."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as fh:
        path = fh.name
    try:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--case", f"{shape[0]}x{shape[1]}", "--n-random",
               str(n_random), "--ref-budget", str(ref_budget), "--no-print"]
        env = dict(os.environ, **{C.JSON_ENV: path})
        t = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise RuntimeError(f"subprocess case {shape} failed:\n{proc.stderr[-3000:]}")
        rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        if rows:
            rows[0]["note"] += f"; own process (wall incl. start-up {wall:.1f} s)"
        return rows
    finally:
        os.unlink(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="100 x 60 and HELM with 1000 random runs, Pythia/CrossPred with 100, 500 x 100 as the subprocess case")
    ap.add_argument("--case", default=None, help="run only this synthetic case (e.g. 10000x1000), in this process")
    ap.add_argument("--n-random", type=int, default=None, help="random-baseline runs (default 1000)")
    ap.add_argument("--ref-budget", type=float, default=None, help="seconds per reference phase before extrapolating")
    ap.add_argument("--no-real", action="store_true", help="skip the real matrices")
    ap.add_argument("--no-big", action="store_true", help="skip the subprocess case (10,000 x 1,000; quick 500 x 100)")
    ap.add_argument("--no-print", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    budget = args.ref_budget if args.ref_budget is not None else (0.15 if args.quick else 5.0)

    if args.case:
        shape = parse_shape(args.case)
        rows = run_case("synthetic", C.low_rank_matrix(*shape, seed=0), args.n_random or 1000, budget, per_measure=True)
        C.emit_json(rows)
        if not args.no_print:
            C.print_rows(rows)
        return 0

    all_rows = []
    many = args.n_random or (100 if args.quick else 1000)
    # The 100 x 60 target is defined with 1000 random runs, so that case always uses 1000.
    cases = [("synthetic", C.low_rank_matrix(100, 60, seed=0), args.n_random or 1000)]
    if not args.no_real:
        # Quick mode leaves out the Open LLM Leaderboard v2 matrix: building it ingests 4,574 files
        # (bench_scale --quick ingests 400 of them; full mode reduces the whole matrix).
        names = ("helm_classic", "pythia_mmlu", "crosspred") if args.quick else ("helm_classic", "open_llm_v2",
                                                                                 "pythia_mmlu", "crosspred")
        for label, df in C.real_matrices(names).items():
            cases.append((label, df, args.n_random or (1000 if df.shape[0] * df.shape[1] < 1000 else many)))
    if not args.quick:
        cases.append(("synthetic", C.low_rank_matrix(1000, 200, seed=0), many))
    print(f"full reduce (build_manifest + run_prowl for the other 8 similarities); reference budget {budget:g} s per phase")
    for label, df, n_random in cases:
        rows = run_case(label, df, n_random, budget)
        all_rows.extend(rows)
        C.print_rows(rows)
        print(flush=True)
    if not args.no_big:
        big = (500, 100) if args.quick else (10000, 1000)
        rows = run_in_subprocess(big, many, budget)
        all_rows.extend(rows)
        C.print_rows(rows)
    C.emit_json(all_rows)

    print("\ntargets:")
    for r in all_rows:
        if r.get("target_met") is not None:
            print(f"  {r['case']} {r['size']}: {r['time_s']:.2f} s, peak {r['peak_mb']:.0f} MB -> "
                  f"{'met' if r['target_met'] else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
