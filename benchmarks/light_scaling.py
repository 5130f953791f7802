#!/usr/bin/env python
"""How the light sampler's cost grows with K: 20news, 20 tasks, one chain, one thread.

On ``load_dataset("20news")`` (1,467,718 training tokens, V = 53,666) with the 20 one-vs-all
hinge tasks of multi-task Gibbs MedLDA (``Hinge(1, 64)`` one-vs-all, alpha = 1/K per
topic, beta = 0.01, nu2 = 1), for each K in ``--topics``:

1. **state**: Z uniform at random, eta = 0, gamma = 1, then ``--warmup`` iterations of the
   light cycle (coordinate-wise eta, hinge augmentation, one light sweep), so that eta, psi,
   rho and Z are those of a real run (both samplers target the same posterior);
2. **Z sweeps** from that same state (a fresh copy each time): ns per token of
   * the exact collapsed sweep (``kernels.topics._collapsed_sweep``) and the light sweep
     (``kernels.light._light_sweep``, 6 Metropolis-Hastings steps per token, random mixture),
     both the numba functions called directly;
   * the same through their JAX steps (``collapsed_topics_step``, ``light_topics_step``,
     jitted; they add the callback and the copies of z and the counts in and out: O(V K)),
     and ``light_assignments_step`` (z alone through the callback, counts rebuilt on the host);
3. **eta draws** with 20 tasks: ms per draw of the QR draw (``draw_eta``) and of one
   coordinate-wise pass (``draw_eta_coordinatewise``), jitted;
4. acceptance rates of the three proposals in a light sweep.

Times are medians over ``--repeats`` calls of process CPU time (robust to other processes on
this 2-core machine; wall-clock medians are given too), measured in ``--rounds`` rounds over
the K values (ascending, then descending, ...), medians over rounds: so every ratio compares
measurements from the same run. ``light(K)/light(20)`` is the figure of the issue's target
(at most 1.5 at K = 400).

**Peak memory**: three fresh processes (``--rss-probe K light|light-z|exact``) each load the data, build
the state at the largest K and run ``--probe-iterations`` jitted iterations of one sampler's
core (Z step through its JAX wrapper, eta draw, augmentation draw; numpyro's MCMC loop and
monitors are not included) and report their peak resident set size (VmHWM), and the same
after the imports and after loading the data, which any fit pays too.

**Allocator**: every call of a JAX step that goes through ``pure_callback`` hands XLA new
output buffers for z and the counts (at K = 400 about 110 MB); glibc maps such large blocks
afresh each time, and the page faults of filling them cost about as much as the copy. Running
with ``MALLOC_MMAP_THRESHOLD_=4000000000`` (glibc keeps and reuses them) shows the difference
(``results/light_scaling.malloc.txt``).

Threads: ``set_single_thread()`` before numpy and jax are imported.

Usage::

    python benchmarks/light_scaling.py                      # K = 20 50 100 200 400
    python benchmarks/light_scaling.py --topics 20 400 --rounds 1 --out light_scaling_k20_k400.txt
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_description, set_single_thread  # noqa: E402

THREADS = set_single_thread()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from topiczoo import load_dataset  # noqa: E402
from topiczoo.kernels import light  # noqa: E402
from topiczoo.kernels import topics as tk  # noqa: E402
from topiczoo.kernels.eta import draw_eta, draw_eta_coordinatewise  # noqa: E402
from topiczoo.kernels.assignments import word_token_index  # noqa: E402
from topiczoo.kernels.light import light_assignments_step  # noqa: E402
from topiczoo.models.responses import Hinge  # noqa: E402

# the steps that carry the counts in the chain state are test code now (tests/)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests"))
from topic_state_steps import TopicState, collapsed_topics_step, light_topics_step  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "light_scaling.txt")
BETA = 0.01
NU2 = 1.0
NUM_TASKS = 20


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topics", type=int, nargs="+", default=[20, 50, 100, 200, 400])
    p.add_argument("--warmup", type=int, default=10, help="light iterations before timing")
    p.add_argument("--repeats", type=int, default=3, help="timed calls per quantity and round")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--num-steps", type=int, default=6)
    p.add_argument("--probe-iterations", type=int, default=4)
    p.add_argument("--no-probe", action="store_true", help="skip the peak-memory processes")
    p.add_argument("--rss-probe", nargs=2, metavar=("K", "SAMPLER"), help=argparse.SUPPRESS)
    p.add_argument("--out", default=DEFAULT_OUT)
    return p.parse_args(argv)


def peak_rss_mb() -> float:
    """This process's peak resident set size (VmHWM; unlike ru_maxrss it starts afresh at
    exec, so a child started from a big parent does not report the parent's peak)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Data:
    def __init__(self):
        ds = load_dataset("20news")
        self.summary = ds.summary()
        train = ds.train
        self.words = np.asarray(train.words, np.int32)
        self.offsets = np.asarray(train.doc_offsets, np.int32)
        self.num_docs = train.num_docs
        self.vocab_size = train.vocab_size
        self.num_tokens = len(self.words)
        self.doc_ids = np.repeat(np.arange(self.num_docs), np.diff(self.offsets))
        self.lengths = np.diff(self.offsets).astype(np.float32)
        self.response = Hinge(1.0, 64.0)
        self.labels = np.asarray(train.labels)
        one_vs_all = self.labels[None, :] == np.arange(NUM_TASKS)[:, None]  # [T, D] 0/1
        self.y = jnp.asarray(self.response.encode(one_vs_all.astype(np.float32)))
        self.word_offsets, self.word_tokens = word_token_index(self.words, self.vocab_size)
        self.jax_words = jnp.asarray(self.words)
        self.jax_offsets = jnp.asarray(self.offsets)


