"""Fitting: several chains of a model's sampler through numpyro's ``MCMC``, in chunks.

:func:`fit` checks its settings (``validate``: the schedule, ``topiczoo.schedule``), plans the
run (the data, the kernel, the memory it will take, a checkpoint or a start to continue from)
and runs it. A run is cut into chunks of iterations. Each chunk is one ``MCMC.run`` continued
from the last state (``post_warmup_state``), which gives, at no cost to the sampler:

* progress lines from the first iterations on (iteration, monitors, throughput, time left;
  ``topiczoo.progress``);
* snapshots of the model's globals (for a topic model: the topic-word counts and eta) at
  chunk ends only: the K x V counts are never collected per draw;
* a checkpoint after every chunk (``topiczoo.checkpoints``), so an interrupted run resumes
  where it stopped, and the resumed run is identical to an uninterrupted one (the chain's key
  lives in the state);
* a per-draw timing, ``time_per_iteration``: the wall time of each chunk divided by its
  length, given to every draw kept in that chunk (see :class:`FitResult`).

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
"""

from __future__ import annotations

import functools
import math
import os
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass

import jax
import numpy as np
from numpyro.infer import MCMC
from numpyro.util import control_flow_prims_disabled

from topiczoo.checkpoints import (corpus_fingerprint, load_checkpoint, save_checkpoint,
                                  start_state)
from topiczoo.corpus import Corpus
from topiczoo.defaults import NUM_CHAINS, NUM_ITERATIONS
from topiczoo.errors import ConvergenceWarning, interrupts_as_keyboard_interrupt
from topiczoo.kernels.gibbs import ChainState, GibbsKernel
from topiczoo.memory import check_memory
from topiczoo.models.supervised import corpus_data, task_of
from topiczoo.progress import progress_line, progress_log
from topiczoo.result import FitResult, Snapshot
from topiczoo.schedule import Schedule

__all__ = ["FitResult", "Snapshot", "check_fit_memory", "enable_compilation_cache", "fit"]


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


# numpyro keeps recent MCMC objects alive in module-level caches (8 entries); reuse ours too
_MCMC_CACHE: OrderedDict = OrderedDict()


