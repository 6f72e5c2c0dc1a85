"""Leaderboard CSVs from the wild, read as a new user would: a cost table, a leaderboard history with one row
per model and date, the Open LLM Leaderboard v2 flattened to columns, and two tables that already read right.

Real slices in fixtures/csv_wild (sources, commits and licences in its PROVENANCE.md). Each test runs on both
reading paths: record by record, and column by column (the path of files above 1 MB).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FIX = Path(__file__).parent / "fixtures" / "csv_wild"
COST = FIX / "livebench_cost_2026_01_08.csv"
HISTORY = FIX / "lmarena_history_slice.csv"
ARENA_TEXT = FIX / "lmarena_text_slice.csv"
OLL_V2 = FIX / "open_llm_leaderboard_v2_arena_merged_slice.csv"
METABENCH = FIX / "metabench_open_llm_leaderboard_slice.csv"
BFCL = FIX / "bfcl_data_overall_slice.csv"
HELMET = FIX / "helmet_agg_results_128k_slice.csv"
CHINESE = FIX / "chinese_llm_benchmark_alldata_slice.csv"
MMVET = FIX / "vlmevalkit_mmvet_slice.csv"

@pytest.fixture
def read_path(monkeypatch, request):
    import harness_ext.adapters.csv_table as csv_table

    monkeypatch.setattr(csv_table, "COLUMNAR_MIN_BYTES", request.param)


def _ingest(store, *paths, **kw):
    rep = ingest_paths(store, list(paths), show_progress=False, **kw)
    assert len(rep.by_status("ingested")) == len(paths), [(f.path, f.reason) for f in rep.files]
    return rep


def _datasets(store):
    return store.con.execute("SELECT name, metric, is_primary, kind, scale, min_score, max_score, higher_is_better "
                             "FROM datasets ORDER BY dataset_id").df()


BOTH = pytest.mark.parametrize("read_path", [0, 1 << 40], ids=["columnar", "records"], indirect=True)


@BOTH
def test_cost_table_is_lower_is_better_on_an_open_scale(read_path):
    # LiveBench's cost_<date>.csv holds dollars per task (0.03 to 62.4); it was stored as percentage scores,
    # higher is better, so the cheapest model ranked last.
    with Store.open(":memory:") as s:
        rep = _ingest(s, COST)
        d = _datasets(s)
        assert len(d) == 20
        assert set(d["scale"]) == {"unbounded"} and d["min_score"].isna().all()
        assert (d["higher_is_better"] == False).all()  # noqa: E712 - a pandas column
        notes = rep.files[0].notes
        assert any(n.startswith("20 columns read as lower-is-better on an open scale") and "'cost'" in n for n in notes), notes
        assert any(n.startswith("3 columns with no value in any row: javascript, python, typescript") for n in notes)
        m = load_matrix(s, MatrixQuery())
        # grok-build-0.1 is the cheapest on every task but tablereformat and zebra_puzzle: the best, normalised
        assert m.loc["grok-build-0.1", "AMPS_Hard"] == m["AMPS_Hard"].max()
        assert m.loc["gpt-5.4-xhigh", "code_generation"] == m["code_generation"].min()


@BOTH
def test_cost_table_sidecar_declarations_win_over_the_file_name(read_path, tmp_path):
    f = tmp_path / COST.name
    f.write_bytes(COST.read_bytes())
    (tmp_path / (COST.name + ".meta.yaml")).write_text(
        "columns:\n  AMPS_Hard: {higher_is_better: true}\n  olympiad: {scale: unbounded}\n")
    with Store.open(":memory:") as s:
        rep = _ingest(s, f)
        d = _datasets(s).set_index("name")
        assert bool(d.loc["AMPS_Hard", "higher_is_better"]) is True and d.loc["AMPS_Hard", "scale"] == "percent"
        assert d["higher_is_better"].isna()["olympiad"] and d.loc["olympiad", "scale"] == "unbounded"
        assert any(n.startswith("18 columns read as lower-is-better") for n in rep.files[0].notes)


@pytest.mark.parametrize("name", ["table_2026_01_08.csv", "cost_effective_eval.csv", "costume_bench.csv"])
def test_a_file_not_named_as_costs_keeps_its_scales(tmp_path, name):
    f = tmp_path / name
    f.write_bytes(COST.read_bytes())
    with Store.open(":memory:") as s:
        rep = _ingest(s, f)
        assert set(_datasets(s)["scale"]) == {"percent"}
        assert not any("lower-is-better" in n for n in rep.files[0].notes)


@BOTH
def test_models_on_several_rows_are_reported_with_the_columns_that_differ(read_path):
    # One row per model and snapshot date: four repeated models with other scores were reported as conflicts,
    # two with equal scores not at all, and nothing said the rows were told apart by their date.
    with Store.open(":memory:") as s:
        rep = _ingest(s, HISTORY)
        f = rep.files[0]
        assert len(f.conflicts) == 4
        note = next(n for n in f.notes if "listed on more than one row" in n)
        assert note.startswith("6 models listed on more than one row (12 rows): gemma-2-27b-it, llama-3-70b-instruct, "
                               "gpt-4-0613, command-r-plus, gpt-3.5-turbo-0125, llama-2-70b-chat; each one's first row is "
                               "stored")
        assert note.endswith("the rows differ in date, rank, ci95, votes")
        md = s.model_metadata(["gemma-2-27b-it"]).set_index("key")["value"]
        assert md["date"] == "2025-11-09" and md["votes"] == 76195.0  # the first row's, thousands separator read
        m = load_matrix(s, MatrixQuery(normalise="none"))
        assert m.shape == (9, 1) and m.loc["gpt-4-0613", "score"] == 1275


def test_a_table_without_repeated_models_has_no_such_note():
    with Store.open(":memory:") as s:
        rep = _ingest(s, ARENA_TEXT, METABENCH)
        assert not any("more than one row" in n for f in rep.files for n in f.notes)


@BOTH
def test_flattened_open_llm_leaderboard_v2_one_dataset_per_task(read_path):
    # Each task's raw and normalised columns were two datasets (reduce could pick both views of one task),
    # model_average_score a dataset, and metadata_generation / metadata_hub_hearts scores.
    with Store.open(":memory:") as s:
        rep = _ingest(s, OLL_V2)
        d = _datasets(s)
        tasks = ["ifeval", "bbh", "math", "gpqa", "musr", "mmlu_pro"]
        for t in tasks:
            rows = d[d["name"] == f"evaluations_{t}"].set_index("metric")
            assert list(rows.index) == ["value", "normalized_score"]
            assert bool(rows.loc["value", "is_primary"]) and not bool(rows.loc["normalized_score", "is_primary"])
            assert rows.loc["value", "scale"] == "proportion" and rows.loc["normalized_score", "scale"] == "percent"
        agg = d[d["kind"] == "aggregate"]
        assert list(agg["name"]) == ["model_average_score"]
        assert "metadata_generation" not in set(d["name"]) and "metadata_hub_hearts" not in set(d["name"])
        assert set(d.loc[d["kind"] == "dataset", "name"]) == {f"evaluations_{t}" for t in tasks} | {"arena_score"}
        md = s.model_metadata(["google/gemma-2-27b-it"]).set_index("key")["value"]
        assert md["metadata_generation"] == 1.0 and md["metadata_hub_hearts"] == 469.0 and md["model"] == "Gemma-2-27B-it"
        notes = rep.files[0].notes
        assert any(n.startswith("1 column stored as aggregate: model_average_score") for n in notes)
        assert not any("read as percentages" in n for n in notes)
        m = load_matrix(s, MatrixQuery(normalise="none"))
        assert m.shape == (8, 7)


def test_arena_text_table_and_metabench_scrape_read_as_before():
    # Read right before these changes: the Arena table's "+5/-5" interval and knowledge cut-offs are text
    # metadata, rank/votes metadata by name, arena_score an Elo rating; metabench's scrape of the Open LLM
    # Leaderboard v1 keeps True/False flags and the sha as metadata, avg as the aggregate, empty cells missing.
    with Store.open(":memory:") as s:
        _ingest(s, ARENA_TEXT, METABENCH)
        d = _datasets(s).set_index("name")
        assert d.loc["arena_score", "scale"] == "elo"
        assert d.loc["avg", "kind"] == "aggregate"
        assert set(d.index[d["kind"] == "dataset"]) == {"arena_score", "arc", "hellaswag", "mmlu", "truthfulqa",
                                                         "winogrande", "gsm8k"}
        md = s.model_metadata(["Gemini-2.5-Pro"]).set_index("key")["value"]
        assert md["95_pct_ci"] == "+5/-5" and md["rank_stylectrl"] == 1.0 and md["votes"] == 22146.0
        m = load_matrix(s, MatrixQuery(benchmarks=("metabench_open_llm_leaderboard_slice",), normalise="none"))
        assert m.shape == (10, 6)
        assert m.loc["01-ai/Yi-34B"].notna().sum() == 2  # an unfinished run: winogrande and gsm8k only
        md = s.model_metadata(["01-ai/Yi-34B"]).set_index("key")["value"]
        assert md["complete"] == "False" and md["precision"] == "bfloat16"


@BOTH
def test_one_row_per_model_and_benchmark_is_not_a_repeat(read_path, tmp_path):
    # A benchmark column sends each row to its own benchmark: a model on one row per benchmark is listed once in each.
    f = tmp_path / "boards.csv"
    f.write_text("model,benchmark,MMLU,GSM8K\na,x,0.5,0.4\nb,x,0.6,0.5\na,y,0.7,0.6\nb,y,0.8,0.7\na,y,0.7,0.6\n")
    with Store.open(":memory:") as s:
        rep = _ingest(s, f)
        notes = [n for n in rep.files[0].notes if "more than one row" in n]
        assert notes == ["1 model listed on more than one row (2 rows): a; its first row is stored (its metadata, and "
                         "its scores where the rows disagree: each reported as a conflict)"]


@BOTH
def test_numeric_interval_columns_named_with_their_level_are_not_scores(read_path, tmp_path):
    # LMArena's "ci95" and "95_pct_ci" hold text ("+5/-5") in its exports, but a table that writes the width as a
    # number had it stored as a dataset beside the score: the "ci" rule needed a word boundary after "ci".
    path = tmp_path / "arena.csv"
    path.write_text("model,score,ci95,95_pct_ci\n" + "".join(f"m{i},{1200 + 10 * i},{5 + i},{4 + i}\n" for i in range(6)))
    with Store.open(":memory:") as s:
        _ingest(s, path)
        assert list(_datasets(s)["name"]) == ["score"]


@BOTH
def test_task_names_with_param_and_context_are_scores(read_path):
    # BFCL v4's "Multi Turn Miss Param" and "Multi Turn Long Context" are tasks: they were stored as model
    # metadata, as a parameter count or a context window would be. Its cost, latency and rank stay metadata.
    with Store.open(":memory:") as s:
        rep = _ingest(s, BFCL)
        d = _datasets(s).set_index("name")
        assert {"Multi Turn Miss Param", "Multi Turn Long Context", "Multi Turn Base"} <= set(d.index)
        assert d.loc["Multi Turn Miss Param", "scale"] == "percent"
        assert d.loc["Overall Acc", "kind"] == "aggregate"
        meta = set(s.model_metadata()["key"])
        assert {"Rank", "Total Cost ($)", "Latency Mean (s)", "Model Link"} <= meta
        assert not meta & {"Multi Turn Miss Param", "Multi Turn Long Context"}
        notes = rep.files[0].notes
        assert any(n.startswith("5 columns stored as model metadata, not scores: Rank, Total Cost ($), Latency Mean")
                   for n in notes), notes
        m = load_matrix(s, MatrixQuery(normalise="none"))
        assert m.shape == (2, 15)  # Non-Live AST Acc and Multi Turn Acc: aggregates (the test below)
        assert m.loc["openai/gpt-oss-20b (FC) (vLLM)", "Multi Turn Long Context"] == pytest.approx(47.5)
        assert m.loc["openai/gpt-oss-120b (FC) (vLLM)", "Multi Turn Miss Param"] == pytest.approx(49.5)



@BOTH
def test_category_accuracy_columns_that_are_plain_means_are_aggregates(read_path, tmp_path):
    """BFCL v4's category columns average other columns: ``Non-Live AST Acc`` is the plain mean of the four
    ``Non-Live ...`` columns (36.88 of 62.00, 85.50, 0 and 0) and ``Multi Turn Acc`` of the four ``Multi Turn ...``
    ones, on both rows; they were datasets ``reduce`` could pick beside the columns they average. ``Live Acc`` is a
    mean weighted by each category's number of tests, which two rows cannot tell: it stays a dataset, noted. A copy
    cut to one model stores the same aggregates; a derived copy whose ``Multi Turn Acc`` is off by a point keeps it
    as a dataset (the name alone is no aggregate)."""
    lines = BFCL.read_text().splitlines()
    one = tmp_path / "one" / BFCL.name
    one.parent.mkdir()
    one.write_text("\n".join(lines[:2]) + "\n")
    off = tmp_path / "off" / BFCL.name
    off.parent.mkdir()
    off.write_text("\n".join([lines[0], lines[1].replace(",53.25%,", ",54.25%,"), lines[2]]) + "\n")
    kinds = {}
    for path in (BFCL, one, off):
        with Store.open(":memory:") as s:
            rep = _ingest(s, path)
            d = _datasets(s).set_index("name")
            kinds[path] = {n: d.loc[n, "kind"] for n in ("Overall Acc", "Non-Live AST Acc", "Multi Turn Acc", "Live Acc")}
            notes = rep.files[0].notes
        if path is not off:
            assert ("2 columns stored as aggregates: Non-Live AST Acc, Multi Turn Acc (named for the columns its name "
                    "groups, and their plain mean on every complete row)") in " ".join(notes)
            assert any(n.startswith("1 column named as a category's accuracy is not the plain mean of the columns its "
                                    "name groups on every complete row, so stored as a dataset") and
                       "Live Acc (4 columns: Live Simple AST, Live Multiple AST and 2 more)" in n for n in notes), notes
    want = {"Overall Acc": "aggregate", "Non-Live AST Acc": "aggregate", "Multi Turn Acc": "aggregate",
            "Live Acc": "dataset"}
    assert kinds[BFCL] == kinds[one] == want
    assert kinds[off] == {**want, "Multi Turn Acc": "dataset"}


@BOTH
def test_a_re_ranking_task_is_a_score_not_a_rank(read_path):
    """HELMET's 128k table (Yen et al. 2025) scores seven task categories; one is ``Re-rank`` (passage
    re-ranking, 0-100, higher is better). The rule that keeps a ``Rank`` column out of the scores matched it, so
    the category left the matrix, noted as model metadata beside ``# Params (B)``. ``Context Window (K)``,
    ``# Params (B)`` (``?`` for closed models) and ``Model type`` (a symbol) stay metadata."""
    with Store.open(":memory:") as s:
        rep = _ingest(s, HELMET)
        d = _datasets(s).set_index("name")
        assert sorted(d.index[d["kind"] == "dataset"]) == ["Cite", "ICL", "LongQA", "RAG", "Re-rank", "Recall", "Summ"]
        assert d.loc["Average", "kind"] == "aggregate"
        assert d.loc["Re-rank", "higher_is_better"] is d.loc["Recall", "higher_is_better"]  # as the other scores
        notes = " ".join(rep.files[0].notes)
        assert "2 columns stored as model metadata, not scores: Context Window (K), # Params (B) (the name" in notes
        assert "Model type (its cells are text)" in notes
        m = load_matrix(s, MatrixQuery())
        assert m.shape == (10, 7)


