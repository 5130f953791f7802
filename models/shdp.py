"""The supervised hierarchical Dirichlet process (Dai and Storkey, eqs 8-12) as a numpyro model.

Truncated stick-breaking form with ``truncation`` = L atoms (the sampler,
``topiczoo.kernels.hdp``, works with the untruncated process; at L = 50 the mass beyond the
truncation is below 1e-5 on average under the Gamma(1, 1) prior of gamma):

    gamma ~ Gamma(1, 1) (or fixed);  alpha ~ Gamma(1, 1) (or fixed)
    v_k ~ Beta(1, gamma), k < L;  beta_k = v_k prod_{j<k} (1 - v_j), beta_L the rest
                                                                             (G0's weights)
    phi_k ~ Dir(beta_word 1_V);  eta_tk ~ N(0, nu2)                              (H, per atom k)
    pi_d ~ Dir(alpha beta_1, ..., alpha beta_L)          (G_d ~ DP(alpha, G0) on G0's L atoms)
    z_dn ~ Cat(pi_d);  w_dn ~ Cat(phi_{z_dn})
    omega_td = eta_t . zbar_d;  y_td from ``response.declare(omega, y)``
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from topiczoo.kernels import hdp as hdp_kernel
from topiczoo.kernels.eta import draw_eta_cholesky
from topiczoo.kernels.gibbs import Sampler
from topiczoo.models.checks import flag, positive_number, whole_number
from topiczoo.models.family import ModelFamily, Predictor
from topiczoo.models.monitors import SHDP_MONITORS
from topiczoo.models.responses import (EpsilonInsensitive, Gaussian, Hinge, Logistic,
                                       response_facts)
from topiczoo.models.supervised import (augmentation_block, eta_block, gaussian_form,
                                        response_declaration, snapshot_parameters,
                                        supervised_log_joint, supervised_monitors)
from topiczoo.models.tasks import Task

# Dirichlet parameters alpha beta_k are clipped below at this (float32 stick products underflow
# after many small sticks; the atoms concerned have weight < 1e-30).
_TINY = 1e-30


def shdp_declaration(doc_ids, num_docs: int, vocab_size: int, beta: float, *, nu2: float = 1.0,
                     response=None, num_tasks: int = 1, truncation: int = 50, alpha=None,
                     gamma=None, alpha_prior=(1.0, 1.0), gamma_prior=(1.0, 1.0), words=None,
                     y=None):
    """The (supervised) HDP topic model, truncated at ``truncation`` atoms.

    Args:
      doc_ids: int [N] document of each token; num_docs: D; vocab_size: V.
      beta: the topics' symmetric Dirichlet parameter.
      nu2: prior variance of each topic's coefficient eta_tk (supervised only).
      response: a response of ``topiczoo.models.responses`` or None (plain HDP).
      num_tasks: T, rows of y.
      alpha, gamma: fixed concentrations, or None to draw them from Gamma(shape, rate) priors
        ``alpha_prior`` / ``gamma_prior`` (sites "alpha", "gamma").
      words: int [N] observed words or None to draw them; y: [T, D] responses or None.
    Sites: gamma, alpha, sticks, phi, eta, pi, z, w, (s2,) y; deterministic "beta_weights" [L].
    Returns ``(z [N], zbar [D, L], eta [T, L] or None, omega [T, D] or None)``.
    """
    if gamma is None:
        gamma = numpyro.sample("gamma", dist.Gamma(*gamma_prior))
    if alpha is None:
        alpha = numpyro.sample("alpha", dist.Gamma(*alpha_prior))
    with numpyro.plate("sticks_plate", truncation - 1):
        sticks = numpyro.sample("sticks", dist.Beta(1.0, gamma))
    remaining = jnp.concatenate([jnp.ones(1), jnp.cumprod(1.0 - sticks)])
    weights = numpyro.deterministic(
        "beta_weights", jnp.concatenate([sticks, jnp.ones(1)]) * remaining)
    with numpyro.plate("atoms", truncation):
        phi = numpyro.sample("phi", dist.Dirichlet(jnp.full(vocab_size, beta)))
    with numpyro.plate("docs", num_docs):
        pi = numpyro.sample("pi", dist.Dirichlet(jnp.maximum(alpha * weights, _TINY)))
    with numpyro.plate("tokens", doc_ids.shape[0]):
        z = numpyro.sample("z", dist.Categorical(probs=pi[doc_ids]))
        numpyro.sample("w", dist.Categorical(probs=phi[z]), obs=words)
    counts = jax.ops.segment_sum(jax.nn.one_hot(z, truncation), doc_ids, num_segments=num_docs)
    zbar = counts / jnp.maximum(counts.sum(-1, keepdims=True), 1.0)
    if response is None:
        return z, zbar, None, None
    eta, omega = response_declaration(zbar, num_tasks, nu2, response, y, "eta_atoms")
    return z, zbar, eta, omega


# ---------------------------------------------------------------------------------------------
# The family: the sHDP through the sampler contract (``models.family.ModelFamily``)


@dataclass(frozen=True)
class SHDPModel(ModelFamily):
    """The supervised hierarchical Dirichlet process (or the plain HDP without a response).

    num_topics: the initial number of topics (tokens spread uniformly over them); the sampler
    starts with ``capacity`` slots (default 2 x ``num_topics``, at least 8) and doubles it,
    redoing the chunk, whenever a birth finds no free slot (draws are those of a run started
    with a large capacity). alpha, gamma: the document- and top-level concentrations (their
    start values when ``learn_alpha`` / ``learn_gamma``, with Gamma(1, 1) priors). beta: the
    topics' Dirichlet parameter; nu2: the prior variance of eta; response: a Gaussian-form
    response of ``models.responses`` or None; tasks: the label kinds it takes; num_aux: Neal's
    m auxiliary topics for a token's new-topic weight; eta_map: set eta to its MAP given Z
    every cycle instead of drawing it (the paper's MAP-coefficient variant; Gaussian and
    logistic responses only; ``kernels.hdp_kernel.eta_map_block``).
    """

    name: str
    num_topics: int
    response: object = None
    tasks: tuple = ()
    alpha: float = 1.0
    gamma: float = 1.0
    beta: float = 0.01
    nu2: float = 1.0
    learn_alpha: bool = True
    learn_gamma: bool = True
    num_aux: int = 1
    capacity: int | None = None
    num_classes: int | None = None
    center: bool = False
    eta_map: bool = False

    samplers = ("exact",)

    def __post_init__(self):
        object.__setattr__(self, "num_topics", whole_number("num_topics", self.num_topics, 1))
        for name in ("alpha", "gamma", "beta", "nu2"):
            object.__setattr__(self, name, positive_number(name, getattr(self, name)))
        object.__setattr__(self, "num_aux", whole_number("num_aux", self.num_aux, 1))
        if self.num_classes is not None:
            object.__setattr__(self, "num_classes",
                               whole_number("num_classes", self.num_classes, 2))
        object.__setattr__(self, "center", flag("center", self.center))
        if self.eta_map:
            hdp_kernel.map_steps(self.response)  # ValueError for a response without a MAP here

    @property
    def initial_capacity(self) -> int:
        """The topic slots a chain starts with: ``capacity``, else max(8, 2 K)."""
        return int(self.capacity or max(8, 2 * self.num_topics))

    def describe(self) -> dict:
        """The model as flat JSON-able facts (what checkpoints and diagnostics record)."""
        out = {"model": self.name, "num_topics": self.num_topics, "alpha": self.alpha,
               "gamma": self.gamma, "beta": self.beta, "learn_alpha": self.learn_alpha,
               "learn_gamma": self.learn_gamma, "num_aux": self.num_aux}
        if self.response is not None:
            out.update(nu2=self.nu2, **response_facts(self.response))
        if "regression" in self.tasks:
            out["center"] = self.center
        if self.eta_map:
            out["eta_map"] = True
        return out

    def declaration_for(self, vocab_size: int):
        spec = self

        def declaration(data):
            return shdp_declaration(
                data.doc_ids, data.doc_offsets.shape[0] - 1, vocab_size, spec.beta,
                nu2=spec.nu2, response=spec.response, num_tasks=max(data.y.shape[0], 1),
                words=data.words, y=data.y if spec.response is not None else None)

        return declaration

    def sampler(self, name: str, vocab_size: int, task=None, *,
                num_threads: int | None = None) -> Sampler:
        """The named sampler (only ``"exact"``) for a corpus of ``vocab_size`` words (its host
        steps run one chain at a time: ``num_threads`` is accepted and unused)."""
        if name not in self.samplers:
            raise ValueError(f"unknown sampler {name!r} for {self.name}; choose from "
                             f"{', '.join(self.samplers)}")
        return _shdp_sampler(self, int(vocab_size), task)

    def predictor(self) -> Predictor:
        """Held-out documents are scored by test chains with the training topics fixed and new
        topics born in the document (eq 18)."""
        return _predictor(self.beta)


def _phi_hat(snapshot: dict) -> np.ndarray:
    """The snapshot's phi_wk as float64 [..., V, Kcap]: (n_wk + beta) / (n_k + V beta) on
    occupied slots, 0 on free ones (``kernels.hdp_kernel.snapshot``)."""
    return np.asarray(snapshot["phi_wk"], np.float64)


def _train_proportions(state) -> np.ndarray:
    """zbar [D, Kcap] of the training documents in one chain's state (float32)."""
    n_dk = np.asarray(state.n_dk, np.float64)
    return (n_dk / np.maximum(n_dk.sum(-1, keepdims=True), 1)).astype(np.float32)


