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


def _skip_reason(*paths) -> str:
    _, rep = _store(*paths)
    (f,) = rep.files
    assert f.status == "skipped"
    return f.reason


def test_helm_stats_json_alone_says_what_is_missing(tmp_path):
    """A run's stats.json given alone (HELM's run_spec.json, naming the model, not copied with it) said only "not a
    recognised result file"."""
    (tmp_path / "run").mkdir()
    stats = tmp_path / "run" / "stats.json"
    stats.write_bytes((ART_RUN / "stats.json").read_bytes())
    assert "a HELM stats.json without the run's run_spec.json" in _skip_reason(stats)
    assert "ingest anthropic_red_team:model=meta_llama-3-70b" in _skip_reason(ART_RUN / "stats.json")


def test_inspect_log_without_status_says_so(tmp_path):
    """A log re-serialised without ``status`` (as the Inspect Evals dashboard keeps them) was passed over in silence."""
    import json

    src = FIXTURES / "inspect" / "2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json"
    doc = json.loads(src.read_text())
    doc.pop("status")
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    assert "an Inspect AI log without 'status'" in _skip_reason(path)


_HEAD = "|    Task     |Version| Metric |Value |   |Stderr|\n|-------------|------:|--------|-----:|---|-----:|\n"
_ROW = "|arc_challenge|      0|acc     |0.2782|±  |0.0131|\n"
_LINE = "hf-causal (pretrained=TinyLlama/TinyLlama-1.1B), limit: None, provide_description: False, num_fewshot: 0, batch_size: None\n"


def test_printed_table_without_its_model_line_says_so(tmp_path):
    """lm-eval's table pasted into a model card or log without the line above it that names the model (as in
    teknium1/LLM-Benchmark-Logs and AutoAWQ's saved tables) was passed over as "not a recognised result file"."""
    path = tmp_path / "TinyLlama.md"
    path.write_text("GPT4All:\n```\n" + _HEAD + _ROW + "```\nAverage: 52.99\n", encoding="utf-8")
    assert "without the line lm-eval prints above it that names the model" in _skip_reason(path)


def test_printed_table_in_another_suffix_says_to_rename(tmp_path):
    """The same table with its line, saved without a .md suffix (zhy617/SMoE keeps one so), was passed over."""
    for name in ("results", "results.txt"):
        path = tmp_path / name
        path.write_text(_LINE + _HEAD + _ROW, encoding="utf-8")
        assert "in a file not named .md or .markdown" in _skip_reason(path)
        md = tmp_path / "results.md"
        md.write_text(_LINE + _HEAD + _ROW, encoding="utf-8")
        assert _store(md)[1].files[0].status == "ingested"


def test_walk_reports_a_table_without_its_model_line(tmp_path):
    """In a folder walk such a markdown file was passed over in silence beside the files that were read."""
    (tmp_path / "results.md").write_text(_LINE + _HEAD + _ROW, encoding="utf-8")
    (tmp_path / "TinyLlama.md").write_text("GPT4All:\n```\n" + _HEAD + _ROW + "```\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# notes\n\n|Task|Score|\n|---|---|\n|boolq|0.7|\n", encoding="utf-8")
    _, rep = _store(tmp_path)
    by_name = {Path(f.path).name: f for f in rep.files}
    assert set(by_name) == {"results.md", "TinyLlama.md"}  # README.md holds no lm-eval table: still passed over
    assert by_name["results.md"].status == "ingested"
    assert by_name["TinyLlama.md"].status == "skipped"
    assert "without the line lm-eval prints above it" in by_name["TinyLlama.md"].reason


def test_open_llm_leaderboard_v2_math_hard_is_free_form():
    """The seven ``leaderboard_math_*_hard`` tasks of a real Open LLM Leaderboard v2 run were listed as having no
    known chance level; MATH's answers are free-form (a random guess scores about 0)."""
    from harness_ext.store.scales import chance_level

    for task in ("leaderboard_math_algebra_hard", "leaderboard_math_precalculus_hard", "leaderboard_math_hard"):
        assert chance_level(task, "exact_match")[0] == 0.0, task


