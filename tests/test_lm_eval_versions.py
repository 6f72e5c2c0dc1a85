"""The written lm-eval folder on older lm-eval releases, from outputs recorded with them (no lm-eval needed here).

tests/fixtures/lm_eval_versions holds what lm-eval 0.4.2 to 0.4.13 recorded (see its PROVENANCE.md): the fields each
release's ``TaskConfig`` and ``GroupConfig`` accept, a reduced folder's manifest and the results lm-eval 0.4.8 and
0.4.13 wrote for it, and an item folder's runs under 0.4.9, 0.4.9.1 and 0.4.9.2 (``--samples``, ``--log_samples``;
0.4.9's of a copy of the group without its ``arc_easy``, which that release replaces by its own). The release a folder
needs is recorded in its manifest (``lm_eval_release``) and checked by ``predict`` against the release a results file
names (copies of the recorded files with ``lm_eval_version`` edited).
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
    """lm-eval 0.4.4-0.4.10's ``ConfigurableGroup`` as the evaluator sees it: ``config`` (a dict) and ``group_name``."""

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
    aggregation as ``fn(values, sizes, weight_by_size)`` (evaluator_utils.py of 0.4.4 to 0.4.10)."""
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
    """lm-eval 0.4.4 to 0.4.10 call it ``fn(values, sizes, weight_by_size)``: the run used to stop there, after every
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


def _newer(a: str, b: str) -> bool:
    from harness_ext.methods.reduction.lm_eval_release import older

    return older(b, a)


def test_the_recorded_fields_bear_out_the_versions_the_folder_states():
    from harness_ext.methods.reduction.harness_names import LM_EVAL_MIN
    from harness_ext.store.task_yaml_safety import LATER_KEYS

    assert FIELDS["0.4.2"]["group_config_fields"] is None  # no aggregate_metric_list: the group is refused
    assert FIELDS["0.4.3"]["group_config_fields"] is None  # the same, run live: TaskConfig refused the key
    assert "aggregate_metric_list" in FIELDS[LM_EVAL_MIN]["group_config_fields"]
    for key, (_, refused_by) in LATER_KEYS.items():
        assert key not in FIELDS[refused_by]["task_config_fields"]
        # the newest recorded release refusing it
        assert all(key in d["task_config_fields"] for v, d in FIELDS.items() if _newer(v, refused_by)), key
        assert key in FIELDS["0.4.13"]["task_config_fields"]
    assert [v for v, d in FIELDS.items() if d["group_class"]] == ["0.4.13"]


def test_the_group_header_and_the_warning_name_the_releases_needed():
    from harness_ext.methods.reduction.lm_eval_group import version_notes
    from harness_ext.methods.reduction.manifest import other_data_warnings

    sources = {"arc_easy": {"origin": "results", "other_data": (("json", None), ("allenai/ai2_arc", "ARC-Easy"))}}
    notes = "\n".join(version_notes(sources, ["arc_easy", "t_alpha"], True, True))
    assert "Needs lm-eval 0.4.4 or later: 0.4.3 and older refuse the group's aggregate_metric_list" in notes
    assert "--samples needs lm-eval 0.4.9 or later: 0.4.8 and older stop at 'unrecognized arguments" in notes
    assert '"arc_easy": defined here under the name of lm-eval\'s own; lm-eval 0.4.9 and older run their own' in notes
    assert "use lm-eval 0.4.9.1 or later" in notes
    assert version_notes({}, ["t_alpha"], False, False) == []
    [warning] = other_data_warnings(sources)
    assert "lm-eval 0.4.9 and older keep their own task, without a word" in warning
    assert "which lm-eval 0.4.9.1 and later run in place of their own" in warning
    assert "run this folder with lm-eval 0.4.9.1 or later" in warning


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


# The release a folder needs: recorded in its manifest (lm_eval_release) and checked against the runs predict reads.

