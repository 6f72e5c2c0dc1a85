"""The same evaluation under HELM and lm-evaluation-harness names.

A reduced benchmark has to be runnable in the harness the user has, whichever
harness produced the scores it was built from. This table says, for the
scenarios both harnesses have, which lm-eval tasks and which HELM run entries
measure them. It is deliberately explicit (no fuzzy matching): an entry
exists only where the two harnesses evaluate the same data; where they differ
in prompt or split the ``note`` says how.

=====================  ============================================  ===========================================
HELM scenario          lm-eval tasks                                 HELM run entries written
=====================  ============================================  ===========================================
MMLU (57 subjects)     ``mmlu_<subject>`` (5-shot in both)           ``mmlu:subject=<s>`` per subject; HELM
                                                                     Classic/Lite's "MMLU" is the 5 subjects
                                                                     they ran (:data:`HELM_MMLU_SUBJECTS`)
GSM8K                  ``gsm8k``                                     ``gsm:model=text_code``
MATH                   ``minerva_math_<subject>`` (7, CoT)           ``math:subject=<s>,level=1,...`` (7)
HellaSwag              ``hellaswag``                                 ``commonsense:dataset=hellaswag,...``
OpenbookQA             ``openbookqa``                                ``commonsense:dataset=openbookqa,...``
BoolQ                  ``boolq``                                     ``boolq``
TruthfulQA             ``truthfulqa_mc1``                            ``truthful_qa:task=mc_single``
NaturalQuestions       ``nq_open`` (closed-book only)                ``natural_qa:mode=closedbook|openbook_longans``
WMT 2014               ``wmt14-fr-en`` (fr->en only; HELM averages   ``wmt_14:language_pair=<p>-en`` for cs, de,
                       cs/de/fr/hi/ru->en)                           fr, hi, ru
MedQA                  ``medqa_4options``                            ``med_qa``
LegalBench             ``legalbench_<subset>`` for HELM Lite's 5     ``legalbench:subset=<s>`` (5)
CNN/DailyMail          ``cnn_dailymail_abisee``                      ``summarization_cnndm``
MMLU-Pro, GPQA,        ``mmlu_pro``, ``gpqa_main_cot_n_shot``,       (HELM Capabilities conf not mapped)
IFEval                 ``ifeval``
ARC                    ``arc_easy``, ``arc_challenge``               none: HELM has no ARC scenario
=====================  ============================================  ===========================================

Names that mean a scenario in one benchmark only (:data:`BENCHMARK_EQUIVALENTS`): HELM Lite's ``commonsense`` is
OpenbookQA; the Open LLM Leaderboard v2's titles are lm-eval's ``leaderboard_*`` tasks, which it ran.

No lm-eval equivalent: NarrativeQA (lm-eval's ``scrolls_narrativeqa`` reads the
whole book, HELM the summary), NaturalQuestions open-book, QuAC, MS MARCO,
XSUM (HELM's sampled split), IMDB, CivilComments, RAFT, WildBench, Omni-MATH
and HELM's mean win rate. A subset holding them gets a comment naming them in
the lm-eval YAML, and ``reduce`` warns.

RAFT: HELM Classic's RAFT score is the mean over its 11 subsets, so the run
entries are all 11 (:data:`RAFT_SUBSETS`), not one; CivilComments' is the mean over its 9 demographic runs
(:data:`CIVIL_COMMENTS_DEMOGRAPHICS`, ``all`` among them), so its entries are those 9.

References
----------
crfm-helm ``src/helm/benchmark/presentation/run_entries_core_scenarios.conf`` (v0.4.0) and
``run_entries_lite.conf`` (v1.x); lm-evaluation-harness 0.4 ``lm_eval/tasks``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ...benchmarks import MMLU_BENCHMARK

#: The MMLU subjects HELM Classic and HELM Lite run (their "MMLU" column is the mean of these).
HELM_MMLU_SUBJECTS = ("abstract_algebra", "college_chemistry", "computer_security", "econometrics", "us_foreign_policy")
#: HELM Classic's RAFT subsets (its RAFT score averages all 11).
RAFT_SUBSETS = ("ade_corpus_v2", "banking_77", "neurips_impact_statement_risks", "one_stop_english", "overruling",
                "semiconductor_org_types", "systematic_review_inclusion", "tai_safety_research", "terms_of_service",
                "tweet_eval_hate", "twitter_complaints")
MATH_SUBJECTS = {"algebra": "algebra", "counting_and_probability": "counting_and_prob", "geometry": "geometry",
                 "intermediate_algebra": "intermediate_algebra", "number_theory": "num_theory",
                 "prealgebra": "prealgebra", "precalculus": "precalc"}
LEGALBENCH_SUBSETS = ("abercrombie", "corporate_lobbying", "function_of_decision_section",
                      "international_citizenship_questions", "proa")
WMT_PAIRS = ("cs", "de", "fr", "hi", "ru")
#: HELM Classic's CivilComments runs (its column is their mean, as helm-summarize merges a group's runs).
CIVIL_COMMENTS_DEMOGRAPHICS = ("all", "male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black",
                               "white")


@dataclass(frozen=True)
class Equivalent:
    """One evaluation under both harnesses' names."""

    names: tuple  # lower-case HELM titles / scenario names / lm-eval task names that denote it
    lm_eval: tuple = ()  # lm-eval tasks (empty: none)
    helm_classic: tuple = ()  # run-entry descriptions in HELM Classic's style
    helm_lite: tuple = ()  # run-entry descriptions in HELM Lite's style
    note: str = ""
    extra: dict = field(default_factory=dict)
    #: The metric each harness reports for it (lm-eval's ``metric,filter`` when the filter is not ``none``); for
    #: lm-eval a tuple of them when the score is their mean (:func:`lm_eval_score`); None: not known, so results
    #: are not carried across.
    lm_eval_metric: Optional[str | tuple] = "acc"
    helm_metric: Optional[str] = "EM"


