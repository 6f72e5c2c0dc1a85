"""Which columns of a wide CSV are aggregates, and the notes on what the column rules did (both reading paths).

The rules read the header and the sidecar only, never the rows' values, so the same file restricted to
some of its models stores the same datasets (:func:`aggregate_columns`); a column that equals the row
mean of the others is reported as a hint (:func:`row_mean_hints`); every column stored as an aggregate or
as model metadata, every column without a value and every cell marked missing is noted
(:func:`report_columns`, :meth:`harness_ext.types.SourceFile.note`).
"""

from __future__ import annotations

import re

from harness_ext.adapters.csv_rules import AGGREGATE_NAME, CJK_AGGREGATE_NAME, META_NAME, _column_role
from harness_ext.report import listed, plural


class WideColumns:
    """A wide table's columns as a reading path sorts them (:meth:`add`): model metadata, scores, empty; with the
    metadata columns guessed from cells or name and the cells marked missing, for the notes."""

    def __init__(self):
        self.meta, self.scores, self.empty, self.guessed = [], [], [], []
        self.n_missing, self.markers = 0, set()

    def add(self, src, j, name, spec, n_num, bad, marked) -> bool:
        """File column ``j`` by its role (:func:`~harness_ext.adapters.csv_table._column_role`); True when it holds
        scores. ``n_num``: cells that are numbers; ``bad``: cells that are not; ``marked``: cells marked missing."""
        role = _column_role(src, name, spec, n_num, bad)
        if role == "empty":
            self.empty.append(j)
        elif role is not None:
            self.meta.append(j)
            self.guessed.append((name, role))
        else:
            self.scores.append(j)
            self.n_missing += len(marked)
            self.markers.update(marked)
        return role is None

    def no_scores(self, header, subset=None) -> str:
        """Why a table without a score column is refused: what each of its columns was read as. A table whose only
        numbers describe the models (a list of models and their sizes) is no leaderboard.

        ``subset``: the datasets ``predict`` reads a new model's file for (the option
        :data:`~harness_ext.types.SUBSET_OPTION` naming them); those among the columns without a value are named as
        the subset's, with what to do, since declaring them scores would not help.
        """
        wanted = set(subset) if isinstance(subset, (list, tuple)) else set()
        found = [header[j] for j in self.empty if header[j] in wanted]
        if found:
            return (f"no score on the subset's dataset{'s' * (len(found) != 1)} {listed(found, 8)}: "
                    f"{'its column holds' if len(found) == 1 else 'their columns hold'} no value in any row (empty or "
                    "NaN); give the new model's scores on them (run the subset's tasks, or fill in the scores it "
                    "has) and predict again")
        declared = [header[j] for j in self.meta if header[j] not in {n for n, _ in self.guessed}]
        numbers = [f"{n} ({_WHY_META[why][0]})" for n, why in self.guessed if why != "text"]
        parts = [f"numbers that describe the models: {listed(numbers, 6)}"] if numbers else []
        text = [n for n, why in self.guessed if why == "text"]
        parts += [f"{listed(text, 6)} {'is' if len(text) == 1 else 'are'} text"] if text else []
        parts += [f"{listed(declared, 6)} declared model metadata"] if declared else []
        parts += [f"{listed([header[j] for j in self.empty], 6)} without a value"] if self.empty else []
        return ("no score column, so no leaderboard: " + "; ".join(parts or ["no column besides the model"])
                + " (if one of them holds scores, declare it kind: dataset with --column-meta)")

    def demote(self, columns, header, why: str) -> None:
        """Move score ``columns`` to the model metadata, guessed for reason ``why`` (a key of :data:`_WHY_META`)."""
        for j in columns:
            self.scores.remove(j)
            self.meta.append(j)
            self.guessed.append((header[j], why))


def _decimals(col) -> int:
    """Decimal places of the most precise value in ``col`` (an array; NaN: missing)."""
    import numpy as np

    col = np.asarray(col, dtype=float)
    col = col[np.isfinite(col)]
    for d in range(18):
        if np.all(np.round(col, d) == col):
            return d
    return 17


def _half_units(D) -> tuple:
    """Each column's decimal places (:func:`_decimals`) and half a unit of its last decimal (a hair over, 0.505, so a
    value printed from a mean of printed values is not refused by float noise): ``(dec, half)`` arrays."""
    import numpy as np

    dec = np.array([_decimals(D[:, k]) for k in range(D.shape[1])])
    return dec, 0.505 * 10.0 ** -dec.astype(float)


