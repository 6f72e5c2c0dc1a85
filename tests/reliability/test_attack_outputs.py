"""What a results file or a manifest may make ``reduce`` and ``predict`` write or run: attack reproductions.

Task configurations kept from lm-eval results files are written back as data (no include, no
function, no path outside the reduced folder), manifests are range-checked before any work,
and a manifest writer that raises or writes outside its folder is named.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from harness_ext.cli import main

TASKS = [f"attack_task_{i}" for i in range(4)]


# -- task YAMLs from results files are data --------------------------------------------------
def _hostile_config(task: str, outside: Path) -> dict:
    return {"task": task, "include": "../../../evil_include.yaml", "class": "!function evil.Task",
            "process_docs": "!function evil.run", "custom_dataset": "!function evil.load",
            "dataset_path": str(outside / "data_dir"),
            "dataset_kwargs": {"data_files": {"test": str(outside / "data_dir" / "x.jsonl")},
                               "cache_dir": str(outside / "cache"), "trust_remote_code": True},
            "test_split": "test", "output_type": "multiple_choice",
            "doc_to_text": "{{ ''.__class__.__mro__[1].__subclasses__() }}", "doc_to_choice": "{{choices}}",
            "doc_to_target": "{{answer}}", "description": "Blank: ____\n",
            "metric_list": [{"metric": "acc", "aggregation": "!function evil.agg"}], "num_fewshot": 0,
            "metadata": {"version": 1.0}}


def _write_results(folder: Path, configs: dict, n_models: int = 8, seed: int = 0) -> Path:
    """lm-eval v0.4 results files of ``n_models`` models on TASKS with the given ``configs`` block."""
    rng = np.random.default_rng(seed)
    ability, ease = rng.normal(size=n_models), rng.normal(size=len(TASKS))
    for i in range(n_models):
        results = {t: {"alias": t, "acc,none": float(1 / (1 + np.exp(-(ability[i] + ease[j] + rng.normal(0, .1))))),
                       "acc_stderr,none": 0.01} for j, t in enumerate(TASKS)}
        doc = {"results": results, "group_subtasks": {t: [] for t in TASKS}, "n-shot": {t: 0 for t in TASKS},
               "higher_is_better": {t: {"acc": True} for t in TASKS}, "versions": {t: 1.0 for t in TASKS},
               "config": {"model": "hf", "model_args": f"pretrained=org/m{i}"}, "model_name": f"org/m{i}",
               "configs": configs}
        d = folder / f"org__m{i}"
        d.mkdir(parents=True)
        (d / "results_2025-01-01T00-00-00.000000.json").write_text(json.dumps(doc))
    return folder


def _evil_files(root: Path) -> Path:
    """An include file and the Python beside it that leave a marker when imported."""
    marker = root / "EVIL_RAN"
    (root / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\ndef run(d):\n    return d\n")
    (root / "evil_include.yaml").write_text("process_docs: !function evil.run\ndataset_path: json\n")
    return marker


class _Audit:
    """Record the files opened and the code executed while active (an audit hook cannot be removed)."""

    events: list = []
    active = False

    @classmethod
    def hook(cls, event, args):
        if cls.active and event in ("open", "import", "exec", "os.listdir", "os.scandir"):
            cls.events.append((event, args[0] if args else None))


_HOOKED = []


def _audit():
    if not _HOOKED:
        sys.addaudithook(_Audit.hook)
        _HOOKED.append(True)
    _Audit.events = []
    return _Audit


def _outside(events, folder: Path) -> list:
    """Opened or listed paths outside ``folder`` and outside the Python installation."""
    import sysconfig

    allowed = [folder.resolve()] + [Path(p).resolve() for p in {sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                                 *sysconfig.get_paths().values()} if p]
    bad = []
    for event, arg in events:
        if event == "exec" or not isinstance(arg, (str, bytes, Path)):
            continue
        p = Path(arg.decode() if isinstance(arg, bytes) else arg)
        if event == "import":
            if str(arg).split(".")[0] == "evil":
                bad.append((event, str(arg)))
            continue
        if not p.is_absolute():
            p = Path.cwd() / p
        p = p.resolve()
        if str(p).startswith("/dev/") or str(p).startswith("/proc/"):
            continue
        if not any(p == a or a in p.parents for a in allowed):
            bad.append((event, str(p)))
    return bad


@pytest.mark.slow
def test_hostile_task_config_is_written_as_data(tmp_path, monkeypatch, capsys):
    """A results file's configs block naming an include, functions and outside paths: none reaches the folder."""
    lm_eval_loader = pytest.importorskip("lm_eval.tasks._yaml_loader")
    from lm_eval.tasks import TaskManager

    marker = _evil_files(tmp_path)
    outside = tmp_path / "elsewhere"
    (outside / "data_dir").mkdir(parents=True)
    pop = _write_results(tmp_path / "pop", {t: _hostile_config(t, outside) for t in TASKS})
    db, out = tmp_path / "s.duckdb", tmp_path / "a" / "b" / "reduced"
    out.parent.mkdir(parents=True)
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out)]) == 0
    text = capsys.readouterr()
    manifest = json.loads((out / "manifest.json").read_text())
    # Counted in the manifest's warnings and on the terminal.
    note = [w for w in manifest["warnings"] if w.startswith("task YAMLs written from results files")]
    assert len(note) == 1 and "include x2" in note[0] and "dataset_kwargs.data_files x2" in note[0]
    assert "task YAMLs written from results files" in text.out + text.err
    written = sorted(p for p in out.glob("attack_task_*.yaml"))
    assert len(written) == 2
    for path in written:
        raw = path.read_text()
        doc = yaml.safe_load(raw)
        assert set(doc) <= {"task", "test_split", "output_type", "doc_to_choice", "doc_to_target", "description",
                            "num_fewshot", "metadata"}, doc
        assert "include" not in doc and "process_docs" not in doc and "dataset_path" not in doc
        assert str(outside) not in raw  # no path the results file named, not even in a comment
        assert "__class__" not in raw
        assert "# NOT SELF-CONTAINED" in raw and "include: it makes lm-eval read another YAML file" in raw
        assert doc["description"] == "Blank: ____\n"  # a blank in plain text is not a template
        entry = manifest["lm_eval_tasks"][doc["task"]]
        assert {d["key"] for d in entry["dropped"]} >= {"include", "class", "process_docs", "custom_dataset",
                                                        "dataset_path", "dataset_kwargs.data_files",
                                                        "dataset_kwargs.cache_dir", "dataset_kwargs.trust_remote_code",
                                                        "doc_to_text", "metric_list"}
    # lm-eval's own loader, from an empty working directory, reads nothing outside the folder and runs nothing.
    empty = tmp_path / "empty_cwd"
    empty.mkdir()
    monkeypatch.chdir(empty)
    audit = _audit()
    audit.active = True
    try:
        loaded = [lm_eval_loader.load_yaml(p, resolve_func=True, recursive=True) for p in sorted(out.glob("*.yaml"))]
        tm = TaskManager(include_path=str(out), include_defaults=False)
        configs = {t: tm._factory._load_full_config(tm.task_index[t]) for t in tm.all_subtasks}
    finally:
        audit.active = False
    assert _outside(audit.events, out) == []
    assert not marker.exists() and "evil" not in sys.modules
    assert len(loaded) == 3 and sorted(configs) == sorted(p.stem for p in written)
    from lm_eval.api.task import TaskConfig

    for cfg in configs.values():
        TaskConfig(**{k: v for k, v in cfg.items()})  # still a valid lm-eval task configuration


