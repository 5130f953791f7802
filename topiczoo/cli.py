"""Command line: ``topiczoo fit``, ``topiczoo diagnose`` and ``topiczoo compare`` (see
``topiczoo COMMAND --help``).

The models, their options and their defaults come from the registry
(``topiczoo.models.registry``) by way of its generated table (``topiczoo.registry_table``);
this module names none of them. The arguments are parsed and checked before JAX is imported:
the modules that load, fit, predict and plot are imported inside the commands.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import math
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

from topiczoo import hosts, registry_table, rundir
from topiczoo.defaults import NUM_CHAINS, NUM_ITERATIONS
from topiczoo.errors import InsufficientMemoryError

# ------------------------------------------------------------------------------ option values


def _number(text: str) -> float:
    """A finite number (``float`` alone takes nan, inf and 1e400)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _c_value(text: str):
    """``--c``: a number, or ``cv`` (choose it by cross-validation on the training set)."""
    if text == "cv":
        return text
    try:
        return _number(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a number or 'cv', got {text!r}") from None


def _c_grid(text: str) -> tuple:
    """``--c-grid``: comma-separated finite numbers."""
    try:
        return tuple(_number(v) for v in text.split(","))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") \
            from None


def _choice(what: str, names) -> Callable[[str], str]:
    """The argparse type of a name among ``names``: an unknown one is an error naming the
    closest known name and every choice."""
    names = tuple(names)

    def parse(text: str) -> str:
        if text in names:
            return text
        raise argparse.ArgumentTypeError(_unknown(what, text, names))

    parse.__name__ = what
    return parse


def _unknown(what: str, text: str, names) -> str:
    """``unknown <what> 'x' (did you mean y?); choose from ...``."""
    close = difflib.get_close_matches(text, list(names), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown {what} {text!r}{hint}; choose from {', '.join(names)}"


#: The parser of each option type of the registry table (bool: --flag / --no-flag).
_KIND_TYPES = {"int": int, "float": _number, "str": str}
#: Options parsed otherwise than by their type: ``--c cv`` chooses c by cross-validation.
_OPTION_TYPES = {"c": _c_value}
#: What a model option means, where words help; an option without words is listed all the
#: same, with its defaults (they come from the registry).
_OPTION_TEXT = {
    "c": "regularisation constant / cost; 'cv': chosen by k-fold cross-validation "
         "on the training set (see --c-grid, --cv-folds); a number is absolute "
         "(1 / response units for regression); medlda-regression's None: 10 per "
         "standard deviation of the training responses, shdp-regression's: 3, "
         "and shdp-map's None: 1",
    "ell": "hinge margin",
    "eps": "insensitivity of the epsilon-insensitive loss, in response units",
    "s2": "noise variance of the Gaussian response (its start value when learned; "
          "None: 1/4 of the training responses' variance)",
    "learn_s2": "draw the noise variance from its inverse-gamma conditional",
    "a0": "shape of the inverse-gamma prior of s2",
    "b0": "scale of the inverse-gamma prior of s2",
    "alpha": "total Dirichlet concentration: theta ~ Dir(alpha/K); hdp and shdp-*: "
             "the documents' DP concentration, its start value (drawn every sweep)",
    "gamma": "hdp and shdp-*: the top-level DP concentration, its start value (drawn "
             "every sweep)",
    "beta": "Dirichlet parameter of each topic's word distribution",
    "nu2": "prior variance of eta (regression: in squared response units)",
    "center": "fit y - mean(y_train), add the mean back to predictions",
    "response": "the response of the MAP-coefficient sHDP: 'gaussian' (regression) or "
                "'logistic' (binary or multi-label)",
}

# ------------------------------------------------------------------------------------ parser


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error on one line (the usage dump buried it) that points to
    --help, and unrecognised arguments reported by the sub-command they were given to, with
    the option they resemble; sub-commands use the same class."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.commands = {}  # sub-command name -> its parser (build_parser fills it)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the options)\n")

    def parse_args(self, args=None, namespace=None):
        args, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self.commands.get(getattr(args, "command", None), self)
            parser.error(f"unrecognized arguments: {' '.join(extras)}"
                         + _resembling(parser, extras))
        return args


def _resembling(parser: argparse.ArgumentParser, extras: list) -> str:
    """``; did you mean --model?`` for the first unrecognised option close to one of
    ``parser``'s, else ``""``."""
    flags = [flag for flag in parser._option_string_actions if flag.startswith("--")]
    for extra in extras:
        if extra.startswith("--"):
            close = difflib.get_close_matches(extra.split("=", 1)[0], flags, n=1)
            if close:
                return f"; did you mean {close[0]}?"
    return ""


def build_parser(table: dict | None = None) -> argparse.ArgumentParser:
    """The parser of every command; the models, their options and the data set names come
    from ``table`` (default: the registry's generated table, :mod:`topiczoo.registry_table`),
    so building it imports no model."""
    table = registry_table.load() if table is None else table
    parser = _Parser(prog="topiczoo", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    parser.commands = {"fit": _add_fit(sub, table), "diagnose": _add_diagnose(sub),
                       "compare": _add_compare(sub)}
    return parser


def _add_fit(sub, table: dict) -> argparse.ArgumentParser:
    """``topiczoo fit``: its models, options and data sets from ``table``."""
    models = table["models"]
    f = sub.add_parser(
        "fit", help="fit a supervised topic model with several exact MCMC chains",
        description="Fit a model on a named data set, predict its test split, and write "
                    "summary.json, the ArviZ tree (posterior.nc), trace.png, topics.md and "
                    "topics.png to a new folder runs/MODEL-YYYYmmdd-HHMMSS (runs/latest names "
                    "the newest) or to --out (one-vs-all models fit one model per class and "
                    "keep none: summary.json only). "
                    "Models: " + "; ".join(f"{k}: {m['summary']}" for k, m in models.items()))
    default = table["default_model"]
    f.add_argument("--model", type=_choice("model", models), default=default, metavar="MODEL",
                   help=_escape(f"the model, one of {', '.join(models)} (default {default})"))
    f.add_argument("--data", default="bbc",
                   help=_escape(f"the data set, one of {', '.join(table['datasets'])}: bbc is "
                                "embedded (binary), bbc-5 too (5 classes), movie-scale is "
                                "regression (default bbc)"))
    f.add_argument("--data-dir", default=None,
                   help="folder holding 20news/, poliblog/, movie_scale/ "
                        "(default: $TOPICZOO_DATA or ../shared/data)")
    f.add_argument("--multilabel", action="store_true",
                   help="treat a multi-class data set as multi-label: one 0/1 task per class")
    f.add_argument("--topics", "-K", type=int, default=20, help="number of topics (default 20)")
    f.add_argument("--sampler", default="exact",
                   help="the model's sampler (default exact: the papers' collapsed Gibbs); "
                        "light: LightMedLDA, cost per token independent of K; parallel: the "
                        "topics drawn, then every document at once, on every core; options "
                        "after a colon, e.g. light:mh_steps=3,proposals=cycle,eta_sweeps=2, "
                        "exact:eta=qr or exact:eta=coordinate")
    f.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads of the sampler's host steps (default: the cores this process "
                        "may use): the parallel sampler sweeps its documents on them, the "
                        "others their chains; the draws do not depend on it")
    _add_schedule(f)
    _add_processes(f)
    f.add_argument("--out", default=None,
                   help=f"output folder (default: a new folder {rundir.RUNS}/MODEL-YYYYmmdd-"
                        f"HHMMSS, {rundir.RUNS}/{rundir.LATEST} naming the newest); a folder "
                        "that holds files is refused unless --overwrite or --checkpoint")
    f.add_argument("--overwrite", action="store_true",
                   help="write into an --out that holds an earlier run, replacing its outputs "
                        "and checkpoints (other files stay); with --checkpoint, start afresh "
                        "instead of resuming")
    _add_model_options(f, table)
    _add_prediction(f)
    return f


def _add_processes(f) -> None:
    """``--coordinator``, ``--num-processes``, ``--process-id`` and ``--coordinator-timeout``:
    one run by several processes (``topiczoo.hosts``)."""
    g = f.add_argument_group(
        "several processes",
        "one run of --sampler parallel:z=jax by N processes (on several hosts, or several on "
        "one machine), the documents sharded over the devices of all: start the same command "
        "in each process with its own --process-id. Process 0 serves at --coordinator, prints "
        "the progress and writes the outputs and checkpoints; the others compute the same "
        "run and write nothing. The draws are those of one process; a checkpoint resumes on "
        "any number of processes (process 0 reads it and sends it to the others)")
    g.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                   help="address of process 0, the same in every process (process 0 listens "
                        "on PORT); [::1]:PORT for an IPv6 host")
    g.add_argument("--num-processes", type=int, default=None, metavar="N",
                   help="processes in the run")
    g.add_argument("--process-id", type=int, default=None, metavar="I",
                   help="this process's rank, 0..N-1 (0 writes the outputs)")
    g.add_argument("--coordinator-timeout", type=_number, default=None, metavar="SECONDS",
                   help="seconds to wait for the coordinator and the other processes "
                        "(default 60)")


