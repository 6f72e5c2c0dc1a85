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
from typing import Optional

import numpy as np
import pandas as pd

from ...base import check_level
from ...errors import HarnessExtError
from ...report import Result, Stages, format_table, progress
from .benchmark_score import (DEFAULT_LEVEL, aggregate_frame, benchmark_score, chance_warnings, floor_at_chance,
                              floor_warnings, score_truth, z_of)
from ...store.floor import normalised_bounds, unfloored
from ...store.matrix import apply_normalisation, params_frame
from .predict_conflicts import conflict_cells, conflict_warnings, item_conflict_warnings

#: The adapters of lm-eval results files, beside which ``predict`` writes ``harness_ext_prediction_<group>.json``.
LM_EVAL_ADAPTERS = ("lm_eval_v03", "lm_eval_v04", "open_llm_leaderboard_v1")

log = logging.getLogger("harness_ext.predict")

__all__ = ["Prediction", "PredictionResult", "predict_from_manifest", "predict_scores", "training_matrix"]


def embedded_values(tm: dict) -> np.ndarray:
    """The values of a manifest's embedded ``training_matrix`` as floats, NaN where it holds null."""
    return np.array([[np.nan if v is None else v for v in row] for row in tm["values"]], dtype=float)


def training_matrix(manifest: dict) -> pd.DataFrame:
    """The normalised training matrix a manifest was built from (embedded or re-queried and verified)."""
    tm = manifest.get("training_matrix")
    if tm is not None:
        return pd.DataFrame(embedded_values(tm), index=tm["models"], columns=tm["datasets"])
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
    return df if floor_at_chance(manifest) else unfloored(df)


