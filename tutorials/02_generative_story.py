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
# # 2. The generative story: declarations, prior draws, and what c and ℓ do
#
# Every model in topiczoo is first *declared*: a numpyro function that states how documents,
# topics and labels come about. The Gibbs samplers (notebook 3) are then derived from that
# statement, and the tests check the samplers against it. This notebook reads the
# declarations, draws from them (the prior predictive distribution), and looks at the one
# place where the supervised models stop being ordinary probability models: the
# **pseudo-likelihood** of the label, with its regularisation constant $c$ and, for Gibbs
# MedLDA, its margin $\ell$.
#
# Papers (in `../shared/papers/`): Zhu, Zheng & Zhang, *Improved Bayesian logistic
# supervised topic models with data augmentation* (ACL 2013; gSLDA,
# `gslda_logistic_polya_gamma.txt`: the logistic model, eqs. 1-5, and its pseudo-likelihood
# and posterior, eqs. 6-7 and the display after them) and Zhu, Chen, Perkins & Zhang,
# *Gibbs max-margin topic models with data augmentation* (JMLR 2014, `gibbs_medlda_jmlr.txt`:
# the unnormalised likelihood $\phi(y_d \mid z_d, \eta)$ of section 4.2, problem (10) and the
# normalised posterior displayed after it).
#
# Everything below runs in a few seconds; `TOPICZOO_TUTORIAL_SIZE=small` only draws fewer
# prior samples and uses coarser grids.

# %%
import inspect
import os
from functools import partial

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import numpyro
from numpyro.infer import Predictive

from topiczoo import gslda, lda, medlda, medlda_regression, slda_gaussian
from topiczoo.models import lda_declaration, supervised_lda_declaration

SIZE = os.environ.get("TOPICZOO_TUTORIAL_SIZE", "full")
if SIZE not in ("full", "small"):
    raise ValueError(f"TOPICZOO_TUTORIAL_SIZE must be 'full' or 'small', got {SIZE!r}")
FULL = SIZE == "full"
NUM_PRIOR_DRAWS = 200 if FULL else 40  # prior predictive draws
GRID = 301 if FULL else 81              # points per axis of the eta grids
print(f"size: {SIZE}")

# %% [markdown]
# ## 2.1 LDA, the part every model shares
#
# Latent Dirichlet allocation with $K$ topics over a vocabulary of $V$ words:
#
# $$
# \phi_k \sim \mathrm{Dir}(\beta \mathbf 1_V),\quad
# \theta_d \sim \mathrm{Dir}(\tfrac{\alpha}{K} \mathbf 1_K),\quad
# z_{dn} \mid \theta_d \sim \mathrm{Cat}(\theta_d),\quad
# w_{dn} \mid z_{dn}, \Phi \sim \mathrm{Cat}(\phi_{z_{dn}}).
# $$
#
# $\alpha$ is the papers' *total* concentration (each topic gets $\alpha/K$; the papers'
# experiments use $\alpha = 1$), $\beta$ the per-word concentration of a topic. Here is the
# declaration exactly as the package runs it (`topiczoo.models.lda_declaration`):

# %%
print(inspect.getsource(lda_declaration))

# %% [markdown]
# Supervised LDA adds, per task $t$, a weight vector $\eta_t \sim \mathcal N(0, \nu^2 I_K)$
# and a *score* $\omega_{td} = \eta_t^\top \bar z_d$, where $\bar z_d$ is the empirical topic
# distribution of document $d$ (its topic counts divided by its length $N_d$): the label
# depends on the topics that were actually *used* in the document, not on $\theta_d$. The
# response then links $y_{td}$ to $\omega_{td}$:

# %%
print(inspect.getsource(supervised_lda_declaration))

# %% [markdown]
# `response.declare(omega, y)` is where the models differ. Tracing a declaration lists its
# random variables (sites) and their shapes. A small synthetic layout: $D = 6$ documents of
# 8 tokens, $V = 12$, $K = 3$.

# %%
D, LENGTH, V, K = 6, 8, 12, 3
doc_ids = jnp.repeat(jnp.arange(D), LENGTH)


