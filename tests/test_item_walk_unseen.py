"""The item-level loop walked as a new user would, on the EvalPlus tables the estimators were never tuned on.

The tables are ``fixtures/items_unseen/evalplus`` (HumanEval+ and MBPP+ pass@1 per problem, crux-eval/eval-arena;
PROVENANCE.md beside them). Each test is a message a user read on that walk that said something untrue or left
out what to do next.
"""

from __future__ import annotations

import pytest

from harness_ext.cli import main

from conftest import REPO

EVALPLUS = REPO / "tests" / "fixtures" / "items_unseen" / "evalplus"


def test_weights_on_item_scores_does_not_claim_they_were_normalised(tmp_path, capsys):
    """A prompt-level matrix is weighed as logged (claude-3-opus's uniform score is its pass@1, 127/164 = 0.774), but
    the header said each dataset was chance-normalised, which only the store matrix is."""
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(EVALPLUS)]) == 0
    capsys.readouterr()
    assert main(["weights", "--db", db, "--samples-task", "humaneval_plus", "--samples-metric", "pass1",
                 "--analyses", "schemes", "--schemes", "uniform", "--out", str(tmp_path / "w")]) == 0
    out = capsys.readouterr().out
    assert "normalised to 0-1 on its own scale" not in out, out
    assert "scores: each prompt's score as logged, not normalised" in out, out
    row = next(x for x in out.splitlines() if x.startswith("claude-3-opus-20240229 "))
    assert "0.774" in row, row


def test_weights_takes_a_tasks_only_metric_without_being_told(tmp_path, capsys):
    """EvalPlus logs ``pass1`` only: ``--samples-metric`` defaulted to ``acc`` and the analysis was refused; a task
    logging several metrics, none ``acc``, is refused naming them and the option."""
    from harness_ext.errors import StoreError
    from harness_ext.store.db import Store
    from harness_ext.store.samples import prompt_matrix

    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(EVALPLUS)]) == 0
    capsys.readouterr()
    assert main(["weights", "--db", db, "--samples-task", "humaneval_plus", "--analyses", "schemes",
                 "--schemes", "uniform", "--out", str(tmp_path / "w")]) == 0
    assert "prompt-level humaneval_plus (pass1)" in capsys.readouterr().out
    with Store.open(db) as store:
        store.con.execute("INSERT INTO samples SELECT * REPLACE ('pass10' AS metric) FROM samples LIMIT 5")
        with pytest.raises(StoreError, match=r"logs 2 per-sample metrics and none is 'acc': choose one with "
                                             r"--samples-metric \(pass1, pass10\)"):
            prompt_matrix(store, "humaneval_plus", None)


def test_helm_conf_does_not_send_a_task_the_lm_eval_group_leaves_out_to_that_group(tmp_path):
    """HELM Lite's MMLU runs as 5 HELM entries, so the HELM conf leaves it out; the lm-eval group leaves it out too
    (lm-eval's ``mmlu`` is its 57-subject group). The conf and ``reduce``'s summary still said to run its drawn items
    with the lm-eval group, which does not list it. The manifest below is a real reduction's, cut to what the writer
    reads (the shared HELM Lite tables: MATH, 7 entries; MMLU, 5)."""
    from harness_ext.plugins.manifest_writers import helm_items_summary, write_helm_conf

    entry = {"name": "mmlu", "benchmark": "helm_lite", "metric": "acc", "task": "mmlu", "num_fewshot": None}
    math = dict(entry, name="math", task="math")
    table = "its items come from helm_lite's item table, not from lm-eval"
    manifest = {"kind": "items", "subset": [math, entry], "design": {"n_per_task": 50},
                "tasks": {"math": {"n_items": 437, "n_run": 50}, "mmlu": {"n_items": 567, "n_run": 40}},
                "cost": {"items_run": 90},
                "lm_eval_tasks": {"math": {"origin": "unknown", "reason": table},
                                  "mmlu": {"origin": "unknown", "builtin": "mmlu/default/_mmlu.yaml", "reason": table}}}
    [path] = write_helm_conf(manifest, tmp_path)
    line = next(x for x in helm_items_summary(manifest) if x.startswith("Not in this conf"))
    assert line in path.read_text()
    assert 'Run the 50 drawn items of "math" with the lm-eval group' in line, line
    assert 'The lm-eval group leaves out "mmlu" too: run its 40 drawn items' in line, line
    assert "give them to predict as an item-response table" in line, line


HELD_OUT = ["claude-3-opus-20240229", "gpt-4-1106-preview", "Qwen--Qwen1.5-72B-Chat"]


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    """Both EvalPlus tables ingested, 50 items per task drawn without the held-out models (claude-3-opus-20240229,
    then stronger than every population model on both tasks, and Qwen1.5-72B-Chat, inside)."""
    import harness_ext as hx

    root = tmp_path_factory.mktemp("evalplus")
    db = str(root / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(EVALPLUS)]) == 0
    return root, hx.reduce_items(db, 50, benchmark="evalplus", seed=0, exclude_models=HELD_OUT)


