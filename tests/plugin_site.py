"""Third-party plugins installed in-process for tests: a folder on ``sys.path`` holding plugin modules with
the ``.dist-info`` pip would write (their entry points in the ``harness_ext`` group), and the CLI run in-process."""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
import textwrap
import types

import harness_ext.plugin_manager as pm_mod


#: A plugin module's start: harness-ext's hook marker and registrations, and a predictor class (column means).
PLUGIN_HEADER = """
import numpy as np
from harness_ext import hookimpl, Adapter, IngestError, ManifestWriter, Predictor
from harness_ext.base import BasePredictor, check_matrix


class Mean(BasePredictor):
    def __init__(self, k=1):
        self.k = k

    def fit(self, X):
        X = check_matrix(X)
        self.mean_ = np.where(np.isnan(X), np.nanmean(X, axis=0), X)
        self.std_ = None
        return self
"""


def install(site, dist, module, body, version="0.3"):
    """A distribution ``dist`` providing the plugin module ``module`` (``body``), as pip would install it."""
    (site / f"{module}.py").write_text(textwrap.dedent(body))
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[harness_ext]\n{dist} = {module}\n")
    importlib.invalidate_caches()
    pm_mod.reset_default_plugin_manager()  # the next use finds it


def plugin_site(tmp_path, monkeypatch):
    """Generator behind a ``site`` fixture: yields the folder; afterwards its modules are forgotten and the plugin
    manager rebuilt, so no test's plugins reach another."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delenv("HARNESS_EXT_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("HARNESS_EXT_DISABLE_PLUGINS", raising=False)
    # Plugins installed in the environment itself (a developer's own, pip install -e) stay out: the tests count
    # the broken and clashing plugins they install, and would count those too.
    installed = installed_plugins()
    if installed:
        monkeypatch.setenv("HARNESS_EXT_DISABLE_PLUGINS", ",".join(installed))
    pm_mod.reset_default_plugin_manager()
    before = set(sys.modules)
    yield folder
    for mod in set(sys.modules) - before:
        if str(getattr(sys.modules.get(mod), "__file__", "") or "").startswith(str(folder)):
            sys.modules.pop(mod, None)
    pm_mod._DISABLED.clear()
    pm_mod.reset_default_plugin_manager()


def installed_plugins() -> list:
    """The distributions (entry-point names when a distribution is unknown) installed in the environment with a
    ``harness_ext`` entry point."""
    from importlib.metadata import entry_points

    names = set()
    for ep in entry_points(group=pm_mod.ENTRY_POINT_GROUP):
        try:
            names.add(ep.dist.metadata["Name"] if ep.dist is not None else ep.name)
        except Exception:  # noqa: BLE001 - unreadable metadata: its entry point's name
            names.add(ep.name)
    return sorted(names)


def run_cli(*args):
    """``harness-ext ARGS`` in-process: returncode, stdout and stderr."""
    from harness_ext.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return types.SimpleNamespace(returncode=rc, stdout=out.getvalue(), stderr=err.getvalue())
