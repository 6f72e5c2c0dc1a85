"""benchmarks/quality_holdout.py runs end to end in quick mode on a real matrix and prints its two tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import HELM_CLASSIC, require

REPO = Path(__file__).resolve().parents[1]


def test_quality_holdout_quick(tmp_path, capsys):
    require(HELM_CLASSIC)
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import quality_holdout as qh
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    out = tmp_path / "rows.json"
    assert qh.main(["--quick", "--matrices", "helm_classic", "--splits", "2", "--seeds", "1",
                    "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "(a) held-out models" in text and "(b) cell completion" in text
    row = json.loads(out.read_text())[0]
    assert row["matrix"] == "helm_classic" and row["shape"].startswith("67 x")
    for key in ("a_spearman", "a_agg_mae", "a_cov", "a_ratio_ridge", "a_ratio_bp", "b_med_ae", "b_cov", "b_ratio_bp"):
        assert row[key] == row[key], key  # finite, not NaN
    assert 0.5 < row["b_cov"] <= 1.0


def test_model_name_normalisation():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from quality_holdout import normalise_model_name
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    names = ["GPT-4o (2024-05-13)", "gpt-4o-2024-05-13", "openai/GPT-4o-20240513"]
    assert {normalise_model_name(n) for n in names} == {"gpt4o20240513"}
