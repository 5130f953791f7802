"""Binary classification: sHDP logistic and hinge against gSLDA and Gibbs MedLDA at their best K.

On ``20news-binary`` (alt.atheism vs talk.religion.misc; or ``--data poliblog``), each model
through the registry and ``topiczoo.fit_and_predict``, 4 chains, ``--iterations`` Gibbs cycles
(half burn-in, 5 snapshots), test chains 20 burn-in + 10 kept sweeps, test accuracy by the
four averaging strategies (the target is read at ``ma``, multiple average):

* ``gslda``: K = 20, c = 25 and ``medlda``: K = 20, c = 1, ell = 164: the best settings of
  ``benchmarks/results/accuracy_20news_binary.txt`` (K = 20 is the K measured there);
* ``shdp-logistic``: c = 25 (gSLDA's) and ``shdp-hinge``: c = 1, ell = 164 (MedLDA's), 20
  initial topics, alpha and gamma drawn (Gamma(1, 1)), beta 0.01, nu2 1.

    python studies/shdp_20news_binary.py [--data poliblog] [--seeds 0 1]
        [--parametric-topics 10 20 30 40 50]

``--parametric-topics`` runs gSLDA and MedLDA at each K of the list (the table then names each
K and the best K at ``ma``; default: ``--topics`` alone).

writes ``studies/results/shdp_<data>.{md,json}``.
"""

from __future__ import annotations

import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

from _harness import (command_line, default_sizing, ensure_dir, load_run, log,  # noqa: E402
                      mean_sd, parser, saved_args, write_json)
from topiczoo import fit_and_predict, load_dataset  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402
from topiczoo.predict import STRATEGIES  # noqa: E402

METHODS = {"shdp-logistic": {"c": 25.0}, "shdp-hinge": {"c": 1.0, "ell": 164.0},
           "gslda": {"c": 25.0}, "medlda": {"c": 1.0, "ell": 164.0}}


def one_fit(name, num_topics, data, args, seed) -> dict:
    run = fit_and_predict(REGISTRY[name], num_topics, data.train, data.test,
                          options=METHODS[name], progress=False,
                          fit_kwargs=dict(num_chains=args.chains,
                                          num_iterations=args.iterations, seed=seed),
                          predict_kwargs=dict(num_burnin=args.test_burnin,
                                              num_draws=args.test_draws, seed=seed))
    record = {"method": name, "K": num_topics, "seed": seed,
              "accuracy": {s: float(run.prediction.accuracy(data.test.labels, s))
                           for s in STRATEGIES},
              "train_seconds": run.train_seconds, "predict_seconds": run.predict_seconds}
    if "num_topics" in run.result.draws:
        record["num_topics_last"] = np.asarray(run.result.draws["num_topics"])[:, -1].tolist()
    log(f"{name:14s} K={num_topics:<3d} seed {seed}: " + "  ".join(f"{s} {a:.4f}"
                                                 for s, a in record["accuracy"].items())
        + f"  train {run.train_seconds:.0f} s"
        + (f"  occupied {record['num_topics_last']}" if "num_topics_last" in record else ""))
    return record


