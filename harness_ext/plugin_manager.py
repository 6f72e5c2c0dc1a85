"""Building the plugin manager and looking plugins up by kind and name.

Nothing is registered at import time: :func:`get_plugin_manager` registers the
built-in plugin modules, then the ``harness_ext`` entry-point group (filtered by
``HARNESS_EXT_LOAD_PLUGINS``), then checks that every hook implementation
matches a spec.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import warnings
from dataclasses import dataclass
from typing import Optional

import pluggy

from . import plugin_guard
from .errors import PluginError
from .hookspecs import PROJECT_NAME, HarnessExtSpecs
from .registrations import REGISTRATION_TYPES, Lazy, normalise_name, refusal, refused_later

ENTRY_POINT_GROUP = "harness_ext"
LOAD_PLUGINS_ENV = "HARNESS_EXT_LOAD_PLUGINS"

#: Built-in plugin modules, registered exactly as a third-party plugin would be. The methods' registrations
#: name their implementations by reference (harness_ext.plugins.registry), so registering imports no numerics.
BUILTIN_MODULES = (
    "harness_ext.plugins.registry",
    "harness_ext.plugins.items_crosstask",
    "harness_ext.plugins.items_designs",
    "harness_ext.adapters.lm_eval",
    "harness_ext.adapters.lm_eval_table",
    "harness_ext.adapters.every_eval_ever",
    "harness_ext.adapters.csv_table",
    "harness_ext.adapters.mteb",
    "harness_ext.adapters.crosspred",
    "harness_ext.adapters.tsml",
    "harness_ext.adapters.helm",
    "harness_ext.adapters.bigbench",
    "harness_ext.adapters.open_llm_leaderboard",
    "harness_ext.adapters.lighteval",
    "harness_ext.adapters.inspect_ai",
    "harness_ext.adapters.model_card",
)

BUILTIN_SOURCE = "built-in"


@dataclass(frozen=True)
class PluginInfo:
    name: str
    source: str
    module: str
    #: Distribution version ("" when unknown); built-ins carry harness-ext's.
    version: str = ""


@dataclass
class BrokenPlugin:
    """A plugin that was skipped, or one registration of it refused, and why (listed by ``harness-ext plugins``)."""

    name: str
    source: str
    reason: str
    kind: str = ""  # the hook that failed or refused a registration; "" when the whole plugin was skipped

    def __post_init__(self):
        # One line: pluggy's validation message spans three, which broke the row of ``harness-ext plugins``.
        self.reason = " ".join(str(self.reason).split())


DISABLE_PLUGINS_ENV = "HARNESS_EXT_DISABLE_PLUGINS"
#: Names disabled from the command line (``--disable-plugin NAME``), on top of the environment's.
_DISABLED: set = set()


def _allowed_plugins() -> Optional[set]:
    """Names allowed by ``HARNESS_EXT_LOAD_PLUGINS``; None means "all installed"."""
    raw = os.environ.get(LOAD_PLUGINS_ENV)
    if raw is None:
        return None
    return {p.strip() for p in raw.split(",") if p.strip()}


def disabled_plugins() -> set:
    """Names switched off by ``HARNESS_EXT_DISABLE_PLUGINS`` (comma-separated) and ``--disable-plugin``."""
    raw = os.environ.get(DISABLE_PLUGINS_ENV, "")
    return {p.strip() for p in raw.split(",") if p.strip()} | _DISABLED


def disable_plugins(names) -> None:
    """Switch plugins off for this process (entry-point, distribution or module names, or a built-in's
    module's last part such as ``tsml``); the next plugin manager leaves them out."""
    _DISABLED.update(n.strip() for n in names if n and n.strip())
    reset_default_plugin_manager()


def is_disabled(disabled: set, *names) -> bool:
    """Whether any of ``names`` (a module, entry-point or distribution name) is in ``disabled``, in full
    or by its last dotted part (``tsml`` switches off ``harness_ext.plugins.tsml``)."""
    return any(n in disabled or (n and n.rsplit(".", 1)[-1] in disabled) for n in names if n)


def _dist_version(dist) -> str:
    try:
        return str(dist.version or "") if dist is not None else ""
    except Exception:  # noqa: BLE001 - broken metadata: no version
        return ""


_SECTION_RE = re.compile(rb"^[ \t]*\[[ \t]*" + re.escape(ENTRY_POINT_GROUP.encode()) + rb"[ \t]*\]", re.M)


def _may_have_entry_points() -> bool:
    """False only when no installed distribution declares the ``harness_ext`` entry-point group.

    ``importlib.metadata.entry_points()`` imports the email parser and reads the metadata of every
    installed distribution (0.1 s for 160 distributions here); this reads only the
    ``entry_points.txt`` files in the ``*.dist-info``/``*.egg-info`` folders of ``sys.path``. It says
    True, and the caller runs the full discovery, whenever it cannot be sure: a group is found, a
    ``sys.path`` entry is a zip file or an egg, or a meta-path finder other than the standard path
    finder can list distributions.
    """
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and callable(getattr(finder, "find_distributions", None)):
            return True
    for entry in sys.path:
        if not isinstance(entry, str) or entry.lower().endswith(".egg"):
            return True  # an egg keeps its metadata in EGG-INFO/ (and a path object is unusual): ask importlib.metadata
        try:
            it = os.scandir(entry or ".")
        except NotADirectoryError:
            return True  # a zip (or egg) on the path: let importlib.metadata look inside
        except OSError:
            continue  # an entry that does not exist (python311.zip usually)
        with it:
            for d in it:
                if not d.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(d.path, "entry_points.txt"), "rb") as fh:
                        text = fh.read()
                except OSError:
                    continue  # no entry points (or an egg-info file, not a folder)
                if _SECTION_RE.search(text):
                    return True
    return False


