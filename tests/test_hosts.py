"""Several hosts (``topiczoo.hosts``): the parallel JAX step run by two processes on this machine
through JAX's multi-process runtime (gloo collectives on CPU).

* Two processes of one CPU device each, a mesh of both: the same z, n_dk and log-likelihood,
  bit for bit, in three vmapped chains of scanned steps, as one process with no mesh
  (``step_digest``, the problem of ``test_parallel_jax``'s device test); the word-topic counts
  left out of the ``psum`` (across the processes), or a document's stream keyed by its row
  instead of its number, change them.
* The same with two devices in each process (four in the mesh): the exhaustive tier.
* A whole ``fit(..., sampler="parallel:z=jax")`` run by two processes (each building the same
  corpus; the sampler's mesh is ``jax.devices()``, both processes' devices): the state of one
  process's fit, bit for bit (``test_parallel_jax``'s fit test): the exhaustive tier.
* A coordinator that never answers: ``initialize`` raises ``CoordinatorUnreachableError``
  naming the address and the timeout, within the timeout, and writes nothing.
* Bad arguments: clear errors before anything starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from processes import free_port, run_together
from topiczoo import hosts

TESTS = str(Path(__file__).parent)
#: Buckets of the runs here: one (the compilation dominates a run on CPU, and grows with the
#: buckets; the draws do not depend on them, test_parallel_jax's device test uses 8).
NUM_BUCKETS = 1
#: Seconds any process of these tests may run.
LIMIT_S = 240

_REFERENCE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import step_digest
print(json.dumps({"digest": step_digest.digest(num_buckets=int(sys.argv[2]))}))
"""

_PROCESS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from topiczoo import hosts
hosts.initialize(sys.argv[2], 2, int(sys.argv[3]), timeout_s=60)
import jax
import step_digest

mesh = hosts.global_mesh()


def place(arrays, buckets):  # each process puts on its devices its rows of the buckets
    return hosts.replicate(arrays, mesh), hosts.shard_buckets(buckets, mesh)


num_buckets = int(sys.argv[4])
print(json.dumps({
    "devices": len(jax.devices()), "local": len(jax.local_devices()),
    "mesh": step_digest.digest(mesh, place=place, num_buckets=num_buckets),
    "no-psum": step_digest.digest(mesh, step_digest.no_psum_step(), place=place,
                                  num_buckets=num_buckets),
    "row-keyed": step_digest.digest(mesh, step_digest.row_keyed_step(), place=place,
                                    num_buckets=num_buckets)}))
"""

_UNREACHABLE = """
import json, sys, time
from topiczoo import hosts
start = time.monotonic()
try:
    hosts.initialize(sys.argv[1], 2, 1, timeout_s=float(sys.argv[2]))
except hosts.CoordinatorUnreachableError as err:
    print(json.dumps({"elapsed": time.monotonic() - start, "error": str(err),
                      "runtime_error": isinstance(err, RuntimeError)}))
"""


def _env(num_devices: int = 1) -> dict:
    return {**os.environ, "JAX_PLATFORMS": "cpu",
            "XLA_FLAGS": f"--xla_force_host_platform_device_count={num_devices}"}


def _run_together(commands: list[tuple[list[str], dict]], limit_s: float = LIMIT_S) -> list[dict]:
    """Start every (argv, env) at once and return each one's last line of output as JSON; all
    killed after ``limit_s`` seconds."""
    outs = run_together([(argv, None, env) for argv, env in commands], limit_s)
    for code, _, err in outs:
        assert code == 0, err[-3000:]
    return [json.loads(out.strip().splitlines()[-1]) for _, out, _ in outs]


def _two_processes(devices_each: int) -> tuple[dict, list[dict]]:
    """The reference (one process, no mesh) and the two processes' digests, run at once."""
    address = f"127.0.0.1:{free_port()}"
    python = [sys.executable, "-c"]
    reference, *ranks = _run_together(
        [(python + [_REFERENCE, TESTS, str(NUM_BUCKETS)], _env())]
        + [(python + [_PROCESS, TESTS, address, str(rank), str(NUM_BUCKETS)],
            _env(devices_each)) for rank in (0, 1)])
    return reference, ranks


def _assert_same_draws(reference: dict, ranks: list[dict], devices_each: int):
    for got in ranks:
        assert (got["devices"], got["local"]) == (2 * devices_each, devices_each), got
        assert got["mesh"] == reference["digest"], (reference, ranks)
        # the planted mutants: each device draws Phi from its own documents' counts; a
        # document's stream keyed by its row on its device instead of its number
        assert got["no-psum"] != reference["digest"], (reference, ranks)
        assert got["row-keyed"] != reference["digest"], (reference, ranks)
    assert ranks[0]["no-psum"] == ranks[1]["no-psum"]


def test_two_processes_draw_what_one_process_draws():
    """Two processes of one CPU device each (gloo), the documents sharded over both: the
    draws of one process with no mesh, bit for bit; the psum left out, or the streams keyed
    by row, change them."""
    reference, ranks = _two_processes(1)
    _assert_same_draws(reference, ranks, 1)


