""""Every Eval Ever" records (evaleval/every_eval_ever, schema 0.2.x).

One JSON per (model, evaluation run) with ``model_info`` and a list of
``evaluation_results``. Benchmark = ``source_metadata.source_name`` (normalised:
``helm_classic``, ``hfopenllm_v2``, ``rewardbench``); dataset =
``evaluation_name``; metric = the words before `` on `` in
``evaluation_description`` ("EM on MMLU" -> ``EM``) when the rest is the evaluation's name or
they are a metric's few words, else ``score`` (HELM's win rate). Schema 0.0.x HELM records,
which write every tab of HELM's table as rows, keep their Accuracy tab, named as schema 0.2
names it (:func:`_legacy_helm_rows`).
``min_score``/``max_score`` are kept as the scale bounds used by normalisation
and ``lower_is_better`` flips the column.

Aggregates are stored as aggregates (``kind='aggregate'``: a prediction target,
never a subset member): HELM's "Mean win rate" and "Mean score", RewardBench's
overall "Score", HELM MMLU's "MMLU All Subjects" (benchmark ``mmlu``, dataset
``mmlu``, where lm-eval's ``mmlu`` group lands too). MMLU subjects from ``helm_mmlu`` map to
the canonical ``mmlu`` benchmark: subject from the record's generation_config
(else its title, without schema 0.0.x's " - EM" suffix), metric ``acc`` as for
every MMLU source (:data:`harness_ext.benchmarks.MMLU_METRIC`), chance 1/4.

Evaluation runs (``source_metadata.source_type: evaluation_run``, e.g. converted Inspect AI
logs) name the scorer in ``evaluation_name`` and the dataset in ``source_data.dataset_name``:
dataset = that dataset name, metric = the metric the description names (see
:func:`_run_rows`). Schema 0.0.1 records without ``source_metadata.source_name`` take the
benchmark from ``evaluation_source.evaluation_source_name``.

A record naming its precision (``model_info.additional_details.precision``, the Open LLM Leaderboard's
``float16``/``bfloat16``) is that model at that precision (:func:`_model`): two precisions are two models.
A visibly truncated id (RewardBench's table cuts long names to ``...-check...``) names no one model: each record is
stored at its own variant, ``id (record <8 hex digits>)``, the digits a digest of its scores, so nine checkpoints
cut to one name are nine models (not one model whose conflicting values are the first file's), two records with the
same scores are one, and an id with one such model keeps its name.

Units (schema 0.2.2's ``metric_config.metric_unit``: "proportion, percent, points, ms, tokens"): a unit naming a
scale kind (:data:`UNIT_SCALES`: ``proportion`` is 0-1, ``percent`` 0-100) is stored as the score's scale, so a
percentage is never read as a proportion or the other way round by the values alone; without one the scale is
inferred as before (declared bounds, else the column's values). Disagreements are noted with their counts, not
settled silently (:func:`_unit_scale`): declared bounds of another scale keep the bounds (the schema checks scores
against them, never against the unit); percent scores all in (0, 1], which look like proportions, are stored as
percent as the unit says; a proportion above 1 with no bounds refuses the file, as a score above its declared
``max_score`` does.

A score below the record's own declared ``min_score`` is a placeholder, not a
result: HELM Classic writes ``-1`` for scenarios a model was not run on
(HellaSwag, OpenbookQA, MS MARCO for about 35 models). Those cells are left
missing (and counted in a note) instead of becoming real scores of 0. A score
above ``max_score`` refuses the file: it is on another scale, not a placeholder.
"""

from __future__ import annotations

import re
from itertools import repeat
from operator import itemgetter, le
from typing import Optional

from harness_ext.benchmarks import (MMLU_BENCHMARK, MMLU_METRIC, MMLU_SUBJECTS, benchmark_name, chance_baseline,
                                    eee_benchmark)
from harness_ext.errors import IngestError
from harness_ext.hookspecs import hookimpl
from harness_ext.report import listed
from harness_ext.store.rows import ResultRows, kind
from harness_ext.types import VARIANT_OF, Adapter, ResultRecord, SourceFile, eee_model_name, is_truncated_id

from .eee_uncertainty import Uncertainties

