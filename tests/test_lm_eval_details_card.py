"""lm-eval's details dataset cards (:mod:`harness_ext.adapters.lm_eval_card`), read through the model_card adapter.

Fixtures: ``tests/fixtures/lm_eval_details_cards`` (three real cards of the Open LLM Leaderboard v2's details
datasets, their whole quoted results block or a slice of it; see its PROVENANCE.md). The scores are checked against
the leaderboard's own item-level table of the same run (shared data, ``items/open_llm_v2``) and, for a card lm-eval
would write from a real results file (``fixtures/lm_eval_groups``), against that file read by the lm-eval adapter.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import SHARED_DATA
from test_open_llm_v2_item_table import PARTS  # the item table's tasks -> lm-eval subtasks, in item order
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CARDS = FIXTURES / "lm_eval_details_cards"
QWEN = FIXTURES / "lm_eval_groups" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T19-36-06.549915.json"


def _readme(tmp_path, text: str, name: str = "card") -> Path:
    (tmp_path / name).mkdir()
    path = tmp_path / name / "README.md"
    path.write_text(text)
    return path


def _card(tmp_path, model: str) -> Path:
    return _readme(tmp_path, (CARDS / f"EleutherAI__{model}-details.md").read_text(), model)


def _ingest(*paths):
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(p) for p in paths], show_progress=False)
    return s, report


def _cells(s, model=None) -> dict:
    rows = s.con.execute(
        "SELECT m.name, d.benchmark, d.name, d.metric, d.kind, r.value, r.num_fewshot, r.stderr FROM results r "
        "JOIN datasets d USING (dataset_id) JOIN models m USING (model_id)").fetchall()
    return {r[1:5]: r[5:] for r in rows if model is None or r[0] == model}


@pytest.mark.parametrize("model, n_rows, n_results, groups", [
    ("pythia-1.4b", 44, 53, {"leaderboard", "leaderboard_bbh", "leaderboard_gpqa", "leaderboard_math_hard",
                             "leaderboard_musr"}),
    ("pythia-2.8b", 45, 55, {"leaderboard", "leaderboard_bbh", "leaderboard_gpqa", "leaderboard_math_hard",
                             "leaderboard_musr"}),
    ("pythia-1b", 11, 20, {"leaderboard", "leaderboard_gpqa", "leaderboard_musr"}),
])
def test_the_leaderboards_details_cards_are_read(tmp_path, model, n_rows, n_results, groups):
    """Each card's every task and group, as lm-eval's results file stores them: ``acc,none`` as metric acc, the
    aliases' nesting as the groups, standard errors beside the scores, the model from the card's title."""
    s, report = _ingest(_card(tmp_path, model))
    (f,) = report.files
    assert f.status == "ingested", f.reason
    cells = _cells(s)
    assert {m for (m,) in s.con.execute("SELECT name FROM models").fetchall()} == {f"EleutherAI/{model}"}
    assert len({k[1] for k in cells}) == n_rows and len(cells) == f.n_results == n_results
    assert {k[1] for k in cells if k[3] == "aggregate"} == groups
    assert {k[0] for k in cells} == {"lm_eval"}
    musr = cells[("lm_eval", "leaderboard_musr_team_allocation", "acc_norm", "dataset")]
    assert musr[1] == 0 and musr[2] is not None  # MuSR's YAML: zero-shot; its standard error kept
    ifeval = cells[("lm_eval", "leaderboard_ifeval", "inst_level_strict_acc", "dataset")]
    assert ifeval[2] is None  # "N/A": no standard error
    notes = "\n".join(f.notes)
    assert "Not in the card, so not stored" in notes and "given the shot counts of their YAMLs" in notes


def test_a_card_before_and_after(tmp_path):
    """The three cards were refused before this reader ("ingest the results_<date>.json file"); all are read now."""
    for model in ("pythia-1.4b", "pythia-2.8b", "pythia-1b"):
        _card(tmp_path, model)
    s, report = _ingest(tmp_path)
    assert [f.status for f in report.files] == ["ingested"] * 3
    assert sum(f.n_results for f in report.files) == 53 + 55 + 20
    # pythia-2.8b's leaderboard_arc_challenge is no task of lm-eval's leaderboard YAMLs now: its shots unknown.
    arc = _cells(s, "EleutherAI/pythia-2.8b")[("lm_eval", "leaderboard_arc_challenge", "acc_norm", "dataset")]
    assert arc[0] == 0.3575085324232082 and arc[1] == -1  # the store's 'not recorded'


def test_the_cards_scores_are_the_runs_item_level_scores(tmp_path):
    """pythia-1.4b's card against the leaderboard's item-level table of the same run (the shared data): each stored
    subtask score is its items' mean, exactly, and the stored MuSR group is their mean weighted by size."""
    import pandas as pd

    tables = SHARED_DATA / "items" / "open_llm_v2"
    if not tables.is_dir():
        pytest.skip(f"the shared item tables are not at {tables}")
    s, _ = _ingest(_card(tmp_path, "pythia-1.4b"))
    cells = _cells(s)
    checked = 0
    for task, parts in PARTS.items():
        table = pd.read_parquet(tables / f"{task}.parquet", columns=["model", "item", "score"])
        scores = table[table["model"] == "EleutherAI/pythia-1.4b"].sort_values("item")["score"].to_numpy(dtype=float)
        start = 0
        for subtask, metric, n in parts:
            assert cells[("lm_eval", subtask, metric, "dataset")][0] == float(np.sum(scores[start:start + n])) / n
            start += n
            checked += 1
        if task == "musr":
            assert cells[("lm_eval", "leaderboard_musr", "acc_norm", "aggregate")][0] == pytest.approx(
                float(np.sum(scores)) / len(scores), abs=1e-15)
    assert checked == 9


