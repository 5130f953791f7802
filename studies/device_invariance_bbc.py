#!/usr/bin/env python
"""Does a fit by the JAX engine draw the same on one device and on two? On real data: bbc.

On the tests' problems the draws of ``parallel:z=jax`` are the same on 1, 2 and 4 XLA CPU
devices, bit for bit; this checks a real corpus. For each model of ``--models`` (K = 10,
bbc's training split; the regression models read the labels as -1 / +1 ratings) it runs the
same fit (2 chains, ``--iterations``, seed 0, chunks of 5) in two fresh processes, one with
one XLA CPU device and one with two (``--xla_force_host_platform_device_count``: set before
JAX starts, hence the processes), and prints, for each chain, the first iteration (0-based)
at which each per-draw quantity differs (``-`` when it never does).

Before a document's score S_t was added in token order (2026-11-29) the fits parted at
iteration 5-7 (gSLDA, MedLDA, Gaussian sLDA); since, none within 20 iterations, but for the
monitor eta_norm, 1 ulp apart now and then (studies/README.md).

Usage::

    python studies/device_invariance_bbc.py --models gslda medlda slda_gaussian
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

_FIT = """
import dataclasses, json, sys
import numpy as np
from topiczoo import models
from topiczoo.datasets import load_dataset
from topiczoo.fit import fit

name, iterations, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
corpus = load_dataset("bbc").train
if name in ("slda_gaussian", "medlda_regression"):
    corpus = dataclasses.replace(corpus, labels=np.asarray(corpus.labels, np.float64) * 2 - 1)
result = fit(getattr(models, name)(10), corpus, sampler="parallel:z=jax", num_chains=2,
             num_iterations=iterations, num_snapshots=1, progress=False, seed=0,
             compilation_cache=False, chunk=5)
np.savez(out, **{k: np.asarray(v) for k, v in result.draws.items()})
"""


def _fit(name: str, iterations: int, num_devices: int, out: str) -> None:
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"--xla_force_host_platform_device_count={num_devices}"}
    subprocess.run([sys.executable, "-c", _FIT, name, str(iterations), out], env=env,
                   check=True)


def first_differences(one: dict, two: dict) -> dict:
    """{quantity: [first differing iteration of each chain, or None]} of two fits' draws
    (arrays [chains, iterations, ...])."""
    out = {}
    for name in one:
        a, b = one[name], two[name]
        rows = (a != b).reshape(a.shape[0], a.shape[1], -1).any(axis=2)
        out[name] = [int(r.argmax()) if r.any() else None for r in rows]
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["gslda", "medlda", "slda_gaussian"])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--out", help="write the first differences as JSON here too")
    args = parser.parse_args(argv)
    import numpy as np

    found = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            draws = []
            for n in (1, 2):
                path = os.path.join(folder, f"{name}_{n}.npz")
                _fit(name, args.iterations, n, path)
                with np.load(path) as f:
                    draws.append({k: f[k] for k in f.files})
            found[name] = first_differences(*draws)
            print(f"{name}: first iteration (0-based) that differs, per chain, between 1 and 2 "
                  "devices", flush=True)
            for quantity, chains in found[name].items():
                print(f"  {quantity:>20}: " + "  ".join("-" if c is None else str(c)
                                                        for c in chains), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"iterations": args.iterations, "first_differences": found}, f, indent=1)


if __name__ == "__main__":
    main()
