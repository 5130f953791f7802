"""Convergence diagnostics of the label-invariant monitors (arviz-stats 1.x).

* :func:`summary_table`: per monitor (and per element of a monitor with extra dims, e.g.
  ``augmentation_mean[0]``), mean, sd, MCSE of the mean, bulk and tail ESS, the
  rank-normalised split R-hat of Vehtari et al. (2021) and the classic Gelman-Rubin R-hat.
* :func:`gelman_rubin_brooks`: the classic shrink factor on growing windows of the whole run
  (burn-in included), the curve of Brooks & Gelman (1998) / coda's ``gelman.plot`` and of
  Figure 3 of the sHDP paper.
* :func:`rhat`: the R-hat of an array of draws, with one rule for constant and degenerate
  traces; the two above and ``fit(..., until_rhat=...)`` all compute R-hat with it.

``eta`` is left out by default: topic labels switch between chains, so its per-topic entries
are not comparable across chains and its R-hat says nothing about convergence.
"""

from __future__ import annotations

import math
import warnings

import arviz_stats as azs
import numpy as np
import pandas as pd
import xarray as xr

from topiczoo.diagnostics.arviz_io import LABEL_INVARIANT, as_datatree

__all__ = ["COLUMNS", "DiagnosticUnavailable", "default_var_names", "format_table",
           "gelman_rubin_brooks", "rhat", "rhat_meaning", "summary_table", "whole_run"]

#: Columns of :func:`summary_table`, in order.
COLUMNS = ("mean", "sd", "mcse_mean", "ess_bulk", "ess_tail", "r_hat", "r_hat_classic")

_SAMPLE_DIMS = ("chain", "draw")


class DiagnosticUnavailable(ValueError):
    """The tree lacks what a diagnostic needs (a group, a monitor, 2 chains, enough draws).

    Raised by :func:`summary_table`, :func:`gelman_rubin_brooks` and the plot functions when
    the run cannot give that diagnostic at all, as opposed to a wrong argument (``KeyError``
    for a variable that is not there) or a bug. The report catches this one only.
    """


def default_var_names(tree: xr.DataTree, group: str = "posterior") -> list:
    """The label-invariant monitors present in ``tree[group]``: those the fit's sampler
    declared (the tree's ``label_invariant`` attribute), else :data:`LABEL_INVARIANT`, in
    that order."""
    if group not in tree.children:
        return []
    present = tree[group].data_vars
    declared = tree.attrs.get("label_invariant")
    names = declared.split(",") if declared else LABEL_INVARIANT
    return [name for name in names if name in present]


def rhat(values, method: str = "rank") -> np.ndarray:
    """R-hat of the draws ``values``, one value per element.

    Args:
      values: float [C, S, ...]: C chains of S draws, then any element axes (e.g. tasks).
      method: ``"rank"`` (default): the rank-normalised split R-hat of Vehtari et al. (2021),
        the larger of bulk and folded (``arviz_stats.rhat(method="rank")``);
        ``"identity"``: Gelman & Rubin's (1992) classic R-hat on whole chains; or any other
        method of ``arviz_stats.rhat`` (all but ``"identity"`` split the chains in halves).
    Returns float64 [...] (a 0-d array for a scalar monitor), with one rule for the traces
    where R-hat's ratio of variances is degenerate:

      * NaN, undefined: fewer than 2 chains or fewer than 4 draws, or a NaN draw;
      * 1.0: the element is constant over every chain and draw (a training accuracy of 1
        throughout): the chains agree exactly, so the 0/0 is read as the value of chains
        that agree; no evidence against convergence;
      * inf: every chain (every half chain, for the split methods) is constant but not all
        at the same value (an HDP's number of topics stuck at 3 in one chain and 4 in the
        other): zero variance within chains, positive between them, the chains disagree
        (``arviz_stats`` gave arbitrary large numbers there, 6e15, or divided by zero).

    :func:`summary_table`, :func:`gelman_rubin_brooks` and ``fit(..., until_rhat=...)`` all
    compute R-hat here. The numerical warnings of these cases are not shown: the value says
    it (:func:`rhat_meaning`).
    """
    x = np.asarray(values, np.float64)
    if x.ndim < 2:
        raise ValueError(f"values must be [chains, draws, ...], got shape {x.shape}")
    num_chains, num_draws = x.shape[:2]
    if num_chains < 2 or num_draws < 4:
        return np.full(x.shape[2:], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):  # the degenerate cases, set below
        r_hat = np.asarray(azs.rhat(np.moveaxis(x, (0, 1), (-2, -1)), method=method,
                                    chain_axis=-2, draw_axis=-1), np.float64)
    half = num_draws // 2
    parts = [x] if method == "identity" else [x[:, :half], x[:, num_draws - half:]]
    # np.max / np.min propagate NaN, so a NaN draw is neither constant nor stuck (stays NaN)
    stuck = np.logical_and.reduce([(p.max(axis=1) == p.min(axis=1)).all(axis=0)
                                   for p in parts])
    constant = x.max(axis=(0, 1)) == x.min(axis=(0, 1))
    return np.where(constant, 1.0, np.where(stuck, np.inf, r_hat))


