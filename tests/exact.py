"""Exact posteriors of tiny topic models by enumeration: an oracle independent of the package.

Nothing here comes from ``topiczoo``: the corpus is a list of word-id lists, the labels are raw
(0/1, class ids or ratings), and the Dirichlet parameters, the prior of eta and every response's
ORIGINAL (un-augmented) pseudo-likelihood are written below from the papers:

* LDA with theta_d ~ Dir(alpha/K 1_K) (the papers' alpha is the total concentration: JMLR
  section 6, "alpha = alpha/K 1") and phi_k ~ Dir(beta 1_V), theta and Phi collapsed;
* eta_t ~ N(0, nu2 I_K), one independent weight vector per task;
* logistic (gSLDA eq. 6):       psi(y|omega) = (e^omega)^(c y) / (1 + e^omega)^c,  y in {0, 1};
* hinge (JMLR section 4.2):     phi(y|omega) = exp(-2c max(0, ell - y omega)),    y in {-1, +1};
* eps-insensitive (JMLR 5.1):   phi(y|omega) = exp(-2c max(0, |y - omega| - eps)), y real;
* Gaussian (sLDA):              N(y; omega, s2), s2 fixed, or s2 ~ IG(a0, b0) integrated out;
* multi-class (JMLR 5.2):       one task per class with one-vs-all labels.

p(Z | W, y) is proportional to the collapsed LDA joint p(W, Z) times, per task, the integral
over eta_t of its prior and the task's pseudo-likelihood, by quadrature on a uniform grid
(K = 2: eta_t is two-dimensional; the trapezoidal sum of a Gaussian-weighted integrand on a
grid this fine is exact to far below the Monte Carlo error of any test).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import gammaln, logsumexp

# ---------------------------------------------------------------------------------------------
# The responses' original log pseudo-likelihoods, one task at a time.
# Each is log_factor(y [D], omega [G, D]) -> [G]: summed over the task's documents.


def logistic(c):
    """gSLDA eq. 6: log[(e^omega)^(c y) / (1 + e^omega)^c] = c (y omega - log(1 + e^omega))."""

    def log_factor(y, omega):
        return (c * (y * omega - np.logaddexp(0.0, omega))).sum(-1)

    return log_factor


def hinge(c, ell):
    """JMLR section 4.2: -2c max(0, zeta), zeta = ell - y omega, y in {-1, +1}."""

    def log_factor(y, omega):
        return (-2.0 * c * np.maximum(0.0, ell - y * omega)).sum(-1)

    return log_factor


def eps_insensitive(c, eps):
    """JMLR section 5.1: -2c max(0, |y - omega| - eps)."""

    def log_factor(y, omega):
        return (-2.0 * c * np.maximum(0.0, np.abs(y - omega) - eps)).sum(-1)

    return log_factor


def gaussian(s2):
    """sLDA: log N(y; omega, s2)."""

    def log_factor(y, omega):
        return (-0.5 * (y - omega) ** 2 / s2 - 0.5 * np.log(2 * np.pi * s2)).sum(-1)

    return log_factor


def gaussian_unknown_variance(a0, b0):
    """log of int IG(s2; a0, b0) prod_d N(y_d; omega_d, s2) ds2 (one s2 per task):
    b0^a0 / Gamma(a0) Gamma(a0 + D/2) / (b0 + RSS/2)^(a0 + D/2) (2 pi)^(-D/2)."""

    def log_factor(y, omega):
        rss = ((y - omega) ** 2).sum(-1)
        n = y.shape[-1]
        return (a0 * np.log(b0) - gammaln(a0) + gammaln(a0 + n / 2)
                - (a0 + n / 2) * np.log(b0 + rss / 2) - n / 2 * np.log(2 * np.pi))

    return log_factor


# ---------------------------------------------------------------------------------------------
# A tiny problem, stated with plain numbers


@dataclass(frozen=True)
class Problem:
    """A tiny corpus with K = 2 topics and its model, as the papers write it.

    response: None (LDA), "logistic", "hinge", "eps", "gaussian" or "gaussian-s2" (s2 ~ IG(a0,
      b0) integrated out).
    labels: [D] (one task; class ids for ``multiclass``) or [T][D] (several tasks), raw:
      0/1 for the classifiers, real ratings for regression.
    alpha: the papers' total concentration (theta_d ~ Dir(alpha/K)); beta per word.
    """

    docs: tuple
    vocab_size: int
    alpha: float
    beta: float
    response: str | None = None
    labels: tuple | None = None
    nu2: float = 1.0
    c: float = 1.0
    ell: float = 1.0
    eps: float = 0.0
    s2: float = 1.0
    a0: float = 1.0
    b0: float = 1.0
    multiclass: int = 0  # number of classes when ``labels`` are class ids
    # extra log factor tilt * y * omega (y coded as below; y - 1/2 for the logistic): the exact
    # target of a kernel whose linear coefficient psi is off by a label term that does not
    # involve the augmentation, e.g. the logistic kappa or the hinge's c y written without c
    tilt: float = 0.0
    num_topics: int = 2
    # the power of the word likelihood p(W | Z) (1: the posterior; below 1: the target of a
    # hot replica of replica exchange, ``topiczoo.kernels.tempering``)
    word_power: float = 1.0
    grid_points: int = 301  # per dimension of each eta_t
    grid_half_width: float = 6.0  # in prior standard deviations

    def with_(self, **changes) -> "Problem":
        return replace(self, **changes)

    def task_labels(self) -> np.ndarray:
        """Labels [T, D] in each task's coding: 0/1 (logistic), -1/+1 (hinge), real."""
        y = np.asarray(self.labels, np.float64)
        if self.multiclass:
            y = (y[None, :] == np.arange(self.multiclass)[:, None]).astype(np.float64)
        elif y.ndim == 1:
            y = y[None, :]
        if self.response == "hinge":
            y = 2.0 * y - 1.0
        return y

    def log_factor(self):
        base = self._log_factor()
        if not self.tilt:
            return base
        shift = 0.5 if self.response == "logistic" else 0.0
        return lambda y, omega: base(y, omega) + (self.tilt * (y - shift) * omega).sum(-1)

    def _log_factor(self):
        if self.response == "logistic":
            return logistic(self.c)
        if self.response == "hinge":
            return hinge(self.c, self.ell)
        if self.response == "eps":
            return eps_insensitive(self.c, self.eps)
        if self.response == "gaussian":
            return gaussian(self.s2)
        if self.response == "gaussian-s2":
            return gaussian_unknown_variance(self.a0, self.b0)
        raise ValueError(f"unknown response {self.response!r}")


