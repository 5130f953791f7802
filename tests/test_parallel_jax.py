"""The parallel sampler's JAX engine (``kernels.parallel_jax``, ``sampler="parallel:z=jax"``),
run on CPU: the engine for accelerators, proved where the tests run.

* Its Z step alone, given eta, psi and rho, samples the exact distribution of Z
  (``given_eta``; Phi integrates out), with a response and without; a Phi drawn with the wrong
  Dirichlet parameter misses it.
* The whole kernel matches the enumeration of ``test_enumeration`` on a problem of each kind.
* A document's arithmetic (its score S_t, a token's log weights) gives the same bits whatever
  batch of documents it is vmapped in; S_t by XLA's reduce does not (planted).
* The documents sharded over 1 and 4 XLA CPU devices give the same draws bit for bit as no mesh
  (the step alone, and a whole fit against a process with one device); the word-topic counts
  left out of the devices' ``psum`` change them (exhaustive tier).
* The buckets: every non-empty document once, its tokens in order, rows padded for the shards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import given_eta
from mutants import mutant
from topiczoo.kernels import parallel_jax as pj

DOC_IDS = jnp.asarray(given_eta.DOC_IDS, jnp.int32)
BUCKETS = jax.tree.map(jnp.asarray, pj.length_buckets(given_eta.OFFSETS, 2))
NUM_SAMPLES = 200_000


def _frequencies(num_topics, num_tasks, step=pj.jax_assignments_step, seed=0,
                 num_samples=NUM_SAMPLES):
    """Frequencies of Z's configurations over ``num_samples`` steps after the burn-in."""
    eta = jnp.asarray(given_eta.ETA[num_topics][:num_tasks], jnp.float32)
    psi = jnp.asarray(given_eta.PSI[:num_tasks], jnp.float32)
    rho = jnp.asarray(given_eta.RHO[:num_tasks], jnp.float32)
    words = jnp.asarray(given_eta.WORDS)
    powers = num_topics ** jnp.arange(len(given_eta.WORDS))

    def body(z, key):
        z, _, _ = step(key, z, words, DOC_IDS, BUCKETS, eta, psi, rho, given_eta.ALPHA,
                       given_eta.BETA, num_topics=num_topics, vocab_size=given_eta.VOCAB)
        return z, jnp.sum(z * powers)

    keys = jax.random.split(jax.random.PRNGKey(seed), given_eta.NUM_BURNIN + num_samples)
    z0 = jnp.asarray(given_eta.initial_state(num_topics, 5)[0])
    _, index = jax.jit(lambda z, keys: jax.lax.scan(body, z, keys))(z0, keys)
    index = np.asarray(index)[given_eta.NUM_BURNIN:]
    return np.bincount(index, minlength=num_topics ** len(given_eta.WORDS)) / num_samples


@pytest.mark.slow
def test_step_matches_enumeration_given_eta():
    """K = 3, two tasks (measured TV 0.0100)."""
    tv = given_eta.tv_distance(given_eta.exact_z(3, 2), _frequencies(3, 2))
    assert tv < given_eta.TV_BOUND[3], f"TV {tv:.4f}"


@pytest.mark.slow
def test_step_matches_enumeration_plain_lda():
    """No response, K = 2, 400,000 sweeps (measured TV 0.0071 and 0.0081 with seeds 0 and 1;
    independent draws about 0.0071)."""
    tv = given_eta.tv_distance(given_eta.exact_z(2, 0), _frequencies(2, 0, num_samples=400_000))
    assert tv < given_eta.TV_BOUND[2], f"TV {tv:.4f}"


@pytest.mark.slow
def test_enumeration_detects_topics_drawn_with_the_wrong_prior():
    """Phi_k ~ Dir(n_.k + 1) instead of Dir(n_.k + beta): the chain misses the target."""
    draw = mutant(pj.draw_log_topics, [("n_wk.astype(jnp.float32) + beta",
                                        "n_wk.astype(jnp.float32) + 1.0")])
    step = mutant(pj.jax_assignments_step, [], {"draw_log_topics": draw})
    tv = given_eta.tv_distance(given_eta.exact_z(3, 2),
                               _frequencies(3, 2, step, num_samples=50_000))
    assert tv > 3 * given_eta.TV_BOUND[3], f"the mutant went unnoticed (TV {tv:.4f})"


