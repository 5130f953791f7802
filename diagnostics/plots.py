"""Diagnostic plots of a fit's DataTree, in ArviZ's style (arviz-plots 1.x + matplotlib).

Every plot function takes the tree (or the FitResult itself, converted with
:func:`topiczoo.diagnostics.to_datatree`) and returns what it drew, writing nothing:

* :func:`plot_trace`, :func:`plot_rank`, :func:`plot_autocorr`: an
  ``arviz_plots.PlotCollection`` from ArviZ's own ``plot_trace`` / ``plot_trace_dist``,
  ``plot_rank`` and ``plot_autocorr``, run on the tree as it is (its ``draw`` is 0..n-1;
  the Gibbs iteration of each draw is the ``iteration`` coordinate, used for the traces'
  x axis and the titles);
* :func:`plot_gelman_rubin_brooks`: a ``matplotlib.figure.Figure`` (ArviZ has no
  Gelman-Rubin-Brooks plot).

Show them with ``pc.show()`` / ``plt.show()``, write them with :func:`save_figure` (which
:func:`topiczoo.diagnostics.write_report` uses), ``pc.savefig`` or ``fig.savefig``. A run
that cannot give a plot (no label-invariant monitor, one chain for a shrink factor) raises
:class:`topiczoo.diagnostics.DiagnosticUnavailable`; other errors are not caught.
"""

from __future__ import annotations

import math
import textwrap
import warnings
from pathlib import Path

import arviz_stats as azs
import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator

from topiczoo.diagnostics.arviz_io import as_datatree, topics_label
from topiczoo.diagnostics.convergence import (
    DiagnosticUnavailable,
    default_var_names,
    gelman_rubin_brooks,
    whole_run,
)
from topiczoo.modes import separated_modes

__all__ = ["plot_autocorr", "plot_gelman_rubin_brooks", "plot_rank", "plot_trace",
           "save_figure"]

#: Resolution of the PNGs written by :func:`save_figure` unless told otherwise.
DPI = 110


