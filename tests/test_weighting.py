"""Weighting schemes and ranking-robustness analyses (003 §3.2-3.3, §5).

The prompt-level path is tested on a synthetic 0/1 matrix generated here: no
prompt-level (per-sample, several-model) matrix is shipped in ../shared/data.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness_ext.errors import MethodError
from harness_ext.methods.weighting import (
    SIMILARITY_MEASURES,
    STAT_NAMES,
    _binary_pair_codes,
    _pair_similarities,
    _stats,
    _stats_from_codes,
    binary_beat_probability,
    cluster_columns,
    cluster_weights,
    column_similarity,
    compare_schemes,
    compute_weights,
    cumulative_scores,
    emit_weights,
    expected_score_std,
    most_informative_order,
    permutation_test,
    permute_within_models,
    random_weight_analysis,
    random_weight_analysis_loop,
    read_prompt_matrix,
    sample_simplex,
    sample_simplex_spacings,
    silhouette_test,
    size_curves,
    spherical_kmeans,
    unit_columns,
    weighted_scores,
)


def synthetic_prompt_matrix(n_models=10, n_prompts=240, n_groups=4, seed=11) -> pd.DataFrame:
    """0/1 models x prompts with topic structure: each model has its own skill per topic group."""
    rng = np.random.default_rng(seed)
    groups = rng.integers(n_groups, size=n_prompts)
    # each model is strong (~.85) or weak (~.2) on each topic: prompts of a topic share a performance profile
    skill = np.where(rng.random((n_models, n_groups)) < 0.5, 0.85, 0.2) + rng.uniform(-0.05, 0.05, (n_models, n_groups))
    difficulty = rng.normal(0, 0.08, size=n_prompts)
    p = np.clip(skill[:, groups] - difficulty[None, :], 0.02, 0.98)
    X = (rng.random((n_models, n_prompts)) < p).astype(float)
    return pd.DataFrame(X, index=[f"model-{i}" for i in range(n_models)], columns=[f"p{j:04d}" for j in range(n_prompts)])


def three_direction_matrix(seed=3) -> pd.DataFrame:
    """6 models x 12 columns: columns are noisy copies of 3 well-separated directions."""
    rng = np.random.default_rng(seed)
    base = np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]], dtype=float) + 0.05
    cols = [base[g] * rng.uniform(0.5, 1.0) + rng.uniform(0, 0.05, 6) for g in np.repeat([0, 1, 2], 4)]
    return pd.DataFrame(np.array(cols).T, index=[f"m{i}" for i in range(6)], columns=[f"c{j}" for j in range(12)])


# --------------------------------------------------------------------------- simplex sampler


@pytest.mark.parametrize("d", [2, 5, 14])
def test_simplex_marginal_is_beta_1_dminus1(d):
    W = sample_simplex(20_000, d, np.random.default_rng(123))
    assert np.all(W >= 0) and np.allclose(W.sum(axis=1), 1.0)
    # Dirichlet(1,...,1): every coordinate is Beta(1, d-1)
    for j in (0, d - 1):
        assert stats.kstest(W[:, j], stats.beta(1, d - 1).cdf).pvalue > 0.001
    # exchangeable coordinates: equal means 1/d
    assert np.allclose(W.mean(axis=0), 1.0 / d, atol=0.01)


def test_smith_tromble_reference_has_the_same_distribution():
    rng = np.random.default_rng(5)
    d = 6
    W = np.array([sample_simplex_spacings(d, rng) for _ in range(5000)])
    assert np.allclose(W.sum(axis=1), 1.0)
    assert stats.kstest(W[:, 2], stats.beta(1, d - 1).cdf).pvalue > 0.001
    V = sample_simplex(5000, d, np.random.default_rng(6))
    assert stats.ks_2samp(W[:, 0], V[:, 0]).pvalue > 0.001


def test_simplex_is_uniform_on_the_triangle():
    # d = 3: a barycentric grid of step 1/4 cuts the triangle into 16 congruent cells;
    # a uniform sampler fills them equally (marginals alone would not show this)
    W = sample_simplex(48_000, 3, np.random.default_rng(0))
    F = np.minimum(np.floor(W * 4).astype(int), 3)
    up = F.sum(axis=1) == 2  # the other cells have floor-sum 1
    cell = F[:, 0] * 4 + F[:, 1] + 16 * up
    counts = np.bincount(cell, minlength=32)
    counts = counts[counts > 0]
    assert len(counts) == 16
    assert stats.chisquare(counts).pvalue > 0.001


@pytest.mark.parametrize("d", [4, 30])
def test_simplex_joint_law_min_and_covariance(d):
    # uniform on the simplex: P(min_j w_j > t) = (1 - d t)^(d-1), Cov = (I/d - 11'/d^2) / (d + 1)
    W = sample_simplex(30_000, d, np.random.default_rng(d))
    mins = W.min(axis=1)
    assert stats.kstest(mins, lambda t: 1 - np.clip(1 - d * t, 0, 1) ** (d - 1)).pvalue > 0.001
    cov = (np.eye(d) / d - 1.0 / d**2) / (d + 1)
    assert np.abs(np.cov(W.T) - cov).max() < 0.1 * cov[0, 0]


def test_simplex_chunking_does_not_change_draws():
    a = np.random.default_rng(9)
    chunked = np.vstack([sample_simplex(7, 5, a), sample_simplex(13, 5, a)])
    whole = sample_simplex(20, 5, np.random.default_rng(9))
    assert np.array_equal(chunked, whole)


# --------------------------------------------------------------------------- weight formulas


def test_distance_weights_hand_computed():
    labels = np.array([0, 0, 0, 1, 1])
    dist = np.array([0.0, 0.2, 0.6, 0.0, 0.5])
    w = cluster_weights(labels, dist, "distance")
    # cluster 0 carries 3/5: [0, .2/.8, .6/.8] * .6; cluster 1 carries 2/5: [0, 1] * .4
    assert np.allclose(w, [0.0, 0.15, 0.45, 0.0, 0.4])


def test_inverse_distance_weights_hand_computed():
    labels = np.array([0, 0, 0, 1, 1])
    dist = np.array([0.0, 0.2, 0.6, 0.0, 0.5])
    w = cluster_weights(labels, dist, "inverse")
    # medoid's 0 raised to the cluster's smallest positive distance (.2): inverses 5, 5, 5/3
    c0 = np.array([5, 5, 5 / 3]) / (35 / 3) * 0.6
    assert np.allclose(w, np.concatenate([c0, [0.2, 0.2]]))
    assert np.isclose(w.sum(), 1.0)


def test_degenerate_clusters_share_their_mass():
    labels = np.array([0, 1, 1, 2])
    dist = np.array([0.0, 0.0, 0.0, 0.0])  # singleton, identical pair, singleton
    for kind in ("distance", "inverse"):
        assert np.allclose(cluster_weights(labels, dist, kind), [0.25, 0.25, 0.25, 0.25])


def _hand_matrix() -> pd.DataFrame:
    """4 models x 5 columns with cosine distances computable by hand.

    Cluster A = a0 (1,0,0,0), a1 (1,1,0,0), a2 (2,1,0,0): d(a0,a1) = 1 - 1/sqrt2,
    d(a0,a2) = 1 - 2/sqrt5, d(a1,a2) = 1 - 3/sqrt10; a2 has the smallest sum -> medoid.
    Cluster B = b0 (0,0,1,0), b1 (0,0,1,1): equal sums, medoid b0 (lower index).
    """
    cols = {"a0": [1, 0, 0, 0], "a1": [1, 1, 0, 0], "a2": [2, 1, 0, 0], "b0": [0, 0, 1, 0], "b1": [0, 0, 1, 1]}
    return pd.DataFrame(cols, index=[f"m{i}" for i in range(4)], dtype=float) / 2


def test_paper_formulas_on_a_hand_computed_matrix():
    df = _hand_matrix()
    d_a0, d_a1, d_b1 = 1 - 2 / np.sqrt(5), 1 - 3 / np.sqrt(10), 1 - 1 / np.sqrt(2)
    cl = cluster_columns(df.to_numpy(), n_clusters=2)
    assert list(df.columns[cl.medoids]) in (["a2", "b0"], ["b0", "a2"])
    assert np.allclose(cl.distances, [d_a0, d_a1, 0, 0, d_b1])
    # distance-based: d / sum_C d * |C| / n, |A| = 3, |B| = 2, n = 5
    dist = compute_weights(df, "distance", n_clusters=2).to_numpy()
    assert np.allclose(dist, [d_a0 / (d_a0 + d_a1) * 3 / 5, d_a1 / (d_a0 + d_a1) * 3 / 5, 0, 0, 2 / 5])
    # inverse-distance: d^-1 / sum_C d^-1 * |C| / n; a medoid's d = 0 is raised to its cluster's smallest
    # positive distance (A: d_a1, B: d_b1), so a2 weighs like a1 and B splits evenly
    inv_a = np.array([1 / d_a0, 1 / d_a1, 1 / d_a1])
    inv = compute_weights(df, "inverse_distance", n_clusters=2).to_numpy()
    assert np.allclose(inv, [*(inv_a / inv_a.sum() * 3 / 5), 1 / 5, 1 / 5])
    med = compute_weights(df, "medoids", n_clusters=2)
    assert med.to_dict() == {"a0": 0.0, "a1": 0.0, "a2": 0.5, "b0": 0.5, "b1": 0.0}
    # the silhouette chooses the same two clusters on its own
    assert compute_weights(df, "distance").attrs["params"]["n_clusters"] is None
    assert np.allclose(compute_weights(df, "distance").to_numpy(), dist)


def test_spherical_kmeans_is_a_cosine_fixed_point():
    # Dhillon-Modha: every vector is assigned to the unit concept vector with the largest cosine,
    # and each concept is the normalised sum of its members
    X = synthetic_prompt_matrix(n_models=9, n_prompts=300, seed=5).to_numpy()
    V, zero = unit_columns(X)
    V = V[~zero]
    for k in (2, 4, 7):
        labels, C, obj = spherical_kmeans(V, k, random_state=1, n_init=3)
        assert np.allclose(np.linalg.norm(C, axis=1), 1.0)
        S = np.zeros_like(C)
        np.add.at(S, labels, V)
        assert np.allclose(C, S / np.linalg.norm(S, axis=1, keepdims=True))
        sim = V @ C.T
        assert (sim[np.arange(len(V)), labels] >= sim.max(axis=1) - 1e-12).all()
        assert np.isclose(obj, sim[np.arange(len(V)), labels].sum()) and len(np.unique(labels)) == k
        again = spherical_kmeans(V, k, random_state=1, n_init=3)
        assert np.array_equal(labels, again[0])


def test_cluster_columns_recovers_directions_and_medoids():
    df = three_direction_matrix()
    cl = cluster_columns(df.to_numpy(), random_state=0)
    assert cl.n_clusters == 3
    groups = np.repeat([0, 1, 2], 4)
    # same partition up to label names
    assert len({(a, b) for a, b in zip(groups, cl.labels)}) == 3
    assert cl.silhouette > 0.8
    V = df.to_numpy().T / np.linalg.norm(df.to_numpy().T, axis=1, keepdims=True)
    for c, med in enumerate(cl.medoids):
        idx = np.flatnonzero(cl.labels == c)
        D = 1 - V[idx] @ V[idx].T
        assert med == idx[np.argmin(D.sum(axis=1))]
        assert np.allclose(cl.distances[idx], np.clip(D[list(idx).index(med)], 0, None), atol=1e-12)


def test_plugin_weights_match_the_paper_formulas():
    df = three_direction_matrix()
    cl = cluster_columns(df.to_numpy(), random_state=0)
    n = df.shape[1]
    expected_dist = np.zeros(n)
    expected_inv = np.zeros(n)
    for c in range(cl.n_clusters):
        idx = np.flatnonzero(cl.labels == c)
        d = cl.distances[idx]
        expected_dist[idx] = d / d.sum() * len(idx) / n
        dd = np.where(d > 0, d, d[d > 0].min())
        expected_inv[idx] = (1 / dd) / (1 / dd).sum() * len(idx) / n
    assert np.allclose(compute_weights(df, "distance").to_numpy(), expected_dist)
    assert np.allclose(compute_weights(df, "inverse_distance").to_numpy(), expected_inv)
    med = compute_weights(df, "medoids")
    assert set(np.flatnonzero(med.to_numpy())) == set(cl.medoids) and np.allclose(med[med > 0], 1 / 3)


def test_zero_columns_form_their_own_cluster():
    X = synthetic_prompt_matrix(n_prompts=60).to_numpy(copy=True)
    X[:, :4] = 0.0
    zero = ~X.any(axis=0)
    cl = cluster_columns(X, max_clusters=5, random_state=0)
    assert np.array_equal(cl.zero_columns, zero)
    assert len(set(cl.labels[zero])) == 1 and not (cl.labels[~zero] == cl.labels[0]).any()
    assert np.all(cl.distances[zero] == 0)
    w = cluster_weights(cl.labels, cl.distances, "distance")
    assert np.allclose(w[zero], 1 / 60)  # degenerate cluster: its mass shared equally, 1/n each


def test_all_schemes_give_valid_weights_and_params():
    df = synthetic_prompt_matrix(n_prompts=80)
    for scheme in ("uniform", "medoids", "distance", "inverse_distance", "random_simplex"):
        w = compute_weights(df, scheme, random_state=1, **({"max_clusters": 6} if scheme in ("medoids", "distance", "inverse_distance") else {}))
        assert list(w.index) == list(df.columns)
        assert (w >= 0).all() and np.isclose(w.sum(), 1.0)
        assert w.attrs["scheme"] == scheme
        json.dumps(w.attrs["params"])
    a = compute_weights(df, "random_simplex", random_state=4)
    b = compute_weights(df, "random_simplex", random_state=4)
    c = compute_weights(df, "random_simplex", random_state=5)
    assert a.equals(b) and not a.equals(c)
    with pytest.raises(MethodError):
        compute_weights(df, "medoids", no_such_param=1)


def test_cluster_schemes_need_a_complete_matrix():
    df = three_direction_matrix()
    df.iloc[0, 0] = np.nan
    with pytest.raises(MethodError, match="complete"):
        compute_weights(df, "distance")


def test_user_weights_json_csv_and_roundtrip(tmp_path):
    df = three_direction_matrix()
    raw = {c: float(i + 1) for i, c in enumerate(df.columns)}
    (tmp_path / "w.json").write_text(json.dumps({**raw, "not-a-column": 3.0}))
    w = compute_weights(df, "user", path=str(tmp_path / "w.json"))
    assert np.allclose(w.to_numpy(), np.arange(1, 13) / 78)
    pd.DataFrame({"dataset": list(raw), "weight": list(raw.values())}).to_csv(tmp_path / "w.csv", index=False)
    assert np.allclose(compute_weights(df, "user", path=str(tmp_path / "w.csv")).to_numpy(), w.to_numpy())
    # what --emit-weights writes is readable as user weights
    emit_weights(compute_weights(df, "distance"), tmp_path / "emitted.json")
    doc = json.loads((tmp_path / "emitted.json").read_text())
    assert doc["scheme"] == "distance" and "max_clusters" in doc["params"]
    again = compute_weights(df, "user", path=str(tmp_path / "emitted.json"))
    assert np.allclose(again.to_numpy(), compute_weights(df, "distance").to_numpy())
    assert again.attrs["source"] == {"scheme": "distance", "params": doc["params"]} and "source" not in w.attrs
    # a matrix column missing from the file is an error, not a silent 0
    (tmp_path / "short.json").write_text(json.dumps({"c0": 1.0}))
    with pytest.raises(MethodError, match="no weight"):
        compute_weights(df, "user", path=str(tmp_path / "short.json"))
    # the estimator also takes column names as a parameter
    from harness_ext.plugins.weighting_user import UserWeights

    est = UserWeights(path=str(tmp_path / "w.json"), columns=list(df.columns)).fit(df.to_numpy())
    assert np.allclose(est.weights_, w.to_numpy()) and est.ignored_ == ["not-a-column"]


# --------------------------------------------------------------------------- scores and rank changes


def test_weighted_scores_renormalise_over_observed_columns():
    X = np.array([[1.0, np.nan, 0.0], [0.5, 0.5, 0.5]])
    w = np.array([0.5, 0.25, 0.25])
    assert np.allclose(weighted_scores(X, w), [0.5 / 0.75, 0.5])


def test_compare_schemes_rank_change_sign(tmp_path):
    # uniform: a .5 beats b .45; all weight on y: b .5 beats a .1 -> b moves up one (+1), a down (-1)
    df = pd.DataFrame([[0.9, 0.1], [0.4, 0.5]], index=["a", "b"], columns=["x", "y"])
    (tmp_path / "w.json").write_text(json.dumps({"x": 0, "y": 1}))
    comp = compare_schemes(df, ["user"], scheme_params={"user": {"path": str(tmp_path / "w.json")}})
    assert list(comp.ranks["uniform"]) == [1, 2] and list(comp.ranks["user"]) == [2, 1]
    assert list(comp.rank_change["user"]) == [-1, 1]
    assert np.allclose(comp.scores["user"], [0.1, 0.5])


def test_rank_change_plot_shows_the_table_s_models_when_scores_tie(tmp_path, monkeypatch):
    """On Open LLM Leaderboard v2's 4,494 models the plot's top 20 differed by one model from the printed table's:
    the table took the first of tied models in a descending sort, the plot the last of an ascending one."""
    import harness_ext.report as report
    from harness_ext.methods.weighting.schemes import plot_rank_changes

    # five models tie for the last two places of the top 3
    df = pd.DataFrame([[0.9, 0.9], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.1, 0.1]],
                      index=list("abcdef"), columns=["x", "y"])
    comp = compare_schemes(df, ["medoids"])
    assert list(comp.top_models(3)) == ["a", "b", "c"]
    figures = []
    monkeypatch.setattr(report, "save_figure", lambda fig, path: figures.append(fig) or path)
    plot_rank_changes(comp, tmp_path / "r.png", top=3)
    labels = [t.get_text() for t in figures[0].axes[0].get_xticklabels()]
    assert labels == ["c", "b", "a"]  # increasing uniform score, the same three models as the table


def test_compare_schemes_on_structured_matrix():
    df = three_direction_matrix()
    comp = compare_schemes(df)
    assert list(comp.scores.columns) == ["uniform", "medoids", "distance", "inverse_distance"]
    assert (comp.rank_change["uniform"] == 0).all()
    # rank change = uniform rank - scheme rank
    assert (comp.rank_change["medoids"] == comp.ranks["uniform"] - comp.ranks["medoids"]).all()
    assert np.allclose(comp.weights.sum(), 1.0)


# --------------------------------------------------------------------------- random simplex weights


def test_top_two_swap_rate_and_shift_known_answer():
    # A = .7 w + .4 (1 - w), B = .4 w + .6 (1 - w) with w ~ U(0, 1):
    # B beats A iff w < .4 -> swap rate .4; A moves at most .15 = 27.3% of .55, B .1 = 20% of .5
    df = pd.DataFrame([[0.7, 0.4], [0.4, 0.6]], index=["A", "B"], columns=["x", "y"])
    res = random_weight_analysis(df, n_draws=40_000, random_state=0, chunk_size=3000, show_progress=False)
    assert res.top_two == ("A", "B")
    assert abs(res.top_two_swap_rate - 0.4) < 0.01
    assert np.isclose(res.pairwise.loc["B", "A"], res.top_two_swap_rate)
    assert abs(res.largest_score_shift - 0.15 / 0.55) < 2e-3 and res.largest_score_shift_model == "A"
    assert abs(res.largest_abs_score_shift - 0.15) < 1e-3
    assert np.allclose(res.score_min, [0.4, 0.4], atol=1e-3) and np.allclose(res.score_max, [0.7, 0.6], atol=1e-3)
    assert abs(res.largest_range - 0.3) < 1e-3 and res.largest_range_model == "A"
    # w ~ U(0, 1): sd of A = .3 / sqrt(12), of B = .2 / sqrt(12); the closed form agrees
    assert np.allclose(res.score_std, [0.3 / np.sqrt(12), 0.2 / np.sqrt(12)], rtol=0.02)
    assert np.allclose(expected_score_std(df.to_numpy()), [0.3 / np.sqrt(12), 0.2 / np.sqrt(12)])


def test_binary_beat_probability_hand_computed_and_against_sampling():
    # a right on prompts 0, 1 and b on prompt 2: b beats a iff w2 > w0 + w1 = 1 - w2, P(w2 > 1/2) = (1/2)^2
    X = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 1], [1, 1, 0]], dtype=float)
    P = binary_beat_probability(X)
    assert P[1, 0] == pytest.approx(0.25) and P[0, 1] == pytest.approx(0.75)
    assert P[2, 0] == 1.0 and P[0, 2] == 0.0  # c dominates a
    assert P[0, 3] == 0.0 and P[3, 0] == 0.0 and np.all(np.diag(P) == 0)  # identical rows never beat each other
    # 6 models, 40 prompts: the sampled pairwise matrix converges to the exact one
    df = synthetic_prompt_matrix(n_models=6, n_prompts=40, seed=8)
    res = random_weight_analysis(df, n_draws=40_000, random_state=0, show_progress=False)
    assert res.pairwise_exact is not None
    se = np.sqrt(0.25 / 40_000)
    assert np.abs(res.pairwise.to_numpy() - res.pairwise_exact.to_numpy()).max() < 5 * se
    assert res.summary()["top_two_swap_rate_exact"] == pytest.approx(res.top_two_swap_rate, abs=5 * se)
    # continuous data: no exact matrix
    assert random_weight_analysis(three_direction_matrix(), n_draws=100, show_progress=False).pairwise_exact is None


def test_score_spread_matches_the_dirichlet_closed_form():
    # Var(w @ x) = var(x) / (d + 1) for w uniform on the simplex; for 0/1 prompts p(1-p) / (d + 1)
    df = synthetic_prompt_matrix(n_models=6, n_prompts=200, seed=4)
    res = random_weight_analysis(df, n_draws=20_000, random_state=2, show_progress=False)
    expected = expected_score_std(df.to_numpy())
    p = df.mean(axis=1).to_numpy()
    assert np.allclose(expected, np.sqrt(p * (1 - p) / 201))
    assert np.allclose(res.score_std, expected, rtol=0.03)
    assert np.allclose(res.score_mean, p, atol=4 * expected.max() / np.sqrt(20_000) + 1e-9)


def test_random_analysis_chunk_invariant_and_consistent_with_loop():
    df = synthetic_prompt_matrix(n_models=8, n_prompts=30, seed=2)
    a = random_weight_analysis(df, n_draws=6000, random_state=3, chunk_size=500, show_progress=False)
    b = random_weight_analysis(df, n_draws=6000, random_state=3, chunk_size=6000, show_progress=False)
    assert a.top_two_swap_rate == b.top_two_swap_rate and np.array_equal(a.score_min, b.score_min)
    assert a.pairwise.equals(b.pairwise) and np.array_equal(a.best_rank, b.best_rank)
    P = a.pairwise.to_numpy()
    off = ~np.eye(len(P), dtype=bool)
    assert np.allclose((P + P.T)[off], 1.0, atol=1e-9) or ((P + P.T)[off] <= 1.0 + 1e-12).all()
    ref = random_weight_analysis_loop(df, n_draws=6000, random_state=4)
    assert abs(ref["top_two_swap_rate"] - a.top_two_swap_rate) < 0.03
    assert np.abs(ref["pairwise"] - P).max() < 0.04
    X = df.to_numpy()
    assert (a.score_min >= X.min(axis=1) - 1e-12).all() and (a.score_max <= X.max(axis=1) + 1e-12).all()
    assert (a.best_rank <= a.table().loc[a.models, "uniform_rank"].to_numpy()).all()


# --------------------------------------------------------------------------- benchmark size curves


def test_most_informative_order_hand_example():
    # columns: two copies of e1, one e2, one e3 (3 models); start at col 0 (e1)
    X = np.array([[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float)
    order = most_informative_order(X, 0)
    assert order[0] == 0 and set(order[1:3]) == {2, 3} and order[3] == 1
    assert list(order[1:3]) == [2, 3]  # tie -> lower index


def test_size_curves_end_at_the_full_score():
    df = synthetic_prompt_matrix(n_prompts=50)
    curves = size_curves(df, random_state=0, n_random_orders=3)
    assert np.allclose(curves.informative.iloc[:, -1], df.mean(axis=1))
    assert np.allclose(curves.random.iloc[:, -1], df.mean(axis=1))
    assert sorted(curves.informative_order) == sorted(df.columns)
    assert curves.by_size.loc[50, "informative_mad"] == pytest.approx(0.0)
    assert np.allclose(cumulative_scores(df.to_numpy(), np.arange(50))[:, 0], df.iloc[:, 0])


# --------------------------------------------------------------------------- permutation tests


def test_similarity_closed_forms_match_direct_definitions():
    rng = np.random.default_rng(8)
    Q = (rng.random((9, 7)) < 0.5).astype(float)
    Q[0] = 0
    cos, jac, ham = (column_similarity(Q, m) for m in ("cosine", "jaccard", "hamming"))
    for i in range(9):
        for j in range(9):
            a, b = Q[i].astype(bool), Q[j].astype(bool)
            na, nb = np.linalg.norm(Q[i]), np.linalg.norm(Q[j])
            assert np.isclose(cos[i, j], Q[i] @ Q[j] / (na * nb) if na and nb else 0.0)
            assert np.isclose(jac[i, j], (a & b).sum() / (a | b).sum() if (a | b).any() else 1.0)
            assert np.isclose(ham[i, j], (a == b).mean())


def test_counting_path_equals_generic_path():
    X = synthetic_prompt_matrix(n_prompts=120).to_numpy(copy=True)
    X[:, :3] = 0
    d = X.shape[1]
    i0, i1 = np.triu_indices(d, 1)
    codes = _binary_pair_codes(X.T, SIMILARITY_MEASURES, i0 * d + i1, i0, i1)
    vals = _pair_similarities(X.T, SIMILARITY_MEASURES, i0 * d + i1, i0, i1)
    for m in SIMILARITY_MEASURES:
        c, table = codes[m]
        assert np.allclose(table[c], vals[m])
        assert np.allclose(_stats_from_codes(c, table), _stats(vals[m]))
        assert np.allclose(_stats(vals[m]), [vals[m].mean(), *np.quantile(vals[m], [0.75, 0.95])])


def test_permutation_keeps_each_models_scores():
    X = synthetic_prompt_matrix(n_prompts=40).to_numpy()
    Xp = permute_within_models(X, np.random.default_rng(99))
    assert np.array_equal(np.sort(X, axis=1), np.sort(Xp, axis=1)) and not np.array_equal(X, Xp)


@pytest.mark.slow
def test_permutation_pvalues_near_uniform_under_the_null():
    # i.i.d. continuous cells: the null holds exactly, so p-values are uniform on {1/50, ..., 1}
    rng = np.random.default_rng(2024)
    P = np.array(
        [
            permutation_test(rng.random((6, 10)), ("cosine",), n_permutations=49, random_state=int(rng.integers(1 << 30)), show_progress=False)
            .pvalues["cosine"]
            .to_numpy()[:3]
            for _ in range(150)
        ]
    )
    for k in range(3):
        p = P[:, k]
        assert 0.01 <= (p <= 0.1).mean() <= 0.2
        assert stats.kstest(p, "uniform").pvalue > 0.001
        assert abs(p.mean() - 0.51) < 0.07


@pytest.mark.slow
def test_permutation_pvalues_conservative_on_iid_binary_data():
    rng = np.random.default_rng(77)
    P = np.array(
        [
            permutation_test((rng.random((6, 12)) < 0.5).astype(float), SIMILARITY_MEASURES, 39, int(rng.integers(1 << 30)), show_progress=False)
            .pvalues.to_numpy()[:3]
            for _ in range(60)
        ]
    )
    assert (P <= 0.1).mean() <= 0.16
    # average Hamming similarity is permutation-invariant: no p-value (it would be 1 whatever the data)
    assert np.isnan(P[:, 0, 2]).all()


def test_permutation_test_detects_structure():
    df = synthetic_prompt_matrix(n_prompts=150)
    res = permutation_test(df.to_numpy(), SIMILARITY_MEASURES, n_permutations=99, random_state=0, show_progress=False)
    assert res.pvalues.loc["95th percentile", "cosine"] <= 0.02
    assert res.pvalues.loc["95th percentile", "jaccard"] <= 0.05
    assert res.pvalues.loc["KS test", "cosine"] < 0.01
    # Jaccard/Hamming skipped on non-binary data
    cont = permutation_test(three_direction_matrix().to_numpy(), SIMILARITY_MEASURES, 19, show_progress=False)
    assert list(cont.pvalues.columns) == ["cosine"]


def test_silhouette_observed_beats_permuted_on_structured_data():
    res = silhouette_test(three_direction_matrix().to_numpy(), n_permutations=5, random_state=0, show_progress=False)
    assert res.observed > np.nanmean(res.permuted) and res.pvalue == pytest.approx(1 / 6)


# --------------------------------------------------------------------------- prompt-level CSV and CLI


def test_read_prompt_matrix_layouts(tmp_path):
    df = synthetic_prompt_matrix(n_models=4, n_prompts=9)
    df.T.to_csv(tmp_path / "prompt_rows.csv")
    df.to_csv(tmp_path / "model_rows.csv")
    a = read_prompt_matrix(tmp_path / "prompt_rows.csv")
    b = read_prompt_matrix(tmp_path / "model_rows.csv", layout="model-rows")
    assert a.shape == (4, 9) and a.equals(b) and np.array_equal(a.to_numpy(), df.to_numpy())
    (tmp_path / "bad.csv").write_text("prompt,m1\np1,2.0\n")
    from harness_ext.errors import HarnessExtError

    with pytest.raises(HarnessExtError, match=r"\[0, 1\]"):
        read_prompt_matrix(tmp_path / "bad.csv")


@pytest.mark.slow
def test_cli_prompt_level_end_to_end(tmp_path, capsys):
    from harness_ext.cli import main

    df = synthetic_prompt_matrix(n_models=8, n_prompts=120)
    df.T.to_csv(tmp_path / "q.csv")  # the paper's Q: prompts x models
    out = tmp_path / "out"
    rc = main(
        [
            "weights", "--prompts", str(tmp_path / "q.csv"), "--draws", "3000", "--permutations", "29",
            "--silhouette-permutations", "2", "--max-clusters", "6", "--scheme", "inverse_distance",
            "--param", "max_clusters=6", "--emit-weights", str(tmp_path / "w.json"), "--out", str(out),
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "top_two_swap_rate" in text and "largest_score_shift" in text and "KS test" in text
    for f in ("rank_changes.png", "pairwise.png", "score_distribution.png", "size_curves.png", "summary.json"):
        assert (out / f).is_file(), f
    summary = json.loads((out / "summary.json").read_text())
    assert 0 <= summary["random_weights"]["top_two_swap_rate"] <= 1
    doc = json.loads((tmp_path / "w.json").read_text())
    assert doc["scheme"] == "inverse_distance" and doc["params"]["max_clusters"] == 6
    assert set(doc["weights"]) == set(df.columns) and np.isclose(sum(doc["weights"].values()), 1.0)


SAMPLES = __import__("pathlib").Path(__file__).parent / "fixtures" / "samples" / "lm_eval_output"


def test_samples_matrix_from_lm_eval_logs_in_the_store(tmp_path):
    from harness_ext.store.samples import ingest_samples
    from harness_ext.store.db import Store
    from harness_ext.methods.weighting import samples_matrix

    with Store.open(":memory:") as store:
        ingest_samples(store, [SAMPLES], show_progress=False)
        df = samples_matrix(store, "toy_arith_mc", "acc")
        assert df.shape == (3, 18) and df.attrs["binary"] and df.attrs["n_dropped_prompts"] == 0
        assert list(df.index) == ["toy/lm-large", "toy/lm-medium", "toy/lm-small"]
        # the per-prompt 0/1 values average to the logged accuracy of each model
        acc = {}
        for f in SAMPLES.glob("*/results_*.json"):
            doc = json.loads(f.read_text())
            acc[doc["config"]["model_args"]] = doc["results"]["toy_arith_mc"]["acc,none"]
        assert sorted(np.round(df.mean(axis=1), 6)) == sorted(np.round(list(acc.values()), 6))
        assert samples_matrix(store, "toy_arith_gen", "exact_match,strict-match", models="toy/lm-[ls]*").shape == (2, 18)
        with pytest.raises(MethodError, match="at least 2"):
            samples_matrix(store, "toy_arith_mc", models="toy/lm-large")


@pytest.mark.slow
def test_cli_weights_on_lm_eval_per_sample_logs(tmp_path, capsys):
    from harness_ext.cli import main
    from harness_ext.store.samples import ingest_samples
    from harness_ext.store.db import Store

    common = ["--samples-task", "toy_arith_mc", "--draws", "2000", "--permutations", "19",
              "--silhouette-permutations", "2", "--max-clusters", "4"]
    rc = main(["weights", "--samples", str(SAMPLES), *common, "--out", str(tmp_path / "a")])
    assert rc == 0
    text = capsys.readouterr().out
    assert "prompt-level toy_arith_mc (acc) from lm-eval per-sample logs" in text and "3 models x 18 columns" in text
    assert "largest_range" in text and "jaccard" in text  # 0/1 data: the binary measures run
    # the same from a store file that holds the logs
    db = tmp_path / "s.duckdb"
    with Store.open(db) as store:
        ingest_samples(store, [SAMPLES], show_progress=False)
    assert main(["weights", "--db", str(db), *common, "--out", str(tmp_path / "b")]) == 0
    assert "the store's samples table" in capsys.readouterr().out
    a = json.loads((tmp_path / "a" / "summary.json").read_text())["random_weights"]
    b = json.loads((tmp_path / "b" / "summary.json").read_text())["random_weights"]
    assert a == b
    assert main(["weights", "--samples", str(SAMPLES), "--out", str(tmp_path / "c")]) == 1
    assert "--samples-task" in capsys.readouterr().err


# --------------------------------------------------------------------------- real data


@pytest.mark.slow
def test_helm_classic_schemes_and_random_weights(helm_classic_matrix):
    df = helm_classic_matrix
    assert "Mean win rate" not in df.columns and not df.isna().any().any()
    comp = compare_schemes(df, random_state=0)
    assert comp.scores.shape == (len(df), 4) and np.allclose(comp.weights.sum(), 1.0)
    # every scheme re-orders the same models: rank changes of a tie-free ranking sum to 0
    assert (comp.rank_change.sum() == 0).all()
    res = random_weight_analysis(df, n_draws=20_000, random_state=0, show_progress=False)
    mean = df.mean(axis=1)
    assert list(res.top_two) == list(mean.sort_values(ascending=False).index[:2])
    assert res.pairwise.shape == (20, 20) and np.isclose(res.pairwise.iloc[1, 0], res.top_two_swap_rate)
    # the independent per-draw Smith-Tromble reference (another random stream) gives the same swap
    # rate within Monte Carlo error, and the spread follows Var = var(x) / (d + 1)
    ref = random_weight_analysis_loop(df, n_draws=20_000, random_state=1)
    se = np.sqrt(2 * res.top_two_swap_rate * (1 - res.top_two_swap_rate) / 20_000)
    assert 0.05 < res.top_two_swap_rate < 0.95 and abs(ref["top_two_swap_rate"] - res.top_two_swap_rate) < 4 * se
    assert np.allclose(res.score_std, expected_score_std(df.to_numpy()), rtol=0.03)
    assert np.isclose(res.largest_range, (res.score_max - res.score_min).max())
    assert res.largest_abs_score_shift <= res.largest_range


@pytest.mark.slow
def test_cli_weights_on_real_helm_classic(real_store, tmp_path, capsys):
    from harness_ext.cli import main

    out = tmp_path / "out"
    rc = main(["weights", "--db", str(real_store), "--benchmark", "helm_classic", "--dense", "models", "--draws", "20000",
               "--permutations", "99", "--silhouette-permutations", "3", "--max-clusters", "8", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "30 models x 14 columns, 0 missing cells" in text
    for heading in ("rank change per scheme", "random simplex weightings", "pairwise", "top_two_swap_rate",
                    "increasing benchmark size", "Ailem et al. Table 2", "Ailem et al. Table 3"):
        assert heading in text, heading
    for f in ("rank_changes.png", "pairwise.png", "score_distribution.png", "size_curves.png", "pairwise.csv",
              "scheme_rank_change.csv", "permutation_pvalues.csv"):
        assert (out / f).stat().st_size > 0, f
    s = json.loads((out / "summary.json").read_text())
    assert s["random_weights"]["n_draws"] == 20_000 and s["random_weights"]["n_models"] == 30
    # dataset performance vectors are far from random on HELM: every statistic at the smallest p-value
    assert np.allclose([s["permutation_test"]["pvalues"]["cosine"][k] for k in STAT_NAMES], 1 / 100)
    assert s["silhouette"]["observed"] > s["silhouette"]["permuted"]


@pytest.fixture(scope="module")
def helm_classic_store(tmp_path_factory):
    """HELM Classic (Every Eval Ever) alone in a store (about 0.5 s): 67 models x 14 scenarios, 159 cells missing."""
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    from conftest import HELM_CLASSIC, require

    db = tmp_path_factory.mktemp("helm") / "helm.duckdb"
    with Store.open(db) as store:
        ingest_paths(store, [require(HELM_CLASSIC)], show_progress=False)
    return db


@pytest.mark.slow  # a real matrix end to end: the slow real-data tier
def test_cli_weights_completes_a_sparse_real_matrix(helm_classic_store, tmp_path, capsys):
    # Missing cells are predicted by reduce's default predictor and every analysis runs; --no-complete keeps
    # the old skips; the same seed gives the same summary.json
    from harness_ext.cli import main
    from harness_ext.methods.reduction.manifest import DEFAULT_PREDICTOR

    common = ["weights", "--db", str(helm_classic_store), "--benchmark", "helm_classic", "--draws", "2000",
              "--permutations", "19", "--silhouette-permutations", "2", "--max-clusters", "6"]
    assert main([*common, "--out", str(tmp_path / "a")]) == 0
    text = capsys.readouterr().out
    assert "67 models x 14 columns, 159 missing cells" in text
    assert f"159 of 938 cells predicted by {DEFAULT_PREDICTOR} (seed 0)" in text and "skipped" not in text
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert a["completion"] == {"predictor": DEFAULT_PREDICTOR, "n_predicted": 159, "n_cells": 938, "notes": []}
    assert {"schemes", "random_weights", "size_curves", "permutation_test", "silhouette"} <= set(a)
    # a model with a few scores no longer tops the uniform ranking by their mean: its predicted cells count
    scores = pd.read_csv(tmp_path / "a" / "scheme_scores.csv", index_col=0)
    assert scores["uniform"].notna().all() and len(scores) == 67
    assert main([*common, "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    assert (tmp_path / "b" / "summary.json").read_bytes() == (tmp_path / "a" / "summary.json").read_bytes()

    assert main([*common, "--no-complete", "--out", str(tmp_path / "c")]) == 0
    text = capsys.readouterr().out
    assert "159 missing cells kept (--no-complete)" in text and "predicted by" not in text
    for heading in ("weighting schemes", "increasing benchmark size", "permutation test", "silhouette"):
        assert f"== {heading}: skipped (" in text, heading
    c = json.loads((tmp_path / "c" / "summary.json").read_text())
    assert c["completion"] is None and set(c) & {"schemes", "size_curves", "permutation_test", "silhouette"} == set()
    assert c["random_weights"]["n_models"] == 67


@pytest.mark.slow
def test_cli_weights_names_what_it_drops_and_completes_prompt_csvs(tmp_path, capsys):
    # a model or column with no result at all is dropped and named; the rest is completed
    from harness_ext.cli import main

    df = synthetic_prompt_matrix(n_models=6, n_prompts=12)
    df.iloc[0, :] = np.nan
    df.iloc[:, 3] = np.nan
    df.iloc[2, 1] = np.nan
    df.to_csv(tmp_path / "q.csv")
    assert main(["weights", "--prompts", str(tmp_path / "q.csv"), "--prompts-layout", "model-rows", "--draws", "200",
                 "--analyses", "random", "--out", str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "dropped 1 model with no result (model-0) and 1 column with no result (p0003)" in text
    assert "1 of 55 cells predicted by lowrank" in text


@pytest.mark.slow
def test_complete_matrix_follows_reduces_rules():
    from harness_ext.methods.weighting import complete_matrix

    df = three_direction_matrix()
    assert complete_matrix(df).n_predicted == 0 and complete_matrix(df).frame is df
    sparse = df.copy()
    sparse.iloc[0, 0] = sparse.iloc[1, 1] = np.nan
    sparse.iloc[1:, 5] = np.nan  # one model's result only: kept, predicted and said
    done = complete_matrix(sparse, random_state=3)
    assert done.message == f"{2 + 5} of 72 cells predicted by lowrank"
    assert "1 column has a result from fewer than two models" in done.notes[0] and "c5" in done.notes[0]
    observed = sparse.notna().to_numpy()
    assert not done.frame.isna().any().any()
    assert np.array_equal(done.frame.to_numpy()[observed], sparse.to_numpy()[observed])
    assert done.frame.equals(complete_matrix(sparse, random_state=3).frame)
    with pytest.raises(MethodError, match="at least 4 models"):
        complete_matrix(sparse.iloc[:3])


@pytest.mark.slow
def test_real_weights_flow_into_a_manifest(real_store, tmp_path):
    # harness-ext weights --emit-weights -> reduce --weights: the manifest's aggregate uses exactly those weights
    from harness_ext.cli import main

    wfile = tmp_path / "w.json"
    assert main(["weights", "--db", str(real_store), "--benchmark", "helm_classic", "--dense", "models",
                 "--analyses", "none", "--scheme", "inverse_distance", "--emit-weights", str(wfile),
                 "--out", str(tmp_path / "o")]) == 0
    emitted = json.loads(wfile.read_text())
    assert emitted["scheme"] == "inverse_distance" and len(emitted["weights"]) == 14
    assert main(["reduce", "--db", str(real_store), "--benchmark", "helm_classic", "--dense", "models", "--budget", "4",
                 "--n-random", "50", "--weights", str(wfile), "--out", str(tmp_path / "r"), "--format", "json"]) == 0
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    got = {d["name"]: d["weight"] for d in m["datasets"]}
    assert got == pytest.approx(emitted["weights"], abs=1e-9)
    assert m["aggregate"]["weighting"]["name"] == "user"
    # ... and says which scheme made them, with its parameters
    assert m["aggregate"]["weighting"]["source"] == {"scheme": "inverse_distance", "params": emitted["params"]}


@pytest.mark.slow
def test_pythia_mmlu_random_weights_and_permutation(pythia_mmlu_matrix):
    df = pythia_mmlu_matrix
    res = random_weight_analysis(df, n_draws=2000, random_state=0, show_progress=False)
    assert len(res.models) == df.shape[0] and np.isfinite(res.largest_abs_score_shift)
    assert np.allclose(res.score_std, expected_score_std(df.to_numpy()), rtol=0.1)
    pt = permutation_test(df.to_numpy(), ("cosine",), n_permutations=49, random_state=0, show_progress=False)
    assert (pt.pvalues["cosine"].iloc[:3] == 1 / 50).all() and (pt.observed["cosine"] > pt.permuted_mean["cosine"]).all()


def test_cli_weights_json_is_the_typed_report(tmp_path, capsys):
    # --json gets the command's WeightsReport: summary.json's document, every analysis's tables, the files
    from harness_ext.cli import main

    rc = main(["weights", "--samples", str(SAMPLES), "--samples-task", "toy_arith_mc", "--draws", "500",
               "--analyses", "random,silhouette", "--silhouette-permutations", "2", "--max-clusters", "4",
               "--out", str(tmp_path / "o"), "--json", str(tmp_path / "r.json")])
    assert rc == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["summary"] == json.loads((tmp_path / "o" / "summary.json").read_text())
    assert {"random/scores", "random/pairwise", "random/pairwise_exact", "silhouette/silhouette"} <= set(doc["tables"])
    assert len(doc["tables"]["random/scores"]) == 3 and str(tmp_path / "o" / "pairwise.png") in doc["files"]
    assert doc["title"].endswith("3 models x 18 columns, 0 missing cells, 0/1 values")


def test_results_render_and_serialise_themselves():
    df = synthetic_prompt_matrix(n_models=6, n_prompts=30)
    comp = compare_schemes(df, random_state=0, scheme_params={k: {"max_clusters": 4} for k in ("medoids", "distance", "inverse_distance")})
    assert "rank change per scheme (top 3 of 6" in comp.render(top=3)
    assert json.loads(comp.to_json())["summary"]["max_abs_rank_change"]["uniform"] == 0
    res = random_weight_analysis(df, n_draws=200, random_state=0, show_progress=False)
    assert res.to_frame().equals(res.table()) and "named outputs" in str(res)
    pt = permutation_test(df.to_numpy(), ("cosine",), n_permutations=9, show_progress=False)
    assert "Ailem et al. Table 2" in str(pt) and json.loads(pt.to_json())["summary"]["n_permutations"] == 9
    clusters = cluster_columns(df.to_numpy(), max_clusters=4)
    assert clusters.to_frame()["medoid"].sum() == clusters.n_clusters


def test_invalid_weights_are_shown_with_their_sum(monkeypatch):
    """A scheme whose weights sum to 2 was refused as "invalid weights (shape (12,), sum 2)": which weights, and
    which rule they broke, were not said. The message now gives the rule, the sum and the first weights by column."""
    from types import SimpleNamespace

    from harness_ext.methods.weighting import schemes

    class Doubled:
        def fit(self, X):
            self.weights_ = np.full(X.shape[1], 2.0 / X.shape[1])
            return self

        def get_params(self):
            return {}

    monkeypatch.setattr(schemes, "make_scheme", lambda *a, **k: (SimpleNamespace(name="doubled"), Doubled()))
    df = pd.DataFrame(np.random.default_rng(0).random((5, 12)), columns=[f"task_{j}" for j in range(12)])
    with pytest.raises(MethodError) as err:
        schemes.compute_weights(df, "doubled")
    assert str(err.value) == ("weighting scheme 'doubled' produced invalid weights: they sum to 2, not 1 (12 weights: "
                              "task_0=0.1667, task_1=0.1667, task_2=0.1667, task_3=0.1667, task_4=0.1667, "
                              "task_5=0.1667, task_6=0.1667, task_7=0.1667 and 4 more)")
    assert schemes.weights_problem([0.5, -0.5, 1.0], ["a", "b", "c"]) == (
        "1 negative (sum 1; 3 weights: a=0.5, b=-0.5, c=1)")
    assert schemes.weights_problem([0.5, 0.5], ["a", "b"]) is None


def test_few_models_warning_states_the_chance_of_an_unrelated_ranking():
    """n models have n! rankings: an ordering unrelated to the scores is a given ranking 1/n! of the time and keeps a
    given model's rank 1/n of the time (counted over every ordering here). Warned above 5%: 2 and 3 models."""
    import itertools
    import math

    from harness_ext.methods.weighting import chance_ranking_rate, few_models_warning

    for n in (2, 3, 4):
        orders = list(itertools.permutations(range(n)))
        assert chance_ranking_rate(n) == pytest.approx(sum(o == tuple(range(n)) for o in orders) / len(orders))
        assert sum(o[0] == 0 for o in orders) / len(orders) == pytest.approx(1 / n)
        assert len(orders) == math.factorial(n)
    assert few_models_warning(3).startswith("only 3 models: they have 6 rankings") and "17%" in few_models_warning(3)
    assert "33%" in few_models_warning(3) and "-2 to 2" in few_models_warning(3)
    assert "50%" in few_models_warning(2)
    assert few_models_warning(4) is None and few_models_warning(40) is None
    # past 170 models n! is too large for a float; 1/n! is not (or is 0)
    assert chance_ranking_rate(171) == pytest.approx(8.0579e-310) and chance_ranking_rate(4494) == 0.0
    assert few_models_warning(4494) is None


