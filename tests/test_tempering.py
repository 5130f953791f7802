"""Replica exchange (``exact:replicas=R``, ``kernels.tempering``) against enumeration.

The cold replica's Z frequencies must match the exact posterior (``exact.exact_posterior``), a
hot replica's the exact tempered target (p(W | Z) raised to its power: every block of a hot
replica draws from the tempered conditional), and a swap whose ratio has the temperatures
exchanged, planted, must miss the posterior. An annealed burn-in (``exact:anneal=A``) must
leave the exact chain's posterior after its anneal, and one whose power never reaches 1,
planted, must not. The problems and bound are the enumeration tests' (``test_enumeration.py``).
"""

from __future__ import annotations

import dataclasses

import jax
import numba
import numpy as np
import pytest
from numpyro.infer import MCMC

import given_eta
import test_enumeration
from chains import tiny_data
from exact import configuration_frequencies, exact_posterior, total_variation
from mutants import mutant
from test_enumeration import PROBLEMS, TV_BOUND, _labels, model_of
from test_topics import _exact_sweep_frequencies
from topiczoo.kernels import tempering
from topiczoo.kernels.gibbs import GibbsKernel
from topiczoo.models import parametric

pytestmark = pytest.mark.slow  # statistical: long chains against enumeration

NUM_CHAINS, NUM_SAMPLES, NUM_WARMUP = 32, 1_200, 200
SAMPLER = "exact:replicas=3,hottest=0.2"  # powers 1, 0.447, 0.2


def _replica_frequencies(problem, seed=0, num_chains=NUM_CHAINS):
    """Z frequencies [R, K^N] of each replica, chains pooled."""
    model = model_of(problem)
    data = tiny_data([list(d) for d in problem.docs], _labels(problem), model.response)
    mcmc = MCMC(GibbsKernel(model, problem.vocab_size, sampler=SAMPLER), num_warmup=NUM_WARMUP,
                num_samples=NUM_SAMPLES, num_chains=num_chains, chain_method="vectorized",
                progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), data, extra_fields=("state.replicas.z",))
    z = np.asarray(mcmc.get_extra_fields()["state.replicas.z"])  # [draws, R, N]
    rates = np.asarray(mcmc.get_samples()["swap_rate"])[-1]
    return [configuration_frequencies(z[:, r]) for r in range(z.shape[1])], rates


@pytest.mark.parametrize("name", ["lda", "hinge-c3-ell1"])
def test_cold_and_hot_replicas_match_their_targets(name):
    problem = PROBLEMS[name]
    frequencies, rates = _replica_frequencies(problem)
    powers = tempering.ladder(3, 0.2)
    for r in (0, 2):
        target = exact_posterior(problem.with_(word_power=powers[r]))
        tv = total_variation(target, frequencies[r])
        print(f"{name} replica {r} (power {powers[r]:.3f}): TV {tv:.4f}")
        assert tv < TV_BOUND, f"replica {r}: TV {tv:.4f}"
    # the replicas do exchange, and the hot one's target is not the posterior
    assert (rates > 0.3).all(), rates
    far = total_variation(exact_posterior(problem), exact_posterior(
        problem.with_(word_power=powers[2])))
    assert far > 3 * TV_BOUND, far


def test_the_swap_log_ratio_monitor_is_the_swaps_log_ratio():
    """At every draw, swap_log_ratio [R - 1] is (tau_r - tau_{r+1}) (l_{r+1} - l_r) of the
    draw's replicas, l their log p(W | Z) (what ``topiczoo.modes.replica_words`` reads)."""
    problem = PROBLEMS["hinge-c3-ell1"]
    model = model_of(problem)
    data = tiny_data([list(d) for d in problem.docs], _labels(problem), model.response)
    mcmc = MCMC(GibbsKernel(model, problem.vocab_size, sampler=SAMPLER), num_warmup=5,
                num_samples=20, num_chains=2, chain_method="vectorized", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(1), data, extra_fields=("state.replicas.log_likelihood",))
    l = np.asarray(mcmc.get_extra_fields()["state.replicas.log_likelihood"])  # [draws, R]
    powers = np.asarray(tempering.ladder(3, 0.2), np.float32)
    expected = (powers[:-1] - powers[1:]) * (l[:, 1:] - l[:, :-1])
    ratios = np.asarray(mcmc.get_samples()["swap_log_ratio"])
    assert ratios.shape == expected.shape == (40, 2) and np.abs(expected).max() > 0.1
    np.testing.assert_allclose(ratios, expected, rtol=1e-5, atol=1e-6)


