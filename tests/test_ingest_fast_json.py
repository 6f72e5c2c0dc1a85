"""Walked JSON files parsed through orjson when it is installed: the same documents json.loads makes, or json."""

from __future__ import annotations

import json
import math

import pytest

from conftest import LM_EVAL, PYTHIA, require
from harness_ext.store import ingest_read
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.ingest_read import _NOT_PARSED, _parse_fast

orjson = pytest.importorskip("orjson")


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float):
        return a.hex() == b.hex()
    return a == b


@pytest.mark.parametrize("text", [
    b"[123456789012345678901234567890]",  # orjson: a float; json: an int
    b"[-9223372036854775809]",  # below -2**63 in 19 digits: orjson a float, json an int
    b"[NaN, Infinity]",
    b'{"a": "\\ud800"}',  # a lone surrogate
    b"\xef\xbb\xbf{}",  # a byte-order mark
    b'{"a": "\xff"}',  # not UTF-8
    b"[" * 600 + b"]" * 600,  # deeper than json reads
])
def test_what_json_reads_differently_is_left_to_json(text):
    assert _parse_fast(text) is _NOT_PARSED


def test_integers_orjson_reads_exactly_are_parsed_by_it():
    for text in (b"[9223372036854775807, -922337203685477580, 1234567890123456789]", b'{"a": [0.5, -1]}'):
        got = _parse_fast(text)
        assert got is not _NOT_PARSED and _same(got, json.loads(text))


def test_real_files_parse_to_the_same_documents():
    require(PYTHIA)
    require(LM_EVAL)
    files = sorted(PYTHIA.rglob("*.json"))[:40] + sorted(LM_EVAL.rglob("*.json"))[:80]
    n = 0
    for p in files:
        data = p.read_bytes()
        got = _parse_fast(data)
        if got is not _NOT_PARSED:
            n += 1
            assert _same(got, json.loads(data.decode("utf-8"))), p
    assert n > 100


def test_ingest_with_and_without_orjson_is_the_same(tmp_path, monkeypatch):
    d = tmp_path / "d"
    d.mkdir()
    (d / "nan.json").write_text('{"results": {"t": {"acc": NaN}}, "config": {"model_args": "pretrained=a"}}')
    (d / "big.json").write_text('{"results": {"t": {"acc": 123456789012345678901234567890}}, '
                                '"config": {"model_args": "pretrained=a"}}')
    (d / "ok.json").write_text(json.dumps({"results": {"t": {"acc": 0.5, "acc_stderr": 0.01}},
                                           "config": {"model_args": "pretrained=b", "num_fewshot": 0}}))
    out = []
    for fast in ("1", "0"):
        monkeypatch.setenv("HARNESS_EXT_FAST_JSON", fast)
        ingest_read._fast_json.cache_clear()
        with Store.open(tmp_path / f"{fast}.duckdb") as st:
            rep = ingest_paths(st, [d], show_progress=False)
            rows = st.con.execute("SELECT model_id, dataset_id, value, stderr FROM results ORDER BY ALL").fetchall()
        out.append(([(f.status, f.reason, f.n_results) for f in rep.files], rows))
    ingest_read._fast_json.cache_clear()
    assert out[0] == out[1]
    assert out[0][0][2][0] == "ingested" and any(math.isclose(r[2], 0.5) for r in out[0][1])
