"""movie-scale: how much of the rating a penalised regression on the words themselves predicts.

A reference for the topic models' predictive R^2 on the same folds: no topics, a linear model
on each document's empirical word distribution (counts / N_d, the sHDP paper's "regressing
directly on the empirical word distribution", its section 6), fitted on each fold's training
documents, scored on its test documents. Folds: ``load_folds("movie-scale", num_folds=5,
seed=0, preprocessing=P)`` for P in ``--preprocessings`` (``shdp``: the paper's V = 2,179 and
log ratings; ``default``: V = 5,000, ratings in [0, 1]), the folds of ``shdp_movie_scale.py``.

Models (scikit-learn, penalty chosen on the training documents only):

* ``ridge``: ``RidgeCV`` over 10^-6 .. 10^2 (33 values) by efficient leave-one-out;
* ``lasso``: ``LassoCV`` (the paper's L1 GLM; it used R's glmnet) on standardised columns
  (glmnet's default), 50 penalties, 5-fold cross-validation on the training documents; the
  .json counts the path fits that did not converge.

Predictive R^2 is ``1 - sum (y - yhat)^2 / sum (y - mean y)^2`` per fold (the studies'
definition) and on the five folds' predictions pooled (the paper's "calculated on the full
set of predictions").

    python studies/movie_scale_word_regression.py [--preprocessings shdp default] \
        [--folds 0 1 2 3 4] [--models ridge lasso]

writes ``studies/results/movie_scale_word_regression.{json,md}`` (35 min on one core: ridge
16-45 s a fold, lasso 1-6 min).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

from _harness import RESULTS, command_line, ensure_dir, log, mean_sd, write_json  # noqa: E402
from topiczoo import load_folds  # noqa: E402
from topiczoo.metrics import predictive_r2  # noqa: E402

MODELS = ("ridge", "lasso")
RIDGE_ALPHAS = np.logspace(-6, 2, 33)


def word_distribution(corpus) -> np.ndarray:
    """float64 [D, V]: each document's word counts divided by its length (rows sum to 1; a
    test document left without tokens by the training vocabulary is a row of zeros)."""
    counts = corpus.document_term_matrix().astype(np.float64)
    return counts / np.maximum(counts.sum(1, keepdims=True), 1.0)


def pooling_sums(y: np.ndarray, yhat: np.ndarray) -> dict:
    """What the pooled R^2 needs of a fold (the responses themselves stay out of the record):
    its size, the sums of y and y^2 and the squared error."""
    return {"num_docs": int(y.size), "sum_y": float(y.sum()), "sum_y2": float(np.sum(y * y)),
            "squared_error": float(np.sum((y - yhat) ** 2))}


def pooled_r2(records) -> float:
    """Predictive R^2 of the folds' predictions taken together (from :func:`pooling_sums`)."""
    n = sum(r["num_docs"] for r in records)
    total = sum(r["sum_y2"] for r in records) - sum(r["sum_y"] for r in records) ** 2 / n
    return 1.0 - sum(r["squared_error"] for r in records) / total


def fit_predict(model: str, x_train, y_train, x_test) -> tuple[np.ndarray, dict]:
    """Predictions [D_test] of ``model`` fitted on (x_train, y_train), and its chosen penalty."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LassoCV, RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if model == "ridge":
        fitted = RidgeCV(alphas=RIDGE_ALPHAS).fit(x_train, y_train)
        chosen = {"alpha": float(fitted.alpha_)}
    else:
        # glmnet's default: the path on standardised columns
        fitted = make_pipeline(StandardScaler(), LassoCV(alphas=50, cv=5, max_iter=20000))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fitted.fit(x_train, y_train)
        lasso = fitted[-1]
        chosen = {"alpha": float(lasso.alpha_), "nonzero": int(np.sum(lasso.coef_ != 0)),
                  "not_converged": sum(issubclass(w.category, ConvergenceWarning)
                                       for w in caught)}
    return fitted.predict(x_test), chosen


def run(args) -> list[dict]:
    records = []
    for prep in args.preprocessings:
        folds = load_folds("movie-scale", num_folds=5, seed=0, data_dir=args.data_dir,
                           preprocessing=prep)
        for data in (folds[k] for k in args.folds):
            x_train, x_test = word_distribution(data.train), word_distribution(data.test)
            y_train = np.asarray(data.train.labels, np.float64)
            y_test = np.asarray(data.test.labels, np.float64)
            for model in args.models:
                tic = time.perf_counter()
                yhat, chosen = fit_predict(model, x_train, y_train, x_test)
                records.append({
                    "preprocessing": prep, "fold": data.fold, "model": model,
                    "vocab_size": data.train.vocab_size, "r2": predictive_r2(y_test, yhat),
                    **pooling_sums(y_test, yhat),
                    "seconds": time.perf_counter() - tic, **chosen})
                log(f"{prep} fold {data.fold} {model}: R^2 {records[-1]['r2']:.4f} "
                    f"({records[-1]['seconds']:.0f} s)")
    return records


def markdown(record: dict) -> str:
    lines = ["# movie-scale: penalised regression on the words (no topics)", "",
             f"Command: `{record['command']}`. The 5-fold split (seed 0) of each preprocessing, "
             "features: each document's word counts / its length. Penalties chosen on each "
             "fold's training documents only (ridge: leave-one-out over 10^-6 .. 10^2; lasso: "
             "5-fold cross-validation, 50 penalties, on standardised columns as glmnet).", ""]
    for prep in dict.fromkeys(r["preprocessing"] for r in record["records"]):
        rows = [r for r in record["records"] if r["preprocessing"] == prep]
        folds = sorted({r["fold"] for r in rows})
        first = min(rows, key=lambda r: r["fold"])
        lines += [f"## preprocessing `{prep}` (V = {first['vocab_size']:,} in fold "
                  f"{first['fold']})", "",
                  "| model | " + " | ".join(f"fold {k}" for k in folds) + " | mean (sd) | pooled |",
                  "|---|" + "---:|" * (len(folds) + 2)]
        for model in dict.fromkeys(r["model"] for r in rows):
            mine = sorted((r for r in rows if r["model"] == model), key=lambda r: r["fold"])
            values = [r["r2"] for r in mine]
            pooled = pooled_r2(mine)
            lines.append(f"| {model} | " + " | ".join(f"{v:.3f}" for v in values)
                         + " | {:.3f} ({:.3f})".format(*mean_sd(values)) + f" | {pooled:.3f} |")
        lines += ["", "Chosen penalties: " + "; ".join(
            f"{r['model']} fold {r['fold']} {r['alpha']:.2g}"
            + (f" ({r['nonzero']} words, {r['not_converged']} path fits not converged)"
               if "nonzero" in r else "") for r in rows) + ".", ""]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preprocessings", nargs="+", default=["shdp", "default"],
                   choices=["shdp", "default"])
    p.add_argument("--folds", nargs="+", type=int, default=[0, 1, 2, 3, 4], choices=range(5))
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    p.add_argument("--out", default=str(RESULTS), help="output folder (default studies/results)")
    p.add_argument("--data-dir", default=None,
                   help="folder of the shared corpora (default: topiczoo's find_data_dir)")
    args = p.parse_args()
    stem = ensure_dir(args.out) / "movie_scale_word_regression"
    record = {"command": command_line(__file__), "records": run(args)}
    write_json(stem.with_suffix(".json"), record)
    text = markdown(record)
    Path(stem.with_suffix(".md")).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
