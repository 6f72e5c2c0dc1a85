"""Complete validation of a manifest before ``predict`` uses it.

A manifest is a file a user may have edited or received from someone else, so
everything ``predict`` reads is checked first, each failure one clear
:class:`~harness_ext.errors.HarnessExtError`: size and nesting limits while
loading (no ``RecursionError``), no ``NaN``/``Infinity`` literals, the version
(another major version says which tool wrote it), the shapes and numbers of the
large arrays (:func:`check_structure`, before the schema walks millions of cells:
a wrong-shaped training matrix fails in milliseconds), every number finite and
within float range (:func:`check_numbers`), the JSON Schema
(``manifest-v1.schema.json``: types, non-negative errors and weights, known
query keys), then what a schema cannot say: a rectangular training matrix over
the manifest's datasets, subset names among the datasets, usable weights and
normalisation, the nested calibration's folds (one label per model, one subset of
the manifest's datasets per fold), and predictor parameters the predictor accepts,
of the types it expects.
"""

from __future__ import annotations

import json
import math
from itertools import chain
from pathlib import Path

from ...errors import HarnessExtError

#: Largest manifest file read (an embedded 2,000,000-cell training matrix is ~40 MB).
MAX_MANIFEST_BYTES = 256 * 1024**2
#: Deepest nesting of JSON arrays/objects accepted (a manifest needs 5).
MAX_DEPTH = 32
#: Largest training matrix read (the schema's limits; :func:`schema_view` shows the schema one row).
MAX_MATRIX_ROWS, MAX_MATRIX_COLUMNS = 10_000_000, 1_000_000
#: The version of the manifests this harness-ext writes (every kind: datasets, items).
MANIFEST_VERSION = "1.0"
#: The manifest major version this tool reads.
READS_MAJOR = "1"


def load_json(path: Path) -> dict:
    """Parse a manifest file within the size and depth limits, refusing NaN/Infinity literals.

    Read through :func:`harness_ext.safe_input.load_document` (a regular UTF-8 file of at most
    :data:`MAX_MANIFEST_BYTES`, its nesting measured before it is parsed); then the top level must be an object.
    """
    from ...errors import SideFileError
    from ...safe_input import load_document

    try:
        doc = load_document(path, "manifest", "json", limit=MAX_MANIFEST_BYTES, max_depth=MAX_DEPTH)
    except SideFileError as exc:
        if exc.reason == "no such manifest":
            raise HarnessExtError(f"no manifest at {path}") from None
        raise
    if not isinstance(doc, dict):
        raise HarnessExtError(f"{path} is not a valid harness-ext manifest: the top level is a {type(doc).__name__}, "
                              "not an object")
    return doc


def check_version(manifest: dict, path) -> None:
    """A manifest of another major version, or of another tool, gets a message saying so."""
    tool = manifest.get("tool") if isinstance(manifest.get("tool"), dict) else {}
    by = f"{tool.get('name', 'an unknown tool')} {tool.get('version', '')}".strip()
    if tool.get("name") not in (None, "harness-ext"):
        raise HarnessExtError(f"{path} was written by {by}, not by harness-ext")
    version = manifest.get("manifest_version")
    if not isinstance(version, str):
        raise HarnessExtError(f"{path} is not a harness-ext manifest: no manifest_version")
    if version.split(".")[0] != READS_MAJOR:
        from ... import __version__

        raise HarnessExtError(f"{path} is manifest version {version} (written by {by}); this harness-ext {__version__} "
                              f"reads version {READS_MAJOR}.x: use the matching harness-ext or run 'reduce' again")


def _bad(path, msg):
    raise HarnessExtError(f"{path} is not a valid harness-ext manifest: {msg}")


