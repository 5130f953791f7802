#!/usr/bin/env python
"""The parallel sampler's iteration against the exact one's, side by side, in one process.

On ``load_dataset("20news")`` (1,467,718 training tokens, V = 53,666) with multi-task Gibbs
MedLDA (``medlda-multitask``: 20 one-vs-all hinge tasks, as ``light_vs_exact_step.py``'s
``build``), one chain, for each K in ``--topics`` (default 20 100 400): every sampler of
``--samplers`` starts from the same state (Z uniform at random, then ``--burnin`` exact
iterations; the family's samplers share one state) and makes ``--rounds`` kernel steps
(``GibbsKernel.sample``: every block, eta included, and the monitors), the samplers in turn,
after one untimed step of each. A sampler's threads are given after ``@``: ``parallel@2`` is
``GibbsKernel(..., sampler="parallel", num_threads=2)``. ``parallel:z=jax`` is the JAX engine
(on this CPU; it is the GPU's path) and runs at the K of ``--jax-topics`` only (it costs a
few seconds per iteration at K = 20 on one core).

Printed per K: median CPU seconds (``time.process_time``: all threads of the process) and
median wall seconds per step, and each sampler's ratio to the exact sampler's (CPU for one
thread; wall for the thread speed-up, which on a machine whose cores are shared means
little: the load average is printed with each K).

Usage::

    python benchmarks/parallel_vs_exact.py --out benchmarks/results/parallel_vs_exact.txt
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import run_header, set_single_thread, write_lines  # noqa: E402

set_single_thread()  # BLAS and XLA on one thread: the samplers' own threads are measured

import jax  # noqa: E402
import numpy as np  # noqa: E402

from topiczoo import load_dataset  # noqa: E402
from topiczoo.kernels.gibbs import GibbsKernel  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402
from topiczoo.models.supervised import corpus_data, task_of  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "parallel_vs_exact.txt")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samplers", nargs="+",
                   default=["exact", "parallel@1", "parallel@2", "parallel:z=jax"])
    p.add_argument("--topics", type=int, nargs="+", default=[20, 100, 400], metavar="K")
    p.add_argument("--jax-topics", type=int, nargs="*", default=[20], metavar="K")
    p.add_argument("--burnin", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default=DEFAULT_OUT)
    args = p.parse_args(argv)
    if args.samplers[0] != "exact":
        p.error("--samplers: exact first (the ratios are to it)")
    return args


def build(num_topics, corpus):
    return REGISTRY["medlda-multitask"].build(num_topics, corpus=corpus, c=1.0, ell=64.0,
                                              alpha=1.0, beta=0.01, nu2=1.0)


def kernel_of(model, corpus, task, spec):
    name, _, threads = spec.partition("@")
    return GibbsKernel(model, corpus.vocab_size, sampler=name, task=task,
                       num_threads=int(threads) if threads else 1)


def step_seconds(corpus, num_topics, samplers, args):
    """{sampler: ([CPU s], [wall s]) of its timed kernel steps}."""
    model = build(num_topics, corpus)
    task = task_of(model, corpus)
    data = corpus_data(model, corpus, task)
    kernels = {spec: kernel_of(model, corpus, task, spec) for spec in samplers}
    inputs = {spec: kernel.prepare(data) for spec, kernel in kernels.items()}
    first = kernels["exact"]
    start = first.init(jax.random.PRNGKey(0), 0, None, (data,), {})
    for _ in range(args.burnin):
        start = first.sample(start, (data,), {})
    chains = jax.block_until_ready({spec: start for spec in samplers})
    seconds = {spec: ([], []) for spec in samplers}
    for round_ in range(args.rounds + 1):  # round 0 untimed (compilation)
        for spec in samplers:
            c0, w0 = time.process_time(), time.perf_counter()
            chains[spec] = jax.block_until_ready(
                kernels[spec].sample(chains[spec], (inputs[spec],), {}))
            if round_:
                seconds[spec][0].append(time.process_time() - c0)
                seconds[spec][1].append(time.perf_counter() - w0)
    return seconds


def main(argv=None):
    args = parse_args(argv)
    corpus = load_dataset("20news").train
    lines = run_header(__file__, argv) + [
             f"# 20news medlda-multitask: D={corpus.num_docs} N={corpus.num_tokens} "
             f"V={corpus.vocab_size}; one chain; medians of {args.rounds} steps",
             f"{'K':>4} {'sampler':<16} {'CPU s':>8} {'wall s':>8} {'CPU/exact':>10} "
             f"{'wall/exact':>10} {'M tok-it/s':>10}"]
    print("\n".join(lines), flush=True)
    for num_topics in args.topics:
        samplers = [s for s in args.samplers
                    if not s.startswith("parallel:z=jax") or num_topics in args.jax_topics]
        seconds = step_seconds(corpus, num_topics, samplers, args)
        cpu0, wall0 = (float(np.median(t)) for t in seconds["exact"])
        block = [f"# K={num_topics}: load average {os.getloadavg()[0]:.2f}"]
        for spec in samplers:
            cpu, wall = (float(np.median(t)) for t in seconds[spec])
            block.append(f"{num_topics:>4} {spec:<16} {cpu:>8.3f} {wall:>8.3f} "
                         f"{cpu / cpu0:>10.2f} {wall / wall0:>10.2f} "
                         f"{corpus.num_tokens / wall / 1e6:>10.2f}")
        print("\n".join(block), flush=True)
        lines += block
    write_lines(args.out, lines)


if __name__ == "__main__":
    main()
