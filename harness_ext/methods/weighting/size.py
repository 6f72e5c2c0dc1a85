"""Increasing benchmark size: average scores along the most informative and random column orders (Ailem et al. §3.3, §5.2.2, Fig. 3, 10, 11)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...base import check_matrix
from ...errors import MethodError
from ..ranking import spearman
from ...report import Result, format_table
from .common import _require_complete, section, short_name, unit_columns


def most_informative_order(X, start: int) -> np.ndarray:
    """Greedy column order: next is the column with the largest mean cosine distance to those chosen.

    Parameters
    ----------
    X : array (n_models, n_columns), complete
    start : int
        First column (the paper starts from a random prompt).

    Returns
    -------
    ndarray of int, a permutation of the columns.

    Notes
    -----
    Distances are between column performance vectors (the paper's wording also
    fits prompt embeddings, which a result store does not have). All-zero
    vectors have cosine similarity 0 with everything (distance 1). Ties go to
    the lowest column index. Memory is O(n_columns x n_models): a running sum of
    distances is updated per step instead of building the distance matrix.

    References
    ----------
    Ailem et al. §3.3 "Increasing benchmark size", §5.2.2.
    """
    V, _ = unit_columns(X)
    d = V.shape[0]
    if not 0 <= start < d:
        raise MethodError(f"start column {start} out of range 0..{d - 1}")
    chosen = np.zeros(d, dtype=bool)
    acc = np.zeros(d)
    order = np.empty(d, dtype=int)
    j = int(start)
    for step in range(d):
        order[step] = j
        chosen[j] = True
        if step == d - 1:
            break
        acc += 1.0 - V @ V[j]
        j = int(np.argmax(np.where(chosen, -np.inf, acc)))
    return order


def cumulative_scores(X, order) -> np.ndarray:
    """Mean score of each model on the first ``k`` columns of ``order``, for k = 1..d.

    Returns ``(n_models, n_columns)``; NaN cells are skipped (mean of observed).
    """
    X = np.asarray(X, dtype=float)[:, order]
    obs = ~np.isnan(X)
    num = np.cumsum(np.where(obs, X, 0.0), axis=1)
    den = np.cumsum(obs, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


@dataclass
class SizeCurves(Result):
    """Curves of :func:`size_curves`: ``informative`` and ``random`` are models x sizes.

    ``by_size`` is the table per benchmark size: mean absolute deviation of the models'
    scores from their full-benchmark score and Spearman correlation of the induced
    ranking with the full one, for the informative and the random orders.
    """
    command = "weights"

    informative: pd.DataFrame
    random: pd.DataFrame
    informative_order: list
    random_order: list
    full: pd.Series
    by_size: pd.DataFrame
    n_random_orders: int = 20

    title = "increasing benchmark size: mean |score - full score| and Spearman with full ranking"

    def tables(self) -> dict:
        return {"by_size": self.by_size, "informative": self.informative, "random": self.random}

    def summary(self) -> dict:
        return {"informative_order_first10": self.informative_order[:10]}

    def render(self, sizes=None) -> str:
        """The ``by_size`` table at ``sizes`` (default: 1, 2, 3, 5, 10, 20, ... and a quarter, half and all columns)."""
        d = len(self.by_size)
        if sizes is None:
            sizes = sorted({1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, d // 4, d // 2, d} & set(range(1, d + 1)))
        caption = ("(informative: columns added farthest first, each the largest mean cosine distance to those "
                   f"chosen, from a random start; random: the mean over {self.n_random_orders} random orders)")
        return section(self.title, format_table(self.by_size.loc[sizes], self.floatfmt) + "\n" + caption)

    def plot(self, path, top: int = 10, scale: str = ""):
        """Average score against benchmark size for the ``top`` models, both orders (Ailem et al. Figures 3, 10, 11)."""
        return plot_size_curves(self, path, top=top, scale=scale)


def size_curves(df: pd.DataFrame, random_state: int = 0, n_random_orders: int = 20) -> SizeCurves:
    """Average performance as the benchmark grows, most informative vs random order.

    Both start from the same random column. The curves plotted are for one
    random order (as in Ailem et al. Fig. 11); the ``by_size`` table (per size: mean
    absolute deviation of models' scores from the full-benchmark score and the
    Spearman correlation of the induced ranking with the full ranking) averages
    the random method over ``n_random_orders`` orders, each with its own start.

    References
    ----------
    Ailem et al. §3.3 "Increasing benchmark size", §5.2.2, Figures 3, 10, 11.
    """
    X = check_matrix(df.to_numpy(dtype=float), min_rows=2)
    _require_complete(X, "the most-informative order")
    m, d = X.shape
    rng = np.random.default_rng(random_state)
    start = int(rng.integers(d))
    inf_order = most_informative_order(X, start)
    rand_orders = [np.concatenate(([start], rng.permutation(np.delete(np.arange(d), start))))]
    for _ in range(max(0, n_random_orders - 1)):
        rand_orders.append(rng.permutation(d))
    full = X.mean(axis=1)
    sizes = np.arange(1, d + 1)

    def deviation(C):
        mad = np.abs(C - full[:, None]).mean(axis=0)
        rho = spearman(C.T, full)  # every size at once: NaN where a ranking is constant
        return mad, rho

    C_inf = cumulative_scores(X, inf_order)
    mad_i, rho_i = deviation(C_inf)
    curves_r = [cumulative_scores(X, o) for o in rand_orders]
    devs = [deviation(C) for C in curves_r]
    mad_r = np.mean([x[0] for x in devs], axis=0)
    rho_r = np.nanmean(np.array([x[1] for x in devs]), axis=0)
    cols = [str(c) for c in df.columns]
    by_size = pd.DataFrame(
        {"informative_mad": mad_i, "random_mad": mad_r, "informative_spearman": rho_i, "random_spearman": rho_r},
        index=pd.Index(sizes, name="size"),
    )
    return SizeCurves(
        informative=pd.DataFrame(C_inf, index=df.index, columns=sizes),
        random=pd.DataFrame(curves_r[0], index=df.index, columns=sizes),
        informative_order=[cols[i] for i in inf_order],
        random_order=[cols[i] for i in rand_orders[0]],
        full=pd.Series(full, index=df.index),
        by_size=by_size,
        n_random_orders=len(rand_orders),
    )


def plot_size_curves(curves: SizeCurves, path, top: int = 10, scale: str = ""):
    """Like Ailem et al. Figures 3/10/11: average score vs benchmark size, two panels; ``scale`` (what the scores
    are) on the axis."""
    from ...report import get_pyplot, save_figure

    plt = get_pyplot()
    models = curves.full.sort_values(ascending=False, kind="stable").index[:top]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    sizes = curves.informative.columns.to_numpy()
    for ax, C, title in ((axes[0], curves.informative, "most informative"), (axes[1], curves.random, "random order")):
        for mname in models:
            (line,) = ax.plot(sizes, C.loc[mname].to_numpy(), lw=1.2, label=short_name(mname, 32))
            ax.axhline(curves.full[mname], color=line.get_color(), ls=":", lw=0.8)
        ax.set_title(f"Average score as benchmark size increases: {title}", fontsize=9)
        ax.set_xlabel("benchmark size (columns)")
        ax.xaxis.get_major_locator().set_params(integer=True)  # a size is a count of columns: no 1.5
    axes[0].set_ylabel("average score" + (f", {scale}" if scale else "") + "\n(dotted: full benchmark)")
    axes[1].legend(fontsize=6, loc="best")
    return save_figure(fig, path)
