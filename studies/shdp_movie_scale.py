"""movie-scale regression, cross-validated: the supervised HDP against sLDA and MedLDA over K.

The sHDP paper's Figure 2(c) protocol: 5-fold cross-validation on the movie reviews with the
paper's preprocessing (``load_folds("movie-scale", num_folds=5, seed=0,
preprocessing="shdp")``), test predictive R^2. Methods, each through the registry and
``topiczoo.fit_and_predict`` (4 chains by default, strategy ``ma``: the mean over chains,
snapshots and test draws):

* ``shdp-gaussian``: Gaussian sHDP with the registry's defaults: s2 fixed at a quarter of the
  training responses' variance, nu2 = 1, alpha and gamma drawn (Gamma(1, 1)), responses
  centred, ``--topics`` initial topics;
* ``shdp-regression``: sHDP with the epsilon-insensitive loss, c = ``--shdp-c`` (chosen on a
  validation split of fold 0's training documents, ``shdp_movie_scale_diagnose.py``),
  eps = 1e-3, responses centred;
* ``hdp-glm``: the paper's two-step baseline: the unsupervised HDP, then ridge regression
  (penalty by leave-one-out on the training documents) on each chain's training zbar;
* ``slda-gaussian``: Gaussian sLDA at K in ``--grid`` with the sHDP's response: s2 fixed at a
  quarter of the fold's training-response variance, alpha = 1, nu2 = 100, responses centred;
* ``slda-gaussian-s2-drawn``: the same with s2 ~ IG(1, 0.01) drawn from a start of 1 (the
  earlier study's setting, the regression benchmark's tuning), ``--slda-drawn`` only;
* ``medlda-regression``: Gibbs MedLDA regression at K in ``--grid``, c = ``--c`` (256: tuned
  for MedLDA on this corpus, ``benchmarks/regression_movie_scale.py``), eps = 1e-3.

``--preprocessing default`` runs the same on the package's default preprocessing of
movie-scale (V = 5,000, ratings in [0, 1]: the data of MedLDA's tuning in
``benchmarks/regression_movie_scale.py``) instead of the paper's.

The machine is small and shared, so the run is sized by ``--iterations``, ``--chains``,
``--folds`` (the sHDP family) and ``--grid-folds`` (the parametric K grid, a subset of
``--folds``); the markdown states the sizing. Every finished fit is kept in
``results/shdp_movie_scale.partial.json`` and a rerun with the same settings resumes from it
(or from the finished .json: a rerun with more folds or ``--slda-drawn`` adds those fits); the
fit that was cut resumes from its checkpoint (``*.checkpoint.npz`` beside the outputs, written
after every chunk of iterations and removed when the fit is done).

    python studies/shdp_movie_scale.py [--iterations 80] [--folds 0 1 2] [--grid-folds 0]

writes ``studies/results/shdp_movie_scale.{md,json,png}``: the R^2 table (per fold, fold mean)
and the figure (R^2 against K with the sHDP models as horizontal lines; occupied topics of the
sHDP chains against iteration). ``--replot`` redraws from the .json.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

from _harness import (RESULTS, command_line, default_sizing, ensure_dir, load_run,  # noqa: E402
                      log, mean_sd, parser, pyplot, save_figure, saved_args,
                      write_json, write_outputs)
from topiczoo import fit_and_predict, load_folds  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402
from topiczoo.models.shdp import S2_FRACTION  # noqa: E402

NONPARAMETRIC = ("shdp-gaussian", "shdp-regression", "hdp-glm")
PARAMETRIC = ("slda-gaussian", "medlda-regression", "slda-gaussian-s2-drawn")
GAUSSIAN_SLDA = ("slda-gaussian", "slda-gaussian-s2-drawn")
PLAN_ARGS = ("folds", "grid_folds", "grid", "slda_drawn", "methods")  # may change on a resume


def options(name, args, train) -> tuple:
    """(registry entry, options) of a method; ``train``: the fold's training corpus. Reads
    ``args.shdp_c`` / ``args.c`` only for the method that uses it."""
    if name == "shdp-regression":
        return "shdp-regression", {"c": args.shdp_c, "eps": 1e-3}
    if name == "medlda-regression":
        return "medlda-regression", {"c": args.c, "eps": 1e-3, "alpha": 1.0}
    # the sHDP's default s2 (models.shdp.S2_FRACTION of the training variance), for sLDA
    s2 = S2_FRACTION * float(np.var(train.labels))
    return {"shdp-gaussian": ("shdp-gaussian", {}),
            "hdp-glm": ("hdp-glm", {}),
            "slda-gaussian": ("slda-gaussian", {"learn_s2": False, "s2": s2, "alpha": 1.0,
                                                "nu2": 100.0}),
            "slda-gaussian-s2-drawn": ("slda-gaussian", {"learn_s2": True, "a0": 1.0,
                                                         "b0": 0.01, "alpha": 1.0,
                                                         "nu2": 100.0})}[name]


def checkpoint_path(name, num_topics, fold, args) -> Path:
    """Where the fit of (name, K, fold) keeps its checkpoint while it runs (removed once its
    record is in the partial .json): a cut run resumes inside the fit it was in."""
    return Path(args.out) / f"shdp_movie_scale.{name}-K{num_topics}-fold{fold}.checkpoint.npz"


def one_fit(name, num_topics, fold, data, args) -> dict:
    entry, opts = options(name, args, data.train)
    run = fit_and_predict(REGISTRY[entry], num_topics, data.train, data.test, options=opts,
                          progress=False, checkpoint=checkpoint_path(name, num_topics, fold, args),
                          fit_kwargs=dict(num_chains=args.chains, num_iterations=args.iterations,
                                          seed=args.seed),
                          predict_kwargs=dict(num_burnin=args.test_burnin,
                                              num_draws=args.test_draws, seed=args.seed))
    metrics = run.prediction.metrics(data.test.labels, "ma")
    tpi = np.asarray(run.result.sample_stats["time_per_iteration"])[0]
    later = tpi[tpi != tpi[0]] if np.any(tpi != tpi[0]) else tpi
    record = {"method": name, "topics": num_topics, "fold": fold, "options": opts,
              "r2": float(metrics["predictive_r2"]), "mse": float(metrics["mse"]),
              "r2_by_strategy": {s: float(run.prediction.metrics(data.test.labels, s)
                                          ["predictive_r2"]) for s in ("sf", "sa", "mf")},
              "train_seconds": run.train_seconds, "predict_seconds": run.predict_seconds,
              "seconds_per_iteration": float(np.median(later)),
              "load_average": os.getloadavg()[0]}  # 1-minute load when the fit ended
    if "num_topics" in run.result.draws:
        record["num_topics"] = np.asarray(run.result.draws["num_topics"]).tolist()  # [C, S]
        record["draw_iterations"] = np.asarray(run.result.draw_iterations).tolist()
    log(f"fold {fold} {name:18s} K={num_topics:3d}  R^2 {record['r2']:.4f}  "
        f"(sf {record['r2_by_strategy']['sf']:.4f})  train {run.train_seconds:.0f} s  "
        f"predict {run.predict_seconds:.0f} s" + (
            f"  occupied at end {[r[-1] for r in record['num_topics']]}"
            if "num_topics" in record else ""))
    return record


def plan(args):
    """(method, K, fold) in run order: per fold the sHDP family first, then the K grid of
    sLDA, then MedLDA's (so that a run cut short has the comparisons that matter most)."""
    for fold in args.folds:
        for name in NONPARAMETRIC:
            if name in args.methods:
                yield name, args.topics, fold
        if fold in args.grid_folds:
            for name in PARAMETRIC[:2] + PARAMETRIC[2:] * args.slda_drawn:
                for k in args.grid if name in args.methods else ():
                    yield name, k, fold


