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


BIG = "x" * 200_000  # over Python's csv field limit (131,072 characters), long before the 1,000-character name limit


def _board(where: str, sep: str = ",", rows: int = 4) -> str:
    lines = [["model", "mmlu", "gsm8k"]] + [[f"m{m}", f"{40 + m}.5", f"{20 + m}.5"] for m in range(rows)]
    r, c = {"header": (0, 1), "model": (2, 0), "score": (3, 2)}[where]
    lines[r][c] = BIG
    return "\n".join(sep.join(row) for row in lines) + "\n"


def _item_long() -> str:
    return "model,task,item,score\n" + "".join(f"m{m},t,{k},1\n" for m in range(3) for k in range(4)) + f"m0,{BIG},0,1\n"


def _item_wide() -> str:
    return f"item,m0,{BIG},m2\n" + "".join(f"{k},1,0,1\n" for k in range(5))


# (file name, text, sidecar, where the message puts the cell)
OVERSIZED = [
    ("board.csv", _board("header"), None, "(row 1, column 2)"),
    ("board.csv", _board("model"), None, '(row 3, column 1, "model")'),
    ("board.csv", _board("score"), None, '(row 4, column 3, "gsm8k")'),
    ("board.tsv", _board("model", "\t"), None, '(row 3, column 1, "model")'),
    ("turned.csv", "dataset,m0,m1,m2\nmmlu,1,2,3\n" + f"{BIG},4,5,6\n", "models: columns\n", '(row 3, column 1, "dataset")'),
    ("HC2_accuracy.csv", f"Resamples:,0,1\nACSF1,0.9,{BIG}\n", None, "(row 2, column 3"),
    ("items_wide.csv", _item_wide(), "benchmark: bx\nitems:\n  layout: items_x_models\n  task: t\n  metric: acc\n",
     "(row 1, column 3)"),
]


@pytest.mark.parametrize("name,text,side,where", OVERSIZED, ids=[f"{o[0]}-{i}" for i, o in enumerate(OVERSIZED)])
def test_a_cell_over_the_csv_field_limit_refuses_its_file_naming_row_and_column(tmp_path, capsys, name, text, side, where):
    """Python's csv module stops at a cell over 131,072 characters with its own words, naming neither the file nor
    the cell ("field larger than field limit"; an item table's header made an "unexpected Error"): one error
    naming the file, the cell's row and column, its length and the limit, and the store is left as it was."""
    from harness_ext.store.db import Store

    db = tmp_path / "s.duckdb"
    (tmp_path / "ok.csv").write_text(_board("score").replace(BIG, "30.5"))
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "ok.csv")]) == 0
    with Store.open(str(db), read_only=True) as s:
        before = {t: s.con.execute(f"SELECT count(*) FROM {t}").fetchone() for t in ("results", "models", "datasets")}
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / name).write_text(text)
    if side:
        (tmp_path / "in" / f"{name}.meta.yaml").write_text(side)
    capsys.readouterr()
    assert main(["ingest", "--db", str(db), str(tmp_path / "in" / name)]) != 0
    err = capsys.readouterr().err
    assert name in err and "of 200,000 characters " + where in err, err[:600]
    assert "more than the 131,072 characters a CSV cell may hold" in err and "field larger" not in err
    assert max(map(len, err.splitlines())) < 500
    with Store.open(str(db), read_only=True) as s:
        assert before == {t: s.con.execute(f"SELECT count(*) FROM {t}").fetchone() for t in before}


def test_a_long_item_table_reads_a_cell_over_the_csv_field_limit_with_the_name_limit(tmp_path, capsys):
    # Long item tables are read by pandas, which has no field limit: the task name meets the product's own limit.
    (tmp_path / "items.csv").write_text(_item_long())
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(tmp_path / "items.csv")]) != 0
    err = capsys.readouterr().err
    assert "items.csv" in err and "is 200,000 characters long; names are kept up to 1,000" in err


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_side_file_cell_over_the_csv_field_limit_names_row_and_column(tmp_path, suffix):
    from harness_ext.errors import SideFileError
    from harness_ext.safe_input import read_rows

    sep = "\t" if suffix == ".tsv" else ","
    path = tmp_path / f"weights{suffix}"
    path.write_text(f"dataset{sep}weight\nmmlu{sep}1\n{BIG}{sep}2\n")
    with pytest.raises(SideFileError, match=r"weights file has a cell of 200,000 characters \(row 3, column 1, "
                                            r"\"dataset\"\), more than the 131,072"):
        read_rows(path, "weights file")


def test_the_csv_field_limit_is_set_back_after_finding_the_cell():
    import csv

    from harness_ext.safe_input import csv_rows

    limit = csv.field_size_limit()
    with pytest.raises(Exception, match="row 1, column 2"):
        csv_rows(f"a,{BIG}\n", ",", "t.csv")
    assert csv.field_size_limit() == limit


@pytest.mark.parametrize("where,says", [("header", "of 200,000 characters (row 1, column 2), more than the 131,072"),
                                        ("score", "score 'xxxxxxxxxx")])
def test_the_column_reader_says_a_huge_cell_in_one_short_line(tmp_path, capsys, monkeypatch, where, says):
    # A large CSV is read column by column (pyarrow, no field limit); its header by the csv module.
    from harness_ext.adapters import csv_table

    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", 0)
    (tmp_path / "board.csv").write_text(_board(where, rows=40))
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(tmp_path / "board.csv")]) != 0
    err = capsys.readouterr().err
    assert "board.csv" in err and says in err and max(map(len, err.splitlines())) < 500, err[:600]
