"""Shared output: the one table formatter, the one JSON encoder, typed results, plots, progress.

One place for these so every command prints tables, writes JSON and draws figures
the same way, and a notebook user gets the same objects as the command line:
a method returns a :class:`Result`, which renders itself (``str(result)``,
``result.to_frame()``, ``result.to_json()``, ``result.plot()``). matplotlib is
optional (the ``plot`` extra) and imported lazily with the non-interactive Agg backend.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, Optional


#: The widest a text cell of a printed table is: longer ones (a 113-character model name) are shortened in the middle
#: (:func:`shorten`), so one name does not widen every row; the JSON, CSV and DataFrames hold them whole.
MAX_CELL = 60
#: What marks a cell as prose or a list (a pair's ``why``, a failed row's ``note``, ``info``'s metric names, a
#: plugin's status), which :func:`format_table` never shortens: a message cut in the middle loses its point, and a
#: command cuts a list its own way, counting what it leaves out. More than three spaces also make prose.
PROSE_MARKS = (",", "; ", ": ")


def shorten(text: str, width: int = MAX_CELL) -> str:
    """``text`` at most ``width`` characters: its start and end kept, the middle replaced by ``…``.

    A model name's organisation and its revision (``@step143000``) are at its two ends, so both stay readable.

    Examples
    --------
    >>> shorten("EleutherAI/pythia-v1.1-2.8b-deduped@step143000", 30)
    'EleutherAI/pyth…ped@step143000'
    """
    if len(text) <= width:
        return text
    tail = (width - 1) // 2
    return text[:width - 1 - tail] + "…" + text[len(text) - tail:]


def _is_name(text: str) -> bool:
    """Whether a text cell reads as a name (a model, a dataset, a path), not prose or a list (:data:`PROSE_MARKS`)."""
    return text.count(" ") <= 3 and not any(mark in text for mark in PROSE_MARKS)


def _shortened(values, width: int) -> tuple:
    """``(values as printed, how many were shortened)``: each name over ``width`` shortened, then every text shown
    on one line with its control and format characters escaped (:func:`~harness_ext.safe_output.escape_line`).

    Escaped here, before the columns are measured, so a name holding a right-to-left override (U+202E, printed as
    the six characters ``\\u202e``) is padded like the others; what prints it escapes again and leaves the table
    as it is (an escape is plain ASCII). Shortened first, so a cut never splits an escape.
    """
    from .safe_output import escape_line

    short = [shorten(v, width) if isinstance(v, str) and _is_name(v) else v for v in values]
    return [escape_line(v) if isinstance(v, str) else v for v in short], sum(a is not b for a, b in zip(values, short))


def _changed(before, after) -> bool:
    """Whether :func:`_shortened` changed a text of ``before`` (so the printed copy must take ``after``)."""
    return any(isinstance(a, str) and a != b for a, b in zip(before, after))


def _shown_labels(index):
    """``index`` (a table's columns or rows) with its texts as :func:`_shortened` shows them, not shortened; the same
    object when none changes, so an ordinary table is printed exactly as pandas prints it."""
    import pandas as pd

    def shown(values):
        return _shortened(values, 1 << 62)[0]

    names = shown(list(index.names))
    if isinstance(index, pd.MultiIndex):
        tuples = [tuple(shown(list(t))) for t in index]
        if _changed(list(index.names), names) or any(_changed(list(t), u) for t, u in zip(index, tuples)):
            return pd.MultiIndex.from_tuples(tuples, names=names) if tuples else index.set_names(names)
        return index
    labels = shown(list(index))
    if _changed(list(index.names), names) or _changed(list(index), labels):
        return pd.Index(labels, name=names[0], dtype=object)
    return index


def format_table(df, floatfmt: str = "{:.3f}", index: bool = True, max_cell: int = MAX_CELL) -> str:
    """Render a DataFrame as an aligned plain-text table (what the CLI prints).

    A list of dicts of strings (one per row) is rendered the same way without
    importing pandas, for commands that should start instantly (``plugins``), except that its last column is
    left-aligned: it is free text (a description, a reason), and right-aligned every row was padded to the longest.
    Names (text cells and row labels) over ``max_cell`` characters are shortened in the middle (:func:`shorten`),
    and a last line says how many; only the printed text: the ``--json`` output and the DataFrame hold them whole.
    Prose and lists (:data:`PROSE_MARKS`) are never shortened.
    """
    if isinstance(df, list):
        columns = list(df[0]) if df else []
        text_rows = [[str(r.get(c, "")) for c in columns] for r in df]
        done = [_shortened(row, max_cell) for row in text_rows]
        cells, n_cut = [row for row, _ in done], sum(n for _, n in done)
        head = _shortened([str(c) for c in columns], 1 << 62)[0]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(head)]
        text = "\n".join(" ".join([v.rjust(w) for v, w in zip(line[:-1], widths)] + line[-1:]).rstrip()
                         for line in [head] + cells)
        return text + _cut_note(n_cut, max_cell)
    import pandas as pd

    shown = df.copy()
    n_cut = 0
    for i, col in enumerate(shown.columns):  # by position: a table may repeat a column name
        values = shown.iloc[:, i]
        if pd.api.types.is_float_dtype(values):
            shown.isetitem(i, values.map(lambda v: "" if pd.isna(v) else floatfmt.format(v)))
        elif values.dtype == object or pd.api.types.is_string_dtype(values):
            short, n = _shortened(list(values), max_cell)
            if _changed(list(values), short):
                shown.isetitem(i, pd.Series(short, index=shown.index, dtype=object))
                n_cut += n
    shown.columns = _shown_labels(shown.columns)
    if index:
        labels = list(shown.index)
        if isinstance(shown.index, pd.MultiIndex):
            done = [_shortened(list(t), max_cell) for t in labels]
            n = sum(k for _, k in done)
            if any(_changed(list(t), u) for t, (u, _) in zip(labels, done)):
                shown.index = pd.MultiIndex.from_tuples([tuple(u) for u, _ in done], names=shown.index.names)
        else:
            short, n = _shortened(labels, max_cell)
            shown.index = pd.Index(short, name=shown.index.name) if _changed(labels, short) else shown.index
        shown.index = _shown_labels(shown.index)  # its name; the labels are already shown
        n_cut += n
    if _has_wide(shown):  # Chinese or Japanese names take two columns each: pad by what the terminal shows
        with pd.option_context("display.unicode.east_asian_width", True):
            return shown.to_string(index=index) + _cut_note(n_cut, max_cell)
    return shown.to_string(index=index) + _cut_note(n_cut, max_cell)


def _has_wide(df) -> bool:
    """Whether a cell, row label or column name of ``df`` holds a character a terminal shows two columns wide
    (East Asian wide or full-width): pandas pads by characters unless told, and such a table's columns drift."""
    import unicodedata

    texts = [*map(str, df.columns), *map(str, df.index)]
    texts += [v for i in range(df.shape[1]) if df.iloc[:, i].dtype == object for v in df.iloc[:, i] if isinstance(v, str)]
    return any(ord(c) > 0x10FF and unicodedata.east_asian_width(c) in "WF" for t in texts for c in t)


def _cut_note(n_cut: int, max_cell: int) -> str:
    """The line under a table whose cells :func:`format_table` shortened (nothing when none was)."""
    if not n_cut:
        return ""
    return (f"\n({plural(n_cut, 'cell')} over {max_cell} characters shortened in the middle, marked …; "
            "the JSON output holds them whole)")


def listed(items, limit: int) -> str:
    """The first ``limit`` of ``items``, comma-separated, then `` and N more`` for the rest: how a message names
    what a heuristic left out, with the count of what it does not name."""
    items = list(items)
    return ", ".join(map(str, items[:limit])) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def benchmarks_label(df, given=None) -> str:
    """What an analysis's title calls its matrix: the ``--benchmark`` names ``given``, else the benchmarks of the
    matrix's columns (a store matrix's ``attrs["datasets"]``: ``mmvet_vlmevalkit`` for a store of one board), else
    ``"all benchmarks"``."""
    if given:
        return ", ".join(given)
    meta = getattr(df, "attrs", {}).get("datasets") or {}
    names = list(dict.fromkeys(m.get("benchmark") for m in meta.values() if isinstance(m, dict) and m.get("benchmark")))
    if not names:
        return "all benchmarks"
    return listed(names, 3) if len(names) <= 3 else f"{len(names)} benchmarks: {listed(names, 3)}"


#: A number standing alone in a warning: after a space or bracket, before one or punctuation (not part of a name
#: such as ``mmlu_2``, ``LB_IF2`` or ``babi_qa:task=15``).
_NUMBER = r"(?<![^\s(\[])-?\d+(?:\.\d+)?(?=\.?(?:[\s,;:)\]%]|$))"


def grouped_warnings(warnings, models, limit: int = 6) -> list:
    """``warnings`` with those that say the same of several ``models`` said once.

    A warning ``"<model>: <text>"`` whose text, its numbers aside, another model's warning repeats is joined with
    it: ``"5 models (a, b, ...): <text>"``, each number that differs between them given as its range (``0.79 to
    1.00 sd above ...``). Other warnings, and a text only one model has, are kept as they are, in their order (a
    group takes the place of its first warning). For the printed output only: the result objects keep one warning
    per model.
    """
    import re

    number = re.compile(_NUMBER)
    names = sorted({str(m) for m in models}, key=len, reverse=True)  # the longest name a warning starts with
    order, groups = [], {}
    for w in warnings:
        model = next((n for n in names if w.startswith(n + ": ")), None)
        if model is None:
            order.append(w)
            continue
        body = w[len(model) + 2:]
        key = number.sub("\0", body)
        if key not in groups:
            groups[key] = []
            order.append(groups[key])
        groups[key].append((model, body, number.findall(body)))
    out = []
    for entry in order:
        if isinstance(entry, str):
            out.append(entry)
        elif len(entry) == 1:
            out.append(f"{entry[0][0]}: {entry[0][1]}")
        else:
            parts = iter(_ranges([nums for _, _, nums in entry]))
            text = re.sub("\0", lambda _: next(parts), number.sub("\0", entry[0][1]))
            out.append(f"{len(entry)} models ({listed([m for m, _, _ in entry], limit)}): {text}")
    return out


def _ranges(numbers: list) -> list:
    """Each number slot of several warnings: the number where they agree, else ``"<min> to <max>"`` as written."""
    out = []
    for slot in zip(*numbers):
        if len(set(slot)) == 1:
            out.append(slot[0])
        else:
            lo, hi = min(slot, key=float), max(slot, key=float)
            out.append(f"{lo} to {hi}")
    return out


def plural(n, noun: str, many: Optional[str] = None) -> str:
    """``n`` and ``noun``, the noun plural unless ``n`` is 1: ``plural(1, "file")`` is ``"1 file"``.

    Parameters
    ----------
    n : int
        The count; printed with thousands separators.
    noun : str
        The singular noun phrase (``"item score"``); its plural adds ``s`` to it.
    many : str, optional
        The plural when it is not ``noun + "s"`` (``"entries"``).

    Returns
    -------
    str
        ``"<n> <noun>"``, as the messages of every command print a count.
    """
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"


#: Font families with Chinese, Japanese and Korean glyphs that plots fall back to, when one is installed, for the
#: characters of a label matplotlib's default font (DejaVu Sans) lacks: a leaderboard's task and model names in
#: those scripts (Nejumi's ``GLP_翻訳``, a Chinese board's ``分类能力``) are otherwise drawn as empty boxes.
FALLBACK_FONTS = ("Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK KR", "Source Han Sans",
                  "Source Han Sans JP", "Source Han Sans SC", "Noto Sans JP", "Noto Sans SC", "WenQuanYi Zen Hei",
                  "WenQuanYi Micro Hei", "Droid Sans Fallback", "IPAexGothic", "IPAGothic", "TakaoGothic",
                  "Hiragino Sans", "PingFang SC", "Microsoft YaHei", "SimHei", "Yu Gothic", "MS Gothic",
                  "Malgun Gothic", "Arial Unicode MS")


def get_pyplot():
    """Return ``matplotlib.pyplot`` with the Agg backend, or raise a clear error.

    With matplotlib's default font family, a font of :data:`FALLBACK_FONTS` that is installed is added after it,
    so the characters the default font lacks are drawn from it (matplotlib's per-glyph fallback)."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        from .errors import HarnessExtError

        raise HarnessExtError("plotting needs matplotlib: pip install 'harness-ext[plot]'") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    if list(plt.rcParams["font.family"]) == ["sans-serif"] and (extra := installed_fallback_fonts()):
        plt.rcParams["font.family"] = ["sans-serif", *extra]
    return plt


def installed_fallback_fonts() -> list:
    """The families of :data:`FALLBACK_FONTS` matplotlib finds on this machine, in that order."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return [name for name in FALLBACK_FONTS if name in installed]


def save_figure(fig, path) -> Path:
    """Save a figure (creating parent folders) and close it; returns the path.

    The figure is written whole or not at all (:func:`~harness_ext.safe_output.write_file`): an interrupted save
    keeps the earlier file. Its format is the path's suffix (``.png``, ``.pdf``, ``.svg``), else matplotlib's default.
    """
    from .safe_output import write_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    plt = get_pyplot()
    # the temporary file's name does not end with the suffix, so the format is passed rather than guessed
    fmt = path.suffix[1:].lower() or plt.rcParams["savefig.format"]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            write_file(path, lambda p: fig.savefig(p, format=fmt, dpi=120, bbox_inches="tight"))
        missing = set()
        for w in caught:
            if m := _MISSING_GLYPH.match(str(w.message)):
                missing.add(chr(int(m.group(1))))
            else:  # not ours to judge: said as it would have been
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if missing and _GLYPH_PENDING is not None:  # said once, for every plot, when the command's plots are drawn
            _GLYPH_PENDING.append((path, _glyph_labels(fig, missing), missing))
        elif missing:
            import logging

            logging.getLogger("harness_ext.plot").warning("%s", missing_glyph_message(fig, missing, path))
    finally:
        plt.close(fig)
    return path


#: The missing glyphs of the plots saved inside :func:`one_glyph_note`: ``[(path, labels, characters)]``.
_GLYPH_PENDING: Optional[list] = None


@contextlib.contextmanager
def one_glyph_note():
    """Say the characters no installed font has once for every plot saved inside (``weights`` draws several plots
    of the same names, and said it once per plot); outside it, each plot says its own."""
    global _GLYPH_PENDING
    outer = _GLYPH_PENDING
    if outer is None:
        _GLYPH_PENDING = []
    try:
        yield
    finally:
        pending = _GLYPH_PENDING if outer is None else []
        _GLYPH_PENDING = outer
        if pending:
            import logging

            labels = sorted(set().union(*(lab for _, lab, _ in pending)))
            missing = set().union(*(m for _, _, m in pending))
            names = [Path(p).name for p, _, _ in pending]
            where = names[0] if len(names) == 1 else f"{plural(len(names), 'plot')} ({listed(names, 6)})"
            logging.getLogger("harness_ext.plot").warning("%s", _glyph_text(where, labels, missing, len(names) > 1))


def _glyph_labels(fig, missing: set) -> set:
    from matplotlib.text import Text

    return {t.get_text() for t in fig.findobj(Text) if set(t.get_text()) & missing}


#: matplotlib's warning for a character no font of the text's family has (it draws an empty box instead).
_MISSING_GLYPH = re.compile(r"Glyph (\d+) \(.*\) missing from font")


def missing_glyph_message(fig, missing: set, path) -> str:
    """One line for the characters of ``fig``'s text no installed font has: how many labels, an example, the fix.

    matplotlib warns once per character (73 lines for Nejumi's Japanese task names); this says it once."""
    return _glyph_text(Path(path).name, sorted(_glyph_labels(fig, missing)), missing)


def _glyph_text(where: str, labels: list, missing: set, plots: bool = False) -> str:
    example = shorten(labels[0], 40) if labels else "".join(sorted(missing)[:3])
    return (f"{where}: {plural(len(labels), 'label')} with {plural(len(missing), 'character')} no "
            f"installed font has ({example!r}{', ...' if len(labels) > 1 else ''}), drawn as empty boxes; install a "
            f"font with them (for Chinese, Japanese and Korean: Noto Sans CJK) and the plots use it; the tables "
            f"written beside the plot{'s' * plots} hold the names")


def progress(iterable: Iterable, total: Optional[int] = None, desc: str = "", disable: Optional[bool] = None):
    """A tqdm progress bar on stderr, silenced when stderr is not a terminal,
    ``HARNESS_EXT_NO_PROGRESS`` is set (CI logs stay readable) or the command runs with ``-q``."""
    from tqdm.auto import tqdm

    if disable is None:
        import logging

        # -q (the command line's stderr handler at ERROR, or the harness_ext logger) silences the bars too.
        logger = logging.getLogger("harness_ext")
        streams = [h for h in logger.handlers if isinstance(h, logging.StreamHandler)]
        disable = (bool(os.environ.get("HARNESS_EXT_NO_PROGRESS")) or not sys.stderr.isatty()
                   or logger.getEffectiveLevel() >= logging.ERROR
                   or (bool(streams) and all(h.level >= logging.ERROR for h in streams)))
    return tqdm(iterable, total=total, desc=desc, disable=disable, file=sys.stderr, leave=False)


class Stages:
    """A progress bar of named stages (a command's few long steps), each stage's start and end also logged at
    debug level (``-vv``: where the time and memory go; ``benchmarks/bench_matrix.py`` times ``reduce`` from
    these lines). ``bar``: a :func:`progress` bar with ``total`` the number of stages."""

    def __init__(self, bar, log, what: str):
        import time

        self.bar, self.log, self.what = bar, log, what
        self.clock, self.t0, self.name = time.perf_counter, time.perf_counter(), None

    def set_postfix_str(self, name: str) -> None:
        self._done()
        self.name, self.t0 = name, self.clock()
        self.log.debug("%s stage: %s", self.what, name)
        self.bar.set_postfix_str(name)

    def _done(self) -> None:
        if self.name is not None:
            self.log.debug("%s stage done: %s, %.1f s, peak memory so far %s", self.what, self.name,
                           self.clock() - self.t0, peak_rss() or "unknown")

    def update(self) -> None:
        self.bar.update()

    def close(self) -> None:
        self._done()
        self.name = None
        self.bar.close()


def peak_rss() -> Optional[str]:
    """The process's peak resident memory so far (Linux ``VmHWM``), e.g. ``"1,234 MB"``; None elsewhere."""
    try:
        with open("/proc/self/status") as fh:
            kb = next((int(line.split()[1]) for line in fh if line.startswith("VmHWM:")), None)
    except OSError:
        return None
    return None if kb is None else f"{kb / 1024:,.0f} MB"


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON types: the project's one JSON encoder.

    numpy scalars and arrays become numbers and lists, non-finite floats become ``null``
    (strict JSON), DataFrames become lists of records, Series and mappings become objects,
    dataclasses and :class:`Result` objects their ``to_dict()``/fields, paths strings, sets
    sorted lists; anything else its ``str``.
    """
    import math

    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Result):
        return jsonable(obj.to_dict())
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return [jsonable(v) for v in sorted(obj, key=str)]
    if isinstance(obj, Path):
        return str(obj)
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return jsonable({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    mod = type(obj).__module__.split(".")[0]
    if mod == "numpy":
        import numpy as np

        if isinstance(obj, np.ndarray):
            return jsonable(obj.tolist())
        if isinstance(obj, np.generic):
            return jsonable(obj.item())
    if mod == "pandas":
        import pandas as pd

        if isinstance(obj, pd.DataFrame):
            frame = obj.reset_index() if not isinstance(obj.index, pd.RangeIndex) else obj
            return jsonable(frame.to_dict(orient="records"))
        if isinstance(obj, pd.Series):
            return jsonable(obj.to_dict())
        if obj is pd.NA or obj is pd.NaT:
            return None
        if isinstance(obj, pd.Timestamp):
            return obj.isoformat()
    return str(obj)


def envelope(command: str, payload: Any, warnings: Iterable[str] = ()) -> dict:
    """The one ``--json`` document of every command: ``{"command", "title", "summary", "tables", "warnings"}``,
    then any fields of the command's own (``reduce``: ``manifest``, ``out``, ``written``; ``predict``: the
    prediction's ``aggregate`` and ``datasets``).

    ``payload``: a :class:`Result` (or its ``to_dict()``, or a dict with some of its keys), or anything
    else, which becomes ``tables["result"]``. ``warnings``: those logged while the command ran, after the result's own
    (each once).
    """
    # A result's own warnings (prowl's failed rows) are in the document even when the command did not log them.
    mine = [str(w) for w in (getattr(payload, "warnings", None) or [])] if isinstance(payload, Result) else []
    doc = jsonable(payload)
    if not isinstance(doc, dict) or not {"title", "summary", "tables"} & set(doc):
        doc = {"tables": {"result": doc}}
    doc = dict(doc)
    out = {"command": command, "title": doc.pop("title", None) or command, "summary": doc.pop("summary", None) or {},
           "tables": doc.pop("tables", None) or {}}
    own = doc.pop("warnings", None) or []
    out["warnings"] = list(dict.fromkeys(mine + [str(w) for w in own] + [str(w) for w in warnings]))
    out.update(doc)
    return out


def dumps(obj: Any, indent: Optional[int] = 2) -> str:
    """Serialise ``obj`` with :func:`jsonable` (strict JSON: no NaN literals), newline-terminated."""
    import json

    return json.dumps(jsonable(obj), indent=indent, allow_nan=False) + "\n"


class Result:
    """Base of the typed results every method returns; they render themselves.

    A subclass lists its named tables in :meth:`tables` (the first is the main one, returned by
    :meth:`to_frame`) and any scalar summary in :meth:`summary`; :meth:`render` (also ``str()``),
    :meth:`to_dict` and :meth:`to_json` follow from those, so no command formats its own output.
    A result with a figure overrides :meth:`plot`.

    Examples
    --------
    >>> import pandas as pd
    >>> class Scores(Result):
    ...     title = "scores"
    ...     def __init__(self, frame): self.frame = frame
    ...     def tables(self): return {"scores": self.frame}
    >>> print(Scores(pd.DataFrame({"acc": [0.5]}, index=["m1"])).render())
    scores
          acc
    m1  0.500
    """

    #: One line naming what this is (the command prints it above the tables).
    title: str = ""
    #: The command that prints this result: the ``"command"`` of :meth:`to_json` (default: the title).
    command: str = ""
    #: Format of floats in the text tables.
    floatfmt: str = "{:.3f}"

    def tables(self) -> Dict[str, Any]:
        """Named DataFrames, main one first."""
        return {}

    def summary(self) -> Dict[str, Any]:
        """Scalar facts shown above the tables and put in the JSON (name -> value)."""
        return {}

    def to_frame(self):
        """The main table as a DataFrame."""
        tables = self.tables()
        if not tables:
            import pandas as pd

            return pd.DataFrame([self.summary()])
        return next(iter(tables.values()))

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document: ``{"title", "summary", "tables": {name: records}}``."""
        return {"title": self.title, "summary": self.summary(),
                "tables": {name: frame for name, frame in self.tables().items()}}

    def to_json(self, path=None, indent: Optional[int] = 2) -> str:
        """The result as JSON text, the command's ``--json`` document (:func:`envelope`: ``{"command", "title",
        "summary", "tables", "warnings"}``, then the result's own fields); with ``path``, also written there."""
        doc = self.to_dict()
        if not {"title", "summary", "tables"} <= set(doc):
            # The result's own fields stay at the top (a to_dict() without title/summary/tables, as prowl's, would
            # otherwise be wrapped whole into tables["result"] by envelope); a full one is not computed twice.
            doc = {"title": self.title, "summary": self.summary(), "tables": self.tables(), **doc}
        text = dumps(envelope(self.command or self.title, doc, getattr(self, "warnings", None) or ()), indent=indent)
        if path is not None:
            from .safe_output import write_file

            write_file(path, text)
        return text

    def render(self) -> str:
        """The text the command line prints: title, summary lines, then each table."""
        parts = [self.title] if self.title else []
        for key, value in self.summary().items():
            if isinstance(value, float):
                value = self.floatfmt.format(value)
            parts.append(f"{key}: {value}")
        tables = self.tables()
        for name, frame in tables.items():
            if len(tables) > 1:
                parts.append(f"\n{name}")
            parts.append(format_table(frame, floatfmt=self.floatfmt))
        return "\n".join(parts)

    def plot(self, path=None):
        """Draw the result's figure (saved to ``path`` when given); not every result has one."""
        from .errors import HarnessExtError

        raise HarnessExtError(f"{type(self).__name__} has no plot")

    def __str__(self) -> str:
        # The command line logs a result's warnings after render(); print(result) in a notebook must show them too
        # ("the choice may be no better than chance", a model's missing subset results).
        warnings = getattr(self, "warnings", None) or []
        return self.render() + "".join(f"\nwarning: {w}" for w in warnings)

    def _repr_html_(self) -> str:  # notebooks show the main table
        frame = self.to_frame()
        head = f"<p><b>{self.title}</b></p>" if self.title else ""
        return head + frame._repr_html_()
