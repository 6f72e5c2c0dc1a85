"""Leaderboards published as HTML tables, read as the CSV tables they are.

Many boards are HTML: a ``<table>`` in a README (vision and Chinese benchmark repositories write their leaderboards
so, for the grouped headers a pipe table cannot show) or a saved leaderboard page or GitHub Pages site
(``index.html``, ``leaderboard.html``). Read with the standard library's :mod:`html.parser`, which fetches and
includes nothing; each table becomes the rows its CSV conversion would hold, read by the CSV adapter's rules, as a
Markdown pipe table is (:mod:`harness_ext.adapters.csv_markdown`, whose rules for which tables are leaderboards,
their benchmarks, ragged rows and limits apply unchanged).

* **Where.** ``.html`` and ``.htm`` files, and ``.md`` files beside their pipe tables (outside code blocks and
  front matter; the tables of a file in the order they stand). Tables inside ``<script>``, ``<style>`` and comments
  are not read; a table nested in a cell of another is read on its own, its text left out of that cell (noted).
* **Header.** The rows of ``<thead>``; without one the first row, with the rows its cells span down
  (``rowspan``). A header of two rows or more names each column by its cells top to bottom, joined with `` / ``
  (``2D`` spanning ``RGB`` and ``Grayscale``: columns ``2D / RGB`` and ``2D / Grayscale``), a name spanning both rows
  once (``Model``): the CSV rules read a group's words as the start of its columns' names, as in a flat header
  (``Live Acc`` beside ``Live Simple``). A first row of one cell spanning the whole width is the table's title.
* **Cells.** ``rowspan`` repeats a cell's value on each row it spans (noted); in the body a cell spanning several
  columns is read in its first, the others empty (noted). ``<th>`` in a body row is a cell like ``<td>``.
  Entities, ``<br>`` and formatting (``<b>``, ``<strong>``, ``<em>``, ``<u>``, ...) are read as the text the page
  shows (a ``<br>`` as a space, none where it breaks a word at a hyphen: ``MMLU<br/>-Redux`` is ``MMLU-Redux``); a model cell that is one link is the CSV adapter's (its text, or the Hugging Face repository it names).
* **Markers.** ``<sup>``/``<sub>`` in a cell whose other text is a number or a missing mark (``85.2<sup>*</sup>``,
  a mark for "self-reported" or "reproduced"; ``-<sup>1</sup>`` is missing, not -1) are left out of the value; each marker is noted with its count, never
  silently. ``10<sup>4</sup>`` is a power, read as the text ``10^4``. In other cells their text stays in place, a
  subscript after text joined to it with ``_`` (``GPT<sub>4</sub>`` is ``GPT_4``: run together, ``GPT4``, it would be
  another name), noted.
* **Which tables, benchmarks.** As for pipe tables (a model column and a column of numbers); a table is named by its
  ``<caption>``, else the nearest heading above it (``<h1>``-``<h6>``, and Markdown headings in a ``.md`` file).
* **Limits.** Files of at most 4 MiB (larger: refused with the size when the head shows a leaderboard); at most
  :data:`~harness_ext.adapters.csv_markdown.MAX_COLUMNS` columns (a wider table is refused with its width, its cells
  beyond that only counted); ``colspan`` and ``rowspan`` capped as browsers cap them; tables nested more than
  :data:`MAX_NESTING` deep are text of their cell. Text that is not UTF-8 is refused; an error in any table refuses
  the whole file, naming the table's line.
"""

from __future__ import annotations

import functools
import html
import re
from collections import Counter
from html.parser import HTMLParser
from typing import Optional

from harness_ext.adapters.csv_markdown import (
    HEAD_BYTES, MAX_COLUMNS, _Tally, edge_emoji, hyphen_breaks, leaderboard_tables, markdown_leaderboard,
    markdown_outline, read_tables, why_not_leaderboard)
from harness_ext.adapters.csv_rules import _parse, model_column
from harness_ext.errors import IngestError
from harness_ext.report import listed, plural
from harness_ext.types import SourceFile

__all__ = ["HTML_SUFFIXES", "MAX_NESTING", "HtmlTable", "html_tables", "page_leaderboard", "page_leaderboard_in_head",
           "page_tables", "read_page"]

