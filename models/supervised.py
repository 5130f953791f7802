"""The supervised part every family shares: the response's data, its blocks and its monitors.

Every response enters a model through one Gaussian form (``models.responses``): given its
augmentation variables, document d's response contributes exp(psi_d omega_d - rho_d omega_d^2 / 2)
with omega_d = eta . zbar_d. So whatever the topics are (LDA's K, the sHDP's occupied slots),
the supervised part of a family is the same:

* the data: :func:`task_of` (the labels' :class:`~topiczoo.models.tasks.Task`) and
  :func:`corpus_data` (the arrays a sampler reads, responses coded [T, D]);
* the declaration: eta_t ~ N(0, nu2 I) and the response's own statement
  (:func:`response_declaration`);
* the blocks: eta | Z, augmentation (:func:`eta_block`, Gaussian given the form's coefficients
  :func:`gaussian_form`) and the augmentation | Z, eta (:func:`augmentation_block`);
* the monitors (:func:`supervised_monitors`, label-invariant ones in :data:`SUPERVISED_MONITORS`),
  the supervised terms of the log joint density (:func:`supervised_log_joint`) and what a snapshot keeps of the response and the held-out scores (:func:`snapshot_parameters`,
  :func:`scores`).

A family supplies its topic blocks and two functions of its state: ``scores(state, data)``,
the documents' omega [T, D], and how eta is drawn given (psi, rho). The state is any
NamedTuple with the fields ``eta`` [T, K] and ``augmentation`` (the response's shape).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from topiczoo.kernels.gibbs import CorpusData, corpus_arrays
from topiczoo.models.monitors import SUPERVISED_MONITORS
from topiczoo.models.tasks import Task

__all__ = ["SUPERVISED_MONITORS", "augmentation_block", "corpus_data", "eta_block",
           "gaussian_form", "response_declaration", "scores", "snapshot_parameters",
           "supervised_log_joint", "supervised_monitors", "task_of"]


# ------------------------------------------------------------------------------------- data
def task_of(model, corpus) -> Task | None:
    """The :class:`Task` of ``model`` on ``corpus``'s labels, None if the model is
    unsupervised; ``ValueError`` naming the problem when the labels do not fit the model.

    A supervised model says which label kinds it takes (``model.tasks``), and may fix the
    number of classes (``num_classes``) or centre real responses (``center``)."""
    if model.response is None:
        return None
    return Task.of(model.tasks, corpus, getattr(model, "num_classes", None),
                   getattr(model, "center", False))


def corpus_data(model, corpus, task: Task | None = None) -> CorpusData:
    """The arrays ``model``'s samplers read from ``corpus`` (word index included), its labels
    coded by the response as [T, D] through ``task`` (default :func:`task_of`; [0, D] for an
    unsupervised model). ``ValueError`` for empty training documents, or a task given to an
    unsupervised model."""
    if model.response is None and task is not None:
        raise ValueError(f"{model.name} is unsupervised; it takes no task")
    corpus.require_nonempty("training")
    if task is None:
        task = task_of(model, corpus)
    if task is None:
        y = np.zeros((0, corpus.num_docs), np.float32)
    else:
        y = model.response.encode(task.to_tasks(corpus.labels))
    return corpus_arrays(corpus.words, corpus.doc_offsets, y, corpus.vocab_size)


# ------------------------------------------------------------------------------ declaration
def response_declaration(zbar, num_tasks: int, nu2: float, response, y, topic_plate: str):
    """eta_t ~ N(0, nu2 I) over the K topics of zbar [D, K] for each of the num_tasks tasks
    (plates "tasks" and ``topic_plate``), omega = eta zbar^T [T, D], and the response's own
    statement linking y [T, D] to omega. Returns ``(eta, omega)``."""
    with numpyro.plate("tasks", num_tasks, dim=-2):
        with numpyro.plate(topic_plate, zbar.shape[-1], dim=-1):
            eta = numpyro.sample("eta", dist.Normal(0.0, jnp.sqrt(nu2)))
    omega = eta @ zbar.T
    response.declare(omega, y)
    return eta, omega


# ----------------------------------------------------------------------------------- blocks
def gaussian_form(response, state, data):
    """(psi, rho), each float32 [T, D]: the response's factor exp(psi omega - rho omega^2 / 2)
    given the state's augmentation; empty [0, D] arrays without a response."""
    if response is None:
        empty = jnp.zeros((0, data.doc_offsets.shape[0] - 1), jnp.float32)
        return empty, empty
    return response.gaussian_form(data.y, state.augmentation)


