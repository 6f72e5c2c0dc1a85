"""Scales and chance levels of datasets: what a score means before it enters a matrix.

Two pieces of knowledge every adapter and the matrix share:

* **Scale** -- the range a metric lives on and the fixed transform that puts it
  on [0, 1], higher is better. The transform never depends on which models are
  in the store, so a new model's score maps through it exactly as the training
  models' scores did (:data:`TRANSFORMS`):

  ================  =========================================================
  scale kind        transform to [0, 1]
  ================  =========================================================
  ``proportion``    ``x`` (bounds [0, 1])
  ``percent``       ``x / 100`` (bounds [0, 100])
  ``bounded``       ``(x - min) / (max - min)`` with declared bounds
                    (Every Eval Ever ``metric_config``, a CSV sidecar)
  ``elo``           expected win probability against a fixed reference
                    rating: ``1 / (1 + 10 ** ((ELO_REFERENCE - x) / 400))``
                    (Elo 1978; Chatbot Arena's Bradley-Terry ratings are on
                    the same base-10, 400-point scale)
  ``perplexity``    ``1 / x``: the geometric-mean probability per token
  ``log_likelihood`` ``exp(x)``: the same probability from a mean log-likelihood,
                    for scores <= 0 (declared, or a metric named so; BARTScore
                    stays ``unbounded`` unless declared: exp compresses it to ~0)
  ``unbounded``     no known scale: min-max over the observed models. The only
                    kind that depends on the training models; the matrix
                    lists such datasets (``df.attrs["training_dependent"]``)
  ================  =========================================================

* **Chance level** -- the score of a random guesser, as a fraction of the
  scale, from :data:`CHANCE_TABLE` (multiple-choice tasks: 1 / number of
  choices, with the source of the count) or a user file
  (:func:`load_chance_file`). Chance correction
  ``max(0, (u - c) / (1 - c))`` needs it; a dataset without a known level is
  reported, never silently corrected with 0.

:class:`DatasetScale` bundles both per dataset; the matrix records one per
column (``df.attrs["datasets"][col]["scale"]``) and the predictor-space
transforms read it.

References
----------
Elo, A. (1978), *The Rating of Chessplayers*, the logistic expected score.
Chiang et al. (2024), Chatbot Arena, §4 (Bradley-Terry ratings on the Elo scale).
SimBA §2: chance-normalised scores ``max(0, (x - x_random) / (1 - x_random))``.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from .globs import is_glob, matches

#: Scale kinds, in the order :func:`infer_scale` considers them.
SCALE_KINDS = ("proportion", "percent", "bounded", "elo", "perplexity", "log_likelihood", "unbounded")
#: Fixed reference rating of the ``elo`` transform: a model rated this gets 0.5. 1000 is Elo's
#: conventional starting rating; Chatbot Arena's ratings (about 800-1400) then span about 0.2-0.9.
ELO_REFERENCE = 1000.0
ELO_SCALE = 400.0
#: transform name -> (to_unit, from_unit), vectorised, for the non-linear kinds.
TRANSFORMS = {
    "elo": (lambda x, ref: 1.0 / (1.0 + 10.0 ** ((ref - x) / ELO_SCALE)),
            lambda u, ref: ref - ELO_SCALE * np.log10(1.0 / np.clip(u, 1e-12, 1 - 1e-12) - 1.0)),
    "inverse": (lambda x, ref: 1.0 / np.where(x > 0, x, np.nan), lambda u, ref: 1.0 / np.clip(u, 1e-12, None)),
    "exp": (lambda x, ref: np.exp(np.minimum(x, 0.0)), lambda u, ref: np.log(np.clip(u, 1e-300, None))),
}
#: Leaderboard scores on a fixed documented scale that is not 0-1 or 0-100, by :func:`key` of the name.
KNOWN_SCALES = {
    "mt_bench": (1.0, 10.0, "MT-Bench: GPT-4 judge score 1-10 (Zheng et al. 2023)"),
    "mtbench": (1.0, 10.0, "MT-Bench: GPT-4 judge score 1-10 (Zheng et al. 2023)"),
    "biggen": (1.0, 5.0, "BiGGen Bench: 1-5 rubric score (Kim et al. 2024)"),
    "biggen_bench": (1.0, 5.0, "BiGGen Bench: 1-5 rubric score (Kim et al. 2024)"),
}
#: metric names (normalised) that are log-probability-like.
_PERPLEXITY = re.compile(r"(^|_)(word_|byte_|token_)?(perplexity|ppl)($|_)")
_LOGLIK = re.compile(r"log_?likelihood|logprob")
_ELO = re.compile(r"(^|[^a-z])(elo|arena|rating|bradley)")
#: Accuracy-like metrics a multiple-choice chance level applies to ("score": a leaderboard's own column).
#: Metrics reported on 0-100 by some harnesses (BLEU, chrF, ROUGE): [0, 100] values are percentages.
PERCENT_METRICS = frozenset({"bleu", "bleu_4", "chrf", "f1", "rouge", "rouge_1", "rouge_2", "rouge_l", "rougel",
                             "pass_1", "pass"})
ACCURACY_METRICS = frozenset({
    "acc", "acc_norm", "accuracy", "exact_match", "em", "quasi_exact_match", "qem", "pem", "prefix_exact_match",
    "quasi_prefix_exact_match", "exact_match_indicator", "score", "main_score", "balanced_accuracy",
    "multiple_choice_grade",  # BIG-bench's (and lm-eval v0.3's bigbench_* tasks') multiple-choice accuracy
})


#: Words of a metric name that say it counts correct answers ("COT correct", HELM's chain-of-thought accuracy on
#: GPQA and MMLU-Pro; "mean_accuracy"; "pct_correct").
_ACCURACY_WORDS = frozenset({"acc", "accuracy", "correct", "em"})


def is_accuracy_metric(metric) -> bool:
    """Whether a metric counts correct answers, so a multiple-choice chance level applies to it.

    :data:`ACCURACY_METRICS`, a name starting with ``acc``/``exact_match``/``quasi_exact``, or one with a word of
    :data:`_ACCURACY_WORDS` (``cot_correct``, ``mean_accuracy``), in any spelling (:func:`key`).

    Examples
    --------
    >>> is_accuracy_metric("COT correct"), is_accuracy_metric("acc_norm"), is_accuracy_metric("bleu")
    (True, True, False)
    """
    m = key(str(metric).split(",")[0])
    return (m in ACCURACY_METRICS or m.startswith(("acc", "exact_match", "quasi_exact"))
            or not _ACCURACY_WORDS.isdisjoint(m.split("_")))


def key(name) -> str:
    """The lookup key of a dataset/task/metric name: lower case, runs of non-alphanumerics -> ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_")