# the kernel: one problem of each kind of test_enumeration (the host engine runs them all)
KERNEL_PROBLEMS = ["lda", "hinge-c3-ell1", "gaussian-learned-s2", "hinge-two-tasks"]


@pytest.mark.slow
@pytest.mark.parametrize("name", KERNEL_PROBLEMS)
def test_kernel_matches_enumeration(name):
    from test_parallel import assert_kernel_matches_enumeration

    assert_kernel_matches_enumeration(name, "parallel:z=jax")


def test_buckets_hold_every_token_once_in_order():
    offsets = np.array([0, 3, 3, 10, 11, 19, 20, 40, 41, 45])
    for num_shards in (1, 3):
        buckets = pj.length_buckets(offsets, num_buckets=3, num_shards=num_shards)
        rows = {}
        for docs, places in zip(buckets.docs, buckets.places):
            assert len(docs) % num_shards == 0 and places.shape[0] == len(docs)
            for d, row in zip(docs, places):
                if (row >= 0).any():
                    rows[int(d)] = row
        lengths = np.diff(offsets)
        assert sorted(rows) == [d for d in range(len(lengths)) if lengths[d]]
        for d, row in rows.items():
            np.testing.assert_array_equal(row[row >= 0], np.arange(offsets[d], offsets[d + 1]))
            assert (row[lengths[d]:] == -1).all()
    assert 1.0 < pj.length_buckets(offsets, 3).padding < 2.0


def test_kernel_without_buckets_says_what_to_do():
    from chains import tiny_data
    from topiczoo.kernels.gibbs import GibbsKernel
    from topiczoo.models import lda

    kernel = GibbsKernel(lda(2), 3, sampler="parallel:z=jax")
    data = tiny_data(given_eta.DOCS)
    state = kernel.init(jax.random.PRNGKey(0), 0, None, (data,), {})
    with pytest.raises(ValueError, match=r"GibbsKernel.prepare\(data\)"):
        kernel.sample(state, (data,), {})
    kernel.sample(state, (kernel.prepare(data),), {})


# ---------------------------------------------------------------------------------------------
# A document's arithmetic does not depend on the batch it is swept in

def _batch_problem(num_docs=51, length=77, num_topics=10, num_tasks=3):
    """Documents as a bucket holds them (topics int32 [D, L], valid bool [D, L]) and the
    inputs of a token's weights, float32, at the magnitudes of a real run."""
    rng = np.random.default_rng(0)
    f32 = np.float32
    return dict(
        eta=(rng.normal(size=(num_tasks, num_topics)) * 3).astype(f32),
        topics=rng.integers(0, num_topics, (num_docs, length)).astype(np.int32),
        valid=rng.random((num_docs, length)) < 0.9,
        n_k=rng.integers(0, 20, (num_docs, num_topics)).astype(f32),
        score=(rng.normal(size=(num_docs, num_tasks)) * 20).astype(f32),
        inv_n=(1.0 / rng.integers(20, 200, num_docs)).astype(f32),
        log_phi_w=np.log(rng.dirichlet(np.ones(num_topics), num_docs)).astype(f32),
        psi=rng.normal(size=(num_docs, num_tasks)).astype(f32),
        rho=rng.gamma(1.0, size=(num_docs, num_tasks)).astype(f32))


def _split_batches(function, arrays):
    """``function`` vmapped over the documents of ``arrays`` at once, in two unequal halves
    and one by one (three batch shapes, as one, two or many devices make): float32 arrays."""
    batched = jax.jit(jax.vmap(function))
    whole = np.asarray(batched(*arrays))
    halves = np.concatenate([np.asarray(batched(*[a[:26] for a in arrays])),
                             np.asarray(batched(*[a[26:] for a in arrays]))])
    single = np.concatenate([np.asarray(batched(*[a[d:d + 1] for a in arrays]))
                             for d in range(len(arrays[0]))])
    return whole, halves, single


