"""Responses in Gaussian form (DESIGN.md, "The one idea that unifies every response").

Write a document's linear score ``omega_d = eta . zbar_d``. Given its augmentation variables,
every response contributes one factor of the same form

    exp( psi_d * omega_d  -  rho_d * omega_d**2 / 2 ),

so a single eta update and a single topic sampler serve every model. A response here says:

* how its labels are validated and coded (``encode``),
* its augmentation draw given omega (``draw_augmentation``),
* the Gaussian-form coefficients ``(psi, rho)`` given the augmentation (``gaussian_form``),
* its ORIGINAL, un-augmented log pseudo-likelihood (``log_pseudo_likelihood``), which the
  enumeration tests integrate and the monitors report as the training loss,
* its numpyro statement for the generative declarations in ``topiczoo.models`` (``declare``),
* and how a score becomes a prediction (``decide``).

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from topiczoo.kernels.variates import inverse_gaussian, polya_gamma

# Margins |zeta| below this are treated as this: the IG mean 1/(c |zeta|) stays finite in
# float32 (it is reached with probability ~0 for continuous omega).
_MIN_MARGIN = 1e-12


def _check_positive(name, value):
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _binary_labels(y) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim == 1:
        y = y[None, :]
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        bad = np.argwhere(~np.isfinite(y))[0]
        raise ValueError(f"labels must be finite; found {y[tuple(bad)].item()!r} at document {bad[-1]}")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"binary labels must be numeric 0/1, got dtype {y.dtype}")
    bad = ~np.isin(y, (0, 1))
    if bad.any():
        idx = np.argwhere(bad)[0]
        raise ValueError(
            f"binary labels must be 0 or 1; found {y[tuple(idx)].item()!r} at document {idx[-1]}"
        )
    return y.astype(np.float32)


@dataclass(frozen=True)
class Logistic:
    """Logistic response with regularisation constant ``c`` (gSLDA); labels y in {0, 1}.

    Augmentation: lambda ~ PG(c, omega) (Polya-Gamma, exact sampler for the c in use).
    """

    c: float = 1.0
    name = "logistic"

    def __post_init__(self):
        c = _check_positive("c", self.c)
        if c != round(c):
            raise ValueError(
                f"the logistic response needs a whole-number c (got {c}): no exact Polya-Gamma "
                "sampler exists here for fractional shape (see topiczoo.kernels.variates)"
            )
        object.__setattr__(self, "c", c)

    def encode(self, y) -> np.ndarray:
        """Validate labels (array [D] or [T, D] of 0/1) and return float32 [T, D]."""
        return _binary_labels(y)

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

    def decide(self, omega):
        """Predicted labels {0, 1} from scores omega."""
        return (omega > 0).astype(jnp.int32)

    def correct(self, y, omega):
        """Whether the decision from omega matches the coded label y (bool, y's shape)."""
        return self.decide(omega) == y

    def probability(self, omega):
        """p(y = 1 | omega) = sigmoid(omega)."""
        return jax.nn.sigmoid(omega)


@dataclass(frozen=True)
class Hinge:
    """Hinge loss of Gibbs MedLDA with cost ``c`` and margin ``ell``; labels y in {0, 1}
    (coded as -1 / +1). Pseudo-likelihood exp(-2 c max(0, ell - y omega)).

    Augmentation state: gamma = 1/lambda ~ IG(1 / (c |zeta|), 1).
    """

    c: float = 1.0
    ell: float = 164.0
    name = "hinge"

    def __post_init__(self):
        object.__setattr__(self, "c", _check_positive("c", self.c))
        object.__setattr__(self, "ell", _check_positive("ell", self.ell))

    def encode(self, y) -> np.ndarray:
        return 2.0 * _binary_labels(y) - 1.0

    def init_augmentation(self, y):
        return jnp.ones_like(y)  # lambda = 1

    def draw_augmentation(self, key, y, omega, augmentation):
        zeta = self.ell - y * omega
        mean = 1.0 / (self.c * jnp.maximum(jnp.abs(zeta), _MIN_MARGIN))
        return inverse_gaussian(key, mean, 1.0)

    def gaussian_form(self, y, augmentation):
        c = self.c
        return c * y + c * c * self.ell * y * augmentation, c * c * augmentation

    def log_pseudo_likelihood(self, y, omega):
        return -2.0 * self.c * jnp.maximum(0.0, self.ell - y * omega)

    def declare(self, omega, y):
        if y is None:
            raise ValueError("the hinge response is a pseudo-likelihood: y must be given")
        numpyro.factor("y_pseudo_likelihood", self.log_pseudo_likelihood(y, omega).sum())
        return y

    def decide(self, omega):
        """Predicted labels {0, 1} from scores omega."""
        return (omega > 0).astype(jnp.int32)

    def correct(self, y, omega):
        """Whether the decision from omega matches the coded label y in {-1, +1}."""
        return self.decide(omega) == (y > 0)


RESPONSES = {"logistic": Logistic, "hinge": Hinge}
