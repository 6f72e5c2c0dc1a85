"""``info --conflicts`` says on how many documents each of a cell's values was measured.

Real lm-eval runs of one model on GPQA Diamond (tests/fixtures/lm_eval_limit and lm_eval_v04, provenance there): with
``--limit 50`` (0.46), ``--limit 100`` (0.51) and on all 198 questions (0.4949). Ingested in date order, the first
(50 questions) is the cell's value; the conflict table listed three values without saying which run was whole.
"""

from __future__ import annotations

from pathlib import Path

from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIX = Path(__file__).parent / "fixtures"
RUNS = [FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-13-05.882357.json",
        FIX / "lm_eval_v04" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json",
        FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-17-21.689149.json"]


def test_each_conflicting_value_has_its_document_count(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    with Store.open(str(db)) as s:
        report = ingest_paths(s, RUNS, show_progress=False)
        assert [f.status for f in report.files] == ["ingested"] * 3
        c = s.conflicts()
    acc = c[c.metric == "acc"]
    assert acc.value.tolist() == [0.46, 0.51, 0.494949494949495]
    assert acc.n_samples.tolist() == [50, 100, 198]
    assert main(["info", "--db", str(db), "--conflicts"]) == 0
    out = capsys.readouterr().out
    assert "n_samples" in out and " 198 " in out
