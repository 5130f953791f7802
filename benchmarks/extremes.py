"""Extremes: large c, a far margin, many topics, one-token and 10,000-token documents.

Gibbs MedLDA (c = 256, ell = 164), gSLDA (c = 256, Polya-Gamma h = 256) and MedLDA regression
(c = 256) on a corpus mixing one-token documents with documents of 10,000 tokens, K = 400,
1,000 iterations: every draw, snapshot and test score must stay finite (no
NaN, no overflow). ``--reduced`` runs the same at the size ``tests/test_extremes.py`` uses.

    python benchmarks/extremes.py [--reduced]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _machine import machine_description, set_single_thread  # noqa: E402

FULL = dict(num_topics=400, num_iterations=1000, long_length=10_000, num_short=200,
            num_long=4)
REDUCED = dict(num_topics=50, num_iterations=30, long_length=10_000, num_short=40, num_long=2)


def extreme_corpus(num_short, num_long, long_length, vocab_size=300, seed=0):
    """One-token documents and ``num_long`` documents of ``long_length`` tokens; binary labels
    and real responses that follow the vocabulary halves."""
    from topiczoo import Corpus

    rng = np.random.default_rng(seed)
    docs = [rng.integers(0, vocab_size, size=1) for _ in range(num_short)]
    docs += [rng.integers(0, vocab_size, size=long_length) for _ in range(num_long)]
    order = rng.permutation(len(docs))
    docs = [docs[i] for i in order]
    share = np.array([np.mean(d < vocab_size // 2) for d in docs])
    words = np.concatenate(docs).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])])
    vocab = tuple(f"w{i}" for i in range(vocab_size))
    binary = Corpus(words, offsets, vocab, labels=(share > 0.5).astype(np.int64))
    ratings = Corpus(words, offsets, vocab, labels=10.0 * share)
    return binary, ratings


def run(num_topics, num_iterations, long_length, num_short, num_long, progress=False):
    """Fit and predict each extreme model; returns {name: (finite, seconds, summary)}."""
    from topiczoo import fit, gslda, medlda, medlda_regression, predict

    binary, ratings = extreme_corpus(num_short, num_long, long_length)
    out = {}
    for name, model, corpus in (
            ("medlda c=256 ell=164", medlda(num_topics, c=256.0, ell=164.0), binary),
            ("gslda c=256", gslda(num_topics, c=256), binary),
            ("medlda-regression c=256", medlda_regression(num_topics, c=256.0), ratings)):
        tic = time.perf_counter()
        result = fit(model, corpus, num_chains=1, num_iterations=num_iterations,
                     num_snapshots=2, chunk=max(num_iterations // 10, 1), progress=progress)
        prediction = predict(result, corpus, num_burnin=5, num_draws=2)
        arrays = [*result.draws.values(), prediction.scores,
                  *(a for s in result.snapshots for a in s.arrays.values())]
        finite = all(np.all(np.isfinite(np.asarray(a, np.float64))) for a in arrays)
        metrics = prediction.metrics(corpus.labels)
        out[name] = (finite, time.perf_counter() - tic, metrics,
                     float(np.max(np.abs(result.draws["eta"]))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reduced", action="store_true")
    args = parser.parse_args()
    set_single_thread()
    size = REDUCED if args.reduced else FULL
    print(machine_description())
    print(f"size: {size}")
    for name, (finite, seconds, metrics, eta_max) in run(**size, progress=True).items():
        print(f"{name:26s} finite {finite}  max|eta| {eta_max:.3g}  train metrics "
              + ", ".join(f"{k} {v:.3f}" for k, v in metrics.items()) + f"  ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
