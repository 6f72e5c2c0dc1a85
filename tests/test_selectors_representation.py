"""Selectors of Gusev & Zaytsev §4 on small matrices with known answers."""

import itertools

import numpy as np
import pytest

from harness_ext.errors import MethodError
from harness_ext.plugin_manager import get_registration
from harness_ext.plugins.selectors_design import AOptimal, DOptimal
from harness_ext.plugins.selectors_representation import (
    CosineFarthestFirst,
    FarthestFirst,
    KMeansRepresentatives,
    RandomSubset,
)
from harness_ext.methods.prowl.representation import dataset_representation

NAMES = ["random-subset", "kmeans", "farthest-first-cosine", "farthest-first-euclidean", "a-optimal", "d-optimal"]


def _X_from_features(F, n_models=3, seed=0):
    """A performance matrix the selectors must ignore when features are given."""
    return np.random.default_rng(seed).random((n_models, len(F)))


@pytest.mark.parametrize("name", NAMES)
def test_registered_with_sklearn_params(name):
    reg = get_registration("selectors", name)
    est = reg.cls()
    params = est.get_params()
    assert "n_select" in params
    est.set_params(n_select=3)
    X = np.random.default_rng(0).random((6, 10))
    order = est.fit(X).order_
    assert len(order) == 3 and len(set(order.tolist())) == 3
    assert reg.cls is not None and reg.description


def test_random_selector_comes_from_selectors_module():
    reg = get_registration("selectors", "random")
    assert reg.cls.__module__ == "harness_ext.plugins.selectors"


def test_representation_standardises_and_fills_nan():
    X = np.array([[1.0, 2.0, 3.0, np.nan], [5.0, 5.0, 5.0, 5.0]])
    F = dataset_representation(X)
    assert F.shape == (4, 2)
    np.testing.assert_allclose(F[:, 1], 0.0)  # constant model column
    np.testing.assert_allclose(F[:, 0].mean(), 0.0, atol=1e-12)
    assert F[3, 0] == pytest.approx(0.0)  # NaN -> column mean -> 0
    with pytest.raises(MethodError):
        dataset_representation(X, features=np.ones((3, 2)))


def test_farthest_first_euclidean_picks_extremes_on_a_line():
    F = np.arange(11.0)[:, None]
    sel = FarthestFirst(n_select=3).fit(_X_from_features(F), features=F)
    # Start: farthest from the centroid (0 and 10 tie -> lower index), then the other end, then the middle.
    assert sel.order_.tolist() == [0, 10, 5]
    assert np.all(np.diff(sel.min_dist_) <= 1e-12)


def test_farthest_first_picks_square_corners_first():
    corners = np.array([[0, 0], [0, 10], [10, 0], [10, 10]], float)
    inner = np.random.default_rng(1).uniform(3, 7, (12, 2))
    F = np.vstack([inner[:5], corners[:2], inner[5:], corners[2:]])
    sel = FarthestFirst(n_select=4, standardize=False).fit(_X_from_features(F), features=F)
    corner_idx = {5, 6, len(F) - 2, len(F) - 1}
    assert set(sel.order_.tolist()) == corner_idx


def test_farthest_first_cosine_picks_directions():
    angles = np.deg2rad([0, 10, 20, 90, 100, 180])
    F = np.c_[np.cos(angles), np.sin(angles)] * np.array([1, 2, 3, 1, 5, 2])[:, None]
    sel = CosineFarthestFirst(n_select=3, standardize=False).fit(_X_from_features(F), features=F)
    # Mean cosine distance is largest at 180 deg; then 0 deg (opposite); then 90/100 deg.
    assert sel.order_[0] == 5 and sel.order_[1] == 0 and sel.order_[2] in (3, 4)
    # "centroid" start without standardising: farthest in angle from the mean direction.
    c = CosineFarthestFirst(n_select=1, standardize=False, start="centroid").fit(_X_from_features(F), features=F)
    mean_dir = F.mean(axis=0) / np.linalg.norm(F.mean(axis=0))
    cosd = 1 - (F / np.linalg.norm(F, axis=1, keepdims=True)) @ mean_dir
    assert c.order_[0] == int(np.argmax(cosd))