def _document_scores(score_function):
    p = _batch_problem()
    eta = jnp.asarray(p["eta"])
    return _split_batches(lambda topics, valid: score_function(eta, topics, valid),
                          [jnp.asarray(p["topics"]), jnp.asarray(p["valid"])])


def test_document_score_does_not_depend_on_the_batch():
    """S_t of 51 documents of 77 places, three tasks, vmapped at once, in halves and one by
    one: the same bits, and the sums of float64 (S_t is a sum of float32 terms in token
    order). Planted: S_t by XLA's reduce (the engine's code before 2026-11-29) gives other
    bits in another batch shape, the defect that made a fit on bbc part between one device
    and two."""
    whole, halves, single = _document_scores(pj.document_score)
    np.testing.assert_array_equal(halves, whole)
    np.testing.assert_array_equal(single, whole)
    p = _batch_problem()
    exact = np.einsum("dl,tdl->dt", p["valid"], p["eta"][:, p["topics"]].astype(np.float64))
    np.testing.assert_allclose(whole, exact, rtol=1e-5, atol=1e-4)

    reduce_mutant = mutant(pj.document_score, [
        ("    return jax.lax.scan(add, start, jnp.arange(topics.shape[0]))[0]",
         "    return (eta[:, topics] * valid).sum(axis=1)")])
    whole, halves, single = _document_scores(reduce_mutant)
    assert (halves != whole).any() or (single != whole).any()


def test_token_weights_do_not_depend_on_the_batch():
    """A token's log weights (``token_log_weights``, three tasks) of 51 documents vmapped at
    once, in halves and one by one: the same bits, and the formula's value in float64."""
    p = _batch_problem()
    names = ("n_k", "score", "inv_n", "log_phi_w", "psi", "rho")
    eta = jnp.asarray(p["eta"])

    def weights(n_k, score, inv_n, log_phi_w, psi, rho):
        return pj.token_log_weights(n_k, score, eta, inv_n, log_phi_w, psi, rho, 0.1)

    whole, halves, single = _split_batches(weights, [jnp.asarray(p[n]) for n in names])
    np.testing.assert_array_equal(halves, whole)
    np.testing.assert_array_equal(single, whole)
    omega = (p["score"][:, :, None] + p["eta"][None].astype(np.float64)) * p["inv_n"][:, None, None]
    response = (p["psi"][:, :, None] * omega - 0.5 * p["rho"][:, :, None] * omega ** 2).sum(1)
    exact = np.log(p["n_k"] + 0.1) + p["log_phi_w"] + response
    np.testing.assert_allclose(whole, exact, rtol=1e-5, atol=1e-4)


