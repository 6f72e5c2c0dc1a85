"""Order the datasets with a selector and evaluate the order's coverage: one method (:func:`run_prowl`) or
every method of SimBA's Table 3 on one matrix (:func:`prowl_table`).

References
----------
SimBA §3 (Algorithm 1, eqs. 3-7), §6.2 (Table 3), Appendix B (Table 6).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ...base import check_matrix, order_indices
from ...errors import MethodError
from .baseline import RandomBaseline, random_baseline
from .coverage import _coverage_of, check_target, matched_or_beaten, n_star, prefix_mean_win_rates, scauc, win_rates
from .results import BASELINE_LABELS, ProwlReport, ProwlResult


def _as_matrix(df) -> tuple:
    if isinstance(df, pd.DataFrame):
        X = check_matrix(df.to_numpy(dtype=float), min_rows=2, min_cols=2)
        names = [str(c) for c in df.columns]
    else:
        X = check_matrix(df, min_rows=2, min_cols=2)
        names = [str(i) for i in range(X.shape[1])]
    return X, names


def _make_selector(selector: str, similarity: Optional[str], random_state: int, selector_params: Optional[dict]):
    from ...plugin_manager import get_registration

    reg = get_registration("selectors", selector)
    params = dict(selector_params or {})
    defaults = reg.cls().get_params()
    if "similarity" in defaults and similarity is not None:
        params["similarity"] = similarity
    if "random_state" in defaults:
        params.setdefault("random_state", random_state)
    # The coverage curve needs every dataset ordered.
    for key in ("n_select", "gamma"):
        if key in defaults:
            params[key] = None
    est = reg.cls(**params)
    used_similarity = est.get_params().get("similarity") if "similarity" in defaults else None
    return reg.name, est, used_similarity


def _checked_order(order, d: int, selector: str) -> np.ndarray:
    """``order`` as indices, each of the ``d`` datasets once; else a MethodError saying what is wrong with it."""
    ints, why = order_indices(order, d)
    if why:
        raise MethodError(f"selector {selector!r} gave the order {why}")
    if ints.size != d:
        raise MethodError(f"selector {selector!r} ordered {ints.size} of {d} datasets; the coverage curve needs all "
                          "of them")
    return ints


def evaluate_order(
    X,
    order,
    *,
    datasets: Sequence[str],
    selector: str,
    params: dict,
    similarity: Optional[str] = None,
    proxy=None,
    target: float = 0.95,
    baseline: Optional[RandomBaseline] = None,
    wr=None,
    ties: str = "half",
) -> ProwlResult:
    """Coverage curve, ``|S*|``, SCAUC, Max2 and the comparison with random for one order.

    ``wr`` (from :func:`win_rates`) overrides ``X`` and ``ties``.

    References
    ----------
    SimBA §3.3, Table 3, Appendix B.
    """
    if wr is None:
        wr = win_rates(X, ties)
    d = wr.shape[1]
    order = _checked_order(order, d, selector)
    full = prefix_mean_win_rates(wr, np.arange(d))[:, -1]
    curve = _coverage_of(full, prefix_mean_win_rates(wr, order))
    ns = n_star(curve, target)
    k2 = max(ns if ns > 0 else d, 2)
    area, max2 = scauc(curve), scauc(curve, k2)
    auc_p = max2_p = None
    if baseline is not None:
        auc_p = matched_or_beaten(area, baseline.scauc)
        max2_p = matched_or_beaten(max2, baseline.scauc_upto(k2))
    names = [datasets[i] for i in order]
    return ProwlResult(
        selector=selector,
        similarity=similarity,
        params=dict(params),
        datasets=list(datasets),
        order=names,
        coverage=curve,
        proxy_coverage=None if proxy is None else np.asarray(proxy, dtype=float),
        target=float(target),
        n_star=int(ns),
        subset=names[:ns],
        scauc=area,
        max2=max2,
        n_models=int(np.isfinite(full).sum()),
        auc_vs_random=auc_p,
        max2_vs_random=max2_p,
        random=baseline,
        ties=ties,
    )


def run_prowl(
    df,
    similarity: Optional[str] = "pearson",
    selector: str = "greedy_coverage",
    target: float = 0.95,
    random_state: int = 0,
    n_random: int = 1000,
    selector_params: Optional[dict] = None,
    baseline: Optional[RandomBaseline] = None,
    ties: str = "half",
    wr: Optional[np.ndarray] = None,
    demoted=None,
) -> ProwlResult:
    """Order the datasets with a selector and evaluate the order's coverage (SimBA prowl).

    Parameters
    ----------
    df : pandas.DataFrame or array-like, shape (m models, d datasets)
        Performance matrix (higher is better, NaN for missing), as from
        :func:`harness_ext.store.matrix.load_matrix`.
    similarity : str, optional
        Similarity measure for selectors that take one (``greedy_coverage``,
        ``beam_coverage``); ignored by the baselines.
    selector : str
        Registered selector name, e.g. ``greedy_coverage``, ``beam_coverage``,
        ``random``, ``greedy_minimum``, ``greedy_maximum``.
    target : float
        Coverage ``eta`` that defines ``|S*|`` (paper: 0.95).
    random_state : int
        Seed for the selector (tie-breaks, random order) and the random baseline.
    n_random : int
        Runs of the RANDOM baseline used for the "matched or beaten"
        proportions; 0 skips it.
    selector_params : dict, optional
        Extra selector parameters (e.g. ``{"beam_width": 10}``). ``n_select``
        and ``gamma`` are overridden to ``None``: the curve needs every dataset.
    baseline : RandomBaseline, optional
        Reuse a baseline computed earlier on the same matrix (and ``ties``).
    ties : {"half", "strict"}
        Ties in the mean win rate: half a win (HELM, default) or none (eq. 6
        as printed); see :func:`win_rates`.
    wr : numpy.ndarray, optional
        ``win_rates(X, ties)`` of this matrix when already computed (several
        selectors or similarities on one matrix compute it once).
    demoted : sequence of int, optional
        Datasets moved to the end of the selector's order before its coverage
        is evaluated (``reduce``'s availability rule, :func:`harness_ext.methods.reduction.budget.availability_rule`).

    Returns
    -------
    ProwlResult
        ``order`` (all datasets), ``coverage`` per ``|S|``, ``n_star``,
        ``subset`` (= ``order[:n_star]``), ``scauc``, ``max2``, and the
        proportions of random runs matched or beaten.

    Raises
    ------
    MethodError
        Fewer than 2 models or datasets, or a selector that does not order every dataset.

    References
    ----------
    SimBA §3 (Algorithm 1, eqs. 3-7), §6.2 (Table 3), Appendix B (Table 6).
    """
    X, names = _as_matrix(df)
    check_target(target)
    wr = win_rates(X, ties) if wr is None else wr
    if baseline is not None and baseline.ties != ties:
        raise MethodError(f"the random baseline was computed with ties={baseline.ties!r}, not {ties!r}")
    name, est, used_similarity = _make_selector(selector, similarity, random_state, selector_params)
    est.fit(X)
    if baseline is None and n_random:
        baseline = random_baseline(X, n_runs=n_random, random_state=random_state, target=target, wr=wr, ties=ties)
    from ..reduction.budget import demote

    res = evaluate_order(
        X,
        demote(est.order_, () if demoted is None else demoted),
        datasets=names,
        selector=name,
        params=est.get_params(),
        similarity=used_similarity,
        proxy=getattr(est, "coverage_", None),
        target=target,
        baseline=baseline,
        wr=wr,
        ties=ties,
    )
    res.selector_details = est.describe() if callable(getattr(est, "describe", None)) else None
    return res


def _takes_similarity(selector: str) -> bool:
    """Whether the registered ``selector`` has a ``similarity`` parameter (the coverage selectors do)."""
    from ...plugin_manager import get_registration

    return "similarity" in get_registration("selectors", selector).cls().get_params()


def default_measures(X) -> tuple:
    """SimBA's nine measures, plus every registered 0/1-only measure when ``X`` is 0/1.

    References
    ----------
    SimBA §3.1 (the nine); Ailem et al. §3.1 (Jaccard, Hamming for 0/1 prompt vectors).
    """
    from harness_ext.methods.similarity.measures import PAPER_MEASURES

    from ...plugin_manager import get_registrations

    X = np.asarray(X, dtype=float)
    vals = X[~np.isnan(X)]
    if vals.size == 0 or not np.isin(vals, (0.0, 1.0)).all():
        return tuple(PAPER_MEASURES)
    binary = [name for name, reg in get_registrations("similarity_measures").items() if reg.binary_only]
    return tuple(PAPER_MEASURES) + tuple(b for b in binary if b not in PAPER_MEASURES)


def _single_dataset_note(wr: np.ndarray, names) -> list:
    """A note when some models have a win rate on one dataset only (a union of leaderboards, say), else none.

    Such a model's mean win rate is the same on every subset holding its dataset and missing on the others, so
    coverage is high for any subset holding the datasets most models ran, whatever the rest of the matrix says.
    """
    n_rated = (~np.isnan(wr)).sum(axis=1)
    single = n_rated == 1
    if not single.any():
        return []
    per = (single[:, None] & ~np.isnan(wr)).sum(axis=0)
    only = int(np.argmax(per))
    # "most of them" only when it is so: 1 of 2 such models is not most
    where = (f"most of them on {names[only]}" if 2 * per[only] > single.sum() else
             ", ".join(f"{per[j]} on {names[j]}" for j in np.argsort(-per, kind="stable")[:3] if per[j])
             + (f" and {int((per > 0).sum()) - 3} more datasets" if (per > 0).sum() > 3 else ""))
    return [f"{int(single.sum())} of {wr.shape[0]} models have a win rate on one dataset only ({where}): their "
            "mean win rate is the same on every subset holding it, so coverage favours the "
            "datasets most models ran; to compare subsets on models that ran several, restrict the models "
            "(--models, or --dense models)"]


def prowl_table(
    df,
    similarities: Optional[Sequence[str]] = None,
    selector: str = "greedy_coverage",
    selector_params: Optional[dict] = None,
    target: float = 0.95,
    n_random: int = 1000,
    random_state: int = 0,
    baselines: Sequence[str] = ("greedy_minimum", "greedy_maximum"),
    ties: str = "half",
) -> ProwlReport:
    """Table 3 (+ Table 6 proportions) for one performance matrix.

    Rows: RANDOM (mean over ``n_random`` runs), the greedy baselines, then the
    selector with each similarity measure: by default SimBA's nine, plus the
    registered 0/1-only measures (Jaccard, Hamming) when every observed score
    is 0 or 1 (prompt-level correctness). A measure that cannot run on this
    matrix (e.g. Jensen-Shannon on negative scores) gets a row of NaN and its
    error in the ``note`` column, and is listed in the report's ``failures``
    (and ``warnings``); ``harness-ext prowl`` then exits 1. ``ties`` as
    :func:`win_rates`.

    References
    ----------
    SimBA §6.2 (Table 3), Appendix B (Table 6).
    """
    from harness_ext.methods.similarity.measures import LABELS

    X, names = _as_matrix(df)
    check_target(target)
    if (selector_params or {}).get("similarity") is not None:
        # each row's measure would replace it, so it would name a measure no row ran with
        raise MethodError(f"selector_params similarity={selector_params['similarity']!r}: prowl_table runs the "
                          "selector with each measure of similarities=; give the measure there")
    wr = win_rates(X, ties)
    baseline = random_baseline(X, n_runs=n_random, random_state=random_state, target=target, wr=wr, ties=ties)
    rows, results, failures = [], {}, {}
    rand_label = f"RANDOM (n = {baseline.n_runs})"
    reached = baseline.n_star[baseline.n_star > 0]
    rows.append({"method": rand_label, "SCAUC": float(np.nanmean(baseline.scauc)),
                 "|S*|": float(reached.mean()) if reached.size else np.nan,
                 "AUC>=random": np.nan, "Max2>=random": np.nan, "S*": "", "note": ""})
    notes = _single_dataset_note(wr, names)
    if _takes_similarity(selector):
        ours = [(selector, s) for s in (similarities or default_measures(X))]
    else:  # one row: a row per measure would repeat the same order under the same label
        ours = [(selector, None)]
        if similarities:
            notes.append(f"similarity {', '.join(similarities)} not used: selector {selector!r} takes no similarity "
                         "measure")
    methods = [(b, None) for b in baselines] + ours
    frame = pd.DataFrame(X, columns=names)
    from ...report import progress

    for sel, sim in progress(methods, total=len(methods), desc="prowl"):
        try:
            res = run_prowl(frame, similarity=sim, selector=sel, target=target, random_state=random_state,
                            selector_params=selector_params if sel == selector else None, baseline=baseline, ties=ties,
                            wr=wr)
        except MethodError as exc:
            label = LABELS.get(sim, str(sim).upper()) if sim else BASELINE_LABELS.get(sel, sel)
            rows.append({"method": label, "SCAUC": np.nan, "|S*|": np.nan, "AUC>=random": np.nan,
                         "Max2>=random": np.nan, "S*": "", "note": str(exc)})
            failures[label] = f"selector {sel}" + (f" with similarity {sim}" if sim else "") + f": {exc}"
            continue
        results[res.label] = res
        rows.append({"method": res.label, "SCAUC": res.scauc, "|S*|": float(res.n_star) if res.n_star else np.nan,
                     "AUC>=random": res.auc_vs_random, "Max2>=random": res.max2_vs_random,
                     "S*": ", ".join(res.subset),  # whole: the CSV and JSON hold it; the printed table shortens it
                     "note": ""})
    table = pd.DataFrame(rows).set_index("method")
    if not table["note"].astype(bool).any():
        table = table.drop(columns="note")
    return ProwlReport(table=table, results=results, baseline=baseline, n_models=X.shape[0], n_datasets=X.shape[1],
                       failures=failures, notes=notes)
