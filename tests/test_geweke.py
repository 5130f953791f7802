"""Geweke's joint-distribution test for the generative models (LDA; logistic sLDA at c = 1).

Marginal-conditional simulator: independent draws of (Z, W, eta, y) from the model's numpyro
declaration. Successive-conditional simulator: from one such draw, alternate the Gibbs
kernel's cycle (Z, eta, augmentation | W, y) with fresh draws of the data given the latents
(W | Z with Phi drawn from its prior and discarded, which is exact for p(W | Z); y | Z, eta from
the Bernoulli likelihood, or from N(omega, s2) with the chain's current s2 for Gaussian sLDA;
the Polya-Gamma variable is independent of y given omega, so it stays). Both simulators sample the same joint distribution iff the kernel is right: the means
of test functions must agree within the Monte Carlo error (batch means for the chain).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer import Predictive

from topiczoo.kernels.gibbs import ChainState, CorpusData, GibbsKernel
from topiczoo.models.parametric import ParametricState
from topiczoo.models.responses import Logistic
from topiczoo.kernels.topics import counts_from_assignments, topic_proportions
from topiczoo.models import gslda, lda, slda_gaussian

pytestmark = pytest.mark.slow  # statistical: long chains

DOC_LENGTHS = [5, 4, 6, 5]
VOCAB = 5
NUM_PRIOR = 20_000
NUM_STEPS = 20_000
Z_LIMIT = 4.0  # |z| of every test function; about 1e-4 two-sided per function by chance


def _structure():
    doc_ids = np.repeat(np.arange(len(DOC_LENGTHS)), DOC_LENGTHS).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(DOC_LENGTHS)]).astype(np.int32)
    return jnp.asarray(doc_ids), jnp.asarray(offsets)


def _declaration_args(model):
    doc_ids, _ = _structure()
    args = dict(doc_ids=doc_ids, num_docs=len(DOC_LENGTHS), num_topics=model.num_topics,
                vocab_size=VOCAB, alpha=model.alpha_per_topic, beta=model.beta)
    if model.response is not None:
        args["nu2"] = model.nu2
    return args


def _draw_y(response, key, omega, augmentation):
    """y | Z, eta (and s2): the response's own likelihood."""
    if response.name == "gaussian":
        return omega + jnp.sqrt(augmentation) * jax.random.normal(key, omega.shape)
    return jax.random.bernoulli(key, jax.nn.sigmoid(omega)).astype(jnp.float32)


def _test_functions(z, words, zbar, eta=None, y=None, augmentation=None):
    """Scalar summaries of the joint state; each row of the inputs is one draw."""
    num_tokens = z.shape[-1]
    same_word_same_topic = (
        (words[..., :, None] == words[..., None, :]) & (z[..., :, None] == z[..., None, :])
    ).mean((-1, -2))
    out = {
        "topic0_share": (z == 0).mean(-1),
        "zbar_concentration": (zbar**2).sum(-1).mean(-1),
        "word_topic_pairs": same_word_same_topic,
        "word0_topic0": ((words == 0) & (z == 0)).sum(-1) / num_tokens,
    }
    if eta is not None:
        omega = jnp.einsum("...tk,...dk->...td", eta, zbar)
        out.update(
            eta00=eta[..., 0, 0],
            eta_sq=(eta**2).sum((-1, -2)),
            y_mean=y.mean((-1, -2)),
            y_omega=(y * omega).mean((-1, -2)),
            y_sq=(y**2).mean((-1, -2)),
        )
    if augmentation is not None:
        out["log_s2"] = jnp.log(augmentation[..., 0, 0])
    return out


def _prior_draws(model, seed):
    samples = Predictive(model.declaration, num_samples=NUM_PRIOR)(
        jax.random.PRNGKey(seed), **_declaration_args(model)
    )
    z, words = samples["z"], samples["w"]
    n_dk = jax.vmap(lambda zz: jax.ops.segment_sum(
        jax.nn.one_hot(zz, model.num_topics, dtype=jnp.int32), _structure()[0],
        num_segments=len(DOC_LENGTHS)))(z)
    zbar = topic_proportions(n_dk)
    if model.response is None:
        return _test_functions(z, words, zbar)
    s2 = samples.get("s2")
    aug = None if s2 is None else jnp.broadcast_to(s2, samples["y"].shape)
    return _test_functions(z, words, zbar, samples["eta"], samples["y"].astype(jnp.float32), aug)