#: Words of a column name that say nothing about which scores it holds (a date, a version, "score").
_FILLER = re.compile(r"^(\d+|v\d+|score)$")
#: Words before "average" that name what is averaged over (the model's scores), not a group of columns.
_SUBJECT = frozenset({"model", "models", "llm"})


def _words(name: str) -> list:
    return [w for w in re.split(r"[^a-z0-9]+", str(name).lower()) if w]


def _leaderboard_words(header, score_cols, stem, cm) -> tuple:
    """``(the leaderboard's own name words, the words every score column's name starts with)``.

    The leaderboard's name: the file name's words (``livebench_240701_holistic`` -> livebench, holistic) and
    the sidecar's ``benchmark``; digits (dates, versions) are no name.
    """
    board = [w for w in _words(stem) + _words(cm.get("benchmark") or "") if not w.isdigit()]
    names = [_words(header[j]) for j in score_cols]
    common = []
    for ws in zip(*names):
        if len(set(ws)) != 1:
            break
        common.append(ws[0])
    return board, common


def _own_score(name: str, board: list, common: list) -> bool:
    """Whether a column is named as the leaderboard's own score, from its name alone.

    Either its name is the leaderboard's name (the file name's first word) and a date or version
    (LiveBench's ``livebench_240624`` in ``livebench_240701_holistic.csv``), or it is a "... score" whose
    other words are all the leaderboard's name or the prefix every column shares (HELM AIR-Bench's
    ``HELM_AIRBENCH_AIR_Score``: "AIR" of "airbench"; RewardBench's plain ``Score``). A "... score" naming
    anything else (``MT-bench score`` beside MMLU, ``Coding score``) is a score of that, not the leaderboard's.
    """
    words = _words(name)
    rest = [w for w in words if not _FILLER.match(w)]
    if "score" not in words:
        return bool(board) and rest == board[:1] and len(words) > 1
    rest = [w for w in rest if w not in common]
    return all(len(w) >= 2 and any(b.startswith(w) for b in board + common) for w in rest)


#: Words after "average" that say how it is scored, not what is averaged ("Mean win rate", "average_score"), also
#: the name of a metric (ProteinGym's ``Average_Spearman`` beside ``Function_Activity``, ... is the mean of those
#: columns' Spearman correlations, not the score of a benchmark called Spearman the file lacks).
_HOW = frozenset({"score", "scores", "win", "rate", "winrate", "accuracy", "acc", "f1", "em", "exact", "match",
                  "pass", "rank", "rating", "elo", "points", "result", "results", "performance", "all", "of",
                  "spearman", "pearson", "kendall", "tau", "correlation", "corr", "auc", "auroc", "auprc", "roc",
                  "ndcg", "mcc", "mrr", "recall", "precision", "top", "bleu", "chrf", "rouge", "meteor", "wer", "cer",
                  "mae", "mse", "rmse", "r2"})


def _averages_elsewhere(name: str, m, j, words: dict) -> bool:
    """Whether a column named "average ..." names after that word a benchmark no other column's name holds: the
    board's score of a benchmark whose parts the file lacks, a dataset (Nejumi's ``AVG_jaster_0shot``,
    ``AVG_mtbench`` beside ``GLP_*`` and ``ALT_*`` columns), not an average of the columns beside it."""
    # a bracketed qualifier says how the average was taken, not of what: MM-Vet's "Overall (GPT-4-Turbo)" (its
    # judge) and "Overall (Official)" in VLMEvalKit's results average the six capabilities beside them
    tail = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", name.replace("_", " ")[m.end(2):])
    after = [w for w in _words(tail) if not _FILLER.match(w) and not w.isdigit() and w not in _HOW]
    # the other columns, but not the board's other "average ..." columns (``AVG_jaster_2shots`` beside ``_0shot``)
    return bool(after) and not any(k != j and ws[:1] != words[j][:1] and set(after) & set(ws)
                                   for k, ws in words.items())