def markdown(records, args, wall, command) -> str:
    lines = [f"# sHDP on {args.data}: test accuracy against gSLDA and Gibbs MedLDA", "",
             f"Command: `{command}`. Wall time {wall / 60:.1f} min (2-core machine shared "
             "with other sessions).", "",
             f"{args.chains} chains x {args.iterations} iterations ({default_sizing(args.iterations)}), "
             f"test chains {args.test_burnin} + {args.test_draws} sweeps; sHDP: "
             f"{args.topics} initial topics; gSLDA and MedLDA: K = "
             + ", ".join(map(str, _parametric_topics(args))) + "; seeds " + ", ".join(map(str, args.seeds)) + ". Options: "
             + "; ".join(f"{k} {v}" for k, v in METHODS.items()) + ".", "",
             "| method | " + " | ".join(STRATEGIES) + " | train s | occupied topics (end) |",
             "|---|" + "---:|" * len(STRATEGIES) + "---:|---|"]
    best = {}
    for name, num_topics in _rows(records):
        rs = [r for r in records if r["method"] == name and r.get("K") == num_topics]
        cells = []
        for s in STRATEGIES:
            m, sd = mean_sd([r["accuracy"][s] for r in rs])
            cells.append(f"{m:.4f}" + (f" ({sd:.4f})" if len(rs) > 1 else ""))
        occupied = "; ".join(str(r["num_topics_last"]) for r in rs if "num_topics_last" in r)
        ma = float(np.mean([r["accuracy"]["ma"] for r in rs]))
        if not name.startswith("shdp") and ma > best.get(name, (-1.0, 0))[0]:
            best[name] = (ma, num_topics)
        label = name if name.startswith("shdp") or num_topics is None else f"{name} K={num_topics}"
        lines.append(f"| {label} | " + " | ".join(cells)
                     + f" | {np.mean([r['train_seconds'] for r in rs]):.0f} | {occupied} |")
    lines += ["", "(mean over seeds, sd in brackets when more than one)", ""]
    if len(_parametric_topics(args)) > 1:
        lines += ["Best K at ma: " + "; ".join(f"{name} K = {k} ({ma:.4f})"
                                              for name, (ma, k) in best.items()), ""]
    if args.data == "20news-binary":  # the target is for 20news-binary only
        lines.append("Target: sHDP logistic and hinge accuracy >= 0.80 at ma: ")
        for name in ("shdp-logistic", "shdp-hinge"):
            rs = [r["accuracy"]["ma"] for r in records if r["method"] == name]
            if rs:
                lines[-1] += (f"{name} {np.mean(rs):.4f} "
                              + ("(met)" if np.mean(rs) >= 0.8 else "(not met)") + "; ")
    else:
        lines.append("No accuracy target for this corpus: the comparison is the sHDP "
                     "against gSLDA and MedLDA.")
    lines += [""]
    return "\n".join(lines)


def _parametric_topics(args) -> list:
    return list(getattr(args, "parametric_topics", None) or [args.topics])


def _rows(records) -> list:
    """(method, K) in METHODS order, K ascending (K None: a record from before the K grid)."""
    keys = {(r["method"], r.get("K")) for r in records}
    order = list(METHODS)
    return sorted(keys, key=lambda mk: (order.index(mk[0]), mk[1] or 0))


def main():
    p = parser(__doc__, topics=20, test_burnin=20, test_draws=10, replot=True)
    p.add_argument("--data", default="20news-binary", choices=("20news-binary", "poliblog"))
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--parametric-topics", type=int, nargs="+", default=None,
                   help="K grid for gslda and medlda (default: --topics)")
    args = p.parse_args()
    stem = Path(args.out) / f"shdp_{args.data.replace('-', '_')}"
    if args.replot:
        saved = load_run(stem, args)
        text = markdown(saved["records"], args, saved["wall_seconds"], args.command)
        stem.with_suffix(".md").write_text(text)
        print(text)
        return
    ensure_dir(args.out)
    tic = time.perf_counter()
    data = load_dataset(args.data, seed=0, data_dir=args.data_dir)
    log(f"{args.data}: train D={data.train.num_docs} N={data.train.num_tokens}, "
        f"test D={data.test.num_docs}")
    records = [one_fit(name, k, data, args, seed) for seed in args.seeds for name in args.methods
               for k in ([args.topics] if name.startswith("shdp") else _parametric_topics(args))]
    wall = time.perf_counter() - tic
    command = command_line(__file__)
    write_json(stem.with_suffix(".json"), {"command": command, "args": saved_args(args),
                                           "wall_seconds": wall, "records": records})
    text = markdown(records, args, wall, command)
    stem.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
