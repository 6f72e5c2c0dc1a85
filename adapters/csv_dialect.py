"""The delimiter and the decimal mark of a CSV table, as spreadsheets in every locale write them.

Excel and LibreOffice in locales whose decimal mark is a comma (German, French, Italian, Polish, ...)
save "CSV" with ``;`` between the cells and ``0,734`` for 0.734. Such a file is read exactly as its
comma version would be:

* **Delimiter** (:func:`sniff_delimiter`): only ``,``, ``;`` or a tab. ``.tsv`` files are tab-separated;
  otherwise the delimiter is the one whose header the reader recognises (a model column, ...), and among
  several, the one every sampled line agrees with in width. A comma that fits stays the comma, so every
  table read before is read the same; two delimiters that both fit are an error naming the file.
* **Decimal mark** (:func:`decimal_commas`): only when the delimiter is not a comma. A cell such as
  ``0,734`` or ``12,5`` (a comma that cannot be a thousands separator) says the file's decimal mark is the
  comma; every number written with one is then read with a point. So is ``1.250,5`` (Excel's thousands
  separator, a point, before a decimal comma: 1250.5), and, in a column of such numbers, a whole ``1.250``
  (1250). A file that also writes decimals with a point in other columns (``0.5`` beside ``0,5``), or whose only
  commas could be either mark (``1,250``: 1.25 or 1250) with nothing else to say which, is refused with the cell
  named: never a guess that changes values. A column that mixes both marks in its own cells is kept as text (so
  the leaderboard reader makes it metadata), and a note counts its cells of each mark.

What was inferred is said in the ingest notes (:meth:`harness_ext.types.SourceFile.note`), with counts.
"""

from __future__ import annotations

import csv
import re

from harness_ext.errors import IngestError
from harness_ext.report import listed, plural

#: The delimiters a table may use, in order of preference.
DELIMITERS = (",", ";", "\t")
#: Lines of a file's head compared for their width when more than one delimiter fits the header.
SAMPLE_LINES = 20
_SHOWN = {",": "','", ";": "';'", "\t": "a tab"}


def shown(delim: str) -> str:
    """A delimiter as the notes and errors write it."""
    return _SHOWN.get(delim, repr(delim))


def _split(line: str, delim: str) -> list:
    try:
        return next(csv.reader([line], delimiter=delim), [])
    except csv.Error:  # a bare carriage return or NUL inside the line
        return []


def _head_lines(head: str, truncated: bool) -> list:
    lines = head.lstrip("\ufeff").splitlines()
    if truncated and len(lines) > 1:
        lines = lines[:-1]  # the last line of a cut head is partial
    return [ln for ln in lines[:SAMPLE_LINES + 1] if ln.strip()]


def sniff_delimiter(head: str, suffix: str, accept, truncated: bool = False):
    """``(delimiter, fitting)`` of a table from its first lines: the delimiter to read it with (None when no
    delimiter gives a header ``accept`` recognises) and every delimiter whose header it recognises.

    Parameters
    ----------
    head : str
        The file's first bytes as text.
    suffix : str
        The file's lower-cased suffix; ``.tsv`` is always tab-separated.
    accept : callable
        ``accept(cells)``: whether a header (its cells stripped and lower-cased) is one the reader takes.
    truncated : bool
        Whether ``head`` stops before the end of the file (its last line is then partial).

    Returns
    -------
    tuple
        ``(delimiter or None, tuple of fitting delimiters)``. More than one fitting delimiter whose lines all
        have the header's width is ambiguous: the delimiter is then None, and :func:`check_delimiter` says so.
    """
    lines = _head_lines(head, truncated)
    if not lines:
        return None, ()
    candidates = ("\t",) if suffix == ".tsv" else DELIMITERS
    fitting = []
    for d in candidates:
        cells = [c.strip().lower() for c in _split(lines[0], d)]
        if len(cells) >= 2 and accept(cells):
            fitting.append(d)
    if len(fitting) <= 1:
        return (fitting[0] if fitting else None), tuple(fitting)
    width = {d: len(_split(lines[0], d)) for d in fitting}
    even = [d for d in fitting if all(len(_split(ln, d)) == width[d] for ln in lines[1:])]
    if len(even) == 1:
        return even[0], tuple(fitting)
    return None, tuple(fitting)