#: The word likelihood's power of the tempered sweep's enumeration tests.
POWER = 0.4


def _at_power(sweep):
    """``sweep`` (a tempered sweep) at :data:`POWER`, with the exact sweep's arguments."""

    @numba.njit
    def at_power(z, n_dk, n_wk, n_k, words, offsets, eta, psi, rho, alpha, beta, seed,
                 max_exponent, table_entries):
        return sweep(z, n_dk, n_wk, n_k, words, offsets, eta, psi, rho, alpha, beta, POWER,
                     seed, max_exponent, table_entries)

    return at_power


_TEMPERED = _at_power(tempering._tempered_sweep)


@pytest.mark.parametrize("num_topics, num_tasks, form", [
    (3, 0, "tables"), (3, 2, "tables"), (3, 2, "log-space")])  # T = 0: one form
def test_tempered_sweep_matches_its_target_given_eta(num_topics, num_tasks, form):
    """A hot replica's Z sweep alone, the response held fixed (``given_eta``): its frequencies
    against p(W | Z)^power p(Z) times the response's factor, enumerated, in table form and in
    log space (every token)."""
    exact = given_eta.exact_z(num_topics, num_tasks, word_power=POWER)
    untempered = given_eta.exact_z(num_topics, num_tasks)
    bound = given_eta.TV_BOUND[num_topics] if num_tasks else given_eta.LDA_TV_BOUND
    assert given_eta.tv_distance(exact, untempered) > 3 * bound  # the power matters here
    freq = _exact_sweep_frequencies(num_topics, num_tasks, form, seed=3 * num_topics + num_tasks,
                                    sweep=_TEMPERED)
    tv = given_eta.tv_distance(exact, freq)
    assert tv < bound, f"TV {tv:.4f}"


def test_tempered_sweep_detects_the_power_left_off_the_topic_totals():
    """Planted: (n_k + V beta)^-1 instead of ^-power: the enumeration test sees it."""
    wrong_count = mutant(tempering._tempered_count, [("v_beta, -power)", "v_beta, -1.0)")])
    wrong_document = mutant(tempering._tempered_document, [], {"_tempered_count": wrong_count})
    wrong = mutant(tempering._tempered_sweep, [("v_beta, -power)", "v_beta, -1.0)")],
                   {"_tempered_document": wrong_document})
    freq = _exact_sweep_frequencies(3, 2, "tables", seed=11, sweep=_at_power(wrong))
    tv = given_eta.tv_distance(given_eta.exact_z(3, 2, word_power=POWER), freq)
    assert tv > 3 * given_eta.TV_BOUND[3], f"the mutant went unnoticed (TV {tv:.4f})"


def test_a_swap_with_the_temperatures_exchanged_misses_the_posterior(monkeypatch):
    wrong = mutant(tempering.swap_log_ratios,
                   [("(powers[:-1] - powers[1:])", "(powers[1:] - powers[:-1])")])
    monkeypatch.setattr(tempering, "swap_log_ratios", wrong)
    parametric._sampler.cache_clear()
    try:
        problem = PROBLEMS["lda"]
        frequencies, _ = _replica_frequencies(problem, num_chains=8)  # TV noise about 0.03
    finally:
        monkeypatch.undo()
        parametric._sampler.cache_clear()
    tv = total_variation(exact_posterior(problem), frequencies[0])
    print(f"temperatures exchanged in the swap ratio: cold replica TV {tv:.4f}")
    assert tv > 2 * TV_BOUND, f"the wrong swap went unnoticed (TV {tv:.4f})"


def test_replica_exchange_options_and_a_fit():
    from chains import small_corpus
    from topiczoo import fit, predict
    from topiczoo.models import medlda
    from topiczoo.models.parametric import sampler_options

    assert sampler_options("exact:replicas=4").spec() == "exact:replicas=4"
    assert sampler_options("exact:hottest=0.3,replicas=4").spec() == "exact:replicas=4,hottest=0.3"
    for spec, message in [("exact:hottest=0.3", "hottest needs replicas >= 2"),
                          ("exact:replicas=3,hottest=1.5", "hottest must be a number in (0, 1)"),
                          ("exact:replicas=3,hottest=hot", "hottest must be a number in (0, 1)"),
                          ("light:replicas=2", "bad option 'replicas=2'")]:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            medlda(3).sampler(spec, 5)
    corpus = small_corpus()
    result = fit(medlda(3, c=1.0, ell=2.0), corpus, sampler="exact:replicas=3", num_chains=2,
                 num_iterations=6, num_burnin=2, num_snapshots=2, seed=1, progress=False)
    assert result.sampler == "exact:replicas=3"
    assert result.draws["replica_log_joint"].shape == (2, 6, 3)
    assert result.draws["swap_rate"].shape == (2, 6, 2)
    assert result.draws["swap_log_ratio"].shape == (2, 6, 2)
    # the cold replica's monitors under the family's names, its joint the first replica's
    np.testing.assert_array_equal(result.draws["log_joint"],
                                  result.draws["replica_log_joint"][..., 0])
    assert set(result.snapshots[-1].arrays) == {"n_wk", "n_k", "eta"}
    assert predict(result, corpus, num_burnin=2, num_draws=2).scores.shape[:2] == (2, 2)


