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
# # 7. The supervised HDP: the data choose the number of topics
#
# Every model so far needed $K$, the number of topics, before it saw a document. The
# supervised hierarchical Dirichlet process (sHDP; Dai & Storkey, `supervised_hdp.md` in
# `../shared/papers/`) puts a prior on an *unbounded* set of topics instead: a corpus uses as
# many as its documents and labels call for, and the sampler creates and removes topics as it
# runs. The label is tied to the topics as in sLDA, through $\omega_d = \eta^\top \bar z_d$.
# This notebook
#
# 1. reads the generative story from its numpyro declaration (truncated stick-breaking) and
#    draws from it: how $\gamma$ and $\alpha$ set the number of topics, and how $y$ follows
#    from $\eta^\top \bar z_d$;
# 2. walks through the exact direct-assignment Gibbs sampler with the code's names, and runs
#    the enumeration check live: the chain's frequencies of token partitions against the
#    exact posterior, and a planted bug failing it;
# 3. fits the logistic sHDP to 20news-binary: occupied topics, $\alpha$ and $\gamma$ per
#    chain, label-invariant $\hat R$ / ESS, the largest topics with their $\eta$, and test
#    accuracy against gSLDA with $K = 20$ on the same split;
# 4. quotes the committed sHDP studies, including where the sHDP falls short.
#
# Data: `20news-binary`, read from `$TOPICZOO_DATA` or `../shared/data`, else downloaded on
# first use into the user cache from its public sources (see the README): required at full
# size; at small size (`TOPICZOO_TUTORIAL_SIZE=small`, what CI runs) the notebook falls back
# to the embedded BBC corpus when it can be neither found nor downloaded, and says so. Small
# size runs everything much shorter: read the full-size outputs.

# %%
import importlib.util
import inspect
import os
import time
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Image, Markdown, display
from numpyro.infer import Predictive

from topiczoo import fit, gslda, load_dataset, predict
from topiczoo.diagnostics import format_table, summary_table, to_datatree
from topiczoo.kernels import hdp
from topiczoo.kernels.gibbs import corpus_arrays
from topiczoo.models.responses import Logistic
from topiczoo.models.shdp import SHDPModel, shdp_declaration, shdp_logistic

SIZE = os.environ.get("TOPICZOO_TUTORIAL_SIZE", "full")
if SIZE not in ("full", "small"):
    raise ValueError(f"TOPICZOO_TUTORIAL_SIZE must be 'full' or 'small', got {SIZE!r}")
FULL = SIZE == "full"
PRIOR_DRAWS = 20 if FULL else 4          # prior predictive draws per (gamma, alpha) cell
ENUM_CHAINS, ENUM_SWEEPS = (20, 2000) if FULL else (20, 300)  # enumeration: chains x sweeps
FIT = (dict(num_chains=4, num_iterations=100, num_snapshots=5, seed=0) if FULL
       else dict(num_chains=2, num_iterations=20, num_snapshots=2, seed=0))
PREDICT = dict(num_burnin=20, num_draws=10) if FULL else dict(num_burnin=5, num_draws=3)
TRAIN_DOCUMENTS = None if FULL else 300  # small size: 300 training documents at random
REPO = Path.cwd().parent                 # the notebooks run in tutorials/
print(f"size: {SIZE}; fits: {FIT}")

