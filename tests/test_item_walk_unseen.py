"""The item-level loop walked as a new user would, on the EvalPlus tables the estimators were never tuned on.

The tables are ``fixtures/items_unseen/evalplus`` (HumanEval+ and MBPP+ pass@1 per problem, crux-eval/eval-arena;
PROVENANCE.md beside them). Each test is a message a user read on that walk that said something untrue or left
out what to do next.
"""

from __future__ import annotations

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
