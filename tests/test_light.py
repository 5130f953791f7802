"""The light sampler (LightMedLDA): alias tables, the light Z sweep, coordinate-wise eta.

How exactness is shown (``docs/design.md``, "How a kernel is proved exact"):

* alias tables: chi-square tests of many draws against the exact probabilities, including one
  huge weight, many tiny ones and zeros; the chi-square test rejects a slightly wrong table;
* the light Z sweep, with eta, psi, rho FIXED: on the 7-token corpus of
  ``test_enumeration.py`` the exact distribution of Z by enumeration (collapsed LDA times
  prod_d exp(psi omega_d - rho omega_d^2 / 2), written in ``given_eta.py`` independently of
  the sampler; the exact sweep's test in ``test_topics.py`` uses it too) is
  matched by a long run of the package's numba sweep (total variation below ``TV_BOUND``), for
  both ways of combining the proposals, T = 1 and T = 2 tasks, K = 2 and K = 3; and mutants of
  the package's own sweep (its source with one line changed: a proposal term left out of an
  acceptance ratio, or the paper's response table built from the whole document) miss it;
* the design itself, with no Monte Carlo error: exact transition matrices of a Python model of
  the sweep on the same corpus show that the frozen-half response table leaves the target
  invariant to rounding, and that tables built from a past state (LightLDA's and the paper's
  "stale" tables) do not;
* coordinate-wise eta: a long chain's mean and covariance against the Gaussian of
  ``eta_conditional_factor`` (batch-means z-tests), and a mutant that does not update the
  scores fails them.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest
from scipy import stats as scipy_stats

import reference
from given_eta import (ALPHA, BETA, DOC_IDS, DOCS, ETA, LDA_TV_BOUND, NUM_BURNIN, NUM_SAMPLES,
                       OFFSETS, PSI, RHO, TV_BOUND, VOCAB, WORDS, assert_consistent,
                       configuration_index, exact_topic_posterior, exact_z, initial_state,
                       tv_distance)
from mutants import mutant
from topic_state_steps import TopicState, light_topics_step
from topiczoo.kernels import alias as alias_module
from topiczoo.kernels import eta as eta_module
from topiczoo.kernels import light
from topiczoo.kernels import random as random_module
from topiczoo.kernels.alias import alias_sample, alias_table, table_probabilities
from topiczoo.kernels.assignments import word_token_index
from topiczoo.kernels.eta import draw_eta_coordinatewise, eta_conditional_factor
from topiczoo.kernels.host import read_only, seed_from_key
from topiczoo.kernels.light import light_assignments_step

pytestmark = pytest.mark.slow  # statistical: long chains against enumeration, moments


# ---------------------------------------------------------------------------------------------
# Alias tables


def _chi_square_pvalue(draws, p):
    """Chi-square test of draws against probabilities p; outcomes with expected count < 5 are
    pooled into one bin. Asserts that zero-probability outcomes were never drawn."""
    counts = np.bincount(draws, minlength=len(p)).astype(np.float64)
    assert counts[p == 0].sum() == 0, "an outcome of weight 0 was drawn"
    expected = p * len(draws)
    big = expected >= 5
    obs = list(counts[big])
    exp = list(expected[big])
    if (~big & (p > 0)).any():
        obs.append(counts[~big].sum())
        exp.append(expected[~big].sum())
    if len(obs) < 2:
        assert obs[0] == len(draws)
        return 1.0
    return scipy_stats.chisquare(obs, exp).pvalue


def _weights(case, rng):
    if case == "random":
        return rng.gamma(0.5, 1.0, 50)
    if case == "one-huge":
        w = np.ones(400)
        w[123] = 1e12  # the other 399 together have probability 4e-10
        return w
    if case == "one-huge-many-small":
        w = np.ones(100)
        w[7] = 1e3
        return w
    if case == "many-tiny":
        w = np.exp(-rng.uniform(0, 700, 300))  # spans 300 orders of magnitude
        w[:3] = [1.0, 0.5, 0.25]
        return w
    if case == "zeros":
        w = rng.uniform(0, 1, 40)
        w[::3] = 0.0
        return w
    if case == "subnormal":
        return np.array([1e-320, 1.0, 0.0, 3e-310, 2.0])
    if case == "single":
        return np.array([3.5])
    if case == "uniform":
        return np.full(400, 0.25)
    raise ValueError(case)


ALIAS_CASES = ["random", "one-huge", "one-huge-many-small", "many-tiny", "zeros", "subnormal",
               "single", "uniform"]


@pytest.mark.parametrize("case", ALIAS_CASES)
def test_alias_draws_match_the_weights(case):
    rng = np.random.default_rng(ALIAS_CASES.index(case))
    w = _weights(case, rng)
    p = w / w.sum()
    prob, alias = alias_table(w)
    # the probabilities the table draws with equal the weights' up to rounding
    realised = table_probabilities(prob, alias)
    assert abs(realised.sum() - 1.0) < 1e-12
    np.testing.assert_allclose(realised, p, rtol=1e-12, atol=1e-15)
    assert np.all(realised[p == 0] == 0)
    # the build that gathers them on the way gives the same table and probabilities
    prob2, alias2, gathered = np.empty(len(w)), np.empty(len(w), np.int64), np.empty(len(w))
    alias_module.build_alias_with_probabilities(np.asarray(w, np.float64), len(w), prob2,
                                                alias2, gathered)
    np.testing.assert_array_equal(prob2, prob)
    np.testing.assert_array_equal(alias2, alias)
    np.testing.assert_allclose(gathered, realised, rtol=1e-13, atol=1e-300)
    draws = alias_sample(prob, alias, 400_000, seed=11)
    assert draws.min() >= 0 and draws.max() < len(w)
    pvalue = _chi_square_pvalue(draws, p)
    assert pvalue > 1e-4, f"chi-square p-value {pvalue:.2e}"


def test_alias_chi_square_detects_a_wrong_table():
    """The same test rejects draws from a table whose weights are off by 3 % in one entry."""
    rng = np.random.default_rng(0)
    w = rng.gamma(0.5, 1.0, 50)
    wrong = w.copy()
    wrong[np.argmax(w)] *= 1.03
    prob, alias = alias_table(wrong)
    draws = alias_sample(prob, alias, 400_000, seed=11)
    assert _chi_square_pvalue(draws, w / w.sum()) < 1e-6


@pytest.mark.parametrize("bad", [np.zeros(5), np.array([1.0, np.inf]), np.array([np.nan, 1.0])])
def test_alias_rejects_weights_without_a_positive_finite_sum(bad):
    with pytest.raises(ValueError):
        alias_table(bad)


def test_alias_draw_is_a_function_of_the_uniform():
    """u -> outcome: slot floor(u K), then the threshold; u just below 1 stays in range."""
    prob, alias = alias_table(np.array([1.0, 3.0]))  # K = 2: prob = [0.5, 1], alias[0] = 1
    assert alias_module.alias_draw(prob, alias, 2, 0.0) == 0
    assert alias_module.alias_draw(prob, alias, 2, 0.3) == 1  # slot 0, f = 0.6 >= 0.5
    assert alias_module.alias_draw(prob, alias, 2, 0.7) == 1
    assert alias_module.alias_draw(prob, alias, 2, np.nextafter(1.0, 0.0)) == 1


# ---------------------------------------------------------------------------------------------
# The sweep's random numbers and helpers


def _xoshiro_reference(state, count):
    """xoshiro256** as published (Blackman and Vigna), in Python integers."""
    mask = (1 << 64) - 1
    s = list(state)
    out = []

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & mask

    for _ in range(count):
        out.append(rotl((s[1] * 5) & mask, 7) * 9 & mask)
        t = (s[1] << 17) & mask
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
    return out


@numba.njit
def _outputs(state, count):
    out = np.empty(count, np.uint64)
    for i in range(count):
        out[i] = random_module.next64(state)
    return out


def test_generator_is_xoshiro256starstar():
    state = np.array([1, 2, 3, 4], np.uint64)
    expected = _xoshiro_reference([1, 2, 3, 4], 50)
    assert expected[0] == 11520  # rotl(2 * 5, 7) * 9
    assert [int(x) for x in _outputs(state, 50)] == expected
    seeded = np.empty(4, np.uint64)
    random_module.seed_state(12345, seeded)
    assert len(set(int(x) for x in seeded)) == 4
    draws = np.array([random_module.uniform(seeded) for _ in range(100_000)])
    assert draws.min() >= 0 and draws.max() < 1
    assert scipy_stats.kstest(draws, "uniform").pvalue > 1e-4


def test_response_table_weights_are_exp_with_a_floor():
    """The response table's weights are exp(max(xhat - max xhat, _FLOOR)) (xhat = base with no
    task), to rounding, never 0 however low xhat is; the table draws with probabilities
    proportional to them."""
    rng = np.random.default_rng(0)
    num = 1000
    base = rng.uniform(-800, 50, num)
    base[:3] = [50.0, 50.0 - 600.0, -800.0]
    xhat, weights, prob, q = (np.empty(num) for _ in range(4))
    alias, work = np.empty(num, np.int64), np.empty(num, np.int64)
    light._response_table(np.zeros((0, num)), base, np.zeros(0), xhat, weights, prob, alias,
                          work, q)
    exact = np.exp(np.maximum(base - 50.0, light._FLOOR))
    np.testing.assert_allclose(weights, exact, rtol=1e-15)
    assert weights.min() > 1e-300
    np.testing.assert_allclose(q, exact / exact.sum(), rtol=1e-12)


def test_word_token_index():
    words = np.array([2, 0, 2, 1, 2, 0], np.int32)
    offsets, tokens = word_token_index(words, 4)
    assert offsets.tolist() == [0, 2, 3, 6, 6]
    assert tokens.tolist() == [1, 5, 3, 0, 2, 4]


# ---------------------------------------------------------------------------------------------
# The light Z sweep against the exact distribution of Z given eta, psi, rho


def _chain_runner(sweep, alpha, beta):
    """A numba loop of ``num_burnin + num_samples`` calls of ``sweep`` (seed + s for sweep s)
    that counts the configurations of z after each kept sweep."""

    @numba.njit
    def run(z, n_dk, n_wk, n_k, w_off, w_tok, eta, psi, rho, seed, num_steps, cycle, num_burnin,
            num_samples, counts, stats):
        num_topics = n_k.shape[0]
        for s in range(num_burnin + num_samples):
            sweep(z, n_dk, n_wk, n_k, WORDS, OFFSETS, w_off, w_tok, eta, psi, rho, alpha, beta,
                  seed + s, num_steps, cycle, stats)
            if s >= num_burnin:
                counts[configuration_index(z, num_topics)] += 1

    return run


_RUNNERS = {}


def _sampled(num_topics, num_tasks, cycle, seed, sweep=None, num_steps=6, num_samples=None,
             alpha=ALPHA, beta=BETA):
    """Configuration frequencies of a long run of ``sweep`` (default: the package's)."""
    sweep = light._light_sweep if sweep is None else sweep
    if (sweep, alpha, beta) not in _RUNNERS:
        _RUNNERS[sweep, alpha, beta] = _chain_runner(sweep, alpha, beta)
    z, n_dk, n_wk, n_k = initial_state(num_topics, seed)
    w_off, w_tok = word_token_index(WORDS, VOCAB)
    num_samples = num_samples or NUM_SAMPLES[num_topics]
    counts = np.zeros(num_topics ** len(WORDS), np.int64)
    stats = np.zeros((3, 2), np.int64)
    _RUNNERS[sweep, alpha, beta](z, n_dk, n_wk, n_k, w_off, w_tok, ETA[num_topics][:num_tasks],
                    PSI[:num_tasks], RHO[:num_tasks], 1000 * seed, num_steps, cycle, NUM_BURNIN,
                    num_samples, counts, stats)
    assert_consistent((z, n_dk, n_wk, n_k))
    return counts / num_samples, stats


@pytest.mark.parametrize("num_topics", [2, 3])
@pytest.mark.parametrize("num_tasks", [1, 2])
def test_response_moves_the_exact_posterior(num_topics, num_tasks):
    """The test's responses matter: without them Z's exact distribution is far away."""
    with_response = exact_z(num_topics, num_tasks)
    without = exact_z(num_topics, 0)
    assert abs(with_response.sum() - 1) < 1e-12
    assert tv_distance(with_response, without) >= 3 * TV_BOUND[num_topics]


@pytest.mark.parametrize("num_topics", [2, 3])
@pytest.mark.parametrize("num_tasks", [1, 2])
@pytest.mark.parametrize("cycle", [False, True], ids=["mixture", "cycle"])
def test_light_sweep_matches_enumeration(num_topics, num_tasks, cycle):
    exact = exact_z(num_topics, num_tasks)
    freq, stats = _sampled(num_topics, num_tasks, cycle, seed=10 * num_topics + num_tasks)
    tv = tv_distance(exact, freq)
    assert tv < TV_BOUND[num_topics], f"TV {tv:.4f}"
    # every proposal kind was used and both accepted and rejected
    assert np.all(stats[:, 0] > stats[:, 1]) and np.all(stats[:, 1] > 0), stats


def test_light_sweep_matches_enumeration_plain_lda():
    exact = exact_z(3, 0)
    freq, stats = _sampled(3, 0, False, seed=5)
    assert tv_distance(exact, freq) < LDA_TV_BOUND
    assert stats[2, 0] == 0  # no response proposal without tasks


@pytest.mark.parametrize("cycle", [False, True], ids=["mixture", "cycle"])
def test_light_sweep_matches_enumeration_one_step(cycle):
    """One Metropolis-Hastings step per token (where a wrong proposal shows the most)."""
    exact = exact_z(3, 2)
    freq, _ = _sampled(3, 2, cycle, seed=7, num_steps=1)
    tv = tv_distance(exact, freq)
    assert tv < TV_BOUND[3], f"TV {tv:.4f}"


def planted_light_sweep(changes):
    """``kernels.light._light_sweep`` with text replacements applied to its steps, recompiled
    around them: ``changes`` lists (step function's name in ``kernels.light``, old, new)."""
    by_name = {}
    for name, old, new in changes:
        by_name.setdefault(name, []).append((old, new))
    outer = ("_light_document", "_light_sweep")
    overrides = {name: mutant(getattr(light, name), replacements)
                 for name, replacements in by_name.items() if name not in outer}
    document = mutant(light._light_document, by_name.get("_light_document", []), overrides)
    return mutant(light._light_sweep, by_name.get("_light_sweep", []),
                  {**overrides, "_light_document": document})


# Mutants of the package's sweep, (step, old, new). Each must miss the exact distribution.
MUTANTS = {
    # the response proposal's q_R(k) / q_R(k') left out of its acceptance ratio
    "response-without-proposal-term": [
        ("_accept", "ratio = counts * np.exp(diff) * (k_q[kind] / c_q[step, kind])",
         "ratio = counts * np.exp(diff)"),
        ("_accept", "ratio = counts * np.exp(diff + np.log(k_q[kind]) - np.log(c_q[step, kind]))",
         "ratio = counts * np.exp(diff)"),
    ],
    # the document proposal's ratio is the target's alone: (n_dk + alpha) not cancelled
    "document-without-proposal-term": [
        ("_ratio_parts", "c_count[step, DOC] = c_word * c_inv",
         "c_count[step, DOC] = c_doc * c_word * c_inv"),
        ("_ratio_parts", "k_count[DOC] = k_word * k_inv", "k_count[DOC] = k_doc * k_word * k_inv"),
    ],
    # the word proposal's ratio is the target's alone: (n_wk + beta) not cancelled
    "word-without-proposal-term": [
        ("_ratio_parts", "c_count[step, WORD] = c_doc * c_inv",
         "c_count[step, WORD] = c_doc * c_word * c_inv"),
        ("_ratio_parts", "k_count[WORD] = k_doc * k_inv", "k_count[WORD] = k_doc * k_word * k_inv"),
    ],
    # the supervised exponent's quadratic term -c_t eta_tk^2 / 2 left out of base_k (target
    # and response table alike)
    "exponent-without-quadratic-term": [
        ("_begin_document", "sum_quadratic(eta, wk.lin0, wk.half_c, wk.base, num_topics)",
         "sum_quadratic(eta, wk.lin0, 0.0 * wk.half_c, wk.base, num_topics)"),
    ],
}


# Mutants of what the sweep keeps of the token's current topic between its steps: after an
# accepted proposal, the count factors (or q_R) of the topic it left. Invisible with one step
# per token (nothing follows an accept), so these run with the default 6 (measured TV 0.065
# and 0.051 against the bound's 3x, 0.045; one step: 0.012 both).
STALE_MUTANTS = {
    "counts-not-moved-on-accept": [
        ("_accept", "            for a in range(3):\n"
                    "                k_count[a] = c_count[step, a]\n", ""),
    ],
    "q-not-moved-on-accept": [("_accept", "            k_q[RESPONSE] = c_q[step, RESPONSE]\n", "")],
}


@pytest.mark.parametrize("name, num_steps", [(name, 1) for name in MUTANTS]
                         + [(name, 6) for name in STALE_MUTANTS])
def test_enumeration_detects_a_mutant_of_the_sweep(name, num_steps):
    """MUTANTS with one step per token; STALE_MUTANTS with 6, which they need to show."""
    sweep = planted_light_sweep({**MUTANTS, **STALE_MUTANTS}[name])
    exact = exact_z(3, 2)
    freq, _ = _sampled(3, 2, False, seed=7, sweep=sweep, num_steps=num_steps,
                       num_samples=200_000)
    tv = tv_distance(exact, freq)
    assert tv > 3 * TV_BOUND[3], f"mutant {name} went unnoticed (TV {tv:.4f})"


def test_enumeration_detects_a_stale_response_table():
    """The paper's per-document table, built from the whole document (including the tokens it
    then serves), is not exact: one step per token shows it."""
    sweep = planted_light_sweep([
        ("_light_document", "f_lo, f_hi = (mid, end) if phase == 0 else (start, mid)",
         "f_lo, f_hi = start, end"),
    ])
    exact = exact_z(3, 2)
    freq, _ = _sampled(3, 2, False, seed=7, sweep=sweep, num_steps=1, num_samples=200_000)
    tv = tv_distance(exact, freq)
    assert tv > 3 * TV_BOUND[3], f"stale table went unnoticed (TV {tv:.4f})"


# With alpha = beta (as above) a sweep that mixes the two up samples the right posterior; these
# unequal ones tell them apart (a mutation audit found the word proposal's uniform part drawn
# with alpha instead of beta invisible at alpha = beta). One step per token, 200,000 sweeps:
# the package measured TV 0.006, the mutant (in both of its calls) 0.084.
UNEQUAL_ALPHA, UNEQUAL_BETA = 0.1, 1.0
WORD_UNIFORM_WITH_ALPHA = [
    ("_light_sweep", "cycle, num_topics * beta, beta, num_topics, wk.kinds[i],",
     "cycle, num_topics * alpha, alpha, num_topics, wk.kinds[i],"),
    ("_light_document", "num_kinds, cycle, k_beta, beta, num_topics, wk.kinds[r2],",
     "num_kinds, cycle, k_alpha, alpha, num_topics, wk.kinds[r2],"),
]


@pytest.mark.parametrize("planted", [False, True], ids=["package", "word-uniform-with-alpha"])
def test_enumeration_with_unequal_alpha_and_beta(planted):
    eta, psi, rho = ETA[3][:2], PSI[:2], RHO[:2]
    exact = exact_topic_posterior(3, eta, psi, rho, UNEQUAL_ALPHA, UNEQUAL_BETA)
    sweep = planted_light_sweep(WORD_UNIFORM_WITH_ALPHA) if planted else None
    freq, _ = _sampled(3, 2, False, seed=7, sweep=sweep, num_steps=1, num_samples=200_000,
                       alpha=UNEQUAL_ALPHA, beta=UNEQUAL_BETA)
    tv = tv_distance(exact, freq)
    if planted:
        assert tv > 3 * TV_BOUND[3], f"the mutant went unnoticed (TV {tv:.4f})"
    else:
        assert tv < TV_BOUND[3], f"TV {tv:.4f}"


# ---------------------------------------------------------------------------------------------
# The sweep on a larger random corpus, and its JAX wrapper


LENGTHS = [9, 1, 14, 0, 6, 25, 4, 11]  # an empty and a one-token document


def _random_problem(rng, num_topics, num_tasks, vocab=12, hot=False):
    offsets = np.concatenate([[0], np.cumsum(LENGTHS)]).astype(np.int32)
    words = rng.integers(0, vocab, offsets[-1]).astype(np.int32)
    doc_ids = np.repeat(np.arange(len(LENGTHS)), LENGTHS)
    z = rng.integers(0, num_topics, len(words)).astype(np.int32)
    n_dk = np.zeros((len(LENGTHS), num_topics), np.int32)
    n_wk = np.zeros((vocab, num_topics), np.int32)
    np.add.at(n_dk, (doc_ids, z), 1)
    np.add.at(n_wk, (words, z), 1)
    state = [z, n_dk, n_wk, np.bincount(z, minlength=num_topics).astype(np.int32)]
    eta = rng.normal(0.0, 1.5, (num_tasks, num_topics))
    psi = rng.normal(0.0, 1.0, (num_tasks, len(LENGTHS)))
    rho = rng.uniform(0.05, 2.0, (num_tasks, len(LENGTHS)))
    if hot:  # exponents far beyond exp's range: 1e4 and more
        eta[:, 0] = 400.0
        eta[:, 1] = -300.0
        rho[:, 2] = 500.0
        psi[:, 2] = 3e4
    return words, offsets, doc_ids, state, eta, psi, rho


def _assert_consistent(state, words, doc_ids):
    z, n_dk, n_wk, n_k = state
    num_topics = n_k.shape[0]
    assert z.min() >= 0 and z.max() < num_topics
    expected_dk = np.zeros_like(n_dk)
    expected_wk = np.zeros_like(n_wk)
    np.add.at(expected_dk, (doc_ids, z), 1)
    np.add.at(expected_wk, (words, z), 1)
    np.testing.assert_array_equal(n_dk, expected_dk)
    np.testing.assert_array_equal(n_wk, expected_wk)
    np.testing.assert_array_equal(n_k, np.bincount(z, minlength=num_topics))


@pytest.mark.parametrize("num_topics", [3, 40])
@pytest.mark.parametrize("num_tasks", [0, 1, 3])
@pytest.mark.parametrize("hot", [False, True], ids=["mild", "extreme-exponents"])
@pytest.mark.parametrize("cycle", [False, True], ids=["mixture", "cycle"])
def test_sweep_keeps_its_counts(num_topics, num_tasks, hot, cycle):
    rng = np.random.default_rng(num_topics + 10 * num_tasks + 100 * hot + 1000 * cycle)
    words, offsets, doc_ids, state, eta, psi, rho = _random_problem(rng, num_topics, num_tasks,
                                                                    hot=hot and num_tasks > 0)
    # read-only, as the package's steps pass them: the sweep the package compiled
    words, offsets = read_only(words, offsets)
    w_off, w_tok = word_token_index(words, 12)
    before = state[0].copy()
    stats = np.zeros((3, 2), np.int64)
    for seed in range(20):
        light._light_sweep(*state, words, offsets, w_off, w_tok, eta, psi, rho, ALPHA, BETA,
                           seed, 6, cycle, stats)
        _assert_consistent(state, words, doc_ids)
    if not hot:
        assert np.mean(state[0] != before) > 0.3  # the topics moved
    if num_tasks == 0:
        assert stats[2, 0] == 0


def test_sweep_is_deterministic_given_the_seed():
    rng = np.random.default_rng(0)
    words, offsets, _, state, eta, psi, rho = _random_problem(rng, 7, 2)
    words, offsets = read_only(words, offsets)
    w_off, w_tok = word_token_index(words, 12)
    runs = []
    for seed in (5, 5, 6):
        copy = [a.copy() for a in state]
        light._light_sweep(*copy, words, offsets, w_off, w_tok, eta, psi, rho, ALPHA, BETA, seed,
                           6, False, np.zeros((3, 2), np.int64))
        runs.append(copy[0])
    assert np.array_equal(runs[0], runs[1]) and not np.array_equal(runs[0], runs[2])


@pytest.mark.parametrize("num_tasks", [0, 2])
@pytest.mark.parametrize("hot", [False, True], ids=["mild", "extreme-exponents"])
@pytest.mark.parametrize("cycle", [False, True], ids=["mixture", "cycle"])
def test_read_ahead_does_not_change_the_draws(num_tasks, hot, cycle):
    """The sweep reads the next token's proposals and prefetches their counts only when the
    counts are large (``_READ_AHEAD_BYTES``), so the small problems of these tests run without
    it: the sweep compiled with the read-ahead always on draws the same z, counts and
    acceptance counts, sweep after sweep."""
    rng = np.random.default_rng(7 + num_tasks + 10 * hot)
    words, offsets, _, state, eta, psi, rho = _random_problem(rng, 9, num_tasks,
                                                              hot=hot and num_tasks > 0)
    assert state[2].nbytes + state[1].nbytes < light._READ_AHEAD_BYTES
    always = mutant(light._light_sweep, [
        ("read_ahead = n_wk.nbytes + n_dk.nbytes > _READ_AHEAD_BYTES", "read_ahead = True")])
    words, offsets = read_only(words, offsets)
    w_off, w_tok = word_token_index(words, 12)
    runs = []
    for sweep in (light._light_sweep, always):
        copy = [a.copy() for a in state]
        stats = np.zeros((3, 2), np.int64)
        for seed in range(5):
            sweep(*copy, words, offsets, w_off, w_tok, eta, psi, rho, ALPHA, BETA, seed, 6, cycle,
                  stats)
        runs.append((copy, stats))
    for got, want in zip(runs[1][0] + [runs[1][1]], runs[0][0] + [runs[0][1]]):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(runs[0][0][0], state[0])  # the topics moved


def _step(key, topics, words, offsets, eta, psi, rho, index=True, **kw):
    extra = {}
    if index:
        w_off, w_tok = word_token_index(np.asarray(words), topics.n_wk.shape[-2])
        extra = dict(word_offsets=jnp.asarray(w_off), word_tokens=jnp.asarray(w_tok))
    return light_topics_step(key, topics, words, offsets, eta, psi, rho, ALPHA, BETA, **extra,
                             **kw)


@pytest.mark.parametrize("combination", ["mixture", "cycle"])
def test_jax_step_is_the_numba_sweep(combination):
    """Under jit, the step is one sweep of ``_light_sweep`` seeded from the key; the word index
    may be passed or left to the call; the inputs are left intact."""
    rng = np.random.default_rng(1)
    words, offsets, doc_ids, state, eta, psi, rho = _random_problem(rng, 6, 2)
    topics = TopicState(*(jnp.asarray(a) for a in state))
    args = (jnp.asarray(words), jnp.asarray(offsets), jnp.asarray(eta, jnp.float32),
            jnp.asarray(psi, jnp.float32), jnp.asarray(rho, jnp.float32))
    key = jax.random.PRNGKey(42)
    out = jax.jit(lambda k, t: _step(k, t, *args, num_steps=4, combination=combination))(key,
                                                                                         topics)
    out_no_index = jax.jit(lambda k, t: _step(k, t, *args, index=False, num_steps=4,
                                              combination=combination))(key, topics)
    expected = [a.copy() for a in state]
    light._light_sweep(*expected, *read_only(words, offsets), *word_token_index(words, 12),
                       *(np.asarray(a, np.float64) for a in args[2:]), ALPHA, BETA,
                       int(seed_from_key(key)), 4, combination == "cycle",
                       np.zeros((3, 2), np.int64))
    for got, got2, want, before in zip(out, out_no_index, expected, state):
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.asarray(got2), want)
    for x, y in zip(topics, state):
        np.testing.assert_array_equal(np.asarray(x), y)
    _assert_consistent([np.asarray(a) for a in out], words, doc_ids)


