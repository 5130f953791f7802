"""Prediction from training snapshots and test chains (JMLR eq. 15; the averaging paper).

For every training chain c and snapshot i, a test chain samples the test documents' topics with
Phi-hat of that snapshot held fixed and no response term; its kept draw j gives scores
``S[c, i, j] = eta_{c,i} . zbar_j`` for every task and test document. Scores are label-invariant
(eta and zbar of one chain share their labelling), so they average across chains.

In the averaging paper's terms (Nguyen, Boyd-Graber and Resnik 2014, eqs 1-4): the snapshots
i are the selected training samples T_TR (burn-in B_TR and lag L_TR: ``fit(num_burnin=,
snapshot_lag=)``), the kept test draws j the selected test samples T_TE (burn-in B_TE and lag
L_TE: ``predict(num_burnin=, lag=)``). Each (chain, snapshot) pair is one "model" of the paper,
so several training chains count as several models. The four strategies are reductions of S:

* ``sf`` single final (eq. 1):     chain 0, last snapshot, last test draw: S(T_TR, T_TE);
* ``sa`` single average (eq. 2):   chain 0, last snapshot, mean over the test draws;
* ``mf`` multiple final (eq. 3):   mean over all chains and snapshots of each test chain's
  last draw;
* ``ma`` multiple average (eq. 4): mean over all chains, snapshots and test draws.

For classification, :meth:`Prediction.decision_scores` can average either the scores (as
above; the papers' prediction rule sign(omega)) or, for the logistic response, the predictive
probabilities sigmoid(S) (the Monte Carlo estimate of the posterior predictive probability).
"""

from __future__ import annotations

import math

import warnings
from dataclasses import dataclass

import numpy as np

from topiczoo.errors import (ConvergenceWarning, DataLossWarning, InputError, InputTypeError,
                             interrupts_as_keyboard_interrupt)
from topiczoo.labels import class_values
from topiczoo.metrics import accuracy
from topiczoo.models.checks import whole_number
from topiczoo.models.responses import log_sigmoid
from topiczoo.models.supervised import scores as score_documents
from topiczoo.modes import modes_words, separated_modes

STRATEGIES = ("sf", "sa", "mf", "ma")

#: What :meth:`Prediction.decision_scores` may average.
AVERAGES = ("scores", "probabilities")


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown averaging strategy {strategy!r}; choose from {STRATEGIES}")


def _select(values: np.ndarray, strategy: str) -> np.ndarray:
    """The samples a strategy averages, stacked on a leading axis: [N, T, D]."""
    _check_strategy(strategy)
    if values.ndim != 5:
        raise ValueError(f"scores must be [C, I, J, T, D] (chain, snapshot, test draw, task, "
                         f"document), got shape {values.shape}")
    if strategy == "sf":
        return values[0, -1, -1][None]
    if strategy == "sa":
        return values[0, -1]
    # the number of samples spelt out: with no documents, -1 would be ambiguous
    if strategy == "mf":
        return values[:, :, -1].reshape((values.shape[0] * values.shape[1],) + values.shape[3:])
    return values.reshape((math.prod(values.shape[:3]),) + values.shape[3:])


def reduce_scores(scores: np.ndarray, strategy: str) -> np.ndarray:
    """Average scores [C, I, J, T, D] by a strategy of :data:`STRATEGIES` -> [T, D].

    sf: ``S[0, -1, -1]``; sa: ``S[0, -1].mean(J)``; mf: ``S[:, :, -1].mean(C, I)``;
    ma: ``S.mean(C, I, J)`` (see the module docstring).
    """
    return _select(np.asarray(scores), strategy).mean(0)