def _zbar(data, n_dk):
    return jnp.asarray(n_dk / data.lengths[:, None], jnp.float32)


_coordinatewise = jax.jit(draw_eta_coordinatewise, static_argnums=(6, 7))
_qr = jax.jit(draw_eta, static_argnums=(4,))


def initial_state(data, num_topics, seed=0, word_counts=True):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, num_topics, data.num_tokens).astype(np.int32)
    n_dk = np.zeros((data.num_docs, num_topics), np.int32)
    n_wk = np.zeros((data.vocab_size if word_counts else 0, num_topics), np.int32)
    np.add.at(n_dk, (data.doc_ids, z), 1)
    if word_counts:
        np.add.at(n_wk, (data.words, z), 1)
    n_k = np.bincount(z, minlength=num_topics).astype(np.int32)
    eta = jnp.zeros((NUM_TASKS, num_topics), jnp.float32)
    aug = data.response.init_augmentation(data.y)
    return dict(z=z, n_dk=n_dk, n_wk=n_wk, n_k=n_k, eta=eta, aug=aug)


def warm_state(data, num_topics, iterations, num_steps, seed=0):
    """``iterations`` light cycles (eta pass, augmentation, light sweep) from a random start."""
    s = initial_state(data, num_topics, seed)
    key = jax.random.PRNGKey(seed)
    stats = np.zeros((3, 2), np.int64)
    for it in range(iterations):
        key, k_eta, k_aug = jax.random.split(key, 3)
        zbar = _zbar(data, s["n_dk"])
        psi, rho = data.response.gaussian_form(data.y, s["aug"])
        s["eta"] = _coordinatewise(k_eta, s["eta"], s["z"], data.offsets, psi, rho, NU2, 1)
        omega = s["eta"] @ zbar.T
        s["aug"] = data.response.draw_augmentation(k_aug, data.y, omega, s["aug"])
        psi, rho = data.response.gaussian_form(data.y, s["aug"])
        light._light_sweep(s["z"], s["n_dk"], s["n_wk"], s["n_k"], data.words, data.offsets,
                           data.word_offsets, data.word_tokens, np.asarray(s["eta"], np.float64),
                           np.asarray(psi, np.float64), np.asarray(rho, np.float64),
                           1.0 / num_topics, BETA, 1000 + it, num_steps, False, stats)
    psi, rho = data.response.gaussian_form(data.y, s["aug"])
    s["psi"], s["rho"] = psi, rho
    omega = s["eta"] @ _zbar(data, s["n_dk"]).T
    s["train_accuracy"] = float(np.mean(np.argmax(np.asarray(omega), axis=0) == data.labels))
    s["eta_abs_max"] = float(jnp.abs(s["eta"]).max())
    return s


def timed(fn, repeats, setup=None):
    """(median CPU seconds, median wall seconds) of ``repeats`` calls of fn() (or of
    fn(setup()), setup untimed)."""
    cpu, wall = [], []
    for _ in range(repeats):
        if setup is None:
            c0, w0 = time.process_time(), time.perf_counter()
            fn()
        else:
            arg = setup()
            c0, w0 = time.process_time(), time.perf_counter()
            fn(arg)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return float(np.median(cpu)), float(np.median(wall))