def test_jax_step_under_vmap_and_scan():
    """vmap over chains (each chain as its own unbatched call), and a lax.scan of steps."""
    rng = np.random.default_rng(2)
    words, offsets, doc_ids, state, eta, psi, rho = _random_problem(rng, 5, 1)
    args = (jnp.asarray(words), jnp.asarray(offsets), jnp.asarray(eta, jnp.float32),
            jnp.asarray(psi, jnp.float32), jnp.asarray(rho, jnp.float32))
    states = [state, _random_problem(np.random.default_rng(3), 5, 1)[3]]
    batched = TopicState(*(jnp.asarray(np.stack(parts)) for parts in zip(*states)))
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    step = jax.jit(lambda k, t: _step(k, t, *args))
    out = jax.jit(jax.vmap(lambda k, t: _step(k, t, *args)))(keys, batched)
    for chain in range(2):
        single = step(keys[chain], TopicState(*(a[chain] for a in batched)))
        for x, y in zip(out, single):
            np.testing.assert_array_equal(np.asarray(x[chain]), np.asarray(y))
    # shared state, batched keys
    shared = TopicState(*(jnp.asarray(a) for a in state))
    out = jax.jit(jax.vmap(lambda k: _step(k, shared, *args)))(keys)
    np.testing.assert_array_equal(np.asarray(out.z[1]), np.asarray(step(keys[1], shared).z))

    def body(topics, key):
        return _step(key, topics, *args), None

    final, _ = jax.jit(lambda t, ks: jax.lax.scan(body, t, ks))(shared,
                                                               jax.random.split(keys[0], 4))
    _assert_consistent([np.asarray(a) for a in final], words, doc_ids)


