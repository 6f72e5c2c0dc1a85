"""Inspect AI logs (issue 16, item 4): a real .json log, the same header in an .eval archive, and refusals."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, query_results
from harness_ext.store.db import Store
from harness_ext.store.item_tables import item_rows

LOG = Path(__file__).parent / "fixtures" / "inspect" / "2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json"


def test_real_inspect_json_log():
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [LOG], show_progress=False)
        [f] = [x for x in rep.files if x.path.endswith(".json")]
        assert f.status == "ingested" and f.adapter == "inspect_ai", f
        r = query_results(s, MatrixQuery(benchmarks=("inspect",)))
    assert list(zip(r["model"], r["dataset"], r["metric"], r["value"], r["stderr"])) == \
        [("openai/gpt-4o-mini", "input_task", "accuracy", 1.0, 0.0)]


def test_eval_archive_and_refusals(tmp_path):
    doc = json.loads(LOG.read_text())
    header = {k: v for k, v in doc.items() if k != "samples"}
    header["results"]["scores"][0]["metrics"]["accuracy"]["value"] = 0.5
    archive = tmp_path / "run.eval"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("header.json", json.dumps(header))
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps({**doc, "status": "error"}))
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [tmp_path], show_progress=False)
        by = {Path(f.path).name: f for f in rep.files}
        assert by["run.eval"].status == "ingested"
        assert by["failed.json"].status == "skipped" and "not 'success'" in by["failed.json"].reason
        r = query_results(s, MatrixQuery(benchmarks=("inspect",)))
    assert r["value"].tolist() == [0.5]


def test_a_metric_without_a_number_is_noted_and_a_bool_is_not_a_score(tmp_path):
    """They were left out (null) or stored as 1.0 (true) without a word."""
    doc = json.loads(LOG.read_text())
    metrics = doc["results"]["scores"][0]["metrics"]
    metrics["mean"] = {"name": "mean", "value": None}
    metrics["all"] = {"name": "all", "value": True}
    log = tmp_path / "log.json"
    log.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        (f,) = ingest_paths(s, [log], show_progress=False).files
        assert f.status == "ingested" and f.n_results == 1
        assert f.notes == ["2 metrics without a numeric value left out: mean, all"]


GEMMA = Path(__file__).parent / "fixtures" / "inspect" / "samples" / "2025-07-05T09-59-40-04-00_popularity_gemma3.json"


def test_scores_of_other_reducers_than_the_mean_are_named_with_them(tmp_path):
    """A task reducing its epochs by several reducers (``epochs=Epochs(2, ["max", "mean"])``) gets one header score
    per reducer, each named by its scorer and carrying its ``reducer`` (inspect_ai ``_eval/task/results.py``).
    Both were stored as ``match/accuracy``: the second was a conflict and the first (the max) was used. The mean keeps
    its name (the column of other logs' default mean); the max is ``match/max/accuracy``; a log reduced by the max
    alone stores ``max/accuracy``, not ``accuracy``. Built from the real gemma3 log, its header scores rewritten as
    Inspect writes them for these reducers (no real such log was found)."""
    doc = json.loads(GEMMA.read_text())
    doc["eval"]["config"].update(epochs=2, epochs_reducer=["max", "mean"])
    base = doc["results"]["scores"][0]
    doc["results"]["scores"] = [
        dict(base, reducer=r, metrics={"accuracy": {"name": "accuracy", "value": v, "params": {}},
                                       "stderr": {"name": "stderr", "value": e, "params": {}}})
        for r, v, e in (("max", 1.0, 0.0), ("mean", 0.5, 0.5))]
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "reduced.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [tmp_path / "two"], show_progress=False)
        [f] = [f for f in rep.by_status("ingested") if f.adapter == "inspect_ai"]
        assert s.counts()["conflicts"] == 0
        assert any("reduced over epochs by max (not the mean)" in n for n in f.notes)
        r = query_results(s, MatrixQuery(benchmarks=("inspect",)), all_metrics=True)
        got = dict(zip(r["metric"], zip(r["value"], r["stderr"])))
        assert got == {"match/max/accuracy": (1.0, 0.0), "match/accuracy": (0.5, 0.5)}
        items = item_rows(s)
    assert set(items["metric"]) == {"match/accuracy"}  # the samples' scores, averaged over epochs: the mean's name
    doc["eval"]["config"]["epochs_reducer"] = ["max"]
    doc["results"]["scores"] = doc["results"]["scores"][:1]
    (tmp_path / "max").mkdir()
    (tmp_path / "max" / "reduced.json").write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        ingest_paths(s, [tmp_path / "max"], show_progress=False)
        r = query_results(s, MatrixQuery(benchmarks=("inspect",)), all_metrics=True)
        assert list(zip(r["metric"], r["value"])) == [("max/accuracy", 1.0)]
        assert set(item_rows(s)["metric"]) == {"max/accuracy"}


CYSE2 = (Path(__file__).parent / "fixtures" / "inspect"
         / "2025-03-21T05-07-40+00-00_cyse2-vulnerability-exploit_mistral-large.json")


def test_std_is_a_metric_not_the_stderr_and_epochs_are_not_samples():
    """inspect_evals' cyse2_vulnerability_exploit (inspect_ai 0.3.75, 4 epochs over 585 samples) reports accuracy
    0.3811, mean 0.3811 and std 0.3116. The std was stored as the accuracy's stderr (the samples' spread, about 24
    times the standard error of their mean), and the sample count as the 2,340 completed runs."""
    s = Store.open(":memory:")
    rep = ingest_paths(s, [CYSE2], show_progress=False)
    (f,) = rep.by_status("ingested")
    assert f.notes == ["4 epochs: the metrics are over 585 samples' epoch-reduced scores, stored as the sample count "
                       "(not the 2,340 completed runs)"]
    rows = {r[0]: r[1:] for r in s.con.execute(
        "SELECT d.metric, d.name, d.is_primary, r.value, r.stderr, r.n_samples FROM results r "
        "JOIN datasets d USING (dataset_id)").fetchall()}
    assert rows["accuracy"] == ("cyse2_vulnerability_exploit", True, 0.38108974358974373, None, 585)
    assert rows["mean"][1:] == (False, 0.38108974358974357, None, 585)
    assert rows["std"][1:] == (False, 0.3115628730565127, None, 585)


def test_a_real_log_run_with_a_limit_is_noted_and_one_above_the_dataset_is_not():
    """inspect_ai writes the dataset's size (``eval.dataset.samples``) and the samples run (``sample_ids``): the
    committed gemma3 log ran ``--limit 1`` on the 100-sample popularity dataset, and its score (one sample) was
    stored without a word; cyse2's ``limit 20000`` is above its 585 samples and cuts nothing (its notes, above)."""
    with Store.open(":memory:") as s:
        (f,) = [f for f in ingest_paths(s, [GEMMA], show_progress=False).files if f.adapter == "inspect_ai"]
    assert f.status == "ingested"
    assert "scored on 1 of the dataset's 100 samples (limit 1): not the task's score over all its samples" in f.notes