def aggregate_columns(header, score_cols, specs, stem, cm) -> dict:
    """Score columns that aggregate the others: ``{column: why}``, from the header and the sidecar only.

    Declared in the sidecar (``kind: aggregate``); or, among at least three score columns (the columns
    that hold numbers, with or without a value in the rows present), a column named an
    average/overall/total (:data:`AGGREGATE_NAME`) of the whole table or of columns beside it: nothing
    before that word but "model" (``Average``, ``overall_f1``, ``model_average_score``), or words another score column's name starts with
    (``hydrox_overall_score`` beside ``hydrox_safety``). LiveBench's six ``LB_Reasoning_Average``, ...
    average tasks the file does not hold: they are its datasets. Failing those, the one column named as the
    leaderboard's own score (:func:`_own_score`). Never the values: a column that happens to equal the mean
    of the others on the rows present stays a dataset (reported by :func:`row_mean_hints`), so the same
    file restricted to some of its models stores the same datasets.
    """
    out = {j: "declared in the column metadata" for j in score_cols
           if specs.get(header[j], {}).get("kind") == "aggregate"}
    if len(score_cols) < 3:
        return out
    free = [j for j in score_cols if specs.get(header[j], {}).get("kind") is None]
    words = {j: _words(header[j]) for j in score_cols}
    declared = len(out)
    for j in free:
        if CJK_AGGREGATE_NAME.fullmatch(header[j].strip()):
            out[j] = "named as an average or overall of the other columns"
            continue
        m = AGGREGATE_NAME.search(header[j].replace("_", " "))
        if m is None:
            continue
        # "model" before the word names whose average it is, not a group of columns (the Open LLM Leaderboard
        # v2's flattened "model_average_score")
        before = [w for w in _words(header[j].replace("_", " ")[:m.start() + len(m.group(1))]) if w not in _SUBJECT]
        if before and not any(k != j and words[k][:len(before)] == before for k in score_cols):
            continue
        if not before and _averages_elsewhere(header[j], m, j, words):
            continue
        out[j] = "named as an average or overall of the other columns"
    if len(out) == declared:
        board, common = _leaderboard_words(header, score_cols, stem, cm)
        own = [j for j in free if _own_score(header[j], board, common)]
        if len(own) == 1:
            out[own[0]] = "named as the leaderboard's own score"
    return out


def row_mean_hints(names, values) -> list:
    """Columns that equal the mean of the other columns on every complete row, to their own rounding: hints only.

    ``values``: models x columns (NaN: missing). Such a column is likely an unnamed aggregate, but the
    rule never reclassifies (:func:`aggregate_columns`): the hint is reported so the user can declare it.
    Conservative: at least five complete rows, the column not constant and written with at least one
    decimal (a 0-decimal column, or zeros, is no evidence). Each side is rounded to its own last decimal, as in
    :func:`category_columns`: the tolerance is half a unit of the column's last decimal plus the mean half unit of
    the others' (LiveBench's overall score, to 2 decimals, is the mean of six columns to 2 decimals: the mean of the
    printed columns differs from it by up to 0.0067).
    """
    import numpy as np

    X = np.asarray(values, dtype=float)
    if X.ndim != 2 or X.shape[1] < 3:
        return []
    rows = ~np.isnan(X).any(axis=1)
    if rows.sum() < 5:
        return []
    D = X[rows]
    n = D.shape[1]
    others = (D.sum(axis=1, keepdims=True) - D) / (n - 1)  # each column's row mean of the rest
    dec, half = _half_units(D)
    tol = half + (half.sum() - half) / (n - 1)
    out = []
    for k in range(n):
        if np.ptp(D[:, k]) == 0 or dec[k] == 0:
            continue
        if (np.abs(D[:, k] - others[:, k]) <= tol[k]).all():
            out.append(names[k])
    return out