_CANON = ",data_augmentation=canonical"
_OPENBOOKQA = Equivalent(
    ("openbookqa",), ("openbookqa",),
    ("commonsense:model=full_functionality_text,dataset=openbookqa,method=multiple_choice_separate_calibrated" + _CANON,),
    ("commonsense:dataset=openbookqa,method=multiple_choice_joint,model=text_code",),
    note="HELM Classic calibrates each answer's probability; lm-eval's acc_norm normalises it by length",
    lm_eval_metric="acc_norm")
EQUIVALENTS = (
    Equivalent(("mmlu",), tuple(f"mmlu_{s}" for s in HELM_MMLU_SUBJECTS),
               tuple(f"mmlu:subject={s},model=text{_CANON}" for s in HELM_MMLU_SUBJECTS),
               tuple(f"mmlu:subject={s},method=multiple_choice_joint,model=text_code" for s in HELM_MMLU_SUBJECTS),
               "HELM's MMLU is the mean of 5 subjects; the same 5 are run"),
    Equivalent(("gsm8k", "gsm"), ("gsm8k",), (), ("gsm:model=text_code",), lm_eval_metric="exact_match,strict-match"),
    Equivalent(("math", "math (chain of thought)"), tuple(f"minerva_math_{v}" for v in MATH_SUBJECTS.values()), (),
               tuple(f"math:subject={s},level=1,use_official_examples=False,use_chain_of_thought=True,model=text_code"
                     for s in MATH_SUBJECTS),
               "lm-eval's Minerva prompt (4-shot CoT, all levels) vs HELM's level-1 CoT: same problems, other prompt",
               lm_eval_metric="exact_match", helm_metric="Equivalent (CoT)"),
    Equivalent(("hellaswag",), ("hellaswag",), (
        "commonsense:model=full_functionality_text,dataset=hellaswag,method=multiple_choice_separate_original" + _CANON,),
        note="HELM scores each ending by its probability, as lm-eval's acc"),
    _OPENBOOKQA,
    Equivalent(("boolq",), ("boolq",), (f"boolq:model=text{_CANON}",)),
    Equivalent(("truthfulqa", "truthful_qa", "truthfulqa_mc1"), ("truthfulqa_mc1",),
               (f"truthful_qa:model=text,task=mc_single{_CANON}",)),
    Equivalent(("naturalquestions (closed-book)", "natural_qa_closedbook", "nq_open"), ("nq_open",),
               (f"natural_qa:model=text,mode=closedbook{_CANON}",), ("natural_qa:mode=closedbook,model=text_code",),
               "HELM reports F1, lm-eval exact match: another metric on the same questions",
               lm_eval_metric="exact_match", helm_metric="F1"),
    Equivalent(("naturalquestions (open-book)", "natural_qa_openbook_longans"), (),
               (f"natural_qa:model=text,mode=openbook_longans{_CANON}",),
               ("natural_qa:mode=openbook_longans,model=text_code",), "lm-eval's nq_open is closed-book only"),
    Equivalent(("wmt 2014", "wmt_14", "wmt14-fr-en"), ("wmt14-fr-en",), (),
               tuple(f"wmt_14:language_pair={p}-en,model=text_code" for p in WMT_PAIRS),
               "lm-eval has WMT14 fr->en only; HELM averages cs/de/fr/hi/ru->en",
               lm_eval_metric="bleu", helm_metric="BLEU-4"),
    Equivalent(("medqa", "med_qa", "medqa_4options"), ("medqa_4options",), (), ("med_qa:model=text_code",)),
    Equivalent(("legalbench",), tuple(f"legalbench_{s}" for s in LEGALBENCH_SUBSETS), (),
               tuple(f"legalbench:subset={s},model=text_code" for s in LEGALBENCH_SUBSETS),
               "HELM Lite's 5 LegalBench subsets", lm_eval_metric=None),
    Equivalent(("cnn/dailymail", "summarization_cnndm", "cnn_dailymail_abisee"), ("cnn_dailymail_abisee",),
               ("summarization_cnndm:model=text,temperature=0.3,device=cpu",),
               lm_eval_metric="rouge2", helm_metric="ROUGE-2"),
    Equivalent(("narrativeqa", "narrative_qa"), (), (f"narrative_qa:model=text{_CANON}",),
               ("narrative_qa:model=text_code",),
               "lm-eval's scrolls_narrativeqa reads the whole book, HELM the summary: not the same task"),
    Equivalent(("quac",), (), (f"quac:model=text{_CANON}",)),
    Equivalent(("ms marco (trec)", "msmarco_trec"), (), ("msmarco:model=full_functionality_text,track=trec,valid_topk=30",)),
    Equivalent(("ms marco (regular)", "msmarco_regular"), (),
               ("msmarco:model=full_functionality_text,track=regular,valid_topk=30",)),
    Equivalent(("xsum", "summarization_xsum"), (), ("summarization_xsum_sampled:model=text,temperature=0.3,device=cpu",)),
    Equivalent(("imdb",), (), (f"imdb:model=text{_CANON}",)),
    Equivalent(("civilcomments", "civil_comments"), (),
               tuple(f"civil_comments:model=text,demographic={g}{_CANON}" for g in CIVIL_COMMENTS_DEMOGRAPHICS),
               note="all 9 demographic runs: HELM Classic's CivilComments score is their mean"),
    Equivalent(("raft",), (), tuple(f"raft:subset={s},model=text{_CANON}" for s in RAFT_SUBSETS),
               note="all 11 RAFT subsets: HELM's RAFT score is their mean"),
    Equivalent(("mmlu-pro", "mmlu_pro"), ("mmlu_pro",), lm_eval_metric="exact_match,custom-extract",
               helm_metric="COT correct"),
    Equivalent(("gpqa",), ("gpqa_main_cot_n_shot",), note="HELM Capabilities' GPQA is CoT on the main set",
               lm_eval_metric="exact_match,flexible-extract", helm_metric="COT correct"),
    Equivalent(("ifeval",), ("ifeval",), lm_eval_metric="prompt_level_strict_acc", helm_metric="IFEval Strict Acc"),
    Equivalent(("arc_easy",), ("arc_easy",), note="HELM has no ARC scenario", helm_metric=None),
    Equivalent(("arc_challenge",), ("arc_challenge",), note="HELM has no ARC scenario", helm_metric=None),
)
_BY_NAME = {n: e for e in EQUIVALENTS for n in e.names}
# An entry's one lm-eval task names it too (gpqa_main_cot_n_shot); a task of a several-task entry (one MATH
# subject) is not the whole scenario.
for _e in EQUIVALENTS:
    if len(_e.lm_eval) == 1:
        _BY_NAME.setdefault(_e.lm_eval[0], _e)
