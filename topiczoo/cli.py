"""Command line: ``topiczoo fit``, ``topiczoo diagnose`` and ``topiczoo compare`` (see
``topiczoo COMMAND --help``).

The models, their options and their defaults come from the registry
(``topiczoo.models.registry``); this module names none of them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from pathlib import Path

from topiczoo.compare import chains_text as _chains
from topiczoo.defaults import NUM_CHAINS, NUM_ITERATIONS
from topiczoo.models.registry import DEFAULT_MODEL, REGISTRY

def _c_value(text: str):
    """``--c``: a number, or ``cv`` (choose it by cross-validation on the training set)."""
    if text == "cv":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'cv', got {text!r}") from None


def _c_grid(text: str) -> tuple:
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") \
            from None


# option -> (type, help); the defaults are each model's own (read from the registry)
_OPTION_HELP = {
    "c": (_c_value, "regularisation constant / cost; 'cv': chosen by k-fold cross-validation "
                    "on the training set (see --c-grid, --cv-folds); a number is absolute "
                    "(1 / response units for regression); medlda-regression's None: 10 per "
                    "standard deviation of the training responses, shdp-regression's: 3, "
                    "and shdp-map's None: 1"),
    "ell": (float, "hinge margin"),
    "eps": (float, "insensitivity of the epsilon-insensitive loss, in response units"),
    "s2": (float, "noise variance of the Gaussian response (its start value when learned; "
                  "None: 1/4 of the training responses' variance)"),
    "learn_s2": (None, "draw the noise variance from its inverse-gamma conditional"),
    "a0": (float, "shape of the inverse-gamma prior of s2"),
    "b0": (float, "scale of the inverse-gamma prior of s2"),
    "alpha": (float, "total Dirichlet concentration: theta ~ Dir(alpha/K); hdp and shdp-*: "
                     "the documents' DP concentration, its start value (drawn every sweep)"),
    "gamma": (float, "hdp and shdp-*: the top-level DP concentration, its start value (drawn "
                     "every sweep)"),
    "beta": (float, "Dirichlet parameter of each topic's word distribution"),
    "nu2": (float, "prior variance of eta (regression: in squared response units)"),
    "center": (None, "fit y - mean(y_train), add the mean back to predictions"),
}
#: the files a run writes into --out; a new (not resumed) run removes the previous ones
OUTPUTS = ("summary.json", "posterior.nc", "trace.png", "report.md", "figures")
# what --checkpoint resumes from: the fit's checkpoint (one-vs-all: one per class) and the
# finished cells of a --c cv search
RESUMABLE = ("checkpoint.npz", "checkpoint.class*.npz", "choose_c.json")


def _defaults_by_model(option: str) -> str:
    values = {}
    for name, entry in REGISTRY.items():
        if option in entry.options():
            values.setdefault(repr(entry.options()[option]), []).append(name)
    if len(values) == 1:
        return f"default {next(iter(values))}"
    return "default " + "; ".join(f"{v} for {', '.join(names)}" for v, names in values.items())


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error on one line (the usage dump buried it) that points to
    --help; sub-commands use the same class."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the options)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="topiczoo", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser(
        "fit", help="fit a supervised topic model with several exact MCMC chains",
        description="Fit a model on a named data set, predict its test split, and write "
                    "summary.json, the ArviZ tree (posterior.nc), trace.png, topics.md and "
                    "topics.png to --out (one-vs-all models fit one model per class and keep "
                    "none: summary.json only). "
                    "Models: " + "; ".join(f"{k}: {e.summary}" for k, e in REGISTRY.items()))
    f.add_argument("--model", choices=tuple(REGISTRY), default=DEFAULT_MODEL,
                   help=f"the model (default {DEFAULT_MODEL})")
    f.add_argument("--data", default="bbc",
                   help="bbc (embedded, binary), bbc-5, 20news-binary, 20news, poliblog, "
                        "movie-scale (regression) (default bbc)")
    f.add_argument("--data-dir", default=None,
                   help="folder holding 20news/, poliblog/, movie_scale/ "
                        "(default: $TOPICZOO_DATA or ../shared/data)")
    f.add_argument("--multilabel", action="store_true",
                   help="treat a multi-class data set as multi-label: one 0/1 task per class")
    f.add_argument("--topics", "-K", type=int, default=20, help="number of topics (default 20)")
    f.add_argument("--sampler", default="exact",
                   help="the model's sampler (default exact: the papers' collapsed Gibbs); "
                        "light: LightMedLDA, cost per token independent of K; options after a "
                        "colon, e.g. light:mh_steps=3,proposals=cycle,eta_sweeps=2, "
                        "exact:eta=qr or exact:eta=coordinate")
    f.add_argument("--chains", type=int, default=NUM_CHAINS,
                   help=f"number of chains (default {NUM_CHAINS})")
    f.add_argument("--iterations", type=int, default=NUM_ITERATIONS,
                   help=f"Gibbs cycles per chain (default {NUM_ITERATIONS})")
    f.add_argument("--burnin", type=int, default=None,
                   help="iterations before the first snapshot (default: half of --iterations)")
    f.add_argument("--until-rhat", type=float, default=None, metavar="R",
                   help="after --iterations, double the run (its first half burn-in) until "
                        "every label-invariant monitor's rank R-hat is below R (e.g. 1.01) "
                        "or --max-iterations is reached; says which monitor held it back")
    f.add_argument("--max-iterations", type=int, default=None,
                   help="the budget of --until-rhat (default 8 x --iterations)")
    f.add_argument("--snapshots", type=int, default=5,
                   help="training snapshots used for prediction (default 5)")
    f.add_argument("--seed", type=int, default=0,
                   help="seed of the whole run (default 0): the chains and, for the data sets "
                        "without a fixed split (bbc, bbc-5, poliblog, movie-scale), the "
                        "train/test split too")
    f.add_argument("--out", default="runs/latest", help="output directory (default runs/latest)")
    for option, (kind, text) in _OPTION_HELP.items():
        flag = "--" + option.replace("_", "-")
        if kind is None:
            f.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                           help=f"{text} ({_defaults_by_model(option)})")
        else:
            f.add_argument(flag, type=kind, default=None,
                           help=f"{text} ({_defaults_by_model(option)})")
    f.add_argument("--c-grid", type=_c_grid, default=None,
                   help="the c values --c cv tries, comma-separated (default 1,4,16,64,256,1024 "
                        "for regression, 1,2,4,8,16,32,64 for classification)")
    f.add_argument("--cv-folds", type=int, default=3,
                   help="folds of --c cv (default 3)")
    f.add_argument("--cv-iterations", type=int, default=None,
                   help="Gibbs cycles of each --c cv fit (default: --iterations)")
    f.add_argument("--cv-chains", type=int, default=None,
                   help="chains of each --c cv fit (default: --chains)")
    f.add_argument("--chain-method", choices=("vectorized", "sequential"), default="vectorized",
                   help="how numpyro runs the chains (default vectorized)")
    f.add_argument("--test-burnin", type=int, default=20,
                   help="burn-in sweeps of each test chain (default 20)")
    f.add_argument("--test-draws", type=int, default=10,
                   help="kept draws of each test chain (default 10)")
    f.add_argument("--average", choices=("sf", "sa", "mf", "ma"), default="ma",
                   help="averaging strategy of the reported test metrics (default ma)")
    f.add_argument("--checkpoint", action="store_true",
                   help="write OUT/checkpoint.npz after every chunk (one-vs-all models: one "
                        "file per class) and each finished --c cv fold to OUT/choose_c.json; "
                        "the same command resumes from them")
    f.add_argument("--quiet", action="store_true", help="no progress lines")
    f.add_argument("--check", action="store_true",
                   help="check the options and the data, say what would run, and stop")
    d = sub.add_parser(
        "diagnose", help="convergence report of a run directory written by 'topiczoo fit'",
        description="Write RUN_DIR/report.md with the R-hat / ESS / MCSE table of the "
                    "label-invariant monitors and trace, rank, Gelman-Rubin-Brooks and "
                    "autocorrelation plots; print the table.")
    d.add_argument("run_dir", help="a directory written by 'topiczoo fit' (has posterior.nc)")
    c = sub.add_parser(
        "compare", help="run a grid of models x K x seeds x data sets and tabulate it",
        description="Fit and score every cell of a grid (resumable: finished cells in "
                    "OUT/cells are skipped), then write OUT/table.csv, table.md, "
                    "metric_vs_topics.png, metric_vs_time.png, and for logistic / Gaussian "
                    "responses ArviZ trees of the held-out log-likelihoods (OUT/trees) and "
                    "compare.md. The grid comes from --config (TOML) and/or the options "
                    "below; options given here override the file's.")
    c.add_argument("--config", default=None, help="a TOML file of the grid (see "
                   "topiczoo.compare.load_grid)")
    c.add_argument("--data", type=_names, default=None,
                   help="data sets, comma-separated (e.g. 20news-binary)")
    c.add_argument("--models", type=_model_entries, default=None,
                   help="registry models, comma-separated (e.g. gslda,medlda,lda-svm); "
                        "MODEL@SAMPLER runs a model with another sampler, its options after "
                        "a colon (medlda,medlda@light:mh_steps=4,proposals=cycle)")
    c.add_argument("--topics", "-K", type=_integers, default=None,
                   help="numbers of topics, comma-separated (e.g. 10,20,50)")
    c.add_argument("--seeds", type=_integers, default=None,
                   help="MCMC seeds, comma-separated (default 0)")
    c.add_argument("--option", action="append", default=[], metavar="MODEL:NAME=VALUE",
                   help="a model option, e.g. gslda:c=25 (repeatable)")
    c.add_argument("--sampler", action="append", default=[], metavar="MODEL:SAMPLER",
                   help="a model's sampler, e.g. medlda:light or medlda:light:mh_steps=3 "
                        "(repeatable; default exact)")
    for flag, text in (("--iterations", f"Gibbs cycles per chain (default {NUM_ITERATIONS})"),
                       ("--chains", f"chains per cell (default {NUM_CHAINS})"),
                       ("--burnin", "iterations before the first snapshot (default: half)"),
                       ("--snapshots", "training snapshots (default 5)"),
                       ("--test-burnin", "burn-in sweeps of each test chain (default 20)"),
                       ("--test-draws", "kept draws of each test chain (default 10)")):
        c.add_argument(flag, type=int, default=None, help=text)
    c.add_argument("--average", choices=("sf", "sa", "mf", "ma"), default=None,
                   help="averaging strategy of the metric (default ma)")
    c.add_argument("--data-dir", default=None,
                   help="folder holding 20news/, poliblog/, movie_scale/ "
                        "(default: $TOPICZOO_DATA or ../shared/data)")
    c.add_argument("--out", default="runs/compare", help="output folder (default runs/compare)")
    c.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def _names(text: str) -> list:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return names


def _model_entries(text: str) -> list:
    """``--models``: comma-separated entries, where a piece holding ``=`` (a sampler option)
    continues the entry before it, so that ``medlda@light:mh_steps=4,proposals=cycle`` stays one
    entry (model names hold no ``=``)."""
    entries = []
    for piece in _names(text):
        if "=" in piece and "@" not in piece:
            if not entries or "@" not in entries[-1]:
                raise argparse.ArgumentTypeError(
                    f"the option {piece!r} follows no MODEL@SAMPLER entry "
                    "(write medlda@light:mh_steps=4,proposals=cycle)")
            entries[-1] += "," + piece
        else:
            entries.append(piece)
    return entries


def _integers(text: str) -> list:
    try:
        return [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") \
            from None


def _option_value(text: str):
    """A ``--option`` value as TOML reads it (number, bool, string)."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def run_compare(args) -> list:
    """Build the grid from --config and the options, run it, print the table."""
    from topiczoo.compare import Grid, compare, load_grid, markdown_table

    given = {"data": args.data, "models": args.models, "topics": args.topics,
             "seeds": args.seeds, "iterations": args.iterations, "chains": args.chains,
             "burnin": args.burnin, "snapshots": args.snapshots,
             "test_burnin": args.test_burnin, "test_draws": args.test_draws,
             "average": args.average}
    given = {k: v for k, v in given.items() if v is not None}
    grid = load_grid(args.config, given) if args.config else None
    if grid is None:
        missing = [k for k in ("data", "models", "topics") if k not in given]
        if missing:
            raise ValueError("the grid needs " + ", ".join("--" + m for m in missing)
                             + " (or --config FILE)")
        grid = Grid(**given)
    for item in args.option:
        model, sep, rest = item.partition(":")
        name, eq, value = rest.partition("=")
        if not sep or not eq or not name:
            raise ValueError(f"--option takes MODEL:NAME=VALUE (e.g. gslda:c=25), got {item!r}")
        grid.options.setdefault(model, {})[name] = _option_value(value)
    for item in args.sampler:
        model, sep, sampler = item.partition(":")
        if not sep or not sampler:
            raise ValueError(f"--sampler takes MODEL:SAMPLER (e.g. medlda:light), got {item!r}")
        grid.samplers[model] = sampler
    out = Path(args.out)
    _check_out(out)
    rows = compare(grid, out, data_dir=args.data_dir, progress=not args.quiet)
    print(markdown_table(rows, grid), end="")
    print(f"wrote {out}: " + ", ".join(sorted(p.name + "/" * p.is_dir() for p in out.iterdir())))
    return rows


