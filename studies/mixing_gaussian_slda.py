"""Gelman-Rubin-Brooks curves of Gaussian sLDA on movie-scale (sHDP paper, Figure 3 bottom).

The supervised-HDP paper (Figure 3, lower half) shows Gelman and Rubin's shrink factor against
iteration for the L2 norm of the regression coefficients, ||eta||, and of the residuals,
||y - Zbar eta||, of the Gibbs-sampled sLDA (40 topics) on its movie regression data, from 4
chains "with different starting values". This study draws the same curves for topiczoo's
Gaussian sLDA (learned s2 ~ IG(1, 0.01), K = 20 by default, alpha = 1, beta = 0.01, nu2 = 1) on
movie-scale (4,005 training documents), 4 chains, 500 iterations, in two start settings:

* ``default``: what ``fit`` does: every chain starts from its own uniformly random topic
  assignment Z (the chains' PRNG keys differ), eta = 0 (eta is drawn first in each cycle, so
  its start value is never used) and s2 = 1 (the model's start value). The chains therefore
  differ in the random Z only, and every random Z gives every document nearly uniform topic
  proportions: four draws from one narrow start distribution, not an overdispersed start.
* ``overdispersed``: a different kind of start per chain, given to ``fit`` as ``start=`` (a
  :class:`FitResult` at iteration 0 whose ``ChainState`` holds the chosen
  ``ParametricState`` of every chain; the committed results were run by resuming the same
  FitResult written as a checkpoint, which draws the same chains):
  chain 0 uniformly random Z, s2 = 1 (as ``default``); chain 1 "rating bands": all tokens of
  document d in topic floor(K rank(y_d) / D), so topics start sorted by rating, s2 = 0.001;
  chain 2 "one topic per document", drawn at random, s2 = 0.1; chain 3 "word partition": each
  vocabulary word sends all its tokens to one random topic, s2 = 10. s2's start value only
  enters the first cycle's eta draw and sweep (s2 is redrawn at the end of every cycle).

Shrink factor: ``topiczoo.diagnostics.gelman_rubin_brooks`` (classic Gelman-Rubin R-hat, no
df correction, on the second half of the draws up to each iteration, as coda's
``gelman.plot``), every 10 iterations.

    python studies/mixing_gaussian_slda.py

writes ``studies/results/mixing_gaussian_slda.{md,json,png}`` (both settings in one figure, with
the traces), ``mixing_gaussian_slda_<setting>_grb.png`` (the package's own
``plot_gelman_rubin_brooks``) and ``mixing_gaussian_slda_<setting>.nc`` (the runs' trees).
"""

from __future__ import annotations

import time
from pathlib import Path

from _harness import single_thread

single_thread()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _harness import (command_line, ensure_dir, load_run, log, parser, pyplot,  # noqa: E402
                      save_figure, saved_args, write_json, write_outputs)
from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.diagnostics import (gelman_rubin_brooks, plot_gelman_rubin_brooks,  # noqa: E402
                                  save_datatree, to_datatree)
from topiczoo.checkpoints import corpus_fingerprint  # noqa: E402
from topiczoo.fit import FitResult, fit  # noqa: E402
from topiczoo.kernels.gibbs import GibbsKernel  # noqa: E402
from topiczoo.kernels.assignments import assignments_log_likelihood  # noqa: E402
from topiczoo.models import slda_gaussian  # noqa: E402
from topiczoo.models.supervised import corpus_data, task_of  # noqa: E402

MONITORS = ("eta_norm", "residual_norm")
CHECK_AT = (50, 100, 150, 200, 300, 400, 500)
START_NAMES = ("uniform random Z, s2 = 1", "rating bands, s2 = 0.001",
               "one random topic per document, s2 = 0.1", "random word partition, s2 = 10")
START_S2 = (1.0, 0.001, 0.1, 10.0)


