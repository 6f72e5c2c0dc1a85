"""Model identity (issue 15 item 8) and one row per model across shot counts (item 7), on real files.

The benchbench leaderboards (../shared/data/benchbench, PROVENANCE.md) name one model several ways;
the v0.3 lm-eval master results ran some suites 0-shot and others 3- or 5-shot.
"""

from __future__ import annotations

import pytest

from conftest import LM_EVAL_V03, SHARED_DATA, require
from harness_ext.cli import main
from harness_ext.store.identity import add_alias_file, candidate_pairs, model_key, model_table, resolve
from harness_ext.store.ingest import ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.db import Store

BENCHBENCH = SHARED_DATA / "benchbench" / "leaderboards"

#: Spellings of one model in different leaderboards: each group must line up.
SAME = [
    ["GPT-4o (2024-05-13)", "gpt-4o-2024-05-13", "GPT-4o-20240513", "openai/gpt-4o-2024-05-13", "OpenAI/gpt-4o-2024-05-13"],
    ["Claude 3.5 Sonnet (20240620)", "claude-3-5-sonnet-20240620", "Claude-3.5-Sonnet-20240620"],
    ["Llama 3.1 Instruct Turbo (405B)", "Meta-Llama-3.1-405B-Instruct-Turbo", "meta-llama-3.1-405b-instruct-turbo"],
    ["Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct", "Llama-3-8B-Instruct", "llama3-8b-instruct"],
    ["Mistral v0.1 (7B)", "mistralai/Mistral-7B-v0.1"],
    ["GPT-4 (0613)", "gpt-4-0613", "GPT-4_(06/13)"],
    ["Command R+", "Command R Plus"],
    ["LLaMA (65B)", "llama-65b"],
]
#: Look-alikes that are different models (sizes, versions, variants, undated aliases, fine-tunes).
DIFFERENT = [
    ("Llama-3-8B", "Llama-3-70B"), ("gpt-4", "gpt-4o"), ("gpt-4o", "gpt-4o-mini"), ("gpt-4o", "gpt-4o-2024-05-13"),
    ("Llama-3-8B", "Llama-3-8B-Instruct"), ("gpt-4o-2024-05-13", "gpt-4o-2024-08-06"), ("gpt-4-0613", "gpt-4-0314"),
    ("claude-3-opus", "claude-3-opus-20240229"), ("Llama-3.1-8B-Instruct", "Llama-3-8B-Instruct"),
    ("Meta-Llama-3.1-8B-Instruct", "Meta-Llama-3.1-8B-Instruct-Turbo"), ("Phi-3-mini-4k-instruct", "Phi-3-mini-128k-instruct"),
    ("Llama-3-8B-Instruct", "someone/Llama-3-8B-Instruct"), ("claude-2", "claude-2.1"),
    ("Mistral-7B-Instruct-v0.1", "Mistral-7B-Instruct-v0.2"), ("EleutherAI/pythia-160m@step3000", "EleutherAI/pythia-160m"),
]


@pytest.mark.parametrize("names", SAME, ids=lambda n: n[0])
def test_spellings_of_one_model_share_a_key(names):
    assert len({model_key(n) for n in names}) == 1, {n: model_key(n) for n in names}


@pytest.mark.parametrize("a,b", DIFFERENT)
def test_look_alikes_do_not_merge(a, b):
    assert model_key(a) != model_key(b)
    assert resolve([a, b]) == {}


def test_two_repositories_of_one_organisation_never_merge():
    # THUDM publishes both; and a source listing two names side by side says they are two models.
    assert resolve(["THUDM/glm-4-9b-chat", "THUDM/glm-4-9b-chat-hf", "GLM-4-9B-Chat"]) == {}
    assert resolve(["Claude 2.1", "claude-2.1"], cooccur={frozenset(("Claude 2.1", "claude-2.1"))}) == {}
    # Those names stay apart, but the group's other spellings still merge with each other (a hub rename
    # in one source must not split another source's spellings of the model into separate models).
    names = ["meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct",
             "Llama-3.1-70B-Instruct", "llama-3.1-70b-instruct", "Llama3.1-70B-Instruct"]
    key = model_key("Llama-3.1-70B-Instruct")
    assert resolve(names) == {n: key for n in names[2:]}
    assert resolve(["Claude 2.1", "CLAUDE 2.1", "Claude-2.1", "claude_2.1"],
                   cooccur={frozenset(("Claude 2.1", "CLAUDE 2.1"))}) == {"Claude-2.1": "claude-2-1",
                                                                          "claude_2.1": "claude-2-1"}
    # ... unless their id would be the spelling of a name told apart: which one they mean is unknown.
    assert resolve(["Claude 2.1", "claude-2-1", "Claude-2.1", "claude 2.1 "],
                   cooccur={frozenset(("Claude 2.1", "claude-2-1"))}) == {}
    # A merged group is named by its hub repository id when it has one.
    assert resolve(["meta/OPT-66B", "facebook/opt-66b", "OPT 66B"]) == {"meta/OPT-66B": "facebook/opt-66b",
                                                                       "OPT 66B": "facebook/opt-66b"}


