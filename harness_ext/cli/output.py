"""How every command shows its result: the result's own text on stdout, its JSON for ``--json``.

Commands never format tables or encode JSON themselves: a method returns a
:class:`harness_ext.report.Result`, and :func:`emit` prints ``result.render()`` and hands the
result to ``--json`` (written by :func:`harness_ext.cli._run_with_json` with the one encoder,
:func:`harness_ext.report.dumps`). A command that shows its result as it goes prints each part with
:func:`show_part`, escaped alike, and gives the whole to :func:`emit` with ``show=False``.
"""

from __future__ import annotations


def emit(args, result, *, show: bool = True) -> None:
    """Print ``result`` (unless ``show`` is false) and keep it as the command's ``--json`` document."""
    if show:
        show_part(result.render())
    args.json_payload = result


def show_part(text: str) -> None:
    """Print one part of a result's text as :func:`emit` prints a whole one.

    For a command that shows its result piece by piece as each is done (``weights``: each analysis as it finishes,
    which is its progress), then hands the whole result to :func:`emit` with ``show=False``. A name's control and
    format characters (a right-to-left override) are shown escaped; the ``--json`` document keeps them as they are.
    """
    from ..safe_output import shown_text

    print(shown_text(text))


def with_plot(args, result, paths: list, plot_name: str) -> list:
    """``paths`` (what ``result.write`` wrote in ``--out``) and the result's figure as ``plot_name`` there, unless
    ``--no-plot``: how ``reduce`` and ``predict`` write a folder."""
    from pathlib import Path

    if not getattr(args, "no_plot", False):
        paths = [*paths, result.plot(Path(args.out) / plot_name)]
    return paths

