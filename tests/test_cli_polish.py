"""The command line as a new user meets it: their own lm-eval group named as a benchmark, a suggestion for a name
or flag not found, one --json shape, -q silent, progress on the long commands."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from harness_ext.cli import main


def _toybench(folder, n=6, group="toybench"):
    """lm-eval v0.4 results of a group of the user's own: three subtasks and the group row."""
    for i in range(n):
        tasks = {"toy_a": 0.4 + i / 20, "toy_b": 0.6 + i / 25 - (i % 2) / 30, "toy_c": 0.3 + i / 30 + (i % 3) / 40}
        results = {t: {"acc,none": v, "acc_stderr,none": 0.01, "alias": f" - {t}"} for t, v in tasks.items()}
        results[group] = {"acc,none": sum(tasks.values()) / 3, "alias": group}
        doc = {"results": results, "groups": {group: results[group]},
               "group_subtasks": {group: list(tasks), **{t: [] for t in tasks}},
               "n-shot": {t: 0 for t in tasks}, "higher_is_better": {t: {"acc": True} for t in tasks},
               "versions": {t: 1.0 for t in tasks}, "config": {"model": "hf", "model_args": f"pretrained=org/m{i}"},
               "model_name": f"org/m{i}"}
        d = folder / f"m{i}"
        d.mkdir(parents=True)
        (d / "results_2025-01-01T00-00-00.json").write_text(json.dumps(doc))
    return folder