@dataclass
class Prediction:
    """Scores of test documents, the same type for every model.

    scores: float32 [C, I, J, T, D] (chain, training snapshot, test draw, task, document);
      a one-vs-all prediction has one task per class, a two-step baseline one snapshot and one
      test draw per chain.
    task: the :class:`~topiczoo.models.tasks.Task` (decision rule and metrics).
    response: the model's response (probabilities for the logistic), or None.
    zbar: float32 [C, I, J, D, K] test topic proportions (kept only when asked for).
    label_names: what the class ids stand for (the corpus's ``label_names``; for multi-label
      tasks the columns), or None: then :meth:`labels` gives class ids.
    """

    scores: np.ndarray
    task: object
    response: object = None
    zbar: np.ndarray | None = None
    label_names: tuple | None = None

    def score(self, strategy: str = "ma") -> np.ndarray:
        """Averaged scores omega [T, D]."""
        return reduce_scores(self.scores, strategy)

    def _has_probabilities(self) -> bool:
        return hasattr(self.response, "probability")

    def _check_average(self, average: str) -> None:
        if average not in AVERAGES:
            raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
        if average == "probabilities" and not self._has_probabilities():
            raise TypeError("this model's response gives no probabilities: only "
                            "average='scores'")

    def decision_scores(self, strategy: str = "ma", average: str = "scores") -> np.ndarray:
        """Decision scores [T, D] of a strategy: label 1 where > 0.

        average:
          ``"scores"`` (default, any response): the strategy's mean of the scores S(c, i, j),
          as :meth:`score`;
          ``"probabilities"`` (logistic response only): the log-odds of the strategy's mean
          of the probabilities sigmoid(S(c, i, j)), i.e. logit(mean sigmoid(S)), computed
          without overflow. Same sign convention, so ``> 0`` decides label 1; for a single
          sample (sf) it equals the score.
        """
        self._check_average(average)
        if average == "scores":
            return self.score(strategy)
        samples = _select(np.asarray(self.scores, np.float64), strategy)
        log_p1 = np.logaddexp.reduce(log_sigmoid(samples), axis=0)  # log sum of p(y=1)
        log_p0 = np.logaddexp.reduce(log_sigmoid(-samples), axis=0)  # log sum of p(y=0)
        return log_p1 - log_p0

    def class_ids(self, strategy: str = "ma", average: str = "scores") -> np.ndarray:
        """Predictions as the corpus stores labels (``Task.decide``): class ids int64 [D]
        (binary, multi-class), 0/1 indicators int64 [D, L] (multi-label), predicted responses
        float [D] (regression, response units)."""
        return self.task.decide(self.decision_scores(strategy, average))

    def _classes(self) -> np.ndarray | None:
        """What the class ids stand for ([L]), or None where they stand for themselves."""
        if self.label_names is None or self.task.kind not in ("binary", "multiclass"):
            return None
        classes = class_values(self.label_names, 2 if self.task.kind == "binary"
                               else self.task.num_tasks)
        return None if classes.dtype.kind == "i" else classes

    def labels(self, strategy: str = "ma", average: str = "scores") -> np.ndarray:
        """Predictions as the labels were given: for named classes (labels given as class
        names, or ``label_names``) the class names, str [D]; otherwise as
        :meth:`class_ids`: class ids [D], 0/1 indicators [D, L] (multi-label, columns in
        the order of ``label_names``), predicted responses [D] (regression)."""
        ids = self.class_ids(strategy, average)
        classes = self._classes()
        return ids if classes is None else classes[ids]

    def _truth_ids(self, truth) -> np.ndarray:
        """``truth`` as class ids: class names (str) of named classes are encoded."""
        classes = self._classes()
        if isinstance(truth, (str, bytes)):
            raise InputTypeError("truth must be the test labels, one per document, not a single "
                                 "string")
        truth = np.asarray(truth)
        if classes is None or truth.dtype.kind not in "OU":
            return truth
        index = {name: i for i, name in enumerate(classes.tolist())}
        flat = truth.ravel().tolist()
        unknown = [x for x in flat if x not in index]
        if unknown:
            raise InputError(f"truth holds {unknown[0]!r}, which is not a class of the fit "
                             f"({', '.join(map(repr, index))})")
        return np.array([index[x] for x in flat], np.int64).reshape(truth.shape)

    def probabilities(self, strategy: str = "ma", average: str = "scores") -> np.ndarray:
        """p(y = 1) (logistic response only), [D] or [D, L]: sigmoid of the averaged score
        (``average="scores"``) or the average of the per-sample probabilities
        (``"probabilities"``)."""
        if not self._has_probabilities():
            raise TypeError("this model's response gives no probabilities")
        self._check_average(average)
        if average == "scores":
            out = np.asarray(self.response.probability(self.score(strategy)))
        else:
            samples = _select(np.asarray(self.scores, np.float64), strategy)
            out = np.exp(log_sigmoid(samples)).mean(0)
        return out[0] if out.shape[0] == 1 else out.T

    def metrics(self, truth, strategy: str = "ma", average: str = "scores") -> dict:
        """The task's metrics (``Task.metrics``) of the predictions against ``truth``: the
        test corpus's labels (class ids, same orientation) or, for named classes, the class
        names; accuracy; precision / recall / F1; predictive R^2 and MSE."""
        return self.task.metrics(self._truth_ids(truth), self.class_ids(strategy, average))

    def accuracy(self, truth, strategy: str = "ma", average: str = "scores") -> float:
        """Fraction of test documents (multi-label: document-label pairs) predicted right;
        ``truth`` as for :meth:`metrics`."""
        if self.task.kind == "regression":
            raise TypeError("a regression has no accuracy; use metrics() (predictive R^2, MSE)")
        return accuracy(self.task.check_truth(self._truth_ids(truth)),
                        self.class_ids(strategy, average))