def _register_checked(pm: pluggy.PluginManager, plugin, name: str) -> Optional[str]:
    """Register ``plugin``; None on success, else why it was refused (it is then not registered).

    pluggy's own validation runs here: a hook implementation whose signature does not match its
    spec, or an implementation of a hook that does not exist (a misspelt name).
    """
    try:
        pm.register(plugin, name=name)
    except Exception as exc:  # noqa: BLE001 - pluggy.PluginValidationError, ValueError (already registered)
        return f"{type(exc).__name__}: {exc}"
    unknown = [hc.name for hc in (pm.get_hookcallers(plugin) or []) if not hc.has_spec()]
    if unknown:
        pm.unregister(plugin)
        known = ", ".join(sorted(n for n in dir(HarnessExtSpecs) if n.startswith("harness_ext_")))
        return f"implements unknown hook {', '.join(sorted(unknown))} (hooks are: {known})"
    return None


def _warn(msg: str) -> None:
    warnings.warn(msg, RuntimeWarning, stacklevel=3)


def get_plugin_manager(load_entry_points: bool = True) -> pluggy.PluginManager:
    """Create a plugin manager with built-ins and installed plugins registered.

    A third-party plugin that fails to import (any exception, ``sys.exit`` included), fails
    pluggy's validation (a wrong hook signature, a misspelt hook name) is skipped with a
    warning naming its distribution, and listed as broken by ``harness-ext plugins``; it
    never stops the tool.

    Parameters
    ----------
    load_entry_points : bool
        Load third-party plugins from the ``harness_ext`` entry-point group.
        ``HARNESS_EXT_LOAD_PLUGINS`` narrows this to a comma-separated allow-list
        of entry-point or distribution names; set it to the empty string to load
        none (the test suite does this). ``HARNESS_EXT_DISABLE_PLUGINS`` (or
        ``--disable-plugin NAME``) switches single plugins off, built-ins included.

    Returns
    -------
    pluggy.PluginManager
        With the attributes ``harness_ext_sources`` (plugin name -> PluginInfo)
        and ``harness_ext_broken`` (list of BrokenPlugin).
    """
    from . import __version__

    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(HarnessExtSpecs)
    sources: dict = {}
    broken: list = []
    disabled = disabled_plugins()
    for modname in BUILTIN_MODULES:
        if is_disabled(disabled, modname):
            continue
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            # A built-in module whose optional dependency is missing is skipped, not fatal.
            if exc.name == modname:
                continue
            raise
        pm.register(module, name=modname)
        sources[modname] = PluginInfo(modname, BUILTIN_SOURCE, modname, __version__)
    pm.check_pending()  # the built-ins must be right; third-party plugins are checked one by one below
    allowed = _allowed_plugins()
    if load_entry_points and allowed != set() and _may_have_entry_points():
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            try:
                dist_name = dist.metadata["Name"] if dist is not None else ep.name
            except Exception:  # noqa: BLE001 - unreadable metadata
                dist_name = ep.name
            if allowed is not None and ep.name not in allowed and dist_name not in allowed:
                continue
            if is_disabled(disabled, ep.name, dist_name, ep.value.split(":")[0]):
                continue
            if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
                continue
            watched, seen = plugin_guard.start()
            try:
                plugin = ep.load()
            except BaseException as exc:  # noqa: BLE001 - a broken plugin must never break the tool (sys.exit included)
                if plugin_guard.user_interrupt(exc, watched, seen):
                    raise
                reason = f"failed to load: {type(exc).__name__}: {exc}"
                broken.append(BrokenPlugin(ep.name, dist_name, reason))
                _warn(f"harness-ext plugin {ep.name!r} from {dist_name!r} {reason}; skipped")
                continue
            why = _register_checked(pm, plugin, ep.name)
            if why is not None:
                broken.append(BrokenPlugin(ep.name, dist_name, why))
                _warn(f"harness-ext plugin {ep.name!r} from {dist_name!r} was skipped: {why}")
                continue
            sources[ep.name] = PluginInfo(ep.name, dist_name, getattr(plugin, "__name__", ep.value), _dist_version(dist))
    pm.harness_ext_sources = sources
    pm.harness_ext_broken = broken
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


