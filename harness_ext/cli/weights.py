"""The ``weights`` command: options are in :mod:`harness_ext.cli.options`; this module loads the
matrix, runs the analyses of :mod:`harness_ext.methods.weighting`, prints their tables and writes
the plots, CSV tables, ``summary.json`` and the ``--emit-weights`` file.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import HarnessExtError, MethodError
from ..report import dumps


def _parse_params(items) -> dict:
    import yaml

    out = {}
    for item in items or ():
        if "=" not in item:
            raise HarnessExtError(f"--param needs KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


def _load(args) -> tuple:
    if args.samples and not args.samples_task:
        raise HarnessExtError("--samples needs --samples-task TASK (which lm-eval task to analyse)")
    from ..methods.weighting import read_prompt_matrix, samples_matrix

    if args.samples_task:
        from ..store.db import Store

        if args.samples:
            from ..store.samples import ingest_samples

            with Store.open(":memory:") as store:
                report = ingest_samples(store, args.samples)
                for f in report.by_status("skipped"):
                    print(f"skipped {f.path}: {f.reason}")
                df = samples_matrix(store, args.samples_task, args.samples_metric, args.models)
            where = f"lm-eval per-sample logs under {', '.join(args.samples)}"
        else:
            with Store.open(args.db, read_only=True) as store:
                df = samples_matrix(store, args.samples_task, args.samples_metric, args.models)
            where = "the store's samples table"
        dropped = df.attrs["n_dropped_prompts"]
        return df, (f"prompt-level {args.samples_task} ({args.samples_metric}) from {where}"
                    + (f"; {dropped} prompts not answered by every model dropped" if dropped else ""))
    if args.prompts:
        return read_prompt_matrix(args.prompts, args.prompts_layout), f"prompt-level CSV {args.prompts}"
    from .options import matrix_from_args

    df = matrix_from_args(args)
    return df, f"store matrix ({', '.join(args.benchmark or ['all benchmarks'])})"


def _print(title: str, body: str) -> None:
    print(f"\n== {title}\n{body}")


def run(args) -> int:
    """Run ``harness-ext weights``: print tables, write plots to ``--out``."""
    from ..methods.weighting import (
        ANALYSES, compare_schemes, compute_weights, emit_weights, is_binary, permutation_test, plot_pairwise,
        plot_rank_changes, plot_score_distribution, plot_size_curves, random_weight_analysis, silhouette_test,
        size_curves,
    )
    from ..methods.weighting.plots import _short

    df, label = _load(args)
    df = df.dropna(axis=1, how="all").dropna(axis=0, how="all")
    if df.shape[0] < 2 or df.shape[1] < 2:
        raise MethodError(f"need at least 2 models and 2 columns, got {df.shape}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    analyses = [] if args.analyses.strip() == "none" else [a.strip() for a in args.analyses.split(",") if a.strip()]
    for a in analyses:
        if a not in ANALYSES:
            raise HarnessExtError(f"unknown analysis {a!r}; choose from {', '.join(ANALYSES)}")
    n_missing = int(df.isna().sum().sum())
    print(f"{label}: {df.shape[0]} models x {df.shape[1]} columns, {n_missing} missing cells"
          f"{', 0/1 values' if is_binary(df.to_numpy()) else ''}")
    top = args.top
    summary: dict = {"input": label, "shape": list(df.shape), "random_state": args.random_state}
    scheme_params = {args.scheme: _parse_params(args.param)}
    from ..types import normalise_name

    scheme_key = normalise_name(args.scheme)

    if "schemes" in analyses:
        names = [s.strip() for s in args.schemes.split(",") if s.strip()]
        if scheme_key not in [normalise_name(n) for n in names]:
            names.append(args.scheme)
        params = {normalise_name(k): v for k, v in scheme_params.items()}
        params.setdefault("medoids", {}).setdefault("max_clusters", args.max_clusters)
        params.setdefault("distance", {}).setdefault("max_clusters", args.max_clusters)
        params.setdefault("inverse_distance", {}).setdefault("max_clusters", args.max_clusters)
        try:
            comp = compare_schemes(df, [normalise_name(n) for n in names], args.random_state, params)
        except MethodError as exc:
            print(f"\n== weighting schemes: skipped ({exc})")
        else:
            order = comp.scores["uniform"].sort_values(ascending=False, kind="stable").index
            shown = order[:top] if top else order
            table = comp.scores.loc[shown].join(comp.rank_change.loc[shown].drop(columns="uniform").add_prefix("Δrank "))
            _print(f"weighted score and rank change per scheme (top {len(shown)} of {len(order)} by uniform score)",
                   _fmt(table))
            comp.scores.to_csv(out / "scheme_scores.csv")
            comp.rank_change.to_csv(out / "scheme_rank_change.csv")
            comp.weights.to_csv(out / "scheme_weights.csv")
            png = plot_rank_changes(comp, out / "rank_changes.png", top=top)
            summary["schemes"] = {
                "max_abs_rank_change": {s: int(comp.rank_change[s].abs().max()) for s in comp.rank_change.columns},
                "params": comp.params,
            }
            print(f"plot: {png}")

    if "random" in analyses:
        res = random_weight_analysis(
            df, n_draws=args.draws, random_state=args.random_state, chunk_size=args.chunk_size,
            pairwise_top=args.pairwise_top,
        )
        t = res.table()
        _print(f"weighted score over {res.n_draws:,} random simplex weightings (top {min(top, len(t))} of {len(t)})",
               _fmt(t.head(top)))
        k_show = min(top, 10, len(res.pairwise))
        shown = res.pairwise.iloc[:k_show, :k_show].copy()
        shown.index = [f"{i + 1} {_short(n, 40)}" for i, n in enumerate(shown.index)]
        shown.columns = [str(i + 1) for i in range(k_show)]
        _print(f"pairwise: fraction of draws where row beats column (top {k_show}; full matrix in pairwise.csv)", _fmt(shown, "{:.2f}"))
        s = res.summary()
        _print(
            "named outputs",
            f"top_two_swap_rate        {s['top_two_swap_rate']:.4f}  fraction of draws where uniform #2 beats #1 "
            f"({s['top_two'][1]} beats {s['top_two'][0]})\n"
            f"largest_range            {s['largest_range']:.4f}  max - min weighted score, score units "
            f"(Ailem et al. report up to 10%), {s['largest_range_model']}\n"
            f"largest_abs_score_shift  {s['largest_abs_score_shift']:.4f}  max |weighted - uniform|, score units, "
            f"{s['largest_abs_score_shift_model']}\n"
            f"largest_score_shift      {s['largest_score_shift']:.4f}  max |weighted - uniform| / uniform (relative), "
            f"{s['largest_score_shift_model']}"
            + (f"\ntop_two_swap_rate_exact  {s['top_two_swap_rate_exact']:.4f}  0/1 data: I_1/2(n_21, n_12) over the prompts "
               "where the two differ (binary_beat_probability)" if "top_two_swap_rate_exact" in s else ""),
        )
        t.to_csv(out / "random_weights.csv")
        res.pairwise.to_csv(out / "pairwise.csv")
        if res.pairwise_exact is not None:
            res.pairwise_exact.to_csv(out / "pairwise_exact.csv")
        summary["random_weights"] = s
        print(f"plot: {plot_pairwise(res, out / 'pairwise.png')}")
        print(f"plot: {plot_score_distribution(res, out / 'score_distribution.png', top=top)}")

    if "size" in analyses:
        try:
            curves = size_curves(df, random_state=args.random_state)
        except MethodError as exc:
            print(f"\n== increasing benchmark size: skipped ({exc})")
        else:
            d = df.shape[1]
            sizes = sorted({1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, d // 4, d // 2, d} & set(range(1, d + 1)))
            _print("increasing benchmark size: mean |score - full score| and Spearman with full ranking",
                   _fmt(curves.summary.loc[sizes]))
            curves.summary.to_csv(out / "size_summary.csv")
            summary["size_curves"] = {"informative_order_first10": curves.informative_order[:10]}
            print(f"plot: {plot_size_curves(curves, out / 'size_curves.png', top=min(top, 10))}")

    if "permutation" in analyses:
        measures = [m.strip() for m in args.similarity.split(",") if m.strip()]
        try:
            pt = permutation_test(df.to_numpy(dtype=float), measures, args.permutations, args.random_state)
        except MethodError as exc:
            print(f"\n== permutation test: skipped ({exc})")
        else:
            _print(f"permutation test p-values ({pt.n_permutations} permutations; 003 Table 2)", _fmt(pt.pvalues, "{:.4g}"))
            _print("observed statistic (permuted mean)",
                   _fmt(pt.observed.round(4).astype(str) + " (" + pt.permuted_mean.round(4).astype(str) + ")"))
            pt.pvalues.to_csv(out / "permutation_pvalues.csv")
            summary["permutation_test"] = {
                "pvalues": {c: pt.pvalues[c].to_dict() for c in pt.pvalues.columns},
                "n_permutations": pt.n_permutations,
            }

    if "silhouette" in analyses:
        try:
            st = silhouette_test(df.to_numpy(dtype=float), args.silhouette_permutations, args.random_state, args.max_clusters)
        except MethodError as exc:
            print(f"\n== silhouette: skipped ({exc})")
        else:
            _print("silhouette of spherical k-means, observed vs permuted (003 Table 3)", _fmt(st.table(), index=False))
            summary["silhouette"] = st.table().iloc[0].to_dict()

    if args.emit_weights:
        w = compute_weights(df, args.scheme, random_state=args.random_state, **scheme_params[args.scheme])
        path = emit_weights(w, args.emit_weights)
        print(f"\nweights ({w.attrs['scheme']}, {int((w > 0).sum())} non-zero of {len(w)}) written to {path}")

    (out / "summary.json").write_text(dumps(summary))
    print(f"summary: {out / 'summary.json'}")
    return 0


def _fmt(df, floatfmt: str = "{:.3f}", index: bool = True) -> str:
    from ..report import format_table

    return format_table(df, floatfmt=floatfmt, index=index)
