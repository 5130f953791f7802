#!/usr/bin/env python
"""Modes on long documents: the exact and light samplers, the chains' start, replica exchange.

The corpus (:func:`long_documents`): 20news's training and test documents concatenated within
a class into documents of ``--length`` (2,000) tokens, over the ``--vocabulary`` (2,000)
words most frequent in training, the 20 newsgroups merged into 8 classes (:data:`GROUPS`):
431 training documents (862,000 tokens) and 269 test documents. The model: multi-task
Gibbs MedLDA (``medlda-multitask``, c = 1, ell = 64, alpha = 1, beta = 0.01), K = 20, each
sampler with its default options (at K = 20 ``light`` runs as the exact sampler;
``light:z_draw=mh`` is LightMedLDA, which the records made before 2026-11-30 call ``light``,
relabelled). Parts (each writes ``modes_long_documents.PART.json``;
``--part report`` turns them into ``modes_long_documents.md`` and ``.png``):

* ``seeds``: one chain per seed (``--seeds``) of each of ``--samplers`` for ``--iterations``
  (200) iterations, with ``--init`` (default ``dispersed``, fit's default; ``uniform`` was
  the default before, tagged apart): the log joint, log p(W | Z) and the training accuracy
  every ``--lag`` iterations, process CPU seconds per iteration (iterations 2 to the end),
  and the test accuracy of the multiple average over the chain's snapshots;
* ``tempering``: from the state of a chain that settled in a worse mode (the first seed's
  chain of ``--bad-sampler`` with ``--bad-init``, rerun for ``--bad-iterations``), continued
  for ``--tempering-iterations`` with each of ``--continue-with`` (default: the exact sampler
  alone, replica exchange ``exact:replicas=4,hottest=0.9`` and an annealed burn-in
  ``exact:anneal=60,anneal_from=0.3``, whose burn-in covers its anneal): the cold chain's log
  joint, each replica's, the swap rates and the swaps' log ratios along the way, with CPU
  time, each run's test accuracy, and what ``diagnose`` says of a replica-exchange run's
  exchanges (``topiczoo.modes.replica_words``).

Timing: process CPU seconds, read by ``fit``'s callback after every chunk; the first chunk
(iteration 1) holds compilation, so the seconds per iteration are those of the later
iterations. The machine is shared (2 cores, other jobs): compare samplers by their ratio in
one run.

Usage::

    python studies/modes_long_documents.py --part seeds
    python studies/modes_long_documents.py --part seeds --init uniform --samplers exact \\
        light:z_draw=mh
    python studies/modes_long_documents.py --part tempering --bad-sampler light:z_draw=mh \\
        --bad-init uniform --seeds 2
    python studies/modes_long_documents.py --part seeds --init uniform \\
        --samplers exact:anneal=60 --tag=-uniform-anneal
    python studies/modes_long_documents.py --part tempering --bad-sampler light:z_draw=mh \\
        --bad-init uniform --seeds 2 --continue-with exact:anneal=30,anneal_from=0.1 ... \\
        --tag=-anneal-grid
    python studies/modes_long_documents.py --part report
"""

from __future__ import annotations

import json
import time

from _harness import command_line, ensure_dir, log, parser, pyplot, save_figure, \
    saved_args, single_thread, write_json, write_outputs

single_thread()

import numpy as np  # noqa: E402

#: The 20 newsgroups in 8 classes.
GROUPS = {
    "computers": ("comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
                  "comp.sys.mac.hardware", "comp.windows.x"),
    "vehicles": ("rec.autos", "rec.motorcycles"),
    "sport": ("rec.sport.baseball", "rec.sport.hockey"),
    "crypt-electronics": ("sci.crypt", "sci.electronics"),
    "med-space": ("sci.med", "sci.space"),
    "politics": ("talk.politics.guns", "talk.politics.mideast", "talk.politics.misc"),
    "religion": ("alt.atheism", "soc.religion.christian", "talk.religion.misc"),
    "forsale": ("misc.forsale",),
}
STEM = "modes_long_documents"
#: The report's figure starts at this iteration.
ZOOM_FROM = 25


