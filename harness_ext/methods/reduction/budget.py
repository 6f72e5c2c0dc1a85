"""Subset budgets for ``reduce``: the default, parsing ``--budget``, the subset size, dataset costs.

A budget is a fraction of the datasets, a count, SimBA's coverage target on the
selector's order (``coverage=0.95``) or a total cost; without one, ``reduce``
keeps 10% of the datasets, at least 2 (:func:`default_subset_size`).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...errors import MethodError, SideFileError

#: reduce's default budget without ``--budget``: ``max(DEFAULT_BUDGET_MIN, round(DEFAULT_BUDGET_FRACTION * d))``
#: datasets, fewer than all (:func:`default_subset_size`). The budget the defaults were validated at, so the
#: default is what the quality tables measured; SimBA's coverage target (``coverage=0.95``) stays a choice.
DEFAULT_BUDGET_FRACTION = 0.1
DEFAULT_BUDGET_MIN = 2
#: The default budget in words, for the manifest and the printed summary.
DEFAULT_BUDGET_TEXT = f"{DEFAULT_BUDGET_FRACTION:.0%} of the datasets, at least {DEFAULT_BUDGET_MIN}"
DEFAULT_BUDGET_REASON = (
    f"no --budget given: {DEFAULT_BUDGET_TEXT} and fewer than all, the budget at which "
    "benchmarks/quality_holdout.py validates the default selector and predictor (docs/quality.md); "
    "SimBA's coverage target (--budget coverage=0.95) can keep a single dataset (lm-eval MMLU: 1 of 57 subjects)")


def default_subset_size(n_datasets: int) -> int:
    """Datasets ``reduce`` keeps without a budget: 10% of ``n_datasets``, at least 2, fewer than all.

    Parameters
    ----------
    n_datasets : int
        Datasets in the matrix (at least 2).

    Returns
    -------
    int
        ``min(max(2, round(0.1 * n_datasets)), n_datasets - 1)``: 1 of 2, 2 of 3-25, 6 of 57.

    References
    ----------
    benchmarks/quality_holdout.py protocol (a) runs ``reduce`` at this budget
    (``k = max(2, round(0.1 d))``), so the default is the setting its quality tables validate.
    """
    # Python's round (half to even) as quality_holdout always used it: 25 datasets -> 2, 35 -> 4.
    k = max(DEFAULT_BUDGET_MIN, int(round(DEFAULT_BUDGET_FRACTION * n_datasets)))
    return int(max(1, min(k, n_datasets - 1)))


def parse_budget(budget: Optional[str], n_datasets: int) -> tuple:
    """``(kind, value)`` from a budget: ``"0.2"`` a fraction, ``"5"`` a count, ``"coverage=0.95"`` a target,
    ``"cost=50000"`` a total cost (in the units of the dataset costs, e.g. samples to run).

    Parameters
    ----------
    budget : str or None
        The budget as the user wrote it; ``None`` is the default, a count of
        :func:`default_subset_size` datasets.
    n_datasets : int
        Datasets in the matrix.

    Returns
    -------
    tuple
        ``(kind, value)``, kind one of ``"fraction"``, ``"count"``, ``"coverage"``, ``"cost"``.

    Raises
    ------
    MethodError
        If the budget is malformed or larger than the benchmark.

    References
    ----------
    SimBA §3 (coverage target, |S*|); the 10% default is the budget the quality tables of
    benchmarks/quality_holdout.py validate (:func:`default_subset_size`).
    """
    if budget is None:
        return "count", default_subset_size(n_datasets)
    text = str(budget).strip().lower()
    try:
        if text.startswith("cost="):
            v = float(text.split("=", 1)[1])
            if not (np.isfinite(v) and v > 0):
                raise MethodError(f"cost budget must be a positive number, got {budget!r}")
            return "cost", v
        if text.startswith("coverage="):
            from ..prowl.coverage import check_target

            return "coverage", check_target(float(text.split("=", 1)[1]))
        # A decimal point or a percent sign makes it a fraction, so "1.0" is the whole benchmark, not one dataset.
        is_fraction = "." in text or text.endswith("%")
        v = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise MethodError(f"budget {budget!r} is not a fraction (0.2), a count (5), a target (coverage=0.95) "
                          "or a cost (cost=50000)") from None
    if not np.isfinite(v) or v <= 0:
        raise MethodError(f"budget must be positive, got {budget!r}")
    if is_fraction:
        if v >= 1:
            raise MethodError(f"budget {budget!r} is a fraction of 1 or more: nothing would be saved "
                              "(a count is a whole number such as 5)")
        return "fraction", v
    if v != int(v):
        raise MethodError(f"budget {budget!r}: a count must be a whole number")
    if v > n_datasets:
        raise MethodError(f"budget of {int(v)} datasets is larger than the benchmark ({n_datasets} datasets)")
    if v == n_datasets:
        raise MethodError(f"budget of {int(v)} datasets is the whole benchmark: nothing would be saved")
    return "count", int(v)


def subset_size(kind: str, value, n_datasets: int, curve: np.ndarray, order_costs=None) -> int:
    """Number of datasets to keep for a parsed budget (at least 1, fewer than all when possible).

    A cost budget keeps the longest prefix of the order whose costs (``order_costs``, in order) fit.
    """
    if kind == "cost":
        fits = np.cumsum(np.asarray(order_costs, dtype=float)) <= float(value) * (1 + 1e-12)
        return int(max(1, fits.sum()))
    if kind == "count":
        return int(value)
    if kind == "fraction":
        return int(min(max(1, round(value * n_datasets)), n_datasets))
    reached = np.flatnonzero(np.asarray(curve) >= value)
    return int(reached[0] + 1) if reached.size else n_datasets


def dataset_costs(costs, columns, meta: dict) -> tuple:
    """``(cost per column or None, where the costs came from)``.

    ``costs``: a mapping name -> cost or a sequence aligned with ``columns``;
    without it, the median ``n_samples`` the store recorded per dataset
    (lm-eval ``n-samples``, HELM instance counts), when every dataset has one.
    """
    if costs is not None:
        if isinstance(costs, dict):
            missing = [c for c in columns if c not in costs]
            if missing:
                raise MethodError(f"the cost file has no cost for {len(missing)} datasets: {', '.join(missing[:5])}"
                                  + (" ..." if len(missing) > 5 else ""))
            vec = np.array([float(costs[c]) for c in columns])
        else:
            vec = np.asarray(costs, dtype=float)
        if vec.shape != (len(columns),) or not (np.isfinite(vec) & (vec > 0)).all():
            raise MethodError(f"costs must be {len(columns)} positive numbers, one per dataset")
        return vec, "user"
    ns = [(meta.get(c) or {}).get("n_samples") for c in columns]
    if all(isinstance(v, (int, float)) and v and v > 0 for v in ns):
        return np.array(ns, dtype=float), "n_samples from the result files (median over models)"
    return None, None


def read_costs(path) -> dict:
    """Dataset costs from a JSON object (name -> cost) or a CSV with columns ``dataset,cost``.

    Read through :mod:`harness_ext.safe_input` (a regular UTF-8 file within its size limit); every cost
    must be a finite number above 0.

    Raises
    ------
    SideFileError
        Naming the file and the reason.
    """
    from ...safe_input import finite_number, load_document, read_rows, suffix_format, wrong_shape

    what = "cost file"
    if suffix_format(path, default="csv") == "json":
        raw = load_document(path, what, "json")
        if not isinstance(raw, dict):
            raise wrong_shape(path, what, "the top level", "a JSON object of dataset name -> cost", raw)
        items = raw.items()
    else:
        rows = read_rows(path, what)
        header = [c.strip().lower() for c in rows[0]] if rows else []
        if "dataset" not in header or "cost" not in header:
            raise SideFileError(path, f"{what}: the first line must be a header with the columns dataset and cost "
                                      "(or give a JSON object of dataset name -> cost)")
        i, j = header.index("dataset"), header.index("cost")
        items = [(r[i] if i < len(r) else "", r[j] if j < len(r) else None) for r in rows[1:] if any(c.strip() for c in r)]
    out = {}
    for k, v in items:
        out[str(k)] = finite_number(v, path, what, f"the cost of {k!r}", low=0.0, low_open=True)
    return out


#: ``reduce`` does not choose, by default, a dataset that fewer than this share of the matrix's models ran: a new
#: model most likely lacks it too, and a subset it cannot run is no subset (``--min-availability`` to change; 0: off).
MIN_AVAILABILITY = 0.5


def availability_rule(columns, counts, n_models: int, min_share: float = MIN_AVAILABILITY):
    """``(demoted, record)``: the datasets run by fewer than ``min_share`` of the models, and what the manifest says.

    ``counts`` are the models with a result per column. The demoted datasets stay in the
    matrix (they are predicted like every other) but go to the end of the selector's order
    (:func:`demote`), so the subset takes them only when too few other datasets remain.
    ``record`` is None when no dataset is demoted (a complete matrix: nothing changes).

    Raises
    ------
    MethodError
        ``min_share`` outside [0, 1].
    """
    share = float(min_share)
    if not 0.0 <= share <= 1.0:
        raise MethodError(f"--min-availability must be a share of the models in [0, 1], got {min_share!r}")
    counts = np.asarray(counts, dtype=int)
    demoted = np.flatnonzero(counts < share * n_models)
    if demoted.size == 0:
        return demoted, None
    record = {
        "min_share": share, "n_models": int(n_models),
        "rule": (f"datasets run by fewer than {share:.0%} of the {n_models} models are chosen only after every other "
                 "dataset (--min-availability to change, 0 to turn off)"),
        "demoted": [{"name": str(columns[j]), "n_models": int(counts[j])} for j in demoted],
    }
    return demoted, record


def demote(order, demoted) -> np.ndarray:
    """``order`` with the ``demoted`` indices moved to its end, each part in its own order (stable)."""
    order = np.asarray(order, dtype=int)
    if len(demoted) == 0:
        return order
    late = np.isin(order, np.asarray(demoted, dtype=int))
    return np.concatenate([order[~late], order[late]])


def availability_note(record: dict, subset_names) -> str:
    """The warning ``reduce`` prints for :func:`availability_rule`'s record, with counts."""
    items = record["demoted"]
    names = ", ".join(f"{d['name']} ({d['n_models']})" for d in items[:5]) + (" ..." if len(items) > 5 else "")
    taken = [d["name"] for d in items if d["name"] in set(subset_names)]
    return (f"{len(items)} datasets run by fewer than {record['min_share']:.0%} of the {record['n_models']} models "
            f"are chosen only after the others (models that ran them): {names}"
            + (f"; too few others remain, so the subset still has {len(taken)} of them: {', '.join(taken)}" if taken
               else "") + "; --min-availability to change")