@pytest.mark.slow
def test_cli_weights_on_three_models_warns_that_rankings_say_little(tmp_path, capsys):
    """weights on a store of 3 models printed rank changes (all 0) and best/worst ranks without a word that 3 models
    have 6 rankings; it now warns, on stderr, in summary.json and in --json. 4 models: no warning."""
    from harness_ext.cli import main

    rng = np.random.default_rng(0)
    for n in (3, 4):
        csv, db, out = tmp_path / f"m{n}.csv", tmp_path / f"m{n}.duckdb", tmp_path / f"out{n}"
        pd.DataFrame(rng.uniform(size=(n, 6)), index=pd.Index([f"m{i}" for i in range(n)], name="model"),
                     columns=[f"d{j}" for j in range(6)]).round(3).to_csv(csv)
        assert main(["ingest", "--db", str(db), "-q", str(csv)]) == 0
        capsys.readouterr()
        assert main(["weights", "--db", str(db), "--analyses", "schemes,random", "--draws", "500",
                     "--out", str(out), "--json", str(tmp_path / f"w{n}.json")]) == 0
        said = [line for line in capsys.readouterr().err.splitlines() if "rankings" in line]
        summary = json.loads((out / "summary.json").read_text())
        doc = json.loads((tmp_path / f"w{n}.json").read_text())
        if n == 3:
            assert len(said) == 1 and said[0].startswith("warning: only 3 models: they have 6 rankings")
            assert summary["warnings"] == [said[0][len("warning: "):]] and doc["warnings"] == summary["warnings"]
        else:
            assert not said and summary["warnings"] == [] and not doc["warnings"]
    # permutation and silhouette tests make no ranking statement: no warning for them alone
    assert main(["weights", "--db", str(tmp_path / "m3.duckdb"), "--analyses", "permutation", "--permutations", "9",
                 "--out", str(tmp_path / "perm")]) == 0
    assert "rankings" not in capsys.readouterr().err


