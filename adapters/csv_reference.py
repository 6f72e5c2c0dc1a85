"""Reference rows of a wide leaderboard: rows that are not models.

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
"""

from __future__ import annotations

import re

__all__ = ["reference_kind", "reference_rows", "split_reference_rows", "apply_reference", "note_reference"]

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
    ``-_/.:()[]`` ignored)."""
    if not isinstance(name, str) or len(name) > 80:
        return None
    words = re.sub(r"[\s\-_/.:()\[\],*]+", " ", name.lower()).strip()
    if not words:
        return None
    if _CHANCE.fullmatch(words):
        return "chance"
    if _HUMAN.fullmatch(words):
        return "human"
    return None


def reference_rows(src, models, keyed: bool = False) -> dict:
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
               else "as the file has no other row")
        src.note(f"{n} row{'s' * (n != 1)} named as a reference rather than a model "
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


def note_reference(src, rows, tally: dict) -> None:
    """The ingest note of the reference rows ``rows`` (``(name, kind)``, file order) and what became of them."""
    for kind, what in (("chance", "a random or chance baseline"), ("human", "a human or ceiling reference")):
        names = [name for name, k in rows if k == kind]
        if not names:
            continue
        n = len(names)
        head = f"{n} row{'s are' if n != 1 else ' is'} {what} ({_names(repr(r) for r in names)}): "
        if kind == "chance":
            cols = tally.get("chance_set", [])
            body = (f"stored as the chance level of {len(cols)} dataset{'s' * (len(cols) != 1)}"
                    + (f" ({_names(cols)})" if cols else "") + ", not as a model")
            if tally.get("chance_disagree"):
                d = tally["chance_disagree"]
                body += (f"; the sidecar's declared chance kept on {len(d)} column{'s' * (len(d) != 1)} where the "
                         f"row differs: {_names(d)}")
            if tally.get("chance_more"):
                body += ("; with several chance rows a random one sets the level (else the first), every row's value is "
                         "kept in reference_scores")
        else:
            cols = tally.get("human", [])
            body = (f"kept as dataset metadata (human_score, reference_scores) of {len(cols)} "
                    f"dataset{'s' * (len(cols) != 1)}, not as a model")
        src.note(head + body + "; --keep-reference-rows stores them as models")
