"""Diagnostic plots of a fit's DataTree, written to image files (arviz-plots 1.x + matplotlib).

Every function saves one figure and returns its path (a :class:`pathlib.Path`); the format
follows the file name's extension (``.png``, ``.pdf``, ``.svg``). The figures are closed after
saving, so nothing is left open in pyplot.

Importing this module selects matplotlib's non-interactive ``Agg`` backend, unless pyplot is
already imported or ``MPLBACKEND`` is set (a notebook or the user chose one).
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from pathlib import Path

import matplotlib

if "matplotlib.pyplot" not in sys.modules and "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator  # noqa: E402

from topiczoo.diagnostics.convergence import (  # noqa: E402
    default_var_names,
    gelman_rubin_brooks,
    whole_run,
)

__all__ = ["plot_autocorr", "plot_gelman_rubin_brooks", "plot_rank", "plot_trace"]

_DPI = 110


def _labeller():
    """ArviZ labeller writing ``augmentation_mean[0]`` on one line (the default breaks it)."""
    from arviz_base.labels import BaseLabeller

    class FlatLabeller(BaseLabeller):
        def make_label_vert(self, var_name, sel, isel):
            return self.make_label_flat(var_name, sel, isel)

    return FlatLabeller()


def _var_names(tree, var_names, group="posterior") -> list:
    if var_names is None:
        names = default_var_names(tree, group)
        if not names:
            raise ValueError(f"no label-invariant monitor in the {group!r} group; pass var_names")
        return names
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    present = tree[group].data_vars if group in tree.children else {}
    missing = [v for v in names if v not in present]
    if missing:
        raise KeyError(f"{missing} not in the {group!r} group")
    return names


def _num_panels(tree, names, group="posterior") -> int:
    ds = tree[group]
    return sum(int(np.prod([ds[v].sizes[d] for d in ds[v].dims if d not in ("chain", "draw")]))
               for v in names)


def _whole_run_tree(tree, names) -> xr.DataTree:
    """A tree whose ``posterior`` holds warmup and posterior draws joined (trace of the run)."""
    ds = xr.Dataset({v: whole_run(tree, v) for v in names})
    out = xr.DataTree.from_dict({"posterior": ds})
    out.attrs = dict(tree.attrs)
    return out


def _title(tree, what: str, draws) -> str:
    attrs = tree.attrs
    model = attrs.get("model")
    parts = [what]
    if model is not None:
        parts.append(f"{model}, K={attrs.get('num_topics', '?')}")
    if draws is not None and len(draws):
        parts.append(f"iterations {int(draws[0])}-{int(draws[-1])}")
    return " | ".join(parts)


def _save(fig, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _tidy_axes(fig):
    for ax in fig.axes:
        if ax.get_legend() is not None and not ax.has_data():
            continue
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.ticklabel_format(axis="both", style="sci", scilimits=(-3, 5), useOffset=True)


def _burnin_line(ax, tree, draws):
    burnin = tree.attrs.get("num_burnin")
    if burnin is not None and len(draws) and draws[0] <= burnin < draws[-1]:
        ax.axvline(burnin + 0.5, color="0.4", linestyle=":", linewidth=1)


# ------------------------------------------------------------------------------ trace


def plot_trace(tree: xr.DataTree, path, var_names=None, *, include_warmup: bool = False,
               kind: str | None = "kde") -> Path:
    """Trace plot, one row per monitor (and element), chains in colours.

    Left column the marginal density of each chain (``kind``: "kde", "hist" or "ecdf"),
    right column value against iteration. Drawn by ``arviz_plots.plot_trace_dist``
    (``compact=False``), falling back to plain matplotlib (trace only) if arviz-plots fails.
    ``kind=None`` draws the trace column only (plain matplotlib, panels sharing the iteration
    axis): the better choice with ``include_warmup``, where a density of the whole run would
    mix the burn-in transient into the marginal.

    Args:
      var_names: default the label-invariant monitors present in ``posterior``.
      include_warmup: plot the whole run (burn-in draws too, the burn-in end marked by a
        dotted line) instead of the posterior draws only.
    """
    names = _var_names(tree, var_names)
    data = _whole_run_tree(tree, names) if include_warmup else tree
    draws = data["posterior"]["draw"].values
    rows = _num_panels(data, names)
    title = _title(tree, "Trace" + (" (whole run)" if include_warmup else " (posterior draws)"),
                   draws)
    if kind is None:
        fig = _plot_trace_matplotlib(data, names, tree)
        _title_layout(fig, title, legend_room=1.0)
        return _save(fig, path)
    try:
        import arviz_plots as azp

        with warnings.catch_warnings():  # a constant monitor (accuracy 1) has no density
            warnings.filterwarnings("ignore", message="Your data appears to have a single")
            pc = azp.plot_trace_dist(data, var_names=names, compact=False, kind=kind,
                                     labeller=_labeller(),
                                     figure_kwargs={"figsize": (12, 1.9 * rows + 0.8)})
        pc.add_legend("chain")
        fig = pc.get_viz("figure")
        _tidy_axes(fig)
        for ax in _trace_axes(pc, names):
            if ax.get_xlabel():
                ax.set_xlabel("iteration")
            if include_warmup:
                _burnin_line(ax, tree, draws)
    except Exception as err:  # noqa: BLE001  arviz-plots is young; never lose the plot
        warnings.warn(f"arviz_plots.plot_trace_dist failed ({err!r}); plain matplotlib trace",
                      RuntimeWarning, stacklevel=2)
        plt.close("all")
        fig = _plot_trace_matplotlib(data, names, tree)
    _title_layout(fig, title)
    return _save(fig, path)


def _title_layout(fig, title, legend_room: float = 0.8):
    """Tight layout below a suptitle, with room on the right for a figure legend."""
    width, height = fig.get_size_inches()
    fig.suptitle(title, y=1 - 0.12 / height, va="top")
    fig.tight_layout(rect=(0, 0, 1 - legend_room / width, 1 - 0.45 / height))


def _trace_axes(pc, names):
    """The matplotlib axes of the trace column of a plot_trace_dist PlotCollection."""
    plots = pc.viz["plot"] if "plot" in pc.viz.children else pc.viz
    out = []
    for name in names:
        da = plots[name]
        if "column" in da.dims:
            da = da.sel(column="trace")
        out.extend(np.ravel(da.values).tolist())
    return out


def _elements(da: xr.DataArray):
    """(label, [chain, draw] array) for each element of a monitor."""
    extra = [d for d in da.dims if d not in ("chain", "draw")]
    da = da.transpose("chain", "draw", *extra)
    if not extra:
        yield da.name, da.values
        return
    for index in np.ndindex(*[da.sizes[d] for d in extra]):
        sel = {d: i for d, i in zip(extra, index, strict=True)}
        coords = ",".join(str(da[d].values[i]) for d, i in sel.items())
        yield f"{da.name}[{coords}]", da.isel(sel).values


def _plot_trace_matplotlib(data, names, tree):
    ds = data["posterior"]
    panels = [item for v in names for item in _elements(ds[v])]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 1.7 * len(panels) + 0.8),
                             sharex=True, squeeze=False)
    draws = ds["draw"].values
    for ax, (label, values) in zip(axes[:, 0], panels, strict=True):
        for c in range(values.shape[0]):
            ax.plot(draws, values[c], linewidth=1, color=f"C{c}", label=f"chain {c}")
        ax.set_ylabel(label)
        _burnin_line(ax, tree, draws)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    burnin = tree.attrs.get("num_burnin")
    if burnin is not None and len(draws) and draws[0] <= burnin < draws[-1]:
        handles.append(plt.Line2D([], [], color="0.4", linestyle=":", linewidth=1))
        labels.append("end of burn-in")
    axes[0, 0].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                      fontsize="small")
    axes[-1, 0].set_xlabel("iteration")
    _tidy_axes(fig)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------ rank


def plot_rank(tree: xr.DataTree, path, var_names=None) -> Path:
    """Rank plot (``arviz_plots.plot_rank``, method ``"mtc_c"``): per monitor, the ECDF of
    each chain's fractional ranks (ranks over all chains pooled) minus the uniform ECDF.
    Chains sampling the same distribution stay near 0. Each panel's title gives the p-value
    of arviz-stats' multi-chain uniformity test (small: the chains disagree), and a grey halo
    under a curve marks the ranks that test flags as suspicious. Posterior draws only.

    var_names: default the label-invariant monitors present, less those constant over all
    posterior draws (e.g. a training accuracy stuck at 1), whose ranks are all ties.
    """
    import arviz_plots as azp

    names = _var_names(tree, var_names)
    if var_names is None:  # ranks of a constant trace are all ties: the plot would mislead
        post = tree["posterior"]
        names = [v for v in names if float(post[v].max() - post[v].min()) > 0] or names
    panels = _num_panels(tree, names)
    cols = min(3, panels)
    rows = math.ceil(panels / cols)
    pc = azp.plot_rank(tree, var_names=names, labeller=_labeller(), col_wrap=cols,
                       figure_kwargs={"figsize": (4.2 * cols, 3.0 * rows + 0.6)})
    pc.add_legend("chain")
    fig = pc.get_viz("figure")
    _p_values_to_titles(fig)
    _markers_as_halo(fig)
    _title_layout(fig, _title(tree, "Rank ECDF difference (posterior draws)",
                              tree["posterior"]["draw"].values))
    return _save(fig, path)


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
    """Move arviz-plots' in-panel p-value text (drawn over the curves) into the panel title."""
    for ax in fig.axes:
        for text in list(ax.texts):
            content = text.get_text().strip()
            if content.startswith("p="):
                pretty = content.replace("(", ", ").replace(")", "").replace("=", " = ")
                ax.set_title(f"{ax.get_title()}\nuniformity test {pretty}", fontsize="medium")
                text.remove()