def test_assignments_step_is_the_topic_state_step():
    """Counts rebuilt from z on the host: the same z and n_dk as the TopicState step with the
    same key, unbatched and under vmap."""
    rng = np.random.default_rng(5)
    words, offsets, doc_ids, state, eta, psi, rho = _random_problem(rng, 6, 2)
    args = (jnp.asarray(words), jnp.asarray(offsets), jnp.asarray(eta, jnp.float32),
            jnp.asarray(psi, jnp.float32), jnp.asarray(rho, jnp.float32))
    topics = TopicState(*(jnp.asarray(a) for a in state))
    w_off, w_tok = (jnp.asarray(a) for a in word_token_index(words, 12))

    def z_step(key, z, **kw):
        return light_assignments_step(key, z, *args, ALPHA, BETA, num_topics=6, vocab_size=12,
                                      **kw)

    keys = jax.random.split(jax.random.PRNGKey(9), 2)
    for key in keys:
        full = jax.jit(lambda k: _step(k, topics, *args))(key)
        z, n_dk = jax.jit(lambda k: z_step(k, topics.z, word_offsets=w_off,
                                           word_tokens=w_tok))(key)
        np.testing.assert_array_equal(np.asarray(z), np.asarray(full.z))
        np.testing.assert_array_equal(np.asarray(n_dk), np.asarray(full.n_dk))
        # without the index, cycling: the returned n_dk are the counts of the returned z
        z2, n_dk2 = jax.jit(lambda k: z_step(k, topics.z, combination="cycle",
                                             num_steps=2))(key)
        assert np.asarray(z2).min() >= 0 and np.asarray(z2).max() < 6
        np.testing.assert_array_equal(np.asarray(n_dk2),
                                      _counts_of(np.asarray(z2), words, doc_ids, 6)[0])
    batched_z = jnp.stack([topics.z, jnp.asarray(np.roll(state[0], 3))])
    zb, nb = jax.jit(jax.vmap(z_step))(keys, batched_z)
    for chain in range(2):
        z, n_dk = z_step(keys[chain], batched_z[chain])
        np.testing.assert_array_equal(np.asarray(zb[chain]), np.asarray(z))
        np.testing.assert_array_equal(np.asarray(nb[chain]), np.asarray(n_dk))
    assert np.array_equal(np.asarray(nb[0]).sum(1), LENGTHS)


