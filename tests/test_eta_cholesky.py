"""The float64 host draw of eta (``kernels.eta.draw_eta_cholesky``): the sHDP's eta block and
the parametric family's ``exact:eta=cholesky``.

On small random problems whose rho spans 1e-6..1e6 (the range that breaks the float32 QR), with
an empty topic and two tasks, the draw is checked against the dense float64 formula
P = I / nu2 + Zbar^T diag(rho) Zbar, mean P^-1 Zbar^T psi, written here with numpy:

* the conditional's mean (``noise=False``) equals it to rounding, in posterior standard
  deviations;
* draws whitened by the exact factor, u = L^T (eta - mean) with P = L L^T, are N(0, I): the
  z-scores of their means and of their second moments (every entry of E[u u^T] - I) are
  small (measured max |z| 2.0 over 40 statistics and 1.7 over 28, 20,000 draws);
* all K topics are drawn in the parametric case, an empty one from its prior N(0, nu2), and
  only the occupied ones in the sHDP case (0 on empty slots);
* mutants of the package's own function (its source with one line changed: the empty topics
  skipped in the parametric case, psi's sign flipped) fail these checks.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mutants import mutant
from topiczoo.kernels import eta as eta_module
from topiczoo.kernels.eta import draw_eta_cholesky, eta_cholesky_host

pytestmark = pytest.mark.slow  # statistical: moments of 20,000 draws

NU2 = 2.0
NUM_DRAWS = 20_000
Z_BOUND = 5.0  # on about 54 statistics, each N(0, 1) under the null


def _problem(seed=0, num_docs=30, capacity=5, empty=(3,), num_tasks=2):
    """Tokens with topic ``empty`` never used; psi, rho [T, D] with rho in 1e-6..1e6."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 12, num_docs)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    used = np.setdiff1d(np.arange(capacity), empty)
    z = rng.choice(used, size=lengths.sum(), p=rng.dirichlet(np.ones(len(used)))).astype(np.int32)
    n_k = np.bincount(z, minlength=capacity).astype(np.int32)
    rho = 10.0 ** rng.uniform(-6, 6, (num_tasks, num_docs))
    psi = rng.normal(size=(num_tasks, num_docs)) * np.sqrt(rho) + rho * rng.normal(
        size=(num_tasks, 1))
    return z, offsets, n_k, psi.astype(np.float32).astype(np.float64), \
        rho.astype(np.float32).astype(np.float64)


def _dense(z, offsets, n_k, psi, rho, topics):
    """The dense float64 formula over the slots ``topics``: means [T, K'], factors L [T, K', K']."""
    num_docs = len(offsets) - 1
    doc = np.repeat(np.arange(num_docs), np.diff(offsets))
    counts = np.zeros((num_docs, len(n_k)))
    np.add.at(counts, (doc, z), 1.0)
    zbar = (counts / np.maximum(counts.sum(1, keepdims=True), 1))[:, topics]
    means, factors = [], []
    for psi_t, rho_t in zip(psi, rho):
        precision = np.eye(len(topics)) / NU2 + (zbar.T * rho_t) @ zbar
        means.append(np.linalg.solve(precision, zbar.T @ psi_t))
        factors.append(np.linalg.cholesky(precision))
    return np.array(means), np.array(factors)


