"""``topiczoo compare``: a grid of runs (models x K x seeds x data sets), resumable, tabulated.

Every cell of the grid is one :func:`topiczoo.run.fit_and_predict` of a registry entry on a
named data set's train/test split (the same split for every model and seed: the data set's
default, split seed 0), with the grid's run settings. The MCMC seed is the cell's seed.

**Samplers.** A model runs the exact sampler unless the grid's ``samplers`` table names
another for it (``--sampler medlda:light``). An entry of the model list may name its sampler
itself, ``MODEL@SAMPLER`` (``medlda@light``, ``medlda@light:mh_steps=4``), so that one grid
compares samplers of one model: ``models = ["medlda", "medlda@light"]`` gives two rows. The
model's options (``[options.medlda]``) apply to all its samplers.

**Resumable.** Each finished cell is written to ``OUT/cells/DATA__MODEL__K<K>__seed<S>.json``
(MODEL: the model list's entry, the ``:`` of a sampler's options written ``+``; atomically: a
cell interrupted halfway leaves no file). A rerun with the same settings skips the cells whose
file exists and says how many it skipped; a cell file of other settings (iterations, chains,
options, sampler, ...) is an error, not silently reused.

**Where the cells run** (:mod:`topiczoo.cluster`): ``compare(..., client=)`` submits them to
a Dask client, ``scheduler=`` to the cluster at that address, ``workers=N`` to a local cluster
of N one-thread worker processes (the command line's default: one per core); without them
they run in this process, one after another. A cell is a deterministic function of its
settings and seed, and the worker that runs it writes its files, so the results are those of
a serial run bit for bit (only the times differ), a worker killed mid-cell costs that cell
alone (it runs again elsewhere and is written once), and Ctrl-C leaves the finished cells for
a rerun to skip.

**The word baseline.** Unless ``Grid.baseline`` is false (``--no-baseline``), each data set
gets one more cell, ``OUT/cells/DATA__words.json``, and the table a row: a linear model on
the tf-idf of the words, its regularisation chosen by cross-validation on the training set
(:mod:`topiczoo.word_baseline`), so that the table says how far the topic models are from it.

**Outputs** (in ``OUT``): ``table.csv`` and ``table.md``, one row per (data set, model, K):
the sampler the cells ran, the task metric's mean and sd over the seeds (test accuracy, or
predictive R^2; strategy ``--average``), training seconds and token-iterations per second
(medians over seeds), for probabilistic responses the held-out log predictive density per test
document, and for the nonparametric models the occupied topics at the end of the run; the plots
``metric_vs_topics.png`` and ``metric_vs_time.png``; ``grid.json`` (the settings).

**Nonparametric models** (sHDP, HDP, HDP + GLM: the models whose sampler monitors
``num_topics``, :func:`nonparametric`) take K as their *initial* number of topics; their chains
add and drop topics. Each of their cells records ``occupied_topics`` (:func:`occupied_topics`:
the ``num_topics`` monitor's last draw per chain, its mean and range), the table shows it
beside K, and ``metric_vs_topics.png`` places them at their occupied topics (mean over chains
and seeds, bars: range), with their own marker, rather than at the initial K.

**Log predictive densities.** For the logistic response (gSLDA: p(y = 1) = sigmoid(omega)) and
the Gaussian response (sLDA, sHDP: y ~ N(omega, s2), s2 of the snapshot's iteration), every
test document d gets log p(y_d | sample s) for each sample s = (chain, snapshot, test draw);
``OUT/trees/DATA__MODEL__K<K>.nc`` stores them as the ``log_likelihood`` group (variable
``y``, dims chain x draw x document; the seeds' chains one after the other, draw = snapshot x
test draw) of an ArviZ DataTree, beside a ``posterior`` group with the per-sample mean test
score. The table's ``test_lpd`` is the held-out log predictive density, the mean over test
documents of elpd_d = log mean_s p(y_d | s). ``compare.md`` ranks the models of each data set
with ``arviz.compare`` (paired differences, their standard errors, stacking weights) over these
held-out elpd_d (:func:`held_out_elpd`), when two or more have a log-likelihood. Do not run
``arviz.loo`` on the trees: PSIS-LOO estimates leave-one-out density from a posterior that
contained each point by reweighting its draws by 1 / p(y_d | s); for documents that were never
in the training posterior that gives the harmonic mean of p(y_d | s), which is biased low and
does not rank models by their held-out density. With c != 1 the logistic model is trained on a
pseudo-likelihood, logistic^c; its held-out density is still that of sigmoid(omega).

**Hinge and epsilon-insensitive losses** (Gibbs MedLDA, its regression, the sHDP hinge) and the
two-step baselines (LDA + SVM, HDP + ridge / logistic) have no likelihood of the response: the
hinge "likelihood" exp(-2c max(0, ell - y omega)) is a pseudo-likelihood, not a density of y,
so a log predictive density of it would not be comparable. Those models are compared on the
task metric only.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from topiczoo.cluster import open_client, run_cells, share, write_atomic
from topiczoo.datasets import check_name, load_dataset
from topiczoo.defaults import NUM_CHAINS, NUM_ITERATIONS
from topiczoo.models.registry import REGISTRY
from topiczoo.predict import STRATEGIES
from topiczoo.run import fit_and_predict
from topiczoo.word_baseline import word_baseline

#: Responses with a proper predictive density of y (see the module docstring).
PROBABILISTIC = ("logistic", "gaussian")

#: What a two-step baseline fits on the topic proportions (its cells record no response).
TWO_STEP_RESPONSE = {"lda-svm": "svm", "hdp-glm": "glm"}

#: The ``response`` of a table's word-baseline row (:mod:`topiczoo.word_baseline`).
WORDS = "words"

#: The task metric of the table, by data kind (a key of ``Task.metrics``).
METRIC = {"binary": "accuracy", "multiclass": "accuracy", "multilabel": "f1",
          "regression": "predictive_r2"}


@dataclass
class Grid:
    """A comparison grid and its run settings.

    data, models, topics, seeds: the grid's axes (data set names of
    :data:`topiczoo.datasets.DATASETS`, registry model names, each optionally with its
    sampler as ``MODEL@SAMPLER`` (e.g. ``"medlda@light"``), K values, MCMC seeds);
    options: ``{model: {option: value}}`` registry models' options, for all their samplers
    (e.g. ``{"gslda": {"c": 25}}``); samplers: ``{model: sampler}`` for the entries of
    ``models`` without ``@`` (``fit``'s sampler, e.g. ``{"medlda": "light"}``; default
    ``"exact"``); iterations, chains, burnin (None: half), snapshots, test_burnin, test_draws:
    the run settings of every cell; average: the averaging strategy of the metric; baseline:
    whether the table has the word baseline's row per data set
    (:mod:`topiczoo.word_baseline`).
    """
    data: list
    models: list
    topics: list
    seeds: list = field(default_factory=lambda: [0])
    options: dict = field(default_factory=dict)
    samplers: dict = field(default_factory=dict)
    iterations: int = NUM_ITERATIONS
    chains: int = NUM_CHAINS
    burnin: int | None = None
    snapshots: int = 5
    test_burnin: int = 20
    test_draws: int = 10
    average: str = "ma"
    baseline: bool = True

    def check(self) -> None:
        """Clear errors for an unknown data set, model or option, a model that cannot take a
        data set's labels, and settings out of range (before anything runs)."""
        for axis, kind in (("data", str), ("models", str), ("topics", int), ("seeds", int)):
            values = getattr(self, axis)
            if not isinstance(values, list) or not values:
                raise ValueError(f"the grid's {axis} must be a non-empty list, got {values!r}")
            bad = [v for v in values if isinstance(v, bool) or not isinstance(v, kind)]
            if bad:
                what = "names" if kind is str else "integers"
                raise ValueError(f"the grid's {axis} must be {what}, got {bad[0]!r}")
            if len(set(values)) != len(values):
                raise ValueError(f"the grid's {axis} repeat a value: {values}")
        for name in self.data:
            check_name(name)
        for label in self.models:
            name, sampler = split_model(label)
            if name not in REGISTRY:
                hint = (f" (a sampler is given as MODEL{SAMPLER_SEP}SAMPLER, e.g. "
                        f"medlda{SAMPLER_SEP}light or "
                        f"medlda{SAMPLER_SEP}light:mh_steps=4,proposals=cycle)"
                        if "=" in name or ":" in name else "")
                raise ValueError(f"unknown model {name!r}{hint}; known: {', '.join(REGISTRY)}")
            if sampler is not None and not sampler.strip():
                raise ValueError(f"model {label!r}: no sampler after {SAMPLER_SEP!r} (e.g. "
                                 f"{name}{SAMPLER_SEP}light)")
            if not REGISTRY[name].tasks:
                raise ValueError(f"{name} is unsupervised: it has no test metric to compare")
        for key, what in (("options", "a table of tables, [options.MODEL]"),
                          ("samplers", "a table of sampler names, [samplers]")):
            if not isinstance(getattr(self, key), dict):
                raise ValueError(f"the grid's {key} must be {what}, got {getattr(self, key)!r}")
        names = [self.model_name(m) for m in self.models]
        for name, opts in self.options.items():
            if not isinstance(opts, dict):
                raise ValueError(f"options for {name!r} must be a table of option = value "
                                 f"([options.{name}]), got {opts!r}")
            if SAMPLER_SEP in name:
                raise ValueError(f"options for {name!r}: options belong to a registry model and "
                                 f"apply to all its samplers; give them for "
                                 f"{split_model(name)[0]!r}")
            if name not in names:
                raise ValueError(f"options for {name!r}, which is not among the grid's models")
            for k in self.topics:
                REGISTRY[name].build(k, **opts)  # unknown options, bad values
        for name, sampler in self.samplers.items():
            if not isinstance(sampler, str):
                raise ValueError(f"the sampler for {name!r} must be a name such as \"light\", "
                                 f"got {sampler!r}")
            if name not in self.models:
                named = [m for m in self.models if self.model_name(m) == name]
                raise ValueError(f"a sampler for {name!r}, which is not among the grid's models"
                                 + (f" (its entries {', '.join(named)} name their sampler "
                                    f"after {SAMPLER_SEP!r})" if named else ""))
        seen = {}
        for label in self.models:  # unknown samplers, bad options, a sampler the model lacks
            name = self.model_name(label)
            canonical = REGISTRY[name].check_sampler(self.topics[0], self.sampler(label),
                                                     **self.options.get(name, {}))
            if (name, canonical) in seen:
                raise ValueError(f"the grid's models {seen[name, canonical]!r} and {label!r} are "
                                 f"one model with one sampler ({canonical})")
            seen[name, canonical] = label
        for label, values, low in (("topics", self.topics, 1), ("seeds", self.seeds, 0)):
            for v in values:
                if isinstance(v, bool) or not isinstance(v, int) or v < low:
                    raise ValueError(f"{label} must be integers >= {low}, got {v!r}")
        for name, low in (("iterations", 1), ("chains", 1), ("snapshots", 1),
                          ("test_burnin", 0), ("test_draws", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        if self.burnin is not None and (isinstance(self.burnin, bool)
                                        or not isinstance(self.burnin, int)):
            raise ValueError(f"burnin must be an integer (or absent: half), got {self.burnin!r}")
        if self.burnin is not None and not 0 <= self.burnin < self.iterations:
            raise ValueError(f"burnin must lie in [0, iterations={self.iterations}), got "
                             f"{self.burnin}")
        if self.average not in STRATEGIES:
            raise ValueError(f"average must be one of {STRATEGIES}, got {self.average!r}")
        if not isinstance(self.baseline, bool):
            raise ValueError(f"baseline must be true or false, got {self.baseline!r}")

    def model_name(self, model: str) -> str:
        """The registry name of an entry of ``models`` (``"medlda@light"`` -> ``"medlda"``)."""
        return split_model(model)[0]

    def sampler(self, model: str) -> str:
        """The sampler spec an entry of ``models`` runs: the one after ``@``, else the
        ``samplers`` table's, else ``"exact"``."""
        name, sampler = split_model(model)
        return sampler if sampler is not None else self.samplers.get(model, "exact")

    def settings(self, model: str) -> dict:
        """What a cell's result depends on besides its coordinates (stored in the cell), in
        a normal form (:func:`normal_settings`); ``model``: an entry of ``models``."""
        name = self.model_name(model)
        settings = {"options": self.options.get(name, {}), "iterations": self.iterations,
                    "chains": self.chains, "burnin": self.burnin, "snapshots": self.snapshots,
                    "test_burnin": self.test_burnin, "test_draws": self.test_draws,
                    "sampler": self.sampler(model)}
        return normal_settings(name, settings)

    def options_in_force(self, model: str) -> dict:
        """Every option of an entry of ``models`` as its cells run it: the registry's defaults
        updated by the grid's (stored in each cell, so that a default changed between versions
        is not mistaken for the same settings)."""
        name = self.model_name(model)
        return {**REGISTRY[name].options(), **self.options.get(name, {})}

    def cells(self) -> list:
        """The cells ``(data, model, K, seed)`` in run order (seeds innermost)."""
        return [(d, m, k, s) for d in self.data for m in self.models for k in self.topics
                for s in self.seeds]


#: Separates a model from its sampler in a grid's model list: ``medlda@light``.
SAMPLER_SEP = "@"


def split_model(model: str) -> tuple:
    """An entry of a grid's model list as (registry name, sampler spec or None):
    ``"medlda@light:mh_steps=4"`` -> ``("medlda", "light:mh_steps=4")``, ``"medlda"`` ->
    ``("medlda", None)``."""
    name, sep, sampler = model.partition(SAMPLER_SEP)
    return name, (sampler if sep else None)


@functools.lru_cache(maxsize=None)
def nonparametric(model: str) -> bool:
    """Whether a registry model (or a ``MODEL@SAMPLER`` entry) is nonparametric: its number of
    topics changes during the run, K being the initial one. Such a model's sampler monitors
    ``num_topics`` (the occupied topics; sHDP, HDP, HDP + GLM)."""
    name = split_model(model)[0]
    if name not in REGISTRY:
        return False
    built = REGISTRY[name].build(1)
    return "num_topics" in built.sampler(built.samplers[0], 1).label_invariant


def occupied_topics(result) -> dict | None:
    """The occupied topics at the end of a nonparametric run: the ``num_topics`` monitor's
    last draw (``FitResult.draws["num_topics"]``, int [C, S]) of every chain. Returns
    ``{"per_chain": [C] ints, "mean": float (over chains), "min": int, "max": int (range over
    chains), "iteration": int (the draw's iteration)}``; None without that monitor (the
    parametric models) or without a fit (one-vs-all)."""
    draws = getattr(result, "draws", None) or {}
    if "num_topics" not in draws or np.asarray(draws["num_topics"]).size == 0:
        return None
    last = np.asarray(draws["num_topics"]).reshape(result.num_chains, -1)[:, -1]
    return {"per_chain": [int(v) for v in last], "mean": float(last.mean()),
            "min": int(last.min()), "max": int(last.max()),
            "iteration": int(np.asarray(result.draw_iterations)[-1])}


def normal_settings(model: str, settings: dict) -> dict:
    """A cell's settings with what equals the default left out: options at the model's
    default value, and the sampler "exact" (absent for the default, so that cells of older
    versions, and of grids that spell a default out, stay valid)."""
    defaults = REGISTRY[model].options() if model in REGISTRY else {}
    out = dict(settings)
    out["options"] = {k: v for k, v in (settings.get("options") or {}).items()
                      if not (k in defaults and _same(defaults[k], v))}
    if out.get("sampler") == "exact":
        del out["sampler"]
    return out


def _same(a, b) -> bool:
    """Equal values of one option (1 and 1.0 alike, but not True and 1)."""
    return type(a) is type(b) and a == b or (
        not isinstance(a, bool) and not isinstance(b, bool)
        and isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b)


def load_grid(path, overrides: dict | None = None) -> Grid:
    """A :class:`Grid` from a TOML file: top-level keys ``data``, ``models``, ``topics``,
    ``seeds`` (lists) and the run settings, a table ``[options.MODEL]`` per model and a table
    ``[samplers]``; ``overrides`` (``{key: value}``, e.g. the command line's) replace the
    file's, and may supply the axes the file leaves out. E.g.::

        data = ["20news-binary"]
        models = ["gslda", "medlda", "lda-svm"]
        topics = [10, 20, 50]
        seeds = [0, 1, 2]
        iterations = 100
        [options.gslda]
        c = 25
        [samplers]
        medlda = "light"
    """
    if not Path(path).is_file():
        raise FileNotFoundError(f"grid file {str(path)!r} not found")
    with open(path, "rb") as f:
        try:
            raw = tomllib.load(f)
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"{path}: not valid TOML ({err})") from None
    known = set(Grid.__dataclass_fields__)
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown}; known: {sorted(known)}")
    raw.update(overrides or {})
    for key in ("data", "models", "topics"):
        if key not in raw:
            raise ValueError(f"{path}: the grid needs {key!r} (in the file or as --{key})")
    return Grid(**raw)


