"""``harness-ext predict``: a new model's full benchmark from its subset results.

The routine loop: ``reduce`` once, run only the manifest's subset for each new
checkpoint, then ``predict --manifest M RESULTS...``. Results are read with the
same adapters as ``ingest`` (into a throw-away in-memory store, so the main
store is untouched), normalised exactly as the training matrix was, and
completed by the manifest's predictor trained on the manifest's models.

The full-benchmark score is given on the harness's own metric and scale (MMLU ``acc``
with the subjects weighted as lm-eval's ``mmlu`` group weights them,
:mod:`harness_ext.methods.reduction.benchmark_score`), its interval calibrated for that
weighted sum itself, with the manifest's normalised aggregate beside it.

Intervals are 90% unless ``level`` (``predict --level``) asks for another; the
conformal ones are calibrated at predict time from the manifest's training
matrix, so any level is a quantile of the same held-out scores. A completer (``lowrank``, ``lowrank_bayes``,
``benchpress``) gives its own conformal intervals: calibrated on held-out
training models observed on the same cells as each new model, adaptive per
cell (scaled by the fold-in's predictive sd), for the cells and for the
aggregate. ``lowrank`` and ``lowrank_bayes`` calibrate nested: each held-out
fold of training models is observed on the subset ``reduce`` chose without
it (stored in the manifest, ``prediction.calibration``), so the calibration
models, like a new model, did not choose what they reveal. Other predictors: the predictive standard deviation where they have
one (Bayesian PMF), otherwise the cross-validated RMSE the manifest recorded
per dataset; their aggregate uses the cross-validated RMSE of the aggregate.

References
----------
SimBA §4 (pounce); Zhao et al. §3 (predictive uncertainty).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import HarnessExtError
from ...report import Result, Stages, format_table, progress
from .benchmark_score import (DEFAULT_LEVEL, aggregate_frame, benchmark_score, chance_warnings, check_level,
                              floor_warnings, raw_aggregate_rmse, score_truth, z_of)
from ...store.matrix import apply_normalisation, invert_normalisation, params_frame

log = logging.getLogger("harness_ext.predict")

__all__ = ["Prediction", "PredictionResult", "predict_from_manifest", "predict_scores", "training_matrix"]


def training_matrix(manifest: dict) -> pd.DataFrame:
    """The normalised training matrix a manifest was built from (embedded or re-queried and verified)."""
    tm = manifest.get("training_matrix")
    if tm is not None:
        values = np.array([[np.nan if v is None else v for v in row] for row in tm["values"]], dtype=float)
        return pd.DataFrame(values, index=tm["models"], columns=tm["datasets"])
    from ...store.matrix import MatrixQuery, load_matrix
    from ...store.db import Store

    src = manifest["source"]
    if not src.get("store"):
        raise HarnessExtError("the manifest embeds no training matrix and names no store to rebuild it from")
    q = dict(src["query"])
    q["benchmarks"] = tuple(q.get("benchmarks") or ())
    from dataclasses import fields

    unknown = set(q) - {f.name for f in fields(MatrixQuery)}
    if unknown:
        raise HarnessExtError(f"the manifest's source.query has unknown keys: {', '.join(sorted(unknown))}")
    with Store.open(src["store"], read_only=True) as store:
        df = load_matrix(store, MatrixQuery(**q))
    if df.attrs["fingerprint"] != src["fingerprint"]:
        raise HarnessExtError(f"the store {src['store']} no longer holds the matrix this manifest was built from "
                              "(fingerprint differs): run 'harness-ext reduce' again")
    return df


@dataclass
class PredictionResult(Result):
    """Predictions for the new models: per dataset with intervals, and the full-benchmark score.

    ``table`` (also :meth:`to_frame`): one row per (model, dataset) with ``observed`` (bool),
    ``score`` (normalised, observed or predicted), ``lower``/``upper``, ``raw`` (the
    harness's own scale) with ``raw_lower``/``raw_upper``, and ``actual`` (normalised) where the
    results happen to contain a dataset outside the subset. ``aggregate``: one row per model with
    the full-benchmark score on the harness's metric and scale (``metric``, e.g. MMLU's ``acc``
    weighted as lm-eval's mmlu group weights its subjects): ``aggregate``, ``lower``, ``upper``,
    ``actual``; and the manifest's weighted mean of normalised scores (``normalised``,
    ``normalised_lower``, ``normalised_upper``, ``normalised_actual``). Where the datasets make no
    score on one harness metric, ``metric`` is ``"normalised"`` and both agree (``score`` says why).
    Intervals are at ``level`` (0.90 unless asked otherwise).
    """

    table: pd.DataFrame
    aggregate: pd.DataFrame
    warnings: list
    #: model -> the result files it was read from (where ``predict`` writes its lm-eval-schema results)
    sources: dict = None
    #: the manifest the predictions come from, and where it was read (for the JSON and the exports)
    manifest: dict = field(default=None, repr=False)
    manifest_path: str = None
    #: the intervals' level
    level: float = DEFAULT_LEVEL
    #: how the full-benchmark score is made (:meth:`harness_ext.methods.reduction.benchmark_score.BenchmarkScore.describe`)
    score: dict = None

    title = "predict"

    def tables(self) -> dict:
        return {"predictions": self.table, "aggregate": self.aggregate}

    def summary(self) -> dict:
        return {"models": len(self.aggregate), "interval_level": self.level, "score": self.score}

    def score_heading(self) -> str:
        """What the aggregate's first columns are, in words (the table's heading, the plot's label)."""
        score = self.score or {}
        weighting = ((self.manifest or {}).get("aggregate") or {}).get("weighting", {}).get("name", "manifest")
        pct = f"{self.level:.0%}".replace(".0%", "%")
        norm = f"normalised: weighted mean of normalised scores, {weighting} weights"
        if score.get("metric", "normalised") == "normalised":
            why = f" (no score on the harness's metric: {score['reason']})" if score.get("reason") else ""
            return f"full-benchmark estimate ({norm}), {pct} interval{why}"
        return (f"full-benchmark estimate: {score['benchmark']} {score['metric']} ({score['weighting']}), "
                f"{pct} interval; {norm}")

    def render(self, all: bool = False) -> str:
        """Per model its predicted datasets (``all``: observed ones too), then the aggregate: what the command prints."""
        parts = []
        pct = f"{self.level:.0%}".replace(".0%", "%")
        for model, rows in self.table.groupby("model", sort=False):
            shown = rows if all else rows[~rows["observed"]]
            shown = shown.drop(columns=["model"]).set_index("dataset")
            if shown["actual"].isna().all():
                shown = shown.drop(columns=["actual"])
            parts.append(f"\n{model}: predicted scores (normalised 0-1, and on the harness's own scale), {pct} intervals")
            parts.append(format_table(shown))
        parts.append(f"\n{self.score_heading()}:")
        agg = self.aggregate.set_index("model")
        for col in ("actual", "normalised_actual"):
            if agg[col].isna().all():
                agg = agg.drop(columns=[col])
        if agg["metric"].eq("normalised").all():
            agg = agg.drop(columns=["normalised", "normalised_lower", "normalised_upper"]
                           + (["normalised_actual"] if "normalised_actual" in agg else []))
        parts.append(format_table(agg))
        return "\n".join(parts)

    def to_dict(self) -> dict:
        """What ``predict --json`` writes: manifest, method, interval level, warnings, aggregate, datasets."""
        from .predict_export import prediction_json

        return {"title": self.title, "summary": self.summary(),
                **prediction_json(self, self.manifest, self.manifest_path)}

    def plot(self, path=None, model=None):
        """Each predicted dataset with its interval (normalised), observed ones marked; the full-benchmark score.

        One row of panels per model (``model``: only that one): the datasets on the normalised
        scale, and beside them the full-benchmark score on the harness's metric with its interval
        (its actual value where known). Returns the path written, or the figure when ``path`` is None.
        """
        from ...report import get_pyplot, save_figure

        plt = get_pyplot()
        models = [model] if model is not None else list(dict.fromkeys(self.table["model"]))
        n_rows = self.table["dataset"].nunique() + 1
        pct = f"{self.level:.0%}".replace(".0%", "%")
        fig, axes = plt.subplots(len(models), 2, figsize=(8.4, (1.2 + 0.22 * n_rows) * len(models)), squeeze=False,
                                 gridspec_kw={"width_ratios": [3, 1]})
        metric = (self.score or {}).get("metric", "normalised")
        label = "normalised score" if metric == "normalised" else f"{(self.score or {}).get('benchmark', '')} {metric}"
        for (ax, ax_agg), name in zip(axes, models):
            rows = self.table[self.table["model"] == name]
            agg = self.aggregate[self.aggregate["model"] == name].iloc[0]
            y = np.arange(len(rows))
            pred = ~rows["observed"].to_numpy()
            score = rows["score"].to_numpy()
            err = np.vstack([score - rows["lower"].to_numpy(), rows["upper"].to_numpy() - score])
            ax.errorbar(score[pred], y[pred], xerr=err[:, pred], fmt="o", ms=3, capsize=2, label=f"predicted, {pct}")
            ax.plot(score[~pred], y[~pred], "k^", ms=4, label="observed (subset)")
            if rows["actual"].notna().any():
                ax.plot(rows["actual"], y, "rx", ms=4, label="actual")
            ax.set_yticks(list(y))
            ax.set_yticklabels(list(rows["dataset"]), fontsize=7)
            ax.set_xlabel("normalised score")
            ax.set_title(str(name), fontsize=9)
            ax.grid(alpha=0.3, axis="x")
            ax_agg.errorbar([0], [agg["aggregate"]], yerr=[[agg["aggregate"] - agg["lower"]], [agg["upper"] - agg["aggregate"]]],
                            fmt="D", color="C3", capsize=4, label=f"estimate, {pct}")
            if np.isfinite(agg["actual"]):
                ax_agg.plot([0], [agg["actual"]], "rx", ms=6, label="actual")
            ax_agg.set_xticks([0])
            ax_agg.set_xticklabels(["full benchmark"], fontsize=8)
            ax_agg.set_ylabel(label)
            ax_agg.set_title(f"{agg['aggregate']:.3f} [{agg['lower']:.3f}, {agg['upper']:.3f}]", fontsize=8)
            ax_agg.grid(alpha=0.3, axis="y")
            ax_agg.legend(fontsize=7, loc="best")
        axes[0][0].legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        return fig if path is None else save_figure(fig, path)


