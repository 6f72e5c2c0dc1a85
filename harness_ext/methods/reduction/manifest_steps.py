"""The steps of a reduction, in the order :func:`~harness_ext.methods.reduction.manifest.build_manifest` runs them.

Each step takes what the ones before it produced and returns a small record:

:func:`run_steps` runs them in turn and returns every record (:class:`Reduction`):

1. :func:`read_matrix` -- the matrix's facts, checked: enough models and datasets, the budget, dataset costs,
   datasets too rarely run to be chosen early (:class:`MatrixFacts`);
2. :func:`plan_models` -- the aggregate's weights, the predictor, the selector's parameters (:class:`ModelPlan`);
3. :func:`select_subset` -- the ordered subset, on a seeded sample of the models when there are many
   (:class:`Selection`);
4. :func:`plan_folds` -- the cross-validation's folds over models and the calibration's folds, which hold
   checkpoints of one training run together (:class:`FoldPlan`);
5. :func:`cross_validate` -- the subset's cross-validated error, random subsets of its size and the error
   against budget, in-sample (:class:`CrossValidation`);
6. :func:`calibrate` -- the selection re-run without each calibration fold, the nested error for a new model
   and its evidence in the benchmark's points, and the frontier (:class:`Calibration`).

The manifest's sections are then written from these records
(:mod:`harness_ext.methods.reduction.manifest`). The steps keep the order of every seeded
computation, so the same inputs and seed give the same manifest, byte for byte.

References
----------
Subramani, Gomez and Diab, SimBA (2025) §3 (the coverage subset, |S*|) and §4 (predicting the held-out
datasets from the subset).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pandas as pd

from ...errors import MethodError
from .budget import availability_rule, dataset_costs, parse_budget, subset_size
from .rules import MIN_MODELS, thin_columns

log = logging.getLogger("harness_ext.reduce")

#: Above this many models, selection and its cross-validated evidence run on a seeded sample of this many
#: (recorded as ``selection.model_sample``): each fold and candidate refits the predictor on the training
#: models, and 2,000 held-out models already pin an RMSE to a few percent of itself; the matrix's own
#: normalisation, weights and the manifest's model list keep every model.
MAX_SELECTION_MODELS = 2_000


def _num(v):
    """A manifest number: a float rounded to 10 digits, None for missing or non-finite."""
    if v is None:
        return None
    v = float(v)
    return None if not np.isfinite(v) else round(v, 10)


def raw_normalisation() -> dict:
    """The normalisation record of a column given as is (a DataFrame built by hand): its own scale, unclipped."""
    return {"description": "raw", "lo": 0.0, "span": 1.0, "flip": False, "chance": 0.0, "clip": False}


def facts_normalisations(facts) -> list:
    """Each column's normalisation record (:func:`raw_normalisation` for a column given as is)."""
    return [facts.meta.get(c, {}).get("normalisation") or raw_normalisation() for c in facts.columns]


# -- 1. the matrix ------------------------------------------------------------------------------------------
@dataclass
class MatrixFacts:
    """The checked matrix and what the budget and costs make of it (every model, not the selection's sample)."""

    X: np.ndarray  # models x datasets, float
    columns: list
    meta: dict  # the matrix's per-dataset metadata (``df.attrs["datasets"]``)
    missing: float  # share of missing cells
    thin_note: Optional[str]
    kind: str  # the budget's kind and value (:func:`~harness_ext.methods.reduction.budget.parse_budget`)
    value: Any
    demoted: Any  # datasets chosen only after every other, and the record of why
    availability: Optional[dict]
    cost_vec: Optional[np.ndarray]
    cost_source: Optional[str]

    @property
    def m(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]


