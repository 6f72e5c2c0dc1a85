"""Reading side files: the small files a user names to steer a command.

Chance levels (``--chance-file``), model aliases (``models --aliases``), dataset costs (``--costs``),
dataset weights (``--weights``), column metadata (``--column-meta`` and ``<file>.meta.yaml`` beside a
CSV) and manifests (``predict --manifest``) are files a user wrote, edited or received. Each is read
through this module, in the same order of checks, cheapest first:

1. a regular file, checked on the open descriptor before anything is read (a FIFO would block
   forever, ``/dev/zero`` never ends, a directory is not a file): the file is opened non-blocking;
2. at most a size limit of bytes (:data:`MAX_SIDE_FILE_BYTES`, or the caller's);
3. UTF-8 text (a leading byte-order mark is dropped);
4. JSON, YAML or CSV parsed with a nesting limit; NaN, Infinity, ``1e400`` and integers beyond the
   range of a float are refused, naming where they are;
5. the shape the file's kind needs (each reader's own check; :func:`wrong_shape` words the error).

Every failure is one :class:`~harness_ext.errors.SideFileError`, printed by the command line as
``error: <file>: <reason>``. :mod:`harness_ext.safe_output` is the other direction: what commands write.
"""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path
from typing import Optional

from .errors import SideFileError

#: Largest side file read (a chance-level, alias, cost or weight table of a million names is ~40 MB).
MAX_SIDE_FILE_BYTES = 64 * 1024**2
#: Deepest nesting of lists and mappings accepted (a side file needs 3; a manifest 5).
MAX_DEPTH = 32
#: Opened without blocking (a FIFO's open waits for a writer otherwise) and not inherited by children.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a FIFO", "a device", ...), for a refusal."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def read_bytes(path, what: str, limit: int = MAX_SIDE_FILE_BYTES, error=SideFileError) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Parameters
    ----------
    path : path-like
        The file.
    what : str
        What the file is, for errors ("chance-level file", "alias file", ...).
    limit : int
        Largest size read.
    error : type
        What is raised, ``error(path, reason)``: a :class:`~harness_ext.errors.SideFileError`, or an
        :class:`~harness_ext.errors.IngestError` where the file belongs to one source of an ingest.

    Raises
    ------
    SideFileError
        If it does not exist, is not a regular file (checked with ``fstat`` on the descriptor opened
        non-blocking, so a FIFO or a device is refused without waiting or reading), is larger than
        ``limit`` (also when it grows while read) or cannot be read.
    """
    try:
        fd = os.open(os.fspath(path), _OPEN_FLAGS)
    except FileNotFoundError:
        raise error(path, f"no such {what}") from None
    except OSError as exc:
        raise error(path, f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(path, f"{what} is {file_kind(st.st_mode)}, not a regular file: not read")
        if st.st_size > limit:
            raise error(path, f"{what} is {st.st_size:,} bytes; at most {limit:,} are read")
        parts, n = [], 0
        while True:  # to the end, not to st_size: the file may change while read
            block = os.read(fd, max(1 << 16, min(st.st_size - n + 1, limit + 1 - n)))
            if not block:
                break
            parts.append(block)
            n += len(block)
            if n > limit:
                raise error(path, f"{what} grew beyond {limit:,} bytes while read")
    except OSError as exc:
        raise error(path, f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return b"".join(parts)


def read_text(path, what: str, limit: int = MAX_SIDE_FILE_BYTES) -> str:
    """:func:`read_bytes` decoded as UTF-8 (a leading byte-order mark dropped); a SideFileError otherwise."""
    data = read_bytes(path, what, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SideFileError(path, f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return text[1:] if text.startswith("\ufeff") else text


def suffix_format(path, default: str = "yaml") -> str:
    """``"json"``, ``"yaml"`` or ``"csv"``/``"tsv"`` by the file's suffix (``default`` for any other)."""
    s = Path(path).suffix.lower()
    return {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".csv": "csv", ".tsv": "tsv"}.get(s, default)


