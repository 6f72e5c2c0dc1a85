"""The plugin system: built-ins, installed entry-point plugins, failures, duplicates, allow-list."""

from __future__ import annotations

import sys
import textwrap

import pytest

from harness_ext import PluginError, get_plugin_manager, get_registration, get_registrations
from harness_ext.plugin_manager import BUILTIN_SOURCE
from harness_ext.types import REGISTRATION_TYPES, SimilarityMeasure, normalise_name

from plugin_site import installed_plugins


def _install_fake(tmp_path, dist, module, body, ep_name=None):
    """Write an importable module plus a .dist-info with an entry_points.txt, as pip would."""
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(body))
    info = tmp_path / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[harness_ext]\n{ep_name or dist} = {module}\n")


GOOD = """
    import numpy as np
    from harness_ext import hookimpl, SimilarityMeasure

    @hookimpl
    def harness_ext_similarity_measures():
        yield SimilarityMeasure(name="Fake-Corr", func=lambda X: np.corrcoef(X, rowvar=False))
"""

BROKEN = """
    raise ImportError("this plugin needs a package that is not installed")
"""

DUPLICATE = """
    from harness_ext import hookimpl, SimilarityMeasure

    @hookimpl
    def harness_ext_similarity_measures():
        yield SimilarityMeasure(name="pearson", func=lambda X: X)
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("HARNESS_EXT_LOAD_PLUGINS", raising=False)
    if installed_plugins():  # the environment's own plugins stay out (plugin_site)
        monkeypatch.setenv("HARNESS_EXT_DISABLE_PLUGINS", ",".join(installed_plugins()))
    yield tmp_path
    for mod in ("fake_good", "fake_broken", "fake_dup"):
        sys.modules.pop(mod, None)


def test_builtins_register_through_hooks():
    pm = get_plugin_manager(load_entry_points=False)
    for kind in ("similarity_measures", "selectors", "adapters"):
        regs = get_registrations(kind, pm)
        assert regs, kind
        assert all(r.source.endswith(f"({BUILTIN_SOURCE})") for r in regs.values())
    assert set(get_registrations("adapters", pm)) >= {"lm_eval_v03", "lm_eval_v04", "every_eval_ever", "csv"}


def test_no_import_side_effects():
    import importlib

    import harness_ext.plugin_manager as pmod

    importlib.reload(pmod)
    assert pmod._DEFAULT_PM is None


def test_installed_plugin_loads(site):
    _install_fake(site, "harness-ext-fake", "fake_good", GOOD)
    pm = get_plugin_manager()
    reg = get_registration("similarity_measures", "fake_corr", pm)
    assert reg.name == "fake_corr"  # normalised from "Fake-Corr"
    assert "harness-ext-fake" in reg.source


def test_broken_plugin_is_a_warning_naming_it(site):
    _install_fake(site, "harness-ext-broken", "fake_broken", BROKEN)
    with pytest.warns(RuntimeWarning, match="harness-ext-broken.*failed to load"):
        pm = get_plugin_manager()
    assert "pearson" in get_registrations("similarity_measures", pm)


def test_a_name_clash_with_a_built_in_disables_the_plugins_registration_naming_both(site):
    _install_fake(site, "harness-ext-dup", "fake_dup", DUPLICATE)
    pm = get_plugin_manager()
    with pytest.warns(RuntimeWarning) as caught:
        regs = get_registrations("similarity_measures", pm)
    assert regs["pearson"].source.endswith("(built-in)")
    msg = " ".join(str(w.message) for w in caught)
    assert "'pearson'" in msg and "harness-ext-dup" in msg and "harness_ext.plugins.registry" in msg


def test_allow_list(site, monkeypatch):
    _install_fake(site, "harness-ext-fake", "fake_good", GOOD)
    monkeypatch.setenv("HARNESS_EXT_LOAD_PLUGINS", "")
    assert "fake_corr" not in get_registrations("similarity_measures", get_plugin_manager())
    monkeypatch.setenv("HARNESS_EXT_LOAD_PLUGINS", "harness-ext-fake")
    assert "fake_corr" in get_registrations("similarity_measures", get_plugin_manager())
    monkeypatch.setenv("HARNESS_EXT_LOAD_PLUGINS", "something-else")
    assert "fake_corr" not in get_registrations("similarity_measures", get_plugin_manager())


def test_unknown_plugin_name_lists_available():
    with pytest.raises(PluginError, match="unknown Selector 'nope'; available:"):
        get_registration("selectors", "nope")


def test_wrong_registration_type_is_rejected(site):
    _install_fake(site, "harness-ext-wrong", "fake_wrong", """
        from harness_ext import hookimpl, Selector
        @hookimpl
        def harness_ext_similarity_measures():
            yield Selector(name="x", cls="harness_ext.base:BaseSelector")
    """)
    pm = get_plugin_manager()
    with pytest.warns(RuntimeWarning, match="expected SimilarityMeasure"):  # skipped, never fatal (issue 19)
        regs = get_registrations("similarity_measures", pm)
    assert "x" not in regs and "pearson" in regs
    assert [b.source for b in pm.harness_ext_broken] == ["harness-ext-wrong"]
    sys.modules.pop("fake_wrong", None)


def test_names_are_normalised():
    assert normalise_name("Greedy-Coverage") == "greedy_coverage"
    assert SimilarityMeasure(name="Minkowski P.3", func=abs).name == "minkowski_p_3"
    with pytest.raises(ValueError):
        normalise_name("3bad")
    assert set(REGISTRATION_TYPES) == {
        "similarity_measures", "selectors", "predictors", "weighting_schemes", "adapters", "manifest_writers",
        "item_estimators"}


def _documented_signatures() -> dict:
    """``{type name: [field, ...]}`` of the registration signatures README_PLUGINS.md's hook table and text give."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README_PLUGINS.md").read_text()
    out = {}
    for cls, args in re.findall(r"`(\w+)\(([^`]*?)\)`", text):
        if cls in {t.__name__ for t in REGISTRATION_TYPES.values()} | {"ResultRecord"}:
            out[cls] = [a.split("=")[0].strip() for a in args.replace("\n", " ").split(",") if a.strip()]
    return out


