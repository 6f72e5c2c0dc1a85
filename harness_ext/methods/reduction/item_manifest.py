"""The item-level manifest: compact encodings of item ids and population answers, and its checks.

``reduce --items N`` (:mod:`harness_ext.methods.reduction.item_reduce`) writes a manifest of kind
``"items"``: per task, the task's whole item list, the items a new model runs, and the population's
answers to every item, which the item estimators need at ``predict`` time (the cross-fitted AIPW
working model is fitted to each new model's own answers, so no fitted model can stand in for them).

Encodings keep the file small and exact:

* item ids as runs ``[[start, stop], ...]`` (``range(start, stop)`` each): a task's ids are usually
  ``0 .. N-1``, one run (a task whose ids the store numbered lists its items by id and numbers them so,
  :func:`listed_by_id`);
* 0/1 answers as bits (``numpy.packbits``, row-major models x items, base64); any other scores as
  little-endian float64 (base64), so every value predict uses is the stored one.
"""

from __future__ import annotations

import base64
import math
from typing import Optional

import numpy as np

from ...errors import HarnessExtError
from ...store.tables import table_columns

KIND = "items"
#: Largest population matrix a manifest may describe (models x items), so a hostile file cannot ask for a huge array.
MAX_CELLS = 200_000_000


def encode_ids(ids) -> list:
    """``[[start, stop], ...]`` runs of consecutive integer ids, in the given order."""
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size == 0:
        return []
    cut = np.flatnonzero(np.diff(ids) != 1) + 1
    starts = np.concatenate([[0], cut])
    stops = np.concatenate([cut, [ids.size]])
    return [[int(ids[a]), int(ids[b - 1]) + 1] for a, b in zip(starts, stops)]


def decode_ids(runs, where: str = "item ids") -> np.ndarray:
    """The ids ``encode_ids`` encoded; a malformed run list raises :class:`HarnessExtError`."""
    if not isinstance(runs, list) or not all(isinstance(r, list) and len(r) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in r) and r[0] < r[1] for r in runs):
        raise HarnessExtError(f"{where}: not a list of [start, stop] integer runs with start < stop")
    total = sum(b - a for a, b in runs)
    if total > MAX_CELLS:
        raise HarnessExtError(f"{where}: {total:,} ids, more than the {MAX_CELLS:,} a manifest may hold")
    return np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in runs]) if runs else np.zeros(0, np.int64)


def encode_scores(M: np.ndarray) -> dict:
    """A models x items score matrix (no NaN) as ``{"shape", "encoding", "data"}``."""
    M = np.asarray(M, dtype=float)
    if np.isin(M, (0.0, 1.0)).all():
        enc, raw = "bits", np.packbits(M.astype(bool), axis=None).tobytes()
    else:
        enc, raw = "float64", M.astype("<f8").tobytes()
    return {"shape": [int(M.shape[0]), int(M.shape[1])], "encoding": enc, "data": base64.b64encode(raw).decode("ascii")}


def decode_scores(block, where: str = "population") -> np.ndarray:
    """The matrix :func:`encode_scores` encoded; a malformed block raises :class:`HarnessExtError`."""
    if not isinstance(block, dict) or not isinstance(block.get("data"), str):
        raise HarnessExtError(f"{where}: not an object with shape, encoding and data")
    shape = block.get("shape")
    if not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(v, int) and v > 0 for v in shape)):
        raise HarnessExtError(f"{where}: shape must be two positive integers")
    m, n = shape
    if m * n > MAX_CELLS:
        raise HarnessExtError(f"{where}: {m:,} x {n:,} is more than the {MAX_CELLS:,} cells a manifest may hold")
    try:
        raw = base64.b64decode(block["data"], validate=True)
    except ValueError:
        raise HarnessExtError(f"{where}: data is not base64") from None
    enc = block.get("encoding")
    if enc == "bits":
        if len(raw) != math.ceil(m * n / 8):
            raise HarnessExtError(f"{where}: {len(raw)} bytes of bits for {m} x {n} answers")
        return np.unpackbits(np.frombuffer(raw, dtype=np.uint8), count=m * n).reshape(m, n).astype(float)
    if enc == "float64":
        if len(raw) != 8 * m * n:
            raise HarnessExtError(f"{where}: {len(raw)} bytes of float64 for {m} x {n} scores")
        M = np.frombuffer(raw, dtype="<f8").reshape(m, n).astype(float)
        if not np.isfinite(M).all():
            raise HarnessExtError(f"{where}: a score is not a finite number")
        return M
    raise HarnessExtError(f"{where}: encoding {enc!r} is not bits or float64")


