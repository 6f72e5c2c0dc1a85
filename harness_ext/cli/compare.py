"""The ``compare`` command: selectors under the rank-preservation protocol (:mod:`harness_ext.methods.compare`).

Options are in :mod:`harness_ext.cli.options`; this module reads the matrix and the optional
features file, runs :func:`~harness_ext.methods.compare.run_protocol`, shows the
:class:`~harness_ext.methods.compare.ProtocolResult` and writes its tables and plot to ``--out``.
"""

from __future__ import annotations

from pathlib import Path

from ..safe_output import csv_text, write_file


def read_features(path, columns):
    """Read a dataset x feature CSV (first column: dataset name) aligned to ``columns``.

    Non-numeric feature columns are dropped and rows of datasets not in the matrix
    are not used, each said in a warning with its count. Every dataset of the matrix
    must have a row. Empty cells are allowed (the selectors fill them with the
    feature's mean); infinite values are an error.
    """
    import logging

    import numpy as np
    import pandas as pd

    from ..errors import HarnessExtError

    try:
        df = pd.read_csv(path, index_col=0)
    except (OSError, ValueError) as exc:
        raise HarnessExtError(f"cannot read features CSV {path}: {exc}") from exc
    df.index = df.index.astype(str).str.strip()
    num = df.select_dtypes(include=[np.number])
    if num.shape[1] == 0:
        raise HarnessExtError(f"features CSV {path} has no numeric columns")
    if num.index.duplicated().any():
        dup = num.index[num.index.duplicated()].unique()[:5].tolist()
        raise HarnessExtError(f"features CSV {path} lists datasets more than once: {dup}")
    missing = [c for c in columns if c not in num.index]
    if missing:
        raise HarnessExtError(f"features CSV {path} has no row for {len(missing)} dataset(s) of the matrix, e.g. {missing[:5]}")
    from ..report import listed

    log = logging.getLogger("harness_ext.compare")
    text = [c for c in df.columns if c not in num.columns]
    if text:
        log.warning(f"features CSV {path}: {len(text)} non-numeric column(s) not used: {listed(text, 5)}")
    wanted = set(columns)
    extra = [r for r in num.index if r not in wanted]
    if extra:
        log.warning(f"features CSV {path}: {len(extra)} row(s) of datasets not in the matrix not used: "
                    f"{listed(extra, 5)}")
    F = num.loc[list(columns)].to_numpy(dtype=float)
    bad = np.isinf(F).any(axis=1)
    if bad.any():
        names = [c for c, b in zip(columns, bad) if b][:5]
        raise HarnessExtError(f"features CSV {path} has infinite values for {int(bad.sum())} dataset(s), e.g. {names}")
    return F


def run(args) -> int:
    from ..errors import HarnessExtError
    from ..methods.compare import DEFAULT_TARGETS, parse_target, run_protocol
    from .matrix import oriented_matrix
    from .options import given_options, matrix_from_args
    from .output import emit

    df = matrix_from_args(args, fingerprint=False)
    if df.isna().any().any():
        n = int(df.isna().sum().sum())
        raise HarnessExtError(f"the matrix has {n} missing cells; the protocol needs a complete matrix (add --dense)")
    df = oriented_matrix(df, "compare")
    features = read_features(args.features, df.columns) if args.features else None
    if features is not None and given_options(args, ("--representation",)):
        import logging

        logging.getLogger("harness_ext.compare").warning(
            f"--representation {args.representation} not used: with --features the selectors see the features")
    targets = tuple(args.target or DEFAULT_TARGETS)
    for t in targets:
        parse_target(t)
    res = run_protocol(df.to_numpy(dtype=float), args.selectors, features=features, trials=args.trials, k_max=args.k_max,
                       alpha=args.alpha, variation=args.variation, metrics=args.metrics, seed=args.seed,
                       n_jobs=args.n_jobs, ci=args.ci, representation=args.representation)
    res.targets = targets
    res.features_source = str(args.features) if features is not None else None
    res.params["benchmark"] = ", ".join(args.benchmark or []) or None
    emit(args, res)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = res.tables()
    write_file(out / "curves.csv", csv_text(tables["curves"], index=False))
    write_file(out / "auc.csv", csv_text(tables["auc"]))
    write_file(out / "kstar.csv", csv_text(tables["kstar"], index=False))
    write_file(out / "significance.csv", csv_text(tables["significance"], index=False))
    png = res.plot(out / "compare_curves.png")
    print(f"\nwrote {png} and curves.csv, auc.csv, kstar.csv, significance.csv (all selectors vs the best) to {out}")
    return 0