def test_a_stuck_run_continues_with_replica_exchange():
    """fit(start=...) from a run of the exact sampler: every replica starts from its chain's
    state, and the cold replica's first draw follows from that state."""
    from chains import small_corpus
    from topiczoo import fit
    from topiczoo.models import medlda

    corpus, model = small_corpus(), medlda(3, c=1.0, ell=2.0)
    kw = dict(num_chains=2, num_burnin=2, num_snapshots=1, seed=1, progress=False)
    first = fit(model, corpus, num_iterations=4, **kw)
    on = fit(model, corpus, sampler="exact:replicas=3", num_iterations=7, start=first, **kw)
    assert on.iterations_done == 7 and on.draws["log_joint"].shape == (2, 3)
    assert on.draws["replica_log_joint"].shape == (2, 3, 3)
    # a replica-exchange run's state from before the swap_log_ratio monitor goes on too
    older = dataclasses.replace(on, state=on.state._replace(
        info={k: v for k, v in on.state.info.items() if k != "swap_log_ratio"}))
    later = fit(model, corpus, sampler="exact:replicas=3", num_iterations=9, start=older, **kw)
    assert later.draws["swap_log_ratio"].shape == (2, 2, 2)


def test_swap_differences_are_exact_where_float32_values_are_not():
    """The swaps' l_{r+1} - l_r (``kernels.assignments.log_likelihood_differences``) are summed
    in float64: on 400,000 tokens (log p(W | Z) about -3M nats, float32 spacing 0.25) replicas
    a few tokens apart differ by a few nats, which they get to 1e-3 of a float64 computation
    from the counts (scipy's gammaln), one chain or vmapped, where differences of the float32
    values miss by more than 0.01."""
    import jax.numpy as jnp
    from scipy.special import gammaln

    from topiczoo.kernels.assignments import log_likelihood_differences

    rng = np.random.default_rng(0)
    vocab, topics, docs, length, beta = 2000, 10, 400, 1000, 0.01
    words = rng.integers(0, vocab, docs * length).astype(np.int32)
    offsets = np.arange(0, docs * length + 1, length).astype(np.int32)
    zs = [rng.integers(0, topics, docs * length).astype(np.int32)]
    for _ in range(3):  # each replica 5 tokens away from the one before
        z = zs[-1].copy()
        z[rng.choice(z.size, 5, replace=False)] = rng.integers(0, topics, 5)
        zs.append(z)
    zs = np.stack(zs)

    def log_p(z):
        n_wk = np.zeros((vocab, topics))
        np.add.at(n_wk, (words, z), 1.0)
        return ((gammaln(vocab * beta) - gammaln(n_wk.sum(0) + vocab * beta)).sum()
                + (gammaln(n_wk + beta) - gammaln(beta)).sum())

    exact64 = np.array([log_p(z) for z in zs])
    want = np.diff(exact64)
    differences = lambda z: log_likelihood_differences(z, words, offsets, beta,
                                                       num_topics=topics, vocab_size=vocab)
    got = np.asarray(jax.jit(differences)(jnp.asarray(zs)))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-3)
    vmapped = np.asarray(jax.vmap(differences)(jnp.asarray(np.stack([zs, zs[::-1]]))))
    np.testing.assert_allclose(vmapped[0], want, rtol=0, atol=1e-3)
    np.testing.assert_allclose(vmapped[1], -want[::-1], rtol=0, atol=1e-3)
    float32 = np.diff(exact64.astype(np.float32))
    assert np.abs(float32 - want).max() > 0.01, (float32, want)
    assert exact64.max() < -1e6 and np.abs(want).max() < 100, (exact64, want)


