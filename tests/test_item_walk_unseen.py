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
