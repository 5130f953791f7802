"""The named models: one table read by the command line, the tests and README's model table.

Each :class:`ModelEntry` says how to build a model (its factory, whose keyword arguments and
defaults are the model's options), which label kinds it takes, and how it is run:

* ``"gibbs"``: one model fitted by :func:`topiczoo.fit.fit`, scored by
  :func:`topiczoo.predict.predict`;
* ``"one-vs-all"``: one binary model per class (:func:`topiczoo.ova.one_vs_all`);
* ``"two-step"``: an unsupervised model, then the entry's ``second_step`` on the topic
  proportions (named here, run by ``topiczoo.baseline``: ``"linear-svm"`` for LDA + linear
  SVM, ``"glm"`` for HDP + GLM).

A new model is one entry here and its module in ``models/``: nothing in the fitting, prediction,
command-line or diagnostics code names a model.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

from topiczoo.models.gslda import gslda, gslda_multitask
from topiczoo.models.lda import lda
from topiczoo.models.medlda import medlda, medlda_multitask, medlda_regression
from topiczoo.models.shdp import (hdp, shdp_gaussian, shdp_hinge, shdp_logistic, shdp_map,
                                  shdp_multitask, shdp_regression)
from topiczoo.models.slda_gaussian import slda_gaussian
from topiczoo.models.supervised import task_of
from topiczoo.models.unigram_mixture import unigram_mixture

#: How an entry is run (see the module docstring).
DRIVERS = ("gibbs", "one-vs-all", "two-step")


@dataclass(frozen=True)
class ModelEntry:
    """A named model.

    name: the ``--model`` name; factory: ``factory(num_topics, **options) -> model``;
    summary: one line for humans; tasks: the label kinds of the data it takes (empty for
    unsupervised models); driver: one of :data:`DRIVERS`; defaults: options whose default
    differs from the factory's (e.g. the margin of one-vs-all MedLDA); second_step: for a
    two-step entry, the name of its second step (``topiczoo.baseline.SECOND_STEPS``).
    """

    name: str
    factory: Callable
    summary: str
    tasks: tuple = ()
    driver: str = "gibbs"
    defaults: dict = field(default_factory=dict)
    second_step: str | None = None

    def __post_init__(self):
        if self.driver not in DRIVERS:
            raise ValueError(f"driver must be one of {DRIVERS}, got {self.driver!r}")
        if (self.driver == "two-step") != (self.second_step is not None):
            raise ValueError("a two-step entry, and only one, has a second_step")

    def options(self) -> dict:
        """The model's options and their defaults: ``{name: default}`` (keyword arguments of
        the factory besides ``num_topics``; ``num_classes`` is taken from the corpus)."""
        out = {}
        for name, parameter in inspect.signature(self.factory).parameters.items():
            if name in ("num_topics", "num_classes"):
                continue
            out[name] = self.defaults.get(name, parameter.default)
        return out

    def build(self, num_topics: int, corpus=None, **options):
        """The model with ``num_topics`` topics and ``options`` (unknown ones are an error);
        a multi-class model takes its number of classes from ``corpus`` when given."""
        known = self.options()
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ValueError(f"{self.name} has no option {', '.join(map(repr, unknown))}; its "
                             f"options: {', '.join(known)}")
        kwargs = {**{k: v for k, v in self.defaults.items()}, **options}
        if ("num_classes" in inspect.signature(self.factory).parameters and corpus is not None
                and corpus.num_classes):
            kwargs["num_classes"] = corpus.num_classes
        return self.factory(num_topics, **kwargs)

    def hyperparameters(self, num_topics: int, corpus=None, **options) -> dict:
        """The settings a fit of this entry runs with, as flat JSON-able facts: the built
        model's ``describe()`` without its name and K and, for a setting relative to the
        responses (``relative=True``: the sHDP's default s2 and c), its value in response units
        on ``corpus``'s labels (the response's ``in_force``: ``noise_variance``,
        ``c_in_force``)."""
        model = self.build(num_topics, corpus, **options)
        out = {k: v for k, v in model.describe().items() if k not in ("model", "num_topics")}
        response = getattr(model, "response", None)
        if getattr(response, "relative", False) and corpus is not None:
            task = task_of(model, corpus)
            out.update(response.in_force(response.encode(task.to_tasks(corpus.labels))))
        return out

    def check_sampler(self, num_topics: int, sampler: str, **options) -> str:
        """The canonical name of ``sampler`` for the model :meth:`build` makes, or the
        ValueError of a bad one, naming this entry when its topic model has another name
        (``hdp-glm``'s is ``hdp``)."""
        head = sampler.split(":", 1)[0].strip() if isinstance(sampler, str) else None
        if head in REGISTRY:
            raise ValueError(f"the sampler {sampler!r} starts with a model name: a sampler is "
                             f"SAMPLER[:OPTIONS] (exact, light, light:mh_steps=4); "
                             f"MODEL:SAMPLER is the form of compare's --sampler")
        model = self.build(num_topics, **options)
        try:
            return model.sampler(sampler, 1).name
        except ValueError as err:
            if model.name == self.name:
                raise
            raise ValueError(f"{self.name} (its topic model: {model.name}): {err}") from None


_BINARY = ("binary", "multilabel")

#: Every named model, in the order README lists them.
REGISTRY = {entry.name: entry for entry in (
    ModelEntry("lda", lda, "latent Dirichlet allocation (unsupervised)"),
    ModelEntry("unigram-mixture", unigram_mixture,
               "mixture of unigrams, one topic per document (unsupervised)"),
    ModelEntry("lda-svm", lda, "LDA, then a linear SVM on topic proportions (two-step baseline)",
               ("binary",), "two-step", second_step="linear-svm"),
    ModelEntry("gslda", gslda, "logistic sLDA with constant c, Polya-Gamma augmentation",
               _BINARY),
    ModelEntry("medlda", medlda, "Gibbs MedLDA, hinge loss with cost c and margin ell", _BINARY),
    ModelEntry("gslda-multitask", gslda_multitask,
               "multi-task logistic sLDA, one task per class, argmax", ("multiclass",)),
    ModelEntry("medlda-multitask", medlda_multitask,
               "multi-task Gibbs MedLDA, one task per class, argmax", ("multiclass",)),
    ModelEntry("gslda-ova", gslda, "one-vs-all binary gSLDA models, argmax", ("multiclass",),
               "one-vs-all"),
    ModelEntry("medlda-ova", medlda, "one-vs-all binary Gibbs MedLDA models, argmax",
               ("multiclass",), "one-vs-all", {"ell": 64.0}),
    ModelEntry("medlda-regression", medlda_regression,
               "Gibbs MedLDA regression, epsilon-insensitive loss", ("regression",)),
    ModelEntry("slda-gaussian", slda_gaussian,
               "sLDA with a Gaussian response, noise variance fixed or sampled",
               ("regression",)),
    ModelEntry("hdp", hdp, "hierarchical Dirichlet process (unsupervised; --topics: initial)"),
    ModelEntry("shdp-gaussian", shdp_gaussian,
               "supervised HDP, Gaussian response (--topics: initial number)", ("regression",)),
    ModelEntry("shdp-regression", shdp_regression,
               "supervised HDP, epsilon-insensitive loss", ("regression",)),
    ModelEntry("shdp-logistic", shdp_logistic, "supervised HDP, logistic response with c",
               _BINARY),
    ModelEntry("shdp-hinge", shdp_hinge, "supervised HDP, hinge loss (max margin)", _BINARY),
    ModelEntry("shdp-multitask", shdp_multitask,
               "supervised HDP, one hinge task per class, argmax", ("multiclass",)),
    ModelEntry("shdp-map", shdp_map,
               "supervised HDP, Gaussian response, eta set to its MAP given Z (paper's variant)",
               ("regression",)),
    ModelEntry("hdp-glm", hdp, "HDP, then ridge / logistic regression on topic proportions "
               "(two-step baseline)", ("regression", "binary"), "two-step",
               second_step="glm"),
)}


#: What ``topiczoo fit`` runs when no ``--model`` is given.
DEFAULT_MODEL = "medlda"


def get(name: str) -> ModelEntry:
    """The entry called ``name``; ``ValueError`` listing the known names otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(REGISTRY)}") from None
