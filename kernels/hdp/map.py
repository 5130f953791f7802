"""The sHDP paper's MAP-coefficient variant: eta set to its MAP given Z every cycle."""

from __future__ import annotations

import jax

from topiczoo.kernels.eta import draw_eta_cholesky
from topiczoo.kernels.hdp.state import SHDPState, document_scores


# Newton steps of the logistic MAP (from the last eta: a warm start; Newton converges
# quadratically on this strictly concave objective, see tests/test_hdp_baselines.py).
MAP_NEWTON_STEPS = 10


def _map_form(response, y, omega, augmentation):
    """(psi, rho) [T, D] whose Gaussian-form mean P^-1 b is the next Newton iterate of the MAP
    of eta given Z (and s2 for the Gaussian response)."""
    if response.name == "gaussian":  # the form is exact and independent of omega: one step
        return response.gaussian_form(y, augmentation)
    # logistic: log-likelihood c (y omega - log(1 + e^omega)), y in {0, 1}; the Newton step
    # from omega is the mean of the Gaussian form with rho = c s (1 - s), s = sigmoid(omega),
    # psi = c (y - s) + rho omega (gradient and Hessian of the log-likelihood at omega)
    s = jax.nn.sigmoid(omega)
    rho = response.c * s * (1.0 - s)
    return response.c * (y - s) + rho * omega, rho


def map_steps(response) -> int:
    """Newton steps :func:`eta_map_block` takes for ``response`` (``ValueError`` for a
    response it has no MAP for: only the Gaussian and the logistic)."""
    name = getattr(response, "name", None)
    if name == "gaussian":
        return 1
    if name == "logistic":
        return MAP_NEWTON_STEPS
    raise ValueError(f"the MAP of eta is implemented for the gaussian and logistic responses, "
                     f"not {name!r}")


def eta_map_block(key, state: SHDPState, data, response, *, nu2: float) -> SHDPState:
    """eta <- its MAP given Z (the sHDP paper's MAP-coefficient variant; not an exact Gibbs
    step): argmax of N(eta; 0, nu2 I) times the response's likelihood over the occupied
    topics, 0 on empty slots. Gaussian response: the conditional's mean at the current s2
    (exact in one solve); logistic: :data:`MAP_NEWTON_STEPS` Newton steps from the current eta,
    each the mean of a Gaussian form (:func:`_map_form`). ``key`` is unused (deterministic)."""
    del key

    def step(_, eta):
        omega = document_scores(state._replace(eta=eta), data)
        psi, rho = _map_form(response, data.y, omega, state.augmentation)
        return draw_eta_cholesky(None, state.z, data.doc_offsets, state.n_k, psi, rho, nu2,
                                 skip_empty=True, noise=False)

    return state._replace(eta=jax.lax.fori_loop(0, map_steps(response), step, state.eta))
