"""Leaderboards published as Markdown pipe tables, read by the CSV adapter's rules
(:mod:`harness_ext.adapters.csv_markdown`).

Real files (``tests/fixtures/markdown``, see its PROVENANCE.md): VLMEvalKit's ``results/MMVet.md`` whole (Apache-2.0)
with its cell-for-cell CSV conversion, slices of its ``MMMU.md``, ``HallusionBench.md`` and ``MME.md``, 8 rows of the
chinese-llm-benchmark ``alldata.md`` (its CSV conversion is ``tests/fixtures/csv_wild/
chinese_llm_benchmark_alldata_slice.csv``) and a slice of the CMMLU README's leaderboard (Li et al. 2023), two tables
under two headings. Found as a new user: a board published only as Markdown had to be converted to CSV by hand. The
hostile tables at the end are composed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.types import SourceFile

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "markdown"


def _ingest(*paths, **kw):
    s = Store.open(":memory:")
    report = ingest_paths(s, [str(p) for p in paths], show_progress=False, **kw)
    return s, report


def _contents(s):
    q = lambda sql: s.con.execute(sql).fetchall()  # noqa: E731
    results = q("SELECT m.name, d.benchmark, d.name, d.kind, d.metric, r.value FROM results r JOIN models m "
                "USING (model_id) JOIN datasets d USING (dataset_id) ORDER BY ALL")
    datasets = q("SELECT * EXCLUDE (dataset_id) FROM datasets ORDER BY ALL")
    meta = q("SELECT m.name, key, value FROM model_metadata JOIN models m USING (model_id) ORDER BY ALL")
    models = q("SELECT name, metadata FROM models ORDER BY ALL")
    return results, datasets, meta, models


@pytest.mark.parametrize("md, csv, n", [
    (FIX / "mmvet_vlmevalkit.md", FIX / "mmvet_vlmevalkit.csv", 238),
    (FIX / "chinese_llm_alldata_slice.md", ROOT / "tests/fixtures/csv_wild/chinese_llm_benchmark_alldata_slice.csv", 56),
], ids=["vlmevalkit-mmvet", "chinese-llm-alldata"])
def test_a_markdown_board_stores_what_its_csv_conversion_stores(tmp_path, md, csv, n):
    # the same stem, so the benchmark (the file's stem) is the same
    (tmp_path / "md").mkdir()
    (tmp_path / "csv").mkdir()
    a, b = tmp_path / "md" / "board.md", tmp_path / "csv" / "board.csv"
    a.write_bytes(md.read_bytes())
    b.write_bytes(csv.read_bytes())
    s1, r1 = _ingest(a)
    s2, r2 = _ingest(b)
    (f1,), (f2,) = r1.files, r2.files
    assert f1.status == f2.status == "ingested", (f1.reason, f2.reason)
    assert f1.adapter == "csv"
    got, want = _contents(s1), _contents(s2)
    assert len(got[0]) == n
    assert got == want
    assert f1.notes == f2.notes


def test_a_readme_with_two_leaderboards_reads_each_under_its_heading():
    s, report = _ingest(FIX / "cmmlu_readme_slice.md")
    (f,) = report.files
    assert f.status == "ingested", f.reason
    benches = s.con.execute("SELECT DISTINCT benchmark FROM datasets ORDER BY 1").fetchall()
    assert benches == [("Five-shot",), ("Zero-shot",)]
    models = sorted(r[0] for r in s.con.execute("SELECT name FROM models").fetchall())
    assert models == sorted(["PCI-TransGPT", "GPT4", "XuanYuan-13B", "ChatGPT", "LLaMA-65B", "BlueLM", "QuarkLLM"])
    # bold scores are numbers; the tab-separated cells of XuanYuan-13B too
    v = s.con.execute("SELECT r.value FROM results r JOIN models m USING (model_id) JOIN datasets d USING (dataset_id) "
                      "WHERE m.name = 'PCI-TransGPT' AND d.name = '人文学科' AND d.benchmark = 'Five-shot'").fetchall()
    assert v == [(86.46,)]
    assert s.con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 2 * 7 * 6
    notes = "\n".join(f.notes)
    assert "the table at line 9 (under 'Five-shot') read as benchmark 'Five-shot'" in notes
    assert "the table at line 24 (under 'Zero-shot') read as benchmark 'Zero-shot'" in notes
    assert "4 rows shorter than the header read with empty cells" in notes  # the section rows
    assert "random or chance baseline ('Random')" in notes


def test_a_sidecar_benchmark_prefixes_the_headings(tmp_path):
    p = tmp_path / "README.md"
    p.write_bytes((FIX / "cmmlu_readme_slice.md").read_bytes())
    (tmp_path / "README.md.meta.yaml").write_text("benchmark: cmmlu\n")
    s, _ = _ingest(p)
    benches = s.con.execute("SELECT DISTINCT benchmark FROM datasets ORDER BY 1").fetchall()
    assert benches == [("cmmlu / Five-shot",), ("cmmlu / Zero-shot",)]


def test_other_tables_are_noted_not_read():
    s, report = _ingest(FIX / "vlmevalkit_hallusionbench_slice.md")
    (f,) = report.files
    assert f.status == "ingested", f.reason
    assert s.con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 6 * 3
    assert any(n.startswith("1 table not read, not a leaderboard: line 7") and "Original Figure" in n for n in f.notes)


def test_br_in_headers_and_reference_rows():
    s, report = _ingest(FIX / "vlmevalkit_mmmu_slice.md")
    (f,) = report.files
    names = {r[0] for r in s.con.execute("SELECT name FROM datasets").fetchall()}
    assert "Overall (Val)" in names and "Art & Design (Val)" in names
    assert not {"Frequent Choice", "Random Choice"} & {r[0] for r in s.con.execute("SELECT name FROM models").fetchall()}


def test_a_file_without_a_leaderboard_table_says_why_when_named():
    _, report = _ingest(FIX / "vlmevalkit_mme_slice.md")
    (f,) = report.files
    assert f.status == "skipped"
    assert "the table at line 11 (under 'MME Scores (Vanilla / ChatGPT Answer Extraction)'): no column of numbers" \
        in f.reason and "2131 / 2149" in f.reason


def test_a_folder_of_docs_claims_nothing(tmp_path):
    """The repository's own docs and READMEs (tables of formats, options and figures) are not leaderboards; in a
    walk they are passed over as before, without an error."""
    from harness_ext.adapters.csv_markdown import markdown_leaderboard

    docs = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / n for n in ("README.md", "README_PLUGINS.md",
                                                                        "CHANGELOG.md")]
    claimed = [p.name for p in docs if markdown_leaderboard(p.read_bytes())]
    assert claimed == []
    _, report = _ingest(ROOT / "docs")
    assert report.files == []


def test_lm_eval_tables_and_model_cards_keep_their_adapters():
    from harness_ext.adapters.csv_table import can_handle

    mds = [p for d in ("lm_eval_printed", "lm_eval_tables", "lm_eval_table_early", "lm_eval_results_readme",
                       "model_card", "lm_eval_details_cards") for p in (ROOT / "tests/fixtures" / d).rglob("*.md")]
    assert len(mds) > 10
    assert [p.name for p in mds if can_handle(SourceFile(p))] == []


def _board(tmp_path, text, name="board.md"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_inline_markup_escaped_pipes_entities_and_emoji(tmp_path):
    p = _board(tmp_path, "Model | MMLU | GSM8K\n:-- | --: | ---\n"
                         "🥇 **gpt\\|x** | **81.2** | 90.1\n"
                         "`llama&amp;co` | <u>70.5</u> | 60<br>\n"
                         "<b>qwen</b> 🔥 | 65 | 55.5\n")
    s, report = _ingest(p)
    (f,) = report.files
    assert f.status == "ingested", f.reason
    assert sorted(r[0] for r in s.con.execute("SELECT name FROM models").fetchall()) == ["gpt|x", "llama&co", "qwen"]
    assert s.con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 6
    assert any("emoji before or after the text of 2 cells left out" in n for n in f.notes)
    assert any("cells written with Markdown or HTML markup" in n for n in f.notes)


def test_ragged_rows(tmp_path):
    p = _board(tmp_path, "| Model | A | B |\n|---|---|---|\n| m1 | 1 | 2 |\n| m2 | 3 |\n| m3 | 4 | 5 | 6 | 7 |\n")
    s, report = _ingest(p)
    (f,) = report.files
    assert f.status == "ingested", f.reason
    assert s.con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 5  # m2 has no B
    notes = "\n".join(f.notes)
    assert "1 row shorter than the header read with empty cells at the end, as GitHub shows them (line 4)" in notes
    assert "without a name in the header left out" in notes  # m3's two cells beyond the header


def test_an_error_in_one_table_refuses_the_file_naming_its_line(tmp_path):
    p = _board(tmp_path, "## A\n\n| Model | x | y |\n|---|---|---|\n| m | 1 | 2 |\n| n | 3 | 4 |\n\n"
                         "## B\n\n| Model | x | y |\n|---|---|---|\n| m | 1 | inf |\n")
    s, report = _ingest(p)
    (f,) = report.files
    assert f.status == "skipped"
    assert f.reason == "the table at line 10 (under 'B'): line 12: 'y' score is 'inf', not finite", f.reason
    assert s.con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 0


def test_a_header_of_a_million_columns_is_one_error(tmp_path):
    n = 10 ** 6  # header and delimiter rows under 4 MiB, and one row
    p = _board(tmp_path, "|Model" + "|c" * n + "|\n" + "|-" * (n + 1) + "|\n" + "|m|1|\n")
    t0 = time.perf_counter()
    s, report = _ingest(p)
    (f,) = report.files
    assert f.status == "skipped" and "1,000,001 columns; at most 4,096" in f.reason, f.reason
    assert s.con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 0
    assert time.perf_counter() - t0 < 60
    _, report = _ingest(tmp_path)  # found in a walk: the same
    assert "1,000,001 columns" in report.files[0].reason


def test_a_huge_file_whose_head_shows_no_table_is_named_with_its_size(tmp_path):
    p = _board(tmp_path, "|Model" + "|c" * (3 << 20) + "|\n")
    (f,) = _ingest(p)[1].files
    assert f.status == "skipped" and "a Markdown file of 6,291,464 bytes; tables are read from files of at most 4 MiB" \
        in f.reason, f.reason


def test_a_huge_file_is_refused_with_its_size(tmp_path):
    rows = "".join(f"| model-{i} | {i % 100} | {i % 7} |\n" for i in range(200_000))
    p = _board(tmp_path, "| Model | A | B |\n|---|---|---|\n" + rows)
    assert p.stat().st_size > 4 << 20
    for arg in (p, tmp_path):  # named, and found in a walk
        s, report = _ingest(arg)
        (f,) = report.files
        assert f.status == "skipped" and "a Markdown file of" in f.reason and "at most 4 MiB" in f.reason, f.reason
        assert s.con.execute("SELECT count(*) FROM results").fetchall()[0][0] == 0


def test_paths_and_templates_in_cells_are_text(tmp_path):
    p = _board(tmp_path, "| Model | Family | A |\n|---|---|---|\n| ../../etc/passwd | {{ config.__class__ }} | 1 |\n"
                         "| m2 | !!python/object:os.system | 2 |\n| m3 | {% include x %} | 3 |\n")
    s, report = _ingest(p)
    (f,) = report.files
    assert f.status == "ingested", f.reason
    assert "../../etc/passwd" in {r[0] for r in s.con.execute("SELECT name FROM models").fetchall()}
    fam = {r[0] for r in s.con.execute("SELECT value FROM model_metadata WHERE key = 'Family'").fetchall()}
    assert fam == {'"{{ config.__class__ }}"', '"!!python/object:os.system"', '"{% include x %}"'}  # JSON strings
    assert not (tmp_path / "etc").exists()


def test_tables_in_code_fences_and_front_matter_are_not_read(tmp_path):
    from harness_ext.adapters.csv_markdown import markdown_leaderboard

    fenced = "# Example\n\n```\n| Model | A |\n|---|---|\n| m | 1 |\n```\n"
    assert not markdown_leaderboard(fenced.encode())
    assert markdown_leaderboard(fenced.replace("```\n", "").encode())
