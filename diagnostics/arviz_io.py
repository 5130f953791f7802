"""A fit (and its test scores) as an ArviZ 1.x ``xarray.DataTree``, and its netCDF storage.

Groups of the tree built by :func:`to_datatree` (ArviZ's InferenceData schema):

* ``posterior``: the per-draw quantities after burn-in, dims ``(chain, draw, ...)``. ``draw``
  is numbered 0..n-1 in every group, as ArviZ expects, and the non-dimension coordinate
  ``iteration`` (on ``draw``) holds the Gibbs iteration at which each draw was taken (so
  thinned or resumed runs keep their true iteration numbers). ``eta`` has dims
  ``(chain, draw, task, topic)``; ``augmentation_mean`` ``(chain, draw, task)``; the
  label-invariant monitors (``log_likelihood``, ``eta_norm``, ...) ``(chain, draw)``.
* ``warmup_posterior``: the same for the burn-in draws (absent when none were kept).
* ``sample_stats`` / ``warmup_sample_stats``: per-draw sampler statistics, dims
  ``(chain, draw)`` with the same ``iteration`` coordinate, split at burn-in like the
  posterior: ``time_per_iteration``, the
  seconds per Gibbs cycle of the chunk that produced each draw (``FitResult.sample_stats``;
  a draw of that name in ``FitResult.draws`` is routed here too). Absent when the fit
  recorded none. The total wall time is also in the attributes ``train_seconds`` and
  ``seconds_per_iteration``.
* ``predictions``: ``scores`` ``(chain, snapshot, test_draw, task, document)``, the coordinate
  ``snapshot`` being the training iteration of each snapshot; ``zbar`` ``(chain, snapshot,
  test_draw, document, topic)`` when the prediction kept it.
* ``observed_data``: ``y`` ``(task, document)``, the test labels, when given.

The root's attributes describe the run: the model's facts as ``result.model.describe()``
gives them (model name, ``num_topics``, hyperparameters, response and its constants), the
``sampler`` (``result.sampler``, ``"exact"`` when the result has none), ``init`` (how the
chains started: ``result.init``, ``"uniform"`` for a result from before there was a choice),
seed, chains,
burn-in, timings and ``created_by = "topiczoo"``.

Because ``draw`` is 0..n-1, ArviZ's own functions (``arviz.rhat``, ``arviz.summary``,
``arviz_plots.plot_autocorr``, ``plot_trace``, ``plot_rank``, ...) work on the tree as is;
pass ``visuals={"trace": {"xname": "iteration"}}`` to ``plot_trace`` for iterations on the
x axis.

Storage (:func:`save_datatree` / :func:`load_datatree`): one netCDF-4 file with a group per
node, written with ``h5netcdf``: the format of ``arviz.from_netcdf`` / ``xarray.open_datatree``,
readable by any netCDF tool.
"""

from __future__ import annotations

import datetime as _dt
from importlib import metadata
from pathlib import Path

import numpy as np
import xarray as xr

from topiczoo.models.monitors import LABEL_INVARIANT

__all__ = ["LABEL_INVARIANT", "as_datatree", "load_datatree", "save_datatree", "to_datatree"]


#: Per-draw quantities that belong in ``sample_stats`` rather than ``posterior``.
SAMPLE_STATS = ("time_per_iteration",)

#: Dimension names of the known per-draw quantities beyond (chain, draw).
_EVENT_DIMS = {"eta": ("task", "topic"), "augmentation_mean": ("task",)}



def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def _event_dims(name: str, array: np.ndarray) -> tuple:
    extra = array.ndim - 2
    dims = _EVENT_DIMS.get(name)
    if dims is not None and len(dims) == extra:
        return dims
    return tuple(f"{name}_dim_{i}" for i in range(extra))


def _draws_dataset(draws: dict, iterations: np.ndarray, chains: np.ndarray) -> xr.Dataset:
    data_vars = {}
    for name, array in draws.items():
        array = np.asarray(array)
        if array.dtype.kind == "f":  # float32 monitors of large magnitude have coarse steps
            array = array.astype(np.float64)
        data_vars[name] = (("chain", "draw") + _event_dims(name, array), array)
    iterations = np.asarray(iterations, np.int64)
    ds = xr.Dataset(data_vars, coords={
        "chain": chains, "draw": np.arange(iterations.shape[0], dtype=np.int64),
        "iteration": ("draw", iterations)})
    for dim in ds.dims:
        if dim not in ds.coords:
            ds = ds.assign_coords({dim: np.arange(ds.sizes[dim], dtype=np.int64)})
    return ds


