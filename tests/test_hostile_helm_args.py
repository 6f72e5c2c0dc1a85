"""A HELM run name from someone else's results carries arguments that helm-run hands to the scenario: MedHELM's
``data_path`` (opened as given, so from the folder helm-run is run in), Unitxt's artifacts (a value naming a local
file loads it), a subject that climbs out of HELM's data folder (MMLU reads ``<subject>_test.csv``). The conf
``reduce`` writes leaves such an entry out, says why in its header and counts it in reduce's warnings; every real
HELM run entry the repository writes is kept."""

from __future__ import annotations

import csv
import json

import pytest

from conftest import SHARED_DATA
from harness_ext.methods.reduction.harness_names import (BENCHMARK_EQUIVALENTS, EQUIVALENTS, HELM_CLASSIC_DESCRIPTIONS,
                                                         helm_description_list)
from harness_ext.methods.reduction.helm_run_args import helm_entry_problem, refused_helm_warnings
from harness_ext.methods.reduction.manifest import example_manifest, write_outputs

pyhocon = pytest.importorskip("pyhocon")

#: Run entries a results file could name, each reading or loading something outside the reduced folder.
ATTACKS = {
    "MedHELM data_path, absolute": "ehrshot:subject=guo_icu,data_path=/home/user/.ssh",
    "MedHELM data_path, relative": "clear:condition=alcohol_dependence,data_path=restricted",
    "MedHELM config file": "medhelm_configurable_benchmark:config_path=benchmark.yaml",
    "Unitxt artifact file": "unitxt:card=secrets.json",
    "Unitxt catalog name": "unitxt:card=cards.wnli,template=templates.classification.multi_class.relation.default",
    "class to import": "simple1:class_name=os.system",
    "prompt file": "custom_scenario:prompt_file=prompt.txt",
    "dataset path": "mmlu:subject=anatomy,dataset_path=data",
    "subject climbing out": "mmlu:subject=../../../etc/passwd",
    "absolute subject": "mmlu:subject=/etc/passwd",
    "home folder": "mmlu:subject=~/notes",
    "hidden folder": "mmlu:subject=.ssh",
    "Windows path": "mmlu:subject=a\\b",
    "Windows drive": "mmlu:subject=C:\\Windows",
    "file URL": "the_pile:subset=file:///etc/passwd",
    "https URL": "the_pile:subset=https://attacker.example/x.csv",
    "copyright data tag": "copyright:datatag=../../x.json",
    "model path": "mmlu:subject=anatomy,model=../models/evil",
    "absolute model": "mmlu:subject=anatomy,model=/opt/models/evil",
    "scenario with a slash": "mmlu/../x:subject=anatomy",
    "quote in a value": 'mmlu:subject=a"b',
    "argument without a value": "mmlu:subject=anatomy,/etc/passwd",
}
#: Real run entries, as HELM's own results name them (spaces, parentheses, a file name that is a lookup key,
#: registry names with one '/').
REAL = ["the_pile:subset=Wikipedia (en),model=text", "the_pile:subset=Enron Emails,model=text",
        "copyright:datatag=popular_books-prefix_length_125.json,model=text", "mmlu:subject=anatomy,model=openai/gpt2",
        "synthetic_efficiency:random=None,num_prompt_tokens=1,num_output_tokens=1,tokenizer=huggingface/gpt2",
        "big_bench:task=auto_debugging,subtask=", "wmt_14:language_pair=cs-en,model=text",
        "math:subject=number_theory,level=1,use_official_examples=False,use_chain_of_thought=True,model=text",
        "dyck_language_np=3", "ehrshot:subject=guo_icu,model=text", "msmarco:track=regular,valid_topk=30,model=text"]


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_entry_naming_a_file_url_or_code_is_refused(name):
    assert helm_entry_problem(ATTACKS[name])


