"""The ``matrix`` command: the models x datasets matrix the selection options describe, printed as CSV or
written to a ``.csv``/``.parquet`` file."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from ..report import Result
from .shared_options import SCALE_AXIS

log = logging.getLogger(__name__)


class PerformanceMatrix(Result):
    """A models x datasets matrix (``frame``) with what the store knows about it (``frame.attrs``).

    Its text is the CSV (``render``); its JSON the rows as records (one per model) and a summary.
    """
    command = "matrix"

    def __init__(self, frame):
        self.frame = frame

    def summary(self) -> dict:
        df = self.frame
        shots = df.attrs.get("shots") or {}
        return {"models": int(df.shape[0]), "datasets": int(df.shape[1]),
                "missing": float(df.isna().to_numpy().mean()) if df.size else 0.0,
                "no_chance": list(df.attrs.get("no_chance") or []),
                "training_dependent": list(df.attrs.get("training_dependent") or []),
                "dropped_cells": int(shots.get("dropped_cells") or 0)}

    def tables(self) -> dict:
        return {"matrix": self.frame}

    def render(self) -> str:
        from ..safe_output import csv_text

        return csv_text(self.frame, float_format="%.4f").rstrip("\n")

    def plot(self, path=None):
        """Heatmap of the matrix, models x datasets; missing cells white. The path when ``path`` is given."""
        import numpy as np

        from ..report import get_pyplot, save_figure

        plt = get_pyplot()
        df = self.frame
        fig, ax = plt.subplots(figsize=(min(2 + 0.25 * df.shape[1], 24), min(2 + 0.18 * df.shape[0], 24)))
        img = ax.imshow(np.ma.masked_invalid(df.to_numpy(dtype=float)), aspect="auto", interpolation="nearest",
                        cmap="viridis")
        for axis, labels, limit in ((ax.xaxis, df.columns, 80), (ax.yaxis, df.index, 120)):
            if len(labels) <= limit:
                axis.set_ticks(range(len(labels)))
                axis.set_ticklabels([str(x) for x in labels], fontsize=6, rotation=90 if axis is ax.xaxis else 0)
            else:
                axis.set_ticks([])
        fig.colorbar(img, ax=ax, fraction=0.03)
        bench = ", ".join((df.attrs.get("query") or {}).get("benchmarks") or [])
        ax.set_title(f"{bench + ': ' if bench else ''}{df.shape[0]} models x {df.shape[1]} datasets, "
                     f"{df.isna().to_numpy().mean():.1%} missing (white)", fontsize=9)
        return save_figure(fig, path) if path is not None else fig

    def notes(self) -> list:
        """What a user should know about the matrix (datasets without a chance level or a scale, cells left out)."""
        df = self.frame
        out = []
        for what, key in (("no known chance level (not chance-corrected; give one with --chance-file)", "no_chance"),
                          ("no known scale (min-max over these models; declare bounds to fix it)", "training_dependent")):
            names = df.attrs.get(key) or []
            if names:
                out.append(f"{len(names)} of {df.shape[1]} datasets have {what}: {', '.join(names[:8])}"
                           + (" ..." if len(names) > 8 else ""))
        from ..store.dataset_links import links_note
        from ..store.pivot import shots_left_out_note

        out += [n for n in (shots_left_out_note(df.attrs), links_note(df.attrs)) if n]
        if df.attrs.get("clipped"):
            from .aggregate_note import clipped_note

            out.append(clipped_note(df))
        if df.attrs.get("model_aliases"):
            out.append(f"{len(df.attrs['model_aliases'])} rows merge several names of one model ('harness-ext models "
                       "--merged'; --no-aliases keeps names apart)")
        return out


def run(args) -> int:
    from ..errors import HarnessExtError
    from ..safe_output import csv_text, write_file
    from .options import matrix_from_args
    from .output import emit

    # The fingerprint only for a Parquet file: it keeps the matrix's attrs, so a matrix read back from it can go
    # to the Python API's reduce(), whose manifest records the fingerprint (CSV and the printed table keep none).
    parquet = bool(args.output) and str(args.output).endswith(".parquet")
    result = PerformanceMatrix(matrix_from_args(args, require_benchmark=False, fingerprint=parquet, say_floor=False))
    df = result.frame
    if args.output:
        out = str(args.output)
        if Path(out).is_dir():
            raise HarnessExtError(f"matrix --out names a file (.csv or .parquet); {out} is a directory")
        if out.endswith(".parquet"):
            try:
                write_file(out, df.to_parquet)
            except ImportError as exc:
                raise HarnessExtError("writing Parquet needs pyarrow: pip install 'harness-ext[parquet]'") from exc
            except OSError as exc:
                raise HarnessExtError(f"cannot write {out}: {exc.strerror or exc}") from exc
        else:
            try:
                write_file(out, csv_text(df))
            except OSError as exc:
                raise HarnessExtError(f"cannot write {out}: {exc.strerror or exc}") from exc
        print(f"wrote {df.shape[0]} models x {df.shape[1]} datasets to {out}")
        emit(args, result, show=False)
    else:
        # The CSV is the output (stdout, pipeable); its shape goes to stderr. With --json the JSON is the output.
        if getattr(args, "json_out", None) is None and not getattr(args, "quiet", 0):
            how = getattr(args, "normalise", "chance")
            print(f"{df.shape[0]} models x {df.shape[1]} datasets, {df.isna().to_numpy().mean():.1%} missing; scores "
                  f"{SCALE_AXIS.get(how, how)} (--normalise {how})", file=sys.stderr)
        emit(args, result, show=getattr(args, "json_out", None) is None)
    for note in result.notes():
        log.warning(note)
    return 0


def oriented_matrix(df, command: str) -> "pandas.DataFrame":
    """``df`` with its raw lower-is-better columns negated (:func:`harness_ext.methods.ranking.orient_raw_columns`),
    said in a note naming them: ``weights``, ``prowl`` and ``compare`` rank models by score, higher as better."""
    from ..methods.ranking import orient_raw_columns
    from ..report import listed, plural

    out, flipped = orient_raw_columns(df)
    if flipped:
        from .logs import NOTE

        logging.getLogger(f"harness_ext.{command}").log(
            NOTE, f"{plural(len(flipped), 'lower-is-better column')} read raw (--normalise none) negated so that "
                  f"higher is better, as {command} ranks models: {listed(flipped, 6)}; its scores there are the "
                  f"negatives of the stored ones")
    return out