#: Kinds whose third-party registrations are called through a :class:`~harness_ext.plugin_guard.Guard`
#: (manifest writers are guarded where ``reduce`` runs them).
GUARDED_KINDS = ("similarity_measures", "selectors", "predictors", "weighting_schemes", "adapters", "item_estimators")


def _collect(kind: str, pm: pluggy.PluginManager) -> tuple:
    """``(found, clashes)`` for one kind; a hook that raises is recorded in ``pm.harness_ext_broken`` and its
    registrations of this kind are left out; a registration refused (of the wrong type, a field missing or unusable)
    is recorded there and left out alone, the hook's other registrations kept.

    ``clashes``: ``(name, kept source or None, left-out source)`` per registration left out for its name: a
    third-party registration named like a built-in one is left out (the built-in is kept); of two
    third-party registrations of one name, both are (kept source None), since which was installed
    last says nothing about which one is meant.
    """
    expected = REGISTRATION_TYPES[kind]
    hook = getattr(pm.hook, f"harness_ext_{kind}")
    sources = getattr(pm, "harness_ext_sources", {})
    if not hasattr(pm, "harness_ext_broken"):
        pm.harness_ext_broken = []
    broken = pm.harness_ext_broken
    found: dict = {}
    clashes: list = []
    ambiguous: set = set()
    for impl in hook.get_hookimpls():
        plugin_name = impl.plugin_name
        info = sources.get(plugin_name)
        where = f"{plugin_name} ({info.source})" if info else plugin_name
        builtin = info is None or info.source == BUILTIN_SOURCE
        watched, seen = plugin_guard.start()
        try:
            with refused_later():
                regs = list(impl.function() or ())
        except BaseException as exc:  # noqa: BLE001 - one faulty plugin must not break the others (sys.exit included)
            if plugin_guard.user_interrupt(exc, watched, seen):
                raise
            if builtin:
                raise PluginError(f"plugin {where}: {exc}") from exc
            reason = str(exc) if isinstance(exc, PluginError) else f"harness_ext_{kind} raised {type(exc).__name__}: {exc}"
            if not any(b.name == plugin_name and b.kind == kind for b in broken):
                broken.append(BrokenPlugin(plugin_name, info.source, reason, kind))
                _warn(f"harness-ext plugin {plugin_name!r} from {info.source!r}: {reason}; its {kind} are skipped")
            continue
        regs = _refuse_bad(regs, kind, plugin_name, info, where, builtin, broken)
        for reg in regs:
            reg.source = where
            reg.distribution = info.source if not builtin else "harness-ext"
            reg.version = info.version if info else ""
            if not builtin and kind in GUARDED_KINDS:
                _guard(reg, plugin_guard.Guard(pm, plugin_name, info.source, kind, BrokenPlugin))
            reg._builtin = builtin
            prev = found.get(reg.name)
            if reg.name in ambiguous and not builtin:
                clashes.append((reg.name, None, where))
            elif prev is None:
                found[reg.name] = reg
            elif prev._builtin and not builtin:
                clashes.append((reg.name, prev.source, where))
            elif builtin and not prev._builtin:
                clashes.append((reg.name, where, prev.source))
                found[reg.name] = reg
            elif builtin:  # two built-ins of one name: a bug of harness-ext itself
                raise PluginError(f"duplicate built-in {expected.__name__} name {reg.name!r}: {prev.source} and {where}")
            else:
                ambiguous.add(reg.name)
                clashes += [(reg.name, None, prev.source), (reg.name, None, where)]
                del found[reg.name]
    return dict(sorted(found.items())), clashes


