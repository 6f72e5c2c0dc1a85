"""A new user's first loop on real leaderboard CSVs and HELM runs (../shared/data: IBM/benchbench, Apache-2.0;
wschella/helm-data-downloader, MIT; PROVENANCE.md there): what they tripped on, each on the real file.
"""

from __future__ import annotations

import pytest

from conftest import SHARED_DATA, require
from harness_ext.cli import main
from harness_ext.errors import IngestError
from harness_ext.plugin_manager import get_registrations
from harness_ext.store.ingest import detect_adapter, read_source
from harness_ext.types import SourceFile

BENCHBENCH = SHARED_DATA / "benchbench" / "leaderboards"


def _opencompass(tmp_path):
    """The ten OpenCompass leaderboards of benchbench (one benchmark per file; nine ingest) in a store of their own."""
    files = sorted(require(BENCHBENCH).glob("opencompass_*.csv"))
    assert len(files) == 10
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, "-q", *map(str, files)]) == 0  # the academic file is refused: see below
    return db


def test_benchmark_takes_a_glob_as_models_and_datasets_do(tmp_path, capsys):
    """A folder of leaderboard CSVs is one benchmark per file: '--benchmark opencompass_*' selects the nine of
    them that ingest (each one overall column: OpenCompass's own, its arena and seven categories), as their names
    would."""
    db = _opencompass(tmp_path)
    capsys.readouterr()
    assert main(["matrix", "--db", db, "--benchmark", "opencompass_*", "--out", str(tmp_path / "glob.csv")]) == 0
    names = ",".join(f"opencompass_{c}" for c in ("240829_holistic", "agent_240829_agent", "arena_240829_holistic",
                                                  "code_240829_code", "instruct_240829_instructionfollow",
                                                  "knowledge_240829_knowledge", "language_240829_language",
                                                  "math_240829_math", "reasoning_240829_reasoning"))
    assert main(["matrix", "--db", db, "--benchmark", names, "--out", str(tmp_path / "named.csv")]) == 0
    glob_csv, named_csv = (tmp_path / "glob.csv").read_text(), (tmp_path / "named.csv").read_text()
    assert glob_csv == named_csv and len(glob_csv.splitlines()[0].split(",")) == 1 + 9
    # A glob mixed with a name, and one matching nothing: said so, with the names the store holds.
    assert main(["matrix", "--db", db, "--benchmark", "opencompass_m*,opencompass_240829_holistic",
                 "--out", str(tmp_path / "two.csv")]) == 0
    assert (tmp_path / "two.csv").read_text().splitlines()[0].count(",") == 2
    capsys.readouterr()
    assert main(["matrix", "--db", db, "--benchmark", "OpenCompass_*"]) != 0
    err = capsys.readouterr().err
    assert "no benchmark 'OpenCompass_*' (a glob: it matched none; globs are case-sensitive)" in err


def test_benchmark_glob_in_the_python_api(tmp_path):
    import harness_ext as hx

    db = _opencompass(tmp_path)
    m = hx.load_matrix(db, benchmark=["opencompass_*_code", "opencompass_*_math"], normalise="none")
    assert sorted(m.columns) == ["OC_Code", "OC_Math"]


def test_a_leaderboard_csv_cut_short_is_refused_saying_so(tmp_path):
    """benchbench's OpenCompass academic leaderboard ends in a line holding only a model's name, no newline after
    it: refused (a short row is not padded: a lost middle cell would shift scores), naming the row and the cut."""
    src = require(BENCHBENCH / "opencompass_academic_240829_holistic.csv")
    with pytest.raises(IngestError, match=r"row 21 \('Mistral-7B-Instruct-v0.3'\) has 1 field, header has 2; it is "
                                          r"the file's last line and no newline ends it, so the file looks cut short"):
        f = SourceFile(src)
        read_source(f, detect_adapter(f, get_registrations("adapters")))
    # With the comma the message asks for, the row is kept and its score missing.
    fixed = tmp_path / src.name
    fixed.write_text(src.read_text(encoding="utf-8") + ",\n", encoding="utf-8")
    f = SourceFile(fixed)
    recs = read_source(f, detect_adapter(f, get_registrations("adapters")))
    assert len(recs) == 19 and "Mistral-7B-Instruct-v0.3" not in {r.model for r in recs}
    # A short row in the middle says which row, without the cut-short advice.
    lines = src.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].split(",")[0]
    mid = tmp_path / "mid.csv"
    mid.write_text("\n".join(lines[:10]) + "\n", encoding="utf-8")
    f = SourceFile(mid)
    with pytest.raises(IngestError, match=r"row 4 \('.+'\) has 1 field, header has 2$"):
        read_source(f, detect_adapter(f, get_registrations("adapters")))