@pytest.fixture(scope="module")
def bb_store(tmp_path_factory):
    db = tmp_path_factory.mktemp("bb") / "bb.duckdb"
    with Store.open(db) as s:
        report = ingest_paths(s, [require(BENCHBENCH)], show_progress=False, group="benchbench")
        assert len(report.by_status("ingested")) >= 37
    return db


def test_benchbench_is_one_sparse_cross_leaderboard_matrix(bb_store):
    with Store.open(bb_store, read_only=True) as s:
        df = load_matrix(s, MatrixQuery(benchmarks=("benchbench",), normalise="none"))
        names = model_table(s)
    # Every ingested leaderboard is a member; its columns are the union of theirs.
    assert df.shape[1] >= 69 and df.shape[0] < names["name"].nunique()
    gpt4o = "openai/gpt-4o-2024-05-13"
    assert {"GPT-4o (2024-05-13)", "gpt-4o-2024-05-13", "GPT-4o-20240513"} <= set(df.attrs["model_aliases"][gpt4o])
    row = df.loc[gpt4o]
    assert row["helm_lite"] == pytest.approx(0.963)       # helm_lite: "GPT-4o (2024-05-13)"
    assert row["arena_hard"] == pytest.approx(79.2)       # arena_hard: "gpt-4o-2024-05-13"
    assert row["opencompass"] == pytest.approx(67.7)      # opencompass: "GPT-4o-20240513"
    assert row.notna().sum() >= 20
    l8, l70 = "meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-70B-Instruct"
    for a, b in [("gpt-4o", "gpt-4o-mini"), ("gpt-4o", gpt4o), (l8, l70), ("meta-llama/Meta-Llama-3-8B", l8)]:
        assert a in df.index and b in df.index
    assert {"Llama-3-8B-Instruct", "llama3-8b-instruct", "LLama3-8b-Ins"} <= set(df.attrs["model_aliases"][l8])
    assert 0.02 < df.notna().to_numpy().mean() < 0.2  # sparse: nothing cut down to a dense block


def test_aliases_are_stored_idempotently_and_user_file_wins(bb_store, tmp_path):
    db = tmp_path / "copy.duckdb"
    db.write_bytes(bb_store.read_bytes())
    with Store.open(db) as s:
        before = s.con.execute("SELECT * FROM model_aliases ORDER BY alias").fetchall()
        again = ingest_paths(s, [BENCHBENCH], show_progress=False, group="benchbench")
        assert not again.by_status("ingested")
        from harness_ext.store.identity import refresh_aliases

        refresh_aliases(s)
        assert s.con.execute("SELECT * FROM model_aliases ORDER BY alias").fetchall() == before
        f = tmp_path / "aliases.yaml"
        f.write_text("aliases:\n  gpt-4o-2024-05-13: [GPT-4-0-2024-05-13, GPT-40-20240513]\n"
                     "separate: [Claude-2]\n")
        assert add_alias_file(s, f) == 3
        assert add_alias_file(s, f) == 3  # loading the same file again replaces its entries
        table = model_table(s).set_index("name")
        assert table.loc["GPT-40-20240513", "canonical"] == "openai/gpt-4o-2024-05-13"
        assert table.loc["GPT-4-0-2024-05-13", "canonical"] == "openai/gpt-4o-2024-05-13"
        assert table.loc["Claude-2", "canonical"] == "Claude-2" and table.loc["claude-2", "canonical"] == "claude-2"
        df = load_matrix(s, MatrixQuery(benchmarks=("benchbench",), normalise="none"))
        assert df.loc["openai/gpt-4o-2024-05-13", "LiveCodeBench_Pass@1"] == pytest.approx(45.6)
        assert df.loc["openai/gpt-4o-2024-05-13", "OC_arena"] == pytest.approx(1090)
        raw = load_matrix(s, MatrixQuery(benchmarks=("benchbench",), normalise="none", aliases=False))
        assert "GPT-4o (2024-05-13)" in raw.index and raw.shape[0] > df.shape[0]
    bad = tmp_path / "bad.csv"
    bad.write_text("name,model\nx,y\n")
    with Store.open(db) as s, pytest.raises(Exception, match="alias,canonical"):
        add_alias_file(s, bad)


