"""Containing what a third-party plugin raises beyond ``Exception``.

A plugin's code may call ``sys.exit`` or raise ``KeyboardInterrupt`` itself (a library that exits on a
bad input, a copied command-line snippet). Neither is an ``Exception``, so the handlers that keep one
faulty plugin to its own file or command would not see them, and the whole command would end, with
the plugin's exit code and no word. :func:`get_plugin_manager` therefore wraps every callable of a
third-party registration (an adapter's ``can_handle`` and ``read``, a similarity's ``func``, the
methods of a selector's, predictor's, weighting scheme's or item estimator's class) with :class:`Guard`: a
``BaseException`` other than ``Exception`` raised inside the call becomes a
:class:`~harness_ext.errors.PluginError` naming the plugin, which the caller handles as any other
plugin failure (the file is skipped, the command fails with one line), and is reported once as a
warning and as ``broken`` by ``harness-ext plugins``.

A real Ctrl-C must still stop the program. Python turns SIGINT into ``KeyboardInterrupt`` in its
handler, raised wherever the main thread happens to be, plugin code included; the exception itself
does not say where it came from. So the guard counts the SIGINTs delivered: while a guard is in use it
installs a handler that counts each signal and then does exactly what Python's default handler does
(raise ``KeyboardInterrupt``). A ``KeyboardInterrupt`` that escapes a plugin call during which the
count did not move was raised by the plugin's own code and is contained; one during which a SIGINT
arrived is the user's and propagates. When the handler cannot be installed (outside the main thread,
or another handler than Python's default is in place, as in some notebooks), every
``KeyboardInterrupt`` propagates: a plugin's own one then ends the command, as before, but a user's
Ctrl-C is never swallowed. ``GeneratorExit`` always propagates (it is how a generator is closed).

The guard also checks what harness-ext reads back: the fitted attributes of a selector, predictor or
weighting scheme, and an item estimator's inputs (as harness-ext's own estimators check theirs) and outputs.
:func:`for_workers` puts the guard on again in joblib worker processes, which import a plugin's classes afresh.

Built-in registrations are not wrapped, and neither are manifest writers (their failures are handled
where the writers are run).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import signal
import threading
import warnings
import weakref
from collections.abc import Iterator

from .errors import PluginError

#: The estimators whose ``fit`` is running, per thread (only the outermost call's result is checked).
_FITTING = threading.local()


def _order_problem(est, shape) -> str:
    """Why a selector's ``order_`` is not dataset indices (``""``: it is)."""
    from .base import order_indices  # here: the plugin manager imports this module, and --help imports no numerics

    if getattr(est, "order_", None) is None:
        return "did not set order_"
    d = shape[1] if shape is not None and len(shape) == 2 else None
    why = order_indices(est.order_, d)[1]
    return f"set order_ to {why}" if why else ""


def _matrix_problem(est, shape) -> str:
    """Why a predictor's ``mean_``/``std_`` are not matrices of the input's shape (``""``: they are)."""
    import numpy as np

    from .base import short_repr

    for attr, optional in (("mean_", False), ("std_", True)):
        value = getattr(est, attr, None)
        if value is None and optional:
            continue
        if not isinstance(value, np.ndarray):
            want = f" of shape {tuple(shape)}" if shape else ""
            return f"set {attr} to {short_repr(value)}; expected a numpy array{want}" + (" or None" if optional else "")
        if shape is not None and value.shape != tuple(shape):
            return f"set {attr} of shape {value.shape}; expected the input's shape {tuple(shape)}"
    return ""


def _weights_problem(est, shape) -> str:
    """Why a weighting's ``weights_`` is not one number per column (``""``: it is)."""
    import numpy as np

    from .base import short_repr

    value = getattr(est, "weights_", None)
    try:
        w = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        w = None
    d = shape[1] if shape is not None and len(shape) == 2 else None
    if w is None or w.ndim != 1 or (d is not None and w.size != d):
        return f"set weights_ to {short_repr(value)}; expected one number per column" + (f" ({d})" if d else "")
    return ""


