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
# # 6. Comparing models honestly: grids, held-out densities, and choosing c
#
# "Model A beats model B" is a claim about a noisy experiment. An honest comparison runs
# every model on the **same split**, with the **same budget** (chains, iterations, test
# sweeps), over **several seeds** and several $K$, reports the spread as well as the mean,
# puts the training time beside the metric, and tunes each model's constant ($c$) on the
# *training* data only. This notebook
#
# 1. runs a small grid live with `topiczoo.compare` (models x $K$ x seeds x data sets): its
#    table, the papers' metric-vs-$K$ and metric-vs-time plots, and its resumability;
# 2. compares the probabilistic models by their held-out log predictive density
#    (`topiczoo.compare.held_out_elpd`, ranked by `arviz.compare`), says why PSIS-LOO
#    (`arviz.loo`) is the wrong tool for held-out documents, and why the hinge models are
#    compared on the task metric only;
# 3. chooses $c$ by cross-validation with `topiczoo.estimators` and scikit-learn's
#    `GridSearchCV`;
# 4. reads the committed full-size comparisons on 20news-binary and movie-scale (minutes to
#    hours of computing each; cited, not rerun).
#
# Data: the live parts use the embedded BBC corpus (business vs politics; always available),
# so this notebook needs no `../shared/data`. At small size (`TOPICZOO_TUTORIAL_SIZE=small`,
# what CI runs) the grid and the search are tiny and their numbers mean little: read the
# full-size output.

# %%
import os
import csv
import shutil
import tempfile
from pathlib import Path

import arviz as az
import numpy as np
from IPython.display import Image, Markdown, display
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from topiczoo import load_dataset
from topiczoo.compare import Grid, compare, held_out_elpd
from topiczoo.estimators import GSLDAClassifier

SIZE = os.environ.get("TOPICZOO_TUTORIAL_SIZE", "full")
if SIZE not in ("full", "small"):
    raise ValueError(f"TOPICZOO_TUTORIAL_SIZE must be 'full' or 'small', got {SIZE!r}")
FULL = SIZE == "full"
GRID = Grid(data=["bbc"], models=["gslda", "medlda"],
            topics=[5, 10, 20] if FULL else [5, 10], seeds=[0, 1] if FULL else [0],
            options={"gslda": {"c": 16}, "medlda": {"c": 1.0, "ell": 164.0}},
            iterations=60 if FULL else 10, chains=2 if FULL else 1,
            snapshots=3, test_burnin=10 if FULL else 3, test_draws=5 if FULL else 2)
C_GRID = [1, 4, 16, 64] if FULL else [1, 16]
CV_DOCUMENTS = None if FULL else 200  # small size: the search sees 200 random training documents
REPO = Path.cwd().parent  # the notebooks run in tutorials/
RESULTS = REPO / "studies" / "results"
# The grid writes its cells, table and plots to a scratch folder, entered so that every path
# it prints is relative (no path of this machine reaches the outputs); removed at the end.
SCRATCH = Path(tempfile.mkdtemp(prefix="topiczoo-06-"))
os.chdir(SCRATCH)
OUT = Path("grid")
print(f"size: {SIZE}")

# %% [markdown]
# ## 6.1 A grid, run live
#
# A `Grid` names the axes (data sets, registry models, $K$ values, MCMC seeds), each
# model's options and the run settings every cell shares. Here: gSLDA with $c = 16$ (the
# value the cross-validation of section 6.3 picks on 20news-binary) against Gibbs MedLDA
# with the JMLR paper's $c = 1$, $\ell = 164$. The same grid from the command line is
# `topiczoo compare --data bbc --models gslda,medlda --topics 5,10,20 --seeds 0,1
# --option gslda:c=16 ...`, or `--config grid.toml`.
#
# Every cell is one `fit_and_predict` on the data set's fixed train/test split; the seed
# is the MCMC seed. A line per finished cell goes to stderr, with the time left:

# %%
print(GRID)
rows = compare(GRID, OUT)

# %% [markdown]
# `table.md` has one row per (data set, model, $K$): the task metric's mean and sd over
# the seeds, the training seconds and throughput (medians over seeds: the first seed of a
# model and $K$ in a process pays JAX's compilation), and the held-out log predictive
# density per test document for the model with a density of $y$:

# %%
display(Markdown((OUT / "table.md").read_text()))

