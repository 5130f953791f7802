"""Averaging strategies (SF, SA, MF, MA) against training length on 20news-binary.

The averaging paper (Nguyen, Boyd-Graber & Resnik 2014, Figures 3-4) found that averaging over
multiple training samples (MF, MA) predicts clearly better than a single final training
sample (SF, SA). This study repeats its experiment with gSLDA (c = 25, K = 20, alpha = 1,
beta = 0.01, nu2 = 1) on alt.atheism vs talk.religion.misc (856 / 569 documents), 4 chains.

One long run per seed serves every training length T: the fit takes a snapshot every
L_TR = ``--lag`` iterations from the start (``fit(snapshot_lag=L_TR, num_burnin=0)``), one
test chain per chain and snapshot is run once (``predict``: B_TE = 20 burn-in sweeps, J = 10
kept draws, L_TE = 1), and the prediction at length T uses the snapshots in (T/2, T]
(training burn-in B_TR = T/2, lag L_TR, the last model at T), so each T is exactly what a
run stopped at T with those settings would give (the chain up to T does not depend on what
comes after it; each test chain depends only on its snapshot and its seed).

Strategies (``topiczoo.predict``): SF = chain 0, model at T, last test draw; SA = chain 0,
model at T, mean over the J test draws; MF = mean over the 4 chains x selected snapshots of
each test chain's last draw; MA = mean over chains, snapshots and test draws. Extra columns
separate the two sources of averaging: ``sa_each`` / ``sf_each`` the accuracy of SF / SA
averaged over which chain plays "chain 0" (the expected single-chain accuracy, less noisy);
``ma_chain0`` MA over chain 0's snapshots only (one chain, many snapshots); ``ma_last`` MA over
the 4 chains' model at T only (many chains, one snapshot); ``ma_prob`` MA averaging the
probabilities instead of the scores.

    python studies/averaging_20news_binary.py --seeds 0 1 2

writes ``studies/results/averaging_20news_binary.{md,json,png}`` and, for the first seed, a
diagnostics report of the run (``studies/results/run_seed0/report.md``, burn-in = half the run).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from topiczoo.datasets import load_dataset
from topiczoo.diagnostics import save_datatree, to_datatree, write_report
from topiczoo.fit import fit
from topiczoo.models import gslda
from topiczoo.predict import STRATEGIES, Prediction, predict

HERE = Path(__file__).resolve().parent
MAIN = ("sf", "sa", "mf", "ma")
EXTRA = ("sf_each", "sa_each", "ma_chain0", "ma_last", "ma_prob")
LABELS = {"sf": "SF (single final)", "sa": "SA (single average)",
          "mf": "MF (multiple final)", "ma": "MA (multiple average)"}


def accuracies(scores, snapshot_iters, T, response, y) -> dict:
    """Accuracy of every strategy for training length T from the full score array."""
    keep = np.flatnonzero((snapshot_iters > T / 2) & (snapshot_iters <= T))
    assert snapshot_iters[keep[-1]] == T, (T, snapshot_iters)
    pred = Prediction(scores[:, keep], response)
    out = {s: pred.accuracy(y, s) for s in STRATEGIES}
    num_chains = scores.shape[0]
    for s in ("sf", "sa"):
        out[f"{s}_each"] = float(np.mean([
            Prediction(scores[[c]][:, keep], response).accuracy(y, s)
            for c in range(num_chains)]))
    out["ma_chain0"] = Prediction(scores[[0]][:, keep], response).accuracy(y, "ma")
    out["ma_last"] = Prediction(scores[:, keep[-1:]], response).accuracy(y, "ma")
    out["ma_prob"] = pred.accuracy(y, "ma", average="probabilities")
    out["num_models"] = int(num_chains * len(keep))
    return out


def run_seed(data, seed, args, report_dir=None) -> dict:
    model = gslda(args.topics, c=args.c, alpha=1.0, beta=0.01, nu2=1.0)
    tic = time.perf_counter()
    result = fit(model, data.train, num_chains=args.chains, num_iterations=max(args.lengths),
                 num_burnin=0, snapshot_lag=args.lag, chunk=50, seed=seed, progress=False)
    train_seconds = time.perf_counter() - tic
    tic = time.perf_counter()
    prediction = predict(result, data.test, num_burnin=args.test_burnin,
                         num_draws=args.test_draws, lag=1, seed=seed)
    predict_seconds = time.perf_counter() - tic
    snapshot_iters = np.array([s.iteration for s in result.snapshots])
    y = data.test.labels
    by_length = {int(T): accuracies(prediction.scores, snapshot_iters, T, model.response, y)
                 for T in args.lengths}
    tpi = result.sample_stats["time_per_iteration"][0]
    chunk_values = tpi[np.r_[True, np.diff(tpi) != 0]]
    row = {"seed": seed, "train_seconds": train_seconds, "predict_seconds": predict_seconds,
           "num_snapshots": len(snapshot_iters),
           "seconds_per_iteration_median": float(np.median(chunk_values[1:])),
           "seconds_per_iteration_first_chunk": float(chunk_values[0]),
           "final_train_accuracy": float(np.mean(result.draws["train_accuracy"][:, -1])),
           "accuracy": by_length}
    print(f"seed {seed}: train {train_seconds:.0f} s, predict {predict_seconds:.0f} s; "
          + "; ".join(f"T={T}: " + " ".join(f"{s} {a[s]:.3f}" for s in MAIN)
                      for T, a in by_length.items()), file=sys.stderr, flush=True)
    if report_dir is not None:
        write_run_report(result, data, by_length, args, seed, train_seconds, predict_seconds,
                         report_dir)
    return row


def write_run_report(result, data, by_length, args, seed, train_seconds, predict_seconds,
                     out):
    """A ``topiczoo diagnose`` report of one run, burn-in = half the run. The accuracies
    (the T = max row of the study) go into summary.json; the test scores are left out of
    posterior.nc to keep it small (4 chains x 40 snapshots x 10 draws x 569 documents would
    be 3.6 MB)."""
    T = max(args.lengths)
    view = dataclasses.replace(result, num_burnin=T // 2, snapshots=[])
    out.mkdir(parents=True, exist_ok=True)
    save_datatree(to_datatree(view), out / "posterior.nc")
    acc = by_length[T]
    summary = {"model": "gslda", "data": data.name, "topics": args.topics,
               "chains": args.chains, "iterations": T, "burnin": T // 2, "seed": seed,
               "hyperparameters": {"alpha": 1.0, "beta": 0.01, "nu2": 1.0, "c": args.c},
               "test_accuracy": acc["ma"], "average": "ma",
               "test_accuracy_by_strategy": {s: acc[s] for s in STRATEGIES},
               "train_seconds": train_seconds, "predict_seconds": predict_seconds,
               "token_iterations_per_second": result.token_iterations_per_second,
               "note": f"written by studies/{Path(__file__).name}; accuracies from the "
                       f"snapshots every {args.lag} iterations in the second half "
                       f"(iterations {T // 2 + args.lag}-{T}), B_TE = {args.test_burnin}, "
                       f"J = {args.test_draws}"}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    write_report(out)


def aggregate(rows, lengths) -> dict:
    keys = MAIN + EXTRA
    table = {}
    for T in lengths:
        values = {k: np.array([r["accuracy"][T][k] for r in rows]) for k in keys}
        table[T] = {k: (float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0)
                    for k, v in values.items()}
        table[T]["num_models"] = rows[0]["accuracy"][T]["num_models"]
        for k in ("mf", "ma"):  # paired differences to the single-chain strategies
            for base in ("sf", "sa"):
                d = values[k] - values[base]
                table[T][f"{k}-{base}"] = (float(d.mean()),
                                           float(d.std(ddof=1)) if len(d) > 1 else 0.0)
    return table


def markdown(rows, table, args, wall) -> str:
    seeds = [r["seed"] for r in rows]
    n = len(seeds)
    lines = ["# Averaging strategies vs training length: gSLDA on 20news-binary", "",
             f"gSLDA c = {args.c:g}, K = {args.topics}, alpha = 1, beta = 0.01, nu2 = 1; "
             f"{args.chains} chains; snapshots every L_TR = {args.lag} iterations, B_TR = T/2; "
             f"test chains B_TE = {args.test_burnin}, J = {args.test_draws}, L_TE = 1; "
             f"{len(rows[0]['accuracy'])} training lengths T from one run of "
             f"{max(args.lengths)} iterations per seed; seeds {seeds}; "
             f"569 test documents. Wall time {wall / 60:.1f} min.", "",
             f"## Test accuracy, mean {'+- sd ' if n > 1 else ''}over {n} seed(s)", "",
             "| T | models (chains x snapshots) | SF | SA | MF | MA |",
             "|---:|---:|---:|---:|---:|---:|"]

    def cell(v):
        return f"{v[0]:.4f}" + (f" +- {v[1]:.4f}" if n > 1 else "")

    for T, t in table.items():
        lines.append(f"| {T} | {t['num_models']} | " + " | ".join(cell(t[k]) for k in MAIN)
                     + " |")
    lines += ["", "## Paired differences (same seed, same test chains), mean +- sd over seeds",
              "", "| T | MF - SF | MA - SF | MF - SA | MA - SA |", "|---:|---:|---:|---:|---:|"]
    for T, t in table.items():
        lines.append(f"| {T} | " + " | ".join(
            f"{t[k][0]:+.4f} +- {t[k][1]:.4f}" for k in ("mf-sf", "ma-sf", "mf-sa", "ma-sa"))
            + " |")
    lines += ["", "## Where the gain comes from (mean over seeds)", "",
              "sf_each / sa_each: SF / SA averaged over which of the chains is the single one; "
              "ma_chain0: MA over chain 0's snapshots only; ma_last: MA over the chains' model "
              "at T only; ma_prob: MA averaging probabilities instead of scores.", "",
              "| T | sf_each | sa_each | ma_chain0 | ma_last | ma_prob | MA |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    for T, t in table.items():
        lines.append(f"| {T} | " + " | ".join(f"{t[k][0]:.4f}" for k in EXTRA + ("ma",))
                     + " |")
    lines += ["", "## Per seed", "", "| seed | T | SF | SA | MF | MA | train s | predict s |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        for T, a in r["accuracy"].items():
            lines.append(f"| {r['seed']} | {T} | " + " | ".join(f"{a[k]:.4f}" for k in MAIN)
                         + f" | {r['train_seconds']:.0f} | {r['predict_seconds']:.0f} |")
    spi = np.median([r["seconds_per_iteration_median"] for r in rows])
    lines += ["", f"Median seconds per training iteration (4 chains): {spi:.3f} "
              f"(`time_per_iteration`, first chunk excluded).", ""]
    return "\n".join(lines)


def figure(table, rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = np.array(list(table))
    n = len(rows)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    styles = {"sf": ("C0", "o", "--"), "sa": ("C1", "s", "--"), "mf": ("C2", "^", "-"),
              "ma": ("C3", "D", "-")}
    dodge = {k: 2.0 ** (0.035 * (i - 1.5)) for i, k in enumerate(MAIN)}  # x offsets, log axis
    for k in MAIN:
        color, marker, ls = styles[k]
        mean = np.array([table[T][k][0] for T in lengths])
        sd = np.array([table[T][k][1] for T in lengths])
        axes[0].errorbar(lengths * dodge[k], mean, yerr=sd if n > 1 else None, color=color,
                         marker=marker, linestyle=ls, capsize=3, linewidth=1.6,
                         elinewidth=1.0, label=LABELS[k])
    for k, base, color, marker in (("mf", "sf", "C2", "^"), ("ma", "sa", "C3", "D")):
        d = np.array([table[T][f"{k}-{base}"][0] for T in lengths])
        dsd = np.array([table[T][f"{k}-{base}"][1] for T in lengths])
        axes[1].errorbar(lengths * dodge[k], d, yerr=dsd if n > 1 else None, color=color,
                         marker=marker, capsize=3, linewidth=1.6, elinewidth=1.0,
                         label=f"{k.upper()} - {base.upper()}")
        if n > 1:  # each seed's paired difference, faint
            for r in rows:
                per = [r["accuracy"][T][k] - r["accuracy"][T][base] for T in lengths]
                axes[1].plot(lengths * dodge[k], per, color=color, alpha=0.25, linewidth=0.8,
                             marker=marker, markersize=3)
    axes[1].axhline(0, color="0.3", linewidth=0.9)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths)
        ax.set_xticklabels([str(T) for T in lengths])
        ax.set_xlabel("training iterations T (burn-in T/2)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("test accuracy")
    axes[0].set_title("Test accuracy by averaging strategy")
    low, high = axes[0].get_ylim()
    axes[0].set_ylim(low - 0.35 * (high - low), high)  # room for the legend below the lines
    axes[0].legend(fontsize="small", loc="lower left")
    axes[1].set_ylabel("accuracy difference (paired by seed)")
    axes[1].set_title("Multiple minus single (faint: each seed)")
    axes[1].legend(fontsize="small", loc="best")
    sd_note = f"mean +- sd over {n} seeds" if n > 1 else "one seed"
    fig.suptitle(f"gSLDA (c=25, K=20) on 20news-binary, 4 chains, {sd_note}")
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--lengths", type=int, nargs="+", default=[25, 50, 100, 200, 400])
    parser.add_argument("--lag", type=int, default=5, help="L_TR: snapshot every LAG iterations")
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--c", type=float, default=25.0)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--test-burnin", type=int, default=20)
    parser.add_argument("--test-draws", type=int, default=10)
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--replot", action="store_true",
                        help="only rewrite the .md and .png from the .json of a previous run")
    args = parser.parse_args()
    stem = Path(args.out) / "averaging_20news_binary"
    if args.replot:
        saved = json.loads(stem.with_suffix(".json").read_text())
        for key, value in saved["args"].items():
            if key not in ("out", "replot"):
                setattr(args, key, value)
        rows = saved["runs"]
        for r in rows:
            r["accuracy"] = {int(T): a for T, a in r["accuracy"].items()}
        table = aggregate(rows, args.lengths)
        stem.with_suffix(".md").write_text(markdown(rows, table, args, saved["wall_seconds"]))
        figure(table, rows, stem.with_suffix(".png"))
        return
    if any(T % args.lag for T in args.lengths):
        parser.error("every training length must be a multiple of --lag")
    args.lengths = sorted(args.lengths)

    wall = time.perf_counter()
    data = load_dataset("20news-binary", data_dir=args.data_dir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [run_seed(data, seed, args, out / f"run_seed{seed}" if i == 0 else None)
            for i, seed in enumerate(args.seeds)]
    wall = time.perf_counter() - wall
    table = aggregate(rows, args.lengths)
    (stem.with_suffix(".json")).write_text(json.dumps(
        {"command": " ".join(sys.argv), "args": vars(args), "wall_seconds": wall,
         "runs": rows, "table": {str(T): v for T, v in table.items()}}, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(rows, table, args, wall))
    figure(table, rows, stem.with_suffix(".png"))
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
