"""One command-line convention (issue 16, items 6 and 7): each stumble the issue lists has a check here."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness_ext.cli import build_parser, main
from harness_ext.cli.options import COMMANDS, FOLDER_COMMANDS, CommaJoin, ListAppend, default_out


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


def _subparsers():
    return build_parser()._subparsers._group_actions[0].choices


SEED_SPELLINGS = {"--seed", "--random-state", "--random_state"}


def test_every_command_with_a_seed_takes_all_its_spellings():
    """Issue 16 item 6: one seed flag, the old spellings as aliases, on every command that draws at random."""
    seeded = set()
    for name, p in _subparsers().items():
        for action in p._actions:
            if set(action.option_strings) & SEED_SPELLINGS:
                assert set(action.option_strings) >= SEED_SPELLINGS, (name, action.option_strings)
                assert action.dest in ("seed", "random_state") and action.type is int, name
                seeded.add(name)
    assert seeded == {"prowl", "compare", "pounce", "weights", "reduce"}


#: List options that stay repeat-only, and why: their values may themselves hold commas.
REPEAT_ONLY = {("weights", "--samples"): "paths (a path may contain a comma)",
               ("weights", "--param"): "KEY=VALUE, a value may be a comma list",
               ("reduce", "--local-data"): "folders (a path may contain a comma)",
               ("reduce", "--selector-param"): "KEY=VALUE, a value may be a comma list",
               ("reduce", "--predictor-param"): "KEY=VALUE, a value may be a comma list",
               **{(cmd, opt): "globs (HELM's run names contain commas)"
                  for cmd in ("matrix", "stalk", "prowl", "compare", "pounce", "weights", "reduce")
                  for opt in ("--datasets", "--models")},
               **{(cmd, "--exclude-models"): "globs, matched as --models's (several after it, or repeated)"
                  for cmd in ("matrix", "stalk", "prowl", "compare", "pounce", "weights", "reduce")}}


def test_every_list_option_is_repeatable_and_comma_separated_alike():
    """Issue 16 item 6: lists were given three ways. Every option taking several values accepts both
    ``--x a --x b`` and ``--x a,b`` (ListAppend: a list; CommaJoin: the joined string)."""
    for name, p in _subparsers().items():
        for action in p._actions:
            opt = next((o for o in action.option_strings if o.startswith("--")), None)
            if opt is None or action.help == "==SUPPRESS==":
                continue
            text = (action.help or "").lower()
            is_list = (isinstance(action, (ListAppend, CommaJoin)) or type(action).__name__ == "_AppendAction"
                       or "comma" in text or "repeatable" in text or action.nargs in ("+", "*"))
            if not is_list or (name, opt) in REPEAT_ONLY:
                continue
            assert isinstance(action, (ListAppend, CommaJoin)), f"{name} {opt}: a list option must be ListAppend/CommaJoin"
    assert parse("compare", "--target", "spearman>=0.8,mae<=2", "--target", "kendall>=0.5").target == \
        ["spearman>=0.8", "mae<=2", "kendall>=0.5"]
    assert parse("ingest", "--meta-columns", "size,date", "--meta-columns", "family").meta_columns == "size,date,family"
    assert parse("pounce", "--order", "a,b", "--order", "c").order == "a,b,c"
    p = build_parser()
    assert p.parse_args(["--disable-plugin", "a,b", "plugins", "--disable-plugin", "c"]).disable_plugin == ["a", "b"]
    assert p.parse_args(["--disable-plugin", "a,b", "plugins", "--disable-plugin", "c"]).disable_plugin_after == ["c"]


@pytest.mark.slow
def test_explicit_out_is_used_as_given_and_the_default_is_per_benchmark_and_command(tmp_path, monkeypatch):
    """Issue 16 item 6, --out DIR everywhere. The default is harness-ext-out/<benchmark>/<command>/ for every
    command that writes a folder, reduce included; an explicit --out is the folder itself (reduce's is what
    ``lm_eval --include_path`` and ``predict --manifest`` read), see options.default_out."""
    assert set(FOLDER_COMMANDS) == {"stalk", "prowl", "compare", "pounce", "weights", "reduce"}
    for cmd in FOLDER_COMMANDS:
        assert parse(cmd).out is None  # filled in by main() from default_out
        assert default_out(parse(cmd, "--benchmark", "mmlu"), cmd) == f"harness-ext-out/mmlu/{cmd}"
    assert default_out(parse("reduce", "--benchmark", "a,b"), "reduce") == "harness-ext-out/a+b/reduce"
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths
    from test_compare import _write_tsml

    (tmp_path / "r").mkdir()
    _write_tsml(tmp_path / "r")
    db = tmp_path / "t.duckdb"
    with Store.open(db) as store:
        ingest_paths(store, [tmp_path / "r"], show_progress=False)
    monkeypatch.chdir(tmp_path)
    assert main(["stalk", "--db", str(db), "--metric", "accuracy", "-q"]) == 0
    assert (tmp_path / "harness-ext-out" / "all" / "stalk" / "stalk_counts.csv").exists()
    assert main(["stalk", "--db", str(db), "--metric", "accuracy", "--benchmark", "tsc_bakeoff", "-o", "mine", "-q"]) == 0
    assert (tmp_path / "mine" / "stalk_counts.csv").exists()


def test_usage_errors_on_counts():
    with pytest.raises(SystemExit) as exc:
        parse("matrix", "--num-fewshot", "-1")
    assert exc.value.code == 2


@pytest.mark.slow
def test_json_is_the_typed_result_on_plugins_info_matrix_stalk(tmp_path, capsys):
    """--json returns the command's Result (title, summary, tables) in the one envelope (command, warnings)."""
    from test_reduced_folder import _write_population

    db = tmp_path / "s.duckdb"
    _write_population(tmp_path / "pop")
    assert main(["ingest", "--db", str(db), str(tmp_path / "pop"), "-q"]) == 0
    capsys.readouterr()
    docs = {}
    for argv in (["plugins", "--kind", "selectors"], ["info", "--db", str(db)], ["matrix", "--db", str(db)],
                 ["stalk", "--db", str(db), "--out", str(tmp_path / "st")]):
        assert main(argv + ["--json", "-"]) == 0, argv
        docs[argv[0]] = json.loads(capsys.readouterr().out)
        assert set(docs[argv[0]]) == {"command", "title", "summary", "tables", "warnings"}, argv
        assert docs[argv[0]]["command"] == argv[0], argv
    assert {r["kind"] for r in docs["plugins"]["tables"]["plugins"]} == {"selectors"}
    assert docs["matrix"]["summary"]["models"] == 8 and len(docs["matrix"]["tables"]["matrix"]) == 8
    assert docs["stalk"]["summary"]["models"] == 8 and "counts" in docs["stalk"]["tables"]
    from harness_ext.cli.matrix import PerformanceMatrix
    from harness_ext.cli.options import matrix_from_args

    m = PerformanceMatrix(matrix_from_args(parse("matrix", "--db", str(db)), require_benchmark=False))
    assert m.plot(tmp_path / "m.png").stat().st_size > 1000 and m.to_frame().shape[0] == 8


