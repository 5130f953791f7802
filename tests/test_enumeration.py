"""Enumeration tests (``docs/design.md``, "How a kernel is proved exact").

A long run of the full Gibbs kernel (Z, augmentation and eta blocks) on a corpus of 7 tokens
with K = 2 must reproduce the exact posterior of Z over all 2^7 configurations, computed by
``exact``: an oracle that imports nothing from the package and writes the papers' original
pseudo-likelihoods and Dirichlet parameters itself. Distributions are compared up to relabelling
of the topics (see ``exact.total_variation``).

Power. A test whose model could be swapped for a plausible wrong one without the chain
noticing proves nothing. So each problem below comes with its near misses: the exact posteriors
of the models a plausible bug samples instead (labels ignored, nu2 halved, c replaced by 1, eps
set to 0, ell halved, s2 halved or its shape wrong, beta or alpha wrong, the first task alone,
psi's label term without c). ``test_near_misses_are_far`` asserts, exactly and without
sampling, that each lies at least POWER x TV_BOUND from the right posterior; a chain targeting a
near miss is then at least (POWER - 1) x TV_BOUND from it, so ``test_sampler_matches_enumeration``
fails. The corpora and hyperparameters (nu2 != 1, c != 1, eps = 1, single-token documents whose
labels pull hard, a second task that disagrees with the first) were searched for that. Bugs whose
chain has no exact target (a conditional inconsistent with the others, such as one task's
augmentation used by every task) are run as wrong kernels and must miss the bound by 2x.

A new response or Z sampler lands with its problem in ``PROBLEMS`` (and its near misses in
``near_misses``); ``test_every_response_and_block_has_a_powered_enumeration_problem`` fails
until it does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from chains import sample_assignments, tiny_data
from exact import (Problem, brute_force_posterior, configuration_frequencies, exact_posterior,
                   total_variation)
from mutants import mutant
from topiczoo.models.responses import RESPONSES, EpsilonInsensitive, Hinge, Logistic
from topiczoo.models.parametric import TopicModel
from topiczoo.models import (Task, gslda, gslda_multitask, lda, medlda, medlda_regression,
                             slda_gaussian)

pytestmark = pytest.mark.slow  # statistical: long chains against enumeration

# 64 vectorized chains x 1,600 draws = 102,400 draws after 1,000 warm-up iterations each: one
# compiled step serves all chains, so this costs a fifteenth of 4 chains x 25,000. (200 warm-up
# iterations left the eps-insensitive chains biased: TV 0.028-0.030; 1,000: 0.018, as 4 long
# chains give.)
NUM_CHAINS, NUM_SAMPLES, NUM_WARMUP = 64, 1_600, 1_000
TV_BOUND = 0.03  # the Monte Carlo TV at this length is about 0.005-0.02 (measured)
POWER = 3  # every near miss lies at least POWER x TV_BOUND from the exact posterior

# Each problem: a tiny corpus (word-id lists), its labels and hyperparameters, all plain numbers
# read by the oracle and by ``model_of`` alike.
PROBLEMS = {
    "lda": Problem(((0, 1, 0), (1, 2), (2, 0)), 3, alpha=1.0, beta=0.5),
    "logistic-c1": Problem(((1,), (0,), (0,), (1, 1, 1), (1,)), 2, alpha=2.0, beta=0.5,
                           response="logistic", labels=(0, 0, 1, 1, 0), c=1.0, nu2=25.0),
    "logistic-c3": Problem(((1,), (1, 1, 0), (0,), (1, 1)), 2, alpha=1.0, beta=0.5,
                           response="logistic", labels=(0, 1, 0, 1), c=3.0, nu2=2.0),
    "hinge-c3-ell1": Problem(((0, 1), (0,), (2,), (1,), (1, 2)), 3, alpha=1.0, beta=0.5,
                             response="hinge", labels=(1, 0, 1, 0, 1), c=3.0, ell=1.0, nu2=4.0),
    "eps-insensitive-c3": Problem(((1, 2), (0,), (0, 1, 1, 0)), 3, alpha=1.0, beta=0.5,
                                  response="eps", labels=(-1.8, 2.3, -1.6), c=3.0, eps=1.0,
                                  nu2=9.0),
    "gaussian-fixed-s2": Problem(((1, 1), (0, 0, 1), (0,), (1,)), 2, alpha=1.0, beta=1.0,
                                 response="gaussian", labels=(0.6, 2.7, 3.6, 1.5), s2=0.25,
                                 nu2=2.0),
    "gaussian-learned-s2": Problem(((1,), (0,), (0, 2, 1, 2), (2,)), 3, alpha=1.0, beta=1.0,
                                   response="gaussian-s2", labels=(-0.3, 1.8, -3.3, 0.1),
                                   a0=2.0, b0=0.25, nu2=4.0),
    # two tasks with their own labels (multi-label): the second task disagrees with the first
    "hinge-two-tasks": Problem(((1,), (1, 0), (1,), (1, 0), (0,)), 2, alpha=2.0, beta=0.5,
                               response="hinge", labels=((1, 0, 0, 0, 0), (0, 0, 1, 0, 1)),
                               c=1.5, ell=1.0, nu2=2.0),
    "logistic-two-tasks": Problem(((0, 0), (1, 1), (1, 0), (0,)), 2, alpha=2.0, beta=1.0,
                                  response="logistic", labels=((1, 0, 1, 1), (1, 1, 1, 0)),
                                  c=5.0, nu2=9.0),
    # two classes: one-vs-all tasks that are complementary, so a shared augmentation barely
    # shows here; the two problems above carry that check
    "logistic-multiclass": Problem(((0,), (0, 1), (1, 1), (0,), (0,)), 3, alpha=1.0, beta=0.5,
                                   response="logistic", labels=(0, 1, 0, 1, 1), multiclass=2,
                                   c=2.0, nu2=2.0),
}


def model_of(problem: Problem):
    """The package's model of a problem (the only place the tests build one)."""
    common = dict(alpha=problem.alpha, beta=problem.beta)
    if problem.response is None:
        return lda(problem.num_topics, **common)
    common["nu2"] = problem.nu2
    k = problem.num_topics
    if problem.response == "logistic" and problem.multiclass:
        return gslda_multitask(k, problem.multiclass, c=problem.c, **common)
    if problem.response == "logistic":
        return gslda(k, c=problem.c, **common)
    if problem.response == "hinge":
        return medlda(k, c=problem.c, ell=problem.ell, **common)
    if problem.response == "eps":
        return medlda_regression(k, c=problem.c, eps=problem.eps, **common)
    if problem.response == "gaussian":
        return slda_gaussian(k, s2=problem.s2, learn_s2=False, **common)
    if problem.response == "gaussian-s2":
        return slda_gaussian(k, s2=1.0, learn_s2=True, a0=problem.a0, b0=problem.b0, **common)
    raise ValueError(problem.response)


