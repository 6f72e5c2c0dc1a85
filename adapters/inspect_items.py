"""Inspect AI logs' per-sample scores, as an item table (:class:`harness_ext.store.item_format.ItemTable`).

A log's samples carry their scores (Inspect's ``EvalSample``: ``id``, ``epoch``, ``scores``: ``{scorer: {"value":
.., "answer": .., ...}}``): in a ``.json`` log the ``samples`` list, in an ``.eval`` archive one member
``samples/<id>_epoch_<epoch>.json`` per sample and epoch. A value is read as Inspect's ``value_to_float`` reads
it for its metrics: ``C`` 1, ``I`` 0, ``P`` 0.5, ``N`` 0, numbers and booleans as numbers, ``yes``/``true`` 1,
``no``/``false`` 0, text of a number that number. A value it would warn about and count 0 (other text, a list)
is left out and counted, as is an unscored one (NaN, null) and a sample without scores. A dict value (one score per
key) is one score per key, the header's scores then being named by the keys.

Task, model and metric are named as the header's results are (:mod:`harness_ext.adapters.inspect_ai`): a scorer's
item metric is its header metric ``accuracy`` (or ``mean``), ``<name>/accuracy`` when the log has several scorers,
so a task's item mean is the score Inspect reports (a scorer with neither is stored as ``mean``). A sample run
over several epochs scores their mean (Inspect's default reducer); a log reducing them by one other reducer scores
the reduced values it lists (``reductions``, an archive's ``reductions.json``), and without them is noted. Item ids
are the samples' ids, numbered as an item table's (:mod:`harness_ext.store.item_ids`: whole numbers and
``id7``-like ids their own numbers, other text 0, 1, ... in the store's id map, which ``reduce --items`` lists
beside the numbers); the map keeps each id as the log gives it (``"17.0"`` is not 17), for ``--sample-id``.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from harness_ext.adapters.inspect_ai import BENCHMARK, MAX_HEADER_BYTES, archive_member, check_log, metric_label
from harness_ext.errors import IngestError

#: Inspect's letter grades (CORRECT, INCORRECT, PARTIAL, NOANSWER) and what ``value_to_float`` makes of them.
GRADES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
#: The most one sample member of an ``.eval`` archive may inflate to (a sample with its messages and events).
MAX_SAMPLE_BYTES = MAX_HEADER_BYTES
#: The most sample members an archive may have (a real one has one per sample and epoch).
MAX_SAMPLE_MEMBERS = 1_000_000
#: The header metrics a per-sample mean reproduces, in the order they are looked for.
MEAN_METRICS = ("accuracy", "mean")

#: The revision of this item reader, stored with every item source it reads (``sample_sources.reader``, see
#: :mod:`harness_ext.store.item_readers`): raise it when a change makes it store other item scores from the same
#: file, so ``ingest`` counts the sources an older reading left and ``ingest --reread`` reads them again.
# 2: a log marked invalidated is refused (its samples are not the run's)
REVISION = "2"


def score_value(v) -> tuple:
    """``(score, None)`` of a sample's score value as Inspect's ``value_to_float`` reads it, or ``(None, why)``:
    ``why`` a count's noun phrase, ``{s}`` where its plural takes an s."""
    if isinstance(v, (bool, int, float)):
        try:
            f = float(v)
        except OverflowError:
            return None, "score{s} too large for a float"
        return (f, None) if math.isfinite(f) else (None, "unscored score{s} (NaN)" if f != f else "infinite score{s}")
    if isinstance(v, str):
        if v in GRADES:
            return GRADES[v], None
        if v.lower() in _WORDS:
            return _WORDS[v.lower()], None
        try:
            f = float(v)
        except ValueError:
            return None, "score{s} of text that is no grade or number (Inspect counts such values 0)"
        return (f, None) if math.isfinite(f) else (None, "infinite score{s}")
    if v is None:
        return None, "unscored score{s} (null)"
    return None, f"score{{s}} with a {type(v).__name__} value (Inspect counts such values 0)"


def _block(doc: dict, *keys):
    """``doc[k1][k2]...`` where each is a mapping, else ``{}`` (a header's optional blocks, whatever a log holds)."""
    for k in keys:
        doc = doc.get(k) if isinstance(doc, dict) else None
    return doc if isinstance(doc, dict) else {}


