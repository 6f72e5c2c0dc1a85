"""Permutation tests: are column performance vectors more similar, and more clustered, than chance? (Ailem et al. §3.2, §5.1, Tables 2 and 3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ...base import check_matrix
from ...errors import MethodError
from ...report import Result, format_table
from .clustering import cluster_columns
from .common import BINARY_MEASURES, SIMILARITY_MEASURES, _require_complete, is_binary, section
from .similarity import MAX_CODE_TABLE, STAT_NAMES, _binary_pair_codes, _pair_similarities, _stats, _stats_from_codes


def permute_within_models(X: np.ndarray, rng) -> np.ndarray:
    """Shuffle each model's scores across the columns independently (keeps every model's mean).

    References
    ----------
    Ailem et al. §3.2: "randomly shuffling the cells of each column" of Q (prompts x models).
    """
    keys = rng.random(X.shape)
    return np.take_along_axis(X, np.argsort(keys, axis=1), axis=1)


@dataclass
class PermutationTestResult(Result):
    """p-values (Table 2 layout: rows statistic, columns measure) and the statistics behind them."""
    command = "weights"

    pvalues: pd.DataFrame
    observed: pd.DataFrame
    permuted_mean: pd.DataFrame
    ks_statistic: pd.Series
    n_permutations: int

    title = "permutation test p-values (Ailem et al. Table 2)"

    def tables(self) -> dict:
        return {"pvalues": self.pvalues, "observed": self.observed, "permuted_mean": self.permuted_mean,
                "ks_statistic": self.ks_statistic.to_frame()}

    def summary(self) -> dict:
        return {"pvalues": {c: self.pvalues[c].to_dict() for c in self.pvalues.columns},
                "n_permutations": self.n_permutations}

    def render(self) -> str:
        """The p-values (n/a where every permutation gave the observed statistic), then each observed statistic
        with its mean over the permutations in brackets."""
        both = self.observed.round(4).astype(str) + " (" + self.permuted_mean.round(4).astype(str) + ")"
        # What the printed p-values cannot say: the permutations' floor, and a KS p-value past the floats' range.
        notes = untestable_notes(self.pvalues, self.n_permutations)
        floor = 1 / (1 + self.n_permutations)
        perm = self.pvalues.drop(index="KS test", errors="ignore")
        if (perm.to_numpy() <= floor * (1 + 1e-9)).any():
            notes.append(f"{floor:.4g} = 1/({self.n_permutations} + 1) is the smallest p-value {self.n_permutations} "
                         "permutations can give: no permutation reached the observed statistic")
        if "KS test" in self.pvalues.index and (self.pvalues.loc["KS test"] == 0).any():
            notes.append("a KS p-value of 0 is below the smallest number a float holds (about 1e-308)")
        return (section(f"permutation test p-values ({self.n_permutations} permutations; Ailem et al. Table 2)",
                        _pvalue_table(self.pvalues) + "".join(f"\n({n})" for n in notes))
                + "\n\n" + section("observed statistic (permuted mean)", format_table(both, self.floatfmt)))


#: The statistic no permutation can move: a model's agreements summed over all pairs of columns depend only on how
#: many of its columns are 1, which :func:`permute_within_models` keeps.
FIXED_BY_PERMUTATION = ("average", "hamming")


def _pvalue_table(pvalues: pd.DataFrame) -> str:
    """The p-values as printed: 4 significant digits, ``n/a`` where there is none."""
    return pvalues.apply(lambda col: col.map(lambda v: "n/a" if pd.isna(v) else f"{v:.4g}")).to_string()


def untestable_notes(pvalues: pd.DataFrame, n_permutations: int) -> list:
    """Why a cell of the p-value table is n/a: its statistic was the observed one in every permutation."""
    stats = pvalues.drop(index="KS test", errors="ignore")
    cells = [(r, c) for r in stats.index for c in stats.columns if pd.isna(stats.loc[r, c])]
    if not cells or not n_permutations:
        return []
    notes = []
    if FIXED_BY_PERMUTATION in cells:
        notes.append("n/a for the average Hamming similarity: it depends only on how many prompts each model got "
                     "right, which every permutation keeps, so no permutation can move it and a p-value would be 1 "
                     "whatever the data; the Hamming percentiles and KS test are not fixed this way")
    others = [f"{c} {r}" for r, c in cells if (r, c) != FIXED_BY_PERMUTATION]
    if others:
        notes.append(f"n/a for {', '.join(others)}: each of the {n_permutations} permutations gave the observed "
                     "value (too few distinct values, e.g. few models), so the test cannot tell the observed matrix "
                     "from a shuffled one")
    return notes


def permutation_test(
    X,
    measures: Sequence[str] = ("cosine",),
    n_permutations: int = 1000,
    random_state: int = 0,
    ks_max_values: int = 200_000,
    show_progress: bool = True,
) -> PermutationTestResult:
    """Test whether column performance vectors are more similar than chance.

    Each permutation shuffles every model's scores across columns independently
    (:func:`permute_within_models`); for the observed and each permuted matrix
    the similarity matrix between columns is computed and summarised over its
    off-diagonal upper triangle by the mean, 75th and 95th percentile.

    Parameters
    ----------
    X : array-like (n_models, n_columns), complete
    measures : sequence of str
        From :data:`SIMILARITY_MEASURES`; binary ones are skipped unless ``X`` is 0/1.
    n_permutations : int
        The paper's p-values (0.0009 ~ 1/1001) suggest 1000.
    random_state : int
    ks_max_values : int
        The KS test compares the observed similarity values with similarity
        values pooled from the permutations, subsampled to at most this many.

    Returns
    -------
    PermutationTestResult
        p-value of a statistic = ``(1 + #{permuted >= observed}) / (1 + n_permutations)``; NaN (printed
        ``n/a``, with the reason) when every permutation gave the observed statistic.

    Notes
    -----
    The paper counts permuted statistics "greater than" the observed one; we
    count "greater or equal" and add one to numerator and denominator, which
    keeps the test valid (p-values uniform or conservative under the null)
    when statistics tie, as percentiles of Hamming similarities on 0/1 data
    often do. The KS p-value treats the pairwise similarities as independent,
    which they are not (each column appears in many pairs), so like the paper's
    it overstates significance; read it as a distribution-shape statistic.

    The average Hamming similarity cannot be tested this way: summed over all
    pairs, a model's agreements depend only on how many columns it got right,
    which the permutation keeps, so the statistic is the same for every
    permutation (the paper's 0.52-0.60 for this cell are what rounding noise
    gives with a strict "greater than"). Its p-value would be 1 whatever the
    data, so none is given: a statistic that every permutation leaves at the
    observed value gets NaN (also a percentile that ties in every permutation
    by chance, on few models), and the output says why. The Hamming
    percentiles and KS test are not fixed, and are tested.

    References
    ----------
    Ailem et al. §3.2, §5.1, Table 2.
    """
    X = check_matrix(X, min_rows=2, min_cols=3)
    _require_complete(X, "the permutation test")
    measures = _applicable_measures(X, measures)
    from ...report import progress

    rng = np.random.default_rng(random_state)
    summarise = _pair_summariser(X, measures, rng)
    per_perm = max(1, ks_max_values // max(1, n_permutations))
    observed = summarise(X.T)
    obs_stats = {mm: st for mm, (st, _) in observed.items()}
    ge = {mm: np.zeros(3, dtype=np.int64) for mm in measures}
    tie = {mm: np.zeros(3, dtype=np.int64) for mm in measures}
    perm_sum = {mm: np.zeros(3) for mm in measures}
    pooled = {mm: [] for mm in measures}
    for _ in progress(range(n_permutations), total=n_permutations, desc="permutations", disable=None if show_progress else True):
        Xp = permute_within_models(X, rng)
        for mm, (st, v) in summarise(Xp.T, per_perm).items():
            # relative tolerance: a statistic equal to the observed one up to rounding is a tie
            ge[mm] += st >= obs_stats[mm] - 1e-12 * np.abs(obs_stats[mm])
            tie[mm] += np.abs(st - obs_stats[mm]) <= 1e-12 * np.abs(obs_stats[mm])
            perm_sum[mm] += st
            pooled[mm].append(v)
    for mm in measures:  # no p-value where no permutation moved the statistic: it would be 1 whatever the data
        ge[mm] = np.where((tie[mm] == n_permutations) & (n_permutations > 0), -1, ge[mm])
    return _permutation_result(measures, observed, ge, perm_sum, pooled, n_permutations)


def _applicable_measures(X, measures) -> list:
    binary = is_binary(X)
    measures = [mm for mm in measures if binary or mm not in BINARY_MEASURES]
    if not measures:
        raise MethodError("no similarity measure applies (Jaccard and Hamming need a 0/1 matrix)")
    for mm in measures:
        if mm not in SIMILARITY_MEASURES:
            raise MethodError(f"unknown similarity {mm!r}; choose from {SIMILARITY_MEASURES}")
    return measures


def _pair_summariser(X, measures, rng):
    """``summarise(Q, sample_size=None)``: measure -> (statistics, similarity values: all, or a random sample)."""
    d = X.shape[1]
    i0, i1 = np.triu_indices(d, k=1)
    flat = i0 * d + i1
    m = X.shape[0]
    counting = is_binary(X) and (m + 1) * (m * m + 1) <= MAX_CODE_TABLE

    def summarise(Q, sample_size=None):
        res = {}
        if counting:
            for mm, (codes, table) in _binary_pair_codes(Q, measures, flat, i0, i1).items():
                vals = table[codes] if sample_size is None else table[codes[rng.integers(0, len(codes), sample_size)]]
                res[mm] = (_stats_from_codes(codes, table), vals)
        else:
            for mm, v in _pair_similarities(Q, measures, flat, i0, i1).items():
                vals = v if sample_size is None or len(v) <= sample_size else v[rng.integers(0, len(v), sample_size)]
                res[mm] = (_stats(v), vals)
        return res

    return summarise


def _permutation_result(measures, observed, ge, perm_sum, pooled, n_permutations) -> "PermutationTestResult":
    from scipy.stats import ks_2samp

    pv, ob, pm, ks = {}, {}, {}, {}
    for mm in measures:
        obs_stats, obs_vals = observed[mm]
        pv[mm] = np.where(ge[mm] < 0, np.nan, (1 + ge[mm]) / (1 + n_permutations))  # -1: untestable
        ob[mm] = obs_stats
        pm[mm] = perm_sum[mm] / max(1, n_permutations)
        res = ks_2samp(obs_vals, np.concatenate(pooled[mm])) if n_permutations else None
        pv[mm] = np.append(pv[mm], res.pvalue if res is not None else np.nan)
        ks[mm] = res.statistic if res is not None else np.nan
    idx = list(STAT_NAMES)
    return PermutationTestResult(
        pvalues=pd.DataFrame(pv, index=idx + ["KS test"]),
        observed=pd.DataFrame(ob, index=idx),
        permuted_mean=pd.DataFrame(pm, index=idx),
        ks_statistic=pd.Series(ks, name="KS statistic"),
        n_permutations=int(n_permutations),
    )


@dataclass
class SilhouetteTestResult(Result):
    """Observed vs permuted silhouette (Ailem et al. Table 3)."""
    command = "weights"

    observed: float
    observed_k: int
    permuted: np.ndarray
    permuted_k: np.ndarray
    pvalue: float

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "observed": [self.observed],
                "permuted": [float(np.nanmean(self.permuted)) if len(self.permuted) else np.nan],
                "observed_k": [self.observed_k],
                "n_permutations": [len(self.permuted)],
                "p_value": [self.pvalue],
            }
        )

    title = "silhouette of spherical k-means, observed vs permuted (Ailem et al. Table 3)"

    def tables(self) -> dict:
        return {"silhouette": self.table()}

    def summary(self) -> dict:
        return self.table().iloc[0].to_dict()

    def render(self) -> str:
        text = format_table(self.table(), self.floatfmt, index=False)
        n = len(self.permuted)
        if n and self.pvalue <= (1 + 1e-9) / (1 + n):  # the floor: no permuted silhouette reached the observed one
            text += (f"\n(p = 1/({n} + 1) is the smallest p-value {n} permutations can give; "
                     "--silhouette-permutations 99 can show p down to 0.01)")
        return section(self.title, text)


def silhouette_test(
    X, n_permutations: int = 10, random_state: int = 0, max_clusters: int = 20, show_progress: bool = True
) -> SilhouetteTestResult:
    """Silhouette of the spherical k-means clustering of observed vs permuted columns.

    The paper reports one permutation; we average ``n_permutations`` and give the
    permutation p-value ``(1 + #{permuted >= observed}) / (1 + n)`` as well.

    References
    ----------
    Ailem et al. §3.2 (last paragraph), §5.1, Table 3.
    """
    from ...report import progress

    X = check_matrix(X, min_rows=2, min_cols=4)
    _require_complete(X, "the silhouette test")
    obs = cluster_columns(X, max_clusters=max_clusters, random_state=random_state)
    rng = np.random.default_rng(random_state)
    sil, ks = [], []
    for _ in progress(range(n_permutations), total=n_permutations, desc="silhouette", disable=None if show_progress else True):
        c = cluster_columns(permute_within_models(X, rng), max_clusters=max_clusters, random_state=random_state)
        sil.append(c.silhouette)
        ks.append(c.n_clusters)
    sil = np.asarray(sil, dtype=float)
    valid = sil[~np.isnan(sil)]
    p = (1 + int((valid >= obs.silhouette).sum())) / (1 + len(valid)) if np.isfinite(obs.silhouette) else float("nan")
    return SilhouetteTestResult(
        observed=obs.silhouette, observed_k=obs.n_clusters, permuted=sil, permuted_k=np.asarray(ks), pvalue=p
    )