@pytest.mark.slow
def test_one_elo_column_is_named_in_the_singular(tmp_path):
    """The OpenCompass leaderboards reduced: their one Elo column (the arena's) keeps the full-benchmark score off
    the harness's scale, and the reason names it as one dataset, not '1 datasets ... are'."""
    import harness_ext as hx
    from harness_ext.methods.reduction.benchmark_score import benchmark_score

    db = _opencompass(tmp_path)
    manifest = hx.reduce(hx.load_matrix(db, benchmark="opencompass_*"), budget=2, seed=0, n_random=20).manifest
    score, why = benchmark_score(manifest)
    assert score is None
    assert why.startswith("1 dataset (OC_arena) is normalised by a non-linear transform (Elo, perplexity): the mean")


def test_matrix_says_how_many_scores_the_chance_correction_clipped(tmp_path, capsys):
    """lm-eval v0.3's BIG-bench Hard runs of LLaMA, MPT and BLOOM (shared data, lm-eval's results folder): a quarter
    of their scores are below chance and print as 0 in the chance-corrected matrix; the matrix says how many."""
    from conftest import LM_EVAL_V03

    files = sorted(str(p) for p in require(LM_EVAL_V03).glob("*/*/*_bbh_3-shot.json"))
    assert len(files) == 5
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, "-q", *files]) == 0
    out = tmp_path / "m.csv"
    capsys.readouterr()
    assert main(["matrix", "--db", db, "--out", str(out)]) == 0
    assert ("24 of 105 scores clipped by the chance correction, in 11 of 21 datasets: 24 below chance shown as 0 "
            "(--normalise none shows the raw scores)") in capsys.readouterr().err
    import pandas as pd

    m = pd.read_csv(out, index_col=0)
    assert m.loc["llama-7B", "bigbench_causal_judgement"] == 0.0  # 48.42% on a two-choice task
    assert (m == 0).sum().sum() >= 24
    assert main(["matrix", "--db", db, "--normalise", "none", "--out", str(out)]) == 0
    assert "clipped" not in capsys.readouterr().err


def test_ingest_and_info_count_conflicts_and_models_as_the_matrix_does(tmp_path, capsys):
    """benchbench's leaderboards list some models two or three times with other scores (BFCL's
    Open-Mistral-Nemo-2407 three times): 77 extra values in 74 cells, which ingest now says as info does; and they
    spell one model several ways, which info now counts as the matrix's rows beside the names."""
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, "-q", str(require(BENCHBENCH))]) == 0
    assert "1 skipped, 77 conflicting values in 74 cells;" in capsys.readouterr().out
    assert main(["info", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "74 cells with conflicting values" in out
    # 1,930 names as the leaderboards spell them, 1,424 models as matrix and reduce count their rows (EQ-Bench's
    # 'random-baseline' row is its chance level, not a model: tests/test_csv_reference_rows.py).
    assert ("1,930 model names (1,424 models once the names of one model merge: 'harness-ext models --merged' lists "
            "them)") in out
    assert main(["matrix", "--db", db, "--benchmark", "*", "--out", str(tmp_path / "m.csv")]) == 0
    assert "wrote 1424 models x 77 datasets" in capsys.readouterr().out


@pytest.mark.slow
def test_reduce_items_takes_a_benchmark_glob_and_names_the_benchmarks_when_none_match(tmp_path, capsys):
    """HELM Lite's GSM8K item table (shared data, socialfoundations/benchmark-prediction, MIT): '--benchmark helm_*'
    selects its items as the matrix's --benchmark selects benchmarks; one task is said as one; a glob matching none
    names the item-level benchmarks the store holds."""
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, "-q", str(require(SHARED_DATA / "items" / "helm_lite" / "gsm.parquet"))]) == 0
    capsys.readouterr()
    assert main(["reduce", "--db", db, "--items", "20", "--benchmark", "helm_*", "--out", str(tmp_path / "r")]) == 0
    assert "20 of 1,000 items (2.0%) in 1 task, drawn at random" in capsys.readouterr().out
    assert main(["reduce", "--db", db, "--items", "20", "--benchmark", "HELM*", "--out", str(tmp_path / "r2")]) != 0
    assert ("no item-level results match --benchmark HELM*: the store's item-level benchmarks are helm_lite (1 task)"
            in capsys.readouterr().err)
