"""Diagnostics of fits: ArviZ 1.x DataTree export, convergence tables, plots and reports.

The plot functions return a matplotlib Figure or an arviz-plots PlotCollection and write
nothing; :func:`save_figure` writes one, :func:`write_report` / :func:`diagnose` write a run
directory's report and its figures.
"""

from topiczoo.diagnostics.arviz_io import (LABEL_INVARIANT, load_datatree, save_datatree,
                                           to_datatree)
from topiczoo.diagnostics.convergence import (DiagnosticUnavailable, format_table,
                                              gelman_rubin_brooks, rhat, summary_table)
from topiczoo.diagnostics.plots import (plot_autocorr, plot_gelman_rubin_brooks, plot_rank,
                                        plot_trace, save_figure)
from topiczoo.diagnostics.report import Report, diagnose, write_report

__all__ = ["LABEL_INVARIANT", "DiagnosticUnavailable", "Report", "diagnose", "format_table",
           "gelman_rubin_brooks", "load_datatree", "plot_autocorr", "plot_gelman_rubin_brooks",
           "plot_rank", "plot_trace", "rhat", "save_datatree", "save_figure",
           "summary_table", "to_datatree", "write_report"]
