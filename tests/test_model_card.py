"""Hugging Face model cards' ``model-index`` results (:mod:`harness_ext.adapters.model_card`).

Fixtures: ``tests/fixtures/model_card`` (composed with the structure of real cards, see its PROVENANCE.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

CARDS = Path(__file__).resolve().parent / "fixtures" / "model_card"
FIXTURES_V1 = CARDS.parent / "open_llm_leaderboard"


def _rows(path):
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(path)], show_progress=False)
    rows = s.con.execute("SELECT m.name, d.benchmark, d.name, d.metric, d.is_primary, r.value, r.num_fewshot, "
                         "d.higher_is_better, d.random_baseline FROM results r JOIN datasets d USING (dataset_id) "
                         "JOIN models m USING (model_id) ORDER BY d.name, d.metric").fetchall()
    return report, rows


def _card(tmp_path, name: str) -> Path:
    """A fixture as the README.md a model repository holds."""
    (tmp_path / name).mkdir()
    path = tmp_path / name / "README.md"
    shutil.copy(CARDS / f"{name}.md", path)
    return path


def test_first_open_llm_leaderboard_entries_are_stored_as_its_results_files(tmp_path):
    report, rows = _rows(_card(tmp_path, "open_llm_v1"))
    (f,) = report.files
    assert f.status == "ingested", f.reason
    assert {r[0] for r in rows} == {"Org/Model-7B"}  # the model the leaderboard's address queries
    got = {r[2]: (r[1], r[3], r[5], r[6], r[8]) for r in rows}
    assert got["arc_challenge"] == ("open_llm_leaderboard_v1", "acc_norm", pytest.approx(0.6783), 25, 0.25)
    assert got["truthfulqa_mc"][1:3] == ("mc2", pytest.approx(0.5949))
    assert got["mmlu"][1:4] == ("acc", pytest.approx(0.6507), 5)
    assert set(got) == {"arc_challenge", "hellaswag", "mmlu", "truthfulqa_mc", "winogrande", "gsm8k"}
    assert "mmlu is its mean over MMLU's 57 subjects" in "\n".join(f.notes)


def test_second_open_llm_leaderboard_entries_are_its_normalised_scores(tmp_path):
    """The v2 card names BBH's metric acc_norm, but 35.83 is the leaderboard's normalised score (raw acc_norm of
    such a model is about 0.54): stored as normalized_score, chance 0, never as acc_norm."""
    report, rows = _rows(_card(tmp_path, "open_llm_v2"))
    (f,) = report.files
    assert {r[0] for r in rows} == {"org2/Model-7B-Instruct"}
    got = {r[2]: r for r in rows}
    assert set(got) == {"IFEval", "BBH", "MATH Lvl 5", "GPQA", "MuSR", "MMLU-PRO"}
    assert {r[3] for r in rows} == {"normalized_score"} and {r[1] for r in rows} == {"open_llm_leaderboard_v2"}
    assert got["BBH"][5] == pytest.approx(35.83) and got["BBH"][6] == 3 and got["BBH"][8] == 0.0
    assert "stored as metric normalized_score, not as the metric the card names" in "\n".join(f.notes)


def test_other_cards_by_their_names(tmp_path):
    """One dataset name and metric on two splits keeps both (config and split in the name); a word error rate is
    lower-is-better; a dataset's first metric is its primary one."""
    report, rows = _rows(_card(tmp_path, "other"))
    got = {(r[2], r[3]): r for r in rows}
    assert got[("LibriSpeech (clean) (clean test)", "wer")][5] == pytest.approx(3.4)
    assert got[("LibriSpeech (clean) (clean validation)", "wer")][7] is False
    assert got[("SQuAD", "exact_match")][4] is True and got[("SQuAD", "f1")][4] is False
    assert {r[1] for r in rows} == {"model_index"}


def test_a_walk_reads_model_cards_and_passes_over_plain_readmes(tmp_path):
    for name in ("open_llm_v1", "open_llm_v2"):
        _card(tmp_path, name)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "README.md").write_text("---\nlicense: mit\n---\n# A model without results\n")
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(tmp_path)], show_progress=False)
    assert sorted(f.status for f in report.files) == ["ingested", "ingested"]
    assert s.counts()["results"] == 12


