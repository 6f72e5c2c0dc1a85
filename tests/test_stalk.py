"""stalk: closed-form R^2 of the six regressors, the classification rules, and the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness_ext.cli import main
from harness_ext.errors import MethodError
from harness_ext.methods.stalk import RELATIONSHIPS, classify_pairs, counts_table, regressor_r2, stalk


def _linregress_r2(x, y):
    return stats.linregress(x, y).rvalue ** 2


def test_closed_form_r2_matches_per_pair_regression():
    rng = np.random.default_rng(0)
    X = rng.random((40, 5)) ** 2
    X[rng.random(X.shape) < 0.1] = np.nan
    X[rng.random(X.shape) < 0.1] = 0.0  # zeros are dropped from the log fits
    r2, n = regressor_r2(X)
    for a in range(5):
        for b in range(5):
            if a == b:
                continue
            x, y = X[:, a], X[:, b]
            ok = ~np.isnan(x) & ~np.isnan(y)
            assert np.isclose(r2["linear"][a, b], _linregress_r2(x[ok], y[ok]))
            assert n["linear"][a, b] == ok.sum()
            e = ok & (y > 0)  # exponential b from a: log y ~ x
            assert np.isclose(r2["exponential"][a, b], _linregress_r2(x[e], np.log(y[e])))
            assert n["exponential"][a, b] == e.sum()
            pw = ok & (x > 0) & (y > 0)  # power law: log y ~ log x
            assert np.isclose(r2["power"][a, b], _linregress_r2(np.log(x[pw]), np.log(y[pw])))
            assert n["power"][a, b] == pw.sum()


def test_exact_relationships_are_recognised():
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 1.0, 30)
    X = np.column_stack([x, 2 * x + 1, np.exp(3 * x), x**2.5, rng.random(30)])
    res = classify_pairs(X, names=["x", "lin", "exp", "pow", "noise"])
    rel = res.classes
    assert rel.loc["x", "lin"] == "LINEAR"
    assert rel.loc["x", "exp"] == "EXPONENTIAL"
    assert rel.loc["x", "pow"] == "POWER-LAW"
    assert rel.loc["x", "noise"] == "NONE"
    row = res.pairs.set_index(["a", "b"]).loc[("x", "exp")]
    assert row.predictor == "x" and row.target == "exp" and np.isclose(row.best_r2, 1.0)
    # The exponential fit in the other direction (log x ~ exp(3x)) is not exact.
    assert row.r2_exponential_ba < 0.99


def test_linear_and_power_are_direction_free():
    rng = np.random.default_rng(2)
    X = rng.uniform(0.05, 1, (25, 4))
    res = classify_pairs(X)
    p = res.pairs
    assert np.allclose(p.r2_linear_ab, p.r2_linear_ba)
    assert np.allclose(p.r2_power_ab, p.r2_power_ba)


def test_threshold_tunable_and_counts_consistent():
    rng = np.random.default_rng(3)
    base = rng.random((30, 1))
    X = base + 0.3 * rng.standard_normal((30, 6))
    low = classify_pairs(np.abs(X), threshold=0.0)
    high = classify_pairs(np.abs(X), threshold=0.99)
    assert (low.counts["NONE"] == 0) and (high.counts["NONE"] == 15)
    for res in (low, high):
        assert res.counts[list(RELATIONSHIPS)].sum() == res.counts["Total"] == 15
    # Every NONE pair at threshold t has best R^2 < t; every other has >= t.
    mid = classify_pairs(np.abs(X), threshold=0.3)
    none = mid.pairs.relationship == "NONE"
    assert (mid.pairs.best_r2[none] < 0.3).all() and (mid.pairs.best_r2[~none] >= 0.3).all()


def test_too_few_positive_points_cannot_win():
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    y = np.array([0.0, 0.0, 0.0, 0.4, 0.5])  # only two positive values: no exponential or power fit
    r2, n = regressor_r2(np.column_stack([x, y]), min_points=3)
    assert n["exponential"][0, 1] == 2 and np.isnan(r2["exponential"][0, 1])
    assert np.isnan(r2["power"][0, 1])
    assert np.isfinite(r2["linear"][0, 1])


def test_log_fit_on_a_minority_of_the_models_cannot_win():
    # Near-chance data: most normalised scores are exactly 0, so the log fits keep only a few models.
    rng = np.random.default_rng(6)
    x = np.zeros(40)
    y = np.zeros(40)
    x[:4] = [0.1, 0.2, 0.4, 0.8]
    y[:4] = x[:4] ** 2  # an exact power law on the 4 models positive on both
    x[4:20] = rng.random(16) * 0.05  # positive on x only: the linear fit sees noise
    X = np.column_stack([x, y])
    r2, n = regressor_r2(X)
    assert n["power"][0, 1] == 4 and n["linear"][0, 1] == 40
    assert np.isnan(r2["power"][0, 1]) and np.isfinite(r2["linear"][0, 1])
    strict = classify_pairs(X).pairs.iloc[0]
    assert strict.relationship != "POWER-LAW" and strict.best_r2 < 1.0
    # min_fraction=0 restores "any fit with min_points observations": the 4-point power law wins.
    loose = classify_pairs(X, min_fraction=0.0).pairs.iloc[0]
    assert loose.relationship == "POWER-LAW" and np.isclose(loose.best_r2, 1.0)
    # At exactly the fraction the fit counts: 20 of 40 models positive on both.
    X2 = np.column_stack([np.r_[np.linspace(0.1, 1, 20), np.zeros(20)], np.r_[np.linspace(0.1, 1, 20) ** 3, np.zeros(20)]])
    assert np.isclose(regressor_r2(X2)[0]["power"][0, 1], 1.0)
    with pytest.raises(MethodError, match="min_fraction"):
        regressor_r2(X, min_fraction=1.5)


def test_constant_column_is_none():
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.random(20), np.full(20, 0.5)])
    res = classify_pairs(X)
    assert res.pairs.relationship.iloc[0] == "NONE" and np.isnan(res.pairs.best_r2.iloc[0])


def test_models_axis_is_the_transpose():
    rng = np.random.default_rng(5)
    df = pd.DataFrame(rng.random((6, 9)), index=[f"m{i}" for i in range(6)], columns=[f"d{j}" for j in range(9)])
    out = stalk(df)
    assert out["datasets"].counts["Total"] == 36 and out["models"].counts["Total"] == 15
    direct = classify_pairs(df.to_numpy().T, list(df.index), axis="models")
    pd.testing.assert_frame_equal(out["models"].pairs, direct.pairs)
    table = counts_table(out)
    assert list(table.columns) == ["datasets", "models"]
    assert list(table.index) == [*RELATIONSHIPS, "Total"]


def test_stalk_returns_a_result_that_renders_plots_and_serialises(tmp_path):
    """Issue 18: stalk() returns a typed Result (still a mapping axis -> StalkResult)."""
    import json

    from harness_ext.report import Result

    rng = np.random.default_rng(2)
    df = pd.DataFrame(rng.random((7, 5)), index=[f"m{i}" for i in range(7)], columns=[f"d{j}" for j in range(5)])
    rep = stalk(df, benchmark="toy", show_progress=False)
    assert isinstance(rep, Result) and set(rep) == {"datasets", "models"} and len(rep) == 2
    assert list(rep.to_frame().columns) == ["datasets", "models"]
    assert "7 models x 5 datasets (toy)" in rep.render() and "Total" in rep.render()
    doc = json.loads(rep.to_json())
    assert doc["summary"]["threshold"] == 0.5 and len(doc["tables"]["dataset_pairs"]) == 10
    assert len(doc["tables"]["model_pairs"]) == 21
    assert rep.plot(tmp_path / "h.png").stat().st_size > 1000
    for bad in ({"threshold": float("nan")}, {"threshold": 2.0}, {"min_points": -5}):
        with pytest.raises(MethodError):
            stalk(df, **bad)


def _tsml_store(tmp_path):
    """A store of the TSC-style result files test_compare writes (14 datasets)."""
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths
    from test_compare import _write_tsml

    data = tmp_path / "results"
    data.mkdir()
    _write_tsml(data)
    db = tmp_path / "t.duckdb"
    with Store.open(db) as store:
        ingest_paths(store, [data], show_progress=False)
    return db


@pytest.mark.slow
def test_cli_stalk_json(tmp_path, capsys):
    db = _tsml_store(tmp_path)
    out = tmp_path / "o"
    assert main(["stalk", "--db", str(db), "--metric", "accuracy", "--out", str(out), "--json", "-"]) == 0
    cap = capsys.readouterr()
    import json

    doc = json.loads(cap.out)
    assert doc["summary"]["datasets"] == 14 and "Total" in cap.err
    assert (out / "stalk_counts.csv").exists() and (out / "stalk_heatmap.png").exists()


@pytest.mark.slow
def test_cli_on_helm_classic(real_store, tmp_path, capsys):
    out = tmp_path / "stalk"
    assert main(["stalk", "--db", str(real_store), "--benchmark", "helm_classic", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "LINEAR" in text and "POWER-LAW" in text and "Total" in text
    pairs = pd.read_csv(out / "stalk_dataset_pairs.csv")
    assert len(pairs) == 14 * 13 // 2
    assert (out / "stalk_model_pairs.csv").exists() and (out / "stalk_heatmap.png").stat().st_size > 0
    counts = pd.read_csv(out / "stalk_counts.csv", index_col=0)
    assert counts.loc["Total", "datasets"] == 91


@pytest.mark.slow
def test_pythia_mmlu_pairs_use_most_models(pythia_mmlu_matrix):
    # 52% of the normalised Pythia MMLU cells are exactly 0; no relationship may rest on a minority of the runs.
    datasets = stalk(pythia_mmlu_matrix, axes=("datasets",))["datasets"].pairs.set_index(["a", "b"])
    row = datasets.loc[("abstract_algebra", "high_school_mathematics")]
    assert row.n_power < 10 and np.isnan(row.r2_power_ab) and row.relationship == "NONE"
    # Model pairs (every 4th run, ~22k pairs): each winning fit used at least half of the pair's subjects.
    models = stalk(pythia_mmlu_matrix.iloc[::4], axes=("models",))["models"].pairs
    won = models[models.relationship != "NONE"]
    assert len(won) > 1000 and set(won.relationship) >= {"LINEAR", "EXPONENTIAL"}
    forward = won.predictor == won.a
    used = np.select([won.relationship == "LINEAR", won.relationship == "POWER-LAW", forward],
                     [won.n_linear, won.n_power, won.n_exponential_ab], won.n_exponential_ba)
    assert (used >= 0.5 * won.n_linear).all()
    loose = stalk(pythia_mmlu_matrix.iloc[::4], axes=("models",), min_fraction=0.0)["models"].pairs
    assert (loose.relationship == "POWER-LAW").sum() > (models.relationship == "POWER-LAW").sum()


@pytest.mark.slow
def test_tables_1_2_counts_on_helm_classic(helm_classic_matrix):
    # Measured on the dense 30 x 14 block (harness-ext stalk --benchmark helm_classic --dense models).
    # SimBA Tables 1-2 (29 models x 16 scenarios): datasets 6/25/44/45 of 120, models 20/72/294/20 of 406.
    # Chance-corrected with the built-in table (BoolQ/IMDB/CivilComments 1/2, MMLU/HellaSwag/OpenbookQA 1/4);
    # without it (chance 0 everywhere) the counts were datasets [8, 27, 3, 53, 91], models [149, 78, 208, 0, 435].
    table = counts_table(stalk(helm_classic_matrix))
    assert table["datasets"].tolist() == [14, 23, 5, 49, 91]
    assert table["models"].tolist() == [223, 31, 172, 9, 435]


@pytest.mark.slow
def test_cli_big_pair_table_is_gzipped_at_the_fastest_level(tmp_path, capsys):
    """Every Eval Ever's Open LLM v2 (4,494 models) gives 10M model pairs: gzip's default level 9 took minutes
    to write them, twice the fastest level's time for a file 15% smaller. Here 500 of its models (124,750 pairs)."""
    from conftest import SHARED_DATA, require

    orgs = sorted(require(SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2").iterdir())
    files = sorted(f for org in orgs for f in org.rglob("*.json"))[:560]
    db, out = tmp_path / "s.duckdb", tmp_path / "o"
    assert main(["ingest", "--db", str(db), *map(str, files)]) == 0
    assert main(["stalk", "--db", str(db), "--axis", "models", "--out", str(out)]) == 0
    capsys.readouterr()
    gz = out / "stalk_model_pairs.csv.gz"
    assert gz.read_bytes()[8] == 4  # gzip header XFL: 4 = fastest compression, 2 = maximum
    pairs = pd.read_csv(gz)
    n = int((1 + (1 + 8 * len(pairs)) ** 0.5) / 2)
    assert len(pairs) == n * (n - 1) // 2 > 100_000


def test_pair_names_are_categorical_codes_and_an_empty_name_still_works():
    """Open LLM v2's 10M model pairs as numpy string arrays were 4 GB per name column (stalk peaked above 20 GB);
    as categoricals they are codes, and every value, the CSV and the classes are the same."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.random((5, 40)), columns=[f"model-{i}" for i in range(40)]).T
    pairs = stalk(df, axes=("models",))["models"].pairs
    assert all(pairs[c].dtype == "category" for c in ("a", "b", "predictor", "target", "relationship"))
    none = pairs.relationship == "NONE"
    assert (pairs.predictor[none] == "").all() and (pairs.predictor[~none] != "").all()
    assert ((pairs.predictor == pairs.a) | (pairs.predictor == pairs.b))[~none].all()
    renamed = df.rename(index={"model-0": ""})  # "" also marks "no predictor": plain strings then
    other = stalk(renamed, axes=("models",))["models"]
    assert other.pairs["a"].dtype != "category" and other.pairs.relationship.tolist() == pairs.relationship.tolist()
    assert other.classes.iloc[1:, 1:].equals(stalk(df, axes=("models",))["models"].classes.iloc[1:, 1:])


def test_cli_default_leaves_out_model_pairs_past_the_cap(tmp_path, capsys, monkeypatch, caplog):
    """Open LLM v2's 4,494 models gave 10M model pairs by default (minutes, a gigabyte-scale table): past
    DEFAULT_MAX_MODEL_PAIRS_MODELS the default classifies dataset pairs only and says so; --axis both still does both."""
    import harness_ext.methods.stalk as S

    db = _tsml_store(tmp_path)
    monkeypatch.setattr(S, "DEFAULT_MAX_MODEL_PAIRS_MODELS", 3)
    out = tmp_path / "o"
    with caplog.at_level("WARNING"):
        assert main(["stalk", "--db", str(db), "--metric", "accuracy", "--out", str(out)]) == 0
    assert (out / "stalk_dataset_pairs.csv").exists()
    assert not list(out.glob("stalk_model_pairs*"))
    assert "model pairs are not classified by default" in caplog.text + capsys.readouterr().err
    out2 = tmp_path / "o2"
    assert main(["stalk", "--db", str(db), "--metric", "accuracy", "--axis", "both", "--out", str(out2)]) == 0
    assert list(out2.glob("stalk_model_pairs*"))
    assert S.default_axes(3) == (("datasets", "models"), None)


def test_a_matrix_from_load_matrix_names_its_benchmark(tmp_path):
    """Was: stalk(hx.load_matrix(store, benchmark="helm_classic")) printed "(all benchmarks)"."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.random((6, 4)), index=[f"m{i}" for i in range(6)], columns=list("abcd"))
    df.attrs["query"] = {"benchmarks": ["helm_classic"]}
    assert "(helm_classic)" in stalk(df, show_progress=False).render()
    assert "(toy)" in stalk(df, benchmark="toy", show_progress=False).render()
    assert "(all benchmarks)" in stalk(pd.DataFrame(df.to_numpy(), index=df.index, columns=df.columns),
                                       show_progress=False).render()
