"""Held-out quality of item-level estimators on the shared per-item tables (BenchPred's protocol).

Run::

    python benchmarks/quality_items.py                 # every table, 50 and 100 items, 20 seeds
    python benchmarks/quality_items.py --quick         # two tables, 50 items, 3 seeds
    python benchmarks/quality_items.py --items 50 --seeds 10 --designs stratified stratified:proportional irt-anchors
                                                       # item designs besides random items (design/estimator)
    python benchmarks/quality_items.py --protocols interpolation --source-fractions 0.25 0.5 1
                                                       # the error against the population's size
    python benchmarks/quality_items.py --protocols benchmark-frontier --items 50 --seeds 10
                                                       # the targets the strongest on the whole benchmark
    python benchmarks/quality_items.py --store my.duckdb --benchmark NAME --items 20
                                                       # the item data you ingested into a store

Data: ``../shared/data/items/<source>/<task>.parquet`` (long tables ``model, item, score`` of real 0/1
correctness; HELM Lite 83 models, Open LLM Leaderboard v2 428-429 models). ``--items-dir DIR`` reads
``DIR/<source>/<task>.parquet`` or ``.csv`` instead (columns named as ``ingest`` reads them; gaps made whole as
``reduce --items`` makes them, with counts printed): ``tests/fixtures/items_unseen`` holds real tables the
estimators' constants were not chosen on (EvalPlus HumanEval+ and MBPP+). On a table with scores other than 0 and
1 the estimators built on the 2PL model are left out, with a note.

``--store DB [--benchmark NAME[,NAME...]] [--metric M]`` measures the item tables of a store filled with ``harness-ext
ingest`` (lm-eval ``samples_*.jsonl`` logs, HELM runs, Every Eval Ever instance files, Inspect logs, item tables with a
sidecar; :mod:`_items_store`): one table per benchmark and task, ``benchmark/task``, the tasks of a benchmark each
other's siblings, the per-item metric picked and the populations read as ``reduce --items`` picks and reads them (the
same functions, the same notes). The store lists a task's models by name, ``--items-dir`` in a file's order: the
interpolation split draws its targets by position, so the two give the same figures on the same tables when the files
list their models by name (the extrapolation protocols rank the models by their means, so they agree unless two models
tie at a cut). A protocol that holds out no model or fits on fewer than 2 (fewer than 4 models) is skipped with a note.

Protocol (Zhang, Dorner and Hardt 2025, §5; their ``main.py``): for each seed,

* interpolation: 25% of the models, drawn at random, are the targets, the rest the sources;
* extrapolation: the sources are the weakest 50% of models by their mean over all items, the targets
  the strongest 30%;
* benchmark-frontier (not in the paper; off by default): as extrapolation, but the models are ranked by their
  mean over the benchmark's tasks (every table of the folder, each task's mean weighted equally, a model
  ranked on the tasks it has), so the sources and targets are the same models on every task of the benchmark:
  a user's new checkpoint, strongest on the whole benchmark, is not always strongest on each task;

``n`` items are drawn uniformly (``RandomState(seed).permutation(N)[:n]``, the authors' draw) or chosen
by the method (anchor points); each estimator is fitted on the sources' answers to every item and
predicts each target's mean over all items from its answers to the chosen ones. Reported per table,
protocol, ``n`` and estimator: mean |error| in points (x100) with its standard error over seeds, 90%
interval coverage over targets x seeds with its standard error over seeds (a seed's targets share its
items, so seeds are the independent units: with 20 seeds it is 0.01-0.03, as wide as the 0.88-0.92
band) and clustered two ways, by seed and by held-out model (the extrapolation protocol holds out the same
strongest models in every seed, so only the second says how far the rate may be from the rate for other models
that strong; Cameron, Gelbach and Miller 2011), and the median interval width in points. Baselines from the
paper, re-implemented: random sampling (``sample_mean``), random sampling + learn (``random_learn``),
AIPW as the authors compute it (``aipw_paper``) and anchor points (``anchor_weighted``). The IRT family
of tinyBenchmarks (``irt``, ``pirt``, ``gpirt``) and AIPW with an IRT working model (``aipw_irt``; across
the benchmark's tasks, ``aipw_crosstask``, which also sees each target's sampled items of the other tasks
in the same folder, rows matched by model name) run in the same loop, and so do the estimators of
``item_crosstask`` that borrow across the benchmark's tasks (``crosstask``, the default of ``reduce --items``;
its parts ``random_learn_crosstask`` and ``aipw_difficulty``). Every estimator that uses other tasks gets
each target's answers to ``n`` random items of every other task of the same folder (drawn with their own
seeds, the same sources and targets): what a new model running ``n`` items per task of the benchmark
has. The paper's baselines stay per task, as published; ``random_learn_crosstask`` (random sampling +
learn with the other tasks' sample means as features) is the fair cross-task baseline and gets its own
ratio column. A closing table gives each estimator's error over the best baseline's, over
``aipw_paper``'s and over ``random_learn_crosstask``'s, per table and averaged.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# The IRT fits are many small matrix products: one BLAS thread each is faster than contended threads on a
# shared machine (set before numpy is imported; an explicit setting wins).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import SHARED_DATA  # noqa: E402
from _items_store import StoreTables  # noqa: E402

ITEMS = SHARED_DATA / "items"
QUICK_TABLES = ("helm_lite/gsm", "open_llm_v2/musr")


def load_table(path: Path, models=None) -> np.ndarray:
    """Models x items matrix of a long ``model, item, score`` table, models in file order.

    With ``models``, the rows follow that list instead, NaN for a model the table lacks.
    """
    return load_named(path, models)[0]


def read_long(path: Path):
    """A long item table (Parquet or CSV) as a frame ``model, item, score`` and the notes on what was changed.

    Its columns are found by the names ``ingest`` reads (``model``/``model_name``/``model_id``, ``item``/``doc_id``/...,
    ``score``/``correct``/...); a model's second score for the same item is dropped, the first kept, as ``reduce``
    keeps the first stored.
    """
    import pandas as pd

    from harness_ext.store.item_format import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS

    df = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    cols = {}
    for role, names in (("model", MODEL_COLUMNS), ("item", ITEM_COLUMNS), ("score", SCORE_COLUMNS)):
        found = next((c for c in names if c in df.columns), None)
        if found is None:
            raise SystemExit(f"{path}: no {role} column (one of {', '.join(names)}) among {', '.join(map(str, df.columns))}")
        cols[found] = role
    for extra in ("task", "metric", "benchmark"):  # one table is one task's one metric: more would merge them
        if extra in df.columns and df[extra].nunique() > 1:
            raise SystemExit(f"{path}: its {extra} column names {df[extra].nunique()} {extra}s; a table here holds one "
                             f"task's scores under one metric: ingest it with harness-ext ingest and measure the store "
                             f"(--store DB), or write one file per task")
    df = df[list(cols)].rename(columns=cols)
    df["score"] = pd.to_numeric(df["score"], errors="coerce")
    notes = []
    blank = int(df["score"].isna().sum())
    if blank:
        notes.append(f"{blank:,} rows without a numeric score left out")
        df = df[df["score"].notna()]
    twice = df.duplicated(["model", "item"])
    if twice.any():
        notes.append(f"{int(twice.sum()):,} second scores of a model for the same item left out (the first kept)")
        df = df[~twice]
    return df, notes


def load_named(path: Path, models=None, notes=None):
    """``(matrix, models)``: :func:`load_table` with the row names.

    Gaps (a model without a score for an item) are made whole as ``reduce --items`` makes them
    (:func:`~harness_ext.methods.reduction.item_reduce.fill_item_gaps`: a model missing more than half of the items
    left out, the rest filled with the item's mean); what was changed is appended to ``notes``.
    """
    import pandas as pd

    from harness_ext.methods.reduction.item_others import align_rows
    from harness_ext.methods.reduction.item_reduce import fill_item_gaps

    df, changed = read_long(path)
    own = list(pd.unique(df["model"]))
    wide = df.pivot(index="model", columns="item", values="score").reindex(own)
    M, own, filled = fill_item_gaps(wide.to_numpy(dtype=float), own)
    if notes is not None:
        notes += changed + filled
    if models is None:
        return M, own
    return align_rows(M, own, list(models)), list(models)


def table_paths(folder: Path) -> list:
    """The item tables of a folder of benchmarks, ``source/task`` without the suffix: Parquet or CSV."""
    return sorted(str(p.relative_to(folder).with_suffix("")) for p in folder.glob("*/*")
                  if p.suffix in (".parquet", ".csv") and p.is_file())


def items_root(path: Path) -> tuple:
    """``(folder, tables)`` that ``--items-dir PATH`` names: a folder of benchmark folders (tables None: all of
    them), a benchmark's folder of tables (read as that one benchmark) or one table (measured with the other tables
    of its folder as its benchmark's other tasks); a note says which. Anything else is refused saying why."""
    path = Path(path).resolve()
    if path.is_file():
        if path.suffix not in (".parquet", ".csv"):
            raise SystemExit(f"quality_items: --items-dir {path}: not an item table (.parquet or .csv); other item "
                             "data (lm-eval samples_*.jsonl logs, HELM runs, wide tables with a sidecar...) goes "
                             "through the store: harness-ext ingest PATH --db my.duckdb, then --store my.duckdb")
        table = f"{path.parent.name}/{path.stem}"
        others = [t for t in table_paths(path.parent.parent) if Path(t).parent.name == path.parent.name]
        print(f"note: --items-dir names one table: measuring {table}, with the {len(others) - 1} other tables of "
              "its folder as its benchmark's other tasks", flush=True)
        return path.parent.parent, [table]
    nested = table_paths(path) if path.is_dir() else []
    flat = [p for p in sorted(path.glob("*")) if p.suffix in (".parquet", ".csv") and p.is_file()]
    if nested:
        if flat:
            print(f"note: --items-dir {path}: {len(flat)} tables directly in it not read (a benchmark's tables go in "
                  f"a folder of their own, {path}/<benchmark>/<task>.parquet)", flush=True)
        return path, None
    if flat:
        print(f"note: --items-dir {path} holds its tables directly: read as one benchmark, {path.name} "
              f"({len(flat)} tables)", flush=True)
        return path.parent, [t for t in table_paths(path.parent) if Path(t).parent.name == path.name]
    raise SystemExit(f"quality_items: --items-dir {path}: no item tables there (expected "
                     f"{path}/<benchmark>/<task>.parquet or .csv)" if path.is_dir() else
                     f"quality_items: --items-dir {path}: no such folder")


def table_file(table: str) -> Path:
    """The file of a ``source/task`` table: its Parquet, else its CSV."""
    p = ITEMS / f"{table}.parquet"
    return p if p.exists() else ITEMS / f"{table}.csv"


def sibling_tables(table: str, models) -> list:
    """The other tasks of ``table``'s benchmark (same folder), rows aligned to ``models``."""
    return [load_table(table_file(t), models) for t in table_paths(ITEMS)
            if Path(t).parent == Path(table).parent and t != table]


def benchmark_strength(scores: np.ndarray, others=()) -> np.ndarray:
    """Each model's mean over the benchmark's tasks: the mean of its per-task means (``scores`` and ``others``,
    rows aligned), every task weighted equally, over the tasks the model has (the ``benchmark-frontier`` order).

    A model with no answer on any task gets NaN (:func:`split` ranks it weakest, so never a target).
    """
    from harness_ext.methods.engine.item_agreement import row_means

    return row_means(np.column_stack([row_means(t) for t in (scores, *others)]))


def load_task(table: str) -> tuple:
    """``(scores, models, others, strength)`` of a shared item table (``source/task``): its answers, the models, the
    benchmark's other tasks on the same rows and each model's benchmark strength (what the screens' scripts read)."""
    scores, models = load_named(table_file(table))
    others = sibling_tables(table, models)
    return scores, models, others, benchmark_strength(scores, others)


def split(scores: np.ndarray, protocol: str, seed: int, source_fraction: float = 1.0, strength=None):
    """``(sources, targets)`` model indices of one seed, as the authors' ``main.py`` draws them.

    ``source_fraction`` < 1 keeps that share of the sources (at least 20, drawn with the seed; the targets are
    unchanged): how the error falls as the population grows (``--source-fractions``). ``benchmark-frontier``
    ranks by ``strength`` (:func:`benchmark_strength`, required) instead of this task's mean.
    """
    m = scores.shape[0]
    if protocol == "interpolation":
        targets = np.random.RandomState(seed).permutation(m)[: int(0.25 * m)]
        sources = np.setdiff1d(np.arange(m), targets)
    elif protocol == "benchmark-frontier":
        if strength is None:
            raise ValueError("the benchmark-frontier protocol needs each model's mean over the benchmark's tasks")
        # NaN strength (no answers at all; not in a table's own models) ranks weakest, never a target.
        key = np.where(np.isnan(strength), -np.inf, strength)
        order = np.argsort(key, kind="stable")
        sources, targets = order[: int(0.5 * m)], order[m - int(0.3 * m):]
    else:
        order = np.argsort(scores.mean(axis=1), kind="stable")
        sources, targets = order[: int(0.5 * m)], order[m - int(0.3 * m):]
    if source_fraction < 1:
        keep = max(20, int(source_fraction * len(sources)))
        sources = np.sort(np.random.RandomState(100 + seed).permutation(sources)[:keep])
    return sources, targets


def estimator_table() -> dict:
    """Every item estimator: the single-task ones and those that borrow across a benchmark's tasks."""
    from harness_ext.methods.engine import item_crosstask, item_estimators, item_irt_estimators

    return {**item_estimators.ESTIMATORS, **item_irt_estimators.ESTIMATORS, **item_crosstask.ESTIMATORS}


def run_design(scores, protocol, n_items, seed, design: str, source_fraction: float = 1.0, strength=None) -> dict:
    """One seed of an item design other than simple random sampling (``--designs``): the items drawn on the
    sources' answers alone, each of the design's estimators fitted for it; labels ``design/estimator``.

    ``design``: ``stratified`` (Neyman allocation), ``stratified:proportional``, ``irt-anchors``.
    """
    from harness_ext.methods.engine.item_designs import DESIGN_DEFAULT_ESTIMATORS, DESIGN_ESTIMATORS, design_estimator, \
        draw_design

    sources, targets = split(scores, protocol, seed, source_fraction, strength)
    S, T = scores[sources], scores[targets]
    truth = T.mean(axis=1)
    base, _, allocation = design.partition(":")
    items, info = draw_design(base, S, n_items, seed, allocation=allocation or "neyman")
    out = {}
    for name in DESIGN_DEFAULT_ESTIMATORS[base]:
        res = design_estimator(base, DESIGN_ESTIMATORS[name], 0.9, info, S, items).predict(T[:, items])
        cover = (res.lower <= truth) & (truth <= res.upper)
        out[f"{design}/{name}"] = (np.abs(res.estimate - truth) * 100, cover, res.width * 100)
    return out


def draw(scores, protocol, n_items, seed, others=(), source_fraction: float = 1.0, strength=None) -> dict:
    """One draw as :func:`run_one` makes it: the split's ``sources`` and ``targets``, their scores ``S`` and ``T``,
    the targets' ``truth``, this task's random ``items`` and, for estimators reading the other tasks, ``fit_o`` and
    ``pred_o`` (the other tasks' samples, drawn independently of this task's, with their own seeds)."""
    from harness_ext.methods.engine.item_estimators import random_items

    sources, targets = split(scores, protocol, seed, source_fraction, strength)
    other_items = [random_items(o.shape[1], n_items, 10_000 * (k + 1) + seed) for k, o in enumerate(others)]
    return {"sources": sources, "targets": targets, "S": scores[sources], "T": scores[targets],
            "truth": scores[targets].mean(axis=1), "items": random_items(scores.shape[1], n_items, seed),
            "fit_o": [(o[sources], it) for o, it in zip(others, other_items)],
            "pred_o": [o[targets][:, it] for o, it in zip(others, other_items)]}


def run_one(scores, protocol, n_items, seed, names, others=(), designs=(), source_fraction: float = 1.0,
            strength=None):
    from harness_ext.base import limit_threads

    ESTIMATORS = estimator_table()
    d = draw(scores, protocol, n_items, seed, others, source_fraction, strength)
    S, T, truth, fit_o, pred_o = d["S"], d["T"], d["truth"], d["fit_o"], d["pred_o"]
    out = {}
    for name in names:
        est = ESTIMATORS[name]()
        items = est.select(S, n_items, seed) if hasattr(est, "select") else d["items"]
        # One BLAS thread, as reduce --items and predict run the estimators (item_others.fit_predict): the
        # figures are the product's, and two threads spinning on a busy machine made seeds several times slower.
        with limit_threads():
            if getattr(est, "uses_other_tasks", False):
                res = est.fit(S, items, others=fit_o).predict(T[:, items], others=pred_o)
            else:
                res = est.fit(S, items).predict(T[:, items])
        err = np.abs(res.estimate - truth) * 100
        cover = (res.lower <= truth) & (truth <= res.upper)
        out[name] = (err, np.where(np.isnan(res.lower), np.nan, cover), res.width * 100)
    for design in designs:
        out.update(run_design(scores, protocol, n_items, seed, design, source_fraction, strength))
    return out


BASELINES = ("sample_mean", "random_learn", "aipw_paper", "anchor_weighted")


#: The cross-task counterpart of random sampling + learn: the fair baseline for estimators that see the
#: other tasks' samples (reported next to the paper's baselines, not among them).
CROSS_BASELINE = "random_learn_crosstask"


def summarise(rows: list) -> None:
    """Each estimator's mean |error| over the best baseline's, over the paper's AIPW and over the cross-task
    random sampling + learn, per table and on average."""
    from collections import defaultdict

    by = defaultdict(dict)
    for t, protocol, n, k, mae, cov in rows:
        by[(t, protocol, n)][k] = (mae, cov)
    print("\nratios: table | protocol | n | estimator | mean |err| | / best baseline (which) | / aipw_paper | "
          f"/ {CROSS_BASELINE} | 90% coverage")
    avg = defaultdict(list)
    for (t, protocol, n), d in by.items():
        base = {k: d[k][0] for k in BASELINES if k in d}
        if not base:
            continue
        best = min(base, key=base.get)
        if not base[best] > 0:  # a task every model scores alike: the baselines are exact, a ratio 0/0
            print(f"note: {t} | {protocol} | {n}: {best} errs 0 (every population model scores the task alike); "
                  "no ratios, and the table is left out of the averages below")
            continue
        for k, (mae, cov) in d.items():
            r_best = mae / base[best]
            r_aipw = _ratio(mae, d["aipw_paper"][0]) if "aipw_paper" in d else np.nan
            r_ct = _ratio(mae, d[CROSS_BASELINE][0]) if CROSS_BASELINE in d else np.nan
            avg[(protocol, n, k)].append((r_best, r_aipw, r_ct, cov))
            print(f"{t} | {protocol} | {n} | {k} | {mae:.2f} | {r_best:.3f} ({best}) | {r_aipw:.3f} | {r_ct:.3f} | {cov}")
    print("\naverage over tables: protocol | n | estimator | / best baseline | / aipw_paper | "
          f"/ {CROSS_BASELINE} | worst / best baseline | coverage range")
    for (protocol, n, k), v in avg.items():
        a = np.array([(x, y, z) for x, y, z, _ in v])
        covs = [float(c) for *_, c in v if c != "n/a"]
        rng = f"{min(covs):.3f}-{max(covs):.3f}" if covs else "n/a"
        mean = [_finite_mean(a[:, j]) for j in range(3)]
        print(f"{protocol} | {n} | {k} | {mean[0]:.3f} | {mean[1]:.3f} | {mean[2]:.3f} | {a[:, 0].max():.3f} | {rng}")


def _ratio(a: float, b: float) -> float:
    """``a / b``, NaN where ``b`` is 0 (an estimator exact on every draw) rather than numpy's warning and inf."""
    return a / b if b > 0 else np.nan


def _finite_mean(x: np.ndarray) -> float:
    """The mean of the finite values of ``x`` (NaN where there are none): a ratio undefined on one table does not
    make the average over tables NaN."""
    x = x[np.isfinite(x)]
    return float(x.mean()) if len(x) else np.nan


def _cluster_variance(dev: np.ndarray, ids: np.ndarray) -> float:
    """The cluster-robust variance of a mean of ``dev``'s values' (deviations from it) with ``ids`` as clusters."""
    u, inv = np.unique(ids, return_inverse=True)
    if len(u) < 2:
        return float("nan")
    sums = np.bincount(inv, weights=dev, minlength=len(u))
    return len(u) / (len(u) - 1) * float((sums ** 2).sum()) / len(dev) ** 2


def _two_way_se(cover: np.ndarray, seeds: np.ndarray, models: np.ndarray) -> float:
    """The standard error of a coverage rate clustered two ways, by seed (a seed's targets share its items) and by
    held-out model (the extrapolation protocol holds out the same strongest models in every seed, so the seeds'
    spread alone only measures the item draws): ``V_seeds + V_models - V_cells`` (Cameron, Gelbach and Miller
    2011, eq. 2.11), at least the larger one-way variance."""
    ok = ~np.isnan(cover)
    cover, seeds, models = cover[ok].astype(float), seeds[ok], models[ok]
    if len(cover) < 2:
        return float("nan")
    dev = cover - cover.mean()
    v_s, v_m = _cluster_variance(dev, seeds), _cluster_variance(dev, models)
    v = v_s + v_m - _cluster_variance(dev, np.arange(len(dev)))
    return float(np.sqrt(max(v, v_s, v_m)))


PER_DRAW_FIELDS = ("table", "protocol", "items", "design", "seed", "estimator", "mean_abs_err_pts", "coverage",
                   "median_width_pts", "n_targets")


def draw_row(t, label, n, seed, key, err, cover, width) -> dict:
    """One draw's ``--per-draw`` row: its mean |error| in points over the seed's targets, the share of them its 90%
    interval covers and its median width in points (empty where the estimator gives no interval). The design is
    the part of ``key`` before ``/`` (``random`` for simple random sampling)."""
    design, _, name = key.rpartition("/")
    cover = np.asarray(cover, dtype=float)
    width = np.asarray(width, dtype=float)
    return {"table": t, "protocol": label, "items": n, "design": design or "random", "seed": seed,
            "estimator": name, "mean_abs_err_pts": f"{float(np.mean(err)):.6f}",
            "coverage": "" if np.isnan(cover).all() else f"{float(np.nanmean(cover)):.6f}",
            "median_width_pts": "" if np.isnan(width).all() else f"{float(np.nanmedian(width)):.6f}",
            "n_targets": len(err)}


def write_per_draw(path: Path, draws: list) -> None:
    """Write the ``--per-draw`` rows to ``path`` whole: to a temporary file beside it, then renamed, so an
    interrupted run leaves no half-written table."""
    import csv

    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=PER_DRAW_FIELDS)
        w.writeheader()
        w.writerows(draws)
    os.replace(tmp, path)