def _mcmc(kernel, length, num_chains, thinning, chain_method) -> MCMC:
    key = (kernel.sampler, kernel.start, kernel.vocab_size, length, num_chains, thinning,
           chain_method)
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
        max_iterations: int | None = None, start: FitResult | None = None,
        num_threads: int | None = None, init: str = "dispersed") -> FitResult:
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
        of ``"exact"`` can go on with ``"light"``, say, or with replica exchange,
        ``"exact:replicas=4"``, every replica starting from the chain's state, or with an
        annealed burn-in, ``"exact:anneal=60"``, which begins afresh; an annealed run goes on
        with any of them too). Iterations
        are counted on from
        ``start``'s, so ``num_iterations`` (the total) must exceed them; the chains' random
        keys come from ``start``'s states (``seed`` is only recorded); the result holds the
        draws and snapshots of this call's iterations only. A ``checkpoint`` that exists
        takes precedence (it is this run's, resumed).
      num_threads: threads of the sampler's host steps (default: the cores this process may
        use, its CPU affinity and cgroup quota): the parallel sampler sweeps its documents on
        them, the others their chains. The draws do not depend on it, so it is not part of the
        run's description (a checkpoint resumes with any number).
      init: how the chains start (each from its own key, so a run is reproducible by its
        seed): ``"dispersed"`` (default), far apart: for the parametric family Z drawn from
        its prior p(Z | alpha) (each document's tokens on one or a few topics chosen at
        random in each chain) and eta from its prior; for the sHDP each document's tokens
        from theta_d ~ Dir(alpha / K 1_K) over the K initial topics; for the mixture of
        unigrams each document's topic at random (its only start). ``"uniform"``: every
        token's topic uniformly at random (the papers' start: every chain begins with each
        document spread evenly over the topics, which single-token moves of long documents
        leave slowly, so chains that start alike can agree on the same wrong mode). Ignored
        when the run continues a checkpoint or ``start``.
    Returns a :class:`FitResult`.
    """
    schedule = _validate(corpus, num_chains=num_chains, num_iterations=num_iterations,
                         num_burnin=num_burnin, num_snapshots=num_snapshots,
                         snapshot_lag=snapshot_lag, thinning=thinning, seed=seed, chunk=chunk,
                         until_rhat=until_rhat, max_iterations=max_iterations,
                         chain_method=chain_method, checkpoint=checkpoint)
    plan = _plan(model, corpus, schedule, sampler=sampler, num_chains=int(num_chains),
                 seed=int(seed), checkpoint=checkpoint, start=start, num_threads=num_threads,
                 init=init)
    if compilation_cache:
        enable_compilation_cache()
    return _execute(plan, chain_method=chain_method, callback=callback, progress=progress)


def _validate(corpus, *, chain_method, checkpoint, **settings) -> Schedule:
    """Every setting of :func:`fit` that can be checked without the data, before anything is
    read or allocated: the corpus's type, the schedule, the chain method and the checkpoint's
    folder. Returns the checked :class:`Schedule`."""
    if not isinstance(corpus, Corpus):
        raise TypeError(f"corpus must be a topiczoo Corpus (Corpus.from_texts, "
                        f"Corpus.from_document_term, load_dataset), got {type(corpus).__name__}")
    schedule = Schedule.checked(**settings)
    if chain_method not in ("vectorized", "sequential"):
        raise ValueError(f"chain_method must be 'vectorized' or 'sequential', got {chain_method!r}")
    if checkpoint is not None:  # before any sampling, not after the first chunk
        folder = os.path.dirname(os.path.abspath(checkpoint))
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"the checkpoint's folder {folder} does not exist; create "
                                    f"it or give another checkpoint path")
        if os.path.isdir(checkpoint):
            raise IsADirectoryError(f"checkpoint {checkpoint} is a folder; give a file path "
                                    f"such as {os.path.join(checkpoint, 'checkpoint.npz')}")
    return schedule


@dataclass
class _Plan:
    """What :func:`_plan` prepared: the kernel on its data, the result to fill (fresh, resumed
    or continued, with where it came from), the schedule and the checkpoint path."""

    kernel: GibbsKernel
    data: object
    result: FitResult
    origin: str | None
    schedule: Schedule
    seed: int
    checkpoint: object


def _plan(model, corpus, schedule: Schedule, *, sampler, num_chains, seed, checkpoint, start,
          num_threads, init="dispersed") -> _Plan:
    """The labels' task, the sampler, the memory the run will take (refused before anything
    large is allocated when the machine has not got it), the data, and the result the run
    fills: a fresh one, a checkpoint's (resumed) or ``start``'s last states (continued)."""
    task = task_of(model, corpus)
    if not isinstance(init, str):
        raise ValueError(f"init must be the name of a start ('dispersed', 'uniform'), got "
                         f"{init!r}")
    kernel = GibbsKernel(model, corpus.vocab_size, sampler=sampler, task=task,
                         num_threads=num_threads, start=init)
    _check_memory(kernel, corpus, _num_tasks(task), num_chains, schedule)
    data = kernel.prepare(corpus_data(model, corpus, task))
    fresh = FitResult(model, tuple(corpus.vocabulary), num_chains, schedule.num_burnin,
                      schedule.thinning, seed, kernel.sampler.name, task, schedule.record(),
                      label_invariant=tuple(kernel.sampler.label_invariant),
                      num_tokens=corpus.num_tokens, fingerprint=corpus_fingerprint(data),
                      init=init)
    result, origin = fresh, None
    if checkpoint is not None and os.path.exists(checkpoint):
        result = load_checkpoint(checkpoint, kernel, data, expected=fresh)
        origin = f"resuming from {checkpoint}"
    elif start is not None:
        result.state = start_state(start, fresh, kernel, data)
        origin = f"continuing a {start.sampler} run"
    _check_burn_in(kernel.sampler, result, schedule)
    return _Plan(kernel, data, result, origin, schedule, seed, checkpoint)


def _check_burn_in(sampler, result: FitResult, schedule: Schedule) -> None:
    """Refuse (ValueError) a burn-in that ends before the sampler's draws are the posterior's
    (``Sampler.burn_in``: an annealed burn-in's iterations still to come from the run's
    start, fresh, resumed or continued)."""
    if sampler.burn_in is None:
        return
    state = result.state.state if result.state is not None else None
    until = result.iterations_done + sampler.burn_in(state)
    if schedule.num_burnin < until:
        raise ValueError(f"sampler {sampler.name}: its draws are the posterior's from iteration "
                         f"{until + 1} on, so num_burnin ({schedule.num_burnin}) must be at "
                         f"least {until}; give num_burnin={until} or more")


def _num_tasks(task) -> int:
    return 0 if task is None else (task.num_tasks or 1)


def _check_memory(kernel, corpus, num_tasks: int, num_chains: int, schedule: Schedule):
    """Refuse the run (``topiczoo.errors.InsufficientMemoryError``) when the sampler's estimate
    of its largest arrays exceeds the memory the machine has."""
    if kernel.sampler.memory is None:
        return
    length = schedule.max_iterations or schedule.num_iterations
    sizes = {"num_chains": num_chains, "num_docs": corpus.num_docs,
             "num_tokens": corpus.num_tokens, "vocab_size": corpus.vocab_size,
             "num_tasks": num_tasks,
             "num_snapshots": max(len(snaps) for snaps, _ in schedule.plans(0)),
             "num_draws": length // schedule.thinning}
    model = kernel.spec
    check_memory(kernel.sampler.memory(sizes),
                 f"{model.describe()['model']} with K = {model.num_topics}, {num_chains} "
                 f"chain(s), sampler {kernel.sampler.name}")


def check_fit_memory(model, corpus, *, sampler: str = "exact", num_chains: int = NUM_CHAINS,
                     num_tasks: int | None = None, **schedule) -> None:
    """What :func:`fit` checks before it allocates anything large, on its own: raises
    ``topiczoo.errors.InsufficientMemoryError`` (naming the largest parts, their sizes and how
    to go on) when a fit of ``model`` on ``corpus`` with these settings (``schedule``: fit's
    num_iterations, num_burnin, num_snapshots, snapshot_lag, thinning, until_rhat,
    max_iterations) would need more memory than the machine has. ``num_tasks``: T, by
    default the tasks of ``corpus``'s labels for ``model`` (give 1 for a one-vs-all class)."""
    schedule = Schedule.checked(num_chains=num_chains, **{"num_iterations": NUM_ITERATIONS,
                                                          **schedule})
    task = None if num_tasks is not None else task_of(model, corpus)
    kernel = GibbsKernel(model, corpus.vocab_size, sampler=sampler, task=task)
    _check_memory(kernel, corpus, _num_tasks(task) if num_tasks is None else num_tasks,
                  int(num_chains), schedule)


