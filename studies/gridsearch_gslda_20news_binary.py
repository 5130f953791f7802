"""GridSearchCV over c for GSLDAClassifier on 20news-binary (scikit-learn's own search).

The gSLDA paper chose c by cross-validation on the training set (c = 25 for its binary
experiments, "gSLDA+"). This study does the same with scikit-learn: ``GridSearchCV`` over
``c`` of :class:`topiczoo.estimators.GSLDAClassifier` on the document-term matrix of
20news-binary's training part (alt.atheism vs talk.religion.misc, 856 documents), stratified
``--folds``-fold, scored by accuracy; the best estimator (refitted on the whole training part)
is then scored on the published test part (569 documents).

    python studies/gridsearch_gslda_20news_binary.py

writes ``studies/results/gridsearch_gslda_20news_binary.{md,json}``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

from _harness import (command_line, ensure_dir, log, parser, saved_args,  # noqa: E402
                      write_json)
from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.estimators import GSLDAClassifier  # noqa: E402


def counts(corpus):
    """The corpus's sparse [D, V] document-term matrix (CSR, int64)."""
    import scipy.sparse as sp

    ones = np.ones(corpus.num_tokens, np.int64)
    return sp.csr_matrix((ones, (corpus.doc_ids, corpus.words)),
                         shape=(corpus.num_docs, corpus.vocab_size))


def main() -> None:
    p = parser(__doc__, topics=20, chains=1)
    p.add_argument("--grid", type=float, nargs="+", default=[1.0, 4.0, 16.0, 64.0])
    p.add_argument("--folds", type=int, default=2)
    p.add_argument("--iterations", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    data = load_dataset("20news-binary", data_dir=args.data_dir)
    X_train, y_train = counts(data.train), np.asarray(data.train.labels)
    X_test, y_test = counts(data.test), np.asarray(data.test.labels)
    estimator = GSLDAClassifier(args.topics, num_chains=args.chains,
                                num_iterations=args.iterations, num_snapshots=3, test_burnin=10,
                                test_draws=5, random_state=args.seed)
    search = GridSearchCV(estimator, {"c": args.grid},
                          cv=StratifiedKFold(args.folds, shuffle=True, random_state=args.seed),
                          scoring="accuracy", verbose=3)
    load_before = os.getloadavg()[0]
    tic = time.perf_counter()
    search.fit(X_train, y_train)
    seconds = time.perf_counter() - tic
    load = (load_before, os.getloadavg()[0])
    test_accuracy = float(search.score(X_test, y_test))
    res = search.cv_results_
    rows = [{"c": float(c), "mean": float(m), "sd": float(s),
             "folds": [float(res[f"split{k}_test_score"][i]) for k in range(args.folds)],
             "fit_seconds": float(t)}
            for i, (c, m, s, t) in enumerate(zip(res["param_c"], res["mean_test_score"],
                                                 res["std_test_score"], res["mean_fit_time"]))]
    best = float(search.best_params_["c"])
    lines = ["# GridSearchCV over c, GSLDAClassifier on 20news-binary", "",
             f"`{command_line(__file__)}`", "",
             f"{data.summary()}", "",
             f"K = {args.topics}, {args.chains} chain(s) x {args.iterations} iterations per fit, "
             f"test chains 10 + 5 sweeps, strategy ma; {args.folds}-fold stratified CV on the "
             f"training part, accuracy; the search took {seconds:.0f} s on a shared 2-core "
             f"machine (load average {load[0]:.1f} at its start, {load[1]:.1f} at its end).", "",
             "| c | CV accuracy mean | sd | " + " | ".join(f"fold {k}" for k in range(args.folds))
             + " | mean fit s |", "|---" * (4 + args.folds) + "|"]
    for r in rows:
        mark = " **best**" if r["c"] == best else ""
        lines.append(f"| {r['c']:g}{mark} | {r['mean']:.4f} | {r['sd']:.4f} | "
                     + " | ".join(f"{v:.4f}" for v in r["folds"]) + f" | {r['fit_seconds']:.0f} |")
    lines += ["", f"best c = {best:g}; the best estimator refitted on all 856 training documents: "
              f"test accuracy {test_accuracy:.4f}."]
    markdown = "\n".join(lines) + "\n"
    out = ensure_dir(args.out)
    stem = Path(out) / "gridsearch_gslda_20news_binary"
    stem.with_suffix(".md").write_text(markdown)
    write_json(stem.with_suffix(".json"), {"args": saved_args(args), "rows": rows, "best_c": best,
                                           "test_accuracy": test_accuracy, "seconds": seconds,
                                           "load_average": load, "data": data.summary()},
               indent=1)
    log(f"wrote {stem}.md and .json")
    print(markdown)


if __name__ == "__main__":
    main()
