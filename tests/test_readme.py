"""The README's commands (issue 16, item 10): every harness-ext command in its bash blocks parses, and the
Analyses block runs as written: its ingest provides every benchmark its analyses name."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
from pathlib import Path

import pytest

from harness_ext.cli import build_parser, main

README = Path(__file__).resolve().parents[1] / "README.md"


def bash_blocks(text: str) -> list:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def commands(block: str) -> list:
    """Shell commands of a block: continuations joined, comments dropped, '&&' chains split."""
    joined = re.sub(r"\\\n\s*", " ", block)
    out = []
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        out += [c.strip() for c in line.split("&&")]
    return out


#: The user guide the README links to: its commands are checked the same way.
GUIDE = sorted((README.parent / "docs").rglob("*.md"))


def section_block(title: str) -> list:
    """The first bash block after ``title`` in the README or a user-guide page (whichever has the title)."""
    for path in [README, *GUIDE]:
        text = path.read_text()
        if title in text:
            return commands(bash_blocks(text[text.index(title):])[0])
    raise AssertionError(f"no section {title!r} in the README or docs/")


def indented_commands(text: str) -> list:
    """harness-ext commands of indented (four-space) code blocks, which docs/frontier.md uses."""
    return [m.split(" #", 1)[0].strip() for m in re.findall(r"^ {4}(harness-ext .*)$", text, flags=re.M)]


def harness_commands() -> list:
    return [shlex.split(c)[1:] for path in [README, *GUIDE]
            for c in [c for b in bash_blocks(path.read_text()) for c in commands(b)] + indented_commands(path.read_text())
            if c.startswith("harness-ext ")]


@pytest.mark.parametrize("argv", harness_commands(), ids=lambda a: " ".join(a)[:60])
def test_every_readme_command_parses(argv):
    build_parser().parse_args(argv)


@pytest.mark.slow
def test_analyses_block_ingests_what_its_commands_use(tmp_path, monkeypatch, capsys):
    """Issue 16: the Analyses block ingested only HELM Classic, so its compare and CrossPred lines failed.
    The block's ingest runs as written (from the repository root); each analysis then finds its benchmark
    and matrix; stalk and prowl run in full (the others take minutes: they are timed in the issue's closing note)."""
    from conftest import SHARED_DATA, require

    from harness_ext.cli.options import matrix_from_args

    require(SHARED_DATA)
    if not (README.parent.parent / "shared" / "data").exists():
        pytest.skip("../shared/data does not resolve from this checkout")
    cmds = [shlex.split(c) for c in section_block("# Analyses")]
    assert all(c[0] == "harness-ext" for c in cmds)
    db = tmp_path / "readme.duckdb"
    monkeypatch.setenv("HARNESS_EXT_DB", str(db))
    monkeypatch.chdir(README.parent)
    ingests = [c for c in cmds if c[1] == "ingest"]
    assert ingests
    for c in ingests:
        assert main(c[1:]) == 0, c
    monkeypatch.chdir(tmp_path)  # outputs of the analyses stay out of the repository
    for c in cmds:
        if c[1] == "ingest":
            continue
        args = build_parser().parse_args(c[1:])
        assert args.benchmark, f"{' '.join(c)}: the store holds several benchmarks, so --benchmark is needed"
        df = matrix_from_args(args)
        assert df.shape[0] >= 4 and df.shape[1] >= 2, c
        if c[1] in ("stalk", "prowl"):
            assert main(c[1:]) == 0, c
    capsys.readouterr()
    assert (tmp_path / "harness-ext-out" / "helm_classic" / "prowl").is_dir()
    assert os.environ["HARNESS_EXT_DB"] == str(db)


@pytest.mark.slow  # ingests 269 files, reduces 57 datasets and predicts (~1 min of CPU)
def test_quickstart_runs_the_loop_as_written(tmp_path, monkeypatch, capsys):
    """The Quickstart once stopped at reduce, and its full-benchmark figure was chance-normalised (0.05 where
    lm-eval prints acc 0.28). Its harness-ext commands run as written (the pip install aside), from a folder of
    their own: ingest, reduce, predict a run reduce never saw, whose estimate is MMLU's acc with its interval."""

    cmds = [c for c in section_block("## Quickstart") if c.startswith("harness-ext ")]
    assert [shlex.split(c)[1] for c in cmds] == ["ingest", "reduce", "predict"]
    assert "lmeval" in section_block("## Quickstart")[0]  # the install: the reduced folder needs lm-eval's task index
    run = shlex.split(cmds[-1])[-1]
    assert (README.parent / run).is_file(), run
    # predict writes its lm-eval-layout file beside the run, but never into the package: a bundled run's goes here.
    before = set((README.parent / run).parent.iterdir())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HARNESS_EXT_DB", raising=False)
    for c in cmds:
        argv = [str(README.parent / run) if a == run else a for a in shlex.split(c)[1:]]
        assert main(argv) == 0, c
    assert set((README.parent / run).parent.iterdir()) == before
    out = capsys.readouterr().out
    assert "full-benchmark estimate: mmlu acc" in out
    doc = json.loads((tmp_path / "harness_ext_prediction_harness_ext_reduced.json").read_text())
    row = doc["results"]["mmlu"]
    assert row["alias"] == "mmlu (estimated from 8 of 57)"
    assert 0.25 < row["acc_lower,predicted"] <= row["acc,predicted"] <= row["acc_upper,predicted"] < 0.32
    assert abs(row["acc,predicted"] - 0.278) < 0.01  # Pythia-2.8B's size-weighted MMLU acc is 0.278
    assert (tmp_path / "reduced" / "harness_ext_estimate.py").is_file()
    if importlib.util.find_spec("lm_eval") is not None:  # as the Quickstart installs it
        assert "NOT SELF-CONTAINED" not in (tmp_path / "reduced" / "harness_ext_reduced.yaml").read_text()


def _named_in_backticks(pattern: str) -> list:
    """``(page, name)`` for every backticked name of the README, README_PLUGINS.md and docs/ matching ``pattern``."""
    pages = [README, README.parent / "README_PLUGINS.md", *GUIDE]
    return sorted({(p.relative_to(README.parent).as_posix(), m.rstrip(".,:;(")) for p in pages
                   for m in re.findall(r"`([^`\s]+)`", p.read_text()) if re.match(pattern, m)})


@pytest.mark.parametrize("page,path", _named_in_backticks(r"(harness_ext|plugins|adapters|tests|benchmarks|docs)/"))
def test_every_repository_path_the_docs_name_exists(page, path):
    """A user looks these up in the checkout: README_PLUGINS.md named harness_ext/plugins/registry.py, which is
    plugins/registry.py there (installed as harness_ext.plugins.registry)."""
    if page == "README_PLUGINS.md" and path.startswith("tests/"):
        return  # the example plugin package's own tests
    root = README.parent
    assert any((root / c).exists() for c in (path, path + ".py")), f"{page} names {path}, which is not in the repository"


@pytest.mark.parametrize("page,name", _named_in_backticks(r"harness_ext\.\w"))
def test_every_dotted_name_the_docs_name_imports(page, name):
    import importlib

    parts = name.split("(")[0].rstrip(".").split(".")
    if parts[-1] == "*":
        parts = parts[:-1]
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            assert hasattr(obj, attr), f"{page} names {name}: {'.'.join(parts[:i])} has no {attr}"
            obj = getattr(obj, attr)
        return
    raise AssertionError(f"{page} names {name}, which does not import")


def test_the_item_estimator_snippet_of_the_items_guide_runs_as_written():
    """docs/guide/items.md's first Python block (synthetic answers, AIPW on 50 random items) runs as written and
    gives an estimate inside its interval, near the new model's true mean over all items."""
    text = (README.parent / "docs" / "guide" / "items.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    assert "AIPW().fit(population_answers, items)" in code
    scope: dict = {}
    exec(compile(code, "docs/guide/items.md", "exec"), scope)
    res, truth = scope["res"], scope["new_model_answers"].mean()
    assert res.lower[0] <= res.estimate[0] <= res.upper[0] and abs(res.estimate[0] - truth) < 0.1


def _option_strings(parser) -> set:
    return {o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"}


def _commands() -> dict:
    """``{name: subparser}`` of every harness-ext command."""
    import argparse

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _docs_text() -> str:
    return "\n".join(p.read_text() for p in [README, README.parent / "README_PLUGINS.md", *GUIDE])


@pytest.mark.parametrize("command,option", sorted(
    [("harness-ext", o) for o in _option_strings(build_parser())]
    + [(c, o) for c, p in _commands().items() for o in _option_strings(p)
       # an option's underscore spelling is lm-eval's alias of the hyphenated one (documented once, in Conventions)
       if "_" not in o]))
def test_every_option_of_every_command_is_documented(command, option):
    """The user guide named none of `--lock-timeout`, `-q`'s long form, `models --min-score`, `pounce --folds`,
    `compare --k-max`, `reduce --group-name`, `predict --all` and 60 more options `--help` lists: each is named in
    the README, README_PLUGINS.md or docs/ (on its own, as `--option` followed by a space, `=`, a backtick, ...)."""
    assert re.search(re.escape(option) + r"(?![\w-])", _docs_text()), \
        f"{command} {option} is in --help but named nowhere in the README or docs/"


@pytest.mark.parametrize("kind", ["adapters", "similarity_measures", "selectors", "predictors", "weighting_schemes",
                                  "manifest_writers", "item_estimators"])
def test_every_built_in_plugin_is_named_in_the_plugin_docs(kind):
    """README_PLUGINS.md names every built-in plugin a command takes by name (most selectors, predictors,
    similarity measures and the adapters' names `--adapter` takes were named nowhere), and the ingest guide
    every adapter with the format it reads."""
    from harness_ext.plugin_manager import get_registrations

    plugins = (README.parent / "README_PLUGINS.md").read_text()
    built_in = sorted(n for n, r in get_registrations(kind).items() if r.distribution == "harness-ext")
    assert built_in
    missing = [n for n in built_in if f"`{n}`" not in plugins]
    assert not missing, f"README_PLUGINS.md does not name the built-in {kind} {missing}"
    if kind == "adapters":
        guide = (README.parent / "docs" / "guide" / "ingest.md").read_text()
        assert not [n for n in built_in if f"| `{n}` |" not in guide], "docs/guide/ingest.md's adapter table"


# --- The docs against the code they show: snippets, links and options that drift without failing a run. ---

#: Every page a user reads: the README, the plugin guide and docs/ (the site includes README_PLUGINS.md and
#: CHANGELOG.md through snippets, so their links are checked from the repository root, where they live).
PAGES = [README, README.parent / "README_PLUGINS.md", *GUIDE]


def _prose(path: Path) -> str:
    """A page without its fenced blocks (their text is code or output, not links or inline commands)."""
    return re.sub(r"^\s*```.*?^\s*```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def _python_blocks() -> list:
    return [(p.relative_to(README.parent).as_posix(), block) for p in PAGES
            for block in re.findall(r"^( *)```python\n(.*?)^\1```", p.read_text(encoding="utf-8"), flags=re.S | re.M)]


@pytest.mark.parametrize("page,block", _python_blocks(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_python_block_of_the_docs_parses_and_its_harness_ext_imports_resolve(page, block):
    """A snippet is copied as printed: it must be Python, and each name it imports from harness_ext must exist
    (the runs of the README's, the item guide's and the plugin package's snippets are tests of their own)."""
    import ast
    import importlib
    import textwrap

    indent, code = block
    tree = ast.parse(textwrap.dedent(code), filename=page)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "harness_ext":
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{page}: 'from {node.module} import {alias.name}' fails"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "harness_ext":
                    importlib.import_module(alias.name)


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension (mkdocs) gives a heading."""
    import unicodedata

    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", re.sub(r"`", "", text)).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(path: Path) -> set:
    return {_slug(h) for h in re.findall(r"^#+\s+(.+?)\s*#*\s*$", _prose(path), flags=re.M)}


def _relative_links() -> list:
    out = []
    for page in [*PAGES, README.parent / "CHANGELOG.md"]:
        prose = re.sub(r"`[^`\n]*`", "", _prose(page))  # a link written as code (`[name](url)`) is not one
        out += [(page.relative_to(README.parent).as_posix(), t) for t in re.findall(r"\]\(([^)\s]+)\)", prose)
                if not re.match(r"[a-z][\w+.-]*:", t)]
    return sorted(set(out))


@pytest.mark.parametrize("page,target", _relative_links())
def test_every_relative_link_of_the_docs_resolves(page, target):
    """A link to a file that moved, or to a heading that was renamed, opens nothing (on GitHub and on the site)."""
    path, _, fragment = target.partition("#")
    source = README.parent / page
    dest = (source.parent / path) if path else source
    assert dest.exists(), f"{page} links to {target}: {path} does not exist"
    if fragment and dest.suffix == ".md":
        assert fragment in _anchors(dest), f"{page} links to {target}: {dest.name} has no heading with that anchor"


def _inline_command_options() -> list:
    """``(page, command, option)`` for every ``--option`` an inline span gives after a harness-ext command
    (`` `harness-ext reduce --items 50` ``, `` `predict --all` ``), up to another program's name in the span."""
    commands_ = _commands()
    others = {"lm_eval", "lm-eval", "helm-run", "inspect", "lighteval", "jq", "python", "pytest", "pip"}
    out = set()
    for page in PAGES:
        for span in re.findall(r"`([^`\n]+)`", _prose(page)):
            command = None
            for i, tok in enumerate(span.split()):
                if tok in commands_ and (i == 0 or span.split()[i - 1] == "harness-ext"):
                    command = tok
                elif tok in others:
                    command = None
                elif command and tok.startswith("--"):
                    out.add((page.relative_to(README.parent).as_posix(), command,
                             re.split(r"[=\[]", tok)[0].rstrip(".,;:)'\"")))
    return sorted(out)


@pytest.mark.parametrize("page,command,option", _inline_command_options())
def test_every_option_an_inline_command_names_is_in_its_parser(page, command, option):
    """The reverse of the check above, for the prose: a renamed or removed option the text still gives
    (`reduce --foo`) is an error a reader meets only when typing it. lm-eval's underscore spellings count."""
    parser = _commands()[command]
    known = _option_strings(parser) | _option_strings(build_parser()) | {"--help", "-h"}
    assert option in known or option.replace("_", "-") in known, \
        f"{page} gives `{command} {option}`, which 'harness-ext {command} --help' does not list"


def _script_options() -> list:
    """``(page, script, option)`` for every ``--option`` the docs give a ``benchmarks/<script>.py`` command, in an
    inline span (which may wrap) or a line of a fenced block."""
    out = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        pieces = re.findall(r"`([^`]+)`", _prose(page)) + [line for block in bash_blocks(text) for line in commands(block)]
        for piece in pieces:
            for script, rest in re.findall(r"(benchmarks/\w+\.py)([^;]*)", piece):
                out |= {(page.relative_to(README.parent).as_posix(), script, tok.split("=")[0].rstrip(".,:)"))
                        for tok in rest.split() if tok.startswith("--")}
    return sorted(out)


@pytest.mark.parametrize("page,script,option", _script_options())
def test_every_option_the_docs_give_a_benchmark_script_is_in_its_parser(page, script, option):
    """The measurement commands the docs print beside their figures must still run as printed: each option they
    give a benchmark script is one its argparse (or the shared helpers it imports) declares."""
    root = README.parent / "benchmarks"
    path = README.parent / script
    assert path.is_file(), f"{page} runs {script}, which does not exist"
    sources = [path.read_text(encoding="utf-8")]
    sources += [p.read_text(encoding="utf-8") for p in root.glob("_*.py") if p.stem in sources[0]]
    assert any(f'"{option}"' in s or f"'{option}'" in s for s in sources), \
        f"{page} gives `{script} {option}`, which the script does not declare"


def _plugin_package() -> dict:
    """README_PLUGINS.md's complete minimal plugin package, as printed: its pyproject's distribution name and entry
    point, its module and its contract test."""
    text = (README.parent / "README_PLUGINS.md").read_text(encoding="utf-8")
    section = text[text.index("## A complete minimal plugin package"):]
    [toml] = re.findall(r"```toml\n(.*?)```", section, flags=re.S)[:1]
    module, contract = re.findall(r"```python\n(.*?)```", section, flags=re.S)[:2]
    name = re.search(r'^name = "([^"]+)"', toml, flags=re.M).group(1)
    entry, target = re.search(r'\[project\.entry-points\.harness_ext\]\n(\S+) = "([^"]+)"', toml).groups()
    return {"dist": name, "entry": entry, "module_name": target, "module": module, "contract": contract}


def test_the_plugin_guides_package_runs_as_written(site, tmp_path, monkeypatch):
    """README_PLUGINS.md's package (pyproject, module, tests/test_contract.py) was never run: installed as pip
    would install it, `harness-ext plugins` lists `first_k` and `names` from `harness-ext-firstk`, the guide's
    `reduce --selector first-k --format json --format names` writes `manifest.json` and `names.txt` (on one of the
    bundled Pythia runs), and its contract test passes."""
    import importlib

    import harness_ext.plugin_manager as pm_mod
    from plugin_site import run_cli

    pkg = _plugin_package()
    (site / f"{pkg['module_name']}.py").write_text(pkg["module"])
    info = site / f"{pkg['dist'].replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {pkg['dist']}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[harness_ext]\n{pkg['entry']} = {pkg['module_name']}\n")
    importlib.invalidate_caches()
    pm_mod.reset_default_plugin_manager()

    listed = run_cli("plugins").stdout.splitlines()
    for kind, name in (("selectors", "first_k"), ("manifest_writers", "names")):
        assert any(ln.split()[:3] == [kind, name, "ok"] and f"({pkg['dist']})" in ln for ln in listed), name

    data = README.parent / "harness_ext" / "data" / "pythia-5shot"
    db = tmp_path / "store.duckdb"
    assert run_cli("ingest", "--db", db, "-q", data / "pythia-160m").returncode == 0
    out = tmp_path / "reduced"
    r = run_cli("reduce", "--db", db, "--benchmark", "mmlu", "--selector", "first-k", "--format", "json",
                "--format", "names", "--out", out, "--no-plot", "--n-random", "20", "--n-random-subsets", "20")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert (out / "names.txt").read_text().split() == [s["name"] for s in manifest["subset"]]

    monkeypatch.setenv("HARNESS_EXT_LOAD_PLUGINS", "")
    scope: dict = {}
    exec(compile(pkg["contract"], "tests/test_contract.py", "exec"), scope)  # sets HARNESS_EXT_LOAD_PLUGINS itself
    pm_mod.reset_default_plugin_manager()
    pairs = scope["test_contract"].pytestmark[0].args[1]
    assert {reg.name for reg, _ in pairs} == {"first_k", "names"}
    for reg, check in pairs:
        scope["test_contract"](reg, check)
