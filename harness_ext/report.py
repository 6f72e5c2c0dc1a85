"""Shared output helpers: plain-text tables, plots, progress bars.

One place for these so every command prints tables and draws figures the same
way. matplotlib is optional (the ``plot`` extra) and imported lazily with the
non-interactive Agg backend.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable, Optional


def format_table(df, floatfmt: str = "{:.3f}", index: bool = True) -> str:
    """Render a DataFrame as an aligned plain-text table (what the CLI prints).

    A list of dicts of strings (one per row) is rendered the same way without
    importing pandas, for commands that should start instantly (``plugins``).
    """
    if isinstance(df, list):
        columns = list(df[0]) if df else []
        cells = [[str(r.get(c, "")) for c in columns] for r in df]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
        return "\n".join(" ".join(v.rjust(w) for v, w in zip(line, widths)) for line in [columns] + cells)
    import pandas as pd

    shown = df.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else floatfmt.format(v))
    return shown.to_string(index=index)


def get_pyplot():
    """Return ``matplotlib.pyplot`` with the Agg backend, or raise a clear error."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        from .errors import HarnessExtError

        raise HarnessExtError("plotting needs matplotlib: pip install 'harness-ext[plot]'") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path) -> Path:
    """Save a figure (creating parent folders) and close it; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    get_pyplot().close(fig)
    return path


def progress(iterable: Iterable, total: Optional[int] = None, desc: str = "", disable: Optional[bool] = None):
    """A tqdm progress bar on stderr, silenced when stderr is not a terminal or
    ``HARNESS_EXT_NO_PROGRESS`` is set (CI logs stay readable)."""
    from tqdm.auto import tqdm

    if disable is None:
        disable = bool(os.environ.get("HARNESS_EXT_NO_PROGRESS")) or not sys.stderr.isatty()
    return tqdm(iterable, total=total, desc=desc, disable=disable, file=sys.stderr, leave=False)
