"""Responses in Gaussian form (``docs/design.md``, "One form for every response").

Write a document's linear score ``omega_d = eta . zbar_d``. Given its augmentation variables,
every response contributes one factor of the same form

    exp( psi_d * omega_d  -  rho_d * omega_d**2 / 2 ),

so a single eta update and a single topic sampler serve every model. A response here says:

* how 0/1 task labels or real responses are coded (``encode``; the labels were validated by
  the task, ``topiczoo.models.tasks``),
* its augmentation draw given omega (``draw_augmentation``),
* the Gaussian-form coefficients ``(psi, rho)`` given the augmentation (``gaussian_form``),
* its ORIGINAL, un-augmented log pseudo-likelihood (``log_pseudo_likelihood``), which the
  enumeration tests integrate and the monitors report as the training loss,
* and its numpyro statement for the generative declarations in ``topiczoo.models``
  (``declare``).

The regression responses can take a setting relative to the spread of the responses they fit
(``relative=True``: the Gaussian's s2 per variance, the epsilon-insensitive c per standard
deviation); ``in_force`` then says the value it took in response units.

How labels are validated, turned into tasks and how a score becomes a prediction is the
task's (``topiczoo.models.tasks``), not the response's.

Arrays carry a leading task axis: labels ``y`` and ``omega`` are float32 [T, D]; a binary model
has T = 1. Derivations (checked by the enumeration tests, not by the papers' printed equations,
which are inconsistent in c when c != 1):

Logistic (gSLDA), y in {0, 1}:  (e^omega)^(c y) / (1 + e^omega)^c
    = 2^-c e^(kappa omega) E_{lambda ~ PG(c, 0)} [e^(-lambda omega^2 / 2)],  kappa = c (y - 1/2)
    so  lambda | omega ~ PG(c, omega),  psi = c (y - 1/2),  rho = lambda.

Hinge (Gibbs MedLDA), y in {-1, +1} (coded from labels {0, 1}), zeta = ell - y omega:
    exp(-2c max(0, zeta)) = int_0^inf (2 pi lambda)^-1/2 exp(-(lambda + c zeta)^2 / (2 lambda)) dlambda
    expanding in omega (y^2 = 1):  psi = c y + c^2 ell y / lambda,  rho = c^2 / lambda,
    and  gamma = 1/lambda | omega ~ IG(mean 1 / (c |zeta|), shape 1).
    The state keeps gamma = 1/lambda, so no division appears.

epsilon-insensitive (MedLDA regression), real y:  exp(-2c max(0, |y - omega| - eps))
    = exp(-2c max(0, zeta1)) exp(-2c max(0, zeta2)),  zeta1 = y - omega - eps, zeta2 = omega - y - eps
    (at most one is positive), each augmented as the hinge: with gamma1 = 1/lambda, gamma2 = 1/mu,
    the linear terms +-c cancel and  psi = c^2 ((y - eps) gamma1 + (y + eps) gamma2),
    rho = c^2 (gamma1 + gamma2);  gamma_i | omega ~ IG(1 / (c |zeta_i|), 1).

Gaussian (sLDA), real y ~ N(omega, s2):  psi = y / s2,  rho = 1 / s2. The noise variance plays
    the augmentation's part: fixed, or drawn from its inverse-gamma conditional
    s2 | omega ~ IG(a0 + D/2, b0 + sum_d (y_d - omega_d)^2 / 2) (per task).

Several tasks (multi-task, one-vs-all labels of a multi-class problem) are T rows of y sharing
Z: every formula above is elementwise in (t, d), and the factors multiply over tasks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from topiczoo.kernels.variates import inverse_gaussian, polya_gamma
from topiczoo.models.checks import flag, positive_number

# Margins |zeta| below this are treated as this: the IG mean 1/(c |zeta|) stays finite in
# float32 (it is reached with probability ~0 for continuous omega).
_MIN_MARGIN = 1e-12


def _as_tasks(y) -> np.ndarray:
    """float32 [T, D] from [D] or [T, D] values."""
    y = np.asarray(y, np.float32)
    return y[None, :] if y.ndim == 1 else y


class Response(Protocol):
    """What every response provides (a ``typing.Protocol``, as ``models.family.ModelFamily``: a
    new response need not inherit; ours do, for the method docs). The module docstring explains
    the Gaussian form.
    Shapes: labels or responses ``y`` and scores ``omega`` are float32 [T, D] (T tasks, D
    documents), ``y`` coded by :meth:`encode`; the augmentation is [T, D] ([T, D, 2] for the
    epsilon-insensitive loss). Logarithms are natural (nats)."""

    name: str  # the response's short name in descriptions and summaries

    def encode(self, y) -> np.ndarray:
        """Validated labels or responses [D] or [T, D] -> the coded float32 [T, D]."""

    def init_augmentation(self, y):
        """The augmentation's start value for coded ``y`` [T, D]."""

    def draw_augmentation(self, key, y, omega, augmentation):
        """One exact draw of the augmentation given ``omega`` [T, D] (a jax PRNG ``key``;
        ``augmentation``: the current value, of the start value's shape)."""

    def gaussian_form(self, y, augmentation):
        """``(psi, rho)``, each [T, D]: given the augmentation, the response's factor is
        exp(psi * omega - rho * omega**2 / 2) for each task and document."""

    def log_pseudo_likelihood(self, y, omega):
        """The original, un-augmented log (pseudo-)likelihood of ``y`` given ``omega``, per
        task and document [T, D], in nats."""

    def log_target(self, y, omega, augmentation):
        """The response's terms of the log joint density of a chain's state (the
        ``log_joint`` monitor), float32 [] nats: the original, un-augmented log
        (pseudo-)likelihood summed over tasks and documents at the state's own parameters
        (the Gaussian's s2 held in ``augmentation``), plus the log prior of the parameters
        the response draws (the Gaussian's s2 ~ IG(a0, b0) when learned)."""

    def declare(self, omega, y):
        """The numpyro statement of ``y`` given ``omega`` [T, D] in a generative declaration
        (``y`` None: drawn, where the response is generative); returns ``y``."""

    def snapshot_parameters(self, augmentation) -> dict:
        """The response's own parameters in a chain's state, kept in its snapshots (the
        Gaussian's noise variance s2 [T]); ``{}`` for the others."""

    def log_density(self, y, omega, **parameters):
        """log p(y | omega), float64 [..., T, D], of a response that is a probability model
        (the logistic's Bernoulli, the Gaussian with ``s2`` of :meth:`snapshot_parameters`);
        ``ValueError`` for a pseudo-likelihood (hinge, epsilon-insensitive)."""


