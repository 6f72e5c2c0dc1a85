"""lm-eval groups written without a score: ``{" ": " ", "alias": ...}``.

Runs of lm-eval's leaderboard tasks from early 2025 (lm-eval git 0230356; for example the public results of
meta-llama/Llama-3.1-8B-Instruct and deepseek-ai/DeepSeek-R1-Distill-Llama-8B in csabakecskemeti/lm_eval_results)
list ``leaderboard_bbh``, ``leaderboard_gpqa``, ``leaderboard_math_hard`` and ``leaderboard_musr`` in
``group_subtasks`` but give each group only ``{" ": " ", "alias": ...}``: their YAMLs had no
``aggregate_metric_list`` then. ``predict`` reads the Open LLM Leaderboard v2's BBH, GPQA, MATH Level 5 and MuSR
from those groups' rows, so from such a run it read none of them ("no result for MATH Level 5"), and ingest said
nothing. Now ingest stores each such group as the mean of its tasks weighted by their sizes (``n-samples``), which
is what lm-eval's group YAMLs now declare (``weight_by_size: true``) and what the leaderboard reports (the
Llama-3.1-8B-Instruct run's weighted BBH, 0.5088, is Every Eval Ever's 0.5087), and notes it. The files here are
synthetic, laid out as those runs are (that repository has no licence, so none of it is copied).
"""

from __future__ import annotations

import json

import pytest

from harness_ext.cli import main
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

from conftest import SHARED_DATA

HFOPENLLM = SHARED_DATA / "every_eval_ever" / "data" / "hfopenllm_v2"
#: task -> (metric, value, size): two groups on one metric each, the sizes unequal so the weights matter.
TASKS = {
    "leaderboard_bbh_navigate": ("acc_norm", 0.552, 250),
    "leaderboard_bbh_snarks": ("acc_norm", 0.674, 178),
    "leaderboard_musr_murder_mysteries": ("acc_norm", 0.532, 250),
    "leaderboard_musr_object_placements": ("acc_norm", 0.355, 256),
    "leaderboard_math_algebra_hard": ("exact_match", 0.316, 307),
    "leaderboard_math_geometry_hard": ("exact_match", 0.053, 132),
    "leaderboard_mmlu_pro": ("acc", 0.381, 12032),
}
GROUPS = {"leaderboard_bbh": ["leaderboard_bbh_navigate", "leaderboard_bbh_snarks"],
          "leaderboard_musr": ["leaderboard_musr_murder_mysteries", "leaderboard_musr_object_placements"],
          "leaderboard_math_hard": ["leaderboard_math_algebra_hard", "leaderboard_math_geometry_hard"],
          # tasks on two metrics: lm-eval's YAML aggregates each metric apart; no one mean is the group's score
          "mixed": ["leaderboard_bbh_navigate", "leaderboard_mmlu_pro"]}


def _weighted(group: str, shift: float = 0.0) -> float:
    parts = [TASKS[t] for t in GROUPS[group]]
    return sum((v + shift) * n for _, v, n in parts) / sum(n for *_, n in parts)


def _results_file(folder, model: str, shift: float = 0.0):
    folder.mkdir(parents=True, exist_ok=True)
    results = {g: {" ": " ", "alias": g} for g in GROUPS}
    results.update({t: {"alias": f" - {t}", f"{m},none": round(v + shift, 4), f"{m}_stderr,none": 0.03}
                    for t, (m, v, _) in TASKS.items()})
    doc = {"results": results, "group_subtasks": {**GROUPS, "leaderboard_mmlu_pro": []},
           "n-shot": {t: 3 for t in TASKS}, "higher_is_better": {t: {m: True} for t, (m, *_) in TASKS.items()},
           "n-samples": {t: {"original": n, "effective": n} for t, (*_, n) in TASKS.items()},
           "config": {"model": "hf", "model_args": f"pretrained={model},dtype=float16"}, "model_name": model}
    path = folder / "results_2025-01-25T04-48-43.622918.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_group_without_a_score_is_the_size_weighted_mean_of_its_tasks_and_noted(tmp_path):
    path = _results_file(tmp_path / "org__m", "org/m")
    with Store.open(":memory:") as s:
        rep = ingest_paths(s, [path], show_progress=False)
        (f,) = rep.by_status("ingested")
        rows = s.con.execute("SELECT d.name, d.metric, r.value, r.num_fewshot FROM results r JOIN datasets d "
                             "USING (dataset_id) WHERE d.kind = 'aggregate' ORDER BY 1").fetchall()
    assert [r[:2] for r in rows] == [("leaderboard_bbh", "acc_norm"), ("leaderboard_math_hard", "exact_match"),
                                     ("leaderboard_musr", "acc_norm")]
    for name, _, value, shots in rows:
        assert value == pytest.approx(_weighted(name)) and shots == 3
    # Weighted by size, not the plain mean of the tasks.
    assert _weighted("leaderboard_math_hard") != pytest.approx(0.5 * (0.316 + 0.053))
    made, left = (next(n for n in f.notes if n.startswith(p)) for p in ("3 groups without a score in the file stored",
                                                                        "1 group without a score in the file and"))
    assert "leaderboard_math_hard (exact_match; 2 tasks)" in made and "weighted by their sizes" in made
    assert left.endswith(": mixed")


