"""Contract checks every plugin must pass, usable from any plugin's own tests.

Modelled on scikit-learn's ``parametrize_with_checks``: each check is a
function of one registration, and :func:`parametrize_with_checks` turns
"every registered plugin of these kinds" into pytest parameters::

    from harness_ext.testing import parametrize_with_checks

    @parametrize_with_checks(kinds=["selectors"], names=["my_selector"])
    def test_contract(registration, check):
        check(registration)

A method class may define ``_contract_params`` (a dict of keyword arguments,
or a zero-argument callable returning one) when its defaults need input that
only a user can give (for example, a weights file); the checks construct it
with those.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Optional

import numpy as np

from .base import clone
from .errors import IngestError
from .plugin_manager import get_registrations
from .types import SourceFile


def _low_rank(m=24, d=9, rank=2, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.random((m, rank)) @ rng.random((rank, d)) / rank
    X = np.clip(X + 0.02 * rng.standard_normal((m, d)), 0, 1)
    if missing:
        mask = rng.random((m, d)) < missing
        mask[:, 0] = False
        X[mask] = np.nan
    return X


def _contract_params(cls) -> dict:
    params = getattr(cls, "_contract_params", {})
    return dict(params() if callable(params) else params)


def _make(reg):
    return reg.cls(**_contract_params(reg.cls))


# -- similarity measures ---------------------------------------------------------------
def check_similarity_shape_symmetry(reg):
    rng = np.random.default_rng(1)
    X = (rng.random((30, 6)) < 0.5).astype(float) if reg.binary_only else _low_rank(30, 6)
    S = np.asarray(reg.func(X), dtype=float)
    assert S.shape == (6, 6), f"{reg.name}: shape {S.shape}, expected (6, 6)"
    assert np.allclose(S, S.T, equal_nan=True), f"{reg.name}: not symmetric"
    if reg.unit_diagonal:
        assert np.allclose(np.diag(S), 1.0), f"{reg.name}: diagonal is not 1 on non-constant columns"
    finite = S[np.isfinite(S)]
    assert finite.size and finite.min() >= -1 - 1e-9 and finite.max() <= 1 + 1e-9, f"{reg.name}: values outside [-1, 1]"


def check_similarity_missing_and_constant(reg):
    rng = np.random.default_rng(2)
    X = (rng.random((30, 5)) < 0.5).astype(float) if reg.binary_only else _low_rank(30, 5)
    X[3, 1] = np.nan
    X[7, 2] = np.nan
    X[:, 4] = 1.0 if reg.binary_only else 0.5  # a constant column
    S = np.asarray(reg.func(X), dtype=float)
    assert S.shape == (5, 5)
    assert np.isfinite(S[:4, :4]).all(), f"{reg.name}: NaN leaked from pairwise-missing cells"
    assert not np.isinf(S).any(), f"{reg.name}: infinite similarity"


# -- selectors ---------------------------------------------------------------------------
def _check_params(reg):
    """``get_params()`` is JSON-able (manifests record it) and ``clone()`` copies the estimator."""
    est = _make(reg)
    assert callable(getattr(est, "get_params", None)), (
        f"{reg.name}: {type(est).__name__} has no get_params(); subclass a class of harness_ext.base "
        "(BaseEstimator for an item estimator)")
    json.dumps(est.get_params(), default=str)
    clone(est)


def check_selector_params(reg):
    _check_params(reg)


def check_selector_order(reg):
    X = _low_rank(24, 9)
    est = _make(reg).fit(X)
    order = np.asarray(est.order_)
    assert order.ndim == 1 and 1 <= order.size <= 9, f"{reg.name}: order_ has shape {order.shape}"
    assert len(set(order.tolist())) == order.size, f"{reg.name}: order_ repeats a dataset"
    assert order.min() >= 0 and order.max() < 9
    assert np.array_equal(est.subset(3), order[:3])


def check_selector_deterministic(reg):
    X = _low_rank(24, 9, seed=3)
    params = _contract_params(reg.cls)
    if "random_state" in reg.cls(**params).get_params():
        params["random_state"] = 7
    a = reg.cls(**params).fit(X).order_
    b = reg.cls(**params).fit(X).order_
    assert np.array_equal(a, b), f"{reg.name}: same input and seed gave different orders"


# -- predictors --------------------------------------------------------------------------
def check_predictor_params(reg):
    _check_params(reg)


def check_predictor_completes(reg):
    X = _low_rank(24, 8, seed=4)
    X[-4:, 3:] = np.nan  # new models: only a subset observed
    est = _make(reg).fit(X)
    mean, std = est.mean_, est.std_
    assert isinstance(mean, np.ndarray), f"{reg.name}: mean_ is a {type(mean).__name__}, not a numpy array"
    assert std is None or isinstance(std, np.ndarray), f"{reg.name}: std_ is a {type(std).__name__}, not an array"
    assert mean.shape == X.shape and np.isfinite(mean).all(), f"{reg.name}: mean_ not a complete finite matrix"
    obs = ~np.isnan(X)
    assert np.allclose(mean[obs], X[obs]), f"{reg.name}: observed cells were not passed through"
    if std is not None:
        assert std.shape == X.shape, f"{reg.name}: std_ shape {std.shape}"
        assert np.all(std >= 0) and np.allclose(std[obs], 0), f"{reg.name}: std_ negative or non-zero on observed cells"


# -- weighting schemes ---------------------------------------------------------------------
def check_weighting(reg):
    X = _low_rank(24, 8, seed=5)
    est = _make(reg)
    json.dumps(est.get_params(), default=str)
    from .methods.weighting.schemes import weights_problem

    why = weights_problem(est.fit(X).weights_, [f"c{j}" for j in range(8)])
    assert why is None, f"{reg.name}: weights_ must be 8 non-negative weights summing to 1: {why}"


# -- adapters --------------------------------------------------------------------------
_GARBAGE = {
    "empty.json": b"",
    "truncated.json": b'{"results": {"a": {"acc": 0.5',
    "list.json": b"[1, 2, 3]",
    "binary.json": bytes(range(256)),
    "text.csv": b"not,a\nresult,file\n",
}


def check_adapter_sniffing(reg):
    """``can_handle`` returns a bool and never raises, and claims none of a few files that are no results in any
    format (empty, truncated or binary JSON, a bare list, a CSV of words): ``ingest`` offers every file to every
    adapter and skips one that two adapters claim as ambiguous, so an adapter that claims what it cannot read
    makes every such file of every other format unreadable. What ``read`` makes of them must be an
    :class:`~harness_ext.errors.IngestError`, not another exception."""
    claimed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, content in _GARBAGE.items():
            p = Path(tmp) / name
            p.write_bytes(content)
            if reg.directory:
                continue
            claims = reg.can_handle(SourceFile(p))
            assert isinstance(claims, bool), f"{reg.name}: can_handle must return a bool, not {type(claims).__name__}"
            if claims:
                claimed.append(name)
                try:
                    list(reg.read(SourceFile(p)))
                except IngestError:
                    pass
        assert reg.can_handle(SourceFile(Path(tmp))) in (True, False)
    assert not claimed, (f"{reg.name}: can_handle claims {', '.join(claimed)}, which hold no results in any format "
                         "(sniff src.head for a mark of your format: ingest skips a file two adapters claim)")


# -- manifest writers ------------------------------------------------------------------
def check_manifest_writer(reg):
    """The writer runs as ``reduce`` runs it (:func:`harness_ext.safe_output.run_writer`): it is given an
    :class:`~harness_ext.safe_output.OutputDir`, must return a list of the files it wrote, non-empty, and
    write nothing outside its folder (what it writes beside the folder is removed)."""
    from .errors import HarnessExtError
    from .methods.reduction.manifest import example_manifest
    from .safe_output import run_writer

    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "stage"
        (stage / "files").mkdir(parents=True)
        try:
            paths = run_writer(reg, example_manifest(), stage, Path(tmp) / "out")
        except HarnessExtError as exc:
            raise AssertionError(f"{reg.name}: {exc}") from None
        assert paths, f"{reg.name}: wrote no files"
        for p in paths:
            assert p.stat().st_size > 0, f"{reg.name}: {p.relative_to(stage / 'files')} is empty"


# -- item estimators -----------------------------------------------------------------------
def _item_population(seed=6):
    """0/1 answers of 40 source and 6 target models on 300 items (a 1-parameter logistic model), 40 items sampled."""
    rng = np.random.default_rng(seed)
    ability, difficulty = rng.normal(size=46), rng.normal(size=300)
    P = (rng.random((46, 300)) < 1 / (1 + np.exp(difficulty[None, :] - ability[:, None]))).astype(float)
    items = np.sort(rng.choice(300, 40, replace=False))
    return P[:40], P[40:], items


def check_item_estimator_params(reg):
    _check_params(reg)


def check_item_estimator_interval(reg):
    source, targets, items = _item_population()
    est = _make(reg)
    fit_kw = {}
    if getattr(est, "uses_strata", False):  # a stratified design's estimator: its items come from the strata
        from .methods.engine.item_designs import draw_design

        items, info = draw_design("stratified", source, len(items), random_state=0)
        fit_kw["strata"] = info["strata"]
    elif hasattr(est, "select"):  # it picks its own items
        items = np.asarray(est.select(source, len(items), random_state=0))
    out = est.fit(source, items, **fit_kw).predict(targets[:, items])
    est, lo, hi = (np.asarray(a, dtype=float) for a in (out.estimate, out.lower, out.upper))
    assert est.shape == lo.shape == hi.shape == (len(targets),), f"{reg.name}: one estimate and interval per target"
    assert np.isfinite(est).all(), f"{reg.name}: estimates not finite"
    if reg.interval:
        assert np.isfinite(lo).all() and np.isfinite(hi).all(), f"{reg.name}: interval not finite"
        assert np.all(lo <= est + 1e-12) and np.all(est <= hi + 1e-12), f"{reg.name}: estimate outside its interval"
    assert np.all(np.abs(est - targets.mean(axis=1)) < 0.35), f"{reg.name}: estimate far from the full-task mean"


CHECKS = {
    "similarity_measures": (check_similarity_shape_symmetry, check_similarity_missing_and_constant),
    "selectors": (check_selector_params, check_selector_order, check_selector_deterministic),
    "predictors": (check_predictor_params, check_predictor_completes),
    "weighting_schemes": (check_weighting,),
    "adapters": (check_adapter_sniffing,),
    "manifest_writers": (check_manifest_writer,),
    "item_estimators": (check_item_estimator_params, check_item_estimator_interval),
}


def iter_checks(kinds: Optional[Iterable[str]] = None, names: Optional[Iterable[str]] = None):
    """Yield ``(registration, check)`` for every registered plugin of ``kinds`` (or only ``names``).

    Raises
    ------
    PluginError
        If a name asked for is not registered under any of ``kinds`` (misspelt, not installed,
        or left out by ``HARNESS_EXT_LOAD_PLUGINS``/``HARNESS_EXT_DISABLE_PLUGINS``): contract
        tests must fail then, not pass with zero checks. Names are normalised first
        (``My-Selector`` is ``my_selector``).
    """
    from .errors import PluginError
    from .types import normalise_name

    wanted = None
    if names is not None:
        names = [names] if isinstance(names, str) else list(names)
        if not names:
            raise PluginError("parametrize_with_checks(names=[]) selects no plugin: give names, or None for all")
        try:
            wanted = {normalise_name(n): n for n in names}
        except ValueError as exc:
            raise PluginError(str(exc)) from None
    pairs, seen = [], set()
    for kind in kinds or CHECKS:
        for name, reg in get_registrations(kind).items():
            if wanted is None or name in wanted:
                seen.add(name)
                pairs.extend((reg, check) for check in CHECKS[kind])
    if wanted is not None and set(wanted) - seen:
        missing = [wanted[n] for n in sorted(set(wanted) - seen)]
        import os

        hint = ""
        if os.environ.get("HARNESS_EXT_LOAD_PLUGINS") is not None:
            hint = f" (HARNESS_EXT_LOAD_PLUGINS={os.environ['HARNESS_EXT_LOAD_PLUGINS']!r} may exclude it)"
        raise PluginError(f"no registered plugin named {', '.join(map(repr, missing))} among "
                          f"{', '.join(kinds or CHECKS)}{hint}: nothing to check")
    yield from pairs


def parametrize_with_checks(kinds: Optional[Iterable[str]] = None, names: Optional[Iterable[str]] = None) -> Callable:
    """A ``pytest.mark.parametrize`` over ``(registration, check)`` pairs, one test case per check.

    Parameters
    ----------
    kinds : iterable of str, optional
        Registration kinds to check (keys of :data:`CHECKS`: ``"selectors"``, ``"predictors"``, ``"adapters"``,
        ...); default every kind.
    names : str or iterable of str, optional
        Only the registrations of these names (normalised as registrations are); default every registered one,
        built-ins included. Set ``HARNESS_EXT_LOAD_PLUGINS`` to your distribution before importing, so that no
        other installed plugin is checked or clashes with yours.

    Returns
    -------
    pytest.MarkDecorator
        Decorate ``def test_contract(registration, check): check(registration)`` with it.

    Raises
    ------
    PluginError
        A name in ``names`` is not registered under ``kinds`` (:func:`iter_checks`).

    Examples
    --------
    >>> @parametrize_with_checks(kinds=["predictors"], names=["my-predictor"])  # doctest: +SKIP
    ... def test_contract(registration, check):
    ...     check(registration)

    References
    ----------
    Modelled on scikit-learn's ``sklearn.utils.estimator_checks.parametrize_with_checks`` (Pedregosa et al. 2011).
    """
    import pytest

    pairs = list(iter_checks(kinds, names))
    ids = [f"{reg.name}-{check.__name__}" for reg, check in pairs]
    return pytest.mark.parametrize("registration, check", pairs, ids=ids)