def test_the_audit_sees_what_an_include_would_read(tmp_path, monkeypatch):
    """The check above is not vacuous: lm-eval's loader follows an include out of the folder and imports."""
    lm_eval_loader = pytest.importorskip("lm_eval.tasks._yaml_loader")
    marker = _evil_files(tmp_path)
    out = tmp_path / "a" / "b" / "reduced"
    out.mkdir(parents=True)
    (out / "t.yaml").write_text("task: t\ninclude: ../../../evil_include.yaml\n")
    monkeypatch.chdir(out)
    audit = _audit()
    audit.active = True
    try:
        lm_eval_loader.load_yaml(out / "t.yaml", resolve_func=True)
    finally:
        audit.active = False
        sys.modules.pop(str(tmp_path / "evil"), None)
    assert any(str(tmp_path / "evil_include.yaml") == p for _, p in _outside(audit.events, out))
    assert marker.exists()


def test_task_config_allow_list_is_lm_eval_task_config():
    """The allow-list is lm-eval 0.4's TaskConfig fields (minus the function-only ones)."""
    pytest.importorskip("lm_eval")
    import dataclasses

    from lm_eval.api.task import TaskConfig

    from harness_ext.store.task_yaml_safety import FUNCTION_FIELDS, LM_EVAL_TASK_FIELDS, TASK_KEYS

    assert LM_EVAL_TASK_FIELDS == {f.name for f in dataclasses.fields(TaskConfig)}
    assert TASK_KEYS == LM_EVAL_TASK_FIELDS - FUNCTION_FIELDS and "include" not in TASK_KEYS


