"""The mixture of unigrams (Nigam, McCallum, Thrun and Mitchell 2000): one topic per document.

    pi ~ Dir(alpha/K 1_K);  phi_k ~ Dir(beta 1_V);  z_d ~ Cat(pi);  w_dn ~ Cat(phi_{z_d})

The worked example of the sampler contract (``kernels.gibbs``): a family is a numpyro
declaration, a frozen model object and a :class:`~topiczoo.kernels.gibbs.Sampler` built from
pure functions, and nothing in fit, predict, the command line or diagnostics names it.

Sampler ``"exact"``: one collapsed Gibbs block. With pi and Phi integrated out, each
document's topic is drawn from its exact conditional

    p(z_d = k | Z_-d, W)  propto  (m_k^-d + alpha/K)
                                  * prod_{i=1..N_d} (n_{w_i k}^-d + c_i + beta) / (n_k^-d + i - 1 + V beta)

where m_k^-d counts the other documents in topic k, n_wk^-d and n_k^-d their tokens, and
c_i the earlier tokens of word w_i in document d itself (the Dirichlet-multinomial predictive
of the document's words, added one by one). The sweep is a numba loop over documents called
once per Gibbs cycle through ``jax.pure_callback`` (the pattern of
``kernels.assignments``).

Held-out documents: given one snapshot's posterior means Phi-hat and pi-hat, the topics of
test documents are independent, p(z_d = k | w_d) propto pi_k prod_n phi_{w_dn k}, so their
draws are exact and independent (no test chain, no burn-in).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numba
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import gammaln

from topiczoo.kernels.gibbs import CorpusData, Sampler
from topiczoo.kernels.host import chain_copies, seed_from_key
from topiczoo.models.checks import positive_number, whole_number
from topiczoo.models.family import Predictor
from topiczoo.models.monitors import MIXTURE_MONITORS


def unigram_mixture_declaration(doc_ids, num_docs: int, num_topics: int, vocab_size: int,
                                alpha: float, beta: float, words=None):
    """The mixture of unigrams as a numpyro model.

    pi ~ Dir(alpha 1_K) (alpha per topic here); phi_k ~ Dir(beta 1_V); z_d ~ Cat(pi);
    w_dn ~ Cat(phi_{z_d}).

    Args:
      doc_ids: int [N] the document of each token; num_docs: D.
      words: int [N] observed word ids, or None to draw them.
    Returns ``(z [D], zbar [D, K])``, zbar the one-hot rows of z.
    """
    pi = numpyro.sample("pi", dist.Dirichlet(jnp.full(num_topics, alpha)))
    with numpyro.plate("topics", num_topics):
        phi = numpyro.sample("phi", dist.Dirichlet(jnp.full(vocab_size, beta)))
    with numpyro.plate("docs", num_docs):
        z = numpyro.sample("z", dist.Categorical(probs=pi))
    with numpyro.plate("tokens", doc_ids.shape[0]):
        numpyro.sample("w", dist.Categorical(probs=phi[z[doc_ids]]), obs=words)
    return z, jax.nn.one_hot(z, num_topics)


class MixtureState(NamedTuple):
    """State of one chain of the mixture of unigrams.

    z:    int32 [D]     topic of each document
    m_k:  int32 [K]     documents in topic k
    n_wk: int32 [V, K]  tokens of word w in the documents of topic k (word-major, as LDA's)
    n_k:  int32 [K]     tokens in the documents of topic k
    """

    z: jax.Array
    m_k: jax.Array
    n_wk: jax.Array
    n_k: jax.Array


@dataclass(frozen=True)
class UnigramMixture:
    """The mixture of unigrams with K topics (unsupervised).

    Attributes:
      num_topics: K >= 1.
      alpha: total Dirichlet concentration of the mixing weights: pi ~ Dir(alpha/K 1_K).
      beta: per-word symmetric Dirichlet parameter of each topic's word distribution.
    """

    num_topics: int
    alpha: float = 1.0
    beta: float = 0.01

    name = "unigram-mixture"
    #: The samplers this family offers, by name (``fit(..., sampler=...)``).
    samplers = ("exact",)
    #: Unsupervised: no label kinds, no response.
    tasks = ()
    response = None

    def __post_init__(self):
        object.__setattr__(self, "num_topics", whole_number("num_topics", self.num_topics, 1))
        for name in ("alpha", "beta"):
            object.__setattr__(self, name, positive_number(name, getattr(self, name)))

    @property
    def alpha_per_topic(self) -> float:
        """alpha / K: the symmetric Dirichlet parameter of the mixture weights."""
        return self.alpha / self.num_topics

    def describe(self) -> dict:
        """The model as flat JSON-able facts (what checkpoints and diagnostics record)."""
        return {"model": self.name, "num_topics": self.num_topics, "alpha": self.alpha,
                "alpha_per_topic": self.alpha_per_topic, "beta": self.beta}

    # ------------------------------------------------------------------ declaration
    def declaration_for(self, vocab_size: int):
        """The numpyro declaration as a function of a :class:`CorpusData`."""
        spec = self

        def declaration(data: CorpusData):
            return unigram_mixture_declaration(
                data.doc_ids, data.doc_offsets.shape[0] - 1, spec.num_topics, vocab_size,
                spec.alpha_per_topic, spec.beta, words=data.words)

        return declaration

    # ------------------------------------------------------------------ samplers
    def sampler(self, name: str, vocab_size: int, task=None, *,
                num_threads: int | None = None) -> Sampler:
        """The named sampler (:attr:`samplers`) for a corpus of ``vocab_size`` words (one
        chain at a time: ``num_threads`` is accepted and unused)."""
        if name not in self.samplers:
            raise ValueError(f"unknown sampler {name!r} for {self.name}; choose from "
                             f"{', '.join(self.samplers)}")
        if task is not None:
            raise ValueError(f"{self.name} is unsupervised; it takes no task")
        return _exact_sampler(self, int(vocab_size))

    # ------------------------------------------------------------------ prediction
    def predictor(self) -> Predictor:
        """Held-out documents: exact independent draws of their topics given one snapshot's
        Phi-hat and pi-hat (no test chain)."""
        return Predictor(partial(phi_hat, self), partial(train_proportions, self),
                         partial(test_proportions, self))


def train_proportions(model: UnigramMixture, state: MixtureState) -> np.ndarray:
    """zbar of the training documents in ``state`` (one chain): one-hot rows, float32 [D, K]."""
    return np.eye(model.num_topics, dtype=np.float32)[np.asarray(state.z)]


def phi_hat(model: UnigramMixture, snapshot: dict) -> np.ndarray:
    """Posterior-mean topics given a snapshot's counts: float64 [..., V, K], columns summing to
    1."""
    n_wk, n_k = snapshot["n_wk"], snapshot["n_k"]
    return (n_wk + model.beta) / (n_k[..., None, :] + n_wk.shape[-2] * model.beta)


def pi_hat(model: UnigramMixture, snapshot: dict) -> np.ndarray:
    """Posterior-mean mixing weights given a snapshot's document counts: float64 [..., K]."""
    m_k = np.asarray(snapshot["m_k"], np.float64)
    return (m_k + model.alpha_per_topic) / (m_k.sum(-1, keepdims=True) + model.alpha)


def test_log_posterior(model: UnigramMixture, snapshot: dict, corpus) -> np.ndarray:
    """log p(z_d = k | w_d, Phi-hat, pi-hat) of ``corpus``'s documents: float64 [D, K] (an
    empty document gets log pi-hat)."""
    offsets = np.asarray(corpus.doc_offsets, np.int64)
    doc_ids = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    log_phi = np.log(phi_hat(model, snapshot))
    log_p = np.log(pi_hat(model, snapshot))[None, :].repeat(len(offsets) - 1, 0)
    np.add.at(log_p, doc_ids, log_phi[np.asarray(corpus.words, np.int64)])
    return log_p - np.logaddexp.reduce(log_p, axis=1, keepdims=True)


def test_proportions(model: UnigramMixture, snapshot: dict, corpus, *, num_burnin: int,
                     num_draws: int, lag: int, seed: int) -> np.ndarray:
    """zbar draws [J, D, K] of ``corpus``'s documents: one-hot rows of z_d drawn from
    p(z_d | w_d, Phi-hat, pi-hat) of one chain's ``snapshot``. The draws are exact and
    independent, so ``num_burnin`` and ``lag`` are accepted (the driver passes them) and change
    nothing."""
    if num_draws < 1 or lag < 1 or num_burnin < 0:
        raise ValueError("need num_draws >= 1, lag >= 1 and num_burnin >= 0")
    cdf = np.cumsum(np.exp(test_log_posterior(model, snapshot, corpus)), axis=1)
    u = np.random.default_rng(seed).random((num_draws, cdf.shape[0], 1)) * cdf[:, -1:]
    z = np.minimum((u >= cdf[None]).sum(-1), model.num_topics - 1)
    return np.eye(model.num_topics, dtype=np.float32)[z]


def unigram_mixture(num_topics: int, *, alpha: float = 1.0, beta: float = 0.01) -> UnigramMixture:
    """The mixture of unigrams with K topics; ``alpha`` is the total concentration of the
    mixing weights (per topic alpha/K), ``beta`` each topic's per-word Dirichlet parameter."""
    return UnigramMixture(num_topics, alpha, beta)


# ---------------------------------------------------------------------------------------------
# The collapsed sweep over documents

# The predictive factors of a document's tokens each lie in (0, 1]; their running product is
# folded into the log weight whenever it falls below this, so it never leaves the normal
# range of doubles (any factor is at least beta / (N + V beta)) and costs one log per few
# tokens instead of one per token.
_FOLD_BELOW = 1e-100


@numba.njit(cache=True, nogil=True)
def _document_sweep(z, m_k, n_wk, n_k, words, doc_offsets, alpha, beta, seed):
    """One in-place sweep over all documents, each z_d drawn from its exact collapsed
    conditional (module docstring). ``alpha``: per-topic Dirichlet parameter of pi."""
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_topics = n_k.shape[0]
    v_beta = n_wk.shape[0] * beta
    log_weight = np.empty(num_topics)
    cum = np.empty(num_topics)
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        k_old = z[d]
        m_k[k_old] -= 1
        n_k[k_old] -= end - start
        for i in range(start, end):
            n_wk[words[i], k_old] -= 1
        top = -np.inf
        for k in range(num_topics):
            acc = np.log(m_k[k] + alpha)
            prod = 1.0
            n = n_k[k] + v_beta
            for i in range(start, end):  # the document's tokens, each counted once drawn
                w = words[i]
                prod *= (n_wk[w, k] + beta) / n
                n_wk[w, k] += 1
                n += 1.0
                if prod < _FOLD_BELOW:
                    acc += np.log(prod)
                    prod = 1.0
            for i in range(start, end):
                n_wk[words[i], k] -= 1
            acc += np.log(prod)
            log_weight[k] = acc
            if acc > top:
                top = acc
        total = 0.0
        for k in range(num_topics):
            total += np.exp(log_weight[k] - top)
            cum[k] = total
        u = np.random.random() * total
        k_new = 0
        while k_new < num_topics - 1 and cum[k_new] <= u:
            k_new += 1
        z[d] = k_new
        m_k[k_new] += 1
        n_k[k_new] += end - start
        for i in range(start, end):
            n_wk[words[i], k_new] += 1


def _host_sweep(alpha, beta):
    """The host side of :func:`documents_step`'s callback (as ``kernels.topics``): the state is
    copied once into new arrays and swept in place; under ``vmap_method="expand_dims"`` every
    argument has a leading chain axis (of size 1 where not batched) and each chain is swept in
    its own row."""

    def host(z, m_k, n_wk, n_k, words, doc_offsets, seed):
        state = [np.asarray(a) for a in (z, m_k, n_wk, n_k)]
        words, doc_offsets, seed = np.asarray(words), np.asarray(doc_offsets), np.asarray(seed)
        if state[0].ndim == 1:
            out = [np.array(a, dtype=np.int32) for a in state]
            _document_sweep(*out, words, doc_offsets, alpha, beta, int(seed))
            return tuple(out)
        inputs = (words, doc_offsets, seed)
        num = max(a.shape[0] for a in (*state, *inputs))
        out = [chain_copies(a, num) for a in state]
        for chain in range(num):
            w, o, s = (a[min(chain, a.shape[0] - 1)] for a in inputs)
            _document_sweep(*(a[chain] for a in out), w, o, alpha, beta, int(s))
        return tuple(out)

    return host


def documents_step(key, state: MixtureState, words, doc_offsets, alpha: float,
                   beta: float) -> MixtureState:
    """One collapsed Gibbs sweep over every document's topic. ``alpha``: per topic (static
    float), ``beta``: per word. Works under jit, vmap (chains) and lax loops."""
    out_shape = tuple(jax.ShapeDtypeStruct(a.shape, jnp.int32) for a in state)
    seed = seed_from_key(key)  # host seed, reproducible per chain
    return MixtureState(*jax.pure_callback(_host_sweep(float(alpha), float(beta)), out_shape,
                                           *state, words, doc_offsets, seed,
                                           vmap_method="expand_dims"))


def mixture_log_likelihood(state: MixtureState, beta: float) -> jax.Array:
    """log p(W | Z) with Phi integrated out (label-invariant), in nats:
    sum_k [lgamma(V beta) - lgamma(n_k + V beta)] + sum_wk [lgamma(n_wk + beta) - lgamma(beta)]."""
    vocab_size = state.n_wk.shape[-2]
    per_topic = gammaln(vocab_size * beta) - gammaln(state.n_k.astype(jnp.float32)
                                                     + vocab_size * beta)
    per_word = gammaln(state.n_wk.astype(jnp.float32) + beta) - gammaln(beta)
    return per_topic.sum() + per_word.sum()


def mixture_log_prior(state: MixtureState, alpha: float) -> jax.Array:
    """log p(z | alpha) with pi ~ Dir(alpha 1_K) integrated out (alpha per topic), in nats:
    lgamma(K alpha) - lgamma(D + K alpha) + sum_k [lgamma(m_k + alpha) - lgamma(alpha)]."""
    num_topics = state.m_k.shape[-1]
    m_k = state.m_k.astype(jnp.float32)
    return (gammaln(jnp.float32(num_topics * alpha)) - gammaln(m_k.sum() + num_topics * alpha)
            + jnp.sum(gammaln(m_k + alpha) - gammaln(jnp.float32(alpha))))


@lru_cache(maxsize=64)
def _exact_sampler(model: UnigramMixture, vocab_size: int) -> Sampler:
    """The collapsed sampler; cached, so equal models share one compiled kernel step."""
    num_topics = model.num_topics

    def init(key, data: CorpusData) -> MixtureState:
        # each document's topic uniformly at random
        if data.y.shape[0]:
            raise ValueError(f"responses y have shape {data.y.shape}; an unsupervised model "
                             "expects [0, D]")
        num_docs = data.doc_offsets.shape[0] - 1
        z = jax.random.randint(key, (num_docs,), 0, num_topics, jnp.int32)
        token_z = z[data.doc_ids]
        return MixtureState(
            z,
            jnp.zeros((num_topics,), jnp.int32).at[z].add(1),
            jnp.zeros((vocab_size, num_topics), jnp.int32).at[data.words, token_z].add(1),
            jnp.zeros((num_topics,), jnp.int32).at[token_z].add(1))

    def documents_block(key, state, data):
        """Z | W: every document's topic from its collapsed conditional, in turn."""
        return documents_step(key, state, data.words, data.doc_offsets,
                              model.alpha_per_topic, model.beta)

    def monitors(state, data) -> dict:
        """log_likelihood: log p(W | Z), nats; log_joint: log p(W | Z) + log p(z | alpha)
        (:func:`mixture_log_prior`); occupied_topics: topics holding a document."""
        log_lik = mixture_log_likelihood(state, model.beta)
        return {"log_likelihood": log_lik,
                "log_joint": log_lik + mixture_log_prior(state, model.alpha_per_topic),
                "occupied_topics": jnp.sum(state.m_k > 0).astype(jnp.int32)}

    def snapshot(state) -> dict:
        return {"n_wk": state.n_wk, "n_k": state.n_k, "m_k": state.m_k}

    def memory(sizes: dict) -> dict:
        """The chains' states with their counts n_wk [V, K] (held about three times over) and
        the snapshots' (bytes)."""
        c, v = sizes["num_chains"], sizes["vocab_size"]
        return {"the chains' states (n_wk [V, K])": 3 * c * 4 * v * num_topics,
                "the snapshots (n_wk [V, K] per chain and snapshot)":
                    4 * c * sizes["num_snapshots"] * v * num_topics}

    # each document's topic at random already starts chains far apart: both names, one start
    return Sampler("exact", init, (documents_block,), monitors, snapshot, MIXTURE_MONITORS,
                   memory=memory, starts=(("dispersed", init), ("uniform", init)))
