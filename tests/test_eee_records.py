"""Every Eval Ever records other than the shared data's schema-0.2.0 leaderboards: inspect_ai
evaluation runs and a schema-0.0.1 leaderboard without ``source_metadata.source_name``.
Real records in fixtures/every_eval_ever (see its PROVENANCE.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FIX = Path(__file__).parent / "fixtures" / "every_eval_ever"


def _rows(paths):
    s = Store.open(":memory:")
    rep = ingest_paths(s, paths, show_progress=False)
    assert not rep.by_status("skipped")
    rows = s.con.execute("SELECT d.benchmark, d.name, d.metric, d.is_primary, r.value FROM results r "
                         "JOIN datasets d USING (dataset_id) ORDER BY d.benchmark, d.name").fetchall()
    return s, rows


def test_inspect_runs_are_keyed_by_their_dataset_not_their_scorer():
    """ai2_arc's scorer is "choice", as is every multiple-choice task's: the dataset was "choice"."""
    s, rows = _rows([FIX / "ai2_arc", FIX / "GAIA"])
    assert rows == [("inspect", "GAIA", "accuracy", True, 0.0),
                    ("inspect", "ai2_arc", "accuracy", True, pytest.approx(1 / 3))]
    meta = s.con.execute("SELECT metadata FROM datasets WHERE name = 'ai2_arc'").fetchone()[0]
    assert '"scorer": "choice"' in meta


def test_records_of_inspect_runs_share_the_benchmark_of_inspect_logs():
    """Every Eval Ever names Inspect runs' source ``inspect_ai``, which was their benchmark, while Inspect's own logs
    are stored under ``inspect``: one harness was two benchmarks in a store. Both are ``inspect`` now."""
    log = Path(__file__).parent / "fixtures" / "inspect" / "2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json"
    _, rows = _rows([FIX / "ai2_arc", log])
    assert {r[0] for r in rows} == {"inspect"} and {r[1] for r in rows} == {"ai2_arc", "input_task"}


def test_schema_001_leaderboard_is_its_own_benchmark():
    """Global MMLU Lite's "English" column was stored under the catch-all benchmark every_eval_ever."""
    s, rows = _rows([FIX / "global-mmlu-lite" / "Anthropic"])
    assert {r[0] for r in rows} == {"kaggle_global_mmlu_lite_leaderboard"}
    df = load_matrix(s, MatrixQuery(normalise="none", aggregates=True))
    assert df.loc["anthropic/claude-35-haiku", "English"] == pytest.approx(0.485)
    assert df.loc["anthropic/claude-35-haiku", "Global MMLU Lite"] == pytest.approx(0.6114062499999999)


@pytest.mark.parametrize("record", ["Anthropic", "google"], ids=["schema-0.0.1", "schema-0.2.0"])
def test_global_mmlu_lite_aggregates_and_per_language_chance(record):
    """Global MMLU Lite's overall score and its culturally sensitive/agnostic splits were stored as datasets beside
    the languages they average, and only the overall column got MMLU's chance level (by its name)."""
    s = Store.open(":memory:")
    rep = ingest_paths(s, [FIX / "global-mmlu-lite" / record], show_progress=False)
    (f,) = rep.by_status("ingested")
    d = {name: (kind, rb, src) for name, kind, rb, src in s.con.execute(
        "SELECT name, kind, random_baseline, baseline_source FROM datasets").fetchall()}
    aggregates = {n for n, v in d.items() if v[0] == "aggregate"}
    assert len(aggregates) == 3 and "Global MMLU Lite" in aggregates
    assert all("Culturally" in n for n in aggregates - {"Global MMLU Lite"})
    languages = set(d) - aggregates
    assert "English" in languages and "Arabic" in languages and len(languages) == 3
    for name, (_, rb, src) in d.items():  # a proportion: chance 1/4 of [0, 1]
        assert rb == pytest.approx(0.25) and src == "4 answer choices (global mmlu lite)", name
    (note,) = [n for n in f.notes if "aggregate" in n]
    assert note.startswith("3 evaluations stored as aggregates: Global MMLU Lite, ")
    norm = load_matrix(s, MatrixQuery())  # chance-corrected by the stored level
    assert norm.attrs["datasets"]["English"]["normalisation"]["chance"] == pytest.approx(0.25)


