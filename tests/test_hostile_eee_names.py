"""Every Eval Ever records are third parties' files: their evaluation and dataset names, source URLs and generation
configs are read into the store, and ``reduce`` writes the subset's names into the lm-eval YAML, the HELM conf and the
task list. Names crafted as YAML (``!include``, ``!function``, anchors, ``key: value``, ``- item``, ``#``), Jinja,
paths (``../..``, ``~``, ``/etc``, ``C:\\``), a glob and 300 characters stay data: the YAML files parse to what was
meant, no line of the task list names a file or a pattern, and no URL or generation config is written anywhere.
Composed records in Every Eval Ever's schema 0.2.0 (the layout of tests/fixtures/every_eval_ever/hfopenllm_v2)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from harness_ext.cli import main

NAMES = ["../../../tmp/escaped", "evil.yaml", "!include /etc/passwd", "!function evil.fn", "&a [*a,*a,*a]",
         "{{ cycler.__init__.__globals__.os.popen('id').read() }}", "C:\\evil\\x", "/etc/passwd", "- item",
         "key: value", "~/.bashrc", "a" * 300, "null", "${HOME}", "'quoted'", '"dq"', "#comment", "? q", "%TAG ! tag:",
         "x*", "plain_a", "plain_b"]


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile_eee")
    rng = np.random.default_rng(0)
    for m in range(12):
        res = [{"evaluation_name": n,
                "source_data": {"dataset_name": n, "source_type": "url", "hf_repo": "../../evil",
                                "url": ["file:///etc/passwd", "local:///etc/x"]},
                "metric_config": {"evaluation_description": "Accuracy on " + n, "lower_is_better": False,
                                  "score_type": "continuous", "min_score": 0.0, "max_score": 1.0},
                "score_details": {"score": float(rng.random())},
                "generation_config": {"generation_args": {"prompt": "{{ x }} !include a"}}} for n in NAMES]
        doc = {"schema_version": "0.2.0", "evaluation_id": f"evil/{m}", "retrieved_timestamp": "1770682486.6",
               "source_metadata": {"source_name": "Evil Board", "source_type": "documentation",
                                   "source_organization_name": "x", "evaluator_relationship": "third_party"},
               "model_info": {"name": f"m{m}", "id": f"org{m}/m{m}", "developer": f"org{m}"}, "evaluation_results": res}
        d = tmp / "eee" / "evil" / f"org{m}" / f"m{m}"
        d.mkdir(parents=True)
        (d / f"{m:08d}-0000-0000-0000-000000000000.json").write_text(json.dumps(doc))
    db, out = tmp / "s.duckdb", tmp / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(tmp / "eee")]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "evil_board", "--budget", str(len(NAMES) - 1),
                 "--out", str(out), "--no-plot", "--n-random-subsets", "5", "--json", str(tmp / "r.json")]) == 0
    return out, json.loads((tmp / "r.json").read_text())


def test_the_yaml_files_hold_no_tag_or_key_of_a_name(reduced):
    out, _ = reduced
    for f in out.glob("*.yaml"):
        assert yaml.safe_load(f.read_text()) is None  # no lm-eval task is known: comments only, no document
    conf = (out / "run_entries_harness_ext_reduced.conf").read_text()
    assert [line for line in conf.splitlines() if not line.startswith("#")] == ["entries: []"]


def test_the_task_list_names_no_file_or_pattern(reduced):
    out, report = reduced
    listed = (out / "harness_ext_reduced_tasks.txt").read_text().splitlines()
    assert listed and not any("/" in n or "\\" in n or n.startswith("~") or n.endswith(".yaml") or "*" in n
                              or "?" in n or "[" in n for n in listed)
    text = json.dumps(report)
    assert "named with a glob character" in text and "named as a path or a YAML file" in text


def test_no_url_or_generation_config_is_written(reduced):
    out, _ = reduced
    for f in out.iterdir():
        text = f.read_text(errors="replace")
        assert "file:///etc/passwd" not in text and "local://" not in text and "../../evil" not in text
        assert "{{ x }}" not in text
