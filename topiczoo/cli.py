"""Command line: ``topiczoo fit`` and ``topiczoo diagnose`` (see ``topiczoo COMMAND --help``)."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

# model name -> (task kinds it accepts, what it is)
MODELS = {
    "medlda": (("binary", "multilabel"), "Gibbs MedLDA, hinge loss (binary or multi-label)"),
    "gslda": (("binary", "multilabel"), "logistic sLDA with constant c (binary or multi-label)"),
    "lda-svm": (("binary",), "LDA, then a linear SVM on topic proportions"),
    "medlda-regression": (("regression",), "Gibbs MedLDA, epsilon-insensitive loss"),
    "slda-gaussian": (("regression",), "sLDA with a Gaussian response"),
    "medlda-multitask": (("multiclass",), "multi-task Gibbs MedLDA, argmax over classes"),
    "gslda-multitask": (("multiclass",), "multi-task logistic sLDA, argmax over classes"),
    "medlda-ova": (("multiclass",), "one-vs-all binary Gibbs MedLDA models"),
    "gslda-ova": (("multiclass",), "one-vs-all binary gSLDA models"),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topiczoo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser(
        "fit", help="fit a supervised topic model with several exact MCMC chains",
        description="Fit a model on a named data set, predict its test split, and write "
                    "summary.json, the ArviZ tree (posterior.nc) and trace.png to --out. "
                    "Models: " + "; ".join(f"{k}: {v[1]}" for k, v in MODELS.items()),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    f.add_argument("--model", choices=tuple(MODELS), default="medlda")
    f.add_argument("--data", default="bbc",
                   help="bbc (embedded, binary), bbc-5, 20news-binary, 20news, poliblog, "
                        "movie-scale (regression)")
    f.add_argument("--data-dir", default=None,
                   help="folder holding 20news/, poliblog/, movie_scale/ "
                        "(default: $TOPICZOO_DATA or ../shared/data)")
    f.add_argument("--multilabel", action="store_true",
                   help="treat a multi-class data set as multi-label: one 0/1 task per class")
    f.add_argument("--topics", "-K", type=int, default=20)
    f.add_argument("--chains", type=int, default=4)
    f.add_argument("--iterations", type=int, default=100, help="Gibbs cycles per chain")
    f.add_argument("--burnin", type=int, default=None, help="default: half of --iterations")
    f.add_argument("--snapshots", type=int, default=5,
                   help="training snapshots used for prediction")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--out", default="runs/latest", help="output directory")
    f.add_argument("--c", type=float, default=1.0, help="regularisation constant / cost")
    f.add_argument("--ell", type=float, default=None,
                   help="hinge margin (default: 164 binary, 64 multi-class, as the papers)")
    f.add_argument("--eps", type=float, default=1e-3,
                   help="insensitivity of medlda-regression, in response units")
    f.add_argument("--s2", type=float, default=1.0,
                   help="slda-gaussian noise variance (start value unless --fixed-s2)")
    f.add_argument("--fixed-s2", action="store_true", help="do not sample s2 (slda-gaussian)")
    f.add_argument("--alpha", type=float, default=1.0,
                   help="total Dirichlet concentration: theta ~ Dir(alpha/K)")
    f.add_argument("--beta", type=float, default=0.01)
    f.add_argument("--nu2", type=float, default=1.0, help="prior variance of eta")
    f.add_argument("--chain-method", choices=("vectorized", "sequential"), default="vectorized")
    f.add_argument("--test-burnin", type=int, default=20)
    f.add_argument("--test-draws", type=int, default=10)
    f.add_argument("--average", choices=("sf", "sa", "mf", "ma"), default="ma",
                   help="averaging strategy of the reported test metrics")
    f.add_argument("--checkpoint", action="store_true",
                   help="write OUT/checkpoint.pkl after every chunk and resume from it")
    f.add_argument("--quiet", action="store_true", help="no progress lines")
    d = sub.add_parser(
        "diagnose", help="convergence report of a run directory written by 'topiczoo fit'",
        description="Write RUN_DIR/report.md with the R-hat / ESS / MCSE table of the "
                    "label-invariant monitors and trace, rank, Gelman-Rubin-Brooks and "
                    "autocorrelation plots; print the table.")
    d.add_argument("run_dir", help="a directory written by 'topiczoo fit' (has posterior.nc)")
    return parser


def _model(args, num_classes):
    from topiczoo import models

    common = dict(alpha=args.alpha, beta=args.beta)
    sup = dict(common, nu2=args.nu2)
    multiclass = args.model.endswith(("multitask", "ova"))
    ell = args.ell if args.ell is not None else (64.0 if multiclass else 164.0)
    build = {
        "medlda": lambda: models.medlda(args.topics, c=args.c, ell=ell, **sup),
        "gslda": lambda: models.gslda(args.topics, c=args.c, **sup),
        "lda-svm": lambda: models.lda(args.topics, **common),
        "medlda-regression": lambda: models.medlda_regression(args.topics, c=args.c,
                                                              eps=args.eps, **sup),
        "slda-gaussian": lambda: models.slda_gaussian(args.topics, s2=args.s2,
                                                      learn_s2=not args.fixed_s2, **sup),
        "medlda-multitask": lambda: models.medlda_multitask(args.topics, num_classes, c=args.c,
                                                            ell=ell, **sup),
        "gslda-multitask": lambda: models.gslda_multitask(args.topics, num_classes, c=args.c,
                                                          **sup),
        "medlda-ova": lambda: models.medlda(args.topics, c=args.c, ell=ell, **sup),
        "gslda-ova": lambda: models.gslda(args.topics, c=args.c, **sup),
    }[args.model]
    build()  # validates the hyperparameters before any data is read
    return build


def run_fit(args) -> dict:
    """Fit, predict and write the run directory; returns the summary dictionary."""
    import dataclasses

    import numpy as np

    from topiczoo.baseline import lda_svm_predict
    from topiczoo.datasets import load_dataset
    from topiczoo.diagnostics import (format_table, plot_trace, save_datatree, summary_table,
                                      to_datatree)
    from topiczoo.fit import fit
    from topiczoo.metrics import evaluate
    from topiczoo.ova import one_vs_all
    from topiczoo.predict import STRATEGIES, predict

    _model(args, 2)  # hyperparameter errors before any data is read
    data = load_dataset(args.data, data_dir=args.data_dir, seed=args.seed)
    train, test, task = data.train, data.test, data.task
    if args.multilabel:
        if task != "multiclass":
            raise ValueError(f"--multilabel needs a multi-class data set; {args.data!r} is {task}")
        train, test = (dataclasses.replace(c, labels=_indicators(c.labels, len(data.label_names)))
                       for c in (train, test))
        task = "multilabel"
    accepted = MODELS[args.model][0]
    if task not in accepted:
        raise ValueError(f"--model {args.model} takes {' or '.join(accepted)} data; "
                         f"{args.data!r} is {task}" + (" (try --multilabel)" if
                                                       task == "multiclass" and "multilabel" in accepted else ""))
    build = _model(args, len(data.label_names))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr))
    log(f"{data.name}: train D={train.num_docs} N={train.num_tokens} V={train.vocab_size}; "
        f"test D={test.num_docs} ({data.test_tokens_dropped} test tokens outside the "
        f"training vocabulary dropped)")
    fit_kw = dict(num_chains=args.chains, num_iterations=args.iterations,
                  num_burnin=args.burnin, num_snapshots=args.snapshots, seed=args.seed,
                  chain_method=args.chain_method)
    test_kw = dict(num_burnin=args.test_burnin, num_draws=args.test_draws, seed=args.seed)
    y_test = np.asarray(test.labels)
    written = [out / "summary.json"]
    if args.model.endswith("-ova"):
        tic = time.perf_counter()
        prediction = one_vs_all(build, train, test, predict_kwargs=test_kw,
                                progress=not args.quiet, **fit_kw)
        metrics = {s: evaluate(task, y_test, prediction.labels(s)) for s in STRATEGIES}
        train_seconds = prediction.train_seconds
        throughput = prediction.token_iterations_per_second
        predict_seconds = time.perf_counter() - tic - train_seconds
        result = table = None
    else:
        result = fit(build(), train, progress=not args.quiet,
                     checkpoint=out / "checkpoint.pkl" if args.checkpoint else None, **fit_kw)
        tic = time.perf_counter()
        prediction = None
        if args.model == "lda-svm":
            svm = lda_svm_predict(result, train, test, **test_kw)
            metrics = {"ma": evaluate(task, y_test, svm.labels())}
        else:
            prediction = predict(result, test, **test_kw)
            truth = y_test.T if task == "multilabel" else y_test
            metrics = {s: evaluate(task, truth, prediction.labels(s)) for s in STRATEGIES}
        predict_seconds = time.perf_counter() - tic
        train_seconds = result.train_seconds
        throughput = result.token_iterations_per_second
        observed = {"multilabel": lambda: y_test.T,
                    "multiclass": lambda: _indicators(y_test, len(data.label_names)).T}
        tree = to_datatree(result, prediction, test_labels=observed.get(task, lambda: y_test)())
        table = summary_table(tree)
        save_datatree(tree, out / "posterior.nc")
        plot_trace(tree, out / "trace.png")
        written += [out / "posterior.nc", out / "trace.png"]
    average = args.average if args.average in metrics else "ma"
    summary = {
        "model": args.model, "data": data.name, "task": task, "topics": args.topics,
        "chains": args.chains, "iterations": args.iterations,
        "burnin": result.num_burnin if result else args.burnin, "seed": args.seed,
        "hyperparameters": _hyperparameters(args, build()),
        **{("test_" + k if k == "accuracy" else k): v for k, v in metrics[average].items()},
        "average": average, "test_metrics_by_strategy": metrics,
        "train_seconds": train_seconds, "predict_seconds": predict_seconds,
        "token_iterations_per_second": throughput,
        "train_tokens": train.num_tokens, "test_tokens_dropped": data.test_tokens_dropped,
    }
    if table is not None:
        summary["rhat"] = {n: _finite(table.loc[n, "r_hat"]) for n in table.index}
        summary["rhat_classic"] = {n: _finite(table.loc[n, "r_hat_classic"]) for n in table.index}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"test ({average}): " + ", ".join(f"{k} {v:.4f}" for k, v in metrics[average].items())
          + ("   [" + "  ".join(f"{s} {next(iter(m.values())):.4f}" for s, m in metrics.items())
             + "]" if len(metrics) > 1 else ""))
    print(f"training: {train_seconds:.1f} s, {throughput / 1e6:.2f} M token-iterations/s "
          f"({args.chains} chains); prediction {predict_seconds:.1f} s")
    if table is not None:
        print(format_table(table))
    print("wrote " + ", ".join(str(p) for p in written))
    return summary


def _hyperparameters(args, model) -> dict:
    """The hyperparameters the model uses, as given on the command line."""
    out = {"alpha": args.alpha, "beta": args.beta}
    response = model.response
    if response is not None:
        out["nu2"] = args.nu2
        for name in ("c", "ell", "eps", "s2", "learn_s2"):
            if hasattr(response, name):
                out[name] = getattr(response, name)
    return out


def _indicators(class_ids, num_classes):
    import numpy as np

    class_ids = np.asarray(class_ids)
    return (class_ids[:, None] == np.arange(num_classes)[None, :]).astype(np.int64)


def _finite(x):
    x = float(x)
    return x if math.isfinite(x) else None


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "fit":
            run_fit(args)
        elif args.command == "diagnose":
            from topiczoo.diagnostics import diagnose

            print(diagnose(args.run_dir))
    except (ValueError, TypeError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted" + (f"; resume with the same command (checkpoint in {args.out})"
                               if getattr(args, "checkpoint", False) else ""), file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
