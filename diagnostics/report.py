"""A Markdown diagnostics report of a run directory (what ``topiczoo fit`` writes).

:func:`write_report` reads ``RUN_DIR/posterior.nc`` (the ArviZ DataTree of
:func:`topiczoo.diagnostics.to_datatree`) and, if present, ``RUN_DIR/summary.json``, and writes
into ``RUN_DIR``:

* ``report.md``: run settings; test accuracy of the four averaging strategies (SF, SA, MF,
  MA: from ``summary.json``, or recomputed from the tree's ``predictions`` and
  ``observed_data`` when there is no summary); timing (total and per iteration from the
  ``time_per_iteration`` sample statistic when recorded); the convergence table of the
  label-invariant monitors (rank-normalised split R-hat, classic Gelman-Rubin R-hat, bulk and
  tail ESS, MCSE of the mean: :func:`topiczoo.diagnostics.summary_table`, condensed as
  :func:`topiczoo.diagnostics.format_table` condenses it); the chains' modes of the log
  joint and, for a replica-exchange run, whether its replicas exchange
  (:mod:`topiczoo.modes`); and the figures;
* the figures (PNG): ``trace_whole_run.png`` (trace of the whole run, burn-in included and
  marked), ``rank.png`` (rank ECDF differences, posterior draws), ``gelman_rubin_brooks.png``
  (shrink factor against iteration for ``log_joint``, ``eta_norm``, ``log_likelihood``,
  ``train_loss``),
  ``autocorr.png`` (autocorrelation of each chain, posterior draws). The ``trace.png`` that
  ``topiczoo fit`` writes is left alone.

The plot functions return figures and write nothing; this module is the one that writes
files (with :func:`topiczoo.diagnostics.save_figure`). A figure the run cannot give (it
raises :class:`topiczoo.diagnostics.DiagnosticUnavailable`, e.g. a Gelman-Rubin-Brooks curve
of a single chain) is replaced in the report by a line saying why; any other error
propagates.

:func:`diagnose` is the command-line entry: it writes the report and returns the text to
print (accuracy, the plain-text convergence table, the modes and the replicas' exchanges in
plain words, the files written).

The test metrics come from ``summary.json``; without it, a single binary task's accuracy is
recomputed from the tree (:mod:`topiczoo.diagnostics.averaging`): the report reads files and
needs nothing from the modules that fit or predict.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from topiczoo.diagnostics.arviz_io import load_datatree, topics_label
from topiczoo.diagnostics.averaging import STRATEGIES, reduce_predictions
from topiczoo.diagnostics.convergence import (DiagnosticUnavailable, format_table,
                                              format_table_markdown, summary_table)
from topiczoo.modes import (SWAP_LOG_RATIO_AIM, modes_words, replica_swaps, replica_words,
                            separated_modes)
from topiczoo.diagnostics.plots import (monitors_in_draws, plot_autocorr,
                                        plot_gelman_rubin_brooks, plot_rank, plot_trace,
                                        save_figure)

__all__ = ["Report", "diagnose", "write_report"]

STRATEGY_NAMES = {"sf": "single final (SF)", "sa": "single average (SA)",
                  "mf": "multiple final (MF)", "ma": "multiple average (MA)"}

#: Monitors of the Gelman-Rubin-Brooks figure (those present are drawn).
GRB_MONITORS = ("log_joint", "eta_norm", "log_likelihood", "train_loss")

FIGURES = {"trace": "trace_whole_run.png", "rank": "rank.png",
           "gelman_rubin_brooks": "gelman_rubin_brooks.png", "autocorr": "autocorr.png"}


class Report(NamedTuple):
    """What :func:`write_report` returns: unpack as ``path, table = write_report(run_dir)``.

    path: the ``report.md`` written; table: the plain-text convergence table
    (:func:`topiczoo.diagnostics.format_table`, empty if the run has no post-burn-in draws);
    figures: ``{name: Path}`` of the PNGs drawn; metrics: ``{strategy: {metric: value}}`` of
    the test predictions (accuracy; predictive_r2 and mse; precision, recall and f1), may be
    empty; notes: why a part was left out, if any; modes: the chains' modes of the log joint
    in plain words (:func:`topiczoo.modes.modes_words`), empty when the run has
    no ``log_joint`` monitor, one chain or fewer than 2 posterior draws; replicas: whether the
    replicas of a replica-exchange run exchange, in plain words
    (:func:`topiczoo.modes.replica_words`), empty for other runs.
    """

    path: Path
    table: str
    figures: dict
    metrics: dict
    notes: list
    modes: str = ""
    replicas: str = ""


def _plain(value):
    """numpy scalars from netCDF attributes as plain Python values."""
    return value.item() if isinstance(value, np.generic) else value


def _fmt_number(value) -> str:
    value = _plain(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.4g}"
    return str(value)


def _accuracy_from_tree(tree) -> dict:
    """``{strategy: {"accuracy": value}}`` from ``predictions/scores`` and ``observed_data/y``.

    Only for a single binary task (logistic or hinge response: label 1 where the averaged score
    is > 0, labels 0/1); other tasks need the metrics ``topiczoo fit`` wrote to summary.json.
    """
    if "predictions" not in tree.children or "observed_data" not in tree.children:
        return {}
    if tree.attrs.get("response") not in ("logistic", "hinge"):
        return {}
    scores = tree["predictions"]["scores"]
    if scores.sizes["task"] != 1:
        return {}
    y = tree["observed_data"]["y"].transpose("task", "document").values
    return {s: {"accuracy": float(np.mean(
        (reduce_predictions(scores, s).transpose("task", "document").values > 0) == (y > 0)))}
        for s in STRATEGIES}


def _settings_rows(tree, summary) -> list:
    attrs = {k: _plain(v) for k, v in tree.attrs.items()}
    rows = [("model", attrs.get("model", summary.get("model"))),
            ("data", summary.get("data", "?")),
            ("sampler", attrs.get("sampler", summary.get("sampler", "?"))),
            (f"topics {topics_label(attrs)}", attrs.get("num_topics", summary.get("topics"))),
            ("chains", attrs.get("num_chains", summary.get("chains"))),
            ("iterations (per chain)", attrs.get("iterations", summary.get("iterations"))),
            ("burn-in B_TR", attrs.get("num_burnin", summary.get("burnin"))),
            ("thinning", attrs.get("thinning", 1)),
            ("seed", attrs.get("seed", summary.get("seed"))),
            ("chains' start", attrs.get("init", summary.get("init")))]
    hyper = summary.get("hyperparameters") or {
        k: attrs[k] for k in ("alpha", "beta", "nu2", "c", "ell") if k in attrs}
    if "response" in attrs:  # it has its own row below
        hyper = {k: v for k, v in hyper.items() if k != "response"}
    if hyper:
        rows.append(("hyperparameters", ", ".join(f"{k} = {_fmt_number(v)}"
                                                  for k, v in hyper.items())))
    if "response" in attrs:
        rows.append(("response", attrs["response"]))
    if "predictions" in tree.children:
        pred = tree["predictions"]
        snaps = [int(s) for s in pred["snapshot"].values]
        shown = ", ".join(map(str, snaps)) if len(snaps) <= 12 else (
            ", ".join(map(str, snaps[:5])) + ", ..., " + ", ".join(map(str, snaps[-3:])))
        rows.append(("training snapshots (T_TR)", f"{len(snaps)} per chain, iterations {shown}"))
        rows.append(("test draws per test chain (J)", pred.sizes["test_draw"]))
        rows.append(("test documents", pred.sizes["document"]))
    return rows


def _timing_lines(tree, summary) -> list:
    attrs = {k: _plain(v) for k, v in tree.attrs.items()}
    lines = []
    seconds = summary.get("train_seconds", attrs.get("train_seconds"))
    if seconds is not None:
        line = f"- training: {seconds:.1f} s"
        rate = summary.get("token_iterations_per_second",
                           attrs.get("token_iterations_per_second"))
        if rate is not None and math.isfinite(rate):
            line += f", {rate / 1e6:.2f} M token-iterations/s (all chains)"
        lines.append(line)
    if summary.get("predict_seconds") is not None:
        lines.append(f"- prediction: {summary['predict_seconds']:.1f} s")
    parts = [tree[g]["time_per_iteration"] for g in ("warmup_sample_stats", "sample_stats")
             if g in tree.children and "time_per_iteration" in tree[g].data_vars]
    if parts:
        values = np.concatenate([np.asarray(p.values)[0] for p in parts])
        values = values[np.isfinite(values)]
        if values.size:
            # chunk values repeat for each draw of a chunk; the first chunk holds compilation
            chunks = values[np.r_[True, np.diff(values) != 0]]
            later = chunks[1:] if chunks.size > 1 else chunks
            lines.append(f"- seconds per iteration (per chunk, `time_per_iteration`): first "
                         f"chunk {chunks[0]:.3f} (includes compilation), median of the "
                         f"{later.size} other chunk(s) {np.median(later):.3f}, "
                         f"range {later.min():.3f}-{later.max():.3f}")
    return lines


def _read_run(run_dir: Path) -> tuple:
    """(tree, summary) of a run directory: its ``posterior.nc`` and its ``summary.json``
    (``{}`` when absent). FileNotFoundError, saying why, without a tree."""
    tree_path = run_dir / "posterior.nc"
    if not tree_path.is_file():
        if (run_dir / "summary.json").is_file():
            raise FileNotFoundError(
                f"{run_dir} holds summary.json but no posterior.nc: a one-vs-all run "
                "(gslda-ova, medlda-ova) fits one model per class and keeps none, so it has "
                "no tree to diagnose; its test metrics are in summary.json")
        raise FileNotFoundError(f"{tree_path} not found: is {run_dir} a run directory of "
                                "`topiczoo fit`?")
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    return load_datatree(tree_path), summary


def _run_section(run_dir: Path, tree, summary) -> list:
    """The report's title, its sources and the table of the run's settings (lines)."""
    md = [f"# Diagnostics of `{run_dir.name or run_dir.resolve().name}`", ""]
    md.append("Generated by `topiczoo.diagnostics.write_report` from `posterior.nc`"
              + (" and `summary.json`." if summary else " (no `summary.json` found)."))
    if summary.get("note"):
        md += ["", f"Note from `summary.json`: {summary['note']}"]
    md += ["", "## Run", "", "| setting | value |", "|---|---|"]
    md += [f"| {k} | {_fmt_number(v)} |" for k, v in _settings_rows(tree, summary)
           if v is not None]
    return md


def _metrics_section(tree, summary) -> tuple:
    """(metrics ``{strategy: {metric: value}}``, lines): the test metrics of the four
    strategies, from summary.json, else recomputed from the tree where it can be."""
    metrics = dict(summary.get("test_metrics_by_strategy") or {})
    source = "summary.json"
    if not metrics:
        metrics = _accuracy_from_tree(tree)
        source = "recomputed from the tree's predictions (label 1 where the score > 0)"
    md = ["", "## Test metrics by averaging strategy", ""]
    if metrics:
        names = list(next(iter(metrics.values())))
        md += ["| strategy | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
        for key, name in STRATEGY_NAMES.items():
            if key in metrics:
                md.append(f"| {name} | " + " | ".join(
                    f"{metrics[key].get(n, float('nan')):.4f}" for n in names) + " |")
        md += ["", f"Source: {source}. SF: last snapshot and last test draw of chain 0; SA: "
               "chain 0's last snapshot, mean over its test draws; MF: mean over all chains and "
               "snapshots of each test chain's last draw; MA: mean over all chains, snapshots "
               "and test draws (Nguyen, Boyd-Graber & Resnik 2014)."]
        if summary.get("average"):
            md.append(f"The run reported `{summary['average']}`.")
    elif "predictions" in tree.children:
        md.append("The tree holds test predictions, but only a single binary task's accuracy "
                  "can be recomputed from it; the metrics of this run's task are those "
                  "`topiczoo fit` writes to summary.json"
                  + (" (this one has none)." if summary else " (not in this run directory)."))
    else:
        md.append("No test predictions in this run.")
    return metrics, md


def _convergence_section(tree, notes: list) -> tuple:
    """(plain-text table, lines): the convergence table of the label-invariant monitors
    (:func:`topiczoo.diagnostics.format_table` and its Markdown form); why there is none
    is added to ``notes``."""
    md = ["", "## Convergence of the label-invariant monitors", ""]
    if "posterior" not in tree.children:
        notes.append("convergence table: no post-burn-in draws")
        return "", md + ["No post-burn-in draws: no table."]
    try:
        table = summary_table(tree)
    except DiagnosticUnavailable as err:
        notes.append(f"convergence table: {err}")
        return "", md + [f"No table: {err}."]
    post = tree["posterior"]["iteration"].values
    md += [f"Posterior draws only: iterations {int(post[0])}-{int(post[-1])}, "
           f"{tree['posterior'].sizes['chain']} chains x {post.size} draws. `r_hat`: "
           "rank-normalised split R-hat (Vehtari et al. 2021; < 1.01 is the usual "
           "target); `r_hat_classic`: Gelman-Rubin's potential scale reduction on whole "
           "chains; `ess_bulk` / `ess_tail`: effective sample sizes (all chains "
           "together); `mcse_mean`: Monte Carlo standard error of the mean. Topic "
           "labels switch between chains, so eta's per-topic entries are left out.",
           "", format_table_markdown(table)]
    return format_table(table), md


def _modes_section(tree) -> tuple:
    """(plain words, lines): whether the chains' log joint densities (posterior draws) sit in
    separated modes, which chains where, and the best chain; ``("", [])`` when the run cannot
    say (no ``log_joint``, one chain, fewer than 2 draws)."""
    if "posterior" not in tree.children or "log_joint" not in tree["posterior"].data_vars:
        return "", []
    values = tree["posterior"]["log_joint"].transpose("chain", "draw").values
    if values.shape[0] < 2 or values.shape[1] < 2 or not np.isfinite(values).all():
        return "", []
    modes = separated_modes(values)
    words = modes_words(modes)
    md = ["", "## Modes of the log joint", "", words + ".", "",
          "| chain | mean log joint | sd | group |", "|---:|---:|---:|---:|"]
    group_of = {c: g for g, group in enumerate(modes.groups) for c in group}
    for c in np.argsort(-modes.means, kind="stable"):
        md.append(f"| {c}{' (best)' if c == modes.best else ''} | {modes.means[c]:.8g} | "
                  f"{modes.sds[c]:.4g} | {group_of[int(c)]} |")
    md += ["", f"Groups: chains whose mean log joints differ by more than {modes.threshold:g} "
           "within-chain standard deviations are in different groups (best first). The "
           "trace figures draw the best chain thick when there is more than one group."]
    return words, md


def _replicas_section(tree) -> tuple:
    """(plain words, lines): whether a replica-exchange run's neighbouring replicas exchange
    (posterior draws of its ``swap_rate`` and ``swap_log_ratio`` monitors), a row per pair;
    ``("", [])`` for other runs."""
    if "posterior" not in tree.children or not {"swap_rate", "swap_log_ratio"} <= set(
            tree["posterior"].data_vars):
        return "", []
    post = tree["posterior"]
    swaps = replica_swaps(*(post[name].transpose("chain", "draw", ...).values
                            for name in ("swap_rate", "swap_log_ratio")))
    words = replica_words(swaps)
    md = ["", "## Replica exchange", "", words + ".", "",
          "| replicas | accepted share | mean log ratio (nats) | gaps it would take |",
          "|---|---:|---:|---:|"]
    for r, (rate, ratio, split) in enumerate(zip(swaps.rates, swaps.mean_log_ratios,
                                                 swaps.splits)):
        md.append(f"| ({r}, {r + 1}) | {rate:.3f} | {ratio:.4g} | {split} |")
    md += ["", "Accepted share: of the swaps proposed to the pair since the start (chains "
           "pooled). Mean log ratio: of an exchange of the pair, (tau_r - tau_r+1) (l_r+1 - "
           "l_r), over the posterior draws; a pair exchanges often near "
           f"-{SWAP_LOG_RATIO_AIM:g}. Gaps it would take: the pair's power gap cut so that "
           "each part's log ratio averages about that (it grows as the gap squared)."]
    return words, md


def _figure_makers(tree) -> dict:
    """``{name: (caption, function drawing the figure)}`` of the report's figures."""
    drawn = monitors_in_draws(tree)
    grb_monitors = [v for v in GRB_MONITORS if v in drawn] or None
    return {
        "trace": ("Trace of the whole run (burn-in included, its end dotted)",
                  lambda: plot_trace(tree, include_warmup=True, kind=None)),
        "rank": ("Rank plot (posterior draws): ECDF of each chain's fractional ranks minus "
                 "the uniform one; near 0 when the chains agree. Panel titles give the p-value "
                 "of the multi-chain rank uniformity test, a grey halo marks the ranks it "
                 "flags",
                 lambda: plot_rank(tree)),
        "gelman_rubin_brooks": ("Gelman-Rubin-Brooks plot: classic shrink factor on the "
                                "second half of the draws up to each iteration",
                                lambda: plot_gelman_rubin_brooks(tree,
                                                                 var_names=grb_monitors)),
        "autocorr": ("Autocorrelation of each chain (posterior draws)",
                     lambda: plot_autocorr(tree)),
    }


