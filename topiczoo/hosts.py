"""Several hosts: JAX's multi-process runtime for the parallel sampler's JAX engine.

The document-parallel step ``kernels.parallel_jax.jax_assignments_step`` shards each length
bucket's documents over a mesh with one axis ``"docs"`` and sums the word-topic counts n_wk
with ``psum``. Run in several processes (one per host, or several on one machine), the mesh
holds the devices of all of them, and each process drives its own:

    from topiczoo import hosts
    from topiczoo.kernels import parallel_jax as pj

    hosts.initialize("10.0.0.1:1234", num_processes=2, process_id=i)  # before any JAX call
    mesh = hosts.global_mesh()                                         # every process's devices
    buckets = hosts.shard_buckets(pj.length_buckets(doc_offsets, 32, mesh.size), mesh)
    z, words, doc_ids, eta, psi, rho = hosts.replicate((z, words, doc_ids, eta, psi, rho), mesh)
    step = jax.jit(functools.partial(pj.jax_assignments_step, num_topics=K, vocab_size=V,
                                     mesh=mesh, alpha=alpha, beta=beta))

Every process runs the same program on the same inputs (the whole corpus: every device reads
the whole z to count its documents' tokens and gathers the new topics of all), and each puts
on its own devices only its rows of the buckets. The draws are those of one process with no
mesh, bit for bit: the step's random streams are keyed by (step key, document), never by
device (``tests/test_hosts.py``).

``fit(model, corpus, sampler="parallel:z=jax", ...)`` needs nothing more: run after
:func:`initialize` in every process, each building the same corpus, its mesh is
``jax.devices()`` (every process's devices) and its draws are one process's
(``tests/test_hosts.py``, exhaustive tier).

On CPU the processes' collectives go through gloo (``jax_cpu_collectives_implementation``),
which :func:`initialize` selects; on GPUs and TPUs the platform's own.
"""

from __future__ import annotations

import math
import re
import socket
import time

__all__ = ["CoordinatorUnreachableError", "broadcast_bytes", "global_mesh", "initialize",
           "replicate", "shard_buckets"]

_ADDRESS = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:\[\]\s]+)):(?P<port>\d+)$")
#: Seconds between two attempts to reach the coordinator.
_RETRY_S = 0.1


class CoordinatorUnreachableError(RuntimeError):
    """Nothing answered at the coordinator's address within the timeout of
    :func:`initialize`; the message names the address and the timeout."""


def _parse_address(coordinator) -> tuple[str, int]:
    """(host, port) of ``"HOST:PORT"`` (``"[::1]:PORT"`` for an IPv6 host); ValueError for
    anything else."""
    match = _ADDRESS.match(coordinator) if isinstance(coordinator, str) else None
    port = int(match["port"]) if match else 0
    if not match or not 1 <= port <= 65535:
        raise ValueError(f"coordinator must be 'HOST:PORT' (e.g. '10.0.0.1:1234', a port in "
                         f"1..65535), got {coordinator!r}")
    return match["v6"] or match["host"], port


def _validate(coordinator, num_processes, process_id, timeout_s) -> tuple[str, int]:
    for name, value in (("num_processes", num_processes), ("process_id", process_id)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if num_processes < 1:
        raise ValueError(f"num_processes must be at least 1, got {num_processes}")
    if not 0 <= process_id < num_processes:
        raise ValueError(f"process_id must be in 0..{num_processes - 1} (num_processes = "
                         f"{num_processes}), got {process_id}")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) \
            or not math.isfinite(timeout_s) or timeout_s <= 0:
        raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
    return _parse_address(coordinator)


