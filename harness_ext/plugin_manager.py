"""Building the plugin manager and looking plugins up by kind and name.

Nothing is registered at import time: :func:`get_plugin_manager` registers the
built-in plugin modules, then the ``harness_ext`` entry-point group (filtered by
``HARNESS_EXT_LOAD_PLUGINS``), then checks that every hook implementation
matches a spec.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import warnings
from dataclasses import dataclass
from typing import Optional

import pluggy

from .errors import PluginError
from .hookspecs import PROJECT_NAME, HarnessExtSpecs
from .types import REGISTRATION_TYPES, normalise_name

ENTRY_POINT_GROUP = "harness_ext"
LOAD_PLUGINS_ENV = "HARNESS_EXT_LOAD_PLUGINS"

#: Built-in plugin modules, registered exactly as a third-party plugin would be.
BUILTIN_MODULES = (
    "harness_ext.plugins.similarity",
    "harness_ext.plugins.selectors",
    "harness_ext.plugins.selectors_002",
    "harness_ext.plugins.predictors",
    "harness_ext.plugins.predictors_lowrank",
    "harness_ext.plugins.weighting",
    "harness_ext.plugins.manifest_writers",
    "harness_ext.adapters.lm_eval",
    "harness_ext.adapters.every_eval_ever",
    "harness_ext.adapters.csv_table",
    "harness_ext.adapters.crosspred",
    "harness_ext.adapters.tsml",
    "harness_ext.adapters.helm",
    "harness_ext.adapters.bigbench",
    "harness_ext.adapters.open_llm_leaderboard",
    "harness_ext.adapters.inspect_ai",
)

BUILTIN_SOURCE = "built-in"


@dataclass(frozen=True)
class PluginInfo:
    name: str
    source: str
    module: str


def _allowed_plugins() -> Optional[set]:
    """Names allowed by ``HARNESS_EXT_LOAD_PLUGINS``; None means "all installed"."""
    raw = os.environ.get(LOAD_PLUGINS_ENV)
    if raw is None:
        return None
    return {p.strip() for p in raw.split(",") if p.strip()}


def get_plugin_manager(load_entry_points: bool = True) -> pluggy.PluginManager:
    """Create a plugin manager with built-ins and installed plugins registered.

    Parameters
    ----------
    load_entry_points : bool
        Load third-party plugins from the ``harness_ext`` entry-point group.
        ``HARNESS_EXT_LOAD_PLUGINS`` narrows this to a comma-separated allow-list
        of entry-point or distribution names; set it to the empty string to load
        none (the test suite does this).

    Returns
    -------
    pluggy.PluginManager
        With the attribute ``harness_ext_sources`` mapping each registered plugin
        name to where it came from.
    """
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(HarnessExtSpecs)
    sources: dict = {}
    for modname in BUILTIN_MODULES:
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            # A built-in module whose optional dependency is missing is skipped, not fatal.
            if exc.name == modname:
                continue
            raise
        pm.register(module, name=modname)
        sources[modname] = PluginInfo(modname, BUILTIN_SOURCE, modname)
    if load_entry_points:
        allowed = _allowed_plugins()
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else ep.name
            if allowed is not None and ep.name not in allowed and dist_name not in allowed:
                continue
            if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken plugin must never break the tool
                warnings.warn(
                    f"harness-ext plugin {ep.name!r} from {dist_name!r} failed to load and was skipped: "
                    f"{type(exc).__name__}: {exc}",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            pm.register(plugin, name=ep.name)
            sources[ep.name] = PluginInfo(ep.name, dist_name, getattr(plugin, "__name__", ep.value))
    pm.check_pending()
    pm.harness_ext_sources = sources
    return pm


_DEFAULT_PM: Optional[pluggy.PluginManager] = None


def default_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, created on first use."""
    global _DEFAULT_PM
    if _DEFAULT_PM is None:
        _DEFAULT_PM = get_plugin_manager()
    return _DEFAULT_PM


def reset_default_plugin_manager() -> None:
    """Forget the cached manager (tests that install fake plugins use this)."""
    global _DEFAULT_PM
    _DEFAULT_PM = None


def get_registrations(kind: str, pm: Optional[pluggy.PluginManager] = None) -> dict:
    """All registrations of one kind, by normalised name.

    Parameters
    ----------
    kind : str
        One of ``similarity_measures``, ``selectors``, ``predictors``,
        ``weighting_schemes``, ``adapters``, ``manifest_writers``.

    Returns
    -------
    dict
        ``name -> registration``; each registration gets a ``source`` attribute
        naming the plugin (and distribution) that provided it.

    Raises
    ------
    PluginError
        If two plugins register the same name, naming both sources, or a hook
        yields something that is not the right registration type.
    """
    if kind not in REGISTRATION_TYPES:
        raise PluginError(f"unknown plugin kind {kind!r}; expected one of {sorted(REGISTRATION_TYPES)}")
    pm = pm or default_plugin_manager()
    expected = REGISTRATION_TYPES[kind]
    hook = getattr(pm.hook, f"harness_ext_{kind}")
    sources = getattr(pm, "harness_ext_sources", {})
    found: dict = {}
    for impl in hook.get_hookimpls():
        plugin_name = impl.plugin_name
        info = sources.get(plugin_name)
        where = f"{plugin_name} ({info.source})" if info else plugin_name
        result = impl.function()
        for reg in result or ():
            if not isinstance(reg, expected):
                raise PluginError(f"plugin {where} yielded {type(reg).__name__} from harness_ext_{kind}; expected {expected.__name__}")
            if reg.name in found:
                raise PluginError(
                    f"duplicate {expected.__name__} name {reg.name!r}: registered by {found[reg.name].source} and by {where}"
                )
            reg.source = where
            found[reg.name] = reg
    return dict(sorted(found.items()))


def get_registration(kind: str, name: str, pm: Optional[pluggy.PluginManager] = None):
    """Look one registration up by (un-normalised) name, with a helpful error."""
    regs = get_registrations(kind, pm)
    key = normalise_name(name)
    if key not in regs:
        label = REGISTRATION_TYPES[kind].__name__
        raise PluginError(f"unknown {label} {name!r}; available: {', '.join(regs) or 'none'}")
    return regs[key]


# -- CLI: harness-ext plugins ---------------------------------------------------------------
def run(args) -> int:
    from .report import format_table

    rows = []
    for kind in [args.kind] if args.kind else REGISTRATION_TYPES:
        for name, reg in get_registrations(kind).items():
            rows.append({"kind": kind, "name": name, "source": reg.source, "description": reg.description})
    print(format_table(rows, index=False))
    args.json_payload = {"plugins": [{k: (v if isinstance(v, (str, int, float, bool, type(None))) else str(v))
                                      for k, v in r.items()} for r in rows]}
    return 0
