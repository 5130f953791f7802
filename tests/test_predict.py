"""Prediction: the test chain against its exact posterior and a plain-Python reference; the
pairing of chains, snapshots and test draws in ``predict`` on a hand-computed fit; the averaging
strategies of the averaging paper (SF, SA, MF, MA) on hand-written scores; probability
averaging for the logistic response; and the training / test lags."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

import reference
from chains import small_corpus
from topiczoo.corpus import Corpus
from topiczoo.fit import FitResult, Snapshot, fit
from topiczoo.schedule import snapshot_iterations
from topiczoo.models.responses import Hinge, Logistic
from topiczoo.kernels.topics import sample_test_topics
from topiczoo.models import Task, gslda
from topiczoo.predict import STRATEGIES, Prediction, held_out_proportions, predict, reduce_scores

BINARY = Task("binary", 1)

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


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_reduce_scores_matches_hand_computed_values(strategy):
    out = reduce_scores(S, strategy)
    assert out.shape == (1, 2)
    np.testing.assert_allclose(out[0], EXPECTED[strategy], rtol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_prediction_labels_and_accuracy(strategy):
    pred = Prediction(S, BINARY, Logistic(1.0))
    expected = (np.asarray(EXPECTED[strategy]) > 0).astype(int)
    np.testing.assert_array_equal(pred.labels(strategy), expected)
    assert pred.accuracy(expected, strategy) == 1.0
    np.testing.assert_allclose(pred.decision_scores(strategy)[0], EXPECTED[strategy], rtol=1e-6)


def test_unknown_strategy_and_bad_shapes():
    with pytest.raises(ValueError, match="unknown averaging strategy 'last'"):
        reduce_scores(S, "last")
    with pytest.raises(ValueError, match="unknown averaging strategy"):
        Prediction(S, BINARY, Logistic(1.0)).labels("MA")
    with pytest.raises(ValueError, match=r"\[C, I, J, T, D\]"):
        reduce_scores(S[0], "ma")
    with pytest.raises(ValueError, match="average must be"):
        Prediction(S, BINARY, Logistic(1.0)).decision_scores("ma", average="votes")


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def test_probability_averaging_can_change_the_decision():
    # SA over three test draws with scores 10, -2, -2 (chain 0, last snapshot, one document):
    # mean score 2 > 0 -> label 1; mean probability (s(10) + 2 s(-2)) / 3 = 0.41279 < 0.5 -> 0
    scores = np.array([10.0, -2.0, -2.0], np.float32).reshape(1, 1, 3, 1, 1)
    pred = Prediction(scores, BINARY, Logistic(1.0))
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
    pred = Prediction(S, BINARY, Logistic(1.0))
    last_draws = [[5, 0], [4, -2], [-3, 4], [-2, 6]]  # MF's four samples, per document
    for d in range(2):
        p_bar = sum(_sigmoid(row[d]) for row in last_draws) / 4
        assert pred.decision_scores("mf", "probabilities")[0, d] == pytest.approx(
            math.log(p_bar / (1 - p_bar)), rel=1e-6)
    # saturated probabilities: logit(mean sigmoid) stays finite and exact
    big = np.full((2, 1, 2, 1, 1), 100.0, np.float32)
    assert Prediction(big, BINARY, Logistic(1.0)).decision_scores("ma", "probabilities")[0, 0] == (
        pytest.approx(100.0))


def test_hinge_averages_scores_only():
    pred = Prediction(S, BINARY, Hinge(1.0, 1.0))
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
    # the early ends (1, 5), the burn-in end and the snapshot points end chunks
    chunks = [(0, 1), (1, 4), (4, 5), (5, 7), (7, 10), (10, 13)]
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


# ------------------------------------------------------------------------------ test chains
# The test chain samples test documents' topics with Phi-hat of a snapshot fixed and no response
# (JMLR eq. 15): p(z_d | w_d, Phi) propto prod_k Gamma(n_dk + alpha/K) prod_n phi_{w_n, z_n}.

TEST_DOCS = [(0, 1, 2, 2), (1, 0), (2,), (0, 0, 1)]
TEST_COUNTS = np.array([[3, 0, 1], [1, 4, 0], [0, 2, 5]], np.int32)  # n_wk [V, K] of a snapshot
TEST_MODEL = gslda(3, alpha=1.5, beta=0.5)  # alpha/K = 0.5 per topic
TEST_CHAIN_TV_BOUND = 0.015  # Monte Carlo TV of 100,000 draws is about 0.002-0.005 (measured)


def _test_corpus(docs, vocabulary):
    lengths = [len(d) for d in docs]
    return Corpus(np.concatenate([np.asarray(d, np.int32) for d in docs]),
                  np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), vocabulary)


def _exact_test_counts(doc, n_wk, alpha_total, beta):
    """Exact distribution of a test document's topic counts given the snapshot's counts, by
    enumeration: Phi-hat = (n_kw + beta) / (n_k + V beta), theta ~ Dir(alpha/K) integrated out."""
    vocab_size, num_topics = n_wk.shape
    phi = (n_wk + beta) / (n_wk.sum(0) + vocab_size * beta)  # [V, K], columns sum to 1
    a = alpha_total / num_topics
    dist = {}
    for z in itertools.product(range(num_topics), repeat=len(doc)):
        counts = tuple(np.bincount(z, minlength=num_topics))
        log_w = sum(np.log(phi[w, k]) for w, k in zip(doc, z))
        log_w += sum(gammaln(n + a) for n in counts)
        dist[counts] = dist.get(counts, 0.0) + np.exp(log_w)
    total = sum(dist.values())
    return {k: v / total for k, v in dist.items()}


def _fit_result(model, vocabulary, n_wk, eta):
    """A FitResult holding only snapshots: n_wk [C, I, V, K], eta [C, I, T, K]."""
    n_wk = np.asarray(n_wk, np.int32)
    snapshots = [Snapshot(10 * (i + 1), {"n_wk": n_wk[:, i], "n_k": n_wk[:, i].sum(1),
                                         "eta": np.asarray(eta[:, i], np.float32)})
                 for i in range(n_wk.shape[1])]
    return FitResult(model, tuple(vocabulary), n_wk.shape[0], 0, 1, 0, task=BINARY,
                     snapshots=snapshots)


def test_test_chain_matches_enumeration():
    """held_out_proportions (hence predict's test chains) samples the exact posterior of the test
    documents' topics given Phi-hat, document by document."""
    vocabulary = ("w0", "w1", "w2")
    result = _fit_result(TEST_MODEL, vocabulary, TEST_COUNTS[None, None],
                         np.zeros((1, 1, 1, 3)))
    zbar = held_out_proportions(result, _test_corpus(TEST_DOCS, vocabulary), num_burnin=10,
                                num_draws=100_000, seed=3)[0, 0]  # [J, D, K]
    for d, doc in enumerate(TEST_DOCS):
        exact = _exact_test_counts(doc, TEST_COUNTS, TEST_MODEL.alpha, TEST_MODEL.beta)
        counts, freq = np.unique(np.rint(zbar[:, d] * len(doc)).astype(int), axis=0,
                                 return_counts=True)
        sampled = {tuple(c): f / len(zbar) for c, f in zip(counts, freq)}
        tv = 0.5 * sum(abs(exact.get(k, 0.0) - sampled.get(k, 0.0)) for k in exact | sampled)
        print(f"test document {d}: TV {tv:.4f}")
        assert tv < TEST_CHAIN_TV_BOUND, (d, tv)


def test_test_chain_draws_the_reference_topics():
    """sample_test_topics against reference.held_out_chain, draw by draw, with the uniforms of
    its seed (NumPy's legacy stream, as numba's)."""
    phi = (TEST_COUNTS + 0.5) / (TEST_COUNTS.sum(0) + 3 * 0.5)
    words = np.concatenate([np.asarray(d) for d in TEST_DOCS])
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in TEST_DOCS])])
    for seed, (burnin, draws, lag) in zip([5, 2**31 + 1], [(3, 6, 2), (0, 4, 1)]):
        fast = sample_test_topics(words, offsets, phi, 0.5, num_burnin=burnin, num_draws=draws,
                                  lag=lag, seed=seed)
        ref = reference.held_out_chain(words, offsets, phi, 0.5, burnin, draws, lag,
                                       np.random.RandomState(seed))
        np.testing.assert_allclose(fast, ref, rtol=1e-6)
        assert len({tuple(np.rint(f * 4).ravel()) for f in fast}) > 1  # the draws do move