@pytest.mark.parametrize("front, reason", [
    ("model-index: &a\n- name: x\n  results: []\nother: *a\n", "YAML anchors or aliases"),
    ("model-index: [\n", "not valid YAML"),
    ("model-index: {name: x}\n", "not a list of models"),
    ("model-index:\n- results:\n  - dataset: {name: d}\n    metrics: [{type: acc, value: 1}]\n", "has no name"),
    ("model-index:\n- name: x\n  results:\n  - dataset: {name: d}\n    metrics: [{type: acc, value: .nan}]\n",
     "not a finite number"),
])
def test_bad_model_cards_are_refused_with_their_reason(tmp_path, front, reason):
    path = tmp_path / "README.md"
    path.write_text(f"---\n{front}---\n# card\n")
    s = Store.open(":memory:")
    (f,) = ingest_paths(s, [str(path)], show_progress=False).files
    assert f.status == "skipped" and reason in f.reason, f.reason
    assert s.counts()["results"] == 0


def test_a_card_holding_a_printed_lm_eval_table_is_the_table(tmp_path):
    table = ("hf (pretrained=org/m), gen_kwargs: (None), limit: None, num_fewshot: None, batch_size: 8\n"
             "|Tasks|Version|Filter|n-shot|Metric|   |Value |   |Stderr|\n"
             "|-----|------:|------|-----:|------|---|-----:|---|-----:|\n"
             "|piqa |      1|none  |     0|acc   |↑  |0.7000|±  |0.0100|\n")
    path = tmp_path / "README.md"
    path.write_text((CARDS / "open_llm_v1.md").read_text() + "\n" + table)
    report, rows = _rows(path)
    assert [r[2] for r in rows] == ["piqa"]


def _leaves(doc, prefix=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _leaves(v, prefix + (i,))
    yield prefix


def _replaced(doc, path, value):
    if not path:
        return value
    doc = (dict if isinstance(doc, dict) else list)(doc)
    doc[path[0]] = _replaced(doc[path[0]], path[1:], value)
    return doc


def test_mutated_model_index_reads_or_is_refused_with_its_reason(tmp_path):
    """Any value of the card's front matter replaced by a hostile one (a string, a list, None, a huge or non-finite
    number, a path): the card is read or refused with one clear error, never a crash."""
    hypothesis = pytest.importorskip("hypothesis")
    import yaml
    from hypothesis import strategies as st

    from harness_ext.errors import IngestError
    from harness_ext.plugin_manager import get_registrations
    from harness_ext.store.ingest import read_source
    from harness_ext.types import SourceFile

    adapter = get_registrations("adapters")["model_card"]
    text = (CARDS / "open_llm_v2.md").read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    paths = list(_leaves(front))
    hostile = (st.none() | st.booleans() | st.integers(min_value=-10**30, max_value=10**30) | st.floats()
               | st.text(max_size=12) | st.sampled_from(["../../etc/passwd", "N/A", "1e400", "!!python/object"])
               | st.lists(st.integers(), max_size=3) | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))

    @hypothesis.settings(max_examples=150, deadline=None, database=None)
    @hypothesis.given(path=st.sampled_from(paths), value=hostile)
    def check(path, value):
        p = tmp_path / "README.md"
        p.write_text("---\n" + yaml.safe_dump(_replaced(front, path, value)) + "---\n# card\n")
        src = SourceFile(p)
        if not adapter.can_handle(src):
            return
        try:
            records = read_source(src, adapter)
        except IngestError as exc:
            assert str(p) in str(exc) or "README.md" in str(exc)
            return
        assert all(r.model.strip() and r.dataset.strip() for r in records)

    check()


