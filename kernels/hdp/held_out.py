"""Held-out documents of the sHDP: test chains with the training topics fixed (eq 18)."""

from __future__ import annotations

import numba
import numpy as np

from topiczoo.kernels.categorical import draw, num_blocks


@numba.njit(cache=True, nogil=True)
def _hdp_test_chain(words, doc_offsets, phi_wk, slots, beta_w, beta_new, alpha, gamma, beta,
                    num_burnin, num_draws, lag, seed, out):
    """Per document: the direct-assignment chain of eq 18 with the training topics fixed.

    A token goes to a training topic a (slot ``slots[a]``) with weight
    (n_da + alpha beta_a) phi_a(w), to a topic born in this document j with weight
    (n_dj + alpha beta_j) (n_jw + beta) / (n_j + V beta) (its word distribution integrated
    out given the document's own tokens), or to a new one with weight alpha beta_new / V;
    births split beta_new by Beta(1, gamma) and deaths return the weight, as in training. At
    most min(N_d, 64) topics live in a document at once (when all are taken the new-topic
    option is closed). out [num_draws, D, Kcap] (zeroed by the caller) receives n_da / N_d of
    the training topics: the born topics are ignored (their tokens count in N_d; their
    coefficient has prior mean 0).
    """
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_global = slots.shape[0]
    vocab = phi_wk.shape[0]
    v_beta = vocab * beta
    local_id = np.full(vocab, -1, np.int64)
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        length = end - start
        if length == 0:
            continue
        num_unique = 0
        u = np.empty(length, np.int64)
        for i in range(length):
            w = words[start + i]
            if local_id[w] < 0:
                local_id[w] = num_unique
                num_unique += 1
            u[i] = local_id[w]
        local_cap = min(length, 64)
        local_words = np.zeros((local_cap, num_unique), np.int64)
        local_n = np.zeros(local_cap, np.int64)
        local_beta = np.zeros(local_cap)
        n_a = np.zeros(num_global)
        weights = np.empty(num_global + local_cap + 1)
        blocks = np.empty(num_blocks(num_global + local_cap + 1))
        pick_local = np.empty(local_cap + 1, np.int64)
        b_new = beta_new
        z = np.empty(length, np.int64)  # a >= 0: training topic a; -(j + 1): local topic j
        for i in range(length):
            a = np.random.randint(num_global) if num_global > 0 else 0
            z[i] = a
            n_a[a] += 1.0
        total_sweeps = num_burnin + num_draws * lag
        kept = 0
        for sweep in range(1, total_sweeps + 1):
            for i in range(length):
                w = words[start + i]
                old = z[i]
                if old >= 0:
                    n_a[old] -= 1.0
                else:
                    j = -old - 1
                    local_n[j] -= 1
                    local_words[j, u[i]] -= 1
                    if local_n[j] == 0:
                        b_new += local_beta[j]
                        local_beta[j] = 0.0
                for a in range(num_global):
                    weights[a] = (n_a[a] + alpha * beta_w[slots[a]]) * phi_wk[w, slots[a]]
                num_options = num_global
                free = -1
                for j in range(local_cap):
                    if local_n[j] > 0:
                        weights[num_options] = ((local_n[j] + alpha * local_beta[j])
                                                * (local_words[j, u[i]] + beta)
                                                / (local_n[j] + v_beta))
                        pick_local[num_options - num_global] = j
                        num_options += 1
                    elif free < 0:
                        free = j
                if free >= 0:
                    weights[num_options] = alpha * b_new / vocab
                    pick_local[num_options - num_global] = -1
                    num_options += 1
                pick = draw(weights, num_options, blocks, np.random.random())
                if pick < num_global:
                    z[i] = pick
                    n_a[pick] += 1.0
                    continue
                j = pick_local[pick - num_global]
                if j < 0:
                    j = free
                    rest = np.exp(np.log(np.random.random()) / gamma)
                    local_beta[j] = (1.0 - rest) * b_new
                    b_new = rest * b_new
                z[i] = -(j + 1)
                local_n[j] += 1
                local_words[j, u[i]] += 1
            if sweep > num_burnin and (sweep - num_burnin) % lag == 0:
                for a in range(num_global):
                    out[kept, d, slots[a]] = n_a[a] / length
                kept += 1
        for i in range(length):
            local_id[words[start + i]] = -1


def sample_test_topics(words, doc_offsets, snapshot_, *, beta: float, num_burnin: int,
                       num_draws: int, lag: int = 1, seed: int = 0) -> np.ndarray:
    """Test-document topic proportions with the training topics of ``snapshot_`` fixed (eq 18).

    Args:
      words: int [N] test tokens (training-vocabulary ids); doc_offsets: int [D+1].
      snapshot_: one chain's :func:`snapshot` (numpy or jax arrays, no chain axis).
      beta: the topics' Dirichlet parameter (for the topics born in a test document).
      num_burnin, num_draws, lag: the test chain's burn-in, kept draws and sweeps between them.
      seed: host seed.
    Returns float32 [num_draws, D, Kcap]: zbar over the training slots (0 on empty slots; the
    tokens of topics born in the test chain count in N_d only).
    """
    if num_draws < 1 or lag < 1 or num_burnin < 0:
        raise ValueError("need num_draws >= 1, lag >= 1 and num_burnin >= 0")
    phi = np.ascontiguousarray(snapshot_["phi_wk"], dtype=np.float64)
    slots = np.flatnonzero(np.asarray(snapshot_["occupied"])).astype(np.int64)
    out = np.zeros((num_draws, len(doc_offsets) - 1, phi.shape[1]), np.float32)
    _hdp_test_chain(np.asarray(words, np.int64), np.asarray(doc_offsets, np.int64), phi, slots,
                    np.asarray(snapshot_["beta_weights"], np.float64),
                    float(snapshot_["beta_new"]), float(snapshot_["alpha"]),
                    float(snapshot_["gamma"]), float(beta), int(num_burnin), int(num_draws),
                    int(lag), int(seed), out)
    return out
