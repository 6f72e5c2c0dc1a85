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

No lm-eval equivalent: NarrativeQA (lm-eval's ``scrolls_narrativeqa`` reads the
whole book, HELM the summary), NaturalQuestions open-book, QuAC, MS MARCO,
XSUM (HELM's sampled split), IMDB, CivilComments, RAFT, WildBench, Omni-MATH
and HELM's mean win rate. A subset holding them gets a comment naming them in
the lm-eval YAML, and ``reduce`` warns.

RAFT: HELM Classic's RAFT score is the mean over its 11 subsets, so the run
entries are all 11 (:data:`RAFT_SUBSETS`), not one.

References
----------
crfm-helm ``src/helm/benchmark/presentation/run_entries_core_scenarios.conf`` (v0.4.0) and
``run_entries_lite.conf`` (v1.x); lm-evaluation-harness 0.4 ``lm_eval/tasks``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..benchmarks import MMLU_BENCHMARK

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


@dataclass(frozen=True)
class Equivalent:
    """One evaluation under both harnesses' names."""

    names: tuple  # lower-case HELM titles / scenario names / lm-eval task names that denote it
    lm_eval: tuple = ()  # lm-eval tasks (empty: none)
    helm_classic: tuple = ()  # run-entry descriptions in HELM Classic's style
    helm_lite: tuple = ()  # run-entry descriptions in HELM Lite's style
    note: str = ""
    extra: dict = field(default_factory=dict)


_CANON = ",data_augmentation=canonical"
EQUIVALENTS = (
    Equivalent(("mmlu",), tuple(f"mmlu_{s}" for s in HELM_MMLU_SUBJECTS),
               tuple(f"mmlu:subject={s},model=text{_CANON}" for s in HELM_MMLU_SUBJECTS),
               tuple(f"mmlu:subject={s},method=multiple_choice_joint,model=text_code" for s in HELM_MMLU_SUBJECTS),
               "HELM's MMLU is the mean of 5 subjects; the same 5 are run"),
    Equivalent(("gsm8k", "gsm"), ("gsm8k",), (), ("gsm:model=text_code",)),
    Equivalent(("math", "math (chain of thought)"), tuple(f"minerva_math_{v}" for v in MATH_SUBJECTS.values()), (),
               tuple(f"math:subject={s},level=1,use_official_examples=False,use_chain_of_thought=True,model=text_code"
                     for s in MATH_SUBJECTS),
               "lm-eval's Minerva prompt (4-shot CoT, all levels) vs HELM's level-1 CoT: same problems, other prompt"),
    Equivalent(("hellaswag",), ("hellaswag",), (
        "commonsense:model=full_functionality_text,dataset=hellaswag,method=multiple_choice_separate_original" + _CANON,)),
    Equivalent(("openbookqa",), ("openbookqa",), (
        "commonsense:model=full_functionality_text,dataset=openbookqa,method=multiple_choice_separate_calibrated"
        + _CANON,), ("commonsense:dataset=openbookqa,method=multiple_choice_joint,model=text_code",)),
    Equivalent(("boolq",), ("boolq",), (f"boolq:model=text{_CANON}",)),
    Equivalent(("truthfulqa", "truthful_qa", "truthfulqa_mc1"), ("truthfulqa_mc1",),
               (f"truthful_qa:model=text,task=mc_single{_CANON}",)),
    Equivalent(("naturalquestions (closed-book)", "natural_qa_closedbook", "nq_open"), ("nq_open",),
               (f"natural_qa:model=text,mode=closedbook{_CANON}",), ("natural_qa:mode=closedbook,model=text_code",)),
    Equivalent(("naturalquestions (open-book)", "natural_qa_openbook_longans"), (),
               (f"natural_qa:model=text,mode=openbook_longans{_CANON}",),
               ("natural_qa:mode=openbook_longans,model=text_code",), "lm-eval's nq_open is closed-book only"),
    Equivalent(("wmt 2014", "wmt_14", "wmt14-fr-en"), ("wmt14-fr-en",), (),
               tuple(f"wmt_14:language_pair={p}-en,model=text_code" for p in WMT_PAIRS),
               "lm-eval has WMT14 fr->en only; HELM averages cs/de/fr/hi/ru->en"),
    Equivalent(("medqa", "med_qa", "medqa_4options"), ("medqa_4options",), (), ("med_qa:model=text_code",)),
    Equivalent(("legalbench",), tuple(f"legalbench_{s}" for s in LEGALBENCH_SUBSETS), (),
               tuple(f"legalbench:subset={s},model=text_code" for s in LEGALBENCH_SUBSETS),
               "HELM Lite's 5 LegalBench subsets"),
    Equivalent(("cnn/dailymail", "summarization_cnndm", "cnn_dailymail_abisee"), ("cnn_dailymail_abisee",),
               ("summarization_cnndm:model=text,temperature=0.3,device=cpu",)),
    Equivalent(("narrativeqa", "narrative_qa"), (), (f"narrative_qa:model=text{_CANON}",),
               ("narrative_qa:model=text_code",),
               "lm-eval's scrolls_narrativeqa reads the whole book, HELM the summary: not the same task"),
    Equivalent(("quac",), (), (f"quac:model=text{_CANON}",)),
    Equivalent(("ms marco (trec)", "msmarco_trec"), (), ("msmarco:model=full_functionality_text,track=trec,valid_topk=30",)),
    Equivalent(("ms marco (regular)", "msmarco_regular"), (),
               ("msmarco:model=full_functionality_text,track=regular,valid_topk=30",)),
    Equivalent(("xsum", "summarization_xsum"), (), ("summarization_xsum_sampled:model=text,temperature=0.3,device=cpu",)),
    Equivalent(("imdb",), (), (f"imdb:model=text{_CANON}",)),
    Equivalent(("civilcomments", "civil_comments"), (), (f"civil_comments:model=text,demographic=all{_CANON}",)),
    Equivalent(("raft",), (), tuple(f"raft:subset={s},model=text{_CANON}" for s in RAFT_SUBSETS),
               note="all 11 RAFT subsets: HELM's RAFT score is their mean"),
    Equivalent(("mmlu-pro", "mmlu_pro"), ("mmlu_pro",)),
    Equivalent(("gpqa",), ("gpqa_main_cot_n_shot",), note="HELM Capabilities' GPQA is CoT on the main set"),
    Equivalent(("ifeval",), ("ifeval",)),
    Equivalent(("arc_easy",), ("arc_easy",), note="HELM has no ARC scenario"),
    Equivalent(("arc_challenge",), ("arc_challenge",), note="HELM has no ARC scenario"),
)
_BY_NAME = {n: e for e in EQUIVALENTS for n in e.names}
#: Benchmarks whose datasets are HELM scenarios named by their display titles.
HELM_BENCHMARKS_LITE = frozenset({"helm_lite", "helm_capabilities"})


def equivalent(name: str, task: Optional[str] = None) -> Optional[Equivalent]:
    """The table entry for a dataset (by its name, then its task), or None."""
    for key in (name, task):
        if isinstance(key, str) and key.strip().lower() in _BY_NAME:
            return _BY_NAME[key.strip().lower()]
    return None


def _is_helm(entry: dict) -> bool:
    return str(entry.get("benchmark") or "").startswith("helm")


def _table_helm(entry: dict) -> tuple:
    """HELM run-entry descriptions for a manifest subset entry from the table (empty if none)."""
    eq = equivalent(entry.get("name", ""), entry.get("task"))
    if eq is None:
        return ()
    if eq.names == ("mmlu",) and not _is_helm(entry):  # a leaderboard's "MMLU" is all 57 subjects
        from ..benchmarks import MMLU_SUBJECTS

        return tuple(f"mmlu:subject={s},model=text{_CANON}" for s in MMLU_SUBJECTS)
    lite = entry.get("benchmark") in HELM_BENCHMARKS_LITE
    return (eq.helm_lite or eq.helm_classic) if lite else (eq.helm_classic or eq.helm_lite)


def _table_lm_eval(entry: dict) -> tuple:
    """lm-eval tasks for a manifest subset entry from the table (empty if none)."""
    eq = equivalent(entry.get("name", ""), entry.get("task"))
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
    "CivilComments": "civil_comments:model=text,demographic=all,data_augmentation=canonical",
}