def load_document(path, what: str, fmt: Optional[str] = None, limit: int = MAX_SIDE_FILE_BYTES,
                  max_depth: int = MAX_DEPTH):
    """Parse a JSON or YAML side file, refusing what no side file holds.

    Parameters
    ----------
    path : path-like
    what : str
        What the file is, for errors.
    fmt : {"json", "yaml"}, optional
        Default: by suffix (:func:`suffix_format`; YAML for anything but ``.json``).
    limit, max_depth : int
        Largest file size in bytes; deepest nesting of lists and mappings.

    Returns
    -------
    object
        The parsed document: mappings, lists, strings, finite floats, integers, booleans and None.

    Raises
    ------
    SideFileError
        Naming the file: the checks of :func:`read_text`; nested deeper than ``max_depth`` (JSON is
        measured before it is parsed); not valid JSON/YAML; NaN, Infinity, a number beyond the range
        of a float (``1e400``, a 400-digit integer), naming the key it is under.
    """
    import json

    fmt = fmt or suffix_format(path)
    text = read_text(path, what, limit)
    try:
        if fmt == "json":
            if max_depth_of_json(text) > max_depth:
                raise SideFileError(path, f"{what} is nested more than {max_depth} levels deep")
            doc = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
        else:
            import yaml

            doc = yaml.load(text, Loader=_yaml_loader())
    except RecursionError:
        raise SideFileError(path, f"{what} is nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, a refused constant, a number beyond a float, int digits
        raise SideFileError(path, f"{what} is not JSON: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - yaml.YAMLError and the constructors' errors (a bad timestamp...)
        first = " ".join(str(exc).split())
        raise SideFileError(path, f"{what} is not valid YAML: {first[:300]}") from None
    # JSON's parse already refused non-finite floats and measured the nesting: what is left to find is an integer
    # beyond a float, which needs a run of digits longer than any float has (the walk is Python, the search is not).
    if fmt == "json" and not _LONG_DIGITS.search(text):
        return doc
    problem = _value_problem(doc, max_depth)
    if problem:
        raise SideFileError(path, f"{what}: {problem}")
    return doc


def read_rows(path, what: str, limit: int = MAX_SIDE_FILE_BYTES, delimiter: Optional[str] = None) -> list:
    """The rows (lists of strings) of a CSV (or, by suffix, TSV) side file; a SideFileError naming the line
    for what the csv module refuses (a NUL byte, an unclosed quote at the end), and the row and column of a cell
    over its field limit (:func:`csv_rows`)."""
    text = read_text(path, what, limit)
    if delimiter is None:
        delimiter = "\t" if suffix_format(path) == "tsv" else ","
    return csv_rows(text, delimiter, path, error=SideFileError, what=what)


def csv_rows(text: str, delimiter: str, path, error=None, what: Optional[str] = None) -> list:
    """The rows (lists of strings) of a CSV or TSV text, as ``list(csv.reader(...))`` reads them.

    Parameters
    ----------
    text : str
        The file's text.
    delimiter : str
        Its delimiter.
    path : path-like
        The file, for the error.
    error : type, optional
        The error raised for a cell over the csv module's field limit (:func:`oversized_csv_cell`), called as
        ``error(path, reason)``; :class:`~harness_ext.errors.IngestError` by default.
    what : str, optional
        What the file is, in words (``"the scales file"``): then every fault the csv module finds is ``error``
        naming its line; without it, only a cell over the field limit is.

    Raises
    ------
    HarnessExtError
        ``error`` naming the file, the cell's row and column and its length, for a cell over the field limit;
        with ``what``, ``error`` naming the line of any other fault, else ``csv.Error`` as the csv module raises
        it (a NUL byte, a stray quote).
    """
    import csv
    import io

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return list(reader)
    except csv.Error as exc:
        big = oversized_csv_cell(text, delimiter, exc)
        if big is None and what is None:
            raise
        if error is None:
            from .errors import IngestError as error
        raise error(path, f"{what or 'the table'} {big}" if big else
                    f"{what} is not valid CSV (line {reader.line_num}): {exc}") from None


def csv_header(path, delimiter: str, error=None) -> list:
    """The first row of a CSV or TSV file (a byte-order mark dropped), read from the file without reading the rest.

    Raises
    ------
    HarnessExtError
        ``error(path, reason)`` (:class:`~harness_ext.errors.IngestError` by default) when the csv module refuses
        the row: a cell over its field limit, named by column (:func:`oversized_csv_cell`), or another fault.
    """
    import csv

    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        try:
            return next(csv.reader(fh, delimiter=delimiter), [])
        except csv.Error as exc:
            fh.seek(0)
            big = oversized_csv_cell(fh.read(_HEADER_SEARCH_CHARS), delimiter, exc)
            why = f"the table {big}" if big else f"its first row is not valid CSV: {exc}"
    if error is None:
        from .errors import IngestError as error
    raise error(path, why)


#: Characters of a file read to find which header cell is over the csv module's field limit (in the error only).
_HEADER_SEARCH_CHARS = 64 * 1024**2


def oversized_csv_cell(text: str, delimiter: str, exc: Exception) -> Optional[str]:
    """Where ``text`` holds a cell longer than Python's csv module reads (``csv.field_size_limit()``, 131,072
    characters unless the program changed it), in words for an error: ``has a cell of 200,000 characters in row
    4, column 1 ("model") ...``; None when ``exc`` is another csv error.

    The module's own message names neither the cell nor the file. The cell is found by reading the text again with
    the limit raised for that read alone (the limit is the process's: it is set back before returning).
    """
    import csv
    import io

    if "field larger than field limit" not in str(exc):
        return None
    from .safe_output import quoted, short_name
    from .types import MAX_NAME_CHARS

    limit = csv.field_size_limit()
    where = ""
    csv.field_size_limit(max(limit, len(text) + 1))
    try:
        header = None
        for r, row in enumerate(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), 1):
            header = row if header is None else header
            long = next((c for c, cell in enumerate(row, 1) if len(cell) > limit), None)
            if long is not None:
                name = (f", {quoted(short_name(header[long - 1], 60))}"
                        if r > 1 and long <= len(header) and header[long - 1].strip() else "")
                where = f" of {len(row[long - 1]):,} characters (row {r}, column {long}{name})"
                break
    except csv.Error:  # another fault further on: the cell is not found, the reason still said
        pass
    finally:
        csv.field_size_limit(limit)
    return (f"has a cell{where}, more than the {limit:,} characters a CSV cell may hold when read (Python's csv "
            f"module's limit): no name is kept past {MAX_NAME_CHARS:,} characters and no number needs that many, so "
            "nothing was read from the file")


def finite_number(value, path, what: str, where: str, low: Optional[float] = None, low_open: bool = False) -> float:
    """``value`` as a finite float (a number or a numeric string), at least ``low`` (above it if ``low_open``).

    Raises
    ------
    SideFileError
        Naming the file and ``where`` (an entry, a line) when it is not such a number.
    """
    try:
        if isinstance(value, bool):
            raise TypeError
        v = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError, OverflowError):
        raise SideFileError(path, f"{what}: {where} is not a number: {_short(value)}") from None
    if not math.isfinite(v):
        raise SideFileError(path, f"{what}: {where} is {_short(value)}, not a finite number")
    if low is not None and (v <= low if low_open else v < low):
        raise SideFileError(path, f"{what}: {where} must be {'above' if low_open else 'at least'} {low:g}, got {v:g}")
    return v