def near_misses(problem: Problem) -> dict:
    """The models a plausible bug samples instead, each an exact posterior of its own."""
    if problem.response is None:
        return {"beta / 10": problem.with_(beta=problem.beta / 10),
                "alpha not divided by K": problem.with_(alpha=problem.alpha * problem.num_topics)}
    out = {"labels ignored": problem.with_(response=None, labels=None),
           "nu2 halved": problem.with_(nu2=problem.nu2 / 2)}
    if problem.response in ("logistic", "hinge", "eps") and problem.c != 1:
        out["c = 1"] = problem.with_(c=1.0)
    if problem.response in ("logistic", "hinge") and problem.c != 1:
        # psi's label term written without its factor c (LogisticWithoutC, HingeWithoutC; the
        # JMLR paper's printed eq. 13 lacks c on the whole linear term, another typo): the
        # augmentation's conditional is unchanged, so such a kernel samples exactly the right
        # model times exp((1 - c) y omega)
        out["psi's label term without c"] = problem.with_(tilt=1.0 - problem.c)
    if problem.multiclass:  # one-vs-all: the first class's task alone
        first = tuple(int(label == 0) for label in problem.labels)
        out["first task only"] = problem.with_(labels=first, multiclass=0)
    elif np.ndim(problem.labels) == 2:
        out["first task only"] = problem.with_(labels=problem.labels[0])
    if problem.response == "hinge":
        out["ell halved"] = problem.with_(ell=problem.ell / 2)
    if problem.response == "eps":
        out["eps = 0"] = problem.with_(eps=0.0)
    if problem.response == "gaussian":
        out["s2 halved"] = problem.with_(s2=problem.s2 / 2)
    if problem.response == "gaussian-s2":
        # the s2 draw with shape a0 + D instead of a0 + D/2 is the conditional of the prior
        # IG(a0 + D/2, b0): a kernel with that bug samples this model exactly
        num_docs = len(problem.docs)
        out["s2 shape a0 + D"] = problem.with_(a0=problem.a0 + num_docs / 2)
    return out