def summary(records, args):
    """{(method, K): {fold: r2}}"""
    table = {}
    for r in records:
        table.setdefault((r["method"], r["topics"]), {})[r["fold"]] = r["r2"]
    return table


def markdown(records, args, wall) -> str:
    table = summary(records, args)
    folds = sorted({r["fold"] for r in records})
    diagnosis = os.path.relpath(RESULTS / "shdp_movie_scale_diagnose.md", Path(args.out).resolve())
    papers = args.preprocessing == "shdp"
    lines = ["# sHDP on movie-scale: cross-validated predictive R^2 (the sHDP paper's "
             "Figure 2c, 5-fold protocol)", "",
             f"Command: `{command_line(__file__) if not args.replot else args.command}`. "
             f"Wall time {wall / 60:.1f} min on a 2-core machine shared with other work.", "",
             f"Sizing (chosen to fit the machine's time): {args.chains} chains x "
             f"{args.iterations} iterations ({default_sizing(args.iterations)}), test chains "
             f"{args.test_burnin} burn-in + {args.test_draws} kept sweeps, strategy ma, seed "
             f"{args.seed}. The sHDP family ran on folds {', '.join(map(str, args.folds))}"
             + (f" of 5; the parametric K grid on folds {', '.join(map(str, args.grid_folds))} "
                "only." if set(PARAMETRIC) & set(args.methods) else " of 5.")
             + ("" if papers else
                f" Preprocessing `{args.preprocessing}` (not the paper's): V = 5,000, ratings "
                "in [0, 1]."), "",
             "Settings: sHDP initial topics "
             f"{args.topics}, alpha and gamma drawn (Gamma(1, 1)), beta 0.01, nu2 1; "
             "Gaussian sHDP s2 fixed at 1/4 of the training responses' variance (the "
             "registry default); epsilon-insensitive sHDP c = "
             f"{args.shdp_c:g}, eps = 1e-3; responses centred; hdp-glm ridge penalty by "
             "leave-one-out; slda-gaussian: s2 fixed as the sHDP's, alpha 1, nu2 100, "
             "responses centred" + ("; slda-gaussian-s2-drawn: s2 ~ IG(1, 0.01) from a start "
                                    "of 1, otherwise the same" if args.slda_drawn else "")
             + (f"; MedLDA c = {args.c:g}, eps 1e-3, alpha 1, responses centred"
                if "medlda-regression" in args.methods else "") + ".",
             "", "## Test predictive R^2 (strategy ma)", "",
             "| method | K | " + " | ".join(f"fold {f}" for f in folds)
             + " | mean (sd) over its folds | mean over the grid folds |",
             "|---|---:|" + "---:|" * len(folds) + "---:|---:|"]
    for (name, k), by_fold in sorted(table.items(), key=lambda kv: (
            kv[0][0] not in NONPARAMETRIC, kv[0][0], kv[0][1])):
        cells = [f"{by_fold[f]:.4f}" if f in by_fold else "" for f in folds]
        m, s = mean_sd(list(by_fold.values()))
        grid = [by_fold[f] for f in args.grid_folds if f in by_fold]
        label = f"{k} (initial)" if name in NONPARAMETRIC else str(k)
        lines.append(f"| {name} | {label} | " + " | ".join(cells)
                     + f" | {m:.4f} ({s:.4f}) | " + (f"{np.mean(grid):.4f}" if grid else "")
                     + " |")
    lines += ["", "## Done-when targets (as measured)", ""]
    if not papers:
        lines += ["The issue's targets are on the paper's preprocessing; these are the same "
                  "comparisons on the package's default.", ""]
    lines += targets(table, args)
    loads = [r["load_average"] for r in records if "load_average" in r]
    if loads:
        lines += ["", f"Load: the 1-minute load average at the end of each fit ranged "
                      f"{min(loads):.1f}-{max(loads):.1f} (2 cores). The settings were chosen "
                      "on a validation split of fold 0's training documents"
                      + ("" if papers else " under the paper's preprocessing, not on this "
                         "data (studies/README.md says how they were carried over)")
                      + f": [shdp_movie_scale_diagnose.md]({diagnosis})."]
    lines += ["", "## Occupied topics (sHDP chains)", ""]
    for r in records:
        if "num_topics" in r:
            nt = np.asarray(r["num_topics"])
            lines.append(f"- fold {r['fold']} {r['method']}: at iteration "
                         f"{r['draw_iterations'][-1]} {nt[:, -1].tolist()} (chains), "
                         f"at iteration {r['draw_iterations'][len(r['draw_iterations']) // 2]}"
                         f" {nt[:, nt.shape[1] // 2].tolist()}")
    lines += ["", "## Time", "",
              f"| method | K | fold | train s | s / iteration ({args.chains} chains) | predict s |",
              "|---|---:|---:|---:|---:|---:|"]
    for r in records:
        lines.append(f"| {r['method']} | {r['topics']} | {r['fold']} | "
                     f"{r['train_seconds']:.0f} | {r['seconds_per_iteration']:.2f} | "
                     f"{r['predict_seconds']:.0f} |")
    lines += ["", "![R^2 against K; occupied topics](shdp_movie_scale.png)", ""]
    return "\n".join(lines)


