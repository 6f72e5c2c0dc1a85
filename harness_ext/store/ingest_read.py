"""Reading a walked file: one open, fstat and read, and its JSON parsed by orjson where json would agree.

Split from :mod:`harness_ext.store.ingest` (whose loop calls :func:`_read_walked` once per listed file).
"""

from __future__ import annotations

import functools
import os
import re
from stat import S_ISREG

from ..errors import IngestError
from ..types import SourceFile

#: How a Git LFS pointer begins (the LFS specification): a clone made without ``git lfs`` holds these small text files
#: where the data should be.
LFS_POINTER_START = b"version https://git-lfs.github.com/spec/v1"
#: Files up to this size are read once into memory (sniffing, parsing and hashing share the bytes).
SMALL_FILE_BYTES = 16 << 20
#: A compressed stream (an archive member, a ``.gz`` file) may inflate to this many times its compressed size
#: beyond :data:`INFLATION_FREE_BYTES`: text compresses 5 to 50 times, a decompression bomb about 1,000 times.
MAX_INFLATION = 200
#: What any compressed stream may inflate to, whatever its ratio.
INFLATION_FREE_BYTES = 1 << 20


def read_inflated(fh, path, what: str, compressed_size: int, limit: int) -> bytes:
    """Read a decompressing stream ``fh`` (``zipfile.ZipFile.open``, ``gzip.open``) to its end, a block at a time.

    Refused, with an IngestError naming ``path`` and ``what`` (``"member header.json"``), as soon as the
    output passes ``limit`` bytes or :data:`MAX_INFLATION` times ``compressed_size`` (beyond
    :data:`INFLATION_FREE_BYTES`): a few hundred kilobytes that inflate to gigabytes are never held in memory.
    """
    by_ratio = max(INFLATION_FREE_BYTES, MAX_INFLATION * max(int(compressed_size), 0))
    cap = min(limit, by_ratio)
    parts, n = [], 0
    while True:
        block = fh.read(min(1 << 20, cap + 1 - n))
        if not block:
            return b"".join(parts)
        n += len(block)
        if n > cap:
            if cap == limit:
                raise IngestError(path, f"{what} inflates past the {limit:,}-byte limit: not read")
            raise IngestError(path, f"{what} inflates to more than {MAX_INFLATION} times its {compressed_size:,} "
                                    "compressed bytes (a decompression bomb?): not read")
        parts.append(block)


def _read_walked(src: SourceFile, limit: int) -> bool:
    """Read a small regular file the walk listed into ``src.bytes`` (open, fstat, read: no stat by name).

    Returns False when it is not one (anything unusual: a changed file type, a name that is not UTF-8,
    a file over :data:`SMALL_FILE_BYTES`, an error): :func:`harness_ext.store.ingest._check` and the ordinary
    read then say why or read it. The checks are those of ``_check`` on the open file.
    """
    p = src.pathname
    try:
        p.encode("utf-8")
        fd = os.open(p, _OPEN_FLAGS)
    except (UnicodeError, OSError):
        return False
    try:
        st = os.fstat(fd)
        size = st.st_size
        if size > limit or not S_ISREG(st.st_mode):
            return False
        data = os.read(fd, size + 1)  # a regular file reads short only at its end
        if len(data) > size:  # it grew since: to the end, as a plain read() does
            parts = [data]
            while parts[-1]:
                parts.append(os.read(fd, 1 << 20))
            data = b"".join(parts)
    except OSError:
        return False
    finally:
        os.close(fd)
    sd = src.__dict__
    sd["bytes"] = data
    if sd.get("suffix") == ".json" and _fast_json() is not None:
        doc = _parse_fast(data)
        if doc is not _NOT_PARSED:
            sd["_json"] = doc  # SourceFile.json()'s cache: what json.loads would have made of the text
    return True


@functools.lru_cache(maxsize=None)
def _fast_json():
    """``orjson.loads`` if orjson is installed (and $HARNESS_EXT_FAST_JSON is not 0), else None."""
    if os.environ.get("HARNESS_EXT_FAST_JSON", "").strip() == "0":
        return None
    try:
        from orjson import loads
    except ImportError:
        return None
    return loads


