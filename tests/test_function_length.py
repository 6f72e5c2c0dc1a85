"""No function on the reduce/predict path grows past about 80 lines: a long one becomes named steps, each
with its own tests (the developers' guide: module > ~700 lines => split; function > ~80 lines => split)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_FUNCTION_LINES = 80
#: The reduce/predict path: the reduction room, the Python API, the two commands, the new-model intervals,
#: the matrix the store builds for them (and its scatter) and the default selector's greedy order.
PATH = ("harness_ext/methods/reduction", "harness_ext/methods/api.py", "harness_ext/cli/reduce.py",
        "harness_ext/cli/predict.py", "harness_ext/methods/engine/newmodel_intervals.py", "harness_ext/store/matrix.py",
        "harness_ext/store/pivot.py", "harness_ext/store/pivot_steps.py", "harness_ext/methods/prowl/predictive.py")


def _lengths(paths, root: Path, docstring: bool):
    """``("file:line name", n_lines)`` of every function (methods and nested functions included), decorators
    counted, the docstring only if ``docstring``."""
    for entry in paths:
        base = root / entry
        for path in sorted(base.rglob("*.py")) if base.is_dir() else [base]:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = node.end_lineno - min([node.lineno] + [d.lineno for d in node.decorator_list]) + 1
                    doc = node.body[0] if node.body else None
                    if not docstring and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) \
                            and isinstance(doc.value.value, str):
                        n -= doc.end_lineno - doc.lineno + 1
                    yield f"{path.relative_to(root)}:{node.lineno} {node.name}", n


def long_functions(paths=PATH, limit: int = MAX_FUNCTION_LINES, root: Path = ROOT) -> dict:
    """``{"file:line name": n_lines}`` of every function over ``limit`` lines, its decorators and docstring counted."""
    return {k: n for k, n in _lengths(paths, root, docstring=True) if n > limit}


def test_no_function_on_the_reduce_predict_path_over_80_lines():
    long = long_functions()
    assert not long, (f"functions over {MAX_FUNCTION_LINES} lines on the reduce/predict path (split them into "
                      f"named steps, each with a test): {long}")


def test_the_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "m.py").write_text(f"def f():\n{body}\n\n\ndef g():\n    return 1\n")
    assert long_functions(paths=("m.py",), root=tmp_path) == {"m.py:1 f": MAX_FUNCTION_LINES + 1}


#: Everywhere else in the package, the plugins and the adapters: a long docstring is welcome, the code is not.
PACKAGE = ("harness_ext", "plugins", "adapters")


def long_code(paths=PACKAGE, limit: int = MAX_FUNCTION_LINES, root: Path = ROOT) -> dict:
    """``{"file:line name": n_lines}`` of every function whose code (decorators counted, docstring not) is over
    ``limit`` lines."""
    return {k: n for k, n in _lengths(paths, root, docstring=False) if n > limit}


def test_no_function_in_the_package_has_over_80_lines_of_code():
    long = long_code()
    assert not long, f"functions with over {MAX_FUNCTION_LINES} lines of code (split them into named steps): {long}"


def test_the_package_check_does_not_count_the_docstring(tmp_path):
    doc = '    """' + "\n".join(["doc"] * 50) + '"""\n'
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES - 1))  # with the def line: the limit
    longer = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    text = f"def f():\n{doc}{body}\n\n\ndef g():\n{longer}\n"
    (tmp_path / "m.py").write_text(text)
    line_g = text.splitlines().index("def g():") + 1
    assert long_code(paths=("m.py",), root=tmp_path) == {f"m.py:{line_g} g": MAX_FUNCTION_LINES + 1}
