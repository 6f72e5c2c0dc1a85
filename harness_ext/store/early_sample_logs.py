"""lm-eval 0.4.0-0.4.2's per-sample logs: ``<model_args>_<task>.jsonl``, a JSON array beside ``results.json``.

lm-evaluation-harness 0.4.0, 0.4.1 and 0.4.2 run with ``--log_samples`` write, in the ``--output_path`` folder,
``results.json`` (or the ``--output_path`` file itself when it ends in ``.json``) and, per task, a file named from
the command's ``--model_args`` (``/`` and ``=`` replaced by ``__``) and the task::

    results.json
    pretrained__EleutherAI__pythia-160m,dtype__float16_arc_easy.jsonl

Despite its suffix the file is one indented JSON array, not JSON lines. Its samples carry ``doc_id``, the document,
``target``, ``arguments``, ``resps``, ``filtered_resps`` and the metric values, but no ``filter``, ``metrics`` or
hashes: a task scored under several filters (``strict-match`` and ``flexible-extract``) logs each document once per
filter, in the order of the task's ``filter_list`` (lm-eval's evaluator loops over the filters, then the documents).
(With several GPUs each rank's samples follow one another, a rank logging its documents once per filter in that
order, so the count per document holds.) The reader here names the k-th logging of a document as the k-th filter of
the task's config in the results file, says so in the file's notes, and checks each metric's mean against the score
the results file reports.
From 0.4.3 on lm-eval writes ``samples_<task>_<date>.jsonl`` (:mod:`harness_ext.store.sample_logs`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
import zlib
from pathlib import Path
from typing import Optional

from ..errors import IngestError
from ..report import plural
from ..safe_input import _OPEN_FLAGS, read_bytes
from .ingest_files import _max_file_bytes

#: The results file lm-eval 0.4.0-0.4.2 write into an ``--output_path`` folder.
RESULTS_NAME = "results.json"
#: Without a ``results.json``, the other ``.json`` files of a folder are looked at (``--output_path run.json``)
#: only when there are at most this many, so a folder of thousands of JSON files is not read for one ``.jsonl``.
_MAX_OTHER_JSON = 20
#: ... and only those of at most this size (a results file of lm-eval's 57 MMLU tasks is about 0.3 MB).
_MAX_OTHER_JSON_BYTES = 32 * 2**20
_SUFFIX_RE = re.compile(r"\.jsonl(?:\.gz)?$")
#: What lm-eval 0.4.0-0.4.2 call the samples of a task scored without a ``filter_list``.
_NO_FILTER = "none"


def sanitized(model_args: str) -> str:
    """``model_args`` as lm-eval 0.4.0-0.4.2 put it in a samples file's name (``re.sub("/|=", "__", ...)``)."""
    return re.sub("/|=", "__", model_args)