def _options(args, entry) -> dict:
    """The model options given on the command line; an option the model lacks is an error."""
    given = {o: getattr(args, o) for o in _OPTION_HELP if getattr(args, o) is not None}
    known = [o for o in entry.options() if o in _OPTION_HELP]  # those the command offers
    unknown = [o for o in given if o not in known]
    if unknown:
        flags = ", ".join("--" + o.replace("_", "-") for o in unknown)
        raise ValueError(f"--model {entry.name} has no option {flags}; its options: "
                         + ", ".join("--" + o.replace("_", "-") for o in known))
    return given


def _check_run(args) -> None:
    """The run settings, checked before any data is read or sampled (``fit`` checks them
    again, with the same messages, for callers of the Python API)."""
    for flag, value, low in (("--topics", args.topics, 1), ("--chains", args.chains, 1),
                             ("--iterations", args.iterations, 1),
                             ("--snapshots", args.snapshots, 0),
                             ("--test-burnin", args.test_burnin, 0),
                             ("--test-draws", args.test_draws, 1)):
        if value < low:
            raise ValueError(f"{flag} must be >= {low}, got {value}")
    if args.until_rhat is not None:
        if not (math.isfinite(args.until_rhat) and args.until_rhat > 1):
            raise ValueError(f"--until-rhat must be a number above 1 (e.g. 1.01), got "
                             f"{args.until_rhat}")
        if args.chains < 2:
            raise ValueError("--until-rhat compares chains: it needs --chains >= 2")
        if args.max_iterations is not None and args.max_iterations < args.iterations:
            raise ValueError(f"--max-iterations must be >= --iterations={args.iterations}, "
                             f"got {args.max_iterations}")
    elif args.max_iterations is not None:
        raise ValueError("--max-iterations is the budget of --until-rhat; give --until-rhat too")
    if args.burnin is not None and not 0 <= args.burnin < args.iterations:
        raise ValueError(f"--burnin must lie in [0, --iterations={args.iterations}), "
                         f"got {args.burnin}")


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a directory")
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"--out {out} lies under {parent}, which is a file")


