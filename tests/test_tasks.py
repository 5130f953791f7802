"""The task: label kinds, the [T, D] orientation, decisions, centring and metrics."""

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
