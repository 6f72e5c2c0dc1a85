"""The fast ingest lane: ResultRows from the lm-eval and Every Eval Ever adapters, per-walk format detection."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import LM_EVAL_V04, PYTHIA, require
from harness_ext.adapters import every_eval_ever, lm_eval
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths, read_source
from harness_ext.store.rows import ResultRows
from harness_ext.plugin_manager import get_registration
from harness_ext.types import Adapter, ResultRecord, SourceFile

PYTHIA_FILE = "pythia-v1/pythia-160m/zero-shot/160m_step143000.json"
V04_FILE = "Qwen__Qwen2.5-1.5B/results_2025-03-03T00-05-12.300060.json"


def _eee(model: str, scores: dict, lower=False) -> dict:
    return {"schema_version": "0.2.0", "model_info": {"id": model, "name": model.split("/")[-1]},
            "source_metadata": {"source_name": "Test Board"},
            "evaluation_results": [{"evaluation_name": n, "metric_config": {
                "evaluation_description": f"Accuracy on {n}", "lower_is_better": lower, "min_score": 0.0,
                "max_score": 1.0}, "score_details": {"score": v}} for n, v in scores.items()]}


def _write(path, doc) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return str(path)


def test_rows_read_as_the_records_they_stand_for():
    require(PYTHIA)
    rows = lm_eval.read_v03(SourceFile(PYTHIA / PYTHIA_FILE))
    assert isinstance(rows, ResultRows) and len(rows) > 10
    recs = list(rows)
    assert all(type(r) is ResultRecord for r in recs) and rows[0] is recs[0]
    assert {r.model for r in recs} == {rows.model}
    assert [r.value for r in recs] == rows.values
    assert "_checked" not in recs[0].__dict__  # the kind's bookkeeping stays on the kind
    # Kinds are shared across files: the same task and metric in another file is the same object.
    other = lm_eval.read_v03(SourceFile(PYTHIA / PYTHIA_FILE.replace("143000", "13000")))
    assert {id(k) for k in other.kinds} & {id(k) for k in rows.kinds}


def test_rows_validated_a_column_at_a_time_with_the_record_checks_behind(tmp_path):
    good = SourceFile(_write(tmp_path / "a.json", _eee("org/m", {"A": 0.5, "B": 0.25})))
    adapter = get_registration("adapters", "every_eval_ever")
    out = read_source(good, adapter)
    assert isinstance(out, ResultRows) and out.validate(good.pathname) is None
    # An integer score is what ResultRecord.validate accepts: the rows go to the per-record checks.
    ints = SourceFile(_write(tmp_path / "b.json", _eee("org/m", {"A": 1, "B": 0.25})))
    out = read_source(ints, adapter)
    assert isinstance(out, list) and [r.value for r in out] == [1, 0.25]
    # A control character in a name is refused, naming the file.
    bad = SourceFile(_write(tmp_path / "c.json", _eee("org/m\nx", {"A": 0.5})))
    with pytest.raises(Exception, match="control character"):
        read_source(bad, adapter)


def test_bad_score_in_rows_is_skipped_with_its_reason_and_nothing_written(tmp_path):
    d = tmp_path / "board"
    _write(d / "m1" / "a.json", _eee("org/m1", {"A": 0.5}))
    doc = _eee("org/m2", {"A": 0.5})
    doc["evaluation_results"][0]["score_details"]["score"] = "high"
    _write(d / "m2" / "b.json", doc)
    with Store.open(":memory:") as st:
        rep = ingest_paths(st, [d], show_progress=False)
        (bad,) = rep.by_status("skipped")
        assert bad.path.endswith("b.json") and "not a number" in bad.reason
        assert st.counts()["results"] == 1 and st.counts()["sources"] == 1


def test_walk_establishes_a_format_and_verifies_each_file(tmp_path):
    """A directory of one format is detected once; a file of another format beside it is detected in full."""
    require(PYTHIA)
    d = tmp_path / "mixed"
    _write(d / "a" / "x.json", _eee("org/m1", {"A": 0.5}))
    _write(d / "b" / "y.json", _eee("org/m2", {"A": 0.75}))
    (d / "c").mkdir()
    shutil.copy(PYTHIA / PYTHIA_FILE, d / "c" / "z.json")
    with Store.open(":memory:") as st:
        rep = ingest_paths(st, [d], show_progress=False)
    assert [f.adapter for f in rep.files] == ["every_eval_ever", "every_eval_ever", "lm_eval_v03"]
    assert not rep.by_status("skipped")


def test_established_adapter_is_asked_first_but_a_new_walk_detects_again(tmp_path, monkeypatch):
    """An explicitly named file always goes through full detection (ambiguity is still reported)."""
    from harness_ext.store import ingest as ingest_mod

    p = _write(tmp_path / "a.json", _eee("org/m1", {"A": 0.5}))
    adapters = dict(ingest_mod.get_registrations("adapters"))
    adapters["clone"] = Adapter(name="clone", can_handle=every_eval_ever.can_handle, read=every_eval_ever.read)
    monkeypatch.setattr(ingest_mod, "get_registrations", lambda kind: adapters)
    with Store.open(":memory:") as st:
        rep = ingest_paths(st, [p], show_progress=False)
    (f,) = rep.files
    assert f.status == "skipped" and "ambiguous format" in f.reason


def test_v04_configs_still_taken_from_rows():
    require(LM_EVAL_V04)
    with Store.open(":memory:") as st:
        rep = ingest_paths(st, [LM_EVAL_V04 / V04_FILE], show_progress=False)
        assert rep.n_results > 0
        n = st.con.execute("SELECT count(*) FROM task_configs").fetchone()[0]
        meta = st.con.execute("SELECT metadata FROM datasets").fetchall()
    from harness_ext.store.lm_eval_tasks import CONFIG_KEY

    assert n > 0 and meta and not any(CONFIG_KEY in json.loads(m) for (m,) in meta)  # popped, stored apart


def _columns_of(rows) -> tuple:
    return (rows.model, rows.model_metadata, [id(k) for k in rows.kinds], rows.values, rows.stderrs, rows.num_fewshot,
            rows.n_samples, rows.dataset_metadata)


def test_eee_rows_seen_before_read_a_field_at_a_time_as_the_row_loop_reads_them(tmp_path, monkeypatch):
    """The second file of a board takes the C-level lane; the row loop gives the same columns, and a placeholder
    score outside its bounds (or anything unusual) still goes through the loop, which skips or refuses it."""
    adapter = get_registration("adapters", "every_eval_ever")
    every_eval_ever.read(SourceFile(_write(tmp_path / "a.json", _eee("org/m1", {"A": 0.5, "B": 0.25}))))
    src = _write(tmp_path / "b.json", _eee("org/m2", {"A": 0.75, "B": 1.0}))
    taken, real = [], every_eval_ever._rows_seen
    monkeypatch.setattr(every_eval_ever, "_rows_seen", lambda *a: taken.append(real(*a)) or taken[-1])
    fast = every_eval_ever.read(SourceFile(src))
    assert taken == [True]
    monkeypatch.setattr(every_eval_ever, "_rows_seen", lambda *a: False)
    assert _columns_of(every_eval_ever.read(SourceFile(src))) == _columns_of(fast)
    monkeypatch.undo()
    out = read_source(SourceFile(_write(tmp_path / "c.json", _eee("org/m3", {"A": -1.0, "B": 0.5}))), adapter)
    assert out.values == [0.5] and [k.dataset for k in out.kinds] == ["B"]  # -1 is HELM's "not run"
    doc = _eee("org/m4", {"A": 0.5})
    del doc["evaluation_results"][0]["score_details"]["score"]
    with pytest.raises(Exception, match="no score_details.score"):
        read_source(SourceFile(_write(tmp_path / "d.json", doc)), adapter)


def test_eee_file_key_gives_what_the_row_loop_gives(tmp_path, monkeypatch):
    """A file's rows are looked up as one key (_FILE_ROWS): a file repeating a board's rows gets the columns the row
    loop gives it, and one whose bounds are ints (equal to the floats, 0 == 0.0) takes the row loop."""
    every_eval_ever.read(SourceFile(_write(tmp_path / "a.json", _eee("org/k1", {"A": 0.5, "B": 0.25}))))
    b = _write(tmp_path / "b.json", _eee("org/k2", {"A": 0.75, "B": 1.0}))
    doc = _eee("org/k3", {"A": 0.5, "B": 0.25})
    for ev in doc["evaluation_results"]:
        ev["metric_config"]["min_score"], ev["metric_config"]["max_score"] = 0, 1
    c = _write(tmp_path / "c.json", doc)
    taken, real = [], every_eval_ever._rows_seen
    monkeypatch.setattr(every_eval_ever, "_rows_seen", lambda *a: taken.append(real(*a)) or taken[-1])
    fast = [_columns_of(every_eval_ever.read(SourceFile(p))) for p in (b, b, c)]
    assert taken == [True, True, False]
    monkeypatch.setattr(every_eval_ever, "_rows_seen", lambda *a: False)
    assert fast == [_columns_of(every_eval_ever.read(SourceFile(p))) for p in (b, b, c)]


def test_rows_validate_checks_a_column_that_is_not_all_none():
    """validate passes an all-None column in one count, and still sends a bad value in a partly filled one to the
    per-record checks (which drop a malformed stderr and refuse a negative shot count)."""
    rows = ResultRows("org/v", None)
    kind = every_eval_ever.kind(benchmark="b", dataset="d", metric="acc")
    rows.kinds, rows.values, rows.dataset_metadata = [kind, kind], [0.5, 0.25], [None, None]
    rows.stderrs, rows.num_fewshot, rows.n_samples = [None, None], [None, None], [None, None]
    assert rows.validate("x.json") is None
    rows.stderrs = [None, "0.1"]
    assert isinstance(rows.validate("x.json"), list)
    rows.stderrs, rows.num_fewshot = [None, None], [None, -1]
    assert isinstance(rows.validate("x.json"), list)


def test_v03_file_template_gives_the_general_path_columns():
    """A v0.3 file read through its shape's template has the columns the general row builder gives it."""
    require(PYTHIA)
    src = SourceFile(PYTHIA / PYTHIA_FILE)
    doc = src.json()
    fast = lm_eval.read_v03(src)
    model, meta = lm_eval.model_name(doc["config"], src.pathname)
    slow = lm_eval._rows(src.path, doc["results"], v04=False, model=model, model_meta=meta,
                         default_shots=doc["config"].get("num_fewshot"), doc={"versions": doc.get("versions")})
    a, b = _columns_of(fast), _columns_of(slow)
    assert a[:7] == b[:7] and a[7] == b[7]  # metadata dicts equal (shared across files on the fast path)


