"""Simulation-based calibration (``topiczoo.diagnostics.sbc``): the ranks of prior draws among
posterior draws are uniform for the exact sampler, and not for mutant kernels."""

from dataclasses import dataclass, replace

import numpy as np
import pytest

from topiczoo.diagnostics.sbc import (SBCResult, plot_sbc_ecdf, plot_sbc_ranks,
                                      simulation_based_calibration)
from topiczoo.models import gslda, medlda, slda_gaussian
from topiczoo.models.responses import Logistic

DOC_LENGTHS = [5, 4, 6, 5]
VOCAB = 5
# Thinning 20 after 100 iterations of burn-in: with thinning 5 the logistic model's rank
# histograms bend (chi-square p down to 0.001, measured: the first draws are still near the
# start, and neighbours correlated); with thinning 20, or thinning 5 after 1,000 iterations,
# every p-value is above 0.02.
SETTINGS = dict(num_replicates=400, num_draws=19, thinning=20, num_burnin=100, seed=0)
P_MIN = 1e-3  # each statistic's chi-square p-value must exceed this (about 5 per model)
LOGISTIC = gslda(2, c=1.0, alpha=1.0, beta=0.5, nu2=2.5)
GAUSSIAN = slda_gaussian(2, s2=0.5, learn_s2=True, a0=3.0, b0=1.0, alpha=1.0, beta=0.5, nu2=2.5)


@dataclass(frozen=True)
class LogisticWithoutHalf(Logistic):
    """A plausible bug: kappa = c y instead of c (y - 1/2)."""

    def gaussian_form(self, y, augmentation):
        return self.c * y, augmentation


@pytest.mark.slow
@pytest.mark.parametrize("model", [LOGISTIC, GAUSSIAN], ids=["logistic-c1", "gaussian-s2"])
def test_ranks_are_uniform(model):
    result = simulation_based_calibration(model, DOC_LENGTHS, VOCAB, **SETTINGS)
    tests = result.chi_square()
    print({k: round(p, 4) for k, (_, p) in tests.items()})
    assert set(tests) >= {"eta_norm", "eta_sum", "y_omega", "topic_share_max"}
    low = {k: p for k, (_, p) in tests.items() if p < P_MIN}
    assert not low, f"non-uniform ranks: {low}"


@pytest.mark.slow
@pytest.mark.parametrize("model, mutant", [
    (LOGISTIC, replace(LOGISTIC, response=LogisticWithoutHalf(1.0))),
    (GAUSSIAN, replace(GAUSSIAN, response=replace(GAUSSIAN.response, b0=3.0))),
], ids=["logistic-kappa-c-y", "gaussian-wrong-s2-prior"])
def test_mutant_kernels_fail(model, mutant):
    result = simulation_based_calibration(model, DOC_LENGTHS, VOCAB, kernel_model=mutant,
                                          **{**SETTINGS, "num_replicates": 200})
    smallest = min(p for _, p in result.chi_square().values())
    assert smallest < 1e-6, f"a wrong kernel passed calibration (smallest p {smallest:.3g})"


def _result(ranks):
    return SBCResult({"a": np.asarray(ranks)}, 19, {"model": {"model": "test"}})


def test_chi_square_bins_and_pit():
    uniform = _result(np.tile(np.arange(20), 10))  # 200 replicates, each rank 10 times
    statistic, p = uniform.chi_square()["a"]
    assert statistic == 0.0 and p == 1.0
    piled = _result(np.zeros(200, int))
    assert piled.chi_square()["a"][1] < 1e-100
    assert piled.chi_square(num_bins=4)["a"][0] == pytest.approx(3 * 50 + 150**2 / 50)
    with pytest.raises(ValueError, match="num_bins must divide"):
        uniform.chi_square(num_bins=3)
    # too few replicates for 2 bins of 5 expected (L + 1 = 20: 10 replicates): a clear error
    # (max() of nothing failed below 5; 5-9 gave one bin and p NaN); the ECDF still draws
    for few in (_result([0, 5, 9, 3]), _result(np.arange(9))):
        for call in (few.chi_square, lambda: plot_sbc_ranks(few)):
            with pytest.raises(ValueError, match="needs at least 10 replicates here"):
                call()
        plot_sbc_ecdf(few)
    assert _result(np.arange(0, 20, 2)).chi_square()["a"] == (0.0, 1.0)  # 2 bins of 5
    pit = uniform.pit()["prior_sbc"]["a"].values
    assert pit.shape == (1, 200) and np.all((pit > 0) & (pit < 1))
    np.testing.assert_array_equal(np.floor(pit[0] * 20), np.tile(np.arange(20), 10))


def test_plots():
    result = _result(np.random.default_rng(0).integers(0, 20, 200))
    fig = plot_sbc_ranks(result)
    assert len(fig.axes) == 1
    plot_sbc_ecdf(result)


def test_bad_input():
    with pytest.raises(ValueError, match="pseudo-likelihood"):
        simulation_based_calibration(medlda(2), DOC_LENGTHS, VOCAB)
    with pytest.raises(ValueError, match="pseudo-likelihood"):
        simulation_based_calibration(gslda(2, c=4.0), DOC_LENGTHS, VOCAB)
    with pytest.raises(ValueError, match="doc_lengths"):
        simulation_based_calibration(LOGISTIC, [3, 0], VOCAB)
    with pytest.raises(ValueError, match="num_draws must be an integer >= 1"):
        simulation_based_calibration(LOGISTIC, DOC_LENGTHS, VOCAB, num_draws=0)
