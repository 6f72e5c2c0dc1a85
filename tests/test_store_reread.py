"""Files an older reader stored: counted by ``ingest``, read again by ``ingest --reread``.

Ingest is idempotent by content hash, so a store made by an older harness-ext keeps what the older adapters read
from each file. Every source now records its adapter's revision; an "old store" here is one whose files were read
by readers that stored something else from the same real files (other values, directions, model names, an extra
dataset, other item scores), under an older revision, or one made before revisions were recorded (schema 1).
``--reread`` must leave it exactly as a fresh ingest of the same files in the same order.
"""

from __future__ import annotations

import dataclasses
import json

import duckdb
import pytest

from conftest import REPO
from harness_ext.cli import main
from harness_ext.errors import IngestError, StoreError
from harness_ext.plugin_manager import get_registrations
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.item_format import ItemTable
from harness_ext.store.item_tables import item_rows
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.tables import SCHEMA_VERSION

FIX = REPO / "tests" / "fixtures"
#: Real files of five formats: HELM runs (one with per-instance stats), Every Eval Ever records of the same HELM
#: models, lm-eval v0.4 results, leaderboard CSVs, Inspect AI logs with samples.
PATHS = [FIX / "helm" / "benchmark_output" / "runs" / "v1.13.0", FIX / "helm_instances" / "babi_qa_task15",
         FIX / "helm" / "every_eval_ever", FIX / "every_eval_ever" / "helm_lite", FIX / "lm_eval_v04", FIX / "csv",
         FIX / "inspect"]


def _adapters(monkeypatch) -> dict:
    """The adapters ingest uses, as one dict of registrations the test may patch (each call makes new ones)."""
    import harness_ext.store.ingest as ingest

    ads = get_registrations("adapters")
    monkeypatch.setattr(ingest, "get_registrations", lambda kind, pm=None: ads)
    return ads


def _old_readers(monkeypatch):
    """Make the HELM run, CSV and Inspect adapters an older revision that read the same files otherwise: HELM values
    off by 0.1 and the direction flipped, one CSV's models renamed and an extra dataset per CSV, and HELM's
    per-instance scores and Inspect's samples as 1 - score."""
    import harness_ext.adapters.helm_instances as helm_instances
    import harness_ext.adapters.inspect_items as inspect_items

    ads = _adapters(monkeypatch)

    def older(name, change):
        a = ads[name]
        real = a.read
        monkeypatch.setattr(a, "read", lambda src: [r for rec in real(src) for r in change(src, rec)])
        monkeypatch.setattr(a, "revision", "0")

    def helm(src, rec):
        return [dataclasses.replace(rec, value=min(1.0, rec.value + 0.1) if rec.value <= 1 else rec.value,
                                    higher_is_better=not rec.higher_is_better if rec.higher_is_better is not None
                                    else False)]

    def csv(src, rec):
        model = rec.model + " (old)" if "arena_hard" in src.path.name else rec.model
        extra = dataclasses.replace(rec, dataset="old_only", metric="old", model=model, aggregate=False)
        return [dataclasses.replace(rec, model=model)] + ([extra] if rec.dataset == _first_dataset(src) else [])

    _seen: dict = {}

    def _first_dataset(src):
        return _seen.setdefault(src.path, next(iter(r.dataset for r in real_csv(src))))

    real_csv = ads["csv"].read
    older("helm_run", helm)
    older("csv", csv)
    older("inspect_ai", lambda src, rec: [rec])

    def flipped(read):
        def old(*args):
            table = read(*args)
            if table is None:
                return None
            return ItemTable(table.path, table.benchmark, table.frame.assign(value=1.0 - table.frame["value"]),
                             table.sha256, list(table.notes), table.ids)
        return old

    monkeypatch.setattr(helm_instances, "read_run_instances", flipped(helm_instances.read_run_instances))
    monkeypatch.setattr(inspect_items, "read_items", flipped(inspect_items.read_items))