def _add_schedule(f) -> None:
    """The chains, iterations, snapshots and seed of ``topiczoo fit``."""
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
    f.add_argument("--chain-method", choices=("vectorized", "sequential"), default="vectorized",
                   help="how numpyro runs the chains (default vectorized)")
    f.add_argument("--init", choices=("dispersed", "uniform"), default="dispersed",
                   help="how the chains start (default dispersed: topics drawn from their "
                        "prior, each document on one or a few topics chosen at random in each "
                        "chain, so that R-hat can see chains that settle in different modes; "
                        "uniform: every token's topic uniformly at random, the papers' start)")


def _add_model_options(f, table: dict) -> None:
    """One option per model option of the registry (``--name`` for ``name``, ``--flag`` /
    ``--no-flag`` for a bool), with each model's default; ``--c cv`` and its settings."""
    f = f.add_argument_group(
        "model options", "every option of every model, with its defaults, from the registry "
                         "(an option the model lacks is an error)")
    for option, kind in table["option_kinds"].items():
        flag = "--" + option.replace("_", "-")
        text = _OPTION_TEXT.get(option, f"the model option {option}")
        text = _escape(f"{text} ({_defaults_by_model(table, option)})")
        if kind == "bool":
            f.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            f.add_argument(flag, type=_OPTION_TYPES.get(option, _KIND_TYPES[kind]),
                           default=None, help=text)
    f.add_argument("--c-grid", type=_c_grid, default=None,
                   help="the c values --c cv tries, comma-separated (default 1,4,16,64,256,1024 "
                        "for regression, 1,2,4,8,16,32,64 for classification)")
    f.add_argument("--cv-folds", type=int, default=3,
                   help="folds of --c cv (default 3)")
    f.add_argument("--cv-iterations", type=int, default=None,
                   help="Gibbs cycles of each --c cv fit (default: --iterations)")
    f.add_argument("--cv-chains", type=int, default=None,
                   help="chains of each --c cv fit (default: --chains)")
    _add_cluster(f, "the fits of --c cv")


