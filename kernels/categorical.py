"""A draw from K non-negative weights, in loops over the K entries that vectorise.

Every sweep draws a token's topic from its unnormalised conditional weights by inversion: the
first k whose cumulative weight exceeds u times the total. A running cumulative sum chains K
dependent additions and a linear search K / 2 dependent steps; here the weights are summed in
blocks of :data:`BLOCK` consecutive entries, four blocks at a time (independent additions), and
the search walks the block sums, then one block (at K = 400 this cut the exact multi-task sweep
on 20news by about a quarter). :func:`cumulate` and :func:`search` are the plain form, for the
sweeps whose cost is elsewhere.
"""

from __future__ import annotations

import numba

BLOCK = 16


@numba.njit(cache=True, nogil=True, inline="always")
def cumulate(weights, cum):
    """cum[k] = weights[0] + ... + weights[k] (in order); returns the total."""
    total = 0.0
    for k in range(weights.shape[0]):
        total += weights[k]
        cum[k] = total
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def search(cum, u):
    """The first k with cum[k] > u (linear search; the last index if none): with u uniform on
    [0, cum[-1]) it is drawn with probability proportional to cum[k] - cum[k-1]."""
    k = 0
    while k < cum.shape[0] - 1 and cum[k] <= u:
        k += 1
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def block_totals(weights, num, blocks):
    """blocks[b] = the sum of weights[b B : (b + 1) B] (B = :data:`BLOCK`, in order within the
    block) for the first ``num`` weights; returns the total, the block sums added in order."""
    size = BLOCK
    b = 0
    while (b + 4) * size <= num:
        o = b * size
        s0 = s1 = s2 = s3 = 0.0
        for j in range(size):
            s0 += weights[o + j]
            s1 += weights[o + size + j]
            s2 += weights[o + 2 * size + j]
            s3 += weights[o + 3 * size + j]
        blocks[b] = s0
        blocks[b + 1] = s1
        blocks[b + 2] = s2
        blocks[b + 3] = s3
        b += 4
    while b * size < num:
        s = 0.0
        for k in range(b * size, min(num, (b + 1) * size)):
            s += weights[k]
        blocks[b] = s
        b += 1
    total = 0.0
    for j in range(b):
        total += blocks[j]
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def search_blocks(weights, num, blocks, u):
    """The first k < num whose cumulative weight exceeds u (the last if none), with the block
    sums of :func:`block_totals`: with u uniform on [0, total) k is drawn with probability
    weights[k] / total. Within a block the weights are added in the order its sum was, so the
    walk that entered a block ends in it."""
    last = (num + BLOCK - 1) // BLOCK - 1
    acc = 0.0
    b = 0
    while b < last and acc + blocks[b] <= u:
        acc += blocks[b]
        b += 1
    k = b * BLOCK
    end = min(num, k + BLOCK)
    local = 0.0
    while k < end - 1 and acc + (local + weights[k]) <= u:
        local += weights[k]
        k += 1
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def draw(weights, num, blocks, u):
    """The k < num that uniform u in [0, 1) draws with probability weights[k] /
    sum(weights[:num]) (weights non-negative with a positive finite sum); ``blocks`` float64
    [>= ceil(num / BLOCK)] is scratch."""
    total = block_totals(weights, num, blocks)
    return search_blocks(weights, num, blocks, u * total)


@numba.njit(cache=True, nogil=True, inline="always")
def num_blocks(num):
    """The length of the ``blocks`` scratch array :func:`draw` needs for ``num`` weights."""
    return (num + BLOCK - 1) // BLOCK
