"""The collapsed sweeps against an independent reference and against the exact distribution of Z
given fixed responses, and the lookup-table log-likelihood against direct forms.

``_collapsed_sweep`` evaluates the supervised factor from per-document exp tables and falls back
to log space for documents whose exponents could leave the safe range. It must draw exactly the
topics of ``reference.collapsed_sweep`` (plain Python, every conditional recomputed from the
assignments alone, nothing shared with the package) given the same uniform per token: numba's
``np.random.seed(s); np.random.random()`` is NumPy's legacy stream, so the reference is handed
``RandomState(s).random_sample(N)``. The two differ only by floating rounding, far too little to
change a draw here.
"""

from __future__ import annotations

import inspect
import math
import re

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest
from jax.scipy.special import gammaln
from scipy.special import gammaln as gammaln64

import given_eta
import reference
from mutants import module_with, mutant
from topic_state_steps import (TopicState, collapsed_log_likelihood, collapsed_sweep_reference,
                               collapsed_topics_step)
from topiczoo.kernels import categorical
from topiczoo.kernels import response_table as rt
from topiczoo.kernels import topics as tk
from topiczoo.kernels.host import read_only

ALPHA = 0.5
BETA = 0.1
VOCAB = 12


def _corpus(rng, lengths):
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    words = rng.integers(0, VOCAB, offsets[-1]).astype(np.int32)
    return words, offsets


def _counts(z, words, offsets, num_topics):
    doc_ids = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    n_dk = np.zeros((len(offsets) - 1, num_topics), np.int32)
    n_wk = np.zeros((VOCAB, num_topics), np.int32)
    np.add.at(n_dk, (doc_ids, z), 1)
    np.add.at(n_wk, (words, z), 1)
    return [n_dk, n_wk, np.bincount(z, minlength=num_topics).astype(np.int32)]


def _state(rng, words, offsets, num_topics):
    z = rng.integers(0, num_topics, words.shape[0]).astype(np.int32)
    return [z, *_counts(z, words, offsets, num_topics)]


def _responses(rng, num_tasks, num_topics, num_docs, hot_doc=None):
    """eta, psi, rho like a logistic response's; ``hot_doc`` gets exponents beyond the bound."""
    eta = rng.normal(0.0, 1.5, (num_tasks, num_topics))
    psi = rng.normal(0.0, 1.0, (num_tasks, num_docs))
    rho = rng.uniform(0.05, 2.0, (num_tasks, num_docs))
    if hot_doc is not None:
        eta[:, 0] = 40.0  # with rho: c_t h_t^2 alone is about 1e3 in the hot document
        rho[:, hot_doc] = 500.0
        psi[:, hot_doc] = 300.0
    return eta, psi, rho


def _sweeps(sweep, state, words, offsets, eta, psi, rho, seeds, *table):
    """Run one sweep per seed from a copy of ``state``; the states after each and the returns.
    ``table``: the sweep's arguments after the seed. The words and offsets go in read-only, as
    the package's steps give them (the sweep the package compiled)."""
    state = [a.copy() for a in state]
    words, offsets = read_only(words, offsets)
    history, returns = [], []
    for seed in seeds:
        returns.append(sweep(*state, words, offsets, eta, psi, rho, ALPHA, BETA, seed, *table))
        history.append([a.copy() for a in state])
    return history, returns


def _reference_sweeps(state, words, offsets, eta, psi, rho, seeds):
    """The reference's sweeps from ``state``, one per seed, with the uniforms the fast sweep
    draws from that seed; the states after each, as [z, n_dk, n_wk, n_k]."""
    z = state[0]
    num_topics = state[3].shape[0]
    history = []
    for seed in seeds:
        uniforms = np.random.RandomState(seed).random_sample(len(z))
        z = reference.collapsed_sweep(z, words, offsets, eta, psi, rho, ALPHA, BETA, VOCAB,
                                      num_topics, uniforms)
        history.append([z, *reference.counts(z, words, offsets, VOCAB, num_topics)])
    return history


def _assert_same(history_a, history_b):
    for sweep, (a, b) in enumerate(zip(history_a, history_b)):
        for name, x, y in zip(("z", "n_dk", "n_wk", "n_k"), a, b):
            np.testing.assert_array_equal(x, y, err_msg=f"{name} after sweep {sweep + 1}")