def _defaults_by_model(table: dict, option: str) -> str:
    """``default 1.0`` when every model has the option with that default, else its defaults
    and the models having each: ``default 164.0 for medlda, ...; 64.0 for ...``."""
    values, having = {}, 0
    for name, model in table["models"].items():
        if option in model["options"]:
            values.setdefault(_shown(model["options"][option]), []).append(name)
            having += 1
    if len(values) == 1 and having == len(table["models"]):
        return f"default {next(iter(values))}"
    return "default " + "; ".join(f"{v} for {', '.join(names)}" for v, names in values.items())


def _shown(value) -> str:
    """A default as Python writes it (``1.0``, ``None``, ``'gaussian'``), a numpy scalar as
    the plain number it holds (``1``, not ``np.int64(1)``)."""
    return repr(_plain(value))


def _plain(value):
    """A numpy scalar as the Python value it holds; anything else unchanged."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") \
        else value


def _escape(text: str) -> str:
    """``text`` for argparse's help, which %-formats it."""
    return text.replace("%", "%%")


def _add_prediction(f) -> None:
    """The test chains, the averaging and the run's switches of ``topiczoo fit``."""
    f.add_argument("--test-burnin", type=int, default=20,
                   help="burn-in sweeps of each test chain (default 20)")
    f.add_argument("--test-draws", type=int, default=10,
                   help="kept draws of each test chain (default 10)")
    f.add_argument("--average", choices=("sf", "sa", "mf", "ma"), default="ma",
                   help="averaging strategy of the reported test metrics (default ma)")
    f.add_argument("--checkpoint", action="store_true",
                   help="write OUT/checkpoint.npz after every chunk (one-vs-all models: one "
                        "file per class) and each finished --c cv fold to OUT/choose_c.json; "
                        "the same command with the run's --out resumes from them")
    f.add_argument("--quiet", action="store_true", help="no progress lines")
    f.add_argument("--check", action="store_true",
                   help="check the options and the data, say what would run, and stop")


def _add_diagnose(sub) -> argparse.ArgumentParser:
    """``topiczoo diagnose RUN_DIR``."""
    d = sub.add_parser(
        "diagnose", help="convergence report of a run directory written by 'topiczoo fit'",
        description="Write RUN_DIR/report.md with the R-hat / ESS / MCSE table of the "
                    "label-invariant monitors and trace, rank, Gelman-Rubin-Brooks and "
                    "autocorrelation plots; print the table.")
    d.add_argument("run_dir", help=f"a directory written by 'topiczoo fit' (has posterior.nc); "
                                   f"{rundir.RUNS}/{rundir.LATEST}: the newest run")
    return d


def _add_compare(sub) -> argparse.ArgumentParser:
    """``topiczoo compare``: the grid from --config and/or its options."""
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
    c.add_argument("--no-baseline", dest="baseline", action="store_false", default=None,
                   help="leave out the word baseline's row (a linear model on the tf-idf of "
                        "the words, its regularisation chosen by cross-validation on the "
                        "training set; one row per data set, by default)")
    c.add_argument("--out", default="runs/compare", help="output folder (default runs/compare)")
    c.add_argument("--quiet", action="store_true", help="no progress lines")
    _add_cluster(c, "the cells")
    return c


def _add_cluster(parser, what: str) -> None:
    """``--workers`` and ``--scheduler``: where ``what`` run (``topiczoo.cluster``)."""
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help=f"run {what} on a local Dask cluster of N worker processes, one "
                             "thread each (default: one per core, "
                             f"{os.cpu_count() or 1} here); 0: in this process, one after "
                             "another")
    parser.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                        help=f"run {what} on the Dask cluster whose scheduler is at this "
                             "address (dask scheduler / dask worker, or a dask-jobqueue "
                             "cluster's scheduler_address); the workers must see the output "
                             "folder, or the cells are written here as they come back")


# --------------------------------------------------------------------------- topiczoo compare


