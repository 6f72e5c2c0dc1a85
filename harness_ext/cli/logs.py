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
