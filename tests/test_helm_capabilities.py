"""HELM Capabilities as its leaderboard shows it: an Every Eval Ever record of HELM's published
``capabilities/.../releases/v1.12.0/groups/core_scenarios.json`` (evaleval/every_eval_ever, sliced in
fixtures/helm_projects/capabilities_eee, see PROVENANCE.md). No raw Capabilities run directory was found to
check the run adapter against; its main metrics are checked against schema_capabilities.yaml in test_helm_v3."""

from __future__ import annotations

from pathlib import Path

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

RECORD = Path(__file__).parent / "fixtures" / "helm_projects" / "capabilities_eee"


def test_the_accuracy_tab_is_stored_and_the_efficiency_mean_score_is_not():
    """The record gives "Mean score" twice: 0.405 on the Accuracy tab (the leaderboard's score) and 164.449 on the
    Efficiency tab (seconds); the WildBench column is the rescaled [0, 1] score the leaderboard shows."""
    s = Store.open(":memory:")
    rep = ingest_paths(s, [RECORD], show_progress=False)
    (f,) = rep.files
    assert f.status == "ingested"
    assert any("4 rows of HELM's other leaderboard tabs left out (Efficiency 2, General information 2)" in n
               for n in f.notes)
    rows = sorted(s.con.execute("SELECT d.name, d.metric, d.kind, d.higher_is_better, r.value FROM results r "
                                "JOIN datasets d USING (dataset_id)").fetchall())
    assert rows == [("MMLU-Pro", "COT correct", "dataset", True, 0.292),
                    ("Mean score", "score", "aggregate", True, 0.405),
                    ("WildBench", "WB Score", "dataset", True, 0.628)]
