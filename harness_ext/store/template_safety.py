"""Whether a Jinja template from a results file stays data when lm-eval renders it.

lm-eval renders ``doc_to_text``, ``doc_to_target``, ``doc_to_choice`` and the other prompt fields with
a plain ``jinja2.Environment``, not a sandbox: a template can reach Python's internals (an attribute
starting with ``_``), the module globals of a function and call what it finds there, which runs code
on the machine that runs the reduced folder. Searching the template's text for ``__`` is not enough:
a string literal may hold ``}}`` (the expression then looks like plain text), ``'\\x5f'`` is ``_`` once
Jinja reads it, and a key built at render time (``x[a ~ b]``) or read from a document never appears in
the text. So the template is parsed with Jinja's own parser and kept only when every part of it is
in this allow-list:

* names, constants, literals, arithmetic, comparisons, ``if``/``for``/``set`` and plain output;
* attributes and constant keys that do not start with ``_``;
* a key computed at render time (``choices[answer]``) only on a document field or a literal of constants, through
  attributes and keys only (not on a filter's or a call's result, a name the template binds, ``loop``
  or one of Jinja's global helpers);
* calls only of the string, list and mapping methods in :data:`SAFE_METHODS` (and ``range``);
* Jinja's filters and tests except ``attr``; those that look attributes up by name
  (``map``, ``selectattr``, ``sort``...) only with constant names not starting with ``_``.

Anything else (a macro, an include, ``cycler``, ``lipsum``, ``str.format``) is refused, with the reason. A
template that passes is then refused if rendering it could hang or fill the memory (``range(10**10)|list``,
``'a' * 10**10``, loops inside loops): :mod:`harness_ext.store.template_cost` bounds its work.
"""

from __future__ import annotations

from typing import Optional

from .template_cost import work_problem

#: Methods a template may call: str, list and dict methods that return data (not ``format``: its fields
#: read attributes, ``"{0.__class__}"``).
SAFE_METHODS = frozenset({
    "capitalize", "casefold", "center", "count", "endswith", "find", "index", "isalnum", "isalpha", "isascii",
    "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper",
    "join", "ljust", "lower", "lstrip", "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex",
    "rjust", "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title",
    "upper", "zfill", "get", "items", "keys", "values", "copy", "cycle"})
#: Names a template may call as functions.
SAFE_FUNCTIONS = frozenset({"range"})
#: Names that are not document fields: Jinja's globals (Python objects whose attributes lead to module globals)
#: and the names Jinja binds itself.
SPECIAL_NAMES = frozenset({"lipsum", "cycler", "joiner", "namespace", "range", "dict", "self", "caller", "varargs",
                           "kwargs", "super", "loop"})
#: Filters that look attributes, filters or tests up by a name given as an argument.
_BY_NAME_FILTERS = frozenset({"map", "select", "reject", "selectattr", "rejectattr", "sort", "groupby", "unique",
                              "min", "max", "sum", "dictsort"})
#: Template syntax Jinja reads (text without it renders as it is).
_SYNTAX = ("{{", "{%", "{#")
#: The expression and statement nodes a kept template may hold (by class name in ``jinja2.nodes``).
_ALLOWED_NODES = frozenset({
    "Template", "Output", "TemplateData", "Const", "Name", "List", "Tuple", "Dict", "Pair", "Getattr", "Getitem",
    "Slice", "Filter", "Test", "Call", "Keyword", "Compare", "Operand", "Add", "Sub", "Mul", "Div", "FloorDiv", "Mod",
    "Pow", "Neg", "Pos", "Not", "And", "Or", "Concat", "CondExpr", "If", "For", "Assign"})


def has_template_syntax(text: str) -> bool:
    """Whether lm-eval would read ``text`` as a Jinja template rather than print it as it is."""
    return any(s in text for s in _SYNTAX)


