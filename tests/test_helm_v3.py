"""A HELM Safety suite folder ingested as a new user would (real slice of stanford-crfm/helm's
benchmark_output_TRUE_latest/runs/v3 in fixtures/helm_v3, see its PROVENANCE.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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


def test_a_whole_suite_folder():
    s, rep = _store(SUITE)
    by = {Path(f.path).name: f for f in rep.files}
    assert by[HARM.name].status == by[BBQ.name].status == by["bbq_bbq_subject:all.json"].status == "ingested"
    # the run-to-suite map holds no scores and says so; the LaTeX export is not a candidate file in a walk
    assert by["runs_to_run_suites.json"].status == "skipped"
    assert "not a recognised result file" in by["runs_to_run_suites.json"].reason
    assert not any(name.endswith(".tex") for name in by)
    df = load_matrix(s, MatrixQuery(benchmarks=("helm_bbq",), normalise="none"))
    assert df.shape == (9, 1)
    assert df.loc["meta/llama-3-8b", "bbq_subject:all"] == 0.5
    assert df.loc["qwen/qwen2-72b-instruct", "bbq_subject:all"] == 1.0
