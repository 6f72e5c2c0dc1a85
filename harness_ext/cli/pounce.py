"""The ``pounce`` command: evaluate performance predictors on the selected matrix.

Options are in :mod:`harness_ext.cli.options`; this module turns them into predictors, runs the
analyses of :mod:`harness_ext.methods.pounce`, shows the :class:`~harness_ext.methods.pounce.PounceReport`
and writes each analysis's CSV table and figure to ``--out``.
"""

from __future__ import annotations

import logging
from typing import Optional

from ..errors import HarnessExtError
from ..safe_output import csv_text, write_file

logger = logging.getLogger(__name__)


class _Skipped(HarnessExtError):
    """An analysis that ``--analysis all`` leaves out on this matrix (the report says why)."""


def _floats(text: str) -> list:
    return [float(t) for t in str(text).split(",") if t.strip()]


#: The analyses that use each group of options: given while none of them runs, the options are said to be unused.
ANALYSIS_OPTIONS = {
    ("regression",): ("--predictors", "--selector", "--order", "--test-size", "--splits", "--noise", "--folds",
                      "--paper"),
    ("completion",): ("--completion-predictors", "--hidden-ratios", "--level", "--profiles"),
    ("active",): ("--active-predictor", "--active-steps", "--active-step"),
    ("tensor",): ("--tensor-ratios",),
    ("completion", "active", "tensor"): ("--repeats", "--n-samples"),
}


def _say_unused(args, analyses) -> None:
    """Warn about the options of analyses that do not run (``--order`` with ``--analysis completion``)."""
    from .options import given_options

    for names, options in ANALYSIS_OPTIONS.items():
        if not set(names) & set(analyses) and (unused := given_options(args, options)):
            logger.warning(f"{', '.join(unused)} not used: options of the analysis {' or '.join(names)}, which "
                           f"--analysis {args.analysis} does not run")


def _names(text: str) -> list:
    return [t.strip() for t in str(text).split(",") if t.strip()]


def paper_key(args) -> Optional[str]:
    """The SimBA benchmark whose Table 4/5 to show: ``--paper``, or guessed from ``--benchmark``."""
    if args.paper == "none":
        return None
    if args.paper != "auto":
        return args.paper
    names = " ".join(args.benchmark or []).lower()
    for key, pat in (("helm", "helm"), ("mmlu", "mmlu"), ("bigbench_lite", "bigbench")):
        if pat in names:
            return key
    return None


def _predictor(name: str, **params):
    """A registered predictor with those of ``params`` it has (seeds, groups, Gibbs draws); the rest are ignored."""
    from ..methods.pounce import make_predictor

    est = make_predictor(name)
    have = est.get_params()
    return est.set_params(**{k: v for k, v in params.items() if k in have and v is not None})


def _gibbs(args) -> dict:
    return {"n_samples": args.n_samples, "n_burnin": args.n_samples} if args.n_samples else {}


def run(args) -> int:
    from pathlib import Path

    from ..methods.pounce import ANALYSES, PounceReport
    from ..report import Stages, progress
    from .options import matrix_from_args
    from .output import emit

    analyses = set(ANALYSES) if args.analysis.strip() == "all" else set(_names(args.analysis))
    bad = analyses - set(ANALYSES)
    if bad:
        raise HarnessExtError(f"unknown analysis {', '.join(sorted(bad))}; choose from {', '.join(ANALYSES)} or all")
    from ..base import check_level

    check_level(args.level)  # --level 2 printed the share of cells inside a "200% interval"
    _say_unused(args, analyses)
    df = matrix_from_args(args, fingerprint=False)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = PounceReport(analyses={}, n_models=df.shape[0], n_datasets=df.shape[1],
                          missing=float(df.isna().to_numpy().mean()))
    steps = {"regression": _regression, "completion": _completion, "active": _active, "tensor": _tensor}
    written = []
    chosen = [name for name in ANALYSES if name in analyses]
    # Each analysis has its own bar; this one says which of them runs (the regression alone takes minutes).
    bar = Stages(progress(None, total=len(chosen), desc="pounce"), logger, "pounce")
    for name in chosen:
        bar.set_postfix_str(name)
        try:
            report.analyses[name], files = steps[name](args, df, out)
        except _Skipped as exc:
            report.skipped[name] = str(exc)
            continue
        finally:
            bar.update()
        written += files
    bar.close()
    emit(args, report)
    print(f"\nwrote {', '.join(map(str, written))}")
    return 0