def log_sigmoid(x):
    """log sigmoid(x) = -log(1 + e^-x), without overflow (numpy, float64)."""
    return -np.logaddexp(0.0, -np.asarray(x, np.float64))


class _PseudoLikelihood:
    """A response whose factor is a pseudo-likelihood: no parameters of its own to keep, no
    density of the labels."""

    def snapshot_parameters(self, augmentation) -> dict:
        return {}

    def log_density(self, y, omega, **parameters):
        raise ValueError(f"the {self.name} response is a pseudo-likelihood: it has no "
                         "density of the labels")

    def log_target(self, y, omega, augmentation):
        """sum over tasks and documents of :meth:`log_pseudo_likelihood` (no parameters of
        its own)."""
        return jnp.sum(self.log_pseudo_likelihood(y, omega))


@dataclass(frozen=True)
class Logistic(Response):
    """Logistic response with regularisation constant ``c`` (gSLDA); labels y in {0, 1}.

    Augmentation: lambda ~ PG(c, omega) (Polya-Gamma, exact sampler for the c in use).
    """

    c: float = 1.0
    name = "logistic"

    def __post_init__(self):
        c = positive_number("c", self.c)
        if c != round(c):
            raise ValueError(
                f"the logistic response needs a whole-number c (got {c}): no exact Polya-Gamma "
                "sampler exists here for fractional shape (see topiczoo.kernels.variates)"
            )
        object.__setattr__(self, "c", c)

    def encode(self, y) -> np.ndarray:
        """0/1 labels [D] or [T, D] -> float32 [T, D] (the logistic response codes them as is)."""
        return _as_tasks(y)

    def init_augmentation(self, y):
        return jnp.ones_like(y)  # lambda = 1, as in the papers

    def draw_augmentation(self, key, y, omega, augmentation):
        return polya_gamma(key, self.c, omega)

    def gaussian_form(self, y, augmentation):
        return self.c * (y - 0.5), augmentation

    def log_pseudo_likelihood(self, y, omega):
        """c (y omega - log(1 + e^omega)): the log of (e^omega)^(c y) / (1 + e^omega)^c."""
        return self.c * (y * omega - jnp.logaddexp(0.0, omega))

    def declare(self, omega, y):
        """numpyro statement: generative Bernoulli when c = 1, else a pseudo-likelihood factor."""
        if self.c == 1.0:
            return numpyro.sample("y", dist.Bernoulli(logits=omega), obs=y)
        if y is None:
            raise ValueError("the c != 1 logistic response is a pseudo-likelihood: y must be given")
        numpyro.factor("y_pseudo_likelihood", self.log_pseudo_likelihood(y, omega).sum())
        return y

    def log_target(self, y, omega, augmentation):
        """sum over tasks and documents of :meth:`log_pseudo_likelihood`."""
        return jnp.sum(self.log_pseudo_likelihood(y, omega))

    def probability(self, omega):
        """p(y = 1 | omega) = sigmoid(omega)."""
        return jax.nn.sigmoid(omega)

    def snapshot_parameters(self, augmentation) -> dict:
        return {}

    def log_density(self, y, omega, **parameters):
        """The Bernoulli log-probability of 0/1 labels y at logit omega (the model gSLDA
        predicts with, whatever c): y log sigmoid(omega) + (1 - y) log sigmoid(-omega)."""
        y = np.asarray(y, np.float64)
        return y * log_sigmoid(omega) + (1.0 - y) * log_sigmoid(-np.asarray(omega))


