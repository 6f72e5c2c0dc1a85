"""lm-eval task definitions: kept from result files, found in lm-eval's registry, written back as YAML.

A reduced folder must run with ``lm_eval --include_path DIR --tasks GROUP`` for
the user's own tasks as well as for lm-eval's built-in ones. lm-eval v0.4 stores
every task's resolved configuration in the ``configs`` block of its results
file; the lm-eval adapter hands it over in ``ResultRecord.dataset_metadata``
under :data:`CONFIG_KEY`, ingest moves it into the ``task_configs`` table
(created here, like the samples table, so the results schema is untouched) and
``reduce`` looks each subset task up:

1. built into the installed lm-eval (its task folder, scanned as text, so lm-eval
   is not imported and the 15 s task index is not built): the group names it and
   lm-eval resolves it itself;
2. a configuration kept from an ingested results file: written as ``<task>.yaml``
   beside the group;
3. neither: ``reduce`` says so and the group YAML says which task files the folder
   still needs.

A kept configuration whose functions were serialised as source code
(``process_docs``, ``doc_to_text``, ... written by ``TaskConfig.to_dict``) cannot be
rebuilt faithfully (the source's imports and helpers are lost), so such a task
counts as unknown unless lm-eval has it built in.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional

from .globs import is_glob
from .task_yaml_safety import safe_task_config

#: Key of ``ResultRecord.dataset_metadata`` that carries a task's configuration from the adapter to ingest.
CONFIG_KEY = "task_config"
#: Key of a task's dataset metadata holding its full number of documents (lm-eval's ``n-samples`` ``original``),
#: stored only from a run of part of them (``--limit``): a whole run's ``n_samples`` is that number already.
N_DOCUMENTS = "n_documents"
#: Key of an lm-eval group's dataset metadata (its ``kind='aggregate'`` rows) holding its direct members as the
#: results file's ``group_subtasks`` lists them: task and subgroup names, lm-eval's own.
MEMBERS = "members"
#: Key of a task's (or scored group's) dataset metadata naming the lm-eval groups it is a direct member of that have
#: no row in the store (lm-eval wrote them without a score and their tasks share no metric, so none was made:
#: the Open LLM Leaderboard's ``leaderboard``): ``{group: its direct members}``. Such a group's membership has no
#: row of its own to live in, so each of its members carries it (a member that is itself such a group passes it on to
#: its own members).
IN_GROUPS = "in_groups"
#: Key of the same metadata (a group's row, or a member carrying :data:`IN_GROUPS`) holding the member lists later
#: files gave a group that differ from the one kept (:data:`MEMBERS` or :data:`IN_GROUPS`): ``{group: [list, ...]}``,
#: each distinct list once. lm-eval's releases change some groups' members; ``reduce --items`` takes the union.
OTHER_MEMBERS = "other_member_lists"
#: The most documents a task's count may give: above it a results file's ``n-samples`` is no task's size (lm-eval's
#: largest tasks hold hundreds of thousands), and drawing from it would enumerate the documents (80 MB here).
MAX_DOCUMENTS = 10_000_000
#: Configuration keys lm-eval fills at run time; they are not part of a task's definition.
RUNTIME_METADATA = frozenset({"config_source"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS task_configs (
    task VARCHAR NOT NULL, sha256 VARCHAR NOT NULL, config JSON NOT NULL, source VARCHAR NOT NULL,
    config_source VARCHAR, ingested_at TIMESTAMP NOT NULL, PRIMARY KEY (task, sha256));
"""
# A name lm-eval resolves: a task, a group (``group: mmlu_pro``) or a tag, one per line (``tag: x``) or as a
# block list (``tag:`` then ``- x`` lines).
_NAME_LINE = re.compile(r'^[ \t]*["\']?(?:task|group|tag)["\']?[ \t]*:[ \t]*["\']?([^"\'\n#\[\]{}]+?)["\']?[ \t]*$',
                        re.M)
