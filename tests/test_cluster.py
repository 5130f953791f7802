"""Cells on a Dask cluster (``topiczoo.cluster``): a local cluster of two worker processes
gives the serial run's results bit for bit (compare's grid, ``--c cv``, calibration blocks,
scikit-learn's search with joblib's dask backend); a worker killed mid-cell, or after writing
its cell, still gives every cell once; a scheduler that does not answer is a clear error
within the stated timeout.

One local cluster serves the module (two workers, one thread each); the corpora are tiny and
the runs a few iterations, so the module costs the cluster's start and each worker's
compilation of a few small models (about 90 s on the shared 2-core machine). The tests on the
cluster are marked slow; the unanswering scheduler's is in the fast tier.
"""

import json
import os
import signal
import socket
import time
import warnings

import numpy as np
import pytest

import topiczoo.compare as compare_module
import topiczoo.datasets
from topiczoo import cluster
from topiczoo.cli import main
from topiczoo.compare import Grid, compare
from topiczoo.corpus import Corpus
from topiczoo.datasets import DataSet

distributed = pytest.importorskip("distributed")

#: What a cell records that is a time, not a result.
TIMES = ("train_seconds", "predict_seconds", "token_iterations_per_second")


def _synthetic(seed=0, num_docs=32):
    """Two topics over 8 words, label = the document's topic; 3/4 train, 1/4 test."""
    rng = np.random.default_rng(seed)
    vocab = tuple(f"w{i}" for i in range(8))
    labels = np.arange(num_docs) % 2
    phi = np.full((2, 8), 0.05)
    phi[0, :4], phi[1, 4:] = 0.2, 0.2
    counts = np.stack([rng.multinomial(12, phi[y]) for y in labels])
    corpus = Corpus.from_document_term(counts, vocab, labels)
    train, test = corpus.subset(np.arange(24)), corpus.subset(np.arange(24, num_docs))
    return DataSet("bbc", train, test, "binary", ("a", "b"), 0, "synthetic")


GRID = dict(data=["bbc"], models=["gslda"], topics=[2, 3], seeds=[0, 1], iterations=4,
            chains=1, snapshots=2, test_burnin=1, test_draws=2, options={"gslda": {"c": 1}})


@pytest.fixture
def synthetic(monkeypatch):
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", lambda name, **kw: _synthetic())
    monkeypatch.setattr(compare_module, "load_dataset", lambda name, **kw: _synthetic())


