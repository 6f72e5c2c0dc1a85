"""The reduced-benchmark manifest: what ``reduce`` records, validates, reads back and writes.

A manifest records everything needed to repeat a reduction and to use it: the
source matrix (fingerprint, query, models, datasets, normalisation), the
selector and similarity with their ``get_params()`` and seed, the ordered
subset with the coverage after each step, the predictor with its
cross-validated error, the subset the selection chooses without each
cross-validation fold of models (``prediction.calibration``: ``predict``
calibrates its intervals on held-out models that did not choose what they
reveal, and ``expected_error`` is cross-validated the same way), the weighting
used for the full-benchmark aggregate, the tool version and warnings. It contains no timestamps, so the same inputs and
seed give a byte-identical manifest.

The JSON Schema is ``harness_ext/schema/manifest-v1.schema.json``.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Optional

import pandas as pd

from ... import __version__
from ...errors import HarnessExtError
from ...report import jsonable, plural
from ...store.floor import unfloored
from .budget import DEFAULT_BUDGET_REASON, MIN_AVAILABILITY, availability_note
# The steps of a reduction; their number format, used by the manifest's sections too (and named here, where it was
# first).
from .manifest_steps import MAX_SELECTION_MODELS, _num, facts_normalisations, raw_normalisation, run_steps  # noqa: F401
from .manifest_validation import MANIFEST_VERSION  # noqa: F401 (written into every manifest; also read from here)
from .rules import DEFAULT_PREDICTOR, DEFAULT_PREDICTOR_REASON, MIN_MODELS, thin_columns  # noqa: F401

#: reduce's default selector, and why (recorded in every manifest that uses it).
DEFAULT_SELECTOR = "prediction_greedy"
DEFAULT_SELECTOR_REASON = (
    "prediction_greedy is the default because it chooses the subset for what reduce promises -- predicting the rest "
    "of the benchmark -- and did so better than SimBA's greedy_coverage on held-out models: benchmarks/"
    "quality_holdout.py --quick --protocols a (2 seeded 80/20 model splits, 10% budget, predictor lowrank) gave "
    "aggregate MAE 2.48 vs 3.27 points and Spearman 0.940 vs 0.912 on HELM Classic, 1.19 vs 1.48 points and 0.952 vs "
    "0.869 on the TSC bake-off")
#: Below this many models the manifest carries a warning.
FEW_MODELS = 10
#: Embed the training matrix when it has at most this many cells, so predict needs no store.
EMBED_MAX_CELLS = 2_000_000
#: Two-sided 90% normal quantile, for intervals from a cross-validated RMSE.
Z90 = 1.6448536269514722


def _numbers(block: dict) -> dict:
    """``block`` with every float, nested blocks' too, a manifest number (:func:`_num`): a figure left at full
    precision carried the last digits' rounding, which differ between numpy releases, into the manifest."""
    return {k: _num(v) if isinstance(v, float) else _numbers(v) if isinstance(v, dict) else v for k, v in block.items()}


def schema() -> dict:
    """The manifest's JSON Schema."""
    return json.loads((files("harness_ext") / "schema" / "manifest-v1.schema.json").read_text())


def validate_manifest(manifest: dict, path="manifest") -> None:
    """Raise HarnessExtError if ``manifest`` is not one ``predict`` can use.

    Checks the version, the JSON Schema, and what a schema cannot express
    (:mod:`harness_ext.methods.reduction.manifest_validation`).
    """
    import jsonschema

    from ...safe_output import check_group_name
    from .manifest_validation import check_consistency, check_numbers, check_structure, check_version, schema_view

    if not isinstance(manifest, dict):
        raise HarnessExtError(f"{path} is not a valid harness-ext manifest: not a JSON object")
    check_version(manifest, path)
    # Cheap checks first: the schema walks every cell of an embedded matrix (seconds per million).
    check_structure(manifest, path)
    check_numbers(manifest, path)
    try:
        jsonschema.validate(schema_view(manifest), schema())
    except jsonschema.ValidationError as exc:
        where = "/".join(map(str, exc.absolute_path)) or "(top level)"
        msg = exc.message if len(exc.message) <= 300 else exc.message[:297] + "..."
        raise HarnessExtError(f"{path} is not a valid harness-ext manifest: at {where}: {msg}") from None
    except RecursionError:
        raise HarnessExtError(f"{path} is not a valid harness-ext manifest: nested too deeply") from None
    check_consistency(manifest, path)
    try:
        check_group_name(manifest["group_name"])  # it names the files predict writes
    except HarnessExtError as exc:
        raise HarnessExtError(f"{path} is not a valid harness-ext manifest: {exc}") from None


