"""The command line end to end on the embedded corpus (few iterations: a smoke test of the
wiring; the samplers are proved elsewhere)."""

from __future__ import annotations

import json

import arviz as az
import pytest

from topiczoo.cli import main

FAST = ["--topics", "4", "--chains", "2", "--iterations", "8", "--snapshots", "2",
        "--test-burnin", "2", "--test-draws", "2", "--quiet"]


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
    printed = capsys.readouterr().out
    assert "test (ma)" in printed and "r_hat" in printed
    # the report shows the metrics of the run's own task (not a binary sign rule)
    from topiczoo.diagnostics import diagnose

    assert f"test {metric.removeprefix('test_')}:" in diagnose(out)
    assert f"ma {summary[metric]:.4f}" in diagnose(out)


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