def test_each_metric_the_tasks_share_is_aggregated_and_the_primary_is_as_for_a_scored_group(tmp_path):
    """Tasks reporting acc and acc_norm: the group gets both (lm-eval's YAMLs list each metric to aggregate), acc
    primary as for any lm-eval row; a metric only one task has is not the group's."""
    blocks = {"arc_x": {"acc,none": 0.5, "acc_norm,none": 0.6, "f1,none": 0.1}, "arc_y": {"acc,none": 0.3,
                                                                                       "acc_norm,none": 0.2}}
    doc = {"results": {"arcs": {" ": " ", "alias": "arcs"}, **blocks},
           "group_subtasks": {"arcs": ["arc_x", "arc_y"], "arc_x": [], "arc_y": []},
           "n-samples": {"arc_x": {"original": 100, "effective": 100}, "arc_y": {"original": 300, "effective": 300}},
           "n-shot": {"arc_x": 0, "arc_y": 0}, "config": {"model": "hf", "model_args": "pretrained=org/m"}}
    path = tmp_path / "org__m" / "results_2025-01-01T00-00-00.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    with Store.open(":memory:") as s:
        ingest_paths(s, [path], show_progress=False)
        rows = s.con.execute("SELECT d.benchmark, d.name, d.metric, d.is_primary, r.value FROM results r JOIN "
                             "datasets d USING (dataset_id) WHERE d.kind = 'aggregate' ORDER BY 3").fetchall()
    # "arcs" is no lm-eval group: the user's own, so its benchmark is its name (as for a scored group).
    assert [r[:4] for r in rows] == [("arcs", "arcs", "acc", True), ("arcs", "arcs", "acc_norm", False)]
    assert rows[0][4] == pytest.approx((0.5 * 100 + 0.3 * 300) / 400)
    assert rows[1][4] == pytest.approx((0.6 * 100 + 0.2 * 300) / 400)


@pytest.fixture(scope="module")
def leaderboard_manifest(tmp_path_factory):
    """A manifest reduced from Every Eval Ever's Open LLM Leaderboard v2 records: 2 of MATH Level 5, BBH and MuSR."""
    if not HFOPENLLM.is_dir():
        pytest.skip("needs the shared Every Eval Ever data")
    tmp = tmp_path_factory.mktemp("leaderboard")
    files = sorted(HFOPENLLM.rglob("*.json"))[:200]
    db, out = tmp / "store.duckdb", tmp / "red"
    assert main(["ingest", "--db", str(db), "-q", *map(str, files)]) == 0
    assert main(["reduce", "--db", str(db), "--benchmark", "hf_open_llm_v2", "--datasets", "MATH Level 5",
                 "--datasets", "BBH", "--datasets", "MUSR", "--budget", "2", "--n-random", "20", "--no-plot",
                 "--out", str(out)]) == 0
    return out


def _predict(manifest, new, tmp_path) -> dict:
    report = tmp_path / "pred.json"
    assert main(["predict", "-m", str(manifest), str(new), "--json", str(report)]) == 0
    return json.loads(report.read_text())


