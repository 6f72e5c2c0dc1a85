"""prowl: mean win rate, coverage curves, SCAUC, random baseline, SimBA selectors, CLI and real data."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness_ext import get_registration
from harness_ext.cli import main
from harness_ext.errors import MethodError
from harness_ext.plugins.selectors import (
    BeamCoverage,
    GreedyCoverage,
    GreedyMaximum,
    GreedyMinimum,
    RandomOrder,
)
from harness_ext.methods.prowl.coverage_search import coverage_matrix, greedy_coverage_order, proxy_coverage
from harness_ext.methods.prowl import (
    coverage,
    coverage_curve,
    matched_or_beaten,
    mean_win_rate,
    n_star,
    prefix_mean_win_rates,
    prowl_table,
    random_baseline,
    run_prowl,
    scauc,
    win_rates,
)


def low_rank(m=30, d=8, seed=0, noise=0.05, missing=0.0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.random((m, 2)) @ rng.random((2, d)) / 2 + noise * rng.standard_normal((m, d)), 0, 1)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X


def helm_mwr(B):
    """HELM's compute_aggregate_row_win_rates, transcribed loop by loop (the reference for ties and gaps)."""
    m, d = B.shape
    per_row = [[] for _ in range(m)]
    for c in range(d):
        counts = {}
        for r in range(m):
            if not np.isnan(B[r, c]):
                counts[B[r, c]] = counts.get(B[r, c], 0) + 1
        wins, acc = {}, 0
        for value, cnt in sorted(counts.items()):
            wins[value] = acc + (cnt - 1) / 2
            acc += cnt
        if acc < 2:
            continue
        for r in range(m):
            if not np.isnan(B[r, c]):
                per_row[r].append(wins[B[r, c]] / (acc - 1))
    return np.array([np.mean(w) if w else np.nan for w in per_row])


# --------------------------------------------------------------------------- mean win rate


def test_mwr_hand_computed_with_ties():
    X = np.array([[1.0, 0.5], [2.0, 0.5], [3.0, 0.2]])
    # dataset 0: wins 0, 1, 2 of 2; dataset 1: models 0 and 1 tie above model 2 -> (1 + 0.5) / 2 each.
    np.testing.assert_allclose(win_rates(X), [[0.0, 0.75], [0.5, 0.75], [1.0, 0.0]])
    np.testing.assert_allclose(mean_win_rate(X), [0.375, 0.625, 0.5])
    np.testing.assert_allclose(mean_win_rate(X, [1]), [0.75, 0.75, 0.0])


def test_mwr_missing_cells_hand_computed():
    X = np.array([[1.0, np.nan], [2.0, 0.3], [3.0, 0.1], [np.nan, 0.2]])
    # dataset 1 has three observed models: win rates 1, 0, 0.5; dataset 0: 0, 0.5, 1.
    np.testing.assert_allclose(mean_win_rate(X), [0.0, 0.75, 0.5, 0.5])


def test_mwr_equals_helm_reference():
    rng = np.random.default_rng(1)
    X = np.round(rng.random((25, 9)), 1)  # many ties
    X[rng.random(X.shape) < 0.15] = np.nan
    X[:, 4] = np.nan
    X[3, 4] = 0.5  # a dataset with one observed model carries no win rate
    np.testing.assert_allclose(mean_win_rate(X), helm_mwr(X), equal_nan=True)


def test_prefix_mwr_equals_from_scratch():
    X = low_rank(missing=0.1, seed=2)
    order = np.random.default_rng(3).permutation(X.shape[1])
    P = prefix_mean_win_rates(win_rates(X), order)
    for k in range(1, len(order) + 1):
        np.testing.assert_allclose(P[:, k - 1], helm_mwr(X[:, order[:k]]), equal_nan=True)


def test_coverage_is_pearson_of_mwrs_and_full_set_is_one():
    X = low_rank(seed=4)
    sub = [1, 5]
    assert np.isclose(coverage(X, sub), stats.pearsonr(helm_mwr(X), helm_mwr(X[:, sub]))[0])
    assert np.isclose(coverage(X, range(X.shape[1])), 1.0)
    curve = coverage_curve(X, [3, 0, 1, 2, 4, 5, 6, 7])
    assert np.isclose(curve[-1], 1.0) and np.isclose(curve[1], coverage(X, [3, 0]))


def test_coverage_undefined_when_subset_mwr_constant():
    X = np.array([[0.5, 0.1], [0.5, 0.2], [0.5, 0.3]])
    assert np.isnan(coverage(X, [0]))


# --------------------------------------------------------------------------- SCAUC and |S*|


def test_scauc_on_known_curves():
    assert np.isclose(scauc(np.full(10, 0.7)), 0.7)
    assert np.isclose(scauc(np.linspace(0, 1, 11)), 0.5)
    assert np.isclose(scauc([0.0, 1.0, 1.0]), 0.75)  # trapezoids 0.5 + 1 over width 2
    assert np.isclose(scauc([-1.0, 1.0]), 0.0)  # signed
    assert np.isclose(scauc([np.nan, 1.0]), 0.5)  # undefined coverage counts as 0
    assert np.isnan(scauc([0.9]))
    assert np.isclose(scauc([0.2, 0.4, 1.0, 1.0], k=2), 0.3)
    np.testing.assert_allclose(scauc(np.array([[1.0, 1.0], [0.0, 1.0]])), [1.0, 0.5])


