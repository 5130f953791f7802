"""Averaging strategies (SF, SA, MF, MA) against training length: Gaussian sLDA on movie-scale.

The regression half of the averaging paper (Nguyen, Boyd-Graber & Resnik 2014, Figures 3-4:
SLDA on review ratings, MSE and predictive R^2): does averaging over several training samples
and chains (MF, MA) predict better than the final training sample of one chain (SF, SA)?
Gaussian sLDA (learned s2 ~ IG(1, 0.01), K = 20, alpha = 1, beta = 0.01, nu2 = 1 by default)
on movie-scale (Pang & Lee scale data, ratings in [0, 1], 4,005 / 1,001 documents), 4 chains.

The design is that of ``averaging_20news_binary.py``: one long run per seed serves every
training length T. The fit takes a snapshot every L_TR = ``--lag`` iterations from the start
(``fit(snapshot_lag=L_TR, num_burnin=0)``), one test chain per chain and snapshot is run once
(``predict``: B_TE = 20 burn-in sweeps, J = 10 kept draws, L_TE = 1), and the prediction at
length T uses the snapshots in (T/2, T] (B_TR = T/2, the last model at T), which is exactly
what a run stopped at T would give.

Strategies (``topiczoo.predict``; the predicted rating is the averaged score eta . zbar):
SF = chain 0, model at T, last test draw; SA = chain 0, model at T, mean over the J test
draws; MF = mean over the 4 chains x selected snapshots of each test chain's last draw;
MA = mean over chains, snapshots and test draws. Extra columns: ``sf_each`` / ``sa_each`` the
metric of SF / SA averaged over which chain plays "chain 0" (the expected single-chain
result, less noisy); ``ma_chain0`` MA over chain 0's snapshots only (one chain, many
snapshots); ``ma_last`` MA over the 4 chains' model at T only (many chains, one snapshot).

    python studies/averaging_movie_scale.py --seeds 0 1 2
    python studies/averaging_movie_scale.py --seeds 0 --nu2 100 --tag nu2_100

write ``studies/results/averaging_movie_scale[_TAG].{md,json,png}`` and, for the first seed, a
diagnostics report of the run (``studies/results/averaging_movie_scale[_TAG]_run_seed0/``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

import _averaging as av  # noqa: E402
from _harness import (command_line, ensure_dir, log, mean_sd, parser, pyplot,  # noqa: E402
                      save_figure, saved_args, write_json, write_outputs)
from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.metrics import mean_squared_error, predictive_r2  # noqa: E402
from topiczoo.models import slda_gaussian  # noqa: E402
from topiczoo.predict import STRATEGIES  # noqa: E402

MAIN = av.MAIN
EXTRA = ("sf_each", "sa_each", "ma_chain0", "ma_last")
METRICS = ("mse", "r2")


def _metrics(yhat, y) -> dict:
    return {"mse": mean_squared_error(y, yhat), "r2": predictive_r2(y, yhat)}


def evaluate(prediction, snapshot_iters, T, y) -> dict:
    """MSE and predictive R^2 of every strategy for training length T: {metric: {key: value}}."""
    pred = av.at_length(prediction, snapshot_iters, T)
    per = {s: _metrics(pred.labels(s), y) for s in STRATEGIES}
    num_chains = pred.scores.shape[0]
    for s in ("sf", "sa"):
        each = [_metrics(av.one_chain(pred, c).labels(s), y) for c in range(num_chains)]
        per[f"{s}_each"] = {m: float(np.mean([e[m] for e in each])) for m in METRICS}
    per["ma_chain0"] = _metrics(av.one_chain(pred, 0).labels("ma"), y)
    per["ma_last"] = _metrics(av.last_snapshot(pred).labels("ma"), y)
    out = {m: {k: v[m] for k, v in per.items()} for m in METRICS}
    out["num_models"] = av.num_models(pred)
    return out


def run_seed(data, seed, args, report_dir=None) -> dict:
    model = slda_gaussian(args.topics, learn_s2=True, a0=1.0, b0=0.01, alpha=1.0, beta=0.01,
                          nu2=args.nu2)
    result, prediction, snapshot_iters, row = av.fit_and_score(model, data, seed, args)
    y = np.asarray(data.test.labels, np.float64)
    by_length = {int(T): evaluate(prediction, snapshot_iters, T, y) for T in args.lengths}
    row.update(final_train_mse=float(np.mean(result.draws["train_mse"][:, -1])),
               final_s2=float(np.mean(result.draws["augmentation_mean"][:, -1])),
               final_eta_norm=[float(v) for v in result.draws["eta_norm"][:, -1]],
               metrics=by_length)
    av.log_seed(row, by_length,
                lambda T, a: "R2 " + " ".join(f"{s} {a['r2'][s]:.3f}" for s in MAIN))
    if report_dir is not None:  # the T = max row; the report's own table is for accuracies
        m = by_length[max(args.lengths)]
        av.write_run_report(
            result, data, args, row, report_dir, model="slda-gaussian",
            hyperparameters={"alpha": 1.0, "beta": 0.01, "nu2": args.nu2,
                             "s2": "learned, IG(1, 0.01)"},
            metrics={"test_mse_by_strategy": {s: m["mse"][s] for s in STRATEGIES},
                     "test_r2_by_strategy": {s: m["r2"][s] for s in STRATEGIES}},
            what="regression: test predictive R^2 by strategy (SF/SA/MF/MA) = "
                 + " / ".join(f"{m['r2'][s]:.4f}" for s in STRATEGIES)
                 + ", MSE = " + " / ".join(f"{m['mse'][s]:.5f}" for s in STRATEGIES) + ",")
    return row


def aggregate(rows, lengths) -> dict:
    table = {}
    for T in lengths:
        table[T] = {"num_models": rows[0]["metrics"][T]["num_models"]}
        for metric in METRICS:
            values = {k: np.array([r["metrics"][T][metric][k] for r in rows])
                      for k in MAIN + EXTRA}
            t = {k: mean_sd(v) for k, v in values.items()}
            for k in ("mf", "ma"):  # paired differences to the single-chain strategies
                for base in ("sf", "sa", "sf_each", "sa_each"):
                    t[f"{k}-{base}"] = mean_sd(values[k] - values[base])
            table[T][metric] = t
    return table


def markdown(rows, table, args, wall) -> str:
    seeds = [r["seed"] for r in rows]
    n = len(seeds)
    lines = ["# Averaging strategies vs training length: Gaussian sLDA on movie-scale", "",
             f"Gaussian sLDA, learned s2 ~ IG(1, 0.01), K = {args.topics}, alpha = 1, "
             f"beta = 0.01, nu2 = {args.nu2:g}; {args.chains} chains; snapshots every "
             f"L_TR = {args.lag} iterations, B_TR = T/2; test chains B_TE = {args.test_burnin}, "
             f"J = {args.test_draws}, L_TE = 1; {len(args.lengths)} training lengths T from one "
             f"run of {max(args.lengths)} iterations per seed; seeds {seeds}; movie-scale split "
             f"seed {args.split_seed} (4,005 training / 1,001 test documents, ratings in "
             f"[0, 1]). Wall time {wall / 60:.1f} min.", ""]

    def cell(v, fmt):
        return format(v[0], fmt) + (f" +- {format(v[1], fmt)}" if n > 1 else "")

    for metric, name, fmt in (("r2", "Test predictive R^2", ".4f"),
                              ("mse", "Test MSE", ".5f")):
        lines += [f"## {name}, mean {'+- sd ' if n > 1 else ''}over {n} seed(s)", "",
                  "| T | models (chains x snapshots) | SF | SA | MF | MA |",
                  "|---:|---:|---:|---:|---:|---:|"]
        for T, t in table.items():
            lines.append(f"| {T} | {t['num_models']} | "
                         + " | ".join(cell(t[metric][k], fmt) for k in MAIN) + " |")
        lines.append("")
    lines += ["## Paired differences of R^2 (same seed, same test chains), mean +- sd over "
              "seeds", "",
              "`_each`: the single-chain strategy averaged over which chain is the single one.",
              "", "| T | MF - SF | MA - SA | MA - SF | MF - sf_each | MA - sa_each |",
              "|---:|---:|---:|---:|---:|---:|"]
    for T, t in table.items():
        lines.append(f"| {T} | " + " | ".join(
            f"{t['r2'][k][0]:+.4f} +- {t['r2'][k][1]:.4f}"
            for k in ("mf-sf", "ma-sa", "ma-sf", "mf-sf_each", "ma-sa_each")) + " |")
    lines += ["", "## Where the gain comes from (R^2, mean over seeds)", "",
              "sf_each / sa_each: SF / SA averaged over which of the chains is the single one; "
              "ma_chain0: MA over chain 0's snapshots only; ma_last: MA over the chains' model "
              "at T only.", "",
              "| T | sf_each | sa_each | ma_chain0 | ma_last | MF | MA |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    for T, t in table.items():
        lines.append(f"| {T} | " + " | ".join(f"{t['r2'][k][0]:.4f}"
                                               for k in EXTRA + ("mf", "ma")) + " |")
    lines += ["", "## Per seed (R^2)", "",
              "| seed | T | SF | SA | MF | MA | sf_each | sa_each | train s | predict s |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        for T, a in r["metrics"].items():
            lines.append(f"| {r['seed']} | {T} | "
                         + " | ".join(f"{a['r2'][k]:.4f}" for k in MAIN + ("sf_each",
                                                                            "sa_each"))
                         + f" | {r['train_seconds']:.0f} | {r['predict_seconds']:.0f} |")
    spi = np.median([r["seconds_per_iteration_median"] for r in rows])
    lines += ["", f"Median seconds per training iteration (4 chains): {spi:.3f} "
              f"(`time_per_iteration`, first chunk excluded). Final training MSE (mean over "
              f"chains) per seed: "
              + ", ".join(f"{r['final_train_mse']:.4f}" for r in rows)
              + "; final s2: " + ", ".join(f"{r['final_s2']:.4f}" for r in rows)
              + "; final ||eta|| per chain: "
              + "; ".join(", ".join(f"{v:.2f}" for v in r["final_eta_norm"]) for r in rows)
              + ".", ""]
    return "\n".join(lines)


def figure(table, rows, args, path):
    plt = pyplot()
    lengths = np.array(list(table))
    n = len(rows)
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    for ax, metric, ylabel in ((axes[0], "mse", "test MSE"),
                               (axes[1], "r2", "test predictive R^2")):
        av.plot_strategies(ax, lengths, lambda T, k, metric=metric: table[T][metric][k], n)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{ylabel} by averaging strategy")
        ax.legend(fontsize="small", loc="best")
    av.plot_paired(axes[2], lengths, lambda T, k: table[T]["r2"][k], rows,
                   lambda r, T, k: r["metrics"][T]["r2"][k])
    axes[2].set_ylabel("R^2 difference (paired by seed)")
    axes[2].set_title("Multiple minus single (faint: each seed)")
    axes[2].legend(fontsize="small", loc="best")
    for ax in axes:
        av.lengths_axis(ax, lengths)
    sd_note = f"mean +- sd over {n} seeds" if n > 1 else "one seed"
    fig.suptitle(f"Gaussian sLDA (K={args.topics}, nu2={args.nu2:g}, learned s2) on "
                 f"movie-scale, {args.chains} chains, {sd_note}")
    fig.tight_layout()
    save_figure(fig, path)


def main():
    p = parser(__doc__, topics=20, test_burnin=20, test_draws=10, replot=True)
    av.add_arguments(p)
    p.add_argument("--nu2", type=float, default=1.0)
    p.add_argument("--split-seed", type=int, default=0,
                   help="seed of load_dataset's train/test split (fixed across run seeds)")
    p.add_argument("--tag", default="", help="suffix of the output names")
    args = p.parse_args()
    stem = Path(args.out) / ("averaging_movie_scale" + (f"_{args.tag}" if args.tag else ""))
    if args.replot:
        rows, wall = av.load_runs(stem, args, "metrics")
        table = aggregate(rows, args.lengths)
        write_outputs(stem, markdown(rows, table, args, wall),
                      lambda path: figure(table, rows, args, path))
        return
    av.check_lengths(p, args)

    wall = time.perf_counter()
    data = load_dataset("movie-scale", seed=args.split_seed, data_dir=args.data_dir)
    ensure_dir(args.out)
    report = Path(f"{stem}_run_seed{args.seeds[0]}")
    # finished seeds are kept in a partial file, so a crashed run resumes where it stopped
    partial = stem.with_suffix(".partial.json")
    settings = {k: v for k, v in vars(args).items() if k not in ("seeds", "out", "data_dir")}
    done = {}
    if partial.is_file():
        saved = json.loads(partial.read_text())
        if saved["settings"] == settings:
            done = {r["seed"]: r for r in saved["runs"]}
            for r in done.values():
                r["metrics"] = {int(T): a for T, a in r["metrics"].items()}
            wall -= saved["wall_seconds"]
            log(f"resuming: seeds {sorted(done)} from {partial.name}")
    rows = []
    for i, seed in enumerate(args.seeds):
        if seed in done:
            rows.append(done[seed])
            continue
        rows.append(run_seed(data, seed, args, report if i == 0 else None))
        write_json(partial, {"settings": settings, "runs": rows,
                             "wall_seconds": time.perf_counter() - wall})
    wall = time.perf_counter() - wall
    table = aggregate(rows, args.lengths)
    write_json(stem.with_suffix(".json"),
               {"command": command_line(__file__), "args": saved_args(args),
                "wall_seconds": wall, "runs": rows,
                "table": {str(T): v for T, v in table.items()}}, indent=1)
    partial.unlink(missing_ok=True)
    write_outputs(stem, markdown(rows, table, args, wall),
                  lambda path: figure(table, rows, args, path))


if __name__ == "__main__":
    main()
