"""No silent loss, no injection (issue 19 items 1, 2, 4).

- Hostile names (quotes, newlines, braces, ``../``, unicode, 500 characters) go through each format's
  serializer: every output parses in lm-eval's own YAML loader and in pyhocon (HELM's reader) and lists
  exactly the subset.
- ``--db`` must be a store or a new path; anything else is an error naming it, and the file is untouched.
- ``--group-name`` and writer outputs stay inside ``--out``; a writer returning the wrong thing is a
  PluginError naming it.
- The CLI guard: an unexpected exception is one line with exit 1; ``-v`` shows the traceback.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from harness_ext.errors import HarnessExtError, PluginError
from harness_ext.methods.reduction.harness_names import HELM_SEPARATORS
from harness_ext.methods.reduction.helm_run_args import helm_entry_problem
from harness_ext.methods.reduction.manifest import example_manifest, write_outputs
from harness_ext.safe_output import check_group_name, hocon_string, list_line, yaml_text
from harness_ext.store.db import Store
from harness_ext.store.globs import is_glob

pyhocon = pytest.importorskip("pyhocon")

#: Names a third-party result file can carry. The first group is storable; the second is refused at ingest
#: (control characters, line breaks) but must still be handled by the writers (old stores, edited manifests):
#: through the serializers, or refused with a clear error where a format cannot hold them.
STORABLE = ['q"uote', "it's", "{a}", "${x}", "a}b{", "../../escaped", "/abs/path", "Ünïcødé 数据 😀", "a\\b",
            "#hash", "key: value", "- dash", "yes", "null", "1e3", "&anchor *alias !tag", "%p | > @", "a,b",
            "x" * 500, "rtl\u202eltr", "\ufeffbom", "tab\there", '"""', "[list]", "::", "?"]
REFUSED = ["evil}\n]\nx: [", "cr\rlf", "nul\x00byte", "ls\u2028sep", "ne\x85l", "bell\x07"]
HOSTILE = STORABLE + REFUSED
#: Control codes pyhocon cannot read back from any string: the HELM writer refuses them.
NOT_HOCON = {"nul\x00byte", "bell\x07"}
#: Names lm-eval would read as a path when it saves a task's samples: left out of the group and the task list.
PATH_LIKE = {n for n in HOSTILE if "/" in n or "\\" in n}


class _FunctionTagLoader(yaml.SafeLoader):
    """``yaml.safe_load`` that reads lm-eval's ``!function module.name`` tag as its text, as lm-eval's own loader does
    with ``resolve_func=False``."""


_FunctionTagLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _lm_eval_load_yaml():
    try:
        from lm_eval.tasks._yaml_loader import load_yaml
    except ImportError:  # lm-eval not installed, or without this module: safe_load, reading !function as text
        return lambda p: yaml.load(Path(p).read_text(encoding="utf-8"), Loader=_FunctionTagLoader)
    return lambda p: load_yaml(p, resolve_func=False, recursive=False)


def _manifest(names, bench="mmlu", skipped=()):
    m = example_manifest()
    m["subset"] = [{"step": i + 1, "name": n, "benchmark": bench, "metric": "acc", "task": None, "num_fewshot": 5,
                    "coverage": 0.5} for i, n in enumerate(names)]
    m["subset"] += [{"step": len(names) + i + 1, "name": n, "benchmark": "other", "metric": "acc", "task": None,
                     "num_fewshot": None, "coverage": 0.5} for i, n in enumerate(skipped)]
    return m


def conf_text(out: Path, group: str) -> str:
    return (out / f"run_entries_{group}.conf").read_text(encoding="utf-8")