def is_item_manifest(manifest) -> bool:
    """Whether ``manifest`` is an item-level one (``reduce --items`` with a random design)."""
    return isinstance(manifest, dict) and manifest.get("kind") == KIND


def validate_item_manifest(manifest: dict, path="manifest") -> None:
    """Raise :class:`HarnessExtError` naming ``path`` and the reason if ``predict`` cannot use ``manifest``.

    Checks what predict reads: the tasks' item lists and samples, the population's answers (shape
    against the item and model lists), the weights and the default estimator.
    """
    from .item_design_plan import is_design_only
    from .manifest_validation import check_version

    def bad(msg):
        raise HarnessExtError(f"{path} is not a valid harness-ext item manifest: {msg}")

    check_version(manifest, path)
    from ...safe_output import check_group_name

    try:
        check_group_name(manifest.get("group_name"))
    except (HarnessExtError, TypeError) as exc:
        bad(f"group_name: {exc}")
    tasks, models = manifest.get("tasks"), manifest.get("models")
    if not isinstance(tasks, dict) or not tasks:
        bad("'tasks' must be a non-empty object")
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        bad("'models' must be a list of model names")
    design = manifest.get("design")
    if not isinstance(design, dict) or not isinstance(design.get("estimator"), str):
        bad("'design' must be an object naming its estimator")
    weights = manifest.get("weights")
    if not isinstance(weights, dict) or set(weights) != set(tasks):
        bad("'weights' must give one weight per task")
    for task, b in tasks.items():
        where = f"{path}: task {task!r}"
        if not isinstance(b, dict) or not isinstance(b.get("metric"), str):
            bad(f"task {task!r}: not an object with a metric")
        w = weights[task]
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            bad(f"task {task!r}: weight {w!r} is not a number >= 0")
        ids = decode_ids(b.get("items"), f"{where}: items")
        sample = decode_ids(b.get("sample"), f"{where}: sample")
        if len(np.unique(ids)) != len(ids) or not np.isin(sample, ids).all() or len(sample) == 0:
            bad(f"task {task!r}: item ids must be distinct and the sample a non-empty part of them")
        if is_design_only(manifest):  # drawn from the task's size alone: its models' task scores
            why = ("the manifest's design has no population answers, yet the task holds some" if "population" in b
                   else _check_task_scores(b.get("task_scores"), len(models)))
            if why:
                bad(f"task {task!r}: {why}")
        else:
            _check_population(b.get("population"), len(models), len(ids), f"task {task!r}", where, bad)
        why = check_item_id_field(b, len(ids))
        if why:
            bad(f"task {task!r}: {why}")
        from .item_harness_tasks import check_harness_task_field

        why = check_harness_task_field(b)
        if why:
            bad(f"task {task!r}: {why}")
        from .item_design_plan import design_info

        design_info(b, len(ids), len(sample), f"{path}: task {task!r}")  # strata, anchor clusters
    if not sum(weights.values()) > 0:
        bad("the task weights sum to 0")
    from .item_benchmark import check_correlation

    why = check_correlation(manifest)  # absent in manifests written before it was recorded: predict says so
    if why:
        bad(why)
    from .lm_eval_release import check_release_field

    check_release_field(manifest, path, "item manifest")  # absent from manifests written before it


