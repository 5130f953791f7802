#!/usr/bin/env python
"""Light vs exact sampler vs tomotopy on 20news, multi-task, K = 20-400.

Multi-task Gibbs MedLDA (``medlda-multitask``: 20 one-vs-all hinge tasks, c = 1, ell = 64,
alpha = 1/K per topic, beta = 0.01, nu2 = 1) on ``load_dataset("20news")`` (11,269 training
documents, 1,467,718 tokens; 7,505 test documents), one chain, one thread. Its records were
made when ``light`` was always the Metropolis-Hastings sweep; since 2026-11-30 ``light`` runs
as the exact sampler below 256 topics (``models.parametric.MH_FROM_TOPICS``), so a rerun
of its light runs below that names ``--samplers light:z_draw=mh``. Parts (each writes
``light_20news.PART.json``; ``--part report`` turns them into ``light_20news.md`` and ``.png``):

* ``grid``: for each K in ``--grid-topics``, the exact sampler, the light sampler (6 MH steps,
  mixture) and tomotopy (``--samplers``) 0.14's ``SLDAModel`` with 20 binary logistic responses (tomotopy has no
  hinge loss; ``benchmarks/profile_exact_multitask.tomotopy_model``), ``--grid-iterations``
  each, one seed: test accuracy (argmax of the 20 tasks' mean scores over the test chain's
  draws; tomotopy: argmax of its ``estimate`` after ``infer``) and seconds per iteration. At
  K in ``--curve-topics`` a snapshot every ``--curve-lag`` iterations gives accuracy against
  wall time.
* ``seeds``: K = ``--seeds-topics`` (100), ``--seeds-iterations`` (100) iterations, exact and
  light (or ``--samplers``, e.g. ``exact:eta=cholesky``), seeds ``--seeds``, snapshots every
  ``--curve-lag``: the accuracy after 100 iterations (done-when (d)) and after the same wall
  time (c). The report compares light with every other sampler run on the same seeds.
* ``options``: K = 100, ``--grid-iterations``: light with MH steps in ``--mh-steps`` and mixed
  or cycled proposals.
* ``monitors``: K = ``--seeds-topics``, ``--seeds-iterations`` iterations, exact and light (or
  ``--samplers``), seeds ``--seeds``, no prediction: the label-invariant monitors ||eta||,
  log p(W | Z) and the training loss every ``--monitor-lag`` (10) iterations, to see whether
  and when each chain levels off.
* ``swap``: K = ``--seeds-topics``, seeds ``--seeds``: each of two samplers (``--samplers``,
  default ``exact`` and ``exact:eta=coordinate``) runs ``--swap-iterations`` N1 iterations;
  then each chain is continued for N2 more with the other sampler (``fit(start=...)``), and
  the label-invariant monitors are recorded every ``--monitor-lag`` iterations. Does a
  chain's path after N1 follow the sampler that continues it or the state it was left in?
  (Each sampler's own continuation is the ``monitors`` part's run of the same seed.)
* ``rss``: peak resident memory (VmHWM) of fresh processes that load 20news and run ``fit``
  (K = 400, one chain, ``--rss-iterations`` iterations) with the light and the exact sampler,
  each with glibc's default allocator settings and with large blocks returned to the system
  (``topiczoo.memory.return_large_blocks_to_os``, what the ``topiczoo`` command sets).

Timing: ``fit``'s callback records process CPU time and wall time after every chunk; the
first chunk (iteration 1) includes compilation, so the time of iteration i is
(t_i - t_1) * i / (i - 1) (iterations 2..i, scaled to i). Test accuracy is not timed.
"Accuracy against time" uses process CPU time (one thread: the sampler's own work); wall time
is recorded too, but on a shared machine it mostly measures the other jobs.

The machine is shared (2 cores; the load average is recorded): the default sizes (few
iterations, one seed for the grid) are chosen so the whole study takes well under an hour of
wall time on it; the issue asks for longer runs, which the options allow.

Usage::

    python studies/light_20news.py --part grid      # then seeds, options, rss (any order,
    python studies/light_20news.py --part report    # or in parallel), then report

Each part writes its .json after every run; ``--tag`` names the .json of one of several
processes running a part (e.g. ``--part seeds --seeds 1 --tag=-1``), and the report merges
them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import (RESULTS, command_line, ensure_dir, log, pyplot,  # noqa: E402
                      save_figure, single_thread)

THREADS = single_thread()

import numpy as np  # noqa: E402

STEM = "light_20news"
PARTS = ("grid", "seeds", "options", "monitors", "swap", "rss")
MONITORS = ("eta_norm", "log_likelihood", "train_loss")
OLD_LIGHT = "light (float32 eta)"  # the records of light runs made before its eta was float64


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=(*PARTS, "report"), required=True)
    p.add_argument("--grid-topics", type=int, nargs="+", default=[20, 50, 100, 200, 400])
    p.add_argument("--grid-iterations", type=int, default=20)
    p.add_argument("--curve-topics", type=int, nargs="*", default=[100, 400])
    p.add_argument("--curve-lag", type=int, default=5)
    p.add_argument("--seeds-topics", type=int, default=100)
    p.add_argument("--seeds-iterations", type=int, default=100)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--monitor-lag", type=int, default=10)
    p.add_argument("--mh-steps", type=int, nargs="+", default=[2, 6])
    p.add_argument("--rss-iterations", type=int, default=40)
    p.add_argument("--swap-iterations", type=int, nargs=2, default=[200, 200],
                   metavar=("N1", "N2"))
    p.add_argument("--test-burnin", type=int, default=10)
    p.add_argument("--test-draws", type=int, default=5)
    p.add_argument("--tomotopy-infer-iterations", type=int, default=10)
    p.add_argument("--samplers", nargs="+", default=None,
                   help="grid: which of light, exact, tomotopy to run (default all); seeds: "
                        "which samplers, with options (default light exact)")
    p.add_argument("--tag", default="",
                   help="suffix of the part's .json (parts run in parallel processes)")
    p.add_argument("--rss-probe", nargs=3, metavar=("K", "SAMPLER", "ITERATIONS"),
                   help=argparse.SUPPRESS)  # internal: one fresh-process fit
    p.add_argument("--rss-large-blocks", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", default=str(RESULTS))
    p.add_argument("--data-dir", default=None)
    return p.parse_args(argv)


def load(args):
    from topiczoo import load_dataset

    return load_dataset("20news", data_dir=args.data_dir)


def build(num_topics, corpus):
    from topiczoo.models import REGISTRY

    return REGISTRY["medlda-multitask"].build(num_topics, corpus=corpus, c=1.0, ell=64.0,
                                              alpha=1.0, beta=0.01, nu2=1.0)


def run_ours(ds, num_topics, sampler, iterations, lag, seed, args) -> dict:
    """One chain of ``fit`` with snapshots every ``lag`` iterations; accuracy per snapshot."""
    from topiczoo.fit import fit
    from topiczoo.predict import Prediction, predict

    model = build(num_topics, ds.train)
    clock = []

    def record(result):
        clock.append((result.iterations_done, time.process_time(), time.perf_counter()))

    clock.append((0, time.process_time(), time.perf_counter()))
    result = fit(model, ds.train, sampler=sampler, num_chains=1, num_iterations=iterations,
                 num_burnin=0, snapshot_lag=lag, chunk=lag, seed=seed, progress=False,
                 callback=record)
    tic = time.perf_counter()
    pred = predict(result, ds.test, num_burnin=args.test_burnin, num_draws=args.test_draws,
                   seed=seed)
    predict_seconds = time.perf_counter() - tic
    truth = np.asarray(ds.test.labels)
    accuracy = [Prediction(pred.scores[:, i:i + 1], pred.task, pred.response).accuracy(truth)
                for i in range(len(result.snapshots))]
    done = {it: (cpu, wall) for it, cpu, wall in clock}
    first = done[1]

    def spent(i, which):  # seconds of iterations 1..i, compilation excluded (module docstring)
        return (done[i][which] - first[which]) * i / (i - 1)

    snaps = [s.iteration for s in result.snapshots]
    row = {"sampler": result.sampler, "K": num_topics, "seed": seed, "iterations": iterations,
           "snapshot_iterations": snaps, "accuracy": accuracy,
           "cpu_seconds": [spent(i, 0) for i in snaps], "wall_seconds": [spent(i, 1) for i in snaps],
           "cpu_per_iteration": spent(iterations, 0) / iterations,
           "wall_per_iteration": spent(iterations, 1) / iterations,
           "predict_seconds": predict_seconds, "load": os.getloadavg()[0],
           **{name: [float(np.asarray(result.draws[name])[0, i - 1]) for i in snaps]
              for name in MONITORS}}
    log(f"  {result.sampler:<32} K={num_topics:<4d} seed {seed}: accuracy {accuracy[-1]:.4f} "
        f"after {iterations} it; {row['cpu_per_iteration']:.3f} CPU s/it "
        f"({row['wall_per_iteration']:.3f} wall; load {row['load']:.1f})")
    return row


def run_tomotopy(ds, num_topics, iterations, args) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from profile_exact_multitask import tomotopy_model

    mdl = tomotopy_model(ds.train, num_topics)
    c0, w0 = time.process_time(), time.perf_counter()
    mdl.train(iterations, workers=1)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    test, vocab = ds.test, ds.train.vocabulary
    keep = [d for d in range(test.num_docs) if len(test.document(d)) > 0]  # tomotopy aborts
    docs = [mdl.make_doc([vocab[w] for w in test.document(d)]) for d in keep]
    mdl.infer(docs, iterations=args.tomotopy_infer_iterations, workers=1)
    scores = np.zeros((test.num_docs, len(ds.label_names)))
    scores[keep] = np.asarray(mdl.estimate(docs))
    accuracy = float(np.mean(scores.argmax(1) == np.asarray(test.labels)))
    row = {"sampler": "tomotopy", "K": num_topics, "iterations": iterations,
           "accuracy": [accuracy], "cpu_per_iteration": cpu / iterations,
           "wall_per_iteration": wall / iterations, "load": os.getloadavg()[0]}
    log(f"  tomotopy K={num_topics}: accuracy {accuracy:.4f}; {cpu / iterations:.3f} CPU s/it")
    return row


def part_grid(ds, args):
    for k in args.grid_topics:
        lag = args.curve_lag if k in args.curve_topics else args.grid_iterations
        for sampler in args.samplers or ("light", "exact", "tomotopy"):
            if sampler == "tomotopy":
                yield run_tomotopy(ds, k, args.grid_iterations, args)
            else:
                yield run_ours(ds, k, sampler, args.grid_iterations, lag, 0, args)


def part_seeds(ds, args):
    for seed in args.seeds:
        for sampler in args.samplers or ("light", "exact"):
            yield run_ours(ds, args.seeds_topics, sampler, args.seeds_iterations,
                           args.curve_lag, seed, args)


def part_monitors(ds, args):
    from topiczoo.fit import fit

    for seed in args.seeds:
        for sampler in args.samplers or ("light", "exact"):
            model = build(args.seeds_topics, ds.train)
            result = fit(model, ds.train, sampler=sampler, num_chains=1,
                         num_iterations=args.seeds_iterations, num_burnin=0, num_snapshots=1,
                         seed=seed, progress=False)
            at = range(args.monitor_lag, args.seeds_iterations + 1, args.monitor_lag)
            row = _monitor_row(result, result.sampler, seed, at)
            log(f"  {result.sampler:<32} K={args.seeds_topics:<4d} seed {seed}: "
                + ", ".join(f"{name} {row[name][-1]:.4g}" for name in MONITORS)
                + f" at iteration {at[-1]}")
            yield row


def _monitor_row(result, sampler, seed, at) -> dict:
    """The label-invariant monitors of a one-chain result at iterations ``at``."""
    first = int(result.draw_iterations[0])
    return {"sampler": sampler, "K": int(result.model.num_topics), "seed": seed,
            "iterations": result.iterations_done, "monitor_iterations": list(at),
            **{name: [float(np.asarray(result.draws[name])[0, i - first]) for i in at]
               for name in MONITORS}}


def part_swap(ds, args):
    from topiczoo.fit import fit

    n1, n2 = args.swap_iterations
    samplers = args.samplers or ("exact", "exact:eta=coordinate")
    if len(samplers) != 2:
        raise SystemExit("--part swap takes two --samplers")
    kw = dict(num_chains=1, num_snapshots=1, progress=False)
    for seed in args.seeds:
        firsts = {s: fit(build(args.seeds_topics, ds.train), ds.train, sampler=s, seed=seed,
                         num_iterations=n1, num_burnin=n1 - 1, **kw) for s in samplers}
        for first, then in (samplers, samplers[::-1]):
            result = fit(build(args.seeds_topics, ds.train), ds.train, sampler=then, seed=seed,
                         num_iterations=n1 + n2, num_burnin=n1 + n2 - 1, start=firsts[first],
                         **kw)
            at = range(n1 + args.monitor_lag, n1 + n2 + 1, args.monitor_lag)
            start = _monitor_row(firsts[first], first, seed, [n1])
            row = _monitor_row(result, then, seed, at)
            row.update(first=first, first_iterations=n1,
                       **{name: start[name] + row[name] for name in MONITORS},
                       monitor_iterations=[n1] + row["monitor_iterations"])
            log(f"  {first} ({n1}) then {then} ({n2}), seed {seed}: "
                + ", ".join(f"{name} {row[name][0]:.4g} -> {row[name][-1]:.4g}"
                            for name in MONITORS))
            yield row


def part_options(ds, args):
    for steps in args.mh_steps:
        for proposals in ("mixture", "cycle") if steps >= 3 else ("mixture",):
            # a cycle of fewer steps than its 3 proposals is refused: it restarts per token
            yield run_ours(ds, 100, f"light:mh_steps={steps},proposals={proposals}",
                           args.grid_iterations, args.grid_iterations, 0, args)


def rss_probe(args):
    """One fresh-process fit (``--rss-probe K SAMPLER ITERATIONS``): prints a JSON line."""
    from topiczoo.fit import fit

    num_topics, sampler, iterations = int(args.rss_probe[0]), args.rss_probe[1], \
        int(args.rss_probe[2])
    if args.rss_large_blocks:
        from topiczoo.memory import return_large_blocks_to_os

        if not return_large_blocks_to_os():
            raise SystemExit("--rss-large-blocks needs glibc's mallopt")
    ds = load(args)
    after_load = _vm("VmRSS")
    tic = time.perf_counter()
    fit(build(num_topics, ds.train), ds.train, sampler=sampler, num_chains=1,
        num_iterations=iterations, num_burnin=iterations - 1, num_snapshots=1, progress=False)
    print(json.dumps({"K": num_topics, "sampler": sampler, "iterations": iterations,
                      "large_blocks_to_os": args.rss_large_blocks,
                      "peak_rss_mb": _vm("VmHWM"), "rss_after_loading_mb": after_load,
                      "seconds": time.perf_counter() - tic}))


def _vm(field) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def part_rss(args):
    for sampler in ("light", "exact"):
        for large_blocks in (False, True):
            cmd = [sys.executable, __file__, "--part", "rss", "--rss-probe", "400", sampler,
                   str(args.rss_iterations)] + ["--rss-large-blocks"] * large_blocks
            if args.data_dir:
                cmd += ["--data-dir", args.data_dir]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            log(f"  {sampler}, {_allocator(row)}: peak RSS {row['peak_rss_mb']:.0f} MB")
            yield row


def _allocator(row) -> str:
    return ("large blocks returned to the system" if row.get("large_blocks_to_os")
            else "glibc's default allocator settings")


# ------------------------------------------------------------------------------ report


def _read(out, part):
    """The records of a part (``STEM.PART*.json``, one per process) merged: rows of all,
    commands of all, the largest load and the longest time."""
    records = [json.loads(p.read_text()) for p in sorted(Path(out).glob(f"{STEM}.{part}*.json"))]
    if not records:
        return None
    return {"commands": [r["command"] for r in records],
            "load": max(r["load"] for r in records),
            "seconds": max(r["seconds"] for r in records),
            "rows": [row for r in records for row in r["rows"]]}


def _within(row, seconds):
    """Accuracy of a run at its last snapshot taken within ``seconds`` of CPU time."""
    within = [a for a, w in zip(row["accuracy"], row["cpu_seconds"]) if w <= seconds * 1.0001]
    return within[-1] if within else float("nan")


def report(args):
    parts = {p: _read(args.out, p) for p in PARTS}
    md = [f"# Light vs exact sampler vs tomotopy, 20news multi-task ({STEM}.py)", ""]
    md.append("Multi-task Gibbs MedLDA (20 one-vs-all hinge tasks, c = 1, ell = 64, alpha = 1/K, "
              "beta = 0.01, nu2 = 1), one chain, one thread; tomotopy 0.14 SLDA with 20 binary "
              "logistic responses. Test accuracy on the 7,505 test documents. Seconds are "
              "process CPU seconds per iteration (compilation excluded), wall in parentheses; "
              "the machine (2 cores) was shared with other jobs, so wall times are inflated "
              "and only the ratios within one part are meaningful.")
    md.append("")
    for p, rec in parts.items():
        if rec:
            md.append(f"- {p}: " + ", ".join(f"`{c}`" for c in rec["commands"])
                      + f" (load average up to {rec['load']:.1f}; {rec['seconds'] / 60:.0f} min "
                      "wall, the parts in parallel)")
    md.append("")
    if any(row["sampler"] == OLD_LIGHT for rec in parts.values() if rec for row in rec["rows"]):
        md += [f"Rows labelled `{OLD_LIGHT}` are light runs made while its eta pass was a dense "
               "float32 pass in XLA (off by up to 0.065 conditional sd; since 8ccab32 it is "
               "float64 on the host): the committed records relabelled, no figure changed.", ""]
    checks = []
    grid = parts["grid"]
    if grid:
        rows = grid["rows"]
        by = {(r["sampler"], r["K"]): r for r in rows}
        # the grid's exact sampler: `exact` (float64 Cholesky eta), or, in the runs committed
        # before it became the default, `exact:eta=qr`
        exact = "exact" if any(s == "exact" for s, _ in by) else "exact:eta=qr"
        md += [f"## Accuracy and seconds per iteration over K ({rows[0]['iterations']} "
               "iterations, seed 0)", "",
               f"| K | {exact} acc | light acc | tomotopy acc | {exact} s/it | light s/it | "
               f"tomotopy s/it | {exact} / light |", "|---|---|---|---|---|---|---|---|"]
        for k in sorted({r["K"] for r in rows}):
            e, lt, t = by.get((exact, k)), by.get(("light", k)), by.get(("tomotopy", k))

            def cell(r, key="accuracy"):
                if r is None:
                    return "-"
                if key == "accuracy":
                    return f"{r['accuracy'][-1]:.4f}"
                return f"{r['cpu_per_iteration']:.3f} ({r['wall_per_iteration']:.2f})"

            ratio = f"{e['cpu_per_iteration'] / lt['cpu_per_iteration']:.1f}" if e and lt \
                else "-"
            md.append(f"| {k} | {cell(e)} | {cell(lt)} | {cell(t)} | {cell(e, 's')} | "
                      f"{cell(lt, 's')} | {cell(t, 's')} | {ratio} |")
        md.append("")
        ks = sorted(k for (s, k) in by if s == "light")
        if (exact, 400) in by and ("light", 400) in by:
            speed = by[(exact, 400)]["cpu_per_iteration"] / by[("light", 400)]["cpu_per_iteration"]
            checks.append(f"(b) K = 400: {exact} / light CPU seconds per iteration (eta included) "
                          f"= **{speed:.1f}** (target >= 5): "
                          f"{'met' if speed >= 5 else 'NOT met'}")
        if ks and ks[0] != ks[-1]:
            light_tok = [by[("light", k)]["cpu_per_iteration"] for k in (ks[0], ks[-1])]
            md.append(f"Light iteration time K = {ks[-1]} / K = {ks[0]}: "
                      f"{light_tok[1] / light_tok[0]:.2f} (whole iteration: Z sweep, eta, "
                      "augmentation, monitors; the Z sweep alone is in "
                      "`benchmarks/results/light_scaling.txt`).")
            md.append("")
            checks.append(f"(a) light seconds per iteration (per token: the same tokens) "
                          f"K = {ks[-1]} / K = {ks[0]} = **{light_tok[1] / light_tok[0]:.2f}** "
                          f"(target <= 1.5): {'met' if light_tok[1] / light_tok[0] <= 1.5 else 'NOT met'}")
        curves = [k for k in sorted({r["K"] for r in rows})
                  if len(by.get(("light", k), {}).get("accuracy", [])) > 1]
        if curves:
            md += ["### Accuracy against time", "",
                   "| K | sampler | iteration: accuracy @ CPU s |", "|---|---|---|"]
            for k in curves:
                for s in (exact, "light"):
                    r = by[(s, k)]
                    pts = ", ".join(f"{i}: {a:.3f} @ {w:.0f}" for i, a, w in zip(
                        r["snapshot_iterations"], r["accuracy"], r["cpu_seconds"]))
                    md.append(f"| {k} | {s} | {pts} |")
            md.append("")
    seeds = parts["seeds"]
    # light against each other sampler of the seeds part (exact first), on their common seeds
    # (runs of the same length only)
    others = sorted({r["sampler"] for r in seeds["rows"]} - {"light"},
                    key=lambda s: (s != "exact", s)) if seeds else []
    lengths = sorted({r["iterations"] for r in seeds["rows"]}) if seeds else []
    for n, other in ((n, other) for n in lengths for other in others):
        same = [r for r in seeds["rows"] if r["iterations"] == n]
        both = [s for s in sorted({r["seed"] for r in same})
                if {r["sampler"] for r in same if r["seed"] == s} >= {other, "light"}]
        if not both:
            continue
        rows = [r for r in same if r["seed"] in both and r["sampler"] in (other, "light")]
        k = rows[0]["K"]
        tag = f" [`{other}`]"
        seeds_text = f"{len(both)} seed" + ("s" if len(both) > 1 else "")
        md += [f"## K = {k}: {n} iterations, {seeds_text}: `{other}` and light", "",
               f"| seed | {other} acc | light acc | {other} s/it | light s/it | light acc "
               f"within {other}'s CPU time |", "|---|---|---|---|---|---|"]
        diffs, same_wall = [], []
        for seed in both:
            e = next(r for r in rows if r["seed"] == seed and r["sampler"] == other)
            lt = next(r for r in rows if r["seed"] == seed and r["sampler"] == "light")
            at = _within(lt, e["cpu_seconds"][-1])
            diffs.append(lt["accuracy"][-1] - e["accuracy"][-1])
            same_wall.append((at, e["accuracy"][-1]))
            md.append(f"| {seed} | {e['accuracy'][-1]:.4f} | {lt['accuracy'][-1]:.4f} | "
                      f"{e['cpu_per_iteration']:.3f} ({e['wall_per_iteration']:.2f}) | "
                      f"{lt['cpu_per_iteration']:.3f} ({lt['wall_per_iteration']:.2f}) | "
                      f"{at:.4f} |")
        mean_e = np.mean([b for _, b in same_wall])
        mean_l = np.mean([r["accuracy"][-1] for r in rows if r["sampler"] == "light"])
        mean_at = np.mean([a for a, _ in same_wall])
        md.append(f"| mean | {mean_e:.4f} | {mean_l:.4f} | | | {mean_at:.4f} |")
        md.append("")
        md.append("(\"The same time\" is CPU time, the sampler's own work on one thread: on "
                  "this shared machine wall time measures the other jobs. Light's run stops "
                  "at the same number of iterations, so its accuracy within the other's time "
                  "is that of its last snapshot within that time: a lower bound of what it "
                  "reaches in that time.)")
        md.append("")
        gap = 100 * (mean_l - mean_e)
        if other == OLD_LIGHT:  # the same sampler before a change: no target, the difference
            md += [f"light - {other}: {gap:+.2f} points (per seed "
                   f"{', '.join(f'{100 * d:+.2f}' for d in diffs)}).", ""]
            continue
        checks.append(f"(d){tag} K = {k}, {n} iterations, {seeds_text}: light - {other} "
                      f"mean accuracy = **{gap:+.2f} points** (per seed "
                      f"{', '.join(f'{100 * d:+.2f}' for d in diffs)}; target within 1 point): "
                      + ("met" if abs(gap) <= 1 else "NOT met (light ahead)" if gap > 0
                         else "NOT met"))
        checks.append(f"(c){tag} K = {k}, {n} iterations: light accuracy within {other}'s CPU time "
                      f"{mean_at:.4f} vs {other} {mean_e:.4f} (mean over seeds): "
                      f"{'met' if mean_at >= mean_e else 'NOT met'}")
    monitors = parts["monitors"]
    if monitors:
        rows = monitors["rows"]
        columns = _monitor_columns(rows[0]["monitor_iterations"])
        md += [f"## Label-invariant monitors, K = {rows[0]['K']} (no prediction)", "",
               "| sampler | seed | monitor | " + " | ".join(f"it {i}" for i in columns) + " |",
               "|---|---|---|" + "---|" * len(columns)]
        for r in rows:
            for name in MONITORS:
                md.append(f"| {r['sampler']} | {r['seed']} | {name} | "
                          + _monitor_cells(r, name, columns))
        md.append("")
    swap = parts["swap"]
    if swap:
        alone = {(r["sampler"], r["seed"]): r for r in (monitors["rows"] if monitors else [])}
        first = swap["rows"][0]
        columns = _monitor_columns(first["monitor_iterations"])
        md += [f"## Swapped continuations, K = {first['K']} (no prediction)", "",
               f"Each sampler ran {first['first_iterations']} iterations; each chain was then "
               "continued with the other sampler (`fit(start=...)`). \"alone\": the sampler's "
               "own run of the same seed (the monitors part), at the same iterations.", "",
               "| run | seed | monitor | " + " | ".join(f"it {i}" for i in columns) + " |",
               "|---|---|---|" + "---|" * len(columns)]
        for r in swap["rows"]:
            runs = [(f"`{r['first']}`, then `{r['sampler']}`", r)]
            runs += [(f"`{s}` alone", alone[(s, r["seed"])]) for s in (r["first"], r["sampler"])
                     if (s, r["seed"]) in alone]
            for name in MONITORS:
                for label, run in runs:
                    md.append(f"| {label} | {r['seed']} | {name} | "
                              + _monitor_cells(run, name, columns))
        md.append("")
    options = parts["options"]
    if options:
        md += ["## Light sampler options (K = 100, seed 0)", "",
               "| sampler | accuracy | s/it |", "|---|---|---|"]
        for r in options["rows"]:
            md.append(f"| `{r['sampler']}` | {r['accuracy'][-1]:.4f} | "
                      f"{r['cpu_per_iteration']:.3f} ({r['wall_per_iteration']:.2f}) |")
        md.append("")
    rss = parts["rss"]
    if rss:
        md += ["## Peak resident memory, fresh process, K = 400, one chain, through `fit`", ""]
        for r in rss["rows"]:
            md.append(f"- {r['sampler']}, {_allocator(r)}: {r['peak_rss_mb']:.0f} MB (after "
                      f"loading the data {r['rss_after_loading_mb']:.0f} MB; "
                      f"{r['iterations']} iterations)")
        md += ["", "(Large blocks returned to the system: "
               "`topiczoo.memory.return_large_blocks_to_os()`, which the `topiczoo` command "
               "calls at start; the library leaves glibc's process-wide setting alone. Since "
               "2026-11-28 the light sampler gives the free pages of glibc's heaps back after "
               "every sweep, `topiczoo.memory.trim_free_memory()`, which changes no setting; "
               "the record before it measured 1,054 MB for light with the default settings. "
               "Since the same day the exact sampler's state holds z and n_dk alone, as "
               "light's, and its sweep rebuilds the counts on the host (`kernels.assignments`); "
               "with the counts in its state it measured 1,747 and 1,506 MB.)"]
        for r in rss["rows"]:
            checks.append(f"(e) peak RSS of a K = 400 {r['sampler']} fit, {_allocator(r)}: "
                          f"**{r['peak_rss_mb']:.0f} MB** (target <= 1024): "
                          f"{'met' if r['peak_rss_mb'] <= 1024 else 'NOT met'}")
        md.append("")
    md = md[:2] + ["## The issue's targets", ""] + [f"- {c}" for c in sorted(checks)] + [""] \
        + md[2:]
    path = ensure_dir(args.out) / f"{STEM}.md"
    path.write_text("\n".join(md) + "\n")
    print("\n".join(md))
    if grid:
        _figure(grid["rows"], seeds["rows"] if seeds else [], Path(args.out) / f"{STEM}.png")


def _monitor_cells(row, name, columns) -> str:
    """The table cells of monitor ``name`` of a row at iterations ``columns`` ("-" where the
    row has no value), closing the table row."""
    values = dict(zip(row["monitor_iterations"], row[name]))
    return " | ".join(f"{values[i]:.4g}" if i in values else "-" for i in columns) + " |"


def _monitor_columns(iterations):
    """At most 7 of the recorded iterations, evenly spread, the first and the last included."""
    picks = np.unique(np.linspace(0, len(iterations) - 1, min(7, len(iterations))).round())
    return [iterations[int(i)] for i in picks]


def _figure(grid, seeds, path):
    plt = pyplot()
    fig, ax = plt.subplots(1, 4, figsize=(17, 3.8))
    colors = {"exact": "C0", "exact:eta=qr": "C3", "light": "C1", "tomotopy": "C2"}
    for s in colors:
        rows = sorted((r for r in grid if r["sampler"] == s), key=lambda r: r["K"])
        if rows:
            ks = [r["K"] for r in rows]
            ax[0].plot(ks, [r["cpu_per_iteration"] for r in rows], "o-", color=colors[s], label=s)
            ax[1].plot(ks, [r["accuracy"][-1] for r in rows], "o-", color=colors[s],
                       label=f"{s} ({rows[0]['iterations']} iterations)")
    ax[0].set(xscale="log", yscale="log", xlabel="K", ylabel="CPU s per iteration",
              title="time per iteration")
    ax[1].set(xscale="log", xlabel="K", ylabel="test accuracy",
              title="accuracy after a few iterations")
    ks = sorted({r["K"] for r in grid})
    for a in ax[:2]:  # the grid's K values as plain ticks (no log-scale minor labels)
        a.minorticks_off()
        a.set_xticks(ks, [str(k) for k in ks])
    ax[0].set_yticks([0.25, 0.5, 1, 2, 4, 8], ["0.25", "0.5", "1", "2", "4", "8"])
    # K = 100: the seeds part's longest runs (the grid's if there are none)
    longest = [r for r in seeds if r["iterations"] == max(r["iterations"] for r in seeds)]
    for a, k, rows in ((ax[2], 100, longest or grid), (ax[3], 400, grid)):
        for r in rows:
            if r["K"] == k and r["sampler"] in colors and "cpu_seconds" in r:
                a.plot(r["cpu_seconds"], r["accuracy"], ".-", color=colors[r["sampler"]],
                       alpha=0.8, label=f"{r['sampler']} seed {r['seed']}")
        a.set(xlabel="CPU seconds (one thread)", ylabel="test accuracy",
              title=f"K = {k}: accuracy against time")
    for a in ax:
        a.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


def main(argv=None):
    args = parse_args(argv)
    if args.rss_probe:
        return rss_probe(args)
    if args.part == "report":
        return report(args)
    tic, load0 = time.perf_counter(), os.getloadavg()[0]
    if args.part == "rss":
        rows = part_rss(args)
    else:
        ds = load(args)
        rows = {"grid": part_grid, "seeds": part_seeds, "options": part_options,
                "monitors": part_monitors, "swap": part_swap}[args.part](
            ds, args)
    record = {"command": command_line(__file__), "threads": THREADS, "load": load0,
              "rows": []}
    path = ensure_dir(args.out) / f"{STEM}.{args.part}{args.tag}.json"
    for row in rows:  # written after every run: an interrupted part keeps what it did
        record["rows"].append(row)
        record["seconds"] = time.perf_counter() - tic
        path.write_text(json.dumps(record, indent=1) + "\n")
        log(f"wrote {path.name}")


if __name__ == "__main__":
    main()