def _check_outputs(out: Path, group: str, names: list, skipped=(), with_list=True, shots=5):
    load_yaml = _lm_eval_load_yaml()
    cfg = load_yaml(out / f"{group}.yaml")
    listed = [t["task"] if isinstance(t, dict) else t for t in cfg["task"]]
    assert listed == [f"mmlu_{n}" for n in names]
    assert cfg["group"] == group and set(cfg) == {"group", "group_alias", "task", "aggregate_metric_list", "metadata"}
    assert " (estimated from " in cfg["group_alias"]
    conf = pyhocon.ConfigFactory.parse_file(str(out / f"run_entries_{group}.conf"))
    assert set(conf) == {"entries"}
    descs = [e["description"] for e in conf["entries"]]
    # A subject holding one of HELM's separators would add run arguments: it is named in a comment instead.
    # Each entry asks for the manifest's shots, as HELM's run expander reads them (none known: HELM's default).
    asked = "" if shots is None else f",max_train_instances={shots}"
    # A subject that is a path, a URL or holds quotes is left out too, said in the header (test_hostile_helm_args.py).
    wanted = [f"mmlu:subject={n},model=text,data_augmentation=canonical{asked}" for n in names
              if not HELM_SEPARATORS.search(n)]
    assert descs == [d for d in wanted if helm_entry_problem(d) is None]
    refused = [d for d in wanted if helm_entry_problem(d)]
    assert not refused or f"# Left out: {len(refused)} run entr" in conf_text(out, group)
    unrun = [n for n in names if HELM_SEPARATORS.search(n)]
    assert not unrun or all(json.dumps(n, ensure_ascii=False) in conf_text(out, group) for n in unrun)
    assert all(set(e) == {"description", "priority"} for e in conf["entries"])
    if with_list:
        lines = (out / f"{group}_tasks.txt").read_text(encoding="utf-8").split("\n")
        # A name with a glob character is left out: lm_eval --tasks would match it against its own tasks; so is one
        # with a comma, where it would split its list (test_hostile_task_list.py).
        assert lines == [n for n in [f"mmlu_{n}" for n in names] + list(skipped) if not is_glob(n) and "," not in n] + [""]


@pytest.mark.parametrize("name", HOSTILE, ids=[repr(n)[:20] for n in HOSTILE])
def test_each_hostile_name_parses_in_lm_eval_and_pyhocon(tmp_path, name):
    m = _manifest(["anatomy", name], skipped=[name])
    if name in PATH_LIKE:
        # lm-eval's --log_samples would save such a task's samples through folders that do not exist (lost): the
        # group and the task list leave it out, the group's header names it (test_hostile_task_names.py).
        write_outputs(m, tmp_path, ["lm_eval_yaml", "helm_conf", "task_list"])
        cfg = _lm_eval_load_yaml()(tmp_path / f"{m['group_name']}.yaml")
        assert [t["task"] for t in cfg["task"]] == ["mmlu_anatomy"]
        head = (tmp_path / f"{m['group_name']}.yaml").read_text(encoding="utf-8").split("\ngroup:")[0]
        assert "Left out of the group: 1 subset dataset whose lm-eval task is named with a '/'" in head
        # The other benchmark's dataset of that name is no lm-eval task, and lm_eval --tasks would read a path as a
        # file: the task list leaves it out too (test_hostile_task_list.py).
        assert (tmp_path / f"{m['group_name']}_tasks.txt").read_text(encoding="utf-8") == "mmlu_anatomy\n"
        pyhocon.ConfigFactory.parse_file(str(tmp_path / f"run_entries_{m['group_name']}.conf"))
        return
    if name in NOT_HOCON:
        # A control character is not a run argument's: the entry is left out, named escaped in the header.
        write_outputs(m, tmp_path, ["helm_conf", "lm_eval_yaml"])
        conf = pyhocon.ConfigFactory.parse_file(str(tmp_path / f"run_entries_{m['group_name']}.conf"))
        assert [e["description"] for e in conf["entries"]] == [
            "mmlu:subject=anatomy,model=text,data_augmentation=canonical,max_train_instances=5"]
        assert json.dumps(name)[1:-1] in conf_text(tmp_path, m["group_name"])
        with pytest.raises(HarnessExtError, match="cannot be written to a HOCON conf"):
            hocon_string(name)
        cfg = _lm_eval_load_yaml()(tmp_path / f"{m['group_name']}.yaml")
        assert [t["task"] for t in cfg["task"]] == ["mmlu_anatomy", f"mmlu_{name}"]
        return
    formats = ["lm_eval_yaml", "helm_conf"] + (["task_list"] if name in STORABLE else [])
    write_outputs(m, tmp_path, formats)
    _check_outputs(tmp_path, m["group_name"], ["anatomy", name], skipped=[name], with_list=name in STORABLE)


