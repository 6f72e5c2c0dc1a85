"""lighteval per-sample details (``details_<task>_<timestamp>.parquet``), as an item table
(:class:`harness_ext.store.item_format.ItemTable`).

lighteval's ``--save-details`` writes one Parquet file per task, ``<output_dir>/details/<model>/<timestamp>/
details_<suite>|<task>|<shots>_<timestamp>.parquet`` beside ``<output_dir>/results/<model>/results_<timestamp>.json``;
the Open LLM Leaderboard v1 (2023-24) published the same files per model in its ``details_<org>__<model>`` datasets,
``<timestamp>/details_harness|arc:challenge|25_<timestamp>.parquet`` beside ``results_<timestamp>.json``. One row is
one document of the task. Its columns changed across lighteval versions, and all three layouts are read:

* 2024 to mid-2025 (``DetailsLogger.Detail``): ``example`` (the document's query), ``choices``, ``gold_index``,
  ``predictions``, ..., ``metrics``: ``{metric: score}`` (or that dict's text, which lighteval writes when the rows
  would not convert to Parquet otherwise);
* from mid-2025: ``doc`` (``query``, ``choices``, ...), ``model_response`` and ``metric``: ``{metric: score}``;
* the leaderboard's first files (mid-2023): ``example``, ``choices``, ... and each metric its own column
  (``acc``, ``acc_norm``, ``mc2``, ...).

Naming: the task key in the file name (``<suite>|<task>|<shots>``, ``<task>|<shots>`` without a suite) names the
benchmark and task as the aggregate adapters name the results file's row (:mod:`harness_ext.adapters.lighteval`,
and :mod:`harness_ext.adapters.open_llm_leaderboard` for the leaderboard's ``harness|`` suite), so item rows and
aggregate rows meet; lighteval's late-2025 names, with ``__`` for both ``|`` and ``:``, are read with the run's
results file, whose key reads so. The model is the results file's of the same run (``config_general.model_name``),
else the folder's (``details/<org>/<model>/<timestamp>/``, or the leaderboard dataset's ``details_<org>__<model>``).

Item ids: a hash of the document's query text and its choices (``example``/``doc.query``, ``choices``). lighteval
hashes the query the same way for its own run summary (``hash_examples``): it is the one field every version
writes that names the document independently of the model, of the few-shot draw (which only changes
``full_prompt``), of the batch order the rows were logged in and of ``--max-samples``. The row position is none of
these (lighteval logs the documents in the order its batches finished), and ``doc.id`` exists only from mid-2025.
Two rows with the same query and choices are told apart by their order in the file, with a note. The store numbers
the ids 0, 1, ... in order of first appearance and keeps each task's map, so the next model's file of the task
gives the same document the same number (:mod:`harness_ext.store.item_ids`).

A task's mean over its items is the results file's score for metrics lighteval averages over documents (``acc``,
``acc_norm``, ``em``, ``mc2``, ...); corpus-level metrics (BLEU, perplexities, F1 over a corpus) are stored per item
as lighteval logged them, and their mean is not lighteval's corpus score.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

from harness_ext.errors import IngestError

from .lighteval_files import DETAILS_RE, KEY_RE
from .lighteval_files import key_of as _key_of
from .lighteval_files import refuse_lfs_pointer as _refuse_lfs_pointer

#: Columns of the early leaderboard layout that are numbers but no metric.
NOT_METRICS = frozenset({"num_effective_few_shots", "num_asked_few_shots", "truncated", "padded", "gold", "gold_index",
                         "label", "id", "doc_id", "index", "__index_level_0__"})
#: Largest results file read to name the model (a real one is a few hundred KB).
MAX_RESULTS_BYTES = 64 * 1024 * 1024
#: Longest ``metrics`` text parsed (lighteval's text of a dict of a few scores).
MAX_METRICS_TEXT = 100_000

#: The revision of this item reader, stored with every item source it reads (``sample_sources.reader``, see
#: :mod:`harness_ext.store.item_readers`): raise it when a change makes it store other item scores from the same
#: file, so ``ingest`` counts the sources an older reading left and ``ingest --reread`` reads them again.
REVISION = "1"


def is_details_file(path) -> bool:
    """Whether ``path`` is named as lighteval names its details (``details_<task>_<timestamp>.parquet``)."""
    return DETAILS_RE.match(Path(path).name) is not None


#: Why a details dataset's ``results_<timestamp>.parquet`` is passed over (:func:`details_kind`).
COPY_REASON = "lighteval's Parquet copy of the results_<timestamp>.json beside it, which is read instead"


def details_kind(path):
    """``"details"`` for a details file (:func:`is_details_file`), ``"results_copy"`` for the Parquet copy of a
    results file that lighteval uploads beside it to a details dataset (``results_<timestamp>.parquet`` next to
    ``results_<timestamp>.json``: the JSON file is read, the copy is not), else None."""
    path = Path(path)
    if DETAILS_RE.match(path.name):
        return "details"
    m = re.match(r"^results_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d:.\-]+)\.parquet$", path.name)
    return "results_copy" if m and (path.parent / f"results_{m.group('stamp')}.json").is_file() else None


def task_of(path, results=None) -> tuple:
    """``(benchmark, task, key)`` named by a details file's name, as the aggregate adapters name the results row.

    Parameters
    ----------
    path : path-like
    results : dict, optional
        The run's results file, whose keys read a late-2025 name (``__`` for ``|`` and ``:``).

    Raises
    ------
    IngestError
        When the name holds no ``[<suite>|]<task>|<shots>`` key (a ``__`` name without the run's results file
        cannot be read back unambiguously).
    """
    from harness_ext.adapters.lighteval import _dataset, dataset_name
    from harness_ext.adapters.open_llm_leaderboard import BENCHMARK
    from harness_ext.benchmarks import MMLU_BENCHMARK, mmlu_subject

    path = Path(path)
    key = _key_of(path, results)
    k = KEY_RE.match(key)
    if k is None:
        raise IngestError(path, f"the file name's task {key!r} is not of the form [<suite>|]<task>|<shots>, so its "
                                "benchmark and task cannot be named (lighteval's names with __ for | and : are read "
                                "with the run's results_<timestamp>.json beside them, in results/<model>/ or the "
                                "folder above)")
    if k.group("suite") == "harness":  # the v1 leaderboard's suite: named as its results rows are
        subject = mmlu_subject(key)
        if subject:
            return MMLU_BENCHMARK, subject, key
        return BENCHMARK, dataset_name(path, key, k.group("task")), key
    benchmark, dataset, _ = _dataset(k.group("suite"), k.group("task"), path, key)
    return benchmark, dataset, key


def results_of(path):
    """The run's results file a details file belongs to, parsed, or None without one: ``results_<timestamp>.json``
    in the folder above (the leaderboard's datasets) or in ``results/<model>/`` beside ``details/<model>/``.

    Raises
    ------
    IngestError
        For a results file that is not JSON or too large.
    """
    from harness_ext.safe_input import read_bytes

    path = Path(path)
    stamp = DETAILS_RE.match(path.name).group("stamp")
    run_dir = path.parent  # <timestamp>/ in both layouts
    candidates = [run_dir.parent / f"results_{stamp}.json"]  # the leaderboard dataset: results at its root
    parts = run_dir.parts
    if "details" in parts[:-1]:  # lighteval: <out>/details/<model...>/<timestamp>/ and <out>/results/<model...>/
        i = len(parts) - 1 - parts[::-1].index("details")
        if i < len(parts) - 1:
            candidates.append(Path(*parts[:i], "results", *parts[i + 1:-1], f"results_{stamp}.json"))
    for c in candidates:
        if c.is_file():
            try:
                doc = json.loads(read_bytes(c, "lighteval results file", MAX_RESULTS_BYTES, error=IngestError))
            except (ValueError, RecursionError):
                raise IngestError(path, f"the run's results file {c.name} is not JSON") from None
            return doc if isinstance(doc, dict) else None
    return None


def model_of(path, results=None) -> str:
    """The model of a details file: its run's results file's (``results``, :func:`results_of`), else its folders'.

    Raises
    ------
    IngestError
        When neither names one.
    """
    from harness_ext.adapters.lighteval import _model
    from harness_ext.adapters.open_llm_leaderboard import _config

    path = Path(path)
    if isinstance(results, dict):
        name = _model(results) or ((_config(results) or {}).get("model_name") or "").strip()
        if name:
            return name
    parts = path.parent.parts
    if "details" in parts[:-1]:
        i = len(parts) - 1 - parts[::-1].index("details")
        if i + 1 < len(parts) - 1:
            return "/".join(parts[i + 1:-1])
    root = path.parent.parent.name
    if root.startswith("details_") and len(root) > len("details_"):
        return root[len("details_"):].replace("__", "/", 1)
    raise IngestError(path, "no model: no results_<timestamp>.json of the run beside it, and not in lighteval's "
                            "details/<model>/<timestamp>/ folders or a leaderboard details_<org>__<model> folder")


def _plain(text: str, what: str, path: Path) -> str:
    """``text`` if it is valid Unicode, else the file's refusal: a lone surrogate (``\\ud800`` in the metrics' text, in
    the results file's model name, or a folder name not in UTF-8) cannot be stored."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise IngestError(path, f"{what} {text[:40]!r} is not valid Unicode (a lone surrogate)") from None
    return text


#: Bare names in the text of a metrics dict: Python's ``str()`` of NaN and infinity, and JSON's literals.
_NAMES = {"nan": float("nan"), "inf": float("inf"), "null": None, "true": True, "false": False}


def _literal(text: str):
    """The value of a metrics dict's text as lighteval writes it (``str(dict)``), read as data only: Python literals,
    ``nan``/``inf`` (``str`` of a float), JSON's ``null``/``true``/``false``, and NumPy scalars as NumPy 2 prints
    them (``np.float64(0.5)``). Nothing is evaluated (:func:`ast.literal_eval` on the rewritten tree).

    Raises
    ------
    ValueError, SyntaxError
        For anything else (a call, a name, an attribute).
    """
    import ast

    class Data(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in _NAMES:
                return ast.copy_location(ast.Constant(_NAMES[node.id]), node)
            raise ValueError(f"name {node.id!r}")

        def visit_Call(self, node):  # np.float64(0.5), numpy.int64(1): the scalar inside
            f = node.func
            if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("np", "numpy")
                    and re.fullmatch(r"(float|int|uint|bool_|bool)\d*", f.attr) and len(node.args) == 1
                    and not node.keywords):
                return self.visit(node.args[0])
            raise ValueError("a call")

    return ast.literal_eval(Data().visit(ast.parse(text.strip(), mode="eval")))


def _metrics_of(value, where: str, path: Path) -> dict:
    """A row's ``{metric: score}`` (``metrics`` or ``metric``), from the dict or from lighteval's text of it."""
    if isinstance(value, str):
        if len(value) > MAX_METRICS_TEXT:
            raise IngestError(path, f"{where}: its metrics are {len(value):,} characters of text, not a few scores")
        try:
            value = _literal(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise IngestError(path, f"{where}: its metrics {value[:60]!r} are not a dict of scores") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise IngestError(path, f"{where}: its metrics are {type(value).__name__}, expected a dict of scores")
    return value


def _score(v):
    """``(score, None)`` or ``(None, why)``: a number (a boolean as 0/1) that is finite."""
    if isinstance(v, bool):
        return float(v), None
    if isinstance(v, (int, float)):
        try:
            f = float(v)
        except OverflowError:  # a whole number past the float range, from the metrics' text
            return None, "scores too large for a float"
        return (f, None) if math.isfinite(f) else (None, "scores that are NaN or infinite")
    if v is None:
        return None, "null scores"
    return None, f"scores that are {type(v).__name__}, not numbers"


def _columns(path: Path) -> tuple:
    """``(layout, columns)``: the file's layout (``doc``, ``metrics`` or ``flat``) and the rows' needed columns as
    Python lists (the token and logit columns are not read)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except Exception as exc:  # pyarrow's ArrowInvalid and OSError: not a Parquet file
        raise IngestError(path, f"not a Parquet file: {type(exc).__name__}: {exc}") from None
    names = set(schema.names)
    if {"doc", "metric"} <= names:
        layout, want = "doc", ["doc", "metric"]
    elif "metrics" in names:
        layout, want = "metrics", [c for c in ("example", "choices", "metrics") if c in names]
    else:
        numeric = [f.name for f in schema if f.name not in NOT_METRICS
                   and (pa.types.is_floating(f.type) or pa.types.is_integer(f.type) or pa.types.is_boolean(f.type))]
        if not numeric:
            raise IngestError(path, "no scores: neither a metrics column (lighteval's metrics or metric) nor "
                                    "metric columns (acc, acc_norm, ...)")
        layout, want = "flat", [c for c in ("example", "choices") if c in names] + sorted(numeric)
    try:
        table = pq.read_table(path, columns=want)
    except Exception as exc:
        raise IngestError(path, f"cannot read: {type(exc).__name__}: {exc}") from None
    return layout, {c: table.column(c).to_pylist() for c in want}


def _rows(path: Path, left: dict) -> list:
    """``(query, choices, {metric: score})`` of each row; what is left out is counted in ``left`` (why -> count)."""
    layout, cols = _columns(path)
    n = len(next(iter(cols.values())))
    out = []
    for i in range(n):
        where = f"row {i}"
        if layout == "doc":
            doc = cols["doc"][i] if isinstance(cols["doc"][i], dict) else {}
            query, choices = doc.get("query"), doc.get("choices")
            metrics = _metrics_of(cols["metric"][i], where, path)
        else:
            query = cols["example"][i] if "example" in cols else None
            choices = cols["choices"][i] if "choices" in cols else None
            metrics = (_metrics_of(cols["metrics"][i], where, path) if layout == "metrics"
                       else {c: cols[c][i] for c in cols if c not in ("example", "choices")})
        if not isinstance(query, str) or not query:
            raise IngestError(path, f"{where} has no query text (example, or doc.query) to name its document by")
        scores = {}
        for metric, v in metrics.items():
            s, why = _score(v)
            if why is None:
                scores[_plain(str(metric), f"{where}: the metric name", path)] = s
            else:
                left[why] = left.get(why, 0) + 1
        out.append((query, choices, scores))
    return out


def _item_ids(rows: list, notes: list) -> list:
    """Each row's item id: the hash of its query and choices (``.2``, ``.3``, ... on repeats, counted in ``notes``)."""
    ids, seen = [], {}
    for query, choices, _ in rows:
        text = json.dumps([query, list(choices) if isinstance(choices, (list, tuple)) else choices],
                          ensure_ascii=False, default=str)
        h = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        seen[h] = seen.get(h, 0) + 1
        # Ending in a letter, never read as <prefix><number> (item_ids): numbered by the store's map in every file.
        ids.append(f"{h}q" if seen[h] == 1 else f"{h}.{seen[h]}q")
    repeats = sum(c - 1 for c in seen.values())
    if repeats:
        notes.append(f"{repeats} rows repeat another row's query and choices: told apart by their order in the file")
    return ids


def read_details(path, store_ids: bool = True):
    """The per-document scores of one lighteval details file.

    Parameters
    ----------
    path : path-like
    store_ids : bool
        Number the item ids as an item table's, for the store's id map (ingest); False: by
        :func:`harness_ext.store.samples.doc_id` alone, as ``predict`` matches a manifest's ids.

    Returns
    -------
    harness_ext.store.item_format.ItemTable
        Columns model, task, doc_id, metric, value: one row per document and metric; ``notes`` count what was left
        out (scores that are null, NaN or not numbers).

    Raises
    ------
    IngestError
        Naming the file and the reason: a name without a task key, a Git LFS pointer, no model, not Parquet, a row
        without its query,
        metrics that are not a dict of scores, or no score at all.
    """
    import numpy as np
    import pandas as pd

    from harness_ext.store.ingest_files import file_hash
    from harness_ext.store.item_format import ItemTable
    from harness_ext.store.item_ids import file_item_ids
    from harness_ext.store.samples import doc_id

    path = Path(path)
    _refuse_lfs_pointer(path)  # the details datasets keep their Parquet in LFS: a clone without it holds pointers
    results = results_of(path)
    benchmark, task, _ = task_of(path, results)
    model = _plain(model_of(path, results), "the model name", path)
    left, notes = {}, []
    rows = _rows(path, left)
    ids = _item_ids(rows, notes)
    long = [(i, m, v) for i, (_, _, scores) in zip(ids, rows) for m, v in scores.items()]
    notes += [f"{n} {why} left out" for why, n in sorted(left.items())]
    if not long:
        raise IngestError(path, "no per-document scores" + (f": {'; '.join(notes)}" if notes else ""))
    frame = pd.DataFrame(long, columns=["id", "metric", "value"])
    tasks = pd.Series(pd.Categorical([task] * len(frame)))
    if store_ids:
        # Numbered 0, 1, ... by first appearance, and kept in the store's map: said here, as what the ids are.
        numbers, id_map = file_item_ids(frame["id"].to_numpy(), tasks, path, [])
        notes.append(f"{frame['id'].nunique():,} documents named by a hash of their query and choices, numbered 0, 1, "
                     "... by the store (a document of the task already stored keeps its number)")
    else:
        numbers = np.fromiter((doc_id(i) for i in frame["id"]), dtype=np.int64, count=len(frame))
        id_map = None
    out = pd.DataFrame({"model": model, "task": tasks, "doc_id": numbers, "metric": frame["metric"],
                        "value": frame["value"].astype(float)})
    h = file_hash(path)
    h.update(f"\0lighteval-details\0model={model}".encode())  # the model comes from beside the file
    return ItemTable(path, benchmark, out, h.hexdigest(), notes, id_map)