def measure(data, s, num_topics, repeats, num_steps, seed):
    """Every timed quantity at one K from the state ``s``."""
    alpha = 1.0 / num_topics
    counts = ("z", "n_dk", "n_wk", "n_k")
    eta64, psi64, rho64 = (np.asarray(s[n], np.float64) for n in ("eta", "psi", "rho"))
    out = {}
    stats = np.zeros((3, 2), np.int64)
    calls = iter(range(10**9))

    def fresh():
        return [s[n].copy() for n in counts]

    def exact_numba(c):
        tk._collapsed_sweep(*c, data.words, data.offsets, eta64, psi64, rho64, alpha, BETA,
                            seed + next(calls), *tk.TABLE_ARGUMENTS)

    def light_numba(c):
        light._light_sweep(*c, data.words, data.offsets, data.word_offsets, data.word_tokens,
                           eta64, psi64, rho64, alpha, BETA, seed + next(calls), num_steps,
                           False, stats)

    for name, fn in (("exact", exact_numba), ("light", light_numba)):
        fn(fresh())  # compiled already; one untimed call warms the caches
        cpu, wall = timed(fn, repeats, setup=fresh)
        out[f"{name}_numba"] = (cpu / data.num_tokens * 1e9, wall / data.num_tokens * 1e9)
    out["acceptance"] = (stats[:, 1] / np.maximum(stats[:, 0], 1)).round(3).tolist()

    topics = TopicState(*(jnp.asarray(s[n]) for n in counts))
    jax_args = (s["eta"], s["psi"], s["rho"])
    exact_step = jax.jit(lambda key, t, e, p, r: collapsed_topics_step(
        key, t, data.jax_words, data.jax_offsets, e, p, r, alpha, BETA))
    w_off, w_tok = jnp.asarray(data.word_offsets), jnp.asarray(data.word_tokens)
    light_step = jax.jit(lambda key, t, e, p, r: light_topics_step(
        key, t, data.jax_words, data.jax_offsets, e, p, r, alpha, BETA, word_offsets=w_off,
        word_tokens=w_tok, num_steps=num_steps))
    z_step = jax.jit(lambda key, t, e, p, r: light_assignments_step(
        key, t.z, data.jax_words, data.jax_offsets, e, p, r, alpha, BETA,
        num_topics=num_topics, vocab_size=data.vocab_size, word_offsets=w_off, word_tokens=w_tok,
        num_steps=num_steps))
    for name, step in (("exact", exact_step), ("light", light_step), ("light_z", z_step)):
        keys = iter(jax.random.split(jax.random.PRNGKey(seed), repeats + 1))
        jax.block_until_ready(step(next(keys), topics, *jax_args))
        cpu, wall = timed(lambda: jax.block_until_ready(step(next(keys), topics, *jax_args)),
                          repeats)
        out[f"{name}_jax"] = (cpu / data.num_tokens * 1e9, wall / data.num_tokens * 1e9)
    topics = None  # free the copy (the lambdas above are done with it)

    zbar = _zbar(data, s["n_dk"])
    key = jax.random.PRNGKey(seed)
    jax.block_until_ready(_qr(key, zbar, s["psi"], s["rho"], NU2))
    jax.block_until_ready(_coordinatewise(key, s["eta"], s["z"], data.offsets, s["psi"], s["rho"],
                                          NU2, 1))
    out["eta_qr_ms"] = [1e3 * x for x in timed(
        lambda: jax.block_until_ready(_qr(key, zbar, s["psi"], s["rho"], NU2)), repeats)]
    out["eta_coordinatewise_ms"] = [1e3 * x for x in timed(
        lambda: jax.block_until_ready(_coordinatewise(key, s["eta"], s["z"], data.offsets,
                                                      s["psi"], s["rho"], NU2, 1)), repeats)]
    return out


