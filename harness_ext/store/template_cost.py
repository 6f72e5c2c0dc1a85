"""How much a Jinja template can make lm-eval compute when it renders it, read from the template alone.

A template that only reads its document's data can still hang or fill the memory of the run that renders
it: ``{{ range(10**10)|list }}``, ``{{ 'a' * 10**10 }}``, a loop inside a loop over large ranges, a text doubled
by ``{% set a = a ~ a %}`` forty times, ``replace`` or ``join`` applied to their own results. lm-eval renders
with a plain ``jinja2.Environment``, which bounds none of these (and folds constant expressions such as
``2 ** 10000000000`` while compiling, before any document is read).

So the template's parse tree is walked (a loop's body twice) and every value gets an upper bound on its
size (characters or items) and, for numbers, on its magnitude, each a polynomial in the size ``D`` of the
largest document field: a document field is ``D`` (a number in it can be any size), a literal its own
length, ``a ~ b`` the sum, ``s * n`` the product, a loop its body times the size of what it runs over. The
work of a render is bounded by the sum of the sizes of every value it builds. A template is kept when that bound, ``c0 + c1 D + c2 D^2``, stays within
:data:`LIMITS`, which the task templates lm-eval ships keep with room to spare: a prompt may repeat a
document field (a choice list, a replaced placeholder), but it may not grow with ``D^3``, repeat a field
thousands of times or build millions of characters from its own text.

Refused whatever the bound: ``**`` (one power can take hours), ``%`` and the ``format`` filter on text (a
printf width fills the memory), lm-eval's ``regex_replace`` filter (a pattern can backtrack for hours) and
loops nested more than six deep. No lm-eval task template uses any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

#: Numbers saturate here: bounds past it are refused anyway and the arithmetic stays small.
_CAP = 10 ** 18
#: Largest ``c0``, ``c1``, ``c2`` kept in the work bound ``c0 + c1 D + c2 D^2`` (no ``D^3`` term is kept): a
#: million steps from the template's own text, a document field repeated at most a thousand times, and its
#: square at most a hundred times. lm-eval 0.4.13's own task templates reach 3,046, 356 and 24.
LIMITS = (10 ** 6, 10 ** 3, 10 ** 2)
#: Loops nested deeper are refused (each level doubles the walk; lm-eval's task templates nest none).
_MAX_LOOP_DEPTH = 6
#: Filters whose output is a small factor of their input (escaping, formatting of a value) times their options.
_EXPANDING_FILTERS = frozenset({"tojson", "escape", "e", "forceescape", "urlencode", "urlize", "xmlattr", "pprint",
                                "filesizeformat"})
#: Filters and methods whose result is a number bounded by their input's size.
_COUNTS = frozenset({"length", "count", "wordcount", "index", "find", "rfind", "rindex"})
#: Filters whose result is one of their input's items (a number stays a number).
_PICKS = frozenset({"first", "last", "min", "max", "random"})
#: Methods that pad their receiver to a width given as their first argument.
_PADDING = frozenset({"center", "ljust", "rjust", "zfill"})
#: Filters and methods whose result is no longer than their input (or the rest of their arguments).
_SAME_SIZE = frozenset({"trim", "striptags", "safe", "string", "truncate", "reverse", "default", "d", "strip",
                        "lstrip", "rstrip", "removeprefix", "removesuffix", "startswith", "endswith"})
#: Case changes: a character can become three (``'ﬃ'.upper()`` is ``'FFI'``), once.
_CASES = frozenset({"upper", "lower", "capitalize", "title", "casefold", "swapcase"})
#: How much longer a printed list is than its items: quotes, a comma and a space, and escapes (``'\x00'``).
_LISTED = 8
#: The longest a printed generator (``map``, ``select``... not made a list) or object name can be.
_GENERATOR_TEXT = 80


class _Refused(Exception):
    """A template construct refused whatever its bound."""


def _poly(c0=0, c1=0) -> tuple:
    return (min(c0, _CAP), min(c1, _CAP), 0, 0)


def _add(*polys) -> tuple:
    return tuple(min(sum(cs), _CAP) for cs in zip(*polys))


def _mul(a: tuple, b: tuple) -> tuple:
    """The product; any term of degree three or more is kept in the last slot."""
    out = [0, 0, 0, 0]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[min(i + j, 3)] = min(out[min(i + j, 3)] + x * y, _CAP)
    return tuple(out)


_ONE, _NUMBER_TEXT, _FIELD = _poly(1), _poly(20), _poly(0, 1)


@dataclass(frozen=True)
class _Value:
    """Bounds on a value: ``size`` (characters or items), ``mag`` (a number's magnitude), and ``kind``: ``num`` (a
    number), ``doc`` (from a document: a number in it can be any size) or ``other`` (text or a container)."""

    size: tuple
    mag: tuple
    kind: str = "other"


def _number(mag: tuple) -> _Value:
    return _Value(_NUMBER_TEXT, mag, "num")


def _union(*vals: _Value) -> _Value:
    kinds = {v.kind for v in vals}
    return _Value(_add(*(v.size for v in vals)), _add(*(v.mag for v in vals)), kinds.pop() if len(kinds) == 1
                  else "other")


def _const(value) -> _Value:
    if isinstance(value, bool) or value is None:
        return _number(_ONE)
    if isinstance(value, (int, float)):
        return _Value(_poly(len(repr(value))), _poly(int(min(abs(value), _CAP)) if abs(value) < _CAP else _CAP), "num")
    text = str(value)
    try:  # a number written as text becomes that number through ``|int``
        mag = int(min(abs(float(text)), _CAP)) if len(text) < 40 else _CAP
    except (ValueError, OverflowError):
        mag = 0
    return _Value(_poly(len(text)), _poly(mag))


def work_problem(tree, nodes, special: frozenset) -> Optional[str]:
    """Why rendering the parsed template ``tree`` could hang or fill the memory, or None.

    ``nodes`` is ``jinja2.nodes``; ``special`` the names that are not document fields. The reason is a
    predicate, like :func:`harness_ext.store.template_safety.template_problem`'s.
    """
    try:
        c0, c1, c2, c3 = _work(tree, nodes, special)
    except _Refused as exc:
        return str(exc)
    if c3:
        return "can do work growing with the cube of a document field's length (loops or joins nested in each other)"
    if max(c0, c1, c2) >= _CAP:
        return ("can build a text or run a loop of unbounded size (sized by a number read from a document or "
                "computed, or a text grown from itself)")
    if c2 > LIMITS[2]:
        return f"can do work growing with the square of a document field's length, {c2:,} times over"
    if c1 > LIMITS[1]:
        return f"can repeat a document field's text about {c1:,} times"
    if c0 > LIMITS[0]:
        return f"can build about {c0:,} characters or loop steps whatever the document"
    return None


def work_bound(tree, nodes, special: frozenset) -> Optional[tuple]:
    """The bound :func:`work_problem` judges: ``(c0, c1, c2, c3)``, the work of rendering ``tree`` being at most
    ``c0 + c1 D + c2 D^2 + c3 D^3`` steps for a document whose largest field prints in ``D`` characters (``c3``
    stands for every higher power too). None for a template refused whatever its bound (``**``...).
    """
    try:
        return _work(tree, nodes, special)
    except _Refused:
        return None


def _work(tree, nodes, special: frozenset) -> tuple:
    """``(c0, c1, c2, c3)`` of :func:`work_bound`; raises :class:`_Refused` for a construct refused outright."""
    walker = _Walker(nodes, special)
    walker.statements(tree.body, {})
    return walker.work


class _Walker:
    """One pass over a template, adding every value's size (times the loops around it) to :attr:`work`."""

    def __init__(self, nodes, special: frozenset):
        self.nodes, self.special = nodes, special
        self.work, self.times, self.depth = _poly(), _ONE, 0

    # statements ------------------------------------------------------------------------------------------
    def statements(self, body, env: dict) -> None:
        for node in body:
            kind = type(node).__name__
            if kind == "Output":
                for child in node.nodes:
                    self.value(child, env)
            elif kind == "If":
                self.value(node.test, env)
                for part in (node.body, *[[e] for e in node.elif_], node.else_):
                    self.statements(part, env)  # a ``set`` in a branch is seen after it, as Jinja does
            elif kind == "For":
                self._loop(node, env)
            elif kind == "Assign":
                val = self.value(node.node, env)
                for name in node.target.find_all(self.nodes.Name) if not isinstance(
                        node.target, self.nodes.Name) else [node.target]:
                    env[name.name] = val

    def _loop(self, node, env: dict) -> None:
        """A loop's work: its steps, and its body once per step.

        The items of a text or list of size ``S`` are at most ``S`` long together, so the body is walked twice:
        once per step with an item of size 0 (what every step costs whatever its item), once with one item of
        size ``S`` (what the items add, at most, all steps together; the body's cost grows with its item's size
        at least as fast as the sum of its parts). A loop over a list of lists is then not taken for a loop
        inside a loop over the whole document. A range's items are numbers: one walk per step.
        """
        if self.depth >= _MAX_LOOP_DEPTH:
            raise _Refused(f"nests loops more than {_MAX_LOOP_DEPTH} deep")
        over = self.value(node.iter, env)
        self.depth += 1
        self.work = _add(self.work, _mul(self.times, over.size))  # each step costs one even with an empty body
        if over.kind == "num":
            self._body(node, env, _number(over.mag), over.size, _mul(self.times, over.size))
        else:
            empty = _Value(_poly(), over.mag, over.kind)
            self._body(node, env, empty, over.size, _mul(self.times, over.size))
            self._body(node, env, _Value(over.size, over.mag, over.kind), over.size, self.times)
        self.depth -= 1
        self.statements(node.else_, env)

    def _body(self, node, env: dict, item: _Value, steps: tuple, times: tuple) -> None:
        """Walk a loop's test and body with its target names bound to ``item``, ``times`` times over."""
        inner = dict(env)  # a ``set`` in the body does not outlive its step (Jinja scopes it to the loop)
        targets = [node.target] if isinstance(node.target, self.nodes.Name) else list(
            node.target.find_all(self.nodes.Name))
        # ``loop.index`` counts the steps; ``loop.previtem``/``nextitem`` are items like the target
        inner.update({t.name: item for t in targets}, loop=_Value(_add(item.size, _NUMBER_TEXT), steps, "num"))
        outer, self.times = self.times, times
        if node.test is not None:
            self.value(node.test, inner)
        self.statements(node.body, inner)
        self.times = outer

    # expressions -----------------------------------------------------------------------------------------
    def value(self, node, env: dict) -> _Value:
        """Bounds on ``node``'s value; its size, times the loops around it, is added to the work."""
        handler = getattr(self, "_" + type(node).__name__, None)
        val = handler(node, env) if handler else _union(_Value(_ONE, _poly()), *(
            self.value(c, env) for c in node.iter_child_nodes()))
        self.work = _add(self.work, _mul(self.times, val.size))
        return val

    def _Const(self, node, env):
        return _const(node.value)

    def _TemplateData(self, node, env):
        return _Value(_poly(len(node.data)), _poly())

    def _Name(self, node, env):
        if node.name in env:
            return env[node.name]
        if node.name in self.special:
            return _Value(_ONE, _poly())
        # A document field: its text or list counts as D; a number in it can be any size (the dataset is named
        # by the same results file), so only a size measured from it (``|length``) may size a text or a loop.
        return _Value(_FIELD, _poly(_CAP), "doc")

    def _Getattr(self, node, env):
        return self.value(node.node, env)

    def _Getitem(self, node, env):
        self.value(node.arg, env)
        return self.value(node.node, env)

    def _List(self, node, env):
        """A literal list, tuple or dict: printed, each item within quotes and escaped (``repr``)."""
        items = [self.value(c, env) for c in node.iter_child_nodes()]
        size = _add(_mul(_poly(4), _add(_poly(), *(v.size for v in items))), _poly(4 * len(items) + 2))
        return _Value(size, _add(_poly(), *(v.mag for v in items)))

    _Tuple = _Dict = _List

    def _Concat(self, node, env):
        return _Value(_add(*(self.value(n, env).size for n in node.nodes)), _poly(_CAP))

    def _Add(self, node, env):
        a, b = self.value(node.left, env), self.value(node.right, env)
        if "num" in (a.kind, b.kind) or a.kind == b.kind == "doc":
            return _Value(_add(a.size, b.size), _add(a.mag, b.mag), "num" if "num" in (a.kind, b.kind) else "doc")
        return _Value(_add(a.size, b.size), _poly(_CAP))  # texts joined: as a number, any number of digits

    def _Sub(self, node, env):
        return _number(_add(self.value(node.left, env).mag, self.value(node.right, env).mag))

    def _Div(self, node, env):
        a = self.value(node.left, env)
        self.value(node.right, env)
        by_one_or_more = isinstance(node.right, self.nodes.Const) and isinstance(node.right.value, (int, float)) \
            and abs(node.right.value) >= 1
        return _number(a.mag if by_one_or_more else _poly(_CAP))

    _FloorDiv = _Div

    def _Mul(self, node, env):
        a, b = self.value(node.left, env), self.value(node.right, env)
        if a.kind == b.kind == "num":
            return _number(_mul(a.mag, b.mag))
        if "num" in (a.kind, b.kind):  # the other one, a text or a list, repeated (or a number)
            seq, times = (b, a) if a.kind == "num" else (a, b)
            return _Value(_add(_mul(seq.size, times.mag), _NUMBER_TEXT), _poly(_CAP))
        return _Value(_add(_mul(a.size, b.mag), _mul(b.size, a.mag)), _poly(_CAP))  # either may be the repeated one

    def _Mod(self, node, env):
        a, b = self.value(node.left, env), self.value(node.right, env)  # noqa: F841 - both are evaluated
        if a.kind == "num":
            return _number(b.mag)
        # Text, or a document's field (text chosen by whoever chose the dataset): a printf format.
        raise _Refused("formats text with '%' (a width in the text can fill the memory)")

    def _Pow(self, node, env):
        raise _Refused("raises a number to a power with '**' (one power can take hours to compute)")

    def _Neg(self, node, env):
        return _number(self.value(node.node, env).mag)

    _Pos = _Neg

    def _CondExpr(self, node, env):
        self.value(node.test, env)
        return _union(*(self.value(n, env) for n in (node.expr1, node.expr2) if n is not None))

    def _Filter(self, node, env):
        base = self.value(node.node, env)
        args = [self.value(a, env) for a in node.args]
        kwargs = {k.key: self.value(k.value, env) for k in node.kwargs}
        for extra in (node.dyn_args, node.dyn_kwargs):
            if extra is not None:
                args.append(self.value(extra, env))
        return _filter_value(node.name, base, args, kwargs, node.args, node.node, self.nodes)

    def _Test(self, node, env):
        for child in node.iter_child_nodes():
            self.value(child, env)
        return _number(_ONE)

    def _Call(self, node, env):
        args = [self.value(a, env) for a in node.args]
        kwargs = {k.key: self.value(k.value, env) for k in node.kwargs}
        for extra in (node.dyn_args, node.dyn_kwargs):
            if extra is not None:
                args.append(self.value(extra, env))
        fn = node.node
        if isinstance(fn, self.nodes.Name) and fn.name == "range":
            items = _add(*(a.mag for a in args)) if args else _poly()
            # its items are numbers below the largest bound; printed, ``range(0, n)``
            return _Value(_add(items, _NUMBER_TEXT), items, "num")
        if not isinstance(fn, self.nodes.Getattr):
            return _union(_Value(_ONE, _poly()), *args, *kwargs.values())
        recv = self.value(fn.node, env)
        return _method_value(fn.attr, recv, args, kwargs, node.args, self.nodes)