def check_structure(manifest: dict, path) -> None:
    """The cheap checks of the large arrays, run before the JSON Schema (which takes seconds per million cells).

    The training matrix must be one row of numbers or nulls per model and one value per
    dataset, every value finite. Other shapes are left to the schema, which then has little
    left to walk (:func:`schema_view`).
    """
    tm = manifest.get("training_matrix")
    if tm is None:
        return
    if not isinstance(tm, dict):
        _bad(path, f"training_matrix is a {type(tm).__name__}, not an object")
    models, names, values = tm.get("models"), tm.get("datasets"), tm.get("values")
    for key, v in (("models", models), ("datasets", names), ("values", values)):
        if not isinstance(v, list):
            _bad(path, f"training_matrix.{key} is {'missing' if v is None else 'a ' + type(v).__name__}, not a list")
    if len(values) != len(models):
        _bad(path, f"training_matrix has {len(values)} rows for {len(models)} models")
    if len(values) > MAX_MATRIX_ROWS or len(names) > MAX_MATRIX_COLUMNS:
        _bad(path, f"training_matrix is {len(values):,} x {len(names):,}; at most {MAX_MATRIX_ROWS:,} models x "
                   f"{MAX_MATRIX_COLUMNS:,} datasets are read")
    for i, row in enumerate(values):
        if type(row) is not list or len(row) != len(names):
            what = f"{len(row)} values" if isinstance(row, list) else f"a {type(row).__name__}"
            _bad(path, f"training_matrix is not rectangular: row {i} has {what} for {len(names)} datasets")
    kinds = set(map(type, chain.from_iterable(values)))
    if not kinds <= {float, int, type(None)}:
        i, j, v = next((i, j, v) for i, row in enumerate(values) for j, v in enumerate(row)
                       if type(v) not in (float, int, type(None)))
        _bad(path, f"at training_matrix/values/{i}/{j}: {json.dumps(v)[:60]} is not a number or null")
    import numpy as np

    try:
        cells = np.array(values, dtype=float).reshape(len(values), len(names))
    except OverflowError:
        _bad(path, "training_matrix.values holds a number too large for a float")
    if np.isinf(cells).any():
        i, j = np.argwhere(np.isinf(cells))[0]
        _bad(path, f"training_matrix.values row {i}, dataset {j}: {cells[i, j]} is not a finite number")
    if tm.get("unclipped") is not None:
        _check_unclipped(tm["unclipped"], cells, path)


def _check_unclipped(rec, cells, path) -> None:
    """``training_matrix.unclipped``: three equally long lists naming observed cells of the matrix, finite values."""
    import numpy as np

    if not isinstance(rec, dict):
        _bad(path, f"training_matrix.unclipped is a {type(rec).__name__}, not an object")
    parts = [rec.get(k) for k in ("rows", "columns", "values")]
    if not all(isinstance(p, list) for p in parts) or len({len(p) for p in parts}) != 1:
        _bad(path, "training_matrix.unclipped needs rows, columns and values: lists of one length")
    if not all(type(v) is int for v in chain(parts[0], parts[1])) or not all(
            type(v) in (int, float) for v in parts[2]):
        _bad(path, "training_matrix.unclipped rows and columns must be integers, its values numbers")
    rows, cols = np.asarray(parts[0], dtype=np.int64), np.asarray(parts[1], dtype=np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= cells.shape[0] or cols.min() < 0 or cols.max() >= cells.shape[1]):
        _bad(path, f"training_matrix.unclipped names a cell outside the {cells.shape[0]} x {cells.shape[1]} matrix")
    try:
        values = np.asarray(parts[2], dtype=float)
    except OverflowError:
        _bad(path, "training_matrix.unclipped.values holds a number too large for a float")
    if not np.isfinite(values).all():
        _bad(path, "training_matrix.unclipped.values holds a number that is not finite")
    if rows.size and np.isnan(cells[rows, cols]).any():
        _bad(path, "training_matrix.unclipped names a cell that is missing (null) in training_matrix.values")


def schema_view(manifest: dict) -> dict:
    """``manifest`` with the training matrix cut to its first row, for the JSON Schema.

    :func:`check_structure` has already checked every row the same way, so the schema's
    verdict is the same and it does not walk millions of cells.
    """
    tm = manifest.get("training_matrix")
    if not isinstance(tm, dict) or not isinstance(tm.get("values"), list) or len(tm["values"]) <= 1:
        return manifest
    cut = {"values": tm["values"][:1]}
    rec = tm.get("unclipped")
    if isinstance(rec, dict):  # checked cell by cell in check_structure
        cut["unclipped"] = {k: (v[:1] if isinstance(v, list) else v) for k, v in rec.items()}
    return {**manifest, "training_matrix": {**tm, **cut}}


def check_numbers(doc, path, where: str = "") -> None:
    """Every number in ``doc`` (the training matrix's cells aside) finite and within float range.

    JSON allows ``1e400`` (infinite once read) and integers of any length (a float conversion
    later overflows): both are refused here, naming the field.
    """
    stack = [(doc, where)]
    while stack:
        v, w = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if (w == "training_matrix" and k == "values") or (w == "training_matrix.unclipped" and k != "description"):
                    continue  # check_structure
                stack.append((x, f"{w}.{k}" if w else str(k)))
        elif isinstance(v, list):
            stack.extend((x, f"{w}[{i}]") for i, x in enumerate(v))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            try:
                ok = math.isfinite(float(v))
            except OverflowError:
                ok = False
            if not ok:
                shown = str(v) if isinstance(v, float) else f"an integer of {len(str(abs(v)))} digits"
                _bad(path, f"{w or 'value'} is {shown}, not a finite number")