def _names(text: str) -> list:
    """Comma-separated names, at least one."""
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
    """Comma-separated integers."""
    try:
        return [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") \
            from None


def _check_cluster(args) -> None:
    """``--workers`` and ``--scheduler``, before anything runs."""
    if args.workers is not None and args.workers < 0:
        raise ValueError(f"--workers must be >= 0 (0: in this process), got {args.workers}")
    if args.workers is not None and args.scheduler is not None:
        raise ValueError("--workers is the size of a local cluster; the cluster at --scheduler "
                         "has its own workers: give one of them")


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
             "average": args.average, "baseline": args.baseline}
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
    _check_cluster(args)
    out = Path(args.out)
    rundir.check_path(out)
    rows = compare(grid, out, data_dir=args.data_dir, progress=not args.quiet,
                   workers=args.workers, scheduler=args.scheduler)
    print(markdown_table(rows, grid), end="")
    print(f"wrote {out}: " + ", ".join(sorted(p.name + "/" * p.is_dir() for p in out.iterdir())))
    return rows


# ------------------------------------------------------------------------------- topiczoo fit


@dataclass
class _FitPlan:
    """What the arguments of ``topiczoo fit`` ask for, checked without importing a model.

    model: the table's row of ``--model``; options: the model options given (``c`` set after
    ``--c cv`` has chosen it); cv: whether ``--c cv`` chooses c; out: the ``--out`` folder
    (``runs/latest`` followed), None for a new folder under ``runs/``; out_mode: what the run
    does with an existing ``out`` (``rundir.check_out``: new, resume or overwrite).
    """

    model: dict
    options: dict
    cv: bool
    out: Path | None
    out_mode: str


class _Data(NamedTuple):
    """The data set of a run: its name, training and test corpora, label kind and the number
    of test tokens outside the training vocabulary."""

    name: str
    train: object
    test: object
    kind: str
    dropped: int


def run_fit(args, table: dict | None = None) -> dict:
    """``topiczoo fit``: check the arguments (no model imported yet), check the model, load the
    data, then fit, predict, write the run folder and print what it holds. Returns the summary
    dictionary (empty after ``--check``)."""
    plan = _plan_fit(args, registry_table.load() if table is None else table)
    _join(args)  # before the models are imported: JAX's runtime first
    entry = _check_model(args, plan)
    data = _load_data(args, plan)
    _check_memory(args, plan, entry, data)
    if args.check:
        _print_check(args, plan, data)
        return {}
    several = args.coordinator is not None and _num_processes(args) > 1
    if several:
        _check_same_settings(args, data)
    if _process_id(args) != 0:
        return _follow(args, plan, entry, data)
    out = _open_out(args, plan)
    _log(args, f"{data.name}: train D={data.train.num_docs} N={data.train.num_tokens} "
               f"V={data.train.vocab_size}; test D={data.test.num_docs} ({data.dropped} test "
               f"tokens outside the training vocabulary dropped)")
    tuning = _choose_c(args, plan, entry, data, out) if plan.cv else None
    if several:
        _share_checkpoints(args, out)
    run = _fit_and_predict(args, plan, entry, data,
                           out / "checkpoint.npz" if args.checkpoint else None)
    metrics = _test_metrics(run, data)
    tree, table = _write_tree(run, entry, data, out)
    summary = _summary(args, plan, entry, data, run, metrics, tuning, table)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=_json) + "\n")
    written = [out / "summary.json"] + ([out / "posterior.nc"] if tree is not None else [])
    written += _write_figures(run, tree, data, out)
    _print_results(args, run, metrics, table, written)
    return summary


def _plan_fit(args, table: dict) -> _FitPlan:
    """Every check of the arguments that needs neither the data nor a model: the model's
    options, --c cv, the data set's and the sampler's names, the run settings, --out."""
    model = table["models"][args.model]
    options = _options(args, table)
    cv = options.get("c") == "cv"
    if cv:
        options.pop("c")
    elif args.c_grid is not None:
        raise ValueError("--c-grid is the grid of --c cv; give --c cv too")
    if args.data not in table["datasets"]:
        raise ValueError(_unknown("data set", args.data, table["datasets"]))
    _check_sampler_name(args, table)
    _check_run(args)
    if model["tasks"] and args.snapshots < 1:
        raise ValueError(f"--snapshots 0 keeps no training snapshot to predict the test "
                         f"documents from; {args.model} needs --snapshots >= 1")
    if cv:
        _check_cv(args, model)
    elif args.workers is not None or args.scheduler is not None:
        raise ValueError("--workers and --scheduler run the fits of --c cv on a cluster; "
                         "give --c cv too (a single fit runs in this process)")
    _check_cluster(args)
    _check_processes(args, cv)
    out = None if args.out is None else rundir.resolve(args.out)
    if _process_id(args) != 0:  # writes nothing: process 0's --out is process 0's to check
        return _FitPlan(model, options, cv, out, "none")
    mode = "new" if out is None else rundir.check_out(out, overwrite=args.overwrite,
                                                        resume=args.checkpoint)
    return _FitPlan(model, options, cv, out, mode)


def _options(args, table: dict) -> dict:
    """The model options given on the command line; an option the model lacks is an error."""
    known = table["models"][args.model]["options"]
    given = {o: getattr(args, o) for o in table["option_kinds"] if getattr(args, o) is not None}
    unknown = [o for o in given if o not in known]
    if unknown:
        flags = ", ".join("--" + o.replace("_", "-") for o in unknown)
        raise ValueError(f"--model {args.model} has no option {flags}; its options: "
                         + ", ".join("--" + o.replace("_", "-") for o in known))
    return given


