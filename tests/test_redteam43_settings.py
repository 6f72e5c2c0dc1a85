"""Hostile ``prediction.completion_settings`` records: a negative ridge penalty, a rank search of fewer than two
folds, or a record that is no object are said in one line and the settings chosen again (the digest covers the
matrix and the predictor's parameters, not the record, so it still matches)."""

from __future__ import annotations

import copy

import pytest
from test_completion_reuse import CHOOSE, Counted, _same, small  # noqa: F401  (small: the module's fixture)

from harness_ext.methods.engine import completion
from harness_ext.methods.reduction.predict import predict_from_manifest


@pytest.fixture
def counted(monkeypatch):
    c = Counted()
    monkeypatch.setattr(completion, "choose_scales", c)
    return c


@pytest.mark.parametrize("edit", [
    lambda p: p["completion_settings"]["info"].update(ensemble={"lam": -5.0, "ranks": [1, 2]}),
    lambda p: p["completion_settings"].update(rank_cv={"rank": 1, "lam": -1e300, "n_folds": 5, "cv_mse": []}),
    lambda p: p["completion_settings"].update(rank_cv={"rank": 1, "lam": 1.0, "n_folds": -3, "cv_mse": []}),
    lambda p: p.update(completion_settings=[1, 2]),
    lambda p: p.update(completion_settings="../../etc/passwd"),
])
def test_an_absurd_record_whose_digest_matches_is_chosen_again_and_said(small, counted, edit):  # noqa: F811
    manifest, new = small
    m = copy.deepcopy(manifest)
    edit(m["prediction"])
    pred = predict_from_manifest(m, [new])
    assert counted.calls == 1
    said = [w for w in pred.warnings if "prediction.completion_settings cannot be read" in w]
    assert len(said) == 1 and said[0].endswith("chosen again")
    _same(pred, predict_from_manifest(manifest, [new]))