def _prepare_out(out: Path, resume: bool) -> None:
    """Make ``out`` and remove an earlier run's outputs, unless ``resume`` (``--checkpoint``)
    finds work to resume there: then everything stays (a checkpoint or c search of other
    settings is refused before anything is written)."""
    out.mkdir(parents=True, exist_ok=True)
    resumable = [path for pattern in RESUMABLE for path in out.glob(pattern)]
    if resume and resumable:
        return
    for path in [out / name for name in OUTPUTS] + resumable:
        if path.is_dir():
            import shutil

            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def run_fit(args) -> dict:
    """Fit, predict and write the run directory; returns the summary dictionary."""
    from topiczoo.datasets import load_dataset
    from topiczoo.diagnostics import (format_table, plot_trace, save_datatree, save_figure,
                                      summary_table, to_datatree)
    from topiczoo.predict import STRATEGIES
    from topiczoo.run import fit_and_predict

    entry = REGISTRY[args.model]
    options = _options(args, entry)
    cv = options.get("c") == "cv"
    if cv:
        options.pop("c")
    elif args.c_grid is not None:
        raise ValueError("--c-grid is the grid of --c cv; give --c cv too")
    # hyperparameter and sampler errors before any data is read or output removed
    entry.check_sampler(args.topics, args.sampler, **options)
    _check_run(args)
    if entry.tasks and args.snapshots < 1:
        raise ValueError(f"--snapshots 0 keeps no training snapshot to predict the test "
                         f"documents from; {args.model} needs --snapshots >= 1")
    if cv:
        if entry.driver != "gibbs":
            raise ValueError(f"--c cv runs models fitted as one model; {args.model} is "
                             f"{entry.driver}")
        for flag, value, low in (("--cv-folds", args.cv_folds, 2),
                                 ("--cv-iterations", args.cv_iterations, 1),
                                 ("--cv-chains", args.cv_chains, 1)):
            if value is not None and value < low:
                raise ValueError(f"{flag} must be >= {low}, got {value}")
    _check_out(Path(args.out))
    data = load_dataset(args.data, data_dir=args.data_dir, seed=args.seed)
    train, test, kind = data.train, data.test, data.task
    if args.multilabel:
        if kind != "multiclass":
            raise ValueError(f"--multilabel needs a multi-class data set; {args.data!r} is {kind}")
        train, test, kind = train.as_multilabel(), test.as_multilabel(), "multilabel"
    if entry.tasks and kind not in entry.tasks:
        hint = " (try --multilabel)" if kind == "multiclass" and "multilabel" in entry.tasks else ""
        raise ValueError(f"--model {args.model} takes {' or '.join(entry.tasks)} data; "
                         f"{args.data!r} is {kind}{hint}")
    out = Path(args.out)
    if args.check:
        print(f"ok: {args.model} with {args.topics} topics on {data.name} ({kind}; train "
              f"{train!r}, test {test!r}), sampler {args.sampler}, {_chains(args.chains)} x "
              f"{args.iterations} iterations into {out}")
        return {}
    _prepare_out(out, resume=args.checkpoint)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr))
    log(f"{data.name}: train D={train.num_docs} N={train.num_tokens} V={train.vocab_size}; "
        f"test D={test.num_docs} ({data.test_tokens_dropped} test tokens outside the "
        f"training vocabulary dropped)")
    tuning = None
    if cv:
        from topiczoo.estimators import choose_c

        iterations = args.cv_iterations or args.iterations
        tuning = choose_c(
            entry, args.topics, train, grid=args.c_grid, num_folds=args.cv_folds,
            options=options, seed=args.seed, strategy=args.average, progress=not args.quiet,
            fit_kwargs=dict(num_chains=args.cv_chains or args.chains, num_iterations=iterations,
                            num_snapshots=args.snapshots, seed=args.seed,
                            chain_method=args.chain_method, sampler=args.sampler),
            predict_kwargs=dict(num_burnin=args.test_burnin, num_draws=args.test_draws,
                                seed=args.seed),
            record=out / "choose_c.json" if args.checkpoint else None)
        options["c"] = tuning.best_c
        cv_chains = args.cv_chains or args.chains
        print(f"--c cv: {args.cv_folds}-fold cross-validation on the training set "
              f"({_chains(cv_chains)} x {iterations} iterations "
              f"per fit, "
              f"{tuning.seconds:.0f} s); c = {tuning.best_c:g}")
        print(tuning.table())
    run = fit_and_predict(
        entry, args.topics, train, test, options=options,
        fit_kwargs=dict(num_chains=args.chains, num_iterations=args.iterations,
                        num_burnin=args.burnin, num_snapshots=args.snapshots, seed=args.seed,
                        chain_method=args.chain_method, sampler=args.sampler,
                        until_rhat=args.until_rhat, max_iterations=args.max_iterations),
        predict_kwargs=dict(num_burnin=args.test_burnin, num_draws=args.test_draws,
                            seed=args.seed),
        progress=not args.quiet,
        checkpoint=out / "checkpoint.npz" if args.checkpoint else None)
    result, prediction = run.result, run.prediction
    if result is not None and 0 < len(result.snapshots) < args.snapshots:
        print(f"warning: --snapshots {args.snapshots}: the post-burn-in iterations give "
              f"{len(result.snapshots)} distinct snapshot points; {len(result.snapshots)} kept",
              file=sys.stderr)
    metrics = {}
    if prediction is not None:
        metrics = {s: prediction.metrics(test.labels, s) for s in STRATEGIES}
    written = [out / "summary.json"]
    table = None
    if result is not None:
        observed = prediction.task.to_tasks(test.labels) if prediction is not None else None
        tree = to_datatree(result, prediction if entry.driver == "gibbs" else None,
                           test_labels=observed if entry.driver == "gibbs" else None)
        table = summary_table(tree)
        save_datatree(tree, out / "posterior.nc")
        written.append(out / "posterior.nc")
    average = args.average
    summary = {
        "model": args.model, "data": data.name, "task": kind, "topics": args.topics,
        "sampler": result.sampler if result else args.sampler, "chains": args.chains,
        "iterations": result.iterations_done if result else args.iterations,
        "burnin": result.num_burnin if result else args.burnin, "seed": args.seed,
        "snapshots": len(result.snapshots) if result else args.snapshots,
        "hyperparameters": entry.hyperparameters(args.topics, train, **options),
        **{("test_" + k if k == "accuracy" else k): v
           for k, v in metrics.get(average, {}).items()},
        "average": average, "test_metrics_by_strategy": metrics,
        "train_seconds": run.train_seconds, "predict_seconds": run.predict_seconds,
        "token_iterations_per_second": run.token_iterations_per_second,
        "train_tokens": train.num_tokens, "test_tokens_dropped": data.test_tokens_dropped,
    }
    if result is not None and result.convergence:
        check = result.convergence
        summary["until_rhat"] = {"converged": check["converged"], "worst": check["worst"],
                                 "rhat": _finite(check["rhat"][check["worst"]]),
                                 "iteration": check["iteration"]}
    if tuning is not None:
        summary["c_cross_validation"] = tuning.as_dict()
    if table is not None:
        summary["rhat"] = {n: _finite(table.loc[n, "r_hat"]) for n in table.index}
        summary["rhat_classic"] = {n: _finite(table.loc[n, "r_hat_classic"]) for n in table.index}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=_json) + "\n")
    if result is not None:  # last: a figure that cannot be drawn costs no result
        try:
            save_figure(plot_trace(tree), out / "trace.png")
            written.append(out / "trace.png")
        except Exception as err:  # noqa: BLE001 - any plotting failure is reported, not fatal
            print(f"warning: trace.png not written: {err}", file=sys.stderr)
        if result.snapshots:
            written += _write_topics(result, train.label_names, out)
    if metrics:  # the bracket: the headline metric (F1 for multi-label) by strategy
        shown = metrics[average]
        headline = "f1" if "f1" in shown else next(iter(shown))
        named = "" if headline == next(iter(shown)) else f"{headline}: "
        print(f"test ({average}): " + ", ".join(f"{k} {v:.4f}" for k, v in shown.items())
              + f"   [{named}" + "  ".join(f"{s} {m[headline]:.4f}" for s, m in metrics.items())
              + "]")
    print(f"training: {run.train_seconds:.1f} s, {run.token_iterations_per_second / 1e6:.2f} M "
          f"token-iterations/s ({_chains(args.chains)}); prediction {run.predict_seconds:.1f} s")
    if table is not None:
        print(format_table(table))
    print("wrote " + ", ".join(str(p) for p in written))
    return summary