def measure(scores, others, t, protocol, label, n, seeds, args, frac, strength=None) -> list:
    """One table, protocol, item count and source share over ``seeds``: prints a line per estimator, returns the
    rows :func:`summarise` reads (the protocol as ``label``)."""
    acc, rows, who = {}, [], []
    draws = getattr(args, "draws", None)  # --per-draw: one row per seed and estimator, nothing printed changes
    for seed in seeds:
        who.append(split(scores, protocol, seed, frac, strength)[1])  # the seed's targets, as run_one draws them
        for k, (e, c, w) in run_one(scores, protocol, n, seed, args.estimators, others, args.designs, frac,
                                    strength).items():
            if draws is not None:
                draws.append(draw_row(t, label, n, seed, k, e, c, w))
            acc.setdefault(k, ([], [], []))
            acc[k][0].append(e.mean())
            acc[k][1].append(c)
            acc[k][2].append(w)
    models = np.concatenate(who)
    seed_of = np.concatenate([np.full(len(w), i) for i, w in enumerate(who)])
    for k, (means, covs, widths) in acc.items():
        m = np.asarray(means)
        cov = np.concatenate(covs)
        cov_s = "n/a" if np.isnan(cov).all() else f"{np.nanmean(cov):.3f}"
        per_seed = [np.nanmean(c) for c in covs] if cov_s != "n/a" else [np.nan]
        cov_se = "n/a" if cov_s == "n/a" else _seed_se(per_seed, 3)
        two_way = "n/a" if cov_s == "n/a" or len(covs) < 2 else f"{_two_way_se(cov, seed_of, models):.3f}"
        wid = np.concatenate(widths)
        wid_s = "n/a" if np.isnan(wid).all() else f"{np.nanmedian(wid):.2f}"
        print(f"{t} | {label} | {n} | {k} | {m.mean():.2f} | {_seed_se(m, 2)} | "
              f"{cov_s} | {cov_se} | {two_way} | {wid_s}", flush=True)
        rows.append((t, label, n, k, m.mean(), cov_s))
    return rows