def read_matrix(df: pd.DataFrame, budget=None, costs=None, min_availability: float = 0.5) -> MatrixFacts:
    """Check that ``df`` can be reduced and read its budget, availability and costs.

    Raises
    ------
    MethodError
        Fewer than :data:`MIN_MODELS` models, fewer than two datasets, no dataset with results from two
        models, or a cost budget without a cost per dataset.
    """
    X = df.to_numpy(dtype=float)
    m, d = X.shape
    if m < MIN_MODELS:
        raise MethodError(f"the matrix has {m} model{'' if m == 1 else 's'}; at least {MIN_MODELS} are needed to select "
                          "a subset and predict")
    if d < 2:
        raise MethodError(f"the matrix has {d} dataset; nothing to reduce")
    missing = float(np.isnan(X).mean())
    thin, thin_note = thin_columns(df.columns, (~np.isnan(X)).sum(axis=0))
    if len(thin) == d:
        raise MethodError("no dataset has results from two models: nothing can be learned about how datasets relate")
    kind, value = parse_budget(budget, d)
    columns = [str(c) for c in df.columns]
    # Counted on every model (not the selection's sample): what a new model is likely to be able to run.
    demoted, availability = availability_rule(columns, (~np.isnan(X)).sum(axis=0), m, min_availability)
    meta = df.attrs.get("datasets", {})
    cost_vec, cost_source = dataset_costs(costs, columns, meta)
    if kind == "cost" and cost_vec is None:
        raise MethodError("a cost budget needs a cost per dataset: the store has no sample counts for every dataset, "
                          "so give them with --costs FILE (CSV or JSON: dataset name -> cost)")
    return MatrixFacts(X, columns, meta, missing, thin_note, kind, value, demoted, availability, cost_vec, cost_source)


# -- 2. weights, predictor, selector parameters ----------------------------------------------------------
@dataclass
class ModelPlan:
    """The aggregate's weights, the predictor and the parameters the selector is given."""

    weights: pd.Series  # as the weighting scheme returned them (its ``attrs`` say how)
    w: np.ndarray  # in column order
    pred_reg: Any  # the predictor's registration
    est: Any  # an unfitted predictor
    sel_params: dict


def plan_models(df: pd.DataFrame, facts: MatrixFacts, *, selector: str, predictor: str, weighting: str,
                weighting_params: Optional[dict], random_state: int, selector_params: Optional[dict] = None,
                predictor_params: Optional[dict] = None) -> ModelPlan:
    """Weights of the aggregate, the predictor, and the selector's parameters: a selector that selects for
    prediction is given the manifest's predictor (with the user's ``predictor_params``), weights and (under a
    cost budget) costs; one with a ``size`` is given the budget's size; ``selector_params``: the user's
    (:func:`user_selector_params`)."""
    from ...plugin_manager import get_registration
    from ..pounce import make_predictor
    from ..weighting import compute_weights

    weights = compute_weights(df, scheme=weighting, random_state=random_state, **(weighting_params or {}))
    w = weights.reindex(facts.columns).to_numpy(dtype=float)
    pred_reg = get_registration("predictors", predictor)
    predictor_params = _unbounded_scales(pred_reg, facts, predictor_params)
    est = make_predictor(pred_reg.name, **user_predictor_params(pred_reg, predictor_params))
    sel_defaults = get_registration("selectors", selector).cls().get_params()
    sel_params = user_selector_params(selector, sel_defaults, selector_params, facts) if selector_params else {}
    if "predictor" in sel_defaults:  # selection for prediction: the manifest's predictor, weights and costs
        sel_params.update(predictor=pred_reg.name, weights=[_num(v) for v in w])
        if predictor_params and "predictor_params" in sel_defaults:
            sel_params["predictor_params"] = {**(sel_params.get("predictor_params") or {}), **predictor_params}
        if facts.cost_vec is not None and facts.kind == "cost":
            sel_params["costs"] = [float(c) for c in facts.cost_vec]
    if facts.kind in ("count", "fraction") and "size" in sel_defaults:  # the order is for this size (exhaustive if small)
        sel_params["size"] = subset_size(facts.kind, facts.value, facts.d, None)
    return ModelPlan(weights, w, pred_reg, est, sel_params)