def group_mean_hints(names, values) -> list:
    """Columns that equal the plain mean of a group of at least two (not all) of the other columns on every complete
    row, to the rounding: ``[(column, [members])]``, hints only, as :func:`row_mean_hints` (ScandEval's per-language
    ``da_score``, the mean of that language's four tasks, which the names do not group).

    The group is read from a non-negative least-squares fit of the column on the others (its support); it is
    reported only when the plain mean of that support matches the column within :func:`row_mean_hints`'
    tolerance on every row, on at least ten complete rows and more than twice as many rows as columns (so an exact
    fit is no accident of few rows), and on tables of at most 64 score columns. ``values``: models x columns (NaN:
    missing).
    """
    import numpy as np

    X = np.asarray(values, dtype=float)
    if X.ndim != 2 or not 4 <= X.shape[1] <= 64:  # one small fit per column: bounded for very wide tables
        return []
    D = X[~np.isnan(X).any(axis=1)]
    n = D.shape[1]
    if D.shape[0] < max(10, 2 * n + 1):
        return []
    from scipy.optimize import nnls

    dec, half = _half_units(D)
    out = []
    for k in range(n):
        if np.ptp(D[:, k]) == 0 or dec[k] == 0:
            continue
        rest = [j for j in range(n) if j != k]
        beta, _ = nnls(D[:, rest], D[:, k])
        support = [rest[i] for i in np.flatnonzero(beta > 0.02)]
        if not 2 <= len(support) < len(rest):
            continue
        tol = half[k] + half[support].mean()
        if (np.abs(D[:, support].mean(axis=1) - D[:, k]) <= tol).all():
            out.append((names[k], [names[j] for j in support]))
    return out


def yes_no_columns(names, values) -> list:
    """Columns whose values are only 0 and 1 (both present, at least five rows) beside a column that holds other
    values: hints only (a leaderboard's "made in Japan" flag read as a score; Nejumi's ``JA``). A table whose score
    columns are all 0/1 (per-item correctness) has none."""
    import numpy as np

    X = np.asarray(values, dtype=float)
    if X.ndim != 2 or X.shape[1] < 2:
        return []
    fin = np.isfinite(X)
    binary = np.where(fin, (X == 0) | (X == 1), True).all(axis=0)
    both = ((X == 0).any(axis=0) & (X == 1).any(axis=0)) & (fin.sum(axis=0) >= 5)
    if binary.all():
        return []
    return [names[k] for k in np.flatnonzero(binary & both)]


#: The last word of a category's score column (BFCL's ``Live Acc``, ``Multi Turn Acc``): the accuracy over the columns
#: whose names start with the words before it.
_CATEGORY_WORDS = frozenset({"acc", "accuracy"})


def _category_members(words: dict, j, candidates) -> list:
    """The columns a ``<words> Acc`` column names as its category: those of ``candidates`` whose names start with the
    longest leading part of ``<words>`` that at least two of them start with (``Non-Live AST Acc``: the four
    ``Non-Live ...`` columns), none of them named as an accuracy itself, or [] when column ``j`` is no such name.
    ``words``: each candidate column's name words (:func:`_words`)."""
    if len(words[j]) < 2 or words[j][-1] not in _CATEGORY_WORDS:
        return []
    before = words[j][:-1]
    # A member named as an accuracy itself is a metric column of its own task (``arithmetic_2da_2_acc`` beside
    # ``arithmetic_3ds_2_acc``), not a part of a category.
    parts = [k for k in candidates if k != j and words[k] and words[k][-1] not in _CATEGORY_WORDS]
    for n in range(len(before), 0, -1):
        members = [k for k in parts if words[k][:n] == before[:n] and len(words[k]) > n]
        if len(members) >= 2:
            return members
    return []


def category_columns(header, score_cols, values, skip) -> tuple:
    """``(columns, notes)``: the score columns named as a category's accuracy (``<words> Acc``, with at least two
    columns whose names start with those words: BFCL's ``Live Acc`` beside ``Live Simple AST``, ...) that equal
    the plain mean of those columns on every complete row, to the columns' rounding; and a note on the named ones that
    do not (kept as datasets: a weighted mean, or another score).

    Both the header and the values must say so: a name alone (``MMLU Acc`` beside ``MMLU Pro``) is no aggregate, and
    a column that is the mean of others without such a name stays a hint (:func:`row_mean_hints`). A plain mean on
    every row is also one on every subset of the rows, so the same file restricted to some of its models stores the
    same aggregates while a complete row is left. ``values``: models x ``score_cols``; ``skip``: columns already
    aggregates or declared in the sidecar, neither checked nor counted as members.
    """
    import numpy as np

    free = [j for j in score_cols if j not in skip]
    pos = {j: k for k, j in enumerate(score_cols)}
    words = {j: _words(header[j]) for j in free}  # split once: a wide table has hundreds of columns
    found, unverified = [], []
    for j in free:
        members = _category_members(words, j, free)
        if not members:
            continue
        X = values[:, [pos[k] for k in members]]
        col = values[:, pos[j]]
        rows = np.isfinite(X).all(axis=1) & np.isfinite(col)
        if not rows.any():
            unverified.append(f"{header[j]} ({len(members)} columns, no row with all of them)")
            continue
        # Each side rounded to its own last decimal: the column, and the columns whose mean it is.
        tol = 0.505 * 10.0 ** -_decimals(col[rows]) + 0.505 * 10.0 ** -_decimals(X[rows])
        if (np.abs(X[rows].mean(axis=1) - col[rows]) <= tol).all():
            found.append(j)
        else:
            unverified.append(f"{header[j]} ({len(members)} columns: {listed([header[k] for k in members], 2)})")
    notes = []
    if unverified:
        notes.append(f"{plural(len(unverified), 'column')} named as a category's accuracy {'is' if len(unverified) == 1 else 'are'}"
                     f" not the plain mean of the columns {'its' if len(unverified) == 1 else 'their'} name groups on "
                     f"every complete row, so stored as {'a dataset' if len(unverified) == 1 else 'datasets'} (a weighted mean is not told from the values): "
                     f"{listed(unverified, 6)}; declare kind: aggregate with --column-meta if one is an aggregate, so "
                     "reduce never picks it beside the columns it averages")
    return found, notes


