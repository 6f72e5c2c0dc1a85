"""Item designs in an item-level reduction: how many items each task runs, which ones, and what predict needs.

``reduce --items N`` runs ``N`` items of every task; ``reduce --items-total N`` spreads ``N`` items over
the benchmark's tasks (``--item-allocation``: Neyman's rule on the tasks' weights and the population's
per-task standard deviation, or proportional to the tasks' sizes). ``--item-design`` chooses the items
in each task (:mod:`harness_ext.methods.engine.item_designs`): ``random`` (simple random sampling),
``stratified`` (strata by the population's per-item accuracy, ``--item-strata`` of them, allocated by
the same rule), ``irt-anchors`` (tinyBenchmarks' anchor points on the 2PL item parameters) or ``search``
(the best of many random subsets by a ridge regression's held-out error: random search + learn). The
manifest records per task what the estimators need: the stratum of every item (``strata``) or the
anchors' cluster sizes (``anchor_clusters``); :func:`design_info` reads them back, checked.

References
----------
Cochran (1977), Sampling Techniques, §5.5 (allocation). Polo et al. (2024), §3.1 (IRT anchor points).
Zhang, Dorner and Hardt (2025), §3 (random search + learn).
"""

from __future__ import annotations

import base64
import hashlib

import numpy as np

from ...errors import HarnessExtError

#: Designs of the item manifest (``anchors``, the dataset-subset path of tinyBenchmarks' correctness anchors,
#: is not one of them: it keeps a dataset-level manifest).
ITEM_DESIGNS = ("random", "stratified", "irt-anchors", "search")
#: The designs that choose their items from the population's answers (model-based: no design guarantee).
CHOSEN_DESIGNS = ("irt-anchors", "search")
DEFAULT_DESIGN = "random"
#: Why the default design is the default: measured by benchmarks/quality_items.py (see benchmarks/HISTORY.md).
DESIGN_WHY = {
    "random": ("random items (the default): the design-based estimators (sample mean, cross-fitted AIPW, and the "
               "AIPW that crosstask falls back on) are unbiased under a random draw whatever the new model is, so "
               "their intervals hold at the frontier too (Zhang, "
               "Dorner and Hardt 2025). Measured at 50 items per task on the 8 shared item tables (HELM Lite, Open "
               "LLM Leaderboard v2; 10 seeds, benchmarks/quality_items.py --designs), mean |error| over the best "
               "of the paper's baselines (sample mean, random sampling + learn, its AIPW), inside the population / at its frontier: AIPW on random items 1.195 / 0.996, on items "
               "stratified by difficulty 1.182 / 1.006 (proportional) and 1.139 / 1.085 (Neyman), IRT anchors "
               "1.347 / 1.503 (frontier coverage down to 0.18), items chosen on cross-validated error (random search "
               "+ learn) 1.015 / 3.344 (frontier coverage down to 0.003): no other design is better at the frontier"),
    "stratified": ("items stratified by the population's per-item accuracy: the stratified estimators stay "
                   "design-unbiased whatever the new model is (Cochran 1977, §5); measured no better than random "
                   "items at the frontier (see the random design's reason)"),
    "irt-anchors": ("anchor points on the 2PL item parameters (Polo et al. 2024): model-based, the interval is "
                    "calibrated on the population's held-out models and its frontier, with no design guarantee; "
                    "measured 1.50x the best baseline's error at the frontier (see the random design's reason)"),
    "search": ("items chosen on cross-validated error (random search + learn, Zhang, Dorner and Hardt 2025): the "
               "best of 2,000 random subsets by a ridge regression's held-out error on the population; model-based, "
               "its interval calibrated on held-out models whose items were searched without them and on the "
               "population's own frontier, with no design guarantee. Measured better than random items + ridge inside "
               "a large population (Open LLM v2, 321 models: 0.83-0.91x the best baseline) and 3.3x the best "
               "baseline's error at the frontier (see the random design's reason)"),
}

