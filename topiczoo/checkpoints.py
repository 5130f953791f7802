"""Checkpoints of a fit: one ``.npz`` file of arrays and a JSON description of the run.

Reading one runs no code. A checkpoint of another model, sampler, seed, corpus or schedule is
refused with the fields that differ; a state written in an earlier layout of a sampler's state
is brought up to date by the sampler's ``upgrade``.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile

import jax
import numpy as np

from topiczoo.kernels.gibbs import ChainState, CorpusData, GibbsKernel
from topiczoo.result import FitResult, Snapshot

#: The layout of the files (a checkpoint of another format is refused).
CHECKPOINT_FORMAT = 1


def corpus_fingerprint(data) -> str:
    """A short hash of the arrays a sampler reads (tokens, documents, coded responses): the
    arrays of ``data`` in order; of a :class:`CorpusData` its first four (its word index is a
    function of the words, and absent in some)."""
    if isinstance(data, CorpusData):
        data = data[:4]
    h = hashlib.sha256()
    for a in data:
        a = np.ascontiguousarray(np.asarray(a))
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def describe_run(result) -> dict:
    return {"format": CHECKPOINT_FORMAT, "model": result.model.describe(),
            "sampler": result.sampler, "seed": result.seed, "num_chains": result.num_chains,
            "schedule": result.schedule, "corpus": result.fingerprint,
            "vocabulary": hashlib.sha256("\n".join(result.vocabulary).encode()).hexdigest()[:16]}


def _differences(stored: dict, wanted: dict, prefix: str = "") -> list:
    """``name: checkpoint X, this run Y`` for each field of the run description ``wanted``
    that the checkpoint's ``stored`` one does not match, nested fields (the model's
    hyperparameters, the schedule) named one by one as ``model.c``,
    ``schedule.num_iterations``."""
    out = []
    keys = list(wanted) if not prefix else sorted(set(stored) | set(wanted))
    for key in keys:
        mine, theirs = stored.get(key), wanted.get(key)
        if mine == theirs:
            continue
        if isinstance(mine, dict) and isinstance(theirs, dict):
            out += _differences(mine, theirs, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}: checkpoint {_plain(mine)}, this run {_plain(theirs)}")
    return out


def _plain(value) -> str:
    """A field's value as a reader wants it: absent, a string unquoted, a number as is."""
    if value is None:
        return "none"
    return value if isinstance(value, str) else json.dumps(value)


def save_checkpoint(result: FitResult, path) -> None:
    """Write ``result`` to ``path`` atomically: one ``.npz`` of its arrays (state, draws,
    snapshots) and a JSON description of the run (model, sampler, seed, schedule, corpus
    fingerprint, iteration of each snapshot, timings)."""
    arrays = {f"state/{jax.tree_util.keystr(p)}": np.asarray(a)
              for p, a in jax.tree_util.tree_flatten_with_path(result.state)[0]}
    arrays.update({f"draws/{k}": v for k, v in result.draws.items()})
    arrays.update({f"sample_stats/{k}": v for k, v in result.sample_stats.items()})
    arrays["draw_iterations"] = np.asarray(result.draw_iterations, np.int64)
    for i, snap in enumerate(result.snapshots):
        arrays.update({f"snapshots/{i}/{k}": v for k, v in snap.arrays.items()})
    meta = {**describe_run(result), "snapshot_iterations": [s.iteration for s in result.snapshots],
            "train_seconds": result.train_seconds}
    arrays["meta"] = np.asarray(json.dumps(meta))
    tmp = f"{path}.tmp.npz"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def start_state(start, fresh: FitResult, kernel: GibbsKernel, data) -> ChainState:
    """The last states of ``start`` (a :class:`FitResult`) for the run ``fresh`` describes, or
    ``ValueError`` saying why they cannot start it."""
    if not isinstance(start, FitResult) or start.state is None:
        raise ValueError(f"start must be the FitResult of a fit, got {type(start).__name__}")
    mine, theirs = describe_run(fresh), describe_run(start)
    differ = [key for key in ("model", "corpus", "vocabulary", "num_chains")
              if mine[key] != theirs[key]]
    if differ:
        raise ValueError("start is a run of another " + " and ".join(differ)
                         + "; it can only start a run of the same model on the same corpus "
                         "with as many chains")
    if start.iterations_done >= fresh.schedule["num_iterations"]:
        raise ValueError(f"start has done {start.iterations_done} iterations: num_iterations "
                         f"(the total, {fresh.schedule['num_iterations']}) must exceed them")
    template = kernel.state_shapes(data, fresh.num_chains)
    named = {jax.tree_util.keystr(p): np.asarray(a)
             for p, a in jax.tree_util.tree_flatten_with_path(start.state)[0]}
    if kernel.sampler.upgrade is not None:  # e.g. one chain's state into replica exchange's
        named = kernel.sampler.upgrade(named, data)
    leaves = _state_leaves(template, named, kernel, f"start's state ({start.sampler})")
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(template), leaves)