def cell_name(data: str, model: str, topics: int, seed: int) -> str:
    """``DATA__MODEL__K<K>__seed<S>``; MODEL an entry of the grid's model list, with the ``:``
    of a sampler spec written ``+`` (a ``:`` is no file name character on every system)."""
    return f"{data}__{model.replace(':', '+')}__K{topics}__seed{seed}"


def _write_atomic(path: Path, text: str) -> None:
    write_atomic(path, text)


def baseline_cell_name(data: str) -> str:
    """``DATA__words``: the file name (without ``.json``) of a data set's word baseline."""
    return f"{data}__words"


# ---------------------------------------------------------------------------------------------
# log predictive densities


def pointwise_log_likelihood(run, test) -> np.ndarray | None:
    """log p(y_d | sample) of the test documents: float64 [C, I * J, D] (chain, snapshot x
    test draw, document), summed over tasks; None when the response has no density (hinge,
    epsilon-insensitive, two-step SVM; see the module docstring).

    Logistic: log sigmoid(S) for y = 1, log sigmoid(-S) for y = 0 (per task); for multi-class
    data (one logistic task per class) the log probability of the true class among the
    classes, log softmax(S)[y]: the independent tasks' probability of the one-hot vector of
    class c is prod_t sigmoid(+-S_t), proportional to exp(S_c), so normalised over the classes
    (only one class is true) it is the softmax. Without that normalisation the product of the
    T Bernoulli probabilities sums to well below 1 over the classes, and the density fell below
    a uniform guess's log(1 / T) while the model was better than it. Gaussian:
    log N(y - offset; S, s2) with s2 of the chain at the snapshot (kept in the snapshot: the
    drawn noise variance, a relative s2's value or the fixed one). The densities are the
    responses' own (``Response.log_density``).
    """
    prediction, result = run.prediction, run.result
    response = getattr(prediction, "response", None)
    if prediction is None or getattr(response, "name", None) not in PROBABILISTIC:
        return None
    S = np.asarray(prediction.scores, np.float64)  # [C, I, J, T, D]
    if response.name == "logistic" and prediction.task.kind == "multiclass":
        true = np.asarray(test.labels, np.int64)
        top = S.max(axis=3, keepdims=True)
        log_norm = top[:, :, :, 0] + np.log(np.exp(S - top).sum(axis=3))  # [C, I, J, D]
        ll = np.take_along_axis(S, true[None, None, None, None, :], axis=3)[:, :, :, 0] - log_norm
        return ll.reshape(ll.shape[0], -1, ll.shape[-1])
    y = np.asarray(prediction.task.to_tasks(test.labels), np.float64)  # [T, D]
    parameters = {}
    if result is not None and result.snapshots and "s2" in result.snapshots[0].arrays:
        s2 = np.stack([s.arrays["s2"] for s in result.snapshots], axis=1)  # [C, I, T]: s2 in
        # force at each snapshot (the chain's draw, a relative s2's value, or the fixed one)
        parameters["s2"] = s2[:, :, None, :, None]
    ll = response.log_density(y, S, **parameters)
    ll = ll.sum(axis=3)  # over tasks: [C, I, J, D]
    return ll.reshape(ll.shape[0], -1, ll.shape[-1])


