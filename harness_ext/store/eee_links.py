"""Where an Every Eval Ever instance file's items and its record's score of the same evaluation are named apart.

An instance file names its evaluation by ``evaluation_name`` (GenEval's ``geneval_overall``), and its items are
stored under that task. The aggregate record beside it stores that evaluation's score under the same name, except
for an evaluation run (``source_metadata.source_type: evaluation_run``, as converted Inspect AI logs and
GenEval's example are), whose results are stored under the dataset their ``source_data.dataset_name`` names
(``GenEval``), with the evaluation's name as the result's task (the Every Eval Ever adapter's rule: its
scorers, ``choice`` or ``gaia_scorer``, are no datasets). The items and the score then sit under two names; the
record links them (the instance lines' ``evaluation_name`` is the record result's). Which name both should take is
left as it is; the file's ingest notes say where they are, naming both, so the files of one evaluation share one
note line with their count.
"""

from __future__ import annotations

from typing import Optional

#: The ingest note of an instance file whose record stores the evaluation's score under another dataset name.
TASK_APART_NOTE = ("items stored under task {task!r} (the lines' evaluation_name), while the record beside the file "
                   "stores that evaluation's score under dataset {dataset!r} (its source_data.dataset_name, as for "
                   "every evaluation run), with {task!r} as the result's task")


def _dataset_name(result) -> Optional[str]:
    """The dataset an evaluation-run result names in its ``source_data`` (as the adapter reads it), or None."""
    sd = result.get("source_data") if isinstance(result, dict) else None
    name = sd.get("dataset_name") if isinstance(sd, dict) else None
    return name.strip() if isinstance(name, str) and name.strip() else None


def record_dataset(record: Optional[dict], task: str) -> Optional[str]:
    """The dataset name the Every Eval Ever adapter stores the ``record``'s result of evaluation ``task`` under, when
    it is not ``task`` itself (an evaluation run's ``source_data.dataset_name``); else None.

    Parameters
    ----------
    record : dict or None
        The aggregate record beside an instance file (None: no readable record).
    task : str
        The instance file's ``evaluation_name``.

    Returns
    -------
    str or None
    """
    if not isinstance(record, dict):
        return None
    meta, results = record.get("source_metadata"), record.get("evaluation_results")
    if not isinstance(meta, dict) or meta.get("source_type") != "evaluation_run" or not isinstance(results, list):
        return None
    if not any(_dataset_name(r) for r in results):  # the adapter reads such a record as leaderboard columns
        return None
    for r in results:
        if isinstance(r, dict) and r.get("evaluation_name") == task:
            name = _dataset_name(r)
            return name if name is not None and name != task else None
    return None


def task_apart_notes(record: Optional[dict], task: str) -> list:
    """:data:`TASK_APART_NOTE` (as a list of one) when the record stores evaluation ``task``'s score under another
    dataset name (:func:`record_dataset`), else ``[]``."""
    dataset = record_dataset(record, task)
    return [TASK_APART_NOTE.format(task=task, dataset=dataset)] if dataset is not None else []
