"""The full-benchmark score on the harness's own metric and scale, and the interval level.

A manifest's aggregate is a weighted mean of normalised scores (0 = chance, 1 = best
for chance-normalised manifests): what selection and prediction optimise. The number a
user compares with is the benchmark's own score on the harness's metric: for MMLU,
lm-eval's ``mmlu`` group ``acc``, the mean of the 57 subjects' accuracies weighted by
their numbers of test questions. :func:`benchmark_score` says how that score is made
from a manifest's datasets: the metric, the benchmark's weights ``v`` (summing to 1)
and, per dataset, the affine map ``raw_j = offset_j + slope_j * z_j`` from normalised
to raw scores. The benchmark score is then ``R = sum_j v_j raw_j = c + sum_j u_j z_j``
with ``c = sum_j v_j offset_j`` and ``u_j = v_j slope_j``: linear in the normalised
scores, so its interval is calibrated like the normalised aggregate's, with weights
``u`` (:func:`harness_ext.methods.reduction.predict.predict_scores`). Mapping the normalised
aggregate's interval through an inverse transform would be exact only when ``u`` is
proportional to the manifest's weights; MMLU's size weights are not uniform ones.

No such score exists when the datasets are scored with different metrics (HELM's EM
beside F1: a mean of the two means nothing) or when a normalisation is not affine
(Elo ratings, perplexities): then :func:`benchmark_score` returns None with the reason,
and the aggregate stays on the normalised scale, labelled so.

References
----------
Hendrycks et al. (2021), "Measuring Massive Multitask Language Understanding", §3 (the
test set: 14,042 questions in 57 subjects); Gao et al., lm-evaluation-harness v0.4
(group scores: ``aggregate_metric_list``, ``weight_by_size``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...base import check_level
from ...benchmarks import MMLU_TEST_SIZES, mmlu_subject

__all__ = ["BenchmarkScore", "DEFAULT_LEVEL", "affine_inverse", "aggregate_frame", "benchmark_score", "floor_warnings",
           "floor_at_chance", "harness_weights", "raw_aggregate_rmse", "score_truth", "z_of"]

#: The interval level used unless ``predict --level`` (the API's ``level=``) asks for another.
DEFAULT_LEVEL = 0.9


def z_of(level: float) -> float:
    """The two-sided normal quantile of ``level`` (1.6449 for 0.90): a width of ``z`` standard deviations."""
    from ..engine.conformal import _normal_quantile

    return _normal_quantile(check_level(level))


@dataclass(frozen=True)
class BenchmarkScore:
    """How a manifest's datasets make the benchmark's own score (see the module docstring).

    ``weights`` (``v``), ``offset`` and ``slope`` are aligned with the manifest's datasets.
    """

    name: str
    metric: str
    weights: np.ndarray
    weighting: str
    offset: np.ndarray
    slope: np.ndarray

    @property
    def normalised_weights(self) -> np.ndarray:
        """``u``: the benchmark score is ``constant + u . z`` on normalised scores ``z``."""
        return self.weights * self.slope

    @property
    def constant(self) -> float:
        return float(self.weights @ self.offset)

    def describe(self) -> dict:
        """What the JSON and the exports record about the score."""
        return {"benchmark": self.name, "metric": self.metric, "weighting": self.weighting,
                "weights": {"min": float(self.weights.min()), "max": float(self.weights.max())}}


def affine_inverse(norm: dict) -> tuple:
    """``(offset, slope)`` with ``raw = offset + slope * z`` (the inverse of the store's normalisation of a column,
    ``norm`` its record), or None for a non-linear scale."""
    if (norm.get("transform") or "linear") != "linear":
        return None
    lo, span, chance = float(norm["lo"]), float(norm["span"]), float(norm.get("chance") or 0.0)
    if norm.get("flip"):
        return lo + span * (1.0 - chance), -span * (1.0 - chance)
    return lo + span * chance, span * (1.0 - chance)


def harness_weights(names: list, benchmark: str) -> tuple:
    """The benchmark's weights over ``names`` (summing to 1) and how they were chosen, in words."""
    subjects = [mmlu_subject(n) or (n if n in MMLU_TEST_SIZES else None) for n in names]
    if benchmark == "mmlu" and all(subjects):
        sizes = np.array([MMLU_TEST_SIZES[s] for s in subjects], dtype=float)
        return sizes / sizes.sum(), "subjects weighted by their test questions, as lm-eval's mmlu group"
    return np.full(len(names), 1.0 / len(names)), "unweighted mean over the datasets"


