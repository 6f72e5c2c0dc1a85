"""The reliability families of the surfaces added after the first attack (issue 38 item 7).

- ``samples``: mutations of per-sample logs (lm-eval ``samples_<task>_<date>.jsonl`` beside their
  ``results_*.json``, Every Eval Ever ``*_samples.jsonl``), one line or the whole file at a time,
  ingested on top of a store that holds data: ingest never raises, every file gets a report, a skipped
  one has a reason, the results and per-sample rows added are what the report says, and what was
  stored before does not change.
- ``archives``: Inspect ``.eval`` archives built from the real log: ``header.json`` mutated, the zip
  itself cut or flipped, a member that inflates far beyond the archive, two ``header.json`` members,
  an encrypted member. The same checks, and an archive whose member inflates beyond the limits is
  skipped (not read into memory), each case within a time limit.
- ``sidefiles``: every side-file reader (chance levels, aliases, costs, weights, column metadata, a
  CSV's ``.meta.yaml`` sidecar, a manifest, a prompt-level CSV) on mutated files and on special files
  (a FIFO, ``/dev/zero``, a directory, a symlink loop, a missing file, an oversized file): it returns
  numbers that are finite, or raises a HarnessExtError whose message names the file; never another
  exception, never a hang.

Each family returns a :class:`reliability_lib.Family`; ``report.py`` prints them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import tempfile
import threading
import time
import warnings
import zipfile
from pathlib import Path

from reliability_lib import FIX, MUTATIONS, SHARED, Family, _content_digest, mutate, replaced_rows

#: Longest a single case may take (a reader that blocks on a FIFO or reads /dev/zero fails by this).
CASE_SECONDS = 60
#: Longest a side-file reader may take on a FIFO or /dev/zero (it should refuse them at once).
CHILD_SECONDS = 10
#: Mutation kinds of one line of a JSON-lines file (the others apply to the whole file).
_WHOLE_FILE = ("truncate", "byte_flip", "bom", "invalid_utf8", "odd_filename")


def mutate_jsonl(data: bytes, kind: str, rng: random.Random) -> bytes:
    """One mutation of a JSON-lines file: whole-file kinds on the bytes, the JSON-aware ones on one line."""
    if kind in _WHOLE_FILE:
        return data if kind == "odd_filename" else mutate(data, kind, rng)
    lines = data.split(b"\n")
    idx = [i for i, ln in enumerate(lines) if ln.strip()]
    if not idx:
        return data
    i = rng.choice(idx)
    lines[i] = mutate(lines[i], kind, rng).replace(b"\n", b" ")  # one record stays one line
    return b"\n".join(lines)


# -- samples --------------------------------------------------------------------------------------------
def sample_seeds() -> list:
    """``[(folder to copy, samples file in it)]``: lm-eval logs with their results file, EEE instance files."""
    seeds = []
    lm = FIX / "samples" / "lm_eval_output"
    for d in sorted(p for p in lm.iterdir() if p.is_dir())[:2] if lm.exists() else []:
        for f in sorted(d.glob("samples_*.jsonl"))[:2]:
            seeds.append((d, f))
    for f in sorted((FIX / "eee_samples").rglob("*_samples.jsonl")):
        seeds.append((f.parent, f))
    extra = SHARED / "every_eval_ever"
    if extra.exists():
        for f in sorted(extra.rglob("*_samples.jsonl"))[:2]:
            if f.stat().st_size < 2_000_000:
                seeds.append((f.parent, f))
    return seeds


def _samples_state(store) -> tuple:
    """``(rows, hash of every stored per-sample row)`` (0 rows before the first samples file)."""
    con = store.con
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "samples" not in tables:
        return 0, ""
    rows = con.execute("SELECT model, task, doc_id, metric, value, source_id FROM samples ORDER BY ALL").fetchall()
    return len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()


def _ingest_checked(store, target: Path):
    """Ingest ``target`` and check the invariants of every fuzz family; the problem or None."""
    from harness_ext.store.ingest import ingest_paths

    before_digest, before = _content_digest(store), store.counts()
    s_before = _samples_state(store)
    t = time.perf_counter()
    try:
        report = ingest_paths(store, [target], show_progress=False)
    except Exception as exc:  # noqa: BLE001 - exactly what the families look for
        return f"ingest raised {type(exc).__name__}: {str(exc)[:200]}", None
    took = time.perf_counter() - t
    if took > CASE_SECONDS:
        return f"took {took:.0f} s", report
    if not report.files:
        return "no per-file report", report
    if any(f.status == "skipped" and not f.reason for f in report.files):
        return "skipped without a reason", report
    after = store.counts()
    gone = replaced_rows(report)
    if after["results"] - before["results"] != report.n_results - gone:
        return (f"reported {report.n_results} results ({gone} replaced), stored "
                f"{after['results'] - before['results']}", report)
    digest, n = _content_digest(store)
    if not report.n_results and digest != before_digest[0]:
        return "results changed although none were ingested", report
    if n != before_digest[1] + report.n_results - gone:
        return "stored rows do not add up", report
    s_after = _samples_state(store)
    n_samples = sum(f.n_samples for f in report.files if f.status == "ingested")
    if s_after[0] - s_before[0] != n_samples:
        return f"reported {n_samples} per-sample scores, stored {s_after[0] - s_before[0]}", report
    if not n_samples and s_after != s_before:
        return "per-sample rows changed although none were ingested", report
    return None, report


def run_samples(n_per_kind: int = 1, seed: int = 0) -> Family:
    """Mutated per-sample logs ingested on top of a store holding results and samples (module docstring)."""
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    fam = Family("samples")
    rng = random.Random(seed)
    seeds = sample_seeds()
    with tempfile.TemporaryDirectory() as tmp, Store.open(":memory:") as store:
        tmp = Path(tmp)
        ingest_paths(store, [FIX / "open_llm_leaderboard"] + [d for d, _ in seeds[:1]], show_progress=False)
        for folder, victim in seeds:
            for kind in MUTATIONS:
                for rep in range(n_per_kind):
                    label = f"samples/{victim.name}/{kind}/{seed}.{rep}"
                    case = tmp / f"{kind}_{rep}_{victim.stem[:40]}"
                    shutil.copytree(folder, case)
                    target = case / victim.name
                    data = target.read_bytes()
                    if kind == "odd_filename":  # still named as a samples file: lm-eval's task part, EEE's prefix
                        odd = (victim.name.replace("samples_", "samples_ünï q'x ", 1) if victim.name.startswith("samples_")
                               else "ünï q'x " + victim.name)
                        target.rename(case / odd)
                    else:
                        target.write_bytes(mutate_jsonl(data, kind, rng))
                    problem, _ = _ingest_checked(store, case)
                    fam.record(label, problem)
                    shutil.rmtree(case, ignore_errors=True)
    return fam


# -- Inspect .eval archives -----------------------------------------------------------------------------
INSPECT_LOG = FIX / "inspect" / "2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json"
#: Archive-level kinds (the others mutate header.json inside a valid archive).
ARCHIVE_KINDS = ("zip_truncate", "zip_byte_flip", "inflate", "inflate_other_member", "two_headers", "encrypted",
                 "header_dir")
#: Size header.json inflates to in the "inflate" kind: far beyond what a log header needs, from a small archive.
INFLATE_BYTES = 96 << 20


def _header() -> bytes:
    doc = json.loads(INSPECT_LOG.read_text())
    return json.dumps({k: v for k, v in doc.items() if k != "samples"}).encode()


def make_archive(path: Path, kind: str, rng: random.Random) -> bool:
    """Write an .eval archive of mutation ``kind``; True if it must be skipped (not ingested)."""
    header = _header()
    must_skip = False
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name: 'header.json'": on purpose
        if kind == "inflate":
            # Valid JSON padded with spaces: read whole, it would be ingested; its member is ~1000x its size.
            z.writestr("header.json", header[:-1] + b" " * INFLATE_BYTES + b"}")
            must_skip = True
        elif kind == "inflate_other_member":  # a member the reader does not need: must not be inflated either
            z.writestr("header.json", header)
            z.writestr("samples/1.json", b" " * INFLATE_BYTES)
        elif kind == "two_headers":
            z.writestr("header.json", header)
            z.writestr("header.json", header.replace(b'"success"', b'"error"'))
        elif kind == "header_dir":
            z.writestr("header.json/", b"")
        elif kind in MUTATIONS:
            z.writestr("header.json", header if kind == "odd_filename" else mutate(header, kind, rng))
        else:
            z.writestr("header.json", header)
    if kind in ("zip_truncate", "zip_byte_flip"):
        path.write_bytes(mutate(path.read_bytes(), kind[4:], rng))
    elif kind == "encrypted":  # the encryption flag set in every header: zipfile refuses to read it
        data = bytearray(path.read_bytes())
        for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            i = data.find(sig)
            while i >= 0:
                data[i + off] |= 1
                i = data.find(sig, i + 4)
        path.write_bytes(bytes(data))
    return must_skip


def run_archives(n_per_kind: int = 1, seed: int = 0) -> Family:
    """Mutated Inspect .eval archives ingested on top of a store (module docstring)."""
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import ingest_paths

    fam = Family("archives")
    if not INSPECT_LOG.exists():
        return fam
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp, Store.open(":memory:") as store:
        tmp = Path(tmp)
        ingest_paths(store, [FIX / "open_llm_leaderboard"], show_progress=False)
        for kind in MUTATIONS + ARCHIVE_KINDS:
            for rep in range(n_per_kind):
                case = tmp / f"{kind}_{rep}"
                case.mkdir()
                name = rng.choice(["sp ace {}", "ünï {}", "-dash{}"]).format("run.eval") if kind == "odd_filename" else "run.eval"
                must_skip = make_archive(case / name, kind, rng)
                problem, report = _ingest_checked(store, case)
                if problem is None and must_skip and any(f.status == "ingested" for f in report.files):
                    problem = "an archive whose header.json inflates ~1000x beyond the archive was read and ingested"
                fam.record(f"archives/{kind}/{seed}.{rep}", problem)
                shutil.rmtree(case, ignore_errors=True)
    return fam


# -- side files -----------------------------------------------------------------------------------------
def _manifest_text() -> str:
    from harness_ext.methods.reduction.manifest import example_manifest

    return json.dumps(example_manifest())


#: kind -> (file name, valid content)
SIDE_SEEDS = {
    "chance_yaml": ("chance.yaml", 'arc: 0.25\nhellaswag: {choices: 4}\n"mmlu_*": {chance: 0.25, source: "4 options"}\n'),
    "chance_json": ("chance.json", '{"chance": {"arc": 0.25, "boolq": {"choices": 2}}}'),
    "chance_csv": ("chance.csv", "dataset,chance,source\narc,0.25,four options\nboolq,0.5,\n"),
    "aliases_yaml": ("aliases.yaml", "aliases:\n  gpt-4o: [GPT-4o, gpt4o]\n  llama-3-8b: Meta-Llama-3-8B\nseparate: [claude-3-opus]\n"),
    "aliases_json": ("aliases.json", '{"aliases": {"gpt-4o": ["GPT-4o"]}, "separate": ["x"]}'),
    "aliases_csv": ("aliases.csv", "alias,canonical\nGPT-4o,gpt-4o\ngpt4o,gpt-4o\n"),
    "costs_json": ("costs.json", '{"arc": 1172, "hellaswag": 10042.5}'),
    "costs_csv": ("costs.csv", "dataset,cost\narc,1172\nhellaswag,10042\n"),
    "weights_json": ("weights.json", '{"scheme": "user", "weights": {"arc": 0.5, "hellaswag": 1.5}}'),
    "weights_csv": ("weights.csv", "column,weight\narc,0.5\nhellaswag,1.5\n"),
    "column_meta": ("meta.yaml", "benchmark: board\nmeta_columns: [size]\ncolumns:\n  acc: {chance: 0.25, higher_is_better: true, "
                                 "scale: proportion}\n  elo: {scale: elo, kind: dataset}\n"),
    "sidecar": ("board.csv.meta.yaml", "benchmark: board\ncolumns:\n  arc: {chance: 0.25}\n  size: {kind: metadata}\n"),
    "manifest": ("manifest.json", None),
    "prompts": ("prompts.csv", "prompt,m1,m2,m3\np1,1,0,1\np2,0,0,1\np3,1,1,0.5\n"),
}
#: Kinds of special file (or name) given in place of a side file.
SPECIAL = ("fifo", "dev_zero", "directory", "missing", "symlink_loop", "oversized", "wrong_shape", "yaml_alias_bomb")


def _reader(kind: str):
    """The function that reads a side file of ``kind`` (path -> parsed content)."""
    if kind.startswith("chance"):
        from harness_ext.store.scales import load_chance_file
        return load_chance_file
    if kind.startswith("aliases"):
        from harness_ext.store.identity import read_alias_file
        return read_alias_file
    if kind.startswith("costs"):
        from harness_ext.methods.reduction.budget import read_costs
        return read_costs
    if kind.startswith("weights"):
        from harness_ext.methods.weighting.schemes import read_weight_file
        return read_weight_file
    if kind == "column_meta":
        from harness_ext.adapters.csv_table import read_sidecar
        return read_sidecar
    if kind == "manifest":
        from harness_ext.methods.reduction.manifest import load_manifest
        return load_manifest
    if kind == "prompts":
        from harness_ext.methods.weighting import read_prompt_matrix
        return read_prompt_matrix
    raise KeyError(kind)


def _numbers(value):
    """Every number in a reader's result (dicts, lists, tuples, frames), to check they are finite."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif hasattr(v, "to_numpy"):
            stack.extend(v.to_numpy().ravel().tolist())
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield v