def _snapshot(path) -> dict:
    """Everything a reader of the store sees, by names (not by internal ids): every benchmark's matrix, the raw
    results and repeats with their sources, datasets and models as described, metadata, conflicts, aliases, item
    scores."""
    with Store.open(str(path), read_only=True) as store:
        con = store.con
        out = {"matrices": {}}
        for b in store.benchmarks()["benchmark"]:
            for agg in (False, True):
                m = load_matrix(store, MatrixQuery(benchmarks=(b,), aggregates=agg))
                out["matrices"][(b, agg)] = m.to_json(orient="split", double_precision=15)
        for t in ("results", "result_repeats"):
            out[t] = con.execute(
                f"""SELECT m.name, d.benchmark, d.name, d.metric, r.num_fewshot, r.value, r.stderr, r.n_samples,
                           r.source_id, s.path FROM {t} r JOIN models m USING (model_id) JOIN datasets d USING (dataset_id)
                    JOIN sources s USING (source_id) ORDER BY ALL""").fetchall()
        out["datasets"] = con.execute("SELECT * EXCLUDE (dataset_id) FROM datasets ORDER BY ALL").fetchall()
        out["models"] = con.execute("SELECT name, metadata FROM models ORDER BY ALL").fetchall()
        out["model_metadata"] = con.execute(
            """SELECT m.name, s.path, mm.key, mm.value FROM model_metadata mm JOIN models m USING (model_id)
               JOIN sources s USING (source_id) ORDER BY ALL""").fetchall()
        out["sources"] = con.execute("SELECT source_id, path, sha256, adapter, n_results, reader, options FROM sources "
                                     "ORDER BY ALL").fetchall()
        out["conflicts"] = store.conflicts().to_json(orient="split")
        out["aliases"] = con.execute("SELECT * FROM model_aliases ORDER BY ALL").fetchall()
        items = item_rows(store)
        out["items"] = sorted(map(tuple, items.astype(str).to_numpy().tolist()))
        if store._has_table("sample_sources"):
            out["item_sources"] = con.execute("SELECT path, sha256, model, task, n_rows, benchmark FROM sample_sources "
                                              "ORDER BY ALL").fetchall()
    return out


def _ingest(db, reread=False, paths=PATHS):
    """Ingest ``paths``; the store's id caches after it must be what the store holds (a reread keeps them up to date
    rather than reading them again per file)."""
    with Store.open(str(db)) as store:
        report = ingest_paths(store, paths, show_progress=False, reread=reread)
        kept = (store._model_ids, store._dataset_ids, store._primary, store._next_source, store._shas)
        store._load_caches()
        assert kept == (store._model_ids, store._dataset_ids, store._primary, store._next_source, store._shas)
        return report


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    db = tmp_path_factory.mktemp("fresh") / "fresh.duckdb"
    report = _ingest(db)
    assert not report.by_status("skipped") or all(f.quiet or "cancelled" in f.reason or "not 'success'" in f.reason
                                                  for f in report.by_status("skipped"))
    return db, _snapshot(db), report


@pytest.mark.slow
def test_an_old_store_read_again_is_a_fresh_ingest(fresh, tmp_path, monkeypatch):
    db = tmp_path / "old.duckdb"
    with monkeypatch.context() as m:
        _old_readers(m)
        old = _ingest(db)
    n_old = sum(f.adapter in ("helm_run", "csv", "inspect_ai") for f in old.by_status("ingested"))
    assert n_old == 23  # 9 HELM runs, 8 CSVs, 6 Inspect logs (the others: Every Eval Ever, lm-eval, item scores)
    before = _snapshot(db)
    assert before != fresh[1] and before["items"] != fresh[1]["items"]
    assert any(name.endswith(" (old)") for name, _ in before["models"])

    # Without --reread: nothing changes, and the summary says how many files an older reader stored.
    again = _ingest(db)
    assert again.n_older_reader == n_old and not again.by_status("ingested")
    assert f"{n_old} of them stored by an older reader: 'harness-ext ingest --reread' reads them again" in again.summary()
    assert _snapshot(db) == before

    reread = _ingest(db, reread=True)
    assert reread.n_reread == n_old and reread.n_older_reader == 0
    assert f"{n_old} of them read again, replacing what an older reader stored" in reread.summary()
    after = _snapshot(db)
    for key in fresh[1]:
        assert after[key] == fresh[1][key], key
    # Models and datasets only the older reading had are gone; a file read again keeps its place in the order.
    assert not any(name.endswith(" (old)") for name, _ in after["models"])
    assert [f.n_results for f in reread.by_status("ingested") if f.reread] == [
        f.n_results for f in fresh[2].by_status("ingested") if f.adapter in ("helm_run", "csv", "inspect_ai")]
    last = _ingest(db, reread=True)
    assert not last.by_status("ingested") and last.n_older_reader == 0 and _snapshot(db) == after


def _as_schema_1(db) -> None:
    """Make a store as the previous release wrote it: no reader or options column, schema version 1."""
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE sources DROP COLUMN reader; ALTER TABLE sources DROP COLUMN options; "
                "UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.close()


