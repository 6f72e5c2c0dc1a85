"""Reading an item-response table file (Parquet, CSV or TSV; long or wide): its scores, item ids and names.

The reader gives an :class:`~harness_ext.store.item_format.ItemTable`. Recognising a table by its header or its
sidecar and reading it needs no store: :mod:`harness_ext.store.item_tables` stores what this reads, and
``reduce``/``predict`` read item tables here without storing them. A change to what it reads from a file raises
:data:`REVISION`.

Layouts (Parquet, CSV or TSV):

* **long**: one row per score, with a model column (``model``, ``model_name``, ``model_id``), an item
  column (``item``, ``item_id``, ``doc_id``, ``question_id``, ``sample_id``, ``instance_id``) and a score
  column (``score``, ``correct``, ``is_correct``, ``value``); optionally ``task`` and ``metric`` columns.
  Recognised from the header alone.
* **wide**: items x models (first column the item ids, one column per model) or models x items (first
  column the models, one column per item). Declared in the file's sidecar (``<file>.meta.yaml``, the
  convention of the leaderboard CSVs)::

      items:
        layout: items_x_models      # or models_x_items, or long
        task: gsm8k                 # default: the file's stem
        metric: exact_match         # default: acc for 0/1 scores (noted), else score
        benchmark: helm_lite        # default: the folder's name
        harness_tasks:              # optional: which lm-eval task each task is (reduce --items runs it)
          gsm8k: gsm8k
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ..errors import IngestError
from .ingest_files import file_hash
from .item_dedupe import dedupe_items as _dedupe
from .item_format import (ITEM_COLUMNS, LAYOUTS, MODEL_COLUMNS, OPTIONAL_COLUMNS, SCORE_COLUMNS, ItemTable,
                          harness_tasks_of, table_sha)
from .item_ids import file_item_ids

SUFFIXES = (".parquet", ".csv", ".tsv")
#: Largest item table read (bytes on disk); a longer one is refused rather than read into memory.
MAX_BYTES = 2 * 1024 ** 3
#: The revision of the item-table reader, stored with every source it reads (``sample_sources.reader``,
#: :mod:`harness_ext.store.item_readers`): raise it when a change makes it store other item scores from the same file.
#: 2: rows whose model is named as a reference ("random", "Human", "Oracle") are left out, noted (the
#: reading option ``keep_reference_rows`` keeps them).
REVISION = "2"


def _pick(header: list, names: tuple) -> Optional[str]:
    low = {str(h).strip().lower(): h for h in header}
    return next((low[n] for n in names if n in low), None)


def header_of(path: Path) -> list:
    """Column names of a Parquet, CSV or TSV file, read without reading its rows."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        schema = pq.read_schema(path)
        # pandas' to_parquet stores a frame's index as columns (``__index_level_0__`` once rows were filtered);
        # reading restores them as the index, so they are no column of the table
        index = {c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
        return [n for n in schema.names if n not in index]
    import csv

    # utf-8-sig: a byte-order mark (spreadsheets' "CSV UTF-8") is no part of the first column's name
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        line = fh.readline(65536)
    return next(csv.reader([line], delimiter=delimiter_of(path)), [])


#: Characters of a CSV's head read to find its delimiter.
_HEAD_CHARS = 65536


def delimiter_of(path: Path) -> str:
    """The delimiter of a CSV or TSV item table: a tab for ``.tsv``; else ``,``, ``;`` or a tab, whichever gives a
    long table's header, or failing that a header of two columns or more (a wide table), the comma first
    (:func:`harness_ext.adapters.csv_dialect.sniff_delimiter`); a comma when that does not settle it."""
    if path.suffix == ".tsv":
        return "\t"
    from harness_ext.adapters.csv_dialect import sniff_delimiter

    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        head = fh.read(_HEAD_CHARS)
    truncated = len(head) >= _HEAD_CHARS
    delim, fitting = sniff_delimiter(head, path.suffix, long_layout, truncated)
    if delim is None and not fitting:
        delim, fitting = sniff_delimiter(head, path.suffix, lambda cells: True, truncated)
        delim = "," if "," in fitting and delim is None else delim
    return delim or ","


def long_layout(header: list) -> bool:
    """Whether a header is a long item-response table: model, item and score columns, nothing but task/metric else."""
    cols = {str(h).strip().lower() for h in header}
    need = [_pick(header, names) for names in (MODEL_COLUMNS, ITEM_COLUMNS, SCORE_COLUMNS)]
    if any(n is None for n in need):
        return False
    return cols <= set(MODEL_COLUMNS + ITEM_COLUMNS + SCORE_COLUMNS + OPTIONAL_COLUMNS)


def is_item_table(path, spec: Optional[dict] = None) -> bool:
    """Whether ``path`` is an item-response table: declared by ``spec``, or long by its header."""
    path = Path(path)
    if path.suffix not in SUFFIXES:
        return False
    if spec is not None:
        return True
    try:
        return long_layout(header_of(path))
    except (OSError, ValueError, ImportError):
        return False
    except Exception:  # pyarrow's ArrowInvalid for a file that is not Parquet: not an item table
        return False


def _check_header(path: Path, layout: str, delim: str) -> None:
    """Refuse a CSV/TSV header that names a column twice, or a wide table whose first row is scores.

    pandas renames a repeated name (the second ``gpt-4`` column becomes model ``gpt-4.1``, another model's name;
    a second ``q7`` item ``q7.1``), so the file is read from its own first row. A wide table saved without a
    header (a bare models x items matrix of 0/1, as ``np.savetxt`` or ``df.to_csv(header=False)`` write it) has
    scores there, every cell a number: its first model's scores would be read as the item ids or model names.

    Raises
    ------
    IngestError
        Naming the repeated names, or saying the first row holds scores.
    """
    from collections import Counter

    from ..report import listed
    from ..safe_input import csv_header

    header = csv_header(path, delim)  # a cell over the csv module's field limit: refused, naming its column
    names = [h.strip() for h in header]
    what = "model name" if layout == "items_x_models" else "item id" if layout == "models_x_items" else "column name"
    if layout != "long" and names and all(_is_number(n) for n in names):
        raise IngestError(path, f"the first row holds numbers ({listed(names, 5)}), not a header: a {layout} table "
                                f"needs a first row naming its id column and each {what}")
    repeated = {n: c for n, c in Counter(names).items() if c > 1}
    if repeated:
        shown = listed([f"{n!r} ({c} columns)" for n, c in repeated.items()], 5)
        raise IngestError(path, f"{len(repeated)} {what}{'s' * (len(repeated) != 1)} in more than one column of the "
                                f"header: {shown}; each column must have its own name")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_frame(path: Path, delim: str) -> pd.DataFrame:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        import pyarrow as pa

        # Text columns read as dictionaries (Parquet stores them so): a model name repeated on 30,000 rows is
        # one string, not 30,000, and never materialised 12.9 million times on the way to a categorical.
        text = [f.name for f in pq.read_schema(path) if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        frame = pq.read_table(path, read_dictionary=text).to_pandas(strings_to_categorical=True)
        pa.default_memory_pool().release_unused()  # the Arrow buffers are gone: give their pages back
        return frame
    return pd.read_csv(path, sep=delim, dtype=str, keep_default_na=False)


def _decimal_comma_scores(values, path: Path, delim: str, notes: list):
    """Scores of a table not separated by commas, with decimal commas (``0,5``) read with a point; the values as
    they are otherwise. Like the leaderboard tables (:mod:`harness_ext.adapters.csv_dialect`): a file that writes
    scores with both marks, or whose commas could be thousands separators, is refused, never guessed."""
    if delim == ",":
        return values
    from harness_ext.adapters.csv_dialect import DIGIT_COMMA, DIGIT_POINT, shown

    if path.suffix != ".tsv":
        notes.append(f"read with {shown(delim)} as the delimiter (the header has no model, item and score columns "
                     "when split at ',')")
    s = pd.Series(values, dtype=object).astype(str).str.strip()
    comma = s.str.contains(DIGIT_COMMA).to_numpy()
    if not comma.any():
        return values
    point = s.str.contains(DIGIT_POINT).to_numpy()
    first = s[comma].iloc[0]
    if point.any():
        raise IngestError(path, f"mixes decimal marks: score {first!r} is written with a decimal comma and "
                                f"{s[point].iloc[0]!r} with a point ({int(comma.sum())} and {int(point.sum())} scores); "
                                "write every score with one mark")
    telling = comma & ~s.str.fullmatch(r"[+-]?[1-9]\d{0,2}(,\d{3})+").to_numpy()
    if not telling.any():
        raise IngestError(path, f"the decimal mark is ambiguous: score {first!r} could be a decimal comma or a "
                                "thousands separator, and no score in the file says which")
    notes.append(f"',' read as the decimal mark ({shown(delim)} is the delimiter): {int(comma.sum())} scores "
                 f"written with a decimal comma ({s[telling].iloc[0]!r} cannot be a thousands separator)")
    return s.str.replace(DIGIT_COMMA, ".", regex=True).to_numpy()


def _scores(values, path: Path) -> np.ndarray:
    """Scores as floats: booleans and true/false text as 0/1, empty or NaN as missing; anything else refused."""
    s = pd.Series(values)
    if s.dtype == bool:
        return s.to_numpy(dtype=float)
    if s.dtype == object or str(s.dtype).startswith("str"):
        t = s.astype(str).str.strip().str.lower()
        t = t.replace({"true": "1", "false": "0", "": "nan", "na": "nan", "n/a": "nan", "none": "nan", "null": "nan"})
        out = pd.to_numeric(t, errors="coerce").to_numpy(dtype=float)
        bad = np.isnan(out) & (t != "nan").to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise IngestError(path, f"score {values[i]!r} is not a number")
    else:
        out = s.to_numpy(dtype=float)
    if np.isinf(out).any():
        raise IngestError(path, "a score is infinite")
    return out


def _labels(values) -> pd.Categorical:
    """Text labels (model, task, metric names) as a categorical: stripped, sorted categories, NaN as ''."""
    codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=False)
    names = pd.Index(uniques).astype(str).str.strip().to_numpy()
    names[pd.isna(uniques)] = ""
    cats, inverse = np.unique(names.astype(str), return_inverse=True)
    return pd.Categorical.from_codes(inverse.reshape(-1)[codes], categories=cats)


def _constant(n: int, label: str) -> pd.Categorical:
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), categories=[label])