def test_batch_cells_and_counts_match_pandas():
    """Repeated keys and cells found by integer codes, as pandas' duplicated finds them; counts beyond 2**53 exact."""
    import numpy as np
    import pandas as pd

    from harness_ext.store.batch import _Cells, _Frame, _int_column

    rng = np.random.default_rng(0)
    n = 500
    cols = {"model_id": rng.integers(1, 6, n), "dataset_id": rng.integers(1, 4, n), "num_fewshot": rng.integers(-1, 3, n),
            "value": rng.random(n), "source_id": np.sort(rng.integers(10, 15, n))}
    c = _Cells(_Frame(cols, {}), 10, 5)
    frame = pd.DataFrame(cols)
    cell, key = ["model_id", "dataset_id", "num_fewshot"], ["model_id", "dataset_id", "num_fewshot", "source_id"]
    assert (c.repeat == frame.duplicated(key).to_numpy()).all()
    assert (c.first == ~frame.duplicated(cell).to_numpy()).all()
    first = frame.reset_index().groupby(cell)["index"].transform("min").to_numpy()
    assert (c.first_of_cell == first).all()
    assert c.n_kept.tolist() == frame[~frame.duplicated(key)].groupby("source_id").size().reindex(range(10, 15),
                                                                                                  fill_value=0).tolist()
    ints, none = _int_column([3, None, 2**62 + 1])
    assert ints.tolist() == [3, 0, 2**62 + 1] and none.tolist() == [False, True, False]