def _seed_se(values, digits: int) -> str:
    """The standard error of a mean over seeds, formatted; "n/a" from one seed (no spread to read it from)."""
    v = np.asarray(values, dtype=float)
    return "n/a" if len(v) < 2 else f"{v.std(ddof=1) / np.sqrt(len(v)):.{digits}f}"


#: The item designs built on the 2PL model (they need 0/1 scores, as the estimators marked ``requires_binary``).
BINARY_DESIGNS = ("irt-anchors",)


def usable(scores: np.ndarray, table: str, names: list, designs: list, others=()) -> tuple:
    """``(estimators, designs)`` that can run on ``scores``: those built on the 2PL model left out, with a note,
    when a score is neither 0 nor 1 (a graded metric: F1, BLEU, partial credit); a 2PL estimator that reads the
    benchmark's other tasks (``aipw_crosstask``) also when one of ``others`` (the sibling tables) is graded."""
    from harness_ext.methods.engine.item_estimators import _is_binary

    def binary(M):
        return _is_binary(M[np.isfinite(M)])

    table_ = estimator_table()
    two_pl = [k for k in names if getattr(table_[k], "requires_binary", False)]
    if not binary(scores):
        dropped = two_pl + [d for d in designs if d.partition(":")[0] in BINARY_DESIGNS]
        why = "scores other than 0 and 1 (graded scores, or a model's missing answers filled with the item's mean)"
    else:
        # The cross-task 2PL model is fitted on the siblings' answers too (one model across the benchmark's tasks).
        graded_sibling = not all(map(binary, others))
        dropped = [k for k in two_pl if graded_sibling and getattr(table_[k], "uses_other_tasks", False)]
        why = ("another task of its benchmark has scores other than 0 and 1 (graded scores, or a model's missing "
               "answers filled with the item's mean)")
    if dropped:
        print(f"note: {table}: {why}, so {', '.join(dropped)} (built on the 2PL model of 0/1 answers) left out",
              flush=True)
    return [k for k in names if k not in dropped], [d for d in designs if d not in dropped]