def _ingest_edited(tmp_path, edit):
    """The real log edited by ``edit``, ingested alone: its file report and its stored ``inspect`` results."""
    doc = json.loads(LOG.read_text())
    edit(doc)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        (f,) = [f for f in ingest_paths(s, [path], show_progress=False).files if f.path.endswith("log.json")]
        return f, query_results(s, MatrixQuery(benchmarks=("inspect",)))


def _edited(tmp_path, edit):
    f, rows = _ingest_edited(tmp_path, edit)
    return f, len(rows)


def _results(**kw):
    return lambda doc: doc["results"].update(kw)


@pytest.mark.parametrize("edit, note", [
    (_results(total_samples=10, completed_samples=7),
     "3 of 10 samples not completed (errors tolerated by fail_on_error, or stopped early): the scores are over the "
     "7 completed"),
    (lambda doc: doc["results"]["scores"][0].update(scored_samples=8, unscored_samples=2),
     "samples left unscored, not in the metrics: model_graded_fact 2 of 10"),
    (_results(early_stopping={"manager": "stopper", "early_stops": [{"id": 3, "epoch": 1, "reason": "done"}]}),
     "the run was stopped early (early_stopping): the scores are over the samples run before it stopped"),
    (lambda doc: (doc["eval"]["config"].update(sample_id=["a", "b"]), doc["eval"]["dataset"].update(samples=40,
                                                                                                  sample_ids=["a", "b"])),
     "scored on 2 of the dataset's 40 samples (sample_id): not the task's score over all its samples"),
])
def test_a_finished_log_over_part_of_its_samples_is_noted_with_the_counts(tmp_path, edit, note):
    """A ``success`` log can still score part of its samples (inspect_ai ``log/_log.py``: ``completed_samples`` below
    ``total_samples``, a score's ``unscored_samples``, ``early_stopping``; ``eval.config`` ``sample_id``). No real
    such log is committed: each case edits the committed real input_task log as inspect_ai writes these fields."""
    f, n = _edited(tmp_path, edit)
    assert f.status == "ingested" and n == 1
    assert note in f.notes, f.notes


def test_an_invalidated_log_is_refused_with_the_reason(tmp_path):
    """``invalidated: true`` (newer inspect_ai's EvalLog: samples invalidated after the run), built by editing the
    committed real input_task log: refused, nothing stored."""
    f, n = _edited(tmp_path, lambda doc: doc.update(invalidated=True))
    assert f.status == "skipped" and "invalidated" in f.reason and n == 0