def _refuse_bad(regs: list, kind: str, plugin_name: str, info, where: str, builtin: bool, broken: list) -> list:
    """The registrations of one hook call that are usable; each refused one (of another type, or made with a missing
    or unusable field: :func:`~harness_ext.registrations.refusal`) is recorded in ``broken`` and warned about once,
    named with its reason and plugin, and the hook's other registrations are kept (a built-in's is a PluginError)."""
    expected = REGISTRATION_TYPES[kind]
    kept = []
    for reg in regs:
        if not isinstance(reg, expected):
            reason = f"yielded {type(reg).__name__} from harness_ext_{kind}; expected {expected.__name__}"
        else:
            reason = " ".join(refusal(reg).split())
        if not reason:
            kept.append(reg)
        elif builtin:
            raise PluginError(f"plugin {where}: {reason}")
        elif not any(b.name == plugin_name and b.kind == kind and b.reason == reason for b in broken):
            broken.append(BrokenPlugin(plugin_name, info.source, reason, kind))
            _warn(f"harness-ext plugin {plugin_name!r} from {info.source!r}: {reason}; that registration is refused "
                  f"(its other {kind}, if any, are kept)")
    return kept


def _guard(reg, guard) -> None:
    """Wrap a third-party registration's callables (given directly, or on import for references)."""
    reg.__dict__["_guard"] = guard
    for cls in type(reg).__mro__:
        for key, attr in vars(cls).items():
            if isinstance(attr, Lazy) and key in reg.__dict__:
                reg.__dict__[key] = guard.wrap(key, reg.__dict__[key])


def plugin_in_traceback(exc: BaseException, pm: Optional[pluggy.PluginManager] = None) -> Optional[PluginInfo]:
    """The third-party plugin whose code raised ``exc``, or None: the innermost frame of its traceback (or of
    its causes') in a registered non-built-in plugin's package (the top-level package of the module that
    registered it, so a class referenced in another module of that package counts), or the plugin a joblib
    worker marked it with (:func:`~harness_ext.plugin_guard.for_workers`)."""
    pm = pm or _DEFAULT_PM
    sources = getattr(pm, "harness_ext_sources", {})
    for link in plugin_guard.exception_chain(exc):
        marked = sources.get(getattr(link, "harness_ext_plugin", None))
        if marked is not None and marked.source != BUILTIN_SOURCE:
            return marked
    infos = [i for i in sources.values() if i.source != BUILTIN_SOURCE]
    tops = {i.module.split(".")[0]: i for i in infos if i.module and i.module.split(".")[0] != "harness_ext"}
    return plugin_guard.in_traceback(exc, tops) if tops else None


def _report_clashes(kind: str, clashes: list, pm) -> None:
    """Warn once per process manager about each registration left out for its name."""
    told = pm.__dict__.setdefault("harness_ext_clashes_told", set())
    label = REGISTRATION_TYPES[kind].__name__
    for name, kept, left in clashes:
        if (kind, name, left) in told:
            continue
        told.add((kind, name, left))
        why = (f"has the same name as a built-in one ({kept}) and is disabled; the built-in is used" if kept else
               "has the same name as another plugin's; both are disabled")
        _warn(f"harness-ext plugin {left}: its {label} {name!r} {why} (--disable-plugin NAME or "
              f"${DISABLE_PLUGINS_ENV} switches a plugin off)")


def get_registrations(kind: str, pm: Optional[pluggy.PluginManager] = None) -> dict:
    """All registrations of one kind, by normalised name.

    Parameters
    ----------
    kind : str
        One of ``similarity_measures``, ``selectors``, ``predictors``,
        ``weighting_schemes``, ``adapters``, ``manifest_writers``, ``item_estimators``.

    Returns
    -------
    dict
        ``name -> registration``; each registration gets ``source`` (the plugin and
        its distribution), ``distribution`` and ``version`` attributes. A third-party
        hook that raises is skipped with a warning; a registration it makes that is refused (wrong type, a
        field missing or unusable) is left out alone, with a warning naming it and its plugin. A name clash
        disables only the clashing registration, with a warning (``harness-ext plugins``
        lists it as ``clash``): a third-party one named like a built-in is left out and
        the built-in used; two third-party ones of one name are both left out.
        Third-party callables are guarded (:mod:`harness_ext.plugin_guard`).
    """
    if kind not in REGISTRATION_TYPES:
        raise PluginError(f"unknown plugin kind {kind!r}; expected one of {sorted(REGISTRATION_TYPES)}")
    pm = pm or default_plugin_manager()
    found, clashes = _collect(kind, pm)
    if clashes:
        _report_clashes(kind, clashes, pm)
    return found


