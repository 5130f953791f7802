"""The supervised hierarchical Dirichlet process (sHDP): its state and exact blocks.

Model (``topiczoo.models.shdp``, Dai and Storkey eqs 8-12): G0 ~ DP(gamma, H) with
H = Dir(beta 1_V) x N(0, nu2 I_T) (a topic's word distribution and its coefficient in each
task); G_d ~ DP(alpha, G0); each token draws a topic from G_d and a word from it; the response
of document d links y_d to omega_d = eta . zbar_d through ``response`` (any response of
``models/responses.py``: its Gaussian form exp(psi omega - rho omega^2 / 2) given the
augmentation). alpha and gamma are fixed, or Gamma(a, b) a priori (default Gamma(1, 1)).

Direct-assignment representation (Teh et al. 2006). The state holds the topic z of every
token with its counts, the stick weights beta_k of the occupied topics and the unrepresented
mass beta_new (so sum_k beta_k + beta_new = 1), eta of the occupied topics, alpha, gamma and
the response's augmentation. The target is

    pi(z, beta, eta, alpha, gamma)  propto  p(alpha) p(gamma) gamma^K beta_new^(gamma-1)
        prod_k beta_k^-1 N(eta_k; 0, nu2)
        prod_d [Gamma(alpha) / Gamma(alpha + N_d)
                prod_k Gamma(alpha beta_k + n_dk) / Gamma(alpha beta_k)]
        prod_k [Gamma(V beta) / Gamma(n_k + V beta) prod_w Gamma(n_wk + beta) / Gamma(beta)]
        x the response factors

(the first line is G0's stick-breaking law of the weights of K labelled topics and of the rest;
it integrates over beta to the Chinese-restaurant-franchise prior of the partition). Each block
below draws from an exact conditional of it (or of an extension by auxiliary variables):

* ``topics_block`` (``sweep``): every z_dn in turn (eq 13), births and deaths of topics
  included (Neal's algorithm 8 for a new topic's eta);
* ``global_block`` (``globals``): the table counts m_dk by the Antoniak scheme (eq 14), then
  (gamma, beta) | m (eq 15), then alpha | m;
* eta | Z, augmentation and the augmentation | Z, eta: the supervised part every family shares
  (``models.supervised``), eta over the occupied topics only (empty slots hold 0: an empty
  slot's eta is no part of the state; a born topic takes its auxiliary's);
* or, in the sHDP paper's MAP-coefficient variant, eta set to its MAP given Z (``map``).

The modules: ``state`` (the chain state with a static capacity of topic slots, growth,
monitors, snapshot), ``sweep``, ``globals``, ``map`` and ``held_out`` (test chains with the
training topics fixed, eq 18). Host randomness: each host block seeds its generator from the
JAX key; all work under jit, lax loops and vmap (``vmap_method="expand_dims"``: one host call
loops over the chains).
"""

from topiczoo.kernels.hdp.globals import global_block
from topiczoo.kernels.hdp.held_out import sample_test_topics
from topiczoo.kernels.hdp.map import eta_map_block, map_steps
from topiczoo.kernels.hdp.state import (SHDPState, document_scores, grow, init_state,
                                        log_likelihood, log_prior, snapshot, topic_monitors)
from topiczoo.kernels.hdp.sweep import topics_block

__all__ = ["SHDPState", "document_scores", "eta_map_block", "global_block", "grow",
           "init_state", "log_likelihood", "log_prior", "map_steps", "sample_test_topics",
           "snapshot", "topic_monitors", "topics_block"]