def configurations(num_tokens, num_topics=2) -> np.ndarray:
    """Every Z, int [K^N, N]; row i is the configuration of index i = sum_n z_n K^n."""
    index = np.arange(num_topics**num_tokens)
    return (index[:, None] // num_topics ** np.arange(num_tokens)) % num_topics


def log_collapsed_lda(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """log p(W, Z) for every Z (theta and Phi integrated out), and n_dk [K^N, D, K].

    p(W, Z) = prod_d B(n_d + a) / B(a) prod_k B(n_k + b) / B(b) with a = alpha/K per topic,
    b = beta per word, B the multivariate beta function; the second product, p(W | Z), raised
    to ``problem.word_power``.
    """
    docs = [list(d) for d in problem.docs]
    k, v = problem.num_topics, problem.vocab_size
    words = np.concatenate([np.asarray(d, np.int64) for d in docs])
    doc_ids = np.repeat(np.arange(len(docs)), [len(d) for d in docs])
    z = configurations(len(words), k)
    a, b = problem.alpha / k, problem.beta
    n_dk = np.stack([(z[:, doc_ids == d, None] == np.arange(k)).sum(1)
                     for d in range(len(docs))], axis=1)  # [M, D, K]
    n_kw = np.stack([(z[:, words == w, None] == np.arange(k)).sum(1)
                     for w in range(v)], axis=2)  # [M, K, V]
    doc_part = (gammaln(k * a) - gammaln(n_dk.sum(2) + k * a)
                + (gammaln(n_dk + a) - gammaln(a)).sum(2)).sum(1)
    topic_part = (gammaln(v * b) - gammaln(n_kw.sum(2) + v * b)
                  + (gammaln(n_kw + b) - gammaln(b)).sum(2)).sum(1)
    return doc_part + problem.word_power * topic_part, n_dk


def _eta_grid(problem: Problem):
    """Grid of eta_t ([G, 2]) and the log prior N(0, nu2 I) at each point (up to a constant)."""
    sd = np.sqrt(problem.nu2)
    axis = np.linspace(-problem.grid_half_width, problem.grid_half_width,
                       problem.grid_points) * sd
    e0, e1 = np.meshgrid(axis, axis, indexing="ij")
    eta = np.stack([e0.ravel(), e1.ravel()], axis=1)
    return eta, -0.5 * (eta**2).sum(1) / problem.nu2


def log_response_integral(problem: Problem, zbar: np.ndarray) -> float:
    """log prod_t int N(eta_t; 0, nu2 I) psi(y_t | eta_t . zbar) d eta_t (up to a constant
    common to every Z) for topic proportions zbar [D, K]."""
    y = problem.task_labels()
    log_factor = problem.log_factor()
    eta, log_prior = _eta_grid(problem)
    omega = eta @ zbar.T  # [G, D]
    norm = logsumexp(log_prior)
    return float(sum(logsumexp(log_prior + log_factor(y_t, omega)) - norm for y_t in y))


def _log_integrals(problem: Problem, n_dk: np.ndarray) -> np.ndarray:
    """:func:`log_response_integral` for many count matrices n_dk [U, D, K] at once.

    The factors are products over documents (but for the Gaussian with s2 integrated out), so
    each document's factor on the grid is computed once per count vector it can have and the
    logs are summed per Z."""
    y = problem.task_labels()
    log_factor = problem.log_factor()
    eta, log_prior = _eta_grid(problem)
    norm = logsumexp(log_prior)
    lengths = n_dk[0].sum(1)
    out = np.zeros(len(n_dk))
    for y_t in y:
        if problem.response == "gaussian-s2":  # one s2 for all documents: no product form
            for u, counts in enumerate(n_dk):
                omega = eta @ (counts / lengths[:, None]).T
                out[u] += logsumexp(log_prior + log_factor(y_t, omega)) - norm
            continue
        per_doc = {}
        for u, counts in enumerate(n_dk):
            total = log_prior.copy()
            for d, row in enumerate(counts):
                key = (d, tuple(row))
                if key not in per_doc:
                    omega_d = eta @ (row / lengths[d])
                    per_doc[key] = log_factor(y_t[d:d + 1], omega_d[:, None])
                total += per_doc[key]
            out[u] += logsumexp(total) - norm
    return out


def exact_posterior(problem: Problem) -> np.ndarray:
    """p(Z | W, y) over all K^N configurations, indexed by sum_n z_n K^n."""
    log_p, n_dk = log_collapsed_lda(problem)
    if problem.response is not None:
        assert problem.num_topics == 2, "the quadrature is two-dimensional per task"
        keys, inverse = np.unique(n_dk.reshape(len(n_dk), -1), axis=0, return_inverse=True)
        log_p = log_p + _log_integrals(problem, keys.reshape((-1,) + n_dk.shape[1:]))[
            inverse.ravel()]
    return np.exp(log_p - logsumexp(log_p))


# ---------------------------------------------------------------------------------------------
# Comparing distributions over Z


def total_variation(p, q, num_topics=2):
    """Total variation between two distributions over configurations of Z, up to relabelling.

    The exact posterior is invariant under permutations of the topic labels; how fast a chain
    moves between the K! relabelled copies of a mode is mixing, not correctness (at c = 9 the
    chain stays in one labelling for thousands of sweeps). So both distributions are first
    summed over each orbit of the label permutations, then compared.
    """
    p, q = np.asarray(p), np.asarray(q)
    num_tokens = round(np.log(len(p)) / np.log(num_topics))
    orbit = _canonical_labelling(num_topics, num_tokens)
    size = orbit.max() + 1
    return 0.5 * np.abs(np.bincount(orbit, p, size) - np.bincount(orbit, q, size)).sum()


def _canonical_labelling(num_topics, num_tokens):
    """For each configuration index, the index of its relabelling in order of first use."""
    digits = configurations(num_tokens, num_topics)
    canonical = np.zeros(len(digits), np.int64)
    for row, z in enumerate(digits):
        relabel = {}
        for topic in z:
            relabel.setdefault(topic, len(relabel))
        canonical[row] = sum(relabel[t] * num_topics**i for i, t in enumerate(z))
    return canonical


def configuration_frequencies(z: np.ndarray, num_topics=2) -> np.ndarray:
    """Frequencies of the configurations of sampled Z ([draws, N]), indexed as above."""
    index = (z * num_topics ** np.arange(z.shape[1])).sum(1)
    return np.bincount(index, minlength=num_topics ** z.shape[1]) / len(index)


def brute_force_posterior(problem: Problem) -> np.ndarray:
    """The same posterior with the simplest loops (Dirichlet-multinomial by sequential Polya urn,
    one configuration at a time): a check of :func:`exact_posterior`'s vectorised counting."""
    docs = [list(d) for d in problem.docs]
    k, v = problem.num_topics, problem.vocab_size
    a, b = problem.alpha / k, problem.beta
    words = [w for d in docs for w in d]
    doc_of = [i for i, d in enumerate(docs) for _ in d]
    log_p = []
    cache = {}
    for config in itertools.product(range(k), repeat=len(words)):
        z = config[::-1]  # itertools varies the last entry fastest; index = sum z_n K^n
        n_dk = np.zeros((len(docs), k))
        n_kw = np.zeros((k, v))
        lp = 0.0
        for n, (d, w, t) in enumerate(zip(doc_of, words, z)):  # the urn: p(z_n, w_n | earlier)
            lp += np.log((n_dk[d, t] + a) / (n_dk[d].sum() + k * a))
            lp += np.log((n_kw[t, w] + b) / (n_kw[t].sum() + v * b))
            n_dk[d, t] += 1
            n_kw[t, w] += 1
        if problem.response is not None:
            key = tuple(n_dk.ravel())
            if key not in cache:
                cache[key] = log_response_integral(problem, n_dk / n_dk.sum(1, keepdims=True))
            lp += cache[key]
        log_p.append(lp)
    log_p = np.asarray(log_p)
    index = np.array([sum(t * k**n for n, t in enumerate(cfg[::-1]))
                      for cfg in itertools.product(range(k), repeat=len(words))])
    p = np.zeros(len(log_p))
    p[index] = np.exp(log_p - logsumexp(log_p))
    return p