def test_cot_correct_gets_the_multiple_choice_chance_level(tmp_path):
    """HELM Capabilities reports GPQA and MMLU-Pro as "COT correct on ..."; the metric was not an accuracy
    spelling, so neither got a chance level (4 and 10 answer choices)."""
    import json

    from harness_ext.store.scales import chance_level, is_accuracy_metric

    assert is_accuracy_metric("COT correct") and is_accuracy_metric("mean_accuracy") and not is_accuracy_metric("BLEU-4")
    for i, model in enumerate(["org/a", "org/b", "org/c"]):
        results = [{"evaluation_name": name, "metric_config": {
            "evaluation_description": f"COT correct on {name}", "lower_is_better": False,
            "min_score": 0.0, "max_score": 1.0}, "score_details": {"score": 0.3 + 0.1 * i + 0.01 * k}}
            for k, name in enumerate(["GPQA", "MMLU-Pro"])]
        doc = {"schema_version": "0.2.0", "source_metadata": {"source_name": "helm_capabilities"},
               "model_info": {"id": model}, "evaluation_results": results}
        (tmp_path / f"{i}.json").write_text(json.dumps(doc))
    s = Store.open(":memory:")
    ingest_paths(s, [tmp_path], show_progress=False)
    norm = load_matrix(s, MatrixQuery())
    chance = {c: norm.attrs["datasets"][c]["normalisation"]["chance"] for c in norm.columns}
    assert chance == {"GPQA": pytest.approx(0.25), "MMLU-Pro": pytest.approx(0.1)}
    assert chance_level("gpqa_diamond", "cot_correct")[0] == pytest.approx(0.25)


def test_a_score_above_its_declared_maximum_refuses_the_file(tmp_path):
    """34.4 on [0, 1] was left out as a "not run" placeholder; only scores below the range are placeholders."""
    import json

    from conftest import SHARED_DATA, require

    src = next(iter(sorted(require(SHARED_DATA / "every_eval_ever" / "data" / "helm_classic").rglob("*.json"))))
    doc = json.loads(src.read_text())
    mmlu = next(e for e in doc["evaluation_results"] if e["evaluation_name"] == "MMLU")
    mmlu["score_details"]["score"] = 34.4
    bad = tmp_path / "record.json"
    bad.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [bad], show_progress=False).files
    assert f.status == "skipped" and "MMLU: score 34.4 is above its declared max_score 1" in f.reason
    mmlu["score_details"]["score"] = -1  # HELM's placeholder: left out, noted
    bad.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [bad], show_progress=False).files
    assert f.status == "ingested" and any("MMLU -1" in n for n in f.notes)


def test_schema_001_helm_record_keeps_its_accuracy_tab_as_schema_020_does():
    """A schema 0.0.1 HELM Lite record (evaleval/every_eval_ever ``data/helm_lite/01-ai/yi-6b/7fe45747-...json``)
    writes every tab of HELM's table as rows: run times ("NarrativeQA - Observed inference time (s)") and
    instance and token counts ("NarrativeQA - # prompt tokens", 3611.4) were stored as datasets, the Efficiency
    tab's "Mean win rate" conflicted with the leaderboard's, and "MMLU - EM" (metric ``score``) missed MMLU's
    chance level. Schema 0.2.0's record of the same model nests those tabs and names the row "MMLU", "EM on MMLU"."""
    s = Store.open(":memory:")
    rep = ingest_paths(s, [FIX / "helm_lite"], show_progress=False)
    assert len(rep.by_status("ingested")) == 2 and not rep.conflicts
    legacy = next(f for f in rep.by_status("ingested") if "7fe45747" in str(f.path))
    assert any(n.startswith("10 rows of HELM's other leaderboard tabs left out (Efficiency 4, General information 6)")
               for n in legacy.notes)
    rows = s.con.execute("SELECT d.name, d.metric, d.kind, count(*) FROM results r JOIN datasets d USING (dataset_id) "
                         "GROUP BY ALL ORDER BY d.name").fetchall()
    by_name = {name: (metric, kind, n) for name, metric, kind, n in rows}
    assert set(by_name) == {"Mean win rate", "NarrativeQA", "NaturalQuestions (open-book)",
                            "NaturalQuestions (closed-book)", "OpenbookQA", "MMLU", "MATH", "GSM8K", "LegalBench",
                            "MedQA", "WMT 2014"}
    assert by_name["Mean win rate"] == ("score", "aggregate", 2)  # not "How many models this model outperforms"
    for name in ("NarrativeQA", "OpenbookQA", "MMLU", "GSM8K"):  # one cell, both schema versions
        assert by_name[name][1:] == ("dataset", 2), name
    assert by_name["NarrativeQA"][0] == "F1" and by_name["MMLU"][0] == "EM" and by_name["WMT 2014"][0] == "BLEU-4"
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert df.loc["01-ai/yi-6b", "MMLU"] == pytest.approx(0.53)
    assert load_matrix(s, MatrixQuery()).attrs["datasets"]["MMLU"]["normalisation"]["chance"] == pytest.approx(0.25)