def dense_cut_message(dropped: dict) -> str:
    """One line naming what ``--dense`` removed (it is never done silently)."""
    ms, ds = dropped.get("models") or [], dropped.get("datasets") or []
    parts = []
    if ms:
        parts.append(f"{plural(len(ms), 'model')} ({', '.join(ms[:5])}{' ...' if len(ms) > 5 else ''})")
    if ds:
        parts.append(f"{plural(len(ds), 'dataset')} ({', '.join(ds[:5])}{' ...' if len(ds) > 5 else ''})")
    return (f"--dense dropped {' and '.join(parts)} with {plural(dropped.get('observed_cells', 0), 'observed cell')} to reach a "
            "complete block; without --dense every observed cell is used")


def _task_fields(meta: dict, lm_eval: bool = False) -> dict:
    """A dataset's task fields; ``lm_eval``: its scores came from lm-eval results under another benchmark name than
    lm-eval's (a group of the user's own), so its task is an lm-eval task (``harness``)."""
    fields = {k: meta.get(k) for k in ("benchmark", "metric", "task", "num_fewshot")}
    if lm_eval:
        from .harness_names import LM_EVAL_HARNESS

        fields["harness"] = LM_EVAL_HARNESS
    return fields


def lm_eval_group_columns(df: pd.DataFrame, db) -> frozenset:
    """Columns of ``df`` whose scores the store read from lm-eval result files under a benchmark other than
    ``lm_eval`` and ``mmlu`` (a group of the user's own is stored under the group's name): the manifest records
    their harness, so the harness files name their lm-eval tasks. Empty without a store."""
    from ...store.db import Store

    meta = df.attrs.get("datasets") or {}
    if db in (None, ":memory:") or not Path(db).exists() or not meta:
        return frozenset()
    with Store.open(db, read_only=True) as store:
        rows = store.con.execute(
            """SELECT DISTINCT benchmark, name FROM datasets WHERE benchmark NOT IN ('lm_eval', 'mmlu')
               AND json_extract_string(metadata, '$.harness') = 'lm-evaluation-harness'""").fetchall()
    found = set(rows)
    return frozenset(c for c, md in meta.items() if (md.get("benchmark"), md.get("dataset")) in found)


