"""Faulty third-party plugins, registered in-process as installed ones: manifest writers that write subfolders or
outside their folder, plugin code that raises or returns the wrong type (named in the CLI's error), similarity
plugins whose matrix is not one, and the warnings plugins cause (one line each, silenced by -q)."""

from __future__ import annotations

import types

import numpy as np

import pytest

from harness_ext.errors import HarnessExtError, PluginError

from plugin_site import install, run_cli


_install, _cli = install, run_cli


def _tree(folder):
    """``{relative path: content}`` of every file under ``folder``."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- manifest writers -------------------------------------------------------------------------------------------
WRITERS = '''
import pathlib
from harness_ext import hookimpl, ManifestWriter

def write_sub(manifest, out_dir):
    (out_dir / "sub").mkdir()
    (out_dir / "sub" / "x.txt").write_text("x")
    return [out_dir / "sub" / "x.txt"]

def write_abs(manifest, out_dir):
    p = pathlib.Path(ELSEWHERE) / "stray.txt"
    p.write_text("escaped")
    return [p]

def write_beside(manifest, out_dir):
    p = pathlib.Path(BESIDE) / "stray.txt"
    p.write_text("escaped")
    return [out_dir.write_text("inside.txt", "ok")]

def write_raise(manifest, out_dir):
    (out_dir / "half.txt").write_text("half")
    raise RuntimeError("writer boom")

@hookimpl
def harness_ext_manifest_writers():
    yield ManifestWriter(name="sub", write=write_sub)
    yield ManifestWriter(name="abs-escape", write=write_abs)
    yield ManifestWriter(name="beside", write=write_beside)
    yield ManifestWriter(name="wraise", write=write_raise)
'''


@pytest.fixture
def writers(site, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "work").mkdir()
    body = f"ELSEWHERE = {str(tmp_path / 'elsewhere')!r}\nBESIDE = {str(tmp_path / 'work')!r}\n" + WRITERS
    _install(site, "harness-ext-faulty-writers", "faulty_writers", body)
    return tmp_path


def test_a_writer_may_write_into_a_subfolder(writers):
    from harness_ext.methods.reduction.manifest import example_manifest, write_outputs

    out = writers / "work" / "reduced"
    paths = write_outputs(example_manifest(), out, ["json", "sub"])
    assert out / "sub" / "x.txt" in paths and (out / "sub" / "x.txt").read_text() == "x"
    assert (out / "manifest.json").is_file()
    assert [p.name for p in (writers / "work").iterdir()] == ["reduced"]  # no staging folder left


@pytest.mark.parametrize("writer", ["wraise", "abs-escape", "beside"])
def test_a_failed_write_leaves_the_folder_as_it_was(writers, writer):
    from harness_ext.methods.reduction.manifest import example_manifest, write_outputs

    out = writers / "work" / "reduced"
    out.mkdir()
    (out / "manifest.json").write_text("old")
    before = _tree(out)
    with pytest.raises(PluginError) as info:
        write_outputs(example_manifest(), out, ["json", "sub", writer])
    msg = str(info.value)
    assert "staging" not in msg and repr(writer.replace("-", "_")) in msg, msg
    assert _tree(out) == before
    assert [p.name for p in (writers / "work").iterdir()] == ["reduced"]  # the stray file beside it, removed
    if writer != "wraise":
        assert str(out) in msg and "outside" in msg, msg


def test_a_failed_move_puts_the_folder_back(writers, monkeypatch):
    import shutil

    from harness_ext.methods.reduction.manifest import example_manifest, write_outputs

    out = writers / "work" / "reduced"
    out.mkdir()
    (out / "manifest.json").write_text("old")
    before = _tree(out)
    real, calls = shutil.move, []

    def failing_move(src, dst):
        calls.append(dst)
        if str(dst).endswith("x.txt"):  # the last move: the old manifest.json was set aside and replaced
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(shutil, "move", failing_move)
    with pytest.raises(HarnessExtError, match="left as it was"):
        write_outputs(example_manifest(), out, ["json", "sub"])
    monkeypatch.undo()
    assert calls[-1] == str(out / "manifest.json")  # the old file, put back
    assert _tree(out) == before and not (out / "sub").exists()


def test_a_file_in_the_way_of_a_subfolder_is_refused_before_anything_moves(writers):
    from harness_ext.methods.reduction.manifest import example_manifest, write_outputs

    out = writers / "work" / "reduced"
    out.mkdir()
    (out / "sub").write_text("a file, not a folder")
    before = _tree(out)
    with pytest.raises(HarnessExtError, match="sub is a file"):
        write_outputs(example_manifest(), out, ["json", "sub"])
    assert _tree(out) == before


# -- plugin code that raises or returns the wrong type: named -------------------------------------------------
METHODS = '''
import numpy as np
from harness_ext import hookimpl, Selector, Predictor
from harness_ext.base import BasePredictor, BaseSelector

class Raiser(BaseSelector):
    def __init__(self, n_select=None):
        self.n_select = n_select
    def fit(self, X, features=None):
        raise ValueError("boom from raiser")

class BadOrder(BaseSelector):
    def __init__(self, n_select=None):
        self.n_select = n_select
    def fit(self, X, features=None):
        self.order_ = [2, 0.5, "x"]
        return self

class DupOrder(BaseSelector):
    def __init__(self, n_select=None):
        self.n_select = n_select
    def fit(self, X, features=None):
        self.order_ = np.zeros(np.shape(X)[1], dtype=int)
        return self

class ListMean(BasePredictor):
    def fit(self, X):
        self.mean_, self.std_ = [[1, 2]], None
        return self

@hookimpl
def harness_ext_selectors():
    yield Selector(name="raiser", cls=Raiser)
    yield Selector(name="bad-order", cls=BadOrder)
    yield Selector(name="dup-order", cls=DupOrder)

@hookimpl
def harness_ext_predictors():
    yield Predictor(name="list-mean", cls=ListMean)
'''


@pytest.fixture
def small_store(tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    rows = ["model,dataset,value"] + [f"m{i},d{j},{rng.random():.4f}" for i in range(12) for j in range(6)]
    (tmp_path / "scores.csv").write_text("\n".join(rows) + "\n")
    db = tmp_path / "s.duckdb"
    r = _cli("ingest", "-q", "--db", db, tmp_path / "scores.csv")
    assert r.returncode == 0, r.stderr
    return db


def test_an_exception_in_a_plugins_code_names_the_plugin(site, small_store, tmp_path):
    _install(site, "harness-ext-faulty-methods", "faulty_methods", METHODS)
    r = _cli("prowl", "--db", small_store, "--selector", "raiser", "--out", tmp_path / "p")
    assert r.returncode == 1
    line = r.stderr.strip().splitlines()[-1]
    assert "plugin 'harness-ext-faulty-methods' from 'harness-ext-faulty-methods' raised ValueError" in line, line
    assert "boom from raiser" in line and "unexpected" not in line


@pytest.mark.parametrize("name, kind, match", [
    ("bad-order", "selectors", r"BadOrder.fit set order_ to list \[2, 0.5, 'x'\], not .*dataset indices"),
    ("dup-order", "selectors", r"DupOrder.fit set order_ to ndarray .*, which repeats indices"),
    ("list-mean", "predictors", r"ListMean.fit set mean_ to list \[\[1, 2\]\]; expected a numpy array of shape"),
])
def test_a_plugins_wrong_fitted_attribute_is_a_plugin_error_naming_it(site, name, kind, match):
    import numpy as np

    from harness_ext.plugin_manager import get_registration

    _install(site, "harness-ext-faulty-methods", "faulty_methods", METHODS)
    X = np.random.default_rng(0).random((8, 4))
    with pytest.raises(PluginError, match=r"harness-ext-faulty-methods.*" + match):
        get_registration(kind, name).cls().fit(X)


def test_an_order_that_repeats_indices_says_so():
    import numpy as np

    from harness_ext.errors import MethodError
    from harness_ext.methods.prowl.selection import evaluate_order

    X = np.random.default_rng(0).random((10, 5))
    with pytest.raises(MethodError, match="repeats indices") as info:
        evaluate_order(X, [0, 0, 0, 0, 0], datasets=list("abcde"), selector="dup", params={})
    assert "of 5 datasets" not in str(info.value)
    with pytest.raises(MethodError, match="not a non-empty 1-D array of dataset indices"):
        evaluate_order(X, [0, 1, "x"], datasets=list("abcde"), selector="bad", params={})


# -- the contract checks -----------------------------------------------------------------------------------------
CONTRACT = '''
import pathlib
import numpy as np
from harness_ext import hookimpl, ManifestWriter, Predictor, Selector
from harness_ext.base import BasePredictor, BaseSelector

class NeedsPath(BaseSelector):
    _contract_params = {"path": "weights.json"}
    def __init__(self, path, n_select=None, random_state=None):
        self.path, self.n_select, self.random_state = path, n_select, random_state
    def fit(self, X, features=None):
        self.order_ = np.arange(np.shape(X)[1])
        return self

class ListMean(BasePredictor):
    def fit(self, X):
        self.mean_, self.std_ = np.asarray(X).tolist(), None
        return self

def write_escape(manifest, out_dir):
    p = pathlib.Path(out_dir).parent / "ESCAPED.txt"
    p.write_text("escaped")
    return [out_dir.write_text("in.txt", "ok")]

def write_str(manifest, out_dir):
    (out_dir / "x.txt").write_text("x")
    return "x.txt"

@hookimpl
def harness_ext_selectors():
    yield Selector(name="needs-path", cls=NeedsPath)

@hookimpl
def harness_ext_predictors():
    yield Predictor(name="list-mean", cls=ListMean)

@hookimpl
def harness_ext_manifest_writers():
    yield ManifestWriter(name="escape", write=write_escape)
    yield ManifestWriter(name="str-return", write=write_str)
'''


def test_the_determinism_check_builds_a_selector_with_its_contract_params(site):
    from harness_ext.testing import iter_checks

    _install(site, "harness-ext-contract", "faulty_contract", CONTRACT)
    for reg, check in iter_checks(["selectors"], ["needs_path"]):
        check(reg)


@pytest.mark.parametrize("name, match", [
    ("escape", "wrote outside its folder"),
    ("str_return", "returned str; expected a list of file names"),
])
def test_the_writer_check_fails_a_writer_that_escapes_or_returns_a_string(site, name, match):
    import tempfile
    from pathlib import Path

    from harness_ext.testing import check_manifest_writer
    from harness_ext.plugin_manager import get_registration

    _install(site, "harness-ext-contract", "faulty_contract", CONTRACT)
    before = set(Path(tempfile.gettempdir()).iterdir())
    with pytest.raises(AssertionError, match=match):
        check_manifest_writer(get_registration("manifest_writers", name))
    assert not [p for p in set(Path(tempfile.gettempdir()).iterdir()) - before if p.name == "ESCAPED.txt"]


def test_the_predictor_check_reports_a_mean_that_is_not_an_array(site):
    from harness_ext.testing import check_predictor_completes
    from harness_ext.plugin_manager import get_registration

    _install(site, "harness-ext-contract", "faulty_contract", CONTRACT)
    reg = get_registration("predictors", "list_mean")
    with pytest.raises((AssertionError, PluginError), match="mean_ .*list.*numpy array"):
        check_predictor_completes(reg)
    # An unguarded class (a built-in's, or one checked without the plugin manager): a contract message too.
    from harness_ext.base import BasePredictor

    class Plain(BasePredictor):
        def fit(self, X):
            self.mean_, self.std_ = [[1.0]], None
            return self

    with pytest.raises(AssertionError, match="mean_ is a list, not a numpy array"):
        check_predictor_completes(types.SimpleNamespace(name="plain", cls=Plain))


# -- a similarity plugin's matrix is checked where it is computed ----------------------------------------------
SIMILARITIES = '''
import numpy as np
from harness_ext import hookimpl, SimilarityMeasure

def fives(X):
    n = np.shape(X)[1]
    return np.full((n, n), 5.0)

def text(X):
    return "hello"

def lopsided(X):
    n = np.shape(X)[1]
    S = np.eye(n)
    S[0, 1] = 0.5
    return S

def half_diagonal(X):
    return np.full((np.shape(X)[1],) * 2, 0.5)

@hookimpl
def harness_ext_similarity_measures():
    yield SimilarityMeasure(name="fives", func=fives)
    yield SimilarityMeasure(name="text", func=text)
    yield SimilarityMeasure(name="lopsided", func=lopsided)
    yield SimilarityMeasure(name="half-diagonal", func=half_diagonal)
'''


@pytest.mark.parametrize("name, match", [
    ("fives", r"outside \[-1, 1\]"),
    ("text", "returned a str, not a matrix"),
    ("lopsided", "not symmetric"),
    ("half-diagonal", "diagonal that is not 1"),
])
def test_a_similarity_plugins_matrix_is_checked_when_it_runs(site, name, match):
    import numpy as np

    from harness_ext.errors import MethodError
    from harness_ext.methods.similarity.measures import similarity_matrix

    _install(site, "harness-ext-faulty-sims", "faulty_sims", SIMILARITIES)
    X = np.random.default_rng(0).random((10, 4))
    with pytest.raises(MethodError, match=rf"'{name.replace('-', '_')}' \(harness-ext-faulty-sims.*\) .*{match}"):
        similarity_matrix(X, name)


def test_a_built_in_similarity_passes_the_run_time_check():
    import numpy as np

    from harness_ext.methods.similarity.measures import similarity_matrix

    from harness_ext.plugin_manager import get_registrations

    rng = np.random.default_rng(0)
    for name, reg in get_registrations("similarity_measures").items():
        X = (rng.random((20, 5)) < 0.5).astype(float) if reg.binary_only else rng.random((20, 5))
        X[3, 1] = np.nan
        X[:, 4] = 1.0 if reg.binary_only else 0.5  # a constant column: its diagonal may be undefined
        similarity_matrix(X, name)


# -- plugin warnings on the command line ----------------------------------------------------------------------------
CLASH = '''
from harness_ext import hookimpl, SimilarityMeasure

@hookimpl
def harness_ext_similarity_measures():
    yield SimilarityMeasure(name="pearson", func=lambda X: X)
'''


@pytest.mark.parametrize("quiet", [False, True])
def test_plugin_warnings_are_one_line_and_quiet_silences_them(site, quiet):
    import warnings

    _install(site, "harness-ext-clashing", "faulty_clash", CLASH)
    (site / "faulty_broken.py").write_text("raise ImportError('needs numpy2')\n")
    info = site / "harness_ext_broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-ext-broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[harness_ext]\nbroken = faulty_broken\n")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        r = _cli("plugins", *(["-q"] if quiet else []))
    assert r.returncode == 0
    if quiet:
        assert r.stderr == ""
        return
    lines = r.stderr.splitlines()
    assert any("'pearson'" in ln and "harness-ext-clashing" in ln for ln in lines), r.stderr
    assert any("harness-ext-broken" in ln and "needs numpy2" in ln for ln in lines), r.stderr
    assert all(ln.startswith("warning: harness-ext plugin") for ln in lines), r.stderr
    assert ".py:" not in r.stderr and "RuntimeWarning" not in r.stderr, r.stderr


# -- plugin code run in joblib workers (compare --n-jobs 2) ----------------------------------------------------------
WORKER_SELECTORS = '''
import sys
import numpy as np
from harness_ext import hookimpl, Selector
from harness_ext.base import BaseSelector

class WorkerRaiser(BaseSelector):
    def __init__(self, n_select=None, random_state=None):
        self.n_select, self.random_state = n_select, random_state
    def fit(self, X, features=None):
        raise ValueError("boom in a worker")

class WorkerExit(WorkerRaiser):
    def fit(self, X, features=None):
        sys.exit(3)

class WorkerDupOrder(WorkerRaiser):
    def fit(self, X, features=None):
        self.order_ = np.zeros(np.shape(X)[1], dtype=int)
        return self

@hookimpl
def harness_ext_selectors():
    yield Selector(name="worker-raiser", cls=WorkerRaiser)
    yield Selector(name="worker-exit", cls=WorkerExit)
    yield Selector(name="worker-dup", cls=WorkerDupOrder)
'''


@pytest.mark.parametrize("selector, expected", [
    ("worker-raiser", "plugin 'harness-ext-worker-sels' from 'harness-ext-worker-sels' raised ValueError"),
    ("worker-exit", "plugin harness-ext-worker-sels (harness-ext-worker-sels): WorkerExit.fit raised SystemExit: 3"),
    ("worker-dup", "plugin harness-ext-worker-sels (harness-ext-worker-sels): WorkerDupOrder.fit set order_ to "),
])
@pytest.mark.slow
def test_a_plugin_error_in_a_joblib_worker_names_the_plugin(site, small_store, tmp_path, selector, expected):
    """In a fresh process, as a user runs it: the workers import the plugin's class afresh, unguarded, and their
    traceback is not the parent's; the error still names the plugin and its distribution, an exit is contained
    and a wrong order_ is refused, as with --n-jobs 1."""
    import os
    import subprocess
    import sys

    _install(site, "harness-ext-worker-sels", "faulty_worker_sels", WORKER_SELECTORS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "harness_ext", "compare", "--db", str(small_store), "--selectors",
                        selector, "random", "--trials", "4", "--k-max", "3", "--n-jobs", "2", "--out", str(tmp_path / "c")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1, (r.returncode, r.stderr)
    # joblib's resource tracker may warn after the error as its workers shut down: the error line, not the last one
    [line] = [x for x in r.stderr.splitlines() if x.startswith("harness-ext compare: error:")]
    assert expected in line and "unexpected" not in line, r.stderr


# -- item estimators not derived from harness-ext's base: the same checks, and their outputs named --------------------
ITEM_ESTIMATORS = '''
import numpy as np
from harness_ext import hookimpl, ItemEstimate, ItemEstimator

class PlainMean:
    def __init__(self, level=0.9):
        self.level = level
    def get_params(self, deep=True):
        return {"level": self.level}
    def fit(self, source, items):
        self.n_ = len(items)
        return self
    def predict(self, Y):
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        m = Y.mean(axis=1)
        return ItemEstimate(m, m - 0.1, m + 0.1, self.level)

class NoSelf(PlainMean):
    def fit(self, source, items):
        self.n_ = len(items)

class ShortEstimate(PlainMean):
    def predict(self, Y):
        return ItemEstimate(np.zeros(1), np.zeros(1), np.zeros(1), self.level)

class Inverted(PlainMean):
    def predict(self, Y):
        m = np.atleast_2d(np.asarray(Y, dtype=float)).mean(axis=1)
        return ItemEstimate(m, m + 0.1, m - 0.1, self.level)

class TupleResult(PlainMean):
    def predict(self, Y):
        return (0.5, 0.4, 0.6)

class NoParams:
    def __init__(self, level=0.9):
        self.level = level

@hookimpl
def harness_ext_item_estimators():
    for cls in (PlainMean, NoSelf, ShortEstimate, Inverted, TupleResult, NoParams):
        yield ItemEstimator(name=cls.__name__.lower(), cls=cls)
'''


@pytest.fixture
def item_plugins(site):
    import numpy as np

    from harness_ext.plugin_manager import get_registrations

    _install(site, "harness-ext-plain-items", "faulty_plain_items", ITEM_ESTIMATORS)
    rng = np.random.default_rng(0)
    return get_registrations("item_estimators"), (rng.random((20, 50)) < 0.6).astype(float)


@pytest.mark.parametrize("call, match", [
    (lambda cls, S: cls(level=90).fit(S, np.arange(5)), r"PlainMean: level must be in \(0, 1\).*use 0.9"),
    (lambda cls, S: cls().fit(S, [3, 60]), r"PlainMean.fit: 1 item index\(es\) outside the task's 50 items"),
    (lambda cls, S: cls().fit(S, [3, 3]), r"PlainMean.fit: items repeat an index"),
    (lambda cls, S: cls().fit(S, np.arange(5)).predict(S[:2, :4]), r"PlainMean.predict: Y has 4 answers per target"),
])
def test_a_third_party_item_estimator_gets_the_built_in_input_checks(item_plugins, call, match):
    regs, S = item_plugins
    with pytest.raises(ValueError, match=match):
        call(regs["plainmean"].cls, S)
    good = regs["plainmean"].cls().fit(S, np.arange(5)).predict(S[:3, :5])
    assert good.estimate.shape == (3,)


@pytest.mark.parametrize("name, match", [
    ("noself", r"NoSelf.fit returned NoneType None; expected the estimator itself"),
    ("shortestimate", r"ShortEstimate.predict returned an ItemEstimate whose estimate has shape \(1,\) for 3 target\(s\)"),
    ("inverted", r"Inverted.predict returned a lower bound above its upper bound for 3 of 3 target\(s\)"),
    ("tupleresult", r"TupleResult.predict returned tuple \(0.5, 0.4, 0.6\), without estimate, lower, upper, level, se"),
])
def test_a_third_party_item_estimators_wrong_output_names_the_plugin(item_plugins, name, match):
    regs, S = item_plugins
    est = regs[name].cls()
    with pytest.raises(PluginError, match=r"plugin harness-ext-plain-items \(harness-ext-plain-items\): " + match):
        est.fit(S, np.arange(5)).predict(S[:3, :5])


def test_the_params_check_says_an_item_estimator_without_get_params_needs_a_base_class(item_plugins):
    from harness_ext.testing import check_item_estimator_params

    regs, _ = item_plugins
    check_item_estimator_params(regs["plainmean"])
    with pytest.raises(AssertionError, match=r"NoParams has no get_params\(\); subclass a class of harness_ext.base"):
        check_item_estimator_params(regs["noparams"])


# -- predict --adapter: a file two adapters claim ---------------------------------------------------------------------
GREEDY_ADAPTER = '''
from harness_ext import hookimpl, Adapter, IngestError

def can_handle(src):
    return src.suffix == ".csv"

def read(src):
    raise IngestError(src.path, "not mine after all")

@hookimpl
def harness_ext_adapters():
    yield Adapter(name="greedy-csv", can_handle=can_handle, read=read)
'''


@pytest.mark.slow
def test_predict_takes_the_adapter_its_ambiguity_error_asks_for(site, small_store, tmp_path):
    red = tmp_path / "red"
    assert _cli("reduce", "-q", "--db", small_store, "--budget", "2", "--out", red).returncode == 0
    new = tmp_path / "new.csv"
    new.write_text("model,dataset,value\nnewbie,d0,0.5\nnewbie,d1,0.6\nnewbie,d2,0.4\n")
    _install(site, "harness-ext-greedy-csv", "faulty_greedy_csv", GREEDY_ADAPTER)
    r = _cli("predict", "-m", red, new, "--no-lm-eval-results")
    assert r.returncode == 1 and "choose one with --adapter" in r.stderr, r.stderr
    r = _cli("predict", "-m", red, new, "--no-lm-eval-results", "--adapter", "csv")
    assert r.returncode == 0, r.stderr
    assert "newbie" in r.stdout