def _release_copy(tmp_path, src: Path, version=None, **config) -> Path:
    """A copy of the recorded run folder ``src`` whose results file names ``version`` (None: the key removed) and
    whose task configurations get ``config`` (``{task: {key: value}}``)."""
    out = tmp_path / src.name
    shutil.copytree(src, out)
    [path] = out.glob("results_*.json")
    doc = json.loads(path.read_text())
    if version is None:
        doc.pop("lm_eval_version", None)
    else:
        doc["lm_eval_version"] = version
    for task, values in config.items():
        doc["configs"][task].update(values)
    path.write_text(json.dumps(doc))
    return out


def _release_warnings(pred) -> list:
    return [w for w in pred.warnings if "this folder needs" in w]


def test_the_manifest_records_the_release_the_folder_needs_and_why():
    from harness_ext.methods.reduction.lm_eval_release import folder_needs
    from harness_ext.methods.reduction.manifest import validate_manifest
    from harness_ext.methods.reduction.item_manifest import validate_item_manifest

    manifest = json.loads((FIX / "manifest.json").read_text())
    need = folder_needs(manifest)
    assert need == {"minimum": "0.4.4", "needs": [{"release": "0.4.4", "for": "group", "reason": need["needs"][0]["reason"]}]}
    assert "aggregate_metric_list" in need["needs"][0]["reason"]
    validate_manifest({**manifest, "lm_eval_release": need})
    items = json.loads((FIX / "lm_eval_0.4.9.2_items" / "manifest.json").read_text())
    need = folder_needs(items)
    assert need["minimum"] == "0.4.9.1"
    assert [(n["for"], n["release"]) for n in need["needs"]] == [("group", "0.4.4"), ("samples", "0.4.9"),
                                                                 ("own_name", "0.4.9.1")]
    assert need["needs"][2]["tasks"] == ["arc_easy"]
    validate_item_manifest({**items, "lm_eval_release": need})


def test_a_manifest_without_the_field_loads_and_a_wrong_one_is_refused_naming_it(tmp_path):
    from harness_ext.errors import HarnessExtError
    from harness_ext.methods.reduction.manifest import load_manifest

    manifest = json.loads((FIX / "manifest.json").read_text())
    assert "lm_eval_release" not in manifest  # written before the field
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert "lm_eval_release" not in load_manifest(tmp_path)
    bad = {"minimum": "0.4.5", "needs": [{"release": "0.4.9.2", "for": "samples", "reason": "r"}]}
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "lm_eval_release": bad}))
    with pytest.raises(HarnessExtError, match="lm_eval_release: minimum '0.4.5' is not the highest"):
        load_manifest(tmp_path)
    items = json.loads((FIX / "lm_eval_0.4.9.2_items" / "manifest.json").read_text())
    (tmp_path / "manifest.json").write_text(json.dumps({**items, "lm_eval_release": {"minimum": "soon", "needs": []}}))
    with pytest.raises(HarnessExtError, match="valid harness-ext item manifest: lm_eval_release"):
        load_manifest(tmp_path)


def test_reduce_writes_the_field_and_the_same_inputs_give_the_same_bytes(tmp_path):
    import harness_ext.store.ingest as ingest_mod
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    db = str(tmp_path / "s.duckdb")
    with Store.open(db) as store:
        ingest_paths(store, sorted(ingest_mod.bundled_data_path().glob("pythia-160m*")), show_progress=False)
    texts = []
    for out in ("a", "b"):
        res = hx.reduce(db, benchmark="lm_eval", budget="3", n_random=20, n_random_subsets=10, seed=0)
        res.write(tmp_path / out)
        texts.append((tmp_path / out / "manifest.json").read_bytes())
    assert texts[0] == texts[1]
    field = json.loads(texts[0])["lm_eval_release"]
    assert field["minimum"] == "0.4.4" and [n["for"] for n in field["needs"]] == ["group"]


def test_predict_warns_on_a_results_file_of_an_older_release_and_is_silent_otherwise(tmp_path):
    shutil.copy(FIX / "manifest.json", tmp_path / "manifest.json")
    for version in ("0.4.13", None, "No package metadata was found for lm_eval"):  # new enough, or no release named
        run = _release_copy(tmp_path / str(version).replace(" ", "_"), FIX / "lm_eval_0.4.13", version)
        assert _release_warnings(hx.predict(str(tmp_path), str(run))) == []
    assert _release_warnings(hx.predict(str(tmp_path), str(FIX / "lm_eval_0.4.8"))) == []  # 0.4.8 names none
    run = _release_copy(tmp_path / "old", FIX / "lm_eval_0.4.13", "0.4.3")
    [warning] = _release_warnings(hx.predict(str(tmp_path), str(run)))
    assert warning.startswith(str(next(run.glob("results_*.json"))) + ": written by lm-eval 0.4.3, older than the "
                              "0.4.4 this folder needs: the group's estimate needs 0.4.4")