def build_manifest(
    df: pd.DataFrame,
    *,
    budget: Optional[str] = None,
    selector: str = DEFAULT_SELECTOR,
    similarity: Optional[str] = None,
    predictor: str = DEFAULT_PREDICTOR,
    weighting: str = "uniform",
    weighting_params: Optional[dict] = None,
    random_state: int = 0,
    n_random: int = 200,
    n_splits: Optional[int] = None,
    group_name: str = "harness_ext_reduced",
    db: Optional[str] = None,
    costs=None,
    n_random_subsets: Optional[int] = None,
    max_models: Optional[int] = None, min_availability: float = MIN_AVAILABILITY,
    selector_params: Optional[dict] = None, predictor_params: Optional[dict] = None,
) -> dict:
    """Select a subset of ``df``'s datasets and describe it as a manifest.

    The steps of :mod:`~harness_ext.methods.reduction.manifest_steps` each return a record, and
    :func:`assemble_manifest` writes the manifest's sections from them.

    Parameters
    ----------
    df : pandas.DataFrame
        Normalised models x datasets matrix from :func:`harness_ext.store.matrix.load_matrix`
        (its ``attrs`` carry the query, dataset metadata and fingerprint).
    budget : str, optional
        ``"0.2"`` (fraction), ``"5"`` (count), ``"coverage=0.95"`` (SimBA's coverage target) or
        ``"cost=50000"``. Default: 10% of the datasets, at least 2 and fewer than all
        (:func:`default_subset_size`, the budget ``benchmarks/quality_holdout.py`` validates);
        the manifest's ``selection.budget.default`` then says so.
    selector, similarity, predictor, weighting : str
        Plugin names; a selector that takes no ``similarity`` warns it went unused.
    random_state : int
        Seed for the selector, the random baseline and cross-validation.
    costs : dict or array-like, optional
        Cost of running each dataset (name -> cost, or one per column), e.g. its number of samples; needed by
        ``cost=`` budgets and used by cost-aware selectors. Default: the ``n_samples`` the store recorded, when
        every dataset has one.
    n_random_subsets : int, optional
        Random subsets of the chosen size compared with the chosen one (same predictor, same folds); default
        ``evidence.subset_counts`` (200, or 20 for predictors that refit; fewer past ``EVIDENCE_FLOPS_BUDGET``).
    max_models : int, optional
        With more models than this, selection and cross-validation use a sample of this many, drawn with
        ``random_state`` (default :data:`MAX_SELECTION_MODELS`; ``None`` means that default, 0 every model).
    min_availability : float
        Datasets run by fewer than this share of the models are chosen only after
        every other (:func:`~harness_ext.methods.reduction.budget.availability_rule`; default
        :data:`~harness_ext.methods.reduction.budget.MIN_AVAILABILITY`, 0 turns it off); the
        manifest's ``selection.availability`` lists them with their model counts.
    selector_params, predictor_params : dict, optional
        More parameters of the selector (``{"demote_saturated": True}``, also for the calibration's
        reselection) and of the predictor (``{"rank": 2}``, also the selection's own predictor's).

    Returns
    -------
    dict
        The manifest (see the schema).

    References
    ----------
    SimBA §3 (prowl: coverage, |S*|), §4 (pounce); Ailem et al. §3.3 (weighting);
    Hastie, Tibshirani & Friedman (2009) §7.10 (the cross-validated evidence, over held-out models).
    """
    from ...safe_output import check_group_name

    check_group_name(group_name)
    df = unfloored(df)  # fitted before the floor at chance: a floored fit predicts too high near chance (store.floor)
    r = run_steps(df, budget=budget, selector=selector, similarity=similarity, predictor=predictor, weighting=weighting,
                  weighting_params=weighting_params, random_state=random_state, n_random=n_random, n_splits=n_splits,
                  costs=costs, n_random_subsets=n_random_subsets, max_models=max_models, min_availability=min_availability,
                  selector_params=selector_params, predictor_params=predictor_params)
    # The plugins named are those that ran: no similarity for a selector that takes none.
    manifest = assemble_manifest(df, r, budget=budget, names=(selector, r.sel.prowl.similarity, predictor, weighting),
                                 random_state=random_state, group_name=group_name, db=db)
    manifest["warnings"][:0] = unused_similarity_notes(similarity, selector, r.sel.prowl.similarity)
    return manifest


def unused_similarity_notes(asked: Optional[str], selector: str, used: Optional[str]) -> list:
    """Why a similarity measure given to ``reduce`` was not used (never computed, so never checked either)."""
    if asked is None or used is not None:
        return []
    return [f"similarity {asked} (--similarity) not used: the selector {selector} takes no similarity measure, "
            "so none was computed (the coverage selectors greedy_coverage and beam_coverage use one)"]


def assemble_manifest(df: pd.DataFrame, r, *, budget, names: tuple, random_state: int, group_name: str, db) -> dict:
    """The manifest of the reduction ``r`` (:class:`~harness_ext.methods.reduction.manifest_steps.Reduction`) of
    ``df`` (the matrix it reduced, before the floor at chance), its sections in the schema's order; ``names``: the
    selector, similarity, predictor and weighting asked for."""
    from .harness_names import no_equivalent_warnings, population_task_warnings, unknown_metric_warnings
    from .helm_run_args import refused_helm_warnings
    from .lm_eval_group import task_list_warnings

    from .completion_reuse import completion_record
    from .predict import embedded_values
    from .predict_links import column_links

    lm_eval = lm_eval_group_columns(df, db)
    links = column_links(df, db)  # so predict reads a new model's files under another harness's name
    subset = subset_section(r, lm_eval)
    near = subset_saturated(r)  # the selection section records it, the warnings say it
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "tool": {"name": "harness-ext", "version": __version__, "plugins": _plugin_versions(
            list(zip(("selectors", "similarity_measures", "predictors", "weighting_schemes"), names)))},
        "group_name": group_name,
        "source": source_section(df, r, db),
        "datasets": datasets_section(r, lm_eval, links),
        "selection": selection_section(r, budget, random_state, near),
        "subset": subset,
        "prediction": prediction_section(r, random_state),
        "evidence": evidence_section(r, random_state),
        "aggregate": aggregate_section(r.plan.weights, names[3]),
        # Subset datasets that the lm-eval YAML or the HELM conf cannot run (listed there as comments).
        "warnings": reduction_warnings(df, r, near) + no_equivalent_warnings(subset) + refused_helm_warnings(subset)
        + population_task_warnings(subset) + unknown_metric_warnings(subset),
    }
    # The task list's lines split at a foreign comma (left out) and those not known to be lm-eval's (said, counted).
    manifest["warnings"] += task_list_warnings(manifest)
    m, d = r.facts.X.shape
    if m * d <= EMBED_MAX_CELLS:
        manifest["training_matrix"] = {"models": [str(i) for i in df.index], "datasets": r.facts.columns,
                                       "values": [[_num(v) for v in row] for row in df.to_numpy(dtype=float)]}
    # The completion's settings reduce chose, with the digest of the matrix predict reads: predict reuses them.
    tm = manifest.get("training_matrix")
    X = embedded_values(tm) if tm is not None else df.to_numpy(dtype=float)
    if (rec := completion_record(r, X, manifest["prediction"]["predictor"].get("params", {}))) is not None:
        manifest["prediction"]["completion_settings"] = rec
    return manifest


