"""The tiny problem of the JAX step's device tests and the digest of its draws, shared by
``test_parallel_jax`` (1 and 4 devices of one process) and ``test_hosts`` (two processes).

Nothing here touches JAX at import (a process of several must start JAX's runtime before its
first computation): :func:`problem` is numpy arrays, :func:`digest` runs the step.
"""

from __future__ import annotations

import hashlib

import numpy as np

D, K, T, V = 37, 6, 2, 50
NUM_STEPS, NUM_CHAINS, NUM_BUCKETS = 5, 3, 8
ALPHA, BETA = 0.1, 0.01


def problem() -> dict:
    """37 documents (one empty) of 1..39 tokens, K = 6, two tasks, V = 50: numpy arrays
    offsets [D + 1], words, doc_ids, z0 int32 [N], eta float32 [T, K], psi, rho float32
    [T, D]."""
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 40, D)
    lengths[3] = 0
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    words = rng.integers(0, V, offsets[-1]).astype(np.int32)
    doc_ids = np.repeat(np.arange(D), lengths).astype(np.int32)
    eta = (rng.normal(size=(T, K)) * 3).astype(np.float32)
    psi = rng.normal(size=(T, D)).astype(np.float32)
    rho = rng.gamma(1.0, size=(T, D)).astype(np.float32)
    z0 = rng.integers(0, K, offsets[-1]).astype(np.int32)
    return dict(offsets=offsets, words=words, doc_ids=doc_ids, eta=eta, psi=psi, rho=rho,
                z0=z0)


def no_psum_step():
    """The step planted with a bug: each device draws Phi from its own documents' counts
    (n_wk left out of the ``psum``)."""
    from mutants import mutant
    from topiczoo.kernels import parallel_jax as pj

    return mutant(pj.jax_assignments_step, [('n_wk = jax.lax.psum(n_wk, "docs")', "pass")])


def row_keyed_step():
    """The step planted with a bug: a document's random stream keyed by its row among the
    bucket's documents on its device (which changes with the number of devices) instead of by
    the document."""
    from mutants import mutant
    from topiczoo.kernels import parallel_jax as pj

    bucket = mutant(pj._sweep_bucket, [(
        "jax.vmap(lambda d: jax.random.fold_in(docs_key, d))(docs)",
        "jax.vmap(lambda d: jax.random.fold_in(docs_key, d))(jnp.arange(docs.shape[0]))")])
    return mutant(pj.jax_assignments_step, [], {"_sweep_bucket": bucket})


def digest(mesh=None, step=None, place=None, num_buckets: int = NUM_BUCKETS) -> str:
    """sha256 (16 hex digits) of z int32 [N], n_dk int32 [D, K] and log p(W | Z) of
    ``NUM_STEPS`` scanned steps in ``NUM_CHAINS`` vmapped chains (as fit's vectorized chains).

    mesh: the step's mesh (axis ``"docs"``), or None: one device, no shard_map.
    step: the step function (default ``jax_assignments_step``).
    place: ``place(arrays, buckets) -> (arrays, buckets)`` puts the inputs where the step runs
      (a multi-process run: global arrays, ``topiczoo.hosts``); default ``jnp.asarray``.
    num_buckets: of ``length_buckets`` (the compilation's time grows with it; the draws do not
      depend on it).
    """
    import jax
    import jax.numpy as jnp

    from topiczoo.kernels import parallel_jax as pj

    step = step or pj.jax_assignments_step
    p = problem()
    buckets = pj.length_buckets(p["offsets"], num_buckets, mesh.size if mesh else 1)
    arrays = {name: p[name] for name in ("words", "doc_ids", "eta", "psi", "rho", "z0")}
    arrays["keys"] = np.asarray(jax.random.split(jax.random.PRNGKey(1), NUM_CHAINS))
    place = place or (lambda arrays, buckets: jax.tree.map(jnp.asarray, (arrays, buckets)))
    arrays, buckets = place(arrays, buckets)

    def chains(a, buckets):
        def chain(key):
            def body(z, key):
                z, n_dk, log_lik = step(key, z, a["words"], a["doc_ids"], buckets, a["eta"],
                                        a["psi"], a["rho"], ALPHA, BETA, num_topics=K,
                                        vocab_size=V, mesh=mesh)
                return z, (z, n_dk, log_lik)
            return jax.lax.scan(body, a["z0"], jax.random.split(key, NUM_STEPS))[1]
        return jax.vmap(chain)(a["keys"])

    out = jax.jit(chains)(arrays, buckets)
    return hashlib.sha256(b"".join(np.asarray(a).tobytes() for a in out)).hexdigest()[:16]