def _metrics_of(doc: dict) -> dict:
    """``(scorer, key or None) -> stored metric name`` of the header's scores; ``key`` names a dict value's key."""
    scores = _block(doc, "results").get("scores")
    scores = [s for s in scores if isinstance(s, dict)] if isinstance(scores, list) else []
    out = {}
    # A scorer's mean-reduced score first: with several reducers the items are averaged over epochs (_epoch_reduced)
    for s in sorted(scores, key=lambda s: isinstance(s.get("reducer"), str) and s["reducer"] not in ("", "mean")):
        metrics = s.get("metrics") if isinstance(s.get("metrics"), dict) else {}
        key = next((k for k in MEAN_METRICS if k in metrics), MEAN_METRICS[-1])
        m = metrics.get(key)
        label = metric_label(s, (m.get("name") if isinstance(m, dict) else None) or key, len(scores) > 1)
        name, scorer = str(s.get("name") or s.get("scorer")), str(s.get("scorer") or s.get("name"))
        out.setdefault((name, None), label)  # a scalar value: the sample's scorer key is the score's name
        out.setdefault((scorer, name), label)  # a dict value: the scorer, and the key as the score's name
    return out


def _sample_rows(where: str, s, metrics: dict, path, left: dict) -> list:
    """``(id, epoch, metric, value)`` of one sample; what is left out is counted in ``left`` (why -> count)."""
    if not isinstance(s, dict) or "id" not in s:
        raise IngestError(path, f"{where} is not an Inspect sample (no id)")
    sid, epoch = s["id"], s.get("epoch", 1)
    if isinstance(sid, bool) or not isinstance(sid, (int, str)):
        raise IngestError(path, f"{where}: sample id {str(sid)[:40]!r} is not an integer or text")
    if isinstance(sid, int) and not -2**63 <= sid < 2**63:
        raise IngestError(path, f"{where}: sample id of {len(str(abs(sid))):,} digits is outside the 64-bit range")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or not 0 < epoch < 2**31:
        raise IngestError(path, f"{where}: epoch {str(epoch)[:40]!r} is not a whole number from 1")
    scores = s.get("scores")
    if not isinstance(scores, dict) or not scores:
        left["sample{s} without a score"] = left.get("sample{s} without a score", 0) + 1
        return []
    rows = []
    for scorer, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else None
        parts = value.items() if isinstance(value, dict) else [(None, value)]
        for key, v in parts:
            metric = metrics.get((str(scorer), None if key is None else str(key)))
            f, why = score_value(v) if metric else (None, "score{s} of a scorer the header does not list")
            if why:
                left[why] = left.get(why, 0) + 1
            else:
                rows.append((sid, epoch, metric, f))
    return rows


def _reductions(doc: dict, metrics: dict) -> dict:
    """``(item number, metric) -> score`` of the reduced scores a log lists (its ``reductions``; Inspect's
    ``EvalSampleReductions``: ``{"scorer", "reducer", "samples": [{"value", "sample_id"}, ...]}``)."""
    from harness_ext.store.samples import doc_id

    got = {}
    for b in doc.get("reductions") if isinstance(doc.get("reductions"), list) else []:
        for s in (b.get("samples") if isinstance(b, dict) and isinstance(b.get("samples"), list) else []):
            sid = s.get("sample_id") if isinstance(s, dict) else None
            if isinstance(sid, bool) or not isinstance(sid, (int, str)) or isinstance(sid, int) and not -2**63 <= sid < 2**63:
                continue  # no item it could be: every item's reduced score must be found, or none is used
            value = s.get("value")
            for key, v in (value.items() if isinstance(value, dict) else [(None, value)]):
                metric = metrics.get((str(b.get("scorer")), None if key is None else str(key)))
                f, why = score_value(v) if metric else (None, "not a listed score")
                if why is None:
                    got[(doc_id(sid), metric)] = f
    return got


def _epoch_reduced(per, doc: dict, metrics: dict, epochs: int, notes: list):
    """``per`` (item number, metric, value averaged over epochs, id) with the log's own reduced scores where it reduces
    epochs by one reducer other than the mean and lists them for every item, as its header scores them; else as it
    is, noted when the reducer is another."""
    reducer = _block(doc, "eval", "config").get("epochs_reducer")
    if epochs <= 1 or reducer in (None, ["mean"], "mean"):
        return per
    got = _reductions(doc, metrics) if isinstance(reducer, list) and len(reducer) == 1 else {}
    keys = list(zip(per["doc_id"], per["metric"]))
    if got and all(k in got for k in keys):
        notes.append(f"scores reduced over up to {epochs} epochs by the log's reducer, {reducer[0]}, as its header "
                     "scores them")
        return per.assign(value=[got[k] for k in keys])
    notes.append(f"scores averaged over up to {epochs} epochs; the log reduces epochs by {reducer} and does not list "
                 "every reduced score, so its header score may differ from the items' mean")
    return per


