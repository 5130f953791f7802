"""What a model family provides: the interface ``fit``, ``predict``, the command line and the
diagnostics use, and nothing else.

A model is a frozen (hashable) object; its samplers are :class:`~topiczoo.kernels.gibbs.Sampler`
tuples of pure functions (see ``kernels/gibbs.py``). ``models/parametric.py`` (LDA and the
supervised models) and ``models/unigram_mixture.py`` (the worked example of a new family)
implement it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from topiczoo.kernels.gibbs import CorpusData, Sampler
from topiczoo.models.tasks import Task


class ModelFamily(Protocol):
    """The model interface (a ``typing.Protocol``: implement it, no need to inherit).

    Attributes:
      name: the model's short name (also its registry name).
      num_topics: K (for a nonparametric family, the initial number of topics).
      response: the Gaussian-form response (``models.responses``), or None if unsupervised.
      samplers: the names of the samplers the family offers; the first is the default.
    """

    name: str
    num_topics: int
    response: object
    samplers: tuple

    def describe(self) -> dict:
        """Flat JSON-able facts: ``model`` (name), ``num_topics`` and every hyperparameter
        (checkpoints compare them; the ArviZ tree stores them)."""

    def task_of(self, corpus) -> Task | None:
        """The :class:`Task` of ``corpus``'s labels for this model, None if unsupervised;
        ``ValueError`` naming the problem when the labels do not fit."""

    def corpus_data(self, corpus, task: Task | None = None) -> CorpusData:
        """The arrays the sampler reads (responses coded [T, D] by ``task``)."""

    def declaration_for(self, vocab_size: int):
        """The numpyro declaration as a function of a :class:`CorpusData`."""

    def sampler(self, name: str, vocab_size: int, task: Task | None = None) -> Sampler:
        """The named sampler; build it through a cache so equal models share one compiled
        step. Its ``snapshot`` gives the globals :meth:`test_proportions` and :meth:`scores`
        read; its monitors named in ``label_invariant`` are what convergence is judged on."""

    def phi_hat(self, snapshot: dict) -> np.ndarray:
        """Posterior-mean topic-word distributions [..., V, K] of one chain's ``snapshot``
        (``Snapshot.chain(c)``), columns summing to 1 (0 for a free slot of a nonparametric
        family)."""

    def train_proportions(self, state) -> np.ndarray:
        """Topic proportions [D, K] of the training documents in one chain's state."""

    def test_proportions(self, snapshot: dict, corpus, *, num_burnin: int, num_draws: int,
                         lag: int, seed: int) -> np.ndarray:
        """Draws [J, D, K] of held-out documents' topic proportions given one chain's
        ``snapshot`` (``Snapshot.chain(c)``), without the response; ``seed`` seeds the host."""

    def scores(self, snapshot: dict, zbar: np.ndarray) -> np.ndarray:
        """Scores [J, T, D] of held-out topic proportions zbar [J, D, K] (supervised only)."""