def _own_name_manifest(folder: Path) -> None:
    """The recorded manifest with its task t_alpha marked as defined under the name of one of lm-eval's own."""
    manifest = json.loads((FIX / "manifest.json").read_text())
    manifest["lm_eval_tasks"]["t_alpha"]["other_data"] = [["json", None], ["allenai/ai2_arc", "ARC-Easy"]]
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_a_task_an_older_release_ran_under_lm_evals_own_name_is_left_out_and_predicted(tmp_path):
    _own_name_manifest(tmp_path)
    ran_own = _release_copy(tmp_path / "own", FIX / "lm_eval_0.4.13", "0.4.9",
                            t_alpha={"dataset_path": "allenai/ai2_arc", "dataset_name": "ARC-Easy"})
    pred = hx.predict(str(tmp_path), str(ran_own))
    [warning] = _release_warnings(pred)
    assert "written by lm-eval 0.4.9, older than the 0.4.9.1 this folder needs" in warning
    assert '"t_alpha" left out, another task\'s scores on other documents' in warning
    assert any(w.startswith("standin/m99: no result for t_alpha; predicted from the other 3") for w in pred.warnings)
    # The run's own configuration reads the folder's data: the folder's task ran, its score is kept (and said).
    ran_folders = _release_copy(tmp_path / "folders", FIX / "lm_eval_0.4.13", "0.4.9")
    pred = hx.predict(str(tmp_path), str(ran_folders))
    [warning] = _release_warnings(pred)
    assert '"t_alpha" kept: the run\'s own configuration reads the folder\'s data' in warning
    assert not any("no result for t_alpha" in w for w in pred.warnings)
    # Run by 0.4.9.1 (the first release that runs the folder's task, seen live): nothing said.
    assert _release_warnings(hx.predict(str(tmp_path), str(_release_copy(tmp_path / "new", FIX / "lm_eval_0.4.13",
                                                                         "0.4.9.1")))) == []


def test_item_predict_checks_the_results_file_beside_the_samples(tmp_path):
    items = FIX / "lm_eval_0.4.9.2_items"
    shutil.copy(items / "manifest.json", tmp_path / "manifest.json")
    assert _release_warnings(hx.predict(str(tmp_path), str(items / "run"))) == []
    run = _release_copy(tmp_path / "own", items / "run", "0.4.9",
                        arc_easy={"dataset_path": "allenai/ai2_arc", "dataset_name": "ARC-Easy"})
    pred = hx.predict(str(tmp_path), str(run))
    [warning] = _release_warnings(pred)
    assert "older than the 0.4.9.1 this folder needs" in warning and '"arc_easy" left out' in warning
    assert "--samples" not in warning  # 0.4.9 has it (run live)
    assert "no benchmark estimate without them" in warning
    [agg] = pred.aggregate.to_dict("records")
    assert agg["aggregate"] != agg["aggregate"]  # NaN: the estimate needs every task's items


def test_a_folder_whose_estimate_file_predates_the_old_releases_call_is_said_once(tmp_path):
    from harness_ext.methods.reduction.lm_eval_release import ESTIMATE_MARK, old_estimate_note

    assert ESTIMATE_MARK in ESTIMATE.read_text()  # every file written now answers the call
    shutil.copy(FIX / "manifest.json", tmp_path / "manifest.json")
    shutil.copy(ESTIMATE, tmp_path / "harness_ext_estimate.py")
    assert old_estimate_note(tmp_path) is None
    assert not any("write the folder again" in w for w in hx.predict(str(tmp_path), str(FIX / "lm_eval_0.4.13")).warnings)
    old = "\n".join(line for line in ESTIMATE.read_text().splitlines() if ESTIMATE_MARK not in line)
    (tmp_path / "harness_ext_estimate.py").write_text(old)
    said = [w for w in hx.predict(str(tmp_path / "manifest.json"), str(FIX / "lm_eval_0.4.13")).warnings
            if "write the folder again" in w]
    assert len(said) == 1 and "lm-eval 0.4.4-0.4.10" in said[0]
    items = FIX / "lm_eval_0.4.9.2_items"
    shutil.copy(items / "manifest.json", tmp_path / "manifest.json")
    said = [w for w in hx.predict(str(tmp_path), str(items / "run")).warnings if "write the folder again" in w]
    assert len(said) == 1


