"""lm-evaluation-harness result files, v0.3 and v0.4.

v0.3: ``{"results": {task: {"acc": .., "acc_stderr": ..}}, "versions": .., "config": {"model_args", "num_fewshot"}}``
(a file with ``results`` and ``versions`` but no ``config`` names no model: claimed, and refused with that reason).
v0.4: ``{"results": {task: {"acc,none": .., "acc_stderr,none": .., "alias": ..}}, "groups", "group_subtasks",
"n-shot", "n-samples", "higher_is_better", "config": {"model_args", ...}, "model_name", ...}``.

Model naming: ``pretrained=`` (or ``model=``/``engine=``/``path=``) from
``config.model_args``, with ``@<revision>`` when a revision is given and
``+peft=<adapter>`` (or ``+delta=<weights>``) when the run loaded adapter or delta
weights on top. Other arguments (dtype, trust_remote_code, ...) go into the
model's metadata. A
local-path ``pretrained=/x/y/7B`` is named after the result file's folder when
that folder's name ends with the path's last component (``llama-7B`` for
``.../LLaMA/7B``), else after the last component.

Benchmarks: MMLU subject tasks become benchmark ``mmlu`` with the canonical
subject name (:mod:`harness_ext.benchmarks`); the tasks of a group of the user's own
(a v0.4 ``group_subtasks`` group that is not one of lm-eval's, :func:`own_groups`)
become datasets of a benchmark named after the group; every other task is a dataset of
benchmark ``lm_eval``. Group rows (v0.4 ``groups`` / ``group_subtasks`` keys) are
aggregates of their subtasks: stored with ``kind='aggregate'`` (a prediction target
that never enters a subset), ``mmlu`` and its four categories under benchmark ``mmlu``. A group
the file lists without a score (``{" ": " ", "alias": ...}``) is stored as the mean of its tasks weighted
by their sizes, when they share one metric (:func:`_unscored_groups`). A group's rows keep its direct members
(``group_subtasks``: tasks and subgroups) in their dataset metadata (``members``), so ``reduce --items`` can take a
group's tasks by its name; a member list that is not a list of distinct names, is longer than 5,000 or reaches its own
group is said in the file's notes and not kept (:func:`~harness_ext.adapters.lm_eval_groups.group_members`). A group
left without a score has no row; its members carry its member list instead (``in_groups``, :func:`rowless_groups`).

Chance level: a multiple-choice task whose ``configs`` entry lists its answer
choices literally (``doc_to_choice: ["(A)", "(B)", "(C)", "(D)"]``) has chance
1 / choices for ``acc`` and ``acc_norm``, from the file itself; other tasks take
:func:`harness_ext.benchmarks.chance_baseline` (and the matrix's table).

Primary metric (one per dataset): the first of :data:`PRIMARY_ORDER` the task
reports (``acc`` before ``acc_norm``, as lm-eval's own tables lead with it), else
an ``X_acc`` reported beside ``X_max`` (TruthfulQA generation's ``bleu_acc``), else
the first metric the task's ``higher_is_better`` block lists (its ``metric_list``
order), else the first in the results block. ``--metric`` selects the others.

Missing values: a metric whose value is null or a string that is no number (``"N/A"``: lm-eval
could not compute it) is not a result and is left out, the file's other metrics kept (a task whose
every metric is null is left out); a number written as a string (``"0.53"``) is read as that number
(:func:`~harness_ext.adapters.lm_eval_values.drop_missing`). When a task's primary metric is left out, its next
metric is primary. RULER's ``-1`` for a sequence length it ran no samples at is no result either.

Sizes: each result's ``n_samples`` is the documents it was scored on (``n-samples`` ``effective``). A task run on
part of its documents (``--limit``: ``effective`` below ``original``) also keeps its full number of documents in
its dataset metadata (``n_documents``), which ``reduce --items`` draws from; a run of the whole task stores nothing
more. Counts that are no counts (not integers, negative, ``original`` below ``effective``) are not kept, said in
the file's notes.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain
from pathlib import PurePosixPath
from typing import Optional

from harness_ext.benchmarks import MMLU_BENCHMARK, chance_baseline, mmlu_subject
from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
from harness_ext.report import listed
from harness_ext.store.lm_eval_tasks import MEMBERS, N_DOCUMENTS
from harness_ext.store.rows import ResultRows, kind
from harness_ext.types import Adapter, SourceFile

from .lm_eval_groups import (group_members, inline_dataset, inline_groups, note_inline, note_members,  # noqa: F401
                             note_nowhere, own_groups, rowless_groups)  # (own_groups: callers import it from here)
from .lm_eval_sizes import _count, _note_limited, full_size
from .lm_eval_values import PLAIN_NUMBERS, drop_missing

LM_EVAL_BENCHMARK = "lm_eval"
#: Metric preferred as a dataset's primary one, in order.
PRIMARY_ORDER = ("acc", "exact_match", "em", "f1", "mcc", "acc_norm", "bleu", "word_perplexity", "perplexity")
#: Metrics where lower is better, used when the file does not say: lm-eval registers each of its own with
#: ``higher_is_better=False`` (``brier_score`` among them); ``wer``/``cer`` are error rates tasks list by name.
LOWER_IS_BETTER = frozenset({"perplexity", "word_perplexity", "byte_perplexity", "bits_per_byte", "ter",
                             "brier_score", "wer", "cer"})
_MODEL_KEYS = ("pretrained", "model", "engine", "path", "peft")
#: model_args that change the weights evaluated (lm-eval's HFLM ``peft=`` adapter, ``delta=`` weights).
_WEIGHT_KEYS = ("peft", "delta")
_BLOCK_META_KEYS = frozenset({"alias", "samples", "name", "sample_len", "sample_count"})
#: Local folder names that name a training step or a stage rather than a model (Hugging Face Trainer's
#: ``checkpoint-<step>``, Megatron's ``global_step<n>``, ``iter_<n>``, ``final``...): the parent folder is kept too.
_GENERIC_LEAF = re.compile(
    r"^(?:(?:checkpoint|ckpt|step|global_step|iter|iteration|epoch)[-_]?\d+|final|latest|last|best|merged|hf|"
    r"huggingface|model|export|output|checkpoint)$", re.IGNORECASE)


def parse_model_args(model_args) -> dict:
    """``"pretrained=x,revision=y"`` -> ``{"pretrained": "x", "revision": "y"}`` (dicts pass through)."""
    if isinstance(model_args, dict):
        return {str(k): v for k, v in model_args.items()}
    out = {}
    for part in str(model_args or "").split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def model_name(config: dict, path, fallback: Optional[str] = None) -> tuple:
    """``(name, metadata)`` of the evaluated model from an lm-eval ``config`` block."""
    args = parse_model_args(config.get("model_args"))
    key = next((k for k in _MODEL_KEYS if args.get(k)), None)
    # A results file's top-level ``model_name`` is text when lm-eval wrote it; anything else names no model.
    base = args[key] if key else fallback if isinstance(fallback, str) else None
    if not base:
        raise IngestError(path, "config.model_args names no model (no pretrained=, model= or engine=)")
    if not isinstance(base, str):  # model_args recorded as a mapping holds any JSON value
        raise IngestError(path, f"config.model_args {key} is a {type(base).__name__}, not a model's name")
    if base.startswith(("/", "./", "../", "~")):
        local = PurePosixPath(base.rstrip("/"))
        leaf = local.name
        folder = PurePosixPath(str(path)).parent.name
        if folder.lower().endswith(leaf.lower()):
            base = folder
        elif _GENERIC_LEAF.match(leaf) and local.parent.name not in ("", ".", ".."):
            # A trainer's ``checkpoint-1000`` (or ``final``) names a step, not a model: two runs' checkpoints
            # of one step would otherwise land in one row and be reported as conflicts.
            base = f"{local.parent.name}/{leaf}"
        else:
            base = leaf
    revision = args.get("revision")
    name = f"{base}@{revision}" if revision and revision != "main" else base
    # A PEFT adapter or delta weights on top of the base make another model: without them in the
    # name, runs of several fine-tuning epochs would land in one row and be reported as conflicts.
    for key in _WEIGHT_KEYS:
        if args.get(key) and args[key] != base:
            name += f"+{key}={args[key]}"
    meta = {k: v for k, v in args.items() if k not in _MODEL_KEYS and k not in _WEIGHT_KEYS and k != "revision"}
    meta["harness_model_type"] = config.get("model")
    if config.get("model_num_parameters"):
        meta["num_parameters"] = config["model_num_parameters"]
    return name, meta


_MMLU_GROUPS = frozenset({"mmlu", "mmlu_humanities", "mmlu_stem", "mmlu_social_sciences", "mmlu_other"})


_DATASET_FOR: dict = {}


def _dataset_for(task: str) -> tuple:
    try:
        return _DATASET_FOR[task]
    except KeyError:
        if len(_DATASET_FOR) > 100_000:
            _DATASET_FOR.clear()
        out = _DATASET_FOR[task] = _dataset_for_uncached(task)
        return out


def _dataset_for_uncached(task: str) -> tuple:
    subject = mmlu_subject(task)
    if subject:
        return MMLU_BENCHMARK, subject
    if task in _MMLU_GROUPS:
        return MMLU_BENCHMARK, task
    return LM_EVAL_BENCHMARK, task


def _primary_metric(metrics, listed=()) -> Optional[str]:
    for m in PRIMARY_ORDER:
        if m in metrics:
            return m
    # TruthfulQA's generation task reports each similarity as X_max (the raw score, BLEU and ROUGE on
    # 0-100), X_diff (true minus false reference, signed) and X_acc (share of answers closer to a
    # true reference): its metric_list leads with bleu_max, a score of no fixed scale; X_acc is the
    # accuracy the TruthfulQA paper reports for these metrics.
    for m in metrics:
        base, comma, filt = m.partition(",")
        if base.endswith("_acc") and f"{base[:-4]}_max{comma}{filt}" in metrics:
            return m
    for m in listed:  # the task's higher_is_better block, in its metric_list order
        hit = next((x for x in metrics if x.split(",")[0] == m), None)
        if hit:
            return hit
    return next(iter(metrics), None)


def _task_configs(doc: dict, model_args) -> dict:
    """``{task: {"config", "config_source"}}`` from a v0.4 ``configs`` block, without the run's own metadata."""
    from harness_ext.store.lm_eval_tasks import clean_config

    configs = doc.get("configs")
    if not isinstance(configs, dict):
        return {}
    args = parse_model_args(model_args)
    out = {}
    for task, cfg in configs.items():
        if isinstance(cfg, dict):
            config, source = clean_config(cfg, args)
            out[task] = {"config": config, "config_source": source}
    return out


