"""Name filters given as one glob or several (``--datasets 'high_school_*' --datasets anatomy``).

A name passes when it matches any of the globs. Globs are not split on commas: HELM's run names
(``mmlu:subject=anatomy,method=multiple_choice_joint``) hold commas.
"""

from __future__ import annotations

import fnmatch
from typing import Optional, Sequence, Union

Globs = Union[str, Sequence[str], None]


def is_glob(name: str) -> bool:
    """Whether ``name`` is a glob pattern (holds ``*``, ``?`` or ``[``), not a plain name."""
    return any(c in name for c in "*?[")


def as_globs(pattern: Globs) -> tuple:
    """The globs of ``pattern`` (one string, a sequence of them, or None) as a tuple, empty ones left out."""
    if pattern is None:
        return ()
    items = [pattern] if isinstance(pattern, str) else list(pattern)
    return tuple(str(p) for p in items if str(p))


def query_globs(pattern: Globs) -> Optional[Union[str, tuple]]:
    """``pattern`` as a query field: None, one glob as a string (as before), several as a tuple (hashable)."""
    g = as_globs(pattern)
    return None if not g else g[0] if len(g) == 1 else g


def glob_sql(exprs: Sequence[str], pattern: Globs) -> tuple:
    """``(condition, params)``: any of the SQL expressions ``exprs`` GLOBs any glob of ``pattern``."""
    g = as_globs(pattern)
    return "(" + " OR ".join(f"{e} GLOB ?" for e in exprs for _ in g) + ")", [p for _ in exprs for p in g]


def matches(name, pattern: Globs) -> bool:
    """Whether ``name`` matches any glob of ``pattern`` (case-sensitive, as DuckDB's GLOB)."""
    return any(fnmatch.fnmatchcase(str(name), p) for p in as_globs(pattern))


def select_names(names, models: Globs = None, exclude: Globs = None) -> tuple:
    """``(kept, unmatched)``: the ``names`` matching a glob of ``models`` (all when None) and none of
    ``exclude`` (``--models``, then ``--exclude-models``), in their order; and the globs of ``exclude`` that
    matched none of the names ``models`` selected (the commands warn about them)."""
    chosen = [n for n in names if not models or matches(n, models)]
    kept = [n for n in chosen if not matches(n, exclude)]
    unmatched = [g for g in as_globs(exclude) if not any(matches(n, g) for n in chosen)]
    return kept, unmatched


def unmatched_note(globs, among: str) -> str:
    """The warning naming the ``--exclude-models`` globs that matched no model ``among`` names (``the selection``)."""
    return f"--exclude-models {' '.join(map(repr, globs))} matched no model of {among}"
