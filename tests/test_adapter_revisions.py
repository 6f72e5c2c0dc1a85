"""Each built-in adapter's revision changes exactly when what it stores from the real fixture files changes.

``ingest`` tells a user which stored files an older reader read by the adapter's ``revision``
(:class:`harness_ext.types.Adapter`), and ``ingest --reread`` reads those again. A change to an adapter that stores
something else from a file (other names, values, directions, datasets, item scores, a refusal) without a new
revision would leave every store made before silently as it was; a new revision without a change would make users
read everything again for nothing. ``tests/fixtures/adapter_revisions.json`` records, per adapter, its revision and
a digest of what it reads from every fixture file it claims; this test compares them.

After changing what an adapter stores: raise its ``revision`` and run
``python tests/test_adapter_revisions.py --update`` to record the new digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECORD = REPO / "tests" / "fixtures" / "adapter_revisions.json"


def _digests() -> dict:
    """``{adapter: digest}`` of what each adapter reads from the fixture files it claims (read from the repository
    root, so paths in the records are relative and the same on every machine)."""
    from harness_ext.errors import HarnessExtError
    from harness_ext.plugin_manager import get_registrations
    from harness_ext.store.ingest import detect_adapter, iter_sources, read_source

    ads = get_registrations("adapters")
    here = os.getcwd()
    os.chdir(REPO)
    try:
        hashes: dict = {}
        for src, _ in iter_sources(["tests/fixtures"], ads):
            try:
                adapter = detect_adapter(src, ads)
            except HarnessExtError:
                continue
            h = hashes.setdefault(adapter.name, hashlib.sha256())
            h.update(f"\0{src.path.as_posix()}\0".encode())
            try:
                h.update(_text(read_source(src, adapter)).encode())
            except HarnessExtError as exc:  # a refusal is what the adapter makes of the file too
                h.update(f"refused: {exc}".encode())
            h.update(_items(adapter.name, src.path).encode())
        return {name: h.hexdigest() for name, h in sorted(hashes.items())}
    finally:
        os.chdir(here)


def _text(records) -> str:
    """Every field of every record, as canonical JSON (arrays for tables given as arrays)."""
    from harness_ext.types import ColumnarResults

    if isinstance(records, ColumnarResults) or hasattr(records, "columns") and hasattr(records, "models"):
        return json.dumps({k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in vars(records).items()},
                          sort_keys=True, default=str)
    return "\n".join(json.dumps(dataclasses.asdict(r), sort_keys=True, default=str) for r in records)


def _items(adapter: str, path: Path) -> str:
    """The item scores ingest stores from a HELM run or an Inspect log (part of what the adapter's file gives)."""
    from harness_ext.errors import HarnessExtError

    try:
        if adapter == "helm_run":
            from harness_ext.adapters.helm_instances import read_run_instances as read
        elif adapter == "inspect_ai":
            from harness_ext.adapters.inspect_items import read_items as read
        else:
            return ""
        table = read(path)
    except HarnessExtError as exc:
        return f"items refused: {exc}"
    return "" if table is None else table.frame.to_csv(index=False)


def test_every_adapter_whose_output_changed_has_a_new_revision():
    from harness_ext.plugin_manager import get_registrations

    recorded = json.loads(RECORD.read_text())
    ads = get_registrations("adapters")
    wrong = []
    for name, digest in _digests().items():
        rec = recorded.get(name)
        revision = str(ads[name].revision)
        if rec is None:
            wrong.append(f"{name}: not recorded")
        elif rec["revision"] != revision:
            wrong.append(f"{name}: revision {revision}, recorded {rec['revision']}")
        elif rec["digest"] != digest:
            wrong.append(f"{name}: stores something else from the fixture files at the same revision {revision}")
    assert not wrong, ("raise the revision of each adapter whose output changed, then run "
                       "'python tests/test_adapter_revisions.py --update': " + "; ".join(wrong))


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    from harness_ext.plugin_manager import get_registrations

    ads = get_registrations("adapters")
    RECORD.write_text(json.dumps({name: {"revision": str(ads[name].revision), "digest": digest}
                                  for name, digest in _digests().items()}, indent=2) + "\n")
    print(f"recorded {RECORD}")
