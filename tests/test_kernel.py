"""The Gibbs kernel inside numpyro's MCMC: chain methods, thinning, continuation, ArviZ,
reproducibility, checkpoint/resume, and the eta block's numerics."""

from __future__ import annotations

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer import MCMC

from chains import interrupt_at, small_corpus, tiny_data
from topiczoo.corpus import Corpus
from topiczoo.fit import fit
from topiczoo.kernels.eta import draw_eta, eta_conditional_factor
from topiczoo.kernels.gibbs import GibbsKernel
from topiczoo.models import gslda, medlda

DOCS = [[0, 1, 2, 1], [2, 3, 3], [0, 0, 1, 4, 4], [3, 4, 2]]
LABELS = [1, 0, 1, 0]


def _mcmc(model, num_samples, chain_method="vectorized", thinning=1, num_chains=3):
    return MCMC(GibbsKernel(model, 5), num_warmup=0, num_samples=num_samples,
                num_chains=num_chains, chain_method=chain_method, thinning=thinning,
                progress_bar=False)


@pytest.fixture(scope="module")
def model():
    return medlda(3, c=2.0, ell=1.0, alpha=1.0, beta=0.3)


@pytest.fixture(scope="module")
def data(model):
    return tiny_data(DOCS, LABELS, model.response)


def test_vectorized_and_sequential_chains_agree(model, data):
    draws = {}
    for method in ("vectorized", "sequential"):
        mcmc = _mcmc(model, 8, method)
        mcmc.run(jax.random.PRNGKey(3), data, extra_fields=("state.z",))
        draws[method] = (mcmc.get_samples(group_by_chain=True),
                         mcmc.get_extra_fields(group_by_chain=True)["state.z"])
    # same per-chain keys, so the same chains (z exactly, floats to rounding)
    np.testing.assert_array_equal(draws["vectorized"][1], draws["sequential"][1])
    np.testing.assert_allclose(draws["vectorized"][0]["eta"], draws["sequential"][0]["eta"],
                               rtol=1e-4, atol=1e-4)
    z = np.asarray(draws["vectorized"][1])
    assert not np.array_equal(z[0], z[1]), "chains must differ from each other"


def test_thinning_and_continuation(model, data):
    full = _mcmc(model, 12, thinning=3)
    full.run(jax.random.PRNGKey(0), data)
    eta_full = np.asarray(full.get_samples(group_by_chain=True)["eta"])
    assert eta_full.shape[:2] == (3, 4)

    first = _mcmc(model, 6, thinning=3)
    first.run(jax.random.PRNGKey(0), data)
    eta_first = np.asarray(first.get_samples(group_by_chain=True)["eta"])
    first.post_warmup_state = first.last_state
    first.run(first.post_warmup_state.rng_key, data)
    eta_second = np.asarray(first.get_samples(group_by_chain=True)["eta"])
    np.testing.assert_allclose(np.concatenate([eta_first, eta_second], 1), eta_full, rtol=1e-6)
    assert int(first.last_state.iteration[0]) == 12


def test_arviz_from_numpyro(model, data):
    mcmc = _mcmc(model, 10)
    mcmc.run(jax.random.PRNGKey(1), data)
    tree = az.from_numpyro(mcmc)
    posterior = tree["posterior"]
    assert posterior["eta"].shape[:2] == (3, 10)
    assert posterior["train_accuracy"].shape == (3, 10)


def test_fit_is_reproducible_and_seed_dependent():
    corpus = small_corpus()
    kw = dict(num_chains=2, num_iterations=12, num_snapshots=2, progress=False, chunk=4)
    a = fit(gslda(3), corpus, seed=5, **kw)
    b = fit(gslda(3), corpus, seed=5, **kw)
    c = fit(gslda(3), corpus, seed=6, **kw)
    np.testing.assert_array_equal(a.draws["eta"], b.draws["eta"])
    np.testing.assert_array_equal(a.state.state.z, b.state.state.z)
    assert not np.array_equal(a.state.state.z, c.state.state.z)
    assert a.draws["eta"].shape[:2] == (2, 12)
    assert [s.iteration for s in a.snapshots] == [9, 12]


