"""``fit(..., until_rhat=...)``: runs on, doubling, until the chains agree or the budget ends."""

import importlib
import json
import types
import warnings

import numpy as np
import pytest

import topiczoo.datasets
from chains import small_corpus
from test_cli_fuzz import _tiny_dataset
from topiczoo.cli import main
from topiczoo import ConvergenceWarning
from topiczoo.diagnostics import summary_table, to_datatree
from topiczoo.fit import _convergence, fit
from topiczoo.schedule import extended_stages as _extended_stages
from topiczoo.models import gslda
from topiczoo.models.shdp import shdp_hinge

fit_module = importlib.import_module("topiczoo.fit")  # the package exports the function ``fit``
SETTINGS = dict(num_chains=2, num_iterations=8, num_snapshots=2, chunk=4, progress=False)


def test_stages_double_with_half_as_burnin_up_to_the_budget():
    assert _extended_stages(8, 3, None) == [(8, 3)]
    assert _extended_stages(8, 3, 8) == [(8, 3)]
    assert _extended_stages(8, 3, 40) == [(8, 3), (16, 8), (32, 16), (40, 20)]


def test_budget_ends_with_a_warning_naming_the_monitor():
    corpus = small_corpus()
    with pytest.warns(ConvergenceWarning, match=r"not converged within max_iterations=32: the "
                                                r"rank R-hat of \w+"):
        result = fit(gslda(3), corpus, until_rhat=1.000001, max_iterations=32, **SETTINGS)
    assert result.iterations_done == 32 and result.num_burnin == 16
    assert [s.iteration for s in result.snapshots] == [24, 32]
    check = result.convergence
    assert not check["converged"] and check["iteration"] == 32
    assert check["rhat"][check["worst"]] == max(check["rhat"].values()) >= 1.000001
    assert set(result.label_invariant) & set(check["rhat"])
    # the extended run's draws are those of a run of that length from the start
    plain = fit(gslda(3), corpus, num_iterations=32, num_burnin=16,
                **{k: v for k, v in SETTINGS.items() if k != "num_iterations"})
    for name in plain.draws:
        np.testing.assert_array_equal(result.draws[name], plain.draws[name], err_msg=name)
    for a, b in zip(result.snapshots, plain.snapshots, strict=True):
        np.testing.assert_array_equal(a.arrays["n_wk"], b.arrays["n_wk"])


def test_stops_at_the_first_stage_that_converges(monkeypatch):
    """With R-hat scripted (3 checks: above, above, below) the run stops at the third stage."""
    largest = iter([1.5, 1.2, 1.004])
    real = fit_module._convergence

    def scripted(result, threshold, num_burnin, num_iterations):
        check = real(result, threshold, num_burnin, num_iterations)
        check["rhat"] = {"eta_norm": next(largest)}
        check.update(worst="eta_norm", converged=check["rhat"]["eta_norm"] < threshold)
        return check

    monkeypatch.setattr(fit_module, "_convergence", scripted)
    result = fit(gslda(3), small_corpus(), until_rhat=1.01, max_iterations=1000, **SETTINGS)
    assert result.iterations_done == 32 and result.convergence["converged"]


def test_loose_threshold_stops_at_num_iterations():
    result = fit(gslda(3), small_corpus(), until_rhat=100.0, **SETTINGS)
    assert result.iterations_done == 8 and result.convergence["converged"]
    assert result.num_burnin == 4


def test_interrupted_extended_run_resumes_to_the_same_draws(tmp_path):
    corpus = small_corpus()
    path = tmp_path / "run.npz"
    kw = dict(until_rhat=1.000001, max_iterations=32, **SETTINGS)

    def stop_in_the_second_stage(result):
        if result.iterations_done == 12:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit(gslda(3), corpus, checkpoint=path, callback=stop_in_the_second_stage, **kw)
    with pytest.warns(ConvergenceWarning):
        resumed = fit(gslda(3), corpus, checkpoint=path, **kw)
    with pytest.warns(ConvergenceWarning):
        whole = fit(gslda(3), corpus, **kw)
    assert resumed.iterations_done == whole.iterations_done == 32
    for name in whole.draws:
        np.testing.assert_array_equal(resumed.draws[name], whole.draws[name], err_msg=name)
    assert resumed.convergence == whole.convergence


@pytest.mark.parametrize("kw, message", [
    (dict(until_rhat=1.0), "until_rhat must be a number above 1"),
    (dict(until_rhat=float("nan")), "until_rhat must be a number above 1"),
    (dict(until_rhat="1.01"), "until_rhat must be a number above 1"),
    (dict(until_rhat=1.01, num_chains=1), "needs num_chains >= 2"),
    (dict(until_rhat=1.01, max_iterations=4), "max_iterations must be an integer >= 8"),
    (dict(max_iterations=40), "give until_rhat too"),
])
def test_bad_settings(kw, message):
    settings = {**SETTINGS, **kw}
    with pytest.raises(ValueError, match=message):
        fit(gslda(3), small_corpus(), **settings)


