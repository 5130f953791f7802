# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 5. Convergence: label switching, label-invariant monitors, R-hat, ESS, how long to run
#
# An exact sampler (notebook 3) targets the right posterior; whether a run of it has
# *reached* that posterior is a different question, answered by running several chains from
# different starts and asking whether they agree. For topic models there is a twist: the
# posterior is symmetric under the $K!$ relabellings of the topics, so chains that agree
# perfectly can still disagree on what "topic 3" is. This notebook
#
# 1. shows label switching on a corpus simulated from the model, and why per-topic
#    quantities ($\eta_k$, $\phi_k$) cannot be compared across chains;
# 2. uses the **label-invariant monitors** instead (the collapsed log-likelihood
#    $\log p(W \mid Z)$, $\lVert\eta\rVert$, the training loss, the mean $|\omega_d|$, the
#    mean augmentation) with the rank-normalised split $\hat R$ and bulk/tail ESS of
#    Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021);
# 3. reads trace, rank and Gelman-Rubin-Brooks plots of a real corpus (`topiczoo.diagnostics`),
#    where the answer is "not converged";
# 4. says how long to run, citing the committed mixing study;
# 5. tells modes apart with the log joint density, shows what dispersed starts let $\hat R$
#    see, and what replica exchange does, on long documents where single-token moves stall.
#
# Data: a synthetic corpus drawn from the model's own declaration, and the embedded BBC
# corpus (always available). At small size (`TOPICZOO_TUTORIAL_SIZE=small`) the runs are
# much shorter, so the diagnostics there mean little: read the full-size output.

# %%
import json
import os
from functools import partial
from pathlib import Path

import arviz_stats as azs
import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Image, display
from numpyro.infer import Predictive
from scipy.optimize import linear_sum_assignment

from topiczoo import Corpus, fit, gslda, load_dataset, medlda
from topiczoo.diagnostics import (format_table, gelman_rubin_brooks, plot_gelman_rubin_brooks,
                                  plot_rank, plot_trace, summary_table, to_datatree)
from topiczoo.modes import modes_words, separated_modes

SIZE = os.environ.get("TOPICZOO_TUTORIAL_SIZE", "full")
if SIZE not in ("full", "small"):
    raise ValueError(f"TOPICZOO_TUTORIAL_SIZE must be 'full' or 'small', got {SIZE!r}")
FULL = SIZE == "full"
SYNTHETIC_ITERATIONS = 1500 if FULL else 40
REAL_ITERATIONS = 200 if FULL else 20
REAL_TOPICS = 20 if FULL else 8
REAL_DOCUMENTS = None if FULL else 150  # small size: 150 training documents at random
REPO = Path.cwd().parent  # the notebooks run in tutorials/
print(f"size: {SIZE}")


def rhat(draws, method="rank"):
    """R-hat of draws [chains, draws, ...] per trailing element (arviz-stats)."""
    return np.asarray(azs.rhat(np.moveaxis(np.asarray(draws, np.float64), (0, 1), (-2, -1)),
                               method=method, chain_axis=-2, draw_axis=-1))

# %% [markdown]
# ## 5.1 A corpus the model believes in, and label switching
#
# Draw a labelled corpus from logistic sLDA's own declaration (notebook 2): $K = 5$
# well-separated topics ($\beta = 0.05$) over $V = 150$ words, 300 documents of 60 tokens.
# Then fit the same model with 4 chains from random starts.

# %%
K_TRUE, V_SYN, D_SYN, LENGTH = 5, 150, 300, 60
truth = gslda(K_TRUE, c=1, beta=0.05, nu2=25.0)
doc_ids = jnp.repeat(jnp.arange(D_SYN), LENGTH)
declaration = partial(truth.declaration, doc_ids=doc_ids, num_docs=D_SYN, num_topics=K_TRUE,
                      vocab_size=V_SYN, alpha=truth.alpha_per_topic, beta=truth.beta,
                      nu2=truth.nu2, num_tasks=1)
draw = Predictive(declaration, num_samples=1)(jax.random.PRNGKey(3))
words = np.asarray(draw["w"][0], np.int32)
labels = np.asarray(draw["y"][0, 0], np.int64)
synthetic = Corpus(words, np.arange(0, D_SYN * LENGTH + 1, LENGTH),
                   tuple(f"w{v}" for v in range(V_SYN)), labels=labels)
