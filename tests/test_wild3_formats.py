"""Real non-CSV result files read as a new user: an Every Eval Ever record of a partial Inspect run,
MTEB files with a train-only split and with two English subsets (``en``, ``en-ext``).

Provenance: tests/fixtures/wild3/PROVENANCE.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FIX = Path(__file__).parent / "fixtures" / "wild3"


def _store(path):
    s = Store.open(":memory:")
    rep = ingest_paths(s, [path], show_progress=False, options={})
    return s, rep


def test_eee_partial_inspect_run_is_stored_as_logged_and_said():
    s, rep = _store(FIX / "eee")
    assert len(rep.by_status("ingested")) == 1
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert df.loc["ollama/qwen2.5-0.5b", "ai2_arc"] == pytest.approx(1 / 3)
    notes = " ".join(n for f in rep.files for n in f.notes)
    assert "3 of 2,376" in notes


def test_mteb_train_only_split_and_english_subset():
    s, rep = _store(FIX / "mteb")
    assert len(rep.by_status("ingested")) == 2
    df = load_matrix(s, MatrixQuery(normalise="none"))
    # FaroeseSTS has only a train split: its main score is read from it
    assert df.loc["intfloat/e5-small", "FaroeseSTS"] == pytest.approx(0.671035)
    # test split, the "en" subset (the MTEB(eng) leaderboard's), not "en-ext" nor a mean with it
    assert df.loc["intfloat/e5-small", "AmazonCounterfactualClassification"] == pytest.approx(0.734179)
