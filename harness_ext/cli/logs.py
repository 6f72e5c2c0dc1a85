"""The stderr handler of the CLI's log messages (imported when a command runs, not for ``--help``)."""

from __future__ import annotations

import logging
import sys


class StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record is emitted (pytest and callers swap it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass

    def format(self, record) -> str:
        """The record's line, a name's format characters (an RTL override) shown escaped."""
        from ..safe_output import shown_text

        return shown_text(super().format(record))


#: Level of the ingest notes (what an adapter's heuristics did to a file): shown like warnings, as
#: ``note: ...`` lines, and silenced by ``-q`` with them.
NOTE = logging.WARNING + 1
logging.addLevelName(NOTE, "NOTE")