def _write_topics(result, label_names, out: Path) -> list:
    """OUT/topics.md (every occupied topic of chain 0 at the last snapshot: tokens, eta, 12
    words) and OUT/topics.png (:func:`topiczoo.topics.plot_topics`); the paths written. A
    failure is a warning: it costs no result."""
    from topiczoo.diagnostics import save_figure
    from topiczoo.topics import format_topics, plot_topics, topics

    written = []
    try:
        found = topics(result, num_words=12)
        num_tasks = len(found[0].eta) if found else 0
        names = list(label_names) if label_names and len(label_names) == num_tasks > 1 else None
        kind = result.task.kind if result.task is not None else None
        positive = (label_names[1] if kind == "binary" and label_names and len(label_names) == 2
                    else None)
        meaning = {"binary": f" eta > 0 pushes a document towards {positive!r}." if positive
                   else "",
                   "regression": " eta > 0 raises the predicted response.",
                   "multiclass": " The eta of a class pushes a document towards it.",
                   "multilabel": " The eta of a label pushes a document towards it."}
        ordering = {0: "largest first", 1: "largest coefficient first"}.get(
            num_tasks, "largest coefficient of the first task first")
        (out / "topics.md").write_text(
            f"# Topics of chain 0 at iteration {result.snapshots[-1].iteration} (the last "
            f"training snapshot)\n\n{len(found)} occupied topics, {ordering}; share: of the "
            f"training tokens.{meaning.get(kind, '')} A topic's number is its label in this "
            f"chain only: chains label their topics differently.\n\n"
            + format_topics(found, task_names=names))
        written.append(out / "topics.md")
        task_name = names[0] if names else (f"> 0: towards {positive}" if positive else None)
        save_figure(plot_topics(found, task_name=task_name), out / "topics.png")
        written.append(out / "topics.png")
    except Exception as err:  # noqa: BLE001 - as the trace plot: reported, not fatal
        print(f"warning: topics not written: {err}", file=sys.stderr)
    return written


