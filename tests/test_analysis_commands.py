"""What a user of the analysis commands sees: nothing dropped without a word."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.cli import main


@pytest.fixture(scope="module")
def gappy_store(tmp_path_factory):
    """16 models x 6 datasets; model m0 lacks d0 and dataset d5 lacks 9 models (--dense cuts both ways)."""
    root = tmp_path_factory.mktemp("gappy")
    rng = np.random.default_rng(7)
    X = np.clip(rng.random((16, 2)) @ rng.random((2, 6)) / 2 + 0.05 * rng.standard_normal((16, 6)), 0.01, 0.99)
    rows = ["model,dataset,value"] + [f"m{i},d{j},{X[i, j]:.4f}" for i in range(16) for j in range(6)
                                      if not (i == 0 and j == 0) and not (j == 5 and i < 9)]
    (root / "scores.csv").write_text("\n".join(rows) + "\n")
    db = root / "s.duckdb"
    assert main(["ingest", "-q", "--db", str(db), str(root / "scores.csv")]) == 0
    return db


@pytest.mark.parametrize("command, extra", [
    ("matrix", ["-o", "m.csv"]),
    ("stalk", ["--axis", "datasets"]),
    ("prowl", ["--n-random", "20", "--similarity", "pearson"]),
    ("weights", ["--draws", "200", "--permutations", "20"]),
    ("compare", ["--trials", "3", "--n-jobs", "1", "--k-max", "3", "--selectors", "random-subset"]),
])
@pytest.mark.slow
def test_dense_says_what_it_dropped_in_every_analysis(gappy_store, tmp_path, capsys, command, extra):
    extra = [str(tmp_path / e) if e.endswith(".csv") else e for e in extra]
    out = [] if command == "matrix" else ["--out", str(tmp_path / command)]
    rc = main([command, "--db", str(gappy_store), "--dense", *out, *extra])
    assert rc == 0
    err = capsys.readouterr().err
    assert "--dense dropped" in err and "observed cells to reach a complete block" in err, err


def test_compare_with_the_random_selector_alone_prints_its_tables(gappy_store, tmp_path, capsys):
    rc = main(["compare", "--db", str(gappy_store), "--dense", "--out", str(tmp_path / "c"), "--trials", "3",
               "--n-jobs", "1", "--k-max", "3", "--selectors", "random-subset"])
    assert rc == 0  # it crashed on the table of gains over random, which has no other row
    out = capsys.readouterr().out
    assert "Table 1." in out and "Table 3." in out and "Relative AUC gain" not in out


def test_pounce_says_when_it_shows_only_some_subset_sizes(tmp_path, capsys):
    rng = np.random.default_rng(2)
    X = np.clip(rng.random((30, 2)) @ rng.random((2, 16)) / 2 + 0.03 * rng.standard_normal((30, 16)), 0.01, 0.99)
    rows = ["model," + ",".join(f"task{j}" for j in range(16))]
    rows += [f"m{i}," + ",".join(f"{v:.5f}" for v in X[i]) for i in range(30)]
    (tmp_path / "wide.csv").write_text("\n".join(rows) + "\n")
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", str(tmp_path / "wide.csv"), "--db", db, "-q"]) == 0
    out = tmp_path / "out"
    assert main(["pounce", "--db", db, "--analysis", "regression", "--predictors", "ridge", "--folds", "0",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "12 of 15 sizes shown, all in the mse_curves table and mse_curves.csv" in text
    import pandas as pd

    assert len(pd.read_csv(out / "mse_curves.csv", header=[0, 1], index_col=0).dropna(how="all")) == 15


def test_weights_names_the_options_a_prompt_level_run_does_not_use(tmp_path, capsys):
    rng = np.random.default_rng(4)
    P = (rng.random((12, 20)) < rng.random(20)[None, :]).astype(int)  # 12 prompts x 20 models
    rows = ["prompt," + ",".join(f"m{j}" for j in range(20))] + [f"q{i}," + ",".join(map(str, P[i])) for i in range(12)]
    (tmp_path / "q.csv").write_text("\n".join(rows) + "\n")
    rc = main(["weights", "--prompts", str(tmp_path / "q.csv"), "--benchmark", "helm", "--dense", "--analyses", "size",
               "--scheme", "distance", "--out", str(tmp_path / "w")])
    err = capsys.readouterr().err
    assert rc == 0
    assert "--benchmark, --dense not used: --prompts reads a prompt-level matrix" in err
    assert "--scheme not used: --scheme is the scheme --emit-weights writes" in err
    assert main(["weights", "--prompts", str(tmp_path / "q.csv"), "--analyses", "schemes", "--scheme", "distance",
                 "--out", str(tmp_path / "w")]) == 0
    assert "not used" not in capsys.readouterr().err


def test_info_conflicts_shows_the_digits_where_values_differ(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "s.csv").write_text("model,dataset,value\nm1,d1,0.937722\nm2,d1,0.5\n")
    (tmp_path / "b" / "s.csv").write_text("model,dataset,value\nm1,d1,0.937556\nm2,d1,0.5\n")
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    capsys.readouterr()
    assert main(["info", "--db", db, "--conflicts"]) == 0
    out = capsys.readouterr().out
    assert "0.937722" in out and "0.937556" in out  # both printed as 0.938 before


def test_info_cuts_a_long_list_of_metrics_and_json_lists_them_all(tmp_path, capsys):
    """lm-eval's v0.3 results in the repository's results folder (shared data) hold 19 metric names under one
    benchmark: info printed them on one line of about 200 characters."""
    import json

    from conftest import SHARED_DATA, require
    from harness_ext.cli.info import short_list

    data = require(SHARED_DATA / "lm-eval-harness" / "v03_results_master_2023-07-31")
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(data)]) == 0
    capsys.readouterr()
    assert main(["info", "--db", db, "--json", str(tmp_path / "info.json")]) == 0
    out = capsys.readouterr().out
    every = {r["benchmark"]: r["metrics"] for r in json.loads((tmp_path / "info.json").read_text())["tables"]["benchmarks"]}
    names = every["lm_eval"]  # a JSON list, not a joined string: metric names hold commas
    assert isinstance(names, list) and len(", ".join(names)) > 150 and len(names) > 10 and "pct_stereotype" in names
    [row] = [line for line in out.splitlines() if line.strip().startswith("lm_eval")]
    shown = row[row.index(names[0]):row.index(" more: --json lists them)")]
    kept = shown[:shown.rindex(" (")].split(", ")
    assert kept == names[:len(kept)] and len(", ".join(kept)) <= 100
    assert f"({len(names) - len(kept)} more: --json lists them)" in row
    assert "acc, acc_norm" in out  # mmlu's short list printed whole
    assert short_list(["a", "b"]) == "a, b" and short_list(None) == ""
    assert short_list(["x" * 120, "y"]) == "x" * 120 + " (1 more: --json lists them)"


@pytest.fixture(scope="module")
def benchbench_store(tmp_path_factory):
    """Three of benchbench's real leaderboards (shared data), few of whose models are on more than one."""
    from conftest import SHARED_DATA, require

    boards = require(SHARED_DATA / "benchbench" / "leaderboards")
    db = tmp_path_factory.mktemp("bb") / "s.duckdb"
    files = [boards / f for f in ("opencompass_240829_holistic.csv", "agenbench_240829_agent.csv",
                                  "mtbench_240829_holistic.csv")]
    assert main(["ingest", "-q", "--db", str(db), *map(str, files)]) == 0
    return db