def _special(path: Path, what: str, content: str) -> None:
    """Put a special file (or a wrong-shaped or alias-bomb document) at ``path``."""
    if what == "fifo":
        os.mkfifo(path)
    elif what == "dev_zero":
        path.symlink_to("/dev/zero")
    elif what == "directory":
        path.mkdir()
    elif what == "symlink_loop":
        path.symlink_to(path)
    elif what == "oversized":
        with open(path, "wb") as fh:  # sparse: no disk used
            fh.truncate(300 << 20)
    elif what == "wrong_shape":  # every mapping's values as lists, every list as a mapping
        try:
            doc = json.loads(content)
        except ValueError:
            import yaml

            try:
                doc = yaml.safe_load(content)
            except yaml.YAMLError:
                doc = None
        if isinstance(doc, dict):
            doc = {k: (list(v) if isinstance(v, dict) else [v]) for k, v in doc.items()}
        path.write_text(json.dumps(doc if isinstance(doc, dict) else [content]))
    elif what == "yaml_alias_bomb":
        lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
                  f"*a{i - 1}, *a{i - 1}]" for i in range(1, 9)]
        path.write_text("\n".join(lines) + "\n")
    # "missing": nothing there


#: Special files read in a child process: a reader that blocks on a FIFO or reads /dev/zero without end
#: then costs the child (a capped address space, a time limit), not the test process and the machine.
IN_CHILD = ("fifo", "dev_zero")


