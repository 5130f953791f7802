"""The first run of the README: which model, options and length give diagnostics a student can
act on within a minute on one core?

Each candidate is ``topiczoo fit``'s run on the embedded bbc corpus (business vs politics,
the command's default data and split, seed 0): 4 chains of the exact sampler, ``--iterations``
Gibbs cycles (default 400), the draws of every label-invariant monitor kept. From those draws
the study gives, at n = 100, 200 and 400 iterations, each monitor's rank R-hat over the draws
of iterations (n/2, n] (what a run of n iterations, half burn-in, reports), and the wall time
of n iterations (this process's training time per iteration x n, compilation included once);
a run of ``topiczoo fit`` adds the start of the command (about 5 s) and the prediction.

    python studies/first_run.py                     # every candidate, 400 iterations
    python studies/first_run.py --only gslda-c1-K5  # one of them

writes ``studies/results/first_run.json`` (a record per candidate; a rerun replaces the
candidates it runs) and rewrites ``first_run.md`` from all of them.
"""

from __future__ import annotations

import json
import time

from _harness import RESULTS, single_thread

single_thread()

import numpy as np  # noqa: E402

#: name -> (registry model, K, options)
CANDIDATES = {
    "medlda-K20": ("medlda", 20, {}),
    "medlda-K5": ("medlda", 5, {}),
    "gslda-c1-K20": ("gslda", 20, {"c": 1}),
    "gslda-c1-K10": ("gslda", 10, {"c": 1}),
    "gslda-c1-K5": ("gslda", 5, {"c": 1}),
    "gslda-K5": ("gslda", 5, {}),
    "gslda-K20": ("gslda", 20, {}),
}
CHECKPOINTS = (100, 200, 400)


def measure(name: str, iterations: int) -> dict:
    from topiczoo.datasets import load_dataset
    from topiczoo.diagnostics.convergence import rhat
    from topiczoo.fit import fit
    from topiczoo.models.registry import REGISTRY

    model_name, topics, options = CANDIDATES[name]
    data = load_dataset("bbc", seed=0)
    entry = REGISTRY[model_name]
    model = entry.build(topics, corpus=data.train, **options)
    tic = time.perf_counter()
    result = fit(model, data.train, num_chains=4, num_iterations=iterations, seed=0,
                 progress=False)
    wall = time.perf_counter() - tic
    record = {"name": name, "model": model_name, "topics": topics, "options": options,
              "iterations": iterations, "train_seconds": result.train_seconds,
              "wall_seconds": wall, "rhat": {}, "last": {}}
    its = np.asarray(result.draw_iterations)
    for n in CHECKPOINTS:
        if n > iterations:
            continue
        keep = (its > n // 2) & (its <= n)
        values = {}
        for monitor in result.label_invariant:
            draws = np.asarray(result.draws.get(monitor, np.zeros((0,))))
            if draws.ndim != 2:
                continue
            values[monitor] = float(rhat(draws[:, keep]))
        record["rhat"][str(n)] = values
    for monitor in result.label_invariant:
        draws = np.asarray(result.draws.get(monitor, np.zeros((0,))))
        if draws.ndim == 2:
            record["last"][monitor] = [float(v) for v in draws[:, -1]]
    return record


def table(records: list) -> str:
    lines = ["# The first run: rank R-hat of the label-invariant monitors on bbc, 4 chains", "",
             "R-hat over the draws of iterations (n/2, n]; `const`: the monitor is constant in "
             "every chain (R-hat 1 by the summary's rule, or undefined); time: wall seconds of "
             "n iterations in one process (training only, compilation included, on the "
             "shared 2-core machine).", ""]
    for r in records:
        lines += [f"## {r['name']}: {r['model']} K = {r['topics']} {r['options'] or ''}", "",
                  "| n | time s | " + " | ".join(r["rhat"][next(iter(r["rhat"]))]) + " |",
                  "|---|---|" + "---|" * len(r["rhat"][next(iter(r["rhat"]))])]
        per_iteration = r["train_seconds"] / r["iterations"]
        for n, values in r["rhat"].items():
            cells = [("const" if not np.isfinite(v) else f"{v:.3f}") for v in values.values()]
            lines.append(f"| {n} | {per_iteration * int(n):.0f} | " + " | ".join(cells) + " |")
        lines.append("")
        lines.append("last draw per chain: " + "; ".join(
            f"{m} " + ", ".join(f"{v:.4g}" for v in vs) for m, vs in r["last"].items()))
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=list(CANDIDATES), choices=list(CANDIDATES))
    p.add_argument("--iterations", type=int, default=400)
    args = p.parse_args()
    path = RESULTS / "first_run.json"
    records = json.loads(path.read_text()) if path.exists() else []
    for name in args.only:
        tic = time.perf_counter()
        record = measure(name, args.iterations)
        records = [r for r in records if r["name"] != name] + [record]
        path.write_text(json.dumps(records, indent=1) + "\n")
        worst = {n: max(v.values()) for n, v in record["rhat"].items()}
        print(f"{name}: {time.perf_counter() - tic:.0f} s; worst R-hat by n: {worst}",
              flush=True)
    (RESULTS / "first_run.md").write_text(table(records))


if __name__ == "__main__":
    main()
