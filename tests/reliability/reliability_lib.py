"""The issue-19 attack, kept in the repo: four families of reproducible cases.

- ``fuzz``: mutations of every adapter's real files (truncation, byte flips, type swaps, huge numbers,
  NaN/Infinity literals, duplicate keys, deep nesting, BOM, invalid UTF-8, odd file names). Each mutated
  file is ingested on top of a store that already holds data: ingest never raises, a skipped file leaves
  the store as it was, an ingested one adds exactly what it reports, and stored data never changes.
- ``kill``: SIGKILL an ``ingest`` process at random moments; after each kill the store is consistent
  (every source's results all there, no orphan rows), and finishing the ingest gives the same content
  as one clean sequential ingest.
- ``concurrency``: N ``ingest`` writers and ``info``/``matrix`` readers at once: every process succeeds
  and the store ends equal to a sequential ingest.
- ``cli``: every command against a corpus of hostile inputs: the expected exit code per case (1 with a one-line
  error; 2 only for a malformed command line), never a traceback and never the guard's "unexpected" line
  (an exception no check anticipated); a side file given to any option is refused with its name.

Each family returns a :class:`Family` (tried, passed, failed, first failures); ``report.py`` prints them.
Seeds are explicit, so a failing case is reproduced by its label.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIX = REPO / "tests" / "fixtures"
SHARED = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", REPO.parent / "shared" / "data"))
ENV = {**os.environ, "HARNESS_EXT_NO_PROGRESS": "1", "HARNESS_EXT_LOAD_PLUGINS": ""}


@dataclass
class Family:
    name: str
    tried: int = 0
    passed: int = 0
    failures: list = field(default_factory=list)

    @property
    def failed(self) -> int:
        return len(self.failures)

    def record(self, label: str, problem):
        self.tried += 1
        if problem:
            self.failures.append(f"{label}: {problem}")
        else:
            self.passed += 1

    def line(self) -> str:
        return f"{self.name:<12} tried {self.tried:>5}  passed {self.passed:>5}  failed {self.failed:>3}"


# -- real seed files, one or two per adapter ------------------------------------------------------------
_SEED_ROOTS = [
    FIX,
    SHARED / "lm-eval-harness" / "v03_results_master_2023-07-31",
    SHARED / "lm-eval-harness" / "v04_results_from_pull_refs",
    SHARED / "every_eval_ever" / "data" / "helm_classic",
    SHARED / "tsml-eval-tsc-bakeoff",
    SHARED / "crosspred-lvlm",
    SHARED / "benchbench" / "leaderboards",
]


def real_seeds(per_adapter: int = 1, seed: int = 0) -> dict:
    """``adapter name -> [Path]`` of real result files (directories for directory adapters)."""
    from harness_ext.store.ingest import detect_adapter, iter_sources
    from harness_ext.errors import IngestError
    from harness_ext.plugin_manager import get_registrations
    from harness_ext.store.samples import is_samples_file

    adapters = get_registrations("adapters")
    rng = random.Random(seed)
    found: dict = {}
    for root in _SEED_ROOTS:
        if not root.exists():
            continue
        n = 0
        for src, _ in iter_sources([root], adapters):
            n += 1
            if n > 400:
                break
            if not src.is_dir and (is_samples_file(src.path) or src.path.stat().st_size > 200_000):
                continue
            try:
                name = detect_adapter(src, adapters).name
            except (IngestError, OSError):
                continue
            found.setdefault(name, []).append(src.path)
    return {k: sorted(rng.sample(v, min(per_adapter, len(v)))) for k, v in sorted(found.items())}


# -- mutations -------------------------------------------------------------------------------------------
def _json_paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _json_paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:50]):
            yield from _json_paths(v, prefix + (i,))


def _set(doc, path, value):
    if not path:
        return value
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return doc


def _numeric_paths(doc):
    return [p for p in _json_paths(doc) if p and isinstance(_get(doc, p), (int, float)) and not isinstance(_get(doc, p), bool)]


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def mutate(data: bytes, kind: str, rng: random.Random) -> bytes:
    """One mutation of a file's bytes; JSON-aware kinds fall back to byte edits on other files."""
    if kind == "truncate":
        return data[: rng.randrange(0, max(1, len(data)))]
    if kind == "byte_flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "invalid_utf8":
        i = rng.randrange(len(data) + 1)
        return data[:i] + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00"]) + data[i:]
    text = data.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if doc is None:  # CSV and other text: line-level versions of the same attacks
        lines = text.splitlines(True)
        if not lines:
            return data
        i = rng.randrange(len(lines))
        if kind == "duplicate_keys":
            lines.insert(i, lines[i])
        elif kind == "huge_numbers":
            lines[i] = lines[i].replace("0.", "1" + "0" * 400 + ".", 1)
        elif kind == "nan_literals":
            lines[i] = lines[i].replace("0.", rng.choice(["NaN", "Infinity", "-inf", "nan"]) + ",0.", 1)
        elif kind == "type_swap":
            lines[i] = lines[i].replace(",", ',"[1,2]",', 1)
        elif kind == "deep_nesting":
            lines[i] = "[" * 5000 + lines[i]
        elif kind == "surrogate":
            lines[i] = lines[i].replace(",", ",x\ud800y", 1)
        elif kind == "big_int":
            lines[i] = lines[i].replace(",", ",1" + "0" * 400 + ",", 1)
        return "".join(lines).encode("utf-8", "surrogatepass")
    paths = list(_json_paths(doc))
    if kind == "surrogate":  # a lone surrogate, as JSON allows writing it (\\ud800) and Python reads it
        strs = [p for p in paths if p and isinstance(_get(doc, p), str)] or paths
        return json.dumps(_set(doc, rng.choice(strs), "@@")).replace('"@@"', '"x\\ud800y"').encode()
    if kind == "big_int":  # integers no int64 column (2**63, 10**30) or float (401 digits) holds
        nums = _numeric_paths(doc) or paths
        big = rng.choice([str(2**63), str(10**30), "4" * 401])
        return json.dumps(_set(doc, rng.choice(nums), "@@")).replace('"@@"', big).encode()
    if kind == "type_swap":
        p = rng.choice(paths)
        doc = _set(doc, p, rng.choice(["text", [1, 2], {"a": 1}, None, True, 3]))
        return json.dumps(doc).encode()
    if kind == "huge_numbers":
        nums = _numeric_paths(doc) or paths
        p = rng.choice(nums)
        return json.dumps(_set(doc, p, "@@")).replace('"@@"', rng.choice(["1e400", "-1e400", "9" * 500])).encode()
    if kind == "nan_literals":
        nums = _numeric_paths(doc) or paths
        p = rng.choice(nums)
        return json.dumps(_set(doc, p, "@@")).replace('"@@"', rng.choice(["NaN", "Infinity", "-Infinity"])).encode()
    if kind == "deep_nesting":
        p = rng.choice(paths)
        depth = rng.choice([100, 5000, 100_000])
        return json.dumps(_set(doc, p, "@@")).replace('"@@"', "[" * depth + "1" + "]" * depth).encode()
    if kind == "duplicate_keys":
        dicts = [p for p in paths if isinstance(_get(doc, p), dict) and _get(doc, p)]
        if not dicts:
            return data
        p = rng.choice(dicts)
        d = _get(doc, p)
        k = rng.choice(list(d))
        body = json.dumps(d)
        dup = body[:-1] + f", {json.dumps(k)}: {json.dumps(rng.choice([0.123, 'x', None, [1]]))}" + "}"
        return json.dumps(_set(doc, p, "@@")).replace('"@@"', dup).encode()
    return data