def overdispersed_assignments(corpus, num_topics, rng) -> list:
    """The topic assignments z [N] of the four overdispersed starts (see the docstring)."""
    words, doc_ids = np.asarray(corpus.words), np.asarray(corpus.doc_ids)
    num_docs = corpus.num_docs
    y = np.asarray(corpus.labels, np.float64)
    uniform = rng.integers(0, num_topics, words.shape[0])
    rank = np.empty(num_docs, np.int64)
    rank[np.argsort(y, kind="stable")] = np.arange(num_docs)
    bands = (rank * num_topics // num_docs)[doc_ids]
    per_doc = rng.integers(0, num_topics, num_docs)[doc_ids]
    per_word = rng.integers(0, num_topics, corpus.vocab_size)[words]
    return [a.astype(np.int32) for a in (uniform, bands, per_doc, per_word)]


def result_from_starts(model, corpus, fit_kwargs, start) -> FitResult:
    """A FitResult at iteration 0 whose chain c holds the state ``start(c, one, data)`` (``one``:
    chain c's default start, a ChainState; ``data``: the corpus's CorpusData), described as the
    run ``fit(model, corpus, **fit_kwargs)`` describes itself: ``fit(..., start=)`` continues
    it (and would also resume it written as that run's checkpoint)."""
    num_chains, seed = fit_kwargs["num_chains"], fit_kwargs["seed"]
    task = task_of(model, corpus)
    data = corpus_data(model, corpus, task)
    kernel = GibbsKernel(model, corpus.vocab_size, task=task)
    # the default starts, batched over chains, from the chain keys numpyro gives a fresh run
    keys = jax.random.split(jax.random.PRNGKey(seed), num_chains)
    base = kernel.init(keys, 0, None, (data,), {})
    chains = []
    for c in range(num_chains):
        one = jax.tree.map(lambda a, c=c: a[c], base)  # ChainState(state, info, iteration, key)
        state = start(c, one, data)
        chains.append(one._replace(state=state, info=kernel.sampler.monitors(state, data)))
    stacked = jax.tree.map(lambda *a: np.stack([np.asarray(x) for x in a]), *chains)
    # fit's own description of the run (topiczoo/fit.py: the ``schedule`` and ``fresh`` of fit)
    schedule = dict(num_iterations=fit_kwargs["num_iterations"],
                    num_burnin=fit_kwargs["num_burnin"],
                    num_snapshots=fit_kwargs["num_snapshots"], snapshot_lag=None, thinning=1)
    return FitResult(model, tuple(corpus.vocabulary), num_chains, schedule["num_burnin"], 1,
                     seed, "exact", task, schedule, state=stacked,
                     num_tokens=corpus.num_tokens, fingerprint=corpus_fingerprint(data))


def overdispersed_result(model, corpus, fit_kwargs) -> FitResult:
    """The four overdispersed starts (:func:`overdispersed_assignments`, s2 = ``START_S2``) as
    a run at iteration 0 (:func:`result_from_starts`)."""
    if fit_kwargs["num_chains"] != 4:
        raise ValueError("the overdispersed starts are defined for 4 chains")
    zs = overdispersed_assignments(corpus, model.num_topics,
                                   np.random.default_rng(fit_kwargs["seed"]))

    def start(c, one, data):
        z = jnp.asarray(zs[c], jnp.int32)
        n_dk = jnp.zeros((corpus.num_docs, model.num_topics), jnp.int32).at[data.doc_ids, z].add(1)
        log_lik = assignments_log_likelihood(z, data.words, data.doc_offsets, model.beta,
                                             num_topics=model.num_topics,
                                             vocab_size=corpus.vocab_size)
        return one.state._replace(z=z, n_dk=n_dk, log_likelihood=log_lik,
                                  augmentation=jnp.full_like(one.state.augmentation, START_S2[c]))

    return result_from_starts(model, corpus, fit_kwargs, start)


def run(data, args, setting) -> dict:
    model = slda_gaussian(args.topics, learn_s2=True, a0=1.0, b0=0.01, alpha=1.0, beta=0.01,
                          nu2=args.nu2)
    kwargs = dict(num_chains=args.chains, num_iterations=args.iterations,
                  num_burnin=args.iterations // 2, num_snapshots=0, chunk=50, seed=args.seed,
                  progress=False)
    tic = time.perf_counter()
    if setting == "default":
        result = fit(model, data.train, **kwargs)
    else:
        result = fit(model, data.train, start=overdispersed_result(model, data.train, kwargs),
                     **kwargs)
    seconds = time.perf_counter() - tic
    tree = to_datatree(result)
    save_datatree(tree, Path(args.out) / f"mixing_gaussian_slda_{setting}.nc")
    save_figure(plot_gelman_rubin_brooks(tree, var_names=MONITORS,
                                         num_points=args.iterations // 10),
                Path(args.out) / f"mixing_gaussian_slda_{setting}_grb.png")
    curves = {}
    for name in MONITORS:
        iterations, curve = gelman_rubin_brooks(tree, name, num_points=args.iterations // 10)
        curves[name] = {"iterations": iterations.tolist(), "shrink": curve.tolist()}
    traces = {name: np.asarray(result.draws[name]).tolist()
              for name in MONITORS + ("log_likelihood", "augmentation_mean")}
    log(f"{setting}: {seconds:.0f} s; final shrink "
        + ", ".join(f"{n} {c['shrink'][-1]:.3f}" for n, c in curves.items()))
    return {"setting": setting, "seconds": seconds, "curves": curves, "traces": traces,
            "draw_iterations": np.asarray(result.draw_iterations).tolist()}


def below(iterations, shrink, threshold=1.1):
    """(first iteration below the threshold, first iteration from which it stays below)."""
    it, s = np.asarray(iterations), np.asarray(shrink)
    first = it[np.argmax(s < threshold)] if np.any(s < threshold) else None
    stays = None
    for i in range(len(s)):
        if np.all(s[i:] < threshold):
            stays = it[i]
            break
    return (None if first is None else int(first)), (None if stays is None else int(stays))


def at(curve, iteration):
    it = np.asarray(curve["iterations"])
    i = int(np.argmin(np.abs(it - iteration)))
    return int(it[i]), float(np.asarray(curve["shrink"])[i])


def markdown(runs, args, wall) -> str:
    checks = [t for t in CHECK_AT if t <= args.iterations]
    lines = ["# Gelman-Rubin-Brooks: Gaussian sLDA on movie-scale", "",
             f"Gaussian sLDA, learned s2 ~ IG(1, 0.01), K = {args.topics}, alpha = 1, "
             f"beta = 0.01, nu2 = {args.nu2:g}; {args.chains} chains x {args.iterations} "
             f"iterations, seed {args.seed}; movie-scale split seed 0 (4,005 training "
             f"documents). Classic shrink factor (no df correction) on the second half of the "
             f"draws up to each iteration, every {args.iterations // (args.iterations // 10)} "
             f"iterations. Wall time {wall / 60:.1f} min.", "",
             "Starts: `default` = fit's own (uniformly random Z per chain, s2 = 1); "
             "`overdispersed` = chain 0 " + "; chain ".join(
                 f"{c} {s}" if c else s for c, s in enumerate(START_NAMES)) + ".", "",
             "## Shrink factor at selected iterations", "",
             "| " + " | ".join(["start", "monitor", *(f"it {t}" for t in checks),
                                 "first < 1.1", "stays < 1.1 from"]) + " |",
             "|---|---|" + "---:|" * (len(checks) + 2)]
    for r in runs:
        for name in MONITORS:
            c = r["curves"][name]
            first, stays = below(c["iterations"], c["shrink"])
            cells = [r["setting"], name]
            for t in checks:
                it, v = at(c, t)
                cells.append(f"{v:.3f}" + ("" if it == t else f" ({it})"))
            cells += [str(first if first is not None else "-"),
                      str(stays if stays is not None else "never")]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Chain means over the second half (iterations "
              f"{args.iterations // 2 + 1}-{args.iterations})", "",
              "| start | monitor | chain 0 | chain 1 | chain 2 | chain 3 |",
              "|---|---|---:|---:|---:|---:|"]
    for r in runs:
        its = np.asarray(r["draw_iterations"])
        keep = its > args.iterations // 2
        for name in MONITORS + ("augmentation_mean",):
            v = np.asarray(r["traces"][name]).reshape(args.chains, len(its), -1)[:, keep, 0]
            label = "s2" if name == "augmentation_mean" else name
            lines.append(f"| {r['setting']} | {label} | "
                         + " | ".join(f"{m:.4f} +- {s:.4f}"
                                      for m, s in zip(v.mean(1), v.std(1))) + " |")
    lines += ["", "(mean +- sd over the draws of each chain)", "",
              "Training time: " + ", ".join(f"{r['setting']} {r['seconds']:.0f} s"
                                            for r in runs) + ".", ""]
    return "\n".join(lines)


def figure(runs, args, path):
    plt = pyplot()
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    fig, axes = plt.subplots(2, 2, figsize=(13, 8.4))
    styles = {"default": "-", "overdispersed": "--"}
    for j, name in enumerate(MONITORS):
        ax = axes[0, j]
        top = 1.2
        for r in runs:
            c = r["curves"][name]
            ax.plot(c["iterations"], c["shrink"], styles[r["setting"]], marker="o",
                    markersize=3, linewidth=1.5, label=f"{r['setting']} starts")
            top = max(top, float(np.nanmax(c["shrink"])))
        ax.axhline(1.1, color="C3", linestyle=":", linewidth=1, label="1.1")
        ax.axhline(1.0, color="0.6", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_ylim(0.98, top * 1.15)
        ticks = [t for t in (1, 1.1, 1.5, 2, 3, 5, 7, 10, 20, 50) if t <= top * 1.15]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(FixedFormatter([f"{t:g}" for t in ticks]))
        ax.set_xlabel("iteration")
        ax.set_ylabel("shrink factor (classic R-hat)")
        ax.set_title(f"Gelman-Rubin-Brooks: {name}")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize="small")
        ax = axes[1, j]
        for r in runs:
            its = np.asarray(r["draw_iterations"])
            tr = np.asarray(r["traces"][name])
            for c in range(tr.shape[0]):
                ax.plot(its, tr[c], styles[r["setting"]], color=f"C{c}", linewidth=0.8,
                        alpha=0.9, label=f"{r['setting']} chain {c}")
        ax.set_xlabel("iteration")
        ax.set_ylabel(name)
        if name == "residual_norm":  # the rating-band start begins far below the others
            finals = np.concatenate([np.asarray(r["traces"][name])[:, 5:] for r in runs])
            ax.set_ylim(finals.min() * 0.97, finals.max() * 1.03)
        ax.set_title(f"traces of {name} (solid: default, dashed: overdispersed)"
                     + (", y range of iterations 6-" if name == "residual_norm" else "")
                     + (str(args.iterations) if name == "residual_norm" else ""))
        ax.grid(alpha=0.3)
        if j == 0:
            ax.legend(fontsize="x-small", ncol=2)
    fig.suptitle(f"Gaussian sLDA (K={args.topics}, nu2={args.nu2:g}, learned s2) on "
                 f"movie-scale, {args.chains} chains")
    fig.tight_layout()
    save_figure(fig, path)


def main():
    p = parser(__doc__, topics=20, replot=True)
    p.add_argument("--iterations", type=int, default=500)
    p.add_argument("--nu2", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--starts", nargs="+", default=["default", "overdispersed"],
                   choices=["default", "overdispersed"])
    args = p.parse_args()
    stem = Path(args.out) / "mixing_gaussian_slda"
    if args.replot:
        saved = load_run(stem, args)
        write_outputs(stem, markdown(saved["runs"], args, saved["wall_seconds"]),
                      lambda path: figure(saved["runs"], args, path))
        return
    wall = time.perf_counter()
    ensure_dir(args.out)
    data = load_dataset("movie-scale", seed=0, data_dir=args.data_dir)
    runs = [run(data, args, s) for s in args.starts]
    wall = time.perf_counter() - wall
    write_json(stem.with_suffix(".json"), {"command": command_line(__file__),
                                           "args": saved_args(args), "wall_seconds": wall,
                                           "runs": runs})
    write_outputs(stem, markdown(runs, args, wall), lambda path: figure(runs, args, path))


if __name__ == "__main__":
    main()