def reduction_warnings(df: pd.DataFrame, r, near: Optional[dict] = None) -> list:
    """What the manifest warns about: cuts made before it, thin and rarely run datasets, a subset holding datasets
    near their ceiling (``near``: :func:`subset_saturated`), few models, a subset not shown to beat random ones,
    large errors."""
    from ...store.dataset_links import links_note
    from ...store.pivot import conflicts_note, shots_left_out_note, unmatched_exclude_note
    from ...store.scales import mixed_scales_note
    from ..prowl.saturation import subset_saturation_warning
    from .evidence import beats_random, large_error_warnings, share_beaten_text
    from .mean_columns import mean_like_note

    facts, k, m = r.facts, r.sel.k, r.facts.m
    warnings = []
    dropped = df.attrs.get("dropped") or {}
    if dropped.get("models") or dropped.get("datasets"):
        warnings.append(dense_cut_message(dropped))
    # A hand-built DataFrame: an Elo column beside accuracies dominates the aggregate. And the cells the shot rule
    # left out, said by 'matrix' only before: models run only at other settings vanished silently.
    warnings += [n for n in (mixed_scales_note(df), shots_left_out_note(df.attrs), conflicts_note(df.attrs),
                             unmatched_exclude_note(df.attrs), links_note(df.attrs)) if n]
    if facts.thin_note:
        warnings.append(facts.thin_note)
    if (mean_like := mean_like_note(df, [facts.columns[j] for j in r.sel.subset_idx])) is not None:
        warnings.append(mean_like)
    if facts.availability:
        warnings.append(availability_note(facts.availability, [facts.columns[j] for j in r.sel.subset_idx]))
    if (sat := (r.sel.prowl.selector_details or {}).get("saturation")) and sat.get("note"):
        warnings.append(f"--demote-saturated: {sat['note']}")
    if near is not None:
        warnings.append(subset_saturation_warning(near))
    if m < FEW_MODELS:
        warnings.append(f"only {m} models: the subset and predictions rest on few rankings")
    vs_new = r.cal.honest["random_subsets"]
    if vs_new.get("ratio") is not None and not beats_random(vs_new):
        p = (vs_new.get("paired_test") or {}).get("p_value")
        warnings.append(
            f"for a new model the chosen {plural(k, 'dataset')} {'is' if k == 1 else 'are'} not shown to predict the full-benchmark score better than "
            f"random {k}-dataset subsets with the same predictor (out of sample: aggregate RMSE ratio "
            f"{vs_new['ratio']:.2f}, {share_beaten_text(vs_new, f'{r.cv.n_draws} draws')}"
            + (f", paired test p = {p:.2g}" if p is not None else "") + "): the choice may be no better than chance")
    warnings += large_error_warnings(r.cal.exp_agg, r.cv.rmse_d, r.plan.w, r.cal.honest["widths"], facts.columns,
                                     r.sel.subset_idx)
    return warnings


def datasets_section(r, lm_eval=frozenset(), links=None) -> list:
    """``datasets``: each column's task fields, weight, place in the subset, cross-validated error, cost and
    normalisation (``lm_eval``: the columns :func:`lm_eval_group_columns` found; ``links``: the fields and names
    :func:`~harness_ext.methods.reduction.predict_links.column_links` found)."""
    links = links or {}
    facts = r.facts
    in_subset = set(r.sel.subset_idx.tolist())
    datasets = []
    for j, c in enumerate(facts.columns):
        md = facts.meta.get(c, {})
        datasets.append({
            "name": c, **_task_fields(md, c in lm_eval), "weight": _num(r.plan.w[j]), "in_subset": bool(j in in_subset),
            "cv_rmse": _num(r.cv.rmse_d[j]),
            **({"cost": _num(float(facts.cost_vec[j]))} if facts.cost_vec is not None else {}),
            "normalisation": md.get("normalisation") or raw_normalisation(), **links.get(c, {}),
        })
    return datasets


