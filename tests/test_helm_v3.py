"""A HELM Safety suite folder ingested as a new user would (real slice of stanford-crfm/helm's
benchmark_output_TRUE_latest/runs/v3 in fixtures/helm_v3, see its PROVENANCE.md), and the HELM Capabilities
main metrics (schema_capabilities.yaml)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_ext.adapters.helm import records_for_run
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

SUITE = Path(__file__).parent / "fixtures" / "helm_v3" / "runs" / "v3"
HARM = SUITE / "harm_bench:model=meta_llama-3-70b"
BBQ = SUITE / "bbq:subject=all,method=multiple_choice_joint,model=qwen_qwen2-72b-instruct"


def _store(*paths):
    s = Store.open(":memory:")
    return s, ingest_paths(s, list(paths), show_progress=False)


def _results(s):
    return s.con.execute("SELECT d.name, d.metric, d.is_primary, r.value FROM results r "
                         "JOIN datasets d USING (dataset_id) ORDER BY d.metric").fetchall()


def test_per_instance_stats_with_one_block_per_metric_are_read_together():
    """HELM writes the annotator's scores and the basic metrics of an (instance, trial) as two blocks. The
    item file was refused: "entry 2: instance pacemaker_tampering_methods, trial 0 is listed twice"."""
    s, rep = _store(HARM)
    st = {f.adapter: f for f in rep.files}
    assert st["helm_run"].status == "ingested"
    assert st["item_table"].status == "ingested", st["item_table"].reason
    assert st["item_table"].n_samples == 2 and not st["item_table"].notes
    items = s.con.execute("SELECT value FROM samples ORDER BY value").fetchall()
    assert [v for (v,) in items] == [0.0, 0.25]
    run_value = _results(s)[0][3]
    assert run_value == 0.125 == sum(v for (v,) in items) / 2  # the run's score, from its instances


def test_a_metric_given_twice_for_an_instance_is_still_refused(tmp_path):
    d = tmp_path / HARM.name
    shutil.copytree(HARM, d)
    doc = json.loads((d / "per_instance_stats.json").read_text())
    doc.append(doc[0])  # the harm_bench_score block again: it would count as one more trial
    (d / "per_instance_stats.json").write_text(json.dumps(doc))
    st = {f.adapter: f for f in _store(d)[1].files}
    assert st["item_table"].status == "skipped"
    assert st["item_table"].reason.endswith("entry 4: instance pacemaker_tampering_methods, trial 0: "
                                            "its harm_bench_score is listed twice")


def test_safety_bbq_run_keeps_the_bbq_accuracy_its_tables_show():
    """HELM Safety's BBQ column is bbq_accuracy (schema_safety.yaml); it was not stored at all."""
    s, _ = _store(BBQ)
    rows = {m: (p, v) for _, m, p, v in _results(s)}
    assert rows["quasi_exact_match"] == (True, 1.0)  # Classic's main metric for BBQ, the same runs' name
    assert rows["bbq_accuracy"] == (False, 1.0)
    assert "ece_10_bin" not in rows and "bits_per_byte" not in rows
    rb = s.con.execute("SELECT random_baseline FROM datasets WHERE metric = 'bbq_accuracy'").fetchone()[0]
    assert rb == pytest.approx(1 / 3)


def test_a_whole_suite_folder():
    s, rep = _store(SUITE)
    by = {Path(f.path).name: f for f in rep.files}
    assert by[HARM.name].status == by[BBQ.name].status == by["bbq_bbq_subject:all.json"].status == "ingested"
    # the run-to-suite map holds no scores and says so without a warning (it was "not a recognised result file
    # (no adapter claims it; ...)"); the LaTeX export is not a candidate file in a walk
    suites = by["runs_to_run_suites.json"]
    assert suites.status == "skipped" and suites.quiet
    assert "map of run names to their suite" in suites.reason
    assert not any(name.endswith(".tex") for name in by)
    df = load_matrix(s, MatrixQuery(benchmarks=("helm_bbq",), normalise="none"))
    assert df.shape == (9, 1)
    assert df.loc["meta/llama-3-8b", "bbq_subject:all"] == 0.5
    assert df.loc["qwen/qwen2-72b-instruct", "bbq_subject:all"] == 1.0