def _check_population(pop, n_models: int, n_items: int, label: str, where: str, bad) -> None:
    """``bad(reason)`` unless ``pop`` holds the answers of listed models (indices of the manifest's) to every item."""
    rows = (pop or {}).get("models") if isinstance(pop, dict) else None
    if not isinstance(rows, list) or not all(isinstance(i, int) and 0 <= i < n_models for i in rows):
        bad(f"{label}: population.models must index the manifest's models")
    M = decode_scores((pop or {}).get("scores"), f"{where}: population.scores")
    if M.shape != (len(rows), n_items):
        bad(f"{label}: population answers are {M.shape[0]} x {M.shape[1]}, "
            f"for {len(rows)} models and {n_items} items")


def _check_task_scores(known, n_models: int):
    """Why a design-only task's ``task_scores`` are unusable (None if sound): model indices and finite values."""
    if not isinstance(known, dict):
        return "task_scores must be an object of models and values"
    rows, values = known.get("models"), known.get("values")
    if (not isinstance(rows, list) or not isinstance(values, list) or len(rows) != len(values)
            or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n_models for i in rows)
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)):
        return "task_scores must pair indices of the manifest's models with finite scores"
    return None


def item_id_field(store, benchmark: str, task: str, ids: np.ndarray) -> dict:
    """``{"item_ids": [...]}``, each of ``ids``' item id (None where the store has none), for a task whose ids the
    store numbered (:func:`harness_ext.store.item_ids.numbered_ids`); ``{}`` for any other task, whose numbers
    are its ids' own."""
    from ...store.item_ids import numbered_ids

    names = numbered_ids(store, benchmark, task)
    return {} if names is None else {"item_ids": [names.get(int(d)) for d in ids]}


def helm_instances_field(store, benchmark: str, task: str) -> dict:
    """``{"helm_instances": True}`` for a task whose every item source is a HELM run directory's per-instance scores
    (its item numbers are HELM's instance numbers, so a new model's HELM run of it is matched item by item), ``{}``
    for any other (an item table's numbers are its own: a HELM run of that task cannot be matched to them)."""
    cols = table_columns(store.con, "sample_sources")
    if "reader" not in cols:  # a store made before readers were recorded: the source is unknown
        return {}
    readers = [r for (r,) in store.con.execute(
        "SELECT DISTINCT reader FROM sample_sources WHERE benchmark IS NOT DISTINCT FROM ? AND task = ?",
        [benchmark, task]).fetchall()]
    helm = bool(readers) and all(str(r or "").split(":", 1)[0] == "helm_instances" for r in readers)
    return {"helm_instances": True} if helm else {}


def listed_by_id(store, benchmark: str, task: str, ids: np.ndarray) -> Optional[tuple]:
    """``(order, numbers)`` for a task whose ids the store numbered (:func:`harness_ext.store.item_ids.numbered_ids`):
    the positions that list ``ids`` (the store's numbers) by their item ids' text, and the numbers the manifest
    gives the items so listed; None for any other task, whose numbers are its ids' own.

    The store numbers such ids in the order the files first list them, so the same files ingested in another
    order give an id another number. Listed by id and numbered 0, 1, ... in that order, the population's items,
    any seeded draw of them and the numbers ``--samples`` gets are the same whatever that order. A number without an
    id (an item stored before the map) comes after, by number, and then every item keeps the store's number: such
    an item has no text to order by.
    """
    from ...store.item_ids import numbered_ids

    names = numbered_ids(store, benchmark, task)
    if names is None:
        return None
    keys = [(names.get(int(d)) is None, names.get(int(d)) or "", int(d)) for d in ids]
    order = np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
    whole = all(int(d) in names for d in ids)
    return order, (np.arange(len(ids), dtype=np.int64) if whole else np.asarray(ids, dtype=np.int64)[order])


