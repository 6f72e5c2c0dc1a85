"""Inspect AI evaluation logs (UK AISI ``inspect_ai``): ``.json`` logs and ``.eval`` archives.

A log is one (task, model) run::

    {"version": 2, "status": "success",
     "eval": {"task": "mmlu", "model": "openai/gpt-4o-mini", "dataset": {"name": .., "samples": ..}, ...},
     "results": {"total_samples": .., "completed_samples": ..,
                 "scores": [{"name": "match", "scorer": "match",
                             "metrics": {"accuracy": {"name": "accuracy", "value": 0.8},
                                         "stderr": {"name": "stderr", "value": 0.13}}}]},
     "samples": [...]}

``.eval`` files are zip archives whose ``header.json`` holds the same ``eval`` and
``results`` blocks. Both are read with the standard library, so inspect_ai need not be
installed (the ``[inspect]`` extra installs it for users who also write logs).

A run whose ``eval.model`` is ``none/none`` names its models by role (``eval.model_roles``): its results are the
``target`` role's model's (or the only role's), noted; several roles and none of them ``target`` refuse the log.
Benchmark ``inspect``; dataset = the task name (an ``inspect_evals/`` prefix dropped);
metric = the metric name, or ``<scorer>/<metric>`` when a log has several scores; a score whose epochs were reduced
by another reducer than the mean has it before the metric (``match/max/accuracy``; Inspect writes one score per
reducer), noted;
``stderr`` becomes the stderr of the scorer's first metric; ``std`` and ``var`` (the spread of the samples' scores, not
the error of their mean: 0.31 beside an accuracy over 585 samples whose standard error is about 0.013) are stored as
secondary metrics; a metric whose value is not a number is left out and counted in a note. A log run over several
epochs scores each sample once, its epochs reduced (``epochs_reducer``), so the sample count stored is
``completed_samples`` divided by the epochs (noted). Logs whose
``status`` is not ``success`` are refused: their scores cover only part of the samples; so are logs marked
``invalidated``. A finished log scored on part of its samples (errored samples tolerated by ``fail_on_error``,
samples a scorer left unscored, early stopping, an ``eval.config`` ``limit`` or ``sample_id`` subset) is read,
each of these named in the ingest notes with its counts. A log's samples (the
``samples`` list, an archive's ``samples/*.json`` members) go to the item table after the results
(:mod:`harness_ext.adapters.inspect_items`).
"""

from __future__ import annotations

import json

from harness_ext.benchmarks import INSPECT_BENCHMARK
from harness_ext.errors import IngestError, NotResults
from harness_ext.hookspecs import hookimpl
from harness_ext.types import Adapter, ResultRecord, SourceFile

BENCHMARK = INSPECT_BENCHMARK
#: The metric that is the standard error of a scorer's first metric (``std`` and ``var`` are the samples' spread).
_SPREAD = ("stderr",)


#: The most an archive's ``header.json`` may inflate to (Inspect writes a few kilobytes to a few megabytes: the
#: samples are other members, which are not read).
MAX_HEADER_BYTES = 64 << 20


def _header(src: SourceFile) -> dict:
    if src.suffix == ".eval":
        import zipfile  # only for .eval archives: registering the adapter does not import it (or bz2, lzma)

        try:
            with zipfile.ZipFile(src.path) as z:
                return archive_member(z, src.path, "header.json", MAX_HEADER_BYTES)
        except KeyError:
            raise IngestError(src.path, "an .eval archive without header.json") from None
        except (zipfile.BadZipFile, NotImplementedError, EOFError) as exc:  # a corrupt or unsupported member
            raise IngestError(src.path, f"not a valid .eval archive: {exc}") from None
    return src.json()


def archive_member(z, path, name: str, limit: int):
    """The parsed JSON of member ``name`` of the open archive ``z`` (of ``path``), inflated to at most ``limit``
    bytes; KeyError when there is no such member, IngestError (naming the member) when it is too large or not JSON."""
    from harness_ext.store.ingest_read import read_inflated
    from harness_ext.store.zip_members import open_member

    info = z.getinfo(name)
    if info.file_size > limit:  # as the archive declares it: refused before inflating
        raise IngestError(path, f"member {name} is {info.file_size:,} bytes inflated, above the {limit:,}-byte "
                                "limit: not read")
    # Bounded as it inflates too, by size and by its ratio to the compressed size.
    with open_member(z, info) as fh:  # Inspect compresses its members with Zstandard
        data = read_inflated(fh, path, f"member {name}", info.compress_size, limit)
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise IngestError(path, f"member {name} is not JSON: {str(exc)[:200]}") from None


