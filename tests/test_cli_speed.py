"""The CLI starts without numerics: --help, --version and every COMMAND --help import no
numpy/pandas/scipy/scikit-learn/matplotlib, and `plugins` none of scipy/sklearn/pandas/matplotlib.

Checked with ``python -X importtime`` in a fresh interpreter (what a user's shell pays), not by
timing: timings on a shared CI machine are noise; the import list is what makes start-up slow.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness_ext.cli.options import COMMANDS

HEAVY = ("sklearn", "scipy", "matplotlib")
NUMERIC = HEAVY + ("numpy", "pandas", "duckdb")


def _imported(*argv: str) -> set:
    env = {**os.environ, "HARNESS_EXT_LOAD_PLUGINS": ""}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "harness_ext", *argv],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "harness_ext.cli" in names
    return names


def _top(names: set) -> set:
    return {n.split(".")[0] for n in names}


def test_help_imports_no_numerics():
    top = _top(_imported("--help"))
    assert not top & set(NUMERIC), sorted(top & set(NUMERIC))


def test_version_imports_no_numerics():
    assert not _top(_imported("--version")) & set(NUMERIC)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_help_imports_no_numerics(command):
    top = _top(_imported(command, "--help"))
    assert not top & set(NUMERIC), (command, sorted(top & set(NUMERIC)))


def test_plugins_imports_no_numerics():
    """Registrations name their implementations by reference (harness_ext.types.Lazy): listing them imports none."""
    top = _top(_imported("plugins"))
    assert not top & set(NUMERIC), sorted(top & set(NUMERIC))


def test_every_builtin_reference_loads():
    """Each built-in registration's reference imports to the object it names (a typo would fail only on use)."""
    from harness_ext.plugin_manager import get_registrations
    from harness_ext.methods.similarity import measures as similarity

    from dataclasses import fields

    lazy = {"cls", "func", "write", "can_handle", "read"}
    for kind in ("similarity_measures", "selectors", "predictors", "weighting_schemes", "adapters", "manifest_writers"):
        for name, reg in get_registrations(kind).items():
            for f in lazy & {f.name for f in fields(reg)}:
                assert callable(getattr(reg, f)), (kind, name, f)
    # the registry repeats the measures' descriptions so that it imports no numerics: they must not drift
    regs = get_registrations("similarity_measures")
    for name, (func, description, binary) in similarity._FUNCS.items():
        assert (regs[name].func, regs[name].description, regs[name].binary_only) == (func, description, binary), name


def test_base_does_not_import_sklearn():
    code = "import sys, harness_ext.base; print(any(m.split('.')[0] == 'sklearn' for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_literal_choices_match_the_method_modules():
    """commands.py repeats a few constants so that it imports no numerics; they must not drift."""
    from harness_ext.cli import options as commands
    from harness_ext.methods import compare, pounce, prowl, weighting
    from harness_ext.store import db as store
    from harness_ext.types import REGISTRATION_TYPES

    assert tuple(sorted(REGISTRATION_TYPES)) == commands.PLUGIN_KINDS
    assert tuple(prowl.TIES) == commands.PROWL_TIES
    assert tuple(compare.DEFAULT_SELECTORS) == commands.COMPARE_DEFAULT_SELECTORS
    assert tuple(pounce.ANALYSES) == commands.POUNCE_ANALYSES
    assert tuple(weighting.SCHEME_NAMES_DEFAULT) == commands.WEIGHTS_SCHEMES
    assert tuple(weighting.SIMILARITY_MEASURES) == commands.WEIGHTS_SIMILARITIES
    assert tuple(weighting.ANALYSES) == commands.WEIGHTS_ANALYSES
    assert f"${store.DB_ENV} or ./{store.DEFAULT_DB_NAME}" in commands.DEFAULT_DB_HELP


def test_every_command_resolves_to_a_run_function():
    from harness_ext.cli.options import resolve_run

    for name, command in COMMANDS.items():
        assert callable(resolve_run(command.run)), name


def test_clone_and_params_follow_sklearn():
    from sklearn.base import clone as sk_clone

    from harness_ext.base import clone
    from harness_ext.plugin_manager import get_registrations

    for kind in ("selectors", "predictors", "weighting_schemes"):
        for name, reg in get_registrations(kind).items():
            est = reg.cls()
            params = est.get_params()
            for c in (clone(est), sk_clone(est)):
                assert type(c) is type(est)
                assert c.get_params().keys() == params.keys(), name
            assert repr(est).startswith(type(est).__name__ + "("), name
    est = get_registrations("predictors")["ridge"].cls()
    key = next(iter(est.get_params()))
    with pytest.raises(ValueError):
        est.set_params(not_a_parameter=1)
    assert est.set_params(**{key: est.get_params()[key]}) is est


def test_help_built_lazily_lists_every_command(capsys):
    """main builds only the options of the commands on its command line: --help still lists every command, a
    command parses as with the full parser, and an unknown one is refused naming the choices."""
    from harness_ext.cli import build_parser, main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name, command in COMMANDS.items():
        assert name in out and command.help[:40] in " ".join(out.split()), name
    required = {"predict": ["results/", "--manifest", "reduced/manifest.json"]}
    for name in COMMANDS:
        argv = [name, *required.get(name, [])]
        assert vars(build_parser(only={name}).parse_args(argv)) == vars(build_parser().parse_args(argv)), name
    with pytest.raises(SystemExit):
        main(["reduse"])
    assert "invalid choice: 'reduse'" in capsys.readouterr().err
