"""The classifier weights eta given everything else: one Gaussian draw per task.

With the Gaussian-form factors of every document (``models.responses``), eta_t has precision

    P = I / nu^2 + sum_d rho_td zbar_d zbar_d^T,   mean = P^-1 sum_d psi_td zbar_d.

P is never formed. The upper-triangular factor R with R^T R = P is the R of a QR factorisation
of the stacked matrix [sqrt(rho) * zbar; I / nu] ([D+K, K]), whose condition number is the
square root of P's, so the draw stays finite in float32 even when rho spans many orders of
magnitude (c = 256; a hinge augmentation with the margin near 0). Cost O((D + K) K^2) per task.

:func:`draw_eta_coordinatewise` (LightMedLDA) is the alternative for large K: one Gibbs pass
over the coordinates of each task, each from its exact univariate conditional, O(D K) per task
and pass. It is a Markov step that leaves the same Gaussian invariant (it needs the current
eta), not an independent draw. On 20news with 20 tasks a pass costs 4 ms at K = 20 and about
0.1 s at K = 400, against 44 ms and 2.5 s for the QR draw (``benchmarks/light_scaling.py``).

:func:`draw_eta_cholesky` is the same independent draw computed on the host in float64 (a
Cholesky of P built from sparse zbar rows read off the tokens, O(sum_d nnz_d^2 / 2 + K^3 / 3)
per task, nnz_d = the distinct topics of document d). The float32 QR loses accuracy when rho
spans many orders of magnitude: on a 20news multi-task MedLDA state at K = 100 (rho up to 2e5,
psi down to -1.3e7) its mean is off by up to 0.44 posterior standard deviations (rms 0.018),
the host draw's by 1.5e-9; with 20 tasks the host draw costs 12 / 33 / 290 ms at
K = 20 / 100 / 400 against 34 / 330 / 2,200 ms for the QR (``benchmarks/eta_precision.py``). The
sHDP (``kernels.hdp``) draws eta with it over its occupied topics only (empty slots 0); the
parametric family's exact sampler by default over all K topics (an empty topic's eta then
comes from its prior N(0, nu2)). :func:`draw_eta` stays as ``exact:eta=qr``: all in XLA, no
host callback.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numba
import numpy as np
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


def draw_eta_coordinatewise(key, eta, zbar, psi, rho, nu2: float, num_sweeps: int = 1):
    """Coordinate-wise Gibbs for eta (LightMedLDA): ``num_sweeps`` passes over the K
    coordinates of every task, each coordinate drawn from its exact Gaussian conditional.

    For task t and coordinate k, with omega_d = eta_t . zbar_d the documents' current scores,

        precision P_k = 1/nu2 + sum_d rho_d zbar_dk^2,
        P_k * mean_k  = sum_d zbar_dk psi_d - sum_d zbar_dk rho_d omega_d + eta_tk (P_k - 1/nu2)

    (the last two terms are sum_d zbar_dk rho_d times the score without coordinate k). After
    each draw the scores are updated in place, omega_d += (new - old) zbar_dk, so a pass costs
    O(D K) per task and no K x K matrix is formed. Each coordinate update leaves the Gaussian
    conditional of eta_t (:func:`eta_conditional_factor`) invariant, hence so does a pass: a
    Markov chain step, not an independent draw (unlike :func:`draw_eta`), so the current eta
    is an argument.

    Args:
      key: JAX PRNG key; eta: float32 [T, K] current weights; zbar: float32 [D, K];
      psi, rho: float32 [T, D]; nu2: prior variance; num_sweeps: passes (static).
    Returns the new eta [T, K].
    """
    num_topics = zbar.shape[1]
    dtype = zbar.dtype
    eta = eta.astype(dtype)
    psi = psi.astype(dtype)
    rho = rho.astype(dtype)
    zbar_t = zbar.T  # [K, D]: one contiguous row per coordinate
    precision = 1.0 / nu2 + rho @ (zbar * zbar)  # [T, K]
    linear = psi @ zbar  # [T, K]
    prior = jnp.asarray(1.0 / nu2, dtype)
    noise = jax.random.normal(key, (num_sweeps, num_topics, eta.shape[0]), dtype)
    omega = eta @ zbar_t  # [T, D]

    def coordinate(i, carry):
        eta, omega = carry
        k = i % num_topics
        column = zbar_t[k]  # [D]
        prec_k = precision[:, k]
        old = eta[:, k]
        gradient = (rho * omega) @ column  # [T]
        mean = (linear[:, k] - gradient + old * (prec_k - prior)) / prec_k
        new = mean + noise[i // num_topics, k] * jax.lax.rsqrt(prec_k)
        omega = omega + (new - old)[:, None] * column[None, :]
        return eta.at[:, k].set(new), omega

    eta, _ = jax.lax.fori_loop(0, num_sweeps * num_topics, coordinate, (eta, omega))
    return eta


# ---------------------------------------------------------------------------------------------
# The float64 host draw (Cholesky of the precision from sparse zbar rows)


def _seed_from_key(key) -> jax.Array:
    """Two uint32 words of host seed derived from a JAX key (reproducible per chain)."""
    return jax.random.bits(key, (2,), jnp.uint32)


def _numba_seed(seed) -> int:
    """The numba generator's seed (an int < 2^32 - 1) from :func:`_seed_from_key`'s words."""
    seed = np.asarray(seed, np.uint64)
    return int((seed[0] << np.uint64(32)) | seed[1]) % (2**32 - 1)


def _host_batched(one, core_ndim0):
    """Wrap a per-chain host function for ``vmap_method="expand_dims"``.

    ``one(*arrays) -> tuple of arrays``. Unbatched, the first argument has ``core_ndim0``
    dimensions; under vmap every argument has a leading axis (of size 1 where not batched) and
    each chain is computed with its own row.
    """

    def host(*args):
        args = [np.asarray(a) for a in args]
        if args[0].ndim == core_ndim0:
            return one(*args)
        num = max(a.shape[0] for a in args)
        outs = [one(*(a[min(c, a.shape[0] - 1)] for a in args)) for c in range(num)]
        return tuple(np.stack([o[i] for o in outs]) for i in range(len(outs[0])))

    return host


@numba.njit(cache=True, nogil=True)
def _eta_cholesky(z, doc_offsets, n_k, psi, rho, nu2, seed, eta, noise, skip_empty):
    """eta [T, Kcap] (float64, filled in place) from its Gaussian conditional.

    Per task: P = I / nu2 + sum_d rho_td zbar_d zbar_d^T and b = sum_d psi_td zbar_d over the
    topics drawn (``skip_empty``: the slots with n_k > 0, the others set to 0; else all Kcap
    slots), in slot order; each document adds to the entries of its own topics, read from its
    tokens (the lower triangle only: all the Cholesky reads). P = L L^T (float64),
    eta = L^-T (L^-1 b + noise): T x (topics drawn) standard normals from ``seed``.
    ``noise=False``: the conditional's mean P^-1 b (no normals drawn).
    """
    np.random.seed(seed)
    num_tasks = eta.shape[0]
    capacity = n_k.shape[0]
    num_docs = doc_offsets.shape[0] - 1
    position = np.full(capacity, -1, np.int64)
    occupied = np.empty(capacity, np.int64)
    num_topics = 0
    for k in range(capacity):
        if n_k[k] > 0 or not skip_empty:
            position[k] = num_topics
            occupied[num_topics] = k
            num_topics += 1
    # sparse zbar rows: (position, proportion) per document, from the tokens
    nnz_pos = np.empty(z.shape[0], np.int64)
    nnz_val = np.empty(z.shape[0])
    row_start = np.zeros(num_docs + 1, np.int64)
    count = np.zeros(num_topics)
    nnz = 0
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        for i in range(start, end):
            p = position[z[i]]
            if count[p] == 0.0:
                nnz_pos[nnz] = p
                nnz += 1
            count[p] += 1.0
        for j in range(row_start[d], nnz):
            p = nnz_pos[j]
            nnz_val[j] = count[p] / (end - start)
            count[p] = 0.0
        row_start[d + 1] = nnz
    for t in range(num_tasks):
        for k in range(capacity):
            eta[t, k] = 0.0
    # every task's P and b at once, task innermost: each document's rows are read once and
    # the task loop is contiguous (the sums, entry by entry, are the per-task ones)
    psi_dt = np.ascontiguousarray(psi.T)
    rho_dt = np.ascontiguousarray(rho.T)
    prec_all = np.zeros((num_topics, num_topics, num_tasks))
    b_all = np.zeros((num_topics, num_tasks))
    for a in range(num_topics):
        for t in range(num_tasks):
            prec_all[a, a, t] = 1.0 / nu2
    for d in range(num_docs):
        for j in range(row_start[d], row_start[d + 1]):
            pa = nnz_pos[j]
            za = nnz_val[j]
            for t in range(num_tasks):
                b_all[pa, t] += psi_dt[d, t] * za
            for j2 in range(row_start[d], row_start[d + 1]):
                pb = nnz_pos[j2]
                if pb <= pa:
                    zb = nnz_val[j2]
                    for t in range(num_tasks):
                        prec_all[pa, pb, t] += rho_dt[d, t] * za * zb
    prec = np.empty((num_topics, num_topics))
    b = np.empty(num_topics)
    for t in range(num_tasks):
        for a in range(num_topics):
            b[a] = b_all[a, t]
            for c in range(a + 1):
                prec[a, c] = prec_all[a, c, t]
        # Cholesky, lower triangle in place
        for c in range(num_topics):
            acc = prec[c, c]
            for j in range(c):
                acc -= prec[c, j] * prec[c, j]
            diag = math.sqrt(acc)
            prec[c, c] = diag
            for r in range(c + 1, num_topics):
                acc = prec[r, c]
                for j in range(c):
                    acc -= prec[r, j] * prec[c, j]
                prec[r, c] = acc / diag
        # u = L^-1 b + noise, then eta = L^-T u
        for r in range(num_topics):
            acc = b[r]
            for j in range(r):
                acc -= prec[r, j] * b[j]
            b[r] = acc / prec[r, r]
        if noise:
            for r in range(num_topics):
                b[r] += np.random.standard_normal()
        for r in range(num_topics - 1, -1, -1):
            acc = b[r]
            for j in range(r + 1, num_topics):
                acc -= prec[j, r] * b[j]
            b[r] = acc / prec[r, r]
        for a in range(num_topics):
            eta[t, occupied[a]] = b[a]


def eta_cholesky_host(z, doc_offsets, n_k, psi, rho, nu2: float, seed: int = 0, *,
                      skip_empty: bool, noise: bool = True) -> np.ndarray:
    """The host draw of :func:`draw_eta_cholesky` for one chain, on numpy arrays.

    Args:
      z: int [N] topic slot of each token; doc_offsets: int [D + 1] token offsets;
      n_k: int [Kcap] tokens per slot (``skip_empty``: slots with n_k = 0 get eta 0);
      psi, rho: [T, D] the Gaussian form's coefficients (converted to float64);
      nu2: prior variance; seed: numba seed (int); noise: False for the conditional's mean.
    Returns float64 [T, Kcap].
    """
    eta = np.empty((np.shape(psi)[0], np.shape(n_k)[0]), np.float64)
    _eta_cholesky(np.asarray(z), np.asarray(doc_offsets), np.asarray(n_k),
                  np.asarray(psi, np.float64), np.asarray(rho, np.float64), float(nu2),
                  int(seed), eta, bool(noise), bool(skip_empty))
    return eta


def _host_eta_cholesky(nu2, skip_empty, noise):
    def one(z, doc_offsets, n_k, psi, rho, seed):
        eta = eta_cholesky_host(z, doc_offsets, n_k, psi, rho, nu2, _numba_seed(seed),
                                skip_empty=skip_empty, noise=noise)
        return (eta.astype(np.float32),)

    return _host_batched(one, 1)


def draw_eta_cholesky(key, z, doc_offsets, n_k, psi, rho, nu2: float, *, skip_empty: bool,
                      noise: bool = True):
    """Draw eta [T, Kcap] from its Gaussian conditional on the host in float64, independently
    per task: the conditional of :func:`draw_eta` (precision I / nu2 + sum_d rho_td zbar_d
    zbar_d^T, mean P^-1 sum_d psi_td zbar_d), zbar read off the tokens.

    Args:
      key: JAX PRNG key (the host seed is derived from it; unused when ``noise`` is False,
        and may then be None); z: int32 [N] topic of each token; doc_offsets: int [D + 1];
      n_k: int32 [Kcap] tokens per topic slot; psi, rho: float32 [T, D]; nu2: prior variance.
      skip_empty: True (sHDP): only slots with n_k > 0 are topics, the others get 0 and the
        draw does not depend on Kcap; False (parametric): all Kcap slots are topics, an empty
        one's eta is drawn from its prior N(0, nu2).
      noise: False gives the conditional's mean instead of a draw.
    Returns float32 [T, Kcap]. Works under jit, lax loops and vmap (chains: one host call
    loops over them). Cost per task O(sum_d nnz_d^2 / 2 + K^3 / 3), nnz_d = distinct topics
    of document d, plus O(N) once.
    """
    seed = _seed_from_key(key) if key is not None else jnp.zeros(2, jnp.uint32)
    (eta,) = jax.pure_callback(
        _host_eta_cholesky(float(nu2), bool(skip_empty), bool(noise)),
        (jax.ShapeDtypeStruct((psi.shape[0], n_k.shape[0]), jnp.float32),),
        z, doc_offsets, n_k, psi, rho, seed, vmap_method="expand_dims",
    )
    return eta
