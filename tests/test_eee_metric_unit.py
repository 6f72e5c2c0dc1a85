"""Every Eval Ever's ``metric_config.metric_unit`` (schema 0.2.2; the project's ``MetricConfig``: "Unit of the metric
values (e.g. proportion, percent, points, ms, tokens)") is the score's scale: it was not read, and the scale was
inferred from the bounds, else from the column's values, so a percentage whose values all lie in [0, 1] (a hard
benchmark, 0.52 meaning 0.52%) was read as a proportion (52%).

The record is the real schema 0.2.2 one of fixtures/every_eval_ever/mmlu-pro (see PROVENANCE.md: unit ``proportion``,
bounds [0, 1]). The other records are copies of it made here with the unit, scores and bounds edited as each case
says; no published record with a ``percent`` unit was found in the stored Every Eval Ever data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.errors import IngestError
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

REAL = (Path(__file__).parent / "fixtures" / "every_eval_ever" / "mmlu-pro" / "01-ai" / "yi-1.5-34b-chat" /
        "676f4465-ce78-411a-9f5a-c97b3d2eac4f.json")
MODEL = "01-ai/yi-1.5-34b-chat"


def _edited(tmp_path: Path, unit, factor: float = 1.0, bounds=None, scores=None) -> Path:
    """A copy of the real record with every row's ``metric_unit`` set to ``unit`` (None: removed), its scores times
    ``factor`` (or ``scores`` in row order), and its bounds set to ``bounds`` (``"none"``: removed, with
    ``score_type``, which requires them; None: as recorded)."""
    doc = json.loads(REAL.read_text())
    for i, ev in enumerate(doc["evaluation_results"]):
        cfg = ev["metric_config"]
        if unit is None:
            cfg.pop("metric_unit")
        else:
            cfg["metric_unit"] = unit
        if bounds == "none":
            for k in ("min_score", "max_score", "score_type"):
                cfg.pop(k)
        elif bounds is not None:
            cfg["min_score"], cfg["max_score"] = bounds
        sd = ev["score_details"]
        sd["score"] = scores[i] if scores is not None else round(sd["score"] * factor, 6)
    out = tmp_path / f"{unit}-{factor}-{bounds}-{scores is not None}" / REAL.name
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(doc, indent=2))
    return out


def _read(path):
    s = Store.open(":memory:")
    rep = ingest_paths(s, [path], show_progress=False)
    return s, rep


def _scales(s) -> dict:
    return dict(s.con.execute("SELECT name, scale FROM datasets").fetchall())


def test_the_real_records_unit_is_stored_as_its_scale():
    s, rep = _read(REAL)
    assert set(_scales(s).values()) == {"proportion"}
    df = load_matrix(s, MatrixQuery(normalise="none"))
    assert df.loc[MODEL, "MMLU-Pro (Biology)"] == pytest.approx(0.7141)
    assert not any("metric_unit" in n for n in rep.files[0].notes)


def test_a_percent_unit_is_read_as_percent_whatever_the_values(tmp_path):
    """Percentages without bounds: the unit says percent. Values above 1 were read as percent before too; values all
    within (0, 1] were read as a proportion (100 times the score): now percent, and the note names them."""
    s, rep = _read(_edited(tmp_path, "percent", 100.0, bounds="none"))
    assert set(_scales(s).values()) == {"percent"}
    df = load_matrix(s, MatrixQuery())
    assert df.attrs["datasets"]["MMLU-Pro (Biology)"]["normalisation"]["scale"] == "percent"
    assert not any("metric_unit" in n for n in rep.files[0].notes)
    # a hard benchmark's percentages: 0.52% and so on
    low = [0.52, 0.71, 0.56, 0.52]
    s, rep = _read(_edited(tmp_path, "percent", bounds="none", scores=low))
    assert set(_scales(s).values()) == {"percent"}
    assert load_matrix(s, MatrixQuery(normalise="none")).loc[MODEL, "MMLU-Pro (Biology)"] == pytest.approx(0.71)
    (note,) = [n for n in rep.files[0].notes if "metric_unit percent" in n]
    assert note.startswith("all 4 rows with metric_unit percent have a score in (0, 1], which looks like a "
                           "proportion: stored as percent, as the unit says")
    # without the unit the same values are a proportion, as before
    s, _ = _read(_edited(tmp_path, None, bounds="none", scores=low))
    assert set(_scales(s).values()) == {None}
    assert load_matrix(s, MatrixQuery()).attrs["datasets"]["MMLU-Pro (Biology)"]["normalisation"]["scale"] == \
        "proportion"


def test_a_unit_against_the_declared_bounds_keeps_the_bounds_and_says_so(tmp_path):
    """A converter that rescaled the scores and the bounds to 0-100 but left the template's unit 'proportion': the
    bounds are what the schema checks scores against, so they are kept, and the note counts the rows."""
    s, rep = _read(_edited(tmp_path, "proportion", 100.0, bounds=[0.0, 100.0]))
    assert set(_scales(s).values()) == {None}
    assert dict(s.con.execute("SELECT name, max_score FROM datasets").fetchall())["MMLU-Pro (Math)"] == 100.0
    df = load_matrix(s, MatrixQuery())
    assert df.attrs["datasets"]["MMLU-Pro (Math)"]["normalisation"]["lo"] == 0.0
    assert df.attrs["datasets"]["MMLU-Pro (Math)"]["normalisation"]["span"] == 100.0
    (note,) = [n for n in rep.files[0].notes if "metric_unit" in n]
    assert note.startswith("4 rows whose metric_unit names another scale than the declared bounds: the bounds kept")
    assert "MMLU-Pro (Biology) (proportion, bounds [0, 100])" in note


def test_a_proportion_above_1_without_bounds_refuses_the_file(tmp_path):
    path = _edited(tmp_path, "proportion", 100.0, bounds="none")
    s, rep = _read(path)
    (f,) = rep.files
    assert f.status == "skipped"
    assert "MMLU-Pro (overall): score 52.29 is above 1, the maximum of its metric_unit 'proportion'" in f.reason
    from harness_ext.adapters.every_eval_ever import read
    from harness_ext.types import SourceFile

    with pytest.raises(IngestError, match="a percentage for a proportion"):
        read(SourceFile(path))


def test_a_unit_that_names_no_scale_is_counted_and_the_scale_inferred_as_before(tmp_path):
    s, rep = _read(_edited(tmp_path, "points"))
    assert set(_scales(s).values()) == {None}
    assert "metric_unit naming no scale (points (4)): each score's scale inferred from its bounds or values" in \
        rep.files[0].notes
