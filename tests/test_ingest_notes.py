"""Ingest never silently reclassifies: wide-CSV column rules decided from the header, and every heuristic reported.

A leaderboard CSV of 234 score columns lost 215 of them to "aggregates" (a row-mean tolerance of 1.01 from its
all-zero columns), with "1 files ingested" and no warning; which columns survived depended on the rows present;
a 20-model file with two all-zero columns was refused with ZeroDivisionError. These tests pin the shape of both
files (synthetic, faithful to their columns) and the property behind the fix: removing rows never changes what a
column is stored as.
"""

from __future__ import annotations

import os
import contextlib
import csv
import io
import json

import numpy as np
import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.types import SourceFile

PATHS = [0, 1 << 40]
PATH_IDS = ["columnar", "records"]


@contextlib.contextmanager
def _path(threshold):
    """Read wide CSVs by the columnar path (threshold 0) or the record path (a huge threshold)."""
    import harness_ext.adapters.csv_table as csv_table

    old = csv_table.COLUMNAR_MIN_BYTES
    csv_table.COLUMNAR_MIN_BYTES = threshold
    try:
        yield
    finally:
        csv_table.COLUMNAR_MIN_BYTES = old


def _write(path, header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    path.write_text(buf.getvalue())
    return path


def _kinds(path) -> dict:
    """column -> "dataset" / "aggregate" / "metadata" as the csv adapter reads ``path`` (columns with a value only)."""
    from harness_ext.adapters.csv_table import read

    got = read(SourceFile(path))
    out = {}
    if hasattr(got, "columns"):  # ColumnarResults
        for k, c in enumerate(got.columns):
            if np.isfinite(got.values[:, k]).any():
                out[c["dataset_metadata"]["column"]] = "aggregate" if c["aggregate"] else "dataset"
        metas = got.model_metadata
    else:
        for r in got:
            out[r.dataset_metadata["column"]] = "aggregate" if r.aggregate else "dataset"
        metas = [r.model_metadata for r in got]
    for md in metas:
        for key in md or {}:
            out[key] = "metadata"
    return out


def _leaderboard_234(n_models=40, seed=0):
    """The 234-score-column shape: 221 task columns on [0, 1] (2-4 decimals), 11 all-zero columns written ``0``,
    and two real aggregates, ``suite_overall_mc`` and ``suite_overall_gen`` (row means of the tasks)."""
    rng = np.random.default_rng(seed)
    tasks = [f"suite_task{i:03d}_acc" for i in range(221)]
    zeros = [f"suite_zero{i:02d}_acc" for i in range(11)]
    X = rng.uniform(0.2, 0.95, (n_models, len(tasks)))
    X = np.stack([np.round(X[:, j], 2 + j % 3) for j in range(len(tasks))], axis=1)
    overall = np.round(X.mean(axis=1), 4)
    overall_norm = np.round(np.clip(X.mean(axis=1) + 0.01, 0, 1), 4)
    header = ["model", "suite_overall_mc", *tasks[:100], "suite_overall_gen", *tasks[100:], *zeros]
    rows = [[f"org/model-{i}", overall[i], *X[i, :100], overall_norm[i], *X[i, 100:], *([0] * len(zeros))]
            for i in range(n_models)]
    return header, rows


@pytest.mark.parametrize("threshold", PATHS, ids=PATH_IDS)
def test_234_column_leaderboard_keeps_every_score_and_reports_its_two_aggregates(tmp_path, threshold):
    header, rows = _leaderboard_234()
    p = _write(tmp_path / "suite.csv", header, rows)
    with _path(threshold), Store.open(":memory:") as s:
        rep = ingest_paths(s, [p], show_progress=False)
        (f,) = rep.by_status("ingested")
        kinds = s.con.execute("SELECT kind, count(*) FROM datasets GROUP BY kind").fetchall()
        assert dict(kinds) == {"dataset": 232, "aggregate": 2}  # 221 tasks + 11 all-zero columns; the 2 overalls
        aggs = {r[0] for r in s.con.execute("SELECT name FROM datasets WHERE kind = 'aggregate'").fetchall()}
        assert aggs == {"suite_overall_mc", "suite_overall_gen"}
    (note,) = [n for n in f.notes if "aggregate" in n]
    assert note.startswith("2 columns stored as aggregates: suite_overall_mc, suite_overall_gen")
    assert "--column-meta" in note
    assert "; 1 note on how files were read" in rep.summary() and "suite.csv" in str(rep)


@pytest.mark.parametrize("threshold", PATHS, ids=PATH_IDS)
def test_20_models_with_two_all_zero_columns_are_read_not_refused(tmp_path, threshold):
    rng = np.random.default_rng(3)
    X = np.round(rng.uniform(0.2, 0.9, (20, 10)), 3)
    header = ["model"] + [f"task{i}" for i in range(10)] + ["zero_a", "zero_b"]
    p = _write(tmp_path / "lb.csv", header, [[f"m{i}", *X[i], 0, 0] for i in range(20)])
    with _path(threshold), Store.open(":memory:") as s:
        rep = ingest_paths(s, [p], show_progress=False)
        assert len(rep.by_status("ingested")) == 1, [f.reason for f in rep.files]
        kinds = dict(s.con.execute("SELECT kind, count(*) FROM datasets GROUP BY kind").fetchall())
        assert kinds == {"dataset": 12}


@pytest.mark.parametrize("threshold", PATHS, ids=PATH_IDS)
def test_a_column_equal_to_the_row_mean_is_a_hint_not_a_reclassification(tmp_path, threshold):
    """An unnamed column that equals the mean of the others stays a dataset, and the note says how to declare it."""
    rng = np.random.default_rng(1)
    X = np.round(rng.uniform(20, 90, (8, 4)), 2)
    total = np.round(X.mean(axis=1), 2)
    p = _write(tmp_path / "board.csv", ["model", "A", "B", "T", "C", "D", "Family", "Params (B)", "E"],
               [[f"m{i}", X[i, 0], X[i, 1], total[i], X[i, 2], "-" if i == 0 else X[i, 3], "fam", 7, ""]
                for i in range(8)])
    with _path(threshold), Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [p], show_progress=False).by_status("ingested")
        assert {r[0] for r in s.con.execute("SELECT kind FROM datasets").fetchall()} == {"dataset"}
    text = "\n".join(f.notes)
    assert "T equals the mean of the other score columns on every complete row: stored as a dataset" in text
    assert "1 column stored as model metadata, not scores: Family (its cells are text)" in text
    assert "Params (B) (the name describes the model" in text
    assert "1 column with no value in any row: E (nothing stored)" in text
    assert "1 cell marked as missing ('-') left out" in text


