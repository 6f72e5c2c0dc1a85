"""``info --conflicts`` says on how many documents each of a cell's values was measured.

Real lm-eval runs of one model on GPQA Diamond (tests/fixtures/lm_eval_limit and lm_eval_v04, provenance there): with
``--limit 50`` (0.46), ``--limit 100`` (0.51) and on all 198 questions (0.4949). Ingested in date order, the first
(50 questions) is the cell's value; the conflict table listed three values without saying which run was whole.
"""

from __future__ import annotations

from pathlib import Path

from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

FIX = Path(__file__).parent / "fixtures"
RUNS = [FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-13-05.882357.json",
        FIX / "lm_eval_v04" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json",
        FIX / "lm_eval_limit" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-17-21.689149.json"]


def test_each_conflicting_value_has_its_document_count(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    with Store.open(str(db)) as s:
        report = ingest_paths(s, RUNS, show_progress=False)
        assert [f.status for f in report.files] == ["ingested"] * 3
        c = s.conflicts()
    acc = c[c.metric == "acc"]
    assert acc.value.tolist() == [0.46, 0.51, 0.494949494949495]
    assert acc.n_samples.tolist() == [50, 100, 198]
    assert main(["info", "--db", str(db), "--conflicts"]) == 0
    out = capsys.readouterr().out
    assert "n_samples" in out and " 198 " in out


LISTED_TWICE = FIX / "csv_listed_twice"
LIMIT_100 = FIX / "lm_eval_v04" / "Qwen__Qwen3.5-9B" / "results_2026-04-12T11-15-28.837033.json"


def test_a_cell_a_file_lists_twice_counts_by_its_first_listing_and_is_reported(tmp_path, capsys):
    """A value a file lists again never won by document count, and info said nothing of it: the derived CSV lists
    the 50-question run (0.46) before the whole run (198 questions); beside the real 100-question run, the
    100-question run is used (most documents among the files' first listings) in either ingest order, and the
    whole run's value is listed as a later listing, counted as on more documents. The real BFCL leaderboard lists
    14 models twice, all their values in the one file: each takes its first listing."""
    from harness_ext.store.matrix import MatrixQuery, load_matrix
    from harness_ext.store.pivot import conflicts_note

    tables, infos = [], []
    for name, order in [("a", [LISTED_TWICE, LIMIT_100]), ("b", [LIMIT_100, LISTED_TWICE])]:
        db = tmp_path / f"{name}.duckdb"
        with Store.open(str(db)) as s:
            ingest_paths(s, order, show_progress=False)
            c = s.conflicts()
            m = load_matrix(s, MatrixQuery(benchmarks=("lm_eval",), normalise="none"))
        assert m.loc["Qwen/Qwen3.5-9B", "gpqa_diamond_zeroshot"] == 0.51
        gpqa = c[c.metric == "acc"].sort_values("n_samples")
        assert gpqa[["n_samples", "listing", "used"]].values.tolist() == [
            [50, "first", ""], [100, "first", "most documents"], [198, "later", ""]]
        bfcl = c[c.dataset == "BFCL"]
        assert bfcl.model.nunique() == 14 and set(bfcl.used) == {"first in its file", ""}
        gpt4 = bfcl[bfcl.model == "GPT-4-0613"]
        assert gpt4[["value", "listing", "used"]].values.tolist() == [[84.74, "first", "first in its file"],
                                                                        [45.61, "later", ""]]
        mixtral = bfcl[bfcl.model == "Open-Mixtral-8x22b"]  # in the file's order, not by value
        assert mixtral.value.tolist() == [79.14, 58.89, 58.37]
        tables.append(c.drop(columns="source").sort_values(["model", "dataset", "metric", "value"],
                                                           ignore_index=True))
        with Store.open(str(db), read_only=True) as s:  # what reduce says of its matrix
            note = conflicts_note(load_matrix(s, MatrixQuery(benchmarks=("bfcl_240906_tools",))).attrs)
        assert note.startswith("14 cells of the matrix have values that disagree between source files or within one; "
                               "0 take the value measured on the most documents, 14 take their file's first listing")
        assert "another order" not in note
        assert main(["info", "--db", str(db)]) == 0
        infos.append(capsys.readouterr().out)
    assert tables[0].equals(tables[1])  # the same whatever the order
    for out in infos:
        assert ("15 cells with conflicting values, 1 of them decided by document count, 15 listed again in one file "
                "with another value (the file's first listing is its value; 1 of them on more documents in a later "
                "listing, never used)") in out
        assert ("15 cells have values that disagree between source files or within one: 1 take the value measured on "
                "the most documents, 0 the first-ingested (their document counts unknown or equal), 14 their file's "
                "first listing") in out
