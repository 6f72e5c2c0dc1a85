"""``reduce --items`` on Inspect AI logs writes ``inspect_sample_ids.json``: each Inspect task (as its logs name it)
-> its drawn sample ids as the logs give them, for ``inspect eval --sample-id``. Real logs (tests/fixtures/inspect)
as the population's template, text ids, byte-identical reruns, no file without Inspect tasks, hostile names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.methods.reduction.inspect_samples import FILE_NAME, unsafe_warnings
from harness_ext.methods.reduction.item_manifest import decode_ids
from harness_ext.methods.reduction.manifest import load_manifest
from test_inspect_items import CANCELLED, _log, _population, _scored

GRADES = ("C", "I")


def _real_population(folder: Path, n_models: int = 6) -> None:
    """The real gpt-4o-mini log of ``inspect_evals/popularity`` (3 samples, as published; status set to success)
    as several models' logs, each grading the samples its own way."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = json.loads(CANCELLED.read_text())
    for m in range(n_models):
        d = dict(doc, status="success", eval=dict(doc["eval"], task="inspect_evals/popularity", model=f"org/real-{m}"))
        d["samples"] = [dict(s, scores={"match": dict(s["scores"]["match"], value=GRADES[(m >> i) & 1])})
                        for i, s in enumerate(doc["samples"])]
        (folder / f"popularity_{m}.json").write_text(json.dumps(d))


def _reduce(tmp_path, logs, n: int, name: str = "reduced", db_name: str = "store.duckdb", ingest: bool = True):
    db = tmp_path / db_name
    if ingest:
        assert main(["ingest", "--db", str(db), "-q", str(logs)]) == 0
    out = tmp_path / name
    assert main(["reduce", "--db", str(db), "--benchmark", "inspect", "--items", str(n), "--out", str(out),
                 "--no-plot"]) == 0
    return out


def _logged_ids(folder: Path) -> dict:
    """Inspect task -> every sample id its logs hold."""
    got = {}
    for p in folder.glob("*.json"):
        d = json.loads(p.read_text())
        got.setdefault(d["eval"]["task"], set()).update(s["id"] for s in d["samples"])
    return got


@pytest.mark.slow
def test_reduce_items_writes_the_drawn_sample_ids_as_inspect_names_them(tmp_path, capsys):
    logs = tmp_path / "logs"
    _population(logs)
    _real_population(logs)
    out = _reduce(tmp_path, logs, 2)
    m = load_manifest(out)
    data = json.loads((out / FILE_NAME).read_text())
    # The task as its logs name it (the store keeps "popularity"), the ids as the logs give them: numbers, text.
    assert sorted(data) == ["arith", "inspect_evals/popularity", "trivia"] and "popularity" in m["tasks"]
    logged = _logged_ids(logs)
    for task, ids in data.items():
        assert len(ids) == 2 and set(ids) <= logged[task], (task, ids)
    assert all(isinstance(i, int) for i in data["arith"] + data["inspect_evals/popularity"])
    assert all(isinstance(i, str) for i in data["trivia"])
    # The drawn items of the manifest, in the draw's order: numbers, and text ids through the manifest's item_ids.
    for task, b in m["tasks"].items():
        drawn = decode_ids(b["sample"]).tolist()
        names = dict(zip(decode_ids(b["items"]).tolist(), b.get("item_ids") or []))
        assert data[b["inspect"]["task"]] == [names.get(d, d) for d in drawn]
    captured = capsys.readouterr()
    summary = captured.out
    assert "3 tasks from Inspect AI logs: run each with inspect eval TASK --model MODEL --sample-id IDS" in summary
    # Every task runs under Inspect: the folder is Inspect's file and the manifest, no lm-eval or HELM file, nor a
    # warning on tasks lm-eval has no definition of.
    assert sorted(p.name for p in out.iterdir()) == [FILE_NAME, "manifest.json"]
    assert "there is no lm-eval group, HELM conf or task list" in summary
    assert "not lm-eval tasks" not in captured.err + summary


