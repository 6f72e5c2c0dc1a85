"""Values that agree to the decimals a file gives: not conflicts.

A model card or a leaderboard table quotes a score to a few decimals (``65.23`` percent, stored as ``0.6523``)
where the model's results file has every digit (``0.652345...``). Two values of a cell agree when the less precise
one is the other rounded to the less precise one's decimals; such a cell is not a conflict, and it takes the more
precise value (unless the document counts decide it, :mod:`harness_ext.store.cell_choice`).

A value's decimals are read off the stored float: the fewest ``d`` in 2..6 with ``round(v, d) == v`` (within
:data:`EXACT`). A value with 0 or 1 decimals (``0``, ``1``, ``0.5``) or more than 6 counts as exact: a whole or
half score is as likely a count of documents as a rounding. A value stored as a proportion from a percent carries
the percent's decimals plus two (``65.23`` -> ``0.6523``: 4), the scale the store compares values on.
"""

from __future__ import annotations

import numpy as np

from .tables import CONFLICT_TOLERANCE

#: The decimals a rounded value may have; others count as exact (:data:`EXACT_DECIMALS`).
DECIMALS = (2, 3, 4, 5, 6)
#: The decimals of a value taken as exact.
EXACT_DECIMALS = 99
#: How close a float must be to its rounding to count as written to those decimals (a percent divided by 100 is a
#: float a few units of 1e-17 off its decimal).
EXACT = 1e-12


def decimals_sql(col: str = "value") -> str:
    """The SQL expression of the decimals of ``col`` (:data:`EXACT_DECIMALS` for an exact value)."""
    whens = [f"WHEN abs({col} - round({col}, 1)) <= {EXACT} THEN {EXACT_DECIMALS}"]
    whens += [f"WHEN abs({col} - round({col}, {d})) <= {EXACT} THEN {d}" for d in DECIMALS]
    return (f"(CASE WHEN {col} IS NULL OR isnan({col}) THEN {EXACT_DECIMALS} {' '.join(whens)} "
            f"ELSE {EXACT_DECIMALS} END)")


def half_sql(dec: str) -> str:
    """The SQL expression of half a unit of the last decimal ``dec`` gives (0 for an exact value)."""
    return f"(CASE WHEN {dec} >= {EXACT_DECIMALS} THEN 0.0 ELSE 0.5 * pow(10.0, -{dec}) END)"


def agree_sql(value: str = "value", dec: str = "dec") -> str:
    """The aggregate condition (a cell's rows grouped) that its values agree to the decimals each gives and differ:
    the most precise values are one value, and every value's rounding interval holds it."""
    top = f"max({dec})"
    precise = f"FILTER (WHERE {dec} = {EXACT_DECIMALS})"
    half = half_sql(dec)
    return (f"(max({value}) - min({value}) > {CONFLICT_TOLERANCE} AND min({dec}) < {top} "
            f"AND max({value}) {precise} - min({value}) {precise} <= {CONFLICT_TOLERANCE} "
            f"AND count(*) {precise} > 0 "
            f"AND max({value} - {half}) <= min({value}) {precise} + {CONFLICT_TOLERANCE} "
            f"AND min({value} + {half}) >= max({value}) {precise} - {CONFLICT_TOLERANCE})")


def decimals(values) -> np.ndarray:
    """The decimals of each value (:data:`EXACT_DECIMALS` for an exact one), as :func:`decimals_sql` gives them."""
    v = np.asarray(values, dtype=float)
    out = np.full(v.shape, EXACT_DECIMALS, dtype=np.int64)
    ok = np.isfinite(v)
    left = ok & ~(np.abs(v - np.round(v, 1)) <= EXACT)
    for d in DECIMALS:
        hit = left & (np.abs(v - np.round(v, d)) <= EXACT)
        out[hit] = d
        left &= ~hit
    return out


