"""The sHDP's global block, one rule at a time, against exact distributions.

``kernels.hdp.globals._hdp_global`` draws the table counts m | z, beta, alpha (Antoniak), gamma | K,
m.. (Escobar and West's auxiliary variable), beta | m, gamma and alpha | m.., N_d (Teh et al.'s
auxiliary variables). The enumeration and Geweke tests of ``test_shdp.py`` see these rules
only through the whole chain, where an Antoniak off-by-one shows up faintly and a wrong
auxiliary draw hardly at all. Here each is checked on its own, with independent samples:

* **tables**: one document whose n tokens all sit at one topic; m follows Antoniak's law
  P(m) = |s(n, m)| a^m Gamma(a) / Gamma(a + n), a = alpha beta_k (unsigned Stirling numbers of
  the first kind), for a from 0.01 to 100;
* **gamma**: with every document's tokens at distinct topics the tables are deterministic
  (m_dk = n_dk) and p(gamma | K, m..) is proportional to the Gamma prior times
  gamma^K Gamma(gamma) / Gamma(gamma + m..). gamma_0 drawn from it exactly (inverse CDF on a
  fine grid), one update: gamma_1 must follow it too (stationarity, Kolmogorov-Smirnov);
* **alpha**, with the tables drawn in the same call: (alpha, m) | z, beta has alpha-marginal
  prior x prod_d Gamma(alpha) / Gamma(alpha + N_d) x prod_{d,k} Gamma(alpha beta_k + n_dk) /
  Gamma(alpha beta_k); alpha_0 from it, one call (Antoniak, then alpha | m): alpha_1 too.

Each test also runs a planted bug (``shdp_mutants.GLOBAL_MUTANTS``) and requires it to fail by a
wide margin.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

import shdp_mutants
from topiczoo.kernels.hdp import globals as hdp_globals

NUM_SAMPLES = 20_000
P_PASS = 1e-3  # the package must give a p-value above this (fixed seeds: deterministic)
P_MUTANT = 1e-8  # and each mutant one below this


def _global_call(z, doc_offsets, beta_w, alpha, gamma, *, learn_alpha, learn_gamma, seed,
                 prior=(1.0, 1.0), mutant=None):
    """One call of the global block on copies (the package's, or the named mutant's): (m_k,
    alpha, gamma) after it."""
    capacity = beta_w.shape[0]
    n_k = np.bincount(z, minlength=capacity).astype(np.int32)
    beta_w = np.array(beta_w, np.float64)
    globals_ = np.array([alpha, gamma, 0.0])
    m_k = np.zeros(capacity, np.int32)
    call = hdp_globals._hdp_global if mutant is None else shdp_mutants.global_mutant(mutant)
    call(z, doc_offsets, n_k, beta_w, globals_, m_k, learn_alpha, learn_gamma, prior[0],
         prior[1], prior[0], prior[1], seed)
    return m_k, globals_[0], globals_[1]


def _corpus(docs):
    """(z int32 [N], doc_offsets int32 [D+1]) of documents given as lists of topics."""
    z = np.array([k for doc in docs for k in doc], np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(doc) for doc in docs])]).astype(np.int32)
    return z, offsets


# ---------------------------------------------------------------------------------------------
# Table counts


def _antoniak_pmf(n, a):
    """P(m = 1..n) of the number of tables of n customers, concentration a."""
    stirling = np.zeros((n + 1, n + 1))  # unsigned Stirling numbers of the first kind
    stirling[0, 0] = 1.0
    for i in range(1, n + 1):
        for m in range(1, i + 1):
            stirling[i, m] = stirling[i - 1, m - 1] + (i - 1) * stirling[i - 1, m]
    m = np.arange(1, n + 1)
    log_p = (np.log(stirling[n, 1:]) + m * math.log(a) + special.gammaln(a)
             - special.gammaln(a + n))
    return np.exp(log_p)


def _table_counts(n, alpha, beta_k, mutant=None):
    z, offsets = _corpus([[0] * n])
    beta_w = np.array([beta_k, 0.0])
    return np.array([_global_call(z, offsets, beta_w, alpha, 1.0, learn_alpha=False,
                                  learn_gamma=False, seed=seed, mutant=mutant)[0][0]
                     for seed in range(NUM_SAMPLES)])


def _chi_square_p(samples, pmf):
    """p-value of a chi-square test of samples in 1..n against pmf (cells of expected count
    below 5 pooled into their neighbour)."""
    observed = np.bincount(samples - 1, minlength=pmf.shape[0]).astype(float)
    expected = pmf * samples.shape[0]
    cells_o, cells_e, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(observed, expected):
        acc_o += o
        acc_e += e
        if acc_e >= 5.0:
            cells_o.append(acc_o)
            cells_e.append(acc_e)
            acc_o = acc_e = 0.0
    cells_o[-1] += acc_o
    cells_e[-1] += acc_e
    return stats.chisquare(cells_o, np.array(cells_e) * sum(cells_o) / sum(cells_e)).pvalue


@pytest.mark.parametrize("n, alpha, beta_k", [(8, 0.1, 0.1), (8, 2.0, 0.5), (30, 6.0, 0.5),
                                              (8, 200.0, 0.5)])
def test_table_counts_follow_antoniak(n, alpha, beta_k):
    pmf = _antoniak_pmf(n, alpha * beta_k)
    p = _chi_square_p(_table_counts(n, alpha, beta_k), pmf)
    print(f"n={n} a={alpha * beta_k}: p {p:.3g}")
    assert p > P_PASS


def test_table_counts_detect_off_by_one():
    """ab / (ab + i + 1) for customer i + 1: E[m] moves by about 0.1 at n = 8, a = 1."""
    pmf = _antoniak_pmf(8, 1.0)
    assert _chi_square_p(_table_counts(8, 2.0, 0.5), pmf) > P_PASS
    p = _chi_square_p(_table_counts(8, 2.0, 0.5, "tables-off-by-one"), pmf)
    print(f"off-by-one mutant: p {p:.3g}")
    assert p < P_MUTANT


# ---------------------------------------------------------------------------------------------
# Concentrations: one update from the exact conditional must stay in it


def _exact_sampler(log_density, lo=-20.0, hi=9.0, size=200_001):
    """(draw(rng, num), cdf) of the density on x > 0 given by log_density(x) (unnormalised),
    by the inverse CDF on a grid of log x (the mass outside [e^lo, e^hi] is negligible for
    every case below: checked by the density at the ends)."""
    u = np.linspace(lo, hi, size)
    x = np.exp(u)
    log_w = log_density(x) + u  # the density of log x
    w = np.exp(log_w - log_w.max())
    assert w[0] < 1e-6 and w[-1] < 1e-12, "grid too narrow"
    cum = np.concatenate([[0.0], np.cumsum((w[1:] + w[:-1]) / 2)])
    cum /= cum[-1]

    def draw(rng, num):
        return np.exp(np.interp(rng.random(num), cum, u))

    def cdf(values):
        return np.interp(np.log(values), u, cum)

    return draw, cdf


def _gamma_log_prior(x, prior):
    return (prior[0] - 1.0) * np.log(x) - prior[1] * x


def _distinct_topics(num_topics, num_tables):
    """Documents of distinct topics: token t at topic t % K, documents of K tokens (the last
    shorter), so every (document, topic) pair holds one token and the tables are exact."""
    topics = [t % num_topics for t in range(num_tables)]
    return _corpus([topics[i:i + num_topics] for i in range(0, num_tables, num_topics)])


def _gamma_after_update(num_topics, num_tables, prior, mutant):
    z, offsets = _distinct_topics(num_topics, num_tables)
    beta_w = np.full(num_topics + 1, 1.0 / (num_topics + 1))

    def log_density(g):
        return (_gamma_log_prior(g, prior) + num_topics * np.log(g) + special.gammaln(g)
                - special.gammaln(g + num_tables))

    draw, cdf = _exact_sampler(log_density)
    start = draw(np.random.default_rng(1), NUM_SAMPLES)
    after = np.array([_global_call(z, offsets, beta_w, 1.0, g, learn_alpha=False,
                                   learn_gamma=True, seed=seed, prior=prior, mutant=mutant)[2]
                      for seed, g in enumerate(start)])
    return stats.kstest(after, cdf).pvalue


@pytest.mark.parametrize("num_topics, num_tables, prior", [
    (1, 1, (1.0, 1.0)),      # the posterior is the prior
    (2, 40, (1.0, 1.0)),     # few topics, many tables: gamma small
    (2, 2000, (1.0, 1.0)),   # the same, more so
    (30, 40, (1.0, 1.0)),    # nearly a topic per table: gamma large
    (5, 12, (2.0, 0.5)),     # another prior
])
def test_gamma_update_keeps_its_conditional(num_topics, num_tables, prior):
    p = _gamma_after_update(num_topics, num_tables, prior, None)
    print(f"K={num_topics} m={num_tables} prior {prior}: KS p {p:.3g}")
    assert p > P_PASS


def test_gamma_update_detects_wrong_auxiliary():
    """x ~ Beta(gamma, m..) in place of Beta(gamma + 1, m..)."""
    p = _gamma_after_update(5, 12, (1.0, 1.0), "gamma-auxiliary")
    print(f"gamma auxiliary mutant: KS p {p:.3g}")
    assert p < P_MUTANT


def _alpha_after_update(docs, beta_w, prior, mutant):
    z, offsets = _corpus(docs)
    beta_w = np.asarray(beta_w, np.float64)
    lengths = np.diff(offsets)
    n_dk = [np.bincount(doc, minlength=beta_w.shape[0]) for doc in docs]

    def log_density(a):
        a = a[:, None]
        out = _gamma_log_prior(a[:, 0], prior)
        for n_d, counts in zip(lengths, n_dk):
            occupied = counts > 0
            ab = a * beta_w[None, occupied]
            out = out + special.gammaln(a[:, 0]) - special.gammaln(a[:, 0] + n_d) + np.sum(
                special.gammaln(ab + counts[None, occupied]) - special.gammaln(ab), axis=1)
        return out

    draw, cdf = _exact_sampler(log_density)
    start = draw(np.random.default_rng(2), NUM_SAMPLES)
    after = np.array([_global_call(z, offsets, beta_w, a, 1.0, learn_alpha=True,
                                   learn_gamma=False, seed=seed, prior=prior, mutant=mutant)[1]
                      for seed, a in enumerate(start)])
    return stats.kstest(after, cdf).pvalue


ALPHA_CASES = {
    # repeated topics: the tables are random, drawn in the same call from alpha_0
    "mixed": ([[0, 0, 1, 0, 2], [1, 1, 1], [2, 0]], [0.5, 0.2, 0.2, 0.1], (1.0, 1.0)),
    # one long document at one topic: alpha small
    "one topic": ([[0] * 40], [0.9, 0.1], (1.0, 1.0)),
    # short documents, distinct topics: alpha large
    "distinct": ([[0, 1, 2], [3, 4], [5, 6, 7], [8]], [0.1] * 10, (2.0, 0.5)),
}


@pytest.mark.parametrize("case", ALPHA_CASES)
def test_alpha_update_keeps_its_conditional(case):
    p = _alpha_after_update(*ALPHA_CASES[case], None)
    print(f"{case}: KS p {p:.3g}")
    assert p > P_PASS


@pytest.mark.parametrize("mutant", ["alpha-auxiliary", "tables-off-by-one"])
def test_alpha_update_detects_mutants(mutant):
    """s_d ~ Bernoulli(alpha / (N_d + alpha)) in place of N_d / (N_d + alpha); and the tables'
    off-by-one, which biases the m.. that alpha is drawn from."""
    p = _alpha_after_update(*ALPHA_CASES["mixed"], mutant)
    print(f"mutant {mutant}: KS p {p:.3g}")
    assert p < P_MUTANT