def _wait_for(host: str, port: int, deadline: float, coordinator: str, timeout_s: float):
    """Return once a TCP connection to (host, port) opens; CoordinatorUnreachableError at
    ``deadline`` (``time.monotonic()`` seconds)."""
    last = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise CoordinatorUnreachableError(
                f"no JAX coordinator answered at {coordinator} within {timeout_s:g} s "
                f"(last error: {last}); start process 0 there first, or check the address, "
                f"the port and the firewall")
        try:
            with socket.create_connection((host, port), timeout=min(left, 1.0)):
                return
        except OSError as err:
            last = err.strerror or type(err).__name__
            time.sleep(min(_RETRY_S, max(deadline - time.monotonic(), 0)))


def initialize(coordinator: str, num_processes: int, process_id: int, *,
               timeout_s: float = 60) -> None:
    """Start JAX's multi-process runtime for this process (``jax.distributed.initialize``).

    Call it once in each process, before any JAX computation (nor ``jax.devices()``): then
    ``jax.devices()`` lists the devices of all ``num_processes`` processes and
    ``jax.local_devices()`` this process's own.

    Args:
      coordinator: ``"HOST:PORT"`` of process 0, which serves the coordination there (it binds
        every address of its host on PORT); the same string in every process. An IPv6 host
        in brackets: ``"[::1]:1234"``.
      num_processes: processes in the run, at least 1.
      process_id: this process's rank, 0..num_processes - 1; process 0 is the coordinator.
      timeout_s: seconds to wait for the coordinator and the other processes.

    On CPU the processes' collectives (the step's ``psum`` and ``all_gather``) go through gloo:
    the CPU collectives implementation is set to ``"gloo"`` unless one was chosen already (it
    applies to the CPU client only; an accelerator uses its own).

    Raises TypeError / ValueError for bad arguments (a malformed address, a ``process_id``
    out of range, ``num_processes`` < 1, a timeout that is not a positive number),
    RuntimeError if the runtime is already started, and :class:`CoordinatorUnreachableError`
    (a RuntimeError) when nothing listens at ``coordinator`` within ``timeout_s`` (a process
    other than 0 tries to reach it before calling JAX). Once it answers, JAX's own
    ``initialization_timeout`` (the time left, rounded up to whole seconds) bounds the rest;
    a coordinator that answers but whose other processes never join makes XLA end the process
    with a fatal log after that time ("Terminating process because the JAX distributed service
    detected fatal errors ... DEADLINE_EXCEEDED"): XLA aborts, there is no exception to catch.
    With several processes it ends with a first collective over every process's devices
    (:func:`_first_collective`), so that the later ones do not wait on gloo's 30 s limit.
    """
    deadline = time.monotonic() + (timeout_s if isinstance(timeout_s, (int, float)) else 0)
    host, port = _validate(coordinator, num_processes, process_id, timeout_s)
    import jax

    if jax.distributed.is_initialized():
        raise RuntimeError("JAX's multi-process runtime is already started in this process "
                           "(topiczoo.hosts.initialize or jax.distributed.initialize ran)")
    if process_id != 0:
        _wait_for(host, port, deadline, coordinator, timeout_s)
    if jax.config.jax_cpu_collectives_implementation in (None, "none"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    left = max(1, math.ceil(deadline - time.monotonic()))
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=num_processes,
                               process_id=process_id, initialization_timeout=left,
                               cluster_detection_method="deactivate")
    if num_processes > 1:
        _first_collective()


def _first_collective() -> None:
    """A psum of one number over a mesh of every process's devices, right after the runtime
    starts, while the processes are together: gloo sets up its context over those devices on
    a collective's first call and waits only 30 s for the other processes there (XLA's own
    limit: "Gloo context initialization failed: DEADLINE_EXCEEDED: GetKeyValue() timed out"),
    while a fit's first collective comes after its compilation, which on a loaded machine
    may end more than 30 s apart in two processes (measured: a process 45 s late fails
    without this call and runs with it; later collectives over the same devices reuse the
    context)."""
    import jax
    import numpy as np

    mesh = global_mesh()
    docs = jax.sharding.PartitionSpec("docs")
    total = jax.jit(jax.shard_map(lambda x: jax.lax.psum(x, "docs"), mesh=mesh, in_specs=docs,
                                  out_specs=jax.sharding.PartitionSpec()))
    ones = jax.make_array_from_process_local_data(
        jax.sharding.NamedSharding(mesh, docs), np.ones(len(jax.local_devices()), np.int32))
    got = int(np.asarray(total(ones).addressable_data(0))[0])
    if got != len(jax.devices()):
        raise RuntimeError(f"the first collective of the run summed {got} ones over "
                           f"{len(jax.devices())} devices")


