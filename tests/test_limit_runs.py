"""A quick ``--limit`` run beside the whole run of one model and task: the cell takes the whole run's value.

Real lm-eval 0.4.11 runs of Qwen/Qwen3.5-9B on GPQA Diamond, zero-shot (tests/fixtures/lm_eval_limit and
lm_eval_v04, provenance there): with ``--limit 50`` (``acc`` 0.46 on 50 of 198 questions) and on all 198 (0.4949...).
The store kept the first-ingested value, so the matrix, ``info --conflicts`` and ``predict`` gave 0.46 or 0.4949
depending on the order the files were ingested. Now a cell whose values all say on how many documents they were
measured, on different numbers, takes the value measured on the most; otherwise the first-ingested, as before (the
counts below are made unknown or equal by editing a copy of a real file, and said so).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.predict import conflict_warnings, new_model_matrix
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.pivot import conflicts_note

FIX = Path(__file__).parent / "fixtures"
LIMIT50 = FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-13-05.882357.json"
LIMIT100 = FIX / "lm_eval_v04" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json"
WHOLE = FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-17-21.689149.json"
TASK = "gpqa_diamond_zeroshot"
WHOLE_ACC, LIMIT_ACC = 0.494949494949495, 0.46
ORDERS = [pytest.param([LIMIT50, WHOLE], id="limit-first"), pytest.param([WHOLE, LIMIT50], id="whole-first"),
          pytest.param([LIMIT50, LIMIT100, WHOLE], id="three-runs"),
          pytest.param([WHOLE, LIMIT100, LIMIT50], id="three-runs-reversed")]
MANIFEST = {"datasets": [{"name": TASK, "benchmark": "lm_eval", "metric": "acc", "num_fewshot": 0}], "subset": []}


def _store(tmp_path, files) -> Path:
    """A store with ``files`` ingested one call each, in that order."""
    db = tmp_path / "s.duckdb"
    with Store.open(str(db)) as s:
        for f in files:
            assert [x.status for x in ingest_paths(s, [f], show_progress=False).files] == ["ingested"]
    return db


def _acc(db, rows: str = "model") -> tuple:
    """The cell's raw value in the matrix with ``rows``, and the matrix's attrs (a manifest's matrix)."""
    with Store.open(str(db), read_only=True) as s:
        m = load_matrix(s, MatrixQuery(normalise="none", rows=rows, metric="acc"))
    return float(m.iloc[0][TASK]), m.attrs


def _edited(tmp_path, src: Path, name: str, samples) -> Path:
    """A copy of the real file ``src`` whose ``n-samples`` entry is removed (``samples`` None) or says ``samples``
    documents."""
    doc = json.loads(src.read_text())
    if samples is None:
        del doc["n-samples"]
    else:
        doc["n-samples"][TASK] = {"original": 198, "effective": samples}
    out = tmp_path / name / "Qwen__Qwen3.5-9B" / src.name
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("files", ORDERS)
def test_the_matrix_takes_the_whole_run_in_any_order(tmp_path, files):
    db = _store(tmp_path, files)
    for rows in ("model", "model_shots"):
        value, attrs = _acc(db, rows)
        assert value == pytest.approx(WHOLE_ACC, abs=1e-12), rows
    assert attrs.get("conflicts") is None  # model_shots: no manifest note
    value, attrs = _acc(db)
    assert (attrs["conflicts"], attrs["conflicts_by_documents"]) == (1, 1)
    assert conflicts_note(attrs).startswith("1 cell of the matrix has values that disagree between source files; "
                                            "it takes the value measured on the most documents")


@pytest.mark.parametrize("files", ORDERS)
def test_info_conflicts_says_which_value_is_used(tmp_path, files, capsys):
    db = _store(tmp_path, files)
    with Store.open(str(db), read_only=True) as s:
        c = s.conflicts()
        assert s.conflict_counts() == (2, 2)  # acc and acc_norm
    acc = c[c.metric == "acc"]
    used = acc[acc.used != ""]
    assert used.value.tolist() == [pytest.approx(WHOLE_ACC)] and used.used.tolist() == ["most documents"]
    assert used.n_samples.tolist() == [198] and used.source.tolist() == [str(WHOLE)]
    assert main(["info", "--db", str(db), "--conflicts", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = [r for r in doc["tables"]["conflicts"] if r["metric"] == "acc" and r["used"]]
    assert [(r["value"], r["used"]) for r in rows] == [(pytest.approx(WHOLE_ACC), "most documents")]
    assert main(["info", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "2 cells with conflicting values, 2 of them decided by document count" in out
    assert ("2 cells have values that disagree between source files: 2 take the value measured on the most "
            "documents, 0 the first-ingested") in out


@pytest.mark.parametrize("files", ORDERS[:2])
def test_predict_reads_the_whole_run_of_the_new_model(files):
    raw, _, _ = new_model_matrix(MANIFEST, files)
    assert float(raw.loc["Qwen/Qwen3.5-9B", TASK]) == pytest.approx(WHOLE_ACC, abs=1e-12)
    (warning,) = conflict_warnings(raw.attrs["ingest_conflicts"])
    assert warning.startswith("reading the new results: 2 scores of Qwen/Qwen3.5-9B on 1 task differ between its "
                              "files")
    assert f"2 are taken from the run measured on the most documents ({WHOLE}), not from {LIMIT50}" in warning


@pytest.mark.parametrize("first", ["limit", "whole"])
def test_an_unknown_count_keeps_the_first_ingested(tmp_path, first):
    """The ``--limit 50`` file with its ``n-samples`` entry removed: its count is unknown, the order decides."""
    limit = _edited(tmp_path, LIMIT50, "no_counts", None)
    files = [limit, WHOLE] if first == "limit" else [WHOLE, limit]
    db = _store(tmp_path, files)
    value, attrs = _acc(db)
    assert value == pytest.approx(LIMIT_ACC if first == "limit" else WHOLE_ACC, abs=1e-12)
    assert (attrs["conflicts"], attrs["conflicts_by_documents"]) == (1, 0)
    assert "0 take the value measured on the most documents, 1 the value ingested first" in conflicts_note(attrs)
    with Store.open(str(db), read_only=True) as s:
        c = s.conflicts()
    assert c[c.used != ""].used.unique().tolist() == ["first ingested"]
    raw, _, _ = new_model_matrix(MANIFEST, files)
    assert float(raw.iloc[0][TASK]) == pytest.approx(value, abs=1e-12)
    (warning,) = conflict_warnings(raw.attrs["ingest_conflicts"])
    assert f"each is taken from the file read first, in path order ({files[0]}), not from {files[1]}" in warning


def test_equal_counts_keep_the_first_ingested(tmp_path):
    """The ``--limit 50`` file edited to say 198 documents, like the whole run: the counts do not decide."""
    limit = _edited(tmp_path, LIMIT50, "equal_counts", 198)
    for files, want in (([limit, WHOLE], LIMIT_ACC), ([WHOLE, limit], WHOLE_ACC)):
        db = _store(tmp_path / files[0].parent.parent.name, files)
        value, attrs = _acc(db)
        assert value == pytest.approx(want, abs=1e-12)
        assert attrs["conflicts_by_documents"] == 0
        raw, _, _ = new_model_matrix(MANIFEST, files)
        assert float(raw.iloc[0][TASK]) == pytest.approx(want, abs=1e-12)


def test_the_rule_picks_among_three_files_by_the_counts_alone(tmp_path):
    """Whole run ingested between the two ``--limit`` runs; ``--source`` leaving the whole run out: then the
    ``--limit 100`` run has the most documents."""
    db = _store(tmp_path, [LIMIT50, WHOLE, LIMIT100])
    assert _acc(db)[0] == pytest.approx(WHOLE_ACC, abs=1e-12)
    with Store.open(str(db), read_only=True) as s:
        m = load_matrix(s, MatrixQuery(normalise="none", metric="acc", source="*T11-1[35]*"))
    assert float(m.iloc[0][TASK]) == pytest.approx(0.51, abs=1e-12)