# %% [markdown]
# The papers' two plots. **Metric vs $K$** (error bars: sd over seeds) answers "which
# model at which size"; **metric vs training time** answers "which model for a given
# budget", the fairer question when one model's sweep costs twice the other's. Read the
# error bars before the means: two points whose bars overlap are not shown to differ, and
# with two seeds an sd is itself a rough guess.

# %%
display(Image(filename=str(OUT / "metric_vs_topics.png"), width=520))
display(Image(filename=str(OUT / "metric_vs_time.png"), width=520))

# %% [markdown]
# At full size, read honestly, this grid ranks nothing: business vs politics is an easy
# task, every row lands between 97 % and 99 % accuracy, one of the 232 test documents is
# 0.43 points, and the differences between models and between $K$ are of the size of the
# seeds' sd. In the times, the first seed of each (model, $K$) pays the compilation (several
# times the second seed's seconds: see the progress lines); the table's median
# over seeds leaves it out from three seeds on, while with two seeds it is their mean.
# Compilation included, MedLDA's sweeps are still the cheaper (higher token-iterations per
# second). A grid that separates the models needs a harder task: 20news-binary, section 6.4.
#
# **Resumable.** Each finished cell is its own file in `grid/cells`, written atomically,
# so a grid killed halfway (a timeout, a laptop lid) loses at most the cell it was in.
# Rerunning the same grid skips what is done and says so; here everything is done, so it
# only rewrites the table. Change a setting (say the iterations) and the old cells are
# refused instead of silently mixed in:

# %%
print(sorted(p.name for p in (OUT / "cells").glob("*.json")))
again = compare(GRID, OUT)
assert again == rows
longer = Grid(**{**GRID.__dict__, "iterations": GRID.iterations + 1})
try:
    compare(longer, OUT)
except ValueError as refused:
    print("refused:", str(refused)[:160], "...")

# %% [markdown]
# ## 6.2 Held-out log predictive density, `arviz.compare`, and the hinge
#
# Accuracy throws away how *sure* a model was. For a model with a density of the response,
# the held-out log predictive density scores the whole predictive distribution: for each
# test document $d$ and each posterior sample $s$ (chain, snapshot, test draw),
# $\log p(y_d \mid s)$, and per document
# $\mathrm{elpd}_d = \log \frac1S \sum_s p(y_d \mid s)$; the table's `test lpd` is their
# mean over the test documents, higher is better. For gSLDA,
# $p(y_d = 1 \mid s) = \sigma(\omega_d^{(s)})$ (even when it was *trained* with $c \ne 1$:
# the density of $y$ is still the logistic one); for Gaussian sLDA it is
# $\mathcal N(y_d; \omega_d^{(s)}, s^2)$.
#
# `compare` stores the pointwise $\log p(y_d \mid s)$ as the `log_likelihood` group of an
# ArviZ tree per (data set, model, $K$) in `grid/trees`. `topiczoo.compare.held_out_elpd`
# turns a tree (or the array) into an `arviz_stats.ELPDData` of the $\mathrm{elpd}_d$
# (their sum `elpd`, its standard error `se`), which `arviz.compare` ranks; that is what
# `compare` writes to `grid/compare.md`. The last lines compute the first gap by hand, and
# what PSIS-LOO would have estimated on the same points (see below):

# %%
trees = {f"gslda K={k}": az.from_netcdf(OUT / "trees" / f"bbc__gslda__K{k}.nc")
         for k in GRID.topics}  # the grid's only model with a density of y
elpd = {name: held_out_elpd(tree) for name, tree in trees.items()}
for name, tree in trees.items():
    ll = tree["log_likelihood"]["y"].values                      # [chain, draw, document]
    print(f"{name}: log_likelihood {ll.shape} (chain, draw, document); held-out elpd "
          f"{elpd[name].elpd:.2f} (se {elpd[name].se:.2f}), per document "
          f"{elpd[name].elpd / ll.shape[-1]:.4f}")
print()
table = az.compare(elpd)
print(table.to_string())
best, second = table.index[:2]
diff = elpd[best].elpd_i.values - elpd[second].elpd_i.values       # paired: document by document
print(f"\nby hand, {best} minus {second}: elpd_diff {diff.sum():.2f}, "
      f"dse = sqrt(D var_d) = {np.sqrt(diff.size * diff.var()):.2f} over D = {diff.size} "
      f"documents; {best} is better on {np.mean(diff > 0):.0%} of them")
print("\nwhat PSIS-LOO targets on held-out points (raw importance weights 1/p(y_d|s)): "
      "the harmonic mean of p(y_d|s)")
