"""Fitting: several chains of a model's sampler through numpyro's ``MCMC``, in chunks.

A run is cut into chunks of iterations. Each chunk is one ``MCMC.run`` continued from the last
state (``post_warmup_state``), which gives, at no cost to the sampler:

* progress lines from the first iterations on (iteration, monitors, throughput, time left);
* snapshots of the model's globals (for a topic model: the topic-word counts and eta) at
  chunk ends only: the K x V counts are never collected per draw;
* a checkpoint after every chunk, so an interrupted run resumes where it stopped, and the
  resumed run is identical to an uninterrupted one (the chain's key lives in the state);
* a per-draw timing, ``time_per_iteration``: the wall time of each chunk divided by its
  length, given to every draw kept in that chunk (see :class:`FitResult`).

Training snapshots (the averaging paper's selected models T_TR) are taken either at
``num_snapshots`` evenly spaced points after burn-in or, with ``snapshot_lag`` = L_TR, at
every L_TR-th iteration after burn-in B_TR: iterations B_TR + L_TR, B_TR + 2 L_TR, ..., plus
the last iteration if it is not among them.

Compiled once. numpyro 0.22's ``fori_collect`` wraps its loop body in a new ``jax.jit`` on every
``MCMC.run`` (numpyro/util.py, ``maybe_jit(_body_fn, ...)`` and the ``_fori_collect_loop`` jit
that takes it as a static argument; fixed upstream by pyro-ppl/numpyro#2171, not yet
released), so each chunk re-traced and re-compiled the collection loop and kept the new
executable: about 22 MB and 270 memory mappings per chunk. The chunks therefore run under
numpyro's public ``numpyro.util.control_flow_prims_disabled()``: the collection loop is a plain
Python loop, and the kernel's step is compiled once by the kernel itself
(``kernels.gibbs``). This is the one place that works around numpyro. JAX's persistent
compilation cache (``$TOPICZOO_CACHE`` or ``~/.cache/topiczoo/jax``) also keeps that one
compilation across processes.

Checkpoints (:func:`save_checkpoint`) are one ``.npz`` file of arrays with a JSON description
of the run; reading one runs no code, and a checkpoint of another model, sampler, seed, corpus
or schedule is refused with a message that says what differs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import sys
import time
import warnings
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field

import jax
import numpy as np
from numpyro.infer import MCMC
from numpyro.util import control_flow_prims_disabled

from topiczoo.corpus import Corpus
from topiczoo.defaults import NUM_CHAINS, NUM_ITERATIONS
from topiczoo.errors import ConvergenceWarning, interrupts_as_keyboard_interrupt
from topiczoo.kernels.gibbs import ChainState, CorpusData, GibbsKernel
from topiczoo.models.checks import whole_number
from topiczoo.models.supervised import corpus_data, task_of

CHECKPOINT_FORMAT = 1


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


def enable_compilation_cache(path=None) -> str | None:
    """Turn on JAX's persistent compilation cache unless a directory is configured already.

    Returns the cache directory in use.
    """
    current = jax.config.jax_compilation_cache_dir
    if current:
        return current
    path = path or os.environ.get("TOPICZOO_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "topiczoo", "jax")
    os.makedirs(path, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    return str(path)


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


def _chunk_ends(num_iterations, num_burnin, snapshot_points, chunk, thinning=1) -> list:
    """Chunk ends: the early ends, every ``chunk`` iterations, the burn-in end and the snapshot
    points."""
    early = {e for e in _EARLY_ENDS if e < chunk and e % thinning == 0}
    ends = (set(range(chunk, num_iterations, chunk)) | early | {num_burnin, num_iterations}
            | set(snapshot_points))
    return sorted(e for e in ends if 0 < e <= num_iterations)


def _chunks(start, num_iterations, num_burnin, snapshot_points, chunk, thinning,
            length_name="num_iterations") -> list:
    """(start, end) of the chunks that run a chain from iteration ``start`` on to
    ``num_iterations`` (:func:`_chunk_ends`); a ValueError naming the settings that are not
    multiples of ``thinning`` (``num_iterations`` as ``length_name``) if a chunk is not a
    whole number of ``thinning`` steps, since every chunk keeps every ``thinning``-th draw."""
    ends = [e for e in _chunk_ends(num_iterations, num_burnin, snapshot_points, chunk, thinning)
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


def _check_settings(**settings):
    for name, (value, low) in settings.items():
        whole_number(name, value, low)


def corpus_fingerprint(data) -> str:
    """A short hash of the arrays a sampler reads (tokens, documents, coded responses): the
    arrays of ``data`` in order; of a :class:`CorpusData` its first four (its word index is a
    function of the words, and absent in some)."""
    if isinstance(data, CorpusData):
        data = data[:4]
    h = hashlib.sha256()
    for a in data:
        a = np.ascontiguousarray(np.asarray(a))
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


# numpyro keeps recent MCMC objects alive in module-level caches (8 entries); reuse ours too
_MCMC_CACHE: OrderedDict = OrderedDict()


def _mcmc(kernel, length, num_chains, thinning, chain_method) -> MCMC:
    key = (kernel.sampler, kernel.vocab_size, length, num_chains, thinning, chain_method)
    mcmc = _MCMC_CACHE.pop(key, None)
    if mcmc is None:
        mcmc = MCMC(kernel, num_warmup=0, num_samples=length, num_chains=num_chains,
                    thinning=thinning, chain_method=chain_method, progress_bar=False,
                    jit_model_args=True)
    _MCMC_CACHE[key] = mcmc
    while len(_MCMC_CACHE) > 8:
        _MCMC_CACHE.popitem(last=False)
    return mcmc


@functools.lru_cache(maxsize=8)
def _compiled_snapshot(snapshot):
    """A sampler's ``snapshot`` over the chain axis, compiled (samplers are cached, so once per
    sampler): run eagerly, a snapshot's V x K scatter allocated its zeros and its result apart,
    which ``np.array`` then copied: 3 x 86 MB at K = 400 on 20news, against the one output
    here, which ``np.asarray`` reads in place."""
    return jax.jit(jax.vmap(snapshot))


def fit(model, corpus, *, sampler: str = "exact", num_chains: int = NUM_CHAINS,
        num_iterations: int = NUM_ITERATIONS, num_burnin: int | None = None,
        num_snapshots: int | None = None,
        snapshot_lag: int | None = None, thinning: int = 1, seed: int = 0,
        chain_method: str = "vectorized", chunk: int | None = None, progress: bool = True,
        checkpoint: str | os.PathLike | None = None, callback=None,
        compilation_cache: bool = True, until_rhat: float | None = None,
        max_iterations: int | None = None, start: FitResult | None = None) -> FitResult:
    """Run ``num_chains`` chains of ``model``'s sampler on ``corpus``.

    Args:
      model: a model of ``topiczoo.models`` (e.g. ``gslda(20, c=25)``).
      corpus: training :class:`topiczoo.corpus.Corpus` (labels required if supervised).
      sampler: one of ``model.samplers`` (default ``"exact"``, the papers' collapsed Gibbs),
        with options after a colon where the family has them (e.g. ``"light:mh_steps=2"``;
        ``models.parametric.sampler_options``). The result and the checkpoint record its
        canonical name.
      num_iterations: Gibbs cycles per chain, burn-in included.
      num_burnin: B_TR, cycles before the first snapshot (default: half of
        ``num_iterations``, rounded down to a multiple of ``thinning``). Draws before it are
        kept too (``draw_iterations`` <= B_TR).
      num_snapshots: snapshots kept after burn-in, evenly spaced, the last at the end
        (default 5; ignored when ``snapshot_lag`` is given).
      snapshot_lag: L_TR: if given, a snapshot every ``snapshot_lag`` iterations after burn-in
        (iterations B_TR + L_TR, B_TR + 2 L_TR, ...) and one at the last iteration, overriding
        ``num_snapshots``; see :func:`snapshot_iterations`.
      thinning: keep every ``thinning``-th draw of the per-draw quantities (iterations
        ``thinning``, 2 ``thinning``, ...). Each chunk keeps its own every ``thinning``-th
        draw, so every chunk end must be a multiple of ``thinning``: ``num_iterations``,
        ``num_burnin``, ``chunk``, the snapshot iterations (``snapshot_lag`` too) and, with
        ``until_rhat``, ``max_iterations``. Left at their defaults, ``num_burnin``, ``chunk``
        and the snapshot iterations (``num_snapshots`` and ``snapshot_lag`` both not given:
        five evenly spaced points rounded up to multiples of ``thinning``) are; a value
        given that is not is refused before any sampling (ValueError naming it).
      seed: determines the run, chain by chain (host randomness included), with
        ``chain_method``.
      chain_method: ``"vectorized"`` or ``"sequential"`` (numpyro's). The two draw the same
        random numbers but are not bit-identical: XLA rounds a batched eta . zbar differently
        from a single one, and the chains drift apart from there.
      chunk: iterations per ``MCMC.run`` (progress and checkpoint granularity; the first
        chunks end at iterations 1, 5 and 20 so that progress starts at once, those of them
        that are multiples of ``thinning``). Default 50, with ``thinning`` the largest
        multiple of it up to 50 (``thinning`` itself above 50).
      progress: print a line per chunk to stderr: monitors, throughput and the time left.
      checkpoint: file written after every chunk; if it exists, the run resumes from it (it
        must be of the same run: model, sampler, seed, chains, corpus and schedule).
      callback: ``callback(result)`` after every chunk (after the checkpoint is written);
        raising from it (e.g. ``KeyboardInterrupt``) stops the run, and nothing is lost.
      compilation_cache: use JAX's persistent compilation cache (see the module docstring).
      until_rhat: run until converged: after ``num_iterations``, while the largest rank
        R-hat of the label-invariant monitors (post-burn-in draws, every element) is at or
        above this threshold (e.g. 1.01), double the run's length, up to ``max_iterations``;
        each extended run treats its first half (rounded down to a multiple of
        ``thinning``) as burn-in (see :func:`_extended_stages`).
        Needs ``num_chains >= 2``. The last check is in :attr:`FitResult.convergence`; a
        warning names the monitor that held the run back if the budget ends first.
      max_iterations: the budget of ``until_rhat`` (default 8 x ``num_iterations``).
      start: a :class:`FitResult` of the same model, corpus and number of chains whose last
        states the chains continue from, with this call's ``sampler``: any sampler of the
        family whose state has the same parts (every sampler of the parametric family: a run
        of ``"exact"`` can go on with ``"light"``, say). Iterations are counted on from
        ``start``'s, so ``num_iterations`` (the total) must exceed them; the chains' random
        keys come from ``start``'s states (``seed`` is only recorded); the result holds the
        draws and snapshots of this call's iterations only. A ``checkpoint`` that exists
        takes precedence (it is this run's, resumed).
    Returns a :class:`FitResult`.
    """
    if not isinstance(corpus, Corpus):
        raise TypeError(f"corpus must be a topiczoo Corpus (Corpus.from_texts, "
                        f"Corpus.from_document_term, load_dataset), got {type(corpus).__name__}")
    default_snapshots = num_snapshots is None and snapshot_lag is None
    num_snapshots = 5 if num_snapshots is None else num_snapshots
    _check_settings(seed=(seed, 0), num_chains=(num_chains, 1), num_iterations=(num_iterations, 1),
                    num_snapshots=(num_snapshots, 0), thinning=(thinning, 1),
                    chunk=(1 if chunk is None else chunk, 1),
                    num_burnin=(0 if num_burnin is None else num_burnin, 0),
                    snapshot_lag=(1 if snapshot_lag is None else snapshot_lag, 1))
    # left at their defaults, the burn-in, the chunk and the snapshot iterations are put on
    # multiples of thinning, where every chunk must end (with thinning 1: as they always were)
    thinning = int(thinning)
    num_burnin = (int(num_iterations) // 2 // thinning * thinning if num_burnin is None
                  else int(num_burnin))
    chunk = max(thinning, 50 // thinning * thinning) if chunk is None else chunk
    snapshot_thinning = thinning if default_snapshots else 1
    if num_burnin >= num_iterations and (num_snapshots > 0 or snapshot_lag is not None):
        raise ValueError(f"num_burnin ({num_burnin}) must be below num_iterations "
                         f"({num_iterations}) to take snapshots")
    if chain_method not in ("vectorized", "sequential"):
        raise ValueError(f"chain_method must be 'vectorized' or 'sequential', got {chain_method!r}")
    if until_rhat is not None:
        if not (isinstance(until_rhat, (int, float)) and math.isfinite(until_rhat)
                and until_rhat > 1):
            raise ValueError(f"until_rhat must be a number above 1 (e.g. 1.01), got "
                             f"{until_rhat!r}")
        if num_chains < 2:
            raise ValueError("until_rhat compares chains: it needs num_chains >= 2")
        max_iterations = 8 * num_iterations if max_iterations is None else max_iterations
        _check_settings(max_iterations=(max_iterations, num_iterations))
    elif max_iterations is not None:
        raise ValueError("max_iterations is the budget of until_rhat; give until_rhat too")
    if checkpoint is not None:  # before any sampling, not after the first chunk
        folder = os.path.dirname(os.path.abspath(checkpoint))
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"the checkpoint's folder {folder} does not exist; create "
                                    f"it or give another checkpoint path")
        if os.path.isdir(checkpoint):
            raise IsADirectoryError(f"checkpoint {checkpoint} is a folder; give a file path "
                                    f"such as {os.path.join(checkpoint, 'checkpoint.npz')}")
    task = task_of(model, corpus)
    data = corpus_data(model, corpus, task)
    kernel = GibbsKernel(model, corpus.vocab_size, sampler=sampler, task=task)
    if compilation_cache:
        enable_compilation_cache()
    schedule = dict(num_iterations=int(num_iterations), num_burnin=num_burnin,
                    num_snapshots=int(num_snapshots), snapshot_lag=snapshot_lag,
                    thinning=int(thinning))
    if until_rhat is not None:
        schedule.update(until_rhat=float(until_rhat), max_iterations=int(max_iterations))
    fresh = FitResult(model, tuple(corpus.vocabulary), int(num_chains), num_burnin,
                      int(thinning), int(seed), kernel.sampler.name, task, schedule,
                      label_invariant=tuple(kernel.sampler.label_invariant),
                      num_tokens=corpus.num_tokens, fingerprint=corpus_fingerprint(data))
    result = fresh
    origin = None
    if checkpoint is not None and os.path.exists(checkpoint):
        result = load_checkpoint(checkpoint, kernel, data, expected=fresh)
        origin = f"resuming from {checkpoint}"
    elif start is not None:
        result.state = _start_state(start, fresh, kernel, data)
        origin = f"continuing a {start.sampler} run"
    log = _progress_log(result) if progress else None
    if log and result.iterations_done:
        log(f"{origin}: iteration {result.iterations_done} of {num_iterations}")
    run = _Run(kernel, data, num_chains, thinning, chain_method, seed, chunk, checkpoint,
               callback, log)
    stages = _extended_stages(num_iterations, num_burnin, max_iterations, thinning)
    plans, start_at = [], result.iterations_done
    for stage, (length, burnin) in enumerate(stages):  # all checked before any sampling
        snapshots = snapshot_iterations(length, burnin, num_snapshots, snapshot_lag,
                                        snapshot_thinning)
        plans.append((snapshots, _chunks(start_at, length, burnin, snapshots, chunk, thinning,
                                         "max_iterations" if stage else "num_iterations")))
        start_at = max(start_at, length)
    for stage, (length, burnin) in enumerate(stages):
        if stage:
            result.num_burnin = burnin  # the extended run's first half is burn-in
            result.snapshots = [s for s in result.snapshots if s.iteration > burnin]
        snapshots, chunks = plans[stage]
        with interrupts_as_keyboard_interrupt():
            run.stage(result, chunks, snapshots)
        if until_rhat is None:
            break
        result.convergence = _convergence(result, until_rhat, burnin, length)
        worst = result.convergence["worst"]
        if result.convergence["converged"]:
            if log:
                log(f"converged at iteration {length}: largest rank R-hat "
                    f"{result.convergence['rhat'][worst]:.4f} ({worst}) < {until_rhat}")
            break
        if stage + 1 < len(stages):
            if log:
                log(f"{_rhat_words(result.convergence)}: running on to iteration "
                    f"{stages[stage + 1][0]}")
        else:
            warnings.warn(f"not converged within max_iterations={max_iterations}: "
                          f"{_rhat_words(result.convergence)}", ConvergenceWarning,
                          stacklevel=2)
    return result


def _extended_stages(num_iterations, num_burnin, max_iterations, thinning=1) -> list:
    """(length, burn-in) of each stage of a run: the requested ``(num_iterations,
    num_burnin)``, then, with a budget ``max_iterations``, the length doubled (capped at the
    budget) with its first half, rounded down to a multiple of ``thinning``, as burn-in,
    until the budget."""
    stages = [(int(num_iterations), int(num_burnin))]
    while max_iterations is not None and stages[-1][0] < max_iterations:
        length = min(2 * stages[-1][0], int(max_iterations))
        stages.append((length, length // 2 // thinning * thinning))
    return stages


def _convergence(result, threshold: float, num_burnin: int, num_iterations: int) -> dict:
    """The rank-normalised split R-hat (Vehtari et al. 2021) of every element of the
    label-invariant monitors over the draws of iterations (num_burnin, num_iterations], by
    :func:`topiczoo.diagnostics.convergence.rhat`, the function of the summary table, with its
    rule: NaN (undefined: fewer than 4 draws, a NaN draw) counts as not converged; 1 (a
    monitor constant and equal in every chain) as converged; inf (chains stuck at different
    constant values) as not converged. ``worst``: the largest, NaN first; ``converged`` when
    it is below ``threshold``."""
    from topiczoo.diagnostics.convergence import rhat  # matplotlib & co. only when asked for

    keep = (result.draw_iterations > num_burnin) & (result.draw_iterations <= num_iterations)
    values = {}
    for name in result.label_invariant:
        if name not in result.draws:
            continue
        r_hat = rhat(result.draws[name][:, keep])
        for index in np.ndindex(r_hat.shape):  # labelled as in the summary table
            label = f"{name}[{','.join(map(str, index))}]" if index else name
            values[label] = float(r_hat[index])
    worst = max(values, key=lambda k: (math.isnan(values[k]), -1.0 if math.isnan(values[k])
                                        else values[k]))
    return {"until_rhat": threshold, "iteration": result.iterations_done, "rhat": values,
            "worst": worst, "converged": bool(values[worst] < threshold)}


def _rhat_words(check: dict) -> str:
    """``the rank R-hat of <worst> is <value> >= <threshold>`` of a :func:`_convergence`
    check, with what an infinite or undefined (NaN) value means."""
    from topiczoo.diagnostics.convergence import rhat_meaning

    value = check["rhat"][check["worst"]]
    words = f"the rank R-hat of {check['worst']} is {value:.4f}"
    if not math.isnan(value):
        words += f" >= {check['until_rhat']}"
    meaning = rhat_meaning(value)
    return f"{words}; {meaning}" if meaning else words


class _Run:
    """The chunk loop of :func:`fit`: one ``MCMC.run`` per chunk, snapshots, progress,
    checkpoint and callback after each."""

    def __init__(self, kernel, data, num_chains, thinning, chain_method, seed, chunk,
                 checkpoint, callback, log):
        self.kernel, self.data, self.num_chains, self.thinning = kernel, data, num_chains, thinning
        self.chain_method, self.seed, self.chunk = chain_method, seed, chunk
        self.checkpoint, self.callback, self.log = checkpoint, callback, log
        self.mcmc_calls = 0
        self.snapshot = _compiled_snapshot(kernel.sampler.snapshot)

    def stage(self, result, chunks, snapshot_points):
        """Run ``result`` through ``chunks`` ((start, end) pairs from :func:`_chunks`, the
        first starting at ``result``'s iterations done), snapshots at ``snapshot_points``."""
        kernel, data, num_chains, thinning = self.kernel, self.data, self.num_chains, self.thinning
        num_iterations = chunks[-1][1] if chunks else None
        for start, end in chunks:
            length = end - start
            mcmc = _mcmc(kernel, length, num_chains, thinning, self.chain_method)
            tic = time.perf_counter()
            start_state = result.state
            if start_state is None and kernel.sampler.grow is not None:
                start_state = _initial_state(kernel, data, self.seed, num_chains)
            while True:
                draws, state = _run_chunk(mcmc, start_state, self.seed, num_chains, data)
                overflowed = kernel.sampler.overflowed
                if overflowed is None or not np.any(np.asarray(jax.vmap(overflowed)(state.state))):
                    break
                # out of capacity: redo the chunk from its start with more (same draws as a
                # run started with the larger capacity)
                start_state = start_state._replace(state=kernel.sampler.grow(start_state.state))
                if self.log:
                    self.log(f"chunk {start}-{end} redone with more capacity")
            seconds = time.perf_counter() - tic
            _append_chunk(result, state, draws, start, end, thinning, seconds)
            if end in snapshot_points:
                arrays = self.snapshot(state.state)
                result.snapshots.append(Snapshot(end, {k: np.asarray(v) for k, v in arrays.items()}))
            if self.log:  # the first chunk of a call includes compilation: no estimate from it
                self.log(_progress_line(result, end, num_iterations, draws,
                                        seconds / length if self.mcmc_calls else None))
            self.mcmc_calls += 1
            if self.checkpoint is not None:
                save_checkpoint(result, self.checkpoint)
            if self.callback is not None:
                self.callback(result)


def _initial_state(kernel, data, seed, num_chains) -> ChainState:
    """The state numpyro's ``MCMC.run(PRNGKey(seed), data)`` starts from, with a chain axis."""
    key = jax.random.PRNGKey(seed)
    keys = jax.random.split(key, num_chains) if num_chains > 1 else key
    state = kernel.init(keys, 0, None, (data,), {})
    state = jax.tree.map(np.asarray, state)
    return jax.tree.map(lambda a: a[None], state) if num_chains == 1 else state


def _run_chunk(mcmc, start_state, seed, num_chains, data):
    """One ``MCMC.run`` from ``start_state`` (a chain-axis state, or None: numpyro's own start);
    returns the draws and the last state (numpy, with a chain axis)."""
    with control_flow_prims_disabled():  # see the module docstring
        if start_state is None:
            mcmc.post_warmup_state = None
            mcmc.run(jax.random.PRNGKey(seed), data)
        else:
            # states always have a chain axis here; numpyro runs a single chain unbatched
            unbatch = (lambda a: a[0]) if num_chains == 1 else (lambda a: a)
            mcmc.post_warmup_state = jax.tree.map(lambda a: jax.numpy.asarray(unbatch(a)),
                                                  start_state)
            mcmc.run(mcmc.post_warmup_state.rng_key, data)
    draws = jax.tree.map(np.asarray, mcmc.get_samples(group_by_chain=True))
    state = jax.tree.map(np.asarray, mcmc.last_state)
    mcmc.post_warmup_state = None
    if num_chains == 1:
        state = jax.tree.map(lambda a: a[None], state)
    return draws, state


def _append_chunk(result, state, draws, start, end, thinning, seconds):
    result.train_seconds += seconds
    result.state = state
    new_iterations = np.arange(start + thinning, end + 1, thinning)
    result.draw_iterations = np.concatenate([result.draw_iterations, new_iterations])
    result.draws = draws if not result.draws else {
        k: np.concatenate([result.draws[k], draws[k]], axis=1) for k in draws}
    timing = np.full((result.num_chains, len(new_iterations)), seconds / (end - start))
    previous = result.sample_stats.get("time_per_iteration")
    result.sample_stats["time_per_iteration"] = (
        timing if previous is None else np.concatenate([previous, timing], axis=1))


def _progress_log(result):
    name = result.model.describe()["model"]
    return lambda line: print(f"[{name}] {line}", file=sys.stderr, flush=True)


def _progress_line(result, end, total, draws, seconds_per_iteration):
    parts = [f"iteration {end}/{total}"]
    scalars = [n for n in result.label_invariant if n in draws and draws[n].ndim == 2]
    for name in scalars[:5]:  # the chains' mean of the last draw
        parts.append(f"{name} {float(np.mean(draws[name][:, -1])):.4g}")
    parts.append(f"{result.token_iterations_per_second / 1e6:.2f} M token-it/s")
    if end < total and seconds_per_iteration is not None:
        parts.append(_time_left(seconds_per_iteration * (total - end)))
    return " | ".join(parts)


def _time_left(seconds: float) -> str:
    """``about 3 min left`` for a progress line (``under 1 s left`` near the end)."""
    return "under 1 s left" if seconds < 1 else f"about {_duration(seconds)} left"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# ---------------------------------------------------------------------------------------------
# Checkpoints: arrays plus a JSON description; reading one runs no code.


def _describe_run(result) -> dict:
    return {"format": CHECKPOINT_FORMAT, "model": result.model.describe(),
            "sampler": result.sampler, "seed": result.seed, "num_chains": result.num_chains,
            "schedule": result.schedule, "corpus": result.fingerprint,
            "vocabulary": hashlib.sha256("\n".join(result.vocabulary).encode()).hexdigest()[:16]}


def save_checkpoint(result: FitResult, path) -> None:
    """Write ``result`` to ``path`` atomically: one ``.npz`` of its arrays (state, draws,
    snapshots) and a JSON description of the run (model, sampler, seed, schedule, corpus
    fingerprint, iteration of each snapshot, timings)."""
    arrays = {f"state/{jax.tree_util.keystr(p)}": np.asarray(a)
              for p, a in jax.tree_util.tree_flatten_with_path(result.state)[0]}
    arrays.update({f"draws/{k}": v for k, v in result.draws.items()})
    arrays.update({f"sample_stats/{k}": v for k, v in result.sample_stats.items()})
    arrays["draw_iterations"] = np.asarray(result.draw_iterations, np.int64)
    for i, snap in enumerate(result.snapshots):
        arrays.update({f"snapshots/{i}/{k}": v for k, v in snap.arrays.items()})
    meta = {**_describe_run(result), "snapshot_iterations": [s.iteration for s in result.snapshots],
            "train_seconds": result.train_seconds}
    arrays["meta"] = np.asarray(json.dumps(meta))
    tmp = f"{path}.tmp.npz"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def _start_state(start, fresh: FitResult, kernel: GibbsKernel, data) -> ChainState:
    """The last states of ``start`` (a :class:`FitResult`) for the run ``fresh`` describes, or
    ``ValueError`` saying why they cannot start it."""
    if not isinstance(start, FitResult) or start.state is None:
        raise ValueError(f"start must be the FitResult of a fit, got {type(start).__name__}")
    mine, theirs = _describe_run(fresh), _describe_run(start)
    differ = [key for key in ("model", "corpus", "vocabulary", "num_chains")
              if mine[key] != theirs[key]]
    if differ:
        raise ValueError("start is a run of another " + " and ".join(differ)
                         + "; it can only start a run of the same model on the same corpus "
                         "with as many chains")
    if start.iterations_done >= fresh.schedule["num_iterations"]:
        raise ValueError(f"start has done {start.iterations_done} iterations: num_iterations "
                         f"(the total, {fresh.schedule['num_iterations']}) must exceed them")
    template = kernel.state_shapes(data, fresh.num_chains)
    named = {jax.tree_util.keystr(p): np.asarray(a)
             for p, a in jax.tree_util.tree_flatten_with_path(start.state)[0]}
    leaves = _state_leaves(template, named, kernel, f"start's state ({start.sampler})")
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(template), leaves)


def _state_leaves(template, named: dict, kernel: GibbsKernel, what: str) -> list:
    """The leaves of a state for ``template`` (``kernel.state_shapes``) from ``named`` arrays
    keyed by ``jax.tree_util.keystr`` path, cast to the template's dtypes; a sampler that grows
    its capacity accepts other sizes of the same rank. Raises ``ValueError`` naming ``what``."""
    grown = kernel.sampler.grow is not None
    leaves = []
    for p, leaf in jax.tree_util.tree_flatten_with_path(template)[0]:
        name = jax.tree_util.keystr(p)
        if name not in named or (named[name].shape != leaf.shape and not (
                grown and named[name].ndim == leaf.ndim)):
            raise ValueError(f"{what} is not a state of the sampler {kernel.sampler.name} "
                             f"({name} missing or of another shape)")
        leaves.append(named[name].astype(leaf.dtype))
    return leaves


def load_checkpoint(path, kernel: GibbsKernel, data, *, expected: FitResult) -> FitResult:
    """Read a checkpoint written by :func:`save_checkpoint` for the run ``expected`` describes
    (a fresh :class:`FitResult` of the same call), whose state the ``kernel`` on ``data`` must
    be able to continue. Raises ``ValueError`` saying what differs, or that the file is not a
    checkpoint (truncated, empty, another format)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            stored = {name: archive[name] for name in archive.files}
        meta = json.loads(str(stored.pop("meta")))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        # numpy calls any file that is not an archive "pickled data" and suggests allow_pickle
        err = ("not an .npz archive of plain arrays; a checkpoint is never unpickled"
               if "pickle" in str(err) else err)
        raise ValueError(f"{path} is not a readable topiczoo checkpoint ({err}); remove it to "
                         "start afresh") from None
    want = json.loads(json.dumps(_describe_run(expected)))
    differ = [key for key in want if meta.get(key) != want[key]]
    if differ:
        detail = "; ".join(f"{key}: checkpoint {meta.get(key)!r}, this run {want[key]!r}"
                           for key in differ)
        raise ValueError(f"checkpoint {path} belongs to another run ({detail}); remove it or "
                         "choose another path")
    template = kernel.state_shapes(data, expected.num_chains)
    named = {k[len("state/"):]: v for k, v in stored.items() if k.startswith("state/")}
    if kernel.sampler.upgrade is not None:
        named = kernel.sampler.upgrade(named, data)
    leaves = _state_leaves(template, named, kernel, f"checkpoint {path}")
    result = expected
    result.state = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(template), leaves)
    result.draws = {k[len("draws/"):]: v for k, v in stored.items() if k.startswith("draws/")}
    result.sample_stats = {k[len("sample_stats/"):]: v for k, v in stored.items()
                           if k.startswith("sample_stats/")}
    result.draw_iterations = stored["draw_iterations"]
    result.snapshots = [
        Snapshot(it, {k.split("/", 2)[2]: v for k, v in stored.items()
                      if k.startswith(f"snapshots/{i}/")})
        for i, it in enumerate(meta["snapshot_iterations"])]
    result.train_seconds = float(meta["train_seconds"])
    return result