MUTATIONS = ("truncate", "byte_flip", "type_swap", "huge_numbers", "nan_literals", "duplicate_keys", "deep_nesting",
             "bom", "invalid_utf8", "odd_filename", "surrogate", "big_int")
ODD_NAMES = ["sp ace {}", "ünï {}", "-dash{}", "q'uote\"{}", "a;rm -rf{}", "#hash{}", "new\nline{}", "%s%n{}"]


def _content_digest(store) -> tuple:
    """Everything stored, as one hash (results with their source hashes, models, datasets)."""
    rows = store.con.execute(
        """SELECT s.sha256, m.name, d.benchmark, d.name, d.metric, r.num_fewshot, r.value
           FROM results r JOIN sources s USING (source_id) JOIN models m USING (model_id)
           JOIN datasets d USING (dataset_id) ORDER BY ALL""").fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest(), len(rows)


def replaced_rows(report) -> int:
    """Results the ingest removed: the earlier readings of files edited since stored (a fuzz case's path is used
    again by the next seed, with other content), which the new reading replaces."""
    return sum(f.replaced["n_results"] for f in report.files if f.replaced and "n_results" in f.replaced)


def run_fuzz(n_per_kind: int = 2, per_adapter: int = 1, seed: int = 0) -> Family:
    """Mutation fuzzing of every adapter's real files (see module docstring)."""
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.db import Store

    fam = Family("fuzz")
    seeds = real_seeds(per_adapter, seed)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp, Store.open(":memory:") as store:
        tmp = Path(tmp)
        ingest_paths(store, [FIX / "open_llm_leaderboard"], show_progress=False)
        for adapter, files in seeds.items():
            for f in files:
                for kind in MUTATIONS:
                    for rep in range(n_per_kind):
                        label = f"{adapter}/{f.name}/{kind}/{seed}.{rep}"
                        case = tmp / f"{adapter}_{kind}_{rep}"
                        fam.record(label, _fuzz_case(store, f, kind, rng, case))
    return fam


