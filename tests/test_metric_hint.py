"""A ``--metric`` no dataset reports is answered with the metrics the datasets do report (real lm-eval file)."""
from pathlib import Path

import pytest

from harness_ext.errors import StoreError
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FIX = Path(__file__).parent / "fixtures" / "lm_eval_filters"


@pytest.fixture
def store(tmp_path):
    with Store.open(str(tmp_path / "s.duckdb")) as s:
        ingest_paths(s, [FIX], show_progress=False)
        yield s


def test_filtered_metric_names_the_filters(store):
    with pytest.raises(StoreError) as err:
        load_matrix(store, MatrixQuery(metric="exact_match"))
    msg = str(err.value)
    # the primary filter first, as the suggested spelling; the other one listed too
    assert "'exact_match,strict-match', 'exact_match,flexible-extract'" in msg
    assert "--metric 'exact_match,strict-match'" in msg
    assert "benchmarks in the store" not in msg


def test_named_filter_reads_its_value(store):
    m = load_matrix(store, MatrixQuery(metric="exact_match,flexible-extract", normalise="none"))
    assert m.loc["Qwen/Qwen3.5-9B", "gsm8k"] == pytest.approx(0.869598180439727)


def test_misspelt_metric_offers_the_close_one(store):
    with pytest.raises(StoreError, match=r"Metrics they report: 'exact_match,strict-match'"):
        load_matrix(store, MatrixQuery(metric="exact_match,strict_match"))


def test_other_misses_keep_the_benchmark_list(store):
    with pytest.raises(StoreError, match="benchmarks in the store: lm_eval"):
        load_matrix(store, MatrixQuery(datasets=("nothing*",)))


def test_comma_joined_dataset_globs_are_told_to_repeat_the_option(store):
    """`--datasets mmlu_redux_formal_logic_generative,mmlu_redux_virology_generative` matches no dataset (one glob
    with a comma in it): the error says several globs are given by repeating the option."""
    with pytest.raises(StoreError, match="several globs are given by repeating the option"):
        load_matrix(store, MatrixQuery(datasets="mmlu_redux_formal_logic_generative,mmlu_redux_virology_generative"))
