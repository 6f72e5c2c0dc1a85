"""Plots of boards whose task and model names are Chinese or Japanese: said once, and drawn with a CJK font if one
is installed.

The data is ``tests/fixtures/csv_wild/chinese_llm_benchmark_alldata_slice.csv`` (jeinlee1991/chinese-llm-benchmark at
b345f0b15bbb0492de0281b2204fd8265213e438, ``alldata.md``, 8 of its 77 rows; PROVENANCE.md beside it): its six task
names (``分类能力``, ``信息抽取``, ...) and model names such as ``阿里qwen-max``. Without a CJK font matplotlib drew them as
empty boxes and warned once per character (73 ``Glyph ... missing`` lines for Nejumi 4's Japanese task names).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from harness_ext import report  # noqa: E402
from harness_ext.cli import main  # noqa: E402

SLICE = Path(__file__).parent / "fixtures" / "csv_wild" / "chinese_llm_benchmark_alldata_slice.csv"
NEEDS_NO_CJK_FONT = pytest.mark.skipif(bool(report.installed_fallback_fonts()),
                                       reason="a CJK font is installed: the labels are drawn, nothing to say")


@NEEDS_NO_CJK_FONT
def test_stalk_on_a_chinese_board_says_once_that_its_labels_are_boxes(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "-q", "--db", db, str(SLICE)]) == 0
    capsys.readouterr()
    assert main(["stalk", "--db", db, "--axis", "datasets", "--out", str(tmp_path / "stalk")]) == 0
    err = capsys.readouterr().err
    assert "Glyph" not in err, err  # matplotlib's one line per character
    lines = [line for line in err.splitlines() if "no installed font has" in line]
    assert len(lines) == 1, err
    # the 6 task names (each on both axes, counted once) and their distinct characters
    assert lines[0].startswith("warning: stalk_heatmap.png: 6 labels with ") and "Noto Sans CJK" in lines[0], lines[0]
    assert (tmp_path / "stalk" / "stalk_heatmap.png").stat().st_size > 0


@NEEDS_NO_CJK_FONT
def test_other_warnings_of_a_plot_are_not_swallowed(tmp_path, caplog):
    import warnings

    plt = report.get_pyplot()
    fig, ax = plt.subplots()
    ax.set_title("阿里qwen-max")
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING, "harness_ext.plot"):
        warnings.simplefilter("always")
        ax.plot([1, 2], [1, -1])
        ax.set_yscale("log")  # a non-positive value on a log axis: matplotlib's own warning, passed on
        report.save_figure(fig, tmp_path / "t.png")
    assert not any("Glyph" in str(w.message) for w in caught)
    assert [r.getMessage() for r in caplog.records if "no installed font has" in r.getMessage()] == [
        "t.png: 1 label with 2 characters no installed font has ('阿里qwen-max'), drawn as empty boxes; install a font "
        "with them (for Chinese, Japanese and Korean: Noto Sans CJK) and the plots use it; the tables written beside "
        "the plot hold the names"]


def test_an_installed_cjk_font_is_added_after_the_default_family(monkeypatch):
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "font.family", ["sans-serif"])
    monkeypatch.setattr(report, "FALLBACK_FONTS", ("Not A Font", "DejaVu Serif"))  # one that is installed here
    plt = report.get_pyplot()
    assert list(plt.rcParams["font.family"]) == ["sans-serif", "DejaVu Serif"]
    monkeypatch.setitem(matplotlib.rcParams, "font.family", ["serif"])  # a user's own choice is left alone
    assert list(report.get_pyplot().rcParams["font.family"]) == ["serif"]
