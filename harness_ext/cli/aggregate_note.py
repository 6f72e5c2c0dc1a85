"""What a matrix leaves out or changes unsaid otherwise: the models whose only scores in the store are aggregates,
and the scores the chance correction floored."""

from __future__ import annotations


def aggregate_only_note(args, df, query) -> "str | None":
    """The models the matrix leaves out because the store holds only aggregate scores for them (a board whose newer
    entries report only the overall column: 82 of MMMU's 172), as a warning naming them, or None. Only when
    ``--aggregates`` is not given and the store holds an aggregate; a second read of the matrix, aggregates only
    (hundredths of a second on the shared stores). Said by every command that reads a matrix
    (:func:`~harness_ext.cli.options.matrix_from_args`, which gives its ``query``)."""
    from dataclasses import replace

    from ..report import listed, plural
    from ..store.db import Store
    from ..store.matrix import load_matrix

    if getattr(args, "aggregates", None) is not None:
        return None
    with Store.open(args.db, read_only=True) as store:
        if not store.con.execute("SELECT 1 FROM datasets WHERE kind = 'aggregate' LIMIT 1").fetchall():
            return None
        try:
            agg = load_matrix(store, replace(query, aggregates="only"), fingerprint=False)
        except Exception:  # the note is a courtesy: a selection the aggregates-only read refuses says nothing
            return None
    # models --dense cut have dataset scores: the dense note says them
    have = set(df.index) | set((df.attrs.get("dropped") or {}).get("models") or ())
    missing = [str(m) for m in agg.index if m not in have]
    if not missing:
        return None
    return (f"{plural(len(missing), 'model')} with only aggregate scores ({listed(list(agg.columns), 4)}) and no "
            f"dataset score left out of the matrix: {listed(missing, 4)}; --aggregates include shows them")


def clipped_note(df, shown: str = "shown") -> str:
    """How many scores of ``df`` the chance correction floored at 0 (below chance) or capped at 1 (above the scale's
    top): a 0 in the matrix is then no model's raw score, and a reader should know how many there are. ``shown``:
    what the command does with them ("shown" by ``matrix``, "analysed" by the analyses)."""
    import numpy as np

    from ..store.matrix import unpack_clipped

    _, cols, values = unpack_clipped(df.attrs["clipped"], df.index, df.columns)
    below, above = int((values < 0).sum()), int((values > 1).sum())
    parts = ([f"{below} below chance {shown} as 0"] * bool(below)
             + [f"{above} above the scale's top {shown} as 1"] * bool(above))
    tail = ("--normalise none shows the raw scores" if shown == "shown" else
            "reduce and predict fit them as they are; --normalise none analyses the raw scores")
    return (f"{below + above} of {int(df.notna().to_numpy().sum())} scores clipped by the chance correction, in "
            f"{len(np.unique(cols))} of {df.shape[1]} datasets: {' and '.join(parts)} ({tail})")