def _counts_of(z, words, doc_ids, num_topics):
    n_dk = np.zeros((len(LENGTHS), num_topics), np.int32)
    n_wk = np.zeros((12, num_topics), np.int32)
    np.add.at(n_dk, (doc_ids, z), 1)
    np.add.at(n_wk, (words, z), 1)
    return n_dk, n_wk, np.bincount(z, minlength=num_topics).astype(np.int32)


def test_jax_step_plain_lda_and_bad_arguments():
    rng = np.random.default_rng(4)
    words, offsets, doc_ids, state, *_ = _random_problem(rng, 4, 0)
    empty = jnp.zeros((0, 4), jnp.float32), jnp.zeros((0, len(LENGTHS)), jnp.float32)
    topics = TopicState(*(jnp.asarray(a) for a in state))
    out = _step(jax.random.PRNGKey(0), topics, jnp.asarray(words), jnp.asarray(offsets),
                empty[0], empty[1], empty[1])
    _assert_consistent([np.asarray(a) for a in out], words, doc_ids)
    call = (jax.random.PRNGKey(0), topics, jnp.asarray(words), jnp.asarray(offsets), empty[0],
            empty[1], empty[1], ALPHA, BETA)
    with pytest.raises(ValueError, match="combination"):
        light_topics_step(*call, combination="random")
    with pytest.raises(ValueError, match="num_steps"):
        light_topics_step(*call, num_steps=0)
    with pytest.raises(ValueError, match="both"):
        light_topics_step(*call, word_offsets=jnp.zeros(13, jnp.int32))


