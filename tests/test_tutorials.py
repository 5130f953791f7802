"""The tutorial notebooks (``tutorials/NN_*.py`` + ``.ipynb``, see ``tutorials/notebooks.py``).

Fast: every committed ``.ipynb`` has exactly the cells (code and prose) of its jupytext ``.py``
and holds the outputs of one full-size execution of them, top to bottom, with no error, no
stderr output but topiczoo's expected progress lines (``notebooks.EXPECTED_STDERR``: no
warning) and no absolute path of the machine that rendered it. Slow: every notebook runs
without error and without printing to stderr (``notebooks.execute`` raises
``UnexpectedStderr``, listing what was printed) at ``TOPICZOO_TUTORIAL_SIZE=small`` (the
``python3`` kernel of this environment's ipykernel) in under two minutes of the kernel's CPU
time: its wall time on an idle machine (on a shared one the wall time grows with the load and
says nothing about the notebook).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIALS = Path(__file__).resolve().parents[1] / "tutorials"
_spec = importlib.util.spec_from_file_location("tutorial_notebooks", TUTORIALS / "notebooks.py")
notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(notebooks)

SOURCES = notebooks.notebook_sources()
IDS = [s.stem for s in SOURCES]
SMALL_SECONDS = 120


def _rendered(source):
    import nbformat

    path = notebooks.rendered_path(source)
    assert path.exists(), f"{path.name} is missing: run python tutorials/notebooks.py {source.stem}"
    return nbformat.read(path, as_version=4)


def test_the_learning_path_has_notebooks():
    assert len(SOURCES) >= 4, [s.name for s in SOURCES]


def test_a_warning_on_stderr_is_reported_and_progress_lines_are_not():
    import nbformat

    cell = nbformat.v4.new_code_cell("...")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr",
                               text="[compare] cell 1/12 gslda K=5 seed 0 on bbc: accuracy 0.9784, "
                                    "3 s | about 44 s left\n"),
        nbformat.v4.new_output("stream", name="stderr",
                               text="[compare] skipped 12 finished cells of 12 (found in grid)\n"),
        nbformat.v4.new_output("stream", name="stdout", text="a result\n"),
        nbformat.v4.new_output("stream", name="stderr",
                               text="fit.py:1: UserWarning: every training label is 0\n"
                                    "  warnings.warn(\n")]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x"), cell])
    assert notebooks.unexpected_stderr(notebook) == [
        "cell 1: fit.py:1: UserWarning: every training label is 0", "cell 1:   warnings.warn("]


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_rendered_notebook_has_the_cells_of_its_source(source):
    committed = notebooks.cell_sources(_rendered(source))
    expected = notebooks.cell_sources(notebooks.read_source(source))
    assert committed == expected, (f"{source.stem}.ipynb is out of date with {source.name}: "
                                   f"re-render it (python tutorials/notebooks.py {source.stem})")


@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_rendered_outputs_are_one_full_size_run(source):
    notebook = _rendered(source)
    assert notebook.metadata.get("topiczoo", {}).get("size") == "full"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    # executed in one fresh kernel, in order, every cell
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    errors = [out for cell in code for out in cell.outputs if out.output_type == "error"]
    assert not errors, errors
    assert not notebooks.unexpected_stderr(notebook), notebooks.unexpected_stderr(notebook)
    assert not notebooks.absolute_paths(notebook)


@pytest.mark.slow
@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_notebook_runs_at_small_size(source):
    # raises UnexpectedStderr, listing the lines, if a cell printed a warning (or else) to stderr
    _, wall, cpu = notebooks.execute(source, "small", cell_timeout=4 * SMALL_SECONDS)
    print(f"{source.stem} at small size: {wall:.0f} s wall, {cpu:.0f} s kernel CPU")
    assert cpu < SMALL_SECONDS, (f"{source.stem} took {cpu:.0f} s of kernel CPU time "
                                 f"({wall:.0f} s wall) at small size")


def _checkout_state(repo: Path):
    """``git status`` of tutorials/ and the modification time of every file in it."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", "tutorials"],
                            cwd=repo, capture_output=True, text=True, check=True).stdout
    files = {str(p.relative_to(repo)): p.stat().st_mtime_ns
             for p in TUTORIALS.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    return status, files


@pytest.mark.slow
def test_first_fit_leaves_the_checkout_as_it_was(tmp_path):
    # its pictures go to a temporary folder unless TOPICZOO_FIGURES names one: running the
    # tutorial as documented must not rewrite the committed tutorials/figures/*.png
    repo = TUTORIALS.parent
    if shutil.which("git") is None or not (repo / ".git").exists():
        pytest.skip("not a git checkout")
    before = _checkout_state(repo)
    env = {k: v for k, v in os.environ.items() if k != "TOPICZOO_FIGURES"}
    env.update(TOPICZOO_TUTORIAL_SIZE="small", TMPDIR=str(tmp_path), MPLBACKEND="Agg")
    run = subprocess.run([sys.executable, str(TUTORIALS / "01_first_fit.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    after = _checkout_state(repo)
    assert after[0] == before[0], f"git status of tutorials/ changed:\n{after[0]}"
    assert after == before
    figures = tmp_path / "topiczoo-figures"
    assert sorted(p.name for p in figures.iterdir()) == ["01_grb.png", "01_topics.png", "01_trace.png"]
    assert run.stdout.rstrip().endswith(f"pictures written to {figures}")
