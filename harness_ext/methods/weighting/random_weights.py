"""Rankings under weights drawn uniformly from the simplex: score ranges, pairwise wins, top-two swaps (Ailem et al. §3.3, §5.2.3, Fig. 4, 12)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import numpy as np
import pandas as pd

from ...base import check_matrix
from ...errors import MethodError
from ...report import Result, format_table, listed, plural
from .common import CHUNK_FLOATS, _require_complete, is_binary, ranks_desc, section, short_name, weighted_scores
from .sampling import sample_simplex, sample_simplex_spacings


@dataclass
class RandomWeightsResult(Result):
    """What :func:`random_weight_analysis` measures over ``n_draws`` simplex draws.

    Attributes
    ----------
    models : list
    uniform : ndarray (n_models,)
        Score under uniform weights.
    score_min, score_max, score_mean, score_std : ndarray (n_models,)
        Range, mean and standard deviation of each model's weighted score over
        the draws. For uniform simplex weights the expected standard deviation
        is ``sqrt(var(x) / (d + 1))`` with ``var`` the population variance of
        the model's ``d`` column scores (see :func:`expected_score_std`).
    best_rank, worst_rank : ndarray (n_models,) or None
        Best and worst rank a model reached (1 = best), when ranks were tracked.
    pairwise : DataFrame
        Fraction of draws in which the row model scores strictly higher than the
        column model, over the ``pairwise_top`` best models under uniform weights
        (Ailem et al. Figure 4).
    top_two : tuple
        (first, second) model under uniform weights.
    top_two_swap_rate : float
        Fraction of draws in which the second scores strictly higher than the first.
    largest_score_shift : float
        max over models and draws of ``|weighted - uniform| / uniform``
        (models with uniform score 0 are left out of this maximum).
    largest_score_shift_model : str
    largest_abs_score_shift : float
        max over models and draws of ``|weighted - uniform|`` (score units).
    largest_abs_score_shift_model : str
    largest_range : float
        max over models of ``max - min`` weighted score over the draws (score
        units): the spread of Ailem et al. Figure 12, which §5.2.3 reports as "the
        performance of a model can change up to 10%" (accuracy points).
    largest_range_model : str
    sample : ndarray (n_keep, n_models)
        The first draws' scores, kept for distribution plots.
    pairwise_exact : DataFrame or None
        For a complete 0/1 matrix, the exact probabilities that ``pairwise``
        estimates (:func:`binary_beat_probability`); None otherwise.
    """
    command = "weights"

    models: list
    n_draws: int
    uniform: np.ndarray
    score_min: np.ndarray
    score_max: np.ndarray
    score_mean: np.ndarray
    score_std: np.ndarray
    best_rank: Optional[np.ndarray]
    worst_rank: Optional[np.ndarray]
    pairwise: pd.DataFrame
    top_two: tuple
    top_two_swap_rate: float
    largest_score_shift: float
    largest_score_shift_model: str
    largest_abs_score_shift: float
    largest_abs_score_shift_model: str
    largest_range: float
    largest_range_model: str
    sample: np.ndarray
    pairwise_exact: Optional[pd.DataFrame] = None

    def table(self) -> pd.DataFrame:
        """Per-model summary, best uniform score first."""
        t = pd.DataFrame(
            {
                "uniform": self.uniform,
                "min": self.score_min,
                "max": self.score_max,
                "range": self.score_max - self.score_min,
                "std": self.score_std,
                "max_abs_shift": np.maximum(self.score_max - self.uniform, self.uniform - self.score_min),
                "max_rel_shift": self.max_rel_shift(),
            },
            index=pd.Index(self.models, name="model"),
        )
        if self.best_rank is not None:
            t["uniform_rank"] = ranks_desc(self.uniform)
            t["best_rank"] = self.best_rank
            t["worst_rank"] = self.worst_rank
        return t.sort_values("uniform", ascending=False, kind="stable")

    def max_rel_shift(self) -> np.ndarray:
        abs_shift = np.maximum(self.score_max - self.uniform, self.uniform - self.score_min)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.uniform > 0, abs_shift / np.where(self.uniform > 0, self.uniform, 1.0), np.nan)

    def summary(self) -> dict:
        """The named outputs, JSON-ready."""
        return {
            "n_draws": int(self.n_draws),
            "n_models": len(self.models),
            "top_two": list(self.top_two),
            "top_two_swap_rate": float(self.top_two_swap_rate),
            "largest_score_shift": float(self.largest_score_shift),
            "largest_score_shift_model": self.largest_score_shift_model,
            "largest_abs_score_shift": float(self.largest_abs_score_shift),
            "largest_abs_score_shift_model": self.largest_abs_score_shift_model,
            "largest_range": float(self.largest_range),
            "largest_range_model": self.largest_range_model,
            **({"top_two_swap_rate_exact": float(self.pairwise_exact.iloc[1, 0])} if self.pairwise_exact is not None else {}),
        }

    title = "weighted score under random simplex weights"

    def tables(self) -> dict:
        out = {"scores": self.table(), "pairwise": self.pairwise}
        if self.pairwise_exact is not None:
            out["pairwise_exact"] = self.pairwise_exact
        return out

    def render(self, top: int = 20) -> str:
        """The ``top`` models' score ranges, the pairwise matrix of the first ten and the named outputs."""
        t = self.table()
        parts = [section(f"weighted score over {self.n_draws:,} random simplex weightings (top {min(top, len(t))} of {len(t)})",
                         format_table(t.head(top), self.floatfmt))]
        k_show = min(top, 10, len(self.pairwise))
        shown = self.pairwise.iloc[:k_show, :k_show].copy()
        shown.index = [f"{i + 1} {short_name(n, 40)}" for i, n in enumerate(shown.index)]
        shown.columns = [str(i + 1) for i in range(k_show)]
        parts.append(section(f"pairwise: fraction of draws where row beats column (top {k_show}; full matrix in pairwise.csv)",
                             format_table(shown, "{:.2f}") + self._ties_note()))
        s = self.summary()
        parts.append(section(
            "named outputs",
            f"top_two_swap_rate        {s['top_two_swap_rate']:.4f}  fraction of draws where uniform #2 beats #1 "
            f"({s['top_two'][1]} beats {s['top_two'][0]})\n"
            f"largest_range            {s['largest_range']:.4f}  max - min weighted score, score units "
            f"(Ailem et al. report up to 10%), {s['largest_range_model']}\n"
            f"largest_abs_score_shift  {s['largest_abs_score_shift']:.4f}  max |weighted - uniform|, score units, "
            f"{s['largest_abs_score_shift_model']}\n"
            f"largest_score_shift      {s['largest_score_shift']:.4f}  max |weighted - uniform| / uniform (relative), "
            f"{s['largest_score_shift_model']}{self._near_zero_note(s['largest_score_shift_model'])}"
            + (f"\ntop_two_swap_rate_exact  {s['top_two_swap_rate_exact']:.4f}  0/1 data: I_1/2(n_21, n_12) over the prompts "
               "where the two differ (binary_beat_probability)" if "top_two_swap_rate_exact" in s else ""),
        ))
        return "\n\n".join(parts)

    @cached_property
    def _ties(self) -> tuple:
        """:func:`pairwise_ties` of ``pairwise``, computed once: the text's tie note and the plot read the same."""
        return pairwise_ties(self.pairwise)

    def tied_pairs(self) -> tuple:
        """``(pairs tied in every draw, pairs tied in some)`` among the models of ``pairwise``, each ``(row model,
        column model)`` once: a tie is neither a win nor a loss, so a tied pair's two cells add to less than 1 (two
        models with the same score on every column are 0 both ways)."""
        _, every, some = self._ties
        return list(every), list(some)

    def _ties_note(self) -> str:
        every, some = self.tied_pairs()
        out = ""
        if every:
            out += (f"\n{plural(len(every), 'pair')} tied in every draw (the same score on every column), so 0 both "
                    f"ways: {listed([f'{a} = {b}' for a, b in every], 6)}")
        if some:
            out += (f"\n{plural(len(some), 'pair')} tied in some draws: their two cells add to less than 1 "
                    f"({listed([f'{a} / {b}' for a, b in some], 4)})")
        return out

    def _near_zero_note(self, model: str) -> str:
        """For ``largest_score_shift``: the model's uniform score when it is under a tenth of the median model's,
        where a relative shift is large whatever the weights (HELMET at 128k: models scoring about 0.01)."""
        uniform = np.asarray(self.uniform, dtype=float)
        u, median = uniform[list(self.models).index(model)], float(np.nanmedian(uniform))
        if not (median > 0 and u < 0.1 * median):
            return ""
        return (f" (uniform score {u:.4f}, the median model's {median:.4f}: relative to a score near 0, a shift is "
                f"large whatever the weights; largest_abs_score_shift is the one to compare)")

    def plot(self, path, kind: str = "pairwise", top: int = 20, scale: str = ""):
        """Draw Ailem et al. Figure 4 (``kind="pairwise"``: how often the row model beats the column model) or
        Figure 12 (``kind="distribution"``: the ``top`` models' weighted-score distributions); returns the PNG path."""
        if kind == "pairwise":
            return plot_pairwise(self, path)
        if kind == "distribution":
            return plot_score_distribution(self, path, top=top, scale=scale)
        raise MethodError(f"kind must be 'pairwise' or 'distribution', got {kind!r}")


