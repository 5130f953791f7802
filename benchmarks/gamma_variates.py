#!/usr/bin/env python
"""The cost of one gamma and one exponential variate of ``kernels.random``, against numpy's.

The partially collapsed sampler's Dirichlet draw of Phi takes V x K gamma variates a sweep
(21 M on 20news at K = 400), nearly all of shape beta (the words absent from a topic). This
script times, in one process on one thread, ``--draws`` variates of each kind:

* ours: ``gamma_floored_draw`` (what the Phi draw calls: the small-shape sampler below shape
  0.3, Marsaglia and Tsang above; floored at the smallest normal double) and
  ``exponential_draw`` (the ziggurat), in a numba loop that writes each variate to an array,
  the generator's state a tuple (as in the Phi draw); and, at the shapes up to 0.3, the
  variates a row of 400 at a time (``gamma_row``: as the Phi draw draws the row of a word of
  fewer than K / 2 tokens);
* the peer: numpy's ``Generator.standard_gamma(shape, out=...)`` and
  ``standard_exponential(out=...)`` (PCG64, C loops), into the same array.

Printed: nanoseconds per variate (median of ``--repeats``) and ours / numpy. numba's cache
does not see a change of a function another module's cached function inlined: after a change
of ``kernels.random``, delete ``benchmarks/__pycache__/gamma_variates.*.nb*`` first.

Usage::

    python benchmarks/gamma_variates.py --out benchmarks/results/gamma_variates.txt
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import run_header, set_single_thread, write_lines  # noqa: E402

set_single_thread()

import numba  # noqa: E402
import numpy as np  # noqa: E402

from topiczoo.kernels import random as rnd  # noqa: E402

#: The row of the rows' variates (the Phi draw's: K at K = 400)
ROW = 400
DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "gamma_variates.txt")


@numba.njit(cache=True)
def _ours_gamma(shape, out, seed):
    s = np.empty(4, np.uint64)
    rnd.seed_stream(np.uint64(seed), 0, s)
    state = rnd.state_of(s)
    envelope = rnd.small_shape_envelope(shape)
    for i in range(out.shape[0]):
        out[i], state = rnd.gamma_floored_draw(state, shape, envelope)


@numba.njit(cache=True)
def _ours_exponential(out, seed):
    s = np.empty(4, np.uint64)
    rnd.seed_stream(np.uint64(seed), 0, s)
    state = rnd.state_of(s)
    for i in range(out.shape[0]):
        out[i], state = rnd.exponential_draw(state)


@numba.njit(cache=True)
def _ours_gamma_rows(shape, out, seed):
    """Gamma(shape) variates (shape <= SMALL_SHAPE) a row of ROW at a time, as the Phi draw
    draws the row of a word absent from every topic (``gamma_row``)."""
    s = np.empty(4, np.uint64)
    rnd.seed_stream(np.uint64(seed), 0, s)
    state = rnd.state_of(s)
    envelope = rnd.small_shape_envelope(shape)
    scratch = rnd.row_scratch(ROW)
    counts = np.zeros(ROW, np.int32)
    for start in range(0, out.shape[0] - ROW + 1, ROW):
        state = rnd.gamma_row(state, shape, envelope, counts, scratch, out[start:start + ROW])


def _ns_per_variate(fill, out, repeats):
    fill(out)  # compilation
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fill(out)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) / out.size * 1e9


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", type=float, nargs="+", default=[0.001, 0.01, 0.1, 1.0, 5.0, 500.0])
    p.add_argument("--draws", type=int, default=10_000_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", default=DEFAULT_OUT)
    args = p.parse_args(argv)
    out = np.empty(args.draws)
    generator = np.random.default_rng(0)
    lines = run_header(__file__, argv) + [
        f"# {args.draws:,} variates a run, medians of {args.repeats} runs, one thread",
        f"{'variate':<24} {'ours ns':>8} {'numpy ns':>9} {'ours/numpy':>11}"]
    print("\n".join(lines), flush=True)
    rows = [("exponential", lambda o: _ours_exponential(o, 1),
             lambda o: generator.standard_exponential(out=o))]
    rows += [(f"gamma shape {shape:g}", lambda o, a=shape: _ours_gamma(a, o, 1),
              lambda o, a=shape: generator.standard_gamma(a, out=o))
             for shape in args.shapes]
    rows += [(f"gamma shape {shape:g}, rows", lambda o, a=shape: _ours_gamma_rows(a, o, 1),
              lambda o, a=shape: generator.standard_gamma(a, out=o))
             for shape in args.shapes if shape <= rnd.SMALL_SHAPE]
    for name, ours, peer in rows:
        t_ours = _ns_per_variate(ours, out, args.repeats)
        t_peer = _ns_per_variate(peer, out, args.repeats)
        line = f"{name:<24} {t_ours:>8.1f} {t_peer:>9.1f} {t_ours / t_peer:>11.2f}"
        print(line, flush=True)
        lines.append(line)
    write_lines(args.out, lines)


if __name__ == "__main__":
    main()
