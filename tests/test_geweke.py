"""Geweke's joint-distribution test for the generative models (LDA; logistic sLDA at c = 1).

Marginal-conditional simulator: independent draws of (Z, W, eta, y) from the model's numpyro
declaration. Successive-conditional simulator: from such a draw, alternate the Gibbs
kernel's cycle (Z, eta, augmentation | W, y) with fresh draws of the data given the latents
(W | Z with Phi drawn from its prior and discarded, which is exact for p(W | Z); y | Z, eta from
the Bernoulli likelihood, or from N(omega, s2) with the chain's current s2 for Gaussian sLDA;
the Polya-Gamma variable is independent of y given omega, so it stays). Both simulators sample
the same joint distribution iff the kernel is right: the means of test functions must agree
within the Monte Carlo error. The successive-conditional simulator runs many short independent
chains, each started from its own draw of the joint (a right kernel keeps every state a draw of
the joint, so no burn-in is needed, and the chains' means are independent batches).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer import Predictive

from topiczoo.kernels.assignments import assignments_log_likelihood
from topiczoo.kernels.gibbs import ChainState, CorpusData, GibbsKernel
from topiczoo.models.parametric import ParametricState
from topiczoo.models.responses import Logistic
from topiczoo.kernels.topics import topic_proportions
from topiczoo.models import gslda, lda, slda_gaussian

pytestmark = pytest.mark.slow  # statistical: long chains

DOC_LENGTHS = [5, 4, 6, 5]
VOCAB = 5
NUM_PRIOR = 20_000
NUM_CHAINS = 500  # independent successive-conditional chains, each from a joint draw
NUM_STEPS = 40  # steps per chain: 20,000 states in all
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


def _successive_draws(model, kernel_model, seed, sampler="exact"):
    """Successive-conditional chains of ``sampler``; ``kernel_model`` may differ from ``model``
    (mutants).

    ``NUM_CHAINS`` chains of ``NUM_STEPS`` steps, each started from its own draw of the joint
    (so every state of a right kernel is a draw of the joint: no burn-in), run vectorized: the
    kernel's host sweeps loop over the chains in one call per step. Returns each test function
    as a ``[NUM_STEPS, NUM_CHAINS]`` array.
    """
    doc_ids, offsets = _structure()
    num_docs = len(DOC_LENGTHS)
    key, init_key = jax.random.split(jax.random.PRNGKey(seed))
    start = Predictive(model.declaration, num_samples=NUM_CHAINS)(init_key,
                                                                   **_declaration_args(model))
    z0, w0 = start["z"].astype(jnp.int32), start["w"].astype(jnp.int32)
    supervised = model.response is not None
    if supervised:
        y0, eta0 = start["y"].astype(jnp.float32), start["eta"]
    else:
        y0 = jnp.zeros((NUM_CHAINS, 0, num_docs), jnp.float32)
        eta0 = jnp.zeros((NUM_CHAINS, 0, model.num_topics), jnp.float32)
    if supervised and "s2" in start:  # the prior draw of the noise variance, per task
        aug0 = jnp.broadcast_to(start["s2"].reshape(NUM_CHAINS, -1, 1), y0.shape).astype(jnp.float32)
    else:
        aug0 = jnp.ones_like(y0)
    kernel = GibbsKernel(kernel_model, VOCAB, sampler=sampler)

    def log_likelihood(z, words):
        return assignments_log_likelihood(z, words, offsets, model.beta,
                                          num_topics=model.num_topics, vocab_size=VOCAB)

    def start_chain(z, eta, aug, words, y):
        n_dk = jnp.zeros((num_docs, model.num_topics), jnp.int32).at[doc_ids, z].add(1)
        state = ParametricState(z, n_dk, words, log_likelihood(z, words), eta, aug)
        data = CorpusData(words, doc_ids, offsets, y)
        return ChainState(state, kernel.sampler.monitors(state, data),
                          jnp.zeros((), jnp.int32), key), data

    chain0, data0 = jax.vmap(start_chain)(z0, eta0, aug0, w0, y0)

    def one_step(chain, data, step_key):
        k_kernel, k_phi, k_w, k_y = jax.random.split(step_key, 4)
        chain = kernel.sample(chain._replace(rng_key=k_kernel), (data,), {})
        state = chain.state
        z = state.z
        phi = jax.random.dirichlet(k_phi, jnp.full((model.num_topics, VOCAB), model.beta))
        words = jax.random.categorical(k_w, jnp.log(phi[z])).astype(jnp.int32)
        zbar = topic_proportions(state.n_dk)
        y = (_draw_y(model.response, k_y, state.eta @ zbar.T, state.augmentation)
             if supervised else data.y)
        chain = chain._replace(state=state._replace(
            words=words, log_likelihood=log_likelihood(z, words)))
        g = _test_functions(z, words, zbar, state.eta if supervised else None,
                            y if supervised else None,
                            state.augmentation if supervised else None)
        return (chain, data._replace(words=words, y=y)), g

    def step(carry, step_key):
        keys = jax.random.split(step_key, NUM_CHAINS)
        return jax.vmap(one_step)(*carry, keys)

    keys = jax.random.split(key, NUM_STEPS)
    _, g = jax.jit(lambda c, d, k: jax.lax.scan(step, (c, d), k))(chain0, data0, keys)
    return g


def _z_scores(prior, chains):
    """z of (prior mean - chains' mean); the chains are independent, so their means are the
    batches of the chains' standard error."""
    scores = {}
    for name in prior:
        a = np.asarray(prior[name], np.float64)
        chain_means = np.asarray(chains[name], np.float64).mean(0)
        se2 = a.var() / len(a) + chain_means.var(ddof=1) / len(chain_means)
        scores[name] = (a.mean() - chain_means.mean()) / np.sqrt(se2)
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


@pytest.mark.parametrize("model", [LOGISTIC, GAUSSIAN], ids=["logistic-c1", "gaussian-learned-s2"])
def test_geweke_joint_distribution_of_the_parallel_sampler(model):
    """The document-parallel sampler (Phi drawn, then every document given Phi) against the
    declaration's joint, as the exact sampler above."""
    scores = _z_scores(_prior_draws(model, 0), _successive_draws(model, model, 1, "parallel"))
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
