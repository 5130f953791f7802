"""The numba sweeps' random numbers (``kernels.random``): xoshiro256** streams, normals and
gamma variates, against exact distributions (Kolmogorov-Smirnov), at the extremes the Dirichlet
draw of the partially collapsed sampler meets (shape beta = 0.01 and below for a word that is
not in a topic, thousands for a frequent one)."""

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


def _sampler(log_gamma):
    @numba.njit
    def draws(a, n, seed, stream):
        s = np.empty(4, np.uint64)
        rnd.seed_stream(np.uint64(seed), stream, s)
        out = np.empty(n)
        for i in range(n):
            out[i] = log_gamma(s, a)
        return out

    return draws


DRAWS = _sampler(rnd.log_gamma)


@numba.njit
def _normals(n, seed):
    s = np.empty(4, np.uint64)
    rnd.seed_stream(np.uint64(seed), 0, s)
    out = np.empty(n)
    for i in range(n):
        out[i] = rnd.normal(s)
    return out


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
    x = _normals(NUM, 5)
    assert stats.kstest(x, "norm").pvalue > P_PASS


@numba.njit
def _floored_pairs(a, log_floor, n):
    s, t = np.empty(4, np.uint64), np.empty(4, np.uint64)
    rnd.seed_stream(np.uint64(3), 1, s)
    rnd.seed_stream(np.uint64(3), 1, t)
    floored, reference = np.empty(n), np.empty(n)
    for i in range(n):
        floored[i] = rnd.gamma_floored(s, a, log_floor, rnd.small_shape_envelope(a))
        reference[i] = math.exp(max(rnd.log_gamma(t, a), log_floor))
    return floored, reference


@pytest.mark.parametrize("shape", [0.001, 0.01, rnd.SMALL_SHAPE, 0.5, 1.0, 30.0])
def test_floored_gamma_is_the_exp_of_the_floored_log_gamma(shape):
    """gamma_floored is exp(max(log_gamma, floor)) of the same stream, bit for bit (the
    distribution test above then covers it), the floor included: at shape 0.001 most draws
    lie below exp(-708), the floor of the parallel sampler's Dirichlet draw."""
    floored, reference = _floored_pairs(shape, math.log(2.2250738585072014e-308), 20_000)
    np.testing.assert_array_equal(floored, reference)
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
    # Marsaglia and Tsang's d = a - 1/3 taken as a
    ("large-shape-d", [("d = a - 1.0 / 3.0", "d = a")]),
])
def test_mutants_of_the_gamma_sampler_fail(name, replacements):
    function = {"small-shape-mixture": rnd.small_shape_envelope}.get(
        name, rnd._log_gamma_small if name.startswith("small") else rnd._log_gamma_large)
    changed = mutant(function, replacements)
    log_gamma = mutant(rnd.log_gamma, [], {function.__name__: changed})
    shape = 0.25 if name.startswith("small") else 2.0  # where the left part weighs most
    p = stats.kstest(_sampler(log_gamma)(shape, NUM, 11, 3), stats.loggamma(shape).cdf).pvalue
    assert p < P_MUTANT, f"{name}: KS p {p:.3g}"
