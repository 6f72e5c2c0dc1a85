"""HELM Safety (v3 runs, stanford-crfm/helm): a run whose main metric is the safety score, and the
helm-summarize tables. Real slice in fixtures/helm_safety (see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FIX = Path(__file__).parent / "fixtures" / "helm_safety" / "runs" / "v3"


def _store(paths):
    s = Store.open(":memory:")
    return s, ingest_paths(s, paths, show_progress=False)


def test_harm_bench_run_is_read_with_its_safety_score():
    """It was refused: "scenario 'harm_bench' is not in the main-metric table and none of exact_match, ..."."""
    s, rep = _store([FIX / "harm_bench:model=meta_llama-3-70b"])
    assert len(rep.by_status("ingested")) == 1 and not rep.by_status("skipped")
    rows = s.con.execute("SELECT d.name, d.metric, d.is_primary, r.value, m.name FROM results r "
                         "JOIN datasets d USING (dataset_id) JOIN models m USING (model_id)").fetchall()
    # the unperturbed score (the perturbed ones equal it here, and are not read)
    assert rows == [("harm_bench", "harm_bench_score", True, 0.125, "meta/llama-3-70b")]


def test_safety_tables():
    s, rep = _store([FIX / "groups"])
    assert len(rep.by_status("ingested")) == 2
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert df.shape == (9, 5)
    assert df.loc["meta/llama-3-8b", "SimpleSafetyTests"] == 0.375
    assert df.loc["meta/llama-3-70b", "Anthropic Red Team"] == 0.875
    # bbq.json: only the first column of the run group (BBQ accuracy), not # eval or # prompt tokens
    assert df.loc["google/gemini-1.5-pro-001", "bbq_subject:all"] == 0.0
    assert df.loc["mistralai/mixtral-8x22b", "bbq_subject:all"] == 1.0
    wins = s.con.execute("SELECT COUNT(*) FROM datasets WHERE kind = 'aggregate'").fetchone()[0]
    assert wins == 1  # the Accuracy table's Mean win rate; the Efficiency table's empty cells add nothing
