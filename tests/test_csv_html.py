"""Leaderboards published as HTML tables, read by the CSV adapter's rules (:mod:`harness_ext.adapters.csv_html`).

Real files (``tests/fixtures/html``, see its PROVENANCE.md): the LAVIS ``projects/img2llm-vqa/README.md`` whole
(BSD-3-Clause: a ``rowspan`` header, ``<sub>`` in model names, unclosed ``<sub>``), a slice of the README of Noh and
Lee's (2025) review of medical segmentation foundation models (a two-row header with ``colspan`` groups, ``<strong>``
scores, unclosed ``<a>`` in a survey table, a ``rowspan`` metadata table) and a page composed around the RMT-PPAD
README's two HTML tables (Wang et al. 2025; a ``<script>`` writing a table, ``<h3>`` headings), each with its
cell-for-cell CSV conversion by hand. The hostile pages at the end are composed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_csv_markdown import _contents, _ingest  # the same stores compared the same way

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "html"


def _q(s, sql):
    return s.con.execute(sql).fetchall()


def _page(tmp_path, text, name="board.html"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _one(*paths):
    s, report = _ingest(*paths)
    (f,) = report.files
    return s, f


def test_a_subscript_in_an_html_model_name_is_joined_with_an_underscore():
    # LAVIS names its models 'Img2LLM-VQA-OPT<sub>13B</sub>' (three <sub> never closed): run together, 'OPT13B'
    s, f = _one(FIX / "lavis_img2llm_vqa_readme.md")
    models = {m for (m,) in _q(s, "SELECT name FROM models")}
    assert {"Frozen-7B_base", "Img2LLM-VQA-OPT_13B", "Img2LLM-VQA-OPT_175B"} <= models
    assert not any(m.endswith(("Bbase", "OPT13B")) for m in models)
    assert "7 cells with a subscript after its text read with '_' before the subscript (GPT<sub>4</sub> as GPT_4), " \
           "as a superscript power is read with '^'" in f.notes


@pytest.mark.parametrize("page, csv, n", [
    ("medseg_review_readme_slice.md", "medseg_review_overall.csv", 34),
    ("lavis_img2llm_vqa_readme.md", "lavis_img2llm_vqa.csv", 26),
    ("rmtppad_results.html", "rmtppad_results.csv", 36),
], ids=["medseg-review-md", "lavis-md", "rmtppad-html"])
def test_an_html_board_stores_what_its_csv_conversion_stores(tmp_path, page, csv, n):
    (tmp_path / "page").mkdir()
    (tmp_path / "csv").mkdir()
    a = tmp_path / "page" / ("board" + Path(page).suffix)
    b = tmp_path / "csv" / "board.csv"
    a.write_bytes((FIX / page).read_bytes())
    b.write_bytes((FIX / csv).read_bytes())
    s1, f1 = _one(a)
    s2, f2 = _one(b)
    assert f1.status == f2.status == "ingested", (f1.reason, f2.reason)
    assert f1.adapter == "csv"
    got, want = _contents(s1), _contents(s2)
    assert len(got[0]) == n
    assert got == want
    assert set(f2.notes) <= set(f1.notes)  # the page's own notes (tables not read, markup) besides


def test_grouped_headers_and_the_tables_that_are_not_leaderboards_are_noted():
    s, f = _one(FIX / "medseg_review_readme_slice.md")
    notes = "\n".join(f.notes)
    assert "5 columns named by the header rows above them, joined with ' / ' (2D / RGB, 2D / Grayscale" in notes
    assert ("2 tables not read, not a leaderboard: line 7 ('Survey: Foundation Models in Medical Image "
            "Segmentation'): no model column") in notes
    assert "line 44 ('Target Models'): no column of numbers beside the model column" in notes
    assert "5 cells written with Markdown or HTML markup" in notes  # the <strong> scores


def test_a_page_reads_no_script_and_names_its_benchmark_by_heading(tmp_path):
    s, f = _one(FIX / "rmtppad_results.html")
    assert "injected" not in {r[0] for r in _q(s, "SELECT name FROM models")}
    assert any(n == "not read: 1 <script> element, 1 <style> element" for n in f.notes), f.notes
    assert _q(s, "SELECT DISTINCT benchmark FROM datasets") == [("rmtppad_results",)]  # one leaderboard: the stem


def test_a_dataframe_saved_as_html_stores_what_its_csv_stores(tmp_path):
    """``DataFrame.to_html`` (a header cell without a name over the index, ``<th>`` row headers) against
    ``DataFrame.to_csv`` of the same frame."""
    import pandas as pd

    df = pd.read_csv(FIX / "rmtppad_results.csv")
    (tmp_path / "h").mkdir()
    (tmp_path / "c").mkdir()
    df.to_html(tmp_path / "h" / "board.html")
    df.to_csv(tmp_path / "c" / "board.csv")
    s1, f1 = _one(tmp_path / "h" / "board.html")
    s2, f2 = _one(tmp_path / "c" / "board.csv")
    assert f1.status == f2.status == "ingested", (f1.reason, f2.reason)
    assert _contents(s1) == _contents(s2)
    assert len(_contents(s1)[0]) == 36


def test_markers_spans_links_and_row_headers(tmp_path):
    p = _page(tmp_path, """<h2>Board</h2><table>
