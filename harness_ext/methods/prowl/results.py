"""What prowl returns: one order's coverage evaluation and the Table-3 report, rendering and plotting themselves.

References
----------
SimBA §3.3, §6.2 (Table 3, Figure 2), Appendix B (Table 6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import pandas as pd

from ...report import Result, format_table, get_pyplot, save_figure
from .baseline import RandomBaseline

BASELINE_LABELS = {"random": "RANDOM", "greedy_minimum": "GREEDY MINIMUM", "greedy_maximum": "GREEDY MAXIMUM"}


@dataclass(eq=False)
class ProwlResult(Result):
    """A selector's ordering of the datasets and its coverage evaluation.

    Attributes
    ----------
    selector : str
        Registered selector name.
    similarity : str or None
        Similarity measure, for selectors that use one.
    params : dict
        The selector's ``get_params()`` (repeatable run).
    datasets : list of str
        All dataset names (columns of the matrix), in matrix order.
    order : list of str
        Dataset names in selection order (all ``d``).
    coverage : numpy.ndarray, shape (d,)
        ``eta`` for ``|S| = 1..d``.
    proxy_coverage : numpy.ndarray or None
        The selector's ``delta`` per step, when it has one.
    target : float
    n_star : int
        ``|S*|`` (0 if never reached).
    subset : list of str
        ``order[:n_star]``: the representative subset.
    scauc, max2 : float
        SCAUC over the whole curve and over ``1..max(n_star, 2)``.
    n_models : int
    auc_vs_random, max2_vs_random : float or None
        Proportion of random runs matched or beaten (None without a baseline).
    ties : str
        Tie rule of the mean win rate (see :func:`win_rates`).
    """
    command = "prowl"

    selector: str
    similarity: Optional[str]
    params: dict
    datasets: list
    order: list
    coverage: np.ndarray
    proxy_coverage: Optional[np.ndarray]
    target: float
    n_star: int
    subset: list
    scauc: float
    max2: float
    n_models: int
    auc_vs_random: Optional[float] = None
    max2_vs_random: Optional[float] = None
    random: Optional[RandomBaseline] = field(default=None, repr=False)
    ties: str = "half"
    #: The selector's own account of what it did (its ``describe()``, when it has one), e.g. budgets that cut its steps.
    selector_details: Optional[dict] = field(default=None, repr=False)

    @property
    def label(self) -> str:
        from harness_ext.methods.similarity.measures import LABELS

        if self.similarity is not None and self.selector in ("greedy_coverage", "beam_coverage"):
            name = LABELS.get(self.similarity, self.similarity.upper())
            return name if self.selector == "greedy_coverage" else f"{name} (beam {self.params.get('beam_width')})"
        label = BASELINE_LABELS.get(self.selector, self.selector.upper())
        if self.similarity is not None:  # another selector taking a measure: one row per measure, told apart
            return f"{label} ({LABELS.get(self.similarity, self.similarity.upper())})"
        return label

    @property
    def title(self) -> str:
        return f"prowl: {self.label} ({self.selector})"

    def summary(self) -> dict:
        d = self.to_dict()
        return {k: d[k] for k in ("target", "n_star", "scauc", "max2", "auc_vs_random", "max2_vs_random", "ties")}

    def tables(self) -> dict:
        """The coverage curve: ``eta`` per ``|S|`` and the dataset each step adds."""
        frame = pd.DataFrame({"dataset_added": self.order, "eta": self.coverage},
                             index=pd.RangeIndex(1, len(self.order) + 1, name="|S|"))
        if self.proxy_coverage is not None and len(self.proxy_coverage) == len(frame):
            frame["selector_proxy"] = self.proxy_coverage
        return {"coverage": frame}

    def plot(self, path=None, title: str = ""):
        """This order's coverage curve against ``|S|``, with the random baseline's mean and 5-95% band when it has one."""
        return _plot_curves({self.label: self}, self.random, self.target, self.n_models, len(self.datasets),
                            title, path)

    def to_dict(self) -> dict:
        """JSON-ready summary (what a manifest records)."""

        def num(v):
            return None if v is None or (isinstance(v, float) and not np.isfinite(v)) else float(v)

        return {
            "selector": self.selector,
            "similarity": self.similarity,
            "params": {k: (v if isinstance(v, (int, float, str, bool, type(None))) else str(v)) for k, v in self.params.items()},
            "target": self.target,
            "n_star": int(self.n_star),
            "subset": list(self.subset),
            "order": list(self.order),
            "coverage": [num(v) for v in self.coverage],
            "proxy_coverage": None if self.proxy_coverage is None else [float(v) for v in self.proxy_coverage],
            "scauc": num(self.scauc),
            "max2": num(self.max2),
            "n_models": int(self.n_models),
            "n_datasets": len(self.datasets),
            "auc_vs_random": num(self.auc_vs_random),
            "max2_vs_random": num(self.max2_vs_random),
            "n_random": None if self.random is None else self.random.n_runs,
            "ties": self.ties,
        }


@dataclass(eq=False)
class ProwlReport(Result):
    """Every method of Table 3 on one matrix.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per method: SCAUC, |S*|, S* (the subset), AUC and Max2
        proportions of random runs matched or beaten.
    results : dict
        Method label -> :class:`ProwlResult`.
    baseline : RandomBaseline
    n_models, n_datasets : int
    label : str
        What the matrix is (benchmark names), for the title and the figure.
    failures : dict
        Row label -> why that method could not run on this matrix (its row is NaN, with the reason in ``note``).
    notes : list of str
        Options that had no effect (similarity measures given to a selector that takes none).
    """
    command = "prowl"

    table: pd.DataFrame
    results: Dict[str, ProwlResult]
    baseline: RandomBaseline
    n_models: int
    n_datasets: int
    label: str = ""
    failures: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)

    @property
    def warnings(self) -> list:
        """What was not used (``notes``), then one line per method that failed, naming it and the reason."""
        return list(self.notes) + [f"{label}: no row, {why}" for label, why in self.failures.items()]

    @property
    def title(self) -> str:
        what = f" ({self.label})" if self.label else ""
        return (f"prowl: {self.n_models} models x {self.n_datasets} datasets{what}; "
                f"|S*| = smallest subset with coverage >= {self.baseline.target:g}; "
                f"AUC/Max2>=random = share of {self.baseline.n_runs} random runs matched or beaten")

    def tables(self) -> dict:
        return {"prowl": self.table, "curves": self.curves()}

    def render(self) -> str:
        shown = self.table.copy()
        shown["|S*|"] = shown["|S*|"].map(
            lambda v: "" if pd.isna(v) else (f"{v:.1f}" if v != int(v) else f"{int(v)} of {self.n_datasets}"))
        shown["S*"] = [_first_three(self.results[m].subset) if m in self.results else s
                       for m, s in shown["S*"].items()]
        return f"{self.title}\n{format_table(shown, floatfmt=self.floatfmt)}"

    def plot(self, path=None, title: str = ""):
        """Figure-2-style plot: coverage ``eta`` against ``|S|`` for every method, random as mean and 5-95% band."""
        what = f": {self.label}" if self.label else f" ({self.n_models} models x {self.n_datasets} datasets)"
        return _plot_curves(self.results, self.baseline, self.baseline.target, self.n_models, self.n_datasets,
                            title or f"prowl coverage{what}", path)

    def curves(self) -> pd.DataFrame:
        """Long table of every curve: method, |S|, eta, dataset added (random: mean curve)."""
        rows = []
        for label, res in self.results.items():
            for k, (eta, ds) in enumerate(zip(res.coverage, res.order), start=1):
                rows.append({"method": label, "k": k, "eta": eta, "dataset_added": ds})
        mean = self.baseline.mean_curve
        lo, hi = self.baseline.quantile_curve(0.05), self.baseline.quantile_curve(0.95)
        for k in range(len(mean)):
            rows.append({"method": f"RANDOM (n = {self.baseline.n_runs}) mean", "k": k + 1, "eta": mean[k], "dataset_added": None,
                         "q05": lo[k], "q95": hi[k]})
        return pd.DataFrame(rows)


def _first_three(subset) -> str:
    """A subset as the printed table shows it: its first three datasets and how many more (the CSV holds all)."""
    return ", ".join(subset) if len(subset) <= 3 else f"{', '.join(subset[:3])}, ... (+{len(subset) - 3})"


def _plot_curves(results: dict, baseline: Optional[RandomBaseline], target: float, n_models: int, d: int,
                 title: str, path):
    """Coverage ``eta`` against ``|S|`` for each result, random as mean and 5-95% band; saved to ``path`` or returned."""
    plt = get_pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    k = np.arange(1, d + 1)
    finite = [r.coverage[np.isfinite(r.coverage)] for r in results.values()]
    if baseline is not None:
        ax.fill_between(k, baseline.quantile_curve(0.05), baseline.quantile_curve(0.95), color="0.85",
                        label="RANDOM 5-95%")
        ax.plot(k, baseline.mean_curve, color="black", lw=2, ls="--", label=f"RANDOM (n = {baseline.n_runs}) mean")
        finite.append(baseline.mean_curve)
    cmap = plt.get_cmap("tab20")
    for i, (label, res) in enumerate(results.items()):
        style = ":" if res.selector in BASELINE_LABELS else "-"
        ax.plot(k, res.coverage, ls=style, lw=1.4, color=cmap(i % 20), label=label, marker="o", ms=2.5)
    ax.axhline(target, color="red", lw=0.8, ls="-.", label=f"target {target:g}")
    finite = np.concatenate(finite)
    lo = max(-1.0, float(np.min(finite)) - 0.02) if finite.size else 0.0
    ax.set_ylim(lo, 1.01)
    ax.set_xlim(1, d)
    ax.set_xlabel("|S| (datasets in the representative subset)")
    ax.set_ylabel("coverage  eta = Pearson(MWR(B), MWR(B_S))")
    ax.set_title(title or f"prowl coverage curves ({n_models} models x {d} datasets)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    return fig if path is None else save_figure(fig, path)