# ------------------------------------------------------------------------------ predict's pairing
# Three chains, two snapshots, each (chain, snapshot) with its own eta and its own labelling of
# the topics. Phi-hat puts word "a" in one topic and "b" in the other with probability
# 1 - 1e-10, so the test topics of a document of a's and b's are known: the score of a
# document with a fraction f of a's under weights (eta of a's topic, eta of b's topic) = (u, v)
# is u f + v (1 - f).
BIG = 10**8
A_TOPIC = [[0, 1], [1, 1], [0, 0]]  # [C][I]: the topic of word "a" (b's is the other)
WEIGHTS = [[(2, -1), (3, -2)], [(-1, 4), (0.5, 0.5)], [(1, 1), (-3, 2)]]  # [C][I]: (u, v)
PAIRING_DOCS = [(0, 0, 1), (1,), (0, 1, 1, 1)]  # f = 2/3, 0, 1/4
# by hand, S[c][i] for the three documents
HAND = [[[1, -1, -0.25], [4 / 3, -2, -0.75]],
        [[2 / 3, 4, 2.75], [0.5, 0.5, 0.5]],
        [[1, 1, 1], [-4 / 3, 2, 0.75]]]
HAND_STRATEGIES = {
    "sf": [4 / 3, -2, -0.75],  # chain 0, last snapshot (every test draw agrees)
    "sa": [4 / 3, -2, -0.75],
    "mf": [19 / 36, 4.5 / 6, 4 / 6],  # all six (chain, snapshot) pairs
    "ma": [19 / 36, 4.5 / 6, 4 / 6],
}