def rss_probe(num_topics, sampler, iterations, num_steps):
    """Peak RSS of one sampler's core at K (run in a fresh process)."""
    after_imports = peak_rss_mb()
    data = Data()
    after_data = peak_rss_mb()
    s = initial_state(data, num_topics, word_counts=sampler != "light-z")
    alpha = 1.0 / num_topics
    response = data.response
    w_off, w_tok = jnp.asarray(data.word_offsets), jnp.asarray(data.word_tokens)
    lengths = jnp.asarray(data.lengths)

    @jax.jit
    def iteration(key, topics, eta, aug):
        k_eta, k_z, k_aug = jax.random.split(key, 3)
        zbar = topics.n_dk.astype(jnp.float32) / lengths[:, None]
        psi, rho = response.gaussian_form(data.y, aug)
        if sampler == "light":
            eta = draw_eta_coordinatewise(k_eta, eta, topics.z, data.jax_offsets, psi, rho,
                                          NU2, 1)
            topics = light_topics_step(k_z, topics, data.jax_words, data.jax_offsets, eta, psi,
                                       rho, alpha, BETA, word_offsets=w_off, word_tokens=w_tok,
                                       num_steps=num_steps)
        elif sampler == "light-z":  # the state is (z, n_dk): topics.n_wk is a [0, K] stub
            eta = draw_eta_coordinatewise(k_eta, eta, topics.z, data.jax_offsets, psi, rho,
                                          NU2, 1)
            z, n_dk = light_assignments_step(
                k_z, topics.z, data.jax_words, data.jax_offsets, eta, psi, rho, alpha, BETA,
                num_topics=num_topics, vocab_size=data.vocab_size, word_offsets=w_off,
                word_tokens=w_tok, num_steps=num_steps)
            topics = TopicState(z, n_dk, topics.n_wk, n_dk.sum(0))
        else:
            eta = draw_eta(k_eta, zbar, psi, rho, NU2)
            topics = collapsed_topics_step(k_z, topics, data.jax_words, data.jax_offsets, eta,
                                           psi, rho, alpha, BETA)
        zbar = topics.n_dk.astype(jnp.float32) / lengths[:, None]
        aug = response.draw_augmentation(k_aug, data.y, eta @ zbar.T, aug)
        return topics, eta, aug

    topics = TopicState(*(jnp.asarray(s[n]) for n in ("z", "n_dk", "n_wk", "n_k")))
    del s["z"], s["n_dk"], s["n_wk"], s["n_k"]
    eta, aug = s["eta"], s["aug"]
    key = jax.random.PRNGKey(0)
    seconds = []
    for _ in range(iterations):
        key, sub = jax.random.split(key)
        t0 = time.process_time()
        topics, eta, aug = jax.block_until_ready(iteration(sub, topics, eta, aug))
        seconds.append(time.process_time() - t0)
    print(json.dumps({"K": num_topics, "sampler": sampler, "iterations": iterations,
                      "cpu_seconds_first_iteration": round(seconds[0], 2),
                      "cpu_seconds_per_later_iteration": round(float(np.median(seconds[1:])), 2),
                      "peak_rss_mb": round(peak_rss_mb(), 1),
                      "peak_rss_mb_after_imports": round(after_imports, 1),
                      "peak_rss_mb_after_data": round(after_data, 1)}))