def test_n_star():
    assert n_star([0.5, 0.96, 0.9, 1.0]) == 2
    assert n_star([0.96, 0.5]) == 1
    assert n_star([0.5, 0.6], target=0.95) == 0
    assert n_star([0.5, 0.6], target=0.55) == 2
    np.testing.assert_array_equal(n_star(np.array([[0.1, 1.0], [0.99, 1.0]])), [2, 1])


def test_matched_or_beaten():
    assert matched_or_beaten(0.5, [0.1, 0.5, 0.9, np.nan]) == pytest.approx(2 / 3)
    assert np.isnan(matched_or_beaten(np.nan, [0.1]))


# --------------------------------------------------------------------------- random baseline


def test_random_baseline_curves_equal_per_order_curves():
    X = low_rank(missing=0.05, seed=5)
    base = random_baseline(X, n_runs=40, random_state=1)
    assert base.curves.shape == (40, X.shape[1])
    for r in (0, 17, 39):
        np.testing.assert_allclose(base.curves[r], coverage_curve(X, base.orders[r]), equal_nan=True)
        assert sorted(base.orders[r]) == list(range(X.shape[1]))
    np.testing.assert_allclose(base.scauc, scauc(base.curves))
    np.testing.assert_array_equal(base.n_star, n_star(base.curves, 0.95))
    again = random_baseline(X, n_runs=40, random_state=1)
    np.testing.assert_array_equal(again.orders, base.orders)


def _generic_curves(X, orders, ties):
    # The masked-correlation path: prefix MWRs from cumulative sums, one Pearson per prefix.
    return np.array([coverage_curve(X, o, ties=ties) for o in orders])


@pytest.mark.parametrize("ties", ["half", "strict"])
def test_complete_random_baseline_equals_masked_path_on_real_matrices(helm_classic_matrix, pythia_mmlu_matrix, ties):
    # Complete win rates take the d x d covariance path; it must give the per-order curves of the generic path,
    # including NaN where a prefix's MWR is constant (chance-normalised scores tie at 0).
    for frame in (helm_classic_matrix, pythia_mmlu_matrix.iloc[::3]):
        X = frame.to_numpy(dtype=float)
        assert not np.isnan(X).any()
        base = random_baseline(X, n_runs=25, random_state=3, ties=ties)
        ref = _generic_curves(X, base.orders, ties)
        np.testing.assert_allclose(base.curves, ref, atol=1e-12, equal_nan=True)


def test_complete_random_baseline_constant_prefix_is_nan():
    X = low_rank(40, 6, seed=8).copy()
    X[:, 0] = 0.3  # every model tied: win rate 0.5 for all
    X[:, 1] = 0.3
    base = random_baseline(X, n_runs=60, random_state=0)
    ref = _generic_curves(X, base.orders, "half")
    np.testing.assert_allclose(base.curves, ref, atol=1e-12, equal_nan=True)
    starts_tied = np.isin(base.orders[:, 0], (0, 1))
    assert starts_tied.any() and np.isnan(base.curves[starts_tied, 0]).all()
    assert not np.isnan(base.curves[~starts_tied]).any()


def test_random_baseline_1000_runs_on_simba_mmlu_shape():
    # Speed is measured in benchmarks/bench_prowl.py (ratio to a from-scratch reference), not here.
    X = low_rank(79, 58, seed=6)
    base = random_baseline(X, n_runs=1000)
    assert base.curves.shape == (1000, 58) and np.allclose(base.curves[:, -1], 1.0)


# --------------------------------------------------------------------------- selectors


def test_greedy_first_pick_is_best_single_dataset():
    for seed in range(10):
        X = low_rank(20, 6, seed=seed, noise=0.15)
        for sim in ("pearson", "euclidean", "wasserstein"):
            sel = GreedyCoverage(similarity=sim).fit(X)
            C = sel.similarity_matrix_
            single = [proxy_coverage(C, [c]) for c in range(6)]
            assert single[sel.order_[0]] == pytest.approx(max(single))
            for k in range(1, 7):
                assert sel.coverage_[k - 1] == pytest.approx(proxy_coverage(C, sel.order_[:k]))


def test_greedy_vs_exhaustive_and_wide_beam_is_exact():
    for seed in range(8):
        X = low_rank(20, 6, seed=seed, noise=0.2)
        greedy = GreedyCoverage(similarity="pearson").fit(X)
        beam = BeamCoverage(similarity="pearson", beam_width=20).fit(X)  # C(6, k) <= 20 keeps every subset
        C = greedy.similarity_matrix_
        for k in range(1, 7):
            best = max(proxy_coverage(C, s) for s in itertools.combinations(range(6), k))
            # Greedy never beats the exhaustive optimum and matches it for one dataset.
            assert proxy_coverage(C, greedy.order_[:k]) <= best + 1e-12
            if k == 1:
                assert proxy_coverage(C, greedy.order_[:1]) == pytest.approx(best)
            # A beam that keeps every subset of each size and stops at size k finds the optimum.
            bk = BeamCoverage(similarity="pearson", beam_width=20, n_select=k).fit(X)
            assert proxy_coverage(C, bk.order_) == pytest.approx(best)
        assert sorted(beam.order_) == list(range(6))


