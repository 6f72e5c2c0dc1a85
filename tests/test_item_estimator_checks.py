"""Item estimators check their inputs as scikit-learn's do: ``__init__`` stores, ``fit``/``predict`` raise a
ValueError that says what is wrong (a level given as a percentage, an item index past the task's end,
answers of the wrong width), and ``set_params`` changes parameters."""

from __future__ import annotations

import numpy as np
import pytest

from harness_ext.methods.engine.item_estimators import AIPW, AnchorWeighted, SampleMean, random_items


@pytest.fixture(scope="module")
def population():
    rng = np.random.default_rng(0)
    P = (rng.random((30, 200)) < np.linspace(0.2, 0.9, 30)[:, None]).astype(float)
    return P, random_items(n_total=200, n_items=20, random_state=0)


@pytest.mark.parametrize("level, hint", [(90, "use 0.9"), (-1, None), (1.0, None), (0, None), (float("nan"), None),
                                         ("0.9", None), (True, None), (150, None)])
def test_a_level_outside_0_1_is_refused_at_fit_not_given_as_nan_bounds(population, level, hint):
    P, items = population
    for cls in (AIPW, SampleMean):
        est = cls(level=level)  # __init__ stores whatever it is given
        assert est.level is level
        with pytest.raises(ValueError, match="level must be") as err:
            est.fit(P, items)
        assert (hint in str(err.value)) if hint else "percentage" not in str(err.value)


def test_item_indices_are_checked_at_fit(population):
    P, _ = population
    for items, msg in (([5000, 1, 2], "outside the task's 200 items"), ([-1, 2], "outside"),
                       ([1, 1, 2], "repeat"), ([], "non-empty"), ([0.5, 2.0], "integer"),
                       (np.zeros(200, dtype=bool), "boolean mask")):
        with pytest.raises(ValueError, match=msg):
            AIPW().fit(P, np.asarray(items))
    with pytest.raises(ValueError, match="2-D"):
        AIPW().fit(P[0], [1, 2])
    assert list(AIPW().fit(P, np.array([3.0, 7.0])).items_) == [3, 7]  # integral floats are indices


def test_predict_checks_the_answers_width_and_fitting(population):
    P, items = population
    est = AIPW().fit(P, items)
    with pytest.raises(ValueError, match="fitted with 20 sampled items"):
        est.predict(P[:2, :19])
    with pytest.raises(ValueError, match="not fitted"):
        SampleMean().predict(P[:2, items])
    with pytest.raises(ValueError, match="not fitted"):
        AnchorWeighted().predict(P[:2, items])
    one = est.predict(P[0, items])  # one target's 1-D answers still work
    assert one.estimate.shape == (1,)
    # set_params after fit: predict checks the level again
    with pytest.raises(ValueError, match="level must be"):
        est.set_params(level=90).predict(P[:2, items])


def test_set_params_as_the_other_methods(population):
    P, items = population
    est = AIPW()
    assert est.set_params(level=0.8, alpha=3.0) is est
    assert est.get_params() == {"level": 0.8, "alpha": 3.0, "n_folds": 5}
    with pytest.raises(ValueError, match="invalid parameter 'nope'"):
        est.set_params(nope=1)
    res = est.fit(P, items).predict(P[:3, items])
    assert res.level == 0.8 and np.all(res.lower <= res.estimate) and np.all(res.estimate <= res.upper)