# -- the per-dataset record -------------------------------------------------------------------
@dataclass(frozen=True)
class DatasetScale:
    """What normalisation knows about one dataset (one matrix column).

    Attributes
    ----------
    scale : str
        One of :data:`SCALE_KINDS`.
    lo, hi : float or None
        Bounds on the raw scale (``None`` when unbounded).
    transform : str
        ``linear`` (``(x - lo) / (hi - lo)``) or a key of :data:`TRANSFORMS`.
    ref : float
        The transform's parameter (the Elo reference rating), else 0.
    chance : float or None
        A random guesser's score as a fraction of the scale (``None``: unknown).
    chance_source : str or None
        Where ``chance`` comes from ("4 answer choices", "csv sidecar", ...).
    higher_is_better : bool
    kind : str
        ``dataset`` or ``aggregate``.
    training_dependent : bool
        True only for ``unbounded`` (min-max over the observed models).
    """

    scale: str
    lo: Optional[float]
    hi: Optional[float]
    transform: str = "linear"
    ref: float = 0.0
    chance: Optional[float] = None
    chance_source: Optional[str] = None
    higher_is_better: bool = True
    kind: str = "dataset"
    training_dependent: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def infer_scale(values=None, *, name: str = "", metric: str = "", declared_lo=None, declared_hi=None,
                hint: Optional[str] = None, percent_ok: bool = True) -> tuple:
    """``(scale kind, lo, hi)`` of a column.

    In order: a ``hint`` (the adapter's or the user's word), declared bounds, the
    metric's name (perplexity, log-likelihood, Elo/arena/rating), then the values:
    all in [0, 1] is a proportion, all in [0, 100] with one above 1 a percentage;
    anything else is ``unbounded``. ``percent_ok=False`` (a metric not known to be
    a percentage or proportion) leaves [0, 100] values unbounded. Only categorical facts of the values are used,
    never their spread, so the bounds do not move with the set of models.
    """
    lo = _finite(declared_lo)
    hi = _finite(declared_hi)
    if hint in ("proportion", "percent"):
        return (hint, 0.0, 1.0 if hint == "proportion" else 100.0)
    if hint in (None, "bounded") and lo is not None and hi is not None and hi > lo:
        return ("proportion", 0.0, 1.0) if (lo, hi) == (0.0, 1.0) else ("bounded", lo, hi)
    if hint in ("elo", "perplexity", "log_likelihood", "unbounded"):
        return (hint, None, None)
    m, n = key(metric), key(name)
    v = np.asarray([] if values is None else values, dtype=float)
    v = v[np.isfinite(v)]
    known = KNOWN_SCALES.get(n) or _known_prefix(n, v)
    if known and hint is None:
        return ("bounded", known[0], known[1])
    if _PERPLEXITY.search(m) or m in ("bits_per_byte", "bpb"):
        return ("perplexity", None, None) if "bits" not in m and m != "bpb" else ("unbounded", None, None)
    if _LOGLIK.search(m):
        return ("log_likelihood", None, None)
    if _ELO.search(n.replace("_", " ")) or _ELO.search(m.replace("_", " ")):
        if v.size == 0 or v.max() > 100:
            return ("elo", None, None)
    if v.size and v.min() >= 0 and v.max() <= 1:
        return ("proportion", 0.0, 1.0)
    if percent_ok and v.size and v.min() >= 0 and v.max() <= 100:
        return ("percent", 0.0, 100.0)
    return ("unbounded", None, None)