def save_figure(figure, path, *, dpi: int = DPI, close: bool = True) -> Path:
    """Write a matplotlib ``Figure`` or an arviz-plots ``PlotCollection`` to ``path``.

    The format follows the extension (``.png``, ``.pdf``, ``.svg``); missing parent
    directories are created; ``bbox_inches="tight"``. With ``close`` (default) the figure is
    closed afterwards, so nothing is left open in pyplot. Returns ``path`` as a Path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(figure, Figure):
        fig = figure
    else:  # a PlotCollection: its matplotlib figure
        fig = figure.get_viz("figure")
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    if close:
        plt.close(fig)
    return path


def _labeller():
    """ArviZ labeller writing ``augmentation_mean[0]`` on one line (the default breaks it)."""
    from arviz_base.labels import BaseLabeller

    class FlatLabeller(BaseLabeller):
        def make_label_vert(self, var_name, sel, isel):
            return self.make_label_flat(var_name, sel, isel)

    return FlatLabeller()


def _var_names(tree, var_names, group="posterior") -> list:
    if group not in tree.children:
        raise DiagnosticUnavailable(f"the tree has no {group!r} group (groups: "
                                    f"{list(tree.children)})")
    if var_names is None:
        names = default_var_names(tree, group)
        if not names:
            raise DiagnosticUnavailable(f"no label-invariant monitor in the {group!r} group; "
                                        "pass var_names")
        return names
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    present = tree[group].data_vars
    missing = [v for v in names if v not in present]
    if missing:
        raise KeyError(f"{missing} not in the {group!r} group")
    return names


def _varying(ds, names) -> list:
    """``names`` less those constant over all draws (ranks all ties, no autocorrelation); all
    of them if every one is constant."""
    return [v for v in names if float(ds[v].max() - ds[v].min()) > 0] or names


def _num_panels(ds, names) -> int:
    return sum(int(np.prod([ds[v].sizes[d] for d in ds[v].dims if d not in ("chain", "draw")]))
               for v in names)


def _title(tree, what: str, iterations) -> str:
    attrs = tree.attrs
    parts = [what]
    if attrs.get("model") is not None:
        parts.append(f"{attrs['model']}, {topics_label(attrs)}={attrs.get('num_topics', '?')}")
    if iterations is not None and len(iterations):
        parts.append(f"iterations {int(iterations[0])}-{int(iterations[-1])}")
    return " | ".join(parts)


def _title_layout(fig, title, legend_room: float = 0.8):
    """A suptitle and a tight layout below it, with room on the right for the figure legend
    (arviz-plots figures have no layout engine: without this, panel titles and x labels
    overlap)."""
    width, height = fig.get_size_inches()
    usable = width - legend_room
    # wrapped to the panels' width (about 11 characters an inch) and centred over them, so
    # that a one-panel figure's title does not run under the legend
    lines = textwrap.wrap(title, max(30, int(usable * 11)))
    fig.suptitle("\n".join(lines), x=0.5 * usable / width, y=1 - 0.12 / height, va="top")
    fig.tight_layout(rect=(0, 0, usable / width, 1 - (0.25 + 0.2 * len(lines)) / height))


def _plot_axes(pc, names, column=None) -> list:
    """The matplotlib axes of the panels of ``names`` in a PlotCollection (of one column of a
    ``plot_trace_dist`` layout if ``column`` is given)."""
    plots = pc.viz["plot"]
    out = []
    for name in names:
        da = plots[name]
        if column is not None and "column" in da.dims:
            da = da.sel(column=column)
        out.extend(np.ravel(da.values).tolist())
    return out


def _burnin_line(ax, burnin, iterations):
    if burnin is not None and len(iterations) and iterations[0] <= burnin < iterations[-1]:
        ax.axvline(burnin + 0.5, color="0.4", linestyle=":", linewidth=1)


# ------------------------------------------------------------------------------ trace


def plot_trace(tree: xr.DataTree, *, var_names=None, include_warmup: bool = False,
               kind: str | None = "kde"):
    """Trace plot, one row per monitor (and element), chains in colours, against iteration.

    ``kind`` "kde", "hist" or "ecdf": ``arviz_plots.plot_trace_dist`` (``compact=False``), a
    column of per-chain marginals (of that kind) next to the traces; an integer-valued
    monitor (``num_topics``, the number of occupied topics) has a histogram with a bin per
    integer there instead of a KDE (``"kde"``, ``"hist"``; its ECDF is already a step
    function). ``kind=None``:
    ``arviz_plots.plot_trace``, the traces only: the better choice with ``include_warmup``,
    where a density of the whole run would mix the burn-in transient into the marginal. The
    x axis is the ``iteration`` coordinate.

    Args:
      tree: a DataTree of :func:`topiczoo.diagnostics.to_datatree`, or the FitResult.
      var_names: default the label-invariant monitors present in ``posterior``, those with an
        element per task only while the figure stays within
        :data:`MAX_DEFAULT_TRACE_ROWS` rows (the title names any left out).
      include_warmup: plot the whole run (``warmup_posterior`` and ``posterior`` joined,
        the end of burn-in dotted) instead of the posterior draws only.
    When the chains' ``log_joint`` sits in separated modes (posterior draws,
    :func:`topiczoo.modes.separated_modes`), the best chain's lines are drawn
    thicker and on top in every panel, and the title names it and the groups.
    Returns the ``arviz_plots.PlotCollection``.
    """
    import arviz_plots as azp

    tree = as_datatree(tree)
    # the whole run of a fit that is all burn-in has no posterior group: its names then
    group = ("warmup_posterior" if include_warmup and "posterior" not in tree.children
             else "posterior")
    names = _var_names(tree, var_names, group)
    left_out = []
    if var_names is None:
        names, left_out = _within_rows(tree[group], names, MAX_DEFAULT_TRACE_ROWS)
    data = (xr.DataTree.from_dict({"posterior": xr.Dataset({v: whole_run(tree, v)
                                                            for v in names})})
            if include_warmup else tree)
    ds = data["posterior"]
    iterations = ds["iteration"].values
    rows = _num_panels(ds, names)
    trace = {"xname": "iteration"}
    if kind is None:  # one column sharing the iteration axis, labelled once at the bottom
        pc = azp.plot_trace(data, var_names=names, labeller=_labeller(), col_wrap=1,
                            visuals={"trace": trace, "xlabel": False},
                            figure_kwargs={"figsize": (10, 1.7 * rows + 0.8)})
        column = None
    else:
        pc = azp.plot_trace_dist(data, var_names=names, labeller=_labeller(),
                                 compact=False, kind=kind, visuals={"trace": trace},
                                 stats={"dist": _marginals(ds, names, kind)},
                                 figure_kwargs={"figsize": (12, 1.9 * rows + 0.8)})
        column = "trace"
    pc.add_legend("chain")
    axes = _plot_axes(pc, names, column)
    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))  # iterations
        if include_warmup:
            _burnin_line(ax, tree.attrs.get("num_burnin"), iterations)
    if kind is None:
        axes[-1].set_xlabel("iteration")
    which = "whole run, end of burn-in dotted" if include_warmup else "posterior draws"
    title = _title(tree, f"Trace ({which})", iterations)
    modes = _modes_of(tree)
    if modes is not None and modes.separated:
        _emphasise_chain(pc, names, modes.best)
        title += (f"; separated modes of log_joint: "
                  + " / ".join("{" + ", ".join(map(str, g)) + "}" for g in modes.groups)
                  + f", best chain {modes.best} drawn thick")
    if left_out:
        title += f"; not shown (pass var_names): {', '.join(left_out)}"
    _title_layout(pc.get_viz("figure"), title, legend_room=1.0 if kind is None else 0.8)
    return pc


def _modes_of(tree):
    """:func:`separated_modes` of the posterior draws' ``log_joint``; None without it, with
    one chain or fewer than 2 draws."""
    if "posterior" not in tree.children or "log_joint" not in tree["posterior"].data_vars:
        return None
    values = tree["posterior"]["log_joint"].transpose("chain", "draw", ...).values
    if values.ndim != 2 or values.shape[0] < 2 or values.shape[1] < 2:
        return None
    if not np.isfinite(values).all():
        return None
    return separated_modes(values)


def _emphasise_chain(pc, names, chain: int):
    """Draw ``chain``'s trace lines thicker and above the others."""
    lines = pc.viz["trace"] if "trace" in pc.viz.children else None
    if lines is None:
        return
    for name in names:
        if name not in lines.data_vars or "chain" not in lines[name].dims:
            continue
        for artist in np.ravel(lines[name].sel(chain=chain).values):
            artist.set_linewidth(2.4 * artist.get_linewidth())
            artist.set_zorder(5)


