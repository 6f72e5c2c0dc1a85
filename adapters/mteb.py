"""MTEB (Massive Text Embedding Benchmark) result files, legacy and current layouts.

Layouts
-------
Legacy (``mteb`` 0.0.x-1.11, e.g. embeddings-benchmark/mtebpaper): one folder per
model, one ``<Task>.json`` per task::

    {"mteb_version": "0.0.2", "mteb_dataset_name": "SciFact",
     "test": {"ndcg_at_10": 0.645, ...}}                       # metrics directly, or
     "test": {"en": {"accuracy": ..., "main_score": ...}, "da": {...}}   # per language subset

Current (``mteb`` >= 1.11, embeddings-benchmark/results): ``<org>__<model>/<revision>/<Task>.json``::

    {"mteb_version": "1.12.41", "task_name": "Banking77Classification",
     "scores": {"test": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.79, ...}]}}

Model = the ``name`` (and revision = the ``revision``) of the ``model_meta.json`` beside the file, as mteb's
own result cache names them (an API model's revision folders are ``1``, ``2``: ``openai__text-embedding-3-large/1/``);
without one, the folder above the revision folder (``GritLM__GritLM-7B`` -> ``GritLM/GritLM-7B``; a revision
folder is 40 hex digits, ``no_revision_available`` or ``external``), else the file's folder.
Benchmark ``mteb``; dataset = the task name.

Experiment runs (mteb 2.x): a model run with settings other than its defaults (``ModelMeta.experiment_kwargs``:
another embedding size, other prompts) is written to ``<model>/<revision>/experiments/<experiment>/<Task>.json``,
the folder named by those settings, with its own ``model_meta.json``; mteb's ``ResultCache`` reads it as the
model's result under that experiment name, apart from the default run (and leaves experiments out unless asked).
Such a file is stored under the model at that experiment, ``org/model (<experiment>)``, with the model metadata
``experiment`` and ``experiment_of`` (the plain model), so an experiment never shares a cell with the model's
default run, and counted in one ingest note. Like other adapters' variants (a precision) it also carries
:data:`~harness_ext.types.VARIANT_OF`, the plain model, and :data:`~harness_ext.types.NON_DEFAULT_VARIANT`: a model the
store holds at one experiment only is shown and matched by its plain name; beside the model's default run (or a
second experiment) it keeps ``org/model (<experiment>)``. The ``run_settings.jsonl`` mteb 2.x writes beside the task files
(package versions and encode settings per task and split) holds no scores: like ``model_meta.json``, it is counted
as skipped without a warning.

MAIR results (benchmark ``mair``)
---------------------------------
embeddings-benchmark/results also holds the results of MAIR (Massive Instructed Retrieval benchmark,
Sun et al. 2024: 126 retrieval tasks whose queries carry instructions), in the same model folders, sometimes
the same revision folder, as MTEB's. Several of its tasks are named like MTEB's own (SciFact, ArguAna,
SCIDOCS, NFCorpus, ...) but are other evaluations (other queries, instructions, sampled corpora): a model's
MAIR SciFact is not its MTEB SciFact. A MAIR file is stored under benchmark ``mair`` (the dataset is still
the task name; a matrix holding both names the columns ``mteb/SciFact`` and ``mair/SciFact``), so the two
never share a cell, and every such file is noted in the ingest report (one line with the count). A file is
MAIR's when it has ``mteb_mair_domain`` (the first uploads: ``mteb_dataset_name``, ``mteb_mair_domain``,
``queries``, ``"evaluation_time": ""``) or MAIR's dataset revision :data:`MAIR_DATASET_REVISION`, which every
MAIR file writes for every task, in the later rewrites as well (``task_name``, ``main_score``, no
``mteb_mair_domain``); ``mteb_version`` is ``1.2.0`` in all of them. Its main score is ``NDCG@10``.

RTEB results (benchmark ``rteb``)
---------------------------------
embeddings-benchmark/results also holds results of RTEB (Retrieval Embedding Benchmark, Liu et al. 2025)
converted from RTEB's own evaluator into MTEB's file layout, in the same model and revision folders as MTEB's
files and under MTEB's task names (``AILACasedocs.json``, ``AppsRetrieval.json``), besides its closed datasets
(``ClosedDataset 1 (Code)Retrieval.json``). They are not MTEB's evaluation of the task: another evaluator, other
cut-offs (``ndcg_at_50``, no ``mrr``), rounded to 5 digits; BAAI/bge-small-en-v1.5's AILACasedocs is 0.22311 in
RTEB's file and 0.23501 in MTEB's (mteb 1.18.0) at another commit, with the same ``ndcg_at_1``. A file is RTEB's
when it carries the converter's marks, all of them: ``mteb_version`` ``1.0.0`` in the current layout (mteb 1.0.0
itself wrote the legacy one), ``"evaluation_time": 0`` and an 8-digit hexadecimal ``dataset_revision`` (the first 8
digits of the MD5 of RTEB's dataset name; mteb writes the dataset's 40-digit commit). It is stored under benchmark
``rteb``, counted in one note line, as MAIR's are.

Main score (the primary metric, stored as ``main_score`` in both layouts so they meet in
one cell): the file's own ``main_score`` when it has one, else the task type's main
metric (:data:`MAIN_METRIC`, as ``mteb`` defines them), the type recognised from the
metrics present: ``v_measure`` (Clustering), ``cos_sim.spearman`` (STS, Summarization),
``cos_sim.ap`` (PairClassification), ``ndcg_at_10`` or ``NDCG@10`` (Retrieval), ``map`` next to ``mrr``
(Reranking), ``f1`` next to precision/recall (BitextMining), ``accuracy``
(Classification). The other scalar metrics are stored as secondary metrics
(``--metric ndcg_at_100``). A correlation (STS and summarisation: ``cosine_spearman``, ``cos_sim.spearman``,
``pearson``, ...) and instruction retrieval's p-MRR are stored on [-1, 1] with 0 as the no-skill level
(:func:`signed_scale`), so a negative score is read as below chance, not as a new minimum of the column.

Split and languages (``ingest --mteb-split``, ``--mteb-languages``)
------------------------------------------------------------------
Split: the given one, else the first of ``test``, ``dev``, ``validation`` the file has
(MSMARCO reports ``dev``). Subsets: those whose name or language codes match
``--mteb-languages`` (``en``, ``eng``, ``eng-Latn``, ``de-en``), averaged; without the
option, the ``default`` subset, else the English one (``en``, ``en-en``, ``eng-Latn``:
the MTEB(eng) leaderboard's choice; a subset counts as English when its name is, or all
its languages are: BUCC's ``fr-en``, ``de-en``, ... pairs each hold English, and are
averaged), else the mean over all subsets. The split and subsets used
are recorded in the dataset's metadata and, when the file offered a choice the options did not make, said in the
ingest report (:func:`_choice_notes`).

Aggregate tasks
---------------
A task mteb defines as the mean of other tasks (:data:`AGGREGATE_TASKS`: CQADupstackRetrieval over its
12 forum sub-tasks, ...) is stored as an aggregate (a prediction target, never a subset member), and
noted in the ingest report.

Model metadata (``model_meta.json``)
------------------------------------
embeddings-benchmark/results keeps a ``model_meta.json`` (mteb's ModelMeta: ``name``, ``revision``,
``n_parameters``, ``embed_dim``, ``max_tokens``, ``release_date``, ``open_weights``, ...) beside each
revision's task files. Its non-null fields that are a plain value or a list of plain values become the
model metadata of every result read from that folder (:func:`model_meta`; the nested
``training_datasets`` is left out). The file itself holds no results: it is reported skipped
without a warning (:class:`~harness_ext.errors.NotResults`), and creates no dataset.

References
----------
Muennighoff et al. (2023), "MTEB: Massive Text Embedding Benchmark", EACL, §3.2 (metrics
per task type).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import PurePosixPath
from typing import Optional

from harness_ext.errors import IngestError, NotResults
from harness_ext.hookspecs import hookimpl
from harness_ext.types import NON_DEFAULT_VARIANT, VARIANT_OF, Adapter, ResultRecord, SourceFile, variant_name

MTEB_BENCHMARK = "mteb"
#: The benchmark MAIR's results are stored under, apart from MTEB's tasks of the same name.
MAIR_BENCHMARK = "mair"
#: The ``dataset_revision`` every MAIR result file in embeddings-benchmark/results writes, whatever the task
#: (MTEB's files write each task's own dataset revision).
MAIR_DATASET_REVISION = "7d24eac886a6ae6653a6b67433e1c302cb0e9ac6"
#: The ingest note of a MAIR file; one text for all of them, so the report gives one line with their count.
MAIR_NOTE = ("MAIR result: stored under benchmark mair, apart from MTEB's tasks of the same name "
             "(other queries and instructions)")
#: The benchmark of RTEB's results converted into MTEB's layout, apart from MTEB's tasks of the same name.
RTEB_BENCHMARK = "rteb"
#: The ingest note of an RTEB file (one text for all of them: one report line with their count).
RTEB_NOTE = ("RTEB result (converted from RTEB's evaluator): stored under benchmark rteb, apart from MTEB's tasks "
             "of the same name (other scores)")
_RTEB_REVISION = re.compile(r"^[0-9a-f]{8}$")
#: Task type -> main metric (``mteb`` AbsTask*.metadata main_score of the legacy releases).
MAIN_METRIC = {
    "BitextMining": "f1", "Classification": "accuracy", "MultilabelClassification": "accuracy",
    "Clustering": "v_measure", "PairClassification": "cos_sim.ap", "Reranking": "map",
    "Retrieval": "ndcg_at_10", "STS": "cos_sim.spearman", "Summarization": "cos_sim.spearman",
}
SPLIT_ORDER = ("test", "dev", "validation")
#: Tasks mteb defines as aggregates of other tasks (``AbsTaskAggregate``: the main score is the mean of the
#: sub-tasks' main scores): CQADupStack's 12 forum retrieval tasks in English, Polish, Persian and Dutch, the
#: visual STS aggregates, and the benchmark-level aggregates. Stored as aggregates beside their parts.
#: Reference: mteb ``mteb/tasks/aggregated_tasks`` (Enevoldsen et al. 2025, MMTEB).
AGGREGATE_TASKS = frozenset({
    "CQADupstackRetrieval", "CQADupstackRetrieval-PL", "CQADupstackRetrievalFa", "CQADupstackNLRetrieval",
    "STS17MultilingualVisualSTSEng", "STS17MultilingualVisualSTSMultilingual", "STSBenchmarkMultilingualVisualSTSEng",
    "STSBenchmarkMultilingualVisualSTSMultilingual", "SynPerChatbotConvSAClassification",
    "MTEB(eng, v2)", "MTEB(Multilingual, v1)", "MTEB(Multilingual, v2)", "MTEB(Europe, v1)", "MTEB(Indic, v1)",
    "MTEB(Code, v1)", "MTEB(Law, v1)", "MTEB(Medical, v1)", "FollowIR", "LongEmbed", "MIEB(eng)",
})
_REVISION = re.compile(r"^([0-9a-f]{40}|no_revision_available|external)$")
_SKIP = re.compile(r"(_stderr|_std|_threshold)$|^(evaluation_time|hf_subset|languages|main_score|scores_per_experiment)$")
_ENGLISH = ("default", "en", "en-en", "eng", "eng-latn", "eng_latn")


#: The model metadata file mteb writes beside a revision's task files.
MODEL_META = "model_meta.json"
_PLAIN = (str, int, float, bool)


def _is_model_meta(src: SourceFile, doc) -> bool:
    return (os.path.basename(src.pathname) == MODEL_META and isinstance(doc.get("name"), str)
            and "revision" in doc and ("embed_dim" in doc or "n_parameters" in doc))


#: JSON files up to this size are parsed to decide whether they are MTEB results when their first bytes do not say.
SNIFF_PARSE_BYTES = 16 << 20


#: The file of run settings mteb 2.x writes beside a revision's task files (one JSON object per task and split).
RUN_SETTINGS = "run_settings.jsonl"


def _is_run_settings(src: SourceFile) -> bool:
    """Whether ``src`` is mteb 2.x's ``run_settings.jsonl``: its first line names a task and its encode settings."""
    if os.path.basename(src.pathname) != RUN_SETTINGS:
        return False
    try:
        first = json.loads(src.head.split(b"\n", 1)[0])
    except (ValueError, RecursionError):
        return False
    return isinstance(first, dict) and "task" in first and "encode_kwargs" in first


