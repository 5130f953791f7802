"""What every study shares: thread settings, argument parsing, the record of a run, plotting.

A study starts with::

    from _harness import single_thread

    single_thread()  # before numpy and jax are imported

    import numpy as np  # noqa: E402
    ...

Thread settings are those of the benchmarks (``benchmarks/_machine.py``, one copy for both):
one BLAS/OpenMP thread and XLA's single-threaded CPU flags, unless already set in the
environment. Nothing here imports numpy, jax or matplotlib at import time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"


def single_thread(blas_threads: int = 1) -> dict:
    """Set the thread variables (see the module docstring) and return what is in force."""
    spec = importlib.util.spec_from_file_location("_machine", REPO / "benchmarks" / "_machine.py")
    machine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(machine)
    return machine.set_single_thread(blas_threads)


# ------------------------------------------------------------------------------ arguments


def parser(doc: str, *, topics: int, chains: int = 4, test_burnin: int | None = None,
           test_draws: int | None = None, replot: bool = False) -> argparse.ArgumentParser:
    """An argument parser with the options every study has: ``--topics``, ``--chains``,
    ``--out`` (default ``studies/results``), ``--data-dir``; the test chains' ``--test-burnin``
    and ``--test-draws`` when given defaults; ``--replot`` if the study can redraw its
    outputs from its .json. ``doc``: the study's docstring (its first line describes it)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--topics", type=int, default=topics)
    p.add_argument("--chains", type=int, default=chains)
    if test_burnin is not None:
        p.add_argument("--test-burnin", type=int, default=test_burnin,
                       help="B_TE: test chain sweeps before the first kept draw")
    if test_draws is not None:
        p.add_argument("--test-draws", type=int, default=test_draws,
                       help="J: kept test draws per chain and snapshot")
    p.add_argument("--out", default=str(RESULTS), help="output folder (default studies/results)")
    p.add_argument("--data-dir", default=None,
                   help="folder of the shared corpora (default: topiczoo's find_data_dir)")
    if replot:
        p.add_argument("--replot", action="store_true",
                       help="only rewrite the .md and .png from the .json of a previous run")
    return p


# ------------------------------------------------------------------------------ the record


def _portable(path) -> str:
    """``path`` relative to the repository when it is inside it, else as given."""
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def command_line(script: str) -> str:
    """How the study was called: ``python studies/NAME.py ARGS``, less ``--data-dir`` (a
    machine's path, not part of the result)."""
    argv, skip = [], False
    for arg in sys.argv[1:]:
        if skip or arg.startswith("--data-dir="):
            skip = False
            continue
        if arg == "--data-dir":
            skip = True
            continue
        argv.append(arg)
    return shlex.join(["python", f"studies/{Path(script).name}", *argv])


def saved_args(args) -> dict:
    """The arguments as stored in the .json: ``--out`` relative to the repository, no
    ``--data-dir`` or ``--replot`` (where the data lie is not part of the result)."""
    out = {k: v for k, v in vars(args).items() if k not in ("data_dir", "replot")}
    out["out"] = _portable(args.out)
    return out


def load_run(stem: Path, args) -> dict:
    """For ``--replot``: the .json of a previous run (``STEM.json``). ``args`` take its
    settings, keeping where to write (``--out``, ``--data-dir``, ``--replot``), and
    ``args.command`` its command line (None if it kept none)."""
    saved = json.loads(Path(stem).with_suffix(".json").read_text())
    for key, value in saved["args"].items():
        if key not in ("out", "data_dir", "replot"):
            setattr(args, key, value)
    args.command = saved.get("command")
    return saved


def write_json(path, record: dict, *, indent=None) -> None:
    Path(path).write_text(json.dumps(record, indent=indent) + "\n")


def write_outputs(stem: Path, markdown: str, draw) -> None:
    """Write ``STEM.md``, draw ``STEM.png`` (``draw(path)``) and print the markdown."""
    stem.with_suffix(".md").write_text(markdown)
    draw(stem.with_suffix(".png"))
    print(markdown)


def ensure_dir(path) -> Path:
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------ plotting


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend (studies run without a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path) -> Path:
    """Write and close ``fig`` (``topiczoo.diagnostics.save_figure``: 110 dpi, tight box)."""
    from topiczoo.diagnostics import save_figure as _save

    return _save(fig, path)


def mean_sd(values) -> tuple[float, float]:
    """(mean, sample sd) of a sequence; sd 0 for a single value."""
    import numpy as np

    values = np.asarray(values, np.float64)
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def default_sizing(iterations: int) -> str:
    """How ``fit``'s defaults split a run of ``iterations``: "half burn-in, N snapshots" with
    the N snapshots it takes (fewer than 5 when fewer iterations follow burn-in)."""
    from topiczoo.schedule import snapshot_iterations

    count = len(snapshot_iterations(iterations, iterations // 2))
    return f"half burn-in, {count} snapshot{'s' if count != 1 else ''}"