def _folder_key(folder: str) -> Optional[tuple]:
    """What invalidates a folder's cached runs: the folder's and its ``results.json``'s modification times."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    try:
        rs = os.stat(os.path.join(folder, RESULTS_NAME))
        return st.st_mtime_ns, rs.st_mtime_ns, rs.st_size
    except OSError:
        return st.st_mtime_ns, None, None


def runs_beside(path) -> tuple:
    """The lm-eval 0.4.0-0.4.2 results files in the folder of ``path``: ``(results path, document)`` pairs.

    A results file of that shape has ``config.model_args`` as text and ``configs`` and ``results`` objects.
    ``results.json`` when the folder has one, else its other ``.json`` files (at most :data:`_MAX_OTHER_JSON`, of
    at most :data:`_MAX_OTHER_JSON_BYTES` each).
    A file that cannot be read or is of another shape is passed over: ingested, it reports its own problem.
    """
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    key = _folder_key(folder)
    return () if key is None else _runs_in(folder, key)


#: Folders are walked one after another: a few folders' runs are enough to keep.
@functools.lru_cache(maxsize=4)
def _runs_in(folder: str, key: tuple) -> tuple:
    if key[1] is not None:
        names = [RESULTS_NAME]
    else:
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
        except OSError:
            return ()
        if len(names) > _MAX_OTHER_JSON:
            return ()
    limit = _max_file_bytes() if key[1] is not None else min(_max_file_bytes(), _MAX_OTHER_JSON_BYTES)
    runs = []
    for name in names:
        p = Path(folder, name)
        try:
            doc = json.loads(read_bytes(p, "lm-eval results file", limit, IngestError))
        except (IngestError, OSError, ValueError, RecursionError):
            continue
        cfg = doc.get("config") if isinstance(doc, dict) else None
        if (isinstance(cfg, dict) and isinstance(cfg.get("model_args"), str) and isinstance(doc.get("configs"), dict)
                and isinstance(doc.get("results"), dict)):
            runs.append((p, _slim(doc)))
        del doc  # one file's document at a time, not every file's
    return tuple(runs)


def _slim(doc: dict) -> dict:
    """What the readers here use of a results document, in its shape: the model's fields, each task's filter names
    and numeric scores. Cached per folder, so not the whole document: twenty files of megabytes of configuration
    beside one ``.jsonl`` held every parsed document in memory, folder after folder."""
    cfg = doc["config"]
    tasks = doc["configs"]
    return {"config": {k: cfg[k] for k in ("model", "model_args") if k in cfg},
            "model_name": doc["model_name"] if isinstance(doc.get("model_name"), str) else None,
            "configs": {t: {"filter_list": [{"name": n} for n in _filters(doc, t)]} for t in tasks},
            "results": {t: {k: v for k, v in r.items() if isinstance(v, (int, float))}
                        for t, r in doc["results"].items() if t in tasks and isinstance(r, dict)}}


def early_samples_task(path) -> Optional[tuple]:
    """``(task, results path or None, results document)`` when ``path`` is named as lm-eval 0.4.0-0.4.2 name a
    task's samples beside the results file of its folder, else None.

    The results path is None when the name ends with ``_<task>`` of a task the results file ran but its start is
    not that file's ``model_args``: the samples of another run written to the same folder (lm-eval 0.4.0-0.4.2
    overwrite ``results.json``), whose model the results file does not name.
    """
    name = os.path.basename(os.fspath(path))
    m = _SUFFIX_RE.search(name)
    if not m:
        return None
    stem = name[:m.start()]
    runs = runs_beside(path)
    # An empty task name (which the results reader refuses) would claim every ``<model_args>_.jsonl``.
    for res, doc in runs:
        prefix = sanitized(doc["config"]["model_args"])
        for task in doc["configs"]:
            if task and stem == f"{prefix}_{task}":
                return task, res, doc
    tails = [(task, doc) for _, doc in runs for task in doc["configs"] if task and stem.endswith(f"_{task}")]
    # Only a JSON array is taken for another run's log: a table of JSON records (one object a line) named
    # ``<board>_<task>.jsonl`` is left to the adapters that read it.
    if tails and _starts_as_array(path):
        task, doc = max(tails, key=lambda t: len(t[0]))
        return task, None, doc
    return None


def _starts_as_array(path) -> bool:
    """Whether the regular file ``path`` (a ``.gz`` one inflated) starts, after blanks, with ``[``: lm-eval
    0.4.0-0.4.2 write one JSON array. Read without waiting (a FIFO is not a log) and only its first bytes."""
    try:
        fd = os.open(os.fspath(path), _OPEN_FLAGS)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, 4096)
    except OSError:
        return False
    finally:
        os.close(fd)
    if os.fspath(path).endswith(".gz"):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4096)
        except zlib.error:
            return False
    return head.lstrip(b" \t\r\n\xef\xbb\xbf").startswith(b"[")


def _filters(doc: dict, task: str) -> list:
    """The filter names of ``task`` in the results document's ``configs``, in the order lm-eval applied them."""
    cfg = doc.get("configs", {}).get(task)
    flist = cfg.get("filter_list") if isinstance(cfg, dict) else None
    if not isinstance(flist, list) or not flist:
        return [_NO_FILTER]
    names = [f.get("name") if isinstance(f, dict) else None for f in flist]
    # lm-eval keeps each document's filtered answers by the filter's name, so two filters of one name are one
    # logging of the document (the later's answers): counted once, not as two filters.
    return list(dict.fromkeys(n if isinstance(n, str) and n else _NO_FILTER for n in names))


def _with_filters(path, samples: list, filters: list, results_name: str) -> tuple:
    """``(records, n_docs)``: ``(sample number, sample with its filter)`` pairs, the k-th logging of a document
    named as the k-th of ``filters``; IngestError when a document is logged another number of times."""
    seen: dict = {}
    records = []
    for i, s in enumerate(samples, start=1):
        if not isinstance(s, dict):
            raise IngestError(path, f"sample {i} is {type(s).__name__}, expected an object")
        if "filter" not in s:
            did = s.get("doc_id")
            key = did if isinstance(did, (int, str)) and not isinstance(did, bool) else repr(did)
            k = seen.get(key, 0)
            seen[key] = k + 1
            if k >= len(filters):
                raise IngestError(path, f"sample {i}: doc_id {str(did)[:40]} logged {k + 1} times, but the task's "
                                        f"config in {results_name} names {plural(len(filters), 'filter')} "
                                        f"({', '.join(filters)}): lm-eval 0.4.0-0.4.2 log a document once per filter")
            s = {**s, "filter": filters[k]}
        records.append((i, s))
    short = [d for d, n in seen.items() if n != len(filters)]
    if short:
        raise IngestError(path, f"{plural(len(short), 'document')} (doc_id {str(short[0])[:40]} first) logged "
                                f"fewer times than the {len(filters)} filters of the task's config in {results_name} "
                                f"({', '.join(filters)}): the filters cannot be told apart")
    return records, len(seen)


def _checked(frame, doc: dict, task: str, results_name: str) -> str:
    """A note comparing each stored metric's mean with the score the results document reports for ``task``."""
    reported = doc.get("results", {}).get(task)
    reported = reported if isinstance(reported, dict) else {}
    means = frame.groupby("metric", sort=False)["value"].mean()
    same, differ, absent = [], [], 0
    for metric, mean in means.items():
        key = metric if "," in metric else f"{metric},{_NO_FILTER}"
        v = reported.get(key, reported.get(metric))
        if isinstance(v, int) and not isinstance(v, bool):
            try:
                v = float(v)
            except OverflowError:  # an integer of hundreds of digits: no float, so no score to compare
                v = None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            absent += 1
        elif math.isclose(mean, v, rel_tol=1e-9, abs_tol=1e-12):
            same.append(metric)
        else:
            differ.append(f"{metric} {mean:.6g} against {v:.6g}")
    parts = []
    if same:
        parts.append(f"the mean{'s' * (len(same) != 1)} of {plural(len(same), 'metric')} "
                     f"equal{'s' * (len(same) == 1)} the task's score{'s' * (len(same) != 1)} in {results_name}")
    if differ:
        parts.append(f"the mean{'s' * (len(differ) != 1)} of {plural(len(differ), 'metric')} "
                     f"differ{'s' * (len(differ) == 1)} from {results_name}'s: {'; '.join(differ)}")
    if absent:
        parts.append(f"{plural(absent, 'metric')} not reported in {results_name}")
    return "; ".join(parts)


def early_model(path, found: tuple, model: Optional[str] = None) -> str:
    """The model of the samples file ``path`` (``found``: :func:`early_samples_task`'s answer): ``model`` when given,
    else as the results file beside it names it (:func:`harness_ext.adapters.lm_eval.model_name`, as its results
    are stored); IngestError when that results file is of another run."""
    from harness_ext.adapters.lm_eval import model_name

    task, res, doc = found
    if model:
        return str(model)
    if res is None:
        raise IngestError(path, f"named as lm-eval 0.4.0-0.4.2 name the samples of task {task}, but the "
                                f"{RESULTS_NAME} beside it is of another run (model_args "
                                f"{doc['config']['model_args'][:80]!r}): lm-eval 0.4.0-0.4.2 overwrite it when "
                                "two runs share a folder; keep each run in its own folder (in Python, pass model=)")
    return model_name(doc["config"], res, fallback=doc.get("model_name"))[0]


def early_records(path, text: str, found: tuple) -> tuple:
    """``(records, note)`` of the samples file ``path`` whose ``text`` is read: ``(sample number, sample with its
    filter)`` pairs for :func:`harness_ext.store.sample_logs.sample_frame`, and the note saying how it was read.

    Raises
    ------
    IngestError
        For a text that is not a JSON array of objects, or whose documents do not match its task's filters.
    """
    task, res, doc = found
    results_name = res.name if res is not None else RESULTS_NAME
    try:
        samples = json.loads(text)
    except ValueError as exc:
        raise IngestError(path, f"not JSON (lm-eval 0.4.0-0.4.2 write one JSON array): {exc}") from None
    except RecursionError:
        raise IngestError(path, "nested too deeply to read") from None
    if not isinstance(samples, list):
        raise IngestError(path, f"a JSON {type(samples).__name__}, expected the JSON array of samples lm-eval "
                                "0.4.0-0.4.2 write")
    filters = _filters(doc, task)
    records, n_docs = _with_filters(path, samples, filters, results_name)
    how = f"read as lm-eval 0.4.0-0.4.2's samples of task {task} (a JSON array; the model from {results_name})"
    if len(filters) > 1:
        how += (f"; {plural(n_docs, 'document')} logged once per filter without the filter's name: the k-th "
                f"logging of a document read as the k-th filter of the task's config ({', '.join(filters)})")
    return records, how


def early_check(frame, found: tuple) -> str:
    """How each stored metric's mean compares with the score the results file beside reports (:func:`_checked`);
    '' for the log of another run, whose results file is not its own."""
    task, res, doc = found
    return _checked(frame, doc, task, res.name) if res is not None else ""