def _check_counts(state, words, offsets):
    z, *counts = state
    for name, x, y in zip(("n_dk", "n_wk", "n_k"), counts,
                          _counts(z, words, offsets, counts[0].shape[1])):
        np.testing.assert_array_equal(x, y, err_msg=name)


SEEDS = [3, 11, 12345, 7, 2**31 + 5]
LENGTHS = [9, 1, 14, 0, 6, 25, 4, 11]  # includes an empty and a one-token document
HOT_DOC = 2


@pytest.mark.parametrize("num_topics", [3, 20])
@pytest.mark.parametrize("num_tasks", [1, 3])
@pytest.mark.parametrize("hot", [False, True], ids=["all-tables", "with-log-space-doc"])
def test_table_sweep_draws_the_reference_topics(num_topics, num_tasks, hot):
    rng = np.random.default_rng(100 * num_topics + 10 * num_tasks + hot)
    words, offsets = _corpus(rng, LENGTHS)
    state = _state(rng, words, offsets, num_topics)
    eta, psi, rho = _responses(rng, num_tasks, num_topics, len(LENGTHS),
                               HOT_DOC if hot else None)
    ref = _reference_sweeps(state, words, offsets, eta, psi, rho, SEEDS)
    new, log_space = _sweeps(tk._collapsed_sweep, state, words, offsets, eta, psi, rho, SEEDS,
                             *tk.TABLE_ARGUMENTS)
    _assert_same(ref, new)
    _check_counts(new[-1], words, offsets)
    if hot:  # the hot document (and only a part of the corpus) went to log space every sweep
        assert all(LENGTHS[HOT_DOC] <= n < sum(LENGTHS) for n in log_space), log_space
    else:
        assert log_space == [0] * len(SEEDS)
    # the table form really ran: the moves changed many topics
    assert np.mean(new[-1][0] != state[0]) > 0.3


@pytest.mark.parametrize("num_topics", [3, 20])
def test_forced_log_space_and_forced_tables(num_topics):
    rng = np.random.default_rng(num_topics)
    words, offsets = _corpus(rng, LENGTHS)
    state = _state(rng, words, offsets, num_topics)
    eta, psi, rho = _responses(rng, 2, num_topics, len(LENGTHS))
    ref = _reference_sweeps(state, words, offsets, eta, psi, rho, SEEDS)
    forced, log_space = _sweeps(tk._collapsed_sweep, state, words, offsets, eta, psi, rho, SEEDS,
                                -1.0, tk._TABLE_ENTRIES)
    _assert_same(ref, forced)
    assert log_space == [sum(LENGTHS)] * len(SEEDS)
    tables, log_space = _sweeps(tk._collapsed_sweep, state, words, offsets, eta, psi, rho,
                                SEEDS, np.inf, tk._TABLE_ENTRIES)
    _assert_same(ref, tables)
    assert log_space == [0] * len(SEEDS)
    # the package's own per-token log-space sweep draws them too
    package_reference, _ = _sweeps(collapsed_sweep_reference, state, words, offsets, eta, psi,
                                   rho, SEEDS)
    _assert_same(ref, package_reference)


@pytest.mark.parametrize("num_topics", [3, 20])
def test_plain_lda_sweep(num_topics):
    rng = np.random.default_rng(7 + num_topics)
    words, offsets = _corpus(rng, LENGTHS)
    state = _state(rng, words, offsets, num_topics)
    empty = np.zeros((0, num_topics)), np.zeros((0, len(LENGTHS))), np.zeros((0, len(LENGTHS)))
    ref = _reference_sweeps(state, words, offsets, *empty, SEEDS)
    new, log_space = _sweeps(tk._collapsed_sweep, state, words, offsets, *empty, SEEDS,
                             *tk.TABLE_ARGUMENTS)
    _assert_same(ref, new)
    assert log_space == [0] * len(SEEDS)