def _known_prefix(n: str, v: np.ndarray):
    """A :data:`KNOWN_SCALES` entry whose key starts the name (``mt_bench_multi_turn``, ``mt_bench_score``),
    when every observed value lies within its bounds; else None. A qualified name may be another
    quantity, so the values must agree with the scale before it is trusted."""
    for k, spec in KNOWN_SCALES.items():
        if n.startswith(k + "_") and v.size and spec[0] <= v.min() and v.max() <= spec[1]:
            return spec
    return None


def _finite(v) -> Optional[float]:
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


def transform_of(scale: str) -> tuple:
    """``(transform, ref)`` for a scale kind (``linear`` for the bounded kinds)."""
    return {"elo": ("elo", ELO_REFERENCE), "perplexity": ("inverse", 0.0),
            "log_likelihood": ("exp", 0.0)}.get(scale, ("linear", 0.0))


def pre_transform(X, transform, ref) -> np.ndarray:
    """Apply each column's non-linear transform (``transform``/``ref`` are per-column arrays)."""
    return _per_column(X, transform, ref, 0)


def post_transform(U, transform, ref) -> np.ndarray:
    """Inverse of :func:`pre_transform`."""
    return _per_column(U, transform, ref, 1)


def _per_column(X, transform, ref, which: int) -> np.ndarray:
    X = np.array(X, dtype=float, copy=True)
    transform = np.asarray(transform, dtype=object)
    ref = np.asarray(ref, dtype=float)
    for name, funcs in TRANSFORMS.items():
        cols = np.flatnonzero(transform == name)
        if cols.size:
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                X[:, cols] = funcs[which](X[:, cols], ref[cols])
    return X


#: Scales on which a chance level corrects a score (``max(0, (x - chance) / (1 - chance))``, higher is better):
#: the bounded ones. An Elo rating, a perplexity or a min-max column never gets one, so none is missing there.
CHANCE_SCALES = ("proportion", "percent", "bounded")