# %% [markdown]
# ## 7.1 The generative story
#
# The HDP of Teh, Jordan, Beal & Blei (2006) with a response (Dai & Storkey, eqs. 8-12):
#
# $$
# G_0 \sim \mathrm{DP}(\gamma, H),\qquad G_d \mid G_0 \sim \mathrm{DP}(\alpha, G_0),\qquad
# (\phi_{dn}, \eta_{dn}) \sim G_d,\qquad w_{dn} \sim \mathrm{Cat}(\phi_{dn}),
# $$
#
# with base measure $H = \mathrm{Dir}(\beta \mathbf 1_V) \times \mathcal N(0, \nu^2)$: a
# topic is a word distribution *and* its coefficient. $G_0$ is the corpus-wide menu of
# topics with weights $\pi^0_k$ (infinitely many, most tiny); each document's $G_d$ re-weights
# the *same* atoms, so documents share topics. $\gamma$ controls how spread out the corpus
# weights are (how many topics the corpus uses), $\alpha$ how closely each document follows
# them (how many topics a document uses). Then $y_d$ depends on
# $\omega_d = \eta^\top \bar z_d$, $\bar z_d$ the share of each topic in document $d$.
#
# The declaration writes $G_0$ by stick-breaking, truncated at $L$ atoms for simulation
# ($\pi^0_k = v_k \prod_{j<k}(1 - v_j)$, $v_k \sim \mathrm{Beta}(1, \gamma)$), and then
# $G_d$ on those atoms as $\pi_d \sim \mathrm{Dir}(\alpha \pi^0_1, \dots, \alpha \pi^0_L)$.
# (The sampler below works with the untruncated process; the truncation is only for prior
# draws and the Geweke test.)
#
# **Notation** (this notebook; the code keeps its own names):
#
# | symbol | meaning | in the code |
# |---|---|---|
# | $\gamma$ | concentration of the corpus-level DP: how many topics the corpus uses | `gamma` |
# | $\alpha$ | concentration of the document-level DPs: how many topics a document uses | `alpha` |
# | $\pi^0_k$ | corpus-level (stick) weight of topic $k$ (the sHDP paper's $\beta_k$) | `beta_weights`, `beta_w` |
# | $\pi^0_{\text{new}}$ | the corpus weight of all topics not yet used | `beta_new` |
# | $\pi_d$ | document $d$'s topic weights | `pi` |
# | $\beta$ | the topics' symmetric Dirichlet parameter over words (as in LDA) | `beta`, `BETA` |
# | $\eta_k$, $\nu^2$ | topic $k$'s label coefficient and its prior variance | `eta`, `nu2` |
# | $\bar z_d$, $\omega_d$ | document $d$'s topic shares and its score $\eta^\top \bar z_d$ | `zbar`, `omega` |
# | $m_{\cdot k}$ | tables serving topic $k$, over all documents | `m_k` |
#
# ($\gamma$ and $\alpha$ here are not notebook 3's symbols: there $\alpha$ is LDA's
# concentration over $K$ fixed topics, and the hinge's augmentation is $\lambda_d$, with
# $\tau_d = 1/\lambda_d$.)

# %%
print(inspect.getsource(shdp_declaration))

# %% [markdown]
# **Prior predictive draws.** Fix $\gamma$ and $\alpha$ on a grid, draw corpora of 40
# documents x 50 tokens (truncation $L = 100$, $V = 50$), and count the topics used: by the
# whole corpus, and by a document on average. One `Predictive` call serves the whole grid:
# the grid values are given as "posterior samples" of the sites `gamma` and `alpha`, and
# everything else is drawn from the declaration.

# %%
D_PRIOR, LENGTH, V_PRIOR, TRUNCATION = 40, 50, 50, 100
GAMMAS = np.array([0.3, 1.0, 3.0, 10.0])
ALPHAS = np.array([0.3, 1.0, 3.0, 10.0])
doc_ids = jnp.repeat(jnp.arange(D_PRIOR), LENGTH)
cell_gamma, cell_alpha = (g.ravel() for g in np.meshgrid(GAMMAS, ALPHAS, indexing="ij"))
grid = {"gamma": jnp.asarray(np.repeat(cell_gamma, PRIOR_DRAWS), jnp.float32),
        "alpha": jnp.asarray(np.repeat(cell_alpha, PRIOR_DRAWS), jnp.float32)}
prior = partial(shdp_declaration, doc_ids, D_PRIOR, V_PRIOR, 0.1, nu2=4.0,
                response=Logistic(1.0), truncation=TRUNCATION)
tic = time.perf_counter()
draws = Predictive(prior, posterior_samples=grid,
                   return_sites=["z", "y", "eta", "beta_weights"])(jax.random.PRNGKey(0))
z_prior = np.asarray(draws["z"]).reshape(len(GAMMAS), len(ALPHAS), PRIOR_DRAWS, D_PRIOR, LENGTH)
corpus_topics = np.array([[[len(np.unique(z)) for z in cell] for cell in row] for row in z_prior])
doc_topics = np.array([[[np.mean([len(np.unique(doc)) for doc in z]) for z in cell]
                        for cell in row] for row in z_prior])
print(f"{len(grid['gamma'])} prior corpora in {time.perf_counter() - tic:.0f} s")

fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
for j, alpha in enumerate(ALPHAS):
    axes[0].errorbar(GAMMAS, corpus_topics[:, j].mean(-1), corpus_topics[:, j].std(-1),
                     marker="o", capsize=3, label=f"alpha = {alpha:g}")
for i, gamma in enumerate(GAMMAS):
    axes[1].errorbar(ALPHAS, doc_topics[i].mean(-1), doc_topics[i].std(-1), marker="o",
                     capsize=3, label=f"gamma = {gamma:g}")
axes[0].set(xscale="log", xlabel="gamma (top level)", ylabel="topics used by the corpus",
            title=f"{D_PRIOR} documents x {LENGTH} tokens")
axes[1].set(xscale="log", xlabel="alpha (document level)", ylabel="topics used per document",
            title="mean over documents")
for ax in axes:
    ax.legend(fontsize="small")
