"""The Python API's item-level reduction is the command's: ``harness_ext.reduce_items`` and
``harness_ext.reduce(store, items=N)`` on a store of item-level results write the manifest that
``harness-ext reduce --items N`` writes, byte for byte, for the same seed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import harness_ext as hx
from harness_ext.cli import main
from harness_ext.errors import HarnessExtError

LOGS = Path(__file__).resolve().parent / "fixtures" / "samples" / "lm_eval_output"


@pytest.fixture(scope="module")
def item_store(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("items") / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *(str(LOGS / m) for m in ("toy__lm-small", "toy__lm-medium"))]) == 0
    return db


@pytest.mark.slow
def test_reduce_items_writes_the_commands_manifest_byte_for_byte(item_store, tmp_path, capsys):
    cli = tmp_path / "cli"
    assert main(["reduce", "--db", str(item_store), "--items", "8", "--metric", "acc", "--seed", "3",
                 "--out", str(cli), "--no-plot"]) == 0
    api = tmp_path / "api"
    result = hx.reduce_items(item_store, 8, metric="acc", seed=3)
    result.write(api)
    assert (api / "manifest.json").read_bytes() == (cli / "manifest.json").read_bytes()
    assert result.manifest["kind"] == "items" and result.to_frame().loc["toy_arith_mc", "run"] == 8
    # predict takes the result itself, as it takes a ReduceResult
    assert hx.predict(result, str(LOGS / "toy__lm-large")).aggregate is not None


@pytest.fixture(scope="module")
def table_store(tmp_path_factory) -> Path:
    """A store of item-response tables only (no dataset-level results), as helm_lite's Parquet tables."""
    folder = tmp_path_factory.mktemp("tables") / "toybench"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for task in ("alpha", "beta"):
        skill = np.linspace(0.2, 0.9, 10)
        rows = [f"m{m},{i},{int(rng.random() < skill[m])}\n" for m in range(10) for i in range(30)]
        (folder / f"{task}.csv").write_text("model,item,score\n" + "".join(rows))
    db = folder.parent / "tables.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(folder)]) == 0
    return db


def test_reduce_on_a_store_of_item_tables_with_items_is_the_item_reduction(table_store, tmp_path, capsys):
    cli = tmp_path / "cli"
    assert main(["reduce", "--db", str(table_store), "--items", "8", "--seed", "5", "--out", str(cli),
                 "--no-plot"]) == 0
    result = hx.reduce(table_store, items=8, seed=5)  # was: StoreError "the store is empty"
    assert isinstance(result, hx.ItemReduceResult)
    result.write(tmp_path / "api")
    assert (tmp_path / "api" / "manifest.json").read_bytes() == (cli / "manifest.json").read_bytes()
    again = hx.reduce_items(table_store, 8, seed=5)
    assert again.manifest == result.manifest


def test_reduce_on_a_store_of_item_tables_without_items_names_reduce_items(table_store):
    with pytest.raises(HarnessExtError, match="reduce_items"):
        hx.reduce(table_store)


def test_reduce_items_refuses_the_anchor_design_and_a_bad_seed(item_store):
    with pytest.raises(HarnessExtError, match="dataset subset"):
        hx.reduce_items(item_store, 8, design="anchors")
    with pytest.raises(HarnessExtError, match="seed must be an integer"):
        hx.reduce_items(item_store, 8, seed="x")
    with pytest.raises(HarnessExtError, match="seed must be an integer"):
        hx.reduce(item_store, items=8, seed="x")