print(f"synthetic corpus: D = {synthetic.num_docs}, N = {synthetic.num_tokens}, "
      f"V = {synthetic.vocab_size}, share of y = 1: {labels.mean():.2f}; "
      f"true eta = {np.round(np.asarray(draw['eta'][0, 0]), 2)}")

result = fit(gslda(K_TRUE, c=1, beta=0.05, nu2=25.0), synthetic, num_chains=4,
             num_iterations=SYNTHETIC_ITERATIONS, seed=0, progress=False)
print(f"{result.iterations_done} iterations x {result.num_chains} chains in "
      f"{result.train_seconds:.1f} s")

# %% [markdown]
# Each chain finds the five topics, but in its own order. The traces of $\eta_k$ (left)
# put different topics in the same colour-slot per chain, so the per-topic $\hat R$ is huge.
# Match each chain's topics to chain 0's (the Hungarian algorithm on the overlap of the
# topic-word distributions of the last snapshot) and the same draws agree (right):

# %%
post = result.posterior_draws()
eta = post["eta"][:, :, 0, :]                                   # [C, S, K]
phi = [result.model.predictor().phi_hat(result.snapshots[-1].chain(c)) for c in range(result.num_chains)]
aligned = []
for c in range(result.num_chains):
    overlap = phi[0].T @ phi[c]                                 # [K, K]: topic k of chain 0 vs j
    _, match = linear_sum_assignment(-overlap)
    aligned.append(eta[c][:, match])
    print(f"chain {c}: its topics {match.tolist()} are chain 0's topics 0..{K_TRUE - 1}")
aligned = np.asarray(aligned)

fig, axes = plt.subplots(1, 2, figsize=(13, 3.6), sharey=True)
iterations = result.draw_iterations[result.draw_iterations > result.num_burnin]
for ax, values, title in ((axes[0], eta, "eta_0 as each chain labels it"),
                          (axes[1], aligned, "eta of chain 0's topic 0, chains aligned")):
    for c in range(result.num_chains):
        ax.plot(iterations, values[c, :, 0], linewidth=0.8, label=f"chain {c}")
    ax.set_title(title)
    ax.set_xlabel("iteration")
axes[0].set_ylabel("eta_k")
axes[0].legend(fontsize="small", ncol=2)
fig.tight_layout()
print("rank R-hat of eta_k as labelled:", np.round(rhat(eta), 2))
print("rank R-hat of eta_k aligned:    ", np.round(rhat(aligned), 3))

# %% [markdown]
# Alignment works here because the topics are well separated; on real corpora topics split,
# merge and drift, and no matching is reliable. So convergence is judged on quantities that
# do not depend on the labels at all. Every sampler declares its label-invariant monitors
# (`Sampler.label_invariant`); `to_datatree` puts the draws in an ArviZ tree, and
# `summary_table` gives per monitor the mean, sd, Monte Carlo standard error of the mean,
# bulk and tail ESS, the rank-normalised split $\hat R$ (judge by this one: below 1.01 is
# the usual target) and the classic Gelman-Rubin $\hat R$:

# %%
tree = to_datatree(result)
print(format_table(summary_table(tree)))

# %% [markdown]
# At full size (1,500 iterations, the second half kept) every monitor of this simulated
# corpus is below the 1.01 target, with bulk ESS from about 180 to over 1,600:
# close to what convergence looks like when the posterior has one mode (up to
# relabelling). Even here it took a long run: section 5.3 shows the log-likelihood's
# $\hat R$ at 1.03 with about 70 effective draws after the first 125 kept iterations.
#
# ## 5.2 A real corpus: BBC News, Gibbs MedLDA
#
# The README's default run, longer: Gibbs MedLDA ($c = 1$, $\ell = 164$), $K = 20$, 4 chains,
# on business vs politics articles. Half the run is burn-in.

# %%
bbc = load_dataset("bbc", seed=0)
print(bbc.summary())
if REAL_DOCUMENTS is None:
    train = bbc.train