def test_metadata_encodings_are_json_dumps():
    """The write path's metadata JSON (a C encoder made once, strings encoded straight away) is json.dumps's."""
    import datetime
    import math

    import numpy as np

    from harness_ext.store.batch import _dumps, _encode, _metadata

    class S(str):
        pass

    values = [{"precision": "bfloat16", "params_billions": 10.159, "n": None, "b": True, "i": 2**70,
               "nan": float("nan"), "inf": -math.inf}, [1, "é", {"x": [1.5e-300]}], datetime.date(2020, 1, 2),
              {1: 2, 2.5: "x", None: 1, True: 0}, S("x"), {"s": S("é"), "\ud800": "\udfff"}, (1, 2), 3, 1.0, None,
              {"k": {1, 2}}]
    for v in values:
        assert _encode(v) == _dumps(v) == json.dumps(v, default=str)
    # A batch's metadata: each value encoded once, a new model's dict laid out from them (string keys) or encoded
    # whole (a key of another type in the batch); the dict of a model that is not new is not encoded.
    dicts = [v for v in values if isinstance(v, dict)]
    for batch in (dicts[:1] + dicts[2:], dicts):
        entries = [(k, k, d) for k, d in enumerate(batch)]
        rows, model_json = _metadata(entries, np.arange(len(batch)) + 100, 7, {k: d for k, d in enumerate(batch) if k})
        assert model_json == {k: json.dumps(d, default=str) for k, d in enumerate(batch) if k}
        assert rows["value"] == [json.dumps(x, default=str) for d in batch for x in d.values()]
        assert rows["model_id"] == [100 + k for k, d in enumerate(batch) for _ in d]
        assert rows["source_id"] == [7 + k for k, d in enumerate(batch) for _ in d]
        assert rows["key"] == [str(x) for d in batch for x in d]
    loop: list = []
    loop.append(loop)
    for _ in range(2):  # json's error, and nothing left behind for the next encoding
        with pytest.raises(ValueError, match="Circular reference"):
            _encode(loop)
    assert _encode({"a": [1]}) == '{"a": [1]}'


