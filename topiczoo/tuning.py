"""Choosing a model's regularisation constant c by k-fold cross-validation on training data.

:func:`choose_c` fits a registry entry (``topiczoo.models.registry``) on each fold's training
part for every c of a grid and scores the fold's validation part; the c with the best mean
validation metric wins (:class:`CTuning` records every value). The estimators' ``c="cv"``
(:mod:`topiczoo.estimators`) and ``topiczoo fit --c cv`` run it; a search can keep each
finished (c, fold) in a JSON record and resume from it. The (c, fold) fits are cells that
can run on a Dask cluster (``client=``, ``workers=``, ``scheduler=``; :mod:`topiczoo.cluster`)
with the scores of a run in one process.

Default grids: :data:`C_GRID_CLASSIFICATION` (1, 2, 4, ..., 64) and :data:`C_GRID_REGRESSION`
(powers of 4 from 1 to 1024); the metric by label kind: :data:`CV_METRIC`.
"""

from __future__ import annotations

import json
import numbers
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from topiczoo.checkpoints import corpus_fingerprint
from topiczoo.cluster import open_client, run_cells, share
from topiczoo.corpus import Corpus
from topiczoo.labels import shown
from topiczoo.run import fit_and_predict

__all__ = ["CV_METRIC", "C_GRID_CLASSIFICATION", "C_GRID_REGRESSION", "CTuning", "choose_c",
           "default_c_grid"]

#: Default c grid of the classifiers' ``c="cv"`` and ``topiczoo fit --c cv``: 1, 2, 4, ..., 64.
C_GRID_CLASSIFICATION = tuple(float(2**i) for i in range(7))
#: Default c grid of the regressors: powers of 4 from 1 to 1024 (the benchmark's c = 256 for
#: medlda-regression on movie-scale lies inside).
C_GRID_REGRESSION = tuple(float(4**i) for i in range(6))

#: The task metric cross-validation maximises, by label kind (``Task.metrics`` key).
CV_METRIC = {"binary": "accuracy", "multiclass": "accuracy", "multilabel": "f1",
             "regression": "predictive_r2"}


@dataclass
class CTuning:
    """What :func:`choose_c` found.

    best_c: the c with the highest mean validation metric (ties: the first in grid order);
    metric: its name (``accuracy``, ``predictive_r2``, ``f1``); grid: the c values tried;
    scores: float64 [len(grid), num_folds], the metric of each c and fold; seconds: wall time.
    """
    best_c: float
    metric: str
    grid: tuple
    scores: np.ndarray
    seconds: float = 0.0

    def table(self) -> str:
        """The cross-validation table as text: c, mean and sd of the metric over folds,
        the folds' values; the chosen c marked ``*``."""
        width = self.scores.shape[1]
        head = (f"{'c':>8}  {self.metric + ' mean':>20}  {'sd':>7}  "
                + "  ".join(f"fold {k}" for k in range(width)))
        lines = [head, "-" * len(head)]
        for c, row in zip(self.grid, self.scores):
            sd = row.std(ddof=1) if width > 1 else 0.0
            mark = "  *" if c == self.best_c else ""
            lines.append(f"{c:>8g}  {row.mean():>20.4f}  {sd:>7.4f}  "
                         + "  ".join(f"{v:>6.4f}" for v in row) + mark)
        return "\n".join(lines)

    def cv_results(self) -> dict:
        """The search as scikit-learn's ``GridSearchCV(...).cv_results_`` over ``{"c": grid}``
        with one test score (the metric) has it: ``params`` (list of ``{"c": c}``),
        ``param_c`` (masked float64 [len(grid)]), ``split{k}_test_score`` (float64
        [len(grid)], fold k's metric), ``mean_test_score``, ``std_test_score`` (over the
        folds, ddof 0 as scikit-learn's) and ``rank_test_score`` (int32, 1 = best, ties
        share the lowest rank, NaN last). Fit and score times are not recorded (the search
        records its total :attr:`seconds`)."""
        scores = np.asarray(self.scores, np.float64)
        means = scores.mean(1)
        order = np.where(np.isnan(means), -np.inf, means)
        rank = np.array([1 + int(np.sum(order > m)) for m in order], np.int32)
        out = {"params": [{"c": float(c)} for c in self.grid],
               "param_c": np.ma.MaskedArray(np.asarray(self.grid, np.float64), mask=False)}
        for k in range(scores.shape[1]):
            out[f"split{k}_test_score"] = scores[:, k].copy()
        out.update(mean_test_score=means, std_test_score=scores.std(1),
                   rank_test_score=rank)
        return out

    def as_dict(self) -> dict:
        """JSON-able: best_c, metric, grid, scores [len(grid)][folds], seconds."""
        return {"best_c": self.best_c, "metric": self.metric, "grid": list(self.grid),
                "scores": self.scores.tolist(), "seconds": self.seconds}