def _execute(plan: _Plan, *, chain_method, callback, progress) -> FitResult:
    """Run the plan's stages: the requested length, then, with ``until_rhat``, doubled while
    the chains disagree, within the budget."""
    schedule, result = plan.schedule, plan.result
    log = progress_log(result) if progress else None
    if log and result.iterations_done:
        log(f"{plan.origin}: iteration {result.iterations_done} of {schedule.num_iterations}")
    run = _Run(plan.kernel, plan.data, result.num_chains, schedule.thinning, chain_method,
               plan.seed, schedule.chunk, plan.checkpoint, callback, log)
    stages = schedule.stages()
    plans = schedule.plans(result.iterations_done)  # all checked before any sampling
    for stage, (length, burnin) in enumerate(stages):
        if stage:
            result.num_burnin = burnin  # the extended run's first half is burn-in
            result.snapshots = [s for s in result.snapshots if s.iteration > burnin]
        snapshots, chunks = plans[stage]
        with interrupts_as_keyboard_interrupt():
            run.stage(result, chunks, snapshots)
        if schedule.until_rhat is None or _stop(result, schedule, stage, log):
            break
    return result


def _stop(result, schedule: Schedule, stage: int, log) -> bool:
    """After stage ``stage`` of a run until the chains agree: whether they do (or the budget
    is spent, with a warning naming the monitor that held the run back)."""
    stages = schedule.stages()
    length, burnin = stages[stage]
    result.convergence = _convergence(result, schedule.until_rhat, burnin, length)
    worst = result.convergence["worst"]
    if result.convergence["converged"]:
        if log:
            log(f"converged at iteration {length}: largest rank R-hat "
                f"{result.convergence['rhat'][worst]:.4f} ({worst}) < {schedule.until_rhat}")
        return True
    if stage + 1 < len(stages):
        if log:
            log(f"{_rhat_words(result.convergence)}: running on to iteration "
                f"{stages[stage + 1][0]}")
        return False
    warnings.warn(f"not converged within max_iterations={schedule.max_iterations}: "
                  f"{_rhat_words(result.convergence)}", ConvergenceWarning, stacklevel=4)
    return True


def _convergence(result, threshold: float, num_burnin: int, num_iterations: int) -> dict:
    """The rank-normalised split R-hat (Vehtari et al. 2021) of every element of the
    label-invariant monitors over the draws of iterations (num_burnin, num_iterations], by
    :func:`topiczoo.diagnostics.convergence.rhat`, the function of the summary table, with its
    rule: NaN (undefined: fewer than 4 draws, a NaN draw) counts as not converged; 1 (a
    monitor constant and equal in every chain) as converged; inf (chains stuck at different
    constant values) as not converged. ``worst``: the largest, NaN first; ``converged`` when
    it is below ``threshold``."""
    from topiczoo.diagnostics.convergence import rhat  # the plotting stack only when asked for

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
                self.log(progress_line(result, end, num_iterations, draws,
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
