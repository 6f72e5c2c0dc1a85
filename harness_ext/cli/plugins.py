"""The ``plugins`` command: every registered plugin, clash and broken plugin, with where it comes from.

It imports no numerics (pandas, numpy, scipy) so that it answers in well under half a second; the
rows come from :func:`harness_ext.plugin_manager.plugin_rows` and render through the one table
formatter (:func:`harness_ext.report.format_table`, which takes rows of strings without pandas).
"""

from __future__ import annotations

from ..report import Result


class PluginList(Result):
    """The plugin table: ``kind, name, status (ok/clash/broken), source, description`` per row."""
    command = "plugins"

    def __init__(self, rows: list):
        self.rows = list(rows)

    def summary(self) -> dict:
        return {}

    def tables(self) -> dict:
        # rows of strings: rendered without pandas; to_frame() builds the DataFrame on demand
        return {"plugins": self.rows}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=["kind", "name", "status", "source", "description"])

    def render(self) -> str:
        from ..report import format_table

        return format_table(self.rows, index=False)


def run(args) -> int:
    from ..plugin_manager import plugin_rows
    from .output import emit

    emit(args, PluginList(plugin_rows(args.kind)))
    return 0
