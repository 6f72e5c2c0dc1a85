"""``predict`` says once what it says alike of several new models (:func:`harness_ext.report.grouped_warnings`).

Five new models beyond a leaderboard's strongest (LiveBench, its five strongest held out) printed ten warnings of
three to six lines each, two per model, differing only in a number; now two, each naming the models and giving the
numbers' range. The result objects and the JSON keep one warning per model; ``-v`` prints them so.
"""

from __future__ import annotations

import numpy as np

from harness_ext.methods.engine.frontier_report import frontier_warnings
from harness_ext.report import grouped_warnings


def _cal():
    from harness_ext.methods.engine.frontier import FrontierCalibration

    return FrontierCalibration(direction=1, candidate=None, weight=0.0, q_cell=(-1.0, 1.0), q_aggregate=(-1.0, 1.0),
                               n_models=30, aggregate_mae=1.0, aggregate_bias=0.0, engine_aggregate_mae=1.0,
                               aggregate_coverage=0.91, cell_coverage=0.9, n_distinct=20, max_distance=1.5)


def test_the_frontier_warnings_of_several_models_are_said_once_with_their_range():
    models = ["gpt-4o-2024-08-06", "claude-3-5-sonnet-20240620", "meta-llama-3.1-405b-instruct-turbo"]
    said = frontier_warnings(models, np.array([0.93, 1.0, 0.89]), {1: _cal()})
    assert len(said) == 3
    [one] = grouped_warnings(said, models)
    assert one.startswith("3 models (gpt-4o-2024-08-06, claude-3-5-sonnet-20240620, "
                          "meta-llama-3.1-405b-instruct-turbo): at the frontier, 0.89 to 1.00 sd above")
    assert "aggregate coverage 0.91, over 20 different training models" in one  # the numbers they share, as written


def test_different_texts_and_other_warnings_keep_their_place():
    models = ["m1", "m2", "m3"]
    said = ["m1: at the frontier, 0.50 sd above the edge", "a note on the manifest",
            "m2: at the frontier, 0.70 sd above the edge", "m3: at the frontier, 0.20 sd below the edge",
            "m3: no subset cell for mmlu_2"]
    assert grouped_warnings(said, models) == [
        "2 models (m1, m2): at the frontier, 0.50 to 0.70 sd above the edge", "a note on the manifest",
        "m3: at the frontier, 0.20 sd below the edge", "m3: no subset cell for mmlu_2"]


def test_numbers_inside_names_are_not_ranged_and_a_name_prefix_is_not_a_model():
    """``mmlu_2`` and ``mmlu_3`` are names, not numbers: the two warnings stay apart. ``m1`` is not the model
    ``m1-chat`` whose warning starts with it (the longest name is matched)."""
    models = ["m1", "m1-chat"]
    said = ["m1: no subset cell for mmlu_2", "m1-chat: no subset cell for mmlu_3", "m1-chat: score -0.5 below chance",
            "m1: score -1.25 below chance"]
    assert grouped_warnings(said, models) == [
        "m1: no subset cell for mmlu_2", "m1-chat: no subset cell for mmlu_3",
        "2 models (m1-chat, m1): score -1.25 to -0.5 below chance"]


def test_many_models_are_listed_with_a_count():
    models = [f"model-{i}" for i in range(9)]
    [one] = grouped_warnings([f"{m}: beyond the range" for m in models], models)
    assert one == "9 models (model-0, model-1, model-2, model-3, model-4, model-5 and 3 more): beyond the range"


def test_numbers_inside_task_names_keep_warnings_apart():
    """``babi_qa:task=15`` and ``task=16`` are two tasks, not a range of one."""
    said = ["m1: no per-item log for task babi_qa:task=15", "m2: no per-item log for task babi_qa:task=16",
            "m1: mean 0.5.", "m2: mean 0.7."]
    assert grouped_warnings(said, ["m1", "m2"]) == said[:2] + ["2 models (m1, m2): mean 0.5 to 0.7."]