def _concatenated(corpus, length: int, seed: int):
    """Each class's documents in a random order (``seed``), joined into one stream of tokens
    and cut into documents of ``length`` tokens (the remainder dropped)."""
    from topiczoo import Corpus

    rng = np.random.default_rng(seed)
    names = list(corpus.label_names)
    words, offsets, labels = [], [0], []
    for label, groups in enumerate(GROUPS.values()):
        docs = np.flatnonzero(np.isin(corpus.labels, [names.index(g) for g in groups]))
        stream = np.concatenate([corpus.document(d) for d in docs[rng.permutation(len(docs))]])
        for start in range(0, len(stream) - length + 1, length):
            words.append(stream[start:start + length])
            offsets.append(offsets[-1] + length)
            labels.append(label)
    return Corpus(np.concatenate(words).astype(np.int32), np.asarray(offsets),
                  corpus.vocabulary, labels=np.asarray(labels), label_names=tuple(GROUPS))


def long_documents(data_dir=None, *, length: int = 2000, vocabulary: int = 2000, seed: int = 0):
    """(train, test): 20news concatenated within :data:`GROUPS` into documents of ``length``
    tokens over the ``vocabulary`` most frequent training words (module docstring)."""
    from topiczoo import load_dataset

    data = load_dataset("20news", data_dir=data_dir)
    counts = np.bincount(data.train.words, minlength=data.train.vocab_size)
    keep = np.sort(np.argsort(-counts, kind="stable")[:vocabulary])
    words = [data.train.vocabulary[i] for i in keep]
    train, _ = data.train.restrict_vocabulary(words)
    test, _ = data.test.restrict_vocabulary(words)
    return _concatenated(train, length, seed), _concatenated(test, length, seed + 1)


class _Trace:
    """``fit``'s callback: every chunk, the chains' last monitors and the process CPU time."""

    def __init__(self, chain: int = 0):
        self.rows, self.chain = [], chain
        self.start = time.process_time()

    def __call__(self, result):
        d = result.draws
        row = {"iteration": result.iterations_done,
               "cpu_seconds": time.process_time() - self.start,
               "log_joint": float(d["log_joint"][self.chain, -1]),
               "log_likelihood": float(d["log_likelihood"][self.chain, -1]),
               "train_accuracy": float(d["train_accuracy"][self.chain, -1])}
        if "replica_log_joint" in d:
            for name in ("replica_log_joint", "swap_rate", "swap_log_ratio"):
                row[name] = [float(x) for x in d[name][self.chain, -1]]
        self.rows.append(row)

    def seconds_per_iteration(self) -> float:
        first, last = self.rows[0], self.rows[-1]
        return (last["cpu_seconds"] - first["cpu_seconds"]) / (last["iteration"]
                                                               - first["iteration"])


def _model(args, train):
    from topiczoo.models import medlda_multitask

    return medlda_multitask(args.topics, train.num_classes)


def _fit(args, train, sampler, seed, iterations, *, init="dispersed", start=None,
         num_burnin=None):
    from topiczoo import fit

    trace = _Trace()
    result = fit(_model(args, train), train, sampler=sampler, num_chains=1, seed=seed,
                 num_iterations=iterations, num_burnin=num_burnin, chunk=args.lag, init=init,
                 start=start, callback=trace, progress=False)
    return result, trace


def _test_accuracy(args, result, test, seed) -> float:
    """The test accuracy of the multiple average over ``result``'s snapshots."""
    from topiczoo import predict

    prediction = predict(result, test, num_burnin=args.test_burnin, num_draws=args.test_draws,
                         seed=seed)
    return prediction.accuracy(test.labels, "ma")