def _check_sampler_name(args, table: dict) -> None:
    """The name of ``--sampler`` (before its options) among the model's samplers; its options
    are the model's to check (:func:`_check_model`)."""
    model = table["models"][args.model]
    head = args.sampler.split(":", 1)[0].strip()
    if head in table["models"]:
        raise ValueError(f"the sampler {args.sampler!r} starts with a model name: a sampler is "
                         f"SAMPLER[:OPTIONS] (exact, light, light:mh_steps=4); MODEL:SAMPLER "
                         f"is the form of compare's --sampler")
    if head not in model["samplers"]:
        topic_model = model["topic_model"]
        of = args.model + ("" if topic_model == args.model
                           else f" (its topic model: {topic_model})")
        raise ValueError(f"unknown sampler {head!r} for {of}; choose from "
                         f"{', '.join(model['samplers'])}")


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
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads must be >= 1, got {args.threads}")
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


#: The coordinator's wait of --coordinator-timeout, seconds.
COORDINATOR_TIMEOUT_S = 60.0
#: Settings that may differ between the processes of one run (all others must be equal).
_PER_PROCESS = ("process_id", "coordinator_timeout", "out", "overwrite", "checkpoint", "quiet",
                "check", "data_dir", "threads", "run_dir")


def _num_processes(args) -> int:
    return getattr(args, "num_processes", None) or 1


def _process_id(args) -> int:
    return getattr(args, "process_id", None) or 0


def _check_processes(args, cv: bool) -> None:
    """--coordinator, --num-processes and --process-id: all three or none, a valid address and
    rank; several processes run the parallel sampler's JAX engine only, and not --c cv."""
    given = {"--coordinator": args.coordinator, "--num-processes": args.num_processes,
             "--process-id": args.process_id}
    missing = [flag for flag, value in given.items() if value is None]
    if len(missing) == len(given):
        if args.coordinator_timeout is not None:
            raise ValueError("--coordinator-timeout is the wait of --coordinator; give "
                             "--coordinator, --num-processes and --process-id too")
        return
    if missing:
        raise ValueError("a run by several processes needs --coordinator, --num-processes and "
                         f"--process-id together; missing {', '.join(missing)}")
    n, rank = args.num_processes, args.process_id
    if n < 1:
        raise ValueError(f"--num-processes must be >= 1, got {n}")
    if not 0 <= rank < n:
        raise ValueError(f"--process-id must be in 0..{n - 1} (--num-processes {n}), got {rank}")
    try:
        hosts._parse_address(args.coordinator)
    except ValueError as err:
        raise ValueError(f"--{err}") from None
    if args.coordinator_timeout is not None and args.coordinator_timeout <= 0:
        raise ValueError(f"--coordinator-timeout must be a positive number of seconds, got "
                         f"{args.coordinator_timeout:g}")
    if n > 1 and not _jax_engine(args.sampler):
        raise ValueError(f"--num-processes {n} runs the parallel sampler's JAX engine across "
                         f"the processes: give --sampler parallel:z=jax, not --sampler "
                         f"{args.sampler} (the exact, light and parallel (numba) engines run "
                         f"on one host)")
    if n > 1 and cv:
        raise ValueError("--c cv runs its fits on a Dask cluster (--workers, --scheduler), not "
                         f"on --num-processes {n}: give --c a number")


def _jax_engine(sampler: str) -> bool:
    """Whether ``sampler`` names the parallel sampler's JAX engine (``parallel:...z=jax...``),
    read from the text: parsing it with the model's parser could start a JAX backend (plain
    ``parallel`` asks JAX whether it runs on a GPU), which must wait for the runtime."""
    head, _, rest = sampler.partition(":")
    options = dict((key.strip(), value.strip()) for key, _, value in
                   (item.partition("=") for item in rest.split(",")))
    return head.strip() == "parallel" and options.get("z") == "jax"


def _join(args) -> None:
    """With --coordinator: start JAX's multi-process runtime (``hosts.initialize``), before
    anything starts a JAX backend (the models are imported after it). Not for --check."""
    if args.coordinator is None or args.check:
        return
    n, rank = _num_processes(args), _process_id(args)
    timeout = args.coordinator_timeout or COORDINATOR_TIMEOUT_S
    hosts.initialize(args.coordinator, n, rank, timeout_s=timeout)
    import jax

    role = ("it writes the outputs" if rank == 0
            else "process 0 writes the outputs, this one nothing")
    _log(args, f"process {rank} of {n} joined the run at {args.coordinator} "
               f"({len(jax.devices())} devices in all); {role}")


def _check_same_settings(args, data: "_Data") -> None:
    """Every process of the run was given process 0's settings and read its corpus (a digest
    of each, gathered from all processes); a ValueError in every process otherwise, rather
    than a run whose processes disagree."""
    import numpy as np
    from jax.experimental import multihost_utils

    settings = {k: v for k, v in sorted(vars(args).items()) if k not in _PER_PROCESS}
    digest = hashlib.sha256(json.dumps(settings, default=str).encode())
    for corpus in (data.train, data.test):
        for array in (corpus.words, corpus.doc_offsets):
            digest.update(np.ascontiguousarray(array).tobytes())
        digest.update("\n".join(corpus.vocabulary).encode())
    mine = np.array([int(digest.hexdigest()[:7], 16)], np.int32)
    every = np.asarray(multihost_utils.process_allgather(mine)).ravel()
    differ = [str(rank) for rank, value in enumerate(every) if value != every[0]]
    if differ:
        raise ValueError(f"process {', '.join(differ)} of {len(every)} was given other "
                         "settings or read another corpus than process 0: give every process "
                         "the same command but --process-id (and --out, --quiet, --data-dir)")


