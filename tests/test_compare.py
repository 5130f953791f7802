"""``topiczoo compare``: a tiny grid through the command line, its resumption after an
interrupt, the log predictive densities it writes (against direct formulas)."""

import argparse
import csv
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

import topiczoo.compare as compare_module
import topiczoo.datasets
import topiczoo.run
import topiczoo.tuning
from topiczoo import cli
from topiczoo.cli import main
from topiczoo.corpus import Corpus
from topiczoo.datasets import DataSet
from topiczoo.models.responses import Gaussian, Logistic
from topiczoo.models.tasks import Task
from topiczoo.predict import Prediction

GRID = ["compare", "--data", "bbc", "--models", "gslda,medlda", "--topics", "2",
        "--seeds", "0,1", "--iterations", "4", "--chains", "1", "--snapshots", "2",
        "--test-burnin", "1", "--test-draws", "2", "--workers", "0", "--no-baseline", "--quiet"]


def _synthetic(seed=0, num_docs=24):
    """Two topics over 8 words, label = the document's topic; 3/4 train, 1/4 test."""
    rng = np.random.default_rng(seed)
    vocab = tuple(f"w{i}" for i in range(8))
    labels = np.arange(num_docs) % 2
    phi = np.zeros((2, 8))
    phi[0, :4], phi[1, 4:] = 0.25, 0.25
    counts = np.stack([rng.multinomial(12, phi[y]) for y in labels])
    corpus = Corpus.from_document_term(counts, vocab, labels)
    train, test = corpus.subset(np.arange(18)), corpus.subset(np.arange(18, num_docs))
    return DataSet("bbc", train, test, "binary", ("a", "b"), 0, "synthetic")


@pytest.fixture
def synthetic(monkeypatch):
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", lambda name, **kw: _synthetic())
    monkeypatch.setattr(topiczoo.compare, "load_dataset", lambda name, **kw: _synthetic())