def test_schema_001_helm_mmlu_run_times_are_not_subject_scores(tmp_path):
    """Laid out as evaleval/every_eval_ever ``data/helm_mmlu/01-ai/yi-6b/92f10dcd-...json`` (schema 0.0.1, 367 KB):
    its Efficiency row "Abstract Algebra - Observed inference time (s)" names the subject in its
    generation_config as the Accuracy row does, so its run time was stored as the subject's ``acc`` beside the
    score (a conflict whose winner was the order of the rows)."""
    import json

    desc = "The abstract algebra subject in the Massive Multitask Language Understanding (MMLU) benchmark.\n\n"
    gen = {"subject": "abstract_algebra", "method": "multiple_choice_joint", "eval_split": "test",
           "groups": "mmlu_abstract_algebra"}

    def row(title, text, score, tab, hi=1.0, lower=False):
        return {"evaluation_name": f"Abstract Algebra - {title}",
                "metric_config": {"evaluation_description": desc + text, "lower_is_better": lower,
                                  "score_type": "continuous", "min_score": 0.0, "max_score": hi},
                "score_details": {"score": score, "details": {"description": None, "tab": tab}},
                "generation_config": gen}

    doc = {"schema_version": "0.0.1", "evaluation_id": "helm_mmlu/01-ai_yi-6b/1765639045.712842",
           "source_metadata": {"source_name": "helm_mmlu", "source_type": "documentation",
                               "source_organization_name": "crfm", "evaluator_relationship": "third_party"},
           "model_info": {"name": "Yi (6B)", "id": "01-ai/yi-6b", "developer": "01-ai"},
           "evaluation_results": [
               row("EM", "Exact match: Fraction of instances that the predicted output matches a correct reference "
                         "exactly.", 0.3, "Accuracy"),
               row("Observed inference time (s)", "Observed inference runtime (s): Average observed time to process "
                   "a request to the model (via an API, and thus depends on particular deployment).", 0.451,
                   "Efficiency", 2.0, True),
               row("# eval", "# eval: Number of evaluation instances.", 100.0, "General information", 100.0)]}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    s = Store.open(":memory:")
    rep = ingest_paths(s, [tmp_path / "r.json"], show_progress=False)
    assert not rep.conflicts
    assert s.con.execute("SELECT d.benchmark, d.name, d.metric, r.value FROM results r JOIN datasets d "
                         "USING (dataset_id)").fetchall() == [("mmlu", "abstract_algebra", "acc", 0.3)]
    (f,) = rep.by_status("ingested")
    assert any(n.startswith("2 rows of HELM's other leaderboard tabs left out (Efficiency 1, General information 1)")
               for n in f.notes)


def test_schema_001_helm_record_errors_name_the_row_in_the_file(tmp_path):
    """Rows of HELM's other tabs are left out before the rows are read: a broken row after them was named by its
    place among the rows kept (``evaluation_results[4]`` for the file's sixth row)."""
    import json

    doc = json.loads((FIX / "helm_lite" / "01-ai" / "yi-6b" / "7fe45747-7963-4418-b32c-aa3ec91f58ef.json").read_text())
    rows = doc["evaluation_results"]
    accuracy = [i for i, r in enumerate(rows) if r["score_details"]["details"]["tab"] == "Accuracy"]
    rows.insert(0, rows.pop(-1))  # a General information row first: the kept rows shift by one
    broken = accuracy[3] + 1
    rows[broken]["metric_config"] = [1]  # not an object: kept as written
    rows[broken]["score_details"] = {"details": {"tab": "Accuracy"}}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    rep = ingest_paths(Store.open(":memory:"), [tmp_path / "r.json"], show_progress=False)
    (f,) = rep.by_status("skipped")
    assert f"evaluation_results[{broken}] " in f.reason and "has no score_details.score" in f.reason


def test_a_bound_given_as_true_does_not_change_how_later_files_are_read(tmp_path):
    """A record declaring ``"max_score": true`` (found by mutation fuzzing) cached its rows' kind under a key equal
    to ``1.0``'s, so every later file of the leaderboard read in the same process lost its max_score of 1.0."""
    import json

    real = FIX / "model_ids" / "reward-bench" / "Anthropic" / "claude-3-opus-20240229" / \
        "aeeca919-71a1-42a0-a6d0-6779d77750e6.json"
    doc = json.loads(real.read_text())
    for ev in doc["evaluation_results"]:
        ev["metric_config"]["max_score"] = True
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / real.name).write_text(json.dumps(doc))

    def max_scores(path):
        with Store.open(":memory:") as s:
            ingest_paths(s, [path], show_progress=False)
            return {r[0] for r in s.con.execute("SELECT max_score FROM datasets").fetchall()}

    assert max_scores(tmp_path / "odd") == {None}
    assert max_scores(real) == {1.0}