#: The pages read (:data:`harness_ext.store.ingest_read.HTML_SUFFIXES`, which the walk offers when they hold a
#: leaderboard table).
HTML_SUFFIXES = (".html", ".htm")
#: Tables nested deeper than this are read as the text of the cell holding them.
MAX_NESTING = 8
#: What browsers cap ``colspan`` and ``rowspan`` at (the HTML standard's table model).
MAX_COLSPAN, MAX_ROWSPAN = 1000, 65534
_FORMAT = frozenset("b strong i em u ins mark span font small big code s del strike tt kbd var abbr cite q".split())
_HEADINGS = frozenset(f"h{k}" for k in range(1, 7))
_SKIPPED = frozenset(("script", "style", "template"))
_TABLE_TAG = re.compile(rb"<table\b", re.I)
_WS = re.compile(r"\s+")
#: What a ``<br>`` adds to a cell's text: a line separator (white space to every reader of the pieces), which
#: :meth:`_Cell.text` drops where it splits a word at a hyphen (``MMLU<br/>-Redux``: ``MMLU-Redux``) and reads as a
#: space elsewhere.
_BREAK = "\u2028"
_BREAK_AT_HYPHEN = hyphen_breaks(_BREAK)
_INTEGER = re.compile("^[-+\u2212]?[0-9]+$")


def _span(value, cap: int) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        return 1
    return cap if n == 0 and cap == MAX_ROWSPAN else max(1, min(n, cap))  # rowspan="0": to the section's end


class _Cell:
    """One ``<td>``/``<th>``: its text in pieces ``(text, in a marker, in a link)``, its links, spans and markup."""

    __slots__ = ("pieces", "hrefs", "colspan", "rowspan", "markup", "marker", "anchor", "subs", "sub_next")

    def __init__(self, attrs: dict):
        self.pieces, self.hrefs, self.markup, self.marker, self.anchor = [], [], False, 0, 0
        self.subs, self.sub_next = set(), False  # the pieces a <sub> starts with
        self.colspan = _span(attrs.get("colspan", 1), MAX_COLSPAN)
        self.rowspan = _span(attrs.get("rowspan", 1), MAX_ROWSPAN)

    def add(self, text: str) -> None:
        if self.sub_next and text.strip():
            self.subs.add(len(self.pieces))
            self.sub_next = False
        self.pieces.append((text, self.marker > 0, self.anchor > 0))

    def text(self) -> str:
        """The text the page shows (markers in place; ``10^4`` for a power of ten; a subscript after text joined to
        it with ``_``: ``GPT<sub>4</sub>`` is ``GPT_4``, not ``GPT4``)."""
        out = []
        for i, (text, marker, _) in enumerate(self.pieces):
            if marker and _INTEGER.match(text.strip()) and "".join(out).rstrip().endswith("10"):
                text = "^" + text.strip()
            elif i in self.subs and out and out[-1][-1:].strip():
                text = "_" + text.lstrip()
            out.append(text)
        return _WS.sub(" ", _BREAK_AT_HYPHEN.sub("", "".join(out))).strip()

    def value(self, model: bool) -> tuple:
        """``(value, markers left out)``: a number without its markers, a model cell that is one link as that link
        (the CSV rules read it), else the text."""
        shown = self.text()
        if model:
            outside = "".join(t for t, _, a in self.pieces if not a).strip()
            if len(self.hrefs) == 1 and self.hrefs[0] and not outside:
                inside = _WS.sub(" ", "".join(t for t, _, a in self.pieces if a)).strip()
                return f'<a href="{html.escape(self.hrefs[0])}">{html.escape(inside, quote=False)}</a>', []
            return shown, []
        markers = [_WS.sub(" ", t).strip() for t, m, _ in self.pieces if m and t.strip()]
        if not markers or "^" in shown:
            return shown, []
        bare = _WS.sub(" ", "".join(t for t, m, _ in self.pieces if not m)).strip()
        try:
            _parse(bare)  # a number, or a missing mark ("-", or nothing but the marker): never "-" and "1" as -1
        except ValueError:
            return shown, []
        return bare, markers


class _Raw:
    """A table as parsed: where it starts ``(line, column)``, its caption and rows by section
    ``[kind, [(line, [cells])]]``, the table it is nested in, its widest row ``(line, cells)``."""

    def __init__(self, pos: tuple, nested_in: Optional[int]):
        self.pos, self.line, self.caption, self.nested_in = pos, pos[0], None, nested_in
        self.sections, self.closed, self.widest = [], False, (pos[0], 0)
        self.row = self.cell = self.section = None