def sites(model, y=None):
    """(name, kind, distribution, shape) of every site of one run of the declaration."""
    decl = partial(model.declaration, doc_ids=doc_ids, num_docs=D, num_topics=K,
                   vocab_size=V, alpha=model.alpha_per_topic, beta=model.beta)
    if model.response is not None:
        decl = partial(decl, nu2=model.nu2, num_tasks=1, y=y)
    rows = []

    def run():  # traced abstractly by jax.eval_shape: shapes only, nothing is computed
        trace = numpyro.handlers.trace(numpyro.handlers.seed(decl, 0)).get_trace()
        for name, site in trace.items():
            if site["type"] == "sample":
                kind = "observed" if site["is_observed"] else "latent"
                fn = site["fn"]
                what = type(getattr(fn, "base_dist", fn)).__name__  # unwrap plate expansion
                if what == "Unit":  # numpyro.factor is a sample site of a Unit distribution
                    kind, what = "factor", "log weight"
                rows.append((name, kind, what, tuple(site["value"].shape)))

    jax.eval_shape(run)
    return rows


for model in (lda(K), gslda(K, c=1.0)):
    print(f"--- {model.name} (c = {getattr(model.response, 'c', '-')})")
    for row in sites(model):
        print("  {:<22} {:<9} {:<12} {}".format(*row))

# %% [markdown]
# With $c = 1$ the logistic response is an ordinary Bernoulli likelihood,
# $y_d \sim \mathrm{Bernoulli}(\sigma(\omega_d))$: the model is generative end to end, and
# we can draw whole labelled corpora from it. That is what the **prior predictive
# distribution** is.
#
# ## 2.2 Prior predictive draws
#
# `numpyro.infer.Predictive` runs the declaration forward with nothing observed. Below:
# 100 documents of 40 tokens, $V = 200$, $K = 5$, logistic sLDA with $c = 1$, at the
# papers' $\alpha = 1$, $\beta = 0.01$, $\nu^2 = 1$, and two other settings of each.

# %%
D, LENGTH, V, K = 100, 40, 200, 5
doc_ids = jnp.repeat(jnp.arange(D), LENGTH)


def prior_draws(model, seed=0):
    """NUM_PRIOR_DRAWS prior predictive draws of every site of LDA or c = 1 logistic sLDA."""
    return {name: np.asarray(value) for name, value in _prior_draws(
        model.response, jax.random.PRNGKey(seed), model.alpha_per_topic, model.beta,
        model.nu2).items()}


@partial(jax.jit, static_argnums=0)  # compiled once per response; hyperparameters traced
def _prior_draws(response, key, alpha, beta, nu2):
    if response is None:
        declaration = partial(lda_declaration, doc_ids, D, K, V, alpha, beta)
    else:
        declaration = partial(supervised_lda_declaration, doc_ids, D, K, V, alpha, beta, nu2,
                              response)
    return Predictive(declaration, num_samples=NUM_PRIOR_DRAWS, parallel=True)(key)


draws = prior_draws(gslda(K, c=1.0))
print({name: value.shape for name, value in draws.items()})

# %% [markdown]
# **What $\alpha$ and $\beta$ mean.** The left panel shows how concentrated a document is on
# its main topic ($\max_k \theta_{dk}$) for three totals $\alpha$; the right panel how many
# words carry 90 % of a topic's mass, for three $\beta$. With the papers' $\alpha = 1$
# ($0.2$ per topic at $K = 5$) most documents are dominated by one or two topics; with
# $\beta = 0.01$ a topic puts nearly all its mass on a handful of words. What to look at:
# on the left, where each curve's mass sits (near 1: one topic per document); on the right,
# how far left each $\beta$'s curve sits (few words per topic).

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for alpha in (1.0, 5.0, 50.0):
    theta = prior_draws(lda(K, alpha=alpha))["theta"]
    axes[0].hist(theta.max(-1).ravel(), bins=40, range=(0.2, 1), density=True,
                 histtype="step", linewidth=1.6, label=f"alpha = {alpha:g} ({alpha / K:g} per topic)")