def _melt(df: pd.DataFrame, layout: str) -> pd.DataFrame:
    first = df.columns[0]
    if layout == "items_x_models":
        long = df.melt(id_vars=[first], var_name="model", value_name="score").rename(columns={first: "item"})
    else:
        long = df.melt(id_vars=[first], var_name="item", value_name="score").rename(columns={first: "model"})
    return long


def read_item_table(path, spec: Optional[dict] = None, keep_reference_rows: bool = False) -> ItemTable:
    """Read one item-response table (layouts in the module docstring).

    Parameters
    ----------
    path : path-like
    spec : dict, optional
        The sidecar's ``items:`` block (``layout``, ``task``, ``metric``, ``benchmark``).
    keep_reference_rows : bool, default False
        Keep the item scores of a model named as a reference (:func:`~harness_ext.adapters.csv_reference.item_reference_rows`) as a model's.

    Raises
    ------
    IngestError
        Naming the file and the reason; nothing is half-read.
    """
    path = Path(path)
    spec = dict(spec or {})
    layout = spec.get("layout", "long")
    if layout not in LAYOUTS:
        raise IngestError(path, f"items layout {layout!r} is not one of {', '.join(LAYOUTS)}")
    _check_size(path)
    digest = file_hash(path)
    # The delimiter is sniffed once (a read of the file's head) and serves the header check, the read and the scores.
    delim = "," if path.suffix == ".parquet" else delimiter_of(path)
    if path.suffix != ".parquet":
        _check_header(path, layout, delim)
    try:
        df = _read_frame(path, delim)
    except Exception as exc:  # pyarrow/pandas parse errors have no common base class
        raise IngestError(path, f"cannot read as an item table: {type(exc).__name__}: {exc}") from None
    if layout != "long":
        if df.shape[1] < 2:
            raise IngestError(path, f"a {layout} table needs an id column and at least one score column")
        df = _melt(df, layout)
    header = list(df.columns)
    mcol, icol, scol = (_pick(header, n) for n in (MODEL_COLUMNS, ITEM_COLUMNS, SCORE_COLUMNS))
    if None in (mcol, icol, scol):
        raise IngestError(path, "an item table needs model, item and score columns "
                                f"(one of {MODEL_COLUMNS}, {ITEM_COLUMNS}, {SCORE_COLUMNS})")
    notes = []
    score = _scores(_decimal_comma_scores(df[scol].to_numpy(), path, delim, notes), path)
    keep = ~np.isnan(score)
    if (~keep).any():
        notes.append(f"{int((~keep).sum())} missing scores (no row stored)")
    models = _labels(df[mcol])
    if "" in models.categories:
        raise IngestError(path, "a row has an empty model name")
    from harness_ext.adapters.csv_reference import item_reference_rows  # the rules of the CSV tables' reference rows

    keep, refs = item_reference_rows(models, score, keep, notes, keep_reference_rows)
    tcol = _pick(header, ("task",))
    task = _labels(df[tcol]) if tcol else _constant(len(df), str(spec.get("task") or path.stem))
    binary = bool(np.isin(score[keep], (0.0, 1.0)).all())
    metric_default = str(spec.get("metric") or ("acc" if binary else "score"))
    mtcol = _pick(header, ("metric",))
    # 0/1 scores under no named metric are stored as lm-eval's multiple-choice `acc` (what `reduce --items` and
    # `predict` match): kept, but recorded, so `ingest` and `info` say the name is the reader's, not the file's.
    assumed = "acc" if binary and not spec.get("metric") and not mtcol else None
    metric = _labels(df[mtcol]) if mtcol else _constant(len(df), metric_default)
    frame = pd.DataFrame({"model": models, "task": task, "metric": metric, "value": score})
    bcol = _pick(header, ("benchmark",))
    bench = spec.get("benchmark") or (str(df[bcol].iloc[0]) if bcol and len(df) else path.parent.name or path.stem)
    item = df[icol] if keep.all() else df[icol][keep]
    del df, score, models, task, metric  # the frame holds what is kept: the file's own columns can go
    if not keep.all():
        frame = frame[keep]
    doc_ids, ids = file_item_ids(item, frame["task"], path, notes)  # ids of scored rows only
    frame.insert(2, "doc_id", doc_ids)
    del item, doc_ids
    frame = _dedupe(frame, path, notes)
    harness = harness_tasks_of(spec.pop("harness_tasks", None), frame["task"].unique(), path)
    sha = table_sha(digest, spec, harness, refs and keep_reference_rows)
    if frame.empty:
        raise IngestError(path, "no scores in the item table")
    return ItemTable(path, str(bench), frame.reset_index(drop=True), sha, notes, ids, assumed,
                     benchmark_from_path=not spec.get("benchmark") and not bcol, harness_tasks=harness)


def _check_size(path: Path) -> None:
    """Refuse a file that cannot be read or is larger than :data:`MAX_BYTES`."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_BYTES:
        raise IngestError(path, f"{size} bytes is more than the {MAX_BYTES} an item table may have")


def item_spec(src) -> Optional[dict]:
    """The ``items:`` block of a source file's own sidecar (``<file>.meta.yaml``), or None if it has none."""
    own = src.sidecars()
    if not own:
        return None
    from harness_ext.adapters.csv_rules import read_sidecar

    return read_sidecar(own[0]).get("items")


def item_table_spec(src) -> Optional[dict]:
    """For a walked file: its sidecar's ``items:`` block ({} for a long table without one) if it is an
    item-response table, else None. A bad sidecar raises :class:`IngestError` (the file is skipped)."""
    spec = item_spec(src)
    return (spec or {}) if is_item_table(src.path, spec) else None
