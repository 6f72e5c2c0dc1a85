"""Reference rows of a leaderboard or a long result table: rows that are not models.

Leaderboards often list a chance baseline ("Random", ``random-baseline``, "Random Choice", "Majority class") and
human or ceiling references ("Human", "Human Expert (High)", "Oracle", "Upper bound") among their models. Stored as
models they would enter rankings, reductions, model counts and the frontier split. Read here instead:

* **Chance rows** (random, chance, guess, majority, most frequent): each score column's value becomes the dataset's
  chance level (``random_baseline``) when the sidecar declares none; a declared chance wins, and a disagreement is
  noted.
* **Human and ceiling rows** (human, human expert, oracle, upper bound): kept as dataset metadata
  (``reference_scores``: row name -> value in the column's units).

A row is a reference row only when its whole name is one of these phrases (case and separators ignored, a
parenthesised qualifier allowed: "Human (avg)", "Human Expert (High)"): ``vicgalle/Humanish-RP-...``,
``Alpaca_Farm_PPO_Human_7B`` and ``RandomForest`` stay models. Every decision is noted with counts; the reading
option ``keep_reference_rows`` (``harness-ext ingest --keep-reference-rows``) stores them as models, as before.

A long table (``model,dataset,value``) reads its reference rows' cells by the same rules, each (benchmark, dataset,
metric) a column (:func:`long_reference`); the table's ``random_baseline`` column is its declared chance.
"""

from __future__ import annotations

import re

__all__ = ["reference_kind", "reference_rows", "split_reference_rows", "apply_reference", "note_reference",
           "long_reference_models", "long_reference", "item_reference_rows"]

_WORDS = r"(?:\s+(?:{}))*"
#: Chance baselines: "random", "random-baseline", "Random chance", "Random guess", "Random Choice", "chance",
#: "Majority class", "majority baseline", "Frequent Choice" (MMMU's most frequent answer), "most frequent class".
_CHANCE = re.compile(
    r"(?:random|chance|majority|(?:most\s+)?frequent|guess(?:ing)?|uniform)"
    + _WORDS.format(r"random|chance|baseline|guess|guessing|choice|class|vote|label|answer|level|performance|"
                    r"selection|prediction|predictor|sampling|policy|agent|model|score|avg|average|mean|uniform"))
#: Human and ceiling references: "Human", "Human (avg)", "Human Expert (High)", "Human performance", "Oracle",
#: "Upper bound", "Skyline".
_HUMAN = re.compile(
    r"(?:average\s+|avg\s+|expert\s+|non\s+expert\s+|best\s+|median\s+)?(?:human|humans|oracle|upper\s*bound|skyline)"
    + _WORDS.format(r"expert|experts|baseline|performance|avg|average|mean|median|best|level|score|annotator|"
                    r"annotators|rater|raters|evaluator|evaluators|majority|vote|high|medium|low|worst|oracle|"
                    r"upper|bound|reference|estimate|max|min|agent|model"))


_RANDOM = re.compile(r"random|chance|guess|uniform", re.I)


def reference_kind(name: str):
    """``"chance"``, ``"human"`` or None: what a row's model name says it is (its whole name, case and separators
    ``-_/.:()[],*`` ignored, and a backslash: a Markdown table escapes a footnote star, MathVista's
    ``Human Performance\\*``)."""
    if not isinstance(name, str) or len(name) > 80:
        return None
    words = re.sub(r"[\s\-_/.:()\[\],*\\]+", " ", name.lower()).strip()
    if not words:
        return None
    if _CHANCE.fullmatch(words):
        return "chance"
    if _HUMAN.fullmatch(words):
        return "human"
    return None


def reference_rows(src, models, keyed: bool = False, unit: str = "row") -> dict:
    """``{row index: kind}`` of the rows that are reference rows (:func:`reference_kind`); empty, noted, where the
    reading option ``keep_reference_rows`` is set or the rows are keyed by a task column (a reference row's values
    are then per task, kept as the rows they are)."""
    found = {i: k for i, m in enumerate(models) if (k := reference_kind(m)) is not None}
    if not found:
        return {}
    keep = bool((getattr(src, "options", None) or {}).get("keep_reference_rows"))
    if keep or keyed or len(found) == len(models):
        n = len(found)
        why = ("as --keep-reference-rows asks" if keep else "as the rows are keyed by a task column" if keyed
               else f"as the file has no other {unit}")
        src.note(f"{n} {unit}{'s' * (n != 1)} named as a reference rather than a model "
                 f"({_names(repr(models[i]) for i in found)}) stored as model{'s' * (n != 1)}, {why}")
        return {}
    return found