def run_probe(num_topics, sampler, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--rss-probe", str(num_topics), sampler,
           "--probe-iterations", str(args.probe_iterations), "--num-steps", str(args.num_steps)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def versions():
    import numba
    import numpyro
    return {"jax": jax.__version__, "numpyro": numpyro.__version__, "numba": numba.__version__,
            "numpy": np.__version__}


def main(argv=None):
    args = parse_args(argv)
    if args.rss_probe:
        rss_probe(int(args.rss_probe[0]), args.rss_probe[1], args.probe_iterations,
                  args.num_steps)
        return
    lines = []

    def log(text=""):
        print(text, flush=True)
        lines.append(text)

    log(f"light_scaling  {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}")
    data = Data()
    log(f"data: {data.summary}")
    log(f"model: 20 one-vs-all hinge tasks (Hinge(c=1, ell=64) one-vs-all), alpha = 1/K "
        f"per topic, beta = {BETA}, nu2 = {NU2}; one chain; light: {args.num_steps} MH steps "
        "per token, random mixture of document / word / response proposals")
    log(f"state: {args.warmup} light iterations from a random start, then every sweep timed "
        f"from a copy of it; {args.repeats} calls x {args.rounds} rounds, median")
    log(f"machine: {machine_description()}")
    log(f"versions: {versions()}")
    log(f"threads: {THREADS}")
    log()

    states = {}
    for num_topics in args.topics:
        t0 = time.perf_counter()
        states[num_topics] = warm_state(data, num_topics, args.warmup, args.num_steps)
        s = states[num_topics]
        log(f"K={num_topics:4d} state after {args.warmup} light iterations "
            f"({time.perf_counter() - t0:.0f} s): train accuracy {s['train_accuracy']:.3f}, "
            f"max |eta| {s['eta_abs_max']:.1f}")
    results = {k: [] for k in args.topics}
    for r in range(args.rounds):
        order = args.topics if r % 2 == 0 else args.topics[::-1]
        for num_topics in order:
            res = measure(data, states[num_topics], num_topics, args.repeats, args.num_steps,
                          seed=100 * r)
            results[num_topics].append(res)
            log(f"round {r + 1} K={num_topics:4d}: exact {res['exact_numba'][0]:7.0f}, light "
                f"{res['light_numba'][0]:5.0f} ns/tok (numba, CPU); JAX steps exact "
                f"{res['exact_jax'][0]:7.0f}, light {res['light_jax'][0]:5.0f}, z only "
                f"{res['light_z_jax'][0]:5.0f}; eta QR "
                f"{res['eta_qr_ms'][0]:8.1f} ms, coordinate-wise "
                f"{res['eta_coordinatewise_ms'][0]:6.1f} ms; acceptance {res['acceptance']}")
    log()

    def med(k, name, which=0):
        return float(np.median([res[name][which] for res in results[k]]))

    base = args.topics[0]
    log("Z sweep, ns per token (median CPU time; wall clock in parentheses)")
    header = (f"{'K':>5} | {'exact':>15} | {'light':>13} | {'exact/light':>11} | "
              f"{'exact(K)/exact(' + str(base) + ')':>19} | {'light(K)/light(' + str(base) + ')':>19}")
    log(header)
    log("-" * len(header))
    for k in args.topics:
        e, l = med(k, "exact_numba"), med(k, "light_numba")
        log(f"{k:5d} | {e:6.0f} ({med(k, 'exact_numba', 1):6.0f}) | {l:4.0f} "
            f"({med(k, 'light_numba', 1):5.0f}) | {e / l:11.2f} | "
            f"{e / med(base, 'exact_numba'):19.2f} | {l / med(base, 'light_numba'):19.2f}")
    log("(the numba sweeps called directly, on copies of the state made before the clock starts)")
    log()
    log("Z step through JAX, ns per token (jit; pure_callback: TopicState steps copy z and the "
        "counts in and out; light_assignments_step passes z alone and rebuilds the counts)")
    header = (f"{'K':>5} | {'exact':>15} | {'light':>13} | {'light, z only':>13} | "
              f"{'exact/light':>11} | {'light(K)/light(' + str(base) + ')':>19} | "
              f"{'z only: (K)/(' + str(base) + ')':>17}")
    log(header)
    log("-" * len(header))
    for k in args.topics:
        e, l, lz = med(k, "exact_jax"), med(k, "light_jax"), med(k, "light_z_jax")
        log(f"{k:5d} | {e:6.0f} ({med(k, 'exact_jax', 1):6.0f}) | {l:4.0f} "
            f"({med(k, 'light_jax', 1):5.0f}) | {lz:4.0f} ({med(k, 'light_z_jax', 1):5.0f}) | "
            f"{e / l:11.2f} | {l / med(base, 'light_jax'):19.2f} | "
            f"{lz / med(base, 'light_z_jax'):17.2f}")
    log()
    log(f"eta draw, {NUM_TASKS} tasks, ms per draw (median CPU time; wall in parentheses)")
    header = f"{'K':>5} | {'QR (draw_eta)':>17} | {'coordinate-wise, 1 pass':>23} | {'QR/coordinate':>13}"
    log(header)
    log("-" * len(header))
    for k in args.topics:
        qr, cw = med(k, "eta_qr_ms"), med(k, "eta_coordinatewise_ms")
        log(f"{k:5d} | {qr:8.1f} ({med(k, 'eta_qr_ms', 1):6.1f}) | {cw:12.1f} "
            f"({med(k, 'eta_coordinatewise_ms', 1):7.1f}) | {qr / cw:13.1f}")
    log()
    log("acceptance rates of the light sweep's proposals (document, word, response), of "
        "proposals of another topic")
    for k in args.topics:
        log(f"  K={k:4d}: {results[k][-1]['acceptance']}")
    log()
    log(f"peak RSS of this process: {peak_rss_mb():.0f} MB (all K, both samplers, the QR draws)")
    log(f"MALLOC_MMAP_THRESHOLD_ = {os.environ.get('MALLOC_MMAP_THRESHOLD_', 'unset')}")
    if not args.no_probe:
        for sampler in ("light", "light-z", "exact"):
            probe = run_probe(max(args.topics), sampler, args)
            log(f"peak RSS, fresh process, K={probe['K']}, {sampler} core ({probe['iterations']} "
                f"jitted iterations: Z step, eta, augmentation; no numpyro MCMC): "
                f"{probe['peak_rss_mb']:.0f} MB (after the imports "
                f"{probe['peak_rss_mb_after_imports']:.0f} MB, after loading the data "
                f"{probe['peak_rss_mb_after_data']:.0f} MB; CPU s per iteration: first (with "
                f"compilation) {probe['cpu_seconds_first_iteration']}, later "
                f"{probe['cpu_seconds_per_later_iteration']})")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
