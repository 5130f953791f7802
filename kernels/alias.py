"""Walker's alias method in numba: O(K) build, O(1) draw.

A table over K outcomes is two arrays: ``prob`` (float64 [K], thresholds in [0, 1]) and
``alias`` (int64 [K]). A draw takes one uniform u in [0, 1): slot j = floor(u K), and
f = u K - j; the outcome is j if f < prob[j], else alias[j]. Outcome k is therefore drawn with
probability

    p(k) = (prob[k] + sum_{j: alias[j] = k} (1 - prob[j])) / K,

which the construction (Walker's pairing of a slot short of mass with one that has too much,
as in Vose's, with two forward scans in place of Vose's work lists) makes equal to
w_k / sum(w) up to floating rounding (a few ulps per entry; a slot left over when rounding
exhausts the smalls or the larges gets prob 1).
:func:`alias_probabilities` computes this p(k) from the built table itself
(:func:`build_alias_with_probabilities` gathers it during the build, one pass fewer), so a
Metropolis-Hastings step that draws from a table can use in its acceptance ratio exactly the
probabilities the table draws with, rounding included (``kernels.light``).

Cost here (K = 400, warm, with other processes on the machine): about 4.3 ns per entry for the
build with the probabilities (Vose's work lists: 11.4; they chain every step through memory,
the scans keep the mass of the slot being filled in a register), 3 ns per draw.

Zero weights are allowed (they are never drawn), as long as the total is positive and finite;
:func:`build_alias` returns the total and builds nothing otherwise.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _next_small(prob, k, num):
    """The first index >= k whose prob is < 1 (num if none)."""
    while k < num and prob[k] >= 1.0:
        k += 1
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def _next_large(prob, k, num):
    """The first index >= k whose prob is >= 1 (num if none)."""
    while k < num and prob[k] < 1.0:
        k += 1
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def _build(weights, num, prob, alias, out, with_probabilities):
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
    for k in range(num):
        prob[k] = weights[k] * scale
        alias[k] = k
    if with_probabilities:
        for k in range(num):
            out[k] = 0.0
    # Walker's pairing with two forward scans instead of Vose's two work lists: i scans for
    # smalls (prob < 1), j for larges; the current large's mass pj (and, with probabilities,
    # the mass oj its slots give it) stays in a register while smalls are paired with it.
    # When j runs short of mass it becomes a small: paired next if the small scan has passed
    # it, else the scan reaches it. Memory keeps j's original prob (>= 1) meanwhile, so
    # neither scan takes j for a small early.
    i = _next_small(prob, 0, num)
    j = _next_large(prob, 0, num)
    if j == num:  # no large at all (only by rounding): every slot is full
        for k in range(num):
            prob[k] = 1.0
    elif i < num:
        s = i
        pj = prob[j]
        oj = 0.0
        while True:
            ps = prob[s]  # final: slot s keeps ps, gives 1 - ps to j
            alias[s] = j
            if with_probabilities:
                oj += 1.0 - ps
            pj = (pj + ps) - 1.0
            if s == i:
                i = _next_small(prob, i + 1, num)
            if pj < 1.0:  # j lacks mass now: a small
                prob[j] = pj
                if with_probabilities:
                    out[j] += oj
                turned = j
                j = _next_large(prob, j + 1, num)
                if j == num:  # no large left (only by rounding): the smalls left are full
                    if turned < i:
                        prob[turned] = 1.0
                    for r in range(i, num):
                        prob[r] = 1.0
                    break
                pj = prob[j]
                oj = 0.0
                s = turned if turned < i else i
            else:
                s = i
            if s == num:  # every small paired
                prob[j] = pj
                if with_probabilities:
                    out[j] += oj
                break
    # leftover larges (exactly 1, or above by rounding) are full slots
    for k in range(num):
        prob[k] = min(prob[k], 1.0)
    if with_probabilities:
        inv = 1.0 / num
        for k in range(num):
            out[k] = (out[k] + prob[k]) * inv
    return total


@numba.njit(cache=True, nogil=True)
def build_alias(weights, num, prob, alias):
    """Build the table of ``weights[:num]`` into ``prob[:num]``, ``alias[:num]``.

    Returns the total weight; if it is not positive and finite (all zero, inf or nan) nothing
    is built and the caller must not draw.
    """
    return _build(weights, num, prob, alias, prob, False)


@numba.njit(cache=True, nogil=True)
def build_alias_with_probabilities(weights, num, prob, alias, out):
    """:func:`build_alias`, and into ``out[:num]`` the probabilities the table draws with (the
    same as :func:`alias_probabilities` up to rounding, gathered during the build)."""
    return _build(weights, num, prob, alias, out, True)


@numba.njit(cache=True, nogil=True, inline="always")
def alias_draw(prob, alias, num, u):
    """The outcome of uniform u in [0, 1) under the table (see the module docstring). Both
    entries of the slot are read before the choice, so that it compiles to a select and not to
    a branch (which mispredicts whenever the outcomes are mixed)."""
    x = u * num
    j = min(int(x), num - 1)  # u * num may round up to num
    other = alias[j]
    return j if x - j < prob[j] else other


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
    total = build_alias(weights, num, prob, alias)
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