fig.tight_layout()
print("topics used by the corpus (mean over draws), rows gamma", GAMMAS, "columns alpha", ALPHAS)
print(np.round(corpus_topics.mean(-1), 1))

# %% [markdown]
# $\gamma$ is the main dial of the corpus's number of topics: in the Chinese restaurant
# franchise the $M$ tables of the corpus choose dishes (topics) by a CRP($\gamma$), so
# about $\gamma \log(1 + M / \gamma)$ topics appear; $\alpha$ sets how many tables
# (about $\alpha \log(1 + N_d / \alpha)$ per document) and so how many topics a document
# mixes, and through $M$ it raises the corpus count too. Neither is a hard $K$: the Gamma(1, 1)
# priors on both (the sampler draws them) let the data move them.
#
# **The response.** The corpora of the grid's cell $\gamma = 3$, $\alpha = 1$, with the
# logistic response at $c = 1$ (a proper Bernoulli, $p(y_d = 1) = \sigma(\omega_d)$) and
# $\eta_k \sim \mathcal N(0, 4)$: a document's score is the average of its tokens' topic
# coefficients, so a document written mostly in a topic with a large $\eta_k$ gets $y = 1$
# with high probability. First the documents of one corpus (the cell's draw whose scores
# spread most), then every document of the cell's draws, binned by $\omega_d$: the share of
# $y = 1$ follows $\sigma(\omega_d)$.

# %%
cell = np.flatnonzero((np.asarray(grid["gamma"]) == 3.0) & (np.asarray(grid["alpha"]) == 1.0))
counts = np.zeros((len(cell), D_PRIOR, TRUNCATION))
for i, row in enumerate(cell):
    np.add.at(counts[i], (np.asarray(doc_ids), np.asarray(draws["z"][row])), 1)
zbar = counts / LENGTH                                              # [draws, D, L]
omega = np.einsum("rdk,rk->rd", zbar, np.asarray(draws["eta"])[cell, 0])
y_cell = np.asarray(draws["y"])[cell, 0]                            # [draws, D]
r = int(np.argmax(omega.std(1)))
print(f"{'doc':>3}  {'main topic':>10}  {'its share':>9}  {'its eta':>7}  {'omega':>6}  "
      f"{'sigma(omega)':>12}  y")
for d in range(8):
    k = int(np.argmax(zbar[r, d]))
    print(f"{d:>3}  {k:>10}  {zbar[r, d, k]:>9.2f}  {draws['eta'][cell[r], 0, k]:>7.2f}  "
          f"{omega[r, d]:>6.2f}  {1 / (1 + np.exp(-omega[r, d])):>12.2f}  {int(y_cell[r, d])}")
edges = np.array([-np.inf, -2.0, -1.0, 0.0, 1.0, 2.0, np.inf])
bins = np.digitize(omega.ravel(), edges[1:-1])
print(f"\nall {omega.size} documents of the cell:")
print(f"{'omega in':>16}  {'documents':>9}  {'mean sigma(omega)':>17}  {'share of y = 1':>14}")
for b in range(len(edges) - 1):
    inside = bins == b
    if inside.any():
        print(f"{f'[{edges[b]:g}, {edges[b + 1]:g})':>16}  {inside.sum():>9}  "
              f"{np.mean(1 / (1 + np.exp(-omega.ravel()[inside]))):>17.2f}  "
              f"{y_cell.ravel()[inside].mean():>14.2f}")

