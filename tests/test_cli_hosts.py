"""``topiczoo fit`` by several processes (``--coordinator``, ``--num-processes``,
``--process-id``; ``topiczoo.hosts``), on localhost with gloo collectives on CPU.

* Bad combinations of the options are one-line errors before anything starts (CI tier).
* Nothing on the command line's path starts a JAX backend before ``hosts.initialize``
  (JAX's multi-process runtime must come first) (CI tier).
* A coordinator that never answers: exit 2 within the timeout, one line on stderr, nothing
  written (CI tier).
* Two processes: process 0's checkpoint (state, draws, snapshots) and tree are one process's,
  bit for bit (the monitors to 1e-6, as tests/test_hosts.py's fit test), and process 1 wrote
  nothing (exhaustive tier: minutes of compilation).
* A checkpoint of an interrupted one-process run resumes in two processes, and one of an
  interrupted two-process run in one process: both end where the uninterrupted run ends, bit
  for bit (exhaustive tier).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from processes import free_port, run_together
from topiczoo.cli import main

#: Seconds any process of these tests may run.
LIMIT_S = 600
#: The run of these tests: gslda on a tiny poliblog (40 documents, 30 words), 2 chains of 6
#: iterations (chunks end at iterations 1, 5 and 6) of the parallel sampler's JAX engine.
RUN = ["fit", "--model", "gslda", "--data", "poliblog", "--sampler", "parallel:z=jax",
       "--topics", "3", "--chains", "2", "--iterations", "6", "--snapshots", "2",
       "--test-burnin", "2", "--test-draws", "2", "--checkpoint", "--quiet"]
#: The monitors, compared to this relative tolerance (XLA may round a reduction otherwise in
#: the programs of one and of two processes: measured 4.8e-7 on one draw of eta_norm).
RTOL = 1e-6

# the command line in a process whose fit stops (Ctrl-C) when its second chunk has been drawn,
# after process 0 saved the first chunk's checkpoint: every process at the same point
_INTERRUPTED = """
import os, sys
import topiczoo.fit
fit = sys.modules["topiczoo.fit"]  # the package's name fit is the function
real, chunks = fit._append_chunk, []
def append(*args, **kwargs):
    chunks.append(1)
    if len(chunks) == 2:
        raise KeyboardInterrupt
    return real(*args, **kwargs)
fit._append_chunk = append
from topiczoo.cli import main
code = main(sys.argv[1:])
sys.stdout.flush(); sys.stderr.flush()
os._exit(code)
"""

# the command line with hosts.initialize replaced by a probe: was a JAX backend started before?
_PROBE = """
import json, sys
from topiczoo import hosts
def probe(*args, **kwargs):
    started = False
    if "jax" in sys.modules:
        from jax._src import xla_bridge
        started = xla_bridge.backends_are_initialized()
    print(json.dumps({"jax_imported": "jax" in sys.modules, "backend_started": started,
                      "args": list(args), "kwargs": kwargs}))
    sys.exit(0)
hosts.initialize = probe
from topiczoo.cli import console
sys.argv = ["topiczoo"] + sys.argv[1:]
console()
"""


def _env(tmp: Path) -> dict:
    """One CPU device per process; temporary files under ``tmp`` (to see that process 1 leaves
    none)."""
    return {**os.environ, "JAX_PLATFORMS": "cpu", "TMPDIR": str(tmp),
            "XLA_FLAGS": "--xla_force_host_platform_device_count=1"}


def _tiny_poliblog(folder: Path) -> Path:
    """A data folder holding poliblog/ (docs.txt, vocab.txt): 40 documents of 8 distinct words
    of 30, the two classes on two halves of the vocabulary."""
    rng = np.random.default_rng(0)
    (folder / "poliblog").mkdir(parents=True)
    (folder / "poliblog" / "vocab.txt").write_text("".join(f"w{i}\n" for i in range(30)))
    lines = []
    for d in range(40):
        ids = np.sort(rng.choice(np.arange(15) + 15 * (d % 2 == 0), size=8, replace=False))
        lines.append(("100 " if d % 2 else "-100 ")
                     + " ".join(f"{i}:{rng.integers(1, 4)}" for i in ids))
    (folder / "poliblog" / "docs.txt").write_text("\n".join(lines) + "\n")
    return folder


def _cli(argv: list, *, cwd: Path, env: dict, script: str | None = None) -> list:
    """The command ``topiczoo ARGV`` (or ``script`` with ARGV) as a new process's argv."""
    head = [sys.executable, "-c", script] if script else [sys.executable, "-m", "topiczoo.cli"]
    return head + [str(a) for a in argv]


