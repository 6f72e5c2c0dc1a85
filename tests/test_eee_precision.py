"""Every Eval Ever: one repository evaluated at two precisions is two models, not one model with conflicts.

The Open LLM Leaderboard v2 lists a repository run in ``float16`` and in ``bfloat16`` as two rows with their own
scores (``model_info.additional_details.precision`` in its Every Eval Ever records); 78 of its repositories have
both. Ingest stored them as one model, counted the second precision's six scores as conflicts and used the scores
of whichever file came first. Real records in fixtures/every_eval_ever/hfopenllm_v2 (see its PROVENANCE.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import SHARED_DATA, require
from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.identity import resolve
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.samples import read_eee_samples

FIX = Path(__file__).parent / "fixtures" / "every_eval_ever" / "hfopenllm_v2"
SPLIT = FIX / "recoilme" / "recoilme-gemma-2-9B-v0.2"
FLOAT16, BFLOAT16 = SPLIT / "7c156689-9668-4ded-bacc-c88a03ad1526.json", SPLIT / "7e43f187-1959-4dfe-802f-094ba88f3b0d.json"
ONE = FIX / "lemon07r" / "Gemma-2-Ataraxy-v2f-9B" / "0e5f3393-8a6a-4f2f-948a-a37ae4d8fdeb.json"
NAME = "recoilme/recoilme-gemma-2-9B-v0.2"


def _matrix(store):
    return load_matrix(store, MatrixQuery(normalise="none")).sort_index()


def _ingest(store, paths):
    report = ingest_paths(store, paths, show_progress=False)
    assert not report.by_status("skipped") and not report.conflicts
    return report


def test_two_precisions_are_two_models_and_one_precision_keeps_its_plain_id():
    with Store.open(":memory:") as s:
        report = _ingest(s, [FIX])
        df = _matrix(s)
        assert list(df.index) == ["lemon07r/Gemma-2-Ataraxy-v2f-9B", f"{NAME} (bfloat16)", f"{NAME} (float16)"]
        assert df.loc[f"{NAME} (float16)", "IFEval"] == 0.7592 and df.loc[f"{NAME} (bfloat16)", "IFEval"] == 0.2747
        assert report.variants == {NAME: [f"{NAME} (bfloat16)", f"{NAME} (float16)"]}
        assert any(line.startswith("1 model in the store has results at more than one variant (a precision")
                   for line in report.note_lines())


def test_same_store_whatever_the_order_and_once_only():
    """float16 first then bfloat16 in a later ingest, or the reverse, or both at once: the same matrix; the plain
    name while one precision is stored; ingesting again changes nothing."""
    stores = []
    for batches in ([[FLOAT16], [ONE], [BFLOAT16]], [[BFLOAT16, ONE], [FLOAT16]], [[ONE, FLOAT16, BFLOAT16]]):
        s = Store.open(":memory:")
        for i, batch in enumerate(batches):
            _ingest(s, batch)
            if i == 0 and len(batch) == 1:  # one precision so far: the plain id, as any other source names it
                assert NAME in set(_matrix(s).index)
        stores.append(s)
    first = _matrix(stores[0])
    for s in stores[1:]:
        assert _matrix(s).equals(first)
    s = stores[0]
    again = ingest_paths(s, [FIX], show_progress=False)
    assert {f.status for f in again.files} == {"unchanged"} and _matrix(s).equals(first)
    for s in stores:
        s.close()


def test_one_precision_meets_lm_eval_results_of_the_same_repository(tmp_path):
    """The plain id still merges with another harness's results of the repository (one row, both columns)."""
    lm = tmp_path / "lm"
    lm.mkdir()
    model = "lemon07r/Gemma-2-Ataraxy-v2f-9B"
    doc = {"results": {"arc_easy": {"alias": "arc_easy", "acc,none": 0.8, "acc_stderr,none": 0.01}},
           "n-shot": {"arc_easy": 0}, "configs": {"arc_easy": {"task": "arc_easy", "num_fewshot": 0}},
           "model_name": model, "config": {"model": "hf", "model_args": f"pretrained={model}"}, "lm_eval_version": "0.4.3"}
    (lm / "results_2024-01-01T00-00-00.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        _ingest(s, [ONE, lm])
        df = load_matrix(s, MatrixQuery(normalise="none"))
        assert list(df.index) == [model]
        assert df.loc[model, "arc_easy"] == 0.8 and df.loc[model, "IFEval"] == 0.3791


def test_resolve_variants():
    """The alias rule alone: a lone variant is its plain id (and merges as it would); two variants stay apart;
    case-only spellings of one hub id count as one model; two repositories of one organisation stay apart."""
    a, b = "org/M (bfloat16)", "org/M (float16)"
    assert resolve([a], variants={a: "org/M"}) == {a: "org/M"}
    assert resolve([a, "org/M"], variants={a: "org/M"}) == {a: "org/M"}
    assert resolve([a, b], variants={a: "org/M", b: "org/M"}) == {}
    assert resolve([a, "Org/m (float16)"], variants={a: "org/M", "Org/m (float16)": "Org/m"}) == {}
    x, y = "THUDM/glm-4-9b-chat (bfloat16)", "THUDM/glm-4-9b-chat-hf (bfloat16)"
    assert resolve([x, y], variants={x: x[:-11], y: y[:-11]}) == {x: x[:-11], y: y[:-11]}


def test_instance_file_takes_the_precision_of_its_aggregate_record(tmp_path):
    """An instance file ``<id>_samples.jsonl`` beside its record ``<id>.json``: the items are the model at the
    record's precision, so they meet that record's results (the sample lines name the repository only)."""
    src = Path(__file__).parent / "fixtures" / "eee_samples" / "mmlu" / "openai" / "gpt2" / "None_samples.jsonl"
    shutil.copy(src, tmp_path / "abc_samples.jsonl")
    assert read_eee_samples(tmp_path / "abc_samples.jsonl")[0] == "openai/gpt2"  # no record beside it
    record = {"schema_version": "0.2.0", "model_info": {"id": "openai/gpt2", "name": "gpt2",
                                                         "additional_details": {"precision": "float16"}}}
    (tmp_path / "abc.json").write_text(json.dumps(record))
    assert read_eee_samples(tmp_path / "abc_samples.jsonl")[0] == "openai/gpt2 (float16)"
    record["model_info"]["additional_details"]["precision"] = "Unknown"
    (tmp_path / "abc.json").write_text(json.dumps(record))
    assert read_eee_samples(tmp_path / "abc_samples.jsonl")[0] == "openai/gpt2"


@pytest.mark.slow
def test_open_llm_leaderboard_v2_keeps_both_precisions_in_either_order():
    """The shared data: 78 repositories at float16 and bfloat16, each two models (4,494 + 78 rows), no conflict;
    the files in reverse order store the same results under the same names, and give the same rows.

    DeepMount00/Llama-3.1-8b-ITA and -Ita, Quazim0t0/ODB-14B-sce and -14b-sce (bfloat16 all) are one hub id spelled
    in two cases with different scores: two submissions, kept apart (they were one row whose values followed the
    order), so all 4,574 names are rows."""
    files = sorted(p for p in require(SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2").rglob("*.json")
                   if p.is_file())
    matrices = []
    for order in (files, files[::-1]):
        with Store.open(":memory:") as s:
            report = _ingest(s, order)
            assert len(report.variants) == 78
            assert all(sorted(n.rsplit(" ", 1)[1] for n in ns) == ["(bfloat16)", "(float16)"]
                       for ns in report.variants.values())
            stored = load_matrix(s, MatrixQuery(normalise="none", aliases=False)).sort_index()
            matrices.append((_matrix(s), stored))
    (first, stored), (second, stored_again) = matrices
    assert first.shape == (4574, 6) and first.equals(second)
    assert stored.shape == (4574, 6) and stored.equals(stored_again)
    coder = "Qwen/Qwen2.5-Coder-7B-Instruct"
    assert first.loc[f"{coder} (bfloat16)", "MATH Level 5"] == 0.3716
    assert first.loc[f"{coder} (float16)", "MATH Level 5"] == 0.031


def test_models_unmatched_does_not_offer_two_precisions_as_one_model(tmp_path, capsys):
    """``models --unmatched`` listed the float16 and bfloat16 rows as "may be the same" (score 0.989)."""
    db, js = tmp_path / "s.duckdb", tmp_path / "ingest.json"
    assert main(["ingest", "--db", str(db), "-q", str(FIX), "--json", str(js)]) == 0
    summary = json.loads(js.read_text())["summary"]
    assert summary["models_by_precision"] == {NAME: [f"{NAME} (bfloat16)", f"{NAME} (float16)"]}
    capsys.readouterr()
    assert main(["models", "--db", str(db), "--unmatched"]) == 0
    out = capsys.readouterr().out
    assert "0 pairs of models" in out and "(float16)" not in out


@pytest.fixture(scope="module")
def leaderboard_manifest(tmp_path_factory):
    """A reduction of 60 Open LLM Leaderboard v2 records from the shared data (the models of the bundled records
    left out: they are the new models)."""
    src = require(SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2")
    root = tmp_path_factory.mktemp("eee_predict")
    pop = root / "pop"
    pop.mkdir()
    new_ids = {NAME, "lemon07r/Gemma-2-Ataraxy-v2f-9B"}
    n = 0
    for f in sorted(src.rglob("*.json")):
        if n == 60:
            break
        if json.loads(f.read_text())["model_info"]["id"] not in new_ids:
            shutil.copy(f, pop / f"{n}.json")
            n += 1
    db, out = root / "s.duckdb", root / "reduced"
    assert main(["ingest", "--db", str(db), str(pop), "-q"]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "3", "--out", str(out)]) == 0
    return out


def test_predict_eee_records_give_the_plain_hub_id_and_the_precision(leaderboard_manifest, tmp_path, capsys):
    """``predict --eee`` wrote ``model_info.id: "org/model (bfloat16)"`` for a model given at two precisions (the
    stored name, no hub id), and the plain id without its precision for one given at one. Each record now gives the
    plain id and ``additional_details.precision``, as the leaderboard's records do."""
    eee = tmp_path / "eee"
    assert main(["predict", "-m", str(leaderboard_manifest), str(FIX), "--eee", str(eee)]) == 0
    infos = sorted((json.loads(p.read_text())["model_info"] for p in eee.glob("*.json")),
                   key=lambda i: (i["id"], i.get("additional_details", {}).get("precision", "")))
    assert infos == [
        {"name": "lemon07r/Gemma-2-Ataraxy-v2f-9B", "id": "lemon07r/Gemma-2-Ataraxy-v2f-9B",
         "additional_details": {"precision": "bfloat16"}},
        {"name": NAME, "id": NAME, "additional_details": {"precision": "bfloat16"}},
        {"name": NAME, "id": NAME, "additional_details": {"precision": "float16"}}]
    # the records stay two, named for the precision, and the printed table keeps the names the store shows
    assert sorted(p.name for p in eee.glob("recoilme*.json")) == [
        "recoilme__recoilme-gemma-2-9B-v0.2__bfloat16.json", "recoilme__recoilme-gemma-2-9B-v0.2__float16.json"]
    assert f"{NAME} (float16)" in capsys.readouterr().out


def test_eee_model_info_of_a_model_without_a_variant_is_its_name():
    import types

    from harness_ext.methods.reduction.predict_export import eee_model_info
    from harness_ext.types import variant_name, variant_of_name

    pred = types.SimpleNamespace(variants={f"{NAME} (float16)": (NAME, "float16")})
    assert eee_model_info(pred, f"{NAME} (float16)") == {"name": NAME, "id": NAME,
                                                          "additional_details": {"precision": "float16"}}
    assert eee_model_info(pred, "org/other") == {"name": "org/other", "id": "org/other"}
    assert eee_model_info(types.SimpleNamespace(), "org/other") == {"name": "org/other", "id": "org/other"}
    assert variant_of_name(variant_name(NAME, "bfloat16"), NAME) == "bfloat16"
    assert variant_of_name(NAME, NAME) is None and variant_of_name("org/m ()", "org/m") is None


def test_resolve_a_non_default_variant_stands_for_its_model_only_without_its_default_run():
    """An mteb experiment (harness_ext.types.NON_DEFAULT_VARIANT) alone is its model, as a precision is; beside a
    stored run of the model itself (the default run, or a name that merges with it) it keeps its own name, where a
    lone precision merges with the plain name."""
    e = "org/M (embed_dim_256)"
    assert resolve([e], variants={e: "org/M"}, non_default=[e]) == {e: "org/M"}
    assert resolve([e, "org/M"], variants={e: "org/M"}, non_default=[e]) == {}
    assert resolve([e, "org/m"], variants={e: "org/M"}, non_default=[e]) == {}  # hub ids ignore case
    assert resolve([e, "org/M"], variants={e: "org/M"}) == {e: "org/M"}  # a precision: as before
