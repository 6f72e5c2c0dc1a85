"""The package's floors: imports only go down, and no module grows past one concept.

Floors, lowest first:

0. core: the plugin core (``hookspecs``, ``registrations``, ``types``, ``plugin_manager``, ``errors``, ``base``)
   and the shared output helpers (``report``, ``safe_output``, ``benchmarks``);
1. data: ``harness_ext.store`` and the built-in result readers (``harness_ext.adapters``);
2. methods: ``harness_ext.methods`` and the built-in method plugins (``harness_ext.plugins``);
3. commands: ``harness_ext.cli`` (and ``harness_ext.testing``, the contract tests plugin authors run).

A module may import its own floor and the floors below, never one above; every import counts,
including the lazy ones inside functions. ``harness_ext/__init__.py`` is the public API's facade
and resolves its names lazily, so it is not on a floor.

No circles either, on any floor (:func:`test_no_import_circles`): the graph has an edge for every import
statement, lazy ones included, resolved to the module it loads (``from pkg import sub`` is ``pkg.sub`` when
sub is a module, else ``pkg``'s ``__init__``; ``import pkg.mod.name`` is ``pkg.mod``). A package's
``__init__`` re-exporting its own children is no circle: Python runs it before any child, so a child reaches
it only by importing a name defined there (``from . import x`` where x is not a module), and that, with the
re-export, is a circle. Two modules that need the same piece get it from a third below both, never by
hiding an import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"harness_ext": ROOT / "harness_ext", "harness_ext.plugins": ROOT / "plugins",
           "harness_ext.adapters": ROOT / "adapters"}
MAX_LINES = 700

def floor(module: str) -> int:
    if module.startswith(("harness_ext.cli", "harness_ext.testing", "harness_ext.__main__")):
        return 3
    if module.startswith(("harness_ext.methods", "harness_ext.plugins")):
        return 2
    if module.startswith(("harness_ext.store", "harness_ext.adapters")):
        return 1
    return 0


def modules():
    for package, base in SOURCES.items():
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("").parts
            is_pkg = rel[-1] == "__init__"
            name = ".".join((package,) + (rel[:-1] if is_pkg else rel))
            if package == "harness_ext" and rel[0] in ("plugins", "adapters"):
                continue
            yield name, path, is_pkg


def imports(name: str, path: Path, is_pkg: bool):
    package = name if is_pkg else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "harness_ext":
                # `from harness_ext import x`: x is a submodule or a name of the facade
                for alias in node.names:
                    sub = f"harness_ext.{alias.name}"
                    yield sub if _is_module(sub) else target
            elif target.startswith("harness_ext"):
                yield target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("harness_ext"):
                    yield alias.name


def _is_module(dotted: str) -> bool:
    parts = dotted.split(".")[1:]
    base = SOURCES["harness_ext"].joinpath(*parts)
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def upward_imports():
    found = set()
    for name, path, is_pkg in modules():
        if name == "harness_ext":
            continue
        for target in imports(name, path, is_pkg):
            if target == "harness_ext":
                continue
            if floor(target) > floor(name):
                found.add((name, target))
    return found


def test_imports_only_go_down():
    found = sorted(upward_imports())
    assert not found, "imports that go up a floor (commands -> methods -> store -> core):\n" + "\n".join(
        f"  {a} imports {b}" for a, b in found)


def test_methods_never_import_plugins():
    """The numerics live in methods/ and plugins/ only registers them: a method that imported a plugin module
    would put numerics (or a second copy of them) back behind a registration."""
    found = sorted((name, target) for name, path, is_pkg in modules() if name.startswith("harness_ext.methods")
                   for target in imports(name, path, is_pkg) if target.startswith("harness_ext.plugins"))
    assert not found, "methods that import a plugin module (move what they need into methods/):\n" + "\n".join(
        f"  {a} imports {b}" for a, b in found)


#: A plugin module is a registration and its classes' parameters, which call into methods/. What is left
#: beyond code is the numpydoc documentation of those parameters, which belongs beside them: the longest
#: module, the representation-based selectors (four classes, five parameters each), has 178 lines, 74 of
#: them code; the longest code, 141 lines, is the registry's tables. An algorithm moved back in would
#: break the second bound first.
PLUGIN_MAX_LINES = 180
PLUGIN_MAX_CODE_LINES = 150


def _docstring_lines(tree) -> int:
    nodes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return sum(n.body[0].end_lineno - n.body[0].lineno + 1 for n in ast.walk(tree)
               if isinstance(n, nodes) and ast.get_docstring(n) is not None)


def test_plugin_modules_only_register_and_name_parameters():
    long = {}
    for path in sorted(SOURCES["harness_ext.plugins"].glob("*.py")):
        text = path.read_text(encoding="utf-8")
        total = len(text.splitlines())
        code = total - _docstring_lines(ast.parse(text))
        if total > PLUGIN_MAX_LINES or code > PLUGIN_MAX_CODE_LINES:
            long[path.name] = (total, code)
    assert not long, (f"plugin modules over {PLUGIN_MAX_LINES} lines or {PLUGIN_MAX_CODE_LINES} lines of code "
                      f"(move the numerics into harness_ext/methods/): {long}")


def test_no_module_over_700_lines():
    long = {name: n for name, path, _ in modules()
            if name.startswith("harness_ext.") and not name.startswith(("harness_ext.plugins", "harness_ext.adapters"))
            and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them along their seams): {long}"


@pytest.mark.parametrize("prefix", ["harness_ext.store", "harness_ext.methods"])
def test_lower_floors_never_print_or_parse(prefix):
    """Numerics and the store neither parse arguments nor print: they return results."""
    offenders = []
    for name, path, _ in modules():
        if not name.startswith(prefix):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if "argparse" in mods:
                    offenders.append(f"{name}:{node.lineno} imports argparse")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                offenders.append(f"{name}:{node.lineno} print()")
    assert not offenders, "\n".join(offenders)


def test_every_package_is_installed():
    """pyproject lists packages explicitly (plugins/ and adapters/ are mapped into harness_ext), so a new
    subpackage missing from the list works in an editable install and is absent from a wheel."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.relative_to(ROOT).parent.parts) for p in (ROOT / "harness_ext").rglob("__init__.py")}
    assert found - listed == set(), f"add these to [tool.setuptools] packages in pyproject.toml: {sorted(found - listed)}"