#: The old name of :class:`PredictionResult`.
Prediction = PredictionResult


def match_datasets(datasets: list, benchmarks, names, metrics) -> list:
    """The manifest column each (benchmark, dataset, metric) result belongs to, or None.

    Matched by benchmark, dataset and metric, so a dataset scored with another
    metric is never mixed in. A result whose benchmark is none of the manifest's
    (a CSV's benchmark is its file name unless it has a ``benchmark`` column, so
    a new model's file is named differently) matches by dataset and metric when
    exactly one manifest dataset has them: never by file name.
    """
    def short(d):
        b = d.get("benchmark") or ""
        return d["name"][len(b) + 1:] if b and d["name"].startswith(b + "/") else d["name"]

    exact = {(d.get("benchmark"), short(d), d.get("metric")): d["name"] for d in datasets}
    by_name: dict = {}
    for d in datasets:
        by_name.setdefault((short(d), d.get("metric")), set()).add(d["name"])
    own = {d.get("benchmark") for d in datasets}
    out = []
    for b, n, m in zip(benchmarks, names, metrics):
        c = exact.get((b, n, m))
        if c is None and b not in own:
            cands = by_name.get((n, m), ())
            c = next(iter(cands)) if len(cands) == 1 else None
        out.append(c)
    return out


def new_model_matrix(manifest: dict, paths) -> tuple:
    """Raw scores of the models in ``paths`` on the manifest's datasets: ``(DataFrame, report, other_shots)``.

    Where a model has the dataset at the manifest's shot count and at others, the manifest's is used;
    ``other_shots`` maps ``(model, dataset)`` to the shot count used when only another one was there.
    """
    from ...store.ingest import ingest_paths
    from ...store.matrix import query_results, MatrixQuery
    from ...store.db import Store
    from .harness_names import cross_harness_rows
    from ...types import SUBSET_OPTION

    with Store.open(":memory:") as store:
        # A new model's file holds the subset's columns: a leaderboard's sidecar beside it may describe them all.
        report = ingest_paths(store, paths, options={SUBSET_OPTION: True})  # a bar on a terminal: a folder takes a while
        if not report.by_status("ingested"):
            reasons = "; ".join(f"{f.path}: {f.reason}" for f in report.by_status("skipped")[:3])
            raise HarnessExtError(f"no results could be read from {', '.join(map(str, paths))}" + (f" ({reasons})" if reasons else ""))
        long = query_results(store, MatrixQuery(), all_metrics=True)
        sources = store.con.execute(
            "SELECT DISTINCT m.name, s.path FROM results r JOIN models m USING (model_id) JOIN sources s USING (source_id) "
            "ORDER BY 1, 2").fetchall()
        # Item subsets: a task's score is the anchors' weighted mean, from the run's per-sample logs.
        anchored = {}
        if (manifest.get("items") or {}).get("tasks"):
            from .items import weighted_scores

            anchored = weighted_scores(store, manifest["items"])
    col = match_datasets(manifest["datasets"], long["benchmark"], long["dataset"], long["metric"])
    matched = long.assign(column=col).dropna(subset=["column"])
    # The other harness's results (lm-eval runs of a group chosen from HELM, or the reverse) for the datasets
    # nothing matched: mapped by the harness-name table, and said (the prompts differ).
    have = set(matched["column"])
    crossed = cross_harness_rows([d for d in manifest["datasets"] if d["name"] not in have],
                                 long[pd.isna(pd.Series(col, index=long.index, dtype=object))])
    if not crossed.empty:
        matched = pd.concat([matched, crossed], ignore_index=True)
    if matched.empty:
        raise HarnessExtError(mismatch_message(long, manifest))
    shots = {d["name"]: d.get("num_fewshot") for d in manifest["datasets"]}
    want = matched["column"].map(shots)
    # A score at another shot count is a different measurement: use it only when the manifest's is absent.
    other = want.notna() & (matched["num_fewshot"].astype("Float64") != want.astype("Float64")).fillna(True)
    matched = (matched.assign(_other=other.to_numpy(dtype=bool)).sort_values("_other", kind="stable")
               .drop_duplicates(["model", "column"], keep="first"))
    off = matched[matched["_other"]]
    other_shots = {(mo, c): (None if pd.isna(n) else int(n)) for mo, c, n in zip(off["model"], off["column"], off["num_fewshot"])}
    raw = matched.pivot(index="model", columns="column", values="value")
    raw = raw.reindex(columns=[d["name"] for d in manifest["datasets"]])
    by_model: dict = {}
    for model, path in sources:
        by_model.setdefault(model, []).append(path)
    raw.attrs["sources"] = by_model
    for (model, c), v in anchored.items():
        if model in raw.index:
            raw.loc[model, c] = v
    raw.attrs["anchored"] = sorted(k for k in anchored if k[0] in raw.index)
    raw.attrs["cross_harness"] = sorted(set(crossed["column"]))
    raw.attrs["ingest_notes"] = report.note_lines()  # what reading the files did to them: reported with the prediction
    return raw, report, other_shots


