"""The item-level loop as a new user runs it on the shared HELM Lite item tables: a folder of tables that name no
benchmark, `reduce --items` asked for the benchmark the user had in mind, the new model's lm-eval `--log_samples`
logs (which cannot hold lm-eval's own `mmlu`, left out of the group) and its item-response table for that task."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from conftest import SHARED_DATA, require
from harness_ext.cli import main

NEW = "anthropic_claude-3-5-sonnet-20241022"  # HELM Lite's strongest model, held out: a frontier checkpoint
LOGGED = "anthropic/claude-3-5-sonnet-20241022"


def test_an_unmatched_benchmark_names_the_ones_stored(tmp_path, capsys):
    """Composed tables in a folder `pop`: ingest says the benchmark is the folder's name; `reduce --benchmark
    helm_lite` says which item-level benchmarks the store holds, not only that none matched."""
    (tmp_path / "pop").mkdir()
    (tmp_path / "pop" / "gsm.csv").write_text("model,item,score\n" + "".join(
        f"m{m},{i},{(m + i) % 2}\n" for m in range(4) for i in range(6)))
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, str(tmp_path / "pop")]) == 0
    assert ("no benchmark named (no benchmark column or sidecar benchmark:): stored under benchmark 'pop', the "
            "folder's name (--benchmark pop selects it)") in capsys.readouterr().err
    assert main(["reduce", "--db", db, "--benchmark", "helm_lite", "--items", "3", "--no-plot",
                 "--out", str(tmp_path / "red")]) != 0
    err = capsys.readouterr().err
    assert ("no item-level results match --benchmark helm_lite: the store's item-level benchmarks are pop (1 task) "
            "(an item table's benchmark is its sidecar's benchmark:, else its folder's name") in err


def _logs(folder, drawn: dict, answers: pd.DataFrame, tasks) -> None:
    """lm-eval 0.4's output for ``tasks``: one results file and a ``samples_<task>_<date>.jsonl`` per task, each
    line one drawn document with its ``acc``."""
    date = "2026-12-04T06-00-00.000000"
    folder.mkdir(parents=True)
    results = {}
    for task in tasks:
        mine = answers[(answers["task"] == task) & answers["item"].isin(drawn[task])].sort_values("item")
        lines = [json.dumps({"doc_id": int(i), "doc": {"id": int(i)}, "target": "", "arguments": {}, "resps": [],
                             "filtered_resps": [], "filter": "none", "metrics": ["acc"],
                             "doc_hash": hashlib.sha256(str(i).encode()).hexdigest(), "prompt_hash": "",
                             "target_hash": "", "acc": float(v)}) for i, v in zip(mine["item"], mine["score"])]
        (folder / f"samples_{task}_{date}.jsonl").write_text("\n".join(lines) + "\n")
        results[task] = {"alias": task, "acc,none": float(mine["score"].mean()), "acc_stderr,none": "N/A"}
    (folder / f"results_{date}.json").write_text(json.dumps({
        "results": results, "configs": {t: {"task": t, "num_fewshot": 0} for t in tasks},
        "versions": {t: 1.0 for t in tasks}, "n-shot": {t: 0 for t in tasks},
        "config": {"model": "hf", "model_args": f"pretrained={LOGGED}"}, "model_name": LOGGED,
        "lm_eval_version": "0.4.9", "date": 1764828000.0}))


@pytest.mark.slow
def test_the_item_loop_for_a_frontier_model_from_its_logs_and_a_table(tmp_path, capsys):
    """Reduce on 82 HELM Lite models, then predict the held-out strongest one from its lm-eval logs: without the
    `mmlu` task the group leaves out, predict says why and that there is no benchmark estimate; with that task's
    items given as a table beside the logs the estimate is whole and its 90% interval holds the true score."""
    src = require(SHARED_DATA / "items" / "helm_lite")
    pop = tmp_path / "pop"
    pop.mkdir()
    frames = {}
    for path in sorted(src.glob("*.parquet")):
        frame = pd.read_parquet(path)
        frames[path.stem] = frame[frame["model"] == NEW].assign(task=path.stem)
        frame[frame["model"] != NEW].to_parquet(pop / path.name, index=False)
    answers = pd.concat(frames.values())
    truth = answers.groupby("task")["score"].mean().mean()
    db, red = str(tmp_path / "s.duckdb"), tmp_path / "red"
    assert main(["ingest", "-q", "--db", db, str(pop)]) == 0
    assert main(["reduce", "--db", db, "--benchmark", "pop", "--items", "50", "--no-plot", "--out", str(red)]) == 0
    drawn = json.loads((red / "harness_ext_reduced_samples.json").read_text())  # task -> the items to run
    logged = [t for t in drawn if t != "mmlu"]
    _logs(tmp_path / "results" / "claude", drawn, answers, logged)
    capsys.readouterr()

    assert main(["predict", "-m", str(red), str(tmp_path / "results")]) == 0
    err = capsys.readouterr().err
    assert (f"{LOGGED}: no per-item acc log for task mmlu (the lm-eval group leaves it out: lm-eval's own mmlu is "
            "another evaluation;") in err
    assert f"{LOGGED}: no full-benchmark estimate: 1 of 5 tasks has no items for it (mmlu)" in err

    table = tmp_path / "mmlu_items.csv"
    answers[(answers["task"] == "mmlu") & answers["item"].isin(drawn["mmlu"])].assign(model=LOGGED)[
        ["model", "task", "item", "score"]].to_csv(table, index=False)
    out = tmp_path / "pred.json"
    assert main(["predict", "-m", str(red), str(tmp_path / "results"), str(table), "--json", str(out)]) == 0
    assert "no full-benchmark estimate" not in capsys.readouterr().err
    (agg,) = json.loads(out.read_text())["aggregate"]
    assert agg["lower"] <= truth <= agg["upper"] and abs(agg["aggregate"] - truth) < 0.03