def test_the_swap_move_reads_the_float64_differences(monkeypatch):
    """Replica exchange's swaps read ``log_likelihood_differences`` (traced into the step), not
    the differences of the replicas' float32 monitors."""
    from chains import small_corpus
    from topiczoo import fit
    from topiczoo.models import medlda

    calls = []
    real = parametric.log_likelihood_differences
    monkeypatch.setattr(parametric, "log_likelihood_differences",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    parametric._sampler.cache_clear()
    try:
        fit(medlda(3, c=1.0, ell=2.0), small_corpus(), sampler="exact:replicas=3",
            num_chains=1, num_iterations=2, num_burnin=1, num_snapshots=1, seed=0,
            progress=False)
    finally:
        monkeypatch.undo()
        parametric._sampler.cache_clear()
    assert calls, "the swaps did not read the float64 differences"


# ---------------------------------------------------------------------------------------------
# Annealed burn-in (exact:anneal=A)

ANNEALED = "exact:anneal=20,anneal_from=0.2"


def _annealed_frequencies(problem, seed=0):
    """Z frequencies [K^N] of the annealed chains' draws after their anneal (the warm-up
    covers it), chains pooled; the enumeration tests' lengths (at the replica tests', 32 x
    1,200 after 200, the exact sampler's own TV on ``hinge-c3-ell1`` is 0.021-0.031)."""
    model = model_of(problem)
    data = tiny_data([list(d) for d in problem.docs], _labels(problem), model.response)
    mcmc = MCMC(GibbsKernel(model, problem.vocab_size, sampler=ANNEALED),
                num_warmup=test_enumeration.NUM_WARMUP, num_samples=test_enumeration.NUM_SAMPLES,
                num_chains=test_enumeration.NUM_CHAINS, chain_method="vectorized",
                progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), data, extra_fields=("state.chain.z",))
    assert (np.asarray(mcmc.get_samples()["anneal_power"]) == 1.0).all()
    return configuration_frequencies(np.asarray(mcmc.get_extra_fields()["state.chain.z"]))


@pytest.mark.parametrize("name", ["lda", "hinge-c3-ell1"])
def test_an_annealed_chain_targets_the_posterior_after_its_anneal(name):
    problem = PROBLEMS[name]
    tv = total_variation(exact_posterior(problem), _annealed_frequencies(problem))
    print(f"{name} after an anneal of 20 iterations from power 0.2: TV {tv:.4f}")
    assert tv < TV_BOUND, f"TV {tv:.4f}"


def test_an_anneal_that_never_reaches_power_1_misses_the_posterior(monkeypatch):
    """Planted: the power stays at the anneal's first (0.2) after the anneal; the hot target
    is far from the posterior on the ``lda`` problem, so the test sees it."""
    wrong = mutant(tempering.annealed_power, [("jnp.float32(1.0)", "jnp.float32(first)")])
    monkeypatch.setattr(tempering, "annealed_power", wrong)
    parametric._sampler.cache_clear()
    try:
        problem = PROBLEMS["lda"]
        model = model_of(problem)
        data = tiny_data([list(d) for d in problem.docs], _labels(problem), model.response)
        mcmc = MCMC(GibbsKernel(model, problem.vocab_size, sampler=ANNEALED), num_warmup=200,
                    num_samples=NUM_SAMPLES, num_chains=8, chain_method="vectorized",
                    progress_bar=False)
        mcmc.run(jax.random.PRNGKey(0), data, extra_fields=("state.chain.z",))
        frequencies = configuration_frequencies(
            np.asarray(mcmc.get_extra_fields()["state.chain.z"]))
    finally:
        monkeypatch.undo()
        parametric._sampler.cache_clear()
    tv = total_variation(exact_posterior(problem), frequencies)
    print(f"power left at 0.2 after the anneal: TV {tv:.4f}")
    assert tv > 2 * TV_BOUND, f"the wrong anneal went unnoticed (TV {tv:.4f})"


def test_the_anneal_schedule_rises_linearly_to_exactly_1():
    powers = [float(tempering.annealed_power(np.int32(i), 7, 0.3)) for i in range(10)]
    np.testing.assert_allclose(powers[:7], 0.3 + 0.1 * np.arange(7), rtol=1e-6)
    assert powers[7:] == [1.0, 1.0, 1.0]  # exactly: the cycle is then the exact sampler's
    assert all(p < 1.0 for p in powers[:7])
    with pytest.raises(ValueError, match="at least 1 iteration and a first power in"):
        tempering.annealed(None, None, 0, 0.3, "exact:anneal=0")