def check_delimiter(path, delim, fitting) -> str:
    """The delimiter :func:`sniff_delimiter` chose, or an :class:`IngestError` naming the file and why none was."""
    if delim is not None:
        return delim
    if len(fitting) > 1:
        raise IngestError(path, f"the delimiter is ambiguous: the header and the first lines read as a table with "
                                f"{' and with '.join(shown(d) for d in fitting)} alike; save it with one delimiter "
                                "the other does not occur in")
    raise IngestError(path, "no header with a model column for any delimiter (',', ';' or a tab)")


# -- decimal mark -------------------------------------------------------------------------------
#: A comma between two digits: a decimal mark, or a thousands separator.
DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d)")
#: A point between two digits.
DIGIT_POINT = re.compile(r"\d\.\d")
#: A number whose commas could all be thousands separators (``1,250``, ``12,500,000``).
_GROUPED = re.compile(r"(?<![\d,.])[1-9]\d{0,2}(?:,\d{3})+(?![\d,])")
#: Every run of digits and commas in a cell.
_DIGIT_RUN = re.compile(r"\d+(?:,\d+)+")


def _commas_only_group(cell: str) -> bool:
    """Whether every comma of ``cell`` could be a thousands separator (so the cell alone cannot tell the mark)."""
    runs = _DIGIT_RUN.findall(cell)
    return bool(runs) and all(_GROUPED.fullmatch(r) for r in runs)


#: A number with points between groups of three digits and one decimal comma (``1.250,5``): only a comma can be
#: its decimal mark.
_EU_GROUPED = re.compile(r"[+-]?[1-9]\d{0,2}(?:\.\d{3})+,\d+")
#: A whole number with points between groups of three digits (``1.250``, ``12.500.000``): 1250 with a decimal
#: comma, 1.25 with a point.
_POINT_GROUPED = re.compile(r"[+-]?[1-9]\d{0,2}(?:\.\d{3})+")


class _Cells:
    """The number cells of a table's columns written with a decimal comma or point, for :func:`decimal_commas`."""

    def __init__(self):
        # (row index, column, cell); ``grouped``: cells whose points separate thousands if the mark is the comma
        self.comma, self.point, self.telling, self.grouped = [], [], [], []

    def add(self, i, j, cell, parse) -> None:
        c = cell.strip()
        bare = c.rstrip("%").strip()
        if _EU_GROUPED.fullmatch(bare):  # 1.250,5: thousands points, a decimal comma
            self.comma.append((i, j, c))
            self.telling.append((i, j, c))
            return
        comma, point = bool(DIGIT_COMMA.search(c)), bool(DIGIT_POINT.search(c))
        if comma and not point:
            try:
                parse(DIGIT_COMMA.sub(".", c))
            except ValueError:
                return  # text with a comma in it ("Llama 2,7B"): not a number either way
            self.comma.append((i, j, c))
            if not _commas_only_group(c):
                self.telling.append((i, j, c))
        elif point:
            try:
                parse(c)
            except ValueError:
                return  # a version or a date ("1.2.3", "01.02.2024"): not a number
            (self.grouped if _POINT_GROUPED.fullmatch(bare) else self.point).append((i, j, c))

    def mixed_columns(self) -> set:
        """Columns holding both cells with a decimal comma and cells with a decimal point (``0,5`` above ``0.5``)."""
        return {j for _, j, _ in self.comma} & {j for _, j, _ in self.point}


def _european(c: str) -> str:
    """A cell written with a decimal comma (and perhaps thousands points) as the reader's numbers are written."""
    return DIGIT_COMMA.sub(".", c.replace(".", "")) if "." in c else DIGIT_COMMA.sub(".", c)


