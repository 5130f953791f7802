"""Chains in separated modes: where the chains' log joint densities sit apart.

Single-token Gibbs moves do not cross between the modes of a topic model's posterior on long
documents: chains started apart can each settle in a mode of their own and stay there for
thousands of iterations, and R-hat then says "not converged" without saying why. The
``log_joint`` monitor (the log joint density of the chain's state, up to a constant the log
posterior of Z, eta and the response's parameters) tells modes apart: two chains whose log
joints differ by many times the spread of either are in different modes (or, still climbing,
far from each other), and the one with the higher log joint sits where the posterior has more
mass per state.

:func:`separated_modes` groups the chains: sorted by their mean log joint over the draws
given, a gap between neighbours wider than ``threshold`` times the larger of their
within-chain standard deviations (each chain's own spread, so the rule does not depend on the
run's length) starts a new group. :func:`modes_words` says it in plain words.

Replica exchange (``exact:replicas=R``, ``topiczoo.kernels.tempering``) is the exact remedy,
and it fails quietly: when the log ratio of an exchange of neighbouring replicas is far below
0 (their tempered log densities differ by much more than the gap of their powers can bridge),
no swap is accepted and the cold replica is the sampler alone, at R times its cost.
:func:`replica_swaps` reads a run's swap rates and swap log ratios, and :func:`replica_words`
says which pairs do not exchange and about how many replicas would.

Plain numpy, on the bottom layer of the package (it imports nothing of it), so that
``topiczoo.predict`` reads it without the plotting stack; the report, ``topiczoo diagnose``
and the trace plot (``topiczoo.diagnostics``) read it too.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["SEPARATION", "SWAP_LOG_RATIO_AIM", "SWAP_RATE_LOW", "Modes", "ReplicaSwaps",
           "modes_words", "replica_swaps", "replica_words", "separated_modes"]

#: Chains whose mean log joints differ by more than this many within-chain standard deviations
#: (the larger of the two chains') are in separated modes. Chains of one mode differ by about
#: sd / sqrt(ESS per chain), at most about 2 sd with autocorrelated draws.
SEPARATION = 5.0


class Modes(NamedTuple):
    """What :func:`separated_modes` found.

    groups: lists of chain indices, one per mode, best (highest mean log joint) first, each
      ordered by mean log joint; means, sds: float [C] each chain's mean and standard deviation
      of the log joint (nats); best: the chain with the highest mean; separated: more than one
      group; threshold: the separation used (in within-chain sds).
    """

    groups: list
    means: np.ndarray
    sds: np.ndarray
    best: int
    threshold: float

    @property
    def separated(self) -> bool:
        """Whether the chains sit in more than one mode."""
        return len(self.groups) > 1

    def gap(self, a: int = 0, b: int = 1) -> float:
        """The difference (nats) between the best chains of groups ``a`` and ``b``."""
        return float(self.means[self.groups[a][0]] - self.means[self.groups[b][0]])


def separated_modes(log_joint, threshold: float = SEPARATION) -> Modes:
    """Group chains by their log joint (module docstring).

    Args:
      log_joint: float [C, S], each chain's log joint over S draws (after burn-in).
      threshold: a gap larger than this many within-chain sds separates two groups.
    Returns :class:`Modes`. A chain whose draws are all equal has sd 0: any difference from it
    separates (scaled by a relative floor of 1e-9 of the values, so equal constant chains do
    not). ``ValueError`` for fewer than 2 draws or a NaN draw.
    """
    values = np.asarray(log_joint, np.float64)
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"log_joint must be [chains, draws] with at least 2 draws, got shape "
                         f"{values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("log_joint holds NaN or infinite draws")
    means = values.mean(axis=1)
    sds = values.std(axis=1, ddof=1)
    floor = 1e-9 * max(float(np.abs(values).max()), 1.0)
    order = [int(c) for c in np.argsort(-means, kind="stable")]
    groups = [[order[0]]]
    for previous, chain in zip(order, order[1:]):
        spread = max(sds[previous], sds[chain], floor)
        if means[previous] - means[chain] > threshold * spread:
            groups.append([])
        groups[-1].append(chain)
    return Modes(groups, means, sds, order[0], float(threshold))


def _chains(group) -> str:
    return ("chain " if len(group) == 1 else "chains ") + ", ".join(map(str, group))


def modes_words(modes: Modes) -> str:
    """The chains' modes in plain words: one line when they agree, else which chains sit
    where, how far apart, and the best chain."""
    if not modes.separated:
        return (f"log_joint: the {len(modes.means)} chains overlap (no two differ by more than "
                f"{modes.threshold:g} within-chain sds): no separated modes seen")
    parts = []
    for group in modes.groups:
        lead = group[0]
        parts.append(f"{_chains(group)} at {modes.means[lead]:.6g} (sd {modes.sds[lead]:.3g})")
    sd = max(modes.sds[modes.groups[0][0]], modes.sds[modes.groups[1][0]])
    gap = modes.gap()
    ratio = f"{gap / sd:.0f} within-chain sds" if sd > 0 else "the chains do not move"
    return (f"separated modes: the chains' log joints sit in {len(modes.groups)} groups, "
            + "; ".join(parts) + f". The best two groups are {gap:.4g} nats apart ({ratio}): "
            "the chains stay in different modes (or are still far from each other), and "
            "single-token moves rarely cross between them. Best chain: "
            f"{modes.best} (highest mean log joint); predict(..., chains={modes.groups[0]}) "
            "averages over the best group only")


#: A pair of neighbouring replicas that accepted less than this share of its proposed swaps
#: does not exchange (:func:`replica_words`).
SWAP_RATE_LOW = 0.05
#: The mean swap log ratio at which a pair exchanges often: with a normal log ratio L ~ N(-m,
#: 2 m) (log densities normal with equal variances) the acceptance rate is 2 Phi(-sqrt(m / 2)),
#: 0.32 at m = 2.
SWAP_LOG_RATIO_AIM = 2.0


class ReplicaSwaps(NamedTuple):
    """What :func:`replica_swaps` found, per neighbouring pair (r, r + 1) of replicas.

    rates: float [R - 1], the share of proposed swaps accepted over the run (chains pooled);
    mean_log_ratios: float [R - 1], the swaps' log ratio (tau_r - tau_{r+1}) (l_{r+1} - l_r)
    averaged over chains and draws (nats; <= 0 on average); splits: int [R - 1], the gaps
    each pair's power gap would be cut into for its log ratio to average about
    -:data:`SWAP_LOG_RATIO_AIM` (1 where it already does; the log ratio grows as the gap
    squared).
    """

    rates: np.ndarray
    mean_log_ratios: np.ndarray
    splits: np.ndarray

    @property
    def stuck(self) -> list:
        """The pairs r (of (r, r + 1)) that do not exchange (rate below SWAP_RATE_LOW)."""
        return [int(r) for r in np.flatnonzero(self.rates < SWAP_RATE_LOW)]

    @property
    def replicas_needed(self) -> int:
        """About how many replicas over the same powers would exchange: every gap cut into
        its :attr:`splits`."""
        return 1 + int(self.splits.sum())


def replica_swaps(swap_rate, swap_log_ratio) -> ReplicaSwaps:
    """The swaps of a replica-exchange run (module docstring).

    Args:
      swap_rate: float [C, S, R - 1], each chain's share of accepted swaps since its start
        (the ``swap_rate`` monitor; its last draw is the run's rate);
      swap_log_ratio: float [C, S, R - 1], the ``swap_log_ratio`` monitor (the draws to
        average: after burn-in).
    Returns :class:`ReplicaSwaps`. ``ValueError`` for arrays of other shapes or no draws.
    """
    rates = np.asarray(swap_rate, np.float64)
    ratios = np.asarray(swap_log_ratio, np.float64)
    if rates.ndim != 3 or ratios.ndim != 3 or rates.shape[2] != ratios.shape[2] \
            or 0 in rates.shape or 0 in ratios.shape:
        raise ValueError(f"swap_rate and swap_log_ratio must be [chains, draws, replicas - 1] "
                         f"with draws, got shapes {rates.shape} and {ratios.shape}")
    mean = ratios.mean(axis=(0, 1))
    splits = np.maximum(1, np.ceil(np.sqrt(np.maximum(-mean, 0.0) / SWAP_LOG_RATIO_AIM)))
    return ReplicaSwaps(rates[:, -1].mean(axis=0), mean, splits.astype(np.int64))


def replica_words(swaps: ReplicaSwaps) -> str:
    """The replicas' exchanges in plain words: one line when every neighbouring pair swaps,
    else which pairs do not, how far their swaps' log ratios are from what exchanges, and
    about how many replicas would."""
    rates = ", ".join(f"{r:.2f}" for r in swaps.rates)
    if not swaps.stuck:
        return (f"replica exchange: every neighbouring pair of replicas swaps (accepted shares "
                f"{rates})")
    pairs = ", ".join(f"({r}, {r + 1})" for r in swaps.stuck)
    worst = min(swaps.stuck, key=lambda r: swaps.mean_log_ratios[r])
    first = swaps.stuck[0]
    reach = ("the cold replica's draws are its own chain's, as without tempering" if first == 0
             else f"the states of replicas {first + 1} and above do not reach the cold one")
    return (f"replica exchange: replicas {pairs} do not exchange (accepted shares {rates}): "
            f"their swaps' log ratios average down to {swaps.mean_log_ratios[worst]:.4g} nats, "
            f"and a pair swaps often only near -{SWAP_LOG_RATIO_AIM:g}, so {reach}. About "
            f"{swaps.replicas_needed} replicas over the same powers would exchange (the "
            "log ratio grows as the square of the powers' gap); where that is too many, "
            "dispersed starts and several chains are the way to see modes, and an annealed "
            "burn-in (sampler exact:anneal=A) the way to leave a poor one")
