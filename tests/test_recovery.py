"""Recovery: corpora simulated from the models' own numpyro declarations are fitted back.

Topics and eta are fixed (``numpyro.handlers.condition``), documents, topics of tokens and
labels drawn from the declaration. The fitted topics are matched to the true ones (Hungarian
assignment on the topic-word distributions: labels are arbitrary), then eta is compared.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from numpyro import handlers
from scipy.optimize import linear_sum_assignment

from topiczoo.corpus import Corpus
from topiczoo.fit import fit
from topiczoo.models import gslda, medlda, medlda_regression, slda_gaussian

pytestmark = pytest.mark.slow  # statistical: fits on simulated corpora

K, V, D, N_D = 3, 24, 240, 40
ETA_TRUE = np.array([[3.0, -3.0, 0.0]], np.float32)


def _true_topics():
    phi = np.full((K, V), 0.02 / V)
    for k in range(K):
        phi[k, k * 8:(k + 1) * 8] = 1.0  # each topic owns 8 words
    return phi / phi.sum(1, keepdims=True)


def _simulate(seed=0, model=None, fixed=None):
    """A corpus from a generative declaration (default gSLDA, c = 1) with fixed phi and eta."""
    model = model or gslda(K, c=1.0, alpha=1.0, beta=0.1)
    doc_ids = jnp.repeat(jnp.arange(D), N_D)
    conditioned = handlers.condition(model.declaration,
                                     {"phi": jnp.asarray(_true_topics()), "eta": ETA_TRUE,
                                      **(fixed or {})})
    trace = handlers.trace(handlers.seed(conditioned, seed)).get_trace(
        doc_ids=doc_ids, num_docs=D, num_topics=K, vocab_size=V,
        alpha=model.alpha_per_topic, beta=model.beta, nu2=1.0)
    words = np.asarray(trace["w"]["value"], np.int32)
    labels = np.asarray(trace["y"]["value"])[0]
    corpus = Corpus(words, np.arange(0, D * N_D + 1, N_D), tuple(f"w{i}" for i in range(V)),
                    labels=labels)
    return corpus


def _matched_eta(result):
    """Per chain: eta reordered to the true topics' order, via the last snapshot's topics."""
    phi_hat = result.model.predictor().phi_hat(result.snapshots[-1].arrays)  # [C, V, K]
    out = []
    for c in range(result.num_chains):
        cost = -np.log(phi_hat[c].T + 1e-12) @ _true_topics().T  # [K_fit, K_true]
        rows, cols = linear_sum_assignment(cost)
        order = rows[np.argsort(cols)]
        out.append(result.posterior_draws()["eta"][c][:, 0, order].mean(0))
    return np.asarray(out)


@pytest.fixture(scope="module")
def corpus():
    return _simulate()


@pytest.mark.parametrize("model", [gslda(K, c=1.0, alpha=1.0, beta=0.1),
                                   medlda(K, c=1.0, ell=1.0, alpha=1.0, beta=0.1)],
                         ids=["gslda", "medlda"])
def test_eta_direction_is_recovered(corpus, model):
    result = fit(model, corpus, num_chains=2, num_iterations=120, num_snapshots=1, seed=0,
                 progress=False)
    eta = _matched_eta(result)
    truth = ETA_TRUE[0] - ETA_TRUE[0].mean()
    for chain_eta in eta:
        centred = chain_eta - chain_eta.mean()  # zbar sums to 1: only contrasts are identified
        cosine = centred @ truth / np.linalg.norm(centred) / np.linalg.norm(truth)
        assert cosine > 0.9, (chain_eta, cosine)


def test_gslda_eta_scale_is_recovered(corpus):
    """The generative c = 1 model recovers the contrast eta_0 - eta_1 itself (truth 6)."""
    result = fit(gslda(K, c=1.0, alpha=1.0, beta=0.1), corpus, num_chains=2,
                 num_iterations=120, num_snapshots=1, seed=1, progress=False)
    eta = _matched_eta(result)
    contrast = eta[:, 0] - eta[:, 1]
    assert np.all(np.abs(contrast - 6.0) < 2.5), contrast


def test_gaussian_slda_recovers_eta_and_noise_variance():
    """Ratings y ~ N(eta . zbar, s2 = 0.25) from the Gaussian sLDA declaration."""
    truth_model = slda_gaussian(K, learn_s2=True, alpha=1.0, beta=0.1)
    corpus = _simulate(2, truth_model, {"s2": jnp.full((1, 1), 0.25)})
    result = fit(slda_gaussian(K, learn_s2=True, alpha=1.0, beta=0.1), corpus, num_chains=2,
                 num_iterations=120, num_snapshots=1, seed=0, progress=False)
    eta = _matched_eta(result)
    assert np.all(np.abs(eta - ETA_TRUE[0]) < 0.6), eta
    s2 = result.posterior_draws()["augmentation_mean"][..., 0].mean()
    assert 0.18 < s2 < 0.33, s2


def test_medlda_regression_recovers_eta():
    corpus = _simulate(3, slda_gaussian(K, learn_s2=False, s2=0.05, alpha=1.0, beta=0.1))
    result = fit(medlda_regression(K, c=10.0, eps=0.05, alpha=1.0, beta=0.1), corpus,
                 num_chains=2, num_iterations=120, num_snapshots=1, seed=0, progress=False)
    eta = _matched_eta(result)
    assert np.all(np.abs(eta - ETA_TRUE[0]) < 0.6), eta