# %% [markdown]
# ## 7.2 The exact sampler: direct assignment
#
# The sampler (`topiczoo.kernels.hdp`, Teh et al. 2006's direct-assignment scheme, the sHDP
# paper's section 5) never stores $G_0$'s infinitely many atoms. Its state (`SHDPState`)
# holds the topic `z` of every token with the counts `n_dk`, `n_wk`, `n_k` of the *occupied*
# topics, their stick weights `beta_weights` ($\pi^0_k$) and the unrepresented rest
# `beta_new` ($\pi^0_{\text{new}} = 1 - \sum_k \pi^0_k$: the weight of all topics nobody uses
# yet), their coefficients `eta`, `alpha`, `gamma`, the response's `augmentation`, and the
# table counts `m_k`. A cycle is four blocks, each an exact conditional draw (the blocks of
# `model.sampler("exact", V)`):
#
# * **eta**: $\eta \mid Z$, augmentation: Gaussian over the occupied topics, with
#   precision $I/\nu^2 + \sum_d \rho_d \bar z_d \bar z_d^\top$ (the same block as the
#   parametric models', notebook 3: `topiczoo.models.supervised`).
# * **`topics_block`** (eq. 13): each token in turn. With the token removed, an occupied
#   topic $k$ has weight $(n_{dk} + \alpha\pi^0_k)\,\frac{n_{wk} + \beta}{n_k + V\beta}$ times
#   the response factor with the token moved to $k$; a **new topic** has weight
#   $\alpha\,\pi^0_{\text{new}} / V$ times the response factor at the new topic's own
#   $\eta_{\text{new}}$. That $\eta_{\text{new}}$ cannot be integrated in closed form for every
#   response, so the sampler uses **Neal's (2000) algorithm 8**: `num_aux` $= m$ auxiliary
#   topics, each of weight $\alpha\pi^0_{\text{new}}/(mV)$, each with an $\eta$ drawn afresh
#   from $\mathcal N(0, \nu^2)$ (when the token was alone in its topic, the first auxiliary
#   keeps that topic's $\eta$). A **birth** (the token picks an auxiliary) splits the rest:
#   $b \sim \mathrm{Beta}(1, \gamma)$, the new topic takes $b\,\pi^0_{\text{new}}$ and the
#   auxiliary's $\eta$, and $(1 - b)\,\pi^0_{\text{new}}$ stays unrepresented. A **death**
#   (a topic emptied by the removal) returns its $\pi^0_k$ to $\pi^0_{\text{new}}$.
# * **`global_block`** (eqs. 14-15): the table counts by the **Antoniak** scheme, seating the
#   $n_{dk}$ customers of dish $k$ in document $d$ one by one, customer $i + 1$ opening a new
#   table with probability $\alpha\pi^0_k / (\alpha\pi^0_k + i)$; then $\gamma$ by Escobar and
#   West's auxiliary variable given $K$ and $m_{..}$; then $(\pi^0_1, \dots, \pi^0_K,
#   \pi^0_{\text{new}}) \sim \mathrm{Dir}(m_{.1}, \dots, m_{.K}, \gamma)$; then $\alpha$ by
#   Teh et al.'s auxiliary variables. ($\alpha$ and $\gamma$ have Gamma(1, 1)
#   priors, or stay fixed.)
# * **augmentation**: the response's own draw given $\omega$ (Polya-Gamma for the
#   logistic, inverse Gaussian for the hinge; notebook 3; again the supervised part every
#   family shares).
#
# **Capacity.** Inside a numpyro run shapes are static, so the state has a fixed number of
# topic slots; a birth takes the lowest free slot. Nothing the blocks draw depends on the
# number of slots, so when a birth finds none free, `fit` doubles the capacity (`hdp.grow`)
# and redoes the chunk from its start with the same keys: the draws are those of a run started
# with a large capacity (`tests/test_shdp_family.py` checks exactly that). That is the
# "chunk redone with more capacity" line in a fit's progress output.
#
# The cycle of the logistic sHDP, as `fit` runs it, and the Antoniak seating as the kernel
# writes it (`tests/test_shdp_globals.py` checks the seating against Antoniak's law directly,
# and requires two planted wrong rules, one table per document and topic and a seating
# probability off by one, to fail that check):

# %%
model_demo = shdp_logistic(2, c=3.0)
print("blocks per cycle:",
      [block.__doc__.split(":")[0] for block in model_demo.sampler("exact", 3).blocks])
print("the Antoniak seating inside the global block (kernels/hdp/globals.py):")
print(inspect.getsource(hdp.globals._seat_tables))

# %% [markdown]
# ### The exactness proof, live
#
# On a corpus small enough to enumerate (2 documents, 5 tokens, $V = 3$: the words
# `[0, 1, 0]` and `[1, 2]`, labels 1 and 0), the sHDP's state that matters is the
# **partition** of the tokens into topics (labels are arbitrary and the number of topics is
# free): 52 partitions. Their exact posterior is
#
# $$
# p(\text{partition} \mid W, y) \propto p_{\text{CRF}}(\text{partition} \mid \alpha, \gamma)\;
#   p(W \mid \text{partition})\; \int \mathcal N(\eta; 0, \nu^2 I) \prod_d \psi(y_d \mid
#   \eta^\top \bar z_d)\, d\eta
# $$
#
# with the Chinese-restaurant-franchise prior summed by brute force over every seating of the
# tokens at tables, the Dirichlet-multinomial word term, and the integral over $\eta$ by
# quadrature with the response's **original** pseudo-likelihood (no augmentation). That is
# `tests/exact_hdp.py`, which imports nothing from the package (numpy and scipy only); the
# test suite runs it for every response (`tests/test_shdp.py`), and we import it here.
#
# The chains run the four blocks of the model's sampler with a plain `jax.lax.scan` driver
# (vectorized over chains). The **planted bug** gives a new topic the weight $\alpha$ instead
# of $\alpha\,\pi^0_{\text{new}}$ (it forgets that a new topic must be drawn from the corpus's
# unused mass): planted as the tests plant it, by recompiling the sweep from its own source
# with that one line changed (`tests/shdp_mutants.py`). Logistic response with $c = 3$,
# $\alpha = \gamma = 1$ fixed, $\beta = 0.5$, $\nu^2 = 4$.