#: Benchmarks whose datasets are HELM scenarios named by their display titles.
HELM_BENCHMARKS_LITE = frozenset({"helm_lite", "helm_capabilities"})
_LEADERBOARD = "the Open LLM Leaderboard v2's own lm-eval task (lm-eval's leaderboard group: its prompt and shots)"
#: The Open LLM Leaderboard v2's IFEval score: the mean of lm-eval's prompt- and instruction-level strict accuracy
#: of ``leaderboard_ifeval``.
LEADERBOARD_IFEVAL_METRIC = ("prompt_level_strict_acc", "inst_level_strict_acc")
#: Names that mean a scenario only inside one benchmark, looked up before :data:`EQUIVALENTS`. HELM Lite's one
#: ``commonsense`` scenario is OpenbookQA (HELM Classic's are HellaSwag and OpenbookQA). The Open LLM Leaderboard v2
#: (Every Eval Ever's ``hf_open_llm_v2``) ran lm-eval's ``leaderboard_*`` tasks, whose prompts and scoring differ
#: from ``mmlu_pro``, ``ifeval``, ... (lm-eval's ``tasks/leaderboard/leaderboard.yaml`` lists them; the metric is
#: each task's or group's in its YAML). Its IFEval score is no one lm-eval metric but the mean of two
#: (:data:`LEADERBOARD_IFEVAL_METRIC`): the leaderboard's results files of Llama-2-7b-hf and Pythia-410m, -1b and
#: -2.8b give Every Eval Ever's IFEval scores (0.2519, 0.2195, 0.2208, 0.2173) as that mean to 4 decimals.
BENCHMARK_EQUIVALENTS = {
    "helm_lite": {"commonsense": _OPENBOOKQA},
    "hf_open_llm_v2": {
        "mmlu-pro": Equivalent(("mmlu-pro",), ("leaderboard_mmlu_pro",), note=_LEADERBOARD, helm_metric=None),
        "bbh": Equivalent(("bbh",), ("leaderboard_bbh",), note=_LEADERBOARD, lm_eval_metric="acc_norm",
                          helm_metric=None),
        "gpqa": Equivalent(("gpqa",), ("leaderboard_gpqa",), note=_LEADERBOARD, lm_eval_metric="acc_norm",
                           helm_metric=None),
        "math level 5": Equivalent(("math level 5",), ("leaderboard_math_hard",), note=_LEADERBOARD,
                                   lm_eval_metric="exact_match", helm_metric=None),
        "musr": Equivalent(("musr",), ("leaderboard_musr",), note=_LEADERBOARD, lm_eval_metric="acc_norm",
                           helm_metric=None),
        "ifeval": Equivalent(("ifeval",), ("leaderboard_ifeval",), lm_eval_metric=LEADERBOARD_IFEVAL_METRIC,
                             helm_metric=None, note=_LEADERBOARD + "; its IFEval score is the mean of "
                             "prompt_level_strict_acc and inst_level_strict_acc"),
    },
}
#: Benchmarks that ran lm-eval tasks of their own: a title not among their names has no equivalent (the general
#: table's ``gpqa`` is another lm-eval task than the leaderboard's).
OWN_TASK_BENCHMARKS = frozenset({"hf_open_llm_v2"})
#: ``harness`` of a manifest dataset whose scores came from lm-eval result files under a benchmark named otherwise
#: (a group of the user's own): its ``task`` is the lm-eval task.
LM_EVAL_HARNESS = "lm-eval"
#: The oldest lm-eval releases the written folder was run on (live, with lm-eval 0.4.2, 0.4.3, 0.4.4, 0.4.5, 0.4.8,
#: 0.4.9, 0.4.9.1, 0.4.9.2, 0.4.10 and 0.4.13): the group YAML's ``aggregate_metric_list`` (0.4.3 and older refuse
#: the key), ``--samples``
#: (0.4.8 has no such option; 0.4.9 runs only the drawn items), and a task of the folder named as one of lm-eval's
#: own running in its place (0.4.9 and older keep their own, silently; 0.4.9.1 runs the folder's).
LM_EVAL_MIN = "0.4.4"
LM_EVAL_SAMPLES_MIN = "0.4.9"
LM_EVAL_OVERRIDE_MIN = "0.4.9.1"


