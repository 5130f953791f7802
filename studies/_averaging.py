"""The design both averaging studies share (``averaging_20news_binary.py``,
``averaging_movie_scale.py``): one long run per seed serves every training length T.

The fit takes a snapshot every L_TR = ``--lag`` iterations from the start
(``fit(snapshot_lag=L_TR, num_burnin=0)``), one test chain per chain and snapshot is run once
(``predict``: B_TE burn-in sweeps, J kept draws, L_TE = 1), and the prediction at length T uses
the snapshots in (T/2, T] (B_TR = T/2, the last model at T): exactly what a run stopped at T
would give. Here: the options, that run, the selections of its scores, the diagnostics report
of one run, and the panels of the figures. Import after ``_harness.single_thread()``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from _harness import ensure_dir, load_run, log
from topiczoo.diagnostics import save_datatree, to_datatree, write_report
from topiczoo.fit import fit
from topiczoo.predict import Prediction, predict

MAIN = ("sf", "sa", "mf", "ma")
LABELS = {"sf": "SF (single final)", "sa": "SA (single average)",
          "mf": "MF (multiple final)", "ma": "MA (multiple average)"}
STYLES = {"sf": ("C0", "o", "--"), "sa": ("C1", "s", "--"), "mf": ("C2", "^", "-"),
          "ma": ("C3", "D", "-")}
DODGE = {k: 2.0 ** (0.035 * (i - 1.5)) for i, k in enumerate(MAIN)}  # x offsets, log axis
#: (multiple, single) strategy pairs of the paired-difference panel, with colour and marker
PAIRS = (("mf", "sf", "C2", "^"), ("ma", "sa", "C3", "D"))


def add_arguments(p) -> None:
    """``--seeds``, ``--lengths`` (the training lengths T) and ``--lag`` (L_TR)."""
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--lengths", type=int, nargs="+", default=[25, 50, 100, 200, 400])
    p.add_argument("--lag", type=int, default=5, help="L_TR: snapshot every LAG iterations")


def check_lengths(p, args) -> None:
    """Every T a multiple of the lag (so that T is a snapshot); sorts ``args.lengths``."""
    if any(T % args.lag for T in args.lengths):
        p.error("every training length must be a multiple of --lag")
    args.lengths = sorted(args.lengths)


def load_runs(stem: Path, args, key: str):
    """For ``--replot``: the runs of a previous .json (``r[key]`` by integer T) and its wall
    time; ``args`` take its settings."""
    saved = load_run(stem, args)
    rows = saved["runs"]
    for r in rows:
        r[key] = {int(T): a for T, a in r[key].items()}
    return rows, saved["wall_seconds"]


# ------------------------------------------------------------------------------ the run


def fit_and_score(model, data, seed, args):
    """The one long run of a seed and its test scores: (result, prediction, snapshot
    iterations, row) where row holds the seed, the timings and the number of snapshots."""
    tic = time.perf_counter()
    result = fit(model, data.train, num_chains=args.chains, num_iterations=max(args.lengths),
                 num_burnin=0, snapshot_lag=args.lag, chunk=50, seed=seed, progress=False)
    train_seconds = time.perf_counter() - tic
    tic = time.perf_counter()
    prediction = predict(result, data.test, num_burnin=args.test_burnin,
                         num_draws=args.test_draws, lag=1, seed=seed)
    predict_seconds = time.perf_counter() - tic
    snapshot_iters = np.array([s.iteration for s in result.snapshots])
    tpi = result.sample_stats["time_per_iteration"][0]
    chunk_values = tpi[np.r_[True, np.diff(tpi) != 0]]  # one value per chunk
    row = {"seed": seed, "train_seconds": train_seconds, "predict_seconds": predict_seconds,
           "num_snapshots": len(snapshot_iters),
           "seconds_per_iteration_median": float(np.median(chunk_values[1:])),
           "seconds_per_iteration_first_chunk": float(chunk_values[0])}
    return result, prediction, snapshot_iters, row


def _with_scores(prediction: Prediction, scores) -> Prediction:
    return dataclasses.replace(prediction, scores=scores, zbar=None)


def at_length(prediction: Prediction, snapshot_iters, T) -> Prediction:
    """The prediction of a run stopped at T: the snapshots in (T/2, T], the last at T."""
    keep = np.flatnonzero((snapshot_iters > T / 2) & (snapshot_iters <= T))
    assert snapshot_iters[keep[-1]] == T, (T, snapshot_iters)
    return _with_scores(prediction, prediction.scores[:, keep])


def one_chain(prediction: Prediction, c: int) -> Prediction:
    """Chain ``c`` alone (it becomes "chain 0" of the single-chain strategies)."""
    return _with_scores(prediction, prediction.scores[[c]])


def last_snapshot(prediction: Prediction) -> Prediction:
    """Every chain's last model only."""
    return _with_scores(prediction, prediction.scores[:, -1:])