@pytest.mark.slow  # a real matrix end to end: the slow real-data tier
def test_cli_weights_runs_on_more_models_than_a_float_factorial_holds(tmp_path, capsys):
    """Ranking statements over 171 or more models: n! no longer fits in a float, and the chance of an unrelated
    ranking is still computed (as 1/n!, which does) instead of the command failing. Real leaderboards: EQ-Bench and
    six OpenCompass categories as one group, 180 models (EQ-Bench's 'random-baseline' row is not one)."""
    from harness_ext.cli import main

    from conftest import SHARED_DATA, require

    boards = require(SHARED_DATA / "benchbench" / "leaderboards")
    files = [boards / "eqbench_240912_emotion.csv"] + [
        boards / f"opencompass_{c}.csv" for c in ("agent_240829_agent", "instruct_240829_instructionfollow",
                                                    "knowledge_240829_knowledge", "language_240829_language",
                                                    "math_240829_math", "reasoning_240829_reasoning")]
    db = str(tmp_path / "oc.duckdb")
    assert main(["ingest", "--db", db, "--group", "oc", *map(str, files)]) == 0
    assert main(["weights", "--db", db, "--benchmark", "oc", "--analyses", "random", "--draws", "200",
                 "--no-complete", "--out", str(tmp_path / "w")]) == 0
    s = json.loads((tmp_path / "w" / "summary.json").read_text())
    assert s["random_weights"]["n_models"] == 180
    assert "180 models x 7 columns" in capsys.readouterr().out


