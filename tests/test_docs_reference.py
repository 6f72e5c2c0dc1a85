"""The API reference (docs/reference/*.md, rendered by mkdocstrings) documents every public name.

Each name in ``harness_ext.__all__`` must be reached by a ``:::`` directive of the reference, either named
itself or as a member of a documented module (within the directive's ``members`` list when it has one), and
carry a numpydoc docstring: a summary line, and for a function ``Parameters`` (when it takes any) and
``Returns`` sections. A name the reference missed was simply absent from the site, with no warning.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

import harness_ext

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
PUBLIC = [n for n in harness_ext.__all__ if n != "__version__"]


def directives() -> dict:
    """``{identifier: members or None}`` for every ``::: identifier`` of the reference pages."""
    out = {}
    for page in sorted(REFERENCE.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = re.match(r":::\s*(\S+)", line)
            if not m:
                continue
            members = None
            for follow in lines[i + 1:i + 4]:
                mm = re.match(r"\s+members:\s*\[(.*)\]", follow)
                if mm:
                    members = {x.strip() for x in mm.group(1).split(",")}
            out[m.group(1)] = members
    return out


def _module_attribute_docstring(module, name: str) -> str:
    """The string literal after ``name = ...`` at a module's top level (what mkdocstrings shows), or ''."""
    body = ast.parse(inspect.getsource(module)).body
    for stmt, after in zip(body, body[1:]):
        if (isinstance(stmt, ast.Assign) and any(getattr(t, "id", None) == name for t in stmt.targets)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            return after.value.value
    return ""


def where_defined(name: str) -> tuple:
    """``(module name, docstring)`` of a public name: where the reference must document it."""
    obj = getattr(harness_ext, name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return obj.__module__, inspect.getdoc(obj) or ""
    # A module attribute (the hook markers): the module of harness_ext that defines it.
    module = importlib.import_module(f"harness_ext.{harness_ext._LAZY[name]}")
    return module.__name__, _module_attribute_docstring(module, name)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_is_in_the_api_reference(name):
    found = directives()
    module, _ = where_defined(name)
    qualified = f"{module}.{name}"
    in_module = module in found and (found[module] is None or name in found[module])
    assert qualified in found or in_module, (
        f"harness_ext.{name} ({qualified}) is in harness_ext.__all__ but no docs/reference page documents it: "
        f"add '::: {qualified}' (or its module) to a page of docs/reference")


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_a_numpydoc_docstring(name):
    obj = getattr(harness_ext, name)
    _, doc = where_defined(name)
    assert doc.strip(), f"harness_ext.{name} has no docstring"
    assert doc.strip().splitlines()[0].strip(), f"harness_ext.{name}: the docstring opens with no summary line"
    if inspect.isfunction(obj):
        params = [p for p in inspect.signature(obj).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if params:
            assert re.search(r"^\s*Parameters\n\s*-{3,}", doc, re.M), f"harness_ext.{name}: no Parameters section"
        assert re.search(r"^\s*(Returns|Yields)\n\s*-{3,}", doc, re.M), f"harness_ext.{name}: no Returns section"


def test_the_reference_finds_what_the_tests_parse():
    # The parser above must see the pages' directives, or every check passes on nothing.
    found = directives()
    assert "harness_ext.methods.api" in found
    assert found["harness_ext.plugin_manager"] == {"get_plugin_manager", "get_registrations", "get_registration"}


def _python_blocks(page: Path) -> list:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def test_the_item_estimator_example_of_the_guide_runs_as_written():
    # It used names the page never defined (population_answers, new_model_answers_on_items), so a reader
    # copying it got a NameError; it now makes its own answers and must run as printed.
    block = next(b for b in _python_blocks(ROOT / "docs" / "guide" / "items.md") if "AIPW()" in b)
    scope: dict = {}
    exec(compile(block, "docs/guide/items.md", "exec"), scope)
    res = scope["res"]
    assert res.lower[0] <= res.estimate[0] <= res.upper[0]


def test_the_item_tables_page_names_the_columns_item_rows_returns(tmp_path):
    # The page said item, score and source file; the frame has doc_id, value and source.
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.item_ids import item_id_map
    from harness_ext.store.item_tables import item_rows

    (tmp_path / "t.csv").write_text("model,item,score\nm1,0,1\nm1,1,0\nm2,0,1\nm2,1,1\n")
    with Store.open(str(tmp_path / "s.duckdb")) as store:
        ingest_paths(store, [tmp_path / "t.csv"], show_progress=False)
        rows, ids = item_rows(store), item_id_map(store)
    page = (ROOT / "docs" / "item_tables.md").read_text(encoding="utf-8")
    for col in rows.columns:
        assert f"`{col}" in page or f"{col}`" in page or f" {col}," in page, col
    assert list(ids.columns) == ["benchmark", "task", "item", "doc_id"] and "`benchmark, task, item, doc_id`" in page


@pytest.mark.slow
def test_the_guides_items_total_figures_are_what_reduce_prints(tmp_path, capsys):
    # The guide quoted an older estimator's figures (HELM Lite Neyman 1.50 / 1.77 where reduce now prints
    # 1.43 / 1.71): the summary's benchmark row, inside / frontier, must be the one the page quotes.
    from conftest import SHARED_DATA

    from harness_ext.cli import main

    tables = SHARED_DATA / "items" / "helm_lite"
    if not tables.is_dir():
        pytest.skip(f"the shared item tables are not at {tables}")
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(tables)]) == 0
    assert main(["reduce", "--db", str(db), "--items-total", "250", "--item-allocation", "neyman",
                 "--out", str(tmp_path / "reduced"), "--no-plot"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("benchmark "))
    inside, frontier = row.split()[3], row.split()[6]
    page = (ROOT / "docs" / "guide" / "items.md").read_text(encoding="utf-8")
    assert f"Neyman {inside} / {frontier}" in " ".join(page.split()), row


def test_messages_point_at_pages_and_sections_that_exist():
    # The default budget's reason named README 'Prediction quality' and --normalise's help README 'The matrix',
    # sections that had moved to docs/: a user following them found nothing.
    cited = []
    for base in ("harness_ext", "plugins", "adapters"):
        for path in sorted((ROOT / base).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            cited += [(path, m.group(1), m.group(2)) for m in
                      re.finditer(r"(docs/[\w/-]+\.md|README)(?:,? '([^']+)')?", text)
                      if not m.group(1).startswith("docs/en/")]  # OpenCompass's own docs, cited by the CSV reader
    assert any(page.startswith("docs/") for _, page, _ in cited)
    for path, page, section in cited:
        target = ROOT / ("README.md" if page == "README" else page)
        assert target.is_file(), f"{path.relative_to(ROOT)} points at {page}, which does not exist"
        if section:
            text = target.read_text(encoding="utf-8")
            # A section: a heading, or a paragraph led by a bold title (``**Leaderboard CSVs.**``).
            headings = {h.strip() for h in re.findall(r"^#+\s*(.+)$", text, re.M)}
            headings |= {h.strip() for h in re.findall(r"^\*\*([^*]+?)\.?\*\*", text, re.M)}
            assert section in headings, f"{path.relative_to(ROOT)} points at {page} '{section}', no such section"