def test_ingest_command_prints_the_notes_and_lists_them_in_json(tmp_path, capsys):
    from harness_ext.cli import main

    header, rows = _leaderboard_234(n_models=5)
    p = _write(tmp_path / "suite.csv", header, rows)
    out = tmp_path / "ingest.json"
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(p), "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert "note: " in err and "2 columns stored as aggregates: suite_overall_mc, suite_overall_gen" in err
    (f,) = json.loads(out.read_text())["tables"]["files"]
    assert any("aggregates" in n for n in f["notes"])


# -- the property: removing rows never changes what a column is stored as --------------------------------------
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

#: Column-name words: task-like, aggregate words, "score", the file's own name, a date, a model-describing word.
_WORDS = ["mmlu", "gsm", "arc", "reasoning", "coding", "average", "overall", "mean", "total", "score", "board",
          "240624", "acc", "size", "lb", "safety"]


@st.composite
def _tables(draw):
    n = draw(st.integers(3, 9))
    n_cols = draw(st.integers(1, 7))
    names, cols = [], []
    for _ in range(n_cols):
        name = "_".join(draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3)))
        if name in names:
            continue
        kind = draw(st.sampled_from(["number", "number", "number", "zeros", "text", "mean"]))
        if kind == "text":  # a text column: every cell text (a column mixing text and numbers is not drawn)
            cells = [draw(st.sampled_from(["Llama", "GPT", "Qwen"])) for _ in range(n)]
        elif kind == "zeros":
            cells = ["0"] * n
        elif kind == "mean" and cols:  # the row mean of the numeric columns so far, to 2 decimals
            num = [c for c in cols if c[0] != "text"]
            if not num:
                continue
            cells = [f"{np.mean([float(c[1][i] or 0) for c in num]):.2f}" for i in range(n)]
        else:
            dec = draw(st.integers(0, 3))
            cells = [draw(st.one_of(st.none(), st.floats(0, 1).map(lambda v, d=dec: f"{v:.{d}f}"))) for _ in range(n)]
            cells = ["" if c is None else c for c in cells]
        names.append(name)
        cols.append((kind, cells))
    rows = [[f"m{i}"] + [c[1][i] for c in cols] for i in range(n)]
    keep = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    return ["model", *names], rows, sorted(keep)