else:  # a seeded random subset: the training documents are sorted by label (the first 150 are
    # all business), and a one-class training set teaches the classifier nothing
    keep = np.random.default_rng(0).choice(bbc.train.num_docs, REAL_DOCUMENTS, replace=False)
    train = bbc.train.subset(np.sort(keep))
real = fit(medlda(REAL_TOPICS, c=1.0, ell=164.0), train, num_chains=4,
           num_iterations=REAL_ITERATIONS, seed=0, progress=False)
print(f"{real.iterations_done} iterations x {real.num_chains} chains in {real.train_seconds:.0f} s "
      f"({real.token_iterations_per_second / 1e6:.2f} M token-iterations/s)")
real_tree = to_datatree(real)
print(format_table(summary_table(real_tree)))

# %% [markdown]
# **Trace of the whole run** (burn-in included, its end dotted). Read the log-likelihood
# and $\lVert\eta\rVert$ panels: chains that still trend at the end of the run, or that
# level off at different heights, have not converged. Nothing need be wrong with the sampler
# (notebook 3): the chains are in different regions of a posterior over $20^{112{,}327}$
# topic assignments and move between them slowly.

# %%
plot_trace(real_tree, include_warmup=True, kind=None);

# %% [markdown]
# **Rank plot** (post-burn-in): pool the draws of all chains, rank them, and look at each
# chain's ranks. If the chains sampled one distribution, every chain's ranks are uniform
# and its ECDF difference stays near 0; a chain stuck high or low bends away. The p-value of
# arviz-stats' uniformity test is in each title. Only the mean augmentation variable, which
# is redrawn from scratch every sweep given the rest, passes; every monitor that depends on
# the topic assignments fails.

# %%
plot_rank(real_tree);

# %% [markdown]
# **Gelman-Rubin-Brooks plot**: the classic shrink factor $\hat R$ computed on the second
# half of the draws up to each iteration (Brooks & Gelman 1998; the sHDP paper's Figure 3).
# A converging run shows a curve falling to 1 and staying there; the iteration where it
# stays below a threshold (here 1.1) is a burn-in estimate. Beware a curve that dips below
# the threshold while the traces still trend: chains that climb at different rates can
# *cross*, and the classic shrink factor, computed on whole chains, is small at the
# crossing. The rank-normalised *split* $\hat R$ of the summary table splits every chain
# in halves, so a trend within chains shows up as disagreement between halves: trust it
# over the classic one.

# %%
plot_gelman_rubin_brooks(real_tree, var_names=("log_likelihood", "eta_norm", "train_loss"));

# %% [markdown]
# ## 5.3 Effective sample size, and how long to run
#
# The ESS says how many independent draws the correlated chain is worth for estimating a
# mean: the Monte Carlo error of the posterior mean is about $\mathrm{sd}/\sqrt{\mathrm{ESS}}$
# (the `mcse_mean` column). Vehtari et al. recommend rank $\hat R < 1.01$ and a bulk ESS of
# at least 100 per chain before trusting the summaries. How the two evolve as the run
# grows, on the post-burn-in draws up to each point:

