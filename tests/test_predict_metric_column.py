"""``predict``'s per-dataset table names the metric its ``raw`` column is on.

``raw`` is the harness's own scale of each dataset's metric: HELM Classic's titles are EM for some, F1 for QuAC and
NarrativeQA, ROUGE-2 for the summaries. The table showed ``raw`` without saying which; now a ``metric`` column beside
the dataset names it, in the printed table, ``--json``, ``to_frame()`` and the CSV ``write`` makes, from the one
table the formatter prints.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
CLASSIC = SHARED / "every_eval_ever" / "data" / "helm_classic"


@pytest.mark.slow
def test_helm_classic_prediction_names_each_datasets_metric(tmp_path):
    if not CLASSIC.is_dir():
        pytest.skip("shared data not available")
    import harness_ext as hx

    store = str(tmp_path / "classic.duckdb")
    hx.ingest(CLASSIC, store=store)
    new = "openai/text-ada-001"
    matrix = hx.load_matrix(store, benchmark="helm_classic")
    reduced = hx.reduce(matrix.drop(index=new), budget=4, seed=0)
    raw = hx.load_matrix(store, benchmark="helm_classic", normalise="none")
    pred = hx.predict(reduced, raw.loc[[new], reduced.subset])
    metrics = {d["name"]: d["metric"] for d in reduced.manifest["datasets"]}
    table = pred.to_frame()
    assert list(table.columns[:3]) == ["model", "dataset", "metric"]
    assert dict(zip(table["dataset"], table["metric"])) == metrics
    assert {"EM", "F1"} <= set(metrics.values())  # the leaderboard's titles are on several metrics
    text = pred.render(all=True)
    assert "metric" in text.splitlines()[2] and "raw: on the harness's own scale of the dataset's metric" in text
    rows = json.loads(pred.to_json())["datasets"]
    assert {r["dataset"]: r["metric"] for r in rows} == metrics
    pred.write(tmp_path / "out")
    assert (tmp_path / "out" / "predictions.csv").read_text().splitlines()[0].startswith("model,dataset,metric,")
