"""The work bound of :mod:`harness_ext.store.template_cost` against real renders: for random templates built from
the constructs it keeps (loops, ``set``, ``~``, ``+``, ``*``, literals, filters and methods), the rendered text is
never longer than the bound, and rendering leaves the document as it was."""

from __future__ import annotations

import copy
import random

import pytest

#: A document with a text holding escapes, a list, a number and a mapping: its fields print in at most D characters.
DOC = {"x": "a\\b\n", "y": ["p", "q\x00", "rr"], "n": 3, "z": {"k": "vv", "j": "w"}}
LEAVES = ["x", "y", "n", "z", "'ab'", "'\\\\'", "2", "3", "[x, 'c']", "y[0]", "z.k", "(x|length)", "loop.index", "i"]
FILTERS = ["list", "string", "join(x)", "join(',')", "upper", "replace('a', x)", "replace('', '-')", "sort", "unique",
           "tojson", "e", "forceescape", "batch(2, x)", "slice(2)", "center(9)", "indent(3)", "first", "reverse",
           "map('upper')", "wordwrap(2)", "trim", "dictsort", "items", "sum(start=[])", "int", "length", "default(x)"]
METHODS = ["split()", "upper()", "replace('b', x)", "ljust(7)", "join(y)", "strip()", "title()", "zfill(5)"]


def _expr(r: random.Random, depth: int) -> str:
    if depth <= 0 or r.random() < 0.25:
        return r.choice(LEAVES)
    k, sub = r.random(), (lambda: _expr(r, depth - 1))
    if k < 0.35:
        return f"({sub()})|{r.choice(FILTERS)}"
    if k < 0.5:
        return f"({sub()}).{r.choice(METHODS)}"
    if k < 0.6:
        return f"({sub()} ~ {sub()})"
    if k < 0.7:
        return f"({sub()} + {sub()})"
    if k < 0.8:
        return f"({sub()} * {r.choice(['2', '3', 'n', '(y|length)', 'loop.index'])})"
    return f"[{sub()}, {sub()}]" if k < 0.9 else f"({sub()} if {sub()} else {sub()})"


def _statement(r: random.Random, depth: int) -> str:
    k = r.random()
    if depth > 0 and k < 0.25:
        over = r.choice(["x", "y", "range(3)", "range(n)", "range(x|length)", "[y, y]", "z"])
        body = "".join(_statement(r, depth - 1) for _ in range(r.randint(1, 2)))
        return "{% for i in " + over + " %}" + body + "{% endfor %}"
    if depth > 0 and k < 0.35:
        return "{% set x = " + _expr(r, 2) + " %}" + _statement(r, depth - 1)
    if depth > 0 and k < 0.45:
        return "{% if " + _expr(r, 1) + " %}" + _statement(r, depth - 1) + "{% else %}" + _statement(r, depth - 1) \
            + "{% endif %}"
    return "{{ " + _expr(r, 3) + " }}"


@pytest.mark.slow
def test_the_bound_is_never_below_a_real_render():
    utils = pytest.importorskip("lm_eval.utils")  # lm-eval's own environment, the one that renders the folder
    from jinja2 import nodes

    from harness_ext.store.template_cost import work_bound
    from harness_ext.store.template_safety import SPECIAL_NAMES, template_problem

    r = random.Random(1)
    width = max(len(str(v)) for v in DOC.values())
    checked = 0
    for _ in range(800):
        text = "".join(_statement(r, 3) for _ in range(r.randint(1, 3)))
        if template_problem(text):
            continue
        doc = copy.deepcopy(DOC)
        try:
            out = utils.apply_template(text, doc)
        except Exception:  # noqa: BLE001 - a random template may add a text to a number: not rendered, not judged
            continue
        assert doc == DOC, f"rendering changed the document: {text!r}"  # (Jinja's indent does, then fails)
        c = work_bound(utils.env.parse(text), nodes, SPECIAL_NAMES)
        assert len(out) <= sum(ci * width ** i for i, ci in enumerate(c)), text
        checked += 1
    assert checked > 80
