"""Fitting: several chains of the Gibbs kernel through numpyro's ``MCMC``, in chunks.

A run is cut into chunks of iterations. Each chunk is one ``MCMC.run`` continued from the last
state (``post_warmup_state``), which gives, at no cost to the sampler:

* progress lines on long runs (iteration, monitors, throughput);
* topic-word snapshots at chunk ends only (the K x V counts are never collected per draw);
* a checkpoint after every chunk, so an interrupted run resumes where it stopped, and the
  resumed run is identical to an uninterrupted one (the chain's key lives in the state);
* a per-draw timing, ``time_per_iteration``: the wall time of each chunk divided by its
  length, given to every draw kept in that chunk (see :class:`FitResult`).

Training snapshots (the averaging paper's selected models T_TR) are taken either at
``num_snapshots`` evenly spaced points after burn-in or, with ``snapshot_lag`` = L_TR, at
every L_TR-th iteration after burn-in B_TR: iterations B_TR + L_TR, B_TR + 2 L_TR, ..., plus
the last iteration if it is not among them.

Every ``MCMC.run`` re-traces and re-compiles numpyro's collection loop (about 3 s for a
supervised kernel here). JAX's persistent compilation cache turns each repeat into a cache hit
(about 0.5 s): :func:`fit` switches it on, in ``$TOPICZOO_CACHE`` or ``~/.cache/topiczoo/jax``,
unless the user configured a cache directory already or passes ``compilation_cache=False``.
"""

from __future__ import annotations

import math
import os
import pickle
import sys
import time
from dataclasses import dataclass, field

import jax
import numpy as np
from numpyro.infer import MCMC

from topiczoo.kernels.gibbs import GibbsKernel, GibbsState, corpus_data


@dataclass
class Snapshot:
    """Global quantities of every chain at one training iteration.

    iteration: Gibbs cycles completed; n_wk: int32 [C, V, K]; n_k: int32 [C, K];
    eta: float32 [C, T, K].
    """

    iteration: int
    n_wk: np.ndarray
    n_k: np.ndarray
    eta: np.ndarray

    def phi_hat(self, beta: float) -> np.ndarray:
        """Posterior-mean topics given the counts: float64 [C, V, K], columns sum to 1."""
        vocab_size = self.n_wk.shape[1]
        return (self.n_wk + beta) / (self.n_k[:, None, :] + vocab_size * beta)


@dataclass
class FitResult:
    """Everything a fit produced.

    draws: per-draw quantities ``{name: [C, S, ...]}`` (the kernel's ``params``: eta and the
      label-invariant monitors), burn-in included; ``draw_iterations`` [S] says at which
      iteration each was taken. ``snapshots``: post-burn-in :class:`Snapshot` list.
    sample_stats: per-draw sampler statistics ``{name: [C, S]}``, aligned with ``draws``:
      ``time_per_iteration`` (float64 seconds per Gibbs cycle): the wall time of the chunk
      (one ``MCMC.run``) that produced the draw divided by the chunk's number of iterations,
      the same value for every draw and chain of a chunk (vectorized chains share one wall
      clock). The first chunk includes tracing and compilation (as does the first chunk of
      each new length, and the first chunk after a resume), so its value is an upper bound;
      judge speed by the later chunks. Draws restored from a checkpoint written before this
      field existed get NaN. Kept apart from ``draws`` because it is not a function of the
      chain's state (two identical runs differ in it); :func:`topiczoo.diagnostics.to_datatree`
      puts it in the ``sample_stats`` group.
    state: the last :class:`GibbsState` of every chain (numpy), to continue the run.
    train_seconds: wall time of the sampling, compile time included.
    """

    model: object
    vocabulary: tuple
    num_chains: int
    num_burnin: int
    thinning: int
    seed: int
    draws: dict = field(default_factory=dict)
    draw_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    snapshots: list = field(default_factory=list)
    state: GibbsState | None = None
    train_seconds: float = 0.0
    num_tokens: int = 0
    sample_stats: dict = field(default_factory=dict)

    @property
    def iterations_done(self) -> int:
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

    def __setstate__(self, state):
        # checkpoints written before ``sample_stats`` existed: NaN timing for their draws
        self.__dict__.update(state)
        if "sample_stats" not in state:
            shape = (int(self.num_chains), len(self.draw_iterations))
            self.sample_stats = {"time_per_iteration": np.full(shape, np.nan)}


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