for name, tree in trees.items():
    ll = tree["log_likelihood"]["y"].values.reshape(-1, diff.size)  # [samples, document]
    harmonic = -(np.logaddexp.reduce(-ll, axis=0) - np.log(ll.shape[0]))
    print(f"  {name}: sum over documents {harmonic.sum():.2f}, against the held-out elpd "
          f"{elpd[name].elpd:.2f}")

# %% [markdown]
# **Why this estimate, and not `arviz.loo`.** The test documents were never in the training
# posterior, so the posterior samples are already draws of exactly what predicts them:
# $\log \frac1S \sum_s p(y_d \mid s)$ is a direct Monte Carlo estimate of each document's
# log predictive density, with no importance sampling. PSIS-LOO (`arviz.loo`, and
# `arviz.compare` given the trees themselves, which runs it) answers another question: the
# density of a point *left out* of a posterior that contained it, estimated by reweighting
# every draw by $1/p(y_d \mid s)$ to remove that point. On a held-out point there is nothing
# to remove, and the reweighting turns the estimate into the harmonic mean of
# $p(y_d \mid s)$ (Pareto smoothing only tempers the largest weights): biased low, since a
# harmonic mean never exceeds the arithmetic one (the last lines show by how much), with
# high Pareto $\hat k$, and it can rank models otherwise than their held-out density does
# (here it puts $K = 10$ a hair ahead of $K = 5$, the reverse of the direct estimate). Do
# not run it on held-out trees.
#
# **Reading the table.** `elpd` is the sum of the $\mathrm{elpd}_d$ over the test documents,
# `se` its standard error. `elpd_diff` and `dse` are **paired**: both models predicted the
# same documents, so the difference is taken document by document and `dse` comes from the
# spread of those differences ($\sqrt{D\,\mathrm{var}_d}$, as computed by hand above), not
# from the two `se`s: what makes a document hard for one model makes it hard for the other,
# and that cancels. A gap of a few `dse` is a ranking; a gap within one or two `dse` is not
# (`p_worse` puts a probability on it, and `diag_diff` flags any gap below 4, too small to
# call whatever its `dse`). On this grid every gap is within about one `dse`: on 232 easy
# documents the held-out density does not separate the three $K$ (nor does accuracy).
# `weight` is the stacking weight of each model in the best mixture of their predictive
# densities; `p` (an in-sample estimate's effective number of parameters) has no meaning
# for a held-out estimate and is NaN. Note that `arviz.compare` rounds `elpd_diff` and
# `dse` to the precision the `dse` allows; the line computed by hand gives two decimals.
#
# A tree holds every seed's chains one after another (4 = 2 seeds x 2 chains), so its
# pooled per-document density, the log of the mean over all samples, is a little above the
# table's mean of the per-seed values (compare the "per document" values above with the
# table's `test lpd`): pooling the seeds is itself model averaging.
#
# **Why no density for MedLDA.** Gibbs MedLDA's hinge "likelihood"
# $\exp(-2c\max(0, \ell - y\,\omega))$ does not integrate to one over $y$: it is a
# *pseudo*-likelihood, a loss in the exponent, and its "log density" has no common scale
# with a real one (multiply $c$ by 10 and it moves tenfold). The same holds for the
# $\epsilon$-insensitive loss of MedLDA regression, and LDA + SVM has no likelihood of $y$
# at all. So `compare` gives those models no `test lpd` (the table says why) and no tree:
# compare them with the probabilistic ones on the task metric only, as section 6.1 does.

# %% [markdown]
# ## 6.3 Choosing c by cross-validation
#
# $c$ weighs the labels against the words, and its best value depends on the corpus and
# $K$: comparing gSLDA at $c = 1$ with a tuned competitor is not a fair fight. Choose it
# the way the papers did, by cross-validation **on the training set only** (the test set
# decides nothing). `topiczoo.estimators` wraps every supervised model as a scikit-learn
# estimator (fit / predict / predict_proba / score / transform, get_params / set_params),
# so scikit-learn's `GridSearchCV` works as it is, on a document-term matrix (or a list of
# texts):

# %%
bbc = load_dataset("bbc", seed=0)
train = bbc.train if CV_DOCUMENTS is None else bbc.train.subset(
    np.sort(np.random.default_rng(0).permutation(bbc.train.num_docs)[:CV_DOCUMENTS]))
X_train, y_train = train.document_term_matrix(), np.asarray(train.labels)
X_test, y_test = bbc.test.document_term_matrix(), np.asarray(bbc.test.labels)
estimator = GSLDAClassifier(10, num_chains=1, num_iterations=40 if FULL else 10,
                            num_snapshots=2, test_burnin=10 if FULL else 3,
                            test_draws=5 if FULL else 2, random_state=0)
