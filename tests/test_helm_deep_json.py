"""A HELM run whose JSON is nested too deeply is skipped with the file named, not a crash of ``ingest``.

Found by the reliability fuzz (``deep_nesting`` of the real run in tests/fixtures/helm_instances): a
``per_instance_stats.json`` nested 100,000 levels deep escaped the per-instance reader as a RecursionError, and
``harness-ext ingest`` stopped with "unexpected RecursionError" instead of reporting the file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_ext.cli import main

RUN = Path(__file__).parent / "fixtures" / "helm_instances" / "babi_qa_task15"


@pytest.mark.parametrize("name", ["per_instance_stats.json", "stats.json"])
def test_a_deeply_nested_file_of_a_run_is_named_and_skipped(tmp_path, capsys, name):
    run = tmp_path / "babi_qa_task15"
    shutil.copytree(RUN, run)
    doc = json.loads((run / name).read_text())
    depth = 100_000
    (run / name).write_text(json.dumps(doc)[:-1] + ", " + "[" * depth + "1" + "]" * depth + "]")
    code = main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(run)])
    err = capsys.readouterr().err
    assert "unexpected RecursionError" not in err
    assert f"{name} is nested too deeply to read" in err
    # the run's scores are stored when only its per-instance file is unreadable
    assert code == (0 if name == "per_instance_stats.json" else 1)