@pytest.mark.parametrize("value, kept", [
    # A packaged builder (json) with a relative data file reads the folder lm_eval runs in, and so does a relative
    # file:// URL: both are left out (tests/test_hostile_data_paths.py).
    ("cais/mmlu", True), ("json", False), ("data/test.jsonl", True), ("hf://datasets/x/y/a.json", True),
    ("https://example.org/a.json", True), ("/home/alice/data/a.jsonl", False), ("~/a.jsonl", False),
    ("../a.jsonl", False), ("data/../../a.jsonl", False), ("C:\\data\\a.jsonl", False), ("\\\\share\\a", False),
    ("file:///etc/passwd", False), ("file://data/a.jsonl", False)])
def test_paths_stay_inside_the_folder(tmp_path, value, kept):
    from harness_ext.store.task_yaml_safety import safe_task_config

    cfg = {"dataset_path": value, "dataset_kwargs": {"data_files": {"test": [value]}, "name": "x"}}
    out, dropped = safe_task_config(cfg, tmp_path)
    assert ("dataset_path" in out) is kept and ("data_files" in out["dataset_kwargs"]) is kept
    assert out["dataset_kwargs"]["name"] == "x"
    assert len(dropped) == (0 if kept else 2)


def test_local_data_lets_only_its_own_paths_through(tmp_path):
    from harness_ext.store.task_yaml_safety import safe_task_config

    mine, other = tmp_path / "my_tasks", tmp_path / "other"
    mine.mkdir()
    (mine / "escape").symlink_to(other)
    cfg = {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(mine / "a.jsonl")}}}
    assert safe_task_config(cfg, tmp_path / "out", [mine]) == (cfg, [])
    for outside in (other / "a.jsonl", mine / "escape" / "a.jsonl", mine / ".." / "other" / "a.jsonl"):
        cfg = {"dataset_kwargs": {"data_files": {"test": str(outside)}}}
        kept, dropped = safe_task_config(cfg, tmp_path / "out", [mine])
        assert kept == {} and [d["key"] for d in dropped] == ["dataset_kwargs.data_files"], outside


def test_a_symlink_out_of_the_folder_is_refused(tmp_path):
    from harness_ext.store.task_yaml_safety import safe_task_config

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "data").symlink_to(tmp_path)
    out, dropped = safe_task_config({"dataset_kwargs": {"data_files": "data/x.jsonl"}}, tmp_path / "out")
    assert out == {} and dropped == [{"key": "dataset_kwargs.data_files", "reason": "it resolves outside the folder"}]


def test_benign_config_is_kept_whole():
    from harness_ext.store.task_yaml_safety import safe_task_config

    cfg = {"task": "t", "dataset_path": "cais/mmlu", "dataset_name": "anatomy", "test_split": "test",
           "doc_to_text": "{{question.strip()}}\nA. {{choices[0]}}\nAnswer:", "doc_to_choice": ["A", "B"],
           "doc_to_target": "answer", "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
           "filter_list": [{"name": "strict", "filter": [{"function": "regex", "regex_pattern": "(\\d+)"}]}],
           "fewshot_config": {"sampler": "first_n"}, "metadata": {"version": 1.0}}
    assert safe_task_config(cfg) == (cfg, [])