search = GridSearchCV(estimator, {"c": C_GRID}, scoring="accuracy",
                      cv=StratifiedKFold(2, shuffle=True, random_state=0))
search.fit(X_train, y_train)
res = search.cv_results_
print(f"{'c':>4} {'CV accuracy':>12} {'sd':>7} {'fit s':>6}")
for c, mean, sd, seconds in zip(res["param_c"], res["mean_test_score"], res["std_test_score"],
                                res["mean_fit_time"]):
    print(f"{c:>4} {mean:>12.4f} {sd:>7.4f} {seconds:>6.1f}")
print(f"best c = {search.best_params_['c']}; refitted on all {len(y_train)} training "
      f"documents: test accuracy {search.score(X_test, y_test):.4f}")
means, sds = np.asarray(res["mean_test_score"]), np.asarray(res["std_test_score"])
top, low = int(np.argmax(means)), int(np.argmin(means))
print(f"the CV scores span {100 * (means[top] - means[low]):.1f} points (c = {res['param_c'][low]} "
      f"lowest, c = {res['param_c'][top]} highest); folds' sd {sds.min():.4f} to {sds.max():.4f}; "
      f"{int(np.sum(means[top] - means <= 2 * np.maximum(sds, sds[top])))} of {len(means)} c "
      f"values within two folds' sd of the best")

# %% [markdown]
# On BBC the search mostly shows how flat the curve is: business vs politics is easy at
# every $c$, the CV scores lie within a few points of each other (the last line gives the
# span and how many $c$ values are within two folds' sd of the best), and they need not
# rise or fall steadily with $c$. With two folds, each sd is itself a rough guess. When the
# CV scores are that close, any of them will do; the choice matters on harder data
# (section 6.4).
#
# The same search without scikit-learn: `GSLDAClassifier(c="cv")` (its `c_` and
# `cv_results_` after `fit`), `topiczoo.estimators.choose_c(REGISTRY["gslda"], K, corpus)`,
# or `topiczoo fit --c cv` on the command line; the default grids are 1, 2, 4, ..., 64 for
# classifiers and powers of 4 up to 1024 for regression. Two cautions. A CV fit is short,
# so the search ranks the $c$ values under a short run's noise; a difference of one fold's
# sd is no difference. And the best CV score is optimistic, being the maximum of noisy
# estimates: the honest number is the refitted model's test score.
#
# ## 6.4 The committed comparisons: 20news-binary and movie-scale
#
# **20news-binary** (alt.atheism vs talk.religion.misc; 856 training, 569 test documents):
# `topiczoo compare --config studies/compare_20news_binary.toml`, gSLDA ($c = 25$), Gibbs
# MedLDA and LDA + SVM, $K \in \{10, 20, 50\}$, 3 seeds, 1 chain x 80 iterations each. It
# was interrupted after 19 of its 27 cells and resumed (the rerun skipped the 19). The
# committed table and plots:

# %%
grid20 = RESULTS / "compare_20news_binary"
display(Markdown((grid20 / "table.md").read_text()))
display(Image(filename=str(grid20 / "metric_vs_topics.png"), width=520))
display(Image(filename=str(grid20 / "metric_vs_time.png"), width=520))
print((grid20 / "compare.md").read_text())
table20 = {(r["model"], int(r["topics"])): r for r in csv.DictReader(open(grid20 / "table.csv"))
           if r["topics"]}  # the word baseline's row has no K
for k in sorted({k for _, k in table20}):
    g, m, b = (table20[(name, k)] for name in ("gslda", "medlda", "lda-svm"))
    gap = lambda a, z: (float(a["mean"]) - float(z["mean"])) / max(float(a["sd"]), float(z["sd"]))
    print(f"K={k}: medlda - gslda {100 * (float(m['mean']) - float(g['mean'])):+.1f} points "
          f"({gap(m, g):+.1f} x the larger sd); supervised - lda-svm "
          f"{100 * (min(float(g['mean']), float(m['mean'])) - float(b['mean'])):+.1f} points or more "
          f"({min(gap(g, b), gap(m, b)):+.1f} x the larger sd or more); train s gslda / medlda "
          f"{float(g['train_seconds']) / float(m['train_seconds']):.1f}")