def _unbounded_scales(reg, facts: MatrixFacts, params: Optional[dict]) -> Optional[dict]:
    """``params`` with ``scale_meta`` marking the datasets without a known scale (min-max over the observed
    models) as unbounded (``standardise``), for a predictor that takes it and when the user gave none: their
    normalised scores fill [0, 1] exactly, which the predictor would read as a proportion and so never predict a
    new model above the strongest training model (nor read a subset score above it)."""
    scales = [((facts.meta.get(c) or {}).get("normalisation") or {}).get("scale") for c in facts.columns]
    return unbounded_scale_meta(reg, scales, params)


def unbounded_scale_meta(reg, scales: list, params: Optional[dict]) -> Optional[dict]:
    """``params`` with ``scale_meta`` marking the columns whose store scale (``scales``, each column's
    ``normalisation["scale"]``) is ``unbounded`` as ``standardise``, when the predictor registered as ``reg`` takes
    ``scale_meta`` and ``params`` gives none; ``params`` unchanged otherwise (:func:`_unbounded_scales`)."""
    if (params or {}).get("scale_meta") is not None or "scale_meta" not in reg.cls().get_params():
        return params
    unbounded = [s == "unbounded" for s in scales]
    if not any(unbounded):
        return params
    return {**(params or {}), "scale_meta": [{"scale": "standardise"} if u else {} for u in unbounded]}


def user_predictor_params(reg, params: Optional[dict]) -> dict:
    """The user's predictor parameters (``reduce --predictor-param``), checked against the predictor's.

    Raises
    ------
    MethodError
        A parameter the predictor does not have.
    """
    unknown = sorted(set(params or {}) - set(reg.cls().get_params()))
    if unknown:
        raise MethodError(f"predictor {reg.name!r} has no parameter {', '.join(map(repr, unknown))}")
    return dict(params or {})


def check_selector_similarity(similarity: Optional[str], selector_params: Optional[dict]) -> None:
    """Refuse a similarity measure given twice with two values (``reduce --similarity X --selector-param
    similarity=Y``): the selector would run with one of them and the other would go unused unsaid.

    Raises
    ------
    MethodError
        ``similarity`` and ``selector_params["similarity"]`` name different measures (the same measure given
        twice, in any spelling of its name, is accepted).
    """
    from ...types import normalise_name

    other = (selector_params or {}).get("similarity")
    if similarity is None or other is None or normalise_name(str(similarity)) == normalise_name(str(other)):
        return
    raise MethodError(f"two similarity measures given: {similarity!r} (similarity=, --similarity) and {other!r} "
                      f"(selector_params similarity=, --selector-param similarity={other}); give one of them")


def weighting_with_file(weighting: str, weights, cli: bool = False) -> tuple:
    """``(scheme, its parameters)`` for ``reduce``'s weighting: a weights file is the ``user`` scheme.

    ``cli``: name the options as ``harness-ext reduce`` spells them (``--weights``), else as the Python API does.

    Raises
    ------
    MethodError
        A weights file given beside a scheme other than the default ``uniform`` or ``user`` (one of them would go
        unused unsaid).
    """
    if weights is None or weights == "":
        return weighting, {}
    if weighting not in ("uniform", "user"):  # the default, or the scheme a weights file runs
        raise MethodError(
            f"--weights {weights} gives the weights itself (--weighting user); it cannot be given with --weighting "
            f"{weighting}" if cli else f"weights={weights} gives the weights itself (weighting='user'); it cannot be "
            f"given with weighting={weighting!r}")
    return "user", {"path": str(weights)}