def test_fit_with_thinning_keeps_every_thinning_th_draw():
    corpus = small_corpus()
    result = fit(gslda(3), corpus, num_chains=2, num_iterations=12, num_snapshots=2,
                 thinning=3, chunk=6, progress=False)
    np.testing.assert_array_equal(result.draw_iterations, [3, 6, 9, 12])
    assert result.draws["eta"].shape[:2] == (2, 4)


@pytest.mark.parametrize("settings", [
    dict(num_iterations=20, num_burnin=10, num_snapshots=3),  # snapshots at 13, 16, 20
    dict(num_iterations=20, num_burnin=9, num_snapshots=1),  # burn-in end 9
    dict(num_iterations=20, num_burnin=10, num_snapshots=1, chunk=5),
])
def test_a_schedule_that_thinning_does_not_divide_is_refused_before_sampling(settings):
    calls = []
    with pytest.raises(ValueError, match="thinning 2 does not divide the chunk"):
        fit(gslda(3), small_corpus(), num_chains=1, thinning=2, progress=False,
            callback=calls.append, **settings)
    assert not calls


def test_interrupted_fit_resumes_without_losing_draws(tmp_path):
    corpus = small_corpus()
    kw = dict(num_chains=2, num_iterations=12, num_burnin=6, num_snapshots=2, progress=False,
              chunk=3, seed=1)
    straight = fit(medlda(3, ell=2.0), corpus, **kw)
    path = tmp_path / "ckpt.npz"
    with pytest.raises(KeyboardInterrupt):  # interrupted after 9 iterations, one snapshot taken
        fit(medlda(3, ell=2.0), corpus, checkpoint=path, callback=interrupt_at(9), **kw)
    resumed = fit(medlda(3, ell=2.0), corpus, checkpoint=path, **kw)
    np.testing.assert_array_equal(resumed.draw_iterations, straight.draw_iterations)
    for name in straight.draws:
        np.testing.assert_array_equal(resumed.draws[name], straight.draws[name])
    assert [s.iteration for s in resumed.snapshots] == [s.iteration for s in straight.snapshots]
    for a, b in zip(resumed.snapshots, straight.snapshots):
        for name in a.arrays:
            np.testing.assert_array_equal(a.arrays[name], b.arrays[name])
    np.testing.assert_array_equal(resumed.state.state.z, straight.state.state.z)


def test_ctrl_c_inside_the_numba_sweep_is_a_keyboard_interrupt_and_resumes(
        tmp_path, monkeypatch, caplog):
    """Ctrl-C that lands in a host callback (JAX wraps it in JaxRuntimeError and logs its
    traceback) stops the run as a KeyboardInterrupt, without that log, and the checkpoint
    resumes it to the draws of an uninterrupted run."""
    import topiczoo.kernels.light as light

    corpus = small_corpus()
    kw = dict(sampler="light:z_draw=mh", num_chains=2, num_iterations=12, num_burnin=6,
              num_snapshots=2, progress=False, chunk=3, seed=1)
    straight = fit(medlda(3, ell=2.0), corpus, **kw)
    sweep, calls = light._light_sweep, []

    def interrupted_sweep(*args):
        calls.append(1)
        if len(calls) == 2 * 8:  # both chains' sweeps of iteration 8: inside chunk 7-9
            raise KeyboardInterrupt
        return sweep(*args)

    monkeypatch.setattr(light, "_light_sweep", interrupted_sweep)
    path = tmp_path / "ckpt.npz"
    with pytest.raises(KeyboardInterrupt):
        fit(medlda(3, ell=2.0), corpus, checkpoint=path, **kw)
    assert len(calls) == 16
    assert "pure_callback failed" not in caplog.text
    monkeypatch.setattr(light, "_light_sweep", sweep)
    resumed = fit(medlda(3, ell=2.0), corpus, checkpoint=path, **kw)
    for name in straight.draws:
        np.testing.assert_array_equal(resumed.draws[name], straight.draws[name])
    np.testing.assert_array_equal(resumed.state.state.z, straight.state.state.z)