@pytest.mark.parametrize("desc", REAL)
def test_real_run_entries_are_kept(desc):
    assert helm_entry_problem(desc) is None


def test_helm_instruct_s_grammar_file_is_left_out_too():
    """HELM Instruct's own run names its prompts file (``get_grammar_spec(num_respondents, path, tags)``), opened
    from the folder helm-run is run in; the name lacks ``num_respondents``, so helm-run could not run it from the
    conf either. Left out like any path, with why."""
    desc = "grammar:path=src/helm/benchmark/scenarios/best_chatgpt_prompts.yaml,tags=,model=text"
    assert "the argument path names a path" in helm_entry_problem(desc)


def test_every_run_entry_of_the_repository_s_tables_is_kept():
    from harness_ext.benchmarks import MMLU_SUBJECTS

    descs = set(HELM_CLASSIC_DESCRIPTIONS.values())
    for eq in list(EQUIVALENTS) + [e for table in BENCHMARK_EQUIVALENTS.values() for e in table.values()]:
        descs.update(eq.helm_classic + eq.helm_lite)
    for s in MMLU_SUBJECTS:
        descs.update(helm_description_list({"benchmark": "mmlu", "name": s}))
    assert len(descs) > 100 and [d for d in descs if helm_entry_problem(d)] == []


def test_every_helm_classic_run_is_kept():
    """The 8,526 runs of HELM Classic, as the HELM adapter names their datasets and the conf writes them."""
    from adapters.helm import parse_run_name

    path = SHARED_DATA / "helm-raw-example" / "examples" / "runs_to_runsuites.json"
    if not path.is_file():
        pytest.skip("shared HELM data not available")
    runs = json.loads(path.read_text(encoding="utf-8"))
    datasets = {parse_run_name(r).dataset for r in runs}
    assert len(runs) == 8526 and len(datasets) > 200
    refused = [d for d in datasets for desc in helm_description_list({"benchmark": "helm", "name": d})
               if helm_entry_problem(desc)]
    assert refused == []


def _helm_manifest(names):
    m = example_manifest()
    m["subset"] = [{"step": i + 1, "name": n, "benchmark": "helm", "metric": "EM", "task": None, "num_fewshot": 0,
                    "coverage": 0.5} for i, n in enumerate(names)]
    return m


def test_the_conf_leaves_the_attacks_out_and_says_why(tmp_path):
    names = ["boolq", "mmlu:subject=anatomy"] + [ATTACKS[k] for k in sorted(ATTACKS)]
    names[0] = "boolq:data_augmentation=canonical"
    m = _helm_manifest(names)
    write_outputs(m, tmp_path, ["helm_conf"])
    path = tmp_path / f"run_entries_{m['group_name']}.conf"
    conf = pyhocon.ConfigFactory.parse_file(str(path))
    assert [e["description"] for e in conf["entries"]] == [
        "boolq:data_augmentation=canonical,model=text,max_train_instances=0",
        "mmlu:subject=anatomy,model=text,max_train_instances=0"]
    text = path.read_text(encoding="utf-8")
    head = [line for line in text.splitlines() if line.startswith("#")]
    assert f"# Left out: {len(ATTACKS)} run entries from the results whose arguments" in text
    assert "the argument data_path names a path for helm-run to open or import" in text
    assert "helm-run hands every argument to Unitxt" in text
    # Each entry named on one comment line, quoted: its text is never an entry of the conf.
    assert all(any(json.dumps(a)[1:-1] in line for line in head) for a in ATTACKS.values() if "\\" not in a)
    warning = refused_helm_warnings(m["subset"])
    assert len(warning) == 1 and warning[0].startswith(f"HELM conf: {len(ATTACKS)} run entries of {len(ATTACKS)} "
                                                       "dataset(s) left out")