def log_predictive_density(ll: np.ndarray) -> np.ndarray:
    """Held-out log predictive density per document: log mean_s exp(ll[c, s, d]) over all
    samples (chains and draws) -> [D]."""
    flat = ll.reshape(-1, ll.shape[-1])
    return np.logaddexp.reduce(flat, axis=0) - math.log(flat.shape[0])


def datatree(log_likelihood: np.ndarray, score_mean: np.ndarray):
    """ArviZ DataTree with ``log_likelihood`` (``y`` [chain, draw, document], held-out: see
    :func:`held_out_elpd`) and a ``posterior`` group (``test_score_mean`` [chain, draw])."""
    import arviz as az

    return az.from_dict({"posterior": {"test_score_mean": score_mean},
                         "log_likelihood": {"y": log_likelihood}},
                        dims={"y": ["document"]})


# ---------------------------------------------------------------------------------------------
# running the grid


def _run_cell(grid: Grid, dataset, model: str, topics: int, seed: int, out: Path) -> dict:
    entry = REGISTRY[grid.model_name(model)]
    train, test = dataset.train, dataset.test
    options = grid.options.get(entry.name, {})
    run = fit_and_predict(
        entry, topics, train, test, options=options,
        fit_kwargs=dict(num_chains=grid.chains, num_iterations=grid.iterations,
                        num_burnin=grid.burnin, num_snapshots=grid.snapshots, seed=seed,
                        sampler=grid.sampler(model)),
        predict_kwargs=dict(num_burnin=grid.test_burnin, num_draws=grid.test_draws, seed=seed),
        progress=False)

    by_strategy = {s: run.prediction.metrics(test.labels, s) for s in STRATEGIES}
    metrics = by_strategy[grid.average]
    response = getattr(run.prediction.response, "name", None)
    cell = {"data": dataset.name, "model": model, "topics": topics, "seed": seed,
            "settings": grid.settings(model), "options_in_force": grid.options_in_force(model),
            "hyperparameters": entry.hyperparameters(topics, train, **options),
            "task": run.prediction.task.kind,
            "response": response, "metric": METRIC[run.prediction.task.kind],
            "average": grid.average, "value": metrics[METRIC[run.prediction.task.kind]],
            "metrics": metrics, "metrics_by_strategy": by_strategy,
            "train_seconds": run.train_seconds, "predict_seconds": run.predict_seconds,
            "token_iterations_per_second": run.token_iterations_per_second,
            "train_tokens": train.num_tokens, "test_documents": test.num_docs}
    occupied = occupied_topics(run.result)
    if occupied is not None:
        cell["occupied_topics"] = occupied
    ll = pointwise_log_likelihood(run, test)
    if ll is not None:
        name = cell_name(dataset.name, model, topics, seed)
        score = np.asarray(run.prediction.scores, np.float64).mean(axis=(3, 4))
        buffer = io.BytesIO()
        np.savez(buffer, log_likelihood=ll.astype(np.float32),
                 test_score_mean=score.reshape(score.shape[0], -1))
        write_atomic(out / "cells" / f"{name}.loglik.npz", buffer.getvalue())
        cell["test_lpd"] = float(log_predictive_density(ll).mean())
    return cell