@pytest.mark.slow
def test_two_processes_of_two_devices_draw_what_one_process_draws():
    """Two processes of two CPU devices each: a mesh of four devices, the same draws
    (exhaustive tier: tests/conftest.py)."""
    reference, ranks = _two_processes(2)
    _assert_same_draws(reference, ranks, 2)


_FIT_PROCESS = """
import sys
from topiczoo import hosts
hosts.initialize(sys.argv[1], 2, int(sys.argv[2]), timeout_s=60)
"""


@pytest.mark.slow
def test_a_fit_by_two_processes_is_the_fit_of_one():
    """fit(gslda(5), sampler="parallel:z=jax", 2 chains, 4 iterations) in two processes of one
    device each and in one process: the same eta and snapshots, bit for bit, and monitors
    (to 1e-6, as test_parallel_jax's fit test; measured equal). Measured 310 s, the three
    processes at once on 2 busy cores (exhaustive tier: tests/conftest.py)."""
    from test_parallel_jax import _FIT

    address = f"127.0.0.1:{free_port()}"
    python = [sys.executable, "-c"]
    one, *ranks = _run_together(
        [(python + [_FIT], _env())]
        + [(python + [_FIT_PROCESS + _FIT, address, str(rank)], _env()) for rank in (0, 1)],
        limit_s=900)
    for got in ranks:
        assert got["sampler"] == one["sampler"] == "parallel:z=jax"
        assert got["digest"] == one["digest"], (one, got)
        assert got["monitors"].keys() == one["monitors"].keys()
        for name, values in one["monitors"].items():
            np.testing.assert_allclose(got["monitors"][name], values, rtol=1e-6, err_msg=name)


def test_a_coordinator_that_never_answers_is_one_clear_error_within_the_timeout():
    """Process 1 of 2 with nothing listening at the address: CoordinatorUnreachableError (a
    RuntimeError) naming the address and the timeout, within the timeout, nothing written
    (XLA's own wait would end the process with a fatal log instead)."""
    address, timeout_s = f"127.0.0.1:{free_port()}", 3.0
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", _UNREACHABLE, address, str(timeout_s)],
                         env=_env(), capture_output=True, text=True, timeout=60)
    wall = time.monotonic() - start
    assert out.returncode == 0 and out.stderr == "", out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert got["runtime_error"]
    assert address in got["error"] and "3 s" in got["error"], got["error"]
    assert timeout_s - 0.5 < got["elapsed"] < timeout_s + 1.0, got
    assert wall < 60, wall


@pytest.mark.parametrize("args, error, match", [
    (("127.0.0.1:1234", 2, 2), ValueError, r"process_id must be in 0\.\.1 .* got 2"),
    (("127.0.0.1:1234", 2, -1), ValueError, r"process_id must be in 0\.\.1"),
    (("127.0.0.1:1234", 0, 0), ValueError, r"num_processes must be at least 1, got 0"),
    (("127.0.0.1:1234", 2.0, 0), TypeError, r"num_processes must be an int"),
    (("127.0.0.1:1234", 2, True), TypeError, r"process_id must be an int"),
    (("127.0.0.1", 2, 0), ValueError, r"coordinator must be 'HOST:PORT'.*'127\.0\.0\.1'"),
    (("127.0.0.1:0", 2, 0), ValueError, r"a port in 1\.\.65535"),
    (("127.0.0.1:70000", 2, 0), ValueError, r"a port in 1\.\.65535"),
    ((":1234", 2, 0), ValueError, r"coordinator must be 'HOST:PORT'"),
    (("host:12:34", 2, 0), ValueError, r"coordinator must be 'HOST:PORT'"),
    ((("127.0.0.1", 1234), 2, 0), ValueError, r"coordinator must be 'HOST:PORT'"),
])
def test_bad_arguments_are_clear_errors(args, error, match):
    with pytest.raises(error, match=match):
        hosts.initialize(*args)


@pytest.mark.parametrize("timeout_s", [0, -1, float("nan"), float("inf"), "5"])
def test_a_bad_timeout_is_a_clear_error(timeout_s):
    with pytest.raises(ValueError, match="timeout_s must be a positive number of seconds"):
        hosts.initialize("127.0.0.1:1234", 2, 1, timeout_s=timeout_s)


def test_addresses_parse():
    assert hosts._parse_address("10.0.0.1:1234") == ("10.0.0.1", 1234)
    assert hosts._parse_address("node-7.cluster:80") == ("node-7.cluster", 80)
    assert hosts._parse_address("[::1]:1234") == ("::1", 1234)


def test_buckets_that_do_not_split_over_the_mesh_say_how_to_cut_them():
    import jax

    from topiczoo.kernels import parallel_jax as pj

    mesh = hosts.global_mesh(jax.devices()[:1])
    buckets = pj.length_buckets([0, 3, 5, 9], 2)
    sharded = hosts.shard_buckets(buckets, mesh)
    assert [a.shape for a in sharded.places] == [p.shape for p in buckets.places]

    class Two:  # a mesh of two devices is all the check reads
        size = 2
    with pytest.raises(ValueError, match=r"length_buckets\(doc_offsets, num_buckets, 2\)"):
        hosts.shard_buckets(pj.length_buckets([0, 3, 5, 9], 1), Two())