# ---------------------------------------------------------------------------------------------
# The design, without Monte Carlo error: exact transition matrices of a Python model of one
# sweep (K = 2, T = 1, the corpus above: 128 states). Each token makes ``steps`` steps of a
# random mixture of the document, word and response proposals; the stationary distribution of
# the sweep is compared with the exact posterior.


class _SweepModel:
    def __init__(self, eta, psi, rho, num_topics=2):
        self.k = num_topics
        self.eta, self.psi, self.rho = eta, psi, rho
        self.states = list(itertools.product(range(num_topics), repeat=len(WORDS)))
        self.index = {s: n for n, s in enumerate(self.states)}
        self.bounds = [(OFFSETS[d], OFFSETS[d + 1]) for d in range(len(DOCS))]

    def _log_factor(self, d, others_score, k):
        """log of the supervised factor of a token of d in topic k (others' score given)."""
        n = self.bounds[d][1] - self.bounds[d][0]
        omega = (self.eta[:, k] + others_score) / n
        return float(np.sum(self.psi[:, d] * omega - 0.5 * self.rho[:, d] * omega**2))

    def _counts(self, z, skip):
        n_dk = np.zeros((len(DOCS), self.k))
        n_wk = np.zeros((VOCAB, self.k))
        for i, k in enumerate(z):
            if i != skip:
                n_dk[DOC_IDS[i], k] += 1
                n_wk[WORDS[i], k] += 1
        return n_dk, n_wk, n_wk.sum(0)

    def target(self, z, i):
        n_dk, n_wk, n_k = self._counts(z, i)
        d, w = DOC_IDS[i], WORDS[i]
        lo, hi = self.bounds[d]
        others = sum((self.eta[:, z[m]] for m in range(lo, hi) if m != i), np.zeros(len(self.eta)))
        return np.array([(n_dk[d, k] + ALPHA) * (n_wk[w, k] + BETA) / (n_k[k] + VOCAB * BETA)
                         * np.exp(self._log_factor(d, others, k)) for k in range(self.k)])

    def document(self, z, i):
        n_dk, _, _ = self._counts(z, i)
        q = n_dk[DOC_IDS[i]] + ALPHA
        return q / q.sum()

    def word(self, z, i):
        _, n_wk, _ = self._counts(z, i)
        q = n_wk[WORDS[i]] + BETA
        return q / q.sum()

    def response_from(self, z, i, frozen):
        """q_R of token i from the topics of the tokens ``frozen`` (the package's estimate)."""
        d = DOC_IDS[i]
        lo, hi = self.bounds[d]
        score = sum((self.eta[:, z[m]] for m in frozen), np.zeros(len(self.eta)))
        estimate = score * (hi - lo - 1) / len(frozen) if len(frozen) else score
        q = np.exp([self._log_factor(d, estimate, k) for k in range(self.k)])
        return q / q.sum()

    def frozen_half(self, i):
        lo, hi = self.bounds[DOC_IDS[i]]
        mid = lo + (hi - lo + 1) // 2
        return range(mid, hi) if i < mid else range(lo, mid)

    def token_kernel(self, pi, proposals, steps):
        """K x K: ``steps`` steps of the equal mixture of independence MH kernels."""
        kernel = np.zeros((self.k, self.k))
        for q in proposals:
            for k in range(self.k):
                for k2 in range(self.k):
                    if k2 != k:
                        kernel[k, k2] += q[k2] * min(1.0, pi[k2] * q[k] / (pi[k] * q[k2]))
        kernel /= len(proposals)
        kernel[np.diag_indices(self.k)] = 1.0 - kernel.sum(1)
        return np.linalg.matrix_power(kernel, steps)

    def sweep_matrix(self, proposals, steps):
        """proposals(z0, z, i) -> list of proposal vectors for token i in state z when the sweep
        started in z0. Returns the sweep's transition matrix over configurations."""
        size = len(self.states)
        matrix = np.zeros((size, size))
        for start in self.states:
            dist = {start: 1.0}
            for i in range(len(WORDS)):
                new = {}
                for z, p in dist.items():
                    kernel = self.token_kernel(self.target(z, i), proposals(start, z, i), steps)
                    for k2 in range(self.k):
                        if kernel[z[i], k2] > 0:
                            moved = z[:i] + (k2,) + z[i + 1:]
                            new[moved] = new.get(moved, 0.0) + p * kernel[z[i], k2]
                dist = new
            for z, p in dist.items():
                matrix[self.index[start], self.index[z]] = p
        return matrix

    def stationarytv_distance(self, proposals, steps):
        matrix = self.sweep_matrix(proposals, steps)
        assert np.allclose(matrix.sum(1), 1.0)
        values, vectors = np.linalg.eig(matrix.T)
        v = np.real(vectors[:, np.argmin(np.abs(values - 1.0))])
        v /= v.sum()
        exact = exact_topic_posterior(self.k, self.eta, self.psi, self.rho)
        order = [int(np.sum(np.asarray(s) * self.k ** np.arange(len(s)))) for s in self.states]
        return tv_distance(v, exact[order])