def subset_section(r, lm_eval=frozenset()) -> list:
    """``subset``: the chosen datasets in selection order, with the coverage after each step."""
    columns, meta, coverage = r.facts.columns, r.facts.meta, r.sel.prowl.coverage
    return [{"step": i + 1, "name": columns[j], **_task_fields(meta.get(columns[j], {}), columns[j] in lm_eval),
             "coverage": _num(coverage[i])} for i, j in enumerate(r.sel.subset_idx)]


def source_section(df: pd.DataFrame, r, db) -> dict:
    """``source``: the matrix's fingerprint, store, query, shape and models."""
    m, d = r.facts.X.shape
    return {
        "fingerprint": df.attrs.get("fingerprint"),
        "store": None if db in (None, ":memory:") else str(db),
        "query": df.attrs.get("query", {}),
        "n_models": m,
        "n_datasets": d,
        "missing_share": _num(r.facts.missing),
        "models": [str(i) for i in df.index],
        # --exclude-models: the globs and the models they left out, so the manifest says which models it saw
        **({"excluded_models": {k: gone[k] for k in ("patterns", "n_models", "models")}}
           if (gone := df.attrs.get("excluded")) else {}),
    }


def subset_saturated(r) -> Optional[dict]:
    """:func:`~harness_ext.methods.prowl.saturation.subset_saturation` of a selection that did not demote saturated
    datasets (None: it did, or no dataset of the subset is saturated), on every model's scores."""
    from ..prowl.saturation import dataset_ceilings, subset_saturation

    if (r.sel.prowl.params or {}).get("demote_saturated"):
        return None
    facts = r.facts
    return subset_saturation(facts.X, dataset_ceilings(facts_normalisations(facts), facts.X), r.sel.subset_idx,
                             facts.columns)


def selection_section(r, budget, random_state: int, near: Optional[dict] = None) -> dict:
    """``selection``: the selector and its parameters, the budget, the coverage curve against random orders, and
    the rules that cut its work (flops budgets, availability, a sample of the models, the subset's datasets near
    their ceiling: ``near``, :func:`subset_saturated`)."""
    from ..prowl.saturation import selection_record

    facts, sel = r.facts, r.sel
    prowl, k, kind, value = sel.prowl, sel.k, facts.kind, facts.value
    return {
        "selector": {"name": prowl.selector, "params": jsonable(prowl.params)},
        "similarity": prowl.similarity,
        "random_state": int(random_state),
        "budget": {"kind": kind, "value": value, "given": budget,
                   **({"default": DEFAULT_BUDGET_REASON} if budget is None else {})},
        "subset_size": int(k),
        "coverage": _num(prowl.coverage[k - 1]),
        "coverage_curve": [_num(v) for v in prowl.coverage],
        "n_star": int(prowl.n_star),
        "target": prowl.target,
        "scauc": _num(prowl.scauc),
        "random_baseline": {"n_runs": int(sel.n_runs), **({"budget_rule": sel.runs_rule} if sel.runs_rule else {}),
                            "auc_matched_or_beaten": _num(prowl.auc_vs_random),
                            "mean_coverage_at_k": _num(prowl.random.mean_curve[k - 1]) if prowl.random else None},
        # Past a flops budget (wide matrices) the selector takes fewer exact or greedy steps: what it cut, and why.
        **({"budget_rules": jsonable(details["budget_rules"])} if (details := prowl.selector_details or {}).get(
            "budget_rules") else {}),
        **({"availability": facts.availability} if facts.availability else {}),
        # --demote-saturated: each saturated dataset with its headroom, and whether it was demoted.
        **({"saturation": rec} if (rec := selection_record(prowl.selector_details, facts.columns, sel.subset_idx))
           else {}),
        # Without demotion: the subset's datasets near their ceiling, which a stronger model cannot rise above.
        **({"subset_saturated": near} if near is not None else {}),
        **({"model_sample": {"n_models": int(sel.m_sel), "of": int(facts.m), "random_state": int(random_state),
                             "used_for": "selection, cross-validation, random subsets, error against budget"}}
           if sel.sample is not None else {}),
    }


