#!/usr/bin/env python
"""Speed of this project's collapsed Gibbs sampler against tomotopy's ``SLDAModel``.

Both samplers run on the same training corpus (default ``20news-binary``), one chain, one
thread, with the same hyperparameters:

* ours: ``topiczoo.models.gslda`` (or ``medlda``) through ``GibbsKernel`` inside
  ``numpyro.infer.MCMC`` -- exactly what a user runs;
* tomotopy: ``SLDAModel(k=K, vars=["b"], alpha=alpha/K, eta=beta, nu_sq=[nu2], glm_param=[c])``
  trained with ``train(n, workers=1)``; the documents are fed as word lists (the same multiset
  of tokens per document, as strings of our vocabulary) with the same 0/1 labels, and alpha
  optimisation is switched off (``optim_interval = 0``) because our sampler keeps alpha fixed.
  tomotopy has no hinge loss: with ``--model medlda`` it still runs its logistic sLDA.

Speed is reported as token-iterations per second = training tokens x iterations / seconds
(and as ns per token = its inverse). The two are interleaved in one process
(ours, tomotopy, ours, tomotopy, ... for ``--repeats``) so that the ratio is fair on a noisy
machine; both wall-clock and process CPU time are recorded.

Excluding compilation and initialisation
----------------------------------------
* ours: every ``MCMC.run`` re-traces and re-compiles numpyro's collection loop (seconds), and
  the first run also compiles/loads the numba sweep. A warm-up run of 2 iterations is done
  first (untimed); then, per repeat, two fresh runs from the same key are timed, one of
  ``SHORT = 2`` iterations and one of ``SHORT + iterations``. Both pay the same compilation and
  initialisation, so ``(t_long - t_short) / iterations`` is the cost of one iteration, compile
  excluded (it covers iterations SHORT+1 .. SHORT+iterations of the chain).
* tomotopy: ``train(0)`` initialises the model (random assignment, untimed), ``train(SHORT)``
  runs the same first iterations untimed, and then ``train(iterations)`` is timed. The script
  checks that ``global_step`` advanced by exactly ``iterations`` and that tomotopy kept every
  token and word (``num_words``, ``len(used_vocabs)`` and the per-document word multisets).

``--profile [K]`` (K = 50 if omitted) breaks one of our iterations into its parts: each Gibbs
block of the model's sampler (``GibbsKernel(...).sampler.blocks``) and its ``monitors`` is
jitted on its own and timed
repeatedly on a state taken after a short burn-in; the topic block is further split into the
numba sweep itself (called directly, without ``jax.pure_callback``), its supervised factor
(the same sweep with no response) and the callback/copy overhead.

Single thread: unless already set in the environment, the script sets
``OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS = --blas-threads`` (default 1) and
XLA's single-threaded CPU flags *before* importing numpy and jax. (The eta block's QR is a
LAPACK call into OpenBLAS; with 2 OpenBLAS threads on a busy 2-core box it was measured to cost
100x more: try ``--blas-threads 2``.)

Usage::

    pip install -e ".[bench]"
    python benchmarks/bench_tomotopy.py --topics 20 50 100 --iterations 50 --json out.json
    python benchmarks/bench_tomotopy.py --topics 50 --profile 50
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import time

SHORT = 2  # iterations of the short run whose time is subtracted (see module docstring)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topics", type=int, nargs="+", default=[20, 50, 100], metavar="K",
                   help="numbers of topics to compare (default: 20 50 100)")
    p.add_argument("--iterations", type=int, default=50,
                   help="timed Gibbs iterations per run (default: 50)")
    p.add_argument("--model", choices=("gslda", "medlda"), default="gslda",
                   help="our model (tomotopy always runs its logistic sLDA); default gslda")
    p.add_argument("--repeats", type=int, default=1,
                   help="interleaved (ours, tomotopy) measurement pairs per K (default: 1)")
    p.add_argument("--data", default="20news-binary", help="data set name for load_dataset")
    p.add_argument("--c", type=float, default=1.0, help="regularisation constant c (default 1)")
    p.add_argument("--alpha", type=float, default=1.0,
                   help="total Dirichlet concentration; per topic alpha/K (default 1)")
    p.add_argument("--beta", type=float, default=0.01, help="topic-word Dirichlet (default 0.01)")
    p.add_argument("--nu2", type=float, default=1.0, help="prior variance of eta (default 1)")
    p.add_argument("--seed", type=int, default=0, help="base random seed (default 0)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    p.add_argument("--profile", type=int, nargs="?", const=50, default=None, metavar="K",
                   help="break one of our iterations into its blocks at K topics (default 50)")
    p.add_argument("--profile-only", action="store_true",
                   help="skip the comparison, run only --profile")
    p.add_argument("--profile-calls", type=int, default=10,
                   help="timed calls per part in --profile (median reported; default 10)")
    p.add_argument("--profile-burnin", type=int, default=20,
                   help="iterations run before profiling so that eta is not zero (default 20)")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="OpenBLAS/OMP/MKL threads unless set in the environment (default 1)")
    args = p.parse_args(argv)
    if args.iterations < 1 or args.repeats < 1:
        p.error("--iterations and --repeats must be >= 1")
    if args.profile_only and args.profile is None:
        args.profile = 50
    return args


from _machine import machine_description, set_single_thread  # noqa: E402  (before numpy/jax)


ARGS = parse_args() if __name__ == "__main__" else None
THREAD_ENV = set_single_thread(ARGS.blas_threads if ARGS else 1)

# heavy imports only after the thread settings above
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from numpyro.infer import MCMC  # noqa: E402

from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.kernels.gibbs import GibbsKernel  # noqa: E402
from topiczoo.models import gslda, medlda  # noqa: E402
from topiczoo.models.supervised import corpus_data, task_of  # noqa: E402


# --------------------------------------------------------------------------------------------
# helpers


class Timer:
    """Wall-clock and process-CPU seconds of a with-block."""

    def __enter__(self):
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.w0
        self.cpu = time.process_time() - self.c0


def build_model(args, num_topics):
    if args.model == "gslda":
        return gslda(num_topics, c=args.c, alpha=args.alpha, beta=args.beta, nu2=args.nu2)
    return medlda(num_topics, c=args.c, alpha=args.alpha, beta=args.beta, nu2=args.nu2)



def versions() -> dict:
    import numba
    import numpyro
    import tomotopy

    out = {"jax": jax.__version__, "numpyro": numpyro.__version__, "numba": numba.__version__,
           "numpy": np.__version__, "tomotopy": tomotopy.__version__,
           "tomotopy_isa": getattr(tomotopy, "isa", "?")}
    try:
        from threadpoolctl import threadpool_info

        out["blas"] = [{k: d.get(k) for k in ("internal_api", "num_threads", "prefix")}
                       for d in threadpool_info() if d.get("user_api") == "blas"]
    except Exception:  # threadpoolctl is optional
        pass
    return out


# --------------------------------------------------------------------------------------------
# ours


class Ours:
    """Runs of this project's Gibbs kernel inside numpyro's MCMC (one chain)."""

    def __init__(self, args, corpus, num_topics):
        self.model = build_model(args, num_topics)
        self.task = task_of(self.model, corpus)
        self.data = corpus_data(self.model, corpus, self.task)
        self.vocab_size = corpus.vocab_size
        self.seed = args.seed

    def run(self, num_samples, seed):
        mcmc = MCMC(GibbsKernel(self.model, self.vocab_size, task=self.task), num_warmup=0,
                    num_samples=num_samples, num_chains=1, progress_bar=False,
                    jit_model_args=True)
        with Timer() as t:
            mcmc.run(jax.random.PRNGKey(seed), self.data)
            jax.block_until_ready(mcmc.last_state)
            jax.block_until_ready(mcmc.get_samples())
        assert int(mcmc.last_state.iteration) == num_samples
        return t, mcmc

    def warm_up(self):
        self.run(SHORT, self.seed)

    def measure(self, iterations, seed):
        """Seconds per iteration (wall, cpu) = (t(SHORT+it) - t(SHORT)) / it, compile excluded."""
        short, _ = self.run(SHORT, seed)
        long, mcmc = self.run(SHORT + iterations, seed)
        acc = float(np.asarray(mcmc.get_samples()["train_accuracy"])[-1])
        return {"wall": (long.wall - short.wall) / iterations,
                "cpu": (long.cpu - short.cpu) / iterations,
                "run_wall_short": short.wall, "run_wall_long": long.wall,
                "final_train_accuracy": acc}


# --------------------------------------------------------------------------------------------
# tomotopy


def tomotopy_documents(corpus):
    vocab = corpus.vocabulary
    return [[vocab[w] for w in corpus.document(d)] for d in range(corpus.num_docs)]


def build_tomotopy(args, docs, labels, num_topics, seed):
    import tomotopy as tp

    mdl = tp.SLDAModel(k=num_topics, vars=["b"], alpha=args.alpha / num_topics, eta=args.beta,
                       mu=[0.0], nu_sq=[args.nu2], glm_param=[args.c], seed=seed)
    for words, y in zip(docs, labels):
        mdl.add_doc(words, y=[float(y)])
    mdl.optim_interval = 0  # no alpha optimisation (ours keeps alpha fixed)
    mdl.train(0, workers=1)  # initialisation only
    return mdl


def check_tomotopy_corpus(mdl, corpus, docs) -> dict:
    """Did tomotopy keep every token? Compare counts and per-document word multisets."""
    from collections import Counter

    vocabs = mdl.vocabs
    same_docs = len(mdl.docs) == corpus.num_docs
    mismatched = 0
    if same_docs:
        # (iterate: integer indexing of tomotopy's corpus object is unreliable in 0.14)
        for doc, words in zip(mdl.docs, docs):
            if Counter(vocabs[i] for i in doc.words) != Counter(words):
                mismatched += 1
    return {"num_docs": len(mdl.docs), "ours_num_docs": corpus.num_docs,
            "num_words": int(mdl.num_words), "ours_num_tokens": int(corpus.num_tokens),
            "used_vocabs": len(mdl.used_vocabs), "ours_vocab_size": int(corpus.vocab_size),
            "documents_with_different_words": mismatched if same_docs else None,
            "identical": bool(same_docs and mismatched == 0
                              and mdl.num_words == corpus.num_tokens
                              and len(mdl.used_vocabs) == corpus.vocab_size)}


def measure_tomotopy(args, docs, labels, num_topics, iterations, seed):
    mdl = build_tomotopy(args, docs, labels, num_topics, seed)
    mdl.train(SHORT, workers=1)  # the iterations our short run also pays for
    step0 = mdl.global_step
    with Timer() as t:
        mdl.train(iterations, workers=1)
    steps = mdl.global_step - step0
    if steps != iterations:
        raise RuntimeError(f"tomotopy train({iterations}) ran {steps} iterations")
    return {"wall": t.wall / iterations, "cpu": t.cpu / iterations, "global_steps": steps,
            "model": mdl}


# --------------------------------------------------------------------------------------------
# comparison


def compare(args, ds):
    corpus = ds.train
    n_tokens = corpus.num_tokens
    docs = tomotopy_documents(corpus)
    labels = np.asarray(corpus.labels)
    if labels.ndim != 1 or not np.isin(labels, (0, 1)).all():
        raise SystemExit(f"{args.data}: this benchmark needs one binary 0/1 label per document")
    rows, corpus_check = [], None
    for num_topics in args.topics:
        ours = Ours(args, corpus, num_topics)
        ours.warm_up()
        reps = []
        for r in range(args.repeats):
            seed = args.seed + r
            o = ours.measure(args.iterations, seed)
            t = measure_tomotopy(args, docs, labels, num_topics, args.iterations, seed + 1)
            if corpus_check is None:
                corpus_check = check_tomotopy_corpus(t["model"], corpus, docs)
            del t["model"]
            reps.append({"ours": o, "tomotopy": t})
            print(f"  K={num_topics:<4d} repeat {r + 1}/{args.repeats}: "
                  f"ours {o['wall'] * 1e3:8.2f} ms/it (cpu {o['cpu'] * 1e3:8.2f}), "
                  f"tomotopy {t['wall'] * 1e3:8.2f} ms/it (cpu {t['cpu'] * 1e3:8.2f})",
                  flush=True)
        row = {"K": num_topics, "repeats": reps}
        for clock in ("wall", "cpu"):
            o_s = np.median([rep["ours"][clock] for rep in reps])
            t_s = np.median([rep["tomotopy"][clock] for rep in reps])
            ratios = [rep["tomotopy"][clock] / rep["ours"][clock] for rep in reps]
            row[clock] = {
                "ours_Mtok_it_per_s": n_tokens / o_s / 1e6,
                "tomotopy_Mtok_it_per_s": n_tokens / t_s / 1e6,
                "ratio_ours_over_tomotopy": float(np.median(ratios)),
                "ours_ns_per_token": o_s / n_tokens * 1e9,
                "tomotopy_ns_per_token": t_s / n_tokens * 1e9,
                "ours_ms_per_iteration": o_s * 1e3,
                "tomotopy_ms_per_iteration": t_s * 1e3,
            }
        rows.append(row)
    return rows, corpus_check


def print_table(rows, n_tokens):
    head = (f"{'K':>5} | {'ours M tok-it/s':>15} | {'tomotopy M tok-it/s':>19} | "
            f"{'ours/tomotopy':>13} | {'ours ns/tok':>11} | {'tomotopy ns/tok':>15} | "
            f"{'ratio (CPU time)':>16}")
    print(head)
    print("-" * len(head))
    for row in rows:
        w, c = row["wall"], row["cpu"]
        print(f"{row['K']:>5} | {w['ours_Mtok_it_per_s']:>15.2f} | "
              f"{w['tomotopy_Mtok_it_per_s']:>19.2f} | {w['ratio_ours_over_tomotopy']:>13.3f} | "
              f"{w['ours_ns_per_token']:>11.0f} | {w['tomotopy_ns_per_token']:>15.0f} | "
              f"{c['ratio_ours_over_tomotopy']:>16.3f}")
    print(f"(wall clock, median over repeats; {n_tokens} training tokens; ratio > 1 means ours "
          f"is faster; last column: the same ratio from process CPU time)")


# --------------------------------------------------------------------------------------------
# profile


def _time_calls(fn, calls):
    fn()  # compile / warm
    walls, cpus = [], []
    for _ in range(calls):
        with Timer() as t:
            fn()
        walls.append(t.wall)
        cpus.append(t.cpu)
    return float(np.median(walls)), float(np.median(cpus))


def profile(args, ds, num_topics):
    corpus = ds.train
    n_tokens = corpus.num_tokens
    model = build_model(args, num_topics)
    task = task_of(model, corpus)
    data = corpus_data(model, corpus, task)
    kernel = GibbsKernel(model, corpus.vocab_size, task=task)
    chain = kernel.init(jax.random.PRNGKey(args.seed), 0, None, (data,), {})  # ChainState
    sample = jax.jit(lambda s, d: kernel.sample(s, (d,), {}))
    for _ in range(args.profile_burnin):
        chain = sample(chain, data)
    chain = jax.block_until_ready(chain)
    state = chain.state  # the family's state: ParametricState(z, n_dk, ..., eta, augmentation)
    key = jax.random.PRNGKey(args.seed + 12345)

    parts = {}
    for block in kernel.sampler.blocks:  # eta_block, topics_block, augmentation_block
        name = block.__name__.removesuffix("_block")
        fn = jax.jit(lambda k, s, d, block=block: block(k, s, d))
        parts[f"block '{name}'"] = _time_calls(
            lambda fn=fn: jax.block_until_ready(fn(key, state, data)), args.profile_calls)
    mon = jax.jit(kernel.sampler.monitors)
    parts["monitors"] = _time_calls(lambda: jax.block_until_ready(mon(state, data)),
                                    args.profile_calls)
    total_parts = sum(v[1] for v in parts.values())
    parts["kernel.sample (all, jitted)"] = _time_calls(
        lambda: jax.block_until_ready(sample(chain, data)), args.profile_calls)

    # inside the topic block: the numba sweep without the callback, with and without response
    detail = {}
    try:
        from jax.scipy.special import gammaln

        from topiczoo.kernels import topics as topics_mod
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "tests"))
        from topic_state_steps import collapsed_log_likelihood, counts_from_assignments

        sweep = topics_mod._collapsed_sweep
        if model.response is not None:
            psi, rho = model.response.gaussian_form(data.y, state.augmentation)
        else:
            psi = rho = jnp.zeros((0, corpus.num_docs))
        topics = counts_from_assignments(state.z, data.words, data.doc_ids, corpus.num_docs,
                                         num_topics, corpus.vocab_size)  # z and its counts
        base = [np.array(a, dtype=np.int32) for a in topics]
        words = np.asarray(data.words)
        offsets = np.asarray(data.doc_offsets)
        eta = np.asarray(state.eta, np.float64)
        psi, rho = np.asarray(psi, np.float64), np.asarray(rho, np.float64)

        def raw(eta=eta, psi=psi, rho=rho):
            arrays = [a.copy() for a in base]
            sweep(*arrays, words, offsets, eta, psi, rho, model.alpha_per_topic, model.beta, 1)

        detail["numba sweep, called directly"] = _time_calls(raw, args.profile_calls)
        detail["numba sweep without response (LDA)"] = _time_calls(
            lambda: raw(eta[:0], psi[:0], rho[:0]), args.profile_calls)
        detail["copy of z and counts (4 arrays)"] = _time_calls(
            lambda: [a.copy() for a in base], args.profile_calls)
        ll = jax.jit(lambda tp: collapsed_log_likelihood(tp, model.beta))
        detail["collapsed_log_likelihood (XLA)"] = _time_calls(
            lambda: jax.block_until_ready(ll(topics)), args.profile_calls)
        # the same log-likelihood from a lookup table of lgamma(n + beta) - lgamma(beta)
        table = gammaln(jnp.arange(n_tokens + 1, dtype=jnp.float32) + model.beta) - gammaln(
            model.beta)
        vb = corpus.vocab_size * model.beta

        def ll_table(tp):
            n_k = tp.n_k.astype(jnp.float32)
            return (gammaln(vb) - gammaln(n_k + vb)).sum() + jnp.take(table, tp.n_wk).sum()

        llt = jax.jit(ll_table)
        detail["  (alternative: lookup-table log-likelihood)"] = _time_calls(
            lambda: jax.block_until_ready(llt(topics)), args.profile_calls)
        detail_check = {"log_likelihood": float(ll(topics)),
                        "lookup_table_log_likelihood": float(llt(topics))}
    except Exception as exc:  # private helpers moved: report what is available
        detail_check = {"error": f"detail skipped: {type(exc).__name__}: {exc}"}

    print(f"\nProfile of one of our iterations: {model.name}, K={num_topics}, {n_tokens} tokens, "
          f"state after {args.profile_burnin} iterations, median of {args.profile_calls} calls")
    head = f"{'part':<45} | {'wall ms':>8} | {'CPU ms':>8} | {'CPU ns/tok':>10} | {'share':>6}"
    print(head)
    print("-" * len(head))
    for name, (w, c) in parts.items():
        share = f"{c / total_parts:6.1%}" if not name.startswith("kernel") else ""
        print(f"{name:<45} | {w * 1e3:8.2f} | {c * 1e3:8.2f} | {c / n_tokens * 1e9:10.1f} | "
              f"{share:>6}")
    if detail:
        print("inside the blocks:")
        for name, (w, c) in detail.items():
            print(f"  {name:<43} | {w * 1e3:8.2f} | {c * 1e3:8.2f} | "
                  f"{c / n_tokens * 1e9:10.1f} |")
        if "numba sweep, called directly" in detail and "block 'topics'" in parts:
            sw = detail["numba sweep, called directly"][1]
            lda = detail["numba sweep without response (LDA)"][1]
            top = parts["block 'topics'"][1]
            print(f"  => supervised factor in the sweep: {(sw - lda) * 1e3:.2f} ms "
                  f"({(sw - lda) / n_tokens * 1e9:.0f} ns/token); callback + conversion "
                  f"overhead of the topic block: {(top - sw) * 1e3:.2f} ms")
    print(f"  {detail_check}")
    return {"K": num_topics, "model": model.name, "tokens": n_tokens,
            "parts_ms": {k: {"wall": v[0] * 1e3, "cpu": v[1] * 1e3} for k, v in parts.items()},
            "detail_ms": {k.strip(): {"wall": v[0] * 1e3, "cpu": v[1] * 1e3}
                          for k, v in detail.items()},
            "checks": detail_check}


# --------------------------------------------------------------------------------------------


def main(args):
    ds = load_dataset(args.data)
    machine = machine_description()
    vers = versions()
    started = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    print(f"bench_tomotopy  {started}")
    print(f"data: {ds.summary()}")
    print(f"model: ours {args.model} (c={args.c}, alpha={args.alpha} total = alpha/K per topic, "
          f"beta={args.beta}, nu2={args.nu2}) vs tomotopy SLDAModel(vars=['b'], "
          f"alpha=alpha/K, eta=beta, nu_sq=[nu2], glm_param=[c], optim_interval=0), "
          f"1 chain, workers=1")
    print(f"iterations: {args.iterations} timed (after {SHORT} untimed), repeats: "
          f"{args.repeats}, interleaved ours/tomotopy")
    print(f"machine: {machine}")
    print(f"versions: {vers}")
    print(f"threads: {THREAD_ENV}\n")

    out = {"date": started, "machine": machine, "versions": vers, "threads": THREAD_ENV,
           "data": args.data, "data_summary": ds.summary(),
           "train_tokens": int(ds.train.num_tokens),
           "settings": {k: v for k, v in vars(args).items() if k != "json"},
           "method": "ours: (t(MCMC run of SHORT+it) - t(run of SHORT)) / it, SHORT=2; "
                     "tomotopy: time of train(it) after train(0) and train(SHORT)"}
    if not args.profile_only:
        rows, corpus_check = compare(args, ds)
        print()
        print_table(rows, ds.train.num_tokens)
        print(f"\ntomotopy corpus check: {corpus_check}")
        print(f"tomotopy train(n) check: global_step advanced by exactly n={args.iterations} "
              f"in every timed call")
        if corpus_check and not corpus_check["identical"]:
            print("WARNING: tomotopy's corpus differs from ours (see the counts above)")
        out["results"] = rows
        out["tomotopy_corpus_check"] = corpus_check
    if args.profile is not None:
        out["profile"] = profile(args, ds, args.profile)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2, default=float)
        print(f"\nwrote {args.json}")
    return out


if __name__ == "__main__":
    sys.exit(0 if main(ARGS) else 1)
