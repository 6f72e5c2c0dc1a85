"""Misbehaving third-party plugins (issue 19 item 5, issue 16 item 8): each is reported with its
distribution and skipped; a name clash breaks only its kind; plugins can be switched off; contract
tests fail for a name that is not registered; manifests record plugin versions."""

from __future__ import annotations


import pytest

import harness_ext.plugin_manager as pm_mod
from harness_ext.errors import PluginError
from harness_ext.plugin_manager import get_plugin_manager, get_registrations

from plugin_site import install, run_cli


def _install(site, dist, module, body):
    install(site, dist, module, body, version="0.7")


HEADER = "import sys\nimport numpy as np\nfrom harness_ext import hookimpl, SimilarityMeasure, Adapter\n"
BAD = {
    "raises": "@hookimpl\ndef harness_ext_similarity_measures():\n    raise RuntimeError('hook bug')\n",
    "returns_int": "@hookimpl\ndef harness_ext_similarity_measures():\n    return 3\n",
    "yields_dict": "@hookimpl\ndef harness_ext_similarity_measures():\n    yield {'name': 'x'}\n",
    "bad_name": "@hookimpl\ndef harness_ext_similarity_measures():\n    yield SimilarityMeasure(name='3 bad!', func=None)\n",
    "misspelt_hook": "@hookimpl\ndef harness_ext_similarity_measure():\n    yield SimilarityMeasure(name='m', func=None)\n",
    "wrong_signature": "@hookimpl\ndef harness_ext_adapters(config):\n    return []\n",
    "exits_at_import": "sys.exit(3)\n",
    "raises_at_import": "raise ImportError('needs a missing package')\n",
}
GOOD = "@hookimpl\ndef harness_ext_similarity_measures():\n    yield SimilarityMeasure(name='Fake-Corr', func=lambda X: np.corrcoef(X, rowvar=False))\n"
CLASH = "@hookimpl\ndef harness_ext_similarity_measures():\n    yield SimilarityMeasure(name='pearson', func=lambda X: X)\n"


_cli = run_cli


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_broken_plugin_is_reported_with_its_distribution_and_skipped(site, case):
    dist = f"harness-ext-{case.replace('_', '-')}"
    _install(site, dist, f"fake_{case}", HEADER + BAD[case])
    _install(site, "harness-ext-good", "fake_good", HEADER + GOOD)
    with pytest.warns(RuntimeWarning, match=dist):
        pm = get_plugin_manager()
        sims = get_registrations("similarity_measures", pm)
        for kind in ("adapters", "selectors", "predictors", "weighting_schemes", "manifest_writers"):
            get_registrations(kind, pm)
    assert "pearson" in sims and "fake_corr" in sims
    broken = {b.source: b for b in pm.harness_ext_broken}
    assert dist in broken and broken[dist].reason
    pm_mod.reset_default_plugin_manager()
    import warnings

    # The command routes warnings to logging (stderr) unless the process already captured them (pytest):
    # the warning is in one of the two.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = _cli("plugins")
    assert dist in r.stderr + " ".join(str(w.message) for w in caught)
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if dist in ln)
    assert "broken" in line
    assert "fake_corr" in r.stdout and "Traceback" not in r.stderr


def test_a_clash_disables_only_the_clashing_registration_and_plugins_lists_it(site, tmp_path):
    _install(site, "harness-ext-dup", "fake_dup", HEADER + CLASH)
    pm = get_plugin_manager()
    assert get_registrations("adapters", pm)  # other kinds work
    with pytest.warns(RuntimeWarning, match="harness-ext-dup.*SimilarityMeasure 'pearson'.*built-in.*disabled"):
        sims = get_registrations("similarity_measures", pm)
    assert sims["pearson"].source.endswith("(built-in)")
    r = _cli("plugins")
    assert r.returncode == 0, r.stderr
    clash = [ln for ln in r.stdout.splitlines() if "clash" in ln]
    assert len(clash) == 1 and "harness-ext-dup" in clash[0] and "harness_ext.plugins.registry" in clash[0]
    csv = tmp_path / "x.csv"
    csv.write_text("model,dataset,value\nm,d,0.5\n")
    r = _cli("ingest", "--db", tmp_path / "s.duckdb", csv)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("how", ["env", "flag", "module"])
def test_disable_a_plugin(site, monkeypatch, how):
    _install(site, "harness-ext-dup", "fake_dup", HEADER + CLASH)
    if how == "env":
        monkeypatch.setenv("HARNESS_EXT_DISABLE_PLUGINS", "other, harness-ext-dup")
    elif how == "module":
        monkeypatch.setenv("HARNESS_EXT_DISABLE_PLUGINS", "fake_dup")
    else:
        r = _cli("--disable-plugin", "harness-ext-dup", "plugins", "--kind", "similarity_measures")
        assert r.returncode == 0 and "harness-ext-dup" not in r.stdout and "clash" not in r.stdout
    pm_mod.reset_default_plugin_manager()
    assert get_registrations("similarity_measures")["pearson"].source.endswith("(built-in)")


