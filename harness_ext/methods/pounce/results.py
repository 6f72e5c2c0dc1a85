"""What the pounce analyses return: typed results that render themselves and draw their figures.

Each result keeps the long tables the numerics produced (for CSV and JSON) and derives the
pivoted tables people read; ``render()`` shows those under a caption, ``plot(path)`` draws the
paper's figure (matplotlib imported only there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import pandas as pd

from ...report import Result, format_table, get_pyplot, save_figure

#: Rows of the MSE curve shown in the text (the CSV and JSON have every row).
SHOWN_CURVE_ROWS = 12

#: SimBA Table 4 (clean) and Table 5 (noisy) AUC-MSE, Minkowski (p=3) subsets.
PAPER_AUC_MSE = {
    "helm": {
        "clean": {"ridge": 0.005, "knn": 0.004, "mlp_12": 0.081, "mlp_12_12": 0.031},
        "sigma=0.05": {"ridge": 0.010, "knn": 0.017, "mlp_12": 0.081, "mlp_12_12": 0.031},
        "sigma=0.1": {"ridge": 0.013, "knn": 0.027, "mlp_12": 0.087, "mlp_12_12": 0.033},
    },
    "mmlu": {
        "clean": {"ridge": 0.002, "knn": 0.002, "mlp_12": 0.110, "mlp_12_12": 0.081},
        "sigma=0.05": {"ridge": 0.004, "knn": 0.012, "mlp_12": 0.079, "mlp_12_12": 0.068},
        "sigma=0.1": {"ridge": 0.007, "knn": 0.021, "mlp_12": 0.078, "mlp_12_12": 0.067},
    },
    "bigbench_lite": {
        "clean": {"ridge": 0.002, "knn": 0.002, "mlp_12": 0.006, "mlp_12_12": 0.006},
        "sigma=0.05": {"ridge": 0.004, "knn": 0.013, "mlp_12": 0.007, "mlp_12_12": 0.007},
        "sigma=0.1": {"ridge": 0.006, "knn": 0.013, "mlp_12": 0.009, "mlp_12_12": 0.008},
    },
}


class _Captioned(Result):
    """A result whose text shows each table under a caption (the JSON keeps the short table names)."""
    command = "pounce"

    floatfmt = "{:.4f}"

    def shown(self) -> Dict[str, pd.DataFrame]:
        """Caption -> table, as printed; by default every table of :meth:`tables` under its name."""
        return self.tables()

    def render(self) -> str:
        parts = [self.title] if self.title else []
        parts += [f"{k}: {self.floatfmt.format(v) if isinstance(v, float) else v}" for k, v in self.summary().items()]
        for caption, frame in self.shown().items():
            parts += ["", caption, format_table(frame, floatfmt=self.floatfmt)]
        return "\n".join(parts)


def _finish(fig, path):
    """Save ``fig`` to ``path`` (returning the path), or return the figure when no path is given."""
    return fig if path is None else save_figure(fig, path)


def _percent_lines(frame: pd.DataFrame, xlabel: str, ylabel: str, title: str, path):
    """One line per column of ``frame`` against its index (a share, drawn in percent)."""
    plt = get_pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for col in frame.columns:
        ax.plot(frame.index * 100, frame[col], marker="o", label=col)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _finish(fig, path)


@dataclass(eq=False)
class RegressionEvaluation(_Captioned):
    """What :func:`~harness_ext.methods.pounce.evaluate_regression` returns.

    Attributes
    ----------
    curves : pandas.DataFrame
        MSE per ``|S|`` (index) for each (condition, predictor) column.
    auc : pandas.DataFrame
        AUC-MSE, predictors x conditions (``clean``, ``sigma=...``) plus ``clean_std`` (with
        repeats) and ``kfold_mean``/``kfold_std``.
    order : numpy.ndarray
        The dataset order used (column indices); ``order_source`` says where it came from.
    split : tuple
        ``(train_idx, test_idx)`` of the first split.
    n_splits : int
        Folds of the k-fold check (0: skipped); ``n_repeats`` the random splits averaged.
    datasets : list of str, optional
        Column names, when the matrix was a DataFrame.
    n_incomplete, n_models : int
        Models with a missing cell, and all models.
    paper : str, optional
        SimBA benchmark (``helm``, ``mmlu``, ``bigbench_lite``) whose Table 4/5 values are shown beside.
    """

    curves: pd.DataFrame
    auc: pd.DataFrame
    order: np.ndarray
    order_source: str
    split: tuple
    n_splits: int
    n_repeats: int = 1
    datasets: Optional[List[str]] = None
    n_incomplete: int = 0
    n_models: int = 0
    paper: Optional[str] = None

    title = "pounce: SimBA regression protocol (predict D \\ S from S on held-out models)"

    def auc_table(self) -> pd.DataFrame:
        """AUC-MSE, with SimBA's published values beside when :attr:`paper` names a benchmark."""
        auc = self.auc.copy()
        if self.paper:
            ref = PAPER_AUC_MSE[self.paper]
            for cond in [c for c in auc.columns if c in ref]:
                auc[f"paper {cond}"] = [ref[cond].get(p, np.nan) for p in auc.index]
        return auc

    def summary(self) -> dict:
        tr, te = self.split
        names = [self.datasets[i] if self.datasets else str(i) for i in self.order]
        out = {"models": f"{len(tr)} training / {len(te)} test"
                         + (f" (AUC-MSE averaged over {self.n_repeats} random splits; order shown for the first)"
                            if self.n_repeats > 1 else ""),
               "dataset order": f"from {self.order_source}: " + ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")}
        if self.n_splits:
            out["k-fold stability"] = f"{self.n_splits}-fold over the training models"
        if self.n_incomplete:
            complete = self.n_models - self.n_incomplete
            out["note"] = (f"{self.n_incomplete} of {self.n_models} models have missing cells: ridge trains on every "
                           "observed cell (pairwise-complete Gram matrix); knn and the MLPs can only train on the "
                           f"{complete} complete models; test cells that are missing are not scored")
        return out

    def tables(self) -> dict:
        curves = self.curves.copy()
        curves.columns = [f"{c}: {p}" for c, p in curves.columns]
        return {"auc_mse": self.auc_table(), "mse_curves": curves}

    def shown(self) -> dict:
        shown, part = self.curves, ""
        if len(shown) > SHOWN_CURVE_ROWS:
            shown = shown.iloc[np.unique(np.linspace(0, len(shown) - 1, SHOWN_CURVE_ROWS).round().astype(int))]
            part = f"; {len(shown)} of {len(self.curves)} sizes shown, all in the mse_curves table and mse_curves.csv"
        clean = shown["clean"] if "clean" in shown.columns.get_level_values(0) else shown
        paper = f" columns: {self.paper}" if self.paper else ""
        return {f"AUC-MSE (lower is better; SimBA Table 4/5{paper})": self.auc_table(),
                f"MSE per |S| on held-out models (clean training matrix{part})": clean}

    def plot(self, path=None):
        """MSE curves per condition (SimBA Fig. 3), log scale."""
        plt = get_pyplot()
        conds = list(dict.fromkeys(self.curves.columns.get_level_values(0)))
        fig, axes = plt.subplots(1, len(conds), figsize=(4.2 * len(conds), 3.6), sharey=True, squeeze=False)
        for ax, cond in zip(axes[0], conds):
            for p in self.curves[cond].columns:
                ax.plot(self.curves.index, self.curves[cond][p], marker=".", label=p)
            ax.set_title(f"{cond} (training matrix)")
            ax.set_xlabel("|S| (datasets observed)")
            ax.set_yscale("log")
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("MSE on held-out models, D \\ S")
        axes[0][-1].legend(fontsize=8)
        fig.suptitle("pounce: MSE curves (SimBA Fig. 3)", y=1.04)
        return _finish(fig, path)


#: The baselines a completion predictor has to beat (Zhao et al. Table 11).
BASELINES = ("global_mean", "mean_of_means")


@dataclass(eq=False)
class CompletionResult(_Captioned):
    """Masked-cell RMSE and calibration of completion predictors (:func:`~harness_ext.methods.pounce.evaluate_completion`).

    ``long`` is :func:`~harness_ext.methods.pounce.masked_rmse`'s table (one row per ratio,
    repeat and predictor); ``groups`` the metrics the predictors standardise within;
    ``paper`` Zhao et al.'s Table 11 when the matrix is in raw units, as Zhao et al.'s.
    """

    long: pd.DataFrame
    predictors: List[str]
    level: float = 0.9
    n_repeats: int = 1
    groups: Optional[List[str]] = None
    raw_units: bool = False
    paper: Optional[dict] = field(default=None, repr=False)

    title = "pounce: matrix completion (Zhao et al. protocol: hide observed cells, predict them)"

    def rmse_table(self) -> pd.DataFrame:
        """Mean RMSE by hidden ratio and predictor, and whether each predictor beats both baselines."""
        rmse = self.long.pivot_table(index="ratio", columns="predictor", values="rmse", aggfunc="mean")[self.predictors]
        base = [b for b in BASELINES if b in rmse.columns]
        if base:
            best_base = rmse[base].min(axis=1)
            for p in [p for p in rmse.columns if p not in base]:
                rmse[f"{p} beats baselines"] = (rmse[p] < best_base).map({True: "yes", False: "no"})
        return rmse

    def calibration_table(self) -> pd.DataFrame:
        """Share of hidden cells inside the ``level`` interval, for predictors with a predictive std."""
        cov = self.long.dropna(subset=["coverage"])
        return cov.pivot_table(index="ratio", columns="predictor", values="coverage", aggfunc="mean")

    def summary(self) -> dict:
        if not self.groups:
            return {}
        return {"standardising": f"per dataset, pooling sparse datasets within metric ({', '.join(self.groups)})"}

    def tables(self) -> dict:
        out = {"rmse": self.rmse_table()}
        cal = self.calibration_table()
        if len(cal):
            out["calibration"] = cal
        if self.paper:
            out["paper_table11"] = pd.DataFrame(self.paper)
        return out

    def shown(self) -> dict:
        captions = {
            "rmse": f"masked-cell RMSE by hidden ratio (Zhao et al. Fig. 3 / Table 11; mean of {self.n_repeats} mask(s), "
                    "units of the matrix)",
            "calibration": f"calibration: share of hidden cells inside the {self.level:.0%} predictive interval",
            "paper_table11": "for reference, Zhao et al. Table 11 on the CrossPred matrix (raw units, overall RMSE)",
        }
        return {captions[k]: v for k, v in self.tables().items()}

    def plot(self, path=None):
        """RMSE on hidden cells against the hidden share, per predictor (Zhao et al. Fig. 3)."""
        means = self.long.pivot_table(index="ratio", columns="predictor", values="rmse", aggfunc="mean")
        return _percent_lines(means[self.predictors], "hidden cells (%)", "RMSE on hidden cells",
                              "pounce: matrix completion (Zhao et al. Fig. 3)", path)


@dataclass(eq=False)
class ActiveResult(_Captioned):
    """Active evaluation (:func:`~harness_ext.methods.pounce.evaluate_active`): ``long`` is
    :func:`~harness_ext.methods.pounce.active_evaluation`'s table; ``predictor`` names the predictor."""

    long: pd.DataFrame
    predictor: str

    title = "pounce: active evaluation (which cells to evaluate next)"

    def tables(self) -> dict:
        return {"rmse": self.long.pivot_table(index="extra", columns="strategy", values="rmse", aggfunc="mean")}

    def shown(self) -> dict:
        return {f"active evaluation with {self.predictor}: test RMSE after revealing extra cells "
                "(Zhao et al. Fig. 4; start 20% known, 60% pool, 20% test)": self.tables()["rmse"]}

    def plot(self, path=None):
        """RMSE improvement on the test cells against the share of extra cells evaluated (Zhao et al. Fig. 4)."""
        imp = self.long.pivot_table(index="extra", columns="strategy", values="improvement", aggfunc="mean")
        return _percent_lines(imp, "extra cells evaluated (% of observed)", "RMSE improvement on test cells",
                              f"pounce: active evaluation with {self.predictor} (Zhao et al. Fig. 4)", path)


@dataclass(eq=False)
class TensorResult(_Captioned):
    """Multi-metric completion (:func:`~harness_ext.methods.pounce.evaluate_tensor`): ``long`` is
    :func:`~harness_ext.methods.pounce.masked_rmse_tensor`'s table; ``predictors`` the row order."""

    long: pd.DataFrame
    metrics: List[str]
    predictors: List[str]

    title = "pounce: multi-metric completion (one tensor vs one matrix per metric)"

    def tables(self) -> dict:
        out = {}
        for ratio, part in self.long.groupby("ratio"):
            tab = part.pivot_table(index="predictor", columns="metric", values="rmse", aggfunc="mean")
            out[f"rmse_{ratio:g}"] = tab[["overall"] + [m for m in self.metrics if m in tab.columns]].loc[self.predictors]
        return out

    def shown(self) -> dict:
        return {f"multi-metric RMSE at {float(k[5:]):.0%} hidden ({len(self.metrics)} metrics; Zhao et al. Table 1 / 12; "
                "(sep) = one matrix per metric)": v for k, v in self.tables().items()}


@dataclass(eq=False)
class PounceReport(Result):
    """The ``pounce`` command's result: the analyses it ran on one matrix, in order.

    ``analyses`` maps an analysis name (``regression``, ``completion``, ``active``, ``tensor``)
    to its result; ``skipped`` maps an analysis left out to the reason.
    """
    command = "pounce"

    analyses: Dict[str, Result]
    n_models: int
    n_datasets: int
    missing: float
    skipped: Dict[str, str] = field(default_factory=dict)

    title = "pounce"

    def summary(self) -> dict:
        out = {"matrix": f"{self.n_models} models x {self.n_datasets} datasets, {self.missing:.1%} missing"}
        out.update({f"skipped {k}": v for k, v in self.skipped.items()})
        return out

    def tables(self) -> dict:
        return {f"{name}.{t}": frame for name, res in self.analyses.items() for t, frame in res.tables().items()}

    def to_dict(self) -> dict:
        return {"title": self.title, "summary": self.summary(),
                "analyses": {name: res.to_dict() for name, res in self.analyses.items()}}

    def render(self) -> str:
        head = [f"{self.title}: {self.summary()['matrix']}"] + [f"skipped the {k} analysis: {v}" for k, v in self.skipped.items()]
        return "\n\n".join(["\n".join(head)] + [res.render() for res in self.analyses.values()])