@lru_cache(maxsize=64)
def _predictor(beta: float) -> Predictor:
    def test_proportions(snapshot: dict, corpus, *, num_burnin: int, num_draws: int, lag: int,
                         seed: int) -> np.ndarray:
        """zbar draws [J, D, Kcap] of ``corpus``'s documents (``kernels.hdp.held_out``)."""
        return hdp_kernel.sample_test_topics(corpus.words, corpus.doc_offsets, snapshot, beta=beta,
                                      num_burnin=num_burnin, num_draws=num_draws, lag=lag,
                                      seed=seed)

    return Predictor(_phi_hat, _train_proportions, test_proportions)


@lru_cache(maxsize=64)
def _shdp_sampler(model: SHDPModel, vocab_size: int, task) -> Sampler:
    """The sHDP's exact sampler: the cycle eta, topics, globals, augmentation (topics and
    globals without a response). Every block is exact on its own, so any order or mixture of
    them leaves the posterior invariant; the cycle draws eta first (the start has eta = 0)."""
    response = model.response
    if task is None and response is not None:
        task = Task(model.tasks[0])

    def init(key, data, start="dispersed") -> hdp_kernel.SHDPState:
        """``"dispersed"`` (default): each document's tokens from theta_d ~ Dir(alpha / K)
        over the K initial topics; ``"uniform"``: every token's topic uniformly among them."""
        return hdp_kernel.init_state(key, data, vocab_size, model.initial_capacity, response,
                                     init_topics=model.num_topics, alpha=model.alpha,
                                     gamma=model.gamma, dispersed=start == "dispersed")

    def draw_eta(key, state, data, psi, rho):
        """Over the occupied topics only (empty slots 0), so the draw does not depend on the
        capacity."""
        return draw_eta_cholesky(key, state.z, data.doc_offsets, state.n_k, psi, rho, model.nu2,
                                 skip_empty=True)

    def eta_map(key, state, data):
        """eta | Z: set to its MAP given Z (the sHDP paper's variant)."""
        return hdp_kernel.eta_map_block(key, state, data, response, nu2=model.nu2)

    def topics(key, state, data):
        """z | rest: one direct-assignment sweep, births and deaths of topics included."""
        psi, rho = gaussian_form(response, state, data)
        return hdp_kernel.topics_block(key, state, data, psi, rho, beta=model.beta, nu2=model.nu2,
                                num_aux=model.num_aux)

    def globals_(key, state, data):
        """tables, gamma, beta, alpha | z: the Antoniak seating, then the concentrations and
        stick weights."""
        return hdp_kernel.global_block(key, state, data, learn_alpha=model.learn_alpha,
                                learn_gamma=model.learn_gamma)

    def monitors(state, data) -> dict:
        """``kernels.hdp_kernel.topic_monitors``, ``log_joint`` (:func:`log_joint`) and,
        supervised, the response's (no eta: the number of slots changes)."""
        out = hdp_kernel.topic_monitors(state, model.beta)
        out["log_joint"] = log_joint(model, state, data, out["log_likelihood"])
        if response is not None:
            out.update(supervised_monitors(response, task, state, data,
                                           hdp_kernel.document_scores(state, data), collect_eta=False))
        return out

    def snapshot(state) -> dict:
        """The globals prediction reads (``kernels.hdp.snapshot``) and the response's
        parameters (the Gaussian's s2 [T])."""
        return {**hdp_kernel.snapshot(state, beta=model.beta),
                **snapshot_parameters(response, state)}

    def overflowed(state):
        return state.overflow

    def grow(state):
        return hdp_kernel.grow(state, 2 * state.n_k.shape[-1])

    blocks = (topics, globals_)
    if response is not None:
        blocks = (eta_map if model.eta_map else eta_block(response, draw_eta), topics, globals_,
                  augmentation_block(response, hdp_kernel.document_scores))
    return Sampler("exact", init, blocks, monitors, snapshot, SHDP_MONITORS, overflowed, grow,
                   memory=partial(_memory, model.initial_capacity, response is not None),
                   starts=tuple((name, partial(init, start=name))
                                for name in ("dispersed", "uniform")))


