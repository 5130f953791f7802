"""The numba sweeps' random numbers (``kernels.random``): xoshiro256** streams, normals,
exponentials and gamma variates, against exact distributions (Kolmogorov-Smirnov), at the
extremes the Dirichlet draw of the partially collapsed sampler meets (shape beta = 0.01 and
below for a word that is not in a topic, thousands for a frequent one); mutants of each
sampler fail them."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy import stats

from mutants import mutant
from topiczoo.kernels import random as rnd

NUM = 100_000
P_PASS = 1e-3  # fixed seeds: deterministic
P_MUTANT = 1e-8


def _sampler(variate):
    """A numba function (a, n, seed, stream) -> n draws of ``variate(state, a)`` (a
    ``kernels.random`` draw function: (value, state)) from stream ``stream`` of ``seed``."""
    @numba.njit
    def draws(a, n, seed, stream):
        s = np.empty(4, np.uint64)
        rnd.seed_stream(np.uint64(seed), stream, s)
        state = rnd.state_of(s)
        out = np.empty(n)
        for i in range(n):
            out[i], state = variate(state, a)
        return out

    return draws


DRAWS = _sampler(rnd.log_gamma_draw)


@numba.njit(inline="always")
def _normal(state, a):
    return rnd.normal_draw(state)


@numba.njit(inline="always")
def _exponential(state, a):
    return rnd.exponential_draw(state)


NORMALS = _sampler(_normal)
EXPONENTIALS = _sampler(_exponential)
NUM_EXPONENTIALS = 10_000_000


@pytest.mark.parametrize("shape", [1e-4, 0.01, 0.1, rnd.SMALL_SHAPE, 0.31, 0.7, 0.99, 1.0, 1.01,
                                   3.5, 50.0, 5000.0])
def test_log_gamma_follows_the_log_gamma_distribution(shape):
    """log G of Gamma(shape, 1) draws against scipy's loggamma (the law of log G), on both
    sides of each switch (the small-shape sampler up to 0.3, G(a + 1) U^(1/a) up to 1,
    Marsaglia and Tsang from 1)."""
    x = DRAWS(shape, NUM, 11, 3)
    assert np.all(np.isfinite(x))
    p = stats.kstest(x, stats.loggamma(shape).cdf).pvalue
    print(f"shape {shape}: KS p {p:.3g}")
    assert p > P_PASS


def test_normals_are_standard():
    x = NORMALS(0.0, NUM, 5, 0)
    assert stats.kstest(x, "norm").pvalue > P_PASS


def test_exponentials_are_standard_with_their_tail():
    """The ziggurat's exponential variates: the body against Exp(1) (Kolmogorov-Smirnov, ten
    million draws: a wedge accepted whole shifts the CDF by about 0.1%), and the tail beyond
    the ziggurat's edge r (P = e^-r, about 4,500 draws here) both in mass (within 5 binomial
    standard deviations) and in shape (its excess over r is Exp(1) again)."""
    x = EXPONENTIALS(0.0, NUM_EXPONENTIALS, 5, 1)
    assert stats.kstest(x, "expon").pvalue > P_PASS
    tail = x[x > rnd.ZIGGURAT_R] - rnd.ZIGGURAT_R
    expected = x.size * math.exp(-rnd.ZIGGURAT_R)
    assert abs(tail.size - expected) < 5 * math.sqrt(expected), (tail.size, expected)
    assert stats.kstest(tail, "expon").pvalue > P_PASS


@pytest.mark.parametrize("name, replacements", [
    # every point of a layer's wedge accepted, as if the density were flat there
    ("wedge", [("if _ZIG_F[i] + v * (_ZIG_F[i - 1] - _ZIG_F[i]) < math.exp(-x):", "if True:")]),
    # the tail drawn from 0 instead of from the ziggurat's edge r
    ("tail", [("return ZIGGURAT_R - math.log(v), state", "return -math.log(v), state")]),
])
def test_mutants_of_the_exponential_sampler_fail(name, replacements):
    given = mutant(rnd._exponential_given, [],
                   {"_exponential_from": mutant(rnd._exponential_from, replacements)})
    changed = mutant(rnd.exponential_draw, [], {"_exponential_given": given})

    @numba.njit(inline="always")
    def variate(state, a):
        return changed(state)

    x = _sampler(variate)(0.0, NUM_EXPONENTIALS, 5, 1)
    tail = x[x > rnd.ZIGGURAT_R] - rnd.ZIGGURAT_R
    expected = x.size * math.exp(-rnd.ZIGGURAT_R)
    p_body = stats.kstest(x, "expon").pvalue
    assert p_body < P_MUTANT or abs(tail.size - expected) > 5 * math.sqrt(expected), \
        f"{name}: KS p {p_body:.3g}, {tail.size} draws beyond r ({expected:.0f} expected)"


@numba.njit
def _floored_pairs(a, n):
    s = np.empty(4, np.uint64)
    rnd.seed_stream(np.uint64(3), 1, s)
    state = reference_state = rnd.state_of(s)
    floored, reference = np.empty(n), np.empty(n)
    for i in range(n):
        floored[i], state = rnd.gamma_floored_draw(state, a, rnd.small_shape_envelope(a))
        log_g, reference_state = rnd.log_gamma_draw(reference_state, a)
        reference[i] = math.exp(max(log_g, rnd.LOG_TINY))
    return floored, reference


@pytest.mark.parametrize("shape", [0.001, 0.01, rnd.SMALL_SHAPE, 0.5, 1.0, 30.0])
def test_floored_gamma_is_the_exp_of_the_floored_log_gamma(shape):
    """gamma_floored_draw is exp(max(log_gamma_draw, floor)) of the same stream (the
    distribution test above then covers it), bit for bit below 1 (from 1 it is d v, which the
    exp of log d + log v gives to within that sum's rounding: |log G| 2^-52 relative), the
    floor included: at shape 0.001 most draws lie below exp(-708), the floor (the parallel
    sampler's Dirichlet draw's)."""
    floored, reference = _floored_pairs(shape, 20_000)
    if shape < 1.0:
        np.testing.assert_array_equal(floored, reference)
    else:
        np.testing.assert_allclose(floored, reference, rtol=1e-14, atol=0)
    if shape == 0.001:
        assert (reference == reference.min()).mean() > 0.3  # the floor is met


def test_streams_of_one_seed_differ_and_repeat():
    a, b, a2 = DRAWS(0.5, 1000, 7, 0), DRAWS(0.5, 1000, 7, 1), DRAWS(0.5, 1000, 7, 0)
    np.testing.assert_array_equal(a, a2)
    assert not np.allclose(a, b)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.1
    assert not np.allclose(a, DRAWS(0.5, 1000, 8, 0))


@pytest.mark.parametrize("name, replacements", [
    # proposals from the left part of the envelope twice as often as its weight says
    ("small-shape-mixture", [("r = 1.0 / (1.0 + w)", "r = 1.0 / (1.0 + 2.0 * w)")]),
    # the left part's acceptance without its envelope's exponent
    ("small-shape-left-ratio", [("- log_w_lam - lam * z", "- log_w_lam")]),
    # the squeeze of the right part's test loosened: accepts where exp(-G) < U <= 1 - G / 2
    ("small-shape-squeeze", [("u <= 1.0 - g", "u <= 1.0 - 0.5 * g")]),
    # the right part's acceptance uniform U_0 itself, not U_0 / r: uniform on [0, r) instead
    # of [0, 1), so it accepts too often
    ("small-shape-reused-uniform", [("u = u0 / r", "u = u0")]),
    # Marsaglia and Tsang's d = a - 1/3 taken as a
    ("large-shape-d", [("d = a - 1.0 / 3.0", "d = a")]),
])
def test_mutants_of_the_gamma_sampler_fail(name, replacements):
    function = {"small-shape-mixture": rnd.small_shape_envelope}.get(
        name, rnd._small_try if name.startswith("small") else rnd._marsaglia_tsang)
    changed = {function.__name__: mutant(function, replacements)}
    # reached through the loop of tries, or the log of d v
    caller = {rnd._small_try: rnd._log_gamma_small,
              rnd._marsaglia_tsang: rnd._log_gamma_large}.get(function)
    if caller is not None:
        changed = {caller.__name__: mutant(caller, [], changed)}
    log_gamma = mutant(rnd.log_gamma_draw, [], changed)
    shape = 0.25 if name.startswith("small") else 2.0  # where the left part weighs most
    p = stats.kstest(_sampler(log_gamma)(shape, NUM, 11, 3), stats.loggamma(shape).cdf).pvalue
    assert p < P_MUTANT, f"{name}: KS p {p:.3g}"


# ---------------------------------------------------------------------------------------------
# A row of small-shape variates at once (the Phi draw's words absent from a topic)


def test_exp_row_is_exp_to_within_an_ulp():
    """exp_row against numpy's exp on a grid of its whole domain [LOG_TINY, 0] and on the
    values the small-shape rows give it (-z / a, z ~ Exp(1), a = 0.01): at most 1 unit in
    the last place apart (measured: 1, in 12% of values), in rows of 400 as the Phi draw
    calls it; and without the low part of ln 2 it is not (about 5e-4 relative at y = -700)."""
    rng = np.random.default_rng(4)
    y = np.concatenate([np.linspace(rnd.LOG_TINY, 0.0, 200_000), [rnd.LOG_TINY, -1e-300, 0.0],
                        np.maximum(-100.0 * rng.exponential(size=200_000), rnd.LOG_TINY)])
    y = y[: y.size // 400 * 400]
    for exp_row, within in [(rnd.exp_row, True),
                            (mutant(rnd.exp_row, [(" - nf * _LN2_LOW", "")]), False)]:
        out = np.empty_like(y)
        for start in range(0, y.size, 400):
            exp_row(y[start:start + 400], np.empty(400), out[start:start + 400])
        ulps = np.abs(out - np.exp(y)) / np.spacing(np.exp(y))
        assert (ulps.max() <= 1.0) == within, ulps.max()


def _row_sampler(gamma_row):
    """A numba function (a, counts, num_rows, seed) -> floored Gamma(counts[k] + a) variates
    (counts int32 [row length]) drawn a row at a time by ``gamma_row``
    (``kernels.random.gamma_row`` or a mutant), as the Phi draw draws a word's row."""
    @numba.njit
    def rows(a, counts, num_rows, seed):
        row_length = counts.shape[0]
        envelope = rnd.small_shape_envelope(a)
        s = np.empty(4, np.uint64)
        rnd.seed_stream(np.uint64(seed), 0, s)
        state = rnd.state_of(s)
        scratch = rnd.row_scratch(row_length)
        out = np.empty(num_rows * row_length)
        for row in range(num_rows):
            state = gamma_row(state, a, envelope, counts, scratch,
                              out[row * row_length:(row + 1) * row_length])
        return out

    return rows


ROWS = _row_sampler(rnd.gamma_row)
#: A row's counts: a topic in ten present, 1 to 20 tokens (the sum of exponential variates up
#: to EXPONENTIAL_SUM_MAX, Marsaglia and Tsang's beyond)
ROW_COUNTS = np.where(np.arange(400) % 10 == 0, np.arange(400) // 10 % 20 + 1, 0).astype(np.int32)


def floored_pit(g, shape, seed=0):
    """The probability integral transform of floored Gamma(shape) variates g (shape: a scalar
    or one per variate), uniform on [0, 1) if their law is right: F(g) above the floor, and
    for a variate at the floor TINY (which stands for every G below it) a uniform point of
    [0, F(TINY)) (numpy's generator, ``seed``)."""
    shape = np.broadcast_to(shape, g.shape)
    u = stats.gamma.cdf(g, shape)
    floor = g <= rnd.TINY
    u[floor] = np.random.default_rng(seed).random(floor.sum()) * stats.gamma.cdf(rnd.TINY,
                                                                                 shape[floor])
    return u


@pytest.mark.parametrize("shape", [0.001, 0.01, 0.1, rnd.SMALL_SHAPE])
def test_a_row_of_small_shape_variates_follows_the_gamma_law(shape):
    """100,000 variates in rows of 400 (at shape 0.001 about half lie at the floor)."""
    p = stats.kstest(floored_pit(ROWS(shape, np.zeros(400, np.int32), 250, 11), shape),
                     "uniform").pvalue
    print(f"shape {shape}: KS p {p:.3g}")
    assert p > P_PASS


def _row_with_counts_pit(rows, shape):
    """The probability integral transforms of a row's entries whose count is not 0, those of
    counts up to EXPONENTIAL_SUM_MAX and those of greater counts apart (2,500 rows)."""
    assert ROW_COUNTS.max() > rnd.EXPONENTIAL_SUM_MAX
    g = rows(shape, ROW_COUNTS, 2500, 12).reshape(2500, -1)
    pit = floored_pit(g.ravel(), np.tile(ROW_COUNTS + shape, 2500)).reshape(g.shape)
    return [pit[:, (ROW_COUNTS > 0) & (ROW_COUNTS <= rnd.EXPONENTIAL_SUM_MAX)],
            pit[:, ROW_COUNTS > rnd.EXPONENTIAL_SUM_MAX]]


@pytest.mark.parametrize("shape", [0.001, rnd.SMALL_SHAPE])
def test_a_row_with_counts_follows_the_gamma_law(shape):
    """A row's entries of count n > 0 are Gamma(n + a) variates (the row's Gamma(a) variate
    plus a Gamma(n)): 40,000 of counts 1..8, 60,000 of counts 9..20; the row's entries of
    count 0 alongside them still Gamma(a)."""
    for pit in _row_with_counts_pit(ROWS, shape):
        p = stats.kstest(pit.ravel(), "uniform").pvalue
        print(f"shape {shape}: KS p {p:.3g}")
        assert p > P_PASS
    g = ROWS(shape, ROW_COUNTS, 250, 13).reshape(250, -1)[:, ROW_COUNTS == 0]
    assert stats.kstest(floored_pit(g.ravel(), shape), "uniform").pvalue > P_PASS


@pytest.mark.parametrize("name, replacements", [
    # the common case accepted without its squeeze
    ("without-squeeze", [("common[k] & (u0[k] / r <= 1.0 - candidate[k])", "common[k]")]),
    # a try the common case does not settle thrown away and drawn afresh instead of finished:
    # its law is then the wrong one (the left part's points, for one, never come from a row)
    ("restarted", [("accepted, log_g, g, state = _small_try(u0, bits, state, envelope)",
                    "accepted, log_g, g = False, 0.0, 0.0")]),
])
def test_mutants_of_the_row_of_variates_fail(name, replacements):
    target = rnd._settle_row if name == "without-squeeze" else rnd._small_try_finish
    rows = _row_sampler(mutant(rnd.gamma_row, [], {target.__name__: mutant(target, replacements)}))
    p = stats.kstest(floored_pit(rows(rnd.SMALL_SHAPE, np.zeros(400, np.int32), 250, 11),
                                 rnd.SMALL_SHAPE), "uniform").pvalue
    assert p < P_MUTANT, f"{name}: KS p {p:.3g}"


@pytest.mark.parametrize("name, target, replacements", [
    # Gamma(n) one exponential variate short
    ("one-short", "_gamma_of_count", [("for _ in range(n):", "for _ in range(n - 1):")]),
    # Gamma(n) by Marsaglia and Tsang one shape short
    ("shape-short", "_gamma_of_count", [("float(n)", "float(n) - 1.0 + 1e-9")]),
    # the row's Gamma(a) variate not added to the count's Gamma(n)
    ("without-the-row", "gamma_row", [("out[k] += gamma_n", "out[k] = gamma_n")]),
])
def test_mutants_of_the_row_with_counts_fail(name, target, replacements):
    changed = mutant(getattr(rnd, target), replacements)
    if target != "gamma_row":
        changed = mutant(rnd.gamma_row, [], {target: changed})
    small, large = _row_with_counts_pit(_row_sampler(changed), rnd.SMALL_SHAPE)
    pit = large if name == "shape-short" else small
    p = stats.kstest(pit.ravel(), "uniform").pvalue
    assert p < P_MUTANT, f"{name}: KS p {p:.3g}"
