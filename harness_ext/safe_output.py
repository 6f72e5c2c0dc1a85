"""Writing names that came from result files into configs and file names, safely.

Dataset, model and task names are read from files anyone can write, and
``reduce`` puts them into an lm-eval YAML, a HELM HOCON conf, a task list and
file names that users then run. Every such name goes through this module:
the format's own serializer (:func:`yaml_text`, :func:`hocon_string`), an
escaped one-line rendering for comments (:func:`comment`), a check for
line-based lists (:func:`list_line`), or a name check for files
(:func:`check_file_name`, :func:`check_group_name`). Writers receive an
:class:`OutputDir` and return the file names they wrote; the core
(:func:`checked_outputs`) refuses anything outside the output directory.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
from pathlib import Path
from typing import Iterable

from .errors import HarnessExtError, PluginError
from .types import _CONTROL as _UNSAFE_IN_LIST  # a line of a list holds what a stored name may (a tab may stay)

#: A file or group name: letters, digits, ``.``, ``_``, ``-``; not starting with ``.`` or ``-``.
SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
#: Longest group name (it becomes part of file names and of lm-eval's task index).
MAX_GROUP_NAME = 100
#: Longest file name a writer may produce (file systems allow 255 bytes).
MAX_FILE_NAME = 200
#: Characters that end a line somewhere (YAML, HOCON, editors, ``str.splitlines``) or are control codes.
_UNSAFE_IN_LINE = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
#: Control codes pyhocon cannot read back from a quoted string (it does not decode ``\\uXXXX``).
_NOT_HOCON = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def check_group_name(name: str) -> str:
    """Return ``name`` if it can be an lm-eval group and a file stem, else raise.

    Raises
    ------
    HarnessExtError
        If it is empty, longer than ``MAX_GROUP_NAME``, or has a character other than
        letters, digits, ``.``, ``_``, ``-`` (so no path separator and no ``..``).
    """
    if not isinstance(name, str) or not name:
        raise HarnessExtError("group name must be a non-empty string")
    if len(name) > MAX_GROUP_NAME:
        raise HarnessExtError(f"group name is {len(name)} characters long; at most {MAX_GROUP_NAME} are allowed")
    if not SAFE_NAME_RE.match(name) or ".." in name:
        raise HarnessExtError(f"group name {name!r} is not allowed: use letters, digits, '.', '_' and '-' "
                              "(it names files inside --out)")
    return name


def harness_task_problem(name) -> str:
    """Why ``name`` cannot be the lm-eval task an item table's task is declared to be (empty if it can).

    A plain lm-eval task name: letters, digits, ``.``, ``_`` and ``-``, not starting with ``.`` or ``-``, no ``..``,
    at most ``MAX_GROUP_NAME`` characters. It is written into the group YAML's task list, the ``--samples`` file and
    lm-eval's ``samples_<task>_<date>.jsonl`` name, so nothing else may pass: no path separator (the log would be
    written outside the output folder), no YAML syntax (``!function``, ``{``, a line break), no glob.
    """
    if not isinstance(name, str) or not name:
        return f"{name!r} is not a task name (a non-empty string)"
    if len(name) > MAX_GROUP_NAME:
        return f"{quoted(name[:40])}... is {len(name)} characters long; at most {MAX_GROUP_NAME} are allowed"
    if not SAFE_NAME_RE.match(name) or ".." in name or name.lower().endswith((".yaml", ".yml")):
        return (f"{quoted(name)} is not a plain lm-eval task name: use letters, digits, '.', '_' and '-' (no path, "
                "no YAML, no glob; lm_eval --tasks loads a name ending in .yaml as a file)")
    return ""


def check_file_name(name, what: str = "file name") -> str:
    """Return ``name`` as a single safe path component, else raise HarnessExtError."""
    if not isinstance(name, str) or not name:
        raise HarnessExtError(f"{what} must be a non-empty string, got {name!r}")
    if len(name) > MAX_FILE_NAME:
        raise HarnessExtError(f"{what} is {len(name)} characters long; at most {MAX_FILE_NAME} are allowed")
    if not SAFE_NAME_RE.match(name) or name in (".", ".."):
        raise HarnessExtError(f"{what} {name!r} is not allowed: one path component of letters, digits, '.', '_', '-'")
    return name


#: Unicode categories a quoted name shows escaped: control and format characters (bidirectional overrides too),
#: lone surrogates and line or paragraph separators; letters of every script are shown as they are.
_UNSHOWN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def escape_line(text) -> str:
    """``text`` on one line: line breaks and control codes as ``\\n``-style escapes, format characters as
    :func:`shown_text` writes them."""
    return shown_text(_UNSAFE_IN_LINE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text)))


#: What :func:`shown_text` looks at: ASCII controls but line feed and tab, and every non-ASCII character.
_MAYBE_UNSHOWN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\U0010ffff]")


@functools.lru_cache(maxsize=4096)
def _shown_char(c: str) -> str:
    import unicodedata

    if c >= "\x80" and unicodedata.category(c) not in _UNSHOWN_CATEGORIES:
        return c
    return f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"


def shown_text(text) -> str:
    """``text`` for a terminal or a comment: what a terminal would not show as itself written as an escape.

    A name from a result file may hold a right-to-left override (U+202E) or another format character, which a
    terminal or an editor does not show but obeys: the line is shown reordered, or two names look the same. Control
    and format characters, lone surrogates and line or paragraph separators are written as ``\\u202e``-style
    escapes, as :func:`quoted` writes them; line feeds and tabs stay (the text may be a table of many lines), and
    letters of every script are shown as they are. For human-facing text only: a name a harness reads (a YAML key, a
    line of the task list) is written as it is named.
    """
    s = str(text)
    return _MAYBE_UNSHOWN.sub(lambda m: _shown_char(m.group()), s)


def comment(text, prefix: str = "# ") -> str:
    """A one-line comment whatever ``text`` holds (names inside it should be :func:`quoted`)."""
    return prefix + escape_line(text)


def quoted(name) -> str:
    """A name for human-readable text (comments, messages): JSON-quoted, so its extent is unambiguous, on one line.

    Letters of any script stay readable; what a terminal would not show as itself (control and format characters,
    line separators, lone surrogates) is written as JSON escapes it (``\\u2028``).
    """
    import unicodedata

    text = json.dumps(str(name), ensure_ascii=False)  # escapes quotes, backslashes and C0 controls
    return "".join(json.dumps(c)[1:-1] if unicodedata.category(c) in _UNSHOWN_CATEGORIES else c for c in text)


def short_name(name, limit: int = 80) -> str:
    """``name`` cut to ``limit`` characters, ``...`` ending a cut one: a name from a result file in a message that
    lists names (a task name of 200,000 characters made a warning of that size)."""
    name = str(name)
    return name if len(name) <= limit else name[: limit - 3] + "..."


# A spreadsheet program runs a cell starting with one of these as a formula (OWASP, "CSV Injection"): a model named
# '=HYPERLINK("http://x")' in a result file would be a live link in predictions.csv opened in Excel.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value):
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)  # "-0.5", "+3" are numbers written as text, no formula
        return value
    except ValueError:
        return "'" + value


def spreadsheet_safe(frame):
    """A copy of the DataFrame ``frame`` whose text cells, index labels and column names starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return (and not a number) begin with an apostrophe, as OWASP advises against
    CSV injection: names come from third-party result files, and a spreadsheet program runs such a cell as a
    formula. Every CSV harness-ext writes goes through it (:func:`csv_text`); JSON keeps the names as they are."""
    import pandas as pd

    texty = pd.api.types.is_string_dtype  # object and str columns (pandas 3 infers str for text)

    def labels(index):
        if isinstance(index, pd.MultiIndex):
            return index.set_levels([lv.map(_cell) if texty(lv) else lv for lv in index.levels],
                                    verify_integrity=False)
        return index.map(_cell) if texty(index) else index

    out = frame.copy()
    for i in [i for i, dt in enumerate(out.dtypes) if texty(dt)]:
        out.isetitem(i, out.iloc[:, i].map(_cell))
    out.index, out.columns = labels(out.index), labels(out.columns)
    return out


def csv_text(frame, path_or_buf=None, **kwargs):
    """``frame.to_csv(path_or_buf, **kwargs)`` of :func:`spreadsheet_safe`'s copy: the one way harness-ext writes
    a CSV."""
    return spreadsheet_safe(frame).to_csv(path_or_buf, **kwargs)


def yaml_text(doc) -> str:
    """``doc`` as YAML through ``yaml.safe_dump``, checked to load back equal.

    Raises
    ------
    HarnessExtError
        If the dump does not read back as ``doc`` (it always should; this is the proof).
    """
    import yaml

    # ASCII output: PyYAML writes U+0085 raw with allow_unicode and reads it back as a line break.
    text = yaml.safe_dump(doc, sort_keys=False, width=1 << 16)
    if yaml.safe_load(text) != doc:  # pragma: no cover - PyYAML's emitter escapes what it must
        raise HarnessExtError("a name could not be written to YAML unchanged")
    return text


def hocon_string(value) -> str:
    """A HOCON quoted string (JSON string syntax) that pyhocon, HELM's reader, reads back unchanged.

    Raises
    ------
    HarnessExtError
        If ``value`` has control codes pyhocon cannot read back.
    """
    s = str(value)
    bad = _NOT_HOCON.search(s)
    if bad:
        raise HarnessExtError(f"{quoted(s)} cannot be written to a HOCON conf: control character {bad.group()!r}")
    return json.dumps(s, ensure_ascii=False)


def list_line(name, what: str = "name") -> str:
    """``name`` as one line of a line-based list; raise if it would not stay one line.

    Raises
    ------
    HarnessExtError
        If ``name`` is empty, has surrounding white space, a line break or a control code.
    """
    s = str(name)
    if not s.strip() or s != s.strip() or _UNSAFE_IN_LIST.search(s):
        raise HarnessExtError(f"{what} {json.dumps(s)} cannot be one line of a list "
                              "(empty, surrounding spaces, a line break or a control character)")
    return s


def _write_content(path: Path, content, fd=None) -> None:
    """Write ``content`` to ``path``: text (UTF-8), bytes, or a callable given the path (it writes the file itself:
    ``fig.savefig``, ``frame.to_parquet``). ``fd``, when given, is an open descriptor of ``path`` to write through."""
    if callable(content):
        if fd is not None:
            os.close(fd)
        content(path)
        return
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    if fd is None:
        path.write_bytes(data)
        return
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def replace_file(path, content) -> None:
    """Write ``content`` to ``path`` through a new file moved into place.

    Parameters
    ----------
    path : path
        The file to write.
    content : str, bytes or callable
        Text (written as UTF-8), bytes, or a function called with the temporary file's path that writes it
        (a figure's ``savefig``, a frame's ``to_parquet``; the temporary name does not end with the file's suffix).

    A file or link already at ``path`` is replaced, never written through: a folder received from someone
    else (a results folder ``predict`` writes beside) may hold a link of that name pointing anywhere.
    """
    import secrets

    path = Path(path)
    tmp = path.with_name(f".{path.name[:100]}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o666)
    try:
        _write_content(tmp, content, fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_file(path, content) -> None:
    """Write a file the user named (``--json FILE``, ``-o``, ``--out`` tables and figures) so it is whole or absent.

    Parameters
    ----------
    path : path
        The file to write.
    content : str, bytes or callable
        What :func:`replace_file` takes: text (UTF-8), bytes, or a function that writes the path it is given.

    A regular file, or a new one, is written through a new file moved into place (:func:`replace_file`): a
    Ctrl-C or a full disk while writing leaves the old file as it was, never a truncated one. A link, a device or
    a pipe (``--json /dev/stdout``) is written through, as the user named it.
    """
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        _write_content(path, content)
    else:
        replace_file(path, content)


class OutputDir(os.PathLike):
    """The directory handle a manifest writer gets: it writes files by name, inside the directory only.

    ``os.fspath(out)`` and ``Path(out)`` give the directory (writers that build paths themselves
    still work); :meth:`write_text` checks the name first. Either way the core checks every
    name a writer returns (:func:`checked_outputs`).
    """

    def __init__(self, path, writer: str = "writer", shown=None):
        self.path = Path(path)
        self.writer = writer
        #: The folder the files end up in, for text that names it (run hints): the core may
        #: stage a writer's files elsewhere and move them there only once all are checked.
        self.shown = Path(path) if shown is None else Path(shown)

    def __fspath__(self) -> str:
        return str(self.path)

    def __truediv__(self, name) -> Path:
        return self.path / check_file_name(str(name), f"file name from {self.writer}")

    def __repr__(self):
        return f"OutputDir({str(self.path)!r})"

    def write_text(self, name: str, text: str) -> str:
        """Write ``text`` (UTF-8) to ``name`` inside the directory; returns ``name``."""
        (self / name).write_text(text, encoding="utf-8")
        return name

    def write_bytes(self, name: str, data: bytes) -> str:
        (self / name).write_bytes(data)
        return name


def checked_outputs(returned, out_dir, writer: str, shown=None) -> list:
    """The files a writer says it wrote, as paths inside ``out_dir``.

    Parameters
    ----------
    returned
        What the writer returned: a list of file names (or paths) inside ``out_dir``.
    writer : str
        The writer's name and source, for the error.
    shown : path, optional
        The folder named in errors (default ``out_dir``): the user's, when ``out_dir`` is a stage.

    Raises
    ------
    PluginError
        If the writer returned something other than a list of names, a name that is not a safe
        path component, a name resolving outside ``out_dir``, or a file it did not write.
    """
    out_dir = Path(out_dir)
    root = out_dir.resolve()
    if isinstance(returned, (str, bytes, os.PathLike)) or not isinstance(returned, Iterable):
        raise PluginError(f"manifest writer {writer} returned {type(returned).__name__}; expected a list of file names")
    paths = []
    for item in list(returned):
        if not isinstance(item, (str, os.PathLike)):
            raise PluginError(f"manifest writer {writer} returned a {type(item).__name__} in its list; expected file names")
        p = Path(item)
        full = p if p.is_absolute() else out_dir / p
        if not p.is_absolute() and not full.is_file() and p.is_file():
            # Writers may return paths as they built them (out_dir / name), relative to the
            # working directory when --out is relative; the containment check below still applies.
            full = p
        try:
            rel = full.resolve().relative_to(root)
        except ValueError:
            raise PluginError(f"manifest writer {writer} wrote {str(item)!r}, outside the output directory "
                              f"{shown or out_dir} (that file was left where it is: it may have been there "
                              "before)") from None
        try:
            for part in rel.parts or (".",):
                check_file_name(part)
        except HarnessExtError as exc:
            raise PluginError(f"manifest writer {writer}: {exc}") from None
        if not full.is_file():
            raise PluginError(f"manifest writer {writer} returned {str(item)!r}, which is not a file it wrote")
        paths.append(out_dir / rel)
    return paths


def listing(folder) -> dict:
    """``{name: (size, mtime_ns)}`` of the entries of ``folder`` (empty when it does not exist)."""
    out = {}
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                try:
                    st = e.stat(follow_symlinks=False)
                    out[e.name] = (st.st_size, st.st_mtime_ns)
                except OSError:
                    out[e.name] = None
    except (FileNotFoundError, NotADirectoryError):
        pass
    return out


class WriterWatch:
    """What a manifest writer changed outside its folder: the folder's parent, the final folder and its parent.

    Writers run in ``stage / "files"`` inside a private folder ``stage``, so a write to
    ``../x`` lands in ``stage`` (no other process writes there); the final folder and its
    parent are listed when the watch is made and compared by :meth:`escapes`, so a writer
    going around the staging (writing into ``--out`` itself or beside it) is named too.
    """

    def __init__(self, stage, out_dir):
        self.stage, self.out_dir = Path(stage), Path(out_dir)
        self.watched = [self.out_dir, self.out_dir.parent]
        self.before = [listing(f) for f in self.watched]

    def escapes(self) -> list:
        """Paths created, changed or removed outside the writer's folder since ``__enter__``."""
        out = [self.stage / n for n in sorted(listing(self.stage)) if n != "files"]
        for folder, before in zip(self.watched, self.before):
            after = listing(folder)
            ignore = {self.stage.name}
            if folder == self.out_dir.parent and before.get(self.out_dir.name) is not None:
                ignore.add(self.out_dir.name)  # the folder's own entries are compared one by one
            out += [folder / n for n in sorted(set(before) | set(after)) if n not in ignore and before.get(n) != after.get(n)]
        return out

    def remove_new(self, paths) -> list:
        """Remove the files among ``paths`` that did not exist when the watch was made; the others, kept.

        Only new files and new empty folders are removed: a changed or removed entry cannot be put
        back, and a new folder with files beside ``--out`` may be another program's.
        """
        before = {f: b for f, b in zip(self.watched, self.before)}
        kept = []
        for p in paths:
            if self.stage in p.parents:
                continue  # the stage is removed whole
            new = p.name not in before.get(p.parent, {p.name: None})
            if new and (p.is_symlink() or p.is_file()):
                p.unlink(missing_ok=True)
            elif new and p.is_dir():
                with contextlib.suppress(OSError):
                    p.rmdir()  # only when empty (its new files are removed above: --out itself comes first)
                if p.exists():
                    kept.append(p)
            else:
                kept.append(p)
        return kept

    def shown(self, path) -> str:
        """``path`` as the writer meant it: a write into the stage is shown relative to ``--out``."""
        files = self.stage / "files"
        if self.stage in Path(path).parents:
            return str(self.out_dir / os.path.relpath(path, files))
        return str(path)


def run_writer(reg, manifest: dict, stage, out_dir) -> list:
    """Run the manifest writer ``reg`` in ``stage / "files"``; the files it wrote, checked.

    A writer that raises, or writes outside its folder, is refused with a
    :class:`~harness_ext.errors.PluginError` naming it and ``out_dir`` (the user's folder, not the
    stage); the new files it left beside ``out_dir`` are removed first (the stage is the caller's
    to remove).
    """
    stage, out_dir = Path(stage), Path(out_dir)
    files = stage / "files"
    where = f"{reg.name!r} ({reg.source})"
    watch = WriterWatch(stage, out_dir)
    try:
        returned = reg.write(manifest, OutputDir(files, where, shown=out_dir))
    except BaseException as exc:
        watch.remove_new(watch.escapes())  # a failed write leaves no file of its own behind
        if isinstance(exc, HarnessExtError):
            raise
        if not isinstance(exc, (Exception, SystemExit)):
            raise
        raise PluginError(f"manifest writer {where} failed: {type(exc).__name__}: {exc}") from None
    escaped = watch.escapes()
    if escaped:
        kept = watch.remove_new(escaped)
        shown = ", ".join(watch.shown(p) for p in escaped[:5]) + (" ..." if len(escaped) > 5 else "")
        note = (f"; changed or removed, not restored: {', '.join(map(str, kept[:5]))}" if kept else
                "; what it wrote there was removed")
        raise PluginError(f"manifest writer {where} wrote outside its folder {out_dir}: {shown}{note} (a writer "
                          "writes only the files it returns, inside the folder it is given)")
    return checked_outputs(returned, files, where, shown=out_dir)


def _make_dirs(folder: Path, created: list) -> None:
    """Create ``folder`` and its missing parents, appending each one created to ``created`` (top first)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for d in reversed(missing):
        d.mkdir()
        created.append(d)


def _commit_plan(staged, files: Path, out_dir: Path) -> list:
    """``(staged file, destination)`` pairs, refused before anything moves when a destination cannot be written."""
    plan, seen = [], set()
    for p in staged:
        rel = p.relative_to(files)
        dest = out_dir / rel
        if dest in seen:
            continue
        seen.add(dest)
        for part in [*reversed(rel.parents[:-1]), rel]:  # each folder on the way, then the file
            there = out_dir / part
            is_file_part = part == rel
            # A linked folder on the way would take the file elsewhere; a file there may be replaced.
            if (there.is_symlink() and not is_file_part) or (there.exists() and there.is_dir() == is_file_part):
                what = "a folder" if there.is_dir() else "a file or link"
                raise HarnessExtError(f"cannot write {dest}: {there} is {what}; nothing was written to {out_dir}")
        plan.append((p, dest))
    return plan


def commit_staged(staged, files, out_dir, backup) -> list:
    """Move the ``staged`` files (inside ``files``) to the same places in ``out_dir``: all of them, or none.

    Subfolders are created as needed. A file replaced is first moved into ``backup`` (a folder
    of the stage), so a failure part-way puts every replaced file back and removes what was
    added, the folders included: ``out_dir`` is left as it was.
    """
    import shutil

    files, out_dir, backup = Path(files), Path(out_dir), Path(backup)
    plan = _commit_plan(staged, files, out_dir)
    created, done = [], []
    try:
        _make_dirs(out_dir, created)
        for p, dest in plan:
            _make_dirs(dest.parent, created)
            old = None
            if dest.exists():
                old = backup / dest.relative_to(out_dir)
                old.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(dest), str(old))
            done.append((dest, old))
            shutil.move(str(p), str(dest))  # a rename on one file system
    except BaseException as exc:
        for dest, old in reversed(done):
            with contextlib.suppress(OSError):
                dest.unlink(missing_ok=True)
                if old is not None:
                    shutil.move(str(old), str(dest))
        for d in reversed(created):
            with contextlib.suppress(OSError):
                d.rmdir()
        if isinstance(exc, OSError):
            raise HarnessExtError(f"cannot write {out_dir}: {exc.strerror or exc}; it was left as it was") from exc
        raise
    return [dest for _, dest in plan]


@contextlib.contextmanager
def staging(out_dir):
    """A private folder to write ``out_dir``'s new files into before :func:`commit_staged` moves them: yields
    ``(files, backup)``, the folder to write in and the one replaced files are kept in until the moves are done.

    Beside ``out_dir`` when its parent exists (the final moves are then renames), else in the temporary folder;
    removed afterwards, whatever happened.
    """
    import shutil
    import tempfile

    out_dir = Path(out_dir)
    parent = out_dir.parent if out_dir.parent.is_dir() else None
    stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name or 'out'}.staging-", dir=parent))
    files = stage / "files"
    files.mkdir()
    try:
        yield files, stage / "backup"
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def write_files(out_dir, contents: dict) -> list:
    """Write files into folder ``out_dir`` (created if needed): all of them, or none; returns their paths.

    ``contents``: file name -> what :func:`replace_file` takes (text, bytes, or a function writing the path it is
    given). Every file is written in a :func:`staging` folder first and moved only when all are written, so an
    error or an interrupt leaves ``out_dir`` as it was.
    """
    with staging(out_dir) as (files, backup):
        staged = []
        for name, content in contents.items():
            path = files / check_file_name(name)
            _write_content(path, content)
            staged.append(path)
        return commit_staged(staged, files, out_dir, backup)