def test_farthest_first_cosine_auto_start_survives_standardising():
    X = np.random.default_rng(2).random((5, 15))
    sel = CosineFarthestFirst().fit(X)
    assert sorted(sel.order_.tolist()) == list(range(15))
    assert FarthestFirst.nested and CosineFarthestFirst().get_params()["metric"] == "cosine"


def test_farthest_first_errors():
    X = np.random.default_rng(2).random((5, 6))
    with pytest.raises(MethodError):
        FarthestFirst(n_select=7).fit(X)
    with pytest.raises(MethodError):
        FarthestFirst(metric="manhattan").fit(X)
    with pytest.raises(MethodError):
        FarthestFirst(start="random").fit(X)


def test_kmeans_one_representative_per_blob_nearest_to_centre():
    rng = np.random.default_rng(3)
    centres = np.array([[0, 0], [20, 0], [0, 20]], float)
    sizes = [6, 4, 3]
    F = np.vstack([c + rng.normal(scale=0.5, size=(s, 2)) for c, s in zip(centres, sizes)])
    blob = np.repeat([0, 1, 2], sizes)
    sel = KMeansRepresentatives(n_select=3, standardize=False).fit(_X_from_features(F), features=F)
    assert blob[sel.order_].tolist() == [0, 1, 2]  # largest cluster first
    for r in sel.order_:
        members = np.flatnonzero(blob == blob[r])
        centroid = F[members].mean(axis=0)
        assert r == members[np.argmin(((F[members] - centroid) ** 2).sum(axis=1))]
    again = KMeansRepresentatives(n_select=3, standardize=False).fit(_X_from_features(F), features=F)
    assert again.order_.tolist() == sel.order_.tolist()


def test_kmeans_with_duplicates_still_returns_k_distinct():
    F = np.array([[0.0], [0.0], [0.0], [1.0], [1.0]])
    sel = KMeansRepresentatives(n_select=4, standardize=False).fit(_X_from_features(F), features=F)
    assert len(set(sel.order_.tolist())) == 4


def test_kmeans_without_n_select_orders_everything():
    X = np.random.default_rng(4).random((4, 8))
    sel = KMeansRepresentatives(n_init=2).fit(X)
    assert sorted(sel.order_.tolist()) == list(range(8))
    assert KMeansRepresentatives.nested is False


def _trace_p(F, S, lam):
    p = F.shape[1]
    return np.trace(np.linalg.inv(F[S].T @ F[S] + lam * np.eye(p)))


def _logdet_p(F, S, lam):
    return np.linalg.slogdet(F[S].T @ F[S] + lam * np.eye(F.shape[1]))[1]


def test_optimal_design_criteria_match_eq4_in_feature_space():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(4, 12))
    F = dataset_representation(X)
    p, lam, k = F.shape[1], 1.0, 3
    for cls, direct in ((AOptimal, _trace_p), (DOptimal, _logdet_p)):
        sel = cls(n_select=k).fit(X)
        const = (p - k) / lam if cls is AOptimal else (p - k) * np.log(lam)
        assert direct(F, sel.order_, lam) == pytest.approx(sel.criterion_ + const)


@pytest.mark.parametrize("cls,seed", [(AOptimal, 16), (AOptimal, 20), (DOptimal, 2), (DOptimal, 16)])
def test_swap_pass_reaches_the_brute_force_optimum(cls, seed):
    # Instances where plain greedy is suboptimal and swaps fix it.
    X = np.random.default_rng(seed).normal(size=(3, 9))
    F = dataset_representation(X)
    greedy = cls(n_select=3, swaps=False).fit(X)
    swapped = cls(n_select=3).fit(X)
    crit = _logdet_p if cls is DOptimal else _trace_p
    values = {S: crit(F, list(S), 1.0) for S in itertools.combinations(range(9), 3)}
    best = max(values.values()) if cls is DOptimal else min(values.values())
    assert swapped.n_swaps_ >= 1
    assert crit(F, swapped.order_, 1.0) == pytest.approx(best)
    assert crit(F, greedy.order_, 1.0) != pytest.approx(best)


