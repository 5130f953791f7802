"""Run folders of ``topiczoo fit``.

Without ``--out`` every run gets a folder of its own, ``runs/<model>-<YYYYmmdd-HHMMSS>``, and
``runs/latest`` names the newest: a symbolic link, replaced in one step (a new link is made
beside it and renamed over it, so a reader finds the old run or the new one, never nothing),
or, on a filesystem without symbolic links, a one-line text file holding the folder's name.
Commands that read a run folder (``topiczoo diagnose runs/latest``) follow either.

A folder that already holds files is written into only when asked: ``--overwrite`` replaces an
earlier run's outputs (other files stay), ``--checkpoint`` resumes the run whose checkpoint is
there. This module imports nothing heavy: the command line checks ``--out`` before JAX.
"""

from __future__ import annotations

import os
import shutil
import time
import warnings
from pathlib import Path

#: Where runs without ``--out`` go, relative to the working directory.
RUNS = Path("runs")
#: The name, inside :data:`RUNS`, of the link (or text file) naming the newest run.
LATEST = "latest"
#: What ``topiczoo fit`` and ``topiczoo diagnose`` write into a run folder (``figures``: an
#: earlier version's); ``--overwrite`` removes these and :data:`RESUMABLE`, nothing else.
OUTPUTS = ("summary.json", "posterior.nc", "trace.png", "topics.md", "topics.png", "report.md",
           "trace_whole_run.png", "rank.png", "gelman_rubin_brooks.png", "autocorr.png",
           "figures")
#: What ``--checkpoint`` resumes from: the fit's checkpoint (one-vs-all: one per class) and the
#: finished cells of a ``--c cv`` search.
RESUMABLE = ("checkpoint.npz", "checkpoint.class*.npz", "choose_c.json")


#: The clock that names new run folders (seconds since the epoch).
_clock = time.time


def new_name(model: str, now: float | None = None) -> str:
    """``<model>-<YYYYmmdd-HHMMSS>`` at ``now`` (seconds since the epoch; default: the
    clock), local time."""
    when = time.localtime(_clock() if now is None else now)
    return f"{model}-{time.strftime('%Y%m%d-%H%M%S', when)}"


def make_new(model: str, base: Path = RUNS, now: float | None = None) -> Path:
    """Create and return a new, empty run folder ``base/<model>-<time>`` (``-2``, ``-3``, ...
    appended when a run of the same second has the name)."""
    base = Path(base)
    base.mkdir(parents=True, exist_ok=True)
    name = new_name(model, now)
    for n in range(1, 1000):
        path = base / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{base / name} and 998 numbered folders beside it exist")


def point_latest(run: Path) -> Path:
    """Make ``run.parent / "latest"`` name ``run`` and return that path: a relative symbolic
    link, renamed over the old one in one step; where symbolic links cannot be made, a text file
    holding ``run``'s name, written the same way. A ``latest`` that is a real folder (a run
    written by an earlier version, when ``runs/latest`` was the default ``--out``) is left as
    it is, with a warning."""
    run = Path(run)
    latest = run.parent / LATEST
    if latest.is_dir() and not latest.is_symlink():
        warnings.warn(f"{latest} is a run folder (written by an earlier version), not a link; "
                      f"it is left as it is and does not name this run ({run}): move it away "
                      f"for {latest} to follow the newest run")
        return latest
    temporary = run.parent / f".{LATEST}.{os.getpid()}.tmp"
    temporary.unlink(missing_ok=True)
    try:
        os.symlink(run.name, temporary, target_is_directory=True)
    except (OSError, NotImplementedError):  # no symbolic links here: a one-line text file
        temporary.write_text(run.name + "\n")
    try:
        os.replace(temporary, latest)
    except OSError as err:  # the run is not lost for it: say so and go on
        temporary.unlink(missing_ok=True)
        warnings.warn(f"{latest} could not be made to name this run ({err}); the run is in "
                      f"{run}")
    return latest


def resolve(path) -> Path:
    """``path`` as a run folder: a symbolic link's target, or the folder named by the text
    file :func:`point_latest` writes where there are no symbolic links (a small one-line file
    naming a folder beside it); anything else unchanged."""
    path = Path(path)
    if path.is_symlink():
        target = Path(os.readlink(path))
        return target if target.is_absolute() else path.parent / target
    if path.is_file() and path.stat().st_size < 1024:
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError):
            return path
        if len(lines) == 1 and lines[0].strip() and (path.parent / lines[0].strip()).is_dir():
            return path.parent / lines[0].strip()
    return path


def check_out(out: Path, *, overwrite: bool = False, resume: bool = False) -> str:
    """What a run may do with the folder ``out``: ``"new"`` (absent or empty), ``"resume"``
    (``resume`` and a checkpoint or c search to resume is there), ``"overwrite"`` (it holds
    files and ``overwrite``). A ``ValueError`` that says what to do otherwise: a file, a
    folder under a file, or a folder holding files without either flag."""
    out = Path(out)
    check_path(out)
    held = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if not held:
        return "new"
    if overwrite:
        return "overwrite"
    if resume and resumable(out):
        return "resume"
    shown = ", ".join(held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
    if resume:
        raise ValueError(f"--out {out} holds files ({shown}) but no checkpoint to resume "
                         f"({', '.join(RESUMABLE)}): give --overwrite to start afresh there "
                         f"(its earlier outputs are removed), or another --out")
    raise ValueError(f"--out {out} already holds files ({shown}): give --overwrite to replace "
                     f"an earlier run's outputs there, --checkpoint to resume a run it holds, "
                     f"or another --out (without --out, each run gets a new folder under "
                     f"{RUNS}/)")


def check_path(out: Path) -> None:
    """A ``ValueError`` if ``out`` is a file or lies under one."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a directory")
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"--out {out} lies under {parent}, which is a file")


def resumable(out: Path) -> list:
    """The files in ``out`` that ``--checkpoint`` resumes from (:data:`RESUMABLE`)."""
    return [path for pattern in RESUMABLE for path in Path(out).glob(pattern)]


def clear_outputs(out: Path) -> None:
    """Remove an earlier run's outputs and checkpoints (:data:`OUTPUTS`, :data:`RESUMABLE`)
    from ``out``; the user's other files stay."""
    out = Path(out)
    for path in [out / name for name in OUTPUTS] + resumable(out):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
