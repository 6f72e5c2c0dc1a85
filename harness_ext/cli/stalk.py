"""The ``stalk`` command: dataset-pair and model-pair relationships (:mod:`harness_ext.methods.stalk`).

Options are in :mod:`harness_ext.cli.options`; this module reads the matrix, runs
:func:`~harness_ext.methods.stalk.stalk`, shows the :class:`~harness_ext.methods.stalk.StalkReport`
and writes its tables and heatmap to ``--out``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..safe_output import csv_text, write_file

log = logging.getLogger(__name__)


def run(args) -> int:
    from ..errors import HarnessExtError
    from ..methods.stalk import default_axes, stalk
    from .options import matrix_from_args
    from .output import emit

    df = matrix_from_args(args, fingerprint=False)
    if args.axis is None:
        axes, note = default_axes(df.shape[0])
        if note:
            log.warning(note)
    else:
        axes = ("datasets", "models") if args.axis == "both" else (args.axis,)
    for axis in axes:
        if (df.shape[1] if axis == "datasets" else df.shape[0]) < 2:
            raise HarnessExtError(f"stalk needs at least 2 {axis}; the matrix is {df.shape[0]} models x {df.shape[1]} datasets")
    report = stalk(df, threshold=args.threshold, min_points=args.min_points, axes=axes, min_fraction=args.min_fraction,
                   benchmark=", ".join(args.benchmark or []))
    emit(args, report)
    for w in report.warnings:
        log.warning(w)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "stalk_counts.csv"]
    write_file(written[0], csv_text(report.to_frame()))
    for axis, res in report.items():
        # Model pairs grow quadratically (838 Pythia runs: 350k pairs, ~90 MB); compress big tables. gzip's
        # fastest level: the default (9) doubled the write (Open LLM v2's 4,494 models: 10M pairs, minutes) for
        # a file 15% smaller.
        big = len(res.pairs) > 100_000
        p = out / f"stalk_{axis[:-1]}_pairs{'.csv.gz' if big else '.csv'}"
        write_file(p, lambda tmp: csv_text(res.pairs, tmp, index=False, float_format="%.6g", compression={
            "method": "gzip", "compresslevel": 1} if big else None))
        written.append(p)
    written.append(report.plot(out / "stalk_heatmap.png"))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0
