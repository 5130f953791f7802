"""What a model is: its hyperparameters, response and the Gibbs blocks that infer it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def _positive(name, value):
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


@dataclass(frozen=True)
class TopicModel:
    """A topic model to be inferred by the Gibbs kernel.

    Attributes:
      name: short name (``"lda"``, ``"gslda"``, ``"medlda"``).
      num_topics: K >= 1.
      alpha: total Dirichlet concentration of theta_d, as the papers write it: theta_d ~
        Dir(alpha/K 1_K). The per-topic value is :attr:`alpha_per_topic`.
      beta: per-word symmetric Dirichlet parameter of each topic's word distribution.
      nu2: prior variance of every entry of eta (supervised models only).
      response: a response from ``topiczoo.kernels.responses`` or None (unsupervised).
      blocks: the Gibbs blocks the kernel cycles through, in order.
      declaration: the numpyro model function stating the generative process.
    """

    name: str
    num_topics: int
    alpha: float
    beta: float
    nu2: float = 1.0
    response: object = None
    blocks: tuple = ("eta", "topics", "augmentation")
    declaration: object = field(default=None, compare=False)

    def __post_init__(self):
        if isinstance(self.num_topics, bool) or int(self.num_topics) != self.num_topics or self.num_topics < 1:
            raise ValueError(f"num_topics must be an integer >= 1, got {self.num_topics!r}")
        object.__setattr__(self, "num_topics", int(self.num_topics))
        for name in ("alpha", "beta", "nu2"):
            object.__setattr__(self, name, _positive(name, getattr(self, name)))
        if self.response is None:
            object.__setattr__(self, "blocks", tuple(b for b in self.blocks if b == "topics"))

    @property
    def alpha_per_topic(self) -> float:
        return self.alpha / self.num_topics

    @property
    def supervised(self) -> bool:
        return self.response is not None

    def describe(self) -> dict:
        """The model as flat JSON-able facts: name, K and every hyperparameter it uses
        (``{"model": "medlda", "num_topics": 20, "alpha": 1.0, "beta": 0.01, "nu2": 1.0,
        "response": "hinge", "c": 1.0, "ell": 164.0}``)."""
        out = {"model": self.name, "num_topics": self.num_topics, "alpha": self.alpha,
               "alpha_per_topic": self.alpha_per_topic, "beta": self.beta}
        if self.response is not None:
            out.update(nu2=self.nu2, response=self.response.name)
            for name in ("c", "ell", "eps", "s2", "learn_s2", "a0", "b0", "num_classes"):
                if hasattr(self.response, name):
                    out[name] = getattr(self.response, name)
        return out