#: The command's options and the Python API's arguments (harness_ext.reduce_items) both named: this module serves both.
EITHER_COUNT = ("give either --items N (items=N in Python: items per task) or --items-total N (n_total=N: over the "
                "benchmark's tasks)")


def task_sd(M: np.ndarray) -> float:
    """The population's typical per-item standard deviation in a task: the root of its models' mean variance."""
    return float(np.sqrt(np.mean(np.var(np.asarray(M, dtype=float), axis=1))))


def items_per_task(pops: dict, weights: dict, n_items=None, n_total=None, allocation: str = "neyman") -> dict:
    """``task -> items to run`` (:func:`spread_items`) of tasks known by their population's answers, ``pops``: task
    -> (models x items answers, models); a task's per-item standard deviation is :func:`task_sd`'s."""
    return spread_items({t: pops[t][0].shape[1] for t in pops}, lambda t: task_sd(pops[t][0]), weights, n_items,
                        n_total, allocation)


def spread_items(sizes: dict, sd_of, weights: dict, n_items=None, n_total=None, allocation: str = "neyman") -> dict:
    """``task -> items to run``: ``n_items`` each (at most the task's), or ``n_total`` spread over the tasks.

    ``sizes``: task -> its number of items; ``sd_of(task)``: its typical per-item standard deviation (asked only for a
    total). With ``n_total``, Neyman's rule gives task ``t`` ``n_t`` proportional to ``w_t S_t`` (the variance of
    the weighted mean of task estimates, the sum of ``w_t^2 S_t^2 / n_t``, is then smallest), ``proportional`` gives
    ``n_t`` proportional to ``N_t``; each task at least 2 items.

    Raises
    ------
    HarnessExtError
        Neither or both of ``n_items`` and ``n_total``, or a total below 2 items per task.
    """
    from ..engine.item_designs import allocate

    if (n_items is None) == (n_total is None):
        raise HarnessExtError(EITHER_COUNT)
    tasks = list(sizes)
    if n_items is not None:
        return {t: int(min(int(n_items), sizes[t])) for t in tasks}
    if int(n_total) < 2 * len(tasks):
        raise HarnessExtError(f"--items-total {n_total}: {len(tasks)} tasks need at least {2 * len(tasks)} items "
                              "(2 per task, for an interval)")
    n = allocate(np.array([sizes[t] for t in tasks]), int(n_total), sds=[sd_of(t) for t in tasks], rule=allocation,
                 weights=[weights[t] for t in tasks])
    return dict(zip(tasks, (int(v) for v in n)))


def task_seed(random_state: int, task: str) -> int:
    """A per-task seed: the same task gets the same items for the same ``random_state``, whatever else is reduced."""
    return int.from_bytes(hashlib.sha256(f"{int(random_state)}\0{task}".encode()).digest()[:4], "little")


def draw_task(design: str, M: np.ndarray, n: int, seed: int, *, n_strata: int = 5,
              allocation: str = "neyman") -> tuple:
    """``(sorted sampled columns, info for the estimators, manifest fields)`` of one task under ``design``."""
    from ..engine.item_designs import draw_design

    S, info = draw_design(design, M, n, seed, n_strata=n_strata, allocation=allocation)
    fields = {}
    if "strata" in info:
        labels = info["strata"].astype(np.uint8)
        fields["strata"] = {"labels": base64.b64encode(labels.tobytes()).decode("ascii"),
                            "sizes": np.bincount(labels).tolist(), "n_run": [int(v) for v in info["n_per_stratum"]],
                            "rule": "equal-size groups of the items ranked by the population's mean score"}
    if "weights" in info:
        fields["anchor_clusters"] = [int(round(w * M.shape[1])) for w in info["weights"]]
    return np.asarray(S, dtype=np.int64), info, fields