def _design(model, kind):
    """The proposals of a design: the package's, or one with a table from a past state."""
    if kind == "package":  # tables from the frozen half's current topics
        return lambda z0, z, i: [model.document(z, i), model.word(z, i),
                                 model.response_from(z, i, model.frozen_half(i))]
    if kind == "stale-response":  # the paper: a table per document from its start, reused
        def proposals(z0, z, i):
            lo, hi = model.bounds[DOC_IDS[i]]
            at_start = z0[:lo] + z[lo:]  # the document's topics before its first token moved
            return [model.document(z, i), model.word(z, i),
                    model.response_from(at_start, i, range(lo, hi))]
        return proposals
    if kind == "stale-word":  # LightLDA: word proposal from the counts at the sweep's start
        def proposals(z0, z, i):
            _, n_wk, n_k = model._counts(z0, None)
            q = (n_wk[WORDS[i]] + BETA) / (n_k + VOCAB * BETA)
            return [model.document(z, i), q / q.sum(),
                    model.response_from(z, i, model.frozen_half(i))]
        return proposals
    raise ValueError(kind)


# Measured TVs (stationary vs exact): package 1.3e-15 (1 step), 2.6e-16 (6 steps); stale response
# table 0.112 (1 step), 7.7e-3 (6 steps); stale word table 0.038 (1 step), 8.2e-4 (6 steps).
@pytest.mark.parametrize("kind, steps, bound", [
    ("package", 1, None), ("package", 6, None),
    ("stale-response", 6, 3e-3), ("stale-word", 1, 1e-2),
])
def test_exact_transition_matrix_of_the_design(kind, steps, bound):
    model = _SweepModel(ETA[2][:1], PSI[:1], RHO[:1])
    tv = model.stationarytv_distance(_design(model, kind), steps)
    if bound is None:
        assert tv < 1e-12, f"{kind}: TV {tv:.2e}"
    else:
        assert tv > bound, f"{kind}: TV {tv:.2e}"