def warn_empty_test_documents(corpus, stacklevel: int = 2) -> None:
    """A :class:`DataLossWarning` if test documents have no tokens (none of their words is in
    the training vocabulary): their proportions and scores are the prior's. ``stacklevel``
    counts from the caller (1), as ``warnings.warn``'s does from the function that calls it."""
    empty = np.flatnonzero(np.diff(np.asarray(corpus.doc_offsets)) == 0)
    if len(empty):
        warnings.warn(f"{len(empty)} of {corpus.num_docs} test documents have no tokens (e.g. "
                      f"document {empty[0]}): none of their words is in the training "
                      "vocabulary, so their scores are the prior's, the same for all of them",
                      DataLossWarning, stacklevel=stacklevel + 1)


def chosen_chains(result, chains=None, *, stacklevel: int = 2) -> list:
    """The training chains a prediction averages over: ``chains`` None (default) all of them,
    with a :class:`~topiczoo.errors.ConvergenceWarning` when their ``log_joint`` draws after
    burn-in sit in separated modes (``topiczoo.modes``: naming the best chain and
    its group); ``"best"`` the chains of the best mode (those whose log joint is not separated
    from the highest one's); or a list of chain indices (in the order given, no repeats).
    ``ValueError`` for an index out of range or a repeat; ``"best"`` needs the ``log_joint``
    monitor and at least 2 draws after burn-in."""
    everything = list(range(result.num_chains))
    log_joint = result.posterior_draws().get("log_joint")
    can_tell = log_joint is not None and log_joint.shape[1] >= 2 and np.isfinite(log_joint).all()
    if isinstance(chains, str):
        if chains != "best":
            raise ValueError(f"chains must be None, 'best' or a list of chain indices, got "
                             f"{chains!r}")  # a string is no list of indices
        if not can_tell:
            raise ValueError("chains='best' needs the log_joint monitor with at least 2 draws "
                             "after burn-in")
        return sorted(separated_modes(log_joint).groups[0])
    if chains is None:
        if result.num_chains > 1 and can_tell:
            modes = separated_modes(log_joint)
            if modes.separated:
                warnings.warn(f"{modes_words(modes)} (or chains='best')", ConvergenceWarning,
                              stacklevel=stacklevel + 1)
        return everything
    message = (f"chains must be None, 'best' or distinct indices of the fit's "
               f"{result.num_chains} chains (0..{result.num_chains - 1}), got {chains!r}")
    try:
        chosen = [whole_number("chain", c, 0) for c in np.ravel(np.asarray(chains, dtype=object))]
    except ValueError:
        raise ValueError(message) from None
    if not chosen or len(set(chosen)) != len(chosen) or max(chosen) >= result.num_chains:
        raise ValueError(message)
    return chosen


def _test_chains(result, corpus, *, num_burnin, num_draws, lag, seed, chains=None):
    """zbar draws [J, D, K_ci] of ``corpus``'s documents for every chain c (of ``chains``,
    default all) and snapshot i, in the order (c, i); each from a test chain with that
    snapshot's topics fixed."""
    if tuple(corpus.vocabulary) != tuple(result.vocabulary):
        raise ValueError("the test corpus must be encoded in the training vocabulary; use "
                         "corpus.restrict_vocabulary(train.vocabulary)")
    if not result.snapshots:
        raise ValueError("the fit kept no snapshots (num_snapshots=0 or no post-burn-in draws)")
    num_draws, lag = whole_number("num_draws", num_draws, 1), whole_number("lag", lag, 1)
    num_burnin, seed = whole_number("num_burnin", num_burnin, 0), whole_number("seed", seed, 0)
    warn_empty_test_documents(corpus, stacklevel=3)  # this generator, predict, its caller
    for c in (range(result.num_chains) if chains is None else chains):
        for i, snap in enumerate(result.snapshots):
            host_seed = int(np.random.SeedSequence([seed, result.seed, c, i]).generate_state(1)[0])
            with interrupts_as_keyboard_interrupt():
                zbar = result.model.predictor().test_proportions(snap.chain(c), corpus, num_burnin=num_burnin,
                                                     num_draws=num_draws, lag=lag, seed=host_seed)
            yield c, i, snap.chain(c), zbar