@pytest.fixture(scope="module")
def client():
    with cluster.open_client(workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The grid run in this process: its folder."""
    out = tmp_path_factory.mktemp("serial")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compare_module, "load_dataset", lambda name, **kw: _synthetic())
        compare(Grid(**GRID), out, progress=False)
    return out


def _results(out):
    """Every cell file of a grid folder without its times: {name: cell}; and every
    log-likelihood array: {name: {array: ndarray}}."""
    cells, arrays = {}, {}
    for path in sorted((out / "cells").glob("*.json")):
        cell = json.loads(path.read_text())
        cells[path.stem] = {k: v for k, v in cell.items() if k not in TIMES}
    for path in sorted((out / "cells").glob("*.npz")):
        with np.load(path) as z:
            arrays[path.name] = {k: z[k] for k in z.files}
    return cells, arrays


def _assert_same(out, reference):
    cells, arrays = _results(out)
    expected_cells, expected_arrays = _results(reference)
    assert sorted(cells) == sorted(expected_cells) and len(cells) == 5  # 4 cells + baseline
    for name in cells:
        assert cells[name] == expected_cells[name], name
    assert sorted(arrays) == sorted(expected_arrays) and len(arrays) == 4
    for name, found in arrays.items():
        for key, value in found.items():
            np.testing.assert_array_equal(value, expected_arrays[name][key], err_msg=name)
    assert not list((out / "cells").glob("*.tmp"))


@pytest.mark.slow
def test_a_grid_on_two_workers_equals_the_serial_run(tmp_path, synthetic, client, serial,
                                                      capsys):
    out = tmp_path / "grid"
    rows = compare(Grid(**GRID), out, client=client)
    _assert_same(out, serial)
    err = capsys.readouterr().err
    assert "| cells: 5 done, 0 running, 0 left" in err
    assert "| cells: 1 done, " in err and "left | about" in err
    serial_rows = compare(Grid(**GRID), serial, progress=False)  # every cell skipped
    drop = lambda r: {k: v for k, v in r.items() if k not in TIMES}  # noqa: E731
    assert [drop(r) for r in rows] == [drop(r) for r in serial_rows]
    words = rows[-1]
    assert words["model"] == "words: tf-idf + logistic" and words["response"] == "words"
    # the row is scikit-learn's own pipeline on the same counts
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline

    data = _synthetic()
    pipeline = make_pipeline(TfidfTransformer(),
                             LogisticRegressionCV(cv=StratifiedKFold(5), scoring="accuracy",
                                                  max_iter=2000))
    with warnings.catch_warnings():  # scikit-learn 1.9's notices of its future defaults, as
        warnings.simplefilter("ignore", FutureWarning)  # in topiczoo.word_baseline
        pipeline.fit(data.train.document_term_matrix(), data.train.labels)
    assert words["mean"] == pipeline.score(data.test.document_term_matrix(), data.test.labels)


@pytest.mark.slow
def test_the_command_line_runs_the_grid_at_a_scheduler_address(tmp_path, synthetic, client,
                                                              serial, capsys):
    out = tmp_path / "grid"
    address = client.scheduler.address
    argv = ["compare", "--data", "bbc", "--models", "gslda", "--topics", "2,3", "--seeds",
            "0,1", "--iterations", "4", "--chains", "1", "--snapshots", "2", "--test-burnin",
            "1", "--test-draws", "2", "--option", "gslda:c=1", "--scheduler", address,
            "--out", str(out)]
    assert main(argv) == 0
    assert f"on the Dask cluster at {address}: 2 workers, 1 thread each" in \
        capsys.readouterr().err
    _assert_same(out, serial)


@pytest.mark.slow
def test_ctrl_c_stops_the_grid_on_the_cluster_and_a_rerun_resumes(tmp_path, synthetic, client,
                                                                   serial, monkeypatch):
    out, seen = tmp_path / "grid", []
    real = compare_module._keep

    def interrupted(where, name, result):  # Ctrl-C in the client as the second cell comes
        seen.append(name)
        if len(seen) == 2:
            raise KeyboardInterrupt
        real(where, name, result)

    monkeypatch.setattr(compare_module, "_keep", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compare(Grid(**GRID), out, client=client, progress=False)
    monkeypatch.setattr(compare_module, "_keep", real)
    finished = len(list((out / "cells").glob("*.json")))
    assert 1 <= finished < 5  # the grid stopped: some cells never ran
    compare(Grid(**GRID), out, client=client, progress=False)
    _assert_same(out, serial)


class _Dying(distributed.WorkerPlugin):
    """Planted in every worker: the worker running cell ``before`` dies (SIGKILL) once its
    cell is computed and before its file is written; the one running ``after`` dies once the
    file is written, before its result is sent. Each dies once (a marker file says it did);
    every cell file written is logged to ``folder/writes.log`` with the writing process's id.
    Setting it up again in a worker (Dask adds a plugin anew when it is sent twice) wraps the
    module's own functions again, not the wrapped ones; tearing it down restores them."""

    name = "topiczoo-test-dying"

    def __init__(self, before, after, folder):
        self.before, self.after, self.folder = before, after, str(folder)

    def setup(self, worker):
        import topiczoo.compare as c

        if not hasattr(c, "_unplanted"):
            c._unplanted = c._run_cell, c._write_atomic
        run_cell, write = c._unplanted
        folder, before, after = self.folder, self.before, self.after

        def die_once(name):
            marker = os.path.join(folder, f"killed-{name}")
            if not os.path.exists(marker):
                with open(marker, "w") as f:
                    f.write(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)

        def dying_run_cell(grid, dataset, model, topics, seed, out):
            cell = run_cell(grid, dataset, model, topics, seed, out)
            if c.cell_name(dataset.name, model, topics, seed) == before:
                die_once(before)
            return cell

        def logged_write(path, text):
            write(path, text)
            with open(os.path.join(folder, "writes.log"), "a") as f:
                f.write(f"{os.path.basename(str(path))} {os.getpid()}\n")
            if os.path.basename(str(path)) == f"{after}.json":
                die_once(after)

        c._run_cell, c._write_atomic = dying_run_cell, logged_write

    def teardown(self, worker):
        import topiczoo.compare as c

        if hasattr(c, "_unplanted"):
            c._run_cell, c._write_atomic = c._unplanted
            del c._unplanted


@pytest.mark.slow
def test_a_worker_killed_mid_cell_still_gives_every_cell_once(tmp_path, synthetic, client,
                                                              serial):
    folder = tmp_path / "faults"
    folder.mkdir()
    before, after = "bbc__gslda__K2__seed1", "bbc__gslda__K3__seed0"
    client.register_plugin(_Dying(before, after, folder))
    try:
        out = tmp_path / "grid"
        compare(Grid(**GRID), out, client=client, progress=False)
    finally:
        client.unregister_worker_plugin(_Dying.name)
    assert (folder / f"killed-{before}").exists() and (folder / f"killed-{after}").exists()
    _assert_same(out, serial)
    writes = [line.split() for line in (folder / "writes.log").read_text().splitlines()]
    cells = sorted(p.name for p in (out / "cells").glob("*.json"))
    assert sorted({name for name, _ in writes}) == cells  # every cell file, by a worker
    # the cell whose worker died after writing it is not written again (its rerun read it);
    # no process writes a cell twice. Two processes may each write one, the same bytes
    # atomically, if Dask runs a cell on two workers at once: it promises a task at least
    # once, not once. (CI once logged K2 seed 1 twice, both workers having died within 0.2 s;
    # its log had no process ids, so which of the two it was is not known)
    assert [name for name, _ in writes].count(f"{after}.json") == 1
    assert len({tuple(w) for w in writes}) == len(writes), writes
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed ones


@pytest.mark.slow
def test_c_cv_on_two_workers_equals_the_serial_search(client, capsys):
    from topiczoo.models.registry import REGISTRY
    from topiczoo.tuning import choose_c

    data = _synthetic(num_docs=40)
    settings = dict(grid=[1.0, 16.0], num_folds=2, seed=3,
                    fit_kwargs=dict(num_chains=1, num_iterations=4, num_snapshots=2, seed=3),
                    predict_kwargs=dict(num_burnin=1, num_draws=2, seed=3))
    here = choose_c(REGISTRY["gslda"], 2, data.train, **settings)
    there = choose_c(REGISTRY["gslda"], 2, data.train, client=client, progress=True, **settings)
    np.testing.assert_array_equal(there.scores, here.scores)
    assert there.best_c == here.best_c and there.metric == here.metric
    assert "[choose c] c=16 fold 2/2" in capsys.readouterr().err


@pytest.mark.slow
def test_c_cv_on_the_command_line_runs_on_the_cluster(tmp_path, monkeypatch, client, capsys):
    data = _synthetic(num_docs=40)
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", lambda name, **kw: data)
    argv = ["fit", "--model", "gslda", "--data", "bbc", "--topics", "2", "--iterations", "4",
            "--chains", "1", "--snapshots", "2", "--test-burnin", "1", "--test-draws", "2",
            "--c", "cv", "--c-grid", "1,16", "--cv-folds", "2"]
    summaries = []
    for name, extra in (("here", ["--workers", "0"]),
                        ("there", ["--scheduler", client.scheduler.address])):
        out = tmp_path / name
        assert main(argv + extra + ["--out", str(out)]) == 0
        summaries.append(json.loads((out / "summary.json").read_text()))
    assert "[choose c] c=16 fold 2/2" in capsys.readouterr().err
    serial, there = (s["c_cross_validation"] for s in summaries)
    assert there["scores"] == serial["scores"] and there["best_c"] == serial["best_c"]
    assert summaries[1]["test_accuracy"] == summaries[0]["test_accuracy"]


@pytest.mark.slow
def test_calibration_blocks_on_two_workers_equal_the_serial_blocks(client):
    from topiczoo.diagnostics.sbc import simulation_based_calibration
    from topiczoo.models import gslda

    settings = dict(num_replicates=6, num_draws=3, thinning=1, num_burnin=3, seed=1,
                    replicates_per_block=2)
    model = gslda(2, c=1.0)
    here = simulation_based_calibration(model, [3, 2, 3], 4, **settings)
    there = simulation_based_calibration(model, [3, 2, 3], 4, map=cluster.client_map(client),
                                         **settings)
    assert here.ranks.keys() == there.ranks.keys()
    for name in here.ranks:
        np.testing.assert_array_equal(there.ranks[name], here.ranks[name], err_msg=name)
    assert there.settings == here.settings and here.settings["replicates_per_block"] == 2


@pytest.mark.slow
def test_grid_search_with_the_dask_backend_equals_the_serial_search(client):
    import joblib
    from sklearn.model_selection import GridSearchCV

    from topiczoo.estimators import GSLDAClassifier

    data = _synthetic(num_docs=40)
    X, y = data.train.document_term_matrix(), data.train.labels
    estimator = GSLDAClassifier(2, num_iterations=4, num_chains=1, num_snapshots=2,
                                test_burnin=1, test_draws=2, random_state=5)
    grid = {"c": [1, 16], "num_topics": [2, 3]}
    here = GridSearchCV(estimator, grid, cv=2).fit(X, y)
    with joblib.parallel_config(backend="dask", client=client):
        there = GridSearchCV(estimator, grid, cv=2, n_jobs=-1).fit(X, y)
    for key in ("split0_test_score", "split1_test_score", "mean_test_score", "rank_test_score"):
        np.testing.assert_array_equal(there.cv_results_[key], here.cv_results_[key])
    assert there.best_params_ == here.best_params_
    np.testing.assert_array_equal(there.predict(X), here.predict(X))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_scheduler_that_does_not_answer_is_a_clear_error_within_the_timeout(
        monkeypatch, tmp_path, synthetic, capsys):
    address = f"tcp://127.0.0.1:{_free_port()}"
    tic = time.perf_counter()
    with pytest.raises(cluster.SchedulerUnreachableError,
                       match=f"no Dask scheduler answered at {address} within 2 s"):
        with cluster.open_client(scheduler=address, timeout=2):
            pass
    assert time.perf_counter() - tic < 2 + 3
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1.0)
    argv = ["compare", "--data", "bbc", "--models", "gslda", "--topics", "2", "--scheduler",
            address, "--out", str(tmp_path / "g"), "--quiet"]
    tic = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - tic < 1 + 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: no Dask scheduler answered at {address} within 1 s")
    assert "leave out --scheduler" in err and len(err.splitlines()) == 1
    assert main(argv + ["--workers", "2"]) == 2
    assert "give one of them" in capsys.readouterr().err