@pytest.mark.parametrize("card_first", [False, True])
def test_a_card_and_its_models_results_file_meet_in_the_same_cells(tmp_path, card_first):
    """The first leaderboard's card of a model whose results file is ingested too: the same cells, the card's two
    decimals (of a percent) agreeing with the file's full precision: no conflict, and the file's value used in
    either ingest order (harness_ext.store.rounding)."""
    from harness_ext.store.matrix import MatrixQuery, load_matrix

    import json

    run = FIXTURES_V1 / "details_HenryJJ__Instruct_Mistral-7B-v0.1_Dolly15K"
    doc = json.loads(next(run.glob("results_*.json")).read_text())
    r, name = doc["results"], doc["config_general"]["model_name"]
    rows = [("AI2 Reasoning Challenge (25-Shot)", "ai2_arc", 25, "acc_norm", r["harness|arc:challenge|25"]["acc_norm"]),
            ("GSM8k (5-shot)", "gsm8k", 5, "acc", r["harness|gsm8k|5"]["acc"])]
    card = f"---\nmodel-index:\n- name: {name.split('/')[1]}\n  results:\n"
    for n, typ, shots, m, v in rows:
        card += (f"  - dataset: {{name: {n}, type: {typ}, args: {{num_few_shot: {shots}}}}}\n"
                 f"    metrics: [{{type: {m}, value: {round(v * 100, 2)}}}]\n    source: {{name: Open LLM Leaderboard, "
                 f"url: 'https://huggingface.co/spaces/HuggingFaceH4/open_llm_leaderboard?query={name}'}}\n")
    (tmp_path / "card").mkdir()
    (tmp_path / "card" / "README.md").write_text(card + "---\n")
    s = Store.open(":memory:")
    paths = [str(run), str(tmp_path / "card" / "README.md")]
    report = ingest_paths(s, paths[::-1] if card_first else paths, show_progress=False)
    assert [f.status for f in report.files] == ["ingested", "ingested"]
    assert len(report.conflicts) == 0 and s.n_conflicting_cells() == 0 and s.conflicts().empty
    assert "2 cells given by two files that agree to the decimals the less precise gives" in report.summary()
    values = sorted(v for (v,) in s.con.execute("SELECT r.value FROM results r JOIN datasets d USING (dataset_id) "
                                                 "WHERE d.name = 'gsm8k' AND d.metric = 'acc'").fetchall())
    assert values == pytest.approx([round(r["harness|gsm8k|5"]["acc"], 4), r["harness|gsm8k|5"]["acc"]])  # both kept
    m = load_matrix(s, MatrixQuery())
    assert m["gsm8k"].iloc[0] == r["harness|gsm8k|5"]["acc"]  # the file's, not the card's
    m = load_matrix(s, MatrixQuery(metric="acc_norm"))
    # Normalised from chance (0.25): the file's value, not the card's 0.5939 (0.45853).
    assert m["arc_challenge"].iloc[0] == pytest.approx((r["harness|arc:challenge|25"]["acc_norm"] - 0.25) / 0.75,
                                                       abs=1e-12)


def test_a_details_dataset_card_reads_as_its_results_file(tmp_path):
    """The card lighteval pushed with a first-leaderboard details dataset quotes its latest results file: read, it
    gives the file's own cells and values (ingested after the file: every value a duplicate, none a conflict)."""
    run = FIXTURES_V1 / "details_HenryJJ__Instruct_Mistral-7B-v0.1_Dolly15K"
    card = _card(tmp_path, "open_llm_v1_details")
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(run), str(card)], show_progress=False)
    assert [f.status for f in report.files] == ["ingested", "ingested"], [f.reason for f in report.files]
    assert not report.conflicts
    file_report, card_report = report.files
    assert card_report.n_results == file_report.n_results > 60
    (cells,) = s.con.execute("SELECT count(*) FROM (SELECT DISTINCT model_id, dataset_id, num_fewshot FROM results)"
                             ).fetchone()
    assert cells == file_report.n_results
    assert "read as its results file" in "\n".join(card_report.notes)


def test_a_details_card_quoting_neither_harness_names_the_file_to_read(tmp_path):
    """lighteval's and lm-eval's cards are read (tests/test_lm_eval_details_card.py); a quoted block of neither's
    keys is refused, naming the results file to ingest instead."""
    path = tmp_path / "README.md"
    path.write_text("---\npretty_name: Evaluation run of org/m\n---\n\n## Latest results\n\n```python\n"
                    '{"all": {"musr": {"acc_norm": 0.35}},\n "musr": {"acc_norm": 0.35}}\n```\n')
    s = Store.open(":memory:")
    (f,) = ingest_paths(s, [str(path)], show_progress=False).files
    assert f.status == "skipped" and "ingest the results_<date>.json file of the same dataset repository" in f.reason


