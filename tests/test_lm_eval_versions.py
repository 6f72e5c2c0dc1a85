"""The written lm-eval folder on older lm-eval releases, from outputs recorded with them (no lm-eval needed here).

tests/fixtures/lm_eval_versions holds what lm-eval 0.4.2 to 0.4.13 recorded (see its PROVENANCE.md): the fields each
release's ``TaskConfig`` and ``GroupConfig`` accept, a reduced folder's manifest and the results lm-eval 0.4.8 and
0.4.13 wrote for it, and an item folder's run under 0.4.9.2 (``--samples``, ``--log_samples``).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import types
from pathlib import Path

import pytest

import harness_ext as hx

HERE = Path(__file__).resolve().parent
FIX = HERE / "fixtures" / "lm_eval_versions"
ESTIMATE = HERE.parent / "harness_ext" / "methods" / "reduction" / "lm_eval_group_estimate.py"
FIELDS = {d["version"]: d for d in map(json.loads, (FIX / "fields.jsonl").read_text().splitlines())}


def _results(version: str) -> dict:
    [path] = (FIX / f"lm_eval_{version}").glob("results_*.json")
    return json.loads(path.read_text())


class _Group:
    """lm-eval 0.4.5-0.4.10's ``ConfigurableGroup`` as the evaluator sees it: ``config`` (a dict) and ``group_name``."""

    def __init__(self, name, alias, agg):
        self._config = types.SimpleNamespace(group=name, group_alias=alias)
        self.agg = agg

    @property
    def config(self):
        return {"group": self._config.group, "group_alias": self._config.group_alias, "aggregate_metric_list": self.agg}

    @property
    def group_name(self):
        return self._config.group

    @property
    def group_alias(self):
        return self._config.group_alias


def _old_lm_eval(monkeypatch):
    """Modules laid out as lm-eval 0.4.8's: no ``Group`` class, ``consolidate_group_results`` calling a group's
    aggregation as ``fn(values, sizes, weight_by_size)`` (evaluator_utils.py of 0.4.5 to 0.4.10)."""
    def consolidate_results(eval_tasks):
        return ({}, {"t": []}, {}, {}, {}, {})

    def consolidate_group_results(results, versions, task_dict, task_root=None, show_group_table=False,
                                  task_aggregation_list=None):
        lists = {}
        for group, tasks in task_dict.items():
            names = list(tasks)
            lists[group.group_name] = names
            for cfg in group.config["aggregate_metric_list"]:
                key = f"{cfg['metric']},none"
                values = [results[t][key] for t in names]
                results[group.group_name] = {key: cfg["aggregation"](values, [40] * len(values), cfg["weight_by_size"])}
        return results, versions, True, lists

    lm_eval = types.ModuleType("lm_eval")
    api, group = types.ModuleType("lm_eval.api"), types.ModuleType("lm_eval.api.group")  # no Group in it
    utils = types.ModuleType("lm_eval.evaluator_utils")
    utils.consolidate_group_results, utils.consolidate_results = consolidate_group_results, consolidate_results
    evaluator = types.ModuleType("lm_eval.evaluator")
    evaluator.consolidate_group_results, evaluator.consolidate_results = consolidate_group_results, consolidate_results
    lm_eval.api, lm_eval.evaluator, lm_eval.evaluator_utils, api.group = api, evaluator, utils, group
    for name, mod in (("lm_eval", lm_eval), ("lm_eval.api", api), ("lm_eval.api.group", group),
                      ("lm_eval.evaluator", evaluator), ("lm_eval.evaluator_utils", utils)):
        monkeypatch.setitem(sys.modules, name, mod)
    return evaluator


