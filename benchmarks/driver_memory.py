"""Does a long run in chunks leak? Resident memory and memory mappings against chunks.

One process runs ``fit`` with ``chunk=1`` for 1,000 iterations (1,000 ``MCMC.run`` calls) of
gSLDA on a small corpus, 2 vectorized chains, and records the resident set size and the number
of lines of ``/proc/self/maps`` after chunks 1, 10, 100 and 1,000 (numpyro 0.22
re-traced its collection loop on every run, +22 MB and +270 mappings per chunk). A second
``fit`` of the same model in the same process then shows that a new fit reuses the compiled
step.

    python benchmarks/driver_memory.py [--chunks 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _machine import machine_description, set_single_thread  # noqa: E402

set_single_thread()

from topiczoo import Corpus, fit, gslda  # noqa: E402


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _maps() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    docs = [rng.integers(0, 50, size=rng.integers(20, 60)) for _ in range(100)]
    corpus = Corpus(np.concatenate(docs).astype(np.int32),
                    np.concatenate([[0], np.cumsum([len(d) for d in docs])]),
                    tuple(f"w{i}" for i in range(50)), labels=np.arange(100) % 2)
    marks = {1, 10, 100, 1000, args.chunks}
    rows = []
    tic = time.perf_counter()

    def record(result):
        n = result.iterations_done
        if n in marks:
            rows.append((n, _rss_mb(), _maps(), time.perf_counter() - tic))

    fit(gslda(3), corpus, num_chains=2, num_iterations=args.chunks, num_snapshots=0,
        num_burnin=0, chunk=1, progress=False, callback=record)
    second = time.perf_counter()
    fit(gslda(3), corpus, num_chains=2, num_iterations=10, num_snapshots=0, num_burnin=0,
        chunk=1, progress=False, seed=1)
    second = time.perf_counter() - second
    print(machine_description())
    print(f"gSLDA K=3, D={corpus.num_docs}, N={corpus.num_tokens}, 2 vectorized chains, "
          f"chunk=1 (one MCMC.run per iteration)")
    print(f"{'chunks':>7} {'RSS MB':>8} {'maps':>6} {'seconds':>8}")
    for n, rss, maps, seconds in rows:
        print(f"{n:>7} {rss:>8.1f} {maps:>6} {seconds:>8.1f}")
    first, last = rows[1], rows[-1]
    print(f"from chunk {first[0]} to {last[0]}: RSS {last[1] - first[1]:+.1f} MB, "
          f"maps {last[2] - first[2]:+d}")
    print(f"a second fit of the same model, 10 chunks: {second:.2f} s")


if __name__ == "__main__":
    main()