def test_a_tiny_grid_writes_table_plots_and_trees(tmp_path, synthetic, capsys):
    out = tmp_path / "grid"
    assert main(GRID + ["--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = list(csv.DictReader(open(out / "table.csv")))
    assert [(r["model"], r["topics"], r["seeds"]) for r in rows] == [("gslda", "2", "2"),
                                                                    ("medlda", "2", "2")]
    assert all(r["metric"] == "accuracy" and 0 <= float(r["mean"]) <= 1 for r in rows)
    gslda, medlda = rows
    assert gslda["test_lpd"] and float(gslda["test_lpd"]) < 0 and medlda["test_lpd"] == ""
    assert "pseudo-likelihood" in (out / "table.md").read_text()
    assert "| gslda | exact | 2 |" in printed
    for name in ("metric_vs_topics.png", "metric_vs_time.png", "grid.json", "compare.md"):
        assert (out / name).stat().st_size > 0
    assert sorted(p.name for p in (out / "trees").iterdir()) == ["bbc__gslda__K2.nc"]
    import arviz as az

    tree = az.from_netcdf(out / "trees" / "bbc__gslda__K2.nc")
    # two seeds x one chain, two snapshots x two test draws, six test documents
    assert tree["log_likelihood"]["y"].shape == (2, 4, 6)
    cell = json.loads((out / "cells" / "bbc__gslda__K2__seed0.json").read_text())
    ll = np.load(out / "cells" / "bbc__gslda__K2__seed0.loglik.npz")["log_likelihood"]
    assert cell["test_lpd"] == pytest.approx(
        compare_module.log_predictive_density(ll.astype(np.float64)).mean(), rel=1e-5)


def test_an_interrupted_grid_resumes_and_skips_finished_cells(tmp_path, synthetic, capsys,
                                                              monkeypatch):
    out = tmp_path / "grid"
    real, calls = compare_module._run_cell, []

    def interrupting(grid, dataset, model, topics, seed, where):
        calls.append((model, seed))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(grid, dataset, model, topics, seed, where)

    monkeypatch.setattr(compare_module, "_run_cell", interrupting)
    assert main(GRID + ["--out", str(out)]) == 130
    assert "resume with the same command" in capsys.readouterr().err
    assert len(list((out / "cells").glob("*.json"))) == 2  # the third cell left no file
    calls.clear()
    assert main(GRID[:-1] + ["--out", str(out)]) == 0  # with progress lines
    err = capsys.readouterr().err
    assert "skipped 2 finished cells of 4" in err
    assert calls == [("medlda", 0), ("medlda", 1)]
    assert len(list(csv.DictReader(open(out / "table.csv")))) == 2
    # a rerun with other settings refuses the cells instead of mixing them in
    assert main(GRID[:9] + ["--iterations", "6"] + GRID[11:] + ["--out", str(out)]) == 2
    assert "other settings" in capsys.readouterr().err


def test_grid_from_toml_and_its_errors(tmp_path, capsys):
    config = tmp_path / "grid.toml"
    config.write_text('data = ["bbc"]\nmodels = ["gslda"]\ntopics = [2, 3]\n'
                      'iterations = 7\n[options.gslda]\nc = 4\n')
    grid = compare_module.load_grid(config)
    assert (grid.topics, grid.iterations, grid.options) == ([2, 3], 7, {"gslda": {"c": 4}})
    grid.check()
    config.write_text('data = ["bbc"]\nmodels = ["gslda"]\ntopics = [2]\nchain = 3\n')
    with pytest.raises(ValueError, match="unknown keys.*chain"):
        compare_module.load_grid(config)
    assert main(["compare", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "grid file " in capsys.readouterr().err
    assert main(["compare", "--data", "nope", "--models", "gslda", "--topics", "2", "--out",
                 str(tmp_path / "x")]) == 2  # worded as load_dataset words it
    assert "unknown data set 'nope'; choose one of bbc, bbc-5" in capsys.readouterr().err
    for argv, message in ((["--models", "lda"], "unsupervised"),
                          (["--models", "gslda", "--option", "gslda:c=2.5"], "whole-number"),
                          (["--models", "nope"], "unknown model"),
                          (["--models", "gslda", "--option", "gslda:cc=1"], "no option"),
                          (["--models", "gslda", "--sampler", "gslda:ligth"], "unknown sampler"),
                          (["--models", "gslda", "--sampler", "medlda:light"], "not among"),
                          (["--models", "gslda", "--sampler", "gslda"], "MODEL:SAMPLER")):
        assert main(["compare", "--data", "bbc", "--topics", "2", "--out",
                     str(tmp_path / "x")] + argv) == 2
        assert message in capsys.readouterr().err


def test_pointwise_log_likelihood_is_the_response_density():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(2, 3, 4, 1, 5)).astype(np.float32)  # [C, I, J, T, D]
    labels = np.array([0, 1, 1, 0, 1])
    run = SimpleNamespace(prediction=Prediction(scores, Task("binary", 1), Logistic(1.0)),
                          result=None)
    ll = compare_module.pointwise_log_likelihood(run, SimpleNamespace(labels=labels))
    p1 = 1 / (1 + np.exp(-scores[..., 0, :].astype(np.float64)))
    want = np.where(labels == 1, np.log(p1), np.log1p(-p1)).reshape(2, 12, 5)
    np.testing.assert_allclose(ll, want, rtol=1e-10)
    # Gaussian with s2 drawn: each snapshot's own s2 (the chain's at its iteration)
    y = rng.normal(size=5)
    s2_draws = np.array([[[0.5], [2.0], [3.0], [4.0]], [[1.5], [0.7], [0.9], [1.1]]])  # [C, S, T]
    snaps = [SimpleNamespace(iteration=it, arrays={"s2": s2_draws[:, it - 1]}) for it in (2, 3, 4)]
    result = SimpleNamespace(snapshots=snaps)
    task = Task("regression", 1, offset=0.25)
    run = SimpleNamespace(prediction=Prediction(scores, task, Gaussian(1.0, True)), result=result)
    ll = compare_module.pointwise_log_likelihood(run, SimpleNamespace(labels=y))
    c, i, j, d = 1, 2, 3, 4  # chain 1, snapshot 2 (iteration 4, draw index 3)
    s2, mean = s2_draws[c, 3, 0], float(scores[c, i, j, 0, d])
    direct = -0.5 * ((y[d] - 0.25 - mean) ** 2 / s2 + math.log(2 * math.pi * s2))
    assert ll[c, i * 4 + j, d] == pytest.approx(direct, rel=1e-6)
    # a fixed relative s2 (a fraction of the training variance) is also read from the snapshots
    run = SimpleNamespace(prediction=Prediction(scores, task, Gaussian(0.25, relative=True)),
                          result=result)
    ll = compare_module.pointwise_log_likelihood(run, SimpleNamespace(labels=y))
    assert ll[c, i * 4 + j, d] == pytest.approx(direct, rel=1e-6)
    # a fixed absolute s2 needs none; a drawn one without it is a clear error
    run = SimpleNamespace(prediction=Prediction(scores, task, Gaussian(2.0)), result=None)
    ll = compare_module.pointwise_log_likelihood(run, SimpleNamespace(labels=y))
    assert ll[c, i * 4 + j, d] == pytest.approx(
        -0.5 * ((y[d] - 0.25 - mean) ** 2 / 2.0 + math.log(2 * math.pi * 2.0)), rel=1e-6)
    run = SimpleNamespace(prediction=Prediction(scores, task, Gaussian(1.0, True)), result=None)
    with pytest.raises(ValueError, match="give the snapshot's s2"):
        compare_module.pointwise_log_likelihood(run, SimpleNamespace(labels=y))
    # the hinge has no density
    run = SimpleNamespace(prediction=Prediction(scores, Task("binary", 1), None), result=None)
    assert compare_module.pointwise_log_likelihood(run, SimpleNamespace(labels=labels)) is None


def test_log_predictive_density_and_arviz_compare_ranks():
    ll = np.log(np.array([[[0.2, 0.9]], [[0.6, 0.3]]]))  # [C=2, S=1, D=2]
    np.testing.assert_allclose(compare_module.log_predictive_density(ll),
                               np.log([0.4, 0.6]), rtol=1e-12)
    rng = np.random.default_rng(0)
    good = -rng.gamma(2.0, 0.1, size=(2, 40, 30))
    trees = {"bbc": {"good": compare_module.datatree(good, rng.normal(size=(2, 40))),
                          "bad": compare_module.datatree(good - 0.5, rng.normal(size=(2, 40)))}}
    text = compare_module._arviz_comparison(trees)
    table = text.split("```text")[1]
    assert table.index("good") < table.index("bad")  # ranked by elpd


def test_held_out_elpd_is_the_direct_estimate_not_psis_loo():
    """arviz.compare ranks by the held-out elpd_d = log mean_s p(y_d | s), paired over the
    documents. PSIS-LOO on held-out points averages 1 / p instead (a harmonic mean), which
    ranks these two models the other way round."""
    import arviz_stats as azs

    rng = np.random.default_rng(1)
    num_docs = 50
    # "steady": p(y_d | s) = 0.5 in every sample; "bold": 0.9 in 80% of the samples and
    # 0.02 in the rest: mean 0.724 (better), harmonic mean 0.094 (worse)
    steady = np.full((2, 25, num_docs), np.log(0.5))
    bold = np.where(rng.random((2, 25, num_docs)) < 0.8, np.log(0.9), np.log(0.02))
    harmonic = -np.log(np.exp(-bold).mean(axis=(0, 1)))
    assert harmonic.sum() < num_docs * np.log(0.5)  # the data tell the two estimates apart
    elpd = compare_module.held_out_elpd(bold)
    direct = np.log(np.exp(bold).mean(axis=(0, 1)))
    np.testing.assert_allclose(elpd.elpd_i.values, direct, rtol=1e-12)
    assert elpd.elpd == pytest.approx(direct.sum(), rel=1e-12)
    assert elpd.se == pytest.approx(np.sqrt(num_docs * direct.var()), rel=1e-12)
    assert elpd.n_samples == 50 and elpd.n_data_points == num_docs
    trees = {name: compare_module.datatree(ll, rng.normal(size=(2, 25)))
             for name, ll in (("steady", steady), ("bold", bold))}
    assert compare_module.held_out_elpd(trees["bold"]).elpd == pytest.approx(elpd.elpd)
    table = azs.compare({name: compare_module.held_out_elpd(tree)
                         for name, tree in trees.items()}, round_to="none")
    assert list(table.index) == ["bold", "steady"]
    diff = direct - np.log(0.5)
    assert table.loc["steady", "elpd_diff"] == pytest.approx(-diff.sum(), rel=1e-9)
    assert table.loc["steady", "dse"] == pytest.approx(np.sqrt(num_docs * diff.var()), rel=1e-9)
    text = compare_module._arviz_comparison({"bbc": trees})
    assert text.split("```text")[1].index("bold") < text.split("```text")[1].index("steady")
    # with as few samples as PSIS-LOO refused (it needs 25), the direct estimate still compares
    few = {name: compare_module.datatree(ll[:1, :12], rng.normal(size=(1, 12)))
           for name, ll in (("steady", steady), ("bold", bold))}
    assert "```text" in compare_module._arviz_comparison({"bbc": few})
    with pytest.raises(ValueError, match=r"\[chain, draw, document\]"):
        compare_module.held_out_elpd(bold[0])


def test_a_model_of_the_grid_runs_with_its_sampler(tmp_path, synthetic, monkeypatch):
    """--sampler MODEL:SAMPLER: that model's cells run (and record) it; the others keep the
    settings they had (no sampler key), so cells of earlier grids stay valid."""
    import topiczoo.run

    real, samplers = topiczoo.run.fit_and_predict, []

    def recording(entry, *args, fit_kwargs, **kwargs):
        samplers.append((entry.name, fit_kwargs["sampler"]))
        return real(entry, *args, fit_kwargs=fit_kwargs, **kwargs)

    monkeypatch.setattr(topiczoo.run, "fit_and_predict", recording)
    monkeypatch.setattr(topiczoo.compare, "fit_and_predict", recording)
    monkeypatch.setattr(topiczoo.tuning, "fit_and_predict", recording)
    out = tmp_path / "grid"
    assert main(GRID + ["--sampler", "medlda:light:mh_steps=3", "--out", str(out)]) == 0
    assert sorted(set(samplers)) == [("gslda", "exact"), ("medlda", "light:mh_steps=3")]
    medlda = json.loads((out / "cells" / "bbc__medlda__K2__seed0.json").read_text())
    gslda = json.loads((out / "cells" / "bbc__gslda__K2__seed0.json").read_text())
    assert medlda["settings"]["sampler"] == "light:mh_steps=3"
    assert "sampler" not in gslda["settings"]


# ------------------------------------------------------------------------------ review findings


def test_another_average_reads_the_cells_own_metrics_by_strategy(tmp_path, synthetic, capsys):
    """--average sf on a finished folder showed the ma values under the sf label."""
    out = tmp_path / "grid"
    assert main(GRID + ["--out", str(out)]) == 0
    assert main(GRID + ["--average", "sf", "--out", str(out)]) == 0
    rows = {r["model"]: float(r["mean"]) for r in csv.DictReader(open(out / "table.csv"))}
    for model in ("gslda", "medlda"):
        cells = [json.loads((out / "cells" / f"bbc__{model}__K2__seed{s}.json").read_text())
                 for s in (0, 1)]
        assert rows[model] == pytest.approx(np.mean(
            [c["metrics_by_strategy"]["sf"]["accuracy"] for c in cells]))
    assert "strategy sf" in (out / "table.md").read_text()
    # a cell of an older version (one strategy's metric only) is refused under another
    path = out / "cells" / "bbc__gslda__K2__seed0.json"
    cell = json.loads(path.read_text())
    del cell["metrics_by_strategy"], cell["average"]
    path.write_text(json.dumps(cell))
    capsys.readouterr()
    assert main(GRID + ["--average", "mf", "--out", str(out)]) == 2
    assert "strategy 'sf' only (a cell of an older version)" in capsys.readouterr().err


def test_every_data_set_is_loaded_before_the_first_cell(tmp_path, monkeypatch, capsys):
    def load(name, **kwargs):
        if name == "bbc":
            return _synthetic()
        raise FileNotFoundError(f"{name}: no such data")

    monkeypatch.setattr(topiczoo.datasets, "load_dataset", load)
    monkeypatch.setattr(topiczoo.compare, "load_dataset", load)
    argv = GRID[:2] + ["bbc,poliblog"] + GRID[3:] + ["--out", str(tmp_path / "g")]
    assert main(argv) == 2
    assert "poliblog: no such data" in capsys.readouterr().err
    assert not list((tmp_path / "g" / "cells").glob("*.json"))  # no cell ran before


@pytest.mark.parametrize("extra, message", [
    ("topics = [5]\noptions = 5\n", "options must be a table of tables"),
    ('topics = [5]\nsamplers = ["light"]\n', "samplers must be a table of sampler names"),
    ("topics = [5]\n[options]\ngslda = 5\n", "options for 'gslda' must be a table"),
    ("topics = [5]\n[samplers]\ngslda = 3\n", "the sampler for 'gslda' must be a name"),
    ("topics = [[5]]\n", "the grid's topics must be integers, got [5]"),
    ('topics = [5]\nseeds = ["0"]\n', "the grid's seeds must be integers, got '0'"),
    ("topics = [5]\nburnin = 2.5\n", "burnin must be an integer"),
    ("topics = [5]\nburnin = true\n", "burnin must be an integer"),
])
def test_grid_file_type_errors_are_clear(tmp_path, extra, message):
    config = tmp_path / "grid.toml"
    config.write_text('data = ["bbc"]\nmodels = ["gslda"]\niterations = 10\n' + extra)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        compare_module.load_grid(config).check()


def test_a_settings_file_takes_the_axes_from_the_command_line(tmp_path, synthetic):
    config = tmp_path / "settings.toml"
    config.write_text("iterations = 4\nchains = 1\nsnapshots = 2\ntest_burnin = 1\n"
                      "test_draws = 2\n[options.gslda]\nc = 4\n")
    out = tmp_path / "grid"
    assert main(["compare", "--config", str(config), "--data", "bbc", "--models", "gslda",
                 "--topics", "2", "--workers", "0", "--quiet", "--out", str(out)]) == 0
    cell = json.loads((out / "cells" / "bbc__gslda__K2__seed0.json").read_text())
    assert cell["settings"]["options"] == {"c": 4} and cell["settings"]["iterations"] == 4
    with pytest.raises(ValueError, match="needs 'data' \\(in the file or as --data\\)"):
        compare_module.load_grid(config)


def test_defaults_spelt_out_match_cells_made_without_them(tmp_path, synthetic, capsys):
    out = tmp_path / "grid"
    assert main(GRID + ["--out", str(out)]) == 0
    capsys.readouterr()
    default_c = compare_module.REGISTRY["gslda"].options()["c"]
    assert main(GRID[:-1] + ["--sampler", "gslda:exact", "--option", f"gslda:c={default_c}",
                             "--out", str(out)]) == 0
    assert "skipped 4 finished cells of 4" in capsys.readouterr().err


def test_a_rerun_with_other_models_leaves_no_stale_trees_or_comparison(tmp_path, synthetic):
    out = tmp_path / "grid"
    assert main(GRID + ["--out", str(out)]) == 0
    assert (out / "compare.md").exists() and list((out / "trees").glob("*.nc"))
    assert main(GRID[:3] + ["--models", "medlda"] + GRID[5:] + ["--out", str(out)]) == 0
    assert not (out / "compare.md").exists() and not list((out / "trees").glob("*.nc"))


def test_one_seed_has_no_sd_and_two_step_baselines_name_their_second_step(tmp_path, synthetic):
    out = tmp_path / "grid"
    argv = GRID[:4] + ["lda-svm"] + GRID[5:8] + ["0"] + GRID[9:] + ["--out", str(out)]
    assert main(argv) == 0
    (row,) = list(csv.DictReader(open(out / "table.csv")))
    assert row["response"] == "svm" and row["sd"] == ""
    assert "(n/a)" in (out / "table.md").read_text()
    rows = compare_module.table_rows(
        compare_module.Grid(["bbc"], ["hdp-glm"], [2]),
        {("bbc", "hdp-glm", 2, 0): {"value": 0.5, "metric": "accuracy", "response": None,
                                    "train_seconds": 1.0, "token_iterations_per_second": 1.0}})
    assert rows[0]["response"] == "glm"  # it was "svm"


def test_a_two_step_baseline_counts_its_second_step_as_training():
    from topiczoo.models.registry import REGISTRY
    from topiczoo.run import fit_and_predict

    data = _synthetic()
    run = fit_and_predict(REGISTRY["lda-svm"], 2, data.train, data.test, progress=False,
                          fit_kwargs=dict(num_chains=1, num_iterations=4, num_snapshots=1),
                          predict_kwargs=dict(num_burnin=1, num_draws=1))
    assert run.train_seconds > run.result.train_seconds  # the SVMs' training is in it


def test_multiclass_logistic_density_is_the_class_probability():
    """One logistic task per class: log softmax(S)[true class] (the tasks' joint density of
    the one-hot vector, normalised over the classes; unnormalised it fell below log(1/T))."""
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(2, 1, 3, 4, 6)).astype(np.float32)  # T = 4 classes
    labels = np.array([0, 3, 1, 2, 2, 0])
    run = SimpleNamespace(prediction=Prediction(scores, Task("multiclass", 4), Logistic(1.0)),
                          result=None)
    ll = compare_module.pointwise_log_likelihood(run, SimpleNamespace(labels=labels))
    S = scores.astype(np.float64)
    log_softmax = S - np.log(np.exp(S).sum(axis=3, keepdims=True))
    want = np.take_along_axis(log_softmax, labels[None, None, None, None, :], axis=3)[:, :, :, 0]
    np.testing.assert_allclose(ll, want.reshape(2, 3, 6), rtol=1e-10)
    assert np.allclose(np.exp(log_softmax).sum(axis=3), 1.0)


# ------------------------------------------- review: occupied topics, samplers in the table


def test_nonparametric_cells_record_occupied_topics_and_the_plot_places_them(
        tmp_path, synthetic, monkeypatch):
    """An HDP's K is its initial number of topics: its cells record the occupied topics at the
    end (the num_topics monitor's last draw per chain), the table shows them beside K and
    metric_vs_topics places the model there, not at the initial K."""
    import topiczoo.run

    real, last = topiczoo.run.fit_and_predict, {}

    def recording(entry, *args, fit_kwargs, **kwargs):
        run = real(entry, *args, fit_kwargs=fit_kwargs, **kwargs)
        if "num_topics" in run.result.draws:
            last[fit_kwargs["seed"]] = np.asarray(run.result.draws["num_topics"])[:, -1]
        return run

    monkeypatch.setattr(topiczoo.run, "fit_and_predict", recording)
    monkeypatch.setattr(topiczoo.compare, "fit_and_predict", recording)
    monkeypatch.setattr(topiczoo.tuning, "fit_and_predict", recording)
    out = tmp_path / "grid"
    argv = GRID[:4] + ["gslda,hdp-glm"] + GRID[5:12] + ["2"] + GRID[13:]
    assert main(argv + ["--out", str(out)]) == 0
    assert sorted(last) == [0, 1] and all(len(v) == 2 for v in last.values())
    for seed in (0, 1):
        cell = json.loads((out / "cells" / f"bbc__hdp-glm__K2__seed{seed}.json").read_text())
        assert cell["occupied_topics"]["per_chain"] == last[seed].tolist()
        assert cell["occupied_topics"]["mean"] == pytest.approx(last[seed].mean())
        assert (cell["occupied_topics"]["min"], cell["occupied_topics"]["max"]) == (
            last[seed].min(), last[seed].max())
        assert cell["occupied_topics"]["iteration"] == 4
    gslda_cell = json.loads((out / "cells" / "bbc__gslda__K2__seed0.json").read_text())
    assert "occupied_topics" not in gslda_cell
    both = np.concatenate([last[0], last[1]])
    assert both.max() > 2  # the tiny HDP grows beyond its initial K: the test tells them apart
    gslda, hdp = csv.DictReader(open(out / "table.csv"))
    assert gslda["occupied_topics"] == gslda["occupied_topics_min"] == ""
    assert float(hdp["occupied_topics"]) == pytest.approx(both.mean())
    assert (int(hdp["occupied_topics_min"]), int(hdp["occupied_topics_max"])) == (
        both.min(), both.max())
    table = (out / "table.md").read_text()
    assert f"| hdp-glm | exact | 2 | {both.mean():.1f} ({both.min()}-{both.max()}) |" in table
    assert "| gslda | exact | 2 |  |" in table
    assert "hdp-glm: nonparametric, K is the initial number of topics" in table
    rows = compare_module.table_rows(_grid_of(out), compare_module.read_cells(_grid_of(out), out))
    (gslda_s, hdp_s), left_out = compare_module.plot_series(rows, "topics")
    assert left_out == [] and (gslda_s["x"], gslda_s["nonparametric"]) == ([2], False)
    assert hdp_s["nonparametric"] and hdp_s["x"] == [pytest.approx(both.mean())]
    assert hdp_s["xerr"] == [[pytest.approx(both.mean() - both.min())],
                             [pytest.approx(both.max() - both.mean())]]
    assert "occupied" in hdp_s["label"] and hdp_s["notes"] == ["initial K=2"]
    (_, hdp_t), _ = compare_module.plot_series(rows, "train_seconds")
    assert hdp_t["nonparametric"] and hdp_t["notes"] == [f"K=2\u2192{both.mean():.0f}"]
    # cells written before the record: the column says so, the plot leaves the model out
    for seed in (0, 1):
        path = out / "cells" / f"bbc__hdp-glm__K2__seed{seed}.json"
        cell = json.loads(path.read_text())
        del cell["occupied_topics"]
        path.write_text(json.dumps(cell))
    rows = compare_module.write_outputs(_grid_of(out), out)
    assert rows[1]["occupied_topics"] is None
    assert "| hdp-glm | exact | 2 | not recorded |" in (out / "table.md").read_text()
    series, left_out = compare_module.plot_series(rows, "topics")
    assert [s["model"] for s in series] == ["gslda"] and left_out == ["hdp-glm"]


def _grid_of(out):
    """The grid a folder was written with (its grid.json)."""
    return compare_module.Grid(**json.loads((out / "grid.json").read_text()))


def test_the_table_names_the_sampler_each_row_ran(tmp_path, synthetic):
    out = tmp_path / "grid"
    assert main(GRID + ["--sampler", "medlda:light:mh_steps=3", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "table.csv")))
    assert [(r["model"], r["sampler"]) for r in rows] == [("gslda", "exact"),
                                                          ("medlda", "light:mh_steps=3")]
    table = (out / "table.md").read_text()
    assert "| model | sampler | K |" in table
    assert "| bbc | gslda | exact | 2 |" in table
    assert "| bbc | medlda | light:mh_steps=3 | 2 |" in table
    rows = compare_module.write_outputs(_grid_of(out), out)
    series, _ = compare_module.plot_series(rows, "topics")
    assert [s["label"] for s in series] == ["gslda", "medlda [light:mh_steps=3]"]


def test_one_grid_compares_samplers_of_one_model(tmp_path, synthetic, monkeypatch, capsys):
    """--models medlda,medlda@light: two rows of one model, each with its sampler; the
    model's options apply to both."""
    import topiczoo.run

    real, samplers = topiczoo.run.fit_and_predict, []

    def recording(entry, *args, fit_kwargs, options, **kwargs):
        samplers.append((entry.name, fit_kwargs["sampler"], options))
        return real(entry, *args, fit_kwargs=fit_kwargs, options=options, **kwargs)

    monkeypatch.setattr(topiczoo.run, "fit_and_predict", recording)
    monkeypatch.setattr(topiczoo.compare, "fit_and_predict", recording)
    monkeypatch.setattr(topiczoo.tuning, "fit_and_predict", recording)
    out = tmp_path / "grid"
    argv = (GRID[:4] + ["medlda,medlda@light:mh_steps=3"] + GRID[5:-1]
            + ["--option", "medlda:c=2", "--out", str(out)])
    assert main(argv + ["--quiet"]) == 0
    assert samplers == [("medlda", "exact", {"c": 2})] * 2 + [
        ("medlda", "light:mh_steps=3", {"c": 2})] * 2
    light = json.loads((out / "cells" / "bbc__medlda@light+mh_steps=3__K2__seed1.json")
                       .read_text())
    assert light["model"] == "medlda@light:mh_steps=3"
    assert light["settings"]["sampler"] == "light:mh_steps=3"
    assert light["settings"]["options"] == {"c": 2}
    rows = list(csv.DictReader(open(out / "table.csv")))
    assert [(r["model"], r["sampler"], r["seeds"]) for r in rows] == [
        ("medlda", "exact", "2"), ("medlda@light:mh_steps=3", "light:mh_steps=3", "2")]
    series, _ = compare_module.plot_series(
        compare_module.write_outputs(_grid_of(out), out), "topics")
    assert [s["label"] for s in series] == ["medlda", "medlda@light:mh_steps=3"]
    capsys.readouterr()
    assert main(argv) == 0  # with progress lines
    assert "skipped 4 finished cells of 4" in capsys.readouterr().err
    # a sampler with several options, from the command line and from a TOML models list
    assert cli._model_entries("medlda, medlda@light:mh_steps=4,proposals=cycle,gslda") == [
        "medlda", "medlda@light:mh_steps=4,proposals=cycle", "gslda"]
    with pytest.raises(argparse.ArgumentTypeError, match="'mh_steps=4' follows no MODEL@SAMPLER"):
        cli._model_entries("medlda,mh_steps=4")
    config = tmp_path / "grid.toml"
    config.write_text('data = ["bbc"]\nmodels = ["medlda", '
                      '"medlda@light:mh_steps=4,proposals=cycle"]\ntopics = [2]\n')
    grid = compare_module.load_grid(config)
    grid.check()
    assert grid.settings("medlda@light:mh_steps=4,proposals=cycle")["sampler"] == \
        "light:mh_steps=4,proposals=cycle"
    assert compare_module.cell_name("bbc", grid.models[1], 2, 0) == \
        "bbc__medlda@light+mh_steps=4,proposals=cycle__K2__seed0"


@pytest.mark.parametrize("argv, message", [
    (["--models", "medlda,medlda@exact"],
     "the grid's models 'medlda' and 'medlda@exact' are one model with one sampler (exact)"),
    (["--models", "medlda@light,medlda@light:mh_steps=2", "--sampler", "medlda:light"],
     "a sampler for 'medlda', which is not among the grid's models (its entries "
     "medlda@light, medlda@light:mh_steps=2 name their sampler after '@')"),
    (["--models", "medlda@ligth"], "unknown sampler 'ligth'"),
    (["--models", "shdp-hinge@light"], "unknown sampler 'light' for shdp-hinge"),
    (["--models", "hdp-glm@light"], "hdp-glm (its topic model: hdp): unknown sampler 'light'"),
    (["--models", "medlda@"], "model 'medlda@': no sampler after '@'"),
    (["--models", "medlda@light", "--option", "medlda@light:c=2"],
     "options belong to a registry model and apply to all its samplers; give them for "
     "'medlda'"),
    (["--models", "medlda:light"],
     "unknown model 'medlda:light' (a sampler is given as MODEL@SAMPLER, e.g. medlda@light"),
    (["--models", "medlda@light:mh_steps=4,proposals=cycle,eta=coordinate,gslda"],
     "medlda: sampler light: bad option 'eta=coordinate'"),
])
def test_samplers_in_the_model_list_are_checked(tmp_path, capsys, argv, message):
    assert main(["compare", "--data", "bbc", "--topics", "2", "--out",
                 str(tmp_path / "x")] + argv) == 2
    assert message in capsys.readouterr().err


def _ratings(seed=0, num_docs=24):
    """The two-topic corpus of :func:`_synthetic` with real responses (ratings)."""
    data = _synthetic(seed, num_docs)
    rng = np.random.default_rng(seed + 1)
    ratings = [Corpus(part.words, part.doc_offsets, part.vocabulary,
                      labels=part.labels + rng.normal(0.0, 0.3, part.num_docs))
               for part in (data.train, data.test)]
    return DataSet("movie-scale", *ratings, "regression", ("rating",), 0, "synthetic")


def test_cells_say_the_settings_in_force_and_refuse_a_changed_default(tmp_path, monkeypatch,
                                                                      capsys):
    """A cell stores its model's settings (a relative c with its value on the data: the table
    lists them) and every option as run, so that a cell made under another default (the
    sHDP's and MedLDA regression's c were a fixed 1 once) is refused, not shown as this
    grid's."""
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", lambda name, **kw: _ratings())
    monkeypatch.setattr(topiczoo.compare, "load_dataset", lambda name, **kw: _ratings())
    out = tmp_path / "grid"
    argv = (["compare", "--data", "movie-scale", "--models", "shdp-regression,medlda-regression"]
            + GRID[5:8] + ["0"] + GRID[9:] + ["--out", str(out)])
    assert main(argv) == 0
    cell = json.loads((out / "cells" / "movie-scale__shdp-regression__K2__seed0.json")
                      .read_text())
    assert cell["options_in_force"]["c"] is None and cell["hyperparameters"]["relative"] is True
    train_sd = float(np.std(_ratings().train.labels))
    assert cell["hyperparameters"]["c_in_force"] == pytest.approx(3.0 / train_sd, rel=1e-5)
    medlda = json.loads((out / "cells" / "movie-scale__medlda-regression__K2__seed0.json")
                        .read_text())
    assert medlda["hyperparameters"]["c_in_force"] == pytest.approx(10.0 / train_sd, rel=1e-5)
    table = (out / "table.md").read_text()
    assert "- movie-scale, shdp-regression: " in table and "c_in_force = " in table
    # the same cell as an older default would have written it
    cell["options_in_force"]["c"] = 1.0
    (out / "cells" / "movie-scale__shdp-regression__K2__seed0.json").write_text(json.dumps(cell))
    capsys.readouterr()
    assert main(argv) == 2
    assert "a default changed since" in capsys.readouterr().err
