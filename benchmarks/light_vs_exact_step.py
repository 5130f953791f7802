#!/usr/bin/env python
"""The light sampler's iteration against the exact one's, side by side.

On ``load_dataset("20news")`` (1,467,718 training tokens, V = 53,666; ``--corpus
long-documents``: the 862,000 tokens of ``studies/modes_long_documents.py``, 8 classes) with
multi-task Gibbs MedLDA (``medlda-multitask``: a one-vs-all hinge task per class, c = 1,
ell = 64, alpha = 1 total, beta = 0.01, nu2 = 1, as ``studies/light_20news.py``'s ``build``),
one chain, one thread, for each K in ``--topics`` (default 20 100 400), in one process, for
each sampler of ``--samplers`` (default ``exact``, whose eta draw is the float64 Cholesky, ``exact:eta=qr``,
the float32 QR that was the default before, and ``light:z_draw=mh``, the light sampler's
Metropolis-Hastings sweep at every K; ``light`` alone runs as the exact sampler below
``models.parametric.MH_FROM_TOPICS`` topics, 256, near where the two cost the same):

1. **kernel step** (what numpyro calls per iteration: every block, eta included, and the
   monitors; ``GibbsKernel.sample``, jitted): all samplers start from the same state: Z
   uniform at random, then ``--burnin`` iterations of ``exact``; every sampler starts from
   that state (the family's samplers share one state: z, n_dk, eta, augmentation). Then
   ``--rounds`` rounds, each one step of every sampler in turn
   (each chain advancing), after one untimed step of each. Median CPU seconds per step.
2. **fit** (``topiczoo.fit.fit``, one chain, no snapshots, from the same seed, so the same
   initial Z for every sampler): ``fit(num_iterations=1 + n, num_burnin=1, chunk=1 + n)``
   with n = ``--fit-iterations``, CPU seconds of its second chunk (iterations 2 to 1 + n, one
   ``MCMC.run``, read by ``fit``'s callback) divided by n: numpyro's loop, the monitors'
   collection and ``fit``'s bookkeeping included. One untimed fit of each sampler first (the
   MCMC objects of both chunk lengths are then cached, as in a long run), then
   ``--fit-rounds`` rounds, the samplers in turn. Median over rounds.

3. **floor**: light's Z sweep alone with no response (T = 0: the document and word proposals
   only, 6 Metropolis-Hastings steps per token), the numba function called directly on counts
   rebuilt from the kernel step's start (outside the clock); ``--rounds`` calls after an
   untimed one. Every light iteration with 6 steps per token costs more than that (its
   response proposal and exponents, eta, the augmentation, the callback and the counts come
   on top), so exact fit iteration / floor bounds the ratio exact / light from above.

Ratios exact / light of those medians are the figures of the issue (at least 5 at K = 400),
one per exact sampler.
CPU time (``time.process_time``) of this process: the machine is shared, the load average is
printed with each K.

Usage::

    python benchmarks/light_vs_exact_step.py                     # K = 20 100 400
    python benchmarks/light_vs_exact_step.py --topics 400 --rounds 3 --fit-rounds 3 \\
        --out benchmarks/results/light_vs_exact_step.txt
    python benchmarks/light_vs_exact_step.py --samplers exact light:z_draw=mh \\
        --topics 150 250 350 --fit-rounds 1 --out benchmarks/results/light_crossover.20news.txt
    python benchmarks/light_vs_exact_step.py --corpus long-documents \\
        --samplers exact light:z_draw=mh --topics 20 150 250 350 --fit-rounds 1 \\
        --out benchmarks/results/light_crossover.long_documents.txt
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_description, set_single_thread  # noqa: E402

THREADS = set_single_thread()

import jax  # noqa: E402
import numpy as np  # noqa: E402

from topiczoo import load_dataset  # noqa: E402
from topiczoo.fit import fit  # noqa: E402
from topiczoo.kernels import assignments, light  # noqa: E402
from topiczoo.kernels.gibbs import GibbsKernel  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402
from topiczoo.models.parametric import SamplerOptions  # noqa: E402
from topiczoo.models.supervised import corpus_data, task_of  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "light_vs_exact_step.txt")
SAMPLERS = ("exact", "exact:eta=qr", "light:z_draw=mh")
FLOOR = "light floor"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samplers", nargs="+", default=list(SAMPLERS),
                   help="exact samplers, then a light one "
                        "(default: exact exact:eta=qr light:z_draw=mh)")
    p.add_argument("--topics", type=int, nargs="+", default=[20, 100, 400], metavar="K")
    p.add_argument("--burnin", type=int, default=2, help="exact iterations before timing (2)")
    p.add_argument("--rounds", type=int, default=3, help="timed kernel steps per sampler (3)")
    p.add_argument("--fit-rounds", type=int, default=3, help="timed fits per sampler (3)")
    p.add_argument("--fit-iterations", type=int, default=3,
                   help="iterations of a fit's timed chunk (3)")
    p.add_argument("--corpus", choices=("20news", "long-documents"), default="20news",
                   help="20news's training set (default) or the long documents of "
                        "studies/modes_long_documents.py (8 classes, 2,000 tokens each)")
    p.add_argument("--label", default="", help="a note for the output's header")
    p.add_argument("--out", default=DEFAULT_OUT)
    args = p.parse_args(argv)
    if args.samplers[-1].split(":")[0] != "light" or not all(
            name.split(":")[0] == "exact" for name in args.samplers[:-1]) or len(args.samplers) < 2:
        p.error("--samplers: one or more exact samplers, then a light one")
    return args


def build(num_topics, corpus):
    """``studies/light_20news.py``'s model."""
    return REGISTRY["medlda-multitask"].build(num_topics, corpus=corpus, c=1.0, ell=64.0,
                                              alpha=1.0, beta=0.01, nu2=1.0)