def _arg(args: list, kwargs: dict, i: int, name: str, default: _Value) -> _Value:
    return args[i] if len(args) > i else kwargs.get(name, default)


def _grows_by(base: _Value, piece: _Value) -> tuple:
    """A bound for inserting ``piece`` between every item (or character) of ``base``: ``join``, ``replace``."""
    return _add(base.size, _mul(_add(base.size, _ONE), piece.size))


def _shrinking_replace(arg_nodes, nodes) -> bool:
    """``replace('old', 'new')`` with both constant, ``old`` not empty and ``new`` no longer: never grows."""
    if len(arg_nodes) < 2 or not all(isinstance(a, nodes.Const) and isinstance(a.value, str) for a in arg_nodes[:2]):
        return False
    return 0 < len(arg_nodes[1].value) <= len(arg_nodes[0].value) or (arg_nodes[0].value != "" == arg_nodes[1].value)


def _filter_value(name, base, args, kwargs, arg_nodes, input_node, nodes) -> _Value:
    if name == "format":
        raise _Refused("uses the filter 'format' (a width in the text can fill the memory)")
    if name == "regex_replace":
        raise _Refused("uses the filter 'regex_replace' (a pattern can take hours to match)")
    nothing = _Value(_poly(), _poly())
    if name in _COUNTS:
        return _number(base.size)
    if name in ("int", "float"):
        known = base.kind in ("num", "doc") or isinstance(input_node, nodes.Const)
        return _number(_add(base.mag if known else _poly(_CAP), *(a.mag for a in args)))
    if name in ("abs", "round"):
        return _number(_add(base.mag, _ONE))
    if name in _PICKS:
        return _Value(base.size, base.mag, base.kind)
    if name == "sum":
        start = _arg(args, kwargs, 1, "start", nothing)
        return _Value(_add(_mul(base.size, base.size), start.size), _mul(base.size, base.mag), "num")
    if name == "join":
        return _Value(_grows_by(base, _arg(args, kwargs, 0, "d", nothing)), _poly(_CAP))
    if name == "replace":
        if _shrinking_replace(arg_nodes, nodes):
            return _Value(base.size, _poly(_CAP))
        return _Value(_grows_by(base, _arg(args, kwargs, 1, "new", nothing)), _poly(_CAP))
    if name == "center":
        return _Value(_add(base.size, _arg(args, kwargs, 0, "width", _number(_poly(80))).mag), _poly(_CAP))
    if name == "indent":  # the width (a number or a text) is added to every line
        width = _arg(args, kwargs, 0, "width", _number(_poly(4)))
        return _Value(_add(base.size, _mul(_add(base.size, _ONE), _add(width.mag, width.size))), _poly(_CAP))
    if name == "wordwrap":  # the wrap string may follow every character
        return _Value(_grows_by(base, _arg(args, kwargs, 2, "wrapstring", _Value(_ONE, _poly()))), _poly(_CAP))
    if name in ("batch", "slice"):  # n groups, the last padded with the fill value, printed as lists
        n, fill = args[0] if args else _number(_ONE), _arg(args, kwargs, 1, "fill_with", nothing)
        return _Value(_add(_mul(_poly(_LISTED), _add(base.size, _mul(n.mag, _add(fill.size, _ONE)), _ONE)),
                           _poly(_GENERATOR_TEXT)), base.mag)
    if name == "map" and arg_nodes and isinstance(arg_nodes[0], nodes.Const) and "attribute" not in kwargs:
        return _filter_value(str(arg_nodes[0].value), base, args[1:], kwargs, arg_nodes[1:], input_node, nodes)
    extra = [*args, *kwargs.values()]
    if name in _EXPANDING_FILTERS:  # escapes, or options (``tojson(indent=)``, ``urlize(target=)``) added per piece
        return _Value(_mul(base.size, _add(_poly(10), *(_add(a.size, a.mag) for a in extra))), _poly(_CAP))
    # Any other filter may turn a text into a list of its characters (``list``, ``sort``, ``map``...), printed
    # longer each time it is applied again to its own printed result.
    scale = 1 if name in _SAME_SIZE else 3 if name in _CASES else _LISTED
    # printed, a generator is its name (``<generator object ...>``) whatever its length
    return _Value(_add(_mul(_poly(scale), base.size), _poly(_GENERATOR_TEXT), *(a.size for a in extra)), _poly(_CAP))


def _method_value(name, recv, args, kwargs, arg_nodes, nodes) -> _Value:
    nothing = _Value(_poly(), _poly())
    if name in _COUNTS:
        return _number(recv.size)
    if name == "join":
        return _Value(_grows_by(args[0] if args else nothing, recv), _poly(_CAP))
    if name == "replace":
        if _shrinking_replace(arg_nodes, nodes):
            return _Value(recv.size, _poly(_CAP))
        return _Value(_grows_by(recv, args[1] if len(args) > 1 else nothing), _poly(_CAP))
    if name in _PADDING:
        return _Value(_add(recv.size, (args[0] if args else nothing).mag), _poly(_CAP))
    if name in ("get", "cycle", "copy"):
        return _union(recv, *args, *kwargs.values())
    if name in _SAME_SIZE or name.startswith("is"):
        doc = recv.kind == "doc"
        return _Value(recv.size, recv.mag if doc else _poly(_CAP), "doc" if doc else "other")
    # ``split``, ``items``... print as lists; a case change can triple a character
    return _Value(_mul(_poly(3 if name in _CASES else _LISTED), recv.size), _poly(_CAP))
