"""How long the diagnostics report's steps are, and that its averaging of predictions is the
prediction module's (read from the source file and from random scores; no fit). What
diagnostics/ may import: ``tests/test_layers.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

DIAGNOSTICS = Path(__file__).resolve().parents[1] / "diagnostics"

#: Longest function of diagnostics/report.py, in lines (signature and docstring included).
MAX_REPORT_FUNCTION_LINES = 60


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