def test_reduce_states_two_tasks_correlation_as_one_figure(reduced):
    """Two tasks have one error correlation: the summary printed it as a range of one ("off-diagonal -0.21 to -0.21"),
    and a correlation shrunk fully to independence as "+0.00 to +0.00 after shrinking 100%"."""
    from harness_ext.methods.reduction.item_benchmark import correlation_text

    manifest = reduced[1].manifest
    text = correlation_text(manifest)
    assert "off-diagonal" not in text and "-0.21 to -0.21" not in text, text
    assert "their correlation -0.2" in text and "of the way to independence" in text, text
    block = dict(manifest["benchmark_correlation"], matrix=[[1.0, 0.0], [0.0, 1.0]], shrinkage=1.0)
    text = correlation_text(dict(manifest, benchmark_correlation=block))
    assert "shrunk fully to independence, so the tasks combine as independent" in text and "100%" not in text, text


def _lm_eval_logs(folder, samples: dict, model: str, metric: str, flt: str):
    """The model's answers to the drawn items as lm-eval 0.4's ``--log_samples`` output (one folder per model)."""
    import json

    import pandas as pd

    out = folder / model
    out.mkdir(parents=True)
    date, results = "2026-12-07T02-50-00.000000", {}
    for task, ids in samples.items():
        scores = pd.read_parquet(EVALPLUS / f"{task}.parquet").query("model == @model").set_index("item")["score"]
        with open(out / f"samples_{task}_{date}.jsonl", "w") as f:
            for i in ids:
                f.write(json.dumps({"doc_id": int(i), "doc": {"task_id": f"{task}/{i}"}, "target": "",
                                    "arguments": {"gen_args_0": {"arg_0": "p", "arg_1": {"until": []}}},
                                    "resps": [["x"]], "filtered_resps": ["x"], "filter": flt, "metrics": [metric],
                                    "doc_hash": "0", "prompt_hash": "0", "target_hash": "0",
                                    metric: float(scores[i])}) + "\n")
        results[task] = {"alias": task, f"{metric},{flt}": float(scores[ids].mean())}
    (out / f"results_{date}.json").write_text(json.dumps({"results": results, "model_name": model,
                                                         "config": {"model_args": f"pretrained={model}"}}))


def test_predict_says_how_to_match_an_lm_eval_metric_logged_under_a_filter(reduced, tmp_path):
    """lm-eval's HumanEval tasks log pass@k under the filter create_test, so a run's logs name the metric
    ``pass1,create_test`` where the population's tables name it ``pass1``: predict refused (rightly) with nothing
    saying that the filter is the difference nor what to change."""
    from harness_ext.errors import HarnessExtError
    from harness_ext.methods.reduction.item_predict import predict_items

    root, red = reduced
    red.write(tmp_path / "reduced")
    samples = {t: [int(i) for i in ids] for t, ids in
               __import__("json").loads((tmp_path / "reduced" / "harness_ext_reduced_samples.json").read_text()).items()}
    _lm_eval_logs(tmp_path / "results", samples, "claude-3-opus-20240229", "pass1", "create_test")
    with pytest.raises(HarnessExtError) as exc:
        predict_items(red.manifest, [str(tmp_path / "results")])
    assert "lm-eval logs a metric under a filter as <metric>,<filter> (pass1,create_test)" in str(exc.value)
    assert "`metric:` in its tables' sidecars" in str(exc.value)
    # Logged under the filter "none", the same answers predict: the metric is then lm-eval's name alone.
    _lm_eval_logs(tmp_path / "plain", samples, "claude-3-opus-20240229", "pass1", "none")
    pred = predict_items(red.manifest, [str(tmp_path / "plain")])
    assert pred is not None


