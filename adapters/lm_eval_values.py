"""The values of an lm-eval results file that are no result, left out with a note: ``null``, ``"N/A"``, NaN or
Infinity (a metric lm-eval could not compute), and RULER's ``-1`` for a sequence length it ran no samples at.

Shared by the JSON reader (:mod:`harness_ext.adapters.lm_eval`), the printed tables'
(:mod:`harness_ext.adapters.lm_eval_table`) and lighteval's (:mod:`harness_ext.adapters.lighteval`).
"""

from __future__ import annotations

from math import isfinite
from typing import Optional

from harness_ext.report import listed
from harness_ext.store.rows import KIND_FIELDS, ResultRows, kind
from harness_ext.types import SourceFile

PLAIN_NUMBERS = frozenset({float, int})

#: The score RULER's tasks write for a sequence length no sample had (lm-eval's ``ruler`` tasks name a metric by its
#: length, ``4096``, ``8192``; each aggregates to -1 where it has no samples).
RULER_UNRUN = -1


def as_number(v):
    """``v`` as a score: a number as is, a number-like string as its float, None for a value that is no result
    (null, ``"N/A"``, ``NaN`` or ``Infinity`` as a bare JSON token or a string); anything else (a list, a bool)
    as is, for the record checks to refuse."""
    if v is None:
        return None
    if v.__class__ is float:
        return v if v - v == 0.0 else None  # NaN and infinities give NaN here
    if isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            return None
        return f if isfinite(f) else None
    return v


def all_finite(values) -> bool:
    """Whether no value is NaN or infinite (Python's json reads the bare tokens ``NaN``, ``Infinity``): either
    makes the sum non-finite. A sum overflowing, or an integer too large for a float, answers False too, and the
    slow path then looks at each value."""
    try:
        return isfinite(sum(values))
    except (OverflowError, TypeError):
        return False


def _unrun_length(metric: str, value) -> bool:
    """Whether a row is RULER's placeholder: a metric named by a sequence length (``4096``, ``8192,none``) at -1."""
    return value == RULER_UNRUN and value.__class__ in PLAIN_NUMBERS and metric.split(",")[0].strip().isdigit()


def drop_missing(out: ResultRows, src: Optional[SourceFile] = None) -> ResultRows:
    """``out`` without the rows whose value is no result (:func:`as_number`, RULER's -1 at a sequence length it ran
    no samples at), number-like strings read.

    lm-eval writes ``null`` (or ``"N/A"``) for a metric it could not compute on one task; the file's
    other scores are real results, so only that metric is left out (as Every Eval Ever's placeholders
    are left missing), not the whole file. RULER's tasks score one metric per sequence length and write -1 for
    each length without samples (``4096,none: 0.93, 8192,none: -1``): the -1 is left out, not stored as a score
    below every real one. A task left without its primary metric gets the next one as primary, so it still has a
    column in the matrix. What is left out is noted on ``src`` (:meth:`~harness_ext.types.SourceFile.note`), with
    counts and names, as are the groups stored as aggregates.
    """
    groups = list(dict.fromkeys(k.dataset for k in out.kinds if k.aggregate and k.primary))
    if src is not None and groups:
        src.note(f"{len(groups)} group{'s' * (len(groups) != 1)} stored as aggregate{'s' * (len(groups) != 1)} "
                 f"(lm-eval's scores over their tasks): {', '.join(groups[:12])}" + (" ..." if len(groups) > 12 else ""))
    values = out.values
    if set(map(type, values)) <= PLAIN_NUMBERS and _all_plain(values):  # the common case: C-level passes
        return out
    clean = list(map(as_number, values))
    unrun = {i for i, (k, v) in enumerate(zip(out.kinds, clean)) if _unrun_length(k.metric, v)}
    keep = [i for i, v in enumerate(clean) if v is not None and i not in unrun]
    if len(keep) == len(values):
        out.values = clean
        return out
    if src is not None:
        _note_dropped(src, out, clean, unrun, keep)
    return _keep_rows(out, clean, keep)


def _all_plain(values) -> bool:
    """Whether every value is a finite score and none is RULER's placeholder (a -1, checked by name on the slow
    path)."""
    return all_finite(values) and RULER_UNRUN not in values


def _note_dropped(src: SourceFile, out: ResultRows, clean: list, unrun: set, keep: list) -> None:
    kept = {(k.benchmark, k.dataset, k.task) for k in (out.kinds[i] for i in keep)}
    for rows, what in (([i for i, v in enumerate(clean) if v is None],
                        "written as null, NaN, Infinity or not a number (not computed)"),
                       (sorted(unrun), "at -1 for a sequence length without samples (RULER's placeholder)")):
        if not rows:
            continue
        gone = [out.kinds[i] for i in rows]
        tasks = len({(k.benchmark, k.dataset, k.task) for k in gone} - kept)
        src.note(f"{len(gone)} metric{'s' * (len(gone) != 1)} {what} left out: "
                 f"{listed((f'{k.dataset} {k.metric}' for k in gone), 8)}"
                 + (f"; {tasks} task{'s' * (tasks != 1)} with no metric left" if tasks else ""))


def _keep_rows(out: ResultRows, clean: list, keep: list) -> ResultRows:
    """``out`` with the rows ``keep`` only, values read (``clean``); a task whose primary metric went has its next
    kept metric as primary."""
    had_primary = {(k.benchmark, k.dataset, k.task) for k in out.kinds if k.primary}
    kept_kinds = [out.kinds[i] for i in keep]
    with_primary = {(k.benchmark, k.dataset, k.task) for k in kept_kinds if k.primary}
    for j, k in enumerate(kept_kinds):
        key = (k.benchmark, k.dataset, k.task)
        if key in had_primary and key not in with_primary:
            fields = {f: k.__dict__[f] for f in KIND_FIELDS}
            fields["primary"] = True
            kept_kinds[j] = kind(**fields)
            with_primary.add(key)
    out.kinds = kept_kinds
    out.values = [clean[i] for i in keep]
    for col in ("stderrs", "num_fewshot", "n_samples", "dataset_metadata"):
        setattr(out, col, [getattr(out, col)[i] for i in keep])
    out._records = None
    return out
