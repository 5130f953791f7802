"""Progress lines of long runs: what the chains' monitors say, the throughput, the time left."""

from __future__ import annotations

import sys

import numpy as np


def progress_log(result):
    name = result.model.describe()["model"]
    return lambda line: print(f"[{name}] {line}", file=sys.stderr, flush=True)


def progress_line(result, end, total, draws, seconds_per_iteration):
    parts = [f"iteration {end}/{total}"]
    scalars = [n for n in result.label_invariant if n in draws and draws[n].ndim == 2]
    for name in scalars[:5]:  # the chains' mean of the last draw
        parts.append(f"{name} {float(np.mean(draws[name][:, -1])):.4g}")
    power = float(draws["anneal_power"][:, -1].min()) if "anneal_power" in draws else 1.0
    if power < 1.0:
        parts.append(f"annealed burn-in at power {power:.2f} on p(W | Z)")
    parts.append(f"{result.token_iterations_per_second / 1e6:.2f} M token-it/s")
    if end < total and seconds_per_iteration is not None:
        parts.append(time_left(seconds_per_iteration * (total - end)))
    return " | ".join(parts)


def time_left(seconds: float) -> str:
    """``about 3 min left`` for a progress line (``under 1 s left`` near the end)."""
    return "under 1 s left" if seconds < 1 else f"about {duration(seconds)} left"


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
