"""The light sampler (LightMedLDA) through ``GibbsKernel`` and ``fit``: exact in its stationary
distribution with every block drawn, and usable end to end.

* **Enumeration** (``docs/design.md``, "How a kernel is proved exact"): long vectorised runs of the
  FULL kernel (eta by coordinate-wise Gibbs, Z by the light sweep, the augmentation drawn) on
  the 7-token, K = 2 corpus of ``test_enumeration.py`` reproduce the exact posterior of Z
  (``tests/exact.py``, the response's original pseudo-likelihood integrated over eta by
  quadrature) within ``TV_BOUND``: light with mixed and with cycled proposals, for a logistic
  (c = 4), a hinge and a Gaussian response with its variance drawn, and the exact sampler with
  coordinate-wise eta. Power: the exact posterior with the labels ignored (plain LDA) is at
  least 3 bounds away from each target (a kernel that lost the response would fail), and two
  mutants fail (measured TV 0.12 and 0.16): the light sweep with the document proposal's
  (n_dk + alpha) term left out of its acceptance ratio, and coordinate-wise eta with a wrong
  conditional mean. (The response proposal's q_R term left out is NOT caught reliably here:
  with eta drawn the supervised factor of this problem is mild and q_R nearly uniform; its
  measured TV is 0.013 at c = 4 and 0.050 at c = 9, against a bound of 0.04.
  ``test_light.py`` catches it with eta fixed at hot values.)
* **Options and end to end**: sampler names with options parse to one canonical spelling and
  bad ones are refused with the allowed values; ``topiczoo fit --sampler light:...`` runs,
  predicts and records the sampler in the checkpoint; an interrupted light fit resumes to the
  same draws as an uninterrupted one.
"""

from __future__ import annotations

import json
import sys

import jax
import numpy as np
import pytest
from numpyro.infer import MCMC

import exact
from exact import exact_posterior, total_variation
from mutants import mutant
from topiczoo.kernels.gibbs import CorpusData, GibbsKernel
from topiczoo.models import gslda, lda, medlda, parametric, slda_gaussian
from topiczoo.models.parametric import SamplerOptions, sampler_options

# The corpus of test_enumeration.py: 3 documents, V = 3, 7 tokens, ambiguous topics.
DOCS = ((0, 1, 0), (1, 2), (2, 0))
VOCAB = 3
LABELS = (1, 0, 1)
RATINGS = (0.9, -0.4, 1.3)
ALPHA, BETA = 1.0, 0.5
# 64 vectorised chains x 400 draws = 25,600 draws (after 50 warm-up iterations each). The
# measured TV of correct kernels at this length: 0.004-0.016 (Monte Carlo error alone).
NUM_CHAINS, NUM_SAMPLES, NUM_WARMUP = 64, 400, 50
TV_BOUND = 0.04

# name -> (model, oracle problem: exact.Problem's fields)
CASES = {
    "logistic-c4": (gslda(2, c=4.0, alpha=ALPHA, beta=BETA),
                    dict(response="logistic", labels=LABELS, c=4.0)),
    "hinge-c3-ell0.5": (medlda(2, c=3.0, ell=0.5, alpha=ALPHA, beta=BETA),
                        dict(response="hinge", labels=LABELS, c=3.0, ell=0.5)),
    "gaussian-learned-s2": (slda_gaussian(2, s2=0.5, learn_s2=True, a0=2.0, b0=0.5,
                                          center=False, alpha=ALPHA, beta=BETA),
                            dict(response="gaussian-s2", labels=RATINGS, a0=2.0, b0=0.5)),
}


def _tokens():
    """(words int32 [N], doc_offsets [D+1]) of DOCS."""
    return (np.concatenate(DOCS).astype(np.int32),
            np.concatenate([[0], np.cumsum([len(d) for d in DOCS])]))


def _data(model) -> CorpusData:
    """The corpus as the kernel reads it, labels coded by the model's response."""
    from topiczoo.kernels.gibbs import corpus_arrays

    words, offsets = _tokens()
    labels = RATINGS if model.tasks == ("regression",) else LABELS
    y = model.response.encode(np.asarray(labels)) if model.response else \
        np.zeros((0, len(DOCS)), np.float32)
    return corpus_arrays(words, offsets, y)


def _exact(case, ignore_labels=False) -> np.ndarray:
    """The oracle's p(Z | W, y) (or p(Z | W) with ``ignore_labels``) of a case."""
    fields = {} if ignore_labels else CASES[case][1]
    return exact_posterior(exact.Problem(DOCS, VOCAB, ALPHA, BETA, **fields))


