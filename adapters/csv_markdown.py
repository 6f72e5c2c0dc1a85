"""Leaderboards published as Markdown pipe tables, read as the CSV tables they are.

Many boards exist only as Markdown: VLMEvalKit's ``results/<benchmark>.md``, a repository's ``alldata.md``, the
leaderboard in a benchmark's README. A GitHub-flavoured pipe table (a header row, a delimiter row ``|---|:--:|``,
outer pipes optional, ``\\|`` a pipe inside a cell) becomes the rows its CSV conversion would hold, and the CSV
adapter's own rules read them (:mod:`harness_ext.adapters.csv_table`: model column, aggregates, metadata, reference
rows, sidecars, variants), as it reads JSON records (:mod:`harness_ext.adapters.csv_records`).

* **Cells as the page shows them.** Bold and italics around a cell (``**93.2**``), code spans, ``<br>`` (a space,
  none where it breaks a word at a hyphen: ``MMLU<br/>-Redux`` is ``MMLU-Redux``), formatting
  tags (``<b>``, ``<sup>``, ``<span>``, ``<img>``), HTML entities and backslash escapes (``Human Performance\\*``
  shows ``Human Performance*``) are read as their text; a subscript after text is joined to it with ``_``
  (``GPT<sub>4</sub>`` is ``GPT_4``, as in HTML tables); emoji before or after a
  cell's text (``🥇 gpt-4o``) are left out; a cell left empty by that keeps its emoji. A model cell that is one
  link is the CSV adapter's (its text is the model, noted). Each kind of change is noted with its count.
* **Which tables.** A table is a leaderboard when its header names a model column as a CSV header would
  (:func:`~harness_ext.adapters.csv_rules.model_column`; by name: a first column without a name, a CSV's pandas
  index, heads the rows of a comparison table in Markdown) and another column holds numbers (mostly, on its
  first 200 rows) that its name does not describe as the model's (a size, a context length: a list of models and
  their sizes holds no score).
  Other tables (options, contents, feature matrices) are not read, each noted with why. A file without a
  leaderboard table is not claimed: a folder of READMEs and notes ingests as before.
* **Benchmarks.** One leaderboard table: the file's benchmark, as for its CSV (the sidecar's ``benchmark`` or the
  file's stem). Several (a README with a table per task or setting): each its own benchmark, named by the nearest
  heading above it (``### Zero-shot``), after the sidecar's ``benchmark`` when it gives one (``<benchmark> /
  <heading>``); a table with no heading, or under the same heading as one before it, is numbered
  (``<stem> table 2``, ``Results (2)``). Each table read is noted with its line, benchmark and size.
* **Ragged rows.** GitHub renders a row shorter than the header with empty cells: so is it read, noted with its
  lines. Cells beyond the header's last column are not shown on the page; they stay in columns without a name,
  which the CSV rules note and do not read (the chinese-llm-benchmark ``alldata.md`` ranks its rows there).
* **Limits.** Files of at most 4 MiB (:data:`~harness_ext.store.ingest_read.TABLE_FILE_BYTES`) are read, tables of at
  most :data:`MAX_COLUMNS` columns: a larger one, whose head shows a leaderboard table, is refused with its size.
  An error in any table refuses the whole file, naming the table's line; nothing of it is stored.

Tables lm-eval printed (:mod:`harness_ext.adapters.lm_eval_table`) and model cards with results in their front
matter (:mod:`harness_ext.adapters.model_card`) are left to their adapters.
"""

from __future__ import annotations

import html
import re
from typing import Optional

from harness_ext.adapters.csv_rules import META_NAME, MOSTLY_NUMERIC, _parse, model_column
from harness_ext.errors import IngestError
from harness_ext.report import listed, plural
from harness_ext.types import SourceFile

__all__ = ["MARKDOWN_SUFFIXES", "MAX_COLUMNS", "MdTable", "edge_emoji", "leaderboard_tables",
           "markdown_leaderboard", "markdown_outline", "markdown_tables", "read_tables", "render_cell", "split_row"]

MARKDOWN_SUFFIXES = (".md", ".markdown")
#: The widest table read: published leaderboards have tens to a few hundred columns.
MAX_COLUMNS = 4096
#: How much of a file too large to read is looked at to say it holds a leaderboard table.
HEAD_BYTES = 64 << 10