#: Rows of a trace plot by default (arviz-plots draws at most 40 panels, 20 rows of two, and
#: a taller figure is read by nobody): past it, monitors with an element per task are left out.
MAX_DEFAULT_TRACE_ROWS = 12


def _within_rows(ds: xr.Dataset, names, max_rows: int) -> tuple:
    """(names kept, descriptions of those left out): every single-valued monitor, then the
    monitors with several elements (one per task) in order while the rows stay within
    ``max_rows``."""
    rows = sum(_num_panels(ds, [v]) == 1 for v in names)
    kept, left_out = [], []
    for v in names:
        size = _num_panels(ds, [v])
        if size == 1 or rows + size <= max_rows:
            kept.append(v)
            rows += size if size > 1 else 0
        else:
            left_out.append(f"{v} ({size} elements)")
    return kept, left_out


def _marginals(ds: xr.Dataset, names, kind: str) -> xr.Dataset:
    """The per-chain marginals of ``names`` for the ``dist`` column of
    ``arviz_plots.plot_trace_dist``, computed here (arviz-plots takes them precomputed, each
    variable with its own ``kind`` attribute): an integer-valued monitor as a histogram with
    a bin per integer (wider bins beyond 50 values) unless ``kind`` is "ecdf"; the others as
    ``kind``, by the arviz-stats function arviz-plots itself calls. A monitor constant in
    every draw (train accuracy 1) has no density and an automatic bin width of 0, which makes
    arviz-stats fail: it gets one histogram bar at its value (unless ``kind`` is "ecdf")."""
    functions = {"kde": azs.kde, "hist": azs.histogram, "ecdf": azs.ecdf}
    if kind not in functions:
        raise ValueError(f"kind must be 'kde', 'hist', 'ecdf' or None, got {kind!r}")
    out = {}
    for name in names:
        da = ds[name]
        this, kwargs = kind, {}
        if da.dtype.kind in "iu" and kind != "ecdf":
            low, high = int(da.min()), int(da.max())
            step = max(1, math.ceil((high - low + 1) / 50))
            edges = xr.DataArray(np.arange(low, high + step + 1, step) - 0.5,
                                 dims=f"edges_dim_{name}")
            this, kwargs = "hist", {"bins": xr.broadcast(edges, da.isel(draw=0, drop=True))[0]}
        elif kind != "ecdf" and float(da.max() - da.min()) == 0:
            this, kwargs = "hist", {"bins": 1}  # one bar at the value (v +- 0.5)
        with warnings.catch_warnings():  # a chain that stays at one value has no density
            warnings.filterwarnings("ignore", message="Your data appears to have a single")
            out[name] = functions[this](da, dim="draw", **kwargs)
        out[name].attrs["kind"] = this
    return xr.Dataset(out)