# -- manifests are range-checked before any work ---------------------------------------------
# The CLI runner and the synthetic CSV of the tampered-manifest tests (tests/ is on the path through its conftest).
from test_manifest_validation import _cli, _write_csv  # noqa: E402


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attack_manifest")
    datasets = [f"d{j}" for j in range(8)]
    _write_csv(tmp / "train.csv", [f"m{i}" for i in range(16)], datasets, 0)
    long_names = ["x" * 399 + "a", "x" * 399 + "b"]  # one prefix: the file names must still differ
    _write_csv(tmp / "new.csv", ["newmodel", *long_names], datasets, 1)
    db = tmp / "s.duckdb"
    assert _cli("ingest", "--db", db, tmp / "train.csv").returncode == 0
    r = _cli("reduce", "--db", db, "--budget", "3", "--n-random", "20", "--out", tmp / "out", "--format", "json")
    assert r.returncode == 0, r.stderr
    return tmp / "out" / "manifest.json", tmp / "new.csv", db


def _tampered(reduced, tmp_path, change) -> Path:
    m = json.loads(reduced[0].read_text())
    change(m)
    folder = tmp_path / "m"
    folder.mkdir()
    path = folder / "manifest.json"
    path.write_text(json.dumps(m).replace('"__HUGE__"', "1" * 400).replace('"__INF__"', "1e400"))
    return path


@pytest.mark.parametrize("case, change, match", [
    ("negative span", lambda m: m["datasets"][0]["normalisation"].__setitem__("span", -0.5),
     "normalisation span is -0.5; it must be above 0"),
    ("chance 1", lambda m: m["datasets"][0]["normalisation"].__setitem__("chance", 1.0), "chance is 1.0"),
    ("400-digit weight", lambda m: m["datasets"][0].__setitem__("weight", "__HUGE__"),
     "'datasets.0.weight' is an integer of 400 digits, beyond the range of a number"),
    ("1e400 lo", lambda m: m["datasets"][1]["normalisation"].__setitem__("lo", "__INF__"),
     "manifest is not JSON: 1e400 is beyond the range of a float"),
    ("1e400 cell", lambda m: m["training_matrix"]["values"][2].__setitem__(1, "__INF__"),
     "manifest is not JSON: 1e400 is beyond the range of a float"),
    ("400-digit cell", lambda m: m["training_matrix"]["values"][2].__setitem__(1, "__HUGE__"),
     "'training_matrix.values.2.1' is an integer of 400 digits, beyond the range of a number"),
    ("long group name", lambda m: m.__setitem__("group_name", "g" * 400), "group_name"),
])
def test_predict_refuses_a_bad_number_before_the_work(reduced, tmp_path, case, change, match):
    path = _tampered(reduced, tmp_path, change)
    r = _cli("predict", "--manifest", path, reduced[1], "--eee", tmp_path / "eee")
    assert r.returncode == 1, (case, r.stdout)
    assert match in r.stderr and str(path) in r.stderr, (case, r.stderr)
    assert "unexpected" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert r.stdout == "" and not (tmp_path / "eee").exists()  # refused before predicting anything


@pytest.mark.slow
def test_long_model_names_with_eee_are_safe_file_names(reduced, tmp_path):
    r = _cli("predict", "--manifest", reduced[0], reduced[1], "--eee", tmp_path / "eee")
    assert r.returncode == 0, r.stderr
    files = sorted(p.name for p in (tmp_path / "eee").iterdir())
    assert len(files) == 3 and "newmodel.json" in files
    assert all(len(f) <= 130 for f in files)
    names = {json.loads((tmp_path / "eee" / f).read_text())["model_info"]["name"] for f in files}
    assert names == {"newmodel", "x" * 399 + "a", "x" * 399 + "b"}


def test_eee_target_that_is_a_file_is_refused_first(reduced, tmp_path):
    (tmp_path / "taken").write_text("")
    r = _cli("predict", "--manifest", reduced[0], reduced[1], "--eee", tmp_path / "taken")
    assert r.returncode == 1 and "exists and is not a folder" in r.stderr and r.stdout == "", r.stderr