def _regression(args, df, out):
    from dataclasses import replace

    from ..methods.pounce import evaluate_regression

    preds = {n: _predictor(n, random_state=args.seed) for n in _names(args.predictors)}
    order = None
    if args.order:
        cols = list(df.columns)
        missing = [c for c in _names(args.order) if c not in cols]
        if missing:
            raise HarnessExtError(f"--order names datasets not in the matrix: {', '.join(missing)}")
        order = [cols.index(c) for c in _names(args.order)]
    res = evaluate_regression(df, preds, order=order, selector=args.selector, test_size=args.test_size,
                              noise_sigmas=_floats(args.noise), n_splits=args.folds, random_state=args.seed,
                              n_repeats=args.splits, progress=True)
    res = replace(res, paper=paper_key(args))
    write_file(out / "mse_curves.csv", csv_text(res.curves))
    write_file(out / "auc_mse.csv", csv_text(res.auc))
    return res, [out / "mse_curves.csv", out / "auc_mse.csv", res.plot(out / "mse_curves.png")]


def _completion(args, df, out):
    from ..methods.pounce import column_groups, evaluate_completion

    groups = column_groups(df)
    preds = {n: _predictor(n, random_state=args.seed, column_groups=groups, **_gibbs(args))
             for n in _names(args.completion_predictors)}
    if args.profiles:
        from ..adapters.crosspred import load_profiles
        from ..base import clone

        H, G = load_profiles(args.profiles, list(df.index), list(df.columns))
        for n, name in (("pmf", "cpmf"), ("bpmf", "bcpmf")):
            if n in preds:
                preds[name] = clone(preds[n]).set_params(model_profiles=H, dataset_profiles=G)
    res = evaluate_completion(df.to_numpy(dtype=float), preds, _floats(args.hidden_ratios), n_repeats=args.repeats,
                              level=args.level, random_state=args.seed, groups=groups,
                              raw_units=args.normalise == "none", progress=True)
    write_file(out / "completion.csv", csv_text(res.long, index=False))
    return res, [out / "completion.csv", res.plot(out / "completion_rmse.png")]


def _active(args, df, out):
    from ..methods.pounce import column_groups, evaluate_active

    est = _predictor(args.active_predictor, random_state=args.seed, column_groups=column_groups(df), **_gibbs(args))
    res = evaluate_active(df.to_numpy(dtype=float), est, name=args.active_predictor, step=args.active_step,
                          n_steps=args.active_steps, n_repeats=args.repeats, random_state=args.seed, progress=True)
    write_file(out / "active.csv", csv_text(res.long, index=False))
    return res, [out / "active.csv", res.plot(out / "active.png")]


def _tensor(args, df, out):
    from ..methods.pounce import evaluate_tensor
    from ..store.db import Store
    from ..store.matrix import load_metric_tensor
    from .options import query_from_args

    # Every matrix option counts (--rows, --no-aliases, --aggregates, --chance-file); the metric is each in turn.
    query = query_from_args(args)
    with Store.open(args.db, read_only=True) as store:
        T, metrics = load_metric_tensor(store, query, list(df.index), list(df.columns))
    if len(metrics) < 2 and args.analysis.strip() == "all":
        raise _Skipped(f"the tensor analysis needs several metrics per dataset; the selection has {metrics}")
    res = evaluate_tensor(T, metrics, _floats(args.tensor_ratios), n_repeats=args.repeats, random_state=args.seed,
                          n_samples=args.n_samples, progress=True)
    write_file(out / "tensor.csv", csv_text(res.long, index=False))
    return res, [out / "tensor.csv"]
