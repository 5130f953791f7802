"""Tests of topiczoo.metrics: values, and clear errors for labels that do not fit."""

import warnings

import numpy as np
import pytest

from topiczoo.errors import InputError, InputTypeError
from topiczoo.metrics import accuracy, evaluate, mean_squared_error, precision_recall_f1, predictive_r2


def test_values():
    assert accuracy([1, 0, 1, 1], [1, 1, 1, 0]) == 0.5
    assert accuracy(["a", "b"], ["a", "a"]) == 0.5
    assert mean_squared_error([1.0, 2.0], [1.0, 4.0]) == 2.0
    assert predictive_r2([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 1.0
    assert predictive_r2([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]) == 0.0
    # micro: 2 true positives of 3 predicted, 3 true; macro: labels (P, R) = (1, 1/2), (1/2, 1)
    assert precision_recall_f1([[1, 0], [1, 1]], [[1, 1], [0, 1]]) == {
        "precision": pytest.approx(2 / 3), "recall": pytest.approx(2 / 3),
        "f1": pytest.approx(2 / 3), "macro_precision": pytest.approx(0.75),
        "macro_recall": pytest.approx(0.75), "macro_f1": pytest.approx(2 / 3)}
    assert evaluate("regression", [0.0, 1.0], [0.0, 1.0]) == {"predictive_r2": 1.0, "mse": 0.0}


@pytest.mark.parametrize("metric", [accuracy, mean_squared_error, predictive_r2, precision_recall_f1])
def test_wrong_length_is_named_not_broadcast(metric):
    # a length-1 prediction used to broadcast: accuracy([1, 0, 1], [1]) was 0.667
    with pytest.raises(InputError, match=rf"^{metric.__name__}: y_true has shape \(3,\) but y_pred has shape \(1,\)"):
        metric([1, 0, 1], [1])
    with pytest.raises(InputError, match=r"shape \(3,\) but y_pred has shape \(2,\)"):
        metric([1, 0, 1], [1, 0])
    with pytest.raises(InputError, match="no documents to score"):
        metric([], [])
    with pytest.raises(InputError, match="got scalars"):
        metric(1, 1)


def test_bad_values_are_named():
    with pytest.raises(InputError, match=r"mean_squared_error: y_pred\[1\] is nan, not a finite number"):
        mean_squared_error([1.0, 2.0], [1.0, np.nan])
    with pytest.raises(InputError, match=r"predictive_r2: y_true\[0\] is inf"):
        predictive_r2([np.inf, 2.0], [1.0, 2.0])
    with pytest.raises(InputTypeError, match="must both be numbers"):
        mean_squared_error(["a", "b"], [1.0, 2.0])
    with pytest.raises(InputTypeError, match="numbers or both str"):
        accuracy(["1", "0"], [1, 0])
    with pytest.raises(InputError, match=r"y_pred\[0, 1\] is 2, not a 0/1 indicator"):
        precision_recall_f1([[1, 0]], [[1, 2]])
    with pytest.raises(InputTypeError, match="single string"):
        accuracy("101", [1, 0, 1])
    with pytest.raises(InputError, match="unknown task kind 'ordinal'"):
        evaluate("ordinal", [1], [1])


def test_constant_responses_warn_and_give_nan():
    with pytest.warns(RuntimeWarning, match="all 2 test responses equal 3.0, so R\\^2 is undefined"):
        assert np.isnan(predictive_r2([3.0, 3.0], [1.0, 2.0]))


def test_a_label_column_without_positives_is_named_and_counted_as_zero():
    """A user's report: a multi-label column with no positives entered the macro metrics
    silently (as 0s). It still counts 0, as scikit-learn's zero_division=0 does, and a
    RuntimeWarning names the column(s)."""
    truth = np.array([[1, 0, 0], [1, 0, 1], [0, 0, 1]])
    predicted = np.array([[1, 0, 0], [0, 0, 1], [0, 1, 1]])
    with pytest.warns(RuntimeWarning, match=r"label column 1 of 3 has no positive in y_true: "
                                            r"recall is undefined there and counts as 0") as caught:
        out = precision_recall_f1(truth, predicted)
    assert len(caught) == 1 and caught[0].filename == __file__
    # per column (P, R): (1, 1/2), (0, 0: no positive), (1, 1)
    assert out["macro_recall"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert out["macro_precision"] == pytest.approx((1 + 0 + 1) / 3)
    with pytest.warns(RuntimeWarning, match=r"label columns 'news', 'sport' of 3 have no "):
        precision_recall_f1(np.array([[0, 0, 1]]), np.array([[0, 0, 1]]),
                            label_names=("news", "sport", "tech"))
    with pytest.raises(InputError, match="2 label_names for 3 label columns"):
        precision_recall_f1(np.array([[0, 0, 1]]), np.array([[0, 0, 1]]), label_names=("a", "b"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every column has a positive: no warning
        precision_recall_f1([[1, 0], [1, 1]], [[1, 1], [0, 1]])
        evaluate("multilabel", [[1, 0], [0, 1]], [[1, 0], [0, 0]])