AGGREGATE_NAMES = frozenset({"mean win rate", "mean score", "score", "mmlu all subjects"})
#: Aggregate evaluations of a leaderboard, by :func:`_board` of its benchmark: Global MMLU Lite's culturally
#: sensitive and culturally agnostic splits, each over the same questions as its per-language columns (Singh
#: et al. 2024, "Global MMLU", section 3). An evaluation named as its leaderboard is that leaderboard's overall
#: score wherever it appears (:func:`_is_aggregate`).
BOARD_AGGREGATES = {"global_mmlu_lite": frozenset({"culturally_sensitive", "culturally_agnostic"})}
#: An evaluation's name without its leaderboard's name (:func:`_board_part`) that is the leaderboard's overall score:
#: the leaderboard's own name (empty) or "overall" (schema 0.2.2 MMLU-Pro records: ``MMLU-Pro (overall)``, the
#: accuracy over all 14 subjects beside the subjects' own).
BOARD_OVERALL = frozenset({"", "overall"})
#: Words around a leaderboard's name in its source name ("Kaggle Global MMLU Lite Leaderboard").
_BOARD_NOISE = re.compile(r"^(?:kaggle|hf|huggingface)_|_(?:leaderboard|board|results)$")
#: Evaluation names that are a language: a multilingual leaderboard's per-language columns. On a leaderboard of a
#: known multiple-choice benchmark (Global MMLU Lite: MMLU's 4 choices) each gets that benchmark's chance level.
LANGUAGES = frozenset(
    "afrikaans amharic arabic armenian azerbaijani basque belarusian bengali bosnian bulgarian burmese catalan "
    "chichewa chinese croatian czech danish dutch english estonian filipino finnish french galician georgian "
    "german greek gujarati hausa hebrew hindi hungarian icelandic igbo indonesian irish italian japanese javanese "
    "kannada kazakh khmer korean kyrgyz lao latvian lithuanian macedonian malagasy malay malayalam maltese marathi "
    "mongolian nepali norwegian pashto persian polish portuguese punjabi romanian russian serbian sesotho shona "
    "sindhi sinhala slovak slovenian somali spanish sundanese swahili swedish tagalog tajik tamil telugu thai "
    "turkish ukrainian urdu uzbek vietnamese welsh xhosa yoruba zulu".split())
_SUBJECT_BY_TITLE = {s.replace("_", " "): s for s in MMLU_SUBJECTS}
_MMLU_SET = frozenset(MMLU_SUBJECTS)
#: ``metric_unit`` words (lower case, spaces as ``_``) that name a scale kind of
#: :data:`harness_ext.store.scales.SCALE_KINDS`, and that kind's bounds.
UNIT_SCALES = {"proportion": ("proportion", 0.0, 1.0), "fraction": ("proportion", 0.0, 1.0),
               "percent": ("percent", 0.0, 100.0), "percentage": ("percent", 0.0, 100.0),
               "percentage_points": ("percent", 0.0, 100.0), "pct": ("percent", 0.0, 100.0),
               "%": ("percent", 0.0, 100.0)}


def _mmlu_subject(name: str, ev: dict):
    """The canonical subject of a helm_mmlu evaluation, or None (aggregates, other columns).

    The record's own ``generation_config`` names the subject (``additional_details.subject``
    in schema 0.2, ``subject`` in 0.0.x; a list means "all subjects", an aggregate); else
    the title is matched, without the " - EM" suffix schema 0.0.x puts on it.
    """
    gen = ev.get("generation_config") if isinstance(ev.get("generation_config"), dict) else {}
    for d in (gen.get("additional_details"), gen):
        s = d.get("subject") if isinstance(d, dict) else None
        if isinstance(s, list):
            return None
        if isinstance(s, str) and s in _MMLU_SET:
            return s
    title = re.sub(r"\s+-\s+[^-]+$", "", name.strip().lower())
    return _SUBJECT_BY_TITLE.get(title)


_AGGREGATE_SEEN: dict = {}


def _is_aggregate(name: str, bench: str = "") -> bool:
    """Whether an evaluation is its leaderboard's aggregate: a name of :data:`AGGREGATE_NAMES`, the leaderboard's
    own name or "overall" (:data:`BOARD_OVERALL`), or one of :data:`BOARD_AGGREGATES` of its leaderboard."""
    try:  # memoised: 4,574 leaderboard files repeat six names
        return _AGGREGATE_SEEN[(name, bench)]
    except KeyError:
        pass
    n = name.strip().lower()
    out = n in AGGREGATE_NAMES or re.sub(r"\s+-\s+[^-]+$", "", n) in AGGREGATE_NAMES
    if not out and bench:
        board = _board(bench)
        part = _board_part(name, board)
        out = part in BOARD_OVERALL or part in BOARD_AGGREGATES.get(board, ())
    if len(_AGGREGATE_SEEN) < 100_000:
        _AGGREGATE_SEEN[(name, bench)] = out
    return out