def _fuzz_case(store, real: Path, kind: str, rng: random.Random, case: Path):
    from harness_ext.store.ingest import ingest_paths

    if real.is_dir():  # a HELM run directory: mutate one of its files in a copy
        target_dir = case / real.name
        shutil.copytree(real, target_dir)
        inner = sorted(p for p in target_dir.iterdir() if p.is_file())
        victim = rng.choice(inner)
        if kind != "odd_filename":
            victim.write_bytes(mutate(victim.read_bytes(), kind, rng))
        target = target_dir
    else:
        case.mkdir(parents=True)
        name = real.name
        if kind == "odd_filename":
            name = rng.choice(ODD_NAMES).format(real.name)
        target = case / name
        data = real.read_bytes()
        target.write_bytes(data if kind == "odd_filename" else mutate(data, kind, rng))
    before_digest = _content_digest(store)
    before = store.counts()
    try:
        report = ingest_paths(store, [target], show_progress=False)
    except Exception as exc:  # noqa: BLE001 - exactly what this family looks for
        return f"ingest raised {type(exc).__name__}: {str(exc)[:200]}"
    after = store.counts()
    statuses = [f.status for f in report.files]
    if not report.files:
        return "no per-file report"
    if all(s != "ingested" for s in statuses):
        if after != before or _content_digest(store) != before_digest:
            return f"store changed although nothing was ingested ({statuses})"
        if any(s == "skipped" and not f.reason for s, f in zip(statuses, report.files)):
            return "skipped without a reason"
    else:
        gone = replaced_rows(report)
        if after["results"] - before["results"] != report.n_results - gone:
            return (f"reported {report.n_results} results ({gone} replaced), stored "
                    f"{after['results'] - before['results']}")
        _, n_before = before_digest
        if _content_digest(store)[1] != n_before + report.n_results - gone:
            return "stored rows do not add up"
    shutil.rmtree(case, ignore_errors=True)
    return None