def _draw_inverse_margin(key, c, zeta):
    """gamma = 1/lambda ~ IG(1 / (c |zeta|), 1): the hinge augmentation of exp(-2c max(0, zeta))."""
    return inverse_gaussian(key, 1.0 / (c * jnp.maximum(jnp.abs(zeta), _MIN_MARGIN)), 1.0)


def _declare_factor(log_pseudo_likelihood, omega, y, what):
    if y is None:
        raise ValueError(f"the {what} response is a pseudo-likelihood: y must be given")
    numpyro.factor("y_pseudo_likelihood", log_pseudo_likelihood(y, omega).sum())
    return y


@dataclass(frozen=True)
class Hinge(_PseudoLikelihood, Response):
    """Hinge loss of Gibbs MedLDA with cost ``c`` and margin ``ell``; labels y in {0, 1}
    (coded as -1 / +1). Pseudo-likelihood exp(-2 c max(0, ell - y omega)).

    Augmentation state: gamma = 1/lambda ~ IG(1 / (c |zeta|), 1).
    """

    c: float = 1.0
    ell: float = 164.0
    name = "hinge"

    def __post_init__(self):
        object.__setattr__(self, "c", positive_number("c", self.c))
        object.__setattr__(self, "ell", positive_number("ell", self.ell))

    def encode(self, y) -> np.ndarray:
        """0/1 labels [D] or [T, D] -> float32 [T, D] coded -1 / +1."""
        return 2.0 * _as_tasks(y) - 1.0

    def init_augmentation(self, y):
        return jnp.ones_like(y)  # lambda = 1

    def draw_augmentation(self, key, y, omega, augmentation):
        return _draw_inverse_margin(key, self.c, self.ell - y * omega)

    def gaussian_form(self, y, augmentation):
        c = self.c
        return c * y + c * c * self.ell * y * augmentation, c * c * augmentation

    def log_pseudo_likelihood(self, y, omega):
        return -2.0 * self.c * jnp.maximum(0.0, self.ell - y * omega)

    def declare(self, omega, y):
        return _declare_factor(self.log_pseudo_likelihood, omega, y, "hinge")


class _Regressor(Response):
    #: the setting ``relative=True`` makes relative to the responses' spread, and how
    _RELATIVE = ("", "")

    def encode(self, y) -> np.ndarray:
        """Real responses [D] or [T, D] -> float32 [T, D]; a relative setting needs every
        task's responses to vary (ValueError otherwise)."""
        y = _as_tasks(y)
        if getattr(self, "relative", False) and y.shape[-1] and np.any(np.var(y, axis=-1) <= 0):
            what, meaning = self._RELATIVE
            raise ValueError(f"a relative {what} ({meaning}) needs responses that vary; give an "
                             f"absolute {what}")
        return y


def _per_task(value):
    """A per-task constant ([T, 1] float32 array or a float) as a float (one task) or a list,
    to float32's 7 significant digits."""
    value = [float(f"{v:.7g}") for v in np.asarray(value, np.float64).ravel()]
    return value[0] if len(value) == 1 else value


