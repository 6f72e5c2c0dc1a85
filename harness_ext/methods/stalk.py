"""stalk: classify how pairs of datasets (and pairs of models) relate (SimBA phase 1).

For every pair of columns ``(a, b)`` six least-squares regressors are fitted:
LINEAR, EXPONENTIAL and POWER-LAW, each predicting ``b`` from ``a`` and ``a``
from ``b``; the pair gets the relationship of the regressor with the largest
R^2, or NONE when that R^2 is below a threshold (0.5 in the paper). Model pairs
are the same analysis on the transposed matrix.

Definitions where the paper is silent (tested in tests/test_stalk.py)
---------------------------------------------------------------------
* The transformations: EXPONENTIAL ``y = c * exp(k x)`` is fitted as
  ``log y ~ x``; POWER-LAW ``y = c * x^k`` as ``log y ~ log x``. R^2 is the R^2
  of that linear fit on the transformed variables (the regressor the paper
  fits; SimBA §2.1: "apply a transformation ... before learning the linear
  regressor").
* For a one-predictor least-squares line with intercept, R^2 is the squared
  Pearson correlation of the (transformed) variables, so all six regressors
  for all pairs come from three masked correlation matrices in closed form.
  Consequently LINEAR and POWER-LAW have the same R^2 in both directions;
  only EXPONENTIAL depends on direction.
* Non-positive values cannot be logged: a log-transformed fit uses only the
  observations where every logged variable is > 0 (chance-normalised scores
  are often exactly 0). A fit with fewer than ``min_points`` usable
  observations (default 3), or using less than ``min_fraction`` (default
  0.5) of the observations the pair shares, has no R^2 (NaN) and cannot win;
  the number of observations each fit used is in the pair table. Without the
  fraction rule, near-chance matrices are misclassified: on Pythia MMLU (836
  models, 52% of cells exactly 0) a POWER-LAW fit on the 4 models positive on
  both abstract_algebra and high_school_mathematics (R^2 0.83) beat the
  LINEAR fit on all 836 (R^2 0.005). R^2 values of fits on different subsets
  of the models are not comparable once most of the models are dropped.
* Missing cells: pairwise-complete observations.
* Ties: the first of LINEAR, EXPONENTIAL, POWER-LAW (and ``a -> b`` before
  ``b -> a``) wins, so a perfect line is LINEAR.

References
----------
SimBA (Subramani, Gomez, Diab), §2.1-2.2, §6.1, Tables 1-2.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from ..base import CHANCE_WARNING_RATE, check_matrix
from ..errors import MethodError
from ..report import Result, format_table

RELATIONSHIPS = ("LINEAR", "EXPONENTIAL", "POWER-LAW", "NONE")
#: The six regressors in tie-break order: (relationship, direction). "ab" predicts b from a.
REGRESSORS = (
    ("LINEAR", "ab"),
    ("LINEAR", "ba"),
    ("EXPONENTIAL", "ab"),
    ("EXPONENTIAL", "ba"),
    ("POWER-LAW", "ab"),
    ("POWER-LAW", "ba"),
)
_COLUMN = {"LINEAR": "linear", "EXPONENTIAL": "exponential", "POWER-LAW": "power"}
#: Models up to which ``stalk`` classifies model pairs by default (about 500,000 pairs; Pythia's 838 runs: 350,000).
#: Past it the pairs grow to millions (Open LLM v2's 4,494 models: 10M pairs, minutes and a gigabyte-scale table),
#: so only dataset pairs are classified unless model pairs are asked for.
DEFAULT_MAX_MODEL_PAIRS_MODELS = 1_000


def default_axes(n_models: int) -> tuple:
    """``(axes, note)``: the axes ``stalk`` classifies when none is asked for, and why model pairs were left out
    (None when they were not): both, up to :data:`DEFAULT_MAX_MODEL_PAIRS_MODELS` models."""
    if n_models <= DEFAULT_MAX_MODEL_PAIRS_MODELS:
        return ("datasets", "models"), None
    pairs = n_models * (n_models - 1) // 2
    return ("datasets",), (f"{n_models:,} models: their {pairs:,} model pairs are not classified by default (over "
                           f"{DEFAULT_MAX_MODEL_PAIRS_MODELS:,} models); --axis models or --axis both classifies them")


def regressor_r2(X, min_points: int = 3, min_fraction: float = 0.5) -> tuple:
    """R^2 of the six regressors for every ordered pair of columns, in closed form.

    Parameters
    ----------
    X : array-like, shape (n_obs, p)
        Columns are the items compared (datasets; pass ``B.T`` for models).
    min_points : int
        Fewest observations a fit may use.
    min_fraction : float
        Smallest share of the pair's shared observations a log-transformed fit
        may use (it drops non-positive values); below it the fit has no R^2.
        0 turns the rule off.

    Returns
    -------
    r2 : dict
        ``"linear"``, ``"exponential"``, ``"power"`` -> ``(p, p)`` arrays;
        entry ``[a, b]`` is the R^2 of predicting column ``b`` from column ``a``.
    n : dict
        The same keys -> ``(p, p)`` number of observations each fit used.

    References
    ----------
    SimBA §2.1, eq. 2 and the transformed variants.
    """
    from harness_ext.methods.similarity.kernels import cross_pearson

    X = check_matrix(X)
    M = ~np.isnan(X)
    pos = M & (np.where(M, X, 0.0) > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        L = np.where(pos, np.log(np.where(pos, X, 1.0)), np.nan)
    Mf, Pf = M.astype(float), pos.astype(float)
    n = {"linear": Mf.T @ Mf, "exponential": Mf.T @ Pf, "power": Pf.T @ Pf}
    r = {"linear": cross_pearson(X), "exponential": cross_pearson(X, L), "power": cross_pearson(L)}
    if not 0.0 <= float(min_fraction) <= 1.0:
        raise MethodError(f"min_fraction must be in [0, 1], got {min_fraction}")
    need = np.maximum(min_points, min_fraction * n["linear"])
    r2 = {k: np.where(n[k] >= need, r[k] ** 2, np.nan) for k in r}
    return r2, n


@dataclass
class StalkResult:
    """Relationship classification of every pair of items (datasets or models).

    Attributes
    ----------
    pairs : pandas.DataFrame
        One row per unordered pair: ``a``, ``b``, the six R^2 values
        (``r2_linear_ab`` predicts ``b`` from ``a``, ...), ``best_r2``,
        ``relationship``, ``predictor`` and ``target`` of the winning fit (empty
        for NONE), and the observations used (``n_linear``, ``n_exponential_ab``,
        ``n_exponential_ba``, ``n_power``).
    counts : pandas.Series
        Pairs per relationship, plus ``Total`` (Tables 1-2).
    classes : pandas.DataFrame
        Square item x item matrix of relationship names (diagonal empty).
    axis : str
        ``"datasets"`` or ``"models"``.
    threshold : float
    min_fraction : float
        Share of a pair's observations a log-transformed fit had to keep.
    """

    pairs: pd.DataFrame
    counts: pd.Series
    classes: pd.DataFrame
    axis: str
    threshold: float
    min_fraction: float = 0.5


def classify_pairs(X, names=None, threshold: float = 0.5, min_points: int = 3, axis: str = "datasets",
                   min_fraction: float = 0.5) -> StalkResult:
    """Classify every pair of columns of ``X`` as LINEAR, EXPONENTIAL, POWER-LAW or NONE.

    Parameters
    ----------
    X : array-like, shape (n_obs, p)
        Items to compare are the columns.
    names : sequence of str, optional
        Column names (default ``0..p-1``).
    threshold : float
        Best R^2 below this is NONE (paper: 0.5, "a tunable hyperparameter").
    min_points, min_fraction
        See :func:`regressor_r2`.
    axis : str
        Label stored in the result.

    References
    ----------
    SimBA §2.1-2.2, Tables 1-2.
    """
    if not 0.0 <= float(threshold) <= 1.0:  # NaN fails too
        raise MethodError(f"threshold must be an R^2 in [0, 1], got {threshold}")
    if int(min_points) < 2:
        raise MethodError(f"min_points must be at least 2 (a line needs two points), got {min_points}")
    X = check_matrix(X, min_cols=2)
    p = X.shape[1]
    names = [str(c) for c in (names if names is not None else range(p))]
    r2, n = regressor_r2(X, min_points=min_points, min_fraction=min_fraction)
    ia, ib = np.triu_indices(p, k=1)
    stack = np.column_stack([
        r2["linear"][ia, ib], r2["linear"][ib, ia],
        r2["exponential"][ia, ib], r2["exponential"][ib, ia],
        r2["power"][ia, ib], r2["power"][ib, ia],
    ])
    has = np.isfinite(stack).any(axis=1)
    best_idx = np.argmax(np.where(np.isfinite(stack), stack, -np.inf), axis=1)
    best = np.where(has, stack[np.arange(len(ia)), best_idx], np.nan)
    # Names and classes as codes into categoricals, not string arrays: a numpy string array of model pairs is
    # pairs x the longest name x 4 bytes (Open LLM v2: 10M pairs x 102 characters, 4 GB each for a, b, predictor
    # and target; stalk peaked above 20 GB), and a categorical writes the same CSV.
    rel_code = np.array([RELATIONSHIPS.index(r) for r, _ in REGRESSORS])[best_idx]
    rel_code = np.where(has & (best >= threshold), rel_code, RELATIONSHIPS.index("NONE"))
    forward = np.array([d == "ab" for _, d in REGRESSORS])[best_idx]
    is_rel = rel_code != RELATIONSHIPS.index("NONE")
    labels = pd.Index(names + [""]) if "" not in names else None
    if labels is None or labels.has_duplicates:  # "" cannot mark "no predictor" among these names: plain strings
        named = np.array(names, dtype=object)
        pred_idx = np.where(forward, ia, ib)
        text = {"a": named[ia], "b": named[ib], "predictor": np.where(is_rel, named[pred_idx], ""),
                "target": np.where(is_rel, named[ia + ib - pred_idx], "")}
    else:
        empty = len(names)  # the code of "" (NONE has no predictor or target)
        pred_idx = np.where(is_rel, np.where(forward, ia, ib), empty)
        text = {k: pd.Categorical.from_codes(v, categories=labels)
                for k, v in (("a", ia), ("b", ib), ("predictor", pred_idx),
                             ("target", np.where(is_rel, ia + ib - pred_idx, empty)))}
    pairs = pd.DataFrame({
        "a": text["a"],
        "b": text["b"],
        **{f"r2_{_COLUMN[r]}_{d}": stack[:, i] for i, (r, d) in enumerate(REGRESSORS)},
        "best_r2": best,
        "relationship": pd.Categorical.from_codes(rel_code, categories=list(RELATIONSHIPS)),
        "predictor": text["predictor"],
        "target": text["target"],
        "n_linear": n["linear"][ia, ib].astype(int),
        "n_exponential_ab": n["exponential"][ia, ib].astype(int),
        "n_exponential_ba": n["exponential"][ib, ia].astype(int),
        "n_power": n["power"][ia, ib].astype(int),
    })
    counts = pd.Series(np.bincount(rel_code, minlength=len(RELATIONSHIPS)),
                       index=pd.Index(list(RELATIONSHIPS), name="relationship"), name=axis)
    counts["Total"] = len(pairs)
    # The square table as codes, then one gather into the names; object dtype: inferring a string dtype for each
    # of 4,494 columns took most of the table's time.
    codes = np.full((p, p), len(RELATIONSHIPS), dtype=np.int8)
    codes[ia, ib] = rel_code
    codes[ib, ia] = rel_code
    classes = np.array(list(RELATIONSHIPS) + [""], dtype=object)[codes]
    return StalkResult(pairs=pairs, counts=counts,
                       classes=pd.DataFrame(classes, index=names, columns=names, dtype=object),
                       axis=axis, threshold=float(threshold), min_fraction=float(min_fraction))


class StalkReport(Result):
    """Dataset-pair and model-pair classification of one matrix: a mapping ``axis -> StalkResult``
    that renders Tables 1-2 and plots the class heatmaps.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> df = pd.DataFrame(np.random.default_rng(0).random((6, 4)), columns=list("abcd"))
    >>> rep = stalk(df)
    >>> rep["datasets"].counts["Total"]
    6
    >>> rep.to_frame().columns.tolist()
    ['datasets', 'models']
    """

    title = "stalk: best-R^2 relationship per pair"
    command = "stalk"

    def __init__(self, results: dict, shape=None, benchmark: str = "", threshold: float = 0.5, min_fraction: float = 0.5):
        self.results = dict(results)
        self.shape = tuple(shape) if shape is not None else None
        self.benchmark = benchmark
        self.threshold = float(threshold)
        self.min_fraction = float(min_fraction)

    # a mapping of axis -> StalkResult, as stalk() returned before it was a Result
    def __getitem__(self, axis: str) -> StalkResult:
        return self.results[axis]

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __contains__(self, axis) -> bool:
        return axis in self.results

    def keys(self):
        return self.results.keys()

    def values(self):
        return self.results.values()

    def items(self):
        return self.results.items()

    @property
    def warnings(self) -> list:
        """One warning per axis whose pairs are fitted on so few points that unrelated ones pass the threshold by
        chance (:func:`chance_fit_rate` of the median pair's linear fit above
        :data:`~harness_ext.base.CHANCE_WARNING_RATE`)."""
        out = []
        for axis, res in self.results.items():
            n = res.pairs["n_linear"].to_numpy(dtype=float) if "n_linear" in res.pairs else np.array([])
            n = n[np.isfinite(n) & (n >= 3)]
            if not n.size:
                continue
            med = int(np.median(n))
            rate = chance_best_fit_rate(med, self.threshold)
            if rate > CHANCE_WARNING_RATE:
                over = "models" if axis == "datasets" else "datasets"
                out.append(f"{axis[:-1]} pairs are fitted on a median of {med} {over}: two unrelated ones reach R^2 >= "
                           f"{self.threshold:g} in the best of the six fits about {rate:.0%} of the time (in a linear "
                           f"fit alone {chance_fit_rate(med, self.threshold):.0%}), so many relationships counted here "
                           f"can be chance; add {over} or raise --threshold")
        return out

    def summary(self) -> dict:
        out = {"benchmark": self.benchmark or None, "threshold": self.threshold, "min_fraction": self.min_fraction}
        if self.shape is not None:
            out.update(models=int(self.shape[0]), datasets=int(self.shape[1]))
        return out

    def tables(self) -> dict:
        """``counts`` (Tables 1-2, main), then ``<axis>_pairs``: one row per pair with the six R^2 values."""
        return {"counts": counts_table(self.results), **{f"{axis[:-1]}_pairs": r.pairs for axis, r in self.results.items()}}

    def render(self) -> str:
        """A header line and the counts (the pair tables are long: see :meth:`tables` or the CSV files)."""
        shape = f"{self.shape[0]} models x {self.shape[1]} datasets " if self.shape is not None else ""
        return (f"stalk: {shape}({self.benchmark or 'all benchmarks'}); NONE if best R^2 < {self.threshold:g}; "
                f"log fits need >= {self.min_fraction:.0%} of a pair's observations\n"
                + format_table(counts_table(self.results)))

    def plot(self, path=None, title: str = ""):
        """Heatmap of relationship classes for each axis (one panel per axis); the path when ``path`` is given."""
        from matplotlib.colors import ListedColormap
        from matplotlib.patches import Patch

        from ..report import get_pyplot, save_figure

        plt = get_pyplot()
        # Constrained layout keeps long model names of one panel from running into the next.
        fig, axes = plt.subplots(1, len(self.results), figsize=(7.5 * len(self.results), 7.5), squeeze=False,
                                 layout="constrained")
        cmap = ListedColormap([_COLOURS[r] for r in RELATIONSHIPS]).with_extremes(bad="white")
        for ax, (axis, res) in zip(axes[0], self.results.items()):
            # One vectorised lookup ("" on the diagonal -> NaN), not a map per column (4,494 of them on Open LLM v2).
            found = pd.Categorical(res.classes.to_numpy().ravel(), categories=list(RELATIONSHIPS) + [""]).codes
            img = np.where(found == len(RELATIONSHIPS), np.nan, found).reshape(res.classes.shape)
            ax.imshow(np.ma.masked_invalid(img), cmap=cmap, vmin=-0.5, vmax=len(RELATIONSHIPS) - 0.5,
                      interpolation="nearest")
            names = list(res.classes.index)
            if len(names) <= 60:
                ax.set_xticks(range(len(names)))
                ax.set_yticks(range(len(names)))
                ax.set_xticklabels(names, rotation=90, fontsize=6)
                ax.set_yticklabels(names, fontsize=6)
            else:
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_xlabel(f"{len(names)} {axis} (labels omitted)")
            cnt = res.counts
            ax.set_title(f"{axis}: " + ", ".join(f"{r} {cnt[r]}" for r in RELATIONSHIPS) + f" (of {cnt['Total']})",
                         fontsize=9)
        handles = [Patch(color=_COLOURS[r], label=r) for r in RELATIONSHIPS]
        fig.legend(handles=handles, loc="outside lower center", ncol=4)
        fig.suptitle(title or (f"stalk: {self.benchmark}" if self.benchmark else self.title))
        return save_figure(fig, path) if path is not None else fig


def stalk(df: pd.DataFrame, threshold: float = 0.5, min_points: int = 3, axes=("datasets", "models"),
          min_fraction: float = 0.5, benchmark: str = "", show_progress=None) -> StalkReport:
    """Dataset-pair and model-pair classification of a performance matrix.

    Parameters
    ----------
    df : pandas.DataFrame, shape (m models, d datasets)
    threshold, min_points, min_fraction
        See :func:`classify_pairs`.
    axes : sequence of {"datasets", "models"}
    benchmark : str
        Name shown in the text and the plot title; default the benchmarks of the query in ``df.attrs``
        (a matrix from :func:`harness_ext.load_matrix`), else "all benchmarks".
    show_progress : bool, optional
        A progress bar over the axes (default: when stderr is a terminal).

    Returns
    -------
    StalkReport
        ``axis -> StalkResult`` (a mapping), which renders and plots itself.

    References
    ----------
    SimBA §2.1 (datasets: columns compared over models) and §2.2 (models:
    rows compared over datasets).
    """
    from ..report import progress

    for axis in axes:
        if axis not in ("datasets", "models"):
            raise MethodError(f"unknown stalk axis {axis!r}; use 'datasets' or 'models'")
    if not benchmark:
        # A matrix from load_matrix carries its query: name its benchmark, not "all benchmarks".
        from ..report import benchmarks_label

        benchmark = benchmarks_label(df, (df.attrs.get("query") or {}).get("benchmarks"))
    out = {}
    X = df.to_numpy(dtype=float)
    for axis in progress(list(axes), desc="stalk", disable=None if show_progress is None else not show_progress):
        if axis == "datasets":
            out[axis] = classify_pairs(X, list(df.columns), threshold, min_points, axis, min_fraction)
        else:
            out[axis] = classify_pairs(X.T, list(df.index), threshold, min_points, axis, min_fraction)
    return StalkReport(out, shape=df.shape, benchmark=benchmark, threshold=threshold, min_fraction=min_fraction)


def chance_fit_rate(n: int, threshold: float) -> float:
    """The chance that a least-squares line through ``n`` points of two unrelated variables has R^2 >= ``threshold``.

    Under independent normal noise R^2 of a simple regression is Beta(1/2, (n - 2)/2): with 3 points it passes 0.5
    half the time, with 10 points 2% of the time.

    References
    ----------
    Fisher (1915) on the distribution of the sample correlation coefficient; e.g. Muirhead, *Aspects of
    Multivariate Statistical Theory* (1982), Theorem 5.1.1.
    """
    if n < 3:
        return 1.0
    from scipy.stats import beta

    return float(beta.sf(float(threshold), 0.5, (n - 2) / 2.0))


@lru_cache(maxsize=64)  # seeded, so the same for the same arguments; the report's warnings ask for it on every render
def chance_best_fit_rate(n: int, threshold: float, draws: int = 20_000, seed: int = 0) -> float:
    """The chance that the best of the six fits of two unrelated variables observed on ``n`` points has
    R^2 >= ``threshold``: simulated (``draws`` pairs of independent uniform scores on (0, 1], seeded, so the same
    every run). The best of six passes more often than one line (:func:`chance_fit_rate`): at 0.5 with 6 points
    about 19% of the time against 12%, with 10 points about 5% against 2%. Above 30 points, where both are tiny, the
    union bound over the four distinct fits (4 x the linear rate) stands in for the simulation.

    References
    ----------
    SimBA (Subramani, Gomez, Diab), §2.1 (the six regressors); the linear fit's exact rate as in
    :func:`chance_fit_rate`.
    """
    if n < 3:
        return 1.0
    if n > 30:
        return min(1.0, 4.0 * chance_fit_rate(n, threshold))
    rng = np.random.default_rng(seed)
    a, b = (1.0 - rng.random((2, draws, int(n))))  # (0, 1]: every value can be logged

    def r2(x, y):
        x = x - x.mean(1, keepdims=True)
        y = y - y.mean(1, keepdims=True)
        return (x * y).sum(1) ** 2 / ((x * x).sum(1) * (y * y).sum(1))

    la, lb = np.log(a), np.log(b)
    # linear and power-law are the same both ways; exponential is log b ~ a and log a ~ b
    best = np.maximum.reduce([r2(a, b), r2(la, lb), r2(a, lb), r2(la, b)])
    return float(np.mean(best >= float(threshold)))


def counts_table(results) -> pd.DataFrame:
    """Tables 1-2 side by side: relationships x axes."""
    return pd.concat([r.counts for r in results.values()], axis=1)


_COLOURS = {"LINEAR": "#1f77b4", "EXPONENTIAL": "#ff7f0e", "POWER-LAW": "#2ca02c", "NONE": "#d9d9d9"}


def plot_class_heatmaps(results, path, title: str = ""):
    """Heatmap of relationship classes for each axis (one panel per axis); see :meth:`StalkReport.plot`."""
    rep = results if isinstance(results, StalkReport) else StalkReport(results)
    return rep.plot(path, title=title)
