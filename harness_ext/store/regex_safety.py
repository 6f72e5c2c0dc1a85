"""Regular expressions from results files, checked for catastrophic backtracking before a task YAML keeps them.

lm-eval's ``regex`` and ``multi_choice_regex`` filters compile a task's ``regex_pattern`` (and
``regexes_to_ignore``) with Python's :mod:`re`, a backtracking engine, and search every model answer
with it. A pattern that repeats something itself repeated, such as ``(a+)+$``, takes time exponential
in the answer's length on an answer that almost matches: one crafted (or unlucky) generation stops the
evaluation. The check is static, on the pattern's parse tree: its *star height* (how deeply repeats
nest, the rule of the safe-regex package) must be at most 1, counting a repeat that can match more
than once (``*``, ``+``, ``{2,}``, ``{1,5}``; not ``?``). Every filter of lm-eval's own tasks passes it.

Patterns of star height 1 can still be slow (``(a|a)*`` tries both branches at every step, and a
backreference can match anything): the rule bounds the well-known exponential case, not every case.
"""

from __future__ import annotations

from typing import Optional

#: Longest pattern kept: lm-eval's own are under 300 characters.
MAX_PATTERN = 2000


def regex_problem(pattern) -> Optional[str]:
    """Why ``pattern`` should not be compiled and run on model answers, or None.

    Parameters
    ----------
    pattern
        A regular expression as a results file gives it (any type).

    Returns
    -------
    str or None
        The reason (it is not text, Python cannot compile it, it is too long, or it nests a repeat
        inside a repeat); None when it is kept.
    """
    import re

    if not isinstance(pattern, str):
        return f"the pattern is a {type(pattern).__name__}, not text"
    if len(pattern) > MAX_PATTERN:
        return f"the pattern is {len(pattern):,} characters long (at most {MAX_PATTERN:,} are kept)"
    try:
        tree = _parse(pattern)
        height = _star_height(tree)
    except (re.error, RecursionError, OverflowError, ValueError, TypeError) as exc:
        return f"Python cannot read it as a regular expression ({type(exc).__name__})"
    if height > 1:
        return ("it repeats a part that itself repeats (star height %d, as in '(a+)+'), which takes time exponential "
                "in an answer's length to fail to match" % height)
    return None


def _parse(pattern: str):
    try:
        from re import _parser  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as _parser
    return _parser.parse(pattern)


def _star_height(items) -> int:
    """How deeply repeats that can match more than once nest in the parsed pattern ``items``."""
    try:
        from re import _constants as c
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_constants as c
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}
    height = 0
    for op, av in items:
        if op in repeats:
            low, high, sub = av
            inner = _star_height(sub)
            height = max(height, inner + (1 if high == c.MAXREPEAT or high > 1 else 0))
        elif op is c.SUBPATTERN:
            height = max(height, _star_height(av[-1]))
        elif op is c.BRANCH:
            height = max([height] + [_star_height(b) for b in av[1]])
        elif op in (c.ASSERT, c.ASSERT_NOT):
            height = max(height, _star_height(av[1]))
        elif op is getattr(c, "ATOMIC_GROUP", None):
            height = max(height, _star_height(av))
        elif op is c.GROUPREF_EXISTS:
            height = max([height] + [_star_height(b) for b in av[1:] if b is not None])
    return height