def equivalent(name: str, task: Optional[str] = None, benchmark: Optional[str] = None) -> Optional[Equivalent]:
    """The table entry for a dataset (by its name, then its task; first among its benchmark's own names), or None."""
    scoped = BENCHMARK_EQUIVALENTS.get(benchmark) or {}
    for table in (scoped,) if benchmark in OWN_TASK_BENCHMARKS else (scoped, _BY_NAME):
        for key in (name, task):
            if isinstance(key, str) and key.strip().lower() in table:
                return table[key.strip().lower()]
    return None


def _is_helm(entry: dict) -> bool:
    return str(entry.get("benchmark") or "").startswith("helm")


def _table_helm(entry: dict) -> tuple:
    """HELM run-entry descriptions for a manifest subset entry from the table (empty if none)."""
    eq = equivalent(entry.get("name", ""), entry.get("task"), entry.get("benchmark"))
    if eq is None:
        return ()
    if eq.names == ("mmlu",) and not _is_helm(entry):  # a leaderboard's "MMLU" is all 57 subjects
        from ...benchmarks import MMLU_SUBJECTS

        return tuple(f"mmlu:subject={s},model=text{_CANON}" for s in MMLU_SUBJECTS)
    lite = entry.get("benchmark") in HELM_BENCHMARKS_LITE
    return (eq.helm_lite or eq.helm_classic) if lite else (eq.helm_classic or eq.helm_lite)


def _table_lm_eval(entry: dict) -> tuple:
    """lm-eval tasks for a manifest subset entry from the table (empty if none)."""
    eq = equivalent(entry.get("name", ""), entry.get("task"), entry.get("benchmark"))
    if eq is not None and eq.names == ("mmlu",) and not _is_helm(entry):
        return ("mmlu",)  # lm-eval's group of all 57 subjects
    return eq.lm_eval if eq else ()


# -- lookups the manifest writers use ---------------------------------------------------------
#: HELM Classic scenario titles (as in helm-summarize tables / Every Eval Ever) -> run-entry description.
#: From crfm-helm's run_entries_core_scenarios conf (v0.4.0); MMLU is expanded per subject elsewhere.
HELM_CLASSIC_DESCRIPTIONS = {
    "BoolQ": "boolq:model=text,data_augmentation=canonical",
    "NarrativeQA": "narrative_qa:model=text,data_augmentation=canonical",
    "NaturalQuestions (open-book)": "natural_qa:model=text,mode=openbook_longans,data_augmentation=canonical",
    "NaturalQuestions (closed-book)": "natural_qa:model=text,mode=closedbook,data_augmentation=canonical",
    "QuAC": "quac:model=text,data_augmentation=canonical",
    "HellaSwag": "commonsense:model=full_functionality_text,dataset=hellaswag,method=multiple_choice_separate_original,data_augmentation=canonical",
    "OpenbookQA": "commonsense:model=full_functionality_text,dataset=openbookqa,method=multiple_choice_separate_calibrated,data_augmentation=canonical",
    "TruthfulQA": "truthful_qa:model=text,task=mc_single,data_augmentation=canonical",
    "MS MARCO (TREC)": "msmarco:model=full_functionality_text,track=trec,valid_topk=30",
    "MS MARCO (regular)": "msmarco:model=full_functionality_text,track=regular,valid_topk=30",
    "CNN/DailyMail": "summarization_cnndm:model=text,temperature=0.3,device=cpu",
    "XSUM": "summarization_xsum_sampled:model=text,temperature=0.3,device=cpu",
    "IMDB": "imdb:model=text,data_augmentation=canonical",
}


