"""Task configurations from results files, made into data a reduced folder can hold safely.

lm-eval v0.4 records each task's configuration in its results file, and ``reduce``
writes it back as ``<task>.yaml`` beside the group. lm-eval's YAML loader follows
``include:`` to any file, imports the Python module a ``!function`` names next to the
YAML that names it, and hands ``dataset_path`` / ``dataset_kwargs`` to ``datasets``,
which reads local paths and can run a dataset's own loading code. A results file is
written by whoever ran the evaluation, so its configuration is treated as data:

* only lm-eval 0.4's task keys (the fields of ``lm_eval.api.task.TaskConfig``) are
  kept, minus the two that only hold functions (``custom_dataset``, ``process_docs``);
  ``include``, ``class``, ``group`` and any other key are dropped;
* a value holding a ``!function`` reference, or a Jinja template outside the allow-list of
  :mod:`harness_ext.store.template_safety` (lm-eval renders templates without a sandbox, so a
  template reaching Python's internals runs code), is dropped;
* a value naming a local file must stay inside the reduced folder: an absolute path
  (the ingesting machine's, not portable), a home-folder path or one climbing out with
  ``..`` is dropped, as are ``cache_dir``, ``trust_remote_code``, ``storage_options`` and
  the credentials of ``dataset_kwargs``; only an absolute path inside a folder the user names
  as their own data (``reduce --local-data DIR``) is kept;
* ``datasets`` reads a relative local path from the folder ``lm_eval`` is run in, not from the
  YAML's: a ``dataset_path`` that is neither a Hub id nor a URL, and ``data_files`` / ``data_dir``
  beside a packaged builder (``json``, ``text``...), are dropped when relative (``text`` with
  ``data_files: '**'`` run from a home folder reads every file in it); so is the ``sql`` builder, and a
  builder left without data files (it would read every matching file of that folder);
  ``pandas`` (it unpickles its data files: code) is dropped too, as is a URL whose scheme is no remote location
  (fsspec's ``local://`` is the local disk; ``zip://``, ``tar://`` and a ``::`` chain open a local file);
* a metric lm-eval does not know is loaded with ``evaluate.load(name)``, which runs that
  metric's Python script: a ``metric_list`` naming a script (a path, ``user/metric`` on the
  Hugging Face Hub) or ``code_eval`` (it runs the task's test code) is dropped; ``generation_kwargs`` lose ``trust_remote_code`` and
  ``custom_generate`` (a Hub repository whose generation code ``transformers`` runs);
* a filter of ``filter_list`` whose ``regex_pattern`` (or ``regexes_to_ignore``) nests a repeat inside a repeat
  (``(a+)+$``: exponential time on an answer that almost matches, :mod:`harness_ext.store.regex_safety`) is
  dropped, the task's other filters kept; such a pattern in ``metric_list`` drops it. So is one that offers
  overlapping choices inside a repeat, refers back to a group, or puts overlapping repeats one after another;
* ``num_fewshot`` and ``repeats`` must be whole numbers up to 1,000 (a prompt of 10**9 examples, or every request
  run 10**9 times, hangs the run).
* a key older lm-eval releases refuse (``unsafe_code``, ``gen_prefix``, ``doc_to_image``, ``doc_to_audio``) is left
  out when it holds its "off" value, which newer releases record for every task (:func:`portable_config`), and
  named in the header, with the releases that refuse it, when it holds another.
* a ``tag`` named as the task itself, the group or another of its tasks is dropped (:func:`without_taken_tags`):
  lm-eval indexes the tag in that task's place and skips the task's own file.

Nothing is dropped silently: :func:`safe_task_config` returns every dropped key with
its reason, ``reduce`` counts them in the manifest's warnings and the task YAML's
header names them.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from pathlib import Path
from typing import Optional

#: The fields of lm-eval 0.4's ``TaskConfig`` (``lm_eval.api.task``): the keys a task YAML may hold.
LM_EVAL_TASK_FIELDS = frozenset({
    "task", "task_alias", "tag", "custom_dataset", "dataset_path", "dataset_name", "dataset_kwargs",
    "training_split", "validation_split", "test_split", "fewshot_split", "process_docs", "doc_to_text",
    "doc_to_target", "doc_to_image", "doc_to_audio", "unsafe_code", "doc_to_choice", "process_results",
    "use_prompt", "description", "target_delimiter", "fewshot_delimiter", "fewshot_config", "num_fewshot",
    "metric_list", "output_type", "generation_kwargs", "repeats", "filter_list", "should_decontaminate",
    "doc_to_decontamination_query", "gen_prefix", "metadata"})
#: Fields that only ever hold a function: a results file keeps at most its source text.
FUNCTION_FIELDS = frozenset({"custom_dataset", "process_docs"})
#: The keys written into a task YAML.
TASK_KEYS = LM_EVAL_TASK_FIELDS - FUNCTION_FIELDS
#: Why some keys outside :data:`TASK_KEYS` are dangerous, for the warning.
_KNOWN_REASONS = {
    "include": "it makes lm-eval read another YAML file (and the Python beside it)",
    "class": "it names a Python class lm-eval would import",
    "custom_dataset": "it holds a function (lm-eval would import code)",
    "process_docs": "it holds a function (lm-eval would import code)",
}
_NOT_A_KEY = "it is not a key of an lm-eval task configuration"
#: The reason an absolute local path is dropped.
ABSOLUTE = ("it is an absolute path on the machine that ran the evaluation, outside the folder (reduce --local-data "
            "DIR writes the paths inside DIR, a folder of your own data)")
#: Entries of mapping keys that describe the ingesting machine, hold its credentials or run code, never written.
_SUBKEYS_DROPPED = {
    "dataset_kwargs": {
        "cache_dir": "a cache folder of the machine that ran the evaluation",
        "trust_remote_code": "it lets the dataset run its own loading code",
        "storage_options": "file-system options (endpoints, credentials) that could send your Hugging Face token "
                           "elsewhere",
        "token": "a credential", "use_auth_token": "a credential"},
    "generation_kwargs": {
        "trust_remote_code": "it lets the model run its own code",
        "custom_generate": "it names a Hub repository whose generation code transformers runs"},
}
#: A metric name ``evaluate.load`` reads as a script to run: a path or a Hub repository (``user/metric``).
_METRIC_SCRIPT = re.compile(r"[/\\:]|^[.~]|\.py$", re.I)
#: Hugging Face ``evaluate`` metrics that run text as Python: ``code_eval`` executes the model's answer with the
#: task's own test code (the document's, so the dataset's author's) once ``HF_ALLOW_CODE_EVAL=1`` is set, as it is
#: for code benchmarks; lm-eval's own tasks call it only from their ``utils.py``.
_CODE_METRICS = frozenset({"code_eval"})
#: A ``!function`` reference written as text (PyYAML never turns a string back into a tag, but lm-eval users
#: copying the value would).
_FUNCTION_REF = re.compile(r"^\s*!function\b|^\s*!!python/")
#: A URL scheme (``file://`` is local and checked as a path).
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: The URL schemes kept as remote locations: the web, the Hugging Face Hub and the cloud stores ``datasets``
#: documents. ``datasets`` opens any other through fsspec, whose ``local://`` is the local file system and whose
#: ``zip://``, ``tar://``, ``reference://``, ``simplecache::``... open a local file named inside the URL.
REMOTE_SCHEMES = frozenset({"http", "https", "hf", "s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss"})
#: ``datasets``' packaged builders (2.x to 5.x): with one of them as ``dataset_path``, ``data_files`` and
#: ``data_dir`` are read from the folder ``lm_eval`` is run in.
PACKAGED_BUILDERS = frozenset({
    "arrow", "audiofolder", "cache", "conll", "csv", "eval", "fasta", "fastq", "genbank", "generator", "harbor",
    "hdf5", "iceberg", "imagefolder", "json", "lance", "meshfolder", "mmcif", "niftifolder", "pandas", "parquet",
    "pdb", "pdffolder", "spark", "sql", "text", "tsfile", "videofolder", "vortex", "webdataset", "xml"})
#: A Hugging Face Hub dataset id (``name`` or ``namespace/name``); any other relative ``dataset_path`` is a folder.
_HUB_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)?$")
#: Why a relative local path is dropped: ``datasets`` resolves it against the working folder, not the YAML's.
RELATIVE = ("it is a local path relative to the folder lm_eval is run in (datasets reads it from there, not from "
            "this folder)")
#: The ``dataset_kwargs`` entries that name data files.
_DATA_SUBKEYS = ("data_files", "data_dir")


def _walk(value, where: str):
    """``(where, string)`` for every string inside ``value`` (dict keys included)."""
    stack = [(value, where)]
    while stack:
        v, w = stack.pop()
        if isinstance(v, str):
            yield w, v
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str):
                    yield f"{w} (a key)", k
                stack.append((x, f"{w}.{k}"))
        elif isinstance(v, (list, tuple)):
            stack.extend((x, f"{w}[{i}]") for i, x in enumerate(v))


def code_reference(value, where: str) -> Optional[str]:
    """Why ``value`` (anywhere inside it) is code rather than data, or None."""
    from .template_safety import template_problem

    for w, s in _walk(value, where):
        if _FUNCTION_REF.match(s):
            return f"{w} is a function reference ({s.strip()[:60]!r}), not data"
        why = template_problem(s)
        if why:
            return f"{w} {why}"
    return None


def local_path_problem(value: str) -> Optional[str]:
    """Why the path ``value`` would reach outside the reduced folder, or None if it stays inside (or is remote).

    A remote location (a scheme of :data:`REMOTE_SCHEMES`: ``hf://``, ``https://``, ``s3://``...) and a relative
    path without ``..`` (a Hugging Face hub id such as ``cais/mmlu`` looks like one) are kept; an absolute path,
    a Windows drive or share, a home-folder path, ``..``, ``file://``, any other scheme (fsspec's ``local://``,
    ``zip://``...) and a chain of file systems (``zip://x::/home/me/a.zip``) are not.
    """
    if value.partition("::")[0].strip() and "::" in value:  # a bare "::" is a CSV separator, not a chain
        return ("it chains file systems with '::' (fsspec), which opens what the last link names: a file on the "
                "machine that runs lm-eval")
    m = _URL.match(value)
    if m:
        scheme = m.group(1).lower()
        if scheme in REMOTE_SCHEMES:
            return _private_host(value) if scheme in ("http", "https") else None
        if scheme != "file":
            return (f"it names fsspec's {scheme}:// file system, not a remote location datasets downloads (local:// "
                    "is the local disk; zip://, tar:// and others open a local file)")
        value = value[m.end():] or "/"
    if "\x00" in value:
        return "it holds a NUL character"
    if value.startswith("~"):
        return "it is a home-folder path of the machine that ran the evaluation"
    if _absolute(value) or ntpath.splitdrive(value)[0]:
        return ABSOLUTE
    if ".." in re.split(r"[\\/]", value):
        return "it climbs out of the folder with '..'"
    return None


def _private_host(url: str) -> Optional[str]:
    """Why the web address ``url`` points into the machine or network that runs lm-eval (a cloud VM's metadata
    service at 169.254.169.254 hands out its credentials), or None for a public host."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return "it is not a well-formed web address"
    try:
        private = not ipaddress.ip_address(host).is_global
    except ValueError:  # a name: one without a dot, or localhost, resolves inside the network; "0x7f.1" and
        # other numbers the resolver reads as an address are taken as private (a name resolving to one is not seen)
        private = ("." not in host or host.endswith((".localhost", ".local", ".internal")) or host == "localhost"
                   or re.fullmatch(r"[0-9a-fx.]+", host) is not None)
    return (f"it is a web address on the machine or network that runs lm-eval ({host or 'no host'}), not a public "
            "location") if private else None


def _paths_of(key: str, value) -> list:
    """The strings of ``value`` that lm-eval hands to ``datasets`` as local paths."""
    if key == "dataset_path":
        return [value] if isinstance(value, str) else []
    if isinstance(value, str):
        return [value]
    return [s for _, s in _walk(value, key)]


def local_data_folders(dirs, option: str = "local_data") -> list:
    """The folders of a user's own task data (``reduce --local-data``), each checked to be a folder before any
    work; ``option`` names them in the error."""
    from ..errors import HarnessExtError

    for d in dirs or ():
        if not Path(d).is_dir():
            raise HarnessExtError(f"{option} {d}: not a folder")
    return list(dirs or ())


def safe_task_config(config: dict, out_dir=None, local_data=()) -> tuple:
    """``(kept, dropped)``: the keys of ``config`` a task YAML may hold, and why each other one was dropped.

    Parameters
    ----------
    config : dict
        One ``configs[task]`` block of an lm-eval v0.4 results file (as kept at ingest).
    out_dir : path, optional
        The reduced folder: a relative path that remains must resolve inside it (symbolic
        links included). Without it the check is on the path's text alone.
    local_data : sequence of paths
        Folders of the user's own data (``reduce --local-data``): an absolute path inside
        one of them (after resolving symbolic links) is kept.

    Returns
    -------
    tuple
        ``kept`` (a new dict, the input untouched) and ``dropped``: a list of
        ``{"key", "reason"}`` in the order met, ``key`` a dotted path such as
        ``dataset_kwargs.data_files``.
    """
    kept, dropped = {}, []
    if not isinstance(config, dict):
        return kept, [{"key": "(configuration)", "reason": f"it is a {type(config).__name__}, not a mapping"}]
    for key, value in config.items():
        if not isinstance(key, str) or key not in TASK_KEYS:
            why = _KNOWN_REASONS.get(key, _NOT_A_KEY)
            dropped.append({"key": str(key), "reason": why})
            continue
        why = code_reference(value, key)
        if why is None and key in _SUBKEYS_DROPPED and isinstance(value, dict):
            value = _without_subkeys(key, value, dropped, out_dir, local_data, config.get("dataset_path"))
            if not value:
                continue
        elif why is None and key == "filter_list":
            value = _without_slow_filters(value, dropped)
            if not value:
                continue
        elif why is None and key == "metric_list":
            why = _metric_problem(value)
        elif why is None and key == "dataset_path":
            why = _dataset_path_problem(value, out_dir, local_data)
        elif why is None and key in _COUNT_LIMITS:
            why = _count_problem(key, value)
        if why is not None:
            dropped.append({"key": key, "reason": why})
            continue
        kept[key] = value
    _builder_without_files(kept, dropped)
    return kept, dropped


#: The largest shots and repeats kept: lm-eval's own tasks ask for at most 25 shots and 64 repeats. lm-eval runs
#: every request ``repeats`` times, and builds a prompt of ``num_fewshot`` examples: a results file's 10**9 would hang
#: the run or fill the memory.
_COUNT_LIMITS = {"num_fewshot": (0, 1000), "repeats": (1, 1000)}


def _count_problem(key: str, value) -> Optional[str]:
    """Why ``value`` is no count lm-eval can run for ``key`` (``num_fewshot``, ``repeats``), or None."""
    low, high = _COUNT_LIMITS[key]
    if value is None and key == "num_fewshot":  # lm-eval's own default: no shots set
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f"it is a {type(value).__name__}, not a whole number"
    if not low <= value <= high:
        shown = f"{value:,}" if abs(value) < 10 ** 30 else f"a number of {len(str(abs(value)))} digits"
        what = "build each prompt from that many examples" if key == "num_fewshot" else "run every request that many times"
        return f"it is {shown}, outside {low}..{high:,}: lm-eval would {what}"
    return None


def _builder_without_files(kept: dict, dropped: list) -> None:
    """Drop a packaged builder left without data files: ``datasets`` then reads every matching file of the folder
    ``lm_eval`` is run in (``json`` reads each JSON file there)."""
    if kept.get("dataset_path") not in PACKAGED_BUILDERS:
        return
    kwargs = kept.get("dataset_kwargs") if isinstance(kept.get("dataset_kwargs"), dict) else {}
    if not any(kwargs.get(k) for k in _DATA_SUBKEYS):
        del kept["dataset_path"]
        dropped.append({"key": "dataset_path", "reason": (
            "the builder has no data files left to read, so datasets would read every matching file of the folder "
            "lm_eval is run in")})


def _without_subkeys(key: str, value: dict, dropped: list, out_dir, local_data, dataset_path=None) -> dict:
    """A copy of the mapping ``value`` of ``key`` without the entries that are never written (appended to
    ``dropped`` with why); for ``dataset_kwargs``, also without the entries naming paths outside the folder.

    ``data_files`` and ``data_dir`` are relative to a Hub dataset's repository, but to the working folder of
    ``lm_eval`` when ``dataset_path`` is a packaged builder (``json``, ``text``...) or a local folder: there a
    relative path reads whatever that folder holds (``text`` with ``**`` reads every file in it)."""
    value = dict(value)
    for sub, reason in _SUBKEYS_DROPPED[key].items():
        if sub in value:
            del value[sub]
            dropped.append({"key": f"{key}.{sub}", "reason": reason})
    if key == "dataset_kwargs":
        # Relative to a Hub repository, a URL, or a folder of the user's own data (--local-data) the path is kept.
        on_hub = isinstance(dataset_path, str) and ((_URL.match(dataset_path) is not None
                                                     and not _local_relative(dataset_path)) or (
            _HUB_ID.match(dataset_path) is not None and dataset_path not in PACKAGED_BUILDERS) or (
            _absolute(dataset_path) and _dataset_path_problem(dataset_path, out_dir, local_data) is None))
        for sub in list(value):
            paths = _paths_of(sub, value[sub])
            problem = next(filter(None, (_path_check(p, out_dir, local_data) for p in paths)), None)
            if problem is None and sub in _DATA_SUBKEYS and not on_hub:
                # The values only: the keys of a data_files mapping are split names.
                problem = next((RELATIVE for w, p in _walk(value[sub], sub) if not w.endswith("(a key)")
                                and _local_relative(p)), None)
            if problem:
                del value[sub]
                dropped.append({"key": f"{key}.{sub}", "reason": problem})
    return value


def _slow_regex(value, where: str) -> Optional[str]:
    """Why a regular expression inside ``value`` (a ``regex_pattern`` or ``regexes_to_ignore``, at any depth) could
    hang lm-eval on a model answer, or None (:func:`~harness_ext.store.regex_safety.regex_problem`)."""
    from .regex_safety import regex_problem

    for w, s in _walk(value, where):
        if w.endswith(".regex_pattern") or ".regexes_to_ignore" in w:
            why = regex_problem(s)
            if why:
                return f"{w} ({s[:60]!r}): {why}"
    return None


def _without_slow_filters(filter_list, dropped: list):
    """``filter_list`` without the filters whose regular expressions could hang lm-eval (appended to ``dropped``
    with why); the others are kept, so a task loses only the scores of the filters left out."""
    if not isinstance(filter_list, list):
        return filter_list
    kept = []
    for i, pipeline in enumerate(filter_list):
        name = pipeline.get("name") if isinstance(pipeline, dict) else None
        why = _slow_regex(pipeline, f"filter_list[{i}]")
        if why:
            dropped.append({"key": "filter_list", "reason": f"the filter {str(name)[:60]!r} is left out: {why}"})
        else:
            kept.append(pipeline)
    return kept


def _metric_problem(metric_list) -> Optional[str]:
    """Why a ``metric_list`` would make lm-eval run a metric script from elsewhere, or a regular expression that
    could hang it, or None."""
    slow = _slow_regex(metric_list, "metric_list")
    if slow:
        return slow
    for i, entry in enumerate(metric_list if isinstance(metric_list, list) else []):
        name = entry.get("metric") if isinstance(entry, dict) else None
        if isinstance(name, str) and _METRIC_SCRIPT.search(name.strip()):
            return (f"metric_list[{i}] names the metric {name[:80]!r}, a script (a path or a Hub repository) that "
                    "lm-eval would load and run through evaluate.load")
        if isinstance(name, str) and name.strip().lower() in _CODE_METRICS:
            return (f"metric_list[{i}] names the metric {name.strip()!r}, which runs the model's answers and the "
                    "task's test code as Python (evaluate's code_eval)")
    return None


def _absolute(value: str) -> bool:
    return posixpath.isabs(value) or ntpath.isabs(value)


def _local_relative(value: str) -> bool:
    """Whether ``value`` is a relative local path: ``datasets`` (through fsspec) reads a relative ``file://`` URL from
    the working folder too, so only other schemes count as remote."""
    m = _URL.match(value)
    if m:
        if m.group(1).lower() != "file":
            return False
        value = value[m.end():]
    return not _absolute(value)


def _dataset_path_problem(value, out_dir, local_data) -> Optional[str]:
    """Why ``dataset_path`` would read outside the folder: a local path (relative ones from the working folder of
    ``lm_eval``), or the ``sql`` builder (a database the task names, local or reached with your credentials)."""
    if not isinstance(value, str):
        return None
    if value.strip() == "sql":
        return "the sql builder reads a database the task names (a local file, or a server with your credentials)"
    if value.strip() == "pandas":  # datasets 5 refuses to unpickle; the older versions lm-eval accepts do not
        return ("the pandas builder unpickles its data files, which runs code they hold (datasets before version 5 "
                "does so without asking)")
    problem = _path_check(value, out_dir, local_data)
    if problem is None and _local_relative(value) and (_URL.match(value) or not _HUB_ID.match(value)):
        return RELATIVE
    return problem


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _path_check(value: str, out_dir, local_data=()) -> Optional[str]:
    problem = local_path_problem(value)
    if problem == ABSOLUTE and local_data and not _URL.match(value):
        full = Path(value).resolve()
        if any(_inside(full, Path(d).resolve()) for d in local_data):
            return None
    if problem or out_dir is None or _URL.match(value):
        return problem
    root = Path(out_dir).resolve()
    if not _inside((root / value).resolve(), root):
        return "it resolves outside the folder"
    return None


def dropped_summary(dropped_by_task: dict, limit: int = 5) -> Optional[str]:
    """One warning line counting what :func:`safe_task_config` dropped, per key, naming the first tasks."""
    items = [(t, d["key"]) for t, ds in dropped_by_task.items() for d in ds]
    if not items:
        return None
    counts: dict = {}
    for _, k in items:
        counts[k] = counts.get(k, 0) + 1
    keys = ", ".join(f"{k} x{n}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    tasks = list(dict.fromkeys(t for t, _ in items))
    from ..report import plural

    return (f"task YAMLs written from results files: {plural(len(items), 'value')} of {plural(len(tasks), 'task')} not "
            f"written because they are code, name files outside the folder, are not lm-eval task keys, take a task's "
            f"name (tag) or are out of range (num_fewshot, repeats) ({keys}); first tasks: "
            f"{', '.join(tasks[:limit])}{' ...' if len(tasks) > limit else ''} (each task YAML's header says why)")


#: Dropped keys without which the task cannot load its data.
_DATA_KEYS = ("dataset_path", "dataset_kwargs.data_files", "dataset_kwargs.data_dir")
#: Dropped keys that do not change what the task computes.
_NOT_PART_OF_TASK = ("tag", "dataset_kwargs.cache_dir", "dataset_kwargs.trust_remote_code", "dataset_kwargs.storage_options",
                     "dataset_kwargs.token", "dataset_kwargs.use_auth_token", "generation_kwargs.trust_remote_code")


def without_taken_tags(config: dict, taken: set, dropped: list) -> None:
    """Remove from ``config['tag']`` (a name or a list) the names in ``taken``, saying why in ``dropped``.

    Parameters
    ----------
    config : dict
        A task's configuration, changed in place.
    taken : set of str
        The names a tag may not take: the task's own, the group's and its other tasks'.
    dropped : list
        Where the ``{"key", "reason"}`` of a removed tag is appended.
    """
    tags = config.get("tag")
    listed = [tags] if isinstance(tags, str) else tags if isinstance(tags, list) else []
    clash = [t for t in listed if isinstance(t, str) and t in taken]
    if not clash:
        return
    from ..safe_output import quoted

    kept = [t for t in listed if t not in clash]
    if kept:
        config["tag"] = kept
    else:
        del config["tag"]
    dropped.append({"key": "tag", "reason": f"{', '.join(map(quoted, clash))} is the name of this task, the group or "
                    "another of its tasks: lm-eval would index the tag in that task's place, and the group run other "
                    "tasks"})


#: Task keys that older lm-eval releases refuse (their ``TaskConfig`` has no such field, and loading the YAML stops
#: with ``TypeError: ... unexpected keyword argument``): the value that means "off", and the newest release checked
#: that refuses the key (``TaskConfig``'s fields read from lm-eval 0.4.2, 0.4.3, 0.4.4, 0.4.5, 0.4.8, 0.4.9.2, 0.4.10
#: and 0.4.13).
LATER_KEYS = {"unsafe_code": (False, "0.4.5"), "gen_prefix": (None, "0.4.5"), "doc_to_image": (None, "0.4.4"),
              "doc_to_audio": (None, "0.4.8")}


def portable_config(config: dict) -> list:
    """Leave out of ``config`` (in place) the keys of :data:`LATER_KEYS` that hold their "off" value, which a newer
    lm-eval records for every task: the task is the same without them, and older releases load it. Returns
    ``[(key, release)]`` for those kept at another value: releases up to ``release`` refuse the task."""
    newer = []
    for key, (off, refused_by) in LATER_KEYS.items():
        if key in config and config[key] is off:  # False and None are singletons: 0 or "" is not "off"
            del config[key]
        elif key in config:
            newer.append((key, refused_by))
    return newer


def task_yaml_text(task: str, entry: dict, out_dir, reserved=()) -> str:
    """The text of ``<task>.yaml``: a header saying where it came from and what was left out, then the task.

    The configuration goes through :func:`safe_task_config` again, with the paths checked
    against the final folder ``out_dir``, so a manifest's ``config`` is written as data
    whoever built it. A ``tag`` naming the task itself or one of ``reserved`` (the group and its other tasks) is
    left out: lm-eval indexes the tag in that task's place and skips the task's file, so the group ran other tasks.
    """
    import yaml

    from ..safe_output import comment, quoted

    config, dropped = safe_task_config(entry.get("config") or {}, out_dir, entry.get("local_data") or ())
    without_taken_tags(config, {task, *reserved}, dropped)
    newer = portable_config(config)
    seen = {(d["key"], d["reason"]) for d in dropped}
    dropped += [d for d in entry.get("dropped") or [] if isinstance(d, dict) and (d.get("key"), d.get("reason")) not in seen]
    source = f"{entry.get('source')}" + (f" (defined in {entry['config_source']})" if entry.get("config_source") else "")
    head = [comment(f"Task {quoted(task)}, rebuilt by harness-ext from the configuration lm-eval recorded in"),
            comment(source)]
    if dropped:
        head.append(f"# Not written: {len(dropped)} value(s) that are code, name files outside this folder or are not "
                    "lm-eval task keys:")
        head += [comment(f"  {d.get('key')}: {d.get('reason')}") for d in dropped]
        if any(d.get("key") in _DATA_KEYS for d in dropped):
            head.append("# NOT SELF-CONTAINED: this task's data location was not written; set dataset_path or "
                        "dataset_kwargs.data_files to a copy of its data before running it.")
        if any(d.get("key") not in _DATA_KEYS + _NOT_PART_OF_TASK and d.get("reason") != _NOT_A_KEY for d in dropped):
            head.append("# INCOMPLETE: values above defined how this task reads and scores its data; review them "
                        "and add safe equivalents before comparing its scores with the original runs.")
    for key, release in newer:
        head.append(comment(f"Needs an lm-eval newer than {release}: {release} and older refuse the key {key}."))
    doc = {"task": task}
    doc.update({k: v for k, v in config.items() if k != "task"})
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    if "\x85" in text:  # written raw, U+0085 reads back as a line break (a prompt changed): escaped instead
        text = yaml.safe_dump(doc, sort_keys=False)
    return "\n".join(head) + "\n" + text
