"""HELM run names (``babi_qa:task=15,model=AlephAlpha_luminous-base``): the scenario, its arguments, the model,
the dataset and the run group a name stands for.

A name says what was evaluated and by which model. Both HELM readers need that (:mod:`harness_ext.adapters.helm` for
a run directory's ``run_spec.json``, :mod:`harness_ext.adapters.helm_tables` for the runs a leaderboard cell links
to), and neither needs the other's parsing of stats or tables.

Naming
------
Run names look like ``babi_qa:task=15,model=AlephAlpha_luminous-base`` (see
:func:`parse_run_name`; all 8,526 HELM Classic run names parse). The model is
``adapter_spec.model`` (``AlephAlpha/luminous-base``); for a bare run name the
model token's first ``_`` becomes ``/``. The dataset is the scenario plus its
arguments other than the model: ``babi_qa:task=15``. Arguments that describe
how a particular model was prompted rather than what was evaluated are left
out of the dataset name, so that a model run with HELM's model-specific
adaptations lands in the same column as the others: ``model``,
``model_deployment``, ``tokenizer``, ``stop`` and ``global_prefix`` (HELM adds
``stop=hash`` / ``global_prefix=nlg`` for T0pp, UL2, YaLM, ...), and
``data_augmentation=canonical`` (the default perturbation set, whose stats are
excluded anyway). Over the 8,526 real names this keeps (dataset, model)
unique.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from harness_ext.benchmarks import mmlu_subject

#: Run-name arguments that say how a model was prompted, not what was evaluated (left out of dataset names).
MODEL_ARGS = frozenset({"model", "model_deployment", "tokenizer", "stop", "global_prefix"})
#: Arguments at their default value, left out of dataset names.
DEFAULT_ARGS = {"data_augmentation": "canonical"}
#: Arguments that set the shots, not what was evaluated: HELM's run expander appends ``max_train_instances=K`` to a
#: run's name (a conf asking for the manifest's shots), and ``adapter_spec.max_train_instances`` stores ``K`` as the
#: result's shots, so ``mmlu:subject=anatomy,...,max_train_instances=0`` is still the MMLU subject, at 0 shots.
SHOT_ARGS = frozenset({"max_train_instances"})
#: Arguments that set how many instances were run, not which dataset: HELM's ``max_eval_instances`` run expander
#: appends ``max_eval_instances=N`` to a run's name (HELM's own confs write it into entries, and it outranks
#: ``helm-run --max-eval-instances``), so ``quac:...,max_eval_instances=1000`` is still QuAC.
SAMPLE_ARGS = frozenset({"max_eval_instances"})


@dataclass(frozen=True)
class RunName:
    """A parsed HELM run name.

    ``scenario`` is the run-spec function's name as written (``babi_qa``,
    ``dyck_language_np=3``); ``args`` the ordered ``(key, value)`` arguments,
    model included; ``model_token`` the raw ``model=`` value
    (``AlephAlpha_luminous-base``).
    """

    name: str
    scenario: str
    args: tuple

    @property
    def arg_dict(self) -> dict:
        return dict(self.args)

    @property
    def model_token(self) -> Optional[str]:
        return self.arg_dict.get("model")

    @property
    def model(self) -> Optional[str]:
        """``organisation/name`` from the model token (HELM writes ``/`` as ``_`` in run names)."""
        tok = self.model_token
        return tok.replace("_", "/", 1) if tok and "/" not in tok else tok

    @property
    def dataset_args(self) -> tuple:
        return tuple((k, v) for k, v in self.args if k not in MODEL_ARGS and k not in SHOT_ARGS and k not in SAMPLE_ARGS
                     and DEFAULT_ARGS.get(k) != v)

    @property
    def dataset(self) -> str:
        """Scenario plus the arguments that define what was evaluated: ``babi_qa:task=15``."""
        rest = ",".join(f"{k}={v}" for k, v in self.dataset_args)
        return f"{self.scenario}:{rest}" if rest else self.scenario

    @property
    def group(self) -> str:
        """The HELM run group whose environment gives the main metric (``natural_qa_closedbook``, ...)."""
        a, s = self.arg_dict, self.scenario
        if "=" in s:  # dyck_language_np=3: the spec function baked its argument into the name
            s = s.split("=", 1)[0].rsplit("_", 1)[0]
        if s == "summarization_xsum_sampled":  # HELM Classic's XSUM run spec samples its test split
            return "summarization_xsum"
        if s == "commonsense" and a.get("dataset"):
            return a["dataset"]
        if s == "natural_qa" and a.get("mode"):
            return f"natural_qa_{a['mode']}"
        if s == "msmarco" and a.get("track"):
            return f"msmarco_{a['track']}"
        if s == "math":
            return "math_chain_of_thought" if a.get("use_chain_of_thought") == "True" else "math_regular"
        if s == "code":
            return "code_humaneval" if a.get("dataset") == "humaneval" else "code_apps"
        if s == "copyright":
            return "copyright_code" if "code" in a.get("datatag", "") else "copyright_text"
        if s == "disinfo":
            return f"disinformation_{a.get('type', 'reiteration')}"
        return s

    @property
    def mmlu_subject(self) -> Optional[str]:
        """The canonical subject when this is a standard MMLU run (no ablation arguments), else None."""
        if self.scenario != "mmlu":
            return None
        subject = self.arg_dict.get("subject", "")
        for k, v in self.dataset_args:
            if k == "subject" or (k, v) in (("method", "multiple_choice_joint"), ("eval_split", "test")):
                continue
            if k == "groups" and v in ("mmlu", f"mmlu_{subject}"):  # HELM MMLU v1.x names carry their run group
                continue
            return None
        return mmlu_subject(f"mmlu:subject={subject}")


def parse_run_name(name: str) -> RunName:
    """Parse a HELM run name such as ``mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_davinci``.

    The part before the first ``:`` is the run-spec function; some functions put
    arguments there too (``legal_support,method=multiple_choice_joint:model=...``),
    which are kept as arguments. A comma-separated piece without ``=`` belongs to
    the previous value.

    Raises
    ------
    ValueError
        If the name is empty or has no scenario.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"not a HELM run name: {name!r}")
    head, _, tail = name.strip().partition(":")
    head_parts = head.split(",")
    scenario = head_parts[0].strip()
    if not scenario:
        raise ValueError(f"HELM run name {name!r} has no scenario")
    args: list = []
    for piece in head_parts[1:] + (tail.split(",") if tail else []):
        if "=" in piece:
            k, v = piece.split("=", 1)
            args.append([k.strip(), v.strip()])
        elif args:
            args[-1][1] += "," + piece
        elif piece.strip():
            raise ValueError(f"HELM run name {name!r}: argument {piece!r} has no '='")
    return RunName(name.strip(), scenario, tuple((k, v) for k, v in args))