# ------------------------------------------------------------------------------ rank


def plot_rank(tree: xr.DataTree, *, var_names=None):
    """Rank plot (``arviz_plots.plot_rank``, method ``"mtc_c"``): per monitor, the ECDF of
    each chain's fractional ranks (ranks over all chains pooled) minus the uniform ECDF.
    Chains sampling the same distribution stay near 0. Each panel's title gives the p-value
    of arviz-stats' multi-chain uniformity test (small: the chains disagree), and a grey halo
    under a curve marks the ranks that test flags as suspicious. Posterior draws only.

    tree: a DataTree of :func:`topiczoo.diagnostics.to_datatree`, or the FitResult.
    var_names: default the label-invariant monitors present, less those constant over all
    posterior draws (e.g. a training accuracy stuck at 1), whose ranks are all ties.
    Returns the ``arviz_plots.PlotCollection``. Raises :class:`DiagnosticUnavailable` for a
    single chain (the plot compares chains).
    """
    import arviz_plots as azp

    tree = as_datatree(tree)
    names = _var_names(tree, var_names)
    post = tree["posterior"]
    if post.sizes["chain"] < 2:
        raise DiagnosticUnavailable("the rank plot compares chains: it needs at least 2")
    if var_names is None:
        names = _varying(post, names)
    panels = _num_panels(post, names)
    cols = min(3, panels)
    rows = math.ceil(panels / cols)
    pc = azp.plot_rank(tree, var_names=names, labeller=_labeller(), col_wrap=cols,
                       figure_kwargs={"figsize": (max(4.2 * cols, 6.4), 3.0 * rows + 0.6)})
    pc.add_legend("chain")
    fig = pc.get_viz("figure")
    _p_values_to_titles(fig)
    _markers_as_halo(fig)
    _title_layout(fig, _title(tree, "Rank ECDF difference (posterior draws)",
                              post["iteration"].values))
    return pc