def prediction_section(r, random_state: int) -> dict:
    """``prediction``: the predictor, its cross-validated and nested (expected) errors, and the calibration's
    folds with the subset chosen without each."""
    cv, cal, fp = r.cv.cv, r.cal, r.folds
    nested, exp_agg, frontier = cal.nested, cal.exp_agg, cal.frontier
    columns = r.facts.columns
    return {
        "predictor": {"name": r.plan.pred_reg.name, "params": jsonable(r.plan.est.get_params())},
        # fitted on the scores before the floor at chance (store.floor); predict normalises a new model's alike
        "floor_at_chance": False,
        # Past completion_settings.SETTINGS_FLOPS_BUDGET: what the rank/penalty search cut, and why.
        **({"settings_rule": rule} if (rule := getattr(r.cv.cache.get("settings"), "settings_rule_", None)) else {}),
        "cross_validation": {"n_splits": cv["n_splits"], "random_state": cv["random_state"],
                             "rmse": _num(cv["rmse"]), "aggregate_rmse": _num(cv["aggregate_rmse"])},
        "expected_error": {"aggregate_rmse": _num(exp_agg), "aggregate_interval_90": _num(Z90 * exp_agg),
                           "aggregate_interval_width_90": _num(2 * Z90 * exp_agg),
                           "rmse": _num(nested.rmse), "n_aggregate_models": int(nested.n_aggregate),
                           "nested": True,
                           **({"points": cal.honest["points"]} if cal.honest["points"] else {}),
                           **({"frontier": _numbers(frontier)} if frontier else {})},
        "calibration": {
            "description": "nested: the selection re-run without each fold's models (same selector, parameters "
                           "and seed); predict observes each fold's models on the subset chosen without them to "
                           "calibrate its intervals, and expected_error is cross-validated the same way",
            "reselection": fp.reselection, **({"reselection_rule": fp.reselection_rule} if fp.reselection_rule else {}),
            "n_folds": len(cal.fold_subs), "random_state": int(random_state), "fold": fp.labels_all.tolist(),
            **({"grouped_by": f"training run (the model name without its '@' revision or step suffix): "
                              f"{len(set(fp.runs))} runs, each held out whole"} if fp.runs is not None else {}),
            "subsets": [[columns[j] for j in s] for s in cal.fold_subs],
            **({"saturated": [[columns[j] for j in s] for s in cal.fold_saturated]} if cal.fold_saturated else {}),
            **({"selected_on": "each fold's complement within selection.model_sample"}
               if r.sel.sample is not None else {})},
    }


def evidence_section(r, random_state: int = 0) -> dict:
    """``evidence``: the subset against random subsets (out of sample and in-sample), the error against budget,
    the rules that cut the evidence's work, why the defaults were chosen, the subset's cost, and what the same cost
    buys as random documents of every dataset (:mod:`~.item_design_cost`)."""
    from ..engine.subset_cv import scoring_folds
    from .item_design_cost import random_documents_evidence

    facts, sel, cv = r.facts, r.sel, r.cv
    cost_vec, subset_idx = facts.cost_vec, sel.subset_idx
    return {
        "held_out": "cross-validated over models: held-out models reveal their subset cells and are scored on "
                    "their other observed cells. random_subsets: out of sample (the folds of prediction.calibration, "
                    "each revealing the subset chosen without it, against random subsets on the same folds), in "
                    "random_subsets.unit; random_subsets_in_sample and budget_curve: in-sample (the folds of "
                    "prediction.cross_validation, scoring the subset their own models helped choose), normalised "
                    "units",
        "random_subsets": r.cal.honest["random_subsets"],
        "random_subsets_in_sample": {k2: (_num(v) if isinstance(v, float) else v)
                                     for k2, v in cv.vs_random._asdict().items()},
        "budget_curve": [{k2: (_num(v) if isinstance(v, float) else v) for k2, v in row.items()} for row in cv.curve],
        # Past subset_cv.SCORE_FLOPS_BUDGET every subset is scored on a seeded sample of held-out models.
        **({"scoring_rows": jsonable(scoring_rule)} if (scoring_rule := scoring_folds(cv.folds, facts.d)[1]) else {}),
        **({"subset_counts": cv.ev_rule} if cv.ev_rule else {}),  # past evidence.EVIDENCE_FLOPS_BUDGET
        "default_reason": " ".join(reason for reason, used in (
            (DEFAULT_SELECTOR_REASON + ".", sel.prowl.selector == DEFAULT_SELECTOR),
            (DEFAULT_PREDICTOR_REASON + ".", r.plan.pred_reg.name == DEFAULT_PREDICTOR)) if used) or None,
        "costs": None if cost_vec is None else {
            "source": facts.cost_source, "subset": _num(float(cost_vec[subset_idx].sum())),
            "total": _num(float(cost_vec.sum())), "share": _num(float(cost_vec[subset_idx].sum() / cost_vec.sum()))},
        **({"random_documents": rd} if (rd := random_documents_evidence(facts, subset_idx, 0.9, random_state)) else {}),
    }


