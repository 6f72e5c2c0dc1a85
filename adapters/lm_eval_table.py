"""The results table lm-evaluation-harness prints at the end of a run, saved as markdown (``results.md``, a model card).

lm-eval prints a line naming the model and the run's settings, then a markdown table:

v0.4::

    hf (pretrained=EleutherAI/pythia-160m), gen_kwargs: (None), limit: None, num_fewshot: None, batch_size: 8
    |Tasks|Version|Filter|n-shot|Metric|   |Value |   |Stderr|
    |mmlu |      2|none  |      |acc   |↑  |0.2295|±  |0.0035|
    | - humanities|2|none |      |acc   |↑  |0.2421|±  |0.0062|

and, after it, a ``|Groups|...`` table of the groups' scores. v0.3 prints ``... limit: None, provide_description:
False, num_fewshot: 0, batch_size: None`` and ``|Task|Version|Metric|Value|   |Stderr|``. A file may hold several
such blocks (several models or runs). A file is claimed by its content (:func:`harness_ext.store.ingest_read.is_printed_table`),
never by its name.

lm-eval's old ``results/<family>/<model>/README.md`` files have no such line: a ``# <model>`` heading, then each run's
JSON file named in a heading (``## bloom-560m_xnli_0-shot.json``) above a v0.3 table, every value times 100 (see
:func:`_readme_blocks` for the model's name, the scale and the runs whose JSON sits beside the file).

Each block is turned into the results lm-eval would have written as JSON for the same run and read by the JSON
reader's own row builder (:mod:`harness_ext.adapters.lm_eval`), so a table and the JSON of one run give the same
model, benchmark, dataset and metric names, directions, chance levels and groups (stored as aggregates). The table
is rounded to its printed digits (four, lm-eval's ``%.4f``).

Task names: v0.3 prints task names. v0.4 prints each task's alias, indented (``" - "``, one space more per level)
under its group. An alias is renamed only where lm-eval's own naming makes it certain: under lm-eval's ``mmlu``
group, ``humanities`` is ``mmlu_humanities`` and ``formal_logic`` is ``mmlu_formal_logic``. Every other alias is
kept as printed (it is the task's name unless the task's YAML gave it another alias).
"""

from __future__ import annotations

import re
from typing import Optional

from harness_ext.benchmarks import MMLU_SUBJECTS
from harness_ext.errors import IngestError, ResultsReadElsewhere
from harness_ext.hookspecs import hookimpl
from harness_ext.store.ingest_read import TABLE_FILE_BYTES, is_printed_table, markdown_file
from harness_ext.types import Adapter, SourceFile

# The JSON reader's row builder and checks, so a table and its run's JSON are named alike.
from .lm_eval import _check_proportions, _is_proportion, _rows, _shot_count, model_name
from .lm_eval_values import drop_missing

_V04_LINE = re.compile(r"^\s*(?P<type>[^\s(]+)\s*\((?P<args>.*?)\),\s*gen_kwargs:\s*\(.*?\),\s*limit:\s*(?P<limit>[^,]*),"
                       r"\s*num_fewshot:\s*(?P<shots>[^,]*),\s*batch_size:")
_V03_LINE = re.compile(r"^\s*(?P<type>[^\s(]+)\s*\((?P<args>.*?)\),\s*limit:\s*(?P<limit>[^,]*),\s*provide_description:"
                       r"[^,]*,\s*num_fewshot:\s*(?P<shots>[^,]*),\s*batch_size:")
#: The longest header line tried: lm-eval's is a model's arguments long; the lazy groups of the patterns above cost
#: the square of a line's length on a hostile line of repeated "), gen_kwargs: (".
_HEADER_CHARS = 10_000
#: A value as some lm-eval versions print a numpy scalar (``np.float64(0.2295)``).
_NUMPY_REPR = re.compile(r"^np\.(?:float|int)\d*\((.*)\)$")
#: lm-eval's ``mmlu`` group's subgroups by their aliases (its YAMLs' ``group_alias``).
_MMLU_CATEGORIES = {"humanities": "mmlu_humanities", "other": "mmlu_other", "social sciences": "mmlu_social_sciences",
                    "social_sciences": "mmlu_social_sciences", "stem": "mmlu_stem"}