def _markers_as_halo(fig, size: float = 80.0):
    """arviz-plots draws its suspicious-rank markers over the curves, hiding the chain
    colours once a few hundred draws are flagged (and its ``visuals`` validator rejects the
    ``suspicious_points`` key it reads): move them under the curves, as a grey halo."""
    from matplotlib.collections import PathCollection

    for ax in fig.axes:
        for collection in ax.collections:
            if isinstance(collection, PathCollection):
                collection.set_sizes([size])
                collection.set_facecolor((0.0, 0.0, 0.0, 0.18))
                collection.set_edgecolor("none")
                collection.set_zorder(1)


def _p_values_to_titles(fig):
    """Move arviz-plots' in-panel p-value text (drawn over the curves) into the panel title
    (its ``visuals`` validator rejects the ``p_value_text`` key that would place it)."""
    for ax in fig.axes:
        for text in list(ax.texts):
            content = text.get_text().strip()
            if content.startswith("p="):
                pretty = content.replace("(", ", ").replace(")", "").replace("=", " = ")
                ax.set_title(f"{ax.get_title()}\nuniformity test {pretty}", fontsize="medium")
                text.remove()


# ------------------------------------------------------------------------------ GRB


GRB_DEFAULT = ("eta_norm", "log_likelihood")


def monitors_in_draws(tree: xr.DataTree) -> set:
    """The names of the variables in the draws of the whole run (``warmup_posterior`` and
    ``posterior``), what :func:`plot_gelman_rubin_brooks` can plot."""
    return {v for g in ("warmup_posterior", "posterior") if g in tree.children
            for v in tree[g].data_vars}


