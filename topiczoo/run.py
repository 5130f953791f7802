"""Fit a registry entry and score a test corpus, whatever its driver (``models.registry``)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from topiczoo.baseline import SECOND_STEPS
from topiczoo.fit import FitResult, fit
from topiczoo.ova import one_vs_all
from topiczoo.predict import Prediction, predict


@dataclass
class Run:
    """What :func:`fit_and_predict` produced.

    result: the :class:`FitResult` (None for one-vs-all, which keeps no fit); prediction: the
    test :class:`Prediction` (None for unsupervised models); train_seconds, predict_seconds:
    wall times (a two-step baseline's training includes its second step's fits: the linear
    model on the training topic proportions); token_iterations_per_second: training
    throughput over all chains and fits; tuning: with ``options={"c": "cv"}``, the
    :class:`~topiczoo.tuning.CTuning` of the search that chose c (its time is not in
    train_seconds), else None.
    """

    result: FitResult | None
    prediction: Prediction | None
    train_seconds: float
    predict_seconds: float
    token_iterations_per_second: float
    tuning: object = None


def fit_and_predict(entry, num_topics: int, train, test, *, options=None, fit_kwargs=None,
                    predict_kwargs=None, progress: bool = True, checkpoint=None,
                    tuning=None) -> Run:
    """Build ``entry``'s model (``options`` as its keyword options), fit it on ``train`` and
    score ``test`` by the entry's driver. ``fit_kwargs`` go to :func:`topiczoo.fit.fit`,
    ``predict_kwargs`` to :func:`topiczoo.predict.predict`; ``checkpoint``: the fit's
    checkpoint file (one-vs-all: one per class beside it, :func:`topiczoo.ova.one_vs_all`).
    Numpy scalars among the settings (a K from ``np.arange``) are taken as the Python numbers
    they hold, so that a message about one shows ``0``, not ``np.int64(0)``.

    ``options={"c": "cv"}`` chooses c first, as the command line's ``--c cv`` and the
    estimators' ``c="cv"`` do: :func:`topiczoo.tuning.choose_c` on ``train`` (its fits with
    these ``fit_kwargs`` and ``predict_kwargs``, seeded by ``fit_kwargs["seed"]``), then the
    fit with the c chosen; ``tuning`` (a dict) passes more settings to ``choose_c``
    (``grid``, ``num_folds``, ``strategy``, ``record``, ``client``, ``workers``, ...), and
    ``Run.tuning`` holds what it found."""
    num_topics = _plain(num_topics)
    options, fit_kwargs, predict_kwargs = (
        {k: _plain(v) for k, v in (given or {}).items()}
        for given in (options, fit_kwargs, predict_kwargs))
    found = None
    if options.get("c") == "cv":
        # a local import: topiczoo.tuning fits through this function
        from topiczoo.tuning import choose_c

        settings = {"seed": fit_kwargs.get("seed", 0), "progress": progress, **(tuning or {})}
        found = choose_c(entry, num_topics, train, options=options, fit_kwargs=fit_kwargs,
                         predict_kwargs=predict_kwargs, **settings)
        options = {**options, "c": found.best_c}
    elif tuning is not None:
        raise ValueError("tuning= holds the settings of choosing c; give options={'c': 'cv'}")
    run = _fit_and_predict(entry, num_topics, train, test, options, fit_kwargs,
                           predict_kwargs, progress, checkpoint)
    run.tuning = found
    return run


def _fit_and_predict(entry, num_topics, train, test, options, fit_kwargs, predict_kwargs,
                     progress, checkpoint) -> Run:
    """:func:`fit_and_predict` with c given."""
    model = entry.build(num_topics, corpus=train, **options)
    if entry.driver == "one-vs-all":
        tic = time.perf_counter()
        prediction, timing = one_vs_all(lambda: entry.build(num_topics, **options), train, test,
                                        predict_kwargs=predict_kwargs, progress=progress,
                                        checkpoint=checkpoint, **fit_kwargs)
        total = time.perf_counter() - tic
        return Run(None, prediction, timing["train_seconds"], total - timing["train_seconds"],
                   timing["token_iterations_per_second"])
    result = fit(model, train, progress=progress, checkpoint=checkpoint, **fit_kwargs)
    tic = time.perf_counter()
    prediction, timing = None, {}
    if entry.driver == "two-step":
        prediction = SECOND_STEPS[entry.second_step](result, train, test, timing=timing,
                                                     **predict_kwargs)
    elif result.task is not None:
        prediction = predict(result, test, **predict_kwargs)
    second_step = timing.get("fit_seconds", 0.0)
    return Run(result, prediction, result.train_seconds + second_step,
               time.perf_counter() - tic - second_step, result.token_iterations_per_second)


def _plain(value):
    """A numpy scalar as the Python value it holds (``.item()``); anything else unchanged."""
    return value.item() if isinstance(value, np.generic) else value
