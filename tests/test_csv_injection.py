"""Names in result files are third parties' text. A CSV harness-ext writes must not hand a spreadsheet program a
formula: a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading apostrophe (OWASP,
"CSV Injection"), numbers stay as they are, and JSON keeps the names unchanged."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from harness_ext.cli import main
from harness_ext.safe_output import csv_text, spreadsheet_safe

HOSTILE = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "-2+3+cmd", "@SUM(1+1)", "\t=1", "\r=1"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_formula_name_gets_an_apostrophe_in_cells_index_and_header(name):
    df = pd.DataFrame({"model": [name, "plain"], name: [1.0, -2.0], "note": [name, None]}).set_index("model")
    safe = spreadsheet_safe(df)
    assert list(safe.index) == ["'" + name, "plain"] and list(safe.columns) == ["'" + name, "note"]
    assert safe.iloc[0, 1] == "'" + name and safe.iloc[1, 0] == -2.0  # numbers untouched
    assert csv_text(df) == safe.to_csv()


@pytest.mark.parametrize("value", ["-0.5", "+3", "-1e-3", "-inf", "plain", "a=b", "", None, 5, -5.0])
def test_numbers_and_ordinary_text_are_unchanged(value):
    df = pd.DataFrame({"x": [value]}, index=pd.Index(["m"], name="model"))
    assert spreadsheet_safe(df).equals(df)


def test_the_frame_itself_is_not_changed():
    df = pd.DataFrame({"x": ["=1"]}, index=["=m"])
    spreadsheet_safe(df)
    assert df.iloc[0, 0] == "=1" and df.index[0] == "=m"


def test_matrix_out_writes_a_formula_named_model_escaped(tmp_path):
    rng = random.Random(0)
    rows = ["model,bench_a,bench_b"] + [f'"{m}",{rng.uniform(20, 80):.2f},{rng.uniform(20, 80):.2f}'
                                        for m in ['=HYPERLINK(""http://x"")', "@evil", "m1", "m2"]]
    (tmp_path / "board.csv").write_text("\n".join(rows) + "\n")
    db, out = tmp_path / "s.duckdb", tmp_path / "m.csv"
    assert main(["ingest", "--db", str(db), "-q", str(tmp_path / "board.csv")]) == 0
    assert main(["matrix", "--db", str(db), "--out", str(out)]) == 0
    first = [line.split(",")[0] for line in out.read_text().splitlines()[1:]]
    assert "'@evil" in first and any(c.startswith('"\'=HYPERLINK') for c in first)
    assert not [c for c in first if c.lstrip('"').startswith(("=", "@"))]
