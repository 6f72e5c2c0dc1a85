"""``reduce`` as a function: a matrix in, a :class:`ReduceResult` (manifest + evidence) out.

The manifest itself (its fields, schema, budgets, costs, writers) is
:mod:`harness_ext.methods.reduction.manifest`; this module runs a reduction end to end
and wraps the manifest in a typed result that renders itself (the summary the
command prints), exports its tables (subset, error-vs-budget curve), draws the
error-vs-budget figure and writes the harness files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from ...report import Result, plural
from .budget import DEFAULT_BUDGET_TEXT
from .explained import explained_share, low_share_text
from .item_design_cost import random_documents_line
from .manifest import DEFAULT_SELECTOR, attach_lm_eval_tasks, build_manifest, write_outputs

__all__ = ["DEFAULT_FORMATS", "ReduceResult", "reduce_matrix"]

#: The manifest writers ``reduce`` runs by default.
DEFAULT_FORMATS = ("json", "lm_eval_yaml", "helm_conf", "task_list")


def _pts(v) -> str:
    """An error for the summary: 3 significant digits (2.07 points, 0.0371 normalised units)."""
    return "-" if v is None else f"{v:.3g}"


class ReduceResult(Result):
    """A reduction: the manifest, the chosen subset and the evidence for it.

    Attributes
    ----------
    manifest : dict
        The manifest (``harness_ext/schema/manifest-v1.schema.json``); write it with :meth:`write`.
    subset : list of str
        The chosen datasets, in selection order.
    expected_error : dict
        Cross-validated error of the predicted full-benchmark score for a new model (``aggregate_rmse``,
        the 90% half-width ``aggregate_interval_90``) and per cell (``rmse``), nested (``nested``: each
        fold's models reveal the subset chosen without them, as ``predict`` calibrates), in normalised
        units; ``points``: the same in the benchmark's points (``unit``), where its scale allows.
    random_subsets : dict
        The selection against random subsets of its size, out of sample (same predictor and held-out
        models; aggregate errors in its ``unit``). ``manifest["evidence"]["random_subsets_in_sample"]``
        is the in-sample comparison (optimistic).
    out, written
        The folder and files of the last :meth:`write` (``None`` and ``[]`` before).

    Examples
    --------
    >>> res = harness_ext.reduce(matrix, budget=8)          # doctest: +SKIP
    >>> res.subset, res.expected_error["aggregate_interval_90"]  # doctest: +SKIP
    >>> res.write("reduced"); res.plot("error_vs_budget.png")  # doctest: +SKIP
    """

    title = "reduce"
    command = "reduce"
    floatfmt = "{:.4f}"

    def __init__(self, manifest: dict, out=None, written: Sequence = ()):
        self.manifest = manifest
        self.out = None if out is None else Path(out)
        self.written = [Path(p) for p in written]

    # -- the evidence ---------------------------------------------------------------------
    @property
    def subset(self) -> list:
        return [s["name"] for s in self.manifest["subset"]]

    @property
    def expected_error(self) -> dict:
        return dict(self.manifest["prediction"]["expected_error"])

    @property
    def random_subsets(self) -> dict:
        return dict((self.manifest.get("evidence") or {}).get("random_subsets") or {})

    @property
    def warnings(self) -> list:
        return list(self.manifest.get("warnings") or [])

    def budget_curve(self):
        """Cross-validated error against budget (one row per subset size), as a DataFrame."""
        import pandas as pd

        rows = (self.manifest.get("evidence") or {}).get("budget_curve") or []
        chosen = self.manifest["selection"]["subset_size"]
        frame = pd.DataFrame(rows)
        if not frame.empty:
            frame["chosen"] = frame["k"] == chosen
            frame = frame.set_index("k")
        return frame

    def tables(self) -> dict:
        import pandas as pd

        cv = {d["name"]: d.get("cv_rmse") for d in self.manifest["datasets"]}
        subset = pd.DataFrame([{"step": s["step"], "dataset": s["name"], "coverage": s.get("coverage"),
                                "cv_rmse": cv.get(s["name"])} for s in self.manifest["subset"]]).set_index("step")
        # A subset dataset is observed, not predicted: no cross-validated error (None), a float NaN in the frame.
        subset = subset.astype({"coverage": "float64", "cv_rmse": "float64"})
        return {"subset": subset, "budget_curve": self.budget_curve()}

    def summary(self) -> dict:
        """The figures for a new model first (out of sample, in the benchmark's points where its scale allows);
        the in-sample ones are named so."""
        sel, src, err = self.manifest["selection"], self.manifest["source"], self.expected_error
        r, pts = self.random_subsets, err.get("points") or {}
        ins = dict((self.manifest.get("evidence") or {}).get("random_subsets_in_sample") or {})
        return {"n_models": src["n_models"], "n_datasets": src["n_datasets"], "subset_size": sel["subset_size"],
                "predictor": self.manifest["prediction"]["predictor"]["name"],
                "unit": pts.get("unit", "normalised units"),
                "expected_aggregate_rmse": pts.get("aggregate_rmse", err["aggregate_rmse"]),
                "expected_aggregate_interval_90": pts.get("aggregate_interval_90", err["aggregate_interval_90"]),
                "random_aggregate_rmse": r.get("random_aggregate_rmse_mean"), "random_ratio": r.get("ratio"),
                "beats_random": r.get("beats"),
                "aggregate_rmse": err["aggregate_rmse"], "aggregate_interval_90": err["aggregate_interval_90"],
                "rmse": err["rmse"], "coverage_in_sample": sel["coverage"],
                "random_ratio_in_sample": ins.get("ratio"), "beats_random_in_sample": ins.get("beats"),
                "explained_share": explained_share(self.manifest),
                **_frontier_summary(err),
                **({"subset_near_ceiling": [h["name"] for h in near["in_subset"]]}
                   if (near := sel.get("subset_saturated")) else {}),
                **({"n_excluded_models": src["excluded_models"]["n_models"]} if "excluded_models" in src else {})}

    def render(self) -> str:
        """The summary ``harness-ext reduce`` prints: the error for a new model first, in benchmark points."""
        from ..prowl.saturation import saturation_summary
        from .evidence import beats_random, share_beaten_text

        manifest = self.manifest
        sel, pred = manifest["selection"], manifest["prediction"]
        src, err = manifest["source"], manifest["prediction"]["expected_error"]
        pts = err.get("points")
        unit = pts["unit"] if pts else "normalised units"
        agg, half = (pts["aggregate_rmse"], pts["aggregate_interval_90"]) if pts else (
            err["aggregate_rmse"], err["aggregate_interval_90"])
        k = sel["subset_size"]
        lines = [
            f"reduced {src['n_datasets']} datasets to {k} ({k / src['n_datasets']:.0%}) using {src['n_models']} models"
            + (f" ({ex['n_models']} left out by --exclude-models)" if (ex := src.get("excluded_models")) else "")
            # A defaulted budget is said where the size is, so a user knows it was chosen for them and how to change it.
            + (f"; default budget: {DEFAULT_BUDGET_TEXT} (--budget, or budget= in Python, to choose)"
               if sel["budget"].get("default") else ""),
            f"subset: {', '.join(s['name'] for s in manifest['subset'])}",
            *([f"availability: {av['rule']}; {len(av['demoted'])} such datasets, {av['n_in_subset']} in the subset"]
              if (av := sel.get("availability")) else []),
            *([saturation_summary(sat)] if (sat := sel.get("saturation")) else []),
            f"expected error for a new model (out of sample: the selection re-run without each fold's models), "
            f"{pred['predictor']['name']} predictor: RMSE {_pts(agg)} {unit} on the full-benchmark score (90% "
            f"interval +/- {_pts(half)})" + (f"; per dataset {_pts(pts['rmse'])}" if pts and pts.get("rmse") is not None
                                             else "")
            + (f"; the subset predicts {share:.0%} of these models' spread on that score" if (
                share := explained_share(manifest)) is not None and share >= 0 else ""),
        ]
        ev = manifest.get("evidence") or {}
        r = ev.get("random_subsets") or {}
        if r.get("ratio") is not None:
            verdict = f"{share_beaten_text(r, 'them')}; {_random_verdict(r, beats_random(r))}"
            lines.append(
                f"against {r['n_draws']} random {k}-dataset subsets, out of sample (same predictor, same held-out "
                f"models): RMSE {_pts(r['chosen_aggregate_rmse'])} vs {_pts(r['random_aggregate_rmse_mean'])} on "
                f"average (ratio {r['ratio']:.2f}); {verdict}")
        if low := low_share_text(share):  # said beside the frontier, the models it concerns
            lines.append(low)
        lines += _frontier_lines(err)
        if (near := sel.get("subset_saturated")) and (hits := near.get("in_subset")):
            lines.append(f"the subset holds {plural(len(hits), 'dataset')} near {'its' if len(hits) == 1 else 'their'} "
                         f"ceiling ({', '.join(h['name'] for h in hits[:4])}{' ...' if len(hits) > 4 else ''}): a "
                         "model stronger than these cannot show it there, which the frontier folds above do not "
                         "measure (see the warning; --demote-saturated chooses around them)")
        ins = ev.get("random_subsets_in_sample") or {}
        cov = f"coverage (Pearson of mean win rates, full vs subset) {sel['coverage']:.3f}" + (
            f" vs {sel['random_baseline']['mean_coverage_at_k']:.3f} for random subsets"
            if sel["random_baseline"]["mean_coverage_at_k"] is not None else "")
        lines.append(f"in-sample (scored on the models that chose the subset, so optimistic): {cov}"
                     + (f"; RMSE ratio to random subsets {ins['ratio']:.2f}" if ins.get("ratio") is not None else ""))
        if ev.get("costs"):
            c = ev["costs"]
            lines.append(f"cost of the subset: {c['subset']:g} of {c['total']:g} ({c['share']:.1%}; {c['source']})")
        if ev.get("random_documents") and (line := random_documents_line(ev["random_documents"])):
            lines.append(line)
        if ev.get("budget_curve"):
            lines += self._curve_lines(ev["budget_curve"], k)
        return "\n".join(lines)

    def _curve_lines(self, curve: list, k: int) -> list:
        """The error-against-budget table, in points when one factor converts every dataset (in-sample)."""
        f, unit = _points_factor(self.expected_error)
        show = (lambda v: "-" if v is None else _pts(v * f))
        lines = [f"error against budget (in-sample: prefixes of the order chosen on every model; RMSE in {unit}; "
                 "90% interval width = 3.29 x RMSE):",
                 f"  {'k':>4} {'cost':>10} {'aggregate':>10} {'width 90%':>10} {'per dataset':>11} {'random agg':>10}"]
        for row in curve:
            mark = " <- chosen" if row["k"] == k else ""
            lines.append(f"  {row['k']:>4} {row['cost']:>10g} {show(row['aggregate_rmse']):>10} "
                         f"{show(row['interval_width_90']):>10} {show(row['rmse']):>11} "
                         f"{show(row.get('random_aggregate_rmse')):>10}{mark}")
        return lines

    def to_dict(self) -> dict:
        """``{"title", "summary", "tables", "out", "written", "manifest"}`` (what ``reduce --json`` writes)."""
        doc = super().to_dict()
        doc.update(out=None if self.out is None else str(self.out), written=[str(p) for p in self.written],
                   manifest=self.manifest)
        return doc

    # -- outputs --------------------------------------------------------------------------
    def write(self, out, formats: Sequence[str] = DEFAULT_FORMATS) -> list:
        """Write the manifest with each named manifest writer into folder ``out``; returns the paths.

        Every writer runs, and every file it returns is checked, before anything appears in
        ``out`` (:func:`harness_ext.methods.reduction.manifest.write_outputs`): a refused name leaves the
        folder as it was.
        """
        paths = write_outputs(self.manifest, out, formats)
        self.out = Path(out)
        self.written = list(paths)
        return paths

    def plot(self, path=None):
        """The error-vs-budget figure: the chosen prefixes against random subsets, cross-validated.

        Returns the path written, or the matplotlib figure when ``path`` is None.
        """
        from .evidence import plot_budget_curve

        ev = self.manifest["evidence"]
        f, unit = _points_factor(self.expected_error)  # the printed table's unit
        return plot_budget_curve(ev["budget_curve"], path,
                                 title=f"{self.manifest['group_name']}: error against budget\n(in-sample: prefixes of "
                                       "the order chosen on every model)",
                                 chosen_k=self.manifest["selection"]["subset_size"],
                                 cost_label="cost of the subset" if ev.get("costs") else "datasets run", factor=f, unit=unit)


def _points_factor(err: dict) -> tuple:
    """``(points per normalised unit, unit)`` of an aggregate error computed with the manifest's weights: the points
    aggregate over the normalised one (both for the same weights) when one factor converts every dataset (the
    manifest then has a per-dataset points ``rmse``); else ``(1.0, "normalised units")``: with datasets of different
    factors the points aggregate weighs them differently, so no ratio converts."""
    pts = err.get("points") or {}
    if pts.get("rmse") is not None and err["aggregate_rmse"]:
        return pts["aggregate_rmse"] / err["aggregate_rmse"], pts["unit"]
    return 1.0, "normalised units"


def _frontier_summary(err: dict) -> dict:
    """The frontier folds' aggregate MAE, bias and 90% coverage, when calibrated: in points (the folds' errors under
    the points weights where datasets differ in points per unit; else :func:`_points_factor`'s conversion)."""
    fr = err.get("frontier") or {}
    if not fr.get("calibrated") or fr.get("aggregate_mae") is None:
        return {}
    f, unit = _points_factor(err)
    mae, bias = fr["aggregate_mae"] * f, fr["aggregate_bias"] * f
    if fr.get("points"):
        mae, bias, unit = fr["points"]["aggregate_mae"], fr["points"]["aggregate_bias"], fr["points"]["unit"]
    return {"frontier_aggregate_mae": mae, "frontier_aggregate_bias": bias,
            "frontier_coverage_90": fr.get("aggregate_coverage_90"), "frontier_held_out_models": fr["held_out_models"],
            "frontier_unit": unit}


def _frontier_lines(err: dict) -> list:
    """The frontier folds' expected error for a model stronger than those that chose the subset, in the summary's
    unit, with what the folds cannot see: they hold out the strongest models *of this population*, so a model beyond
    all of them can err more than they show (docs/frontier.md measures how much on the shared matrices)."""
    fs = _frontier_summary(err)
    fr = err.get("frontier") or {}
    if not fs and fr and not fr.get("calibrated") and fr.get("reason"):
        # Too few models for frontier folds: no figure to quote, but a user of a small board should hear that the
        # error for a stronger model is unmeasured and how predict treats one.
        return [f"at the frontier of these models: not measured: {fr['reason']}; a model stronger than every one of "
                "these can err several times the error above (docs/frontier.md)"]
    if not fs:
        return []
    cov = fs["frontier_coverage_90"]
    # What the folds measured, named as theirs: on the frontier splits of 20 leaderboards (7 shared, 13 never seen
    # when measured), the predictor fitted as reduce fits it, the models beyond every training model erred a median
    # 1.5 times the folds' error, up to 10.3, and their intervals held from 0.30 to 1.00 (docs/frontier.md,
    # Measured), so neither figure is an expectation for such a model.
    return [f"at the frontier of these models (folds that hold out their strongest from fits on the rest, "
            f"{fs['frontier_held_out_models']} different models): mean |error| {_pts(fs['frontier_aggregate_mae'])} "
            f"{fs['frontier_unit']} on the full-benchmark score, bias (prediction - truth) "
            f"{fs['frontier_aggregate_bias']:+.3g}"
            + (f", the folds' own 90% intervals covered {cov:.2f}" if cov is not None else "")
            + ("; too few models held out to choose a blend on, so predict treats a stronger model as in a small "
               "population (docs/frontier.md)" if fr.get("folds_estimator") else "")
            + "; a model stronger than every one of these is an extrapolation the folds did not see: it usually errs "
              "more (on the frontier splits of 20 leaderboards, the predictor fitted as reduce fits it, a median "
              "1.5 times the folds' error, up to 10.3 times) and its interval can hold less often (docs/frontier.md, "
              "Measured)"]


def _random_verdict(r: dict, beats: bool) -> str:
    """The paired test named with its level, and what the comparison with random subsets claims."""
    from .evidence import BEATS_RANDOM, PAIRED_ALPHA

    test = r.get("paired_test") or {}
    alpha = float(test.get("level") or PAIRED_ALPHA)
    rule = f"ahead of {BEATS_RANDOM:.0%} of them and p < {alpha:g}"
    if test.get("p_value") is None:
        p = "too few held-out models with every cell for a paired test"
    else:  # manifests written before the test was corrected do not name it
        name = ("corrected paired t-test" if test.get("test") else "paired t-test")
        p = f"{name} over {test['n_folds']} folds of held-out models, one-sided: p = {test['p_value']:.2g}"
    if beats:
        return (f"{p}: better than random subsets of that size ({rule}; on data with no structure this rule says so "
                f"for about {alpha:.0%} of matrices)")
    return f"{p}: not shown to beat random subsets of that size (that needs {rule})"


def reduce_matrix(df, *, budget: Optional[str] = None, selector: str = DEFAULT_SELECTOR, similarity: Optional[str] = None,
                  predictor: str = "lowrank", weighting: str = "uniform", weighting_params: Optional[dict] = None,
                  random_state: int = 0, n_random: int = 200, group_name: str = "harness_ext_reduced",
                  db: Optional[str] = None, costs=None, n_random_subsets: Optional[int] = None,
                  items: Optional[int] = None, local_data=(), min_availability: Optional[float] = None,
                  selector_params: Optional[dict] = None, predictor_params: Optional[dict] = None) -> ReduceResult:
    """Select a subset of ``df``'s datasets, build its manifest and find where its lm-eval tasks are defined.

    Parameters are those of :func:`harness_ext.methods.reduction.manifest.build_manifest`; ``db`` is also
    where the lm-eval task configurations recorded at ingest are looked up. ``items``: run only
    this many anchor items of each subset task that has per-sample logs in ``db``
    (:mod:`harness_ext.methods.reduction.items`); the lm-eval files then carry ``--samples``.
    ``local_data``: folders of the user's own task data; absolute data paths the kept task
    configurations name inside them are written into the task YAMLs (others are left out).
    ``min_availability``: datasets run by fewer than this share of the models are chosen
    last (None: :data:`~harness_ext.methods.reduction.budget.MIN_AVAILABILITY`). ``selector_params``: more
    parameters of the selector (``{"demote_saturated": True}``); ``predictor_params``: of the predictor
    (``{"rank": 3}``), recorded in the manifest and used by ``predict``.

    Returns
    -------
    ReduceResult

    References
    ----------
    SimBA §3-4 (coverage subset, prediction); Hastie, Tibshirani & Friedman (2009) §7.10 (the cross-validated
    evidence, over held-out models).
    """
    manifest = build_manifest(
        df, budget=budget, selector=selector, similarity=similarity, predictor=predictor, weighting=weighting,
        weighting_params=weighting_params, random_state=random_state, n_random=n_random, group_name=group_name,
        db=db, costs=costs, n_random_subsets=n_random_subsets, selector_params=selector_params,
        predictor_params=predictor_params, **({} if min_availability is None else {"min_availability": min_availability}))
    attach_lm_eval_tasks(manifest, db, local_data)
    if items:
        from .items import attach_items

        attach_items(manifest, db, int(items), random_state)
    from .lm_eval_release import attach_release

    attach_release(manifest)  # the lm-eval release the written folder needs, once its tasks and items are known
    return ReduceResult(manifest)