def classify_wide(src, header, cols: WideColumns, specs, stem, cm, values) -> dict:
    """The aggregates of a wide table (:func:`aggregate_columns`), with the notes on every column it did not store
    as a dataset (:func:`report_columns`); both reading paths call it. ``values``: models x ``cols.scores``."""
    score_cols, empty = cols.scores, cols.empty
    # The empty columns (no value in the rows present) take part: the rules see the header, not the rows. One
    # whose name describes the model would be metadata with a value in other rows, so it does not.
    empty_scores = [j for j in empty if specs.get(header[j], {}).get("kind") or not META_NAME.search(header[j])]
    aggregates = aggregate_columns(header, sorted(score_cols + empty_scores), specs, stem, cm)
    aggregates = {j: why for j, why in aggregates.items() if j in score_cols}
    found, category_notes = category_columns(header, score_cols, values, set(aggregates) | {
        j for j in score_cols if specs.get(header[j], {}).get("kind")})
    aggregates.update({j: "named for the columns its name groups, and their plain mean on every complete row"
                       for j in found})
    rest = [k for k, j in enumerate(score_cols) if j not in aggregates and not specs.get(header[j], {}).get("kind")]
    hints = row_mean_hints([header[score_cols[k]] for k in rest], values[:, rest]) if len(rest) >= 3 else []
    report_columns(src, header, aggregates, cols.guessed, [header[j] for j in empty], hints, cols.n_missing,
                   cols.markers)
    for col, members in group_mean_hints([header[score_cols[k]] for k in rest], values[:, rest]):
        src.note(f"{col} equals the mean of {plural(len(members), 'other score column')} ({listed(members, 8)}) on "
                 "every complete row: stored as a dataset; declare kind: aggregate with --column-meta if it is their "
                 "aggregate, so reduce never picks it beside the columns it averages")
    yes_no = yes_no_columns([header[score_cols[k]] for k in rest], values[:, rest])
    if yes_no:
        src.note(f"{listed(yes_no, 12)} hold{'s' if len(yes_no) == 1 else ''} only 0 and 1 while the other score "
                 "columns hold other values: stored as a dataset; if it says something of the model (made in a "
                 "country, open weights) rather than scoring it, declare kind: metadata with --column-meta")
    for note in category_notes:
        src.note(note)
    return aggregates


#: Why a column was stored as model metadata (:meth:`WideColumns.add`, :meth:`WideColumns.demote`): the note's
#: words for one column and for several.
_WHY_META = {
    "text": ("its cells are text", "their cells are text"),
    "name": ("the name describes the model (size, date, rank, ...)",) * 2,
    "constant": ("one value on every row, so it tells no model from another: a setting of the evaluation, not a "
                 "score",) * 2,
    "bound": ("named as the bound of another column's interval", "named as bounds of other columns' intervals"),
}