def _key(bench, name, metric, shots) -> str:
    shots = None if shots is None or pd.isna(shots) or int(shots) < 0 else int(shots)
    return f"({bench}, {name}, {metric}, {'?' if shots is None else shots} shots)"


def mismatch_message(long: pd.DataFrame, manifest: dict, limit: int = 6) -> str:
    """Why no result matches the manifest: the (benchmark, dataset, metric, shots) keys found and expected."""
    expected = [(e.get("benchmark"), e["name"].split("/", 1)[-1], e.get("metric"), e.get("num_fewshot"))
                for e in manifest["subset"]]
    found = list(dict.fromkeys(zip(long["benchmark"], long["dataset"], long["metric"], long["num_fewshot"])))
    names = {n for _, n, _, _ in expected}
    near = [f for f in found if f[1] in names]  # the right dataset under another benchmark or metric
    shown = (near + [f for f in found if f not in near])[:limit]
    msg = ("none of the results is on a dataset of this manifest (results match on benchmark, dataset and metric). "
           f"Found {len(found)} keys, e.g. {', '.join(_key(*f) for f in shown)}"
           + (" ..." if len(found) > limit else "")
           + f"; the manifest's subset expects {', '.join(_key(*e) for e in expected[:limit])}"
           + (" ..." if len(expected) > limit else ""))
    if near:
        b, n, m, _ = near[0]
        want = next(e for e in expected if e[1] == n)
        msg += (f". Dataset {n!r} is there as benchmark {b!r} with metric {m!r}; the manifest has benchmark "
                f"{want[0]!r} and metric {want[2]!r}")
    return msg


