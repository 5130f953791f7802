"""Host code under ``jax.pure_callback``: seeds from JAX keys, chains of a vmapped call, memory.

Every host step (a numba sweep, a float64 eta draw, the sHDP's global block) is called once per
Gibbs cycle through ``jax.pure_callback(..., vmap_method="expand_dims")``: under numpyro's
vectorized chains every argument then has a leading chain axis (of size 1 where it is not
batched) and the host function computes each chain with its own row. Its randomness is seeded
from the JAX key of the block, so a run is determined by its seed, chain by chain.
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numba
import numpy as np

from topiczoo.memory import trim_free_memory


#: The decorator of a sweep's per-document function (every token of one document, called once
#: per document with its workspace from the caller): ``numba.njit`` without numba's reference
#: counting (``_nrt=False``). Numba counts the references to every array a function holds
#: with atomic increments and decrements; where a workspace tuple (``ResponseTables``, light's
#: ``_Work``) is passed to the helpers of the token loop, the pairs fall in different basic
#: blocks, its pruning pass leaves them, and each token pays for dozens: on 20news, K = 20,
#: 20 tasks the collapsed sweep took 721 ns a token with them and 248 without, light 730 and
#: 362, the parallel sampler's 829 and 224 (``benchmarks/sweep_cost.py``), with the same draws
#: bit for bit. Such a function allocates nothing (numba refuses to compile an allocation
#: without its runtime), so nothing it holds outlives its caller's arrays.
document_loop = numba.njit(cache=True, nogil=True, _nrt=False)


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


def available_cores() -> int:
    """The cores this process may use: its CPU affinity, and a cgroup's CPU quota (cgroup v2
    ``cpu.max`` or v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``) where it is lower."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    for quota_file, period_file in (("/sys/fs/cgroup/cpu.max", None),
                                    ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
                                     "/sys/fs/cgroup/cpu/cpu.cfs_period_us")):
        try:
            with open(quota_file) as f:
                fields = f.read().split()
            if period_file is not None:
                with open(period_file) as f:
                    fields.append(f.read().strip())
            quota, period = fields[0], fields[1]
        except (OSError, IndexError):
            continue
        if quota not in ("max", "-1") and int(period) > 0:
            cores = min(cores, max(1, int(quota) // int(period)))
    return max(1, cores)


#: Tokens (or other items) of work below which a host step does not share its work among
#: threads: starting them costs more than it saves (about 0.1 to 1 ms a call here).
MIN_WORK_PER_THREAD = 4096


def read_only(*arrays) -> list:
    """C-contiguous read-only views of ``arrays`` (a copy only where one is not contiguous).

    numba compiles a kernel once per combination of its arguments' types, and an array's type
    includes whether it is writable: a JAX buffer seen by a host callback is read-only, an
    array numpy made is not, and each big sweep takes 20-40 s to compile. The kernels' inputs
    that they only read (words, document offsets, the word index) reach them through this
    function, wherever they come from, so that each sweep is compiled once.
    """
    out = []
    for a in arrays:
        view = np.ascontiguousarray(a).view()
        view.flags.writeable = False
        out.append(view)
    return out


def chain_copies(a, num_chains: int) -> np.ndarray:
    """int32 [num_chains, ...]: ``a`` (a leading chain axis of 1 or ``num_chains``, as a vmapped
    callback gets it) copied once per chain, in C order, so that each chain's row is
    contiguous (``np.array`` of a broadcast array keeps the broadcast's strides: every row
    strided, and a sweep compiled for that layout alone)."""
    return np.array(np.broadcast_to(a, (num_chains, *a.shape[1:])), np.int32, order="C")


def threads_for(work: int, num_threads: int) -> int:
    """The threads worth starting for ``work`` items: at most ``num_threads``, and one per
    :data:`MIN_WORK_PER_THREAD` items (at least one)."""
    return max(1, min(int(num_threads), int(work) // MIN_WORK_PER_THREAD))


def over_chains(one, num_chains: int, num_threads: int) -> list:
    """``[one(c) for c in range(num_chains)]``, the chains on up to ``num_threads`` threads at
    once (the host functions release the GIL): each chain's result is a function of its own
    arguments and seed, so the results are those of one thread."""
    if num_threads <= 1 or num_chains <= 1:
        return [one(c) for c in range(num_chains)]
    with ThreadPoolExecutor(max_workers=min(num_threads, num_chains)) as pool:
        return list(pool.map(one, range(num_chains)))


def batched(one, core_ndim0, num_threads: int = 1):
    """Wrap a per-chain host function for ``vmap_method="expand_dims"``.

    ``one(*arrays) -> tuple of arrays``. Unbatched, the first argument has ``core_ndim0``
    dimensions; under vmap every argument has a leading axis (of size 1 where not batched) and
    each chain is computed with its own row, the chains on up to ``num_threads`` threads.
    """

    def host(*args):
        args = [np.asarray(a) for a in args]
        if args[0].ndim == core_ndim0:
            return one(*args)
        num = max(a.shape[0] for a in args)
        work = num * max(a[0].size for a in args)
        outs = over_chains(lambda c: one(*(a[min(c, a.shape[0] - 1)] for a in args)), num,
                           threads_for(work, num_threads))
        return tuple(np.stack([o[i] for o in outs]) for i in range(len(outs[0])))

    return host


#: A host sweep whose arrays (z and the counts) take this many bytes or more gives the free
#: pages of glibc's heaps back after it (``topiczoo.memory.trim_free_memory``, about 0.1-5 ms):
#: blocks of a few MB fragment the heaps, while on small data the trim would only cost time.
TRIM_ABOVE_BYTES = 1 << 20


class Scratch:
    """Host arrays a step needs but does not return, kept from one call to the next: new ones
    every step paid their page faults again (a [V, K] array at V = 53,666, K = 400 is 86 MB a
    chain of int32: 0.1-0.3 s of a step on this project's 2-core machine, transparent huge
    pages compacted on each fault).

    ``make()`` makes one set (an array or a tuple of them). Each :meth:`borrow` gets a set no
    other borrow holds at that time (chains on threads, or on several devices at once), made on
    first need; it goes back to be lent again only when the borrower's block ends without an
    error, so a set whose contents a step promises (the exact sampler's counts, all zero
    between steps) is never lent half-written. The sets made stay for the kernel's life: as
    many as were ever borrowed at once (the peak the memory check counts)."""

    def __init__(self, make):
        self._make = make
        self._free = []
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def borrow(self):
        """A set of arrays for one chain's step (a context manager)."""
        with self._lock:
            arrays = self._free.pop() if self._free else None
        if arrays is None:
            arrays = self._make()
        yield arrays
        with self._lock:  # not reached when the block raised: the set is dropped
            self._free.append(arrays)


def trim_after(nbytes: int) -> None:
    """Give glibc's free heap pages back after a host sweep whose arrays took ``nbytes``
    bytes, when that is :data:`TRIM_ABOVE_BYTES` or more."""
    if nbytes >= TRIM_ABOVE_BYTES:
        trim_free_memory()
