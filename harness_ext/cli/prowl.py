"""The ``prowl`` command: every coverage selector against the baselines on the selected matrix (SimBA Table 3).

Options are in :mod:`harness_ext.cli.options`; this module reads the matrix (the store, or a
prompt-level CSV with ``--prompts``), runs :func:`harness_ext.methods.prowl.prowl_table`, shows
the :class:`~harness_ext.methods.prowl.ProwlReport` and writes its tables and Figure 2 to ``--out``.
"""

from __future__ import annotations

from ..errors import HarnessExtError
from ..safe_output import csv_text, write_file


def prowl_matrix(args):
    """The matrix the options describe (``--prompts``: a prompt-level CSV), refusing shapes prowl cannot use."""
    if getattr(args, "prompts", None):
        from ..methods.weighting import read_prompt_matrix
        import logging

        from .options import say_matrix_options_unused

        say_matrix_options_unused(args, "--prompts", logging.getLogger("harness_ext.prowl"), also=("--models", "--exclude-models"))
        df = read_prompt_matrix(args.prompts, args.prompts_layout)
    else:
        from .matrix import oriented_matrix
        from .options import matrix_from_args

        df = oriented_matrix(matrix_from_args(args, fingerprint=False), "prowl")
    if df.shape[0] < 2 or df.shape[1] < 2:
        raise HarnessExtError(f"prowl needs at least 2 models and 2 datasets; the matrix is {df.shape[0]} x {df.shape[1]}")
    return df


def run(args) -> int:
    import logging
    from dataclasses import replace
    from pathlib import Path

    from ..methods.prowl import prowl_table
    from ..report import benchmarks_label
    from .output import emit

    selector, params = args.selector, None
    if args.beam_width is not None:
        if selector not in ("greedy_coverage", "beam_coverage"):  # the default, or the one --beam-width runs
            raise HarnessExtError(f"--beam-width runs the selector beam_coverage; it cannot be given with --selector "
                                  f"{selector}")
        selector, params = "beam_coverage", {"beam_width": args.beam_width}
    df = prowl_matrix(args)
    report = prowl_table(df, similarities=args.similarity, selector=selector, selector_params=params,
                         target=args.target, n_random=args.n_random, random_state=args.random_state, ties=args.ties)
    label = f"prompts {Path(args.prompts).name}" if args.prompts else benchmarks_label(df, args.benchmark)
    report = replace(report, label=label)
    emit(args, report)
    for note in report.notes:
        logging.getLogger("harness_ext.prowl").warning("%s", note)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_file(out / "prowl_table.csv", csv_text(report.table))
    write_file(out / "prowl_curves.csv", csv_text(report.curves(), index=False))
    png = report.plot(out / "prowl_coverage.png")
    print(f"wrote {out / 'prowl_table.csv'}, {out / 'prowl_curves.csv'}, {png}")
    return _failed(report)


def _failed(report) -> int:
    """Exit status: 1 when a method could not run (its row is empty), with one error line naming each and why.

    The other rows are printed and written first: they stand, but a script must not take the table for whole.
    """
    import sys

    if not report.failures:
        return 0
    n = len(report.results) + len(report.failures)
    why = "; ".join(f"{label} ({reason})" for label, reason in report.failures.items())
    print(f"harness-ext prowl: error: {len(report.failures)} of {n} methods failed, their rows are empty: {why}",
          file=sys.stderr)
    return 1