def eta_block(response, draw_eta):
    """The block eta | Z, augmentation: Gaussian with precision I / nu2 + sum_d rho_d zbar_d
    zbar_d^T and mean P^-1 sum_d psi_d zbar_d per task. ``draw_eta(key, state, data, psi,
    rho) -> eta [T, K]`` is the family's draw of it (``kernels.eta``: over which topics, by
    which factorisation)."""

    def block(key, state, data):
        """eta | Z, augmentation: Gaussian, given the response's form."""
        psi, rho = gaussian_form(response, state, data)
        return state._replace(eta=draw_eta(key, state, data, psi, rho))

    return block


def augmentation_block(response, scores_of):
    """The block augmentation | Z, eta: the response's own draw given the documents' scores
    omega = ``scores_of(state, data)`` [T, D]."""

    def block(key, state, data):
        """augmentation | Z, eta: the response's own draw, document by document."""
        omega = scores_of(state, data)
        return state._replace(augmentation=response.draw_augmentation(
            key, data.y, omega, state.augmentation))

    return block


# --------------------------------------------------------------------------------- monitors
def supervised_monitors(response, task: Task, state, data, omega, *,
                        collect_eta: bool = True) -> dict:
    """The per-draw monitors of the response, given the scores omega [T, D]: eta [T, K] (with
    ``collect_eta``; a family whose K changes leaves it out); eta_norm ||eta||_F;
    omega_mean_abs, the mean |omega_td|; train_loss, the mean over documents and tasks of
    minus the log pseudo-likelihood (nats; the Gaussian's is a log density, which can be
    negative); augmentation_mean [T], the mean augmentation variable per task (s2 for the
    Gaussian); and the task's (``Task.train_monitors``): train_accuracy, or residual_norm and
    train_mse."""
    num_tasks = state.eta.shape[0]
    out = {"eta": state.eta} if collect_eta else {}
    out.update(
        eta_norm=jnp.sqrt(jnp.sum(state.eta**2)),
        omega_mean_abs=jnp.mean(jnp.abs(omega)),
        train_loss=-jnp.mean(response.log_pseudo_likelihood(data.y, omega)),
        augmentation_mean=jnp.mean(state.augmentation.reshape(num_tasks, -1), axis=-1),
        **task.train_monitors(data.y, omega),
    )
    return out


def supervised_log_joint(response, state, data, omega, nu2: float, occupied=None):
    """The supervised terms of the log joint density of a chain's state (the ``log_joint``
    monitor), float32 [] nats: log p(eta) = sum_tk log N(eta_tk; 0, nu2) over the topics
    (only the ``occupied`` ones, bool [K], where a family's empty slots are no part of the
    state), plus the response's ``log_target``: its un-augmented log (pseudo-)likelihood of
    the labels given omega [T, D] and the log prior of its own drawn parameters (the
    Gaussian's s2). 0 without a response. The augmentation variables are integrated out:
    the value is the same whatever their draw."""
    if response is None:
        return jnp.zeros((), jnp.float32)
    log_prior = -0.5 * state.eta**2 / nu2 - 0.5 * jnp.log(2 * jnp.pi * nu2)  # [T, K]
    if occupied is not None:
        log_prior = jnp.where(occupied, log_prior, 0.0)
    return jnp.sum(log_prior) + response.log_target(data.y, omega, state.augmentation)


# ------------------------------------------------------------------------------- prediction
def snapshot_parameters(response, state) -> dict:
    """The response's parameters to keep in a snapshot (the Gaussian's s2 [T]); ``{}``
    without a response."""
    return {} if response is None else response.snapshot_parameters(state.augmentation)


def scores(snapshot: dict, zbar: np.ndarray) -> np.ndarray:
    """Scores omega [J, T, D] = eta . zbar of held-out topic proportions zbar [J, D, K] given a
    snapshot's eta [T, K] (float32): the prediction's S(i, j)."""
    return np.einsum("tk,jdk->jtd", np.asarray(snapshot["eta"], np.float32), zbar)
