"""Every Eval Ever: model identity when a leaderboard's id is cut short, given twice, or spelled in two cases.

RewardBench's table cuts long names: nine records of ``ai2/tulu-2-7b-rm-v0-nectar-binarized-3.8m-check...`` (nine
checkpoints, Score 0.6808-0.7058) were one model with 32 conflicting values, the first file's used. The Open LLM
Leaderboard scored ``DeepMount00/Llama-3.1-8b-ITA`` and ``-Ita`` (one hub id in two cases) as two submissions (IFEval
0.7917 and 0.5365): merged as one model, one row showed one submission's scores under the other's name, with no
conflict reported. Real records in fixtures/every_eval_ever/model_ids (see fixtures/every_eval_ever/PROVENANCE.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import SHARED_DATA, require
from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.types import eee_model_name, is_record_variant, is_truncated_id, record_variant

FIX = Path(__file__).parent / "fixtures" / "every_eval_ever" / "model_ids"
CUT = FIX / "reward-bench" / "ai2" / "tulu-2-7b-rm-v0-nectar-binarized-3.8m-check"
TULU = "ai2/tulu-2-7b-rm-v0-nectar-binarized-3.8m-check..."
#: The three records' Chat scores, by file.
CHAT = {"0ba5ce6c-f311-4b02-a67a-d49539119a8e.json": 0.9525, "862f3d57-8f5f-4372-b6fb-876fb35efba4.json": 0.9302,
        "c1331fa1-7793-4526-b24b-02261bb4437f.json": 0.9497}
ITA = FIX / "hfopenllm_v2" / "DeepMount00" / "Llama-3.1-8b-ITA"


def _matrix(store, **kw):
    return load_matrix(store, MatrixQuery(normalise="none", **kw)).sort_index()


def _names(store) -> list:
    return sorted(n for (n,) in store.con.execute("SELECT name FROM models").fetchall())


def test_records_of_a_truncated_id_are_one_model_each_without_conflicts():
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [CUT], show_progress=False)
        assert not report.conflicts and not report.by_status("skipped")
        df = _matrix(s, benchmarks=["rewardbench"])
        assert len(df) == 3 and all(m.startswith(f"{TULU} (record ") for m in df.index)
        assert sorted(df["Chat"]) == sorted(CHAT.values())
        for f, chat in CHAT.items():  # each file's scores under its own name
            name = eee_model_name(*_info_and_results(CUT / f))[1]
            assert df.loc[name, "Chat"] == chat
        lines = report.note_lines()
        assert any(line.startswith(f"model id {TULU} is cut short by its leaderboard") and "(3 files" in line
                   for line in lines)
        assert any(line.startswith(f"1 model id cut short by its leaderboard ({TULU}) has records with different "
                                   "scores: each is its own model (3 in all)") for line in lines)
        assert report.variants == {TULU: sorted(df.index)}


def _info_and_results(path: Path) -> tuple:
    doc = json.loads(path.read_text())
    return doc["model_info"], doc["evaluation_results"]


def test_same_names_in_any_order_and_identical_records_are_one_model(tmp_path):
    """One record alone keeps the truncated id (the name of its only model); the three in any order and batches
    give the same names and matrix; a copy with the same scores (another file name and timestamp) is the same model:
    its values are duplicates, not conflicts."""
    files = sorted(CUT.glob("*.json"))
    copy = tmp_path / "ffffffff-0000-4000-8000-000000000000.json"
    doc = json.loads(files[0].read_text())
    doc["retrieved_timestamp"] = "1800000000.0"
    doc["evaluation_id"] += "-again"
    copy.write_text(json.dumps(doc))
    results = []
    for batches in ([files], [files[::-1]], [[files[2]], [files[0]], [files[1], copy]]):
        with Store.open(":memory:") as s:
            for i, batch in enumerate(batches):
                report = ingest_paths(s, batch, show_progress=False)
                assert not report.conflicts
                if i == 0 and len(batch) == 1:
                    assert list(_matrix(s).index) == [TULU]
            if copy in batches[-1][-1:]:
                assert report.files[-1].status == "ingested" and s.counts()["conflicts"] == 0  # 4 duplicate values
            results.append((_names(s), _matrix(s, aggregates="include")))
    (names, df), *rest = results
    assert len(names) == 3
    for other_names, other in rest:
        assert other_names == names and other.equals(df)


def test_the_name_rule():
    info, results = _info_and_results(CUT / "0ba5ce6c-f311-4b02-a67a-d49539119a8e.json")
    assert is_truncated_id(TULU) and is_truncated_id("org/long-name\u2026") and not is_truncated_id("org/m")
    assert eee_model_name(info) == (TULU, TULU)  # no results given: the id as it is
    name = eee_model_name(info, results)[1]
    assert name == f"{TULU} ({record_variant(results)})" and is_record_variant(record_variant(results))
    assert record_variant(results[::-1]) == record_variant(results)  # the scores, not their order
    info = dict(info, additional_details={"precision": "bfloat16"})
    assert eee_model_name(info, results)[1] == f"{TULU} (bfloat16, {record_variant(results)})"
    assert not is_record_variant("bfloat16") and is_record_variant("bfloat16, record 0123abcd")
    ok = {"id": "org/m", "additional_details": {"precision": "float16"}}
    assert eee_model_name(ok, results) == ("org/m", "org/m (float16)")  # an id not cut short: as before


def test_instance_file_of_a_truncated_record_meets_its_results(tmp_path):
    from harness_ext.store.samples import read_eee_samples

    src = Path(__file__).parent / "fixtures" / "eee_samples" / "mmlu" / "openai" / "gpt2" / "None_samples.jsonl"
    lines = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    for line in lines:
        line["model_id"] = TULU
    (tmp_path / "abc_samples.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    shutil.copy(CUT / "0ba5ce6c-f311-4b02-a67a-d49539119a8e.json", tmp_path / "abc.json")
    info, results = _info_and_results(tmp_path / "abc.json")
    assert read_eee_samples(tmp_path / "abc_samples.jsonl")[0] == eee_model_name(info, results)[1]


def test_predict_eee_record_of_a_truncated_record_names_the_stored_model():
    import types

    from harness_ext.methods.reduction.predict_export import eee_model_info

    name = f"{TULU} (record 0123abcd)"
    pred = types.SimpleNamespace(variants={name: (TULU, "record 0123abcd")})
    assert eee_model_info(pred, name) == {"name": name, "id": name}


def test_rewardbench_and_rewardbench_2_records_of_one_model_are_two_benchmarks():
    """45 RewardBench models have a RewardBench record and a RewardBench 2 record: one model, two benchmarks (both
    name a ``Safety`` column, with different scores), no conflict."""
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [FIX / "reward-bench" / "ShikaiChen"], show_progress=False)
        assert not report.conflicts and s.counts()["conflicts"] == 0
        model = "ShikaiChen/LDL-Reward-Gemma-2-27B-v0.1"
        assert _names(s) == [model]
        assert _matrix(s, benchmarks=["rewardbench"]).loc[model, "Safety"] == 0.9378
        assert _matrix(s, benchmarks=["rewardbench_2"]).loc[model, "Safety"] == 0.9222


def test_case_spellings_merge_unless_their_scores_differ(tmp_path, capsys):
    """``Anthropic/claude-3-opus-20240229`` (RewardBench) and ``anthropic/...`` (RewardBench 2) give no result twice:
    one model. ``DeepMount00/Llama-3.1-8b-ITA`` and ``-Ita`` (bfloat16 both) give IFEval 0.7917 and 0.5365: kept
    apart, said in the ingest report, and offered by ``models --unmatched``."""
    db, js = tmp_path / "s.duckdb", tmp_path / "ingest.json"
    assert main(["ingest", "--db", str(db), str(FIX / "reward-bench" / "Anthropic"), str(ITA), "--json", str(js)]) == 0
    err = capsys.readouterr().err
    assert ("2 pairs of model names differ only by case: 1 merged as one model (a hub id ignores case), 1 kept apart "
            "as two models because their scores for one result differ (two submissions), e.g. "
            "DeepMount00/Llama-3.1-8b-ITA (bfloat16) and DeepMount00/Llama-3.1-8b-Ita (bfloat16)") in err
    summary = json.loads(js.read_text())["summary"]
    assert summary["names_differing_by_case"] == {
        "pairs": 2, "kept_apart": [["DeepMount00/Llama-3.1-8b-ITA (bfloat16)", "DeepMount00/Llama-3.1-8b-Ita (bfloat16)"]]}
    with Store.open(str(db), read_only=True) as s:
        df = _matrix(s, benchmarks=["hf_open_llm_v2"])
        assert df.loc["DeepMount00/Llama-3.1-8b-ITA", "IFEval"] == 0.7917
        assert df.loc["DeepMount00/Llama-3.1-8b-Ita", "IFEval"] == 0.5365
        claude = _matrix(s, benchmarks=["rewardbench", "rewardbench_2"])
        # 4 + 6 datasets, each benchmark's Safety its own column
        assert len(claude) == 1 and claude.notna().sum().sum() == 10
        assert claude.iloc[0]["rewardbench/Safety"] == 0.8662 and claude.iloc[0]["rewardbench_2/Safety"] == 0.8378
    capsys.readouterr()
    assert main(["models", "--db", str(db), "--unmatched"]) == 0
    out = capsys.readouterr().out
    assert "1 pair of models" in out and "same name but for case, not merged" in out


def test_case_spellings_with_the_same_scores_still_merge(tmp_path):
    """A second spelling whose scores agree (a re-export) is one model, as the hub's ignoring case says."""
    src = ITA / "baf93ef6-56f3-4809-93f6-32dcf4730388.json"
    doc = json.loads(src.read_text())
    doc["model_info"]["id"] = "deepmount00/llama-3.1-8b-ita"
    (tmp_path / "lower.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [src, tmp_path / "lower.json"], show_progress=False)
        assert len(_matrix(s)) == 1 and report.case_names[2] == 1 and not report.case_names[0]
        assert any(line == "1 pair of model names differ only by case: 1 merged as one model (a hub id ignores case)"
                   for line in report.note_lines())


@pytest.mark.slow
def test_shared_reward_bench_has_no_conflict_left():
    """The shared data's 384 RewardBench records: 32 conflicting values (all nine truncated checkpoints') before,
    none now; 331 stored names then, 339 now (the nine checkpoints apart)."""
    src = require(SHARED_DATA / "every_eval_ever" / "data" / "reward-bench")
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [src], show_progress=False)
        assert len(report.by_status("ingested")) == 384 and not report.conflicts
        assert s.counts()["models"] == 339 and s.counts()["conflicts"] == 0
        assert list(report.variants) == [TULU] and len(report.variants[TULU]) == 9
        clashing, every, merged = report.case_names
        assert not clashing and len(every) == merged == 3  # Anthropic/ and anthropic/ claude-3 (v1 and v2)
