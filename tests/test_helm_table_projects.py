"""HELM Classic's and HELM Capabilities' leaderboards are both helm-summarize group ``core_scenarios``: read by the
helm-table adapter they were one benchmark, ``helm_core_scenarios``, so a store holding both mixed two leaderboards'
columns in one matrix. The project now names the benchmark when the file's path (``capabilities/benchmark_output/
releases/v1.12.0/groups/core_scenarios.json``, where crfm-helm-public publishes it, as Every Eval Ever's
helm_capabilities record cites it) or its tables' links say it; HELM Classic's (the bucket's own
``benchmark_output``) and a file whose project is not told keep ``helm_core_scenarios``, with a note.

Files: the real HELM Classic v0.4.0 table of fixtures/helm (see its README); the Capabilities table is written in
helm-summarize's format (``write_groups``: one accuracy table, its links ``<output path>/releases/<release>/groups/
latex|json/...``) with the scores HELM published for OLMo 2 7B Instruct (Every Eval Ever's record, fixtures/
helm_projects/capabilities_eee: mean score 0.405, MMLU-Pro 0.292, WildBench 0.628)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_ext.plugin_manager import get_registrations
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FIX = Path(__file__).parent / "fixtures" / "helm" / "benchmark_output" / "releases" / "v0.4.0"
RUN = "mmlu_pro:subset=all,use_chain_of_thought=true,use_few_shot=false,model=allenai_olmo-2-1124-7b-instruct"


def _capabilities_table(output_path: str = "capabilities/benchmark_output") -> list:
    """HELM Capabilities v1.12.0's core_scenarios accuracy table for one model, as helm-summarize writes it."""
    groups = f"{output_path}/releases/v1.12.0/groups"
    header = [{"value": "Model"},
              {"value": "Mean score", "description": "The mean of the scores from all columns.", "lower_is_better": False},
              {"value": "MMLU-Pro", "lower_is_better": False, "metadata": {"metric": "COT correct", "run_group": "MMLU-Pro"}},
              {"value": "WildBench", "lower_is_better": False, "metadata": {"metric": "WB Score", "run_group": "WildBench"}}]
    row = [{"value": "OLMo 2 7B Instruct November 2024", "run_spec_names": [RUN]},
           {"value": 0.405}, {"value": 0.292, "run_spec_names": [RUN]}, {"value": 0.628}]
    return [{"title": "Accuracy", "header": header, "rows": [row], "name": "accuracy",
             "links": [{"text": "LaTeX", "href": f"{groups}/latex/core_scenarios_accuracy.tex"},
                       {"text": "JSON", "href": f"{groups}/json/core_scenarios_accuracy.json"}]}]


def _write(path: Path, doc) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))
    return path


def _store(paths, **kw):
    s = Store.open(":memory:")
    return s, ingest_paths(s, paths, show_progress=False, **kw)


def test_classic_and_capabilities_core_scenarios_are_two_benchmarks(tmp_path):
    cap = _write(tmp_path / "capabilities" / "benchmark_output" / "releases" / "v1.12.0" / "groups" /
                 "core_scenarios.json", _capabilities_table())
    s, rep = _store([FIX / "groups" / "core_scenarios.json", cap])
    assert [f.status for f in rep.files] == ["ingested", "ingested"] and not rep.conflicts
    assert set(s.benchmarks()["benchmark"]) == {"helm_core_scenarios", "helm_capabilities_core_scenarios"}
    classic = load_matrix(s, MatrixQuery(benchmarks=("helm_core_scenarios",), normalise="none"))
    assert sorted(classic.columns) == ["BoolQ", "HellaSwag", "MMLU", "NarrativeQA", "XSUM"]  # as before
    assert classic.loc["openai/text-davinci-002", "BoolQ"] == pytest.approx(0.877)
    capabilities = load_matrix(s, MatrixQuery(benchmarks=("helm_capabilities_core_scenarios",), normalise="none"))
    assert list(capabilities.columns) == ["MMLU-Pro", "WildBench"]
    assert capabilities.loc["allenai/olmo-2-1124-7b-instruct"].tolist() == pytest.approx([0.292, 0.628])
    agg = load_matrix(s, MatrixQuery(benchmarks=("helm_capabilities_core_scenarios",), aggregates=True,
                                     normalise="none"))
    assert agg.loc["allenai/olmo-2-1124-7b-instruct", "Mean score"] == pytest.approx(0.405)
    meta = s.con.execute("SELECT metadata FROM datasets WHERE name = 'MMLU-Pro'").fetchone()[0]
    assert json.loads(meta)["helm_project"] == "capabilities"
    by_name = {"classic": rep.files[0].notes, "capabilities": rep.files[1].notes}
    # fixtures/helm/benchmark_output: "helm" is no HELM project folder, so the Classic file's project is not told
    assert any(n.startswith("HELM project not told by the file or its path") and "22 rows stored as "
               "helm_core_scenarios" in n for n in by_name["classic"])
    assert ("HELM project capabilities, told by its path's HELM project folder (capabilities/benchmark_output): "
            "3 rows stored as helm_capabilities_core_scenarios") in by_name["capabilities"]


