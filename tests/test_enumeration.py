"""Enumeration tests (DESIGN.md, "How we know a kernel is right").

A long run of the full Gibbs kernel (Z, augmentation and eta blocks) on a corpus of 7 tokens
with K = 2 must reproduce the exact posterior of Z over all 2^7 configurations, computed by
enumeration with the response's ORIGINAL pseudo-likelihood (no augmentation). Distributions
are compared up to relabelling of the topics (see ``exact.total_variation``). Each test also
shows it can fail: a kernel with a deliberately wrong conditional misses the bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from exact import exact_posterior, sampled_configurations, tiny_data, total_variation
from topiczoo.kernels.gibbs import GibbsKernel
from scipy.special import gammaln

from topiczoo.models.responses import EpsilonInsensitive, Hinge, Logistic
from topiczoo.models import Task, gslda, gslda_multitask, lda, medlda, medlda_regression, slda_gaussian

pytestmark = pytest.mark.slow  # statistical: long chains against enumeration

# Three documents, V = 3, 7 tokens; topics are ambiguous so the labels move Z.
DOCS = [[0, 1, 0], [1, 2], [2, 0]]
LABELS = [1, 0, 1]
VOCAB = 3
NUM_SAMPLES = 25_000  # per chain, 4 chains
TV_BOUND = 0.03  # the Monte Carlo TV at this length is about 0.01-0.015 (measured)


RATINGS = [0.9, -0.4, 1.3]
TWO_TASK_LABELS = [[1, 0, 1], [0, 0, 1]]  # [T, D]: two binary tasks sharing Z
CLASSES = [0, 1, 1]


def _run(model, seed=0, chain_method="vectorized", num_samples=NUM_SAMPLES, num_chains=4,
         labels=LABELS, log_pseudo_likelihood=None):
    if model.tasks == ("multiclass",):  # class ids -> one 0/1 task per class
        labels = Task("multiclass", model.num_classes).to_tasks(labels)
    data = tiny_data(DOCS, labels if model.response is not None else None, model.response)
    exact = exact_posterior(data, model, VOCAB, log_pseudo_likelihood)
    freq = sampled_configurations(GibbsKernel(model, VOCAB), data, num_samples=num_samples,
                                  seed=seed, num_chains=num_chains, chain_method=chain_method)
    return exact, freq


def _common(**kw):
    return dict(alpha=1.0, beta=0.5, **kw)


@pytest.mark.parametrize(
    "model",
    [
        lda(2, **_common()),
        gslda(2, c=1.0, **_common()),
        gslda(2, c=9.0, **_common()),
        medlda(2, c=1.0, ell=1.0, **_common()),
        medlda(2, c=3.0, ell=0.5, **_common()),
    ],
    ids=["lda", "logistic-c1", "logistic-c9", "hinge-c1-ell1", "hinge-c3-ell0.5"],
)
def test_sampler_matches_enumeration(model):
    exact, freq = _run(model)
    tv = total_variation(exact, freq)
    assert tv < TV_BOUND, f"TV {tv:.4f} between sampled and exact posterior of Z"


def _gaussian_integrated_over_s2(a0, b0):
    """log of int IG(s2; a0, b0) prod_d N(y_d; omega_d, s2) ds2 (one task; all documents)."""

    def log_marginal(y, omega):
        rss = ((y - omega) ** 2).sum(-1, keepdims=True)  # [G, 1, 1]
        n = y.shape[-1]
        return (a0 * np.log(b0) - gammaln(a0) + gammaln(a0 + n / 2)
                - (a0 + n / 2) * np.log(b0 + rss / 2) - n / 2 * np.log(2 * np.pi))

    return log_marginal


@pytest.mark.parametrize(
    "model, labels, log_pl",
    [
        (medlda_regression(2, c=2.0, eps=0.1, **_common()), RATINGS, None),
        (slda_gaussian(2, s2=0.5, learn_s2=False, **_common()), RATINGS, None),
        (slda_gaussian(2, s2=0.5, learn_s2=True, a0=2.0, b0=0.5, **_common()), RATINGS,
         _gaussian_integrated_over_s2(2.0, 0.5)),
        (medlda(2, c=2.0, ell=0.5, **_common()), TWO_TASK_LABELS, None),
        (gslda(2, c=4.0, **_common()), TWO_TASK_LABELS, None),
        (gslda_multitask(2, 2, c=3.0, **_common()), CLASSES, None),
    ],
    ids=["eps-insensitive-c2", "gaussian-fixed-s2", "gaussian-learned-s2", "hinge-two-tasks",
         "logistic-two-tasks", "logistic-multiclass"],
)
def test_regression_and_multitask_match_enumeration(model, labels, log_pl):
    exact, freq = _run(model, labels=labels, log_pseudo_likelihood=log_pl)
    tv = total_variation(exact, freq)
    assert tv < TV_BOUND, f"TV {tv:.4f} between sampled and exact posterior of Z"


@dataclass(frozen=True)
class EpsilonInsensitiveWithC(EpsilonInsensitive):
    """The JMLR paper's eqs. 19-20 as printed: c psi where the expansion gives c^2 psi."""

    def gaussian_form(self, y, augmentation):
        psi, rho = super().gaussian_form(y, augmentation)
        return psi / self.c, rho


