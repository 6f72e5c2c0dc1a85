"""Weighting schemes through the plugin registry, the weights file, and the per-scheme rank changes (Ailem et al. §3.3, §5.2.1, Fig. 2)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ...errors import MethodError, SideFileError
from ...report import Result, dumps, format_table, jsonable, listed
from ...safe_output import write_file
from .common import SCHEME_NAMES_DEFAULT, ranks_desc, section, short_name, weighted_scores


def _fit_accepts_columns(cls) -> bool:
    try:
        return "columns" in inspect.signature(cls.fit).parameters
    except (TypeError, ValueError):  # pragma: no cover - exotic callables
        return False


def make_scheme(scheme: str, random_state: int = 0, **params):
    """Instantiate a registered weighting scheme with ``random_state`` if it takes one."""
    from ...plugin_manager import get_registration

    reg = get_registration("weighting_schemes", scheme)
    cls = reg.cls
    try:
        accepted = set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):  # pragma: no cover
        accepted = set()
    if "random_state" in accepted and "random_state" not in params:
        params["random_state"] = random_state
    unknown = set(params) - accepted
    if unknown and "kwargs" not in accepted:
        raise MethodError(
            f"weighting scheme {reg.name!r} has no parameter(s) {sorted(unknown)}; "
            f"it takes {sorted(accepted - {'self'})}"
        )
    return reg, cls(**params)


def compute_weights(df: pd.DataFrame, scheme: str = "uniform", random_state: int = 0, **params) -> pd.Series:
    """Fit a registered weighting scheme on a matrix and return its weights.

    Parameters
    ----------
    df : pandas.DataFrame
        ``models x columns`` (datasets or prompts).
    scheme : str
        Registered scheme name (``harness-ext plugins`` lists them): ``uniform``,
        ``medoids``, ``distance``, ``inverse_distance``, ``random_simplex``, ``user``.
    random_state : int
        Passed to schemes that take a ``random_state`` (unless in ``params``).
    **params
        Scheme parameters, e.g. ``path=`` for ``user``, ``n_clusters=`` for the
        cluster schemes.

    Returns
    -------
    pandas.Series
        Weight per column (index = ``df.columns``), non-negative, summing to 1.
        ``series.attrs`` holds ``scheme`` (canonical name) and ``params`` (the
        estimator's ``get_params()``), which the manifest records as "the
        weighting used for the aggregate", and ``source`` when the scheme
        reports where its weights came from (``user`` weights written by
        ``--emit-weights``: that scheme and its parameters).

    References
    ----------
    Ailem et al. §3.3.
    """
    if not isinstance(df, pd.DataFrame):
        raise MethodError("compute_weights needs a pandas DataFrame (models x columns)")
    reg, est = make_scheme(scheme, random_state=random_state, **params)
    if _fit_accepts_columns(type(est)):
        est.fit(df.to_numpy(dtype=float), columns=list(map(str, df.columns)))
    else:
        est.fit(df.to_numpy(dtype=float))
    w = np.asarray(est.weights_, dtype=float)
    why = weights_problem(w, list(map(str, df.columns)))
    if why:
        raise MethodError(f"weighting scheme {reg.name!r} produced invalid weights: {why}")
    s = pd.Series(w, index=df.columns, name="weight")
    s.attrs["scheme"] = reg.name
    s.attrs["params"] = jsonable(est.get_params())
    if getattr(est, "source_", None):
        s.attrs["source"] = jsonable(est.source_)
    return s


def weights_problem(weights, columns: Sequence[str], shown: int = 8) -> Optional[str]:
    """What is wrong with a weighting scheme's ``weights_`` for ``columns``, or None when they are one finite,
    non-negative weight per column summing to 1.

    Parameters
    ----------
    weights : array-like
        The weights the scheme produced.
    columns : sequence of str
        The matrix's columns, one weight each.
    shown : int, optional
        How many weights the message lists (``column=weight``), the rest counted.

    Returns
    -------
    str or None
        The reason, with the sum and the first ``shown`` weights: ``"they sum to 0.5, not 1 (2 weights: a=0.25,
        b=0.25)"``.
    """
    w = np.asarray(weights, dtype=float).ravel()
    problems = []
    if w.size != len(columns):
        problems.append(f"{w.size} weight{'s' * (w.size != 1)} for {len(columns)} columns")
    if not np.isfinite(w).all():
        problems.append(f"{int((~np.isfinite(w)).sum())} not finite")
    if (w < 0).any():
        problems.append(f"{int((w < 0).sum())} negative")
    if np.isfinite(w).all() and not np.isclose(w.sum(), 1.0):
        problems.append(f"they sum to {w.sum():.6g}, not 1")
    if not problems and np.shape(weights) == (len(columns),):
        return None
    if not problems:
        problems.append(f"shape {np.shape(weights)}, not ({len(columns)},)")
    names = columns if w.size == len(columns) else [f"#{i}" for i in range(w.size)]
    total = "" if problems[-1].startswith("they sum") else f"sum {w.sum():.6g}; "
    return (f"{'; '.join(problems)} ({total}{w.size} weight{'s' * (w.size != 1)}: "
            f"{listed((f'{n}={v:.4g}' for n, v in zip(names, w)), shown)})")


def emit_weights(weights: pd.Series, path) -> Path:
    """Write ``{"scheme", "params", "weights": {column: weight}}`` as JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "scheme": weights.attrs.get("scheme"),
        "params": weights.attrs.get("params", {}),
        "weights": {str(k): float(v) for k, v in weights.items()},
    }
    write_file(path, dumps(doc))
    return path