@pytest.mark.parametrize("threshold", PATHS, ids=PATH_IDS)
@hypothesis.settings(max_examples=100, deadline=None, database=None,
                     derandomize=not os.environ.get("HARNESS_EXT_FUZZ_RANDOM"))  # same draws every run
@hypothesis.given(table=_tables())
# A model-describing column ("size") with a value only in rows that are removed: it must not start counting as
# a score column then (it made "average" an aggregate of three columns in the part and a dataset in the whole).
@hypothesis.example(table=(["model", "size", "mmlu", "average"],
                           [["m0", "", "", "0"], ["m1", "", "", "0.5"], ["m2", "", "", "0.3"], ["m3", "", "", "0.1"],
                            ["m4", "0", "", ""]], [0, 1]))
def test_removing_rows_never_changes_what_a_column_is_stored_as(tmp_path_factory, threshold, table):
    header, rows, keep = table
    d = tmp_path_factory.mktemp("prop")
    full = _write(d / "board_240701.csv", header, rows)
    (d / "sub").mkdir()
    part = _write(d / "sub" / "board_240701.csv", header, [rows[i] for i in keep])
    from harness_ext.errors import IngestError

    with _path(threshold):
        try:
            whole = _kinds(full)
        except IngestError:
            return  # refused whole (no score column): nothing stored to compare
        try:
            some = _kinds(part)
        except IngestError as exc:
            assert "no score column" in exc.reason  # the rows kept have no value in any score column
            return
    assert {c: whole[c] for c in some} == some


@pytest.mark.slow
def test_predict_reads_a_new_models_subset_csv_with_the_leaderboards_sidecar(tmp_path):
    """The leaderboard's sidecar (benchmark name, chance levels of all its columns) copied beside a new model's CSV
    of the subset's columns was refused: "column metadata names columns not in ...". Ingest still refuses a sidecar
    naming a column its file lacks (a typo would silently not apply); predict reads the new file as a subset."""
    from harness_ext.cli import main
    from harness_ext.methods.reduction.manifest import load_manifest
    from harness_ext.methods.reduction.predict import predict_from_manifest

    rng = np.random.default_rng(0)
    n, d = 41, 8
    X = np.clip(0.3 + 0.5 * rng.random((n, 1)) @ rng.uniform(0.5, 1.0, (1, d)) + 0.03 * rng.standard_normal((n, d)), 0, 1)
    names = [f"task{j}" for j in range(d)]
    sidecar = "benchmark: board\ncolumns:\n" + "".join(f"  {c}: {{choices: 4}}\n" for c in names)
    (tmp_path / "train").mkdir()
    (tmp_path / "new").mkdir()
    _write(tmp_path / "train" / "board.csv", ["model", *names], [[f"m{i:02d}", *np.round(X[i], 4)] for i in range(n - 1)])
    (tmp_path / "train" / "board.meta.yaml").write_text(sidecar)
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", str(tmp_path / "train"), "--db", db, "-q"]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", db, "--budget", "3", "--n-random", "20", "--selector", "greedy_coverage",
                 "--out", str(out), "--format", "json"]) == 0
    manifest = load_manifest(out / "manifest.json")
    subset = [s["name"].split("/", 1)[-1] for s in manifest["subset"]]
    new = _write(tmp_path / "new" / "my_model.csv", ["model", *subset],
                 [["new-model", *np.round(X[-1, [names.index(c) for c in subset]], 4)]])
    (tmp_path / "new" / "my_model.meta.yaml").write_text(sidecar)  # the leaderboard's sidecar, reused as is
    with Store.open(":memory:") as s:  # ingest keeps refusing it: a sidecar naming absent columns may be a typo
        (f,) = ingest_paths(s, [new], show_progress=False).by_status("skipped")
        assert "column metadata names columns not in my_model.csv" in f.reason
    pred = predict_from_manifest(manifest, [new])
    assert set(pred.table["model"]) == {"new-model"} and len(pred.table) == d
    (w,) = [w for w in pred.warnings if w.startswith("reading the new results:")]
    assert f"column metadata describes {d - len(subset)} columns this file does not have" in w