def _frequencies(model, sampler: str, seed: int = 0) -> np.ndarray:
    """Configuration frequencies of Z over NUM_CHAINS vectorised chains of the kernel."""
    field = "state.z"
    mcmc = MCMC(GibbsKernel(model, VOCAB, sampler=sampler), num_warmup=NUM_WARMUP,
                num_samples=NUM_SAMPLES, num_chains=NUM_CHAINS, chain_method="vectorized",
                progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), _data(model), extra_fields=(field,))
    z = np.asarray(mcmc.get_extra_fields()[field])
    index = (z * 2 ** np.arange(z.shape[1])).sum(1)
    return np.bincount(index, minlength=2 ** z.shape[1]) / len(index)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["light:z_draw=mh", "light:proposals=cycle"],
                         ids=["mixture", "cycle"])
@pytest.mark.parametrize("case", list(CASES))
def test_light_kernel_matches_enumeration(case, sampler):
    target = _exact(case)
    near_miss = total_variation(target, _exact(case, ignore_labels=True))
    assert near_miss > 3 * TV_BOUND, f"the labels hardly move Z (TV {near_miss:.3f})"
    tv = total_variation(target, _frequencies(CASES[case][0], sampler))
    print(f"{case} {sampler}: TV {tv:.4f} (bound {TV_BOUND}; labels ignored: {near_miss:.3f})")
    assert tv < TV_BOUND, f"TV {tv:.4f} between the light kernel's Z and the exact posterior"


@pytest.mark.slow
def test_exact_kernel_with_coordinatewise_eta_matches_enumeration():
    target = _exact("hinge-c3-ell0.5")
    tv = total_variation(target, _frequencies(CASES["hinge-c3-ell0.5"][0], "exact:eta=coordinate"))
    print(f"exact:eta=coordinate hinge: TV {tv:.4f}")
    assert tv < TV_BOUND


# Mutants (tests/test_light.py's, planted into the full kernel): each must miss the target.
def _light_mutant(monkeypatch):
    from test_light import MUTANTS, planted_light_sweep
    from topiczoo.kernels import light

    monkeypatch.setattr(light, "_light_sweep",
                        planted_light_sweep(MUTANTS["document-without-proposal-term"]))


def _eta_mutant(monkeypatch):
    from test_light import ETA_MUTANTS
    from topiczoo.kernels import eta

    monkeypatch.setattr(eta, "_eta_coordinatewise",
                        mutant(eta._eta_coordinatewise, ETA_MUTANTS["own-term-kept"]))


@pytest.mark.slow
@pytest.mark.parametrize("plant, sampler", [
    (_light_mutant, "light:mh_steps=1"),
    (_eta_mutant, "exact:eta=coordinate"),
], ids=["light-document-term-left-out", "coordinate-eta-own-term-kept"])
def test_enumeration_detects_a_mutant(monkeypatch, plant, sampler):
    case = "logistic-c4"
    plant(monkeypatch)
    # fresh samplers: the cached ones (and their compiled steps) hold the original functions
    parametric._sampler.cache_clear()
    try:
        tv = total_variation(_exact(case), _frequencies(CASES[case][0], sampler))
    finally:
        parametric._sampler.cache_clear()
    print(f"mutant under {sampler}: TV {tv:.4f}")
    assert tv > 3 * TV_BOUND, f"the mutant went unnoticed (TV {tv:.4f})"


# ---------------------------------------------------------------------------------------------
# Options and end to end


def test_sampler_names_parse_to_one_canonical_spelling():
    assert sampler_options("light") == SamplerOptions("light")
    assert sampler_options(" light : mh_steps=6 ").spec() == "light"
    spec = sampler_options("light:proposals=cycle,eta_sweeps=2,mh_steps=2").spec()
    assert spec == "light:mh_steps=2,proposals=cycle,eta_sweeps=2"
    assert sampler_options("exact:eta=coordinate").spec() == "exact:eta=coordinate"
    assert sampler_options("exact:eta=cholesky").spec() == "exact"
    assert sampler_options("exact:eta=qr").spec() == "exact:eta=qr"
    model = medlda(3)
    assert model.samplers == ("exact", "light", "parallel")
    assert model.sampler("light:mh_steps=2", 5).name == "light:mh_steps=2"
    assert model.sampler("light:mh_steps=2", 5) is model.sampler("light:mh_steps=2", 5)
    assert sampler_options("light:z_draw=auto").spec() == "light"
    assert sampler_options("light:z_draw=mh").spec() == "light:z_draw=mh"