def benchmark_score(manifest: dict, columns=None) -> tuple:
    """``(BenchmarkScore, None)``, or ``(None, reason)`` when the datasets make no one score on a harness metric.

    Parameters
    ----------
    manifest : dict
        A validated manifest.
    columns : list of str, optional
        Dataset names in the order the arrays should follow (default the manifest's).

    Returns
    -------
    tuple
        The score's definition, or None and why not (for the output to say).

    References
    ----------
    Hendrycks et al. (2021), §3; lm-evaluation-harness v0.4 group aggregation (``weight_by_size``).
    """
    by_name = {d["name"]: d for d in manifest["datasets"]}
    columns = list(columns) if columns is not None else list(by_name)
    entries = [by_name[c] for c in columns]
    # A matrix given as a DataFrame names no metric: its values are the one "score".
    metrics = sorted({str(e.get("metric") or "score") for e in entries})
    if len(metrics) != 1:
        # A HELM leaderboard's headline is its mean win rate, which a user looks for first: say it is not made.
        helm = all(str(e.get("benchmark") or "").startswith("helm_") for e in entries)
        return None, (f"the datasets are scored with {len(metrics)} different metrics ({', '.join(metrics[:4])}): "
                      "their mean is on no one harness metric" + (
                          "; HELM's mean win rate, the leaderboard's headline, is not predicted either (it ranks a "
                          "model against the leaderboard's others on each dataset)" if helm else ""))
    maps = [affine_inverse(e.get("normalisation") or {}) for e in entries]
    if any(m is None for m in maps):
        bent = [c for c, m in zip(columns, maps) if m is None]
        one = len(bent) == 1
        return None, (f"{len(bent)} dataset{'' if one else 's'} ({', '.join(bent[:3])}{'' if len(bent) <= 3 else ' ...'}) "
                      f"{'is' if one else 'are'} normalised by a non-linear transform (Elo, perplexity): "
                      "the mean on the harness's scale is not what the normalised mean predicts")
    benchmarks = {e.get("benchmark") for e in entries}
    name = benchmarks.pop() if len(benchmarks) == 1 and None not in benchmarks else (manifest.get("group_name") or "benchmark")
    names = [c.split("/", 1)[1] if c.startswith(f"{name}/") else c for c in columns]
    v, how = harness_weights(names, name)
    offset, slope = (np.array(a, dtype=float) for a in zip(*maps))
    return BenchmarkScore(name=name, metric=metrics[0], weights=v, weighting=how, offset=offset, slope=slope), None


def floor_at_chance(manifest: dict) -> bool:
    """Whether the manifest's predictor was fitted on scores floored at chance (manifests written before reductions
    fitted on the scores before the floor, :mod:`harness_ext.store.floor`)."""
    return bool((manifest.get("prediction") or {}).get("floor_at_chance", True))