def log_joint(model: SHDPModel, state, data, log_likelihood=None):
    """The log joint density of an sHDP chain's state, float32 [] nats, label-invariant:
    log p(W | Z) (``log_likelihood`` when already computed) + the Chinese restaurant
    franchise's terms of z, the stick weights, alpha and gamma (``kernels.hdp.log_prior``,
    Gamma(1, 1) priors on the concentrations that are drawn) + log p(eta) over the occupied
    topics + the response's un-augmented log (pseudo-)likelihood (and s2's log prior where
    drawn; ``models.supervised.supervised_log_joint``)."""
    if log_likelihood is None:
        log_likelihood = hdp_kernel.log_likelihood(state, model.beta)
    out = log_likelihood + hdp_kernel.log_prior(state, data, learn_alpha=model.learn_alpha,
                                                learn_gamma=model.learn_gamma)
    if model.response is None:
        return out
    return out + supervised_log_joint(model.response, state, data,
                                      hdp_kernel.document_scores(state, data), model.nu2,
                                      occupied=state.n_k > 0)


def _memory(capacity: int, supervised: bool, sizes: dict) -> dict:
    """Bytes of the largest arrays of a run at its starting capacity (``Sampler.memory``;
    the capacity doubles when topics are born beyond it): the chains' states with their counts
    (held about three times over), the snapshots' topics and eta's factorisation."""
    k, c = capacity, sizes["num_chains"]
    d, n, v = sizes["num_docs"], sizes["num_tokens"], sizes["vocab_size"]
    t = sizes["num_tasks"] if supervised else 0
    parts = {
        "the chains' states (z, n_dk [D, Kcap], n_wk [V, Kcap])": 3 * c * (4 * n + 4 * d * k
                                                                           + 4 * v * k),
        "the snapshots (phi [V, Kcap] per chain and snapshot)": 4 * c * sizes["num_snapshots"]
                                                                * v * k,
    }
    if t:
        parts["eta's precision matrices [Kcap, Kcap, T] (float64)"] = 8 * k * k * (t + 1)
    return parts