def test_full_table_falls_back_to_log_space():
    """A document meeting more topics than the table holds finishes in log space: a table of
    two rows, so that every document meeting a third topic switches mid-way."""
    num_topics = 6
    rng = np.random.default_rng(5)
    words, offsets = _corpus(rng, LENGTHS)
    state = _state(rng, words, offsets, num_topics)
    eta, psi, rho = _responses(rng, 2, num_topics, len(LENGTHS))
    seeds = SEEDS[:3]
    ref = _reference_sweeps(state, words, offsets, eta, psi, rho, seeds)
    new, log_space = _sweeps(tk._collapsed_sweep, state, words, offsets, eta, psi, rho, seeds,
                             rt.MAX_EXPONENT, 2 * num_topics)
    _assert_same(ref, new)
    assert all(0 < n < sum(LENGTHS) for n in log_space), log_space


def _two_chains(seed, num_tasks, num_topics=4):
    """A corpus of LENGTHS, float32 eta, psi, rho of ``num_tasks`` tasks and two random
    states (z and counts) for chains of ``num_topics`` topics."""
    rng = np.random.default_rng(seed)
    words, offsets = _corpus(rng, LENGTHS)
    eta, psi, rho = (jnp.asarray(a, jnp.float32)
                     for a in _responses(rng, num_tasks, num_topics, len(LENGTHS)))
    return words, offsets, eta, psi, rho, [_state(rng, words, offsets, num_topics)
                                           for _ in range(2)]


def test_callback_chains_match_single_sweeps():
    """Under vmap each chain is swept like an unbatched call, and the inputs are left intact."""
    words, offsets, eta, psi, rho, states = _two_chains(9, 1)
    batched = TopicState(*(jnp.asarray(np.stack(parts)) for parts in zip(*states)))
    before = [np.array(a) for a in batched]
    keys = jax.random.split(jax.random.PRNGKey(0), 2)

    def step(key, topics, eta):
        return collapsed_topics_step(key, topics, jnp.asarray(words), jnp.asarray(offsets), eta,
                                     psi, rho, ALPHA, BETA)

    out = jax.jit(jax.vmap(step, in_axes=(0, 0, None)))(keys, batched, eta)
    for chain in range(2):
        single = jax.jit(step)(keys[chain], TopicState(*(a[chain] for a in batched)), eta)
        for x, y in zip(out, single):
            np.testing.assert_array_equal(np.asarray(x[chain]), np.asarray(y))
        _check_counts([np.asarray(a[chain]) for a in out], words, offsets)
    for x, y in zip(batched, before):
        np.testing.assert_array_equal(np.asarray(x), y)
    # an unbatched state with batched keys: each chain starts from the same state
    shared = TopicState(*(a[0] for a in batched))
    out = jax.jit(jax.vmap(step, in_axes=(0, None, None)))(keys, shared, eta)
    single = jax.jit(step)(keys[1], shared, eta)
    np.testing.assert_array_equal(np.asarray(out.z[1]), np.asarray(single.z))


def test_assignments_step_is_the_topic_state_step():
    """The exact sampler's step (``kernels.assignments.collapsed_assignments_step``: z alone
    in, the counts rebuilt on the host) draws the z and n_dk of the TopicState step with the
    same key, unbatched and under vmap, and its log-likelihood is that of the new z."""
    from topiczoo.kernels.assignments import collapsed_assignments_step

    num_topics = 4
    words, offsets, eta, psi, rho, states = _two_chains(11, 2, num_topics)
    data = (jnp.asarray(words), jnp.asarray(offsets), eta, psi, rho, ALPHA, BETA)

    def z_step(key, z):
        return collapsed_assignments_step(key, z, *data, num_topics=num_topics,
                                          vocab_size=VOCAB, log_likelihood=True)

    keys = jax.random.split(jax.random.PRNGKey(4), 2)
    zs = jnp.asarray(np.stack([s[0] for s in states]))
    batched = jax.jit(jax.vmap(z_step))(keys, zs)
    for chain, state in enumerate(states):
        full = jax.jit(lambda k, t: collapsed_topics_step(k, t, *data))(
            keys[chain], TopicState(*(jnp.asarray(a) for a in state)))
        z, n_dk, log_lik = jax.jit(z_step)(keys[chain], zs[chain])
        np.testing.assert_array_equal(np.asarray(z), np.asarray(full.z))
        np.testing.assert_array_equal(np.asarray(n_dk), np.asarray(full.n_dk))
        assert float(log_lik) == pytest.approx(float(collapsed_log_likelihood(full, BETA)),
                                               rel=1e-6)
        for x, y in zip(batched, (z, n_dk, log_lik)):
            np.testing.assert_array_equal(np.asarray(x[chain]), np.asarray(y))
    assert not np.array_equal(np.asarray(batched[0][0]), np.asarray(zs[0]))  # it did sweep
    # without the log-likelihood: (z, n_dk) only
    assert len(collapsed_assignments_step(keys[0], zs[0], *data, num_topics=num_topics,
                                          vocab_size=VOCAB)) == 2