def targets(table, args) -> list:
    out = []
    grid = list(args.grid_folds)

    def mean_on(name, k, folds):
        vals = [table.get((name, k), {}).get(f) for f in folds]
        return None if any(v is None for v in vals) else float(np.mean(vals))

    shdp = mean_on("shdp-gaussian", args.topics, grid)
    slda = {(name, k): mean_on(name, k, grid) for name in GAUSSIAN_SLDA for k in args.grid}
    slda = {key: v for key, v in slda.items() if v is not None}
    if shdp is not None and slda:
        best = max(slda, key=slda.get)
        out.append(f"- Gaussian sHDP R^2 {shdp:.4f} vs the best Gaussian sLDA over K and its "
                   f"settings ({best[0]}, K = {best[1]}: {slda[best]:.4f}) on the same folds "
                   f"({', '.join(map(str, grid))}): "
                   + ("**met**" if shdp >= slda[best] else "**not met**") + ".")
    eps_folds = sorted(table.get(("shdp-regression", args.topics), {}))
    if eps_folds:
        eps = mean_on("shdp-regression", args.topics, eps_folds)
        out.append(f"- epsilon-insensitive sHDP R^2 {eps:.4f} (mean over folds "
                   f"{', '.join(map(str, eps_folds))}) >= 0.50: "
                   + ("**met**" if eps >= 0.5 else "**not met**") + ".")
    return out


