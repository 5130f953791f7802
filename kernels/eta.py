"""The classifier weights eta given everything else: one Gaussian draw per task.

With the Gaussian-form factors of every document (``models.responses``), eta_t has precision

    P = I / nu^2 + sum_d rho_td zbar_d zbar_d^T,   mean = P^-1 sum_d psi_td zbar_d.

P is never formed. The upper-triangular factor R with R^T R = P is the R of a QR factorisation
of the stacked matrix [sqrt(rho) * zbar; I / nu] ([D+K, K]), whose condition number is the
square root of P's, so the draw stays finite in float32 even when rho spans many orders of
magnitude (c = 256; a hinge augmentation with the margin near 0). Cost O((D + K) K^2) per task.

:func:`draw_eta_coordinatewise` (LightMedLDA) is the alternative for large K: one Gibbs pass
over the coordinates of each task, each from its exact univariate conditional. It is a Markov
step that leaves the same Gaussian invariant (it needs the current eta), not an independent
draw. It runs on the host in float64 over the sparse zbar rows read off the tokens,
O(T sum_d nnz_d) per pass plus O(N) once: with 20 tasks on 20news 10 / 13 / 16 ms at
K = 20 / 100 / 400, and it agrees with the same pass in dense float64 to 6e-11 conditional sd
(``benchmarks/eta_precision.py``). (It used to be a dense float32 pass in XLA, O(D K T): off
by up to 0.065 conditional sd, and 70-78 ms at K = 400.)

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

from topiczoo.kernels.host import batched, numba_seed, seed_words_from_key


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


# ---------------------------------------------------------------------------------------------
# The float64 host draw (Cholesky of the precision from sparse zbar rows)


@numba.njit(cache=True, nogil=True)
def _sparse_zbar(z, doc_offsets, position, num_topics):
    """zbar's nonzero entries, document by document, read off the tokens.

    position: int [Kcap] each topic slot's column (-1 only for slots that hold no token);
    num_topics: the number of columns. Returns (row_start int64 [D + 1], column int64 [nnz],
    proportion float64 [nnz]): document d's entries are [row_start[d], row_start[d + 1]),
    columns in order of first occurrence.
    """
    num_docs = doc_offsets.shape[0] - 1
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
    return row_start, nnz_pos[:nnz], nnz_val[:nnz]


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
    row_start, nnz_pos, nnz_val = _sparse_zbar(z, doc_offsets, position, num_topics)
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


def _host_eta_cholesky(nu2, skip_empty, noise, num_threads=1):
    def one(z, doc_offsets, n_k, psi, rho, seed):
        eta = eta_cholesky_host(z, doc_offsets, n_k, psi, rho, nu2, numba_seed(seed),
                                skip_empty=skip_empty, noise=noise)
        return (eta.astype(np.float32),)

    return batched(one, 1, num_threads)


def draw_eta_cholesky(key, z, doc_offsets, n_k, psi, rho, nu2: float, *, skip_empty: bool,
                      noise: bool = True, num_threads: int = 1):
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
      num_threads: chains drawn at once (static; the draws do not depend on it).
    Returns float32 [T, Kcap]. Works under jit, lax loops and vmap (chains: one host call
    loops over them). Cost per task O(sum_d nnz_d^2 / 2 + K^3 / 3), nnz_d = distinct topics
    of document d, plus O(N) once.
    """
    seed = seed_words_from_key(key) if key is not None else jnp.zeros(2, jnp.uint32)
    (eta,) = jax.pure_callback(
        _host_eta_cholesky(float(nu2), bool(skip_empty), bool(noise), int(num_threads)),
        (jax.ShapeDtypeStruct((psi.shape[0], n_k.shape[0]), jnp.float32),),
        z, doc_offsets, n_k, psi, rho, seed, vmap_method="expand_dims",
    )
    return eta


# ---------------------------------------------------------------------------------------------
# Coordinate-wise Gibbs (LightMedLDA), float64 on the host over the same sparse zbar