@dataclass(frozen=True)
class EpsilonInsensitive(_PseudoLikelihood, _Regressor):
    """Gibbs MedLDA regression: pseudo-likelihood exp(-2 c max(0, |y - omega| - eps)).

    ``eps`` is in response units. ``relative=True``: ``c`` is per standard deviation of the
    responses the model fits (per task, over the training documents): the cost in force is
    ``c / sd(y_t)`` (:meth:`cost`), so the loss ``c |y - omega| / sd`` means the same on any
    rating scale. Augmentation state [T, D, 2]: (1/lambda, 1/mu), each inverse Gaussian (JMLR
    section 5.1).
    """

    c: float = 1.0
    eps: float = 1e-3
    relative: bool = False
    name = "epsilon_insensitive"
    _RELATIVE = ("c", "per standard deviation of the responses")

    def __post_init__(self):
        object.__setattr__(self, "c", positive_number("c", self.c))
        eps = float(self.eps)
        if not (math.isfinite(eps) and eps >= 0):
            raise ValueError(f"eps must be a finite number >= 0, got {self.eps!r}")
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "relative", flag("relative", self.relative))

    def cost(self, y):
        """The c in force for responses ``y`` [T, D]: ``c`` itself (a float), or ``c / sd(y_t)``
        [T, 1] when ``relative`` (per unit of response)."""
        if not self.relative:
            return self.c
        return self.c / jnp.std(jnp.asarray(y, jnp.float32), axis=-1, keepdims=True)

    def in_force(self, y) -> dict:
        """A relative c's value in response units for responses ``y`` [T, D] (``{"c_in_force":
        float or list per task}``); ``{}`` when c is absolute."""
        return {"c_in_force": _per_task(self.cost(y))} if self.relative else {}

    def init_augmentation(self, y):
        return jnp.ones(y.shape + (2,), y.dtype)

    def draw_augmentation(self, key, y, omega, augmentation):
        k1, k2 = jax.random.split(key)
        c = self.cost(y)
        return jnp.stack([_draw_inverse_margin(k1, c, y - omega - self.eps),
                          _draw_inverse_margin(k2, c, omega - y - self.eps)], axis=-1)

    def gaussian_form(self, y, augmentation):
        c = self.cost(y)
        c2 = c * c
        g1, g2 = augmentation[..., 0], augmentation[..., 1]
        return c2 * ((y - self.eps) * g1 + (y + self.eps) * g2), c2 * (g1 + g2)

    def log_pseudo_likelihood(self, y, omega):
        return -2.0 * self.cost(y) * jnp.maximum(0.0, jnp.abs(y - omega) - self.eps)

    def declare(self, omega, y):
        return _declare_factor(self.log_pseudo_likelihood, omega, y, "epsilon-insensitive")


