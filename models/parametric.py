"""The parametric family: LDA and supervised LDA with K topics and a Gaussian-form response.

A :class:`TopicModel` states its hyperparameters, its response and its numpyro declaration,
and builds its samplers (``kernels.gibbs.Sampler``) as closures over itself:

* ``"exact"``: the papers' sampler, a cycle of three exact conditional blocks: eta given the
  rest (one Gaussian draw, ``kernels.eta``), Z given the rest (the collapsed sweep,
  ``kernels.assignments.collapsed_assignments_step``), the augmentation given the rest
  (``response.draw_augmentation``).
  Options (``eta=``): ``cholesky`` (default; float64 on the host from sparse zbar rows,
  ``kernels.eta.draw_eta_cholesky``), ``qr`` (the same conditional by a float32 QR in XLA,
  ``draw_eta``: no host callback, less accurate) or ``coordinate`` (coordinate-wise Gibbs,
  float64 on the host, ``draw_eta_coordinatewise``).
* ``"light"`` (LightMedLDA): the same cycle with blocks whose cost does not grow with K per
  token: eta by coordinate-wise Gibbs (``kernels.eta.draw_eta_coordinatewise``, float64 on
  the host, O(sum_d nnz_d) per task), Z by the light Metropolis-Hastings sweep
  (``kernels.light.light_assignments_step``), the same augmentation draw. Each block leaves
  the posterior invariant, so the cycle targets the same posterior as the exact sampler.
  Below :data:`MH_FROM_TOPICS` topics, where the exact sweep's K weights a token cost less
  than the Metropolis-Hastings steps, ``light`` with no option is the exact sampler, bit for
  bit (option ``z_draw``: ``auto``, the default, or ``mh``, LightMedLDA at every K;
  :meth:`SamplerOptions.runs_as`).
* ``"parallel"`` (document-parallel, partially collapsed): the exact sampler's cycle with Z
  drawn by ``kernels.parallel.parallel_assignments_step``: the topics Phi drawn from their
  Dirichlet conditional, then every document at once given Phi (on every core: the draws are
  the same whatever the number of threads). Options (``eta=``) as the exact sampler's, and
  ``z=``: ``host`` (the numba step on the host's cores; the default on CPUs) or ``jax``
  (``kernels.parallel_jax``: the documents in length buckets, vmapped, sharded over every
  device JAX sees; the default on GPUs). The draws do not depend on the number of threads or
  devices, but the two engines draw different (equally exact) chains.

Every sampler runs its chains' host steps on ``num_threads`` threads (the parallel sampler its
documents; the others their chains): the draws do not depend on the number.

The exact sampler runs as replica exchange with ``"exact:replicas=R"`` (``hottest=``: the
hottest replica's power, default 0.5): each chain is R replicas whose word likelihood p(W | Z)
is raised to powers from 1 down to ``hottest``, with exact swaps of neighbours
(``kernels.tempering``); the cold replica's draws are the chain's. With ``"exact:anneal=A"``
(``anneal_from=``: the first power, default 0.3) each chain's first A iterations are an
annealed burn-in, p(W | Z)'s power rising from ``anneal_from`` to 1, and the exact cycle runs
from then on.

Sampler options are part of the sampler's name (:func:`sampler_options`), so that ``fit``,
the command line (``--sampler``) and checkpoints carry them as one string:
``"light:mh_steps=3,proposals=cycle,eta_sweeps=2"``, ``"light:z_draw=mh"``, ``"exact:eta=qr"``.

State (both samplers): :class:`ParametricState`, the topic assignments z and their document
counts n_dk, eta [T, K] and the response's augmentation variables; no V x K array (each Z step
rebuilds the counts from z on the host, ``kernels.assignments``). Snapshots for prediction are
the topic-word counts and eta; held-out documents are scored by test chains with Phi-hat fixed
(JMLR eq. 15).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from topiczoo.kernels.assignments import (assignments_log_likelihood,
                                          collapsed_assignments_step, log_likelihood_differences)
from topiczoo.kernels.eta import draw_eta, draw_eta_cholesky, draw_eta_coordinatewise
from topiczoo.kernels.gibbs import CorpusData, Sampler
from topiczoo.kernels.host import available_cores
from topiczoo.kernels.light import light_assignments_step
from topiczoo.kernels.parallel import parallel_assignments_step
from topiczoo.kernels.parallel_jax import jax_assignments_step, length_buckets
from topiczoo.kernels.tempering import (AnnealedState, Tempering, TemperedState, annealed,
                                        annealed_chain, ladder, replica, replica_exchange,
                                        tempered_assignments_step)
from topiczoo.kernels.topics import (assignments_log_prior, prior_assignments,
                                     sample_test_topics, topic_proportions)
from topiczoo.models.checks import flag, positive_number, whole_number
from topiczoo.models.family import Predictor
from topiczoo.models.monitors import PARAMETRIC_MONITORS
from topiczoo.models.responses import response_facts
from topiczoo.models.supervised import (augmentation_block, eta_block, gaussian_form,
                                        snapshot_parameters, supervised_log_joint,
                                        supervised_monitors)
from topiczoo.models.tasks import Task


class ParametricState(NamedTuple):
    """State of one chain of the parametric family (either sampler). No V x K array: each Z
    step rebuilds the counts from z on the host (``kernels.assignments``).

    z:              int32 [N] topic assignments
    n_dk:           int32 [D, K] document-topic counts of z (for zbar)
    words:          int32 [N] the training tokens' word ids, carried so that the snapshot
                    (which sees the state alone) can rebuild n_wk from z
    log_likelihood: float32 [] log p(W | Z) in nats, computed by the Z step's host side in O(N)
    eta:            float32 [T, K] classifier weights (T = 0 for LDA)
    augmentation:   float32 [T, D] (or [T, D, 2]) the response's augmentation variables
    """

    z: jax.Array
    n_dk: jax.Array
    words: jax.Array
    log_likelihood: jax.Array
    eta: jax.Array
    augmentation: jax.Array


def upgrade_checkpoint_state(named: dict, data: CorpusData) -> dict:
    """The state leaves of a checkpoint (``keystr`` path -> array [C, ...]) in the current
    :class:`ParametricState` layout. The exact sampler's first state layout held the counts
    beside z (``.state.topics``: z, n_dk, n_wk, n_k) next to eta and the augmentation: z and
    n_dk move up, n_wk and n_k (functions of z) are dropped, the words are the data's and
    log p(W | Z) is the draw's monitor (the value of that z, computed from its counts).
    An annealed run's state (``exact:anneal=A``) is its chain's
    (``kernels.tempering.annealed_chain``), so any sampler of the family goes on from it.
    Anything else (the current layout, or a part missing) is returned as it is."""
    named = annealed_chain(named)
    old = (".state.topics.z", ".state.topics.n_dk", ".info['log_likelihood']")
    if not all(k in named for k in old):
        return named
    out = {k: v for k, v in named.items() if not k.startswith(".state.topics.")}
    z = named[".state.topics.z"]
    out[".state.z"], out[".state.n_dk"] = z, named[".state.topics.n_dk"]
    out[".state.words"] = np.broadcast_to(np.asarray(data.words), z.shape)
    out[".state.log_likelihood"] = named[".info['log_likelihood']"]
    return out


@dataclass(frozen=True)
class SamplerOptions:
    """A parametric sampler and its options (parsed from a name by :func:`sampler_options`).

    name: ``"exact"``, ``"light"`` or ``"parallel"``.
    eta: exact and parallel: ``"cholesky"`` (default: an independent Gaussian draw of each task's eta
      in float64 on the host from sparse zbar rows, O(sum_d nnz_d^2 / 2 + K^3 / 3)), ``"qr"``
      (the same draw by a float32 QR in XLA, O((D + K) K^2); its mean can be off by a
      fraction of a posterior sd when rho spans many orders of magnitude,
      ``benchmarks/results/eta_precision.md``) or ``"coordinate"`` (coordinate-wise Gibbs in
      float64 on the host, O(sum_d nnz_d) per task and pass; light always uses it).
    eta_sweeps: passes of coordinate-wise Gibbs over eta per iteration (S_gibbs, default 1).
    z: parallel only: the engine of the Z step, ``"host"`` (numba, the host's cores) or
      ``"jax"`` (the documents sharded over the devices; :func:`sampler_options` makes it the
      default where JAX's default backend is a GPU).
    mh_steps: light only: Metropolis-Hastings steps per token (S_mh, default 6).
    proposals: light only: ``"mixture"`` (each step's proposal, document / word / response,
      drawn at random; default) or ``"cycle"`` (in turn, from the document proposal at each
      token's first step; needs mh_steps >= the number of proposals, 3, or 2 for LDA).
    z_draw: light only: ``"mh"`` (each token's topic by ``mh_steps`` Metropolis-Hastings
      steps, ``kernels.light``, at every K) or ``"auto"`` (default: the same from
      :data:`MH_FROM_TOPICS` topics on or where another light option is given other than its
      default; below, with none, the exact sampler, whose K weights a token cost less than
      the steps; :meth:`runs_as`).
    replicas: exact only: R >= 2 runs each chain as replica exchange (``kernels.tempering``):
      R replicas with p(W | Z) raised to the powers ``hottest``^(r / (R - 1)), exact swaps of
      neighbours after every cycle, the cold replica's draws the chain's; 1 (default): none.
    hottest: the hottest replica's power on p(W | Z), in (0, 1) (default 0.5).
    anneal: exact only: A >= 1 anneals each chain's first A iterations (``kernels.tempering.
      annealed``): p(W | Z) raised to a power rising linearly from ``anneal_from`` to 1, the
      exact cycle from iteration A + 1 on; those A draws are burn-in (``fit`` refuses a
      ``num_burnin`` below them). 0 (default): none. Not with ``replicas``.
    anneal_from: the anneal's first power on p(W | Z), in (0, 1) (default 0.3).
    """

    name: str = "exact"
    eta: str = "cholesky"
    eta_sweeps: int = 1
    z: str = "host"
    mh_steps: int = 6
    proposals: str = "mixture"
    z_draw: str = "auto"
    replicas: int = 1
    hottest: float = 0.5
    anneal: int = 0
    anneal_from: float = 0.3

    def spec(self) -> str:
        """The canonical name: the sampler, then its options that differ from the defaults
        (``"light"``, ``"light:mh_steps=3,proposals=cycle"``, ``"exact:eta=coordinate"``)."""
        default = SamplerOptions(self.name)
        changed = [f"{key}={getattr(self, key)}" for key in _OPTIONS[self.name]
                   if getattr(self, key) != getattr(default, key)]
        return self.name + (":" + ",".join(changed) if changed else "")

    def runs_as(self, num_topics: int) -> SamplerOptions:
        """The sampler whose blocks run at K = ``num_topics``: these options, except for
        ``light`` with no option below :data:`MH_FROM_TOPICS` topics (``z_draw="auto"``),
        which runs as the exact sampler (``SamplerOptions("exact")``)."""
        if self == SamplerOptions("light") and num_topics < MH_FROM_TOPICS:
            return SamplerOptions("exact")
        return self


# option -> (allowed values, or None for an integer in [1, _MAX_COUNT]), per sampler
_OPTIONS = {
    "exact": {"eta": ("cholesky", "qr", "coordinate"), "eta_sweeps": None, "replicas": None,
              "hottest": float, "anneal": None, "anneal_from": float},
    "light": {"mh_steps": None, "proposals": ("mixture", "cycle"), "eta_sweeps": None,
              "z_draw": ("auto", "mh")},
    "parallel": {"eta": ("cholesky", "qr", "coordinate"), "eta_sweeps": None,
                 "z": ("host", "jax")},
}


_MAX_COUNT = 1000  # MH steps per token, eta sweeps per iteration: more is a mistake

#: The light sampler's ``z_draw="auto"`` draws tokens by Metropolis-Hastings steps from this
#: many topics on, and runs as the exact sampler below (the collapsed sweep's K weights a token
#: and the Cholesky eta draw), where the 6 steps a token cost more than the K weights.
#: Iterations of the two, one thread, exact / light's steps (``benchmarks/light_vs_exact_step.py
#: --samplers exact light:z_draw=mh``, ``benchmarks/results/light_crossover.*.txt``): on 20news
#: with 20 tasks (130 tokens a document) 0.66 at K = 150, 1.00 at 250, 1.28 at 350; on the long
#: documents of ``studies/modes_long_documents.py`` (8 tasks, 2,000 tokens) 0.40 at K = 20,
#: 0.72 at 150, 1.03 at 250, 1.28 at 350.
MH_FROM_TOPICS = 256


def _option_help(sampler: str) -> str:
    return ", ".join(f"{key}=" + ("<number in (0, 1)>" if allowed is float else
                                  "|".join(allowed) if allowed else f"<integer 1-{_MAX_COUNT}>")
                     for key, allowed in _OPTIONS[sampler].items())


def sampler_options(spec: str, samplers=("exact", "light", "parallel")) -> SamplerOptions:
    """Parse a sampler name with options, ``"name"`` or ``"name:key=value,key=value"``.

    Options: exact and parallel: ``eta`` (cholesky|qr|coordinate), ``eta_sweeps`` (passes of
    coordinate-wise eta, an integer in [1, 1000]); parallel: ``z`` (host|jax; default jax
    where JAX's default backend is a GPU, so that the canonical name says which ran); light:
    ``mh_steps`` (an integer in [1, 1000]), ``proposals`` (mixture|cycle), ``eta_sweeps``,
    ``z_draw`` (auto|mh); exact: ``replicas`` (an integer), ``hottest`` (a number in (0, 1)),
    ``anneal`` (an integer), ``anneal_from`` (a number in (0, 1)). Raises ``ValueError``
    naming the bad part and the allowed values.
    """
    if not isinstance(spec, str):
        raise ValueError(f"sampler must be a string such as 'light' or "
                         f"'light:mh_steps=2', got {spec!r}")
    name, colon, rest = spec.strip().partition(":")
    name = name.strip()
    if name not in samplers:
        raise ValueError(f"unknown sampler {name!r}; choose from {', '.join(samplers)}")
    values = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or key not in _OPTIONS[name]:
            raise ValueError(f"sampler {name}: bad option {item!r}; its options: "
                             f"{_option_help(name)}")
        if key in values:
            raise ValueError(f"sampler {name}: option {key} given twice")
        allowed = _OPTIONS[name][key]
        if allowed is float:
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            if not 0.0 < number < 1.0:
                raise ValueError(f"sampler {name}: {key} must be a number in (0, 1), got "
                                 f"{value!r}")
            values[key] = number
        elif allowed is None:
            if not (value.isascii() and value.isdigit() and 1 <= int(value) <= _MAX_COUNT):
                raise ValueError(f"sampler {name}: {key} must be an integer in [1, "
                                 f"{_MAX_COUNT}], got {value!r}")
            values[key] = int(value)
        elif value not in allowed:
            raise ValueError(f"sampler {name}: {key} must be one of {', '.join(allowed)}, "
                             f"got {value!r}")
        else:
            values[key] = value
    if colon and not values:
        raise ValueError(f"sampler {name}: empty option list after ':' in {spec!r}")
    eta = values.get("eta", SamplerOptions.eta)
    if name != "light" and eta != "coordinate" and "eta_sweeps" in values:
        raise ValueError(f"sampler {name}: eta_sweeps needs eta=coordinate (the QR and Cholesky "
                         "draws are independent draws, not sweeps)")
    if name == "parallel" and "z" not in values and jax.default_backend() == "gpu":
        values["z"] = "jax"
    if "hottest" in values and values.get("replicas", 1) < 2:
        raise ValueError("sampler exact: hottest needs replicas >= 2 (replica exchange)")
    if "anneal_from" in values and "anneal" not in values:
        raise ValueError("sampler exact: anneal_from needs anneal (the annealed iterations)")
    if "anneal" in values and values.get("replicas", 1) > 1:
        raise ValueError("sampler exact: anneal and replicas are two uses of the tempered "
                         "cycle; choose one")
    return SamplerOptions(name, **values)


@dataclass(frozen=True)
class TopicModel:
    """A parametric topic model: LDA, or supervised LDA with a Gaussian-form response.

    Attributes:
      name: short name (``"lda"``, ``"gslda"``, ``"medlda"``, ...).
      num_topics: K >= 1.
      alpha: total Dirichlet concentration of theta_d, as the papers write it: theta_d ~
        Dir(alpha/K 1_K). The per-topic value is :attr:`alpha_per_topic`.
      beta: per-word symmetric Dirichlet parameter of each topic's word distribution.
      nu2: prior variance of every entry of eta (supervised models only).
      response: a response of ``topiczoo.models.responses`` or None (unsupervised).
      tasks: the label kinds the model accepts (``topiczoo.models.tasks.KINDS``), in order of
        preference; empty for unsupervised models.
      num_classes: the number of classes of a multi-class model (None: the corpus's).
      center: regression only: fit y - mean(y_train) and add the mean back to predictions
        (``Task.offset``), since omega = eta . zbar has no intercept.
      declaration: the numpyro model function stating the generative process.
    """

    name: str
    num_topics: int
    alpha: float
    beta: float
    nu2: float = 1.0
    response: object = None
    tasks: tuple = ()
    num_classes: int | None = None
    center: bool = False
    declaration: object = field(default=None, compare=False)

    #: The samplers this family offers, by name (``fit(..., sampler=...)``; options after a
    #: colon, :func:`sampler_options`).
    samplers = ("exact", "light", "parallel")

    def __post_init__(self):
        object.__setattr__(self, "num_topics", whole_number("num_topics", self.num_topics, 1))
        for name in ("alpha", "beta", "nu2"):
            object.__setattr__(self, name, positive_number(name, getattr(self, name)))
        if self.num_classes is not None:
            object.__setattr__(self, "num_classes",
                               whole_number("num_classes", self.num_classes, 2))
        object.__setattr__(self, "center", flag("center", self.center))
        if (self.response is None) != (not self.tasks):
            raise ValueError("a model has a response exactly when it has tasks")

    @property
    def alpha_per_topic(self) -> float:
        """alpha / K: the symmetric Dirichlet parameter of theta_d."""
        return self.alpha / self.num_topics

    @property
    def supervised(self) -> bool:
        """Whether the model has a response."""
        return self.response is not None

    def describe(self) -> dict:
        """The model as flat JSON-able facts: name, K and every hyperparameter it uses
        (``{"model": "medlda", "num_topics": 20, "alpha": 1.0, "beta": 0.01, "nu2": 1.0,
        "response": "hinge", "c": 1.0, "ell": 164.0}``)."""
        out = {"model": self.name, "num_topics": self.num_topics, "alpha": self.alpha,
               "alpha_per_topic": self.alpha_per_topic, "beta": self.beta}
        if self.response is not None:
            out.update(nu2=self.nu2, **response_facts(self.response))
        if self.num_classes is not None:
            out["num_classes"] = self.num_classes
        if "regression" in self.tasks:
            out["center"] = self.center
        return out

    # ------------------------------------------------------------------ declaration
    def declaration_for(self, vocab_size: int):
        """The numpyro declaration as a function of a :class:`CorpusData`. Words or responses
        given as ``jax.ShapeDtypeStruct`` (shapes only) are drawn, not observed: the prior
        predictive (``numpyro.infer.Predictive``)."""
        spec = self

        def observed(a):
            return None if isinstance(a, jax.ShapeDtypeStruct) else a

        def declaration(data: CorpusData):
            kwargs = dict(doc_ids=data.doc_ids, num_docs=data.doc_offsets.shape[0] - 1,
                          num_topics=spec.num_topics, vocab_size=vocab_size,
                          alpha=spec.alpha_per_topic, beta=spec.beta, words=observed(data.words))
            if spec.response is not None:
                kwargs.update(nu2=spec.nu2, num_tasks=data.y.shape[0], y=observed(data.y))
            return spec.declaration(**kwargs)

        return declaration

    # ------------------------------------------------------------------ samplers
    def sampler(self, name: str, vocab_size: int, task: Task | None = None, *,
                num_threads: int | None = None) -> Sampler:
        """The named sampler (:attr:`samplers`, with options: :func:`sampler_options`) for a
        corpus of ``vocab_size`` words; its ``name`` is the canonical spelling. Its host steps
        run on ``num_threads`` threads (default: the cores this process may use,
        ``kernels.host.available_cores``); the draws do not depend on the number."""
        try:
            options = sampler_options(name, self.samplers)
        except ValueError as err:
            raise ValueError(f"{self.name}: {err}") from None
        if not self.supervised and (options.eta, options.eta_sweeps) != (
                SamplerOptions.eta, SamplerOptions.eta_sweeps):
            raise ValueError(f"{self.name} has no eta: the sampler options eta and eta_sweeps "
                             f"do not apply to it")
        kinds = 3 if self.supervised else 2  # document, word (, response) proposals
        if options.name == "light" and options.proposals == "cycle" and options.mh_steps < kinds:
            raise ValueError(f"{self.name}: sampler light: proposals=cycle makes each token's "
                             f"steps with the {kinds} proposals in turn from the first, so "
                             f"mh_steps={options.mh_steps} would never use the last; give "
                             f"mh_steps >= {kinds} or the mixture")
        if task is None and self.supervised:
            task = Task(self.tasks[0])
        threads = available_cores() if num_threads is None else whole_number(
            "num_threads", num_threads, 1)
        return _sampler(self, int(vocab_size), task, options, threads)

    # ------------------------------------------------------------------ prediction
    def predictor(self) -> Predictor:
        """Held-out documents are scored by test chains with the topics of one snapshot fixed
        and no response term (JMLR eq. 15)."""
        return _predictor(self.alpha_per_topic, self.beta)


def _phi_hat(beta, snapshot: dict) -> np.ndarray:
    """Posterior-mean topics given a snapshot's counts (``Snapshot.chain(c)``, or the whole
    ``Snapshot.arrays`` with a chain axis): float64 [..., V, K], columns summing to 1."""
    n_wk, n_k = snapshot["n_wk"], snapshot["n_k"]
    return (n_wk + beta) / (n_k[..., None, :] + n_wk.shape[-2] * beta)


def _train_proportions(state: ParametricState) -> np.ndarray:
    """zbar of the training documents in ``state`` (one chain of any sampler; of replica
    exchange, the cold replica's): float32 [D, K]."""
    if isinstance(state, TemperedState):
        state = replica(state)
    elif isinstance(state, AnnealedState):
        state = state.chain
    return np.asarray(topic_proportions(jnp.asarray(state.n_dk)))


@lru_cache(maxsize=128)
def _predictor(alpha_per_topic: float, beta: float) -> Predictor:
    phi_hat = partial(_phi_hat, beta)

    def test_proportions(snapshot: dict, corpus, *, num_burnin: int, num_draws: int, lag: int,
                         seed: int) -> np.ndarray:
        """zbar draws [J, D, K] of ``corpus``'s documents from a test chain with the topics of
        one chain's ``snapshot`` fixed and no response term (JMLR eq. 15)."""
        return sample_test_topics(corpus.words, corpus.doc_offsets, phi_hat(snapshot),
                                  alpha_per_topic, num_burnin=num_burnin, num_draws=num_draws,
                                  lag=lag, seed=seed)

    return Predictor(phi_hat, _train_proportions, test_proportions)


def log_joint(model: TopicModel, state: ParametricState, data) -> jax.Array:
    """The log joint density of a chain's state, float32 [] nats, label-invariant: log p(W | Z)
    (the state's) + log p(Z | alpha) (theta integrated out) + log p(eta) + the response's
    un-augmented log (pseudo-)likelihood of the labels (+ s2's log prior where drawn;
    ``models.supervised.supervised_log_joint``). Up to a constant, the log posterior density
    of (Z, eta) (and s2) that every sampler of the family targets."""
    out = state.log_likelihood + assignments_log_prior(state.n_dk, model.alpha_per_topic)
    return out + supervised_log_joint(model.response, state, data, _scores(state, data),
                                      model.nu2)


def _scores(state: ParametricState, data) -> jax.Array:
    """omega [T, D] = eta . zbar_d of the training documents."""
    return state.eta @ topic_proportions(state.n_dk).T


#: The named starts of the family's chains (``fit(init=...)``), the default first.
STARTS = ("dispersed", "uniform")


def _init_parts(model, key, data, start="dispersed"):
    """The common start of every sampler of the family: lambda = 1 (the response's initial
    augmentation) and

    * ``"dispersed"`` (the default): Z drawn from its prior p(Z | alpha)
      (``kernels.topics.prior_assignments``: each document's tokens on one or a few topics,
      at random, so chains start far apart), eta from its prior N(0, nu2 I);
    * ``"uniform"``: Z uniformly at random, eta = 0, as the papers (every chain starts with
      each document spread evenly over the topics).
    """
    response = model.response
    num_tasks = data.y.shape[0]
    if response is None and num_tasks:
        raise ValueError(f"responses y have shape {data.y.shape}; an unsupervised model "
                         "expects [0, D]")
    aug = response.init_augmentation(data.y) if response is not None else data.y
    if start == "uniform":
        z = jax.random.randint(key, data.words.shape, 0, model.num_topics, jnp.int32)
        return z, jnp.zeros((num_tasks, model.num_topics), jnp.float32), aug
    z_key, eta_key = jax.random.split(key)
    z = prior_assignments(z_key, data.doc_offsets, data.words.shape[0], model.num_topics,
                          model.alpha_per_topic)
    eta = jnp.sqrt(model.nu2) * jax.random.normal(eta_key, (num_tasks, model.num_topics))
    return z, eta.astype(jnp.float32), aug


def _eta_draw(model, options, num_threads):
    """How eta | Z, augmentation is drawn (``options.eta == "cholesky"``: float64 on the host,
    every one of the K topics drawn, an empty one from its prior; ``"qr"``: float32 QR in
    XLA) or ``options.eta_sweeps`` passes of coordinate-wise Gibbs (float64 on the host,
    ``kernels.eta``; the light sampler's always)."""
    eta = "coordinate" if options.name == "light" else options.eta

    def draw(key, state, data, psi, rho):
        if eta == "cholesky":
            return draw_eta_cholesky(key, state.z, data.doc_offsets, state.n_dk.sum(axis=0), psi,
                                     rho, model.nu2, skip_empty=False, num_threads=num_threads)
        if eta == "qr":
            return draw_eta(key, topic_proportions(state.n_dk), psi, rho, model.nu2)
        return draw_eta_coordinatewise(key, state.eta, state.z, data.doc_offsets, psi, rho,
                                       model.nu2, options.eta_sweeps, num_threads=num_threads)

    return draw


@lru_cache(maxsize=128)
def _sampler(model: TopicModel, vocab_size: int, task: Task | None,
             options: SamplerOptions = SamplerOptions(), num_threads: int = 1) -> Sampler:
    """The exact, the light or the parallel sampler (module docstring); cached, so equal models
    share one compiled kernel step. All hold a :class:`ParametricState` and differ in the Z step
    (the collapsed Gibbs sweep, the light Metropolis-Hastings sweep or the partially collapsed
    document-parallel step) and in the eta draw. Named by ``options``, it runs the blocks of
    ``options.runs_as(K)`` (``light`` below :data:`MH_FROM_TOPICS` topics: the exact ones)."""
    num_topics = model.num_topics
    name, options = options.spec(), options.runs_as(num_topics)
    devices = jax.devices() if options.z == "jax" else ()  # the JAX engine's documents' mesh
    mesh = jax.sharding.Mesh(np.array(devices), ("docs",)) if len(devices) > 1 else None

    def prepare(data: CorpusData) -> CorpusData:
        """The JAX engine's length buckets, each cut for the devices that share it."""
        return data._replace(buckets=jax.tree.map(jnp.asarray, length_buckets(
            np.asarray(data.doc_offsets), num_shards=len(devices))))

    def init(key, data: CorpusData, start=STARTS[0]) -> ParametricState:
        z, eta, aug = _init_parts(model, key, data, start)
        num_docs = data.doc_offsets.shape[0] - 1
        n_dk = jnp.zeros((num_docs, num_topics), jnp.int32).at[data.doc_ids, z].add(1)
        log_lik = assignments_log_likelihood(z, data.words, data.doc_offsets, model.beta,
                                             num_topics=num_topics, vocab_size=vocab_size,
                                             word_offsets=data.word_offsets,
                                             word_tokens=data.word_tokens)
        return ParametricState(z, n_dk, data.words, log_lik, eta, aug)

    def topics_block(key, state, data):
        """Z | eta, augmentation: one collapsed Gibbs sweep over all tokens (exact), one light
        sweep (``options.mh_steps`` Metropolis-Hastings steps per token, proposals
        ``options.proposals``) that leaves it invariant, or Phi | Z then Z | Phi (parallel)."""
        psi, rho = gaussian_form(model.response, state, data)
        args = (key, state.z, data.words, data.doc_offsets, state.eta, psi, rho,
                model.alpha_per_topic, model.beta)
        shared = dict(num_topics=num_topics, vocab_size=vocab_size, num_threads=num_threads,
                      word_offsets=data.word_offsets, word_tokens=data.word_tokens)
        if options.name == "light":
            z, n_dk, log_lik = light_assignments_step(
                *args, num_steps=options.mh_steps, combination=options.proposals,
                log_likelihood=True, **shared)
        elif options.name == "parallel" and options.z == "jax":
            if data.buckets is None:
                raise ValueError("sampler parallel:z=jax reads the documents' length buckets: "
                                 "run it on GibbsKernel.prepare(data)")
            z, n_dk, log_lik = jax_assignments_step(
                key, state.z, data.words, data.doc_ids, data.buckets, state.eta, psi, rho,
                model.alpha_per_topic, model.beta, num_topics=num_topics,
                vocab_size=vocab_size, mesh=mesh)
        elif options.name == "parallel":
            z, n_dk, log_lik = parallel_assignments_step(*args, **shared)
        else:
            z, n_dk, log_lik = collapsed_assignments_step(*args, log_likelihood=True, **shared)
        return state._replace(z=z, n_dk=n_dk, log_likelihood=log_lik)

    def monitors(state, data) -> dict:
        """log_likelihood: log p(W | Z), nats; log_joint: :func:`log_joint`; a supervised
        model's also those of ``models.supervised.supervised_monitors``. The same for every
        sampler of the family."""
        info = {"log_likelihood": state.log_likelihood,
                "log_joint": log_joint(model, state, data)}
        if model.response is not None:
            info.update(supervised_monitors(model.response, task, state, data,
                                            _scores(state, data)))
        return info

    def snapshot(state) -> dict:
        """n_wk [V, K] scattered from z (only at snapshot points), n_k [K], eta [T, K], and
        the response's parameters (the Gaussian's s2 [T])."""
        n_wk = jnp.zeros((vocab_size, num_topics), jnp.int32).at[state.words, state.z].add(1)
        return {"n_wk": n_wk, "n_k": state.n_dk.sum(axis=0), "eta": state.eta,
                **snapshot_parameters(model.response, state)}

    blocks = (topics_block,)
    if model.response is not None:
        blocks = (eta_block(model.response, _eta_draw(model, options, num_threads)), topics_block,
                  augmentation_block(model.response, _scores))
    sampler = Sampler(name, init, blocks, monitors, snapshot, PARAMETRIC_MONITORS,
                      upgrade=upgrade_checkpoint_state,
                      memory=partial(_memory, num_topics, options, model.supervised),
                      prepare=prepare if options.z == "jax" else None,
                      starts=tuple((name, partial(init, start=name)) for name in STARTS))
    if options.replicas > 1:
        return replica_exchange(sampler, _tempering(model, vocab_size, sampler),
                                ladder(options.replicas, options.hottest), name)
    if options.anneal:
        return annealed(sampler, _tempering(model, vocab_size, sampler), options.anneal,
                        options.anneal_from, name)
    return sampler


def _tempering(model, vocab_size, sampler) -> Tempering:
    """The tempered part of the exact ``sampler`` (``kernels.tempering``): its cycle with the
    Z block drawing from p(W | Z)^power (at power 1 the sampler's own block), log p(W | Z),
    and the replicas' differences of it summed in float64 on the host."""
    z_block = 1 if model.supervised else 0

    def tempered_topics(key, state, data, power):
        psi, rho = gaussian_form(model.response, state, data)
        z, n_dk, log_lik = tempered_assignments_step(
            key, state.z, data.words, data.doc_offsets, state.eta, psi, rho,
            model.alpha_per_topic, model.beta, power, num_topics=model.num_topics,
            vocab_size=vocab_size, word_offsets=data.word_offsets, word_tokens=data.word_tokens)
        return state._replace(z=z, n_dk=n_dk, log_likelihood=log_lik)

    def cycle(key, state, data, power):
        for i, (block, block_key) in enumerate(zip(sampler.blocks,
                                                   jax.random.split(key, len(sampler.blocks)))):
            if i != z_block:
                state = block(block_key, state, data)
            else:  # the cold replica's Z by the sampler's own (faster) sweep
                state = jax.lax.cond(power == 1.0, partial(block, block_key, data=data),
                                     partial(tempered_topics, block_key, data=data,
                                             power=power), state)
        return state

    def log_likelihood_gaps(replicas, data):
        """l_{r+1} - l_r of the replicas' log p(W | Z), summed in float64 on the host."""
        return log_likelihood_differences(
            replicas.z, data.words, data.doc_offsets, model.beta, num_topics=model.num_topics,
            vocab_size=vocab_size, word_offsets=data.word_offsets, word_tokens=data.word_tokens)

    return Tempering(cycle, lambda state, data: state.log_likelihood, log_likelihood_gaps)


def _memory(num_topics: int, options: SamplerOptions, supervised: bool, sizes: dict) -> dict:
    """Bytes of the largest arrays of a run (``Sampler.memory``): the chains' states (held
    about three times over by numpyro and the step), the host sweep's counts (one chain at a
    time), eta's factorisation, the snapshots and the per-draw eta."""
    k, c = num_topics, sizes["num_chains"]
    d, n, v = sizes["num_docs"], sizes["num_tokens"], sizes["vocab_size"]
    t = sizes["num_tasks"] if supervised else 0
    parts = {
        "the chains' states (z, n_dk [D, K], the augmentation)": 3 * c * (8 * n + 4 * d * k
                                                                          + 16 * t * d),
        "the host sweep's counts n_dk [D, K] per chain": 4 * c * d * k,
        "the snapshots (n_wk [V, K] per chain and snapshot)": 4 * c * (sizes["num_snapshots"]
                                                                       + 1) * v * k,
        "the per-draw eta [T, K]": 4 * c * sizes["num_draws"] * t * k,
    }
    if options.name == "parallel":  # its passes over the words count one word at a time
        parts["the topics Phi's Gamma draws [V, K] (float64)"] = 8 * v * k
    else:
        parts["the host sweep's counts n_wk [V, K]"] = 4 * v * k
    if options.replicas > 1 or options.anneal:
        parts["the tempered sweep's (n_wk + beta)^power [V, K] and (n + V beta)^-power "
              "[N + 1] (float64)"] = 8 * v * k + 8 * (n + 1)
    if t and options.name != "light" and options.eta == "cholesky":
        parts["eta's precision matrices [K, K, T] (float64)"] = 8 * k * k * (t + 1)
    elif t and options.name != "light" and options.eta == "qr":
        parts["eta's QR factorisation ([D + K] x K per task and chain)"] = 4 * c * t * (d + k) * k
    return parts