def test_an_interrupt_waits_for_the_dispatched_computations():
    """Left running under an exiting interpreter they aborted the process (4 runs of 4)."""
    from topiczoo.errors import interrupts_as_keyboard_interrupt

    x = jnp.ones((1000, 1000)) / 1000
    with pytest.raises(KeyboardInterrupt):
        with interrupts_as_keyboard_interrupt():
            y = x
            for _ in range(6):  # dispatched, not waited for: about 0.3 s of work
                y = y @ x
            raise KeyboardInterrupt
    assert y.is_ready()


@pytest.mark.parametrize("change, match", [
    ({"seed": 9}, r"\(seed: checkpoint 1, this run 9\)"),
    ({"num_iterations": 20}, r"\(schedule.num_iterations: checkpoint 12, this run 20\)"),
    ({"num_chains": 3}, r"\(num_chains: checkpoint 2, this run 3\)"),
])
def test_checkpoint_of_another_run_is_refused(tmp_path, change, match):
    """The message names the fields that differ, nested ones one by one, and nothing else."""
    corpus = small_corpus()
    kw = dict(num_chains=2, num_iterations=12, num_burnin=6, num_snapshots=2, progress=False,
              chunk=6, seed=1)
    path = tmp_path / "ckpt.npz"
    fit(medlda(3, ell=2.0), corpus, checkpoint=path, **kw)
    with pytest.raises(ValueError, match=match):
        fit(medlda(3, ell=2.0), corpus, checkpoint=path, **{**kw, **change})
    with pytest.raises(ValueError, match=r"\(model.ell: checkpoint 2.0, this run 3.0\)"):
        fit(medlda(3, ell=3.0), corpus, checkpoint=path, **kw)


def test_a_run_started_from_another_continues_it_exactly():
    """start=: the same sampler continued from a 6-iteration run gives the draws, snapshots and
    state of one 12-iteration run; another sampler of the family (the same state) continues
    from it, and ``light``, the exact sampler at K = 3, continues it as the exact one does."""
    corpus = small_corpus()
    kw = dict(num_chains=2, num_burnin=6, num_snapshots=2, progress=False, chunk=3, seed=1)
    straight = fit(medlda(3, ell=2.0), corpus, num_iterations=12, **kw)
    first = fit(medlda(3, ell=2.0), corpus, num_iterations=6, **{**kw, "num_burnin": 5,
                                                                 "num_snapshots": 1})
    second = fit(medlda(3, ell=2.0), corpus, num_iterations=12, start=first,
                 **{**kw, "seed": 99})  # the keys come from first's states, not the seed
    np.testing.assert_array_equal(second.draw_iterations, np.arange(7, 13))
    for name in straight.draws:
        np.testing.assert_array_equal(second.draws[name], straight.draws[name][:, 6:])
    assert [s.iteration for s in second.snapshots] == [9, 12]
    for a, b in zip(second.snapshots, straight.snapshots):
        for name in a.arrays:
            np.testing.assert_array_equal(a.arrays[name], b.arrays[name])
    np.testing.assert_array_equal(second.state.state.z, straight.state.state.z)
    for sampler in ("exact:eta=coordinate", "light:z_draw=mh"):
        other = fit(medlda(3, ell=2.0), corpus, num_iterations=12, start=first, sampler=sampler,
                    **kw)
        assert other.sampler == sampler and other.iterations_done == 12
        assert not np.array_equal(other.draws["eta"], second.draws["eta"])
    # light with no option runs as the exact sampler at K = 3, under its own name
    light = fit(medlda(3, ell=2.0), corpus, num_iterations=12, start=first, sampler="light",
                **kw)
    assert light.sampler == "light"
    for name in second.draws:
        np.testing.assert_array_equal(light.draws[name], second.draws[name])


def _other_labels(corpus):
    return Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary,
                  labels=1 - np.asarray(corpus.labels))