def snapshot_iterations(num_iterations, num_burnin, num_snapshots=5, snapshot_lag=None):
    """Iterations at which :func:`fit` takes its snapshots (sorted list).

    With ``snapshot_lag`` L: B + L, B + 2L, ... up to ``num_iterations``, plus
    ``num_iterations`` itself (the averaging paper's T_TR = {i in (B, T]: (i - B) mod L = 0},
    with the last iteration added). Otherwise ``num_snapshots`` points evenly spaced over
    (B, T], the last at T.
    """
    post = num_iterations - num_burnin
    if post <= 0:
        return []
    if snapshot_lag is not None:
        return sorted(set(range(num_burnin + snapshot_lag, num_iterations + 1, snapshot_lag))
                      | {num_iterations})
    return sorted({num_burnin + math.ceil(post * (i + 1) / num_snapshots)
                   for i in range(num_snapshots)})


def _schedule(num_iterations, num_burnin, num_snapshots, chunk, snapshot_lag=None):
    """Chunk ends: every ``chunk`` iterations, plus the burn-in end and the snapshot points."""
    snaps = snapshot_iterations(num_iterations, num_burnin, num_snapshots, snapshot_lag)
    ends = set(range(chunk, num_iterations, chunk)) | {num_burnin, num_iterations} | set(snaps)
    return sorted(e for e in ends if e > 0), set(snaps)


def fit(model, corpus, *, num_chains: int = 4, num_iterations: int = 200,
        num_burnin: int | None = None, num_snapshots: int = 5,
        snapshot_lag: int | None = None, thinning: int = 1, seed: int = 0,
        chain_method: str = "vectorized", chunk: int = 50,
        progress: bool = True, checkpoint: str | os.PathLike | None = None,
        compilation_cache: bool = True) -> FitResult:
    """Run ``num_chains`` chains of the exact Gibbs sampler of ``model`` on ``corpus``.

    Args:
      model: a :class:`topiczoo.models.TopicModel` (e.g. ``gslda(20, c=25)``).
      corpus: training :class:`topiczoo.corpus.Corpus` (labels required if supervised).
      num_iterations: Gibbs cycles per chain, burn-in included.
      num_burnin: B_TR, cycles before the first snapshot (default: half of
        ``num_iterations``). Draws before it are kept too (``draw_iterations`` <= B_TR).
      num_snapshots: topic-word snapshots kept after burn-in, evenly spaced, the last at the
        end (ignored when ``snapshot_lag`` is given).
      snapshot_lag: L_TR: if given, a snapshot every ``snapshot_lag`` iterations after burn-in
        (iterations B_TR + L_TR, B_TR + 2 L_TR, ...) and one at the last iteration, overriding
        ``num_snapshots``; see :func:`snapshot_iterations`. Each snapshot ends a chunk, so a
        small lag means more ``MCMC.run`` calls (about 0.5 s each with the compilation cache).
      thinning: keep every ``thinning``-th draw of the per-draw quantities.
      seed: determines the run, chain by chain (host randomness included).
      chain_method: ``"vectorized"`` or ``"sequential"`` (numpyro's).
      chunk: iterations per ``MCMC.run`` (progress and checkpoint granularity).
      progress: print one line per chunk to stderr.
      checkpoint: file to write after every chunk; if it exists, the run resumes from it.
      compilation_cache: use JAX's persistent compilation cache (see the module docstring).
    Returns a :class:`FitResult`.
    """
    num_burnin = num_iterations // 2 if num_burnin is None else int(num_burnin)
    for name, value, low in (("num_chains", num_chains, 1), ("num_iterations", num_iterations, 1),
                             ("num_snapshots", num_snapshots, 0), ("thinning", thinning, 1),
                             ("chunk", chunk, 1), ("num_burnin", num_burnin, 0),
                             ("snapshot_lag", 1 if snapshot_lag is None else snapshot_lag, 1)):
        if int(value) != value or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if num_burnin >= num_iterations and (num_snapshots > 0 or snapshot_lag is not None):
        raise ValueError(f"num_burnin ({num_burnin}) must be below num_iterations "
                         f"({num_iterations}) to take snapshots")
    if chain_method not in ("vectorized", "sequential"):
        raise ValueError(f"chain_method must be 'vectorized' or 'sequential', got {chain_method!r}")
    data = corpus_data(corpus, model.response)
    if compilation_cache:
        enable_compilation_cache()
    kernel = GibbsKernel(model, corpus.vocab_size)
    result = None
    if checkpoint is not None and os.path.exists(checkpoint):
        result = load_checkpoint(checkpoint)
        if result.model != model or result.seed != seed or result.num_chains != num_chains:
            raise ValueError(f"checkpoint {checkpoint} belongs to another run "
                             f"({result.model.name}, seed {result.seed}); remove it or change path")
    if result is None:
        result = FitResult(model, tuple(corpus.vocabulary), num_chains, num_burnin, thinning, seed,
                           num_tokens=corpus.num_tokens)
    ends, snapshot_points = _schedule(num_iterations, num_burnin, num_snapshots, chunk,
                                      snapshot_lag)
    mcmc_by_length = {}
    start = result.iterations_done
    for end in ends:
        if end <= start:
            continue
        length = end - start
        if length % thinning:
            raise ValueError(f"chunk of {length} iterations is not a multiple of thinning "
                             f"{thinning}; choose chunk/num_burnin/num_snapshots/snapshot_lag "
                             "to fit")
        mcmc = mcmc_by_length.get(length)
        if mcmc is None:
            mcmc = mcmc_by_length[length] = MCMC(
                kernel, num_warmup=0, num_samples=length, num_chains=num_chains,
                thinning=thinning, chain_method=chain_method, progress_bar=False,
                jit_model_args=True)
        tic = time.perf_counter()
        if result.state is None:
            mcmc.run(jax.random.PRNGKey(seed), data)
        else:
            # result.state always has a chain axis; numpyro runs a single chain unbatched
            unbatch = (lambda a: a[0]) if num_chains == 1 else (lambda a: a)
            mcmc.post_warmup_state = jax.tree.map(lambda a: jax.numpy.asarray(unbatch(a)),
                                                  result.state)
            mcmc.run(mcmc.post_warmup_state.rng_key, data)
        draws = jax.tree.map(np.asarray, mcmc.get_samples(group_by_chain=True))
        state = jax.tree.map(np.asarray, mcmc.last_state)
        _release(mcmc)
        if num_chains == 1:
            state = jax.tree.map(lambda a: a[None], state)
        seconds = time.perf_counter() - tic
        result.train_seconds += seconds
        result.state = state
        new_iterations = np.arange(start + thinning, end + 1, thinning)
        result.draw_iterations = np.concatenate([result.draw_iterations, new_iterations])
        result.draws = draws if not result.draws else {
            k: np.concatenate([result.draws[k], draws[k]], axis=1) for k in draws}
        timing = np.full((num_chains, len(new_iterations)), seconds / length)
        previous = result.sample_stats.get("time_per_iteration")
        result.sample_stats["time_per_iteration"] = (
            timing if previous is None else np.concatenate([previous, timing], axis=1))
        if end in snapshot_points:
            result.snapshots.append(Snapshot(end, state.topics.n_wk.copy(),
                                             state.topics.n_k.copy(), state.eta.copy()))
        if progress:
            _report(result, end, num_iterations, draws)
        if checkpoint is not None:
            save_checkpoint(result, checkpoint)
        start = end
    return result