@pytest.mark.slow
def test_text_ids_round_trip_and_a_rerun_is_byte_identical_whatever_the_ingest_order(tmp_path):
    logs = tmp_path / "logs"
    new = _population(logs)
    first = (_reduce(tmp_path, logs, 10, "a") / FILE_NAME).read_bytes()
    again = (_reduce(tmp_path, logs, 10, "b", ingest=False) / FILE_NAME).read_bytes()
    # The same logs ingested newest-first into a new store: the store numbers the text ids otherwise.
    for p in sorted(logs.glob("*.json"), reverse=True):
        assert main(["ingest", "--db", str(tmp_path / "other.duckdb"), "-q", str(p)]) == 0
    other = (_reduce(tmp_path, logs, 10, "c", "other.duckdb", ingest=False) / FILE_NAME).read_bytes()
    assert first == again == other and first.isascii()
    trivia = json.loads(first)["trivia"]
    # Logged with exactly these ids, a new model's log is what predict estimates from: 10 items used.
    doc, _ = new["trivia"]
    part = dict(doc, samples=[s for s in doc["samples"] if s["id"] in set(trivia)])
    assert len(part["samples"]) == 10
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "trivia.json").write_text(json.dumps(part))
    pj = tmp_path / "p.json"
    assert main(["predict", "-m", str(tmp_path / "a"), str(tmp_path / "new"), "--json", str(pj)]) == 0
    [row] = [r for r in json.loads(pj.read_text())["datasets"] if r["dataset"] == "trivia"]
    assert row["n_used"] == 10


def test_a_store_of_lm_eval_logs_only_writes_no_inspect_file(tmp_path, capsys):
    """Real lm-eval 0.4.13 output (tests/fixtures/samples): the reduced folder is lm-eval's alone."""
    logs = Path(__file__).parent / "fixtures" / "samples" / "lm_eval_output"
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(logs / "toy__lm-small"), str(logs / "toy__lm-medium")]) == 0
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "5", "--metric", "acc", "--out", str(out), "--no-plot"]) == 0
    assert not (out / FILE_NAME).exists() and (out / "harness_ext_reduced_samples.json").exists()
    assert all("inspect" not in b for b in load_manifest(out)["tasks"].values())
    assert "Inspect" not in capsys.readouterr().out + (out / "harness_ext_reduced.yaml").read_text()


#: Ingest refuses a task name with a line break (tests/test_inspect_items.py); one with ; and $( ) gets through.
# Just under the store's 1,000-character limit on names (a longer one refuses the file: tests/test_hostile_readers.py).
HOSTILE_TASK = "evil;rm -rf ~;$(touch PWNED)" + "x" * 960
HOSTILE_IDS = ["a,b", " padded ", "q*", "$(touch PWNED)", "line\nbreak", "ok-1", "x;y"]