#: The Gaussian sHDP's default noise variance, as a fraction of the training responses'
#: variance (``shdp_gaussian``; measured in ``studies/results/shdp_movie_scale_diagnose.md``).
S2_FRACTION = 0.25


def shdp_gaussian(num_topics: int = 10, *, s2: float | None = None, learn_s2: bool = False,
                  alpha: float = 1.0, gamma: float = 1.0, beta: float = 0.01, nu2: float = 1.0,
                  center: bool = True) -> SHDPModel:
    """Gaussian sHDP (the paper's regression model); ``num_topics`` is the initial number.

    s2: the noise variance (fixed, or the start value when ``learn_s2``, then s2 ~ IG(1, 0.01)
    drawn every sweep). None (the default): ``S2_FRACTION`` = 1/4 of the variance of the
    training responses (after centring), fixed (the paper's fixed-variance p(y | z, eta)) or
    the start when ``learn_s2``; s2 means the same on any rating scale (eta's prior variance
    ``nu2`` does not: for responses far from the unit range, standardise them or scale nu2 with
    var(y)). Why: with s2 drawn from IG(1, 0.01) and started at 1, the response barely steers
    the topics for the first hundred sweeps (movie-scale fold 0, a validation split of its
    training documents, 1 chain x 100 iterations: validation predictive R^2 0.20, in-sample
    0.28, s2 still 0.079 at the end); fixed at var(y) / 4 the same run reaches 0.29 (in-sample
    0.63); smaller fixed values (/8 to /64) were no better (0.27-0.31) and grew more topics. On
    the test documents of folds 0-1 (2 chains x 200 iterations) this default gives 0.406,
    against 0.246 for the drawn s2 at 4 chains x 100 (``studies/results/shdp_movie_scale*.md``).
    """
    response = (Gaussian(S2_FRACTION, learn_s2, relative=True) if s2 is None
                else Gaussian(s2, learn_s2))
    return SHDPModel("shdp-gaussian", num_topics, response, ("regression",),
                     alpha, gamma, beta, nu2, center=center)