def held_out(scores, table, protocol, label, seed, frac, strength) -> bool:
    """Whether ``protocol`` holds out a target and fits on 2 or more sources on ``table`` (the counts are the same for
    every seed); if not, a note says so (a table of 3 models has no interpolation target: 25% of 3 is 0)."""
    from harness_ext.report import plural

    sources, targets = split(scores, protocol, seed, frac, strength)
    if len(targets) and len(sources) >= 2:
        return True
    print(f"note: {table}: {label}: {plural(len(targets), 'target')} and {plural(len(sources), 'source')} among "
          f"{plural(scores.shape[0], 'model')}; skipped", flush=True)
    return False


def parse_args(argv=None) -> argparse.Namespace:
    ESTIMATORS = estimator_table()

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="two tables (with --store or --items-dir: their tables or --tables), 50 items, 3 seeds")
    ap.add_argument("--tables", nargs="*", help="tables as source/task (with --store: benchmark/task; default: every "
                                                "table)")
    ap.add_argument("--items", nargs="*", type=int, default=[50, 100])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="the seeds run are first-seed .. first-seed + seeds - 1 (fresh seeds for a held-out check)")
    ap.add_argument("--estimators", nargs="*", default=list(ESTIMATORS))
    ap.add_argument("--protocols", nargs="*", default=["interpolation", "extrapolation"],
                    choices=["interpolation", "extrapolation", "benchmark-frontier"],
                    help="benchmark-frontier (off by default): the targets the strongest 30%% by the mean over the "
                         "benchmark's tasks, the sources its weakest 50%%, the same models on every task")
    ap.add_argument("--designs", nargs="*", default=[],
                    help="item designs measured besides simple random sampling, each with its estimators "
                         "(labelled design/estimator): stratified (Neyman allocation), stratified:proportional, "
                         "irt-anchors")
    ap.add_argument("--source-fractions", nargs="*", type=float, default=[1.0],
                    help="shares of each seed's sources to fit on (at least 20 models; targets unchanged): the error "
                         "against the population's size; a share below 1 is reported as its own protocol")
    ap.add_argument("--items-dir", type=Path, metavar="DIR",
                    help="read the item tables from DIR/<source>/<task>.parquet or .csv instead of the shared data's items "
                         "folder (a table the constants were not chosen on, e.g. tests/fixtures/items_unseen)")
    ap.add_argument("--store", type=Path, metavar="DB",
                    help="your own store (filled by 'harness-ext ingest ... --db DB') instead of the shared tables: one "
                         "table per benchmark and task with item-level results, read as 'reduce --items' reads them")
    ap.add_argument("--benchmark", metavar="NAME[,NAME...]",
                    help="with --store: the benchmarks to measure (names or globs; default: every one in the store)")
    ap.add_argument("--metric", metavar="M",
                    help="with --store: the per-item metric (default: per task, as 'reduce --items' picks it)")
    ap.add_argument("--per-draw", type=Path, metavar="CSV",
                    help="also write one row per table, protocol, items, design, seed and estimator (the draw's "
                         "mean |error| in points over its targets, coverage, median width, number of targets) to CSV")
    args = ap.parse_args(argv)
    if args.store is None and (args.benchmark or args.metric):
        raise SystemExit("quality_items: --benchmark and --metric choose among a store's item tables: only with --store")
    if args.store is not None and args.items_dir is not None:
        raise SystemExit("quality_items: --store and --items-dir both name the item tables: give one")
    args.draws = [] if args.per_draw else None
    return args