@pytest.mark.parametrize("change, match", [
    (lambda corpus: {"model": medlda(3, ell=3.0)}, "another model"),
    (lambda corpus: {"corpus": _other_labels(corpus)}, "another corpus"),
    (lambda corpus: {"num_chains": 3}, "another num_chains"),
    (lambda corpus: {"num_iterations": 6}, "must exceed them"),
    (lambda corpus: {"start": "first"}, "must be the FitResult of a fit"),
], ids=["model", "corpus", "num_chains", "num_iterations", "start"])
def test_a_start_of_another_run_is_refused(change, match):
    corpus = small_corpus()
    first = fit(medlda(3, ell=2.0), corpus, num_chains=2, num_iterations=6, num_snapshots=1,
                progress=False)
    call = {"model": medlda(3, ell=2.0), "corpus": corpus, "num_chains": 2,
            "num_iterations": 10, "start": first, **change(corpus)}
    with pytest.raises(ValueError, match=match):
        fit(call.pop("model"), call.pop("corpus"), progress=False, num_snapshots=1, **call)


@pytest.mark.parametrize("content", [b"", b"garbage", None])
def test_unreadable_checkpoint_is_a_clear_error(tmp_path, content):
    corpus = small_corpus()
    path = tmp_path / "ckpt.npz"
    kw = dict(num_chains=1, num_iterations=4, num_snapshots=1, progress=False, seed=0)
    if content is None:  # a real checkpoint, truncated
        fit(gslda(2), corpus, checkpoint=path, **kw)
        path.write_bytes(path.read_bytes()[:200])
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match="not a readable topiczoo checkpoint") as err:
        fit(gslda(2), corpus, checkpoint=path, **kw)
    assert "allow_pickle" not in str(err.value)  # numpy's advice for a file that is no archive


def test_checkpoint_with_a_state_of_another_layout_is_a_clear_error(tmp_path):
    """A checkpoint whose state lacks a part (here n_dk) is refused, naming the part, and
    kept."""
    corpus = small_corpus()
    path = tmp_path / "ckpt.npz"
    kw = dict(num_chains=1, num_iterations=4, num_snapshots=1, progress=False, seed=0)
    fit(gslda(2), corpus, checkpoint=path, **kw)
    with np.load(path) as archive:
        stored = {name: archive[name] for name in archive.files}
    del stored["state/.state.n_dk"]
    with open(path, "wb") as f:
        np.savez(f, **stored)
    with pytest.raises(ValueError, match=r"not a state of the sampler exact \(\.state\.n_dk "
                                         r"missing"):
        fit(gslda(2), corpus, checkpoint=path, **kw)
    assert path.exists()


@pytest.mark.parametrize("sampler", ["exact", "exact:eta=qr"])
def test_checkpoint_of_the_earlier_exact_state_resumes_to_the_same_draws(tmp_path, sampler):
    """The exact sampler's first state layout held the counts beside z (z, n_dk, n_wk, n_k
    under ``topics``) and no words or log-likelihood. An interrupted run's checkpoint rewritten in
    that layout resumes (``models.parametric.upgrade_checkpoint_state``) to the draws and
    snapshots of the uninterrupted run (the QR eta draw reads n_dk first thing)."""
    corpus = small_corpus()
    model = gslda(3, c=2.0)
    kw = dict(num_chains=2, num_iterations=10, num_burnin=4, num_snapshots=2, chunk=3, seed=3,
              progress=False, sampler=sampler)
    whole = fit(model, corpus, **kw)
    path = tmp_path / "ckpt.npz"
    with pytest.raises(KeyboardInterrupt):
        fit(model, corpus, checkpoint=path, callback=interrupt_at(6), **kw)
    with np.load(path) as archive:
        stored = {name: archive[name] for name in archive.files}
    z = stored.pop("state/.state.z")
    n_dk = stored.pop("state/.state.n_dk")
    del stored["state/.state.words"], stored["state/.state.log_likelihood"]
    n_wk = np.zeros((z.shape[0], corpus.vocab_size, 3), np.int32)
    for chain in range(z.shape[0]):
        np.add.at(n_wk[chain], (corpus.words, z[chain]), 1)
    stored.update({"state/.state.topics.z": z, "state/.state.topics.n_dk": n_dk,
                   "state/.state.topics.n_wk": n_wk,
                   "state/.state.topics.n_k": n_wk.sum(axis=1)})
    with open(path, "wb") as f:
        np.savez(f, **stored)
    resumed = fit(model, corpus, checkpoint=path, **kw)
    assert resumed.iterations_done == 10
    for name in whole.draws:
        np.testing.assert_array_equal(resumed.draws[name], whole.draws[name])
    for a, b in zip(resumed.snapshots, whole.snapshots, strict=True):
        for name in a.arrays:
            np.testing.assert_array_equal(a.arrays[name], b.arrays[name])


