"""The same item files ingested in another order give the same item-level manifest, byte for byte.

A task whose ids are text (hashes, questions) is numbered by the store in the order its files first list
them, so the same files ingested A then B or B then A gave one question two numbers. ``reduce --items``
drew the same questions either way, but wrote the store's numbers: ``manifest.json`` and lm-eval's
``--samples`` file differed, and a new model's logs run from one team's ``--samples`` read against the
other's manifest as other questions. The manifest now numbers such a task's items 0, 1, ... in the order of
their ids' text. Real data: HELM Lite GSM8K and OpenbookQA, given text ids and split into two files of
models, the second in another row order, as a teammate's export would be.
"""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.item_manifest import decode_ids, encode_ids
from harness_ext.store.db import Store
from harness_ext.store.item_ids import item_id_map

from conftest import SHARED_DATA

ITEMS = SHARED_DATA / "items" / "helm_lite"
NEW_MODEL = "openai_gpt-4-0613"
DATE = "2026-01-01T00-00-00.000000"
needs_shared = pytest.mark.skipif(not ITEMS.is_dir(), reason="needs the shared item tables (../shared/data or "
                                  "HARNESS_EXT_SHARED_DATA)")


def _tables() -> dict:
    """Task -> the real table with each item's position replaced by a text id (a hash of it)."""
    out = {}
    for task in ("gsm", "commonsense"):
        t = pd.read_parquet(ITEMS / f"{task}.parquet")
        t["item"] = [f"q_{hashlib.sha1(f'{task}:{i}'.encode()).hexdigest()[:10]}" for i in t["item"]]
        out[task] = t.assign(task=task)[["model", "task", "item", "score"]]
    return out