def entry_shots(entry: dict):
    """The manifest's shots for a subset entry.

    Parameters
    ----------
    entry : dict
        A manifest ``subset`` (or ``datasets``) entry.

    Returns
    -------
    int or None
        Its ``num_fewshot`` (at least 0), or None when the population's results named no shots.
    """
    k = entry.get("num_fewshot")
    return k if isinstance(k, int) and not isinstance(k, bool) and k >= 0 else None


def with_shots(desc: str, k) -> str:
    """A run-entry description asking HELM for ``k`` in-context examples.

    HELM's ``max_train_instances`` run expander sets ``adapter_spec.max_train_instances`` (HELM's MMLU runs 5-shot
    without it) and adds the argument to the run's name.

    Parameters
    ----------
    desc : str
        A run-entry description (``mmlu:subject=anatomy,model=text``).
    k : int or None
        The shots; None leaves the description as it is, and so does one that already sets them.

    Returns
    -------
    str
        The description.
    """
    if k is None or _sets(desc, "max_train_instances"):
        return desc
    return f"{desc},max_train_instances={k}"


def _sets(desc: str, name: str) -> bool:
    """Whether the run-entry description ``desc`` gives the argument ``name``."""
    return any(a.split("=", 1)[0].strip() == name for a in desc.partition(":")[2].split(","))


def with_max_eval_instances(desc: str, n: int) -> str:
    """``desc`` with ``max_eval_instances=n`` as its last argument, replacing one the population's run name had.

    HELM's run expander of that name sets the entry's own count, which ``helm-run --max-eval-instances`` does not
    override: an entry of an item-level conf runs the task's drawn count.
    """
    head, _, args = desc.partition(":")
    kept = [a for a in args.split(",") if a and not _sets(f":{a}", "max_eval_instances")]
    return f"{head}:{','.join(kept + [f'max_eval_instances={n}'])}"


def lm_eval_task(entry: dict) -> Optional[str]:
    """The lm-eval (v0.4) task name of a manifest subset entry, or None (see :func:`lm_eval_task_list`)."""
    tasks = lm_eval_task_list(entry)
    return tasks[0] if len(tasks) == 1 else None


def path_like_task(name) -> bool:
    """Whether lm-eval would read a task name as a path: with ``--log_samples`` it writes
    ``samples_<task>_<date>.jsonl``, so a '/' (or a '\\', Windows' separator) names folders inside the output
    folder that do not exist, and lm-eval loses the samples (it logs that it could not save them)."""
    return "/" in str(name) or "\\" in str(name)


def reads_as_file(name) -> bool:
    """Whether ``lm_eval --tasks`` would load ``name``, or a comma-separated part of it (it splits its list there), as
    a task file rather than look it up: a name ending in ``.yaml`` is read as a path from the folder it runs in and its
    ``!function`` tags import the Python beside it; a '/', '\\' or a leading '~' names a path too."""
    return any(path_like_task(p) or p.strip().startswith("~") or p.strip().lower().endswith((".yaml", ".yml"))
               for p in str(name).split(","))


def task_list_name(entry: dict) -> str:
    """A subset entry's line of the task list: its lm-eval tasks joined with commas, else its task or name."""
    return ",".join(lm_eval_task_list(entry)) or entry.get("task") or entry["name"]


def helm_only(entry: dict) -> bool:
    """Whether a subset entry is a dataset HELM runs (a run entry is known) and lm-eval has no task for: the lm-eval
    YAML lists it as a comment and the task list leaves it out (its ``task`` is helm-summarize's group, such as
    ``accuracy``, no lm-eval name)."""
    return not lm_eval_task_list(entry) and not path_like_tasks(entry) and bool(helm_description_list(entry))


def split_by_comma(entry: dict) -> bool:
    """Whether a subset entry's task-list line (:func:`task_list_name`) holds a comma that is not harness-ext's own
    join of the entry's lm-eval tasks (HELM's MATH as its 7 ``minerva_math_*`` tasks): a board's column
    ``arc_easy,piqa``, a HELM run name's arguments, or an lm-eval task named with one in its results. ``lm_eval
    --tasks`` splits its list there and runs each part as a task of its own, all of it."""
    return any("," in t for t in lm_eval_task_list(entry) or [task_list_name(entry)])


