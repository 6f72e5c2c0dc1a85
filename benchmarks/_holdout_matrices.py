"""The matrices ``quality_holdout.py`` measures: the shared real ones, and any a user holds.

:func:`load_matrices` builds the shared matrices (:data:`SOURCES`) through the store. :func:`load_user_matrices`
builds a user's own: leaderboard files ingested by the product's own ``ingest`` into a throw-away store (one
matrix per benchmark, named as ``ingest`` names it from the file or its sidecar), or the benchmarks of a store
the user already filled (``harness-ext ingest ... --db DB``). Either way the matrix is the store's
(:func:`harness_ext.store.matrix.load_matrix`, raw scores, missing cells missing, aggregate columns left out)
with each dataset's metadata (declared range, chance, direction), as for the shared matrices.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from _common import SHARED_DATA as SHARED  # one definition of where the shared data is

EEE = SHARED / "every_eval_ever" / "data"
BENCHBENCH = SHARED / "benchbench" / "leaderboards"
MIN_MODELS = 30

#: name -> (path to ingest, MatrixQuery kwargs)
SOURCES = {
    "helm_classic": (EEE / "helm_classic", dict(benchmarks=("helm_classic",))),
    "open_llm_v2": (EEE / "hfopenllm_v2", dict(benchmarks=("hf_open_llm_v2",))),
    "crosspred": (SHARED / "crosspred-lvlm" / "data", dict(benchmarks=("crosspred",))),
    "pythia_mmlu": (SHARED / "pythia-evals" / "evals", dict(benchmarks=("mmlu",), rows="run")),
    "tsc_bakeoff": (SHARED / "tsml-eval-tsc-bakeoff", dict(metric="accuracy")),
    "benchbench": (BENCHBENCH, None),
}
QUICK = ("helm_classic", "tsc_bakeoff")


def column_meta(raw) -> list:
    """Per column of a store matrix (:func:`~harness_ext.store.matrix.load_matrix`): its declared range, chance
    and direction, from ``raw.attrs["datasets"]`` (None where the store has none)."""
    md = raw.attrs.get("datasets", {})
    return [{"min_score": md.get(c, {}).get("min_score"), "max_score": md.get(c, {}).get("max_score"),
             "random_baseline": md.get(c, {}).get("random_baseline"),
             "higher_is_better": md.get(c, {}).get("higher_is_better"),
             # the store's whole record (what its normalisation reads), for quality_holdout --fit store
             "store": {k: v for k, v in md[c].items() if k != "normalisation"} if c in md else None}
            for c in raw.columns]


def _float_frame(raw):
    """``raw`` as a plain float DataFrame with string labels (the protocols' input)."""
    import pandas as pd

    return pd.DataFrame(raw.to_numpy(dtype=float), index=[str(i) for i in raw.index],
                        columns=[str(c) for c in raw.columns])


def _keep(out, name, raw, meta, t, verbose):
    """Add ``name`` to ``out`` if it has :data:`MIN_MODELS` models, saying so either way."""
    if raw.shape[0] < MIN_MODELS:
        print(f"  {name}: {raw.shape[0]} models < {MIN_MODELS}, skipped", file=sys.stderr)
        return
    out[name] = (raw, meta)
    if verbose:
        print(f"  loaded {name}: {raw.shape[0]} x {raw.shape[1]}, {np.isnan(raw.to_numpy()).mean():.1%} missing "
              f"({time.perf_counter() - t:.1f} s)", file=sys.stderr, flush=True)


def load_matrices(names, db=None, verbose=True):
    """``{name: (raw DataFrame, per-column metadata list)}`` built through the store."""
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.matrix import MatrixQuery, load_matrix, query_results

    out = {}
    for name in names:
        path, q = SOURCES[name]
        if not path.exists():
            print(f"  {name}: {path} not found, skipped", file=sys.stderr)
            continue
        # One store per matrix: model identities are resolved over a store's whole contents, so a
        # matrix must not depend on which other matrices the same run asked for.
        file = str(Path(db).with_name(f"{Path(db).stem}.{name}{Path(db).suffix or '.duckdb'}")) if db else ":memory:"
        with Store.open(file) as store:
            have = set()
            if db:  # a reused store: ingest only what it lacks
                have = set(store.benchmarks()["benchmark"])
                if store._has_table("benchmark_groups"):
                    have |= {r[0] for r in store.con.execute("SELECT name FROM benchmark_groups").fetchall()}
            t = time.perf_counter()
            if name == "benchbench":
                if "benchbench" not in have:
                    ingest_paths(store, [path], show_progress=False, group="benchbench")
                # One row per canonical model id: the store's alias table joins the leaderboards' spellings.
                long = query_results(store, MatrixQuery(benchmarks=("benchbench",)))
                long = long.assign(column=long["benchmark"] + "/" + long["dataset"])
                raw = long.pivot_table(index="model", columns="column", values="value", aggfunc="first")
                for _ in range(3):  # keep models with >= 3 cells and columns with >= 10 models (fixed point)
                    raw = raw.loc[raw.notna().sum(axis=1) >= 3, raw.notna().sum(axis=0) >= 10]
                meta = [{} for _ in raw.columns]
            else:
                query = MatrixQuery(normalise="none", **q)
                try:
                    raw = load_matrix(store, query)
                except Exception:  # noqa: BLE001 - not ingested yet
                    ingest_paths(store, [path], show_progress=False)
                    raw = load_matrix(store, query)
                meta = column_meta(raw)
            _keep(out, name, _float_frame(raw), meta, t, verbose)
    return out


def ingest_user_files(store, files, verbose=True) -> list:
    """Ingest a user's leaderboard ``files`` into ``store`` as ``harness-ext ingest FILE`` does; the benchmarks
    they hold, in the store's order. Each note ``ingest`` makes on how a file was read is printed (what it stored
    as aggregates or model metadata, what it left out); a file ``ingest`` skips or stores nothing from is an
    error naming it and the reason."""
    from harness_ext.store.ingest import ingest_paths

    missing = [str(f) for f in files if not Path(f).exists()]
    if missing:
        raise SystemExit(f"quality_holdout: --csv: no such file: {', '.join(missing)}")
    report = ingest_paths(store, [Path(f) for f in files], show_progress=False)
    for f in report.files:
        if f.status == "skipped" or (f.status == "ingested" and not f.n_results):
            raise SystemExit(f"quality_holdout: --csv: {f.path}: {f.reason or 'no results read'}")
        for note in f.notes if verbose else ():
            print(f"  note: {Path(f.path).name}: {note}", file=sys.stderr)
    if verbose:
        print(f"  ingested: {report.summary()}", file=sys.stderr)
    return list(store.benchmarks()["benchmark"])


def load_user_matrices(csv=(), store=None, benchmarks=(), verbose=True):
    """``{benchmark: (raw DataFrame, per-column metadata list)}`` of a user's own leaderboards, as
    :func:`load_matrices` gives the shared ones: one matrix per benchmark.

    ``csv``: files (or folders) ingested by the product's ``ingest`` into a throw-away in-memory store; the
    benchmarks are the ones ``ingest`` names from each file (its name, or its sidecar's ``benchmark:``).
    ``store``: a store the user filled, opened read-only; ``benchmarks``: which of its benchmarks (or groups)
    to measure (default: every benchmark in it, each on its own). The matrix is the store's own
    (aggregate columns left out, aliases applied), raw scores.
    """
    from harness_ext.store.db import Store

    if bool(csv) == bool(store):
        raise SystemExit("quality_holdout: give either --csv FILE[,FILE...] or --store DB (with --benchmark NAME)")
    if store and not Path(store).exists():
        raise SystemExit(f"quality_holdout: --store: no such store file: {store}")
    out = {}
    with Store.open(":memory:" if csv else str(store), read_only=not csv) as st:
        have = ingest_user_files(st, csv, verbose) if csv else list(st.benchmarks()["benchmark"])
        for name in benchmarks or have:
            _user_matrix(out, st, name, have, verbose)
    return out


def _user_matrix(out, store, name, have, verbose):
    """Add benchmark (or group) ``name`` of ``store`` to ``out`` (:func:`load_user_matrices`)."""
    from harness_ext.store.matrix import MatrixQuery, load_matrix

    t = time.perf_counter()
    try:
        raw = load_matrix(store, MatrixQuery(benchmarks=(name,), normalise="none"))
    except Exception as exc:  # noqa: BLE001 - one clear message naming the benchmark
        raise SystemExit(f"quality_holdout: benchmark {name!r}: {exc} (the store holds: {', '.join(have)})")
    _keep(out, name, _float_frame(raw), column_meta(raw), t, verbose)
