"""Averaging strategies of the averaging paper (SF, SA, MF, MA) on hand-written scores,
probability averaging for the logistic response, and the training / test lags."""

import math

import numpy as np
import pytest

from chains import small_corpus
from topiczoo.fit import fit, snapshot_iterations
from topiczoo.kernels.responses import Hinge, Logistic
from topiczoo.models import gslda
from topiczoo.predict import STRATEGIES, Prediction, predict, reduce_scores

# S[c, i, j, t, d]: C=2 training chains, I=2 snapshots, J=3 test draws, T=1 task, D=2 docs.
# Row = one test draw j, its two entries the scores of documents 0 and 1.
S = np.array([
    [  # chain 0
        [[1, -2], [3, -4], [5, 0]],     # snapshot 0
        [[2, 1], [-1, 3], [4, -2]],     # snapshot 1 (last)
    ],
    [  # chain 1
        [[0, 2], [6, -6], [-3, 4]],     # snapshot 0
        [[1, 1], [2, -5], [-2, 6]],     # snapshot 1 (last)
    ],
], dtype=np.float32)[:, :, :, None, :]

# By hand:
# SF: chain 0, last snapshot, last test draw                  -> [4, -2]
# SA: chain 0, last snapshot, mean of its 3 test draws       -> [(2-1+4)/3, (1+3-2)/3]
# MF: the last test draw of each of the 4 (chain, snapshot)   -> [(5+4-3-2)/4, (0-2+4+6)/4]
# MA: all 12 (chain, snapshot, test draw) samples
#     doc 0: 1+3+5+2-1+4+0+6-3+1+2-2 = 18;  doc 1: -2-4+0+1+3-2+2-6+4+1-5+6 = -2
EXPECTED = {
    "sf": [4.0, -2.0],
    "sa": [5 / 3, 2 / 3],
    "mf": [1.0, 2.0],
    "ma": [18 / 12, -2 / 12],
}


