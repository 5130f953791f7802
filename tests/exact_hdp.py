"""Exact posteriors of the (supervised) HDP on tiny corpora, by enumeration.

Written independently of the package (numpy and scipy only). The state is a partition of the
tokens into topics. Its posterior is

    p(partition | W, y)  propto  p_CRF(partition | alpha, gamma) p(W | partition) p(y | partition)

* p_CRF: the Chinese restaurant franchise, by brute force over the table seatings: in each
  document the tokens of each topic sit at tables (every set partition of them), the
  seating of document d has probability alpha^T_d prod_tables (size - 1)! / (alpha)_{N_d}
  (CRP(alpha)), and the M tables of the corpus are partitioned into the K dishes with
  probability gamma^K prod_k (m_k - 1)! / (gamma)_M (CRP(gamma)); summed over all seatings.
  Collected as sum_M C_M alpha^M gamma^K / ((gamma)_M prod_d (alpha)_{N_d}), which also gives
  the integral over Gamma priors of alpha and gamma by 1-D quadratures.
* p(W | partition): each topic's words Dirichlet-multinomial with parameter beta (V words).
* p(y | partition): eta_k ~ N(0, nu2) for every topic and task; omega_d = eta . zbar_d. With
  two documents omega_t = (omega_t1, omega_t2) is a 2-D Gaussian N(0, nu2 Zbar Zbar^T)
  whatever the number of topics, so the integral over eta is a 2-D quadrature over omega of
  the response's ORIGINAL (un-augmented) pseudo-likelihood (a trapezoid grid in the
  whitened coordinates); the Gaussian response is integrated analytically.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import gammaln, logsumexp


def set_partitions(n):
    """All set partitions of n items as canonical label tuples (restricted growth strings)."""
    out = []

    def grow(prefix, top):
        if len(prefix) == n:
            out.append(tuple(prefix))
            return
        for label in range(top + 2):
            grow(prefix + [label], max(top, label))

    grow([], -1)
    return out


def canonical(labels):
    """Relabel in order of first appearance."""
    seen = {}
    return tuple(seen.setdefault(int(k), len(seen)) for k in labels)


# ---------------------------------------------------------------------------------------------
# The Chinese restaurant franchise


def _seatings(size):
    """(tables, prod (table size - 1)!) of every set partition of ``size`` customers."""
    out = []
    for part in set_partitions(size):
        sizes = np.bincount(part)
        out.append((len(sizes), math.prod(math.factorial(s - 1) for s in sizes)))
    return out


def crf_coefficients(partition, doc_ids):
    """{M: C_M}: p_CRF(partition) = sum_M C_M alpha^M gamma^K / ((gamma)_M prod_d (alpha)_N_d).

    Brute force: every combination of seatings of every (document, topic) block.
    """
    partition = np.asarray(partition)
    doc_ids = np.asarray(doc_ids)
    topics = sorted(set(partition.tolist()))
    blocks = [(k, int(np.sum((partition == k) & (doc_ids == d))))
              for k in topics for d in sorted(set(doc_ids.tolist()))]
    blocks = [(k, s) for k, s in blocks if s > 0]
    coef = {}
    for choice in itertools.product(*[_seatings(s) for _, s in blocks]):
        tables = {k: 0 for k in topics}
        weight = 1
        for (k, _), (num, w) in zip(blocks, choice):
            tables[k] += num
            weight *= w
        weight *= math.prod(math.factorial(m - 1) for m in tables.values())
        total = sum(tables.values())
        coef[total] = coef.get(total, 0) + weight
    return coef


def _log_rising(x, n):
    return gammaln(x + n) - gammaln(x)


def log_crf_prior(partition, doc_ids, alpha, gamma):
    """log p_CRF(partition | alpha, gamma); alpha, gamma scalars or broadcastable arrays."""
    alpha, gamma = np.asarray(alpha, float), np.asarray(gamma, float)
    num_topics = len(set(partition))
    lengths = np.bincount(np.asarray(doc_ids))
    terms = [math.log(c) + m * np.log(alpha) + num_topics * np.log(gamma) - _log_rising(gamma, m)
             for m, c in crf_coefficients(partition, doc_ids).items()]
    return logsumexp(np.stack(terms), axis=0) - sum(_log_rising(alpha, n) for n in lengths)


# ---------------------------------------------------------------------------------------------
# Words and responses


def log_words(partition, words, vocab_size, beta):
    partition, words = np.asarray(partition), np.asarray(words)
    out = 0.0
    for k in set(partition.tolist()):
        counts = np.bincount(words[partition == k], minlength=vocab_size)
        out += (gammaln(vocab_size * beta) - gammaln(counts.sum() + vocab_size * beta)
                + np.sum(gammaln(counts + beta) - gammaln(beta)))
    return out


def zbar(partition, doc_ids):
    partition, doc_ids = np.asarray(partition), np.asarray(doc_ids)
    num_topics = partition.max() + 1
    counts = np.zeros((doc_ids.max() + 1, num_topics))
    np.add.at(counts, (doc_ids, partition), 1)
    return counts / counts.sum(1, keepdims=True)


def log_pseudo_likelihood(kind, params, y, omega):
    """The ORIGINAL (un-augmented) log factor of each document. y coded: logistic {0, 1},
    hinge {-1, +1}, regression real."""
    if kind == "logistic":
        c = params["c"]
        return c * (y * omega - np.logaddexp(0.0, omega))
    if kind == "hinge":
        return -2.0 * params["c"] * np.maximum(0.0, params["ell"] - y * omega)
    if kind == "epsilon_insensitive":
        return -2.0 * params["c"] * np.maximum(0.0, np.abs(y - omega) - params["eps"])
    if kind == "gaussian":
        s2 = params["s2"]
        return -0.5 * ((y - omega) ** 2 / s2 + np.log(2 * np.pi * s2))
    raise ValueError(kind)


_GRID = np.linspace(-9.0, 9.0, 1201)
_U1, _U2 = np.meshgrid(_GRID, _GRID, indexing="ij")
_LOG_W = (-0.5 * (_U1**2 + _U2**2) + 2 * np.log(_GRID[1] - _GRID[0])
          - np.log(2 * np.pi)).ravel()
_LOG_W -= logsumexp(_LOG_W)  # trapezoid weights of the standard 2-D normal, normalised


def log_response_marginal(kind, params, y, zbar_, nu2):
    """log of the integral over eta (prior N(0, nu2) per topic and task) of the response factor
    of every task and document. y [T, D] coded, D = 2 (quadrature) or any D (Gaussian)."""
    cov = nu2 * zbar_ @ zbar_.T  # [D, D]
    key = (kind, tuple(sorted(params.items())), np.asarray(y, float).tobytes(),
           np.round(cov, 12).tobytes())
    if key not in _CACHE:
        _CACHE[key] = _log_response_marginal(kind, params, y, cov)
    return _CACHE[key]


_CACHE = {}


def _log_response_marginal(kind, params, y, cov):
    out = 0.0
    for y_t in np.asarray(y, float):
        if kind == "gaussian":
            full = cov + params["s2"] * np.eye(len(y_t))
            _, logdet = np.linalg.slogdet(full)
            out += -0.5 * (y_t @ np.linalg.solve(full, y_t) + logdet + len(y_t) * np.log(2 * np.pi))
            continue
        assert len(y_t) == 2, "the quadrature is over the two documents' scores"
        vals, vecs = np.linalg.eigh(cov)
        root = vecs * np.sqrt(np.maximum(vals, 0.0))  # omega = root @ u
        omega1 = root[0, 0] * _U1 + root[0, 1] * _U2
        omega2 = root[1, 0] * _U1 + root[1, 1] * _U2
        log_f = (log_pseudo_likelihood(kind, params, y_t[0], omega1)
                 + log_pseudo_likelihood(kind, params, y_t[1], omega2))
        out += logsumexp(_LOG_W + log_f.ravel())
    return out


# ---------------------------------------------------------------------------------------------
# Posteriors


def _log_gamma_prior_grid(shape, rate, num=1501):
    """Nodes x = e^s on a fine grid of s and log weights of the Gamma(shape, rate) density
    (times the Jacobian x), normalised to sum to 1."""
    s = np.linspace(-16.0, np.log(60.0 / rate) + 2, num)
    x = np.exp(s)
    log_w = shape * np.log(rate) - gammaln(shape) + shape * s - rate * x
    return x, log_w - logsumexp(log_w)


def exact_hdp_posterior(docs, vocab_size, beta, *, alpha=None, gamma=None, alpha_prior=(1.0, 1.0),
                        gamma_prior=(1.0, 1.0), response=None, y=None, nu2=1.0):
    """Exact posterior over the partitions of the tokens of ``docs`` (lists of word ids).

    alpha / gamma: fixed values, or None to integrate them over Gamma(shape, rate) priors.
    response: None (plain HDP) or (kind, params) with y [T, D] coded as
    :func:`log_pseudo_likelihood` expects.
    Returns (partitions, probabilities, extras) where extras holds the posterior means of
    alpha and gamma when they are integrated.
    """
    words = np.concatenate([np.asarray(d) for d in docs])
    doc_ids = np.repeat(np.arange(len(docs)), [len(d) for d in docs])
    parts = set_partitions(len(words))
    a_nodes, a_logw = ((np.array([alpha]), np.zeros(1)) if alpha is not None
                       else _log_gamma_prior_grid(*alpha_prior))
    g_nodes, g_logw = ((np.array([gamma]), np.zeros(1)) if gamma is not None
                       else _log_gamma_prior_grid(*gamma_prior))
    lengths = np.bincount(doc_ids)
    log_p, log_p_alpha, log_p_gamma = [], [], []
    for part in parts:
        num_topics = len(set(part))
        # separable in alpha and gamma for each number of tables M
        log_a_term = -sum(_log_rising(a_nodes, n) for n in lengths)
        terms, terms_a, terms_g = [], [], []
        for m, c in crf_coefficients(part, doc_ids).items():
            la = a_logw + m * np.log(a_nodes) + log_a_term
            lg = g_logw + num_topics * np.log(g_nodes) - _log_rising(g_nodes, m)
            terms.append(math.log(c) + logsumexp(la) + logsumexp(lg))
            terms_a.append(math.log(c) + logsumexp(la + np.log(a_nodes)) + logsumexp(lg))
            terms_g.append(math.log(c) + logsumexp(la) + logsumexp(lg + np.log(g_nodes)))
        lp = log_words(part, words, vocab_size, beta)
        if response is not None:
            lp += log_response_marginal(response[0], response[1], y, zbar(part, doc_ids), nu2)
        log_p.append(logsumexp(terms) + lp)
        log_p_alpha.append(logsumexp(terms_a) + lp)
        log_p_gamma.append(logsumexp(terms_g) + lp)
    log_p = np.asarray(log_p)
    norm = logsumexp(log_p)
    extras = {"alpha_mean": float(np.exp(logsumexp(log_p_alpha) - norm)),
              "gamma_mean": float(np.exp(logsumexp(log_p_gamma) - norm))}
    return parts, np.exp(log_p - norm), extras


def total_variation(p, q):
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


# ---------------------------------------------------------------------------------------------
# A test document given the training topics (prediction, the paper's eq 18)


def exact_test_document_counts(words, phi, beta_w, beta_new, alpha, gamma, beta):
    """Exact distribution of how many tokens of one test document sit in each training topic.

    The training topics a = 0..A-1 are fixed: word distributions phi [V, A] and global weights
    beta_w [A]; the rest of G0 is beta_new times a DP(gamma, Dir(beta)), whose topics (born in
    the test document) have their word distributions integrated out. The document is
    G_d ~ DP(alpha, G0). By brute force: each token is in a training topic or in a new one
    (every set partition of the new tokens into new topics); in each topic the tokens sit at
    tables (every set partition), the seating has the CRP(alpha) probability alpha^M prod
    (size - 1)! / (alpha)_N; a table's dish is training topic a with probability beta_w[a],
    else new, the new tables' dishes following CRP(gamma): beta_new^{M_new} gamma^{K_new} prod
    (m_k - 1)! / (gamma)_{M_new}. Words: phi[w, a] in a training topic, Dirichlet-multinomial
    (beta) in a new one.

    Returns {(n_0, .., n_{A-1}): probability}.
    """
    words = np.asarray(words)
    phi = np.asarray(phi, float)
    vocab_size, num_train = phi.shape
    n = len(words)
    out = {}
    for kinds in itertools.product(range(num_train + 1), repeat=n):  # num_train: new
        new_tokens = [i for i in range(n) if kinds[i] == num_train]
        for part in set_partitions(len(new_tokens)) if new_tokens else [()]:
            dishes = [[i for i in range(n) if kinds[i] == a] for a in range(num_train)]
            new_dishes = [[new_tokens[j] for j in range(len(new_tokens)) if part[j] == b]
                          for b in range(len(set(part)))]
            log_words_ = sum(math.log(phi[words[i], a]) for a in range(num_train)
                             for i in dishes[a])
            log_words_ += sum(log_words([0] * len(d), words[d], vocab_size, beta)
                              for d in new_dishes)
            prior = 0.0
            seatings = [_seatings(len(d)) for d in dishes + new_dishes]
            for choice in itertools.product(*seatings):
                tables = [t for t, _ in choice]
                weight = math.prod(w for _, w in choice)
                m_new = sum(tables[num_train:])
                prior += (weight * alpha ** sum(tables)
                          * math.prod(beta_w[a] ** tables[a] for a in range(num_train))
                          * beta_new ** m_new * gamma ** len(new_dishes)
                          * math.prod(math.factorial(m - 1) for m in tables[num_train:])
                          / math.exp(_log_rising(gamma, m_new)))
            prior /= math.exp(_log_rising(alpha, n))
            key = tuple(len(d) for d in dishes)
            out[key] = out.get(key, 0.0) + prior * math.exp(log_words_)
    total = sum(out.values())
    return {k: v / total for k, v in out.items()}
