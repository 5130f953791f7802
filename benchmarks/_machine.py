"""What every benchmark needs about the machine: one thread (call :func:`set_single_thread`
before numpy or jax are imported: the benchmarks compare single-thread peers on a machine that
behaves like one core), a description of the machine for the output, and the output's
header and file."""

import datetime
import os
import platform
import shlex
import sys


def set_single_thread(blas_threads: int = 1) -> dict:
    """Set the thread variables (unless already set) and return what is in force."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(blas_threads))
    flags = os.environ.get("XLA_FLAGS", "")
    for flag in ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1"):
        if flag.split("=")[0] not in flags:
            flags = (flags + " " + flag).strip()
    os.environ["XLA_FLAGS"] = flags
    return {v: os.environ.get(v) for v in
            ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS")}


def machine_description() -> dict:
    """CPU model, logical CPUs, platform, Python version and the current load average."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"cpu": cpu, "logical_cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}
    try:
        info["load_average"] = os.getloadavg()
    except OSError:
        pass
    return info


def run_header(script: str, argv=None) -> list:
    """The first lines of a result: when, the command (``script``'s file name and its
    arguments: ``argv``, default the command line's) and :func:`machine_description`."""
    command = shlex.join(sys.argv[1:] if argv is None else argv)
    return [f"# {datetime.datetime.now():%Y-%m-%d %H:%M} python benchmarks/"
            f"{os.path.basename(script)} {command}", f"# {machine_description()}"]


def write_lines(path, lines) -> None:
    """``lines`` to the file ``path`` (one per line), unless ``path`` is empty or None."""
    if path:
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
