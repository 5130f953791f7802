"""A fit's iteration schedule: burn-in, snapshots, thinning, chunks and the stages of a run
that goes on until its chains agree.

A run is cut into chunks of iterations (one ``MCMC.run`` each): progress, snapshots and
checkpoints happen at chunk ends. Training snapshots (the averaging paper's selected models
T_TR) are taken either at ``num_snapshots`` evenly spaced points after burn-in or, with
``snapshot_lag`` = L_TR, at every L_TR-th iteration after burn-in B_TR: iterations B_TR + L_TR,
B_TR + 2 L_TR, ..., plus the last iteration if it is not among them. :class:`Schedule` checks
the settings (a bad one is refused before any sampling) and plans the chunks of every stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from topiczoo.models.checks import whole_number


@dataclass(frozen=True)
class Schedule:
    """The checked settings of a run's iterations (:meth:`checked`).

    num_iterations: Gibbs cycles per chain, burn-in included; num_burnin: B_TR;
    num_snapshots, snapshot_lag: where the snapshots are (:func:`snapshot_iterations`);
    thinning: every how many iterations a draw is kept; chunk: iterations per ``MCMC.run``;
    until_rhat, max_iterations: run on until the chains agree, within a budget (None: not);
    snapshot_thinning: the multiple the default snapshot points are rounded up to.
    """

    num_iterations: int
    num_burnin: int
    num_snapshots: int
    snapshot_lag: int | None
    thinning: int
    chunk: int
    until_rhat: float | None
    max_iterations: int | None
    snapshot_thinning: int

    @classmethod
    def checked(cls, *, num_chains, num_iterations, num_burnin=None, num_snapshots=None,
                snapshot_lag=None, thinning=1, seed=0, chunk=None, until_rhat=None,
                max_iterations=None) -> "Schedule":
        """The schedule of :func:`topiczoo.fit.fit`'s arguments (see there), or a ValueError
        naming the setting that is wrong. Left at their defaults, the burn-in (half the run),
        the chunk (50) and the snapshot iterations are put on multiples of ``thinning``, where
        every chunk must end."""
        default_snapshots = num_snapshots is None and snapshot_lag is None
        num_snapshots = 5 if num_snapshots is None else num_snapshots
        for name, (value, low) in dict(
                seed=(seed, 0), num_chains=(num_chains, 1), num_iterations=(num_iterations, 1),
                num_snapshots=(num_snapshots, 0), thinning=(thinning, 1),
                chunk=(1 if chunk is None else chunk, 1),
                num_burnin=(0 if num_burnin is None else num_burnin, 0),
                snapshot_lag=(1 if snapshot_lag is None else snapshot_lag, 1)).items():
            whole_number(name, value, low)
        thinning = int(thinning)
        num_burnin = (int(num_iterations) // 2 // thinning * thinning if num_burnin is None
                      else int(num_burnin))
        chunk = max(thinning, 50 // thinning * thinning) if chunk is None else int(chunk)
        if num_burnin >= num_iterations and (num_snapshots > 0 or snapshot_lag is not None):
            raise ValueError(f"num_burnin ({num_burnin}) must be below num_iterations "
                             f"({num_iterations}) to take snapshots")
        if until_rhat is not None:
            if not (isinstance(until_rhat, (int, float)) and math.isfinite(until_rhat)
                    and until_rhat > 1):
                raise ValueError(f"until_rhat must be a number above 1 (e.g. 1.01), got "
                                 f"{until_rhat!r}")
            if num_chains < 2:
                raise ValueError("until_rhat compares chains: it needs num_chains >= 2")
            max_iterations = 8 * num_iterations if max_iterations is None else max_iterations
            whole_number("max_iterations", max_iterations, num_iterations)
            until_rhat, max_iterations = float(until_rhat), int(max_iterations)
        elif max_iterations is not None:
            raise ValueError("max_iterations is the budget of until_rhat; give until_rhat too")
        return cls(int(num_iterations), num_burnin, int(num_snapshots),
                   None if snapshot_lag is None else int(snapshot_lag), thinning, chunk,
                   until_rhat, max_iterations, thinning if default_snapshots else 1)

    def record(self) -> dict:
        """The schedule as a fit records it (its result and checkpoint): ``num_iterations``,
        ``num_burnin``, ``num_snapshots``, ``snapshot_lag``, ``thinning`` and, when the run
        goes on until its chains agree, ``until_rhat`` and ``max_iterations``."""
        out = dict(num_iterations=self.num_iterations, num_burnin=self.num_burnin,
                   num_snapshots=self.num_snapshots, snapshot_lag=self.snapshot_lag,
                   thinning=self.thinning)
        if self.until_rhat is not None:
            out.update(until_rhat=self.until_rhat, max_iterations=self.max_iterations)
        return out

    def stages(self) -> list:
        """(length, burn-in) of each stage (:func:`extended_stages`)."""
        return extended_stages(self.num_iterations, self.num_burnin, self.max_iterations,
                               self.thinning)

    def plans(self, start_at: int) -> list:
        """(snapshot iterations, chunks) of each stage of a run at iteration ``start_at``: all
        checked (a thinning that does not divide a chunk is a ValueError) before any sampling."""
        plans = []
        for stage, (length, burnin) in enumerate(self.stages()):
            snapshots = snapshot_iterations(length, burnin, self.num_snapshots,
                                            self.snapshot_lag, self.snapshot_thinning)
            plans.append((snapshots, chunks(start_at, length, burnin, snapshots, self.chunk,
                                            self.thinning,
                                            "max_iterations" if stage else "num_iterations")))
            start_at = max(start_at, length)
        return plans


def snapshot_iterations(num_iterations, num_burnin, num_snapshots=5, snapshot_lag=None,
                        thinning=1):
    """Iterations at which :func:`fit` takes its snapshots (sorted list).

    With ``snapshot_lag`` L: B + L, B + 2L, ... up to ``num_iterations``, plus
    ``num_iterations`` itself (the averaging paper's T_TR = {i in (B, T]: (i - B) mod L = 0},
    with the last iteration added). Otherwise ``num_snapshots`` points evenly spaced over
    (B, T], the last at T, each rounded up to a multiple of ``thinning`` (at most T; points
    that meet are merged, so fewer than ``num_snapshots`` when T - B < num_snapshots x
    thinning).
    """
    post = num_iterations - num_burnin
    if post <= 0:
        return []
    if snapshot_lag is not None:
        return sorted(set(range(num_burnin + snapshot_lag, num_iterations + 1, snapshot_lag))
                      | {num_iterations})
    return sorted({min(num_iterations, _round_up(num_burnin + math.ceil(
        post * (i + 1) / num_snapshots), thinning)) for i in range(num_snapshots)})


def _round_up(iteration: int, thinning: int) -> int:
    return -(-iteration // thinning) * thinning


#: Early chunk ends, so that progress (and a first time estimate) comes from the start.
_EARLY_ENDS = (1, 5, 20)


def chunk_ends(num_iterations, num_burnin, snapshot_points, chunk, thinning=1) -> list:
    """Chunk ends: the early ends, every ``chunk`` iterations, the burn-in end and the snapshot
    points."""
    early = {e for e in _EARLY_ENDS if e < chunk and e % thinning == 0}
    ends = (set(range(chunk, num_iterations, chunk)) | early | {num_burnin, num_iterations}
            | set(snapshot_points))
    return sorted(e for e in ends if 0 < e <= num_iterations)


def chunks(start, num_iterations, num_burnin, snapshot_points, chunk, thinning,
            length_name="num_iterations") -> list:
    """(start, end) of the chunks that run a chain from iteration ``start`` on to
    ``num_iterations`` (:func:`chunk_ends`); a ValueError naming the settings that are not
    multiples of ``thinning`` (``num_iterations`` as ``length_name``) if a chunk is not a
    whole number of ``thinning`` steps, since every chunk keeps every ``thinning``-th draw."""
    ends = [e for e in chunk_ends(num_iterations, num_burnin, snapshot_points, chunk, thinning)
            if e > start]
    chunks = list(zip([start] + ends[:-1], ends))
    for a, b in chunks:
        if (b - a) % thinning:
            named = [(length_name, num_iterations), ("num_burnin", num_burnin),
                     ("chunk", chunk), ("the start iteration", start)]
            off = [f"{name} ({value})" for name, value in named if value % thinning]
            points = [p for p in snapshot_points if p % thinning and p != num_iterations]
            off += [f"the snapshot iterations {points}"] if points else []
            raise ValueError(f"thinning {thinning} does not divide the chunk of iterations "
                             f"{a + 1}-{b}: every chunk must end on a multiple of thinning; "
                             f"not multiples of {thinning}: {', '.join(off)} (left at their "
                             "defaults, num_burnin, chunk and the snapshot iterations are)")
    return chunks


def extended_stages(num_iterations, num_burnin, max_iterations, thinning=1) -> list:
    """(length, burn-in) of each stage of a run: the requested ``(num_iterations,
    num_burnin)``, then, with a budget ``max_iterations``, the length doubled (capped at the
    budget) with its first half, rounded down to a multiple of ``thinning``, as burn-in,
    until the budget."""
    stages = [(int(num_iterations), int(num_burnin))]
    while max_iterations is not None and stages[-1][0] < max_iterations:
        length = min(2 * stages[-1][0], int(max_iterations))
        stages.append((length, length // 2 // thinning * thinning))
    return stages