_NOT_PARSED = object()
#: Every digit and "-" as "0" and "[" as "{": in the translation a run of 20 zeros may be an integer orjson would
#: read as a float (json: an int): 20 digits, or a minus sign and 19 (or a run of digits and dashes that is
#: neither, looked at again through :data:`_DIGITS`); the count of "{" bounds the nesting depth.
_SHAPE = bytes.maketrans(b"0123456789-[", b"0" * 11 + b"{")
#: Every digit as "0": the exact test, for the few files where :data:`_SHAPE` finds a run.
_DIGITS = bytes.maketrans(b"0123456789", b"0" * 10)


def _parse_fast(data: bytes):
    """``json.loads(data.decode("utf-8"))`` through orjson, 3-4 times faster, or :data:`_NOT_PARSED`.

    Where the two could differ, orjson is not used: it refuses what json reads differently (NaN and
    Infinity, lone surrogates, a byte-order mark, invalid UTF-8: left to json, which raises or reads
    them as before), reads an integer outside [-2**63, 2**64) as a float (a file with 20 digits in a row,
    or a minus sign and 19, is left to json) and nests deeper than json's recursion limit (a file with 512
    brackets or more is left to json).
    """
    t = data.translate(_SHAPE)  # one pass for both checks: digits and "-" as "0", "[" as "{"
    if t.count(b"{") >= 512:
        return _NOT_PARSED
    if b"00000000000000000000" in t:  # one search for both kinds of long integer (most files have neither)
        t = data.translate(_DIGITS)
        if b"00000000000000000000" in t or b"-0000000000000000000" in t:
            return _NOT_PARSED
    try:
        return _fast_json()(data)
    except Exception:  # noqa: BLE001 - orjson.JSONDecodeError, RecursionError: json.loads says what is wrong
        return _NOT_PARSED


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _bytes_alone(src: SourceFile) -> bool:
    """Whether what a source means is its bytes, read already: no reading options and no sidecar beside it."""
    d = src.__dict__
    return "bytes" in d and not src.options and ("_no_sidecars" in d or src._siblings is not None
                                                  and not src.sidecars())


def lfs_pointer_reason(head: bytes) -> str:
    """The reason a file whose first bytes are ``head`` holds no results when it is a Git LFS pointer, else ''."""
    if not head.startswith(LFS_POINTER_START):
        return ""
    size = next((w for line in head.splitlines() if line.startswith(b"size ") for w in line.split()[1:2]), b"")
    of = f" of {int(size):,} bytes" if size.isdigit() else ""
    return (f"a Git LFS pointer, not the file: its content{of} was never downloaded (run 'git lfs pull' in the "
            "repository it came from)")


def unclaimed_reason(src: SourceFile) -> str:
    """Why a file no adapter claims holds no results, as ``": reason"``, or '': a Git LFS pointer, a ``.json``
    file that is not JSON (empty, truncated: a truncated results file is the usual cause, and the parser's position
    says where it ends), or a near miss of a known format (:func:`_near_miss`)."""
    if src.is_dir:
        return ""
    lfs = lfs_pointer_reason(src.head)
    if lfs:
        return f": {lfs}"
    if src.suffix in (".csv", ".tsv"):
        return _csv_near_miss(src)
    if src.suffix != ".json":
        return _table_near_miss(src)
    try:
        doc = src.json()
    except UnicodeDecodeError:
        return ": not UTF-8 text"
    except ValueError as exc:
        return ": empty" if not src.bytes.strip() else f": not valid JSON ({exc})"
    except Exception:
        return ""
    return _near_miss(doc, src)


def _near_miss(doc, src: SourceFile) -> str:
    """The part a JSON document lacks to be read, when it is nearly a known format, as ``": reason"``, else ''.

    HELM writes a run's ``stats.json`` beside its ``run_spec.json`` (which names the model and scenario), and a
    run is read as that folder; Inspect AI writes ``status`` in every log, and reads a log without it as one still
    running (``"started"``), so its scores may be a part of the run's.
    """
    if (isinstance(doc, list) and doc and all(isinstance(s, dict) for s in doc[:50])
            and all(isinstance(s.get("name"), dict) and "split" in s["name"] and "count" in s for s in doc[:50])):
        if (src.path.parent / "run_spec.json").exists():
            return (": a HELM run's stats.json; a run is read as its folder, with the run_spec.json beside it that "
                    f"names its model and scenario (ingest {src.path.parent.name})")
        return (": a HELM stats.json without the run's run_spec.json, which names its model and scenario; a run is "
                "read as its folder holding both")
    ev = doc.get("eval") if isinstance(doc, dict) else None
    if isinstance(ev, dict) and "task" in ev and "model" in ev and "results" in doc and "status" not in doc:
        return (": an Inspect AI log without 'status' (Inspect writes 'success' in every finished log and reads a "
                "log without it as still running, so its scores may be part of a run's); the log as Inspect "
                "wrote it (.eval or .json) is read")
    return ""