def step_seconds(corpus, num_topics, args):
    """{sampler: [CPU s of each timed kernel step]} (module docstring, 1)."""
    model = build(num_topics, corpus)
    task = task_of(model, corpus)
    data = corpus_data(model, corpus, task)
    kernels = {name: GibbsKernel(model, corpus.vocab_size, sampler=name, task=task)
               for name in args.samplers}
    first = args.samplers[0]
    start = kernels[first].init(jax.random.PRNGKey(0), 0, None, (data,), {})
    for _ in range(args.burnin):
        start = kernels[first].sample(start, (data,), {})
    chains = jax.block_until_ready({name: start for name in args.samplers})
    seconds = {name: [] for name in args.samplers}
    for round_ in range(args.rounds + 1):  # round 0 untimed
        for name in args.samplers:
            c0 = time.process_time()
            chains[name] = jax.block_until_ready(kernels[name].sample(chains[name], (data,), {}))
            if round_:
                seconds[name].append(time.process_time() - c0)
    seconds[FLOOR] = floor_seconds(model, data, np.array(start.state.z, np.int32),
                                   corpus.vocab_size, args.rounds)
    return seconds


def floor_seconds(model, data, z, vocab_size, rounds):
    """CPU s of light's Z sweep with no response at all (T = 0: plain LDA, the document and
    word proposals only), the numba function called directly on counts rebuilt from z (outside
    the clock), ``SamplerOptions.mh_steps`` steps per token: less than any light iteration of
    that many steps costs (module docstring, 3). One untimed call first."""
    words, offsets = np.asarray(data.words), np.asarray(data.doc_offsets)
    num_docs, num_topics = len(offsets) - 1, model.num_topics
    index = assignments.word_token_index(words, vocab_size)
    none = (np.zeros((0, num_topics)), np.zeros((0, num_docs)), np.zeros((0, num_docs)))
    seconds = []
    for round_ in range(rounds + 1):
        counts = (np.zeros((num_docs, num_topics), np.int32),
                  np.zeros((vocab_size, num_topics), np.int32), np.zeros(num_topics, np.int32))
        assignments._fill_counts(z, words, offsets, *counts)
        arrays = [z.copy(), *counts]
        c0 = time.process_time()
        light._light_sweep(*arrays, words, offsets, *index, *none, model.alpha_per_topic,
                           model.beta, round_, SamplerOptions.mh_steps, False,
                           np.zeros((3, 2), np.int64))
        if round_:
            seconds.append(time.process_time() - c0)
    return seconds


def fit_seconds(corpus, num_topics, args):
    """{sampler: [CPU s per iteration of each timed fit]} (module docstring, 2)."""
    model = build(num_topics, corpus)
    n = args.fit_iterations
    seconds = {name: [] for name in args.samplers}
    for round_ in range(args.fit_rounds + 1):  # round 0 untimed
        for name in args.samplers:
            clock = []
            fit(model, corpus, sampler=name, num_chains=1, num_iterations=1 + n, num_burnin=1,
                num_snapshots=0, chunk=1 + n, progress=False, seed=0,
                callback=lambda result: clock.append(time.process_time()))
            if round_:
                seconds[name].append((clock[-1] - clock[-2]) / n)
    return seconds