def partial_subset_errors(manifest: dict, train: np.ndarray, est, subset_idx, have, weights) -> tuple:
    """Per-cell and aggregate cross-validated RMSE for each new model, given the part of the subset it ran.

    A model that ran the whole subset gets the manifest's figures. A model that
    ran only part of it is a fold-in on fewer cells, so its error is larger:
    the manifest's predictor is cross-validated again on the training matrix
    with held-out models revealing exactly that part (one run per distinct
    part, on the manifest's folds), so the interval widens with what was not run.

    Returns
    -------
    (per_cell, aggregate)
        ``(n_new, d)`` and ``(n_new,)`` RMSE arrays.
    """
    from ..engine.subset_cv import subset_errors

    cols = manifest["datasets"]
    d = len(cols)
    full_cell = np.array([c.get("cv_rmse") or 0.0 for c in cols], dtype=float)
    full_agg = manifest["prediction"]["expected_error"]["aggregate_rmse"]
    per_cell = np.tile(full_cell, (len(have), 1))
    agg = np.full(len(have), np.nan if full_agg is None else float(full_agg))
    cv = manifest["prediction"]["cross_validation"]
    partial = ~have.all(axis=1) & have.any(axis=1)
    if partial.any():
        patterns, inverse = np.unique(have[partial], axis=0, return_inverse=True)
        parts = [np.asarray(subset_idx)[p] for p in patterns]
        errs = subset_errors(train, parts, est, n_splits=cv["n_splits"], random_state=cv.get("random_state", 0),
                             weights=weights)
        rows = np.flatnonzero(partial)
        for g, e in enumerate(errs):
            sel = rows[np.asarray(inverse).reshape(-1) == g]
            per_cell[sel] = np.nan_to_num(e.per_dataset, nan=0.0)
            agg[sel] = e.aggregate
    return per_cell, agg


#: Fraction of the manifest's models at each edge of their subset-score range where predict warns.
EDGE_QUANTILE = 0.05