_DELIM_CELL = re.compile(r"^\s*:?-+:?\s*$")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)((?:\\\\)*)\|")


class MdTable:
    """One pipe table: the line of its header (1-based), its nearest heading, its header's cells and its body rows
    as ``(line, cells)``; cells as written (stripped), not yet rendered."""

    __slots__ = ("line", "heading", "header", "rows")

    def __init__(self, line: int, heading: Optional[str], header: list, rows: list):
        self.line, self.heading, self.header, self.rows = line, heading, header, rows

    def where(self) -> str:
        return f"the table at line {self.line}" + (f" (under {self.heading!r})" if self.heading else "")

    @staticmethod
    def render(cell: str) -> tuple:
        """:func:`render_cell`: ``(text, markup changed, emoji left out)``, then whether a subscript after text
        was joined with ``_``."""
        return _render(cell)

    @staticmethod
    def shown(cell: str) -> str:
        """A cell's text as the page shows it (:func:`render_cell`)."""
        return render_cell(cell)[0]

    def line_of(self, n: int) -> int:
        """The file's line of the CSV reader's row ``n`` (the header row 1, the delimiter row 2)."""
        return self.line + n - 1


def split_row(line: str) -> list:
    """The cells of a table row: split at the pipes not escaped with a backslash, the outer ones optional;
    ``\\|`` in a cell is a pipe."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not _escaped_at(s, len(s) - 1):
        s = s[:-1]
    if "|" not in s:
        return [s.strip().replace("\\|", "|")]
    parts, start = [], 0
    for m in _UNESCAPED_PIPE.finditer(s):
        end = m.end() - 1
        parts.append(s[start:end])
        start = m.end()
    parts.append(s[start:])
    return [p.strip().replace("\\|", "|") for p in parts]


def _escaped_at(s: str, i: int) -> bool:
    n = 0
    while i - 1 - n >= 0 and s[i - 1 - n] == "\\":
        n += 1
    return n % 2 == 1


def _delimiter_row(line: str, width: int) -> bool:
    if "-" not in line or ("|" not in line and width > 1):
        return False
    cells = split_row(line)
    return len(cells) == width and all(_DELIM_CELL.match(c) for c in cells)


def markdown_tables(text: str) -> list:
    """Every GitHub-flavoured pipe table of ``text`` (outside fenced code blocks and front matter), with its
    nearest heading."""
    return markdown_outline(text)[0]


def markdown_outline(text: str) -> tuple:
    """``(pipe tables, headings as (line, text), lines of code blocks and front matter)`` of a Markdown ``text``;
    lines counted from 1. The HTML tables of a Markdown file (:mod:`harness_ext.adapters.csv_html`) are named by
    the same headings and looked for outside the same blocks."""
    lines = text.lstrip("\ufeff").split("\n")
    tables, headings, hidden, fence, i = [], [], [], None, 0
    if lines and lines[0].strip() == "---":  # YAML front matter: not the document's text
        end = next((k for k in range(1, len(lines)) if lines[k].strip() in ("---", "...")), None)
        i = end + 1 if end is not None else 0
        hidden.extend(range(1, i + 1))
    heading = None
    while i < len(lines):
        line = lines[i].rstrip("\r")
        f = _FENCE.match(line)
        if fence is not None:
            if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence):
                fence = None
            hidden.append(i + 1)
            i += 1
            continue
        if f:
            hidden.append(i + 1)
            fence, i = f.group(1), i + 1
            continue
        h = _ATX.match(line)
        if h:
            heading = render_cell(h.group(2))[0] or heading
            headings.append((i + 1, heading))
            i += 1
            continue
        nxt = lines[i + 1].rstrip("\r") if i + 1 < len(lines) else ""
        if "|" in line and "-" in nxt:
            header = split_row(line)
            if _delimiter_row(nxt, len(header)):
                rows, k = [], i + 2
                while k < len(lines) and lines[k].strip() and "|" in lines[k] and not _FENCE.match(lines[k]) \
                        and not _ATX.match(lines[k]):
                    rows.append((k + 1, split_row(lines[k].rstrip("\r"))))
                    k += 1
                tables.append(MdTable(i + 1, heading, header, rows))
                i = k
                continue
        if line.strip() and "|" not in line and _SETEXT.match(nxt) and not _SETEXT.match(line):
            heading = render_cell(line)[0] or heading
            headings.append((i + 1, heading))
            i += 2
            continue
        i += 1
    return tables, headings, hidden


# -- cells as the page shows them ------------------------------------------------------------------------------

_BR = re.compile(r"<br\s*/?>", re.I)
#: A line break between a word and a hyphen that joins it to the next (``MMLU<br/>-Redux``, ``Zebra-<br>Logic``):
#: the page breaks the header there for width, and the name is one word (``MMLU-Redux``, not ``MMLU -Redux``).
_BR_AT_HYPHEN = r"(?<=[^\W\d_])\s*{br}\s*(?=-[^\W\d_])|(?<=[^\W\d_]-)\s*{br}\s*(?=[^\W\d_])"


def hyphen_breaks(br: str):
    """The pattern of a line break ``br`` (a regular expression) beside a hyphen inside a word (:data:`_BR_AT_HYPHEN`),
    which reads as no space; any other line break reads as one."""
    return re.compile(_BR_AT_HYPHEN.format(br=br), re.I)


_BR_JOINED = hyphen_breaks(_BR.pattern)
#: Formatting tags, kept out of a cell's text (an anchor ``<a>`` is not: a model cell's link is the CSV rules').
_FORMAT_TAG = re.compile(r"</?(?:b|strong|i|em|u|ins|mark|sup|sub|span|font|small|big|code|center|div|p|s|del|"
                         r"strike)\b[^>]*>|<img\b[^>]*>", re.I)
#: A ``<sub>`` right after text, and a whole ``<sub>`` element.
_SUB_AFTER_TEXT = re.compile(r"(?<=\S)<sub\b[^>]*>(?=\s*[^<\s])", re.I)
_SUB_ELEMENT = re.compile(r"<sub\b[^>]*>.*?</sub\s*>", re.I | re.S)
#: A CommonMark backslash escape: a backslash before ASCII punctuation shows that character (``\*``, ``\_``).
_BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
#: Where an escaped character is held while the markup is read (a private-use code point per ASCII character).
_HELD = 0xE000
_HELD_CHAR = re.compile("[\uE021-\uE07E]")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_WRAPPED = re.compile(r"^(__|\*|_)(?=\S)(.+?)(?<=\S)\1$")
_CODE = re.compile(r"(`+)(.+?)\1")
_EMOJI = "\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF\uFE0F\u200D\u20E3"
_EDGE_EMOJI = re.compile(f"^[{_EMOJI}\\s]+(?=[^{_EMOJI}\\s])|(?<=[^{_EMOJI}\\s])[{_EMOJI}\\s]*[{_EMOJI}][{_EMOJI}\\s]*$")


def _subscripts(text: str) -> str:
    """``text`` with a ``_`` before each ``<sub>`` that follows text (``GPT<sub>4</sub>``: ``GPT_4``, as the HTML
    reader reads it), unless the cell is a number with a marker (``85.2<sub>*</sub>``), read as before."""
    if not _SUB_AFTER_TEXT.search(text):
        return text
    try:
        _parse(_FORMAT_TAG.sub("", _SUB_ELEMENT.sub("", text)).strip())
        return text
    except ValueError:
        return _SUB_AFTER_TEXT.sub(lambda m: "_" + m.group(0), text)


def render_cell(cell: str) -> tuple:
    """``(text, markup changed, emoji left out)`` of one cell as the page shows it (module docstring)."""
    return _render(cell)[:3]


def _render(cell: str) -> tuple:
    """:func:`render_cell` and whether a subscript after text was joined with ``_`` (:func:`_subscripts`, run once
    per cell: the tally counts what the rendering did)."""
    text, subscripted = cell, False
    if "\\" in text:  # held apart while the markup is read: an escaped star is no emphasis
        text = _BACKSLASH_ESCAPE.sub(lambda m: chr(_HELD + ord(m.group(1))), text)
    if any(c in cell for c in "*_`<&"):
        joined = _subscripts(text)
        text, subscripted = joined, joined != text
        text = _BR.sub(" ", _BR_JOINED.sub("", text))
        text = _FORMAT_TAG.sub("", text)
        text = _CODE.sub(lambda m: m.group(2).strip(), text)
        text = _STRONG.sub(r"\1", text)
        m = _WRAPPED.match(text.strip())
        if m:
            text = m.group(2)
        if "&" in text and "<a" not in text.lower():  # an anchor's entities are decoded with its text
            text = html.unescape(text)
        text = re.sub(r"\s+", " ", text).strip()
    if "\\" in cell:
        text = _HELD_CHAR.sub(lambda m: chr(ord(m.group(0)) - _HELD), text)
    markup = text != cell
    plain = edge_emoji(text)
    return plain, markup, plain != text, subscripted


def edge_emoji(text: str) -> str:
    """``text`` without the emoji before or after it (``🥇 gpt-4o``); a text of emoji alone is kept."""
    return _EDGE_EMOJI.sub("", text).strip() if not text.isascii() else text


# -- which tables are leaderboards --------------------------------------------------------------------------------

def _numeric(cells) -> bool:
    """Whether a column's cells are mostly numbers (at least one)."""
    n = bad = 0
    for c in cells:
        try:
            v, _ = _parse(c)
        except ValueError:
            bad += 1
            continue
        n += v is not None
    return n > 0 and n >= MOSTLY_NUMERIC * (n + bad)