def _board(bench: str) -> str:
    """A leaderboard's own name from its benchmark: ``kaggle_global_mmlu_lite_leaderboard`` -> ``global_mmlu_lite``."""
    prev = None
    while prev != bench:
        prev, bench = bench, _BOARD_NOISE.sub("", bench)
    return bench


def _board_part(name: str, board: str) -> str:
    """An evaluation's name without its leaderboard's name before it (``Global MMLU Lite Culturally Sensitive`` ->
    ``culturally_sensitive``; ``Global MMLU Lite`` -> empty), normalised as :func:`benchmark_name`."""
    n = benchmark_name(name)
    if n == board:
        return ""
    return n[len(board) + 1:] if n.startswith(board + "_") else n


def _board_chance(bench: str, name: str, metric: str, lo, hi) -> tuple:
    """``(chance in the score's units, source)`` of a per-language (or aggregate) column of a leaderboard whose own
    name is a benchmark with a known multiple-choice chance level (Global MMLU Lite: MMLU's 1/4), else
    ``(None, None)``."""
    board = _board(bench)
    part = _board_part(name, board)
    if part != "" and part not in LANGUAGES and part not in BOARD_AGGREGATES.get(board, ()):
        return None, None
    from harness_ext.store.scales import chance_level  # numpy: not imported to register the adapter

    c, source = chance_level(board, metric)
    if not c:
        return None, None
    lo = 0.0 if lo is None else float(lo)
    hi = 1.0 if hi is None else float(hi)
    return lo + c * (hi - lo), f"{source} ({board.replace('_', ' ')})"


#: Kinds (store.rows.kind) by their fields as read here, asked once per row.
_KINDS: dict = {}
#: Rows' dataset metadata by (benchmark, description): nothing changes these dicts (no task configuration).
_DMETA: dict = {}


def _metric(desc, name) -> str:
    if desc.__class__ is str:
        try:  # memoised: a leaderboard's few descriptions, asked once per score
            return _METRICS[(desc, name)]
        except KeyError:
            out = _METRICS[(desc, name)] = _metric_uncached(desc, name)
            if len(_METRICS) > 100_000:
                _METRICS.clear()
            return out
    return _metric_uncached(desc, name)


_METRICS: dict = {}


def _metric_uncached(desc, name) -> str:
    """The metric an evaluation's description names ("EM on MMLU" -> ``EM``), else ``score``.

    The words before `` on `` are a metric when the rest is the evaluation's name or when they are a
    metric's few words: HELM's win rate ("How many models this model outperform on average (over
    columns).") is a sentence, not a metric named ``How many models this model outperform``.
    """
    if isinstance(desc, str) and " on " in desc:
        head, tail = (part.strip() for part in desc.split(" on ", 1))
        named = isinstance(name, str) and tail.lower() == name.strip().lower()
        if 0 < len(head) <= 40 and (named or len(head.split()) <= 3):
            return head
    return "score"


def can_handle(src: SourceFile) -> bool:
    if src.suffix != ".json" or b"evaluation_results" not in src.head and b"schema_version" not in src.head:
        return False
    doc = src.try_json()
    return isinstance(doc, dict) and "evaluation_results" in doc and "model_info" in doc


