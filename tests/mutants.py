"""Mutants of the package's numba kernels: a function recompiled from its own source with a few
lines changed, for tests that must show they would notice the change."""

from __future__ import annotations

import inspect
import textwrap
import types

import numba


def mutant(function, replacements, overrides=None, **jit_options):
    """``function`` (a numba or plain function of the package) recompiled from its own source
    with each (old, new) text replacement applied; each ``old`` must occur exactly once, so a
    change of the package's code cannot silently turn a mutant into the original.

    The source is executed in a copy of the function's module namespace, updated with
    ``overrides`` (name -> object): a mutant of a helper passed there is what the recompiled
    function calls. ``jit_options`` (e.g. ``parallel=True``) go to ``numba.njit``.
    """
    py_func = getattr(function, "py_func", function)
    source = textwrap.dedent(inspect.getsource(py_func))
    source = "\n".join(line for line in source.splitlines() if not line.startswith("@"))
    for old, new in replacements:
        assert source.count(old) == 1, f"{old!r} occurs {source.count(old)} times"
        source = source.replace(old, new)
    namespace = dict(vars(inspect.getmodule(py_func)))
    namespace.update(overrides or {})
    exec(source, namespace)
    mutated = namespace[py_func.__name__]
    return numba.njit(nogil=True, **jit_options)(mutated) if hasattr(function, "py_func") \
        else mutated


def module_with(module, **replacements):
    """A copy of ``module`` (a new module object, which numba reads as a module) with some of
    its functions replaced: for recompiling, with :func:`mutant`'s ``overrides``, a function
    that reaches a mutated helper as ``module.name``."""
    copy = types.ModuleType(module.__name__ + "_mutant")
    copy.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    copy.__dict__.update(replacements)
    return copy