def pairwise_ties(pairwise: pd.DataFrame) -> tuple:
    """``(tie, pairs tied in every draw, pairs tied in some)`` of a "row beats column" matrix: ``tie`` is the share
    of draws in which each pair tied (``1 - P - P.T``), the pairs are ``(row model, column model)`` once each."""
    P = pairwise.to_numpy()
    tie = 1.0 - P - P.T
    names = list(pairwise.index)
    every, some = [], []
    for i, j in zip(*np.triu_indices(len(P), 1)):
        if tie[i, j] >= 1 - 1e-9:
            every.append((names[i], names[j]))
        elif tie[i, j] > 1e-9:
            some.append((names[i], names[j]))
    return tie, every, some


def default_chunk_size(n_columns: int, n_models: int, pairwise_k: int = 0) -> int:
    """Draws per chunk so that one chunk holds about :data:`CHUNK_FLOATS` floats."""
    width = max(n_columns, n_models, pairwise_k * pairwise_k, 1)
    return int(max(1, min(100_000, CHUNK_FLOATS // width)))


def random_weight_analysis(
    df: pd.DataFrame,
    n_draws: int = 100_000,
    random_state: int = 0,
    chunk_size: Optional[int] = None,
    pairwise_top: int = 20,
    track_ranks: bool = True,
    keep: int = 2000,
    show_progress: bool = True,
) -> RandomWeightsResult:
    """Score ranges, pairwise win rates and top-two swaps under random simplex weights.

    Draws ``n_draws`` weight vectors uniformly from the simplex over the columns
    (:func:`sample_simplex`) in chunks of ``chunk_size`` draws, so memory stays
    bounded whatever ``n_draws`` is; results do not depend on ``chunk_size``.

    Parameters
    ----------
    df : DataFrame, models x columns
        NaN cells are allowed: each model's weights are renormalised over its
        observed columns (see :func:`weighted_scores`).
    n_draws : int
        100,000 as in the paper.
    random_state : int
    chunk_size : int, optional
        Default :func:`default_chunk_size`.
    pairwise_top : int
        The pairwise "row beats column" matrix is computed for this many best
        models under uniform weights (all models if there are fewer): it costs
        ``k^2`` per draw. The paper's matrices have 8-14 models.
    track_ranks : bool
        Also record every model's best and worst rank (a sort per draw).
    keep : int
        Number of first draws whose scores are kept for plots.

    Returns
    -------
    RandomWeightsResult

    Notes
    -----
    "Beats" is strictly greater. The largest relative score shift divides by the
    uniform score; on chance-normalised matrices models near chance have uniform
    scores near 0 and dominate it, so the absolute shift is reported too.

    References
    ----------
    Ailem et al. §3.3 "Random distributions of weights", §5.2.3, Figures 4 and 12.
    """
    from ...report import progress

    if not isinstance(df, pd.DataFrame):
        df = pd.DataFrame(df)
    X = check_matrix(df.to_numpy(dtype=float), min_rows=2)
    m, d = X.shape
    if n_draws < 1:
        raise MethodError(f"n_draws must be >= 1, got {n_draws}")
    models = [str(x) for x in df.index]
    uniform = weighted_scores(X, np.full(d, 1.0 / d))
    if np.isnan(uniform).any():
        bad = [models[i] for i in np.flatnonzero(np.isnan(uniform))][:5]
        raise MethodError(f"models with no observed column: {bad}")
    order = np.argsort(-uniform, kind="stable")
    top = order[: min(int(pairwise_top), m)] if pairwise_top else order[:2]
    a, b = order[0], order[1]
    k = len(top)
    chunk = int(chunk_size) if chunk_size else default_chunk_size(d, m, k)

    rng = np.random.default_rng(random_state)
    acc = _DrawAccumulator.start(m, k, track_ranks)
    starts = range(0, n_draws, chunk)
    for start in progress(starts, total=len(starts), desc="random weights", disable=None if show_progress else True):
        W = sample_simplex(min(chunk, n_draws - start), d, rng)
        acc.add(weighted_scores(X, W), uniform, top, (a, b), keep)
    return _random_weights_result(X, models, uniform, top, (a, b), n_draws, acc)


class _DrawAccumulator:
    """Running minima, maxima, moments, ranks, pairwise wins and kept draws over chunks of draws."""

    @classmethod
    def start(cls, m: int, k: int, track_ranks: bool) -> "_DrawAccumulator":
        acc = cls()
        acc.smin = np.full(m, np.inf)
        acc.smax = np.full(m, -np.inf)
        acc.ssum = np.zeros(m)
        acc.ssq = np.zeros(m)
        acc.best = np.full(m, m + 1, dtype=np.int64) if track_ranks else None
        acc.worst = np.zeros(m, dtype=np.int64) if track_ranks else None
        acc.wins = np.zeros((k, k), dtype=np.int64)
        acc.swaps = 0
        acc.kept = []
        acc.n_kept = 0
        return acc

    def add(self, S: np.ndarray, uniform: np.ndarray, top: np.ndarray, first_two, keep: int) -> None:
        """Fold one chunk of weighted scores ``S`` (draws x models) in; ``S`` is overwritten."""
        m = S.shape[1]
        np.minimum(self.smin, S.min(axis=0), out=self.smin)
        np.maximum(self.smax, S.max(axis=0), out=self.smax)
        if self.best is not None:
            # rank r of the model at position j of argsort(-S): ties broken arbitrarily,
            # which only matters for duplicated model rows.
            pos = np.argsort(-S, axis=1)
            R = np.empty_like(pos)
            np.put_along_axis(R, pos, np.arange(1, m + 1)[None, :], axis=1)
            np.minimum(self.best, R.min(axis=0), out=self.best)
            np.maximum(self.worst, R.max(axis=0), out=self.worst)
        St = S[:, top]
        self.wins += (St[:, :, None] > St[:, None, :]).sum(axis=0)
        a, b = first_two
        self.swaps += int((S[:, b] > S[:, a]).sum())
        if self.n_kept < keep:
            take = S[: keep - self.n_kept]
            self.kept.append(take.copy())
            self.n_kept += len(take)
        # moments last, on S centred in place on the uniform score: no cancellation, and no
        # temporaries the size of the chunk (they cost as much as the product itself)
        S -= uniform
        self.ssum += S.sum(axis=0)
        self.ssq += np.einsum("ij,ij->j", S, S)


def _random_weights_result(X, models, uniform, top, first_two, n_draws, acc) -> RandomWeightsResult:
    m = len(models)
    a, b = first_two
    top_names = [models[i] for i in top]
    pairwise = pd.DataFrame(acc.wins / n_draws, index=top_names, columns=top_names)
    abs_shift = np.maximum(acc.smax - uniform, uniform - acc.smin)
    i_abs = int(np.argmax(abs_shift))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(uniform > 0, abs_shift / np.where(uniform > 0, uniform, 1.0), -np.inf)
    i_rel = int(np.argmax(rel))
    mean = uniform + acc.ssum / n_draws
    # variance about the mean from squares about the uniform score
    var = np.maximum(acc.ssq / n_draws - np.square(acc.ssum / n_draws), 0.0)
    rng_width = acc.smax - acc.smin
    i_range = int(np.argmax(rng_width))
    return RandomWeightsResult(
        models=models,
        n_draws=int(n_draws),
        uniform=uniform,
        score_min=acc.smin,
        score_max=acc.smax,
        score_mean=mean,
        score_std=np.sqrt(var),
        best_rank=acc.best,
        worst_rank=acc.worst,
        pairwise=pairwise,
        top_two=(models[a], models[b]),
        top_two_swap_rate=acc.swaps / n_draws,
        largest_score_shift=float(rel[i_rel]) if np.isfinite(rel[i_rel]) else float("nan"),
        largest_score_shift_model=models[i_rel],
        largest_abs_score_shift=float(abs_shift[i_abs]),
        largest_abs_score_shift_model=models[i_abs],
        largest_range=float(rng_width[i_range]),
        largest_range_model=models[i_range],
        sample=np.concatenate(acc.kept, axis=0) if acc.kept else np.empty((0, m)),
        pairwise_exact=(pd.DataFrame(binary_beat_probability(X[top]), index=top_names, columns=top_names)
                        if not np.isnan(X).any() and is_binary(X) else None),
    )


def binary_beat_probability(X) -> np.ndarray:
    """Exact probability that row model ``i`` beats model ``j`` under uniform simplex weights, 0/1 data.

    Only the prompts where the two models differ matter: ``n_ij`` that ``i``
    got right and ``j`` wrong, ``n_ji`` the reverse. Their summed weights ``U``
    and ``V`` satisfy ``U / (U + V) ~ Beta(n_ij, n_ji)`` (aggregation property
    of Dirichlet(1, ..., 1)), so ``P(U > V) = I_{1/2}(n_ji, n_ij)``, the
    regularised incomplete beta function. For large counts this is about
    ``Phi((n_ij - n_ji) / sqrt(n_ij + n_ji))``: the swap rate of two models is
    a one-sided sign (McNemar) test of their difference, and it is near 1/2
    whenever the two are statistically tied, whatever the benchmark size.

    Parameters
    ----------
    X : array (n_models, n_prompts) of 0/1, complete

    Returns
    -------
    ndarray (n_models, n_models)
        ``P[i, j]``; 0 when ``n_ij = 0`` ("beats" is strict), 1 when only
        ``n_ji = 0``; zero diagonal.

    References
    ----------
    Ailem et al. §3.3 "Random distributions of weights", §5.2.3, Figure 4 (the matrix
    it estimates by sampling).
    """
    from scipy.special import betainc

    X = check_matrix(X, allow_nan=False)
    if not is_binary(X):
        raise MethodError("exact beat probabilities need a 0/1 matrix")
    both = X @ X.T
    right = X.sum(axis=1)
    n_ij = np.rint(right[:, None] - both)  # i right, j wrong
    n_ji = n_ij.T
    P = np.zeros_like(n_ij)
    ok = (n_ij > 0) & (n_ji > 0)
    P[ok] = betainc(n_ji[ok], n_ij[ok], 0.5)
    P[(n_ij > 0) & (n_ji == 0)] = 1.0
    return P


def expected_score_std(X) -> np.ndarray:
    """Standard deviation of each model's weighted score under uniform simplex weights.

    For ``w ~ Dirichlet(1, ..., 1)`` over ``d`` columns, ``Cov(w) = (I/d -
    11^T/d^2) / (d + 1)``, so ``Var(w @ x) = var(x) / (d + 1)`` where ``var`` is
    the population variance of the model's column scores (``p(1-p)`` for 0/1
    prompts with accuracy ``p``). It shows why shifts shrink as ``1/sqrt(d)``:
    a 14-dataset benchmark moves about ``sqrt(1201/15) ~ 9`` times as much as
    a 1,200-prompt one with the same spread of scores.

    Parameters
    ----------
    X : array (n_models, n_columns), complete

    Returns
    -------
    ndarray (n_models,)

    References
    ----------
    Ailem et al. §3.3, §5.2.3 (the score ranges this predicts).
    """
    X = check_matrix(X, allow_nan=False)
    return np.sqrt(X.var(axis=1) / (X.shape[1] + 1))


def random_weight_analysis_loop(df: pd.DataFrame, n_draws: int, random_state: int = 0, pairwise_top: int = 20) -> dict:
    """Per-draw Python reference of :func:`random_weight_analysis` (benchmarks and tests).

    One Smith-Tromble draw, one dot product and one set of comparisons per
    iteration; returns the same named outputs (min, max, pairwise, swap rate).
    Uses a different random stream, so it agrees only in distribution. Needs a
    complete matrix: it has no per-model renormalisation over observed columns.
    """
    X = np.asarray(df.to_numpy(dtype=float))
    _require_complete(X, "the per-draw reference")
    m, d = X.shape
    rng = np.random.default_rng(random_state)
    uniform = X.mean(axis=1)
    order = np.argsort(-uniform, kind="stable")
    top = order[: min(pairwise_top, m)]
    a, b = order[0], order[1]
    smin = np.full(m, np.inf)
    smax = np.full(m, -np.inf)
    wins = np.zeros((len(top), len(top)))
    swaps = 0
    for _ in range(n_draws):
        w = sample_simplex_spacings(d, rng)
        s = X @ w
        smin = np.minimum(smin, s)
        smax = np.maximum(smax, s)
        st = s[top]
        wins += st[:, None] > st[None, :]
        swaps += s[b] > s[a]
    return {"score_min": smin, "score_max": smax, "pairwise": wins / n_draws, "top_two_swap_rate": swaps / n_draws}


def plot_pairwise(res: RandomWeightsResult, path):
    """Heatmap like Ailem et al. Figure 4: percentage of draws where the row model beats the column model."""
    from ...report import get_pyplot, save_figure

    plt = get_pyplot()
    P = res.pairwise.to_numpy() * 100
    k = len(P)
    fig, ax = plt.subplots(figsize=(0.5 * k + 3, 0.5 * k + 2.5))
    im = ax.imshow(P, cmap="viridis", vmin=0, vmax=100)
    names = [short_name(x) for x in res.pairwise.index]
    ax.set_xticks(range(k), names, rotation=70, ha="right", fontsize=7)
    ax.set_yticks(range(k), names, fontsize=7)
    tie, ties, partial = res._ties  # the matrix the text's tie note read, not computed again
    every = tie >= 1 - 1e-9  # tied in every draw: 0 both ways, drawn as '='
    if k <= 25:
        for (i, j), v in np.ndenumerate(P):
            if i != j:
                ax.text(j, i, "=" if every[i, j] else f"{v:.0f}", ha="center", va="center", fontsize=6,
                        color="w" if v < 60 else "k")
    title = f"% of {res.n_draws:,} random weightings where row beats column"
    if ties or partial:  # a tie is no win: without a word, 0 both ways reads as a bug
        title += ("\n" + ("'=': tied in every draw (the same score on every column); " if ties and k <= 25 else
                           f"{plural(len(ties), 'pair')} tied in every draw (0 both ways); " if ties else "")
                  + "a tie is neither row's win nor column's")
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8, label="proportion where row > column (%)")
    return save_figure(fig, path)


def plot_score_distribution(res: RandomWeightsResult, path, top: int = 20, scale: str = ""):
    """Like Ailem et al. Figure 12 (left): weighted-score distributions; black dot = uniform weights. ``scale``: what
    the scores are (normalised, or the datasets' own units), on the axis."""
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
    ax.set_xlabel("weighted score" + (f" ({scale})" if scale else ""))
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Weighted score under random simplex weights", fontsize=9)
    return save_figure(fig, path)