def read(src: SourceFile):
    doc = src.json()
    info = doc.get("model_info")
    if not isinstance(info, dict) or not (info.get("id") or info.get("name")):
        raise IngestError(src.path, "model_info has no id or name")
    model, model_meta = _model(info, doc.get("evaluation_results"))
    if model_meta.get(VARIANT_OF) and is_truncated_id(model_meta[VARIANT_OF]):
        _note_truncated(src, model_meta[VARIANT_OF])
    source_meta = doc.get("source_metadata") or {}
    if str((source_meta.get("additional_details") or {}).get("harness_ext_prediction")).lower() == "true":
        raise IngestError(src.path, "a harness-ext prediction (harness-ext predict --eee wrote it), not a measured result")
    # Schema 0.0.1 leaderboard records may name their source only in evaluation_source
    # (Kaggle's Global MMLU Lite): without it their "English", "Arabic" columns would meet
    # other leaderboards' columns of the same name under one benchmark.
    bench = eee_benchmark(doc)
    results = doc.get("evaluation_results")
    if not isinstance(results, list):
        raise IngestError(src.path, "evaluation_results is not a list")
    if source_meta.get("source_type") == "evaluation_run" and any(_run_dataset(ev) for ev in results):
        return _run_rows(src, model, model_meta, bench, results)
    positions = range(len(results))  # each row's index in the file, for the errors below
    if str(doc.get("schema_version")).startswith("0.0.") and "Accuracy" in map(_tab, results):
        positions, results = _legacy_helm_rows(src, results)
    out = ResultRows(model, model_meta)
    helm_mmlu = bench == "helm_mmlu"
    uncertainties = Uncertainties()
    if not helm_mmlu and _rows_seen(out, bench, results):
        out.stderrs = [uncertainties.stderr(ev["evaluation_name"], ev.get("score_details"), v)
                       for ev, v in zip(results, out.values)]
        _note_aggregates(src, out.kinds)
        uncertainties.note(src)
        return out
    placeholders, units = [], _Units()
    for i, ev in zip(positions, results):
        if ev.__class__ is not dict and not isinstance(ev, dict):
            raise IngestError(src.path, f"evaluation_results[{i}] is not an object")
        name = ev.get("evaluation_name")
        if name.__class__ is not str and not isinstance(name, str):
            raise IngestError(src.path, f"evaluation_results[{i}] has no evaluation_name")
        cfg = ev.get("metric_config") or {}
        details = ev.get("score_details") or {}
        if "score" not in details:
            raise IngestError(src.path, f"evaluation_results[{i}] ({name}) has no score_details.score")
        desc = cfg.get("evaluation_description")
        lower = cfg.get("lower_is_better")
        lo, hi = _bound(cfg.get("min_score")), _bound(cfg.get("max_score"))
        score = details["score"]
        if (score.__class__ is float or isinstance(score, (int, float)) and not isinstance(score, bool)) and (
            (lo is not None and score < lo) or (hi is not None and score > hi)
        ):
            _check_not_above(src, name, score, hi)
            placeholders.append(f"{name} {score:g}")
            continue
        scale = units.scale(src, name, cfg.get("metric_unit"), lo, hi, score) if "metric_unit" in cfg else None
        if helm_mmlu:  # the subject comes from the record's generation_config: worked out per row
            k, dmeta = _row_kind(bench, name, ev, desc, lower, lo, hi, True, scale)
        else:
            try:  # a leaderboard's few descriptions, asked once per score
                k, dmeta = _ROW_KINDS[(bench, name, desc, lower, lo, hi, scale)]
            except KeyError:
                k, dmeta = _ROW_KINDS[(bench, name, desc, lower, lo, hi, scale)] = _row_kind(
                    bench, name, ev, desc, lower, lo, hi, False, scale)
                if len(_ROW_KINDS) > 100_000:
                    _ROW_KINDS.clear()
            except TypeError:  # an unhashable description or direction
                k, dmeta = _row_kind(bench, name, ev, desc, lower, lo, hi, False, scale)
        out.kinds.append(k)
        out.values.append(score)
        out.stderrs.append(uncertainties.stderr(name, details, score))
        out.dataset_metadata.append(dmeta)
    out.has_configs = False
    n = len(out.values)
    out.num_fewshot += [None] * n
    out.n_samples += [None] * n
    _note_placeholders(src, placeholders)
    _note_aggregates(src, out.kinds)
    units.note(src)
    uncertainties.note(src)
    return out


class _Units:
    """The scales a record's ``metric_unit`` fields name, row by row (:meth:`scale`), and the disagreements met, for
    one note per kind with its count (:meth:`note`)."""

    def __init__(self):
        self.bounds, self.proportion_like, self.percent, self.other = [], [], 0, {}

    def scale(self, src: SourceFile, name: str, unit, lo, hi, score) -> object:
        """The scale kind a row's unit names (``proportion``, ``percent``), or None: no unit, a unit naming no scale
        kind (``points``, ``ms``), or declared bounds of another scale, which are kept (the schema checks the score
        against them, never against the unit). A proportion above 1 without bounds refuses the file."""
        spec = UNIT_SCALES.get(re.sub(r"\s+", "_", unit.strip().lower())) if isinstance(unit, str) else None
        if spec is None:
            if unit is not None:
                self.other[str(unit)] = self.other.get(str(unit), 0) + 1
            return None
        kind_, ulo, uhi = spec
        if lo is not None and hi is not None and (lo, hi) != (ulo, uhi):
            self.bounds.append(f"{name} ({unit}, bounds [{lo:g}, {hi:g}])")
            return None
        number = isinstance(score, (int, float)) and not isinstance(score, bool)
        if kind_ == "proportion" and number and score > 1 and hi is None:
            raise IngestError(src.path, f"{name}: score {score:g} is above 1, the maximum of its metric_unit "
                                        f"{unit!r} (a percentage for a proportion?)")
        if kind_ == "percent":
            self.percent += 1
            if number and 0 < score <= 1:
                self.proportion_like.append(f"{name} {score:g}")
        return kind_

    def note(self, src: SourceFile) -> None:
        if self.bounds:
            n = len(self.bounds)
            src.note(f"{n} row{'s' * (n != 1)} whose metric_unit names another scale than the declared bounds: the "
                     f"bounds kept, as the schema checks scores against them: {listed(self.bounds, 5)}")
        if self.proportion_like and len(self.proportion_like) == self.percent:
            n = len(self.proportion_like)
            src.note(f"{'all ' * (n > 1)}{n} row{'s' * (n != 1)} with metric_unit percent {'have' if n > 1 else 'has'} "
                     f"a score in (0, 1], which looks like a proportion: stored as percent, as the unit says (0.5 is "
                     f"0.5%); check the record: {listed(self.proportion_like, 5)}")
        if self.other:
            words = ", ".join(f"{u} ({c})" for u, c in self.other.items())
            src.note(f"metric_unit naming no scale ({words}): each score's scale inferred from its bounds or values")