def test_all_hostile_names_at_once(tmp_path):
    names = [n for n in HOSTILE if n not in NOT_HOCON and n not in PATH_LIKE]
    m = _manifest(names, skipped=HOSTILE)
    write_outputs(m, tmp_path, ["json", "lm_eval_yaml", "helm_conf"])
    _check_outputs(tmp_path, m["group_name"], names, with_list=False)
    assert json.loads((tmp_path / "manifest.json").read_text())["subset"] == m["subset"]


@pytest.mark.parametrize("name", REFUSED, ids=[repr(n)[:20] for n in REFUSED])
def test_a_name_that_cannot_be_one_line_is_refused_in_the_task_list(tmp_path, name):
    with pytest.raises(HarnessExtError, match="cannot be one line"):
        write_outputs(_manifest(["anatomy", name]), tmp_path, ["task_list"])
    with pytest.raises(HarnessExtError):
        list_line(name)


def test_serialisers_round_trip():
    for n in HOSTILE:
        assert yaml.safe_load(yaml_text({"k": [n]})) == {"k": [n]}
        if n not in NOT_HOCON:
            assert pyhocon.ConfigFactory.parse_string(f"a: {hocon_string(n)}")["a"] == n
    with pytest.raises(HarnessExtError, match="control character"):
        hocon_string("nul\x00")


# -- end to end: hostile names in a real ingest -> reduce ------------------------------------------
def _cli(*args):
    """Run the CLI in this process (a subprocess costs seconds of imports per call)."""
    import contextlib
    import io
    import types

    from harness_ext.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return types.SimpleNamespace(returncode=rc, stdout=out.getvalue(), stderr=err.getvalue())


def _hostile_csv(path: Path, names, n_models=14, seed=0):
    rng = np.random.default_rng(seed)
    ability = rng.random(n_models)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "benchmark", "dataset", "metric", "value"])
        for j, n in enumerate(names):
            difficulty = rng.random()
            for i in range(n_models):
                w.writerow([f"m{i}", "mmlu", n, "acc", f"{np.clip(ability[i] - 0.5 * difficulty + 0.05 * rng.standard_normal() + 0.4, 0, 1):.4f}"])


@pytest.mark.slow
def test_reduce_with_hostile_dataset_names_writes_parsable_configs_of_exactly_the_subset(tmp_path):
    # Names lm-eval would read as paths stop reduce with the task named (test_hostile_task_names.py).
    names = [n for n in STORABLE[:12] if n not in PATH_LIKE] + ["x" * 500, "Ünïcødé 数据 😀"]
    src = tmp_path / "hostile.csv"
    _hostile_csv(src, names)
    db, out = tmp_path / "h.duckdb", tmp_path / "out"
    r = _cli("ingest", "--db", db, src)
    assert r.returncode == 0, r.stderr
    r = _cli("reduce", "--db", db, "--budget", "6", "--n-random", "20", "--normalise", "none", "--out", out)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    subset = [s["name"] for s in m["subset"]]
    assert len(subset) == 6 and set(subset) <= set(names)
    _check_outputs(out, "harness_ext_reduced", subset, shots=None)  # results that name no shots
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["manifest.json", "harness_ext_reduced.yaml", "run_entries_harness_ext_reduced.conf", "harness_ext_reduced_tasks.txt",
         "error_vs_budget.png", "harness_ext_estimate.py"])


def test_names_with_line_breaks_or_nul_are_refused_at_ingest_naming_the_file(tmp_path):
    with Store.open(":memory:") as s:
        from harness_ext.store.ingest import ingest_paths

        for i, bad in enumerate(REFUSED):
            p = tmp_path / f"bad{i}.csv"
            with open(p, "w", newline="", encoding="utf-8") as fh:
                csv.writer(fh).writerows([["model", "dataset", "value"], ["m1", "ok", "0.5"], ["m" + bad, "d", "0.4"]])
            (f,) = ingest_paths(s, [p], show_progress=False).files
            assert f.status == "skipped" and "control character" in f.reason, (bad, f)
        assert s.counts()["results"] == 0


