import gc
import os
import sys

import jax
import pytest

# tests import their small shared helpers (tests/exact.py) as top-level modules
sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_code():
    """Drop JAX's compiled executables after each test module.

    XLA's CPU backend maps three memory regions (code, read-only data, data) per compiled
    module and frees them only when the executable is dropped. The suite compiles thousands of
    distinct closures, and a single process holding all of them passes the kernel's
    ``vm.max_map_count`` (65,530 by default) late in the run, where the next compilation dies
    with a segmentation fault (the failure mode of jax-ml/jax#27201). Clearing the caches per
    module kept the count at 2,000-7,000 for most of the run and under 16,000 at its peak
    (measured on the whole suite), at the price of recompiling what two modules share.
    """
    yield
    jax.clear_caches()
    gc.collect()


@pytest.fixture(autouse=True)
def _no_downloads(monkeypatch):
    """Tests never download a data set: a test that would (a data set missing from the folder
    it names) gets the error of a machine without network at once. tests/test_fetch.py
    replaces the download with a server of small sample archives."""
    import urllib.error

    from topiczoo import fetch

    def offline(url, timeout):
        raise urllib.error.URLError("the tests do not use the network")

    monkeypatch.setattr(fetch, "_open_url", offline)