def _share_checkpoints(args, out: Path | None) -> dict:
    """With several processes: process 0's checkpoints in ``out`` that --checkpoint resumes
    from, sent to every process ({file name: contents}; empty when there are none, or without
    --checkpoint). Every process calls it at the same point."""
    files = {}
    if _process_id(args) == 0 and args.checkpoint and out is not None:
        files = {p.name: p.read_bytes() for p in rundir.resumable(out)
                 if p.suffix == ".npz" and p.is_file()}
    header = json.dumps([[name, len(blob)] for name, blob in files.items()]).encode()
    packed = hosts.broadcast_bytes(len(header).to_bytes(8, "little") + header
                                   + b"".join(files.values()))
    size = int.from_bytes(packed[:8], "little")
    shared, at = {}, 8 + size
    for name, length in json.loads(packed[8:at]):
        shared[name], at = packed[at:at + length], at + length
    return shared


def _follow(args, plan: "_FitPlan", entry, data: "_Data") -> dict:
    """A process other than 0: the same run as process 0, from process 0's checkpoint when it
    resumes one (kept in a private temporary folder, removed at the end), with no progress,
    warnings or outputs. Returns an empty summary."""
    import tempfile

    files = _share_checkpoints(args, None)
    with tempfile.TemporaryDirectory(prefix=f"topiczoo-process{_process_id(args)}-") as folder:
        for name, blob in files.items():
            (Path(folder) / name).write_bytes(blob)
        checkpoint = Path(folder) / "checkpoint.npz" if files else None
        with warnings.catch_warnings():  # process 0 gives the run's warnings
            warnings.simplefilter("ignore")
            _fit_and_predict(args, plan, entry, data, checkpoint)
    _log(args, f"process {_process_id(args)} of {_num_processes(args)} done; process 0 wrote "
               "the outputs")
    return {}


def _check_cv(args, model: dict) -> None:
    """The settings of ``--c cv``."""
    if model["driver"] != "gibbs":
        raise ValueError(f"--c cv runs models fitted as one model; {args.model} is "
                         f"{model['driver']}")
    for flag, value, low in (("--cv-folds", args.cv_folds, 2),
                             ("--cv-iterations", args.cv_iterations, 1),
                             ("--cv-chains", args.cv_chains, 1)):
        if value is not None and value < low:
            raise ValueError(f"{flag} must be >= {low}, got {value}")


def _check_model(args, plan: _FitPlan):
    """The registry entry of ``--model``, after the model's own checks of its options and of
    the sampler's (this imports the models, and JAX)."""
    from topiczoo.models.registry import REGISTRY

    entry = REGISTRY[args.model]
    entry.check_sampler(args.topics, args.sampler, **plan.options)
    return entry


def _load_data(args, plan: _FitPlan) -> _Data:
    """The data set (``--multilabel``: its multi-label view), if the model takes its labels."""
    from topiczoo.datasets import load_dataset

    data = load_dataset(args.data, data_dir=args.data_dir, seed=args.seed)
    train, test, kind = data.train, data.test, data.task
    if args.multilabel:
        if kind != "multiclass":
            raise ValueError(f"--multilabel needs a multi-class data set; {args.data!r} is {kind}")
        train, test, kind = train.as_multilabel(), test.as_multilabel(), "multilabel"
    tasks = plan.model["tasks"]
    if tasks and kind not in tasks:
        hint = " (try --multilabel)" if kind == "multiclass" and "multilabel" in tasks else ""
        raise ValueError(f"--model {args.model} takes {' or '.join(tasks)} data; "
                         f"{args.data!r} is {kind}{hint}")
    return _Data(data.name, train, test, kind, data.test_tokens_dropped)


def _check_memory(args, plan: _FitPlan, entry, data: _Data) -> None:
    """A run that would need more memory than the machine has is refused here, before its run
    folder is made (``topiczoo.fit.check_fit_memory``)."""
    from topiczoo.fit import check_fit_memory

    options = {k: v for k, v in plan.options.items() if not (k == "c" and v == "cv")}
    model = entry.build(args.topics, corpus=data.train, **options)
    check_fit_memory(model, data.train, sampler=args.sampler, num_chains=args.chains,
                     num_tasks=1 if entry.driver == "one-vs-all" else None,
                     num_iterations=args.iterations, num_burnin=args.burnin,
                     num_snapshots=args.snapshots, until_rhat=args.until_rhat,
                     max_iterations=args.max_iterations)


def _print_check(args, plan: _FitPlan, data: _Data) -> None:
    """What ``--check`` says would run."""
    from topiczoo.compare import chains_text

    into = plan.out if plan.out is not None else \
        f"a new folder {rundir.RUNS / rundir.new_name(args.model)}"
    print(f"ok: {args.model} with {args.topics} topics on {data.name} ({data.kind}; train "
          f"{data.train!r}, test {data.test!r}), sampler {args.sampler}, "
          f"{chains_text(args.chains)} x {args.iterations} iterations into {into}")