#: Metrics a multiple-choice chance level applies to (lm-eval's loglikelihood accuracy, raw and length-normalised).
_CHOICE_METRICS = frozenset({"acc", "acc_norm"})


def _task_choices(doc: dict) -> dict:
    """``{task: number of answer choices}`` of the multiple-choice tasks whose ``configs`` entry lists them.

    Only a literal ``doc_to_choice`` list counts: a template (``"{{choices.text}}"``) or a
    function gives each question its own choices, so no single chance level follows from it.
    The file's own list is what was run, so it is trusted over a table keyed by task name
    (the Open LLM Leaderboard's BBH variants do not always have the original's options).
    """
    configs = doc.get("configs")
    if not isinstance(configs, dict):
        return {}
    out = {}
    for task, cfg in configs.items():
        if not isinstance(cfg, dict) or cfg.get("output_type") != "multiple_choice":
            continue
        choices = cfg.get("doc_to_choice")
        if isinstance(choices, list) and len(choices) >= 2 and all(isinstance(c, (str, int, float)) for c in choices):
            out[task] = len(choices)
    return out


def _rows(path, results: dict, *, v04: bool, model: str, model_meta: dict, default_shots, doc: dict,
          configs: Optional[dict] = None, choices: Optional[dict] = None, members: Optional[dict] = None) -> ResultRows:
    """The rows of a results block (``members``: each group's direct members its rows keep, :func:`group_members` of
    a results file lm-eval wrote; the readers of printed tables and model cards rebuild ``group_subtasks`` from the
    rows they show, which need not be all of a group's, so theirs are not kept)."""
    from harness_ext.store.lm_eval_tasks import CONFIG_KEY

    configs = configs or {}
    choices = choices or {}
    n_shot = doc.get("n-shot") or {}
    n_samples = doc.get("n-samples") or {}
    hib = doc.get("higher_is_better") or {}
    versions = doc.get("versions") if isinstance(doc.get("versions"), dict) else {}
    # group_subtasks lists leaf tasks with an empty list too; only keys with subtasks are groups.
    subs = doc.get("group_subtasks") if isinstance(doc.get("group_subtasks"), dict) else {}  # else noted
    groups = set(doc.get("groups") or {}) | {k for k, v in subs.items() if v}
    own = own_groups(doc.get("group_subtasks")) if groups else {}
    inline = inline_groups(doc.get("group_subtasks")) if groups else {}
    members = members if groups else None
    blocks = dict(results)
    for g, block in (doc.get("groups") or {}).items():
        blocks.setdefault(g, block)
    out = ResultRows(model, model_meta)
    kinds, values, stderrs, shots_col, ns_col, md_col = (out.kinds, out.values, out.stderrs, out.num_fewshot,
                                                          out.n_samples, out.dataset_metadata)
    default_shots = default_shots if isinstance(default_shots, int) and not isinstance(default_shots, bool) else None
    plain_meta: dict = {}  # version -> the metadata dict of tasks without a configuration (shared: nothing pops it)
    for task, block in blocks.items():
        if block.__class__ is not dict:
            if not isinstance(block, dict):
                raise IngestError(path, f"results[{task!r}] is {type(block).__name__}, expected an object of metrics")
        listed = hib.get(task) if hib else None
        value_keys, stderr_keys, pair = _template(task, tuple(block), v04, listed if isinstance(listed, dict) else {},
                                                  choices.get(task), own.get(task) if own else None,
                                                  inline.get(task) if inline else None)
        n = len(value_keys)
        if not n:
            continue
        shots = n_shot.get(task, default_shots) if n_shot else default_shots
        if shots is not default_shots:
            shots = _shot_count(path, shots, f"n-shot of {task!r}")
        ns = n_samples.get(task) if n_samples else None
        full = None
        if ns is not None:
            full = full_size(ns) if isinstance(ns, dict) else None
            ns = ns.get("effective") if isinstance(ns, dict) else ns
            ns = ns if _count(ns) else None  # a negative, fractional or text count is none
        version = versions.get(task)
        if task in configs:
            # One metadata dict per task, shared by its metrics' rows (pop_configs takes the config once).
            dmeta = {"harness": "lm-evaluation-harness", "version": version, CONFIG_KEY: configs[task]}
            if full:
                dmeta[N_DOCUMENTS] = full
        elif full:  # a --limit run: the task's own dict, with its full number of documents
            dmeta = {"harness": "lm-evaluation-harness", "version": version, N_DOCUMENTS: full}
        else:
            try:
                dmeta = plain_meta[version]
            except (KeyError, TypeError):
                dmeta = {"harness": "lm-evaluation-harness", "version": version}
                if version.__class__ in (str, int, float, _NONE):
                    plain_meta[version] = dmeta
        if members and task in members:  # a group: its direct members go with it (reduce --items takes its tasks)
            dmeta = {**dmeta, MEMBERS: members[task]}
        kinds += pair[task in groups]
        values += map(block.__getitem__, value_keys)  # C-level passes over the block
        stderrs += map(block.get, stderr_keys)  # a missing stderr's key is None: never a JSON key
        shots_col += [shots] * n
        ns_col += [ns] * n
        md_col += [dmeta] * n
    return out