# ---------------------------------------------------------------------------------------------
# Coordinate-wise Gibbs for eta


def _eta_problem():
    """A fixed Gaussian conditional for eta: 2 tasks, K = 4 strongly correlated coordinates,
    zbar read off a corpus of 30 documents of 2-9 tokens (topics from per-document Dirichlet(5)
    proportions). Task 0's data dominate its precision (the prior 1 / nu2 is 2-3% of it); task
    1's rho is ten times smaller, so the prior is 20-22% of its precision. Returns (z,
    doc_offsets, zbar float32 [D, K], psi, rho float32 [2, D], nu2)."""
    rng = np.random.default_rng(0)
    num_docs, num_topics = 30, 4
    lengths = rng.integers(2, 10, num_docs)
    z = np.concatenate([rng.choice(num_topics, n, p=rng.dirichlet(np.full(num_topics, 5.0)))
                        for n in lengths]).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    zbar = np.zeros((num_docs, num_topics), np.float32)
    np.add.at(zbar, (np.repeat(np.arange(num_docs), lengths), z), 1.0)
    zbar /= lengths[:, None]
    psi = jnp.asarray(rng.normal(0.0, 2.0, (2, num_docs)), jnp.float32)
    rho = rng.uniform(1.0, 5.0, (2, num_docs))
    rho[1] *= 0.1  # task 1: the prior is a fifth of the precision
    rho = jnp.asarray(rho, jnp.float32)
    return jnp.asarray(z), jnp.asarray(offsets), jnp.asarray(zbar), psi, rho, 4.0


def _eta_exact(zbar, psi, rho, nu2):
    """Mean [T, K] and covariance [T, K, K] of eta's conditional, in float64 from the same
    inputs; checked against ``eta_conditional_factor``."""
    z = np.asarray(zbar, np.float64)
    means, covs = [], []
    for t in range(psi.shape[0]):
        p, r = np.asarray(psi[t], np.float64), np.asarray(rho[t], np.float64)
        precision = np.eye(z.shape[1]) / nu2 + (z * r[:, None]).T @ z
        cov = np.linalg.inv(precision)
        means.append(cov @ (z.T @ p))
        covs.append(cov)
        factor, mean = eta_conditional_factor(zbar, psi[t], rho[t], nu2)
        np.testing.assert_allclose(np.asarray(mean), means[-1], rtol=1e-4, atol=1e-5)
        factor = np.asarray(factor, np.float64)
        np.testing.assert_allclose(factor.T @ factor, precision, rtol=1e-4, atol=1e-4)
    return np.array(means), np.array(covs)


def _eta_chain(num_draws, seed=0, num_sweeps=1):
    """``num_draws`` passes of :func:`draw_eta_coordinatewise` from eta = 0 (float64 [n, T, K])."""
    z, offsets, zbar, psi, rho, nu2 = _eta_problem()

    @jax.jit
    def run(key):
        def body(eta, k):
            eta = draw_eta_coordinatewise(k, eta, z, offsets, psi, rho, nu2, num_sweeps)
            return eta, eta

        start = jnp.zeros((psi.shape[0], zbar.shape[1]), jnp.float32)
        return jax.lax.scan(body, start, jax.random.split(key, num_draws))[1]

    return np.asarray(run(jax.random.PRNGKey(seed)), np.float64)


