"""How large is the stored tree of a 4-chain, 1,000-iteration multi-task MedLDA run on 20news?

Requirement: the saved ``posterior.nc`` (``save_datatree(to_datatree(result, prediction,
test_labels=...))``) of a 4-chain, 1,000-iteration run on 20news with K = 100 stays under
1 GiB. A real 1,000-iteration run takes about 75 minutes on this machine (about 1.1 s per
iteration and chain), so the size is found in three ways:

(a) a REAL short run: ``medlda_multitask(100, 20, c=1, ell=64)``, 4 chains, ``--iterations``
    (default 10) iterations, burn-in half, ``--snapshots`` (default 5, fit's default) snapshots,
    and its prediction of all 7,505 test documents (J = 10 kept test draws, fit's/predict's
    defaults; test burn-in ``--test-burnin``, default 5, which does not change any shape), saved
    with its test labels (the one-vs-all indicators [20, D], int64, as ``topiczoo fit`` stored
    them when this was measured; it now stores ``Task.to_tasks``, float32, half those bytes);
    the file size is measured, and split into its groups by saving each group alone.
(b) extrapolation to 1,000 iterations: the per-draw groups (``posterior``,
    ``warmup_posterior``, ``sample_stats``, ``warmup_sample_stats``) grow linearly with the
    number of draws; ``predictions`` scale with chains x snapshots x test draws x tasks x
    documents, which do not depend on the iterations (5 snapshots and J = 10 by default), and
    ``observed_data`` is fixed. Size(1000) = size(a) + (1000 - n) x (bytes per draw), the bytes
    per draw measured from the per-draw groups of (a) (file size of those groups saved alone,
    minus the same groups with one draw, over n - 1).
(c) check of (b): a FitResult of the exact 1,000-iteration shapes (every draw variable of (a)
    with 1,000 draws, burn-in 500, the same 5 snapshots) filled with synthetic random values, and
    the prediction scores of (a)'s shape, converted and saved the same way. The file is not
    compressed (``save_datatree`` sets no encoding), so the values do not change its size.

    python studies/tree_size_20news.py

writes ``studies/results/tree_size_20news.{md,json}`` (the .nc files go to a temporary
directory and are deleted).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

from _harness import (command_line, ensure_dir, log, parser, saved_args,  # noqa: E402
                      write_json)
from topiczoo.datasets import load_dataset  # noqa: E402
from topiczoo.diagnostics import save_datatree, to_datatree  # noqa: E402
from topiczoo.fit import Snapshot, fit  # noqa: E402
from topiczoo.models import medlda_multitask  # noqa: E402
from topiczoo.predict import predict  # noqa: E402

MIB = 2.0**20
GIB = 2.0**30
PER_DRAW_GROUPS = ("posterior", "warmup_posterior", "sample_stats", "warmup_sample_stats")


def file_size(tree, path) -> int:
    save_datatree(tree, path)
    return path.stat().st_size


def group_sizes(tree, tmp) -> dict:
    """File size of each group saved alone (with the root's attributes)."""
    out = {}
    for name in tree.children:
        others = [g for g in tree.children if g != name]
        out[name] = file_size(tree.drop_nodes(others), tmp / f"group_{name}.nc")
    return out


def indicators(labels, num_classes) -> np.ndarray:
    y = np.zeros((num_classes, len(labels)), np.int64)
    y[np.asarray(labels), np.arange(len(labels))] = 1
    return y


def synthetic_result(result, num_iterations, rng):
    """``result`` with every per-draw array regrown to ``num_iterations`` draws of random
    values of the same dtype and per-draw shape; burn-in half; same snapshot count, their
    iterations moved to the end of the longer run (fit's default spacing)."""
    def grow(a):
        a = np.asarray(a)
        shape = (a.shape[0], num_iterations) + a.shape[2:]
        return rng.standard_normal(shape).astype(a.dtype)

    burnin = num_iterations // 2
    k = len(result.snapshots)
    snaps = [Snapshot(burnin + (num_iterations - burnin) * (i + 1) // k, {}) for i in range(k)]
    return dataclasses.replace(
        result, draws={n: grow(a) for n, a in result.draws.items()},
        sample_stats={n: grow(a) for n, a in result.sample_stats.items()},
        draw_iterations=np.arange(1, num_iterations + 1, dtype=np.int64),
        num_burnin=burnin, snapshots=snaps, state=None)


def main():
    p = parser(__doc__, topics=100, test_burnin=5, test_draws=10)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--snapshots", type=int, default=5)
    p.add_argument("--target-iterations", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    wall = time.perf_counter()
    data = load_dataset("20news", data_dir=args.data_dir)
    num_classes = len(data.label_names)
    model = medlda_multitask(args.topics, num_classes, c=1.0, ell=64.0)
    log(f"20news: train D={data.train.num_docs} N={data.train.num_tokens}, test "
        f"D={data.test.num_docs} N={data.test.num_tokens}, V={data.train.vocab_size}")
    tic = time.perf_counter()
    result = fit(model, data.train, num_chains=args.chains, num_iterations=args.iterations,
                 num_snapshots=args.snapshots, seed=args.seed, progress=True)
    train_seconds = time.perf_counter() - tic
    tic = time.perf_counter()
    prediction = predict(result, data.test, num_burnin=args.test_burnin,
                         num_draws=args.test_draws, seed=args.seed)
    predict_seconds = time.perf_counter() - tic
    y = indicators(data.test.labels, num_classes)
    accuracy = {s: prediction.accuracy(data.test.labels, s) for s in ("sf", "ma")}
    log(f"train {train_seconds:.0f} s, predict {predict_seconds:.0f} s, accuracy {accuracy}")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tree = to_datatree(result, prediction, test_labels=y)
        real = file_size(tree, tmp / "real.nc")
        real_groups = group_sizes(tree, tmp)
        shapes = {g: {v: list(tree[g][v].shape) for v in tree[g].data_vars}
                  for g in tree.children}
        dtypes = {g: {v: str(tree[g][v].dtype) for v in tree[g].data_vars}
                  for g in tree.children}

        # (b) bytes per draw: the per-draw groups with all n draws minus the same groups with
        # two draws (the first, a warmup draw, and the last, a posterior draw), over n - 2
        draw_groups = [g for g in tree.children if g not in PER_DRAW_GROUPS]
        n = len(result.draw_iterations)
        all_draws = file_size(tree.drop_nodes(draw_groups), tmp / "draws_all.nc")
        # the same groups as the full tree (warmup groups present): one warmup and one
        # posterior draw, so group overheads cancel
        two = dataclasses.replace(
            result, draws={k: v[:, [0, -1]] for k, v in result.draws.items()},
            sample_stats={k: v[:, [0, -1]] for k, v in result.sample_stats.items()},
            draw_iterations=result.draw_iterations[[0, -1]])
        two_size = file_size(to_datatree(two), tmp / "draws_two.nc")
        per_draw = (all_draws - two_size) / (n - 2)
        raw_per_draw = sum(int(np.asarray(a)[:, :1].nbytes) for a in
                           list(result.draws.values()) + list(result.sample_stats.values())) + 8
        extrapolated = real + (args.target_iterations - n) * per_draw

        # (c) synthetic tree of the exact target shapes
        rng = np.random.default_rng(0)
        big = synthetic_result(result, args.target_iterations, rng)
        big_prediction = dataclasses.replace(
            prediction, scores=rng.standard_normal(prediction.scores.shape)
            .astype(prediction.scores.dtype))
        big_tree = to_datatree(big, big_prediction, test_labels=y)
        synthetic = file_size(big_tree, tmp / "synthetic.nc")
        synthetic_groups = group_sizes(big_tree, tmp)
        big_shapes = {g: {v: list(big_tree[g][v].shape) for v in big_tree[g].data_vars}
                      for g in big_tree.children}
        in_memory = int(sum(big_tree[g][v].nbytes for g in big_tree.children
                            for v in big_tree[g].data_vars))

    wall = time.perf_counter() - wall
    summary = {
        "command": command_line(__file__),
        "args": saved_args(args),
        "data": {"train_docs": data.train.num_docs, "train_tokens": data.train.num_tokens,
                 "test_docs": data.test.num_docs, "test_tokens": data.test.num_tokens,
                 "vocab": data.train.vocab_size, "classes": num_classes},
        "train_seconds": train_seconds, "predict_seconds": predict_seconds,
        "seconds_per_iteration_4_chains": train_seconds / args.iterations,
        "accuracy_short_run": accuracy,
        "a_real_bytes": real, "a_real_groups_bytes": real_groups,
        "a_shapes": shapes, "a_dtypes": dtypes,
        "b_per_draw_bytes": per_draw, "b_raw_per_draw_bytes": raw_per_draw,
        "b_extrapolated_bytes": extrapolated,
        "c_synthetic_bytes": synthetic, "c_synthetic_groups_bytes": synthetic_groups,
        "c_shapes": big_shapes, "c_in_memory_bytes": in_memory,
        "wall_seconds": wall,
    }
    stem = ensure_dir(args.out) / "tree_size_20news"
    write_json(stem.with_suffix(".json"), summary, indent=1)
    stem.with_suffix(".md").write_text(markdown(summary, args))
    print(stem.with_suffix(".md").read_text())


def markdown(s, args) -> str:
    def mib(b):
        return f"{b / MIB:.1f} MiB"

    lines = ["# Stored tree size: multi-task Gibbs MedLDA on 20news (K = "
             f"{args.topics}, {args.chains} chains)", "",
             f"20news: {s['data']['train_docs']:,} training / {s['data']['test_docs']:,} test "
             f"documents, V = {s['data']['vocab']:,}, {s['data']['classes']} classes. "
             f"`medlda_multitask({args.topics}, {s['data']['classes']}, c=1, ell=64)`, "
             f"{args.snapshots} snapshots, J = {args.test_draws} test draws, test labels as "
             "one-vs-all indicators. Sizes of the netCDF file written by `save_datatree` "
             f"(1 MiB = 2^20 bytes). Wall time {s['wall_seconds'] / 60:.1f} min.", "",
             "| | iterations | file size | posterior + warmup + stats | predictions | "
             "observed_data |", "|---|---:|---:|---:|---:|---:|"]

    def row(label, its, total, groups):
        per = sum(v for g, v in groups.items() if g in PER_DRAW_GROUPS)
        return (f"| {label} | {its} | {mib(total)} ({total:,} B) | {mib(per)} | "
                f"{mib(groups.get('predictions', 0))} | {mib(groups.get('observed_data', 0))} |")

    lines.append(row("(a) real run", args.iterations, s["a_real_bytes"],
                     s["a_real_groups_bytes"]))
    lines.append(f"| (b) extrapolated | {args.target_iterations} | "
                 f"{mib(s['b_extrapolated_bytes'])} | | | |")
    lines.append(row("(c) synthetic, exact shapes", args.target_iterations,
                     s["c_synthetic_bytes"], s["c_synthetic_groups_bytes"]))
    lines += ["", "(group columns: each group saved alone, so each includes the file's fixed "
              "overhead of about a few KiB)", "",
              f"Bytes per draw (b): {s['b_per_draw_bytes']:.0f} in the file, "
              f"{s['b_raw_per_draw_bytes']} raw (4 chains x every per-draw variable + the "
              "int64 draw coordinate).",
              f"Synthetic tree in memory: {mib(s['c_in_memory_bytes'])}.",
              f"Short run: training {s['train_seconds']:.0f} s "
              f"({s['seconds_per_iteration_4_chains']:.1f} s per iteration, 4 chains, "
              f"compile included), prediction {s['predict_seconds']:.0f} s.", "",
              "Shapes (c):", ""]
    for g, vs in s["c_shapes"].items():
        lines.append(f"- `{g}`: " + ", ".join(f"`{v}` {tuple(sh)}" for v, sh in vs.items()))
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
