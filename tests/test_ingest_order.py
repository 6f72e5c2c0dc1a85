"""The same results files ingested in another order give the same dataset-level reduction, or say why not.

Files that do not disagree give the same manifest bytes in either order. Files that give one cell different
values do not: the store keeps both and the matrix takes the value ingested first (nothing already stored is
overwritten), so ``reduce`` read another matrix, chose another subset and wrote another manifest without a
word; its manifest now says how many of its cells the order chose.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import HELM_CLASSIC, LM_EVAL_V03, PYTHIA, SHARED_DATA, require
from harness_ext.cli import main

NOTE = "the value ingested first (their document counts unknown or equal)"


def _reduce(tmp_path, folders, capsys) -> bytes:
    """Ingest ``folders`` one command each, in order, into a new store at one path; the manifest's bytes."""
    db, out = tmp_path / "store.duckdb", tmp_path / "out"
    db.unlink(missing_ok=True)
    for f in folders:
        assert main(["ingest", "--db", str(db), "-q", str(f)]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "lm_eval", "--seed", "0", "--out", str(out),
                 "--no-plot"]) == 0
    capsys.readouterr()
    return (out / "manifest.json").read_bytes()


@pytest.mark.slow
def test_files_that_agree_give_one_manifest_in_either_order(tmp_path, capsys):
    """OPT's lm-eval v0.3 results in two repositories' layouts: the same cells, no disagreement."""
    a, b = require(LM_EVAL_V03 / "opt"), require(PYTHIA / "opt")
    forward = _reduce(tmp_path, [a, b], capsys)
    assert forward == _reduce(tmp_path, [b, a], capsys)
    assert NOTE not in forward.decode()


@pytest.mark.slow
def test_files_that_disagree_are_said_to_depend_on_the_order(tmp_path, capsys):
    """BLOOM's results in both repositories differ in 35 cells (20 of them in the lm_eval matrix): either order
    warns of them, with the same count."""
    a, b = require(LM_EVAL_V03 / "bloom"), require(PYTHIA / "bloom")
    said = []
    for folders in ([a, b], [b, a]):
        manifest = json.loads(_reduce(tmp_path, folders, capsys))
        said.append([w for w in manifest["warnings"] if NOTE in w])
    assert said[0] == said[1] and len(said[0]) == 1 and said[0][0].startswith("20 cells of the matrix have")


def test_the_warning_counts_only_the_matrix_cells(tmp_path, capsys):
    """Two CSV files disagreeing on one cell of the matrix (and on one of a benchmark left out of it)."""
    rows = [(f"m{i}", f"d{j}", 0.3 + 0.05 * i + 0.02 * j) for i in range(8) for j in range(5)]
    pd.DataFrame(rows, columns=["model", "dataset", "value"]).assign(benchmark="b").to_csv(tmp_path / "a.csv",
                                                                                           index=False)
    pd.DataFrame([("m0", "d0", 0.9, "b"), ("m0", "d0", 0.9, "c"), ("m1", "d0", 0.1, "c")],
                 columns=["model", "dataset", "value", "benchmark"]).to_csv(tmp_path / "b.csv", index=False)
    pd.DataFrame([("m1", "d0", 0.2, "c")], columns=["model", "dataset", "value", "benchmark"]).to_csv(
        tmp_path / "c.csv", index=False)
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"),
                 str(tmp_path / "c.csv")]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "b", "--budget", "2", "--out", str(out), "--no-plot"]) == 0
    capsys.readouterr()
    warnings = json.loads((out / "manifest.json").read_text())["warnings"]
    assert [w for w in warnings if NOTE in w] == [w for w in warnings if w.startswith("1 cell of the matrix has")] != []


def _reduce_in(tmp_path, monkeypatch, name: str, batches, args, capsys) -> bytes:
    """Ingest the batches (one command each, in order) into ``<name>/store.duckdb`` and reduce there with ``args``,
    the store and the folder named relatively (as the manifest records them): the manifest's bytes."""
    (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path / name)
    for paths in batches:
        assert main(["ingest", "--db", "store.duckdb", "-q", *map(str, paths)]) == 0
    assert main(["reduce", "--db", "store.duckdb", "--seed", "0", "--out", "out", "--no-plot", *args]) == 0
    capsys.readouterr()
    return (tmp_path / name / "out" / "manifest.json").read_bytes()


@pytest.mark.slow
def test_every_eval_ever_files_in_any_order_give_one_manifest(tmp_path, monkeypatch, capsys):
    """HELM Classic's Every Eval Ever records (67 files, one per model): in one command or one at a time backward,
    with a model held out, the same manifest."""
    files = sorted(require(HELM_CLASSIC).rglob("*.json"))
    args = ["--budget", "4", "--exclude-models", "*Grande*"]
    one = _reduce_in(tmp_path, monkeypatch, "one", [files], args, capsys)
    assert json.loads(one)["source"]["excluded_models"]["n_models"] >= 1
    assert _reduce_in(tmp_path, monkeypatch, "backward", [[f] for f in files[::-1]], args, capsys) == one


@pytest.mark.slow
def test_a_leaderboards_rows_in_another_order_give_one_manifest(tmp_path, monkeypatch, capsys):
    """BenchBench's LiveBench table (69 models x 7 columns) and the same rows reversed: one manifest."""
    lines = require(SHARED_DATA / "benchbench" / "leaderboards" / "livebench_240829_holistic.csv").read_text()
    lines = lines.splitlines()
    got = []
    for name, rows in (("forward", lines[1:]), ("reversed", lines[1:][::-1])):
        (tmp_path / f"{name}_files").mkdir()
        path = tmp_path / f"{name}_files" / "livebench_240829_holistic.csv"
        path.write_text("\n".join([lines[0], *rows]) + "\n")
        got.append(_reduce_in(tmp_path, monkeypatch, name, [[path]], ["--budget", "3"], capsys))
    assert got[0] == got[1]
