"""``predict`` on an item-level manifest reading a folder of mixed per-item logs: a HELM run, an Inspect AI log,
lm-eval ``samples_*.jsonl`` and an Every Eval Ever instance file (the real fixtures under tests/fixtures), beside
files of no known kind. Pinned: which files are read, in which order, the rows they give and the messages."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.errors import HarnessExtError
from harness_ext.methods.reduction.item_predict import read_item_logs
from test_item_helm_predict import _reduce

FIX = Path(__file__).parent / "fixtures"
HELM_RUN = FIX / "helm_instances" / "babi_qa_task15"
INSPECT_LOG = FIX / "inspect" / "samples" / "2024-10-15T12-53-13-04-00_popularity_llama3.1.json"
LM_EVAL = FIX / "samples" / "lm_eval_output" / "toy__lm-small"
EEE = FIX / "eee_samples" / "mmlu" / "openai" / "gpt2" / "None_samples.jsonl"


def _mixed_folder(folder: Path) -> Path:
    """The four kinds of per-item log in one folder, with files of no known kind and a hidden folder beside them."""
    shutil.copytree(HELM_RUN, folder / "helm" / "babi_qa_task15")
    (folder / "inspect").mkdir()
    shutil.copy(INSPECT_LOG, folder / "inspect" / INSPECT_LOG.name)
    (folder / "inspect" / "logs.json").write_text('{"a.eval": {"version": 2}}')  # an eval set's index: no log
    shutil.copytree(LM_EVAL, folder / "lm_eval" / LM_EVAL.name)  # with its results_*.json: no per-item log
    (folder / "eee").mkdir()
    shutil.copy(EEE, folder / "eee" / EEE.name)
    (folder / "notes.txt").write_text("not a log\n")
    hidden = folder / ".cache"  # passed over: a copy of a samples file there is not read twice
    shutil.copytree(LM_EVAL, hidden)
    return folder


def _digest(long, sources, notes, base: Path) -> dict:
    """What read_item_logs gave, paths relative to ``base``: rows by model and task, a hash of the rows in order."""
    rows = long.to_csv(index=False).encode()
    counts = long.groupby(["model", "task", "metric"], sort=True).size()
    return {"rows": len(long), "sha": hashlib.sha256(rows).hexdigest()[:16],
            "counts": {" | ".join(map(str, k)): int(v) for k, v in counts.items()},
            "sources": {m: [str(Path(p).relative_to(base)) for p in fs] for m, fs in sources.items()},
            "notes": [n.replace(str(base), "<tmp>") for n in notes]}


COUNTS = {"AlephAlpha/luminous-base | babi_qa:task=15 | quasi_exact_match": 40,
          "ollama/llama3.1 | popularity | accuracy": 1, "openai/gpt2 | mmlu | acc": 1, "openai/gpt2 | mmlu | score": 1,
          "toy/lm-small | toy_arith_gen | exact_match,flexible-extract": 18,
          "toy/lm-small | toy_arith_gen | exact_match,strict-match": 18,
          "toy/lm-small | toy_arith_mc | acc": 18, "toy/lm-small | toy_arith_mc | acc_norm": 18}
GEN = "samples_toy_arith_gen_2026-11-22T19-54-19.626468.jsonl"
MC = "samples_toy_arith_mc_2026-11-22T19-54-19.626468.jsonl"
HELM_NOTE = ("<tmp>/mixed/helm/babi_qa_task15: 15 per-instance entries of other splits than test (or without "
             "quasi_exact_match) left out")
HELM_TRIALS = ("<tmp>/mixed/helm/babi_qa_task15: 120 per-instance entries of quasi_exact_match on test: 40 instances in "
               "3 train trials each, each instance's item score the mean over its trials")


def test_a_mixed_folder_reads_each_kind_of_log_once_in_walk_order(tmp_path):
    folder = _mixed_folder(tmp_path / "mixed")
    got = _digest(*read_item_logs([folder]), tmp_path)
    assert got == {"rows": 115, "sha": "3c7dcd848eebd791", "counts": COUNTS, "notes": [HELM_NOTE, HELM_TRIALS], "sources": {
        "AlephAlpha/luminous-base": ["mixed/helm/babi_qa_task15/per_instance_stats.json"],
        "ollama/llama3.1": [f"mixed/inspect/{INSPECT_LOG.name}"],
        "openai/gpt2": ["mixed/eee/None_samples.jsonl"],
        "toy/lm-small": [f"mixed/lm_eval/toy__lm-small/{GEN}", f"mixed/lm_eval/toy__lm-small/{MC}"]}}


def test_logs_given_as_files_and_folders_are_read_in_the_order_given(tmp_path):
    folder = _mixed_folder(tmp_path / "mixed")
    lm = folder / "lm_eval"
    given = [folder / "eee" / EEE.name, folder / "inspect" / INSPECT_LOG.name, lm / LM_EVAL.name / MC,
             folder / "helm" / "babi_qa_task15" / "per_instance_stats.json", lm]
    got = _digest(*read_item_logs(given), tmp_path)
    assert got["rows"] == 115 and got["sha"] == "ad9f047e68f6897e" and got["counts"] == COUNTS
    assert got["sources"]["toy/lm-small"] == [f"mixed/lm_eval/toy__lm-small/{n}" for n in (MC, GEN, MC)]
    assert got["notes"] == [HELM_NOTE, HELM_TRIALS,
                            "36 item scores logged twice; the first read (file, then line) is used"]


@pytest.mark.slow
def test_predict_on_a_mixed_folder_says_what_it_read(tmp_path, capsys):
    out = _reduce(tmp_path)
    folder = _mixed_folder(tmp_path / "mixed")
    capsys.readouterr()
    assert main(["predict", "-m", str(out), str(folder), "--no-lm-eval-results"]) == 0
    got = capsys.readouterr()
    warnings = [w.replace(str(tmp_path), "<tmp>") for w in got.err.splitlines() if w.startswith("warning: ")]
    # The HELM run's model, measured on every item, lies below the 25 population models: said, nothing estimated.
    assert warnings == ["warning: " + HELM_NOTE, "warning: " + HELM_TRIALS] + [
        "warning: AlephAlpha/luminous-base: beyond the population: the mean score of the items it ran, 0.233 over the "
        "benchmark, lies 0.142 below the weakest of the manifest's 25 population models (0.375), outside their range "
        "on 1 of 1 task (the crosstask estimate: 0.233); every task measured on all its items: nothing estimated"] + [
        # said once of the three models it holds for (-v: one warning each)
        "warning: 3 models (ollama/llama3.1, openai/gpt2, toy/lm-small): no per-item quasi_exact_match log for task "
        "babi_qa:task=15"] + [
        "warning: logs of tasks not in the manifest ignored: mmlu, popularity, toy_arith_gen, toy_arith_mc"]
    assert "babi_qa:task=15  quasi_exact_match      True  0.233     0.233     0.233      40       40" in got.out
    assert got.out.count("task scores estimated from their items") == 3


def test_paths_with_no_per_item_log_are_one_clear_error(tmp_path):
    folder = _mixed_folder(tmp_path / "mixed")
    for given, reason in [(tmp_path / "nope", "no such file or folder"),
                          (folder / "notes.txt", "not a per-item log"),
                          (folder / "inspect" / "logs.json", "not a per-item log")]:
        with pytest.raises(HarnessExtError, match=f"^{given}: {reason}"):
            read_item_logs([folder / "eee", given])
    empty = tmp_path / "empty"
    (empty / ".hidden").mkdir(parents=True)
    (empty / "results.json").write_text("{}")
    (empty / ".hidden" / MC).write_text("{}")  # hidden folders are not looked in
    # The files looked at are counted: the folder was not empty, its files were no per-item logs.
    with pytest.raises(HarnessExtError, match=rf"^no per-item logs .* among the 1 file in {empty} \(hidden folders "
                                              r"are not looked in\): run lm_eval with --log_samples"):
        read_item_logs([empty])


def test_a_helm_per_instance_file_given_without_its_run_is_an_error_not_passed_over(tmp_path):
    """It was passed over without a word: predict went on with the other logs given."""
    folder = _mixed_folder(tmp_path / "mixed")
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(HELM_RUN / "per_instance_stats.json", lone / "per_instance_stats.json")
    with pytest.raises(HarnessExtError, match=f"^{lone / 'per_instance_stats.json'}: a HELM per-instance file "
                                              "without the run's run_spec.json beside it"):
        read_item_logs([folder / "eee", lone / "per_instance_stats.json"])


def test_the_given_paths_are_walked_once_and_each_file_looked_at_once(tmp_path, monkeypatch):
    """They were walked once per kind of log (three times), and a log given by name sniffed three times."""
    import collections
    import os

    import harness_ext.adapters.inspect_items as inspect_items

    folder = _mixed_folder(tmp_path / "mixed")
    walks, sniffed = [], collections.Counter()
    real_walk, real_sniff = os.walk, inspect_items.is_log_file
    monkeypatch.setattr(os, "walk", lambda top, *a, **k: (walks.append(str(top)), real_walk(top, *a, **k))[1])
    monkeypatch.setattr(inspect_items, "is_log_file", lambda p: (sniffed.update([str(p)]), real_sniff(p))[1])
    log = folder / "inspect" / INSPECT_LOG.name
    read_item_logs([folder, log])
    assert walks == [str(folder)]
    assert sniffed[str(log)] == 2 and max(n for p, n in sniffed.items() if p != str(log)) == 1  # in the folder, and given
