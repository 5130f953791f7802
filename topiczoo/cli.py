"""Command line: ``topiczoo fit`` (see ``topiczoo fit --help``)."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

MODEL_CHOICES = ("medlda", "gslda", "lda-svm")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topiczoo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser(
        "fit", help="fit a supervised topic model with several exact MCMC chains",
        description="Fit a model on a named data set, predict its test split, and write "
                    "summary.json, the ArviZ tree (posterior.nc) and trace.png to --out.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    f.add_argument("--model", choices=MODEL_CHOICES, default="medlda")
    f.add_argument("--data", default="bbc",
                   help="bbc (embedded), 20news-binary, poliblog (binary tasks)")
    f.add_argument("--data-dir", default=None,
                   help="folder holding 20news/, poliblog/ (default: $TOPICZOO_DATA or ../shared/data)")
    f.add_argument("--topics", "-K", type=int, default=20)
    f.add_argument("--chains", type=int, default=4)
    f.add_argument("--iterations", type=int, default=100, help="Gibbs cycles per chain")
    f.add_argument("--burnin", type=int, default=None, help="default: half of --iterations")
    f.add_argument("--snapshots", type=int, default=5,
                   help="training snapshots used for prediction")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--out", default="runs/latest", help="output directory")
    f.add_argument("--c", type=float, default=None,
                   help="regularisation constant (default: 1 for both models)")
    f.add_argument("--ell", type=float, default=164.0, help="hinge margin (medlda)")
    f.add_argument("--alpha", type=float, default=1.0,
                   help="total Dirichlet concentration: theta ~ Dir(alpha/K)")
    f.add_argument("--beta", type=float, default=0.01)
    f.add_argument("--nu2", type=float, default=1.0, help="prior variance of eta")
    f.add_argument("--chain-method", choices=("vectorized", "sequential"), default="vectorized")
    f.add_argument("--test-burnin", type=int, default=20)
    f.add_argument("--test-draws", type=int, default=10)
    f.add_argument("--average", choices=("sf", "sa", "mf", "ma"), default="ma",
                   help="averaging strategy of the reported test accuracy")
    f.add_argument("--checkpoint", action="store_true",
                   help="write OUT/checkpoint.pkl after every chunk and resume from it")
    f.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def _model(args):
    from topiczoo.models import gslda, lda, medlda

    common = dict(alpha=args.alpha, beta=args.beta)
    c = 1.0 if args.c is None else args.c
    if args.model == "medlda":
        return medlda(args.topics, c=c, ell=args.ell, nu2=args.nu2, **common)
    if args.model == "gslda":
        return gslda(args.topics, c=c, nu2=args.nu2, **common)
    return lda(args.topics, **common)


def run_fit(args) -> dict:
    """Fit, predict and write the run directory; returns the summary dictionary."""
    import numpy as np

    from topiczoo.baseline import lda_svm_predict
    from topiczoo.datasets import load_dataset
    from topiczoo.diagnostics import plot_trace, save_datatree, summary_table, format_table
    from topiczoo.diagnostics import to_datatree
    from topiczoo.fit import fit
    from topiczoo.predict import STRATEGIES, predict

    model = _model(args)  # validates hyperparameters before any data is read
    data = load_dataset(args.data, data_dir=args.data_dir, seed=args.seed)
    if data.task != "binary":
        raise SystemExit(f"error: --model {args.model} is binary; data set {args.data!r} is "
                         f"{data.task}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr))
    log(f"{data.name}: train D={data.train.num_docs} N={data.train.num_tokens} "
        f"V={data.train.vocab_size}; test D={data.test.num_docs} "
        f"({data.test_tokens_dropped} test tokens outside the training vocabulary dropped)")
    result = fit(model, data.train, num_chains=args.chains, num_iterations=args.iterations,
                 num_burnin=args.burnin, num_snapshots=args.snapshots, seed=args.seed,
                 chain_method=args.chain_method, progress=not args.quiet,
                 checkpoint=out / "checkpoint.pkl" if args.checkpoint else None)
    tic = time.perf_counter()
    test_kw = dict(num_burnin=args.test_burnin, num_draws=args.test_draws, seed=args.seed)
    prediction = None
    if args.model == "lda-svm":
        accuracy = {"ma": lda_svm_predict(result, data.train, data.test, **test_kw)
                    .accuracy(data.test.labels)}
        test_accuracy = accuracy["ma"]
    else:
        prediction = predict(result, data.test, **test_kw)
        accuracy = {s: prediction.accuracy(data.test.labels, s) for s in STRATEGIES}
        test_accuracy = accuracy[args.average]
    predict_seconds = time.perf_counter() - tic
    tree = to_datatree(result, prediction, test_labels=data.test.labels)
    table = summary_table(tree)
    save_datatree(tree, out / "posterior.nc")
    plot_trace(tree, out / "trace.png")
    rhat = {name: _finite(table.loc[name, "r_hat"]) for name in table.index}
    rhat_classic = {name: _finite(table.loc[name, "r_hat_classic"]) for name in table.index}
    summary = {
        "model": args.model, "data": data.name, "topics": args.topics, "chains": args.chains,
        "iterations": args.iterations, "burnin": result.num_burnin, "seed": args.seed,
        "hyperparameters": {"alpha": args.alpha, "beta": args.beta, "nu2": args.nu2,
                            "c": 1.0 if args.c is None else args.c,
                            **({"ell": args.ell} if args.model == "medlda" else {})},
        "test_accuracy": test_accuracy, "average": args.average if prediction else "ma",
        "test_accuracy_by_strategy": accuracy,
        "train_seconds": result.train_seconds, "predict_seconds": predict_seconds,
        "token_iterations_per_second": result.token_iterations_per_second,
        "train_tokens": data.train.num_tokens, "test_tokens_dropped": data.test_tokens_dropped,
        "rhat": rhat, "rhat_classic": rhat_classic,
        "final_train_accuracy": _finite(np.mean(result.draws["train_accuracy"][:, -1]))
        if "train_accuracy" in result.draws else None,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"test accuracy ({summary['average']}): {test_accuracy:.4f}   "
          + "  ".join(f"{k} {v:.4f}" for k, v in accuracy.items()))
    print(f"training: {result.train_seconds:.1f} s, "
          f"{result.token_iterations_per_second / 1e6:.2f} M token-iterations/s "
          f"({args.chains} chains); prediction {predict_seconds:.1f} s")
    print(format_table(table))
    print(f"wrote {out / 'summary.json'}, {out / 'posterior.nc'}, {out / 'trace.png'}")
    return summary


def _finite(x):
    x = float(x)
    return x if math.isfinite(x) else None


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "fit":
            run_fit(args)
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