def _csv_near_miss(src: SourceFile) -> str:
    """``": reason"`` for a CSV or TSV table no adapter claims: its header names no column the csv reader takes for
    the models (ARC Prize's board names them ``Config`` and ``Display_Name``, a submissions board ``team``)."""
    from harness_ext.adapters.csv_dialect import _split, sniff_delimiter

    head = src.head.decode("utf-8", "replace").lstrip("\ufeff")
    if not head:
        return ": empty"
    # The csv reader's own choice among the delimiters that split the header into columns (as for item tables).
    delim, fitting = sniff_delimiter(head, src.suffix, lambda cells: True, len(src.head) >= src.HEAD_BYTES)
    delim = delim or next((d for d in (",", *fitting) if d in fitting), None)
    if delim is None:
        return ""
    lines = [ln for ln in head.splitlines() if ln.strip()]
    cells = [c.strip() for c in _split(lines[0], delim)]
    shown = ", ".join(cells[:8]) + (", ..." if len(cells) > 8 else "")
    rows = _dataset_rows(cells[0], [_split(ln, delim)[0].strip() for ln in lines[1:21]])
    if wide := wide_item_table_hint(cells):
        return f": a table whose header names no model column (it has {shown}); {wide}"
    if rows:
        return (f": a table whose header names no model column (it has {shown}); its rows look like datasets "
                f"({rows}) and its other columns like the models: ingest it with --models-as-columns (or "
                "'models: columns' in its sidecar, <file>.meta.yaml) to read each column after the first as a "
                f"model; renamed to 'model', {cells[0]!r} would store the datasets as models")
    return (f": a table whose header names no model column (it has {shown}); rename the column that names the "
            "models to 'model'")


def wide_item_table_hint(header) -> str:
    """What to do with a table whose first column is named as item ids (``item``, ``doc_id``, ...) and which has
    other columns, and no sidecar: an items x models table, which only its sidecar declares; else ``""``."""
    from .item_format import ITEM_COLUMNS

    cells = [str(c).strip() for c in header]
    if len(cells) < 2 or cells[0].lower() not in ITEM_COLUMNS:
        return ""
    return (f"its first column names items ({cells[0]}), so its other columns may be models: a wide item-response "
            "table (items x models) is read with its sidecar <file>.meta.yaml declaring it ('items:' with "
            "'layout: items_x_models', and its 'task:' and 'metric:')")


#: First-column headers of a table with one row per dataset (TSB-AD's results tables: ``file``, then a column
#: per detector), and the file names such a column lists.
_DATASET_KEYS = frozenset({"file", "filename", "file_name", "dataset", "datasets", "dataset_name", "data", "task",
                           "tasks", "task_name", "problem", "series"})
_DATA_FILE = re.compile(r".+\.(?:csv|tsv|txt|json|jsonl|parquet|npy|npz|arff|ts|h5)", re.I)


def _dataset_rows(first: str, keys: list) -> str:
    """Why a table's rows look like datasets (its first column named as one, or listing data files), or ``""``."""
    keys = [k for k in keys if k]
    if first.lower() in _DATASET_KEYS:
        return f"first column {first!r}" + (f": {', '.join(keys[:2])}, ..." if keys else "")
    files = [k for k in keys if _DATA_FILE.fullmatch(k)]
    if len(keys) >= 3 and len(files) >= 0.8 * len(keys):
        return f"its first column lists data files: {', '.join(files[:2])}, ..."
    return ""


#: The header of a results table lm-eval prints, without padding (v0.4's with or without its Filter column, v0.3's).
_BARE_TABLE_HEADS = (b"|Tasks|Version|", b"|Task|Version|", b"|Groups|Version|")


def bare_table(data: bytes) -> bool:
    """Whether ``data`` holds a results table lm-eval printed (its header row, then a ``|---`` row), with or without
    the line above it that names the model (:func:`is_printed_table` needs that line)."""
    if b"Version" not in data:
        return False
    lines = data.split(b"\n")
    for i, line in enumerate(lines[:-1]):
        if line.lstrip().startswith(b"|") and b"Version" in line:
            flat = line.replace(b" ", b"").replace(b"\t", b"")
            if flat.startswith(_BARE_TABLE_HEADS) and lines[i + 1].lstrip().startswith((b"|-", b"|:")):
                return True
    return False