# -- store consistency, kill loop, concurrency ------------------------------------------------------------
def store_problems(db: Path):
    """Why the store at ``db`` is inconsistent, or None: each source has exactly its n_results rows,
    no row points at a missing source, model or dataset."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if not tables:
            return None  # killed before the schema was created: an empty store, which ingest completes
        if not {"meta", "sources", "models", "datasets", "results"} <= tables:
            return f"a partial schema: {sorted(tables)}"
        bad = con.execute("""SELECT s.path, s.n_results, count(r.source_id) FROM sources s
                             LEFT JOIN results r USING (source_id) GROUP BY ALL
                             HAVING count(r.source_id) <> s.n_results LIMIT 3""").fetchall()
        if bad:
            return f"sources with missing rows: {bad}"
        orphans = con.execute("""SELECT count(*) FROM results r WHERE source_id NOT IN (SELECT source_id FROM sources)
                                 OR model_id NOT IN (SELECT model_id FROM models)
                                 OR dataset_id NOT IN (SELECT dataset_id FROM datasets)""").fetchone()[0]
        if orphans:
            return f"{orphans} orphan result rows"
    finally:
        con.close()
    return None


def content(db: Path) -> tuple:
    """Path-independent content of a store (for 'equal to a sequential ingest')."""
    from harness_ext.store.db import Store

    with Store.open(db, read_only=True, lock_timeout=120) as s:
        return _content_digest(s)


def make_corpus(root: Path, n_csv: int = 300, seed: int = 0) -> list:
    """Many small files (CSV leaderboards) plus real fixtures: enough batches to kill or race inside."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n_csv):
        rows = "".join(f"m{i % 40},d{j},{rng.random():.6f}\n" for j in range(rng.randint(3, 30)))
        (root / f"board{i:04d}.csv").write_text("model,dataset,value\n" + rows)
    return [root, FIX / "bigbench", FIX / "open_llm_leaderboard", FIX / "helm"]


def _ingest_cmd(db, paths, *extra):
    return [sys.executable, "-m", "harness_ext", "ingest", "-q", "--db", str(db), *extra, *map(str, paths)]


def run_kills(n_kills: int = 3, seed: int = 0, batch_files: int = 20, n_csv: int = 300) -> Family:
    """SIGKILL ``ingest`` at random moments; check consistency after each; finish and compare."""
    fam = Family("kill")
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = make_corpus(tmp / "corpus", n_csv=n_csv, seed=seed)
        ref = tmp / "ref.duckdb"
        r = subprocess.run(_ingest_cmd(ref, paths), capture_output=True, text=True, env=ENV, timeout=900)
        if r.returncode != 0:
            fam.record("reference ingest", r.stderr[-300:])
            return fam
        db = tmp / "killed.duckdb"
        env = {**ENV, "HARNESS_EXT_BATCH_FILES": str(batch_files)}
        for k in range(n_kills):
            proc = subprocess.Popen(_ingest_cmd(db, paths), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            time.sleep(rng.uniform(0.3, 4.0))
            killed = proc.poll() is None
            if killed:
                proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=300)
            problem = None
            if db.exists():
                try:
                    problem = store_problems(db)
                except Exception as exc:  # noqa: BLE001 - a store a kill left unreadable is a failure
                    problem = f"store unreadable after the kill: {type(exc).__name__}: {exc}"
            fam.record(f"kill {k} ({'killed' if killed else 'finished first'})", problem)
        r = subprocess.run(_ingest_cmd(db, paths), capture_output=True, text=True, env=ENV, timeout=900)
        problem = r.stderr[-300:] if r.returncode != 0 else (store_problems(db) or
                                                            (None if content(db) == content(ref) else "content differs from a clean ingest"))
        fam.record("finish after kills equals a clean ingest", problem)
    return fam


