"""A model's name becomes a file name where ``predict --eee`` writes one record per model (and ``predict`` its
prediction beside a group's results). A model named ``con`` (or ``nul``, ``com1``, ``LPT9.x``) wrote ``con.json``,
which Windows opens as its console device, whatever the extension (benchmarks/HISTORY.md, the fourth red-team pass).
Composed names."""

from __future__ import annotations

import pytest

from harness_ext.methods.reduction.predict_export import _safe


@pytest.mark.parametrize("name,stem", [("con", "con_"), ("CON", "CON_"), ("nul", "nul_"), ("org/aux", "org__aux"),
                                       ("com1", "com1_"), ("LPT9.x", "LPT9.x_"), ("aux.json", "aux.json_"),
                                       ("console", "console"), ("com10", "com10"), ("..", "model"),
                                       ("../../../tmp/x", "tmp__x")])
def test_a_model_named_as_a_windows_device_gets_another_file_name(name, stem):
    assert _safe(name) == stem
