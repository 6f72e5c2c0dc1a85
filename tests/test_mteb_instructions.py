"""MTEB's instruction retrieval tasks score p-MRR on [-1, 1], 0 when the instructions change nothing (real files)."""

from __future__ import annotations

from pathlib import Path

import harness_ext as hx

FIX = Path(__file__).parent / "fixtures" / "mteb_instructions"


def _matrix(tmp_path, paths, name):
    db = tmp_path / f"{name}.duckdb"
    hx.ingest(paths, store=db)
    return hx.load_matrix(db, benchmark="mteb"), hx.load_matrix(db, benchmark="mteb", normalise="none")


def test_p_mrr_is_read_on_its_signed_scale_whatever_the_other_models(tmp_path):
    """One model below 0 (e5-small, -0.0026) made the column a min-max of the store's models: GritLM-7B's 0.067
    became 1.0 beside it and 0.067 without it. On p-MRR's own scale both stores agree."""
    both, raw = _matrix(tmp_path, [FIX], "both")
    alone, _ = _matrix(tmp_path, [FIX / "GritLM__GritLM-7B"], "alone")
    col = "Core17InstructionRetrieval"
    assert raw.loc["intfloat/multilingual-e5-small", col] < 0 < raw.loc["GritLM/GritLM-7B", col]
    assert abs(both.loc["GritLM/GritLM-7B", col] - 0.0670487257319918) < 1e-9
    assert both.loc["GritLM/GritLM-7B", col] == alone.loc["GritLM/GritLM-7B", col]
    assert both.loc["intfloat/multilingual-e5-small", col] == 0.0  # below the no-skill level, as below chance
    norm = both.attrs["datasets"][col]["normalisation"]
    assert (norm["scale"], norm["lo"], norm["span"], norm["chance"]) == ("bounded", -1.0, 2.0, 0.5)
    assert "Weller et al. 2024" in norm["chance_source"]


COR = Path(__file__).parent / "fixtures" / "mteb_correlations"


def test_sts_and_summarisation_correlations_are_read_on_their_signed_scale(tmp_path):
    """SummEval's main score is a Spearman correlation: one model below 0 (a derived sign-flipped copy) made the column
    a min-max of the store's models, GritLM-7B's 0.303 becoming 0.996 beside it. On -1..1 with 0 as the no-skill
    level, each model keeps its correlation whatever the others, in both MTEB layouts."""
    both, raw = _matrix(tmp_path, [COR], "both")
    alone, _ = _matrix(tmp_path, [COR / "GritLM__GritLM-7B", COR / "intfloat__multilingual-e5-small"], "alone")
    assert raw.loc["derived/summeval-sign-flipped", "SummEval"] < 0
    for model, value in [("GritLM/GritLM-7B", 0.3026222117605986), ("intfloat/multilingual-e5-small", 0.300392485754723),
                         ("komninos", 0.3049084135949722)]:  # komninos: mteb 0.0.2's cos_sim.spearman
        assert abs(both.loc[model, "SummEval"] - value) < 1e-9
    for model in ("GritLM/GritLM-7B", "intfloat/multilingual-e5-small"):
        assert both.loc[model, "SummEval"] == alone.loc[model, "SummEval"]
    assert both.loc["derived/summeval-sign-flipped", "SummEval"] == 0.0  # below the no-skill level
    assert abs(both.loc["intfloat/multilingual-e5-small", "BIOSSES"] - 0.8246332476592856) < 1e-9  # STS
    for col in ("SummEval", "BIOSSES"):
        norm = both.attrs["datasets"][col]["normalisation"]
        assert (norm["scale"], norm["lo"], norm["span"], norm["chance"]) == ("bounded", -1.0, 2.0, 0.5)
        assert "Muennighoff et al. 2023" in norm["chance_source"]
        assert col not in both.attrs["training_dependent"]  # no longer a min-max of the store's models
    pearson = hx.load_matrix(tmp_path / "both.duckdb", benchmark="mteb", metric="dot_pearson")  # secondary metrics too
    assert pearson.attrs["datasets"]["SummEval"]["normalisation"]["scale"] == "bounded"