#: What a third-party ``fit`` must leave, per kind: a function ``(estimator, input shape) -> problem or ""``.
_FITTED = {"selectors": _order_problem, "predictors": _matrix_problem, "weighting_schemes": _weights_problem}

#: Items each third-party item estimator was fitted with, by ``id``: ``(weak reference, count)``, so its
#: ``predict`` can check the targets' answers (an estimator not derived from harness-ext's keeps no ``items_``).
_SAMPLED: dict = {}


def _arg(args, kwargs, position: int, name: str):
    return args[position] if len(args) > position else kwargs.get(name)


def _item_inputs(method: str, args, kwargs) -> None:
    """The input checks harness-ext's own item estimators make (a ValueError naming the estimator), for a
    third-party one: its ``level``, the sampled item indices, the targets' answers' width."""
    from .base import check_level, check_source_items, check_targets

    est = args[0]
    owner = type(est).__name__
    if getattr(est, "level", None) is not None:
        check_level(est.level, owner)
    if method == "fit":
        items = check_source_items(_arg(args, kwargs, 1, "source"), _arg(args, kwargs, 2, "items"), owner)[1]
        try:
            ref = weakref.ref(est, lambda _, key=id(est): _SAMPLED.pop(key, None))
        except TypeError:  # an object that takes no weak reference: its predict's input goes unchecked
            return
        _SAMPLED[id(est)] = (ref, len(items))
        return
    ref, n = _SAMPLED.get(id(est), (None, None))
    if ref is not None and ref() is est:
        check_targets(_arg(args, kwargs, 1, "Y"), n, owner)


def _item_result(method: str, args, kwargs, result) -> str:
    """Why an item estimator's ``fit`` or ``predict`` returned what harness-ext cannot use (``""``: it can)."""
    import numpy as np

    from .base import short_repr

    if method == "fit":
        return "" if result is args[0] else f"returned {short_repr(result)}; expected the estimator itself (return self)"
    Y = np.asarray(_arg(args, kwargs, 1, "Y"), dtype=float)
    n = 1 if Y.ndim == 1 else Y.shape[0]
    missing = [a for a in ("estimate", "lower", "upper", "level", "se") if not hasattr(result, a)]
    if missing:
        return (f"returned {short_repr(result)}, without {', '.join(missing)}; expected an ItemEstimate "
                "(harness_ext.ItemEstimate)")
    parts = {}
    for a in ("estimate", "lower", "upper"):
        try:
            parts[a] = np.asarray(getattr(result, a), dtype=float)
        except (TypeError, ValueError):
            return f"returned an ItemEstimate whose {a} is {short_repr(getattr(result, a))}; expected numbers"
        if parts[a].shape != (n,):
            return f"returned an ItemEstimate whose {a} has shape {parts[a].shape} for {n} target(s); expected ({n},)"
    lo, hi = parts["lower"], parts["upper"]
    inverted = np.flatnonzero(np.isfinite(lo) & np.isfinite(hi) & (lo > hi))
    if inverted.size:
        i = inverted[0]
        return (f"returned a lower bound above its upper bound for {inverted.size} of {n} target(s) "
                f"(target {i}: {lo[i]:g} > {hi[i]:g})")
    return ""


#: SIGINTs delivered since the counting handler was installed.
_SIGINTS = 0


def _count_sigint(signum, frame):
    """SIGINT handler: count the signal, then do what Python's default handler does."""
    global _SIGINTS
    _SIGINTS += 1
    signal.default_int_handler(signum, frame)


def _watching() -> bool:
    """Whether SIGINTs are being counted; installs the counting handler over Python's default one."""
    current = signal.getsignal(signal.SIGINT)
    if current is _count_sigint:
        return True
    if current is not signal.default_int_handler or threading.current_thread() is not threading.main_thread():
        return False
    try:
        signal.signal(signal.SIGINT, _count_sigint)
    except (ValueError, OSError):  # not the main interpreter's main thread
        return False
    return True