# ------------------------------------------------------------------------------ GRB


def plot_gelman_rubin_brooks(tree: xr.DataTree, path, var_names=("eta_norm", "log_likelihood"),
                             *, num_points: int = 20, window: str = "half",
                             threshold: float = 1.1) -> Path:
    """Gelman-Rubin-Brooks plot: classic shrink factor against iteration over the whole run
    (:func:`topiczoo.diagnostics.gelman_rubin_brooks`), one panel per monitor, a dashed line
    at ``threshold`` and a dotted one at the end of burn-in. Monitors absent from the tree
    are skipped; at least one must be present. Log-scaled y axis (early values are often
    10-100 times the converged 1)."""
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    groups = [g for g in ("warmup_posterior", "posterior") if g in tree.children]
    names = [v for v in names if any(v in tree[g].data_vars for g in groups)]
    if not names:
        raise ValueError(f"none of {var_names} is in the tree")
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        iterations, curve = gelman_rubin_brooks(tree, name, num_points=num_points, window=window)
        curve = curve.reshape(curve.shape[0], -1)
        for j in range(curve.shape[1]):
            label = name if curve.shape[1] == 1 else f"{name}[{j}]"
            ax.plot(iterations, curve[:, j], marker="o", markersize=3, linewidth=1.4,
                    color=f"C{j}", label=label)
        ax.axhline(threshold, color="C3", linestyle="--", linewidth=1,
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
    return _save(fig, path)


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


def autocorrelation(tree: xr.DataTree, var_name: str, max_lag: int | None = None,
                    group: str = "posterior") -> xr.DataArray:
    """Autocorrelation function of each chain of ``tree[group][var_name]`` against lag in draws.

    Computed by ``arviz_stats`` (the ``azstats.autocorr`` accessor, FFT-based, the estimator
    its ESS uses) along ``draw``; returned with dims ``(chain, lag, ...)``, lag 0 to
    ``max_lag`` (default: all lags up to the number of draws - 1). A constant chain gives NaN.
    """
    import arviz_stats  # noqa: F401  (registers the azstats accessor)

    da = tree[group][var_name].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        acf = da.to_dataset().azstats.autocorr(dim=["draw"])[var_name]
    num_draws = da.sizes["draw"]
    last = num_draws - 1 if max_lag is None else min(int(max_lag), num_draws - 1)
    acf = acf.isel(draw=slice(0, last + 1)).rename(draw="lag")
    return acf.assign_coords(lag=np.arange(last + 1, dtype=np.int64))


def plot_autocorr(tree: xr.DataTree, path, var_names=None, *, max_lag: int = 50,
                  group: str = "posterior") -> Path:
    """Autocorrelation plot: per monitor (and element), the ACF of each chain against lag,
    chains in colours, with the +-1.96/sqrt(n) band of white noise (n draws per chain).

    ``arviz_plots.plot_autocorr`` (1.3) is not used: it selects lags by the ``draw``
    coordinate's labels (ours are iteration numbers, so it fails unless the draws are
    renumbered from 0) and draws its band at 1.96/sqrt(max_lag) instead of 1.96/sqrt(n). The
    ACF comes from :func:`autocorrelation` (``arviz_stats``), the figure from matplotlib.

    Args:
      var_names: default the label-invariant monitors present in ``group``, less those
        constant over all its draws (no autocorrelation is defined).
      max_lag: largest lag shown, in draws (clipped to the number of draws - 1). With
        thinning k, lag l is k*l iterations (said in the x label).
      group: ``"posterior"`` (default) or ``"warmup_posterior"``.
    """
    names = _var_names(tree, var_names, group)
    ds = tree[group]
    if var_names is None:
        names = [v for v in names if float(ds[v].max() - ds[v].min()) > 0] or names
    panels = [(label, values) for v in names
              for label, values in _elements(autocorrelation(tree, v, max_lag, group)
                                             .rename(lag="draw").rename(v))]
    num_draws = ds.sizes["draw"]
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 2.9 * rows + 0.7), sharex=True,
                             sharey=True, squeeze=False)
    band = 1.96 / math.sqrt(num_draws)
    for ax, (label, values) in zip(axes.flat, panels):
        lags = np.arange(values.shape[1])
        ax.axhspan(-band, band, color="0.85", zorder=0)
        ax.axhline(0.0, color="0.4", linewidth=0.8)
        for c in range(values.shape[0]):
            ax.plot(lags, values[c], linewidth=1.3, color=f"C{c}", label=f"chain {c}")
        ax.set_title(label, fontsize="medium")
        ax.set_ylim(-1.05, 1.05)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    thinning = int(tree.attrs.get("thinning", 1) or 1)
    xlabel = "lag (draws)" if thinning == 1 else f"lag (draws of {thinning} iterations)"
    for ax in axes[-1]:
        ax.set_xlabel(xlabel)
        ax.xaxis.set_tick_params(labelbottom=True)
    for row in axes:
        row[0].set_ylabel("autocorrelation")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    handles.append(plt.Rectangle((0, 0), 1, 1, color="0.85"))
    labels.append(f"white noise\n\u00b11.96/\u221a{num_draws}")
    fig.legend(handles, labels, loc="upper right",
               bbox_to_anchor=(1.0, 1 - 0.5 / fig.get_size_inches()[1]), fontsize="small",
               frameon=False)
    which = "posterior draws" if group == "posterior" else "burn-in draws"
    _title_layout(fig, _title(tree, f"Autocorrelation ({which})", ds["draw"].values),
                  legend_room=1.4)
    return _save(fig, path)