def split_reference_rows(src, models, columns, value, keyed: bool = False):
    """``(kept row indices or None, {column: [(row name, kind, value)]}, [(row name, kind)])``: the reference rows
    of a table (:func:`reference_rows`) and their values in each of ``columns`` (``value(column, row)``; None or
    NaN: missing); None for the kept rows when there is no reference row."""
    found = reference_rows(src, models, keyed=keyed)
    if not found:
        return None, {}, []
    refs = {c: [(models[i], found[i], float(v)) for i in sorted(found)
                if (v := value(c, i)) is not None and v == v] for c in columns}
    keep = [i for i in range(len(models)) if i not in found]
    return keep, refs, [(models[i], k) for i, k in sorted(found.items())]


def apply_reference(col: dict, refs: list, tally: dict, column: str) -> dict:
    """Put one score column's reference values in its stored properties ``col`` (changed in place) and return the
    dataset metadata to add. ``refs``: ``(row name, kind, value)`` of the reference rows with a value in this
    column, file order; ``tally`` collects what the note reports."""
    if not refs:
        return {}
    meta = {"reference_scores": {name: float(v) for name, _, v in refs}}
    chance = [(name, v) for name, k, v in refs if k == "chance"]
    if chance:
        # A random row is the chance level; a majority or most-frequent-answer row only where there is none
        name, v = min(chance, key=lambda c: not _RANDOM.search(c[0]))
        if col.get("random_baseline") is None:
            col["random_baseline"], col["baseline_source"] = float(v), f"leaderboard row {name!r}"
            tally.setdefault("chance_set", []).append(column)
        elif abs(float(col["random_baseline"]) - float(v)) > 1e-9 * max(1.0, abs(float(v))):
            tally.setdefault("chance_disagree", []).append(f"{column} (declared {col['random_baseline']:g}, "
                                                           f"row {name!r} {v:g})")
        if len(chance) > 1:
            tally.setdefault("chance_more", []).append(column)
    human = [(name, v) for name, k, v in refs if k == "human"]
    if human:
        meta["human_score"] = float(human[0][1])
        tally.setdefault("human", []).append(column)
    return meta


def _names(items, cap: int = 8) -> str:
    items = list(dict.fromkeys(items))
    return ", ".join(items[:cap]) + (f" and {len(items) - cap} more" if len(items) > cap else "")


def note_reference(src, rows, tally: dict, unit: str = "row", declared: str = "the sidecar's declared chance",
                   column: str = "column") -> None:
    """The ingest note of the reference rows ``rows`` (``(name, kind)``, file order) and what became of them;
    ``unit``, ``declared``, ``column``: what a row, a declared chance and a column are called (a wide table's are the
    defaults; a long table's are a model name, its ``random_baseline`` column and a dataset)."""
    for kind, what in (("chance", "a random or chance baseline"), ("human", "a human or ceiling reference")):
        names = [name for name, k in rows if k == kind]
        if not names:
            continue
        n = len(names)
        head = f"{n} {unit}{'s are' if n != 1 else ' is'} {what} ({_names(repr(r) for r in names)}): "
        if kind == "chance":
            cols = tally.get("chance_set", [])
            body = (f"stored as the chance level of {len(cols)} dataset{'s' * (len(cols) != 1)}"
                    + (f" ({_names(cols)})" if cols else "") + ", not as a model")
            if tally.get("chance_disagree"):
                d = tally["chance_disagree"]
                body += (f"; {declared} kept on {len(d)} {column}{'s' * (len(d) != 1)} where the "
                         f"row differs: {_names(d)}")
            if tally.get("chance_more"):
                body += ("; with several chance rows a random one sets the level (else the first), every row's value is "
                         "kept in reference_scores")
        else:
            cols = tally.get("human", [])
            body = (f"kept as dataset metadata (human_score, reference_scores) of {len(cols)} "
                    f"dataset{'s' * (len(cols) != 1)}, not as a model")
        src.note(head + body + f"; --keep-reference-rows stores {'it' if n == 1 else 'them'} as {'a model' if n == 1 else 'models'}")