def lm_eval_task_list(entry: dict) -> list:
    """The lm-eval (v0.4) tasks that run a manifest subset entry (a HELM scenario may need several); none named as a
    path (:func:`path_like_task`: such a task is left out of what ``reduce`` writes, see :func:`path_like_tasks`)."""
    return [t for t in _lm_eval_tasks(entry) if not path_like_task(t)]


def path_like_tasks(entry: dict) -> list:
    """The lm-eval tasks of a subset entry that :func:`lm_eval_task_list` leaves out as named as a path."""
    return [t for t in _lm_eval_tasks(entry) if path_like_task(t)]


def _lm_eval_tasks(entry: dict) -> list:
    if entry.get("benchmark") == MMLU_BENCHMARK:
        return [f"mmlu_{entry['name']}"]
    if entry.get("benchmark") == "lm_eval" or entry.get("harness") == LM_EVAL_HARNESS:
        return [entry.get("task") or entry["name"]]
    if entry.get("benchmark") == "helm" and ":" in entry["name"]:
        subject = _helm_run_subject(entry["name"])
        if subject is not None:  # one MMLU subject's run: that subject's task, not lm-eval's 57-subject group
            # A subject that is no name ('../../x' from someone's results) has no lm-eval task: listed as such.
            return [f"mmlu_{subject}"] if re.fullmatch(r"\w+", subject, re.ASCII) else []
        return list(_table_lm_eval({"name": entry["name"].split(":", 1)[0]}))
    return list(_table_lm_eval(entry))


def _helm_run_subject(run: str) -> Optional[str]:
    """The subject of a HELM MMLU run name (``mmlu:subject=anatomy,method=...``), else None."""
    scenario, _, args = str(run).partition(":")
    if scenario.strip().lower() != "mmlu":
        return None
    for part in args.split(","):
        k, _, v = part.partition("=")
        if k.strip() == "subject" and v.strip():
            return v.strip()
    return None


def _equivalent_of(entry: dict) -> Optional[Equivalent]:
    if entry.get("benchmark") == "helm" and ":" in str(entry.get("name")):
        return equivalent(str(entry["name"]).split(":", 1)[0])
    if entry.get("benchmark") == MMLU_BENCHMARK:
        return equivalent("mmlu")
    return equivalent(entry.get("name", ""), entry.get("task"), entry.get("benchmark"))


def lm_eval_metric(entry: dict) -> Optional[str | tuple]:
    """The lm-eval metric that scores a manifest dataset's lm-eval tasks (``metric,filter`` when the filter is
    not ``none``): its own metric for lm-eval results, the table's for a HELM scenario (HELM's EM on MMLU is
    lm-eval's ``acc``); None when the table does not know it. A benchmark that ran lm-eval under its own titles
    (:data:`BENCHMARK_EQUIVALENTS`) takes the table's: its results name the metric otherwise (``Accuracy``).
    A tuple names several metrics of the task whose mean is the score (the Open LLM Leaderboard v2's IFEval): read
    it with :func:`lm_eval_score`, show it with :func:`metric_label`."""
    scoped = BENCHMARK_EQUIVALENTS.get(entry.get("benchmark"))
    if scoped and not _is_helm(entry):
        eq = _equivalent_of(entry)
        return eq.lm_eval_metric if eq is not None and eq.lm_eval else None
    if not _is_helm(entry):
        return entry.get("metric")
    eq = _equivalent_of(entry)
    return eq.lm_eval_metric if eq is not None and eq.lm_eval else None


def metric_parts(metric) -> tuple:
    """The lm-eval metrics an :func:`lm_eval_metric` is made of: ``(metric,)``, the several a mean names, or ``()``
    for None."""
    if metric is None:
        return ()
    return tuple(metric) if isinstance(metric, (tuple, list)) else (metric,)


def metric_label(metric) -> str:
    """An :func:`lm_eval_metric` for messages and comments: ``acc``, or ``the mean of a and b``."""
    parts = metric_parts(metric)
    if len(parts) == 1:
        return parts[0]
    return f"the mean of {', '.join(parts[:-1])} and {parts[-1]}" if parts else "not known"


def metric_key(metric) -> Optional[str]:
    """An :func:`lm_eval_metric` as the metric part of a key in lm-eval's results layout (``<metric>,<filter>``),
    for the files harness-ext writes in that layout: ``acc`` (a filter dropped: the key gets its own), or, for a
    mean of several metrics, ``mean_of_a_and_b``, which spells the score out as :func:`metric_label` does (lm-eval
    writes no metric for it, and a key can hold no comma or space); None for None."""
    parts = [p.split(",")[0] for p in metric_parts(metric)]
    if len(parts) <= 1:
        return parts[0] if parts else None
    return f"mean_of_{'_and_'.join(parts)}"