def wrong_shape(path, what: str, where: str, expected: str, value) -> SideFileError:
    """The error for a part of a side file that is not the shape its kind needs (raise it).

    ``where`` names the key ("'aliases'", "the top level"), ``expected`` what belongs there.
    """
    return SideFileError(path, f"{what}: {where} must be {expected}, got {_type_name(value)} {_short(value)}")


def _type_name(value) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "nothing"}.get(type(value), type(value).__name__)


def _short(value, n: int = 60) -> str:
    r = repr(value)
    return r if len(r) <= n else r[: n - 3] + "..."


def _refuse_constant(name):
    raise ValueError(f"{name} is not a number JSON allows (use null for a missing value)")


def _finite_float(s: str) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise ValueError(f"{s[:40]} is beyond the range of a float")
    return v


def _yaml_loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: Largest integer magnitude a side file may hold: what converts to a float.
_MAX_INT = 2**1023 * (2 - 2**-52)


def _value_problem(doc, max_depth: int) -> Optional[str]:
    """What no side file holds (a non-finite float, an integer beyond a float, nesting deeper than
    ``max_depth``), with the key path where it is, or None. Iterative; YAML aliases are visited once."""
    stack = [(doc, (), 0)]
    seen = set()
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth >= max_depth:
                return f"nested more than {max_depth} levels deep (at {_path(where)})"
            if id(value) in seen:
                continue
            seen.add(id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                if isinstance(value, dict):
                    bad = _number_problem(k)
                    if bad:
                        return f"a key under {_path(where)} is {bad}"
                stack.append((v, where + (k,), depth + 1))
        else:
            bad = _number_problem(value)
            if bad:
                return f"{_path(where)} is {bad}"
    return None


#: More digits in a row than a float's largest integer has (about 1.8e308): only an integer beyond a float.
_LONG_DIGITS = re.compile(r"\d{309}")


def _number_problem(value) -> Optional[str]:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r}, not a finite number"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_INT:
        return f"an integer of {len(str(abs(value)))} digits, beyond the range of a number"
    return None


def _path(where: tuple) -> str:
    return "the top level" if not where else "'" + ".".join(map(str, where))[:120] + "'"


#: An escape pair (only inside strings in JSON), anything but brackets and quotes, a string left with brackets only.
_ESCAPE, _OTHER, _STRING = re.compile(r"\\.", re.S), re.compile(r'[^\[\]{}"]+'), re.compile(r'"[^"]*"')


def max_depth_of_json(text: str) -> int:
    """Bracket depth of JSON text, ignoring brackets inside strings (no recursion, no parse).

    Regular expressions and a cumulative sum instead of a loop over characters: a 30 MB
    manifest takes a fraction of a second.
    """
    import numpy as np

    brackets = _STRING.sub("", _OTHER.sub("", _ESCAPE.sub("", text)))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    return int(np.cumsum(np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)).max())
