"""Convergence diagnostics of the label-invariant monitors (arviz-stats 1.x).

* :func:`summary_table`: per monitor (and per element of a monitor with extra dims, e.g.
  ``augmentation_mean[0]``), mean, sd, MCSE of the mean, bulk and tail ESS, the
  rank-normalised split R-hat of Vehtari et al. (2021) and the classic Gelman-Rubin R-hat.
* :func:`gelman_rubin_brooks`: the classic shrink factor on growing windows of the whole run
  (burn-in included), the curve of Brooks & Gelman (1998) / coda's ``gelman.plot`` and of
  Figure 3 of the sHDP paper.
* :func:`rhat`: the R-hat of an array of draws, with one rule for constant and degenerate
  traces; the two above and ``fit(..., until_rhat=...)`` all compute R-hat with it.
* :func:`format_table` / :func:`format_table_markdown`: the summary for reading, condensed
  (:func:`condensed_rows`: per-task monitors on one line, constant monitors and monitors of
  too few draws named in a note instead of a row); :func:`summary_table` keeps every row.

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

__all__ = ["COLUMNS", "DiagnosticUnavailable", "condensed_rows", "default_var_names",
           "format_table", "format_table_markdown", "gelman_rubin_brooks", "rhat",
           "rhat_meaning", "summary_table", "whole_run"]

#: Columns of :func:`summary_table`, in order.
COLUMNS = ("mean", "sd", "mcse_mean", "ess_bulk", "ess_tail", "r_hat", "r_hat_classic")

_SAMPLE_DIMS = ("chain", "draw")

#: Fewest draws per chain, and chains, with which :func:`rhat` is defined.
MIN_DRAWS, MIN_CHAINS = 4, 2


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
    if num_chains < MIN_CHAINS or num_draws < MIN_DRAWS:
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
    NaN; a single draw makes its sd, MCSE and ESS NaN (they need 2). Every monitor element
    has its row (``augmentation_mean[0]``, ``augmentation_mean[1]``, ...): what
    ``summary.json`` records; :func:`format_table` condenses them for reading. The
    DataFrame's ``attrs`` hold ``num_chains``, ``num_draws`` (per chain) and the tree's
    ``response`` (None if it has none), which :func:`format_table` uses.
    Raises :class:`DiagnosticUnavailable` if the group or every monitor is missing, KeyError
    for a requested variable that is not there.
    """
    tree = as_datatree(tree)
    ds = _select(tree, var_names, group)
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
    out = pd.DataFrame(rows, index=pd.Index(labels, name="monitor"), columns=list(COLUMNS))
    out.attrs.update(num_chains=int(ds.sizes["chain"]), num_draws=int(ds.sizes["draw"]),
                     response=tree.attrs.get("response") if isinstance(tree, xr.DataTree)
                     else None)
    return out


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


def _groups(table: pd.DataFrame) -> dict:
    """``{monitor: [row label, ...]}`` in the table's order: a monitor with one element per
    task (``augmentation_mean[0]``, ``augmentation_mean[1]``, ...) is one group; any other
    row (a scalar monitor, or an element of several indices such as ``eta[0,1]``) its own."""
    groups = {}
    for label in table.index:
        label = str(label)
        name, bracket, rest = label.partition("[")
        key = name if bracket and rest[:-1].isdigit() and rest.endswith("]") else label
        groups.setdefault(key, []).append(label)
    return groups


def _value(row, column: str) -> float:
    return float(row[column]) if column in row.index else math.nan


def _too_few_draws(row) -> bool:
    """R-hat and ESS undefined with a finite mean: fewer than 4 draws per chain."""
    return (math.isfinite(_value(row, "mean")) and math.isnan(_value(row, "r_hat"))
            and math.isnan(_value(row, "ess_bulk")))


def _constant(row) -> bool:
    """Constant over every chain and draw: sd 0 and R-hat 1 (:func:`rhat`'s rule)."""
    return _value(row, "sd") == 0.0 and _value(row, "r_hat") == 1.0