_TEMPLATES: dict = {}
_NONE = type(None)


def _template(task: str, keys: tuple, v04: bool, listed: dict, n_choices: Optional[int] = None,
              group: Optional[str] = None, parent: Optional[str] = None) -> tuple:
    """``(value keys, stderr keys (None: no stderr), (kinds, kinds as aggregates))`` of a task block with these
    keys, one per metric (:func:`harness_ext.store.rows.kind`: benchmark, dataset, metric, direction, chance
    baseline, primary). ``n_choices``: the task's answer choices as its file lists them (:func:`_task_choices`).

    Everything about a block but its numbers follows from its task and keys, and a 900-file ingest
    sees the same few hundred (task, keys) 130,000 times: worked out once each.
    """
    try:
        key = (task, keys, v04, tuple(listed.items()), n_choices, group, parent)
        return _TEMPLATES[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable higher_is_better entry: not remembered
        key = None
    values, stderrs = {}, {}
    # lm-eval >= 0.4.8 also writes "name" and "sample_len" into each block; where metrics are
    # "metric,filter" keys, a key without a comma is bookkeeping, not a metric.
    comma_keys = v04 and any("," in k for k in keys)
    for k in keys:
        # A group without an aggregate is written {" ": " ", "alias": ...} (lm-eval's
        # consolidate_group_results): a table spacer, not a metric, and no reason to refuse the file.
        if k in _BLOCK_META_KEYS or (comma_keys and "," not in k) or not k.strip():
            continue
        metric, _, filt = k.partition(",") if v04 else (k, "", "")
        if metric.endswith("_stderr"):
            stderrs[(metric[: -len("_stderr")], filt)] = k
        else:
            values[(metric, filt)] = k
    # Keep the filter in the name only when it is not the default, so acc,none is "acc".
    names = {mf: mf[0] if mf[1] in ("", "none") else f"{mf[0]},{mf[1]}" for mf in values}
    primary = _primary_metric(list(names.values()), listed)
    benchmark, dataset = _dataset_for(task)
    if group and benchmark == LM_EVAL_BENCHMARK:  # a task of the user's own group: that group is its benchmark
        benchmark = group
    elif parent and benchmark == LM_EVAL_BENCHMARK:  # a group named for its place in lm-eval's group
        dataset = inline_dataset(parent, dataset)
    metrics = []
    for mf, value_key in values.items():
        metric, base_metric = names[mf], mf[0]
        higher = listed.get(base_metric)
        if higher is None:
            higher = base_metric not in LOWER_IS_BETTER
        if n_choices and base_metric in _CHOICE_METRICS:
            rb, rb_src = 1.0 / n_choices, f"{n_choices} answer choices (the file's doc_to_choice)"
        else:
            rb, rb_src = chance_baseline(task, base_metric)
        fields = dict(benchmark=benchmark, dataset=dataset, metric=metric, higher_is_better=bool(higher),
                      random_baseline=rb, baseline_source=rb_src, primary=metric == primary, task=task)
        metrics.append((value_key, stderrs.get(mf), kind(**fields, aggregate=False), kind(**fields, aggregate=True)))
    value_keys, stderr_keys, plain, agg = (tuple(c) for c in zip(*metrics)) if metrics else ((),) * 4
    out = (value_keys, stderr_keys, (plain, agg))
    if key is not None:
        if len(_TEMPLATES) > 100_000:
            _TEMPLATES.clear()
        _TEMPLATES[key] = out
    return out


def _shot_count(path, v, where: str):
    """A shot count as the file gives it (None: not recorded); anything else is refused, not read as unknown."""
    if v is None or (v.__class__ is int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    raise IngestError(path, f"{where} is {v!r}, not a shot count")


def _is_v04(doc) -> bool:
    # A v0.4 file without its config block is still claimed, so read_v04 can say what is missing.
    return isinstance(doc, dict) and isinstance(doc.get("results"), dict) and (
        "n-shot" in doc or "group_subtasks" in doc or "higher_is_better" in doc or "model_name" in doc
        or _comma_key(doc["results"])
    )


def _comma_key(results: dict) -> bool:
    """Whether any block has a "metric,filter" key (one C-level join of every block's keys)."""
    blocks = results.values()
    if set(map(type, blocks)) <= {dict}:
        try:
            return "," in "\0".join(chain.from_iterable(blocks))
        except TypeError:  # a key that is not a string (not parsed JSON)
            pass
    return any(isinstance(b, dict) and "," in "\0".join(map(str, b)) for b in blocks)


def _is_v03(doc) -> bool:
    return _v03_shape(doc) and not _is_v04(doc)


def _v03_shape(doc) -> bool:
    """The v0.3 layout's keys (a v0.4 file has them too: ask :func:`_is_v04` first)."""
    return (isinstance(doc, dict) and isinstance(doc.get("results"), dict) and isinstance(doc.get("config"), dict)
            and "model_args" in doc["config"]) or _v03_without_config(doc)


def _v03_without_config(doc) -> bool:
    """A v0.3 ``{"results", "versions"}`` file without its ``config`` (lm-eval's own expected-results files,
    a run's JSON cut down by hand): claimed, so :func:`read_v03` can say what is missing instead of the
    file being passed over as no result file at all."""
    if not (isinstance(doc, dict) and "config" not in doc and "config_general" not in doc):
        return False
    results, versions = doc.get("results"), doc.get("versions")
    return (isinstance(results, dict) and isinstance(versions, dict) and bool(results) and set(versions) <= set(results)
            and all(isinstance(b, dict) for b in results.values()))


def _sniff(src: SourceFile) -> bool:
    return src.suffix == ".json" and b'"results"' in src.head


def _version(src: SourceFile) -> Optional[str]:
    """``"v03"``, ``"v04"`` or None, decided once per file (both adapters ask; v0.4 is a scan of every block)."""
    try:
        return src._lm_eval_version
    except AttributeError:
        pass
    doc = src.try_json() if _sniff(src) else None
    v04 = _is_v04(doc)
    src._lm_eval_version = "v04" if v04 else "v03" if _v03_shape(doc) else None  # one scan of the blocks
    return src._lm_eval_version


def can_handle_v03(src: SourceFile) -> bool:
    return _version(src) == "v03"


def can_handle_v04(src: SourceFile) -> bool:
    return _version(src) == "v04"


def read_v03(src: SourceFile):
    doc = src.json()
    if _v03_without_config(doc):
        raise IngestError(src.path, "an lm-eval v0.3 results file without its 'config' object, so no model is "
                                    "named (config.model_args \"pretrained=...\"): not read; lm-eval writes it "
                                    "beside 'results' and 'versions'")
    config = doc["config"]
    model, meta = model_name(config, src.pathname)
    versions = doc.get("versions")
    shots = _shot_count(src.path, config.get("num_fewshot"), "config.num_fewshot")
    out = _rows_v03(doc["results"], model, meta, shots, versions)
    if out is None:
        out = _rows(src.path, doc["results"], v04=False, model=model, model_meta=meta,
                    default_shots=shots, doc={"versions": versions})
    return _check_proportions(drop_missing(out, src), src)


#: v0.3 files by the shape of their results (tasks and each block's keys): row layout and kinds, worked out once.
_FILE_TEMPLATES: dict = {}
#: ``{"harness", "version"}`` dataset metadata by version (an int, a str or None): nothing changes these dicts.
_VERSION_META: dict = {}
_PLAIN_VERSIONS = frozenset({int, str, _NONE})


def _rows_v03(results: dict, model, model_meta, default_shots, versions) -> Optional[ResultRows]:
    """:func:`_rows` of a v0.3 file in a few C-level passes, or None (the general path then reads it).

    A run of hundreds of checkpoints writes files of one shape: the same tasks, each block with the
    same keys. Everything but the numbers follows from that shape (:func:`_file_template`), so a file
    costs a lookup of its shape and one pass per column. Files with anything the general path treats
    specially (a block that is not an object, versions that are not plain ints or strings) go there.
    """
    blocks = tuple(results.values())
    if not blocks or set(map(type, blocks)) != {dict}:
        return None
    tasks = tuple(results)
    vers = list(map(versions.get, tasks)) if isinstance(versions, dict) else [None] * len(tasks)
    if not set(map(type, vers)) <= _PLAIN_VERSIONS:
        return None
    shape = (tasks, tuple(map(tuple, blocks)))
    try:
        tpl = _FILE_TEMPLATES[shape]
    except KeyError:
        tpl = _file_template(tasks, blocks)
        if len(_FILE_TEMPLATES) > 10_000:
            _FILE_TEMPLATES.clear()
        _FILE_TEMPLATES[shape] = tpl
    row_blocks, value_keys, stderr_keys, kinds = tpl
    n = len(kinds)
    if not n:
        return None
    metas = list(map(_VERSION_META.get, vers))
    if None in metas:
        for i, v in enumerate(vers):
            if metas[i] is None:
                metas[i] = _VERSION_META.setdefault(v, {"harness": "lm-evaluation-harness", "version": v})
        if len(_VERSION_META) > 100_000:
            _VERSION_META.clear()
    shots = default_shots if isinstance(default_shots, int) and not isinstance(default_shots, bool) else None
    by_row = row_blocks(blocks)
    out = ResultRows(model, model_meta)
    out.kinds = list(kinds)
    out.values = list(map(dict.__getitem__, by_row, value_keys))
    out.stderrs = list(map(dict.get, by_row, stderr_keys))  # no stderr: key None, never a JSON key
    out.num_fewshot = [shots] * n
    out.n_samples = [None] * n
    out.dataset_metadata = list(row_blocks(metas))
    out.has_configs = False
    return out


def _file_template(tasks: tuple, blocks: tuple) -> tuple:
    """``(rows' blocks getter, value keys, stderr keys, kinds)`` of a v0.3 file's results, row by row as
    :func:`_rows` orders them (task by task, each task's metrics as :func:`_template` gives them)."""
    from operator import itemgetter

    idx, values, stderrs, kinds = [], [], [], []
    for i, (task, block) in enumerate(zip(tasks, blocks)):
        value_keys, stderr_keys, pair = _template(task, tuple(block), False, {})
        idx += [i] * len(value_keys)
        values += value_keys
        stderrs += stderr_keys
        kinds += pair[False]
    get = itemgetter(*idx) if len(idx) != 1 else (lambda seq, _i=idx[0]: (seq[_i],))
    return get, tuple(values), tuple(stderrs), tuple(kinds)


@lru_cache(maxsize=None)
def _is_proportion(metric: str) -> bool:
    """Whether lm-eval reports ``metric`` as a proportion in [0, 1] (``acc``, ``acc_norm``, ``exact_match``)."""
    return metric.split(",")[0].strip().lower().startswith(("acc", "exact_match"))


def _check_proportions(out: ResultRows, src: SourceFile) -> ResultRows:
    """Refuse a file with an ``acc`` or ``exact_match`` outside [0, 1]: lm-eval writes them as proportions,
    so such a value is a broken or edited file, and one value above 1 would make the column read as percentages
    for every model."""
    for k, v in zip(out.kinds, out.values):
        # Not finite, or an integer too large for a float: the record checks say so (a finite float such as 1e308
        # is refused here, else it was stored as a proportion).
        if (v.__class__ in PLAIN_NUMBERS and (v < 0.0 or v > 1.0) and _is_proportion(k.metric)
                and (v - v == 0.0 if v.__class__ is float else -1e300 < v < 1e300)):
            raise IngestError(src.path, f"task {k.dataset!r}: {k.metric} = {v!r} is outside [0, 1]; lm-eval "
                                        "reports it as a proportion (0.62 for 62%)")
    return out


def read_v04(src: SourceFile):
    doc = src.json()
    if "harness_ext_prediction" in doc:
        raise IngestError(src.path, "a harness-ext prediction (harness-ext predict wrote it), not a measured result")
    config = doc.get("config")
    if not isinstance(config, dict):
        raise IngestError(src.path, "an lm-eval v0.4 results file without its 'config' object (the model and its "
                                    "arguments): not read")
    model, meta = model_name(config, src.path, fallback=doc.get("model_name"))
    _note_limited(doc, src)
    note_inline(doc, src)
    members, dropped = group_members(doc.get("group_subtasks"))  # once per file: every step below reads them
    note_members(doc, src, dropped)
    out = _unscored_groups(drop_missing(_rows(
        src.path, doc["results"], v04=True, model=model, model_meta=meta,
        default_shots=_shot_count(src.path, config.get("num_fewshot"), "config.num_fewshot"),
        doc=doc, configs=_task_configs(doc, config.get("model_args")), choices=_task_choices(doc), members=members),
        src), doc, src, members=members)
    rowless, odd, nowhere = rowless_groups(out, members)
    note_nowhere(nowhere, src)
    if rowless:
        src.note(f"members of {listed(rowless, 8)} (no row: no score) kept with their tasks (reduce --items takes them)")
    if odd:
        src.note(f"{len(odd)} group name{'s' * (len(odd) != 1)} of group_subtasks blank or longer than 300 characters: "
                 "no row and no members kept")
    return _check_proportions(out, src)


def _unscored_groups(out: ResultRows, doc: dict, src: SourceFile, members: Optional[dict] = None) -> ResultRows:
    """``out`` with a score for each group the file lists without one, where its tasks make it.

    lm-eval writes a group whose YAML has no ``aggregate_metric_list`` as ``{" ": " ", "alias": ...}``: the
    leaderboard's ``leaderboard_bbh``, ``leaderboard_math_hard``, ... in runs of early 2025. Their YAMLs now
    aggregate each metric over the group's tasks weighted by size (``weight_by_size: true``), and the Open LLM
    Leaderboard's BBH and MATH Level 5 are that mean, so without it ``predict`` could not read them from such a run.
    A group whose tasks all have a size (``n-samples``) and one or more metrics in common gets, per metric, that
    mean as its aggregate; the file's notes name the groups computed and those left without a score.
    """
    subs = doc.get("group_subtasks")
    if not isinstance(subs, dict):
        return out
    scored = {k.task for k in out.kinds}
    rows: dict = {}  # task -> {metric: value}, and its shot count and size
    for k, v, n, ns in zip(out.kinds, out.values, out.num_fewshot, out.n_samples):
        if not k.aggregate:
            rows.setdefault(k.task, ({}, n, ns))[0][k.metric] = v
    own, inline, made, left = None, None, [], []
    members = members or {}
    for group, tasks in subs.items():
        if not isinstance(tasks, list) or not tasks or group in scored:
            continue
        parts = [rows.get(t) if t.__class__ is str else None for t in tasks]
        common = [m for m in parts[0][0] if all(m in p[0] for p in parts)] if all(parts) else []
        if not common or not all(p[2] for p in parts):
            left.append(group)  # a task without a score or a size, no metric in common, a group of groups
            continue
        if own is None:  # once per file, for the groups that need a score made
            own, inline = own_groups(subs), inline_groups(subs)
        kinds = _template(group, tuple(m if "," in m else f"{m},none" for m in common), True, {}, None,
                          own.get(group), inline.get(group))[2][1]
        sizes = [p[2] for p in parts]
        shots = {p[1] for p in parts}
        shot = shots.pop() if len(shots) == 1 else None  # tasks run at several shot counts: none is the group's
        for m, k in zip(common, kinds):
            out.kinds.append(k)
            out.values.append(sum(p[0][m] * n for p, n in zip(parts, sizes)) / sum(sizes))
            out.stderrs.append(None)
            out.num_fewshot.append(shot)
            out.n_samples.append(sum(sizes))
            out.dataset_metadata.append({"harness": "lm-evaluation-harness", "version": None,
                                         **({MEMBERS: members[group]} if group in members else {})})
        made.append(f"{group} ({', '.join(common)}; {len(tasks)} tasks)")
    if made:
        out._records = None
        src.note(f"{len(made)} group{'s' * (len(made) != 1)} without a score in the file stored as the mean of "
                 f"{'their' if len(made) != 1 else 'its'} tasks weighted by their sizes (as lm-eval's group YAMLs "
                 f"aggregate them): {listed(made, 8)}")
    if left:
        src.note(f"{len(left)} group{'s' * (len(left) != 1)} without a score in the file and none computed (tasks "
                 f"without a score or size, or no metric in common): {listed(left, 8)}")
    return out


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="lm-eval-v03",
        description="lm-evaluation-harness v0.3 results JSON (results/versions/config)",
        can_handle=can_handle_v03,
        read=read_v03,
        revision="3",  # 3: SuperGLUE's cb and wic have their chance levels (1/3, 1/2)
    )
    yield Adapter(
        name="lm-eval-v04",
        description="lm-evaluation-harness v0.4 results_*.json (metric,filter keys, groups, n-shot, n-samples)",
        can_handle=can_handle_v04,
        read=read_v04,
        # 7: the members of a group without a row (no score, no metric in common) carry its members (in_groups)
        # 6: a group keeps its direct members (group_subtasks) in its dataset metadata
        # 5: a --limit run's task keeps its full number of documents (n-samples original) in its dataset metadata
        revision="7",  # 4: RULER's -1 at a sequence length without samples left out; cb and wic's chance levels
    )
