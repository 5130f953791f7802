"""Random numbers of the numba sweeps: xoshiro256** streams, normals and gamma variates.

xoshiro256** (Blackman and Vigna) is seeded through splitmix64. numba's ``np.random.random()``
costs about 18 ns a call here; :func:`uniform`, 2 ns. A sweep that runs on several threads
draws every random number that a unit of its work (a document, a block of words) uses from
that unit's own stream, :func:`seed_stream` of (the sweep's seed, the unit's number): the draws
are then the same whatever the number of threads, devices or processes the units are spread
over.

Gamma variates (:func:`log_gamma`) are returned as their logarithm, so that the tiny draws of
a small shape (Gamma(0.01) is below 1e-300 about once in a thousand) keep their precision:

* shape a >= 1: Marsaglia and Tsang (2000), a normal and a uniform per try, acceptance above
  95%;
* shape a < 1: Liu, Martin and Syring (2017), "Simulating from a gamma distribution with small
  shape parameter": Z = -a log G has density proportional to exp(-z - exp(-z / a)), drawn by
  rejection from a two-sided exponential envelope; acceptance tends to 1 as a -> 0 (about 0.95
  at a = 0.3). Above a = 0.3 the envelope grows loose, and G(a) = G(a + 1) U^(1 / a) is used
  instead (Stuart's theorem).
"""

from __future__ import annotations

import math

import numba
import numpy as np

_U = np.uint64


@numba.njit(cache=True, nogil=True, inline="always")
def _rotl(x, k):
    return (x << _U(k)) | (x >> _U(64 - k))


@numba.njit(cache=True, nogil=True, inline="always")
def next64(s):
    """The next 64-bit output of xoshiro256** with state s (uint64 [4], updated in place)."""
    result = _rotl(s[1] * _U(5), 7) * _U(9)
    t = s[1] << _U(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@numba.njit(cache=True, nogil=True, inline="always")
def uniform(s):
    """A uniform double in [0, 1) (53 random bits)."""
    return (next64(s) >> _U(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _mix64(x):
    """splitmix64's output function: a bijection of 64-bit words that mixes every bit."""
    x = (x ^ (x >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> _U(27))) * _U(0x94D049BB133111EB)
    return x ^ (x >> _U(31))


@numba.njit(cache=True, nogil=True)
def seed_state(seed, s):
    """State of the generator from an integer seed (splitmix64 outputs, as its authors advise)."""
    x = _U(seed)
    for i in range(4):
        x += _U(0x9E3779B97F4A7C15)
        s[i] = _mix64(x)


@numba.njit(cache=True, nogil=True)
def seed_stream(seed, stream, s):
    """State of stream number ``stream`` (a document, a block of words) of a sweep seeded with
    ``seed``: both mixed through splitmix64, so that neighbouring streams and seeds are as far
    apart as any."""
    seed_state(_mix64(_U(seed) + _mix64(_U(stream) + _U(0x9E3779B97F4A7C15))), s)


@numba.njit(cache=True, nogil=True, inline="always")
def open_uniform(s):
    """A uniform double in (0, 1] (never 0: its log is finite)."""
    return 1.0 - uniform(s)


@numba.njit(cache=True, nogil=True, inline="always")
def normal(s):
    """A standard normal variate (Marsaglia's polar method, one of the pair it makes)."""
    while True:
        v1 = 2.0 * uniform(s) - 1.0
        v2 = 2.0 * uniform(s) - 1.0
        r2 = v1 * v1 + v2 * v2
        if 0.0 < r2 < 1.0:
            return v1 * math.sqrt(-2.0 * math.log(r2) / r2)


@numba.njit(cache=True, nogil=True, inline="always")
def _log_gamma_large(s, a):
    """log G, G ~ Gamma(a, 1) for a >= 1 (Marsaglia and Tsang)."""
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = normal(s)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = open_uniform(s)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2 or math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return math.log(d) + math.log(v)


#: Below this shape the small-shape algorithm is used; above it, G(a + 1) U^(1 / a).
SMALL_SHAPE = 0.3


@numba.njit(cache=True, nogil=True, inline="always")
def small_shape_envelope(a):
    """(lambda, w, r, log(w lambda)) of :func:`_log_gamma_small`'s envelope at shape a
    (0 < a < 1): lambda = 1 / a - 1, w = a / (e (1 - a)), r = 1 / (1 + w). Computed once by a
    caller that draws many variates of one shape (the Dirichlet draw's words absent from a
    topic, all of shape beta): three divisions and a log fewer per draw. Above
    :data:`SMALL_SHAPE`, where no sampler reads it, zeros."""
    if a > SMALL_SHAPE:
        return 0.0, 0.0, 0.0, 0.0
    lam = 1.0 / a - 1.0
    w = a / (math.e * (1.0 - a))
    r = 1.0 / (1.0 + w)
    return lam, w, r, math.log(w * lam)


@numba.njit(cache=True, nogil=True, inline="always")
def _log_gamma_small(s, a, envelope):
    """(log G, G), G ~ Gamma(a, 1) for 0 < a < 1, by Liu, Martin and Syring's rejection sampler
    of Z = -a log G (density proportional to exp(-z - exp(-z / a))): envelope e^-z on z >= 0
    and w lambda e^(lambda z) on z < 0 (``envelope``: :func:`small_shape_envelope` of a), the
    first part with probability r = 1 / (1 + w). G = exp(-z / a) is the test's own exponential
    (0 where it underflows), returned so that a caller who wants G pays no second exp.

    On z >= 0 the acceptance test log U < -G first tries the squeeze U <= 1 - G (exp(-G) >
    1 - G), which decides it without a log but where U = 1 exactly and G < 2^-53 (one draw in
    2^53): the log is taken for the others."""
    lam, w, r, log_w_lam = envelope
    while True:
        u = open_uniform(s)
        if u <= r:
            z = -math.log(u / r)
            g = math.exp(-z / a)
            u = open_uniform(s)
            if u <= 1.0 - g or math.log(u) < -g:  # h(z) / eta(z) = exp(-G) on z >= 0
                return -z / a, g
        else:
            z = math.log(open_uniform(s)) / lam
            g = math.exp(-z / a)
            if math.log(open_uniform(s)) < -z - g - log_w_lam - lam * z:
                return -z / a, g


@numba.njit(cache=True, nogil=True, inline="always")
def log_gamma(s, a):
    """log G, G ~ Gamma(a, 1) (shape a > 0, scale 1), from stream s (module docstring)."""
    if a >= 1.0:
        return _log_gamma_large(s, a)
    if a <= SMALL_SHAPE:
        return _log_gamma_small(s, a, small_shape_envelope(a))[0]
    return _log_gamma_large(s, a + 1.0) + math.log(open_uniform(s)) / a


@numba.njit(cache=True, nogil=True, inline="always")
def gamma_floored(s, a, log_floor, envelope):
    """max(G, exp(log_floor)), G ~ Gamma(a, 1): exp(max(log_gamma(s, a), log_floor)), the same
    draw from the same stream, without a second exp below :data:`SMALL_SHAPE` (the Dirichlet
    draws of words absent from a topic). ``envelope``: :func:`small_shape_envelope` of a,
    computed once by the caller; read only where a <= SMALL_SHAPE."""
    if a <= SMALL_SHAPE:
        log_g, g = _log_gamma_small(s, a, envelope)
        return g if log_g >= log_floor else math.exp(log_floor)
    return math.exp(max(log_gamma(s, a), log_floor))