def test_a_short_ingest_keeps_the_store_open_and_a_long_read_releases_it(tmp_path, monkeypatch):
    """The store is released for readers only once reading has taken READ_HOLD_SECONDS (not around every read)."""
    import harness_ext.store.ingest as ingest_mod

    for i in range(3):
        _write(tmp_path / "d" / f"{i}.json", _eee(f"org/m{i}", {"a": 0.5, "b": 0.25}))
    released = []
    for hold, name in ((60.0, "a"), (0.0, "b")):
        monkeypatch.setattr(ingest_mod, "READ_HOLD_SECONDS", hold)
        with Store.open(tmp_path / f"{name}.duckdb") as store:
            monkeypatch.setattr(store, "release", lambda s=store, f=Store.release: (released.append(name), f(s)))
            report = ingest_paths(store, [tmp_path / "d"], show_progress=False)
            assert store.con is not None and len(report.by_status("ingested")) == 3
        with Store.open(tmp_path / f"{name}.duckdb", read_only=True) as store:
            assert store.counts()["results"] == 6
    assert released == ["b"]


def test_a_listed_source_file_is_the_one_init_makes():
    """SourceFile.listed (the directory walk's fast constructor) lays out the attributes __init__ sets, for a file
    (with its suffix, as __getattr__ computes it) and for a directory: a field added to one must reach the other."""
    f, d = PYTHIA / PYTHIA_FILE, PYTHIA
    names, kids = frozenset({PYTHIA_FILE}), frozenset({"a.json"})
    made, walked = SourceFile(str(f), is_dir=False, siblings=names), SourceFile.listed(str(f), f.suffix.lower(), names)
    made.suffix  # computed on first use and kept
    assert made.__dict__ == walked.__dict__
    made, walked = SourceFile(str(d), is_dir=True, children=kids), SourceFile.listed(str(d), children=kids)
    assert made.__dict__ == walked.__dict__
