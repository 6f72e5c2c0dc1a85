"""``weights`` shows its report through the command line's one output path, part by part as each analysis finishes:
a model or dataset name holding a right-to-left override (U+202E) or a control character is shown escaped, as
every other command shows it, and the ``--json`` document keeps the name as it is.

Real data: ``tests/fixtures/csv_wild/metabench_open_llm_leaderboard_slice.csv`` (its PROVENANCE.md), with one
model and one dataset renamed here to hold format and control characters, as a hostile results file could.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("matplotlib")

from harness_ext.cli import main  # noqa: E402
from harness_ext.safe_output import shown_text  # noqa: E402

# The hostile slice and its store, shared with the printed-table tests (a model and a dataset renamed to hold an RTL
# override; a control character in a name is refused or replaced by ingest, so it goes in the output folder's name).
from test_printed_tables_escaped import BAD_DATASET, BAD_MODEL, _hostile_store  # noqa: E402

ARGS = ["--analyses", "schemes,random,permutation", "--draws", "500", "--permutations", "20", "--emit-weights"]


def test_weights_shows_format_and_control_characters_escaped_part_by_part(tmp_path, capsys):
    db = _hostile_store(tmp_path)
    out = tmp_path / "w\a"  # a BEL in the folder the plot lines and the footer name
    capsys.readouterr()
    assert main(["weights", "--db", db, "--out", str(out), *ARGS, str(out / "weights.csv")]) == 0
    printed = capsys.readouterr()
    for text in (printed.out, printed.err):
        assert "\u202e" not in text and "\a" not in text
    assert "0-hero/Matter\\u202e-0.1-7B" in printed.out  # in the schemes' and the random draws' tables
    shown_out = shown_text(str(out))
    assert shown_out.endswith("w\\u0007")
    lines = printed.out.splitlines()
    assert lines[0].startswith("store matrix (board): 10 models x 6 columns")
    assert f"plot: {shown_out}/rank_changes.png" in lines and f"summary: {shown_out}/summary.json" in lines
    assert any(line.endswith(f"written to {shown_out}/weights.csv") for line in lines)
    assert (out / "summary.json").is_file() and (out / "weights.csv").is_file()  # the files as they are named


def test_weights_json_keeps_the_names_as_they_are(tmp_path, capsys):
    db = _hostile_store(tmp_path)
    out = tmp_path / "w\a"
    capsys.readouterr()
    assert main(["weights", "--db", db, "--out", str(out), "--json", "-", *ARGS, str(out / "weights.csv")]) == 0
    printed = capsys.readouterr()
    doc = json.loads(printed.out)
    models = {row["model"] for row in doc["tables"]["schemes/scores"]}
    assert BAD_MODEL in models and shown_text(BAD_MODEL) not in models
    assert BAD_DATASET in {row["dataset"] for row in doc["tables"]["schemes/weights"]}
    assert str(out / "summary.json") in doc["files"]
    # with '--json -' the text goes to stderr, escaped there too
    assert "0-hero/Matter\\u202e-0.1-7B" in printed.err and "\u202e" not in printed.err