class HtmlTable:
    """One HTML table as a pipe table is held (:class:`~harness_ext.adapters.csv_markdown.MdTable`): its line, name,
    header and body rows ``(line, cells)`` with cells as read, and what reading it changed (``counts``)."""

    __slots__ = ("line", "heading", "header", "rows", "counts", "widest")

    def __init__(self, line, heading, header, rows, counts, widest):
        self.line, self.heading, self.header, self.rows, self.counts, self.widest = (line, heading, header, rows,
                                                                                   counts, widest)

    def where(self) -> str:
        return f"the table at line {self.line}" + (f" (under {self.heading!r})" if self.heading else "")

    @staticmethod
    def render(cell: str) -> tuple:
        plain = edge_emoji(cell)  # a cell's text is read as the page shows it already (_Cell.text), subscripts too
        return plain, False, plain != cell, False

    @staticmethod
    def shown(cell: str) -> str:
        return edge_emoji(cell)

    def line_of(self, n: int) -> int:
        return self.line if n <= 2 or n - 3 >= len(self.rows) else self.rows[n - 3][0]


class _Parser(HTMLParser):
    """The tables of a page, with the headings above them (``headings``: ``((line, column), text)`` given for a
    Markdown file's own headings)."""

    def __init__(self, headings=()):
        super().__init__(convert_charrefs=False)
        self.tables, self.open, self.headings = [], [], list(headings)
        self.skip, self.skipped, self.ignored, self.too_deep, self.heading = 0, Counter(), 0, 0, None

    # -- where text goes ---------------------------------------------------------------------------------------
    def _cell(self):
        return self.open[-1].cell if self.open else None

    def _text(self, text: str, markup: bool = False) -> None:
        if self.skip:
            return
        if self.heading is not None:
            self.heading[1].append(text)
        cell = self._cell()
        if cell is not None:
            cell.add(text)
            cell.markup = cell.markup or markup
        elif self.open and self.open[-1].caption is not None and not self.open[-1].caption[1]:
            self.open[-1].caption[0].append(text)

    def handle_data(self, data):
        self._text(data)

    def handle_entityref(self, name):
        self._text(html.unescape(f"&{name};"), True)

    def handle_charref(self, name):
        self._text(html.unescape(f"&#{name};"), True)

    # -- tags ---------------------------------------------------------------------------------------------------
    def handle_startendtag(self, tag, attrs):
        if tag == "br":
            self._text(_BREAK, True)
        elif tag not in _SKIPPED:
            self.handle_starttag(tag, attrs)
            if tag in ("td", "th", "tr", "table", "a", "sup", "sub", "caption") or tag in _HEADINGS:
                self.handle_endtag(tag)

    def handle_starttag(self, tag, attrs):
        if tag in _SKIPPED:
            self.skip += 1
            self.skipped[tag] += 1
            return
        if self.skip:
            return
        if tag == "br":
            return self._text(_BREAK, True)
        if tag in _HEADINGS and self._cell() is None:
            self.heading = (self.getpos(), [])
        elif tag == "table":
            self._table_start()
        elif self.ignored or not self.open:
            self._inline(tag, attrs, True)
        elif tag in ("thead", "tbody", "tfoot"):
            t = self.open[-1]
            self._close_row(t)
            t.section = [tag, []]
            t.sections.append(t.section)
        elif tag == "tr":
            self._row_start(self.open[-1])
        elif tag in ("td", "th"):
            t = self.open[-1]
            self._close_cell(t)
            if t.row is None:
                self._row_start(t)
            t.cell = _Cell(dict(attrs))
            t.row[1].append(t.cell)
        elif tag == "caption" and self._cell() is None:
            self.open[-1].caption = ([], False)
        else:
            self._inline(tag, attrs, True)

    def _inline(self, tag, attrs, start: bool) -> None:
        cell = self._cell()
        if cell is None:
            return
        step = 1 if start else -1
        if tag in ("sup", "sub"):
            cell.marker = max(0, cell.marker + step)
            cell.sub_next = tag == "sub" and start
        elif tag == "a":
            if start:
                cell.hrefs.append(dict(attrs).get("href") or "")
            cell.anchor = max(0, cell.anchor + step)
        elif tag in _FORMAT:
            cell.markup = True

    def handle_endtag(self, tag):
        if tag in _SKIPPED:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag in _HEADINGS and self.heading is not None:
            pos, parts = self.heading
            text = _WS.sub(" ", "".join(parts)).strip()
            if text:
                self.headings.append((pos, text))
            self.heading = None
        elif tag == "table":
            self._table_end()
        elif self.ignored or not self.open:
            self._inline(tag, (), False)
        elif tag in ("thead", "tbody", "tfoot"):
            t = self.open[-1]
            self._close_row(t)
            t.section = None
        elif tag == "tr":
            self._close_row(self.open[-1])
        elif tag in ("td", "th"):
            self._close_cell(self.open[-1])
        elif tag == "caption" and self.open[-1].caption is not None:
            self.open[-1].caption = (self.open[-1].caption[0], True)
        else:
            self._inline(tag, (), False)

    # -- tables and rows ------------------------------------------------------------------------------------------
    def _table_start(self) -> None:
        if self.ignored or len(self.open) >= MAX_NESTING:
            self.ignored += 1
            self.too_deep += 1
            return
        t = _Raw(self.getpos(), self.open[-1].line if self.open and self._cell() is not None else None)
        self.open.append(t)
        self.tables.append(t)

    def _table_end(self) -> None:
        if self.ignored:
            self.ignored -= 1
            return
        if self.open:
            t = self.open.pop()
            self._close_row(t)
            t.closed = True

    def _row_start(self, t: _Raw) -> None:
        self._close_row(t)
        if t.section is None:
            t.section = ["tbody", []]
            t.sections.append(t.section)
        t.row = (self.getpos()[0], [])
        t.section[1].append(t.row)

    def _close_cell(self, t: _Raw) -> None:
        t.cell = None

    def _close_row(self, t: _Raw) -> None:
        t.cell = None
        if t.row is not None:
            n = sum(c.colspan for c in t.row[1])
            if n > t.widest[1]:
                t.widest = (t.row[0], n)
            if len(t.row[1]) > MAX_COLUMNS + 1:  # only counted beyond the widest table read
                del t.row[1][MAX_COLUMNS + 1:]
        t.row = None

    def finish(self) -> list:
        self.close()
        for t in self.open:
            self._close_row(t)
        return self.tables