@dataclass
class PredictionResult(Result):
    """Predictions for the new models: per dataset with intervals, and the full-benchmark score.

    ``table`` (also :meth:`to_frame`): one row per (model, dataset) with ``observed`` (bool),
    ``score`` (normalised, observed or predicted), ``lower``/``upper``, ``raw`` (the
    harness's own scale, on the dataset's ``metric``: HELM's ``EM``, lm-eval's ``acc_norm``) with
    ``raw_lower``/``raw_upper``, and ``actual`` (normalised) where the
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
    #: model -> the lm-eval results files it was read from (where ``predict`` writes its lm-eval-schema results)
    sources: dict = None
    #: the manifest the predictions come from, and where it was read (for the JSON and the exports)
    manifest: dict = field(default=None, repr=False)
    manifest_path: str = None
    #: the intervals' level
    level: float = DEFAULT_LEVEL
    #: how the full-benchmark score is made (:meth:`harness_ext.methods.reduction.benchmark_score.BenchmarkScore.describe`)
    score: dict = None
    #: model -> ``(plain id, variant)`` of the models whose results named a variant (an Every Eval Ever record's
    #: precision, :data:`harness_ext.types.VARIANT_OF`): the ``--eee`` records give the plain id and the precision
    variants: dict = None
    #: ``(model, dataset)`` -> the shots an observed score was run at, where not the manifest's (None: not named)
    shots_run: dict = None

    title = "predict"
    command = "predict"

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
            shown = shown.drop(columns=[c for c in ("actual", "raw_actual") if c in shown and shown[c].isna().all()])
            parts.append(f"\n{model}: predicted scores (normalised: 0 = chance, 1 = the scale's top, below 0 = below "
                         f"chance; and raw: on the harness's own scale of the dataset's metric), {pct} intervals")
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

    #: The files :meth:`write` writes into its folder (``predict --out DIR`` adds the figure, :data:`PLOT_FILE`).
    FILES = ("prediction.json", "predictions.csv", "aggregate.csv")
    #: The figure ``predict --out DIR`` writes beside :data:`FILES` (:meth:`plot`).
    PLOT_FILE = "prediction.png"

    def write(self, out) -> list:
        """Write the predictions into folder ``out``; returns the paths.

        ``prediction.json``: the ``predict --json`` document (:meth:`to_json`); ``predictions.csv``: :meth:`to_frame`,
        one row per model and dataset with its interval; ``aggregate.csv``: the full-benchmark score per model with
        its interval. All three are written, or none (an error leaves ``out`` as it was). The folder's figure is
        :meth:`plot` (``predict --out DIR`` writes it as ``prediction.png``). ``reduce``'s result has the same
        ``write(out)``, for the manifest and the harness files.
        """
        from ...safe_output import csv_text, write_files

        json_name, table_name, aggregate_name = self.FILES
        # CSV floats as stored (no rounding): these files are the numbers, the printed table is their summary.
        return write_files(out, {json_name: self.to_json(), table_name: csv_text(self.table, index=False),
                                 aggregate_name: csv_text(self.aggregate, index=False)})

    def plot(self, path=None, model=None):
        """Each predicted dataset with its interval, observed ones marked; the full-benchmark score.

        One row of panels per model (``model``: only that one): the datasets on the scale of the
        table's ``score`` (:meth:`dataset_axis_label`), and beside them the full-benchmark score on the harness's metric with its interval
        (its actual value where known). Returns the path written, or the figure when ``path`` is None.
        """
        from ...report import get_pyplot, save_figure

        known = list(dict.fromkeys(self.table["model"]))
        if model is not None and model not in known:
            raise HarnessExtError(f"plot(model={model!r}): no such model in this prediction; its models are "
                                  f"{', '.join(map(str, known[:8]))}{' ...' if len(known) > 8 else ''}")
        plt = get_pyplot()
        models = [model] if model is not None else known
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
            if (~pred).any():
                ax.plot(score[~pred], y[~pred], "k^", ms=4, label="observed (subset)")
            if rows["actual"].notna().any():
                ax.plot(rows["actual"], y, "rx", ms=4, label="actual")
            ax.set_yticks(list(y))
            ax.set_yticklabels(list(rows["dataset"]), fontsize=7)
            ax.set_xlabel(self.dataset_axis_label())
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
        # One legend below the panels: inside an axes it hid the points and whiskers it sat on.
        handles = {}
        for a in axes[0]:
            for h, lab in zip(*a.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=len(handles), fontsize=7, frameon=False)
        fig.tight_layout(rect=(0, 0.3 / fig.get_figheight(), 1, 1))
        return fig if path is None else save_figure(fig, path)

    def dataset_axis_label(self) -> str:
        """The datasets' axis in :meth:`plot`: the scale the table's ``score`` column is on."""
        return "normalised score"


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
    from .predict_links import dataset_short_name as short

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


def new_model_matrix(manifest: dict, paths, adapter: Optional[str] = None) -> tuple:
    """Raw scores of the models in ``paths`` on the manifest's datasets: ``(DataFrame, report, other_shots)``.

    ``adapter`` forces that adapter for every file (as ``ingest --adapter``) instead of detecting the format.

    Where a model has the dataset at the manifest's shot count and at others, the manifest's is used;
    ``other_shots`` maps ``(model, dataset)`` to the shot count used when only another one was there.
    """
    from ...store.ingest import ingest_paths
    from ...store.matrix import query_results, MatrixQuery
    from ...store.cell_choice import used_first
    from ...store.db import Store
    from ...types import SUBSET_OPTION

    with Store.open(":memory:") as store:
        # A new model's file holds the subset's columns: a leaderboard's sidecar beside it may describe them all. The
        # option names the subset's datasets, so a file giving none of them a score is refused saying so. (A bar on
        # a terminal: a folder takes a while.)
        from .predict_links import dataset_short_name

        subset_names = sorted({dataset_short_name(d) for d in manifest.get("subset") or ()})
        report = ingest_paths(store, paths, adapter=adapter, options={SUBSET_OPTION: subset_names or True})
        if not report.by_status("ingested"):
            reasons = "; ".join(f"{f.path}: {f.reason}" for f in report.by_status("skipped")[:3])
            raise HarnessExtError(f"no results could be read from {', '.join(map(str, paths))}" + (f" ({reasons})" if reasons else ""))
        # Where the new model's files disagree, each cell's used value (cell_choice) first: it is the one kept below.
        long = used_first(query_results(store, MatrixQuery(), all_metrics=True),
                          ["model_name", "benchmark", "dataset", "metric", "num_fewshot"])
        # A dataset the manifest names otherwise (an Inspect task's Every Eval Ever record, or the reverse): read
        # under the manifest's name by the store's link rules, and said with counts.
        from .predict_links import manifest_datasets, new_result_links, relink_rows

        datasets = manifest_datasets(manifest)
        renames, link_problems = new_result_links(datasets, store)
        long, linked = relink_rows(long, renames, datasets)
        conflicts = store.conflicts()
        # lm-eval groups are stored as aggregates; the table names some as a dataset's task (the leaderboard's BBH is
        # group leaderboard_bbh): read only through it, never matched as a dataset of their own.
        groups = query_results(store, MatrixQuery(aggregates="only"), all_metrics=True)
        # Where predict writes its lm-eval-layout results: beside lm-eval results files only (not into a HELM
        # or Every Eval Ever folder, nor beside a leaderboard CSV).
        sources = store.con.execute(
            "SELECT DISTINCT m.name, s.path FROM results r JOIN models m USING (model_id) JOIN sources s USING (source_id) "
            f"WHERE s.adapter IN ({', '.join('?' * len(LM_EVAL_ADAPTERS))}) ORDER BY 1, 2",
            list(LM_EVAL_ADAPTERS)).fetchall()
        variants = model_variants(long, store)
        # Item subsets: a task's score is the anchors' weighted mean, from the run's per-sample logs.
        anchored, item_conflicts = {}, []
        if (manifest.get("items") or {}).get("tasks"):
            from .items import anchor_conflicts, weighted_scores

            anchored = weighted_scores(store, manifest["items"])
            item_conflicts = anchor_conflicts(store, manifest["items"])
    matched, helm_runs, crossed = _matched_rows(manifest, long, groups)
    matched, other_shots = _manifest_shots_first(matched, manifest)
    raw = matched.pivot(index="model", columns="column", values="value")
    raw = raw.reindex(columns=[d["name"] for d in manifest["datasets"]])
    by_model: dict = {}
    for model, path in sources:
        by_model.setdefault(model, []).append(path)
    raw.attrs["sources"] = by_model
    raw.attrs["variants"] = {m: v for m, v in variants.items() if m in raw.index}
    for (model, c), v in anchored.items():
        if model in raw.index:
            raw.loc[model, c] = v
    raw.attrs["anchored"] = sorted(k for k in anchored if k[0] in raw.index)
    raw.attrs["release_notes"] = older_release_cells(manifest, raw, by_model, dict(zip(long["model_name"], long["model"])))
    # Read from the lm-eval tasks the benchmark itself ran (the Open LLM Leaderboard v2's): no other harness.
    raw.attrs["cross_harness"] = sorted(set(crossed["column"]) - set(crossed.attrs.get("own_tasks", ())))
    raw.attrs["cross_harness_incomplete"] = (list(helm_runs.attrs.get("incomplete", ()))
                                             + list(crossed.attrs.get("incomplete", ())))
    raw.attrs["dataset_links"] = linked + link_problems
    raw.attrs["ingest_notes"] = report.note_lines()  # what reading the files did to them: reported with the prediction
    # Two files of one model that disagree (a rerun beside the first run): which is used, and why, is said.
    raw.attrs["ingest_conflicts"] = conflict_cells(conflicts)
    raw.attrs["item_conflicts"] = [c for c in item_conflicts if c[0] in raw.index]
    return raw, report, other_shots


def older_release_cells(manifest: dict, raw: pd.DataFrame, files: dict, shown: dict) -> list:
    """The warnings on lm-eval results files (``files``: ``{model name: [paths]}``) written by an older release than
    the manifest's folder needs; the cells of a task such a run scored under lm-eval's own name, not the folder's, are
    emptied in ``raw`` (predicted from the others; :func:`~.lm_eval_release.release_warnings`). ``shown``: model name
    -> the name ``raw`` shows it by."""
    from .harness_names import lm_eval_task_list
    from .lm_eval_release import release_warnings

    notes, refused = release_warnings(manifest, files)
    columns = {t: e["name"] for e in manifest["subset"] for t in lm_eval_task_list(e)}
    for name, task in refused:
        model = shown.get(name, name)
        if model in raw.index and columns.get(task) in raw.columns:
            raw.loc[model, columns[task]] = np.nan
    return notes


def _matched_rows(manifest: dict, long: pd.DataFrame, groups: pd.DataFrame) -> tuple:
    """``(matched, helm_runs, crossed)``: the new model's rows of the manifest's datasets (each with its ``column``),
    then the HELM runs and the other harness's results read for the datasets nothing matched by name."""
    from .cross_harness import cross_harness_rows
    from .helm_runs import helm_run_rows

    col = match_datasets(manifest["datasets"], long["benchmark"], long["dataset"], long["metric"])
    matched = long.assign(column=col).dropna(subset=["column"])
    # The other harness's results (lm-eval runs of a group chosen from HELM, or the reverse) for the datasets
    # nothing matched: mapped by the harness-name table, and said (the prompts differ).
    have = set(matched["column"])
    unmatched = long[pd.isna(pd.Series(col, index=long.index, dtype=object))]
    # HELM runs of a manifest chosen from a HELM leaderboard: its titles' run entries, the same harness.
    helm_runs = helm_run_rows([d for d in manifest["datasets"] if d["name"] not in have], unmatched)
    if not helm_runs.empty:
        matched = pd.concat([matched, helm_runs], ignore_index=True)
        have |= set(helm_runs["column"])
    crossed = cross_harness_rows([d for d in manifest["datasets"] if d["name"] not in have],
                                 pd.concat([unmatched, groups], ignore_index=True) if len(groups) else unmatched)
    if not crossed.empty:
        matched = pd.concat([matched, crossed], ignore_index=True)
    if matched.empty:
        partial = list(helm_runs.attrs.get("incomplete") or []) + list(crossed.attrs.get("incomplete") or [])
        raise HarnessExtError(mismatch_message(long, manifest) + "".join(f". {m}" for m in partial[:3]))
    return matched, helm_runs, crossed