def run_concurrency(n_writers: int = 2, n_readers: int = 1, seed: int = 0, n_csv: int = 150) -> Family:
    """N writers on overlapping parts of a corpus plus readers, all at once; then compare."""
    fam = Family("concurrency")
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = make_corpus(tmp / "corpus", n_csv=n_csv, seed=seed)
        files = sorted((tmp / "corpus").iterdir()) + paths[1:]
        parts = [[f for f in files if rng.random() < 0.6] for _ in range(n_writers)]
        parts[0] = sorted(set(files) - set().union(*parts[1:])) + parts[0][:5]  # together they cover everything
        ref = tmp / "ref.duckdb"
        for part in parts:
            r = subprocess.run(_ingest_cmd(ref, part), capture_output=True, text=True, env=ENV, timeout=900)
            fam.record(f"sequential writer ({len(part)} paths)", None if r.returncode == 0 else r.stderr[-300:])
        db = tmp / "race.duckdb"
        # Give readers a store to read from the start (a reader of a store that does not exist yet is an error).
        subprocess.run(_ingest_cmd(db, [FIX / "bigbench"]), capture_output=True, env=ENV, timeout=300)
        env = {**ENV, "HARNESS_EXT_BATCH_FILES": "15"}
        writers = [subprocess.Popen(_ingest_cmd(db, part, "--lock-timeout", "600"), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=env) for part in parts]
        readers_done = []
        reads = 0
        while any(w.poll() is None for w in writers) or reads < n_readers:
            cmds = [[sys.executable, "-m", "harness_ext", rng.choice(["info", "matrix"]), "--db", str(db),
                     "--lock-timeout", "600"] for _ in range(n_readers)]
            procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV) for c in cmds]
            for c, p in zip(cmds, procs):
                _, err = p.communicate(timeout=900)
                reads += 1
                readers_done.append((c[3], p.returncode, err))
        for i, w in enumerate(writers):
            _, err = w.communicate(timeout=900)
            fam.record(f"concurrent writer {i}", None if w.returncode == 0 else err[-300:])
        for cmd, rc, err in readers_done:
            fam.record(f"reader {cmd} during ingest", None if rc == 0 and "Traceback" not in err else err[-300:])
        # The bigbench seed ingest is in parts too, so both stores hold the same content.
        problem = store_problems(db) or (None if content(db) == content(ref) else "content differs from a sequential ingest")
        fam.record("concurrent result equals sequential", problem)
    return fam


# -- every command against hostile inputs ------------------------------------------------------------------
def _cli(args):
    from harness_ext.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: usage error, exit 2
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


#: Exit code of a malformed command line (unknown command, missing command, invalid choice): argparse's
#: usage error, 2, as for every argparse/POSIX tool (``lm_eval``, ``pip``, ``git``). It is raised before
#: anything runs, prints the usage and a one-line ``error:``; every other refusal exits 1 with one line.
USAGE_ERROR = 2
#: A benchmark of the good store with enough models (8) for reduce and stalk to reach their argument checks.
BIG = "obsscaling_base_llm_benchmark_eval"


