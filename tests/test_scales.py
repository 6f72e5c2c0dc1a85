"""Scales and chance levels (harness_ext.store.scales) and the matrix normalisation built on them.

Issue 15: "Chance correction silently does nothing when no baseline is known" and "Columns outside [0, 1]
are min-max normalised over whichever models are in the store".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import HELM_CLASSIC, SHARED_DATA, require
from harness_ext.errors import HarnessExtError
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, apply_normalisation, invert_normalisation, load_matrix, params_frame
from harness_ext.store.scales import CHANCE_TABLE, chance_level, infer_scale, load_chance_file

BENCHBENCH = SHARED_DATA / "benchbench" / "leaderboards"


@pytest.mark.parametrize("name,metric,expected", [
    ("hendrycksTest-anatomy", "acc", 0.25), ("mmlu_anatomy", "acc", 0.25), ("mmlu:subject=anatomy", "exact_match", 0.25),
    ("MMLU", "EM", 0.25), ("MMLU All Subjects", "EM", 0.25), ("MMLU-Pro", "score", 0.1), ("mmlu_pro", "acc", 0.1),
    ("arc_challenge", "acc_norm", 0.25), ("ARC-C", "score", 0.25), ("HellaSwag", "EM", 0.25), ("winogrande", "acc", 0.5),
    ("OpenbookQA", "EM", 0.25), ("MedQA", "EM", 0.25), ("BoolQ", "EM", 0.5), ("piqa", "acc", 0.5),
    ("legalbench:subset=abercrombie", "quasi_exact_match", 0.2), ("leaderboard_bbh_navigate", "acc_norm", 0.5),
    ("bbh_cot_fewshot_date_understanding", "exact_match,get-answer", 1 / 6), ("GPQA", "score", 0.25),
    ("leaderboard_gpqa_diamond", "acc_norm", 0.25), ("GSM8K", "EM", 0.0), ("NarrativeQA", "F1", 0.0),
])
def test_builtin_chance_levels(name, metric, expected):
    c, source = chance_level(name, metric)
    assert c == pytest.approx(expected) and source


def test_no_chance_for_non_accuracy_metrics_or_unknown_tasks():
    assert chance_level("lambada_openai", "perplexity") == (None, None)
    assert chance_level("arc_easy", "brier_score") == (None, None)
    assert chance_level("truthfulqa_mc1", "acc") == (None, None)  # varying number of choices
    assert chance_level("MS MARCO (TREC)", "NDCG@10") == (None, None)
    assert all(0 <= v[0] < 1 for v in CHANCE_TABLE.values() if v[0] is not None)


def test_user_chance_file(tmp_path):
    f = tmp_path / "chance.yaml"
    f.write_text("MS MARCO (TREC): 0.1\nraft: {choices: 3}\n'legalbench_*': {chance: 0.5, source: binary}\n")
    user = load_chance_file(f)
    assert chance_level("MS MARCO (TREC)", "NDCG@10", user=user) == (0.1, "user file chance.yaml")
    assert chance_level("RAFT", "EM", user=user)[0] == pytest.approx(1 / 3)
    assert chance_level("legalbench_hearsay", "acc", user=user) == (0.5, "binary")
    (tmp_path / "bad.yaml").write_text("x: 1.5\n")
    with pytest.raises(HarnessExtError, match="bad.yaml.*'x'.*\\[0, 1\\)"):
        load_chance_file(tmp_path / "bad.yaml")


def test_helm_classic_matrix_reports_unknown_chance_and_uses_the_table(real_store):
    from harness_ext.store.db import Store

    with Store.open(real_store, read_only=True) as s:
        df = load_matrix(s, MatrixQuery(benchmarks=("helm_classic",)))
    md = df.attrs["datasets"]
    assert md["BoolQ"]["normalisation"]["chance"] == 0.5 and md["MMLU"]["normalisation"]["chance"] == 0.25
    assert md["NarrativeQA"]["normalisation"]["chance_source"].startswith("free-form")
    assert df.attrs["no_chance"] == ["MS MARCO (TREC)", "RAFT", "TruthfulQA"]
    assert df.attrs["training_dependent"] == []


def test_scale_inference_is_categorical():
    assert infer_scale([0.2, 0.9]) == ("proportion", 0.0, 1.0)
    assert infer_scale([12.0, 88.0], metric="acc") == ("percent", 0.0, 100.0)
    assert infer_scale([12.0, 88.0], metric="perplexity")[0] == "perplexity"
    assert infer_scale([12.0, 88.0], percent_ok=False)[0] == "unbounded"
    assert infer_scale([855.0, 1300.0], name="arena_elo")[0] == "elo"
    assert infer_scale([8.9], name="MT-bench") == ("bounded", 1.0, 10.0)
    assert infer_scale([0.4], declared_lo=0, declared_hi=1) == ("proportion", 0.0, 1.0)


def test_leaderboard_scales_do_not_depend_on_the_models(tmp_path):
    """Elo and percentage columns map through fixed transforms: the same score normalises the same way
    whichever other models are in the store, and inverts exactly."""
    root = require(BENCHBENCH)
    from harness_ext.store.db import Store

    arena = root / "chatbot_arena_241104_holistic.csv"
    lines = arena.read_text().splitlines()
    half = tmp_path / "chatbot_arena_241104_holistic.csv"
    half.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    out = []
    for f in (arena, half):
        with Store.open(":memory:") as s:
            ingest_paths(s, [f, root / "arena_hard_240829_holistic.csv"], show_progress=False)
            out.append(load_matrix(s, MatrixQuery()))
    full, part = out
    common = part.index[part["arena_elo"].notna()]
    assert len(common) > 50
    assert np.allclose(full.loc[common, "arena_elo"], part.loc[common, "arena_elo"])
    norm = full.attrs["datasets"]["arena_elo"]["normalisation"]
    assert norm["transform"] == "elo" and norm["ref"] == 1000.0 and norm["scale"] == "elo"
    assert full.attrs["datasets"]["arena_hard"]["normalisation"]["span"] == 100.0
    params = params_frame({c: full.attrs["datasets"][c]["normalisation"] for c in full.columns}, full.columns)
    raw = np.array([[1250.0, 55.0]])
    z = apply_normalisation(raw, params)
    assert z[0, 0] == pytest.approx(1 / (1 + 10 ** (-250 / 400))) and z[0, 1] == pytest.approx(0.55)
    assert np.allclose(invert_normalisation(z, params), raw)


def test_old_manifest_normalisation_without_transform_is_linear():
    params = params_frame({"a": {"lo": 0.0, "span": 100.0, "flip": False, "chance": 0.25, "clip": True}}, ["a"])
    assert apply_normalisation(np.array([[62.5]]), params)[0, 0] == pytest.approx(0.5)


@pytest.mark.parametrize("task, expected", [
    ("bigbench_date_understanding", 1 / 6), ("bigbench_causal_judgement", 0.5),
    ("bigbench_formal_fallacies_syllogisms_negation", 0.5),  # BBH's formal_fallacies, v0.3's spelling
    ("bigbench_logical_deduction_seven_objects", 1 / 7),
    ("bigbench_dyck_languages", None),  # free-form in BBH; BIG-bench's multiple-choice version: options unknown
    ("bigbench_geometric_shapes", None),  # not in the table
])
def test_lm_eval_v03_bigbench_tasks_take_the_bbh_chance(task, expected):
    """lm-eval v0.3 scores its bigbench_<task> runs by multiple_choice_grade: no chance level was found
    (the table knows bbh_<task>, and multiple_choice_grade was not an accuracy metric)."""
    got = chance_level(task, "multiple_choice_grade")[0]
    assert got == (None if expected is None else pytest.approx(expected))


def test_lm_eval_v03_bbh_file_is_chance_corrected():
    """A real v0.3 BBH run (LLaMA-7B, 3-shot, lm-eval's v0.3 results folder): its tasks get BBH's chance."""
    from harness_ext.store.db import Store

    f = require(SHARED_DATA / "lm-eval-harness" / "v03_results_master_2023-07-31" / "results" / "llama" / "llama-7B"
                / "llama-7B_bbh_3-shot.json")
    with Store.open(":memory:") as s:
        ingest_paths(s, [f], show_progress=False)
        df = load_matrix(s, MatrixQuery(benchmarks=("lm_eval",)))
    md = df.attrs["datasets"]
    assert md["bigbench_date_understanding"]["normalisation"]["chance"] == pytest.approx(1 / 6)
    assert md["bigbench_formal_fallacies_syllogisms_negation"]["normalisation"]["chance"] == 0.5
    assert md["bigbench_causal_judgement"]["normalisation"]["chance_source"] == "2 options (BIG-Bench Hard task)"
    # BBH's free-form dyck_languages and the two tasks the table lacks: no chance level, and said so
    assert df.attrs["no_chance"] == ["bigbench_dyck_languages", "bigbench_geometric_shapes",
                                     "bigbench_reasoning_about_colored_objects"]
