"""The Python API's results as a new user meets them on the shared data: every object the API returns has the
methods its siblings have (``to_frame()``, ``to_json()``), and what they give matches the command line."""

from __future__ import annotations

import json

import pytest

import harness_ext as hx
from harness_ext.errors import HarnessExtError
from conftest import PYTHIA

pytestmark = pytest.mark.skipif(not PYTHIA.is_dir(), reason="shared Pythia evals not present")


def test_ingest_report_has_to_frame_and_to_json_as_the_command(tmp_path):
    from harness_ext.cli import main

    files = [PYTHIA / "bloom", PYTHIA / "README.md"]  # five lm-eval v0.3 runs and a file holding no results
    report = hx.ingest(files, store=tmp_path / "api.duckdb")
    frame = report.to_frame()
    assert list(frame["path"]) == [f.path for f in report.files]
    assert (frame.loc[frame["status"] == "ingested", "n_results"] > 0).all()
    assert frame["status"].value_counts().to_dict() == {s: len(report.by_status(s))
                                                        for s in ("ingested", "unchanged", "skipped")
                                                        if report.by_status(s)}
    doc = json.loads(report.to_json(tmp_path / "api.json"))
    assert json.loads((tmp_path / "api.json").read_text()) == doc
    assert main(["ingest", "--db", str(tmp_path / "cli.duckdb"), *map(str, files), "--json",
                 str(tmp_path / "cli.json")]) == 0
    cli = json.loads((tmp_path / "cli.json").read_text())
    assert {k: doc[k] for k in ("command", "title", "summary", "tables")} == \
        {k: cli[k] for k in ("command", "title", "summary", "tables")}
    assert set(doc["warnings"]) == set(cli["warnings"])


@pytest.fixture(scope="module")
def pythia_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("pythia") / "store.duckdb"
    hx.ingest(PYTHIA / "pythia-v1", store=store)
    return store


@pytest.fixture(scope="module")
def pythia_reduced(pythia_store):
    """MMLU of the shared Pythia evals' runs reduced to 4 subjects, Pythia-2.8B's checkpoints held out."""
    matrix = hx.load_matrix(pythia_store, benchmark="mmlu", exclude_models="EleutherAI/pythia-v1.1-2.8b@*")
    return hx.reduce(matrix, budget=4, seed=0, n_random=20, n_random_subsets=10)


HELD_OUT = PYTHIA / "pythia-v1" / "pythia-2.8b" / "five-shot" / "2.8b-5shot_step143000.json"


def test_predict_takes_the_commands_adapter_and_says_when_it_does_nothing(pythia_reduced):
    detected = hx.predict(pythia_reduced, HELD_OUT)
    forced = hx.predict(pythia_reduced, HELD_OUT, adapter="lm_eval_v03")  # predict --adapter lm_eval_v03
    assert forced.aggregate["aggregate"].tolist() == detected.aggregate["aggregate"].tolist()
    with pytest.raises(HarnessExtError):  # a reader that cannot read the file: refused, not a silent empty result
        hx.predict(pythia_reduced, HELD_OUT, adapter="helm")
    scores = {name: 0.3 for name in pythia_reduced.subset}
    with pytest.raises(HarnessExtError, match="adapter='lm_eval_v03' reads result files; scores given as a dict"):
        hx.predict(pythia_reduced, scores, adapter="lm_eval_v03")
    with pytest.raises(HarnessExtError, match="estimator='crosstask': an item estimator is for an item-level"):
        hx.predict(pythia_reduced, HELD_OUT, estimator="crosstask")


HELM_LITE_ITEMS = PYTHIA.parents[1] / "items" / "helm_lite"


