"""How many training snapshots does a prediction average? The sHDP against sLDA on movie-scale.

The sHDP's movie-scale comparisons average each method's predictions over 2 chains x 5
snapshots x J test draws (strategy ``ma``, ``fit``'s default 5 snapshots), while one sample
predicts far worse (``sf``: 0.04-0.25 against ``ma``'s 0.41-0.48 in
``results/shdp_movie_scale_1000*``). Does averaging more snapshots (the averaging paper's
multiple average over T_TR) raise R^2 further, and more for the sHDP (many topics, each
snapshot's eta drawn from a wide conditional) than for sLDA?

One fit per method (fold ``--fold`` of ``load_folds("movie-scale", num_folds=5, seed=0,
preprocessing="shdp")``, ``--chains`` chains, ``--iterations`` with half burn-in and
``--snapshots`` snapshots evenly spaced after it), one ``predict`` over all snapshots; then the
``ma`` R^2 of the last s snapshots' evenly spaced subsets (the last snapshot always in; every
(S / s)-th one counting back from it) for s in ``--subsets``, so each row is what a fit with s
snapshots would have predicted. The methods are those of ``shdp_movie_scale.py`` with its
options (Gaussian sHDP; epsilon-insensitive sHDP, c = 16; Gaussian sLDA with the sHDP's fixed
s2 at ``--slda-topics``).

    python studies/shdp_snapshots.py [--iterations 400] [--snapshots 40] [--fold 0]

writes ``studies/results/shdp_snapshots.{md,json,png}``; ``--replot`` redraws from the .json.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

from _harness import (command_line, ensure_dir, load_run, log, parser, pyplot,  # noqa: E402
                      save_figure, saved_args, write_json, write_outputs)
from shdp_movie_scale import options  # noqa: E402
from topiczoo import fit_and_predict, load_folds  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402
from topiczoo.predict import Prediction  # noqa: E402


def subset(num_snapshots: int, size: int) -> list:
    """Indices of ``size`` snapshots of ``num_snapshots``, evenly spaced, the last included."""
    step = num_snapshots / size
    return sorted({num_snapshots - 1 - int(round(i * step)) for i in range(size)})


def one_method(name, data, args) -> dict:
    entry, opts = options(name, args, data.train)
    num_topics = args.topics if name.startswith("shdp") else args.slda_topics
    run = fit_and_predict(REGISTRY[entry], num_topics, data.train, data.test, options=opts,
                          progress=False,
                          fit_kwargs=dict(num_chains=args.chains, num_iterations=args.iterations,
                                          num_snapshots=args.snapshots, seed=args.seed),
                          predict_kwargs=dict(num_burnin=args.test_burnin,
                                              num_draws=args.test_draws, seed=args.seed))
    scores = np.asarray(run.prediction.scores)  # [C, I, J, T, D]
    r2 = {}
    for size in args.subsets:
        if size > scores.shape[1]:
            continue
        part = Prediction(scores[:, subset(scores.shape[1], size)], run.prediction.task,
                          run.prediction.response)
        r2[size] = {s: float(part.metrics(data.test.labels, s)["predictive_r2"])
                    for s in ("ma", "mf", "sa", "sf")}
    record = {"method": name, "topics": num_topics, "options": opts, "r2": r2,
              "snapshot_iterations": [s.iteration for s in run.result.snapshots],
              "train_seconds": run.train_seconds, "predict_seconds": run.predict_seconds}
    log(f"{name}: " + "  ".join(f"{k}: {v['ma']:.4f}" for k, v in r2.items())
        + f"  (train {run.train_seconds:.0f} s, predict {run.predict_seconds:.0f} s)")
    return record


def markdown(records, args, wall) -> str:
    sizes = sorted({int(k) for r in records for k in r["r2"]})
    lines = ["# Test R^2 against the number of training snapshots averaged (movie-scale)", "",
             f"Command: `{args.command}`", "",
             f"Fold {args.fold} of 5 (`preprocessing=\"shdp\"`), {args.chains} chains x "
             f"{args.iterations} iterations (half burn-in), {args.snapshots} snapshots after "
             f"burn-in, test chains {args.test_burnin} + {args.test_draws} sweeps, seed "
             f"{args.seed}. A column s: the `ma` R^2 (mean over chains, s snapshots, test "
             f"draws) of s evenly spaced snapshots ending at the last; `sf`: one sample "
             f"(chain 0's last snapshot, its last test draw).", "",
             "| method | K | sf | " + " | ".join(f"s = {s}" for s in sizes) + " |",
             "|---|---:|---:|" + "---:|" * len(sizes)]
    for r in records:
        cells = [f"{r['r2'][str(s)]['ma']:.3f}" if str(s) in r["r2"] else "" for s in sizes]
        k = "initial " + str(r["topics"]) if r["method"].startswith("shdp") else r["topics"]
        sf = r["r2"][str(max(int(s) for s in r["r2"]))]["sf"]
        lines.append(f"| {r['method']} | {k} | {sf:.3f} | " + " | ".join(cells) + " |")
    lines += ["", "Training / prediction time: " + ", ".join(
        f"{r['method']} {r['train_seconds']:.0f} / {r['predict_seconds']:.0f} s"
        for r in records) + f"; {wall / 60:.1f} min in all.", "",
        "![R^2 against snapshots](shdp_snapshots.png)", ""]
    return "\n".join(lines)


def figure(records, args, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in records:
        sizes = sorted(int(k) for k in r["r2"])
        ax.plot(sizes, [r["r2"][str(s)]["ma"] for s in sizes], "o-", label=r["method"])
    ax.set_xscale("log")
    ax.set_xticks(sorted({int(k) for r in records for k in r["r2"]}))
    ax.xaxis.set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(plt.matplotlib.ticker.NullFormatter())
    ax.set_xlabel("training snapshots averaged per chain (s)")
    ax.set_ylabel("test predictive R^2 (ma)")
    ax.set_title(f"movie-scale fold {args.fold}, {args.chains} chains x {args.iterations} "
                 f"iterations")
    ax.grid(alpha=0.3)
    ax.legend()
    save_figure(fig, path)


def main():
    p = parser(__doc__, topics=10, chains=2, test_burnin=20, test_draws=10, replot=True)
    p.add_argument("--iterations", type=int, default=400)
    p.add_argument("--snapshots", type=int, default=40)
    p.add_argument("--subsets", type=int, nargs="+", default=[1, 2, 5, 10, 20, 40])
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--slda-topics", type=int, default=50, help="sLDA's K (its best at 1,000)")
    p.add_argument("--shdp-c", type=float, default=16.0,
                   help="the epsilon-insensitive sHDP's c")
    p.add_argument("--methods", nargs="+", default=["shdp-gaussian", "slda-gaussian"],
                   choices=["shdp-gaussian", "shdp-regression", "slda-gaussian"])
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    stem = Path(args.out) / "shdp_snapshots"
    if args.replot:
        saved = load_run(stem, args)
        write_outputs(stem, markdown(saved["records"], args, saved["wall_seconds"]),
                      lambda path: figure(saved["records"], args, path))
        return
    ensure_dir(args.out)
    args.command = command_line(__file__)
    tic = time.perf_counter()
    data = load_folds("movie-scale", num_folds=5, seed=0, data_dir=args.data_dir,
                      preprocessing="shdp")[args.fold]
    records = [one_method(name, data, args) for name in args.methods]
    records = json.loads(json.dumps(records))  # subset sizes as the .json keeps them
    wall = time.perf_counter() - tic
    write_json(stem.with_suffix(".json"), {"command": args.command, "args": saved_args(args),
                                           "wall_seconds": wall, "records": records})
    write_outputs(stem, markdown(records, args, wall), lambda path: figure(records, args, path))


if __name__ == "__main__":
    main()
