"""Harness files for every subset (issue 15 item 10) and HELM's MMLU and RAFT run entries (issue 16 item 9).

Real format: the HELM Classic matrix (Every Eval Ever, ../shared/data) and HELM Lite's scenario titles.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import load_group_yaml

from harness_ext.methods.reduction.harness_names import (EQUIVALENTS, HELM_MMLU_SUBJECTS, RAFT_SUBSETS, helm_description_list,
                                       lm_eval_task_list, no_equivalent_warnings)
from harness_ext.methods.reduction.manifest import build_manifest
from harness_ext.plugins.manifest_writers import write_helm_conf, write_lm_eval_yaml


def _entries(conf: Path) -> list:
    return re.findall(r'description: "([^"]+)"', conf.read_text())


def _subset(manifest, names):
    by = {d["name"]: d for d in manifest["datasets"]}
    return [{"step": i + 1, "name": n, "benchmark": by[n]["benchmark"], "metric": by[n]["metric"],
             "task": by[n]["task"], "num_fewshot": by[n]["num_fewshot"], "coverage": 0.9} for i, n in enumerate(names)]


@pytest.mark.slow
def test_helm_classic_subset_keeps_mmlu_and_all_raft_subsets(helm_classic_matrix, tmp_path):
    m = build_manifest(helm_classic_matrix, budget="3", n_random=20)
    m["subset"] = _subset(m, ["MMLU", "RAFT", "NarrativeQA", "HellaSwag"])
    [conf] = write_helm_conf(m, tmp_path)
    entries = _entries(conf)
    # HELM Classic reductions used to drop MMLU; RAFT was one subset of eleven.
    assert [e for e in entries if e.startswith("mmlu:")] == [
        f"mmlu:subject={s},model=text,data_augmentation=canonical" for s in HELM_MMLU_SUBJECTS]
    assert [e for e in entries if e.startswith("raft:")] == [
        f"raft:subset={s},model=text,data_augmentation=canonical" for s in RAFT_SUBSETS]
    assert "narrative_qa:model=text,data_augmentation=canonical" in entries and len(entries) == 5 + 11 + 2
    assert "No HELM run entry" not in conf.read_text()
    yml = write_lm_eval_yaml(m, tmp_path)[0]  # the group (then the estimate's file, with one metric)
    doc = load_group_yaml(yml)
    listed = [t["task"] if isinstance(t, dict) else t for t in doc["task"]]
    assert listed == [f"mmlu_{s}" for s in HELM_MMLU_SUBJECTS] + ["hellaswag"]
    text = yml.read_text()
    assert "#   RAFT (helm_classic)" in text and "#   NarrativeQA (helm_classic)" in text
    warnings = no_equivalent_warnings(m["subset"])
    assert len(warnings) == 1 and "lm-eval task" in warnings[0] and "RAFT" in warnings[0]


def test_helm_lite_subset_mmlu_narrativeqa_is_never_an_empty_task_list(tmp_path):
    """The issue's case: a HELM Lite subset {MMLU, NarrativeQA} gave 'task: []' and '# No HELM run entry known for: MMLU'."""
    m = {"group_name": "lite", "tool": {"version": "x"}, "datasets": [], "warnings": [], "subset": [
        {"step": 1, "name": "MMLU", "benchmark": "helm_lite", "metric": "EM", "task": None, "num_fewshot": None},
        {"step": 2, "name": "NarrativeQA", "benchmark": "helm_lite", "metric": "F1", "task": None, "num_fewshot": None}]}
    yml = write_lm_eval_yaml(m, tmp_path)[0]  # the group (then the estimate's file, with one metric)
    doc = load_group_yaml(yml)
    assert doc["task"] == [f"mmlu_{s}" for s in HELM_MMLU_SUBJECTS] and "NarrativeQA (helm_lite)" in yml.read_text()
    entries = _entries(write_helm_conf(m, tmp_path)[0])
    assert entries == [f"mmlu:subject={s},method=multiple_choice_joint,model=text_code" for s in HELM_MMLU_SUBJECTS] \
        + ["narrative_qa:model=text_code"]
    [w] = no_equivalent_warnings(m["subset"])
    assert "NarrativeQA" in w and "MMLU" not in w.split("(")[1].split(")")[0] and "summary" in w
    # Only datasets without an lm-eval task: a comment saying so, never 'task: []'.
    m["subset"] = m["subset"][1:]
    [yml] = [p for p in write_lm_eval_yaml(m, tmp_path) if p.suffix == ".yaml"]
    assert yaml.safe_load(yml.read_text()) is None and "no group to run" in yml.read_text()
    assert "Run: lm_eval" not in yml.read_text() and "NarrativeQA (helm_lite)" in yml.read_text()


