"""A new model's lm-eval ``samples_<task>_<date>.jsonl`` read by ``predict`` on an item manifest is a third party's
file too: a doc_id that is not an integer (a path, a float, null, 10**30, an object) is one error naming the file
and line; a score logged as NaN or Infinity is left out and said, with the file, as a null one is; a score outside
the population's range (an accuracy of 2, or 1e308) is used as logged and said. Composed hostile lines in lm-eval
0.4.13's per-sample format (tests/fixtures/samples); the population is a composed 0/1 item table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness_ext.cli import main


@pytest.fixture(scope="module")
def manifest_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile_logs")
    rng = np.random.default_rng(0)
    rows = [{"model": f"org/model-{m}", "task": "plain_task", "item": i, "score": int(rng.random() < 0.3 + 0.05 * m)}
            for m in range(10) for i in range(30)]
    (tmp / "items" / "bench").mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(tmp / "items" / "bench" / "table.parquet")
    db, out = tmp / "s.duckdb", tmp / "reduced"
    assert main(["ingest", "--db", str(db), "-q", str(tmp / "items")]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "bench", "--items", "8", "--out", str(out), "--no-plot",
                 "-q"]) == 0
    return out


def _log(folder, values: dict, default="1.0"):
    d = folder / "org__newm"
    d.mkdir(parents=True)
    (d / "results_2026-12-05T00-00-00.json").write_text(json.dumps(
        {"results": {"plain_task": {"acc,none": 0.5}}, "config": {"model": "hf", "model_args": "pretrained=org/newm"},
         "model_name": "org/newm", "configs": {}, "versions": {}}))
    lines = ['{"doc_id": %s, "acc": %s, "metrics": ["acc"], "filter": "none"}' % (d_, values.get(d_, default))
             for d_ in range(30)]
    (d / "samples_plain_task_2026-12-05T00-00-00.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("doc_id", ['"../../etc/passwd"', "1e308", "null", "1000000000000000000000000000000",
                                    '{"a": 1}', "NaN"])
def test_a_doc_id_that_is_not_an_integer_is_one_error_naming_the_file(manifest_dir, tmp_path, capsys, doc_id):
    folder = _log(tmp_path / "newm", {})
    log = next(folder.rglob("samples_*.jsonl"))
    log.write_text(log.read_text().replace('"doc_id": 3,', f'"doc_id": {doc_id},', 1))
    assert main(["predict", "-m", str(manifest_dir), str(folder), "-q"]) != 0
    err = capsys.readouterr().err
    assert log.name in err and "line 4: doc_id" in err and "Traceback" not in err


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_a_score_that_is_not_finite_is_left_out_and_said(manifest_dir, tmp_path, capsys, bad):
    folder = _log(tmp_path / "newm", {5: bad, 6: bad})
    assert main(["predict", "-m", str(manifest_dir), str(folder)]) == 0
    err = capsys.readouterr().err
    assert "2 per-sample values written as null, not a number or not finite (NaN, Infinity) left out: acc" in err
    assert "samples_plain_task_2026-12-05T00-00-00.jsonl" in err


@pytest.mark.parametrize("bad", ["2.0", "1e308", "-5"])
def test_a_score_outside_the_populations_range_is_said(manifest_dir, tmp_path, capsys, bad):
    folder = _log(tmp_path / "newm", {5: bad, 6: bad})
    assert main(["predict", "-m", str(manifest_dir), str(folder)]) == 0
    assert "2 of the 30 logged scores outside the population's range (0 to 1)" in capsys.readouterr().err