def _json(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON: {value!r}")


def _finite(x):
    x = float(x)
    return x if math.isfinite(x) else None


def main(argv=None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); returns the exit status
    (0 done, 2 an input error printed as one line, 130 interrupted; argparse's usage errors
    exit with 2 through SystemExit)."""
    args = _parser().parse_args(argv)
    if args.command in ("fit", "compare"):
        from topiczoo.memory import return_large_blocks_to_os

        return_large_blocks_to_os()  # long fits: a peak RSS ~20% lower (topiczoo.memory)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning  # a warning is one line, as an error is
        return _run(args)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr if file is None else file)


def _run(args) -> int:
    try:
        if args.command == "fit":
            run_fit(args)
        elif args.command == "diagnose":
            from topiczoo.diagnostics import diagnose

            print(diagnose(args.run_dir))
        elif args.command == "compare":
            run_compare(args)
    except (ValueError, TypeError, FileNotFoundError, IsADirectoryError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_interrupted(args), file=sys.stderr)
        return 130
    return 0


def _interrupted(args) -> str:
    """What Ctrl-C leaves: finished work to resume from, or nothing saved yet."""
    if not (getattr(args, "checkpoint", False) or args.command == "compare"):
        return "interrupted"
    out = Path(args.out)
    saved = out.is_dir() and (any(out.glob("checkpoint*.npz")) or any(out.glob("cells/*.json"))
                              or (out / "choose_c.json").is_file())
    if saved:
        return f"interrupted; resume with the same command (finished work in {out})"
    return "interrupted before any work was saved: the same command starts afresh"


def console() -> None:
    """The ``topiczoo`` command: :func:`main`, then exit with its code. After Ctrl-C (130)
    the exit is immediate (``os._exit``, output flushed): JAX's runtime threads may still be
    running the interrupted computation, and a normal interpreter exit under them aborts the
    process ("terminate called without an active exception"). Nothing is lost: every
    finished chunk is already in the checkpoint. A reader that leaves early (``| head``)
    ends the command quietly, as Python's documentation recommends."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    console()