def read_weight_file(path) -> tuple:
    """Read ``{column: weight}`` from JSON or CSV: ``(weights, source)``.

    JSON: an object ``{"col": w, ...}``, or ``{"weights": {...}}`` (what
    ``harness-ext weights --emit-weights`` writes). CSV: a header row, then
    one row per column with the name in the first field and the weight in the
    second. ``source`` is ``{"scheme", "params"}`` of a file written by
    ``--emit-weights`` (so a manifest can say which scheme made the weights),
    else None. Read through :mod:`harness_ext.safe_input`; every weight is a
    finite number >= 0.

    Raises
    ------
    SideFileError
        Naming the file and the reason.
    """
    from ...safe_input import finite_number, load_document, read_rows, suffix_format, wrong_shape

    path = Path(path)
    what = "weights file"
    source = None
    fmt = suffix_format(path, default="")
    if fmt == "json":
        doc = load_document(path, what, "json")
        if isinstance(doc, dict) and isinstance(doc.get("weights"), dict):
            if doc.get("scheme"):
                source = {"scheme": str(doc["scheme"]), "params": doc.get("params") or {}}
            doc = doc["weights"]
        if not isinstance(doc, dict):
            raise wrong_shape(path, what, "the top level", "a JSON object mapping column -> weight", doc)
        items = doc.items()
    elif fmt in ("csv", "tsv"):
        rows = [r for r in read_rows(path, what) if any(c.strip() for c in r)]
        if not rows or len(rows[0]) < 2:
            raise SideFileError(path, f"{what}: need a header row, then two columns (column name, weight)")
        short = next((i for i, r in enumerate(rows[1:], start=2) if len(r) < 2), None)
        if short is not None:
            raise SideFileError(path, f"{what}: row {short} needs a column name and a weight")
        items = [(r[0].strip(), r[1]) for r in rows[1:]]
    else:
        raise SideFileError(path, f"{what} must be .json or .csv")
    out = {}
    for k, v in items:
        if str(k) in out:
            raise SideFileError(path, f"{what}: column {k!r} listed twice")
        out[str(k)] = finite_number(v, path, what, f"the weight of {k!r}", low=0.0)
    return out, source


def weights_for_columns(given: dict, columns: Sequence[str], path) -> tuple:
    """``(weights, ignored)``: the weights of a file (:func:`read_weight_file`) for ``columns``, renormalised.

    Every column must appear in the file (a forgotten column should not silently get weight 0; give it 0
    explicitly); names of the file that are not columns are returned sorted in ``ignored``.
    """
    missing = [c for c in columns if c not in given]
    if missing:
        raise MethodError(f"{path}: no weight for {len(missing)} column(s): {missing[:10]}")
    w = np.array([given[c] for c in columns])
    if w.sum() <= 0:
        raise MethodError(f"{path}: the weights of the matrix's columns sum to 0")
    return w / w.sum(), sorted(set(given) - set(columns))


