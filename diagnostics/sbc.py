"""Simulation-based calibration (Talts et al. 2018) of a parametric model's sampler.

For each of R replicates: draw the latent variables and the data from the model's numpyro
declaration (the prior predictive), run the sampler on that data, and record the rank of the
prior draw's value of each test statistic among L thinned posterior draws. If the sampler
draws the posterior, every rank is uniform on {0, ..., L}, whatever the model; a wrong
conditional shows as a U, a slope or a hump in the rank histogram.

The statistics are label-invariant functions of (Z, eta, s2) and the data, so that label
switching between the prior draw and the chain does not matter: ``eta_norm`` (||eta||_F),
``eta_sum`` (sum of eta's entries), ``y_omega`` (mean over tasks and documents of y omega),
``topic_share_max`` (largest fraction of tokens in one topic), ``zbar_concentration``
(mean over documents of sum_k zbar_dk^2) and ``log_s2`` when s2 is learned.

The replicates run as a batch: every replicate has its own data, and the sampler's step is
vmapped over (state, data) and scanned over the iterations in one compiled loop.

Only generative responses can be calibrated (their declaration samples y): LDA, the logistic
response with c = 1 and the Gaussian response. The pseudo-likelihoods (c != 1, hinge,
epsilon-insensitive) have no data-generating process to simulate from.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr
from numpyro.infer import Predictive
from scipy import stats

from topiczoo.kernels.gibbs import CorpusData, init_chain, step_chain
from topiczoo.kernels.topics import topic_proportions

__all__ = ["SBCResult", "plot_sbc_ecdf", "plot_sbc_ranks", "simulation_based_calibration"]


@dataclass
class SBCResult:
    """Ranks of the prior draws among the posterior draws.

    ranks: ``{statistic: int [R]}``, each in 0..num_draws; num_draws: L, posterior draws per
    replicate (thinned); settings: how the ranks were made (model, sizes, sampler, seed).
    """

    ranks: dict
    num_draws: int
    settings: dict

    def chi_square(self, num_bins: int | None = None) -> dict:
        """``{statistic: (chi-square statistic, p-value)}`` of the ranks' histogram against the
        uniform, with ``num_bins`` equal bins of ranks (default: the largest divisor of L + 1
        that leaves at least 5 replicates expected per bin)."""
        values = self.num_draws + 1
        if num_bins is None:
            num_bins = self.default_bins()
        if values % num_bins:
            raise ValueError(f"num_bins must divide L + 1 = {values}, got {num_bins}")
        out = {}
        for name, ranks in self.ranks.items():
            counts = np.bincount(ranks * num_bins // values, minlength=num_bins)
            statistic, p = stats.chisquare(counts)
            out[name] = (float(statistic), float(p))
        return out

    def default_bins(self) -> int:
        """The largest divisor of L + 1 that leaves at least 5 replicates expected per bin
        (the chi-square test's rule of thumb); a ValueError if even the fewest bins, the
        smallest divisor b > 1 of L + 1, would not (fewer than 5 b replicates)."""
        values = self.num_draws + 1
        replicates = len(next(iter(self.ranks.values())))
        fewest = min(b for b in range(2, values + 1) if values % b == 0)
        if replicates < 5 * fewest:
            raise ValueError(f"the chi-square test of the ranks needs at least {5 * fewest} "
                             f"replicates here ({fewest} bins of L + 1 = {values} ranks, 5 "
                             f"expected per bin); this result has {replicates}. plot_sbc_ecdf "
                             "shows any number")
        return max(b for b in range(2, values + 1) if values % b == 0 and replicates / b >= 5)

    def pit(self, seed: int = 0) -> xr.DataTree:
        """The ranks as randomised PIT values, (rank + U) / (L + 1) with U ~ Uniform(0, 1),
        exactly uniform on (0, 1) under calibration, in the ``prior_sbc`` group of a DataTree
        (dims chain = 1, draw = R) as ArviZ's ``plot_ecdf_pit`` reads it."""
        rng = np.random.default_rng(seed)
        data = {name: (("chain", "draw"), ((r + rng.random(len(r))) / (self.num_draws + 1))[None])
                for name, r in self.ranks.items()}
        return xr.DataTree.from_dict({"prior_sbc": xr.Dataset(data)})


def _statistics(z, zbar, eta, y, s2, num_topics):
    """The label-invariant test statistics of one replicate (see the module docstring)."""
    out = {
        "topic_share_max": jnp.max(jnp.bincount(z, length=num_topics)) / z.shape[0],
        "zbar_concentration": jnp.mean(jnp.sum(zbar**2, -1)),
    }
    if eta is not None:
        out.update(eta_norm=jnp.sqrt(jnp.sum(eta**2)), eta_sum=jnp.sum(eta),
                   y_omega=jnp.mean(y * (eta @ zbar.T)))
    if s2 is not None:
        out["log_s2"] = jnp.log(s2)
    return out


def _check_generative(model):
    response = model.response
    if response is None:
        return
    if response.name == "logistic" and response.c == 1.0:
        return
    if response.name == "gaussian":
        return
    raise ValueError(f"{model.name} with the {response.name} response (c = "
                     f"{getattr(response, 'c', None)}) is a pseudo-likelihood: it has no data-"
                     "generating process to calibrate against (LDA, logistic with c = 1 and the "
                     "Gaussian response do)")


def simulation_based_calibration(model, doc_lengths, vocab_size: int, *, num_tasks: int = 1,
                                 num_replicates: int = 400, num_draws: int = 19,
                                 thinning: int = 5, num_burnin: int = 100, seed: int = 0,
                                 sampler: str = "exact", kernel_model=None,
                                 replicates_per_block: int | None = None,
                                 map=map) -> SBCResult:
    """Simulation-based calibration of ``model``'s ``sampler`` on corpora of the given shape.

    Args:
      model: a generative parametric model (``lda``, ``gslda`` with c = 1, ``slda_gaussian``).
      doc_lengths: tokens per document (the corpus structure every replicate shares).
      vocab_size: V; num_tasks: T (supervised models).
      num_replicates: R prior draws; num_draws: L posterior draws per replicate, every
        ``thinning``-th iteration after ``num_burnin`` iterations from the sampler's start.
      seed: determines the prior draws, the chains and the tie-breaking of ranks.
      sampler: the sampler to calibrate, by name (``"exact"``, ``"light"``, with options).
      kernel_model: run this model's sampler instead of ``model``'s on the simulated data (a
        mutant, to see the calibration fail); default ``model``.
      replicates_per_block: the replicates' chains run in blocks of this many (the last one
        smaller), each block one batch (default: all in one); a block is a function of the
        settings and its replicates alone, so the ranks depend on the blocks, not on where
        they run.
      map: how the blocks run: a function like the builtin ``map`` (the default: one after
        another in this process) taking a function and the blocks, and returning their
        results in order; ``topiczoo.cluster.client_map(client)`` runs them on a Dask
        cluster.
    Returns an :class:`SBCResult`; ``result.chi_square()`` tests the ranks' uniformity and
    :func:`plot_sbc_ranks` / :func:`plot_sbc_ecdf` show them.
    """
    _check_generative(model)
    lengths = np.asarray(doc_lengths, np.int64)
    if lengths.ndim != 1 or len(lengths) < 1 or np.any(lengths < 1):
        raise ValueError("doc_lengths must be a non-empty list of positive document lengths")
    block = num_replicates if replicates_per_block is None else replicates_per_block
    for name, value, low in (("num_replicates", num_replicates, 2), ("num_draws", num_draws, 1),
                             ("thinning", thinning, 1), ("num_burnin", num_burnin, 0),
                             ("vocab_size", vocab_size, 1), ("num_tasks", num_tasks, 1),
                             ("replicates_per_block", block, 1)):
        if int(value) != value or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    supervised = model.response is not None
    num_docs, num_topics = len(lengths), model.num_topics
    doc_ids = jnp.asarray(np.repeat(np.arange(num_docs), lengths), jnp.int32)
    offsets = jnp.asarray(np.concatenate([[0], np.cumsum(lengths)]), jnp.int32)
    tasks = num_tasks if supervised else 0
    shape_only = CorpusData(jax.ShapeDtypeStruct(doc_ids.shape, jnp.int32), doc_ids, offsets,
                            jax.ShapeDtypeStruct((tasks, num_docs), jnp.float32))
    key_prior, key_chains, key_ties = jax.random.split(jax.random.PRNGKey(seed), 3)
    prior = Predictive(model.declaration_for(vocab_size), num_samples=num_replicates)(
        key_prior, shape_only)
    words = prior["w"].astype(jnp.int32)
    y = (prior["y"].astype(jnp.float32) if supervised
         else jnp.zeros((num_replicates, 0, num_docs), jnp.float32))
    s2 = prior.get("s2")
    s2 = None if s2 is None else s2.reshape(num_replicates, -1)[:, 0]

    def prior_statistics(z, eta, y_r, s2_r):
        n_dk = jax.ops.segment_sum(jax.nn.one_hot(z, num_topics), doc_ids, num_segments=num_docs)
        return _statistics(z, topic_proportions(n_dk), eta, y_r, s2_r, num_topics)

    truth = jax.vmap(prior_statistics)(prior["z"], prior.get("eta"), y, s2)

    keys = np.asarray(jax.random.split(key_chains, num_replicates))
    words, y = np.asarray(words), np.asarray(y)
    job = _Chains(model if kernel_model is None else kernel_model, sampler, vocab_size,
                  num_burnin, thinning, num_draws, supervised, s2 is not None,
                  np.asarray(doc_ids), np.asarray(offsets))
    starts = range(0, num_replicates, block)
    parts = list(map(job, [(keys[i:i + block], words[i:i + block], y[i:i + block])
                           for i in starts]))
    posterior = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    rng = np.random.default_rng(np.asarray(jax.random.key_data(key_ties)).ravel())
    ranks = {}
    for name, true in truth.items():
        true = np.asarray(true, np.float64)[:, None]
        draws = np.asarray(posterior[name], np.float64)
        less, equal = (draws < true).sum(1), (draws == true).sum(1)
        ranks[name] = less + rng.integers(0, equal + 1)  # ties broken uniformly
    settings = dict(model=model.describe(), doc_lengths=lengths.tolist(), vocab_size=vocab_size,
                    num_tasks=tasks, num_replicates=num_replicates, num_draws=num_draws,
                    thinning=thinning, num_burnin=num_burnin, seed=seed, sampler=sampler,
                    replicates_per_block=block)
    return SBCResult(ranks, int(num_draws), settings)


@dataclass(frozen=True)
class _Chains:
    """The posterior chains of a block of replicates, a picklable function of the block:
    ``(keys [B, 2] uint32, words [B, N] int32, y [B, T, D] float32) -> {statistic: [B, L]}``
    (numpy), the chains run as one batch (vmapped over the replicates, scanned over the
    iterations in one compiled loop)."""

    model: object
    sampler: str
    vocab_size: int
    num_burnin: int
    thinning: int
    num_draws: int
    supervised: bool
    learned_s2: bool
    doc_ids: np.ndarray
    offsets: np.ndarray

    def __call__(self, block) -> dict:
        keys, words, y = block
        runner = self.model.sampler(self.sampler, self.vocab_size)
        num_topics, supervised, learned_s2 = self.model.num_topics, self.supervised, \
            self.learned_s2
        doc_ids, offsets = jnp.asarray(self.doc_ids), jnp.asarray(self.offsets)
        one = CorpusData(jnp.asarray(words[0]), doc_ids, offsets, jnp.asarray(y[0]))
        if runner.prepare is not None:  # what its blocks read beyond the corpus: the same for all
            one = runner.prepare(one)
        data = jax.tree.map(lambda a: jnp.broadcast_to(a, (len(keys),) + a.shape),
                            one)._replace(words=jnp.asarray(words), y=jnp.asarray(y))

        def run(key, data_r):
            chain = init_chain(runner, key, data_r)

            def step(chain, _):
                return step_chain(runner, chain, data_r), None

            chain, _ = jax.lax.scan(step, chain, None, length=self.num_burnin)

            def draw(chain, _):
                chain, _ = jax.lax.scan(step, chain, None, length=self.thinning)
                state = chain.state
                topics = getattr(state, "topics", state)  # exact: z, n_dk in ``topics``
                values = _statistics(topics.z, topic_proportions(topics.n_dk),
                                     state.eta if supervised else None, data_r.y,
                                     state.augmentation[0, 0] if learned_s2 else None,
                                     num_topics)
                return chain, values

            _, values = jax.lax.scan(draw, chain, None, length=self.num_draws)
            return values

        posterior = jax.jit(jax.vmap(run))(jnp.asarray(keys), data)  # {name: [B, L]}
        return {name: np.asarray(value) for name, value in posterior.items()}


def plot_sbc_ranks(result: SBCResult, num_bins: int | None = None):
    """Histograms of the ranks, one panel per statistic, with the uniform's expected count and
    its 99% band (binomial), and each panel's chi-square p-value. Returns the figure."""
    import matplotlib.pyplot as plt

    tests = result.chi_square(num_bins)
    values = result.num_draws + 1
    replicates = len(next(iter(result.ranks.values())))
    names = list(result.ranks)
    cols = min(3, len(names))
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.8 * rows), squeeze=False)
    for ax, name in zip(axes.ravel(), names):
        bins = num_bins or result.default_bins()
        counts = np.bincount(result.ranks[name] * bins // values, minlength=bins)
        low, high = stats.binom.ppf([0.005, 0.995], replicates, 1 / bins)
        ax.axhspan(low, high, color="0.85", lw=0)
        ax.axhline(replicates / bins, color="0.4", lw=1)
        ax.bar(np.arange(bins), counts, width=0.9, color="C0")
        ax.set_title(f"{name}  (p = {tests[name][1]:.3g})", fontsize=9)
        ax.set_xlabel(f"rank bin (ranks 0..{result.num_draws})", fontsize=8)
    for ax in axes.ravel()[len(names):]:
        ax.remove()
    fig.suptitle(f"SBC ranks of {result.settings['model']['model']}: {replicates} replicates, "
                 f"L = {result.num_draws}", fontsize=10)
    fig.tight_layout()
    return fig


def plot_sbc_ecdf(result: SBCResult, var_names=None):
    """ArviZ's PIT Delta-ECDF plot (``arviz_plots.plot_ecdf_pit``) of the randomised PIT values
    of :meth:`SBCResult.pit`. Returns the PlotCollection."""
    import arviz_plots

    return arviz_plots.plot_ecdf_pit(result.pit(), var_names=var_names, group="prior_sbc")
