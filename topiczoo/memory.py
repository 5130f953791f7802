"""Resident memory of long fits: ask the C allocator to give large freed blocks back.

A fit's host blocks (the sweeps' counts, the eta pass's sparse zbar, the callbacks'
outputs and XLA's copies of them) allocate and free blocks of 1-90 MB at every iteration.
glibc's malloc maps a block of 128 KiB or more on its own and unmaps it when freed, but each
such free raises that threshold to the freed size (up to 32 MiB), so from then on the blocks
of a few MB come from its heaps, which fragment: the resident set creeps up chunk after
chunk while the memory in use does not. On 20news, K = 400, 20 tasks, one light chain of
40-60 iterations through :func:`topiczoo.fit.fit`, the peak resident set was 1,050-1,250 MB
with glibc's default (8 runs) and 862-902 MB with a fixed threshold of 1 MiB (5 runs), at
the same speed (``studies/light_20news.py --part rss``).

:func:`trim_free_memory` gives the free pages of those heaps back to the system
(glibc's ``malloc_trim``). It changes no setting, so the parametric family's
samplers call it after every host sweep whose counts take 1 MiB or more
(``kernels.assignments.TRIM_ABOVE_BYTES``; 1-5 ms a call, under 1% of a K = 400 iteration;
about 0.07 ms on small data): a light fit of 40 iterations then peaked at 933-967 MB (6 runs)
against 1,030-1,148 MB without it (4 runs, each beside one of those), at the same speed; an
exact one at 957 MB.

:func:`return_large_blocks_to_os` fixes the threshold, which keeps the heaps from filling with
such blocks at all (862-902 MB above). It is a setting of the whole process, so the library
does not change it on import or in ``fit``; the ``topiczoo`` command calls it at start, and a
script can do the same (or set ``MALLOC_MMAP_THRESHOLD_=1048576`` in the environment before
Python starts).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

from topiczoo.errors import InputError, InputTypeError, InsufficientMemoryError

_M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
_MAX_THRESHOLD = 32 << 20  # glibc's HEAP_MAX on 64-bit systems: larger values are refused


@functools.cache
def _glibc():
    """The process's C library if it is glibc (it has ``gnu_get_libc_version``; musl's
    ``mallopt`` is a no-op returning 0), else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version
        return libc
    except (OSError, AttributeError):
        return None


def return_large_blocks_to_os(threshold_bytes: int = 1 << 20) -> bool:
    """Serve every block of ``threshold_bytes`` (bytes, default 1 MiB) or more with its own
    memory map, returned to the system when freed (glibc's ``mallopt(M_MMAP_THRESHOLD)``),
    for the rest of the process.

    Returns True if the C library took the setting, False where there is no glibc
    ``mallopt`` (macOS, musl): nothing changes there. Raises InputTypeError (a TypeError)
    for a threshold that is not an integer and InputError (a ValueError) for one outside
    [0, 32 MiB].
    """
    if isinstance(threshold_bytes, bool) or not isinstance(threshold_bytes, int):
        raise InputTypeError(f"threshold_bytes must be an integer, got {threshold_bytes!r}")
    if not 0 <= threshold_bytes <= _MAX_THRESHOLD:
        raise InputError(f"threshold_bytes must lie in [0, {_MAX_THRESHOLD}] (32 MiB), got "
                         f"{threshold_bytes}")
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold_bytes))


def trim_free_memory() -> bool:
    """Give the free pages of the C allocator's heaps back to the system now (glibc's
    ``malloc_trim(0)``; a few milliseconds after a K = 400 light sweep on 20news). Memory in
    use is untouched and no setting changes.

    Returns True if glibc released some memory, False if there was none to release or the
    C library is not glibc (nothing happens there).
    """
    libc = _glibc()
    return libc is not None and bool(libc.malloc_trim(0))


# ---------------------------------------------------------------------------------------------
# Will a run fit in memory?

#: A run is refused when its estimate exceeds this share of the memory available to the
#: process (the rest: the Python process itself, XLA's buffers and copies the estimate omits).
MEMORY_SHARE = 0.9


def available_memory() -> int | None:
    """Bytes of memory this process can still use: the system's available memory
    (``MemAvailable`` of /proc/meminfo) and, under a cgroup v2 or v1 memory limit, what is
    left of the limit, whichever is less; None where neither can be read."""
    found = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_file) as f:
                limit = f.read().strip()
            with open(usage_file) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 1 << 60:
            found.append(max(int(limit) - usage, 0))
    return min(found) if found else None


def _size(num_bytes: float) -> str:
    """``12.3 GB`` (decimal units)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if num_bytes >= scale:
            return f"{num_bytes / scale:.1f} {unit}"
    return f"{num_bytes:.0f} bytes"


def check_memory(parts: dict, what: str, available: int | None = None) -> None:
    """Refuse a run whose estimated memory exceeds what the machine has, before it allocates
    anything large.

    ``parts``: name -> bytes (the sampler's estimate, ``kernels.gibbs.Sampler.memory``);
    ``what``: the run, for the message; ``available``: bytes (default
    :func:`available_memory`; nothing is checked when it cannot be read). Raises
    :class:`topiczoo.errors.InsufficientMemoryError` naming the parts, their sizes, the memory
    available and how to go on.
    """
    available = available_memory() if available is None else available
    total = sum(parts.values())
    if available is None or total <= MEMORY_SHARE * available:
        return
    largest = sorted(parts.items(), key=lambda item: -item[1])
    listed = "; ".join(f"{name} {_size(size)}" for name, size in largest if size >= 1e6)
    raise InsufficientMemoryError(
        f"{what} needs about {_size(total)} of memory, and this machine has {_size(available)} "
        f"available: {listed}. To go on: fewer topics, fewer chains or snapshots, the light "
        f"sampler (sampler='light', --sampler light: no K x K eta factorisation), or a machine "
        f"with more memory.")
