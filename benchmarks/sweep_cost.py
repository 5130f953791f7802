#!/usr/bin/env python
"""What a token costs in each sweep, with and without a response, in one process.

The numba sweeps called directly (no JAX, no callback, one thread) on the same state, for each
K of ``--topics``: the collapsed sweep (``kernels.topics._collapsed_sweep``, the exact
sampler's), light's (``kernels.light._light_sweep``, 6 Metropolis-Hastings steps a token),
the parallel sampler's documents (``kernels.parallel._sweep_documents`` given Phi, on one
numba thread) and a hot replica's of replica exchange (``kernels.tempering._tempered_sweep``,
p(W | Z) to the power 0.5), each without a response (T = 0, plain LDA) and with ``--tasks``
Gaussian-form tasks (eta ~ N(0, 1), psi ~ N(0, 1), rho ~ U(0.5, 2), fixed seeds: the cost of
the response factor does not depend on where its coefficients come from). Z: uniform at random, then
``--burnin`` (10) collapsed sweeps without a response, so that each document's tokens sit on a
few topics as in a run (from a random Z a document meets most topics, and the collapsed and
parallel sweeps build a row of K exps for each). Corpora:
``--corpus 20news`` (1,467,718 training tokens, V = 53,666) and ``long`` (the 2,000-token
documents of ``studies/modes_long_documents.py``: 862,000 tokens, V = 2,000).

Printed: median CPU ns per token over ``--rounds`` sweeps (after an untimed one, counts rebuilt
outside the clock), and for each sweep the ratio with a response to without: the response's
share of a token. That ratio is what exposed numba's reference counting in the token loops
(``kernels.host.document_loop``): on 20news at K = 20 with 20 tasks the collapsed sweep took
721 ns a token with the response and 110 without (6.6x), light 730, the parallel sweep 829;
without the counting 248 / 93 (2.7x), 362 and 224 (the results file holds both runs).

Usage::

    python benchmarks/sweep_cost.py --out benchmarks/results/sweep_cost.txt
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

from topiczoo import load_dataset  # noqa: E402
from topiczoo.kernels import assignments, light, parallel, tempering, topics  # noqa: E402

TABLE = topics.TABLE_ARGUMENTS  # the sweeps' table arguments as the package passes them

ALPHA_TOTAL, BETA, STEPS, POWER = 1.0, 0.01, 6, 0.5


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", nargs="+", default=["20news", "long"], choices=["20news", "long"])
    p.add_argument("--topics", type=int, nargs="+", default=[20, 400], metavar="K")
    p.add_argument("--tasks", type=int, default=20, help="response tasks T (20)")
    p.add_argument("--rounds", type=int, default=3, help="timed sweeps of each (3)")
    p.add_argument("--burnin", type=int, default=10,
                   help="collapsed sweeps without a response before timing (10)")
    p.add_argument("--out", default="")
    return p.parse_args(argv)


def corpus_arrays(name):
    """(words int32 [N], doc_offsets int64 [D+1], V) of the named corpus's training set."""
    if name == "long":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "studies"))
        from modes_long_documents import long_documents

        corpus, _ = long_documents()
    else:
        corpus = load_dataset(name).train
    return (np.asarray(corpus.words, np.int32), np.asarray(corpus.doc_offsets, np.int64),
            corpus.vocab_size)


