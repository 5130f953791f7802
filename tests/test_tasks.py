"""The task: label kinds, the [T, D] orientation, decisions, centring and metrics."""

import warnings

import numpy as np
import pytest

from topiczoo import Corpus
from topiczoo.models import Task

WORDS, OFFSETS, VOCAB = np.array([0, 1, 2, 1], np.int32), np.array([0, 2, 3, 4]), ("a", "b", "c")


def _corpus(labels):
    return Corpus(WORDS, OFFSETS, VOCAB, labels=np.asarray(labels))


def test_orientation_and_decisions_round_trip():
    multiclass = Task.of(("multiclass",), _corpus([2, 0, 1]))
    assert multiclass == Task("multiclass", 3)
    y = multiclass.to_tasks([2, 0, 1])
    np.testing.assert_array_equal(y, [[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(multiclass.decide(y), [2, 0, 1])

    labels = np.array([[1, 0], [0, 0], [1, 1]])
    multilabel = Task.of(("binary", "multilabel"), _corpus(labels))
    assert multilabel == Task("multilabel", 2)
    scores = multilabel.to_tasks(labels) - 0.5  # [T, D]
    assert scores.shape == (2, 3)
    np.testing.assert_array_equal(multilabel.decide(scores), labels)

    binary = Task.of(("binary", "multilabel"), _corpus([1, 0, 1]))
    np.testing.assert_array_equal(binary.decide(np.array([[0.3, -2.0, 0.0]])), [1, 0, 0])


def test_two_classes_are_a_multiclass_problem_for_a_multiclass_model():
    assert Task.of(("multiclass",), _corpus([1, 0, 1])) == Task("multiclass", 2)


def test_centring_subtracts_the_training_mean_and_adds_it_back():
    ratings = np.array([1.0, 2.0, 6.0])
    task = Task.of(("regression",), _corpus(ratings), center=True)
    assert task.offset == pytest.approx(3.0)
    np.testing.assert_allclose(task.to_tasks(ratings), [[-2.0, -1.0, 3.0]])
    np.testing.assert_allclose(task.decide(np.array([[0.5, -0.5, 1.0]])), [3.5, 2.5, 4.0])
    assert Task.of(("regression",), _corpus(ratings)).offset == 0.0


def test_wrong_label_kinds_are_named():
    with pytest.raises(ValueError, match="takes regression labels; the corpus has binary"):
        Task.of(("regression",), _corpus([0, 1, 1]))
    with pytest.raises(ValueError, match="as_multilabel"):
        Task.of(("binary", "multilabel"), _corpus([0, 2, 1]))
    with pytest.raises(ValueError, match="needs a corpus with labels"):
        Task.of(("binary",), Corpus(WORDS, OFFSETS, VOCAB))
    with pytest.raises(ValueError, match="task kind must be one of"):
        Task("ordinal")


def test_multilabel_metrics_are_micro_and_macro():
    from topiczoo.metrics import precision_recall_f1

    truth, predicted = np.array([[1, 0], [1, 1], [0, 0]]), np.array([[1, 1], [0, 1], [0, 0]])
    out = precision_recall_f1(truth, predicted)
    # pooled: 2 true positives of 3 predicted and 3 true; per label: (1, 1/2) and (1/2, 1)
    assert out["precision"] == pytest.approx(2 / 3) and out["recall"] == pytest.approx(2 / 3)
    assert out["macro_precision"] == pytest.approx(0.75)
    assert out["macro_recall"] == pytest.approx(0.75)
    assert out["macro_f1"] == pytest.approx(2 / 3)


def test_predicting_documents_with_no_known_word_warns_with_counts():
    from topiczoo import DataLossWarning, fit, gslda, predict

    train = _corpus([0, 1, 1])
    test = Corpus(np.array([0, 1], np.int32), np.array([0, 2, 2, 2]), VOCAB,
                  labels=np.array([0, 1, 1]))
    result = fit(gslda(2), train, num_chains=1, num_iterations=4, num_snapshots=1,
                 progress=False)
    with pytest.warns(DataLossWarning, match="2 of 3 test documents have no tokens") as caught:
        prediction = predict(result, test, num_burnin=1, num_draws=1)
    assert caught[0].filename == __file__  # the warning points at predict's caller
    assert prediction.labels().shape == (3,)
    with pytest.raises(ValueError, match="shape"):
        prediction.accuracy([0, 1])


@pytest.mark.parametrize("task, truth, message", [
    (Task("binary", 1), np.arange(10) % 3, r"binary truth\[2\] is 2, not 0 or 1"),
    (Task("binary", 1), np.linspace(0, 1, 4), r"binary truth\[1\] is .*0.33.*, not 0 or 1"),
    (Task("binary", 1), np.array([np.nan, 1.0]), r"binary truth\[0\] is nan"),
    (Task("binary", 1), np.array(["a", "b"]), r"binary truth\[0\] is .*'a'"),
    (Task("multiclass", 3), np.array([0, 2, 3]), r"truth\[2\] is 3, not a class id in \[0, 3\)"),
    (Task("multilabel", 2), np.zeros((4, 3), int), r"indicators \[D, 2\], got shape \(4, 3\)"),
    (Task("multilabel", 2), np.array([[0, 1], [2, 0]]), r"multilabel truth\[1, 0\] is 2"),
])
def test_metrics_refuse_truth_that_is_not_labels_of_the_task(task, truth, message):
    """Scoring a binary model against 3 classes or ratings gave an accuracy (0.4, 0.0)."""
    predicted = np.zeros(truth.shape, np.int64)
    with pytest.raises(ValueError, match=message):
        task.metrics(truth, predicted)


def test_metrics_take_labels_of_the_task():
    assert Task("binary", 1).metrics(np.array([0, 1, True]), np.array([0, 1, 0])) == \
        {"accuracy": pytest.approx(2 / 3)}
    assert Task("multiclass", 3).metrics([0, 2, 1], np.array([0, 2, 2]))["accuracy"] == \
        pytest.approx(2 / 3)


def test_a_binary_corpus_of_one_class_is_warned_about():
    with pytest.warns(UserWarning, match="every training label is 1"):
        Task.of(("binary",), _corpus([1, 1, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Task.of(("binary",), _corpus([1, 0, 1]))
