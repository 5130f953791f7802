"""Pin BLAS/OpenMP and XLA to one thread. Import and call before numpy or jax are imported:
the benchmarks compare single-thread peers on a machine that behaves like one core."""

import os


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