def _release(mcmc) -> None:
    """Drop the arrays an ``MCMC`` object keeps after a run (samples, last state, data).

    numpyro's module-level function caches keep closures over recent ``MCMC`` objects alive;
    without this, every fit left its corpus and sampler state in memory (35 MB per fit on
    bbc, 150 MB on 20news).
    """
    mcmc._states = mcmc._states_flat = mcmc._last_state = mcmc._warmup_state = None
    mcmc.post_warmup_state = None
    mcmc._args, mcmc._kwargs = (), {}
    mcmc._init_state_cache = {}


def _report(result, end, total, draws):
    parts = [f"[{result.model.name}] iteration {end}/{total}"]
    for name, fmt in (("log_likelihood", "{:.4g}"), ("train_accuracy", "{:.3f}"),
                      ("train_loss", "{:.4g}"), ("eta_norm", "{:.3g}")):
        if name in draws:
            parts.append(f"{name} " + fmt.format(float(np.mean(draws[name][:, -1]))))
    parts.append(f"{result.token_iterations_per_second / 1e6:.2f} M token-it/s")
    print(" | ".join(parts), file=sys.stderr, flush=True)


def save_checkpoint(result: FitResult, path) -> None:
    """Write ``result`` to ``path`` atomically (pickle of numpy arrays and the model spec)."""
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def load_checkpoint(path) -> FitResult:
    """Read a :class:`FitResult` written by :func:`save_checkpoint`."""
    with open(path, "rb") as f:
        return pickle.load(f)
