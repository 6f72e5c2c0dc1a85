"""One command-line convention (issue 16, items 6 and 7): each stumble the issue lists has a check here."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness_ext.cli import build_parser, main
from harness_ext.cli.options import COMMANDS, default_out


def parse(*argv):
    return build_parser().parse_args(list(argv))


def test_one_seed_flag_with_the_old_spellings():
    """Issue 16: --seed vs --random-state."""
    for cmd in ("prowl", "weights"):
        assert parse(cmd, "--seed", "3").random_state == parse(cmd, "--random-state", "3").random_state == 3
    for cmd in ("reduce", "compare", "pounce"):
        assert parse(cmd, "--seed", "4").seed == parse(cmd, "--random-state", "4").seed == parse(cmd, "--random_state", "4").seed == 4


def test_lists_are_repeatable_or_comma_separated_alike():
    """Issue 16: lists given three ways."""
    assert parse("reduce", "--benchmark", "a,b", "--benchmark", "c").benchmark == ["a", "b", "c"]
    assert parse("prowl", "--similarity", "pearson,kendall", "--similarity", "spearman").similarity == \
        ["pearson", "kendall", "spearman"]
    assert parse("compare", "--selectors", "kmeans,random-subset", "a-optimal").selectors == \
        ["kmeans", "random-subset", "a-optimal"]
    assert parse("pounce", "--analysis", "regression", "--analysis", "completion").analysis == "regression,completion"
    assert parse("pounce").analysis == "regression,completion"  # default untouched
    assert parse("reduce", "--format", "json,lm_eval_yaml").formats == ["json", "lm_eval_yaml"]


def test_out_everywhere_and_default_per_benchmark():
    """Issue 16: --out/--output/-o; plots of different benchmarks overwrote each other under harness-ext-out/<command>/."""
    for cmd in ("stalk", "prowl", "compare", "pounce", "weights", "reduce"):
        assert parse(cmd, "--out", "x").out == parse(cmd, "--output", "x").out == parse(cmd, "-o", "x").out == "x"
    assert parse("matrix", "--out", "m.csv").output == parse("matrix", "-o", "m.csv").output == "m.csv"
    a = parse("prowl", "--benchmark", "helm_classic")
    b = parse("prowl", "--benchmark", "mmlu")
    assert default_out(a, "prowl") == "harness-ext-out/helm_classic/prowl" != default_out(b, "prowl")


def test_underscore_aliases_and_common_options_on_every_command():
    assert parse("reduce", "--num_fewshot", "5").num_fewshot == 5
    assert parse("reduce", "--n_random", "7").n_random == 7
    assert parse("compare", "--k_max", "6").k_max == 6
    for name in COMMANDS:
        p = build_parser()._subparsers._group_actions[0].choices[name]
        opts = {o for a in p._actions for o in a.option_strings}
        assert {"--json", "-v", "-q"} <= opts, name
        assert "§" not in p.format_help(), name  # no paper section numbers in user-facing text


def test_compare_uses_all_cores_by_default():
    assert parse("compare").n_jobs == -1


def test_json_on_info_and_plugins(tmp_path, capsys):
    assert main(["plugins", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"kind", "name", "source"} <= set(doc["plugins"][0])
    db = tmp_path / "s.duckdb"
    from test_reduced_folder import _write_population

    _write_population(tmp_path / "pop")
    assert main(["ingest", "--db", str(db), str(tmp_path / "pop"), "--json", str(tmp_path / "ingest.json")]) == 0
    assert json.loads((tmp_path / "ingest.json").read_text())["n_results"] > 0
    capsys.readouterr()
    assert main(["info", "--db", str(db), "--json", "-"]) == 0
    cap = capsys.readouterr()
    info = json.loads(cap.out)
    assert info["benchmarks"][0]["benchmark"] == "lm_eval" and "store:" in cap.err


def test_reduce_needs_benchmark_when_the_store_holds_several(tmp_path, capsys):
    """Issue 16: reduce without --benchmark silently reduced whichever benchmark survived --dense."""
    from harness_ext.store.ingest import bundled_data_path
    from test_reduced_folder import _write_population

    db = tmp_path / "s.duckdb"
    _write_population(tmp_path / "pop")
    pythia = bundled_data_path() / "pythia-1.4b"
    assert main(["ingest", "--db", str(db), str(tmp_path / "pop"), str(pythia)]) == 0
    capsys.readouterr()
    assert main(["reduce", "--db", str(db), "--out", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "holds 2 benchmarks (lm_eval, mmlu): name one or more with --benchmark" in err
    assert main(["stalk", "--db", str(db), "--out", str(tmp_path / "s")]) == 1
    assert main(["reduce", "--db", str(db), "--benchmark", "lm_eval", "--budget", "2", "--n-random", "10",
                 "--out", str(tmp_path / "r")]) == 0


def test_warnings_go_to_stderr(tmp_path, capsys):
    """Issue 16: warnings on stdout in reduce and on stderr in predict."""
    from test_reduced_folder import _write_population

    db = tmp_path / "s.duckdb"
    _write_population(tmp_path / "pop", with_configs=False)
    assert main(["ingest", "--db", str(db), str(tmp_path / "pop")]) == 0
    capsys.readouterr()
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "10", "--out", str(tmp_path / "r")]) == 0
    cap = capsys.readouterr()
    assert "warning: no lm-eval definition known" in cap.err and "warning:" not in cap.out
    assert main(["reduce", "-q", "--db", str(db), "--budget", "2", "--n-random", "10", "--out", str(tmp_path / "r")]) == 0
    assert "warning:" not in capsys.readouterr().err


@pytest.mark.slow
def test_compare_same_results_for_a_seed_whatever_the_jobs(tmp_path):
    from harness_ext.methods.compare import run_protocol

    X = np.random.default_rng(0).random((12, 10))
    a = run_protocol(X, ["random-subset", "kmeans"], trials=4, k_max=4, seed=3, n_jobs=1, show_progress=False)
    b = run_protocol(X, ["random-subset", "kmeans"], trials=4, k_max=4, seed=3, n_jobs=-1, show_progress=False)
    np.testing.assert_array_equal(a.values, b.values)