def design_info(block: dict, n_items: int, n_sample: int, where: str) -> dict:
    """What the design's estimators need for one task of a manifest, checked: ``{}``, ``{"strata"}`` or
    ``{"weights"}``. A malformed field raises :class:`HarnessExtError` naming ``where`` and the reason."""
    out = {}
    if "strata" in block:
        st = block["strata"]
        try:
            labels = np.frombuffer(base64.b64decode(st["labels"], validate=True), dtype=np.uint8).astype(np.int64)
        except (KeyError, TypeError, ValueError):
            raise HarnessExtError(f"{where}: strata.labels is not base64 stratum labels") from None
        if len(labels) != n_items:
            raise HarnessExtError(f"{where}: {len(labels)} stratum labels for {n_items} items")
        if not isinstance(st.get("sizes"), list) or np.bincount(labels).tolist() != st["sizes"]:
            raise HarnessExtError(f"{where}: strata.sizes do not match the labels")
        out["strata"] = labels
    if "anchor_clusters" in block:
        c = block["anchor_clusters"]
        if not (isinstance(c, list) and len(c) == n_sample and all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in c)):
            raise HarnessExtError(f"{where}: anchor_clusters must be one positive integer per sampled item")
        out["weights"] = np.asarray(c, dtype=float) / sum(c)
    return out


def manifest_design(manifest: dict) -> str:
    """The manifest's item design (``random`` for manifests written before designs were recorded)."""
    return (manifest.get("design") or {}).get("design", DEFAULT_DESIGN)


def fit_for_design(design: str, cls, level: float, info: dict, M: np.ndarray, pos: np.ndarray, used=None):
    """``cls`` fitted on the population ``M`` for the sampled columns ``pos`` under ``design``; ``used``
    (a mask over the manifest's sample) keeps the anchors' weights of the items a model logged.

    Raises
    ------
    HarnessExtError
        An estimator that does not fit the design, or a stratum with no logged item.
    """
    from ..engine.item_designs import design_estimator

    if "weights" in info and used is not None:
        info = dict(info, weights=info["weights"][used])
    try:
        return design_estimator(design, cls, level, info, M, pos)
    except ValueError as exc:
        raise HarnessExtError(str(exc)) from None


def held_out_estimate(design: str, cls, level: float, info: dict, M, S, train, test, seed: int = 0):
    """The design's estimate for the ``test`` models fitted on the ``train`` ones (the expected error).

    IRT anchors and searched items are chosen again on the training models, so a held-out model never picks
    its own items; the random and stratified designs keep the manifest's sample (fixed before any answer is
    seen).
    """
    if design in CHOSEN_DESIGNS:
        est = cls(level=level, random_state=seed)
        idx = est.select(M[train], len(S))
        return est.fit(M[train], idx).predict(M[test][:, idx])
    return fit_for_design(design, cls, level, info, M[train], S).predict(M[test][:, S])


