"""A ``--limit`` run's task sizes as the lm-eval 0.4 reader keeps them.

lm-eval's ``n-samples`` gives each task's documents scored (``effective``) and its full number (``original``); a run
with ``--limit`` scores fewer. The task's score is then over its first documents only, and its full number is kept
with the task (dataset metadata :data:`~harness_ext.store.lm_eval_tasks.N_DOCUMENTS`) so that ``reduce --items``
draws from all of them. Counts that are no counts of documents are said in the file's notes and not kept.
"""

from __future__ import annotations

from typing import Optional

from harness_ext.report import listed
from harness_ext.store.lm_eval_tasks import MAX_DOCUMENTS
from harness_ext.types import SourceFile


def _count(v) -> bool:
    """Whether ``v`` is a document count as lm-eval writes one: an int (not a bool) from 0 to :data:`MAX_DOCUMENTS`."""
    return v.__class__ is int and 0 <= v <= MAX_DOCUMENTS


def full_size(entry: dict) -> Optional[int]:
    """The task's full number of documents from its ``n-samples`` entry when the run scored fewer (``--limit``):
    ``original`` where both counts are valid and it exceeds ``effective``, else None (a run of the whole task
    stores nothing more; :func:`_note_limited` names the entries whose counts are not valid)."""
    e, o = entry.get("effective"), entry.get("original")
    return o if _count(e) and _count(o) and o > e else None


def _note_limited(doc: dict, src: SourceFile) -> None:
    """Note the tasks scored on part of their documents (``n-samples`` effective below original: ``--limit``), whose
    full number of documents is kept (dataset metadata :data:`N_DOCUMENTS`), and the entries whose counts are no
    valid counts (not integers, negative, or ``original`` below ``effective``), whose ``original`` is not kept."""
    ns = doc.get("n-samples")
    if not isinstance(ns, dict):
        return
    cut, bad = {}, []
    for t, v in ns.items():
        if not isinstance(v, dict) or "original" not in v:
            continue
        e, o = v.get("effective"), v["original"]
        if full_size(v):
            cut[t] = (e, o)
        elif not (_count(e) and _count(o)) or o < e:
            bad.append(f"{t} ({e!r} of {o!r})")
    if cut:  # a score over the first documents only: not the task's score over all of them
        src.note(f"{len(cut)} task{'s' * (len(cut) != 1)} scored on part of {'its' if len(cut) == 1 else 'their'} documents (--limit): "
                 + listed((f"{t} {e:,} of {o:,}" for t, (e, o) in sorted(cut.items())), 8)
                 + "; the full number of documents is kept with the task (reduce --items draws from all of them)")
    if bad:
        src.note(f"{len(bad)} n-samples entr{'ies' if len(bad) != 1 else 'y'} whose counts (effective of original) are "
                 f"not counts of documents (integers from 0 to {MAX_DOCUMENTS:,}, original not below effective): "
                 "their original not kept: " + listed(sorted(bad), 8))