def can_handle(src: SourceFile) -> bool:
    """Whether ``src`` is an MTEB task result (or ``model_meta.json``), by the document's keys.

    The first bytes usually say (``mteb_version``, ``task_name``); when they do not -- a multilingual
    legacy file writes its ``test`` block of per-language metrics first, putting ``mteb_version``
    past byte 4,800 -- a JSON object of ordinary size is parsed (ingest has usually parsed it already)
    and its top-level keys decide.
    """
    if src.suffix == ".jsonl":
        return _is_run_settings(src)
    if src.suffix != ".json":
        return False
    if src.pathname.endswith(MODEL_META):
        doc = src.try_json()
        return isinstance(doc, dict) and _is_model_meta(src, doc)
    head = src.head
    if b"mteb" not in head and b"task_name" not in head:
        if head.lstrip()[:1] != b"{" or not _small(src):
            return False
    doc = src.try_json()
    if not isinstance(doc, dict):
        return False
    if isinstance(doc.get("scores"), dict) and "task_name" in doc:
        return True
    return "mteb_dataset_name" in doc or (isinstance(doc.get("mteb_version"), str) and any(s in doc for s in SPLIT_ORDER))


def _small(src: SourceFile) -> bool:
    if "bytes" in src.__dict__ or "_json" in src.__dict__:
        return True
    try:
        return os.path.getsize(src.pathname) <= SNIFF_PARSE_BYTES
    except OSError:
        return False