def half_unit(dec: np.ndarray) -> np.ndarray:
    """Half a unit of the last decimal of each of ``dec`` (0 for an exact value), as :func:`half_sql` gives it."""
    dec = np.asarray(dec)
    return np.where(dec >= EXACT_DECIMALS, 0.0, 0.5 * 10.0 ** -np.minimum(dec, 30).astype(float))


def agree(a, b) -> np.ndarray:
    """Whether each pair of values differs but agrees to the decimals the less precise one gives."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    da, db = decimals(a), decimals(b)
    low = np.minimum(da, db)
    half = half_unit(low)
    gap = np.abs(a - b)
    # Only an exact value against a rounded one: two rounded values (a card and a table) are compared as they are.
    return (gap > CONFLICT_TOLERANCE) & (np.maximum(da, db) >= EXACT_DECIMALS) & (low < EXACT_DECIMALS) \
        & (gap <= half + CONFLICT_TOLERANCE)


def agreed_cells_sql(every: str) -> str:
    """The query of the cells of ``every`` (rows with ``model_id, dataset_id, num_fewshot, value``) whose values
    differ but agree to the decimals the less precise gives."""
    return (f"SELECT model_id, dataset_id, num_fewshot FROM (SELECT *, {decimals_sql('value')} AS dec FROM {every}) "
            f"GROUP BY ALL HAVING {agree_sql()}")


def agreed_count(con, every: str = "results") -> int:
    """How many cells of the store have values that differ but agree to the decimals the less precise gives."""
    # Only cells whose values differ at all are classified: the decimals are computed on them alone.
    differ = f"(SELECT * FROM {every} JOIN k USING (model_id, dataset_id, num_fewshot))"
    return con.execute(
        f"""WITH k AS (SELECT model_id, dataset_id, num_fewshot FROM {every} GROUP BY ALL
                       HAVING max(value) - min(value) > {CONFLICT_TOLERANCE})
            SELECT count(*) FROM ({agreed_cells_sql(differ)})"""
    ).fetchall()[0][0]


def agreed_note(n: int) -> str:
    """The one sentence that says how many cells agree to the rounding (empty for none)."""
    if not n:
        return ""
    return (f"{n:,} {'cell' if n == 1 else 'cells'} given by two files that agree to the decimals the less precise "
            f"gives: the more precise value used")


def agreed_rows(value: np.ndarray, group: np.ndarray, open_: np.ndarray) -> np.ndarray:
    """Per row: 1 for an exact value and 0 for a rounded one of a cell (``group``) whose values agree to the decimals
    the less precise gives, -1 elsewhere; only the ``open_`` rows' cells (``used_first`` of
    :mod:`harness_ext.store.cell_choice`: the grouped form of :func:`agree_sql`)."""
    import pandas as pd

    dec = decimals(value)
    exact = dec >= EXACT_DECIMALS
    half = half_unit(dec)
    f = pd.DataFrame({"g": group, "v": value, "lo": value - half, "hi": value + half,
                      "ev": np.where(exact, value, np.nan), "open": open_})
    c = f.groupby("g").agg(n=("v", "size"), vmin=("v", "min"), vmax=("v", "max"), lo=("lo", "max"), hi=("hi", "min"),
                           emin=("ev", "min"), emax=("ev", "max"), open=("open", "all"))
    tol = CONFLICT_TOLERANCE
    ok = ((c["n"] > 1) & c["open"] & (c["vmax"] - c["vmin"] > tol) & c["emin"].notna() & (c["emax"] - c["emin"] <= tol)
          & (c["lo"] <= c["emin"] + tol) & (c["hi"] >= c["emax"] - tol))
    # A cell of exact values only is no rounding: it needs a rounded value (one interval wider than a point).
    ok &= f.assign(r=~exact).groupby("g")["r"].any()
    agreed = ok.reindex(group).to_numpy(dtype=bool)
    return np.where(agreed, exact.astype(float), -1.0)