#: The fields every Inspect ``EvalSpec`` has (Inspect requires them): with ``task`` and ``model``, what tells a log
#: whose format ``version`` was left out from another tool's ``{"status", "eval"}`` document.
_SPEC_FIELDS = ("task", "model", "created", "dataset", "config")


def _is_log(doc) -> bool:
    if not (isinstance(doc, dict) and isinstance(doc.get("eval"), dict) and "status" in doc):
        return False
    # Inspect writes "version" first, but reads a log without it as version 2; logs re-serialised without their
    # defaults (Epoch AI's public logs, as Every Eval Ever keeps them) have none, and are read the same way.
    return all(k in doc["eval"] for k in (("task", "model") if "version" in doc else _SPEC_FIELDS))


def _is_index(doc) -> bool:
    """Whether ``doc`` is the ``logs.json`` ``inspect eval-set`` writes beside its logs: log file name -> header."""
    return isinstance(doc, dict) and bool(doc) and all(
        isinstance(k, str) and k.endswith((".eval", ".json")) and _is_log(v) for k, v in doc.items())


def can_handle(src: SourceFile) -> bool:
    if src.suffix == ".eval":
        import zipfile

        return zipfile.is_zipfile(src.path)
    return src.suffix == ".json" and b'"eval"' in src.head and (
        _is_log(src.try_json()) or src.path.name == "logs.json" and _is_index(src.try_json()))


def check_log(doc, path) -> tuple:
    """``(task, model)`` of a log's header, refused (IngestError naming ``path``) unless it is a finished Inspect log."""
    if not _is_log(doc):
        raise IngestError(path, "not an Inspect AI log (no eval.task / eval.model)")
    if doc.get("status") != "success":
        raise IngestError(path, f"log status is {doc.get('status')!r}, not 'success': its scores are incomplete")
    if doc.get("invalidated") is True:
        raise IngestError(path, "log is marked invalidated (some of its samples were invalidated after the run): "
                                "its scores are not the run's")
    ev = doc["eval"]
    task = str(ev["task"]).split("/", 1)[-1] if str(ev["task"]).startswith("inspect_evals/") else str(ev["task"])
    return task, model_under_test(ev, path)[0]


#: The model Inspect names when a run's models are all given by role (``--model none/none --model-role ...``).
NO_MODEL = "none/none"
#: The role that names the model under test when a run has several (its graders, auditors, red teams are not).
TARGET_ROLE = "target"


def _role_models(roles: dict) -> dict:
    """``{role: model name}`` of an ``eval.model_roles`` block (each role an ``EvalModelConfig`` with ``model``)."""
    out = {}
    for role, spec in roles.items():
        name = spec.get("model") if isinstance(spec, dict) else spec
        out[str(role)] = name if isinstance(name, str) and name else None
    return out


def model_under_test(ev: dict, path) -> tuple:
    """``(model, role)``: the model a log's results belong to, and the role that named it (None for ``eval.model``).

    A run whose ``eval.model`` is ``none/none`` gives its models by role (``eval.model_roles``): the model under
    test is the ``target`` role's, or the only role's; several roles and none named ``target`` name no one model,
    and the log is refused (IngestError naming ``path`` and the roles) rather than stored under ``none/none``, as is
    a ``none/none`` log with no roles at all.
    """
    model, roles = str(ev["model"]), ev.get("model_roles")
    if model != NO_MODEL:
        return model, None
    if not isinstance(roles, dict) or not roles:  # a run of no model (outputs scored as given): no one's scores
        raise IngestError(path, f"eval.model is {NO_MODEL} and the log names no model roles: which model the "
                                "scores are of is not known")
    by_role = _role_models(roles)
    role = TARGET_ROLE if TARGET_ROLE in by_role else next(iter(by_role)) if len(by_role) == 1 else None
    if role is None:
        listed_roles = ", ".join(f"{r} ({m})" for r, m in by_role.items())
        raise IngestError(path, f"eval.model is {NO_MODEL} and its model roles ({listed_roles}) include no "
                                f"'{TARGET_ROLE}' role: which model the scores are of is not known")
    if by_role[role] is None:
        raise IngestError(path, f"eval.model is {NO_MODEL} and its '{role}' model role names no model")
    return by_role[role], role


