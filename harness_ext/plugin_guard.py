"""Containing what a third-party plugin raises beyond ``Exception``.

A plugin's code may call ``sys.exit`` or raise ``KeyboardInterrupt`` itself (a library that exits on a
bad input, a copied command-line snippet). Neither is an ``Exception``, so the handlers that keep one
faulty plugin to its own file or command would not see them, and the whole command would end, with
the plugin's exit code and no word. :func:`get_plugin_manager` therefore wraps every callable of a
third-party registration (an adapter's ``can_handle`` and ``read``, a similarity's ``func``, the
methods of a selector's, predictor's or weighting scheme's class) with :class:`Guard`: a
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
from collections.abc import Iterator

from .errors import PluginError

#: The estimators whose ``fit`` is running, per thread (only the outermost call's result is checked).
_FITTING = threading.local()


def _order_problem(est, shape) -> str:
    """Why a selector's ``order_`` is not dataset indices (``""``: it is)."""
    import numpy as np  # here: the plugin manager imports this module, and --help imports no numerics

    if getattr(est, "order_", None) is None:
        return "did not set order_"
    order = est.order_
    try:
        arr = np.asarray(order)
        ok = arr.ndim == 1 and arr.size > 0 and (np.issubdtype(arr.dtype, np.integer) or (
            np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        return f"set order_ to {_short(order)}; expected a 1-D array of dataset indices (integers)"
    d = shape[1] if shape is not None and len(shape) == 2 else None
    if d is not None and (arr.min() < 0 or arr.max() >= d):
        return f"set order_ with indices outside 0..{d - 1} ({_short(order)})"
    if len(set(arr.tolist())) != arr.size:
        return f"set an order_ that repeats indices ({_short(order)}); each dataset may appear once"
    return ""


def _matrix_problem(est, shape) -> str:
    """Why a predictor's ``mean_``/``std_`` are not matrices of the input's shape (``""``: they are)."""
    import numpy as np

    for attr, optional in (("mean_", False), ("std_", True)):
        value = getattr(est, attr, None)
        if value is None and optional:
            continue
        if not isinstance(value, np.ndarray):
            want = f" of shape {tuple(shape)}" if shape else ""
            return f"set {attr} to {_short(value)}; expected a numpy array{want}" + (" or None" if optional else "")
        if shape is not None and value.shape != tuple(shape):
            return f"set {attr} of shape {value.shape}; expected the input's shape {tuple(shape)}"
    return ""


def _weights_problem(est, shape) -> str:
    """Why a weighting's ``weights_`` is not one number per column (``""``: it is)."""
    import numpy as np

    value = getattr(est, "weights_", None)
    try:
        w = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        w = None
    d = shape[1] if shape is not None and len(shape) == 2 else None
    if w is None or w.ndim != 1 or (d is not None and w.size != d):
        return f"set weights_ to {_short(value)}; expected one number per column" + (f" ({d})" if d else "")
    return ""


def _short(value) -> str:
    """``value`` for a message: its type and a short repr."""
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


#: What a third-party ``fit`` must leave, per kind: a function ``(estimator, input shape) -> problem or ""``.
_FITTED = {"selectors": _order_problem, "predictors": _matrix_problem, "weighting_schemes": _weights_problem}

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

    def failed(self, what: str, exc: BaseException) -> PluginError:
        """Record and warn about a contained ``exc`` raised in ``what``; the PluginError to raise."""
        reason = f"{what} raised {type(exc).__name__}: {exc}"
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
        checks_fit = what.endswith(".fit") and self.kind in _FITTED

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            if not (checks_fit and args):
                result = guard.call(what, fn, *args, **kwargs)
                # A generator (an adapter's read written with yield) runs its code while iterated: guard that too.
                return guard._iterate(result, what) if isinstance(result, Iterator) else result
            # fit: checked once the outermost one returns (a subclass's fit may call its parent's first).
            active = _FITTING.__dict__.setdefault("ids", set())
            outer = id(args[0]) not in active
            active.add(id(args[0]))
            try:
                result = guard.call(what, fn, *args, **kwargs)
            finally:
                if outer:
                    active.discard(id(args[0]))
            if outer:
                guard.check_fitted(what, args[0], args[1] if len(args) > 1 else kwargs.get("X"))
            return result

        guarded.__harness_ext_guarded__ = True
        return guarded

    def check_fitted(self, what: str, est, X) -> None:
        """Raise a PluginError naming the plugin when ``what`` left ``est`` without the attributes harness-ext
        reads, or with ones of the wrong type or shape (they would fail later, far from the plugin)."""
        import numpy as np

        why = _FITTED[self.kind](est, np.shape(X) if X is not None else None)
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
                klass.__harness_ext_guarded__ = True
            except TypeError:  # an extension type: left as it is
                pass
        return cls