def _tab(ev) -> object:
    """The HELM leaderboard tab a row was read from (``score_details.details.tab``), or None."""
    sd = ev.get("score_details") if isinstance(ev, dict) else None
    details = sd.get("details") if isinstance(sd, dict) else None
    return details.get("tab") if isinstance(details, dict) else None


def _legacy_helm_rows(src: SourceFile, results: list) -> tuple:
    """A schema 0.0.x HELM record's rows as schema 0.2 lays them out.

    Schema 0.0.x writes every tab of HELM's leaderboard table as rows of their own ("NarrativeQA - F1" in
    the Accuracy tab, "NarrativeQA - Observed inference time (s)" in Efficiency, "NarrativeQA - # eval" in
    General information, a "Mean win rate" in each); schema 0.2 keeps the Accuracy rows, named by the
    scenario ("NarrativeQA", described "F1 on NarrativeQA"), and nests the other tabs inside them. Read
    as written, run times and token counts became datasets and the Efficiency tab's win rate a second
    value of the leaderboard's. Rows of the other tabs are left out, counted in a note; the Accuracy rows
    are named as schema 0.2 names them, so both versions of one record store the same cells. Rows naming
    no tab are kept as they are, for :func:`read` to read or refuse. Returns ``(positions, rows)``: the
    kept rows' indices in the file, and the rows.
    """
    positions, kept, left = [], [], {}
    for i, ev in enumerate(results):
        tab = _tab(ev)
        if isinstance(tab, str) and tab != "Accuracy":
            left[tab] = left.get(tab, 0) + 1
            continue
        positions.append(i)
        if tab is None:
            kept.append(ev)
            continue
        name, cfg = ev.get("evaluation_name"), ev.get("metric_config") or {}
        title, sep, metric = name.partition(" - ") if isinstance(name, str) else (name, "", "")
        if sep and title.strip() and metric.strip() and isinstance(cfg, dict):
            cfg = dict(cfg, evaluation_description=f"{metric.strip()} on {title.strip()}")
            ev = dict(ev, evaluation_name=title.strip(), metric_config=cfg)
        kept.append(ev)
    if left:
        n = sum(left.values())
        tabs = ", ".join(f"{t} {c}" for t, c in left.items())
        src.note(f"{n} row{'s' * (n != 1)} of HELM's other leaderboard tabs left out ({tabs}): the leaderboard's "
                 "scores are its Accuracy tab, as schema 0.2 records store it (run times and instance or token "
                 "counts are not scores)")
    return positions, kept


def _model(info: dict, results=None) -> tuple:
    """``(stored name, model metadata)`` of a record's ``model_info``.

    The metadata is all of ``model_info`` but its id. A record that names its precision
    (``additional_details.precision``, as the Open LLM Leaderboard's records do) is that model at that
    precision: the leaderboard lists a repository evaluated in ``float16`` and in ``bfloat16`` as two rows
    with their own scores. Its name is ``org/model (bfloat16)`` with :data:`~harness_ext.types.VARIANT_OF`
    the plain id, so two precisions are two models, whichever file comes first, and a model stored at one
    precision only is still shown (and matched with other sources) by its plain id. A visibly truncated id
    (RewardBench's ``...``) is likewise at the record's own variant, named by its scores
    (:func:`~harness_ext.types.record_variant`).
    """
    plain, model = eee_model_name(info, results if isinstance(results, list) else [])
    meta = dict(info)  # copied in C; the key order kept
    meta.pop("id", None)
    if model != plain:
        meta[VARIANT_OF] = plain
    return model, meta


