"""Chance levels of lighteval's multiple-choice tasks, for :mod:`harness_ext.adapters.lighteval`.

Two sources, the run's own first:

* the run's details files (``details/<model>/<timestamp>/details_<suite>|<task>|<shots>_<timestamp>.parquet``
  beside ``results/<model>/results_<timestamp>.json``, or ``<timestamp>/details_...`` beside the results file in
  a details dataset): each row is one document and its ``choices`` column (``doc.choices`` from mid-2025) lists
  the answers lighteval scored. lighteval's ``acc`` and ``acc_norm`` take the most likely of a document's
  choices, so a model that guesses is right on a document with ``n`` choices with probability ``1/n``, and on
  the task with the mean of ``1/n`` over its documents (``1/n`` when every document has ``n``);
* else the task's name: lighteval names whose task lm-eval names otherwise (``glue:mnli`` is lm-eval's ``mnli``)
  are mapped to :data:`harness_ext.benchmarks.CHOICES` by :data:`LIGHTEVAL_NAMES`; the others are looked up as
  the adapter names their dataset (``arc:challenge`` as ``arc_challenge``).

A generative task's details list its reference answers under ``choices`` too (a gold answer, several aliases),
so the details give a chance level only to ``acc`` and ``acc_norm``, never to exact-match metrics, and only when
every document lists at least two choices.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from harness_ext.errors import IngestError
from harness_ext.report import listed, plural

from .lighteval_files import DETAILS_RE, key_of, refuse_lfs_pointer

#: lighteval task names (``LightevalTaskConfig.name``) of loglikelihood multiple-choice tasks whose task lm-eval
#: names otherwise, and that name in :data:`harness_ext.benchmarks.CHOICES`. Checked against lighteval's task
#: registry (``src/lighteval/tasks/default_tasks.py`` and ``tasks/glue.py``, ``tasks/race_high.py``: each scored by
#: ``Metrics.loglikelihood_acc``) and the prompt functions of ``default_prompts.py``, whose fixed ``choices`` are
#: the ones :data:`~harness_ext.benchmarks.CHOICES` counts (``mnli``: True, Neither, False; ``cola``, ``mrpc``,
#: ``qnli``, ``qqp``, ``rte``, ``sst``, ``wnli``, ``wsc``, ``boolq_harness``, ``copa``: two; ``race``: the
#: question's four options).
LIGHTEVAL_NAMES = {
    "glue:cola": "cola", "glue:mnli": "mnli", "glue:mnli_mismatched": "mnli_mismatch", "glue:mrpc": "mrpc",
    "glue:qnli": "qnli", "glue:qqp": "qqp", "glue:rte": "rte", "glue:sst2": "sst2", "glue:wnli": "wnli",
    "super_glue:boolq": "boolq", "super_glue:copa": "copa", "super_glue:rte": "rte", "super_glue:wsc": "wsc",
    "super_glue:cb": "cb", "super_glue:wic": "wic",
    "race:high": "race",
}
#: lighteval's metrics that pick the most likely of a document's choices (``Metrics.loglikelihood_acc``,
#: ``loglikelihood_acc_norm`` and their single-token and no-space variants all write these two names).
CHOICE_METRICS = frozenset({"acc", "acc_norm"})
#: Largest number of details files looked at beside one results file (a full MMLU run writes 57).
MAX_DETAILS = 2000


def details_files(results_path) -> list:
    """The details files of the run a ``results_<timestamp>.json`` file belongs to (``[]`` without any)."""
    path = Path(results_path)
    stamp = path.name[len("results_"):-len(".json")] if path.name.startswith("results_") else None
    if not stamp:
        return []
    dirs = [path.parent / stamp]  # a details dataset: <timestamp>/ beside results_<timestamp>.json
    parts = path.parent.parts
    if "results" in parts:  # lighteval's --output-dir: results/<model...>/ beside details/<model...>/<timestamp>/
        i = len(parts) - 1 - parts[::-1].index("results")
        dirs.append(Path(*parts[:i], "details", *parts[i + 1:], stamp))
    out = []
    for d in dirs:
        if d.is_dir():
            out += sorted(p for p in d.iterdir() if p.is_file() and (m := DETAILS_RE.match(p.name))
                          and m.group("stamp") == stamp)
    return out[:MAX_DETAILS]


def choice_counts(path) -> Optional[list]:
    """Each document's number of choices in a details file, or None when the file lists no choices.

    Raises
    ------
    IngestError
        For a file that is a Git LFS pointer or not Parquet.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = Path(path)
    refuse_lfs_pointer(path)
    try:
        names = set(pq.read_schema(path).names)
        if "choices" in names:
            col = pq.read_table(path, columns=["choices"]).column("choices")
        elif "doc" in names:
            col = pq.read_table(path, columns=["doc"]).column("doc")
            if not pa.types.is_struct(col.type) or col.type.get_field_index("choices") < 0:
                return None
            col = pc.struct_field(col, "choices")
        else:
            return None
    except Exception as exc:  # pyarrow's ArrowInvalid and OSError: not a Parquet file
        raise IngestError(path, f"not a Parquet file: {type(exc).__name__}: {exc}") from None
    if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)):
        return None
    return [n if n is not None else 0 for n in pc.list_value_length(col).to_pylist()]


def details_chance(results_path, results: dict, notes: list) -> dict:
    """``{result key: (chance level, source)}`` from the run's details files, every document listing two or more
    choices; what could not be used is said in ``notes`` with counts."""
    scored = results.get("results") if isinstance(results.get("results"), dict) else {}
    # Only tasks scored by acc or acc_norm: a generative task's details are not read.
    wanted = {k for k, b in scored.items() if isinstance(b, dict) and not CHOICE_METRICS.isdisjoint(b)}
    out, unreadable, without, short = {}, [], [], []
    for p in details_files(results_path):
        key = key_of(p, results)
        if key not in wanted:
            continue
        try:
            counts = choice_counts(p)
        except IngestError as exc:
            unreadable.append(f"{p.name} ({exc.reason})")
            continue
        if not counts:
            without.append(key)
            continue
        if min(counts) < 2:
            short.append(f"{key} ({sum(c < 2 for c in counts):,} of {len(counts):,})")
            continue
        sizes = sorted(set(counts))
        if len(sizes) == 1:
            docs = f"{len(counts):,} document{'s' * (len(counts) != 1)}"
            out[key] = (1.0 / sizes[0], f"{sizes[0]} answer choices (each of the {docs} of the run's details file)")
        else:
            level = sum(1.0 / c for c in counts) / len(counts)
            out[key] = (level, f"mean of 1/choices over the {len(counts):,} documents of the run's details file "
                               f"({sizes[0]} to {sizes[-1]} choices)")
    found = [f"{k} {v[0]:.4g}" for k, v in sorted(out.items())]
    for items, noun, says in (
            (found, "task", "chance levels from the answer choices listed in the run's details files (acc, acc_norm)"),
            (unreadable, "details file", "of the run not read for chance levels"),
            (sorted(without), "details file", "of the run listing no answer choices"),
            (short, "task", "scored by acc or acc_norm left without a chance level by the details: documents listing "
                            "fewer than two answer choices (of all)")):
        if items:
            head = f"{says} of {plural(len(items), noun)}" if items is found else f"{plural(len(items), noun)} {says}"
            notes.append(f"{head}: {listed(items, 8 if items is found else 5)}")
    return out