# ---------------------------------------------------------------------------------------------
# The exact sweep against the exact distribution of Z given eta, psi, rho
#
# The enumeration tests of the full kernel (test_enumeration.py) integrate eta out, and a Z step
# with a wrong supervised factor followed by the exact eta draw can stay within their bound (the
# Gaussian-form exponent without its quadratic term did: TV 0.024 against 0.03). Here eta, psi
# and rho are held fixed, as in the light sweep's tests, so the Z sweep alone must sample
# ``given_eta.exact_topic_posterior``; both forms of the supervised factor (the per-document exp
# tables and the per-token log space) are run, and mutants of each must miss. Measured: the
# package's TV 0.0022-0.0023 (K = 2) and 0.0038-0.0064 (K = 3), both forms alike (they draw the
# same topics); with 200,000 sweeps (K = 3, T = 2) the package 0.0088, the mutants 0.19-0.40.


def _exact_runner(sweep):
    """A numba loop of ``num_burnin + num_samples`` calls of the exact sweep ``sweep`` (seed
    + s for sweep s) counting the configurations of z after each kept sweep; returns the number
    of tokens swept in log space."""

    @numba.njit
    def run(z, n_dk, n_wk, n_k, eta, psi, rho, seed, max_exponent, num_burnin, num_samples,
            counts):
        num_topics = n_k.shape[0]
        log_space = 0
        for s in range(num_burnin + num_samples):
            log_space += sweep(z, n_dk, n_wk, n_k, given_eta.WORDS, given_eta.OFFSETS, eta, psi,
                               rho, given_eta.ALPHA, given_eta.BETA, seed + s, max_exponent,
                               tk._TABLE_ENTRIES)
            if s >= num_burnin:
                counts[given_eta.configuration_index(z, num_topics)] += 1
        return log_space

    return run


_EXACT_RUNNERS = {}
# max_exponent of each form: every document in tables, or every token in log space
FORMS = {"tables": np.inf, "log-space": -1.0}


def _exact_sweep_frequencies(num_topics, num_tasks, form, seed, sweep=None, num_samples=None):
    """Configuration frequencies of a long run of the exact sweep (default: the package's)."""
    sweep = tk._collapsed_sweep if sweep is None else sweep
    if sweep not in _EXACT_RUNNERS:
        _EXACT_RUNNERS[sweep] = _exact_runner(sweep)
    state = given_eta.initial_state(num_topics, seed)
    num_samples = num_samples or given_eta.NUM_SAMPLES[num_topics]
    counts = np.zeros(num_topics ** len(given_eta.WORDS), np.int64)
    log_space = _EXACT_RUNNERS[sweep](
        *state, given_eta.ETA[num_topics][:num_tasks], given_eta.PSI[:num_tasks],
        given_eta.RHO[:num_tasks], 1000 * seed, FORMS[form], given_eta.NUM_BURNIN, num_samples,
        counts)
    # the form asked for is the form that ran, and the counts stayed consistent with z
    num_tokens = (given_eta.NUM_BURNIN + num_samples) * len(given_eta.WORDS)
    assert log_space == (num_tokens if form == "log-space" and num_tasks else 0)
    given_eta.assert_consistent(state)
    return counts / num_samples