@pytest.mark.slow
def test_wrong_shaped_large_training_matrix_fails_fast(reduced, tmp_path):
    """4 million cells in the wrong shape: refused by the cheap checks before the JSON Schema walks them."""
    import time

    from harness_ext.errors import HarnessExtError
    from harness_ext.methods.reduction.manifest import load_manifest, validate_manifest

    m = json.loads(reduced[0].read_text())
    n = len(m["datasets"])
    rows = 4_000_000 // (n + 1)
    m["training_matrix"] = {"models": [f"m{i}" for i in range(rows)], "datasets": [d["name"] for d in m["datasets"]],
                            "values": [[0.25] * (n + 1)] * rows}
    start = time.process_time()
    with pytest.raises(HarnessExtError, match="not rectangular: row 0 has 9 values for 8 datasets"):
        validate_manifest(m, "big.json")
    assert time.process_time() - start < 0.5
    path = tmp_path / "big.json"
    path.write_text(json.dumps(m))
    start = time.process_time()
    json.loads(path.read_bytes())  # the reference: parsing alone, in this run, on this machine's load
    parse = time.process_time() - start
    start = time.process_time()
    with pytest.raises(HarnessExtError, match="not rectangular"):
        load_manifest(path)
    # Mostly JSON parsing: a fixed number of seconds failed on a loaded machine (5.3 s against a 5 s bound), so the
    # bound is a multiple of the parse just measured; walking the cells with the JSON Schema would take far longer.
    assert time.process_time() - start < 4 * parse + 1


# -- manifest writers: a failure is named, and so is a write outside the folder -------------------
def _evil_writer(monkeypatch, write):
    import harness_ext.plugin_manager as pm
    from harness_ext.types import ManifestWriter

    reg = ManifestWriter(name="evil", write=write)
    reg.source = "evil (harness-ext-evil)"
    real = pm.get_registration
    monkeypatch.setattr(pm, "get_registration",
                        lambda kind, name, p=None: reg if (kind, name) == ("manifest_writers", "evil") else real(kind, name, p))


def _raises(exc):
    def write(manifest, out):
        raise exc
    return write


def _escape(rel):
    def write(manifest, out):
        (Path(out) / rel).write_text("escaped")
        return [Path(out).joinpath("inside.txt").write_text("ok") and "inside.txt"]
    return write


@pytest.mark.parametrize("case, write, match", [
    ("raises", _raises(RuntimeError("disk on fire")), "failed: RuntimeError: disk on fire"),
    ("exits", _raises(SystemExit(3)), "failed: SystemExit: 3"),
    ("writes ../x", _escape("../x.txt"), "wrote outside its folder"),
    ("writes ../../x", None, "wrote outside its folder"),
    ("writes into --out", None, "wrote outside its folder"),
])
@pytest.mark.slow
def test_a_writer_that_fails_or_escapes_is_named(reduced, tmp_path, monkeypatch, case, write, match):
    out = tmp_path / "work" / "reduced"
    out.parent.mkdir()
    if case == "writes ../../x":
        write = _escape("../../x.txt")
    elif case == "writes into --out":
        def write(manifest, o):
            out.mkdir()
            (out / "sneaky.txt").write_text("x")
            return [Path(o).joinpath("inside.txt").write_text("ok") and "inside.txt"]
    _evil_writer(monkeypatch, write)
    r = _cli("reduce", "--db", reduced[2], "--budget", "3", "--n-random", "20", "--out", out, "--format", "json,evil",
             "--no-plot")
    assert r.returncode == 1, r.stdout
    assert "manifest writer 'evil' (evil (harness-ext-evil))" in r.stderr and match in r.stderr, r.stderr
    assert "unexpected" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    if "outside" in match:
        assert ("x.txt" in r.stderr) or ("sneaky.txt" in r.stderr), r.stderr
    # Nothing of the run reached the folder, and no staging folder is left behind.
    assert not (out / "manifest.json").exists() and not (out / "inside.txt").exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]