def metric_label(score: dict, name: str, several: bool) -> str:
    """The stored metric of a header score's metric ``name``: ``name``, ``<score name>/<name>`` when the log has
    several scores; a score whose epochs were reduced by another reducer than the mean (its ``reducer``:
    ``max``, ``mode``, ``pass_at_2``, ...) has the reducer before ``name`` (``match/max/accuracy``,
    ``max/accuracy``), so it never shares a column with the mean-reduced scores of other logs."""
    reducer = score.get("reducer")
    if isinstance(reducer, str) and reducer and reducer != "mean":
        name = f"{reducer}/{name}"
    return f"{score.get('name') or score.get('scorer')}/{name}" if several else str(name)


def reduced_otherwise(scores: list) -> list:
    """The reducers other than the mean that a header's scores were reduced by (Inspect writes a score's
    ``reducer`` when the task names its reducers, one score per reducer: ``epochs=Epochs(3, ["mean", "max"])``)."""
    return sorted({s["reducer"] for s in scores if isinstance(s, dict) and isinstance(s.get("reducer"), str)
                   and s["reducer"] not in ("", "mean")})


def _samples_scored(doc: dict, src: SourceFile):
    """The number of samples the header's metrics are over: ``completed_samples``, divided by the epochs when the
    log ran several (Inspect reduces each sample's epochs to one score before the metrics), noted."""
    n = (doc.get("results") or {}).get("completed_samples")
    epochs = (doc["eval"].get("config") or {}).get("epochs")
    if isinstance(n, int) and isinstance(epochs, int) and not isinstance(epochs, bool) and epochs > 1 \
            and n % epochs == 0:
        src.note(f"{epochs} epochs: the metrics are over {n // epochs:,} samples' epoch-reduced scores, stored as the "
                 f"sample count (not the {n:,} completed runs)")
        return n // epochs
    return n


def _count(value):
    """``value`` if it is a count (an int, not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _unscored_text(score: dict) -> str:
    """``match 3 of 200``: a score's name and the samples it left unscored (of all, when it counts those scored)."""
    n, scored = score["unscored_samples"], _count(score.get("scored_samples"))
    return f"{score.get('name') or score.get('scorer')} {n:,}" + (f" of {n + scored:,}" if scored is not None else "")


def _note_partial(doc: dict, src: SourceFile) -> None:
    """Note a finished log whose scores are over part of its samples, with the counts: samples that errored
    (``completed_samples`` below ``total_samples``: ``fail_on_error`` tolerance), samples a scorer left unscored
    (a score's ``unscored_samples``), early stopping, and a ``limit`` or ``sample_id`` subset of the dataset."""
    res = doc.get("results") or {}
    done, total = _count(res.get("completed_samples")), _count(res.get("total_samples"))
    if done is not None and total is not None and done < total:
        src.note(f"{total - done:,} of {total:,} samples not completed (errors tolerated by fail_on_error, or "
                 f"stopped early): the scores are over the {done:,} completed")
    unscored = [s for s in res.get("scores") or [] if isinstance(s, dict) and (_count(s.get("unscored_samples")) or 0) > 0]
    if unscored:
        src.note("samples left unscored, not in the metrics: " + ", ".join(_unscored_text(s) for s in unscored))
    if res.get("early_stopping") is not None:
        src.note("the run was stopped early (early_stopping): the scores are over the samples run before it stopped")
    _note_subset(doc, src)