def test_beam_width_one_is_greedy():
    for seed in range(20):
        X = low_rank(15, 7, seed=seed, noise=0.2)
        g = GreedyCoverage(similarity="spearman", random_state=seed).fit(X)
        b = BeamCoverage(similarity="spearman", beam_width=1, random_state=seed).fit(X)
        np.testing.assert_array_equal(g.order_, b.order_)


def test_gamma_stops_algorithm_1_and_n_select_truncates():
    X = low_rank(25, 10, seed=7)
    full = GreedyCoverage().fit(X)
    gamma = float(full.coverage_[2]) - 1e-9
    stopped = GreedyCoverage(gamma=gamma).fit(X)
    assert len(stopped.order_) == 3 and stopped.coverage_[-1] >= gamma
    assert len(GreedyCoverage(n_select=4).fit(X).order_) == 4
    np.testing.assert_array_equal(GreedyCoverage(n_select=4).fit(X).order_, full.order_[:4])
    assert sorted(full.order_) == list(range(10))


def test_nan_similarity_counts_as_no_coverage():
    X = low_rank(20, 5, seed=8)
    X[:, 2] = 0.4  # constant: Pearson undefined with everything
    C = coverage_matrix(X, "pearson")
    assert np.all(C[2, [0, 1, 3, 4]] == 0) and C[2, 2] == 1
    sel = GreedyCoverage().fit(X)
    assert np.isfinite(sel.coverage_).all()


def test_ties_broken_by_seeded_priority():
    C = np.ones((4, 4))  # every dataset covers everything: all gains tie
    o1, _ = greedy_coverage_order(C, priority=np.array([2, 0, 3, 1]))
    assert list(o1) == [1, 3, 0, 2]
    X = np.tile(np.linspace(0, 1, 10)[:, None], (1, 4))
    orders = {tuple(GreedyCoverage(random_state=s).fit(X).order_) for s in range(6)}
    assert len(orders) > 1  # the seed matters only through ties
    assert tuple(GreedyCoverage(random_state=3).fit(X).order_) == tuple(GreedyCoverage(random_state=3).fit(X).order_)


def test_greedy_min_max_random_baselines():
    X = np.array([[0.1, 0.9, 0.5, np.nan], [0.3, 0.7, 0.5, 0.2], [0.2, 0.8, np.nan, 0.1]])
    np.testing.assert_array_equal(GreedyMinimum().fit(X).order_, [3, 0, 2, 1])
    np.testing.assert_array_equal(GreedyMaximum().fit(X).order_, [1, 2, 0, 3])
    r = RandomOrder(random_state=4).fit(X).order_
    assert sorted(r) == [0, 1, 2, 3]
    assert len(RandomOrder(n_select=2).fit(X).order_) == 2


def test_selectors_registered():
    for name in ("greedy_coverage", "beam_coverage", "random", "greedy_minimum", "greedy_maximum"):
        reg = get_registration("selectors", name)
        json.dumps(reg.cls().get_params())


# --------------------------------------------------------------------------- run_prowl / table / CLI


def test_run_prowl_result():
    X = low_rank(40, 9, seed=9)
    df = pd.DataFrame(X, columns=[f"d{i}" for i in range(9)])
    res = run_prowl(df, similarity="minkowski", n_random=200, random_state=2)
    assert res.selector == "greedy_coverage" and res.similarity == "minkowski"
    assert sorted(res.order) == sorted(df.columns) and res.subset == res.order[: res.n_star]
    np.testing.assert_allclose(res.coverage, coverage_curve(X, [df.columns.get_loc(c) for c in res.order]))
    assert res.n_star == n_star(res.coverage, 0.95) >= 1
    assert res.scauc == pytest.approx(scauc(res.coverage))
    assert res.max2 == pytest.approx(scauc(res.coverage, max(res.n_star, 2)))
    assert res.auc_vs_random == pytest.approx(np.mean(res.random.scauc <= res.scauc + 1e-12))
    assert 0 <= res.max2_vs_random <= 1
    assert res.proxy_coverage is not None and len(res.proxy_coverage) == 9
    d = json.loads(json.dumps(res.to_dict()))
    assert d["subset"] == res.subset and d["params"]["similarity"] == "minkowski"
    # a Result: the curve as its frame, rendered text, strict JSON, a figure
    frame = res.to_frame()
    assert list(frame["dataset_added"]) == res.order and np.allclose(frame["eta"], res.coverage)
    assert "MINKOWSKI" in res.render() and json.loads(res.to_json())["n_star"] == res.n_star
    base = run_prowl(df, selector="greedy_maximum", n_random=0)
    assert base.similarity is None and base.random is None and base.auc_vs_random is None