def _state_leaves(template, named: dict, kernel: GibbsKernel, what: str) -> list:
    """The leaves of a state for ``template`` (``kernel.state_shapes``) from ``named`` arrays
    keyed by ``jax.tree_util.keystr`` path, cast to the template's dtypes; a sampler that grows
    its capacity accepts other sizes of the same rank. Raises ``ValueError`` naming ``what``."""
    grown = kernel.sampler.grow is not None
    leaves = []
    for p, leaf in jax.tree_util.tree_flatten_with_path(template)[0]:
        name = jax.tree_util.keystr(p)
        if name not in named or (named[name].shape != leaf.shape and not (
                grown and named[name].ndim == leaf.ndim)):
            raise ValueError(f"{what} is not a state of the sampler {kernel.sampler.name} "
                             f"({name} missing or of another shape)")
        leaves.append(named[name].astype(leaf.dtype))
    return leaves


def load_checkpoint(path, kernel: GibbsKernel, data, *, expected: FitResult) -> FitResult:
    """Read a checkpoint written by :func:`save_checkpoint` for the run ``expected`` describes
    (a fresh :class:`FitResult` of the same call), whose state the ``kernel`` on ``data`` must
    be able to continue. Raises ``ValueError`` saying what differs, or that the file is not a
    checkpoint (truncated, empty, another format)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            stored = {name: archive[name] for name in archive.files}
        meta = json.loads(str(stored.pop("meta")))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        # numpy calls any file that is not an archive "pickled data" and suggests allow_pickle
        err = ("not an .npz archive of plain arrays; a checkpoint is never unpickled"
               if "pickle" in str(err) else err)
        raise ValueError(f"{path} is not a readable topiczoo checkpoint ({err}); remove it to "
                         "start afresh") from None
    want = json.loads(json.dumps(describe_run(expected)))
    differ = _differences(meta, want)
    if differ:
        raise ValueError(f"checkpoint {path} belongs to another run ({'; '.join(differ)}); "
                         "remove it or choose another path")
    template = kernel.state_shapes(data, expected.num_chains)
    named = {k[len("state/"):]: v for k, v in stored.items() if k.startswith("state/")}
    if kernel.sampler.upgrade is not None:
        named = kernel.sampler.upgrade(named, data)
    leaves = _state_leaves(template, named, kernel, f"checkpoint {path}")
    result = expected
    result.state = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(template), leaves)
    result.draws = {k[len("draws/"):]: v for k, v in stored.items() if k.startswith("draws/")}
    result.sample_stats = {k[len("sample_stats/"):]: v for k, v in stored.items()
                           if k.startswith("sample_stats/")}
    result.draw_iterations = stored["draw_iterations"]
    result.snapshots = [
        Snapshot(it, {k.split("/", 2)[2]: v for k, v in stored.items()
                      if k.startswith(f"snapshots/{i}/")})
        for i, it in enumerate(meta["snapshot_iterations"])]
    result.train_seconds = float(meta["train_seconds"])
    return result