def compare(grid: Grid, out, *, data_dir=None, progress: bool = True, client=None,
            workers: int | None = 0, scheduler: str | None = None) -> list:
    """Run every cell of ``grid`` not yet finished in ``out``, then write the table, plots and
    trees (see the module docstring). Returns the table's rows (dicts).

    Where the cells run (:mod:`topiczoo.cluster`): ``client``, a ``distributed.Client``;
    else ``scheduler``, the address of a running Dask scheduler (``tcp://HOST:PORT``); else
    ``workers``: 0 (the default here) runs them in this process, one after another, N > 0 on
    a local Dask cluster of N worker processes of one thread each (None: one per core; the
    command line's default). Each worker writes its cells' files; the results are those of
    a run in this process, bit for bit (only the times differ).
    """
    grid.check()
    out = Path(out)
    (out / "cells").mkdir(parents=True, exist_ok=True)
    log = (lambda line: print(line, file=sys.stderr, flush=True)) if progress else (lambda _: 0)
    cells = grid.cells()
    # cells of older versions hold the metric of one strategy only: that of the folder's grid
    grid_file = out / "grid.json"
    previous = json.loads(grid_file.read_text()).get("average", "ma") if grid_file.exists() \
        else "ma"
    todo, done = [], 0
    for data, model, topics, seed in cells:
        path = out / "cells" / f"{cell_name(data, model, topics, seed)}.json"
        if path.exists():
            _check_stored(grid, model, path, previous)
            done += 1
        else:
            todo.append((data, model, topics, seed))
    baselines = [d for d in grid.data if grid.baseline
                 and not (out / "cells" / f"{baseline_cell_name(d)}.json").exists()]
    if done:
        log(f"[compare] skipped {done} finished cell{'s' * (done != 1)} of {len(cells)} "
            f"(found in {out / 'cells'})")
    # every data set first: a missing file or a model that cannot take a data set's labels is
    # an error before any cell runs (the data sets are kept for the cells anyway)
    datasets = {}
    for data in dict.fromkeys([d for d, _, _, _ in todo] + baselines):
        datasets[data] = load_dataset(data, data_dir=data_dir)
        kind = datasets[data].task
        for m in dict.fromkeys(grid.model_name(m) for m in grid.models):
            if kind not in REGISTRY[m].tasks:
                raise ValueError(f"{m} takes {' or '.join(REGISTRY[m].tasks)} data; {data!r} "
                                 f"is {kind}")
    _write_atomic(grid_file, json.dumps(asdict(grid), indent=2) + "\n")
    if todo or baselines:
        with open_client(client, workers=workers, scheduler=scheduler, log=log,
                         cells=len(todo) + len(baselines)) as dask:
            _run_grid(grid, out, todo, baselines, datasets, dask, log, offset=done,
                      total=len(cells) + len(baselines))
    return write_outputs(grid, out)


