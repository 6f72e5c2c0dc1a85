"""CrossPred-LVLM result summaries (Zhao et al., "Can We Predict Performance of
Large Models across Vision-Language Tasks?").

Two files, both claimed by exact file name and structure:

* ``result_summary.json``: ``{model: {dataset: score}}`` -- the 108 x 176
  matrix of the paper, one main metric per dataset: accuracy, or BARTScore
  (negative, higher is better) for the open-ended "Whole dataset (...)" tasks.
* ``all_result_summary.json``: ``{model: {dataset: {metric: value}}}`` with
  ``acc`` / ``prec`` / ``rec`` / ``f1`` / ``bart`` / ``bert`` (the PTF tensor);
  it also holds two ScienceQA tasks the paper's matrix leaves out.

Every record has ``benchmark="crosspred"``. The main metric of a dataset
(``acc`` where present, else ``bart``; the paper's rule) is ``primary``; the
others are secondary. Both files agree on the main metric's values: ingesting
both keeps each main-metric cell from both sources (``info`` counts 46,644
results for 30,552 cells), with no conflict, and matrices read it once. Accuracy-type metrics are declared on [0, 1]; BARTScore has no
declared range, so chance normalisation min-max scales it over models. No
random baseline is given by the source. A score that is not a number, or an
accuracy-type score outside [0, 1], refuses the file naming the model and
dataset; a cell written as null or NaN is left out and counted in a note.

If ``model_profiles.json`` / ``dataset_profiles.json`` sit next to the file,
each model's and dataset's profile goes into ``model_metadata`` /
``dataset_metadata``; :func:`load_profiles` turns them into the feature
matrices constrained PMF takes.

References
----------
Zhao et al. §4.1, Table 6-9; data from the
CrossPred-LVLM repository (``data/``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Optional, Sequence

from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
from harness_ext.report import listed
from harness_ext.types import Adapter, ResultRecord, SourceFile

BENCHMARK = "crosspred"
FILE_NAMES = ("result_summary.json", "all_result_summary.json")
METRICS = frozenset({"acc", "prec", "rec", "f1", "bart", "bert"})
#: Metrics bounded in [0, 1] (declared so normalisation does not min-max them).
UNIT_METRICS = frozenset({"acc", "prec", "rec", "f1"})
_TASK = re.compile(r"\(([^()]+)\)\s*$")


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _shape(doc) -> Optional[str]:
    """``"flat"`` for {model: {dataset: score}}, ``"nested"`` for {model: {dataset: {metric: value}}}, else None."""
    if not isinstance(doc, dict) or not doc:
        return None
    first = next(iter(doc.values()))
    if not isinstance(first, dict) or not first:
        return None
    # The first cell that is a score or a metric block decides: a missing or broken first cell is then
    # reported by read() with its model and dataset, not as a file no adapter claims.
    inner = next((v for v in first.values() if _is_number(v) or isinstance(v, dict)), None)
    if _is_number(inner):
        return "flat"
    if isinstance(inner, dict) and inner and set(inner) <= METRICS:
        return "nested"
    return None


def can_handle(src: SourceFile) -> bool:
    """Claim only ``result_summary.json`` (flat) and ``all_result_summary.json`` (nested)."""
    if src.is_dir or src.path.name not in FILE_NAMES:
        return False
    want = "flat" if src.path.name == "result_summary.json" else "nested"
    return _shape(src.try_json()) == want


def main_metric(dataset: str, metrics=None) -> str:
    """The paper's main metric of a dataset: accuracy, or BARTScore for "Whole dataset (...)" tasks."""
    if metrics is not None:
        return "acc" if "acc" in metrics else ("bart" if "bart" in metrics else sorted(metrics)[0])
    return "bart" if dataset.startswith("Whole dataset") else "acc"


def _sibling_json(src: SourceFile, name: str) -> dict:
    p = src.path.with_name(name)
    if not p.is_file():
        return {}
    from harness_ext.errors import SideFileError
    from harness_ext.safe_input import load_document

    try:
        doc = load_document(p, "CrossPred profiles", "json")
    except SideFileError:
        return {}  # profiles are optional decoration; a broken one must not block the scores
    return doc if isinstance(doc, dict) else {}


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _record(src, model, dataset, metric, value, primary, mprof, dprof) -> ResultRecord:
    m = _TASK.search(dataset)
    unit = metric in UNIT_METRICS
    if not _is_number(value):
        raise IngestError(src.path, f"{model!r} on {dataset!r} ({metric}): {value!r} is not a number")
    if unit and not 0.0 <= value <= 1.0:
        raise IngestError(src.path, f"{model!r} on {dataset!r}: {metric} = {value!r} is outside [0, 1]; CrossPred "
                                    "writes it as a proportion")
    return ResultRecord(
        model=model, benchmark=BENCHMARK, dataset=dataset, metric=metric, value=float(value),
        higher_is_better=True, primary=primary, task=m.group(1) if m else None,
        min_score=0.0 if unit else None, max_score=1.0 if unit else None,
        model_metadata=dict(mprof), dataset_metadata=dict(dprof),
    )


