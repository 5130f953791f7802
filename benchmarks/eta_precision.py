#!/usr/bin/env python
"""The eta draws: float32 QR (``draw_eta``), float64 Cholesky on the host (``draw_eta_cholesky``)
and a float64 coordinate-wise pass on the host (``draw_eta_coordinatewise``, the light sampler's)
on real 20news states: precision and cost.

Multi-task Gibbs MedLDA as in ``studies/light_20news.py`` (20 one-vs-all hinge tasks, c = 1,
ell = 64, alpha = 1/K per topic, beta = 0.01, nu2 = 1) on ``load_dataset("20news")``, one chain,
one thread.

1. **precision** (K = ``--precision-topics``, 100): the state after ``--precision-iterations``
   (20) iterations of the exact sampler with the QR draw (``exact:eta=qr``), seed 0; its
   Gaussian form (psi, rho) [20, D]. Reference: the conditional's mean and covariance by the
   dense float64 formula in numpy (P = I / nu2 + Zbar^T diag(rho) Zbar, zbar = n_dk / N_d in
   float64). For each draw, |mean - mean_64| / sd_64 (sd_64: the reference posterior standard
   deviation of each coordinate) over the 20 x K coordinates, max and rms; and the relative
   error of the draw's own posterior sd (from its factor: R for the QR, the host's is the
   reference's factor up to rounding). The coordinate-wise pass is a Markov step, not a draw
   of the mean: from eta = the reference mean (float32), one pass against the same pass in
   dense float64 numpy with the same normals (the host's numba generator is numpy's legacy
   MT19937), |pass - pass_64| / sd_k (the host's float64 result, before the sampler rounds it
   to float32; that rounding is given too), sd_k = 1 / sqrt(P_kk) each coordinate's conditional sd.
2. **cost**: for K in ``--cost-topics`` (20, 100, 400), a state after ``--cost-iterations``
   light iterations (cheap at large K; the sparsity of zbar is what matters), CPU seconds
   (``time.process_time``, one thread) per eta block with 20 tasks, jitted, as the exact
   sampler calls it: the QR draw from zbar, the Cholesky draw and one coordinate-wise pass
   through their ``pure_callback`` from the tokens; median of ``--repeats`` calls, the two interleaved in one process.

Usage::

    python benchmarks/eta_precision.py                    # writes results/eta_precision.json/.md
    python benchmarks/eta_precision.py --precision-topics 20 --precision-iterations 2 \\
        --cost-topics 20 --cost-iterations 2 --repeats 1 --out /tmp/eta_precision   # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from _machine import machine_description, set_single_thread  # noqa: E402
from reference import coordinatewise_eta_pass  # noqa: E402

THREADS = set_single_thread()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from topiczoo.kernels.eta import (_numba_seed, _seed_from_key, draw_eta,  # noqa: E402
                                  draw_eta_cholesky, draw_eta_coordinatewise, eta_cholesky_host,
                                  eta_conditional_factor, eta_coordinatewise_host)
from topiczoo.kernels.topics import topic_proportions  # noqa: E402
from topiczoo.models.supervised import corpus_data, task_of  # noqa: E402

NU2 = 1.0
HERE = Path(__file__).resolve().parent


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--precision-topics", type=int, default=100)
    p.add_argument("--precision-iterations", type=int, default=20)
    p.add_argument("--cost-topics", type=int, nargs="*", default=[20, 100, 400])
    p.add_argument("--cost-iterations", type=int, default=10)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--out", default=str(HERE / "results" / "eta_precision"),
                   help="path stem of the .json and .md written")
    return p.parse_args(argv)


def build(num_topics, corpus):
    from topiczoo.models import REGISTRY

    return REGISTRY["medlda-multitask"].build(num_topics, corpus=corpus, c=1.0, ell=64.0,
                                              alpha=1.0, beta=0.01, nu2=NU2)


def state_after(ds, num_topics, sampler, iterations, seed=0):
    """(model, data, z, n_dk, n_k, psi, rho) of one chain after ``iterations``."""
    from topiczoo.fit import fit

    model = build(num_topics, ds.train)
    result = fit(model, ds.train, sampler=sampler, num_chains=1, num_iterations=iterations,
                 num_burnin=iterations - 1, num_snapshots=1, progress=False, seed=seed)
    state = result.chain_state(0)
    data = corpus_data(model, ds.train, task_of(model, ds.train))
    psi, rho = model.response.gaussian_form(data.y, jnp.asarray(state.augmentation))
    z, n_dk = state.z, state.n_dk
    n_k = np.asarray(n_dk).sum(0).astype(np.int32)
    return data, np.asarray(z), np.asarray(n_dk), n_k, psi, rho


def reference(n_dk, psi, rho):
    """Dense float64 mean [T, K], posterior sd [T, K] and covariances [T, K, K]."""
    n_dk = np.asarray(n_dk, np.float64)
    zbar = n_dk / np.maximum(n_dk.sum(1, keepdims=True), 1)
    psi, rho = np.asarray(psi, np.float64), np.asarray(rho, np.float64)
    means, covs = [], []
    for psi_t, rho_t in zip(psi, rho):
        precision = np.eye(zbar.shape[1]) / NU2 + (zbar.T * rho_t) @ zbar
        covs.append(np.linalg.inv(precision))
        means.append(np.linalg.solve(precision, zbar.T @ psi_t))
    covs = np.array(covs)
    return np.array(means), np.sqrt(np.einsum("tkk->tk", covs)), covs


def reference_pass(eta, n_dk, psi, rho, noise):
    """One coordinate-wise pass in dense float64 (the update of ``draw_eta_coordinatewise``,
    ``tests/reference.py``) with the given normals [K, T]; returns (eta [T, K], each
    coordinate's conditional sd)."""
    n_dk = np.asarray(n_dk, np.float64)
    zbar = n_dk / np.maximum(n_dk.sum(1, keepdims=True), 1)
    eta, precision = coordinatewise_eta_pass(eta, zbar, psi, rho, NU2, noise)
    return eta, 1.0 / np.sqrt(precision)


def precision_part(ds, args):
    k = args.precision_topics
    data, z, n_dk, n_k, psi, rho = state_after(ds, k, "exact:eta=qr", args.precision_iterations)
    mean64, sd64, _ = reference(n_dk, psi, rho)
    zbar = topic_proportions(jnp.asarray(n_dk))
    factor = jax.jit(jax.vmap(eta_conditional_factor, in_axes=(None, 0, 0, None)),
                     static_argnums=3)
    r, mean_qr = factor(zbar, psi, rho, NU2)
    r = np.asarray(r, np.float64)
    sd_qr = np.sqrt(np.array([np.diag(np.linalg.inv(rt.T @ rt)) for rt in r]))
    mean_chol = eta_cholesky_host(z, np.asarray(data.doc_offsets), n_k, np.asarray(psi),
                                  np.asarray(rho), NU2, skip_empty=False, noise=False)
    rows = {}
    for name, mean, sd in (("qr_float32", np.asarray(mean_qr, np.float64), sd_qr),
                           ("cholesky_float64", mean_chol, None)):
        err = np.abs(mean - mean64) / sd64
        rows[name] = {"max_mean_error_sd": float(err.max()),
                      "rms_mean_error_sd": float(np.sqrt(np.mean(err**2))),
                      # the host's factor is not returned (tests/test_eta_cholesky.py checks
                      # its covariance by whitened draws)
                      "max_sd_relative_error": None if sd is None else
                      float(np.abs(sd / sd64 - 1).max())}
    start = mean64.astype(np.float32)
    key = jax.random.PRNGKey(1)
    seed = _numba_seed(_seed_from_key(key))
    one_pass = eta_coordinatewise_host(start, z, np.asarray(data.doc_offsets), np.asarray(psi),
                                       np.asarray(rho), NU2, seed)
    normals = np.random.RandomState(seed).standard_normal((k, psi.shape[0]))
    pass64, sd_k = reference_pass(start, n_dk, psi, rho, normals)
    err = np.abs(one_pass - pass64) / sd_k
    rows["coordinatewise_pass_float64"] = {
        "max_mean_error_sd": float(err.max()), "rms_mean_error_sd": float(np.sqrt(np.mean(err**2))),
        "max_sd_relative_error": None,
        # the rounding to float32 of its result (what the sampler keeps), for scale
        "float32_rounding_sd": float((np.abs(pass64 - pass64.astype(np.float32)) / sd_k).max())}
    psi_np, rho_np = np.asarray(psi), np.asarray(rho)
    return {"K": k, "iterations": args.precision_iterations, "tasks": int(psi_np.shape[0]),
            "rho_range": [float(rho_np.min()), float(rho_np.max())],
            "psi_range": [float(psi_np.min()), float(psi_np.max())],
            "empty_topics": int((n_k == 0).sum()), "draws": rows}


def cost_part(ds, args):
    qr = jax.jit(draw_eta, static_argnums=4)

    @jax.jit
    def chol(key, z, offsets, n_k, psi, rho):
        return draw_eta_cholesky(key, z, offsets, n_k, psi, rho, NU2, skip_empty=False)

    coordinate = jax.jit(draw_eta_coordinatewise, static_argnums=(6, 7))
    out = []
    for k in args.cost_topics:
        data, z, n_dk, n_k, psi, rho = state_after(ds, k, "light", args.cost_iterations)
        zbar = topic_proportions(jnp.asarray(n_dk))
        zj, nkj = jnp.asarray(z), jnp.asarray(n_k)
        eta = jnp.zeros((psi.shape[0], k), jnp.float32)  # the pass's cost does not depend on it
        nnz = (np.asarray(n_dk) > 0).sum(1)
        calls = {"qr": lambda key: qr(key, zbar, psi, rho, NU2),
                 "cholesky": lambda key: chol(key, zj, data.doc_offsets, nkj, psi, rho),
                 "coordinate": lambda key: coordinate(key, eta, zj, data.doc_offsets, psi, rho,
                                                      NU2, 1)}
        times = {name: [] for name in calls}
        key = jax.random.PRNGKey(0)
        for name, call in calls.items():  # compile
            jax.block_until_ready(call(key))
        for i in range(args.repeats):
            for name, call in calls.items():
                key, sub = jax.random.split(key)
                tic = time.process_time()
                jax.block_until_ready(call(sub))
                times[name].append(time.process_time() - tic)
        row = {"K": k, "tasks": int(psi.shape[0]), "docs": int(n_dk.shape[0]),
               "mean_nnz_per_doc": float(nnz.mean()),
               "sum_nnz_squared": int((nnz.astype(np.int64) ** 2).sum()),
               "cpu_seconds": {n: statistics.median(t) for n, t in times.items()},
               "cpu_seconds_all": times, "load": os.getloadavg()[0]}
        row["cholesky_over_qr"] = row["cpu_seconds"]["cholesky"] / row["cpu_seconds"]["qr"]
        print(f"K={k}: QR {row['cpu_seconds']['qr']:.3f} s, Cholesky "
              f"{row['cpu_seconds']['cholesky']:.3f} s, coordinate-wise pass "
              f"{row['cpu_seconds']['coordinate']:.3f} s per eta block (Cholesky / QR "
              f"{row['cholesky_over_qr']:.2f}; mean nnz/doc {row['mean_nnz_per_doc']:.1f})",
              flush=True)
        out.append(row)
    return out


def markdown(record) -> str:
    p = record["precision"]
    md = ["# The eta draws: float32 QR, float64 Cholesky, float64 coordinate-wise pass "
          "(eta_precision.py)", "",
          f"`{record['command']}`; load average {record['machine'].get('load_average')}; "
          f"one thread ({record['machine']['cpu']}).", "",
          f"## Precision: 20news multi-task MedLDA, K = {p['K']}, state after {p['iterations']} "
          f"exact iterations (seed 0), {p['tasks']} tasks", "",
          f"rho in [{p['rho_range'][0]:.3g}, {p['rho_range'][1]:.3g}], psi in "
          f"[{p['psi_range'][0]:.3g}, {p['psi_range'][1]:.3g}]; {p['empty_topics']} empty "
          "topics. Errors against the dense float64 formula (numpy), in posterior standard "
          "deviations per coordinate (the coordinate-wise pass: against the same pass in "
          "float64 numpy with the same normals, in each coordinate's conditional sd; the "
          "sampler's rounding of its result to float32 is "
          f"{p['draws']['coordinatewise_pass_float64']['float32_rounding_sd']:.3g}):", "",
          "| draw | max \\|mean - mean_64\\| / sd | rms | max \\|sd / sd_64 - 1\\| |",
          "|---|---|---|---|"]
    for name, r in p["draws"].items():
        sd = r["max_sd_relative_error"]
        md.append(f"| {name} | {r['max_mean_error_sd']:.3g} | {r['rms_mean_error_sd']:.3g} | "
                  + ("-" if sd is None else f"{sd:.3g}") + " |")
    md += ["", "## Cost: CPU seconds per eta block (20 tasks, jitted, median of "
           f"{record['args']['repeats']}; states after {record['args']['cost_iterations']} light "
           "iterations)", "",
           "| K | mean nnz per doc | QR float32 (XLA) | Cholesky float64 (host) | Cholesky / QR "
           "| coordinate-wise pass float64 (host) |",
           "|---|---|---|---|---|---|"]
    for r in record["cost"]:
        md.append(f"| {r['K']} | {r['mean_nnz_per_doc']:.1f} | {r['cpu_seconds']['qr']:.3f} | "
                  f"{r['cpu_seconds']['cholesky']:.3f} | {r['cholesky_over_qr']:.2f} | "
                  f"{r['cpu_seconds']['coordinate']:.3f} |")
    return "\n".join(md) + "\n"


def main(argv=None):
    args = parse_args(argv)
    from topiczoo import load_dataset

    ds = load_dataset("20news", data_dir=args.data_dir)
    record = {"command": "python benchmarks/eta_precision.py " + shlex.join(sys.argv[1:]),
              "threads": THREADS, "args": vars(args), "machine": machine_description()}
    record["precision"] = precision_part(ds, args)
    print(json.dumps(record["precision"], indent=1), flush=True)
    record["cost"] = cost_part(ds, args)
    record["machine_after"] = machine_description()
    stem = Path(args.out)
    stem.parent.mkdir(parents=True, exist_ok=True)
    record["args"]["out"] = os.path.relpath(args.out, HERE.parent)
    stem.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(record))
    print(markdown(record))


if __name__ == "__main__":
    main()