def _check_not_above(src: SourceFile, name: str, score, hi) -> None:
    """Refuse a score above its declared maximum: placeholders sit below the range (HELM's ``-1``), so 34.4 on
    [0, 1] is a score on another scale (percent), which leaving it out as "not run" would hide."""
    if hi is not None and score > hi:
        raise IngestError(src.path, f"{name}: score {score:g} is above its declared max_score {hi:g} "
                                    "(a percentage for a proportion?)")


def _note_truncated(src: SourceFile, plain: str) -> None:
    """Note a record stored under its truncated id's record variant (the same words for every record of the id, so
    the ingest report counts them as one note)."""
    src.note(f"model id {plain} is cut short by its leaderboard: stored as {plain} (record <digest of its scores>), "
             "so records of different checkpoints behind the one name stay apart and records with the same scores "
             "are one model; an id with one such model keeps its name")


def _note_placeholders(src: SourceFile, placeholders: list) -> None:
    if placeholders:
        n = len(placeholders)
        src.note(f"{n} score{'s' * (n != 1)} outside {'their' if n != 1 else 'its'} declared [min_score, max_score] "
                 f"left out as placeholder{'s' * (n != 1)} (not run): {listed(placeholders, 8)}")


def _note_aggregates(src: SourceFile, kinds) -> None:
    """Note the evaluations stored as aggregates (:func:`_is_aggregate`): a prediction target, never a subset member."""
    names = list(dict.fromkeys(k.dataset for k in kinds if k.aggregate))
    if names:
        n = len(names)
        src.note(f"{n} evaluation{'s' * (n != 1)} stored as aggregate{'s' * (n != 1)}: {', '.join(names)} "
                 "(named as the leaderboard's overall score or one of its known aggregates)")


def _run_dataset(ev):
    """The dataset a result of an evaluation run names in its own ``source_data``, or None."""
    sd = ev.get("source_data") if isinstance(ev, dict) else None
    name = sd.get("dataset_name") if isinstance(sd, dict) else None
    return name.strip() if isinstance(name, str) and name.strip() else None


def _run_rows(src, model: str, model_meta: dict, bench: str, results: list) -> list:
    """The results of an evaluation-run record (``source_type: evaluation_run``, e.g. converted Inspect AI logs).

    Such a record names its scorer in ``evaluation_name`` ("choice", "gaia_scorer") and the
    dataset in ``source_data.dataset_name`` ("ai2_arc", "GAIA"); read as leaderboard columns,
    every multiple-choice task of one source would land in one "choice" cell. Dataset = the
    dataset name; metric = the metric the description names ("accuracy"), prefixed with the
    scorer when a dataset has several results, as the inspect-ai adapter does; the first
    result of each dataset is its primary metric. A result's sample count is the length of its
    ``source_data.sample_ids`` (the samples scored; ``samples_number`` is the dataset's size), so a run
    limited to a few samples loses a cell to a whole run of the same model; each limited run is noted.
    """
    per_dataset: dict = {}
    for ev in results:
        d = _run_dataset(ev)
        per_dataset[d] = per_dataset.get(d, 0) + 1
    out, seen, placeholders, units, partial, uncertainties = [], set(), [], _Units(), [], Uncertainties()
    for i, ev in enumerate(results):
        if not isinstance(ev, dict) or not isinstance(ev.get("evaluation_name"), str):
            raise IngestError(src.path, f"evaluation_results[{i}] is not an object with an evaluation_name")
        name, dataset = ev["evaluation_name"], _run_dataset(ev) or ev["evaluation_name"]
        cfg = ev.get("metric_config") if isinstance(ev.get("metric_config"), dict) else {}
        score = (ev.get("score_details") or {}).get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise IngestError(src.path, f"evaluation_results[{i}] ({name}) has no numeric score_details.score")
        lo, hi = _bound(cfg.get("min_score")), _bound(cfg.get("max_score"))
        if (lo is not None and score < lo) or (hi is not None and score > hi):
            _check_not_above(src, name, score, hi)
            placeholders.append(f"{name} {score:g}")
            continue  # a placeholder outside the declared bounds, as in read()
        scale = units.scale(src, name, cfg.get("metric_unit"), lo, hi, score) if "metric_unit" in cfg else None
        desc = cfg.get("evaluation_description")
        metric = desc.strip() if isinstance(desc, str) and 0 < len(desc.strip()) <= 40 else "score"
        if per_dataset[_run_dataset(ev)] > 1:
            metric = f"{name}/{metric}"
        lower = cfg.get("lower_is_better")
        scored = _scored_samples(ev, dataset, partial)
        out.append(ResultRecord(
            model=model, benchmark=bench, dataset=dataset, metric=metric, value=float(score), n_samples=scored,
            stderr=uncertainties.stderr(name, ev.get("score_details"), score),
            higher_is_better=None if lower is None else not bool(lower), min_score=lo, max_score=hi,
            primary=dataset not in seen, task=name, model_metadata=model_meta, scale=scale,
            dataset_metadata={"source": bench, "description": desc, "scorer": name, **_run_source(ev)}))
        seen.add(dataset)
    _note_placeholders(src, placeholders)
    if partial:  # a score over a few samples (Inspect's --limit) is not the dataset's score over all of them
        n = len(partial)
        src.note(f"{n} result{'s' * (n != 1)} scored on part of {'its' if n == 1 else 'their'} dataset "
                 f"(sample_ids fewer than samples_number): {listed(dict.fromkeys(partial), 8)}")
    units.note(src)
    uncertainties.note(src)
    return out