def score_truth(manifest: dict, train: pd.DataFrame):
    """The training matrix as the benchmark's own score counts it (scores below chance as they are), or None.

    A manifest fitted before the floor at chance (:func:`floor_at_chance` false): ``train`` itself when a score of a
    chance-corrected dataset lies below chance, else None. The benchmark score's interval is then the union of the
    scaled, plain and signed intervals (:func:`harness_ext.methods.engine.newmodel_intervals.calibrate_model_folds`),
    as for a floored manifest's: scaled alone, it held 0.81 of held-out Pythia checkpoints' ``acc``.

    A floored manifest: from its ``training_matrix.unclipped`` (the floored cells' values before the floor,
    written by reductions before they fitted before the floor), or, for a
    matrix rebuilt from the store, its ``attrs["clipped"]``. None when neither records a
    clipped cell (a manifest written before they were recorded: its benchmark score is then
    calibrated on the floored scores, as it was).
    """
    if not floor_at_chance(manifest):
        norms = [d.get("normalisation") or {} for d in manifest["datasets"]]
        on = np.array([bool(n.get("clip")) and float(n.get("chance") or 0.0) > 0 for n in norms])
        X = train.to_numpy(dtype=float)
        return X if on.any() and bool((X[:, on] < 0).any()) else None
    tm = manifest.get("training_matrix")
    if tm is not None:
        rec = tm.get("unclipped")
        if not rec:
            return None
        rows, cols, values = (np.asarray(rec[k]) for k in ("rows", "columns", "values"))
    elif train.attrs.get("clipped"):
        from ...store.matrix import unpack_clipped

        rows, cols, values = unpack_clipped(train.attrs["clipped"], train.index, train.columns)
    else:
        return None
    truth = train.to_numpy(dtype=float, copy=True)
    truth[rows.astype(int), cols.astype(int)] = values.astype(float)
    return truth


def raw_aggregate_rmse(manifest: dict, train: np.ndarray, est, subset_idx, have, weights, agg_rmse, u,
                       truth=None) -> np.ndarray:
    """Cross-validated RMSE of the benchmark's own score ``c + u . z`` per new model (predictors without conformal intervals).

    When ``u`` is proportional to the manifest's ``weights`` and nothing was clipped (``truth`` None,
    :func:`score_truth`) it is the normalised aggregate's RMSE ``agg_rmse`` times the ratio of their sums;
    otherwise the predictor is cross-validated again on the training matrix, held-out models revealing
    each new model's part of the subset, the aggregate taken with ``|u|`` and scored against ``truth``
    (:func:`harness_ext.methods.engine.subset_cv.subset_errors`).
    """
    from ..engine.subset_cv import subset_errors

    scale = float(np.abs(u).sum())
    if truth is None and np.allclose(np.abs(u) / scale, weights / weights.sum(), rtol=1e-9, atol=1e-12):
        return np.asarray(agg_rmse, dtype=float) * scale / float(weights.sum())
    cv = manifest["prediction"]["cross_validation"]
    patterns, inverse = np.unique(have, axis=0, return_inverse=True)
    errs = subset_errors(train, [np.asarray(subset_idx)[p] for p in patterns], est, n_splits=cv["n_splits"],
                         random_state=cv.get("random_state", 0), weights=np.abs(u) / scale, truth=truth)
    return np.array([errs[g].aggregate for g in np.asarray(inverse).reshape(-1)], dtype=float) * scale


def floor_warnings(models, bench, params, observed, Z_new, lower, calibrated: bool = False) -> list:
    """A warning per model whose benchmark score rests on datasets at their chance floor (a manifest fitted on
    floored scores; one fitted before the floor predicts below chance and needs none).

    Normalisation floored scores below chance at chance, and such a manifest's predictor models those floored
    scores, so a predicted score is never below chance: for a model near chance, which scores below
    it on some datasets, the estimate on the harness's scale can be high. ``calibrated``: the
    interval is calibrated on the training scores below chance as they are (:func:`score_truth`), so
    it allows for that; otherwise (a manifest that does not record them) it was calibrated on floored
    scores and may also be too narrow (on held-out Pythia runs, far fewer of those acc intervals than
    of the normalised ones held the truth: docs/benchmark-score.md).
    """
    floor = (params["chance"].to_numpy(dtype=float) > 0) & params["clip"].to_numpy(dtype=bool)
    at = (floor & ~observed & (lower <= 0)) | (floor & observed & (Z_new <= 0))
    tail = ("its interval is calibrated on the training models' scores below chance" if calibrated else
            "its interval too narrow (this manifest does not record the training scores below chance: run reduce "
            "again; the normalised aggregate's interval does not have this problem)")
    out = []
    for model, row in zip(models, at):
        if row.any():
            out.append(f"{model}: {int(row.sum())} datasets are at their chance level (observed, or their interval "
                       f"reaches it); predicted scores are never below chance, so the {bench.name} {bench.metric} "
                       f"estimate may be high; {tail}")
    return out