def test_the_public_buckets_own_benchmark_output_is_helm_classic(tmp_path):
    """crfm-helm-public/benchmark_output/releases/v0.4.0/groups/core_scenarios.json (Every Eval Ever's helm_classic
    records cite it so) keeps the name HELM Classic's tables were always stored under."""
    root = tmp_path / "crfm-helm-public" / "benchmark_output" / "releases"
    shutil.copytree(FIX, root / "v0.4.0")
    s, rep = _store([root / "v0.4.0" / "groups" / "core_scenarios.json"])
    assert set(s.benchmarks()["benchmark"]) == {"helm_core_scenarios"}
    (f,) = rep.files
    assert any(n.startswith("HELM project classic, told by its path's HELM project folder (classic/benchmark_output)")
               for n in f.notes)


def test_the_links_name_the_project_of_a_file_moved_out_of_its_folders(tmp_path):
    """A table copied out of its release folder still carries the output path helm-summarize wrote its links from."""
    cap = _write(tmp_path / "downloads" / "core_scenarios.json", _capabilities_table())
    s, rep = _store([cap])
    assert set(s.benchmarks()["benchmark"]) == {"helm_capabilities_core_scenarios"}
    assert any("told by the links helm-summarize wrote into it (capabilities/benchmark_output)" in n
               for n in rep.files[0].notes)
    # A user's own output folder is not a HELM project: the group's plain name, and the note says so.
    other = _write(tmp_path / "mine" / "core_scenarios.json", _capabilities_table("my-run/benchmark_output"))
    s, rep = _store([other])
    assert set(s.benchmarks()["benchmark"]) == {"helm_core_scenarios"}
    assert any(n.startswith("HELM project not told") for n in rep.files[0].notes)


def test_a_capabilities_table_stored_by_the_earlier_reader_is_renamed_only_when_read_again(tmp_path, monkeypatch):
    """The earlier reader stored a Capabilities table as helm_core_scenarios: ingest says the file would be read
    differently (the adapter's revision was raised) and changes nothing; --reread replaces the earlier reading."""
    import dataclasses

    import harness_ext.store.ingest as ingest

    cap = _write(tmp_path / "capabilities" / "benchmark_output" / "releases" / "v1.12.0" / "groups" /
                 "core_scenarios.json", _capabilities_table())
    db = str(tmp_path / "s.duckdb")
    ads = get_registrations("adapters")
    monkeypatch.setattr(ingest, "get_registrations", lambda kind, pm=None: ads)
    with monkeypatch.context() as m:
        real = ads["helm_table"].read
        m.setattr(ads["helm_table"], "read", lambda src: [dataclasses.replace(r, benchmark="helm_core_scenarios")
                                                          for r in real(src)])
        m.setattr(ads["helm_table"], "revision", "1")
        with Store.open(db) as s:
            ingest_paths(s, [cap], show_progress=False)
    with Store.open(db) as s:
        again = ingest_paths(s, [cap], show_progress=False)
        assert again.n_older_reader == 1 and not again.by_status("ingested")
        assert set(s.benchmarks()["benchmark"]) == {"helm_core_scenarios"}
        reread = ingest_paths(s, [cap], show_progress=False, reread=True)
        assert reread.n_reread == 1
        assert set(s.benchmarks()["benchmark"]) == {"helm_capabilities_core_scenarios"}
        assert s.con.execute("SELECT count(*) FROM datasets WHERE benchmark = 'helm_core_scenarios'").fetchone()[0] == 0
