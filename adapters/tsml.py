"""Adapter for tsml-eval resample tables (the 2023 time-series classification bake-off).

Layout (``tsml_eval/publications/y2023/tsc_bakeoff/results/<group>/``)::

    <Classifier>_<metric>.csv
    Resamples:,0,1,2,...,29
    ACSF1,0.91,0.8,...          <- one row per UCR/UEA dataset, one value per resample

``<metric>`` is ``accuracy``, ``auroc``, ``balacc`` or ``logloss``; older tsml
result archives spell them ``ACC``, ``AUROC``, ``BALACC`` and ``NLL`` and are read
the same way. Each dataset row becomes one :class:`~harness_ext.types.ResultRecord`:
``value`` is the mean over the resamples present, ``stderr`` the sample standard
deviation (ddof=1) over sqrt(n), ``n_samples`` the number of resamples.

Files are checked for completeness, since a truncated or concatenated file
would otherwise give a plausible but wrong mean: every dataset row has a
finite value for every resample the header lists, the header appears once,
a dataset appears once, and the file ends with a line break. Accuracy,
balanced accuracy and AUROC resamples must lie in [0, 1], log loss at 0 or
above.

Not read
--------
* ``table_c4.csv`` (first cell ``Estimators:``): a summary table of mean
  accuracies of 8 classifiers with abbreviated names (MR-H, FP, W 2.0, ...) on
  the 30 new ``*_eq`` datasets. The same numbers are in ``results/best/*``
  with full names, so the file is not claimed and ingestion skips it.

The ``best`` group repeats 8 classifiers on the 112 original datasets plus 30
``*_eq`` datasets only those 8 have. Its values equal those of the family
groups except H-InceptionTime on ShapesAll and SmallKitchenAppliances (all four
metrics, differences below 4e-4), which the store reports as 8 conflicts and
resolves by keeping the first-ingested copy (``best/``, walked first). The
112 x 40 complete matrix is what ``--dense`` leaves.

Chance baselines: AUROC has chance 0.5; accuracy and balanced accuracy have
chance 1 / n_classes, which these files do not give, so it is left unknown.
"""

from __future__ import annotations

import math
import re
from typing import Iterator

from harness_ext.errors import IngestError
from harness_ext.safe_input import csv_rows
from harness_ext.hookspecs import hookimpl
from harness_ext.types import Adapter, ResultRecord, SourceFile

BENCHMARK = "tsc_bakeoff"

#: file-name metric suffix -> (metric, higher_is_better)
METRIC_SUFFIXES = {
    "accuracy": ("accuracy", True),
    "auroc": ("auroc", True),
    "balacc": ("balacc", True),
    "logloss": ("logloss", False),
    "ACC": ("accuracy", True),
    "AUROC": ("auroc", True),
    "BALACC": ("balacc", True),
    "NLL": ("logloss", False),
}
PRIMARY_METRIC = "accuracy"

_NAME_RE = re.compile(r"^(?P<clf>.+)_(?P<suffix>" + "|".join(METRIC_SUFFIXES) + r")\.csv$")
_HEADER = b"Resamples:"


def parse_filename(name: str):
    """``(classifier, metric, higher_is_better)`` for a tsml results file name, or None."""
    m = _NAME_RE.match(name)
    if not m:
        return None
    metric, hib = METRIC_SUFFIXES[m.group("suffix")]
    return m.group("clf"), metric, hib


def can_handle(src: SourceFile) -> bool:
    """Claim only ``<Clf>_<metric>.csv`` files whose first cell is ``Resamples:``."""
    if src.is_dir or parse_filename(src.path.name) is None:
        return False
    return src.head.lstrip(b"\xef\xbb\xbf").startswith(_HEADER)


def read(src: SourceFile) -> Iterator[ResultRecord]:
    """Yield one record per dataset row: mean over resamples, stderr, resample count.

    Raises
    ------
    IngestError
        On a malformed header, a non-numeric value, or a row longer than the header.
    """
    import numpy as np  # here, not at the top: registering the adapter (harness-ext plugins) imports no numpy

    parsed = parse_filename(src.path.name)
    if parsed is None:
        raise IngestError(src.path, "file name is not <Classifier>_<accuracy|auroc|balacc|logloss>.csv")
    clf, metric, hib = parsed
    rows = csv_rows(src.text.lstrip("\ufeff"), ",", src.path)
    if not rows or not rows[0] or rows[0][0].strip() != "Resamples:":
        raise IngestError(src.path, "first cell is not 'Resamples:'")
    n_cols = len(rows[0]) - 1
    if n_cols < 1:
        raise IngestError(src.path, "header lists no resamples")
    if not src.text.endswith(("\n", "\r")):
        raise IngestError(src.path, "truncated: the last line has no line break")
    group = src.path.parent.name
    seen: dict = {}
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or not any(c.strip() for c in row):
            continue
        dataset = row[0].strip()
        if dataset == "Resamples:":
            raise IngestError(src.path, f"line {lineno}: a second header (two files concatenated?)")
        cells = [c.strip() for c in row[1:]]
        if len(cells) > n_cols:
            raise IngestError(src.path, f"line {lineno} ({dataset}): {len(cells)} values for {n_cols} resamples")
        if not dataset:
            raise IngestError(src.path, f"line {lineno}: empty dataset name")
        if dataset in seen:
            raise IngestError(src.path, f"line {lineno}: dataset {dataset!r} again (first on line {seen[dataset]})")
        seen[dataset] = lineno
        try:
            vals = np.array([float(c) for c in cells if c], dtype=float)
        except ValueError as exc:
            raise IngestError(src.path, f"line {lineno} ({dataset}): not a number: {exc}") from None
        n_ok = int(np.isfinite(vals).sum())
        if n_ok < n_cols:
            raise IngestError(src.path, f"line {lineno} ({dataset}): {n_ok} of {n_cols} resamples have a finite value "
                                        "(truncated or incomplete file)")
        bounded = metric != "logloss"
        # One resample out of range would move the mean and pass as a plausible score (the published AUROC files
        # hold a few 1.0000000000000002: rounding, let through).
        bad = vals[(vals < -1e-9) | (vals > 1.0 + 1e-9)] if bounded else vals[vals < -1e-9]
        if bad.size:
            raise IngestError(src.path, f"line {lineno} ({dataset}): {metric} {bad[0]:g} is outside "
                                        f"{'[0, 1]' if bounded else '[0, inf)'} ({bad.size} such resamples)")
        n = int(vals.size)
        stderr = float(vals.std(ddof=1) / math.sqrt(n)) if n > 1 else None
        yield ResultRecord(
            model=clf,
            benchmark=BENCHMARK,
            dataset=dataset,
            metric=metric,
            value=float(vals.mean()),
            stderr=stderr,
            n_samples=n,
            higher_is_better=hib,
            random_baseline=0.5 if metric == "auroc" else None,
            baseline_source="chance AUROC" if metric == "auroc" else None,
            primary=metric == PRIMARY_METRIC,
            min_score=0.0 if bounded else None,
            max_score=1.0 if bounded else None,
            model_metadata={"tsml_group": group},
        )


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="tsml-bakeoff",
        can_handle=can_handle,
        read=read,
        description="tsml-eval resample tables <Clf>_{accuracy,auroc,balacc,logloss}.csv (TSC bake-off 2023); mean over resamples",
    )