@BOTH
def test_a_chinese_model_header_and_an_unnamed_rank_column(read_path, tmp_path):
    """A Chinese LLM benchmark's table (jeinlee1991/chinese-llm-benchmark's ``alldata.md``, converted from Markdown
    to CSV cell for cell) names its model column ``大模型`` ("large model"): the file was refused as naming no model
    column. Each row ends with its rank in a column the header does not name: it was left out without a word."""
    with Store.open(":memory:") as s:
        rep = _ingest(s, CHINESE)
        d = _datasets(s)
        assert list(d["name"]) == ["分类能力", "信息抽取", "阅读理解", "数据分析", "指令遵从", "算术运算", "综合能力"]
        m = load_matrix(s, MatrixQuery())
        # 综合能力 ("overall ability") is the board's aggregate, named so in Chinese: the matrix leaves it out
        assert m.shape == (8, 6) and "gpt-4o" in set(m.index) and "综合能力" not in m.columns
        notes = rep.files[0].notes
        assert any(n.startswith("1 column stored as aggregate: 综合能力 (named as an average or overall") for n in notes)
        assert ("1 column without a name in the header left out, not stored: column 10 (8 values: 1, 7, 19, ...); "
                "name it in the header to store it") in notes, notes
        assert any(n.startswith("1 column stored as model metadata, not scores: 类别 (its cells are text)") for n in notes)
    # a trailing delimiter's empty column is no news
    lines = CHINESE.read_text(encoding="utf-8").splitlines()
    empty = tmp_path / "empty.csv"
    empty.write_text("\n".join([lines[0]] + [ln.rsplit(",", 1)[0] + "," for ln in lines[1:]]) + "\n", encoding="utf-8")
    with Store.open(":memory:") as s:
        rep = _ingest(s, empty)
        assert not any("without a name" in n for n in rep.files[0].notes)


