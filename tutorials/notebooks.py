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

Nothing a cell writes to stderr passes silently: a warning, a traceback printed by a library,
any stream output named ``stderr`` makes the execution fail (``UnexpectedStderr``, listing the
cells and what they printed), so ``--check`` fails and a full-size render writes nothing. The
only exception is topiczoo's own progress lines that a notebook shows on purpose
(:data:`EXPECTED_STDERR`: ``topiczoo compare``'s ``[compare] ...`` lines in notebook 6).
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

#: stderr lines a notebook may print: ``topiczoo.compare``'s progress lines (one per finished
#: grid cell, and the "skipped" line of a resumed grid), shown on purpose, and matplotlib's note
#: on a fresh machine's first import. Every other stderr line (a warning above all) fails the
#: execution.
EXPECTED_STDERR = re.compile(r"\[compare\] (cell \d+/\d+ .*|skipped \d+ finished cells? of \d+ .*)"
                             r"|Matplotlib is building the font cache; this may take a moment\.")


class UnexpectedStderr(RuntimeError):
    """A cell printed to stderr (a warning, say) something :data:`EXPECTED_STDERR` does not
    allow; the message lists every such cell and line."""


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


def execute(source: Path, size: str, *, cell_timeout: int = 900, allow_stderr: bool = False):
    """Execute the notebook of ``source`` at ``size``.

    Returns ``(notebook, wall_seconds, kernel_cpu_seconds)``: the executed notebook, the wall
    time of the execution (kernel start-up included) and the CPU time (user + system) of the
    kernel process, which, unlike the wall time, does not grow when the machine is shared.
    Raises ``nbclient.exceptions.CellExecutionError`` (with the failing cell's traceback) on
    any error, ``nbclient.exceptions.CellTimeoutError`` for a cell running over
    ``cell_timeout`` seconds, ``ValueError`` for an unknown size, and
    :class:`UnexpectedStderr` when a cell printed to stderr anything but
    :data:`EXPECTED_STDERR` lines (unless ``allow_stderr``).
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
    wall, cpu = time.perf_counter() - tic, _children_cpu_seconds() - before
    printed = unexpected_stderr(notebook)
    if printed and not allow_stderr:
        raise UnexpectedStderr(f"{source.name} at size {size}: cells printed to stderr (a warning "
                               "passes silently no more; fix its cause in the notebook):\n"
                               + "\n".join(printed))
    return notebook, wall, cpu


def unexpected_stderr(notebook) -> list[str]:
    """``"cell N: LINE"`` for every stderr line of the outputs that :data:`EXPECTED_STDERR`
    does not allow (N counts the code cells from 1, as the execution counts do)."""
    found = []
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for number, cell in enumerate(code, 1):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                text = out.get("text", "")
                text = text if isinstance(text, str) else "".join(text)
                found += [f"cell {number}: {line}" for line in text.splitlines()
                          if line.strip() and not EXPECTED_STDERR.fullmatch(line)]
    return found


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
    """Execute ``source`` at full size and write its ``.ipynb``; returns the seconds taken.
    Writes nothing (raises) when a cell failed, printed to stderr (see :func:`execute`) or
    printed an absolute path."""
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
    failed = []
    for source in sources:
        try:
            if args.check:
                size = os.environ.get(SIZE_VARIABLE, "full")
                _, seconds, cpu = execute(source, size)
                print(f"{source.name}: ran at size {size} in {seconds:.0f} s "
                      f"(kernel CPU {cpu:.0f} s)", flush=True)
            else:
                seconds = render(source)
                print(f"{rendered_path(source).name}: rendered at full size in {seconds:.0f} s",
                      flush=True)
        except UnexpectedStderr as printed:  # the others still run; the exit status says it
            print(f"FAILED {printed}" + ("" if args.check else "\n(nothing written)"),
                  file=sys.stderr, flush=True)
            failed.append(source.name)
    if failed:
        sys.exit(f"printed to stderr: {', '.join(failed)}")


if __name__ == "__main__":
    main()