@pytest.mark.parametrize("spec, num_topics, runs_as", [
    ("light", parametric.MH_FROM_TOPICS - 1, "exact"),
    ("light", parametric.MH_FROM_TOPICS, "light"),
    ("light:mh_steps=6", 20, "exact"),  # the default, not a request
    ("light:mh_steps=2", 20, "light:mh_steps=2"),
    ("light:proposals=cycle", 20, "light:proposals=cycle"),
    ("light:eta_sweeps=2", 20, "light:eta_sweeps=2"),
    ("light:z_draw=mh", 20, "light:z_draw=mh"),
    ("exact:eta=qr", 20, "exact:eta=qr"),
])
def test_light_is_the_exact_sampler_below_its_crossover(spec, num_topics, runs_as):
    assert sampler_options(spec).runs_as(num_topics).spec() == runs_as
    assert medlda(num_topics).sampler(spec, 5).name == sampler_options(spec).spec()


def _one_step(model, sampler, seed=3):
    """The state after init and two kernel steps of ``sampler`` from the same key."""
    kernel = GibbsKernel(model, VOCAB, sampler=sampler)
    data = _data(model)
    state = kernel.init(jax.random.PRNGKey(seed), 0, None, (data,), {})
    for _ in range(2):
        state = kernel.sample(state, (data,), {})
    return jax.tree.map(np.asarray, state)


@pytest.mark.parametrize("num_topics, same_as", [
    (3, "exact"), (parametric.MH_FROM_TOPICS, "light:z_draw=mh")])
def test_light_draws_what_it_runs_as(num_topics, same_as):
    """``light`` (z_draw=auto) draws, bit for bit, what the exact sampler draws below
    MH_FROM_TOPICS topics and LightMedLDA from there on; the other one (what a mix-up would
    run) draws otherwise."""
    model = medlda(num_topics, c=3.0, ell=0.5, alpha=ALPHA, beta=BETA)
    light, same = _one_step(model, "light"), _one_step(model, same_as)
    other = _one_step(model, "light:z_draw=mh" if num_topics == 3 else "exact")
    jax.tree.map(np.testing.assert_array_equal, light, same)
    assert not np.array_equal(light.state.z, other.state.z) or \
        not np.array_equal(light.state.eta, other.state.eta)


@pytest.mark.parametrize("spec, message", [
    ("fast", "unknown sampler 'fast'; choose from exact, light, parallel"),
    ("light:mh_steps=0", "mh_steps must be an integer in [1, 1000], got '0'"),
    ("light:mh_steps=two", "mh_steps must be an integer in [1, 1000]"),
    ("light:mh_steps=\u00b2", "mh_steps must be an integer in [1, 1000]"),  # isdigit()
    ("light:mh_steps=1001", "mh_steps must be an integer in [1, 1000]"),
    ("exact:eta=coordinate,eta_sweeps=10000000000000000000000", "eta_sweeps must be an "
                                                                "integer in [1, 1000]"),
    ("light:proposals=random", "proposals must be one of mixture, cycle, got 'random'"),
    ("light:eta=qr", "bad option 'eta=qr'; its options: mh_steps=<integer 1-1000>, "
                     "proposals=mixture|cycle, eta_sweeps=<integer 1-1000>, "
                     "z_draw=auto|mh"),
    ("light:mh_steps=2,proposals=cycle", "mh_steps=2 would never use the last; give "
                                         "mh_steps >= 3"),
    ("light:mh_steps", "bad option 'mh_steps'"),
    ("light:mh_steps=2,mh_steps=3", "option mh_steps given twice"),
    ("light:z_draw=gibbs", "z_draw must be one of auto, mh, got 'gibbs'"),
    ("light:", "empty option list"),
    ("exact:eta_sweeps=2", "eta_sweeps needs eta=coordinate"),
    ("exact:eta=cholesky,eta_sweeps=2", "eta_sweeps needs eta=coordinate"),
    ("exact:eta=svd", "eta must be one of cholesky, qr, coordinate, got 'svd'"),
    ("exact:mh_steps=2", "bad option 'mh_steps=2'"),
    (None, "sampler must be a string"),
])
def test_bad_sampler_names_are_refused(spec, message):
    with pytest.raises(ValueError) as err:
        medlda(3).sampler(spec, 5)
    assert str(err.value).startswith("medlda: ") and message in str(err.value), err.value


def test_a_cycle_needs_a_step_per_proposal():
    """The cycle restarts at each token: LDA has 2 proposals, a supervised model 3."""
    assert lda(3).sampler("light:mh_steps=2,proposals=cycle", 5).name == \
        "light:mh_steps=2,proposals=cycle"
    assert medlda(3).sampler("light:mh_steps=3,proposals=cycle", 5).name == \
        "light:mh_steps=3,proposals=cycle"
    with pytest.raises(ValueError, match="give mh_steps >= 2"):
        lda(3).sampler("light:mh_steps=1,proposals=cycle", 5)


