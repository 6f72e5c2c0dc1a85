"""reduce writes the task YAMLs its lm-eval group needs, and says so when it cannot (issue 16, item 1)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from harness_ext.cli import main
from harness_ext.store.lm_eval_tasks import builtin_task_index, clean_config, resolve_tasks, serialised_functions

TASKS = [f"my_task_{i}" for i in range(6)]


def _config(task, data="/data/x.jsonl", **extra):
    return {"task": task, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": data}},
            "test_split": "test", "output_type": "multiple_choice", "doc_to_text": "q", "doc_to_choice": "c",
            "doc_to_target": "a", "metric_list": [{"metric": "acc"}], "num_fewshot": 0,
            "metadata": {"version": 2.0, "pretrained": "org/m", "config_source": f"tasks/{task}.yaml"}, **extra}


def _write_population(folder, with_configs=True, function_task=None, n_models=8, seed=0):
    """lm-eval v0.4 results files of ``n_models`` models on TASKS (scores of a rank-1 model)."""
    rng = np.random.default_rng(seed)
    ability, ease = rng.normal(size=n_models), rng.normal(size=len(TASKS))
    for i in range(n_models):
        results = {t: {"alias": t, "acc,none": float(1 / (1 + np.exp(-(ability[i] + ease[j] + rng.normal(0, .1))))),
                       "acc_stderr,none": 0.01} for j, t in enumerate(TASKS)}
        configs = {t: _config(t, **({"process_docs": "def process_docs(dataset):\n    return dataset\n"}
                                    if t == function_task else {})) for t in TASKS}
        doc = {"results": results, "group_subtasks": {t: [] for t in TASKS}, "n-shot": {t: 0 for t in TASKS},
               "higher_is_better": {t: {"acc": True} for t in TASKS}, "versions": {t: 2.0 for t in TASKS},
               "config": {"model": "hf", "model_args": f"pretrained=org/m{i}"}, "model_name": f"org/m{i}"}
        if with_configs:
            doc["configs"] = configs
        d = folder / f"org__m{i}"
        d.mkdir(parents=True)
        (d / "results_2025-01-01T00-00-00.000000.json").write_text(json.dumps(doc))
    return folder


def _reduce(tmp_path, pop, *extra):
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out), *extra]) == 0
    return out, json.loads((out / "manifest.json").read_text())


def test_clean_config_drops_the_runs_own_metadata():
    cfg, source = clean_config(_config("t"), {"pretrained": "org/m"})
    assert cfg["metadata"] == {"version": 2.0} and source == "tasks/t.yaml"
    assert serialised_functions({"process_docs": "def f(d):\n  return d", "doc_to_text": "{{q}}"}) == ["process_docs"]


@pytest.mark.slow
def test_custom_tasks_are_written_beside_the_group(tmp_path, capsys):
    out, m = _reduce(tmp_path, _write_population(tmp_path / "pop"))
    capsys.readouterr()
    from conftest import load_group_yaml

    group = load_group_yaml(out / "harness_ext_reduced.yaml")
    names = [t["task"] for t in group["task"]]
    assert len(names) == 2
    for n in names:
        assert m["lm_eval_tasks"][n]["origin"] == "results"
        assert m["lm_eval_tasks"][n]["config_source"] == f"tasks/{n}.yaml"
        cfg = yaml.safe_load((out / f"{n}.yaml").read_text())
        # The ingesting machine's absolute data path is not written (not portable, outside the folder), nor the
        # builder left without it (it would read the files of the folder lm_eval is run in).
        expected = {k: v for k, v in _config(n).items() if k not in ("dataset_kwargs", "dataset_path")}
        assert cfg == {**expected, "metadata": {"version": 2.0}}
        assert [d["key"] for d in m["lm_eval_tasks"][n]["dropped"]][:2] == ["dataset_kwargs.data_files", "dataset_path"]
    # Idempotent store: ingesting again keeps one configuration per task.
    from harness_ext.store.db import Store

    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(tmp_path / "pop")]) == 0
    with Store.open(tmp_path / "s.duckdb", read_only=True) as s:
        assert s.con.execute("SELECT count(*) FROM task_configs").fetchone()[0] == len(TASKS)


@pytest.mark.slow
def test_unknown_task_configs_are_reported(tmp_path, capsys):
    """Issue 16: a group of the user's own tasks crashed inside lm-eval because the folder did not define them."""
    out, m = _reduce(tmp_path, _write_population(tmp_path / "pop", with_configs=False))
    text = capsys.readouterr()
    assert "no lm-eval definition known for 2 subset tasks" in text.out + text.err
    header = (out / "harness_ext_reduced.yaml").read_text()
    assert header.count("NOT SELF-CONTAINED") == 2 and "one --include_path" in header
    assert all(e["origin"] == "unknown" for e in m["lm_eval_tasks"].values())
    assert sorted(p.name for p in out.glob("*.yaml")) == ["harness_ext_reduced.yaml"]