def check_consistency(manifest: dict, path) -> None:
    """What the schema cannot express and ``predict`` relies on."""
    def bad(msg):
        raise HarnessExtError(f"{path} is not a valid harness-ext manifest: {msg}")

    names = [d["name"] for d in manifest["datasets"]]
    if len(set(names)) != len(names):
        bad("a dataset name appears twice in datasets")
    known = set(names)
    missing = [s["name"] for s in manifest["subset"] if s["name"] not in known]
    if missing:
        bad(f"subset datasets not in datasets: {', '.join(map(repr, missing[:5]))}")
    weights = [d["weight"] for d in manifest["datasets"]]
    if any(w is None for w in weights):
        bad("every dataset needs a weight (a number >= 0)")
    if names and not sum(weights) > 0:
        bad("the dataset weights sum to 0")
    for d in manifest["datasets"]:
        n = d["normalisation"]
        for key in ("lo", "span", "chance"):
            if n.get(key) is None or not math.isfinite(n[key]):
                bad(f"dataset {d['name']!r}: normalisation {key} must be a finite number")
        # A normalised score is (x - lo) / span, then chance-corrected by 1 - chance: both must be positive.
        if not n["span"] > 0:
            bad(f"dataset {d['name']!r}: normalisation span is {n['span']}; it must be above 0 "
                "(a lower-is-better metric is flipped by normalisation.flip, not by a negative span)")
        if not n["chance"] < 1:
            bad(f"dataset {d['name']!r}: normalisation chance is {n['chance']}; it must be below 1")
    subset_names = {s["name"] for s in manifest["subset"]}
    for task, b in ((manifest.get("items") or {}).get("tasks") or {}).items():
        if b["dataset"] not in subset_names:
            bad(f"items of task {task!r}: dataset {b['dataset']!r} is not in the subset")
        if len(b["doc_ids"]) != len(b["weights"]) or not b["doc_ids"] or len(set(map(str, b["doc_ids"]))) != len(b["doc_ids"]):
            bad(f"items of task {task!r}: doc_ids and weights must be equally long, non-empty lists of distinct items")
        if not math.isfinite(b["cv_rmse_normalised"]) or not sum(b["weights"]) > 0:
            bad(f"items of task {task!r}: weights must sum above 0 and cv_rmse_normalised be finite")
    cal = manifest["prediction"].get("calibration")
    if cal is not None:
        fold, k = cal["fold"], cal["n_folds"]
        if len(fold) != manifest["source"]["n_models"]:
            bad(f"prediction.calibration labels {len(fold)} models, the source has {manifest['source']['n_models']}")
        if len(cal["subsets"]) != k or set(fold) != set(range(k)):
            bad(f"prediction.calibration needs one subset per fold and every fold 0..{k - 1} used")
        for f, sub in enumerate(cal["subsets"]):
            if len(set(sub)) != len(sub) or not set(sub) <= known:
                bad(f"prediction.calibration subset of fold {f}: names must be distinct datasets of the manifest")
    tm = manifest.get("training_matrix")
    if tm is not None:
        if list(tm["datasets"]) != names:  # its shape: check_structure
            bad("training_matrix datasets differ from the manifest's datasets")
    elif not manifest["source"].get("store"):
        bad("it embeds no training matrix and names no store to rebuild it from")
    from dataclasses import fields

    from ...store.matrix import MatrixQuery

    allowed = {f.name for f in fields(MatrixQuery)}
    unknown = sorted(set(manifest["source"]["query"]) - allowed)
    if unknown:
        bad(f"source.query has unknown keys {', '.join(map(repr, unknown))} (known: {', '.join(sorted(allowed))})")
    from .lm_eval_release import check_release_field

    check_release_field(manifest, path)  # absent from manifests written before it: read as they are


def check_predictor_params(name: str, params: dict, cls) -> None:
    """Unknown parameters, or values of another type than the predictor's defaults, are clear errors.

    Raises
    ------
    HarnessExtError
        Naming the parameter, what was given and what the predictor expects.
    """
    try:
        defaults = cls().get_params(deep=False)
    except Exception:  # noqa: BLE001 - a predictor that needs arguments: check names only where we can
        return
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise HarnessExtError(f"predictor {name!r} has no parameter {', '.join(map(repr, unknown))}; "
                              f"its parameters are {', '.join(sorted(defaults)) or 'none'}")
    for key, value in params.items():
        default = defaults[key]
        if default is None or value is None:
            continue
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, (int, float)):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif isinstance(default, str):  # a mode with numeric settings too ("auto" or a rank of 3)
            ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
        else:
            ok = True
        if not ok:
            raise HarnessExtError(f"predictor {name!r} parameter {key!r} is {value!r}; expected a "
                                  f"{type(default).__name__} like its default {default!r}")