def check_design(design: str, estimator, n_items, n_total, allocations, n_strata: int,
                 random_default: str = "aipw") -> str:
    """The estimator for ``design`` (``estimator``, else the design's default), every option checked first.

    Raises
    ------
    HarnessExtError
        One clear reason: an unknown design or allocation, a budget below 2 items per task (per stratum),
        both or neither of ``n_items`` and ``n_total``, or an estimator that does not fit the design.
    """
    from ...plugin_manager import get_registration
    from ..engine.item_designs import ALLOCATIONS, DESIGN_DEFAULT_ESTIMATORS

    if design not in ITEM_DESIGNS:
        raise HarnessExtError(f"item design {design!r} is not one of {', '.join(ITEM_DESIGNS)}")
    for flag, arg, allocation in zip(("--item-allocation", "--stratum-allocation"), ("allocation", "stratum_allocation"),
                                     allocations):
        if allocation not in ALLOCATIONS:
            raise HarnessExtError(f"{flag} {allocation!r} ({arg}= in Python) is not one of {', '.join(ALLOCATIONS)}")
    if (n_items is None) == (n_total is None):
        raise HarnessExtError(EITHER_COUNT)
    for flag, arg, v in (("--items", "items", n_items), ("--items-total", "n_total", n_total)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 2):
            raise HarnessExtError(f"{flag} {v} ({arg}={v!r} in Python): at least 2 items per task are needed for an "
                                  "interval")
    if design == "stratified" and not (isinstance(n_strata, int) and 1 <= n_strata <= 255):
        raise HarnessExtError(f"--item-strata {n_strata} (n_strata= in Python): between 1 and 255 strata per task")
    name = estimator or (random_default if design == "random" else DESIGN_DEFAULT_ESTIMATORS[design][0])
    reg = get_registration("item_estimators", name)
    strat, anchors = getattr(reg.cls, "uses_strata", False), hasattr(reg.cls, "select")
    ok = {"random": not strat and not anchors, "stratified": strat,
          "irt-anchors": anchors and name in DESIGN_DEFAULT_ESTIMATORS["irt-anchors"],
          "search": getattr(reg.cls, "uses_search", False)}[design]
    if not ok:
        fits = {"random": "one that estimates from a simple random sample (sample_mean, aipw, random_learn, composite)",
                "stratified": "one that uses the strata (stratified_aipw, stratified_mean)",
                "irt-anchors": "irt_anchors, which weights the anchors by their clusters",
                "search": "search_learn, the regression the items were chosen for"}[design]
        raise HarnessExtError(f"item estimator {name!r} does not fit the {design} design: use {fits}")
    return name


def _graded_cells(M: np.ndarray, fills_allowed: bool) -> int:
    """How many scores of ``M`` are neither 0 nor 1; with ``fills_allowed``, not counting a column's cells equal to the
    mean of its 0/1 cells (a gap filled with the item's mean over the models that answered it)."""
    other = ~np.isin(M, (0.0, 1.0))
    if fills_allowed and other.any():
        binary = ~other
        fill = np.where(binary, M, 0.0).sum(axis=0) / np.maximum(binary.sum(axis=0), 1)
        other &= ~(binary.any(axis=0)[None, :] & np.isclose(M, fill[None, :], rtol=0.0, atol=1e-12))
    return int(other.sum())


def check_binary_answers(reg, name: str, answers: dict, design: str = "random") -> None:
    """Refuse an item estimator or design built on the 2PL model for tasks whose answers are graded.

    ``answers``: task -> the population's models x items scores. The 2PL model is of 0/1 correctness; a graded
    metric (F1, BLEU, partial credit) needs an estimator of means (the design-based ones and ``crosstask``) drawn by
    a design that does not fit the 2PL model (``irt-anchors`` chooses its anchors with it).
    """
    anchors = design == "irt-anchors"
    if not (anchors or getattr(reg.cls, "requires_binary", False)):
        return
    # The 2PL estimators refuse any other value, a gap's fill included; the design's fit takes a gap's fill (the item's
    # mean over the models that answered it) as a proportion, as it always has, and refuses only graded answers.
    fills = not getattr(reg.cls, "requires_binary", False)
    graded = {t: _graded_cells(M, fills_allowed=fills) for t, M in answers.items()}
    graded = {t: n for t, n in graded.items() if n}
    if graded:
        shown = ", ".join(f"{t} ({n:,} of {answers[t].size:,})" for t, n in list(graded.items())[:4])
        why = "graded scores" + ("" if anchors else ", or a model's missing answers filled with the item's mean")
        what, fix = ((f"the {design} design chooses its anchors with", "use --item-design random (the default) or "
                      "stratified") if anchors else
                     (f"item estimator {name!r} is built on", "use crosstask (the default), aipw or sample_mean"))
        raise HarnessExtError(f"{what} the 2PL model of 0/1 answers, and "
                              f"{len(graded)} task{'s have' if len(graded) > 1 else ' has'} scores other than 0 and 1: "
                              f"{shown}{' ...' if len(graded) > 4 else ''} ({why}); {fix}")


