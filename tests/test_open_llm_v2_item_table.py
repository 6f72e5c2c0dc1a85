"""The shared Open LLM Leaderboard v2 item tables against the leaderboard's own lm-eval results.

The tables keep no item ids and no subtask boundaries (their PROVENANCE.md: "treat each file as one pool").
Their source concatenated lm-eval's subtasks, so ``musr`` is ``leaderboard_musr_murder_mysteries`` (250),
``_object_placements`` (256) and ``_team_allocation`` (250), and ``openllm_math`` five of the seven
``leaderboard_math_*_hard`` subtasks. Two models' published subtask scores (real results files,
``fixtures/open_llm_v2_subtasks``) are reproduced exactly by those item ranges, which is what the docs state.
Run logs of lm-eval's ``leaderboard_*`` tasks still match none of the table's tasks by name and metric: ``predict``
says so (``test_item_loop.py``), it never pairs them by position.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import SHARED_DATA

HERE = Path(__file__).parent
PUBLISHED = json.loads((HERE / "fixtures" / "open_llm_v2_subtasks" / "published_subtask_scores.json").read_text())
TABLES = SHARED_DATA / "items" / "open_llm_v2"

#: table task -> (lm-eval subtask, metric, its number of documents), in the table's item order.
PARTS = {
    "ifeval": [("leaderboard_ifeval", "prompt_level_strict_acc", 541)],
    "musr": [("leaderboard_musr_murder_mysteries", "acc_norm", 250),
             ("leaderboard_musr_object_placements", "acc_norm", 256),
             ("leaderboard_musr_team_allocation", "acc_norm", 250)],
    "openllm_math": [("leaderboard_math_geometry_hard", "exact_match", 132),
                     ("leaderboard_math_intermediate_algebra_hard", "exact_match", 280),
                     ("leaderboard_math_num_theory_hard", "exact_match", 154),
                     ("leaderboard_math_prealgebra_hard", "exact_match", 193),
                     ("leaderboard_math_precalculus_hard", "exact_match", 135)],
}


@pytest.mark.parametrize("task", sorted(PARTS))
def test_the_tables_item_ranges_are_the_leaderboards_subtasks(task):
    if not TABLES.is_dir():
        pytest.skip(f"the shared item tables are not at {TABLES}")
    table = pd.read_parquet(TABLES / f"{task}.parquet", columns=["model", "item", "score"])
    assert table["item"].nunique() == sum(n for _, _, n in PARTS[task])
    for model, published in PUBLISHED.items():
        scores = table[table["model"] == model].sort_values("item")["score"].to_numpy(dtype=float)
        start = 0
        for subtask, metric, n in PARTS[task]:
            got = float(np.sum(scores[start:start + n])) / n  # the mean lm-eval's aggregation gives
            assert got == pytest.approx(published[subtask][f"{metric},none"], abs=1e-12), (model, subtask)
            start += n