def hostile_cli_cases(tmp: Path) -> list:
    """``(label, argv, expected exit code)`` for every command with hostile stores, paths, manifests and values.

    Exit 0: the input is fine (an empty store has nothing to summarise); 1: the command refused it with one
    ``harness-ext CMD: error: ...`` line; :data:`USAGE_ERROR` only for a malformed command line.
    """
    from harness_ext.store.ingest import ingest_paths
    from harness_ext.store.db import Store

    good = tmp / "good.duckdb"
    with Store.open(good) as s:
        ingest_paths(s, [FIX / "open_llm_leaderboard", FIX / "bigbench", FIX / "csv" / f"{BIG}.csv"], show_progress=False)
    empty = tmp / "empty.duckdb"
    Store.open(empty).close()
    (tmp / "x.json").write_text('{"results": {}}')
    (tmp / "trunc.duckdb").write_bytes(good.read_bytes()[:5000])
    (tmp / "adir").mkdir()
    loop = tmp / "loop.json"
    loop.symlink_to(loop)
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    (tmp / "bad_manifest.json").write_text('{"manifest_version": "1.0", "x": ' + "[" * 5000 + "]" * 5000 + "}")
    (tmp / "nan_manifest.json").write_text('{"manifest_version": "1.0", "weight": NaN}')
    dbs = {"json": tmp / "x.json", "truncated": tmp / "trunc.duckdb", "dir": tmp / "adir", "missing": tmp / "no.duckdb",
           "empty_store": empty, "good": good}
    cases = []
    # (variant, exit code on the good store); other stores get the first variant and exit 1, except that
    # info on an empty store is a fine question (exit 0).
    analyses = {
        "matrix": [([], 0), (["--benchmark", "nope"], 1), (["--datasets", "[", "--models", "**"], 1),
                   (["--num-fewshot", "-1"], USAGE_ERROR), (["--out", tmp / "adir"], 1),
                   (["--out", tmp / "nodir" / "m.csv"], 1)],
        "info": [([], 0), (["--conflicts"], 0)],
        "stalk": [([], 1),  # several benchmarks and no --benchmark
                  (["--benchmark", BIG, "--threshold", "nan"], 1), (["--benchmark", BIG, "--min-points", "-5"], 1)],
        # Analyses on the good store are real computations: only their argument checks are attacked here.
        "prowl": [(["--benchmark", "nope"], 1)],
        "pounce": [(["--benchmark", "nope"], 1)],
        "weights": [(["--benchmark", "nope"], 1)],
        "compare": [(["--benchmark", "nope"], 1)],
        "reduce": [(["--benchmark", BIG, "--budget", "nan"], 1), (["--benchmark", BIG, "--budget", "-3"], 1),
                   (["--benchmark", BIG, "--budget", "1e999"], 1), (["--group-name", "../../x"], 1),
                   (["--group-name", "x" * 300], 1), (["--benchmark", BIG, "--selector", "nope"], 1),
                   (["--benchmark", BIG, "--weights", str(fifo)], 1), ([], 1),  # several benchmarks
                   (["--benchmark", "open_llm_leaderboard_v1", "--budget", "2", "--n-random", "5"], 1)],  # 2 models
    }
    for cmd, variants in analyses.items():
        for dbk, db in dbs.items():
            for v, rc in variants if dbk == "good" else variants[:1]:
                if dbk != "good":
                    rc = 0 if (cmd == "info" and dbk == "empty_store") else 1
                out = [] if cmd in ("matrix", "info") else ["--out", tmp / "out"]  # never the working directory
                cases.append((f"{cmd} {dbk} {' '.join(map(str, v))[:40]}", [cmd, "--db", db, "--lock-timeout", "1", *out, *v], rc))
    for what, path in {"fifo": fifo, "loop": loop, "devnull": "/dev/null", "missing": tmp / "nope.json", "dir": tmp / "adir",
                       "json": tmp / "x.json"}.items():
        cases.append((f"ingest {what}", ["ingest", "--db", tmp / "new.duckdb", path], 1))
        cases.append((f"ingest forced csv {what}", ["ingest", "--db", tmp / "new.duckdb", "--adapter", "csv", path], 1))
        cases.append((f"predict manifest {what}", ["predict", "--manifest", path, FIX / "bigbench"], 1))
    for name in ("bad_manifest.json", "nan_manifest.json"):
        cases.append((f"predict {name}", ["predict", "--manifest", tmp / name, FIX / "bigbench"], 1))
    for dbk, db in dbs.items():
        cases.append((f"ingest into {dbk}", ["ingest", "--db", db, FIX / "bigbench"], 1 if dbk in ("json", "truncated", "dir") else 0))
    cases += side_file_cases(tmp, good, fifo)
    cases += [("plugins", ["plugins"], 0), ("plugins --json", ["plugins", "--json", tmp / "plugins.json"], 0),
              ("plugins --json DIR", ["plugins", "--json", tmp / "adir"], 1),
              ("info --json in a missing folder", ["info", "--db", good, "--json", tmp / "nope" / "i.json"], 1),
              ("plugins --json loop", ["plugins", "--json", loop], 1),
              ("plugins bad kind", ["plugins", "--kind", "nope"], USAGE_ERROR),  # invalid choice
              ("ingest bad adapter", ["ingest", "--db", tmp / "n2.duckdb", "--adapter", "nope", FIX / "bigbench"], 1),
              ("no command", [], USAGE_ERROR),  # the usage, as for an unknown command
              ("unknown command", ["explode"], USAGE_ERROR),
              ("unknown option", ["info", "--nope"], USAGE_ERROR),
              ("bad number", ["stalk", "--threshold", "high"], USAGE_ERROR)]  # argparse type check
    return cases


