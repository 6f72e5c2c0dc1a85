"""``--exclude-models``: hold models out of a store without building a second one.

On the bundled Pythia data (``harness-ext ingest --bundled``): ``reduce`` leaves out one training run's
checkpoints, ``predict`` then predicts that run; the manifest lists none of them among its models and
records the globs and how many models they left out; a glob matching nothing is a warning naming it;
``--models`` and ``--exclude-models`` together; every name of a model is left out with the one matched;
the item-level reduction's population likewise; without the option the query (and so the manifest) is as
before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness_ext as hx
from harness_ext.cli import build_parser, main
from harness_ext.cli.options import query_from_args
from harness_ext.store.globs import matches

RUN = "EleutherAI/pythia-v1.1-2.8b@*"  # the 15 checkpoints of Pythia-2.8B's run on the standard Pile
LAST = hx.bundled_data_path() / "pythia-2.8b" / "2.8b-5shot_step143000.json"
LOGS = Path(__file__).resolve().parent / "fixtures" / "samples" / "lm_eval_output"


@pytest.fixture(scope="module")
def pythia(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("bundled") / "pythia.duckdb"
    assert main(["ingest", "--bundled", "--db", str(db), "-q"]) == 0
    return db


@pytest.mark.slow
def test_reduce_without_a_run_then_predict_it(pythia, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # predict writes a bundled run's prediction file in the working directory
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(pythia), "--benchmark", "mmlu", "--budget", "8", "--n-random", "20",
                 "--exclude-models", RUN, "--out", str(out), "--no-plot"]) == 0
    assert "using 254 models (15 left out by --exclude-models)" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    src = manifest["source"]
    assert not [m for m in src["models"] if matches(m, RUN)] and src["n_models"] == 254
    assert src["query"]["exclude_models"] == RUN
    assert src["excluded_models"]["patterns"] == [RUN] and src["excluded_models"]["n_models"] == 15
    assert all(matches(m, RUN) for m in src["excluded_models"]["models"])
    assert not [w for w in manifest["warnings"] if "--exclude-models" in w]
    # predict rebuilds nothing it should not: the held-out run's last checkpoint is a new model to it
    assert main(["predict", "--manifest", str(out), str(LAST), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "EleutherAI/pythia-v1.1-2.8b@step143000" in json.dumps(doc)


def test_a_glob_matching_nothing_is_a_warning_naming_it(pythia, capsys):
    df = hx.load_matrix(pythia, "mmlu", exclude_models=[RUN, "nobody/*"])
    assert df.attrs["excluded"]["unmatched"] == ["nobody/*"] and df.attrs["excluded"]["n_models"] == 15
    capsys.readouterr()
    assert main(["matrix", "--db", str(pythia), "--benchmark", "mmlu", "--exclude-models", "nobody/*",
                 "--out", "/dev/null"]) == 0
    assert "--exclude-models 'nobody/*' matched no model of the selection; 0 models left out" in capsys.readouterr().err


def test_models_then_exclude_models(pythia):
    args = build_parser().parse_args(["reduce", "--models", "*2.8b*", "--exclude-models", "*deduped*", "*step3000",
                                      "--exclude-models", "*step13000"])
    query = query_from_args(args)
    assert query.models == "*2.8b*" and query.exclude_models == ("*deduped*", "*step3000", "*step13000")
    df = hx.load_matrix(pythia, "mmlu", models="*2.8b*", exclude_models=query.exclude_models)
    assert len(df) == 13 and all(matches(m, RUN) for m in df.index)
    assert not [m for m in df.index if m.endswith(("@step3000", "@step13000"))]
    assert df.attrs["excluded"]["n_models"] == 17 and df.attrs["excluded"]["unmatched"] == []


def test_every_name_of_a_matched_model_is_left_out(pythia, tmp_path):
    """A model stored under two names (merged by an alias file) leaves with both when one is matched, so no
    result of a held-out model stays in the matrix under its other name."""
    import shutil

    db = tmp_path / "aliased.duckdb"
    shutil.copy(pythia, db)
    first, second = "EleutherAI/pythia-v1.1-160m@step3000", "EleutherAI/pythia-v1.1-160m@step13000"
    (tmp_path / "aliases.yaml").write_text(f"aliases:\n  {first}: ['{second}']\n")
    assert main(["models", "--db", str(db), "--aliases", str(tmp_path / "aliases.yaml")]) == 0
    assert first in hx.load_matrix(db, "mmlu").index
    df = hx.load_matrix(db, "mmlu", exclude_models=second)  # the alias's name removes the canonical row
    assert first not in df.index and df.attrs["excluded"]["models"] == [first]


def test_without_the_option_the_query_is_as_before(pythia):
    df = hx.load_matrix(pythia, "mmlu")
    assert "exclude_models" not in df.attrs["query"] and "excluded" not in df.attrs


def test_the_item_population_leaves_excluded_models_out(tmp_path):
    db = tmp_path / "items.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *(str(LOGS / m) for m in ("toy__lm-small", "toy__lm-medium"))]) == 0
    everyone = hx.reduce_items(db, 8, metric="acc", seed=3).manifest
    assert len(everyone["models"]) == 2 and "excluded_models" not in everyone["source"]
    left = everyone["models"][0]
    # One model's logs left: nothing to fit, so its documents are drawn from the lm-eval tasks' sizes (sample mean).
    alone = hx.reduce_items(db, 8, metric="acc", seed=3, exclude_models=left).manifest
    assert alone["design"]["population"] == "none" and alone["models"] == [everyone["models"][1]]
    assert any("fewer than 2 models" in w for w in alone["warnings"])
    out = tmp_path / "reduced"
    assert main(["reduce", "--db", str(db), "--items", "8", "--metric", "acc", "--exclude-models", "nobody*",
                 "--out", str(out), "--no-plot"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"]["excluded_models"] == {"patterns": ["nobody*"], "n_models": 0, "models": []}
    assert "--exclude-models 'nobody*' matched no model of the population" in manifest["warnings"]


def test_weights_prompt_level_matrix_leaves_excluded_models_out(tmp_path, capsys):
    """``weights --samples-task``: the prompt-level matrix of the store's per-sample scores."""
    from harness_ext.errors import MethodError
    from harness_ext.methods.weighting import samples_matrix
    from harness_ext.store.db import Store

    db = tmp_path / "items.duckdb"
    assert main(["ingest", "--db", str(db), "-q", *(str(LOGS / m) for m in ("toy__lm-small", "toy__lm-medium"))]) == 0
    with Store.open(db, read_only=True) as store:
        df = samples_matrix(store, "toy_arith_mc", "acc", exclude_models="nobody*")
        assert len(df) == 2 and df.attrs["unmatched_exclude"] == ["nobody*"]
        with pytest.raises(MethodError, match="1 model"):
            samples_matrix(store, "toy_arith_mc", "acc", exclude_models=df.index[0])
    capsys.readouterr()
    assert main(["weights", "--db", str(db), "--samples-task", "toy_arith_mc", "--samples-metric", "acc",
                 "--exclude-models", "nobody*", "--analyses", "silhouette", "--out", str(tmp_path / "w")]) == 0
    assert "--exclude-models 'nobody*' matched no model of toy_arith_mc" in capsys.readouterr().err
