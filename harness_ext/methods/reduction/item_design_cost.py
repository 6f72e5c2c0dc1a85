"""What a dataset subset's cost buys as random documents of every dataset instead, for ``reduce``'s summary.

A subset of datasets is predicted through the population's structure, which shrinks a model beyond the population
toward it. The same number of documents drawn at random from every dataset (``reduce --items-total N``, read from the
results files alone: :mod:`~harness_ext.methods.reduction.item_design_only`) is estimated by their mean, whose error
and interval do not depend on where the model lies. :func:`random_documents_evidence` gives the design's expected
figures at that cost for the training models' own scores (every model, and the strongest 30%), so ``reduce`` can put
them beside the subset's. Only for lm-eval tasks with known sizes and scores in [0, 1] on a linear scale.

References
----------
Cochran (1977), Sampling Techniques, §2.5, §5.5 (Neyman allocation); Zhang, Dorner and Hardt (2025), §5.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

#: The benchmarks the lm-eval adapter stores its tasks under: their documents are what ``--samples`` draws from.
LM_EVAL_BENCHMARKS = frozenset({"lm_eval", "mmlu"})


def document_sizes(facts) -> tuple:
    """``(documents per dataset, where they came from)`` or ``(None, None)``: the results files' ``n-samples``, or
    MMLU's test set for its 57 subjects when the files give none (lm-eval 0.3); None too when a dataset's metric is
    not a mean of its documents' scores (:func:`~.item_design_only.aggregation`)."""
    from ...benchmarks import MMLU_TEST_SIZES
    from ...store.lm_eval_tasks import MAX_DOCUMENTS

    from .item_design_only import aggregation

    metas = [facts.meta.get(c) or {} for c in facts.columns]
    if not metas or any(m.get("benchmark") not in LM_EVAL_BENCHMARKS for m in metas):
        return None, None
    if any(aggregation(str(m.get("metric") or ""), None) != "mean" for m in metas):  # MCC, corpus F1, perplexity
        return None, None
    ns = [m.get("n_samples") for m in metas]
    # A count above MAX_DOCUMENTS is no task's size (a store read before counts were checked may hold one).
    if all(isinstance(v, (int, float)) and np.isfinite(v) and 2 <= v <= MAX_DOCUMENTS for v in ns):
        return np.array(ns, dtype=float), "n-samples from the results files"
    if all(m.get("benchmark") == "mmlu" and c in MMLU_TEST_SIZES for c, m in zip(facts.columns, metas)):
        return np.array([MMLU_TEST_SIZES[c] for c in facts.columns], dtype=float), "MMLU's test set"
    return None, None


def random_documents_evidence(facts, subset_idx, level: float = 0.9, random_state: int = 0) -> Optional[dict]:
    """The design's expected figures for the subset's number of documents drawn at random from every dataset
    (Neyman's allocation over the datasets, the benchmark's weights), at the training models' scores on the harness's
    metric; None where that plan does not apply (sizes unknown, not lm-eval tasks, a non-linear scale, scores outside
    [0, 1], or a subset that is every dataset)."""
    from .benchmark_score import affine_inverse, harness_weights
    from .item_design_only import allocate_documents, design_expected
    from .manifest_steps import facts_normalisations

    sizes, source = document_sizes(facts)
    subset_idx = np.asarray(subset_idx, dtype=int)
    if sizes is None or len(subset_idx) >= len(facts.columns):
        return None
    maps = [affine_inverse(n) for n in facts_normalisations(facts)]
    if any(m is None for m in maps):
        return None
    offset, slope = (np.array(v, dtype=float) for v in zip(*maps))
    raw = offset + slope * np.asarray(facts.X, dtype=float)
    if not (np.nanmin(raw) >= 0 and np.nanmax(raw) <= 1):
        return None
    bench = {(facts.meta.get(c) or {}).get("benchmark") for c in facts.columns}
    w, weighting = harness_weights(list(facts.columns), bench.pop() if len(bench) == 1 else "")
    weights = dict(zip(facts.columns, (float(v) for v in w)))
    tasks = {c: {"n_items": int(sizes[j]), "scores": pd.Series(raw[:, j]).dropna()} for j, c in enumerate(facts.columns)}
    n_total = int(sizes[subset_idx].sum())
    ex = design_expected(tasks, allocate_documents(tasks, weights, None, n_total, "neyman"), weights, level, random_state)
    return {"items_total": n_total, "items_full": int(sizes.sum()), "sizes": source, "weighting": weighting,
            "allocation": "neyman", "estimator": "sample_mean",
            "interpolation": ex["interpolation"]["benchmark"], "extrapolation": ex["extrapolation"]["benchmark"],
            "figures": "the design's own distribution (hypergeometric draws of each dataset's documents) at the "
                       "training models' scores, as 0/1 answers: 'interpolation' every model, 'extrapolation' the "
                       "strongest 30% by the benchmark's score"}


def random_documents_line(ev: dict) -> str:
    """``reduce``'s line for :func:`random_documents_evidence` (points: the scores are proportions)."""
    i, f = ev["interpolation"], ev["extrapolation"]
    if i.get("mean_abs_error") is None or f.get("mean_abs_error") is None:
        return ""

    def fig(d):
        return f"{100 * d['mean_abs_error']:.2f} points, width {100 * d['mean_width']:.2f}, coverage {d['coverage']:.2f}"

    return (f"random documents instead, at the subset's cost ({ev['items_total']:,} of {ev['items_full']:,}, drawn "
            f"from every dataset: reduce --items-total {ev['items_total']}): the sample mean's expected error by the "
            f"design, for these models {fig(i)}; for their strongest 30% {fig(f)}; it does not shrink toward the "
            f"models a reduction saw, so a model beyond them keeps it (sizes: {ev['sizes']}; the new model's "
            "--log_samples output is what predict reads)")
