"""Chains in separated modes of the log joint: found, said in plain words by ``diagnose`` and
the report, shown in the trace, and chosen from by ``predict``."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from chains import small_corpus
from test_diagnostics import fake_result
from topiczoo import fit, predict
from topiczoo.diagnostics import diagnose, plot_trace, save_datatree, to_datatree
from topiczoo.errors import ConvergenceWarning
from topiczoo.models import medlda
from topiczoo.modes import modes_words, replica_swaps, replica_words, separated_modes


def two_modes(rng, num_draws=50):
    """Chains 1 and 3 near -900, chains 0 and 2 near -1,000, sd 5 each: two modes, 20 sds
    apart."""
    centres = np.array([-1000.0, -900.0, -1001.0, -899.0])[:, None]
    return centres + rng.normal(0, 5, (4, num_draws))


def one_mode(rng, num_draws=50):
    """Four chains of one stationary AR(1) process (autocorrelation 0.9): they overlap."""
    x = np.zeros((4, num_draws))
    x[:, 0] = rng.normal(0, 5, 4)
    for s in range(1, num_draws):
        x[:, s] = 0.9 * x[:, s - 1] + rng.normal(0, 5 * np.sqrt(1 - 0.81), 4)
    return x - 950.0


def test_separated_modes_groups_chains_best_first():
    rng = np.random.default_rng(0)
    modes = separated_modes(two_modes(rng))
    assert modes.separated and modes.groups == [[3, 1], [0, 2]] and modes.best == 3
    assert modes.gap() == pytest.approx(100, abs=5)
    words = modes_words(modes)
    assert "separated modes" in words and "Best chain: 3" in words and "chains=[3, 1]" in words
    for seed in range(20):  # chains of one mode, autocorrelated: never separated
        assert not separated_modes(one_mode(np.random.default_rng(seed))).separated
    # constant chains: equal ones agree, different ones are apart
    assert not separated_modes(np.full((3, 5), -7.0)).separated
    assert separated_modes(np.array([[-7.0] * 5, [-8.0] * 5])).groups == [[0], [1]]
    with pytest.raises(ValueError, match="at least 2 draws"):
        separated_modes(np.zeros((2, 1)))


def _run_dir(tmp_path, log_joint):
    rng = np.random.default_rng(1)
    draws = {"log_joint": log_joint, "eta_norm": rng.normal(3, 0.1, log_joint.shape)}
    result = fake_result(draws, np.arange(1, log_joint.shape[1] + 1), num_burnin=0,
                         label_invariant=("log_joint", "eta_norm"))
    tree = to_datatree(result)
    save_datatree(tree, tmp_path / "posterior.nc")
    (tmp_path / "summary.json").write_text(json.dumps({"data": "toy"}))
    return tree


def test_diagnose_says_when_chains_sit_in_separated_modes(tmp_path):
    rng = np.random.default_rng(2)
    (tmp_path / "two").mkdir()
    _run_dir(tmp_path / "two", two_modes(rng))
    out = diagnose(tmp_path / "two")
    assert "separated modes: the chains' log joints sit in 2 groups" in out
    assert "Best chain: 3" in out
    report = (tmp_path / "two" / "report.md").read_text()
    assert "## Modes of the log joint" in report and "| 3 (best) |" in report
    (tmp_path / "one").mkdir()
    _run_dir(tmp_path / "one", one_mode(rng))
    out = diagnose(tmp_path / "one")
    assert "no separated modes seen" in out and "separated modes:" not in out


def test_the_trace_draws_the_best_chain_thick():
    rng = np.random.default_rng(3)
    draws = {"log_joint": two_modes(rng)}
    tree = to_datatree(fake_result(draws, np.arange(1, 51), 0, label_invariant=("log_joint",)))
    pc = plot_trace(tree, kind=None)
    lines = pc.viz["trace"]["log_joint"]
    widths = [lines.sel(chain=c).item().get_linewidth() for c in range(4)]
    assert widths[3] > 2 * widths[0] and widths[0] == widths[1] == widths[2]
    title = pc.get_viz("figure").get_suptitle()
    assert "best chain 3" in title.replace("\n", " ")
    flat = plot_trace(to_datatree(fake_result({"log_joint": one_mode(rng)}, np.arange(1, 51), 0,
                                              label_invariant=("log_joint",))), kind=None)
    widths = [flat.viz["trace"]["log_joint"].sel(chain=c).item().get_linewidth()
              for c in range(4)]
    assert len(set(widths)) == 1


@pytest.fixture(scope="module")
def small_fit():
    corpus = small_corpus()
    result = fit(medlda(3, c=1.0, ell=2.0), corpus, num_chains=3, num_iterations=8,
                 num_burnin=4, num_snapshots=2, seed=2, progress=False)
    return result, corpus


def test_predict_averages_over_the_chosen_chains(small_fit):
    result, corpus = small_fit
    kw = dict(num_burnin=2, num_draws=2, seed=1)
    everything = predict(result, corpus, chains=None, **kw).scores
    picked = predict(result, corpus, chains=[2, 0], **kw).scores
    np.testing.assert_array_equal(picked, everything[[2, 0]])
    for bad in ([3], [0, 0], [], "worst", [-1]):
        with pytest.raises(ValueError, match="chains"):
            predict(result, corpus, chains=bad, **kw)


def test_predict_warns_when_the_chains_disagree_and_picks_the_best_mode(small_fit):
    result, corpus = small_fit
    kw = dict(num_burnin=2, num_draws=2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        predict(result, corpus, **kw)  # 3 chains of one small posterior: no warning
    draws = dict(result.draws)
    apart = np.array([-500.0, -400.0, -401.0])[:, None] + np.linspace(0, 10, 8)
    draws["log_joint"] = apart.astype(np.float32)
    result.draws, saved = draws, result.draws
    try:
        with pytest.warns(ConvergenceWarning, match=r"Best chain: 1 .*chains=\[1, 2\]"):
            predict(result, corpus, **kw)
        best = predict(result, corpus, chains="best", **kw).scores
        np.testing.assert_array_equal(best, predict(result, corpus, chains=[1, 2], **kw).scores)
    finally:
        result.draws = saved


def _swaps(rates, mean_log_ratios, num_chains=2, num_draws=30, seed=4):
    """Synthetic swap monitors [C, S, R - 1]: rates reached by the last draw, log ratios
    scattered around their means."""
    rng = np.random.default_rng(seed)
    rates = np.asarray(rates, np.float64)
    swap_rate = np.broadcast_to(rates, (num_chains, num_draws, rates.size)).copy()
    swap_log_ratio = np.asarray(mean_log_ratios) + rng.normal(
        0, 0.1, (num_chains, num_draws, rates.size))
    return swap_rate, swap_log_ratio - swap_log_ratio.mean(axis=(0, 1)) + mean_log_ratios


def test_replica_words_names_the_pairs_that_do_not_exchange():
    swaps = replica_swaps(*_swaps([0.0, 0.0, 0.0], [-2000.0, -1700.0, -40.0]))
    # sqrt(2000 / 2) = 31.6, sqrt(850) = 29.2, sqrt(20) = 4.5: gaps 32 + 30 + 5, a replica more
    assert list(swaps.splits) == [32, 30, 5] and swaps.replicas_needed == 68
    assert swaps.stuck == [0, 1, 2]
    words = replica_words(swaps)
    assert "replicas (0, 1), (1, 2), (2, 3) do not exchange" in words
    assert "down to -2000 nats" in words and "About 68 replicas" in words
    assert "the cold replica's draws are its own chain's" in words
    assert "an annealed burn-in (sampler exact:anneal=A)" in words
    # the cold pair exchanges, the hot one does not
    words = replica_words(replica_swaps(*_swaps([0.3, 0.01], [-1.5, -400.0])))
    assert "replicas (1, 2) do not exchange" in words
    assert "replicas 2 and above do not reach the cold one" in words and "About 17" in words
    # every pair exchanges: one line, no advice
    words = replica_words(replica_swaps(*_swaps([0.41, 0.35], [-1.2, -1.9])))
    assert words == ("replica exchange: every neighbouring pair of replicas swaps (accepted "
                     "shares 0.41, 0.35)")
    with pytest.raises(ValueError, match="chains, draws, replicas - 1"):
        replica_swaps(np.zeros((2, 3)), np.zeros((2, 3)))


def test_diagnose_says_when_replicas_do_not_exchange(tmp_path):
    rng = np.random.default_rng(5)
    for name, rates, ratios in [("stuck", [0.0, 0.0], [-900.0, -700.0]),
                                ("exchanging", [0.4, 0.3], [-1.0, -2.5])]:
        swap_rate, swap_log_ratio = _swaps(rates, ratios, num_chains=4, num_draws=50)
        log_joint = one_mode(rng)
        draws = {"log_joint": log_joint, "swap_rate": swap_rate,
                 "swap_log_ratio": swap_log_ratio}
        result = fake_result(draws, np.arange(1, 51), num_burnin=0,
                             label_invariant=("log_joint",))
        (tmp_path / name).mkdir()
        save_datatree(to_datatree(result), tmp_path / name / "posterior.nc")
        out = diagnose(tmp_path / name)
        report = (tmp_path / name / "report.md").read_text()
        assert "## Replica exchange" in report and "| (1, 2) |" in report
        if name == "stuck":
            assert "replicas (0, 1), (1, 2) do not exchange" in out and "About 42" in out
        else:
            assert "every neighbouring pair of replicas swaps" in out
            assert "do not exchange" not in out
    # a run without replicas has no such section
    (tmp_path / "plain").mkdir()
    _run_dir(tmp_path / "plain", one_mode(rng))
    assert "replica exchange" not in diagnose(tmp_path / "plain")
