"""Why the sHDP loses to sLDA / MedLDA on movie-scale: short runs on a validation split.

Fold 0 of ``load_folds("movie-scale", num_folds=5, seed=0, preprocessing="shdp")``; its
TRAINING documents are split again (``train_test_split(0.25, seed=1)``) into a fit part and a
validation part, so that nothing here looks at fold 0's test documents. Each candidate setting
is one short fit (``--chains`` chains x ``--iterations`` iterations, half burn-in, 5
snapshots) through the registry and ``topiczoo.fit_and_predict``, scored by validation
predictive R^2 (strategy ma). Also recorded: the in-sample R^2 from the last draw's training
MSE, the occupied topics and s2 at the end, and the share of validation tokens that the test
chains put on topics born in the test chain (their coefficient is ignored: prior mean 0).

    python studies/shdp_movie_scale_diagnose.py [--only LABEL ...] [--iterations 100]

writes ``studies/results/shdp_movie_scale_diagnose.{md,json}``; a rerun adds to the .json
(skipping a candidate already there with the same iterations, chains and seed), so the
candidates can be run a few at a time; ``--replot`` only rewrites the .md from the .json.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from _harness import single_thread

single_thread()

import numpy as np  # noqa: E402

from _harness import ensure_dir, log, parser, write_json  # noqa: E402
from topiczoo import fit_and_predict, load_folds  # noqa: E402
from topiczoo.models import REGISTRY  # noqa: E402


def candidates(var_y: float) -> dict:
    """name -> (registry entry, K, options, test burn-in). var_y: the fit part's response
    variance (the fixed-s2 candidates)."""
    return {
        "slda-gaussian K=30 (study settings)": (
            "slda-gaussian", 30, {"learn_s2": True, "a0": 1.0, "b0": 0.01, "alpha": 1.0,
                                  "nu2": 100.0}, 10),
        "slda-gaussian K=30 s2 fixed = var(y) / 4": (
            "slda-gaussian", 30, {"learn_s2": False, "s2": var_y / 4, "alpha": 1.0,
                                  "nu2": 100.0}, 10),
        "slda-gaussian K=30 s2 fixed = var(y) / 4, nu2 = 1": (
            "slda-gaussian", 30, {"learn_s2": False, "s2": var_y / 4, "alpha": 1.0,
                                  "nu2": 1.0}, 10),
        "medlda-regression K=20 c=256": ("medlda-regression", 20,
                                         {"c": 256.0, "eps": 1e-3, "alpha": 1.0}, 10),
        "shdp-gaussian s2 ~ IG(1, 0.01) (old default)": (
            "shdp-gaussian", 10, {"learn_s2": True, "s2": 1.0}, 10),
        "shdp-gaussian s2 ~ IG(1, 0.01), test burn-in 50": (
            "shdp-gaussian", 10, {"learn_s2": True, "s2": 1.0}, 50),
        "shdp-gaussian s2 fixed = var(y)": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y}, 10),
        "shdp-gaussian s2 fixed = var(y) / 4": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y / 4}, 10),
        "shdp-gaussian s2 fixed = var(y) / 8": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y / 8}, 10),
        "shdp-gaussian s2 fixed = var(y) / 4, 30 initial topics": (
            "shdp-gaussian", 30, {"learn_s2": False, "s2": var_y / 4}, 10),
        "shdp-gaussian s2 fixed = var(y) / 16": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y / 16}, 10),
        "shdp-gaussian s2 fixed = var(y) / 64": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y / 64}, 10),
        "shdp-gaussian s2 fixed = var(y) / 16, nu2 = 10": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y / 16, "nu2": 10.0}, 10),
        "shdp-gaussian s2 fixed = var(y), nu2 = 10": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y, "nu2": 10.0}, 10),
        # the eta prior variance at the default s2 (the paper chose it on validation data)
        "shdp-gaussian s2 fixed = var(y) / 4, nu2 = 1/16": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y / 4, "nu2": 1 / 16}, 10),
        "shdp-gaussian s2 fixed = var(y) / 4, nu2 = 1/4": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y / 4, "nu2": 0.25}, 10),
        "shdp-gaussian s2 fixed = var(y) / 4, nu2 = 4": (
            "shdp-gaussian", 10, {"learn_s2": False, "s2": var_y / 4, "nu2": 4.0}, 10),
        "shdp-regression c=256": ("shdp-regression", 10, {"c": 256.0, "eps": 1e-3}, 10),
        "shdp-regression c=16": ("shdp-regression", 10, {"c": 16.0, "eps": 1e-3}, 10),
        "shdp-regression c=8": ("shdp-regression", 10, {"c": 8.0, "eps": 1e-3}, 10),
        "shdp-regression c=64": ("shdp-regression", 10, {"c": 64.0, "eps": 1e-3}, 10),
        "shdp-regression c=4": ("shdp-regression", 10, {"c": 4.0, "eps": 1e-3}, 10),
        "shdp-regression default (c = 3 per sd)": ("shdp-regression", 10, {}, 10),
        "shdp-regression c=8 eps=0.03": ("shdp-regression", 10, {"c": 8.0, "eps": 0.03}, 10),
        "shdp-regression c=8 eps=0.1": ("shdp-regression", 10, {"c": 8.0, "eps": 0.1}, 10),
        "shdp-regression c=1 (old default)": ("shdp-regression", 10,
                                                  {"c": 1.0, "eps": 1e-3}, 10),
    }


def one(label, spec, fit_part, valid, args) -> dict:
    name, k, options, burnin = spec
    run = fit_and_predict(REGISTRY[name], k, fit_part, valid, options=options, progress=False,
                          fit_kwargs=dict(num_chains=args.chains, num_iterations=args.iterations,
                                          seed=args.seed),
                          predict_kwargs=dict(num_burnin=burnin, num_draws=5, seed=args.seed,
                                              keep_zbar=name != "hdp-glm"))
    draws = run.result.draws
    var_y = float(np.var(fit_part.labels))
    record = {"label": label, "method": name, "topics": k, "options": options,
              "test_burnin": burnin, "iterations": args.iterations, "chains": args.chains,
              "seed": args.seed, "load_average": os.getloadavg()[0],
              "valid_r2": float(run.prediction.metrics(valid.labels, "ma")["predictive_r2"]),
              "train_seconds": run.train_seconds}
    if "train_mse" in draws:
        record["train_r2_last"] = float(1 - np.mean(np.asarray(draws["train_mse"])[:, -1])
                                        / var_y)
    if "num_topics" in draws:
        record["topics_end"] = np.asarray(draws["num_topics"])[:, -1].tolist()
    if "augmentation_mean" in draws and name.endswith("gaussian"):
        record["s2_end"] = np.asarray(draws["augmentation_mean"])[:, -1].ravel().tolist()
    if "eta_norm" in draws:
        record["eta_norm_end"] = np.asarray(draws["eta_norm"])[:, -1].tolist()
    zbar = run.prediction.zbar
    if zbar is not None and name.startswith("shdp"):
        record["born_share"] = float(1 - np.mean(zbar.sum(-1)))
    log(f"{label:50s} valid R^2 {record['valid_r2']:.4f}  "
        + "  ".join(f"{key} {record[key]}" for key in ("train_r2_last", "topics_end", "s2_end",
                                                        "born_share") if key in record)
        + f"  ({run.train_seconds:.0f} s)")
    return record


FINDINGS = """## What the measurements say