def test_a_prompt_csv_cell_that_is_no_number_is_named_by_row_and_column(tmp_path):
    """pandas' 'Unable to parse string 'x' at position 1' named neither the column nor the row."""
    from harness_ext.errors import HarnessExtError
    from harness_ext.methods.weighting.prompts import read_prompt_matrix

    path = tmp_path / "q.csv"
    path.write_text("item,a,b\nq1,1,0\nq2,x,1\nq3,1,yes\n")
    with pytest.raises(HarnessExtError) as exc:
        read_prompt_matrix(path)
    assert str(exc.value) == f"{path}: 2 scores not a number, the first 'x' in row 'q2', column 'a'"


def test_the_dense_message_counts_in_the_singular_too():
    from harness_ext.methods.reduction.manifest import dense_cut_message

    msg = dense_cut_message({"models": ["m1", "m2"], "datasets": ["GSM8K"], "observed_cells": 1})
    assert msg.startswith("--dense dropped 2 models (m1, m2) and 1 dataset (GSM8K) with 1 observed cell to reach")


def test_the_score_axes_of_weights_plots_say_what_the_scores_are(tmp_path, monkeypatch):
    """'weighted score' and 'average score' alone: on the command line they are normalised scores, not a
    benchmark's points; the size curves' sizes are counts (no 1.5 ticks)."""
    import harness_ext.report as report
    from harness_ext.methods.weighting import random_weight_analysis, size_curves

    figs = []
    monkeypatch.setattr(report, "save_figure", lambda fig, path: figs.append(fig) or path)
    df = pd.DataFrame(np.random.default_rng(2).random((8, 5)), index=[f"m{i}" for i in range(8)])
    random_weight_analysis(df, n_draws=200).plot(tmp_path / "d.png", kind="distribution", scale="units X")
    size_curves(df).plot(tmp_path / "s.png", scale="units X")
    assert figs[0].axes[0].get_xlabel() == "weighted score (units X)"
    assert figs[1].axes[0].get_ylabel().startswith("average score, units X")
    ticks = figs[1].axes[0].get_xticks()
    assert np.allclose(ticks, np.round(ticks))


def test_the_weights_command_labels_its_plots_with_the_scale(tmp_path, monkeypatch):
    import harness_ext.report as report
    from harness_ext.cli import main

    labels = []
    monkeypatch.setattr(report, "save_figure",
                        lambda fig, path: labels.append([a.get_xlabel() + a.get_ylabel() for a in fig.axes]) or path)
    q = tmp_path / "q.csv"
    q.write_text("item,a,b,c\n" + "".join(f"p{i},{i % 2},{(i // 2) % 2},{int(i % 3 == 0)}\n" for i in range(12)))
    assert main(["weights", "--prompts", str(q), "--analyses", "random", "--draws", "200", "--out",
                 str(tmp_path / "o")]) == 0
    assert any("weighted score (each prompt's score as logged)" in text for text in labels[-1])


def test_the_size_table_says_what_its_orders_are():
    from harness_ext.methods.weighting import size_curves

    df = pd.DataFrame(np.random.default_rng(2).random((8, 6)), index=[f"m{i}" for i in range(8)])
    text = size_curves(df, n_random_orders=5).render()
    assert "(informative: columns added farthest first, each the largest mean cosine distance to those chosen, " \
           "from a random start; random: the mean over 5 random orders)" in text
