"""Diagnostics of fits: ArviZ 1.x DataTree export, convergence tables and plots."""

from topiczoo.diagnostics.arviz_io import (LABEL_INVARIANT, load_datatree, save_datatree,
                                           to_datatree)
from topiczoo.diagnostics.convergence import (format_table, gelman_rubin_brooks,
                                              summary_table)
from topiczoo.diagnostics.plots import plot_gelman_rubin_brooks, plot_rank, plot_trace

__all__ = ["LABEL_INVARIANT", "format_table", "gelman_rubin_brooks", "load_datatree",
           "plot_gelman_rubin_brooks", "plot_rank", "plot_trace", "save_datatree",
           "summary_table", "to_datatree"]