def test_schema_0_2_2_leaderboard_record_values_and_its_overall_score_as_an_aggregate():
    """A schema 0.2.2 record (evaluation_result_id, metric_id, metric_name, metric_kind, metric_unit): scores, bounds,
    direction and model id are read as in 0.2.0. "MMLU-Pro (overall)", the accuracy over all subjects beside the
    subjects' own, was stored as one more dataset (a subset member); it is the leaderboard's aggregate."""
    s = Store.open(":memory:")
    rep = ingest_paths(s, [FIX / "mmlu-pro"], show_progress=False)
    (f,) = rep.by_status("ingested")
    assert any("MMLU-Pro (overall)" in n and "aggregate" in n for n in f.notes)
    got = {r[0]: r[1:] for r in s.con.execute(
        "SELECT d.name, d.benchmark, d.metric, d.kind, d.higher_is_better, d.min_score, d.max_score, r.value "
        "FROM results r JOIN datasets d USING (dataset_id)").fetchall()}
    assert got["MMLU-Pro (overall)"] == ("mmlu_pro_leaderboard", "score", "aggregate", True, 0.0, 1.0, 0.5229)
    assert got["MMLU-Pro (Biology)"] == ("mmlu_pro_leaderboard", "Accuracy", "dataset", True, 0.0, 1.0, 0.7141)
    assert got["MMLU-Pro (Math)"][-1] == 0.5618 and got["MMLU-Pro (Other)"][-1] == 0.5162
    assert [m for (m,) in s.con.execute("SELECT name FROM models").fetchall()] == ["01-ai/yi-1.5-34b-chat"]


def test_intervals_without_a_level_are_counted_not_used(tmp_path):
    """Every Eval Ever's schema makes an interval's ``confidence_level`` optional, and the records here have none: the
    Inspect run's ``confidence_interval`` beside its score (0 to 0.987 around 1/3), Global MMLU Lite's
    ``uncertainty.confidence_interval`` (-0.0467 to 0.0467 around 0.6525: a half-width, method "unknown") and its
    schema 0.0.1 record's bare ``details.confidence_interval`` number. They were dropped without a word; no level is
    assumed and none gives a standard error. The last case edits the real gemma record, adding a level to two of its
    intervals, to show that only those without one are counted."""
    import json

    cases = {FIX / "ai2_arc": "1 confidence interval without a level was not used (no level is assumed, so it gives "
                             "no standard error): choice",
             FIX / "global-mmlu-lite" / "google": "3 confidence intervals without a level were not used (no level is "
                                                  "assumed, so they give no standard error): Arabic, English, Yoruba",
             FIX / "global-mmlu-lite" / "Anthropic": "3 confidence intervals without a level were not used (no level "
                                                     "is assumed, so they give no standard error): Arabic, English, "
                                                     "Burmese"}
    for path, note in cases.items():
        with Store.open(":memory:") as s:
            (f,) = ingest_paths(s, [path], show_progress=False).by_status("ingested")
            assert note in f.notes, f.notes
            assert s.con.execute("SELECT count(*) FROM results WHERE stderr IS NOT NULL").fetchone()[0] == 0
    real = next((FIX / "global-mmlu-lite" / "google").rglob("*.json"))
    doc = json.loads(real.read_text())
    with_level = [ev for ev in doc["evaluation_results"] if "uncertainty" in ev["score_details"]][:2]
    for ev in with_level:
        ev["score_details"]["uncertainty"]["confidence_interval"]["confidence_level"] = 0.95
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [edited], show_progress=False).by_status("ingested")
        stderrs = dict(s.con.execute("SELECT d.name, r.stderr FROM results r JOIN datasets d USING (dataset_id) "
                                     "WHERE r.stderr IS NOT NULL").fetchall())
    [note] = [n for n in f.notes if "without a level" in n]
    assert note.startswith("1 confidence interval without a level was not used") and note.endswith(": Yoruba")
    # Global MMLU Lite writes its half-width as -h to h around zero: at a known level it is read as a half-width
    assert "2 confidence intervals written as -h to h around zero, not around the score, read as a half-width h: " \
           "Arabic, English" in f.notes
    assert stderrs == pytest.approx({"Arabic": 0.0467 / 1.959964, "English": 0.0461 / 1.959964}, rel=1e-5)