def global_mesh(devices=None):
    """A ``jax.sharding.Mesh`` with the one axis ``"docs"`` of the step over ``devices``
    (default ``jax.devices()``: every process's devices, in process order)."""
    import jax
    import numpy as np

    return jax.sharding.Mesh(np.array(jax.devices() if devices is None else list(devices)),
                             ("docs",))


def replicate(tree, mesh):
    """Every array of ``tree`` (a pytree of numpy or JAX arrays, any shapes) as a global array
    whole on every device of ``mesh`` (``PartitionSpec()``), built with
    ``jax.make_array_from_callback``: each process copies the array to its own devices only.
    The arrays must be equal in every process (the step's z, words, doc_ids int32 [N], eta
    float32 [T, K], psi and rho float32 [T, D], the chains' keys)."""
    import jax

    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    return jax.tree.map(lambda array: _global(array, sharding), tree)


def shard_buckets(buckets, mesh):
    """``kernels.parallel_jax.Buckets`` as global arrays split by rows over ``mesh``'s
    ``"docs"`` axis (``PartitionSpec("docs")``): each bucket's documents int32 [D_b] and token
    places int32 [D_b, L_b], D_b a multiple of ``mesh.size``; device j of the mesh holds rows
    j D_b / mesh.size .. (j + 1) D_b / mesh.size - 1.

    ``buckets`` is ``length_buckets(doc_offsets, num_buckets, mesh.size)``, computed the same in
    every process (it needs only the documents' offsets); each process puts on its devices
    only their rows (``jax.make_array_from_callback`` asks for the addressable devices'
    indices)."""
    import jax

    from topiczoo.kernels.parallel_jax import Buckets

    for rows in buckets.docs:
        if len(rows) % mesh.size:
            raise ValueError(f"a bucket of {len(rows)} rows does not split over {mesh.size} "
                             f"devices: cut the buckets with "
                             f"length_buckets(doc_offsets, num_buckets, {mesh.size})")
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("docs"))
    return Buckets(*(tuple(_global(array, sharding) for array in part)
                     for part in (buckets.docs, buckets.places)))


def _global(array, sharding):
    """``array`` (equal in every process) as a global array of ``sharding``: each process
    copies to its own devices only their parts (``jax.make_array_from_callback``)."""
    import jax
    import numpy as np

    array = np.asarray(array)
    return jax.make_array_from_callback(array.shape, sharding, lambda index: array[index])


def broadcast_bytes(data: bytes | None) -> bytes:
    """Process 0's ``data`` in every process of the run (``jax.process_count()`` processes;
    the others pass anything, e.g. None); the data itself with one process. Two collectives
    (the length, then the bytes), which every process must call at the same point of its
    program: ``topiczoo fit`` sends process 0's checkpoints to the others with it, so that a
    run resumes on hosts that share no folder."""
    import jax
    import numpy as np
    from jax.experimental import multihost_utils

    source = jax.process_index() == 0
    if jax.process_count() == 1:
        return bytes(data or b"")
    size = len(data or b"") if source else 0
    if size >= 2 ** 31:
        raise ValueError(f"broadcast_bytes sends less than 2 GiB at once, got {size} bytes")
    size = int(multihost_utils.broadcast_one_to_all(np.array([size], np.int32))[0])
    if size == 0:
        return b""
    buffer = np.frombuffer(data, np.uint8) if source else np.zeros(size, np.uint8)
    return np.asarray(multihost_utils.broadcast_one_to_all(buffer)).tobytes()