# %%
def test_module(name):
    """A helper module of the test suite (``tests/NAME.py``), imported from its file."""
    import sys

    sys.path.insert(0, str(REPO / "tests"))  # the test helpers import each other by name
    spec = importlib.util.spec_from_file_location(name, REPO / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


exact_hdp = test_module("exact_hdp")
shdp_mutants = test_module("shdp_mutants")

DOCS, LABELS, VOCAB, BETA, NU2 = [[0, 1, 0], [1, 2]], [1, 0], 3, 0.5, 4.0
response = Logistic(3.0)
y_tiny = response.encode(np.asarray(LABELS))                      # [1, D] coded {0, 1}
tiny = corpus_arrays(np.concatenate(DOCS).astype(np.int32),
                     np.array([0, 3, 5], np.int32), y_tiny)
NUM_TOKENS = tiny.words.shape[0]
tic = time.perf_counter()
partitions, exact, _ = exact_hdp.exact_hdp_posterior(
    DOCS, VOCAB, BETA, alpha=1.0, gamma=1.0, response=("logistic", {"c": 3.0}),
    y=np.asarray(y_tiny, float), nu2=NU2)
print(f"{len(partitions)} partitions, exact posterior in {time.perf_counter() - tic:.1f} s; "
      f"the most probable: {partitions[int(np.argmax(exact))]} ({exact.max():.3f})")


model_tiny = SHDPModel("shdp-logistic", 1, response, ("binary",), beta=BETA, nu2=NU2,
                       learn_alpha=False, learn_gamma=False, capacity=NUM_TOKENS)
blocks = model_tiny.sampler("exact", VOCAB).blocks


def cycle(key, state):
    """One sHDP cycle on the tiny corpus: eta, topics, global (alpha, gamma fixed), augmentation."""
    for block, block_key in zip(blocks, jax.random.split(key, len(blocks))):
        state = block(block_key, state, tiny)
    return state


def partition_frequencies(seed=0, burn_in=100):
    """Frequencies of the 52 partitions over ENUM_CHAINS chains x ENUM_SWEEPS cycles."""
    def chain(key):
        init_key, run_key = jax.random.split(key)
        state = hdp.init_state(init_key, tiny, VOCAB, NUM_TOKENS, response)

        def step(state, key):
            state = cycle(key, state)
            return state, state.z

        _, z = jax.lax.scan(step, state, jax.random.split(run_key, burn_in + ENUM_SWEEPS))
        return z[burn_in:]

    keys = jax.random.split(jax.random.PRNGKey(seed), ENUM_CHAINS)
    z = np.asarray(jax.jit(jax.vmap(chain))(keys)).reshape(-1, NUM_TOKENS)
    index = {p: i for i, p in enumerate(partitions)}
    counts = np.zeros(len(partitions))
    for row, n in zip(*np.unique(z, axis=0, return_counts=True)):
        counts[index[exact_hdp.canonical(row)]] += n              # labels do not matter
    return counts / counts.sum()


num_topics = np.array([len(set(p)) for p in partitions])
print(f"exact posterior mean number of topics: {exact @ num_topics:.3f}")
runs = {}
for name, sweep in (("sHDP sampler", hdp.sweep._hdp_sweep),
                    ("planted bug: new topic weight alpha",
                     shdp_mutants.sweep_mutant("new-topic-alpha"))):
    tic = time.perf_counter()
    package_sweep, hdp.sweep._hdp_sweep = hdp.sweep._hdp_sweep, sweep
    try:
        runs[name] = partition_frequencies()
    finally:
        hdp.sweep._hdp_sweep = package_sweep
    tv = exact_hdp.total_variation(exact, runs[name])
    print(f"{name:<38} TV(exact, chain) = {tv:.4f}, mean number of topics "
          f"{runs[name] @ num_topics:.3f}   ({ENUM_CHAINS} x {ENUM_SWEEPS} cycles, "
          f"{time.perf_counter() - tic:.0f} s)")

fig, axes = plt.subplots(1, 2, figsize=(13, 3.6), sharey=True)
order = np.argsort(exact)[::-1]
for ax, (name, freq) in zip(axes, runs.items()):
    ax.bar(np.arange(len(exact)), exact[order], color="0.75", label="exact (enumeration)")
    ax.plot(np.arange(len(exact)), freq[order], "o", markersize=3, color="C3",
            label="chain frequency")
    ax.set_title(f"{name}\nTV = {exact_hdp.total_variation(exact, freq):.4f}", fontsize="medium")
    ax.set_xlabel("partition of the 5 tokens, by exact probability")
axes[0].set_ylabel("probability")
axes[0].legend(fontsize="small")
fig.tight_layout()

# %% [markdown]
# The sampler matches the enumeration to Monte Carlo noise; the bug misplaces a large share
# of the mass onto partitions with more topics (its mean number of topics is far above the
# exact one): a weight $\alpha$ instead of $\alpha\pi^0_{\text{new}}$ makes new topics far too
# likely. The test suite holds the
# sampler to a total variation below 0.03 with 100,000 draws, for the plain HDP and every
# response (and with $\alpha$ and $\gamma$ drawn, for two of them), and requires this bug
# and a wrong table-count rule (one table per document and topic) to miss it; a Geweke test
# checks the Gaussian sHDP with $\alpha$, $\gamma$ and $s^2$ drawn against the declaration
# above.
#
# ## 7.3 A real fit: 20news-binary
#
# alt.atheism vs talk.religion.misc (notebook 4). The logistic sHDP with gSLDA's constant
# $c = 25$, started from 20 topics, $\alpha$ and $\gamma$ drawn; `fit` as for every model.

# %%
try:
    data = load_dataset("20news-binary")
except FileNotFoundError as missing:
    if FULL:
        raise
    print(f"20news-binary not found ({type(missing).__name__}): at small size this notebook "
          "falls back to the embedded BBC corpus, business vs politics; the numbers below are "
          "then not 20news-binary's")
    data = load_dataset("bbc", seed=0)
print(data.summary())
print("classes (y = 0, y = 1):", data.label_names)
if TRAIN_DOCUMENTS is None:
    train = data.train
else:
    keep = np.random.default_rng(0).choice(data.train.num_docs, TRAIN_DOCUMENTS, replace=False)
    train = data.train.subset(np.sort(keep))

shdp = fit(shdp_logistic(20, c=25.0), train, progress=False, **FIT)
print(f"sHDP: {shdp.iterations_done} iterations x {shdp.num_chains} chains in "
      f"{shdp.train_seconds:.0f} s; capacity at the end: {shdp.chain_state(0).capacity} slots")

# %% [markdown]
# **Occupied topics, $\alpha$ and $\gamma$ per chain** (the whole run; the dotted line ends
# the burn-in). What to look at: whether the curves level off by the end of the run, and
# whether the four chains overlap.

# %%
fig, axes = plt.subplots(1, 3, figsize=(14, 3.4))
for ax, name, ylabel in zip(axes, ("num_topics", "alpha", "gamma"),
                            ("occupied topics", "alpha (document-level concentration)",
                             "gamma (corpus-level concentration)")):
    values = np.asarray(shdp.draws[name])                       # [C, S]
    for c in range(shdp.num_chains):
        ax.plot(shdp.draw_iterations, values[c], linewidth=0.9, label=f"chain {c}")
    ax.axvline(shdp.num_burnin, color="0.5", linestyle=":")
    ax.set(xlabel="iteration", ylabel=ylabel,
           title={"num_topics": "occupied topics"}.get(name, name))
axes[0].legend(fontsize="small")
fig.tight_layout()
print("occupied topics at the end, per chain:", np.asarray(shdp.draws["num_topics"])[:, -1])

# %% [markdown]
# **Label-invariant convergence monitors.** For LDA-type models label switching makes
# $\eta_k$ and $\phi_k$ incomparable across chains (notebook 5), but within a chain "topic
# 3" at least stays one topic, and with well separated topics the chains can even be
# aligned. In the sHDP not even that holds: topics are born and die, a freed slot is reused by
# an unrelated newborn, and the *number* of topics differs between chains and over time, so
# $\eta$ has no fixed dimension to align. Only quantities defined without labels can be
# compared: the collapsed log-likelihood, the number of occupied topics, $\alpha$, $\gamma$,
# $\lVert\eta\rVert$, the training loss and accuracy, the mean augmentation. These are the
# sampler's declared monitors, and their rank $\hat R$ and ESS are the convergence check:

# %%
tree = to_datatree(shdp)
summary = summary_table(tree)
print(format_table(summary))
print(f"\nrank R-hat from {summary['r_hat'].min():.3f} to {summary['r_hat'].max():.3f}, bulk ESS "
      f"from {int(summary['ess_bulk'].min())} to {int(summary['ess_bulk'].max())}")

# %% [markdown]
# At full size these chains are far from converged by every monitor: the number of occupied
# topics climbs from 20 to 182-203 by iteration 100 and is still rising, $\gamma$ rises with
# it (to 20-30: the top level must account for ever more topics), $\alpha$ drifts down after
# a quick rise, and every rank $\hat R$ is far above 1.01 (the last line gives the range) with
# a bulk ESS of a few to a dozen draws. The four traces
# agree with each other at every iteration: the chains are not stuck in different modes, they
# are all still travelling, and the *split* $\hat R$ sees the trend within each chain
# (notebook 5). Short sHDP runs on real text look like this (the movie-scale study below shows
# the same climb). Notebook 5's
# advice holds: for prediction this can be enough; for posterior summaries, such as how many
# topics the corpus "has", it is not.
#
# **The largest topics and their coefficients** (`topiczoo.topics`: chain 0 at its last
# snapshot, which is its last state): size in tokens,
# $\eta_k$ (positive pushes a document towards the second class) and the most frequent words.

# %%
from topiczoo.topics import format_topics
from topiczoo.topics import topics as list_topics  # `topics` names a column below

state = shdp.chain_state(0)
found = list_topics(shdp, sort_by="tokens", num_words=9)  # chain 0, last snapshot = last state
print(f"y = 1 is {data.label_names[1]!r}; {len(found)} occupied topics; "
      f"alpha {float(state.alpha):.2f}, gamma {float(state.gamma):.2f}")
print(format_topics(found[:10]))
strong = sorted((t for t in found if t.tokens >= 100), key=lambda t: t.eta[0])
print("strongest coefficients among topics of at least 100 tokens:")
print(format_topics(strong[:3] + strong[-3:]))

# %% [markdown]
# In the full-size run some topics are about content (a Christian topic, god, bible, jesus,
# church, with a large positive $\eta$ that pushes a document towards talk.religion.misc;
# atheism and Islam topics with negative ones) and some are about *people*: regular posters'
# names and signatures form topics of their own, and the coefficient uses them too. Behind
# the largest topics come well over a hundred small ones.
#
# **Prediction** (eq. 18): `predict` runs a test chain per training chain and snapshot with
# the snapshot's topics fixed and no label term; a test document may open topics of its own,
# which the score ignores (their coefficient has prior mean 0). Scores come from
# $E[\bar z_d]$, and the averaging strategies are those of notebook 4. Against gSLDA with
# $K = 20$ and the same $c$, chains, iterations and split:

# %%
slda = fit(gslda(20, c=25.0), train, progress=False, **FIT)
rows = []
for name, result in (("sHDP logistic (20 initial)", shdp), ("gSLDA, K = 20", slda)):
    tic = time.perf_counter()
    prediction = predict(result, data.test, **PREDICT)
    topics = (np.asarray(result.draws["num_topics"])[:, -1].tolist()
              if "num_topics" in result.draws else 20)
    rows.append((name, prediction.accuracy(data.test.labels, "sf"),
                 prediction.accuracy(data.test.labels, "ma"), result.train_seconds,
                 time.perf_counter() - tic, topics))
print(f"{'model':<28} {'sf':>6} {'ma':>6} {'train s':>8} {'predict s':>9}  topics")
for name, sf, ma, train_s, predict_s, topics in rows:
    print(f"{name:<28} {sf:>6.3f} {ma:>6.3f} {train_s:>8.0f} {predict_s:>9.0f}  {topics}")
print(f"training time, sHDP / gSLDA: {shdp.train_seconds / slda.train_seconds:.1f}x")

# %% [markdown]
# At full size (100 iterations) the sHDP's multiple average is level with gSLDA's (0.821 against
# 0.826) and its single final prediction is lower (0.773 against 0.814), for several times
# the training time (the last line; wall times on a shared machine): with nearly 200
# topics per chain one chain's last snapshot is noisy, and
# averaging over chains and snapshots recovers the accuracy. Here the sHDP does not beat a
# well-chosen $K$; what it offers is that nobody had to choose $K$.
#
# ## 7.4 What the committed studies say
#
# Three studies in `studies/` ran the sHDP longer (on a shared 2-core machine); their
# committed results, as written:
#
# **20news-binary** (`studies/shdp_20news_binary.py`, 4 chains x 200 iterations): with the
# multiple average, the sHDP reaches the project's 0.80 bar, logistic 0.817 and hinge 0.823,
# just below gSLDA 0.824 and Gibbs MedLDA 0.830 at $K = 20$, while using 214-264 topics per
# chain and 8 to 20 times their training time (one seed; the line after the tables gives
# every ratio: against its own parametric counterpart, gSLDA for the logistic and MedLDA for
# the hinge, each sHDP took more than ten times as long). On **poliblog** (the same
# script, `--data poliblog`, three seeds, the parametric models at every $K$ of 10-50) the
# logistic sHDP, 0.796, is 0.007 behind gSLDA at its best $K$ (0.803; one test post is 0.005)
# and ahead of MedLDA at every $K$; the hinge sHDP with 20news's $\ell = 164$ shrinks to a handful of
# label-pure topics and trails at 0.729.

# %%
RESULTS = REPO / "studies" / "results"
text20 = (RESULTS / "shdp_20news_binary.md").read_text()
display(Markdown(text20))
text = (RESULTS / "shdp_poliblog.md").read_text()
display(Markdown(text[text.index("| method"):text.index("Issue 10")]))
seconds = {row.split("|")[1].strip(): float(row.split("|")[6])       # the 20news table's train s
           for row in text20.splitlines() if row.startswith(("| shdp", "| gslda", "| medlda"))}
print("20news-binary training time ratios: " + "; ".join(
    f"{hdp_name} / {name} {seconds[hdp_name] / seconds[name]:.1f}x"
    for hdp_name in ("shdp-logistic", "shdp-hinge") for name in ("gslda", "medlda")))

# %% [markdown]
# **Movie-scale regression** (`studies/shdp_movie_scale.py`, the paper's Figure 2c protocol,
# folds 0 and 1 of 5, 2 chains x 200 iterations). Two settings matter more than the model
# here, and were chosen on a validation split of fold 0's training documents
# (`studies/results/shdp_movie_scale_diagnose.md`): the Gaussian noise variance, fixed at a
# quarter of the training responses' variance (the sHDP's default; drawn from a vague prior,
# it stays large for hundreds of iterations and the response barely steers the topics), and
# the epsilon-insensitive loss's $c$ (16; at MedLDA's 256 the sHDP fits the training ratings
# exactly and predicts nothing). With them the sHDP **comes close but falls short**:
# predictive $R^2$ 0.406 for the Gaussian sHDP against 0.447 for the best Gaussian sLDA
# ($K = 30$, same fixed variance; 0.342 at $K = 30$ with the variance drawn, 0.345 at its best
# $K$, 40) and 0.435 for MedLDA regression (its best $K$, 10), and 0.431 for the
# epsilon-insensitive sHDP against the project's target of 0.50. The right panel says why
# not to read too much into it yet: the number of occupied topics is still climbing at
# iteration 200 (the paper ran 2,000).
#
# MedLDA regression's 0.435 here is not notebook 6's 0.52 because the protocol differs: this
# study uses the sHDP paper's preprocessing (2,179 words chosen by TF-IDF, and the response
# $\log(\text{rating} + 0.05)$ instead of the rating), centres the responses, and runs
# 2 chains x 200 iterations on folds 0 and 1, while `benchmarks/regression_movie_scale.py`
# runs the default 5,000-word vocabulary on the raw ratings in [0, 1], 4 chains x 100
# iterations, over all 5 folds. Its $c = 256$ was tuned for the raw ratings in that
# benchmark and kept here untuned, although the log ratings have another scale.

# %%
text = (RESULTS / "shdp_movie_scale.md").read_text()
display(Markdown(text[:text.index("## Time")]))
display(Image(filename=str(RESULTS / "shdp_movie_scale.png"), width=900))

# %% [markdown]
# **Mixing** (`studies/shdp_mixing.py`, the paper's Figure 3: 300 movie-scale documents,
# 4 chains from deliberately over-dispersed starts, 2,000 iterations): the classic
# Gelman-Rubin shrink factors of $\lVert\eta\rVert$ and of the residual norm come down to
# about 1.04-1.05 for the sHDP by iteration 2,000 (1.045 / 1.115 / 1.043 and 1.232 / 1.048 /
# 1.046 at 500 / 1,000 / 2,000), while Gaussian sLDA with $K = 40$ stays at 1.14 and 1.33: the
# sHDP's chains meet and sLDA's stay apart, as in the paper. The cost: 2,149 s of training
# against 92 s, with about 350 occupied topics.

# %%
text = (RESULTS / "shdp_mixing.md").read_text()
display(Markdown(text[text.index("## Shrink"):text.index("![")]))
display(Image(filename=str(RESULTS / "shdp_mixing.png"), width=900))

# %% [markdown]
# ### What to take away
#
# * The sHDP replaces the choice of $K$ by two concentrations with priors; $\gamma$ is the
#   main dial of how many topics a corpus uses, and the sampler draws both.
# * Its sampler is exact for every response here (the paper used a Laplace approximation
#   or the MAP for the logistic coefficients), and the enumeration check shows it: a
#   plausible-looking wrong weight for new topics is caught at once.
# * Judge its runs by label-invariant monitors only, and expect many topics on real text:
#   hundreds on 20news-binary, with about gSLDA's accuracy at many times the cost. It mixes
#   better than sLDA in the Figure 3 study, but on movie-scale its predictive $R^2$ after 200
#   iterations is still below the best parametric model's.
