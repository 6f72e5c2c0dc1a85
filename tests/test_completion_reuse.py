"""``predict`` reuses the completion's settings ``reduce`` chose (``prediction.completion_settings``) when the
training matrix and the predictor's parameters are those it chose them on; otherwise, or for a manifest without the
record, it chooses them again."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from harness_ext.methods.engine import completion
from harness_ext.methods.reduction.manifest import build_manifest, validate_manifest
from harness_ext.methods.reduction.predict import predict_from_manifest
from harness_ext.store.db import Store
from harness_ext.store.ingest import bundled_data_path, ingest_paths
from harness_ext.store.matrix import MatrixQuery, load_matrix

FALLBACK = "differ from those reduce chose the completion's settings on"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A manifest of the bundled Pythia 160M checkpoints' lm-eval tasks but one, and that one's results file."""
    files = sorted(p for d in bundled_data_path().glob("pythia-160m") for p in d.iterdir() if p.suffix == ".json")
    new = files[-1]
    with Store.open(":memory:") as store:
        ingest_paths(store, [p for p in files if p != new], show_progress=False)
        df = load_matrix(store, MatrixQuery(benchmarks=("lm_eval",)))
    manifest = build_manifest(df, budget="3", n_random=20, n_random_subsets=10, random_state=0, group_name="reuse")
    return manifest, new


class Counted:
    """``choose_scales`` counting its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, est, X):
        self.calls += 1
        return CHOOSE(est, X)


CHOOSE = completion.choose_scales


@pytest.fixture
def counted(monkeypatch):
    c = Counted()
    monkeypatch.setattr(completion, "choose_scales", c)
    return c


def _same(a, b):
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.aggregate, b.aggregate)


def test_manifest_records_the_choice_and_predict_reuses_it(small, counted):
    manifest, new = small
    rec = manifest["prediction"]["completion_settings"]
    assert rec["scales"] in ("auto", "standardise") and len(rec["digest"]) == 64
    validate_manifest(manifest)
    reused = predict_from_manifest(manifest, [new])
    assert counted.calls == 0
    old = copy.deepcopy(manifest)  # a manifest written before the record: chosen again, silently
    del old["prediction"]["completion_settings"]
    again = predict_from_manifest(old, [new])
    assert counted.calls == 1
    _same(reused, again)
    assert reused.warnings == again.warnings and not any(FALLBACK in w for w in again.warnings)
    assert reused.to_json() == again.to_json()


def test_the_recorded_choice_is_the_one_made_again(small):
    """The fit from the record holds the settings a fit choosing them on the same matrix holds."""
    from harness_ext.methods.engine.completion_settings import settings_from_record
    from harness_ext.methods.reduction.predict import training_matrix

    manifest, _ = small
    X = training_matrix(manifest).to_numpy(dtype=float)
    params = manifest["prediction"]["predictor"]["params"]
    a = completion.LowRankCompleter(**params).fit(X)
    b = completion.LowRankCompleter(**params).fit(
        X, settings=settings_from_record(manifest["prediction"]["completion_settings"]))
    assert (a.scales_, a.rank_, a.lam_, a.cell_blend_) == (b.scales_, b.rank_, b.lam_, b.cell_blend_)
    assert a.scales_cv_["ensemble"] == b.scales_cv_["ensemble"]


@pytest.mark.parametrize("change", ["matrix", "params"])
def test_a_changed_matrix_or_predictor_chooses_again_and_says_so(small, counted, change):
    manifest, new = small
    m = copy.deepcopy(manifest)
    if change == "matrix":
        m["training_matrix"]["values"][0][0] += 0.01
    else:
        m["prediction"]["predictor"]["params"]["lam_bias"] = 0.2
    pred = predict_from_manifest(m, [new])
    assert counted.calls == 1
    assert sum(FALLBACK in w for w in pred.warnings) == 1
    # The level is set at predict time and does not enter the choice.
    level = predict_from_manifest(manifest, [new], level=0.8)
    assert counted.calls == 1 and not any(FALLBACK in w for w in level.warnings)


def test_a_manifest_without_its_matrix_reuses_the_choice_on_the_store(tmp_path, monkeypatch, counted):
    """Past the embedding limit the manifest names the store; predict re-reads the matrix, the digest still agrees.
    A manifest whose embedded matrix was removed reads the store's unrounded values instead: chosen again."""
    from harness_ext.methods.reduction import manifest as manifest_module

    files = sorted(p for p in (bundled_data_path() / "pythia-160m").iterdir() if p.suffix == ".json")
    db = tmp_path / "store.duckdb"
    with Store.open(db) as store:
        ingest_paths(store, files[:-1], show_progress=False)
        df = load_matrix(store, MatrixQuery(benchmarks=("lm_eval",)))
    kw = dict(budget="3", n_random=20, n_random_subsets=10, random_state=0, group_name="reuse", db=str(db))
    embed = manifest_module.EMBED_MAX_CELLS
    monkeypatch.setattr(manifest_module, "EMBED_MAX_CELLS", 0)
    m = build_manifest(df, **kw)
    counted.calls = 0  # reduce's own choice
    assert "training_matrix" not in m and "completion_settings" in m["prediction"]
    pred = predict_from_manifest(m, [files[-1]])
    assert counted.calls == 0 and not any(FALLBACK in w for w in pred.warnings)
    monkeypatch.setattr(manifest_module, "EMBED_MAX_CELLS", embed)
    embedded = build_manifest(df, **kw)
    del embedded["training_matrix"]
    counted.calls = 0
    pred = predict_from_manifest(embedded, [files[-1]])
    assert counted.calls == 1 and sum(FALLBACK in w for w in pred.warnings) == 1


@pytest.mark.parametrize("edit", [
    lambda r: r.update(scales="../../etc/passwd"),
    lambda r: r["info"].update(cell_blend=7),
    lambda r: r["info"].pop("cell_blend"),
    lambda r: r["info"].update(ensemble={"lam": 1.0, "ranks": [10 ** 6]}),
    lambda r: r.update(rank_cv={"rank": "two", "lam": 1.0, "n_folds": 5, "cv_mse": []}),
    lambda r: r.update(rank_cv={"rank": 2, "lam": 1.0, "n_folds": 5, "cv_mse": [[2, "x", 0.1]]}),
])
def test_a_hand_edited_record_is_chosen_again_and_said(small, counted, edit):
    """The digest covers the matrix and the parameters, not the record: an edited record that cannot be fitted is
    said in one line and the settings chosen again, as for a manifest without it."""
    manifest, new = small
    m = copy.deepcopy(manifest)
    edit(m["prediction"]["completion_settings"])
    pred = predict_from_manifest(m, [new])
    assert counted.calls == 1
    said = [w for w in pred.warnings if "prediction.completion_settings cannot be read" in w]
    assert len(said) == 1 and said[0].endswith("chosen again")
    _same(pred, predict_from_manifest(manifest, [new]))