def test_topics_normaliser_is_the_sum_over_the_words_whatever_the_batch():
    """log sum_w exp(log_g[w, k]) of Phi's draw (``_log_sum_words``, a fixed pairwise order):
    the float64 value for V = 1, 3 and 1,000 words (V not a power of two: padded), and the same
    bits for three chains vmapped at once and one by one."""
    rng = np.random.default_rng(1)
    for vocab_size in (1, 3, 1000):
        log_g = (rng.normal(size=(3, vocab_size, 7)) * 30).astype(np.float32)
        batched = np.asarray(jax.jit(jax.vmap(pj._log_sum_words))(log_g))
        alone = np.stack([np.asarray(jax.jit(pj._log_sum_words)(g)) for g in log_g])
        np.testing.assert_array_equal(batched, alone)
        g64 = log_g.astype(np.float64)
        top = g64.max(axis=1, keepdims=True)
        exact = top + np.log(np.exp(g64 - top).sum(axis=1, keepdims=True))
        np.testing.assert_allclose(batched, exact, rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Devices: the same draws

_DEVICES = """
import json, sys
sys.path.insert(0, sys.argv[1])
import jax, numpy as np
import step_digest  # the problem: 37 documents, K = 6, two tasks; 5 steps, 3 vmapped chains


def digest(num_devices, step=None):
    mesh = (jax.sharding.Mesh(np.array(jax.devices()[:num_devices]), ("docs",))
            if num_devices else None)
    # two length buckets: the draws do not depend on their number; the compilation's time does
    return step_digest.digest(mesh, step, num_buckets=2)


if sys.argv[2] == "planted":
    # each device draws Phi from its own documents' counts (the psum left out); a document's
    # stream keyed by its row on its device
    print(json.dumps({"0": digest(0), "no-psum": digest(4, step_digest.no_psum_step()),
                      "row-keyed": [digest(0, step_digest.row_keyed_step()),
                                    digest(4, step_digest.row_keyed_step())]}))
else:
    print(json.dumps({str(n): digest(n) for n in (0, 1, 4)}))
"""

_FIT = """
import hashlib, json
import numpy as np
from topiczoo.corpus import Corpus
from topiczoo.fit import fit
from topiczoo.models import gslda

rng = np.random.default_rng(0)
docs = [rng.integers(0, 30, size=rng.integers(5, 40)) for _ in range(50)]
corpus = Corpus(np.concatenate(docs).astype(np.int32),
                np.concatenate([[0], np.cumsum([len(d) for d in docs])]),
                tuple(f"w{i}" for i in range(30)), labels=np.arange(50) % 2)
result = fit(gslda(5), corpus, sampler="parallel:z=jax", num_chains=2, num_iterations=4,
             num_snapshots=1, progress=False, seed=3, compilation_cache=False)
h = hashlib.sha256()  # the chain's state: the draws of eta and every snapshot
h.update(np.ascontiguousarray(result.draws["eta"]).tobytes())
for snap in result.snapshots:
    for name in sorted(snap.arrays):
        h.update(np.ascontiguousarray(snap.arrays[name]).tobytes())
monitors = {name: np.asarray(draws, np.float64).ravel().tolist()
            for name, draws in result.draws.items() if name != "eta"}
print(json.dumps({"sampler": result.sampler, "digest": h.hexdigest()[:16],
                  "monitors": monitors}))
"""


def _run(script: str, num_devices: int, *args: str) -> dict:
    env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={num_devices}",
           "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_step_draws_do_not_depend_on_the_devices():
    """No mesh, and the documents sharded over 1 and 4 devices: the same z, n_dk and
    log-likelihood, bit for bit, in three vmapped chains."""
    got = _run(_DEVICES, 4, str(Path(__file__).parent), "plain")
    assert len(got) == 3 and len(set(got.values())) == 1, got


@pytest.mark.slow
def test_the_device_test_sees_a_psum_left_out_and_streams_keyed_by_row():
    """The device test's power: a planted step whose devices draw Phi from their own
    documents' counts (the psum left out) changes the draws of four devices, and one whose
    documents' streams are keyed by their row on the device draws differently on one device
    and on four."""
    got = _run(_DEVICES, 4, str(Path(__file__).parent), "planted")
    row_keyed_one, row_keyed_four = got["row-keyed"]
    assert got["no-psum"] != got["0"], got
    assert row_keyed_one != row_keyed_four, got


@pytest.mark.slow
def test_fit_draws_do_not_depend_on_the_devices():
    """A whole fit on four devices and on one: the same state (eta and every snapshot, bit
    for bit) and the same monitors. The monitors are compared to 1e-6: they are functions of
    the state, and XLA may fuse a float reduction of the program that holds the shard_map
    differently (measured: eta_norm 1 ulp apart, every other monitor equal)."""
    one, four = _run(_FIT, 1), _run(_FIT, 4)
    assert one["sampler"] == four["sampler"] == "parallel:z=jax"
    assert one["digest"] == four["digest"], (one, four)
    assert one["monitors"].keys() == four["monitors"].keys()
    for name, values in one["monitors"].items():
        np.testing.assert_allclose(four["monitors"][name], values, rtol=1e-6, err_msg=name)
