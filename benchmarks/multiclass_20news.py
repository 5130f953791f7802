#!/usr/bin/env python
"""Multi-class 20 Newsgroups (20 classes): multi-task vs one-vs-all Gibbs MedLDA vs tomotopy.

Runs, on ``load_dataset("20news")`` (bydate split, English stop words removed, test words
outside the training vocabulary dropped), with the JMLR paper's multi-class settings
(section 6.3: alpha = 1 total, i.e. alpha/K per topic, beta = 0.01, nu2 = 1, c = 1, ell = 64):

1. ``mt-medlda``: multi-task Gibbs MedLDA, ``medlda_multitask(K, 20, c=1, ell=64)``, one hinge
   task per class on shared topics, prediction argmax_t eta_t . zbar (section 5.2 / 6.3.2);
2. ``ova-medlda``: one-vs-all Gibbs MedLDA, 20 independent binary ``medlda(K, c=1, ell=64)``
   models (each with its own K topics), argmax of their scores (section 6.3.1);
3. ``tomotopy``: tomotopy 0.14 ``SLDAModel(k=K, vars=["b"] * 20)`` -- one logistic response
   per class (one-vs-rest 0/1 labels, ``glm_param = c = 1``, ``alpha/K``, ``eta = beta``,
   ``nu_sq = nu2``, no alpha optimisation), trained with ``train(n, workers=1)``; test
   prediction = argmax over the 20 responses of ``mdl.estimate`` after ``mdl.infer(docs,
   iterations=--tomotopy-infer-iterations, workers=1)``;
4. ``mt-gslda`` (optional): multi-task logistic sLDA, ``gslda_multitask(K, 20, c=1)``.

Ours (1, 2, 4) are fitted with :func:`topiczoo.fit.fit` (``--chains`` chains, vectorised, on
one thread; ``--iterations`` Gibbs cycles per chain, ``--burnin`` (default half) before the
first of ``--snapshots`` snapshots) and predicted with :func:`topiczoo.predict.predict`
(``--test-burnin`` test sweeps, then ``--test-draws`` kept draws, per chain and snapshot); the
accuracy is reported for all four averaging strategies (sf, sa, mf, ma; see
``topiczoo.predict``).

Timing
------
* ours: ``train_seconds`` is the wall time of all ``MCMC.run`` calls of the fit, compilation
  included (with JAX's persistent compilation cache, as a user runs it). ``steady s/it`` is
  the wall time of the chunks after the first divided by their iterations (the first chunk
  pays for tracing, compilation and initialisation); it still includes the re-compilation
  cache hits (about 0.5 s per new chunk length) and numpyro's per-draw monitors.
  ``M tok-it/s`` = training tokens x iterations x chains / train_seconds.
* tomotopy: one chain (one model), one worker. ``train(0)`` (initialisation, timed
  separately as ``init s``), then ``train(--iterations)`` timed; ``train s`` = the latter.
* ratio = (ours seconds per chain) / (tomotopy seconds) at equal K and iterations, i.e.
  tomotopy's token-it/s over ours (< 1 means ours is faster). Vectorised chains run one after
  another on one core, so seconds per chain is the cost of one chain.
* RSS: current resident set size after each phase and the process peak so far (ru_maxrss).

Threads: unless set in the environment, ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` /
``MKL_NUM_THREADS`` = 1 and XLA's single-thread flags are set before numpy and jax are
imported.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/multiclass_20news.py \\
        --topics 40 100 --chains 4 --iterations 80 --ova-topics 40 --ova-chains 1 \\
        --tomotopy-topics 40 100 --gslda-topics 40
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import resource
import shlex
import sys
import time

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "multiclass_20news")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="20news", help="multi-class data set (default 20news)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--topics", type=int, nargs="*", default=[40, 100], metavar="K",
                   help="K of multi-task Gibbs MedLDA (default 40 100)")
    p.add_argument("--ova-topics", type=int, nargs="*", default=[40], metavar="K",
                   help="K of each one-vs-all binary Gibbs MedLDA (default 40; none to skip)")
    p.add_argument("--tomotopy-topics", type=int, nargs="*", default=[40], metavar="K",
                   help="K of tomotopy's 20-response SLDA (default 40; none to skip)")
    p.add_argument("--gslda-topics", type=int, nargs="*", default=[], metavar="K",
                   help="K of multi-task gSLDA (default: skipped)")
    p.add_argument("--chains", type=int, default=4, help="chains of the multi-task fits")
    p.add_argument("--ova-chains", type=int, default=1, help="chains of each one-vs-all model")
    p.add_argument("--iterations", type=int, default=80, help="Gibbs cycles per chain/model")
    p.add_argument("--burnin", type=int, default=None, help="default: half of --iterations")
    p.add_argument("--snapshots", type=int, default=5, help="training snapshots for prediction")
    p.add_argument("--test-burnin", type=int, default=20)
    p.add_argument("--test-draws", type=int, default=10)
    p.add_argument("--tomotopy-infer-iterations", type=int, default=20,
                   help="tomotopy infer() iterations on the test set (default 20)")
    p.add_argument("--c", type=float, default=1.0)
    p.add_argument("--ell", type=float, default=64.0)
    p.add_argument("--alpha", type=float, default=1.0, help="total; alpha/K per topic")
    p.add_argument("--beta", type=float, default=0.01)
    p.add_argument("--nu2", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=DEFAULT_OUT,
                   help="output prefix: writes PREFIX.json and PREFIX.txt "
                        "(default benchmarks/results/multiclass_20news)")
    p.add_argument("--no-write", action="store_true", help="print only (smoke runs)")
    p.add_argument("--blas-threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.iterations < 2:
        p.error("--iterations must be >= 2")
    if args.burnin is None:
        args.burnin = args.iterations // 2
    return args


from _machine import machine_description, set_single_thread  # noqa: E402  (before numpy/jax)


ARGS = parse_args() if __name__ == "__main__" else None
THREAD_ENV = set_single_thread(ARGS.blas_threads if ARGS else 1)

import numpy as np  # noqa: E402

from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.fit import fit  # noqa: E402
from topiczoo.models import gslda_multitask, medlda, medlda_multitask  # noqa: E402
from topiczoo.ova import one_vs_all  # noqa: E402
from topiczoo.predict import STRATEGIES, predict  # noqa: E402


# --------------------------------------------------------------------------------------------
# helpers


def rss_mb() -> dict:
    """Current RSS (from /proc) and the process peak so far (ru_maxrss), in MB."""
    cur = float("nan")
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    cur = int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rss_mb": round(cur, 1), "peak_rss_mb": round(peak, 1)}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def steady_seconds_per_iteration(result) -> float:
    """Wall seconds per iteration over the chunks after the first (see module docstring).

    Every draw carries its chunk's wall time / chunk length (``time_per_iteration``); the first
    chunk is the run of draws sharing the first draw's value.
    """
    tpi = np.asarray(result.sample_stats["time_per_iteration"])[0]  # [S], same for all chains
    later = np.flatnonzero(tpi != tpi[0])
    if len(later) == 0:
        return float("nan")
    return float(tpi[later[0]:].mean())



def versions() -> dict:
    out = {}
    for mod in ("topiczoo", "numpy", "jax", "numpyro", "numba", "tomotopy"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:
            out[mod] = None
    return out


# --------------------------------------------------------------------------------------------
# ours


def run_ours(kind, K, args, ds):
    train, test = ds.train, ds.test
    y_test = np.asarray(test.labels)
    L = len(ds.label_names)
    common = dict(alpha=args.alpha, beta=args.beta, nu2=args.nu2)
    if kind == "mt-medlda":
        model = medlda_multitask(K, L, c=args.c, ell=args.ell, **common)
    elif kind == "mt-gslda":
        model = gslda_multitask(K, L, c=args.c, **common)
    else:
        raise ValueError(kind)
    log(f"== {kind} K={K}: {args.chains} chains x {args.iterations} iterations "
        f"(burn-in {args.burnin}, {args.snapshots} snapshots)")
    tic = time.perf_counter()
    result = fit(model, train, num_chains=args.chains, num_iterations=args.iterations,
                 num_burnin=args.burnin, num_snapshots=args.snapshots, seed=args.seed,
                 progress=True)
    fit_wall = time.perf_counter() - tic
    mem_fit = rss_mb()
    tic = time.perf_counter()
    pred = predict(result, test, num_burnin=args.test_burnin, num_draws=args.test_draws,
                   seed=args.seed)
    predict_seconds = time.perf_counter() - tic
    acc = {s: pred.accuracy(y_test, s) for s in STRATEGIES}
    post = result.posterior_draws()
    train_acc = float(np.mean(post["train_accuracy"][:, -1])) if "train_accuracy" in post else None
    snap_bytes = sum(a.nbytes for s in result.snapshots for a in s.arrays.values())
    row = {
        "method": kind, "K": K, "chains": args.chains, "iterations": args.iterations,
        "burnin": args.burnin, "snapshots": len(result.snapshots),
        "accuracy": acc, "final_train_accuracy": train_acc,
        "train_seconds": result.train_seconds, "fit_wall_seconds": fit_wall,
        "steady_seconds_per_iteration": steady_seconds_per_iteration(result),
        "train_seconds_per_chain": result.train_seconds / args.chains,
        "token_iterations_per_second": result.token_iterations_per_second,
        "predict_seconds": predict_seconds, "snapshot_megabytes": snap_bytes / 2**20,
        "memory_after_fit": mem_fit, "memory_after_predict": rss_mb(),
    }
    log(f"   {kind} K={K}: " + "  ".join(f"{s} {a:.4f}" for s, a in acc.items())
        + f" | train {result.train_seconds:.1f} s, predict {predict_seconds:.1f} s, "
          f"{row['token_iterations_per_second'] / 1e6:.2f} M tok-it/s, {row['memory_after_predict']}")
    del result, pred
    return row


def run_ova(K, args, ds):
    train, test = ds.train, ds.test
    y_test = np.asarray(test.labels)
    log(f"== ova-medlda K={K}: {train.num_classes} binary models x {args.ova_chains} chains x "
        f"{args.iterations} iterations")
    tic = time.perf_counter()
    rss_per_model = []  # RSS when each binary model is built (before its fit)

    def make_model():
        rss_per_model.append(rss_mb()["rss_mb"])
        return medlda(K, c=args.c, ell=args.ell, alpha=args.alpha, beta=args.beta, nu2=args.nu2)

    pred, timing = one_vs_all(make_model, train, test,
                              predict_kwargs=dict(num_burnin=args.test_burnin,
                                                  num_draws=args.test_draws, seed=args.seed),
                              num_chains=args.ova_chains, num_iterations=args.iterations,
                              num_burnin=args.burnin, num_snapshots=args.snapshots,
                              seed=args.seed, progress=True)
    total = time.perf_counter() - tic
    acc = {s: pred.accuracy(y_test, s) for s in STRATEGIES}
    row = {
        "method": "ova-medlda", "K": K, "chains": args.ova_chains,
        "iterations": args.iterations, "burnin": args.burnin, "snapshots": args.snapshots,
        "models": int(pred.task.num_tasks),  # scores [C, I, J, L, D]: one model per class
        "accuracy": acc, "train_seconds": timing["train_seconds"],
        "train_seconds_per_chain": timing["train_seconds"] / args.ova_chains,
        "token_iterations_per_second": timing["token_iterations_per_second"],
        "predict_seconds": total - timing["train_seconds"], "memory_after_predict": rss_mb(),
        "rss_mb_before_each_model": rss_per_model,
    }
    log(f"   ova-medlda K={K}: " + "  ".join(f"{s} {a:.4f}" for s, a in acc.items())
        + f" | train {row['train_seconds']:.1f} s, predict {row['predict_seconds']:.1f} s")
    return row


# --------------------------------------------------------------------------------------------
# tomotopy


def run_tomotopy(K, args, ds):
    import tomotopy as tp

    train, test = ds.train, ds.test
    L = len(ds.label_names)
    vocab = train.vocabulary
    y_train = np.asarray(train.labels)
    y_test = np.asarray(test.labels)
    log(f"== tomotopy SLDA K={K}: {L} binary responses, {args.iterations} iterations, "
        f"workers=1; test infer {args.tomotopy_infer_iterations} iterations")
    mdl = tp.SLDAModel(k=K, vars=["b"] * L, alpha=args.alpha / K, eta=args.beta,
                       mu=[0.0] * L, nu_sq=[args.nu2] * L, glm_param=[args.c] * L,
                       seed=args.seed + 1)
    for d in range(train.num_docs):
        y = np.zeros(L)
        y[y_train[d]] = 1.0
        mdl.add_doc([vocab[w] for w in train.document(d)], y=y.tolist())
    mdl.optim_interval = 0
    tic = time.perf_counter()
    mdl.train(0, workers=1)
    init_seconds = time.perf_counter() - tic
    corpus_ok = (int(mdl.num_words) == int(train.num_tokens)
                 and len(mdl.used_vocabs) == int(train.vocab_size)
                 and len(mdl.docs) == train.num_docs)
    step0 = mdl.global_step
    tic = time.perf_counter()
    mdl.train(args.iterations, workers=1)
    train_seconds = time.perf_counter() - tic
    if mdl.global_step - step0 != args.iterations:
        raise RuntimeError(f"tomotopy ran {mdl.global_step - step0} iterations")
    # training accuracy from the model's own estimate on the training documents
    train_scores = np.asarray(mdl.estimate(list(mdl.docs)))
    train_acc = float(np.mean(np.argmax(train_scores, axis=1) == y_train))
    # test: make_doc + infer (few iterations: it is slow), then estimate, argmax over responses
    tic = time.perf_counter()
    # (make_doc aborts the process on a document with no words: test documents left empty by
    # dropping out-of-vocabulary words get all-zero scores, i.e. class 0, as in ours where an
    # empty document has zbar = 0)
    keep = [d for d in range(test.num_docs) if len(test.document(d)) > 0]
    docs = [mdl.make_doc([vocab[w] for w in test.document(d)]) for d in keep]
    mdl.infer(docs, iterations=args.tomotopy_infer_iterations, workers=1)
    scores = np.zeros((test.num_docs, L))
    scores[keep] = np.asarray(mdl.estimate(docs))
    infer_seconds = time.perf_counter() - tic
    acc = float(np.mean(np.argmax(scores, axis=1) == y_test))
    row = {
        "method": "tomotopy-slda", "K": K, "chains": 1, "iterations": args.iterations,
        "accuracy": {"argmax": acc}, "final_train_accuracy": train_acc,
        "train_seconds": train_seconds, "init_seconds": init_seconds,
        "train_seconds_per_chain": train_seconds,
        "token_iterations_per_second": train.num_tokens * args.iterations / train_seconds,
        "predict_seconds": infer_seconds,
        "infer_iterations": args.tomotopy_infer_iterations,
        "estimate_shape": list(scores.shape), "corpus_identical_counts": corpus_ok,
        "empty_test_documents": test.num_docs - len(keep),
        "num_words": int(mdl.num_words), "memory_after_predict": rss_mb(),
    }
    log(f"   tomotopy K={K}: test acc {acc:.4f} (train {train_acc:.4f}) | train "
        f"{train_seconds:.1f} s (+ init {init_seconds:.1f} s), infer {infer_seconds:.1f} s")
    del mdl, docs
    return row


# --------------------------------------------------------------------------------------------
# table


def format_table(rows, n_tokens, n_test, n_classes) -> str:
    tomo = {r["K"]: r for r in rows if r["method"] == "tomotopy-slda"}
    head = (f"{'method':<14} {'K':>4} {'ch':>3} {'it':>4} | {'sf':>6} {'sa':>6} {'mf':>6} "
            f"{'ma':>6} | {'train s':>8} {'s/chain':>8} {'M tok-it/s':>10} {'vs tomo':>7} | "
            f"{'pred s':>7} {'RSS MB':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        a = r["accuracy"]
        if "argmax" in a:
            accs = f"{'':>6} {'':>6} {'':>6} {a['argmax']:>6.4f}"
        else:
            accs = " ".join(f"{a[s]:>6.4f}" for s in STRATEGIES)
        t = tomo.get(r["K"])
        ratio = (f"{r['train_seconds_per_chain'] / t['train_seconds']:>7.2f}"
                 if t is not None and r["method"] != "tomotopy-slda"
                 and r["iterations"] == t["iterations"] else f"{'':>7}")
        if r["method"] == "ova-medlda" and t is not None:
            # a model per class and chain: compare per binary model too (see footnote)
            ratio = f"{r['train_seconds_per_chain'] / t['train_seconds']:>7.2f}"
        mem = r.get("memory_after_predict", {}).get("peak_rss_mb", float("nan"))
        lines.append(
            f"{r['method']:<14} {r['K']:>4} {r['chains']:>3} {r['iterations']:>4} | {accs} | "
            f"{r['train_seconds']:>8.1f} {r['train_seconds_per_chain']:>8.1f} "
            f"{r['token_iterations_per_second'] / 1e6:>10.2f} {ratio} | "
            f"{r['predict_seconds']:>7.1f} {mem:>7.0f}")
    lines.append(
        f"accuracy: test accuracy ({n_test:,} docs) by averaging strategy (tomotopy: argmax of its "
        f"{n_classes} estimated responses, in the ma column); train s: wall seconds of training, "
        f"all chains (ours: compile included); s/chain: train s / chains; M tok-it/s: {n_tokens} "
        f"training tokens x iterations x chains (x {n_classes} models for ova) / train s; vs "
        f"tomo: s/chain over tomotopy's train s at equal K and iterations (< 1: ours faster; for "
        f"ova-medlda it covers all {n_classes} binary models); RSS MB: process peak so far.")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------


def main(args):
    started = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    t0 = time.perf_counter()
    ds = load_dataset(args.data, data_dir=args.data_dir, seed=args.seed)
    summary = ds.summary()
    log(f"multiclass_20news {started}\n{summary}\nthreads {THREAD_ENV}\n{rss_mb()}")
    rows = []
    plan = ([("tomotopy", k) for k in args.tomotopy_topics]
            + [("mt-medlda", k) for k in args.topics]
            + [("ova-medlda", k) for k in args.ova_topics]
            + [("mt-gslda", k) for k in args.gslda_topics])
    for kind, K in plan:
        tic = time.perf_counter()
        if kind == "tomotopy":
            row = run_tomotopy(K, args, ds)
        elif kind == "ova-medlda":
            row = run_ova(K, args, ds)
        else:
            row = run_ours(kind, K, args, ds)
        row["phase_wall_seconds"] = time.perf_counter() - tic
        rows.append(row)
        log(f"   phase {kind} K={K} took {row['phase_wall_seconds']:.1f} s; "
            f"elapsed {time.perf_counter() - t0:.0f} s")
        if not args.no_write:  # partial results survive an interrupted run
            write_outputs(args, started, ds, rows, t0, partial=True)
    return write_outputs(args, started, ds, rows, t0, partial=False)


def write_outputs(args, started, ds, rows, t0, partial):
    summary = ds.summary()
    rows = list(rows)
    # table order: multi-task, one-vs-all, gSLDA, tomotopy
    order = {"mt-medlda": 0, "ova-medlda": 1, "mt-gslda": 2, "tomotopy-slda": 3}
    rows.sort(key=lambda r: (order[r["method"]], r["K"]))
    table = format_table(rows, ds.train.num_tokens, ds.test.num_docs, ds.train.num_classes)
    header = (f"multiclass_20news  {started}\n{summary}\n"
              f"settings: alpha={args.alpha} (alpha/K per topic), beta={args.beta}, "
              f"nu2={args.nu2}, c={args.c}, ell={args.ell} (medlda); iterations "
              f"{args.iterations}, burn-in {args.burnin}, {args.snapshots} snapshots; test "
              f"burn-in {args.test_burnin}, {args.test_draws} draws per chain and snapshot; "
              f"tomotopy infer {args.tomotopy_infer_iterations} iterations, workers=1; "
              f"seed {args.seed}\n"
              f"command: {shlex.join(['python'] + sys.argv)}\n"
              f"threads: OPENBLAS_NUM_THREADS={THREAD_ENV['OPENBLAS_NUM_THREADS']}; "
              f"machine: {machine_description()}\n")
    text = (header + "\n" + table + f"\n\n{'elapsed (PARTIAL: run not finished)' if partial else 'total'}"
            f" wall time {time.perf_counter() - t0:.0f} s\n")
    if not partial:
        print(text)
    out = {"date": started, "command": sys.argv, "settings": vars(args), "data": summary,
           "train_tokens": int(ds.train.num_tokens), "test_tokens": int(ds.test.num_tokens),
           "threads": THREAD_ENV, "machine": machine_description(), "versions": versions(),
           "rows": rows,
           "total_wall_seconds": time.perf_counter() - t0, "partial": partial}
    if not args.no_write:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out + ".json", "w") as f:
            json.dump(out, f, indent=2, default=float)
        with open(args.out + ".txt", "w") as f:
            f.write(text)
        if not partial:
            log(f"wrote {args.out}.json and {args.out}.txt")
    return out


if __name__ == "__main__":
    main(ARGS)