def lacks_chance_level(normalisation: dict) -> bool:
    """Whether a dataset's chance correction would apply but its chance level is unknown.

    Parameters
    ----------
    normalisation : dict
        A dataset's normalisation as a matrix's ``attrs`` or a manifest records it
        (``scale``, ``flip``, ``chance_source``, ``description``).

    Returns
    -------
    bool
        True for a bounded, higher-is-better dataset with no chance source. Manifests
        written before ``scale`` was recorded are judged by their description, as before.

    References
    ----------
    SimBA §2 (chance-level normalisation).
    """
    if "chance" in str(normalisation.get("description") or "") or normalisation.get("chance_source"):
        return False
    if "scale" not in normalisation:
        return True
    return normalisation.get("scale") in CHANCE_SCALES and not normalisation.get("flip")


def mixed_scales_note(df) -> Optional[str]:
    """A warning when a matrix's columns are on different scales (an Elo rating beside accuracies), else None.

    A matrix the store normalised is on [0, 1] (below chance negative) and is not checked; one on the
    harnesses' own scales (``normalise="none"``) or a DataFrame built by hand may not be, and then the uniform full-benchmark mean, and a subset chosen to predict it, follow
    the widest column. Only the categorical :func:`infer_scale` of each column is used.

    References
    ----------
    Elo (1978) for the rating scale.
    """
    if (df.attrs.get("query") or {}).get("normalise") in ("chance", "minmax"):
        return None  # the store put every column on [0, 1] (below chance negative, not another scale)
    kinds: dict = {}
    # One array, not df[col] per column: pandas deep-copies the frame's attrs on every column access.
    for col, v in zip(df.columns, df.to_numpy(dtype=float).T):
        if np.isfinite(v).any():  # by the values only: a name's known bounds say nothing of a normalised column
            kinds.setdefault(infer_scale(v)[0], []).append(str(col))
    if len(kinds) < 2:
        return None
    # The commonest kind is the benchmark's; the others are named (up to five of each).
    main = max(kinds, key=lambda k: len(kinds[k]))
    odd = "; ".join(f"{k}: {', '.join(v[:5])}{' ...' if len(v) > 5 else ''}" for k, v in kinds.items() if k != main)
    return (f"the matrix mixes scales ({len(kinds[main])} columns {main}; {odd}): the full-benchmark mean and the "
            "subset chosen to predict it follow the widest column. Put the columns on one scale first (ingest the "
            "scores and use load_matrix, which normalises each column, or rescale them)")


# -- chance levels ----------------------------------------------------------------------------
def _choices(n: int, what: str = "answer choices") -> tuple:
    return (1.0 / n, f"{n} {what}")


_FREE = (0.0, "free-form answer: a random guess scores about 0")
_BIN = _choices(2, "classes (yes/no)")

#: Built-in chance levels, by :func:`key` of the dataset or task name: ``(chance as a fraction of the
#: scale, source)``. Multiple-choice tasks are 1 / number of choices (the count is the source); free-form
#: generation tasks are 0. Aliases (HELM display names, lm-eval task names) map to the same entry.
CHANCE_TABLE: dict = {}


def _add(names, value):
    for n in names.split("|"):
        CHANCE_TABLE[key(n)] = value


_add("mmlu|hendrycksTest|mmlu all subjects|massive multitask language understanding|mmlu_stem|mmlu_humanities|"
     "mmlu_social_sciences|mmlu_other|global_mmlu|global mmlu lite|mmlu_redux|cmmlu|kmmlu", _choices(4))
_add("mmlu_pro|mmlu-pro|mmlu pro|leaderboard_mmlu_pro", _choices(10, "answer choices (MMLU-Pro, Wang et al. 2024)"))
_add("arc_easy|arc_challenge|arc|ai2_arc|arc-e|arc-c|arc (challenge)|arc (easy)|arc challenge|arc easy|ai2 reasoning challenge",
     _choices(4, "answer choices (ARC: most questions have 4)"))