def main(argv=None):
    args = parse_args(argv)
    lines = []

    def log(text=""):
        print(text, flush=True)
        lines.append(text)

    if args.corpus == "20news":
        corpus = load_dataset("20news").train
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "studies"))
        from modes_long_documents import long_documents

        corpus = long_documents()[0]
    log(f"light_vs_exact_step  {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}"
        + (f"  ({args.label})" if args.label else ""))
    log(f"data: {args.corpus} train D={corpus.num_docs} N={corpus.num_tokens} "
        f"V={corpus.vocab_size}")
    log(f"model: medlda-multitask ({corpus.num_classes} one-vs-all hinge tasks, c=1, ell=64), "
        "alpha=1 total, "
        "beta=0.01, nu2=1; one chain, one thread; samplers " + ", ".join(args.samplers))
    log(f"settings: kernel step: {args.burnin} burn-in steps of {args.samplers[0]}, "
        f"then {args.rounds} interleaved timed steps each; fit: {args.fit_rounds} interleaved "
        f"fits each, {args.fit_iterations} timed iterations per fit; medians of CPU s")
    log(f"command: python benchmarks/{os.path.basename(__file__)} {shlex.join(sys.argv[1:])}")
    log(f"machine: {machine_description()}")
    log(f"threads: {THREADS}")
    width = max(map(len, args.samplers))
    rows = []
    for k in args.topics:
        load = os.getloadavg()
        steps = step_seconds(corpus, k, args)
        fits = fit_seconds(corpus, k, args)
        load_after = os.getloadavg()
        row = {"K": k, **{f"step {s}": float(np.median(steps[s])) for s in args.samplers},
               **{f"fit {s}": float(np.median(fits[s])) for s in args.samplers},
               FLOOR: float(np.median(steps[FLOOR]))}
        rows.append(row)
        log(f"\nK={k} (load average before {load[0]:.1f}, after {load_after[0]:.1f}): CPU s")
        for s in args.samplers:
            log(f"  kernel step {s:<{width}} " + " ".join(f"{x:7.3f}" for x in steps[s])
                + f"   median {row[f'step {s}']:7.3f}")
        for s in args.samplers:
            log(f"  fit iter.   {s:<{width}} " + " ".join(f"{x:7.3f}" for x in fits[s])
                + f"   median {row[f'fit {s}']:7.3f}")
        log(f"  {FLOOR} (Z sweep, T = 0) " + " ".join(f"{x:7.3f}" for x in steps[FLOOR])
            + f"   median {row[FLOOR]:7.3f}")

    log("\nsummary: median CPU s per iteration; ratio exact / light, per exact sampler")
    head = (f"{'K':>4} | {'sampler':<{width}} | {'step':>7} | {'ratio':>6} | {'fit':>7} | "
            f"{'ratio':>6}")
    log(head)
    log("-" * len(head))
    light_name = args.samplers[-1]
    for r in rows:
        for s in args.samplers:
            step, fit_ = r[f"step {s}"], r[f"fit {s}"]
            ratios = ("", "") if s == light_name else (
                f"{step / r[f'step {light_name}']:6.2f}", f"{fit_ / r[f'fit {light_name}']:6.2f}")
            log(f"{r['K']:4d} | {s:<{width}} | {step:7.3f} | {ratios[0]:>6} | {fit_:7.3f} | "
                f"{ratios[1]:>6}")
    log(f"\n{FLOOR}: light's Z sweep with no response (T = 0, {SamplerOptions.mh_steps} "
        "Metropolis-Hastings steps per token, numba called directly), CPU s; exact fit "
        "iteration / floor: the largest exact / light ratio that any light iteration with that "
        "many steps per token could reach")
    for r in rows:
        log(f"{r['K']:4d} | floor {r[FLOOR]:7.3f} | " + " | ".join(
            f"{s} / floor {r[f'fit {s}'] / r[FLOOR]:5.2f}" for s in args.samplers[:-1]))
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {os.path.relpath(args.out)}")


if __name__ == "__main__":
    main()