@pytest.mark.parametrize("name,bench,lm,helm", [
    ("GSM8K", "helm_lite", ["gsm8k"], ["gsm:model=text_code"]),
    ("MedQA", "helm_lite", ["medqa_4options"], ["med_qa:model=text_code"]),
    ("NaturalQuestions (closed-book)", "helm_lite", ["nq_open"], ["natural_qa:mode=closedbook,model=text_code"]),
    ("gsm8k", "lm_eval", ["gsm8k"], ["gsm:model=text_code"]),
    ("hellaswag", "lm_eval", ["hellaswag"], [
        "commonsense:model=full_functionality_text,dataset=hellaswag,method=multiple_choice_separate_original,"
        "data_augmentation=canonical"]),
    ("arc_challenge", "lm_eval", ["arc_challenge"], []),
    ("mmlu_pro", "mmlu_pro_240829_knowledge", ["mmlu_pro"], []),
])
def test_mapping_both_ways(name, bench, lm, helm):
    e = {"name": name, "benchmark": bench, "task": name if bench == "lm_eval" else None}
    assert lm_eval_task_list(e) == lm and helm_description_list(e) == helm


def test_wmt_math_legalbench_expand_to_helm_lites_entries():
    lite = lambda n: {"name": n, "benchmark": "helm_lite"}  # noqa: E731
    assert len(helm_description_list(lite("WMT 2014"))) == 5 and lm_eval_task_list(lite("WMT 2014")) == ["wmt14-fr-en"]
    assert len(helm_description_list(lite("MATH"))) == 7 and len(lm_eval_task_list(lite("MATH"))) == 7
    assert lm_eval_task_list(lite("LegalBench"))[0] == "legalbench_abercrombie"


def test_every_mapped_lm_eval_task_exists_in_lm_eval():
    lm_eval = pytest.importorskip("lm_eval")
    root = Path(lm_eval.__file__).parent / "tasks"
    known = set()
    for p in root.rglob("*.yaml"):
        for m in re.finditer(r"^[\"']?(?:task|group)[\"']?:\s*[\"']?([\w.\-]+)[\"']?\s*$", p.read_text(errors="replace"), re.M):
            known.add(m.group(1))
    wanted = {t for e in EQUIVALENTS for t in e.lm_eval} | {"mmlu"}
    assert wanted <= known, sorted(wanted - known)


@pytest.mark.slow
def test_generated_run_entries_are_helm_run_specs_offline(helm_classic_matrix, tmp_path):
    """What runs without HELM: the conf parses as HOCON (HELM's reader, pyhocon) into entries of description and
    priority only, and every description parses as a HELM run spec whose scenario's main metric is known."""
    pyhocon = pytest.importorskip("pyhocon")
    from harness_ext.adapters.helm import MAIN_METRICS, parse_run_name

    m = build_manifest(helm_classic_matrix, budget="3", n_random=20)
    m["subset"] = _subset(m, list(helm_classic_matrix.columns))
    [conf] = write_helm_conf(m, tmp_path)
    entries = pyhocon.ConfigFactory.parse_file(str(conf))["entries"]
    # 14 scenarios: MMLU as 5 subjects, RAFT as 11 subsets, CivilComments as 9 demographic runs
    assert len(entries) == 14 - 3 + 5 + 11 + 9
    for e in entries:
        assert set(e.keys()) == {"description", "priority"}
        run = parse_run_name(e["description"])
        assert run.arg_dict["model"] in ("text", "full_functionality_text") and run.group in MAIN_METRICS, run


def test_generated_run_entries_expand_with_helm(helm_classic_matrix, tmp_path, monkeypatch):
    """With crfm-helm installed (not a dependency: it pulls torch, CUDA and spaCy), HELM's own read_run_entries
    reads the conf and run_entries_to_run_specs expands every entry for a model, offline."""
    run_entry = pytest.importorskip("helm.benchmark.presentation.run_entry")
    helm_run = pytest.importorskip("helm.benchmark.run")
    m = build_manifest(helm_classic_matrix, budget="3", n_random=20)
    monkeypatch.chdir(tmp_path)  # HELM's run specs write a benchmark_output folder into the working directory
    # RAFT's run spec downloads its prompt settings, so it reads here but expands only online.
    m["subset"] = _subset(m, ["MMLU", "RAFT", "BoolQ", "IMDB"])
    [conf] = write_helm_conf(m, tmp_path)
    entries = run_entry.read_run_entries([str(conf)]).entries
    assert len(entries) == 5 + 11 + 1 + 1
    entries = [e for e in entries if not e.description.startswith("raft:")]
    specs = helm_run.run_entries_to_run_specs(entries, max_eval_instances=10, num_train_trials=1,
                                              models_to_run=["openai/gpt2"])
    assert len(specs) >= len(entries)


def test_datasets_no_harness_runs_get_one_warning_not_two():
    """A leaderboard subset (benchbench's LiveBench columns) has neither an lm-eval task nor a HELM run entry:
    reduce printed the same list twice, once per harness file, on nearly every leaderboard or TSC reduction."""
    subset = [{"step": 1, "name": "LB_Mathematics", "benchmark": "livebench_240829_holistic", "task": None},
              {"step": 2, "name": "LB_Reasoning", "benchmark": "livebench_240829_holistic", "task": None},
              {"step": 3, "name": "RAFT", "benchmark": "helm_classic", "task": None}]
    both, lm_only = no_equivalent_warnings(subset)
    assert both.startswith("no lm-eval task or HELM run entry is known for 2 of the 3 subset datasets "
                           "(LB_Mathematics, LB_Reasoning)") and "the lm-eval YAML and the HELM conf list them" in both
    assert lm_only.startswith("no lm-eval task is known for 1 of the 3") and "RAFT" in lm_only