def design_block(design: str, n_items, n_total, random_state: int, estimator: str, level: float,
                 allocation: str, n_strata: int, stratum_allocation: str = "proportional",
                 estimator_why=None) -> dict:
    """The manifest's ``design``: the design, its budget and seed, the estimator, why the design
    (:data:`DESIGN_WHY`) and why the estimator (``estimator_why``, when given)."""
    seeds = {"random": "simple random sample without replacement",
             "stratified": "simple random sample without replacement in each stratum",
             "irt-anchors": "k-means on the 2PL item parameters",
             "search": "the best of 2,000 random subsets by a ridge regression's held-out error"}[design]
    out = {"design": design, "n_per_task": None if n_items is None else int(n_items), "random_state": int(random_state),
           "estimator": estimator, "level": level, "why": DESIGN_WHY[design]}
    if design == "random":  # the default design's default estimator says why; another is the user's choice
        out["estimator_why"] = estimator_why or "chosen by the user"
    out["seeds"] = f"per task: sha256(random_state, task); {seeds}"
    if n_total is not None:
        out["n_total"] = int(n_total)
        out["task_allocation"] = ("Neyman: items proportional to the task's weight times the population's per-item "
                                  "standard deviation" if allocation == "neyman" else "proportional to the task's items")
    if design == "stratified":
        out["strata_per_task"] = int(n_strata)
        out["stratum_allocation"] = stratum_allocation
    return out


#: ``design["population"]`` of an item manifest whose tasks have no population answers, only their models' task scores
#: (:mod:`~.item_design_only`).
NO_POPULATION = "none"


def is_design_only(manifest: dict) -> bool:
    """Whether an item manifest's tasks have no population answers (drawn from task sizes alone)."""
    return (manifest.get("design") or {}).get("population") == NO_POPULATION


def design_estimator_for(manifest: dict, name: str):
    """The registration of the item estimator ``name`` for ``manifest``'s design; one that does not fit it
    (a stratified sample needs its strata, anchors their weights) raises :class:`HarnessExtError`."""
    from ...plugin_manager import get_registration
    from ..engine.item_designs import DESIGN_DEFAULT_ESTIMATORS

    design = manifest_design(manifest)
    if design not in ITEM_DESIGNS:
        raise HarnessExtError(f"the manifest's item design {design!r} is not one of {', '.join(ITEM_DESIGNS)}")
    reg = get_registration("item_estimators", name)
    strat, anchors = getattr(reg.cls, "uses_strata", False), hasattr(reg.cls, "select")
    if design == "random" and (strat or anchors):
        raise HarnessExtError(f"item estimator {name!r} picks its own items or needs strata; the manifest's items are "
                              "a random sample: use one that estimates from it (sample_mean, aipw, random_learn, "
                              "composite)")
    if design == "stratified" and not strat:
        raise HarnessExtError(f"item estimator {name!r} ignores the manifest's strata, whose items were drawn with "
                              "unequal probabilities: use stratified_aipw or stratified_mean")
    if design == "irt-anchors" and name not in DESIGN_DEFAULT_ESTIMATORS[design]:
        raise HarnessExtError(f"the manifest's items are IRT anchors, weighted by their clusters: use irt_anchors, "
                              f"not {name!r}")
    if design == "search" and not getattr(reg.cls, "uses_search", False):
        raise HarnessExtError(f"the manifest's items were chosen for a regression on them, not drawn at random: use "
                              f"search_learn, not {name!r}")
    if is_design_only(manifest) and getattr(reg.cls, "min_source_models", 1) > 0:
        raise HarnessExtError(f"item estimator {name!r} is fitted on the population's answers, and this manifest has "
                              "none (its tasks were drawn from their sizes, with only the models' task scores): use "
                              "sample_mean, or reduce again from a store with the population's per-sample logs")
    return reg