def predict_from_manifest(manifest: dict, paths, manifest_path=None, level: float = DEFAULT_LEVEL) -> PredictionResult:
    """Predict every dataset of the manifest for each model found in the result files ``paths``.

    An item-level manifest (``reduce --items N``) is predicted from per-item logs by
    :func:`harness_ext.methods.reduction.item_predict.predict_items` instead."""
    level = check_level(level)
    raw_new, _, other_shots = new_model_matrix(manifest, paths)
    return predict_scores(manifest, raw_new, other_shots, manifest_path=manifest_path, level=level)


def predict_scores(manifest: dict, raw_new: pd.DataFrame, other_shots=None, manifest_path=None,
                   level: float = DEFAULT_LEVEL) -> PredictionResult:
    """Predict every dataset of the manifest from raw scores (models x the manifest's dataset names, NaN where not run).

    ``other_shots`` maps ``(model, dataset)`` to the shot count of a score measured at another
    setting than the manifest's (:func:`new_model_matrix`). ``level``: the intervals' level
    (default 0.90); conformal intervals take their quantile at it, the others ``z`` standard
    deviations with ``z`` the normal quantile of ``level``.
    """
    from ...plugin_manager import get_registration
    from ..engine.from_subset import predict_new_models

    level = check_level(level)
    Z = z_of(level)
    other_shots = other_shots or {}
    train = training_matrix(manifest)
    columns = list(train.columns)
    raw_new = raw_new.reindex(columns=columns)
    by_name = {d["name"]: d for d in manifest["datasets"]}
    check_scales(raw_new, train, by_name)
    params = params_frame({c: by_name[c]["normalisation"] for c in columns}, columns)

    Z_new = apply_normalisation(raw_new.to_numpy(dtype=float), params)
    subset_names = [s["name"] for s in manifest["subset"]]
    subset_idx = np.array([columns.index(n) for n in subset_names])
    warnings = chance_warnings(manifest) + [f"reading the new results: {n}" for n in raw_new.attrs.get("ingest_notes", ())]
    have = ~np.isnan(Z_new[:, subset_idx])
    for i, model in enumerate(raw_new.index):
        missing = [subset_names[j] for j in np.flatnonzero(~have[i])]
        if len(missing) == len(subset_names):
            raise HarnessExtError(f"{model}: no result on any subset dataset ({', '.join(subset_names[:5])} ...)")
        if missing:
            warnings.append(f"{model}: no result for {', '.join(missing)}; predicted from the other "
                            f"{len(subset_names) - len(missing)} subset datasets, with intervals cross-validated "
                            "for that part of the subset (wider than the manifest's)")
    # A model the manifest was built from is no new model: its predictions are in-sample and say so.
    known = set(map(str, train.index))
    seen = [str(m) for m in raw_new.index if str(m) in known]
    if seen:
        warnings.append(f"{', '.join(seen[:5])}{' ...' if len(seen) > 5 else ''}: among the manifest's training models "
                        "(their full results chose the subset and fitted the predictor): the predictions are in-sample, "
                        "and their errors and intervals are not those of a new model")
    crossed = raw_new.attrs.get("cross_harness") or []
    if crossed:
        warnings.append(f"{len(crossed)} dataset(s) were read from the other harness's results, mapped by the "
                        f"harness-name table ({', '.join(crossed[:5])}{' ...' if len(crossed) > 5 else ''}): the "
                        "prompts (and for some datasets the metric) differ between lm-eval and HELM, so these scores "
                        "are not the measurement the manifest's models had; the prediction takes them as if they were")
    anchored = set(map(tuple, raw_new.attrs.get("anchored", [])))
    item_sets = {b["dataset"]: t for t, b in ((manifest.get("items") or {}).get("tasks") or {}).items()}
    for i, model in enumerate(raw_new.index):
        plain = [item_sets[c] for c in subset_names if c in item_sets and (model, c) not in anchored
                 and not np.isnan(Z_new[i, columns.index(c)])]
        if plain:
            warnings.append(f"{model}: no per-sample log for {', '.join(plain)}: the score used is the results file's, "
                            "a plain mean over the items run, not the manifest's weighted anchor estimate (run lm_eval "
                            "with --log_samples)")
    by_model = {}
    for (model, c), n in other_shots.items():
        if c in subset_names:
            by_model.setdefault(model, []).append(f"{c} ({n} shots, manifest {by_name[c].get('num_fewshot')})")
    for model, items in by_model.items():
        warnings.append(f"{model}: run with another shot count than the manifest's models: {', '.join(items[:5])}"
                        + (f" and {len(items) - 5} more" if len(items) > 5 else "") + "; "
                        "predictions assume the manifest's setting")
    # The intervals come from held-out models like the training ones; a model outside their range is extrapolated.
    # The interval is one cross-validated RMSE averaged over all models; errors are larger at the edges
    # of the range (held-out largest Pythia models: 40-73% inside the 90% interval, benchmarks/quality_round_trip.py).
    # Only models with a subset cell have a subset mean (on sparse matrices many have none: nanmean warned).
    tr_sub = train.to_numpy(dtype=float)[:, subset_idx]
    tr_sub = tr_sub[~np.isnan(tr_sub).all(axis=1)]
    tr_mean = np.nanmean(tr_sub, axis=1)
    lo, p05, p95, hi = np.nanquantile(tr_mean, [0.0, EDGE_QUANTILE, 1 - EDGE_QUANTILE, 1.0])
    new_mean = np.nanmean(Z_new[:, subset_idx], axis=1)
    for model, v in zip(raw_new.index, new_mean):
        if v < lo or v > hi:
            warnings.append(f"{model}: mean normalised subset score {v:.3f} is outside the manifest's models' range "
                            f"[{lo:.3f}, {hi:.3f}]: the prediction extrapolates and its interval may be too narrow")
        elif v < p05 or v > p95:
            warnings.append(f"{model}: mean normalised subset score {v:.3f} is {'above' if v > p95 else 'below'} "
                            f"{1 - EDGE_QUANTILE:.0%} of the manifest's models: errors near the edge of their range "
                            "are larger than the cross-validated average, so the interval may be too narrow")
    from .manifest_validation import check_predictor_params

    pred_cfg = manifest["prediction"]["predictor"]
    # The fit and the calibration on the manifest's folds take most of a minute on large benchmarks: a bar says so.
    bar = Stages(progress(None, total=2, desc="predict"), log, "predict")
    bar.set_postfix_str(f"fitting {pred_cfg['name']} on {train.shape[0]} models and calibrating its intervals")
    reg = get_registration("predictors", pred_cfg["name"])
    check_predictor_params(reg.name, pred_cfg.get("params", {}), reg.cls)
    est = reg.cls(**pred_cfg.get("params", {}))
    if hasattr(est, "level"):  # conformal predictors calibrate at predict time: their quantile is at the asked level
        est.level = level
    # The benchmark's own score (MMLU acc, size-weighted) is linear in the normalised scores: c + u . z.
    bench, bench_why = benchmark_score(manifest, columns)
    u = None if bench is None else bench.normalised_weights
    truth = None if bench is None else score_truth(manifest, train)  # scores below chance, as the score counts them
    train_X = train.to_numpy(dtype=float)
    observed = np.zeros(Z_new.shape, dtype=bool)
    observed[:, subset_idx] = have
    weights = np.array([by_name[c]["weight"] for c in columns], dtype=float)
    # A completer (lowrank, lowrank_bayes, benchpress) gives its own conformal intervals, calibrated on held-out
    # training models observed like each new model (adaptive per cell, and for the aggregate).
    conformal = hasattr(est, "predict_new_models")
    try:
        if conformal:
            reselect, why = stored_reselect(manifest, train, est)
            if why:
                warnings.append(why)
            p = _conformal(est.fit(train_X), np.where(observed, Z_new, np.nan), weights, reselect, have, u, truth)
            mean, lower, upper = p.mean, p.lower, p.upper
            frontier = p.frontier
            from ..engine.frontier import frontier_warnings

            warnings += frontier_warnings(raw_new.index, frontier, getattr(est, "frontier_", {}))
        else:
            mean, std = predict_new_models(est, train_X, Z_new, subset=subset_idx)
    except (ValueError, TypeError) as exc:  # parameters of the right type but a value the predictor refuses
        bar.close()
        raise HarnessExtError(f"predictor {reg.name!r} with the manifest's parameters {pred_cfg.get('params', {})} "
                              f"failed: {type(exc).__name__}: {exc}") from None
    bar.update()
    bar.set_postfix_str("scores on the harness's scale")

    if not conformal:
        frontier = None
    # Subset scores that are anchor-item estimates carry their own error into every cell and the aggregate.
    from .items import item_noise

    def _predict_means(Z):
        if conformal:
            return est.predict_new_models(np.where(observed, Z, np.nan), calibrate=False).mean
        return predict_new_models(est, train_X, Z, subset=subset_idx)[0]

    item_cell_var, item_agg_var = item_noise(manifest, columns, subset_idx, have, Z_new, _predict_means,
                                             weights if u is None else np.column_stack([weights, u]))
    item_raw_var = None
    if item_agg_var is not None and u is not None:
        item_agg_var, item_raw_var = item_agg_var[:, 0], item_agg_var[:, 1]
    # Only normalised columns live on [0, 1]; raw ones (--normalise none, e.g. CrossPred's
    # negative BARTScores) must keep their own scale or the interval would exclude the score.
    bounded = params["clip"].to_numpy(dtype=bool)
    # A regression can step outside [0, 1] on a normalised column; the score, like its interval, stays inside.
    mean = np.where(bounded & ~observed, np.clip(mean, 0.0, 1.0), mean)
    agg = mean @ weights
    r_lo = r_hi = None
    if conformal:
        h_lo, h_hi = np.maximum(mean - lower, 0.0), np.maximum(upper - mean, 0.0)
        a_lo, a_hi = p.aggregate - p.aggregate_lower, p.aggregate_upper - p.aggregate
        if u is not None:
            r_lo = np.maximum(p.extra_aggregate[:, 0] - p.extra_lower[:, 0], 0.0)
            r_hi = np.maximum(p.extra_upper[:, 0] - p.extra_aggregate[:, 0], 0.0)
    else:
        cv_rmse, agg_rmse = partial_subset_errors(manifest, train_X, est, subset_idx, have, weights)
        h_lo = h_hi = np.where(observed, 0.0, Z * (std if std is not None else cv_rmse))
        a_lo = a_hi = Z * agg_rmse
        if u is not None:
            r_lo = r_hi = Z * raw_aggregate_rmse(manifest, train_X, est, subset_idx, have, weights, agg_rmse, u, truth)
    if item_cell_var is not None:
        h_lo, h_hi = (np.sqrt(h ** 2 + Z ** 2 * item_cell_var) for h in (h_lo, h_hi))
    if item_agg_var is not None:
        a_lo, a_hi = (np.sqrt(h ** 2 + Z ** 2 * item_agg_var) for h in (a_lo, a_hi))
    if item_raw_var is not None:
        r_lo, r_hi = (np.sqrt(h ** 2 + Z ** 2 * item_raw_var) for h in (r_lo, r_hi))
    lower = np.where(bounded, np.clip(mean - h_lo, 0, 1), mean - h_lo)
    upper = np.where(bounded, np.clip(mean + h_hi, 0, 1), mean + h_hi)
    agg_lo, agg_hi = agg - a_lo, agg + a_hi
    actual = np.where(observed, np.nan, Z_new)

    agg_actual = np.where(np.isnan(Z_new).any(axis=1), np.nan, Z_new @ weights)

    n_new, d = mean.shape
    raw_obs = raw_new.to_numpy(dtype=float)
    exact = observed & (h_lo == 0) & (h_hi == 0)  # an observed anchor-item estimate keeps its interval on the raw scale too
    table = pd.DataFrame({
        "model": np.repeat(raw_new.index.to_numpy(), d),
        "dataset": np.tile(columns, n_new),
        "observed": observed.ravel(),
        "score": mean.ravel(), "lower": lower.ravel(), "upper": upper.ravel(),
        # Observed cells keep the harness's own value (normalisation clips below-chance scores to chance).
        "raw": np.where(observed, raw_obs, invert_normalisation(mean, params)).ravel(),
        "raw_lower": np.where(exact, raw_obs, invert_normalisation(lower, params)).ravel(),
        "raw_upper": np.where(exact, raw_obs, invert_normalisation(upper, params)).ravel(),
        "actual": actual.ravel(),
    })
    # A flipped (lower-is-better) column inverts the order of its bounds.
    lo_hi = np.sort(table[["raw_lower", "raw_upper"]].to_numpy(), axis=1)
    table["raw_lower"], table["raw_upper"] = lo_hi[:, 0], lo_hi[:, 1]
    if bench is not None:
        warnings += floor_warnings(raw_new.index, bench, params, observed, Z_new, lower, truth is not None)
    aggregate = aggregate_frame(raw_new.index, bench, table["raw"].to_numpy().reshape(n_new, d), raw_obs, observed,
                                 bounded.all(), (agg, agg_lo, agg_hi, agg_actual), (r_lo, r_hi))
    if frontier is not None:  # signed distance beyond the training models' edge (0 inside; methods.frontier)
        aggregate["frontier"] = np.asarray(frontier, dtype=float)
    bar.update()
    bar.close()
    return PredictionResult(table=table, aggregate=aggregate, warnings=warnings, sources=raw_new.attrs.get("sources", {}),
                            manifest=manifest, manifest_path=None if manifest_path is None else str(manifest_path),
                            level=level, score=bench.describe() if bench is not None else {"metric": "normalised",
                                                                                              "reason": bench_why})


