"""Names from the readers added after the first two red-team passes: model cards' front matter, and item tables whose
task names are what ``lm_eval --tasks`` reads as files or splits into several tasks. Composed hostile values in the
layouts of tests/fixtures/model_card and tests/fixtures/items (the readers' own fixtures)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness_ext.cli import main

CARD = """---
license: mit
model-index:
- name: m
  results:
  - task: {type: text-generation}
    dataset: {name: '%s', type: ds}
    metrics:
    - {type: acc, value: 61.5}
---
# m
"""


@pytest.mark.parametrize("name", ["&a [*a,*a]", "Q &A", "say *hello*", "7 *7"])
def test_a_quoted_ampersand_or_asterisk_is_no_anchor(tmp_path, name):
    card = tmp_path / "README.md"
    card.write_text(CARD % name)
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(card)]) == 0


@pytest.mark.parametrize("front", ["x: &a [1, 2]\ny: *a\n", "x: &a\n  k: 1\n", "x: [&b 1, *b]\n"])
def test_anchors_and_aliases_are_still_refused(tmp_path, front, capsys):
    card = tmp_path / "README.md"
    card.write_text(CARD.replace("license: mit\n", front) % "ds")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(card)]) != 0
    assert "anchors or aliases" in capsys.readouterr().err


TASKS = ["evil.yaml", "~x", "a,b", "arc_easy,hellaswag", "plain"]


@pytest.fixture(scope="module")
def item_reduced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile_item_list")
    rng = np.random.default_rng(0)
    rows = ["model,task,item,score"]
    for m in range(12):
        ability = rng.random()
        rows += [f'org{m}/m{m},"{t}",{k},{int(rng.random() < ability)}' for t in TASKS for k in range(30)]
    (tmp / "board").mkdir()
    (tmp / "board" / "items.csv").write_text("\n".join(rows) + "\n")
    db, out = tmp / "s.duckdb", tmp / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(tmp / "board")]) == 0
    assert main(["reduce", "--db", str(db), "--items", "20", "--out", str(out), "--no-plot",
                 "--json", str(tmp / "r.json")]) == 0
    return out, json.loads((tmp / "r.json").read_text())


def test_item_tasks_read_as_files_or_split_are_left_out_of_the_task_list_and_said(item_reduced):
    out, report = item_reduced
    assert (out / "harness_ext_reduced_tasks.txt").read_text().splitlines() == ["plain"]
    text = json.dumps(report)
    assert 'named as a path or a YAML file' in text and '\\"evil.yaml\\", \\"~x\\"' in text
    assert "named with a comma" in text and '\\"arc_easy,hellaswag\\"' in text
    samples = json.loads((out / "harness_ext_reduced_samples.json").read_text())
    assert sorted(samples) == sorted(TASKS)  # the group and --samples keep them: lm-eval reads no file for a member


@pytest.mark.parametrize("twin", ["+5", "05", " 5", "5.0", "5e0"])
def test_item_ids_of_one_number_written_apart_stay_two_items(tmp_path, twin):
    # "5" and "+5" are two ids of one number: numbered by position (noted), each kept as written in the id map,
    # where the whole number's text would have put both under "5" (the store refused the file with a database error).
    rows = ["model,task,item,score"] + [f"m{m},t,{twin if k == 6 else k},{(m + k) % 2}" for m in range(3) for k in range(7)]
    (tmp_path / "board").mkdir()
    (tmp_path / "board" / "items.csv").write_text("\n".join(rows) + "\n")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "board")]) == 0
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    items = sorted(i for (i,) in con.execute("select item from item_ids where task = 't'").fetchall())
    assert len(items) == 7 and twin in items and "5" in items
    assert con.execute("select count(*) from samples").fetchone()[0] == 21


@pytest.mark.parametrize("suffix", [".html", ".md", ".json"])
def test_a_huge_number_cell_is_refused_in_one_short_line(tmp_path, suffix, capsys):
    big = "9" * 5000 + ".5"
    rows = [("m1", big), ("m2", "0.5"), ("m3", "0.7")]
    text = {".html": "<table><tr><th>Model</th><th>a</th><th>b</th></tr>"
                     + "".join(f"<tr><td>{m}</td><td>{v}</td><td>0.1</td></tr>" for m, v in rows) + "</table>",
            ".md": "| Model | a | b |\n|---|---|---|\n" + "".join(f"| {m} | {v} | 0.1 |\n" for m, v in rows),
            ".json": "[" + ", ".join(f'{{"model": "{m}", "a": {v}, "b": 0.1}}' for m, v in rows) + "]"}[suffix]
    board = tmp_path / f"board{suffix}"
    board.write_text(text)
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(board)]) != 0
    err = capsys.readouterr().err
    assert "not finite" in err and "9" * 100 not in err and max(map(len, err.splitlines())) < 400


@pytest.mark.parametrize("where", ["model", "dataset"])
@pytest.mark.parametrize("suffix", [".md", ".csv"])
def test_a_name_over_the_limit_refuses_its_file_naming_field_length_and_limit(tmp_path, where, suffix, capsys):
    """A Markdown cell of a million characters was stored as a model name: names are kept up to
    :data:`~harness_ext.types.MAX_NAME_CHARS` (1,000; the longest real ones are 121), a longer one refuses the file."""
    from harness_ext.store.db import Store
    from harness_ext.types import MAX_NAME_CHARS

    long = "x" * 100_000  # (a CSV field is read up to 131,072 characters)
    model, dataset = (long, "mmlu") if where == "model" else ("m1", long)
    sep, rule = (" | ", "|---|---|---|\n") if suffix == ".md" else (",", "")
    edge = ("| ", " |") if suffix == ".md" else ("", "")
    rows = [("Model", dataset, "gsm8k"), (model, "50.1", "30.2"), ("m2", "40.0", "20.0"), ("m3", "45.0", "25.0")]
    lines = [edge[0] + sep.join(r) + edge[1] + "\n" for r in rows]
    board = tmp_path / f"board{suffix}"
    board.write_text(lines[0] + rule + "".join(lines[1:]))
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(board)]) != 0
    err = capsys.readouterr().err
    assert (f"{where} \"{'x' * 60}...\" is 100,000 characters long; names are kept up to {MAX_NAME_CHARS:,} "
            "characters") in err and "board" + suffix in err and max(map(len, err.splitlines())) < 400, err
    with Store.open(str(db), read_only=True) as s:
        assert s.con.execute("SELECT count(*) FROM results").fetchone() == (0,)
    # A name at the limit is kept.
    board.write_text(board.read_text().replace(long, "y" * MAX_NAME_CHARS))
    assert main(["ingest", "--db", str(db), str(board)]) == 0


def test_an_item_tables_task_over_the_limit_refuses_the_table(tmp_path):
    from harness_ext.errors import IngestError
    from harness_ext.store.item_format import ItemTable
    from harness_ext.store.item_tables import check_names
    import pandas as pd

    frame = pd.DataFrame({"model": ["m"], "task": ["t" * 1001], "metric": ["acc"]})
    with pytest.raises(IngestError, match=r"task \"t{60}...\" is 1,001 characters long; names are kept up to 1,000"):
        check_names(ItemTable(path=tmp_path / "items.parquet", frame=frame, benchmark="board", sha256="0"))