def _run_source(ev: dict) -> dict:
    """``hf_repo`` and ``samples_number`` of an evaluation-run result's ``source_data``, where given: with the scorer,
    what tells which harness task's dataset it is (:mod:`harness_ext.store.dataset_links`)."""
    sd = ev.get("source_data") if isinstance(ev.get("source_data"), dict) else {}
    repo, size = sd.get("hf_repo"), sd.get("samples_number")
    out = {"hf_repo": repo.strip()} if isinstance(repo, str) and repo.strip() else {}
    if isinstance(size, int) and not isinstance(size, bool):
        out["samples_number"] = size
    return out


def _scored_samples(ev: dict, dataset: str, partial: list) -> Optional[int]:
    """How many samples an evaluation-run result was scored on (``len(source_data.sample_ids)``), or None.

    ``samples_number`` is the dataset's size, not the samples scored: Every Eval Ever's records of Inspect runs with
    ``--limit 5`` say 2376 beside five ids. A run on fewer ids than that appends ``"<dataset> <n> of <total>"`` to
    ``partial``.
    """
    sd = ev.get("source_data")
    ids = sd.get("sample_ids") if isinstance(sd, dict) else None
    if not isinstance(ids, list) or not ids:
        return None
    total = sd.get("samples_number")
    if isinstance(total, int) and not isinstance(total, bool) and len(ids) < total:
        partial.append(f"{dataset} {len(ids):,} of {total:,}")
    return len(ids)


#: ``(kind, dataset metadata)`` of a row by (benchmark, evaluation name, description, direction, bounds, the scale its
#: unit names).
_ROW_KINDS: dict = {}


def _bound(value):
    """A declared ``min_score``/``max_score``: a number, else None. JSON ``true`` is no bound; kept as one it would
    also equal ``1.0`` as a key of :data:`_ROW_KINDS`, so a later file's rows declaring ``1.0`` would take the kind
    made for ``true`` (no bound) in the same process."""
    return value if value.__class__ is float or (isinstance(value, (int, float)) and not isinstance(value, bool)) \
        else None
_NAME, _CONFIG, _DETAILS = itemgetter("evaluation_name"), itemgetter("metric_config"), itemgetter("score_details")
_DESC, _LOWER = itemgetter("evaluation_description"), itemgetter("lower_is_better")
_MIN, _MAX, _SCORE = itemgetter("min_score"), itemgetter("max_score"), itemgetter("score")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def _rows_seen(out: ResultRows, bench: str, results: list) -> bool:
    """Fill ``out`` from ``results`` a field at a time (C-level passes) when every row is plain and described before.

    Plain: every field present, float scores within float bounds, string names; described before: each
    row's (name, description, direction, bounds) is in :data:`_ROW_KINDS`. Anything else (False) takes the
    row-by-row loop of :func:`read`, which reads, skips or refuses it and says why. A file's rows are looked
    up as one key (:data:`_FILE_ROWS`): a leaderboard's files repeat one list of descriptions.
    """
    try:
        configs = list(map(_CONFIG, results))
        scores = list(map(_SCORE, map(_DETAILS, results)))
        names = tuple(map(_NAME, results))
        lows, highs = tuple(map(_MIN, configs)), tuple(map(_MAX, configs))
        if not (set(map(type, scores)) == set(map(type, lows)) == set(map(type, highs)) == {float}
                and set(map(type, names)) == {str} and all(map(le, lows, scores)) and all(map(le, scores, highs))):
            return False
        if any(map(dict.get, configs, repeat("metric_unit"))):  # a unit is checked row by row (_Units)
            return False
        key = (bench, names, tuple(map(_DESC, configs)), tuple(map(_LOWER, configs)), lows, highs)
        hit = _FILE_ROWS.get(key)
        if hit is None:
            hits = list(map(_ROW_KINDS.get, zip(repeat(bench), *key[1:], repeat(None))))  # no unit: no scale
            if None in hits:
                return False
            if len(_FILE_ROWS) > 10_000:
                _FILE_ROWS.clear()
            hit = _FILE_ROWS[key] = (tuple(map(_FIRST, hits)), tuple(map(_SECOND, hits)))
    except (KeyError, TypeError, IndexError):  # a missing field, a row that is not an object, an unhashable value
        return False
    n = len(scores)
    out.kinds, out.values, out.dataset_metadata = list(hit[0]), scores, list(hit[1])
    out.stderrs, out.num_fewshot, out.n_samples = [None] * n, [None] * n, [None] * n
    out.has_configs = False
    return True


