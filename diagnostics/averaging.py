"""The averaging paper's four prediction strategies as reductions of the tree's named dims.

The tree's ``predictions/scores`` has dims ``(chain, snapshot, test_draw, task, document)``:
S(c, i, j), the score of test draw j of the test chain of training chain c's snapshot i
(Nguyen, Boyd-Graber and Resnik 2014). Each strategy is one reduction to ``(task, document)``:

* ``sf`` single final: chain 0, last snapshot, last test draw;
* ``sa`` single average: chain 0, last snapshot, mean over the test draws;
* ``mf`` multiple final: each test chain's last draw, mean over all chains and snapshots;
* ``ma`` multiple average: mean over all chains, snapshots and test draws.

These are the reductions of :func:`topiczoo.predict.reduce_scores` (which works on the
positional array a prediction holds), written on the dims' names so that the diagnostics can
recompute a run's metrics from its tree alone.
"""

from __future__ import annotations

import xarray as xr

__all__ = ["STRATEGIES", "reduce_predictions"]

#: The strategies, in the paper's order.
STRATEGIES = ("sf", "sa", "mf", "ma")


def reduce_predictions(scores: xr.DataArray, strategy: str) -> xr.DataArray:
    """Average ``scores`` (dims ``chain``, ``snapshot``, ``test_draw`` and any others, e.g.
    ``task``, ``document``) by ``strategy``; returns the other dims, in their order. Means
    in the scores' own precision, NaN propagated. ValueError for an unknown strategy."""
    dims = ("chain", "snapshot", "test_draw")
    missing = [d for d in dims if d not in scores.dims]
    if missing:
        raise ValueError(f"scores need the dims {dims}; {missing} missing (has {scores.dims})")
    if strategy == "sf":
        return scores.isel(chain=0, snapshot=-1, test_draw=-1)
    if strategy == "sa":
        return scores.isel(chain=0, snapshot=-1).mean("test_draw", skipna=False)
    if strategy == "mf":
        return scores.isel(test_draw=-1).mean(("chain", "snapshot"), skipna=False)
    if strategy == "ma":
        return scores.mean(dims, skipna=False)
    raise ValueError(f"unknown averaging strategy {strategy!r}; choose from {STRATEGIES}")