def test_a_wide_table_without_its_sidecar_is_pointed_to_the_sidecar(reduced, tmp_path, capsys):
    """A user's items x models CSV (the drawn HumanEval+ items of two held-out models) without its sidecar: ingest said
    to rename a column to 'model', which would store the item ids as models, and predict listed the log formats it
    reads; both now say that a wide table is declared by its sidecar."""
    import pandas as pd

    from harness_ext.errors import HarnessExtError
    from harness_ext.methods.reduction.item_predict import predict_items

    _, red = reduced
    drawn = [int(i) for a, b in red.manifest["tasks"]["humaneval_plus"]["sample"] for i in range(a, b)]
    long = pd.read_parquet(EVALPLUS / "humaneval_plus.parquet")
    wide = long[long["model"].isin(HELD_OUT[::2]) & long["item"].isin(drawn)].pivot(index="item", columns="model",
                                                                                    values="score")
    (tmp_path / "new").mkdir()
    wide.to_csv(tmp_path / "new" / "humaneval_plus.csv")
    want = "a wide item-response table (items x models) is read with its sidecar <file>.meta.yaml"
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(tmp_path / "new")]) != 0
    err = capsys.readouterr().err
    assert want in err and "rename the column" not in err, err
    with pytest.raises(HarnessExtError) as exc:
        predict_items(red.manifest, [str(tmp_path / "new")])
    assert want in str(exc.value) and "'layout: items_x_models'" in str(exc.value), str(exc.value)
    # With the sidecar the same file predicts both models.
    (tmp_path / "new" / "humaneval_plus.csv.meta.yaml").write_text(
        "benchmark: evalplus\nitems:\n  layout: items_x_models\n  task: humaneval_plus\n  metric: pass1\n")
    assert predict_items(red.manifest, [str(tmp_path / "new")]) is not None


def test_a_table_named_by_its_file_says_why_it_matched_no_task(reduced, tmp_path):
    """The guide's ``predict -m reduced/ results/ mmlu_items.csv``: a long table without a task column is task
    ``mmlu_items``, no task of the manifest; the warning counted the scores not matched "by task: mmlu_items 50" and
    left the user to guess why. Here HumanEval+'s drawn items of claude-3-opus as ``humaneval_items.csv``."""
    import pandas as pd

    from harness_ext.methods.reduction.item_predict import predict_items

    _, red = reduced
    drawn = [int(i) for a, b in red.manifest["tasks"]["humaneval_plus"]["sample"] for i in range(a, b)]
    long = pd.read_parquet(EVALPLUS / "humaneval_plus.parquet")
    rows = long[(long["model"] == HELD_OUT[0]) & long["item"].isin(drawn)]
    rows.to_csv(tmp_path / "humaneval_items.csv", index=False)
    (tmp_path / "humaneval_items.csv.meta.yaml").write_text("items:\n  metric: pass1\n")
    mbpp = [int(i) for a, b in red.manifest["tasks"]["mbpp_plus"]["sample"] for i in range(a, b)]
    _lm_eval_logs(tmp_path / "results", {"mbpp_plus": mbpp}, HELD_OUT[0], "pass1", "none")  # the logs beside it
    pred = predict_items(red.manifest, [str(tmp_path / "results"), str(tmp_path / "humaneval_items.csv")])
    said = [w for w in pred.warnings if "humaneval_items.csv: 0 of its 50 item scores matched" in w]
    assert said and "humaneval_items is the file's name, which names the task" in said[0], pred.warnings
    assert "add a task column" in said[0], said


def test_an_item_helm_conf_with_nothing_to_run_speaks_of_tasks(tmp_path):
    """EvalPlus's tasks have no HELM run entry: the item conf said "No dataset of this subset", the dataset path's
    words."""
    from harness_ext.plugins.manifest_writers import write_helm_conf

    entry = {"name": "humaneval_plus", "benchmark": "evalplus", "metric": "pass1", "task": "humaneval_plus",
             "num_fewshot": None}
    manifest = {"kind": "items", "subset": [entry], "design": {"n_per_task": 25},
                "tasks": {"humaneval_plus": {"n_items": 164, "n_run": 25}}, "cost": {"items_run": 25}}
    [path] = write_helm_conf(manifest, tmp_path)
    text = path.read_text()
    assert "# No task of this subset has a HELM run entry, so there is nothing for helm-run to run." in text, text
    assert text.endswith("entries: []\n")


def test_the_group_header_counts_the_items_it_runs(tmp_path):
    """With MBPP+ left out of the group (lm-eval ships a task of that name), the header said the group's run gives
    every task's estimate from all 50 drawn items; it runs the other task's 25."""
    import shutil

    pytest.importorskip("lm_eval", reason="the group leaves MBPP+ out because lm-eval ships a task of that name")

    pop = tmp_path / "pop"
    shutil.copytree(EVALPLUS, pop)
    side = pop / "humaneval_plus.parquet.meta.yaml"
    side.write_text(side.read_text().replace("task: humaneval_plus", "task: heplus"))
    db, out = str(tmp_path / "s.duckdb"), tmp_path / "red"
    assert main(["ingest", "-q", "--db", db, str(pop)]) == 0
    assert main(["reduce", "-q", "--db", db, "--items", "25", "--out", str(out)]) == 0
    head = (out / "harness_ext_reduced.yaml").read_text()
    assert ("(25 items of 1 task here, drawn at random; for every task's estimate, also the drawn items of the 1 "
            "task left out below, run in their own harness: 50 of 542 items in all)") in head, head
    assert "it gives every task's estimate" not in head