#: ``(kinds, dataset metadata)`` of a file's rows by (benchmark, names, descriptions, directions, lower and upper
#: bounds), each a tuple over the rows (see :func:`_rows_seen`).
_FILE_ROWS: dict = {}


def _row_kind(bench: str, name: str, ev: dict, desc, lower, lo, hi, helm_mmlu: bool, scale=None) -> tuple:
    """The shared kind (store.rows.kind) and dataset metadata of one evaluation result."""
    aggregate = _is_aggregate(name, bench)
    benchmark, dataset, metric, rb, rb_src = bench, name, _metric(desc, name), None, None
    if not helm_mmlu:
        rb, rb_src = _board_chance(bench, name, metric, lo, hi)
    if helm_mmlu:
        subject = _mmlu_subject(name, ev) if not aggregate else None
        if subject:
            benchmark, dataset, metric = MMLU_BENCHMARK, subject, MMLU_METRIC
            rb, rb_src = chance_baseline(f"mmlu:subject={subject}", MMLU_METRIC)
        elif aggregate:
            # "MMLU All Subjects" is the mmlu group score; the leaderboard's win rate stays beside it.
            title = re.sub(r"\s+-\s+[^-]+$", "", name.strip().lower())  # schema 0.0.x: "MMLU All Subjects - EM"
            benchmark = MMLU_BENCHMARK
            if title == "mmlu all subjects":
                dataset, metric = MMLU_BENCHMARK, MMLU_METRIC
                rb, rb_src = chance_baseline("mmlu:subject=anatomy", MMLU_METRIC)
    key = (benchmark, dataset, metric, lower, lo, hi, rb, rb_src, aggregate, scale)
    try:
        k = _KINDS[key]
    except KeyError:
        k = _KINDS[key] = kind(benchmark=benchmark, dataset=dataset, metric=metric,
                               higher_is_better=None if lower is None else not bool(lower), min_score=lo,
                               max_score=hi, random_baseline=rb, baseline_source=rb_src, aggregate=aggregate,
                               scale=scale)
        if len(_KINDS) > 100_000:
            _KINDS.clear()
    except TypeError:  # an unhashable lower_is_better
        k = kind(benchmark=benchmark, dataset=dataset, metric=metric,
                 higher_is_better=None if lower is None else not bool(lower), min_score=lo, max_score=hi,
                 random_baseline=rb, baseline_source=rb_src, aggregate=aggregate, scale=scale)
    try:  # one metadata dict per (source, description), shared by the rows and files that have it
        dmeta = _DMETA[(bench, desc)]
    except KeyError:
        dmeta = _DMETA[(bench, desc)] = {"source": bench, "description": desc}
        if len(_DMETA) > 100_000:
            _DMETA.clear()
    except TypeError:  # an unhashable description
        dmeta = {"source": bench, "description": desc}
    return k, dmeta


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="every-eval-ever",
        # 2: a leaderboard's "overall" evaluation (MMLU-Pro (overall), schema 0.2.2) is an aggregate;
        # 3: metric_unit (schema 0.2.2) stored as the score's scale (proportion, percent)
        # 4: an evaluation run's sample count (its sample_ids) stored, so a limited run loses a cell to a whole one
        # 5: records of Inspect runs (source inspect_ai) stored under benchmark inspect, as Inspect's own logs are
        # 6: a score's standard error from score_details.uncertainty (standard error, interval at a level, sd/sqrt n)
        # 7: an evaluation run's source_data hf_repo and samples_number stored with its dataset (dataset links)
        revision="7",
        description="Every Eval Ever records (schema 0.2): HELM, Open LLM Leaderboard v2, RewardBench, ...",
        can_handle=can_handle,
        read=read,
    )