def check_scales(raw_new: pd.DataFrame, train: pd.DataFrame, by_name: dict) -> None:
    """Refuse scores outside a dataset's fixed scale (percentages for a 0-1 dataset), which normalisation would
    otherwise clip to the scale's end and predict from as a perfect score.

    Each dataset's scale is its manifest record's (:func:`harness_ext.store.scales.raw_scale`; a column given as
    is, by its training values).
    """
    from ...store.scales import FIXED_BOUNDS, out_of_scale_message, raw_scale

    problems = []
    for c in raw_new.columns:
        v = raw_new[c].to_numpy(dtype=float)
        if not np.isfinite(v).any():
            continue
        kind, lo, hi = raw_scale(by_name[c]["normalisation"], train[c].to_numpy(dtype=float))
        if kind not in FIXED_BOUNDS or lo is None or hi is None:
            continue
        tol = 1e-9 * max(hi - lo, 1.0)
        bad = (v > hi + tol) | (v < lo - tol)
        if bad.any():
            i = int(np.flatnonzero(bad)[np.argmax(np.abs(v[bad]))])
            problems.append(out_of_scale_message(str(c), kind, lo, hi, v[bad], who=str(raw_new.index[i])))
    if problems:
        raise HarnessExtError(f"{len(problems)} dataset(s) have scores outside their scale, refused rather than "
                              f"clipped: {'; '.join(problems[:3])}" + (" ..." if len(problems) > 3 else ""))