def test_a_users_own_group_is_its_benchmark_and_a_typo_gets_a_suggestion(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(_toybench(tmp_path / "toy")), "-q"]) == 0
    capsys.readouterr()
    assert main(["info", "--db", str(db), "--json", "-"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [r["benchmark"] for r in info["tables"]["benchmarks"]] == ["toybench"]
    assert main(["matrix", "--db", str(db), "--benchmark", "toybench"]) == 0
    assert "model,toy_a,toy_b,toy_c" in capsys.readouterr().out
    assert main(["matrix", "--db", str(db), "--benchmark", "toybnch"]) == 1
    err = capsys.readouterr().err
    assert "no benchmark 'toybnch' (did you mean 'toybench'?)" in err and "ingest --group" in err
    assert "aliases" not in err


def test_lm_evals_own_groups_keep_their_names():
    from harness_ext.adapters.lm_eval import own_groups

    assert own_groups({"glue": ["cola", "mnli"], "cola": [], "mnli": []}) == {}
    assert own_groups({"mmlu": ["mmlu_stem"], "mmlu_stem": ["mmlu_anatomy"]}) == {}
    nested = own_groups({"mine": ["part", "arc_easy"], "part": ["t1", "t2"], "t1": [], "t2": []})
    assert nested == {"mine": "mine", "part": "mine", "arc_easy": "mine", "t1": "mine", "t2": "mine"}


def test_a_bad_flag_gets_the_commands_usage_and_a_suggestion(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reduce", "--budgt", "2"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: harness-ext reduce") and "--budgt 2 (did you mean --budget?)" in err


@pytest.mark.parametrize("argv, said", [
    (["prowl", "--budget", "5"], "--budget 5 (prowl sizes its subset by coverage: --target 0.95; a subset of a given "
                                 "size is reduce --budget N)"),
    (["reduce", "--target", "0.9"], "--target 0.9 (reduce takes a coverage target as --budget coverage=0.95)"),
    (["predict", "-m", "reduced", "--db", "s.duckdb", "results.json"], "--db s.duckdb (predict reads no store"),
    (["compare", "--budget", "4"], "--budget 4 (compare tries every subset size from 2 to --k-max)"),
    (["pounce", "--budget", "3"], "--budget 3 (an option of reduce, not of pounce)"),
    (["stalk", "--k-max", "3"], "--k-max 3 (an option of compare, not of stalk)"),
    (["--budget", "5", "prowl"], "before the command name: --budget 5 (prowl sizes its subset by coverage"),
])
def test_a_sibling_commands_option_names_the_one_to_use(argv, said, capsys):
    """prowl --budget said only "unrecognized arguments": the option a sibling command takes is named with what this
    command takes instead (or with the command that has it)."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: harness-ext {argv[0] if argv[0] != '--budget' else 'prowl'}") and said in err


def test_one_json_shape_and_quiet(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    docs = {}
    runs = {"ingest": ["ingest", "--db", str(db), str(_toybench(tmp_path / "toy"))],
            "models --merged": ["models", "--db", str(db), "--merged"],
            "models --unmatched": ["models", "--db", str(db), "--unmatched"],
            "plugins": ["plugins", "--kind", "selectors"], "matrix": ["matrix", "--db", str(db)]}
    for name, argv in runs.items():
        assert main(argv + ["--json", "-", "-q"]) == 0, argv
        cap = capsys.readouterr()
        assert cap.err == "", argv  # -q: the JSON is the output, no text on stderr
        doc = json.loads(cap.out)
        assert list(doc)[:5] == ["command", "title", "summary", "tables", "warnings"], argv
        docs[name] = doc
    assert docs["ingest"]["summary"]["files"]["ingested"] == 6 and len(docs["ingest"]["tables"]["files"]) == 6
    assert docs["models --merged"]["summary"] == {"names": 6, "models": 6}


def test_json_carries_the_warnings_logged(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    bad = tmp_path / "in"
    bad.mkdir()
    (bad / "notes.json").write_text('{"hello": 1}')
    _toybench(bad / "toy", n=2)
    assert main(["ingest", "--db", str(db), str(bad), "--json", "-"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert any("notes.json" in w for w in doc["warnings"]) and "notes.json" in cap.err


def test_normalise_help_points_to_an_existing_section():
    from harness_ext.cli import build_parser

    text = " ".join(build_parser().commands["matrix"].format_help().split())  # argparse wraps the help
    assert "METHODS.md" not in text and "docs/guide/ingest.md, 'The matrix'" in text


def test_predict_and_pounce_show_their_stages(tmp_path, capsys, caplog):
    """Progress: predict (most of a minute on large benchmarks) and pounce name the stage that runs (a bar on a
    terminal; -vv logs each stage)."""
    import harness_ext as hx
    from harness_ext.report import Stages

    assert Stages.__init__  # the bar every long command shares
    db = tmp_path / "s.duckdb"
    hx.ingest(_toybench(tmp_path / "toy", n=8), db)
    caplog.set_level(logging.DEBUG, logger="harness_ext")
    # An earlier CLI test in the same process may have set propagate=False on the package logger (configure_logging):
    # listen on it directly.
    logger = logging.getLogger("harness_ext")
    logger.addHandler(caplog.handler)
    try:
        res = hx.reduce(hx.load_matrix(db, "toybench"), budget=1, n_random=10, n_random_subsets=10,
                        selector="greedy_coverage")
        res.write(tmp_path / "reduced", formats=["json"])
        hx.predict(tmp_path / "reduced", [tmp_path / "toy" / "m0"])
    finally:
        logger.removeHandler(caplog.handler)
    assert any(r.getMessage().startswith("predict stage: fitting") for r in caplog.records)


def test_matrix_help_says_what_it_does_without_benchmark(tmp_path, capsys):
    """`matrix --help` said --benchmark was required when the store holds several, yet `matrix` exports every
    benchmark without it (docs/guide/ingest.md's `matrix --source '*v04*' --rows run --dense` relies on it)."""
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(_toybench(tmp_path / "a", group="bench_a")),
                 str(_toybench(tmp_path / "b", group="bench_b")), "-q"]) == 0
    capsys.readouterr()
    assert main(["matrix", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.count("\norg/m") == 6 and "bench_a/toy_a" in out and "bench_b/toy_a" in out  # side by side, named
    with pytest.raises(SystemExit):
        main(["matrix", "--help"])
    assert "default: every benchmark" in " ".join(capsys.readouterr().out.split())
    assert main(["reduce", "--db", str(db), "--out", str(tmp_path / "r")]) == 1
    assert "name one or more with --benchmark" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reduce", "--help"])
    assert "required when the store holds several" in " ".join(capsys.readouterr().out.split())


REAL_RUN = Path(__file__).parent / "fixtures" / "lm_eval_v04" / "Qwen__Qwen3.5-9B"


@pytest.mark.parametrize("argv", [["-v", "info"], ["info", "-v"], ["--verbose", "info"]])
def test_verbose_before_or_after_the_command(tmp_path, argv):
    """``harness-ext -v COMMAND`` is as verbose as ``COMMAND -v``: the command's own ``-v`` default replaced the
    top-level count, so info lines were lost when ``-v`` came first."""
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, str(REAL_RUN)]) == 0
    assert main(argv + ["--db", db]) == 0
    assert logging.getLogger("harness_ext").level == logging.INFO
    assert main(["info", "--db", db]) == 0
    assert logging.getLogger("harness_ext").level == logging.WARNING


def test_quiet_json_keeps_the_warnings_in_the_document(tmp_path, capsys):
    """With -q the logger was set to ERROR, so the --json collector never saw a warning: a scripted `--json out -q`
    lost '--dense dropped ...' and every other warning, which the same run without -q records."""
    folder = _toybench(tmp_path / "lm", n=8)
    db = str(tmp_path / "s.duckdb")
    (folder / "m7" / "results_2025-01-01T00-00-00.json").unlink()  # one model without toy_c: --dense drops it
    doc = json.loads((folder / "m6" / "results_2025-01-01T00-00-00.json").read_text())
    del doc["results"]["toy_c"]
    (folder / "m7" / "results_2025-01-01T00-00-00.json").write_text(json.dumps({**doc, "model_name": "org/m7", "config": {
        "model": "hf", "model_args": "pretrained=org/m7"}}))
    assert main(["ingest", "--db", db, "-q", str(folder)]) == 0
    docs = {}
    for quiet in ([], ["-q"]):
        out = tmp_path / f"p{len(quiet)}.json"
        capsys.readouterr()
        assert main(["stalk", "--db", db, "--dense", "models", "--out", str(tmp_path / f"o{len(quiet)}"), "--json",
                     str(out), *quiet]) == 0
        err = capsys.readouterr().err
        docs[bool(quiet)] = json.loads(out.read_text())["warnings"]
        assert ("warning:" in err) == (not quiet)
    assert any("--dense dropped" in w for w in docs[True]) and docs[True] == docs[False]