def lm_eval_score(metric, values) -> tuple:
    """A task's score on an :func:`lm_eval_metric` from its results: ``(score, missing)``.

    Parameters
    ----------
    metric : str or tuple of str
        One lm-eval metric (``acc``, ``exact_match,strict-match``), or several whose mean is the score.
    values : mapping
        The task's results, metric name (as :func:`lm_eval_metric` spells it) -> value; NaN or None is absent.

    Returns
    -------
    tuple
        ``(float, [])`` when every metric is there (their mean); ``(None, [the metrics missing])`` otherwise,
        never the mean of part of them.
    """
    got, missing = [], []
    for m in metric_parts(metric):
        try:
            v = float(values.get(m))
        except (TypeError, ValueError):  # absent, or lm-eval's "N/A"
            v = float("nan")
        if np.isfinite(v):
            got.append(v)
        else:
            missing.append(m)
    if missing or not got:
        return None, missing
    return float(np.mean(got)), []


def helm_metric(entry: dict) -> Optional[str]:
    """The HELM metric of a manifest dataset's HELM run entries: its own for HELM results, the table's for an
    lm-eval task (lm-eval's ``acc`` on BoolQ is HELM's EM); None when not known."""
    if _is_helm(entry):
        return entry.get("metric")
    eq = _equivalent_of(entry)
    return eq.helm_metric if eq is not None else None


def population_task_warnings(subset: list) -> list:
    """``reduce`` warnings for subset datasets whose scores come from another harness than the lm-eval group
    runs (HELM), or from other lm-eval tasks than it runs (lm-eval v0.3's ``hendrycksTest-<subject>`` scores, the group's v0.4 ``mmlu_<subject>``: prompts and
    scoring changed between the versions)."""
    out, helm = [], [e for e in subset if _is_helm(e) and lm_eval_task_list(e)]
    if helm:
        maps = sorted({f"{e.get('metric')} -> {metric_label(lm_eval_metric(e))}" for e in helm if lm_eval_metric(e)})
        out.append(f"{len(helm)} subset datasets come from HELM results and the lm-eval group runs their lm-eval "
                   f"equivalents ({', '.join(e['name'] for e in helm[:4])}{' ...' if len(helm) > 4 else ''}; metric "
                   f"{', '.join(maps) or 'not known'}): the prompts differ between the harnesses, so 'predict' takes "
                   "the lm-eval scores as HELM's and the estimate carries that difference")
    pairs = []
    for e in subset:
        task = e.get("task")
        run = lm_eval_task_list(e)
        if _is_helm(e) or not isinstance(task, str) or not run or task in run:
            continue
        pairs.append(f"{task} -> {', '.join(run)}")
    if not pairs:
        return out
    v03 = any(p.lower().startswith("hendryckstest") for p in pairs)
    return out + [f"{len(pairs)} subset datasets were scored with other lm-eval tasks than the group runs"
            + (" (lm-eval v0.3 tasks; the group runs their v0.4 versions)" if v03 else "")
            + f": {'; '.join(pairs[:4])}{f' and {len(pairs) - 4} more' if len(pairs) > 4 else ''}. The prompts and "
            "scoring changed, so a "
            "new model's scores on the group may sit apart from the population's: run the population's tasks, or "
            "check the predictions against a full run"]


def unknown_metric_warnings(subset: list) -> list:
    """``reduce`` warnings for subset datasets from another harness whose lm-eval tasks are known but not the lm-eval
    metric that gives their scores (HELM's LegalBench)."""
    missing = [e for e in subset if lm_eval_task_list(e) and not metric_parts(lm_eval_metric(e))]
    if not missing:
        return []
    notes = sorted({eq.note for eq in map(_equivalent_of, missing) if eq is not None and eq.note})
    shown = [f"{e['name']} as {', '.join(lm_eval_task_list(e))}" for e in missing[:4]]
    return [f"the lm-eval group runs {len(missing)} subset datasets whose scores no known lm-eval metric gives "
            f"({'; '.join(shown)}"
            f"{' ...' if len(missing) > 4 else ''}): the group's row is their plain mean, not the estimate, and their "
            "lm-eval results are not the population's scores" + (f" ({'; '.join(notes[:2])})" if notes else "")]


def helm_description(entry: dict) -> Optional[str]:
    """The HELM run-entry description of a manifest subset entry, or None (see :func:`helm_description_list`)."""
    descs = helm_description_list(entry)
    return descs[0] if len(descs) == 1 else None


#: Where HELM splits a run-entry description into its name and arguments.
HELM_SEPARATORS = re.compile(r"[:,=]")


def helm_description_list(entry: dict) -> list:
    """HELM run-entry descriptions for a manifest subset entry (HELM Classic's MMLU and RAFT are several)."""
    bench, name = entry.get("benchmark"), entry["name"]
    if bench == MMLU_BENCHMARK:
        # HELM splits a description at ':', ',' and '=': a subject holding one would add arguments of its own.
        return [] if HELM_SEPARATORS.search(name) else [f"mmlu:subject={name},model=text,data_augmentation=canonical"]
    if bench == "helm_classic" and name in HELM_CLASSIC_DESCRIPTIONS:
        return [HELM_CLASSIC_DESCRIPTIONS[name]]
    if bench == "helm" and ":" in name:  # datasets from HELM run directories are already run-spec names
        return [name if "model=" in name else f"{name},model=text"]
    return list(_table_helm(entry))



