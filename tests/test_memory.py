"""topiczoo.memory: the allocator setting and the trim that keep long fits' resident memory
down, and the parametric samplers' use of the trim."""

from __future__ import annotations

import json
import os
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


def _glibc_default_env() -> dict:
    """This environment without glibc's malloc tunables: a Dask nanny started earlier in the
    process leaves MALLOC_TRIM_THRESHOLD_=65536 in os.environ, and glibc then trims by itself."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}


def _kept_kb(set_threshold: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, "1" if set_threshold else "0"],
                         check=True, capture_output=True, text=True,
                         env=_glibc_default_env()).stdout
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
                         text=True, env=_glibc_default_env()).stdout
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
    assert calls == []  # 40 and 80 bytes: below the default threshold
    monkeypatch.setattr(host, "TRIM_ABOVE_BYTES", 40)
    steps()
    assert len(calls) == 2  # one per host call (the two vmapped chains make one call)
    monkeypatch.setattr(host, "TRIM_ABOVE_BYTES", 41)
    steps()
    assert len(calls) == 3  # the unbatched step's 40 bytes (z, n_dk; n_wk is kept) below it


# ---------------------------------------------------------------------------------------------
# A run that needs more memory than the machine has is refused before it allocates anything

_REFUSED = """
import json, resource, sys
import topiczoo.memory
from topiczoo import load_dataset, gslda, fit
from topiczoo.errors import InsufficientMemoryError

train = load_dataset("bbc").train
topiczoo.memory.available_memory = lambda: int(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    fit(gslda(int(sys.argv[2])), train, num_chains=4, num_iterations=4, progress=False,
        compilation_cache=False)
    message = None
except InsufficientMemoryError as err:
    message = str(err)
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps({"message": message, "grown_mb": grown}))
"""


def _refused(available_bytes: int, num_topics: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _REFUSED, str(available_bytes), str(num_topics)],
                         capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_run_too_large_for_the_memory_is_refused_before_it_allocates():
    """gslda with K = 1,000 on bbc (4 chains: about 0.5 GB of states, counts and snapshots)
    on a machine said to have 50 MB: refused, naming the parts and how to go on, while the
    process grew by under 100 MB (a fit that went ahead would have grown by far more)."""
    got = _refused(50 << 20, 1000)
    assert got["message"] is not None
    assert "needs about" in got["message"] and "50.0 MB available" not in got["message"]
    assert "the snapshots (n_wk [V, K] per chain and snapshot)" in got["message"]
    assert "fewer topics" in got["message"] and "light sampler" in got["message"]
    assert got["grown_mb"] < 100, got


def test_a_huge_number_of_topics_is_refused_by_the_real_memory():
    """K = 10^6 (eta's K x K precision alone is 16 TB): refused on this machine as it is; what
    fits passes."""
    from topiczoo import gslda, load_dataset
    from topiczoo.errors import InsufficientMemoryError
    from topiczoo.fit import fit
    from topiczoo.memory import available_memory, check_memory

    assert available_memory() > 0
    with pytest.raises(InsufficientMemoryError, match=r"eta's precision matrices .* 16\.0 TB"):
        fit(gslda(10**6), load_dataset("bbc").train, progress=False)
    check_memory({"a": 10}, "nothing", available=100)
    with pytest.raises(InsufficientMemoryError, match="nothing needs about 200 bytes"):
        check_memory({"a": 200}, "nothing", available=100)


def test_the_command_refuses_a_huge_number_of_topics_and_writes_nothing(tmp_path):
    """``topiczoo fit --topics 1000000``: one line, exit 2, no run folder made."""
    out = subprocess.run([sys.executable, "-m", "topiczoo.cli", "fit", "--topics", "1000000",
                          "--iterations", "2", "--chains", "1"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: medlda with K = 1000000") and "TB" in out.stderr
    assert not (tmp_path / "runs").exists()