def store_tables(args) -> StoreTables:
    """``--store``: the store's item tables (:class:`~_items_store.StoreTables`), its notes on the metrics printed;
    ``--tables`` must name some of them."""
    src = StoreTables(args.store, [b for b in (args.benchmark or "").split(",") if b], args.metric)
    unknown = [t for t in args.tables or () if t not in src.tables]
    if unknown:
        src.close()
        raise SystemExit(f"quality_items: --tables {' '.join(unknown)}: not in the store {args.store}, whose item "
                         f"tables (benchmark/task) are {', '.join(src.tables) or 'none'}")
    return src


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.store is not None:
        with store_tables(args) as src:
            tables = args.tables or src.tables
            n_list, seeds = (args.items, args.seeds) if not args.quick else ([50], 3)
            return run(args, tables, n_list, seeds, src.load, src.siblings, src.notes)
    global ITEMS
    found = None
    if args.items_dir is not None:
        # The loaders below read the module's folder, so pointing it elsewhere is the whole option.
        ITEMS, found = items_root(args.items_dir)
    elif not ITEMS.is_dir():
        print(f"skipped: no item tables at {ITEMS}")
        return 0
    unknown = [t for t in args.tables or () if not table_file(t).is_file()]
    if unknown:
        raise SystemExit(f"quality_items: --tables {' '.join(unknown)}: no such table in {ITEMS}, whose tables "
                         f"(benchmark/task) are {', '.join(table_paths(ITEMS)) or 'none'}")
    tables = args.tables or found or table_paths(ITEMS)
    n_list, seeds = args.items, args.seeds
    if args.quick:
        # The shared data's two quick tables; a folder of the user's own has only its own tables to offer.
        quick = QUICK_TABLES if args.items_dir is None else tables
        tables, n_list, seeds = list(args.tables or quick), [50], 3
    return run(args, tables, n_list, seeds, lambda t, notes: load_named(table_file(t), notes=notes), sibling_tables)