_TAG_BLOCK = re.compile(r'^["\']?tag["\']?\s*:\s*\n((?:[ \t]*-[ \t]*[^\n]*\n?)+)', re.M)
_TAG_ITEM = re.compile(r'^[ \t]*-[ \t]*["\']?([A-Za-z0-9_.\-]+)["\']?[ \t]*(?:#.*)?$', re.M)


def fold_nested(roots: Iterable, expand) -> dict:
    """``{node: (items, flag)}`` of every node reached from ``roots`` in a graph of nested lm-eval groups.

    ``expand(node)`` gives ``(subnodes, items, flag)``: the node's nested groups to fold in, its own items (tasks, or
    members with a row) and a flag of its own (a subgroup without a member list). A node's items are its own then
    its subnodes' (each once, in that order) and its flag is set when any of theirs is. Each node is worked out
    once, iteratively (no recursion limit): walking every group's subtree again took minutes for a results file of
    thousands of groups nested in a chain. A node reached again while it is being worked out (a cycle, which a
    hand-made file or store could hold) adds nothing.
    """
    memo: dict = {}
    expanded: dict = {}
    for root in roots:
        if root in memo:
            continue
        stack, open_ = [(root, False)], set()
        while stack:
            node, done = stack.pop()
            if node in memo or (not done and node in open_):
                continue
            if not done:
                expanded[node] = expand(node)
                subs = expanded[node][0]
                open_.add(node)
                stack.append((node, True))
                stack.extend((k, False) for k in subs if k not in memo and k not in open_)
                continue
            subs, items, flag = expanded.pop(node)
            got = dict.fromkeys(items)
            for k in subs:
                if k in memo:
                    got.update(dict.fromkeys(memo[k][0]))
                    flag = flag or memo[k][1]
            memo[node] = (tuple(got), flag)
            open_.discard(node)
    return memo


def clean_config(config: dict, model_args: Optional[dict] = None) -> tuple:
    """``(definition, config_source)`` of one ``configs[task]`` block of an lm-eval results file.

    lm-eval merges ``--model_args`` and ``--metadata`` into each task's ``metadata``
    and adds ``config_source``; those describe the run, not the task, and would make
    the same task look different in every file.
    """
    cfg = {k: v for k, v in config.items() if v is not None}
    meta = dict(cfg.get("metadata") or {}) if isinstance(cfg.get("metadata"), dict) else None
    source = None
    if meta is not None:
        source = meta.pop("config_source", None)
        for k in (model_args or {}):
            meta.pop(k, None)
        cfg["metadata"] = meta
    return cfg, (str(source) if source else None)


def serialised_functions(config: dict) -> list:
    """Fields of a kept configuration that hold a function's source code instead of a template."""
    out = []
    for k, v in config.items():
        if isinstance(v, str) and re.match(r"\s*(def |async def |<function |lambda\b)", v):
            out.append(k)
        elif k == "metric_list" and isinstance(v, list):
            out += [f"metric_list.{m.get('metric')}" for m in v if isinstance(m, dict)
                    and any(isinstance(x, str) and re.match(r"\s*(def |<function )", x) for x in m.values())]
        elif k == "filter_list" and isinstance(v, list) and "def " in json.dumps(v):
            out.append(k)
    return out


# -- the store table ---------------------------------------------------------------------
def ensure_schema(store) -> None:
    store.con.execute(_SCHEMA)


def pop_configs(records: Iterable) -> dict:
    """Take the task configurations out of a source's records: ``{task: (config, config_source)}``."""
    out = {}
    for rec in records:
        md = rec.dataset_metadata
        if isinstance(md, dict) and CONFIG_KEY in md:
            item = md.pop(CONFIG_KEY)
            if rec.task and isinstance(item, dict) and isinstance(item.get("config"), dict):
                out.setdefault(rec.task, (item["config"], item.get("config_source")))
    return out