def _card_from_results(results: dict, model: str) -> str:
    """The card lm-eval's ``EvaluationTracker.recreate_metadata_card`` writes for a run: ``{"all": results, **results}``
    as ``json.dumps(indent=4)`` under "## Latest results" (the title and the front matter's ``pretty_name`` name the
    model)."""
    block = {"all": results}
    block.update(results)
    return (f"---\npretty_name: Evaluation run of {model}\n---\n\n# Dataset Card for Evaluation run of {model}\n\n"
            "## Latest results\n\nThese are the [latest results from run 2026-04-12T19-36-06.549915](x):\n\n"
            f"```python\n{json.dumps(block, indent=4)}\n```\n")


def test_a_card_reads_as_the_results_file_it_quotes(tmp_path):
    """A real lm-eval 0.4 results file (MMLU-Redux, its groups and lm-eval's inline subgroups) and the card lm-eval
    would push for it: the same tasks, groups, metrics and values, identical; the card's rows without shot counts
    (the file gives them, the card does not: so the card's cells are not the file's)."""
    doc = json.loads(QWEN.read_text())
    model = "Qwen/Qwen3.5-9B"
    (tmp_path / "run").mkdir()
    shutil.copy(QWEN, tmp_path / "run" / QWEN.name)
    s_file, r_file = _ingest(tmp_path / "run")
    s_card, r_card = _ingest(_readme(tmp_path, _card_from_results(doc["results"], model)))
    assert r_card.files[0].status == "ingested", r_card.files[0].reason
    from_file, from_card = _cells(s_file), _cells(s_card)
    assert {k: v[0] for k, v in from_card.items()} == {k: v[0] for k, v in from_file.items()}
    assert {k: v[2] for k, v in from_card.items()} == {k: v[2] for k, v in from_file.items()}
    assert {v[1] for v in from_card.values()} == {-1} and 0 in {v[1] for v in from_file.values()}
    assert "5 groups inferred from the aliases' nesting" in "\n".join(r_card.files[0].notes)


def _hostile(tmp_path, block_text: str, name: str = "card"):
    text = ("---\npretty_name: Evaluation run of org/m\n---\n\n## Latest results\n\n```python\n" + block_text
            + "\n```\n")
    s, report = _ingest(_readme(tmp_path, text, name))
    (f,) = report.files
    assert s.con.execute("SELECT count(*) FROM results").fetchone() == (0,)  # nothing half-stored
    return f