def _manifest_shots_first(matched: pd.DataFrame, manifest: dict) -> tuple:
    """``(matched, other_shots)``: one row per model and column, the manifest's shot count first; ``other_shots`` maps
    ``(model, column)`` to the shot count used where only another one was there."""
    shots = {d["name"]: d.get("num_fewshot") for d in manifest["datasets"]}
    want = matched["column"].map(shots)
    # A score at another shot count is a different measurement: use it only when the manifest's is absent.
    other = want.notna() & (matched["num_fewshot"].astype("Float64") != want.astype("Float64")).fillna(True)
    matched = (matched.assign(_other=other.to_numpy(dtype=bool)).sort_values("_other", kind="stable")
               .drop_duplicates(["model", "column"], keep="first"))
    off = matched[matched["_other"]]
    return matched, {(mo, c): (None if pd.isna(n) else int(n)) for mo, c, n in zip(off["model"], off["column"], off["num_fewshot"])}


def model_variants(long: pd.DataFrame, store) -> dict:
    """``{model: (plain id, variant)}`` of the models in ``long`` (:func:`~harness_ext.store.matrix.query_results`
    rows) stored as a variant of a model (:func:`harness_ext.store.identity.stored_variants`), by the name the rows
    show them by: ``org/model (bfloat16)`` beside the same model at ``float16``, the plain id when it is the only one.
    """
    from ...store.identity import stored_non_default, stored_variants
    from ...types import variant_of_name

    stored = stored_variants(store)
    # An mteb experiment (a non-default run) names no precision: its records are not split into id and precision.
    for name in stored_non_default(store):
        stored.pop(name, None)
    out = {}
    for model, name in dict(zip(long["model"], long["model_name"])).items():
        plain = stored.get(name)
        variant = None if plain is None else variant_of_name(name, plain)
        if variant is not None:
            out[model] = (plain, variant)
    return out


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


