"""The ``ingest`` command: options are in :mod:`harness_ext.cli.options`; the work is
:func:`harness_ext.store.ingest.ingest_paths`, this module reads the arguments and shows the report.
"""

from __future__ import annotations


from ..errors import HarnessExtError
from ..report import listed


#: Conflicting values ``ingest`` prints per file; the rest are counted, and listed by ``info --conflicts``.
CONFLICT_LINES = 10


def run(args) -> int:
    from ..store.db import Store
    from ..store.ingest import bundled_data_path, ingest_paths
    from ..store.ingest_files import reading_options

    paths = list(args.paths) + ([bundled_data_path()] if args.bundled else [])
    if not paths:
        raise HarnessExtError("nothing to ingest: name result files or directories, or pass --bundled")
    options = reading_options(args.meta_columns, args.column_meta, getattr(args, "mteb_split", None),
                              getattr(args, "mteb_languages", None), getattr(args, "keep_reference_rows", False),
                              getattr(args, "models_as_columns", False))
    from ..errors import StoreLockedError

    try:
        with Store.open(args.db) as store:
            report = ingest_paths(store, paths, adapter=args.adapter, options=options, group=args.group,
                                  reread=getattr(args, "reread", False))
    except StoreLockedError as exc:
        if getattr(exc, "files_listed", False):
            raise
        raise StoreLockedError(f"{exc}. Not ingested: {listed(paths, 10)}") from None
    import logging

    log = logging.getLogger("harness_ext.cli.ingest")
    if not args.quiet:
        for line in report.skipped_lines():  # a file known to hold no results (MTEB's model_meta.json): counted only
            log.warning(line)
        for f in report.files:  # a conflict says "this file": name it (a folder's files all print here)
            for c in f.conflicts[:CONFLICT_LINES]:
                log.warning(f"conflict in {f.path}: {c.text(f.path)}")
            if len(f.conflicts) > CONFLICT_LINES:  # a board listing models twice: one line per cell was hundreds
                log.warning(f"conflict in {f.path}: {len(f.conflicts) - CONFLICT_LINES} more conflicting values "
                            "(every one: 'harness-ext info --conflicts')")
        from .logs import NOTE

        for line in report.note_lines():  # what the adapters' heuristics did: never silent
            log.log(NOTE, line)
    print(report.summary())
    args.json_payload = report.to_dict()
    if report.group:
        name, added = report.group
        print(f"benchmark group {name}: {len(added)} benchmarks added" + (f" ({', '.join(added[:8])}"
              + (" ..." if len(added) > 8 else "") + ")" if added else ""))
    if report.files and not report.by_status("ingested") and not report.by_status("unchanged"):
        raise HarnessExtError("nothing could be ingested")
    if not report.files:
        raise HarnessExtError(f"no result files found under {', '.join(map(str, paths))}" + _passed_over(paths))
    return 0


def _passed_over(paths) -> str:
    """Why a walk found nothing: the files it passed over by their suffix, counted by suffix (empty if none).

    A folder of notes or logs (``README.md``, ``run.log``) otherwise reads as an empty folder.
    """
    import os
    from collections import Counter

    from ..store.ingest import CANDIDATE_SUFFIXES
    from ..store.ingest_files import is_hidden  # the walk's own rule (lm-eval's ``..__ckpt`` folders are walked)

    seen: Counter = Counter()
    for root in paths:
        for _d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not is_hidden(x)]
            seen.update(os.path.splitext(f)[1].lower() or "(none)" for f in files if not is_hidden(f))
    if not seen:
        return ""
    n = sum(seen.values())
    return (f": {n} file{'s' * (n != 1)} passed over by {'their' if n != 1 else 'its'} suffix ("
            + listed((f"{k} {v}" for k, v in seen.most_common()), 6)
            + f"); ingest reads {', '.join(CANDIDATE_SUFFIXES)} files, and .md files holding a results table "
            "lm-eval printed with the line it prints above it (\"hf (pretrained=...), gen_kwargs: ...\") or a "
            "leaderboard table (a model column and a column of numbers), and .html files holding such a table")
