"""What ``predict`` writes for a model below chance, now that ``reduce`` fits before the floor at chance.

HELM Classic's T0pp (11B) answers BoolQ and IMDB in another format (EM 0 on BoolQ, 0.21 on IMDB, both below chance
0.5), so its subset scores and its predicted normalised full-benchmark score lie below 0. Its Every Eval Ever record
declared that score's range as ``[0, 1]``, which put the score outside its own range (a reader of such records,
harness-ext's among them, takes a score outside ``[min_score, max_score]`` for a placeholder); the record now
declares the ends of the datasets' normalised scales. A dataset with chance level 0 (ROUGE-2, F1) printed its floor
as ``-0.000``. Its predicted MMLU lies wholly below the scale's floor, kept there without a word; now said.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from conftest import HELM_CLASSIC, import_benchmark, require
from harness_ext.cli import main
from harness_ext.store.floor import normalised_bounds
from harness_ext.store.matrix import params_frame

T0PP = "bigscience/T0pp-11B"


@pytest.fixture(scope="module")
def t0pp(tmp_path_factory):
    """HELM Classic reduced without T0pp (the shared Every Eval Ever records), and T0pp's own record: their paths."""
    src = require(HELM_CLASSIC)
    root = tmp_path_factory.mktemp("helm_classic")
    db, red = root / "s.duckdb", root / "red"
    assert main(["ingest", "--db", str(db), "-q", str(src)]) == 0
    assert main(["reduce", "--db", str(db), "--exclude-models", T0PP, "--out", str(red), "--no-plot", "-q"]) == 0
    new = root / "new"
    shutil.copytree(src / "bigscience" / "T0pp-11B", new)
    return red, new


def _predict(manifest, new, out, capsys):
    capsys.readouterr()
    assert main(["predict", "--manifest", str(manifest), str(new), "--all", "--eee", str(out / "eee"),
                 "--json", str(out / "p.json")]) == 0
    printed = capsys.readouterr().out
    [record] = [json.loads(p.read_text()) for p in (out / "eee").glob("*.json")]
    return printed, record, json.loads((out / "p.json").read_text())


def _full(record):
    [full] = [r for r in record["evaluation_results"] if r["evaluation_name"].endswith("(predicted)")
              and "estimated from" in r["evaluation_name"]]
    return full


def test_the_normalised_score_below_chance_lies_inside_its_record_range(t0pp, tmp_path, capsys):
    red, new = t0pp
    printed, record, doc = _predict(red, new, tmp_path, capsys)
    manifest = json.loads((red / "manifest.json").read_text())
    assert manifest["prediction"]["floor_at_chance"] is False
    [agg] = doc["aggregate"]
    assert agg["metric"] == "normalised" and agg["normalised"] < 0  # below chance, as fitted
    full = _full(record)
    cfg, score = full["metric_config"], full["score_details"]
    datasets = manifest["datasets"]
    params = params_frame({d["name"]: d["normalisation"] for d in datasets}, [d["name"] for d in datasets])
    w = np.array([d["weight"] for d in datasets])
    lo, hi = normalised_bounds(params, False, w / w.sum())
    assert (cfg["min_score"], cfg["max_score"]) == (pytest.approx(lo), 1.0) and lo < 0  # was (0.0, 1.0)
    ci = score["uncertainty"]["confidence_interval"]
    assert cfg["min_score"] <= ci["lower"] <= score["score"] <= ci["upper"] <= cfg["max_score"]
    # Every dataset's record stays inside its declared range too (raw scores on the harness's scale).
    for r in record["evaluation_results"]:
        assert r["metric_config"]["min_score"] <= r["score_details"]["score"] <= r["metric_config"]["max_score"]
    # Datasets with chance 0 (ROUGE-2, F1) floor at 0, printed as 0.000, not -0.000.
    assert "-0.000" not in printed
    rouge = [r for r in doc["datasets"] if r["dataset"] == "XSUM"][0]
    assert rouge["lower"] == 0.0


def test_an_interval_wholly_beyond_the_scale_is_said(t0pp, tmp_path, capsys):
    """T0pp's predicted MMLU lies wholly below the scale's floor: kept there as EM 0 with an interval of no width,
    where it scored 0.41. The prediction is what the method gives; a warning now names the datasets it cut so."""
    red, new = t0pp
    _, _, doc = _predict(red, new, tmp_path, capsys)
    mmlu = [r for r in doc["datasets"] if r["dataset"] == "MMLU"][0]
    assert mmlu["raw"] == mmlu["raw_lower"] == mmlu["raw_upper"] == 0.0 and mmlu["raw_actual"] > 0.4
    points = sorted(r["dataset"] for r in doc["datasets"] if not r["observed"] and r["lower"] == r["upper"])
    [said] = [w for w in doc["warnings"] if "beyond an end of the scale" in w]
    assert said.startswith(f"{T0PP}: {len(points)} predicted datasets (") and "interval of no width" in said
    assert "MMLU" in points and "MMLU" in said


def test_a_floored_manifest_keeps_the_range_at_zero(t0pp, tmp_path, capsys):
    red, new = t0pp
    old = tmp_path / "old"
    old.mkdir()
    manifest = json.loads((red / "manifest.json").read_text())
    floored = import_benchmark("quality_round_trip").floored_manifest(manifest)
    (old / "manifest.json").write_text(json.dumps(floored))
    _, record, doc = _predict(old, new, tmp_path, capsys)
    cfg = _full(record)["metric_config"]
    assert (cfg["min_score"], cfg["max_score"]) == (0.0, 1.0)
    assert doc["aggregate"][0]["normalised"] >= 0
