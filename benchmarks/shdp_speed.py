"""Token throughput of the sHDP sweep against the parametric exact sweep, same run, same K.

On the 20news-binary training set: the sHDP direct-assignment sweep
(``kernels.hdp.sweep._hdp_sweep``, K0 topics occupied at a random start, capacity 2 K0, alpha = 1,
gamma = 1, one auxiliary topic) and the parametric collapsed sweep
(``kernels.topics._collapsed_sweep``) with as many topics K as the sHDP has occupied after its
3 warm-up sweeps (random start, 3 warm-up sweeps, alpha = 1/K per topic), both called directly
(the numba loops, no JAX callback), unsupervised (T = 0) and supervised (one logistic task:
psi = y - 1/2, rho = lambda = 1; eta ~ N(0, 1), the parametric sweep using the sHDP's eta
of its occupied topics). The sweeps are then timed alternately (parametric, sHDP, ...); the
median time per sweep is reported with the range of the sHDP's occupied topics while timed
(births and deaths move it a little). Ratio = sHDP tokens/s / parametric tokens/s (target
>= 0.5).

    python benchmarks/shdp_speed.py [--topics 20 50 100] [--sweeps 7]
"""

import argparse
import datetime
import json
import shlex
import sys
import time

from _machine import machine_description, set_single_thread

threads = set_single_thread(1)

import numpy as np  # noqa: E402

from topiczoo import load_dataset  # noqa: E402
from topiczoo.kernels.hdp import sweep as hdp_sweep  # noqa: E402
from topiczoo.kernels.hdp.sweep import _hdp_sweep  # noqa: E402
from topiczoo.kernels.topics import TABLE_ARGUMENTS, _collapsed_sweep  # noqa: E402

BETA = 0.01
# the sweeps' max_exponent and table size as the package passes them
TABLE, HDP_TABLE = TABLE_ARGUMENTS, hdp_sweep.TABLE_ARGUMENTS
ALPHA_TOTAL = 1.0  # parametric: alpha / K per topic; sHDP: alpha = 1, beta_k = 1 / (K + 1)


def counts(z, words, doc_offsets, num_topics, vocab):
    doc_ids = np.repeat(np.arange(len(doc_offsets) - 1), np.diff(doc_offsets))
    n_dk = np.zeros((len(doc_offsets) - 1, num_topics), np.int32)
    n_wk = np.zeros((vocab, num_topics), np.int32)
    np.add.at(n_dk, (doc_ids, z), 1)
    np.add.at(n_wk, (words, z), 1)
    return n_dk, n_wk, np.bincount(z, minlength=num_topics).astype(np.int32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--sweeps", type=int, default=7)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    data = load_dataset("20news-binary")
    train = data.train
    words = np.asarray(train.words, np.int32)
    offsets = np.asarray(train.doc_offsets, np.int64)
    num_docs, vocab, num_tokens = len(offsets) - 1, len(train.vocabulary), len(words)
    labels = np.asarray(train.labels, np.float64)
    rng = np.random.default_rng(0)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    lines = [f"shdp_speed  {now}",
             f"command: python {shlex.join(sys.argv)}",
             f"data: load_dataset('20news-binary').train: D={num_docs} N={num_tokens} V={vocab}",
             f"machine: {machine_description()}", f"threads: {threads}", ""]
    results = []
    for supervised in (False, True):
        for num_topics in args.topics:
            num_tasks = 1 if supervised else 0
            psi = np.zeros((num_tasks, num_docs))
            rho = np.zeros((num_tasks, num_docs))
            if supervised:
                psi[0] = labels - 0.5
                rho[0] = 1.0
            # sHDP: K topics occupied at the start, capacity 2K, 3 warm-up sweeps
            z0 = rng.integers(0, num_topics, num_tokens).astype(np.int32)
            capacity = 2 * num_topics
            n_dk, n_wk, n_k = counts(z0, words, offsets, capacity, vocab)
            beta_w = np.zeros(capacity)
            beta_w[:num_topics] = 1.0 / (num_topics + 1)
            eta_h = np.zeros((num_tasks, capacity))
            eta_h[:, :num_topics] = rng.standard_normal((num_tasks, num_topics))
            hdp = [z0, n_dk, n_wk, n_k, beta_w,
                   np.array([ALPHA_TOTAL, 1.0, 1.0 / (num_topics + 1)]), eta_h]
            for sweep in range(3):
                assert _hdp_sweep(*hdp, words, offsets, psi, rho, BETA, 1.0, 1, sweep,
                                  *HDP_TABLE) == 0
            # parametric: as many topics as the sHDP has now, their eta, 3 warm-up sweeps
            occupied_now = np.flatnonzero(hdp[3] > 0)
            k_par = len(occupied_now)
            eta = np.ascontiguousarray(hdp[6][:, occupied_now])
            z1 = rng.integers(0, k_par, num_tokens).astype(np.int32)
            par = [z1, *counts(z1, words, offsets, k_par, vocab)]
            for sweep in range(3):
                _collapsed_sweep(*par, words, offsets, eta, psi, rho, ALPHA_TOTAL / k_par, BETA,
                                 sweep, *TABLE)
            times = {"parametric": [], "shdp": []}
            occupied = []
            for sweep in range(3, 3 + args.sweeps):
                tic = time.perf_counter()
                _collapsed_sweep(*par, words, offsets, eta, psi, rho, ALPHA_TOTAL / k_par, BETA,
                                 sweep, *TABLE)
                times["parametric"].append(time.perf_counter() - tic)
                tic = time.perf_counter()
                status = _hdp_sweep(*hdp, words, offsets, psi, rho, BETA, 1.0, 1, sweep, *HDP_TABLE)
                times["shdp"].append(time.perf_counter() - tic)
                assert status == 0, "capacity overflow in the benchmark"
                occupied.append(int((hdp[3] > 0).sum()))
            med = {k: float(np.median(v)) for k, v in times.items()}
            row = {"supervised": supervised, "K_start": num_topics, "K_parametric": k_par,
                   "shdp_occupied": [min(occupied), max(occupied)],
                   "parametric_s_per_sweep": med["parametric"], "shdp_s_per_sweep": med["shdp"],
                   "parametric_ns_per_token": 1e9 * med["parametric"] / num_tokens,
                   "shdp_ns_per_token": 1e9 * med["shdp"] / num_tokens,
                   "ratio": med["parametric"] / med["shdp"]}
            results.append(row)
            lines.append(
                f"{'logistic T=1' if supervised else 'unsupervised'}  K={k_par:4d}  "
                f"parametric {row['parametric_ns_per_token']:7.1f} ns/token  "
                f"sHDP {row['shdp_ns_per_token']:7.1f} ns/token (occupied "
                f"{row['shdp_occupied'][0]}-{row['shdp_occupied'][1]})  "
                f"ratio {row['ratio']:.2f}")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out + ".txt", "w") as f:
            f.write(text)
        with open(args.out + ".json", "w") as f:
            json.dump({"header": lines[:5], "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