# -- --db must be a store or a new path -------------------------------------------------------------
def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def a_store(tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "ok.duckdb"
    fix = Path(__file__).parent / "fixtures" / "bigbench"
    from harness_ext.store.ingest import ingest_paths

    with Store.open(db) as s:
        ingest_paths(s, [fix], show_progress=False)
    return db


def _not_stores(tmp_path, a_store):
    data = a_store.read_bytes()
    files = {"json": b'{"results": {}}', "csv": b"model,dataset,value\nm,d,0.5\n", "empty": b"",
             "truncated": data[: len(data) // 2], "header_only": data[:4096], "flipped": data[:8] + b"XXXX" + data[12:]}
    out = {}
    for k, v in files.items():
        p = tmp_path / f"{k}.duckdb"
        p.write_bytes(v)
        out[k] = p
    (tmp_path / "adir").mkdir()
    out["directory"] = tmp_path / "adir"
    return out


@pytest.mark.parametrize("command", ["ingest", "info", "matrix"])
def test_db_that_is_not_a_store_is_an_error_naming_it_and_is_untouched(tmp_path, a_store, command):
    fix = Path(__file__).parent / "fixtures" / "open_llm_leaderboard"
    for kind, p in _not_stores(tmp_path, a_store).items():
        before = None if p.is_dir() else _sha(p)
        args = [command, "--db", p] + ([fix] if command == "ingest" else [])
        r = _cli(*args)
        assert r.returncode == 1, (kind, r.stdout, r.stderr)
        assert "not a harness-ext store (or corrupt)" in r.stderr and str(p) in r.stderr, (kind, r.stderr)
        assert "Traceback" not in r.stderr and "ingested" not in r.stdout
        if before is not None:
            assert _sha(p) == before, kind


def test_a_duckdb_file_of_something_else_is_not_written_to(tmp_path):
    import duckdb

    p = tmp_path / "other.duckdb"
    con = duckdb.connect(str(p))
    con.execute("CREATE TABLE mine AS SELECT 1 AS x")
    con.close()
    with pytest.raises(HarnessExtError, match="not a harness-ext store"):
        Store.open(p)
    con = duckdb.connect(str(p), read_only=True)
    assert [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()] == ["mine"]
    con.close()


def test_only_a_bare_duckdb_header_skips_the_table_check(tmp_path, monkeypatch):
    """Store.open leaves out its catalog query only for a file it created that is still an empty database: a file
    with a table (checkpointed, or only in its WAL) is never taken for one, so it is refused as above."""
    import duckdb

    from harness_ext.store import db

    p = tmp_path / "other.duckdb"
    con = duckdb.connect(str(p))
    assert db._empty_database(str(p))
    con.execute("CREATE TABLE mine AS SELECT 1 AS x")
    assert not db._empty_database(str(p))  # in the WAL
    con.close()
    assert not db._empty_database(str(p))  # checkpointed
    # A foreign file appearing between the existence check and the connect still gets the catalog query.
    monkeypatch.setattr(db.os.path, "lexists", lambda q: False)
    with pytest.raises(HarnessExtError, match="not a harness-ext store"):
        Store.open(p)
    monkeypatch.undo()
    with Store.open(tmp_path / "new.duckdb") as s:
        assert s.counts()["results"] == 0


def test_ingest_counts_come_from_the_committed_store(tmp_path, monkeypatch):
    """A store that silently drops a source: ingest must not report its rows."""
    from harness_ext.store.ingest import ingest_paths

    fix = Path(__file__).parent / "fixtures" / "open_llm_leaderboard"
    real = Store._write_batch

    def lose(self, items, *rest):
        outcomes = real(self, items, *rest)
        self.con.execute("DELETE FROM results WHERE source_id IN (SELECT source_id FROM sources WHERE path LIKE '%aerdincdal%')")
        self.con.execute("DELETE FROM sources WHERE path LIKE '%aerdincdal%'")
        return outcomes

    monkeypatch.setattr(Store, "_write_batch", lose)
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [fix], show_progress=False)
        lost = [f for f in report.files if "aerdincdal" in f.path]
        assert lost and all(f.status == "skipped" and "did not keep" in f.reason for f in lost)
        assert report.n_results == s.counts()["results"]


# -- output names ------------------------------------------------------------------------------------
@pytest.mark.parametrize("group", ["../../escaped", "/tmp/abs", "x" * 300, "a/b", "..", ".hidden", "", "a b", "q\"uote"])
def test_unsafe_group_names_are_refused_before_any_work(tmp_path, group):
    with pytest.raises(HarnessExtError, match="group name"):
        check_group_name(group)
    r = _cli("reduce", "--db", tmp_path / "none.duckdb", "--group-name", group, "--out", tmp_path / "out")
    assert r.returncode == 1 and "group name" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "escaped.yaml").exists()


def _writer(write):
    from harness_ext.types import ManifestWriter

    reg = ManifestWriter(name="evil", write=write)
    reg.source = "evil (harness-ext-evil)"
    return reg


@pytest.mark.parametrize("write, match", [
    (lambda m, out: None, "returned NoneType"),
    (lambda m, out: 3, "returned int"),
    (lambda m, out: "manifest.json", "returned str"),
    (lambda m, out: [3], "returned a int"),
    (lambda m, out: [(Path(out) / ".." / "ESCAPED.txt").write_text("x") and Path(out) / ".." / "ESCAPED.txt"], "outside"),
    (lambda m, out: ["/etc/passwd"], "outside"),
    (lambda m, out: ["never_written.txt"], "not a file"),
])
def test_a_misbehaving_writer_is_a_plugin_error_naming_it(tmp_path, monkeypatch, write, match):
    import harness_ext.plugin_manager as pm

    monkeypatch.setattr(pm, "get_registration", lambda kind, name, pm=None: _writer(write))
    out = tmp_path / "out"
    with pytest.raises(PluginError, match=match) as err:
        write_outputs(example_manifest(), out, ["evil"])
    assert "harness-ext-evil" in str(err.value)


def test_writer_handle_refuses_names_outside(tmp_path):
    from harness_ext.safe_output import OutputDir

    out = OutputDir(tmp_path, "w")
    assert out.write_text("ok.txt", "x") == "ok.txt" and (tmp_path / "ok.txt").read_text() == "x"
    for bad in ("../x", "/etc/x", "a/b", "..", "", "x" * 300):
        with pytest.raises(HarnessExtError):
            out.write_text(bad, "x")


# -- the CLI boundary guard ----------------------------------------------------------------------------
def test_unexpected_exception_is_one_line_and_v_shows_the_traceback(monkeypatch, capsys):
    import harness_ext.cli.info as info_mod
    from harness_ext.cli import main

    def boom(args):
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(info_mod, "run", boom)
    assert main(["info", "--db", "x.duckdb"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("harness-ext info: error: unexpected RuntimeError") and "x.duckdb" in err and "kaboom" in err
    assert main(["info", "-v", "--db", "x.duckdb"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "kaboom" in err
    assert main(["-v", "info", "--db", "x.duckdb"]) == 1
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setattr(info_mod, "run", lambda a: (_ for _ in ()).throw(MemoryError()))
    assert main(["info"]) == 1
    assert "unexpected MemoryError" in capsys.readouterr().err


def test_a_relative_out_accepts_writer_paths_relative_to_the_working_directory(tmp_path, monkeypatch):
    """`reduce --out reduced` (the README Quickstart): writers return 'reduced/manifest.json'."""
    from harness_ext.errors import PluginError
    from harness_ext.safe_output import checked_outputs

    monkeypatch.chdir(tmp_path)
    out = Path("reduced")
    out.mkdir()
    (out / "manifest.json").write_text("{}")
    assert checked_outputs([out / "manifest.json"], out, "json") == [out / "manifest.json"]
    assert checked_outputs(["manifest.json"], out, "json") == [out / "manifest.json"]
    (tmp_path / "elsewhere.txt").write_text("x")
    with pytest.raises(PluginError, match="outside the output directory"):
        checked_outputs(["elsewhere.txt"], out, "json")


@pytest.mark.parametrize("name, shown", [
    ("café/中文", '"café/中文"'),  # letters of every script as they are
    ("a\nb\x7fc", '"a\\nb\\u007fc"'),  # controls: JSON's escape
    ("a\u2028b\x85c", '"a\\u2028b\\u0085c"'),  # line breaks JSON leaves raw
    ("ab\u202ecd", '"ab\\u202ecd"'),  # a right-to-left override would show the name reordered
    ("bad\udc80", '"bad\\udc80"'),  # a lone surrogate cannot be written as UTF-8
    ('q"\\', '"q\\"\\\\"'),
])
def test_a_quoted_name_is_one_readable_line(name, shown):
    from harness_ext.safe_output import quoted

    assert quoted(name) == shown and json.loads(quoted(name)) == name
    assert len(quoted(name).splitlines()) == 1 and quoted(name).encode("utf-8")


@pytest.mark.parametrize("how", ["json", "matrix"])
def test_an_output_file_interrupted_while_written_keeps_its_old_content(tmp_path, monkeypatch, capsys, how):
    """``--json FILE`` and ``matrix -o FILE`` are whole or as they were: a Ctrl-C while the new text is moved into
    place leaves the earlier file unchanged and no temporary file behind (a real leaderboard, Arena-Hard-Auto)."""
    import harness_ext.safe_output as so
    from harness_ext.cli import main

    db = str(tmp_path / "s.duckdb")
    fixture = Path(__file__).parent / "fixtures" / "csv" / "arena_hard_auto_leaderboard_v0.1.csv"
    assert main(["ingest", "--db", db, str(fixture)]) == 0
    out = tmp_path / ("out.json" if how == "json" else "out.csv")
    cmd = ["matrix", "--db", db] + (["--json", str(out)] if how == "json" else ["-o", str(out)])
    assert main(cmd) == 0
    before = out.read_bytes()
    assert before and (json.loads(before) if how == "json" else before.startswith(b"model,"))

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(so.os, "replace", interrupted)
    assert main(cmd) == 130
    assert "interrupted" in capsys.readouterr().err
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_run_hints_quote_a_folder_with_a_space_so_they_can_be_pasted(tmp_path):
    """The Run lines of the group YAML and the HELM conf are shell commands: a folder named with a space (or a
    non-ASCII letter) is one word in them, and a plain folder is written as before."""
    import shlex

    m = example_manifest()
    for folder in ("réd v2", "reduced"):
        out = tmp_path / folder
        write_outputs(m, out, ["lm_eval_yaml", "helm_conf"])
        for name, flag in (("harness_ext_example.yaml", "--include_path"),
                           ("run_entries_harness_ext_example.conf", "--conf-paths")):
            run = next(line for line in (out / name).read_text(encoding="utf-8").splitlines()
                       if line.startswith("# Run: "))
            words = shlex.split(run[len("# Run: "):])
            given = Path(words[words.index(flag) + 1])
            assert given in (out, out / name), run
            assert (f"'{out}" in run) == (" " in folder), run


OBSSCALING = Path(__file__).parent / "fixtures" / "csv" / "obsscaling_base_llm_benchmark_eval.csv"


@pytest.fixture(scope="module")
def scaling_store(tmp_path_factory):
    """The real Observational Scaling Laws table (8 base models x 8 benchmarks) in a store."""
    from harness_ext.cli import main

    db = tmp_path_factory.mktemp("scaling") / "s.duckdb"
    assert main(["ingest", "-q", "--db", str(db), str(OBSSCALING)]) == 0
    return db


@pytest.mark.parametrize("command, extra, name", [
    ("stalk", ["--axis", "datasets"], "stalk_counts.csv"),
    ("stalk", ["--axis", "datasets"], "stalk_dataset_pairs.csv"),
    ("stalk", ["--axis", "datasets"], "stalk_heatmap.png"),
    ("prowl", ["--n-random", "5", "--similarity", "pearson"], "prowl_table.csv"),
    ("prowl", ["--n-random", "5", "--similarity", "pearson"], "prowl_coverage.png"),
    ("weights", ["--draws", "50", "--permutations", "5"], "summary.json"),
    ("compare", ["--dense", "--trials", "2", "--n-jobs", "1", "--k-max", "2", "--selectors", "random-subset"], "auc.csv"),
    ("compare", ["--dense", "--trials", "2", "--n-jobs", "1", "--k-max", "2", "--selectors", "random-subset"],
     "compare_curves.png"),
    ("pounce", ["--analysis", "regression", "--predictors", "ridge", "--folds", "0", "--splits", "1"],
     "mse_curves.csv"),
    ("matrix", [], "m.parquet"),
])
def test_a_command_interrupted_while_writing_a_file_keeps_the_earlier_one(scaling_store, tmp_path, monkeypatch,
                                                                          command, extra, name):
    """Every kind of output file (CSV tables, figures, JSON, Parquet) goes through one writer: a Ctrl-C while
    ``name`` is moved into place leaves the earlier ``name`` as it was and no temporary file behind. Written in
    place, the earlier file was truncated first (the interrupt never reached it: no move is made)."""
    import os

    import harness_ext.safe_output as so
    from harness_ext.cli import main

    if command == "matrix":
        pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    cmd = [command, "--db", str(scaling_store), *extra] + (["-o", str(out / name)] if command == "matrix" else
                                                           ["--out", str(out)])
    out.mkdir()
    earlier = b"the earlier file\n"
    (out / name).write_bytes(earlier)
    real = os.replace

    def interrupted(src, dst):
        if Path(dst).name == name:
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(so.os, "replace", interrupted)
    assert main(cmd) == 130
    assert (out / name).read_bytes() == earlier
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []
    monkeypatch.setattr(so.os, "replace", real)
    assert main(cmd) == 0 and (out / name).read_bytes() != earlier


@pytest.mark.parametrize("content", ["text é\n", b"\x89PNG bytes", "writer"])
def test_write_file_takes_text_bytes_or_a_writer_and_writes_through_a_link(tmp_path, content):
    """A regular file is replaced whole; a link is written through (``--json /dev/stdout``-like targets)."""
    from harness_ext.safe_output import write_file

    data = content.encode() if isinstance(content, str) else content
    arg = (lambda p: Path(p).write_bytes(b"from a writer")) if content == "writer" else content
    want = b"from a writer" if content == "writer" else data
    target = tmp_path / "f.out"
    write_file(target, arg)
    assert target.read_bytes() == want
    real = tmp_path / "real.out"
    real.write_bytes(b"")
    link = tmp_path / "link.out"
    link.symlink_to(real)
    write_file(link, arg)
    assert link.is_symlink() and real.read_bytes() == want
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.out", "link.out", "real.out"]


def test_format_characters_are_shown_escaped_in_human_text_only():
    """An RTL override (U+202E) or another format character in a name is obeyed, not shown, by a terminal: the line
    is shown reordered. Comments and printed text write it as an escape; letters of every script, tabs and line
    feeds (of a printed table) stay; a lone surrogate is escaped too."""
    from harness_ext.safe_output import comment, escape_line, shown_text

    assert shown_text("hella\u202eswag\u202c\tммлu\n\u0627\u0644\u200d") == "hella\\u202eswag\\u202c\tммлu\n\u0627\u0644\\u200d"
    assert shown_text("a\x1b[31mb\x7f\x85\ud800") == "a\\u001b[31mb\\u007f\\u0085\\ud800"
    assert shown_text("\U000e0041tag") == "\\U000e0041tag"  # a tag character (Cf) outside the BMP
    assert comment("task hella\u202eswag\nnext") == "# task hella\\u202eswag\\nnext"
    assert escape_line("x\u2066y") == "x\\u2066y" and shown_text("plain ascii") == "plain ascii"


def test_rtl_names_are_escaped_in_comments_and_printed_lines_but_kept_in_the_task_list(tmp_path, capsys):
    """A board whose datasets are named with format characters: the YAML's and the conf's comments and the printed
    warnings show them escaped; the task list, which lm_eval --tasks reads, names them as the board does."""
    from harness_ext.cli import main

    rng = np.random.default_rng(0)
    names = ["arc_easy", "hella\u202eswag\u202c", "piqa", "wino\u200bgrande", "boolq", "sciq", "lambada", "copa",
             "rte", "mrpc"]
    rows = ["model," + ",".join(names)] + [f"org/m{i}," + ",".join(f"{x:.3f}" for x in rng.uniform(0.3, 0.9, 10))
                                           for i in range(15)]
    (tmp_path / "board.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    db, out = str(tmp_path / "s.duckdb"), tmp_path / "red"
    assert main(["ingest", "--db", db, str(tmp_path / "board.csv")]) == 0
    assert main(["reduce", "--db", db, "--budget", "8", "--no-plot", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    written = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir() if p.suffix in (".yaml", ".conf", ".txt")}
    tasks = written.pop(next(n for n in written if n.endswith("_tasks.txt"))).splitlines()
    assert set(tasks) <= set(names) and "hella\u202eswag\u202c" in tasks  # the names as the harness reads them
    comments = [line for text in written.values() for line in text.splitlines() if line.lstrip().startswith("#")]
    assert any("hella\\u202eswag\\u202c" in line for line in comments)
    for text in [*comments, printed.out, printed.err]:
        assert "\u202e" not in text and "\u200b" not in text and "\u202c" not in text
