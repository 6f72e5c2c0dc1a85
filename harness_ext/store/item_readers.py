"""Which item reader stored each item source (``sample_sources.reader``): ``ingest`` counts the item files an older
reader stored, and ``ingest --reread`` reads them again.

Item scores (lm-eval per-sample logs, Every Eval Ever instance files, item-response tables, HELM per-instance stats,
Inspect samples, lighteval details) are stored once by content hash, as results are: a store keeps what the reader
of the day read from a file until that file is read again. Each item reader has a revision (the ``REVISION`` of its
module, raised when it stores other item scores from the same file), and every item source records its reader as
``<name>:<revision>`` (NULL in stores made before it was recorded: an unknown, older reader). A file whose stored
sources another reader (or revision) wrote is counted by ``ingest``; ``ingest --reread`` replaces them by a new
reading, in one transaction per file (what fails to be read or stored keeps its older rows). A file whose content
changed since the same reader stored it (:func:`earlier_item_sources`) replaces its earlier reading the same way.
"""

from __future__ import annotations

from typing import Optional

#: The item readers, by the name ``sample_sources.reader`` records, and the module whose ``REVISION`` (or
#: ``EEE_REVISION``) each raises (documentation: each reader passes its own revision to :func:`reader_id`, so this
#: module imports none of them).
READERS = {
    "lm_eval_samples": "harness_ext.store.samples (REVISION)",
    "eee_samples": "harness_ext.store.samples (EEE_REVISION)",
    "item_table": "harness_ext.store.item_table_read",
    "helm_instances": "harness_ext.adapters.helm_instances",
    "inspect_items": "harness_ext.adapters.inspect_items",
    "lighteval_details": "harness_ext.adapters.lighteval_details",
}


def reader_id(name: str, revision: str) -> str:
    """What ``sample_sources.reader`` records for the item reader ``name`` (:data:`READERS`) at ``revision``."""
    if name not in READERS:
        raise ValueError(f"unknown item reader {name!r}: add it to READERS")
    return f"{name}:{revision}"


def is_older(stored: Optional[str], reader: str) -> bool:
    """Whether an item source stored by ``stored`` (None: before readers were recorded) was read otherwise than
    ``reader`` reads it now."""
    return stored != reader


def same_reader(stored: Optional[str], reader: str) -> bool:
    """Whether an item source stored by ``stored`` (None: before readers were recorded) was read by the item reader
    ``reader`` is, at any revision: the same reading of its path (another revision is an older reader)."""
    return stored is None or stored.split(":")[0] == reader.split(":")[0]


def earlier_item_sources(con, path: str, reader: str) -> list:
    """``(sha256, source_id, n_rows, ingested_at, model)`` of the item sources the same item reader
    (:func:`same_reader`) stored from ``path``, oldest first: those a new reading of other content (the file edited
    since) replaces when it names one of their models (:func:`harness_ext.store.reread.shares_a_model`)."""
    rows = con.execute("SELECT sha256, source_id, n_rows, ingested_at, model, reader FROM sample_sources "
                       "WHERE path = ? ORDER BY source_id", [path]).fetchall()
    return [r[:5] for r in rows if same_reader(r[5], reader)]


def replaced_items(earlier: list, n_now: int) -> dict:
    """What an item file edited since it was stored replaced (``FileReport.replaced``): ``earlier``
    (:func:`earlier_item_sources`) as versions (one per ingest that stored from the path), and ``n_now`` item
    scores now."""
    times = sorted({r[3] for r in earlier})
    return {"versions": len(times), "sha256": [], "ingested_at": str(times[0])[:19],
            "n_samples": int(sum(r[2] for r in earlier)), "n_samples_now": int(n_now)}
