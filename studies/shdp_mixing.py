"""Gelman-Rubin-Brooks curves of the Gaussian sHDP against Gaussian sLDA (sHDP paper, Figure 3).

The supervised-HDP paper's Figure 3 shows Gelman and Rubin's shrink factor against iteration
for the L2 norm of the regression coefficients, ||eta||, and of the residuals, ||y - Zbar eta||,
for the sHDP (upper half) and Gibbs-sampled sLDA with 40 topics (lower half) on its movie
regression data, 4 chains "with different starting values"; the sHDP's factors fall towards 1,
sLDA's stay "significantly higher". This study draws both for topiczoo's samplers:

* Gaussian sHDP: ``shdp_gaussian(10, s2=1, learn_s2=True)`` (10 initial topics), s2 ~ IG(1, 0.01)
  drawn (asked for: the default is now a fixed s2, models.shdp.shdp_gaussian), alpha and
  gamma drawn (Gamma(1, 1)), beta 0.01, nu2 1, responses *not* centred (as sLDA's, so the
  residual norm means the same in both);
* Gaussian sLDA: ``slda_gaussian(40, learn_s2=True, a0=1, b0=0.01, alpha=1, beta=0.01, nu2=1)``,
  the settings of ``studies/mixing_gaussian_slda.py`` at the paper's K = 40.

Data: ``movie-scale`` (split seed 0, ratings in [0, 1]), training documents subsampled to
``--docs`` (a seeded random choice; default 500 of 4,005) so that 2 x 4 chains x
``--iterations`` (default 2,000) fit in about 30 minutes of a shared 2-core machine.

Starts (overdispersed, one kind per chain, handed to ``fit`` as ``start=`` as in
``mixing_gaussian_slda.py``; the committed results resumed them as a checkpoint, which draws the
same chains; the same four for both models, with K = 40 topics where a start needs a number of
topics): chain 0 uniformly random Z (sLDA: over 40 topics; sHDP: ``fit``'s own start, 10
topics), s2 = 1; chain 1 "rating bands" (all tokens of document d in topic floor(40 rank(y_d) /
D)), s2 = 0.001; chain 2 one random topic per document, s2 = 0.1; chain 3 a random word -> topic
partition, s2 = 10. The sHDP starts have stick weights 1 / (K + 1) per occupied topic, alpha =
gamma = 1, eta = 0 (eta is drawn first).

Shrink factor: ``topiczoo.diagnostics.gelman_rubin_brooks`` (classic R-hat without the df
correction on the second half of the draws up to each iteration, as coda's ``gelman.plot``),
every ``--iterations`` / 100 iterations; reported at 500, 1,000 and 2,000.

    python studies/shdp_mixing.py [--docs 500] [--iterations 2000]

writes ``studies/results/shdp_mixing.{md,json,png}``. ``--replot`` redraws from the .json.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from _harness import single_thread

single_thread()

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _harness import (command_line, ensure_dir, load_run, log, parser, pyplot,  # noqa: E402
                      save_figure, saved_args, write_json, write_outputs)
from mixing_gaussian_slda import (START_NAMES, START_S2, at,  # noqa: E402
                                  overdispersed_assignments, overdispersed_result,
                                  result_from_starts)
from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.diagnostics import gelman_rubin_brooks, to_datatree  # noqa: E402
from topiczoo.fit import FitResult, fit  # noqa: E402
from topiczoo.models import slda_gaussian  # noqa: E402
from topiczoo.models.shdp import shdp_gaussian  # noqa: E402

MONITORS = ("eta_norm", "residual_norm")
CHECK_AT = (100, 250, 500, 1000, 1500, 2000)
MODELS = ("shdp", "slda")


def shdp_start(one, z, s2, data, vocab_size):
    """An SHDPState holding topic assignments ``z`` [N] (slots 0..max z), stick weights
    1 / (K + 1) per occupied topic, s2 = ``s2``; the rest from ``one`` (the default start)."""
    state = one.state
    capacity = state.n_k.shape[-1]
    z = jnp.asarray(z, jnp.int32)
    n_dk = jnp.zeros_like(state.n_dk).at[data.doc_ids, z].add(1)
    n_wk = jnp.zeros((vocab_size, capacity), jnp.int32).at[data.words, z].add(1)
    n_k = jnp.zeros_like(state.n_k).at[z].add(1)
    occupied = n_k > 0
    beta_w = jnp.where(occupied, 1.0 / (jnp.sum(occupied) + 1.0), 0.0).astype(jnp.float32)
    return state._replace(z=z, n_dk=n_dk, n_wk=n_wk, n_k=n_k, beta_weights=beta_w,
                          beta_new=(1.0 - beta_w.sum()).astype(jnp.float32),
                          augmentation=jnp.full_like(state.augmentation, s2))


def shdp_overdispersed_result(model, corpus, fit_kwargs, num_topics) -> FitResult:
    """The sHDP's overdispersed starts as a run at iteration 0: chain 0 the default start,
    chains 1-3 :func:`shdp_start` from ``overdispersed_assignments`` over ``num_topics``
    topics (``mixing_gaussian_slda.result_from_starts``)."""
    zs = overdispersed_assignments(corpus, num_topics,
                                   np.random.default_rng(fit_kwargs["seed"]))

    def start(c, one, data):
        if c == 0:
            return one.state._replace(augmentation=jnp.full_like(one.state.augmentation,
                                                                 START_S2[c]))
        return shdp_start(one, zs[c], START_S2[c], data, corpus.vocab_size)

    return result_from_starts(model, corpus, fit_kwargs, start)


def run(train, args, which) -> dict:
    kwargs = dict(num_chains=4, num_iterations=args.iterations, num_burnin=args.iterations // 2,
                  num_snapshots=0, chunk=100, seed=args.seed, progress=False)
    if which == "shdp":
        # capacity 128 (the starts hold 40 topics); fit doubles it if a birth needs more
        model = replace(shdp_gaussian(10, s2=1.0, learn_s2=True, center=False), capacity=128)
        start = shdp_overdispersed_result(model, train, kwargs, 40)
    else:
        model = slda_gaussian(40, learn_s2=True, a0=1.0, b0=0.01, alpha=1.0, beta=0.01, nu2=1.0)
        start = overdispersed_result(model, train, kwargs)
    tic = time.perf_counter()
    result = fit(model, train, start=start, **kwargs)
    seconds = time.perf_counter() - tic
    tree = to_datatree(result)
    num_points = args.iterations // (args.iterations // 100)
    curves = {}
    for name in MONITORS:
        iterations, curve = gelman_rubin_brooks(tree, name, num_points=num_points)
        curves[name] = {"iterations": iterations.tolist(), "shrink": curve.tolist()}
    extra = ("num_topics", "alpha", "gamma") if which == "shdp" else ()
    traces = {name: np.asarray(result.draws[name]).tolist()
              for name in MONITORS + ("log_likelihood", "augmentation_mean") + extra}
    log(f"{which}: {seconds:.0f} s; final shrink "
        + ", ".join(f"{n} {c['shrink'][-1]:.3f}" for n, c in curves.items()))
    return {"model": which, "seconds": seconds, "curves": curves, "traces": traces,
            "draw_iterations": np.asarray(result.draw_iterations).tolist()}


def markdown(runs, args, wall, command) -> str:
    checks = [t for t in CHECK_AT if t <= args.iterations]
    lines = ["# Gelman-Rubin-Brooks: Gaussian sHDP vs Gaussian sLDA (K = 40) on movie-scale", "",
             f"Command: `{command}`. Wall time {wall / 60:.1f} min (2-core machine shared with "
             "other sessions).", "",
             f"{args.docs} training documents of movie-scale (split seed 0, a random subset "
             f"with seed {args.seed}, so that both models' {args.iterations} iterations fit in "
             "about 30 minutes), 4 chains from overdispersed starts: chain 0 " + "; chain ".join(
                 f"{c} {s}" if c else s for c, s in enumerate(START_NAMES))
             + " (sHDP chain 0: fit's own start, 10 topics). Classic shrink factor on the "
             "second half of the draws up to each iteration.", "",
             "## Shrink factor at selected iterations", "",
             "| model | monitor | " + " | ".join(f"it {t}" for t in checks) + " |",
             "|---|---|" + "---:|" * len(checks)]
    for r in runs:
        for name in MONITORS:
            cells = []
            for t in checks:
                it, v = at(r["curves"][name], t)
                cells.append(f"{v:.3f}" + ("" if it == t else f" ({it})"))
            lines.append(f"| {r['model']} | {name} | " + " | ".join(cells) + " |")
    lines += ["", f"## Chain means over the second half (iterations "
              f"{args.iterations // 2 + 1}-{args.iterations})", "",
              "| model | monitor | chain 0 | chain 1 | chain 2 | chain 3 |",
              "|---|---|---:|---:|---:|---:|"]
    for r in runs:
        its = np.asarray(r["draw_iterations"])
        keep = its > args.iterations // 2
        names = MONITORS + ("augmentation_mean",) + (("num_topics",) if r["model"] == "shdp"
                                                      else ())
        for name in names:
            v = np.asarray(r["traces"][name], np.float64).reshape(4, len(its), -1)[:, keep, 0]
            label = "s2" if name == "augmentation_mean" else name
            lines.append(f"| {r['model']} | {label} | "
                         + " | ".join(f"{m:.4g} +- {s:.3g}"
                                      for m, s in zip(v.mean(1), v.std(1))) + " |")
    lines += ["", "(mean +- sd over the draws of each chain)", "",
              "Training time: " + ", ".join(f"{r['model']} {r['seconds']:.0f} s"
                                            for r in runs) + ".", "",
              "![shrink factors and traces](shdp_mixing.png)", ""]
    return "\n".join(lines)


def figure(runs, args, path):
    plt = pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.4))
    styles = {"shdp": "-", "slda": "--"}
    for j, name in enumerate(MONITORS):
        ax = axes[0, j]
        for r in runs:
            c = r["curves"][name]
            ax.plot(c["iterations"], c["shrink"], styles[r["model"]], linewidth=1.5,
                    label=r["model"])
        ax.axhline(1.1, color="C3", linestyle=":", linewidth=1, label="1.1")
        ax.axhline(1.0, color="0.6", linewidth=0.8)
        ax.set_yscale("log")
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
                ax.plot(its, tr[c], styles[r["model"]], color=f"C{c}", linewidth=0.8,
                        label=f"{r['model']} chain {c}")
        ax.set_xlabel("iteration")
        ax.set_ylabel(name)
        ax.set_title(f"traces of {name} (solid: sHDP, dashed: sLDA)")
        ax.grid(alpha=0.3)
        if j == 0:
            ax.legend(fontsize="x-small", ncol=2)
    for r in runs:
        if r["model"] == "shdp":
            its = np.asarray(r["draw_iterations"])
            for i, name in enumerate(("num_topics", "alpha")):
                ax = axes[i, 2]
                tr = np.asarray(r["traces"][name])
                for c in range(tr.shape[0]):
                    ax.plot(its, tr[c], color=f"C{c}", linewidth=0.8, label=f"chain {c}")
                ax.set_xlabel("iteration")
                ax.set_title(f"sHDP {name}")
                ax.grid(alpha=0.3)
                ax.legend(fontsize="x-small")
    fig.suptitle(f"movie-scale, {args.docs} training documents, 4 chains, overdispersed starts")
    fig.tight_layout()
    save_figure(fig, path)


def main():
    p = parser(__doc__, topics=40, replot=True)
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--docs", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    stem = Path(args.out) / "shdp_mixing"
    if args.replot:
        saved = load_run(stem, args)
        write_outputs(stem, markdown(saved["runs"], args, saved["wall_seconds"],
                                     args.command),
                      lambda path: figure(saved["runs"], args, path))
        return
    if args.topics != 40 or args.chains != 4:
        p.error("the study is defined for K = 40 and 4 chains")
    wall = time.perf_counter()
    ensure_dir(args.out)
    data = load_dataset("movie-scale", seed=0, data_dir=args.data_dir)
    rng = np.random.default_rng(args.seed)
    keep = np.sort(rng.choice(data.train.num_docs, size=min(args.docs, data.train.num_docs),
                              replace=False))
    train = data.train.subset(keep)
    log(f"training documents {train.num_docs}, tokens {train.num_tokens}")
    runs = [run(train, args, which) for which in MODELS]
    wall = time.perf_counter() - wall
    command = command_line(__file__)
    write_json(stem.with_suffix(".json"), {"command": command, "args": saved_args(args),
                                           "wall_seconds": wall, "runs": runs})
    write_outputs(stem, markdown(runs, args, wall, command),
                  lambda path: figure(runs, args, path))


if __name__ == "__main__":
    main()