def _successive_draws(model, kernel_model, seed):
    """Successive-conditional chain; ``kernel_model`` may differ from ``model`` (mutants)."""
    doc_ids, offsets = _structure()
    num_docs = len(DOC_LENGTHS)
    key = jax.random.PRNGKey(seed)
    key, init_key = jax.random.split(key)
    start = Predictive(model.declaration, num_samples=1)(init_key, **_declaration_args(model))
    z0, w0 = start["z"][0], start["w"][0].astype(jnp.int32)
    supervised = model.response is not None
    y0 = (start["y"][0].astype(jnp.float32) if supervised
          else jnp.zeros((0, num_docs), jnp.float32))
    eta0 = start["eta"][0] if supervised else jnp.zeros((0, model.num_topics), jnp.float32)
    kernel = GibbsKernel(kernel_model, VOCAB)
    data0 = CorpusData(w0, doc_ids, offsets, y0)
    topics0 = counts_from_assignments(z0, w0, doc_ids, num_docs, model.num_topics, VOCAB)
    if supervised and "s2" in start:  # the prior draw of the noise variance, per task
        aug0 = jnp.broadcast_to(start["s2"][0], y0.shape).astype(jnp.float32)
    else:
        aug0 = jnp.ones_like(y0)
    family_state = ParametricState(topics0, eta0, aug0)
    chain0 = ChainState(family_state, kernel.sampler.monitors(family_state, data0),
                        jnp.zeros((), jnp.int32), key)

    def step(carry, step_key):
        chain, data = carry
        k_kernel, k_phi, k_w, k_y = jax.random.split(step_key, 4)
        chain = kernel.sample(chain._replace(rng_key=k_kernel), (data,), {})
        state = chain.state
        z = state.topics.z
        phi = jax.random.dirichlet(k_phi, jnp.full((model.num_topics, VOCAB), model.beta))
        words = jax.random.categorical(k_w, jnp.log(phi[z])).astype(jnp.int32)
        zbar = topic_proportions(state.topics.n_dk)
        if supervised:
            y = _draw_y(model.response, k_y, state.eta @ zbar.T, state.augmentation)
        else:
            y = data.y
        topics = counts_from_assignments(z, words, doc_ids, num_docs, model.num_topics, VOCAB)
        chain = chain._replace(state=state._replace(topics=topics))
        data = data._replace(words=words, y=y)
        g = _test_functions(z, words, zbar, state.eta if supervised else None,
                            y if supervised else None,
                            state.augmentation if supervised else None)
        return (chain, data), g

    keys = jax.random.split(key, NUM_STEPS)
    _, g = jax.jit(lambda s, d, k: jax.lax.scan(step, (s, d), k))(chain0, data0, keys)
    return g


def _z_scores(prior, chain, num_batches=50):
    scores = {}
    for name in prior:
        a = np.asarray(prior[name], np.float64)
        b = np.asarray(chain[name], np.float64)
        batch_means = b[: len(b) // num_batches * num_batches].reshape(num_batches, -1).mean(1)
        se2 = a.var() / len(a) + batch_means.var(ddof=1) / num_batches
        scores[name] = (a.mean() - b.mean()) / np.sqrt(se2)
    return scores


# nu2 != 1 throughout: at nu2 = 1 code that confuses nu with nu2 is the same program
NU2 = 2.5
LOGISTIC = gslda(2, c=1.0, alpha=1.0, beta=0.5, nu2=NU2)
GAUSSIAN = slda_gaussian(2, s2=0.5, learn_s2=True, a0=3.0, b0=1.0, alpha=1.0, beta=0.5, nu2=NU2)


@pytest.mark.parametrize(
    "model", [lda(2, alpha=1.0, beta=0.5), LOGISTIC, GAUSSIAN],
    ids=["lda", "logistic-c1", "gaussian-learned-s2"],
)
def test_geweke_joint_distribution(model):
    scores = _z_scores(_prior_draws(model, 0), _successive_draws(model, model, 1))
    worst = max(scores, key=lambda k: abs(scores[k]))
    assert abs(scores[worst]) < Z_LIMIT, f"{worst}: z = {scores[worst]:.2f}; all {scores}"


@dataclass(frozen=True)
class LogisticWithoutHalf(Logistic):
    """A plausible bug: kappa = c y instead of c (y - 1/2)."""

    def gaussian_form(self, y, augmentation):
        return self.c * y, augmentation


@pytest.mark.parametrize(
    "model, wrong",
    [
        (lda(2, alpha=1.0, beta=0.5), lda(2, alpha=4.0, beta=0.5)),
        (LOGISTIC, replace(LOGISTIC, response=LogisticWithoutHalf(1.0))),
        (GAUSSIAN, replace(GAUSSIAN, response=replace(GAUSSIAN.response, b0=3.0))),
    ],
    ids=["lda-wrong-alpha", "logistic-wrong-kappa", "gaussian-wrong-s2-prior"],
)
def test_geweke_detects_wrong_conditional(model, wrong):
    scores = _z_scores(_prior_draws(model, 0), _successive_draws(model, wrong, 1))
    assert max(abs(s) for s in scores.values()) > 2 * Z_LIMIT, scores