def report_columns(src, header, aggregates: dict, guessed_meta: list, empty: list, hints: list, n_missing: int,
                   markers: set) -> None:
    """The notes of a wide table (:meth:`harness_ext.types.SourceFile.note`): what its heuristics stored how."""
    by_why: dict = {}
    for j, why in aggregates.items():
        if why != "declared in the column metadata":
            by_why.setdefault(why, []).append(header[j])
    for why, cols in by_why.items():
        src.note(f"{len(cols)} column{'s' * (len(cols) != 1)} stored as aggregate{'s' * (len(cols) != 1)}: "
                 f"{listed(cols, 12)} ({why}); declare kind: dataset with --column-meta to override")
    for why, how in _WHY_META.items():
        cols = [c for c, w in guessed_meta if w == why]
        if cols:
            how = how[len(cols) != 1]
            src.note(f"{len(cols)} column{'s' * (len(cols) != 1)} stored as model metadata, not scores: {listed(cols, 12)} "
                     f"({how}); declare kind: dataset with --column-meta to override")
    if empty:
        src.note(f"{len(empty)} column{'s' * (len(empty) != 1)} with no value in any row: {listed(empty, 12)} (nothing stored)")
    if n_missing:
        shown = ", ".join(repr(m) for m in sorted(markers)[:5])
        src.note(f"{n_missing} cell{'s' * (n_missing != 1)} marked as missing ({shown}) left out")
    if hints:
        src.note(f"{listed(hints, 12)} equal{'s' * (len(hints) == 1)} the mean of the other score columns on every complete "
                 "row: stored as a dataset; declare kind: aggregate with --column-meta if it is an aggregate")


def report_repeated_models(src, models: list, metas: list, benches=None) -> None:
    """Note the models a wide table lists on more than one row, and the metadata columns their rows differ in.

    Leaderboard histories (Chatbot Arena's snapshots, one row per model and date) are wide tables keyed by more
    than the model. Each model's first row is the one stored, as its metadata and, where the rows disagree, its
    scores (each such score is also reported as a conflict); a later row equal to the first adds nothing, which
    the conflicts would not say. ``metas``: each row's metadata, parallel to ``models``; ``benches``: each row's
    ``benchmark`` cell where the table has that column (a model on one row per benchmark is not repeated).
    """
    rows: dict = {}
    for i, m in enumerate(models):
        rows.setdefault((m, benches[i] if benches is not None else None), []).append(i)
    repeated = [(m, ix) for (m, _), ix in rows.items() if len(ix) > 1]
    if not repeated:
        return
    names = list(dict.fromkeys(m for m, _ in repeated))
    keys = list(dict.fromkeys(k for _, ix in repeated for i in ix for k in metas[i]))
    differ = [k for k in keys if any(len({repr(metas[i].get(k)) for i in ix}) > 1 for _, ix in repeated)]
    n_rows = sum(len(ix) for _, ix in repeated)
    many = len(names) != 1
    whose = "each one's" if many else "its"
    src.note(f"{len(names)} model{'s' * many} listed on more than one row ({n_rows} rows): {listed(names, 12)}; "
             f"{whose} first row is stored (its metadata, and its scores where the rows disagree: "
             "each reported as a conflict)" + (f"; the rows differ in {listed(differ, 12)}" if differ else ""))


def report_scoreless_rows(src, models: list, values):
    """Note the rows with no value in any score column: nothing is stored from them, not even the model (an
    embedding board lists models it has not run on a task yet, a row of metadata alone). ``values``: rows x score
    columns, NaN where a cell is empty. Returns the indices of the other rows, or None when every row has a value."""
    import numpy as np

    empty = np.isnan(np.asarray(values, dtype=float)).all(axis=1) if len(models) else np.zeros(0, bool)
    names = [m for m, e in zip(models, empty) if e]
    if not names:
        return None
    src.note(f"{plural(len(names), 'row')} without a value in any score column left out (nothing to store): "
             f"{listed(names, 12)}")
    return [int(i) for i in np.flatnonzero(~empty)]


def drop_scoreless_rows(src, models: list, values, keep):
    """``(values, models, keep)`` without the rows :func:`report_scoreless_rows` notes, as the record reader stores
    them (nothing, not even the model); ``keep``: the original indices of the rows so far (None: every row)."""
    scored = report_scoreless_rows(src, models, values)
    if scored is None:
        return values, models, keep
    return values[scored], [models[i] for i in scored], scored if keep is None else [keep[i] for i in scored]


