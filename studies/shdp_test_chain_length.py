"""Does the test chains' length limit the epsilon-insensitive sHDP's R^2 at ~1,000 topics?

The movie-scale studies predict with test chains of 20 burn-in + 10 kept sweeps; the sHDP
paper ran 500 sweeps of topic sampling for its test documents. Here: fold 0's training
documents of ``load_folds("movie-scale", num_folds=5, seed=0, preprocessing="shdp")`` split
75/25 (``train_test_split(0.25, seed=1)``, the validation split of
``shdp_movie_scale_diagnose.py``); one fit of ``shdp-regression`` (c = 8, ``--chains`` x
``--iterations``, seed 0); then one prediction of the validation documents per test burn-in
(``--burnins``, each with 10 kept sweeps, seed 0), scored by predictive R^2 (strategy ma).
Nothing looks at fold 0's test documents.

    python studies/shdp_test_chain_length.py [--iterations 1000] [--burnins 20 100 500]

writes ``studies/results/shdp_test_chain_length.{json,md}``; ``--replot`` rewrites the .md.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from _harness import single_thread

single_thread()

from _harness import (command_line, default_sizing, ensure_dir, log, parser,  # noqa: E402
                      write_json)
from topiczoo import fit, load_folds  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402
from topiczoo.predict import predict  # noqa: E402


def markdown(record) -> str:
    lines = ["# sHDP on movie-scale: the test chains' length", "",
             f"Command: `{record['command']}`. {record['split']}. One fit of shdp-regression "
             f"(c = {record['c']:g}, {record['chains']} chains x {record['iterations']} "
             f"iterations, {default_sizing(record['iterations'])}, seed 0): "
             f"{record['fit_seconds'] / 60:.1f} min, beside other work "
             "on a 2-core machine. Then one prediction per test burn-in, 10 kept sweeps each, "
             "strategy ma.", "",
             "| test burn-in sweeps | validation R^2 | predict s |", "|---:|---:|---:|"]
    for row in record["rows"]:
        lines.append(f"| {row['burnin']} | {row['r2']:.4f} | {row['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def main():
    p = parser(__doc__, topics=10, chains=2, replot=True)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--burnins", type=int, nargs="+", default=[20, 100, 500])
    args = p.parse_args()
    stem = Path(ensure_dir(args.out)) / "shdp_test_chain_length"
    if args.replot:
        stem.with_suffix(".md").write_text(markdown(json.loads(
            stem.with_suffix(".json").read_text())))
        return
    folds = load_folds("movie-scale", num_folds=5, seed=0, data_dir=args.data_dir,
                       preprocessing="shdp")
    fit_part, valid, dropped = folds[0].train.train_test_split(0.25, seed=1)
    split = (f"Fold 0's {folds[0].train.num_docs} training documents split 75/25 (seed 1): fit "
             f"on {fit_part.num_docs}, validate on {valid.num_docs}")
    model = REGISTRY["shdp-regression"].build(args.topics, fit_part, c=8.0)
    tic = time.time()
    result = fit(model, fit_part, num_chains=args.chains, num_iterations=args.iterations,
                 seed=0, progress=False)
    record = {"command": command_line(__file__), "split": split, "c": 8.0,
              "chains": args.chains, "iterations": args.iterations,
              "fit_seconds": time.time() - tic, "rows": []}
    for burnin in args.burnins:
        tic = time.time()
        prediction = predict(result, valid, num_burnin=burnin, num_draws=10, seed=0)
        r2 = float(prediction.metrics(valid.labels, "ma")["predictive_r2"])
        record["rows"].append({"burnin": burnin, "r2": r2, "seconds": time.time() - tic})
        log(f"test burn-in {burnin}: validation R^2 {r2:.4f}")
        write_json(stem.with_suffix(".json"), record)
    stem.with_suffix(".md").write_text(markdown(record))
    print(markdown(record))


if __name__ == "__main__":
    main()
