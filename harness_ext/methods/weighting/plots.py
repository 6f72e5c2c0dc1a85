"""The four figures of the weighting analyses (003 Fig. 2, 4, 11, 12); matplotlib is imported only when one is drawn."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .common import short_name

if TYPE_CHECKING:  # only for the annotations
    from .random_weights import RandomWeightsResult
    from .schemes import SchemeComparison
    from .size import SizeCurves


def plot_rank_changes(comp: SchemeComparison, path, top: int = 20):
    """Heatmap like 003 Figure 2: rows schemes, columns models by increasing uniform score."""
    from ...report import get_pyplot, save_figure

    plt = get_pyplot()
    order = comp.scores["uniform"].sort_values(kind="stable").index
    models = list(order[-top:]) if top else list(order)
    schemes = [s for s in comp.rank_change.columns if s != "uniform"]
    M = comp.rank_change.loc[models, schemes].to_numpy().T.astype(float)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(models) + 2), 0.6 * len(schemes) + 2.5))
    lim = max(1.0, np.abs(M).max())
    im = ax.imshow(M, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(models)), [short_name(m) for m in models], rotation=70, ha="right", fontsize=7)
    ax.set_yticks(range(len(schemes)), schemes)
    if len(models) <= 40:
        for (i, j), v in np.ndenumerate(M):
            ax.text(j, i, f"{int(v)}", ha="center", va="center", fontsize=7, color="w" if abs(v) > 0.6 * lim else "k")
    title = "Rank change vs uniform weights (original rank - new rank)"
    if top and len(order) > top:
        title += f"; top {top} of {len(order)} models"
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8)
    return save_figure(fig, path)


def plot_pairwise(res: RandomWeightsResult, path):
    """Heatmap like 003 Figure 4: percentage of draws where the row model beats the column model."""
    from ...report import get_pyplot, save_figure

    plt = get_pyplot()
    P = res.pairwise.to_numpy() * 100
    k = len(P)
    fig, ax = plt.subplots(figsize=(0.5 * k + 3, 0.5 * k + 2.5))
    im = ax.imshow(P, cmap="viridis", vmin=0, vmax=100)
    names = [short_name(x) for x in res.pairwise.index]
    ax.set_xticks(range(k), names, rotation=70, ha="right", fontsize=7)
    ax.set_yticks(range(k), names, fontsize=7)
    if k <= 25:
        for (i, j), v in np.ndenumerate(P):
            if i != j:
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=6, color="w" if v < 60 else "k")
    ax.set_title(f"% of {res.n_draws:,} random weightings where row beats column", fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8, label="proportion where row > column (%)")
    return save_figure(fig, path)


def plot_score_distribution(res: RandomWeightsResult, path, top: int = 20):
    """Like 003 Figure 12 (left): weighted-score distributions; black dot = uniform weights."""
    from ...report import get_pyplot, save_figure

    plt = get_pyplot()
    order = np.argsort(-res.uniform, kind="stable")[:top]
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(order) + 1.5))
    y = np.arange(len(order))[::-1]
    if len(res.sample):
        parts = ax.violinplot([res.sample[:, i] for i in order], positions=y, orientation="horizontal", showextrema=False, widths=0.8)
        for body in parts["bodies"]:
            body.set_alpha(0.5)
    ax.hlines(y, res.score_min[order], res.score_max[order], color="0.5", lw=1, label=f"range over {res.n_draws:,} draws")
    ax.plot(res.uniform[order], y, "ko", ms=4, label="uniform weights")
    ax.set_yticks(y, [short_name(res.models[i], 36) for i in order], fontsize=7)
    ax.set_xlabel("weighted score")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Weighted score under random simplex weights", fontsize=9)
    return save_figure(fig, path)


def plot_size_curves(curves: SizeCurves, path, top: int = 10):
    """Like 003 Figures 3/10/11: average score vs benchmark size, two panels."""
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
    axes[0].set_ylabel("average score (dotted: full benchmark)")
    axes[1].legend(fontsize=6, loc="best")
    return save_figure(fig, path)