def user_selector_params(selector: str, defaults: dict, params: dict, facts: MatrixFacts) -> dict:
    """The user's selector parameters (``reduce --demote-saturated``), checked against the selector's; with
    ``demote_saturated`` and no ``ceilings``, each dataset's ceiling from its normalisation record
    (:func:`harness_ext.methods.prowl.saturation.dataset_ceilings`).

    Raises
    ------
    MethodError
        A parameter the selector does not have.
    """
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise MethodError(f"selector {selector!r} has no parameter {', '.join(map(repr, unknown))}"
                          + ("; --demote-saturated needs the prediction_greedy selector"
                             if "demote_saturated" in unknown else ""))
    out = dict(params)
    if out.get("demote_saturated") and "ceilings" in defaults and out.get("ceilings") is None:
        from ..prowl.saturation import dataset_ceilings

        out["ceilings"] = dataset_ceilings(facts_normalisations(facts), facts.X)
    return out


# -- 3. the subset -------------------------------------------------------------------------------------------
@dataclass
class Selection:
    """The ordered subset chosen on the selection's models (all, or a seeded sample of them)."""

    sample: Optional[np.ndarray]  # rows of the sample, in store order; None: every model
    X: np.ndarray  # the selection's rows
    n_runs: int  # random orders of the coverage baseline, and the rule that cut them (None: none)
    runs_rule: Optional[str]
    prowl: Any  # :func:`harness_ext.methods.prowl.run_prowl`'s result
    order_idx: np.ndarray  # the selector's order, as column indices
    k: int
    subset_idx: np.ndarray  # the first ``k`` of the order

    @property
    def m_sel(self) -> int:
        return self.X.shape[0]


def selection_sample(m: int, max_models: Optional[int], random_state: int) -> Optional[np.ndarray]:
    """Sorted rows of a seeded sample of ``max_models`` of ``m`` models (default :data:`MAX_SELECTION_MODELS`,
    0 every model); None when every model is used."""
    cap = MAX_SELECTION_MODELS if max_models is None else int(max_models)
    if 0 < cap < m:
        return np.sort(np.random.default_rng(random_state).choice(m, cap, replace=False))
    return None


def select_subset(df: pd.DataFrame, facts: MatrixFacts, plan: ModelPlan, *, budget, selector: str, similarity: str,
                  random_state: int, n_random: int, max_models: Optional[int]) -> Selection:
    """Run the selector (:func:`harness_ext.methods.prowl.run_prowl`) and cut its order at the budget.

    Raises
    ------
    MethodError
        When the budget is reached only with every dataset.
    """
    from ..prowl import run_prowl
    from .evidence import random_baseline_runs

    # Many models: selection and its evidence on a seeded sample (rows in store order), said in the manifest.
    sample = selection_sample(facts.m, max_models, random_state)
    if sample is not None:
        df_sel, X = df.iloc[sample], facts.X[sample]
    else:
        df_sel, X = df, facts.X
    d, kind, value, cost_vec = facts.d, facts.kind, facts.value, facts.cost_vec
    n_runs, runs_rule = random_baseline_runs(X.shape[0], d, int(n_random))  # past its cell budget: fewer random orders
    prowl = run_prowl(df_sel, similarity=similarity, selector=selector, random_state=random_state, n_random=n_runs,
                      target=value if kind == "coverage" else 0.95, selector_params=plan.sel_params,
                      demoted=facts.demoted)
    index_of = {c: i for i, c in enumerate(facts.columns)}
    order_idx = np.array([index_of[c] for c in prowl.order])
    k = subset_size(kind, value, d, prowl.coverage, None if cost_vec is None else cost_vec[order_idx])
    if k >= d:
        raise MethodError(
            f"the budget {budget} is reached only with all {d} datasets; choose a lower target "
            "or a count/fraction budget"
        )
    subset_idx = order_idx[:k]
    if facts.availability:  # how many of the rarely run datasets the subset needed
        facts.availability["n_in_subset"] = int(np.isin(subset_idx, facts.demoted).sum())
    return Selection(sample, X, n_runs, runs_rule, prowl, order_idx, k, subset_idx)