def read(src: SourceFile):
    doc = src.json()
    shape = _shape(doc)
    if shape is None:
        raise IngestError(src.path, "not a CrossPred result summary ({model: {dataset: score}} or {model: {dataset: {metric: value}}})")
    mprofiles = _sibling_json(src, "model_profiles.json")
    dprofiles = _sibling_json(src, "dataset_profiles.json")
    missing = []  # (model, dataset) cells written as null or NaN: left out, and counted in a note
    out = []
    for model, row in doc.items():
        if not isinstance(row, dict):
            raise IngestError(src.path, f"model {model!r}: expected an object of datasets, got {type(row).__name__}")
        mprof = mprofiles.get(model) or {}
        for dataset, cell in row.items():
            dprof = dprofiles.get(dataset) or {}
            if shape == "flat":
                if _missing(cell):
                    missing.append(f"{model} on {dataset}")
                    continue
                out.append(_record(src, model, dataset, main_metric(dataset), cell, True, mprof, dprof))
                continue
            if not isinstance(cell, dict):
                raise IngestError(src.path, f"{model!r} on {dataset!r}: expected {{metric: value}}, got {cell!r}")
            main = main_metric(dataset, cell)
            for metric, value in cell.items():
                if _missing(value):
                    missing.append(f"{model} on {dataset} ({metric})")
                    continue
                out.append(_record(src, model, dataset, metric, value, metric == main, mprof, dprof))
    if missing:
        src.note(f"{len(missing)} score{'s' * (len(missing) != 1)} written as null or NaN left out: "
                 + listed(missing, 5))
    return out


def load_profiles(directory, models: Sequence[str], datasets: Sequence[str], dataset_profile: str = "des_cluster"):
    """Model and dataset profile matrices for constrained PMF, aligned with ``models`` / ``datasets``.

    Model profile (Zhao et al. §3.5 "custom profiles", Table 8): log number of LLM
    parameters (z-scored; unknown -> 0, the mean), multi-hot vision encoders,
    one-hot model family. Dataset profile: the one-hot cluster vector named by
    ``dataset_profile`` -- ``des_cluster`` (MPNet on descriptions, D1),
    ``clip_cluster`` (D2), ``hs_cluster`` (LLaVA hidden states, D3) or
    ``gt_cluster`` (oracle clusters of the full matrix). Names without a
    profile get a zero row (no side information).

    Returns
    -------
    (H, G)
        ``(len(models), K)`` and ``(len(datasets), J)`` float arrays.

    References
    ----------
    Zhao et al. §3.5, §4.4 (Fig. 5).
    """
    import numpy as np  # only here: registering the adapter (harness-ext plugins) imports no numpy

    d = Path(directory)
    if d.is_file():
        d = d.parent
    from harness_ext.safe_input import load_document, wrong_shape

    mp, dp = (load_document(d / name, "CrossPred profiles", "json") for name in ("model_profiles.json", "dataset_profiles.json"))
    for name, doc in (("model_profiles.json", mp), ("dataset_profiles.json", dp)):
        if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
            raise wrong_shape(d / name, "CrossPred profiles", "the top level", "a mapping of name -> profile mapping", doc)
    encoders = sorted({e for v in mp.values() for e in (v.get("vision_encoder") or [])})
    families = sorted({str(v.get("model_family")) for v in mp.values() if v.get("model_family")})
    K = 1 + len(encoders) + len(families)
    H = np.zeros((len(models), K))
    logp = np.full(len(models), np.nan)
    for i, name in enumerate(models):
        prof = mp.get(name)
        if not prof:
            continue
        if _is_number(prof.get("num_params_llm")) and prof["num_params_llm"] > 0:
            logp[i] = math.log(prof["num_params_llm"])
        for e in prof.get("vision_encoder") or []:
            H[i, 1 + encoders.index(e)] = 1.0
        if prof.get("model_family"):
            H[i, 1 + len(encoders) + families.index(str(prof["model_family"]))] = 1.0
    from harness_ext.flat import flat_slices

    # Models of one size: log(7) five times has an sd of 2e-16, which made rounding a size difference.
    if np.isfinite(logp).sum() > 1 and not flat_slices(logp)[0] and np.nanstd(logp) > 0:
        H[:, 0] = np.nan_to_num((logp - np.nanmean(logp)) / np.nanstd(logp), nan=0.0)
    width = max((len(v.get(dataset_profile) or []) for v in dp.values()), default=0)
    if width == 0:
        raise IngestError(d, f"dataset profiles have no {dataset_profile!r} vectors")
    G = np.zeros((len(datasets), width))
    for j, name in enumerate(datasets):
        vec = (dp.get(name) or {}).get(dataset_profile)
        if vec:
            G[j, : len(vec)] = np.asarray(vec, dtype=float)
    return H, G


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="crosspred",
        description="CrossPred-LVLM result_summary.json / all_result_summary.json (Zhao et al., 108 LVLMs x 176 tasks)",
        can_handle=can_handle,
        read=read,
    )