def why_not_leaderboard(t: MdTable) -> Optional[str]:
    """None when ``t`` is a leaderboard (module docstring), else why not; ``t`` a pipe table or an HTML table
    (:class:`~harness_ext.adapters.csv_html.HtmlTable`), its cells read by its ``shown``."""
    shown = t.shown
    header = [shown(c) for c in t.header]
    mc = model_column([h.lower() for h in header])
    if mc is None or not header[mc]:  # an unnamed first column heads a comparison table's rows, not a model's
        return f"no model column in its header ({listed([h or '(unnamed)' for h in header], 6)})"
    if len(header) > MAX_COLUMNS:
        return None  # claimed, to be refused with its width
    if not t.rows:
        return "no rows"
    described = []
    for j in range(len(header)):
        if j != mc and _numeric(shown(row[j]) for _, row in t.rows[:200] if j < len(row)):
            if not META_NAME.search(header[j]):
                return None
            described.append(header[j])
    if described:  # a list of models with their sizes or context windows: no score to read
        return (f"its only column{'s' * (len(described) > 1)} of numbers describe{'s' * (len(described) == 1)} the "
                f"models ({listed(described, 4)}: the name says so), no score column")
    first = [shown(c) for j, c in enumerate(t.rows[0][1]) if j != mc]
    return f"no column of numbers beside the model column (its first row: {listed(first, 4)})"