def aggregate_frame(models, bench, raw_cells, raw_obs, observed, ends: tuple, normalised: tuple, half: tuple,
                    cell_ends: tuple):
    """The ``aggregate`` table: the benchmark's own score (``bench``; None: the normalised one) and the normalised.

    ``normalised``: ``(aggregate, lower, upper, actual)``; ``ends``: the normalised aggregate's range and
    ``cell_ends`` each dataset's (infinite where a dataset has no known scale,
    :func:`harness_ext.store.floor.normalised_bounds`); ``half``: the benchmark score's ``(below, above)``
    half-widths. Its point is the benchmark's weighted mean of the raw cells (observed cells at their measured
    value, also below chance); its bounds stay inside the score's range on a bounded scale.
    """
    agg, agg_lo, agg_hi, agg_actual = normalised
    bounded = bool(np.isfinite(ends[0]) and np.isfinite(ends[1]))
    norm = {"normalised": agg, "normalised_lower": np.clip(agg_lo, *ends), "normalised_upper": np.clip(agg_hi, *ends)}
    if bench is None:
        head = {"metric": "normalised", "aggregate": agg, "lower": norm["normalised_lower"],
                "upper": norm["normalised_upper"], "actual": agg_actual}
    else:
        point = raw_cells @ bench.weights
        clip = lambda x: x  # noqa: E731
        if bounded:  # the score's range on its scale: each dataset's normalised ends mapped back
            a, b = (bench.offset + bench.slope * e for e in cell_ends)
            lo_b, hi_b = bench.weights @ np.minimum(a, b), bench.weights @ np.maximum(a, b)
            clip = lambda x: np.clip(x, lo_b, hi_b)  # noqa: E731
        head = {"metric": bench.metric, "aggregate": point, "lower": clip(point - half[0]),
                "upper": clip(point + half[1]),
                "actual": np.where(np.isnan(raw_obs).any(axis=1), np.nan, np.nan_to_num(raw_obs) @ bench.weights)}
    return pd.DataFrame({"model": models, **head, **norm, "n_observed": observed.sum(axis=1),
                         "normalised_actual": agg_actual})


def chance_warnings(manifest: dict) -> list:
    """A warning when a chance-normalised manifest's aggregate mixes chance-corrected datasets with datasets
    whose chance level is unknown, naming the latter; else nothing.

    A dataset with an unknown chance level is not chance-corrected (0 is taken as chance). When
    no dataset of the manifest is corrected (most leaderboards: free-form or judged tasks the
    built-in table does not list), every score is the same fraction of its scale and the
    aggregate is consistent, so nothing is said (the manifest's datasets record it, and
    ``harness-ext matrix`` lists them). When some are corrected, the aggregate adds corrected
    and uncorrected scores, and a model near chance looks better on the uncorrected ones: then
    the warning, once per prediction. Only bounded, higher-is-better datasets can lack one
    (:func:`harness_ext.store.scales.lacks_chance_level`).

    Parameters
    ----------
    manifest : dict
        A validated manifest.

    Returns
    -------
    list of str
        Zero or one warning.

    References
    ----------
    Subramani, Gomez and Diab, SimBA, §2 (chance-level normalisation of the aggregate).
    """
    from ...store.scales import lacks_chance_level

    if (manifest.get("source", {}).get("query") or {}).get("normalise", "chance") != "chance":
        return []
    norms = [(d["name"], d.get("normalisation") or {}) for d in manifest["datasets"]]
    unknown = [name for name, n in norms if lacks_chance_level(n)]
    corrected = sum(1 for _, n in norms if float(n.get("chance") or 0.0) > 0)
    if not unknown or not corrected:
        return []
    return [f"no known chance level for {len(unknown)} of {len(manifest['datasets'])} datasets "
            f"({', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}) while {corrected} are chance-corrected: "
            "the aggregate adds uncorrected scores (0 taken as chance) to corrected ones, so it overstates a model "
            "near chance on them (give their chance levels with --chance-file when reducing)"]
