"""The classifier weights eta given everything else: one Gaussian draw per task.

With the Gaussian-form factors of every document (``models.responses``), eta_t has precision

    P = I / nu^2 + sum_d rho_td zbar_d zbar_d^T,   mean = P^-1 sum_d psi_td zbar_d.

P is never formed. The upper-triangular factor R with R^T R = P is the R of a QR factorisation
of the stacked matrix [sqrt(rho) * zbar; I / nu] ([D+K, K]), whose condition number is the
square root of P's, so the draw stays finite in float32 even when rho spans many orders of
magnitude (c = 256; a hinge augmentation with the margin near 0). Cost O((D + K) K^2) per task.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular


def eta_conditional_factor(zbar, psi, rho, nu2: float):
    """Upper-triangular R (R^T R = precision) and the mean, for one task.

    Args:
      zbar: float32 [D, K] topic proportions; psi, rho: float32 [D]; nu2: prior variance.
    Returns (R [K, K], mean [K]).
    """
    num_topics = zbar.shape[1]
    stacked = jnp.concatenate(
        [zbar * jnp.sqrt(rho)[:, None], jnp.eye(num_topics, dtype=zbar.dtype) / jnp.sqrt(nu2)]
    )
    r = jnp.linalg.qr(stacked, mode="r")
    b = zbar.T @ psi
    mean = solve_triangular(r, solve_triangular(r, b, trans="T", lower=False), lower=False)
    return r, mean


def draw_eta(key, zbar, psi, rho, nu2: float):
    """Draw eta [T, K] from its Gaussian conditional, independently per task.

    Args:
      key: JAX PRNG key; zbar: float32 [D, K]; psi, rho: float32 [T, D]; nu2: prior variance.
    """

    def one_task(task_key, psi_t, rho_t):
        r, mean = eta_conditional_factor(zbar, psi_t, rho_t, nu2)
        noise = jax.random.normal(task_key, mean.shape, mean.dtype)
        return mean + solve_triangular(r, noise, lower=False)

    keys = jax.random.split(key, psi.shape[0])
    return jax.vmap(one_task)(keys, psi, rho)