def _one(tmp: Path, data: Path, out: Path, script: str | None = None) -> tuple:
    return (_cli(RUN + ["--data-dir", data, "--out", out], cwd=tmp, env=_env(tmp),
                 script=script), tmp, _env(tmp))


def _two(tmp: Path, data: Path, out: Path, out1: Path | None = None,
         script: str | None = None) -> list:
    """Process 0 and 1 of a two-process run into ``out`` (process 1: ``out1``, default
    ``out``), each in its own empty working folder under ``tmp``."""
    address = f"127.0.0.1:{free_port()}"
    commands = []
    for rank, its_out in ((0, out), (1, out1 or out)):
        cwd = tmp / f"process{rank}"
        cwd.mkdir()
        argv = RUN + ["--data-dir", data, "--out", its_out, "--coordinator", address,
                      "--num-processes", "2", "--process-id", rank]
        commands.append((_cli(argv, cwd=cwd, env=_env(cwd), script=script), cwd, _env(cwd)))
    return commands


def _checkpoint(path: Path) -> dict:
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files}


def _assert_same_run(got: dict, want: dict) -> None:
    """Two checkpoints of the same run: the state, the snapshots, eta's draws and the
    iterations bit for bit; the monitors to RTOL."""
    assert got.keys() == want.keys()
    for name, value in want.items():
        exact = name.startswith(("state/", "snapshots/")) or name in ("draw_iterations",
                                                                        "draws/eta")
        if exact and not name.startswith("state/.info"):
            assert np.array_equal(got[name], value), name
        elif name.startswith(("draws/", "state/.info")):
            np.testing.assert_allclose(got[name], value, rtol=RTOL, err_msg=name)


def _ok(result) -> tuple:
    code, out, err = result
    assert code == 0, err[-3000:]
    return out, err


# ----------------------------------------------------------------------------- the CI tier