@pytest.mark.parametrize("heavy", [False, True], ids=["small-counts", "counts-beyond-table"])
def test_host_log_likelihood_is_the_collapsed_one(heavy):
    """The light state's log_likelihood monitor (O(N) on the host) equals the exact sampler's
    (``collapsed_log_likelihood`` of the counts, O(V K) in XLA), one chain or vmapped; with
    ``heavy``, one word's count in one topic passes the monitor's log-gamma table."""
    from scipy.special import gammaln

    from topiczoo.kernels.assignments import _LGAMMA_TABLE, assignments_log_likelihood
    from topic_state_steps import collapsed_log_likelihood, counts_from_assignments

    rng = np.random.default_rng(0)
    num_topics, vocab_size, num_docs = 7, 40, 20
    lengths = rng.integers(1, 50, num_docs)
    if heavy:
        lengths[0] = 3 * _LGAMMA_TABLE
    words = rng.integers(0, vocab_size, lengths.sum())
    zs = rng.integers(0, num_topics, (3, lengths.sum()))
    if heavy:  # word 0 in topic 0, 1.5 table lengths of it
        words[:3 * _LGAMMA_TABLE // 2] = 0
        zs[:, :3 * _LGAMMA_TABLE // 2] = 0
    data = _corpus_data(words, lengths)
    zs = jax.numpy.asarray(zs, jax.numpy.int32)
    host = jax.jit(jax.vmap(lambda z: assignments_log_likelihood(
        z, data.words, data.doc_offsets, 0.1, num_topics=num_topics, vocab_size=vocab_size)))(zs)
    for z, value in zip(zs, np.asarray(host)):
        counts = counts_from_assignments(z, data.words, data.doc_ids, num_docs, num_topics,
                                         vocab_size)
        n_wk = np.asarray(counts.n_wk, np.float64)
        float64 = ((gammaln(vocab_size * 0.1) - gammaln(n_wk.sum(0) + vocab_size * 0.1)).sum()
                   + (gammaln(n_wk + 0.1) - gammaln(0.1)).sum())
        np.testing.assert_allclose(value, float64, rtol=1e-6)
        # the exact sampler's float32 monitor, within its rounding
        np.testing.assert_allclose(value, float(collapsed_log_likelihood(counts, 0.1)),
                                   rtol=1e-5)
        assert not heavy or n_wk.max() >= _LGAMMA_TABLE


def _corpus_data(words, lengths) -> CorpusData:
    from topiczoo.kernels.gibbs import corpus_arrays

    return corpus_arrays(words, np.concatenate([[0], np.cumsum(lengths)]),
                         np.zeros((0, len(lengths)), np.float32))


@pytest.mark.slow
def test_cli_fit_with_the_light_sampler_records_it(tmp_path, capsys):
    from topiczoo.cli import main

    out = tmp_path / "run"
    fast = ["--topics", "4", "--chains", "2", "--iterations", "8", "--snapshots", "2",
            "--test-burnin", "2", "--test-draws", "2", "--quiet", "--checkpoint"]
    assert main(["fit", "--model", "medlda", "--sampler", " light : mh_steps=2, ", "--out",
                 str(out), *fast]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert 0.0 <= summary["test_accuracy"] <= 1.0 and "log_likelihood" in summary["rhat"]
    assert summary["sampler"] == "light:mh_steps=2"  # the canonical name, as in the tree
    from topiczoo.diagnostics import diagnose

    diagnose(out)
    assert "| sampler | light:mh_steps=2 |" in (out / "report.md").read_text()
    with np.load(out / "checkpoint.npz") as archive:
        assert json.loads(str(archive["meta"]))["sampler"] == "light:mh_steps=2"
    capsys.readouterr()
    # the checkpoint belongs to the light run: another sampler is refused, not resumed
    assert main(["fit", "--model", "medlda", "--sampler", "exact", "--out", str(out),
                 *fast]) == 2
    assert "sampler: checkpoint light:mh_steps=2, this run exact" in capsys.readouterr().err
    assert main(["fit", "--model", "medlda", "--sampler", "light:steps=2", "--out",
                 str(tmp_path / "bad"), *fast]) == 2
    assert "bad option 'steps=2'" in capsys.readouterr().err


@pytest.mark.slow
def test_interrupted_light_fit_resumes_to_the_same_draws(tmp_path):
    from chains import interrupt_at, small_corpus
    from topiczoo.fit import fit

    corpus, model = small_corpus(), gslda(3, c=2.0)
    settings = dict(sampler="light:proposals=cycle", num_chains=2, num_iterations=10,
                    num_burnin=4, num_snapshots=2, chunk=3, seed=5, progress=False)
    whole = fit(model, corpus, **settings)
    path = tmp_path / "checkpoint.npz"
    with pytest.raises(KeyboardInterrupt):
        fit(model, corpus, checkpoint=path, callback=interrupt_at(5), **settings)
    resumed = fit(model, corpus, checkpoint=path, **settings)
    assert resumed.sampler == whole.sampler == "light:proposals=cycle"
    for name in whole.draws:
        np.testing.assert_array_equal(resumed.draws[name], whole.draws[name])
    for a, b in zip(resumed.snapshots, whole.snapshots):
        for name in a.arrays:
            np.testing.assert_array_equal(a.arrays[name], b.arrays[name])
    assert whole.snapshots[-1].arrays["n_wk"].sum(axis=(1, 2)).tolist() == [corpus.num_tokens] * 2
    zbar = model.predictor().train_proportions(whole.chain_state(0))
    np.testing.assert_allclose(zbar.sum(1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("sampler", ["exact", "light"])
def test_fit_builds_the_word_index_once(monkeypatch, sampler):
    """The word -> tokens index is built with the data (into the CorpusData) and read by every
    host step of the fit, the initial log-likelihood included; a step that rebuilt it would
    count here once per iteration (and per chain)."""
    import topiczoo.kernels.assignments as assignments
    from chains import small_corpus
    from topiczoo.fit import fit

    built = []
    real = assignments.word_token_index
    monkeypatch.setattr(assignments, "word_token_index",
                        lambda *args: built.append(1) or real(*args))
    corpus = small_corpus()
    fit(gslda(3, c=2.0), corpus, sampler=sampler, num_chains=2, num_iterations=4,
        num_burnin=2, num_snapshots=1, seed=0, progress=False)
    assert len(built) == 1


def test_half_a_word_index_is_refused_by_every_step():
    """word_offsets without word_tokens (or the reverse) is a clear error in each step that
    takes the index, not an argument silently dropped."""
    import jax.numpy as jnp

    from topic_state_steps import TopicState, light_topics_step
    from topiczoo.kernels import assignments, light

    words = jnp.array([0, 1, 2, 1], jnp.int32)
    offsets = jnp.array([0, 2, 4], jnp.int32)
    z = jnp.array([0, 1, 0, 1], jnp.int32)
    eta, none = jnp.zeros((0, 2), jnp.float32), jnp.zeros((0, 2), jnp.float32)
    w_off = jnp.array([0, 1, 3, 4], jnp.int32)
    key = jax.random.PRNGKey(0)
    topics = TopicState(z, jnp.array([[1, 1], [1, 1]], jnp.int32),
                        jnp.array([[1, 0], [0, 2], [1, 0]], jnp.int32),
                        jnp.array([2, 2], jnp.int32))
    sizes = dict(num_topics=2, vocab_size=3)
    calls = [
        lambda half: light_topics_step(key, topics, words, offsets, eta, none, none, 0.5, 0.1,
                                       **half),
        lambda half: light.light_assignments_step(key, z, words, offsets, eta, none, none, 0.5,
                                                  0.1, **sizes, **half),
        lambda half: assignments.collapsed_assignments_step(key, z, words, offsets, eta, none,
                                                            none, 0.5, 0.1, **sizes, **half),
        lambda half: assignments.assignments_log_likelihood(z, words, offsets, 0.1, **sizes,
                                                            **half),
    ]
    for call in calls:
        for half in ({"word_offsets": w_off}, {"word_tokens": jnp.arange(4, dtype=jnp.int32)}):
            with pytest.raises(ValueError, match="pass both word_offsets and word_tokens"):
                call(half)


def test_the_word_index_leaves_the_corpus_fingerprint_alone():
    """Checkpoints name their corpus by fingerprint: data with and without the word index
    (a function of the words) are the same corpus, another response is not."""
    from topiczoo.checkpoints import corpus_fingerprint
    from topiczoo.kernels.gibbs import corpus_arrays

    words, offsets = _tokens()
    y = np.asarray([LABELS], np.float32)
    with_index = corpus_arrays(words, offsets, y, VOCAB)
    assert with_index.word_tokens.shape == words.shape
    assert corpus_fingerprint(with_index) == corpus_fingerprint(corpus_arrays(words, offsets, y))
    assert corpus_fingerprint(with_index) != corpus_fingerprint(
        corpus_arrays(words, offsets, 1.0 - y, VOCAB))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q", "-s"]))