# %% [markdown]
# The last lines put the table's gaps in units of the seeds' sd (the larger of the two
# rows'). Both supervised models beat the two-step LDA + SVM by several points at every $K$,
# three times the sd or more: a ranking. Between MedLDA and gSLDA the gaps are smaller;
# MedLDA is ahead at every $K$ of this run, by more than two sd at $K = 10$ and 20 but by a
# fraction of one at $K = 50$, and with three seeds an sd is itself rough: a lead at small
# $K$, not a ranking. The training times of the two are close on this run (the
# metric-vs-time plot), LDA + SVM's shorter. Among the gSLDA runs,
# `compare.md` ranks by the held-out elpd of section 6.2, over the three seeds' pooled
# samples: $K = 50$ first, but its lead over the others is within two `dse`, so the
# held-out density does not separate the three $K$ either.
#
# **Choosing c on 20news-binary**: `studies/gridsearch_gslda_20news_binary.py`, the
# `GridSearchCV` of section 6.3 at $K = 20$ on the real training set:

# %%
print((RESULTS / "gridsearch_gslda_20news_binary.md").read_text())

# %% [markdown]
# $c = 16$ wins the cross-validation clearly over $c = 1$ (0.88 against 0.78), with
# $c = 64$ about two folds' sd below it: the papers' "gSLDA+" ($c = 25$) sits on that
# plateau. The refitted model's test accuracy (0.81) is well below its CV score (0.88),
# and in line with the grid's gSLDA rows above: the best of four noisy CV scores is
# optimistic, and the published test split is not drawn like the training folds. The test
# score is the number to report.
#
# **movie-scale** (5,006 movie reviews, rating in [0, 1]; predictive $R^2$):
# `benchmarks/regression_movie_scale.py`, 5-fold cross-validation, 4 chains x 100
# iterations, MedLDA regression at $c = 256$ against Gaussian sLDA and tomotopy's sLDA. The
# summary as committed, then the benchmark's tuning run (on fold 0's training part only):
# MedLDA's $c$ grid and Gaussian sLDA's two settings, on the raw ratings the benchmark uses:

# %%
movie = (REPO / "benchmarks" / "results" / "regression_movie_scale.txt").read_text()
print(movie[movie.index("  K | method"):movie.index("total")])
tuning = (REPO / "benchmarks" / "results" / "regression_movie_scale.tuning.txt").read_text()
print(tuning[tuning.index("tuning on fold 0"):].splitlines()[0])
print("\n".join(line for line in tuning.splitlines()  # raw ratings (center=False), as used
                if ("medlda    c=" in line or "slda      nu2=" in line) and "center=False" in line))

# %% [markdown]
# On ratings the choice of $c$ is most of the story. On the tuning split, MedLDA
# regression's validation $R^2$ rises from 0.30 at $c = 4$ (about Gaussian sLDA's 0.28) to a
# plateau of 0.51-0.52 for $c$ from 64 to 1024. The highest score is $c = 1024$'s (0.5211
# against 0.5175 at $c = 256$), but a difference that small on one validation split is
# noise: the benchmark's $c = 256$ was chosen **by hand**, as the middle of the plateau (the
# comment above `DEFAULTS` in `benchmarks/regression_movie_scale.py`), not by taking the
# tuning's best. In the 5-fold benchmark at $c = 256$ MedLDA regression is 0.14 above
# Gaussian sLDA (0.52 against 0.38 at $K = 30$, pooled over the folds, fold sd 0.02-0.03);
# run at an untuned $c$ (such as 4, level with sLDA on the tuning split), the benchmark
# could have ranked the two the other way: comparing a tuned model with an untuned one
# decides nothing. The README's "Choosing c" section runs the same
# search from the command line (`topiczoo fit --model medlda-regression --c cv --data
# movie-scale --topics 30`).
#
# ### A checklist
#
# * Same split, same budget, several seeds; report mean *and* sd, and the training time.
# * Tune each model's $c$ (and $\ell$) by cross-validation on the training set; never on
#   the test set.
# * Probabilistic responses (gSLDA, Gaussian sLDA): add the held-out log predictive
#   density, and rank with `arviz.compare` over `held_out_elpd` (paired over the same test
#   documents: read `elpd_diff` against `dse`); never PSIS-LOO (`arviz.loo`) on held-out
#   documents. Hinge and $\epsilon$-insensitive losses and LDA + SVM: the task metric only.
# * Long grids: `topiczoo compare` with an output folder; rerun the same command after any
#   interruption.

# %%
os.chdir(REPO / "tutorials")
shutil.rmtree(SCRATCH)
