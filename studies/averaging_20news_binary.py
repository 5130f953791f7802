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

import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

import _averaging as av  # noqa: E402
from _harness import (command_line, ensure_dir, mean_sd, parser, pyplot,  # noqa: E402
                      save_figure, saved_args, write_json, write_outputs)
from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.models import gslda  # noqa: E402
from topiczoo.predict import STRATEGIES  # noqa: E402

MAIN = av.MAIN
EXTRA = ("sf_each", "sa_each", "ma_chain0", "ma_last", "ma_prob")


def accuracies(prediction, snapshot_iters, T, y) -> dict:
    """Accuracy of every strategy for training length T from the full score array."""
    pred = av.at_length(prediction, snapshot_iters, T)
    out = {s: pred.accuracy(y, s) for s in STRATEGIES}
    num_chains = pred.scores.shape[0]
    for s in ("sf", "sa"):
        out[f"{s}_each"] = float(np.mean([av.one_chain(pred, c).accuracy(y, s)
                                          for c in range(num_chains)]))
    out["ma_chain0"] = av.one_chain(pred, 0).accuracy(y, "ma")
    out["ma_last"] = av.last_snapshot(pred).accuracy(y, "ma")
    out["ma_prob"] = pred.accuracy(y, "ma", average="probabilities")
    out["num_models"] = av.num_models(pred)
    return out


def run_seed(data, seed, args, report_dir=None) -> dict:
    model = gslda(args.topics, c=args.c, alpha=1.0, beta=0.01, nu2=1.0)
    result, prediction, snapshot_iters, row = av.fit_and_score(model, data, seed, args)
    y = data.test.labels
    by_length = {int(T): accuracies(prediction, snapshot_iters, T, y) for T in args.lengths}
    row.update(final_train_accuracy=float(np.mean(result.draws["train_accuracy"][:, -1])),
               accuracy=by_length)
    av.log_seed(row, by_length, lambda T, a: " ".join(f"{s} {a[s]:.3f}" for s in MAIN))
    if report_dir is not None:  # the T = max row of the study goes into summary.json
        acc = by_length[max(args.lengths)]
        av.write_run_report(
            result, data, args, row, report_dir, model="gslda",
            hyperparameters={"alpha": 1.0, "beta": 0.01, "nu2": 1.0, "c": args.c},
            metrics={"test_accuracy": acc["ma"], "average": "ma",
                     "test_accuracy_by_strategy": {s: acc[s] for s in STRATEGIES}},
            what="accuracies")
    return row


def aggregate(rows, lengths) -> dict:
    table = {}
    for T in lengths:
        values = {k: np.array([r["accuracy"][T][k] for r in rows]) for k in MAIN + EXTRA}
        table[T] = {k: mean_sd(v) for k, v in values.items()}
        table[T]["num_models"] = rows[0]["accuracy"][T]["num_models"]
        for k in ("mf", "ma"):  # paired differences to the single-chain strategies
            for base in ("sf", "sa"):
                table[T][f"{k}-{base}"] = mean_sd(values[k] - values[base])
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


def figure(table, rows, args, path):
    plt = pyplot()
    lengths = np.array(list(table))
    n = len(rows)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    av.plot_strategies(axes[0], lengths, lambda T, k: table[T][k], n)
    av.plot_paired(axes[1], lengths, lambda T, k: table[T][k], rows,
                   lambda r, T, k: r["accuracy"][T][k])
    for ax in axes:
        av.lengths_axis(ax, lengths)
    axes[0].set_ylabel("test accuracy")
    axes[0].set_title("Test accuracy by averaging strategy")
    low, high = axes[0].get_ylim()
    axes[0].set_ylim(low - 0.35 * (high - low), high)  # room for the legend below the lines
    axes[0].legend(fontsize="small", loc="lower left")
    axes[1].set_ylabel("accuracy difference (paired by seed)")
    axes[1].set_title("Multiple minus single (faint: each seed)")
    axes[1].legend(fontsize="small", loc="best")
    sd_note = f"mean +- sd over {n} seeds" if n > 1 else "one seed"
    fig.suptitle(f"gSLDA (c={args.c:g}, K={args.topics}) on 20news-binary, "
                 f"{args.chains} chains, {sd_note}")
    fig.tight_layout()
    save_figure(fig, path)


def main():
    p = parser(__doc__, topics=20, test_burnin=20, test_draws=10, replot=True)
    av.add_arguments(p)
    p.add_argument("--c", type=float, default=25.0)
    args = p.parse_args()
    stem = Path(args.out) / "averaging_20news_binary"
    if args.replot:
        rows, wall = av.load_runs(stem, args, "accuracy")
        table = aggregate(rows, args.lengths)
        write_outputs(stem, markdown(rows, table, args, wall),
                      lambda path: figure(table, rows, args, path))
        return
    av.check_lengths(p, args)

    wall = time.perf_counter()
    data = load_dataset("20news-binary", data_dir=args.data_dir)
    out = ensure_dir(args.out)
    rows = [run_seed(data, seed, args, out / f"run_seed{seed}" if i == 0 else None)
            for i, seed in enumerate(args.seeds)]
    wall = time.perf_counter() - wall
    table = aggregate(rows, args.lengths)
    write_json(stem.with_suffix(".json"),
               {"command": command_line(__file__), "args": saved_args(args),
                "wall_seconds": wall, "runs": rows,
                "table": {str(T): v for T, v in table.items()}}, indent=1)
    write_outputs(stem, markdown(rows, table, args, wall),
                  lambda path: figure(table, rows, args, path))


if __name__ == "__main__":
    main()