#: The folder mteb 2.x keeps a revision's experiment runs in: ``<model>/<revision>/experiments/<experiment>/<Task>.json``.
EXPERIMENTS_FOLDER = "experiments"
#: The ingest note of an experiment run's file (one text for all of them: one report line with their count).
EXPERIMENT_NOTE = ("mteb experiment run (<revision>/experiments/<name>/: the model run with non-default settings): "
                   "stored as its own model, 'org/model (name)', apart from the model's default run")


def experiment_of(path) -> Optional[str]:
    """The experiment name of a file in mteb 2.x's experiment layout
    (``<model>/<revision>/experiments/<experiment>/<Task>.json``), else None.

    The folder above ``experiments`` must look like a revision (40 hex digits, ``no_revision_available``,
    ``external``, or an API model's ``1``, ``2``): a user's own folder named ``experiments`` holding legacy
    ``<model>/<Task>.json`` folders is not an experiment.
    """
    parts = PurePosixPath(str(path)).parts
    if len(parts) >= 5 and parts[-3] == EXPERIMENTS_FOLDER and parts[-2].strip() and (
            _REVISION.match(parts[-4]) or parts[-4].isdigit()):
        return parts[-2]
    return None


def model_of(path) -> tuple:
    """``(model, revision)`` from the file's folders (see :func:`model_and_revision` for the whole rule)."""
    parts = PurePosixPath(str(path)).parts
    if experiment_of(path) is not None:  # <model>/<revision>/experiments/<experiment>/<Task>.json, as mteb reads it
        return parts[-5].replace("__", "/", 1), parts[-4]
    if len(parts) >= 3 and _REVISION.match(parts[-2]):
        return parts[-3].replace("__", "/", 1), parts[-2]
    if len(parts) >= 2:
        return parts[-2].replace("__", "/", 1), None
    raise IngestError(path, "cannot name the model: the file is not in a model folder")