def get_registration(kind: str, name: str, pm: Optional[pluggy.PluginManager] = None):
    """Look one registration up by (un-normalised) name, with a helpful error.

    Parameters
    ----------
    kind : str
        The plugin kind, as for :func:`get_registrations` (``"selectors"``, ``"predictors"``, ...).
    name : str
        The registration's name; lower-cased, with ``-``, spaces and ``.`` read as ``_``, as registration names are.
    pm : pluggy.PluginManager, optional
        The plugin manager to look in; by default the process-wide one.

    Returns
    -------
    Registration
        The registration dataclass (:mod:`harness_ext.types`) of that name.

    Raises
    ------
    PluginError
        The name is unknown (the message lists the available ones), or two third-party plugins
        register it, so neither is used (the message names both).
    """
    pm = pm or default_plugin_manager()
    regs = get_registrations(kind, pm)
    key = normalise_name(name)
    if key not in regs:
        label = REGISTRATION_TYPES[kind].__name__
        both = [left for n, kept, left in _collect(kind, pm)[1] if n == key and kept is None]
        if both:
            raise PluginError(f"duplicate {label} name {key!r}: registered by {' and by '.join(both)}; neither is "
                              f"used: uninstall one, or switch one off with --disable-plugin NAME or ${DISABLE_PLUGINS_ENV}")
        raise PluginError(f"unknown {label} {name!r}; available: {', '.join(regs) or 'none'}{_skipped_hint(kind, pm)}")
    return regs[key]


def _skipped_hint(kind: str, pm) -> str:
    """What an unknown name's error adds when plugins that might have registered it were skipped as broken."""
    broken = getattr(pm, "harness_ext_broken", [])
    # Those whose hook of this kind failed first (a registration refused), then those skipped whole.
    skipped = [b for b in broken if b.kind == kind] + [b for b in broken if not b.kind]
    if not skipped:
        return ""
    listed = "; ".join(f"{b.name} ({b.source}): {b.reason if len(b.reason) <= 200 else b.reason[:197] + '...'}"
                       for b in skipped[:3])
    more = f"; and {len(skipped) - 3} more" if len(skipped) > 3 else ""
    return (f" (skipped as broken, so not among them: {listed}{more}; `harness-ext plugins` lists every skipped "
            "plugin and why)")


def plugin_rows(kind: Optional[str] = None, pm: Optional[pluggy.PluginManager] = None) -> list:
    """Every registration, clash and broken plugin as rows (what ``harness-ext plugins`` lists).

    A registration left out for its name (:func:`get_registrations`) is listed with status ``clash``
    and what it clashed with; the registration kept is listed ``ok``.

    Parameters
    ----------
    kind : str, optional
        Only this kind (default: every kind).

    Returns
    -------
    list of dict
        ``kind``, ``name``, ``status`` (``ok``, ``clash`` or ``broken``), ``source`` and ``description``
        (strings), registrations sorted by kind and name, then the broken plugins.
    """
    if kind is not None and kind not in REGISTRATION_TYPES:
        raise PluginError(f"unknown plugin kind {kind!r}; expected one of {sorted(REGISTRATION_TYPES)}")
    pm = pm or default_plugin_manager()
    rows = []
    for k in [kind] if kind else REGISTRATION_TYPES:
        found, clashes = _collect(k, pm)
        if clashes:
            _report_clashes(k, clashes, pm)
        for name, reg in found.items():
            rows.append({"kind": k, "name": name, "status": "ok", "source": str(reg.source),
                         "description": str(reg.description)})
        for name, kept, left in clashes:
            why = (f"same name as the built-in of {kept}, which is used" if kept else
                   "same name as another plugin's; neither is used")
            rows.append({"kind": k, "name": name, "status": "clash", "source": str(left),
                         "description": f"disabled: {why} (--disable-plugin NAME switches one off)"})
    for b in getattr(pm, "harness_ext_broken", []):
        if kind and b.kind and b.kind != kind:
            continue
        rows.append({"kind": b.kind or "-", "name": b.name, "status": "broken", "source": b.source,
                     "description": b.reason})
    return rows