def _attr_value(value):
    """A fact as a netCDF attribute: numpy scalars as Python values, booleans as 0/1 (netCDF
    has no boolean attributes), numbers and strings as they are, anything else as its str."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, str)):
        return value
    return str(value)


def _run_attrs(result) -> dict:
    attrs = {
        "created_by": "topiczoo",
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "topiczoo_version": _version("topiczoo"),
        "arviz_version": _version("arviz"),
        "inference_library": "numpyro",
        "inference_library_version": _version("numpyro"),
        "sampler": str(result.sampler),
        "init": str(getattr(result, "init", "uniform")),
    }
    if result.label_invariant:  # the monitors the sampler declared label-invariant
        attrs["label_invariant"] = ",".join(result.label_invariant)
    # the model's own facts (name, K, hyperparameters, response and its constants)
    attrs.update({k: _attr_value(v) for k, v in result.model.describe().items()
                  if v is not None})
    attrs.update(
        seed=int(result.seed),
        num_chains=int(result.num_chains),
        num_burnin=int(result.num_burnin),
        thinning=int(getattr(result, "thinning", 1)),
        num_tokens=int(getattr(result, "num_tokens", 0)),
        train_seconds=float(result.train_seconds),
        token_iterations_per_second=float(result.token_iterations_per_second),
    )
    iterations = int(getattr(result, "iterations_done", 0) or 0)
    if not iterations and len(result.draw_iterations):
        iterations = int(np.max(result.draw_iterations))
    attrs["iterations"] = iterations
    if iterations and result.train_seconds > 0:
        attrs["seconds_per_iteration"] = float(result.train_seconds) / iterations
    return attrs


def topics_label(attrs) -> str:
    """How a tree's ``num_topics`` attribute reads: ``"K"``, or ``"initial K"`` for the
    (supervised) HDP, whose number of topics changes along the chain (the ``num_topics``
    monitor)."""
    return "initial K" if "learn_gamma" in attrs else "K"


def _labels_task_document(labels, num_tasks: int | None, num_docs: int | None) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim == 1:
        y = y[None, :]
    if y.ndim != 2:
        raise ValueError(f"test labels must be [D] or [T, D], got shape {y.shape}")
    if num_tasks is not None and num_docs is not None and y.shape != (num_tasks, num_docs):
        if y.shape == (num_docs, num_tasks):
            y = y.T
        else:
            raise ValueError(f"test labels of shape {np.shape(labels)} do not match the "
                             f"{num_tasks} task(s) x {num_docs} documents of the scores")
    return y


def to_datatree(result, prediction=None, test_labels=None) -> xr.DataTree:
    """A :class:`topiczoo.fit.FitResult` (and optionally its test scores) as a DataTree.

    Args:
      result: the fit (anything with ``draws``, ``draw_iterations``, ``num_burnin``,
        ``model`` (with ``describe()``), ``seed``, ``num_chains``, ``train_seconds``,
        ``token_iterations_per_second``; optionally ``sample_stats``, ``sampler``,
        ``thinning``, ``num_tokens``, ``iterations_done`` and, for ``prediction``,
        ``snapshots``).
      prediction: a :class:`topiczoo.predict.Prediction` of that fit, for ``predictions``.
      test_labels: the test documents' labels ([D] or [T, D], 0/1), for ``observed_data``;
        class ids [D] of a multi-class prediction become its tasks' 0/1 indicators [T, D]
        (``prediction.task.to_tasks``).
    Returns an ``xarray.DataTree`` with the groups described in the module docstring.
    """
    iterations = np.asarray(result.draw_iterations, np.int64)
    draws = {k: np.asarray(v) for k, v in result.draws.items()}
    for name, array in (getattr(result, "sample_stats", None) or {}).items():
        draws.setdefault(name, np.asarray(array))
    for name, array in draws.items():
        if array.ndim < 2 or array.shape[1] != iterations.shape[0]:
            raise ValueError(f"draw {name!r} has shape {array.shape}; expected [chains, "
                             f"{iterations.shape[0]} draws, ...]")
    num_chains = next(iter(draws.values())).shape[0] if draws else int(result.num_chains)
    chains = np.arange(num_chains, dtype=np.int64)
    stats = {k: v for k, v in draws.items() if k in SAMPLE_STATS}
    params = {k: v for k, v in draws.items() if k not in SAMPLE_STATS}
    post = iterations > result.num_burnin
    groups = {}
    if post.any():
        groups["posterior"] = _draws_dataset({k: v[:, post] for k, v in params.items()},
                                             iterations[post], chains)
    if (~post).any():
        groups["warmup_posterior"] = _draws_dataset({k: v[:, ~post] for k, v in params.items()},
                                                    iterations[~post], chains)
    if stats and post.any():
        groups["sample_stats"] = _draws_dataset({k: v[:, post] for k, v in stats.items()},
                                                iterations[post], chains)
    if stats and (~post).any():
        groups["warmup_sample_stats"] = _draws_dataset(
            {k: v[:, ~post] for k, v in stats.items()}, iterations[~post], chains)

    num_tasks = num_docs = None
    if prediction is not None:
        scores = np.asarray(prediction.scores)
        if scores.ndim != 5:
            raise ValueError(f"prediction scores must be [C, I, J, T, D], got {scores.shape}")
        snapshot_iterations = np.asarray([s.iteration for s in result.snapshots], np.int64)
        if snapshot_iterations.shape[0] != scores.shape[1]:
            raise ValueError(f"{scores.shape[1]} snapshots in the scores but "
                             f"{snapshot_iterations.shape[0]} in the fit")
        _, _, num_draws, num_tasks, num_docs = scores.shape
        data_vars = {"scores": (("chain", "snapshot", "test_draw", "task", "document"), scores)}
        zbar = getattr(prediction, "zbar", None)
        if zbar is not None:
            data_vars["zbar"] = (("chain", "snapshot", "test_draw", "document", "topic"),
                                 np.asarray(zbar))
        ds = xr.Dataset(data_vars, coords={
            "chain": np.arange(scores.shape[0], dtype=np.int64), "snapshot": snapshot_iterations,
            "test_draw": np.arange(num_draws, dtype=np.int64),
            "task": np.arange(num_tasks, dtype=np.int64),
            "document": np.arange(num_docs, dtype=np.int64)})
        if "topic" in ds.dims:
            ds = ds.assign_coords(topic=np.arange(ds.sizes["topic"], dtype=np.int64))
        groups["predictions"] = ds
    if test_labels is not None:
        task = getattr(prediction, "task", None)
        if getattr(task, "kind", None) == "multiclass" and np.ndim(test_labels) == 1:
            test_labels = task.to_tasks(test_labels)
        y = _labels_task_document(test_labels, num_tasks, num_docs)
        groups["observed_data"] = xr.Dataset(
            {"y": (("task", "document"), y)},
            coords={"task": np.arange(y.shape[0], dtype=np.int64),
                    "document": np.arange(y.shape[1], dtype=np.int64)})

    attrs = _run_attrs(result)
    for name, ds in groups.items():
        ds.attrs.update(created_by="topiczoo", model=attrs["model"])
        if name in ("posterior", "warmup_posterior", "sample_stats", "warmup_sample_stats"):
            ds.attrs.update(inference_library="numpyro", num_burnin=attrs["num_burnin"])
    tree = xr.DataTree.from_dict(groups, name=None)
    tree.attrs = attrs
    return tree


def as_datatree(tree_or_result) -> xr.DataTree:
    """What the summary and plot functions take: an ``xarray.DataTree`` as it is, a fit
    (:class:`topiczoo.fit.FitResult`, or anything with ``draws`` and ``draw_iterations``)
    through :func:`to_datatree` (its draws only: pass ``to_datatree(result, prediction,
    test_labels)`` yourself for the predictions). Anything else: a TypeError saying so."""
    if isinstance(tree_or_result, xr.DataTree):
        return tree_or_result
    if hasattr(tree_or_result, "draws") and hasattr(tree_or_result, "draw_iterations"):
        return to_datatree(tree_or_result)
    raise TypeError(f"expected an xarray.DataTree from topiczoo.diagnostics.to_datatree(result) "
                    f"(or the FitResult itself), got {type(tree_or_result).__name__}")


# ------------------------------------------------------------------------------ storage


def save_datatree(tree: xr.DataTree, path) -> Path:
    """Write ``tree`` to ``path`` as one netCDF-4 file (h5netcdf); returns the path.

    An existing file is replaced. Read it back with :func:`load_datatree` or
    ``arviz.from_netcdf``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tree.to_netcdf(path, engine="h5netcdf", mode="w")
    return path


def load_datatree(path) -> xr.DataTree:
    """Read a tree written by :func:`save_datatree`, fully into memory.

    A topiczoo tree written before ``draw`` was numbered 0..n-1 (its ``draw`` coordinate held
    the iterations, and it has no ``iteration`` coordinate) is read in the current layout:
    those values become the ``iteration`` coordinate and ``draw`` is renumbered.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no ArviZ tree at {path}")
    try:
        with xr.open_datatree(path, engine="h5netcdf") as tree:
            tree = tree.load().copy()
    except (OSError, ValueError) as err:  # truncated, empty or not netCDF-4 (h5py's OSError)
        raise ValueError(f"{path} is not a readable netCDF-4 ArviZ tree "
                         f"({type(err).__name__}: {str(err).splitlines()[0][:120]})") from None
    if tree.attrs.get("created_by") != "topiczoo":
        return tree
    for node in tree.subtree:
        ds = node.to_dataset()
        if "draw" in ds.dims and "iteration" not in ds.coords:
            node.dataset = ds.assign_coords(
                iteration=("draw", ds["draw"].values.astype(np.int64)),
                draw=np.arange(ds.sizes["draw"], dtype=np.int64))
    return tree