def _grid(rows: list, repeat: bool, counts: Counter) -> list:
    """``(line, [(cell or None, value index)])`` of ``rows`` laid out on columns: a cell spanning rows repeated on
    each, one spanning columns repeated (``repeat``, a header's group) or in its first column only."""
    pending, out = {}, []  # column -> [rows left, cell]
    for line, cells in rows:
        row, col = {}, 0
        carried = dict(pending)
        for c in cells:
            while col in carried:
                col += 1
            for k in range(c.colspan):
                row[col + k] = (c, 0 if (k == 0 or repeat) else None)
                if c.rowspan > 1:
                    pending[col + k] = [c.rowspan - 1, c]
            if c.colspan > 1 and not repeat:
                counts["colspan"] += 1
            col += c.colspan
            if col > MAX_COLUMNS + 1:
                break
        for j, (left, c) in carried.items():
            if j not in row:
                row[j] = (c, 0)
                counts["rowspan"] += 1
            if left <= 1:
                pending.pop(j, None)
            else:
                pending[j] = [left - 1, c]
        width = max(row) + 1 if row else 0
        out.append((line, [row.get(j, (None, None)) for j in range(width)]))
    return out


def _header_rows(t: _Raw) -> tuple:
    """``(header rows, body rows)`` of a parsed table (module docstring)."""
    sections = [s for s in t.sections if s[1]]
    if not sections:
        return [], []
    head = next((s for s in sections if s[0] == "thead"), None)
    if head is not None:
        return head[1], [r for s in sections if s is not head for r in s[1]]
    first = sections[0][1]
    top = 0
    if len(first) > 1 and len(first[0][1]) == 1 and first[0][1][0].colspan > 1:
        top = 1  # a title row across the table: the header is the rows below it
    depth = top + max([c.rowspan for c in first[top][1]] + [1])
    depth = min(depth, len(first))
    return first[:depth], first[depth:] + [r for s in sections[1:] for r in s[1]]