@pytest.mark.skipif(not HELM_LITE_ITEMS.is_dir(), reason="shared HELM Lite item tables not present")
def test_item_manifest_given_task_scores_says_to_give_the_answers(tmp_path):
    import pandas as pd

    store = tmp_path / "items.duckdb"
    hx.ingest([HELM_LITE_ITEMS / "gsm.parquet", HELM_LITE_ITEMS / "math.parquet"], store=store)
    new = "anthropic_claude-3-5-sonnet-20241022"
    reduced = hx.reduce_items(store, 20, benchmark="helm_lite", seed=0, exclude_models=new)
    # The API's own argument names in its refusals (were only the command's --items and --items-total).
    with pytest.raises(HarnessExtError, match=r"\(items=N in Python.*n_total=N"):
        hx.reduce_items(store, benchmark="helm_lite")
    with pytest.raises(HarnessExtError, match=r"\(items=1 in Python"):
        hx.reduce_items(store, 1, benchmark="helm_lite")
    for scores in ({"gsm": 0.95, "math": 0.92}, pd.Series({"gsm": 0.95, "math": 0.92}, name=new)):
        with pytest.raises(HarnessExtError, match="item-level manifest .* predicts from the new model's answers"):
            hx.predict(reduced, scores)
    with pytest.raises(HarnessExtError, match="adapter='helm': the manifest is item-level"):
        hx.predict(reduced, HELM_LITE_ITEMS / "gsm.parquet", adapter="helm")
    # What the message says to give: the model's rows of the item-response tables, one file per task.
    answers = tmp_path / "new"
    answers.mkdir()
    for task in ("gsm", "math"):
        table = pd.read_parquet(HELM_LITE_ITEMS / f"{task}.parquet")
        table[table["model"] == new].to_parquet(answers / f"{task}.parquet")
    prediction = hx.predict(reduced, answers, estimator="aipw")
    assert prediction.to_frame()["dataset"].tolist() == ["gsm", "math"]


def test_reduce_of_a_store_takes_the_commands_matrix_options(pythia_store, tmp_path):
    """``reduce --models '*deduped*' --exclude-models ...`` as ``hx.reduce(store, models=..., exclude_models=...)``.

    Was: TypeError (unexpected keyword argument 'models'); the README's quickstart command had no Python twin.
    """
    from harness_ext.cli import main

    options = dict(benchmark="mmlu", budget=3, seed=0, n_random=20, n_random_subsets=10)
    res = hx.reduce(pythia_store, models="*deduped*", exclude_models="EleutherAI/pythia-v1.1-2.8b-deduped@*",
                    **options)
    assert res.manifest["source"]["query"]["models"] == "*deduped*"
    res.write(tmp_path / "api", ["json"])
    assert main(["reduce", "--db", str(pythia_store), "--benchmark", "mmlu", "--budget", "3", "--seed", "0",
                 "--n-random", "20", "--n-random-subsets", "10", "--models", "*deduped*", "--exclude-models",
                 "EleutherAI/pythia-v1.1-2.8b-deduped@*", "--format", "json", "--no-plot",
                 "--out", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "api" / "manifest.json").read_bytes() == (tmp_path / "cli" / "manifest.json").read_bytes()
    matrix = hx.load_matrix(pythia_store, benchmark="mmlu")
    with pytest.raises(HarnessExtError, match="models= select a store's matrix: give reduce\\(\\) the store path"):
        hx.reduce(matrix, models="*deduped*", **options)
    with pytest.raises(HarnessExtError, match="unexpected keyword argument\\(s\\) model: .*models, source"):
        hx.reduce(pythia_store, model="*deduped*", **options)


def test_a_models_glob_that_matches_no_name_shows_the_closest_names(pythia_store):
    """Was: "no results match benchmarks=['mmlu'], models='pythia-2.8b*'; benchmarks in the store: ...", no word of
    why (the names are 'EleutherAI/pythia-v1.1-2.8b@step...', and a glob matches the whole name)."""
    with pytest.raises(HarnessExtError, match="no model name matches 'pythia-2.8b\\*': a glob matches the whole "
                                              "name.*closest names: 'EleutherAI/pythia-v1.1-2.8b@"):
        hx.load_matrix(pythia_store, benchmark="mmlu", models="pythia-2.8b*")
    assert len(hx.load_matrix(pythia_store, benchmark="mmlu", models="*pythia-v1.1-2.8b@*")) > 0