@pytest.mark.slow
def test_a_store_made_before_readers_were_recorded_is_upgraded_and_read_again(fresh, tmp_path, capsys):
    db = tmp_path / "v1.duckdb"
    _ingest(db)
    _as_schema_1(db)
    # Read-only commands read it as it is; ingest upgrades it in place and counts every file as read by an older
    # reader (it cannot know which).
    with Store.open(str(db), read_only=True) as store:
        assert store.counts()["sources"] == len(fresh[1]["sources"])
    assert main(["ingest", "--db", str(db), "-q", "--json", "-", *map(str, PATHS)]) == 0
    out = capsys.readouterr().out
    payload = json.loads(out[out.index("{"):])
    n = len(fresh[1]["sources"])
    assert payload["summary"]["older_reader"] == n and payload["summary"]["files"]["ingested"] == 0
    assert sum(f["older_reader"] for f in payload["tables"]["files"]) == n
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("SELECT count(*) FROM sources WHERE reader IS NULL").fetchone()[0] == n
    con.close()
    assert main(["ingest", "--db", str(db), "-q", "--reread", *map(str, PATHS)]) == 0
    assert f"{n} of them read again" in capsys.readouterr().out
    assert _snapshot(db) == fresh[1]


def test_a_newer_store_is_refused_unchanged(tmp_path):
    db = tmp_path / "new.duckdb"
    with Store.open(str(db)) as store:
        store.con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(int(SCHEMA_VERSION) + 1)])
    with pytest.raises(StoreError, match="newer than this harness-ext reads"):
        Store.open(str(db))


@pytest.mark.slow
def test_a_file_that_fails_to_read_again_keeps_its_rows(tmp_path, monkeypatch):
    """The newer reader refuses one CSV (as a stricter check would): it is skipped with a reason naming it and
    saying its stored rows stay; the others are read again."""
    db = tmp_path / "s.duckdb"
    paths = [FIX / "csv"]
    with monkeypatch.context() as m:
        ads = _adapters(m)
        m.setattr(ads["csv"], "revision", "0")
        with Store.open(str(db)) as store:
            ingest_paths(store, paths, show_progress=False)
    before = _snapshot(db)
    bad = FIX / "csv" / "arena_hard_auto_leaderboard_v0.1.csv"

    def stricter(src):
        if src.path.name == bad.name:
            raise IngestError(src.path, "a stricter check refuses it")
        return real(src)

    ads = _adapters(monkeypatch)
    real = ads["csv"].read
    monkeypatch.setattr(ads["csv"], "read", stricter)
    with Store.open(str(db)) as store:
        report = ingest_paths(store, paths, show_progress=False, reread=True)
    (skipped,) = report.by_status("skipped")
    assert skipped.path == str(bad) and skipped.reason == (
        "a stricter check refuses it; what an older reader stored from it is kept as it was")
    assert report.n_reread == 7
    after = _snapshot(db)
    assert after["results"] == before["results"] and after["datasets"] == before["datasets"]
    # The refused file keeps its older revision (read again next time); the others record this one.
    assert sorted(r[5] for r in after["sources"]) == ["0"] + [str(ads["csv"].revision)] * 7


def test_a_file_the_store_refuses_to_replace_keeps_its_rows(tmp_path, monkeypatch):
    """The write of the new reading fails in the store: its transaction (with the deletion) is rolled back."""
    import harness_ext.store.db as db_module

    db = tmp_path / "s.duckdb"
    paths = [FIX / "lm_eval_v04"]
    with monkeypatch.context() as m:
        ads = _adapters(m)
        m.setattr(ads["lm_eval_v04"], "revision", "0")
        with Store.open(str(db)) as store:
            ingest_paths(store, paths, show_progress=False)
    before = _snapshot(db)

    def refuse(self, items, before_commit=None):
        raise duckdb.ConstraintException("refused for the test")

    monkeypatch.setattr(db_module.Store, "_write_batch", refuse)
    with Store.open(str(db)) as store:
        report = ingest_paths(store, paths, show_progress=False, reread=True)
    assert [f.status for f in report.files] == ["skipped", "skipped"]
    assert all(f.reason.startswith("the store refused it: refused for the test; what an older reader stored")
               for f in report.files)
    assert _snapshot(db) == before