def test_run_prowl_overrides_truncation_and_checks_shape():
    X = low_rank(20, 6, seed=10)
    res = run_prowl(X, selector="greedy_coverage", selector_params={"n_select": 2, "gamma": 0.5}, n_random=0)
    assert len(res.order) == 6
    with pytest.raises(MethodError):
        run_prowl(X[:, :1], n_random=0)


def test_prowl_table_rows_and_error_row():
    X = low_rank(30, 7, seed=11)
    X[0, 0] = -0.2  # Jensen-Shannon cannot run on negative scores
    rep = prowl_table(pd.DataFrame(X), n_random=100)
    assert rep.table.index[0] == "RANDOM (n = 100)"
    assert {"GREEDY MINIMUM", "GREEDY MAXIMUM", "PEARSON", "MINKOWSKI (P=3)"} <= set(rep.table.index)
    assert len(rep.table) == 12
    assert "non-negative" in rep.table.loc["JENSEN-SHANNON", "note"]
    assert rep.table.loc["RANDOM (n = 100)", "SCAUC"] == pytest.approx(rep.baseline.scauc.mean())
    curves = rep.curves()
    assert set(curves.method) >= {"PEARSON", "RANDOM (n = 100) mean"}
    text = rep.render()
    assert "30 models x 7 datasets" in text and "PEARSON" in text and "of 7" in text
    doc = json.loads(rep.to_json())
    assert [r["method"] for r in doc["tables"]["prowl"]] == list(rep.table.index) and "curves" in doc["tables"]


def test_prowl_table_runs_a_selector_without_a_similarity_once():
    """k-means orders the datasets the same way whatever the measure: one row, not nine identical ones; a measure
    asked for anyway is reported as not used."""
    X = low_rank(30, 7, seed=11)
    rep = prowl_table(pd.DataFrame(X), selector="kmeans", n_random=20)
    assert list(rep.table.index) == ["RANDOM (n = 20)", "GREEDY MINIMUM", "GREEDY MAXIMUM", "KMEANS"]
    rep = prowl_table(pd.DataFrame(X), selector="kmeans", similarities=["pearson", "cosine"], n_random=20)
    assert rep.table.index[-1] == "KMEANS" and len(rep.table) == 4
    assert "similarity pearson, cosine not used: selector 'kmeans' takes no similarity measure" in rep.notes[0]


