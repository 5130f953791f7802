"""topiczoo: supervised topic models with exact MCMC on numpyro.

Quick start::

    from topiczoo import load_dataset, medlda, fit, predict
    data = load_dataset("bbc")                      # business vs politics, embedded
    result = fit(medlda(20), data.train, num_chains=4, num_iterations=100)
    print(predict(result, data.test).accuracy(data.test.labels))

``import topiczoo`` imports nothing heavy: each public name below is imported from its module
on first use (``topiczoo.fit``, ``from topiczoo import fit``), so the command line answers
``--help`` and argument errors before JAX, numpyro, numba, ArviZ or matplotlib are imported.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import types

__version__ = "0.1.0"

#: Each public name and the module that defines it.
_EXPORTS = {
    "Corpus": "topiczoo.corpus",
    "DATASETS": "topiczoo.datasets", "load_dataset": "topiczoo.datasets",
    "load_folds": "topiczoo.datasets",
    "ConvergenceWarning": "topiczoo.errors", "DataLossWarning": "topiczoo.errors",
    "InputError": "topiczoo.errors", "InputTypeError": "topiczoo.errors",
    "FitResult": "topiczoo.fit", "fit": "topiczoo.fit",
    "REGISTRY": "topiczoo.models", "gslda": "topiczoo.models",
    "gslda_multitask": "topiczoo.models", "lda": "topiczoo.models", "medlda": "topiczoo.models",
    "medlda_multitask": "topiczoo.models", "medlda_regression": "topiczoo.models",
    "slda_gaussian": "topiczoo.models", "unigram_mixture": "topiczoo.models",
    "Prediction": "topiczoo.predict", "predict": "topiczoo.predict",
    "fit_and_predict": "topiczoo.run",
}

__all__ = ["DATASETS", "REGISTRY", "ConvergenceWarning", "Corpus", "DataLossWarning",
           "FitResult", "InputError", "InputTypeError", "Prediction", "fit",
           "fit_and_predict", "gslda", "gslda_multitask", "lda", "load_dataset",
           "load_folds", "medlda", "medlda_multitask", "medlda_regression", "predict",
           "slda_gaussian", "unigram_mixture"]

#: The subpackages installed from folders beside ``topiczoo/`` (pyproject's package-dir).
_SUBPACKAGES = ("models", "kernels", "diagnostics")


def __getattr__(name: str):
    """A public name, imported from its module on first use; a submodule, imported."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if not name.startswith("__") and name in _submodules():
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    """The module's names, the public names not yet imported, and the submodules."""
    return sorted(set(globals()) | set(__all__) | _submodules())


def _submodules() -> set:
    """The names of the package's modules and subpackages."""
    return {info.name for info in pkgutil.iter_modules(__path__)} | set(_SUBPACKAGES)


class _Package(types.ModuleType):
    """The package's module type. The import system binds a submodule to its name in the
    package once it is loaded; ``fit`` and ``predict`` are functions named after their
    modules, and stay the functions (as ``from topiczoo import fit`` promises) whichever
    code imports ``topiczoo.fit`` first."""

    def __setattr__(self, name, value):
        if (isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}"
                and _EXPORTS.get(name) == value.__name__):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
