"""Every item design gives the same manifest, byte for byte, whatever order the same files were ingested in.

Model order in the store, the order of a task's text ids and whether the store was built in one ``ingest`` or
file by file must not reach a design's draw, clustering, IRT fit or search: each reads the population with its
models sorted by name and its items in the order of their ids. Real data: HELM Lite GSM8K and OpenbookQA
(the shared item tables), given text ids and split into two files of models, the second shuffled.

``--item-design anchors`` keeps a dataset subset and picks anchor items of its tasks from the per-sample logs:
it chose them on every model with logs, the ones ``--exclude-models`` held out of the subset's choice too.
Now the anchors are chosen on the matrix's selection: excluding a model gives the anchors of a store that
never held it (the real per-item answers of twelve HELM Lite models, written as lm-eval per-sample logs).
"""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from harness_ext.cli import main

from conftest import SHARED_DATA

ITEMS = SHARED_DATA / "items" / "helm_lite"
HELD_OUT = "AlephAlpha_luminous-base"
DATE = "2026-01-01T00-00-00.000000"
needs_shared = pytest.mark.skipif(not ITEMS.is_dir(), reason="needs the shared item tables (../shared/data or "
                                  "HARNESS_EXT_SHARED_DATA)")


def _tables(n_models: int, n_items: int, tasks=("gsm", "commonsense")) -> dict:
    """Task -> the first ``n_models`` models (by name) on the first ``n_items`` items, each item given a text id."""
    out = {}
    for task in tasks:
        t = pd.read_parquet(ITEMS / f"{task}.parquet")
        t = t[t["model"].isin(sorted(t["model"].unique())[:n_models]) & (t["item"] < n_items)]
        t["item"] = [f"q_{hashlib.sha1(f'{task}:{i}'.encode()).hexdigest()[:10]}" for i in t["item"]]
        out[task] = t.assign(task=task)[["model", "task", "item", "score"]]
    return out


def _split(folder, tables: dict) -> tuple:
    """Two files per task: every other model in the source's order, then the rest, shuffled."""
    folder.mkdir()
    first, second = [], []
    for task, t in tables.items():
        models = sorted(t["model"].unique())
        a, b = t[t["model"].isin(models[::2])], t[t["model"].isin(models[1::2])]
        for part, rows, into in (("a", a, first), ("b", b.sample(frac=1.0, random_state=1), second)):
            path = folder / f"{task}_{part}.csv"
            rows.to_csv(path, index=False)
            into.append(str(path))
    return first, second


def _manifest(tmp_path, monkeypatch, name: str, batches, args) -> bytes:
    """Ingest the batches in this order (one ``ingest`` each) into ``<name>/store.duckdb``, reduce there with
    ``args`` (the store named relatively, as the manifest records it): the manifest's bytes."""
    (tmp_path / name).mkdir(exist_ok=True)
    monkeypatch.chdir(tmp_path / name)
    for paths in batches:
        assert main(["ingest", "--db", "store.duckdb", "-q", *paths]) == 0
    out = f"reduced_{hashlib.sha1(' '.join(args).encode()).hexdigest()[:8]}"
    assert main(["reduce", "--db", "store.duckdb", "--seed", "0", "--out", out, "--no-plot", "-q", *args]) == 0
    return (tmp_path / name / out / "manifest.json").read_bytes()


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The same files ingested three ways: in one call, file by file backward, and the second half first."""
    root = tmp_path_factory.mktemp("design_order")
    first, second = _split(root / "files", _tables(16, 60))
    return root, {"one_call": [first + second], "file_by_file_backward": [[p] for p in (first + second)[::-1]],
                  "second_half_first": [second, first]}


@needs_shared
@pytest.mark.parametrize("design", ["random", "stratified", "irt-anchors", "search"])
@pytest.mark.parametrize("size", [["--items", "8"], ["--items-total", "16"]])
@pytest.mark.slow
def test_every_design_gives_one_manifest_in_every_ingest_order(stores, design, size, monkeypatch, capsys):
    root, orders = stores
    args = [*size, "--item-design", design, "--exclude-models", HELD_OUT]
    got = {name: hashlib.sha256(_manifest(root, monkeypatch, name, batches, args)).hexdigest()
           for name, batches in orders.items()}
    assert len(set(got.values())) == 1, got
    for name in orders:  # the stores are ingested once; later designs only reduce
        orders[name] = []
    capsys.readouterr()


def _logs(folder, models: list, tables: dict) -> None:
    """Each model's real per-item answers as lm-eval writes them with ``--log_samples``, its task means as results."""
    for m in models:
        d = folder / m
        d.mkdir(parents=True)
        results = {}
        for task, t in tables.items():
            s = t[t["model"] == m].sort_values("item")
            results[f"helm_{task}"] = {"alias": f"helm_{task}", "acc,none": float(s["score"].mean())}
            (d / f"samples_helm_{task}_{DATE}.jsonl").write_text("".join(
                json.dumps({"doc_id": int(i), "filter": "none", "metrics": ["acc"], "acc": float(v)}) + "\n"
                for i, v in zip(s["item"], s["score"])))
        (d / f"results_{DATE}.json").write_text(json.dumps(
            {"config": {"model": "hf", "model_args": f"pretrained={m}"}, "model_name": m, "results": results,
             "n-shot": {k: 0 for k in results}}))