def default_c_grid(kind: str) -> tuple:
    """:data:`C_GRID_REGRESSION` for ``kind == "regression"``, else
    :data:`C_GRID_CLASSIFICATION`."""
    return C_GRID_REGRESSION if kind == "regression" else C_GRID_CLASSIFICATION


def choose_c(entry, num_topics: int, corpus: Corpus, *, grid=None, num_folds: int = 3,
             options=None, fit_kwargs=None, predict_kwargs=None, strategy: str = "ma",
             seed: int = 0, progress: bool = False, record=None, client=None,
             workers: int | None = 0, scheduler: str | None = None) -> CTuning:
    """Choose a model's c by ``num_folds``-fold cross-validation on ``corpus`` (training data).

    Args:
      entry: a registry entry (``REGISTRY[name]``) with a ``c`` option.
      num_topics: K.
      corpus: the training corpus with labels; split by ``corpus.kfold_splits(num_folds,
        seed)`` (stratified by class for class labels); each fold's validation documents are
        re-encoded in its training part's vocabulary.
      grid: the c values (default :func:`default_c_grid` of the corpus's label kind).
      options: the model's other options; fit_kwargs / predict_kwargs: for
        :func:`topiczoo.run.fit_and_predict` (chains, iterations, seed, ... of every CV fit).
      strategy: averaging strategy of the validation metric.
      progress: a line per (c, fold) on stderr.
      record: a JSON file (``topiczoo fit --c cv --checkpoint`` uses ``OUT/choose_c.json``)
        to which each (c, fold)'s validation metric is written as soon as it is known. A call
        with the same settings reads the finished ones back and fits only the others, so an
        interrupted search resumes; a record of other settings is refused with what differs.
      client, workers, scheduler: where the (c, fold) fits run, as for
        :func:`topiczoo.compare.compare` (:mod:`topiczoo.cluster`): a ``distributed.Client``;
        the address of a Dask scheduler; or ``workers`` worker processes of a local cluster
        (0, the default here: in this process, one after another; None: one per core). Each
        fit is a function of its c, fold and settings alone, so the scores are those of a run
        in this process, bit for bit. The record is written here as the scores come back.
    Returns a :class:`CTuning`: the c with the best mean validation metric (accuracy for
    classes, predictive R^2 for ratings, micro F1 for multi-label), every fold's value.
    """
    if "c" not in entry.options():
        raise ValueError(f"{entry.name} has no option c to choose")
    kind = corpus.label_kind
    if kind is None:
        raise ValueError("choosing c needs a corpus with labels")
    grid = tuple(float(c) for c in (default_c_grid(kind) if grid is None else grid))
    if not grid:
        raise ValueError("the c grid is empty")
    if isinstance(num_folds, bool) or not isinstance(num_folds, numbers.Integral) \
            or num_folds < 2:
        raise ValueError(f"num_folds must be an integer >= 2, got {shown(num_folds)}")
    options = {k: v for k, v in (options or {}).items() if k != "c"}
    for c in grid:  # bad c (e.g. a fractional c of the logistic) before any sampling
        entry.build(num_topics, corpus=corpus, **options, c=c)
    folds = corpus.kfold_splits(num_folds, seed=seed)
    settings = _cv_settings(entry, num_topics, corpus, num_folds, seed, strategy, options,
                            fit_kwargs, predict_kwargs)
    done, metric = _read_cv_record(record, settings)
    scores = np.zeros((len(grid), num_folds))
    tic = time.perf_counter()
    log = (lambda line: print(line, file=sys.stderr, flush=True)) if progress else None
    for i, c in enumerate(grid):  # the finished ones, read back
        for k in range(num_folds):
            if f"{c!r}/{k}" in done:
                scores[i, k] = done[f"{c!r}/{k}"]
                if progress:
                    print(f"[choose c] c={c:g} fold {k + 1}/{num_folds}: {metric} "
                          f"{scores[i, k]:.4f} (read from {record})", file=sys.stderr,
                          flush=True)
    todo = [(i, k) for i in range(len(grid)) for k in range(num_folds)
            if f"{grid[i]!r}/{k}" not in done]
    if todo:
        with open_client(client, workers=workers, scheduler=scheduler, log=log,
                         cells=len(todo)) as dask:
            shared = [tuple(share(dask, part) for part in fold[:2]) for fold in folds]
            tasks = [(f"c={grid[i]:g}-fold{k}",
                      (_cv_cell, entry, num_topics, *shared[k], {**options, "c": grid[i]},
                       fit_kwargs, predict_kwargs, strategy)) for i, k in todo]
            where = {name: ik for (name, _), ik in zip(tasks, todo)}

            def finished(name, result):
                nonlocal metric
                i, k = where[name]
                metric, scores[i, k] = result
                done[f"{grid[i]!r}/{k}"] = float(result[1])
                if record is not None:
                    _write_json(record, {"settings": settings, "metric": metric, "scores": done})
                return (f"c={grid[i]:g} fold {k + 1}/{num_folds}: {metric} {result[1]:.4f} "
                        f"({time.perf_counter() - tic:.0f} s so far)")

            run_cells(_call, tasks, client=dask, describe=finished, log=log, label="choose c")
    best = grid[int(np.argmax(scores.mean(1)))]  # ties: the first in grid order
    return CTuning(best, metric, grid, scores, time.perf_counter() - tic)


