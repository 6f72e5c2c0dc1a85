"""The ``models`` command: options are in :mod:`harness_ext.cli.options`; the work is in
:mod:`harness_ext.store.identity`, this module reads the arguments and shows the table.
"""

from __future__ import annotations

import json


def run(args) -> int:
    from ..report import format_table, plural
    from ..store.db import Store
    from ..store.identity import (
        _cooccurring, add_alias_file, candidate_pairs, case_pairs, model_table, variant_pairs)

    if args.aliases:
        with Store.open(args.db) as store:
            n = add_alias_file(store, args.aliases)
        print(f"stored {n} alias entries from {args.aliases}")
    with Store.open(args.db, read_only=True) as store:
        table = model_table(store)
        if args.unmatched:
            mapping = dict(zip(table["name"], table["canonical"]))
            apart = _cooccurring(store) | variant_pairs(store) | case_pairs(store)[0]
            out = candidate_pairs(table["name"], mapping, apart,
                                  min_score=args.min_score)
        else:
            sizes = table.groupby("canonical")["name"].transform("size")
            # After storing an alias file the merges are what to check, not every name of a large store.
            out = table[sizes > 1] if args.merged or args.aliases else table
    n_ids = table["canonical"].nunique()
    left_out = out.attrs.get("left_out", {}) if args.unmatched else {}
    args.json_payload = {"title": "models", "summary": {"names": len(table), "models": n_ids,
                                                        **({"pairs_left_out": left_out} if args.unmatched else {})},
                         "tables": {"pairs" if args.unmatched else "models": json.loads(out.to_json(orient="records"))}}
    if args.unmatched:
        # Each rule that kept pairs from review is said with its count (two checkpoints of a run are two models).
        gone = "".join(f"; left out: {plural(n, 'pair')} of {why}, two models by design"
                       for why, n in left_out.items() if n)
        print(f"{plural(len(out), 'pair')} of models that may be the same (review; put the true ones in an alias file)"
              f"{gone}{':' if len(out) else ''}")
    else:
        print(f"{plural(len(table), 'model name')}, {plural(n_ids, 'model')}; {plural(len(table) - n_ids, 'name')} merged into another's id"
              + ("; the merged ones below ('harness-ext models' lists every name)" if args.aliases and not args.merged
                 else ""))
    if len(out):
        print(format_table(_shown(out), index=False))
    return 0


def _shown(table):
    """The table as printed: a model's benchmarks (a list) cut as ``info`` cuts a list, to the whole names that fit
    in :data:`~harness_ext.report.MAX_CELL` characters and the rest counted; ``--json`` lists them all."""
    from ..report import MAX_CELL
    from .info import short_list

    if "benchmarks" not in table:
        return table
    cut = table["benchmarks"].map(lambda s: short_list(s.split(",") if s else [], MAX_CELL))
    return table.assign(benchmarks=cut)