def store_configs(store, items: Iterable) -> int:
    """Keep the first configuration seen of each task from ``(source path, {task: (config, config_source)})`` items.

    Returns the number of tasks newly described. A task already described keeps its
    first-ingested configuration (as the first-ingested score is used), so re-ingesting
    and ingesting 10,000 runs of one task cost one row.
    """
    items = [(p, c) for p, c in items if c]
    if not items:
        return 0
    ensure_schema(store)
    known = {r[0] for r in store.con.execute("SELECT DISTINCT task FROM task_configs").fetchall()}
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = []
    for path, configs in items:
        for task, (cfg, origin) in configs.items():
            if task in known:
                continue
            known.add(task)
            canonical = json.dumps(cfg, sort_keys=True, default=str)
            rows.append((task, hashlib.sha256(canonical.encode()).hexdigest(), json.dumps(cfg, default=str), str(path),
                         origin, now))
    if rows:
        with store.transaction() as con:  # all of them or none (ingest checked their text: harness_ext.types.check_storable)
            con.executemany("INSERT OR IGNORE INTO task_configs VALUES (?, ?, ?, ?, ?, ?)", rows)
    return len(rows)


def stored_configs(store, tasks: Iterable[str]) -> dict:
    """``{task: {"config", "source", "config_source"}}`` for the tasks the store has a configuration of."""
    tasks = sorted(set(tasks))
    tables = {r[0] for r in store.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if not tasks or "task_configs" not in tables:
        return {}
    rows = store.con.execute(
        """SELECT task, config, source, config_source FROM task_configs WHERE task IN (SELECT unnest(?))
           QUALIFY row_number() OVER (PARTITION BY task ORDER BY ingested_at, source) = 1""", [tasks]
    ).fetchall()
    return {t: {"config": json.loads(c), "source": s, "config_source": cs} for t, c, s, cs in rows}


# -- lm-eval's own registry ----------------------------------------------------------------
def lm_eval_tasks_dir() -> Optional[Path]:
    """The installed lm-eval's task folder, found without importing lm-eval (None if it is not installed)."""
    try:
        spec = importlib.util.find_spec("lm_eval.tasks")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@lru_cache(maxsize=4)
def builtin_task_index(root: Optional[Path] = None) -> dict:
    """``{name: yaml path}`` of every task, group and tag defined in lm-eval's own task folder: every name
    ``lm_eval --tasks`` resolves by itself (``mmlu_pro`` is a group, ``mmlu_anatomy`` a task).

    Reads the YAML files as text (about 1 s for lm-eval 0.4's 14,000 files) rather than
    building lm-eval's TaskManager index (about 15 s), which resolves every include.
    """
    root = root or lm_eval_tasks_dir()
    if root is None:
        return {}
    names: dict = {}
    for f in sorted(root.rglob("*.yaml")):
        if "__pycache__" in f.parts:
            continue
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in _NAME_LINE.finditer(text):
            names.setdefault(m.group(1).strip(), f)
        for block in _TAG_BLOCK.finditer(text):
            for m in _TAG_ITEM.finditer(block.group(1)):
                names.setdefault(m.group(1), f)
    return names


@lru_cache(maxsize=1)
def _load_tag_blind(text: str):
    """A YAML document read by the safe loader with any tag (``!function``) read as null: only the plain keys of
    lm-eval's own task files are read."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return yaml.load(text, Loader=Loader)


@lru_cache(maxsize=256)
def builtin_dataset(task: str, root: Optional[Path] = None) -> Optional[tuple]:
    """``(dataset_path, dataset_name)`` of lm-eval's own task ``task`` as its YAML (and the files it includes, from
    its own folder) gives them; None when lm-eval lacks the task, ``task`` names a group or tag, or a file cannot be
    read."""
    root = root or lm_eval_tasks_dir()
    path = builtin_task_index(root).get(task) if root is not None else None
    if path is None:
        return None
    merged: dict = {}
    for _ in range(6):  # lm-eval's own include chains are one or two files deep
        try:
            doc = _load_tag_blind(path.read_text(encoding="utf-8", errors="replace"))
        except Exception:  # noqa: BLE001 - lm-eval's own file, read only to compare its dataset
            return None
        if not isinstance(doc, dict):
            return None
        merged = {**doc, **merged}  # the including file's keys win, as lm-eval merges them
        inc = doc.get("include")
        if not isinstance(inc, str) or "/" in inc or "\\" in inc or ".." in inc:
            break
        path = path.parent / inc
    if merged.get("task") != task or "dataset_path" not in merged:
        return None
    return merged.get("dataset_path"), merged.get("dataset_name")


#: Hugging Face ``datasets`` builders that read local files (``dataset_kwargs.data_files``) rather than a Hub dataset.
LOCAL_BUILDERS = frozenset({"json", "csv", "parquet", "text", "arrow", "pandas", "imagefolder", "audiofolder"})


def other_data_than_builtin(task: str, config: dict) -> Optional[tuple]:
    """``(recorded, built in)`` datasets (``(dataset_path, dataset_name)``; built in None for a group or tag of that
    name) when the results' configuration of ``task``, a name lm-eval has, ran local files (a ``json``/``csv``/...
    builder, ``data_files``, a path) where lm-eval's own task reads a Hub dataset, or lm-eval's name is a group or
    tag: a population's own task named ``arc_easy`` or ``mmlu``. Else None: the same data, or a Hub dataset the Hub
    has since renamed (of the 1,188 recorded configurations of built-in tasks in the shared real data, 1,085 name
    the Hub repository otherwise, ``glue`` for ``nyu-mll/glue``, ``hails/mmlu_no_train`` for ``cais/mmlu``)."""
    if not isinstance(config, dict):
        return None
    kwargs = config.get("dataset_kwargs") if isinstance(config.get("dataset_kwargs"), dict) else {}
    path = config.get("dataset_path")
    if not (str(path) in LOCAL_BUILDERS or "data_files" in kwargs or str(path).startswith(("/", ".", "~"))):
        return None
    builtin = builtin_dataset(task)
    if builtin is not None and str(builtin[0]) in LOCAL_BUILDERS:
        return None  # lm-eval's own task reads local files too: nothing tells them apart
    return (path, config.get("dataset_name")), builtin


def shipped_group_names() -> frozenset:
    """lm-eval's own group and tag names as harness-ext ships them (``harness_ext/data/lm_eval_groups.txt``, from
    lm-eval 0.4.13), for when lm-eval is not installed."""
    from importlib.resources import files

    text = (files("harness_ext") / "data" / "lm_eval_groups.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def defines_group(path: Path, name: str) -> bool:
    """Whether the lm-eval YAML ``path``, where lm-eval's task index found ``name`` (as a task, group or tag), has no
    ``task: name`` line: ``name`` is then one of its groups or tags, not a task."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return re.search(rf"^\s*['\"]?task['\"]?\s*:\s*['\"]?{re.escape(name)}['\"]?\s*$", text, re.MULTILINE) is None


