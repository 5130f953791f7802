"""Extremes stay finite: c = 256, ell = 164, K = 50, one-token and 10,000-token documents
(the reduced size of ``benchmarks/extremes.py``, which runs K = 400 and 1,000 iterations)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks"))
from extremes import REDUCED, run  # noqa: E402


@pytest.mark.slow
def test_extreme_settings_stay_finite():
    for name, (finite, _, metrics, eta_max) in run(**REDUCED).items():
        assert finite, f"{name}: a draw, snapshot or score is not finite (max |eta| {eta_max})"
        assert all(v == v for v in metrics.values()), f"{name}: NaN metric {metrics}"