1. The prediction path is not the problem: the test chains put at most 0.1% of the validation
   tokens on topics born in the test chain (whose coefficient is ignored), and 50 test burn-in
   sweeps instead of 10 change R^2 by -0.004. eta is paired with the training slots
   (``models.supervised.scores`` multiplies eta [T, Kcap] by zbar over the same slots).
2. The Gaussian response was too weak, not overfitting: with s2 ~ IG(1, 0.01) drawn from a
   start of 1 (9 x var(y)), after 100 iterations s2 is still 0.079 and the in-sample R^2 only
   0.28, for the sHDP and for sLDA alike (validation 0.20 both). Fixing s2 at var(y) / 4 lifts
   both: sHDP 0.20 -> 0.29, sLDA K = 30 0.20 -> 0.32. Smaller fixed s2 (var/8, /16, /64) gives
   0.27-0.31, within the one-chain noise, with in-sample R^2 up to 0.98 and more topics (so
   slower sweeps); var(y) / 4 is the default now (``models.shdp.S2_FRACTION``). The eta prior
   variance matters less and larger is worse (nu2 = 10: -0.03 to -0.04).
3. The sHDP is still growing topics at 100 iterations: 47 occupied at 100, 113 at 200
   iterations (validation 0.29 -> 0.33; sLDA K = 30: 0.32 -> 0.34), and starting from 30
   topics instead of 10 gives 0.33 at 100 iterations. Iterations matter.
4. The epsilon-insensitive sHDP with MedLDA's c = 256 overfits completely: in-sample R^2 1.000
   over 102 topics, validation 0.02. MedLDA's c was tuned at K = 10-50, where the topics limit
   how far the training responses can be fit; with topics born on demand the same c fits
   noise. c = 4 and 16 give 0.28 (c = 1, the old default: 0.15; c = 64: 0.16). MedLDA K = 20
   with c = 256 reaches 0.33 on this split, so the 0.50 target is out of reach of every setting
   tried here.
5. The eta prior variance at the default s2 (var(y) / 4), 400 iterations (the sHDP paper
   chose it on validation data): nu2 = 1/16, 1/4, 1 (the default), 4 give 0.334, 0.305,
   0.361, 0.337. No value beats the default by more than the one-chain noise; 1 is kept.
