"""Complete validation of a manifest before ``predict`` uses it.

A manifest is a file a user may have edited or received from someone else, so
everything ``predict`` reads is checked first, each failure one clear
:class:`~harness_ext.errors.HarnessExtError`: size and nesting limits while
loading (no ``RecursionError``), no ``NaN``/``Infinity`` literals, the version
(another major version says which tool wrote it), the JSON Schema
(``manifest-v1.schema.json``: types, non-negative errors and weights, known
query keys), then what a schema cannot say: a rectangular training matrix over
the manifest's datasets, subset names among the datasets, usable weights and
normalisation, the nested calibration's folds (one label per model, one subset of
the manifest's datasets per fold), and predictor parameters the predictor accepts,
of the types it expects.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import HarnessExtError

#: Largest manifest file read (an embedded 2,000,000-cell training matrix is ~40 MB).
MAX_MANIFEST_BYTES = 256 * 1024**2
#: Deepest nesting of JSON arrays/objects accepted (a manifest needs 5).
MAX_DEPTH = 32
#: The manifest major version this tool reads.
READS_MAJOR = "1"


def load_json(path: Path) -> dict:
    """Parse a manifest file within the size and depth limits, refusing NaN/Infinity literals.

    Read through :func:`harness_ext.safe_input.load_document` (a regular UTF-8 file of at most
    :data:`MAX_MANIFEST_BYTES`, its nesting measured before it is parsed); then the top level must be an object.
    """
    from ..errors import SideFileError
    from ..safe_input import load_document

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
        from .. import __version__

        raise HarnessExtError(f"{path} is manifest version {version} (written by {by}); this harness-ext {__version__} "
                              f"reads version {READS_MAJOR}.x: use the matching harness-ext or run 'reduce' again")


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
        if n["span"] == 0:
            bad(f"dataset {d['name']!r}: normalisation span is 0")
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
        if list(tm["datasets"]) != names:
            bad("training_matrix datasets differ from the manifest's datasets")
        if len(tm["values"]) != len(tm["models"]):
            bad(f"training_matrix has {len(tm['values'])} rows for {len(tm['models'])} models")
        ragged = [i for i, row in enumerate(tm["values"]) if len(row) != len(names)]
        if ragged:
            bad(f"training_matrix is not rectangular: row {ragged[0]} has {len(tm['values'][ragged[0]])} values "
                f"for {len(names)} datasets")
    elif not manifest["source"].get("store"):
        bad("it embeds no training matrix and names no store to rebuild it from")
    from dataclasses import fields

    from ..store.matrix import MatrixQuery

    allowed = {f.name for f in fields(MatrixQuery)}
    unknown = sorted(set(manifest["source"]["query"]) - allowed)
    if unknown:
        bad(f"source.query has unknown keys {', '.join(map(repr, unknown))} (known: {', '.join(sorted(allowed))})")


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
        elif isinstance(default, str):
            ok = isinstance(value, str)
        else:
            ok = True
        if not ok:
            raise HarnessExtError(f"predictor {name!r} parameter {key!r} is {value!r}; expected a "
                                  f"{type(default).__name__} like its default {default!r}")