@lru_cache(maxsize=None)
def _exact(problem: Problem) -> np.ndarray:
    """The oracle's posterior, computed once per problem for the whole module."""
    return exact_posterior(problem)


def _labels(problem: Problem):
    return None if problem.labels is None else np.asarray(problem.labels)


def _frequencies(problem, model=None, *, seed=0, num_samples=NUM_SAMPLES, num_chains=NUM_CHAINS,
                 chain_method="vectorized", sampler="exact", num_warmup=NUM_WARMUP):
    model = model_of(problem) if model is None else model
    labels = _labels(problem)
    if model.tasks == ("multiclass",):  # class ids -> one 0/1 task per class
        labels = Task("multiclass", model.num_classes).to_tasks(labels)
    data = tiny_data([list(d) for d in problem.docs], labels, model.response)
    z = sample_assignments(model, data, problem.vocab_size, num_samples=num_samples, seed=seed,
                           num_chains=num_chains, num_warmup=num_warmup,
                           chain_method=chain_method, sampler=sampler)
    return configuration_frequencies(z)


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_sampler_matches_enumeration(name):
    problem = PROBLEMS[name]
    tv = total_variation(_exact(problem), _frequencies(problem))
    print(f"{name}: TV {tv:.4f} between sampled and exact posterior of Z")
    assert tv < TV_BOUND, f"TV {tv:.4f} between sampled and exact posterior of Z"


# The exact sampler's other eta draws (``exact:eta=...``; the default is ``cholesky``; the
# moments are tested in tests/test_kernel.py, tests/test_eta_cholesky.py and
# tests/test_light.py) on the problems that stress eta: extreme c, two tasks, the
# eps-insensitive pair of augmentations, s2 drawn.
ETA_OPTION_PROBLEMS = ("logistic-c3", "hinge-c3-ell1", "eps-insensitive-c3",
                       "gaussian-learned-s2", "hinge-two-tasks")


@pytest.mark.parametrize("name", ETA_OPTION_PROBLEMS)
@pytest.mark.parametrize("sampler", ["exact:eta=qr"])
def test_exact_sampler_eta_options_match_enumeration(name, sampler):
    problem = PROBLEMS[name]
    tv = total_variation(_exact(problem), _frequencies(problem, sampler=sampler))
    print(f"{name} {sampler}: TV {tv:.4f} between sampled and exact posterior of Z")
    assert tv < TV_BOUND, f"TV {tv:.4f} between sampled and exact posterior of Z"