def test_a_row_mean_of_rounded_columns_is_hinted_under_any_file_name(tmp_path):
    """LiveBench's overall score (2 decimals) is the mean of its six category columns (2 decimals each): the mean of
    the printed columns differs from it by up to 0.0067, beyond the column's own half unit. Under its own file name
    the column is the leaderboard's own score (an aggregate); saved as ``scores.csv`` it stays a dataset, and the
    hint must still say it is the others' mean (it was silent: ``reduce`` then chose the overall score as a subset
    dataset). Real file: the shared benchbench ``livebench_240829_holistic.csv``."""
    from conftest import SHARED_DATA, require

    board = require(SHARED_DATA / "benchbench" / "leaderboards" / "livebench_240829_holistic.csv")
    p = tmp_path / "scores.csv"
    p.write_bytes(board.read_bytes())
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [str(p)], show_progress=False).by_status("ingested")
    assert any("livebench_240725 equals the mean of the other score columns on every complete row" in n
               for n in f.notes), f.notes


def test_the_row_mean_hint_allows_for_the_members_rounding():
    """Columns to 2 decimals and their mean to 2 decimals: hinted; the same column moved by 0.02 is not."""
    from harness_ext.adapters.csv_columns import row_mean_hints

    rng = np.random.default_rng(0)
    exact = rng.uniform(20, 90, (60, 6))
    X, total = np.round(exact, 2), np.round(exact.mean(axis=1), 2)  # each printed to 2 decimals
    assert np.abs(total - X.mean(axis=1)).max() > 0.00505  # beyond the total's own half unit
    names = ["total", *"ABCDEF"]
    assert row_mean_hints(names, np.column_stack([total, X])) == ["total"]
    moved = total.copy()
    moved[7] += 0.02
    assert row_mean_hints(names, np.column_stack([moved, X])) == []


@pytest.mark.parametrize("threshold", PATHS, ids=PATH_IDS)
def test_a_yes_no_column_beside_scores_is_hinted(tmp_path, threshold):
    """Nejumi Leaderboard 4's ``JA`` (1 for a model made in Japan) beside its 0-1 scores was read as a score with no
    word, and entered the reductions (frontier error 2.16 points against 1.15 with it declared as metadata). It stays
    a dataset, with a hint; a table of 0/1 columns only (per-item correctness) gets none. Header from the real board
    (wandb/llm-leaderboard), values composed."""
    rng = np.random.default_rng(2)
    rows = [[f"m{i}", int(i % 3 == 0), *np.round(rng.uniform(0.2, 0.9, 3), 4)] for i in range(12)]
    p = _write(tmp_path / "nejumi.csv", ["model_name", "JA", "GLP_推論能力", "GLP_知識・質問応答", "ALT_真実性"], rows)
    with _path(threshold), Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [p], show_progress=False).by_status("ingested")
        assert "JA" in {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()}
    assert any(n.startswith("JA holds only 0 and 1 while the other score columns hold other values: stored as a "
                            "dataset") for n in f.notes), f.notes
    flags = _write(tmp_path / "items.csv", ["model", "q1", "q2", "q3"], [[f"m{i}", i % 2, 1 - i % 2, 1] for i in range(8)])
    with _path(threshold), Store.open(":memory:") as s:
        (g,) = ingest_paths(s, [flags], show_progress=False).by_status("ingested")
    assert not any("only 0 and 1" in n for n in g.notes), g.notes