def stored_reselect(manifest: dict, train: pd.DataFrame, est) -> tuple:
    """``(reselect, warning)``: the manifest's fold subsets as a ``reselect`` for ``est.predict_new_models``.

    ``reduce`` re-runs the selection without each calibration fold and stores each
    fold's subset (``prediction.calibration``). Used only when they belong to this
    training matrix (same models, in the same order, one fold label each);
    otherwise ``(None, a warning)``: the calibration then scores models that chose
    the subset, which predict it better than a new model does (intervals too narrow).
    ``(None, None)`` for a predictor without ``reselect``.
    """
    import inspect

    from ..engine.newmodel_intervals import FoldSubsets

    if "reselect" not in inspect.signature(est.predict_new_models).parameters:
        return None, None
    cal = manifest["prediction"].get("calibration")
    plain = ("intervals are calibrated on training models that chose the subset, which predict it better than a new "
             "model does, so they may be too narrow")
    if cal is None:
        return None, f"the manifest stores no per-fold subsets (written by an older reduce): {plain}; run reduce again"
    if list(map(str, train.index)) != list(manifest["source"]["models"]) or len(cal["fold"]) != len(train):
        return None, (f"the training matrix ({len(train)} models) is not the one the manifest's fold subsets were "
                      f"chosen on ({len(cal['fold'])} models): {plain}")
    index = {c: j for j, c in enumerate(train.columns)}
    return FoldSubsets(cal["fold"], [[index[n] for n in sub] for sub in cal["subsets"]]), None