_add("hellaswag|hella swag", _choices(4, "endings"))
_add("winogrande|winogrande_xl|winogrande_debiased", _choices(2, "options"))
_add("openbookqa|openbook_qa|obqa", _choices(4))
_add("med_qa|medqa|medqa_4options|med qa", _choices(4, "answer choices (MedQA-USMLE 4-option, as HELM runs it)"))
_add("boolq|bool_q|super_glue_boolq", _choices(2, "answers (yes/no)"))
_add("piqa", _choices(2, "solutions"))
_add("siqa|social_iqa|social iqa", _choices(3))
_add("commonsense_qa|commonsenseqa|csqa", _choices(5))
_add("copa|xcopa", _choices(2, "alternatives"))
_add("wsc|wsc273|winograd", _choices(2, "candidates"))
_add("race|race_high|race_middle|sciq|logiqa|logiqa2|headqa_en|headqa_es", _choices(4))
_add("mathqa|math_qa", _choices(5))
_add("pubmedqa|pubmed_qa", _choices(3, "answers (yes/no/maybe)"))
_add("mnli|mnli_mismatch|mnli_matched|anli_r1|anli_r2|anli_r3|anli|xnli", _choices(3, "labels (entailment/neutral/contradiction)"))
_add("cola|sst2|mrpc|qqp|qnli|rte|wnli|imdb|civil_comments|civilcomments|cb_binary", _BIN)
_add("gpqa|gpqa_main|gpqa_diamond|gpqa_extended|gpqa_main_zeroshot|gpqa_diamond_zeroshot|leaderboard_gpqa|"
     "leaderboard_gpqa_main|leaderboard_gpqa_diamond|leaderboard_gpqa_extended", _choices(4, "answer choices (GPQA)"))
_add("agieval_lsat_ar|agieval_lsat_lr|agieval_lsat_rc|lsat_qa|lsat", _choices(5))
# MuSR (Sprague et al. 2024): a murder mystery asks which of two suspects, a team allocation which of three
# assignments; object placements' number of locations varies by question, so it has no single level.
_add("musr_murder_mysteries", _choices(2, "suspects (MuSR murder mysteries)"))
_add("musr_team_allocation", _choices(3, "assignments (MuSR team allocation)"))
_add("truthfulqa_mc1", (None, None))  # a variable number of choices per question: no single level
# BIG-Bench Hard (Suzgun et al. 2022): 1 / options of each task; the free-form tasks score 0 at random.
for _task, _n in {
    "boolean_expressions": 2, "causal_judgement": 2, "date_understanding": 6, "disambiguation_qa": 3,
    "formal_fallacies": 2, "hyperbaton": 2, "logical_deduction_three_objects": 3,
    "logical_deduction_five_objects": 5, "logical_deduction_seven_objects": 7, "movie_recommendation": 4,
    "navigate": 2, "penguins_in_a_table": 5, "ruin_names": 4, "salient_translation_error_detection": 6,
    "snarks": 2, "sports_understanding": 2, "temporal_sequences": 4, "tracking_shuffled_objects_three_objects": 3,
    "tracking_shuffled_objects_five_objects": 5, "tracking_shuffled_objects_seven_objects": 7, "web_of_lies": 2,
}.items():
    CHANCE_TABLE[f"bbh_{_task}"] = _choices(_n, "options (BIG-Bench Hard task)")
for _task in ("dyck_languages", "multistep_arithmetic_two", "object_counting", "word_sorting"):
    CHANCE_TABLE[f"bbh_{_task}"] = _FREE
#: lm-eval v0.3's bigbench_<task> spellings of BIG-Bench Hard tasks that differ from BBH's own name.
_BIGBENCH_AS_BBH = {"formal_fallacies_syllogisms_negation": "formal_fallacies"}
# LegalBench (Guha et al. 2023): HELM Lite's five subsets and other classification tasks.
for _task, _n in {
    "abercrombie": 5, "function_of_decision_section": 7, "corporate_lobbying": 2,
    "international_citizenship_questions": 2, "proa": 2, "hearsay": 2, "personal_jurisdiction": 2,
    "canada_tax_court_outcomes": 2, "citation_prediction_classification": 2, "learned_hands_benefits": 2,
    "textualism_tool_dictionaries": 2, "textualism_tool_plain": 2, "diversity_1": 2, "diversity_2": 2,
    "diversity_3": 2, "diversity_4": 2, "diversity_5": 2, "diversity_6": 2,
}.items():
    CHANCE_TABLE[f"legalbench_{_task}"] = _choices(_n, "labels (LegalBench task)")