def test_the_same_file_with_other_reading_options_says_so(tmp_path):
    """Reading options are part of a file's identity (its hash): the same CSV read with --meta-columns is another
    source, both readings kept. The ingest says so instead of storing every cell twice in silence."""
    db = tmp_path / "s.duckdb"
    f = FIX / "csv" / "arena_hard_auto_leaderboard_v0.1.csv"
    with Store.open(str(db)) as store:
        ingest_paths(store, [f], show_progress=False)
        report = ingest_paths(store, [f], show_progress=False, options={"meta_columns": ["avg_tokens"]})
        (read,) = report.by_status("ingested")
        assert any(n.startswith("stored before from this path with other reading options (none; now "
                                '{"meta_columns": ["avg_tokens"]})') for n in read.notes)
        assert store.counts()["sources"] == 2
        again = ingest_paths(store, [f], show_progress=False, options={"meta_columns": ["avg_tokens"]})
        assert [x.status for x in again.files] == ["unchanged"]


@pytest.mark.slow
def test_files_that_share_cells_are_read_again_into_a_fresh_ingest(tmp_path, monkeypatch):
    """BLOOM's lm-eval v0.3 results in two repositories (shared data) give 35 cells different values: which one a
    matrix uses is the order's. The older reader gave the first repository's files other directions and values and
    one model another name; the datasets those files made first are also the second repository's. Read again, the
    store is a fresh ingest's: the same conflicts in the same order, the datasets described as the new reader does."""
    from conftest import LM_EVAL_V03, PYTHIA, require

    paths = [require(PYTHIA / "bloom"), require(LM_EVAL_V03 / "bloom")]

    def ingest(db, reread=False):
        return _ingest(db, reread, paths)

    fresh_db = tmp_path / "fresh.duckdb"
    fresh_report = ingest(fresh_db)
    fresh = _snapshot(fresh_db)
    assert fresh_report.conflicts
    db = tmp_path / "old.duckdb"
    with monkeypatch.context() as m:
        ads = _adapters(m)
        (name,) = {f.adapter for f in fresh_report.by_status("ingested")}
        real = ads[name].read

        def old(src):
            first = str(paths[0]) in str(src.path)
            return [dataclasses.replace(r, higher_is_better=False, value=r.value * 0.9,
                                        model=r.model + "-old" if "560m" in r.model else r.model) if first else r
                    for r in real(src)]

        m.setattr(ads[name], "read", old)
        m.setattr(ads[name], "revision", "0")
        ingest(db)
    before = _snapshot(db)
    assert before["datasets"] != fresh["datasets"] and before["conflicts"] != fresh["conflicts"]
    report = ingest(db, reread=True)
    assert report.n_reread == len(fresh_report.by_status("ingested"))
    after = _snapshot(db)
    for key in fresh:
        assert after[key] == fresh[key], key


def test_the_same_file_without_the_options_it_was_read_with_says_so(tmp_path):
    db = tmp_path / "s.duckdb"
    f = FIX / "csv" / "arena_hard_auto_leaderboard_v0.1.csv"
    with Store.open(str(db)) as store:
        first = ingest_paths(store, [f], show_progress=False, options={"meta_columns": ["avg_tokens"]})
        assert not any("other reading options" in n for n in first.files[0].notes)
        (read,) = ingest_paths(store, [f], show_progress=False).by_status("ingested")
        assert any(n.startswith('stored before from this path with other reading options ({"meta_columns": '
                                '["avg_tokens"]}; now none)') for n in read.notes)


def test_the_same_path_read_by_another_adapter_says_so(tmp_path):
    """A file read as another format (forced with --adapter here; a release may move a format to a new adapter)
    is another source: the note names the earlier reading."""
    db = tmp_path / "s.duckdb"
    f = FIX / "lm_eval_v04" / "meta-llama__Meta-Llama-3-8B-Instruct" / "truthfulqa.json"
    with Store.open(str(db)) as store:
        ingest_paths(store, [f], show_progress=False, adapter="lm_eval_v04")
        report = ingest_paths(store, [f], show_progress=False, adapter="lm_eval_v03")
        (read,) = report.by_status("ingested")
        assert any(n.startswith("stored before from this path as lm_eval_v04 (now lm_eval_v03)") for n in read.notes)