def test_hostile_task_names_and_ids_are_kept_as_data_and_counted_in_a_warning(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    for m in range(6):
        samples = [_scored(i, GRADES[(m + k) % 2]) for k, i in enumerate(HOSTILE_IDS + [-3])]
        doc = _log(samples)
        doc["eval"].update(task=HOSTILE_TASK, model=f"org/m{m}")
        (logs / f"h{m}.json").write_text(json.dumps(doc))
    out = _reduce(tmp_path, logs, 20)
    err = capsys.readouterr().err
    raw = (out / FILE_NAME).read_text()
    data = json.loads(raw)
    assert list(data) == [HOSTILE_TASK] and sorted(data[HOSTILE_TASK], key=str) == sorted(HOSTILE_IDS + [-3], key=str)
    assert raw.isascii() and len(raw.splitlines()) == len(HOSTILE_IDS) + 5  # one id a line: no raw newline inside
    assert "its name is not a plain word a command line takes as it is" in err
    assert "7 of its 8 drawn sample ids cannot be given to inspect eval --sample-id as they are" in err
    for why in ("1 a comma", "1 blanks at either end", "1 a glob character", "3 characters a shell reads",
                "1 negative whole numbers"):
        assert why in err, why
    assert len([line for line in err.splitlines() if "Inspect task" in line]) == 2
    # The name is shown cut in every warning (the one on tasks that are not lm-eval's printed all of it).
    assert all(len(line) < 1000 for line in err.splitlines()), max(map(len, err.splitlines()))
    assert not list(out.glob("*.sh"))
    assert not [p for p in tmp_path.rglob("*") if p.name == "PWNED"]


def test_plain_names_and_ids_give_no_warning():
    assert unsafe_warnings("inspect_evals/gsm8k", [0, 17, "id7", "HumanEval/0", "mbpp-601", "q1.b:2"]) == []
    assert unsafe_warnings("tasks/popularity.py@popularity", ["x"]) == []
    [w] = unsafe_warnings("-rf", [1])
    assert "a leading '-'" in w
    [w] = unsafe_warnings("a\nb", [1])
    assert "\n" not in w and '"a\\nb"' in w  # escaped, as JSON shows it


def test_a_list_too_long_for_one_argument_is_warned_and_a_malformed_field_refused():
    from harness_ext.errors import HarnessExtError
    from harness_ext.methods.reduction.inspect_samples import inspect_sample_ids

    [w] = unsafe_warnings("t", ["a" * 60_000, "b" * 60_000])
    assert "more than one command-line argument takes" in w
    with pytest.raises(HarnessExtError, match="its inspect field is not a task name and a list of sample ids"):
        inspect_sample_ids({"tasks": {"t": {"inspect": {"task": "t", "sample_ids": [True]}}}})
    assert inspect_sample_ids({"tasks": {"t": {"metric": "acc"}}}) == {}


def test_warnings_show_a_task_name_as_it_reads_cut_and_quoted():
    """They showed non-ASCII letters as JSON escapes (``\\u00e9``); names are quoted the way every message quotes."""
    [w] = unsafe_warnings("évaluation;x", [1])
    assert w.startswith('Inspect task "évaluation;x": its name is not a plain word')
    [w] = unsafe_warnings("t" * 200 + ";", [1])
    assert w.startswith('Inspect task "' + "t" * 77 + '...": its name')


def inspect_runs(dataset_ids: list, sample_id: list) -> list:
    """The dataset ids Inspect runs for ``sample_id`` (``eval(..., sample_id=[...])`` or ``--sample-id``): Inspect's
    own rule, from ``slice_dataset`` in inspect_ai/_eval/task/util.py (UKGovernmentBEIS/inspect_ai): each id is
    normalised (text of digits read as a whole number, a whole number padded to 20 characters, other text kept),
    and a sample runs when its normalised id matches some normalised listed id as an ``fnmatch`` glob pattern."""
    from fnmatch import fnmatch

    def normalise(i):
        if isinstance(i, str) and i.isdigit():
            i = int(i)
        return i if isinstance(i, str) else str(i).zfill(20)

    wanted = [normalise(i) for i in sample_id]
    return [i for i in dataset_ids if any(fnmatch(normalise(i), p) for p in wanted)]


#: Text ids a whole number's text (what the id map used to keep them as: 17, 7, 5, 1000), and the whole number 17.
TEXT_IDS = ["17.0", "007", "+5", "1e3", 17]


def _text_id_population(folder: Path, ids: list, n_models: int = 6, first: int = 0) -> None:
    """The real gpt-4o-mini log of ``popularity`` (tests/fixtures/inspect/samples), its samples given the ids
    ``ids`` (the real samples repeated), as several models' logs grading them their own way."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = json.loads(CANCELLED.read_text())
    real = doc["samples"]
    for m in range(first, first + n_models):
        d = dict(doc, status="success", eval=dict(doc["eval"], task="inspect_evals/popularity", model=f"org/real-{m}"))
        d["samples"] = [dict(real[k % len(real)], id=i, scores={"match": dict(real[k % len(real)]["scores"]["match"],
                                                                             value=GRADES[(m >> (k % 3)) & 1])})
                        for k, i in enumerate(ids)]
        (folder / f"popularity_{m}.json").write_text(json.dumps(d))


# "17.0" beside 17 (the store numbers them), or alone; ids of one prefix that is not a numbering one ("w-05": the store
# keeps 5, a log naming the item by id reads it as its text), as an Inspect AI 0.3.285 run of a task file gave them.
@pytest.mark.parametrize("ids", [TEXT_IDS, TEXT_IDS[:4], [f"w-{i:02d}" for i in range(5)]])
def test_text_ids_are_listed_exactly_as_logged_and_inspect_runs_each_of_them(tmp_path, ids):
    logs = tmp_path / "logs"
    _text_id_population(logs, ids)
    out = _reduce(tmp_path, logs, len(ids))
    [(task, listed)] = json.loads((out / FILE_NAME).read_text()).items()
    # Verbatim, type too: the text "17.0" is not the whole number 17, which is an item of its own.
    assert task == "inspect_evals/popularity" and len(listed) == len(ids)
    assert sorted(map(json.dumps, listed)) == sorted(map(json.dumps, ids))
    for i in listed:  # Inspect runs the sample each listed id names, and no other
        assert inspect_runs(ids, [i]) == [i]
    # What the file listed before, each as its whole number: Inspect runs none of "17.0", "+5" and "1e3".
    assert inspect_runs(TEXT_IDS, [17, 7, 5, 1000]) == ["007", 17]
    # Six models' logs of the task list the same ids: one item each, not one per log.
    from harness_ext.store.db import Store
    from harness_ext.store.item_ids import item_id_map

    with Store.open(tmp_path / "store.duckdb", read_only=True) as store:
        assert sorted(item_id_map(store, "inspect")["item"]) == sorted(map(str, ids))
    # A new model's log of exactly the listed ids is what predict estimates from: every item used.
    _text_id_population(tmp_path / "new", listed, n_models=1, first=6)
    pj = tmp_path / "p.json"
    assert main(["predict", "-m", str(out), str(tmp_path / "new"), "--json", str(pj)]) == 0
    [row] = [r for r in json.loads(pj.read_text())["datasets"] if r["dataset"] == "popularity"]
    assert row["n_used"] == len(ids)


@pytest.mark.parametrize("first, second", [(["007", 1], [7, 1]), (["17", 1], [17, 1]), ([-5, 1], ["-5", 1])])
def test_two_ids_inspect_cannot_tell_apart_are_refused_naming_the_log(tmp_path, capsys, first, second):
    """"007" and 7 are one id to --sample-id (text of digits is read as a number); 17 and "17", -5 and "-5" are two
    values with one text. Across two logs of a task, and within one log, the file is refused (skipped, named)."""
    a, b = tmp_path / "a", tmp_path / "b"
    _text_id_population(a, first, n_models=1)
    _text_id_population(b, second, n_models=1, first=1)
    db = str(tmp_path / "store.duckdb")
    assert main(["ingest", "--db", db, "-q", str(a)]) == 0
    capsys.readouterr()
    main(["ingest", "--db", db, str(b)])  # the file skipped, with the reason
    err = capsys.readouterr().err
    assert "skipped" in err and "popularity_1.json" in err and "inspect eval --sample-id cannot tell apart" in err
    both = tmp_path / "both"
    _text_id_population(both, [first[0], second[0]], n_models=1)
    main(["ingest", "--db", str(tmp_path / "other.duckdb"), str(both)])
    err = capsys.readouterr().err
    assert "skipped" in err and "popularity_0.json" in err and "inspect eval --sample-id cannot tell apart" in err


def test_a_store_whose_id_map_has_no_logged_ids_still_reduces_and_takes_new_logs(tmp_path, capsys):
    """A store written before the id map kept ids as logged (its map without the column, as that version made it)
    reduces read-only, listing its ids as before, with a warning on whole numbers; a later ingest adds the column."""
    import duckdb

    logs = tmp_path / "logs"
    _text_id_population(logs, [17, "a", 3])
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(logs)]) == 0
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE item_ids DROP COLUMN logged")
    capsys.readouterr()
    out = _reduce(tmp_path, logs, 3, ingest=False)
    assert sorted(json.loads((out / FILE_NAME).read_text())["inspect_evals/popularity"], key=str) == [17, 3, "a"]
    assert "2 drawn sample ids are whole numbers stored by a version" in capsys.readouterr().err
    more = tmp_path / "more"
    _text_id_population(more, [17, "a", 3], n_models=1, first=6)
    assert main(["ingest", "--db", str(db), "-q", str(more)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM item_ids WHERE logged IS NULL").fetchone()[0] == 3


@pytest.mark.slow
def test_an_inspect_only_reduction_writes_no_lm_eval_files_and_a_mixed_one_both(tmp_path):
    """Every task from Inspect logs: the folder is inspect_sample_ids.json and manifest.json (no lm-eval group,
    --samples file, HELM conf or task list). The same manifest with one task not from Inspect keeps both."""
    from harness_ext.methods.reduction.manifest import write_outputs
    from harness_ext.methods.reduction.reduce import DEFAULT_FORMATS

    logs = tmp_path / "logs"
    _population(logs)
    out = _reduce(tmp_path, logs, 4)
    assert sorted(p.name for p in out.iterdir()) == [FILE_NAME, "manifest.json"]
    assert not list(out.glob("*.yaml")) and not list(out.glob("*_samples.json"))
    m = load_manifest(out)
    m["tasks"]["arith"].pop("inspect")  # as a task of another harness beside the Inspect ones
    written = {Path(p).name for p in write_outputs(m, tmp_path / "mixed", DEFAULT_FORMATS)}
    assert {FILE_NAME, "harness_ext_reduced.yaml", "harness_ext_reduced_samples.json"} <= written
    assert FILE_NAME in (tmp_path / "mixed" / "harness_ext_reduced.yaml").read_text()


def test_an_id_a_store_without_logged_ids_may_hold_as_its_number_is_refused_not_split(tmp_path, capsys):
    """A store written before the map kept logged ids holds "007" as 7: a later log's "007" is refused, naming the
    file, not stored as a second item beside it."""
    import duckdb

    logs = tmp_path / "logs"
    _text_id_population(logs, ["007", "a"], n_models=1)
    db = tmp_path / "store.duckdb"
    assert main(["ingest", "--db", str(db), "-q", str(logs)]) == 0
    with duckdb.connect(str(db)) as con:  # as that version stored it
        con.execute("ALTER TABLE item_ids DROP COLUMN logged")
        con.execute("UPDATE item_ids SET item = '7' WHERE item = '007'")
    more = tmp_path / "more"
    _text_id_population(more, ["007", "a"], n_models=1, first=1)
    capsys.readouterr()
    main(["ingest", "--db", str(db), str(more)])
    err = capsys.readouterr().err
    assert "skipped" in err and "popularity_1.json" in err and "'007' may be the item '7'" in err