def test_enumeration_detects_wrong_regression_conditional():
    model = medlda_regression(2, c=2.0, eps=0.1, **_common())
    data = tiny_data(DOCS, RATINGS, model.response)
    exact = exact_posterior(data, model, VOCAB)
    wrong = replace(model, response=EpsilonInsensitiveWithC(2.0, 0.1))
    freq = sampled_configurations(GibbsKernel(wrong, VOCAB), data, num_samples=NUM_SAMPLES,
                                  seed=0)
    assert total_variation(exact, freq) > 2 * TV_BOUND


def test_sequential_chains_match_enumeration():
    exact, freq = _run(gslda(2, c=9.0, **_common()), seed=1, chain_method="sequential",
                       num_samples=30_000, num_chains=2)
    assert total_variation(exact, freq) < TV_BOUND


# ---------------------------------------------------------------------------------------------
# The tests can fail: wrong conditionals are caught.


@dataclass(frozen=True)
class LogisticWithoutC(Logistic):
    """A plausible bug: the linear coefficient written without the factor c."""

    def gaussian_form(self, y, augmentation):
        return y - 0.5, augmentation


@dataclass(frozen=True)
class HingeWithoutC(Hinge):
    """The JMLR paper's eq. 13 as printed: no factor c in front of the linear term."""

    def gaussian_form(self, y, augmentation):
        c = self.c
        return y + c * c * self.ell * y * augmentation, c * c * augmentation


@pytest.mark.parametrize(
    "model, wrong_response",
    [
        (gslda(2, c=9.0, **_common()), LogisticWithoutC(9.0)),
        (medlda(2, c=3.0, ell=0.5, **_common()), HingeWithoutC(3.0, 0.5)),
    ],
    ids=["logistic-c9-without-c", "hinge-c3-without-c"],
)
def test_enumeration_detects_wrong_conditional(model, wrong_response):
    data = tiny_data(DOCS, LABELS, model.response)
    exact = exact_posterior(data, model, VOCAB)
    wrong = replace(model, response=wrong_response)
    freq = sampled_configurations(GibbsKernel(wrong, VOCAB), data, num_samples=NUM_SAMPLES,
                                  seed=0)
    tv = total_variation(exact, freq)
    assert tv > 2 * TV_BOUND, f"a wrong conditional went unnoticed (TV {tv:.4f})"


def test_lda_enumeration_detects_wrong_beta():
    model = lda(2, **_common())
    data = tiny_data(DOCS)
    exact = exact_posterior(data, model, VOCAB)
    wrong = replace(model, beta=0.05)
    freq = sampled_configurations(GibbsKernel(wrong, VOCAB), data, num_samples=NUM_SAMPLES,
                                  seed=0)
    assert total_variation(exact, freq) > 2 * TV_BOUND


def test_exact_posterior_sums_to_one_and_is_label_symmetric():
    model = gslda(2, c=9.0, **_common())
    data = tiny_data(DOCS, LABELS, model.response)
    p = exact_posterior(data, model, VOCAB)
    assert abs(p.sum() - 1) < 1e-12
    n = len(np.asarray(data.words))
    swapped = (2**n - 1) - np.arange(2**n)  # flip every token's topic
    np.testing.assert_allclose(p, p[swapped], rtol=1e-9)