# --- the module import graph (no circles) -------------------------------------------------------------

def module_path(dotted: str) -> Path | None:
    """The file of module ``dotted`` (a package's ``__init__.py``), across the package-dir mapping of
    pyproject.toml (``harness_ext.plugins`` is plugins/, ``harness_ext.adapters`` is adapters/)."""
    package = max((p for p in SOURCES if dotted == p or dotted.startswith(p + ".")), key=len, default=None)
    if package is None:
        return None
    base = SOURCES[package].joinpath(*dotted[len(package):].split(".")[1:])
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.exists():
            return path
    return None


def owning_module(dotted: str) -> str:
    """The longest prefix of ``dotted`` that is a module: ``import pkg.mod.name`` where name is a function
    or a class imports ``pkg.mod``."""
    parts = dotted.split(".")
    while parts and module_path(".".join(parts)) is None:
        parts.pop()
    return ".".join(parts)


def import_edges(name: str, path: Path, is_pkg: bool):
    """Every module ``name`` imports inside harness_ext, module-level and lazy (inside functions) alike.

    ``from pkg import sub`` imports ``pkg.sub`` when sub is a module and ``pkg`` (its ``__init__``) when
    sub is a name defined there; ``import pkg.mod.name`` imports the module that defines name. Importing
    ``pkg.mod`` also runs ``pkg/__init__`` first, but that is not counted as an edge to ``pkg``: a
    package's ``__init__`` has always run before its children, so a child reaches its parent's
    ``__init__`` only by importing a name from it (``from . import x`` with x not a module), and that
    is what makes a circle with an ``__init__`` that re-exports the child.
    """
    package = name if is_pkg else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                target = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("harness_ext"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield sub if module_path(sub) is not None else owning_module(target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("harness_ext"):
                    yield owning_module(alias.name)


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports. The facade ``harness_ext/__init__.py`` resolves its public names
    from a table of strings on first attribute access (PEP 562), after the package has been imported;
    those strings are not imports, its own import statements are."""
    graph = {}
    for name, path, is_pkg in modules():
        graph[name] = {t for t in import_edges(name, path, is_pkg) if t and t != name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan 1972), each sorted, and a
    module importing itself."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):  # recursion depth is bounded by the package's ~300 modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def circle_path(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """The shortest circle through the component's first module (breadth-first over the component's edges),
    closed: ``[a, b, ..., a]``. Every module of a strongly connected component lies on one."""
    members, start = set(component), component[0]
    parent, queue = {}, [start]
    while queue:
        nxt = []
        for v in queue:
            for w in sorted(graph.get(v, ())):
                if w not in members or w in parent:
                    continue
                parent[w] = v
                if w == start:
                    walk = [start]
                    while walk[-1] != start or len(walk) == 1:
                        walk.append(parent[walk[-1]])
                    return walk[::-1]
                nxt.append(w)
        queue = nxt
    return [start, start]


@pytest.mark.slow
def test_no_import_circles():
    graph = import_graph()
    circles = import_circles(graph)
    lines = []
    for component in circles:
        inside = sorted((a, b) for a in component for b in graph[a] if b in component)
        lines.append(f"  {len(component)} modules: " + ", ".join(component))
        lines.append("    circle: " + " -> ".join(circle_path(graph, component)))
        lines += [f"    {a} imports {b}" for a, b in inside]
    assert not circles, ("import circles inside harness_ext (move the shared piece down into a module both "
                         "import, or into a new small one):\n" + "\n".join(lines))


def test_circle_finder_sees_lazy_imports_and_init_reexports(tmp_path):
    """The finder itself: a lazy import closes a circle; an ``__init__`` importing its child is no circle
    unless the child imports a name back from the ``__init__``."""
    graph = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": set(), "q": {"q.a"}, "q.a": {"q"}}
    assert import_circles(graph) == [["q", "q.a"]]
    graph["p.b"] = {"p.a"}
    assert import_circles(graph) == [["p.a", "p.b"], ["q", "q.a"]]
    assert circle_path(graph, ["p.a", "p.b"]) == ["p.a", "p.b", "p.a"]
    ring = {"a": {"b", "x"}, "b": {"c"}, "c": {"a"}, "x": {"c"}}
    assert circle_path(ring, ["a", "b", "c", "x"]) in (["a", "b", "c", "a"], ["a", "x", "c", "a"])