def test_a_real_log_without_its_format_version_is_read_as_inspect_reads_it():
    """Epoch AI's public logs (as Every Eval Ever keeps them) open with ``status``: no ``version``, which Inspect reads
    as 2. Not "a file no adapter claims": read, with a note; a document with ``status`` and ``eval`` but not
    Inspect's spec fields is still not claimed."""
    from harness_ext.adapters.inspect_items import is_log_file

    log = next((LOG.parent / "no_version").glob("*.json"))
    assert "version" not in json.loads(log.read_text()) and is_log_file(log)
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [log], show_progress=False)
        [f] = rep.files
        assert f.status == "ingested" and f.adapter == "inspect_ai", f
        assert any("no log format version" in n for n in f.notes), f.notes
        r = query_results(s, MatrixQuery(benchmarks=("inspect",)))
    assert list(zip(r["model"], r["dataset"], r["metric"], r["value"], r["stderr"], r["n_samples"])) == \
        [("anthropic/claude-opus-4-6", "simpleqa_verified", "accuracy", 0.431, 0.01566794448817344, 1000)]
    from harness_ext.adapters.inspect_ai import _is_log

    assert not _is_log({"status": "ok", "eval": {"task": "t", "model": "m"}})


def _roles(**roles):
    """An edit giving the run's models by role, as Inspect writes ``--model none/none --model-role r=m``: each role an
    ``EvalModelConfig`` (``model``, ``config``, ``args``)."""
    return lambda doc: doc["eval"].update(model="none/none", model_roles={
        r: {"model": m, "config": {}, "args": {}} for r, m in roles.items()})


def _roles_model(tmp_path, edit):
    f, rows = _ingest_edited(tmp_path, edit)
    return f, sorted(set(rows["model"]))


@pytest.mark.parametrize("roles, model", [
    ({"grader": "openai/gpt-4o", "target": "openai/gpt-4o-mini"}, "openai/gpt-4o-mini"),
    ({"target": "openai/gpt-4o-mini", "red_team": "anthropic/claude-sonnet-4-20250514"}, "openai/gpt-4o-mini"),
    ({"solver": "openai/gpt-4o-mini"}, "openai/gpt-4o-mini"),
    # Petri's alignment audits (safety-research/petri) run with these three roles and no --model.
    ({"auditor": "anthropic/claude-sonnet-4-20250514", "target": "openai/gpt-4o-mini",
      "judge": "anthropic/claude-opus-4-20250514"}, "openai/gpt-4o-mini"),
])
def test_a_none_none_log_with_model_roles_is_stored_under_the_target_model(tmp_path, roles, model):
    """A run given its models by role has ``eval.model`` ``none/none``; its scores were stored under ``none/none``.
    No real such log was found in the code index (only a header quoted in a chat transcript, of unknown licence,
    with ``"model": "none/none"`` and auditor, target and judge roles, each ``{"model", "config", "args"}``): each
    case edits the committed real input_task log (a model-graded task, so a grader role is its natural second role)
    as inspect_ai writes ``eval.model_roles``."""
    f, models = _roles_model(tmp_path, _roles(**roles))
    role = "target" if "target" in roles else next(iter(roles))
    assert f.status == "ingested" and models == [model], (f, models)
    assert f"eval.model is none/none: the scores are stored under the '{role}' model role's model, {model}" in f.notes


def test_a_none_none_log_with_several_roles_and_no_target_is_refused_naming_them(tmp_path):
    f, models = _roles_model(tmp_path, _roles(auditor="anthropic/claude-sonnet-4-20250514", judge="openai/gpt-4o"))
    assert f.status == "skipped" and models == []
    assert "log.json" in f.reason or f.path.endswith("log.json")
    assert "auditor (anthropic/claude-sonnet-4-20250514), judge (openai/gpt-4o)" in f.reason, f.reason
    assert "no 'target' role" in f.reason


def test_a_none_none_log_without_roles_is_refused(tmp_path):
    """``none/none`` with no model roles is a run of no model (outputs scored as given): its scores are no model's, so
    the log is refused with the reason, not stored under a model called ``none/none``."""
    f, models = _roles_model(tmp_path, lambda doc: doc["eval"].update(model="none/none"))
    assert f.status == "skipped" and models == []
    assert "eval.model is none/none and the log names no model roles" in f.reason, f.reason


def test_a_log_with_its_own_model_keeps_it_beside_a_grader_role(tmp_path):
    """``eval.model`` names the model under test: a grader role beside it changes nothing."""
    f, models = _roles_model(tmp_path, lambda doc: doc["eval"].update(
        model_roles={"grader": {"model": "openai/gpt-4o", "config": {}, "args": {}}}))
    assert f.status == "ingested" and models == ["openai/gpt-4o-mini"] and not any("none/none" in n for n in f.notes)


def test_a_none_none_log_s_samples_go_to_the_item_table_under_the_target_model(tmp_path):
    """The item reader names the model as the results do (the real gemma3 popularity log, its model given by role)."""
    doc = json.loads(GEMMA.read_text())
    _roles(target="ollama/gemma3", grader="openai/gpt-4o")(doc)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        ingest_paths(s, [path], show_progress=False)
        assert set(item_rows(s)["model"]) == {"ollama/gemma3"}
        assert set(query_results(s, MatrixQuery(benchmarks=("inspect",)))["model"]) == {"ollama/gemma3"}