def _conformal(est, Z_in, weights, reselect, have, extra=None, extra_truth=None):
    """``est.predict_new_models`` with the stored fold subsets (``have``: (n, k) subset cells each new model ran).

    The models that ran the whole subset are calibrated on each fold's models observed on
    the fold's subset; a model that ran part of it, in its own call, on the same positions
    of each fold's subset (:meth:`~harness_ext.methods.engine.newmodel_intervals.FoldSubsets.restrict`).
    ``extra``: the weights ``u`` of the benchmark's own score (``extra_*`` of the result, one column), calibrated
    against ``extra_truth`` (the training scores below chance as they are, :func:`score_truth`) where the
    predictor takes it.
    """
    import inspect

    params = inspect.signature(est.predict_new_models).parameters

    def call(Z, sel):
        args = dict(weights=weights) if "reselect" not in params else dict(weights=weights, reselect=sel)
        if extra is None:
            return est.predict_new_models(Z, **args)
        if "extra_weights" in params:
            if extra_truth is not None and "extra_truth" in params:
                args["extra_truth"] = extra_truth
            return est.predict_new_models(Z, extra_weights=extra[None, :], **args)
        # A predictor without extra aggregates: a second call, its aggregate computed with the score's weights.
        p, q = est.predict_new_models(Z, **args), est.predict_new_models(Z, **{**args, "weights": extra})
        return p._replace(extra_aggregate=q.aggregate[:, None], extra_lower=q.aggregate_lower[:, None],
                          extra_upper=q.aggregate_upper[:, None])

    full = have.all(axis=1)
    if reselect is None or full.all():
        return call(Z_in, reselect)
    part = reselect.restrict(np.unique(have[~full], axis=0))
    if not full.any():
        return call(Z_in, part)
    a = call(Z_in[full], reselect)
    b = call(Z_in[~full], part)
    out = {}
    for name in ("mean", "lower", "upper", "sd", "observed", "aggregate", "aggregate_lower", "aggregate_upper",
                 "extra_aggregate", "extra_lower", "extra_upper", "frontier"):
        va, vb = getattr(a, name), getattr(b, name)
        if va is None:
            continue
        v = np.empty((len(full),) + va.shape[1:], dtype=va.dtype)
        v[full], v[~full] = va, vb
        out[name] = v
    return a._replace(**out)
