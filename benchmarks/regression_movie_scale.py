#!/usr/bin/env python
"""movie-scale regression, 5-fold cross-validation: Gibbs MedLDA regression and Gaussian sLDA
against tomotopy's ``SLDAModel`` with a linear response.

For every fold of ``load_folds("movie-scale", num_folds=5, seed=0)`` and every K:

* ``medlda``: ``medlda_regression(K, c=C, eps=1e-3, alpha=1, nu2=NU2)`` (JMLR section 5.1);
* ``slda``: ``slda_gaussian(K, learn_s2=True, a0=1, b0=0.01, alpha=1, nu2=NU2)`` (s2 drawn);
  both fitted by ``topiczoo.fit.fit`` (``--chains`` chains, ``--iterations`` Gibbs cycles, half
  burn-in, 5 snapshots) and predicted by ``topiczoo.predict.predict`` (test chains: 20 burn-in
  sweeps, 10 kept draws), strategy ``ma`` (the mean over chains, snapshots and test draws);
* ``tomotopy``: ``SLDAModel(k=K, vars=["l"], alpha=1/K, eta=0.01, mu=[0], nu_sq=[NU2],
  glm_param=[SIGMA2])`` (linear response; ``glm_param`` is the response variance sigma^2 of its
  topic sampler), alpha optimisation off (``optim_interval = 0``), the same training documents
  as word lists with the same ratings, ``train(--iterations, workers=1)`` (one chain);
  predictions: ``infer(test docs, iterations=--tomotopy-infer)`` then ``estimate``.
  ``tomotopy-default`` is the same with tomotopy's defaults ``glm_param=1, nu_sq=1`` (the
  setting behind the data README's peer numbers); ``tomotopy`` uses the tuned sigma^2.

Responses can be **centred**: the model is trained on y - mean(y_train) and the training mean
is added back to its test predictions (omega = eta . zbar has no intercept; since zbar sums to
one eta can absorb it, but the prior N(0, nu2) shrinks that). ``--center`` picks it per method.

Metrics: predictive R^2 = 1 - sum (y - yhat)^2 / sum (y - mean y)^2 and MSE, both
  * **pooled**: the test parts of the 5 folds partition the 5,006 reviews, so all out-of-fold
    predictions are put together and scored once (mean y = the mean over all reviews);
  * **fold mean**: R^2 of each fold's test part (mean y = that fold's test mean), averaged over
    the folds (sd over folds in brackets).
Training time: wall seconds of the fit (ours: ``FitResult.train_seconds``, compilation
included, all chains run vectorised in one process; tomotopy: ``train()``, one chain), plus
the seconds per Gibbs iteration of ours after the first chunk (compilation excluded).

Hyperparameters are chosen by ``--tune`` (writes ``results/regression_movie_scale.tuning.*``):
a grid on an inner 80/20 train/validation split of **fold 0's training part only** (test
documents are never used), K = ``--tune-topics``, scored by validation predictive R^2.

Single thread: unless set already, OPENBLAS/OMP/MKL_NUM_THREADS = 1 and XLA's single-threaded
CPU flags are set before numpy and jax are imported.

Usage::

    python benchmarks/regression_movie_scale.py --tune                 # the grid (fold 0 only)
    python benchmarks/regression_movie_scale.py --iterations 100       # the 5-fold table
    python benchmarks/regression_movie_scale.py --preprocessing shdp   # sHDP variant (log y)
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
METHODS = ("medlda", "slda", "tomotopy", "tomotopy-default")

# chosen by --tune (see results/regression_movie_scale.tuning.txt); overridable on the CLI
# (K=10, 100 iterations, 2 chains, validation R^2): MedLDA c in {64, 256, 1024} is a plateau
# (0.510-0.521, centred or not) far above c = 4 (0.30) and 16 (0.43-0.45): c = 256, its middle;
# centring and nu2 = 100 change nothing beyond noise (nu2 = 100: 0.496-0.500), so raw y, nu2 = 1.
# sLDA: raw y beats centred (0.277-0.282 vs 0.218-0.248); nu2 = 100 marginally best.
# tomotopy: glm_param (sigma^2) 0.0003 on raw y best (0.317; 1 -> 0.218).
DEFAULTS = dict(c=256.0, nu2=1.0, slda_nu2=100.0, tomotopy_sigma2=0.0003, tomotopy_nu2=1.0,
                center="none")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topics", type=int, nargs="+", default=[10, 30], metavar="K")
    p.add_argument("--folds", type=int, nargs="+", default=None, metavar="F",
                   help="which of the 5 folds to run (default all)")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--iterations", type=int, default=100, help="Gibbs cycles (all methods)")
    p.add_argument("--chains", type=int, default=4, help="chains of ours (tomotopy: 1)")
    p.add_argument("--preprocessing", choices=("default", "shdp"), default="default")
    p.add_argument("--c", type=float, default=DEFAULTS["c"], help="MedLDA regression c")
    p.add_argument("--eps", type=float, default=1e-3, help="MedLDA regression eps (paper 1e-3)")
    p.add_argument("--nu2", type=float, default=DEFAULTS["nu2"], help="MedLDA prior var of eta")
    p.add_argument("--slda-nu2", type=float, default=DEFAULTS["slda_nu2"],
                   help="sLDA prior variance of eta")
    p.add_argument("--tomotopy-sigma2", type=float, default=DEFAULTS["tomotopy_sigma2"],
                   help="tomotopy glm_param (response variance) of method 'tomotopy'")
    p.add_argument("--tomotopy-nu2", type=float, default=DEFAULTS["tomotopy_nu2"])
    p.add_argument("--tomotopy-infer", type=int, default=100,
                   help="tomotopy infer() iterations per test document (its default 100)")
    p.add_argument("--center", default=DEFAULTS["center"],
                   help="comma list of methods trained on centred ratings ('none' for none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tune", action="store_true",
                   help="run the hyperparameter grid on fold 0's training part instead")
    p.add_argument("--tune-topics", type=int, nargs="+", default=[10], metavar="K")
    p.add_argument("--tune-iterations", type=int, default=100)
    p.add_argument("--tune-chains", type=int, default=2)
    p.add_argument("--tune-grid", default="full", choices=("full", "small"))
    p.add_argument("--out", default=None,
                   help="output stem: a name in benchmarks/results or a path (default "
                        "regression_movie_scale[.shdp][.tuning])")
    p.add_argument("--blas-threads", type=int, default=1)
    p.add_argument("--data-dir", default=None,
                   help="folder holding movie_scale/ (default: topiczoo's find_data_dir)")
    args = p.parse_args(argv)
    args.center_set = set() if args.center in ("", "none") else set(args.center.split(","))
    bad = args.center_set - set(METHODS) - {"tomotopy"}
    if bad:
        p.error(f"--center: unknown methods {sorted(bad)}")
    return args


from _machine import set_single_thread  # noqa: E402  (before numpy/jax)


ARGS = parse_args() if __name__ == "__main__" else None
THREAD_ENV = set_single_thread(ARGS.blas_threads if ARGS else 1)

import numpy as np  # noqa: E402

from topiczoo.corpus import Corpus  # noqa: E402
from topiczoo.datasets import load_folds  # noqa: E402
from topiczoo.fit import fit  # noqa: E402
from topiczoo.metrics import mean_squared_error, predictive_r2  # noqa: E402
from topiczoo.models import medlda_regression, slda_gaussian  # noqa: E402
from topiczoo.predict import predict  # noqa: E402


# --------------------------------------------------------------------------------------------
# one train/test evaluation


def with_labels(corpus: Corpus, labels) -> Corpus:
    return Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary,
                  np.asarray(labels, np.float64))


def run_ours(kind, num_topics, train, test, *, iterations, chains, seed, center, c=1.0,
             eps=1e-3, nu2=1.0):
    """Fit ours on ``train`` and predict ``test``; returns (predictions [D_test], info)."""
    y = np.asarray(train.labels, np.float64)
    shift = float(y.mean()) if center else 0.0
    if kind == "medlda":
        model = medlda_regression(num_topics, c=c, eps=eps, alpha=1.0, nu2=nu2)
    else:
        model = slda_gaussian(num_topics, s2=float(np.var(y)), learn_s2=True, a0=1.0, b0=0.01,
                              alpha=1.0, nu2=nu2)
    corpus = with_labels(train, y - shift) if center else train
    fitted = fit(model, corpus, num_chains=chains, num_iterations=iterations, seed=seed,
                 progress=False)
    tic = time.perf_counter()
    pred = predict(fitted, test, num_burnin=20, num_draws=10, seed=seed)
    yhat = np.asarray(pred.labels("ma"), np.float64) + shift
    predict_seconds = time.perf_counter() - tic
    tpi = np.asarray(fitted.sample_stats["time_per_iteration"])[0]
    first_chunk = tpi[0]
    later = tpi[tpi != first_chunk] if np.any(tpi != first_chunk) else tpi
    post = fitted.posterior_draws()
    info = {"train_seconds": float(fitted.train_seconds),
            "seconds_per_iteration": float(np.median(later)),
            "predict_seconds": predict_seconds,
            "final_train_mse": float(np.mean(post["train_mse"][:, -1])) if "train_mse" in post
            else None,
            "eta_mean_last": float(np.mean(fitted.state.state.eta)),
            "center": center, "shift": shift}
    if kind == "slda":
        aug = np.asarray(fitted.state.state.augmentation)  # [C, T=1, D]: s2 per document
        info["s2_last"] = [float(v) for v in aug.reshape(chains, -1)[:, 0]]
    return yhat, info


def tomotopy_docs(corpus: Corpus):
    vocab = corpus.vocabulary
    return [[vocab[w] for w in corpus.document(d)] for d in range(corpus.num_docs)]


def run_tomotopy(num_topics, train, test, *, iterations, seed, center, sigma2=1.0, nu2=1.0,
                 infer_iterations=100, train_docs=None, test_docs=None):
    import tomotopy as tp

    y = np.asarray(train.labels, np.float64)
    shift = float(y.mean()) if center else 0.0
    train_docs = tomotopy_docs(train) if train_docs is None else train_docs
    test_docs = tomotopy_docs(test) if test_docs is None else test_docs
    mdl = tp.SLDAModel(k=num_topics, vars=["l"], alpha=1.0 / num_topics, eta=0.01, mu=[0.0],
                       nu_sq=[nu2], glm_param=[sigma2], seed=seed + 1)
    for words, yd in zip(train_docs, y - shift):
        mdl.add_doc(words, y=[float(yd)])
    mdl.optim_interval = 0  # alpha fixed, as ours
    tic = time.perf_counter()
    mdl.train(0, workers=1)
    mdl.train(iterations, workers=1)
    train_seconds = time.perf_counter() - tic
    if mdl.global_step != iterations:
        raise RuntimeError(f"tomotopy ran {mdl.global_step} iterations, not {iterations}")
    if mdl.num_words != train.num_tokens or len(mdl.docs) != train.num_docs:
        raise RuntimeError("tomotopy dropped training tokens or documents")
    tic = time.perf_counter()
    nonempty = [i for i, w in enumerate(test_docs) if w]
    docs = [mdl.make_doc(test_docs[i]) for i in nonempty]
    mdl.infer(docs, iterations=infer_iterations, workers=1)
    est = np.asarray(mdl.estimate(docs), np.float64).reshape(len(docs), -1)[:, 0]
    yhat = np.full(test.num_docs, float(y.mean()) - shift)  # empty test docs: training mean
    yhat[nonempty] = est
    predict_seconds = time.perf_counter() - tic
    return yhat + shift, {"train_seconds": train_seconds,
                          "seconds_per_iteration": train_seconds / iterations,
                          "predict_seconds": predict_seconds, "center": center, "shift": shift,
                          "empty_test_docs": test.num_docs - len(nonempty),
                          "coef": [float(v) for v in mdl.get_regression_coef(0)]}


def run_method(method, num_topics, train, test, args, *, iterations, chains, seed, docs=None):
    center = method in args.center_set or (method == "tomotopy-default"
                                           and "tomotopy" in args.center_set)
    if method == "medlda":
        return run_ours("medlda", num_topics, train, test, iterations=iterations, chains=chains,
                        seed=seed, center=center, c=args.c, eps=args.eps, nu2=args.nu2)
    if method == "slda":
        return run_ours("slda", num_topics, train, test, iterations=iterations, chains=chains,
                        seed=seed, center=center, nu2=args.slda_nu2)
    sigma2, nu2 = ((args.tomotopy_sigma2, args.tomotopy_nu2) if method == "tomotopy"
                   else (1.0, 1.0))
    docs = docs or {}
    return run_tomotopy(num_topics, train, test, iterations=iterations, seed=seed,
                        center=center, sigma2=sigma2, nu2=nu2,
                        infer_iterations=args.tomotopy_infer, train_docs=docs.get("train"),
                        test_docs=docs.get("test"))


# --------------------------------------------------------------------------------------------
# tuning


def tuning_grid(kind: str):
    """(method, settings) pairs of the grid."""
    grid = []
    if kind == "full":
        for center in (False, True):
            for c in (4.0, 16.0, 64.0, 256.0, 1024.0):
                grid.append(("medlda", dict(c=c, nu2=1.0, center=center)))
        for center in (False, True):
            grid.append(("medlda", dict(c=64.0, nu2=100.0, center=center)))
        for center in (False, True):
            for nu2 in (1.0, 100.0):
                grid.append(("slda", dict(nu2=nu2, center=center)))
        for center in (False, True):
            for sigma2 in (1.0, 0.03, 0.003, 0.0003):
                grid.append(("tomotopy", dict(sigma2=sigma2, nu2=1.0, center=center)))
    else:
        for c in (16.0, 64.0, 256.0):
            grid.append(("medlda", dict(c=c, nu2=1.0, center=True)))
        grid.append(("slda", dict(nu2=1.0, center=True)))
        for sigma2 in (0.003, 0.0003):
            grid.append(("tomotopy", dict(sigma2=sigma2, nu2=1.0, center=True)))
    return grid


def tune(args, folds, log):
    train = folds[0].train
    rng = np.random.default_rng(args.seed + 1000)
    perm = rng.permutation(train.num_docs)
    n_val = train.num_docs // 5
    inner_train, inner_val = train.subset(np.sort(perm[n_val:])), train.subset(np.sort(perm[:n_val]))
    yv = np.asarray(inner_val.labels, np.float64)
    log(f"tuning on fold 0's training part only: inner train D={inner_train.num_docs}, "
        f"validation D={inner_val.num_docs} (random 80/20, seed {args.seed + 1000}); "
        f"{args.tune_chains} chains, {args.tune_iterations} iterations; metric: validation "
        f"predictive R^2 (strategy ma)")
    docs = {"train": tomotopy_docs(inner_train), "test": tomotopy_docs(inner_val)}
    rows = []
    for num_topics in args.tune_topics:
        for method, s in tuning_grid(args.tune_grid):
            tic = time.perf_counter()
            if method == "tomotopy":
                yhat, info = run_tomotopy(num_topics, inner_train, inner_val,
                                          iterations=args.tune_iterations, seed=args.seed,
                                          center=s["center"], sigma2=s["sigma2"], nu2=s["nu2"],
                                          infer_iterations=args.tomotopy_infer,
                                          train_docs=docs["train"], test_docs=docs["test"])
            else:
                yhat, info = run_ours(method, num_topics, inner_train, inner_val,
                                      iterations=args.tune_iterations, chains=args.tune_chains,
                                      seed=args.seed, center=s["center"],
                                      c=s.get("c", 1.0), eps=args.eps, nu2=s["nu2"])
            row = {"K": num_topics, "method": method, **s,
                   "val_r2": predictive_r2(yv, yhat), "val_mse": mean_squared_error(yv, yhat),
                   "seconds": time.perf_counter() - tic, "info": info}
            rows.append(row)
            desc = ", ".join(f"{k}={v}" for k, v in s.items())
            log(f"  K={num_topics:<3d} {method:<9s} {desc:<40s} val R^2 {row['val_r2']:7.4f}  "
                f"MSE {row['val_mse']:.5f}  ({row['seconds']:.0f} s)")
    log("\nbest per method and K (validation R^2):")
    for num_topics in args.tune_topics:
        for method in ("medlda", "slda", "tomotopy"):
            cand = [r for r in rows if r["K"] == num_topics and r["method"] == method]
            if cand:
                best = max(cand, key=lambda r: r["val_r2"])
                desc = {k: best[k] for k in best if k in ("c", "nu2", "sigma2", "center")}
                log(f"  K={num_topics:<3d} {method:<9s} {desc}  val R^2 {best['val_r2']:.4f}")
    return {"inner_train_docs": inner_train.num_docs, "validation_docs": inner_val.num_docs,
            "rows": rows}


# --------------------------------------------------------------------------------------------
# cross-validation


def summarise(rows, y_all, fold_ids):
    """Pooled and fold-mean metrics per (method, K)."""
    out = []
    keys = sorted({(r["method"], r["K"]) for r in rows}, key=lambda k: (k[1], METHODS.index(k[0])))
    for method, num_topics in keys:
        rs = sorted((r for r in rows if r["method"] == method and r["K"] == num_topics),
                    key=lambda r: r["fold"])
        r2 = np.array([r["r2"] for r in rs])
        mse = np.array([r["mse"] for r in rs])
        entry = {"method": method, "K": num_topics, "folds": [r["fold"] for r in rs],
                 "r2_fold_mean": float(r2.mean()), "r2_fold_sd": float(r2.std(ddof=1))
                 if len(r2) > 1 else 0.0, "mse_fold_mean": float(mse.mean()),
                 "train_seconds_mean": float(np.mean([r["train_seconds"] for r in rs])),
                 "seconds_per_iteration_mean": float(np.mean(
                     [r["seconds_per_iteration"] for r in rs]))}
        if sorted(entry["folds"]) == sorted(fold_ids) and len(fold_ids) > 1:
            idx = np.concatenate([r["test_index"] for r in rs])
            yhat = np.concatenate([r["yhat"] for r in rs])
            ytrue = y_all[idx]
            entry["r2_pooled"] = predictive_r2(ytrue, yhat)
            entry["mse_pooled"] = mean_squared_error(ytrue, yhat)
        out.append(entry)
    return out


def describe(method, args):
    center = "centred" if (method in args.center_set or (
        method == "tomotopy-default" and "tomotopy" in args.center_set)) else "raw y"
    if method == "medlda":
        return f"medlda_regression(c={args.c:g}, eps={args.eps:g}, nu2={args.nu2:g}), {center}"
    if method == "slda":
        return f"slda_gaussian(learn_s2, a0=1, b0=0.01, nu2={args.slda_nu2:g}), {center}"
    if method == "tomotopy":
        return (f"tomotopy SLDAModel(vars=['l'], glm_param=[{args.tomotopy_sigma2:g}], "
                f"nu_sq=[{args.tomotopy_nu2:g}]), {center}")
    return f"tomotopy SLDAModel(vars=['l']) with defaults glm_param=[1], nu_sq=[1], {center}"


def cross_validate(args, folds, log):
    fold_ids = args.folds if args.folds is not None else list(range(len(folds)))
    n_all = sum(f.test.num_docs for f in folds)
    y_all = np.full(n_all, np.nan)
    for f in folds:
        y_all[np.asarray(f.test_index)] = np.asarray(f.test.labels, np.float64)
    rows = []
    for fold in fold_ids:
        ds = folds[fold]
        docs = None
        if any(m.startswith("tomotopy") for m in args.methods):
            docs = {"train": tomotopy_docs(ds.train), "test": tomotopy_docs(ds.test)}
        ytest = np.asarray(ds.test.labels, np.float64)
        for num_topics in args.topics:
            for method in args.methods:
                yhat, info = run_method(method, num_topics, ds.train, ds.test, args,
                                        iterations=args.iterations, chains=args.chains,
                                        seed=args.seed + fold, docs=docs)
                row = {"fold": fold, "K": num_topics, "method": method,
                       "r2": predictive_r2(ytest, yhat), "mse": mean_squared_error(ytest, yhat),
                       "train_seconds": info["train_seconds"],
                       "seconds_per_iteration": info["seconds_per_iteration"],
                       "predict_seconds": info["predict_seconds"], "info": info,
                       "test_index": np.asarray(ds.test_index), "yhat": yhat}
                rows.append(row)
                log(f"  fold {fold} K={num_topics:<3d} {method:<17s} R^2 {row['r2']:7.4f}  "
                    f"MSE {row['mse']:.5f}  train {info['train_seconds']:6.1f} s  "
                    f"({info['seconds_per_iteration'] * 1e3:6.1f} ms/it)  "
                    f"predict {info['predict_seconds']:5.1f} s")
    summary = summarise(rows, y_all, fold_ids)
    return rows, summary, fold_ids


def table(summary, args, n_folds):
    lines = []
    head = (f"{'K':>3} | {'method':<17} | {'R^2 pooled':>10} | {'R^2 fold mean (sd)':>19} | "
            f"{'MSE pooled':>10} | {'train s/fold':>12} | {'ms/iter':>8}")
    lines.append(head)
    lines.append("-" * len(head))
    for e in summary:
        pooled = f"{e['r2_pooled']:10.4f}" if "r2_pooled" in e else f"{'-':>10}"
        mse = f"{e['mse_pooled']:10.5f}" if "mse_pooled" in e else f"{e['mse_fold_mean']:10.5f}"
        lines.append(f"{e['K']:>3} | {e['method']:<17} | {pooled} | "
                     f"{e['r2_fold_mean']:8.4f} ({e['r2_fold_sd']:.4f})   | {mse} | "
                     f"{e['train_seconds_mean']:12.1f} | {e['seconds_per_iteration_mean'] * 1e3:8.1f}")
    lines.append(f"R^2 pooled: all {n_folds} folds' out-of-fold predictions scored together "
                 "(mean y over all reviews); fold mean: R^2 per fold (its test mean), averaged, "
                 "sd over folds. MSE pooled over all test reviews.")
    lines.append(f"train s/fold: wall seconds of training per fold (ours: {args.chains} chains "
                 "vectorised in one process, compilation included; tomotopy: 1 chain); "
                 "ms/iter: ours per Gibbs cycle of all chains after the first chunk, tomotopy "
                 "train time / iterations.")
    for m in args.methods:
        lines.append(f"  {m:<17} = {describe(m, args)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------


def versions():
    import jax
    import numpyro

    try:  # only the tomotopy method needs it
        import tomotopy
    except ImportError:
        tomotopy = None
    return {"jax": jax.__version__, "numpyro": numpyro.__version__, "numpy": np.__version__,
            "tomotopy": tomotopy.__version__ if tomotopy else "not installed",
            "python": platform.python_version()}


def main(args):
    stem = args.out or ("regression_movie_scale" + (".shdp" if args.preprocessing == "shdp"
                                                      else "") + (".tuning" if args.tune else ""))
    path = stem if os.sep in stem else os.path.join(RESULTS, stem)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    lines = []

    def log(msg=""):
        print(msg, flush=True)
        lines.append(msg)

    started = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    command = "python benchmarks/regression_movie_scale.py " + shlex.join(sys.argv[1:])
    folds = load_folds("movie-scale", num_folds=5, seed=0, preprocessing=args.preprocessing,
                       data_dir=args.data_dir)
    log(f"regression_movie_scale  {started}")
    log(f"command: {command}")
    log(f"data: load_folds('movie-scale', num_folds=5, seed=0, "
        f"preprocessing={args.preprocessing!r}); fold 0: {folds[0].summary()}")
    y0 = np.asarray(folds[0].train.labels, np.float64)
    log(f"fold 0 training ratings: mean {y0.mean():.4f}, sd {y0.std():.4f}")
    log(f"threads: {THREAD_ENV}")
    out = {"date": started, "command": command, "versions": versions(), "threads": THREAD_ENV,
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                       "load_average_start": os.getloadavg()},
           "settings": {k: (sorted(v) if isinstance(v, set) else v)
                        for k, v in vars(args).items() if k != "data_dir"}}
    tic = time.perf_counter()
    if args.tune:
        out["tuning"] = tune(args, folds, log)
    else:
        log(f"\n{len(args.folds or folds)} folds x K in {args.topics}: ours {args.chains} chains, "
            f"{args.iterations} iterations (half burn-in, 5 snapshots), predict 20+10 test "
            f"sweeps, strategy ma; tomotopy 1 chain, {args.iterations} iterations, infer "
            f"{args.tomotopy_infer}")
        rows, summary, fold_ids = cross_validate(args, folds, log)
        log("")
        log(table(summary, args, len(fold_ids)))
        out["summary"] = summary
        out["methods"] = {m: describe(m, args) for m in args.methods}
        out["per_fold"] = [{k: v for k, v in r.items() if k not in ("test_index", "yhat")}
                           for r in rows]
    out["total_seconds"] = time.perf_counter() - tic
    log(f"\ntotal {out['total_seconds']:.0f} s")
    with open(path + ".json", "w") as f:
        json.dump(out, f, indent=2, default=float)
    with open(path + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}.json/.txt")
    return out


if __name__ == "__main__":
    main(ARGS)
