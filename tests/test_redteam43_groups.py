"""A results file's group member list named as a pattern does not widen ``reduce --items``' draw.

lm-eval's ``group_subtasks`` lists the tasks a group ran; ``reduce --items --datasets GROUP`` stands the group for
its leaf tasks. A hostile file's member named ``leaderboard_*`` (or ``leaderboard_[m]*``) was taken as a glob and
drew from every task it matched: the Open LLM Leaderboard runs of ``test_item_group_weights`` (math group given a
score, so its list is kept) reduced to all 10 tasks of both groups under the math group's name. Such a member is
now left out and said; a group with no task left is one clear error.
"""

from __future__ import annotations

import json

import pytest
from test_item_group_weights import MATH, SCORES, _leaderboard_run

from harness_ext.cli import main
from harness_ext.methods.reduction.manifest import load_manifest


def _store(tmp_path, members) -> str:
    files = []
    for model in SCORES:
        path = _leaderboard_run(tmp_path / "runs", model, math_group=lambda v: 0.3)
        doc = json.loads(path.read_text())
        doc["group_subtasks"]["leaderboard_math_hard"] = members
        path.write_text(json.dumps(doc))
        files.append(str(path))
    db = str(tmp_path / "store.duckdb")
    assert main(["ingest", "--db", db, "-q", *files]) == 0
    return db


def _reduce(db, out, flag) -> int:
    return main(["reduce", "--db", db, "--items", "10", "--out", str(out), "--no-plot", flag, "leaderboard_math_hard"])


@pytest.mark.parametrize("flag", ["--datasets", "--benchmark"])
def test_a_member_named_as_a_pattern_is_left_out_and_said(tmp_path, capsys, flag):
    db = _store(tmp_path, list(MATH)[:2] + ["leaderboard_[m]*"])
    assert _reduce(db, tmp_path / "out", flag) == 0
    text = capsys.readouterr().out
    assert sorted(load_manifest(tmp_path / "out")["tasks"]) == sorted(list(MATH)[:2])  # was all 10 tasks
    assert "1 member named as a pattern, not a task, left out (leaderboard_[m]*" in text


@pytest.mark.parametrize("flag", ["--datasets", "--benchmark"])
def test_a_group_of_patterns_only_is_one_clear_error(tmp_path, capsys, flag):
    db = _store(tmp_path, ["leaderboard_*"])
    assert _reduce(db, tmp_path / "out", flag) == 1
    err = capsys.readouterr().err
    assert "leaderboard_math_hard is an lm-eval group whose member list kept at ingest names no task" in err
    assert "1 member named as a pattern: leaderboard_*" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_thousands_of_groups_nested_in_a_chain_are_read_and_taken_in_seconds(tmp_path, capsys):
    """20,000 groups without a score, each the one member of the last, the innermost holding MuSR's three tasks: each
    group's members were walked again for every group, at ingest (190 s for one file) and in ``reduce`` (19 s at
    4,000); each is now worked out once (no wall-clock bound here: the times are measured by
    ``benchmarks/screens/redteam43/groups.py`` with ``RT43_DEPTH``)."""
    from test_item_group_weights import MUSR

    chain = [f"n{i}" for i in range(20_000)]
    files = []
    for model in SCORES:
        path = _leaderboard_run(tmp_path / "runs", model)
        doc = json.loads(path.read_text())
        subs = doc["group_subtasks"]
        subs["leaderboard_musr"] = [chain[0]]
        subs.update({a: [b] for a, b in zip(chain, chain[1:])})
        subs[chain[-1]] = list(MUSR)
        path.write_text(json.dumps(doc))
        files.append(str(path))
    db = str(tmp_path / "store.duckdb")
    assert main(["ingest", "--db", db, "-q", *files]) == 0
    assert main(["reduce", "--db", db, "--items", "10", "--out", str(tmp_path / "out"), "--no-plot",
                 "--datasets", "leaderboard_musr"]) == 0
    m = load_manifest(tmp_path / "out")
    assert sorted(m["tasks"]) == sorted(MUSR) and m["lm_eval_group"]["n_tasks"] == 3
    capsys.readouterr()