@pytest.mark.parametrize("cls", [AOptimal, DOptimal])
def test_swap_result_is_locally_optimal(cls):
    X = np.random.default_rng(7).normal(size=(5, 14))
    F = dataset_representation(X)
    sel = cls(n_select=4).fit(X)
    crit = _logdet_p if cls is DOptimal else _trace_p
    v = crit(F, sel.order_, 1.0)
    S = sel.order_.tolist()
    for pos in range(4):
        for j in set(range(14)) - set(S):
            T = S.copy()
            T[pos] = j
            w = crit(F, T, 1.0)
            assert (w <= v + 1e-9) if cls is DOptimal else (w >= v - 1e-9)


def test_optimal_design_first_pick_is_largest_norm_and_full_order_is_greedy():
    F = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    for cls in (AOptimal, DOptimal):
        sel = cls(n_select=1, standardize=False).fit(_X_from_features(F), features=F)
        assert sel.order_.tolist() == [1]
        full = cls(standardize=False).fit(_X_from_features(F), features=F)
        assert sorted(full.order_.tolist()) == [0, 1, 2, 3] and full.n_swaps_ == 0
        # D-optimal's second pick is the direction orthogonal to the first.
        if cls is DOptimal:
            assert full.order_[1] == 2
    with pytest.raises(MethodError):
        DOptimal(lam=0).fit(np.ones((2, 3)))


def test_features_override_performance_columns():
    F = np.arange(11.0)[:, None]
    X1, X2 = _X_from_features(F, seed=1), _X_from_features(F, seed=2)
    for cls in (FarthestFirst, DOptimal):
        a = cls(n_select=3).fit(X1, features=F).order_
        b = cls(n_select=3).fit(X2, features=F).order_
        assert a.tolist() == b.tolist()


def test_random_subset_is_uniform_and_not_nested():
    X = np.zeros((2, 10))
    counts = np.zeros(10)
    for seed in range(2000):
        order = RandomSubset(n_select=3, random_state=seed).fit(X).order_
        assert len(set(order.tolist())) == 3
        counts[order] += 1
    # Each dataset is in a uniform 3-of-10 subset with probability 0.3 (binomial sd ~0.01).
    np.testing.assert_allclose(counts / 2000, 0.3, atol=0.04)
    assert RandomSubset.nested is False
    assert sorted(RandomSubset(random_state=1).fit(X).order_.tolist()) == list(range(10))
    with pytest.raises(MethodError):
        RandomSubset(n_select=11).fit(X)


def _naive_farthest_first(F, metric, start):
    """Algorithm 2 / eq. (6) written out with a full distance matrix (scipy's cdist)."""
    from scipy.spatial.distance import cdist

    D = cdist(F, F, metric=metric)
    if start == "centroid":
        first = int(np.argmax(cdist(F, F.mean(axis=0, keepdims=True), metric=metric)[:, 0]))
    else:
        first = int(np.argmax(D.mean(axis=1)))
    order = [first]
    while len(order) < len(F):
        rest = [j for j in range(len(F)) if j not in order]
        order.append(rest[int(np.argmax(D[np.ix_(rest, order)].min(axis=1)))])
    return order


@pytest.mark.parametrize("metric,start", [("euclidean", "centroid"), ("euclidean", "mean-distance"),
                                          ("cosine", "centroid"), ("cosine", "mean-distance")])
def test_farthest_first_matches_a_naive_algorithm_2(metric, start):
    rng = np.random.default_rng(11)
    F = rng.normal(size=(25, 4)) + np.array([3.0, 0.0, 1.0, 0.0])  # off-origin, so the cosine centroid exists
    sel = FarthestFirst(metric=metric, start=start, standardize=False).fit(_X_from_features(F), features=F)
    assert sel.order_.tolist() == _naive_farthest_first(F, metric, start)
