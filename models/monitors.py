"""The names of the label-invariant monitors: quantities whose value does not depend on how the
topics are labelled, so that chains can be compared (R-hat, ESS, trace plots).

Every family's sampler declares its own (``Sampler.label_invariant``); the diagnostics fall back
to :data:`LABEL_INVARIANT` for a tree that does not.
"""

#: The response's label-invariant monitors (``models.supervised.supervised_monitors``).
SUPERVISED_MONITORS = ("eta_norm", "train_loss", "train_accuracy", "residual_norm", "train_mse",
                       "omega_mean_abs", "augmentation_mean")

#: The parametric family's: the log joint density of the state (``models.parametric.log_joint``),
#: log p(W | Z), then the response's.
PARAMETRIC_MONITORS = ("log_joint", "log_likelihood") + SUPERVISED_MONITORS

#: The sHDP's: the log joint density of the state (``models.shdp.log_joint``: the Chinese
#: restaurant franchise's terms included), log p(W | Z), the number of occupied topics and the
#: two concentrations, then the response's.
SHDP_MONITORS = (("log_joint", "log_likelihood", "num_topics", "alpha", "gamma")
                 + SUPERVISED_MONITORS)

#: The mixture of unigrams': the log joint density, log p(W | Z), the occupied topics.
MIXTURE_MONITORS = ("log_joint", "log_likelihood", "occupied_topics")

#: Every family's, in this order: the default of the diagnostics.
LABEL_INVARIANT = tuple(dict.fromkeys(PARAMETRIC_MONITORS + SHDP_MONITORS + MIXTURE_MONITORS))