<tr><th colspan="4">Results on the test set</th></tr>
<tr><th>Model</th><th>Family</th><th>MMLU</th><th>GSM8K</th></tr>
<tr><th><a href="https://huggingface.co/org-a/tiny">tiny</a></th><td rowspan="2">Llama</td>
    <td>85.2<sup>*</sup></td><td>70.1<sup>&dagger;</sup></td></tr>
<tr><td>&#x1F947; <b>big&amp;co</b></td><td>81.0<sub>(repr.)</sub></td><td>10<sup>4</sup></td></tr>
<tr><td>small</td><td>Qwen</td><td colspan="2">60.5</td></tr>
<tr><td>none</td><td>Qwen</td><td>-<sup>1</sup></td><td>74.0</td></tr>
</table>""")
    s, f = _one(p)
    assert f.status == "ingested", f.reason  # a power is no number: GSM8K (one number, one text) is model metadata
    assert ('"10^4"',) in _q(s, "SELECT value FROM model_metadata WHERE key = 'GSM8K'")
    p.write_text(p.read_text().replace("10<sup>4</sup>", "72.5<sup>*</sup>"))
    s, f = _one(p)
    assert f.status == "ingested", f.reason
    rows = _q(s, "SELECT m.name, d.name, r.value FROM results r JOIN models m USING (model_id) JOIN datasets d "
                 "USING (dataset_id) ORDER BY ALL")
    assert rows == [("big&co", "GSM8K", 72.5), ("big&co", "MMLU", 81.0),
                    ("none", "GSM8K", 74.0), ("org-a/tiny", "GSM8K", 70.1), ("org-a/tiny", "MMLU", 85.2),
                    ("small", "MMLU", 60.5)]
    fam = dict(_q(s, "SELECT m.name, value FROM model_metadata JOIN models m USING (model_id) WHERE key = 'Family'"))
    assert fam == {"org-a/tiny": '"Llama"', "big&co": '"Llama"', "small": '"Qwen"', "none": '"Qwen"'}  # rowspan
    for said in ("<sup>/<sub> markers left out of 5 score cells, each marker with its count: '*' 2, "
                 "'(repr.)' 1, '1' 1, '†' 1",
                 "1 cell spanning rows (rowspan) repeated on each row it spans",
                 "1 body cell spanning columns (colspan) read in its first column, the others empty",
                 "1 header row of one cell across the table read as the table's title",
                 "emoji before or after the text of 1 cell left out", "Hugging Face page"):
        assert any(said in n for n in f.notes), (said, f.notes)


def test_several_tables_each_a_benchmark_by_caption_or_heading_pipe_tables_beside(tmp_path):
    p = _page(tmp_path, "# Leaderboards\n\n## Zero-shot\n\n| Model | A | B |\n|---|---|---|\n| m1 | 1 | 2 |\n\n"
                        "<h2>Few-shot</h2>\n<table><tr><th>Model</th><th>A</th><th>B</th></tr>"
                        "<tr><td>m1</td><td>3</td><td>4</td></tr></table>\n\n"
                        "<table><caption>Chain of thought</caption><tr><th>Model</th><th>A</th></tr>"
                        "<tr><td>m1</td><td>5</td></tr></table>\n\n"
                        "```html\n<table><tr><th>Model</th><th>A</th></tr><tr><td>example</td><td>9</td></tr></table>\n"
                        "```\nWrite `<table><tr><th>Model</th>` to start.\n", name="README.md")
    s, f = _one(p)
    assert f.status == "ingested", f.reason
    assert _q(s, "SELECT d.benchmark, d.name, r.value FROM results r JOIN datasets d USING (dataset_id) ORDER BY 3") \
        == [("Zero-shot", "A", 1.0), ("Zero-shot", "B", 2.0), ("Few-shot", "A", 3.0), ("Few-shot", "B", 4.0),
            ("Chain of thought", "A", 5.0)]
    assert "example" not in {r[0] for r in _q(s, "SELECT name FROM models")}


def test_an_error_in_one_table_refuses_the_file_naming_its_line(tmp_path):
    p = _page(tmp_path, "<h2>A</h2>\n<table><tr><th>Model</th><th>x</th></tr>\n<tr><td>m</td><td>1</td></tr>\n"
                        "<tr><td>n</td><td>2</td></tr></table>\n<h2>B</h2>\n<table>\n"
                        "<tr><th>Model</th><th>x</th></tr>\n"
                        "<tr><td>m</td><td>1</td></tr>\n<tr><td>n</td><td>inf</td></tr>\n</table>\n")
    s, f = _one(p)
    assert f.status == "skipped"
    assert f.reason == "the table at line 6 (under 'B'): line 9: 'x' score is 'inf', not finite", f.reason
    assert _q(s, "SELECT count(*) FROM results") == [(0,)]


def test_ordinary_pages_and_docs_are_not_claimed(tmp_path):
    """Documentation pages (pydoc's, with layout tables), a DataFrame's ``describe()`` and the repository's own
    Markdown are no leaderboards: a walk passes them over, as before."""
    import pydoc

    import pandas as pd

    from harness_ext.adapters.csv_html import page_leaderboard
    from harness_ext.adapters.csv_markdown import markdown_leaderboard

    site = tmp_path / "site"
    site.mkdir()
    for name in ("json", "csv", "argparse", "collections"):
        obj, _ = pydoc.resolve(name)
        (site / f"{name}.html").write_text(pydoc.html.page(pydoc.describe(obj), pydoc.html.document(obj, name)))
    pd.read_csv(FIX / "rmtppad_results.csv").describe().to_html(site / "describe.html")
    assert [p.name for p in site.iterdir() if page_leaderboard(p.read_bytes(), ".html")] == []
    _, report = _ingest(site)
    assert report.files == []
    mds = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / n for n in ("README.md", "README_PLUGINS.md", "CHANGELOG.md")]
    changed = [p.name for p in mds if page_leaderboard(p.read_bytes(), ".md") != markdown_leaderboard(p.read_bytes())]
    assert changed == []


def test_a_page_without_a_leaderboard_says_why_when_named(tmp_path):
    p = _page(tmp_path, "<table><tr><th>Option</th><th>Default</th></tr><tr><td>--db</td><td>1</td></tr></table>")
    _, f = _one(p)
    assert f.status == "skipped"
    assert "an HTML file whose table is no leaderboard the CSV adapter reads" in f.reason
    assert "no model column in its header (Option, Default)" in f.reason


# -- hostile pages ------------------------------------------------------------------------------------------------

def test_unclosed_tags_and_nested_tables(tmp_path):
    p = _page(tmp_path, "<table><tr><th>Model<th>A<th>B\n<tr><td>m1<td>1<td>2\n"
                        "<tr><td>m2<td><table><tr><th>Model<th>C</tr><tr><td>inner<td>7</tr></table>3<td>4\n")
    s, f = _one(p)
    assert f.status == "ingested", f.reason
    assert _q(s, "SELECT m.name, d.benchmark, d.name, r.value FROM results r JOIN models m USING (model_id) "
                 "JOIN datasets d USING (dataset_id) ORDER BY 4") == [
        ("m1", "board table 1", "A", 1.0), ("m1", "board table 1", "B", 2.0), ("m2", "board table 1", "A", 3.0),
        ("m2", "board table 1", "B", 4.0), ("inner", "board table 2", "C", 7.0)]
    notes = "\n".join(f.notes)
    assert "the table at line 3, in a cell of the table at line 1, read on its own" in notes
    assert "the table at line 1 is not closed (no </table>): read to the end of the file" in notes


def test_a_row_of_a_million_cells_is_one_error(tmp_path):
    p = _page(tmp_path, "<table><tr><th>Model<th>A</tr><tr><td>m<td>1" + "<td>" * (10 ** 6 - 1) + "</tr></table>")
    assert p.stat().st_size < 4 << 20
    t0 = time.perf_counter()
    s, f = _one(p)
    assert f.status == "skipped" and "line 1 of the table at line 1 has 1,000,001 cells; at most 4,096" in f.reason, \
        f.reason
    assert _q(s, "SELECT count(*) FROM results") == [(0,)]
    assert time.perf_counter() - t0 < 60


def test_spans_are_capped_as_browsers_cap_them(tmp_path):
    p = _page(tmp_path, '<table><tr><th>Model</th><th colspan="1000000000">A</th></tr>'
                        '<tr><td rowspan="0">m</td><td>1</td></tr></table>')
    s, f = _one(p)
    assert f.status == "ingested", f.reason  # colspan capped at 1000: 1,001 columns, the spanned ones numbered
    names = [r[0] for r in _q(s, "SELECT name FROM datasets ORDER BY name")]
    assert names == ["A"] and _q(s, "SELECT value FROM results") == [(1.0,)]
    assert any(n.startswith("999 columns with no value in any row: A (2), A (3)") for n in f.notes), f.notes


def test_paths_templates_and_entity_declarations_are_text(tmp_path):
    p = _page(tmp_path, '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
                        '<table><tr><th>Model</th><th>Family</th><th>A</th></tr>'
                        '<tr><td>../../etc/passwd</td><td>&xxe;</td><td>1</td></tr>'
                        '<tr><td>m2</td><td>{{ config.__class__ }}</td><td>2</td></tr>'
                        '<tr><td>m3</td><td>!!python/object:os.system</td><td>3</td></tr>'
                        '<tr><td><a href="../../secret">m4</a></td><td>{% include x %}</td><td>4</td></tr></table>')
    s, f = _one(p)
    assert f.status == "ingested", f.reason
    assert {r[0] for r in _q(s, "SELECT name FROM models")} == {"../../etc/passwd", "m2", "m3", "m4"}
    fam = {r[0] for r in _q(s, "SELECT value FROM model_metadata WHERE key = 'Family'")}
    assert fam == {'"&xxe;"', '"{{ config.__class__ }}"', '"!!python/object:os.system"', '"{% include x %}"'}
    assert not (tmp_path / "etc").exists()


def test_deep_nesting_is_read_without_recursion(tmp_path):
    p = _page(tmp_path, "<div>" * 100_000 + "<table><tr><th>Model</th><th>A</th></tr><tr><td>m</td><td>1"
              + "<table><tr><td>" * 50 + "x" + "</td></tr></table>" * 50 + "</td></tr></table>" + "</div>" * 100_000)
    s, f = _one(p)
    assert f.status == "ingested", f.reason
    assert _q(s, "SELECT value FROM results") == [(1.0,)]
    assert any("nested more than 8 deep" in n for n in f.notes), f.notes


def test_a_huge_page_is_refused_with_its_size_and_other_text_is_refused(tmp_path):
    rows = "".join(f"<tr><td>model-{i}</td><td>{i % 100}</td></tr>" for i in range(150_000))
    p = _page(tmp_path, "<table><tr><th>Model</th><th>A</th></tr>" + rows + "</table>")
    assert p.stat().st_size > 4 << 20
    for arg in (p, tmp_path):  # named, and found in a walk
        s, report = _ingest(arg)
        (f,) = report.files
        assert f.status == "skipped" and "an HTML file of" in f.reason and "at most 4 MiB" in f.reason, f.reason
    p.unlink()
    q = tmp_path / "gbk.html"
    q.write_bytes("<table><tr><th>Model</th><th>A</th></tr><tr><td>模型</td><td>1</td></tr></table>".encode("gbk"))
    _, f = _one(q)
    assert f.status == "skipped" and "not UTF-8 text" in f.reason, f.reason


@pytest.mark.parametrize("name, header", [
    ("board.md", "| Model | GSM8K | MMLU<br/>-Redux | Zebra-<br>Logic | Overall<br>(Val) |\n|---|---|---|---|---|\n"),
    ("board.html", "<table><tr><th>Model</th><th>GSM8K</th><th>MMLU<br/>-Redux</th><th>Zebra-<br>Logic</th>"
                   "<th>Overall<br>(Val)</th></tr>\n"),
], ids=["markdown", "html"])
def test_a_line_break_splitting_a_word_at_a_hyphen_joins_it(tmp_path, name, header):
    # ZeroEval's board (Bill Yuchen Lin) heads a column 'MMLU<br/>-Redux': read as a space it was 'MMLU -Redux'; a
    # break elsewhere stays a space ('Overall<br>(Val)', VLMEvalKit's MMMU board)
    rows = [("model-a", 81.2, 70.1, 30.5, 51.0), ("model-b", 60.3, 55.4, 12.0, 40.2)]
    if name.endswith(".md"):
        text = header + "".join(f"| {m} | {a} | {b} | {c} | {d} |\n" for m, a, b, c, d in rows)
    else:
        text = header + "".join(f"<tr><td>{m}</td><td>{a}</td><td>{b}</td><td>{c}</td><td>{d}</td></tr>\n"
                                for m, a, b, c, d in rows) + "</table>\n"
    s, _ = _one(_page(tmp_path, text, name))
    names = {n for (n,) in _q(s, "SELECT name FROM datasets")}
    assert names == {"GSM8K", "MMLU-Redux", "Zebra-Logic", "Overall (Val)"}, names


def test_zeroevals_rebuilt_board_names_mmlu_redux_and_math_l5(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "zeroeval.md"
    subprocess.run([sys.executable, str(ROOT / "benchmarks/screens/walk42/rebuild_zeroeval.py"), str(out)], check=True)
    s, _ = _one(out)
    assert {n for (n,) in _q(s, "SELECT name FROM datasets")} == {"GSM8K", "MMLU-Redux", "ZebraLogic", "CRUX",
                                                                   "MATH-L5"}