def _load_estimate(folder: Path):
    shutil.copy(ESTIMATE, folder / "harness_ext_estimate.py")
    spec = importlib.util.spec_from_file_location("harness_ext_estimate", folder / "harness_ext_estimate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lm_eval_0_4_8_calls_the_aggregation_with_values_and_sizes_and_gets_their_mean(tmp_path):
    """lm-eval 0.4.5 to 0.4.10 call it ``fn(values, sizes, weight_by_size)``: the run used to stop there, after every
    request, with ``TypeError: estimate() missing 1 required positional argument: 'metric'`` and no results saved."""
    shutil.copy(FIX / "manifest.json", tmp_path / "manifest.json")
    module = _load_estimate(tmp_path)
    assert module.estimate([0.7, 0.8], [40, 40], False) == pytest.approx(0.75)
    assert module.estimate([0.5, 1.0], [10, 30], True) == pytest.approx(0.875)


def test_on_an_old_lm_eval_the_groups_row_becomes_the_estimate_0_4_13_prints(tmp_path, monkeypatch):
    """The wrapped ``consolidate_group_results`` turns 0.4.8's plain row into the estimate lm-eval 0.4.13 printed for
    the same folder and scores (live: both printed 0.6747, 0.6050-0.7380)."""
    evaluator = _old_lm_eval(monkeypatch)
    shutil.copy(FIX / "manifest.json", tmp_path / "manifest.json")
    module = _load_estimate(tmp_path)
    assert evaluator.consolidate_group_results.harness_ext_wrapped
    recorded = _results("0.4.8")["results"]
    tasks = sorted(t for t in recorded if t != "harness_ext_reduced")
    group = _Group("harness_ext_reduced", "lm_eval (estimated from 4 of 8)",
                   [{"metric": "acc", "aggregation": module.estimate, "weight_by_size": False, "filter_list": ["none"]}])
    results = {t: {"acc,none": recorded[t]["acc,none"]} for t in tasks}
    out = evaluator.consolidate_group_results(results, {}, {group: {t: None for t in tasks}})
    row, want = out[0]["harness_ext_reduced"], _results("0.4.13")["results"]["harness_ext_reduced"]
    for key in ("acc,estimate", "acc_lower,estimate", "acc_upper,estimate"):
        assert row[key] == pytest.approx(want[key], abs=1e-9)
        assert row[key] == pytest.approx(recorded["harness_ext_reduced"][key], abs=1e-9)
    assert "acc,none" not in row and group.group_alias == "lm_eval (estimated from 4 of 8)"


def test_on_an_old_lm_eval_a_row_that_is_not_the_estimate_says_so_in_the_printed_alias(tmp_path, monkeypatch):
    """Those releases print the group's configured alias, not the row's: it is relabelled there too."""
    evaluator = _old_lm_eval(monkeypatch)
    manifest = json.loads((FIX / "manifest.json").read_text())
    del manifest["training_matrix"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    module = _load_estimate(tmp_path)
    group = _Group("g", "lm_eval (estimated from 4 of 8)",
                   [{"metric": "acc", "aggregation": module.estimate, "weight_by_size": False, "filter_list": ["none"]}])
    evaluator.consolidate_group_results({"t_alpha": {"acc,none": 0.5}}, {}, {group: {"t_alpha": None}})
    assert group.group_alias == "lm_eval (estimated from 4 of 8): subset mean, not the estimate (ValueError)"


def test_task_yamls_leave_out_the_off_values_older_releases_refuse(tmp_path):
    """lm-eval 0.4.13 records ``unsafe_code: false`` for every task; 0.4.5 stopped at ``TypeError: TaskConfig.__init__()
    got an unexpected keyword argument 'unsafe_code'``. Left out at its off value, named when on."""
    import yaml

    from harness_ext.store.task_yaml_safety import task_yaml_text

    config = _results("0.4.13")["configs"]["t_alpha"]
    assert config["unsafe_code"] is False
    text = task_yaml_text("t_alpha", {"config": config, "source": "results.json", "origin": "results"}, tmp_path)
    keys = set(yaml.safe_load(text))
    assert keys <= set(FIELDS["0.4.5"]["task_config_fields"]), keys - set(FIELDS["0.4.5"]["task_config_fields"])
    assert "Needs an lm-eval" not in text
    text = task_yaml_text("t_alpha", {"config": {**config, "unsafe_code": True}, "origin": "results"}, tmp_path)
    assert yaml.safe_load(text)["unsafe_code"] is True
    assert "# Needs an lm-eval newer than 0.4.5: 0.4.5 and older refuse the key unsafe_code." in text


def test_the_recorded_fields_bear_out_the_versions_the_folder_states():
    from harness_ext.methods.reduction.harness_names import LM_EVAL_MIN
    from harness_ext.store.task_yaml_safety import LATER_KEYS

    assert FIELDS["0.4.2"]["group_config_fields"] is None  # no aggregate_metric_list: the group is refused
    assert "aggregate_metric_list" in FIELDS[LM_EVAL_MIN]["group_config_fields"]
    for key, (_, refused_by) in LATER_KEYS.items():
        assert key not in FIELDS[refused_by]["task_config_fields"]
        assert key in FIELDS["0.4.13"]["task_config_fields"]
    assert [v for v, d in FIELDS.items() if d["group_class"]] == ["0.4.13"]


def test_the_group_header_and_the_warning_name_the_releases_needed():
    from harness_ext.methods.reduction.lm_eval_group import version_notes
    from harness_ext.methods.reduction.manifest import other_data_warnings

    sources = {"arc_easy": {"origin": "results", "other_data": (("json", None), ("allenai/ai2_arc", "ARC-Easy"))}}
    notes = "\n".join(version_notes(sources, ["arc_easy", "t_alpha"], True, True))
    assert "Needs lm-eval 0.4.5 or later: 0.4.2 refuses the group's aggregate_metric_list" in notes
    assert "--samples needs lm-eval 0.4.9.2 or later: 0.4.8 and older stop at 'unrecognized arguments" in notes
    assert '"arc_easy": defined here under the name of lm-eval\'s own; lm-eval 0.4.8 and older run their own' in notes
    assert version_notes({}, ["t_alpha"], False, False) == []
    [warning] = other_data_warnings(sources)
    assert "lm-eval 0.4.8 and older keep their own task, without a word" in warning
    assert "run this folder with lm-eval 0.4.9.2 or later" in warning


def test_predict_reads_the_results_of_lm_eval_0_4_8(tmp_path):
    shutil.copy(FIX / "manifest.json", tmp_path / "manifest.json")
    [agg] = hx.predict(str(tmp_path), str(FIX / "lm_eval_0.4.8")).aggregate.to_dict("records")
    row = _results("0.4.8")["results"]["harness_ext_reduced"]
    assert (agg["aggregate"], agg["lower"], agg["upper"]) == pytest.approx(
        (row["acc,estimate"], row["acc_lower,estimate"], row["acc_upper,estimate"]), abs=1e-9)


def test_predict_reads_the_samples_lm_eval_0_4_9_2_logged_for_an_item_folder():
    run = FIX / "lm_eval_0.4.9.2_items" / "run"
    [agg] = hx.predict(str(FIX / "lm_eval_0.4.9.2_items"), str(run)).aggregate.to_dict("records")
    [results] = run.glob("results_*.json")
    row = json.loads(results.read_text())["results"]["harness_ext_reduced"]
    assert agg["aggregate"] == pytest.approx(row["acc,estimate"], abs=1e-9)
