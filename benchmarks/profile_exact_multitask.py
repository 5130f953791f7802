#!/usr/bin/env python
"""Where the exact multi-task iteration spends its time, against tomotopy.

On ``load_dataset("20news")`` (1,467,718 training tokens, V = 53,666, 20 classes) with
multi-task Gibbs MedLDA (``medlda-multitask``: 20 one-vs-all hinge tasks, c = 1, ell = 64,
alpha = 1/K per topic, beta = 0.01, nu2 = 1), one chain, one thread, for each K in
``--topics`` (default 20 50 100 400):

1. **parts**: from a state after ``--burnin`` iterations, each of the exact sampler's blocks
   (``GibbsKernel(...).sampler.blocks``: eta, topics, augmentation) and its ``monitors``,
   jitted on its own, and the whole kernel step (``kernel.sample``, jitted, what numpyro
   calls); inside them: the parts of the topic block's host side (:func:`host_parts`: the
   counts rebuilt from z, the numba sweep called directly, with ``--sampler light`` the
   response tables within it, the log-likelihood pass; the topic block less them is the
   callback's own cost; the word index is built once, with the data) and the hinge
   augmentation's draw. Medians over ``--calls`` calls of process CPU time (wall in
   parentheses).
2. **fit**: seconds per iteration of ``fit(model, corpus, num_chains=1)`` (numpyro's MCMC,
   the monitors collected per draw): (t(2 + n) - t(2)) / n with n = ``--iterations``, after
   an untimed run of 2 + n iterations (compilation; numpyro's MCMC objects of both runs'
   chunk lengths are then cached), so initialisation cancels.
3. **tomotopy**: seconds per iteration of tomotopy 0.14's ``SLDAModel`` with 20 binary
   (logistic) responses (the model ``bench_tomotopy.py`` and ``multiclass_20news.py`` use;
   tomotopy has no hinge loss), ``train(n, workers=1)`` on the same tokens, after
   ``train(2)``.

Everything is measured in one process, K after K, ours then tomotopy, so the ratios compare
measurements taken under the same load (the machine is shared: the load average is printed).

Usage::

    python benchmarks/profile_exact_multitask.py                       # K = 20 50 100 400
    python benchmarks/profile_exact_multitask.py --topics 20 --calls 2 --iterations 2
    python benchmarks/profile_exact_multitask.py --sampler light --topics 20 400 --no-tomotopy \\
        --out benchmarks/results/profile_light_multitask.txt
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
import numba  # noqa: E402
import numpy as np  # noqa: E402

from topiczoo import load_dataset  # noqa: E402
from topiczoo.fit import fit  # noqa: E402
from topiczoo.kernels import assignments  # noqa: E402
from topiczoo.kernels import light as light_module  # noqa: E402
from topiczoo.kernels import topics as topics_module  # noqa: E402
from topiczoo.kernels.gibbs import GibbsKernel  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402
from topiczoo.models.supervised import corpus_data, task_of  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "profile_exact_multitask.txt")
SHORT = 2  # iterations of the short run whose time is subtracted


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--topics", type=int, nargs="+", default=[20, 50, 100, 400], metavar="K")
    p.add_argument("--calls", type=int, default=3, help="timed calls per part (median; 3)")
    p.add_argument("--burnin", type=int, default=3,
                   help="iterations before the parts are timed (default 3)")
    p.add_argument("--iterations", type=int, default=3,
                   help="timed iterations of fit and of tomotopy (default 3)")
    p.add_argument("--sampler", default="exact", help="our sampler (default exact)")
    p.add_argument("--no-tomotopy", action="store_true")
    p.add_argument("--out", default=DEFAULT_OUT)
    return p.parse_args(argv)


def medlda_multitask(num_topics, corpus):
    return REGISTRY["medlda-multitask"].build(num_topics, corpus=corpus, c=1.0, ell=64.0,
                                              alpha=1.0, beta=0.01, nu2=1.0)


def timed(fn, calls):
    """(median CPU s, median wall s) of ``calls`` calls of fn, after one untimed call."""
    fn()
    cpu, wall = [], []
    for _ in range(calls):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return float(np.median(cpu)), float(np.median(wall))


def parts(corpus, num_topics, args):
    """CPU and wall seconds of each part of one iteration (module docstring, 1)."""
    model = medlda_multitask(num_topics, corpus)
    task = task_of(model, corpus)
    data = corpus_data(model, corpus, task)
    kernel = GibbsKernel(model, corpus.vocab_size, sampler=args.sampler, task=task)
    chain = kernel.init(jax.random.PRNGKey(0), 0, None, (data,), {})
    step = jax.jit(lambda c, d: kernel.sample(c, (d,), {}))
    for _ in range(args.burnin):
        chain = step(chain, data)
    chain = jax.block_until_ready(chain)
    state, key = chain.state, jax.random.PRNGKey(1)
    out = {}
    for block in kernel.sampler.blocks:
        fn = jax.jit(block)
        name = block.__name__.removesuffix("_block")
        out[name] = timed(lambda fn=fn: jax.block_until_ready(fn(key, state, data)), args.calls)
    monitors = jax.jit(kernel.sampler.monitors)
    out["monitors"] = timed(lambda: jax.block_until_ready(monitors(state, data)), args.calls)
    out["kernel step"] = timed(lambda: jax.block_until_ready(step(chain, data)), args.calls)
    detail = host_parts(model, args.sampler, corpus.vocab_size, state, data, args.calls)
    omega = state.eta @ (np.asarray(state.n_dk, np.float32)
                         / np.maximum(data.doc_offsets[1:] - data.doc_offsets[:-1], 1)[:, None]).T
    draw = jax.jit(model.response.draw_augmentation)
    detail["augmentation draw (response)"] = timed(
        lambda: jax.block_until_ready(draw(key, data.y, omega, state.augmentation)), args.calls)
    return out, detail


HOST_PARTS = ("counts rebuilt from z", "numba sweep (called directly)", "log-likelihood pass")


def host_parts(model, sampler, vocab_size, state, data, calls):
    """CPU and wall seconds of the parts of the topic block's host side (both samplers:
    ``kernels.assignments.host_assignments_step``): the counts rebuilt from z, the numba sweep
    (the collapsed one, or the light one and, inside it, its response tables alone: two per
    document, as the sweep builds them, from the state's topics), the log-likelihood pass."""
    psi, rho = model.response.gaussian_form(data.y, state.augmentation)
    words, offsets = np.asarray(data.words), np.asarray(data.doc_offsets)
    eta, psi, rho = (np.asarray(a, np.float64) for a in (state.eta, psi, rho))
    z0 = np.array(state.z, np.int32)
    num_topics = eta.shape[1]
    index = assignments.word_token_index(words, vocab_size)

    def counts():
        out = (np.zeros((len(offsets) - 1, num_topics), np.int32),
               np.zeros((vocab_size, num_topics), np.int32), np.zeros(num_topics, np.int32))
        assignments._fill_counts(z0, words, offsets, *out)
        return out

    base = counts()

    def fresh():  # copies made before the clock starts
        return [z0.copy(), *(a.copy() for a in base)]

    def sweep(arrays):
        if sampler.startswith("light"):
            light_module._light_sweep(*arrays, words, offsets, *index, eta, psi, rho,
                                      model.alpha_per_topic, model.beta, 1, 6, False,
                                      np.zeros((3, 2), np.int64))
        else:
            topics_module._collapsed_sweep(*arrays, words, offsets, eta, psi, rho,
                                           model.alpha_per_topic, model.beta, 1,
                                           *topics_module.TABLE_ARGUMENTS)

    def log_likelihood(arrays):
        assignments._consume_log_likelihood(arrays[0], *index, arrays[2], arrays[3], model.beta)

    out = {HOST_PARTS[0]: timed(counts, calls), HOST_PARTS[1]: timed_with(sweep, fresh, calls)}
    if sampler.startswith("light"):
        out["  of which response tables"] = timed(
            lambda: _response_tables(z0, offsets, eta, psi, rho), calls)
    out[HOST_PARTS[2]] = timed_with(log_likelihood, fresh, calls)
    return out


@numba.njit
def _response_tables(z, offsets, eta, psi, rho):
    """The light sweep's response tables alone (``kernels.light._response_table``), two per
    document from the halves' current topics, as ``_light_sweep`` builds them."""
    num_tasks, num_topics = eta.shape
    eta_kt = np.ascontiguousarray(eta.T)
    xhat, weights = np.empty(num_topics), np.empty(num_topics)
    prob, q = np.empty(num_topics), np.empty(num_topics)
    alias, work = np.empty(num_topics, np.int64), np.empty(num_topics, np.int64)
    frozen, a_hat, half_c = np.zeros(num_tasks), np.zeros(num_tasks), np.zeros(num_tasks)
    for d in range(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        length = end - start
        mid = start + (length + 1) // 2
        for t in range(num_tasks):
            half_c[t] = 0.5 * rho[t, d] / length**2
        for phase in range(2):
            if (start == mid) if phase == 0 else (mid == end):  # an empty half
                continue
            f_lo, f_hi = (mid, end) if phase == 0 else (start, mid)
            scale = (length - 1.0) / (f_hi - f_lo) if f_hi > f_lo else 0.0
            frozen[:] = 0.0
            for i in range(f_lo, f_hi):
                for t in range(num_tasks):
                    frozen[t] += eta_kt[z[i], t]
            for t in range(num_tasks):
                a_hat[t] = psi[t, d] / length - 2.0 * half_c[t] * frozen[t] * scale
            light_module._response_table(eta, a_hat, half_c, xhat, weights, prob, alias, work,
                                         q)


def timed_with(fn, setup, calls):
    """:func:`timed` of fn(setup()), setup outside the clock."""
    fn(setup())
    cpu, wall = [], []
    for _ in range(calls):
        arg = setup()
        c0, w0 = time.process_time(), time.perf_counter()
        fn(arg)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return float(np.median(cpu)), float(np.median(wall))


def fit_seconds(corpus, num_topics, args):
    """Seconds per iteration of fit (module docstring, 2): (CPU, wall)."""
    model = medlda_multitask(num_topics, corpus)
    runs = {}
    # untimed: compiles the step and builds numpyro's MCMC objects of both runs' chunk lengths
    fit(model, corpus, sampler=args.sampler, num_chains=1, num_iterations=SHORT + args.iterations,
        num_burnin=SHORT + args.iterations, num_snapshots=0, chunk=SHORT + args.iterations,
        progress=False)
    for n in (SHORT, SHORT + args.iterations):
        c0, w0 = time.process_time(), time.perf_counter()
        fit(model, corpus, sampler=args.sampler, num_chains=1, num_iterations=n, num_burnin=n,
            num_snapshots=0, chunk=n, progress=False)
        runs[n] = (time.process_time() - c0, time.perf_counter() - w0)
    return tuple((runs[SHORT + args.iterations][i] - runs[SHORT][i]) / args.iterations
                 for i in range(2))


def tomotopy_model(corpus, num_topics, *, alpha=1.0, beta=0.01, nu2=1.0, c=1.0, seed=1):
    """tomotopy's SLDAModel with one binary response per class on ``corpus`` (multi-class
    labels), initialised (``train(0)``); no alpha optimisation (ours keeps alpha fixed)."""
    import tomotopy as tp

    labels = np.asarray(corpus.labels)
    num_classes = int(labels.max()) + 1
    mdl = tp.SLDAModel(k=num_topics, vars=["b"] * num_classes, alpha=alpha / num_topics,
                       eta=beta, mu=[0.0] * num_classes, nu_sq=[nu2] * num_classes,
                       glm_param=[c] * num_classes, seed=seed)
    vocab = corpus.vocabulary
    for d in range(corpus.num_docs):
        y = np.zeros(num_classes)
        y[labels[d]] = 1.0
        mdl.add_doc([vocab[w] for w in corpus.document(d)], y=y.tolist())
    mdl.optim_interval = 0
    mdl.train(0, workers=1)
    if int(mdl.num_words) != int(corpus.num_tokens):
        raise RuntimeError(f"tomotopy kept {mdl.num_words} of {corpus.num_tokens} tokens")
    return mdl


def tomotopy_seconds(corpus, num_topics, args):
    """Seconds per iteration of tomotopy (module docstring, 3): (CPU, wall)."""
    mdl = tomotopy_model(corpus, num_topics)
    mdl.train(SHORT, workers=1)
    step0 = mdl.global_step
    c0, w0 = time.process_time(), time.perf_counter()
    mdl.train(args.iterations, workers=1)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    assert mdl.global_step - step0 == args.iterations
    return cpu / args.iterations, wall / args.iterations


def main(argv=None):
    args = parse_args(argv)
    if not args.no_tomotopy:  # before minutes of our own timings, not after
        try:
            import tomotopy  # noqa: F401
        except ImportError:
            raise SystemExit("tomotopy is not installed: pip install tomotopy, or pass "
                             "--no-tomotopy") from None
    lines = []

    def log(text=""):
        print(text, flush=True)
        lines.append(text)

    ds = load_dataset("20news")
    corpus = ds.train
    log(f"profile_exact_multitask  {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}")
    log(f"data: 20news train D={corpus.num_docs} N={corpus.num_tokens} V={corpus.vocab_size}")
    log("model: medlda-multitask (20 one-vs-all hinge tasks, c=1, ell=64), alpha=1/K per topic, "
        f"beta=0.01, nu2=1; our sampler: {args.sampler}; one chain, one thread")
    log(f"settings: {args.burnin} iterations before the parts, median of {args.calls} calls; "
        f"fit and tomotopy: {args.iterations} timed iterations after {SHORT}")
    log(f"command: python benchmarks/{os.path.basename(__file__)} {shlex.join(sys.argv[1:])}")
    log(f"machine: {machine_description()}")
    log(f"threads: {THREADS}")
    rows = []
    for k in args.topics:
        load = os.getloadavg()[0]
        p, d = parts(corpus, k, args)
        f = fit_seconds(corpus, k, args)
        t = None if args.no_tomotopy else tomotopy_seconds(corpus, k, args)
        rows.append((k, p, d, f, t, load))
        log(f"\nK={k} (load average {load:.1f}): CPU s (wall s)")
        for name, (cpu, wall) in {**p, **{"  " + n: v for n, v in d.items()}}.items():
            share = f"{cpu / p['kernel step'][0]:6.1%} of the step" if name != "kernel step" \
                else ""
            log(f"  {name:<34} {cpu:8.3f} ({wall:8.3f})  {share}")
        rest = p["topics"][0] - sum(d[n][0] for n in HOST_PARTS)  # the block less its parts
        log(f"  {'  rest of the topic block':<34} {rest:8.3f}             "
            f"{rest / p['kernel step'][0]:6.1%} of the step (callback, copies)")
        log(f"  {'fit, s per iteration':<34} {f[0]:8.3f} ({f[1]:8.3f})")
        if t is not None:
            log(f"  {'tomotopy SLDA, s per iteration':<34} {t[0]:8.3f} ({t[1]:8.3f})  "
                f"ours / tomotopy (CPU) {f[0] / t[0]:.2f}")

    log("\nsummary, CPU s per iteration (share of the kernel step)")
    head = (f"{'K':>4} | {'eta':>13} | {'topics':>13} | {'augment.':>13} | {'monitors':>13} | "
            f"{'step':>6} | {'fit':>6} | {'tomotopy':>8} | fit/tomotopy")
    log(head)
    log("-" * len(head))
    for k, p, d, f, t, _ in rows:
        step = p["kernel step"][0]
        cells = [f"{p[n][0]:6.3f} ({p[n][0] / step:4.0%})"
                 for n in ("eta", "topics", "augmentation", "monitors")]
        tomo = f"{t[0]:8.3f} | {f[0] / t[0]:12.2f}" if t else f"{'-':>8} | {'-':>12}"
        log(f"{k:4d} | " + " | ".join(cells) + f" | {step:6.3f} | {f[0]:6.3f} | {tomo}")
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {os.path.relpath(args.out)}")


if __name__ == "__main__":
    main()
