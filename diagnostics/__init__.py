"""Diagnostics of fits: ArviZ 1.x DataTree export, convergence tables, plots and reports."""

from topiczoo.diagnostics.arviz_io import (LABEL_INVARIANT, load_datatree, save_datatree,
                                           to_datatree)
from topiczoo.diagnostics.convergence import (format_table, gelman_rubin_brooks,
                                              summary_table)
from topiczoo.diagnostics.plots import (autocorrelation, plot_autocorr,
                                        plot_gelman_rubin_brooks, plot_rank, plot_trace)
from topiczoo.diagnostics.report import Report, diagnose, write_report

__all__ = ["LABEL_INVARIANT", "Report", "autocorrelation", "diagnose", "format_table",
           "gelman_rubin_brooks", "load_datatree", "plot_autocorr", "plot_gelman_rubin_brooks",
           "plot_rank", "plot_trace", "save_datatree", "summary_table", "to_datatree",
           "write_report"]