def held_out_proportions(result, corpus, *, num_burnin: int = 20, num_draws: int = 10,
                         lag: int = 1, seed: int = 0) -> np.ndarray:
    """zbar draws of ``corpus``'s documents for every chain and snapshot of a fit.

    The corpus must use the fit's vocabulary (``Corpus.restrict_vocabulary``); documents with
    no tokens get the prior's proportions (and a warning).
    Returns float32 [C, I, J, D, K] (K the largest over snapshots, zeros where a snapshot has
    fewer topics). For the HDPs K is the snapshots' topic capacity (unoccupied slots get 0),
    and a row sums to less than 1 when some of the document's tokens went to topics born in
    the test chain: those are no training topic, so they have no column (they count in the
    document's length only, as in the scores).
    """
    zbar = [z for *_, z in _test_chains(result, corpus, num_burnin=num_burnin,
                                        num_draws=num_draws, lag=lag, seed=seed)]
    return _stack_proportions(zbar, result.num_chains, len(result.snapshots))


def _stack_proportions(zbar: list, num_chains: int, num_snapshots: int) -> np.ndarray:
    """[C, I, J, D, K] from the (chain, snapshot) list of [J, D, K_ci] draws. A family whose
    number of topics differs between snapshots (the sHDP's grows) is padded with zeros to the
    largest K: the topics a snapshot does not have get no share."""
    width = max(z.shape[-1] for z in zbar)
    padded = [np.pad(z, [(0, 0)] * (z.ndim - 1) + [(0, width - z.shape[-1])]) for z in zbar]
    return np.asarray(padded, np.float32).reshape((num_chains, num_snapshots) + padded[0].shape)


def predict(result, corpus, *, num_burnin: int = 20, num_draws: int = 10, lag: int = 1,
            seed: int = 0, keep_zbar: bool = False, chains=None) -> Prediction:
    """Scores for the documents of ``corpus`` from a supervised fit (see module docstring).

    Args:
      result: a :class:`topiczoo.fit.FitResult` of a supervised model.
      corpus: test corpus in the training vocabulary.
      num_burnin, num_draws, lag: test chains' burn-in, kept draws and spacing.
      seed: seeds the test chains (with the fit's seed, chain and snapshot index).
      keep_zbar: keep the test topic proportions in the prediction ([C, I, J, D, K]).
      chains: the training chains to average over (:func:`chosen_chains`): None (default)
        all, with a ``ConvergenceWarning`` when their log joint densities sit in separated
        modes; ``"best"`` the chains of the best mode; or a list of chain indices. The
        prediction's chain axis holds the chosen chains in that order (its "chain 0", which
        ``sf`` and ``sa`` read, is the first of them). Each chain's test chains are seeded as
        in a prediction from all chains, so a chain's scores do not depend on the others.
    Returns a :class:`Prediction`; ``prediction.metrics(test.labels)`` scores it. Its
    ``label_names`` (what :meth:`Prediction.labels` gives back for named classes) are the
    fit's (a ``label_names`` attribute of ``result``) or else the test corpus's when they fit
    the task (as many classes or columns).
    """
    if result.task is None:
        raise TypeError("an unsupervised model has no scores; use held_out_proportions")
    chains = chosen_chains(result, chains)
    scores, kept = [], []
    for _, _, snapshot, zbar in _test_chains(result, corpus, num_burnin=num_burnin,
                                             num_draws=num_draws, lag=lag, seed=seed,
                                             chains=chains):
        scores.append(score_documents(snapshot, zbar))
        if keep_zbar:
            kept.append(zbar)
    shape = (len(chains), len(result.snapshots))
    scores = np.asarray(scores, np.float32).reshape(shape + scores[0].shape)
    zbar = _stack_proportions(kept, *shape) if keep_zbar else None
    return Prediction(scores, result.task, result.model.response, zbar,
                      _label_names(result, corpus))


def _label_names(result, corpus) -> tuple | None:
    """What the fit's class ids stand for: its own record when it has one, else the test
    corpus's ``label_names`` when they name as many classes (or columns) as the task has."""
    names = getattr(result, "label_names", None)
    if names is not None:
        return names
    names, task = corpus.label_names, result.task
    width = 2 if task.kind == "binary" else task.num_tasks
    if names is None or task.kind == "regression" or len(names) != width:
        return None
    return names