def _finish(t: _Raw, heading: Optional[str]) -> HtmlTable:
    """A parsed table as :class:`HtmlTable`: its header named (module docstring), its cells' values read."""
    counts: Counter = Counter()
    head, body = _header_rows(t)
    levels = [cells for _, cells in _grid(head, True, Counter())]  # a header's spans name its columns: not noted
    width = max([len(x) for x in levels] + [0])
    caption = _WS.sub(" ", "".join(t.caption[0])).strip() if t.caption else ""
    if len(levels) > 1 and len({id(c) for c, _ in levels[0] if c is not None}) == 1 and width > 1:
        title = levels.pop(0)[0][0].text()  # one cell across the whole width: the table's title
        caption = caption or title
        counts["title"] += 1
    header, spanned = [], Counter()
    for j in range(width):
        names, last = [], None
        for level in levels:
            c = level[j][0] if j < len(level) else None
            text = c.text() if c is not None else ""
            if text and (not names or names[-1] != text):
                names.append(text)
                last = c
        name = " / ".join(names)
        if last is not None and last.colspan > 1:  # a name over several columns with none below: numbered after
            spanned[id(last)] += 1                  # its first, as its CSV conversion would name them
            name += f" ({spanned[id(last)]})" if spanned[id(last)] > 1 else ""
        header.append(name)
        counts["markup"] += any(level[j][0] is not None and level[j][0].markup for level in levels if j < len(level))
    mc = model_column([h.lower() for h in header])
    rows, markers = [], Counter()
    for line, cells in _grid(body, False, counts):
        out = []
        for j, (c, k) in enumerate(cells):
            if c is None or k is None:
                out.append("")
                continue
            value, marks = c.value(j == mc)
            markers.update(marks)
            counts["subscript"] += bool(c.subs) and not marks and "_" in value
            counts["markup"] += c.markup
            out.append(value)
        rows.append((line, out))
    counts.update({f"marker {m}": n for m, n in markers.items()})
    return HtmlTable(t.line, caption or heading, header, rows, counts, t.widest)


def _nearest(headings: list, pos) -> Optional[str]:
    before = [h for h in headings if h[0] < pos]
    return max(before)[1] if before else None


def _markdown_html(text: str) -> tuple:
    """``(text for the HTML parser, Markdown headings)`` of a Markdown file: code blocks and front matter blanked,
    and code spans holding a tag, so that no example is read as a table; lines kept where they are."""
    _, headings, hidden = markdown_outline(text)
    lines = text.lstrip("\ufeff").split("\n")
    for n in hidden:
        lines[n - 1] = ""
    for i, line in enumerate(lines):
        if "`" in line and "<" in line:
            lines[i] = re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)) if "<" in m.group(2) else m.group(0),
                              line)
    return "\n".join(lines), [((n, 0), h) for n, h in headings]


def html_tables(text: str, markdown: bool = False) -> tuple:
    """``(tables, parser)``: every HTML table of ``text`` (a page, or a Markdown file's HTML when ``markdown``) as
    :class:`HtmlTable`, in the order they start, and the parser (what it passed over)."""
    headings = ()
    if markdown:
        text, headings = _markdown_html(text)
    p = _Parser(headings)
    p.feed(text.lstrip("\ufeff"))
    raw = p.finish()
    heads = sorted(p.headings)
    return [_finish(t, _nearest(heads, t.pos)) for t in raw], p


def _markdown_file(suffix: str) -> bool:
    return suffix not in HTML_SUFFIXES


@functools.lru_cache(maxsize=4)
def _parsed(data: bytes, markdown: bool) -> tuple:
    """:func:`html_tables` of a file's bytes, kept for the next look at the same bytes: a page is parsed once for the
    walk, the adapter's claim and its reading (a row of a million cells takes seconds)."""
    return html_tables(data.decode("utf-8", "replace"), markdown)


def page_tables(data: bytes, suffix: str) -> tuple:
    """``(leaderboard tables, [(other table, why not)], parser or None)`` of a page: a Markdown file's pipe and HTML
    tables, in the order they stand, or an HTML file's tables."""
    md = _markdown_file(suffix)
    boards, others = leaderboard_tables(data.decode("utf-8", "replace")) if md else ([], [])
    parser = None
    if _TABLE_TAG.search(data):
        tables, parser = _parsed(data, md)
        for t in tables:
            why = why_not_leaderboard(t) if t.header else "no header row"
            (boards.append(t) if why is None else others.append((t, why)))
    boards.sort(key=lambda t: t.line)
    others.sort(key=lambda o: o[0].line)
    return boards, others, parser


