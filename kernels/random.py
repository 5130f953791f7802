"""Random numbers of the numba sweeps: xoshiro256** streams, uniforms, exponential, normal and
gamma variates.

xoshiro256** (Blackman and Vigna) is seeded through splitmix64. numba's ``np.random.random()``
costs about 18 ns a call here; :func:`uniform`, 2 ns. A sweep that runs on several threads
draws every random number that a unit of its work (a document, a block of words) uses from
that unit's own stream, :func:`seed_stream` of (the sweep's seed, the unit's number): the draws
are then the same whatever the number of threads, devices or processes the units are spread
over.

A generator's state is four uint64 words, held two ways:

* a tuple (the ``*_draw`` functions: ``value, state = uniform_draw(state)``): a value that
  the compiler keeps in registers through a hot loop. Every variate is written once, over the
  tuple;
* an array of four (:func:`next64`, :func:`uniform`, :func:`seed_stream`): a state that lives
  from call to call, read and written back by each (:func:`state_of`, :func:`keep_state`).
  numba cannot tell such an array from the other arrays a loop writes, so a loop that draws
  many variates and stores them (the Dirichlet draw) would round-trip the state through memory
  at every draw: it takes the tuple once (:func:`state_of`), draws from it, and stores it back
  (:func:`keep_state`) if the array lives on. The same bits either way.

Gamma variates (:func:`log_gamma_draw`) are returned as their logarithm, so that the tiny
draws of a small shape (Gamma(0.01) is below 1e-300 about once in a thousand) keep their
precision:

* shape a >= 1: Marsaglia and Tsang (2000), a normal and a uniform per try, acceptance above
  95%;
* shape a < 1: Liu, Martin and Syring (2017), "Simulating from a gamma distribution with small
  shape parameter": Z = -a log G has density proportional to exp(-z - exp(-z / a)), drawn by
  rejection from a two-sided exponential envelope; acceptance tends to 1 as a -> 0 (about 0.95
  at a = 0.3). Above a = 0.3 the envelope grows loose, and G(a) = G(a + 1) U^(1 / a) is used
  instead (Stuart's theorem).

The envelope's right part is a standard exponential variate, drawn by the ziggurat method
(Marsaglia and Tsang 2000, "The ziggurat method for generating random variables": 256 layers;
:func:`exponential_draw`): one output and a comparison for 97.8% of variates. The partially
collapsed sampler's Dirichlet draw takes V x K gamma variates a sweep, nearly all of shape
beta, so their cost is its own: about 20 ns a variate at beta = 0.01 one at a time (33 ns with
a logarithm for the exponential and the state in memory), a third of it libm's exp of the
candidate G = exp(-z / a). It draws a word's row at a time (:func:`gamma_row`): every try's
first two random numbers in one pass (:func:`small_try_begin`), their exps in loops the
compiler vectorizes (:func:`exp_row`), the tries the squeeze settles in another
(:func:`_settle_row`), the rest finished entry by entry, and a topic's entry of a word with
tokens in it gets a Gamma(n_wk) added (:func:`_gamma_of_count`): 20.4 ns a variate one at a
time, 15.7 in rows ended entry by entry, 13.9 so (a = 0.01, 2026-11-30).
"""

from __future__ import annotations

import decimal
import math

import numba
import numpy as np

_U = np.uint64


@numba.njit(cache=True, nogil=True, inline="always")
def _rotl(x, k):
    return (x << _U(k)) | (x >> _U(64 - k))


# ---------------------------------------------------------------------------------------------
# The generator