def test_anneal_options_and_the_burn_in_they_need():
    from chains import small_corpus
    from topiczoo import fit, predict
    from topiczoo.models import medlda
    from topiczoo.models.parametric import sampler_options

    assert sampler_options("exact:anneal=30").spec() == "exact:anneal=30"
    assert (sampler_options("exact:anneal_from=0.1,anneal=30").spec()
            == "exact:anneal=30,anneal_from=0.1")
    for spec, message in [("exact:anneal_from=0.3", "anneal_from needs anneal"),
                          ("exact:anneal=5,replicas=3", "anneal and replicas"),
                          ("exact:anneal=5,anneal_from=1", "anneal_from must be a number in"),
                          ("exact:anneal=0", "anneal must be an integer in"),
                          ("light:anneal=5", "bad option 'anneal=5'")]:
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            medlda(3).sampler(spec, 5)
    corpus, model = small_corpus(), medlda(3, c=1.0, ell=2.0)
    kw = dict(num_chains=2, num_snapshots=2, seed=1, progress=False)
    with pytest.raises(ValueError, match=r"from iteration 7 on, so num_burnin \(5\) must be at "
                                         r"least 6"):
        fit(model, corpus, sampler="exact:anneal=6", num_iterations=10, num_burnin=5, **kw)
    result = fit(model, corpus, sampler="exact:anneal=4,anneal_from=0.2", num_iterations=10,
                 num_burnin=4, **kw)
    assert result.sampler == "exact:anneal=4,anneal_from=0.2"
    np.testing.assert_allclose(result.draws["anneal_power"],
                               np.tile([0.2, 0.4, 0.6, 0.8] + [1.0] * 6, (2, 1)), rtol=1e-6)
    assert set(result.snapshots[-1].arrays) == {"n_wk", "n_k", "eta"}
    assert predict(result, corpus, num_burnin=2, num_draws=2).scores.shape[:2] == (2, 2)
    # from a run of the exact sampler the anneal begins afresh: the burn-in must cover it
    first = fit(model, corpus, num_iterations=4, num_burnin=2, **kw)
    with pytest.raises(ValueError, match="so num_burnin"):
        fit(model, corpus, sampler="exact:anneal=3", num_iterations=10, num_burnin=6,
            start=first, **kw)
    on = fit(model, corpus, sampler="exact:anneal=3", num_iterations=10, num_burnin=7,
             start=first, **kw)
    np.testing.assert_allclose(on.draws["anneal_power"][0], [0.3, 0.3 + 0.7 / 3,
                                                             0.3 + 1.4 / 3, 1, 1, 1], rtol=1e-6)
    # an annealed run goes on with its anneal done: any burn-in will do
    later = fit(model, corpus, sampler="exact:anneal=3", num_iterations=12, num_burnin=10,
                start=on, **kw)
    assert (later.draws["anneal_power"] == 1.0).all()
    # and any sampler of the family goes on from the annealed chain's state
    for sampler in ("exact", "light", "exact:replicas=2"):
        after = fit(model, corpus, sampler=sampler, num_iterations=12, num_burnin=10,
                    start=on, **kw)
        assert after.iterations_done == 12 and "anneal_power" not in after.draws


def test_the_progress_lines_say_while_the_run_anneals(capsys):
    from chains import small_corpus
    from topiczoo import fit
    from topiczoo.models import medlda

    fit(medlda(3, c=1.0, ell=2.0), small_corpus(), sampler="exact:anneal=4", num_chains=2,
        num_iterations=10, num_burnin=5, num_snapshots=1, chunk=2, seed=1)
    lines = [line for line in capsys.readouterr().err.splitlines() if "iteration " in line]
    assert "annealed burn-in at power 0.30 on p(W | Z)" in lines[0]  # iteration 1
    assert "annealed burn-in at power 0.82 on p(W | Z)" in lines[2]  # iteration 4
    assert not any("annealed" in line for line in lines[3:])


def test_an_annealed_run_interrupted_mid_anneal_resumes_without_losing_draws(tmp_path):
    from chains import interrupt_at, small_corpus
    from topiczoo import fit
    from topiczoo.models import medlda

    corpus, model = small_corpus(), medlda(3, c=1.0, ell=2.0)
    kw = dict(sampler="exact:anneal=6", num_chains=2, num_iterations=12, num_burnin=6,
              num_snapshots=2, chunk=3, seed=1, progress=False)
    straight = fit(model, corpus, **kw)
    path = tmp_path / "annealed.npz"
    with pytest.raises(KeyboardInterrupt):  # after 3 of the 6 annealed iterations
        fit(model, corpus, checkpoint=path, callback=interrupt_at(3), **kw)
    resumed = fit(model, corpus, checkpoint=path, **kw)
    for name in straight.draws:
        np.testing.assert_array_equal(resumed.draws[name], straight.draws[name])
    np.testing.assert_array_equal(resumed.state.state.chain.z, straight.state.state.chain.z)