def user_interrupt(exc: BaseException, watched: bool, seen: int) -> bool:
    """Whether ``exc`` must propagate: not a plugin's own exit or interrupt (see the module docstring).

    ``watched`` and ``seen`` are :func:`_watching` and the SIGINT count taken before the call.
    """
    if isinstance(exc, GeneratorExit):
        return True
    if isinstance(exc, KeyboardInterrupt):
        return not watched or _SIGINTS != seen
    return False


def start() -> tuple:
    """``(watched, seen)`` to take before a plugin call, for :func:`user_interrupt`."""
    return _watching(), _SIGINTS


class Guard:
    """Wraps one third-party registration's callables; reports what it contains once.

    Parameters
    ----------
    pm : pluggy.PluginManager
        Its ``harness_ext_broken`` list gets a :class:`~harness_ext.plugin_manager.BrokenPlugin` per
        contained failure (one per plugin, kind and call).
    plugin, source, kind : str
        The plugin's name, its distribution and the registration kind, for messages.
    broken_type : type
        :class:`~harness_ext.plugin_manager.BrokenPlugin` (passed in: it lives in the module that builds guards).
    """

    def __init__(self, pm, plugin: str, source: str, kind: str, broken_type):
        self.pm, self.plugin, self.source, self.kind, self.broken_type = pm, plugin, source, kind, broken_type

    def __reduce__(self):
        # A worker process (joblib) gets the plugin's name, distribution and kind, to guard the classes it
        # imports afresh (see for_workers); the plugin manager stays in the parent, which reports the error.
        return (Guard, (None, self.plugin, self.source, self.kind, None))

    def failed(self, what: str, exc: BaseException) -> PluginError:
        """Record and warn about a contained ``exc`` raised in ``what``; the PluginError to raise."""
        reason = f"{what} raised {type(exc).__name__}: {exc}"
        if self.pm is None:  # in a worker: the error, raised in the parent, says it all
            return PluginError(f"plugin {self.plugin} ({self.source}): {reason}")
        broken = self.pm.__dict__.setdefault("harness_ext_broken", [])
        if not any(b.name == self.plugin and b.kind == self.kind and b.reason == reason for b in broken):
            broken.append(self.broken_type(self.plugin, self.source, reason, self.kind))
            warnings.warn(f"harness-ext plugin {self.plugin!r} from {self.source!r}: {reason}; contained "
                          "(the call failed as if it had raised an error)", RuntimeWarning, stacklevel=3)
        return PluginError(f"plugin {self.plugin} ({self.source}): {reason}")

    @contextlib.contextmanager
    def containing(self, what: str):
        """Inside, a plugin's exit or own interrupt is raised as a PluginError (:func:`user_interrupt` decides)."""
        watched, seen = start()
        try:
            yield
        except Exception:
            raise
        except BaseException as exc:
            if user_interrupt(exc, watched, seen):
                raise
            raise self.failed(what, exc) from exc

    def call(self, what: str, fn, *args, **kwargs):
        """``fn(*args, **kwargs)``, a plugin's exit or own interrupt raised as a PluginError."""
        with self.containing(what):
            return fn(*args, **kwargs)

    def wrap(self, field: str, value):
        """``value`` (a registration field: a function or a class) with its calls guarded."""
        if inspect.isclass(value):
            return self._wrap_class(value)
        if callable(value):
            return self._wrap_function(value, field)
        return value

    def _wrap_function(self, fn, what: str):
        if getattr(fn, "__harness_ext_guarded__", False):
            return fn
        guard = self
        method = what.rsplit(".", 1)[-1]
        checked = (method == "fit" and self.kind in _FITTED) or (
            self.kind == "item_estimators" and method in ("fit", "predict"))

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            if not (checked and args):
                result = guard.call(what, fn, *args, **kwargs)
                # A generator (an adapter's read written with yield) runs its code while iterated: guard that too.
                return guard._iterate(result, what) if isinstance(result, Iterator) else result
            # Checked around the outermost call only (a subclass's fit may call its parent's first).
            active = _FITTING.__dict__.setdefault("ids", set())
            key = (id(args[0]), method)
            outer = key not in active
            if outer and self.kind == "item_estimators":
                _item_inputs(method, args, kwargs)
            active.add(key)
            try:
                result = guard.call(what, fn, *args, **kwargs)
            finally:
                if outer:
                    active.discard(key)
            if outer:
                guard.check_result(what, method, args, kwargs, result)
            return result

        guarded.__harness_ext_guarded__ = True
        return guarded

    def check_result(self, what: str, method: str, args, kwargs, result) -> None:
        """Raise a PluginError naming the plugin when ``what`` left the estimator ``args[0]`` without the attributes
        harness-ext reads, or returned what harness-ext cannot use (they would fail later, far from the plugin)."""
        import numpy as np

        if self.kind == "item_estimators":
            why = _item_result(method, args, kwargs, result)
        else:
            X = args[1] if len(args) > 1 else kwargs.get("X")
            why = _FITTED[self.kind](args[0], np.shape(X) if X is not None else None)
        if why:
            raise PluginError(f"plugin {self.plugin} ({self.source}): {what} {why}")

    def _iterate(self, it, what: str):
        with self.containing(what):
            yield from it

    def _wrap_class(self, cls):
        """Guard, in place, the methods the plugin's own classes define (``__init__`` included).

        In place rather than in a subclass: instances keep their class, so they pickle (joblib workers) and
        compare as before. Classes of harness-ext itself and of libraries it builds on are left as they are.
        """
        for klass in cls.__mro__:
            module = getattr(klass, "__module__", "") or ""
            if klass is object or module.split(".")[0] in ("harness_ext", "sklearn", "numpy", "builtins", "abc"):
                continue
            if klass.__dict__.get("__harness_ext_guarded__"):
                continue
            for name, attr in list(vars(klass).items()):
                if inspect.isfunction(attr) and (name == "__init__" or not name.startswith("__")):
                    setattr(klass, name, self._wrap_function(attr, f"{klass.__name__}.{name}"))
            try:
                klass.__harness_ext_guarded__ = self  # for_workers finds the guard here
            except TypeError:  # an extension type: left as it is
                pass
        return cls


