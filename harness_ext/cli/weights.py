"""The ``weights`` command: options are in :mod:`harness_ext.cli.options`; this module loads the
matrix, predicts its missing cells (:func:`~harness_ext.methods.weighting.complete_matrix`; not with
``--no-complete``), runs the analyses of :mod:`harness_ext.methods.weighting`, shows each result as it is done
(the results render themselves) and writes their CSV tables and plots, ``summary.json`` and the
``--emit-weights`` file. ``--json`` gets the whole :class:`WeightsReport`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..errors import HarnessExtError, MethodError
from ..report import Result, dumps, one_glyph_note, plural
from ..safe_output import csv_text, write_file
from .output import emit, show_part
from .shared_options import SCALE_AXIS

log = logging.getLogger(__name__)

#: Per analysis: its key in summary.json, its heading when skipped, the CSV file of each of its tables,
#: and its plots as (file, keyword arguments of ``result.plot``; ``"top"`` is ``--top``, ``"scale"`` what the
#: scores are, the short form of the text's ``scores:`` line).
ANALYSIS_OUTPUTS = {
    "schemes": ("schemes", "weighting schemes",
                {"scheme_scores.csv": "scores", "scheme_rank_change.csv": "rank_change", "scheme_weights.csv": "weights"},
                [("rank_changes.png", {"top": "top"})]),
    "random": ("random_weights", None,
               {"random_weights.csv": "scores", "pairwise.csv": "pairwise", "pairwise_exact.csv": "pairwise_exact"},
               [("pairwise.png", {"kind": "pairwise"}),
                ("score_distribution.png", {"kind": "distribution", "top": "top", "scale": "scale"})]),
    "size": ("size_curves", "increasing benchmark size", {"size_summary.csv": "by_size"},
             [("size_curves.png", {"top": "top10", "scale": "scale"})]),
    "permutation": ("permutation_test", "permutation test", {"permutation_pvalues.csv": "pvalues"}, []),
    "silhouette": ("silhouette", "silhouette", {}, []),
}


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
                    log.warning(f"skipped {f.path}: {f.reason}")
                df = samples_matrix(store, args.samples_task, args.samples_metric, args.models,
                                    args.exclude_models)
            where = f"lm-eval per-sample logs under {', '.join(args.samples)}"
        else:
            with Store.open(args.db, read_only=True) as store:
                df = samples_matrix(store, args.samples_task, args.samples_metric, args.models,
                                    args.exclude_models)
            where = "the store's samples table"
        dropped = df.attrs["n_dropped_prompts"]
        if df.attrs["unmatched_exclude"]:
            from ..store.globs import unmatched_note

            log.warning(unmatched_note(df.attrs["unmatched_exclude"], args.samples_task))
        return df, (f"prompt-level {args.samples_task} ({df.attrs['metric']}) from {where}"
                    + (f"; {dropped} prompts not answered by every model dropped" if dropped else ""))
    if args.prompts:
        return read_prompt_matrix(args.prompts, args.prompts_layout), f"prompt-level CSV {args.prompts}"
    from .matrix import oriented_matrix
    from .options import matrix_from_args

    df = oriented_matrix(matrix_from_args(args, fingerprint=False), "weights")
    from ..report import benchmarks_label

    return df, f"store matrix ({benchmarks_label(df, args.benchmark)})"


class WeightsReport(Result):
    """What ``harness-ext weights`` found: the input, each analysis's result (or why it was skipped), the files written.

    ``render()`` is the command's text; ``summary()`` is ``summary.json``; ``tables()`` are the analyses'
    tables as ``"<analysis>/<table>"``.
    """
    command = "weights"

    def __init__(self, label: str, shape, n_missing: int, binary: bool, random_state: int, top: int):
        self.label, self.shape, self.n_missing, self.binary = label, tuple(shape), n_missing, binary
        self.random_state, self.top = random_state, top
        #: The :class:`~harness_ext.methods.weighting.complete.Completion` the analyses ran on (None: the matrix as read).
        self.completion = None
        #: Lines said under the title: what was completed or dropped, and why not.
        self.notes: list = []
        #: What the results cannot say (too few models for their rankings), logged as warnings.
        self.warnings: list = []
        #: (analysis, result or the reason it was skipped, plot paths)
        self.analyses: list = []
        self.weights = None
        self.weights_path = self.summary_path = None
        self.files: list = []

    @property
    def title(self) -> str:
        return (f"{self.label}: {self.shape[0]} models x {self.shape[1]} columns, {self.n_missing} missing cells"
                f"{', 0/1 values' if self.binary else ''}")

    def header(self) -> str:
        """The title and the notes on what the analyses run on."""
        return "\n".join([self.title] + self.notes)

    def block(self, name: str, result, plots=()) -> str:
        """The text of one analysis: its own rendering (or why it was skipped), then the plots drawn."""
        if isinstance(result, str):
            text = f"== {ANALYSIS_OUTPUTS[name][1]}: skipped ({result})"
        else:
            text = result.render(top=self.top) if name in ("schemes", "random") else result.render()
        return "\n" + text + "".join(f"\nplot: {p}" for p in plots)

    def footer(self) -> str:
        lines = []
        if self.weights is not None:
            w = self.weights
            lines.append(f"\nweights ({w.attrs['scheme']}, {int((w > 0).sum())} non-zero of {len(w)}) written to {self.weights_path}")
        if self.summary_path is not None:
            lines.append(f"summary: {self.summary_path}")
        return "\n".join(lines)

    def render(self) -> str:
        parts = [self.header()] + [self.block(*a) for a in self.analyses]
        return "\n".join(parts + ([self.footer()] if self.footer() else []))

    def summary(self) -> dict:
        """The ``summary.json`` document."""
        doc = {"input": self.label, "shape": list(self.shape), "n_missing": self.n_missing,
               "random_state": self.random_state,
               "completion": None if self.completion is None else self.completion.summary(), "notes": list(self.notes),
               "warnings": list(self.warnings)}
        for name, result, _ in self.analyses:
            if not isinstance(result, str):
                doc[ANALYSIS_OUTPUTS[name][0]] = result.summary()
        return doc

    def tables(self) -> dict:
        out = {f"{name}/{key}": frame for name, result, _ in self.analyses if not isinstance(result, str)
               for key, frame in result.tables().items()}
        if self.weights is not None:
            out["weights"] = self.weights.to_frame()
        return out

    def to_dict(self) -> dict:
        return {**super().to_dict(), "skipped": {n: r for n, r, _ in self.analyses if isinstance(r, str)},
                "files": [str(f) for f in self.files]}


def _analyse(name: str, df, args, scheme_params: dict):
    """Run one analysis on ``df`` with the command's options; returns its result."""
    from ..methods import weighting as w

    if name == "schemes":
        from ..types import normalise_name

        names = [s.strip() for s in args.schemes.split(",") if s.strip()]
        if normalise_name(args.scheme) not in [normalise_name(n) for n in names]:
            names.append(args.scheme)
        params = {normalise_name(k): v for k, v in scheme_params.items()}
        for cluster_scheme in ("medoids", "distance", "inverse_distance"):
            params.setdefault(cluster_scheme, {}).setdefault("max_clusters", args.max_clusters)
        return w.compare_schemes(df, [normalise_name(n) for n in names], args.random_state, params)
    if name == "random":
        return w.random_weight_analysis(df, n_draws=args.draws, random_state=args.random_state,
                                        chunk_size=args.chunk_size, pairwise_top=args.pairwise_top)
    if name == "size":
        return w.size_curves(df, random_state=args.random_state)
    X = df.to_numpy(dtype=float)
    if name == "permutation":
        measures = [m.strip() for m in args.similarity.split(",") if m.strip()]
        return w.permutation_test(X, measures, args.permutations, args.random_state)
    return w.silhouette_test(X, args.silhouette_permutations, args.random_state, args.max_clusters)