@pytest.mark.parametrize("kind", sorted(REGISTRATION_TYPES) + ["result_record"])
def test_registrations_take_their_arguments_in_the_documented_order(kind):
    """README_PLUGINS.md gives `SimilarityMeasure(name, func, description="", ...)`, `Selector(name, cls,
    description="")`, ...; positionally, `SimilarityMeasure("x", func)` set the description to the function and
    left `func` None, silently. The fields take the order the documentation gives (ResultRecord's too)."""
    import dataclasses

    from harness_ext.types import ResultRecord

    cls = ResultRecord if kind == "result_record" else REGISTRATION_TYPES[kind]
    documented = _documented_signatures()[cls.__name__]
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    assert fields == documented
    if kind == "similarity_measures":
        def func(X):
            return X
        reg = cls("x", func, "a measure")
        assert reg.func is func and reg.description == "a measure"


def test_every_hook_is_prefixed_and_documented():
    from harness_ext.hookspecs import HarnessExtSpecs

    hooks = [n for n in vars(HarnessExtSpecs) if not n.startswith("_")]
    assert len(hooks) == 7
    for name in hooks:
        assert name.startswith("harness_ext_")
        doc = getattr(HarnessExtSpecs, name).__doc__
        assert "Example" in doc and "Returns" in doc


