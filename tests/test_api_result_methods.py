"""The Python API's results as a new user meets them on the shared data: every object the API returns has the
methods its siblings have (``to_frame()``, ``to_json()``), and what they give matches the command line."""

from __future__ import annotations

import json

import pytest

import harness_ext as hx
from conftest import PYTHIA

pytestmark = pytest.mark.skipif(not PYTHIA.is_dir(), reason="shared Pythia evals not present")


def test_ingest_report_has_to_frame_and_to_json_as_the_command(tmp_path):
    from harness_ext.cli import main

    files = [PYTHIA / "bloom", PYTHIA / "README.md"]  # five lm-eval v0.3 runs and a file holding no results
    report = hx.ingest(files, store=tmp_path / "api.duckdb")
    frame = report.to_frame()
    assert list(frame["path"]) == [f.path for f in report.files]
    assert (frame.loc[frame["status"] == "ingested", "n_results"] > 0).all()
    assert frame["status"].value_counts().to_dict() == {s: len(report.by_status(s))
                                                        for s in ("ingested", "unchanged", "skipped")
                                                        if report.by_status(s)}
    doc = json.loads(report.to_json(tmp_path / "api.json"))
    assert json.loads((tmp_path / "api.json").read_text()) == doc
    assert main(["ingest", "--db", str(tmp_path / "cli.duckdb"), *map(str, files), "--json",
                 str(tmp_path / "cli.json")]) == 0
    cli = json.loads((tmp_path / "cli.json").read_text())
    assert {k: doc[k] for k in ("command", "title", "summary", "tables")} == \
        {k: cli[k] for k in ("command", "title", "summary", "tables")}
    assert set(doc["warnings"]) == set(cli["warnings"])