def test_enumeration_detects_cholesky_eta_with_psi_sign_flipped(monkeypatch):
    """The default (float64) eta draw with psi's sign flipped (a mutant of the package's own
    function, ``tests/test_eta_cholesky.MUTANTS``), run in the full kernel, misses the
    posterior."""
    from test_eta_cholesky import MUTANTS
    from topiczoo.kernels import eta as eta_module
    from topiczoo.models import parametric

    monkeypatch.setattr(eta_module, "_eta_cholesky",
                        mutant(eta_module._eta_cholesky, MUTANTS["psi-sign"]))
    problem = PROBLEMS["logistic-c3"]
    parametric._sampler.cache_clear()  # its compiled steps hold the original callback
    try:
        tv = total_variation(_exact(problem), _frequencies(problem))
    finally:
        parametric._sampler.cache_clear()
    print(f"psi-sign mutant: TV {tv:.4f}")
    assert tv > 2 * TV_BOUND, f"the mutant went unnoticed (TV {tv:.4f})"


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_near_misses_are_far(name):
    """The power check: every near miss at least POWER x TV_BOUND away (exact, no sampling)."""
    problem = PROBLEMS[name]
    exact = _exact(problem)
    distances = {miss: total_variation(exact, exact_posterior(other))
                 for miss, other in near_misses(problem).items()}
    print(f"{name}: " + ", ".join(f"{m} {d:.3f}" for m, d in distances.items()))
    close = {m: round(d, 4) for m, d in distances.items() if d < POWER * TV_BOUND}
    assert not close, f"near misses within {POWER} x {TV_BOUND}: {close}"


def test_sequential_chains_are_the_vectorized_chains():
    """numpyro's sequential chains draw exactly what the vectorized chains (proved above) draw,
    draw for draw: the chains' keys are split alike and the kernel is the same function."""
    problem = PROBLEMS["logistic-c3"]
    model = model_of(problem)
    data = tiny_data([list(d) for d in problem.docs], _labels(problem), model.response)
    z = {method: sample_assignments(model, data, problem.vocab_size, num_samples=300, seed=1,
                                    num_chains=2, num_warmup=10, chain_method=method)
         for method in ("sequential", "vectorized")}
    assert len(np.unique(z["vectorized"], axis=0)) > 10  # the chains do move
    np.testing.assert_array_equal(z["sequential"], z["vectorized"])


# ---------------------------------------------------------------------------------------------
# Wrong kernels without an exact target of their own: run, and caught.


@dataclass(frozen=True)
class EpsilonInsensitiveWithC(EpsilonInsensitive):
    """The JMLR paper's eqs. 19-20 as printed: c psi where the expansion gives c^2 psi."""

    def gaussian_form(self, y, augmentation):
        psi, rho = super().gaussian_form(y, augmentation)
        return psi / self.c, rho


def test_enumeration_detects_wrong_regression_conditional():
    problem = PROBLEMS["eps-insensitive-c3"]
    wrong = replace(model_of(problem), response=EpsilonInsensitiveWithC(problem.c, problem.eps))
    tv = total_variation(_exact(problem), _frequencies(problem, wrong))
    print(f"eps-insensitive with c psi: TV {tv:.4f}")
    assert tv > 2 * TV_BOUND, f"a wrong conditional went unnoticed (TV {tv:.4f})"


def test_relative_cost_samples_the_posterior_of_its_value_in_force():
    # EpsilonInsensitive(relative=True) reads c per standard deviation of the responses. On the
    # eps problem in other units (responses, eps / 8, nu2 / 64, c x 8: the same posterior of Z),
    # c = 24 sd(y) of them must sample that posterior, which is far from the posterior at
    # c = 24 sd(y) taken as absolute (a relative flag ignored)
    problem = PROBLEMS["eps-insensitive-c3"]
    scaled = problem.with_(labels=tuple(y / 8 for y in problem.labels), eps=problem.eps / 8,
                           nu2=problem.nu2 / 64, c=problem.c * 8)
    assert total_variation(_exact(problem), _exact(scaled)) < 1e-9
    per_sd = scaled.c * float(np.std(np.asarray(scaled.labels, np.float32)))
    ignored = total_variation(_exact(scaled), _exact(scaled.with_(c=per_sd)))
    assert ignored > POWER * TV_BOUND, f"the relative flag ignored is too near (TV {ignored:.4f})"
    relative = replace(model_of(scaled),
                       response=EpsilonInsensitive(per_sd, scaled.eps, relative=True))
    tv = total_variation(_exact(scaled), _frequencies(scaled, relative))
    print(f"relative c: TV {tv:.4f}; the c = {per_sd:.2f} posterior at TV {ignored:.4f}")
    assert tv < TV_BOUND, f"TV {tv:.4f} between sampled and exact posterior of Z"


