"""Test accuracy on 20news-binary (alt.atheism vs talk.religion.misc), the papers' binary task.

For each seed: gSLDA with c = 25 ("gSLDA+"), gSLDA with c = 1, Gibbs MedLDA (c = 1, ell = 164)
and the LDA + SVM baseline, K topics, 4 chains, the papers' alpha = 1 (alpha/K per topic),
beta = 0.01, nu2 = 1. Prints accuracy per strategy and seed, and the mean over seeds.

    python benchmarks/accuracy_20news_binary.py --seeds 0 1 2 3 4 --json out.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from topiczoo.baseline import lda_svm_predict
from topiczoo.datasets import load_dataset
from topiczoo.fit import fit
from topiczoo.models import gslda, lda, medlda
from topiczoo.predict import STRATEGIES, predict

CONFIGS = {
    "gslda-c25": lambda k: gslda(k, c=25),
    "gslda-c1": lambda k: gslda(k, c=1),
    "medlda-c1-ell164": lambda k: medlda(k, c=1, ell=164),
    "lda-svm": lambda k: lda(k),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    data = load_dataset("20news-binary", data_dir=args.data_dir)
    print(data.summary() if hasattr(data, "summary") else data.name)
    rows = []
    for name in args.configs:
        for seed in args.seeds:
            model = CONFIGS[name](args.topics)
            result = fit(model, data.train, num_chains=args.chains,
                         num_iterations=args.iterations, seed=seed, progress=False)
            tic = time.perf_counter()
            if name == "lda-svm":
                acc = {"ma": lda_svm_predict(result, data.train, data.test, seed=seed)
                       .accuracy(data.test.labels)}
            else:
                prediction = predict(result, data.test, seed=seed)
                acc = {s: prediction.accuracy(data.test.labels, s) for s in STRATEGIES}
            row = dict(config=name, seed=seed, accuracy=acc, train_seconds=result.train_seconds,
                       predict_seconds=time.perf_counter() - tic,
                       token_iterations_per_second=result.token_iterations_per_second)
            rows.append(row)
            print(f"{name:18s} seed {seed}: " + "  ".join(f"{k} {v:.4f}" for k, v in acc.items())
                  + f"  | train {result.train_seconds:.1f} s", flush=True)
    print(f"\nK={args.topics}, {args.chains} chains, {args.iterations} iterations "
          f"(half burn-in), seeds {args.seeds}: mean (sd) test accuracy")
    for name in args.configs:
        accs = [r["accuracy"] for r in rows if r["config"] == name]
        cells = []
        for s in accs[0]:
            values = np.array([a[s] for a in accs])
            cells.append(f"{s} {values.mean():.4f} ({values.std(ddof=1) if len(values) > 1 else 0:.4f})")
        secs = np.mean([r["train_seconds"] for r in rows if r["config"] == name])
        print(f"{name:18s} " + "  ".join(cells) + f"  | train {secs:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(settings=vars(args), rows=rows), f, indent=2)


if __name__ == "__main__":
    main()
