"""The mistakes a new plugin author makes, each reported once, naming the plugin and what to change.

A registration missing its implementation, or whose class has no ``get_params``, used to be accepted and listed as
``ok``; the command using it then failed with "'NoneType' object is not callable" or an AttributeError naming
nothing. A wrong hook signature's reason broke the ``plugins`` table over three lines; a name asked for whose plugin
was skipped read as a plain unknown name; an adapter claiming every file made every file ambiguous, naming no
plugin, and passed the contract check.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import harness_ext.plugin_manager as pm_mod
from harness_ext.errors import PluginError
from harness_ext.plugin_manager import get_plugin_manager, get_registration, get_registrations
from harness_ext.types import REGISTRATION_TYPES, Adapter, ItemEstimator, ManifestWriter, Predictor, Selector

from plugin_site import PLUGIN_HEADER, install, run_cli

HEADER = PLUGIN_HEADER


def _predictors(name, hook="harness_ext_predictors", params="", fields="cls=Mean"):
    """A plugin module registering one predictor ``name`` (through ``hook``, taking ``params``)."""
    return HEADER + f"""
@hookimpl
def {hook}({params}):
    yield Predictor(name="{name}", {fields})
"""


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


@pytest.mark.parametrize("make, field", [
    (lambda: Predictor(name="mine"), "cls"),
    (lambda: Selector(name="mine", description="no class"), "cls"),
    (lambda: Adapter(name="mine", can_handle=lambda src: False), "read"),
    (lambda: ManifestWriter(name="mine", suffix=".txt"), "write"),
])
def test_a_registration_without_its_implementation_is_refused_naming_the_field(make, field):
    with pytest.raises(TypeError, match=rf"'mine': {field} is required .*'package.module:attribute'"):
        make()


def test_a_class_without_get_params_or_a_value_that_is_not_callable_is_refused():
    class Plain:
        def fit(self, X):
            return self

    with pytest.raises(TypeError, match=r"Predictor 'p': cls is the class Plain, which has no get_params\(\): "
                                        r"subclass harness_ext.base.BasePredictor"):
        Predictor(name="p", cls=Plain)
    with pytest.raises(TypeError, match=r"Selector 's': cls is int 3, not a class"):
        Selector(name="s", cls=3)
    with pytest.raises(ValueError, match=r"Adapter.read: 'x' is not a reference"):
        Adapter(name="a", can_handle=lambda src: False, read="x")
    with pytest.raises(TypeError, match=r"ManifestWriter 'w': write is int 1, not callable"):
        ManifestWriter(name="w", write=1)
    # an item estimator may be any class (harness-ext checks its inputs and outputs): only the contract check asks
    assert ItemEstimator(name="i", cls=Plain).cls is Plain


def test_the_plugins_hook_with_a_registration_missing_a_field_is_listed_broken_and_named_when_asked_for(site):
    install(site, "harness-ext-nofield", "fake_nofield", _predictors("nocls", fields='description="forgot cls"'))
    install(site, "harness-ext-good", "fake_good", _predictors("good-mean"))
    with pytest.warns(RuntimeWarning, match=r"harness-ext-nofield.*Predictor 'nocls': cls is required"):
        regs = get_registrations("predictors", get_plugin_manager())
    assert "good_mean" in regs and "nocls" not in regs
    with pytest.raises(PluginError, match=r"unknown Predictor 'nocls'.*skipped as broken, so not among them: "
                                          r"harness-ext-nofield \(harness-ext-nofield\): .*cls is required"):
        _quiet(get_registration, "predictors", "nocls")
    pm_mod.reset_default_plugin_manager()
    r = _quiet(run_cli, "plugins", "--kind", "predictors")
    assert r.returncode == 0, r.stderr
    row = next(ln for ln in r.stdout.splitlines() if "harness-ext-nofield" in ln)
    assert "broken" in row and "cls is required" in row


def test_a_referenced_class_without_get_params_names_the_plugin_when_used(site):
    (site / "fake_ref_impl.py").write_text("class NoParams:\n    def fit(self, X):\n        return self\n")
    install(site, "harness-ext-ref", "fake_ref", """
from harness_ext import hookimpl, WeightingScheme

@hookimpl
def harness_ext_weighting_schemes():
    yield WeightingScheme(name="by-ref", cls="fake_ref_impl:NoParams")