def test_checkpoint_path_is_checked_before_sampling(tmp_path):
    """A missing folder used to fail after the first chunk, naming the temporary file."""
    corpus = small_corpus()
    chunks = []
    kw = dict(num_chains=1, num_iterations=4, num_snapshots=1, progress=False,
              callback=chunks.append)
    with pytest.raises(FileNotFoundError, match=r"checkpoint's folder .*nodir.* does not exist"):
        fit(gslda(2), corpus, checkpoint=tmp_path / "nodir" / "ckpt.npz", **kw)
    with pytest.raises(IsADirectoryError, match="is a folder; give a file path"):
        fit(gslda(2), corpus, checkpoint=tmp_path, **kw)
    assert chunks == [] and list(tmp_path.iterdir()) == []


def test_eta_draw_matches_exact_gaussian():
    rng = np.random.default_rng(0)
    zbar = rng.dirichlet(np.ones(3), size=40).astype(np.float32)
    psi = rng.normal(size=(1, 40)).astype(np.float32)
    rho = rng.gamma(2.0, size=(1, 40)).astype(np.float32)
    precision = np.eye(3) / 0.5 + (zbar.T * rho[0]) @ zbar
    cov = np.linalg.inv(precision)
    mean = cov @ (zbar.T @ psi[0])
    keys = jax.random.split(jax.random.PRNGKey(0), 40_000)
    draws = np.asarray(jax.vmap(lambda k: draw_eta(k, zbar, psi, rho, 0.5))(keys))[:, 0]
    se = np.sqrt(np.diag(cov) / len(draws))
    assert np.all(np.abs(draws.mean(0) - mean) < 4.5 * se)
    np.testing.assert_allclose(np.cov(draws.T), cov, rtol=0.05, atol=1e-4)


def test_eta_draw_stays_finite_at_extremes():
    """c = 256 and a hinge augmentation near zero margin (ell = 164): rho up to 1e12."""
    rng = np.random.default_rng(1)
    zbar = jnp.asarray(rng.dirichlet(np.full(20, 0.1), size=500), jnp.float32)
    gamma = jnp.asarray(10.0 ** rng.uniform(-6, 8, size=(1, 500)), jnp.float32)  # 1/lambda
    c, ell = 256.0, 164.0
    y = jnp.asarray(np.where(rng.random((1, 500)) < 0.5, -1.0, 1.0), jnp.float32)
    psi, rho = c * y + c * c * ell * y * gamma, c * c * gamma
    eta = draw_eta(jax.random.PRNGKey(0), zbar, psi, rho, 1.0)
    assert bool(jnp.all(jnp.isfinite(eta)))
    r, mean = eta_conditional_factor(zbar, psi[0], rho[0], 1.0)
    assert bool(jnp.all(jnp.isfinite(r))) and bool(jnp.all(jnp.isfinite(mean)))


def test_progress_time_left_wording():
    from topiczoo.progress import time_left as _time_left

    assert _time_left(0.3) == "under 1 s left"  # it said "about 0 s left"
    assert _time_left(30) == "about 30 s left" and _time_left(600) == "about 10 min left"
    assert _time_left(4 * 3600) == "about 4.0 h left"
