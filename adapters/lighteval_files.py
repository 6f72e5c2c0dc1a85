"""lighteval's file and key names, shared by its results reader (:mod:`harness_ext.adapters.lighteval`), its details
reader (:mod:`harness_ext.adapters.lighteval_details`) and the chance levels read from the details
(:mod:`harness_ext.adapters.lighteval_choices`), so none of them imports another in a circle."""

from __future__ import annotations

import re
from pathlib import Path

from harness_ext.errors import IngestError

#: A results key: ``<suite>|<task>|<shots>``, or ``<task>|<shots>`` as lighteval writes it since 0.11.
KEY_RE = re.compile(r"^(?:(?P<suite>[A-Za-z0-9_\-]+)\|)?(?P<task>[^|]+)\|(?P<shots>\d+)$")
#: ``details_<key>_<timestamp>.parquet``; lighteval's timestamps use ``-`` for ``:`` (the leaderboard's early ones ``:``).
DETAILS_RE = re.compile(r"^details_(?P<key>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:\.\d+)?)\.parquet$")


def key_of(path: Path, results) -> str:
    """The task key of a details file's name: ``[<suite>|]<task>|<shots>``; lighteval's late-2025 names write both
    ``|`` and ``:`` as ``__`` (``arc__challenge__25``), which only the run's results file tells apart: its key that
    reads so."""
    key = DETAILS_RE.match(path.name).group("key") if DETAILS_RE.match(path.name) else ""
    if KEY_RE.match(key) or "__" not in key or not isinstance(results, dict):
        return key
    keys = [k for k in (results.get("results") or {}) if isinstance(k, str) and KEY_RE.match(k)]
    same = [k for k in keys if k.replace("|", "__").replace(":", "__") == key]
    return same[0] if len(same) == 1 else key


def refuse_lfs_pointer(path: Path) -> None:
    """Refuse a Git LFS pointer in place of a Parquet file, saying how to fetch it."""
    from harness_ext.store.ingest_read import lfs_pointer_reason

    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    reason = lfs_pointer_reason(head)
    if reason:
        raise IngestError(path, reason)