def rhat_meaning(value: float) -> str:
    """What an R-hat of :func:`rhat` that is not a finite number means, in plain words
    (``""`` for a finite one): for warnings and table legends."""
    if math.isnan(value):
        return ("nan means R-hat is undefined: fewer than 2 chains or fewer than 4 draws, "
                "or a NaN draw")
    if math.isinf(value):
        return ("inf means every chain stayed at one constant value, in each half of its "
                "draws for the split rank R-hat, but not all at the same value: zero variance "
                "within chains and some between them, so the chains (or the halves of a "
                "chain) disagree, and will go on disagreeing as long as they do not move")
    return ""


def _select(tree: xr.DataTree, var_names, group: str) -> xr.Dataset:
    if group not in tree.children:
        raise DiagnosticUnavailable(f"the tree has no {group!r} group (groups: "
                                    f"{list(tree.children)})")
    ds = tree[group].to_dataset()
    if var_names is None:
        var_names = default_var_names(tree, group)
    elif isinstance(var_names, str):
        var_names = [var_names]
    missing = [v for v in var_names if v not in ds.data_vars]
    if missing:
        raise KeyError(f"{missing} not in the {group!r} group (has {list(ds.data_vars)})")
    if not var_names:
        raise DiagnosticUnavailable(f"no variables to summarise in the {group!r} group")
    return ds[list(var_names)].astype(np.float64)


def summary_table(tree: xr.DataTree, var_names=None, group: str = "posterior") -> pd.DataFrame:
    """Convergence summary of ``tree[group]``, one row per monitor element.

    Args:
      tree: a DataTree from :func:`topiczoo.diagnostics.to_datatree` (or any with a group of
        ``(chain, draw, ...)`` variables), or a :class:`topiczoo.fit.FitResult`, converted
        with ``to_datatree``.
      var_names: variables to summarise; default the label-invariant monitors present
        (:data:`topiczoo.diagnostics.LABEL_INVARIANT`).
      group: ``"posterior"`` (default) or ``"warmup_posterior"``.
    Returns a DataFrame with columns :data:`COLUMNS`:

      * ``mean``, ``sd`` (ddof = 1) over all chains and draws;
      * ``mcse_mean``: ``arviz_stats.mcse(method="mean")``;
      * ``ess_bulk`` / ``ess_tail``: ``arviz_stats.ess(method="bulk" / "tail")``;
      * ``r_hat``: ``arviz_stats.rhat(method="rank")``, rank-normalised split R-hat (max of
        bulk and folded), the one to judge by (< 1.01 is the usual target);
      * ``r_hat_classic``: ``arviz_stats.rhat(method="identity")``, Gelman & Rubin's (1992)
        potential scale reduction factor on whole chains, neither split nor rank-normalised,
        sqrt(((n-1)/n W + B/n) / W) (without the (m+1)/m and degrees-of-freedom corrections).
    Both R-hats come from :func:`rhat`, whose rule for degenerate traces they follow: NaN
    with fewer than 2 chains or 4 draws, 1 for a monitor constant over all chains and draws
    (train accuracy 1), inf where the chains are stuck at different constant values. A
    constant trace also has ESS equal to its number of draws (arviz-stats' convention: there
    is no autocorrelation to measure) and sd 0. A NaN draw makes every column of its monitor
    NaN; a single draw makes its sd, MCSE and ESS NaN (they need 2).
    Raises :class:`DiagnosticUnavailable` if the group or every monitor is missing, KeyError
    for a requested variable that is not there.
    """
    ds = _select(as_datatree(tree), var_names, group)
    # a single draw or a constant trace: NaN or a documented value, without numpy's warnings
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Degrees of freedom <= 0", RuntimeWarning)
        stats = _statistics(ds)
    rows, labels = [], []
    for name in ds.data_vars:
        per_column = {col: dict(_element_values(name, stats[col][name])) for col in COLUMNS}
        for label in per_column["mean"]:
            labels.append(label)
            rows.append([float(per_column[col][label]) for col in COLUMNS])
    return pd.DataFrame(rows, index=pd.Index(labels, name="monitor"), columns=list(COLUMNS))