def _moment_z_scores(draws, mean, cov, num_batches=100):
    """Batch-means z-scores of the chain's mean and covariance entries [T, K(K+3)/2]."""
    draws = draws[len(draws) // 10:]  # burn-in
    draws = draws[: len(draws) // num_batches * num_batches]
    centred = draws - mean
    num_topics = mean.shape[-1]
    upper = np.triu_indices(num_topics)
    stats = [centred,  # mean
             (centred[..., :, None] * centred[..., None, :])[..., upper[0], upper[1]]
             - cov[:, upper[0], upper[1]]]  # covariance
    scores = []
    for s in stats:
        batches = s.reshape(num_batches, -1, *s.shape[1:]).mean(1)
        scores.append(batches.mean(0) / (batches.std(0, ddof=1) / np.sqrt(num_batches)))
    return np.concatenate(scores, axis=-1)


NUM_ETA_DRAWS = 20_000  # batches of 180 passes after burn-in; the mutants miss by z > 100


def test_coordinatewise_eta_has_the_conditional_as_stationary_distribution():
    _, _, zbar, psi, rho, nu2 = _eta_problem()
    mean, cov = _eta_exact(zbar, psi, rho, nu2)
    corr = cov[0] / np.sqrt(np.outer(np.diag(cov[0]), np.diag(cov[0])))
    assert np.abs(corr[np.triu_indices(4, 1)]).max() > 0.45  # the coordinates are coupled
    draws = _eta_chain(NUM_ETA_DRAWS)
    scores = _moment_z_scores(draws, mean, cov)
    # 2 x 14 statistics; under the null each is about N(0, 1) (measured max |z|: 2.2)
    assert np.abs(scores).max() < 4.5, np.round(scores, 2)


ETA_MUTANTS = {
    # each coordinate drawn from the scores of the start of the pass (omega not updated): here
    # the chain diverges (|eta| ~ 4e22 after 200 passes)
    "omega-not-updated": [("omega[d, t] += delta[t] * v", "pass")],
    # the coordinate's own contribution not removed from the score (measured max |z| ~ 620)
    "own-term-kept": [
        ("mean = (linear[t] - gradient[t] + old * (precision[t] - prior)) / precision[t]",
         "mean = (linear[t] - gradient[t]) / precision[t]"),
    ],
    # the prior 1 / nu2 left out of the precision (measured max |z| 10.6 on task 0, 192 on task
    # 1, whose prior is a fifth of its precision)
    "prior-dropped": [("prior = 1.0 / nu2", "prior = 0.0")],
}


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # a diverging mutant
@pytest.mark.parametrize("name", list(ETA_MUTANTS))
def test_coordinatewise_eta_mutants_fail(monkeypatch, name):
    _, _, zbar, psi, rho, nu2 = _eta_problem()
    mean, cov = _eta_exact(zbar, psi, rho, nu2)
    monkeypatch.setattr(eta_module, "_eta_coordinatewise",
                        mutant(eta_module._eta_coordinatewise, ETA_MUTANTS[name]))
    draws = _eta_chain(NUM_ETA_DRAWS)
    scores = _moment_z_scores(draws, mean, cov)
    assert not np.all(np.isfinite(scores)) or np.abs(scores).max() > 10, np.round(scores, 2)


def test_coordinatewise_eta_several_sweeps_and_chains():
    z, offsets, zbar, psi, rho, nu2 = _eta_problem()
    mean, cov = _eta_exact(zbar, psi, rho, nu2)
    draws = _eta_chain(10_000, seed=1, num_sweeps=3)
    assert np.abs(_moment_z_scores(draws, mean, cov, num_batches=50)).max() < 4.5
    # vmapped over chains (numpyro's vectorized chains): chain c equals the unbatched call
    keys = jax.random.split(jax.random.PRNGKey(3), 3)
    etas = jnp.asarray(np.random.default_rng(0).normal(size=(3, 2, 4)), jnp.float32)
    batched = jax.jit(jax.vmap(lambda k, e: draw_eta_coordinatewise(k, e, z, offsets, psi, rho,
                                                                    nu2, 2)))(keys, etas)
    for c in range(3):
        single = draw_eta_coordinatewise(keys[c], etas[c], z, offsets, psi, rho, nu2, 2)
        np.testing.assert_allclose(np.asarray(batched[c]), np.asarray(single), rtol=1e-5,
                                   atol=1e-5)
    assert batched.shape == (3, 2, 4) and batched.dtype == jnp.float32


def test_coordinatewise_eta_is_float64_precise_when_rho_spans_many_orders():
    """One host pass against the same pass in dense float64 numpy with the same normals (the
    host's numba generator is numpy's legacy MT19937), on a problem like a hinge augmentation
    near the margin (rho from 1e-3 to 1e6, psi up to 1e7): the float32 pass it replaced was
    off by up to 0.065 conditional sd on 20news states, and the same pass in float32 numpy
    misses here by 1.8e-3; this one must agree to 1e-6 (measured 5e-12)."""
    rng = np.random.default_rng(3)
    num_docs, num_topics, num_tasks, nu2 = 200, 12, 3, 1.0
    lengths = rng.integers(1, 40, num_docs)
    z = np.concatenate([rng.choice(num_topics, n, p=rng.dirichlet(np.full(num_topics, 0.3)))
                        for n in lengths]).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    zbar = np.zeros((num_docs, num_topics))
    np.add.at(zbar, (np.repeat(np.arange(num_docs), lengths), z), 1.0)
    zbar /= lengths[:, None]
    rho = 10.0 ** rng.uniform(-3, 6, (num_tasks, num_docs))
    psi = rho * rng.normal(0.0, 5.0, (num_tasks, num_docs))  # psi / rho: the pseudo-targets
    start = rng.normal(0.0, 3.0, (num_tasks, num_topics))
    seed = 12345
    got = eta_module.eta_coordinatewise_host(start, z, offsets, psi, rho, nu2, seed)
    normals = np.random.RandomState(seed).standard_normal((num_topics, num_tasks))
    eta, precision = reference.coordinatewise_eta_pass(start, zbar, psi, rho, nu2, normals)
    error = np.abs(got - eta) * np.sqrt(precision)
    assert error.max() < 1e-6, error.max()