def _check_stored(grid: Grid, model: str, path: Path, previous: str) -> None:
    """A finished cell file's settings against the grid's: an error if they differ."""
    stored = json.loads(path.read_text())
    settings = normal_settings(grid.model_name(model), stored.get("settings") or {})
    if settings != json.loads(json.dumps(grid.settings(model))):
        raise ValueError(f"{path} holds a cell of other settings ({stored.get('settings')}"
                         f"; this grid: {grid.settings(model)}); use another output "
                         "folder or remove it")
    in_force = stored.get("options_in_force")  # absent from cells of older versions
    if in_force is not None and in_force != json.loads(
            json.dumps(grid.options_in_force(model))):
        raise ValueError(f"{path} was run with the options {in_force}; this grid runs "
                         f"{grid.options_in_force(model)} (a default changed since?): "
                         "use another output folder or remove it")
    made_with = stored.get("average", previous)
    if "metrics_by_strategy" not in stored and made_with != grid.average:
        raise ValueError(f"{path} holds the metric of strategy {made_with!r} only (a cell "
                         f"of an older version); this grid asks for {grid.average!r}: "
                         f"use --average {made_with}, or another output folder")


def _run_grid(grid, out, todo, baselines, datasets, client, log, offset, total) -> None:
    """Run the cells ``todo`` and the word baselines of the data sets ``baselines`` on
    ``client`` (None: here); each cell's file is written where it runs, and here too if the
    worker's file system is not this one's."""
    shared = {data: share(client, dataset) for data, dataset in datasets.items()}
    tasks = [(baseline_cell_name(d), (_baseline_task, shared[d], str(out))) for d in baselines]
    tasks += [(cell_name(d, m, k, s), (_cell_task, grid, shared[d], m, k, s, str(out)))
              for d, m, k, s in todo]
    finished = [offset]

    def describe(name, result):
        finished[0] += 1
        cell, _ = result
        _keep(out, name, result)
        head = f"cell {finished[0]}/{total} "
        if "topics" not in cell:
            return (head + f"{cell['model']} on {cell['data']}: {cell['metric']} "
                    f"{cell['value']:.4f}, {cell['train_seconds']:.0f} s")
        return (head + f"{cell['model']} K={cell['topics']} seed {cell['seed']} on "
                f"{cell['data']}: {cell['metric']} {cell['value']:.4f}, "
                f"{cell['train_seconds']:.0f} s")

    run_cells(_call, tasks, client=client, describe=describe, log=log, label="compare")


def _call(function, *args):
    """``function(*args)``: one task signature for the grid's cells and baselines."""
    return function(*args)


def _keep(out: Path, name: str, result) -> None:
    """Write a finished cell's files here unless its worker already did (a worker on another
    machine, without this file system)."""
    cell, loglik = result
    if loglik is not None and not (out / "cells" / f"{name}.loglik.npz").exists():
        write_atomic(out / "cells" / f"{name}.loglik.npz", loglik)
    if not (out / "cells" / f"{name}.json").exists():
        _write_atomic(out / "cells" / f"{name}.json", json.dumps(cell, indent=1) + "\n")


def _finished(out: Path, name: str):
    """``(cell, loglik bytes or None)`` of a cell file written by an earlier attempt (a worker
    that died after writing it), or None."""
    path = out / "cells" / f"{name}.json"
    if not path.exists():
        return None
    npz = out / "cells" / f"{name}.loglik.npz"
    return json.loads(path.read_text()), (npz.read_bytes() if npz.exists() else None)


def _cell_task(grid: Grid, dataset, model: str, topics: int, seed: int, out: str):
    """One cell where it runs (a worker, or this process): fit and score it, write its files
    (atomically) and return ``(cell, the bytes of its .loglik.npz or None)``."""
    out = Path(out)
    name = cell_name(dataset.name, model, topics, seed)
    found = _finished(out, name)
    if found is not None:
        return found
    (out / "cells").mkdir(parents=True, exist_ok=True)
    cell = _run_cell(grid, dataset, model, topics, seed, out)
    npz = out / "cells" / f"{name}.loglik.npz"
    loglik = npz.read_bytes() if "test_lpd" in cell else None
    _write_atomic(out / "cells" / f"{name}.json", json.dumps(cell, indent=1) + "\n")
    return cell, loglik


def _baseline_task(dataset, out: str):
    """A data set's word baseline (:func:`topiczoo.word_baseline.word_baseline`) where it
    runs: its cell file ``DATA__words.json``; returns ``(cell, None)``."""
    out = Path(out)
    name = baseline_cell_name(dataset.name)
    found = _finished(out, name)
    if found is not None:
        return found
    (out / "cells").mkdir(parents=True, exist_ok=True)
    fitted = word_baseline(dataset.train, dataset.test, dataset.task)
    metric = METRIC[dataset.task]
    cell = {"data": dataset.name, "model": fitted["model"], "task": dataset.task,
            "metric": metric, "value": fitted["metrics"][metric],
            "metrics": fitted["metrics"], "regularisation": fitted["regularisation"],
            "train_seconds": fitted["train_seconds"],
            "predict_seconds": fitted["predict_seconds"],
            "train_tokens": dataset.train.num_tokens,
            "test_documents": dataset.test.num_docs}
    _write_atomic(out / "cells" / f"{name}.json", json.dumps(cell, indent=1) + "\n")
    return cell, None


# ---------------------------------------------------------------------------------------------
# the table, plots and trees