def _statistics(ds: xr.Dataset) -> dict:
    dims = list(_SAMPLE_DIMS)
    return {
        "mean": ds.mean(dims, skipna=False),  # a NaN draw shows (it was silently skipped)
        "sd": ds.std(dims, ddof=1, skipna=False),
        "mcse_mean": azs.mcse(ds, sample_dims=dims, method="mean"),
        "ess_bulk": azs.ess(ds, sample_dims=dims, method="bulk"),
        "ess_tail": azs.ess(ds, sample_dims=dims, method="tail"),
        "r_hat": _rhat_dataset(ds, "rank"),
        "r_hat_classic": _rhat_dataset(ds, "identity"),
    }


def _rhat_dataset(ds: xr.Dataset, method: str) -> xr.Dataset:
    """:func:`rhat` of every variable of ``ds``, with the variables' element dims."""
    out = {}
    for name, da in ds.data_vars.items():
        da = da.transpose(*_SAMPLE_DIMS, ...)
        out[name] = da.isel(chain=0, draw=0, drop=True).copy(data=rhat(da.values, method))
    return xr.Dataset(out)


def _element_values(name: str, da: xr.DataArray):
    if da.ndim == 0:
        yield name, da.item()
        return
    stacked = da.stack(__element__=list(da.dims))
    for i in range(stacked.sizes["__element__"]):
        element = stacked.isel(__element__=i)
        index = [str(element[d].item()) for d in da.dims]
        yield f"{name}[{','.join(index)}]", element.item()


def _fmt(column: str, value: float) -> str:
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if column.startswith("r_hat"):
        return f"{value:.3f}"
    if column.startswith("ess"):
        return f"{math.floor(value):d}"
    return f"{value:.4g}"


def format_table(table: pd.DataFrame, flag: float = 1.01) -> str:
    """Plain-text table of :func:`summary_table` for terminals.

    Rows whose rank R-hat is at least ``flag`` are marked with ``*`` in a last column, rows
    where it is undefined (one chain, < 4 draws, NaN draws: NaN, see :func:`rhat`) with
    ``?``; legend lines below the table explain the marks used and an infinite R-hat.
    """
    columns = list(table.columns)
    header = ["monitor", *columns, ""]
    body = []
    marks = set()
    for label, row in table.iterrows():
        r_hat = float(row.get("r_hat", float("nan")))
        mark = "?" if math.isnan(r_hat) else ("*" if r_hat >= flag else "")
        marks.add(mark)
        body.append([str(label), *(_fmt(c, float(row[c])) for c in columns), mark])
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells):
        first = cells[0].ljust(widths[0])
        rest = [cells[i].rjust(widths[i]) for i in range(1, len(cells) - 1)]
        return "  ".join([first, *rest, cells[-1]]).rstrip()

    out = [line(header), "-" * len(line(header)), *(line(r) for r in body)]
    if "*" in marks:
        out.append(f"* rank R-hat >= {flag}: chains disagree, not converged by this monitor")
    if "?" in marks:
        out.append("? R-hat undefined: a single chain, fewer than 4 draws or NaN draws")
    if "r_hat" in table.columns and np.isposinf(table["r_hat"].to_numpy(float)).any():
        out.append(f"R-hat {rhat_meaning(math.inf)}")
    return "\n".join(out)