def _archive_samples(z, path):
    """``(where, sample)`` of an ``.eval`` archive's sample members, each bounded; names outside ``samples/`` refused."""
    members = [i for i in z.infolist() if i.filename.startswith("samples/")]
    if len(members) > MAX_SAMPLE_MEMBERS:
        raise IngestError(path, f"{len(members):,} sample members, above the {MAX_SAMPLE_MEMBERS:,} an archive may have")
    names = set()
    for info in members:
        name = info.filename
        parts = name.split("/")
        if "\\" in name or ".." in parts or name.startswith("/") or ":" in name:
            raise IngestError(path, f"member {name[:80]!r} names a path outside the archive's samples/ folder: not read")
        if name in names:
            raise IngestError(path, f"member {name[:80]!r} is in the archive twice")
        names.add(name)
        if name.endswith(".json"):
            yield f"member {name}", archive_member(z, path, name, MAX_SAMPLE_BYTES)


def _read_doc(path: Path):
    """``(header, iterable of (where, sample))`` of a log: a ``.json`` log read whole, an ``.eval`` archive's members."""
    from harness_ext.store.ingest_files import _max_file_bytes

    size = os.path.getsize(path)
    if size > _max_file_bytes():
        raise IngestError(path, f"{size:,} bytes, above the {_max_file_bytes():,}-byte limit: not read")
    if path.suffix != ".eval":
        import json

        try:
            doc = json.loads(path.read_bytes())
        except (ValueError, RecursionError) as exc:
            raise IngestError(path, f"not JSON: {str(exc)[:200]}") from None
        samples = doc.get("samples") if isinstance(doc, dict) else None
        if samples is not None and not isinstance(samples, list):
            raise IngestError(path, "its samples are not a list")
        return doc, [(f"sample {i}", s) for i, s in enumerate(samples or [])]
    return None, None  # read inside the open archive (read_items)


def read_items(path, store_ids: bool = True):
    """The per-sample scores of one Inspect log (``.json`` or ``.eval``).

    Parameters
    ----------
    path : path-like
    store_ids : bool
        Number the sample ids as an item table's, for the store's id map (ingest); False: by
        :func:`harness_ext.store.samples.doc_id` alone, as ``predict`` matches a manifest's ids.

    Returns
    -------
    harness_ext.store.item_format.ItemTable or None
        Columns model, task, doc_id, metric, value (the mean over a sample's epochs); None for a log without
        samples (written with ``--no-log-samples``). ``notes`` count what was left out.

    Raises
    ------
    IngestError
        Naming the file and the reason: not a finished Inspect log (status other than success), a member outside
        the archive's samples, one too large, a sample without an id, an id outside the 64-bit range, two ids read
        as one item or that ``inspect eval --sample-id`` cannot tell apart, or one (id, epoch) listed twice.
    """
    import zipfile

    path = Path(path)
    try:
        doc, samples = _read_doc(path)
        if doc is not None:
            return _table(path, doc, samples, *check_log(doc, path), store_ids)
        with zipfile.ZipFile(path) as z:  # each member parsed and reduced to its scores in turn, not held
            if "header.json" not in z.namelist():
                raise IngestError(path, "an .eval archive without header.json")
            doc = archive_member(z, path, "header.json", MAX_HEADER_BYTES)
            if "reductions.json" in z.namelist():  # the epochs' reduced scores, as a .json log's "reductions"
                doc = dict(doc, reductions=archive_member(z, path, "reductions.json", MAX_HEADER_BYTES))
            return _table(path, doc, _archive_samples(z, path), *check_log(doc, path), store_ids)
    except (zipfile.BadZipFile, NotImplementedError, EOFError) as exc:
        raise IngestError(path, f"not a valid .eval archive: {exc}") from None
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None