def _folded_row(name: str, rows: pd.DataFrame, columns: list) -> tuple:
    """One line for a monitor's per-task rows: (label, cells); the mean column gives the range
    of the tasks' means, ESS the smallest, every other column the largest (the worst R-hat).
    NaN in any task shows (min and max propagate it)."""
    indices = [int(str(label).partition("[")[2][:-1]) for label in rows.index]
    label = f"{name}[{min(indices)}..{max(indices)}]"
    cells = []
    for column in columns:
        values = rows[column].to_numpy(float)
        if column == "mean":
            cells.append(f"{_fmt(column, values.min())}..{_fmt(column, values.max())}")
        else:
            cells.append(_fmt(column, values.min() if column.startswith("ess")
                              else values.max()))
    worst = float(rows["r_hat"].to_numpy(float).max()) if "r_hat" in rows else math.nan
    return label, cells, worst


def _constant_note(name: str, rows: pd.DataFrame) -> str:
    means = rows["mean"].to_numpy(float)
    if len(rows) == 1:
        return f"{rows.index[0]} = {_fmt('mean', means[0])}"
    label, _, _ = _folded_row(name, rows, [])
    same = means.min() == means.max()
    return f"{label} = {_fmt('mean', means[0])}" if same else f"{label} (each task its own)"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _hidden_note(num_hidden: int, attrs: dict) -> str:
    kept = ""
    if "num_draws" in attrs:
        kept = f", this run kept {attrs['num_draws']} after burn-in"
    return (f"{_plural(num_hidden, 'monitor')} not shown: R-hat and ESS need at least "
            f"{MIN_DRAWS} draws per chain{kept} (run more iterations)")


def _loss_note(table: pd.DataFrame) -> list:
    """The legend line of a train_loss that can be negative: the Gaussian response's."""
    if "train_loss" not in table.index:
        return []
    negative = "mean" in table.columns and table.loc["train_loss", "mean"] < 0
    if table.attrs.get("response") != "gaussian" and not negative:
        return []
    return ["train_loss: mean over documents of -log p(y_d | omega_d), nats; for the "
            "Gaussian response that is minus a log density, negative wherever the density "
            "exceeds 1 (a small noise variance): not a loss bounded below by 0"]


def condensed_rows(table: pd.DataFrame, *, compact: bool = True) -> tuple:
    """What :func:`format_table` shows of :func:`summary_table`'s rows, and its notes.

    With ``compact`` (the default): a monitor whose R-hat and ESS are undefined because the
    run kept fewer than 4 draws per chain is not shown (one note says how many and why); a
    monitor constant over every chain and draw (sd 0, R-hat 1, e.g. a training accuracy of 1
    or a fixed noise variance) is left out, named in a note with its value; a monitor with
    one row per task is folded into one line (``augmentation_mean[0..19]``: the range of the
    tasks' means, the largest sd and MCSE, the smallest ESS, the worst R-hat); with one chain
    the R-hat columns are dropped (R-hat compares chains); a train_loss that can be negative
    gets a legend line. A monitor with NaN draws stays, marked. ``compact=False``: every row
    as it is.

    Returns ``(columns, rows, notes)``: the column names shown, ``rows`` a list of
    ``(label, cells, r_hat)`` (cells: formatted strings, one per column; r_hat: the row's
    rank R-hat, the worst over its tasks, for the mark) and ``notes`` (legend lines).
    """
    columns = list(table.columns)
    if not compact:
        return columns, [(str(label), [_fmt(c, float(row[c])) for c in columns],
                          _value(row, "r_hat")) for label, row in table.iterrows()], []
    rows, notes, constant, hidden = [], [], [], 0
    for name, labels in _groups(table).items():
        part = table.loc[labels]
        if all(_too_few_draws(row) for _, row in part.iterrows()):
            hidden += 1
        elif all(_constant(row) for _, row in part.iterrows()):
            constant.append(_constant_note(name, part) + (
                " (the noise variance s2, fixed)" if name == "augmentation_mean"
                and table.attrs.get("response") == "gaussian" else ""))
        elif len(labels) > 1:
            rows.append(_folded_row(name, part, columns))
            notes.append(f"{rows[-1][0]}: {len(labels)} tasks on one line: range of the "
                         "means, largest sd and mcse_mean, smallest ESS, worst R-hat "
                         "(summary.json lists each task)")
        else:
            row = part.iloc[0]
            rows.append((labels[0], [_fmt(c, float(row[c])) for c in columns],
                         _value(row, "r_hat")))
    one_chain = table.attrs.get("num_chains") == 1 or (
        rows and "r_hat" in columns and all(math.isnan(r) for _, _, r in rows)
        and math.isfinite(_value(table.iloc[0], "ess_bulk")))
    if rows and one_chain and "r_hat" in columns:
        keep = [i for i, c in enumerate(columns) if not c.startswith("r_hat")]
        # no R-hat to mark by; a NaN draw (a NaN mean) keeps its mark
        rows = [(label, [cells[i] for i in keep], math.nan if "nan" in cells[0] else 1.0)
                for label, cells, _ in rows]
        columns = [columns[i] for i in keep]
        notes.append("R-hat not shown: it compares chains, and this run has one")
    if constant:
        notes.append("left out, constant in every chain and draw: " + ", ".join(constant))
    if hidden:
        notes.append(_hidden_note(hidden, table.attrs))
    return columns, rows, notes + _loss_note(table)