@pytest.mark.parametrize("block, reason", [
    ('{"all": {"leaderboard_musr": {"acc_norm,none": 0.35,}', "are not JSON"),
    ('{"all": {"a": {"acc,none": 0.5}}, "a": {"acc,none": 0.6}}', "differ between its 'all' copy and the tasks"),
    ('{"all": {"../../etc/passwd": {"acc,none": 0.5}}}', "which is no lm-eval task name"),
    ('{"all": {"a": {"acc,none": {"x": [1, 2]}}}}', "has 'acc,none' = a nested dict"),
    ('{"all": {"a": {"acc,none": 7.5}}}', "outside [0, 1]"),
    ('{"all": ' * 100_000 + '{"a": {"acc,none": 0.5}}' + "}" * 100_000, "not JSON"),
    ('{"all": {"a": {"acc": 0.5}}}', "neither lighteval's"),
    ('[1, 2]', "not an object of tasks"),
])
def test_hostile_cards_get_one_clear_reason_each(tmp_path, block, reason):
    f = _hostile(tmp_path, block)
    assert f.status == "skipped" and reason in f.reason and "README.md" in str(f.path), f.reason


def test_a_huge_card_is_refused_unread(tmp_path):
    """A card over the markdown limit (4 MiB) is not read into memory: refused by its size, nothing stored."""
    rows = ", ".join(f'"t{i}": {{"acc,none": 0.5, "alias": "t{i}"}}' for i in range(120_000))
    f = _hostile(tmp_path, f'{{"all": {{{rows}}}}}')
    assert f.status == "skipped" and "over the 4 MiB a card is read up to" in f.reason, f.reason


@pytest.mark.parametrize("title, model", [
    ("Evaluation run of my org/pythia 1b", "my org/pythia 1b"),
    ("\"Evaluation run of /models/Pythia 1B (step 3000)\"", "/models/Pythia 1B (step 3000)"),
    ("'Evaluation run of O''Brien/m 7b'", "O'Brien/m 7b"),
    # PyYAML folds a long title at a space onto an indented line: YAML reads the lines as one.
    ("Evaluation run of /home/someone/checkpoints/a fine-tuned\n  pythia-1b/step 3000",
     "/home/someone/checkpoints/a fine-tuned pythia-1b/step 3000"),
])
def test_a_title_naming_a_model_with_spaces_is_read_in_a_walk(tmp_path, title, model):
    """The title names the model lm-eval was given (a local path may hold spaces): read as YAML reads the line, the
    walk reads the card beside a plain one, nothing passed over."""
    text = (CARDS / "EleutherAI__pythia-1b-details.md").read_text()
    _readme(tmp_path, text.replace("pretty_name: Evaluation run of EleutherAI/pythia-1b", f"pretty_name: {title}"),
            "spaced")
    _card(tmp_path, "pythia-1b")
    s, report = _ingest(tmp_path)
    assert [f.status for f in report.files] == ["ingested", "ingested"], [f.reason for f in report.files]
    names = {r[0] for r in s.con.execute("SELECT name FROM models").fetchall()}
    assert names == {"EleutherAI/pythia-1b", model}
    assert _cells(s, model) == _cells(s, "EleutherAI/pythia-1b")


@pytest.mark.parametrize("title", ["Evaluation run of a: b", "Evaluation run of", "'Evaluation run of x",
                                   '"Evaluation run of x'])
def test_a_title_naming_no_readable_model_is_refused_in_a_walk_with_the_reason(tmp_path, title):
    text = (CARDS / "EleutherAI__pythia-1b-details.md").read_text()
    path = _readme(tmp_path, text.replace("pretty_name: Evaluation run of EleutherAI/pythia-1b",
                                          f"pretty_name: {title}"), "bad")
    s, report = _ingest(tmp_path)
    (f,) = report.files
    assert f.status == "skipped" and Path(f.path) == path and "names no model that can be read" in f.reason, f.reason
    assert s.con.execute("SELECT count(*) FROM results").fetchone() == (0,)
