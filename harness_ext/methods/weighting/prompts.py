"""Prompt-level matrices (models x prompts): from a CSV of another tool or from the store's lm-eval per-sample scores (Ailem et al. §3.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from ...errors import HarnessExtError, MethodError
from ...report import plural


def read_prompt_matrix(path, layout: str = "prompt-rows") -> pd.DataFrame:
    """Read a prompt-level score CSV and return it as ``models x prompts``.

    Parameters
    ----------
    path : str or Path
        CSV whose first column is the row label and whose header holds the
        column labels. Values are 0/1 (correct/incorrect) or scores in [0, 1]
        (e.g. ROUGE); empty cells are missing.
    layout : {"prompt-rows", "model-rows"}
        ``prompt-rows`` (default, the paper's Q): one row per prompt, one
        column per model. ``model-rows``: one row per model, one column per prompt.

    Notes
    -----
    For matrices made by other tools; lm-eval per-sample logs are read
    directly (:func:`samples_matrix`, ``harness-ext weights --samples-task``).
    """
    import io

    from ...safe_input import read_text

    path = Path(path)
    if layout not in ("prompt-rows", "model-rows"):
        raise HarnessExtError(f"--prompts-layout must be prompt-rows or model-rows, got {layout!r}")
    text = read_text(path, "prompt-level CSV")
    try:
        raw = pd.read_csv(io.StringIO(text), index_col=0)
    except Exception as exc:  # noqa: BLE001 - any parse failure is the user's file
        raise HarnessExtError(f"{path}: cannot read CSV: {exc}") from exc
    df = raw.apply(pd.to_numeric, errors="coerce").astype(float)
    bad = df.isna().to_numpy() & raw.notna().to_numpy()
    if bad.any():  # the cell, not pandas' "at position 1" of a column it does not name
        r, c = map(int, np.argwhere(bad)[0])
        raise HarnessExtError(f"{path}: {plural(int(bad.sum()), 'score')} not a number, the first {raw.iat[r, c]!r} "
                              f"in row {raw.index[r]!r}, column {raw.columns[c]!r}")
    if layout == "prompt-rows":
        df = df.T
    df.index = df.index.map(str)
    df.columns = df.columns.map(str)
    vals = df.to_numpy()
    vals = vals[~np.isnan(vals)]
    if vals.size == 0:
        raise HarnessExtError(f"{path}: no scores")
    if vals.min() < 0 or vals.max() > 1:
        raise HarnessExtError(f"{path}: prompt-level scores must lie in [0, 1] (got {vals.min():g}..{vals.max():g})")
    df.index.name, df.columns.name = "model", "prompt"
    return df



def samples_matrix(store, task: str, metric: Optional[str] = "acc", models: Optional[str] = None,
                   exclude_models=None) -> pd.DataFrame:
    """Models x prompts matrix of one lm-eval task from the store's per-sample scores.

    Parameters
    ----------
    store : harness_ext.store.db.Store
    task, metric : str
        As in :func:`harness_ext.store.samples.prompt_matrix` (``metric`` None: ``acc``, or the task's only one).
    models : str, optional
        Glob on model names.
    exclude_models : str or sequence of str, optional
        Globs on model names left out after ``models`` (``--exclude-models``); those that matched no model
        are ``attrs["unmatched_exclude"]``.

    Returns
    -------
    pandas.DataFrame
        ``models x prompts`` (columns are the lm-eval ``doc_id``, as strings),
        restricted to the prompts every selected model answered, so the
        analyses that need a complete matrix run; ``attrs`` carries ``task``,
        ``metric``, ``binary``, ``n_dropped_prompts`` and ``unmatched_exclude``.

    Raises
    ------
    MethodError
        If fewer than 2 models or 2 common prompts remain.

    References
    ----------
    Ailem et al. §3.1: the prompt x model performance matrix Q (here ``Q.T``).
    """
    from ...store.globs import select_names
    from ...store.samples import prompt_matrix

    Q = prompt_matrix(store, task, metric)
    metric = Q.attrs["metric"]  # the one chosen when none was asked for
    kept, unmatched = select_names(list(Q.columns), models, exclude_models)
    if models or exclude_models:
        Q = Q[kept]
    if Q.shape[1] < 2:
        raise MethodError(f"task {task!r} ({metric}): {Q.shape[1]} model(s) match; the analyses need at least 2")
    complete = Q.dropna(axis=0, how="any")
    if len(complete) < 2:
        raise MethodError(f"task {task!r} ({metric}): fewer than 2 prompts were answered by all {Q.shape[1]} models")
    df = complete.T.astype(float)
    df.columns = [str(c) for c in df.columns]
    df.index.name, df.columns.name = "model", "prompt"
    df.attrs = {**Q.attrs, "n_dropped_prompts": int(len(Q) - len(complete)), "unmatched_exclude": unmatched}
    return df
