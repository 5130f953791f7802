"""The command line end to end on the embedded corpus (few iterations: a smoke test of the
wiring; the samplers are proved elsewhere)."""

from __future__ import annotations

import json

import arviz as az
import numpy as np
import pytest

from topiczoo import cli
from topiczoo.cli import main

FAST = ["--topics", "4", "--chains", "2", "--iterations", "8", "--snapshots", "2",
        "--test-burnin", "2", "--test-draws", "2", "--quiet"]


@pytest.mark.slow  # end-to-end fits of four models on bbc
@pytest.mark.parametrize("model, extra, metric", [
    ("medlda", [], "test_accuracy"),
    ("lda-svm", [], "test_accuracy"),
    ("gslda-multitask", ["--data", "bbc-5"], "test_accuracy"),
    ("medlda", ["--data", "bbc-5", "--multilabel"], "f1"),
])
def test_fit_writes_summary_tree_and_plot(tmp_path, capsys, model, extra, metric):
    out = tmp_path / "run"
    assert main(["fit", "--model", model, "--out", str(out), *FAST, *extra]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert 0.0 <= summary[metric] <= 1.0
    for key in ("train_seconds", "token_iterations_per_second", "rhat", "test_metrics_by_strategy"):
        assert key in summary
    assert "log_likelihood" in summary["rhat"]
    tree = az.from_netcdf(out / "posterior.nc")
    assert tree["posterior"]["log_likelihood"].shape == (2, 4)
    assert (out / "trace.png").stat().st_size > 10_000
    topics_md = (out / "topics.md").read_text()  # chain 0's topics, their eta and words
    assert "| topic | tokens | share % |" in topics_md
    assert ("largest eta" in topics_md) == (model == "gslda-multitask" or "--multilabel" in extra)
    assert (out / "topics.png").stat().st_size > 10_000
    printed = capsys.readouterr().out
    assert "test (ma)" in printed and "r_hat" in printed
    # the report shows the metrics of the run's own task (not a binary sign rule)
    from topiczoo.diagnostics import diagnose

    report = diagnose(out)
    assert f"test {metric.removeprefix('test_')}:" in report
    assert f"ma {summary[metric]:.4f}" in report


@pytest.mark.slow
def test_diagnose_writes_report(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["fit", "--out", str(out), *FAST]) == 0
    capsys.readouterr()
    assert main(["diagnose", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "r_hat" in printed and "log_likelihood" in printed
    report = (out / "report.md").read_text()
    for png in ("rank.png", "gelman_rubin_brooks.png", "autocorr.png"):
        assert png in report and (out / png).stat().st_size > 5_000
    assert main(["diagnose", str(tmp_path / "nothing")]) == 2


def test_out_that_is_a_file_or_lies_under_one_is_refused(tmp_path, capsys):
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    assert main(["fit", "--out", str(a_file), *FAST]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
    assert main(["fit", "--out", str(a_file / "run"), *FAST]) == 2
    assert "which is a file" in capsys.readouterr().err


def test_a_folder_holding_files_is_refused_unless_overwrite(tmp_path, capsys):
    """A run into a folder that held another run replaced it without a word; now it is
    refused, and --overwrite replaces that run's outputs (the user's own files stay)."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "report.md").write_text("an old report")
    (out / "figures").mkdir()
    (out / "notes.txt").write_text("the user's own file")
    for check in (["--check"], []):
        assert main(["fit", "--out", str(out), *FAST, *check]) == 2
        assert (f"--out {out} already holds files (figures, notes.txt, report.md): give "
                "--overwrite to replace an earlier run's outputs there, --checkpoint to "
                "resume a run it holds, or another --out") in capsys.readouterr().err
        assert (out / "report.md").read_text() == "an old report"
    assert main(["fit", "--out", str(out), "--overwrite", *FAST]) == 0
    assert not (out / "report.md").exists() and not (out / "figures").exists()
    assert (out / "notes.txt").exists() and (out / "summary.json").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["fit", "--out", str(empty), *FAST, "--check"]) == 0  # an empty folder is free


def test_checkpoint_resumes_and_overwrite_starts_afresh(tmp_path, capsys):
    """--checkpoint resumes the run whose checkpoint is in --out; a folder holding another
    run's files and no checkpoint is refused; --overwrite starts afresh there, removing the
    earlier outputs and checkpoints."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "report.md").write_text("another run's report")
    argv = ["fit", "--out", str(out), "--checkpoint", *FAST]
    assert main(argv) == 2
    assert "holds files (report.md) but no checkpoint to resume" in capsys.readouterr().err
    assert main(argv + ["--overwrite"]) == 0
    assert not (out / "report.md").exists() and (out / "checkpoint.npz").exists()
    (out / "report.md").write_text("this run's report")
    assert main(argv) == 0  # a resume (of a finished run) keeps the folder
    assert (out / "report.md").read_text() == "this run's report"
    (out / "checkpoint.class3.npz").write_bytes(b"a one-vs-all run's class checkpoint")
    assert main(["fit", "--out", str(out), *FAST]) == 2  # without --checkpoint: a new run
    assert main(["fit", "--out", str(out), "--overwrite", *FAST]) == 0
    assert not [p.name for p in out.glob("checkpoint*")] and not (out / "report.md").exists()


def test_one_vs_all_resumes_from_its_class_checkpoints(tmp_path, monkeypatch, capsys):
    """One-vs-all fits ignored --checkpoint: Ctrl-C lost every finished class."""
    import topiczoo.ova

    argv = ["fit", "--model", "medlda-ova", "--data", "bbc-5", "--topics", "2", "--chains", "1",
            "--iterations", "4", "--snapshots", "1", "--test-burnin", "1", "--test-draws", "1",
            "--quiet"]
    assert main(argv + ["--out", str(tmp_path / "whole")]) == 0
    whole = json.loads((tmp_path / "whole" / "summary.json").read_text())
    out = tmp_path / "run"
    real_fit, fits = topiczoo.ova.fit, []

    def interrupted(*args, **kwargs):  # Ctrl-C during the third class's fit
        fits.append(kwargs["checkpoint"])
        if len(fits) == 3:
            raise KeyboardInterrupt
        return real_fit(*args, **kwargs)

    def at_once(*args, **kwargs):  # Ctrl-C before the first class's fit finished
        raise KeyboardInterrupt

    monkeypatch.setattr(topiczoo.ova, "fit", at_once)
    assert main(argv + ["--out", str(tmp_path / "early"), "--checkpoint"]) == 130
    assert "interrupted before any work was saved" in capsys.readouterr().err
    monkeypatch.setattr(topiczoo.ova, "fit", interrupted)
    assert main(argv + ["--out", str(out), "--checkpoint"]) == 130
    assert "resume with the same command" in capsys.readouterr().err
    assert sorted(p.name for p in out.glob("checkpoint*")) == [
        "checkpoint.class0.npz", "checkpoint.class1.npz"]
    monkeypatch.setattr(topiczoo.ova, "fit", real_fit)
    assert main(argv + ["--out", str(out), "--checkpoint"]) == 0
    resumed = json.loads((out / "summary.json").read_text())
    assert resumed["test_metrics_by_strategy"] == whole["test_metrics_by_strategy"]
    assert len(list(out.glob("checkpoint.class*.npz"))) == 5
    capsys.readouterr()
    assert main(["diagnose", str(out)]) == 2  # no tree: it says why
    assert "a one-vs-all run (gslda-ova, medlda-ova) fits one model per class" in \
        capsys.readouterr().err


def test_more_snapshots_than_post_burnin_iterations_are_reported(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["fit", "--out", str(out), *FAST, "--snapshots", "9"]) == 0  # 8 iterations
    assert ("warning: --snapshots 9: the post-burn-in iterations give 4 distinct snapshot "
            "points; 4 kept") in capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text())["snapshots"] == 4


def test_usage_errors_and_warnings_are_one_line_and_a_closed_pipe_is_quiet(capsys):
    import subprocess
    import sys
    import warnings

    with pytest.raises(SystemExit):
        main(["fit", "--model", "medlad"])
    err = capsys.readouterr().err
    assert err.startswith("topiczoo fit: error: argument --model: unknown model 'medlad' (did "
                          "you mean medlda?); choose from lda, ")
    assert err.count("\n") == 1 and err.rstrip().endswith("(topiczoo fit --help lists the options)")
    with pytest.raises(SystemExit):  # reported by fit, whose options it resembles
        main(["fit", "--modle", "medlda"])
    assert capsys.readouterr().err == (
        "topiczoo fit: error: unrecognized arguments: --modle medlda; did you mean --model? "
        "(topiczoo fit --help lists the options)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        cli._one_line_warning(UserWarning("not converged"), UserWarning, "x.py", 1)
    assert capsys.readouterr().err == "warning: not converged\n"
    broken = subprocess.run(
        [sys.executable, "-c", "import topiczoo.cli as c\n"
         "def main():\n    raise BrokenPipeError\n"
         "c.main = main\nc.console()"], capture_output=True, text=True)
    assert broken.returncode == 1 and broken.stderr == ""


@pytest.mark.parametrize("content", [b"", b"not netcdf at all", None])
def test_diagnose_on_a_broken_tree_is_a_clear_error(tmp_path, capsys, content):
    out = tmp_path / "run"
    if content is None:  # a real tree, truncated
        assert main(["fit", "--out", str(out), *FAST]) == 0
        tree = out / "posterior.nc"
        tree.write_bytes(tree.read_bytes()[:1000])
    else:
        out.mkdir()
        (out / "posterior.nc").write_bytes(content)
    capsys.readouterr()
    assert main(["diagnose", str(out)]) == 2
    err = capsys.readouterr().err
    assert "is not a readable netCDF-4 ArviZ tree" in err and "Traceback" not in err


def test_an_option_the_model_lacks_is_refused(capsys, tmp_path):
    assert main(["fit", "--model", "gslda", "--ell", "3", "--out", str(tmp_path), *FAST]) == 2
    assert "--model gslda has no option --ell" in capsys.readouterr().err
    assert main(["fit", "--model", "gslda", "--gamma", "3", "--out", str(tmp_path), *FAST]) == 2
    assert "its options: --c, --alpha, --beta, --nu2\n" in capsys.readouterr().err
    assert main(["fit", "--model", "shdp-map", "--data", "movie-scale", "--c", "3", "--check",
                 "--out", str(tmp_path), *FAST]) == 2  # the Gaussian response has no c
    assert "response='gaussian' takes s2" in capsys.readouterr().err
    assert main(["fit", "--model", "shdp-logistic", "--gamma", "3", "--check",
                 "--out", str(tmp_path), *FAST]) == 0


def test_a_supervised_run_without_snapshots_is_refused_before_fitting(capsys, tmp_path):
    """--snapshots 0 would train, then find nothing to predict from."""
    args = ["fit", "--model", "medlda", "--out", str(tmp_path / "run"), *FAST, "--snapshots", "0"]
    assert main(args + ["--check"]) == 2
    assert "medlda needs --snapshots >= 1" in capsys.readouterr().err
    assert main(["fit", "--model", "lda", "--out", str(tmp_path / "run"), *FAST,
                 "--snapshots", "0", "--check"]) == 0  # nothing to predict


@pytest.mark.parametrize("model, sampler, match", [
    ("medlda", "ligth", "unknown sampler 'ligth'"),
    ("shdp-logistic", "light", "unknown sampler 'light' for shdp-logistic"),
    ("hdp-glm", "light", "unknown sampler 'light' for hdp-glm (its topic model: hdp); choose "
                         "from exact"),
    ("lda", "light:eta_sweeps=3", "lda has no eta"),
    ("lda", "exact:eta=coordinate", "lda has no eta"),
    ("medlda", "medlda:light", "starts with a model name: a sampler is SAMPLER[:OPTIONS]"),
])
def test_a_bad_sampler_is_refused_before_the_previous_outputs_go(capsys, tmp_path, model,
                                                                 sampler, match):
    out = tmp_path / "run"
    out.mkdir()
    (out / "summary.json").write_text("{}")  # a previous run's output
    for check in ([], ["--check"]):
        assert main(["fit", "--model", model, "--sampler", sampler, "--out", str(out), *FAST,
                     "--overwrite", *check]) == 2
        assert match in capsys.readouterr().err
        assert (out / "summary.json").read_text() == "{}"


def test_help_states_every_default_once(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = capsys.readouterr().out
    assert "(default: None)" not in text
    assert "164.0 for medlda" in text and "64.0 for" in text


def test_the_command_exits_at_once_after_ctrl_c(monkeypatch):
    """console(): after an interrupt (main's 130) os._exit, not an interpreter exit under
    JAX's still-running threads (which aborted the process); other codes exit normally."""
    import topiczoo.cli as cli

    exits = []
    monkeypatch.setattr(cli.os, "_exit", exits.append)
    monkeypatch.setattr(cli, "main", lambda: 130)
    with pytest.raises(SystemExit):  # the recorded os._exit returns, so console goes on
        cli.console()
    assert exits == [130]
    monkeypatch.setattr(cli, "main", lambda: 2)
    with pytest.raises(SystemExit) as normal:
        cli.console()
    assert normal.value.code == 2 and exits == [130]


@pytest.mark.parametrize("model, setting, in_force", [
    ("shdp-gaussian", ("s2", 0.25), ("noise_variance", lambda y: 0.25 * np.var(y))),
    ("shdp-regression", ("c", 3.0), ("c_in_force", lambda y: 3.0 / np.std(y))),
    ("medlda-regression", ("c", 10.0), ("c_in_force", lambda y: 10.0 / np.std(y)))])
def test_a_relative_setting_is_reported_in_response_units(tmp_path, model, setting, in_force):
    """shdp-gaussian's default s2 is 1/4 of var(y), shdp-regression's c 3 per sd(y),
    medlda-regression's c 10 per sd(y): summary.json says the value each took."""
    from topiczoo import load_dataset

    try:
        train = load_dataset("movie-scale").train
    except FileNotFoundError as err:
        pytest.skip(f"movie-scale not found ({err})")
    out = tmp_path / "run"
    assert main(["fit", "--model", model, "--data", "movie-scale", "--topics", "3",
                 "--chains", "1", "--iterations", "4", "--snapshots", "1", "--test-burnin", "1",
                 "--test-draws", "1", "--quiet", "--out", str(out)]) == 0
    hyper = json.loads((out / "summary.json").read_text())["hyperparameters"]
    assert hyper[setting[0]] == setting[1] and hyper["relative"] is True
    assert hyper[in_force[0]] == pytest.approx(in_force[1](train.labels), rel=1e-5)


def _twenty_class_data(monkeypatch):
    """A 20-class data set of 60 short documents (3 per class), served as ``20news``."""
    import numpy as np

    import topiczoo.datasets
    from topiczoo.corpus import Corpus
    from topiczoo.datasets import DataSet

    rng = np.random.default_rng(0)
    y = np.arange(60) % 20
    counts = np.stack([rng.multinomial(10, np.kron(np.eye(20), np.full(2, 0.5))[c]) for c in y])
    corpus = Corpus.from_document_term(counts, [f"w{i}" for i in range(40)], y)
    data = DataSet("20news", corpus.subset(np.arange(40)), corpus.subset(np.arange(40, 60)),
                   "multiclass", tuple(f"class{c}" for c in range(20)), 0, "synthetic")
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", lambda name, **kw: data)


@pytest.mark.slow  # a 20-task fit
def test_twenty_tasks_get_their_metrics_summary_and_trace(tmp_path, monkeypatch, capsys):
    """20 tasks: the trace plot asked for 50 panels (arviz-plots stops at 40) and the command
    failed after training and prediction, before printing the metrics or writing summary.json."""
    _twenty_class_data(monkeypatch)
    out = tmp_path / "run"
    assert main(["fit", "--model", "medlda-multitask", "--data", "20news", "--out", str(out),
                 *FAST]) == 0
    assert "test_accuracy" in json.loads((out / "summary.json").read_text())
    assert (out / "trace.png").stat().st_size > 10_000
    assert "test (ma)" in capsys.readouterr().out
    from topiczoo.diagnostics import plot_trace

    title = plot_trace(az.from_netcdf(out / "posterior.nc")).get_viz("figure")._suptitle
    words = " ".join(title.get_text().split())  # the title is wrapped
    assert "not shown (pass var_names): augmentation_mean (20 elements)" in words


def test_a_trace_plot_that_fails_costs_no_result(tmp_path, monkeypatch, capsys):
    import topiczoo.diagnostics

    def broken(tree):
        raise ValueError("no figure today")

    monkeypatch.setattr(topiczoo.diagnostics, "plot_trace", broken)
    out = tmp_path / "run"
    assert main(["fit", "--model", "lda", "--out", str(out), *FAST]) == 0
    assert (out / "summary.json").exists() and not (out / "trace.png").exists()
    captured = capsys.readouterr()
    assert "trace.png not written: no figure today" in captured.err
    assert "trace.png" not in captured.out


def test_settings_given_as_numpy_scalars_are_named_as_plain_numbers():
    """A K from np.arange reached the models' checks as np.int64: numpy 2 writes it
    'np.int64(0)' in the messages."""
    from chains import small_corpus
    from topiczoo.models.registry import REGISTRY
    from topiczoo.run import fit_and_predict

    corpus = small_corpus()
    for topics, fit_kwargs, words in ((np.int64(0), {}, "num_topics must be an integer >= 1"),
                                      (2, {"num_chains": np.int64(0)},
                                       "num_chains must be an integer >= 1")):
        with pytest.raises(ValueError) as err:
            fit_and_predict(REGISTRY["lda"], topics, corpus, corpus, fit_kwargs=fit_kwargs,
                            progress=False)
        assert str(err.value) == f"{words}, got 0"


def test_no_function_of_the_command_line_is_a_long_room():
    """Each step of a command is a named function of at most 60 lines (run_fit was 147)."""
    import ast
    from pathlib import Path

    root = Path(__file__).parent.parent / "topiczoo"
    long = []
    for name in ("cli.py", "rundir.py", "registry_table.py", "run.py"):
        for node in ast.walk(ast.parse((root / name).read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > 60:
                    long.append(f"{name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert not long, long
