"""Printed tables of a board with Chinese model names keep their columns aligned in a terminal.

The names are those of ``tests/fixtures/csv_wild/chinese_llm_benchmark_alldata_slice.csv`` (jeinlee1991/
chinese-llm-benchmark at b345f0b15bbb0492de0281b2204fd8265213e438, ``alldata.md``; PROVENANCE.md beside it): a Chinese
character takes two columns of a terminal, and pandas padded by characters, so ``weights``' rows of ``阿里qwen-max``
ran two columns per character past those of ``gpt-4o``.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pandas as pd

from harness_ext.report import format_table

SLICE = Path(__file__).parent / "fixtures" / "csv_wild" / "chinese_llm_benchmark_alldata_slice.csv"


def _display_width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_a_table_of_chinese_names_is_aligned_by_display_width():
    board = pd.read_csv(SLICE, index_col="大模型").drop(columns=["类别", "Unnamed: 9"])
    lines = format_table(board[["分类能力", "信息抽取"]] / 100).splitlines()
    assert "阿里qwen-max" in "\n".join(lines) and "gpt-4o" in "\n".join(lines)
    rows = lines[2:]  # the header, then the index name's line
    assert len({_display_width(line) for line in rows}) == 1, lines