# -- 4. folds ------------------------------------------------------------------------------------------------
@dataclass
class FoldPlan:
    """Fold labels over models: the cross-validation's (on the selection's rows) and the calibration's."""

    labels: np.ndarray  # the cross-validation's, one per selection row
    runs: Optional[np.ndarray]  # training run of each model (None: no checkpoints)
    cal_labels: np.ndarray  # the calibration's, one per selection row (``labels`` itself when they agree)
    labels_all: np.ndarray  # the calibration's, one per model of the matrix
    reselection: str  # how each calibration fold re-selects, and the rule that chose it (None: the default)
    reselection_rule: Optional[str]

    @property
    def n_cal(self) -> int:
        """Calibration folds (fewer than asked with fewer models: one per model)."""
        return int(self.cal_labels.max()) + 1


def plan_folds(models, sample: Optional[np.ndarray], m_sel: int, d: int, n_splits: int,
               random_state: int) -> FoldPlan:
    """One fold label per model: the cross-validation's folds on the rows selection used, the same rule on the rest.

    ``predict`` calibrates its intervals on the calibration's folds, each observed on the subset chosen without
    it. ``models``: every model's name (checkpoints of one training run share a calibration fold).
    """
    from ..engine.newmodel_intervals import CALIBRATION_FOLDS, fold_labels, reselection_mode, run_groups

    m = len(models)
    labels = fold_labels(m_sel, n_splits, random_state)
    # The calibration's folds hold out checkpoints of one training run together (newmodel_intervals.run_groups
    # says why; None: no checkpoints, plain folds). The cross-validation's stay the selector's, whose fits it shares.
    runs = run_groups(models)
    runs_sel = None if runs is None else runs[sample] if sample is not None else runs
    # The calibration's folds: more than the cross-validation's, so that each fold's re-run selection sees nearly
    # as many models as the manifest's did (newmodel_intervals.CALIBRATION_FOLDS says why).
    # Past SAME_RESELECTION_CELLS the folds re-select on the design criterion: then the cross-validation's folds,
    # whose fits are already made (10 more ALS fits took 100 s and 2 GB more on the 20,000 x 2,000 benchmark).
    reselection, reselection_rule = reselection_mode(m_sel * d)
    n_cal = CALIBRATION_FOLDS if reselection == "same" else n_splits
    cal_labels = (fold_labels(m_sel, n_cal, random_state, runs_sel) if n_cal != n_splits or runs_sel is not None
                  else labels)
    n_cal = int(cal_labels.max()) + 1  # fewer with fewer models (one per model)
    if sample is not None:
        rest = np.setdiff1d(np.arange(m), sample)
        labels_all = np.empty(m, dtype=int)
        labels_all[sample] = cal_labels
        labels_all[rest] = (fold_labels(rest.size, min(n_cal, rest.size), random_state,
                                        None if runs is None else runs[rest]) if rest.size >= 2 else 0)
    else:
        labels_all = cal_labels
    return FoldPlan(labels, runs, cal_labels, labels_all, reselection, reselection_rule)


# -- 5. cross-validation, in-sample evidence ------------------------------------------------------------------
@dataclass
class CrossValidation:
    """The subset's cross-validated error on the selection's folds, and the in-sample evidence beside it."""

    folds: list
    cache: dict  # per-fold fits shared by every cross-validation (and the selector's, and the calibration's)
    cv: dict  # the manifest's ``prediction.cross_validation`` before rounding
    cv_err: Any
    rmse_d: np.ndarray  # per dataset
    n_draws: int  # random subsets compared with the chosen one, and the rule that cut them (None: none)
    ev_rule: Optional[dict]
    vs_random: Any
    curve: list  # error against budget