def _write(name: str, result, out: Path, top: int, scale: str = "") -> list:
    """Write one analysis's CSV tables and plots to ``out``; returns the plot paths."""
    _, _, csvs, plots = ANALYSIS_OUTPUTS[name]
    tables = result.tables()
    for filename, key in csvs.items():
        if tables.get(key) is not None:
            write_file(out / filename, csv_text(tables[key]))
    sizes = {"top": top, "top10": min(top, 10), "scale": scale}
    drawn = [result.plot(out / filename, **{k: sizes.get(v, v) for k, v in kwargs.items()}) for filename, kwargs in plots]
    return [p for p in drawn if p is not None]  # None: the result says why it has no plot


def _say_unused(args) -> None:
    """Warn about the options given that this run does not use (the store matrix's with prompt-level input;
    ``--scheme``/``--param`` without ``--emit-weights`` nor the analysis ``schemes``)."""
    from .options import given_options, say_matrix_options_unused

    prompts = "--samples-task" if args.samples_task else "--prompts" if args.prompts else None
    if prompts:
        say_matrix_options_unused(args, prompts, log, also=("--models", "--exclude-models") if prompts == "--prompts" else ())
    if "schemes" not in [a.strip() for a in args.analyses.split(",")] and not args.emit_weights:
        if unused := given_options(args, ("--scheme", "--param")):
            log.warning(f"{', '.join(unused)} not used: --scheme is the scheme --emit-weights writes and a row of the "
                        "analysis 'schemes', and neither runs")


def _too_small(label: str, before, df) -> str:
    """Why a matrix of fewer than 2 models or 2 columns with results cannot be weighted: the counts and what is
    needed, on one line (it was ``got (2, 1)``)."""
    m, k = df.shape
    cut = "" if before.shape == df.shape else (f", of the selection's {plural(before.shape[0], 'model')} x "
                                                f"{plural(before.shape[1], 'column')}")
    return (f"{label} has {plural(m, 'model')} x {plural(k, 'column')} with results ({int(df.notna().sum().sum())} "
            f"observed cells{cut}): weights needs at least 2 models and 2 columns; widen the selection "
            "(--benchmark, --models, --datasets)")