def _mean_sd(values) -> tuple:
    """Mean and sample sd (ddof = 1; None for one value: no spread is measured)."""
    values = np.asarray(values, np.float64)
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else None


def read_cells(grid: Grid, out) -> dict:
    """The finished cells of ``grid`` in ``out``: ``{(data, model, K, seed): cell dict}``."""
    found = {}
    for key in grid.cells():
        path = Path(out) / "cells" / f"{cell_name(*key)}.json"
        if path.exists():
            cell = json.loads(path.read_text())
            by_strategy = cell.get("metrics_by_strategy")
            if by_strategy:  # the grid's strategy, whichever the cell was run with
                cell.update(average=grid.average, metrics=by_strategy[grid.average],
                            value=by_strategy[grid.average][cell["metric"]])
            found[key] = cell
    return found


def read_baselines(grid: Grid, out) -> dict:
    """The finished word baselines of ``grid``'s data sets in ``out``: ``{data: cell dict}``
    (none when ``grid.baseline`` is false)."""
    found = {}
    for data in grid.data if grid.baseline else ():
        path = Path(out) / "cells" / f"{baseline_cell_name(data)}.json"
        if path.exists():
            found[data] = json.loads(path.read_text())
    return found


COLUMNS = ("data", "model", "sampler", "topics", "occupied_topics", "occupied_topics_min",
           "occupied_topics_max", "seeds", "metric", "mean", "sd", "train_seconds",
           "token_iterations_per_second", "test_lpd", "test_lpd_sd", "response")


def table_rows(grid: Grid, cells: dict, baselines: dict | None = None) -> list:
    """One row per (data, model, K) with all its seeds finished: the columns of :data:`COLUMNS`
    (``test_lpd`` None for responses without a density) and ``hyperparameters`` (the first seed's
    cell's: the model's settings and the value in force of a relative one,
    :meth:`ModelEntry.hyperparameters`; None for cells of older versions; not a column of
    table.csv). ``model`` is the grid's entry (``medlda@light`` included), ``sampler`` the sampler
    spec its cells ran (``exact`` when they name none), ``topics`` the grid's K (the initial number
    of topics of a nonparametric model). The metric and ``test_lpd`` are mean and sd over the seeds
    (sd None with one seed); ``train_seconds`` (seconds) and ``token_iterations_per_second`` the
    median over the seeds, since the first seed of a model and K in a process includes JAX's
    compilation. ``occupied_topics``: for a nonparametric model, the number of occupied topics at
    the end of the run, the mean over seeds of each cell's mean over chains; ``occupied_topics_min``
    / ``_max``: the range over every chain of every seed; all three None for the parametric models,
    and for cells written before they were recorded.

    ``baselines`` (``{data: cell}``, :func:`read_baselines`) adds each data set's word baseline
    as its last row: ``model`` the baseline's name (``words: tf-idf + logistic``), ``response``
    ``"words"``, ``sampler`` empty, ``topics``, ``sd``, the throughput and the densities None,
    ``hyperparameters`` the regularisation its cross-validation chose."""
    baselines = baselines or {}
    rows = []
    for data in grid.data:
        for model in grid.models:
            for k in grid.topics:
                group = [cells.get((data, model, k, s)) for s in grid.seeds]
                if any(c is None for c in group):
                    continue
                mean, sd = _mean_sd([c["value"] for c in group])
                lpd = [c["test_lpd"] for c in group if "test_lpd" in c]
                lpd_mean, lpd_sd = _mean_sd(lpd) if lpd else (None, None)
                occupied = [c.get("occupied_topics") for c in group]
                if all(occupied):
                    occupied_topics = (float(np.mean([o["mean"] for o in occupied])),
                                       min(o["min"] for o in occupied),
                                       max(o["max"] for o in occupied))
                else:
                    occupied_topics = (None, None, None)
                sampler = (group[0].get("settings") or {}).get("sampler", "exact")
                rows.append({
                    "data": data, "model": model, "sampler": sampler, "topics": k,
                    "occupied_topics": occupied_topics[0],
                    "occupied_topics_min": occupied_topics[1],
                    "occupied_topics_max": occupied_topics[2], "seeds": len(group),
                    "metric": group[0]["metric"], "mean": mean, "sd": sd,
                    "train_seconds": float(np.median([c["train_seconds"] for c in group])),
                    "token_iterations_per_second": float(np.median(
                        [c["token_iterations_per_second"] for c in group])),
                    "test_lpd": lpd_mean, "test_lpd_sd": lpd_sd,
                    "response": group[0]["response"]
                    or TWO_STEP_RESPONSE.get(grid.model_name(model), "none"),
                    "hyperparameters": group[0].get("hyperparameters")})
        if data in baselines:
            cell = baselines[data]
            value = cell["metrics"][METRIC[cell["task"]]] if "metrics" in cell else cell["value"]
            rows.append({"data": data, "model": cell["model"], "sampler": "", "topics": None,
                         "occupied_topics": None, "occupied_topics_min": None,
                         "occupied_topics_max": None, "seeds": 0, "metric": cell["metric"],
                         "mean": value, "sd": None, "train_seconds": cell["train_seconds"],
                         "token_iterations_per_second": None, "test_lpd": None,
                         "test_lpd_sd": None, "response": WORDS,
                         "hyperparameters": cell.get("regularisation")})
    return rows


def _sd(value) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _occupied(row: dict) -> str:
    """The occupied-topics cell of ``row``: "mean (min-max)", "" for a parametric model, "not
    recorded" for a nonparametric one whose cells predate the record."""
    if row["occupied_topics"] is not None:
        return (f"{row['occupied_topics']:.1f} ({row['occupied_topics_min']}-"
                f"{row['occupied_topics_max']})")
    return "not recorded" if nonparametric(row["model"]) else ""


def _regularisation(chosen: dict | None) -> str:
    """``C = 2.78`` / ``C = 0.36-21.5 over the classes`` / ``alpha = 1``."""
    if not chosen:
        return "not recorded"
    if "alpha" in chosen:
        return f"alpha = {chosen['alpha']:.3g}"
    values = chosen["C"]
    if len(values) == 1:
        return f"C = {values[0]:.3g}"
    return f"C = {min(values):.3g}-{max(values):.3g} over the {len(values)} classes"


def chains_text(n: int) -> str:
    """'1 chain', '4 chains'."""
    return f"{n} chain{'s' if n != 1 else ''}"


