"""Reading per-sample logs: lm-eval's ``samples_<task>_<date>.jsonl`` and Every Eval Ever's instance files.

lm-evaluation-harness v0.4 run with ``--log_samples`` writes, next to
``results_<date>.json``, one ``samples_<task>_<date>.jsonl`` per task: one JSON
object per (document, filter)::

    {"doc_id": 0, "doc": {...}, "target": "2", "arguments": {"gen_args_0": {"arg_0": "...", "arg_1": " A"}, ...},
     "resps": [[["-1.93", "False"]], ...], "filtered_resps": [["-1.93", "False"], ...], "filter": "none",
     "metrics": ["acc", "acc_norm"], "doc_hash": "...", "prompt_hash": "...", "target_hash": "...",
     "acc": 1.0, "acc_norm": 0.0}

(``lm_eval/evaluator.py`` builds the object; ``EvaluationTracker.save_results_samples``
writes it. Early v0.4 releases wrote ``arguments`` as a list; either is fine
because only ``doc_id``, ``filter``, ``metrics``, the metric values and the two
hashes are read.)

The readers here turn one file into ``(model, task, frame, sha256)`` and store nothing;
:mod:`harness_ext.store.samples` stores their frames and re-exports every public name.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import os
import re
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ..benchmarks import eee_benchmark
from ..errors import IngestError
from ..safe_input import read_bytes
from ..types import _check_text, check_storable, eee_model_name
from .eee_links import task_apart_notes
from .ingest_files import _max_file_bytes
from .ingest_read import lfs_pointer_reason, read_inflated

#: ``samples_<task>_<date>.jsonl`` as written by lm-eval's EvaluationTracker (date like 2024-05-01T12-00-00.123456).
SAMPLES_FILE_RE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9\-:.]+)\.jsonl(?:\.gz)?$")
_RESULTS_RE = re.compile(r"^results_(?P<date>\d{4}-\d{2}-\d{2}T[0-9\-:.]+)\.json$")
#: Keys of a sample object that are bookkeeping, not metrics (used when "metrics" is absent).
_NOT_METRICS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                          "doc_hash", "prompt_hash", "target_hash", "task", "task_name"})


#: Every Eval Ever instance-level records (``<evaluation>_samples.jsonl``, instance_level_eval.schema.json).
EEE_SAMPLES_RE = re.compile(r"^(?!samples_).+_samples\.jsonl(?:\.gz)?$")


def is_samples_file(path) -> bool:
    """Whether ``path`` is named like a per-sample log: lm-eval's or Every Eval Ever's instance-level records, or
    lm-eval 0.4.0-0.4.2's ``<model_args>_<task>.jsonl`` beside their results file
    (:func:`harness_ext.store.early_sample_logs.early_samples_task`)."""
    from .early_sample_logs import early_samples_task

    name = os.path.basename(os.fspath(path))
    return bool(SAMPLES_FILE_RE.match(name) or EEE_SAMPLES_RE.match(name) or early_samples_task(path))


#: Prefixes of a text sample id that only number the item (``id147``, HELM's instance ids): read as the number.
#: Any other prefix (``dev1``, ``test1``) names a part of the data, so the whole text is hashed: the same for every
#: file, and ``dev1`` and ``test1`` stay two items.
NUMBERING_PREFIXES = frozenset({"", "id", "id_", "id-", "doc", "doc_", "doc-", "sample", "sample_", "sample-",
                                "item", "item_", "item-", "instance", "instance_", "instance-"})


def doc_id(sample_id, path=None, lineno: int = 0) -> int:
    """The integer item id the store keeps for a sample id read from a results file.

    Every Eval Ever's ``sample_id`` and HELM's instance ids are text; the store's ``doc_id`` is a 64-bit
    integer. Every reader of such ids (the adapters, the reduced folder's item lists, ``predict``) goes through
    this one function, so that one question gets one id whichever file it came from.

    Parameters
    ----------
    sample_id : int or str
        An integer is kept as it is; a string made of a numbering prefix (:data:`NUMBERING_PREFIXES`) and at
        most 18 digits is that number (``"id147"`` -> 147); any other string (``"dev1"`` among them) is a
        stable hash of its text, in ``[0, 2**63)``.
    path : str or Path, optional
        The file the id was read from, named in the error.
    lineno : int, optional
        The line of ``path`` the id was read from, named in the error.

    Returns
    -------
    int
        The id, within the 64-bit range of the store's ``doc_id`` column.

    Raises
    ------
    IngestError
        For an integer the store cannot keep (outside the 64-bit range of ``doc_id``).
    """
    if isinstance(sample_id, int) and not isinstance(sample_id, bool):
        if not -2**63 <= sample_id < 2**63:
            raise IngestError(path, f"line {lineno}: sample_id {_int_text(sample_id)} is outside the 64-bit integer "
                                    "range")
        return sample_id
    text = str(sample_id)
    m = re.fullmatch(r"([A-Za-z_-]*)(\d{1,18})", text)
    if m and m.group(1).lower() in NUMBERING_PREFIXES:
        return int(m.group(2))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") & (2**63 - 1)


def _int_text(v: int) -> str:
    """An integer for a message: itself, or its digit count when it is long."""
    if -10**30 <= v <= 10**30:
        return str(v)
    try:
        return f"of {len(str(abs(v))):,} digits"
    except ValueError:  # beyond Python's integer-to-text limit
        return "of over 4,300 digits"


def _finite(path, lineno: int, name: str, v) -> float:
    """A score as a float; IngestError for one too large for a float or not finite (NaN, Infinity)."""
    try:
        f = float(v)
    except OverflowError:
        raise IngestError(path, f"line {lineno}: {name} {_int_text(v)} is too large for a float") from None
    if not math.isfinite(f):
        raise IngestError(path, f"line {lineno}: {name} {f!r} is not finite")
    return f


def _check_stored_text(path, text: Optional[str], names: dict, strings: dict) -> None:
    """Refuse a samples file whose stored strings the store cannot keep.

    ``names`` (``{what: str or list of str}``: model, task, metrics) get the results' name check
    (:func:`harness_ext.types._check_text`: UTF-8, no control character or line break); ``strings`` (``{what:
    list}``: the hashes) the UTF-8 check of :func:`harness_ext.types.check_storable`, which a text without a
    ``\\ud`` escape passes (a lone surrogate comes only from one); without ``text`` (samples in memory) every string
    is checked.
    """
    for what, v in names.items():
        for name in ([v] if isinstance(v, str) else v):
            _check_text(path, what, name)
    if text is None or "\\ud" in text or "\\uD" in text:
        for what, v in strings.items():
            check_storable(path, what, v)


def eee_record_names(path, doc: Optional[dict] = None) -> Optional[tuple]:
    """``(plain id, stored name)`` of the model the aggregate record beside the instance file ``path`` names
    (``<id>.json`` beside ``<id>_samples.jsonl``; :func:`harness_ext.types.eee_model_name`: ``org/model (bfloat16)``
    when it names the model's precision, a truncated id at the record's variant), or None: no record, or an
    unreadable one (the record, when ingested, reports its own problem). ``doc``: the record, already read."""
    doc = _eee_record(path) if doc is None else doc
    if doc is None:
        return None
    info, results = doc.get("model_info"), doc.get("evaluation_results")
    # The record's results name a truncated id's record variant, as the adapter names it.
    return eee_model_name(info, results if isinstance(results, list) else [])


def _eee_record(path) -> Optional[dict]:
    """The aggregate record beside the instance file ``path`` (``<id>.json``), or None: none, or unreadable."""
    path = Path(path)
    sibling = path.with_name(re.sub(r"_samples\.jsonl(?:\.gz)?$", ".json", path.name))
    if sibling == path or not sibling.is_file():
        return None
    try:
        doc = json.loads(read_bytes(sibling, "Every Eval Ever record", _max_file_bytes(), IngestError))
    except (IngestError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _eee_variant(path: Path, record: Optional[dict], model: str) -> str:
    """``model`` as its aggregate ``record`` names it (:func:`eee_record_names`), as the adapter stores its results, so
    the items meet them; the lines' name when the record is missing, unreadable or of another model."""
    names = eee_record_names(path, record)
    return names[1] if names is not None and names[0] == model else model


def read_eee_samples(path) -> tuple:
    """Parse an Every Eval Ever instance-level file into ``(model, task, frame, sha256)``.

    One JSON object per sample with ``model_id``, ``evaluation_name``, ``sample_id``,
    ``sample_hash`` and ``evaluation.score`` (schema 0.2.x); the score is stored as metric
    ``score`` and ``evaluation.is_correct`` (when given) as ``acc`` (0/1). The task is the
    ``evaluation_name``; every line must name the same model and evaluation. The model is named at its precision
    when the aggregate record beside the file names one (:func:`_eee_variant`).

    Raises
    ------
    IngestError
        On anything that is not a well-formed instance-level file; nothing is half-read.
    """
    path = Path(path)
    try:
        raw = _open_text(path)
        text = raw.decode("utf-8")
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    except (EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise IngestError(path, f"cannot read: {exc}") from None
    models, tasks, seen = set(), set(), {}
    doc_ids, metrics, values, hashes = [], [], [], []
    for lineno, s in _json_lines(path, text):
        if not isinstance(s, dict) or "sample_id" not in s or not isinstance(s.get("evaluation"), dict):
            raise IngestError(path, f"line {lineno} is not an Every Eval Ever instance record "
                                    "(sample_id and evaluation are required)")
        models.add(str(s.get("model_id")))
        tasks.add(str(s.get("evaluation_name")))
        ev = s["evaluation"]
        did = doc_id(s["sample_id"], path, lineno)
        # Two ids read as one item ("id1" and "1") would merge two items' scores: refused, not merged.
        first = seen.setdefault(did, s["sample_id"])
        if first != s["sample_id"]:
            raise IngestError(path, f"line {lineno}: sample_id {str(s['sample_id'])[:40]!r} and "
                                    f"{str(first)[:40]!r} both read as item {did}")
        for name, v in (("score", ev.get("score")), ("acc", ev.get("is_correct"))):
            if isinstance(v, bool):
                v = float(v)
            if isinstance(v, (int, float)):
                v = _finite(path, lineno, name, v)
                doc_ids.append(did)
                metrics.append(name)
                values.append(v)
                hashes.append(s.get("sample_hash") if isinstance(s.get("sample_hash"), str) else None)
    if not values:
        raise IngestError(path, "no per-sample scores found")
    if len(models) != 1 or len(tasks) != 1:
        raise IngestError(path, f"lines name {len(models)} models and {len(tasks)} evaluations; expected one of each")
    model, task = models.pop(), tasks.pop()
    _check_stored_text(path, text, {"model_id": model, "evaluation_name": task}, {"sample_hash": hashes})
    record = _eee_record(path)  # read once: the model's name, the notes and the benchmark come from it
    model = _eee_variant(path, record, model)
    sha = hashlib.sha256(raw + f"\0model={model}\0task={task}".encode()).hexdigest()
    frame = pd.DataFrame({"doc_id": np.asarray(doc_ids, dtype=np.int64), "metric": metrics, "value": values,
                          "doc_hash": hashes, "prompt_hash": [None] * len(values)})
    frame.attrs["notes"] = task_apart_notes(record, task)  # the record's score under another name: said
    frame.attrs["benchmark"] = eee_benchmark(record or {})  # the items go under it (lm-eval's logs carry none)
    return model, task, frame, sha


def model_for_samples(path, model: Optional[str] = None) -> str:
    """The model a samples file belongs to.

    ``model`` when given; otherwise the model named by the ``results_*.json`` in
    the same folder (the one with the same date stamp if there are several),
    read with the lm-eval adapter's naming (:func:`harness_ext.adapters.lm_eval.model_name`).

    Raises
    ------
    IngestError
        If no model is given and none (or more than one) can be found.
    """
    if model:
        return str(model)
    from harness_ext.adapters.lm_eval import model_name

    path = Path(path)
    m = SAMPLES_FILE_RE.match(path.name)
    date = m.group("date") if m else None
    candidates = sorted(path.parent.glob("results_*.json"))
    same_date = [c for c in candidates if (r := _RESULTS_RE.match(c.name)) and r.group("date") == date]
    names = set()
    for c in same_date or candidates:
        try:
            doc = json.loads(c.read_text(encoding="utf-8"))
            cfg = doc.get("config") if isinstance(doc, dict) else None
            if isinstance(cfg, dict):
                names.add(model_name(cfg, c, fallback=doc.get("model_name"))[0])
        except (OSError, ValueError, IngestError, AttributeError, TypeError, RecursionError):
            continue
    if len(names) == 1:
        return names.pop()
    if not names:
        raise IngestError(path, "no results_*.json beside it names the model: lm-eval writes one with its samples "
                                "files; keep them in one folder (in Python, pass model=)")
    raise IngestError(path, f"the results files beside it name several models ({', '.join(sorted(names))}): keep each "
                            "run in its own folder, as lm-eval writes it (in Python, pass model=)")


def _json_lines(path, text: str):
    """``(line number, parsed object)`` of each non-blank line of a JSONL text; IngestError names a bad line."""
    for lineno, line in enumerate(io.StringIO(text), start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError as exc:  # also an integer beyond Python's 4,300-digit conversion limit
            raise IngestError(path, f"line {lineno} is not JSON: {exc}") from None
        except RecursionError:
            raise IngestError(path, f"line {lineno} is nested too deeply to read") from None
        yield lineno, doc


def _open_text(path: Path):
    """The bytes of a samples file; a ``.gz`` one inflated, within the limits of
    :func:`harness_ext.store.ingest_read.read_inflated` (the size limit of a file read whole).

    Read through :func:`harness_ext.safe_input.read_bytes`: ``predict`` reads the logs its walk found without
    ``ingest``'s checks, and a FIFO named as a log would otherwise block it for good.
    """
    data = read_bytes(path, "samples file", _max_file_bytes(), IngestError)
    if path.suffix != ".gz":
        lfs = lfs_pointer_reason(data[:512])
        if lfs:  # said before the model is looked for: the results file beside it is often a pointer too
            raise IngestError(path, lfs)
        return data
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
        return read_inflated(fh, path, "the decompressed file", len(data), _max_file_bytes())


def read_samples(path, model: Optional[str] = None, task: Optional[str] = None) -> tuple:
    """Parse one samples file into ``(model, task, frame, sha256)``.

    ``frame`` has columns ``doc_id, metric, value, doc_hash, prompt_hash``.

    Raises
    ------
    IngestError
        On anything that is not a well-formed per-sample log; nothing is half-read.
    """
    path = Path(path)
    if task is None:
        m = SAMPLES_FILE_RE.match(path.name)
        if not m:
            from .early_sample_logs import early_samples_task

            if found := early_samples_task(path):  # lm-eval 0.4.0-0.4.2's <model_args>_<task>.jsonl
                return _read_early(path, found, model)
            raise IngestError(path, "not named samples_<task>_<date>.jsonl; pass task=")
        task = m.group("task")
    raw = _read_raw(path)
    model = model_for_samples(path, model)
    sha, text = _sha_and_text(path, raw, model, task)
    left_out: list = []
    corpus: list = []
    frame = sample_frame(path, _json_lines(path, text), text, {"model": model, "task": task}, left_out, corpus)
    frame.attrs["notes"] = frame_notes(path, frame, left_out, corpus)  # read by ingest_samples into the report
    return model, task, frame, sha


def _read_raw(path) -> bytes:
    """A samples file's bytes (gunzipped for ``.gz``); IngestError naming why it cannot be read."""
    try:
        return _open_text(path)
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    except (EOFError, gzip.BadGzipFile) as exc:
        raise IngestError(path, f"not a valid gzip file: {exc}") from None


def _sha_and_text(path, raw: bytes, model: str, task: str) -> tuple:
    """``(content hash, text)``: the hash keys the file's bytes with the model and task it is stored under."""
    sha = hashlib.sha256(raw + f"\0model={model}\0task={task}".encode()).hexdigest()
    try:
        return sha, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(path, f"not UTF-8: {exc}") from None


def _read_early(path: Path, found: tuple, model: Optional[str]) -> tuple:
    """:func:`read_samples` of lm-eval 0.4.0-0.4.2's ``<model_args>_<task>.jsonl`` (``found``:
    :func:`harness_ext.store.early_sample_logs.early_samples_task`'s answer): a JSON array, its filters by order."""
    from .early_sample_logs import early_check, early_model, early_records

    raw = _read_raw(path)
    model, task = early_model(path, found, model), found[0]
    sha, text = _sha_and_text(path, raw, model, task)
    records, how = early_records(path, text, found)
    left_out: list = []
    corpus: list = []
    frame = sample_frame(path, records, text, {"model": model, "task": task}, left_out, corpus, where="sample")
    notes = frame_notes(path, frame, left_out, corpus)
    check = early_check(frame, found)
    frame.attrs["notes"] = [how + (f"; {check}" if check else "")] + notes
    return model, task, frame, sha


def frame_notes(path, frame: pd.DataFrame, left_out: list, corpus: list) -> list:
    """The notes of a samples file's frame: the values :func:`sample_frame` ``left_out`` and the metrics it found
    logged as a ``corpus`` metric's inputs; IngestError when the frame is empty."""
    # F1, BLEU, MCC and perplexity are computed over the whole set: lm-eval logs each sample's inputs to them
    # (a [reference, prediction] or [loglikelihood, length] pair), which is no score of that sample.
    pairs = ", ".join(dict.fromkeys(corpus))
    why = (f"{pairs} logged per sample as the inputs of a metric computed over the whole set (F1, BLEU, "
           f"perplexity, ...), not as a score of each sample") if corpus else ""
    if frame.empty:
        raise IngestError(path, f"no per-sample scores: {why}; the task's score is in its results file" if why
                          else "no per-sample metric values found")
    notes = [f"{len(left_out)} per-sample value{'s' * (len(left_out) != 1)} written as null, not a number or not "
             f"finite (NaN, Infinity) left out: {', '.join(dict.fromkeys(left_out))}"] if left_out else []
    if why:
        notes.append(f"not stored: {why}")
    return notes


def sample_frame(path, records, text: Optional[str] = None, names: Optional[dict] = None,
                 left_out: Optional[list] = None, corpus: Optional[list] = None, where: str = "line") -> pd.DataFrame:
    """The per-item scores of lm-eval's logged samples: columns ``doc_id, metric, value, doc_hash, prompt_hash``.

    ``records``: ``(line number, sample)`` pairs, from a ``samples_*.jsonl`` file (its ``text``) or from
    lm-eval's own results in memory (``path`` names them in errors). A filtered metric is named
    ``metric,filter``; values that are not numbers (perplexity's pairs) are not per-item scores
    and are skipped; a listed metric whose value is null, a string, NaN or Infinity is appended to ``left_out`` (when given), to
    be reported, and a metric logged as anything else (a list: a corpus-level metric's inputs) to ``corpus``.
    The strings are checked (with ``names``, ``{what: name}``) before a frame holds them. ``where``: what a
    record's number counts in errors (``line``; ``sample`` for a JSON array's).
    """
    doc_ids, metrics, values, doc_hashes, prompt_hashes = _sample_columns(path, records, left_out, corpus, where)
    _check_stored_text(path, text, {**(names or {}), "metric": list(dict.fromkeys(metrics))},
                       {"doc_hash": doc_hashes, "prompt_hash": prompt_hashes})
    return pd.DataFrame({"doc_id": np.asarray(doc_ids, dtype=np.int64), "metric": metrics, "value": values,
                         "doc_hash": doc_hashes, "prompt_hash": prompt_hashes})


def _sample_columns(path, records, left_out: Optional[list] = None, corpus: Optional[list] = None,
                    where: str = "line") -> tuple:
    """``(doc ids, metrics, values, doc hashes, prompt hashes)``, one entry per (sample, metric) of :func:`sample_frame`."""
    doc_ids, metrics, values, doc_hashes, prompt_hashes = [], [], [], [], []
    for lineno, s in records:
        if not isinstance(s, dict):
            raise IngestError(path, f"{where} {lineno} is {type(s).__name__}, expected an object")
        did = s.get("doc_id")  # lm-eval's own integer (not :func:`doc_id`'s reading of a text id)
        if isinstance(did, bool) or not isinstance(did, int) or not (-2**63 <= did < 2**63):
            raise IngestError(path, f"{where} {lineno}: doc_id {did!r} is not an integer")
        filt = s.get("filter")
        suffix = f",{filt}" if isinstance(filt, str) and filt not in ("", "none") else ""
        names = s.get("metrics")
        if not isinstance(names, list):
            names = [k for k in s if k not in _NOT_METRICS]
        dh, ph = s.get("doc_hash"), s.get("prompt_hash")
        for name in names:
            if not isinstance(name, str):
                continue
            v = s.get(name)
            if isinstance(v, bool):
                v = float(v)
            if not isinstance(v, (int, float)):
                if left_out is not None and (v is None or isinstance(v, str)):
                    left_out.append(name + suffix)  # a score lm-eval could not compute: reported, not stored
                elif corpus is not None and isinstance(v, (list, tuple, dict)):
                    corpus.append(name + suffix)
                continue  # e.g. perplexity's (loglikelihood, n_words) pairs: aggregated, not per-sample scores
            try:
                v = float(v)
            except OverflowError:
                raise IngestError(path, f"{where} {lineno}: {name} value is too large") from None
            if not math.isfinite(v):
                if left_out is not None:
                    left_out.append(name + suffix)  # NaN or Infinity: no score, reported as a null is
                continue
            doc_ids.append(did)
            metrics.append(name + suffix)
            values.append(v)
            doc_hashes.append(dh if isinstance(dh, str) else None)
            prompt_hashes.append(ph if isinstance(ph, str) else None)
    return doc_ids, metrics, values, doc_hashes, prompt_hashes