def _r2_against_k(ax, table, args):
    """Left panel: the parametric models' R^2 against K, the sHDP family's as lines (means over
    the grid folds)."""
    grid = list(args.grid_folds)
    ax.set_xlim(min(args.grid) - 2, max(args.grid) + 2)  # the K grid's range, drawn or not
    for i, name in enumerate(PARAMETRIC):
        ks = [k for k in args.grid if all(f in table.get((name, k), {}) for f in grid)]
        if ks:
            ax.plot(ks, [np.mean([table[(name, k)][f] for f in grid]) for k in ks], "o-",
                    color=f"C{i}", label=name)
    for i, name in enumerate(NONPARAMETRIC):
        by_fold = table.get((name, args.topics), {})
        folds = [f for f in grid if f in by_fold]
        if folds:  # a method run on fewer folds says which
            label = name if folds == grid else f"{name} (folds {', '.join(map(str, folds))})"
            ax.axhline(np.mean([by_fold[f] for f in folds]), color=f"C{i + 3}", linestyle="--",
                       label=label)
    values = [y for line in ax.get_lines() for y in line.get_ydata()]
    if values:  # lines alone (axhline) do not scale the axis
        ax.set_ylim(min(values) - 0.02, max(values) + 0.02)
    ax.set_xlabel("K (parametric models)")
    ax.set_title(f"movie-scale{_preprocessing(args)}, "
                 f"mean over fold(s) {', '.join(map(str, grid))}")


def _r2_by_fold(ax, table, args):
    """Left panel of a run with the sHDP family alone: R^2 per fold, each method's mean dashed."""
    for i, name in enumerate(NONPARAMETRIC):
        by_fold = table.get((name, args.topics), {})
        if by_fold:
            folds = sorted(by_fold)
            ax.plot(folds, [by_fold[f] for f in folds], "o", color=f"C{i + 3}", label=name)
            ax.axhline(np.mean(list(by_fold.values())), color=f"C{i + 3}", linestyle="--",
                       linewidth=1, label=f"{name}, mean")
    ax.set_xticks(list(args.folds))
    ax.set_xlabel("fold")
    ax.set_title(f"movie-scale{_preprocessing(args)}, per fold")


def _preprocessing(args) -> str:
    return "" if args.preprocessing == "shdp" else f" ({args.preprocessing} preprocessing)"