#: The ingest note of a file whose model ``model_meta.json`` names where its folders do not (one text for all).
META_NAME_NOTE = ("model and revision named by the model_meta.json beside the file, not by its folders (as mteb's "
                  "result cache names them; an API model's revision folders are 1, 2, ...)")


def model_and_revision(src: SourceFile, meta: Optional[dict] = None) -> tuple:
    """``(model, revision)`` of a result file, as mteb's own result cache names them.

    The ``name`` and ``revision`` of the ``model_meta.json`` beside the file when it has a name (mteb's
    ``ResultCache`` reads them so); else the folders (:func:`model_of`). Without the file, a revision folder is
    recognised by its form (40 hex digits, ``no_revision_available``, ``external``); an API model's revision
    folder (``openai__text-embedding-3-large/1/``) is not, and its model would be named ``1``. A file named by
    its ``model_meta.json`` where the folders would name another model is noted (:data:`META_NAME_NOTE`).
    ``meta``: the file's :func:`model_meta`, when the caller has it.
    """
    meta = model_meta(src) if meta is None else meta
    name = meta.get("name")
    if not isinstance(name, str) or not name.strip():
        return model_of(src.path)
    revision = meta.get("revision")
    revision = str(revision) if isinstance(revision, (str, int)) and not isinstance(revision, bool) else None
    try:
        folder_model, folder_revision = model_of(src.path)
    except IngestError:
        folder_model, folder_revision = None, None
    if folder_model != name:
        src.note(META_NAME_NOTE)
    return name, revision or folder_revision


