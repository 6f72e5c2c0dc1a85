"""The rules a CSV result table is read by, shared by both reading paths (record by record in
:mod:`harness_ext.adapters.csv_table`, column by column in :mod:`harness_ext.adapters.csv_columnar`) and by
the column notes (:mod:`harness_ext.adapters.csv_columns`): which column names the model, which columns are
model metadata, aggregates or lower-is-better scores, how a cell is parsed, and the sidecar.

:mod:`harness_ext.adapters.csv_table` describes the formats and the rules for users.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness_ext.errors import IngestError
from harness_ext.report import listed, plural
from harness_ext.safe_output import short_name
from harness_ext.types import SUBSET_OPTION, SourceFile

MODEL_HEADERS = ("model", "models", "model name", "model_name", "llm_model", "llm", "model id", "model_id",
                 # the same in Chinese, Japanese and Korean leaderboards (a Chinese LLM benchmark's "大模型", large model)
                 "模型", "大模型", "模型名称", "模型名", "モデル", "モデル名", "모델", "모델명")
#: Headers of a model column read only when no :data:`MODEL_HEADERS` column is present (AlpacaEval's ``name``).
NAME_HEADERS = ("name", "model_display_name", "display name")
#: Headers of the column naming the systems a board ranks when it names no model (:data:`MODEL_HEADERS`) or name
#: (:data:`NAME_HEADERS`) column: a document-parsing board's ``Provider`` (ParseBench), a board of tools, solvers or
#: submissions. Read so with a note (:func:`check_model_column`); "method" and "approach" are not among them: beside a
#: model they say how it was run.
SYSTEM_HEADERS = ("provider", "system", "system name", "system_name", "algorithm", "parser", "engine", "tool",
                  "framework", "solver", "detector", "submission", "submission name", "submission_name", "entrant",
                  "participant", "agent")
_BOOL = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_MISSING = frozenset({"", "nan", "na", "n/a", "-", "--", "\u2014", "\u2013", "none", "null", "?", "x"})
#: Numeric columns that describe a model instead of scoring it.
META_NAME = re.compile(
    # a model's size, also in snake_case (Nejumi's "model_size", a parameter count), parameter count or context
    # window, not a task about them (BFCL's "Multi Turn Miss Param" and
    # "Multi Turn Long Context" score function calls with a parameter missing and with a long context)
    r"((?<![a-z])size(?![a-z])|(?<!miss[ _-])(?<!missing[ _-])param|#\s*p|\bflops?\b|\bdate\b|release|\byear\b|\bmonth\b|"
    r"(?<!long[ _-])context|\btokens?\b|price|cost|\$|"
    r"latency|throughput|speed|\bvotes?\b|\bci\b|confidence|\bstderr\b|\bstd\b|license|licence|"
    # a rank, also in snake_case (a pairwise leaderboard's "bt_rank": \b does not split on "_"), and counts of
    # tasks, samples or solves (Cybench's "Count" of challenges and "# Solved", a bootstrap's "bootstrap_samples"):
    # read as scores, a rank of 1 was the worst score and 40 challenges a 40% score; not a re-ranking task
    # (HELMET's "Re-rank" category, Yen et al. 2025, scores passage re-ranking)
    r"(?<![a-z])(?<!(?<![a-z])re[ _-])rank|(?<![a-z])counts?(?![a-z])|(?:^|[\W_])(?:n[ _-]?)?samples?(?:$|[\W_])|(?:^|\s)#(?:\s|$)|"
    # a bootstrap's own statistics and settings (a pairwise board's "thurstone_sigma_bootstrap_std",
    # "bootstrap_resample_evaluators"): the fit's, not a model's
    r"(?:^|[\W_])(?:bootstrap|resample)(?:$|[\W_])|"
    # a score's spread (AlpacaEval's "standard_error", "lc_standard_error"): LOWER_NAME's "error" would store it as a score
    r"standard[ _-]?(?:error|deviation)|std[ _-]?(?:err|dev)|"
    # bounds of a score's interval (Arena-Hard-Auto's "rating_q025"/"rating_q975", "ci_low", "upper"), and token
    # counts in snake_case ("avg_tokens": the \b above does not split on "_")
    r"(?:^|[\W_])(?:q\d{2,3}|lower|upper|ci[ _-]?(?:low|high|lo|hi)|(?:avg|mean|num|n)?[ _-]?tokens?)(?:$|[\W_])|"
    # an interval's width named with its level (LMArena's "ci95", "95_pct_ci"): the \bci\b above needs a boundary
    r"(?:^|[\W_])(?:\d{2}[ _-]?(?:pct|%)?[ _-]?)?ci\d{0,2}(?:$|[\W_])|"
    r"\bversion\b|\bhub\b|likes|hearts|downloads|\blink\b|\burl\b|\bid\b|\bseed\b|\bnum_|\bn_|"
    # ... also in snake_case ("benchmark_version": 1.0 on every row was a dataset); and a run's diagnostics, not its
    # score: how long it took ("duration_seconds": 507 was a score, higher better) and how many outputs were cut off
    # or could not be parsed ("unparsed_rate", "truncated")
    r"(?<![a-z])version(?![a-z])|(?<![a-z])(?:duration|runtime|elapsed|seconds|secs|minutes|hours|wall[ _-]?(?:time|clock))"
    r"(?![a-z])|(?<![a-z])(?:truncated|truncation|unparsed|unparseable|parse[ _-]?(?:fail\w*|errors?))(?![a-z])|"
    # prices per million tokens and what caching saved ("input_per_million", "estimated_cache_savings")
    r"(?<![a-z])per[ _-]?(?:million|1m|thousand|1k)(?![a-z])|(?<![a-z])savings?(?![a-z])|"
    # a column named as metadata (the Open LLM Leaderboard's flattened "metadata_generation", "metadata_hub_hearts")
    r"(?:^|[\W_])metadata(?:$|[\W_])|"
    # a row index named as nothing else (the MTEB leaderboard's JSON Lines records carry "index"; pandas writes
    # "__index_level_0__"), not a score named an index ("Jaccard index")
    r"^\s*(?:index|__index_level_\d+__)\s*$|"
    # how fast and how big a model runs, not how well: a speech board's inverse real-time factor ("RTFx", -1 where
    # unknown), an embedding board's "Memory Usage (GB, fp32)" and its vectors' "Embedding Dimensions" (the Open ASR
    # and MTEB leaderboards)
    r"(?<![a-z])(?:rtfx?|real[ _-]?time[ _-]?factor|vram)(?![a-z])|memory[ _-]*(?:usage|footprint|\(?[gm]i?b\b)|"
    r"embedding[ _-]*(?:dim\w*|size)|"
    # a model's answer length (AlpacaEval's "Output Length", "avg_length"), not a length-controlled score
    r"(?<![a-z])(?:(?:avg|average|mean|output|response|answer)[ _-]?)?length(?![ _-]*controlled)(?![a-z]))", re.I)
#: Column names of aggregates of the other columns.
AGGREGATE_NAME = re.compile(r"(^|[^a-z])(overall|average|avg|mean|total|aggregate|score[ _-]of[ _-]scores|all)($|[^a-z])", re.I)
#: Column names of aggregates in Chinese, Japanese or Korean: "overall", "average", "total" alone or with "ability" or
#: "score" after it (the Chinese LLM benchmark's "综合能力", C-Eval's "平均"), nothing before it.
CJK_AGGREGATE_NAME = re.compile("(?:综合|綜合|総合|平均|总分|總分|总体|總體|整体|整體|合计|合計|总计|總計|종합|평균|전체|총점)"
                                "(?:能力|得分|分数|分數|分|成绩|成績|评分|評分|表现|表現|スコア|点|点数|점수|능력)?")
#: Column names of lower-is-better scores.
LOWER_NAME = re.compile(r"(error|\bloss\b|perplexity|\bppl\b|latency|\bwer\b|\bcer\b|bits[ _]per|"
                        # a rate of hallucinations or of giving in to pushback ("false_premise_hallucination_rate",
                        # "sycophancy_rate")
                        r"(?:hallucinat|sycophan)\w*[ _-]?rate)", re.I)
#: File names of tables whose every column is what a run cost rather than how well it did (LiveBench's
#: ``cost_<date>.csv``, dollars per task beside its ``table_<date>.csv`` of scores): lower is better, on an open
#: scale. Read as scores, dollars from 0.03 to 62 were percentages and a cheaper model the worse one.
#: "cost-effective", "cost_aware" name a kind of task or method, not costs.
COST_FILE = re.compile(r"(?:^|[\W_])(costs?|prices?|pricing|latency|latencies|runtimes?)(?:$|[\W_])"
                       r"(?![\W_]*(?:effective|efficien|sensitive|aware|benefit))", re.I)
#: Metric suffixes of wide column names: ``<task>_<metric>`` columns sharing a task are one dataset.
METRIC_SUFFIXES = ("exact_match", "acc_norm", "acc", "accuracy", "bleu", "f1", "em", "rouge_l", "rougel", "rouge1",
                   "rouge2", "mcc", "pass@1", "pass_at_1", "chrf", "brier_score",
                   # the Open LLM Leaderboard v2's flattened records: each task's raw and chance-normalised score
                   "normalized_score", "value")
#: Share of numeric cells above which a column is a score column with a typo, not a text column.
MOSTLY_NUMERIC = 0.8
#: A line break, tab or other control character inside a header cell, with the spaces around it.
_HEADER_BREAK = re.compile(r"\s*[\x00-\x1f\x7f]+\s*")


def clean_header(name: str) -> str:
    """A column name as stored: surrounding spaces dropped, and a line break or tab inside it one space.

    Spreadsheet exports wrap long headers (``"Arena Elo\\n[Feb 2, 2024]"``, AlpacaEval's benchmark
    table); a stored name may hold no line break (configs are written from them), so the header cell
    is read as the text it shows. Names without such characters are kept exactly.
    """
    return _HEADER_BREAK.sub(" ", name).strip()


def model_column(lower) -> int | None:
    """Index of the model column of a header (lower-cased cells), or None when it has none.

    Leaderboards do not all lead with the model: Chatbot Arena's tables start with the model
    ``key`` before ``Model``, others with ``Rank`` or ``#``. The first column named as a model
    (:data:`MODEL_HEADERS`) wins wherever it stands; failing that a ``name`` column
    (:data:`NAME_HEADERS`, AlpacaEval's leaderboards); failing that a column named as the system ranked
    (:data:`SYSTEM_HEADERS`: ParseBench's ``Provider``); failing that an unnamed first column,
    which is how pandas writes a table indexed by model (``df.to_csv()``: AlpacaEval's
    ``src/alpaca_eval/leaderboards`` files); :func:`_read_wide` refuses it when it holds only row numbers.
    """
    for names in (MODEL_HEADERS, NAME_HEADERS, SYSTEM_HEADERS):
        j = next((j for j, h in enumerate(lower) if h in names), None)
        if j is not None:
            return j
    return 0 if lower and lower[0] == "" and any(lower[1:]) else None


#: A score's spread written after it: ``85.2 ± 1.1``, ``85.2 (±1.1)``, ``85.2 +/- 1.1``, ``52.1 (-1.5, +1.7)``,
#: ``45.3 (0.8)``; the value before it is the score.
_SPREAD = re.compile(r"(?<=[\d.%])\s*(?:(?:\u00b1|\+/-|\+-)\s*\d[\d.]*\s*%?|\(\s*[\u00b1+\-]?\s*\d[\d.\s%,/+\-\u00b1]*\))$")


def _parse(cell: str):
    """``(value, percent)`` of a cell: ``None`` value when missing; raises ValueError when not a number.

    A spread after the value (:data:`_SPREAD`) is dropped: papers and leaderboards print scores as
    ``85.2 ± 1.1``, and a column of them read as text would be stored as model metadata, its scores
    lost. The spread is not kept as a standard error: a table rarely says whether it is one, a standard
    deviation or a confidence interval.
    """
    c = cell.strip().replace("\u2212", "-")
    if c.lower() in _MISSING:
        return None, False
    c = _SPREAD.sub("", c)
    pct = c.endswith("%")
    if pct:
        c = c[:-1].strip()
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?", c):
        c = c.replace(",", "")
    v = float(c)
    return v, pct


#: Reading option (``ingest --models-as-columns``): every CSV of the ingest has one row per dataset and one column
#: per model (:mod:`harness_ext.adapters.csv_transposed`); a file's sidecar says it with ``models: columns``.
MODELS_AS_COLUMNS = "models_as_columns"


# -- sidecar ------------------------------------------------------------------------------------
def read_sidecar(path) -> dict:
    """Parse a column-metadata sidecar (format in the module docstring); errors name the file."""
    from harness_ext.errors import SideFileError
    from harness_ext.safe_input import load_document

    p = Path(path)
    try:
        doc = load_document(p, "column metadata", "yaml")
    except SideFileError as exc:  # an IngestError fails the CSV it describes, with the sidecar named
        raise IngestError(p, exc.reason) from None
    doc = doc or {}
    if not isinstance(doc, dict):
        raise IngestError(p, "column metadata must be a mapping (benchmark, meta_columns, columns)")
    unknown = set(doc) - {"benchmark", "meta_columns", "columns", "items", "models"}
    if unknown:
        from harness_ext.store.item_format import ITEMS_KEYS

        nested = sorted(str(k) for k in unknown if k in ITEMS_KEYS)
        hint = (f" ({', '.join(nested)} {'goes' if len(nested) == 1 else 'go'} under items: in an item-response "
                "table's sidecar)") if nested else ""
        raise IngestError(p, f"unknown keys {sorted(map(str, unknown))}; expected benchmark, meta_columns, columns, "
                             f"items, models{hint}")
    if doc.get("models") not in (None, "rows", "columns"):
        raise IngestError(p, f"'models' must be rows (one row per model, the default) or columns (one column per "
                             f"model, one row per dataset), got {doc['models']!r}")
    cols = doc.get("columns") or {}
    if not isinstance(cols, dict) or not all(isinstance(v, dict) for v in cols.values()):
        raise IngestError(p, "'columns' must map each column name to a mapping of its properties")
    allowed = {"chance", "choices", "source", "higher_is_better", "scale", "min", "max", "metric", "dataset", "kind"}
    for name, spec in cols.items():
        bad = set(spec) - allowed
        if bad:
            raise IngestError(p, f"column {name!r}: unknown properties {sorted(map(str, bad))}; allowed: {sorted(allowed)}")
        if spec.get("kind") not in (None, "dataset", "aggregate", "metadata", "model"):
            raise IngestError(p, f"column {name!r}: kind must be dataset, aggregate, metadata or model (a table "
                                 "read with models: columns)")
        if spec.get("scale") not in (None, "proportion", "percent", "bounded", "elo", "perplexity", "log_likelihood", "unbounded"):
            raise IngestError(p, f"column {name!r}: unknown scale {spec.get('scale')!r}")
    if doc.get("benchmark") is not None and not isinstance(doc["benchmark"], str):
        raise IngestError(p, f"'benchmark' must be a name, got {type(doc['benchmark']).__name__}")
    meta = doc.get("meta_columns") or []
    if isinstance(meta, str):
        meta = [m.strip() for m in meta.split(",") if m.strip()]
    if not isinstance(meta, list) or not all(isinstance(m, (str, int, float)) for m in meta):
        raise IngestError(p, "'meta_columns' must be a list of column names (or one comma-separated string)")
    items = None
    if doc.get("items") is not None:  # the file is an item-response table (harness_ext.store.item_tables)
        from harness_ext.store.item_format import items_block

        items = items_block(doc["items"], p)
        if doc.get("benchmark"):
            items.setdefault("benchmark", str(doc["benchmark"]))
    return {"benchmark": doc.get("benchmark"), "models": doc.get("models"),
            "meta_columns": [clean_header(str(m)) for m in meta],
            "columns": {clean_header(str(k)): v for k, v in cols.items()}, "path": str(p), "items": items}


def column_meta(src: SourceFile) -> dict:
    """The sidecar for ``src`` merged over ``--column-meta`` and ``--meta-columns`` (the file's own wins)."""
    opts = getattr(src, "options", None) or {}
    merged = {"benchmark": None, "meta_columns": list(opts.get("meta_columns") or ()), "columns": {}, "path": None,
              "models": "columns" if opts.get(MODELS_AS_COLUMNS) else None}
    layers = []
    if opts.get("column_meta"):
        layers.append(read_sidecar(opts["column_meta"]))
    own = src.sidecars()
    if own:
        layers.append(read_sidecar(own[0]))
    for layer in layers:
        merged["benchmark"] = layer["benchmark"] or merged["benchmark"]
        merged["models"] = layer["models"] or merged["models"]
        merged["meta_columns"] += layer["meta_columns"]
        for c, spec in layer["columns"].items():
            merged["columns"].setdefault(c, {}).update(spec)
        merged["path"] = layer["path"]
    return merged


def _column_role(src, name: str, spec: dict, n_num: int, bad: list):
    """What a parsed column is: None (scores), ``"empty"`` (no value at all), or model metadata because its cells
    are ``"text"`` or its ``"name"`` describes the model (:data:`META_NAME`). A stray text cell in a numeric
    column is an error, unless the column's name describes the model: a parameter count that is ``unknown`` for a
    closed model (ScandEval's ``num_model_parameters``) is metadata whatever its cells."""
    by_name = spec.get("kind") is None and META_NAME.search(name)
    if bad:
        mostly_numeric = n_num / (n_num + len(bad)) >= MOSTLY_NUMERIC
        if spec.get("kind") in ("dataset", "aggregate") or (mostly_numeric and not by_name):
            row, cell = bad[0]
            raise IngestError(src.path, f"row {row}: {short_name(name)!r} score {short_name(cell)!r} is not a number (the column is "
                                        "otherwise numeric; fix the cell, or declare the column with --meta-columns)")
        return "name" if mostly_numeric else "text"  # a text column ("Model Family")
    if n_num == 0:  # no value in any row: no dataset, and no metadata either
        return "empty"
    return "name" if by_name else None


def _wide_column_meta(src, header, lower, cm=None) -> tuple:
    """``(column meta, per-column specs, declared metadata columns)``.

    Column metadata naming a column the file lacks is an error (a typo would silently not apply), unless the
    file is read as a subset of the columns its sidecar describes (:data:`SUBSET_OPTION`): then the names it
    lacks are noted, not refused. ``cm``: the column metadata to use instead of the file's (a table turned round,
    :mod:`harness_ext.adapters.csv_transposed`).
    """
    cm = column_meta(src) if cm is None else cm
    specs = cm["columns"]
    subset = bool((getattr(src, "options", None) or {}).get(SUBSET_OPTION))
    unknown = [c for c in specs if c not in header]
    missing_meta = [m for m in cm["meta_columns"] if m.strip().lower() not in set(lower)]
    if unknown and not subset:
        raise IngestError(cm["path"] or src.path, f"column metadata names columns not in {src.path.name}: {unknown}")
    as_model = [c for c, spec in specs.items() if spec.get("kind") == "model"]
    if as_model:
        raise IngestError(cm["path"] or src.path, f"kind: model ({listed(as_model, 6)}) is for a table read with "
                                                  "its models as the columns (models: columns); this one has a row "
                                                  "per model")
    if missing_meta and not subset:
        raise IngestError(src.path, f"--meta-columns names columns not in the file: {missing_meta}")
    absent = unknown + [m for m in missing_meta if m not in unknown]
    if absent:
        shown = listed(absent, 12)
        src.note(f"column metadata describes {len(absent)} column{'s' * (len(absent) != 1)} this file does not have "
                 f"(read as a subset of its columns): {shown}")
    declared_meta = {m.strip().lower() for m in cm["meta_columns"]}
    return cm, specs, declared_meta


def _candidate_columns(header, model_col, keys, specs, declared_meta, meta_cols):
    """``(index, name, sidecar spec)`` of the columns that may hold scores; declared metadata go to ``meta_cols``.

    ``keys``: the columns that key the rows besides the model (a ``benchmark`` column, a task column), never
    scores. A column without a name (a row index beside the model column, the empty column a trailing delimiter
    makes) is passed over: a score needs a dataset name, metadata a key.
    """
    for j, name in enumerate(header):
        if j == model_col or j in keys or not name:
            continue
        spec = specs.get(name, {})
        if spec.get("kind") == "metadata" or name.lower() in declared_meta:
            meta_cols.append(j)
            continue
        yield j, name, spec


def note_unnamed_columns(src, header, mc, cells_of) -> None:
    """Note the columns without a name that hold values: they are not read (a score needs a dataset name), and
    were left out without a word (a Chinese LLM benchmark's table gives each row its rank after the last named
    column). ``cells_of(j)``: column ``j``'s cells. An empty column (a trailing delimiter's) is passed over."""
    unnamed = []
    for j, name in enumerate(header):
        if j == mc or name:
            continue
        vals = [str(c).strip() for c in cells_of(j)]
        vals = [v for v in vals if v.lower() not in _MISSING]
        if vals:
            unnamed.append(f"column {j + 1} ({len(vals)} values: {listed(vals[:3], 3)}{', ...' * (len(vals) > 3)})")
    if unnamed:
        src.note(f"{plural(len(unnamed), 'column')} without a name in the header left out, not "
                 f"stored: {listed(unnamed, 6)}; name {'them' if len(unnamed) > 1 else 'it'} in the header to store "
                 f"{'them' if len(unnamed) > 1 else 'it'}")


def check_model_column(src, header, mc, models) -> None:
    """Refuse an unnamed first column that holds only row numbers (``df.to_csv()`` of a table not indexed by
    model): its numbers are no model names, and the file names no model column. A column read as the models
    because it names the systems ranked (:data:`SYSTEM_HEADERS`) is noted."""
    if header[mc].strip().lower() in SYSTEM_HEADERS:
        src.note(f"column {header[mc]!r} read as the models' names ({plural(len(models), 'row')}): the file names "
                 "no 'model' column; rename the column that names them to 'model' if another one does")
    if header[mc] or not all(re.fullmatch(r"\s*\d+\s*", m) for m in models):
        return
    raise IngestError(src.path, "no model column: the unnamed first column holds row numbers; name the model column "
                                f"one of {', '.join(MODEL_HEADERS + NAME_HEADERS)}")


def _dataset_metrics(header, score_cols, specs, empty=()) -> dict:
    """column -> (dataset, metric, primary).

    ``ipa_transliterate_2_exact_match`` and ``ipa_transliterate_2_bleu`` are two
    metrics of one task, not two datasets (a task reported with four metrics would
    otherwise weigh four times): columns ``<task>_<metric>`` (:data:`METRIC_SUFFIXES`)
    sharing a ``<task>`` with another column are that dataset's metrics, and the
    first in file order with a value is its primary one. A sidecar's ``dataset``/``metric`` win.
    The ``empty`` columns (no value in any row) count for the pairing, so a file's dataset names do not
    depend on which rows it has.
    """
    empty = set(empty)
    score_cols = sorted(set(score_cols) | empty)
    split = {}
    for j in score_cols:
        low = header[j].lower()
        suf = next((m for m in METRIC_SUFFIXES if low.endswith("_" + m) and len(low) > len(m) + 1), None)
        if suf:
            split[j] = (header[j][: -len(suf) - 1], header[j][-len(suf):])
    tasks: dict = {}
    for j, (task, _) in split.items():
        tasks.setdefault(task, []).append(j)
    out, seen = {}, set()
    for j in score_cols:
        spec = specs.get(header[j], {})
        if j in split and len(tasks[split[j][0]]) > 1:
            dataset, metric = split[j]
        else:
            dataset, metric = header[j], "score"
        dataset, metric = str(spec.get("dataset") or dataset), str(spec.get("metric") or metric)
        if j in empty:
            continue
        out[j] = (dataset, metric, dataset not in seen)
        seen.add(dataset)
    return out


def _chance(src, cm, name, spec, lo, hi):
    """Chance in the column's own units from the sidecar (``chance``) or a number of ``choices``."""
    if "chance" not in spec and "choices" not in spec:
        return None, None
    from harness_ext.store.scales import parse_chance

    where = f"column metadata for {name!r} ({cm['path'] or src.path})"
    if "choices" in spec:
        c, source = parse_chance({"choices": spec["choices"], "source": spec.get("source")}, where, "sidecar")
        if lo is None or hi is None:
            raise IngestError(cm["path"] or src.path, f"column {name!r}: 'choices' needs a bounded scale (give min/max or scale)")
        return lo + c * (hi - lo), source
    try:
        v = float(spec["chance"])
    except (TypeError, ValueError):
        raise IngestError(cm["path"] or src.path, f"column {name!r}: chance {spec['chance']!r} is not a number") from None
    return v, str(spec.get("source") or "csv sidecar")



def file_measure(src: SourceFile):
    """The word of the file's name that says its columns are costs (:data:`COST_FILE`), or None."""
    m = COST_FILE.search(src.path.stem)
    return m.group(1).lower() if m else None


def score_column(src: SourceFile, cm: dict, name: str, spec: dict, values, pct: bool, models, measure) -> dict:
    """The stored properties of one wide score column (both reading paths): scale and bounds, direction, chance.

    ``values``: the column's numbers (None or NaN: missing); ``pct``: a cell was written with ``%``;
    ``measure``: :func:`file_measure` of the file. In a file named as costs, a column without a declared scale,
    bounds or direction is lower-is-better on an open scale (``by_file_name`` in the result says so, for the
    note); one with any of them declared is read as declared.
    """
    from harness_ext.store.scales import infer_scale  # numpy: not imported to register the adapter

    hint = spec.get("scale") or ("percent" if pct or "%" in name else None)
    hib = spec.get("higher_is_better")
    by_file_name = bool(measure) and hint is None and hib is None and spec.get("min") is None and spec.get("max") is None
    if by_file_name:
        hint, hib = "unbounded", False
    present = [v for v in values if v is not None and v == v]
    scale, lo, hi = infer_scale(present, name=name, metric=spec.get("metric") or "",
                                declared_lo=spec.get("min"), declared_hi=spec.get("max"), hint=hint)
    check_column_scale(src, name, values, models, scale, lo, hi, hint)
    hib = False if hib is None and LOWER_NAME.search(name) else hib
    rb, rb_src = _chance(src, cm, name, spec, lo, hi)
    return dict(scale=scale, min_score=lo, max_score=hi, higher_is_better=None if hib is None else bool(hib),
                random_baseline=rb, baseline_source=rb_src, by_file_name=by_file_name)


def check_column_scale(src: SourceFile, name: str, values, models, scale: str, lo, hi, hint) -> None:
    """Refuse a score outside its column's scale, and note a column read as percentages from one value.

    A sidecar's ``scale: proportion`` (or ``min``/``max``) bounds the column: a value outside them is an error
    naming the model, where it was stored as it was and normalised past the scale's end. The scale rule reads a
    column with one value above 1 as percentages, so proportions with one stray percentage (0.5, 0.6, 40) become
    0.5% ... 40%: the one value decides for every other, which is said with the counts when most values are at
    most 1. A column whose values all lie between 1 and 10 is said too: it is more often a rating on a smaller
    scale (a judge's 0-10 mean) than percentages.

    Raises
    ------
    IngestError
        For a value outside ``[lo, hi]`` (a relative 1e-9 allowed for rounding).
    """
    v = [(float(x), m) for x, m in zip(values, models) if x is not None and x == x]
    if lo is not None and hi is not None and v:
        slack = 1e-9 * max(1.0, abs(hi - lo))
        out = [(x, m) for x, m in v if x < lo - slack or x > hi + slack]
        if out:
            x, m = out[0]
            raise IngestError(src.path, f"column {name!r}: {m!r} scores {x:g}, outside the column's {scale} scale "
                                        f"[{lo:g}, {hi:g}]" + (f" ({len(out)} values outside)" if len(out) > 1 else ""))
    if scale != "percent" or hint is not None:
        return
    above = [x for x, _ in v if x > 1]
    small = len(v) - len(above)
    if len(v) >= 2 and not small and max(above) <= 10:
        # Percentages all at most 10 are rarer than a rating on a 0-10 or 1-5 scale (a judge's mean, MT-bench's
        # score), which the rule also reads as percentages: 5.46 of 10 stored as 5.46%.
        src.note(f"column {name!r} read as percentages (0-100), though all {len(v)} of its values lie between 1 and "
                 f"10 ({min(above):g} to {max(above):g}): if it is a rating on a smaller scale, a sidecar's "
                 f"'{{min: 0, max: 10}}' (or its own bounds) for it reads it so")
    if above and small * 2 > len(v):
        src.note(f"column {name!r} read as percentages (0-100) because {len(above)} of its {len(v)} values "
                 f"{'is' if len(above) == 1 else 'are'} above 1 (largest {max(above):g}), though {small} are at most "
                 f"1: if it holds proportions, a sidecar's 'scale: proportion' for it reads them so (and refuses "
                 f"the values above 1)")
