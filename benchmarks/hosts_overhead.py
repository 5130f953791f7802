#!/usr/bin/env python
"""Two processes on one machine against one: the JAX engine's iteration through
``jax.distributed``.

The parallel sampler's JAX engine (``sampler="parallel:z=jax"``) fits gSLDA (``--topics``,
``--chains``, ``--iterations``, one chunk of ``--chunk`` iterations at a time) on ``--data``
three ways, each in fresh processes with XLA on one thread per device:

* ``1 process x 1 device``;
* ``1 process x 2 devices`` (``--xla_force_host_platform_device_count=2``): the documents
  sharded over a mesh of two devices, no collective between processes;
* ``2 processes x 1 device`` on localhost (``topiczoo.hosts.initialize``, gloo): the same mesh
  of two devices, one in each process.

Each run's figure is its wall seconds per iteration after the first chunk (which holds the
compilation), read by ``fit``'s callback (process 0's, for two processes). Printed: the three,
and the two processes' overhead per iteration against one process of two devices; and whether
the three drew the same eta (they must: the draws do not depend on the devices or processes).
On a machine of 2 cores that behave as one the two processes share a core: the overhead then
includes that, and says little of two hosts.

Usage::

    python benchmarks/hosts_overhead.py --out benchmarks/results/hosts_overhead.txt
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import run_header, set_single_thread, write_lines  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "hosts_overhead.txt")
RUNS = (("1 process x 1 device", 1, 1), ("1 process x 2 devices", 1, 2),
        ("2 processes x 1 device", 2, 1))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="bbc")
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--iterations", type=int, default=25)
    p.add_argument("--chunk", type=int, default=5)
    p.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    p.add_argument("--out", default=DEFAULT_OUT)
    p.add_argument("--worker", nargs=3, type=int, metavar=("PROCESSES", "ID", "PORT"),
                   help=argparse.SUPPRESS)
    return p.parse_args(argv)


def worker(args) -> None:
    """One process of a run: prints one JSON line (seconds per iteration, eta's digest)."""
    num_processes, process_id, port = args.worker
    if num_processes > 1:
        from topiczoo import hosts
        hosts.initialize(f"127.0.0.1:{port}", num_processes, process_id, timeout_s=120)
    import numpy as np

    from topiczoo import fit, load_dataset
    from topiczoo.models import gslda

    corpus = load_dataset(args.data).train
    ends = []
    result = fit(gslda(args.topics), corpus, sampler="parallel:z=jax", num_chains=args.chains,
                 num_iterations=args.iterations, chunk=args.chunk, seed=0, progress=False,
                 callback=lambda r: ends.append((r.iterations_done, time.perf_counter())))
    (first, t0), (last, t1) = ends[0], ends[-1]
    eta = np.ascontiguousarray(result.draws["eta"])
    print(json.dumps({"seconds_per_iteration": (t1 - t0) / (last - first),
                      "eta": hashlib.sha256(eta.tobytes()).hexdigest()[:16],
                      "devices": len(__import__("jax").devices())}), flush=True)


def run(args, num_processes: int, devices: int) -> dict:
    """Process 0's JSON line of a run of ``num_processes`` processes of ``devices`` each."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    # the device count first: XLA reads no flag after the thread setting of _machine.py
    env["XLA_FLAGS"] = (f"--xla_force_host_platform_device_count={devices} " +
                        env.get("XLA_FLAGS", "")).strip()
    procs = [subprocess.Popen([sys.executable, __file__, *_forwarded(args), "--worker",
                               str(num_processes), str(i), str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(num_processes)]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=args.timeout)
        if proc.returncode:
            raise SystemExit(f"a worker failed ({proc.returncode}):\n{err[-3000:]}")
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    return outputs[0]


def _forwarded(args) -> list:
    return ["--data", args.data, "--topics", str(args.topics), "--chains", str(args.chains),
            "--iterations", str(args.iterations), "--chunk", str(args.chunk)]


def main(argv=None):
    args = parse_args(argv)
    set_single_thread()
    if args.worker:
        worker(args)
        return
    lines = run_header(__file__, argv) + [
             f"# {args.data}, gslda K={args.topics}, sampler parallel:z=jax, {args.chains} "
             f"chains, {args.iterations} iterations in chunks of {args.chunk}; wall seconds "
             "per iteration after the first chunk",
             f"{'run':<24} {'s / iteration':>14} {'eta digest':>18}"]
    print("\n".join(lines), flush=True)
    got = {}
    for label, num_processes, devices in RUNS:
        got[label] = run(args, num_processes, devices)
        lines.append(f"{label:<24} {got[label]['seconds_per_iteration']:>14.3f} "
                     f"{got[label]['eta']:>18}")
        print(lines[-1], flush=True)
    one, two = (got[label]["seconds_per_iteration"] for label, *_ in RUNS[1:])
    same = len({g["eta"] for g in got.values()}) == 1
    lines += [f"# two processes against one process of two devices: {two - one:+.3f} s per "
              f"iteration ({two / one:.2f}x); load average {os.getloadavg()[0]:.2f}",
              f"# the same eta draws in all three: {same}"]
    print("\n".join(lines[-2:]), flush=True)
    write_lines(args.out, lines)


if __name__ == "__main__":
    main()