_META_CACHE: dict = {}


def model_meta(src: SourceFile) -> dict:
    """The model metadata of the ``model_meta.json`` beside ``src`` (empty without one or when unreadable).

    Kept: the non-null fields whose value is a plain value or a list of plain values (``languages``,
    ``framework``); a nested mapping (``training_datasets``, tens of entries) is not model metadata to
    compare models by. Read once per folder: a revision folder holds hundreds of task files.
    """
    path = src.sibling(MODEL_META)
    if path is None:
        return {}
    try:
        st = os.stat(path)
    except OSError:
        return {}
    key = (path, st.st_mtime_ns, st.st_size)  # a file rewritten in a long session is read again
    try:
        return _META_CACHE[key]
    except KeyError:
        pass
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read())
    except (OSError, ValueError, RecursionError):
        doc = None
    out = {}
    if isinstance(doc, dict):
        for k, v in doc.items():
            if isinstance(v, _PLAIN) or (isinstance(v, list) and v and all(isinstance(x, _PLAIN) for x in v)):
                if not (isinstance(v, float) and not math.isfinite(v)):
                    out[str(k)] = v
    if len(_META_CACHE) > 10_000:
        _META_CACHE.clear()
    _META_CACHE[key] = out
    return out


def is_mair(doc: dict) -> bool:
    """Whether an MTEB-layout result document is MAIR's (the module's "MAIR results"): ``mteb_mair_domain``, or
    MAIR's dataset revision."""
    return "mteb_mair_domain" in doc or doc.get("dataset_revision") == MAIR_DATASET_REVISION


def is_rteb(doc: dict) -> bool:
    """Whether an MTEB-layout result document is RTEB's, converted (the module's "RTEB results"): current layout,
    ``mteb_version`` ``1.0.0``, ``"evaluation_time": 0`` and an 8-digit hexadecimal ``dataset_revision``."""
    rev = doc.get("dataset_revision")
    return (isinstance(doc.get("scores"), dict) and doc.get("mteb_version") == "1.0.0"
            and doc.get("evaluation_time") == 0 and not isinstance(doc.get("evaluation_time"), bool)
            and isinstance(rev, str) and _RTEB_REVISION.match(rev) is not None)