def own_lm_eval_names(names: Iterable[str]) -> tuple:
    """Which of ``names`` lm-eval resolves by itself, as ``lm_eval --tasks`` would: ``({name: "group" or "task"},
    looked_up)``.

    From the installed lm-eval's task folder (:func:`builtin_task_index`; a group or tag is a name whose YAML defines
    no task of it, :func:`defines_group`), ``looked_up`` True; without lm-eval, from lm-eval 0.4.13's group and tag
    names as shipped (:func:`shipped_group_names`), ``looked_up`` False: a task of the name is then not known.
    """
    root = lm_eval_tasks_dir()
    index = builtin_task_index(root) if root is not None else {}
    shipped = shipped_group_names()
    out = {}
    for name in dict.fromkeys(names):
        if name in shipped or (name in index and defines_group(index[name], name)):
            out[name] = "group"
        elif name in index:
            out[name] = "task"
    return out, root is not None


def foreign_tasks(tasks: dict) -> dict:
    """Entries of the manifest's ``lm_eval_tasks`` for tasks whose items came from another source than lm-eval.

    Parameters
    ----------
    tasks : dict
        ``{task: benchmark}``: item tables of HELM Lite name their tasks ``commonsense``, ``gsm``, ``mmlu``.

    Returns
    -------
    dict
        ``{task: entry}``, each ``origin`` ``"unknown"`` with its ``reason``; ``builtin`` (the YAML in lm-eval's task
        folder, or the release whose group names were checked) where lm-eval has a task, group or tag of that
        name: another evaluation than these items (lm-eval's ``mmlu`` is its 57-subject group), which
        ``lm_eval --tasks`` would run instead, whole, since ``--samples`` matches no document of it.
    """
    root = lm_eval_tasks_dir()
    index = builtin_task_index(root) if root is not None else {}
    shipped = shipped_group_names() if root is None else frozenset()
    out = {}
    for task, bench in tasks.items():
        src = f"its items come from {bench or 'another source'}'s item table, not from lm-eval"
        where = (index[task].relative_to(root).as_posix() if task in index
                 else "lm-eval 0.4.13's group names (lm-eval is not installed)" if task in shipped else None)
        if bench != "inspect" and ("/" in task or "\\" in task):  # Inspect's tasks run under Inspect
            out[task] = {"origin": "unknown", "path_like": True,
                         "reason": f"{src}, named with a '/' or '\\', which lm-eval's --log_samples reads as folders "
                                   "(samples_<task>_<date>.jsonl): its samples would be written through folders that "
                                   "do not exist, and lost"}
        elif where is None:
            out[task] = {"origin": "unknown", "reason": f"{src}, and lm-eval has no task of this name"}
        else:
            out[task] = {"origin": "unknown", "builtin": where,
                         "reason": f"{src}; lm-eval's own task or group of this name ({where}) is another evaluation"}
    return out