def page_leaderboard(data: bytes, suffix: str) -> bool:
    """Whether a Markdown or HTML file's ``data`` holds a leaderboard table (a Markdown file's pipe tables first)."""
    if _markdown_file(suffix) and markdown_leaderboard(data):
        return True
    if not _TABLE_TAG.search(data):
        return False
    tables, _ = _parsed(data, _markdown_file(suffix))
    return any(t.header and why_not_leaderboard(t) is None for t in tables)


def page_leaderboard_in_head(path, suffix: str) -> bool:
    """Whether the first :data:`~harness_ext.adapters.csv_markdown.HEAD_BYTES` of a file too large to read hold a
    leaderboard table: such a file is claimed, to be refused with its size."""
    with open(path, "rb") as fh:
        return page_leaderboard(fh.read(HEAD_BYTES), suffix)


class _HtmlTally(_Tally):
    """:class:`~harness_ext.adapters.csv_markdown._Tally` and what reading HTML changed, noted once per file."""

    def __init__(self, html_page: bool):
        super().__init__()
        self.shows = "a browser" if html_page else "GitHub"
        self.counts: Counter = Counter()
        self.nested, self.unclosed, self.grouped = [], [], []
        self.parser = None

    def board(self, t) -> None:
        if isinstance(t, HtmlTable):
            self.counts.update(t.counts)
            self.markup += t.counts["markup"]
            self.grouped.extend(h for h in t.header if " / " in h)

    def report(self, src: SourceFile) -> None:
        super().report(src)
        c = self.counts
        marks = sorted(((n, k[len("marker "):]) for k, n in c.items() if k.startswith("marker ")),
                       key=lambda nm: (-nm[0], nm[1]))
        if marks:
            total = sum(n for n, _ in marks)
            src.note(f"<sup>/<sub> markers left out of {plural(total, 'score cell')}, each marker with its count: "
                     + listed([f"{m!r} {n}" for n, m in marks], 12) + " (a marker often flags a score as "
                     "self-reported or reproduced: the page's notes say which)")
        for key, noun, said in (("subscript", "cell", "with a subscript after its text read with '_' before the "
                                                      "subscript (GPT<sub>4</sub> as GPT_4), as a superscript power "
                                                      "is read with '^'"),
                                ("rowspan", "cell", "spanning rows (rowspan) repeated on each row it spans"),
                                ("colspan", "body cell", "spanning columns (colspan) read in its first column, the "
                                                         "others empty"),
                                ("title", "header row", "of one cell across the table read as the table's title")):
            if c[key]:
                src.note(f"{plural(c[key], noun)} {said}")
        if self.grouped:
            src.note(f"{plural(len(self.grouped), 'column')} named by the header rows above them, joined with ' / ' "
                     f"({listed(self.grouped, 6)})")
        p = self.parser
        if p is not None and p.skipped:
            src.note("not read: " + listed([f"{plural(n, f'<{k}> element')}" for k, n in sorted(p.skipped.items())], 3))
        if p is not None and p.too_deep:
            src.note(f"{plural(p.too_deep, 'table')} nested more than {MAX_NESTING} deep read as the text of the cell "
                     "holding them")
        for t in getattr(p, "tables", []):
            if t.nested_in is not None:
                src.note(f"the table at line {t.line}, in a cell of the table at line {t.nested_in}, read on its own; "
                         "its text is not part of that cell")
            if not t.closed:
                src.note(f"the table at line {t.line} is not closed (no </table>): read to the end of the file")


def _check_width(src: SourceFile, t) -> None:
    if isinstance(t, HtmlTable) and t.widest[1] > MAX_COLUMNS:
        line, n = t.widest
        raise IngestError(src.path, f"line {line} of {t.where()} has {n:,} cells; at most {MAX_COLUMNS:,} columns are "
                                    "read from an HTML table (a larger table is data, not a page: write it as CSV)")


def read_page(src: SourceFile, read_rows) -> list:
    """The records of every leaderboard table of a Markdown or HTML file (module docstring)."""
    try:
        src.bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(src.path, f"not UTF-8 text (byte {exc.start}): save the page as UTF-8") from None
    boards, others, parser = page_tables(src.bytes, src.suffix)
    tally = _HtmlTally(not _markdown_file(src.suffix))
    tally.parser = parser
    for t in boards:
        _check_width(src, t)
        tally.board(t)
    kind = "Markdown" if _markdown_file(src.suffix) else "HTML"
    return read_tables(src, boards, others, read_rows, tally, kind, "no table" if kind == "HTML" else "no pipe table")