def leaderboard_tables(text: str) -> tuple:
    """``(leaderboard tables, [(other table, why not)])`` of a Markdown text."""
    read, other = [], []
    for t in markdown_tables(text):
        why = why_not_leaderboard(t)
        (read.append(t) if why is None else other.append((t, why)))
    return read, other


def markdown_leaderboard(data: bytes) -> bool:
    """Whether Markdown ``data`` holds a leaderboard table (one pass for a pipe and a delimiter row first)."""
    if b"|" not in data or b"-" not in data:
        return False
    text = data.decode("utf-8", "replace")
    if not re.search(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*\|", text, re.M):
        return False
    return any(why_not_leaderboard(t) is None for t in markdown_tables(text))


# -- rows for the CSV reader ------------------------------------------------------------------------------------

class _Tally:
    """What rendering and ragged rows changed, noted once per file."""

    #: Who shows a short row with empty cells at its end (a browser, for an HTML page).
    shows = "GitHub"

    def __init__(self):
        self.markup, self.emoji, self.short, self.subscript = 0, [], [], 0

    def cells(self, cells: list, render=_render) -> list:
        """``cells`` as the page shows them, by ``render`` (``(text, markup changed, emoji left out, subscript
        joined)``: :meth:`MdTable.render`), counted for the notes."""
        out = []
        for c in cells:
            text, markup, emoji, subscript = render(c)
            self.markup += markup
            self.subscript += subscript
            if emoji:
                self.emoji.append(c)
            out.append(text)
        return out

    def report(self, src: SourceFile) -> None:
        if self.markup:
            src.note(f"{plural(self.markup, 'cell')} written with Markdown or HTML markup (bold, code, <br>, tags, "
                     "entities, backslash escapes) read as the text the page shows")
        if self.subscript:
            src.note(f"{plural(self.subscript, 'cell')} with a subscript after its text read with '_' before the "
                     "subscript (GPT<sub>4</sub> as GPT_4), as a superscript power is read with '^'")
        if self.emoji:
            src.note(f"emoji before or after the text of {plural(len(self.emoji), 'cell')} left out "
                     f"({listed(sorted(set(self.emoji)), 6)})")
        if self.short:
            lines = [n for n, _ in self.short]
            src.note(f"{plural(len(lines), 'row')} shorter than the header read with empty cells at the end, as "
                     f"{self.shows} shows them (line{'s' * (len(lines) != 1)} {listed([str(n) for n in lines], 8)})")


def table_rows(src: SourceFile, t: MdTable, tally: _Tally) -> list:
    """The rows of ``t`` as its CSV conversion holds them: the header (widened with unnamed columns to the widest
    row), a blank row where the delimiter row stands, then the body; a short row padded with empty cells."""
    if len(t.header) > MAX_COLUMNS:
        raise IngestError(src.path, f"{t.where()} has {len(t.header):,} columns; at most {MAX_COLUMNS:,} are read "
                                    "from a Markdown table (a larger table is data, not a page: write it as CSV)")
    header = tally.cells(t.header, t.render)
    width = max([len(header)] + [len(cells) for _, cells in t.rows])
    if width > MAX_COLUMNS:
        n = next(n for n, cells in t.rows if len(cells) == width)
        raise IngestError(src.path, f"line {n} of {t.where()} has {width:,} cells; at most {MAX_COLUMNS:,} are read")
    header += [""] * (width - len(header))
    rows = [header, []]
    for n, cells in t.rows:
        if len(cells) < len(t.header):
            tally.short.append((n, len(cells)))
        rows.append(tally.cells(cells, t.render) + [""] * (width - len(cells)))
    return rows


#: ``row N`` in the CSV reader's messages: the N-th row counting the header as row 1.
_ROW = re.compile(r"\brow (\d+)\b")


def at_lines(t: MdTable, reason: str) -> str:
    """A CSV reader's error about ``t`` with its rows given as the file's lines, and the table named."""
    return f"{t.where()}: " + _ROW.sub(lambda m: f"line {t.line_of(int(m.group(1)))}", reason)


def _benchmarks(src: SourceFile, boards: list) -> list:
    """The benchmark of each of several leaderboard tables (module docstring)."""
    from harness_ext.adapters.csv_rules import column_meta

    prefix = column_meta(src)["benchmark"]
    stem = re.sub(r"[^a-z0-9]+", "_", src.path.stem.lower()).strip("_") or "markdown"
    names, seen = [], {}
    for k, t in enumerate(boards, start=1):
        name = t.heading or f"{stem} table {k}"
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name} ({seen[name]})"
        names.append(f"{prefix} / {name}" if prefix else name)
    return names