def _table_near_miss(src: SourceFile) -> str:
    """``": reason"`` for a text file holding a results table lm-eval printed that is not read as one: without the
    line lm-eval prints above it (which names the model), or saved under a suffix other than ``.md``."""
    try:
        size = src.path.stat().st_size
        if size > TABLE_FILE_BYTES:
            return f": {markdown_too_large(size, src.suffix)}" if src.suffix in PAGE_SUFFIXES else ""
        data = src.bytes
    except (OSError, IngestError):
        return ""
    if src.suffix in HTML_SUFFIXES:
        return _pipe_tables_reason(data, src.suffix)
    if not bare_table(data):
        return _fenced_results_reason(data) or (_pipe_tables_reason(data) if src.suffix in TABLE_SUFFIXES else "")
    if is_printed_table(data):
        return (": a results table lm-eval printed, in a file not named .md or .markdown, the files such tables are "
                "read from (rename it, e.g. results.md)")
    if any(b"batch_size:" in ln and (b"gen_kwargs:" in ln or b"provide_description:" in ln) for ln in data.splitlines()):
        return (": a results table like those lm-eval prints, with the line naming the model, but its header is not "
                "one lm-eval printed (the columns Tasks, Version, Filter, n-shot, Metric, Value, Stderr, or v0.3's "
                "Task, Version, Metric, Value, Stderr)")
    return (": a results table lm-eval printed, without the line lm-eval prints above it that names the model and "
            "the run's settings ('hf (pretrained=MODEL), gen_kwargs: (None), limit: None, num_fewshot: 0, "
            "batch_size: 8'); with no model named its rows are not read (paste that line above the table)")


#: Suffixes of the text files a walk offers only when they hold a table lm-eval printed (:func:`printed_table_file`).
TABLE_SUFFIXES = (".md", ".markdown")
#: Suffixes of the pages a walk offers only when they hold a leaderboard table (:func:`html_table_file`).
HTML_SUFFIXES = (".html", ".htm")
#: The text files a walk looks into before offering them (:func:`page_file`).
PAGE_SUFFIXES = TABLE_SUFFIXES + HTML_SUFFIXES


def page_file(suffix: str, entry) -> bool:
    """Whether the walk offers the Markdown or HTML file ``entry`` (:func:`printed_table_file`,
    :func:`html_table_file`)."""
    return printed_table_file(entry) if suffix in TABLE_SUFFIXES else html_table_file(entry)
#: A markdown file larger than this is passed over unread: lm-eval's printed tables of a few hundred runs are far smaller.
TABLE_FILE_BYTES = 4 << 20
#: The table headers lm-eval prints, without their padding (v0.4 with or without its direction column, and v0.3).
_TABLE_HEADS = (b"|Tasks|Version|Filter|n-shot|Metric|", b"|Groups|Version|Filter|n-shot|Metric|",
                b"|Task|Version|Metric|Value||Stderr|",
                # lm-eval 0.4's first releases: no n-shot column, the first headed Task or Tasks
                b"|Tasks|Version|Filter|Metric|", b"|Task|Version|Filter|Metric|", b"|Groups|Version|Filter|Metric|")


def markdown_file(src: SourceFile) -> bool:
    """Whether ``src`` is a markdown file (:data:`TABLE_SUFFIXES`) of at most :data:`TABLE_FILE_BYTES`: the text files
    read for a printed lm-eval table or a model card."""
    if src.is_dir or src.suffix not in TABLE_SUFFIXES:
        return False
    try:
        return src.path.stat().st_size <= TABLE_FILE_BYTES
    except OSError:
        return False


