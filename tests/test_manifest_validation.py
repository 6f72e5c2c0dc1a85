"""Tampered manifests given to ``predict`` (issue 19 item 3): each is one clear error, never a traceback,
and never a silent wrong answer (a NaN weight, a negative error)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import types
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.manifest import load_manifest, schema


def _cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return types.SimpleNamespace(returncode=rc, stdout=out.getvalue(), stderr=err.getvalue())


def _write_csv(path, models, datasets, seed):
    rng = np.random.default_rng(seed)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "benchmark", "dataset", "metric", "value"])
        for i, m in enumerate(models):
            a = rng.random()
            for j, d in enumerate(datasets):
                w.writerow([m, "synth", d, "acc", f"{np.clip(0.3 + 0.5 * a - 0.02 * j + 0.03 * rng.standard_normal(), 0, 1):.4f}"])


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("manifest")
    datasets = [f"d{j}" for j in range(8)]
    _write_csv(tmp / "train.csv", [f"m{i}" for i in range(16)], datasets, 0)
    _write_csv(tmp / "new.csv", ["newmodel"], datasets, 1)
    db = tmp / "s.duckdb"
    assert _cli("ingest", "--db", db, tmp / "train.csv").returncode == 0
    r = _cli("reduce", "--db", db, "--budget", "3", "--n-random", "20", "--out", tmp / "out", "--format", "json")
    assert r.returncode == 0, r.stderr
    return tmp / "out" / "manifest.json", tmp / "new.csv"


def test_the_untampered_manifest_predicts(reduced):
    path, new = reduced
    r = _cli("predict", "--manifest", path, new)
    assert r.returncode == 0, r.stderr


def _tamper(m):
    tm = m["training_matrix"]
    return {
        "ragged training_matrix": (lambda: tm["values"][0].pop(), "not rectangular"),
        "missing row": (lambda: tm["values"].pop(), "rows for"),
        "string cell": (lambda: tm["values"][0].__setitem__(0, "x"), "training_matrix/values/0/0"),
        "nested cell": (lambda: tm["values"][0].__setitem__(0, [0.5]), "training_matrix/values/0/0"),
        "training datasets differ": (lambda: tm["datasets"].reverse(), "training_matrix datasets differ"),
        "unknown query key": (lambda: m["source"]["query"].__setitem__("evil", 1), "source/query"),
        "query wrong type": (lambda: m["source"]["query"].__setitem__("rows", "everything"), "source/query/rows"),
        "negative aggregate_rmse": (lambda: m["prediction"]["expected_error"].__setitem__("aggregate_rmse", -1),
                                    "aggregate_rmse"),
        "negative weight": (lambda: m["datasets"][0].__setitem__("weight", -0.5), "datasets/0/weight"),
        "null weight": (lambda: m["datasets"][0].__setitem__("weight", None), "needs a weight"),
        "zero weights": (lambda: [d.__setitem__("weight", 0.0) for d in m["datasets"]], "sum to 0"),
        "null span": (lambda: m["datasets"][0]["normalisation"].__setitem__("span", None), "normalisation/span"),
        "zero span": (lambda: m["datasets"][0]["normalisation"].__setitem__("span", 0), "span is 0"),
        "subset not in datasets": (lambda: m["subset"][0].__setitem__("name", "nowhere"), "not in datasets"),
        "duplicate dataset": (lambda: m["datasets"].append(dict(m["datasets"][0])), "appears twice"),
        "unknown predictor param": (lambda: m["prediction"]["predictor"]["params"].__setitem__("lots", 1),
                                    "has no parameter 'lots'"),
        "wrong param type": (lambda: m["prediction"]["predictor"]["params"].__setitem__(
            next(k for k, v in m["prediction"]["predictor"]["params"].items() if isinstance(v, (int, float))
                 and not isinstance(v, bool)), "lots"), "expected a"),
        "unknown predictor": (lambda: m["prediction"]["predictor"].__setitem__("name", "nope"), "unknown Predictor"),
        "version 2": (lambda: m.__setitem__("manifest_version", "2.0"), "reads version 1.x"),
        "other tool": (lambda: m["tool"].__setitem__("name", "other-tool"), "not by harness-ext"),
        "no version": (lambda: m.pop("manifest_version"), "no manifest_version"),
        "group name escapes": (lambda: m.__setitem__("group_name", "../../x"), "group_name"),
        "not an object": (lambda: m.clear() or m.__setitem__("x", 1), "manifest"),
    }


CASES = sorted(_tamper({"training_matrix": {"values": [[]], "datasets": []}, "source": {"query": {}},
                        "prediction": {"expected_error": {}, "predictor": {"params": {}}}, "datasets": [{}],
                        "subset": [{}], "tool": {}}))


@pytest.mark.parametrize("case", CASES)
def test_tampered_manifest_is_one_clear_error(reduced, tmp_path, case):
    path, new = reduced
    m = json.loads(path.read_text())
    change, match = _tamper(m)[case]
    change()
    bad = tmp_path / "manifest.json"
    bad.write_text(json.dumps(m))
    r = _cli("predict", "--manifest", bad, new)
    assert r.returncode == 1, (case, r.stdout)
    assert "Traceback" not in r.stderr and "error: unexpected" not in r.stderr, r.stderr
    assert match in r.stderr, (case, r.stderr)
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize("text, match", [
    ("NaN", "not a number JSON allows"),
    ("Infinity", "not a number JSON allows"),
    ("-Infinity", "not a number JSON allows"),
])
def test_nan_and_infinity_literals_are_refused(reduced, tmp_path, text, match):
    path, new = reduced
    m = json.loads(path.read_text())
    for where in ("weight", "cell"):
        doc = json.dumps(m)
        if where == "weight":
            m2 = json.loads(doc)
            m2["datasets"][0]["weight"] = "@@"
        else:
            m2 = json.loads(doc)
            m2["training_matrix"]["values"][0][0] = "@@"
        bad = tmp_path / f"{where}.json"
        bad.write_text(json.dumps(m2).replace('"@@"', text))
        r = _cli("predict", "--manifest", bad, new)
        assert r.returncode == 1 and match in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("text, match", [
    ("[" * 100_000 + "]" * 100_000, "nested more than"),
    ('{"a":' * 50 + "1" + "}" * 50, "nested more than"),
    ("[1, 2", "not JSON"),
    ("", "not JSON"),
    ("[]", "not an object"),
    ('"just a string"', "not an object"),
    (b"\xff\xfe{}", "not UTF-8"),
])
def test_malformed_files(reduced, tmp_path, text, match):
    _, new = reduced
    bad = tmp_path / "m.json"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    r = _cli("predict", "--manifest", bad, new)
    assert r.returncode == 1 and match in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_oversized_manifest(monkeypatch, tmp_path):
    import harness_ext.methods.reduction.manifest_validation as mv

    monkeypatch.setattr(mv, "MAX_MANIFEST_BYTES", 10)
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"manifest_version": "1.0", "padding": "x" * 100}))
    with pytest.raises(HarnessExtError, match="manifest is .* bytes; at most 10 are read"):
        load_manifest(p)


def test_schema_query_keys_are_the_matrix_query_fields():
    """A new MatrixQuery field must be added to the schema's source.query, or manifests using it are refused."""
    from harness_ext.store.matrix import MatrixQuery

    assert set(schema()["properties"]["source"]["properties"]["query"]["properties"]) == {f.name for f in fields(MatrixQuery)}