@pytest.mark.slow
def test_cli_prowl_on_helm_classic(real_store, tmp_path, capsys):
    out = tmp_path / "prowl"
    rc = main(["prowl", "--db", str(real_store), "--benchmark", "helm_classic", "--n-random", "200", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "PEARSON" in text and "RANDOM (n = 200)" in text and "of 14" in text
    table = pd.read_csv(out / "prowl_table.csv", index_col=0)
    assert len(table) == 12 and table["SCAUC"].notna().all()
    assert (out / "prowl_coverage.png").stat().st_size > 0 and (out / "prowl_curves.csv").exists()


@pytest.mark.slow
def test_real_matrices_invariants(helm_classic_matrix, pythia_mmlu_matrix):
    for df in (helm_classic_matrix, pythia_mmlu_matrix.iloc[::4]):
        res = run_prowl(df, similarity="pearson", n_random=100)
        assert np.isclose(res.coverage[-1], 1.0)
        assert 1 <= res.n_star <= df.shape[1]
        assert -1 <= res.scauc <= 1


# --------------------------------------------------------------------------- eq. 6 ties, brute-force greedy, 0/1 tables


def eq6_strict_mwr(B):
    """Eq. 6 as printed, loop by loop: strict wins over the other observed models, per dataset, averaged."""
    m, d = B.shape
    per_row = [[] for _ in range(m)]
    for c in range(d):
        obs = [r for r in range(m) if not np.isnan(B[r, c])]
        if len(obs) < 2:
            continue
        for r in obs:
            wins = sum(1 for o in obs if o != r and B[r, c] > B[o, c])
            per_row[r].append(wins / (len(obs) - 1))
    return np.array([np.mean(w) if w else np.nan for w in per_row])


def test_strict_ties_is_eq6_as_printed():
    rng = np.random.default_rng(21)
    X = np.round(rng.random((20, 7)), 1)
    X[X < 0.3] = 0.0  # chance-normalised data: many models tied at exactly 0
    X[rng.random(X.shape) < 0.1] = np.nan
    np.testing.assert_allclose(mean_win_rate(X, ties="strict"), eq6_strict_mwr(X), equal_nan=True)
    np.testing.assert_allclose(mean_win_rate(X), helm_mwr(X), equal_nan=True)
    # Without ties the two rules agree.
    Y = rng.random((15, 4))
    np.testing.assert_allclose(mean_win_rate(Y, ties="strict"), mean_win_rate(Y))
    with pytest.raises(MethodError, match="ties"):
        win_rates(X, ties="random")


def test_ties_threaded_through_prowl():
    X = np.round(low_rank(25, 6, seed=22), 1)
    base = random_baseline(X, n_runs=30, ties="strict")
    np.testing.assert_allclose(base.curves[4], coverage_curve(X, base.orders[4], ties="strict"), equal_nan=True)
    res = run_prowl(X, n_random=30, ties="strict")
    assert res.ties == "strict" and res.to_dict()["ties"] == "strict"
    np.testing.assert_allclose(res.coverage, coverage_curve(X, [int(o) for o in res.order], ties="strict"))
    with pytest.raises(MethodError, match="ties"):
        run_prowl(X, baseline=base)  # a strict baseline cannot score a half-ties run
    rep = prowl_table(pd.DataFrame(X), n_random=30, ties="strict")
    assert rep.baseline.ties == "strict"


def eq34_delta(C, subset):
    """Proxy coverage (eqs. 3-4) loop by loop, NaN similarity read as 0."""
    d = C.shape[0]
    if not subset:
        return 0.0
    lam = []
    for i in range(d):
        if i in subset:
            lam.append(1.0)
        else:
            lam.append(max(0.0 if np.isnan(C[i, j]) else C[i, j] for j in subset))
    return sum(lam) / d


@pytest.fixture(scope="module")
def tiny_real(helm_classic_matrix):
    """Tiny real matrices: HELM Classic, 30 models x 6 scenarios in three column windows."""
    return [helm_classic_matrix.iloc[:, s : s + 6].to_numpy(float) for s in (0, 4, 8)]


@pytest.mark.parametrize("sim", ["pearson", "spearman", "kendall_tau", "cosine", "manhattan", "euclidean",
                                 "minkowski", "wasserstein", "jensen_shannon"])
def test_greedy_against_brute_force_on_tiny_real_matrices(tiny_real, sim):
    from harness_ext.methods.similarity.measures import similarity_matrix

    for X in tiny_real:
        d = X.shape[1]
        raw = similarity_matrix(X, sim)
        sel = GreedyCoverage(similarity=sim).fit(X)
        chosen = []
        for step, c in enumerate(sel.order_):
            # Algorithm 1 line 3: the pick maximises the gain (eq. 5) over every unchosen dataset, by brute force.
            gains = {j: eq34_delta(raw, chosen + [j]) - eq34_delta(raw, chosen) for j in range(d) if j not in chosen}
            assert gains[int(c)] == pytest.approx(max(gains.values()), abs=1e-12), (sim, step)
            chosen.append(int(c))
            assert sel.coverage_[step] == pytest.approx(eq34_delta(raw, chosen), abs=1e-12)
        # Exhaustive search over all subsets of each size: greedy is optimal at k = 1 and k = d, never above the
        # optimum, and a beam as wide as the number of subsets is exact.
        for k in range(1, d + 1):
            best = max(eq34_delta(raw, list(s)) for s in itertools.combinations(range(d), k))
            got = eq34_delta(raw, [int(c) for c in sel.order_[:k]])
            assert got <= best + 1e-12
            if k in (1, d):
                assert got == pytest.approx(best, abs=1e-12)
            beam = BeamCoverage(similarity=sim, beam_width=20, n_select=k).fit(X)
            assert eq34_delta(raw, [int(c) for c in beam.order_]) == pytest.approx(best, abs=1e-12)


def test_binary_matrix_table_adds_jaccard_and_hamming(tmp_path, capsys):
    from harness_ext.methods.prowl import default_measures

    rng = np.random.default_rng(23)
    skill = rng.random(40)
    difficulty = rng.random(12)
    P = (skill[:, None] > difficulty[None, :] + 0.2 * rng.standard_normal((40, 12))).astype(float)
    assert set(default_measures(P)[-2:]) == {"hamming", "jaccard"} and len(default_measures(P)) == 11
    assert "jaccard" not in default_measures(low_rank())
    rep = prowl_table(pd.DataFrame(P, columns=[f"q{i}" for i in range(12)]), n_random=50)
    assert {"JACCARD", "HAMMING"} <= set(rep.table.index) and len(rep.table) == 14
    assert rep.table.loc[["JACCARD", "HAMMING"], "SCAUC"].notna().all()
    # CLI: a prompt-rows CSV (one row per prompt, one column per model) goes through --prompts.
    csv = tmp_path / "prompts.csv"
    pd.DataFrame(P.T, index=[f"q{i}" for i in range(12)], columns=[f"m{i}" for i in range(40)]).to_csv(csv)
    out = tmp_path / "prowl"
    assert main(["prowl", "--prompts", str(csv), "--n-random", "50", "--out", str(out),
                 "--json", str(tmp_path / "p.json")]) == 0
    captured = capsys.readouterr()
    text = captured.out
    assert "not used" not in captured.err
    assert "JACCARD" in text and "HAMMING" in text and "40 models x 12 datasets" in text
    assert len(pd.read_csv(out / "prowl_table.csv", index_col=0)) == 14
    doc = json.loads((tmp_path / "p.json").read_text())
    assert len(doc["tables"]["prowl"]) == 14 and (out / "prowl_coverage.png").stat().st_size > 0


# --------------------------------------------------------------------------- Table 3 / Table 6 figures on the real matrices

# Measured with seed 0, 1000 random runs, HELM half-ties: (SCAUC, |S*|, AUC>=random, Max2>=random).
# Reproduce with the CLI:
#   harness-ext prowl --benchmark helm_classic --dense models      (30 models x 14 scenarios)
#   harness-ext prowl --benchmark mmlu --rows run                  (838 Pythia/OPT/BLOOM runs x 57 subjects)
# A change here means the coverage numbers users see changed: check why before updating them.
MEASURED_TABLE3 = {
    "helm": {  # chance-corrected with the built-in table (BoolQ/IMDB/CivilComments 1/2, MMLU/HellaSwag/OpenbookQA 1/4)
        "RANDOM (n = 1000)": (0.9727, 2.816, None, None),
        "GREEDY MINIMUM": (0.9718, 3, 0.338, 0.333),
        "GREEDY MAXIMUM": (0.9605, 4, 0.186, 0.173),
        "PEARSON": (0.9884, 1, 0.978, 0.992),
        "SPEARMAN": (0.9682, 1, 0.269, 0.493),
        "KENDALL-TAU": (0.9679, 1, 0.261, 0.493),
        "COSINE": (0.9798, 1, 0.627, 0.703),
        "MANHATTAN": (0.9828, 1, 0.771, 0.798),
        "EUCLIDEAN": (0.9858, 1, 0.908, 0.987),
        "MINKOWSKI (P=3)": (0.9857, 1, 0.905, 0.987),
        "WASSERSTEIN": (0.9811, 2, 0.693, 0.734),
        "JENSEN-SHANNON": (0.9855, 1, 0.896, 0.974),
    },
    "mmlu": {
        "RANDOM (n = 1000)": (0.9129, 25.472, None, None),
        "GREEDY MINIMUM": (0.8445, 44, 0.009, 0.012),
        "GREEDY MAXIMUM": (0.8906, 31, 0.149, 0.137),
        "PEARSON": (0.9104, 36, 0.385, 0.418),
        "SPEARMAN": (0.8723, 41, 0.054, 0.072),
        "KENDALL-TAU": (0.8790, 40, 0.082, 0.091),
        "COSINE": (0.8725, 42, 0.054, 0.072),
        "MANHATTAN": (0.9166, 32, 0.492, 0.486),
        "EUCLIDEAN": (0.9260, 30, 0.700, 0.685),
        "MINKOWSKI (P=3)": (0.9299, 28, 0.775, 0.761),
        "WASSERSTEIN": (0.9164, 32, 0.486, 0.486),
        "JENSEN-SHANNON": (0.8926, 44, 0.164, 0.190),
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("which", ["helm", "mmlu"])
def test_table3_and_table6_figures_on_real_matrices(which, helm_classic_matrix, pythia_mmlu_matrix):
    df = {"helm": helm_classic_matrix, "mmlu": pythia_mmlu_matrix}[which]
    assert df.shape == {"helm": (30, 14), "mmlu": (838, 57)}[which]
    rep = prowl_table(df, n_random=1000, random_state=0)
    t = rep.table
    assert list(t.index) == list(MEASURED_TABLE3[which])
    for method, (area, size, auc, max2) in MEASURED_TABLE3[which].items():
        row = t.loc[method]
        assert row["SCAUC"] == pytest.approx(area, abs=1e-4), method
        assert row["|S*|"] == pytest.approx(size, abs=1e-3), method
        if auc is not None:
            assert row["AUC>=random"] == pytest.approx(auc, abs=1e-3), method
            assert row["Max2>=random"] == pytest.approx(max2, abs=1e-3), method
    # Every curve ends at eta(B) = 1 (SimBA footnote 9) and |S*| is where it first reaches 0.95.
    for res in rep.results.values():
        assert res.coverage[-1] == pytest.approx(1.0)
        assert res.n_star == n_star(res.coverage, 0.95)


def test_run_prowl_reuses_given_win_rates():
    X = low_rank(60, 9, seed=12)
    df = pd.DataFrame(X, columns=[f"d{j}" for j in range(9)])
    a = run_prowl(df, similarity="kendall_tau", n_random=20)
    b = run_prowl(df, similarity="kendall_tau", n_random=20, wr=win_rates(X))
    np.testing.assert_array_equal(a.coverage, b.coverage)
    assert a.order == b.order


@pytest.mark.parametrize("sim", ["pearson", "spearman", "kendall_tau", "cosine", "manhattan", "euclidean",
                                 "minkowski", "wasserstein", "jensen_shannon"])
def test_lazy_greedy_equals_full_evaluation_on_real_matrices(helm_classic_matrix, pythia_mmlu_matrix, monkeypatch, sim):
    import harness_ext.methods.prowl.coverage_search as sel

    for frame in (helm_classic_matrix, pythia_mmlu_matrix):
        C = coverage_matrix(frame.to_numpy(dtype=float), sim)
        priority = np.random.default_rng(3).permutation(C.shape[0])
        monkeypatch.setattr(sel, "_LAZY_MIN_D", 10**9)  # every candidate at every step
        full = greedy_coverage_order(C, priority=priority)
        monkeypatch.setattr(sel, "_LAZY_MIN_D", 0)
        lazy = greedy_coverage_order(C, priority=priority)
        np.testing.assert_array_equal(lazy[0], full[0])
        np.testing.assert_array_equal(lazy[1], full[1])


def test_lazy_greedy_breaks_ties_like_full_evaluation(monkeypatch):
    import harness_ext.methods.prowl.coverage_search as sel

    rng = np.random.default_rng(4)
    for trial in range(5):
        A = np.round(rng.random((150, 150)), 1)  # many exactly equal gains
        C = np.minimum(1.0, (A + A.T) / 2)
        np.fill_diagonal(C, 1.0)
        priority = rng.permutation(150)
        monkeypatch.setattr(sel, "_LAZY_MIN_D", 10**9)
        full = greedy_coverage_order(C, priority=priority, n_select=60)
        monkeypatch.setattr(sel, "_LAZY_MIN_D", 0)
        lazy = greedy_coverage_order(C, priority=priority, n_select=60)
        np.testing.assert_array_equal(lazy[0], full[0])


SIMILARITY_SELECTOR = '''
import numpy as np
from harness_ext import hookimpl, Selector
from harness_ext.base import BaseSelector

class ByMeasure(BaseSelector):
    def __init__(self, similarity="pearson", n_select=None):
        self.similarity, self.n_select = similarity, n_select
    def fit(self, X, features=None):
        self.order_ = np.arange(np.shape(X)[1])[::-1] if self.similarity == "cosine" else np.arange(np.shape(X)[1])
        return self

@hookimpl
def harness_ext_selectors():
    yield Selector(name="by-measure", cls=ByMeasure)
'''


def test_a_plugin_selector_taking_a_measure_gets_one_labelled_row_per_measure(site):
    from plugin_site import install

    install(site, "harness-ext-by-measure", "prowl_by_measure", SIMILARITY_SELECTOR)
    rep = prowl_table(pd.DataFrame(low_rank(30, 7, seed=11)), selector="by-measure", similarities=["pearson", "cosine"],
                      n_random=20)
    assert list(rep.table.index[-2:]) == ["BY_MEASURE (PEARSON)", "BY_MEASURE (COSINE)"]
    assert set(rep.results) >= {"BY_MEASURE (PEARSON)", "BY_MEASURE (COSINE)"}


# --------------------------------------------------------------------------- exit status and options without effect


@pytest.fixture
def signed_store(tmp_path):
    """A store of 20 models x 6 datasets with negative scores (Jensen-Shannon cannot run on them un-normalised)."""
    X = low_rank(20, 6, seed=5) - 0.3
    rows = ["model,dataset,value"] + [f"m{i},d{j},{X[i, j]:.4f}" for i in range(20) for j in range(6)]
    (tmp_path / "scores.csv").write_text("\n".join(rows) + "\n")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "-q", "--db", str(db), str(tmp_path / "scores.csv")]) == 0
    return db


def test_prowl_exits_1_naming_a_failed_method_after_printing_the_others(signed_store, tmp_path, capsys):
    out, js = tmp_path / "p", tmp_path / "p.json"
    rc = main(["prowl", "--db", str(signed_store), "--normalise", "none", "--similarity", "pearson,jensen_shannon",
               "--n-random", "50", "--out", str(out), "--json", str(js)])
    captured = capsys.readouterr()
    assert rc == 1
    assert "PEARSON" in captured.out and (out / "prowl_table.csv").exists() and (out / "prowl_coverage.png").exists()
    error = [line for line in captured.err.splitlines() if line.startswith("harness-ext prowl: error:")]
    assert len(error) == 1 and "1 of 4 methods failed" in error[0] and "JENSEN-SHANNON" in error[0]
    assert "non-negative" in error[0]
    doc = json.loads(js.read_text())
    assert len(doc["tables"]["prowl"]) == 5 and any("JENSEN-SHANNON" in w for w in doc["warnings"])
    # Every method ran: exit 0.
    assert main(["prowl", "--db", str(signed_store), "--normalise", "none", "--similarity", "pearson",
                 "--n-random", "50", "--out", str(out)]) == 0


def test_prowl_a_selector_without_similarity_gets_one_row_and_says_the_measures_went_unused(signed_store, tmp_path,
                                                                                            capsys):
    rep = prowl_table(pd.DataFrame(low_rank(20, 6)), similarities=["pearson", "cosine"], selector="greedy_maximum",
                      baselines=(), n_random=20)
    assert list(rep.table.index) == ["RANDOM (n = 20)", "GREEDY MAXIMUM"]
    assert rep.notes and "pearson, cosine not used" in rep.notes[0] and "greedy_maximum" in rep.notes[0]
    assert main(["prowl", "--db", str(signed_store), "--selector", "prediction_greedy", "--similarity", "cosine",
                 "--n-random", "20", "--out", str(tmp_path / "p")]) == 0
    err = capsys.readouterr().err
    assert "similarity cosine not used: selector 'prediction_greedy' takes no similarity measure" in err


def test_prowl_beam_width_with_another_selector_is_refused(signed_store, tmp_path, capsys):
    rc = main(["prowl", "--db", str(signed_store), "--selector", "greedy_maximum", "--beam-width", "3",
               "--out", str(tmp_path / "p")])
    assert rc == 1 and "--beam-width runs the selector beam_coverage" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["1.5", "0", "-3"])
def test_prowl_refuses_a_target_no_coverage_curve_can_mean(signed_store, tmp_path, capsys, target):
    rc = main(["prowl", "--db", str(signed_store), "--target", target, "--n-random", "10",
               "--out", str(tmp_path / "p")])
    assert rc == 1  # 1.5 was never reached (every |S*| empty), -3 reached by any single dataset; both exited 0
    assert "coverage target must be in (0, 1]" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_prowl_prompts_names_the_store_options_it_does_not_use(tmp_path, capsys):
    P = (np.random.default_rng(1).random((8, 12)) < 0.5).astype(int)  # 8 prompts x 12 models
    csv = tmp_path / "prompts.csv"
    pd.DataFrame(P, index=[f"q{i}" for i in range(8)], columns=[f"m{j}" for j in range(12)]).to_csv(csv)
    assert main(["prowl", "--prompts", str(csv), "--benchmark", "mmlu", "--normalise", "none", "--similarity",
                 "pearson", "--n-random", "10", "--out", str(tmp_path / "p")]) == 0
    assert "--benchmark, --normalise not used: --prompts reads a prompt-level matrix" in capsys.readouterr().err


def test_prowl_says_when_models_have_a_win_rate_on_one_dataset_only(tmp_path, capsys):
    """A union of real leaderboards: EQ-Bench (156 models; its 'random-baseline' row is the chance level, not a model)
    and six OpenCompass categories (35 models, 11 of them also on EQ-Bench). 145 models are on EQ-Bench alone, so their mean win rate is the same on every subset holding
    it and EQ-Bench alone reaches the coverage target: the output says so, with the count; a dense matrix says
    nothing."""
    from conftest import SHARED_DATA, require

    boards = require(SHARED_DATA / "benchbench" / "leaderboards")
    files = [boards / "eqbench_240912_emotion.csv"] + [
        boards / f"opencompass_{c}.csv" for c in ("agent_240829_agent", "instruct_240829_instructionfollow",
                                                    "knowledge_240829_knowledge", "language_240829_language",
                                                    "math_240829_math", "reasoning_240829_reasoning")]
    db = str(tmp_path / "oc.duckdb")
    assert main(["ingest", "--db", db, "--group", "oc", *map(str, files)]) == 0
    capsys.readouterr()
    common = ["prowl", "--db", db, "--benchmark", "oc", "--similarity", "spearman", "--n-random", "20"]
    assert main([*common, "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json")]) == 0
    note = ("145 of 180 models have a win rate on one dataset only (most of them on EQ-Bench): their mean win rate is "
            "the same on every subset holding it")
    assert note in capsys.readouterr().err
    assert any(note in w for w in json.loads((tmp_path / "a.json").read_text())["warnings"])
    assert main([*common, "--dense", "models", "--out", str(tmp_path / "b")]) == 0
    assert "one dataset only" not in capsys.readouterr().err