@pytest.mark.slow
def test_reading_again_over_several_batches(tmp_path, monkeypatch):
    """Ingest releases the store between batches (readers get in) and reads files meanwhile: what each stored file's
    reader was is known without the store, and the files read again in each batch replace theirs."""
    import harness_ext.store.ingest as ingest

    paths = [FIX / "csv"]
    fresh_db = tmp_path / "fresh.duckdb"
    _ingest(fresh_db, paths=paths)
    _ingest(fresh_db, paths=paths + [FIX / "lm_eval_v04"])
    db = tmp_path / "old.duckdb"
    with monkeypatch.context() as m:
        ads = _adapters(m)
        m.setattr(ads["csv"], "revision", "0")
        _ingest(db, paths=paths)
    monkeypatch.setattr(ingest, "BATCH_FILES", 3)
    monkeypatch.setattr(ingest, "READ_HOLD_SECONDS", 0.0)
    assert _ingest(db, paths=paths + [FIX / "lm_eval_v04"]).n_older_reader == 8
    report = _ingest(db, reread=True, paths=paths)
    assert report.n_reread == 8 and not report.by_status("skipped")
    assert _snapshot(db) == _snapshot(fresh_db)


def test_a_file_whose_sidecar_changed_replaces_its_earlier_reading(tmp_path):
    """A leaderboard CSV whose sidecar was added at the same path (here declaring a direction) is the same reading
    of other content: it replaces the earlier reading (one source, the sidecar's direction), and the note says so."""
    import shutil

    f = tmp_path / "arena_hard_auto_leaderboard_v0.1.csv"
    shutil.copy(FIX / "csv" / f.name, f)
    db = tmp_path / "s.duckdb"
    with Store.open(str(db)) as store:
        ingest_paths(store, [f], show_progress=False)
        (tmp_path / (f.name + ".meta.yaml")).write_text("columns:\n  score: {higher_is_better: true}\n")
        (read,) = ingest_paths(store, [f], show_progress=False).by_status("ingested")
        assert read.replaced["versions"] == 1
        assert any(n.startswith("replaced: the file changed since it was stored") for n in read.notes)
        assert store.con.execute("SELECT count(*) FROM sources").fetchall() == [(1,)]
        assert store.con.execute("SELECT DISTINCT higher_is_better FROM datasets WHERE metric = 'score'"
                                 ).fetchall() == [(True,)]


@pytest.mark.slow
def test_files_read_again_are_replaced_in_one_transaction_and_one_that_fails_alone(tmp_path, monkeypatch):
    """The files a batch reads again are replaced together (one deletion over the tables, not one per file: most of
    a large re-read's time); when the store refuses one of them, the batch is rolled back and replaced in
    halves, down to a file alone: the refused one keeps its rows and says why, the others equal a fresh ingest."""
    import harness_ext.store.ingest as ingest
    import harness_ext.store.reread as reread

    paths = [FIX / "csv"]
    fresh_db = tmp_path / "fresh.duckdb"
    _ingest(fresh_db, paths=paths)
    db = tmp_path / "old.duckdb"
    with monkeypatch.context() as m:
        ads = _adapters(m)
        real_read = ads["csv"].read
        m.setattr(ads["csv"], "read", lambda src: [dataclasses.replace(r, value=r.value / 2) for r in real_read(src)])
        m.setattr(ads["csv"], "revision", "0")
        _ingest(db, paths=paths)
    before = _snapshot(db)
    calls = []
    real_forget = reread._forget
    monkeypatch.setattr(reread, "_forget", lambda con, sources: calls.append(len(sources)) or real_forget(con, sources))
    bad = "arena_hard_auto_leaderboard_v0.1.csv"
    real_write = ingest._write_many

    def refuse_one(store, items):
        if any(bad in str(item[0]) for item in items):
            raise duckdb.ConstraintException("refused for the test")
        return real_write(store, items)

    with monkeypatch.context() as m:
        m.setattr(ingest, "_write_many", refuse_one)
        report = _ingest(db, reread=True, paths=paths)
    assert sorted(calls) == [1, 1, 2, 2, 4, 4, 8]  # the batch, then halves down to the refused file alone
    (skipped,) = report.by_status("skipped")
    assert skipped.path.endswith(bad) and skipped.reason.startswith(
        "the store refused it: refused for the test; what an older reader stored from it is kept as it was")
    assert report.n_reread == 7
    after, fresh = _snapshot(db), _snapshot(fresh_db)
    kept = [r for r in after["results"] if r[-1].endswith(bad)]
    assert kept == [r for r in before["results"] if r[-1].endswith(bad)] != [
        r for r in fresh["results"] if r[-1].endswith(bad)]
    assert [r for r in after["results"] if not r[-1].endswith(bad)] == [
        r for r in fresh["results"] if not r[-1].endswith(bad)]
    calls.clear()
    assert _ingest(db, reread=True, paths=paths).n_reread == 1 and calls == [1]
    assert _snapshot(db) == fresh
