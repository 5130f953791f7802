"""``fit(..., thinning=k)``: the defaults it leaves to fit (burn-in, snapshot iterations,
chunk) are placed on multiples of k, where every chunk must end; values given that are not
are still refused before any sampling, and without thinning the schedule is as it was."""

import numpy as np
import pytest

from chains import small_corpus
from topiczoo.fit import fit
from topiczoo.schedule import extended_stages as _extended_stages, snapshot_iterations
from topiczoo.models import gslda, medlda


def test_thinning_with_the_default_schedule():
    """The review's call: it raised 'thinning 2 does not divide the chunk of iterations
    21-25' (default burn-in 25, snapshots at 35 and 45)."""
    result = fit(medlda(5), small_corpus(), sampler="light", num_chains=1, num_iterations=50,
                 thinning=2, progress=False)
    assert result.num_burnin == 24  # half of 50, rounded down to a multiple of 2
    assert [s.iteration for s in result.snapshots] == [30, 36, 40, 46, 50]
    np.testing.assert_array_equal(result.draw_iterations, np.arange(2, 51, 2))
    assert result.draws["eta_norm"].shape[:2] == (1, 25)


def test_the_default_chunk_is_a_multiple_of_thinning():
    """Burn-in 30 and snapshots 36, ..., 60 are multiples of 3, the default chunk of 50 was
    not (a chunk ended at 50)."""
    result = fit(gslda(3), small_corpus(), num_chains=1, num_iterations=60, thinning=3,
                 progress=False)
    np.testing.assert_array_equal(result.draw_iterations, np.arange(3, 61, 3))
    assert [s.iteration for s in result.snapshots] == [36, 42, 48, 54, 60]


@pytest.mark.parametrize("settings, named", [
    (dict(num_burnin=25), r"num_burnin \(25\) \("),
    (dict(chunk=25), r"chunk \(25\) \("),
    (dict(snapshot_lag=5), r"the snapshot iterations \[29, 39, 49\] \("),
    (dict(num_snapshots=4), r"the snapshot iterations \[31, 37\] \("),
    (dict(num_iterations=51), r"num_iterations \(51\) \("),
    (dict(until_rhat=1.01, num_chains=2, max_iterations=75), r"max_iterations \(75\) \("),
])
def test_values_given_that_thinning_does_not_divide_are_refused(settings, named):
    calls = []
    settings = {"num_iterations": 50, "num_chains": 1, **settings}
    with pytest.raises(ValueError, match=r"thinning 2 does not divide the chunk of iterations "
                                         r"\d+-\d+: every chunk must end on a multiple of "
                                         r"thinning; not multiples of 2: " + named):
        fit(gslda(3), small_corpus(), thinning=2, progress=False, callback=calls.append,
            **settings)
    assert not calls  # refused before sampling


def test_the_schedule_without_thinning_is_unchanged():
    assert snapshot_iterations(50, 25) == snapshot_iterations(50, 25, thinning=1) == [
        30, 35, 40, 45, 50]
    assert snapshot_iterations(12, 6, num_snapshots=2, thinning=1) == [9, 12]
    assert snapshot_iterations(50, 24, thinning=2) == [30, 36, 40, 46, 50]
    assert snapshot_iterations(12, 8, thinning=2) == [10, 12]  # points that meet are merged
    assert snapshot_iterations(100, 50, snapshot_lag=10, thinning=4) == [60, 70, 80, 90, 100]
    assert _extended_stages(4, 2, 10) == [(4, 2), (8, 4), (10, 5)]
    assert _extended_stages(4, 2, 10, thinning=2) == [(4, 2), (8, 4), (10, 4)]