def test_the_table_keeps_the_whole_subset_and_only_the_printed_table_shortens_it(tmp_path):
    """S* was cut to its first three datasets and '... (+k)' in the table itself, so prowl_table.csv and --json held
    a name list a script could not use (HELM Classic's GREEDY MAXIMUM: 'IMDB, HellaSwag, NarrativeQA, ... (+1)')."""
    X = low_rank(m=25, d=10, seed=3, noise=0.3)
    rep = prowl_table(pd.DataFrame(X, columns=[f"d{i}" for i in range(10)]), n_random=30, target=0.999,
                      similarities=["pearson"])
    long = {m: r.subset for m, r in rep.results.items() if len(r.subset) > 3}
    assert long, "the test needs a subset of more than three datasets"
    for method, subset in long.items():
        assert rep.table.loc[method, "S*"] == ", ".join(subset)
        assert f"{', '.join(subset[:3])}, ... (+{len(subset) - 3})" in rep.render()
    records = json.loads(rep.to_json())["tables"]["prowl"]
    assert {r["method"]: r["S*"] for r in records if r["method"] in long} == {m: ", ".join(s) for m, s in long.items()}


def test_the_one_dataset_note_says_most_only_when_most_are_on_it():
    """Two models each on a dataset of their own were said to be 'most of them on' the first: now each is counted."""
    X = low_rank(m=20, d=5, seed=4)
    X[0, 1:] = np.nan  # on d0 only
    X[1, [0, 1, 3, 4]] = np.nan  # on d2 only
    rep = prowl_table(pd.DataFrame(X, columns=[f"d{i}" for i in range(5)]), n_random=10, similarities=["pearson"])
    assert "2 of 20 models have a win rate on one dataset only (1 on d0, 1 on d2): their" in rep.warnings[0]
    X[2, 1:] = np.nan  # two of three on d0
    rep = prowl_table(pd.DataFrame(X, columns=[f"d{i}" for i in range(5)]), n_random=10, similarities=["pearson"])
    assert "3 of 20 models have a win rate on one dataset only (most of them on d0)" in rep.warnings[0]
