"""``predict`` on an anchored item manifest says when two of the new model's per-sample logs score an item differently.

Real lm-eval 0.4.13 output (tests/fixtures/samples/lm_eval_output/toy__lm-large, written by lm-eval itself; see the
README there): its ``samples_toy_arith_mc`` log, and a **derived** copy of it, written by this test beside it under
a later date stamp, with the ``acc`` of items 0, 1 and 4 flipped (a rerun that disagrees on three items). The
anchored task's score reads the first stored score of each item, silently; now a warning counts the items, how
many are anchors, and names the file whose scores are used.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness_ext.methods.reduction.predict import new_model_matrix
from harness_ext.methods.reduction.predict_conflicts import item_conflict_warnings

RUN = Path(__file__).parent / "fixtures" / "samples" / "lm_eval_output" / "toy__lm-large"
TASK, MODEL = "toy_arith_mc", "toy/lm-large"
ANCHORS = [0, 2, 4, 6]
MANIFEST = {"datasets": [{"name": TASK, "benchmark": "lm_eval", "metric": "acc", "num_fewshot": 0}], "subset": [],
            "items": {"tasks": {TASK: {"dataset": TASK, "metric": "acc", "doc_ids": ANCHORS,
                                       "weights": [0.25] * 4}}}}


def _run(tmp_path, flip=(0, 1, 4)) -> tuple:
    """The real run copied into ``tmp_path``, with a second log of its multiple-choice task flipping ``flip``."""
    run = tmp_path / "toy__lm-large"
    shutil.copytree(RUN, run)
    [log] = run.glob(f"samples_{TASK}_*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for d in lines:
        if d["doc_id"] in flip:
            d["acc"] = 1.0 - d["acc"]
    rerun = run / f"samples_{TASK}_2026-11-23T10-00-00.000000.jsonl"
    rerun.write_text("".join(json.dumps(d) + "\n" for d in lines))
    first = {d["doc_id"]: json.loads(line)["acc"] for d, line in zip(lines, log.read_text().splitlines())}
    return run, log, rerun, first


def test_two_logs_scoring_anchors_differently_are_counted_and_the_used_file_named(tmp_path):
    run, log, rerun, first = _run(tmp_path)
    raw, _, _ = new_model_matrix(MANIFEST, [run])
    # The first log's scores are used: the anchors' mean of the file read first.
    assert raw.loc[MODEL, TASK] == sum(first[d] for d in ANCHORS) / 4
    assert raw.attrs["item_conflicts"] == [(MODEL, TASK, 3, 2, (str(log),), (str(rerun),))]
    (warning,) = item_conflict_warnings(raw.attrs["item_conflicts"])
    assert warning == (f"reading the new results: 3 item scores of {MODEL} on {TASK} differ between its files (2 of "
                       "them among the anchors the task's estimate reads); the score of the file read first, in path "
                       f"order, is used ({log}), not {rerun}. Pass only the run to use")


def test_logs_that_agree_give_no_warning(tmp_path):
    run, _, _, _ = _run(tmp_path, flip=())
    raw, _, _ = new_model_matrix(MANIFEST, [run])
    assert raw.attrs["item_conflicts"] == []