def aggregate_section(weights: pd.Series, weighting: str) -> dict:
    """``aggregate``: the weighting scheme (its parameters, and where user weights came from) and the formula."""
    return {"weighting": {"name": weighting, "params": jsonable(weights.attrs.get("params", {})),
                          # user weights emitted by `harness-ext weights`: which scheme made them
                          **({"source": weights.attrs["source"]} if weights.attrs.get("source") else {})},
            "formula": "sum_j weight_j * normalised_score_j"}


def _plugin_versions(used) -> list:
    """Which distribution (and version) provided each plugin a manifest used, so a result can be traced."""
    from ...plugin_manager import get_registration

    out = []
    for kind, name in used:
        if name is None:  # a similarity measure the selector does not use
            continue
        reg = get_registration(kind, name)
        out.append({"kind": kind, "name": reg.name, "distribution": getattr(reg, "distribution", ""),
                    "version": getattr(reg, "version", "")})
    return out


def load_manifest(path) -> dict:
    """Read and validate a manifest file.

    The folders of ``reduce --local-data`` recorded with its lm-eval tasks are not kept: they let a
    task YAML written from the manifest name absolute paths, a choice of the user running ``reduce``
    on their own machine, never one a file makes (a manifest naming ``/`` would let any path through).
    """
    from .manifest_validation import load_json

    path = Path(path)
    if path.is_dir():
        path = path / "manifest.json"
    manifest = load_json(path)
    from .item_manifest import is_item_manifest, validate_item_manifest

    (validate_item_manifest if is_item_manifest(manifest) else validate_manifest)(manifest, path)
    for entry in (manifest.get("lm_eval_tasks") or {}).values():
        if isinstance(entry, dict):
            entry.pop("local_data", None)
    return manifest


def example_manifest() -> dict:
    """A small valid manifest (used by the writers' contract tests and the docs)."""
    subset = [{"step": 1, "name": "abstract_algebra", "benchmark": "mmlu", "metric": "acc",
               "task": "hendrycksTest-abstract_algebra", "num_fewshot": 5, "coverage": 0.9},
              {"step": 2, "name": "arc_easy", "benchmark": "lm_eval", "metric": "acc", "task": "arc_easy",
               "num_fewshot": 0, "coverage": 0.97},
              {"step": 3, "name": "BoolQ", "benchmark": "helm_classic", "metric": "EM", "task": None,
               "num_fewshot": None, "coverage": 0.99}]
    return {"manifest_version": MANIFEST_VERSION, "tool": {"name": "harness-ext", "version": __version__},
            "group_name": "harness_ext_example", "subset": subset, "datasets": [], "warnings": []}