def _call(function, *args):
    """``function(*args)``: the task of one (c, fold) cell."""
    return function(*args)


def _cv_cell(entry, num_topics, train, valid, options, fit_kwargs, predict_kwargs,
             strategy) -> tuple:
    """One (c, fold) fit where it runs: ``(metric name, validation metric)``; ``options``
    holds the c."""
    run = fit_and_predict(entry, num_topics, train, valid, options=options,
                          fit_kwargs=fit_kwargs, predict_kwargs=predict_kwargs, progress=False)
    metric = CV_METRIC[run.prediction.task.kind]
    return metric, float(run.prediction.metrics(valid.labels, strategy)[metric])


def _cv_settings(entry, num_topics, corpus, num_folds, seed, strategy, options, fit_kwargs,
                 predict_kwargs) -> dict:
    """What a (c, fold) metric depends on besides c and the fold, as plain JSON values."""
    arrays = (corpus.words, corpus.doc_offsets, np.asarray(corpus.labels))
    settings = {"model": entry.name, "num_topics": num_topics, "num_folds": num_folds,
                "seed": seed, "strategy": strategy, "options": options,
                "fit_kwargs": fit_kwargs or {}, "predict_kwargs": predict_kwargs or {},
                "corpus": corpus_fingerprint(arrays)}
    return json.loads(json.dumps(settings, default=str))


def _read_cv_record(record, settings: dict) -> tuple[dict, str | None]:
    """The finished {"c/fold": metric} of ``record`` (none if it does not exist) and their
    metric's name; a ValueError if it holds another search."""
    if record is None or not os.path.exists(record):
        return {}, None
    try:
        with open(record) as f:
            saved = json.load(f)
        saved_settings, metric, done = saved["settings"], saved["metric"], saved["scores"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{record} is not a readable record of a c search ({err}); remove "
                         "it to start the search afresh") from None
    differ = sorted(k for k in settings.keys() | saved_settings.keys()
                    if settings.get(k) != saved_settings.get(k))
    if differ:
        raise ValueError(f"{record} records a c search with other settings ({', '.join(differ)}"
                         "); remove it, or use another output folder")
    return {k: float(v) for k, v in done.items()}, metric


def _write_json(path, value) -> None:
    """Write ``value`` to ``path`` atomically (a temporary file, then a rename)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=1)
    os.replace(tmp, path)