def _table(path: Path, doc: dict, samples, task: str, model: str, store_ids: bool):
    """:func:`read_items`' item table of ``samples`` (``(where, sample)`` pairs), or None when there are none."""
    import numpy as np
    import pandas as pd

    from harness_ext.store.item_format import ItemTable
    from harness_ext.store.item_ids import file_item_ids
    from harness_ext.store.ingest_files import file_hash
    from harness_ext.store.samples import doc_id

    metrics, left, rows, seen = _metrics_of(doc), {}, [], {}
    for where, s in samples:
        got = _sample_rows(where, s, metrics, path, left)
        key = (str(type(s["id"]).__name__), str(s["id"]), str(s.get("epoch", 1)))
        if key in seen:
            raise IngestError(path, f"{where}: sample {str(s['id'])[:40]!r} epoch {key[2]} is listed twice "
                                    f"(also {seen[key]})")
        seen[key] = where
        rows += got
    if not seen:
        return None
    notes = [f"{n} {why.format(s='s' * (n != 1))} left out" for why, n in sorted(left.items())]
    if not rows:
        raise IngestError(path, "no per-sample scores: " + ("; ".join(notes) or "no sample has a score"))
    frame = pd.DataFrame(rows, columns=["id", "epoch", "metric", "value"])
    logged = _distinct_ids(path, frame["id"])
    frame["doc_id"] = np.fromiter((doc_id(i) for i in frame["id"]), dtype=np.int64, count=len(frame))
    # Two ids that one number stands for ("7" and "id7") would be one item wherever an id is read alone (predict):
    # refused, not merged.
    first = frame.drop_duplicates("doc_id")[["doc_id", "id"]]
    clash = frame[["doc_id", "id"]].drop_duplicates().merge(first, on="doc_id", suffixes=("", "_first"))
    clash = clash[clash["id"].astype(str) != clash["id_first"].astype(str)]
    if len(clash):
        raise IngestError(path, f"sample ids {str(clash['id'].iloc[0])[:40]!r} and {str(clash['id_first'].iloc[0])[:40]!r} "
                                f"both read as item {int(clash['doc_id'].iloc[0])}")
    epochs = frame.groupby(["doc_id", "metric"])["epoch"].transform("nunique").max()
    per = frame.groupby(["doc_id", "metric"], sort=False).agg(value=("value", "mean"), id=("id", "first")).reset_index()
    per = _epoch_reduced(per, doc, metrics, epochs, notes)
    # For the store, numbered as item tables number their ids: the store's id map keeps each task's numbers, and
    # reduce lists the ids beside them, the ones `inspect eval --sample-id` takes.
    tasks = pd.Series(pd.Categorical([task] * len(per)))  # categorical, as the id map renumbers a file's rows by it
    # Each id kept as its text, and as logged (type too) beside it: --sample-id matches the text, not its number.
    numbers, ids = (file_item_ids(per["id"].to_numpy(), tasks, path, notes, exact=True) if store_ids
                    else (per["doc_id"], None))
    if ids is not None:
        ids["logged"] = ids["item"].map(logged)
    out = pd.DataFrame({"model": model, "task": tasks, "doc_id": numbers, "metric": per["metric"],
                        "value": per["value"]})
    h = file_hash(path)
    h.update(b"\0inspect-samples")
    return ItemTable(path, BENCHMARK, out, h.hexdigest(), notes, ids)


def _distinct_ids(path, ids) -> dict:
    """``{id's text: id as logged, JSON}`` of a log's sample ids, refusing two ids with one text (``17`` and ``"17"``)
    or that ``inspect eval --sample-id`` reads as one (``"007"`` and ``7``,
    :func:`harness_ext.store.item_ids.inspect_match`): no list of ids could run one without the other."""
    import json

    from harness_ext.store.item_ids import inspect_match

    out, match = {}, {}
    for v in dict.fromkeys((type(v), v) for v in ids):  # each distinct (type, value) once, in order
        v = v[1]
        text, m, logged = str(v), inspect_match(v), json.dumps(v)
        other = out.get(text) or match.get(m)
        if other is not None:
            raise IngestError(path, f"sample ids {other[:40]} and {logged[:40]} are two samples that inspect eval "
                                    "--sample-id cannot tell apart (it matches an id by its text, and reads text of "
                                    "digits as a whole number): not merged into one item")
        out[text], match[m] = logged, logged
    return out


def is_log_file(path) -> bool:
    """Whether ``path`` is an Inspect log by its name and first bytes: an ``.eval`` zip archive, or a ``.json`` file
    that opens as Inspect writes its logs (``{"version": 2, "status": ..``, or ``{"status": .., "eval": ..`` without
    the version)."""
    import zipfile

    p = Path(path)
    if p.suffix not in (".eval", ".json") or not p.is_file():  # the name first: no stat of other files in a walk
        return False
    if p.suffix == ".eval":
        return zipfile.is_zipfile(p)
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    # As Inspect writes a log's first keys (or, re-serialised without the version, "status" then "eval"); an eval
    # set's logs.json (log name -> header) opens otherwise.
    return re.match(rb'\s*\{\s*("version"\s*:\s*\d+\s*,\s*"status"|"status"\s*:\s*"\w+"\s*,\s*"eval")\s*:',
                    head) is not None
