"""Running a study's cells on a Dask cluster: this machine's cores, a lab's cluster, a cloud's.

A study is a grid of independent cells: ``topiczoo compare`` (data set x model x K x seed),
``--c cv`` / :func:`topiczoo.tuning.choose_c` (c x fold), the replicate blocks of
:func:`topiczoo.diagnostics.sbc.simulation_based_calibration`. Each cell is a deterministic
function of its settings and seed, so where it runs does not change what it gives.
:func:`run_cells` submits the cells to a Dask ``distributed`` client, or runs them one after
another in this process when there is none; :func:`open_client` makes the client:

* ``workers=N`` (``--workers N``; default: the machine's cores): a ``LocalCluster`` of N worker
  processes on this machine, one thread each (one JAX process per worker; the numeric
  libraries' thread pools set to one thread by :data:`WORKER_ENVIRONMENT`, so N workers use
  N cores and nothing depends on the worker); ``workers=0``: no cluster, the cells run in
  this process;
* ``scheduler="tcp://HOST:PORT"`` (``--scheduler``): an existing cluster (``dask scheduler``
  and ``dask worker ADDRESS`` on the machines, or ``dask-jobqueue``'s ``SLURMCluster`` /
  ``PBSCluster`` for a batch system: give its ``scheduler_address``, or its client as
  ``client=``); a scheduler that does not answer within ``timeout`` seconds is a
  :class:`SchedulerUnreachableError` saying what to check;
* ``client=``: a ``distributed.Client`` made by the caller, used as it is and left open.

**Nothing lost, nothing twice.** The cell's function runs on the worker and writes the cell's
file there (atomically: :func:`write_atomic`; a worker killed mid-cell leaves no file), after
looking whether an earlier attempt already wrote it. A worker that dies (killed, out of memory)
has its cells rerun on another worker by the scheduler, up to :data:`ALLOWED_FAILURES` deaths
per cell on the local cluster. (Dask runs a task at least once, not exactly once: should it
run a cell on two workers at once, both write the same bytes, atomically.) Ctrl-C cancels the cells not yet finished and closes the local
cluster; the finished cells' files stay, and a rerun skips them. The results come back to the
client too, so that a caller on a machine that does not share the workers' file system still
gets (and writes) every cell.

**Progress**: a line per finished cell, ``cells: 5 done, 2 running, 20 left | about 3 min
left`` (running: the cells not finished, up to the cluster's threads; the time left
extrapolates the wall time per finished cell of this run).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import uuid
from pathlib import Path

from topiczoo.progress import time_left

__all__ = ["ALLOWED_FAILURES", "CONNECT_TIMEOUT", "SchedulerUnreachableError",
           "WORKER_ENVIRONMENT", "client_map", "describe_client", "open_client", "run_cells",
           "share", "write_atomic"]

#: Seconds :func:`open_client` waits for a scheduler to answer (and for its first worker).
CONNECT_TIMEOUT = 10.0
#: Deaths of a worker running a cell after which the local cluster gives the cell up (Dask's
#: ``distributed.scheduler.allowed-failures``; a cell that kills every worker it runs on, e.g.
#: by exhausting the memory, then fails with ``KilledWorker`` instead of looping).
ALLOWED_FAILURES = 3
#: The environment of a local cluster's worker processes: one thread for each numeric library
#: (BLAS, OpenMP, numba, XLA's CPU client), so that a worker uses one core, N workers N cores.
WORKER_ENVIRONMENT = {
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}


class SchedulerUnreachableError(ConnectionError):
    """No Dask scheduler answered at the address given (or it has no worker)."""


def _import_distributed():
    try:
        import distributed
    except ImportError as err:  # a dependency: only a broken install lacks it
        raise ImportError("running cells on a cluster needs Dask's 'distributed' package "
                          "(pip install distributed), a dependency of topiczoo") from err
    return distributed


@contextlib.contextmanager
def open_client(client=None, *, workers: int | None = None, scheduler: str | None = None,
                timeout: float | None = None, log=None, cells: int | None = None):
    """The Dask client of a study, closed (with its local cluster) when the block ends.

    Args:
      client: a ``distributed.Client`` of the caller's: yielded as it is, not closed
        (``workers`` is then ignored).
      workers: worker processes of a local cluster (default ``os.cpu_count()``); 0: no cluster,
        yields None (the cells run in this process).
      scheduler: the address of a running scheduler, ``tcp://HOST:PORT``; excludes
        ``workers``.
      timeout: seconds to wait for the scheduler to answer and to have a worker (default
        :data:`CONNECT_TIMEOUT`).
      log: a function taking a line (what was started), or None.
      cells: the number of cells to run, if known: with ``workers`` None (the default) and a
        single cell or a single core, no cluster is started (yields None), since one worker
        would only add its start-up to the run.
    Raises :class:`SchedulerUnreachableError` for a scheduler that does not answer in
    ``timeout`` seconds, ValueError for a bad ``workers``.
    """
    log = log or (lambda _: None)
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    if client is not None:
        if scheduler is not None:
            raise ValueError("give client= or scheduler=, not both")
        yield client
        return
    if scheduler is not None:
        if workers is not None:
            raise ValueError("--workers is the size of a local cluster; a cluster at "
                             "--scheduler has its own workers: give one of them")
        with _remote_client(scheduler, timeout) as remote:
            log(f"on the Dask cluster at {scheduler}: {describe_client(remote)}")
            yield remote
        return
    if workers is None:
        workers = os.cpu_count() or 1
        if workers == 1 or (cells is not None and cells <= 1):
            workers = 0
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError(f"workers must be an integer >= 0 (0: no cluster, the cells run in "
                         f"this process), got {workers!r}")
    if workers == 0:
        yield None
        return
    with _local_client(workers) as local:
        log(f"on a local Dask cluster: {describe_client(local)}")
        yield local


@contextlib.contextmanager
def _remote_client(address: str, timeout: float):
    distributed = _import_distributed()
    if not isinstance(address, str) or "://" not in address and ":" not in address:
        raise ValueError(f"a scheduler address is tcp://HOST:PORT, got {address!r}")
    what = (f"check the address and port (dask scheduler prints its address), that the "
            f"scheduler runs and that this machine can reach it; or leave out --scheduler to "
            f"run on this machine's cores")
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as err:
        raise SchedulerUnreachableError(
            f"no Dask scheduler answered at {address} within {timeout:g} s "
            f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else 'no answer'}): "
            + what) from None
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError):
            raise SchedulerUnreachableError(
                f"the Dask scheduler at {address} has no worker after {timeout:g} s: start "
                f"some (dask worker {address}, or a dask-jobqueue cluster's scale())") from None
        yield client
    finally:
        client.close()


@contextlib.contextmanager
def _local_client(workers: int):
    distributed = _import_distributed()
    import dask

    environment = dict(WORKER_ENVIRONMENT)
    given = os.environ.get("XLA_FLAGS")
    if given:  # the user's flags, then ours (XLA takes the last of a flag given twice)
        environment["XLA_FLAGS"] = f"{given} {environment['XLA_FLAGS']}"
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                          # a worker takes one cell at a time: "running" means running
                          "distributed.scheduler.worker-saturation": 1.0}):
        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
            silence_logs=logging.CRITICAL, env=environment)
    try:
        client = distributed.Client(cluster, set_as_default=False)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def describe_client(client) -> str:
    """``2 workers, 1 thread each`` (or ``... 4 threads in all``) of a client's cluster."""
    threads = list(client.nthreads().values())
    if not threads:
        return "no workers yet"
    each = (f"{threads[0]} thread{'s' * (threads[0] != 1)} each" if len(set(threads)) == 1
            else f"{sum(threads)} threads in all")
    return f"{len(threads)} worker{'s' * (len(threads) != 1)}, {each}"