# -- long tables (model, dataset, value): a reference row's cells, per (benchmark, dataset, metric) -----------------
def long_reference_models(src, models) -> dict:
    """``{model name: kind}`` of the reference rows among a long table's distinct model names (file order of first
    appearance); empty, noted, as :func:`reference_rows` decides (``--keep-reference-rows``, no other model)."""
    models = list(models)
    return {models[i]: k for i, k in reference_rows(src, models, unit="model name").items()}


def long_reference(src, kinds: dict, cells: list, declared: dict) -> dict:
    """What a long table's reference rows give each of its datasets, with the note of :func:`note_reference`.

    ``kinds``: :func:`long_reference_models`; ``cells``: ``(key, model name, value)`` of the reference rows' cells in
    file order, ``key`` = ``(benchmark, dataset, metric)``; ``declared``: each key the table's models give ->
    its declared chance level (the ``random_baseline`` column of its first model row) or None. Returns
    ``{key: (chance level to set or None, baseline source, dataset metadata)}``. A reference row's value on a key
    no model has is left out, noted; a row giving one key twice keeps its first value, noted where they differ.
    """
    by_key, first, differ = {}, {}, []
    for key, name, v in cells:
        if (key, name) in first:
            if first[key, name] != v:
                differ.append(name)
            continue
        first[key, name] = v
        by_key.setdefault(key, []).append((name, kinds[name], float(v)))
    label = _key_labels(by_key)
    out, tally, alone = {}, {}, []
    for key, refs in by_key.items():
        if key not in declared:
            alone.append(label[key])
            continue
        col = {"random_baseline": declared[key]}
        meta = apply_reference(col, refs, tally, label[key])
        out[key] = (col["random_baseline"] if "baseline_source" in col else None, col.get("baseline_source"), meta)
    note_reference(src, list(kinds.items()), tally, unit="model name", declared="the random_baseline column's chance",
                   column="dataset")
    if alone:
        n = len(alone)
        src.note(f"reference rows' values on {n} dataset{'s' * (n != 1)} no model has left out: {_names(alone)}")
    if differ:
        src.note(f"{len(differ)} dataset{'s' * (len(differ) != 1)} given twice with different values by a reference "
                 f"row ({_names(repr(d) for d in differ)}): its first value kept")
    return out


def _key_labels(by_key: dict) -> dict:
    """Each key's name in the notes: its dataset, with its metric where the dataset has several."""
    count: dict = {}
    for _, dataset, _ in by_key:
        count[dataset] = count.get(dataset, 0) + 1
    return {k: k[1] if count[k[1]] == 1 else f"{k[1]} ({k[2]})" for k in by_key}


# -- item-response tables: a reference's per-item scores ------------------------------------------------------
def item_reference_rows(models, score, keep, notes: list, keep_reference_rows: bool = False) -> tuple:
    """``(rows kept, whether a model is named as a reference)`` of an item-response table
    (:mod:`harness_ext.store.item_tables`; ``models`` a pandas Categorical, ``score`` and ``keep`` arrays of its
    rows): the scored rows ``keep`` less those of a model whose whole name is a chance baseline or a human or ceiling
    reference (``random``, ``Human``, ``Oracle``: :func:`reference_kind`), noted in ``notes`` with each one's count
    and mean score. Its answers are not a model's (they would enter the item estimators and the draws as one); an
    item table has no dataset to keep them with, so they are left out, unless ``keep_reference_rows`` is set or the
    table has no other model (both noted)."""
    from types import SimpleNamespace

    import numpy as np

    names = [str(m) for m in models.categories]
    src = SimpleNamespace(options={"keep_reference_rows": keep_reference_rows}, note=notes.append)
    found = reference_rows(src, names, unit="model name")
    if not found:
        return keep, any(map(reference_kind, names))
    is_ref = np.isin(models.codes, list(found))
    what = {"chance": "a chance baseline", "human": "a human or ceiling reference"}
    parts = []
    for i, kind in found.items():
        rows = keep & (models.codes == i)
        n = int(rows.sum())
        mean = f", mean {float(score[rows].mean()):.3g}" if n else ""
        parts.append(f"{names[i]!r} ({what[kind]}): {n} score{'s' * (n != 1)}{mean}")
    n = len(found)
    notes.append(f"{n} model name{'s are' if n != 1 else ' is'} a reference rather than a model, left out with "
                 f"{'their' if n != 1 else 'its'} item scores ({'; '.join(parts)}); --keep-reference-rows stores "
                 f"{'them as models' if n != 1 else 'it as a model'}")
    return keep & ~is_ref, True