def side_file_cases(tmp: Path, good: Path, fifo: Path) -> list:
    """``(label, argv, 1, file)``: every side-file option given a FIFO, ``/dev/zero``, bytes that are not UTF-8,
    ``1e400``, or a list where a mapping belongs; each must be one error line naming ``file``."""
    bad = {"fifo": fifo, "dev_zero": Path("/dev/zero")}
    for suffix in (".json", ".yaml", ".csv"):
        (tmp / f"side_utf8{suffix}").write_bytes(b"\xff\xfe bad: 1\n")
        bad[f"not_utf8{suffix}"] = tmp / f"side_utf8{suffix}"
    (tmp / "side_inf.json").write_text('{"aliases": {"a": ["b"]}, "arc": 1e400, "x": [1e400]}')
    (tmp / "side_inf.csv").write_text("dataset,cost,chance,alias,canonical\narc,1e400,1e400,a,b\n")
    (tmp / "side_list.yaml").write_text("aliases: [a, b]\nbenchmark: [x]\n")
    (tmp / "side_list.json").write_text('{"aliases": ["a", "b"], "weights": [1, 2]}')
    bad.update({"inf.json": tmp / "side_inf.json", "inf.csv": tmp / "side_inf.csv", "list.yaml": tmp / "side_list.yaml",
                "list.json": tmp / "side_list.json"})
    board = FIX / "csv" / f"{BIG}.csv"
    commands = {
        "--chance-file": lambda f: ["matrix", "--db", good, "--benchmark", BIG, "--chance-file", f],
        "models --aliases": lambda f: ["models", "--db", good, "--aliases", f],
        "--costs": lambda f: ["reduce", "--db", good, "--benchmark", BIG, "--out", tmp / "out", "--costs", f],
        "--weights": lambda f: ["reduce", "--db", good, "--benchmark", BIG, "--out", tmp / "out", "--weights", f],
        "--column-meta": lambda f: ["ingest", "--db", tmp / "side.duckdb", "--column-meta", f, board],
        "--manifest": lambda f: ["predict", "--manifest", f, FIX / "bigbench"],
    }
    cases = []
    for option, argv in commands.items():
        for what, f in bad.items():
            cases.append((f"side file {option} {what}", argv(f), 1, str(f)))
    return cases


def _problem(rc: int, expected: int, out: str, err: str):
    """Why a case's exit and messages are wrong, or None."""
    if "Traceback" in err:
        return "traceback on stderr: " + err[-300:]
    if rc != expected:
        return f"exit {rc}, expected {expected}: " + err.strip()[-300:]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error:" in ln]
    if rc == 1:
        # one line, the last, naming the command; warnings before it are fine
        if len(errors) != 1 or not lines or lines[-1] is not errors[0] or not errors[0].startswith("harness-ext"):
            return "not a one-line error: " + err.strip()[-300:]
    elif rc == USAGE_ERROR:
        if not (errors and lines[-1].startswith("harness-ext") and "usage:" in err) and not out.startswith("usage:"):
            return "a usage error without the usage and one error line: " + (err or out).strip()[-300:]
    elif errors:
        return "exit 0 with an error line: " + errors[0][:300]
    return None


def run_cli_corpus() -> Family:
    """Every command against the hostile corpus: the expected exit code (see :func:`hostile_cli_cases`),
    a one-line error for exit 1, and never a traceback.

    A case the guard had to catch (``error: unexpected ...``) passes the no-traceback rule but is
    listed in ``guarded`` so unanticipated errors stay visible.
    """
    fam = Family("cli")
    fam.guarded = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, argv, expected, *named in hostile_cli_cases(Path(tmp)):
            rc, out, err = _cli(argv)
            problem = _problem(rc, expected, out, err)
            if "error: unexpected" in err:
                # the guard caught an exception no check anticipated: no traceback, but the command was aborted
                fam.guarded.append(f"{label}: {err.strip()[:200]}")
                problem = problem or "an unanticipated error (the guard's 'unexpected' line): " + err.strip()[-300:]
            if problem is None and named and named[0] not in err:
                problem = f"the error does not name {named[0]}: " + err.strip()[-300:]
            fam.record(label, problem)
    return fam