def cross_validate(facts: MatrixFacts, plan: ModelPlan, sel: Selection, fp: FoldPlan, *, random_state: int,
                   n_random_subsets: Optional[int], bar) -> CrossValidation:
    """Cross-validate the subset on the selection's folds, against random subsets of its size, and the error of
    each prefix of the order (``bar``: the reduction's progress stages)."""
    from ..engine.newmodel_intervals import label_folds
    from ..engine.subset_cv import shared_cache, subset_errors
    from .evidence import budget_curve, budget_sizes, compare_with_random, evidence_counts

    X, est, w, d, k, kind, value = sel.X, plan.est, plan.w, facts.d, sel.k, facts.kind, facts.value
    folds = label_folds(fp.labels)
    cache = shared_cache(X, est, folds)  # per-fold fits shared by every cross-validation below (and the selector's)
    bar.update()
    bar.set_postfix_str("cross-validating")
    [cv_err] = subset_errors(X, [sel.subset_idx], est, weights=w, folds=folds, cache=cache)
    cv = {"n_splits": len(folds), "random_state": int(random_state), "rmse": cv_err.overall,
          "aggregate_rmse": cv_err.aggregate}
    rmse_d = np.asarray(cv_err.per_dataset, dtype=float)
    fast = hasattr(est, "predict_subsets")
    sizes, n_rand, ev_rule = budget_sizes(d, k, 12 if fast else 8), 5 if fast else 3, None
    n_draws = n_random_subsets if n_random_subsets is not None else (200 if fast else 20)
    if n_random_subsets is None:  # default counts: fewer random subsets past the evidence's flops budget
        n_draws, n_rand, ev_rule = evidence_counts(sel.m_sel, d, n_draws, len(sizes), n_rand)
    bar.update()
    bar.set_postfix_str(f"{n_draws} random subsets")
    vs_random = compare_with_random(X, sel.subset_idx, est, n_draws=n_draws, folds=folds, weights=w,
                                    random_state=random_state, cache=cache,
                                    costs=facts.cost_vec if kind == "cost" else None,
                                    cost_budget=value if kind == "cost" else None)
    bar.update()
    bar.set_postfix_str("error against budget")
    curve = budget_curve(X, sel.order_idx, est, sizes=sizes, folds=folds, weights=w, n_random=n_rand,
                         random_state=random_state, costs=facts.cost_vec, cache=cache)
    return CrossValidation(folds, cache, cv, cv_err, rmse_d, n_draws, ev_rule, vs_random, curve)


# -- 6. nested calibration, evidence for a new model -----------------------------------------------------------
@dataclass
class Calibration:
    """The selection re-run without each calibration fold, and the error and evidence for a new model."""

    fold_subs: list  # the subset chosen without each calibration fold (column indices)
    nested: Any  # :func:`~harness_ext.methods.reduction.evidence.nested_subset_error`
    exp_agg: float  # the expected aggregate RMSE for a new model (nested where finite)
    honest: dict  # :func:`~harness_ext.methods.reduction.evidence.new_model_evidence`
    frontier: Optional[dict]  # :func:`~harness_ext.methods.engine.frontier_report.frontier_expectation`
    fold_saturated: list = field(default_factory=list)  # per fold, the columns its selection demoted as saturated