axes[0].set_xlabel(r"$\max_k \theta_{dk}$ (share of the main topic)")
axes[0].set_ylabel("density")
axes[0].legend(fontsize="small")
for beta in (0.01, 0.1, 1.0):
    phi = prior_draws(lda(K, beta=beta))["phi"]
    sorted_mass = np.sort(phi, axis=-1)[..., ::-1].cumsum(-1)
    words_90 = (sorted_mass < 0.9).sum(-1) + 1
    axes[1].hist(words_90.ravel(), bins=np.arange(0, V + 2, 4), density=True,
                 histtype="step", linewidth=1.6, label=f"beta = {beta:g}")
axes[1].set_xlabel(f"words holding 90 % of a topic's mass (V = {V})")
axes[1].set_ylabel("density")
axes[1].legend(fontsize="small")
fig.suptitle("LDA prior: documents (theta) and topics (phi)")
fig.tight_layout()

# %% [markdown]
# **The labels under the prior.** The score $\omega_d = \eta^\top \bar z_d$ is a convex
# combination of the entries of $\eta$, so $|\omega_d| \le \max_k |\eta_k|$. With
# $\nu^2 = 1$ the scores are mostly within $\pm 2$ and $P(y_d = 1) = \sigma(\omega_d)$
# mostly stays between 0.2 and 0.8: a priori, topics say little about labels, and the
# data have to do the work. A wide prior, $\nu^2 = 100$, makes labels almost deterministic
# functions of the topics.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
for nu2 in (1.0, 100.0):
    d = prior_draws(gslda(K, c=1.0, nu2=nu2), seed=1)
    eta, z = d["eta"][:, 0], d["z"]                          # [S, K], [S, N]
    zbar = np.stack([np.bincount(np.asarray(doc_ids) * K + zz, minlength=D * K).reshape(D, K)
                     for zz in z]) / LENGTH                   # [S, D, K]
    omega = np.einsum("sk,sdk->sd", eta, zbar)
    p1 = 1 / (1 + np.exp(-omega))
    axes[0].hist(omega.ravel(), bins=80, density=True, histtype="step", linewidth=1.6,
                 label=f"nu2 = {nu2:g}")
    axes[1].hist(p1.ravel(), bins=50, range=(0, 1), density=True, histtype="step",
                 linewidth=1.6, label=f"nu2 = {nu2:g}")
    # the drawn y agrees with the drawn scores: a check that the declaration is what it says
    print(f"nu2 = {nu2:>5g}: mean P(y=1) {p1.mean():.3f}, share of y = 1 drawn "
          f"{d['y'].mean():.3f}; |omega| <= max|eta| in every draw: "
          f"{bool(np.all(np.abs(omega) <= np.abs(eta).max(-1, keepdims=True) + 1e-6))}")
axes[0].set_xlabel(r"score $\omega_d = \eta^\top \bar z_d$")
axes[0].set_xlim(-30, 30)
axes[1].set_xlabel(r"$P(y_d = 1) = \sigma(\omega_d)$")
for ax in axes:
    ax.set_ylabel("density")
    ax.legend(fontsize="small")
fig.suptitle("Prior predictive of the labels (logistic sLDA, c = 1)")
fig.tight_layout()

# %% [markdown]
# ## 2.3 Pseudo-likelihoods: when the declaration is not a generative model
#
# gSLDA with $c \neq 1$ and Gibbs MedLDA replace the label's likelihood by a
# *pseudo-likelihood* $\psi(y_d \mid \omega_d)$: a non-negative function of the label and
# the score that is **not** a distribution over $y$. The posterior of *regularised Bayesian
# inference* (gSLDA: the solution of problem (7), displayed after it; JMLR: the solution of
# problem (10), displayed after it, with the hinge's $\phi$ defined just before) is
#
# $$
# q(\eta, Z) \;\propto\; p_0(\eta)\, p(W, Z \mid \alpha, \beta)\,
#   \prod_d \psi(y_d \mid \omega_d),
# $$
#
# with
#
# * **logistic, gSLDA**, $y_d \in \{0, 1\}$:
#   $\psi = \dfrac{(e^{\omega_d})^{c\, y_d}}{(1 + e^{\omega_d})^{c}}$: the likelihood raised
#   to the power $c$, as if each label were seen $c$ times;
# * **hinge, Gibbs MedLDA**, $y_d \in \{-1, +1\}$:
#   $\psi = \exp\!\big(-2c \max(0,\, \ell - y_d \omega_d)\big)$: nothing is lost while the
#   document is on the right side with margin at least $\ell$; below it the log weight
#   falls linearly with slope $2c$;
# * **$\epsilon$-insensitive, MedLDA regression**: $\psi = \exp(-2c \max(0, |y_d - \omega_d| - \epsilon))$.
#
# In the declaration such a term is a `numpyro.factor` (a log weight), and the label
# cannot be drawn from it:

