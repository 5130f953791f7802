"""Several processes started at once, for the tests of runs by several processes
(``tests/test_hosts.py``, ``tests/test_cli_hosts.py``)."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now (bound to port 0, then freed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_together(commands: list, limit_s: float) -> list:
    """Start every (argv, cwd, env) at once; their (returncode, stdout, stderr), all killed
    after ``limit_s`` seconds."""
    procs = [subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for argv, cwd, env in commands]
    deadline = time.monotonic() + limit_s
    outs = []
    try:
        for proc in procs:
            outs.append(proc.communicate(timeout=max(deadline - time.monotonic(), 1)))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return [(proc.returncode, out, err) for proc, (out, err) in zip(procs, outs)]