def decimal_commas(src, rows: list, skip, delim: str, parse) -> None:
    """Read the numbers of a table whose decimal mark is the comma with a point, in place (module docstring).

    Parameters
    ----------
    src : harness_ext.types.SourceFile
        The file, for its errors and its notes.
    rows : list of list of str
        The table as read with ``delim``, header first; number cells written with a decimal comma (``0,734``,
        ``1.250,5``) are rewritten, and so are whole numbers grouped by points (``1.250``) in such a file.
    skip : collection of int
        Columns never read as numbers (the model column, names of datasets and metrics).
    delim : str
        The table's delimiter; with a comma, nothing is done (a comma between digits is a thousands separator
        or a cell's own text, as before).
    parse : callable
        ``parse(cell)``: the cell's number, raising ValueError when it is not one (the reader's own rule).

    Raises
    ------
    IngestError
        For a file that writes decimals with both marks in different columns, or whose commas could be either
        mark with nothing in the file to say which; naming the cells. A column that mixes both marks itself is
        kept as written, and noted with its counts.
    """
    if delim == "," or len(rows) < 2:
        return
    header = rows[0]
    cells = _Cells()
    for i, row in enumerate(rows[1:], start=1):
        for j, cell in enumerate(row):
            if j not in skip and cell and any(ch.isdigit() for ch in cell):
                cells.add(i, j, cell, parse)
    if not cells.comma:
        return

    def name(j):
        return " ".join(header[j].split()) if j < len(header) else f"column {j + 1}"

    def where(i, j, c):
        return f"{c!r} ({name(j)!r}, row {i + 1})"

    if not cells.telling:
        if cells.point or cells.grouped:
            return  # points are the decimals, commas the thousands separators, as in a comma-separated file
        i, j, c = cells.comma[0]
        raise IngestError(src.path, f"the decimal mark is ambiguous: {where(i, j, c)} could be a decimal comma or a "
                                    f"thousands separator, and no number in the file says which ({len(cells.comma)} "
                                    "such cells); write the numbers without thousands separators, or with a decimal "
                                    "point and ',' as the delimiter")
    # A whole number grouped by points (1.250) is read so only in a column with a decimal comma: alone it could be
    # a decimal point (7.125 of a 1-10 score), which a file of decimal commas then mixes in, as below.
    with_comma = {j for _, j, _ in cells.comma}
    cells.point += [x for x in cells.grouped if x[1] not in with_comma]
    cells.grouped = [x for x in cells.grouped if x[1] in with_comma]
    mixed = cells.mixed_columns()
    point = [x for x in cells.point if x[1] not in mixed]
    telling = [x for x in cells.telling if x[1] not in mixed] or cells.telling
    if point:
        (i, j, c), (pi, pj, pc) = telling[0], point[0]
        raise IngestError(src.path, f"mixes decimal marks: {where(i, j, c)} is written with a decimal comma and "
                                    f"{where(pi, pj, pc)} with a point ({len(cells.comma)} cells with commas, "
                                    f"{len(cells.point)} with points); a point in a file of decimal commas may be a "
                                    "thousands separator, so nothing is guessed: write every number with one mark")
    _rewrite(src, rows, cells, mixed, name, delim, telling[0][2])


def _rewrite(src, rows: list, cells: _Cells, mixed: set, name, delim: str, telling: str) -> None:
    """Rewrite the decimal-comma cells (and the point-grouped whole numbers) of the columns not in ``mixed``, and
    note what was read (``telling``: a cell whose comma cannot be a thousands separator) and what was kept as
    written."""
    read = [x for x in cells.comma + cells.grouped if x[1] not in mixed]
    cols = []
    for i, j, c in read:
        rows[i][j] = _european(rows[i][j])
        if j not in cols:
            cols.append(j)
    grouped = sum(1 for x in read if "." in x[2])
    if read:
        src.note(f"',' read as the decimal mark ({shown(delim)} is the delimiter): {plural(len(read), 'number')} in "
                 f"{plural(len(cols), 'column')} ({listed([name(j) for j in cols], 12)}) written with a decimal comma "
                 f"({telling!r} cannot be a thousands separator)"
                 + (f", {grouped} of them with '.' between groups of thousands" if grouped else ""))
    for j in sorted(mixed):
        n_comma = sum(1 for x in cells.comma if x[1] == j)
        n_point = sum(1 for x in cells.point if x[1] == j)
        src.note(f"{name(j)!r}: {plural(n_comma, 'cell')} written with a decimal comma and {n_point} with a point: "
                 "its cells are kept as written (text), as no one mark reads them all; write every number of it "
                 "with one mark to read it as scores")


def has_digit_comma(path, block: int = 16 << 20) -> bool:
    """Whether a file has a comma between two digits anywhere (a decimal comma the column-by-column reader
    does not read): read in blocks, a digit-comma-digit across two blocks included."""
    tail = b""
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(block), b""):
            if re.search(rb"\d,\d", tail + chunk):
                return True
            tail = chunk[-2:]
    return False