# HELM Lite's "LegalBench" is the mean over those five subsets.
CHANCE_TABLE["legalbench"] = ((1 / 5 + 1 / 2 + 1 / 7 + 1 / 2 + 1 / 2) / 5,
                              "mean of HELM Lite's LegalBench subsets (1/5, 1/2, 1/7, 1/2, 1/2 labels)")
_add("gsm8k|gsm-8k|gsm 8k|gsm|math|math_regular|math level 5|math_lvl_5|minerva_math|omni_math|omni-math|narrativeqa|narrative_qa|"
     "naturalquestions|natural_qa|naturalquestions (open-book)|naturalquestions (closed-book)|"
     "natural_qa_closedbook|natural_qa_openbook_longans|quac|triviaqa|squad|squadv2|drop|"
     "lambada|lambada_openai|lambada_standard|wmt 2014|wmt_14|cnn/dailymail|xsum|summarization_cnndm|"
     "summarization_xsum|humaneval|code_humaneval|mbpp", _FREE)
# MATH's level-5 problems as the Open LLM Leaderboard v2 runs them (lm-eval's leaderboard_math_hard group; Hendrycks et
# al. 2021): free-form answers scored by exact match, one task per subject.
_add("math_hard|math_algebra_hard|math_counting_and_prob_hard|math_geometry_hard|math_intermediate_algebra_hard|"
     "math_num_theory_hard|math_prealgebra_hard|math_precalculus_hard", _FREE)
_PREFIXES = ("leaderboard_", "bbh_cot_fewshot_", "bbh_cot_zeroshot_", "bbh_fewshot_", "bbh_zeroshot_", "bigbench_",
             "harness_", "helm_", "lm_eval_")


#: A leaderboard header's trailing qualifier ("MMLU (5-shot)", "ARC-C (25-shot)") and a shot-count suffix.
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
_SHOTS = re.compile(r"_(?:\d+|zero|one|few)_?shots?$")


def _candidates(name: str):
    k = key(name)
    yield k
    # HELM run names ("legalbench:subset=abercrombie", "mmlu:subject=anatomy") and prefixed task names.
    k2 = key(re.sub(r"[:,]\s*(subset|subject|task)=", "_", str(name).lower()))
    yield k2
    # The task without the setting a leaderboard adds to its header: the shot count does not change the choices.
    bare = key(_QUALIFIER.sub("", str(name)))
    if bare and bare != k:
        yield bare
    if _SHOTS.search(k2):
        yield _SHOTS.sub("", k2)
    for p in _PREFIXES:
        if k2.startswith(p):
            rest = k2[len(p):]
            yield rest
            if p.startswith("bbh"):
                yield f"bbh_{rest}"
            elif p == "bigbench_":  # lm-eval v0.3's BIG-bench tasks: the BBH task of that name has its options
                yield f"bbh_{_BIGBENCH_AS_BBH.get(rest, rest)}"
    if k2.startswith("bbh_") and k2.endswith("_cot"):
        yield k2[: -len("_cot")]
    if k2.startswith("legalbench_") or "legalbench" in k2:
        yield "legalbench_" + k2.split("legalbench_", 1)[-1]


def chance_level(name: str, metric: str = "score", task: Optional[str] = None, user: Optional[dict] = None) -> tuple:
    """``(chance, source)`` for a dataset, as a fraction of its scale, or ``(None, None)`` if unknown.

    Looks in the user's table (:func:`load_chance_file`) first, then
    :data:`CHANCE_TABLE`, by the dataset name and then the task name; MMLU subjects
    in any harness's spelling are 4-choice. Multiple-choice levels apply only to
    accuracy-like metrics (:func:`is_accuracy_metric`: ``acc``, ``COT correct``, ...); free-form tasks are 0 under
    any metric that is 0 for an empty answer.

    Examples
    --------
    >>> chance_level("hendrycksTest-anatomy", "acc")
    (0.25, '4 answer choices')
    >>> chance_level("MMLU-Pro", "score")[0]
    0.1
    """
    from ..benchmarks import mmlu_subject

    m = key(str(metric).split(",")[0])
    names = [n for n in (name, task) if n]
    if user:
        for n in names:
            for cand in _candidates(n):
                hit = user.get(cand)
                if hit is None:
                    hit = next((v for pat, v in user.items() if is_glob(pat) and matches(cand, pat)), None)
                if hit is not None:
                    return hit
    for n in names:
        for cand in _candidates(n):
            hit = CHANCE_TABLE.get(cand)
            if hit is None and mmlu_subject(str(n)) is not None:
                hit = CHANCE_TABLE["mmlu"]
            if hit is None:
                continue
            if hit[0] is None:
                return (None, None)
            if hit is _FREE or hit[0] == 0.0:
                # BIG-bench's multiple-choice version of a task BBH asks free-form (bigbench_dyck_languages):
                # its options are unknown here, and a random pick among them does not score 0.
                if m in _LOWER_BETTER_METRICS or m == "multiple_choice_grade":
                    return (None, None)
                return hit
            return hit if is_accuracy_metric(m) else (None, None)
    return (None, None)