def check_item_id_field(b: dict, n_items: int):
    """Why a task block's ``item_ids`` (optional) is malformed, or None."""
    names = b.get("item_ids")
    if names is None:
        return None
    if not isinstance(names, list) or len(names) != n_items or not all(n is None or isinstance(n, str) for n in names):
        return f"item_ids must list one id (a string or null) per item, {n_items}"
    if len({n for n in names if n is not None}) != sum(n is not None for n in names):
        return "item_ids must be distinct"
    return None


def log_numbers(manifest: dict, long, warnings: list):
    """``long`` (:func:`~.item_predict.read_item_logs`) with the items of logs that name them by id (``by_id``:
    Every Eval Ever instance files, HELM runs) numbered as the manifest numbers them, for each task whose ids the
    store numbered (``item_ids``); a logged id the task does not list is left out, counted in ``warnings``."""
    import pandas as pd

    from ...store.samples import doc_id

    for task, b in manifest["tasks"].items():
        names = b.get("item_ids")
        rows = (long["task"] == task) & long["by_id"] if names else None
        if rows is None or not rows.any():
            continue
        read = pd.Series([int(d) for d, n in zip(decode_ids(b["items"]), names) if n is not None],
                         index=[doc_id(n) for n in names if n is not None])
        # Two items a log reads as one number (id5 and 5 both read as 5) are not guessed between: left out.
        number = read[~read.index.duplicated(keep=False)]
        got = long.loc[rows, "doc_id"].map(number)
        if got.isna().any():
            lost = long.loc[got.index[got.isna()], "doc_id"]
            warnings.append(f"{task}: {lost.nunique()} logged item ids that are not items of the task (or that two "
                            f"of its ids read as) left out ({len(lost)} scores)")
        long = long.drop(index=got.index[got.isna()])
        long.loc[got.index[got.notna()], "doc_id"] = got.dropna().astype("int64")
    return long


def task_population(manifest: dict, task: str) -> tuple:
    """``(item ids, sampled item ids, population answers models x items, model names)`` of one task; a task drawn
    from its size alone (:mod:`~.item_design_only`) has no population answers (0 rows, no names)."""
    b = manifest["tasks"][task]
    ids = decode_ids(b["items"])
    sample = decode_ids(b["sample"])
    if "population" not in b:
        return ids, sample, np.empty((0, len(ids))), []
    M = decode_scores(b["population"]["scores"])
    names = [manifest["models"][i] for i in b["population"]["models"]]
    return ids, sample, M, names


def task_scores(manifest: dict, task: str):
    """The population's full scores of one task by model: the means of their answers, or, for a task drawn from its
    size alone, the task scores its results files gave."""
    import pandas as pd

    b = manifest["tasks"][task]
    if "population" in b:
        _, _, M, names = task_population(manifest, task)
        return pd.Series(np.asarray(M, dtype=float).mean(axis=1), index=names, dtype=float)
    known = b["task_scores"]
    return pd.Series(known["values"], index=[manifest["models"][i] for i in known["models"]], dtype=float)


def item_positions(ids: np.ndarray, wanted) -> np.ndarray:
    """Positions in a task's item ids ``ids`` (as :func:`task_population` gives them) of the ids ``wanted``."""
    wanted = np.asarray(wanted)
    if np.all(np.diff(ids) > 0):
        return np.searchsorted(ids, wanted)
    order = np.argsort(ids, kind="stable")  # a manifest written before items listed by id were numbered so
    return order[np.searchsorted(ids[order], wanted)].astype(np.int64)


def interval_text(manifest: dict, level: float, estimator: Optional[str] = None) -> str:
    """How an item-level prediction's intervals were made, in words."""
    pct = f"{level:.0%}".replace(".0%", "%")
    name = estimator or manifest["design"]["estimator"]
    return (f"harness-ext predict: each task's score over all its items estimated from a random sample of them by the "
            f"item estimator {name} with its {pct} interval (population: {len(manifest['models'])} models); the "
            "benchmark's is the weighted mean of the task scores, their errors combined with the correlation reduce "
            "estimated on the population's held-out errors, independent for a design-based estimator (Zhang, Dorner and "
            "Hardt 2025; Schäfer and Strimmer 2005)")
