"""What ``reduce --items`` returns: the item-level manifest, its summary, table and plot (:class:`ItemReduceResult`).

The summary prints the expected error of the manifest's estimator on the population's own models with the items
drawn (:func:`~harness_ext.methods.reduction.item_reduce.expected_errors_and_correlation`), or, for tasks known only by
their scores and sizes, the design's own (:mod:`~harness_ext.methods.reduction.item_design_only`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...report import Result, plural
from .inspect_samples import FILE_NAME as INSPECT_FILE, inspect_only, inspect_task_count
from .item_benchmark import correlation_text, weighted_text
from .item_design_only import design_only_text
from .item_design_plan import is_design_only
from .lm_eval_members import group_text


#: What the expected errors rest on: one draw of items, which every held-out model shares, so the models are not
#: independent evidence (four draws of the Open LLM Leaderboard v2's items, seeds 0-3, put MuSR's frontier coverage at
#: 0.88-0.99 and its frontier width at 18-30 points with 128 held-out models; before ``crosstask`` widened its interval
#: for a model beyond the population on the other tasks, 0.37-0.86: docs/frontier.md).
DRAW_NOTE = ("These figures are for this draw of items, which every held-out model shares: another draw can move a "
             "coverage far more than the number of models suggests (over four draws of the Open LLM Leaderboard v2's "
             "items, MuSR's frontier coverage ranged from 0.88 to 0.99 and its interval width from 18 to 30 points).")

#: The ``unit`` column of :meth:`ItemReduceResult.to_frame`, by whether every task's scores are proportions.
UNITS = {True: "0-1", False: "task scale"}


def _taken_text(manifest: dict) -> str:
    """What the lm-eval groups named in the query stood for (``" Groups named: leaderboard_bbh: its 24 tasks ..."``)."""
    notes = manifest.get("groups_taken") or []
    return f" Groups named: {'; '.join(notes)}." if notes else ""


class ItemReduceResult(Result):
    """An item-level reduction: the manifest, per task the items run and the expected error.

    ``table`` (also :meth:`to_frame`): one row per task with ``items`` (the task's), ``run`` (the sample), and for
    the interpolation and extrapolation splits the mean |error|, mean interval width and coverage of the
    manifest's estimator on the population's own models; a ``benchmark`` row for the full score. Errors and widths
    are on the tasks' own scale, as the other results' frames hold scores and errors (a proportion, 0-1, for an
    accuracy), and the ``unit`` column says which: ``"0-1"`` when every task's scores are proportions, else
    ``"task scale"``. The printed summary shows proportions in points (x 100).
    """

    title = "reduce (items)"
    command = "reduce"
    floatfmt = "{:.4f}"

    def __init__(self, manifest: dict):
        self.manifest = manifest
        self.out, self.written = None, []

    @property
    def warnings(self) -> list:
        return list(self.manifest.get("warnings") or [])

    def tables(self) -> dict:
        ex = self.manifest["expected_error"]
        rows = []
        for t, b in list(self.manifest["tasks"].items()) + [("benchmark", None)]:
            row = {"task": t, "metric": b["metric"] if b else "",
                   "items": b["n_items"] if b else self.manifest["cost"]["items_full"],
                   "run": b["n_run"] if b else self.manifest["cost"]["items_run"]}
            for split, short in (("interpolation", "in"), ("extrapolation", "frontier")):
                f = ex[split]["benchmark"] if b is None else ex[split]["tasks"].get(t)
                row.update({f"{short}_abs_error": (f or {}).get("mean_abs_error", 0.0 if f is None and b else None),
                            f"{short}_width": (f or {}).get("mean_width"), f"{short}_coverage": (f or {}).get("coverage")})
            rows.append(row)
        return {"tasks": pd.DataFrame(rows).assign(unit=UNITS[self._proportions()]).set_index("task")}

    def _proportions(self) -> bool:
        """Whether every task's scores are proportions (0/1 answers, or all in [0, 1])."""
        from .item_manifest import decode_scores

        def proportions(b) -> bool:  # 0/1 answers are stored as bits; others are checked
            if "population" not in b:  # a task known by its models' scores alone
                return bool(np.all(np.abs(np.asarray(b["task_scores"]["values"], dtype=float) - 0.5) <= 0.5))
            scores = b["population"]["scores"]
            return scores.get("encoding") == "bits" or bool(np.all(np.abs(decode_scores(scores) - 0.5) <= 0.5))

        return all(proportions(b) for b in self.manifest["tasks"].values())

    def summary(self) -> dict:
        c, d = self.manifest["cost"], self.manifest["design"]
        return {"design": d["design"], "estimator": d["estimator"], "items_run": c["items_run"],
                "items_full": c["items_full"], "share_run": round(c["items_run"] / c["items_full"], 4),
                "manifest_bytes": self.manifest["sizes"]["manifest_bytes"],
                "population_bytes": self.manifest["sizes"]["population_bytes"]}

    def render(self, **_) -> str:
        s = self.summary()
        table, unit, floatfmt = self._shown_table()
        lvl = f"{self.manifest['design']['level']:.0%}"
        d = self.manifest["design"]
        how = {"random": "drawn at random", "stratified": "drawn at random within strata of difficulty",
               "irt-anchors": "anchor points on the IRT item parameters",
               "search": "items chosen on cross-validated error"}[d["design"]]
        budget = (f"a total of {d['n_total']:,} spread over the tasks ({d['task_allocation']})" if d.get("n_total")
                  else f"{d['n_per_task']} per task")
        head = (f"{s['items_run']:,} of {s['items_full']:,} items ({s['share_run']:.1%}) in "
                f"{plural(self.manifest['cost']['tasks'], 'task')}, {how}; {budget}; estimator {s['estimator']}"
                f"{weighted_text(self.manifest)}.{group_text(self.manifest)}{_taken_text(self.manifest)}\n")
        if is_design_only(self.manifest):
            head += design_only_text(self.manifest, unit, lvl)
        else:
            head += (f"Expected error on the population's own models with these items ({unit}): 'in' = models like "
                     f"the population (5 folds), 'frontier' = its strongest 30% predicted from its weakest half; "
                     f"widths and coverage of the {lvl} intervals. {DRAW_NOTE} Manifest {s['manifest_bytes']:,} bytes "
                     f"({s['population_bytes']:,} of them the population's answers).")
        if ex := self.manifest["source"].get("excluded_models"):
            head += f" Population: {plural(ex['n_models'], 'model')} left out by --exclude-models."
        from ...report import format_table
        from .item_others import widened_line

        return (head + widened_line(self.manifest) + correlation_text(self.manifest) + self._inspect_line() + "\n"
                + format_table(table, floatfmt=floatfmt))

    def _inspect_line(self) -> str:
        """How to run the drawn samples of the tasks from Inspect logs (none: ``""``)."""
        n = inspect_task_count(self.manifest)
        path = next((p for p in self.written if Path(p).name == INSPECT_FILE), None)
        if not n or path is None:
            return ""
        alone = (" Every task is from Inspect AI logs, so there is no lm-eval group, HELM conf or task list: "
                 "lm-eval and HELM run none of them." if inspect_only(self.manifest) else "")
        return (f"\n{n} task{'s' * (n != 1)} from Inspect AI logs: run each with inspect eval TASK --model MODEL "
                f"--sample-id IDS, TASK and its IDS (joined with commas) from {path}.{alone}")

    def _shown_table(self) -> tuple:
        """``(table, unit, float format)`` as the summary prints it: errors and widths in points (0-100) when every
        task's scores are proportions (the harness's accuracy as a percentage), else on the tasks' own scale."""
        table = self.tables()["tasks"].drop(columns="unit")  # the printed unit is said above the table
        figures = [c for c in table.columns if c.endswith(("_abs_error", "_width", "_coverage"))]
        table[figures] = table[figures].astype(float)  # a figure not computed (None) printed blank, as NaN is
        if not self._proportions():
            return table, "scores on the tasks' own scale", self.floatfmt
        cols = [c for c in table.columns if c.endswith(("_abs_error", "_width"))]
        table[cols] = table[cols].astype(float) * 100.0
        return table, "points, 0-100", "{:.2f}"

    def plot(self, path=None):
        """Each task's and the benchmark's expected error with these items: mean |error| and the 90% interval's
        half-width, for models like the population and at its frontier, in the summary's unit.

        Returns the path written, or the matplotlib figure when ``path`` is None.
        """
        from ...report import get_pyplot, save_figure
        from .harness_names import reduced_name

        table, unit, _ = self._shown_table()
        plt = get_pyplot()
        fig, ax = plt.subplots(figsize=(max(6.4, 1.1 * len(table) + 2), 4.0))
        x = np.arange(len(table))
        # A design drawn from task sizes fits nothing: its 'frontier' is the strongest 30%'s own scores, not predicted.
        top = ("its strongest 30%" if is_design_only(self.manifest)
               else "its frontier (strongest 30% from the weakest half)")
        for off, (short, label) in zip((-0.2, 0.2), (("in", "models like the population"), ("frontier", top))):
            err = table[f"{short}_abs_error"].astype(float).to_numpy()
            bars = ax.bar(x + off, err, width=0.38, label=f"mean |error|: {label}")
            ax.plot(x + off, table[f"{short}_width"].astype(float).to_numpy() / 2, linestyle="none", marker="_",
                    markersize=18, markeredgewidth=2.5, color=bars.patches[0].get_facecolor() if len(bars.patches) else None,
                    label=f"90% interval half-width: {label}")
        ax.set_xticks(x, [str(t) for t in table.index], rotation=30, ha="right")
        ax.set_ylabel(f"expected error ({unit})")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: it hid the tallest marks
        c = self.manifest["cost"]
        ax.set_title(f"{reduced_name(self.manifest) or 'benchmark'}: {c['items_run']:,} of {c['items_full']:,} items "
                     + ("(the design, for the store's models' scores)" if is_design_only(self.manifest)
                        else "(held-out population models)"))
        return fig if path is None else save_figure(fig, path)

    def write(self, out, formats=None) -> list:
        """Write the manifest with each named manifest writer (default: as ``reduce``'s) into folder ``out``."""
        from .manifest import write_outputs
        from .reduce import DEFAULT_FORMATS

        formats = DEFAULT_FORMATS if formats is None else formats
        paths = write_outputs(self.manifest, out, formats)
        self.out, self.written = Path(out), list(paths)
        return paths
