"""Mean-rank aggregation and rank-preservation metrics (Gusev & Zaytsev §3) against scipy/sklearn."""

import numpy as np
import pytest
from scipy.stats import kendalltau, rankdata, spearmanr
from sklearn.metrics import ndcg_score

from harness_ext.methods import ranking
from harness_ext.errors import MethodError


def _tied_pairs(rng, n_pairs=150):
    """Random ranking pairs with plenty of ties (as small subsets produce)."""
    for t in range(n_pairs):
        M = int(rng.integers(3, 14))
        a = rng.integers(0, 6, M) / 2.0
        b = rng.random(M) if t % 2 else rng.integers(0, 5, M).astype(float)
        yield a, b


def test_rank_per_dataset_matches_scipy_with_ties_and_nan():
    X = np.array([[0.9, 0.5, np.nan], [0.9, 0.7, 0.2], [0.1, 0.7, 0.4], [0.3, 0.1, 0.4]])
    R = ranking.rank_per_dataset(X)
    np.testing.assert_allclose(R[:, 0], rankdata(-X[:, 0]))
    np.testing.assert_allclose(R[:, 1], [3, 1.5, 1.5, 4])
    assert np.isnan(R[0, 2])
    np.testing.assert_allclose(R[1:, 2], [3, 1.5, 1.5])
    # Lower-is-better flips the direction.
    np.testing.assert_allclose(ranking.rank_per_dataset(X[:, :1], higher_is_better=False)[:, 0], rankdata(X[:, 0]))


def test_mean_rank_hand_example():
    X = np.array([[3.0, 1.0], [2.0, 3.0], [1.0, 2.0]])
    # dataset 0 ranks: 1,2,3 ; dataset 1 ranks: 3,1,2
    np.testing.assert_allclose(ranking.mean_rank(X), [2.0, 1.5, 2.5])
    with pytest.raises(MethodError):
        ranking.mean_rank(np.ones(3))


def test_mean_rank_with_missing_cells_averages_observed():
    X = np.array([[3.0, np.nan], [2.0, 3.0], [1.0, 2.0]])
    np.testing.assert_allclose(ranking.mean_rank(X), [1.0, 1.5, 2.5])


def test_subset_mean_ranks_batches_subsets():
    rng = np.random.default_rng(1)
    ranks = ranking.rank_per_dataset(rng.random((5, 9)))
    subsets = np.array([[0, 3, 4], [8, 1, 2]])
    out = ranking.subset_mean_ranks(ranks, subsets)
    assert out.shape == (2, 5)
    np.testing.assert_allclose(out[1], ranks[:, [8, 1, 2]].mean(axis=1))
    np.testing.assert_allclose(ranking.subset_mean_ranks(ranks, [0, 3, 4])[0], out[0])


@pytest.mark.filterwarnings("ignore")  # scipy warns on constant input (and returns NaN, as we do)
def test_spearman_and_kendall_match_scipy_with_ties():
    rng = np.random.default_rng(0)
    for a, b in _tied_pairs(rng):
        rho = spearmanr(a, b).statistic
        tau = kendalltau(a, b).statistic
        np.testing.assert_allclose(ranking.spearman(a, b), rho, equal_nan=True, atol=1e-12)
        np.testing.assert_allclose(ranking.kendall(a, b), tau, equal_nan=True, atol=1e-12)


def test_metrics_are_batched():
    rng = np.random.default_rng(2)
    R_full = rng.random(12)
    R_sub = rng.integers(0, 8, (4, 7, 12)) / 3.0
    out = ranking.rank_metrics(R_sub, R_full)
    assert set(out) == set(ranking.METRIC_HIGHER_IS_BETTER)
    for name, v in out.items():
        assert v.shape == (4, 7), name
    i, j = 2, 5
    assert np.isclose(out["spearman"][i, j], spearmanr(R_sub[i, j], R_full).statistic)
    assert np.isclose(out["kendall"][i, j], kendalltau(R_sub[i, j], R_full).statistic)


def test_kendall_chunking_gives_same_answer(monkeypatch):
    rng = np.random.default_rng(3)
    R_sub = rng.integers(0, 10, (37, 15)).astype(float)
    R_full = rng.random(15)
    whole = ranking.kendall(R_sub, R_full)
    monkeypatch.setattr(ranking, "_PAIR_CHUNK_ELEMENTS", 200)  # 105 pairs -> 1 row per chunk
    np.testing.assert_allclose(ranking.kendall(R_sub, R_full), whole)


def test_ndcg_matches_sklearn_tie_averaged():
    rng = np.random.default_rng(4)
    for a, b in _tied_pairs(rng, 120):
        M = len(a)
        relevance = M + 1 - rankdata(b)
        expected = ndcg_score([relevance], [-a], k=5, ignore_ties=False)
        assert np.isclose(ranking.ndcg_at_k(a, b, k=5), expected)


def test_ndcg_perfect_and_reversed():
    R = np.arange(1.0, 11.0)
    assert ranking.ndcg_at_k(R, R) == pytest.approx(1.0)
    rev = ranking.ndcg_at_k(R[::-1], R)
    disc = 1 / np.log2(np.arange(2, 7))
    assert rev == pytest.approx((np.arange(1, 6) * disc).sum() / (np.arange(10, 5, -1) * disc).sum())


def test_mrr_definition():
    R_full = np.array([1.0, 2.0, 3.0, 4.0])
    assert ranking.mrr(R_full, R_full) == 1.0
    assert ranking.mrr(np.array([2.0, 1.0, 3.0, 4.0]), R_full) == 0.5
    # Tied first in the subset ranking -> average position 1.5.
    assert ranking.mrr(np.array([1.0, 1.0, 3.0, 4.0]), R_full) == pytest.approx(1 / 1.5)
    # Two models tie for first in the full ranking: the better placed counts.
    assert ranking.mrr(np.array([3.0, 1.0, 2.0, 4.0]), np.array([1.0, 1.0, 3.0, 4.0])) == 1.0


def test_mae_is_on_mean_ranks():
    R_full = np.array([1.5, 2.0, 2.5])
    R_sub = np.array([[1.0, 2.0, 3.0], [1.5, 2.0, 2.5]])
    np.testing.assert_allclose(ranking.rank_mae(R_sub, R_full), [1 / 3, 0.0])


def test_constant_ranking_gives_nan_correlation():
    out = ranking.rank_metrics(np.ones(5), np.arange(5.0), ["spearman", "kendall"])
    assert np.isnan(out["spearman"]) and np.isnan(out["kendall"])


def test_unknown_metric_and_shape_mismatch():
    with pytest.raises(MethodError):
        ranking.check_metrics(["ndcg@10"])
    assert ranking.check_metrics(["Spearman", "MAE"]) == ["spearman", "mae"]
    with pytest.raises(MethodError):
        ranking.spearman(np.arange(3.0), np.arange(4.0))