EARLY = FIXTURES / "lm_eval_table_early"


def test_early_v04_printed_tables_are_read():
    """lm-eval 0.4's first printed layouts: no n-shot column (``Yaml`` versions), and a ``Task`` header with each
    task's alias on a row of its own. Neither was read; the second's groups would have been datasets."""
    s, rep = _store(EARLY / "tasks_without_nshot.md", EARLY / "task_alias_rows.md")
    assert [f.status for f in rep.files] == ["ingested", "ingested"], [f.reason for f in rep.files]
    rows = dict(s.con.execute("SELECT d.name || ' ' || d.metric, r.value FROM results r "
                              "JOIN datasets d USING (dataset_id)").fetchall())
    assert rows["arc_challenge acc"] == 0.44 and rows["arc_challenge acc_norm"] == 0.47 and rows["boolq acc"] == 0.86
    kinds = dict(s.con.execute("SELECT name, kind FROM datasets WHERE benchmark = 'mmlu'").fetchall())
    assert {k for k, v in kinds.items() if v == "aggregate"} == {"mmlu", "mmlu_humanities", "mmlu_stem"}, kinds
    assert {k for k, v in kinds.items() if v != "aggregate"} == {"formal_logic", "philosophy", "anatomy"}, kinds


def test_unknown_table_header_with_its_model_line_is_not_called_lineless(tmp_path):
    path = tmp_path / "results.md"
    path.write_text(_LINE + "|Tasks|Version|Shots|Metric|Value|\n|-|-|-|-|-|\n|boolq|2|0|acc|0.7|\n", encoding="utf-8")
    reason = _skip_reason(path)
    assert "its header is not one lm-eval printed" in reason and "without the line" not in reason


def test_open_llm_leaderboard_v2_musr_chance_levels():
    """MuSR's murder mysteries (two suspects) and team allocation (three assignments) had no chance level; object
    placements (a varying number of locations) still has none."""
    from harness_ext.store.scales import chance_level

    assert chance_level("leaderboard_musr_murder_mysteries", "acc_norm")[0] == 0.5
    assert abs(chance_level("leaderboard_musr_team_allocation", "acc_norm")[0] - 1 / 3) < 1e-12
    assert chance_level("leaderboard_musr_object_placements", "acc_norm")[0] is None


def test_leaderboard_counts_and_snake_case_ranks_are_model_metadata(tmp_path):
    """Cybench's table has a "Count" of challenges and "# Solved" beside "% Solved"; a pairwise board has
    "bt_rank" beside its ratings. Read as scores, 40 challenges were a 40% score and rank 1 the worst model.
    Values made up; the headers are the real ones."""
    path = tmp_path / "leaderboard.csv"
    path.write_text("Model,Count,End-to-End % Solved,Flag Success Count,Subtask-Guided # Solved,bt_rank,"
                    "bootstrap_samples\n"
                    "Model A,40,20,8,6,1,300\nModel B,40,10,4,2,2,300\nModel C,35,50,17,9,3,300\n")
    s, report = _store(path)
    (f,) = report.by_status("ingested")
    datasets = {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()}
    assert datasets == {"End-to-End % Solved"}
    text = "\n".join(f.notes)
    for col in ("Count", "Flag Success Count", "Subtask-Guided # Solved", "bt_rank", "bootstrap_samples"):
        assert col in text


def test_footnote_marks_after_model_names_are_left_out(tmp_path):
    """Cybench's board marks models with footnotes ("Claude Opus 4.5 ³", "OpenAI o3-mini ¹†"); kept, the names did not
    merge with the same models elsewhere. Values made up."""
    path = tmp_path / "leaderboard.csv"
    path.write_text("Model,% Solved\nClaude Opus 4.5 \u00b3,82\nOpenAI o3-mini \u00b9\u2020,22.5\nGPT-4o,12.5\nModel*,5\n")
    s, report = _store(path)
    (f,) = report.by_status("ingested")
    names = {r[0] for r in s.con.execute("SELECT name FROM models").fetchall()}
    assert {"Claude Opus 4.5", "OpenAI o3-mini", "GPT-4o", "Model*"} <= names
    assert not any("\u00b3" in n or "\u2020" in n for n in names)
    assert "footnote marks left out of 2 model names" in "\n".join(f.notes)