@dataclass(frozen=True)
class Gaussian(_Regressor):
    """Gaussian response of sLDA: y ~ N(omega, s2).

    ``learn_s2=False``: s2 fixed at ``s2``. ``learn_s2=True``: s2 ~ InverseGamma(a0, b0) a
    priori and drawn from its conditional every sweep (per task); ``s2`` is its start value.
    ``relative=True``: ``s2`` is a multiple of the variance of the responses the model fits
    (per task, over the training documents, after any centring): the noise variance (fixed, or
    the start value) is ``s2 * var(y_t)``, so the setting means the same on any rating scale.
    The state keeps s2 broadcast over documents ([T, D]) as the augmentation.
    """

    s2: float = 1.0
    learn_s2: bool = False
    a0: float = 1.0
    b0: float = 0.01
    relative: bool = False
    name = "gaussian"
    _RELATIVE = ("s2", "a multiple of the responses' variance")

    def __post_init__(self):
        for name in ("s2", "a0", "b0"):
            object.__setattr__(self, name, positive_number(name, getattr(self, name)))
        object.__setattr__(self, "learn_s2", flag("learn_s2", self.learn_s2))
        object.__setattr__(self, "relative", flag("relative", self.relative))

    def in_force(self, y) -> dict:
        """A relative s2's value in response units for responses ``y`` [T, D]
        (``{"noise_variance": float or list per task}``, or ``"noise_variance_start"`` when
        ``learn_s2``: the draws then say what it became); ``{}`` when s2 is absolute."""
        if not self.relative:
            return {}
        key = "noise_variance_start" if self.learn_s2 else "noise_variance"
        return {key: _per_task(self.noise_variance(y))}

    def noise_variance(self, y):
        """The fixed (or start) s2 for responses ``y`` [T, D]: ``s2`` itself, or ``s2 *
        var(y_t)`` [T, 1] when ``relative`` (a float when not)."""
        if not self.relative:
            return self.s2
        if y is None:
            raise ValueError("a relative s2 (a multiple of the responses' variance) needs "
                             "observed responses y")
        return self.s2 * jnp.var(jnp.asarray(y, jnp.float32), axis=-1, keepdims=True)

    def init_augmentation(self, y):
        if self.relative:
            return jnp.broadcast_to(self.noise_variance(y), y.shape).astype(y.dtype)
        return jnp.full_like(y, self.s2)

    def draw_augmentation(self, key, y, omega, augmentation):
        if not self.learn_s2:
            return augmentation
        num_docs = y.shape[-1]
        shape = self.a0 + 0.5 * num_docs
        rate = self.b0 + 0.5 * jnp.sum((y - omega) ** 2, axis=-1)  # [T]
        s2 = rate / jax.random.gamma(key, shape, rate.shape, rate.dtype)
        return jnp.broadcast_to(s2[..., None], y.shape)

    def gaussian_form(self, y, augmentation):
        return y / augmentation, 1.0 / augmentation

    def snapshot_parameters(self, augmentation) -> dict:
        """``{"s2": [T]}``, the noise variance in force (drawn, fixed or relative)."""
        return {"s2": augmentation[..., 0]}

    def log_density(self, y, omega, *, s2=None, **parameters):
        """log N(y; omega, s2) per (task, document), float64; ``s2`` broadcasts against
        [..., T, D] (a snapshot's s2 [..., T] with a trailing document axis); without it the
        fixed absolute s2 (a drawn or relative one must be given)."""
        if s2 is None:
            if self.learn_s2 or self.relative:
                raise ValueError("this Gaussian response's s2 is drawn or relative to the "
                                 "responses: give the snapshot's s2")
            s2 = self.s2
        y, omega, s2 = (np.asarray(a, np.float64) for a in (y, omega, s2))
        return -0.5 * ((y - omega) ** 2 / s2 + np.log(2 * np.pi * s2))

    def log_pseudo_likelihood(self, y, omega, s2=None):
        """log N(y; omega, s2) per (task, document) at the fixed or start s2
        (:meth:`noise_variance` of ``y``) unless ``s2`` is given."""
        s2 = self.noise_variance(y) if s2 is None else s2
        return -0.5 * ((y - omega) ** 2 / s2 + jnp.log(2 * jnp.pi * s2))

    def log_target(self, y, omega, augmentation):
        """sum_td log N(y_td; omega_td, s2_t) at the state's s2 (``augmentation``, s2
        broadcast over documents: fixed, relative or drawn), plus sum_t log IG(s2_t; a0, b0)
        when s2 is drawn."""
        out = jnp.sum(self.log_pseudo_likelihood(y, omega, augmentation))
        if self.learn_s2:
            s2 = augmentation[..., 0]
            out += jnp.sum(self.a0 * math.log(self.b0) - math.lgamma(self.a0)
                           - (self.a0 + 1.0) * jnp.log(s2) - self.b0 / s2)
        return out

    def declare(self, omega, y):
        """numpyro statements: s2 (when learned) and the Gaussian likelihood of y."""
        if self.learn_s2:
            with numpyro.plate("noise_tasks", omega.shape[0], dim=-2):
                s2 = numpyro.sample("s2", dist.InverseGamma(self.a0, self.b0))
        else:
            s2 = self.noise_variance(y)
        return numpyro.sample("y", dist.Normal(omega, jnp.sqrt(s2)), obs=y)


def response_facts(response) -> dict:
    """The response's name and constants as flat facts (``{"response": "hinge", "c": 1.0,
    "ell": 164.0}``), for a model's ``describe()``."""
    from dataclasses import fields

    return {"response": response.name, **{f.name: getattr(response, f.name)
                                          for f in fields(response)}}


RESPONSES = {"logistic": Logistic, "hinge": Hinge, "epsilon_insensitive": EpsilonInsensitive,
             "gaussian": Gaussian}