def _note_subset(doc: dict, src: SourceFile) -> None:
    """Note a run on part of its dataset: ``eval.config`` ``limit`` or ``sample_id`` set, and fewer samples run
    (``eval.dataset.sample_ids``, else ``total_samples`` over the epochs) than ``eval.dataset.samples`` (the
    dataset's size; a limit above it cuts nothing and is not noted)."""
    ev = doc["eval"]
    config, dataset = ev.get("config") or {}, ev.get("dataset") or {}
    limit, ids = config.get("limit"), config.get("sample_id")
    if limit is None and ids is None:
        return
    run_ids, full = dataset.get("sample_ids"), _count(dataset.get("samples"))
    total, epochs = _count((doc.get("results") or {}).get("total_samples")), _count(config.get("epochs")) or 1
    run = len(run_ids) if isinstance(run_ids, list) else (total // epochs if total is not None and epochs > 0 else None)
    if run is not None and full is not None and run >= full:
        return
    how = f"limit {limit}" if limit is not None else "sample_id"
    counts = f"{run:,} of the dataset's {full:,} samples" if run is not None and full is not None else \
        "part of the dataset's samples"
    src.note(f"scored on {counts} ({how}): not the task's score over all its samples")


def _dataset_ids(ev: dict, scores: list) -> dict:
    """What names the run's dataset beyond the task: ``eval.dataset``'s location and size and the scores' names, which
    an Every Eval Ever record converted from the log keeps (``source_data.hf_repo``, ``samples_number``, its
    ``evaluation_name``): :mod:`harness_ext.store.dataset_links` recognises the record's dataset as this task by them."""
    ds = ev.get("dataset") if isinstance(ev.get("dataset"), dict) else {}
    names = [str(s.get("name") or s.get("scorer")) for s in scores if isinstance(s, dict) and (s.get("name") or s.get("scorer"))]
    out = {"dataset_location": ds.get("location") if isinstance(ds.get("location"), str) else None,
           "dataset_samples": _count(ds.get("samples")), "scorers": names}
    return {k: v for k, v in out.items() if v not in (None, [])}


def read(src: SourceFile):
    doc = _header(src)
    if src.suffix == ".json" and src.path.name == "logs.json" and _is_index(doc):
        raise NotResults(src.path, "an Inspect eval set's index of its logs (their headers): the logs are read instead")
    task, model = check_log(doc, src.path)
    ev = doc["eval"]
    role = model_under_test(ev, src.path)[1]
    if role is not None:
        src.note(f"eval.model is {NO_MODEL}: the scores are stored under the '{role}' model role's model, {model}")
    if "version" not in doc:
        src.note("no log format version: read as Inspect reads such a log, as version 2")
    scores = (doc.get("results") or {}).get("scores") or []
    several, reducers = len(scores) > 1, reduced_otherwise(scores)
    n = _samples_scored(doc, src)
    _note_partial(doc, src)
    meta = {"harness": "inspect_ai", "task_version": ev.get("task_version"),
            "inspect_ai": (ev.get("packages") or {}).get("inspect_ai"), "run_id": ev.get("run_id"), **_dataset_ids(ev, scores)}
    out, dropped = [], []
    for s in scores:
        metrics = s.get("metrics") or {}
        spread = next((metrics[k].get("value") for k in _SPREAD if isinstance(metrics.get(k), dict)), None)
        first = True
        for key, m in metrics.items():
            if key in _SPREAD:
                continue
            if not isinstance(m, dict) or isinstance(m.get("value"), bool) or not isinstance(m.get("value"), (int, float)):
                dropped.append(str(key))  # a metric Inspect could not compute (null): noted, the others kept
                continue
            out.append(ResultRecord(
                model=model, benchmark=BENCHMARK, dataset=task, metric=metric_label(s, m.get("name") or key, several),
                value=float(m["value"]), stderr=float(spread) if first and isinstance(spread, (int, float)) else None,
                n_samples=n if isinstance(n, int) else None, primary=first and s is scores[0], task=str(ev["task"]),
                model_metadata={k: v for k, v in (ev.get("model_args") or {}).items()}, dataset_metadata=meta))
            first = False
    if reducers:  # else a max-reduced accuracy was "accuracy", beside other logs' means (or listed twice: a conflict)
        src.note(f"scores reduced over epochs by {', '.join(reducers)} (not the mean): their metrics are named "
                 "with the reducer (<reducer>/<metric>)")
    if dropped:
        src.note(f"{len(dropped)} metric{'s' * (len(dropped) != 1)} without a numeric value left out: {', '.join(dropped)}")
    return out


@hookimpl
def harness_ext_adapters():
    yield Adapter(name="inspect-ai", can_handle=can_handle, read=read,
                  # 2: a score reduced by another reducer than the mean is named with it (max/accuracy);
                  # 3: std/var are metrics, not the stderr; several epochs: the sample count is per sample
                  # 4: invalidated logs refused; partial scores (errors, unscored, early stop, subsets) noted
                  # 5: a log without its format version (Inspect reads it as version 2) is read, not skipped
                  # 6: a none/none log with model roles is stored under its target role's model (or refused)
                  # 7: a none/none log without model roles is refused (no model's scores), not stored as none/none
                  # 8: the dataset's location and size and the scorers' names stored with the task (dataset links)
                  # 9: .eval archives with Zstandard members (as Inspect writes them now) read, not skipped
                  revision="9",
                  description="Inspect AI evaluation logs (.json, .eval): header scores, samples to the item table")