def part_seeds(args, train, test) -> dict:
    runs = []
    for sampler in args.samplers:
        for seed in args.seeds:
            log(f"{sampler} seed {seed} init {args.init}")
            result, trace = _fit(args, train, sampler, seed, args.iterations, init=args.init)
            runs.append({"sampler": sampler, "seed": seed, "init": args.init,
                         "trace": trace.rows,
                         "cpu_seconds_per_iteration": trace.seconds_per_iteration(),
                         "test_accuracy": _test_accuracy(args, result, test, seed)})
            log(f"  log joint {trace.rows[-1]['log_joint']:.6g}, test accuracy "
                f"{runs[-1]['test_accuracy']:.4f}, {runs[-1]['cpu_seconds_per_iteration']:.3f} "
                "CPU s/iteration")
    return {"runs": runs}


def part_tempering(args, train, test) -> dict:
    from topiczoo.models.parametric import sampler_options
    from topiczoo.modes import replica_swaps, replica_words

    seed = args.seeds[0]
    log(f"the bad start: {args.bad_sampler}, init {args.bad_init}, seed {seed}, "
        f"{args.bad_iterations} iterations")
    bad, bad_trace = _fit(args, train, args.bad_sampler, seed, args.bad_iterations,
                          init=args.bad_init)
    runs = {"start": bad_trace.rows}
    accuracy = {"start": _test_accuracy(args, bad, test, seed)}
    total = args.bad_iterations + args.tempering_iterations
    record = {"runs": runs, "test_accuracy": accuracy}
    for sampler in args.continue_with:
        log(f"continued with {sampler} to iteration {total}")
        burnin = args.bad_iterations + sampler_options(sampler).anneal
        result, trace = _fit(args, train, sampler, seed, total, start=bad, num_burnin=burnin)
        runs[sampler] = trace.rows
        accuracy[sampler] = _test_accuracy(args, result, test, seed)
        log(f"  log joint {trace.rows[-1]['log_joint']:.6g}, test accuracy "
            f"{accuracy[sampler]:.4f}")
        if "swap_rate" in result.draws:  # what diagnose says of a replica-exchange run
            swaps = replica_swaps(result.draws["swap_rate"], result.draws["swap_log_ratio"])
            record["swaps"] = {"sampler": sampler, "rates": swaps.rates.tolist(),
                               "mean_log_ratios": swaps.mean_log_ratios.tolist(),
                               "replicas_needed": swaps.replicas_needed,
                               "words": replica_words(swaps)}
            log(record["swaps"]["words"])
    return record