def whole_run(tree: xr.DataTree, var_name: str) -> xr.DataArray:
    """``var_name`` over the whole run: warmup and posterior draws joined along ``draw`` in
    iteration order, ``draw`` renumbered 0..n-1 and ``iteration`` kept as its coordinate."""
    parts = [tree[g][var_name] for g in ("warmup_posterior", "posterior")
             if g in tree.children and var_name in tree[g].data_vars]
    if not parts:
        raise KeyError(f"{var_name!r} is in neither warmup_posterior nor posterior")
    da = xr.concat(parts, dim="draw").sortby("iteration")
    return da.assign_coords(draw=np.arange(da.sizes["draw"], dtype=np.int64))


def _window_starts(ends: np.ndarray, window: str) -> np.ndarray:
    if window == "half":
        return ends // 2
    if window == "full":
        return np.zeros_like(ends)
    raise ValueError(f"window must be 'half' or 'full', got {window!r}")


def gelman_rubin_brooks(tree: xr.DataTree, var_name: str, num_points: int = 20, *,
                        window: str = "half", method: str = "identity"):
    """Gelman-Rubin shrink factor against iteration (Brooks & Gelman 1998), whole run.

    ``tree``: a DataTree of :func:`topiczoo.diagnostics.to_datatree`, or the FitResult
    itself. The draws of ``warmup_posterior`` and ``posterior`` are joined. At
    ``num_points`` end points evenly spaced over the run, the shrink factor is computed by
    :func:`rhat` with ``method`` (default ``"identity"``: classic Gelman-Rubin) on

    * ``window="half"`` (default): the second half of the draws up to the end point, as
      coda's ``gelman.plot`` and Brooks & Gelman do. The first half of each window plays the
      role of burn-in, so the curve answers "had the chains converged by iteration t if the
      first t/2 iterations were discarded?", and the start-up transient leaves the estimate
      once t is twice its length. With the full prefix it never leaves: the initial
      excursion stays in every window and the curve decays only as its weight shrinks, which
      mixes up "how much burn-in is needed" with "has the sampler converged".
    * ``window="full"``: all draws up to the end point.

    The first end point is the smallest one whose window holds at least 4 draws per chain.
    Degenerate windows follow :func:`rhat`'s rule (1 where the monitor is constant, inf
    where the chains are stuck at different values).

    Returns ``(iterations, shrink_factor)``: int [P] iteration of each end point (from the
    ``iteration`` coordinate) and float [P, ...] the shrink factor there (extra axes for a
    monitor with extra dims, e.g. tasks). Raises :class:`DiagnosticUnavailable` with fewer
    than 2 chains or too few draws, KeyError if ``var_name`` is in neither group.
    """
    if num_points < 1:
        raise ValueError(f"num_points must be >= 1, got {num_points}")
    da = whole_run(as_datatree(tree), var_name).astype(np.float64)
    if da.sizes["chain"] < 2:
        raise DiagnosticUnavailable("the shrink factor needs at least 2 chains")
    da = da.transpose("chain", "draw", ...)
    num_draws = da.sizes["draw"]
    min_end = 8 if window == "half" else 4
    if num_draws < min_end:
        raise DiagnosticUnavailable(f"{num_draws} draws are too few for a shrink-factor "
                                    "curve")
    first = max(min_end, num_draws / num_points)
    ends = np.unique(np.round(np.linspace(first, num_draws, num_points)).astype(np.int64))
    starts = _window_starts(ends, window)
    values = da.values
    curve = np.stack([rhat(values[:, s:e], method) for s, e in zip(starts, ends, strict=True)])
    iterations = np.asarray(da["iteration"].values[ends - 1], np.int64)
    return iterations, curve