@pytest.mark.slow
@pytest.mark.parametrize("num_topics", [2, 3])
@pytest.mark.parametrize("num_tasks", [1, 2])
@pytest.mark.parametrize("form", list(FORMS))
def test_exact_sweep_matches_enumeration_given_eta(num_topics, num_tasks, form):
    exact = given_eta.exact_z(num_topics, num_tasks)
    freq = _exact_sweep_frequencies(num_topics, num_tasks, form, seed=10 * num_topics + num_tasks)
    tv = given_eta.tv_distance(exact, freq)
    assert tv < given_eta.TV_BOUND[num_topics], f"TV {tv:.4f}"


@pytest.mark.slow
def test_exact_sweep_matches_enumeration_plain_lda():
    freq = _exact_sweep_frequencies(3, 0, "tables", seed=5)
    tv = given_eta.tv_distance(given_eta.exact_z(3, 0), freq)
    assert tv < given_eta.LDA_TV_BOUND, f"TV {tv:.4f}"


# Mutants of the exact sweep, each in the form it changes: (form, function mutated, its
# replacements). The function is a step of the sweep (``kernels.topics``) or of its response
# tables (``kernels.response_table``); the sweep is recompiled around it.
EXACT_SWEEP_MUTANTS = {
    # the Gaussian-form exponent's quadratic term -c_t e_tk^2 / 2 left out
    "tables-exponent-without-quadratic-term": ("tables", rt.document_factors, [
        ("sum_quadratic(tb.cen, tb.a, tb.half_c, tb.ab, num)",
         "sum_quadratic(tb.cen, tb.a, 0.0 * tb.half_c, tb.ab, num)")]),
    "log-space-exponent-without-quadratic-term": ("log-space", rt.log_space_factors, [
        ("sum_quadratic(eta, tb.lin, tb.quad, tb.log_factor, num)",
         "sum_quadratic(eta, tb.lin, 0.0 * tb.quad, tb.log_factor, num)")]),
    # the token's own topic left in the document's score: E[j, k] not applied
    "tables-token-left-in-the-score": ("tables", tk._table_weights, [
        ("weights[k] = tb.dab[k] * (n_wk[w, k] + beta) * tb.table[row_old, k]",
         "weights[k] = tb.dab[k] * (n_wk[w, k] + beta)")]),
    # AB_k not moved with the token when it changes topic (tables of the document's first state)
    "tables-not-moved-with-the-token": ("tables", rt.move_factors, [
        ("        tb.ab[k] *= r\n        tb.dab[k] *= r", "        pass")]),
}


def _table_steps():
    """The steps of the exact sweep (``kernels.topics``' numba functions, the document loop
    and the sweep aside) that call the tables' functions (``rt.``), directly or through such a
    step, in the order they are defined: recompiled in that order, each sees the ones before
    (callees are defined before their callers there)."""
    functions = sorted(
        ((name, f.py_func) for name, f in vars(tk).items()
         if hasattr(f, "py_func") and f.py_func.__module__ == tk.__name__
         and name not in ("_supervised_document", "_collapsed_sweep")),
        key=lambda item: item[1].__code__.co_firstlineno)
    steps = []
    for name, function in functions:
        source = inspect.getsource(function)
        if re.search(r"\brt\.", source) or any(f"{step}(" in source for step in steps):
            steps.append(name)
    return steps


def test_table_steps_are_found():
    """planted_sweep's list of the steps to recompile holds every one that reaches the tables
    (a step it missed would leave a planted mutant of the tables unseen)."""
    steps = _table_steps()
    assert {"_begin_document", "_token_leaves", "_table_row", "_after_draw",
            "_log_space_weights"} <= set(steps)
    assert steps.index("_table_row") < min(steps.index("_token_leaves"),
                                           steps.index("_after_draw"))
    assert "_table_weights" not in steps  # reads tb's arrays, calls no table function