@numba.njit(cache=True, nogil=True, inline="always")
def next64_draw(state):
    """(the next 64-bit output of xoshiro256**, the new state); state: a tuple of 4 uint64."""
    s0, s1, s2, s3 = state
    result = _rotl(s1 * _U(5), 7) * _U(9)
    t = s1 << _U(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, (s0, s1, s2, s3)


@numba.njit(cache=True, nogil=True, inline="always")
def state_of(s):
    """The state tuple of an array state s (uint64 [4])."""
    return s[0], s[1], s[2], s[3]


@numba.njit(cache=True, nogil=True, inline="always")
def keep_state(s, state):
    """Write a state tuple back into the array state s (uint64 [4])."""
    s[0], s[1], s[2], s[3] = state


@numba.njit(cache=True, nogil=True, inline="always")
def next64(s):
    """The next 64-bit output of xoshiro256** with array state s (uint64 [4], updated in
    place)."""
    x, state = next64_draw(state_of(s))
    keep_state(s, state)
    return x


@numba.njit(cache=True, nogil=True, inline="always")
def _to_unit(x):
    """A uniform double in [0, 1) from the top 53 bits of a 64-bit output."""
    return (x >> _U(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, nogil=True, inline="always")
def uniform_draw(state):
    """(a uniform double in [0, 1) (53 random bits), the new state)."""
    x, state = next64_draw(state)
    return _to_unit(x), state


@numba.njit(cache=True, nogil=True, inline="always")
def uniform(s):
    """A uniform double in [0, 1) (53 random bits) from array state s (updated in place)."""
    return _to_unit(next64(s))


@numba.njit(cache=True, nogil=True, inline="always")
def open_uniform_draw(state):
    """(a uniform double in (0, 1] (never 0: its log is finite), the new state)."""
    u, state = uniform_draw(state)
    return 1.0 - u, state


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


# ---------------------------------------------------------------------------------------------
# Exponential and normal variates


#: The ziggurat's right edge r: the base layer's draws beyond it are r + a new Exp(1) variate.
ZIGGURAT_R = 7.69711747013104972


def _exponential_ziggurat(num_layers=256, r=ZIGGURAT_R, v=3.949659822581572e-3):
    """Tables (k uint64, w, f) of Marsaglia and Tsang's ziggurat for the density e^-x, x >= 0,
    in layers i = 0..255 of equal area v: layer i >= 1 is the rectangle [0, x_i] x [f(x_i),
    f(x_{i-1})] (x_0 = 0, x_255 = r), layer 0 the base [0, r] x [0, f(r)] with the tail beyond
    r. A draw takes 53 random bits j and 8 more for i: x = j w_i is uniform on layer i's width
    (w_i = x_i / 2^53; layer 0's width v / f(r)), and inside the layer above it (j < k_i =
    2^53 x_{i-1} / x_i) wherever it lies."""
    m = 2.0 ** 53
    k, w, f = np.zeros(num_layers, np.uint64), np.zeros(num_layers), np.zeros(num_layers)
    x = r
    q = v / math.exp(-r)
    k[0], w[0], f[0] = int(r / q * m), q / m, 1.0
    w[-1], f[-1] = r / m, math.exp(-r)
    for i in range(num_layers - 2, 0, -1):
        inner = -math.log(v / x + math.exp(-x))
        k[i + 1] = int(inner / x * m)
        x = inner
        f[i] = math.exp(-x)
        w[i] = x / m
    k[1] = 0
    return k, w, f


_ZIG_K, _ZIG_W, _ZIG_F = _exponential_ziggurat()


@numba.njit(cache=True, nogil=True, inline="always")
def _ziggurat_point(u):
    """(layer i, point j, x = j w_i, whether x lies inside the layer above: the variate is x)
    of the ziggurat's 64-bit output u (:func:`_exponential_ziggurat`): the low 8 bits pick
    the layer, the top 53 the point."""
    i = u & _U(255)
    j = u >> _U(11)
    return i, j, j * _ZIG_W[i], j < _ZIG_K[i]


@numba.njit(cache=True, nogil=True)
def _exponential_from(u, state):
    """(the ziggurat's standard exponential variate whose first 64-bit output is u, the new
    state): where the point lies outside its layer's rectangle (2.2% of variates), below the
    wedge the density itself decides; beyond r, r plus a new variate (the tail of e^-x is e^-x
    again); a point rejected draws a new output. Not inlined: with the loop inside it, a loop
    that draws many variates keeps its state in registers (:func:`exponential_draw`)."""
    while True:
        i, j, x, inside = _ziggurat_point(u)
        if inside:
            return x, state
        v, state = open_uniform_draw(state)
        if i == 0:
            return ZIGGURAT_R - math.log(v), state
        if _ZIG_F[i] + v * (_ZIG_F[i - 1] - _ZIG_F[i]) < math.exp(-x):
            return x, state
        u, state = next64_draw(state)


@numba.njit(cache=True, nogil=True, inline="always")
def _exponential_given(bits, state):
    """(:func:`exponential_draw`'s variate whose first 64-bit output is ``bits``, the new
    state)."""
    i, j, x, inside = _ziggurat_point(bits)
    if inside:
        return x, state
    return _exponential_from(bits, state)


@numba.njit(cache=True, nogil=True, inline="always")
def exponential_draw(state):
    """(a standard exponential variate (density e^-x, x >= 0), the new state) by the ziggurat
    (:func:`_exponential_ziggurat`): one 64-bit output and a comparison for 97.8% of
    variates, written inline (:func:`_exponential_given`); the others are
    :func:`_exponential_from`'s (the same algorithm written whole: inlined, its loop made a
    loop that draws ten million variates take 7 ns a variate, against 4 ns so)."""
    bits, state = next64_draw(state)
    return _exponential_given(bits, state)


@numba.njit(cache=True, nogil=True, inline="always")
def normal_draw(state):
    """(a standard normal variate (Marsaglia's polar method, one of the pair it makes), the new
    state)."""
    while True:
        v1, state = uniform_draw(state)
        v2, state = uniform_draw(state)
        v1 = 2.0 * v1 - 1.0
        v2 = 2.0 * v2 - 1.0
        r2 = v1 * v1 + v2 * v2
        if 0.0 < r2 < 1.0:
            return v1 * math.sqrt(-2.0 * math.log(r2) / r2), state


# ---------------------------------------------------------------------------------------------
# Gamma variates


@numba.njit(cache=True, nogil=True, inline="always")
def _marsaglia_tsang(state, a):
    """(d, v, the new state): G = d v ~ Gamma(a, 1) for a >= 1 (Marsaglia and Tsang)."""
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x, state = normal_draw(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u, state = open_uniform_draw(state)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2 or math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d, v, state


@numba.njit(cache=True, nogil=True, inline="always")
def _log_gamma_large(state, a):
    """(log G, the new state), G ~ Gamma(a, 1) for a >= 1 (:func:`_marsaglia_tsang`)."""
    d, v, state = _marsaglia_tsang(state, a)
    return math.log(d) + math.log(v), state


#: exp(y) is 0.0 in double precision for every y below this (the smallest subnormal double is
#: exp(-744.44), and exp rounds to 0 below -745.13).
_EXP_ZERO = -745.2


@numba.njit(cache=True, nogil=True, inline="always")
def _exp_or_zero(y):
    """exp(y), the same bits, without calling exp where it is 0 (glibc's exp takes a slow path
    with an error flag there: at shape 0.001 half the small-shape draws underflow)."""
    return math.exp(y) if y > _EXP_ZERO else 0.0


#: Below this shape the small-shape algorithm is used; above it, G(a + 1) U^(1 / a).
SMALL_SHAPE = 0.3


@numba.njit(cache=True, nogil=True, inline="always")
def small_shape_envelope(a):
    """(lambda, w, r, log(w lambda), 1 / a) of :func:`_log_gamma_small`'s envelope at shape a
    (0 < a < 1): lambda = 1 / a - 1, w = a / (e (1 - a)), r = 1 / (1 + w). Computed once by a
    caller that draws many variates of one shape (the Dirichlet draw's words absent from a
    topic, all of shape beta): four divisions and a log fewer per draw. Above
    :data:`SMALL_SHAPE`, where no sampler reads it, zeros."""
    if a > SMALL_SHAPE:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    lam = 1.0 / a - 1.0
    w = a / (math.e * (1.0 - a))
    r = 1.0 / (1.0 + w)
    return lam, w, r, math.log(w * lam), 1.0 / a


@numba.njit(cache=True, nogil=True, inline="always")
def _small_try(u0, bits, state, envelope):
    """One try of :func:`_log_gamma_small` that began with the uniform u0 and, where u0 < r,
    the ziggurat's 64-bit output ``bits`` (unread otherwise): (accepted, log G, G, the new
    state)."""
    lam, w, r, log_w_lam, inv_a = envelope
    if u0 < r:
        z, state = _exponential_given(bits, state)
        g = _exp_or_zero(-z * inv_a)
        u = u0 / r
        # h(z) / eta(z) = exp(-G) on z >= 0
        return u <= 1.0 - g or math.log(u) < -g, -z * inv_a, g, state
    u, state = open_uniform_draw(state)
    z = math.log(u) / lam
    g = math.exp(-z * inv_a)
    u, state = open_uniform_draw(state)
    return math.log(u) < -z - g - log_w_lam - lam * z, -z * inv_a, g, state


@numba.njit(cache=True, nogil=True, inline="always")
def _log_gamma_small(state, a, envelope):
    """(log G, G, the new state), G ~ Gamma(a, 1) for 0 < a < 1, by Liu, Martin and Syring's
    rejection sampler of Z = -a log G (density proportional to exp(-z - exp(-z / a))):
    envelope e^-z on z >= 0 and w lambda e^(lambda z) on z < 0 (``envelope``:
    :func:`small_shape_envelope` of a), the first part with probability r = 1 / (1 + w), its z
    a standard exponential variate (:func:`exponential_draw`). G = exp(-z / a) is the test's
    own exponential (0 where it underflows), returned so that a caller who wants G pays no
    second exp.

    The part is chosen by a uniform U_0; on z >= 0 (U_0 < r) the acceptance test's uniform is
    U_0 / r, which given U_0 < r is uniform on [0, 1) and independent of z. The test log U <
    -G first tries the squeeze U <= 1 - G (exp(-G) > 1 - G), which decides it without a log
    for all but a few draws (every one where G < 2^-53, seven in ten at a = 0.01). Each try
    is :func:`_small_try`."""
    r = envelope[2]
    while True:
        u0, state = uniform_draw(state)
        bits = _U(0)
        if u0 < r:
            bits, state = next64_draw(state)
        accepted, log_g, g, state = _small_try(u0, bits, state, envelope)
        if accepted:
            return log_g, g, state


@numba.njit(cache=True, nogil=True, inline="always")
def log_gamma_draw(state, a):
    """(log G, the new state), G ~ Gamma(a, 1) (shape a > 0, scale 1) (module docstring)."""
    if a >= 1.0:
        return _log_gamma_large(state, a)
    if a <= SMALL_SHAPE:
        log_g, _, state = _log_gamma_small(state, a, small_shape_envelope(a))
        return log_g, state
    log_g, state = _log_gamma_large(state, a + 1.0)
    u, state = open_uniform_draw(state)
    return log_g + math.log(u) / a, state


#: The floor of :func:`gamma_floored_draw`, and its log: the smallest normal double. A Gamma
#: draw below it is taken as it (a topic's weight of 1e-308 instead of less, in the Dirichlet
#: draw; subnormal numbers would slow every product they meet). TINY is exp(LOG_TINY), the
#: value an exp of the floored log gives.
LOG_TINY = math.log(2.2250738585072014e-308)
TINY = math.exp(LOG_TINY)


@numba.njit(cache=True, nogil=True, inline="always")
def _floored(log_g, g):
    """max(G, TINY) of a small-shape draw (log G, G)."""
    return g if log_g >= LOG_TINY else TINY


@numba.njit(cache=True, nogil=True, inline="always")
def gamma_floored_draw(state, a, envelope):
    """(max(G, TINY), the new state), G ~ Gamma(a, 1): exp(max(log G, LOG_TINY)) of
    :func:`log_gamma_draw`'s draw from the same state, without a second exp below
    :data:`SMALL_SHAPE` (the Dirichlet draws of words absent from a topic) and from 1 (d v of
    Marsaglia and Tsang's draw, equal to the exp of its log up to rounding). ``envelope``:
    :func:`small_shape_envelope` of a, computed once by the caller; read only where a <=
    SMALL_SHAPE."""
    if a <= SMALL_SHAPE:
        log_g, g, state = _log_gamma_small(state, a, envelope)
        return _floored(log_g, g), state
    if a >= 1.0:  # d v itself, not the exp of its log (two logs and an exp fewer)
        d, v, state = _marsaglia_tsang(state, a)
        return max(d * v, TINY), state
    log_g, state = log_gamma_draw(state, a)
    return math.exp(max(log_g, LOG_TINY)), state


# ---------------------------------------------------------------------------------------------
# A row of small-shape gamma variates at once


def _ln2_parts():
    """(ln 2 to its top 32 significant bits, the rest): n * the first is exact for |n| < 2^20."""
    bits = np.array(math.log(2.0)).view(np.uint64) & np.uint64(0xFFFFFFFF00000000)
    high = float(bits.view(np.float64))
    with decimal.localcontext() as context:
        context.prec = 50
        return high, float(decimal.Decimal(2).ln() - decimal.Decimal(high))


_LN2_HIGH, _LN2_LOW = _ln2_parts()
_INV_LN2 = 1.0 / math.log(2.0)
#: 1.5 x 2^52: y / ln 2 + this has round(y / ln 2) in its low mantissa bits
_ROUNDING_SHIFT = 6755399441055744.0
_SHIFT_BITS = int(np.array(_ROUNDING_SHIFT).view(np.int64))
_C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = (
    1.0 / math.factorial(i) for i in range(1, 14))


@numba.njit(cache=True, nogil=True)
def exp_row(y, scratch, out):
    """out[k] = exp(y[k]) (float64 [n]) for LOG_TINY <= y[k] <= 0, in loops the compiler
    vectorizes (no call, no table): exp(y) = 2^n e^r, n = round(y / ln 2) (read from the
    rounding shift's bits, ``scratch`` [n]), r = y - n ln 2 (ln 2 in two parts), e^r - 1 by its
    Taylor polynomial of degree 13 (|r| <= ln(2) / 2: truncation below 5e-18) in Estrin's
    scheme, 2^n built from its bits. Within 1.2 units in the last place (libm's exp: 0.5),
    about 5 ns a value against libm's 8 on this project's machine, which has no vector math
    library for numba. The small-shape gamma variates of a row (:func:`small_try_begin`) take
    their candidate G = exp(-z / a) from it."""
    n = y.shape[0]
    for k in range(n):
        scratch[k] = y[k] * _INV_LN2 + _ROUNDING_SHIFT
    scale = out.view(np.int64)
    rounded = scratch.view(np.int64)
    for k in range(n):
        scale[k] = (rounded[k] - _SHIFT_BITS + 1023) << 52
    for k in range(n):
        nf = scratch[k] - _ROUNDING_SHIFT
        r = (y[k] - nf * _LN2_HIGH) - nf * _LN2_LOW
        r2 = r * r
        r4 = r2 * r2
        q = r * (((_C1 + _C2 * r) + r2 * (_C3 + _C4 * r))
                 + r4 * ((_C5 + _C6 * r) + r2 * (_C7 + _C8 * r))
                 + r4 * r4 * (((_C9 + _C10 * r) + r2 * (_C11 + _C12 * r)) + r4 * _C13))
        out[k] = out[k] + out[k] * q


@numba.njit(cache=True, nogil=True, inline="always")
def small_try_begin(state, envelope):
    """The first draws of a small-shape variate's try (:func:`_log_gamma_small`, envelope
    ``envelope``) for a row of variates drawn together: (u0, the ziggurat's 64-bit output, y =
    max(-z / a, LOG_TINY) for its point z, whether the try can end in the common case (the
    envelope's right part, the point inside its layer's rectangle), the new state). The row's
    candidates G = exp(y) are :func:`exp_row`'s (:func:`gamma_row`). The
    output is drawn even where u0 >= r (where the try does not read it): every try of the row
    takes two."""
    u0, state = uniform_draw(state)
    bits, state = next64_draw(state)
    i, j, x, inside = _ziggurat_point(bits)
    return u0, bits, max(-x * envelope[4], LOG_TINY), inside and u0 < envelope[2], state


#: What :func:`_settle_row` leaves where the common case does not settle a try (no variate is
#: negative)
UNSETTLED = -1.0


@numba.njit(cache=True, nogil=True)
def _settle_row(u0, y, common, candidate, envelope, out):
    """out[k] = max(G, TINY) of the tries :func:`small_try_begin` began that the common case
    settles (``candidate``: exp(y)): the envelope's right part, the point inside its layer, and
    the squeeze U <= 1 - G (about 96.5% of tries at a = 0.01); :data:`UNSETTLED` for the
    others. No random number, no branch: a loop the compiler vectorizes."""
    r = envelope[2]
    for k in range(out.shape[0]):
        settled = common[k] & (u0[k] / r <= 1.0 - candidate[k])  # not `and`: no branch
        value = candidate[k] if y[k] > LOG_TINY else TINY
        out[k] = value if settled else UNSETTLED


@numba.njit(cache=True, nogil=True)
def _small_try_finish(u0, bits, state, envelope):
    """A try of a row that :func:`_settle_row` left unsettled, finished from ``state``
    (:func:`_small_try`: the ziggurat's rejection paths, the log test, the envelope's left
    part) and, if it rejects, fresh tries: (max(G, TINY), the new state)."""
    accepted, log_g, g, state = _small_try(u0, bits, state, envelope)
    if not accepted:
        log_g, g, state = _log_gamma_small(state, 0.0, envelope)
    return _floored(log_g, g), state


@numba.njit(cache=True, nogil=True)
def _gamma_entry(state, a, envelope):
    """:func:`gamma_floored_draw`, not inlined (a row's loop stays small)."""
    return gamma_floored_draw(state, a, envelope)


#: Up to this integer shape n, a Gamma(n) variate is the sum of n exponential variates
#: (:func:`_gamma_of_count`; ~4 ns each, against ~46 for Marsaglia and Tsang's)
EXPONENTIAL_SUM_MAX = 8


@numba.njit(cache=True, nogil=True)
def _gamma_of_count(state, n):
    """(a Gamma(n) variate, the new state) for an integer n >= 1: the sum of n standard
    exponential variates (:func:`exponential_draw`) up to :data:`EXPONENTIAL_SUM_MAX`,
    Marsaglia and Tsang's d v beyond."""
    if n <= EXPONENTIAL_SUM_MAX:
        total = 0.0
        for _ in range(n):
            x, state = exponential_draw(state)
            total += x
        return total, state
    d, v, state = _marsaglia_tsang(state, float(n))
    return d * v, state


@numba.njit(cache=True, nogil=True)
def row_scratch(n):
    """The arrays :func:`gamma_row` works in, for rows of n variates."""
    return (np.empty(n), np.empty(n, np.uint64), np.empty(n), np.zeros(n, np.bool_),
            np.empty(n), np.empty(n))


@numba.njit(cache=True, nogil=True)
def gamma_row(state, a, envelope, counts, scratch, out):
    """out[k] = max(G_k, TINY), G_k ~ Gamma(counts[k] + a) independent (a <= SMALL_SHAPE,
    ``envelope``: :func:`small_shape_envelope` of a; counts int [n] >= 0; ``scratch``:
    :func:`row_scratch` of n): a word's row of the Phi draw, whose counts are mostly 0. Every
    entry draws a Gamma(a) variate, a row's worth at a time: every
    try begun (:func:`small_try_begin`: two 64-bit outputs each), the candidates' exp
    (:func:`exp_row`), the tries the common case settles settled (:func:`_settle_row`); then,
    entry by entry, from the stream after the row's numbers, the unsettled tries finished and,
    where counts[k] > 0, a Gamma(counts[k]) variate added (:func:`_gamma_of_count`: the sum of
    independent Gamma(a) and Gamma(n) variates is a Gamma(n + a) variate). Every random number
    serves one entry, so the entries are independent, each with its exact law. Returns the
    new state."""
    u0, bits, y, common, exp_scratch, candidate = scratch
    n = out.shape[0]
    for k in range(n):
        u0[k], bits[k], y[k], common[k], state = small_try_begin(state, envelope)
    exp_row(y, exp_scratch, candidate)
    _settle_row(u0, y, common, candidate, envelope, out)
    for k in range(n):
        if out[k] == UNSETTLED:
            out[k], state = _small_try_finish(u0[k], bits[k], state, envelope)
        if counts[k] != 0:
            gamma_n, state = _gamma_of_count(state, counts[k])
            out[k] += gamma_n
    return state