def no_equivalent_warnings(subset: list) -> list:
    """``reduce`` warnings for subset datasets that the lm-eval YAML or the HELM conf cannot run."""
    out = []
    paths = [e for e in subset if path_like_tasks(e)]
    if paths:
        from ...safe_output import quoted

        tasks = [quoted(t) for e in paths for t in path_like_tasks(e)]
        out.append(f"{len(paths)} of the {len(subset)} subset datasets {'is an lm-eval task' if len(paths) == 1 else 'are lm-eval tasks'}"
                   f" named with a '/' or '\\' ({', '.join(tasks[:6])}{' ...' if len(tasks) > 6 else ''}): lm-eval's "
                   "--log_samples would write their samples to a path through folders that do not exist, and lose "
                   "them, so they are left out of the lm-eval group (its YAML lists them as comments) and of the task list; "
                   "choose datasets without it (reduce --datasets GLOB) or rename the task in its results file")
    files = [task_list_name(e) for e in subset if not path_like_tasks(e) and reads_as_file(task_list_name(e))]
    if files:
        from ...safe_output import quoted

        out.append(f"{len(files)} of the {len(subset)} subset datasets {'is' if len(files) == 1 else 'are'} named as a "
                   f"path or a YAML file, which lm_eval --tasks reads as a file (a .yaml one it loads, importing the "
                   f"code beside it) ({', '.join(map(quoted, files[:6]))}{' ...' if len(files) > 6 else ''}), so the "
                   "task list leaves "
                   f"{'it' if len(files) == 1 else 'them'} out; the manifest keeps {'it' if len(files) == 1 else 'them'}")
    from ...store.globs import is_glob

    globs = [task_list_name(e) for e in subset if not path_like_tasks(e) and not reads_as_file(task_list_name(e))
             and is_glob(task_list_name(e))]
    if globs:
        out.append(glob_names_warning(globs, len(subset)))
    no_lm = [e["name"] for e in subset if not lm_eval_task_list(e) and not path_like_tasks(e)]
    no_helm = [e["name"] for e in subset if not helm_description_list(e)]
    # Leaderboard columns, time-series or vision datasets have neither: one warning, not the same list twice.
    neither = set(no_lm) & set(no_helm)
    both_missing = [n for n in no_lm if n in neither]
    no_lm, no_helm = [n for n in no_lm if n not in neither], [n for n in no_helm if n not in neither]
    for missing, harness, fname in (
            (both_missing, "lm-eval task or HELM run entry", "lm-eval YAML and the HELM conf list them as comments"),
            (no_lm, "lm-eval task", "lm-eval YAML lists them as comments and the task list leaves them out"),
            (no_helm, "HELM run entry", "HELM conf lists them as comments")):
        if missing:
            notes = [equivalent(n).note for n in missing if equivalent(n) and equivalent(n).note]
            out.append(f"no {harness} is known for {len(missing)} of the {len(subset)} subset datasets "
                       f"({', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}): the {fname}; run them in their own "
                       "harness" + (f" ({'; '.join(notes[:2])})" if notes else ""))
    return out


def glob_names_warning(names: list, n: int) -> str:
    """``reduce``'s warning on subset names the task list leaves out as glob patterns (``*``, ``?``, ``[``)."""
    from ...safe_output import quoted

    one = len(names) == 1
    return (f"{len(names)} of the {n} subset datasets {'is' if one else 'are'} named with a glob character (* ? [) "
            f"({', '.join(map(quoted, names[:6]))}{' ...' if len(names) > 6 else ''}), which lm_eval --tasks matches "
            f"against its own tasks, running every one it matches, so the task list leaves {'it' if one else 'them'} "
            f"out; the manifest keeps {'it' if one else 'them'}")


def run_share(manifest: dict) -> str:
    """What a reduced run covers of the full benchmark: ``8 of 57`` (datasets) or ``75 of 300 items``."""
    if manifest.get("kind") == "items":
        c = manifest["cost"]
        return f"{c['items_run']} of {c['items_full']} items"
    k = len(manifest.get("subset") or [d for d in manifest["datasets"] if d.get("in_subset")])
    return f"{k} of {len(manifest['datasets'])}"


def reduced_name(manifest: dict):
    """The name of what a manifest estimates: the lm-eval group whose tasks it reduces (``leaderboard_bbh``, the
    manifest's ``lm_eval_group``; ``leaderboard task mean`` for a group lm-eval gives no score, or scores per metric
    over tasks on several), else its benchmark (``mmlu``, ``lm_eval``; None when it has none)."""
    g = manifest.get("lm_eval_group") or {}
    if g.get("name") and (g.get("scored") is False or g.get("mixed_metrics")):  # the row is no score lm-eval gives
        from .lm_eval_members import TASK_MEAN

        return TASK_MEAN.format(name=g["name"])
    return g.get("name") or manifest.get("benchmark")