def test_shape_of_the_hand_written_array():
    assert S.shape == (2, 2, 3, 1, 2)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_reduce_scores_matches_hand_computed_values(strategy):
    out = reduce_scores(S, strategy)
    assert out.shape == (1, 2)
    np.testing.assert_allclose(out[0], EXPECTED[strategy], rtol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_prediction_labels_and_accuracy(strategy):
    pred = Prediction(S, Logistic(1.0))
    expected = (np.asarray(EXPECTED[strategy]) > 0).astype(int)
    np.testing.assert_array_equal(pred.labels(strategy), expected)
    assert pred.accuracy(expected, strategy) == 1.0
    np.testing.assert_allclose(pred.decision_scores(strategy)[0], EXPECTED[strategy], rtol=1e-6)


def test_unknown_strategy_and_bad_shapes():
    with pytest.raises(ValueError, match="unknown averaging strategy 'last'"):
        reduce_scores(S, "last")
    with pytest.raises(ValueError, match="unknown averaging strategy"):
        Prediction(S, Logistic(1.0)).labels("MA")
    with pytest.raises(ValueError, match=r"\[C, I, J, T, D\]"):
        reduce_scores(S[0], "ma")
    with pytest.raises(ValueError, match="average must be"):
        Prediction(S, Logistic(1.0)).decision_scores("ma", average="votes")


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def test_probability_averaging_can_change_the_decision():
    # SA over three test draws with scores 10, -2, -2 (chain 0, last snapshot, one document):
    # mean score 2 > 0 -> label 1; mean probability (s(10) + 2 s(-2)) / 3 = 0.41279 < 0.5 -> 0
    scores = np.array([10.0, -2.0, -2.0], np.float32).reshape(1, 1, 3, 1, 1)
    pred = Prediction(scores, Logistic(1.0))
    p_bar = (_sigmoid(10) + 2 * _sigmoid(-2)) / 3
    assert p_bar == pytest.approx(0.412787, abs=1e-6)
    assert pred.decision_scores("sa")[0, 0] == pytest.approx(2.0)
    assert pred.decision_scores("sa", average="probabilities")[0, 0] == pytest.approx(
        math.log(p_bar / (1 - p_bar)), rel=1e-9)
    assert pred.probabilities("sa", average="probabilities") == pytest.approx([p_bar])
    assert pred.probabilities("sa") == pytest.approx([_sigmoid(2.0)], rel=1e-6)
    assert pred.labels("sa").tolist() == [1]
    assert pred.labels("sa", average="probabilities").tolist() == [0]
    assert pred.accuracy([0], "sa", average="probabilities") == 1.0
    # a single sample: averaging probabilities changes nothing
    assert pred.decision_scores("sf", average="probabilities")[0, 0] == pytest.approx(-2.0)


def test_probability_averaging_hand_values_on_the_array_and_no_overflow():
    pred = Prediction(S, Logistic(1.0))
    last_draws = [[5, 0], [4, -2], [-3, 4], [-2, 6]]  # MF's four samples, per document
    for d in range(2):
        p_bar = sum(_sigmoid(row[d]) for row in last_draws) / 4
        assert pred.decision_scores("mf", "probabilities")[0, d] == pytest.approx(
            math.log(p_bar / (1 - p_bar)), rel=1e-6)
    # saturated probabilities: logit(mean sigmoid) stays finite and exact
    big = np.full((2, 1, 2, 1, 1), 100.0, np.float32)
    assert Prediction(big, Logistic(1.0)).decision_scores("ma", "probabilities")[0, 0] == (
        pytest.approx(100.0))


def test_hinge_averages_scores_only():
    pred = Prediction(S, Hinge(1.0, 1.0))
    np.testing.assert_allclose(pred.decision_scores("ma")[0], EXPECTED["ma"], rtol=1e-6)
    with pytest.raises(TypeError, match="only average='scores'"):
        pred.decision_scores("ma", average="probabilities")
    with pytest.raises(TypeError, match="no probabilities"):
        pred.probabilities("ma")


# ------------------------------------------------------------------------------ lags


def test_snapshot_iterations_lag_and_even_spacing():
    # T_TR = {i in (B, T]: (i - B) mod L = 0}, plus T itself
    assert snapshot_iterations(100, 50, snapshot_lag=10) == [60, 70, 80, 90, 100]
    assert snapshot_iterations(100, 50, snapshot_lag=15) == [65, 80, 95, 100]
    assert snapshot_iterations(100, 50, snapshot_lag=100) == [100]
    assert snapshot_iterations(12, 6, num_snapshots=2) == [9, 12]
    assert snapshot_iterations(12, 6, num_snapshots=5, snapshot_lag=2) == [8, 10, 12]
    assert snapshot_iterations(10, 10, snapshot_lag=2) == []


def test_fit_snapshot_lag_timing_and_test_lags():
    corpus = small_corpus()
    result = fit(gslda(3), corpus, num_chains=2, num_iterations=13, num_burnin=4,
                 snapshot_lag=3, num_snapshots=1, chunk=20, progress=False)
    assert [s.iteration for s in result.snapshots] == [7, 10, 13]
    # per-draw timing: [C, S], one value per chunk, positive, summing to the training time
    timing = result.sample_stats["time_per_iteration"]
    assert timing.shape == (2, 13) and np.all(timing > 0)
    np.testing.assert_allclose(timing[0].sum(), result.train_seconds, rtol=1e-9)
    chunks = [(0, 4), (4, 7), (7, 10), (10, 13)]  # burn-in end and snapshot points end chunks
    for a, b in chunks:
        assert np.all(timing[:, a:b] == timing[0, a])
    post = result.posterior_draws(include_stats=True)
    assert post["time_per_iteration"].shape == (2, 9) and post["eta"].shape[:2] == (2, 9)
    assert "time_per_iteration" not in result.posterior_draws()
    # test chains: B_TE = 3 burn-in sweeps, J = 4 kept draws every L_TE = 2 sweeps
    pred = predict(result, corpus, num_burnin=3, num_draws=4, lag=2)
    assert pred.scores.shape == (2, 3, 4, 1, 12)
    assert np.isfinite(pred.scores).all()
    for strategy in STRATEGIES:
        assert 0.0 <= pred.accuracy(corpus.labels, strategy) <= 1.0
    with pytest.raises(ValueError, match="snapshot_lag must be"):
        fit(gslda(3), corpus, num_iterations=13, snapshot_lag=0, progress=False)
