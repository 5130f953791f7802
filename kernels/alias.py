"""Walker's alias method (Vose's construction) in numba: O(K) build, O(1) draw.

A table over K outcomes is two arrays: ``prob`` (float64 [K], thresholds in [0, 1]) and
``alias`` (int64 [K]). A draw takes one uniform u in [0, 1): slot j = floor(u K), and
f = u K - j; the outcome is j if f < prob[j], else alias[j]. Outcome k is therefore drawn with
probability

    p(k) = (prob[k] + sum_{j: alias[j] = k} (1 - prob[j])) / K,

which Vose's construction makes equal to w_k / sum(w) up to floating rounding (a few ulps per
entry; a slot left over when rounding exhausts one of the two work lists gets prob 1).
:func:`alias_probabilities` computes this p(k) from the built table itself
(:func:`build_alias_with_probabilities` gathers it during the build, one pass fewer), so a
Metropolis-Hastings step that draws from a table can use in its acceptance ratio exactly the
probabilities the table draws with, rounding included (``kernels.light``).

Cost here (K = 400, warm, with other processes on the machine): about 11 ns per entry for the
build with the probabilities, 3 ns per draw. The build's small/large bookkeeping is
branch-free; what remains is the chain of dependent loads and compares of Vose's loop.

Zero weights are allowed (they are never drawn), as long as the total is positive and finite;
:func:`build_alias` returns the total and builds nothing otherwise.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _build(weights, num, prob, alias, work, out, with_probabilities):
    t0 = t1 = t2 = t3 = 0.0  # four partial sums: no chain of dependent additions
    k = 0
    while k + 4 <= num:
        t0 += weights[k]
        t1 += weights[k + 1]
        t2 += weights[k + 2]
        t3 += weights[k + 3]
        k += 4
    while k < num:
        t0 += weights[k]
        k += 1
    total = (t0 + t1) + (t2 + t3)
    if not (total > 0.0 and total < np.inf):
        return total
    scale = num / total
    small = 0  # work[0:small] = small list
    large = num  # work[large:num] = large list
    for k in range(num):  # without branches: k goes to both ends, one of them keeps it
        p = weights[k] * scale
        prob[k] = p
        alias[k] = k
        is_small = p < 1.0
        work[small] = k
        work[large - 1] = k
        small += is_small
        large -= 1 - is_small
    if with_probabilities:
        for k in range(num):
            out[k] = 0.0
    while small > 0 and large < num:
        small -= 1
        s = work[small]
        l = work[large]
        alias[s] = l
        if with_probabilities:  # slot s gives 1 - prob[s] (final now) to l
            out[l] += 1.0 - prob[s]
        p = (prob[l] + prob[s]) - 1.0
        prob[l] = p
        # if l now lacks mass, move it from the large to the small list (without a branch:
        # work[small] is free either way)
        is_small = p < 1.0
        work[small] = l
        small += is_small
        large += is_small
    # leftovers (only by rounding) are full slots
    for r in range(small):
        prob[work[r]] = 1.0
    for r in range(large, num):
        prob[work[r]] = 1.0
    if with_probabilities:
        inv = 1.0 / num
        for k in range(num):
            out[k] = (out[k] + prob[k]) * inv
    return total


@numba.njit(cache=True, nogil=True)
def build_alias(weights, num, prob, alias, work):
    """Build the table of ``weights[:num]`` into ``prob[:num]``, ``alias[:num]``.

    ``work`` is int64 scratch of length >= num (the small list grows from its front, the large
    list from its back). Returns the total weight; if it is not positive and finite (all zero,
    inf or nan) nothing is built and the caller must not draw.
    """
    return _build(weights, num, prob, alias, work, prob, False)


@numba.njit(cache=True, nogil=True)
def build_alias_with_probabilities(weights, num, prob, alias, work, out):
    """:func:`build_alias`, and into ``out[:num]`` the probabilities the table draws with (the
    same as :func:`alias_probabilities` up to rounding, gathered during the build)."""
    return _build(weights, num, prob, alias, work, out, True)


@numba.njit(cache=True, nogil=True, inline="always")
def alias_draw(prob, alias, num, u):
    """The outcome of uniform u in [0, 1) under the table (see the module docstring)."""
    x = u * num
    j = int(x)
    if j >= num:  # u * num rounded up to num
        j = num - 1
    if x - j < prob[j]:
        return j
    return alias[j]


@numba.njit(cache=True, nogil=True)
def alias_probabilities(prob, alias, num, out):
    """out[k] = the probability that :func:`alias_draw` returns k (for k < num)."""
    inv = 1.0 / num
    for k in range(num):
        out[k] = prob[k] * inv
    for j in range(num):
        if prob[j] < 1.0:
            out[alias[j]] += (1.0 - prob[j]) * inv


@numba.njit(cache=True, nogil=True)
def _sample(prob, alias, size, seed, out):
    np.random.seed(seed)
    num = prob.shape[0]
    for i in range(size):
        out[i] = alias_draw(prob, alias, num, np.random.random())


def alias_table(weights):
    """(prob, alias) of non-negative ``weights`` [K] (convenience for tests and callers)."""
    weights = np.ascontiguousarray(weights, np.float64)
    num = weights.shape[0]
    prob = np.empty(num)
    alias = np.empty(num, np.int64)
    total = build_alias(weights, num, prob, alias, np.empty(num, np.int64))
    if not (total > 0 and np.isfinite(total)):
        raise ValueError(f"alias weights must have a positive finite sum, got {total}")
    return prob, alias


def alias_sample(prob, alias, size: int, seed: int = 0) -> np.ndarray:
    """``size`` independent draws from a table (numba's generator seeded with ``seed``)."""
    out = np.empty(size, np.int64)
    _sample(prob, alias, size, seed, out)
    return out


def table_probabilities(prob, alias) -> np.ndarray:
    """The probabilities a table draws with (:func:`alias_probabilities`)."""
    out = np.empty(prob.shape[0])
    alias_probabilities(prob, alias, prob.shape[0], out)
    return out
