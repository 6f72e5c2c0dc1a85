"""The reliability suite (issue 19 item 8): a quick tier in the default run, the full tier slow-marked.

Reproduce a failure by its label (family, file, mutation, seed). Counts per family:
``python tests/reliability/report.py [--full]``.
"""

from __future__ import annotations

import pytest

from reliability_lib import SHARED, run_cli_corpus, run_concurrency, run_fuzz, run_kills
from reliability_surfaces import SIDE_SEEDS, SPECIAL, run_archives, run_samples, run_sidefiles


def _check(fam):
    assert fam.tried > 0
    assert not fam.failures, "\n".join(fam.failures[:20])


@pytest.mark.slow
def test_fuzz_quick():
    fam = run_fuzz(n_per_kind=1, per_adapter=1, seed=0)
    _check(fam)
    if SHARED.exists():
        assert fam.tried >= 10 * 9  # ten mutation kinds over every adapter with a real file


@pytest.mark.slow
def test_kill_quick():
    _check(run_kills(n_kills=2, seed=0, n_csv=120))


@pytest.mark.slow
def test_concurrency_quick():
    _check(run_concurrency(n_writers=2, n_readers=1, seed=0, n_csv=60))


@pytest.mark.slow
def test_cli_corpus_no_traceback():
    _check(run_cli_corpus())


@pytest.mark.slow
def test_samples_quick():
    fam = run_samples(n_per_kind=1, seed=0)
    _check(fam)
    assert fam.tried >= 3 * 12  # lm-eval and Every Eval Ever samples files, every mutation kind


@pytest.mark.slow
def test_archives_quick():
    _check(run_archives(n_per_kind=1, seed=0))


@pytest.mark.slow
def test_sidefiles_quick():
    fam = run_sidefiles(n_per_kind=1, seed=0)
    _check(fam)
    assert fam.tried >= len(SIDE_SEEDS) * len(SPECIAL)  # every side-file kind, every special file


@pytest.mark.slow
def test_fuzz_full():
    _check(run_fuzz(n_per_kind=5, per_adapter=2, seed=1))


@pytest.mark.slow
def test_kill_full():
    _check(run_kills(n_kills=20, seed=1))


@pytest.mark.slow
def test_concurrency_full():
    _check(run_concurrency(n_writers=6, n_readers=3, seed=1))


@pytest.mark.slow
def test_new_surfaces_full():
    for fam in (run_samples(5, seed=1), run_archives(5, seed=1), run_sidefiles(5, seed=1)):
        _check(fam)