def for_workers(fn, classes):
    """``fn`` as a task for joblib workers that run third-party ``classes`` (a selector's, say).

    A worker process unpickles a class by importing its module afresh, so there it is the plugin's class as
    written, without the guard :func:`get_plugin_manager` put on it: an exit in the plugin's code would end
    the command, and a wrong ``order_`` would pass. The task guards those classes again in the worker, and
    marks an error raised in a plugin's code with the plugin's name (``harness_ext_plugin``, kept when the
    exception is pickled back), since the traceback the parent sees is the worker's.
    """
    guards = []
    for cls in classes:
        guard = getattr(cls, "__dict__", {}).get("__harness_ext_guarded__")
        if isinstance(guard, Guard):
            guards.append((cls, guard))
    return functools.partial(_run_guarded, fn, guards) if guards else fn


def _run_guarded(fn, guards, *args, **kwargs):
    for cls, guard in guards:
        guard.wrap("cls", cls)  # nothing to do in the parent's process (a sequential or threading backend)
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        tops = {(cls.__module__ or "").split(".")[0]: guard.plugin for cls, guard in guards}
        plugin = in_traceback(exc, tops)
        if plugin is not None and not hasattr(exc, "harness_ext_plugin"):
            try:
                exc.harness_ext_plugin = plugin
            except AttributeError:  # an exception type that takes no attributes: reported unattributed
                pass
        raise


def exception_chain(exc: BaseException):
    """``exc``, then the exception it was raised from or while handling, and so on, each once."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def in_traceback(exc: BaseException, tops: dict):
    """``tops[package]`` for the innermost frame of ``exc``'s traceback (or of its causes') whose module is in
    one of the top-level packages ``tops`` names; None when no frame is."""
    for link in exception_chain(exc):
        tb, found = link.__traceback__, None
        while tb is not None:
            name = tb.tb_frame.f_globals.get("__name__") or ""
            found = tops.get(name.split(".")[0], found)
            tb = tb.tb_next
        if found is not None:
            return found
    return None