#: What the scores the analyses weigh are, per ``--normalise`` (the tables and plots print them as they are).
_SCALE_WORDS = {
    "chance": "scores: each dataset normalised to 0-1 on its own scale, chance at 0 and lower-is-better turned "
              "(--normalise; not the datasets' own units)",
    "minmax": "scores: each dataset min-max normalised to 0-1 over these models, lower-is-better turned (--normalise)",
    "none": "scores: each dataset in its own units (--normalise none)",
}
_PROMPT_SCALE = "scores: each prompt's score as logged, not normalised (--normalise applies to the store matrix only)"
#: The same, short, on the plots' score axes.
_SCALE_AXIS = {**SCALE_AXIS, "prompts": "each prompt's score as logged"}


def run(args) -> int:
    """Run ``harness-ext weights``: show each analysis as it finishes, write its tables and plots to ``--out``."""
    from ..methods.weighting import ANALYSES, compute_weights, emit_weights, few_models_warning, is_binary
    from .options import parse_key_values

    _say_unused(args)
    df, label = _load(args)
    before = df
    df = df.dropna(axis=1, how="all").dropna(axis=0, how="all")
    gone = ((before.index.difference(df.index, sort=False), "model"),
            (before.columns.difference(df.columns, sort=False), "column"))
    empty = [f"{plural(len(names), what)} with no result ({', '.join(map(str, names[:5]))}{' ...' if len(names) > 5 else ''})"
             for names, what in gone if len(names)]
    if df.shape[0] < 2 or df.shape[1] < 2:
        raise MethodError(_too_small(label, before, df))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    analyses = [] if args.analyses.strip() == "none" else [a.strip() for a in args.analyses.split(",") if a.strip()]
    for a in analyses:
        if a not in ANALYSES:
            raise HarnessExtError(f"unknown analysis {a!r}; choose from {', '.join(ANALYSES)}")
    report = WeightsReport(label, df.shape, int(df.isna().sum().sum()), is_binary(df.to_numpy()), args.random_state, args.top)
    # A prompt-level matrix is weighed as logged: --normalise rescales the store matrix's datasets only.
    prompts = bool(getattr(args, "samples_task", None) or getattr(args, "prompts", None))
    report.notes.append(_PROMPT_SCALE if prompts else _SCALE_WORDS.get(getattr(args, "normalise", "chance"),
                                                                       _SCALE_WORDS["chance"]))
    if empty:
        report.notes.append(f"dropped {' and '.join(empty)}")
    if {"schemes", "random", "size"} & set(analyses) and (few := few_models_warning(df.shape[0])):
        report.warnings.append(few)  # logged after the tables it is about
    if report.n_missing and not getattr(args, "complete", True):
        report.notes.append(f"{report.n_missing} missing cells kept (--no-complete): analyses that need every cell "
                            "are skipped, weighted scores are means over each model's observed columns")
    elif report.n_missing:
        from ..methods.weighting import complete_matrix

        try:
            report.completion = complete_matrix(df, random_state=args.random_state)
        except MethodError as exc:  # said, and the analyses that need every cell say they are skipped
            report.notes.append(f"missing cells not predicted: {exc}")
        else:
            df = report.completion.frame
            report.notes += [f"{report.completion.message} (seed {args.random_state}); every analysis below runs on "
                             "the completed matrix (--no-complete: on the observed cells only)",
                             *report.completion.notes]
    show_part(report.header())
    scheme_params = {args.scheme: parse_key_values(args.param, "--param")}
    scale = _SCALE_AXIS.get("prompts" if prompts else getattr(args, "normalise", "chance"), _SCALE_AXIS["chance"])
    with one_glyph_note():  # names no installed font draws: said once for all the plots, not once per plot
        for name in ANALYSES:  # always in this order, whatever the order of --analyses
            if name not in analyses:
                continue
            try:
                result = _analyse(name, df, args, scheme_params)
            except MethodError as exc:
                if name == "random":  # as before the split: a matrix random weights cannot score is an error
                    raise
                result, plots = str(exc), []
            else:
                plots = _write(name, result, out, args.top, scale)
            report.analyses.append((name, result, plots))
            show_part(report.block(name, result, plots))

    if args.emit_weights:
        report.weights = compute_weights(df, args.scheme, random_state=args.random_state, **scheme_params[args.scheme])
        report.weights_path = emit_weights(report.weights, args.emit_weights)
    report.summary_path = out / "summary.json"
    write_file(report.summary_path, dumps(report.summary()))
    report.files = sorted(p for p in out.iterdir() if p.is_file()) + ([report.weights_path] if report.weights_path else [])
    show_part(report.footer())
    for warning in report.warnings:
        log.warning(warning)
    emit(args, report, show=False)
    return 0