def lm_eval_task(entry: dict) -> Optional[str]:
    """The lm-eval (v0.4) task name of a manifest subset entry, or None (see :func:`lm_eval_task_list`)."""
    tasks = lm_eval_task_list(entry)
    return tasks[0] if len(tasks) == 1 else None


def lm_eval_task_list(entry: dict) -> list:
    """The lm-eval (v0.4) tasks that run a manifest subset entry (a HELM scenario may need several)."""
    if entry.get("benchmark") == MMLU_BENCHMARK:
        return [f"mmlu_{entry['name']}"]
    if entry.get("benchmark") == "lm_eval":
        return [entry.get("task") or entry["name"]]
    if entry.get("benchmark") == "helm" and ":" in entry["name"]:
        return list(_table_lm_eval({"name": entry["name"].split(":", 1)[0]}))
    return list(_table_lm_eval(entry))


def helm_description(entry: dict) -> Optional[str]:
    """The HELM run-entry description of a manifest subset entry, or None (see :func:`helm_description_list`)."""
    descs = helm_description_list(entry)
    return descs[0] if len(descs) == 1 else None


def helm_description_list(entry: dict) -> list:
    """HELM run-entry descriptions for a manifest subset entry (HELM Classic's MMLU and RAFT are several)."""
    bench, name = entry.get("benchmark"), entry["name"]
    if bench == MMLU_BENCHMARK:
        return [f"mmlu:subject={name},model=text,data_augmentation=canonical"]
    if bench == "helm_classic" and name in HELM_CLASSIC_DESCRIPTIONS:
        return [HELM_CLASSIC_DESCRIPTIONS[name]]
    if bench == "helm" and ":" in name:  # datasets from HELM run directories are already run-spec names
        return [name if "model=" in name else f"{name},model=text"]
    return list(_table_helm(entry))



def no_equivalent_warnings(subset: list) -> list:
    """``reduce`` warnings for subset datasets that the lm-eval YAML or the HELM conf cannot run."""
    out = []
    no_lm = [e["name"] for e in subset if not lm_eval_task_list(e)]
    no_helm = [e["name"] for e in subset if not helm_description_list(e)]
    # Leaderboard columns, time-series or vision datasets have neither: one warning, not the same list twice.
    neither = set(no_lm) & set(no_helm)
    both_missing = [n for n in no_lm if n in neither]
    no_lm, no_helm = [n for n in no_lm if n not in neither], [n for n in no_helm if n not in neither]
    for missing, harness, fname in ((both_missing, "lm-eval task or HELM run entry", "lm-eval YAML and the HELM conf list"),
                                    (no_lm, "lm-eval task", "lm-eval YAML lists"),
                                    (no_helm, "HELM run entry", "HELM conf lists")):
        if missing:
            notes = [equivalent(n).note for n in missing if equivalent(n) and equivalent(n).note]
            out.append(f"no {harness} is known for {len(missing)} of the {len(subset)} subset datasets "
                       f"({', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}): the {fname} them as "
                       "comments; run them in their own harness" + (f" ({'; '.join(notes[:2])})" if notes else ""))
    return out
