"""Real result files from public repositories that the project had not seen, read as a new user would.

Each case is a file (or a slice of one, see its folder's PROVENANCE.md) that ``ingest`` refused or passed over
without saying why.
"""

from __future__ import annotations

from pathlib import Path

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ART_RUN = FIXTURES / "helm_art" / "runs" / "v3" / "anthropic_red_team:model=meta_llama-3-70b"


def _store(*paths):
    s = Store.open(":memory:")
    return s, ingest_paths(s, [str(p) for p in paths], show_progress=False)


def test_helm_safety_v3_anthropic_red_team_read_by_art_score():
    """The first HELM Safety release wrote Anthropic Red Team's main metric as ``art_score`` (its group table shows
    that value as the run's safety score). The run was refused: "main metric safety_score ... is not in stats.json"."""
    s, rep = _store(ART_RUN)
    (f,) = rep.files
    assert f.status == "ingested", f.reason
    rows = s.con.execute("SELECT m.name, d.name, d.metric, r.value FROM results r JOIN datasets d USING (dataset_id) "
                         "JOIN models m USING (model_id) WHERE d.is_primary").fetchall()
    assert [(r[2], r[3]) for r in rows] == [("art_score", 0.875)]
    assert "llama-3-70b" in rows[0][0]
