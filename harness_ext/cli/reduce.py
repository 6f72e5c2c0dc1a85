"""The ``reduce`` command: options are in :mod:`harness_ext.cli.options`; this module calls the method and shows its result.

Order matters: every name the command was given (plugins, group name, writers) is checked
before any work, and every output is checked before any file is written
(:func:`harness_ext.methods.reduction.manifest.write_outputs`).
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("harness_ext.reduce")


def run(args) -> int:
    from ..errors import HarnessExtError
    from ..methods.reduction.budget import read_costs
    from ..methods.reduction.manifest_steps import check_selector_similarity, weighting_with_file
    from ..methods.reduction.reduce import DEFAULT_FORMATS, reduce_matrix
    from ..plugin_manager import get_registration
    from ..safe_output import check_group_name
    from ..store.db import default_db_path
    from ..store.task_yaml_safety import local_data_folders
    from .options import given_options, matrix_from_args, parse_key_values

    # Unknown plugin names and unsafe output names fail before any work is done.
    check_group_name(args.group_name)
    get_registration("selectors", args.selector)
    if args.similarity is not None:
        get_registration("similarity_measures", args.similarity)
    get_registration("predictors", args.predictor)
    selector_params = _selector_params(args)
    check_selector_similarity(args.similarity, selector_params)
    weighting, weighting_params = weighting_with_file(args.weighting, args.weights, cli=True)
    get_registration("weighting_schemes", weighting)
    formats = args.formats or list(DEFAULT_FORMATS)
    for f in formats:
        get_registration("manifest_writers", f)
    costs = read_costs(args.costs) if getattr(args, "costs", None) else None
    local_data = local_data_folders(getattr(args, "local_data", None), "--local-data")
    db = args.db or default_db_path()
    design = getattr(args, "item_design", "random")
    if getattr(args, "items_total", None) is not None and design == "anchors":
        raise HarnessExtError("--items-total spreads items over every task of a benchmark; --item-design anchors "
                              "keeps a dataset subset: give --items N there")
    if (getattr(args, "items", None) or getattr(args, "items_total", None) is not None) and design != "anchors":
        return _run_items(args, db, formats, local_data)
    # Options of the item-level reduction, given to the dataset-level one: said, not silently dropped.
    unused = given_options(args, ITEM_OPTIONS)
    if design == "anchors" and args.items is None:
        unused.insert(0, "--item-design anchors")
    if unused:
        log.warning("%s not used: %s", ", ".join(unused),
                    "the item options apply with --items N (or --items-total N)" if args.items is None else
                    "--item-design anchors runs N anchor items of each subset task, without strata, an allocation or "
                    "an item estimator")
    # -vv names each stage as it starts (benchmarks/bench_matrix.py times them from these lines).
    log.debug("reduce stage: matrix from the store")
    df = matrix_from_args(args, say_dense=False, say_floor=False)  # the manifest's warnings say what --dense dropped
    result = reduce_matrix(
        df, budget=args.budget, selector=args.selector, similarity=args.similarity, predictor=args.predictor,
        weighting=weighting, weighting_params=weighting_params, random_state=args.seed, n_random=args.n_random,
        group_name=args.group_name, db=db, costs=costs, n_random_subsets=getattr(args, "n_random_subsets", None),
        items=getattr(args, "items", None), local_data=local_data,
        min_availability=getattr(args, "min_availability", None),
        selector_params=selector_params,
        predictor_params=parse_key_values(getattr(args, "predictor_param", None), "--predictor-param") or None,
    )
    log.debug("reduce stage: harness files and plot")
    return _show(args, result, _write(args, result, formats, "error_vs_budget.png"))


def _write(args, result, formats, plot_name: str) -> list:
    """The result's files in ``--out``, and its figure as ``plot_name`` there unless ``--no-plot``."""
    from .output import with_plot

    paths = result.write(args.out, formats)
    if not getattr(args, "no_plot", False):
        paths = with_plot(args, result, paths, plot_name)
        result.written = list(paths)
    return paths


def _show(args, result, paths) -> int:
    """The result (table or --json), its warnings, and the files written."""
    from .output import emit

    emit(args, result)
    for w in result.warnings:
        log.warning(w)
    for p in paths:
        print(f"wrote {p}")
    if any(Path(p).name.startswith("run_entries_") for p in paths):  # the shots the HELM conf asks for, said
        from ..methods.reduction.helm_run_args import helm_shots_note

        for line in helm_shots_note(result.manifest):
            print(f"HELM conf: {line}")
        if result.manifest.get("kind") == "items":  # what HELM will run of the drawn items, counted
            from ..plugins.manifest_writers import helm_items_summary

            for line in helm_items_summary(result.manifest):
                print(f"HELM conf: {line}")
    return 0


def _run_items(args, db, formats, local_data: list) -> int:
    """``reduce --items N``: random items of every task with item-level results (no dataset subset)."""
    from ..methods.reduction.item_reduce import reduce_items
    from ..store.globs import query_globs
    from .options import given_options

    design = getattr(args, "item_design", "random")
    unused = given_options(args, DATASET_OPTIONS)
    if design != "stratified":
        unused += given_options(args, ("--item-strata", "--stratum-allocation"))
    if getattr(args, "items_total", None) is None:
        unused += given_options(args, ("--item-allocation",))
    # Options of the dataset subset (or of another design): said, not silently dropped.
    notes = [f"{', '.join(unused)} not used: --items N runs N items of every task with the {design} design "
             "(--item-design anchors keeps a dataset subset; --item-strata and --stratum-allocation are for "
             "--item-design stratified, --item-allocation for --items-total)"] if unused else []
    result = reduce_items(db, args.items, benchmarks=args.benchmark, datasets=query_globs(args.datasets),
                          models=query_globs(args.models), exclude_models=query_globs(args.exclude_models),
                          metric=args.metric, estimator=args.item_estimator, random_state=args.seed,
                          group_name=args.group_name, warnings=notes,
                          local_data=local_data,
                          n_total=getattr(args, "items_total", None), design=getattr(args, "item_design", "random"),
                          allocation=getattr(args, "item_allocation", "neyman"), n_strata=getattr(args, "item_strata", 5),
                          stratum_allocation=getattr(args, "stratum_allocation", "proportional"))
    return _show(args, result, _write(args, result, formats, "expected_error_items.png"))


def _selector_params(args) -> dict:
    """The selector's parameters the user gave (``--selector-param``, ``--demote-saturated``), or None."""
    from .options import parse_key_values

    params = parse_key_values(getattr(args, "selector_param", None), "--selector-param")
    if getattr(args, "demote_saturated", False):
        params["demote_saturated"] = True
    return params or None


#: reduce's options of the dataset subset and of its matrix, unused by the item-level reduction (``--items N``, which
#: reads the item scores of the benchmarks, tasks and models ``--benchmark``, ``--datasets``, ``--models`` and
#: ``--exclude-models`` name).
DATASET_OPTIONS = ("--budget", "--costs", "--selector", "--similarity", "--predictor", "--weighting", "--weights",
                   "--n-random", "--n-random-subsets", "--min-availability", "--demote-saturated", "--selector-param",
                   "--predictor-param", "--source", "--num-fewshot", "--rows", "--no-aliases", "--aggregates",
                   "--chance-file", "--normalise")
#: reduce's options of the item-level reduction, unused by the dataset-level one (also with ``--item-design anchors``,
#: which keeps a dataset subset and runs anchor items of its tasks).
ITEM_OPTIONS = ("--item-estimator", "--item-allocation", "--item-strata", "--stratum-allocation")

