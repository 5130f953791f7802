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

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
if "xla_cpu_multi_thread_eigen" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen"
                               "=false intra_op_parallelism_threads=1").strip()

import numpy as np  # noqa: E402

from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.diagnostics import save_datatree, to_datatree, write_report  # noqa: E402
from topiczoo.fit import fit  # noqa: E402
from topiczoo.metrics import mean_squared_error, predictive_r2  # noqa: E402
from topiczoo.models import slda_gaussian  # noqa: E402
from topiczoo.predict import STRATEGIES, Prediction, predict  # noqa: E402

HERE = Path(__file__).resolve().parent
MAIN = ("sf", "sa", "mf", "ma")
EXTRA = ("sf_each", "sa_each", "ma_chain0", "ma_last")
METRICS = ("mse", "r2")
LABELS = {"sf": "SF (single final)", "sa": "SA (single average)",
          "mf": "MF (multiple final)", "ma": "MA (multiple average)"}


def _metrics(yhat, y) -> dict:
    return {"mse": mean_squared_error(y, yhat), "r2": predictive_r2(y, yhat)}


def evaluate(scores, snapshot_iters, T, response, y) -> dict:
    """MSE and predictive R^2 of every strategy for training length T: {metric: {key: value}}."""
    keep = np.flatnonzero((snapshot_iters > T / 2) & (snapshot_iters <= T))
    assert snapshot_iters[keep[-1]] == T, (T, snapshot_iters)
    pred = Prediction(scores[:, keep], response)
    per = {s: _metrics(pred.labels(s), y) for s in STRATEGIES}
    num_chains = scores.shape[0]
    for s in ("sf", "sa"):
        each = [_metrics(Prediction(scores[[c]][:, keep], response).labels(s), y)
                for c in range(num_chains)]
        per[f"{s}_each"] = {m: float(np.mean([e[m] for e in each])) for m in METRICS}
    per["ma_chain0"] = _metrics(Prediction(scores[[0]][:, keep], response).labels("ma"), y)
    per["ma_last"] = _metrics(Prediction(scores[:, keep[-1:]], response).labels("ma"), y)
    out = {m: {k: v[m] for k, v in per.items()} for m in METRICS}
    out["num_models"] = int(num_chains * len(keep))
    return out


def run_seed(data, seed, args, report_dir=None) -> dict:
    model = slda_gaussian(args.topics, learn_s2=True, a0=1.0, b0=0.01, alpha=1.0, beta=0.01,
                          nu2=args.nu2)
    tic = time.perf_counter()
    result = fit(model, data.train, num_chains=args.chains, num_iterations=max(args.lengths),
                 num_burnin=0, snapshot_lag=args.lag, chunk=50, seed=seed, progress=False)
    train_seconds = time.perf_counter() - tic
    tic = time.perf_counter()
    prediction = predict(result, data.test, num_burnin=args.test_burnin,
                         num_draws=args.test_draws, lag=1, seed=seed)
    predict_seconds = time.perf_counter() - tic
    snapshot_iters = np.array([s.iteration for s in result.snapshots])
    y = np.asarray(data.test.labels, np.float64)
    by_length = {int(T): evaluate(prediction.scores, snapshot_iters, T, model.response, y)
                 for T in args.lengths}
    tpi = result.sample_stats["time_per_iteration"][0]
    chunk_values = tpi[np.r_[True, np.diff(tpi) != 0]]
    row = {"seed": seed, "train_seconds": train_seconds, "predict_seconds": predict_seconds,
           "num_snapshots": len(snapshot_iters),
           "seconds_per_iteration_median": float(np.median(chunk_values[1:])),
           "seconds_per_iteration_first_chunk": float(chunk_values[0]),
           "final_train_mse": float(np.mean(result.draws["train_mse"][:, -1])),
           "final_s2": float(np.mean(result.draws["augmentation_mean"][:, -1])),
           "final_eta_norm": [float(v) for v in result.draws["eta_norm"][:, -1]],
           "metrics": by_length}
    print(f"seed {seed}: train {train_seconds:.0f} s, predict {predict_seconds:.0f} s; "
          + "; ".join(f"T={T}: R2 " + " ".join(f"{s} {a['r2'][s]:.3f}" for s in MAIN)
                      for T, a in by_length.items()), file=sys.stderr, flush=True)
    if report_dir is not None:
        write_run_report(result, data, by_length, args, seed, train_seconds, predict_seconds,
                         report_dir)
    return row


