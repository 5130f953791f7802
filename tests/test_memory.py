"""topiczoo.memory: the allocator setting and the trim that keep long fits' resident memory
down, and the parametric samplers' use of the trim."""

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


# A child process fills glibc's heap with 2 MiB blocks (below the threshold a freed 30 MiB
# block raised), frees them while a block allocated after them pins the heap's top, and
# reports how much of them is still resident before and after trim_free_memory.
_TRIM_CHILD = """
import json
import numpy as np
from topiczoo.memory import trim_free_memory

def rss_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

big = np.ones(30 << 17)
del big
before = rss_kb()
blocks = [np.ones(2 << 17) for _ in range(24)]  # 48 MiB, touched
pin = np.ones(2 << 17)
del blocks
kept = rss_kb() - before
released = trim_free_memory()
print(json.dumps({"kept_kb": kept, "released": released, "after_trim_kb": rss_kb() - before}))
"""


@pytest.mark.skipif(_glibc() is None, reason="the trim is glibc's malloc_trim")
def test_trim_gives_the_free_pages_of_a_fragmented_heap_back():
    out = subprocess.run([sys.executable, "-c", _TRIM_CHILD], check=True, capture_output=True,
                         text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["kept_kb"] > 40 << 10  # freed, but glibc keeps them resident
    assert result["released"] is True
    assert result["after_trim_kb"] < 8 << 10


def test_the_host_sweeps_trim_after_every_call_on_large_data(monkeypatch):
    """The parametric family's host steps (the exact and the light assignments steps) trim once
    per call when their arrays take ``TRIM_ABOVE_BYTES`` or more (lowered here to this toy
    corpus's bytes), and not on smaller data."""
    import jax
    import jax.numpy as jnp

    import topiczoo.kernels.assignments as assignments
    import topiczoo.kernels.host as host
    import topiczoo.kernels.light as light

    calls = []
    monkeypatch.setattr(host, "trim_free_memory", lambda: calls.append(1) or True)
    words = jnp.array([0, 1, 2, 1, 0, 2], jnp.int32)
    offsets = jnp.array([0, 3, 6], jnp.int32)
    z = jnp.array([0, 1, 0, 1, 0, 1], jnp.int32)
    none = jnp.zeros((0, 2), jnp.float32), jnp.zeros((0, 2), jnp.float32)
    eta = jnp.zeros((0, 2), jnp.float32)
    key = jax.random.PRNGKey(0)

    def steps():
        light.light_assignments_step(key, z, words, offsets, eta, *none, 0.5, 0.1,
                                     num_topics=2, vocab_size=3)
        jax.vmap(lambda k: assignments.collapsed_assignments_step(
            k, z, words, offsets, eta, *none, 0.5, 0.1, num_topics=2,
            vocab_size=3))(jax.random.split(key, 2))

    steps()
    assert calls == []  # 64 and 104 bytes: below the default threshold
    monkeypatch.setattr(host, "TRIM_ABOVE_BYTES", 64)
    steps()
    assert len(calls) == 2  # one per host call (the two vmapped chains make one call)
    monkeypatch.setattr(host, "TRIM_ABOVE_BYTES", 65)
    steps()
    assert len(calls) == 3  # the unbatched step's 64 bytes (z, n_dk, n_wk) are now below it