def _check(z, offsets, n_k, psi, rho, *, skip_empty):
    """Raises AssertionError if the host draw is not the conditional (module docstring)."""
    topics = np.flatnonzero(n_k > 0) if skip_empty else np.arange(len(n_k))
    others = np.setdiff1d(np.arange(len(n_k)), topics)
    mean, factor = _dense(z, offsets, n_k, psi, rho, topics)
    sd = np.sqrt(np.array([np.diag(np.linalg.inv(f @ f.T)) for f in factor]))
    host_mean = eta_cholesky_host(z, offsets, n_k, psi, rho, NU2, skip_empty=skip_empty,
                                  noise=False)
    err = np.abs(host_mean[:, topics] - mean) / sd
    assert err.max() < 1e-6, f"mean off by {err.max():.2e} posterior sd"
    draws = np.array([eta_cholesky_host(z, offsets, n_k, psi, rho, NU2, seed,
                                        skip_empty=skip_empty) for seed in range(NUM_DRAWS)])
    assert np.all(draws[:, :, others] == 0.0)
    u = np.einsum("tab,ntb->nta", factor.transpose(0, 2, 1), draws[:, :, topics] - mean)
    se = 1.0 / np.sqrt(NUM_DRAWS)
    z_mean = u.mean(0) / se
    upper = np.triu_indices(len(topics))
    second = (u[..., :, None] * u[..., None, :])[..., upper[0], upper[1]]
    target = np.eye(len(topics))[upper]
    spread = np.maximum(second.std(0), 1e-12)  # a coordinate stuck at its mean: z huge
    z_second = (second.mean(0) - target) / (spread / np.sqrt(NUM_DRAWS))
    scores = np.concatenate([z_mean.ravel(), z_second.ravel()])
    print(f"max |z| {np.abs(scores).max():.2f} over {scores.size} statistics")
    assert np.abs(scores).max() < Z_BOUND, f"max |z| {np.abs(scores).max():.1f}"
    return draws


def test_parametric_draw_is_the_dense_conditional_with_the_empty_topic_from_its_prior():
    z, offsets, n_k, psi, rho = _problem()
    assert n_k[3] == 0 and rho.min() < 1e-5 and rho.max() > 1e5
    draws = _check(z, offsets, n_k, psi, rho, skip_empty=False)
    empty = draws[:, :, 3]  # its prior: mean 0, variance nu2
    assert abs(empty.mean()) < 5 * np.sqrt(NU2 / empty.size)
    assert abs(empty.var() / NU2 - 1) < 5 * np.sqrt(2 / empty.size)


def test_shdp_draw_covers_the_occupied_topics_only():
    z, offsets, n_k, psi, rho = _problem(seed=1, capacity=6, empty=(0, 4))
    _check(z, offsets, n_k, psi, rho, skip_empty=True)


MUTANTS = {
    "empty-topics-skipped": [("if n_k[k] > 0 or not skip_empty:", "if n_k[k] > 0:")],
    "psi-sign": [("b_all[pa, t] += psi_dt[d, t] * za", "b_all[pa, t] -= psi_dt[d, t] * za")],
}


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutants_fail(monkeypatch, name):
    monkeypatch.setattr(eta_module, "_eta_cholesky",
                        mutant(eta_module._eta_cholesky, MUTANTS[name]))
    z, offsets, n_k, psi, rho = _problem()
    with pytest.raises(AssertionError):
        _check(z, offsets, n_k, psi, rho, skip_empty=False)


def test_jax_draw_is_the_host_draw_chain_by_chain():
    """Under jit and vmap (numpyro's vectorized chains) chain c's draw is the unbatched one,
    and the mean (``noise=False``, no key) is the host's."""
    z, offsets, n_k, psi, rho = _problem(seed=2)
    psi32, rho32 = jnp.asarray(psi, jnp.float32), jnp.asarray(rho, jnp.float32)
    args = (jnp.asarray(z), jnp.asarray(offsets), jnp.asarray(n_k))
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    batched = jax.jit(jax.vmap(lambda k: draw_eta_cholesky(
        k, *args, psi32, rho32, NU2, skip_empty=False)))(keys)
    assert batched.shape == (3, 2, 5) and batched.dtype == jnp.float32
    for c in range(3):
        single = draw_eta_cholesky(keys[c], *args, psi32, rho32, NU2, skip_empty=False)
        np.testing.assert_array_equal(np.asarray(batched[c]), np.asarray(single))
    assert len({np.asarray(b).tobytes() for b in batched}) == 3
    mean = draw_eta_cholesky(None, *args, psi32, rho32, NU2, skip_empty=False, noise=False)
    np.testing.assert_array_equal(np.asarray(mean), eta_cholesky_host(
        z, offsets, n_k, psi, rho, NU2, skip_empty=False, noise=False).astype(np.float32))
