"""How diagnostics/ sits in the package: what it imports, how long its report's steps are, and
that its averaging of predictions is the prediction module's (read from the source files and
from random scores; no fit)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

DIAGNOSTICS = Path(__file__).resolve().parents[1] / "diagnostics"

#: Modules above diagnostics/: they may import it, never the other way round.
UPPER = ("topiczoo.fit", "topiczoo.predict", "topiczoo.compare", "topiczoo.cli",
         "topiczoo.estimators")

#: Longest function of diagnostics/report.py, in lines (signature and docstring included).
MAX_REPORT_FUNCTION_LINES = 60


def _imported_modules(node) -> list:
    """The modules an import statement names (``from topiczoo import predict`` names
    ``topiczoo.predict``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.module is None:  # a relative import: from . import x
        return [alias.name for alias in node.names]
    return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]


def _imports(path: Path, local_only: bool = False) -> list:
    """(line, module) of every import in ``path``, function-local ones included (only those
    with ``local_only``)."""
    tree = ast.parse(path.read_text())
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef,
                                                             ast.AsyncFunctionDef))]
    scope = functions if local_only else [tree]
    found = set()
    for root in scope:
        for node in ast.walk(root):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update((node.lineno, m) for m in _imported_modules(node))
    return sorted(found)


@pytest.mark.parametrize("path", sorted(DIAGNOSTICS.glob("*.py")), ids=lambda p: p.name)
def test_diagnostics_imports_no_module_above_it(path):
    upward = [(line, module) for line, module in _imports(path)
              if any(module == m or module.startswith(m + ".") for m in UPPER)]
    assert not upward, f"{path.name} imports {upward}: diagnostics/ sits below them"


@pytest.mark.parametrize("path", sorted(DIAGNOSTICS.glob("*.py")), ids=lambda p: p.name)
def test_diagnostics_imports_its_own_package_at_the_top(path):
    """A function-local import of a topiczoo module is the mark of a dodged import cycle
    (third-party imports kept local for start-up time are allowed)."""
    local = [(line, module) for line, module in _imports(path, local_only=True)
             if module.startswith("topiczoo")]
    assert not local, f"{path.name} imports {local} inside functions"


def test_no_function_of_the_report_is_long():
    tree = ast.parse((DIAGNOSTICS / "report.py").read_text())
    long = {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_REPORT_FUNCTION_LINES}
    assert not long, f"functions over {MAX_REPORT_FUNCTION_LINES} lines: {long}"


def test_the_trees_averaging_is_the_predictions():
    """diagnostics.averaging reduces the tree's named dims as topiczoo.predict reduces the
    prediction's positional array: the same four strategies, the same numbers."""
    from topiczoo.diagnostics.averaging import STRATEGIES, reduce_predictions
    from topiczoo.predict import STRATEGIES as PREDICT_STRATEGIES
    from topiczoo.predict import reduce_scores

    assert STRATEGIES == PREDICT_STRATEGIES
    rng = np.random.default_rng(40)
    scores = rng.normal(size=(3, 4, 5, 2, 7)).astype(np.float32)  # [C, I, J, T, D]
    tree_scores = xr.DataArray(scores, dims=("chain", "snapshot", "test_draw", "task",
                                             "document"))
    for strategy in STRATEGIES:
        ours = reduce_predictions(tree_scores, strategy)
        assert ours.dims == ("task", "document")
        np.testing.assert_allclose(ours.values, reduce_scores(scores, strategy), rtol=1e-6,
                                   err_msg=strategy)
    with pytest.raises(ValueError, match="unknown averaging strategy"):
        reduce_predictions(tree_scores, "mean")
    with pytest.raises(ValueError, match="missing"):
        reduce_predictions(tree_scores.isel(chain=0), "ma")
