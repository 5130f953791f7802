"""Prediction from training snapshots and test chains (JMLR eq. 15; the averaging paper).

For every training chain c and snapshot i, a test chain samples the test documents' topics with
Phi-hat of that snapshot held fixed and no response term; its kept draw j gives scores
``S[c, i, j] = eta_{c,i} . zbar_j`` for every task and test document. Scores are label-invariant
(eta and zbar of one chain share their labelling), so they average across chains. The four
strategies of the averaging paper are reductions of S:

* ``sf`` single final:     the last snapshot's last test draw of chain 0;
* ``sa`` single average:   chain 0, last snapshot, mean over test draws;
* ``mf`` multiple final:   mean over chains and snapshots of each test chain's last draw;
* ``ma`` multiple average: mean over chains, snapshots and test draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topiczoo.kernels.topics import sample_test_topics

STRATEGIES = ("sf", "sa", "mf", "ma")


def reduce_scores(scores: np.ndarray, strategy: str) -> np.ndarray:
    """Average scores [C, I, J, T, D] by a strategy of :data:`STRATEGIES` -> [T, D]."""
    if strategy == "sf":
        return scores[0, -1, -1]
    if strategy == "sa":
        return scores[0, -1].mean(0)
    if strategy == "mf":
        return scores[:, :, -1].mean((0, 1))
    if strategy == "ma":
        return scores.mean((0, 1, 2))
    raise ValueError(f"unknown averaging strategy {strategy!r}; choose from {STRATEGIES}")


@dataclass
class Prediction:
    """Scores of test documents.

    scores: float32 [C, I, J, T, D] (chain, training snapshot, test draw, task, document);
    zbar: float32 [C, I, J, D, K] test topic proportions (kept only when asked for).
    """

    scores: np.ndarray
    response: object
    zbar: np.ndarray | None = None

    def score(self, strategy: str = "ma") -> np.ndarray:
        """Averaged scores omega [T, D]."""
        return reduce_scores(self.scores, strategy)

    def labels(self, strategy: str = "ma") -> np.ndarray:
        """Predicted labels [D] (single task) or [T, D], in the corpus' coding (0/1)."""
        out = np.asarray(self.response.decide(self.score(strategy)))
        return out[0] if out.shape[0] == 1 else out

    def probabilities(self, strategy: str = "ma") -> np.ndarray:
        """p(y = 1) from the averaged score (logistic response only)."""
        if not hasattr(self.response, "probability"):
            raise TypeError(f"the {self.response.name} response gives no probabilities")
        out = np.asarray(self.response.probability(self.score(strategy)))
        return out[0] if out.shape[0] == 1 else out

    def accuracy(self, labels, strategy: str = "ma") -> float:
        """Fraction of test documents whose predicted label equals ``labels`` (0/1)."""
        return float(np.mean(self.labels(strategy) == np.asarray(labels)))


def held_out_proportions(result, corpus, *, num_burnin: int = 20, num_draws: int = 10,
                           lag: int = 1, seed: int = 0) -> np.ndarray:
    """zbar draws of ``corpus``'s documents for every chain and snapshot of a fit.

    The corpus must use the fit's vocabulary (``Corpus.restrict_vocabulary``).
    Returns float32 [C, I, J, D, K].
    """
    if tuple(corpus.vocabulary) != tuple(result.vocabulary):
        raise ValueError("the test corpus must be encoded in the training vocabulary; use "
                         "corpus.restrict_vocabulary(train.vocabulary)")
    if not result.snapshots:
        raise ValueError("the fit kept no snapshots (num_snapshots=0 or no post-burn-in draws)")
    beta = result.model.beta
    alpha = result.model.alpha_per_topic
    out = []
    for c in range(result.num_chains):
        per_chain = []
        for i, snap in enumerate(result.snapshots):
            phi = snap.phi_hat(beta)[c]
            host_seed = int(np.random.SeedSequence([seed, result.seed, c, i]).generate_state(1)[0])
            per_chain.append(sample_test_topics(corpus.words, corpus.doc_offsets, phi, alpha,
                                                num_burnin=num_burnin, num_draws=num_draws,
                                                lag=lag, seed=host_seed))
        out.append(per_chain)
    return np.asarray(out, np.float32)


def predict(result, corpus, *, num_burnin: int = 20, num_draws: int = 10, lag: int = 1,
            seed: int = 0, keep_zbar: bool = False) -> Prediction:
    """Scores for the documents of ``corpus`` from a supervised fit (see module docstring).

    Args:
      result: a :class:`topiczoo.fit.FitResult` of a supervised model.
      corpus: test corpus in the training vocabulary.
      num_burnin, num_draws, lag: test chains' burn-in, kept draws and spacing.
      seed: seeds the test chains (with the fit's seed, chain and snapshot index).
    """
    if result.model.response is None:
        raise TypeError("an unsupervised model has no scores; use held_out_proportions")
    zbar = held_out_proportions(result, corpus, num_burnin=num_burnin, num_draws=num_draws,
                                  lag=lag, seed=seed)
    eta = np.stack([s.eta for s in result.snapshots], axis=1)  # [C, I, T, K]
    scores = np.einsum("citk,cijdk->cijtd", eta, zbar).astype(np.float32)
    return Prediction(scores, result.model.response, zbar if keep_zbar else None)
