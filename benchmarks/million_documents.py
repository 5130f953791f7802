#!/usr/bin/env python
"""A corpus of a million documents simulated from the model's own declaration: seconds per
iteration and peak memory of the parallel sampler, on one thread and on all, beside the exact
sampler.

The corpus: ``--docs`` documents (default 1,000,000) of Poisson(``--mean-length``) tokens
over ``--vocab`` words, drawn from gSLDA's own numpyro declaration (``gslda(K, c=1)``) in
blocks of ``--block`` documents (``_simulated.py`` says how). It is kept in ``--cache`` (an
``.npz``, default in the system's temporary folder) and reused when its arguments match.

Then each sampler of ``--samplers`` (``parallel@2``: the parallel sampler on 2 threads) runs
in a process of its own (so that its peak resident memory, ``ru_maxrss``, is its own): it
loads the corpus, builds gSLDA (c = 1) at K = ``--topics`` (default 100), starts from Z uniform
at random (``GibbsKernel.init``), makes one untimed step and ``--rounds`` timed ones
(``GibbsKernel.sample``: every block, eta included, and the monitors). Printed per sampler:
seconds to load and start, median CPU and wall seconds per step, their ratio to the first
sampler's, million token-iterations per wall second, and the process's peak resident memory.

Usage::

    python benchmarks/million_documents.py --out benchmarks/results/million_documents.txt
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import run_header, set_single_thread, write_lines  # noqa: E402
from _simulated import simulated_corpus, simulation_model  # noqa: E402

set_single_thread()  # BLAS and XLA on one thread: the samplers' own threads are measured

import numpy as np  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "million_documents.txt")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=int, default=1_000_000)
    p.add_argument("--mean-length", type=float, default=100.0)
    p.add_argument("--vocab", type=int, default=10_000)
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--block", type=int, default=20_000, help="documents per simulated block")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--samplers", nargs="+", default=["exact", "parallel@1", "parallel@2"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cache", default=None, help="the corpus's .npz (default: a name in the "
                   "system's temporary folder made of the corpus's arguments)")
    p.add_argument("--out", default=DEFAULT_OUT)
    p.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # a child's sampler
    args = p.parse_args(argv)
    if args.cache is None:
        args.cache = os.path.join(tempfile.gettempdir(), (
            f"topiczoo_million_D{args.docs}_L{args.mean_length:g}_V{args.vocab}_"
            f"K{args.topics}_s{args.seed}_b{args.block}.npz"))
    return args


def corpus_of(args):
    """The simulated corpus (a :class:`topiczoo.corpus.Corpus`), from the cache or drawn now."""
    t0 = time.perf_counter()
    fresh = not os.path.exists(args.cache)
    corpus = simulated_corpus(args.docs, args.mean_length, args.vocab, args.topics, args.seed,
                              cache=args.cache, block=args.block)
    if fresh:
        print(f"# simulated in {time.perf_counter() - t0:.0f} s -> {args.cache}", flush=True)
    return corpus


# ------------------------------------------------------------------------------ measurement
def measure(args, spec):
    """One sampler in this process: {setup_s, cpu_s [rounds], wall_s [rounds], peak_rss_mb}."""
    import jax

    from topiczoo.kernels.gibbs import GibbsKernel
    from topiczoo.models.supervised import corpus_data, task_of

    t0 = time.perf_counter()
    corpus = corpus_of(args)
    model = simulation_model(args.topics)
    task = task_of(model, corpus)
    data = corpus_data(model, corpus, task)
    name, _, threads = spec.partition("@")
    kernel = GibbsKernel(model, corpus.vocab_size, sampler=name, task=task,
                         num_threads=int(threads) if threads else 1)
    inputs = kernel.prepare(data)
    state = jax.block_until_ready(kernel.init(jax.random.PRNGKey(0), 0, None, (data,), {}))
    setup = time.perf_counter() - t0
    cpu, wall = [], []
    for round_ in range(args.rounds + 1):  # round 0 untimed (compilation)
        c0, w0 = time.process_time(), time.perf_counter()
        state = jax.block_until_ready(kernel.sample(state, (inputs,), {}))
        if round_:
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"setup_s": setup, "cpu_s": cpu, "wall_s": wall, "peak_rss_mb": peak,
            "tokens": int(corpus.num_tokens), "docs": int(corpus.num_docs)}


def main(argv=None):
    args = parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args, args.measure)))
        return
    argv = sys.argv[1:] if argv is None else list(argv)
    corpus = corpus_of(args)
    header = run_header(__file__, argv) + [
        f"# simulated gSLDA (c = 1) corpus: D={corpus.num_docs:,} N={corpus.num_tokens:,} "
        f"V={corpus.vocab_size:,}, K={args.topics}; one chain; medians of {args.rounds} steps",
        f"{'sampler':<12} {'setup s':>8} {'CPU s':>8} {'wall s':>8} {'CPU/first':>9} "
        f"{'wall/first':>10} {'M tok-it/s':>10} {'peak MB':>8}"]
    del corpus
    print("\n".join(header), flush=True)
    lines, first = list(header), None
    for spec in args.samplers:
        out = subprocess.run([sys.executable, __file__, *argv, "--cache", args.cache,
                              "--measure", spec], check=True, capture_output=True, text=True)
        m = json.loads(out.stdout.strip().splitlines()[-1])
        cpu, wall = float(np.median(m["cpu_s"])), float(np.median(m["wall_s"]))
        first = first or (cpu, wall)
        line = (f"{spec:<12} {m['setup_s']:>8.1f} {cpu:>8.2f} {wall:>8.2f} "
                f"{cpu / first[0]:>9.2f} {wall / first[1]:>10.2f} "
                f"{m['tokens'] / wall / 1e6:>10.2f} {m['peak_rss_mb']:>8.0f}")
        print(line, f"  (load average {os.getloadavg()[0]:.2f})", flush=True)
        lines.append(line)
    write_lines(args.out, lines)


if __name__ == "__main__":
    main()