def is_printed_table(data: bytes) -> bool:
    """Whether ``data`` holds a table lm-eval printed at the end of a run, with the line it prints above it.

    The line names the model and the run's settings (v0.4: ``hf (pretrained=...), gen_kwargs: (None), limit: None,
    num_fewshot: None, batch_size: 8``; v0.3: ``... provide_description: False, ...``); the next line that is not blank
    or a code fence must be the table's header. In lm-eval's old ``results/<family>/<model>/README.md`` files the
    line is a heading naming the run's JSON file (``## bloom-560m_xnli_0-shot.json``) and the header v0.3's. A plain scan of lines, no regular expression: a 4 MiB line of
    repeated keywords costs one pass.
    """
    if b"Version" not in data:
        return False
    readme = b".json" in data  # lm-eval's results README layout: a "## <run>.json" heading above each v0.3 table
    if b"batch_size:" not in data and not readme:
        return False
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        heading = readme and line.startswith(b"## ") and line.rstrip().endswith(b".json")
        if not heading and (b"batch_size:" not in line
                            or (b"gen_kwargs:" not in line and b"provide_description:" not in line)):
            continue
        for nxt in lines[i + 1:i + 4]:
            flat = nxt.strip()
            if not flat or flat.startswith(b"```"):
                continue
            flat = flat.replace(b" ", b"").replace(b"\t", b"")
            if flat.startswith(_TABLE_HEADS[2] if heading else _TABLE_HEADS):
                return True
            break
    return False


def printed_table_file(entry) -> bool:
    """Whether the walked ``os.DirEntry`` ``entry`` (a ``.md`` or ``.markdown`` file) holds a table lm-eval printed
    (:func:`is_printed_table`), or such a table without the line naming the model (:func:`bare_table`: offered so
    the walk reports it skipped, with what it lacks, instead of passing it over in silence), or a leaderboard pipe
    table (:mod:`harness_ext.adapters.csv_markdown`); a file over :data:`TABLE_FILE_BYTES` is passed over unless its
    head shows a leaderboard table (offered to be refused with its size), as is one that cannot be read."""
    from harness_ext.adapters.csv_html import page_leaderboard, page_leaderboard_in_head

    try:
        if not entry.is_file(follow_symlinks=False):
            return False
        if entry.stat(follow_symlinks=False).st_size > TABLE_FILE_BYTES:  # offered to be refused with its size
            return page_leaderboard_in_head(entry.path, ".md")
        with open(entry.path, "rb") as fh:
            data = fh.read(TABLE_FILE_BYTES + 1)
        return (is_printed_table(data) or bare_table(data) or fenced_results(data) is not None or model_index_card(data)
                or details_card(data) is not None or page_leaderboard(data, ".md"))
    except OSError:
        return False


def html_table_file(entry) -> bool:
    """Whether the walked ``os.DirEntry`` ``entry`` (an ``.html`` or ``.htm`` file) holds a leaderboard table
    (:mod:`harness_ext.adapters.csv_html`): other pages (a documentation site, a report) are passed over; one over
    :data:`TABLE_FILE_BYTES` is offered when its head shows a leaderboard table, to be refused with its size."""
    from harness_ext.adapters.csv_html import page_leaderboard, page_leaderboard_in_head

    try:
        if not entry.is_file(follow_symlinks=False):
            return False
        if entry.stat(follow_symlinks=False).st_size > TABLE_FILE_BYTES:
            return page_leaderboard_in_head(entry.path, ".html")
        with open(entry.path, "rb") as fh:
            return page_leaderboard(fh.read(TABLE_FILE_BYTES + 1), ".html")
    except OSError:
        return False


#: The YAML front matter of a markdown file: a first line ``---``, then lines up to the next ``---``.
FRONT_MATTER = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n(.*?)^---[ \t]*\r?$", re.S | re.M)
_MODEL_INDEX = re.compile(rb"^model-index[ \t]*:", re.M)


def model_index_card(data: bytes) -> bool:
    """Whether ``data`` is a markdown file whose YAML front matter has a ``model-index`` key (a Hugging Face model
    card stating its evaluation results: :mod:`harness_ext.adapters.model_card`)."""
    if not data.startswith((b"---", b"\xef\xbb\xbf---")) or b"model-index" not in data:
        return False
    m = FRONT_MATTER.match(data)
    return bool(m and _MODEL_INDEX.search(m.group(1)))


#: A details dataset's card (lighteval's and lm-eval's ``push_to_hub``): its front matter names the model evaluated in
#: its title (``pretty_name: Evaluation run of <model>``; the line and the indented lines continuing it) ...
_PRETTY_NAME = re.compile(rb"^pretty_name:[ \t]*[\"']?Evaluation run of\b[^\n]*\n?(?:[ \t]+[^ \t\r\n#][^\n]*\n?)*", re.M)
_TITLE = "Evaluation run of "
#: ... and its body quotes the latest results file in the first fence under "## Latest results".
_LATEST = re.compile(rb"^## Latest results[ \t]*\r?\n.*?^```[\w]*[ \t]*\r?\n(.*?)^```", re.M | re.S)