def test_a_built_in_can_be_disabled(site, monkeypatch):
    monkeypatch.setenv("HARNESS_EXT_DISABLE_PLUGINS", "tsml")
    assert "tsml_bakeoff" not in get_registrations("adapters", get_plugin_manager())
    r = _cli("plugins", "--disable-plugin", "harness_ext.adapters.csv_table", "--kind", "adapters")
    assert r.returncode == 0 and "csv" not in r.stdout.split() and "tsml_bakeoff" not in r.stdout


def test_a_built_in_method_module_can_be_disabled(site, monkeypatch):
    """All built-in methods register through one module; their implementation module is a name too."""
    _install(site, "harness-ext-dup", "fake_dup", HEADER + CLASH)
    monkeypatch.setenv("HARNESS_EXT_DISABLE_PLUGINS", "similarity")  # the built-in measures make room
    pm_mod.reset_default_plugin_manager()
    got = get_registrations("similarity_measures")
    assert "harness-ext-dup" in got["pearson"].source and "spearman" not in got
    assert "lowrank" in get_registrations("predictors")  # other built-in kinds stay
    r = _cli("plugins", "--disable-plugin", "harness_ext.plugins.predictors_lowrank", "--kind", "predictors")
    assert r.returncode == 0 and "benchpress" not in r.stdout and "ridge" in r.stdout


IRT_FAMILY = {"irt", "pirt", "gpirt", "aipw_irt", "aipw_crosstask"}
SINGLE_TASK = {"sample_mean", "random_learn", "aipw_paper", "aipw", "anchor_weighted", "composite"}


@pytest.mark.parametrize("off, gone, kept", [
    ("item_irt_estimators", IRT_FAMILY, SINGLE_TASK),
    ("harness_ext.methods.engine.item_irt_estimators", IRT_FAMILY, SINGLE_TASK),
    ("item_estimators", SINGLE_TASK, IRT_FAMILY),
])
def test_a_built_in_item_estimator_module_can_be_disabled(site, monkeypatch, off, gone, kept):
    """The item estimators live in two modules: switching one off leaves the other's registered."""
    monkeypatch.setenv("HARNESS_EXT_DISABLE_PLUGINS", off)
    pm_mod.reset_default_plugin_manager()
    got = get_registrations("item_estimators", get_plugin_manager())
    assert not gone & set(got) and kept <= set(got)
    assert "crosstask" in got  # registered by its own plugin module


# -- contract tests fail on a name that is not registered --------------------------------------------
def test_contract_checks_fail_for_unknown_names(site, monkeypatch):
    from harness_ext.testing import iter_checks

    assert list(iter_checks(["selectors"], ["Greedy-Coverage"]))  # non-normalised names are normalised
    with pytest.raises(PluginError, match="no registered plugin named 'nope'"):
        list(iter_checks(["selectors"], ["nope"]))
    with pytest.raises(PluginError, match="selects no plugin"):
        list(iter_checks(["selectors"], []))
    with pytest.raises(PluginError, match="no registered plugin named 'pearson' among selectors"):
        list(iter_checks(["selectors"], ["pearson"]))  # registered, but of another kind
    _install(site, "harness-ext-good", "fake_good", HEADER + GOOD)
    pm_mod.reset_default_plugin_manager()
    assert list(iter_checks(["similarity_measures"], ["Fake-Corr"]))
    monkeypatch.setenv("HARNESS_EXT_LOAD_PLUGINS", "")  # the allow-list excludes it
    pm_mod.reset_default_plugin_manager()
    with pytest.raises(PluginError, match="HARNESS_EXT_LOAD_PLUGINS"):
        list(iter_checks(["similarity_measures"], ["fake_corr"]))


# -- plugin versions in the manifest ----------------------------------------------------------------------
@pytest.mark.slow
def test_manifest_records_plugin_distributions_and_is_byte_identical(tmp_path):
    import numpy as np
    import pandas as pd

    from harness_ext.methods.reduction.manifest import build_manifest

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.random((12, 6)), index=[f"m{i}" for i in range(12)], columns=[f"d{j}" for j in range(6)])
    a = build_manifest(df, budget="2", n_random=10, random_state=3)
    b = build_manifest(df, budget="2", n_random=10, random_state=3)
    import json

    assert json.dumps(a) == json.dumps(b)
    plugins = {p["kind"]: p for p in a["tool"]["plugins"]}
    # The default selector takes no similarity measure: none ran, so none is named.
    assert set(plugins) == {"selectors", "predictors", "weighting_schemes"}
    assert plugins["predictors"] == {"kind": "predictors", "name": "lowrank", "distribution": "harness-ext",
                                     "version": a["tool"]["version"]}


# -- sys.exit and a plugin's own KeyboardInterrupt inside a call are contained; a real Ctrl-C is not --------
ADAPTER = '''
import os, signal
from harness_ext import hookimpl, Adapter, ResultRecord

def can_handle(src):
    if src.path.name.startswith("{trigger}"):
        {action}
    return src.path.suffix == ".fake"

def read(src):
    yield ResultRecord(model="m", benchmark="fakebench", dataset="d", metric="acc", value=0.5)
    {read_action}

@hookimpl
def harness_ext_adapters():
    yield Adapter(name="{name}", can_handle=can_handle, read=read, description="a fake adapter")
'''


