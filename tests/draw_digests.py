"""Digests of every model's collected draws, snapshots and test scores for fixed seeds.

``tests/test_draws_unchanged.py`` compares today's code against ``draw_digests.json``, recorded
on main before the model-family redesign: a refactoring that changes any draw by one
bit fails it. Re-record only for a change that is meant to change the draws, and say why in the
commit: ``python tests/draw_digests.py --record``.

Bit-exact digests also depend on the machine and the installed builds: on 2026-11-23 the
recorded supervised digests stopped matching with unchanged code and unchanged jax / numba
versions (a fresh install on an AVX-512 machine; ``lda`` still matched, so the difference is
in float32 linear algebra: the eta draw's QR, which jax's CPU backend runs through LAPACK).
They were re-recorded there; if a fresh CI machine disagrees again, the cause is the platform,
not a refactoring.

The supervised digests were re-recorded once more when the exact sampler's default eta draw
became the float64 Cholesky on the host (``kernels.eta.draw_eta_cholesky``; the float32 QR is
now ``exact:eta=qr``): a change meant to change the draws. That draw is plain loops in numba,
with no LAPACK call, so these digests no longer go through the QR's LAPACK.

Re-recorded on 2026-11-28 when the exact sampler's state stopped holding the counts
(``kernels.assignments``): every draw and snapshot is bit for bit the same except the
``log_likelihood`` monitor, now summed in float64 on the host and rounded once to float32
instead of summed in float32 in XLA (at most 1.3e-7 relative on these cases).

``MORE_CASES`` extends the digests to every sampler and family (the light sampler, the exact
sampler's other eta draws, the mixture of unigrams, the HDP and every sHDP): recorded with the
code as it stood before the supervised part and the sweeps were reorganised, so that the
reorganisation is checked on every model; the earlier cases' digests were not re-recorded.
Each entry names the draws and snapshot arrays it covers (``draw_keys``, ``snapshot_keys``):
a monitor added later (the sHDP's ``omega_mean_abs``, when the supervised monitors became one
function for every family) does not change the digest of those that were there, and one that
disappears fails the comparison.

``PARALLEL_CASES`` (the parallel sampler's numba engine, with the default dispersed start)
were recorded before its per-token table upkeep became one function with the collapsed
sweep's, and re-recorded on 2026-11-29 when the small-shape gamma variates of its Phi draw
(``kernels.random._log_gamma_small``) began to take their exponential from the ziggurat and
their acceptance uniform from the part's choice: a change meant to change the draws (every
other case unchanged).

The 6 ``PARALLEL_CASES`` were re-recorded on 2026-11-30 when the Phi draw began to draw the
entries of a word absent from a topic a row at a time (``kernels.random.small_try_begin``, a
vectorized exp, the tries ended; for a word of fewer than K / 2 tokens): each entry's first
try takes its two random numbers in one pass over the row, and what a try still needs comes
after the row's, so the entries take other numbers from the same stream (a change meant to
change the draws; the 60 other cases unchanged).

They were re-recorded again the same day when every row began to be drawn at once below shape
0.3 and an entry of n_wk > 0 to be the row's Gamma(beta) variate plus a Gamma(n_wk) (the sum
of n_wk exponential variates up to 8; ``kernels.random.gamma_row``) instead of a
Gamma(n_wk + beta) drawn afresh: a change meant to change the draws (the 60 other cases
unchanged, ``--check``).

On 2026-11-29 the 12 parametric cases whose digests cover the ``log_joint`` monitor were
re-recorded when its p(Z | alpha) term began to take lgamma(n + alpha) - lgamma(alpha) from a
table (``kernels.topics.log_rising_factorial``) instead of XLA's float32 gammaln: the same
values up to float32 rounding. The digests of all 14 cases that cover ``log_joint`` (the two
sHDP ones, whose p(Z) term is its own, unchanged) were computed without it before and after
the change: the same, bit for bit.

On 2026-11-30 the light sampler with no option began to run as the exact sampler below
``models.parametric.MH_FROM_TOPICS`` topics (``z_draw="auto"``): the light cases, at K = 3,
now name ``z_draw=mh`` where they named no option, LightMedLDA as they were recorded, and
their digests are unchanged.

When the chains' default start became the dispersed one (``fit(init="dispersed")``: Z from
its prior), the recorded cases kept checking the start they were recorded with: they are run
with ``init="uniform"`` (the earlier default, still selectable), and ``DISPERSED_CASES`` were
recorded with the new default.

On 2026-11-30 the 18 HDP and sHDP cases were re-recorded when their ``log_likelihood`` monitor
(``kernels.hdp.log_likelihood``, also a term of their ``log_joint``) began to take lgamma(n_wk +
beta) - lgamma(beta) from ``kernels.topics.log_rising_factorial`` instead of XLA's float32
gammaln: their digests over every other draw, the snapshots and the scores were computed
before and after the change, the same bit for bit; the monitor moved by at most 1.4e-7
relative.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np

DIGEST_FILE = os.path.join(os.path.dirname(__file__), "draw_digests.json")


def _corpus(labels):
    from topiczoo.corpus import Corpus

    rng = np.random.default_rng(0)
    docs = [rng.integers(0, 8, size=rng.integers(3, 9)) for _ in range(12)]
    lengths = [len(d) for d in docs]
    return Corpus(np.concatenate(docs).astype(np.int32),
                  np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                  tuple(f"w{i}" for i in range(8)), labels=labels)


BINARY = np.arange(12) % 2
RATINGS = np.round(np.sin(np.arange(12.0)) * 2.0, 3)
CLASSES = np.arange(12) % 3
MULTILABEL = np.stack([np.arange(12) % 2, (np.arange(12) // 3) % 2], axis=1)

# name -> (registry model name, options, labels)
CASES = {
    "lda": ("lda", {}, None),
    "gslda": ("gslda", {"c": 2.0, "nu2": 2.0}, BINARY),
    "medlda": ("medlda", {"c": 2.0, "ell": 2.0}, BINARY),
    "medlda-multilabel": ("medlda", {"c": 1.0, "ell": 1.0}, MULTILABEL),
    # centring (the default since) did not exist when the digests were recorded
    "medlda-regression": ("medlda-regression", {"c": 2.0, "eps": 0.1, "center": False}, RATINGS),
    "slda-gaussian": ("slda-gaussian", {"center": False}, RATINGS),
    "slda-gaussian-fixed": ("slda-gaussian", {"learn_s2": False, "s2": 0.5, "center": False},
                            RATINGS),
    "gslda-multitask": ("gslda-multitask", {"c": 1.0}, CLASSES),
    "medlda-multitask": ("medlda-multitask", {"c": 1.0, "ell": 2.0}, CLASSES),
}
# cases added later (every sampler and family): (registry name, options, labels, sampler);
# their snapshot digest covers every array of the snapshot
MORE_CASES = {
    "lda/light": ("lda", {}, None, "light:z_draw=mh"),
    "gslda/light": ("gslda", {"c": 2.0, "nu2": 2.0}, BINARY, "light:z_draw=mh"),
    "medlda-multilabel/light": ("medlda", {"c": 1.0, "ell": 1.0}, MULTILABEL, "light:z_draw=mh"),
    "medlda-regression/light": ("medlda-regression", {"c": 2.0, "eps": 0.1}, RATINGS,
                                "light:z_draw=mh"),
    "slda-gaussian/light": ("slda-gaussian", {}, RATINGS, "light:mh_steps=3,proposals=cycle"),
    "medlda-multitask/light": ("medlda-multitask", {"c": 1.0, "ell": 2.0}, CLASSES,
                               "light:eta_sweeps=2"),
    "gslda/exact-qr": ("gslda", {"c": 2.0}, BINARY, "exact:eta=qr"),
    "medlda-multitask/exact-coordinate": ("medlda-multitask", {"c": 1.0, "ell": 2.0}, CLASSES,
                                          "exact:eta=coordinate,eta_sweeps=2"),
    "unigram-mixture": ("unigram-mixture", {}, None, "exact"),
    "hdp": ("hdp", {}, None, "exact"),
    "shdp-gaussian": ("shdp-gaussian", {}, RATINGS, "exact"),
    "shdp-gaussian-learn-s2": ("shdp-gaussian", {"learn_s2": True}, RATINGS, "exact"),
    "shdp-regression": ("shdp-regression", {}, RATINGS, "exact"),
    "shdp-logistic": ("shdp-logistic", {"c": 2.0}, BINARY, "exact"),
    "shdp-hinge": ("shdp-hinge", {"ell": 2.0}, BINARY, "exact"),
    "shdp-multitask": ("shdp-multitask", {"ell": 2.0}, CLASSES, "exact"),
    "shdp-map": ("shdp-map", {}, RATINGS, "exact"),
}
# cases recorded with the dispersed start, the default since ``fit(init=...)`` existed
DISPERSED_CASES = {
    "lda/dispersed": ("lda", {}, None, "exact"),
    "medlda-multitask/dispersed": ("medlda-multitask", {"c": 1.0, "ell": 2.0}, CLASSES,
                                   "exact"),
    "gslda/light/dispersed": ("gslda", {"c": 2.0, "nu2": 2.0}, BINARY, "light:z_draw=mh"),
    "shdp-hinge/dispersed": ("shdp-hinge", {"ell": 2.0}, BINARY, "exact"),
}
# the parallel sampler (numba engine), recorded before its per-token table upkeep became the
# collapsed sweep's (``kernels.topics._after_draw``); re-recorded with the ziggurat's Phi draw
# and again with the Phi draw's rows of small-shape variates
PARALLEL_CASES = {
    "gslda/parallel": ("gslda", {"c": 2.0, "nu2": 2.0}, BINARY, "parallel"),
    "medlda-multitask/parallel": ("medlda-multitask", {"c": 1.0, "ell": 2.0}, CLASSES,
                                  "parallel"),
    "slda-gaussian/parallel": ("slda-gaussian", {}, RATINGS, "parallel"),
}
NUM_TOPICS = 3


def _digest(arrays) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:20]


def _build(name, options, labels):
    """The model of a case, through the API of the code under test."""
    import topiczoo.models as models

    corpus = _corpus(labels)
    if hasattr(models, "REGISTRY"):
        return models.REGISTRY[name].build(NUM_TOPICS, corpus=corpus, **options), corpus
    factory = getattr(models, name.replace("-", "_"))
    if name.endswith("multitask"):
        return factory(NUM_TOPICS, 3, **options), corpus
    return factory(NUM_TOPICS, **options), corpus


def _fit_case(name, options, labels, sampler, variant_kw, init="uniform"):
    import inspect

    from topiczoo.fit import fit

    model, corpus = _build(name, options, labels)
    kw = {} if sampler is None else {"sampler": sampler}
    if "init" in inspect.signature(fit).parameters:  # the start the digests were recorded with
        kw["init"] = init
    return fit(model, corpus, num_chains=2, num_iterations=8, num_burnin=4, num_snapshots=2,
               chunk=4, seed=3, progress=False, **kw, **variant_kw), corpus


def _entry(result, corpus, labels, draw_keys, snapshot_keys) -> dict:
    """A case's digests over the named draws and snapshot arrays (every one when None)."""
    from topiczoo.predict import predict

    draws = {k: np.asarray(v) for k, v in result.draws.items()}
    draw_keys = sorted(draws) if draw_keys is None else draw_keys
    snaps = [{k: np.asarray(v) for k, v in s.arrays.items()} for s in result.snapshots]
    snapshot_keys = sorted(snaps[0]) if snapshot_keys is None else snapshot_keys
    entry = {"draws": _digest({k: draws[k] for k in draw_keys}), "draw_keys": list(draw_keys),
             "snapshots": _digest({f"{i}.{k}": s[k] for i, s in enumerate(snaps)
                                   for k in snapshot_keys}),
             "snapshot_keys": list(snapshot_keys)}
    if labels is not None:
        scores = predict(result, corpus, num_burnin=2, num_draws=2, seed=1).scores
        entry["scores"] = _digest({"scores": np.asarray(scores)})
    return entry