def markdown_table(rows: list, grid: Grid) -> str:
    """The table as markdown, with notes on the nonparametric models' K and on the responses
    without a density."""
    lines = [f"{chains_text(grid.chains)} x {grid.iterations} iterations per cell, test chains "
             f"{grid.test_burnin} + {grid.test_draws} sweeps, strategy {grid.average}; "
             f"metric and held-out log predictive density per test document (lpd): mean (sd) "
             f"over seeds {grid.seeds}; training seconds and throughput: median over the seeds "
             "(the first seed of a model and K includes compilation).", "",
             "| data | model | sampler | K | occupied topics | metric | mean (sd) | train s | "
             "M token-it/s | test lpd / doc (sd) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["response"] == WORDS:
            lines.append(f"| {r['data']} | {r['model']} |  |  |  | {r['metric']} | "
                         f"{r['mean']:.4f} | {r['train_seconds']:.1f} |  | n/a: not a topic "
                         "model |")
            continue
        lpd = (f"{r['test_lpd']:.4f} ({_sd(r['test_lpd_sd'])})" if r["test_lpd"] is not None
               else "n/a: no likelihood of y" if r["response"] in TWO_STEP_RESPONSE.values()
               else f"n/a: {r['response']} pseudo-likelihood")
        lines.append(f"| {r['data']} | {r['model']} | {r['sampler']} | {r['topics']} | "
                     f"{_occupied(r)} | {r['metric']} | "
                     f"{r['mean']:.4f} ({_sd(r['sd'])}) | {r['train_seconds']:.1f} | "
                     f"{r['token_iterations_per_second'] / 1e6:.2f} | {lpd} |")
    growing = list(dict.fromkeys(r["model"] for r in rows if nonparametric(r["model"])))
    if growing:
        lines += ["", f"{', '.join(growing)}: nonparametric, K is the initial number of "
                  "topics; occupied topics: those in use at the end of the run (the last draw "
                  "of the num_topics monitor), mean over chains and seeds (range over them)."]
    settings = {}  # (data, model) -> the facts its rows share (alpha per topic varies with K)
    for r in rows:
        if r.get("hyperparameters") and r["response"] != WORDS:
            shared = settings.setdefault((r["data"], r["model"]), dict(r["hyperparameters"]))
            for key in [k for k, v in shared.items() if r["hyperparameters"].get(k) != v]:
                del shared[key]
    if settings:  # what ran, so that models compared at other settings say so
        lines += ["", "Settings of each model as run (a setting relative to the responses also "
                  "gives its value on the data, in force):", ""]
        lines += [f"- {data}, {model}: "
                  + ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                              for k, v in facts.items())
                  for (data, model), facts in settings.items()]
    words = [r for r in rows if r["response"] == WORDS]
    if words:
        lines += ["", "words: the word baseline, not a topic model: a linear model on the "
                  "tf-idf of the training documents' words (topiczoo.word_baseline), its "
                  "regularisation chosen by cross-validation on the training set ("
                  + "; ".join(f"{r['data']}: " + _regularisation(r["hyperparameters"])
                              for r in words) + "); deterministic, so no seeds and no sd."]
    pseudo = sorted({r["model"] for r in rows if r["test_lpd"] is None
                     and r["response"] != WORDS})
    if pseudo:
        lines += ["", f"{', '.join(pseudo)}: the hinge / epsilon-insensitive losses are "
                  "pseudo-likelihoods (exp(-2c max(0, ell - y omega)) is no density of y) and "
                  "the two-step baselines (LDA + SVM, HDP + ridge / logistic) fit no "
                  "likelihood of y with the topics, so they have no log predictive density; "
                  "compare them on the task metric."]
    return "\n".join(lines) + "\n"


def plot_series(rows: list, xkey: str) -> tuple:
    """What a plot of the metric draws for ``rows`` (table rows of one data set) against
    ``xkey``: ``"topics"`` (metric_vs_topics.png) or ``"train_seconds"`` (metric_vs_time.png).

    Returns ``(series, left_out)``. series: one dict per model, in the rows' order, with
    ``model``, ``nonparametric`` (bool), ``x`` (K, occupied topics or seconds), ``y`` (the
    metric's means over seeds), ``yerr`` (its sd over seeds, None with one seed), ``xerr``
    (``[below, above]`` lists or None), ``notes`` (one annotation per point, or None),
    ``label`` (the legend's). Against K a nonparametric model is placed at its occupied topics
    at the end of the run (mean over chains and seeds; xerr: their range) and annotated with
    its initial K, since its initial K is not its number of topics; one whose cells did not
    record them is not placed, and ``left_out`` names it. A label names a sampler other than
    exact (``medlda [light]``)."""
    series, left_out = [], []
    rows = [r for r in rows if r["response"] != WORDS]  # the word baseline: a line, _plots
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        growing = nonparametric(model)
        if xkey == "topics" and growing:
            if any(r["occupied_topics"] is None for r in mine):
                left_out.append(model)
                continue
            mine.sort(key=lambda r: (r["occupied_topics"], r["topics"]))
            x = [r["occupied_topics"] for r in mine]
            xerr = [[max(0.0, r["occupied_topics"] - r["occupied_topics_min"]) for r in mine],
                    [max(0.0, r["occupied_topics_max"] - r["occupied_topics"]) for r in mine]]
            notes = [f"initial K={r['topics']}" for r in mine]
            label = f"{model} (at its occupied topics)"
        else:
            mine.sort(key=lambda r: r[xkey])
            x, xerr, label = [r[xkey] for r in mine], None, model
            if xkey == "topics":
                notes = None
            elif growing:
                notes = [f"K={r['topics']}" + (f"\u2192{r['occupied_topics']:.0f}"
                                               if r["occupied_topics"] is not None else "")
                         for r in mine]
                label = f"{model} (nonparametric: initial K\u2192occupied topics)"
            else:
                notes = [f"K={r['topics']}" for r in mine]
        if SAMPLER_SEP not in model and mine[0]["sampler"] != "exact":
            label = f"{model} [{mine[0]['sampler']}]" + label[len(model):]
        sd = [r["sd"] for r in mine]  # None with one seed: no bar
        series.append({"model": model, "nonparametric": growing, "x": x,
                       "y": [r["mean"] for r in mine], "yerr": None if None in sd else sd,
                       "xerr": xerr, "notes": notes, "label": label})
    return series, left_out