@BOTH
def test_an_overall_with_a_bracketed_qualifier_is_an_aggregate(read_path):
    """VLMEvalKit's MM-Vet results (Yu et al. 2023) give six capability scores, then ``Overall
    (GPT-4-Turbo)`` (the overall score by that judge) and ``Overall (Official)`` (the official leaderboard's, ``N/A``
    for most models). The words in brackets were read as a benchmark the file does not hold, so both overalls were
    datasets beside the capabilities they average, without a word."""
    with Store.open(":memory:") as s:
        rep = _ingest(s, MMVET)
        d = _datasets(s).set_index("name")
        assert sorted(d.index[d["kind"] == "dataset"]) == ["gen", "know", "math", "ocr", "rec", "spat"]
        assert set(d.index[d["kind"] == "aggregate"]) == {"Overall (GPT-4-Turbo)", "Overall (Official)"}
        notes = rep.files[0].notes
        assert any(n.startswith("2 columns stored as aggregates: Overall (GPT-4-Turbo), Overall (Official)")
                   for n in notes), notes
        assert load_matrix(s, MatrixQuery()).shape == (8, 6)


def test_cjk_aggregate_names_are_whole_names():
    """An overall or average named in Chinese, Japanese or Korean is an aggregate only as the whole name (with
    "ability" or "score" after it); a task whose name merely starts with the word stays a task."""
    from harness_ext.adapters.csv_rules import CJK_AGGREGATE_NAME

    for name in ("综合能力", "平均", "平均分", "总分", "総合スコア", "평균", "종합 점수".replace(" ", "")):
        assert CJK_AGGREGATE_NAME.fullmatch(name), name
    for name in ("综合推理", "平均值估计", "阅读理解", "数学", "종합추론"):
        assert not CJK_AGGREGATE_NAME.fullmatch(name), name