@numba.njit(cache=True, nogil=True)
def _eta_coordinatewise(row_start, column, proportion, eta, psi, rho, nu2, num_sweeps, seed):
    """``num_sweeps`` passes of coordinate-wise Gibbs over eta [T, K] (float64, in place).

    zbar is given by its nonzero entries (:func:`_sparse_zbar`, columns 0..K-1); psi, rho
    float64 [T, D]. For task t and coordinate k, with omega_d = eta_t . zbar_d,

        P_k = 1/nu2 + sum_d rho_td zbar_dk^2,
        P_k * mean_k = sum_d zbar_dk psi_td - sum_d zbar_dk rho_td omega_td
                       + eta_tk (P_k - 1/nu2),

    sums over the documents that hold topic k only; after each draw the scores of those
    documents move by (new - old) zbar_dk. Normals from ``seed``, pass by pass, coordinate by
    coordinate, task by task.
    """
    np.random.seed(seed)
    num_tasks, num_topics = eta.shape
    num_docs = row_start.shape[0] - 1
    nnz = column.shape[0]
    # zbar by columns: the documents that hold each topic (a counting sort of the rows)
    col_start = np.zeros(num_topics + 1, np.int64)
    for j in range(nnz):
        col_start[column[j] + 1] += 1
    for k in range(num_topics):
        col_start[k + 1] += col_start[k]
    fill = col_start[:-1].copy()
    col_doc = np.empty(nnz, np.int64)
    col_val = np.empty(nnz)
    for d in range(num_docs):
        for j in range(row_start[d], row_start[d + 1]):
            k = column[j]
            col_doc[fill[k]] = d
            col_val[fill[k]] = proportion[j]
            fill[k] += 1
    # task innermost: a document's entries of every task are contiguous
    psi_dt = np.ascontiguousarray(psi.T)
    rho_dt = np.ascontiguousarray(rho.T)
    omega = np.zeros((num_docs, num_tasks))
    for d in range(num_docs):
        for j in range(row_start[d], row_start[d + 1]):
            k = column[j]
            v = proportion[j]
            for t in range(num_tasks):
                omega[d, t] += eta[t, k] * v
    prior = 1.0 / nu2
    precision = np.empty(num_tasks)
    linear = np.empty(num_tasks)
    gradient = np.empty(num_tasks)
    delta = np.empty(num_tasks)
    for _ in range(num_sweeps):
        for k in range(num_topics):
            for t in range(num_tasks):
                precision[t] = prior
                linear[t] = 0.0
                gradient[t] = 0.0
            for j in range(col_start[k], col_start[k + 1]):
                d = col_doc[j]
                v = col_val[j]
                for t in range(num_tasks):
                    rv = rho_dt[d, t] * v
                    precision[t] += rv * v
                    linear[t] += psi_dt[d, t] * v
                    gradient[t] += rv * omega[d, t]
            for t in range(num_tasks):
                old = eta[t, k]
                mean = (linear[t] - gradient[t] + old * (precision[t] - prior)) / precision[t]
                new = mean + np.random.standard_normal() / math.sqrt(precision[t])
                eta[t, k] = new
                delta[t] = new - old
            for j in range(col_start[k], col_start[k + 1]):
                d = col_doc[j]
                v = col_val[j]
                for t in range(num_tasks):
                    omega[d, t] += delta[t] * v


def eta_coordinatewise_host(eta, z, doc_offsets, psi, rho, nu2: float, seed: int = 0,
                            num_sweeps: int = 1) -> np.ndarray:
    """The host side of :func:`draw_eta_coordinatewise` for one chain, on numpy arrays.

    Args:
      eta: [T, K] current weights; z: int [N] topic of each token; doc_offsets: int [D + 1];
      psi, rho: [T, D] (converted to float64); nu2: prior variance; seed: numba seed (int);
      num_sweeps: passes.
    Returns float64 [T, K].
    """
    num_topics = np.shape(eta)[1]
    rows = _sparse_zbar(np.asarray(z), np.asarray(doc_offsets), np.arange(num_topics),
                        num_topics)
    out = np.array(eta, np.float64)
    _eta_coordinatewise(*rows, out, np.asarray(psi, np.float64), np.asarray(rho, np.float64),
                        float(nu2), int(num_sweeps), int(seed))
    return out


def _host_eta_coordinatewise(nu2, num_sweeps, num_threads=1):
    def one(eta, z, doc_offsets, psi, rho, seed):
        out = eta_coordinatewise_host(eta, z, doc_offsets, psi, rho, nu2, numba_seed(seed),
                                      num_sweeps)
        return (out.astype(np.float32),)

    return batched(one, 2, num_threads)


def draw_eta_coordinatewise(key, eta, z, doc_offsets, psi, rho, nu2: float,
                            num_sweeps: int = 1, num_threads: int = 1):
    """Coordinate-wise Gibbs for eta (LightMedLDA): ``num_sweeps`` passes over the K
    coordinates of every task, each coordinate drawn from its exact Gaussian conditional, on
    the host in float64 (:func:`_eta_coordinatewise`).

    Each coordinate update leaves the Gaussian conditional of eta_t (:func:`draw_eta`'s)
    invariant, hence so does a pass: a Markov chain step, not an independent draw, so the
    current eta is an argument. zbar is read off the tokens as sparse rows, so a pass costs
    O(T sum_d nnz_d) (nnz_d = the distinct topics of document d) plus O(N) once, and no K x K
    matrix is formed.

    Args:
      key: JAX PRNG key (the host seed is derived from it); eta: float32 [T, K] current
        weights; z: int32 [N] topic of each token; doc_offsets: int [D + 1];
      psi, rho: float32 [T, D]; nu2: prior variance; num_sweeps: passes (static);
      num_threads: chains drawn at once (static; the draws do not depend on it).
    Returns the new eta, float32 [T, K]. Works under jit, lax loops and vmap (chains: one host
    call loops over them).
    """
    (eta,) = jax.pure_callback(
        _host_eta_coordinatewise(float(nu2), int(num_sweeps), int(num_threads)),
        (jax.ShapeDtypeStruct(eta.shape, jnp.float32),),
        eta, z, doc_offsets, psi, rho, seed_words_from_key(key), vmap_method="expand_dims",
    )
    return eta