def shdp_logistic(num_topics: int = 10, *, c: float = 1.0, alpha: float = 1.0,
                  gamma: float = 1.0, beta: float = 0.01, nu2: float = 1.0) -> SHDPModel:
    """Logistic sHDP with constant c (Polya-Gamma, exact); binary or multi-label."""
    return SHDPModel("shdp-logistic", num_topics, Logistic(c), ("binary", "multilabel"), alpha,
                     gamma, beta, nu2)


def shdp_hinge(num_topics: int = 10, *, c: float = 1.0, ell: float = 164.0, alpha: float = 1.0,
               gamma: float = 1.0, beta: float = 0.01, nu2: float = 1.0) -> SHDPModel:
    """Max-margin sHDP: the hinge loss of Gibbs MedLDA; binary or multi-label."""
    return SHDPModel("shdp-hinge", num_topics, Hinge(c, ell), ("binary", "multilabel"), alpha,
                     gamma, beta, nu2)


#: The epsilon-insensitive sHDP's default cost, per standard deviation of the training
#: responses (``shdp_regression``; measured in ``studies/results/shdp_movie_scale_diagnose.md``).
C_PER_SD = 3.0


def shdp_regression(num_topics: int = 10, *, c: float | None = None, eps: float = 1e-3,
                    alpha: float = 1.0, gamma: float = 1.0, beta: float = 0.01,
                    nu2: float = 1.0, center: bool = True) -> SHDPModel:
    """sHDP with the epsilon-insensitive loss of MedLDA regression; ``num_topics`` is the
    initial number.

    c: the cost, in 1 / response units. None (the default): ``C_PER_SD`` = 3 per standard
    deviation of the training responses, c = 3 / sd(y) (``EpsilonInsensitive(relative=True)``;
    a fit's summary says its value, ``c_in_force``), so the default c means the same on any
    rating scale. ``eps`` (the insensitivity, response units) and ``nu2`` (eta's prior
    variance, squared response units) do not follow the scale: for responses far from the
    unit range (ratings x 1000), standardise them, or scale eps with sd(y) and nu2 with var(y).
    Why 3: on movie-scale (fold 0, a validation split of its training documents, 2 chains x
    1,000 iterations, log ratings of sd 0.34) c = 4, 8, 16 gave validation predictive R^2
    0.367, 0.406, 0.390, this default (c = 8.9) 0.410, and c = 1, the old fixed default, 0.15
    (at 100 iterations); c = 8 is 2.7 / sd. Carried to the default preprocessing (ratings of
    sd 0.18, c = 16) it gave 0.534 over five folds, against 0.518-0.521 for MedLDA regression
    at its best c (``studies/README.md``).
    """
    response = (EpsilonInsensitive(C_PER_SD, eps, relative=True) if c is None
                else EpsilonInsensitive(c, eps))
    return SHDPModel("shdp-regression", num_topics, response, ("regression",),
                     alpha, gamma, beta, nu2, center=center)