def foreign_task_warnings(found: dict, elsewhere: str = "") -> list:
    """``reduce --items`` warnings on the :func:`foreign_tasks` entries: name clashes first, they run the wrong task.
    ``elsewhere``: how some of them run under their own harness (tasks from Inspect AI logs), said after them."""
    from ..report import listed, plural
    from ..safe_output import quoted, short_name

    clash = [t for t, e in found.items() if e.get("builtin")]
    paths = [t for t, e in found.items() if e.get("path_like")]
    other = [t for t, e in found.items() if not e.get("builtin") and not e.get("path_like")]
    out = []
    if clash:
        named = listed((f"{short_name(t)} ({found[t]['builtin']})" for t in clash), 5)
        one = len(clash) == 1
        out.append(f"{plural(len(clash), 'item task has', 'item tasks have')} the name of another lm-eval task or "
                   f"group: {named}; lm-eval would run its own task, all of it (--samples matches none of its "
                   f"documents), so the lm-eval group leaves {'it' if one else 'them'} out: run "
                   f"{'its' if one else 'their'} items in the harness they came from, or with a task definition of "
                   "another name whose documents are in the source's order (in the order of its item_ids where the manifest lists them); "
                   f"if {'its' if one else 'their'} items are that lm-eval task's documents, numbered as lm-eval does, "
                   "declare it in the table's sidecar (items: harness_tasks, the task mapped to itself) and ingest it again")
    if paths:
        out.append(f"{plural(len(paths), 'item task is', 'item tasks are')} named with a '/' or '\\': "
                   f"{listed(map(quoted, map(short_name, paths)), 6)}; lm-eval's --log_samples would write "
                   f"{'its' if len(paths) == 1 else 'their'} samples to a path through folders that do not exist, and "
                   f"lose them, so the lm-eval group leaves {'it' if len(paths) == 1 else 'them'} out (its YAML lists "
                   f"{'it' if len(paths) == 1 else 'them'} as comments); rename the task in its table")
    if other:
        out.append(f"{plural(len(other), 'item task is not an lm-eval task', 'item tasks are not lm-eval tasks')}: "
                   f"{listed(map(short_name, other), 6)}; the lm-eval group lists {'it' if len(other) == 1 else 'them'}, "
                   "and lm-eval runs it only with a task definition of each name, whose documents are in the source's "
                   "order (in the order of its item_ids where the manifest lists them), added to the folder (the group "
                   "YAML says which)"
                   f"{'; ' + elsewhere if elsewhere else ''}")
    return out


