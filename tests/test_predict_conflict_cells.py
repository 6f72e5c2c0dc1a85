"""``predict`` counts each conflicting cell of a new model's files once.

Real lm-eval runs of Qwen/Qwen3.5-9B on GPQA Diamond, zero-shot (tests/fixtures/lm_eval_limit and lm_eval_v04:
``--limit 50`` 0.46, ``--limit 100`` 0.51, the whole run 0.4949) and the derived CSV of
tests/fixtures/csv_listed_twice that lists the 50-question value, then the whole run's, for one cell (provenance
there). A cell a file lists again and another file also disagrees on was counted twice: as two values differing
between the files, and again as listed twice; a file agreeing with the value used was named as disagreeing.
"""

from __future__ import annotations

from pathlib import Path

from harness_ext.methods.reduction.predict import conflict_warnings, new_model_matrix

FIX = Path(__file__).parent / "fixtures"
LISTED_TWICE = FIX / "csv_listed_twice" / "gpqa_runs_listed_twice.csv"
LIMIT50 = FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-13-05.882357.json"
LIMIT100 = FIX / "lm_eval_v04" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json"
TASK, MODEL = "gpqa_diamond_zeroshot", "Qwen/Qwen3.5-9B"
MANIFEST = {"datasets": [{"name": TASK, "benchmark": "lm_eval", "metric": "acc", "num_fewshot": 0}], "subset": []}


def _warnings(files) -> tuple:
    raw, _, _ = new_model_matrix(MANIFEST, files)
    return float(raw.loc[MODEL, TASK]), conflict_warnings(raw.attrs["ingest_conflicts"])


def test_a_cell_listed_again_and_disagreed_on_by_another_file_is_counted_once():
    """The 100-question run is used (most documents among first listings); the CSV disagrees and lists the cell
    again: one cell, in one warning, with the repeat said beside it."""
    value, warnings = _warnings([LISTED_TWICE, LIMIT100])
    assert value == 0.51
    (warning,) = warnings
    assert warning.startswith(f"reading the new results: 1 score of {MODEL} on 1 task differs between its files")
    assert f"1 is taken from the run measured on the most documents ({LIMIT100}), not from {LISTED_TWICE}" in warning
    assert "1 of them is also listed again in one file with another value" in warning
    assert "twice, differently" not in warning


def test_a_file_agreeing_with_the_value_used_is_not_named_as_disagreeing():
    """The ``--limit 50`` run gives 0.46 on 50 questions, as the CSV's first listing: only the CSV's own repeat
    (the whole run's 0.4949) disagrees, so the one warning is the CSV's listing it twice."""
    value, warnings = _warnings([LISTED_TWICE, LIMIT50])
    assert value == 0.46
    (warning,) = warnings
    assert warning == (f"reading the new results: {LISTED_TWICE} lists 1 score of {MODEL} on 1 task twice, "
                       f"differently: {TASK}; the file's first listing is used")


def test_three_files_count_each_cell_once():
    """Three files on one cell (two disagreeing with the value used) and the 50- and 100-question runs' ``acc_norm``:
    two cells, not the four values that are not used."""
    value, warnings = _warnings([LISTED_TWICE, LIMIT50, LIMIT100])
    assert value == 0.51
    (warning,) = warnings
    assert warning.startswith(f"reading the new results: 2 scores of {MODEL} on 1 task differ between its files")
    assert f"not from {LISTED_TWICE}, {LIMIT50}" in warning
    assert "1 of them is also listed again" in warning