# %%
for model in (gslda(K, c=25), medlda(K, c=1.0, ell=164.0)):
    print(f"--- {model.name}, {model.describe()}")
    for row in sites(model, y=jnp.ones((1, D))):
        print("  {:<22} {:<9} {:<12} {}".format(*row))
    try:
        sites(model, y=None)
    except ValueError as error:
        print("  drawing y instead:", error)

# %% [markdown]
# ### The log pseudo-likelihood of one document
#
# Plotted against the signed score $y\,\omega$ (the margin of the document), through each
# response's own `log_pseudo_likelihood` (the function the enumeration tests integrate and
# the monitors report as the training loss):
#
# * $c$ multiplies the whole curve: a larger $c$ makes every training label count more
#   against the prior $\mathcal N(0, \nu^2 I)$ of $\eta$;
# * the logistic curve is smooth and never flat: every document pulls, less and less as
#   its margin grows;
# * the hinge is exactly flat beyond $y\omega = \ell$: documents classified with margin
#   at least $\ell$ exert no pull at all (the "support vectors" are those with
#   $y\omega < \ell$), and $\ell$ sets the *scale* the scores must reach.

# %%
margin = np.linspace(-8, 12, 801)
fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
for c in (1, 4, 25):
    response = gslda(2, c=c).response
    y = response.encode(np.ones(1))               # label 1, coded as the response wants it
    axes[0].plot(margin, np.asarray(response.log_pseudo_likelihood(y, margin[None])[0]),
                 label=f"c = {c}")
axes[0].set_title("logistic (gSLDA): c log sigmoid(omega)")
for c, ell in ((1, 1), (1, 4), (4, 1), (1, 8)):
    response = medlda(2, c=c, ell=ell).response
    y = response.encode(np.ones(1))               # label 1 -> y = +1
    axes[1].plot(margin, np.asarray(response.log_pseudo_likelihood(y, margin[None])[0]),
                 label=f"c = {c}, ell = {ell}")
axes[1].set_title("hinge (Gibbs MedLDA): -2c max(0, ell - y omega)")
residual = np.linspace(-3, 3, 601)
for c, eps in ((1, 0.001), (1, 0.5), (4, 0.5)):
    response = medlda_regression(2, c=c, eps=eps).response
    axes[2].plot(residual, np.asarray(response.log_pseudo_likelihood(
        np.zeros((1, 1)), residual[None])[0]), label=f"eps-insensitive c = {c}, eps = {eps}")
gaussian = slda_gaussian(2, s2=1.0).response
axes[2].plot(residual, np.asarray(gaussian.log_pseudo_likelihood(np.zeros((1, 1)),
                                                                 residual[None])[0]),
             "k--", label="Gaussian sLDA, s2 = 1")
axes[2].set_title("regression: log psi against omega - y")
axes[0].set_xlabel("y omega (logistic: omega, label 1)")
axes[1].set_xlabel("y omega")
axes[2].set_xlabel("omega - y")
for ax in axes:
    ax.set_ylabel("log pseudo-likelihood")
    ax.set_ylim(-25, 2)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
fig.tight_layout()

# %% [markdown]
# ### What $c$ and $\ell$ do to the posterior of $\eta$
#
# Fix the topics and look at $\eta$ alone: $K = 2$, 40 documents whose topic proportions
# $\bar z_d = (s_d, 1 - s_d)$ are given, labelled 1 when $s_d > 0.5$ except for 4 flipped
# labels. The posterior of $\eta$ given these $\bar z$ is
# $p_0(\eta) \prod_d \psi(y_d \mid \eta^\top \bar z_d)$, computed on a grid (this 2-D
# quadrature is also how notebook 3 and `tests/exact.py` get exact posteriors).
#
# Larger $c$ concentrates the posterior (the labels count $c$ times against the prior);
# a larger margin $\ell$ pushes $\eta$ outwards until most documents clear the margin, so
# $\lVert\eta\rVert$ grows with $\ell$ whatever the prior says. That is why the default
# Gibbs MedLDA run of notebook 1 ($\ell = 164$, $\nu^2 = 1$) ends with
# $\lVert\eta\rVert \approx 250$: with $\ell$ that large the pseudo-likelihood, not the
# prior, sets the scale of $\eta$.

