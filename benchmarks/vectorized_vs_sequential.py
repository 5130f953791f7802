"""Independent problems vectorised together or run one after another?

One-vs-all trains L independent binary models; the question is whether running them as one
vectorised batch beats running them in sequence. Chains of the Gibbs kernel are exactly such
independent problems, so this times 4 chains with numpyro's chain_method="vectorized" against
"sequential" on 20news-binary (Gibbs MedLDA, K = 20). Per-iteration time is the difference of
a 42- and a 2-iteration run divided by 40 (compilation excluded: the first round only warms up
the compilation cache and is not reported); the median of the remaining rounds is printed.

    python benchmarks/vectorized_vs_sequential.py
    python benchmarks/vectorized_vs_sequential.py --topics 2 --iterations 2 --rounds 2  # smoke
"""

import argparse
import time

from _machine import set_single_thread

set_single_thread(1)

import jax  # noqa: E402
import numpy as np  # noqa: E402
from numpyro.infer import MCMC  # noqa: E402

from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.fit import enable_compilation_cache  # noqa: E402
from topiczoo.kernels.gibbs import GibbsKernel  # noqa: E402
from topiczoo.models import medlda  # noqa: E402
from topiczoo.models.supervised import corpus_data, task_of  # noqa: E402

SHORT = 2  # iterations of the run whose time is subtracted


def per_iteration(kernel, data, method, iterations, num_chains):
    times = {}
    for n in (SHORT, SHORT + iterations):
        mcmc = MCMC(kernel, num_warmup=0, num_samples=n, num_chains=num_chains,
                    chain_method=method, progress_bar=False, jit_model_args=True)
        tic = time.perf_counter()
        mcmc.run(jax.random.PRNGKey(0), data)
        jax.block_until_ready(mcmc.last_state)
        times[n] = time.perf_counter() - tic
    return (times[SHORT + iterations] - times[SHORT]) / iterations


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--topics", type=int, default=20)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--iterations", type=int, default=40,
                   help="timed iterations: a run of 2 + ITERATIONS minus one of 2 (default 40)")
    p.add_argument("--rounds", type=int, default=4, help="rounds, the first not reported")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args()
    if args.rounds < 2:
        p.error("--rounds must be >= 2 (the first only warms up)")
    enable_compilation_cache()
    ds = load_dataset("20news-binary", data_dir=args.data_dir)
    model = medlda(args.topics)
    task = task_of(model, ds.train)
    kernel = GibbsKernel(model, ds.train.vocab_size, task=task)
    data = corpus_data(model, ds.train, task)
    results = {"vectorized": [], "sequential": []}
    for r in range(args.rounds):
        for method in results:
            seconds = per_iteration(kernel, data, method, args.iterations, args.chains)
            if r > 0:
                results[method].append(seconds)
    for method, values in results.items():
        print(f"{method:10s} {np.median(values) * 1e3:6.1f} ms per iteration of {args.chains} "
              f"chains (rounds: {', '.join(f'{v * 1e3:.1f}' for v in values)})")
    print(f"sequential / vectorized time: "
          f"{np.median(results['sequential']) / np.median(results['vectorized']):.3f}")


if __name__ == "__main__":
    main()
