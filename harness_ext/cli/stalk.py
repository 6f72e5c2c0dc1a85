"""The ``stalk`` command: options are in :mod:`harness_ext.cli.options`; this module calls the method and shows its result.

Still a thin delegate to the method module's ``run`` (issue 18 moves the command code here).
"""

from __future__ import annotations


def run(args) -> int:
    from ..methods.stalk import run as method_run

    return method_run(args)