def test_predict_reads_the_leaderboards_groups_from_a_run_that_wrote_them_without_a_score(leaderboard_manifest,
                                                                                          tmp_path):
    out = leaderboard_manifest
    new = _results_file(tmp_path / "new" / "org__m", "org/m", shift=0.01).parent
    doc = _predict(out, new, tmp_path)
    rows = {r["dataset"]: r for r in doc["datasets"] if r["model"] == "org/m"}
    names = {"MATH Level 5": "leaderboard_math_hard", "BBH": "leaderboard_bbh", "MUSR": "leaderboard_musr"}
    subset = [s["name"] for s in json.loads((out / "manifest.json").read_text())["subset"]]
    assert len(subset) == 2
    for title, group in names.items():
        row = rows[title]
        # Subset datasets are read (before: "no result for ..."); the other one is shown as the actual score.
        got = row["raw"] if title in subset else row["raw_actual"]
        assert row["observed"] == (title in subset) and got == pytest.approx(_weighted(group, 0.01), abs=1e-4)
    assert not any(w.startswith("org/m: no result for") for w in doc["warnings"])
    assert not any("differ between its files" in w for w in doc["warnings"])


def test_predict_says_when_two_runs_of_the_new_model_disagree_and_which_it_used(leaderboard_manifest, tmp_path):
    """A rerun saved beside the first run (deepseek-ai/DeepSeek-R1-Distill-Llama-8B's folder in
    csabakecskemeti/lm_eval_results holds two, whose MATH and IFEval differ): predict used the file read first and
    said nothing. Now a warning names the model, the tasks, the file used and the one not used."""
    folder = tmp_path / "new" / "org__m"
    first = _results_file(folder, "org/m")
    second = _results_file(tmp_path / "rerun", "org/m", shift=0.02)
    rerun = second.rename(folder / "results_2025-01-26T22-29-00.931915.json")
    doc = _predict(leaderboard_manifest, folder, tmp_path)
    (warning,) = [w for w in doc["warnings"] if "differ between its files" in w]
    # 7 tasks and the 3 groups made from them
    assert warning.startswith("reading the new results: 10 scores of org/m on 10 tasks differ between its files")
    assert f"read first, in path order ({first}), not from {rerun}" in warning
    rows = {r["dataset"]: r for r in doc["datasets"] if r["model"] == "org/m"}
    subset = [s["name"] for s in json.loads((leaderboard_manifest / "manifest.json").read_text())["subset"]]
    groups = {"MATH Level 5": "leaderboard_math_hard", "BBH": "leaderboard_bbh", "MUSR": "leaderboard_musr"}
    assert rows[subset[0]]["raw"] == pytest.approx(_weighted(groups[subset[0]]), abs=1e-4)  # the first file's


def test_the_lm_eval_layout_prediction_names_each_task_by_lm_evals_metric(leaderboard_manifest, tmp_path):
    """The ``harness_ext_prediction_*.json`` written beside the run, in lm-eval's results layout, named every
    leaderboard task's metric as Every Eval Ever does (``leaderboard_bbh: {"Accuracy,predicted": ...}``,
    ``leaderboard_math_hard: {"Exact Match,predicted": ...}``), metrics lm-eval never writes for those tasks."""
    new = _results_file(tmp_path / "new" / "org__m", "org/m").parent
    _predict(leaderboard_manifest, new, tmp_path)
    doc = json.loads((new / "harness_ext_prediction_harness_ext_reduced.json").read_text())
    keys = {task: [k for k in row if k.endswith(",predicted")][0] for task, row in doc["results"].items()
            if task.startswith("leaderboard_")}
    assert keys == {"leaderboard_math_hard": "exact_match,predicted", "leaderboard_bbh": "acc_norm,predicted",
                    "leaderboard_musr": "acc_norm,predicted"}
    assert doc["higher_is_better"]["leaderboard_bbh"] == {"acc_norm": True}
    math = doc["results"]["leaderboard_math_hard"]
    if "leaderboard_math_hard" in doc["harness_ext_prediction"]["observed"]:  # in the subset: the run's own score, the group made from its tasks
        assert math["exact_match,predicted"] == pytest.approx(_weighted("leaderboard_math_hard"), abs=1e-4)