_MMLU_SUBJECTS = frozenset(MMLU_SUBJECTS)
#: The shot count in the JSON file name a results README heading names (``bloom-560m_xnli_0-shot.json``).
_README_SHOTS = re.compile(r"_(\d{1,4})-shot\.json$")
#: lm-eval's results README script (``scripts/make_table_results.py``) printed every value times 100 except
#: ``ppl`` and every metric of these tasks, which lm-eval already reports on 0-100.
_README_UNSCALED_TASKS = frozenset({"squad2"})
#: The longest "# <model>" heading taken as a model's name (a longer one is prose: the folder names the model then).
_TITLE_CHARS = 200
#: A heading's JSON file name that may be looked up beside the README: no folder, not hidden, at most 255 characters.
_PLAIN_NAME = re.compile(r"^[^/\\.][^/\\]{0,254}$")
#: Metrics lm-eval always reports on [0, 1] (besides ``acc*`` and ``exact_match*``), divided in a table printed in
#: percent. Not ``f1`` or ``em``: SQuAD v2's are on 0-100 in lm-eval's own JSON.
_PROPORTION_METRICS = frozenset({"mc1", "mc2", "multiple_choice_grade"})


def can_handle(src: SourceFile) -> bool:
    """A ``.md`` or ``.markdown`` file of at most 4 MiB holding a table lm-eval printed, with its header line."""
    return markdown_file(src) and is_printed_table(src.bytes)


class _Block:
    """One header line and the table rows under it: one run of one model."""

    def __init__(self, v04: bool, match):
        self.v04, self.model_type, self.args = v04, match["type"], match["args"]
        self.limit, self.shots = match["limit"].strip(), match["shots"].strip()
        self.json_name: Optional[str] = None  # results README layout: the JSON file its "## " heading names
        self.title: Optional[str] = None  # results README layout: the file's "# " heading
        self.model: Optional[str] = None  # results README layout: the model named by the heading or the folder
        self.results: dict = {}  # task -> {"metric,filter": value, "metric_stderr,filter": stderr}
        self.groups: dict = {}  # group -> block, from the Groups table
        self.subtasks: dict = {}  # group -> [task], from the rows' indentation
        self.versions: dict = {}
        self.n_shot: dict = {}
        self.hib: dict = {}  # task -> {metric: higher is better}, from the arrow lm-eval prints beside the metric
        self.rows = 0


def _readme_block(json_name: str, title: Optional[str]) -> _Block:
    """A block of lm-eval's results README layout: a ``## <run>_<N>-shot.json`` heading names the run's JSON file
    (and its shot count) instead of the header line, and only the file's ``# <model>`` heading names the model."""
    shots = _README_SHOTS.search(json_name)
    block = _Block(False, {"type": "", "args": "", "limit": "None", "shots": shots[1] if shots else "None"})
    block.json_name, block.title = json_name, title
    return block


def _cells(line: str) -> Optional[list]:
    s = line.strip()
    if not s.startswith("|"):
        return None
    s = s[1:-1] if s.endswith("|") and len(s) > 1 else s[1:]
    return s.split("|")


def _number(text: str):
    """A printed value as a float; ``"N/A"`` as itself (the JSON reader leaves it out, noted); None if unreadable."""
    t = text.strip()
    m = _NUMPY_REPR.match(t)
    if m:
        t = m.group(1).strip()
    if t.upper() in ("N/A", "NAN", "NONE", "NULL"):
        return "N/A"
    try:
        return float(t)
    except ValueError:
        return None


def _version(text: str):
    t = text.strip()
    if not t or t.upper() == "N/A":
        return None
    try:
        f = float(t)
    except ValueError:
        return t
    return int(f) if f.is_integer() and "." not in t else f


def _task_name(alias: str, parents: list) -> str:
    """The task an alias printed under ``parents`` (resolved names, outermost first) names (see the module's doc)."""
    if parents and parents[0] == "mmlu":
        if alias in _MMLU_CATEGORIES and len(parents) == 1:
            return _MMLU_CATEGORIES[alias]
        if alias in _MMLU_SUBJECTS:
            return f"mmlu_{alias}"
    return alias


