"""Every source in ../shared/data ingests whole, with the shape PROVENANCE.md states, and ingesting it
again changes no table.

Where our shape differs from PROVENANCE.md's on purpose it says why beside the number: HELM's -1
"not run" placeholders are missing cells, aggregate columns ("Mean win rate") are not datasets, a
model row holds each dataset at the shot setting most models ran, and names of one model merge.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from conftest import HELM_CLASSIC, LM_EVAL, LM_EVAL_V03, LM_EVAL_V04, PYTHIA, REPO, SHARED_DATA, require
from harness_ext.store.ingest import SAMPLES_ADAPTER, ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix
from harness_ext.store.db import Store

SAMPLES = Path(__file__).parent / "fixtures" / "samples" / "lm_eval_output"
EEE = SHARED_DATA / "every_eval_ever" / "data"


def _shape(store, benchmark, **kw):
    df = load_matrix(store, MatrixQuery(benchmarks=(benchmark,), normalise="none", **kw))
    return df.shape, int(df.isna().sum().sum())


def _skipped(report):
    return Counter(Path(f.path).name for f in report.by_status("skipped"))


# source -> (ingested files, skipped file names, {benchmark: ((models, datasets), missing cells)})
SOURCES = {
    # Its 22 results/*/README.md tables (lm-eval's make_table_results.py) copy the JSON files beside them: skipped.
    "lm-eval-harness/v03_results_master_2023-07-31": (166, {"README.md": 22}, {
        # One row per model, each dataset at the shot setting most models ran: MMLU at OPT 125m-66b's
        # 0 shots (LLaMA 7B/13B/30B and MPT-7B ran it 5-shot: --num-fewshot 5 or --rows model_shots)
        "mmlu": ((8, 57), 0),
        # 22 models x 239 non-MMLU task keys (--rows model_shots: 51 model x shot rows, 10503 missing)
        "lm_eval": ((22, 239), 3619)}),
    "lm-eval-harness/v04_results_from_pull_refs": (68, {
        "MANIFEST.tsv": 1,
        "results_2025-03-04T10-35-04.json": 1, "results_2025-03-04T11-20-05.json": 1,   # VisualRWKV,
        "results_2025-03-05T00-33-06.json": 1,                                          # not lm-eval output
        "results_2025-06-30T19-40-09.461247.json": 1,  # its one metric, mae, is Infinity (left out, and noted)
    }, {"mmlu": ((14, 57), 0), "lm_eval": ((28, 33), 659)}),
    # PROVENANCE: 67 x 15 with 0% missing, counting "Mean win rate" and HELM's -1 placeholders as scores
    "every_eval_ever/data/helm_classic": (67, {}, {"helm_classic": ((67, 14), 159)}),
    # PROVENANCE: 331 model ids x 11 evaluations (339 models: the nine records of one id the leaderboard cut short
    # are nine models); RewardBench 1 and 2 are separate benchmarks here
    "every_eval_ever/data/reward-bench": (384, {}, {"rewardbench": ((187, 5), 97), "rewardbench_2": ((197, 6), 6)}),
    # the run, and its display_predictions.json as per-instance scores (harness_ext.store.item_tables)
    "helm-raw-example": (2, {"runs_to_runsuites.json": 1}, {"helm": ((1, 1), 0)}),
    # result_summary.json (108 x 176) and all_result_summary.json (2 more ScienceQA sub-sets)
    "crosspred-lvlm": (2, {"model_profiles.json": 1, "dataset_profiles.json": 1}, {"crosspred": ((108, 178), 12)}),
    "tsml-eval-tsc-bakeoff": (192, {"table_c4.csv": 1}, {"tsc_bakeoff": ((40, 142), 960)}),
    # 4,496 repository ids; two pairs differ only in case (DeepMount00/Llama-3.1-8b-ITA/-Ita, Quazim0t0/ODB-14B-sce/
    # -14b-sce) and were scored apart with different values (two submissions), so two models each
    # (harness_ext.store.identity.case_pairs); 78 ids evaluated in float16 and in bfloat16 are two models each, as
    # the leaderboard lists them: 4,496 + 78 rows
    "every_eval_ever/data/hfopenllm_v2": (4574, {}, {"hf_open_llm_v2": ((4574, 6), 0)}),
}
SLOW = {"tsml-eval-tsc-bakeoff", "every_eval_ever/data/hfopenllm_v2"}


@pytest.mark.parametrize("source", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s for s in SOURCES])
def test_every_source_ingests_whole_with_its_shape(source):
    n_ingested, skipped, shapes = SOURCES[source]
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [require(SHARED_DATA / source)], show_progress=False)
        assert len(report.by_status("ingested")) == n_ingested
        assert _skipped(report) == Counter(skipped), [(f.path, f.reason) for f in report.by_status("skipped")]
        assert {b: _shape(s, b) for b in s.benchmarks().benchmark} == shapes


def test_pythia_evals_whole(real_store):
    """PROVENANCE: 889 files x 87 tasks (57 MMLU subjects + 30 others); MMLU 838 files x 57, complete."""
    with Store.open(real_store, read_only=True) as s:
        n = s.con.execute("SELECT count(*) FROM sources WHERE path LIKE '%pythia-evals%'").fetchone()[0]
        assert n == 889
        assert _shape(s, "mmlu", rows="run") == ((838, 57), 0)
        runs = load_matrix(s, MatrixQuery(benchmarks=("lm_eval",), source="*pythia-evals*", rows="run"))
        assert runs.shape == (889, 30)


def test_v04_model_names_keep_revision_and_peft():
    """Three asdiv runs of one base model with different LoRA adapters (in directories named '..__...', as
    lm-eval sanitises a relative --model_args path) are three models, not one model with conflicts."""
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [require(LM_EVAL_V04 / "asdiv")], show_progress=False)
        assert len(report.by_status("ingested")) == 6 and not report.by_status("skipped")
        names = {r[0] for r in s.con.execute("SELECT name FROM models").fetchall()}
        peft = sorted(n for n in names if "+peft=" in n)
        assert [n.rsplit("/", 1)[-1] for n in peft] == ["epoch_20", "epoch_5", "epoch_62"]
        assert all(n.startswith("meta-llama/Meta-Llama-3-8B-Instruct+peft=../prompt-pursuit/") for n in peft)
        assert not any("+peft=" in c.model for c in report.conflicts)


def test_hidden_entries_are_passed_over_but_dot_dot_directories_are_walked(tmp_path):
    src = require(LM_EVAL_V04 / "Qwen__Qwen2.5-1.5B")
    f = next(src.glob("results_*.json"))
    for d in ("..__ckpt__epoch_1", ".git", ".ipynb_checkpoints"):
        (tmp_path / d).mkdir()
        shutil.copy(f, tmp_path / d / f.name)
    with Store.open(":memory:") as s:
        report = ingest_paths(s, [tmp_path], show_progress=False)
        assert [Path(r.path).parent.name for r in report.files] == ["..__ckpt__epoch_1"]
        assert report.files[0].status == "ingested"


def _table_rows(store) -> dict:
    tables = [r[0] for r in store.con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
    return {t: store.con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


def test_reingest_changes_no_table(real_store, tmp_path):
    """Pythia, HELM Classic, lm-eval v0.3 and v0.4 results and per-sample logs, ingested twice: the second
    time every file is unchanged and no table (results, samples or any other) gains or loses a row."""
    require(LM_EVAL)
    db = tmp_path / "again.duckdb"
    shutil.copy(real_store, db)  # Pythia and HELM Classic are in the session store already
    paths = [PYTHIA, HELM_CLASSIC, LM_EVAL_V03, LM_EVAL_V04.parent, SAMPLES]
    with Store.open(db) as s:
        first = ingest_paths(s, paths, show_progress=False)
        assert len(first.by_status("ingested")) == 166 + 68 + 9  # v0.3, v0.4, 3 results + 6 sample logs
        before = _table_rows(s)
        assert {"sources", "models", "datasets", "results", "samples", "sample_sources"} <= set(before)
        assert before["sample_sources"] == 6 and before["samples"] == 216
        again = ingest_paths(s, paths, show_progress=False)
        assert not again.by_status("ingested") and not again.conflicts
        assert len(again.by_status("unchanged")) == len(first.by_status("ingested")) + 889 + 67
        assert _table_rows(s) == before


def test_sample_logs_are_ingested_by_the_ingest_command(tmp_path, capsys):
    from harness_ext.cli import main
    from harness_ext.store.samples import prompt_matrix

    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, str(SAMPLES)]) == 0
    out = capsys.readouterr().out
    assert "skipped" not in out.replace("0 skipped", "")
    assert "9 files ingested (12 results, 216 per-sample scores from 6 sample logs)" in out
    with Store.open(db, read_only=True) as s:
        assert prompt_matrix(s, "toy_arith_mc").shape == (18, 3)
    with Store.open(db) as s:
        report = ingest_paths(s, [SAMPLES], show_progress=False)
        assert {f.adapter for f in report.files if f.path.endswith(".jsonl")} == {SAMPLES_ADAPTER}
        assert {f.status for f in report.files} == {"unchanged"}


def _readme_blocks(lang):
    text = (REPO / "README_PLUGINS.md").read_text()
    parts = text.split(f"```{lang}\n")[1:]
    return [p.split("```", 1)[0] for p in parts]


def test_readme_minimal_plugin_passes_the_contract_tests(tmp_path, monkeypatch):
    """The complete third-party plugin of README_PLUGINS.md, installed as pip would (a .dist-info with
    its entry points), is listed with its distribution and passes the shared checks run the way the
    README tells its author to run them."""
    import sys
    import tomllib

    from harness_ext.plugin_manager import get_registrations, reset_default_plugin_manager

    (pyproject,) = [b for b in _readme_blocks("toml") if "[project.entry-points.harness_ext]" in b]
    module, contract = [b for b in _readme_blocks("python") if "hookimpl" in b or "parametrize_with_checks" in b]
    project = tomllib.loads(pyproject)["project"]
    dist, version = project["name"], project["version"]
    ((ep_name, ep_target),) = project["entry-points"]["harness_ext"].items()
    (tmp_path / f"{ep_target}.py").write_text(module)
    info = tmp_path / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[harness_ext]\n{ep_name} = {ep_target}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("HARNESS_EXT_LOAD_PLUGINS")  # the README's test module sets it, as a plugin author's would
    reset_default_plugin_manager()
    try:
        namespace: dict = {}
        exec(compile(contract, "test_contract.py", "exec"), namespace)
        assert namespace["os"].environ["HARNESS_EXT_LOAD_PLUGINS"] == dist
        assert get_registrations("selectors")["first_k"].source == f"{ep_name} ({dist})"
        (param,) = [m for m in namespace["test_contract"].pytestmark if m.name == "parametrize"]
        cases = param.args[1]
        assert {reg.name for reg, _ in cases} == {"first_k", "names"} and len(cases) == 4
        for registration, check in cases:
            namespace["test_contract"](registration, check)
    finally:
        monkeypatch.setenv("HARNESS_EXT_LOAD_PLUGINS", "")
        reset_default_plugin_manager()
        sys.modules.pop(ep_target, None)