def _pairing_fit():
    """Vocabulary (a, b, c): a and b decided as above, c equally likely in both topics."""
    n_wk = np.zeros((3, 2, 3, 2), np.int64)
    eta = np.zeros((3, 2, 1, 2))
    for c, i in itertools.product(range(3), range(2)):
        ka = A_TOPIC[c][i]
        n_wk[c, i, 0, ka] = n_wk[c, i, 1, 1 - ka] = BIG
        n_wk[c, i, 2, :] = BIG // 2
        eta[c, i, 0, ka], eta[c, i, 0, 1 - ka] = WEIGHTS[c][i]
    return _fit_result(gslda(2, alpha=1.0, beta=0.01), ("a", "b", "c"), n_wk, eta)


def test_predict_pairs_each_chain_and_snapshot_with_its_own_eta():
    result = _pairing_fit()
    pred = predict(result, _test_corpus(PAIRING_DOCS, ("a", "b", "c")), num_burnin=3,
                   num_draws=4, lag=2)
    assert pred.scores.shape == (3, 2, 4, 1, 3)
    expected = np.broadcast_to(np.asarray(HAND, np.float32)[:, :, None, None, :],
                               pred.scores.shape)
    np.testing.assert_allclose(pred.scores, expected, rtol=1e-5, atol=1e-6)
    for strategy, values in HAND_STRATEGIES.items():
        np.testing.assert_allclose(pred.score(strategy)[0], values, rtol=1e-5,
                                   err_msg=strategy)