def plot_gelman_rubin_brooks(tree: xr.DataTree, *, var_names=None, num_points: int = 20,
                             window: str = "half", threshold: float = 1.1) -> Figure:
    """Gelman-Rubin-Brooks plot: classic shrink factor against iteration over the whole run
    (:func:`topiczoo.diagnostics.gelman_rubin_brooks`), one panel per monitor, a dashed line
    at ``threshold`` and a dotted one at the end of burn-in. Log-scaled y axis (early values
    are often 10-100 times the converged 1).

    Args:
      tree: a DataTree of :func:`topiczoo.diagnostics.to_datatree`, or the FitResult.
      var_names: monitors to plot, each in the tree (else KeyError); default those of
        ``eta_norm`` and ``log_likelihood`` that the tree has (an unsupervised model has no
        ``eta_norm``; none: :class:`DiagnosticUnavailable`, as with fewer than 2 chains).
    Returns the matplotlib ``Figure``."""
    tree = as_datatree(tree)
    present = monitors_in_draws(tree)
    if var_names is None:
        names = [v for v in GRB_DEFAULT if v in present]
        if not names:
            raise DiagnosticUnavailable(f"none of {list(GRB_DEFAULT)} is in the tree; pass "
                                        "var_names")
    else:
        names = [var_names] if isinstance(var_names, str) else list(var_names)
        missing = [v for v in names if v not in present]
        if missing:
            raise KeyError(f"{missing} not in the tree's draws (has {sorted(present)})")
    curves = [(name, *gelman_rubin_brooks(tree, name, num_points=num_points, window=window))
              for name in names]  # before the figure: nothing is left open if one fails
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 3.8), squeeze=False)
    for ax, (name, iterations, curve) in zip(axes[0], curves, strict=True):
        curve = curve.reshape(curve.shape[0], -1)
        for j in range(curve.shape[1]):
            label = name if curve.shape[1] == 1 else f"{name}[{j}]"
            ax.plot(iterations, curve[:, j], marker="o", markersize=3, linewidth=1.4,
                    color=f"C{j}", label=label)
        ax.axhline(threshold, color="black", linestyle="--", linewidth=1,
                   label=f"{threshold:g}")
        ax.axhline(1.0, color="0.6", linewidth=0.8)
        burnin = tree.attrs.get("num_burnin")
        if burnin is not None and iterations[0] <= burnin < iterations[-1]:
            ax.axvline(burnin, color="0.4", linestyle=":", linewidth=1, label="end of burn-in")
        _log_y(ax, curve, threshold)
        ax.set_xlabel("iteration")
        ax.set_ylabel("shrink factor (classic R-hat)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="best")
    how = "second half of draws" if window == "half" else "all draws"
    fig.suptitle(_title(tree, f"Gelman-Rubin-Brooks ({how} up to each iteration)", None))
    fig.tight_layout()
    return fig


def _log_y(ax, curve, threshold):
    finite = curve[np.isfinite(curve)]
    low = min(0.98, float(finite.min()) * 0.98) if finite.size else 0.98
    high = max(threshold * 1.15, float(finite.max()) * 1.15) if finite.size else 2.0
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    candidates = [1, 1.05, 1.2, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 1e4, 1e5]
    min_gap = (math.log(high) - math.log(low)) / 9  # labels at least ~1/9 of the axis apart
    ticks = [threshold]
    for t in candidates:
        if low <= t <= high and all(abs(math.log(t / k)) >= min_gap for k in ticks):
            ticks.append(t)
    ticks.sort()
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels([f"{t:g}" for t in ticks])


# ------------------------------------------------------------------------------ autocorrelation


def plot_autocorr(tree: xr.DataTree, *, var_names=None, max_lag: int = 50,
                  group: str = "posterior"):
    """Autocorrelation plot (``arviz_plots.plot_autocorr``): per monitor (and element), the
    ACF of each chain against lag in draws, chains in colours, with the +-1.96/sqrt(n) band
    of white noise (n draws per chain).

    The band is drawn here: arviz-plots 1.3 puts its own at 1.96/sqrt(number of lags shown),
    which is not the white-noise band once there are more draws than lags, so it is
    switched off (``visuals={"credible_interval": False}``).

    Args:
      tree: a DataTree of :func:`topiczoo.diagnostics.to_datatree`, or the FitResult.
      var_names: default the label-invariant monitors present in ``group``, less those
        constant over all its draws (no autocorrelation is defined).
      max_lag: largest lag shown, in draws (clipped to the number of draws - 1). With
        thinning k, lag l is k*l iterations.
      group: ``"posterior"`` (default) or ``"warmup_posterior"``.
    Returns the ``arviz_plots.PlotCollection``.
    """
    import arviz_plots as azp

    if isinstance(max_lag, bool) or not isinstance(max_lag, (int, np.integer)) or max_lag < 1:
        raise ValueError(f"max_lag must be an integer >= 1 (draws), got {max_lag!r}")
    tree = as_datatree(tree)
    names = _var_names(tree, var_names, group)
    ds = tree[group]
    if var_names is None:
        names = _varying(ds, names)
    num_draws = ds.sizes["draw"]
    panels = _num_panels(ds, names)
    cols = min(3, panels)
    rows = math.ceil(panels / cols)
    pc = azp.plot_autocorr(tree, var_names=names, group=group,
                           max_lag=min(int(max_lag), num_draws - 1) + 1, labeller=_labeller(),
                           visuals={"credible_interval": False}, col_wrap=cols,
                           figure_kwargs={"figsize": (max(4.4 * cols, 6.4), 2.9 * rows + 0.7)})
    band = 1.96 / math.sqrt(num_draws)
    for ax in _plot_axes(pc, names):
        ax.axhspan(-band, band, color="0.85", zorder=0)
    pc.add_legend("chain")
    which = "posterior draws" if group == "posterior" else "burn-in draws"
    _title_layout(pc.get_viz("figure"),
                  _title(tree, f"Autocorrelation ({which}; grey: white noise "
                               f"\u00b11.96/\u221a{num_draws})", ds["iteration"].values))
    return pc