def run(args, tables, n_list, seeds, load, siblings_of, notes=()) -> int:
    """Measure ``tables``: ``load(table, notes)`` gives a table's ``(answers, models)`` (answers None for a table
    left out, its notes saying why) and ``siblings_of(table, models)`` the other tasks of its benchmark on the same
    rows; ``notes`` (``table: note``, on tables left out before) are printed first."""
    ESTIMATORS = estimator_table()
    print("table | protocol | n | estimator | mean |err| (pts) | se | 90% coverage | its se over seeds | its se over "
          "seeds and models | median width (pts)")
    for note in notes:
        print(f"note: {note}", flush=True)
    rows = []
    names, designs = list(args.estimators), list(args.designs)
    cross = any(getattr(ESTIMATORS[k], "uses_other_tasks", False) for k in args.estimators)
    for t in tables:
        notes = []
        scores, models = load(t, notes)
        for note in notes:
            print(f"note: {t}: {note}", flush=True)
        if scores is None:
            continue
        siblings = siblings_of(t, models) if cross or "benchmark-frontier" in args.protocols else ()
        others = siblings if cross else ()
        strength = benchmark_strength(scores, siblings)
        args.estimators, args.designs = usable(scores, t, names, designs, others)
        for protocol in args.protocols:
            for n in n_list:
                if n >= scores.shape[1]:
                    print(f"note: {t}: {n} items of {scores.shape[1]} is the whole task; skipped", flush=True)
                    continue
                for frac in args.source_fractions:
                    label = protocol if frac >= 1 else f"{protocol} ({frac:g} of sources)"
                    if not held_out(scores, t, protocol, label, args.first_seed, frac, strength):
                        continue
                    rows += measure(scores, others, t, protocol, label, n, range(args.first_seed, args.first_seed + seeds),
                                    args, frac, strength)
    summarise(rows)
    if args.per_draw:
        write_per_draw(args.per_draw, args.draws)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