#: Main metrics on [-1, 1] whose 0 is the no-skill level: ``(lo, hi, baseline, why)``. FollowIR's p-MRR (Weller et
#: al. 2024), the main score of mteb's instruction retrieval tasks (Core17InstructionRetrieval, ...), is 0 when the
#: changed instructions move no relevant document and negative when they move them the wrong way, as many models
#: not trained on instructions do: read as a proportion, one such model turned the column into a min-max of the
#: models in the store (e5-small's -0.0026 its 0, GritLM-7B's 0.067 its 1).
SIGNED_METRICS = {
    "p-MRR": (-1.0, 1.0, 0.0, "p-MRR: 0 when the instructions move no document (Weller et al. 2024)"),
}
#: STS and summarisation score a model by the correlation of its similarities with the human ratings (Muennighoff
#: et al. 2023, §3.2): Spearman's (the main score) and Pearson's, by cosine, dot product, Euclidean or Manhattan
#: distance (``cosine_spearman``, ``cos_sim.spearman``, ``dot_pearson``, ``spearman``). On [-1, 1], 0 when the
#: similarities order the pairs no better than chance: read as a proportion, a model with a negative correlation
#: turned the column into a min-max of the models in the store, as p-MRR did.
CORRELATION_METRIC = re.compile(r"(^|[._])(spearman|pearson)$")
_CORRELATION_SCALE = (-1.0, 1.0, 0.0, "correlation with human similarity ratings: 0 when the similarities order "
                                      "the pairs no better than chance (Muennighoff et al. 2023)")


def signed_scale(metric) -> dict:
    """The ResultRecord bounds and baseline of a metric of :data:`SIGNED_METRICS` or a correlation
    (:data:`CORRELATION_METRIC`), else no fields."""
    spec = SIGNED_METRICS.get(metric)
    if spec is None and isinstance(metric, str) and CORRELATION_METRIC.search(metric):
        spec = _CORRELATION_SCALE
    if spec is None:
        return {}
    return {"min_score": spec[0], "max_score": spec[1], "random_baseline": spec[2], "baseline_source": spec[3]}


def _main_of(block: dict) -> tuple:
    """``(metric name, value)`` of a legacy metrics block, by its own main_score or the task type's."""
    if isinstance(block.get("main_score"), (int, float)):
        name = next((k for k, v in block.items() if k != "main_score" and not _SKIP.search(k) and v == block["main_score"]),
                    "main_score")
        return name, block["main_score"]
    cos = block.get("cos_sim") if isinstance(block.get("cos_sim"), dict) else {}
    if "v_measure" in block:
        return MAIN_METRIC["Clustering"], block["v_measure"]
    if "spearman" in cos:
        return MAIN_METRIC["STS"], cos["spearman"]
    if "ap" in cos:
        return MAIN_METRIC["PairClassification"], cos["ap"]
    # MAIR's retrieval files in embeddings-benchmark/results write it as "NDCG@10", with no main_score.
    ndcg = "ndcg_at_10" if "ndcg_at_10" in block else next((k for k in block if k.lower() == "ndcg@10"), None)
    if ndcg is not None:
        return MAIN_METRIC["Retrieval"], block[ndcg]
    if "map" in block and "mrr" in block:
        return MAIN_METRIC["Reranking"], block["map"]
    if "f1" in block and "precision" in block and "recall" in block:
        return MAIN_METRIC["BitextMining"], block["f1"]
    if "accuracy" in block:
        return MAIN_METRIC["Classification"], block["accuracy"]
    return None, None


