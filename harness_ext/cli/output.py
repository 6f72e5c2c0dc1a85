"""How every command shows its result: the result's own text on stdout, its JSON for ``--json``.

Commands never format tables or encode JSON themselves: a method returns a
:class:`harness_ext.report.Result`, and :func:`emit` prints ``result.render()`` and hands the
result to ``--json`` (written by :func:`harness_ext.cli._run_with_json` with the one encoder,
:func:`harness_ext.report.dumps`).
"""

from __future__ import annotations


def emit(args, result, *, show: bool = True) -> None:
    """Print ``result`` (unless ``show`` is false) and keep it as the command's ``--json`` document."""
    if show:
        from ..safe_output import shown_text

        print(shown_text(result.render()))  # a name's format characters (an RTL override) shown escaped
    args.json_payload = result


def with_plot(args, result, paths: list, plot_name: str) -> list:
    """``paths`` (what ``result.write`` wrote in ``--out``) and the result's figure as ``plot_name`` there, unless
    ``--no-plot``: how ``reduce`` and ``predict`` write a folder."""
    from pathlib import Path

    if not getattr(args, "no_plot", False):
        paths = [*paths, result.plot(Path(args.out) / plot_name)]
    return paths