class _FirstTaskAugmentation:
    """A bug once missed by the multi-task tests: every task uses the first task's
    augmentation variable. Its draw ignores the other tasks' scores, so no model has this
    chain's conditionals; it can only be run."""

    def draw_augmentation(self, key, y, omega, augmentation):
        drawn = super().draw_augmentation(key, y, omega, augmentation)
        return jnp.broadcast_to(drawn[:1], drawn.shape)


@dataclass(frozen=True)
class LogisticFirstTaskAugmentation(_FirstTaskAugmentation, Logistic):
    pass


@dataclass(frozen=True)
class HingeFirstTaskAugmentation(_FirstTaskAugmentation, Hinge):
    pass


@pytest.mark.parametrize("name, wrong_response", [
    ("logistic-two-tasks", lambda p: LogisticFirstTaskAugmentation(p.c)),
    ("hinge-two-tasks", lambda p: HingeFirstTaskAugmentation(p.c, p.ell)),
], ids=["logistic", "hinge"])
def test_enumeration_detects_one_augmentation_shared_by_the_tasks(name, wrong_response):
    problem = PROBLEMS[name]
    wrong = replace(model_of(problem), response=wrong_response(problem))
    tv = total_variation(_exact(problem), _frequencies(problem, wrong))
    print(f"{name} with the first task's augmentation for every task: TV {tv:.4f}")
    assert tv > 2 * TV_BOUND, f"a shared augmentation went unnoticed (TV {tv:.4f})"


# Samplers of the parametric family proved by enumeration in another module, with its power check.
SAMPLERS_PROVED_ELSEWHERE = {"light": "test_light_kernel.py", "parallel": "test_parallel.py"}


def test_every_response_and_sampler_has_a_powered_enumeration_problem():
    """A new response lands with its enumeration problem here (and so with the power check of
    its near misses); a new sampler of the parametric family names the module that proves it."""
    models = [model_of(p) for p in PROBLEMS.values()]
    responses = {m.response.name for m in models if m.response}
    assert set(RESPONSES) <= responses, f"no enumeration problem for {set(RESPONSES) - responses}"
    here = Path(__file__).parent
    for sampler in TopicModel.samplers:
        if sampler != "exact":  # this module runs the exact sampler
            assert sampler in SAMPLERS_PROVED_ELSEWHERE, f"no enumeration test of {sampler!r}"
            assert (here / SAMPLERS_PROVED_ELSEWHERE[sampler]).is_file()


# ---------------------------------------------------------------------------------------------
# The oracle itself


def test_exact_posterior_sums_to_one_and_is_label_symmetric():
    p = exact_posterior(PROBLEMS["logistic-c3"])
    assert abs(p.sum() - 1) < 1e-12
    n = sum(len(d) for d in PROBLEMS["logistic-c3"].docs)
    swapped = (2**n - 1) - np.arange(2**n)  # flip every token's topic
    np.testing.assert_allclose(p, p[swapped], rtol=1e-9)


@pytest.mark.parametrize("name", ["lda", "eps-insensitive-c3"])
def test_exact_posterior_equals_brute_force(name):
    """The vectorised counting against one configuration at a time, by the Polya urn."""
    problem = PROBLEMS[name]
    np.testing.assert_allclose(exact_posterior(problem), brute_force_posterior(problem),
                               rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("name", [n for n in PROBLEMS if PROBLEMS[n].response is not None])
def test_quadrature_has_converged(name):
    """A grid twice as fine moves the posterior by far less than the Monte Carlo error."""
    problem = PROBLEMS[name]
    finer = problem.with_(grid_points=2 * problem.grid_points - 1,
                          grid_half_width=problem.grid_half_width + 2)
    assert total_variation(_exact(problem), exact_posterior(finer)) < 1e-3
