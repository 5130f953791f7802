"""Refactorings change no draw: every model's collected draws, snapshots and test scores for
fixed seeds equal the digests recorded before the model-family redesign (``draw_digests.py``)."""

import json

import pytest

from draw_digests import DIGEST_FILE, compute


@pytest.mark.slow
def test_draws_equal_the_recorded_digests():
    with open(DIGEST_FILE) as f:
        recorded = json.load(f)
    now = compute(recorded=recorded)
    assert set(now) == set(recorded)
    changed = {case: (recorded[case], now[case]) for case in recorded
               if recorded[case] != now[case]}
    assert not changed, f"draws changed: {changed}"