def test_hook_examples_register_cleanly():
    """Each hook docstring's Example, copied into a plugin, neither clashes with a built-in name nor fails the
    contract.

    Was: the weighting and manifest-writer examples registered "uniform" and "task-list" (built-in names, so a
    PluginError), and the similarity example used np.corrcoef, which fails the missing-cell check.
    """
    import re

    import numpy as np
    import pandas as pd

    from harness_ext import hookimpl
    from harness_ext.hookspecs import HarnessExtSpecs
    from harness_ext.testing import check_similarity_missing_and_constant, check_similarity_shape_symmetry

    pm = get_plugin_manager(load_entry_points=False)
    for hook in [n for n in vars(HarnessExtSpecs) if n.startswith("harness_ext_")]:
        doc = getattr(HarnessExtSpecs, hook).__doc__
        kind = hook[len("harness_ext_"):]
        names = re.findall(r'name="([^"]+)"', doc)
        assert names and not {normalise_name(n) for n in names} & set(get_registrations(kind, pm)), hook
    code = HarnessExtSpecs.harness_ext_similarity_measures.__doc__.split(".. code-block:: python")[1]
    code = textwrap.dedent(code.split("Returns")[0])
    scope = {"np": np, "pd": pd, "hookimpl": hookimpl, "SimilarityMeasure": SimilarityMeasure}
    exec(code, scope)
    for reg in scope["harness_ext_similarity_measures"]():
        check_similarity_shape_symmetry(reg)
        check_similarity_missing_and_constant(reg)


LAZY = """
    from harness_ext import hookimpl, Selector

    @hookimpl
    def harness_ext_selectors():
        yield Selector(name="lazy-one", cls="fake_lazy_impl:Impl", description="named by reference")
        yield Selector(name="lazy-typo", cls="fake_lazy_impl:Missing")
"""


def test_a_registration_names_its_implementation_by_reference(site):
    """``cls="module:attr"`` is imported on first use, and a bad reference names the plugin when used."""
    _install_fake(site, "harness-ext-lazy", "fake_lazy", LAZY)
    (site / "fake_lazy_impl.py").write_text("from harness_ext.base import BaseSelector\n\nclass Impl(BaseSelector):\n    pass\n")
    try:
        regs = get_registrations("selectors", get_plugin_manager())
        assert "fake_lazy_impl" not in sys.modules and regs["lazy_one"].description == "named by reference"
        assert regs["lazy_one"].cls.__name__ == "Impl" and "fake_lazy_impl" in sys.modules
        with pytest.raises(PluginError, match=r"'lazy_typo' from harness-ext-lazy \(harness-ext-lazy\).*Missing"):
            regs["lazy_typo"].cls
    finally:
        sys.modules.pop("fake_lazy", None)
        sys.modules.pop("fake_lazy_impl", None)
    with pytest.raises(ValueError, match="not a reference"):
        SimilarityMeasure(name="x", func="numpy.corrcoef")


def test_entry_point_prefilter(tmp_path, monkeypatch):
    """importlib.metadata (0.1 s) is skipped only when no entry_points.txt on sys.path declares the group."""
    from harness_ext.plugin_manager import _may_have_entry_points

    info = tmp_path / "other-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[console_scripts]\nother = other:main\n")
    (tmp_path / "no_eps-1.0.dist-info").mkdir()
    from importlib.machinery import PathFinder

    # as an environment without a distribution-listing finder of its own (a zipimport hook, say) would be
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if f is PathFinder or not hasattr(f, "find_distributions")])
    monkeypatch.setattr(sys, "path", [str(tmp_path), str(tmp_path / "missing")])
    assert not _may_have_entry_points()
    (info / "entry_points.txt").write_text("[console_scripts]\nother = other:main\n\n[harness_ext]\nx = other.plug\n")
    assert _may_have_entry_points()
    (info / "entry_points.txt").write_text("[console_scripts]\nother = other:main\n")
    (tmp_path / "bundle.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    monkeypatch.setattr(sys, "path", [str(tmp_path), str(tmp_path / "bundle.zip")])
    assert _may_have_entry_points()  # a zip on the path: the full discovery looks inside
    monkeypatch.setattr(sys, "path", [str(tmp_path), str(tmp_path / "old_plugin-1.0-py3.11.egg")])
    assert _may_have_entry_points()  # so does an egg (EGG-INFO/entry_points.txt)