def planted_sweep(function, replacements):
    """``kernels.topics._collapsed_sweep`` recompiled around a mutant of one of its steps (of
    ``kernels.topics`` or of ``kernels.response_table``)."""
    changed = mutant(function, replacements)
    if function.__module__ == rt.__name__:
        overrides = {"rt": module_with(rt, **{function.__name__: changed})}
        for step in _table_steps():
            overrides[step] = mutant(getattr(tk, step), [], overrides)
    else:
        overrides = {function.__name__: changed}
    document = mutant(tk._supervised_document, [], overrides)
    return mutant(tk._collapsed_sweep, [], {"_supervised_document": document})


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXACT_SWEEP_MUTANTS))
def test_enumeration_given_eta_detects_a_mutant_of_the_exact_sweep(name):
    form, function, replacements = EXACT_SWEEP_MUTANTS[name]
    sweep = planted_sweep(function, replacements)
    freq = _exact_sweep_frequencies(3, 2, form, seed=7, sweep=sweep, num_samples=200_000)
    tv = given_eta.tv_distance(given_eta.exact_z(3, 2), freq)
    assert tv > 3 * given_eta.TV_BOUND[3], f"mutant {name} went unnoticed (TV {tv:.4f})"


# ---------------------------------------------------------------------------------------------
# collapsed_log_likelihood


def _direct_log_likelihood(topics, beta):
    """The formula as written, over all V x K counts (float32, as the monitor)."""
    vocab_size = topics.n_wk.shape[0]
    n_wk = topics.n_wk.astype(jnp.float32)
    n_k = topics.n_k.astype(jnp.float32)
    per_topic = gammaln(vocab_size * beta) - gammaln(n_k + vocab_size * beta)
    return per_topic.sum() + (gammaln(n_wk + beta) - gammaln(beta)).sum()


def _float64_log_likelihood(n_wk, beta):
    vocab_size = n_wk.shape[0]
    n_k = n_wk.sum(0)
    return float((gammaln64(vocab_size * beta) - gammaln64(n_k + vocab_size * beta)).sum()
                 + (gammaln64(n_wk + beta) - gammaln64(beta)).sum())


@pytest.mark.parametrize(
    "vocab_size, num_topics, num_tokens",
    [(300, 20, 2000), (2000, 50, 30_000), (40, 3, 5000), (5, 2, 9)],
    ids=["sparse", "sparse-large", "dense", "tiny"],  # dense: counts past the table's 1024
)
@pytest.mark.parametrize("beta", [0.01, 0.5])
def test_collapsed_log_likelihood_equals_direct_formula(vocab_size, num_topics, num_tokens, beta):
    rng = np.random.default_rng(num_tokens)
    # Zipf-like words so that some counts are large, most are 0 or small
    words = np.minimum(rng.zipf(1.3, num_tokens) - 1, vocab_size - 1).astype(np.int32)
    z = rng.integers(0, num_topics, num_tokens).astype(np.int32)
    n_wk = np.zeros((vocab_size, num_topics), np.int32)
    np.add.at(n_wk, (words, z), 1)
    topics = TopicState(jnp.asarray(z), jnp.zeros((1, num_topics), jnp.int32),
                        jnp.asarray(n_wk), jnp.asarray(n_wk.sum(0)))
    new = float(jax.jit(collapsed_log_likelihood, static_argnums=1)(topics, beta))
    direct = float(jax.jit(_direct_log_likelihood, static_argnums=1)(topics, beta))
    exact = _float64_log_likelihood(n_wk.astype(np.float64), beta)
    assert new == pytest.approx(direct, rel=1e-5)
    assert new == pytest.approx(exact, rel=1e-5)
    # also unjitted and under vmap (the kernel's vectorized chains)
    assert float(collapsed_log_likelihood(topics, beta)) == pytest.approx(direct, rel=1e-5)
    batched = TopicState(*(jnp.stack([a, a]) for a in topics))
    both = jax.vmap(lambda t: collapsed_log_likelihood(t, beta))(batched)
    np.testing.assert_allclose(np.asarray(both), [direct, direct], rtol=1e-5)


