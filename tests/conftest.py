"""Shared fixtures: real matrices from ../shared/data, built once per session through the store.

Installed third-party plugins are kept out of the test run (HARNESS_EXT_LOAD_PLUGINS="").
"""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _package_logger_propagates():
    """The CLI's first run in a process stops the package logger propagating (its own stderr handler prints each
    message once); a later test's ``caplog`` listens at the root, so each test starts with propagation on."""
    logger = logging.getLogger("harness_ext")
    logger.propagate = True
    yield

os.environ["HARNESS_EXT_LOAD_PLUGINS"] = ""
os.environ["HARNESS_EXT_NO_PROGRESS"] = "1"

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", REPO.parent / "shared" / "data"))
HELM_CLASSIC = SHARED_DATA / "every_eval_ever" / "data" / "helm_classic"
PYTHIA = SHARED_DATA / "pythia-evals" / "evals"
LM_EVAL = SHARED_DATA / "lm-eval-harness"
LM_EVAL_V03 = LM_EVAL / "v03_results_master_2023-07-31" / "results"
LM_EVAL_V04 = LM_EVAL / "v04_results_from_pull_refs" / "results"


def require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    return path


def import_benchmark(name: str):
    """The module ``benchmarks/<name>.py`` (the folder is on ``sys.path`` only while importing)."""
    import importlib
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


def one_factor_answers(m: int = 40, n: int = 120, seed: int = 0):
    """``m`` models x ``n`` items of 0/1 answers from a one-factor population (model i stronger than i - 1)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ability = np.linspace(-1.5, 1.5, m)[:, None]
    ease = rng.normal(0, 1, n)[None, :]
    return (rng.random((m, n)) < 1 / (1 + np.exp(-(ability + ease)))).astype(float)


@pytest.fixture(scope="session")
def real_store(tmp_path_factory):
    """A store holding HELM Classic (Every Eval Ever) and all Pythia lm-eval v0.3 results."""
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.db import Store

    require(HELM_CLASSIC)
    require(PYTHIA)
    db = tmp_path_factory.mktemp("store") / "real.duckdb"
    with Store.open(db) as store:
        ingest_paths(store, [HELM_CLASSIC, PYTHIA], show_progress=False)
    return db


@pytest.fixture(scope="session")
def helm_classic_matrix(real_store):
    """HELM Classic, all 14 scenarios (aggregates excluded) and the 30 models run on every one of them,
    normalised. HELM's -1 "not run" placeholders are missing cells, so models lacking HellaSwag,
    OpenbookQA, MS MARCO, CNN/DailyMail or XSUM drop out (SimBA used 29 models x 16 scenarios)."""
    from harness_ext.store.matrix import MatrixQuery, load_matrix
    from harness_ext.store.db import Store

    with Store.open(real_store, read_only=True) as store:
        return load_matrix(store, MatrixQuery(benchmarks=("helm_classic",), dense="models"))


@pytest.fixture(scope="session")
def pythia_mmlu_matrix(real_store):
    """Pythia MMLU: 838 result files x 57 subjects (one row per run), normalised."""
    from harness_ext.store.matrix import MatrixQuery, load_matrix
    from harness_ext.store.db import Store

    with Store.open(real_store, read_only=True) as store:
        return load_matrix(store, MatrixQuery(benchmarks=("mmlu",), rows="run"))


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on ``sys.path`` for third-party plugins installed in-process (:mod:`plugin_site`)."""
    from plugin_site import plugin_site

    yield from plugin_site(tmp_path, monkeypatch)


def load_group_yaml(path):
    """A reduced folder's group YAML as lm-eval reads it, its ``!function module.name`` tags as strings."""
    import yaml

    class TagLoader(yaml.SafeLoader):
        pass

    TagLoader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))
    return yaml.load(Path(path).read_text(), Loader=TagLoader)


@pytest.fixture(scope="session", autouse=True)
def _checkout_stays_clean():
    """Tests write into their own tmp_path, never into the checkout: a command run from the repository's root
    (``predict`` puts a bundled run's prediction file in the working directory) once left a file there."""
    ignored = {".pytest_cache", "__pycache__", ".hypothesis"}
    before = {p.name for p in REPO.iterdir()}
    yield
    new = sorted(p.name for p in REPO.iterdir() if p.name not in before and p.name not in ignored
                 and not p.name.endswith((".egg-info", ".duckdb", ".duckdb.wal")))
    assert not new, f"the tests wrote into the checkout {REPO}: {', '.join(new)} (run the command from tmp_path)"


def pytest_configure(config):
    # A runner that starts the tests in the background without job control hands them SIGINT ignored.
    # The plugin guard then (as documented) lets every KeyboardInterrupt through, and a test's own SIGINT
    # is lost. Run the tests as from a terminal: Python's own handler here, and the default in the
    # command-line subprocesses (exec resets a handled signal to its default, not an ignored one).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