# %%
rng = np.random.default_rng(0)
share = rng.uniform(0, 1, 40)
zbar = np.stack([share, 1 - share], axis=1)                  # [D, 2]
labels = (share > 0.5).astype(np.float32)
flipped = rng.choice(40, 4, replace=False)
labels[flipped] = 1 - labels[flipped]


def eta_posterior(model, half_width):
    """Normalised posterior of eta on a GRID x GRID grid over [-half_width, half_width]^2."""
    response = model.response
    axis = np.linspace(-half_width, half_width, GRID)
    e1, e2 = np.meshgrid(axis, axis, indexing="ij")
    eta = np.stack([e1.ravel(), e2.ravel()], 1)              # [G, 2]
    omega = eta @ zbar.T                                     # [G, D]
    y = response.encode(labels)                              # [1, D]
    log_post = (-0.5 * (eta ** 2).sum(1) / model.nu2
                + np.asarray(response.log_pseudo_likelihood(y, omega)).sum(1))
    post = np.exp(log_post - log_post.max())
    post /= post.sum()
    return axis, post.reshape(GRID, GRID), eta


settings = [(gslda(2, c=1), 6), (gslda(2, c=25), 6),
            (medlda(2, c=1, ell=1), 12), (medlda(2, c=1, ell=10), 60)]
fig, axes = plt.subplots(1, 4, figsize=(15, 3.9))
print(f"{'model':<28} {'E[eta_1]':>9} {'E[eta_2]':>9} {'E||eta||':>9} {'sd(eta_1)':>10}")
for ax, (model, half_width) in zip(axes, settings):
    axis, post, eta = eta_posterior(model, half_width)
    mean = post.ravel() @ eta
    sd = np.sqrt(post.ravel() @ (eta[:, 0] - mean[0]) ** 2)
    norm = post.ravel() @ np.linalg.norm(eta, axis=1)
    facts = model.describe()
    name = f"{model.name} c={facts['c']:g}" + (f" ell={facts['ell']:g}" if "ell" in facts else "")
    print(f"{name:<28} {mean[0]:>9.2f} {mean[1]:>9.2f} {norm:>9.2f} {sd:>10.2f}")
    ax.contourf(axis, axis, post.T, levels=12, cmap="Blues")
    ax.set_title(name)
    ax.set_xlabel(r"$\eta_1$")
    ax.set_ylabel(r"$\eta_2$")
    ax.axhline(0, color="0.6", linewidth=0.6)
    ax.axvline(0, color="0.6", linewidth=0.6)
fig.suptitle(r"Posterior of $\eta$ given fixed topic proportions (prior $\nu^2 = 1$)")
fig.tight_layout()

# %% [markdown]
# Read the table with the plots: at $c = 1$ the logistic posterior is broad (sd of
# $\eta_1$ about half the prior's 1); at $c = 25$ it is three times tighter and shifted
# outwards. The hinge at $\ell = 1$ already
# separates more sharply than the logistic at $c = 1$, and at $\ell = 10$ the whole
# posterior moves out about five-fold ($\mathrm{E}\lVert\eta\rVert$ from 3 to 16): the
# classifier's scale follows $\ell$.
# In practice $c$ (and $\ell$) are chosen by held-out accuracy, as the papers did
# (notebook 4); they are not learned from the data by the posterior.
#
# ## 2.4 Where to go from here
#
# * **Notebook 3** derives the exact Gibbs sampler from these declarations: the collapsed
#   conditional of a token's topic, and the Polya-Gamma and inverse-Gaussian augmentations
#   that turn every pseudo-likelihood above into a Gaussian factor in $\omega_d$.
# * The supervised HDP (`topiczoo.models.shdp.shdp_declaration`) tells the same story with
#   a stick-breaking prior over infinitely many topics in place of $\mathrm{Dir}(\alpha/K)$.