def read_tables(src: SourceFile, boards: list, others: list, read_rows, tally: _Tally, kind: str, none: str) -> list:
    """The records of the leaderboard tables ``boards`` of ``src`` (a page of ``kind``), in the order of the page;
    ``others``: its other tables, with why each is not a leaderboard (``none``: what to say when there are none)."""
    if not boards:
        why = "; ".join(f"{t.where()}: {why}" for t, why in others[:4]) or none
        raise IngestError(src.path, f"no leaderboard table (a model column and a column of numbers) in this {kind} "
                                    f"file ({why})")
    out = []
    names = _benchmarks(src, boards) if len(boards) > 1 else [None]
    for t, name in zip(boards, names):
        rows = table_rows(src, t, tally)
        own = "benchmark" in (h.lower() for h in rows[0])
        if name is not None and not own:
            rows = [rows[0] + ["benchmark"], []] + [r + [name] for r in rows[2:]]
        if name is not None:
            src.note(f"{t.where()} read as benchmark {name if not own else 'named in its benchmark column'!r}: "
                     f"{plural(len(t.rows), 'row')}, {plural(len(t.header), 'column')}")
        try:
            out.extend(read_rows(src, rows))
        except IngestError as exc:
            raise IngestError(src.path, at_lines(t, exc.reason)) from None
    tally.report(src)
    if others:
        src.note(f"{plural(len(others), 'table')} not read, not a leaderboard: "
                 + "; ".join(f"line {t.line}{f' ({t.heading!r})' if t.heading else ''}: {why}"
                             for t, why in others[:8]) + (f"; and {len(others) - 8} more" if len(others) > 8 else ""))
    return out
