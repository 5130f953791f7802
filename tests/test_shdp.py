"""The supervised HDP's blocks are exact (DESIGN.md, "How we know a kernel is right").

* Enumeration: on 2 documents of 5 tokens in all, a long run of the blocks (eta, topics,
  global, augmentation) must reproduce the exact posterior over the 52 partitions of the tokens
  (``exact_hdp``: the Chinese restaurant franchise by brute force over table seatings, eta
  integrated by quadrature with the responses' original pseudo-likelihoods) within total
  variation 0.03, for the plain HDP and every response, alpha and gamma fixed or drawn.
  Mutants (a wrong new-topic weight, wrong table-count rules) must miss it.
* Geweke's joint-distribution test of the Gaussian sHDP with alpha and gamma drawn.
* Growth: a run whose capacity overflows, grown and redone chunk by chunk, draws exactly what
  a run started with a large capacity draws.

The driver is a plain loop over the blocks (``jax.lax.scan`` of one sweep, ``jax.vmap`` over
chains), as the integrator's kernel will compose them.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import exact_hdp
from topiczoo.kernels import hdp
from topiczoo.kernels.gibbs import CorpusData
from topiczoo.kernels.responses import EpsilonInsensitive, Gaussian, Hinge, Logistic, MultiClass

DOCS = [[0, 1, 0], [1, 2]]
VOCAB = 3
BETA = 0.5
NU2 = 4.0
TV_BOUND = 0.03
NUM_CHAINS = 50
NUM_SWEEPS = 2_000  # per chain, after burn-in: 100,000 draws
BURN_IN = 100


def tiny_data(docs, y=None):
    words = np.concatenate([np.asarray(d, np.int32) for d in docs])
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int32)
    doc_ids = np.repeat(np.arange(len(docs), dtype=np.int32), [len(d) for d in docs])
    y = np.zeros((0, len(docs)), np.float32) if y is None else np.asarray(y, np.float32)
    return CorpusData(jnp.asarray(words), jnp.asarray(doc_ids), jnp.asarray(offsets),
                      jnp.asarray(y))


def sweep(key, state, data, response, *, learn_alpha, learn_gamma, num_aux=1,
          topics_mutant=0, global_mutant=0):
    """One cycle of the blocks: eta, topics, global (tables, gamma, beta, alpha), augmentation."""
    k_eta, k_z, k_glob, k_aug = jax.random.split(key, 4)
    state = hdp.eta_block(k_eta, state, data, response, nu2=NU2)
    state = hdp.topics_block(k_z, state, data, response, beta=BETA, nu2=NU2, num_aux=num_aux,
                             _mutant=topics_mutant)
    state = hdp.global_block(k_glob, state, data, learn_alpha=learn_alpha,
                             learn_gamma=learn_gamma, _mutant=global_mutant)
    return hdp.augmentation_block(k_aug, state, data, response)


def run_chains(data, response, *, seed=0, alpha=1.0, gamma=1.0, num_sweeps=NUM_SWEEPS,
               num_chains=NUM_CHAINS, **sweep_options):
    """z, alpha, gamma of every sweep after burn-in: [chains * sweeps, ...]."""
    num_tokens = data.words.shape[0]
    one_sweep = partial(sweep, data=data, response=response, **sweep_options)

    def chain(key):
        init_key, run_key = jax.random.split(key)
        state = hdp.init_state(init_key, data, VOCAB, num_tokens, response, alpha=alpha,
                               gamma=gamma)

        def step(state, key):
            state = one_sweep(key, state)
            return state, (state.z, state.alpha, state.gamma)

        keys = jax.random.split(run_key, BURN_IN + num_sweeps)
        _, out = jax.lax.scan(step, state, keys)
        return jax.tree.map(lambda a: a[BURN_IN:], out)

    keys = jax.random.split(jax.random.PRNGKey(seed), num_chains)
    z, a, g = jax.jit(jax.vmap(chain))(keys)
    return (np.asarray(z).reshape(-1, num_tokens), np.asarray(a).ravel(),
            np.asarray(g).ravel())


def partition_frequencies(z, partitions):
    index = {p: i for i, p in enumerate(partitions)}
    counts = np.zeros(len(partitions))
    for row, n in zip(*np.unique(z, axis=0, return_counts=True)):
        counts[index[exact_hdp.canonical(row)]] += n
    return counts / counts.sum()


# Responses: (package response, raw labels, exact description, coded y [T, D] for exact_hdp)
RESPONSES = {
    "hdp": (None, None, None, None),
    "gaussian": (Gaussian(s2=0.1), [1.0, -1.0], ("gaussian", {"s2": 0.1}), [[1.0, -1.0]]),
    "logistic-c1": (Logistic(1.0), [1, 0], ("logistic", {"c": 1.0}), [[1, 0]]),
    "logistic-c3": (Logistic(3.0), [1, 0], ("logistic", {"c": 3.0}), [[1, 0]]),
    "hinge-c1-ell1": (Hinge(1.0, 1.0), [1, 0], ("hinge", {"c": 1.0, "ell": 1.0}), [[1, -1]]),
    "eps-insensitive-c2": (EpsilonInsensitive(2.0, 0.1), [1.0, -1.0],
                           ("epsilon_insensitive", {"c": 2.0, "eps": 0.1}), [[1.0, -1.0]]),
    "multiclass-logistic": (MultiClass(Logistic(2.0), 3), [2, 0],
                            ("logistic", {"c": 2.0}), [[0, 1], [0, 0], [1, 0]]),
}


def _setup(name):
    response, labels, description, coded = RESPONSES[name]
    y = None if response is None else response.encode(np.asarray(labels))
    if coded is not None:
        np.testing.assert_array_equal(y, np.asarray(coded, np.float32))
    return response, tiny_data(DOCS, y), description, coded


def _exact(description, coded, **kw):
    kw.setdefault("alpha", 1.0)
    kw.setdefault("gamma", 1.0)
    return exact_hdp.exact_hdp_posterior(
        DOCS, VOCAB, BETA, response=description,
        y=None if coded is None else np.asarray(coded, float), nu2=NU2, **kw)


@pytest.mark.parametrize("name", list(RESPONSES))
def test_enumeration_fixed_concentrations(name):
    response, data, description, coded = _setup(name)
    partitions, exact, _ = _exact(description, coded)
    z, _, _ = run_chains(data, response, learn_alpha=False, learn_gamma=False)
    tv = exact_hdp.total_variation(exact, partition_frequencies(z, partitions))
    print(f"{name}: TV {tv:.4f}")
    assert tv < TV_BOUND, f"{name}: TV {tv:.4f} between the chain and the exact posterior"
