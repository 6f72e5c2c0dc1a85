"""Item-response tables: per-item scores of many models, as users and papers keep them.

An item-response table holds one score per (model, item): 0/1 correctness, or a graded score. It is
stored in the same ``samples`` table as lm-eval's per-sample logs (:mod:`harness_ext.store.samples`),
one row per (model, task, item, metric), so the item-level estimators and the prompt-level analyses
read every source the same way.

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
        metric: exact_match         # default: acc for 0/1 scores, else score
        benchmark: helm_lite        # default: the folder's name

Item ids that are whole numbers are kept as numbers; any other id is mapped to a stable 63-bit number
(:func:`harness_ext.store.samples._doc_id`). A missing score (empty, NaN) is no row and is counted;
the same (model, task, item) twice with the same score is kept once and counted; with two different
scores the file is refused, naming the first such item.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ..errors import IngestError

MODEL_COLUMNS = ("model", "model_name", "model_id")
ITEM_COLUMNS = ("item", "item_id", "doc_id", "question_id", "sample_id", "instance_id")
SCORE_COLUMNS = ("score", "correct", "is_correct", "value")
OPTIONAL_COLUMNS = ("task", "metric", "benchmark")
LAYOUTS = ("long", "items_x_models", "models_x_items")
SUFFIXES = (".parquet", ".csv", ".tsv")
#: Largest item table read (bytes on disk); a longer one is refused rather than read into memory.
MAX_BYTES = 2 * 1024 ** 3


@dataclass
class ItemTable:
    """What one file holds: ``frame`` has columns model, task, doc_id, metric, value; notes count what was left."""

    path: Path
    benchmark: str
    frame: pd.DataFrame
    sha256: str
    notes: list = field(default_factory=list)


def _pick(header: list, names: tuple) -> Optional[str]:
    low = {str(h).strip().lower(): h for h in header}
    return next((low[n] for n in names if n in low), None)


def header_of(path: Path) -> list:
    """Column names of a Parquet, CSV or TSV file, read without reading its rows."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    import csv

    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        line = fh.readline(65536)
    return next(csv.reader([line], delimiter="\t" if path.suffix == ".tsv" else ","), [])


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


def _read_frame(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",", dtype=str, keep_default_na=False)


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


def _item_ids(values) -> np.ndarray:
    from .samples import _doc_id

    s = pd.Series(values)
    num = pd.to_numeric(s, errors="coerce")
    if num.notna().all() and (num == np.floor(num)).all() and (num.abs() < 2 ** 63).all():
        return num.to_numpy(dtype=np.int64)
    return np.fromiter((_doc_id(v) for v in s.astype(str)), dtype=np.int64, count=len(s))


def _melt(df: pd.DataFrame, layout: str) -> pd.DataFrame:
    first = df.columns[0]
    if layout == "items_x_models":
        long = df.melt(id_vars=[first], var_name="model", value_name="score").rename(columns={first: "item"})
    else:
        long = df.melt(id_vars=[first], var_name="item", value_name="score").rename(columns={first: "model"})
    return long


def read_item_table(path, spec: Optional[dict] = None) -> ItemTable:
    """Read one item-response table (layouts in the module docstring).

    Parameters
    ----------
    path : path-like
    spec : dict, optional
        The sidecar's ``items:`` block (``layout``, ``task``, ``metric``, ``benchmark``).

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
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_BYTES:
        raise IngestError(path, f"{size} bytes is more than the {MAX_BYTES} an item table may have")
    raw = path.read_bytes()
    try:
        df = _read_frame(path)
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
    score = _scores(df[scol].to_numpy(), path)
    keep = ~np.isnan(score)
    if (~keep).any():
        notes.append(f"{int((~keep).sum())} missing scores (no row stored)")
    models = df[mcol].astype(str).str.strip().to_numpy()
    if (models == "").any():
        raise IngestError(path, "a row has an empty model name")
    tcol = _pick(header, ("task",))
    task = df[tcol].astype(str).to_numpy() if tcol else np.full(len(df), str(spec.get("task") or path.stem), dtype=object)
    binary = bool(np.isin(score[keep], (0.0, 1.0)).all())
    metric_default = str(spec.get("metric") or ("acc" if binary else "score"))
    mtcol = _pick(header, ("metric",))
    metric = df[mtcol].astype(str).to_numpy() if mtcol else np.full(len(df), metric_default, dtype=object)
    frame = pd.DataFrame({"model": models, "task": task, "doc_id": _item_ids(df[icol].to_numpy()),
                          "metric": metric, "value": score})[keep]
    frame = _dedupe(frame, path, notes)
    bcol = _pick(header, ("benchmark",))
    bench = spec.get("benchmark") or (str(df[bcol].iloc[0]) if bcol and len(df) else path.parent.name or path.stem)
    sha = hashlib.sha256(raw + f"\0items={sorted(spec.items())}".encode()).hexdigest()
    if frame.empty:
        raise IngestError(path, "no scores in the item table")
    return ItemTable(path, str(bench), frame.reset_index(drop=True), sha, notes)


def _dedupe(frame: pd.DataFrame, path: Path, notes: list) -> pd.DataFrame:
    key = ["model", "task", "doc_id", "metric"]
    dup = frame.duplicated(key, keep=False)
    if not dup.any():
        return frame
    spread = frame[dup].groupby(key)["value"].agg(lambda v: v.max() - v.min())
    clash = spread[spread > 0]
    if len(clash):
        m, t, d, mt = clash.index[0]
        raise IngestError(path, f"model {m!r}, task {t!r}, item {d}: {len(clash)} items have two different scores")
    n = int(frame.duplicated(key).sum())
    notes.append(f"{n} repeated (model, item) rows with the same score kept once")
    return frame.drop_duplicates(key)