def figure(records, args, path):
    plt = pyplot()
    table = summary(records, args)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    if set(PARAMETRIC) & set(args.methods):
        _r2_against_k(ax, table, args)
    else:
        _r2_by_fold(ax, table, args)
    ax.set_ylabel("test predictive R^2 (ma)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    styles = {"shdp-gaussian": "-", "shdp-regression": "--", "hdp-glm": ":"}
    for r in records:
        if "num_topics" in r and r["fold"] == args.folds[0]:
            nt = np.asarray(r["num_topics"])
            for c in range(nt.shape[0]):
                ax2.plot(r["draw_iterations"], nt[c], styles[r["method"]], color=f"C{c}",
                         linewidth=1, label=f"{r['method']}" if c == 0 else None)
    ax2.set_xlabel("iteration")
    ax2.set_ylabel("occupied topics")
    ax2.set_title(f"occupied topics, fold {args.folds[0]} (colour: chain)")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize="small")
    fig.tight_layout()
    save_figure(fig, path)


def main():
    p = parser(__doc__, topics=10, test_burnin=10, test_draws=5, replot=True)
    p.add_argument("--grid", type=int, nargs="+", default=[10, 20, 30, 40, 50],
                   help="K grid of the parametric models (--topics: the sHDP's initial K)")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--grid-folds", type=int, nargs="+", default=[0])
    p.add_argument("--c", type=float, default=256.0, help="MedLDA regression's c")
    p.add_argument("--shdp-c", type=float, default=16.0,
                   help="the epsilon-insensitive sHDP's c")
    p.add_argument("--slda-drawn", action="store_true",
                   help="also run sLDA with s2 drawn (the earlier study's setting)")
    p.add_argument("--methods", nargs="+", default=list(NONPARAMETRIC + PARAMETRIC),
                   choices=NONPARAMETRIC + PARAMETRIC,
                   help="which methods to fit (default all; slda-gaussian-s2-drawn also needs "
                        "--slda-drawn)")
    p.add_argument("--preprocessing", choices=("shdp", "default"), default="shdp",
                   help="movie-scale's preprocessing: the sHDP paper's (default; V = 2,179, "
                        "labels log(rating + 0.05)) or the package default (V = 5,000, ratings "
                        "in [0, 1]), on which MedLDA's tuning ran")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    stem = Path(args.out) / "shdp_movie_scale"
    if args.replot:
        saved = load_run(stem, args)
        write_outputs(stem, markdown(saved["records"], args, saved["wall_seconds"]),
                      lambda path: figure(saved["records"], args, path))
        return
    if not set(args.grid_folds) <= set(args.folds):
        p.error("--grid-folds must be a subset of --folds")
    ensure_dir(args.out)
    partial = stem.with_suffix(".partial.json")
    settings = saved_args(args)
    done = {"settings": settings, "records": [], "wall_seconds": 0.0}
    if partial.exists() or stem.with_suffix(".json").exists():
        # a cut run, or a finished one to which a rerun with a larger plan adds fits
        old = json.loads((partial if partial.exists() else stem.with_suffix(".json"))
                         .read_text())
        old.setdefault("settings", old.get("args"))
        old["settings"].setdefault("preprocessing", "shdp")  # runs from before the option
        # which fits to run may change between invocations; how each is run may not
        if {k: v for k, v in old["settings"].items() if k not in PLAN_ARGS} == {
                k: v for k, v in settings.items() if k not in PLAN_ARGS}:
            done = {"settings": settings, "records": old["records"],
                    "wall_seconds": old["wall_seconds"]}
            log(f"resuming: {len(done['records'])} fits done")
    tic = time.perf_counter()
    folds = load_folds("movie-scale", num_folds=5, seed=0, data_dir=args.data_dir,
                       preprocessing=args.preprocessing)
    have = {(r["method"], r["topics"], r["fold"]) for r in done["records"]}
    for name, k, fold in plan(args):
        if (name, k, fold) in have:
            continue
        done["records"].append(one_fit(name, k, fold, folds[fold], args))
        done["wall_seconds"] += time.perf_counter() - tic
        tic = time.perf_counter()
        write_json(partial, done)
        checkpoint_path(name, k, fold, args).unlink(missing_ok=True)
    wall = done["wall_seconds"] + time.perf_counter() - tic
    write_json(stem.with_suffix(".json"), {"command": command_line(__file__),
                                           "args": settings, "wall_seconds": wall,
                                           "records": done["records"]})
    partial.unlink(missing_ok=True)
    write_outputs(stem, markdown(done["records"], args, wall),
                  lambda path: figure(done["records"], args, path))


if __name__ == "__main__":
    main()