def _parse(text: str) -> tuple:
    """``(blocks, unreadable rows, tables without a header line)`` of a file's text.

    A table belongs to a header line only when it follows it (blank lines and code fences between), and a Groups
    table to the table it follows, as lm-eval prints them: a table further on (a user's second table under one
    header) names no model and is left out, counted, rather than given the settings of another run.
    """
    blocks: list = []
    bad = orphan = 0
    title_model = None  # the first "# name" heading: the model of lm-eval's results README layout
    lines = text.splitlines()
    expect = None  # "table": after a header line; "groups": after a block's table
    i = 0
    while i < len(lines):
        line = lines[i]
        flat = line.strip()
        if not flat or flat.startswith("```"):
            i += 1
            continue
        if "batch_size:" in line and len(line) <= _HEADER_CHARS:
            m = _V04_LINE.match(line)
            m3 = None if m else _V03_LINE.match(line)
            if m or m3:
                blocks.append(_Block(bool(m), m or m3))
                expect = "table"
                i += 1
                continue
        if flat.startswith("#"):
            level = len(flat) - len(flat.lstrip("#"))
            title = flat[level:].strip()
            if level == 1 and title and title_model is None and len(title) <= _TITLE_CHARS:
                title_model = title
            if level == 2 and title.endswith(".json"):
                blocks.append(_readme_block(title, title_model))
                expect = "readme"  # the script printed v0.3 tables only: another table under it is not its
            else:
                expect = None
            i += 1
            continue
        head = _cells(line)
        kind = _table_kind(head)
        if kind is None:
            expect = None
            i += 1
        elif expect == "table" or (expect == "readme" and kind == "Task") or (expect == "groups" and kind == "Groups"):
            i, b = _read_table(lines, i, head, kind, blocks[-1])
            bad += b
            expect = "groups"
        else:
            orphan += 1
            i += 1
            while i < len(lines) and _cells(lines[i]) is not None and not _table_kind(_cells(lines[i])):
                i += 1
            expect = None
    return blocks, bad, orphan


def _table_kind(head) -> Optional[str]:
    """``"Tasks"``, ``"Groups"`` (v0.4) or ``"Task"`` (v0.3) for a table header lm-eval printed, else None.

    lm-eval 0.4's first releases printed no ``n-shot`` column, some headed ``Task`` (``|Task|Version|Filter|Metric|``):
    read as v0.4 tables (the ``Filter`` column tells them from v0.3's).
    """
    if not head:
        return None
    names = [c.strip() for c in head]
    if names[:1] in (["Tasks"], ["Groups"], ["Task"]) and names[1:3] == ["Version", "Filter"] and (
            names[3:5] == ["n-shot", "Metric"] or names[3:4] == ["Metric"]):
        return "Groups" if names[0] == "Groups" else "Tasks"
    if names[:4] == ["Task", "Version", "Metric", "Value"]:
        return "Task"
    return None


def _read_table(lines: list, i: int, head: list, kind: str, block: _Block) -> tuple:
    """Read the table whose header is ``lines[i]`` into ``block``: ``(index after the table, unreadable rows)``."""
    names = [c.strip() for c in head]
    col = {n: j for j, n in enumerate(names) if n}
    need = ("Version", "Metric", "Value") + (("Filter",) if kind != "Task" else ())
    if any(n not in col for n in need):
        return i + 1, 0
    width, bad = len(names), 0
    i += 1
    if i < len(lines) and set(lines[i].strip()) <= set("|-: "):
        i += 1  # the alignment row
    stack: list = []  # (depth, resolved name) of the rows above, for the indented ones
    task = None
    into = block.groups if kind == "Groups" else block.results
    while i < len(lines):
        cells = _cells(lines[i])
        if cells is None or _table_kind(cells):
            break
        i += 1
        if len(cells) != width:
            bad += 1
            continue
        raw = cells[0]
        if raw.strip():
            alias = raw.strip()
            # lm-eval 0.4's first releases print the task's name unindented and its alias, indented, in the Value
            # cell of an "alias" row: the tree is read from that alias, the name kept as printed.
            tree = cells[col["Value"]] if kind != "Task" and cells[col["Metric"]].strip() == "alias" else raw
            depth = 0
            if tree.strip().startswith("- "):
                # lm-eval indents a subtask one space per level before "- "; a JSON from an older lm-eval holds the
                # alias with its own " - ", which a newer one prints behind a second prefix ("  -  - anatomy").
                depth = len(tree) - len(tree.lstrip(" -"))
                while alias.startswith("- "):
                    alias = alias[2:].strip()
            while stack and stack[-1][0] >= depth:
                stack.pop()
            parents = [n for _, n in stack]
            task = _task_name(alias, parents)
            if parents and task not in block.subtasks.setdefault(parents[-1], []):
                block.subtasks[parents[-1]].append(task)
            stack.append((depth, task))
            ver = cells[col["Version"]]
            if ver.strip():
                block.versions.setdefault(task, _version(ver))
        if task is None:
            bad += 1
            continue
        if not _row(block, into, task, cells, col, kind):
            bad += 1
    return i, bad