def test_predict_pairs_each_test_draw_with_its_own_proportions():
    """With an ambiguous word the test draws differ; every score is eta of its (chain,
    snapshot) dotted with the proportions of that very test draw."""
    result = _pairing_fit()
    docs = [(2, 2, 2, 0), (2, 1, 2)]
    pred = predict(result, _test_corpus(docs, ("a", "b", "c")), num_burnin=2, num_draws=6,
                   keep_zbar=True)
    eta = np.stack([s.arrays["eta"] for s in result.snapshots], axis=1)  # [C, I, T, K]
    for c, i, j in itertools.product(range(3), range(2), range(6)):
        np.testing.assert_allclose(pred.scores[c, i, j], eta[c, i] @ pred.zbar[c, i, j].T,
                                   rtol=1e-5, atol=1e-6)
        # and those proportions have each token of a in a's topic, of b in b's
        ka = A_TOPIC[c][i]
        assert pred.zbar[c, i, j, 0, ka] >= 0.25 and pred.zbar[c, i, j, 1, 1 - ka] >= 1 / 3
    assert np.ptp(pred.zbar[..., 0, 0]) > 0  # the test draws do differ


def test_proportions_of_snapshots_with_different_numbers_of_topics_are_padded():
    """The sHDP's capacity grows: snapshots of one fit can have different K."""
    from topiczoo.predict import _stack_proportions

    a = np.full((2, 3, 2), 0.5, np.float32)  # [J, D, K=2]
    b = np.full((2, 3, 4), 0.25, np.float32)  # K=4
    out = _stack_proportions([a, b, b, a], 2, 2)
    assert out.shape == (2, 2, 2, 3, 4)
    np.testing.assert_array_equal(out[0, 0, ..., :2], a)
    np.testing.assert_array_equal(out[0, 0, ..., 2:], 0.0)
    np.testing.assert_array_equal(out[0, 1], b)
    np.testing.assert_allclose(out.sum(-1), 1.0)


def test_predictions_give_the_labels_back_as_they_were_given():
    """A user's report: string labels became 0/1 alphabetically and Prediction.labels()
    returned the ints. Class names come back as class names (str), class ids as ints, and
    metrics take either; corpora (and their parts) remember what their ids stand for."""
    texts = ["goal match team", "chip code data"] * 8
    names = np.array(["sport", "tech"] * 8)
    corpus = Corpus.from_texts(texts, list(names))
    assert corpus.label_names == ("sport", "tech") and list(corpus.classes) == ["sport", "tech"]
    train, test = corpus.subset(np.arange(12)), corpus.subset(np.arange(12, 16))
    assert list(test.classes[test.labels]) == list(names[12:])  # the labels as given
    result = fit(gslda(2, c=4), train, num_chains=1, num_iterations=10, num_snapshots=2,
                 progress=False)
    prediction = predict(result, test, num_burnin=2, num_draws=2)
    labels, ids = prediction.labels(), prediction.class_ids()
    assert labels.dtype.kind == "U" and ids.dtype == np.int64
    np.testing.assert_array_equal(labels, test.classes[ids])
    assert prediction.metrics(test.labels) == prediction.metrics(list(names[12:]))
    assert prediction.accuracy(names[12:]) == prediction.accuracy(test.labels)
    with pytest.raises(ValueError, match=r"truth holds 'politics', which is not a class of the "
                                         r"fit \('sport', 'tech'\)"):
        prediction.metrics(["politics"] * 4)
    # unnamed class ids stay ints, in a part of the corpus as well (its names are the ids')
    ids_corpus = Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary, corpus.labels)
    part = ids_corpus.subset(np.arange(12, 16))
    assert part.label_names == ("0", "1") and part.classes.dtype == np.int64
    assert list(part.subset([0, 1]).classes) == [0, 1]
    plain = predict(fit(gslda(2, c=4), ids_corpus.subset(np.arange(12)), num_chains=1,
                        num_iterations=10, num_snapshots=2, progress=False),
                    part, num_burnin=2, num_draws=2)
    assert plain.labels().dtype == np.int64
    named = Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary, corpus.labels,
                   label_names=("football", "computing"))
    assert list(named.classes) == ["football", "computing"]