def num_models(prediction: Prediction) -> int:
    """Chains x snapshots."""
    return int(prediction.scores.shape[0] * prediction.scores.shape[1])


def log_seed(row, by_length, describe) -> None:
    """One line on stderr per finished seed: timings and ``describe(T, metrics)`` for each T."""
    log(f"seed {row['seed']}: train {row['train_seconds']:.0f} s, predict "
        f"{row['predict_seconds']:.0f} s; "
        + "; ".join(f"T={T}: " + describe(T, a) for T, a in by_length.items()))


def write_run_report(result, data, args, row, out: Path, *, model: str, hyperparameters: dict,
                     metrics: dict, what: str) -> None:
    """A ``topiczoo diagnose`` report of one run with burn-in = half the run in ``out``: its
    tree (``posterior.nc``, without the test scores, to stay small), ``summary.json`` (the
    run, its test ``metrics`` at the longest T, and a note: ``what`` was measured, from which
    snapshots and test chains) and ``write_report``'s report and figures."""
    T = max(args.lengths)
    summary = {"model": model, "data": data.name, "topics": args.topics,
               "chains": args.chains, "iterations": T, "burnin": T // 2, "seed": row["seed"],
               "hyperparameters": hyperparameters, **metrics,
               "train_seconds": row["train_seconds"],
               "predict_seconds": row["predict_seconds"],
               "token_iterations_per_second": result.token_iterations_per_second,
               "note": f"written by studies/{Path(sys.argv[0]).name}; {what} from the "
                       f"snapshots every {args.lag} iterations in the second half "
                       f"(iterations {T // 2 + args.lag}-{T}), B_TE = {args.test_burnin}, "
                       f"J = {args.test_draws}"}
    view = dataclasses.replace(result, num_burnin=T // 2, snapshots=[])
    ensure_dir(out)
    save_datatree(to_datatree(view), out / "posterior.nc")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    write_report(out)


# ------------------------------------------------------------------------------ figure panels


def plot_strategies(ax, lengths, cell, n: int) -> None:
    """One line per strategy of :data:`MAIN` against T: ``cell(T, k) -> (mean, sd)`` (error
    bars for more than one seed)."""
    for k in MAIN:
        color, marker, ls = STYLES[k]
        mean = np.array([cell(T, k)[0] for T in lengths])
        sd = np.array([cell(T, k)[1] for T in lengths])
        ax.errorbar(lengths * DODGE[k], mean, yerr=sd if n > 1 else None, color=color,
                    marker=marker, linestyle=ls, capsize=3, linewidth=1.6, elinewidth=1.0,
                    label=LABELS[k])


def plot_paired(ax, lengths, cell, rows, value) -> None:
    """Multiple minus single (:data:`PAIRS`) against T: ``cell(T, "mf-sf") -> (mean, sd)``,
    each seed's difference faint (``value(row, T, k)``) when there are several."""
    n = len(rows)
    for k, base, color, marker in PAIRS:
        d = np.array([cell(T, f"{k}-{base}")[0] for T in lengths])
        dsd = np.array([cell(T, f"{k}-{base}")[1] for T in lengths])
        ax.errorbar(lengths * DODGE[k], d, yerr=dsd if n > 1 else None, color=color,
                    marker=marker, capsize=3, linewidth=1.6, elinewidth=1.0,
                    label=f"{k.upper()} - {base.upper()}")
        if n > 1:  # each seed's paired difference, faint
            for r in rows:
                per = [value(r, T, k) - value(r, T, base) for T in lengths]
                ax.plot(lengths * DODGE[k], per, color=color, alpha=0.25, linewidth=0.8,
                        marker=marker, markersize=3)
    ax.axhline(0, color="0.3", linewidth=0.9)


def lengths_axis(ax, lengths) -> None:
    """x axis: the training lengths T on a log2 scale."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(T) for T in lengths])
    ax.set_xlabel("training iterations T (burn-in T/2)")
    ax.grid(alpha=0.3)