_LOWER_BETTER_METRICS = frozenset({"perplexity", "word_perplexity", "byte_perplexity", "bits_per_byte", "ter", "error"})


def load_chance_file(path) -> dict:
    """Read a user chance-level file: YAML/JSON mapping, or a CSV with ``dataset,chance[,source]``.

    Format (YAML)::

        # chance levels as a fraction of each dataset's scale (0.25 = a quarter of the way up)
        my_task: 0.25
        other_task: {choices: 5}                 # 1/5, source "5 answer choices"
        "legalbench_*": {chance: 0.5, source: "binary labels"}   # globs match dataset keys

    Returns
    -------
    dict
        :func:`key` of each name (or glob) -> ``(chance, source)``.

    Raises
    ------
    SideFileError
        Naming the file and the reason (:mod:`harness_ext.safe_input` reads it); HarnessExtError naming
        the file and the entry that is not a chance level in [0, 1).
    """
    from ..errors import SideFileError
    from ..safe_input import load_document, read_rows, suffix_format, wrong_shape

    p = Path(path)
    what = "chance-level file"
    fmt = suffix_format(p)
    if fmt in ("csv", "tsv"):
        rows = read_rows(p, what)
        header = [c.strip().lower() for c in rows[0]] if rows else []
        if not ({"dataset", "name"} & set(header) and {"chance", "choices"} & set(header)):
            raise SideFileError(p, f"{what}: the first line must be a header with dataset (or name) and chance "
                                   f"(or choices) columns, got {','.join(header)[:80]!r}")
        doc = {}
        for i, row in enumerate(rows[1:], start=2):
            r = dict(zip(header, row))
            if any(c.strip() for c in row):
                doc[r.get("dataset") or r.get("name") or ""] = {k: v for k, v in r.items() if k in ("chance", "choices", "source")}
    else:
        doc = load_document(p, what, fmt)
    if isinstance(doc, dict) and isinstance(doc.get("chance"), dict):
        doc = doc["chance"]
    if not isinstance(doc, dict):
        raise wrong_shape(p, what, "the top level", "a mapping of dataset -> chance level", doc)
    out = {}
    for name, v in doc.items():
        if not str(name).strip():
            raise SideFileError(p, f"{what}: an entry has no dataset name")
        if not isinstance(v, (dict, int, float, str)) or isinstance(v, bool):
            raise wrong_shape(p, what, f"entry {name!r}", "a chance level (0.25, {chance: 0.25} or {choices: 4})", v)
        out[_pattern_key(name)] = parse_chance(v, where=f"{p}: {what}, entry {name!r}", default_source=f"user file {p.name}")
    return out


def _pattern_key(name) -> str:
    s = str(name)
    if is_glob(s):
        return "*".join(key(part) if part else "" for part in s.lower().split("*"))
    return key(s)


def parse_chance(v, where: str, default_source: str) -> tuple:
    """``(chance, source)`` from ``0.25``, ``{"chance": 0.25, "source": ...}`` or ``{"choices": 4}``."""
    from ..errors import HarnessExtError

    source = default_source
    if isinstance(v, dict):
        source = str(v.get("source") or default_source)
        if v.get("choices") not in (None, ""):
            try:
                n = int(float(v["choices"]))
            except (TypeError, ValueError, OverflowError):  # OverflowError: "1e400" choices
                n = 0
            if n < 2:
                raise HarnessExtError(f"{where}: choices must be an integer >= 2, got {v['choices']!r}")
            return (1.0 / n, str(v.get("source") or f"{n} answer choices ({default_source})"))
        v = v.get("chance")
    c = _finite(v)
    if c is None or not 0 <= c < 1:
        raise HarnessExtError(f"{where}: chance must be a number in [0, 1) (a fraction of the scale), got {v!r}")
    return (c, source)