def test_command_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", _tiny_dataset)
    argv = ["fit", "--model", "gslda", "--topics", "3", "--chains", "2", "--iterations", "8",
            "--snapshots", "2", "--test-draws", "2", "--test-burnin", "2", "--quiet",
            "--out", str(tmp_path / "run")]
    assert main(argv + ["--until-rhat", "1.000001", "--max-iterations", "16"]) == 0
    # the ConvergenceWarning, printed on one line as the command prints every warning
    assert "warning: not converged within max_iterations=16" in capsys.readouterr().err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["iterations"] == 16 and summary["burnin"] == 8
    assert not summary["until_rhat"]["converged"] and summary["until_rhat"]["iteration"] == 16
    for bad, message in ((["--until-rhat", "1"], "--until-rhat must be a number above 1"),
                         (["--max-iterations", "20"], "give --until-rhat too"),
                         (["--until-rhat", "1.1", "--max-iterations", "4"],
                          "--max-iterations must be >= --iterations=8")):
        assert main(argv + bad) == 2
        assert message in capsys.readouterr().err


def _agree(check, table):
    """until_rhat's R-hats and the summary table's rank R-hat, monitor by monitor."""
    for label, value in check["rhat"].items():
        np.testing.assert_equal(value, table.loc[label, "r_hat"], err_msg=label)


def test_until_rhat_and_the_summary_table_agree_on_constant_monitors():
    """The review's run: train_accuracy constant at 1 in both chains had R-hat 1 in
    result.convergence and NaN ('?') in the summary table; both are now rhat()'s 1."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = fit(shdp_hinge(5), small_corpus(), num_chains=2, num_iterations=4,
                     until_rhat=1.05, max_iterations=16, progress=False)
    check = result.convergence
    table = summary_table(to_datatree(result))
    _agree(check, table)
    assert check["rhat"]["train_accuracy"] == table.loc["train_accuracy", "r_hat"] == 1.0


def _fake_run(**draws):
    """What _convergence reads of a FitResult: 2 chains of 8 draws after burn-in 4."""
    return types.SimpleNamespace(label_invariant=tuple(draws), draws=draws,
                                 draw_iterations=np.arange(1, 13), iterations_done=12,
                                 num_burnin=4, model=types.SimpleNamespace(
                                     describe=lambda: {"model": "toy"}),
                                 seed=0, num_chains=2, train_seconds=1.0, sampler="exact",
                                 token_iterations_per_second=1.0)


def test_constant_monitors_in_the_convergence_check():
    """Constant and equal in every chain: R-hat 1, no evidence against convergence;
    constant but different across chains: inf, not converged; too few draws: NaN, not
    converged, and the worst. The summary table says the same."""
    rng = np.random.default_rng(1)
    mixing = rng.normal(size=(2, 12))
    same = _fake_run(eta_norm=mixing, train_accuracy=np.ones((2, 12)))
    check = _convergence(same, 1.5, 4, 12)
    assert check["rhat"]["train_accuracy"] == 1.0 and check["converged"]
    stuck = _fake_run(eta_norm=mixing, num_topics=np.repeat([[3], [4]], 12, axis=1))
    check = _convergence(stuck, 1.5, 4, 12)
    assert check["worst"] == "num_topics" and np.isposinf(check["rhat"]["num_topics"])
    assert not check["converged"]
    _agree(check, summary_table(to_datatree(stuck)))
    short = _convergence(same, 1.5, 10, 12)  # 2 draws
    assert np.isnan(short["rhat"][short["worst"]]) and not short["converged"]


def test_the_warning_says_what_an_infinite_rhat_means(monkeypatch):
    """hdp-glm's num_topics stuck at a different value in each chain: 'inf >= 1.05' with no
    explanation; the warning now says it in words."""
    real = fit_module._convergence
    stuck = np.repeat([[3], [4]], 32, axis=1)

    def stuck_topics(result, threshold, num_burnin, num_iterations):
        run = types.SimpleNamespace(label_invariant=("num_topics",),
                                    draws={"num_topics": stuck[:, :len(result.draw_iterations)]},
                                    draw_iterations=result.draw_iterations,
                                    iterations_done=result.iterations_done)
        return real(run, threshold, num_burnin, num_iterations)

    monkeypatch.setattr(fit_module, "_convergence", stuck_topics)
    with pytest.warns(ConvergenceWarning, match=r"R-hat of num_topics is inf >= 1.05; inf "
                                                r"means every chain stayed at one constant "
                                                r"value.*zero variance within chains"):
        fit(gslda(3), small_corpus(), until_rhat=1.05, max_iterations=16, **SETTINGS)
