"""A plugin's hook returning several registrations of which one is refused keeps the others.

A registration made with a field missing or unusable (no ``cls``, a class without ``get_params``, an invalid name),
or of another kind, is refused alone: named, with its reason and plugin, in a warning and in ``harness-ext plugins``;
the hook's valid registrations are used. Before, the refusal was raised inside the plugin's own hook and the hook's
every registration was lost. A duplicate name across two plugins stays a PluginError naming both.
"""

from __future__ import annotations

import warnings

import pytest

from harness_ext.errors import PluginError
from harness_ext.plugin_manager import get_plugin_manager, get_registration, get_registrations
from harness_ext.types import Predictor

from plugin_site import PLUGIN_HEADER, install, plugin_site, run_cli

MODULE = PLUGIN_HEADER + """
from harness_ext import Selector


class Plain:
    pass


@hookimpl
def harness_ext_predictors():
    {body}
"""

SEVERAL = """return [Predictor(name="first-mean", cls=Mean),
            Predictor(name="nocls", description="forgot cls"),
            Predictor(name="plain", cls=Plain),
            Selector(name="wrongkind", cls=Mean),
            Predictor(name="last-mean", cls=Mean)]"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    yield from plugin_site(tmp_path, monkeypatch)


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


@pytest.mark.parametrize("generator", [False, True], ids=["list", "yield"])
def test_only_the_refused_registrations_are_left_out(site, generator):
    body = SEVERAL if not generator else "for reg in " + SEVERAL[len("return "):].replace("\n", "\n    ") + (
        ":\n        yield reg")
    install(site, "harness-ext-several", "fake_several", MODULE.format(body=body))
    with pytest.warns(RuntimeWarning) as told:
        regs = get_registrations("predictors", pm := get_plugin_manager())
    assert "first_mean" in regs and "last_mean" in regs
    assert not {"nocls", "plain", "wrongkind"} & set(regs)
    messages = [str(w.message) for w in told if "harness-ext-several" in str(w.message)]
    assert any("Predictor 'nocls': cls is required" in m for m in messages), messages
    assert any("Predictor 'plain': cls is the class Plain, which has no get_params()" in m for m in messages)
    assert any("yielded Selector from harness_ext_predictors" in m for m in messages)
    assert all("that registration is refused" in m for m in messages)
    broken = pm.harness_ext_broken
    assert len(broken) == 3 and {b.source for b in broken} == {"harness-ext-several"}
    # the kept ones work; the refused one is named when asked for, with its plugin and reason
    assert _quiet(get_registration, "predictors", "last-mean").cls(k=2).get_params() == {"k": 2}
    with pytest.raises(PluginError, match=r"unknown Predictor 'plain'.*harness-ext-several.*no get_params"):
        _quiet(get_registration, "predictors", "plain")


def test_the_cli_lists_the_kept_and_the_refused(site):
    install(site, "harness-ext-several", "fake_several", MODULE.format(body=SEVERAL))
    r = _quiet(run_cli, "plugins", "--kind", "predictors")
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if "harness-ext-several" in ln]
    assert sum(" ok " in ln for ln in rows) == 2, rows
    assert sum("broken" in ln for ln in rows) == 3, rows
    assert any("cls is required" in ln for ln in rows)


def test_a_duplicate_name_across_plugins_stays_an_error_naming_both(site):
    install(site, "harness-ext-one", "fake_one", MODULE.format(
        body='return [Predictor(name="twin", cls=Mean), Predictor(name="only-one", cls=Mean)]'))
    install(site, "harness-ext-two", "fake_two", MODULE.format(
        body='return [Predictor(name="twin", cls=Mean), Predictor(name="nocls")]'))
    regs = _quiet(get_registrations, "predictors", get_plugin_manager())
    assert "only_one" in regs and "twin" not in regs
    with pytest.raises(PluginError, match=r"duplicate Predictor name 'twin': registered by .* and by ") as err:
        _quiet(get_registration, "predictors", "twin")
    assert "harness-ext-one" in str(err.value) and "harness-ext-two" in str(err.value)


def test_outside_a_hook_a_bad_registration_still_raises():
    with pytest.raises(TypeError, match="cls is required"):
        Predictor(name="mine")