def _flat(block: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in block.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        # mteb >= 1.12 writes NaN for undefined diagnostics (nauc_*_at_1000 when every query is
        # answered at rank 1): such a secondary metric has no value, it does not void the file.
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and not _SKIP.search(k) and math.isfinite(v):
            out[prefix + k] = v
    return out


def _subsets(src, doc) -> dict:
    """split -> {subset: (languages, metrics block)} for either layout."""
    out = {}
    if isinstance(doc.get("scores"), dict):
        for split, entries in doc["scores"].items():
            if not isinstance(entries, list):
                raise IngestError(src.path, f"scores[{split!r}] is not a list of subset entries")
            out[split] = subsets = {}
            for e in (e for e in entries if isinstance(e, dict)):
                name = str(e.get("hf_subset", "default"))
                if name in subsets and subsets[name][1] != e:  # the later one silently replaced the first
                    raise IngestError(src.path, f"scores[{split!r}] lists subset {name!r} twice, with different scores")
                subsets[name] = ([str(x) for x in e.get("languages") or []], e)
        return out
    for split in doc:
        block = doc[split]
        if not isinstance(block, dict) or split in ("mteb_version", "mteb_dataset_name", "dataset_revision"):
            continue
        _, value = _main_of(block)
        if value is not None:
            out[split] = {"default": ([], block)}
        else:
            out[split] = {k: ([k], v) for k, v in block.items() if isinstance(v, dict)}
    return out


def _choose(subsets: dict, languages) -> list:
    if languages:
        want = {w.lower() for w in languages}
        hit = [s for s, (langs, _) in subsets.items()
               if s.lower() in want or any(l.lower() in want or l.lower().split("-")[0] in want for l in langs)
               or any(part in want for part in s.lower().replace("_", "-").split("-"))]
        return hit
    if len(subsets) == 1:
        return list(subsets)
    # Only a subset wholly in English stands for the task: a pair such as BUCC's fr-en
    # (languages fra-Latn, eng-Latn) is one of several equal pairs, and every pair holds English.
    for pref in _ENGLISH:
        hit = [s for s, (langs, _) in subsets.items()
               if s.lower() == pref or (langs and all(l.lower() == pref for l in langs))]
        if hit:
            return hit[:1]
    return list(subsets)


def _choice_notes(splits: dict, split: str, chosen: list, opts: dict) -> list:
    """What ingest says when a file holds several splits or subsets and the reader chose among them (nothing when
    the options chose): the split read, and which subsets (the English one, or the mean over all)."""
    notes = []
    if len(splits) > 1 and not opts.get("mteb_split"):
        notes.append(f"several splits ({', '.join(map(str, splits))}): {split} read, the first of "
                     f"{', '.join(SPLIT_ORDER)} the file has (--mteb-split chooses another)")
    n = len(splits[split])
    if n > 1 and not opts.get("mteb_languages"):
        if len(chosen) == n:
            notes.append(f"{n} subsets and none the default or English alone: their mean read "
                         "(--mteb-languages chooses some)")
        else:
            notes.append(f"{len(chosen)} of {n} subsets read ({', '.join(map(str, chosen))}): the English one, as the "
                         "MTEB(eng) leaderboard does (--mteb-languages chooses others)")
    return notes


def read(src: SourceFile):
    if src.suffix == ".jsonl" and _is_run_settings(src):
        raise NotResults(src.path, f"mteb run settings ({RUN_SETTINGS}: package versions and encode settings per "
                                   "task), no results of their own")
    doc = src.json()
    if isinstance(doc, dict) and _is_model_meta(src, doc):
        raise NotResults(src.path, f"MTEB model metadata ({MODEL_META}): read into the model's metadata with "
                                   "the task files beside it, no results of its own")
    opts = getattr(src, "options", None) or {}
    task = doc.get("task_name") or doc.get("mteb_dataset_name") or src.path.stem
    meta_file = model_meta(src)
    model, revision = model_and_revision(src, meta_file)
    splits = _subsets(src, doc)
    want_split = opts.get("mteb_split")
    split = want_split if want_split else next((s for s in SPLIT_ORDER if s in splits), next(iter(splits), None))
    if split not in splits:
        raise IngestError(src.path, f"task {task}: no {split or 'scores for any'} split (has {sorted(splits)})")
    chosen = _choose(splits[split], opts.get("mteb_languages"))
    if not chosen:
        raise IngestError(src.path, f"task {task}: no subset matches languages {opts.get('mteb_languages')} "
                                    f"(has {sorted(splits[split])})")
    for text in _choice_notes(splits, split, chosen, opts):
        src.note(text)
    mains, metrics, main_name = [], {}, None
    for s in chosen:
        block = splits[split][s][1]
        if "main_score" in block and isinstance(block["main_score"], (int, float)):
            name, value = _main_of(block)
        else:
            name, value = _main_of(block)
        if value is None:
            raise IngestError(src.path, f"task {task}, split {split}, subset {s}: no main score and no known task-type metric")
        main_name = main_name or name
        mains.append(float(value))
        for k, v in _flat(block).items():
            metrics.setdefault(k, []).append(float(v))
    value = sum(mains) / len(mains)
    meta = {"harness": "mteb", "split": split, "subsets": chosen, "main_metric": main_name,
            "mteb_version": doc.get("mteb_version"), "dataset_revision": doc.get("dataset_revision")}
    mmeta = dict(meta_file)
    if revision:  # the folder's revision names the results (model_meta.json says the same)
        mmeta["revision"] = revision
    bench = MTEB_BENCHMARK
    if is_mair(doc):  # another evaluation than MTEB's task of the same name: never the same cell
        bench = MAIR_BENCHMARK
        meta["suite"] = "MAIR"
        if isinstance(doc.get("mteb_mair_domain"), str):
            meta["mair_domain"] = doc["mteb_mair_domain"]
        src.note(MAIR_NOTE)
    elif is_rteb(doc):  # RTEB's evaluator, not MTEB's: its AILACasedocs is not MTEB's AILACasedocs
        bench = RTEB_BENCHMARK
        meta["suite"] = "RTEB"
        src.note(RTEB_NOTE)
    experiment = experiment_of(src.path)
    if experiment is not None:  # settings other than the model's defaults: never the default run's cell
        # variant_of as other adapters' variants (a model stored at this experiment only is shown by its name);
        # non_default: beside the model's default run it keeps its own name, never the default run's cells.
        mmeta.update({"experiment": experiment, "experiment_of": model, VARIANT_OF: model, NON_DEFAULT_VARIANT: True})
        model = variant_name(model, experiment)
        src.note(EXPERIMENT_NOTE)
    aggregate = bench == MTEB_BENCHMARK and str(task) in AGGREGATE_TASKS
    if aggregate:
        src.note(f"task {task} stored as an aggregate (mteb defines it as the mean of its sub-tasks)")
    out = [ResultRecord(model=model, benchmark=bench, dataset=str(task), metric="main_score", value=value,
                        higher_is_better=True, task=str(task), primary=True, model_metadata=mmeta,
                        dataset_metadata=meta, aggregate=aggregate, **signed_scale(main_name))]
    for k, vals in metrics.items():
        if len(vals) == len(chosen) and k != "main_score":
            out.append(ResultRecord(model=model, benchmark=bench, dataset=str(task), metric=k,
                                    value=sum(vals) / len(vals), higher_is_better=True, task=str(task), primary=False,
                                    model_metadata=mmeta, dataset_metadata=meta, aggregate=aggregate, **signed_scale(k)))
    return out


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="mteb",
        # 2: the model and revision the model_meta.json beside a file names (API models' folders 1, 2);
        # 3: an experiment run (<revision>/experiments/<name>/) is its own model, "org/model (name)";
        # 4: ... a variant of the model (variant_of), at non-default settings
        # 5: p-MRR (instruction retrieval) on [-1, 1] with its 0 as the baseline, not a proportion
        # 6: correlations (STS, summarisation: cosine_spearman, pearson, ...) on [-1, 1] likewise
        revision="6",
        description="MTEB task results: legacy <model>/<Task>.json (mteb 0.0.x-1.10) and current "
                    "<model>/<revision>/<Task>.json (scores per split and subset); the task's main score. "
                    "MAIR's and RTEB's results in the same folders are stored as benchmarks mair and rteb",
        can_handle=can_handle,
        read=read,
    )