def test_the_item_folder_run_live_on_lm_eval_0_4_9_and_0_4_9_1_is_read_without_a_release_warning():
    """lm-eval 0.4.9 ran the item folder's drawn items with ``--samples`` (a copy of the group without ``arc_easy``,
    its own task of that name needing the Hub); 0.4.9.1 ran the whole folder, its ``arc_easy`` the folder's."""
    manifest = FIX / "lm_eval_0.4.9.2_items"
    old, new = FIX / "lm_eval_0.4.9_items" / "run", FIX / "lm_eval_0.4.9.1_items" / "run"
    [doc_old] = [json.loads(p.read_text()) for p in old.glob("results_*.json")]
    [doc_new] = [json.loads(p.read_text()) for p in new.glob("results_*.json")]
    assert (doc_old["lm_eval_version"], doc_new["lm_eval_version"]) == ("0.4.9", "0.4.9.1")
    drawn = json.loads((manifest / "manifest.json").read_text())["tasks"]
    for run, doc in ((old, doc_old), (new, doc_new)):
        for task in doc["results"]:
            if task == "harness_ext_reduced":
                continue
            [log] = run.glob(f"samples_{task}_*.jsonl")
            ran = sorted(json.loads(line)["doc_id"] for line in log.read_text().splitlines())
            assert ran == [i for lo, hi in drawn[task]["sample"] for i in range(lo, hi)]  # only the drawn items ran
    assert "arc_easy" not in doc_old["results"]
    assert doc_new["configs"]["arc_easy"]["dataset_path"] == "json"  # the folder's task, not lm-eval's ARC-Easy
    pred = hx.predict(str(manifest), str(old))
    assert _release_warnings(pred) == []  # no arc_easy scored: nothing of lm-eval's own to leave out
    assert any("no full-benchmark estimate" in w and "arc_easy" in w for w in pred.warnings)
    pred = hx.predict(str(manifest), str(new))
    assert _release_warnings(pred) == []
    [agg] = pred.aggregate.to_dict("records")
    assert agg["aggregate"] == pytest.approx(doc_new["results"]["harness_ext_reduced"]["acc,estimate"], abs=1e-9)


def test_a_folder_that_recorded_an_older_need_is_checked_against_the_release_known_now(tmp_path):
    """A folder written when 0.4.9.2 was the oldest release seen running ``--samples`` and the folder's own
    ``arc_easy`` recorded that release; 0.4.9.1's run of it gets no warning, an edited 0.4.9 copy the own-name one."""
    from harness_ext.methods.reduction.lm_eval_release import folder_needs

    manifest = json.loads((FIX / "lm_eval_0.4.9.2_items" / "manifest.json").read_text())
    recorded = folder_needs(manifest)
    for need in recorded["needs"]:
        need["release"] = "0.4.9.2" if need["for"] != "group" else need["release"]
    recorded["minimum"] = "0.4.9.2"
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "lm_eval_release": recorded}))
    assert _release_warnings(hx.predict(str(tmp_path), str(FIX / "lm_eval_0.4.9.1_items" / "run"))) == []
    run = _release_copy(tmp_path / "own", FIX / "lm_eval_0.4.9.1_items" / "run", "0.4.9",
                        arc_easy={"dataset_path": "allenai/ai2_arc", "dataset_name": "ARC-Easy"})
    [warning] = _release_warnings(hx.predict(str(tmp_path), str(run)))
    assert "older than the 0.4.9.1 this folder needs" in warning and "--samples" not in warning
