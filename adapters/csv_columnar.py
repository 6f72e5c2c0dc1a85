"""Large CSV tables read column by column with pyarrow (the rules are :mod:`harness_ext.adapters.csv_table`'s).

A wide leaderboard becomes :class:`~harness_ext.types.ColumnarResults` (models x columns arrays), a
long table :class:`~harness_ext.store.columnar.ColumnarCells` (one row per cell as arrays), so a
table of tens of millions of results never becomes a Python object per cell.
"""

from __future__ import annotations


from harness_ext.adapters.csv_rules import (
    _BOOL, _MISSING, _candidate_columns, _dataset_metrics, _parse, _wide_column_meta, check_model_column, clean_header,
    file_measure, model_column, note_unnamed_columns, score_column)
from harness_ext.adapters.csv_columns import (
    WideColumns, classify_wide, report_file_measure, report_repeated_models, drop_scoreless_rows,
    strip_footnote_marks)
from harness_ext.adapters.csv_keys import bound_columns, constant_columns, entrant_column
from harness_ext.adapters.csv_reference import (
    apply_reference, long_reference, long_reference_models, note_reference, reference_kind, split_reference_rows)
from harness_ext.errors import IngestError
from harness_ext.safe_input import csv_rows
from harness_ext.safe_output import short_name
from harness_ext.types import SUBSET_OPTION, SourceFile


def _first_row(src: SourceFile, delim: str):
    """The header's column names (:func:`csv_table.clean_header`), or None when a quoted header cell spans lines.

    pyarrow is handed these names and told to skip one line, so a header over several lines goes to the
    record path, which reads it whole.
    """
    with open(src.path, "rb") as fh:
        line = fh.readline()
    text = line.decode("utf-8").lstrip("\ufeff").rstrip("\r\n")
    if text.count('"') % 2:
        return None
    return [clean_header(h) for h in (csv_rows(text, delim, src.path) or [[]])[0]]


def _check_nul(src: SourceFile) -> None:
    with open(src.path, "rb") as fh:
        for block in iter(lambda: fh.read(16 << 20), b""):
            if b"\0" in block:
                raise IngestError(src.path, "contains NUL bytes: not a text CSV")