def test_serialised_functions_are_not_rebuilt(tmp_path):
    pop = _write_population(tmp_path / "pop", function_task="my_task_0")
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.db import Store

    with Store.open(":memory:") as s:
        ingest_paths(s, [pop], show_progress=False)
        found = resolve_tasks(["my_task_0", "my_task_1"], s)
    assert found["my_task_0"]["origin"] == "unknown" and "process_docs" in found["my_task_0"]["reason"]
    assert found["my_task_0"]["config_source"] == "tasks/my_task_0.yaml"
    assert found["my_task_1"]["origin"] == "results"


@pytest.mark.slow
def test_builtin_tasks_are_named_not_copied(tmp_path):
    pytest.importorskip("lm_eval")
    index = builtin_task_index()
    assert "arc_easy" in index and "mmlu_abstract_algebra" in index
    found = resolve_tasks(["arc_easy", "mmlu_anatomy"])
    assert found["arc_easy"] == {"origin": "lm_eval", "path": "arc/arc_easy.yaml"}
    assert found["mmlu_anatomy"]["path"].endswith("mmlu_anatomy.yaml")


def _mmlu_manifest(names):
    from harness_ext.methods.reduction.manifest import example_manifest

    m = example_manifest()
    m["subset"] = [{"step": i + 1, "name": n, "benchmark": "mmlu", "metric": "acc", "task": None, "num_fewshot": 5,
                    "coverage": 0.5} for i, n in enumerate(names)]
    return m


# A NUL byte in a subject: the HELM conf leaves that run entry out (named in its header); the task list refuses it.
@pytest.mark.parametrize("bad, refusal", [("nul\x00byte", "cannot be one line of a list"),
                                          ("two\nlines", "cannot be one line of a list")])
@pytest.mark.parametrize("existing", [False, True])
def test_a_refused_output_writes_nothing(tmp_path, bad, refusal, existing):
    """Issue 19: reduce wrote manifest.json and the lm-eval YAML, then refused the HOCON conf (or the task list):
    a half-written folder. Every writer's output is now checked before any file reaches --out."""
    from harness_ext.errors import HarnessExtError
    from harness_ext.methods.reduction.manifest import write_outputs

    out = tmp_path / "reduced"
    before = {}
    if existing:  # a previous reduction's folder stays exactly as it was
        write_outputs(_mmlu_manifest(["anatomy", "virology"]), out, ["json", "lm_eval_yaml", "helm_conf", "task_list"])
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        assert len(before) == 5  # with harness_ext_estimate.py, the group's estimate in lm-eval's table
    with pytest.raises(HarnessExtError, match=refusal):
        write_outputs(_mmlu_manifest(["anatomy", bad]), out, ["json", "lm_eval_yaml", "helm_conf", "task_list"])
    assert out.exists() == existing
    if existing:
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == (["reduced"] if existing else [])  # no staging folder left


def test_an_unknown_writer_or_unsafe_group_writes_nothing(tmp_path):
    from harness_ext.errors import HarnessExtError, PluginError
    from harness_ext.methods.reduction.manifest import write_outputs

    with pytest.raises(PluginError):
        write_outputs(_mmlu_manifest(["anatomy"]), tmp_path / "a", ["json", "no_such_writer"])
    m = _mmlu_manifest(["anatomy"])
    m["group_name"] = "../escaped"
    with pytest.raises(HarnessExtError, match="group name"):
        write_outputs(m, tmp_path / "b", ["json"])
    assert list(tmp_path.iterdir()) == []