def _row(block: _Block, into: dict, task: str, cells: list, col: dict, kind: str) -> bool:
    """Store one row's metric (and stderr) under ``task`` in ``into``; False if the row is unreadable."""
    metric = cells[col["Metric"]].strip()
    raw_value = cells[col["Value"]].strip()
    if not metric and not raw_value:
        return True  # a group lm-eval lists without a score ({" ": " "} in its JSON): a spacer, as the JSON reader reads it
    if metric == "alias" and kind != "Task":
        return True  # lm-eval 0.4's first releases printed each task's alias as a row of its own: not a score
    value = _number(raw_value)
    if not metric or value is None:
        return False
    stderr = _number(cells[col["Stderr"]]) if "Stderr" in col and cells[col["Stderr"]].strip() else "N/A"
    if stderr is None:
        return False
    if kind == "Task":
        key, skey = metric, f"{metric}_stderr"
    else:
        filt = cells[col["Filter"]].strip() or "none"
        key, skey = f"{metric},{filt}", f"{metric}_stderr,{filt}"
        shots = cells[col["n-shot"]].strip() if "n-shot" in col else ""
        if shots and task not in block.n_shot:
            try:
                block.n_shot[task] = int(float(shots))
            except ValueError:
                return False
    j = col["Metric"] + 1  # the unnamed column of arrows (lm-eval >= 0.4.3)
    arrow = cells[j].strip() if kind != "Task" and j < len(cells) and j not in col.values() else ""
    if arrow in ("↑", "↓"):
        block.hib.setdefault(task, {}).setdefault(metric, arrow == "↑")
    entry = into.setdefault(task, {})
    if key in entry:
        return True  # a group printed in both tables: its first row
    entry[key] = value
    if stderr != "N/A":
        entry[skey] = stderr
    block.rows += 1
    return True


def _percent(block: _Block, src: SourceFile) -> None:
    """Divide a table printed in percent by 100 (noted): every proportion above 1, none above 100."""
    props = [(b, k) for b in (*block.results.values(), *block.groups.values()) for k in b
             if "_stderr" not in k and isinstance(b[k], float) and _proportion(k)]
    vals = [b[k] for b, k in props]
    if not vals or max(vals) <= 1.0 or max(vals) > 100.0:
        return
    done = set()
    for b, k in props:
        metric, comma, filt = k.partition(",")
        for key in (k, f"{metric}_stderr{comma}{filt}"):
            if isinstance(b.get(key), float) and (id(b), key) not in done:
                b[key] /= 100.0
                done.add((id(b), key))
    metrics = sorted({k.partition(",")[0] for _, k in props})
    src.note(f"table of {block.args or block.model_type} printed in percent: {', '.join(metrics)} (and their stderrs) "
             "divided by 100")


def _proportion(key: str) -> bool:
    base = key.partition(",")[0]
    return _is_proportion(base) or base in _PROPORTION_METRICS


def _limit_note(block: _Block, name: str, src: SourceFile) -> None:
    if block.limit and block.limit not in ("None", "null"):
        src.note(f"{name}: run with --limit {block.limit} (each task scored on at most that many documents, or that "
                 "share of them; the printed table does not say how many, so no sample counts are stored)")