VARIANTS = {"vectorized": dict(chain_method="vectorized"),
            "sequential-thin2": dict(chain_method="sequential", thinning=2)}


def compute(only=None, recorded=None) -> dict:
    """Digests of every case (``only``: of the cases whose name contains one of its strings),
    over the draws and snapshot arrays ``recorded`` names for the case (a monitor or snapshot
    array added since the recording is left out; one the recording has and the code no longer
    makes is a KeyError), or over every one (the first cases: the snapshot's n_wk, n_k and eta)
    when there is no recording."""
    recorded = recorded or {}
    cases = {case: (*spec, None) for case, spec in CASES.items()}
    cases.update(MORE_CASES)
    cases.update(DISPERSED_CASES)
    cases.update(PARALLEL_CASES)
    out = {}
    for case, (name, options, labels, sampler) in cases.items():
        init = "dispersed" if case in DISPERSED_CASES or case in PARALLEL_CASES else "uniform"
        for variant, kw in VARIANTS.items():
            key = f"{case}/{variant}"
            if only is not None and not any(part in key for part in only):
                continue
            result, corpus = _fit_case(name, options, labels, sampler, kw, init)
            old = recorded.get(key, {})
            snapshot_keys = old.get("snapshot_keys", ["eta", "n_k", "n_wk"] if case in CASES
                                    else None)
            out[key] = _entry(result, corpus, labels, old.get("draw_keys"), snapshot_keys)
    return out


if __name__ == "__main__":
    only = [a for a in sys.argv[1:] if not a.startswith("--")] or None
    recorded = None
    if "--check" in sys.argv:
        with open(DIGEST_FILE) as f:
            recorded = json.load(f)
    digests = compute(only, recorded)
    if recorded is not None:
        changed = sorted(case for case in digests if digests[case] != recorded.get(case))
        print(f"{len(digests) - len(changed)} of {len(digests)} cases unchanged; changed: "
              f"{changed}")
        sys.exit(1 if changed else 0)
    if "--record" in sys.argv:
        with open(DIGEST_FILE, "w") as f:
            json.dump(digests, f, indent=1, sort_keys=True)
            f.write("\n")
    print(json.dumps(digests, indent=1, sort_keys=True))
