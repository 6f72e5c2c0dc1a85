"""The result of the rank-preservation protocol: curves, AUC, k*, significance; it renders and plots itself.

References
----------
Gusev & Zaytsev, "Benchmarking on Tasks That Matter: Dataset Selection for
Preserving Model Rankings", KDD 2026, §5.1 (eq. 15-16), §6 (eq. 17, Tables 1-3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

from ...errors import MethodError
from ...report import Result, format_table
from ..ranking import METRIC_HIGHER_IS_BETTER, METRIC_LABELS, check_metrics
from .statistics import (DEFAULT_TARGETS, baseline_name, holm, k_star, paired_wilcoxon, parse_target, quantile_band,
                         relative_gain, trapezoid_auc, wilcoxon_vs_best)

#: What the MAE columns measure: a rank distance, not a score's (the other metrics are correlations and ranking scores).
MAE_UNIT = ("(MAE: the mean over models of |mean rank on the subset - mean rank on the trial's datasets|, in rank "
            "positions; its AUC is the area under that curve over k)")


@dataclass
class ProtocolResult(Result):
    """Everything the protocol measured; renders the paper's Tables 1-3 and plots the curves.

    ``values[s, m, t, j]`` is metric ``metrics[m]`` of selector ``selectors[s]``
    in trial ``t`` at subset size ``ks[j]``. ``targets`` are the k* targets of
    :meth:`render`, :meth:`tables` and :meth:`plot`; ``features_source`` names
    where a-priori features came from (shown in the text).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((8, 10))
    >>> res = run_protocol(X, ["random-subset", "kmeans"], trials=3, k_max=4, show_progress=False)  # doctest: +SKIP
    >>> res.to_frame()  # Table 1, per selector  # doctest: +SKIP
    >>> res.plot("curves.png")  # doctest: +SKIP
    """

    title = "compare: selectors under the rank-preservation protocol"
    command = "compare"

    selectors: List[str]
    metrics: List[str]
    ks: np.ndarray
    values: np.ndarray
    params: dict = field(default_factory=dict)
    seconds: float = 0.0
    targets: Sequence[str] = DEFAULT_TARGETS
    features_source: Optional[str] = None

    @property
    def baseline(self) -> Optional[str]:
        """Name of the Random baseline among the selectors (see :data:`RANDOM_BASELINES`)."""
        return baseline_name(self.selectors)

    def _m(self, metric: str) -> int:
        return self.metrics.index(check_metrics([metric])[0])

    def mean_curves(self, metric: str) -> np.ndarray:
        """``(n_selectors, n_k)`` mean over trials (eq. 15)."""
        return np.nanmean(self.values[:, self._m(metric)], axis=1)

    def bands(self, metric: str, ci: Optional[float] = None):
        """``(lower, upper)``, each ``(n_selectors, n_k)`` (eq. 16)."""
        return quantile_band(self.values[:, self._m(metric)], ci or self.params.get("ci", 0.95), axis=1)

    def auc_trials(self, metric: str) -> np.ndarray:
        """``(n_selectors, T)`` per-trial trapezoid AUC over k."""
        return trapezoid_auc(self.values[:, self._m(metric)], axis=-1)

    # -- tables --------------------------------------------------------------------------
    def curves_frame(self) -> pd.DataFrame:
        """Long table: selector, metric, k, mean, lower, upper."""
        rows = []
        for metric in self.metrics:
            mean = self.mean_curves(metric)
            lo, hi = self.bands(metric)
            for s, name in enumerate(self.selectors):
                rows.append(pd.DataFrame({"selector": name, "metric": metric, "k": self.ks, "mean": mean[s], "lower": lo[s], "upper": hi[s]}))
        return pd.concat(rows, ignore_index=True)

    def auc_table(self) -> pd.DataFrame:
        """Table 1: mean and std over trials of the per-trial AUC, per selector and metric."""
        out = {}
        for metric in self.metrics:
            a = self.auc_trials(metric)
            out[(metric, "mean")] = np.nanmean(a, axis=1)
            out[(metric, "std")] = np.nanstd(a, axis=1, ddof=1) if a.shape[1] > 1 else np.zeros(a.shape[0])
        df = pd.DataFrame(out, index=pd.Index(self.selectors, name="selector"))
        return df

    def kstar_table(self, targets: Sequence[str] = DEFAULT_TARGETS, ci: Optional[float] = None) -> pd.DataFrame:
        """Table 2: per selector and target, k* on the mean curve and conservative k*.

        Conservative uses the worst side of the CI: the lower quantile for
        ">=" targets, the upper quantile for "<=" targets.
        """
        rows = []
        for t in targets:
            metric, op, value = parse_target(t) if isinstance(t, str) else t
            if metric not in self.metrics:
                raise MethodError(f"target {t!r} uses metric {metric!r}, which was not computed")
            mean = self.mean_curves(metric)
            lo, hi = self.bands(metric, ci)
            worst = lo if op == ">=" else hi
            label = f"{METRIC_LABELS[metric]} {op} {value:g}"
            for s, name in enumerate(self.selectors):
                rows.append({"target": label, "selector": name, "k*_mean": k_star(self.ks, mean[s], op, value),
                             "k*_conservative": k_star(self.ks, worst[s], op, value)})
        df = pd.DataFrame(rows)
        for c in ("k*_mean", "k*_conservative"):
            df[c] = df[c].astype("Int64")
        return df

    def kstar_summary(self, targets: Sequence[str] = DEFAULT_TARGETS, ci: Optional[float] = None) -> pd.DataFrame:
        """Best / median / worst k* over the non-random selectors that reach the target (the paper's Table 2 layout)."""
        kt = self.kstar_table(targets, ci)
        base = self.baseline
        rows = []
        for label, g in kt.groupby("target", sort=False):
            g = g[g["selector"] != base]
            row = {"target": label}
            for col, name in (("k*_mean", "mean k*"), ("k*_conservative", "cons. k*")):
                v = g[col].dropna().to_numpy(dtype=float)
                row[name] = "-" if v.size == 0 else f"{v.min():g} / {np.median(v):g} / {v.max():g}"
            r = kt[(kt["target"] == label) & (kt["selector"] == base)]
            if len(r):
                row["random mean k*"] = "-" if pd.isna(r["k*_mean"].iloc[0]) else int(r["k*_mean"].iloc[0])
                row["random cons. k*"] = "-" if pd.isna(r["k*_conservative"].iloc[0]) else int(r["k*_conservative"].iloc[0])
            rows.append(row)
        return pd.DataFrame(rows)

    def significance_table(self, alpha_level: float = 0.05) -> pd.DataFrame:
        """Table 3, one row per metric and selector.

        Columns: mean AUC, whether it is the best, AUC gain over random
        (direction-aware: random - m for MAE, m - random otherwise), relative
        gain over random, Holm-corrected p of "best beats this selector"
        (Holm over the comparisons with the best), whether that is significant
        at ``alpha_level``, and Holm-corrected p of "this selector beats random"
        (a second family: every non-random selector against random).
        """
        rows = []
        for metric in self.metrics:
            hib = METRIC_HIGHER_IS_BETTER[metric]
            A = self.auc_trials(metric)
            best, p_raw, p_holm = wilcoxon_vs_best(A, hib)
            means = np.nanmean(A, axis=1)
            r = self.selectors.index(self.baseline) if self.baseline else None
            p_rand = holm(paired_wilcoxon(A, r, hib, ref_is_better=False)) if r is not None else np.full(len(A), np.nan)
            for s, name in enumerate(self.selectors):
                gain = rel = np.nan
                if r is not None:
                    gain = (means[s] - means[r]) if hib else (means[r] - means[s])
                    rel = relative_gain(means[s], means[r], hib)
                rows.append({
                    "metric": METRIC_LABELS[metric], "selector": name, "auc_mean": means[s], "best": s == best,
                    "gain_vs_random": gain, "rel_gain_vs_random": rel, "p_raw_vs_best": p_raw[s],
                    "p_holm_vs_best": p_holm[s], "worse_than_best": bool(p_holm[s] < alpha_level) if s != best else False,
                    "p_holm_better_than_random": p_rand[s],
                })
        return pd.DataFrame(rows)

    def significance_summary(self, alpha_level: float = 0.05) -> pd.DataFrame:
        """The paper's compact Table 3: best, gain over random, Holm p vs random, near-top n.s."""
        full = self.significance_table(alpha_level)
        base = self.baseline
        rows = []
        for metric, g in full.groupby("metric", sort=False):
            b = g[g["best"]].iloc[0]
            rnd = g[g["selector"] == base]
            ns = g[(~g["best"]) & (g["p_holm_vs_best"] >= alpha_level)]["selector"].tolist()
            rows.append({
                "metric": metric, "best": b["selector"],
                "gain": b["gain_vs_random"] if b["selector"] != base else np.nan,
                "rel_gain_%": 100 * b["rel_gain_vs_random"] if b["selector"] != base else np.nan,
                "p_holm_vs_random": rnd["p_holm_vs_best"].iloc[0] if len(rnd) and b["selector"] != base else np.nan,
                "near_top_ns": ", ".join(ns) if ns else "-",
            })
        return pd.DataFrame(rows)


    # -- the Result interface --------------------------------------------------------------
    def summary(self) -> Dict[str, object]:
        p = self.params
        return {"benchmark": p.get("benchmark"), "models": p.get("models"), "datasets": p.get("datasets"),
                "trials": p.get("trials"),
                "variation": p.get("variation"), "alpha": p.get("alpha"), "k_min": p.get("k_min"),
                "k_max": p.get("k_max"), "seed": p.get("seed"), "ci": p.get("ci"),
                "representation": self._representation(), "seconds": round(float(self.seconds), 3),
                "n_jobs": p.get("n_jobs"), "baseline": self.baseline, "targets": list(self.targets)}

    def tables(self) -> Dict[str, pd.DataFrame]:
        """``auc`` (Table 1, main), ``kstar`` (Table 2), ``kstar_summary``, ``significance`` (Table 3, all
        selectors vs the best and vs random), ``significance_summary`` and the long ``curves`` table."""
        auc = self.auc_table()
        auc.columns = [f"{m}_{s}" for m, s in auc.columns]
        return {"auc": auc, "kstar": self.kstar_table(self.targets), "kstar_summary": self.kstar_summary(self.targets),
                "significance": self.significance_table(), "significance_summary": self.significance_summary(),
                "curves": self.curves_frame()}

    def _representation(self) -> str:
        rep = self.params.get("representation", "scores")
        if rep == "features":
            return "a-priori features" + (f" from {self.features_source}" if self.features_source else "")
        return {"scores": "performance columns", "ranks": "per-dataset rank vectors"}.get(rep, rep) + " of the trial's models"

    def render(self) -> str:
        """The paper's layout: Table 1 (AUC mean ± std), Table 2 (k*), Table 3 (best, gain, Holm p), relative gains."""
        p = self.params
        k_lo, k_hi = p.get("k_min", int(self.ks[0])), p.get("k_max", int(self.ks[-1]))
        ci = p.get("ci", 0.95)
        bench = f" ({p['benchmark']})" if p.get("benchmark") else ""
        lines = [f"matrix: {p.get('models')} models x {p.get('datasets')} datasets{bench}; T={p.get('trials')} trials, "
                 f"{p.get('variation')} variation, alpha={p.get('alpha')}, k={k_lo}..{k_hi}, seed={p.get('seed')}; "
                 f"representation: {self._representation()}",
                 f"runtime: {self.seconds:.1f} s with n_jobs={p.get('n_jobs')}", ""]
        auc = self.auc_table()
        t1 = pd.DataFrame(index=auc.index)
        for m in self.metrics:
            arrow = "↑" if METRIC_HIGHER_IS_BETTER[m] else "↓"
            t1[f"AUC({METRIC_LABELS[m]}) {arrow}"] = [f"{a:.2f} ± {s:.2f}" for a, s in zip(auc[(m, "mean")], auc[(m, "std")])]
        lines += [f"Table 1. AUC over k={k_lo}..{k_hi} (trapezoid), mean ± std over trials", format_table(t1)]
        lines += [MAE_UNIT, ""] if "mae" in self.metrics else [""]
        kt = self.kstar_table(self.targets)
        wide = kt.pivot(index="selector", columns="target", values=["k*_mean", "k*_conservative"]).reindex(self.selectors)
        wide.columns = [f"{t}: {'mean' if c == 'k*_mean' else 'cons.'} k*" for c, t in wide.columns]
        wide = wide.astype(object).where(wide.notna(), "-")
        lines += [f"Table 2. k*: smallest k reaching the target on the mean curve / on the worst side of the "
                  f"{int(100 * ci)}% band", format_table(wide), "",
                  format_table(self.kstar_summary(self.targets), index=False),
                  "(best / median / worst over the non-random selectors that reach the target; '-' = none for k <= k_max)",
                  ""]
        lines += ["Table 3. Best selector per metric, AUC gain over random, Holm-corrected one-sided Wilcoxon p vs random, "
                  "selectors not significantly worse than the best (p_holm >= 0.05)",
                  format_table(self.significance_summary(), floatfmt="{:.3g}", index=False), ""]
        base = self.baseline
        if base and len(self.selectors) > 1:  # random alone has nothing to be compared with
            full = self.significance_table()
            g = full[full["selector"] != base].copy()
            g["cell"] = [f"{100 * r:+.1f}% (p={q:.2g})" for r, q in zip(g["rel_gain_vs_random"], g["p_holm_better_than_random"])]
            rel = g.pivot(index="selector", columns="metric", values="cell").reindex([x for x in self.selectors if x != base])
            rel = rel[[METRIC_LABELS[m] for m in self.metrics]]
            lines += ["Relative AUC gain over random (positive = better) and Holm-corrected one-sided Wilcoxon p that "
                      "the selector beats random", format_table(rel), ""]
        return "\n".join(lines).rstrip("\n")

    def plot(self, path=None, metrics: Optional[Sequence[str]] = None):
        """Mean curve and CI band per selector, one panel per metric; the k* targets as dotted lines.

        Returns the saved path when ``path`` is given, else the matplotlib figure.
        """
        from ...report import get_pyplot, save_figure

        plt = get_pyplot()
        from matplotlib.ticker import MaxNLocator

        metrics = list(metrics or self.metrics)
        ncols = min(3, len(metrics))
        nrows = int(np.ceil(len(metrics) / ncols))
        fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows), squeeze=False)
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for ax, metric in zip(axes.ravel(), metrics):
            mean = self.mean_curves(metric)
            lo, hi = self.bands(metric)
            base = self.baseline
            for s, name in enumerate(self.selectors):
                c = "black" if name == base else colours[s % len(colours)]
                ls = "--" if name == base else "-"
                ax.plot(self.ks, mean[s], ls, color=c, lw=1.6, label=name)
                ax.fill_between(self.ks, lo[s], hi[s], color=c, alpha=0.12, lw=0)
            for t in self.targets:
                t_metric, _, t_value = parse_target(t)
                if t_metric == metric:
                    ax.axhline(t_value, color="grey", ls=":", lw=1.2)
            arrow = "↑" if METRIC_HIGHER_IS_BETTER[metric] else "↓"
            ax.set_title(f"{METRIC_LABELS[metric]}{' of mean ranks' if metric == 'mae' else ''} {arrow}")
            ax.set_xlabel("subset size k")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
        for ax in axes.ravel()[len(metrics):]:
            ax.axis("off")
        handles, labels = axes.ravel()[0].get_legend_handles_labels()
        ci = int(round(100 * self.params.get("ci", 0.95)))
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), frameon=False, bbox_to_anchor=(0.5, -0.02))
        bench = self.params.get("benchmark")
        fig.suptitle(f"{bench + ': ' if bench else ''}rank preservation vs subset size: mean and {ci}% quantile band "
                     f"over T={self.values.shape[2]} trials ({self.params.get('variation')} variation, "
                     f"alpha={self.params.get('alpha')}, representation: {self.params.get('representation')})", fontsize=10)
        fig.tight_layout(rect=(0, 0.06, 1, 0.97))
        return save_figure(fig, path) if path is not None else fig


def plot_curves(result: ProtocolResult, path, metrics: Optional[Sequence[str]] = None, targets: Sequence[str] = ()):
    """Mean curve and CI band per selector, one panel per metric; returns the PNG path (see :meth:`ProtocolResult.plot`)."""
    if targets:
        import dataclasses

        result = dataclasses.replace(result, targets=tuple(targets))
    return result.plot(path, metrics=metrics)
