"""Built-in manifest writers: JSON, lm-evaluation-harness group YAML, HELM run entries, task list.

Task naming: lm-eval files use the harness's own v0.4 task names (MMLU subjects
as ``mmlu_<subject>``, whatever harness produced the scores); HELM files use
run-entry descriptions (``mmlu:subject=<s>,model=text`` and the HELM Classic
core-scenario descriptions below). A dataset a format cannot express is left
out with a comment naming it, never silently.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

import yaml

from harness_ext.benchmarks import MMLU_BENCHMARK
from harness_ext.hookspecs import hookimpl
from harness_ext.safe_output import check_group_name, comment, hocon_string, list_line, quoted, yaml_text
from harness_ext.types import ManifestWriter

#: HELM Classic scenario titles (as in helm-summarize tables / Every Eval Ever) -> run-entry description.
#: From crfm-helm's run_entries_core_scenarios conf (v0.4.0); MMLU is expanded per subject elsewhere.
HELM_CLASSIC_DESCRIPTIONS = {
    "BoolQ": "boolq:model=text,data_augmentation=canonical",
    "NarrativeQA": "narrative_qa:model=text,data_augmentation=canonical",
    "NaturalQuestions (open-book)": "natural_qa:model=text,mode=openbook_longans,data_augmentation=canonical",
    "NaturalQuestions (closed-book)": "natural_qa:model=text,mode=closedbook,data_augmentation=canonical",
    "QuAC": "quac:model=text,data_augmentation=canonical",
    "HellaSwag": "commonsense:model=full_functionality_text,dataset=hellaswag,method=multiple_choice_separate_original,data_augmentation=canonical",
    "OpenbookQA": "commonsense:model=full_functionality_text,dataset=openbookqa,method=multiple_choice_separate_calibrated,data_augmentation=canonical",
    "TruthfulQA": "truthful_qa:model=text,task=mc_single,data_augmentation=canonical",
    "MS MARCO (TREC)": "msmarco:model=full_functionality_text,track=trec,valid_topk=30",
    "MS MARCO (regular)": "msmarco:model=full_functionality_text,track=regular,valid_topk=30",
    "CNN/DailyMail": "summarization_cnndm:model=text,temperature=0.3,device=cpu",
    "XSUM": "summarization_xsum_sampled:model=text,temperature=0.3,device=cpu",
    "IMDB": "imdb:model=text,data_augmentation=canonical",
    "CivilComments": "civil_comments:model=text,demographic=all,data_augmentation=canonical",
    "RAFT": "raft:subset=ade_corpus_v2,model=text,data_augmentation=canonical",
}


def lm_eval_task(entry: dict) -> Optional[str]:
    """The lm-eval (v0.4) task name of a manifest subset entry, or None."""
    if entry.get("benchmark") == MMLU_BENCHMARK:
        return f"mmlu_{entry['name']}"
    if entry.get("benchmark") == "lm_eval":
        return entry.get("task") or entry["name"]
    return None


def helm_description(entry: dict) -> Optional[str]:
    """The HELM run-entry description of a manifest subset entry, or None."""
    bench, name = entry.get("benchmark"), entry["name"]
    if bench == MMLU_BENCHMARK:
        return f"mmlu:subject={name},model=text,data_augmentation=canonical"
    if bench in ("helm_classic", "helm_lite") and name in HELM_CLASSIC_DESCRIPTIONS:
        return HELM_CLASSIC_DESCRIPTIONS[name]
    if bench == "helm" and ":" in name:  # datasets from HELM run directories are already run-spec names
        return name if "model=" in name else f"{name},model=text"
    return None


def _stem(manifest) -> str:
    return check_group_name(manifest.get("group_name") or "harness_ext_reduced")


def write_json(manifest: dict, out_dir: Path) -> list:
    path = Path(out_dir) / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return [path]


def _task_file_stem(task: str, taken: set) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", task).lstrip(".-")[:150] or "task"  # a safe file name (safe_output)
    while stem in taken:
        stem += "_"
    taken.add(stem)
    return stem


def write_lm_eval_yaml(manifest: dict, out_dir: Path) -> list:
    """``<group>.yaml``, a group config ``lm_eval --include_path DIR --tasks <group>`` runs, and the task YAMLs it needs.

    A subset task built into lm-eval is named and lm-eval resolves it; one whose configuration
    ``reduce`` kept from the ingested results files is written as ``<task>.yaml`` beside the group
    (``manifest["lm_eval_tasks"]``); any other is listed in the group's header with what the folder still needs.
    """
    from harness_ext.lm_eval_tasks import task_yaml_doc

    out_dir = Path(out_dir)
    sources = manifest.get("lm_eval_tasks") or {}
    group = _stem(manifest)
    tasks, skipped, written, unknown = [], [], [], []
    taken = {group}
    for entry in manifest["subset"]:
        name = lm_eval_task(entry)
        if name is None:
            skipped.append(entry["name"])
            continue
        shots = entry.get("num_fewshot")
        tasks.append({"task": name, "num_fewshot": int(shots)} if isinstance(shots, int) and shots >= 0 else name)
        src = sources.get(name) or {}
        if src.get("origin") == "results":
            path = out_dir / f"{_task_file_stem(name, taken)}.yaml"
            head = (comment(f"Task {quoted(name)}, rebuilt by harness-ext from the configuration lm-eval recorded in") + "\n"
                    + comment(f"{src.get('source')}" + (f" (defined in {src['config_source']})" if src.get("config_source") else ""))
                    + "\n")
            path.write_text(head + yaml.safe_dump(task_yaml_doc(name, src["config"]), sort_keys=False, allow_unicode=True))
            written.append(path)
        elif src.get("origin") == "unknown":
            unknown.append((name, src))
    doc = {"group": group, "task": tasks}
    metrics = {e.get("metric") for e in manifest["subset"] if lm_eval_task(e)}
    if len(metrics) == 1 and None not in metrics:
        # lm-eval can only aggregate a metric every subtask reports.
        doc["aggregate_metric_list"] = [{"metric": metrics.pop(), "aggregation": "mean", "weight_by_size": False}]
    doc["metadata"] = {"version": 1.0}
    # Names come from result files: comments escape them, the document goes through yaml.safe_dump.
    header = [comment(f"Reduced benchmark written by harness-ext {manifest.get('tool', {}).get('version', '')}."),
              comment(f"Run: lm_eval --model hf --model_args pretrained=MODEL --include_path {out_dir} --tasks {group} --log_samples --output_path results/"),
              "# The group's plain mean is not the full-benchmark estimate: use 'harness-ext predict'."]
    if written:
        header.append(comment(f"Task definitions in this folder (from the ingested results): {', '.join(p.name for p in written)}"))
    for name, src in unknown:
        where = f" It was defined in {src['config_source']}." if src.get("config_source") else ""
        header.append(comment(f"NOT SELF-CONTAINED: task {quoted(name)} is not defined here ({src.get('reason', 'unknown')}).{where}"))
        header.append(f"#   Copy its YAML (and any files it includes) into this folder: lm-eval takes one --include_path.")
    if skipped:
        header.append(comment(f"Not lm-eval tasks, left out: {', '.join(map(quoted, skipped))}"))
    if not tasks:
        header.append("# No dataset of this subset is an lm-eval task.")
    path = out_dir / f"{group}.yaml"
    path.write_text("\n".join(header) + "\n" + yaml_text(doc), encoding="utf-8")
    return [path] + written


def write_helm_conf(manifest: dict, out_dir: Path) -> list:
    """``run_entries_<group>.conf`` for ``helm-run --conf-paths``."""
    lines, skipped = [], []
    for entry in manifest["subset"]:
        desc = helm_description(entry)
        if desc is None:
            skipped.append(entry["name"])
            continue
        lines.append(f"  {{description: {hocon_string(desc)}, priority: 1}}")
    head = [comment(f"Reduced benchmark written by harness-ext {manifest.get('tool', {}).get('version', '')}."),
            f"# Run: helm-run --conf-paths run_entries_{_stem(manifest)}.conf --suite SUITE --max-eval-instances 1000 --models-to-run MODEL"]
    if skipped:
        head.append(comment(f"No HELM run entry known for: {', '.join(map(quoted, skipped))}"))
    body = "entries: [\n" + ",\n".join(lines) + ("\n" if lines else "") + "]\n"
    path = Path(out_dir) / f"run_entries_{_stem(manifest)}.conf"
    path.write_text("\n".join(head) + "\n" + body, encoding="utf-8")
    return [path]


def write_task_list(manifest: dict, out_dir: Path) -> list:
    """``<group>_tasks.txt``: one line per selected dataset, in selection order (harness task name when known)."""
    names = [list_line(lm_eval_task(e) or e.get("task") or e["name"], "task name") for e in manifest["subset"]]
    path = Path(out_dir) / f"{_stem(manifest)}_tasks.txt"
    path.write_text("\n".join(names) + "\n", encoding="utf-8")
    return [path]


@hookimpl
def harness_ext_manifest_writers():
    yield ManifestWriter(name="json", write=write_json, suffix=".json", description="the full manifest as JSON")
    yield ManifestWriter(name="lm_eval_yaml", write=write_lm_eval_yaml, suffix=".yaml",
                         description="lm-evaluation-harness group YAML (--include_path DIR --tasks GROUP)")
    yield ManifestWriter(name="helm_conf", write=write_helm_conf, suffix=".conf",
                         description="HELM run-entries conf (helm-run --conf-paths)")
    yield ManifestWriter(name="task_list", write=write_task_list, suffix=".txt",
                         description="plain list of the selected tasks, in selection order")