def attach_lm_eval_tasks(manifest: dict, db=None, local_data=()) -> dict:
    """Record in ``manifest["lm_eval_tasks"]`` where each lm-eval task of the subset is defined.

    Built into the installed lm-eval, kept from an ingested results file's ``configs`` block
    (the ``lm_eval_yaml`` writer then writes it beside the group, its code and paths outside
    the folder left out and counted in a warning), or unknown: a warning then names the task
    and says the reduced folder is not self-contained. ``local_data``: folders of the user's
    own task data, whose absolute paths may be written
    (:func:`harness_ext.store.task_yaml_safety.safe_task_config`).
    """
    from harness_ext.methods.reduction.harness_names import lm_eval_task

    from ...store.lm_eval_tasks import resolve_tasks
    from ...store.db import Store
    from ...store.task_yaml_safety import dropped_summary, without_taken_tags

    names = [n for n in (lm_eval_task(e) for e in manifest["subset"]) if n]
    if not names:
        return manifest
    local_data = [str(Path(d).resolve()) for d in local_data or ()]
    if db in (None, ":memory:") or not Path(db).exists():
        found = resolve_tasks(names, None, local_data)
    else:
        with Store.open(db, read_only=True) as store:
            found = resolve_tasks(names, store, local_data)
    manifest["lm_eval_tasks"] = found
    # A tag named as the group or one of its tasks takes that task's place in lm-eval's index: left out, counted.
    reserved = {manifest.get("group_name") or "harness_ext_reduced", *names}
    for t, e in found.items():
        if e.get("origin") == "results" and isinstance(e.get("config"), dict):
            without_taken_tags(e["config"], {t, *reserved}, e.setdefault("dropped", []))
    note = dropped_summary({t: e["dropped"] for t, e in found.items() if e.get("dropped")})
    if note:
        manifest["warnings"].append(note)
    manifest["warnings"] += other_data_warnings(found)
    unknown = [t for t, e in found.items() if e["origin"] == "unknown"]
    if unknown:
        manifest["warnings"].append(
            f"no lm-eval definition known for {len(unknown)} subset task{'s' * (len(unknown) != 1)}: "
            f"{', '.join(unknown[:5])}"
            + (" ..." if len(unknown) > 5 else "") + "; the reduced folder needs their YAML files before "
            "'lm_eval --include_path' can run it (the group YAML says which)")
    return manifest


def other_data_warnings(found: dict) -> list:
    """``reduce``'s warnings on subset tasks named as lm-eval's own tasks that the population ran on local files
    (:func:`harness_ext.store.lm_eval_tasks.other_data_than_builtin`): the name alone would run lm-eval's task."""
    from ...safe_output import quoted

    def shown(t, e):
        (path, name), builtin = e["other_data"]
        theirs = ("is a group or tag of its own tasks" if builtin is None else
                  f"reads {builtin[0]}{' ' + str(builtin[1]) if builtin[1] else ''}")
        return f"{quoted(t)} ({path}{' ' + str(name) if name else ''}, where lm-eval's {theirs})"

    out = []
    from .harness_names import LM_EVAL_OVERRIDE_MIN

    for origin, what in (("results", f"the folder defines it from the results files, which lm-eval {LM_EVAL_OVERRIDE_MIN} "
                                     "and later run in place of their own (0.4.13 logs that the folder's task "
                                     "overrides it); lm-eval 0.4.9 and older keep their own task, without a word, "
                                     "and would run other documents than the population's: run this folder with "
                                     f"lm-eval {LM_EVAL_OVERRIDE_MIN} or later, or rename the task"),
                         ("lm_eval", "their definitions cannot be rebuilt from the results (Python functions), so "
                                     "the group runs lm-eval's own task of that name, on other documents than the "
                                     "population's: add the task's own YAML to the folder, or rename the task")):
        tasks = [(t, e) for t, e in found.items() if e.get("other_data") and e.get("origin") == origin]
        if tasks:
            out.append(f"{len(tasks)} subset task{'s are' if len(tasks) != 1 else ' is'} named as lm-eval's own but "
                       f"the population ran {'them' if len(tasks) != 1 else 'it'} on local files: "
                       f"{'; '.join(shown(t, e) for t, e in tasks[:5])}{' ...' if len(tasks) > 5 else ''}; {what}")
    return out


def write_outputs(manifest: dict, out_dir, formats) -> list:
    """Write the manifest with each named manifest-writer plugin into ``out_dir``; returns the paths written.

    Validate first, then write: every writer runs in a staging folder and every file it
    returns is checked (:func:`harness_ext.safe_output.run_writer`) before any file is moved
    into ``out_dir``, subfolders included, all or none
    (:func:`harness_ext.safe_output.commit_staged`). A refusal (an unknown writer, an unsafe
    group or file name, a name a format cannot hold, a writer that raises or writes outside
    its folder) or a failed move leaves ``out_dir`` as it was, not half-written.
    """
    from ...plugin_manager import get_registration
    from ...safe_output import check_group_name, commit_staged, run_writer, staging

    out_dir = Path(out_dir)
    check_group_name(manifest.get("group_name") or "harness_ext_reduced")
    regs = [get_registration("manifest_writers", name) for name in formats]
    # Writers write into stage/files: a write to '../x' lands in the private stage, where it is seen.
    with staging(out_dir) as (files, backup):
        staged = []
        for reg in regs:
            staged.extend(run_writer(reg, manifest, files.parent, out_dir))
        return commit_staged(staged, files, out_dir, backup)