def test_csv_without_a_model_column_says_so(tmp_path):
    """ARC Prize's board names its models ``Config``/``Display_Name``, KramaBench's ``team``: skipped with no reason."""
    path = tmp_path / "leaderboard.csv"
    path.write_text("team,archeology,astronomy,overall\nModel A,78.5,82.1,80.3\nModel B,45.2,48.7,47.0\n")
    reason = _skip_reason(path)
    assert "a table whose header names no model column (it has team, archeology, astronomy, overall)" in reason
    assert "rename the column that names the models to 'model'" in reason


def test_a_rating_read_as_percentages_is_said(tmp_path):
    """VADER's board has one score, ``mean``, a judge's 0-10 rating (4.9-5.5): read as percentages without a word.
    Values made up; the header is the real one. A column with a value above 10, or a declared scale, is not noted."""
    path = tmp_path / "leaderboard.csv"
    path.write_text("model,mean,ci_low,ci_high,n_scored\nModel A,5.46,5.1,5.8,100\nModel B,4.9,4.5,5.3,100\n")
    s, report = _store(path)
    (f,) = report.by_status("ingested")
    text = "\n".join(f.notes)
    assert "column 'mean' read as percentages (0-100), though all 2 of its values lie between 1 and 10 (4.9 to 5.46)" in text
    assert "'{min: 0, max: 10}'" in text
    other = tmp_path / "b" / "leaderboard.csv"
    other.parent.mkdir()
    other.write_text("model,accuracy\nModel A,54.6\nModel B,4.9\n")
    s, report = _store(other)
    (f,) = report.by_status("ingested")
    assert "read as percentages" not in "\n".join(f.notes)
    side = tmp_path / "c"
    side.mkdir()
    (side / "leaderboard.csv").write_text("model,mean\nModel A,5.46\nModel B,4.9\n")
    (side / "leaderboard.meta.yaml").write_text("columns:\n  mean: {min: 0, max: 10}\n")
    s, report = _store(side / "leaderboard.csv")
    (f,) = report.by_status("ingested")
    assert "read as percentages" not in "\n".join(f.notes)


_CARD = ('## A model card\n\n**BENCHMARK:**\n```json\n"config_general": {\n    "model_name": "org/model"\n  },\n'
         '  "results": {\n    "harness|arc:challenge|25": {\n      "acc": 0.4991,\n      "acc_norm": 0.5461\n    }\n```\n')


def test_a_model_card_pasting_results_json_says_so(tmp_path):
    """A model card (aerdincdal/CBDDO-LLM-8B-Instruct-v1's README.md) pastes its Open LLM Leaderboard v1 results
    JSON in a code fence, its opening brace cut: given alone it was "not a recognised result file" with no reason,
    and in a walk it was passed over without a word. The structure is the card's, the values shortened."""
    card = tmp_path / "README.md"
    card.write_text(_CARD)
    reason = _skip_reason(card)
    assert "results pasted as JSON in a code fence of a markdown file (a model card)" in reason
    assert "not whole JSON as pasted" in reason
    (tmp_path / "w").mkdir()
    whole = tmp_path / "w" / "README.md"
    whole.write_text(_CARD.replace('```json\n"config', '```json\n{"config').replace("    }\n```", "    }\n  }\n}\n```"))
    _, rep = _store(tmp_path / "w")
    (f,) = rep.files
    assert f.status == "skipped" and "the block is whole JSON: save it as a .json file" in f.reason
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "README.md").write_text("# A model\n\n```python\nprint('results')\n```\n")
    _, rep = _store(tmp_path / "plain")
    assert not rep.files