def shdp_multitask(num_topics: int = 10, num_classes: int | None = None, *, c: float = 1.0,
                   ell: float = 64.0, alpha: float = 1.0, gamma: float = 1.0,
                   beta: float = 0.01, nu2: float = 1.0) -> SHDPModel:
    """Multi-task max-margin sHDP for multi-class data: one hinge task per class, argmax."""
    return SHDPModel("shdp-multitask", num_topics, Hinge(c, ell), ("multiclass",), alpha, gamma,
                     beta, nu2, num_classes=num_classes)


def shdp_map(num_topics: int = 10, *, response: str = "gaussian", c: float | None = None,
             s2: float | None = None, learn_s2: bool | None = None, alpha: float = 1.0,
             gamma: float = 1.0, beta: float = 0.01, nu2: float = 1.0,
             center: bool = True) -> SHDPModel:
    """sHDP with eta set to its MAP given Z every cycle instead of drawn (the sHDP paper's
    MAP-coefficient variant, section 5). ``response``: ``"gaussian"`` (regression; s2, the
    noise variance, default 1, drawn from IG(1, 0.01) unless ``learn_s2=False``: the MAP is the
    conditional mean at the current s2) or ``"logistic"`` (binary or multi-label with constant
    ``c``, default 1: Newton steps on the un-augmented posterior; the Polya-Gamma draw still
    serves the topic sweep). An option of the other response is an error. Not an exact
    sampler of the sHDP posterior: eta is a function of Z."""
    if response == "gaussian":
        if c is not None:
            raise ValueError("c is the logistic response's constant; response='gaussian' "
                             "takes s2 and learn_s2")
        noise = Gaussian(1.0 if s2 is None else s2, True if learn_s2 is None else learn_s2)
        return SHDPModel("shdp-map", num_topics, noise, ("regression",), alpha, gamma, beta,
                         nu2, center=center, eta_map=True)
    if response == "logistic":
        if s2 is not None or learn_s2 is not None:
            raise ValueError("s2 and learn_s2 belong to response='gaussian'; "
                             "response='logistic' takes c")
        return SHDPModel("shdp-map", num_topics, Logistic(1.0 if c is None else c),
                         ("binary", "multilabel"), alpha, gamma, beta, nu2, eta_map=True)
    raise ValueError(f"response must be 'gaussian' or 'logistic', got {response!r}")


def hdp(num_topics: int = 10, *, alpha: float = 1.0, gamma: float = 1.0,
        beta: float = 0.01) -> SHDPModel:
    """The unsupervised hierarchical Dirichlet process (direct assignment)."""
    return SHDPModel("hdp", num_topics, None, (), alpha, gamma, beta)