def _figures_section(tree, run_dir: Path, notes: list) -> tuple:
    """(``{name: Path}`` of the PNGs written, lines): draw and save each figure; one the run
    cannot give (:class:`DiagnosticUnavailable`) is named with why, in the lines and in
    ``notes``."""
    figures = {}
    md = ["", "## Figures", ""]
    for key, (caption, make) in _figure_makers(tree).items():
        try:
            figure = make()
        except DiagnosticUnavailable as err:  # the run cannot give this figure: say why
            notes.append(f"{key}: {err}")
            md += [f"**{caption}**: not drawn ({err}).", ""]
            continue
        figures[key] = save_figure(figure, run_dir / FIGURES[key])
        md += [f"**{caption}.**", "", f"![{key}]({FIGURES[key]})", ""]
    if (run_dir / "trace.png").is_file():
        md += ["**Trace and per-chain densities of the posterior draws (written by "
               "`topiczoo fit`).**", "", "![trace of the posterior draws](trace.png)", ""]
    return figures, md


def write_report(run_dir) -> Report:
    """Write ``run_dir/report.md`` and its figures (see the module docstring).

    Args:
      run_dir: a directory holding ``posterior.nc`` (required) and ``summary.json``
        (optional), as written by ``topiczoo fit``.
    Returns a :class:`Report` named tuple ``(path, table, figures, metrics, notes)``; the
    first two are the report's path and the plain-text convergence table, so
    ``path, table, *_ = write_report(run_dir)``.
    Raises FileNotFoundError if ``run_dir/posterior.nc`` does not exist.
    """
    run_dir = Path(run_dir)
    tree, summary = _read_run(run_dir)
    notes = []
    md = _run_section(run_dir, tree, summary)
    metrics, lines = _metrics_section(tree, summary)
    md += lines
    timing = _timing_lines(tree, summary)
    if timing:
        md += ["", "## Timing", "", *timing]
    table_text, lines = _convergence_section(tree, notes)
    md += lines
    modes, lines = _modes_section(tree)
    md += lines
    replicas, lines = _replicas_section(tree)
    md += lines
    figures, lines = _figures_section(tree, run_dir, notes)
    md += lines
    if notes:
        md += ["## Notes", "", *(f"- {n}" for n in notes), ""]
    path = run_dir / "report.md"
    path.write_text("\n".join(md).rstrip() + "\n")
    return Report(path, table_text, figures, metrics, notes, modes, replicas)


def diagnose(run_dir) -> str:
    """Write the report of ``run_dir`` (:func:`write_report`) and return the text to print:
    the test metrics of each strategy, the plain-text convergence table, the chains' modes of
    the log joint (separated or not, the best chain), whether a replica-exchange run's
    replicas exchange, and the files written."""
    report = write_report(run_dir)
    lines = []
    if report.metrics:
        for name in next(iter(report.metrics.values())):
            lines.append(f"test {name}: " + "  ".join(
                f"{k} {m[name]:.4f}" for k, m in report.metrics.items() if name in m))
    if report.table:
        lines += [report.table]
    if report.modes:
        lines.append(report.modes)
    if report.replicas:
        lines.append(report.replicas)
    for note in report.notes:
        lines.append(f"note: {note}")
    written = [report.path, *report.figures.values()]
    lines.append("wrote " + ", ".join(str(p) for p in written))
    return "\n".join(lines)