def _title_model(title: bytes) -> str:
    """The model a details card's ``pretty_name`` lines name (``Evaluation run of <model>``), read as YAML reads the
    title (quoted or plain, spaces and a title folded onto the next lines included), or '' when it names none."""
    import yaml

    try:
        value = yaml.safe_load(title.decode("utf-8"))  # one key and its scalar: a few hundred bytes
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return ""
    value = value.get("pretty_name") if isinstance(value, dict) else None
    if not isinstance(value, str) or not value.startswith(_TITLE):
        return ""
    return value[len(_TITLE):].strip()


def details_card(data: bytes):
    """``(model, the quoted results' text)`` of the card of a details dataset that lighteval or lm-eval pushed to the
    Hub (front matter ``pretty_name: Evaluation run of <model>``, a fence under ``## Latest results``), or None.
    ``model`` is '' when the title names no model that can be read (the adapter refuses the card, saying so)."""
    if not data.startswith((b"---", b"\xef\xbb\xbf---")) or b"Latest results" not in data:
        return None
    m = FRONT_MATTER.match(data)
    name = _PRETTY_NAME.search(m.group(1)) if m else None
    latest = _LATEST.search(data, m.end()) if name else None
    if not latest:
        return None
    title = name.group()
    return (_title_model(title) if len(title) <= 4096 else ""), latest.group(1)


#: A fenced code block of a markdown file: its info string (``json``, ``python``) and its text.
_FENCE = re.compile(rb"^[ \t]*```[ \t]*(\w*)[^\n]*\n(.*?)^[ \t]*```", re.M | re.S)
#: What a results file holds that a fenced block pasting one shows: lm-eval's and lighteval's ``"results"`` key
#: beside a task's metrics (``"acc"``) or the Open LLM Leaderboard's ``harness|task|shots`` names.
_RESULTS_MARKS = (b'"harness|', b'"config_general"', b'"acc"', b'"acc_norm"', b'"exact_match', b'"versions"')


def fenced_results(data: bytes):
    """The text of the first fenced code block of a markdown file that pastes a results file (a model card's
    "Open LLM Leaderboard evaluation results" or lm-eval's JSON), or None. A plain scan for the fence marker first,
    so a file without one costs one pass."""
    if b"```" not in data or b'"results"' not in data:
        return None
    for m in _FENCE.finditer(data):
        block = m.group(2)
        if b'"results"' in block and any(mark in block for mark in _RESULTS_MARKS):
            return block
    return None


def markdown_too_large(size: int, suffix: str = ".md") -> str:
    """Why a Markdown (or HTML: ``suffix``) file of ``size`` bytes is not read: over :data:`TABLE_FILE_BYTES`."""
    kind = "an HTML" if suffix in HTML_SUFFIXES else "a Markdown"
    return (f"{kind} file of {size:,} bytes; tables are read from files of at most {TABLE_FILE_BYTES >> 20} MiB "
            "(write a leaderboard this large as CSV)")


def _pipe_tables_reason(data: bytes, suffix: str = ".md") -> str:
    """``": reason"`` for a Markdown or HTML file whose tables (pipe or HTML) are none a leaderboard
    (:mod:`harness_ext.adapters.csv_markdown`, :mod:`harness_ext.adapters.csv_html`): why each is not, else ''."""
    from harness_ext.adapters.csv_html import page_tables

    boards, others, _ = page_tables(data, suffix)
    if boards or not others:
        return ""
    whys = [f"{t.where()}: {why}" for t, why in others[:4]]
    more = f"; and {len(others) - 4} more" if len(others) > 4 else ""
    kind = "an HTML" if suffix in HTML_SUFFIXES else "a Markdown"
    return (f": {kind} file whose {'table is' if len(others) == 1 else f'{len(others)} tables are'} no leaderboard "
            f"the CSV adapter reads (a model column, and a column of numbers beside it): {'; '.join(whys)}{more}")


def _fenced_results_reason(data: bytes) -> str:
    """``": reason"`` for a markdown file pasting a results file in a code fence (:func:`fenced_results`), else ''."""
    block = fenced_results(data)
    if block is None:
        return ""
    import json

    try:
        json.loads(block)
        state = "the block is whole JSON: save it as a .json file and ingest that"
    except ValueError as exc:
        state = f"the block is not whole JSON as pasted ({exc}), so the run's own results file is the one to ingest"
    return (": results pasted as JSON in a code fence of a markdown file (a model card); results are read from "
            f"result files, not from a card's text: {state}")