def share(client, value):
    """``value`` for the cells' arguments: with a client, a future of it that the workers
    fetch once each, rather than a copy with every cell; without one, ``value`` itself.

    The future is a task that returns ``value`` (not data scattered to the workers): if
    every worker holding it dies, the scheduler computes it again, where scattered data
    would be lost with them and the cells needing it cancelled."""
    if client is None:
        return value
    return client.submit(_itself, value, pure=False, key=f"topiczoo-shared-{uuid.uuid4().hex}")


def _itself(value):
    return value


def write_atomic(path, data) -> Path:
    """Write ``data`` (str or bytes) to ``path`` through a temporary file of this process in
    the same folder, then rename it: a reader (or a rerun) sees the whole file or none, even
    when the writer is killed halfway. Returns the path."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data)
    os.replace(tmp, path)
    return path


def run_cells(function, tasks, *, client=None, describe=None, log=None,
              label: str = "cells") -> list:
    """Run ``function(*args)`` for each ``(name, args)`` of ``tasks``; returns the results in
    the order of ``tasks``.

    Args:
      function: a picklable function (module level); it runs on a worker and writes its cell's
        file itself (see the module docstring); its result comes back here.
      tasks: a list of ``(name, args)``: a cell's name (for messages) and its arguments (Dask
        futures among them, e.g. from :func:`share`, are the values they hold).
      client: a ``distributed.Client``, or None to run the cells here, one after another.
      describe: ``describe(name, result) -> str``: the progress line's description of a
        finished cell (default: its name).
      log: a function taking a progress line, or None for none.
      label: the progress lines' tag, ``[compare]``.
    A cell that raises stops the study: the cells not yet finished are cancelled and the error
    is raised here (the finished cells' files stay). Ctrl-C (KeyboardInterrupt) likewise.
    """
    tasks = list(tasks)
    describe = describe or (lambda name, result: name)
    log = log or (lambda _: None)
    results = [None] * len(tasks)
    tic = time.perf_counter()

    def report(done: int, running: int, name: str, result) -> None:
        left = len(tasks) - done - running
        elapsed = time.perf_counter() - tic
        line = (f"[{label}] {describe(name, result)} | cells: {done} done, {running} running, "
                f"{left} left")
        if done < len(tasks):
            line += f" | {time_left(elapsed / done * (len(tasks) - done))}"
        log(line)

    if client is None:
        for i, (name, args) in enumerate(tasks):
            results[i] = function(*args)
            report(i + 1, 1 if i + 1 < len(tasks) else 0, name, results[i])
        return results
    distributed = _import_distributed()
    run = uuid.uuid4().hex[:8]
    futures = [client.submit(function, *args, key=f"topiczoo-{name}-{run}", pure=False)
               for name, args in tasks]
    index = {f.key: i for i, f in enumerate(futures)}
    done = 0
    try:
        for future in distributed.as_completed(futures, loop=client.loop):
            i = index[future.key]
            results[i] = future.result()  # a cell's error is raised here
            done += 1
            report(done, _running(client, futures), tasks[i][0], results[i])
    except BaseException:
        client.cancel([f for f in futures if not f.done()], force=True)
        raise
    return results


def _running(client, futures) -> int:
    """The cells of ``futures`` running now, as far as the client knows: those not finished,
    up to the cluster's threads (a worker takes one cell per thread; the local cluster queues
    the rest on the scheduler)."""
    try:
        threads = sum(client.nthreads().values())
    except Exception:  # noqa: BLE001 - only a progress figure: a lost connection is not fatal
        return 0
    return min(sum(not f.done() for f in futures), threads)


def client_map(client, *, log=None, label: str = "cells"):
    """A ``map(function, iterable)`` that runs the calls as cells on ``client`` (None: here,
    one after another) and returns their results as a list, in order: what
    :func:`topiczoo.diagnostics.sbc.simulation_based_calibration` takes as ``map``."""
    def mapped(function, iterable):
        items = list(iterable)
        return run_cells(function, [(f"{label}-{i}", (item,)) for i, item in enumerate(items)],
                         client=client, log=log, label=label)
    return mapped


def stderr_log(quiet: bool = False):
    """A progress-line function: prints to stderr and flushes, or does nothing if ``quiet``."""
    if quiet:
        return lambda _: None
    return lambda line: print(line, file=sys.stderr, flush=True)