def report_file_measure(src, measure, names: list) -> None:
    """Note the columns read as costs because of the file's name (:func:`~harness_ext.adapters.csv_rules.file_measure`)."""
    if not names:
        return
    many = len(names) != 1
    src.note(f"{len(names)} column{'s' * many} read as lower-is-better on an open scale (not percentages or proportions), "
             f"as the file's name says {measure!r}: {listed(names, 12)}; declare "
             "higher_is_better, scale or min/max with --column-meta to override")


#: Footnote marks after a model name in a paper's or site's table (Cybench's "Claude Opus 4.5 ³", "OpenAI o3-mini ¹†"):
#: superscript digits, daggers and the section sign, with the spaces before them. An asterisk is left alone: some
#: boards name a model with one.
_FOOTNOTE_MARKS = re.compile("\\s*[\u00b9\u00b2\u00b3\u2070\u2074-\u2079\u2020\u2021\u00a7]+$")


#: A model cell that is one link and nothing else: an HTML anchor (the MTEB and Open LLM Leaderboard v1 tables'
#: ``<a target="_blank" href="...">name</a>``) or a Markdown link (``[name](url)``); group 1 or 3 is its text, group 2
#: the anchor's attributes, group 4 the Markdown link's address.
_LINK = re.compile(r"^\s*(?:<a\b([^>]*)>(.*?)</a>|\[([^\]\n]+)\]\(([^)\s]*)\))\s*$", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
_HREF = re.compile(r"""\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
#: A Hugging Face model page: ``https://huggingface.co/<org>/<name>`` (a file or revision under it allowed), not one
#: of the site's own sections (datasets, spaces, ...).
_HF_MODEL = re.compile(r"^https?://(?:www\.)?(?:huggingface\.co|hf\.co)/([A-Za-z0-9][\w.-]*)/([A-Za-z0-9][\w.-]*)"
                       r"/?(?:$|[?#]|/(?:tree|blob|resolve|commit)/)")
_HF_SECTIONS = {"datasets", "spaces", "docs", "papers", "blog", "collections", "organizations", "models", "settings",
                "join", "login", "pricing", "learn", "posts", "tasks", "api"}


def _link_name(cell: str) -> tuple:
    """``(name, how)`` of a model cell: a cell that is one HTML or Markdown link gives its text (tags inside dropped,
    entities decoded), or the repository id ``org/name`` of the Hugging Face model page it links to when its text is
    that page's name (two organisations' models of one name stay two models; lm-eval and MTEB results name models
    so); ``how`` is ``"hub"``, ``"text"`` or None for a cell that is not a link."""
    m = _LINK.match(cell)
    if m is None:
        return cell, None
    import html

    text = html.unescape(_TAG.sub("", m.group(2) if m.group(2) is not None else m.group(3))).strip()
    if not text:
        return cell, None
    if m.group(1) is not None:
        h = _HREF.search(m.group(1))
        url = html.unescape(next((g for g in h.groups() if g is not None), "")) if h else ""
    else:
        url = m.group(4) or ""
    hub = _HF_MODEL.match(url.strip())
    if hub and hub.group(1).lower() not in _HF_SECTIONS:
        repo = f"{hub.group(1)}/{hub.group(2)}"
        if text.lower() in (hub.group(2).lower(), repo.lower()):
            return repo, "hub"
    return text, "text"


def strip_footnote_marks(src, models: list) -> list:
    """The model names as a reader sees them: a cell that is one HTML or Markdown link gives its text, or the
    repository id of the Hugging Face model page it links to (:func:`_link_name`), and the footnote marks after a
    name are left out; each change noted with its count.

    A link or mark kept in the name keeps the model apart from the same model in every other file."""
    named = [_link_name(m) for m in models]
    linked = [n for n, _ in named]
    for kind, said in (("hub", "written as a link to the model's Hugging Face page: the page's repository id used "
                               "(org/name), as lm-eval and MTEB results name the model"),
                       ("text", "written as a link (HTML or Markdown): the link's text used, as the board shows it")):
        got = sorted({n for n, how in named if how == kind})
        if got:
            src.note(f"{plural(len(got), 'model name')} {said} ({listed(got, 6)})")
    out = [_FOOTNOTE_MARKS.sub("", m) or m for m in linked]
    changed = sorted({m for m, o in zip(linked, out) if m != o})
    if changed:
        src.note(f"footnote marks left out of {plural(len(changed), 'model name')}: {listed(changed, 12)}")
    return out