def test_refresh_aliases_writes_only_a_changed_table(bb_store, tmp_path, monkeypatch):
    """An unchanged alias table is not rewritten; a changed one is written back to what the names resolve to."""
    from harness_ext.store import identity

    db = tmp_path / "copy.duckdb"
    db.write_bytes(bb_store.read_bytes())
    writes, real = [], identity._replace
    monkeypatch.setattr(identity, "_replace", lambda store, frame: writes.append(len(frame)) or real(store, frame))
    with Store.open(db) as s:
        before = s.con.execute("SELECT * FROM model_aliases ORDER BY alias").fetchall()
        identity.refresh_aliases(s)
        assert writes == []
        s.con.execute("DELETE FROM model_aliases WHERE alias = ?", [before[0][0]])
        identity.refresh_aliases(s)
        assert writes == [len(before)]
        assert s.con.execute("SELECT * FROM model_aliases ORDER BY alias").fetchall() == before


def test_unmatched_lists_likely_duplicates_for_review(bb_store, capsys):
    with Store.open(bb_store, read_only=True) as s:
        t = model_table(s)
    pairs = candidate_pairs(t["name"], dict(zip(t["name"], t["canonical"])))
    got = {frozenset(p) for p in zip(pairs["model_a"], pairs["model_b"])}
    assert frozenset(("claude-2", "claude-2-0")) in got  # "Claude-2" / "Claude 2.0"
    assert pairs["score"].between(0, 1).all()
    for a, b in [("gpt-4o", "gpt-4o-mini"), ("meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-70B-Instruct"),
                 ("gpt-4", "gpt-4o")]:
        assert frozenset((a, b)) not in got
    assert main(["models", "--db", str(bb_store), "--unmatched"]) == 0
    out = capsys.readouterr().out
    assert "pairs of models that may be the same" in out and "score" in out
    assert main(["models", "--db", str(bb_store), "--merged"]) == 0
    assert "GPT-4o-20240513" in capsys.readouterr().out


def test_an_alias_file_lists_the_merged_names_not_the_whole_store(tmp_path, capsys):
    """`models --aliases FILE` printed every name of the store after storing the file (1,931 on benchbench)."""
    (tmp_path / "a.csv").write_text("model,dataset,value\n" + "".join(f"m{i},d1,0.{i}\n" for i in range(1, 9))
                                    + "My Model v1,d2,0.5\n")
    (tmp_path / "aliases.yaml").write_text("aliases:\n  m1: [My Model v1]\n")
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, "-q", str(tmp_path / "a.csv")]) == 0
    capsys.readouterr()
    assert main(["models", "--db", db, "--aliases", str(tmp_path / "aliases.yaml")]) == 0
    out = capsys.readouterr().out
    assert "stored 1 alias entries" in out and "the merged ones below" in out
    assert "My Model v1" in out and "m5" not in out
    assert main(["models", "--db", db]) == 0
    assert "m5" in capsys.readouterr().out


def test_one_row_per_model_across_shot_counts_v03():
    """lm-eval v0.3 master: LLaMA ran MMLU 5-shot, BBH 3-shot and the rest 0-shot; was 51 rows for 22 models."""
    with Store.open(":memory:") as s:
        ingest_paths(s, [require(LM_EVAL_V03)], show_progress=False)
        split = load_matrix(s, MatrixQuery(benchmarks=("lm_eval",), normalise="none", rows="model_shots"))
        one = load_matrix(s, MatrixQuery(benchmarks=("lm_eval",), normalise="none"))
    assert split.shape == (51, 239) and split.isna().to_numpy().mean() > 0.86
    assert one.shape == (22, 239) and one.isna().to_numpy().mean() < 0.70
    assert "llama-7B" in one.index and not any("-shot]" in r for r in one.index)
    # Each dataset records the setting used: BBH 3-shot, the rest of LLaMA's suites 0-shot.
    meta = one.attrs["datasets"]
    assert meta["bigbench_causal_judgement"]["num_fewshot"] == 3 and meta["arc_easy"]["num_fewshot"] == 0
    assert one.loc["llama-7B", "bigbench_causal_judgement"] == split.loc["llama-7B [3-shot]", "bigbench_causal_judgement"]
    assert one.loc["llama-7B", "arc_easy"] == split.loc["llama-7B [0-shot]", "arc_easy"]
    assert one.attrs["shots"]["dropped_cells"] == 1 and one.attrs["shots"]["mixed_dataset_ids"] > 0


