"""What a model family provides: the interface ``fit``, ``predict``, the command line and the
diagnostics use, and nothing else.

A model is a frozen (hashable) object; its samplers are :class:`~topiczoo.kernels.gibbs.Sampler`
tuples of pure functions (see ``kernels/gibbs.py``); how held-out documents are scored is its
:class:`Predictor`. The supervised part (the labels' task, the arrays a sampler reads, the eta and
augmentation blocks, the response's monitors and scores) is the same for every family and lives
in ``models.supervised``: a new family writes its declaration, its state and its topic blocks.
``models/parametric.py`` (LDA and the supervised models), ``models/shdp.py`` (the supervised
HDP) and ``models/unigram_mixture.py`` (the worked example of a new family) implement it.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Protocol

from topiczoo.kernels.gibbs import Sampler


class Predictor(NamedTuple):
    """How a family's training snapshots score held-out documents (pure functions).

    phi_hat: ``(snapshot) -> float64 [..., V, K]`` posterior-mean topic-word distributions of
      one chain's snapshot (``Snapshot.chain(c)``, or the whole ``Snapshot.arrays`` with a
      chain axis), columns summing to 1 (0 for a free slot of a nonparametric family).
    train_proportions: ``(state) -> float32 [D, K]`` topic proportions of the training
      documents in one chain's state.
    test_proportions: ``(snapshot, corpus, *, num_burnin, num_draws, lag, seed) -> float32
      [J, D, K]`` draws of held-out documents' topic proportions given one chain's snapshot,
      without the response; ``seed`` seeds the host. Their scores are
      ``models.supervised.scores``.
    """

    phi_hat: Callable
    train_proportions: Callable
    test_proportions: Callable


class ModelFamily(Protocol):
    """The model interface (a ``typing.Protocol``: implement it, no need to inherit).

    Attributes:
      name: the model's short name (also its registry name).
      num_topics: K (for a nonparametric family, the initial number of topics).
      response: the Gaussian-form response (``models.responses``), or None if unsupervised.
      tasks: the label kinds the model accepts (``models.tasks.KINDS``), empty if
        unsupervised; a supervised family may also have ``num_classes`` (None: the corpus's)
        and ``center`` (centre real responses), which ``models.supervised.task_of`` reads.
      samplers: the names of the samplers the family offers; the first is the default.
    """

    name: str
    num_topics: int
    response: object
    tasks: tuple
    samplers: tuple

    def describe(self) -> dict:
        """Flat JSON-able facts: ``model`` (name), ``num_topics`` and every hyperparameter
        (checkpoints compare them; the ArviZ tree stores them)."""

    def declaration_for(self, vocab_size: int):
        """The numpyro declaration as a function of a :class:`CorpusData`."""

    def sampler(self, name: str, vocab_size: int, task=None, *,
                num_threads: int | None = None) -> Sampler:
        """The named sampler; build it through a cache so equal models share one compiled
        step. Its ``snapshot`` gives the globals the :class:`Predictor` reads; its monitors
        named in ``label_invariant`` are what convergence is judged on. ``num_threads``: the
        threads its host steps may use (None: the cores this process may use); the draws must
        not depend on it."""

    def predictor(self) -> Predictor:
        """How held-out documents are scored from this model's snapshots."""