def _parse_column(arr, n_rows: int):
    """``(values float64 with NaN for missing, percent, bad, marked)`` of one string column; bad lists (row, cell),
    marked the non-empty cells read as missing ("-", "n/a")."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    stripped = pc.utf8_trim_whitespace(arr)
    missing = pc.is_in(pc.utf8_lower(stripped), value_set=pa.array(sorted(_MISSING)))
    marked = pc.filter(stripped, pc.and_(missing, pc.not_equal(stripped, ""))).to_pylist()
    try:
        vals = pc.cast(pc.if_else(missing, pa.scalar(None, pa.string()), stripped), pa.float64())
        out = vals.to_numpy(zero_copy_only=False)
        return (np.where(np.isnan(out) & ~missing.to_numpy(zero_copy_only=False), np.nan, out).astype(float), False, [],
                marked)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    out = np.full(n_rows, np.nan)
    pct_any, bad = False, []
    for i, cell in enumerate(arr.to_pylist()):
        try:
            v, pct = _parse(cell)
        except ValueError:
            bad.append((i + 2, cell))
            continue
        if v is not None:
            out[i] = v
            pct_any = pct_any or pct
    return out, pct_any, bad, marked


def _read_wide_columnar(src: SourceFile, header, lower, stem, delim):
    """A large wide CSV as :class:`~harness_ext.types.ColumnarResults`, with the rules of :func:`_read_wide`."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from harness_ext.types import ColumnarResults

    _check_nul(src)
    cm, specs, declared_meta = _wide_column_meta(src, header, lower)
    names = [f"c{j}" for j in range(len(header))]
    try:
        table = pcsv.read_csv(
            src.path, read_options=pcsv.ReadOptions(column_names=names, skip_rows=1, block_size=64 << 20),
            parse_options=pcsv.ParseOptions(delimiter=delim, newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in names}, strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise IngestError(src.path, f"cannot read as a CSV table: {str(exc).splitlines()[0]}") from None
    mc = entrant_column(src, header, lower, model_column(lower), lambda j, t=table: t.column(j).to_pylist())
    models = [m.strip() for m in table.column(mc).to_pylist()]
    keep = [i for i, m in enumerate(models) if m]
    if len(keep) < len(models):  # a row without a model name: empty lines are passed over, others are errors
        blank = [i for i, m in enumerate(models) if not m]
        row_text = [any(str(table.column(j)[i]).strip() for j in range(len(names)) if j != mc) for i in blank[:50]]
        if any(row_text):
            raise IngestError(src.path, f"row {blank[row_text.index(True)] + 2} has no model name")
        table = table.take(pa.array(keep))
        models = [models[i] for i in keep]
    models = strip_footnote_marks(src, models)
    n = len(models)
    if not n:
        raise IngestError(src.path, "no data rows")
    check_model_column(src, header, mc, models)
    note_unnamed_columns(src, header, mc, lambda j: table.column(j).to_pylist())
    bench_col = lower.index("benchmark") if "benchmark" in lower else None
    cols, parsed = WideColumns(), {}
    for j, name, spec in _candidate_columns(header, mc, {bench_col}, specs, declared_meta, cols.meta):
        vals, pct, bad, marked = _parse_column(table.column(j), n)
        if np.isinf(vals).any():
            row = int(np.nonzero(np.isinf(vals))[0][0])
            raise IngestError(src.path, f"row {row + 2}: {name!r} score is {short_name(table.column(j)[row])}, not finite")
        if cols.add(src, j, name, spec, int(np.count_nonzero(~np.isnan(vals))), bad, marked):
            parsed[j] = (vals, pct)
    cols.demote(bound_columns(header, cols.scores, specs), header, "bound")
    cols.demote(constant_columns(header, cols.scores, specs, lambda j: parsed[j][0]), header, "constant")
    meta_cols, score_cols, empty = cols.meta, cols.scores, cols.empty
    if not score_cols:
        raise IngestError(src.path, cols.no_scores(header, src.options.get(SUBSET_OPTION)))
    values = np.empty((n, len(score_cols)))
    pct_of = {j: parsed[j][1] for j in score_cols}
    for k, j in enumerate(score_cols):
        values[:, k] = parsed.pop(j)[0]  # one copy of the scores at a time
    # rows that are not models (a chance baseline, a human reference): kept apart, by column
    keep, refs, ref_rows = split_reference_rows(src, models, range(len(score_cols)), lambda k, i: values[i, k])
    if keep is not None:
        values, models = values[keep], [models[i] for i in keep]
    values, models, keep = drop_scoreless_rows(src, models, values, keep)  # as the record reader: nothing stored
    aggregates = classify_wide(src, header, cols, specs, stem, cm, values)
    dnames = _dataset_metrics(header, score_cols, specs, empty)
    metas = _row_metadata(table, meta_cols, header, n)
    benches = [b.strip() for b in table.column(bench_col).to_pylist()] if bench_col is not None else None
    del table
    if keep is not None:
        metas = [metas[i] for i in keep]
        benches = None if benches is None else [benches[i] for i in keep]
    report_repeated_models(src, models, metas, benches)
    columns, measure, by_file_name, tally = [], file_measure(src), [], {}
    for k, j in enumerate(score_cols):
        name = header[j]
        col = score_column(src, cm, name, specs.get(name, {}), values[:, k].tolist(), pct_of[j], models, measure)
        if col.pop("by_file_name"):
            by_file_name.append(name)
        ref_meta = apply_reference(col, refs.get(k, []), tally, name)
        columns.append(dict(
            benchmark=cm["benchmark"] or stem, dataset=dnames[j][0], metric=dnames[j][1], primary=dnames[j][2], **col,
            aggregate=j in aggregates, dataset_metadata={"column": name, "scale_detected": col["scale"], **ref_meta}))
    report_file_measure(src, measure, by_file_name)
    note_reference(src, ref_rows, tally)
    if benches is not None:  # a benchmark column: one block of columns per benchmark named in it
        return _split_by_benchmark(models, metas, columns, values, benches)
    return ColumnarResults(models=models, model_metadata=metas, columns=columns, values=values)


def _row_metadata(table, meta_cols, header, n: int) -> list:
    """Each row's model metadata: its cells in the metadata columns, numbers parsed, empty cells left out."""
    metas = [{} for _ in range(n)]
    for j in meta_cols:
        for i, cell in enumerate(table.column(j).to_pylist()):
            try:
                v, _ = _parse(cell)
            except ValueError:
                v = cell.strip()
            if v is not None:
                metas[i][header[j]] = v
    return metas


#: Long-table columns read as text and as numbers by :func:`_read_long_columnar`.
_LONG_TEXT = ("model", "dataset", "benchmark", "metric", "higher_is_better", "scale", "kind")
_LONG_NUMBERS = ("value", "stderr", "n_samples", "num_fewshot", "random_baseline", "min_score", "max_score")
#: Bytes of a long CSV that pyarrow parses per block. Its threads read ahead several blocks, and a long
#: table's text blocks are the large part of the read: at 64 MB, 10M results (50,000 x 200) peaked at 1.0-1.6 GB
#: from run to run (as the read-ahead fell), at 16 MB at 1.2-1.3 GB, in the same time (the target: under 1.5 GB).
LONG_BLOCK_BYTES = 16 << 20


def _read_long_columnar(src: SourceFile, header, lower, stem, delim):
    """A large long CSV as :class:`~harness_ext.store.columnar.ColumnarCells`, with the rules of :func:`_read_long`.

    Text columns are read dictionary-encoded and numbers as float64 by pyarrow, so a 10-million-row
    file never becomes a Python object per cell. Returns None when a row needs the record path's
    checks (a blank or malformed row, a missing or non-finite number, an unknown kind, a shot count out
    of range): :func:`_read_long` then reads the file and names the row.
    """
    import numpy as np
    import pandas as pd

    from harness_ext.store.columnar import ColumnarCells

    read = _read_long_arrays(src, header, lower, delim)
    if read is None:
        return None
    nums, text = read
    m_codes, m_uniq = text["model"]
    d_codes, d_uniq = text["dataset"]
    if (m_uniq == "").any() or (d_uniq == "").any():
        return None
    if "kind" in text:
        kinds = [k.lower() or "dataset" for k in text["kind"][1]]
        if any(k not in ("dataset", "aggregate") for k in kinds):
            return None
    shots = nums.get("num_fewshot")
    if shots is not None:
        shots = np.trunc(shots)
        if ((shots < 0) | (shots >= 2**31)).any():  # NaN (no shot count) compares False: -1 below
            return None
        shots = np.where(np.isnan(shots), -1, shots).astype(np.int32)
    n_samples = nums.get("n_samples")
    if n_samples is not None:
        n_samples = np.trunc(n_samples)
        n_samples[(n_samples < 0) | (n_samples >= 2**63)] = np.nan  # dropped, as ResultRecord.validate drops it
    # rows named as a reference (a chance baseline, a human) are not models: their cells kept apart, by dataset
    ref = _long_reference_cells(src, nums, text, stem)
    if ref is not None:
        nums, text, kinds, ref_cells = ref
        m_codes = text["model"][0]
    # Rows in order of each model's first appearance, columns of each (benchmark, dataset, metric)'s.
    row, first_rows = pd.factorize(m_codes)
    col, columns = _long_column_specs(nums, text, stem)
    if ref is not None:
        _apply_long_reference(src, columns, kinds, ref_cells)
    models = [str(m) for m in m_uniq[first_rows]]
    return ColumnarCells(models=models, model_metadata=[{}] * len(models), columns=columns, row=row, col=col,
                         value=nums["value"], num_fewshot=shots, stderr=nums.get("stderr"), n_samples=n_samples)


def _long_reference_cells(src: SourceFile, nums: dict, text: dict, stem: str):
    """``(numbers, text of the model rows, {reference model: kind}, reference cells)`` of a long table's arrays
    (:func:`~harness_ext.adapters.csv_reference.long_reference`), or None when no row is a reference row."""
    import numpy as np
    import pandas as pd

    m_codes, m_uniq = text["model"]
    if not any(reference_kind(str(m)) for m in m_uniq):  # one look per distinct name: nothing more for most tables
        return None
    _, first = pd.factorize(m_codes)  # names in order of first appearance, as the record path sees them
    kinds = long_reference_models(src, [str(m) for m in m_uniq[first]])
    if not kinds:
        return None
    is_ref = np.isin(m_codes, [i for i, m in enumerate(m_uniq) if str(m) in kinds])
    ref_cells = []
    for i in np.flatnonzero(is_ref).tolist():
        key = tuple(text[c][1][text[c][0][i]] if c in text else "" for c in ("benchmark", "dataset", "metric"))
        key = (key[0] or stem, key[1], key[2] or "score")
        ref_cells.append((key, str(m_uniq[m_codes[i]]), float(nums["value"][i])))
    keep = ~is_ref
    return ({c: a[keep] for c, a in nums.items()}, {c: (codes[keep], u) for c, (codes, u) in text.items()}, kinds,
            ref_cells)


def _apply_long_reference(src: SourceFile, columns: list, kinds: dict, ref_cells: list) -> None:
    """The chance levels and reference scores the reference rows give the columns (changed in place), noted."""
    keys = [(c["benchmark"], c["dataset"], c["metric"]) for c in columns]
    given = long_reference(src, kinds, ref_cells, {k: c["random_baseline"] for k, c in zip(keys, columns)})
    for k, c in zip(keys, columns):
        chance, source, meta = given.get(k, (None, None, None))
        if chance is not None:
            c["random_baseline"], c["baseline_source"] = chance, source
        if meta:
            c["dataset_metadata"] = meta


def _read_long_arrays(src: SourceFile, header, lower, delim):
    """``(numbers, text)`` columns of a long CSV read by pyarrow (text as ``(codes, distinct stripped values)``),
    or None when a row needs the record path's checks."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if len(set(lower)) != len(lower):
        return None
    names = [f"c{j}" for j in range(len(header))]
    idx = {c: j for j, c in enumerate(lower) if c in _LONG_TEXT or c in _LONG_NUMBERS}
    if len(idx) < len(header):  # a column not read here could hide a NUL byte; else the cells are checked below
        _check_nul(src)
    types = {names[j]: pa.dictionary(pa.int32(), pa.string()) if c in _LONG_TEXT else pa.float64() for c, j in idx.items()}
    try:
        table = pcsv.read_csv(
            src.path, read_options=pcsv.ReadOptions(column_names=names, skip_rows=1, block_size=LONG_BLOCK_BYTES),
            parse_options=pcsv.ParseOptions(delimiter=delim, newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=[names[j] for j in idx.values()],
                                                null_values=[""], strings_can_be_null=False,
                                                quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    n = table.num_rows
    if not n:
        return None
    nums, text = {}, {}
    for c, j in idx.items():
        col = table.column(names[j])
        if c in _LONG_NUMBERS:
            a = col.to_numpy()  # float64, NaN where the cell was empty
            present = a if c == "value" else a[~np.isnan(a)]  # a score is required, the others optional
            if col.null_count and c == "value" or not np.isfinite(present).all():
                return None  # an empty score, or inf/nan written out: the record path's error names the row
            nums[c] = a
        else:
            arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
            distinct = arr.dictionary.to_pylist()
            if any("\0" in v for v in distinct):  # (a NUL in a number fails its parse above)
                raise IngestError(src.path, "contains NUL bytes: not a text CSV")
            # Cells are stripped as the record path strips them; a padded and an unpadded name are one name.
            codes, uniq = pd.factorize(np.array([v.strip() for v in distinct], dtype=object))
            text[c] = (codes[arr.indices.to_numpy()], uniq)
        table = table.drop_columns([names[j]])  # one column's memory at a time
    del table
    return nums, text


def _long_column_specs(nums, text, stem):
    """Each cell's column code and the columns' metadata, in the order of each (benchmark, dataset, metric)'s
    first row."""
    import numpy as np
    import pandas as pd

    d_codes, d_uniq = text["dataset"]
    key = d_codes.astype(np.int64)
    for c in ("metric", "benchmark"):
        if c in text:
            key = key * len(text[c][1]) + text[c][0]
    col, _ = pd.factorize(key)
    first = pd.Series(col).drop_duplicates().index.to_numpy()  # each column's first row, in code order

    def at(c, i, default=None):
        if c in text:
            v = text[c][1][text[c][0][i]]
            return v if v != "" else default
        if c in nums:
            v = nums[c][i]
            return None if np.isnan(v) else float(v)
        return default

    columns, first_metric = [], {}
    for i in first.tolist():
        bench, dataset, metric = at("benchmark", i) or stem, d_uniq[d_codes[i]], at("metric", i) or "score"
        hib, rb = at("higher_is_better", i), at("random_baseline", i)
        columns.append(dict(
            benchmark=bench, dataset=dataset, metric=metric,
            primary=first_metric.setdefault((bench, dataset), metric) == metric,
            higher_is_better=_BOOL.get(hib.lower()) if hib else None, random_baseline=rb,
            baseline_source="csv column" if rb is not None else None, min_score=at("min_score", i),
            max_score=at("max_score", i), scale=at("scale", i), aggregate=(at("kind", i) or "").lower() == "aggregate"))
    return col, columns


def _split_by_benchmark(models, metas, columns, values, benches):
    import numpy as np

    from harness_ext.types import ColumnarResults

    names = sorted(set(benches))
    rows = {b: np.array([i for i, x in enumerate(benches) if x == b]) for b in names}
    out_cols, blocks = [], []
    for b in names:
        for c in columns:
            out_cols.append({**c, "benchmark": b})
        block = np.full((len(models), len(columns)), np.nan)
        block[rows[b]] = values[rows[b]]
        blocks.append(block)
    return ColumnarResults(models=models, model_metadata=metas, columns=out_cols, values=np.hstack(blocks))