def test_a_conf_with_every_entry_left_out_has_no_run_line(tmp_path):
    m = _helm_manifest([ATTACKS["MedHELM data_path, absolute"]])
    write_outputs(m, tmp_path, ["helm_conf"])
    text = (tmp_path / f"run_entries_{m['group_name']}.conf").read_text(encoding="utf-8")
    assert pyhocon.ConfigFactory.parse_string(text)["entries"] == []
    assert "helm-run --conf-paths" not in text and "No run entry of this subset is left to write" in text


def test_nothing_is_left_out_of_a_conf_of_real_entries():
    assert refused_helm_warnings(_helm_manifest(["boolq:data_augmentation=canonical", "mmlu:subject=anatomy"])[
        "subset"]) == []


@pytest.mark.slow
def test_hostile_run_names_through_reduce(tmp_path):
    """From a results table to the conf: the warning counts what the conf leaves out, and nothing else changes."""
    import numpy as np

    from harness_ext.cli import main

    names = ["boolq:data_augmentation=canonical", "mmlu:subject=anatomy", "imdb:data_augmentation=canonical",
             "raft:subset=ade_corpus_v2", ATTACKS["MedHELM data_path, relative"], ATTACKS["subject climbing out"],
             ATTACKS["Unitxt artifact file"], ATTACKS["file URL"]]
    rng = np.random.default_rng(0)
    ability, difficulty = rng.uniform(0, 1, 24), rng.uniform(0, 1, len(names))
    src = tmp_path / "helm.csv"
    with open(src, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "benchmark", "dataset", "metric", "value"])
        for i, a in enumerate(ability):
            for n, d in zip(names, difficulty):
                w.writerow([f"m{i}", "helm", n, "EM", f"{np.clip(a - 0.5 * d + 0.4 + 0.05 * rng.standard_normal(), 0, 1):.4f}"])
    db, out = tmp_path / "h.duckdb", tmp_path / "out"
    assert main(["ingest", "--db", str(db), "-q", str(src)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "6", "--n-random", "20", "--no-plot", "--out", str(out)]) == 0
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    subset = [s["name"] for s in m["subset"]]
    bad = [n for n in subset if n in ATTACKS.values()]
    conf = pyhocon.ConfigFactory.parse_file(str(out / "run_entries_harness_ext_reduced.conf"))
    written = [e["description"].split(",model=")[0] for e in conf["entries"]]
    assert written == [n for n in subset if n not in bad]
    notes = [w for w in m["warnings"] if w.startswith("HELM conf: ") and "left out" in w]
    assert (notes != []) == (bad != []) and (not bad or notes[0].startswith(f"HELM conf: {len(bad)} run entr"))


def test_the_shots_note_counts_only_the_entries_written(tmp_path):
    """The conf's header said '0 shots (3 datasets)' with two of the three entries left out, and reduce printed it."""
    from harness_ext.methods.reduction.helm_run_args import helm_shots_note

    m = _helm_manifest(["mmlu:subject=anatomy", ATTACKS["MedHELM data_path, absolute"], ATTACKS["file URL"],
                        "boolq:data_augmentation=canonical", ATTACKS["Unitxt artifact file"]])
    m["subset"][3]["num_fewshot"] = m["subset"][4]["num_fewshot"] = None
    assert helm_shots_note(m) == [
        "Each run entry sets max_train_instances to the shots the population was measured at: 0 shots (1 dataset)",
        "The population's results name no shots for 1 dataset (\"boolq:data_augmentation=canonical\"): their entries "
        "run at HELM's own default, which may differ"]
    write_outputs(m, tmp_path, ["helm_conf"])
    text = (tmp_path / f"run_entries_{m['group_name']}.conf").read_text(encoding="utf-8")
    assert "0 shots (1 dataset)" in text and len(pyhocon.ConfigFactory.parse_string(text)["entries"]) == 2
    # Every entry left out: nothing about shots, as the conf has no Run line.
    assert helm_shots_note(_helm_manifest([ATTACKS["MedHELM data_path, absolute"]])) == []