def _plots(rows: list, out: Path) -> list:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from topiczoo.diagnostics import save_figure

    written = []
    datas = sorted({r["data"] for r in rows})
    for stem, xkey, xlabel in (("metric_vs_topics", "topics", "number of topics K"),
                               ("metric_vs_time", "train_seconds",
                                "training seconds (median over seeds)")):
        fig, axes = plt.subplots(1, len(datas), figsize=(5.5 * len(datas), 4), squeeze=False)
        for ax, data in zip(axes[0], datas):
            here = [r for r in rows if r["data"] == data]
            series, left_out = plot_series(here, xkey)
            for s in series:
                ax.errorbar(s["x"], s["y"], yerr=s["yerr"], xerr=s["xerr"],
                            marker="D" if s["nonparametric"] else "o",
                            linestyle="--" if s["nonparametric"] else "-",
                            capsize=3, label=s["label"])
                for x, y, note in zip(s["x"], s["y"], s["notes"] or ()):
                    ax.annotate(note, (x, y), fontsize=7, textcoords="offset points",
                                xytext=(3, 3))
            for r in here:
                if r["response"] == WORDS:
                    ax.axhline(r["mean"], color="0.3", linestyle=":",
                               label=f"{r['model']} ({r['train_seconds']:.1f} s)")
            if xkey == "topics" and any(s["nonparametric"] for s in series):
                xlabel_here = ("number of topics: K, or for the nonparametric models (dashed, "
                               "diamonds)\ntheir occupied topics at the end (bars: range over "
                               "chains and seeds)")
            else:
                xlabel_here = xlabel
            if left_out:
                ax.annotate(f"not shown: {', '.join(left_out)} (nonparametric, occupied topics "
                            "not recorded)", (0.01, 0.01), xycoords="axes fraction", fontsize=7)
            if xkey == "train_seconds":
                ax.set_xscale("log")
                # ticks at 1, 2, 5 x 10^n labelled plainly; within one decade matplotlib
                # labelled every minor tick, over one another
                ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
                ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel(xlabel_here)
            ax.set_ylabel(f"test {here[0]['metric']} (mean, sd over seeds)")
            ax.set_title(data)
            ax.legend(fontsize=8)
        written.append(save_figure(fig, out / f"{stem}.png"))
    return written


def _trees(grid: Grid, out: Path) -> dict:
    """Write one ArviZ tree per (data, model, K) with a log-likelihood; returns
    ``{data: {"MODEL K=k": tree}}``."""
    from topiczoo.diagnostics import save_datatree

    (out / "trees").mkdir(exist_ok=True)
    trees, written = {}, set()
    for data in grid.data:
        for model in grid.models:
            for k in grid.topics:
                parts = [out / "cells" / f"{cell_name(data, model, k, s)}.loglik.npz"
                         for s in grid.seeds]
                if not all(p.exists() for p in parts):
                    continue
                loaded = [np.load(p) for p in parts]
                tree = datatree(np.concatenate([z["log_likelihood"] for z in loaded]),
                                np.concatenate([z["test_score_mean"] for z in loaded]))
                name = model.replace(":", "+")  # as in cell_name
                path = save_datatree(tree, out / "trees" / f"{data}__{name}__K{k}.nc")
                written.add(path.name)
                trees.setdefault(data, {})[f"{model} K={k}"] = tree
    for stale in (out / "trees").glob("*__*__K*.nc"):  # of an earlier grid in this folder
        if stale.name not in written:
            stale.unlink()
    return trees


def held_out_elpd(log_likelihood):
    """The held-out expected log pointwise predictive density of a test set, as an
    ``arviz_stats.ELPDData`` that ``arviz.compare`` takes.

    log_likelihood: float [chain, draw, document], log p(y_d | sample) in nats (or a tree of
    :func:`datatree`). Per document elpd_d = log mean_s p(y_d | s) over every sample (the
    direct estimate: the documents were not in the training posterior, so nothing is
    reweighted); elpd = sum_d elpd_d, se = sqrt(D var_d(elpd_d)). ``p`` (the effective number
    of parameters of an in-sample estimate) is NaN: a held-out estimate has none."""
    import xarray as xr
    from arviz_stats import ELPDData

    if not isinstance(log_likelihood, np.ndarray):
        log_likelihood = np.asarray(log_likelihood["log_likelihood"]["y"].values)
    ll = np.asarray(log_likelihood, np.float64)
    if ll.ndim != 3:
        raise ValueError(f"log_likelihood must be [chain, draw, document], got shape {ll.shape}")
    elpd_i = log_predictive_density(ll)
    num_docs = elpd_i.shape[0]
    return ELPDData(elpd=float(elpd_i.sum()), se=float(math.sqrt(num_docs * elpd_i.var())),
                    p=float("nan"), n_samples=ll.shape[0] * ll.shape[1],
                    n_data_points=num_docs, scale="log", warning=False, good_k=float("nan"),
                    elpd_i=xr.DataArray(elpd_i, dims=["document"]))


def _arviz_comparison(trees: dict) -> str:
    import arviz as az

    lines = ["# arviz.compare of the probabilistic models (held-out log predictive density)", "",
             "Over the test documents' held-out elpd_d = log mean_s p(y_d | s) "
             "(topiczoo.compare.held_out_elpd; elpd is their sum over the test documents, "
             "table.md's test_lpd their mean); elpd_diff and dse are paired over the same "
             "documents.", ""]
    for data, models in sorted(trees.items()):
        if len(models) < 2:
            lines.append(f"{data}: only {', '.join(models)} has a log-likelihood; nothing to "
                         "compare.\n")
            continue
        table = az.compare({name: held_out_elpd(tree) for name, tree in models.items()})
        lines += [f"## {data}", "", "```text", table.to_string(), "```", ""]
    return "\n".join(lines) + "\n"


def write_outputs(grid: Grid, out) -> list:
    """Write ``table.csv``, ``table.md``, the plots, the trees and ``compare.md`` from the
    finished cells in ``out``; returns the table's rows."""
    out = Path(out)
    rows = table_rows(grid, read_cells(grid, out), read_baselines(grid, out))
    with open(out / "table.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    (out / "table.md").write_text(markdown_table(rows, grid))
    if rows:
        _plots(rows, out)
    trees = _trees(grid, out)
    if trees:
        (out / "compare.md").write_text(_arviz_comparison(trees))
    else:  # one of an earlier grid in this folder would describe other models
        (out / "compare.md").unlink(missing_ok=True)
    return rows