def _open_out(args, plan: _FitPlan) -> Path:
    """The run folder: a new one under ``runs/`` (``runs/latest`` then names it), or
    ``--out``, made if absent and cleared of an earlier run's outputs with --overwrite. Kept
    in ``args.run_dir`` for the message after Ctrl-C."""
    if plan.out is None:
        out = rundir.make_new(args.model)
        latest = rundir.point_latest(out)
        _log(args, f"run folder: {out} ({latest} names it)")
    else:
        out = plan.out
        out.mkdir(parents=True, exist_ok=True)
        if plan.out_mode == "overwrite":
            rundir.clear_outputs(out)
    args.run_dir = out
    return out


def _log(args, line: str) -> None:
    """A progress line on stderr, unless ``--quiet``."""
    if not args.quiet:
        print(line, file=sys.stderr)


def _choose_c(args, plan: _FitPlan, entry, data: _Data, out: Path):
    """``--c cv``: choose c by cross-validation on the training set, print the table, set
    ``plan.options["c"]``; returns the :class:`~topiczoo.estimators.CTuning`."""
    from topiczoo.compare import chains_text
    from topiczoo.estimators import choose_c

    iterations = args.cv_iterations or args.iterations
    chains = args.cv_chains or args.chains
    tuning = choose_c(
        entry, args.topics, data.train, grid=args.c_grid, num_folds=args.cv_folds,
        options=plan.options, seed=args.seed, strategy=args.average, progress=not args.quiet,
        fit_kwargs=dict(num_chains=chains, num_iterations=iterations,
                        num_snapshots=args.snapshots, seed=args.seed,
                        chain_method=args.chain_method, sampler=args.sampler),
        predict_kwargs=dict(num_burnin=args.test_burnin, num_draws=args.test_draws,
                            seed=args.seed),
        record=out / "choose_c.json" if args.checkpoint else None,
        workers=args.workers, scheduler=args.scheduler)
    plan.options["c"] = tuning.best_c
    print(f"--c cv: {args.cv_folds}-fold cross-validation on the training set "
          f"({chains_text(chains)} x {iterations} iterations per fit, "
          f"{tuning.seconds:.0f} s); c = {tuning.best_c:g}")
    print(tuning.table())
    return tuning


def _fit_and_predict(args, plan: _FitPlan, entry, data: _Data, checkpoint: Path | None):
    """Fit the model and predict the test documents (:func:`topiczoo.run.fit_and_predict`),
    with the fit's ``checkpoint`` file (None: none); warns when fewer snapshots than
    --snapshots were distinct. Only process 0 of several prints."""
    from topiczoo.run import fit_and_predict

    run = fit_and_predict(
        entry, args.topics, data.train, data.test, options=plan.options,
        fit_kwargs=dict(num_chains=args.chains, num_iterations=args.iterations,
                        num_burnin=args.burnin, num_snapshots=args.snapshots, seed=args.seed,
                        chain_method=args.chain_method, sampler=args.sampler,
                        until_rhat=args.until_rhat, max_iterations=args.max_iterations,
                        num_threads=args.threads, init=args.init),
        predict_kwargs=dict(num_burnin=args.test_burnin, num_draws=args.test_draws,
                            seed=args.seed),
        progress=not args.quiet and _process_id(args) == 0, checkpoint=checkpoint)
    kept = len(run.result.snapshots) if run.result is not None else 0
    if 0 < kept < args.snapshots and _process_id(args) == 0:
        print(f"warning: --snapshots {args.snapshots}: the post-burn-in iterations give "
              f"{kept} distinct snapshot points; {kept} kept", file=sys.stderr)
    return run


def _test_metrics(run, data: _Data) -> dict:
    """{strategy: {metric: value}} of the test predictions; empty for an unsupervised model."""
    from topiczoo.predict import STRATEGIES

    if run.prediction is None:
        return {}
    return {s: run.prediction.metrics(data.test.labels, s) for s in STRATEGIES}


def _write_tree(run, entry, data: _Data, out: Path) -> tuple:
    """OUT/posterior.nc (the ArviZ tree: draws and, for a model fitted as one, the test
    predictions) and its convergence table; ``(None, None)`` for one-vs-all, which keeps no
    fit."""
    if run.result is None:
        return None, None
    from topiczoo.diagnostics import save_datatree, summary_table, to_datatree

    own = entry.driver == "gibbs" and run.prediction is not None
    observed = run.prediction.task.to_tasks(data.test.labels) if own else None
    tree = to_datatree(run.result, run.prediction if own else None, test_labels=observed)
    save_datatree(tree, out / "posterior.nc")
    return tree, summary_table(tree)