def report(out) -> None:
    """modes_long_documents.md and .png from the parts' .json found in ``out``: a row per run
    of the seeds parts (its last log joint, test accuracy, CPU seconds per iteration), the
    tempering part's last log joints, and the log joint along each run."""
    parts = {path.name[len(STEM) + 1:-len(".json")]: json.loads(path.read_text())
             for path in sorted(out.glob(f"{STEM}.*.json"))}
    if not parts:
        raise SystemExit(f"no {STEM}.*.json in {out}: run --part seeds or tempering first")
    traces, lines = {}, [f"# {STEM}", ""]
    for name, record in parts.items():
        lines += [f"## {name}", "", f"`{record['command']}`", ""]
        if name.startswith("seeds"):
            lines += ["| sampler | init | seed | log joint (last) | test accuracy | CPU s / it |",
                      "|---|---|---|---|---|---|"]
            for run in record["runs"]:
                label = f"{name} {run['sampler']} seed {run['seed']}"
                traces[label] = run["trace"]
                lines.append(f"| {run['sampler']} | {run['init']} | {run['seed']} | "
                             f"{run['trace'][-1]['log_joint']:.6g} | "
                             f"{run['test_accuracy']:.4f} | "
                             f"{run['cpu_seconds_per_iteration']:.3f} |")
        else:
            accuracy = record["test_accuracy"]
            lines += ["| run | last iteration | log joint (last) | test accuracy | CPU s | "
                      "swap rates (last) |", "|---|---|---|---|---|---|"]
            for run, rows in record["runs"].items():
                traces[f"{name} {run}"] = rows
                swaps = ", ".join(f"{x:.3f}" for x in rows[-1].get("swap_rate", [])) or "-"
                lines.append(f"| {run} | {rows[-1]['iteration']} | "
                             f"{rows[-1]['log_joint']:.6g} | {accuracy[run]:.4f} | "
                             f"{rows[-1]['cpu_seconds']:.0f} | {swaps} |")
            if "swaps" in record:  # what diagnose says of the replica-exchange run
                lines += ["", "`diagnose` on the replica-exchange run: "
                          f"{record['swaps']['words']}."]
        lines.append("")

    def draw(path):
        """The log joint along each run from iteration ``ZOOM_FROM`` (the first iterations'
        climb would flatten the rest), the seeds parts on the left and the runs from the bad
        start on the right: a colour per part and sampler, a line style per seed."""
        fig, axes = pyplot().subplots(1, 2, figsize=(15, 6), sharey=True)
        colours, styles = ({}, {}), ("-", "--", ":", "-.")
        lows, highs = [], []
        for label, rows in traces.items():
            group, _, seed = label.partition(" seed ")
            side = 0 if group.startswith("seeds") else 1
            colour = colours[side].setdefault(group, pyplot().cm.tab20(len(colours[side]) % 20))
            kept = [r for r in rows if r["iteration"] >= ZOOM_FROM]
            x, y = [r["iteration"] for r in kept], [r["log_joint"] for r in kept]
            lows.append(min(y, default=np.inf))
            highs.append(max(y, default=-np.inf))
            axes[side].plot(x, y, color=colour, linestyle=styles[int(seed or 0) % len(styles)],
                            label=label)
        span = max(highs) - min(lows)
        axes[0].set_ylim(min(lows) - 0.05 * span, max(highs) + 0.05 * span)
        axes[0].set_ylabel("log joint (nats)")
        for ax, title in zip(axes, ("chains by start and seed", "from the bad start")):
            ax.set_xlabel("iteration")
            ax.set_title(f"{title}: log joint from iteration {ZOOM_FROM}")
            if ax.lines:
                ax.legend(fontsize=6.5, ncol=2, loc="lower right")
        save_figure(fig, path)

    write_outputs(out / STEM, "\n".join(lines), draw)


def _parser():
    p = parser(__doc__, topics=20, chains=1, test_burnin=20, test_draws=10)
    p.add_argument("--part", choices=("seeds", "tempering", "report"), required=True)
    p.add_argument("--samplers", nargs="+", default=["exact", "light", "light:z_draw=mh"])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--init", choices=("dispersed", "uniform"), default="dispersed")
    p.add_argument("--lag", type=int, default=25, help="iterations between records")
    p.add_argument("--length", type=int, default=2000)
    p.add_argument("--vocabulary", type=int, default=2000)
    p.add_argument("--bad-sampler", default="exact")
    p.add_argument("--bad-init", default="uniform")
    p.add_argument("--bad-iterations", type=int, default=100)
    p.add_argument("--tempering-iterations", type=int, default=100)
    p.add_argument("--continue-with", nargs="+", metavar="SAMPLER",
                   default=["exact", "exact:replicas=4,hottest=0.9",
                            "exact:anneal=60,anneal_from=0.3"],
                   help="the tempering part's samplers, each from the bad start")
    p.add_argument("--tag", default="", help="appended to the part's .json name")
    return p


def main():
    args = _parser().parse_args()
    out = ensure_dir(args.out)
    if args.part == "report":
        report(out)
        return
    train, test = long_documents(args.data_dir, length=args.length, vocabulary=args.vocabulary)
    log(f"train D={train.num_docs} N={train.num_tokens} V={train.vocab_size}; test "
        f"D={test.num_docs}")
    record = {"command": command_line(__file__), "args": saved_args(args),
              "corpus": {"train_docs": train.num_docs, "train_tokens": train.num_tokens,
                         "test_docs": test.num_docs, "vocab_size": train.vocab_size},
              "load_average": list(__import__("os").getloadavg())}
    part = {"seeds": part_seeds, "tempering": part_tempering}[args.part]
    record.update(part(args, train, test))
    tag = args.tag or ("" if args.part != "seeds" or args.init == "dispersed"
                       else f"-{args.init}")
    write_json(out / f"{STEM}.{args.part}{tag}.json", record, indent=1)


if __name__ == "__main__":
    main()