@needs_shared
@pytest.mark.slow
def test_anchor_items_leave_out_the_excluded_models_and_ignore_ingest_order(tmp_path, monkeypatch, capsys):
    tasks = ("gsm", "commonsense", "mmlu", "med_qa", "math")
    tables = {}
    for task in tasks:  # integer item ids, as lm-eval logs them
        t = pd.read_parquet(ITEMS / f"{task}.parquet")
        tables[task] = t[t["model"].isin(sorted(t["model"].unique())[:12]) & (t["item"] < 60)]
    models = sorted(tables["gsm"]["model"].unique())
    assert HELD_OUT in models
    _logs(tmp_path / "logs", models, tables)
    folders = [str(tmp_path / "logs" / m) for m in models]
    args = ["--budget", "2", "--items", "5", "--item-design", "anchors"]
    held_out = json.loads(_manifest(tmp_path, monkeypatch, "all", [folders], [*args, "--exclude-models", HELD_OUT]))
    never = json.loads(_manifest(tmp_path, monkeypatch, "without", [[f for f in folders if not f.endswith(HELD_OUT)]],
                                 args))
    assert held_out["source"]["excluded_models"]["models"] == [HELD_OUT]
    assert held_out["subset"] == never["subset"]
    assert held_out["items"] == never["items"]  # were chosen on 12 models, the held-out one among them
    assert {b["n_models"] for b in held_out["items"]["tasks"].values()} == {11}
    notes = [w for w in held_out["warnings"] if "left out of the anchors" in w]
    assert len(notes) == len(held_out["items"]["tasks"]) and all("1 of 12 models" in w for w in notes)
    # Model folders ingested one at a time, backward: the same manifest.
    backward = _manifest(tmp_path, monkeypatch, "backward", [[f] for f in folders[::-1]],
                         [*args, "--exclude-models", HELD_OUT])
    assert json.loads(backward) == held_out
    assert backward == (tmp_path / "all" / next((tmp_path / "all").glob("reduced_*")).name
                        / "manifest.json").read_bytes()
    capsys.readouterr()



@pytest.mark.slow
def test_anchor_design_names_the_subset_tasks_it_cannot_cut_and_ignores_ingest_order(tmp_path, monkeypatch, capsys):
    """Inspect logs (a task with whole-number ids, one with text ids) ingested forward or backward: one manifest;
    a subset dataset that is no single lm-eval task gets no anchors, and a warning says it runs whole."""
    from test_inspect_items import _population

    _population(tmp_path / "logs")
    logs = [str(p) for p in sorted((tmp_path / "logs").glob("*.json"))]
    args = ["--budget", "1", "--items", "5", "--item-design", "anchors"]
    forward = _manifest(tmp_path, monkeypatch, "forward", [[p] for p in logs], args)
    assert _manifest(tmp_path, monkeypatch, "backward", [[p] for p in logs[::-1]], args) == forward
    m = json.loads(forward)
    assert m["items"]["tasks"] == {}
    assert any(w.startswith("no anchor items for 1 subset dataset") and m["subset"][0]["name"] in w
               for w in m["warnings"])
    capsys.readouterr()

def test_select_names_matches_as_the_glob_helper_does():
    """``select_names`` uses :func:`~harness_ext.store.globs.matches` for both its lists (case-sensitive, as
    DuckDB's GLOB), so a glob that keeps no name is also the one it reports as matching none."""
    import inspect

    from harness_ext.store import globs
    from harness_ext.store.globs import matches, select_names

    names = ["EleutherAI/pythia-1b", "eleutherai/pythia-12b", "meta/Llama-3-8B", "a[1]"]
    kept, unmatched = select_names(names, None, ["EleutherAI/*", "*llama*", "a[[]1]", ""])
    assert kept == ["eleutherai/pythia-12b", "meta/Llama-3-8B"]
    assert unmatched == ["*llama*"]  # case counts: 'Llama' is not 'llama'
    for g in ("EleutherAI/*", "*llama*", "a[[]1]"):
        assert (g in unmatched) == (not any(matches(n, g) for n in names))
    assert select_names(names, "eleutherai/*", ["*-12b"]) == ([], [])
    assert "fnmatch" not in inspect.getsource(globs.select_names)