def _summary(args, plan: _FitPlan, entry, data: _Data, run, metrics: dict, tuning,
             table) -> dict:
    """The contents of summary.json: the settings the run ran with, its test metrics (the
    --average strategy's at the top level), its times and R-hat."""
    result = run.result
    summary = {
        "model": args.model, "data": data.name, "task": data.kind, "topics": args.topics,
        "sampler": result.sampler if result else args.sampler, "chains": args.chains,
        "iterations": result.iterations_done if result else args.iterations,
        "burnin": result.num_burnin if result else args.burnin, "seed": args.seed,
        "init": args.init,
        "snapshots": len(result.snapshots) if result else args.snapshots,
        "hyperparameters": entry.hyperparameters(args.topics, data.train, **plan.options),
        **{("test_" + k if k == "accuracy" else k): v
           for k, v in metrics.get(args.average, {}).items()},
        "average": args.average, "test_metrics_by_strategy": metrics,
        "train_seconds": run.train_seconds, "predict_seconds": run.predict_seconds,
        "token_iterations_per_second": run.token_iterations_per_second,
        "train_tokens": data.train.num_tokens, "test_tokens_dropped": data.dropped,
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
    return summary


def _write_figures(run, tree, data: _Data, out: Path) -> list:
    """OUT/trace.png and the topics (:func:`_write_topics`), written last: a figure that
    cannot be drawn is a warning and costs no result. The paths written."""
    if run.result is None:
        return []
    from topiczoo.diagnostics import plot_trace, save_figure

    written = []
    try:
        save_figure(plot_trace(tree), out / "trace.png")
        written.append(out / "trace.png")
    except Exception as err:  # noqa: BLE001 - any plotting failure is reported, not fatal
        print(f"warning: trace.png not written: {err}", file=sys.stderr)
    if run.result.snapshots:
        written += _write_topics(run.result, data.train.label_names, out)
    return written


def _print_results(args, run, metrics: dict, table, written: list) -> None:
    """The test metrics (the headline metric by strategy in brackets: F1 for multi-label),
    the times, the convergence table and the files written."""
    from topiczoo.compare import chains_text
    from topiczoo.diagnostics import format_table

    if metrics:
        shown = metrics[args.average]
        headline = "f1" if "f1" in shown else next(iter(shown))
        named = "" if headline == next(iter(shown)) else f"{headline}: "
        print(f"test ({args.average}): " + ", ".join(f"{k} {v:.4f}" for k, v in shown.items())
              + f"   [{named}" + "  ".join(f"{s} {m[headline]:.4f}" for s, m in metrics.items())
              + "]")
    print(f"training: {run.train_seconds:.1f} s, {run.token_iterations_per_second / 1e6:.2f} M "
          f"token-iterations/s ({chains_text(args.chains)}); prediction "
          f"{run.predict_seconds:.1f} s")
    if table is not None:
        print(format_table(table))
    print("wrote " + ", ".join(str(p) for p in written))


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
    """summary.json's fallback: a numpy scalar as the Python number it holds."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON: {value!r}")


def _finite(x):
    """A float, None for an infinite or undefined one (JSON has neither)."""
    x = float(x)
    return x if math.isfinite(x) else None


# --------------------------------------------------------------------------------- the command


def run_diagnose(args) -> str:
    """``topiczoo diagnose RUN_DIR``: write RUN_DIR/report.md and print its table;
    ``runs/latest`` (a link, or the text file that stands for one) names the newest run."""
    from topiczoo.diagnostics import diagnose

    text = diagnose(rundir.resolve(args.run_dir))
    print(text)
    return text


def main(argv=None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); returns the exit status
    (0 done, 2 an input error or an unreachable --coordinator printed as one line, 130
    interrupted; argparse's usage errors exit with 2 through SystemExit). Every argument is
    parsed and checked before the models (and JAX) are imported."""
    args = build_parser().parse_args(argv)
    if args.command in ("fit", "compare"):
        from topiczoo.memory import return_large_blocks_to_os

        return_large_blocks_to_os()  # long fits: a peak RSS ~20% lower (topiczoo.memory)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning  # a warning is one line, as an error is
        return _dispatch(args)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """A warning as one line, ``warning: ...``, as an error is one line."""
    print(f"warning: {message}", file=sys.stderr if file is None else file)


def _dispatch(args) -> int:
    """Run the command; an input error is one line on stderr (exit 2), Ctrl-C says what it
    left (exit 130)."""
    try:
        if args.command == "fit":
            run_fit(args)
        elif args.command == "diagnose":
            run_diagnose(args)
        elif args.command == "compare":
            run_compare(args)
    except (ValueError, TypeError, FileNotFoundError, IsADirectoryError,
            InsufficientMemoryError, ConnectionError, hosts.CoordinatorUnreachableError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_interrupted(args), file=sys.stderr)
        return 130
    return 0


def _interrupted(args) -> str:
    """What Ctrl-C leaves: finished work to resume from (and the --out that resumes it when
    the run went to a new folder), or nothing saved yet."""
    if not (getattr(args, "checkpoint", False) or args.command == "compare"):
        return "interrupted"
    made = getattr(args, "run_dir", None)
    out = Path(made if made is not None else args.out) if (made or args.out) else None
    saved = out is not None and out.is_dir() and (
        any(out.glob("checkpoint*.npz")) or any(out.glob("cells/*.json"))
        or (out / "choose_c.json").is_file())
    if not saved:
        return "interrupted before any work was saved: the same command starts afresh"
    if args.out is None:  # a new folder of its own: the same command would make another
        return f"interrupted; resume with the same command and --out {out} (finished work there)"
    return f"interrupted; resume with the same command (finished work in {out})"


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