@pytest.mark.parametrize("num", [1, 2, 15, 16, 17, 20, 63, 64, 65, 100, 400])
def test_block_draw_is_the_linear_search(num):
    """The block-sum draw of the sweeps picks what a cumulative sum and a linear search pick.
    Integer weights keep every sum exact, so the two must agree for every u, zero weights
    (alone, in runs, at block ends and at the end) are never drawn, and u -> 1 draws the last
    topic of positive weight."""
    rng = np.random.default_rng(num)
    weights = rng.integers(0, 6, num).astype(np.float64)
    weights[rng.random(num) < 0.2] = 0.0
    weights[15::16] = 0.0
    weights[-min(3, num - 1):] = 0.0
    weights[0] = max(weights[0], 1.0)
    cum = np.cumsum(weights)
    total = cum[-1]
    blocks = np.empty(categorical.num_blocks(num))
    us = np.concatenate([np.linspace(0.0, 1.0, 5001)[:-1], cum[cum < total] / total,
                         [np.nextafter(1.0, 0.0)]])
    for u in us:
        k = categorical.draw(weights, num, blocks, u)
        expected = min(np.searchsorted(cum, u * total, side="right"), num - 1)
        assert k == expected, (u, k, expected)
        assert weights[k] > 0, (u, k)
    # only the first num weights count
    longer = np.concatenate([weights, [1e9] * 5])
    assert categorical.draw(longer, num, blocks, np.nextafter(1.0, 0.0)) == np.flatnonzero(weights)[-1]


def test_vectorised_exp_within_one_ulp():
    """exp_in_place (the table and log-space exps of the sweep) against np.exp over the
    range the sweep uses and beyond; inputs beyond +-700 are clamped to it."""
    x = np.concatenate([np.linspace(-700.0, 700.0, 1_400_001),
                        np.random.default_rng(0).uniform(-1.0, 1.0, 200_000), [0.0, -0.0]])
    y = x.copy()
    rt.exp_in_place(y, len(y), np.empty(len(y), np.int64))
    expected = np.exp(x)
    assert np.max(np.abs(y - expected) / np.spacing(expected)) <= 1.0
    clamped = np.array([-1e300, -800.0, 800.0, 1e300])
    rt.exp_in_place(clamped, 4, np.empty(4, np.int64))
    np.testing.assert_allclose(clamped, np.exp([-700.0, -700.0, 700.0, 700.0]), rtol=1e-15)
    # NaN propagates, in the vectorised body and in the remainder alike
    for num in (1, 3, 7, 33):
        for pos in range(num):
            z = np.linspace(-5.0, 5.0, num)
            z[pos] = np.nan
            rt.exp_in_place(z, num, np.empty(num, np.int64))
            assert np.isnan(z[pos]) and np.isfinite(np.delete(z, pos)).all(), (num, pos)


def test_document_loops_are_compiled_without_reference_counting():
    """Every sweep's per-document function is ``kernels.host.document_loop``: numba without its
    reference counting. With it, the atomic increments and decrements of the workspace tuple's
    arrays, which its pruning pass leaves in the token loop, made the collapsed sweep 2.9x
    slower on 20news at K = 20 with 20 tasks (``benchmarks/sweep_cost.py``)."""
    from topiczoo.kernels import light, parallel
    from topiczoo.kernels.hdp import sweep

    for function in (tk._supervised_document, light._light_document,
                     parallel._plain_document, parallel._supervised_document,
                     sweep._sweep_document):
        assert function.targetoptions.get("_nrt") is False, function.__name__


@pytest.mark.parametrize("alpha", [1e-3, 0.05, 1.0, 50.0])
def test_log_rising_factorial_against_lgamma_in_float64(alpha):
    """lgamma(n + alpha) - lgamma(alpha) from the table (n < 1024) and from Stirling's series
    (n >= 1024, up to 10^6) within float32's rounding of the float64 value; the assignments'
    log prior built on it equals scipy's float64 sum."""
    counts = np.r_[np.arange(0, 3000), [5000, 65535, 10**6]].astype(np.int32)
    exact = np.array([math.lgamma(n + alpha) - math.lgamma(alpha) for n in counts])
    got = np.asarray(jax.jit(lambda n: tk.log_rising_factorial(n, alpha))(counts), np.float64)
    np.testing.assert_allclose(got, exact, rtol=3e-7, atol=1e-6)
    n_dk = np.random.default_rng(0).integers(0, 1500, (7, 5)).astype(np.int32)
    total = 5 * alpha
    want = sum(gammaln64(total) - gammaln64(row.sum() + total)
               + sum(gammaln64(n + alpha) - gammaln64(alpha) for n in row) for row in n_dk)
    assert abs(float(tk.assignments_log_prior(jnp.asarray(n_dk), alpha)) - want) \
        <= 2e-6 * abs(want)
