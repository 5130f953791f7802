"""Host code under ``jax.pure_callback``: seeds from JAX keys, chains of a vmapped call, memory.

Every host step (a numba sweep, a float64 eta draw, the sHDP's global block) is called once per
Gibbs cycle through ``jax.pure_callback(..., vmap_method="expand_dims")``: under numpyro's
vectorized chains every argument then has a leading chain axis (of size 1 where it is not
batched) and the host function computes each chain with its own row. Its randomness is seeded
from the JAX key of the block, so a run is determined by its seed, chain by chain.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from topiczoo.memory import trim_free_memory


def seed_from_key(key) -> jax.Array:
    """A uint32 host seed derived from a JAX key (reproducible per chain)."""
    return jax.random.bits(key, (), jnp.uint32)


def seed_words_from_key(key) -> jax.Array:
    """Two uint32 words of host seed derived from a JAX key (reproducible per chain)."""
    return jax.random.bits(key, (2,), jnp.uint32)


def numba_seed(seed) -> int:
    """The numba generator's seed (an int < 2^32 - 1) from :func:`seed_words_from_key`'s
    words."""
    seed = np.asarray(seed, np.uint64)
    return int((seed[0] << np.uint64(32)) | seed[1]) % (2**32 - 1)


def batched(one, core_ndim0):
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


#: A host sweep whose arrays (z and the counts) take this many bytes or more gives the free
#: pages of glibc's heaps back after it (``topiczoo.memory.trim_free_memory``, about 0.1-5 ms):
#: blocks of a few MB fragment the heaps, while on small data the trim would only cost time.
TRIM_ABOVE_BYTES = 1 << 20


def trim_after(nbytes: int) -> None:
    """Give glibc's free heap pages back after a host sweep whose arrays took ``nbytes``
    bytes, when that is :data:`TRIM_ABOVE_BYTES` or more."""
    if nbytes >= TRIM_ABOVE_BYTES:
        trim_free_memory()