def sweeps(words, offsets, vocab_size, num_topics, n_wk):
    """{name: sweep(z, n_dk, n_wk, n_k, eta, psi, rho, seed)} for one corpus and K; the
    parallel sweep's Phi drawn from Dir(n_.k + beta) of the counts n_wk [V, K] of the timed
    state, as the sampler draws it. (With any other Phi its tokens move more than they would
    in a run, and a token that moves costs more with a response: with Phi ~ Gamma(1) at random,
    the run of 2026-11-30 02:47, the parallel sweep took 1,636 ns a token at 20news's K = 400
    with 20 tasks against the exact sweep's 1,490; with Phi | Z, in another run, 1,438 against
    1,460.)"""
    alpha = ALPHA_TOTAL / num_topics
    index = assignments.word_token_index(words, vocab_size)
    rng = np.random.default_rng(7)
    g = rng.gamma(n_wk + BETA)
    inv_s = 1.0 / g.sum(axis=0)

    def exact(z, n_dk, n_wk, n_k, eta, psi, rho, seed):
        topics._collapsed_sweep(z, n_dk, n_wk, n_k, words, offsets, eta, psi, rho, alpha, BETA,
                                seed, *TABLE)

    def light_(z, n_dk, n_wk, n_k, eta, psi, rho, seed):
        light._light_sweep(z, n_dk, n_wk, n_k, words, offsets, *index, eta, psi, rho, alpha,
                           BETA, seed, STEPS, False, np.zeros((3, 2), np.int64))

    def parallel_(z, n_dk, n_wk, n_k, eta, psi, rho, seed):
        parallel._sweep_documents(z, n_dk, words, offsets, g, inv_s, eta, psi, rho, alpha,
                                  np.uint64(seed), *TABLE)

    def tempered(z, n_dk, n_wk, n_k, eta, psi, rho, seed):
        tempering._tempered_sweep(z, n_dk, n_wk, n_k, words, offsets, eta, psi, rho, alpha, BETA,
                                  POWER, seed, *TABLE)

    return {"exact": exact, "light": light_, "parallel": parallel_, "tempered": tempered}


def counts_of(z, words, offsets, vocab_size, num_topics):
    """(n_dk, n_wk, n_k), int32, of the assignments z."""
    counts = (np.zeros((len(offsets) - 1, num_topics), np.int32),
              np.zeros((vocab_size, num_topics), np.int32), np.zeros(num_topics, np.int32))
    assignments._fill_counts(z, words, offsets, *counts)
    return counts


def median_ns(sweep, words, offsets, vocab_size, num_topics, z0, response, rounds):
    """Median CPU ns per token of ``rounds`` sweeps from z0 (one untimed sweep first)."""
    seconds = []
    for round_ in range(rounds + 1):
        z = z0.copy()
        counts = counts_of(z, words, offsets, vocab_size, num_topics)
        start = time.process_time()
        sweep(z, *counts, *response, round_)
        if round_:
            seconds.append(time.process_time() - start)
    return float(np.median(seconds)) / len(words) * 1e9


def main(argv=None):
    args = parse_args(argv)
    numba.set_num_threads(1)
    lines = run_header(__file__, argv)
    lines.append(f"# {args.tasks} tasks; Z after {args.burnin} sweeps without a response; "
                 f"{args.rounds} timed sweeps; median CPU ns per token")
    lines.append(f"{'corpus':>7} {'K':>4} {'sweep':>9} {'T=0':>8} {f'T={args.tasks}':>8} "
                 f"{'ratio':>6}")
    print("\n".join(lines), flush=True)
    for name in args.corpus:
        words, offsets, vocab_size = corpus_arrays(name)
        num_docs = len(offsets) - 1
        for num_topics in args.topics:
            rng = np.random.default_rng(0)
            z0 = rng.integers(0, num_topics, len(words)).astype(np.int32)
            plain = (np.zeros((0, num_topics)), np.zeros((0, num_docs)), np.zeros((0, num_docs)))
            counts = counts_of(z0, words, offsets, vocab_size, num_topics)
            for sweep in range(args.burnin):  # the collapsed sweep without a response
                topics._collapsed_sweep(z0, *counts, words, offsets, *plain,
                                        ALPHA_TOTAL / num_topics, BETA, 1000 + sweep, *TABLE)
            runs = sweeps(words, offsets, vocab_size, num_topics, counts[1])
            supervised = (rng.normal(0.0, 1.0, (args.tasks, num_topics)),
                          rng.normal(0.0, 1.0, (args.tasks, num_docs)),
                          rng.uniform(0.5, 2.0, (args.tasks, num_docs)))
            for sweep_name, sweep in runs.items():
                ns = [median_ns(sweep, words, offsets, vocab_size, num_topics, z0, response,
                                args.rounds) for response in (plain, supervised)]
                lines.append(f"{name:>7} {num_topics:4d} {sweep_name:>9} {ns[0]:8.0f} "
                             f"{ns[1]:8.0f} {ns[1] / ns[0]:6.2f}")
                print(lines[-1], flush=True)
    write_lines(args.out, lines)


if __name__ == "__main__":
    main()
