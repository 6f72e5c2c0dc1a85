"""Reproductions of the second attack's side-file and plugin findings (issue 38 items 5, 6, 9, 10).

Each test is the attack's case as it was run: a command on a hostile side file must give one error
line naming the file (exit 1, no "unexpected" line, no hang); a misbehaving plugin must fail only what
it touches. Cases that could hang or exhaust memory if they regressed (a FIFO, ``/dev/zero``) and the
plugin cases (a real ``sys.exit``) run the command in a child process with a time and memory limit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from reliability_lib import BIG, ENV, FIX, _cli

BOARD = FIX / "csv" / f"{BIG}.csv"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    db = tmp_path_factory.mktemp("attack") / "s.duckdb"
    with Store.open(db) as s:
        ingest_paths(s, [BOARD], show_progress=False)
    return db


def _commands(db, out):
    """Every option that reads a side file, as a command line for the file ``f``."""
    return {
        "--chance-file": lambda f: ["matrix", "--db", db, "--benchmark", BIG, "--chance-file", f],
        "models --aliases": lambda f: ["models", "--db", db, "--aliases", f],
        "--costs": lambda f: ["reduce", "--db", db, "--benchmark", BIG, "--out", out, "--costs", f],
        "--weights": lambda f: ["reduce", "--db", db, "--benchmark", BIG, "--out", out, "--weights", f],
        "--column-meta": lambda f: ["ingest", "--db", out / "new.duckdb", "--column-meta", f, BOARD],
        "predict --manifest": lambda f: ["predict", "--manifest", f, BOARD],
    }


def _limit_memory():  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))


def _run(argv, env=None, timeout=120):
    """``harness-ext ARGV`` in a child process (3 GB address space, ``timeout`` seconds)."""
    return subprocess.run([sys.executable, "-m", "harness_ext", *map(str, argv)], capture_output=True, text=True,
                          env=env or ENV, timeout=timeout, preexec_fn=_limit_memory)


def _one_error_naming(rc, err, name):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 1, err
    assert "Traceback" not in err and "unexpected" not in err, err
    assert lines and lines[-1].startswith("harness-ext ") and "error:" in lines[-1] and name in lines[-1], err


# -- item 5 and item 10: a FIFO or /dev/zero as a side file -------------------------------------------------
@pytest.mark.parametrize("special", ["fifo", "dev_zero"])
@pytest.mark.parametrize("option", list(_commands("db", None)))
@pytest.mark.slow
def test_a_fifo_or_dev_zero_as_a_side_file_is_refused_at_once(store, tmp_path, option, special):
    if special == "fifo":
        f = tmp_path / ("side.json" if option in ("--weights", "--costs", "predict --manifest") else "side.yaml")
        os.mkfifo(f)
    else:
        f = tmp_path / ("zero.json" if option == "--weights" else "zero.yaml")
        f.symlink_to("/dev/zero")
    r = _run(_commands(store, tmp_path)[option](f))  # a FIFO hung and /dev/zero read until memory ran out
    _one_error_naming(r.returncode, r.stderr, f.name)
    if option != "--weights":  # --weights refuses the suffix first (it reads .json and .csv only)
        assert ("a FIFO" if special == "fifo" else "a device") in r.stderr, r.stderr
    assert "no such file" not in r.stderr  # item 10: --column-meta said "no such file"


# -- item 6: not UTF-8, 1e400, a list where a mapping belongs -------------------------------------------------
BAD = {
    "not_utf8.json": b"\xff\xfe{}",
    "not_utf8.yaml": b"a: \xff\n",
    "inf.json": b'{"arc": 1e400, "aliases": {"a": 1e400}, "weights": {"arc": 1e400}}',
    "inf.yaml": b"arc: 1.0e400\n",
    "list.yaml": b"aliases: [a, b]\n",
    "list.json": b'{"aliases": ["a", "b"]}',
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("option", list(_commands("db", None)))
def test_a_malformed_side_file_is_one_error_naming_the_file(store, tmp_path, option, name):
    f = tmp_path / name
    f.write_bytes(BAD[name])
    rc, _, err = _cli(_commands(store, tmp_path)[option](f))
    _one_error_naming(rc, err, str(f))


def test_the_reasons_say_what_is_wrong(store, tmp_path):
    cases = {"not_utf8.yaml": "not UTF-8", "inf.json": "1e400", "list.yaml": "'aliases' must be a mapping"}
    for name, reason in cases.items():
        f = tmp_path / name
        f.write_bytes(BAD[name])
        rc, _, err = _cli(["models", "--db", store, "--aliases", f])
        assert rc == 1 and reason in err, err


# -- item 9: plugins ---------------------------------------------------------------------------------------
PLUGIN = '''
import sys
import numpy as np
from harness_ext import hookimpl, Adapter, ResultRecord, SimilarityMeasure

def can_handle(src):
    {can_handle}
    return src.path.suffix == ".fake"

def read(src):
    {read}
    yield ResultRecord(model="m", benchmark="fakebench", dataset="d", metric="acc", value=0.5)

@hookimpl
def harness_ext_adapters():
    yield Adapter(name="{name}", can_handle=can_handle, read=read, description="attack adapter")

@hookimpl
def harness_ext_similarity_measures():
    yield SimilarityMeasure(name="all-nan", func=lambda X: np.full((X.shape[1], X.shape[1]), np.nan))
'''


def _site(tmp_path, name="attack", can_handle="pass", read="pass"):
    """A site folder with the distribution ``harness-ext-attack`` installed (module and entry point)."""
    site = tmp_path / "site"
    info = site / "harness_ext_attack-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "attack_plugin.py").write_text(textwrap.dedent(PLUGIN.format(name=name, can_handle=can_handle, read=read)))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-ext-attack\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[harness_ext]\nharness-ext-attack = attack_plugin\n")
    env = {k: v for k, v in ENV.items() if k != "HARNESS_EXT_LOAD_PLUGINS"}
    return {**env, "PYTHONPATH": os.pathsep.join([str(site), env.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("where", ["can_handle", "read"])
@pytest.mark.parametrize("action", ["sys.exit(3)", "raise KeyboardInterrupt"])
@pytest.mark.slow
def test_an_adapter_exiting_fails_only_its_files(tmp_path, where, action):
    env = _site(tmp_path, **{where: f"if src.path.name.startswith('x'): {action}"})
    (tmp_path / "x.fake").write_text("x")
    r = _run(["ingest", "--db", tmp_path / "s.duckdb", tmp_path / "x.fake", BOARD], env=env)
    assert r.returncode == 0, r.stderr  # the ingest used to end here, silently, with the plugin's code
    assert "1 file ingested" in r.stdout and "1 skipped" in r.stdout, r.stdout
    assert "harness-ext-attack" in r.stderr and ("SystemExit" if "exit" in action else "KeyboardInterrupt") in r.stderr


@pytest.mark.slow
def test_a_similarity_nan_for_every_pair_is_reported(store, tmp_path):
    env = _site(tmp_path)
    r = _run(["reduce", "--db", store, "--benchmark", BIG, "--out", tmp_path / "o", "--selector", "greedy_coverage",
              "--similarity", "all-nan", "--n-random", "5", "--n-random-subsets", "5", "--no-plot"], env=env)
    assert r.returncode == 1 and "'all_nan'" in r.stderr and "harness-ext-attack" in r.stderr, r.stderr
    assert "NaN" in r.stderr and "unexpected" not in r.stderr


@pytest.mark.slow
def test_an_adapter_named_like_a_built_in_breaks_only_itself(tmp_path):
    env = _site(tmp_path, name="csv")
    r = _run(["ingest", "--db", tmp_path / "s.duckdb", BOARD], env=env)
    assert r.returncode == 0 and "1 file ingested" in r.stdout, r.stderr  # every ingest used to fail
    assert "harness-ext-attack" in r.stderr and "'csv'" in r.stderr and "disabled" in r.stderr
    p = _run(["plugins", "--kind", "adapters"], env=env)
    line = next(ln for ln in p.stdout.splitlines() if "harness-ext-attack" in ln)
    assert "clash" in line and "csv" in line
