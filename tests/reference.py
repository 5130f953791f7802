"""Reference samplers in plain Python and NumPy: slow, obviously right, sharing nothing with the
package.

Each takes its uniforms from the caller, so a test can hand it the very uniforms a fast sampler
draws from its seed (numba's ``np.random.seed(s); np.random.random()`` is NumPy's legacy
Mersenne Twister stream, the same as ``np.random.RandomState(s).random_sample()``) and compare
the two draw by draw. Every conditional is recomputed from scratch, from the assignments alone:
no running counts, no tables, no incremental scores.

A token's topic is drawn by inversion: the first k whose cumulative probability exceeds u.
"""

from __future__ import annotations

import numpy as np


def _draw(weights: np.ndarray, u: float) -> int:
    """The first k with sum_{j <= k} w_j > u sum_j w_j (the last k if rounding leaves none)."""
    cumulative = np.cumsum(weights)
    above = np.nonzero(cumulative > u * cumulative[-1])[0]
    return int(above[0]) if len(above) else len(weights) - 1


def collapsed_conditional(z, n, words, doc_offsets, eta, psi, rho, alpha, beta, vocab_size,
                          num_topics):
    """Unnormalised p(z_n = k | z_-n, W, eta, psi, rho) for k = 0..K-1 (float64 [K]).

        (n_dk + alpha) (n_wk + beta) / (n_k + V beta)
          * prod_t exp(psi_td omega_t(k) - rho_td omega_t(k)^2 / 2),
        omega_t(k) = (eta_tk + sum_{m in d, m != n} eta_{t, z_m}) / N_d,

    every count over the tokens other than n. eta [T, K], psi and rho [T, D] (T may be 0).
    """
    z = np.asarray(z)
    words = np.asarray(words)
    d = int(np.searchsorted(doc_offsets, n, side="right") - 1)
    start, end = int(doc_offsets[d]), int(doc_offsets[d + 1])
    others = np.ones(len(z), bool)
    others[n] = False
    in_doc = np.zeros(len(z), bool)
    in_doc[start:end] = True
    topics = np.arange(num_topics)
    n_dk = np.array([np.sum(others & in_doc & (z == k)) for k in topics], np.float64)
    n_wk = np.array([np.sum(others & (words == words[n]) & (z == k)) for k in topics],
                    np.float64)
    n_k = np.array([np.sum(others & (z == k)) for k in topics], np.float64)
    log_w = np.log(n_dk + alpha) + np.log(n_wk + beta) - np.log(n_k + vocab_size * beta)
    length = end - start
    for t in range(len(eta)):
        rest = sum(eta[t][z[m]] for m in range(start, end) if m != n)
        omega = (np.asarray(eta[t], np.float64) + rest) / length
        log_w = log_w + psi[t][d] * omega - rho[t][d] * omega**2 / 2
    return np.exp(log_w - log_w.max())


def collapsed_sweep(z, words, doc_offsets, eta, psi, rho, alpha, beta, vocab_size,
                    num_topics, uniforms):
    """One systematic-scan sweep over the tokens in order, token n using ``uniforms[n]``.

    Returns the new assignments (a copy); the counts follow from them.
    """
    z = np.array(z, np.int64)
    eta, psi, rho = (np.asarray(a, np.float64) for a in (eta, psi, rho))
    for n in range(len(z)):
        weights = collapsed_conditional(z, n, words, doc_offsets, eta, psi, rho, alpha, beta,
                                        vocab_size, num_topics)
        z[n] = _draw(weights, uniforms[n])
    return z


def counts(z, words, doc_offsets, vocab_size, num_topics):
    """n_dk [D, K], n_wk [V, K], n_k [K] of assignments z, by direct counting."""
    num_docs = len(doc_offsets) - 1
    n_dk = np.zeros((num_docs, num_topics), np.int64)
    n_wk = np.zeros((vocab_size, num_topics), np.int64)
    for d in range(num_docs):
        for n in range(doc_offsets[d], doc_offsets[d + 1]):
            n_dk[d, z[n]] += 1
            n_wk[words[n], z[n]] += 1
    return n_dk, n_wk, n_dk.sum(0)


def held_out_chain(words, doc_offsets, phi_wk, alpha, num_burnin, num_draws, lag, rng):
    """Test-document topics with the topics Phi fixed and no response (JMLR eq. 15).

    Document by document: each token's topic starts at ``rng.randint(K)``; then sweeps, each
    token drawn from p(z_n = k | z_-n) propto (n_dk^-n + alpha) phi_{w_n k} with ``rng``'s
    next uniform; after ``num_burnin`` sweeps every ``lag``-th sweep is kept. ``rng`` is a
    ``np.random.RandomState``. Returns zbar [num_draws, D, K] (1/K rows for empty documents).
    """
    phi_wk = np.asarray(phi_wk, np.float64)
    num_topics = phi_wk.shape[1]
    num_docs = len(doc_offsets) - 1
    out = np.zeros((num_draws, num_docs, num_topics))
    for d in range(num_docs):
        doc = [int(w) for w in words[doc_offsets[d]:doc_offsets[d + 1]]]
        if not doc:
            out[:, d] = 1.0 / num_topics
            continue
        z = [int(rng.randint(num_topics)) for _ in doc]
        kept = 0
        for sweep in range(1, num_burnin + num_draws * lag + 1):
            for i, w in enumerate(doc):
                others = z[:i] + z[i + 1:]
                weights = np.array([(others.count(k) + alpha) * phi_wk[w, k]
                                    for k in range(num_topics)])
                z[i] = _draw(weights, rng.random_sample())
            if sweep > num_burnin and (sweep - num_burnin) % lag == 0:
                out[kept, d] = np.bincount(z, minlength=num_topics) / len(doc)
                kept += 1
    return out


def coordinatewise_eta_pass(eta, zbar, psi, rho, nu2, normals):
    """One coordinate-wise Gibbs pass over eta's topics in dense float64: for k = 0..K-1, eta_tk
    from its Gaussian conditional given the other coordinates (the update of
    ``kernels.eta.draw_eta_coordinatewise``), with the caller's standard normals [K, T].

    eta [T, K], zbar [D, K], psi and rho [T, D], nu2 the prior variance. Returns (eta float64
    [T, K] after the pass, each coordinate's conditional precision float64 [T, K])."""
    eta = np.array(eta, np.float64)
    zbar, psi, rho = (np.asarray(a, np.float64) for a in (zbar, psi, rho))
    precision = 1.0 / nu2 + rho @ zbar**2
    linear = psi @ zbar
    omega = eta @ zbar.T
    for k in range(zbar.shape[1]):
        old = eta[:, k].copy()
        gradient = (rho * omega) @ zbar[:, k]
        mean = (linear[:, k] - gradient + old * (precision[:, k] - 1.0 / nu2)) / precision[:, k]
        eta[:, k] = mean + normals[k] / np.sqrt(precision[:, k])
        omega += (eta[:, k] - old)[:, None] * zbar[:, k][None, :]
    return eta, precision