@pytest.mark.parametrize("extra, message", [
    (["--process-id", "1"], "needs --coordinator, --num-processes and --process-id together; "
                            "missing --coordinator, --num-processes"),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "2"], "missing --process-id"),
    (["--coordinator-timeout", "3"], "--coordinator-timeout is the wait of --coordinator"),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "0", "--process-id", "0"],
     "--num-processes must be >= 1, got 0"),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id", "2"],
     "--process-id must be in 0..1 (--num-processes 2), got 2"),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id", "-1"],
     "--process-id must be in 0..1"),
    (["--coordinator", "127.0.0.1", "--num-processes", "2", "--process-id", "1"],
     "--coordinator must be 'HOST:PORT'"),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id", "1",
      "--coordinator-timeout", "0"], "--coordinator-timeout must be a positive number"),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id", "0",
      "--sampler", "exact"], "give --sampler parallel:z=jax, not --sampler exact (the exact, "
                             "light and parallel (numba) engines run on one host)"),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id", "0",
      "--sampler", "parallel"], "not --sampler parallel "),
    (["--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id", "0",
      "--sampler", "parallel:z=jax", "--c", "cv"], "--c cv runs its fits on a Dask cluster"),
])
def test_bad_process_options_are_one_line_errors(capsys, tmp_path, extra, message):
    """Each refused before anything starts (no runtime, no folder), in one line, exit 2."""
    assert main(["fit", "--out", str(tmp_path / "run"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()


def test_the_jax_engine_on_two_processes_passes_the_checks(capsys, tmp_path):
    """parallel:z=jax (with another option too) on 2 processes: --check says what runs, and
    starts no runtime (--check runs nothing)."""
    argv = ["fit", "--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id",
            "1", "--sampler", "parallel:eta=qr,z=jax", "--topics", "3", "--check"]
    assert main(argv) == 0
    assert "ok: " in capsys.readouterr().out


def test_no_jax_backend_starts_before_the_runtime(tmp_path):
    """`topiczoo fit` with the three options calls hosts.initialize (with the timeout) before
    any JAX backend is started: jax.distributed.initialize must come first."""
    argv = ["fit", "--coordinator", "127.0.0.1:1234", "--num-processes", "2", "--process-id",
            "1", "--coordinator-timeout", "7", "--sampler", "parallel:z=jax", "--out",
            tmp_path / "run"]
    out = subprocess.run(_cli(argv, cwd=tmp_path, env=_env(tmp_path), script=_PROBE),
                         cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    import json

    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["args"] == ["127.0.0.1:1234", 2, 1] and got["kwargs"] == {"timeout_s": 7.0}
    assert got["backend_started"] is False, got
    assert not (tmp_path / "run").exists()


def test_a_coordinator_that_never_answers_is_one_line_and_writes_nothing(tmp_path):
    """Process 1 of 2 with nothing at the coordinator's address and --coordinator-timeout 3:
    exit 2 within a few seconds, one line on stderr naming the address, no folder."""
    address = f"127.0.0.1:{free_port()}"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    argv = ["fit", "--sampler", "parallel:z=jax", "--num-processes", "2", "--process-id", "1",
            "--coordinator", address, "--coordinator-timeout", "3",
            "--out", tmp_path / "run"]
    start = time.monotonic()
    out = subprocess.run(_cli(argv, cwd=cwd, env=_env(cwd)), cwd=cwd, env=_env(cwd),
                         capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - start
    assert out.returncode == 2, out.stderr[-3000:]
    assert out.stdout == "" and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"error: no JAX coordinator answered at {address} within 3 s")
    assert wall < 30, wall  # imports (several s on a busy machine) and the 3 s wait
    assert not (tmp_path / "run").exists() and not list(cwd.iterdir())


# ----------------------------------------------------------------- the exhaustive tier


@pytest.mark.slow
def test_two_processes_write_one_processs_run_and_process_1_writes_nothing(tmp_path):
    """One process and two (each in an empty working folder, process 1 given its own --out)
    at once: process 0's checkpoint and tree are the one-process run's (bit for bit; the
    monitors to RTOL); process 1's --out, working folder and temporary folder stay empty, and
    it prints neither results nor warnings."""
    import xarray as xr

    data = _tiny_poliblog(tmp_path / "data")
    (tmp_path / "one").mkdir()
    one, zero, first = run_together(
        [_one(tmp_path / "one", data, tmp_path / "one" / "run")]
        + _two(tmp_path, data, tmp_path / "two", out1=tmp_path / "process1-out"), LIMIT_S)
    _ok(one)
    out0, _ = _ok(zero)
    out1, err1 = _ok(first)
    _assert_same_run(_checkpoint(tmp_path / "two" / "checkpoint.npz"),
                     _checkpoint(tmp_path / "one" / "run" / "checkpoint.npz"))
    want = xr.open_datatree(tmp_path / "one" / "run" / "posterior.nc")
    got = xr.open_datatree(tmp_path / "two" / "posterior.nc")
    for group in ("posterior", "predictions"):
        for name in want[group].data_vars:
            np.testing.assert_allclose(got[group][name].values, want[group][name].values,
                                       rtol=0 if name == "eta" or group == "predictions"
                                       else RTOL, err_msg=f"{group}/{name}")
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == [
        "checkpoint.npz", "posterior.nc", "summary.json", "topics.md", "topics.png",
        "trace.png"]
    assert not (tmp_path / "process1-out").exists()
    assert not list((tmp_path / "process1").iterdir())  # no runs/, no temporary files
    assert "test (ma)" in out0  # gloo's own lines aside, process 1 prints nothing
    assert [line for line in out1.splitlines() if not line.startswith("[Gloo]")] == [], out1
    assert "iteration" not in err1 and "warning" not in err1, err1  # --quiet, and a follower


@pytest.mark.slow
@pytest.mark.parametrize("interrupted, resumed", [(1, 2), (2, 1)])
def test_a_checkpoint_resumes_on_another_number_of_processes(tmp_path, interrupted, resumed):
    """A run of `interrupted` processes stopped (Ctrl-C in every process) after the first
    chunk's checkpoint, then the same command on `resumed` processes: the checkpoint at the
    end is the uninterrupted one-process run's (bit for bit; the monitors to RTOL)."""
    data = _tiny_poliblog(tmp_path / "data")
    out = tmp_path / "run"
    for step, (processes, script) in enumerate(((interrupted, _INTERRUPTED), (resumed, None))):
        here = tmp_path / f"step{step}"
        here.mkdir()
        commands = [_one(here, data, out, script)] if processes == 1 else \
            _two(here, data, out, script=script)
        results = run_together(commands, LIMIT_S)
        if script:
            assert [code for code, _, _ in results] == [130] * processes, results[0][2][-3000:]
            stopped = _checkpoint(out / "checkpoint.npz")
            assert list(stopped["draw_iterations"]) == [1]  # the first chunk's, nothing more
        else:
            for result in results:
                _ok(result)
    (tmp_path / "whole").mkdir()
    _ok(run_together([_one(tmp_path / "whole", data, tmp_path / "whole" / "run")], LIMIT_S)[0])
    _assert_same_run(_checkpoint(out / "checkpoint.npz"),
                     _checkpoint(tmp_path / "whole" / "run" / "checkpoint.npz"))