def test_cooccurring_pairs_come_from_one_source_and_one_key(tmp_path):
    """_cooccurring (refresh_aliases' pairs): names sharing a key listed by one source, not names of two sources."""
    from harness_ext.store.db import Store
    from harness_ext.store.identity import _cooccurring, model_key
    from harness_ext.store.ingest import ingest_paths

    (tmp_path / "a.csv").write_text("model,dataset,value\nClaude 2.1,d1,0.5\nclaude-2.1,d1,0.6\nCLAUDE 2.1,d2,0.1\n"
                                    "gpt-4,d1,0.7\n")
    (tmp_path / "b.csv").write_text("model,dataset,value\nClaude-2.1,d1,0.5\ngpt-4,d2,0.2\nGPT 4,d2,0.3\n")
    assert model_key("Claude 2.1") == model_key("claude-2.1") == model_key("Claude-2.1")
    with Store.open(tmp_path / "s.duckdb") as store:
        ingest_paths(store, [tmp_path / "a.csv", tmp_path / "b.csv"], show_progress=False)
        pairs = _cooccurring(store)
    assert pairs == {frozenset(("Claude 2.1", "claude-2.1")), frozenset(("Claude 2.1", "CLAUDE 2.1")),
                     frozenset(("CLAUDE 2.1", "claude-2.1")), frozenset(("GPT 4", "gpt-4"))}


def test_ingest_refreshes_aliases_inside_its_last_batch(tmp_path, monkeypatch):
    """The alias table is re-resolved inside the last batch's transaction (one commit and checkpoint, not two):
    the rows are those a refresh afterwards would write, and it writes nothing."""
    from harness_ext.store import identity

    (tmp_path / "a.csv").write_text("model,dataset,value\nGPT-4o (2024-05-13),d1,0.5\nclaude-2,d1,0.6\n")
    (tmp_path / "b.csv").write_text("model,dataset,value\ngpt-4o-2024-05-13,d2,0.7\n")
    inside, writes = [], []
    real_refresh, real_replace = identity.refresh_aliases, identity._replace
    monkeypatch.setattr(identity, "refresh_aliases", lambda s: inside.append(s._in_transaction) or real_refresh(s))
    monkeypatch.setattr(identity, "_replace", lambda s, rows: writes.append(len(rows)) or real_replace(s, rows))
    with Store.open(tmp_path / "s.duckdb") as s:
        ingest_paths(s, [tmp_path], show_progress=False)
        assert inside == [True] and writes == [1]
        real_refresh(s)
        assert writes == [1]  # already the table a refresh makes
    with Store.open(tmp_path / "s.duckdb", read_only=True) as s:  # committed
        assert s.con.execute("SELECT alias, canonical FROM model_aliases").fetchall() == [
            ("GPT-4o (2024-05-13)", "gpt-4o-2024-05-13")]


def test_models_lists_the_names_only_item_scores_carry(capsys):
    """A store of item-response tables alone (a real HELM Lite GSM8K slice) listed "0 model names"."""
    from pathlib import Path

    import pandas as pd

    table = Path(__file__).parent / "fixtures" / "items" / "gsm_slice.parquet"
    n_models = pd.read_parquet(table)["model"].nunique()
    with Store.open(":memory:") as s:
        ingest_paths(s, [table], show_progress=False)
        t = model_table(s)
        assert len(t) == n_models and (t["results"] == 0).all() and (t["item_scores"] > 0).all()
        assert (t["benchmarks"] == "").all() and (t["canonical"] == t["name"]).all()


def test_a_name_with_results_and_item_scores_is_one_row():
    with Store.open(":memory:") as s:
        ingest_paths(s, [require(SHARED_DATA / "helm-raw-example")], show_progress=False)
        (row,) = model_table(s).itertuples()
        assert row.results > 0 and row.item_scores > 0