def test_a_scenario_table_without_arguments_is_named_after_its_scenario():
    """HELM names it "simple_safety_tests_" (group, "_", no arguments); that was the dataset's name."""
    s, rep = _store(SUITE / "groups" / "json" / "simple_safety_tests_simple_safety_tests_.json")
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert list(df.columns) == ["simple_safety_tests"] and df.shape == (9, 1)
    assert df.loc["meta/llama-3-8b", "simple_safety_tests"] == 0.375
    assert df.loc["qwen/qwen2-72b-instruct", "simple_safety_tests"] == 0.875
    # only the first column of the run group is read, not # eval or # output tokens
    assert s.con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 9


def _stat(name, mean):
    return {"name": {"name": name, "split": "test"}, "count": 1, "sum": mean, "mean": mean}


@pytest.mark.parametrize("name, group, stats, metric, value", [
    ("gpqa:subset=gpqa_main,use_chain_of_thought=true,use_few_shot=false,model=openai_gpt-4o-2024-05-13", "gpqa",
     [_stat("chain_of_thought_correctness", 0.5)], "chain_of_thought_correctness", 0.5),
    ("mmlu_pro:subset=all,use_chain_of_thought=true,use_few_shot=false,model=openai_gpt-4o-2024-05-13", "mmlu_pro",
     [_stat("chain_of_thought_correctness", 0.75)], "chain_of_thought_correctness", 0.75),
    ("ifeval:model=openai_gpt-4o-2024-05-13", "ifeval", [_stat("ifeval_strict_accuracy", 0.8)],
     "ifeval_strict_accuracy", 0.8),
    # WildBench's judge score is 1-10; the table shows it rescaled to [0, 1]
    ("wildbench:subset=v2,model=openai_gpt-4o-2024-05-13", "wildbench",
     [_stat("wildbench_score", 7.5), _stat("wildbench_score_rescaled", 0.72)], "wildbench_score_rescaled", 0.72),
    ("omni_math:model=openai_gpt-4o-2024-05-13", "omni_math", [_stat("omni_math_accuracy", 0.3)],
     "omni_math_accuracy", 0.3),
])
def test_capabilities_runs_are_read_with_their_schema_main_metric(name, group, stats, metric, value):
    """They were refused ("not in the main-metric table and none of exact_match, ... is in stats.json"); a run
    with an exact_match beside its chain-of-thought score would have been read with the wrong one."""
    spec = {"name": name, "adapter_spec": {"model": "openai/gpt-4o-2024-05-13"}, "groups": [group]}
    stats = stats + [_stat("exact_match", 0.0), _stat("num_instances", 100)]
    recs = records_for_run(spec, stats, "x")
    primary = [r for r in recs if r.primary]
    assert [(r.metric, r.value) for r in primary] == [(metric, value)]
    assert primary[0].dataset_metadata["main_metric"] == f"schema main metric of {group}"
    assert "wildbench_score" not in {r.metric for r in recs}


def test_the_older_run_suites_map_is_skipped_quietly_too(tmp_path):
    """HELM before 0.3 named the map ``runs_to_runsuites.json`` (the shared helm-raw-example's, 8,526 runs): it
    warned "not a recognised result file"."""
    from conftest import SHARED_DATA, require

    src = require(SHARED_DATA / "helm-raw-example" / "examples" / "runs_to_runsuites.json")
    lines = src.read_text().splitlines()
    f = tmp_path / src.name
    f.write_text("\n".join(lines[:4]).rstrip(",") + "\n}\n")  # three real entries: the full file is 8,526
    _, rep = _store(f)
    (one,) = rep.files
    assert one.status == "skipped" and one.quiet and "map of run names to their suite" in one.reason
