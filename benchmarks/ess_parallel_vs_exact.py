#!/usr/bin/env python
"""Effective samples per CPU second: the parallel sampler against the exact one, one thread.

The partially collapsed sampler draws Phi each sweep where the collapsed one integrates it
out, so an iteration of it may carry less information; its speed only counts per effective
sample. For each sampler of ``--samplers``, ``fit`` (``--model``, ``--topics``, the model's
defaults, ``--chains`` chains of ``--iterations`` iterations with the default burn-in of
half, dispersed starts, seed ``--seed``, ``num_threads=1``); then the bulk effective sample size (``diagnostics.summary_table``,
ArviZ's rank-normalised ESS over all chains) of each label-invariant monitor's draws after
burn-in, divided by the fit's process CPU seconds without compilation, and each sampler's ESS
per second relative to the first sampler's (``exact``). Chains that sit in different modes
give a small ESS over all chains whatever their mixing within a mode, so the ESS within chains
is printed too: the sum over chains of each chain's own bulk ESS (its draws' autocorrelation
alone), with its ratio. The seconds: the CPU time per
iteration from the end of iteration 100 (fit's chunks of 50 are compiled by then: the first
chunks end at 1, 5, 20, 50, 100) to the end, times the number of iterations.

The issue's setting is ``--data 20news --model medlda-multitask --topics 20 100 400`` (hours on
one core); the default, ``bbc`` with binary Gibbs MedLDA (695 training documents, 112,327
tokens; K = 20), runs in about 10 minutes, and its chains have not levelled off after 500
iterations. ``--data simulated`` is a corpus whose chains do (each in a mode of its own):
2,000 documents of about 100 tokens over 2,000 words drawn from gSLDA's declaration with
K = 20 (``_simulated.py``; fit it with ``--model gslda``).

Usage::

    python benchmarks/ess_parallel_vs_exact.py --out benchmarks/results/ess_parallel_vs_exact.txt
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import run_header, set_single_thread, write_lines  # noqa: E402
from _simulated import simulated_corpus  # noqa: E402

set_single_thread()

import arviz_stats as azs  # noqa: E402
import numpy as np  # noqa: E402

from topiczoo import fit, load_dataset  # noqa: E402
from topiczoo.diagnostics.convergence import summary_table  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="bbc")
    p.add_argument("--model", default="medlda")
    p.add_argument("--topics", type=int, nargs="+", default=[20], metavar="K")
    p.add_argument("--samplers", nargs="+", default=["exact", "parallel"])
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    if args.iterations < 2 * COMPILED_BY:
        p.error(f"--iterations: at least {2 * COMPILED_BY} (the time is measured after "
                f"iteration {COMPILED_BY})")
    if args.samplers[0] != "exact":
        p.error("--samplers: exact first (the ratios are to it)")
    return args


#: The iteration after which every chunk of a fit is of a length already compiled.
COMPILED_BY = 100


def measure(model, corpus, sampler: str, args) -> tuple:
    """(summary table of the label-invariant monitors, CPU seconds of the fit without
    compilation)."""
    ends = []
    result = fit(model, corpus, sampler=sampler, num_chains=args.chains, seed=args.seed,
                 num_iterations=args.iterations, progress=False, num_threads=1,
                 callback=lambda r: ends.append((r.iterations_done, time.process_time())))
    start, t0 = next((i, t) for i, t in ends if i >= COMPILED_BY)
    last, t1 = ends[-1]
    table = summary_table(result)
    draws = result.posterior_draws()
    table["ess_within"] = [
        sum(float(azs.ess(np.asarray(draws[name], np.float64)[c:c + 1, :, *index],
                          method="bulk", chain_axis=-2, draw_axis=-1))
            for c in range(args.chains))
        for name, index in map(_element, table.index)]
    return table, (t1 - t0) / (last - start) * args.iterations


def _element(label: str) -> tuple:
    """``("augmentation_mean", (2,))`` of the summary's row ``augmentation_mean[2]``."""
    name, _, rest = label.partition("[")
    return name, tuple(int(i) for i in rest.rstrip("]").split(",")) if rest else ()


def main(argv=None):
    args = parse_args(argv)
    corpus = (simulated_corpus(2_000, 100, 2_000, 20, progress=False)
              if args.data == "simulated" else load_dataset(args.data).train)
    lines = run_header(__file__, argv) + [
             f"# {args.data} {args.model}: D={corpus.num_docs} N={corpus.num_tokens} "
             f"V={corpus.vocab_size}; {args.chains} chains x {args.iterations} iterations "
             f"(ESS of the draws after burn-in, half); one thread; CPU seconds of the fit",
             f"{'K':>4} {'sampler':<10} {'CPU s':>8} {'monitor':<22} {'ESS':>8} {'ESS/s':>8} "
             f"{'vs exact':>8} {'R-hat':>6} {'ESS within':>10} {'vs exact':>8}"]
    print("\n".join(lines), flush=True)
    for num_topics in args.topics:
        model = REGISTRY[args.model].build(num_topics, corpus=corpus)
        per_sampler = {s: measure(model, corpus, s, args) for s in args.samplers}
        reference_table, reference_cpu = per_sampler["exact"]
        block = []
        for sampler, (table, cpu) in per_sampler.items():
            for monitor in table.index:
                ess, within = (float(table.loc[monitor, c]) for c in ("ess_bulk", "ess_within"))
                base, base_within = (float(reference_table.loc[monitor, c]) / reference_cpu
                                     for c in ("ess_bulk", "ess_within"))
                block.append(f"{num_topics:>4} {sampler:<10} {cpu:>8.1f} {monitor:<22} "
                             f"{ess:>8.1f} {ess / cpu:>8.3f} {ess / cpu / base:>8.2f} "
                             f"{float(table.loc[monitor, 'r_hat']):>6.3f} {within:>10.1f} "
                             f"{within / cpu / base_within:>8.2f}")
        print("\n".join(block), flush=True)
        lines += block
    write_lines(args.out, lines)


if __name__ == "__main__":
    main()