def read(src: SourceFile):
    """The results of every model in a file of lm-eval's printed tables (see the module's doc)."""
    if len(src.bytes) > TABLE_FILE_BYTES:
        raise IngestError(src.path, f"larger than {TABLE_FILE_BYTES >> 20} MiB: not read as a printed lm-eval table")
    blocks, bad, orphan = _parse(src.text)
    blocks = _readme_blocks(blocks, src)
    read_blocks = [b for b in blocks if b.rows]
    if not read_blocks:
        why = (f"{bad} table row{'s' * (bad != 1)} unreadable (cells missing or not numbers)" if bad
               else f"{orphan} table{'s' * (orphan != 1)} without the line lm-eval prints above (no model named)"
               if orphan else "no table rows under it")
        raise IngestError(src.path, f"holds the line lm-eval prints above its results table but no readable result "
                                    f"row: {why}")
    out = []
    for b in read_blocks:
        out.extend(_block_rows(b, src).records())
    if bad:
        src.note(f"{bad} table row{'s' * (bad != 1)} unreadable (cells missing or not numbers) left out")
    for readme in (False, True):
        empty = sum(1 for b in blocks if not b.rows and (b.json_name is not None) == readme)
        what = "results README heading" if readme else "header line"
        if empty:
            src.note(f"{empty} {what}{'s' * (empty != 1)} with no readable table under {'them' if empty != 1 else 'it'}")
    if orphan:
        src.note(f"{orphan} table{'s' * (orphan != 1)} without the line lm-eval prints above {'them' if orphan != 1 else 'it'} "
                 "(no model or settings named) left out")
    return out


def _readme_blocks(blocks: list, src: SourceFile) -> list:
    """``blocks`` with those of lm-eval's results README layout named and rescaled, and those whose JSON file sits
    beside ``src`` left out (the JSON, read itself, names the model and keeps every digit), with notes.

    The layout (the ``results/<family>/<model>/README.md`` files lm-eval v0.3 shipped, written by its
    ``scripts/make_table_results.py``): a ``# <model>`` heading, then per run a ``## <model>_<tasks>_<N>-shot.json``
    heading and a v0.3 table, every value times 100 except ``ppl`` and SQuAD v2's (already on 0-100).
    """
    readme = [b for b in blocks if b.json_name is not None]
    if not readme:
        return blocks
    folder = src.path.parent
    # Only a plain file name is looked up beside the file: a heading is the file's text, not a path to follow.
    beside = [b for b in readme if _PLAIN_NAME.match(b.json_name) and (folder / b.json_name).is_file()]
    if beside and len(beside) == len(blocks):
        raise ResultsReadElsewhere(src.path, f"lm-eval's results README: the JSON file{'s' * (len(beside) != 1)} "
                                             f"its table{'s' * (len(beside) != 1)} came from "
                                             f"({_names(b.json_name for b in beside)}) sit beside it and are read "
                                             "instead")
    if beside:
        src.note(f"{len(beside)} of {len(readme)} tables of lm-eval's results README left out: read from their JSON "
                 f"files beside it ({_names(b.json_name for b in beside)})")
    run = _model_beside(folder, beside)
    named = set()
    for b in readme:
        b.model = run[0] if run else b.title or folder.name
        where = (f"the JSON file {run[1]} beside it" if run else "the file's heading" if b.title
                 else "the file's folder name")
        if b.rows and b.model not in named:
            named.add(b.model)
            src.note(f"{b.model}: model name taken from {where} (the tables of lm-eval's results README name no "
                     "model)")
        _unscale_readme(b)
    kept = [b for b in blocks if b not in beside]
    no_shots = [b.json_name for b in kept if b.json_name is not None and b.rows and b.shots == "None"]
    if no_shots:
        src.note(f"{len(no_shots)} table{'s' * (len(no_shots) != 1)} of lm-eval's results README stored with no shot "
                 f"count: the JSON file name{'s' * (len(no_shots) != 1)} in {'their' if len(no_shots) != 1 else 'its'} "
                 f"heading{'s' * (len(no_shots) != 1)} ({_names(no_shots)}) give{'s' * (len(no_shots) == 1)} none "
                 "(no _<N>-shot in the name)")
    return kept