def _marks(rows: list, flag: float) -> list:
    return ["?" if math.isnan(r) else ("*" if r >= flag else "") for _, _, r in rows]


def _mark_legend(marks, rows, flag: float, star: str = "*") -> list:
    out = []
    if "*" in marks:
        out.append(f"{star} rank R-hat >= {flag}: chains disagree, not converged by this "
                   "monitor")
    if "?" in marks:
        out.append("? R-hat undefined: a single chain, fewer than 4 draws or NaN draws")
    if any(math.isinf(r) and r > 0 for _, _, r in rows):
        out.append(f"R-hat {rhat_meaning(math.inf)}")
    return out


def format_table(table: pd.DataFrame, flag: float = 1.01, *, compact: bool = True) -> str:
    """Plain-text table of :func:`summary_table` for terminals, condensed for reading
    (:func:`condensed_rows`; ``compact=False`` lists every row as it is).

    Rows whose rank R-hat is at least ``flag`` are marked with ``*`` in a last column, rows
    where it is undefined (one chain, < 4 draws, NaN draws: NaN, see :func:`rhat`) with
    ``?``; legend lines below the table explain the marks used, an infinite R-hat, and what
    was folded, left out or not shown.
    """
    columns, rows, notes = condensed_rows(table, compact=compact)
    if not rows:
        return "\n".join(notes or ["no monitor to show"])
    marks = _marks(rows, flag)
    header = ["monitor", *columns, ""]
    body = [[label, *cells, mark] for (label, cells, _), mark in zip(rows, marks, strict=True)]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells):
        first = cells[0].ljust(widths[0])
        rest = [cells[i].rjust(widths[i]) for i in range(1, len(cells) - 1)]
        return "  ".join([first, *rest, cells[-1]]).rstrip()

    out = [line(header), "-" * len(line(header)), *(line(r) for r in body)]
    return "\n".join(out + _mark_legend(marks, rows, flag) + notes)


def format_table_markdown(table: pd.DataFrame, flag: float = 1.01, *,
                          compact: bool = True) -> str:
    """:func:`format_table` as a Markdown table (marks ``\\*`` and ``?`` in a ``flag``
    column), with the same rows and legend."""
    columns, rows, notes = condensed_rows(table, compact=compact)
    if not rows:
        return "\n\n".join(notes or ["No monitor to show."])
    marks = ["\\*" if m == "*" else m for m in _marks(rows, flag)]
    lines = ["| " + " | ".join(["monitor", *columns, "flag"]) + " |",
             "|" + "|".join(["---"] + ["---:"] * len(columns) + [":---:"]) + "|"]
    lines += ["| " + " | ".join([f"`{label}`", *cells, mark]) + " |"
              for (label, cells, _), mark in zip(rows, marks, strict=True)]
    legend = _mark_legend([m.replace("\\", "") for m in marks], rows, flag, star="\\*")
    return "\n".join(lines) + "".join(f"\n\n{line}" for line in legend + notes)


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