@dataclass
class SchemeComparison(Result):
    """Weighted scores and rank changes of every model under several schemes.

    ``scores`` and ``ranks`` are ``models x schemes``; ``rank_change`` is the
    uniform rank minus the scheme's rank (positive: the model moved up), as in
    Ailem et al. Figure 2. ``weights`` is ``columns x schemes``. ``str()`` shows the best
    models' scores and rank changes; :meth:`plot` draws Figure 2.
    """
    command = "weights"

    scores: pd.DataFrame
    ranks: pd.DataFrame
    rank_change: pd.DataFrame
    weights: pd.DataFrame
    params: dict

    title = "weighted score and rank change per scheme"

    def tables(self) -> dict:
        return {"scores": self.scores, "rank_change": self.rank_change, "ranks": self.ranks, "weights": self.weights}

    def summary(self) -> dict:
        """Largest rank change of each scheme and every scheme's parameters."""
        return {
            "max_abs_rank_change": {s: int(self.rank_change[s].abs().max()) for s in self.rank_change.columns},
            "params": self.params,
        }

    def top_models(self, top: int = 20) -> pd.Index:
        """The ``top`` models by uniform score, best first (all when ``top`` is 0): the table's rows and the plot's
        columns, so both show the same models when scores tie."""
        order = self.scores["uniform"].sort_values(ascending=False, kind="stable").index
        return order[:top] if top else order

    def render(self, top: int = 20) -> str:
        """Scores and rank changes of the ``top`` models by uniform score (all when ``top`` is 0)."""
        order, shown = self.scores.index, self.top_models(top)
        table = self.scores.loc[shown].join(self.rank_change.loc[shown].drop(columns="uniform").add_prefix("Δrank "))
        # Ties share the best rank: under a scheme that ties many models (medoids on few prompts) a model's rise
        # is the tie, not a better score; say so, with how many tie.
        tied = ", ".join(f"{c} {_tied(self.ranks[c], len(self.ranks))}"
                         for c in self.ranks.columns if c != "uniform" and self.ranks[c].duplicated().any())
        caption = ("Δrank = rank under uniform weights - rank under the scheme (positive: ranked higher); tied scores "
                   "share the best rank" + (f" (models tied under {tied})" if tied else ""))
        if len(self.scores.columns) == 1:  # --schemes uniform: nothing to change ranks against uniform
            caption = ("no rank changes and no rank_changes.png: the schemes are uniform alone, which the rank changes "
                       "are measured against; --schemes uniform,distance (or medoids, inverse_distance) adds one")
        return section(f"{self.title} (top {len(shown)} of {len(order)} by uniform score)",
                       format_table(table, self.floatfmt) + f"\n({caption})")

    def plot(self, path, top: int = 20):
        """Rank changes against uniform weights as a heatmap (Ailem et al. Figure 2); returns the PNG path, or None
        when uniform is the only scheme (no rank changes to draw)."""
        if len(self.scores.columns) == 1:
            return None
        return plot_rank_changes(self, path, top=top)


def _tied(ranks: pd.Series, n: int) -> str:
    """How many models share their rank with another, and in how many groups when more than one: '83' alone read as
    every model tied together where 83 models were in 3 groups (HELM Lite GSM8K's medoids: 58, 17 and 8)."""
    sizes = ranks.value_counts()
    sizes = sizes[sizes > 1]
    return f"{int(sizes.sum())} of {n}" + (f" in {len(sizes)} groups, the largest of {int(sizes.max())}" if len(sizes) > 1 else "")


def compare_schemes(
    df: pd.DataFrame, schemes: Sequence[str] = SCHEME_NAMES_DEFAULT, random_state: int = 0, scheme_params: Optional[dict] = None
) -> SchemeComparison:
    """Weighted score and rank change per model for each weighting scheme.

    Parameters
    ----------
    df : DataFrame, models x columns
    schemes : sequence of str
        Registered scheme names; ``uniform`` is always included (the baseline).
    random_state : int
    scheme_params : dict, optional
        ``{scheme: {param: value}}``.

    Returns
    -------
    SchemeComparison

    References
    ----------
    Ailem et al. §3.3 and §5.2.1, Figure 2.
    """
    scheme_params = scheme_params or {}
    names = ["uniform"] + [s for s in schemes if s != "uniform"]
    weights, params = {}, {}
    for name in names:
        w = compute_weights(df, name, random_state=random_state, **scheme_params.get(name, {}))
        weights[w.attrs["scheme"]] = w
        params[w.attrs["scheme"]] = w.attrs["params"]
    Wdf = pd.DataFrame(weights)
    X = df.to_numpy(dtype=float)
    S = weighted_scores(X, Wdf.to_numpy().T).T
    scores = pd.DataFrame(S, index=df.index, columns=Wdf.columns)
    ranks = scores.apply(lambda c: pd.Series(ranks_desc(c.to_numpy()), index=c.index))
    change = ranks.rsub(ranks["uniform"], axis=0)
    return SchemeComparison(scores=scores, ranks=ranks, rank_change=change, weights=Wdf, params=params)


def plot_rank_changes(comp: SchemeComparison, path, top: int = 20):
    """Heatmap like Ailem et al. Figure 2: rows schemes, columns models by increasing uniform score."""
    from ...report import get_pyplot, save_figure

    plt = get_pyplot()
    order = comp.scores.index
    models = list(comp.top_models(top))[::-1]  # increasing uniform score, left to right
    schemes = [s for s in comp.rank_change.columns if s != "uniform"]
    M = comp.rank_change.loc[models, schemes].to_numpy().T.astype(float)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(models) + 2), 0.6 * len(schemes) + 2.5))
    lim = max(1.0, np.abs(M).max())
    im = ax.imshow(M, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(models)), [short_name(m) for m in models], rotation=70, ha="right", fontsize=7)
    ax.set_yticks(range(len(schemes)), schemes)
    if len(models) <= 40:
        for (i, j), v in np.ndenumerate(M):
            ax.text(j, i, f"{int(v)}", ha="center", va="center", fontsize=7, color="w" if abs(v) > 0.6 * lim else "k")
    title = "Rank change vs uniform weights (original rank - new rank)"
    if top and len(order) > top:
        title += f"; top {top} of {len(order)} models"
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8)
    return save_figure(fig, path)