# %%
def growing(tree_, name, points=6):
    da = tree_["posterior"][name].values                        # [C, S]
    ends = np.linspace(max(8, da.shape[1] // points), da.shape[1], points).astype(int)
    return [(int(tree_["posterior"]["iteration"].values[e - 1]),
             float(rhat(da[:, :e])), float(azs.ess(np.asarray(da[:, :e], np.float64),
                                                  method="bulk", chain_axis=0, draw_axis=1)))
            for e in ends]


for label, tree_ in (("synthetic, gSLDA", tree), ("BBC, Gibbs MedLDA", real_tree)):
    print(label)
    for name in ("log_likelihood", "eta_norm"):
        cells = "  ".join(f"it {i}: R-hat {r:.2f}, ESS {e:.0f}" for i, r, e in growing(tree_, name))
        print(f"  {name:<15} {cells}")
iterations_grb, shrink = gelman_rubin_brooks(real_tree, "log_likelihood")
below = iterations_grb[shrink < 1.1]
print("BBC log-likelihood: classic shrink factor first below 1.1 at iteration",
      below[0] if below.size else "never (in this run)")

# %% [markdown]
# On the simulated corpus the ESS of the log-likelihood grows with the run (from about 70
# to 300 effective draws between 125 and 750 kept iterations) while $\hat R$ falls to 1.00.
# On BBC the ESS gives the game away: about 6 effective draws out of 400 however far the
# run goes, because differences between chains do not average out within a chain. (In this
# run even the classic shrink factor of the BBC log-likelihood stays above 1.1; when chains
# cross it can dip below, while the rank split $\hat R$, 2.0 here, does not.)
#
# The committed mixing study (`studies/mixing_gaussian_slda.py`) asks the same question on
# movie-scale with Gaussian sLDA over 500 iterations, from fit's random starts and from
# deliberately over-dispersed starts. Its Gelman-Rubin-Brooks curves never settle below
# 1.1 for $\lVert\eta\rVert$ or the residual norm, and the over-dispersed chains stay apart:

# %%
mixing = json.loads((REPO / "studies" / "results" / "mixing_gaussian_slda.json").read_text())
print("command:", mixing.get("command"))
display(Image(filename=str(REPO / "studies" / "results" / "mixing_gaussian_slda.png"), width=900))

# %% [markdown]
# ### So how long to run?
#
# * **For prediction**, not long: in notebook 4's averaging study on 20news-binary the
#   multiple average is about as accurate after 25 iterations as after 400, long before
#   monitors like the ones above would mix. Run several chains, keep several snapshots and
#   average their predictions (MA; topiczoo's MA pools the snapshots of all chains): in that
#   study it beat single-chain prediction at every length. That says nothing about the
#   chains agreeing: the BBC chains above disagree on every monitor that moves with the
#   topic assignments (rank $\hat R$ 1.7 to 2.4).
# * **For posterior summaries** (the mean of $\lVert\eta\rVert$, a topic's words, a
#   credible interval), run until the rank $\hat R$ of every label-invariant monitor is
#   below 1.01 and the bulk ESS of the quantity you report is in the hundreds. On real
#   corpora with $K$ = 20 that is often beyond reach in minutes; say so, report $\hat R$
#   and ESS with the result, and do not summarise per-topic quantities across chains.
# * **Burn-in**: read it off the Gelman-Rubin-Brooks plot and the trace of the whole run;
#   the default half-of-the-run is safe when the log-likelihood has flattened by then.
# * The same tables and plots for any saved run: `topiczoo diagnose RUN_DIR` writes
#   `RUN_DIR/report.md` with all of them.

# %% [markdown]
# ## 5.4 Modes: the log joint, dispersed starts, tempering
#
# Every monitor above is a function of the state that ignores the labels; `log_joint` is the
# one that says which state is *better*: $\log p(W \mid Z) + \log p(Z \mid \alpha) +
# \log p(\eta)$ + the response's log pseudo-likelihood, the log posterior density of the
# chain's state up to a constant. Chains whose log joints differ by many times the spread
# of each sit in different modes (or are still far apart), and
# `topiczoo.modes.separated_modes` groups them so (`topiczoo diagnose` and the trace plot say
# it in words, and `predict(..., chains="best")` averages over the best group only).
#
# Chains start **dispersed** by default: each chain's $Z$ from its prior $p(Z \mid \alpha)$
# (each document on one or a few topics chosen at random) and $\eta$ from its prior, so that
# chains start far apart and $\hat R$ can see the modes they settle in;
# `fit(init="uniform")` is the papers' start (every document spread evenly over the topics,
# $\eta = 0$), from which chains start alike. The BBC run above started dispersed; the same
# run from the uniform start, both read on their post-burn-in halves:

# %%
uniform = fit(medlda(REAL_TOPICS, c=1.0, ell=164.0), train, num_chains=4,
              num_iterations=REAL_ITERATIONS, seed=0, init="uniform", progress=False)
for label, run in (("dispersed (default)", real), ("uniform", uniform)):
    kept = np.asarray(run.draws["log_joint"])[:, run.draws["log_joint"].shape[1] // 2:]
    print(f"{label:<20} log_joint per chain {np.round(kept.mean(axis=1)).astype(int)}, "
          f"rank R-hat {float(rhat(kept)):.2f}")
    print(" " * 21 + modes_words(separated_modes(kept)))

# %% [markdown]
# On short BBC documents the two starts end alike: the chains still climb, so the
# within-chain spread of the post-burn-in half is wide and no two chains are told apart as
# modes; the rank $\hat R$ of the log joint is far above 1.01 either way, and higher from
# the dispersed start (1.66 against 1.52), whose chains, started apart, disagree more.
# Modes show on **long documents**, where a token's topic is pinned by the 2,000 others of
# its document. The committed study
# `studies/modes_long_documents.py` builds such a corpus from 20news (documents of one class
# concatenated into 2,000-token documents: 431 training documents, 862,000 tokens, 2,000
# words, 8 classes) and runs multi-task Gibbs MedLDA with $K = 20$: 3 seeds of the exact
# sampler and of LightMedLDA's Metropolis-Hastings steps (`light:z_draw=mh`) from each start
# (and of `light` itself, which at $K = 20$ runs as the exact sampler), and then, from a
# chain settled in a worse mode, the exact sampler alone against replica exchange
# (`sampler="exact:replicas=4,hottest=0.9"`: four replicas with $p(W \mid Z)$ raised to
# powers from 1 down to 0.9, neighbours swapped by the exact Metropolis ratio of their
# tempered densities; the cold replica's draws are the chain's).

# %%
print((REPO / "studies" / "results" / "modes_long_documents.md").read_text())
display(Image(filename=str(REPO / "studies" / "results" / "modes_long_documents.png"), width=900))

# %% [markdown]
# Read the table and the figure together:
#
# * **The start decides the mode.** From the dispersed start every chain, exact or light,
#   ends between -6.17M and -6.12M nats with test accuracy 0.974. From the uniform start
#   the chains end lower (-6.19M to -6.35M) and four of the six predict worse (0.79-0.90):
#   each settled in a mode of its own, 20,000 to 230,000 nats below, and 200 iterations of
#   single-token moves did not take it out. The seeds' spread is the warning sign: run
#   several chains from dispersed starts and compare their log joints (`topiczoo diagnose`
#   does, and names the best chain).
# * **LightMedLDA is no worse at finding the mode** from the same start (its three
#   dispersed seeds end within the exact sampler's range), at 2.6 times the exact sampler's
#   time per iteration here: its 6 steps a token cost more than 20 weights, and they pay off
#   from about $K = 250$. So `light` runs as the exact sampler below 256 topics (the `light`
#   rows: the exact rows' draws, at the same time per iteration).
# * **Replica exchange did not help here.** From a LightMedLDA chain stuck at -6.36M, the tempered
#   chain (4 replicas, powers 1 to 0.9) climbed about as fast as the exact sampler alone
#   (-6.323M against -6.329M after 100 iterations) at 3.8x its CPU time: not one swap was
#   accepted (swap rates 0), although its hottest replica reached -6.126M, the dispersed
#   starts' mode. With 862,000 tokens, $\log p(W \mid Z)$ of neighbouring replicas differs
#   by tens of thousands of nats, and a power step of 0.035 times that makes a swap's log
#   ratio about -1,500 to -2,700 (the table's last line: what `topiczoo diagnose` says of
#   such a run). A pair swaps often near -2, and the log ratio shrinks as the square of the
#   power step, so about 98 replicas between the powers 1 and 0.9 would exchange. Replica
#   exchange is exact (`tests/test_tempering.py`), but on a corpus this large its ladder
#   needs about a hundred replicas. Here dispersed starts and several chains are the
#   practical defence.
# * **An annealed burn-in leaves the poor mode.** `sampler="exact:anneal=60"` runs the same
#   tempered cycle on one chain with the power rising from 0.3 to 1 over its first 60
#   iterations, then the exact cycle (so `num_burnin` must cover the 60; `fit` says so).
#   From the same stuck chain it ended at -6.108M, above every exact seed, for about the
#   exact sampler's CPU time. From the uniform start its three seeds end 33,000 to 137,000
#   nats above the exact sampler's (the `seeds-uniform-anneal` rows). A higher log joint is
#   not always a better classifier here, though: the stuck chain's anneal kept its test
#   accuracy of 0.903, and two of the uniform-start seeds predict at 0.81 (the log joint is
#   dominated by the 862,000 tokens' words, not by the 431 documents' labels). Compare
#   chains by their log joint to find the posterior's modes, and by held-out accuracy to
#   choose a classifier.
