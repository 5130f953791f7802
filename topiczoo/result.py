"""What a fit produces: the draws, the snapshots of the globals, the chains' last states."""

from __future__ import annotations

from dataclasses import dataclass, field

import jax
import numpy as np

from topiczoo.kernels.gibbs import ChainState


@dataclass
class Snapshot:
    """The globals of every chain at one training iteration.

    iteration: Gibbs cycles completed; arrays: ``{name: [C, ...]}`` from the sampler's
    ``snapshot`` (parametric family: ``n_wk`` int32 [C, V, K], ``n_k`` int32 [C, K],
    ``eta`` float32 [C, T, K]).
    """

    iteration: int
    arrays: dict

    def chain(self, c: int) -> dict:
        """The arrays of chain ``c`` (no chain axis)."""
        return {name: a[c] for name, a in self.arrays.items()}


@dataclass
class FitResult:
    """Everything a fit produced.

    draws: per-draw quantities ``{name: [C, S, ...]}`` (the sampler's monitors: eta and the
      label-invariant monitors), burn-in included; ``draw_iterations`` [S] says at which
      iteration each was taken. ``snapshots``: post-burn-in :class:`Snapshot` list.
    sample_stats: per-draw sampler statistics ``{name: [C, S]}``, aligned with ``draws``:
      ``time_per_iteration`` (float64 seconds per Gibbs cycle): the wall time of the chunk
      (one ``MCMC.run``) that produced the draw divided by the chunk's number of iterations,
      the same value for every draw and chain of a chunk (vectorized chains share one wall
      clock). The first chunk includes compilation (as does the first chunk after a resume in
      a new process), so its value is an upper bound; judge speed by the later chunks. Kept
      apart from ``draws`` because it is not a function of the chain's state.
    state: the last :class:`~topiczoo.kernels.gibbs.ChainState` of every chain (numpy, with a
      leading chain axis), to continue the run.
    task: the :class:`~topiczoo.models.tasks.Task` of the training labels (None if
      unsupervised). sampler: the sampler's name. schedule: the run's iteration schedule
      (``num_iterations``, ``num_burnin``, ``num_snapshots``, ``snapshot_lag``, ``thinning``).
    train_seconds: wall time of the sampling, compile time included.
    convergence: with ``fit(..., until_rhat=...)``, the last convergence check: ``rhat``
      (rank R-hat of every label-invariant monitor element, by
      :func:`topiczoo.diagnostics.convergence.rhat` as in the summary table: 1 for a monitor
      constant and equal in all chains, inf for chains stuck at different constant values,
      NaN if undefined), ``worst`` (the name of the largest, NaN first), ``converged``,
      ``iteration`` and ``until_rhat``; empty otherwise.
    init: how the chains started (``fit(init=...)``: ``"dispersed"`` or ``"uniform"``).
    """

    model: object
    vocabulary: tuple
    num_chains: int
    num_burnin: int
    thinning: int
    seed: int
    sampler: str = "exact"
    task: object = None
    schedule: dict = field(default_factory=dict)
    draws: dict = field(default_factory=dict)
    draw_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    snapshots: list = field(default_factory=list)
    state: ChainState | None = None
    label_invariant: tuple = ()
    train_seconds: float = 0.0
    num_tokens: int = 0
    sample_stats: dict = field(default_factory=dict)
    fingerprint: str = ""
    convergence: dict = field(default_factory=dict)
    init: str = "dispersed"

    @property
    def iterations_done(self) -> int:
        """Gibbs cycles each chain has run (burn-in included); 0 before any."""
        return int(np.asarray(self.state.iteration).reshape(-1)[0]) if self.state else 0

    @property
    def token_iterations_per_second(self) -> float:
        """Training tokens x iterations x chains / training seconds."""
        if self.train_seconds <= 0:
            return float("nan")
        return self.num_tokens * self.iterations_done * self.num_chains / self.train_seconds

    def posterior_draws(self, include_stats: bool = False) -> dict:
        """The draws after burn-in: ``{name: [C, S_post, ...]}``; with ``include_stats`` the
        :attr:`sample_stats` (``time_per_iteration``) too."""
        keep = self.draw_iterations > self.num_burnin
        items = dict(self.draws)
        if include_stats:
            items.update(self.sample_stats)
        return {k: v[:, keep] for k, v in items.items()}

    def chain_state(self, c: int) -> object:
        """The family's state of chain ``c`` (no chain axis)."""
        return jax.tree.map(lambda a: a[c], self.state.state)