def _model_beside(folder, beside: list) -> Optional[tuple]:
    """``(model, file name)`` as the first readable JSON file of ``beside`` names its model (the JSON reader's
    name, so the README's other tables land on the same model); None if none is readable (a hostile or
    truncated file is not an error here: the README's heading names the model then)."""
    import json

    for b in beside:
        path = folder / b.json_name
        try:
            if path.stat().st_size > TABLE_FILE_BYTES:
                continue
            config = json.loads(path.read_bytes()).get("config")
            return model_name(config, path)[0], b.json_name
        except (OSError, ValueError, AttributeError, TypeError, RecursionError, IngestError):
            continue
    return None


def _names(names) -> str:
    names = list(names)
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _unscale_readme(block: _Block) -> None:
    """Divide by 100 what lm-eval's results README script multiplied by 100 (see :func:`_readme_blocks`)."""
    for task, entry in block.results.items():
        if task in _README_UNSCALED_TASKS:
            continue
        for key, value in entry.items():
            if isinstance(value, float) and key not in ("ppl", "ppl_stderr"):
                entry[key] = value / 100.0


def _strict_first(block: dict) -> dict:
    """A task's metrics with the ``strict-match`` filter's first.

    lm-eval prints a task's metrics sorted, so the order its JSON keeps (the task YAML's ``filter_list``, which
    decides the primary metric when two filters score one metric) is lost; the YAMLs that have both (gsm8k and its
    variants, asdiv's chain-of-thought) list ``strict-match`` before ``flexible-extract``.
    """
    if not any(k.endswith(",strict-match") for k in block):
        return block
    return dict(sorted(block.items(), key=lambda kv: not kv[0].endswith(("_stderr,strict-match", ",strict-match"))))


def _model_args(text: str):
    """The printed model arguments: ``pretrained=x,dtype=y`` as is, or the dict lm-eval >= 0.4.10 prints
    (``{'pretrained': 'x'}``) as that dict."""
    t = text.strip()
    if t.startswith("{") and t.endswith("}") and len(t) < 100_000:
        import ast

        try:
            args = ast.literal_eval(t)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return t
        if isinstance(args, dict):
            return {str(k): str(v) for k, v in args.items()}
    return t


def _block_rows(b: _Block, src: SourceFile):
    """One block as the JSON reader's rows (:func:`harness_ext.adapters.lm_eval._rows`), checked as it checks them."""
    shots = None if b.shots in ("None", "") else _shot_count(src.path, _version(b.shots), "num_fewshot in the header line")
    if b.json_name is None:
        config = {"model": b.model_type, "model_args": _model_args(b.args)}
        model, meta = model_name(config, src.pathname)
        _limit_note(b, model, src)
        _percent(b, src)
    else:
        model, meta = b.model, {}  # named and rescaled by _readme_blocks
    bare = sorted(t for t in b.results if t in _MMLU_SUBJECTS)
    if bare:  # lm-eval prints mmlu_anatomy as "anatomy"; so do other families' subject tasks, so no rename is certain
        src.note(f"{model}: {len(bare)} row{'s' * (len(bare) != 1)} named as MMLU subjects without lm-eval's mmlu group "
                 f"above {'them' if len(bare) != 1 else 'it'} kept under the printed name (benchmark lm_eval, not mmlu): "
                 + ", ".join(bare[:6]) + (" ..." if len(bare) > 6 else ""))
    if b.v04:
        doc = {"versions": b.versions, "n-shot": b.n_shot, "groups": b.groups, "group_subtasks": b.subtasks,
               "higher_is_better": b.hib}
    else:
        doc = {"versions": b.versions}
    rows = _rows(src.path, {t: _strict_first(blk) for t, blk in b.results.items()}, v04=b.v04, model=model, model_meta=meta, default_shots=shots, doc=doc)
    rows.has_configs = False
    return _check_proportions(drop_missing(rows, src), src)


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="lm_eval_table",
        description="lm-evaluation-harness printed results tables saved as markdown (v0.4 and v0.3, several models; "
                    "its old results/ READMEs)",
        can_handle=can_handle,
        read=read,
        # 3: RULER's -1 at a sequence length without samples is left out, as in the JSON; 4: lm-eval 0.4's first
        # layouts (no n-shot column, a Task header, alias rows) are read
        revision="4",
    )
