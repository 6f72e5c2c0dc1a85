"""Every Eval Ever records of Inspect AI runs scored on a few samples: the sample count was not read.

Such a record (``source_type: evaluation_run``) says ``samples_number: 2376`` (ARC's size) beside ``sample_ids`` listing
the five samples a ``--limit 5`` run scored, and its score (1.0) is over those five. harness-ext stored the score
with no sample count, so beside a whole run of the same model the cell went to whichever file was ingested first,
and nothing said the score came from five questions. fixtures/eee_limited holds the real record (PROVENANCE.md);
fixtures/every_eval_ever/ai2_arc holds a real one scored on 3 of 2376. The whole run in the last test is a copy of
the real record made here with all 2376 ids and another score: no whole run of that model is published."""

from __future__ import annotations

import json
from pathlib import Path

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FIX = Path(__file__).parent / "fixtures"
LIMITED = FIX / "eee_limited" / "ai2_arc" / "anthropic" / "claude-sonnet-4-0" / "0479dd23-e008-47f5-a790-15e7cbb08fc7.json"
QWEN = FIX / "every_eval_ever" / "ai2_arc" / "ollama" / "qwen2.5-0.5b" / "75e7b3c4-5d2f-4526-aef0-9ccd88690f5a.json"


def _counts(s) -> dict:
    return dict(s.con.execute("SELECT m.name, r.n_samples FROM results r JOIN models m ON m.model_id = r.model_id").fetchall())


def test_a_limited_run_stores_the_samples_it_scored_and_says_so():
    s = Store.open(":memory:")
    rep = ingest_paths(s, [LIMITED, QWEN], show_progress=False)
    assert [f.status for f in rep.files] == ["ingested", "ingested"]
    counts = _counts(s)
    assert counts == {"anthropic/claude-sonnet-4-0": 5, "ollama/qwen2.5-0.5b": 3}
    notes = {Path(f.path).name: " ".join(f.notes) for f in rep.files}
    assert "scored on part of its dataset" in notes[LIMITED.name] and "ai2_arc 5 of 2,376" in notes[LIMITED.name]
    assert "ai2_arc 3 of 2,376" in notes[QWEN.name]


def test_a_whole_run_takes_the_cell_from_a_limited_one_in_either_order(tmp_path):
    doc = json.loads(LIMITED.read_text())
    ev = doc["evaluation_results"][0]
    ev["source_data"]["sample_ids"] = list(range(1, 2377))
    ev["score_details"]["score"] = 0.95
    whole = tmp_path / "whole" / LIMITED.name
    whole.parent.mkdir()
    whole.write_text(json.dumps(doc))
    for order in ([LIMITED, whole], [whole, LIMITED]):
        s = Store.open(":memory:")
        ingest_paths(s, order, show_progress=False)
        m = load_matrix(s, MatrixQuery(normalise="none"))
        assert m.loc["anthropic/claude-sonnet-4-0"].iloc[0] == 0.95