def test_weights_on_a_sparse_slice_says_what_it_has_and_needs(benchbench_store, tmp_path, capsys):
    """Real sparse slices of benchbench's leaderboards. Gemma-2's two models are on OpenCompass but not AgentBench:
    2 models x 1 column, and weights said 'need at least 2 models and 2 columns, got (2, 1)'. MT-Bench and OpenCompass
    (as these files name their models) have no model in common: the completion filled each model's other column with
    numbers nothing observed relates to its score, without a word. Each is said on one line with its counts."""
    capsys.readouterr()
    rc = main(["weights", "--db", str(benchbench_store), "--benchmark",
               "opencompass_240829_holistic,agenbench_240829_agent", "--models", "*Gemma*", "--out", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert rc != 0
    [line] = [x for x in err.splitlines() if "error" in x]
    assert "has 2 models x 1 column with results (2 observed cells): weights needs at least 2 models and 2 columns" \
        in line and "got (2, 1)" not in line
    assert main(["weights", "--db", str(benchbench_store), "--benchmark",
                 "mtbench_240829_holistic,opencompass_240829_holistic", "--analyses", "random",
                 "--draws", "50", "--out", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    [line] = [x for x in out.splitlines() if x.startswith("missing cells not predicted")]
    assert line.startswith("missing cells not predicted: the matrix has 66 models x 2 columns, 66 of 132 cells "
                           "observed, and its columns fall into 2 groups that no model links"), line
    assert "predicted by lowrank" not in out


def test_completion_without_a_column_two_models_ran_says_the_counts():
    import pandas as pd

    from harness_ext.errors import MethodError
    from harness_ext.methods.weighting import complete_matrix
    from harness_ext.methods.weighting.complete import linked_column_groups

    seen = np.array([[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]], dtype=bool)
    assert linked_column_groups(seen).tolist() == [0, 0, 1, 1]
    with pytest.raises(MethodError, match=r"^the matrix has 4 models x 4 columns, 6 of 16 cells observed, and its "
                                          r"columns fall into 2 groups that no model links \(of 2, 2 columns;"):
        complete_matrix(pd.DataFrame(np.where(seen, 0.5, np.nan)))
    seen[1, 2] = True  # one model that ran columns of both links them
    assert linked_column_groups(seen).tolist() == [0, 0, 0, 0]
    assert complete_matrix(pd.DataFrame(np.where(seen, 0.5, np.nan))).n_predicted == 9
    with pytest.raises(MethodError, match=r"^the matrix has 3 models x 4 columns, 5 of 12 cells observed: at least 4 "
                                          r"models are needed to predict its 7 missing cells$"):
        complete_matrix(pd.DataFrame(np.where(seen, 0.5, np.nan)).iloc[:3])

    X = np.full((5, 3), np.nan)
    X[0, 0], X[1, 1], X[2, 2], X[3, 0] = 0.5, 0.6, 0.7, np.nan
    with pytest.raises(MethodError, match=r"^the matrix has 5 models x 3 columns, 3 of 15 cells observed, and no "
                                          r"column has results from two models: at least one is needed to predict its "
                                          r"12 missing cells$"):
        complete_matrix(pd.DataFrame(X))


@pytest.mark.slow
def test_weights_completion_says_when_most_cells_are_predicted():
    import pandas as pd

    from harness_ext.methods.weighting import complete_matrix

    rng = np.random.default_rng(9)
    X = np.clip(rng.random((30, 2)) @ rng.random((2, 8)) / 2, 0.01, 0.99)
    sparse = X.copy()
    sparse[rng.random(X.shape) < 0.6] = np.nan
    sparse[:3] = X[:3]  # every column keeps a few models
    done = complete_matrix(pd.DataFrame(sparse), random_state=0)
    assert any("of the cells are predicted, not observed" in n for n in done.notes)
    few = X.copy()
    few[0, 0] = np.nan
    assert not any("predicted, not observed" in n for n in complete_matrix(pd.DataFrame(few)).notes)


@pytest.mark.parametrize("option", ["--top", "--permutations", "--silhouette-permutations", "--draws",
                                    "--pairwise-top", "--chunk-size"])
def test_weights_refuses_a_count_below_one_before_any_work(gappy_store, tmp_path, capsys, option):
    # --top 0 was an unexpected ValueError after some files were written; --permutations 0 printed p = 1 and a
    # permuted mean of 0.0 from no permutations at all.
    with pytest.raises(SystemExit) as exit_:
        main(["weights", "--db", str(gappy_store), option, "0", "--out", str(tmp_path / "w")])
    assert exit_.value.code == 2
    assert f"argument {option}: must be 1 or more, got 0" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("command, option, value, says", [
    ("pounce", "--repeats", "0", "argument --repeats: must be 1 or more"),  # an unexpected KeyError
    ("pounce", "--folds", "-1", "argument --folds: must be 0 or more"),  # skipped the k-fold check as 0 does
    ("reduce", "--n-random-subsets", "0", "argument --n-random-subsets: must be 1 or more"),  # a ValueError
])
def test_counts_out_of_range_are_usage_errors(gappy_store, tmp_path, capsys, command, option, value, says):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--db", str(gappy_store), option, value, "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2 and says in capsys.readouterr().err


def test_pounce_refuses_an_interval_level_outside_0_1(gappy_store, tmp_path, capsys):
    rc = main(["pounce", "--db", str(gappy_store), "--analysis", "completion", "--level", "2",
               "--out", str(tmp_path / "o")])
    assert rc == 1  # it printed the share of hidden cells inside a "200% predictive interval"
    assert "the interval level must be in (0, 1)" in capsys.readouterr().err and not (tmp_path / "o").exists()


@pytest.mark.slow
def test_predict_writes_no_lm_eval_results_file_beside_a_file_of_another_harness(gappy_store, tmp_path, capsys):
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(gappy_store), "--budget", "2", "--n-random", "20", "--n-random-subsets", "10",
                 "--no-plot", "--out", str(out)]) == 0
    new = tmp_path / "new"
    new.mkdir()
    (new / "scores.csv").write_text("model,dataset,value\n" + "".join(f"fresh,d{j},0.4\n" for j in range(6)))
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(new / "scores.csv")]) == 0
    # The lm-eval-layout file went into the CSV's folder (and into a read-only shared data folder for an Every Eval
    # Ever record); --eee is the way to Every Eval Ever records.
    assert sorted(p.name for p in new.iterdir()) == ["scores.csv"]
    assert "harness_ext_prediction" not in capsys.readouterr().out