6. The epsilon-insensitive sHDP's c at 1,000 iterations (2 chains, three runs side by side,
   25 min each): c = 4, 8, 16 give 0.367, 0.406, 0.390 (in-sample R^2 0.68, 0.91, 0.98). At
   100-200 iterations c = 4 and 16 had tied (0.28); run longer, the larger c fit the training
   ratings more closely and c = 8 predicts best. The five-fold study at 2,000 iterations uses
   c = 8 (``shdp_movie_scale.py --shdp-c 8``). c = 8 is 2.7 per standard deviation of these
   responses (sd 0.336); ``shdp_regression``'s default is now 3 per sd (``models.shdp.C_PER_SD``,
   8.9 here) instead of a fixed c = 1. Run the same way, that default gives 0.410 (in-sample
   0.93).
7. The insensitivity eps at c = 8 (2 chains x 1,000 iterations, two runs side by side beside a
   third process, 21-22 min each): eps = 0.001 (the default), 0.03, 0.1 give 0.406, 0.417,
   0.398 (in-sample R^2 0.92, 0.91, 0.87; topics at the end about 1,000 per chain either
   way). The spread is within what a second seed could move; eps = 0.001 is kept, and eps is
   not the lever that would take the five folds' 0.461 to 0.50.
"""


def markdown(records, split) -> str:
    loads = [r["load_average"] for r in records if r.get("load_average") is not None]
    lines = ["# sHDP on movie-scale: diagnosis on a validation split of fold 0", "",
             "Commands: `python studies/shdp_movie_scale_diagnose.py [--iterations 200] --only "
             "LABEL ...`, a few candidates per invocation (each run adds to the .json).", "",
             f"Data: {split}. Each candidate: the chains x iterations given (half burn-in, 5 "
             "snapshots), seed 0; test chains 5 kept sweeps after the burn-in given; strategy "
             "ma. var(y): the fit part's response variance (0.1127). One chain per candidate: "
             "differences below about 0.03 are within what a second seed could move. Load: "
             + (f"the 1-minute load average at the end of the fits recorded ranged "
                f"{min(loads):.1f}-{max(loads):.1f} on the 2 cores" if loads else "")
             + (" (fits without a record: " if loads else "")
             + "3.7-9.9 by `uptime` while they ran" + (")" if loads else "")
             + "; several candidates ran at once beside other sessions, so the train seconds "
             "compare only roughly.", "",
             "| candidate | chains x iterations | test burn-in | valid R^2 | in-sample R^2 "
             "(last draw) | occupied topics (end) | s2 (end) | validation tokens on test-born "
             "topics | train s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(records, key=lambda r: (r["method"], r["iterations"])):
        def cell(key, fmt):
            v = r.get(key)
            if v is None:
                return ""
            return ", ".join(fmt.format(x) for x in v) if isinstance(v, list) else fmt.format(v)
        lines.append(f"| {r['label']} | {r['chains']} x {r['iterations']} | "
                     f"{r['test_burnin']} | {r['valid_r2']:.4f} | "
                     f"{cell('train_r2_last', '{:.3f}')}"
                     f" | {cell('topics_end', '{}')} | {cell('s2_end', '{:.4f}')} | "
                     f"{cell('born_share', '{:.3f}')} | {r['train_seconds']:.0f} |")
    return "\n".join(lines) + "\n\n" + FINDINGS


def main():
    p = parser(__doc__, topics=10, chains=1)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", nargs="+", default=None, help="candidate labels to run")
    p.add_argument("--replot", action="store_true", help="only rewrite the .md from the .json")
    args = p.parse_args()
    ensure_dir(args.out)
    stem = Path(args.out) / "shdp_movie_scale_diagnose"
    if args.replot:
        saved = json.loads(stem.with_suffix(".json").read_text())
        stem.with_suffix(".md").write_text(markdown(saved["records"], saved["split"]))
        return
    folds = load_folds("movie-scale", num_folds=5, seed=0, data_dir=args.data_dir,
                       preprocessing="shdp")
    fit_part, valid, dropped = folds[0].train.train_test_split(0.25, seed=1)
    split = (f"fold 0's {folds[0].train.num_docs} training documents split 75/25 (seed 1): fit "
             f"on {fit_part.num_docs} documents ({fit_part.num_tokens} tokens), validate on "
             f"{valid.num_docs} ({dropped} tokens of words unseen in the fit part dropped)")
    log(split)
    records = []
    if stem.with_suffix(".json").exists():
        records = json.loads(stem.with_suffix(".json").read_text())["records"]
    have = {(r["label"], r["iterations"], r["chains"], r["seed"]) for r in records}
    for label, spec in candidates(float(np.var(fit_part.labels))).items():
        if (label, args.iterations, args.chains, args.seed) in have or (
                args.only and label not in args.only):
            continue
        tic = time.perf_counter()
        records.append(one(label, spec, fit_part, valid, args))
        records[-1]["wall_seconds"] = time.perf_counter() - tic
        write_json(stem.with_suffix(".json"), {"split": split, "records": records})
    text = markdown(records, split)
    stem.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