# -- a dataset's own scale, from its normalisation record -------------------------------------
def raw_scale(normalisation: dict, values=None) -> tuple:
    """``(kind, lo, hi)``: the harness's own scale of a dataset, from its normalisation record.

    A normalised dataset's record carries its scale (``scale``, ``lo``, ``span``; manifests
    written before ``scale`` was recorded are read from the description). A ``raw`` record
    (a DataFrame built by hand, ``--normalise none``) says nothing of the scale: it is
    :func:`infer_scale` of the column's ``values`` (all in [0, 1]: a proportion; in [0, 100]: a
    percentage). ``lo``/``hi`` are None for the non-linear kinds.

    References
    ----------
    SimBA §2 (the normalisation of the performance matrix).
    """
    kind = normalisation.get("scale")
    desc = str(normalisation.get("description") or "")
    if (normalisation.get("transform") or "linear") != "linear":
        return (kind or "unbounded", None, None)
    if kind in (None, "raw") and desc.startswith("raw"):
        return infer_scale(values, percent_ok=True)[:3]
    lo, span = float(normalisation.get("lo") or 0.0), float(normalisation.get("span") or 1.0)
    if kind is None:
        kind = ("proportion" if desc.startswith("[0,1]") else "percent" if desc.startswith("[0,100]")
                else "unbounded" if desc.startswith("min-max") else "bounded")
    return (kind, lo, lo + span)


#: Scale kinds whose bounds are fixed facts of the metric (a value outside them is on another scale).
FIXED_BOUNDS = ("proportion", "percent", "bounded")


def points_per_unit(normalisation: dict, values=None) -> Optional[float]:
    """Benchmark points per unit of the matrix a dataset enters: ``span * (1 - chance)`` on its own scale, times
    100 on a 0-1 scale (accuracy points, 0-100). None for a non-linear scale (Elo, perplexity), where no one
    factor holds. ``values``: the column, for a ``raw`` record (:func:`raw_scale`)."""
    kind, lo, hi = raw_scale(normalisation, values)
    if lo is None:
        return None
    if str(normalisation.get("description") or "").startswith("raw"):
        per = 1.0  # the matrix holds the harness's own values
    else:
        per = float(normalisation.get("span") or 1.0) * (1.0 - float(normalisation.get("chance") or 0.0))
    return per * (100.0 if kind == "proportion" else 1.0)


def scale_width(normalisation: dict, values=None) -> float:
    """Width of the scale a dataset's matrix values live on: 1 when normalised, else its own (100 for a
    percentage): error thresholds stated as a share of the scale are multiplied by it."""
    if not str(normalisation.get("description") or "").startswith("raw"):
        return 1.0
    _, lo, hi = raw_scale(normalisation, values)
    if lo is None or hi is None or not hi > lo:
        v = np.asarray([] if values is None else values, dtype=float)
        v = v[np.isfinite(v)]
        return float(v.max() - v.min()) if v.size and v.max() > v.min() else 1.0
    return float(hi - lo)


def out_of_scale_message(name: str, kind: str, lo: float, hi: float, bad: np.ndarray, who=None) -> str:
    """Why values outside a dataset's fixed scale are refused, with the likely cause (percentages given for a
    0-1 scale)."""
    side = "above" if np.nanmax(bad) > hi else "below"
    edge = hi if side == "above" else lo
    example = float(bad[np.nanargmax(np.abs(bad))])
    hint = ""
    if kind == "proportion" and side == "above" and np.nanmax(bad) <= 100:
        hint = ": percentages? The dataset's scores are fractions (0.62 for 62%); divide by 100"
    return (f"{name}: values {side} {edge:g} for a {lo:g}-{hi:g} dataset (e.g. {example:g}"
            + (f", {who}" if who is not None else "") + f"){hint}")