def resolve_tasks(tasks: Iterable[str], store=None, local_data: Iterable = ()) -> dict:
    """Where each lm-eval task's definition comes from, for the manifest.

    Returns
    -------
    dict
        ``{task: entry}``; ``entry["origin"]`` is ``"lm_eval"`` (built into the installed
        lm-eval; ``path`` relative to its task folder), ``"results"`` (``config`` kept from
        the ingested results file ``source``, only its data: what
        :func:`~harness_ext.store.task_yaml_safety.safe_task_config` dropped is listed in
        ``dropped``) or ``"unknown"`` (``reason`` says why and
        ``config_source`` names the YAML the runs used, when lm-eval recorded it).
        ``local_data`` (folders of the user's own data) lets absolute data paths inside them
        through, and is recorded in each ``"results"`` entry for the writer's own check.
    """
    tasks = list(dict.fromkeys(tasks))
    root = lm_eval_tasks_dir()
    builtin = builtin_task_index(root) if root is not None else {}
    kept = stored_configs(store, tasks) if store is not None else {}
    out = {}
    for t in tasks:
        k = kept.get(t)
        other = other_data_than_builtin(t, k["config"]) if t in builtin and k is not None else None
        if t in builtin and other is None:
            out[t] = {"origin": "lm_eval", "path": builtin[t].relative_to(root).as_posix()}
            continue
        if other is not None and serialised_functions(k["config"]):
            # Its own definition cannot be rebuilt: lm-eval's task of the name runs, on other data (warned).
            out[t] = {"origin": "lm_eval", "path": builtin[t].relative_to(root).as_posix(), "other_data": other}
            continue
        if k is None:
            why = "the ingested results files did not record its configuration (lm-eval v0.3 or an edited file)"
            out[t] = {"origin": "unknown", "reason": why + ("" if root else "; lm-eval is not installed, so it "
                                                             "was not looked up among lm-eval's built-in tasks")}
            continue
        funcs = serialised_functions(k["config"])
        if funcs:
            out[t] = {"origin": "unknown", "config_source": k["config_source"], "source": k["source"],
                      "reason": f"its configuration uses Python functions ({', '.join(funcs)}) that a results file "
                                "keeps only as source text"
                                + ("" if root else "; lm-eval is not installed, so it was not looked up among "
                                                   "lm-eval's built-in tasks")}
            continue
        config, dropped = safe_task_config(k["config"], None, local_data)
        out[t] = {"origin": "results", "source": k["source"], "config_source": k["config_source"], "config": config}
        if other is not None:  # the folder's definition of this name takes the place of lm-eval's own (warned)
            out[t]["other_data"] = other
        if dropped:
            out[t]["dropped"] = dropped
        if local_data:
            out[t]["local_data"] = list(local_data)
    return out


def missing_data_files(config: dict) -> list:
    """Local data files a kept configuration names that do not exist here (relative ones are relative to the run)."""
    kw = config.get("dataset_kwargs") or {}
    files = kw.get("data_files") if isinstance(kw, dict) else None
    if files is None:
        return []
    if isinstance(files, (str, list)):
        files = {"": files}
    out = []
    for v in files.values() if isinstance(files, dict) else []:
        for f in ([v] if isinstance(v, str) else v if isinstance(v, list) else []):
            if isinstance(f, str) and "://" not in f and not is_glob(f) and not Path(f).exists():
                out.append(f)
    return out