""")
    reg = get_registrations("weighting_schemes", get_plugin_manager())["by_ref"]  # registering imports nothing
    with pytest.raises(PluginError, match=r"WeightingScheme 'by_ref' from harness-ext-ref \(harness-ext-ref\): "
                                          r"cls='fake_ref_impl:NoParams' is the class NoParams, which has no "
                                          r"get_params\(\): subclass harness_ext.base.BaseWeighting"):
        reg.cls


def test_a_wrong_hook_signature_is_one_line_of_the_plugins_table(site):
    install(site, "harness-ext-wrongsig", "fake_wrongsig", _predictors("w", params="config"))
    r = _quiet(run_cli, "plugins")
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if "hookimpl definition" in ln or "Argument(s)" in ln]
    assert len(rows) == 1 and "broken" in rows[0] and "harness-ext-wrongsig" in rows[0], rows
    assert all("\n" not in b.reason for b in pm_mod.default_plugin_manager().harness_ext_broken)


def test_a_misspelt_hooks_names_are_told_as_skipped_when_asked_for(site):
    install(site, "harness-ext-typo", "fake_typo", _predictors("typo-pred", hook="harness_ext_predictor"))
    with pytest.raises(PluginError, match=r"unknown Predictor 'typo-pred'.*harness-ext-typo.*implements unknown hook "
                                          r"harness_ext_predictor .*`harness-ext plugins` lists"):
        _quiet(get_registration, "predictors", "typo-pred", get_plugin_manager())


def test_two_plugins_of_one_name_are_a_plugin_error_naming_both(site):
    for d in ("a", "b"):
        install(site, f"harness-ext-dup-{d}", f"fake_dup_{d}", _predictors("twin"))
    with pytest.raises(PluginError, match=r"duplicate Predictor name 'twin': registered by harness-ext-dup-a "
                                          r"\(harness-ext-dup-a\) and by harness-ext-dup-b \(harness-ext-dup-b\)"):
        _quiet(get_registration, "predictors", "twin", get_plugin_manager())


GREEDY = HEADER + """
def read(src):
    raise IngestError(src.path, "not mine after all")

@hookimpl
def harness_ext_adapters():
    yield Adapter(name="greedy", can_handle=lambda src: True, read=read)
"""


def test_an_adapter_claiming_every_file_fails_the_contract_check_and_ingest_names_its_plugin(site, tmp_path):
    from harness_ext.testing import iter_checks

    install(site, "harness-ext-greedy", "fake_greedy", GREEDY)
    (reg, check), = iter_checks(kinds=["adapters"], names=["greedy"])
    with pytest.raises(AssertionError, match=r"greedy: can_handle claims empty.json, .*text.csv, which hold no "
                                             r"results in any format"):
        check(reg)
    csv = tmp_path / "board.csv"
    csv.write_text("model,arc,hellaswag\nm1,0.5,0.6\nm2,0.4,0.7\n")
    r = _quiet(run_cli, "ingest", "--db", tmp_path / "s.duckdb", csv)
    assert r.returncode != 0
    assert re.search(r"ambiguous format: adapters (csv, greedy|greedy, csv) all claim it; choose one with --adapter; "
                     r"greedy comes from the plugin harness-ext-greedy \(harness-ext-greedy\) "
                     r"\(--disable-plugin harness-ext-greedy switches it off\)",
                     r.stderr), r.stderr
    r = _quiet(run_cli, "--disable-plugin", "harness-ext-greedy", "ingest", "--db", tmp_path / "s.duckdb", csv)
    assert r.returncode == 0, r.stderr


def test_the_built_in_adapters_claim_none_of_the_contract_checks_non_result_files():
    from harness_ext.testing import check_adapter_sniffing

    for reg in get_registrations("adapters", get_plugin_manager(load_entry_points=False)).values():
        check_adapter_sniffing(reg)


def test_a_third_party_plugins_contract_tests_run_as_the_docs_say(site):
    """README_PLUGINS.md: ``parametrize_with_checks(kinds=..., names=...)`` over an installed plugin."""
    from harness_ext.testing import parametrize_with_checks

    install(site, "harness-ext-good", "fake_good", _predictors("good-mean"))
    mark = parametrize_with_checks(kinds=["predictors"], names=["good-mean"])
    pairs = mark.args[1]
    assert [c.__name__ for _, c in pairs] == ["check_predictor_params", "check_predictor_completes"]
    for reg, check in pairs:
        check(reg)


@pytest.mark.parametrize("kind", sorted(REGISTRATION_TYPES))
def test_every_registration_field_is_documented(kind):
    """Each field of a registration dataclass is described in its docstring (the API reference shows it)."""
    import dataclasses

    cls = REGISTRATION_TYPES[kind]
    doc = cls.__doc__ or ""
    params = doc.split("Parameters\n    ----------", 1)
    assert len(params) == 2, f"{cls.__name__} has no Parameters section"
    documented = {n.strip() for names in re.findall(r"^    (\w[\w, ]*) : ", params[1], re.M) for n in names.split(",")}
    for f in dataclasses.fields(cls):
        assert f.name in documented, f"{cls.__name__}.{f.name} is not documented"


def test_a_plugin_predictor_runs_through_reduce(site, tmp_path):
    install(site, "harness-ext-good", "fake_good", _predictors("good-mean"))
    import pandas as pd

    import harness_ext as hx

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((30, 3)) @ rng.random((3, 12)), index=[f"m{i}" for i in range(30)],
                     columns=[f"d{j}" for j in range(12)])
    r = hx.reduce(X, budget=3, predictor="good-mean", n_random=20, n_random_subsets=5)
    assert r.manifest["prediction"]["predictor"] == {"name": "good_mean", "params": {"k": 1}}


def test_the_plugins_table_left_aligns_its_descriptions(site):
    """Right-aligned, every row of ``harness-ext plugins`` was padded to its longest description (200 characters)."""
    install(site, "harness-ext-good", "fake_good", _predictors("good-mean", fields='cls=Mean, description="short"'))
    r = _quiet(run_cli, "plugins", "--kind", "predictors")
    lines = r.stdout.splitlines()
    row = next(ln for ln in lines if "harness-ext-good" in ln)
    assert row.endswith("(harness-ext-good) short"), row
    assert all(ln == ln.rstrip() for ln in lines) and lines[0].split()[-1] == "description"