def _files(folder, tables: dict) -> tuple:
    """Two files per task: the first half of the models in the source's order, the rest shuffled."""
    folder.mkdir()
    first, second = [], []
    for task, t in tables.items():
        models = sorted(t["model"].unique())
        a, b = t[t["model"].isin(models[: len(models) // 2])], t[t["model"].isin(models[len(models) // 2:])]
        for part, rows, into in (("a", a, first), ("b", b.sample(frac=1.0, random_state=1), second)):
            path = folder / f"{task}_{part}.csv"
            rows.to_csv(path, index=False)
            into.append(str(path))
    return first, second


def _reduce(tmp_path, monkeypatch, name: str, batches) -> tuple:
    """Ingest the batches in this order (one ``ingest`` each), reduce with the new model left out into ``reduced``
    (relative, as the YAML and HELM conf name it in their headers): every written file's bytes, and the manifest."""
    db = tmp_path / f"{name}.duckdb"
    for paths in batches:
        assert main(["ingest", "--db", str(db), "-q", *paths]) == 0
    (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path / name)
    assert main(["reduce", "--db", str(db), "--items", "20", "--seed", "0", "--out", "reduced", "--no-plot",
                 "--exclude-models", NEW_MODEL]) == 0
    out = tmp_path / name / "reduced"
    written = {p.name: p.read_bytes() for p in out.iterdir()}
    return written, json.loads((out / "manifest.json").read_text()), out


def _logs(folder, manifest: dict, tables: dict) -> None:
    """The new model's answers to the drawn items, as lm-eval logs them for the manifest's ``--samples``."""
    folder.mkdir()
    (folder / f"results_{DATE}.json").write_text(json.dumps(
        {"config": {"model": "hf", "model_args": f"pretrained={NEW_MODEL}"}, "model_name": NEW_MODEL, "results": {}}))
    for task, b in manifest["tasks"].items():
        name = dict(zip(decode_ids(b["items"]).tolist(), b["item_ids"]))
        t = tables[task]
        score = t[t["model"] == NEW_MODEL].set_index("item")["score"]
        lines = [json.dumps({"doc_id": int(d), "filter": "none", "metrics": ["acc"], "acc": float(score[name[int(d)]])})
                 for d in decode_ids(b["sample"])]
        (folder / f"samples_{task}_{DATE}.jsonl").write_text("\n".join(lines) + "\n")


def _predict(tmp_path, out, logs, name: str) -> list:
    pj = tmp_path / f"{name}.json"
    assert main(["predict", "-m", str(out), str(logs), "--json", str(pj), "--no-lm-eval-results"]) == 0
    pred = json.loads(pj.read_text())
    return [(d["dataset"], d["score"], d["lower"], d["upper"]) for d in pred["datasets"]] + \
        [(a["aggregate"], a["lower"], a["upper"]) for a in pred["aggregate"]]


@needs_shared
@pytest.mark.slow
def test_ingest_order_gives_a_byte_identical_manifest_and_samples_file(tmp_path, monkeypatch, capsys):
    tables = _tables()
    first, second = _files(tmp_path / "files", tables)
    forward, fm, fout = _reduce(tmp_path, monkeypatch, "forward", [first, second])
    backward, bm, bout = _reduce(tmp_path, monkeypatch, "backward", [second, first])
    assert set(forward) >= {"manifest.json", "harness_ext_reduced_samples.json"}
    assert forward == backward  # manifest.json, the --samples file, the group YAML, the HELM conf: byte for byte
    for task, b in fm["tasks"].items():  # numbered 0, 1, ... in the order of the ids' text
        assert b["item_ids"] == sorted(tables[task]["item"].unique())
        assert decode_ids(b["items"]).tolist() == list(range(len(b["item_ids"])))
    # One new model's logs, run from either team's --samples (the same file), give the same estimates.
    _logs(tmp_path / "run", fm, tables)
    want = _predict(tmp_path, fout, tmp_path / "run", "f")
    assert _predict(tmp_path, bout, tmp_path / "run", "b") == want
    # A manifest written before, with the store's numbers (listed by id, so not ascending), predicts the same.
    with Store.open(tmp_path / "backward.duckdb", read_only=True) as store:
        stored = {(r.task, r.item): int(r.doc_id) for r in item_id_map(store).itertuples()}
    for task, b in bm["tasks"].items():
        number = [stored[task, i] for i in b["item_ids"]]
        assert number != sorted(number)  # the backward store numbered them in the shuffled file's order
        b["items"], b["sample"] = encode_ids(number), encode_ids([number[d] for d in decode_ids(b["sample"])])
    (bout / "manifest.json").write_text(json.dumps(bm, indent=2) + "\n")
    _logs(tmp_path / "run_before", bm, tables)
    assert _predict(tmp_path, bout, tmp_path / "run_before", "before") == want
    capsys.readouterr()


@pytest.mark.slow
def test_inspect_logs_in_either_order_give_the_same_manifest_and_sample_ids(tmp_path, monkeypatch, capsys):
    """Inspect logs whose sample ids are text, each listing its samples in its own order, ingested one at a time
    forward or backward: the same manifest and ``inspect_sample_ids.json``, the ids as logged."""
    from test_inspect_items import _population

    _population(tmp_path / "logs")
    logs = sorted((tmp_path / "logs").glob("*.json"))
    written = []
    for name, order in (("forward", logs), ("backward", logs[::-1])):
        db = tmp_path / f"{name}.duckdb"
        for log in order:
            assert main(["ingest", "--db", str(db), "-q", str(log)]) == 0
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        assert main(["reduce", "--db", str(db), "--items", "10", "--seed", "0", "--out", "reduced", "--no-plot"]) == 0
        written.append({p.name: p.read_bytes() for p in (tmp_path / name / "reduced").iterdir()})
    assert written[0] == written[1] and "inspect_sample_ids.json" in written[0]
    trivia = json.loads(written[0]["manifest.json"])["tasks"]["trivia"]
    drawn = json.loads(written[0]["inspect_sample_ids.json"])["trivia"]
    name = dict(zip(decode_ids(trivia["items"]).tolist(), trivia["item_ids"]))
    assert drawn == [name[d] for d in decode_ids(trivia["sample"])]  # each drawn number's own logged id
    capsys.readouterr()