def template_problem(text: str) -> Optional[str]:
    """Why the Jinja template ``text`` could reach beyond its document's data when lm-eval renders it, or None.

    The reason is a predicate to follow the value's name: ``doc_to_text`` + ``"is a template that calls ..."``.

    Text without Jinja syntax is None at once. Without Jinja installed a template cannot be checked and is
    refused (lm-eval installs Jinja: run reduce where lm-eval is installed to keep it).
    """
    if not has_template_syntax(text):
        return None
    try:
        from jinja2 import Environment, nodes
        from jinja2.exceptions import TemplateSyntaxError
    except ImportError:
        return "is a template and Jinja is not installed to check it (pip install jinja2, then reduce again)"
    try:
        tree = Environment().parse(text)
    except TemplateSyntaxError as exc:
        return f"is not a template lm-eval can read ({exc.message})"
    except Exception as exc:  # noqa: BLE001 - a parser failure on hostile text is a refusal, not a crash
        return f"is not a template lm-eval can read ({type(exc).__name__})"
    bound = {n.name for n in _walk(tree) if isinstance(n, nodes.Name) and n.ctx != "load"}
    for node in _walk(tree):
        why = _node_problem(node, nodes, bound)
        if why:
            return f"is a template that {why} (lm-eval renders templates without a sandbox)"
    try:
        why = work_problem(tree, nodes, SPECIAL_NAMES)
    except RecursionError:  # the parser read it, but the bound walks the tree recursively
        why = "nests expressions too deeply to check"
    return f"is a template that {why} (lm-eval renders templates without a sandbox)" if why else None


def _walk(tree):
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.iter_child_nodes())


def _private(name) -> bool:
    """Whether an attribute path (``a.b``, as Jinja's filters split it) reaches a name starting with ``_``."""
    return isinstance(name, str) and any(part.startswith("_") for part in name.split("."))


def _node_problem(node, nodes, bound: set) -> Optional[str]:
    kind = type(node).__name__
    if kind not in _ALLOWED_NODES:
        return f"uses {kind} (only expressions, if, for and set are kept)"
    if isinstance(node, nodes.Name) and node.name in SPECIAL_NAMES - {"loop", "range"}:
        return f"uses Jinja's {node.name!r}"
    if isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
        return f"reads the attribute {node.attr!r}"
    if isinstance(node, nodes.Getitem):
        return _subscript_problem(node, nodes, bound)
    if isinstance(node, nodes.Call):
        fn = node.node
        if isinstance(fn, nodes.Getattr) and fn.attr in SAFE_METHODS:
            return None
        if isinstance(fn, nodes.Name) and fn.name in SAFE_FUNCTIONS:
            return None
        what = repr(fn.attr if isinstance(fn, nodes.Getattr) else fn.name) if isinstance(
            fn, (nodes.Getattr, nodes.Name)) else "the result of an expression"
        return f"calls {what} (only string, list and mapping methods are kept)"
    if isinstance(node, (nodes.Filter, nodes.Test)):
        return _filter_problem(node, nodes)
    return None


def _subscript_problem(node, nodes, bound: set) -> Optional[str]:
    arg = node.arg
    if isinstance(arg, nodes.Const):
        return f"reads the key {arg.value!r}" if _private(arg.value) else None
    if isinstance(arg, nodes.Slice) or (isinstance(arg, (nodes.Neg, nodes.Pos)) and isinstance(arg.node, nodes.Const)
                                        and type(arg.node.value) is int):
        return None  # a slice or an index from the end (``[-1]``)
    # A key known only when rendering: on a document's own data it is an index, on a Python object it reaches
    # any attribute (Jinja falls back to getattr), so the object must be a document field or a literal.
    root = node.node
    while isinstance(root, (nodes.Getattr, nodes.Getitem)):
        root = root.node
    if isinstance(root, (nodes.Const, nodes.List, nodes.Tuple, nodes.Dict)) and all(
            isinstance(n, (nodes.Const, nodes.List, nodes.Tuple, nodes.Dict, nodes.Pair)) for n in _walk(root)):
        return None  # a literal of constants (``['A', 'B'][label]``): a filter's result inside one is an object
    if isinstance(root, nodes.Name) and root.name not in SPECIAL_NAMES and root.name not in bound:
        return None
    return "looks up a key computed at render time on something other than a document field"


def _filter_problem(node, nodes) -> Optional[str]:
    if node.name == "attr":
        return "uses the filter 'attr'"
    args = [*node.args, *(k.value for k in node.kwargs)]
    for a in args:
        if isinstance(a, nodes.Const) and (_private(a.value) or (node.name in ("map", "select", "reject")
                                                                 and a.value == "attr")):
            return f"passes {a.value!r} to the {'filter' if isinstance(node, nodes.Filter) else 'test'} {node.name!r}"
    if isinstance(node, nodes.Filter) and node.name in _BY_NAME_FILTERS:
        if node.dyn_args is not None or node.dyn_kwargs is not None or any(
                not isinstance(a, nodes.Const) for a in args):
            return f"passes a name computed at render time to the filter {node.name!r}"
    return None