def _problems_in_child(cases: list, seconds: float) -> dict:
    """``{label: problem}`` of :func:`_side_problem` for ``cases`` (``(label, kind, path)``), run in a child
    process whose address space is capped at 2 GB above its size at start."""
    import subprocess
    import sys

    script = (
        "import json, resource, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "size = next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize:'))\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + (2 << 30), resource.RLIM_INFINITY))\n"
        "import reliability_surfaces as r\n"
        "for label, kind, path in json.loads(sys.argv[2]):\n"
        "    print(json.dumps([label, r._side_problem(kind, r.Path(path), float(sys.argv[3]))]), flush=True)\n"
    )
    argv = [sys.executable, "-c", script, str(Path(__file__).parent), json.dumps([[l, k, str(p)] for l, k, p in cases]),
            str(seconds)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds * len(cases) + 120)
        out, err = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        out, err = exc.stdout or "", "the child process did not finish"
        out = out.decode() if isinstance(out, bytes) else out
    found = dict(json.loads(line) for line in out.splitlines() if line.startswith("["))
    why = (err.strip().splitlines() or ["the child process ended"])[-1][:200]
    return {label: found[label] if label in found else f"not answered: {why}" for label, _, _ in cases}


def _read_within(fn, path: Path, seconds: float):
    """``fn(path)`` in a thread: ``(result, exception, hung)``; a FIFO left blocking is released by a writer."""
    out = {}

    def run():
        try:
            out["result"] = fn(path)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            out["exc"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        if path.is_fifo():
            with open(os.open(path, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass
        return None, None, True
    return out.get("result"), out.get("exc"), False


def _side_problem(kind: str, path: Path, seconds: float = CASE_SECONDS):
    """Why reading ``path`` as a side file of ``kind`` went wrong, or None."""
    from harness_ext.errors import HarnessExtError

    result, exc, hung = _read_within(_reader(kind), path, seconds)
    if hung:
        return f"no answer within {seconds:.0f} s (blocked or reading without end)"
    if exc is not None:
        if not isinstance(exc, HarnessExtError):
            return f"raised {type(exc).__name__}: {str(exc)[:200]}"
        if str(path) not in str(exc) and path.name not in str(exc):
            return f"the error does not name the file: {str(exc)[:200]}"
        return None
    # A prompt-level matrix has NaN for a prompt a model did not answer; nothing else a side file gives is NaN.
    bad = next((v for v in _numbers(result) if isinstance(v, float) and (math.isinf(v) or math.isnan(v) and kind != "prompts")),
               None)
    if bad is not None:
        return f"read without an error, holding {bad}"
    return None


def _sidecar_problem(case: Path, store):
    """A CSV beside the (mutated) ``board.csv.meta.yaml`` in ``case``, ingested: the ingest invariants."""
    (case / "board.csv").write_text("model,arc,size\nm1,0.5,7\nm2,0.75,13\n")
    problem, _ = _ingest_checked(store, case / "board.csv")
    return problem


def run_sidefiles(n_per_kind: int = 1, seed: int = 0) -> Family:
    """Every side-file reader on mutated and special files (module docstring)."""
    from harness_ext.store.db import Store

    fam = Family("sidefiles")
    rng = random.Random(seed)
    child: list = []  # (label, kind, path) of the special files read in a child process
    with tempfile.TemporaryDirectory() as tmp, Store.open(":memory:") as store:
        tmp = Path(tmp)
        for kind, (name, content) in SIDE_SEEDS.items():
            content = content if content is not None else _manifest_text()
            for how in MUTATIONS + SPECIAL:
                for rep in range(n_per_kind if how in MUTATIONS else 1):
                    case = tmp / f"{kind}_{how}_{rep}"
                    case.mkdir()
                    fname = rng.choice(["sp ace {}", "ünï {}", "-dash{}"]).format(name) if how == "odd_filename" else name
                    path = case / fname
                    if how in SPECIAL:
                        _special(path, how, content)
                    else:
                        path.write_bytes(content.encode() if how == "odd_filename" else mutate(content.encode(), how, rng))
                    label = f"sidefiles/{kind}/{how}/{seed}.{rep}"
                    if kind != "sidecar" and how in IN_CHILD:
                        child.append((label, kind, path))
                        continue
                    if kind == "sidecar":  # a sidecar is found beside its CSV (special files are passed over)
                        if how == "odd_filename":
                            path.rename(case / name)
                        problem = _sidecar_problem(case, store)
                    else:
                        problem = _side_problem(kind, path)
                    fam.record(label, problem)
                    shutil.rmtree(case, ignore_errors=True)
        for label, problem in _problems_in_child(child, CHILD_SECONDS).items():
            fam.record(label, problem)
    return fam
