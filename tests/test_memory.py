"""topiczoo.memory: the allocator setting that keeps long fits' resident memory down."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from topiczoo.memory import _glibc, return_large_blocks_to_os


# A child process frees a 30 MB block (glibc then serves blocks below 30 MB from its heap),
# optionally calls return_large_blocks_to_os, and reports how much of a 16 MB block that it
# filled and freed is still resident.
_CHILD = """
import json, sys
import numpy as np
from topiczoo.memory import return_large_blocks_to_os

def rss_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

big = np.ones(30 << 17)  # 30 MiB of float64, mapped on its own and then unmapped
del big
took = return_large_blocks_to_os() if sys.argv[1] == "1" else None
before = rss_kb()
block = np.ones(16 << 17)  # 16 MiB, touched
del block
print(json.dumps({"took": took, "kept_kb": rss_kb() - before}))
"""


def _kept_kb(set_threshold: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, "1" if set_threshold else "0"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.skipif(_glibc() is None, reason="the setting is glibc's mallopt")
def test_a_freed_large_block_leaves_the_resident_set_only_with_the_setting():
    without, with_ = _kept_kb(False), _kept_kb(True)
    assert without["kept_kb"] > 12 << 10  # glibc's default keeps it in the heap
    assert with_["took"] is True
    assert with_["kept_kb"] < 2 << 10


@pytest.mark.parametrize("threshold", [-1, (32 << 20) + 1])
def test_a_threshold_out_of_range_is_a_clear_error(threshold):
    with pytest.raises(ValueError, match=r"threshold_bytes must lie in \[0, 33554432\]"):
        return_large_blocks_to_os(threshold)


@pytest.mark.parametrize("threshold", [1.5, True, "1M", None])
def test_a_threshold_that_is_not_an_integer_is_a_clear_error(threshold):
    with pytest.raises(TypeError, match="threshold_bytes must be an integer"):
        return_large_blocks_to_os(threshold)