def predict_from_manifest(manifest: dict, paths, manifest_path=None, level: float = DEFAULT_LEVEL,
                          adapter: Optional[str] = None) -> PredictionResult:
    """Predict every dataset of the manifest for each model found in the result files ``paths`` (read with
    ``adapter`` when given, else the format is detected).

    An item-level manifest (``reduce --items N``) is predicted from per-item logs by
    :func:`harness_ext.methods.reduction.item_predict.predict_items` instead."""
    from .lm_eval_release import old_estimate_note

    level = check_level(level)
    raw_new, _, other_shots = new_model_matrix(manifest, paths, adapter)
    pred = predict_scores(manifest, raw_new, other_shots, manifest_path=manifest_path, level=level)
    pred.warnings[:0] = [n for n in [old_estimate_note(manifest_path)] if n]  # said once, first
    return pred


def predict_scores(manifest: dict, raw_new: pd.DataFrame, other_shots=None, manifest_path=None,
                   level: float = DEFAULT_LEVEL) -> PredictionResult:
    """Predict every dataset of the manifest from raw scores (models x the manifest's dataset names, NaN where not run).

    ``other_shots`` maps ``(model, dataset)`` to the shot count of a score measured at another
    setting than the manifest's (:func:`new_model_matrix`). ``level``: the intervals' level
    (default 0.90); conformal intervals take their quantile at it, the others ``z`` standard
    deviations with ``z`` the normal quantile of ``level``.
    """
    from .predict_steps import (anchor_item_variance, beyond_scale_warnings, half_widths, input_warnings, predict_cells,
                                prediction_table)

    level = check_level(level)
    train = training_matrix(manifest)
    columns = list(train.columns)
    raw_new = raw_new.reindex(columns=columns)
    by_name = {d["name"]: d for d in manifest["datasets"]}
    check_scales(raw_new, train, by_name)
    params = params_frame({c: by_name[c]["normalisation"] for c in columns}, columns)
    floored = floor_at_chance(manifest)
    Z_new = apply_normalisation(raw_new.to_numpy(dtype=float), params, clip=floored)
    subset_idx = np.array([columns.index(s["name"]) for s in manifest["subset"]])
    warnings = chance_warnings(manifest) + [f"reading the new results: {n}" for n in raw_new.attrs.get("ingest_notes", ())]
    warnings += [f"reading the new results: {n}" for n in raw_new.attrs.get("dataset_links", ())]
    warnings += list(raw_new.attrs.get("release_notes", ()))  # results of an older lm-eval than the folder needs
    warnings += conflict_warnings(raw_new.attrs.get("ingest_conflicts") or [])
    warnings += item_conflict_warnings(raw_new.attrs.get("item_conflicts") or [])
    have, notes = input_warnings(manifest, raw_new, train, Z_new, subset_idx, other_shots or {})
    warnings += notes
    # The benchmark's own score (MMLU acc, size-weighted) is linear in the normalised scores: c + u . z.
    bench, bench_why = benchmark_score(manifest, columns)
    u = None if bench is None else bench.normalised_weights
    truth = None if bench is None else score_truth(manifest, train)  # scores below chance, as the score counts them
    train_X = train.to_numpy(dtype=float)
    observed = np.zeros(Z_new.shape, dtype=bool)
    observed[:, subset_idx] = have
    weights = np.array([by_name[c]["weight"] for c in columns], dtype=float)
    # The fit and the calibration on the manifest's folds take most of a minute on large benchmarks: a bar says so.
    bar = Stages(progress(None, total=2, desc="predict"), log, "predict")
    cells = predict_cells(manifest, train, train_X, Z_new, observed, subset_idx, weights, u, level, raw_new.index, bar,
                          truth)
    warnings += cells.warnings
    bar.update()
    bar.set_postfix_str("scores on the harness's scale")
    # Subset scores that are anchor-item estimates carry their own error into every cell and the aggregate.
    item_vars = anchor_item_variance(manifest, cells, train_X, Z_new, observed, subset_idx, weights, u, columns)
    # A regression can step outside the scale (below its floor, above 1); the score, like its interval, stays inside.
    # Only datasets on a known scale have ends; raw ones (--normalise none, e.g. CrossPred's negative BARTScores)
    # keep their own scale, or the interval would exclude the score.
    s_lo, s_hi = normalised_bounds(params, floored)
    mean = np.where(~observed, np.clip(cells.mean, s_lo, s_hi), cells.mean)
    agg = mean @ weights
    h_lo, h_hi, a_lo, a_hi, r_lo, r_hi = half_widths(manifest, cells, mean, train_X, observed, subset_idx, weights, u,
                                                     z_of(level), item_vars, truth)
    lower = np.clip(mean - h_lo, s_lo, s_hi)
    upper = np.clip(mean + h_hi, s_lo, s_hi)
    warnings += beyond_scale_warnings(raw_new.index, columns, observed, lower, upper, h_lo, h_hi, level)
    agg_actual = np.where(np.isnan(Z_new).any(axis=1), np.nan, Z_new @ weights)
    # An observed anchor-item estimate keeps its interval on the raw scale too.
    table = prediction_table(raw_new, params, observed, Z_new, mean, lower, upper, observed & (h_lo == 0) & (h_hi == 0))
    # ``raw`` is on each dataset's own metric (HELM's EM or F1, lm-eval's acc or acc_norm): the table names it.
    metrics = {d["name"]: d.get("metric") for d in manifest["datasets"]}
    table.insert(table.columns.get_loc("dataset") + 1, "metric", table["dataset"].map(metrics))
    if bench is not None and floored:
        warnings += floor_warnings(raw_new.index, bench, params, observed, Z_new, lower, truth is not None)
    n_new, d = mean.shape
    aggregate = aggregate_frame(raw_new.index, bench, table["raw"].to_numpy().reshape(n_new, d),
                                raw_new.to_numpy(dtype=float), observed, normalised_bounds(params, floored, weights),
                                (agg, agg - a_lo, agg + a_hi, agg_actual), (r_lo, r_hi), (s_lo, s_hi))
    if cells.frontier is not None:  # signed distance beyond the training models' edge (0 inside; methods.frontier)
        aggregate["frontier"] = np.asarray(cells.frontier, dtype=float)
    bar.update()
    bar.close()
    return PredictionResult(table=table, aggregate=aggregate, warnings=warnings, sources=raw_new.attrs.get("sources", {}),
                            variants=raw_new.attrs.get("variants", {}), shots_run=dict(other_shots or {}),
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
