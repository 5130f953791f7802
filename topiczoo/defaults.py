"""The run's defaults shared by every interface: ``topiczoo fit``, :func:`topiczoo.fit.fit`,
the scikit-learn estimators (:mod:`topiczoo.estimators`) and ``topiczoo compare``
(:class:`topiczoo.compare.Grid`) read them from here, so that one command, one call and one
estimator left at their defaults run the same chains.

Why these values, for a first run:

* :data:`NUM_CHAINS` = 4. The label-invariant monitors' rank-normalised R-hat and ESS compare
  chains, and four is the usual number for them (Vehtari et al. 2021 recommend at least four;
  the sHDP paper's Gelman-Rubin figure runs four): with two, a stuck chain is one of two
  opinions and R-hat has little to go on. The multiple-average predictions also pool the
  snapshots of every chain, so more chains average more. On the 2-core machine of the
  README, four chains of the built-in BBC corpus (112k tokens) take about 7 s.
* :data:`NUM_ITERATIONS` = 100 Gibbs cycles per chain, half of them burn-in. Enough for the
  test accuracy of the binary corpora to settle (the first run of the README: 0.98 on BBC),
  short enough for a first look in seconds; not enough for the chains to agree on the
  log-likelihood, which the R-hat column of the summary says. Run longer
  (``num_iterations``, ``--iterations``), or until the chains agree (``until_rhat``,
  ``--until-rhat``), when the posterior matters: the papers ran 200-1,000 iterations.
"""

from __future__ import annotations

__all__ = ["NUM_CHAINS", "NUM_ITERATIONS"]

#: chains of a run (``fit(num_chains=)``, ``--chains``, the estimators' and compare's)
NUM_CHAINS = 4
#: Gibbs cycles per chain, burn-in included (``fit(num_iterations=)``, ``--iterations``, ...)
NUM_ITERATIONS = 100