def test_mteb_cards_are_stored_as_mteb_result_files(tmp_path):
    """thenlper/gte-small's card (a real slice): each MTEB task its main score, as the mteb adapter stores a task's
    result file; the percentages as proportions; a correlation on [-1, 1]; CQADupstackAndroidRetrieval, under which
    the card lists every forum's metrics, left out and said."""
    report, rows = _rows(CARDS / "mteb_gte_small.md")
    (f,) = report.files
    main = {r[2]: r[5] for r in rows if r[3] == "main_score"}
    assert main == {"AmazonCounterfactualClassification": pytest.approx(0.7322388059701493),
                    "AmazonPolarityClassification": pytest.approx(0.9181894999999999),
                    "ArguAna": pytest.approx(0.55441), "ArxivClusteringP2P": pytest.approx(0.4790178078197678),
                    "AskUbuntuDupQuestions": pytest.approx(0.6172029706289776),
                    "BIOSSES": pytest.approx(0.8817128615100206)}
    assert {r[1] for r in rows} == {"mteb"} and {r[0] for r in rows} == {"gte-small"}
    notes = "\n".join(f.notes)
    assert "1 MTEB task listing a metric more than once left out" in notes and "CQADupstackAndroidRetrieval" in notes
    assert "6 MTEB tasks stored as MTEB's result files are" in notes


def test_an_mteb_card_and_the_task_file_meet_in_one_cell(tmp_path):
    """The card of all-MiniLM-L6-v2 with its AskUbuntuDupQuestions file's values (in percent, as cards write them)
    and the file itself: one cell, the same value, no conflict."""
    import json

    task = CARDS.parent / "mteb" / "legacy" / "all-MiniLM-L6-v2" / "AskUbuntuDupQuestions.json"
    scores = json.loads(task.read_text())["test"]
    card = ("---\nmodel-index:\n- name: all-MiniLM-L6-v2\n  results:\n  - task: {type: Reranking}\n    dataset: "
            "{name: MTEB AskUbuntuDupQuestions, type: mteb/askubuntudupquestions-reranking, config: default, "
            f"split: test}}\n    metrics:\n    - {{type: map, value: {scores['map'] * 100!r}}}\n"
            f"    - {{type: mrr, value: {scores['mrr'] * 100!r}}}\n---\n")
    (tmp_path / "card").mkdir()
    (tmp_path / "card" / "README.md").write_text(card)
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(task.parent), str(tmp_path / "card" / "README.md")], show_progress=False)
    assert not report.conflicts
    rows = s.con.execute("SELECT DISTINCT m.name, r.value FROM results r JOIN datasets d USING (dataset_id) JOIN models "
                         "m USING (model_id) WHERE d.name = 'AskUbuntuDupQuestions' AND d.metric = 'main_score'"
                         ).fetchall()
    assert rows == [("all-MiniLM-L6-v2", pytest.approx(scores["map"]))]


def test_an_mteb_card_keeps_the_english_subset(tmp_path):
    path = tmp_path / "README.md"
    results = "".join(f"  - task: {{type: Classification}}\n    dataset: {{name: MTEB AmazonReviewsClassification "
                      f"({c}), type: mteb/amazon_reviews_multi, config: {c}}}\n    metrics: [{{type: accuracy, "
                      f"value: {v}}}]\n" for c, v in (("de", 40.0), ("en", 48.0), ("fr", 44.0)))
    path.write_text(f"---\nmodel-index:\n- name: m\n  results:\n{results}---\n")
    _, rows = _rows(path)
    assert [(r[2], r[5]) for r in rows if r[3] == "main_score"] == [("AmazonReviewsClassification", pytest.approx(0.48))]


def test_a_card_in_the_hubs_cache_is_named_by_its_repository(tmp_path):
    """MTEB's cards name the model without its organisation (``gte-small``); in the Hub's cache folder
    (``models--thenlper--gte-small/snapshots/<commit>/README.md``) the repository names it."""
    folder = tmp_path / "models--thenlper--gte-small" / "snapshots" / "a1b2"
    folder.mkdir(parents=True)
    shutil.copy(CARDS / "mteb_gte_small.md", folder / "README.md")
    _, rows = _rows(folder / "README.md")
    assert {r[0] for r in rows} == {"thenlper/gte-small"}


def test_cards_without_results_are_passed_over_quietly_and_counted(tmp_path):
    """The Trainer writes ``model-index: [{name: ..., results: []}]`` into every card it generates: a folder of
    downloaded cards holds many, each skipped without a warning and counted in the summary."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text(f"---\ntags:\n- generated_from_trainer\nmodel-index:\n- name: {name}\n"
                                                    "  results: []\n---\n# card\n")
    _card(tmp_path, "open_llm_v1")
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(tmp_path)], show_progress=False)
    quiet = [f for f in report.files if f.status == "skipped"]
    assert len(quiet) == 2 and all(f.quiet for f in quiet)
    assert "model cards whose model-index lists no results" in report.summary()