def calibrate(df: pd.DataFrame, facts: MatrixFacts, plan: ModelPlan, sel: Selection, fp: FoldPlan,
              cv: CrossValidation, *, selector: str, similarity: str, random_state: int) -> Calibration:
    """Re-run the selection without each calibration fold, score each fold's models on the subset chosen without
    them (the nested error ``predict`` calibrates on), compare with random subsets on the same folds in the
    benchmark's points, and measure the frontier."""
    from ..engine.frontier_report import frontier_expectation
    from ..engine.newmodel_intervals import FoldSubsets, label_folds, select_fold_subsets
    from .fold_selection import fold_selector
    from ..engine.subset_cv import shared_cache
    from .evidence import mixed_points_weights, nested_subset_error, new_model_evidence

    X, est, w, k, kind, value = sel.X, plan.est, plan.w, sel.k, facts.kind, facts.value
    cache = cv.cache
    reselect = fold_selector(
        X, selector, k=k, sel_params=plan.sel_params, similarity=similarity, random_state=random_state, kind=kind,
        value=value, cost_vec=facts.cost_vec, fixed=cache.get("settings"), mode=fp.reselection,
        demoted=facts.demoted)
    fold_subs = select_fold_subsets(fp.cal_labels, reselect)
    same = fp.cal_labels is fp.labels
    cal_folds = cv.folds if same else label_folds(fp.cal_labels)
    cal_cache = cache if same else shared_cache(X, est, cal_folds)
    if cache.get("settings") is not None:  # the rank/penalty chosen on every model, not searched again
        cal_cache.setdefault("settings", cache["settings"])
    nested = nested_subset_error(X, fold_subs, est, folds=cal_folds, weights=w, cache=cal_cache)
    exp_agg = nested.aggregate_rmse if np.isfinite(nested.aggregate_rmse) else cv.cv_err.aggregate
    # For a new model, in the benchmark's points: the nested error, and random subsets on the same held-out models.
    norms = facts_normalisations(facts)
    metrics = [facts.meta.get(c, {}).get("metric") for c in facts.columns]
    honest = new_model_evidence(X, df.to_numpy(dtype=float), norms, fold_subs, est, nested, k=k, n_draws=cv.n_draws,
                                folds=cal_folds, weights=w, random_state=random_state, cache=cal_cache,
                                costs=facts.cost_vec if kind == "cost" else None,
                                cost_budget=value if kind == "cost" else None, metrics=metrics)
    # a new model beyond the training models' range; the rank/penalty chosen on every model (no search again)
    fixed = cache.get("settings")
    frontier = frontier_expectation(est if fixed is None else fixed, X, sel.subset_idx, w,
                                    points=mixed_points_weights(w, norms, df.to_numpy(dtype=float), metrics),
                                    reselect=FoldSubsets(fp.cal_labels, fold_subs))
    return Calibration(fold_subs, nested, exp_agg, honest, frontier, reselect.saturated)


# -- the pipeline -------------------------------------------------------------------------------------------
@dataclass
class Reduction:
    """Every step's record, from which the manifest's sections are written."""

    facts: MatrixFacts
    plan: ModelPlan
    sel: Selection
    folds: FoldPlan
    cv: CrossValidation
    cal: Calibration


def run_steps(df: pd.DataFrame, *, budget, selector: str, similarity: str, predictor: str, weighting: str,
              weighting_params: Optional[dict], random_state: int, n_random: int, n_splits: Optional[int],
              costs, n_random_subsets: Optional[int], max_models: Optional[int],
              min_availability: float, selector_params: Optional[dict] = None,
              predictor_params: Optional[dict] = None) -> Reduction:
    """Run the steps of a reduction in order (parameters as
    :func:`~harness_ext.methods.reduction.manifest.build_manifest`'s)."""
    from ...report import Stages, progress

    check_selector_similarity(similarity, selector_params)
    facts = read_matrix(df, budget, costs, min_availability)
    # Stages of a few seconds each on real benchmarks: a bar (stderr, only on a terminal) says which one runs.
    bar = Stages(progress(None, total=6, desc="reduce"), log, "reduce")
    bar.set_postfix_str("weights")
    plan = plan_models(df, facts, selector=selector, predictor=predictor, weighting=weighting,
                       weighting_params=weighting_params, random_state=random_state, selector_params=selector_params,
                       predictor_params=predictor_params)
    bar.update()
    bar.set_postfix_str("selecting the subset")
    sel = select_subset(df, facts, plan, budget=budget, selector=selector, similarity=similarity,
                        random_state=random_state, n_random=n_random, max_models=max_models)
    folds = plan_folds(df.index, sel.sample, sel.m_sel, facts.d, n_splits or 5, random_state)
    cv = cross_validate(facts, plan, sel, folds, random_state=random_state, n_random_subsets=n_random_subsets,
                        bar=bar)
    bar.update()
    bar.set_postfix_str(f"selection without each of {folds.n_cal} folds")
    # The similarity the selection ran with (its selector's default when none was given), not pounce's default.
    cal = calibrate(df, facts, plan, sel, folds, cv, selector=selector, similarity=sel.prowl.similarity,
                    random_state=random_state)
    bar.update()
    bar.close()
    return Reduction(facts, plan, sel, folds, cv, cal)