def test_warnings_are_logged_to_stderr_and_q_silences_them(tmp_path, capsys):
    """Issue 16 item 6: notes about the matrix go through logging (stderr), the CSV alone to stdout."""
    from test_reduced_folder import _write_population

    db = tmp_path / "s.duckdb"
    _write_population(tmp_path / "pop")
    assert main(["ingest", "--db", str(db), str(tmp_path / "pop"), "-q"]) == 0
    capsys.readouterr()
    assert main(["matrix", "--db", str(db)]) == 0
    cap = capsys.readouterr()
    assert "warning: " in cap.err and "no known chance level" in cap.err and "warning" not in cap.out
    assert cap.out.splitlines()[0].startswith("model") or "," in cap.out.splitlines()[0]
    assert main(["matrix", "--db", str(db), "-q"]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.slow
def test_no_module_prints_its_warnings():
    """Warnings and notes go through logging (stderr, -v/-q), never print()."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    offenders = set()
    for base, package in ((root / "harness_ext", "harness_ext"), (root / "plugins", "harness_ext.plugins"),
                          (root / "adapters", "harness_ext.adapters")):
        for path in base.rglob("*.py"):
            module = ".".join((package, *path.relative_to(base).with_suffix("").parts))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
                        and node.args):
                    first = node.args[0]
                    text = first.value if isinstance(first, ast.Constant) else (
                        first.values[0].value if isinstance(first, ast.JoinedStr) and first.values
                        and isinstance(first.values[0], ast.Constant) else "")
                    if isinstance(text, str) and text.lower().lstrip().startswith(("warning", "note:")):
                        offenders.add(module)
    assert not offenders, sorted(offenders)


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
    assert {"kind", "name", "status", "source"} <= set(doc["tables"]["plugins"][0])
    db = tmp_path / "s.duckdb"
    from test_reduced_folder import _write_population

    _write_population(tmp_path / "pop")
    assert main(["ingest", "--db", str(db), str(tmp_path / "pop"), "--json", str(tmp_path / "ingest.json")]) == 0
    assert json.loads((tmp_path / "ingest.json").read_text())["summary"]["n_results"] > 0
    capsys.readouterr()
    assert main(["info", "--db", str(db), "--json", "-"]) == 0
    cap = capsys.readouterr()
    info = json.loads(cap.out)
    assert info["tables"]["benchmarks"][0]["benchmark"] == "lm_eval" and "store:" in cap.err
    assert info["summary"]["counts"]["results"] > 0


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_dataset_and_model_globs_repeat_and_keep_commas(tmp_path):
    """--datasets given twice kept only the last glob; now a name passes if it matches any. A comma is part of
    the glob (HELM run names hold commas), not a separator."""
    csv = tmp_path / "board.csv"
    rows = [(m, d, 0.1 * i + 0.05 * j) for i, m in enumerate(["m1", "m2", "m3"])
            for j, d in enumerate(["MMLU", "BoolQ", "mmlu:subject=a,method=b", "GSM8K"])]
    csv.write_text("model,dataset,value\n" + "".join(f'{m},"{d}",{v}\n' for m, d, v in rows))
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, "-q", str(csv)]) == 0
    out = tmp_path / "m.csv"

    def columns(*argv):
        assert main(["matrix", "--db", db, "-o", str(out), *argv]) == 0
        import pandas as pd

        return sorted(pd.read_csv(out, index_col=0).columns)

    assert columns("--datasets", "MMLU", "--datasets", "BoolQ") == ["BoolQ", "MMLU"]
    assert columns("--datasets", "mmlu:subject=a,method=*") == ["mmlu:subject=a,method=b"]
    assert parse("reduce", "--models", "a,b").models == ["a,b"]
    assert main(["matrix", "--db", db, "-o", str(out), "--models", "m1", "--models", "m3"]) == 0
    assert sorted(r.split(",")[0] for r in out.read_text().splitlines()[1:]) == ["m1", "m3"]