def _adapter(site, name="fake", trigger="exit", action="pass", read_action="pass"):
    _install(site, "harness-ext-fake-adapter", "fake_adapter",
             ADAPTER.format(name=name, trigger=trigger, action=action, read_action=read_action))


@pytest.mark.parametrize("where", ["can_handle", "read"])
@pytest.mark.parametrize("action", ["raise SystemExit(3)", "raise KeyboardInterrupt"])
def test_an_adapters_exit_or_interrupt_fails_one_file_and_the_ingest_goes_on(site, tmp_path, where, action):
    if where == "can_handle":
        _adapter(site, trigger="boom", action=action)
    else:
        _adapter(site, trigger="never", read_action=action)
    (tmp_path / "boom.fake").write_text("x")
    (tmp_path / "ok.csv").write_text("model,dataset,value\nm,d,0.5\n")
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = _cli("ingest", "--db", tmp_path / "s.duckdb", tmp_path / "boom.fake", tmp_path / "ok.csv")
    said = r.stderr + " ".join(str(w.message) for w in caught)
    assert r.returncode == 0, r.stderr
    assert "1 file ingested" in r.stdout and "Traceback" not in r.stderr
    name = "SystemExit" if "SystemExit" in action else "KeyboardInterrupt"
    assert "harness-ext-fake-adapter" in said and name in said and where in said


def test_a_real_ctrl_c_during_a_plugin_call_still_stops(site, tmp_path):
    """The plugin's can_handle is interrupted by a SIGINT (as Ctrl-C sends): the KeyboardInterrupt propagates."""
    _adapter(site, trigger="boom", action="os.kill(os.getpid(), signal.SIGINT); import time; time.sleep(1)")
    (tmp_path / "boom.fake").write_text("x")
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    with Store.open(tmp_path / "s.duckdb") as store, pytest.raises(KeyboardInterrupt):
        ingest_paths(store, [tmp_path / "boom.fake"], show_progress=False)


SIMILARITY = '''
import sys
import numpy as np
from harness_ext import hookimpl, SimilarityMeasure, Selector

def exits(X):
    sys.exit(4)

def all_nan(X):
    return np.full((X.shape[1], X.shape[1]), np.nan)

class ExitingSelector:
    def __init__(self, random_state=None):
        self.random_state = random_state
    def get_params(self, deep=True):
        return {"random_state": self.random_state}
    def fit(self, X, features=None):
        raise KeyboardInterrupt

@hookimpl
def harness_ext_similarity_measures():
    yield SimilarityMeasure(name="exits", func=exits)
    yield SimilarityMeasure(name="all-nan", func=all_nan)

@hookimpl
def harness_ext_selectors():
    yield Selector(name="exiting", cls=ExitingSelector)
'''


def test_a_similaritys_exit_and_a_selectors_interrupt_are_plugin_errors(site):
    import numpy as np

    from harness_ext.methods.similarity.measures import similarity_matrix
    from harness_ext.plugin_manager import get_registration

    _install(site, "harness-ext-fake-methods", "fake_methods", SIMILARITY)
    X = np.random.default_rng(0).random((8, 4))
    with pytest.warns(RuntimeWarning, match="harness-ext-fake-methods.*SystemExit"), \
            pytest.raises(PluginError, match="harness-ext-fake-methods.*raised SystemExit: 4"):
        similarity_matrix(X, "exits")
    est = get_registration("selectors", "exiting").cls(random_state=0)
    with pytest.warns(RuntimeWarning), pytest.raises(PluginError, match="ExitingSelector.fit raised KeyboardInterrupt"):
        est.fit(X)


def test_a_similarity_undefined_for_every_pair_is_an_error_naming_it(site):
    import numpy as np

    from harness_ext.errors import MethodError
    from harness_ext.methods.similarity.measures import similarity_matrix

    _install(site, "harness-ext-fake-methods", "fake_methods", SIMILARITY)
    with pytest.raises(MethodError, match="'all_nan' .*harness-ext-fake-methods.*NaN.* every pair"):
        similarity_matrix(np.random.default_rng(0).random((8, 4)), "all-nan")


def test_an_adapter_named_like_a_built_in_disables_only_itself(site, tmp_path):
    _adapter(site, name="csv", trigger="never")
    (tmp_path / "ok.csv").write_text("model,dataset,value\nm,d,0.5\n")
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = _cli("ingest", "--db", tmp_path / "s.duckdb", tmp_path / "ok.csv")
        p = _cli("plugins", "--kind", "adapters")
    assert r.returncode == 0 and "1 file ingested" in r.stdout, r.stderr
    said = r.stderr + p.stderr + " ".join(str(w.message) for w in caught)
    assert "harness-ext-fake-adapter" in said and "'csv'" in said and "disabled" in said
    line = next(ln for ln in p.stdout.splitlines() if "harness-ext-fake-adapter" in ln)
    assert "clash" in line and "csv" in line