def test_compare_features_says_what_it_does_not_use(gappy_store, tmp_path, capsys):
    feats = tmp_path / "feats.csv"
    feats.write_text("dataset,f1,f2,kind\n" + "".join(f"d{j},{j},{j * j % 5},x\n" for j in range(6)) + "extra,1,2,y\n")
    rc = main(["compare", "--db", str(gappy_store), "--dense", "--features", str(feats), "--representation", "ranks",
               "--trials", "3", "--n-jobs", "1", "--k-max", "3", "--selectors", "random-subset,kmeans",
               "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert rc == 0
    assert "1 non-numeric column(s) not used: kind" in err
    assert "2 row(s) of datasets not in the matrix not used: d5, extra" in err  # d5 is cut by --dense
    assert "--representation ranks not used: with --features the selectors see the features" in err


def test_weights_tests_say_when_a_p_value_is_at_the_floor_of_its_permutations():
    from harness_ext.methods.weighting import permutation_test, silhouette_test

    rng = np.random.default_rng(5)
    X = np.repeat(rng.random((20, 1)), 8, axis=1) + 0.01 * rng.random((20, 8))  # columns all alike: far from chance
    sil = silhouette_test(X, n_permutations=3, show_progress=False)
    assert sil.pvalue == pytest.approx(0.25)  # 1/(3 + 1): it printed 0.250 as if the data were close to chance
    assert "p = 1/(3 + 1) is the smallest p-value 3 permutations can give" in sil.render()
    perm = permutation_test(X, ["cosine"], n_permutations=9, show_progress=False)
    p = perm.pvalues.copy()
    p.loc["average", "cosine"], p.loc["KS test", "cosine"] = 0.1, 0.0  # the floor, and a KS p past the floats
    text = type(perm)(p, perm.observed, perm.permuted_mean, perm.ks_statistic, 9).render()
    assert "0.1 = 1/(9 + 1) is the smallest p-value 9 permutations can give" in text
    assert "a KS p-value of 0 is below the smallest number a float holds" in text
    assert "smallest p-value" not in perm.render()


def test_pounce_names_the_options_of_analyses_it_does_not_run(gappy_store, tmp_path, capsys):
    rc = main(["pounce", "--db", str(gappy_store), "--dense", "--analysis", "completion", "--hidden-ratios", "0.5",
               "--completion-predictors", "global_mean,mean_of_means", "--order", "d1,d2", "--selector", "random",
               "--active-steps", "2", "--out", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert rc == 0
    assert "--selector, --order not used: options of the analysis regression, which --analysis completion" in err
    assert "--active-steps not used: options of the analysis active" in err
    assert "--hidden-ratios" not in err


def test_weights_rank_change_table_says_its_sign_and_its_ties():
    import pandas as pd

    from harness_ext.methods.weighting import compare_schemes

    rng = np.random.default_rng(6)
    X = rng.random((10, 8))
    X[1] = X[0]  # two models alike: tied under every scheme
    text = compare_schemes(pd.DataFrame(X, index=[f"m{i}" for i in range(10)]), ["uniform", "distance"]).render()
    assert "Δrank = rank under uniform weights - rank under the scheme (positive: ranked higher)" in text
    assert "models tied under distance 2 of 10" in text


def test_weights_tie_caption_counts_the_groups_of_tied_models():
    """Medoids on 3 prompts put HELM Lite GSM8K's 83 models in 3 groups (58, 17, 8): the caption said 'medoids 83 of
    83', read as every model tied; it now gives the groups."""
    import pandas as pd

    from harness_ext.methods.weighting import compare_schemes

    rng = np.random.default_rng(6)
    X = rng.random((10, 8))
    X[1] = X[0]
    X[3] = X[2]
    X[4] = X[2]
    text = compare_schemes(pd.DataFrame(X, index=[f"m{i}" for i in range(10)]), ["uniform", "distance"]).render()
    assert "models tied under distance 5 of 10 in 2 groups, the largest of 3" in text