def write_run_report(result, data, by_length, args, seed, train_seconds, predict_seconds,
                     out):
    """A ``topiczoo diagnose`` report of one run, burn-in = half the run; the test MSE / R^2
    go into the note (the report's own strategy table is for accuracies); the test scores are
    left out of posterior.nc to keep it small."""
    T = max(args.lengths)
    view = dataclasses.replace(result, num_burnin=T // 2, snapshots=[])
    out.mkdir(parents=True, exist_ok=True)
    save_datatree(to_datatree(view), out / "posterior.nc")
    m = by_length[T]
    summary = {"model": "slda-gaussian", "data": data.name, "topics": args.topics,
               "chains": args.chains, "iterations": T, "burnin": T // 2, "seed": seed,
               "hyperparameters": {"alpha": 1.0, "beta": 0.01, "nu2": args.nu2,
                                   "s2": "learned, IG(1, 0.01)"},
               "test_mse_by_strategy": {s: m["mse"][s] for s in STRATEGIES},
               "test_r2_by_strategy": {s: m["r2"][s] for s in STRATEGIES},
               "train_seconds": train_seconds, "predict_seconds": predict_seconds,
               "token_iterations_per_second": result.token_iterations_per_second,
               "note": f"written by studies/{Path(__file__).name}; regression: test predictive "
                       "R^2 by strategy (SF/SA/MF/MA) = "
                       + " / ".join(f"{m['r2'][s]:.4f}" for s in STRATEGIES)
                       + ", MSE = " + " / ".join(f"{m['mse'][s]:.5f}" for s in STRATEGIES)
                       + f", from the snapshots every {args.lag} iterations in the second half "
                       f"(iterations {T // 2 + args.lag}-{T}), B_TE = {args.test_burnin}, "
                       f"J = {args.test_draws}"}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    write_report(out)


def aggregate(rows, lengths) -> dict:
    table = {}
    for T in lengths:
        table[T] = {"num_models": rows[0]["metrics"][T]["num_models"]}
        for metric in METRICS:
            values = {k: np.array([r["metrics"][T][metric][k] for r in rows])
                      for k in MAIN + EXTRA}
            t = {k: (float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0)
                 for k, v in values.items()}
            for k in ("mf", "ma"):  # paired differences to the single-chain strategies
                for base in ("sf", "sa", "sf_each", "sa_each"):
                    d = values[k] - values[base]
                    t[f"{k}-{base}"] = (float(d.mean()),
                                        float(d.std(ddof=1)) if len(d) > 1 else 0.0)
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = np.array(list(table))
    n = len(rows)
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    styles = {"sf": ("C0", "o", "--"), "sa": ("C1", "s", "--"), "mf": ("C2", "^", "-"),
              "ma": ("C3", "D", "-")}
    dodge = {k: 2.0 ** (0.035 * (i - 1.5)) for i, k in enumerate(MAIN)}  # x offsets, log axis
    for ax, metric, ylabel in ((axes[0], "mse", "test MSE"),
                               (axes[1], "r2", "test predictive R^2")):
        for k in MAIN:
            color, marker, ls = styles[k]
            mean = np.array([table[T][metric][k][0] for T in lengths])
            sd = np.array([table[T][metric][k][1] for T in lengths])
            ax.errorbar(lengths * dodge[k], mean, yerr=sd if n > 1 else None, color=color,
                        marker=marker, linestyle=ls, capsize=3, linewidth=1.6,
                        elinewidth=1.0, label=LABELS[k])
        ax.set_ylabel(ylabel)
        ax.set_title(f"{ylabel} by averaging strategy")
        ax.legend(fontsize="small", loc="best")
    for k, base, color, marker in (("mf", "sf", "C2", "^"), ("ma", "sa", "C3", "D")):
        d = np.array([table[T]["r2"][f"{k}-{base}"][0] for T in lengths])
        dsd = np.array([table[T]["r2"][f"{k}-{base}"][1] for T in lengths])
        axes[2].errorbar(lengths * dodge[k], d, yerr=dsd if n > 1 else None, color=color,
                         marker=marker, capsize=3, linewidth=1.6, elinewidth=1.0,
                         label=f"{k.upper()} - {base.upper()}")
        if n > 1:  # each seed's paired difference, faint
            for r in rows:
                per = [r["metrics"][T]["r2"][k] - r["metrics"][T]["r2"][base] for T in lengths]
                axes[2].plot(lengths * dodge[k], per, color=color, alpha=0.25, linewidth=0.8,
                             marker=marker, markersize=3)
    axes[2].axhline(0, color="0.3", linewidth=0.9)
    axes[2].set_ylabel("R^2 difference (paired by seed)")
    axes[2].set_title("Multiple minus single (faint: each seed)")
    axes[2].legend(fontsize="small", loc="best")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths)
        ax.set_xticklabels([str(T) for T in lengths])
        ax.set_xlabel("training iterations T (burn-in T/2)")
        ax.grid(alpha=0.3)
    sd_note = f"mean +- sd over {n} seeds" if n > 1 else "one seed"
    fig.suptitle(f"Gaussian sLDA (K={args.topics}, nu2={args.nu2:g}, learned s2) on "
                 f"movie-scale, {args.chains} chains, {sd_note}")
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--lengths", type=int, nargs="+", default=[25, 50, 100, 200, 400])
    parser.add_argument("--lag", type=int, default=5, help="L_TR: snapshot every LAG iterations")
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--nu2", type=float, default=1.0)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--test-burnin", type=int, default=20)
    parser.add_argument("--test-draws", type=int, default=10)
    parser.add_argument("--split-seed", type=int, default=0,
                        help="seed of load_dataset's train/test split (fixed across run seeds)")
    parser.add_argument("--tag", default="", help="suffix of the output names")
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--replot", action="store_true",
                        help="only rewrite the .md and .png from the .json of a previous run")
    args = parser.parse_args()
    stem = Path(args.out) / ("averaging_movie_scale" + (f"_{args.tag}" if args.tag else ""))
    if args.replot:
        saved = json.loads(stem.with_suffix(".json").read_text())
        for key, value in saved["args"].items():
            if key not in ("out", "replot"):
                setattr(args, key, value)
        rows = saved["runs"]
        for r in rows:
            r["metrics"] = {int(T): a for T, a in r["metrics"].items()}
        table = aggregate(rows, args.lengths)
        stem.with_suffix(".md").write_text(markdown(rows, table, args, saved["wall_seconds"]))
        figure(table, rows, args, stem.with_suffix(".png"))
        return
    if any(T % args.lag for T in args.lengths):
        parser.error("every training length must be a multiple of --lag")
    args.lengths = sorted(args.lengths)

    wall = time.perf_counter()
    data = load_dataset("movie-scale", seed=args.split_seed, data_dir=args.data_dir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
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
            print(f"resuming: seeds {sorted(done)} from {partial.name}", file=sys.stderr)
    rows = []
    for i, seed in enumerate(args.seeds):
        if seed in done:
            rows.append(done[seed])
            continue
        rows.append(run_seed(data, seed, args, report if i == 0 else None))
        partial.write_text(json.dumps({"settings": settings, "runs": rows,
                                       "wall_seconds": time.perf_counter() - wall}) + "\n")
    wall = time.perf_counter() - wall
    table = aggregate(rows, args.lengths)
    (stem.with_suffix(".json")).write_text(json.dumps(
        {"command": "python studies/" + Path(__file__).name + " " + " ".join(sys.argv[1:]),
         "args": vars(args) | {"out": "studies/results"}, "wall_seconds": wall,
         "runs": rows, "table": {str(T): v for T, v in table.items()}}, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(rows, table, args, wall))
    figure(table, rows, args, stem.with_suffix(".png"))
    partial.unlink(missing_ok=True)
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
