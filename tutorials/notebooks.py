"""Render and check the tutorial notebooks.

Each notebook is written as a jupytext percent-format script ``tutorials/NN_name.py`` (the
source: review and edit that) and committed beside ``tutorials/NN_name.ipynb``, the same
cells with the outputs of one execution at full size, top to bottom, of the script as it is.

    python tutorials/notebooks.py                    # render every notebook (full size)
    python tutorials/notebooks.py 03_exact_gibbs     # render one
    TOPICZOO_TUTORIAL_SIZE=small python tutorials/notebooks.py --check   # run, write nothing

The size switch: every notebook reads ``TOPICZOO_TUTORIAL_SIZE`` (``full``, the default, or
``small``: fewer iterations and draws, smaller corpora; what CI runs through
``tests/test_tutorials.py``). Execution uses the ``python3`` kernel of the running Python
(``ipykernel`` installed in the same environment), with the tutorials folder as working
directory and the single-thread settings of ``benchmarks/_machine.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SIZES = ("full", "small")
SIZE_VARIABLE = "TOPICZOO_TUTORIAL_SIZE"
KERNEL = "python3"

# Absolute paths of a machine must never reach committed outputs (warnings print file names).
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~])/(?:work|home|root|tmp|usr|opt|Users|var)/")


def notebook_sources() -> list[Path]:
    """The notebooks' jupytext sources: ``tutorials/NN_*.py`` with a jupytext header, sorted."""
    return sorted(p for p in HERE.glob("[0-9][0-9]_*.py")
                  if "jupytext:" in p.read_text(encoding="utf-8")[:500])


def rendered_path(source: Path) -> Path:
    """The committed ``.ipynb`` beside a source ``.py``."""
    return source.with_suffix(".ipynb")


def read_source(source: Path):
    """The notebook (``nbformat.NotebookNode``) of a jupytext ``.py``, without outputs."""
    import jupytext

    return jupytext.read(source)


def cell_sources(notebook) -> list[tuple[str, str]]:
    """``(cell_type, source)`` of every cell, in order: what must agree between a ``.py`` and
    its ``.ipynb``."""
    return [(cell.cell_type, cell.source) for cell in notebook.cells]


def _single_thread_env(size: str) -> dict:
    spec = importlib.util.spec_from_file_location("_machine", REPO / "benchmarks" / "_machine.py")
    machine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(machine)
    saved = dict(os.environ)
    try:
        machine.set_single_thread()
        env = dict(os.environ)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    env[SIZE_VARIABLE] = size
    # tqdm (imported by numpyro) warns, with its file's absolute path, that ipywidgets is absent
    env["PYTHONWARNINGS"] = ",".join(filter(None, [env.get("PYTHONWARNINGS"),
                                                   "ignore:IProgress not found"]))
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # figures inline
    return env


def execute(source: Path, size: str, *, cell_timeout: int = 900):
    """Execute the notebook of ``source`` at ``size``.

    Returns ``(notebook, wall_seconds, kernel_cpu_seconds)``: the executed notebook, the wall
    time of the execution (kernel start-up included) and the CPU time (user + system) of the
    kernel process, which, unlike the wall time, does not grow when the machine is shared.
    Raises ``nbclient.exceptions.CellExecutionError`` (with the failing cell's traceback) on
    any error, ``nbclient.exceptions.CellTimeoutError`` for a cell running over
    ``cell_timeout`` seconds, ``ValueError`` for an unknown size.
    """
    from nbclient import NotebookClient

    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    notebook = read_source(source)
    notebook.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3",
                                       "language": "python"}
    client = NotebookClient(notebook, kernel_name=KERNEL, timeout=cell_timeout,
                            record_timing=False,
                            resources={"metadata": {"path": str(source.parent)}})
    before = _children_cpu_seconds()
    tic = time.perf_counter()
    client.execute(env=_single_thread_env(size))  # starts, runs, shuts down and reaps the kernel
    return notebook, time.perf_counter() - tic, _children_cpu_seconds() - before


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # finished, reaped child processes
    return usage.ru_utime + usage.ru_stime


def output_text(notebook) -> str:
    """Every text output of the notebook (streams, results, errors), joined."""
    parts = []
    for cell in notebook.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.extend(v for k, v in out.get("data", {}).items() if k.startswith("text/"))
            parts.extend(out.get("traceback", []))
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def absolute_paths(notebook) -> list[str]:
    """Absolute file-system paths found in the outputs (none may be committed)."""
    text = output_text(notebook)
    return sorted({text[max(0, m.start() - 30):m.end() + 40] for m in
                   _ABSOLUTE_PATH.finditer(text)})


def render(source: Path) -> float:
    """Execute ``source`` at full size and write its ``.ipynb``; returns the seconds taken."""
    import nbformat

    notebook, seconds, _ = execute(source, "full")
    leaks = absolute_paths(notebook)
    if leaks:
        raise RuntimeError(f"{source.name}: outputs contain absolute paths: {leaks}")
    notebook.metadata["topiczoo"] = {"size": "full"}
    nbformat.write(notebook, rendered_path(source))
    return seconds


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="notebooks to render (default: all), e.g. 02")
    p.add_argument("--check", action="store_true",
                   help=f"execute at ${SIZE_VARIABLE} (default full) and write nothing")
    args = p.parse_args(argv)
    sources = [s for s in notebook_sources()
               if not args.names or any(s.stem.startswith(n) for n in args.names)]
    if not sources:
        sys.exit(f"no notebook matches {args.names}")
    for source in sources:
        if args.check:
            size = os.environ.get(SIZE_VARIABLE, "full")
            _, seconds, cpu = execute(source, size)
            print(f"{source.name}: ran at size {size} in {seconds:.0f} s "
                  f"(kernel CPU {cpu:.0f} s)", flush=True)
        else:
            seconds = render(source)
            print(f"{rendered_path(source).name}: rendered at full size in {seconds:.0f} s",
                  flush=True)


if __name__ == "__main__":
    main()
