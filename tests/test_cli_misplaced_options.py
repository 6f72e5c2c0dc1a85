"""A misplaced or unknown option is named with its value, not a correct word argparse pushed out: ``predict --db S
-m M results/`` said ``unrecognized arguments: --db results/`` (S was read as the results folder), and ``harness-ext
--db S predict ...`` said ``invalid choice: 'S'``."""

from __future__ import annotations

import pytest

from harness_ext.cli import main


def _error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("argv", [
    ["predict", "--db", "s.duckdb", "--manifest", "m.json", "results/"],
    ["predict", "--manifest", "m.json", "--db", "s.duckdb", "results/"],
    ["predict", "-m", "m.json", "results/", "--db", "s.duckdb"],
    ["predict", "--db", "s.duckdb", "-m", "m.json"],
])
def test_predict_names_the_unknown_option_and_its_value(argv, capsys):
    hint = "predict reads no store: the subset from --manifest, the new model's scores from its result files"
    assert _error(argv, capsys) == f"harness-ext predict: error: unrecognized arguments: --db s.duckdb ({hint})"


def test_a_flag_given_a_value_before_the_positional_is_named_with_it(capsys):
    err = _error(["predict", "--budget", "3", "-m", "m.json", "r/"], capsys)
    assert err.endswith("unrecognized arguments: --budget 3 (the subset is reduce's: predict reads it from "
                        "--manifest)")


def test_extra_positional_words_are_still_named(capsys):
    assert _error(["matrix", "--foo", "x", "y"], capsys).endswith("unrecognized arguments: --foo x y")
    assert _error(["matrix", "x", "y"], capsys).endswith("unrecognized arguments: x y")


def test_an_option_before_the_command_name_is_named_not_its_value(capsys):
    err = _error(["--db", "s.duckdb", "predict", "-m", "m.json", "r/"], capsys)
    assert err == ("harness-ext predict: error: unrecognized arguments before the command name: --db s.duckdb "
                   "(predict reads no store: the subset from --manifest, the new model's scores from its result files)")
    err = _error(["-q", "predict", "-m", "m.json", "r/"], capsys)
    assert err.endswith("-q (an option of predict: give it after the command name)")


def test_top_level_options_before_the_command_are_still_read(capsys):
    # -vv, an abbreviation and --disable-plugin VALUE are harness-ext's own: the error is about --dbb alone
    err = _error(["-vv", "--verb", "--disable-plugin", "x", "predict", "-m", "m.json", "r/", "--dbb", "z"], capsys)
    assert err.endswith("unrecognized arguments: --dbb z")


def test_an_unknown_command_is_named_before_its_options(capsys):
    """``harness-ext benchmarks --db X`` (no such command) said ``unrecognized arguments before the command name:
    --db X``, as if the command were right and the option misplaced; it is argparse's invalid choice, with the
    commands listed."""
    err = _error(["benchmarks", "--db", "s.duckdb"], capsys)
    assert "invalid choice: 'benchmarks'" in err and "'info'" in err and "before the command name" not in err
    err = _error(["--db", "s.duckdb", "predict"], capsys)  # a misplaced option is still named
    assert "unrecognized arguments before the command name: --db s.duckdb" in err
