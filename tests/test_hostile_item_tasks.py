"""An item table may name its tasks anything: ``reduce --items`` lists a table's tasks in the lm-eval group it writes
and asks for ``--log_samples``, whose log lm-eval writes as ``samples_<task>_<date>.jsonl`` under the output folder.
A task named with a '/' or '\\' (``../../../tmp/x``, ``pkg/x``, ``C:\\w\\x``) is left out of the group, as a
dataset-level reduction leaves out such an lm-eval task, and named in a warning and in the group's header; the
task list leaves it out too, and no written file reads or includes anything. Composed hostile values (no real
table names its tasks so)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from harness_ext.cli import main

HOSTILE = ["../../../tmp/escaped_task", "pkg/x", "C:\\w\\x", "a,/tmp/x.yaml", "~/evil/x"]
PLAIN_HOSTILE = ["!function evil.fn", "evil.yaml", "{{ 7*7 }}", "&a *a", "task: y"]
GLOBS = ["{{ 7*7 }}", "&a *a"]  # lm_eval --tasks would match them against its own tasks: not in the task list


def _table(folder, tasks):
    rng = np.random.default_rng(0)
    rows = [{"model": f"org/model-{m}", "task": t, "item": str(i), "score": int(rng.random() < 0.3 + 0.05 * m)}
            for m in range(10) for t in tasks for i in range(30)]
    folder.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(folder / "hostile_long.parquet")


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile_items")
    _table(tmp / "items" / "evilbench", HOSTILE + PLAIN_HOSTILE + ["plain_task"])
    db, out = tmp / "s.duckdb", tmp / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(tmp / "items")]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "evilbench", "--items", "8", "--out", str(out),
                 "--no-plot", "--json", str(tmp / "r.json")]) == 0
    return out, json.loads((tmp / "r.json").read_text())


def test_path_named_table_tasks_are_left_out_of_the_group(reduced):
    out, _ = reduced
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))
    group = yaml.load((out / "harness_ext_reduced.yaml").read_text(), Loader=Loader)
    assert group["aggregate_metric_list"][0]["aggregation"] == ("function", "harness_ext_estimate.estimate")
    assert not set(HOSTILE) & set(group["task"])
    assert set(PLAIN_HOSTILE) | {"plain_task"} <= set(group["task"])  # data to YAML: quoted, not tags
    header = (out / "harness_ext_reduced.yaml").read_text()
    assert "Left out of the group: named with a '/'" in header and '"pkg/x"' in header
    listed = (out / "harness_ext_reduced_tasks.txt").read_text().splitlines()
    assert not (set(HOSTILE) | set(GLOBS)) & set(listed) and "plain_task" in listed


def test_the_warning_names_them_and_the_manifest_keeps_them(reduced):
    out, report = reduced
    text = json.dumps(report)
    assert "5 item tasks are named with a '/'" in text
    assert "named with a glob character (* ? [)" in text
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(HOSTILE) <= set(manifest["tasks"])
    assert all(manifest["lm_eval_tasks"][t]["path_like"] for t in HOSTILE)
    samples = json.loads((out / "harness_ext_reduced_samples.json").read_text())
    assert all(isinstance(d, int) for ids in samples.values() for d in ids)  # document numbers only


def test_nothing_written_reads_a_file(reduced):
    out, _ = reduced
    for f in out.iterdir():
        text = f.read_text(errors="replace")
        assert "!include" not in text
        if f.suffix == ".yaml":  # the group's one tag is its own aggregation, beside it
            tags = [line for line in text.splitlines() if "!function" in line and not line.lstrip().startswith("#")]
            assert all("harness_ext_estimate.estimate" in t or "'!function evil.fn'" in t for t in tags), tags
