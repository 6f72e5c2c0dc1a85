"""Exceptions raised by harness-ext.

Every error a user can cause derives from :class:`HarnessExtError`, so the CLI
can print it as one line and exit non-zero instead of showing a traceback.
"""

from __future__ import annotations


class HarnessExtError(Exception):
    """Base class for errors that are the user's input, not a bug."""


class PluginError(HarnessExtError):
    """A plugin could not be registered (for example, a duplicate name)."""


class IngestError(HarnessExtError):
    """A result file could not be read; the message names the file and the reason."""

    def __init__(self, path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class NotResults(IngestError):
    """A file its format's adapter knows but which holds no results (MTEB's ``model_meta.json``, read with
    the task files beside it): reported skipped with ``quiet`` set, so ingest does not warn about it."""

    #: What such files are, as ingest's summary counts them (``22 skipped (22 of them ...)``).
    what = "metadata files with no results"


class ResultsReadElsewhere(NotResults):
    """A file holding only copies of results that files beside it hold in full (lm-eval's results README, whose
    tables were printed from the JSON files beside it): skipped quietly, as :class:`NotResults`."""

    what = "copies of results read from the files beside them"


class SideFileError(HarnessExtError):
    """A side file (chance levels, aliases, costs, weights, column metadata, a manifest) could not be read;
    the message names the file and the reason (:mod:`harness_ext.safe_input`)."""

    def __init__(self, path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class StoreError(HarnessExtError):
    """The store cannot answer (empty, locked, or the query selects nothing)."""


class StoreLockedError(StoreError):
    """Another process holds the store's write lock."""


class MethodError(HarnessExtError):
    """A method got input it cannot work with (too few models, bad budget, ...)."""


class ParameterError(MethodError, ValueError):
    """A method's parameter outside its range (an interval level of 90): a MethodError, so the command line
    prints it as one line, and a ValueError, scikit-learn's rule for an estimator's parameters."""
