"""topiczoo.diagnostics: DataTree export, netCDF round trip, convergence tables, plots.

All but the last test use synthetic FitResult-like objects (no model fit).
"""

import types
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

from topiczoo.diagnostics import (
    LABEL_INVARIANT,
    DiagnosticUnavailable,
    Report,
    diagnose,
    format_table,
    gelman_rubin_brooks,
    load_datatree,
    plot_autocorr,
    plot_gelman_rubin_brooks,
    plot_rank,
    plot_trace,
    save_datatree,
    save_figure,
    summary_table,
    to_datatree,
    write_report,
)
from topiczoo.diagnostics.convergence import format_table_markdown, rhat, rhat_meaning

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def fake_model(supervised=True):
    """A model look-alike: only ``describe()``, the flat facts the diagnostics record."""
    facts = {"model": "supervised-toy" if supervised else "toy", "num_topics": 3,
             "alpha": 1.0, "alpha_per_topic": 1 / 3, "beta": 0.01}
    if supervised:
        facts.update(nu2=1.0, response="hinge", c=2.0, ell=164.0, learn_s2=False)
    return types.SimpleNamespace(describe=lambda: dict(facts))


def fake_result(draws, iterations, num_burnin, *, supervised=True, snapshots=(), seed=3,
                train_seconds=12.5, sample_stats=None, **extra):
    """A FitResult look-alike carrying only what the diagnostics read."""
    model = fake_model(supervised)
    num_chains = next(iter(draws.values())).shape[0]
    iterations = np.asarray(iterations)
    return types.SimpleNamespace(
        draws=draws, draw_iterations=iterations, num_burnin=num_burnin, model=model, seed=seed,
        num_chains=num_chains, thinning=1, num_tokens=1000, train_seconds=train_seconds,
        iterations_done=int(iterations[-1]),
        token_iterations_per_second=(1000 * int(iterations[-1]) * num_chains / train_seconds
                                     if train_seconds else float("nan")),
        snapshots=[types.SimpleNamespace(iteration=i) for i in snapshots],
        **({} if sample_stats is None else {"sample_stats": sample_stats}),
        **{"sampler": "exact", "label_invariant": (), **extra})


def supervised_draws(rng, num_chains=4, num_draws=40, num_tasks=2, num_topics=3):
    shape = (num_chains, num_draws)
    return {
        "log_likelihood": rng.normal(-1000, 5, shape).astype(np.float32),
        "eta": rng.normal(0, 1, shape + (num_tasks, num_topics)).astype(np.float32),
        "eta_norm": rng.normal(3, 0.1, shape).astype(np.float32),
        "omega_mean_abs": rng.normal(1, 0.1, shape).astype(np.float32),
        "train_loss": rng.normal(0.5, 0.05, shape).astype(np.float32),
        "train_accuracy": rng.uniform(0.8, 1.0, shape).astype(np.float32),
        "augmentation_mean": rng.gamma(2.0, 1.0, shape + (num_tasks,)).astype(np.float32),
    }


def tree_of(values, num_burnin=0, iterations=None):
    """A tree with one monitor ``eta_norm`` [C, S] (and a copy as ``log_likelihood``)."""
    values = np.asarray(values)
    if iterations is None:
        iterations = np.arange(1, values.shape[1] + 1)
    draws = {"eta_norm": values, "log_likelihood": values * 10.0}
    return to_datatree(fake_result(draws, iterations, num_burnin))


# ------------------------------------------------------------------------------ to_datatree


def test_to_datatree_splits_burnin_and_keeps_iterations():
    rng = np.random.default_rng(0)
    iterations = np.arange(2, 81, 2)  # thinning 2: 40 draws, iterations 2..80
    draws = supervised_draws(rng)
    tree = to_datatree(fake_result(draws, iterations, num_burnin=30))
    warm, post = tree["warmup_posterior"], tree["posterior"]
    # draw is 0..n-1 in each group; the Gibbs iteration is its own coordinate on draw
    np.testing.assert_array_equal(warm["draw"].values, np.arange(15))
    np.testing.assert_array_equal(post["draw"].values, np.arange(25))
    np.testing.assert_array_equal(warm["iteration"].values, np.arange(2, 31, 2))
    np.testing.assert_array_equal(post["iteration"].values, np.arange(32, 81, 2))
    assert post["iteration"].dims == ("draw",) and "iteration" not in post.dims
    keep = iterations > 30
    for name, array in draws.items():
        np.testing.assert_array_equal(post[name].values, array[:, keep])
        np.testing.assert_array_equal(warm[name].values, array[:, ~keep])
    assert post["eta"].dims == ("chain", "draw", "task", "topic")
    assert post["augmentation_mean"].dims == ("chain", "draw", "task")
    assert post["log_likelihood"].dims == ("chain", "draw")
    np.testing.assert_array_equal(post["chain"].values, np.arange(4))
    assert "sample_stats" not in tree.children  # this fake fit recorded no per-draw timing
    attrs = tree.attrs
    assert attrs["created_by"] == "topiczoo"
    # the model's facts come from describe(), as they are (booleans as 0/1 for netCDF)
    assert (attrs["model"], attrs["num_topics"], attrs["seed"]) == ("supervised-toy", 3, 3)
    assert (attrs["alpha"], attrs["beta"], attrs["nu2"], attrs["c"], attrs["ell"]) == (
        1.0, 0.01, 1.0, 2.0, 164.0)
    assert (attrs["response"], attrs["learn_s2"]) == ("hinge", 0)
    assert attrs["sampler"] == "exact"  # a result without a sampler name
    assert attrs["train_seconds"] == 12.5
    assert attrs["token_iterations_per_second"] == pytest.approx(1000 * 80 * 4 / 12.5)
    named = to_datatree(fake_result(draws, iterations, num_burnin=30, sampler="other"))
    assert named.attrs["sampler"] == "other"


def test_arviz_works_on_the_tree_unpatched():
    import arviz
    import arviz_plots

    rng = np.random.default_rng(15)
    tree = to_datatree(fake_result(supervised_draws(rng, num_draws=30, num_tasks=2),
                                   np.arange(5, 65, 2), num_burnin=20))
    rhat = arviz.rhat(tree)  # the posterior group, all variables
    assert rhat["eta_norm"].shape == () and rhat["augmentation_mean"].dims == ("task",)
    assert np.isfinite(rhat["log_likelihood"].item())
    pc = arviz_plots.plot_autocorr(tree, var_names=["eta_norm", "log_likelihood"])
    ax = pc.viz["plot"]["eta_norm"].item()
    assert tree["posterior"].sizes["draw"] == 22  # iterations 21, 23, ..., 63
    np.testing.assert_array_equal(ax.lines[-1].get_xdata(), np.arange(22))  # lags 0..n-1
    plt.close("all")


def test_to_datatree_routes_time_per_iteration_to_sample_stats():
    rng = np.random.default_rng(12)
    draws = supervised_draws(rng, num_chains=2, num_draws=10)
    # two chunks of 5 iterations: 0.9 s/it (with compilation), then 0.2 s/it
    timing = np.repeat([[0.9] * 5 + [0.2] * 5], 2, axis=0)
    tree = to_datatree(fake_result(draws, np.arange(1, 11), num_burnin=4,
                                   sample_stats={"time_per_iteration": timing}))
    stats, warm = tree["sample_stats"], tree["warmup_sample_stats"]
    assert stats["time_per_iteration"].dims == ("chain", "draw")
    np.testing.assert_array_equal(stats["draw"].values, np.arange(6))
    np.testing.assert_array_equal(stats["iteration"].values, np.arange(5, 11))
    np.testing.assert_array_equal(warm["iteration"].values, np.arange(1, 5))
    np.testing.assert_array_equal(stats["time_per_iteration"].values, timing[:, 4:])
    np.testing.assert_array_equal(warm["time_per_iteration"].values, timing[:, :4])
    assert "time_per_iteration" not in tree["posterior"].data_vars
    # a draw of that name in ``draws`` is routed the same way
    routed = to_datatree(fake_result({**draws, "time_per_iteration": timing},
                                     np.arange(1, 11), num_burnin=4))
    xr.testing.assert_equal(routed["sample_stats"].to_dataset(), stats.to_dataset())


def test_to_datatree_unsupervised_has_no_response_attrs_and_no_warmup_when_none():
    rng = np.random.default_rng(1)
    draws = {"log_likelihood": rng.normal(size=(2, 10))}
    tree = to_datatree(fake_result(draws, np.arange(1, 11), num_burnin=0, supervised=False))
    assert set(tree.children) == {"posterior"}
    for key in ("nu2", "c", "ell", "response"):
        assert key not in tree.attrs
    assert tree.attrs["model"] == "toy"


def test_to_datatree_predictions_and_observed_data():
    rng = np.random.default_rng(2)
    draws = supervised_draws(rng, num_chains=2, num_draws=12, num_tasks=2)
    result = fake_result(draws, np.arange(1, 13), num_burnin=6, snapshots=(8, 10, 12))
    scores = rng.normal(size=(2, 3, 4, 2, 5)).astype(np.float32)
    labels = rng.integers(0, 2, size=(5, 2))  # [D, T]: transposed to (task, document)
    tree = to_datatree(result, types.SimpleNamespace(scores=scores, zbar=None), labels)
    pred = tree["predictions"]
    assert pred["scores"].dims == ("chain", "snapshot", "test_draw", "task", "document")
    np.testing.assert_array_equal(pred["snapshot"].values, [8, 10, 12])
    np.testing.assert_array_equal(pred["scores"].values, scores)
    np.testing.assert_array_equal(tree["observed_data"]["y"].values, labels.T)
    assert tree["observed_data"]["y"].dims == ("task", "document")
    with pytest.raises(ValueError, match="snapshots"):
        to_datatree(fake_result(draws, np.arange(1, 13), 6, snapshots=(12,)),
                    types.SimpleNamespace(scores=scores, zbar=None))


# ------------------------------------------------------------------------------ storage


def test_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    draws = supervised_draws(rng, num_chains=3, num_draws=20)
    draws["log_likelihood"] = draws["log_likelihood"].astype(np.float64)
    result = fake_result(draws, np.arange(1, 21), num_burnin=10, snapshots=(15, 20),
                         train_seconds=0.0)  # NaN throughput attribute
    scores = rng.normal(size=(3, 2, 2, 2, 7)).astype(np.float32)
    zbar = rng.dirichlet(np.ones(3), size=(3, 2, 2, 7)).astype(np.float32)
    tree = to_datatree(result, types.SimpleNamespace(scores=scores, zbar=zbar),
                       rng.integers(0, 2, size=(2, 7)))
    path = save_datatree(tree, tmp_path / "run.nc")
    loaded = load_datatree(path)
    xr.testing.assert_identical(loaded, tree)
    assert list(loaded.children) == list(tree.children)
    for node in tree.subtree:
        other = loaded[node.path]
        for name, var in node.variables.items():
            assert other[name].dtype == var.dtype, (node.path, name)
            assert other[name].attrs == var.attrs
    assert loaded.attrs["num_topics"] == 3
    assert np.isnan(loaded.attrs["token_iterations_per_second"])
    # saving again over the same file replaces it
    save_datatree(tree.drop_nodes("predictions"), path)
    assert "predictions" not in load_datatree(path).children


def test_load_datatree_reads_trees_whose_draw_held_the_iterations(tmp_path):
    rng = np.random.default_rng(4)
    tree = to_datatree(fake_result(supervised_draws(rng, num_chains=2, num_draws=10),
                                   np.arange(3, 31, 3), num_burnin=12))
    old = tree.copy()
    for group in ("posterior", "warmup_posterior"):  # the former layout: draw = iteration
        ds = tree[group].to_dataset()
        old[group] = ds.assign_coords(draw=ds["iteration"].values).drop_vars("iteration")
    loaded = load_datatree(save_datatree(old, tmp_path / "old.nc"))
    xr.testing.assert_identical(loaded, tree)


# ------------------------------------------------------------------------------ convergence


def test_rhat_near_one_for_iid_chains():
    rng = np.random.default_rng(5)
    table = summary_table(tree_of(rng.standard_normal((4, 1000))))
    assert list(table.index) == ["log_likelihood", "eta_norm"]  # LABEL_INVARIANT order
    assert (table["r_hat"] < 1.01).all()
    assert (table["r_hat_classic"] < 1.01).all()
    assert (table["ess_bulk"] > 2000).all() and (table["ess_tail"] > 2000).all()
    row = table.loc["eta_norm"]
    assert abs(row["mean"]) < 4 * row["mcse_mean"] + 1e-12
    assert row["sd"] == pytest.approx(1.0, abs=0.05)
    assert row["mcse_mean"] == pytest.approx(1 / np.sqrt(4000), rel=0.2)


def test_rhat_large_for_stuck_chains():
    rng = np.random.default_rng(6)
    values = rng.standard_normal((4, 500)) + np.array([0.0, 2.0, 4.0, 6.0])[:, None]
    table = summary_table(tree_of(values))
    assert (table["r_hat"] > 1.1).all()
    assert (table["r_hat_classic"] > 1.1).all()


def test_rhat_infinite_for_constant_chains_that_differ():
    """Each chain constant, chains not all equal (an sHDP's number of topics stuck at 3 in
    one chain and 4 in the other): R-hat is infinite, not arviz_stats' arbitrary large number;
    chains that are all equal have R-hat 1; a chain that jumps once between its halves is
    constant in each half, so only the split (rank) R-hat is infinite."""
    stuck = summary_table(tree_of(np.repeat([[3.0], [4.0]], 40, axis=1)))
    assert np.isposinf(stuck["r_hat"]).all() and np.isposinf(stuck["r_hat_classic"]).all()
    assert "inf" in format_table(stuck) and "zero variance within chains" in format_table(stuck)
    same = summary_table(tree_of(np.full((2, 40), 3.0)))
    assert (same["r_hat"] == 1).all() and (same["r_hat_classic"] == 1).all()
    jump = np.repeat([[3.0], [3.0]], 40, axis=1)
    jump[0, 20:] = 4.0
    jumped = summary_table(tree_of(jump))
    assert np.isposinf(jumped["r_hat"]).all() and np.isfinite(jumped["r_hat_classic"]).all()
    short = summary_table(tree_of(np.array([[3.0, 3.0, 3.0], [4.0, 4.0, 4.0]])))
    assert np.isnan(short["r_hat"]).all()  # fewer than 4 draws: undefined, not inf


def test_summary_table_defaults_to_label_invariant_monitors_and_expands_elements():
    rng = np.random.default_rng(7)
    tree = to_datatree(fake_result(supervised_draws(rng, num_tasks=2), np.arange(1, 41), 0))
    table = summary_table(tree)
    assert not any(label.startswith("eta[") for label in table.index)
    assert list(table.index) == ["log_likelihood", "eta_norm", "train_loss", "train_accuracy",
                                 "omega_mean_abs", "augmentation_mean[0]",
                                 "augmentation_mean[1]"]
    assert set(LABEL_INVARIANT) >= {i.split("[")[0] for i in table.index}
    eta = summary_table(tree, var_names=["eta"])  # allowed when asked for explicitly
    assert len(eta) == 2 * 3 and eta.index[0] == "eta[0,0]"
    with pytest.raises(KeyError):
        summary_table(tree, var_names=["nope"])


def test_format_table_lists_monitors_and_marks():
    rng = np.random.default_rng(8)
    values = rng.standard_normal((4, 200)) + np.array([0.0, 0.0, 5.0, 5.0])[:, None]
    with_nan = rng.standard_normal((4, 200))
    with_nan[2, 7] = np.nan
    tree = to_datatree(fake_result({"eta_norm": values, "train_accuracy": np.ones((4, 200)),
                                    "train_loss": with_nan}, np.arange(1, 201), 0))
    text = format_table(summary_table(tree), compact=False)  # every row as it is
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["monitor", "mean"] and "r_hat_classic" in lines[0]
    eta_line = next(line for line in lines if line.startswith("eta_norm"))
    acc_line = next(line for line in lines if line.startswith("train_accuracy"))
    loss_line = next(line for line in lines if line.startswith("train_loss"))
    # a constant monitor has R-hat 1 (the chains agree), no mark; a NaN draw: undefined
    assert eta_line.endswith("*") and acc_line.endswith("1.000") and loss_line.endswith("?")
    assert "not converged" in text and "undefined" in text
    compact = format_table(summary_table(tree))  # the constant one left out, with a note
    assert not any(line.startswith("train_accuracy") for line in compact.splitlines())
    assert "left out, constant in every chain and draw: train_accuracy = 1" in compact
    assert "not converged" in compact and "undefined" in compact


def converging_chains(seed=9, num_chains=4, num_draws=400, scale=30.0):
    """Chains that start far apart (-6, -2, 2, 6) and relax into N(0, 1)."""
    rng = np.random.default_rng(seed)
    start = np.linspace(-6, 6, num_chains)[:, None]
    decay = np.exp(-np.arange(1, num_draws + 1) / scale)[None]
    return start * decay + rng.standard_normal((num_chains, num_draws))


def test_gelman_rubin_brooks_decreases_to_one():
    tree = tree_of(converging_chains(), num_burnin=200)  # whole run = warmup + posterior
    iterations, curve = gelman_rubin_brooks(tree, "eta_norm", num_points=20)
    assert iterations.shape == curve.shape == (20,)
    assert iterations[-1] == 400 and np.all(np.diff(iterations) > 0)
    assert curve[0] > 2.0  # chains apart at the start
    assert curve[-1] < 1.05  # and mixed at the end
    assert np.all(curve[len(curve) // 2:] < 1.1)
    # non-increasing up to noise once it has reached 1.1
    assert np.all(np.diff(curve[:5]) < 0)
    # the full-prefix window keeps the start-up transient and decays more slowly
    _, full = gelman_rubin_brooks(tree, "eta_norm", num_points=20, window="full")
    assert full[-1] > curve[-1]


def test_gelman_rubin_brooks_reports_iterations_of_thinned_runs():
    values = converging_chains(num_draws=100)
    tree = tree_of(values, num_burnin=50, iterations=np.arange(3, 301, 3))  # thinning 3
    iterations, curve = gelman_rubin_brooks(tree, "eta_norm", num_points=10)
    assert iterations[-1] == 300 and np.all(iterations % 3 == 0)
    _, same = gelman_rubin_brooks(tree_of(values, num_burnin=50), "eta_norm", num_points=10)
    np.testing.assert_allclose(curve, same)  # the curve depends on the draws, not the labels


def test_gelman_rubin_brooks_elements_and_errors():
    rng = np.random.default_rng(10)
    tree = to_datatree(fake_result(supervised_draws(rng, num_tasks=2), np.arange(1, 41), 20))
    iterations, curve = gelman_rubin_brooks(tree, "augmentation_mean", num_points=5)
    assert curve.shape == (len(iterations), 2)
    with pytest.raises(KeyError):
        gelman_rubin_brooks(tree, "nope")
    one_chain = tree_of(rng.normal(size=(1, 40)))
    with pytest.raises(DiagnosticUnavailable, match="2 chains"):
        gelman_rubin_brooks(one_chain, "eta_norm")


# ------------------------------------------------------------------------------ plots


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 5000


@pytest.fixture(scope="module")
def plot_tree():
    rng = np.random.default_rng(11)
    draws = supervised_draws(rng, num_draws=60, num_tasks=1)
    draws["eta_norm"] = (converging_chains(num_draws=60, scale=8.0) + 3).astype(np.float32)
    return to_datatree(fake_result(draws, np.arange(1, 61), num_burnin=30))


@pytest.fixture
def no_open_figures():
    plt.close("all")
    yield
    plt.close("all")


def test_plot_trace_returns_plot_collection(tmp_path, plot_tree, no_open_figures):
    from arviz_plots import PlotCollection

    pc = plot_trace(plot_tree)
    assert isinstance(pc, PlotCollection)
    axes = pc.viz["plot"]["eta_norm"]
    trace_ax = axes.sel(column="trace").item()
    # x axis: the Gibbs iterations of the posterior draws
    np.testing.assert_array_equal(trace_ax.lines[0].get_xdata(), np.arange(31, 61))
    whole = plot_trace(plot_tree, var_names=["eta_norm"], include_warmup=True, kind=None)
    ax = whole.viz["plot"]["eta_norm"].item()
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), np.arange(1, 61))
    assert any(line.get_linestyle() == ":" for line in ax.lines)  # end of burn-in
    assert list(tmp_path.iterdir()) == []  # plots write nothing


def test_plot_errors_surface(plot_tree, monkeypatch, no_open_figures):
    import arviz_plots

    def broken(*args, **kwargs):
        raise RuntimeError("simulated arviz-plots failure")

    monkeypatch.setattr(arviz_plots, "plot_trace_dist", broken)
    with pytest.raises(RuntimeError, match="simulated"):
        plot_trace(plot_tree)
    with pytest.raises(KeyError):
        plot_rank(plot_tree, var_names=["absent"])
    no_monitor = plot_tree.copy()
    no_monitor["posterior"] = plot_tree["posterior"].to_dataset()[["eta"]]
    with pytest.raises(DiagnosticUnavailable, match="label-invariant"):
        plot_autocorr(no_monitor)


def test_plot_rank_returns_plot_collection(plot_tree, no_open_figures):
    from arviz_plots import PlotCollection

    pc = plot_rank(plot_tree)
    assert isinstance(pc, PlotCollection)
    # train_accuracy is not constant here; a constant monitor would be left out
    assert "eta_norm" in pc.viz["plot"].data_vars


def test_plot_gelman_rubin_brooks_returns_figure(plot_tree, no_open_figures):
    from matplotlib.figure import Figure

    fig = plot_gelman_rubin_brooks(plot_tree, var_names=("eta_norm", "log_likelihood"))
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert fig.axes[0].lines[0].get_xdata()[-1] == 60  # iterations, not draw indices
    # a misspelt monitor is an error, alone or beside others (it was dropped silently)
    for names in (("loglik",), ("eta_norm", "loglik")):
        with pytest.raises(KeyError, match=r"\['loglik'\] not in the tree's draws"):
            plot_gelman_rubin_brooks(plot_tree, var_names=names)
    lda_like = xr.DataTree.from_dict({g: plot_tree[g].to_dataset()[["log_likelihood"]]
                                      for g in plot_tree.children})
    assert len(plot_gelman_rubin_brooks(lda_like).axes) == 1  # the default: those present
    with pytest.raises(DiagnosticUnavailable, match="none of"):
        plot_gelman_rubin_brooks(xr.DataTree.from_dict(
            {g: plot_tree[g].to_dataset()[["train_accuracy"]] for g in plot_tree.children}))


def test_plot_autocorr_lags_and_white_noise_band(plot_tree, no_open_figures):
    pc = plot_autocorr(plot_tree, max_lag=20)
    ax = pc.viz["plot"]["eta_norm"].item()
    acf_lines = [line for line in ax.lines if len(line.get_xdata()) == 21
                 and line.get_ydata()[0] == pytest.approx(1.0)]
    assert len(acf_lines) == 4  # one per chain, lags 0..20 (the other line is y = 0)
    np.testing.assert_array_equal(acf_lines[0].get_xdata(), np.arange(21))
    assert acf_lines[0].get_ydata()[0] == pytest.approx(1.0)
    band = [p for p in ax.patches if p.get_facecolor()[:3] == pytest.approx((0.85,) * 3)]
    assert len(band) == 1  # ours, +-1.96/sqrt(n) with n = 30 posterior draws per chain
    assert band[0].get_y() == pytest.approx(-1.96 / np.sqrt(30))
    assert band[0].get_height() == pytest.approx(2 * 1.96 / np.sqrt(30))
    one = plot_autocorr(plot_tree, var_names=["eta_norm"], max_lag=500)  # clipped to n - 1
    ax = one.viz["plot"]["eta_norm"].item()
    assert max(len(line.get_xdata()) for line in ax.lines) == 30


def test_save_figure_writes_and_closes(tmp_path, plot_tree, no_open_figures):
    pc = plot_autocorr(plot_tree, var_names=["eta_norm"], max_lag=10)
    fig = plot_gelman_rubin_brooks(plot_tree)
    assert len(plt.get_fignums()) == 2
    assert_png(save_figure(pc, tmp_path / "sub" / "acf.png"))
    assert save_figure(fig, tmp_path / "grb.pdf").read_bytes()[:4] == b"%PDF"
    assert plt.get_fignums() == []  # both closed
    kept = plot_gelman_rubin_brooks(plot_tree)
    save_figure(kept, tmp_path / "kept.png", close=False)
    assert plt.get_fignums() == [kept.number]


# ------------------------------------------------------------------------------ report


def _run_dir(tmp_path, plot_tree_result, *, summary=True, hyperparameters=None):
    """A run directory like the one ``topiczoo fit`` writes, from a fake fit."""
    import json

    result, scores, labels = plot_tree_result
    tree = to_datatree(result, types.SimpleNamespace(scores=scores, zbar=None), labels)
    save_datatree(tree, tmp_path / "posterior.nc")
    if summary:
        (tmp_path / "summary.json").write_text(json.dumps({
            "model": "medlda", "data": "toy", "topics": 3, "chains": 4, "iterations": 60,
            "burnin": 30, "seed": 3,
            "hyperparameters": hyperparameters or {"alpha": 1.0, "c": 2.0},
            "test_accuracy": 0.75, "average": "ma",
            "test_metrics_by_strategy": {"sf": {"accuracy": 0.5}, "sa": {"accuracy": 0.625},
                                         "mf": {"accuracy": 0.6875}, "ma": {"accuracy": 0.75}},
            "train_seconds": 12.5, "predict_seconds": 1.5}))
    return tree


@pytest.fixture(scope="module")
def report_fit():
    rng = np.random.default_rng(14)
    draws = supervised_draws(rng, num_draws=60, num_tasks=1)
    draws["eta_norm"] = (converging_chains(num_draws=60, scale=8.0) + 3).astype(np.float32)
    timing = np.repeat([[2.0] * 30 + [0.1] * 20 + [0.12] * 10], 4, axis=0)
    result = fake_result(draws, np.arange(1, 61), num_burnin=30, snapshots=(40, 50, 60),
                         sample_stats={"time_per_iteration": timing})
    scores = rng.normal(size=(4, 3, 5, 1, 16)).astype(np.float32)
    labels = rng.integers(0, 2, size=16)
    return result, scores, labels


def test_write_report_and_diagnose(tmp_path, report_fit):
    tree = _run_dir(tmp_path, report_fit)
    report = write_report(tmp_path)
    assert isinstance(report, Report) and report.notes == []
    path, table, *_ = report
    assert path == tmp_path / "report.md"
    assert table == format_table(summary_table(tree))
    text = path.read_text()
    for needle in ("## Run", "| data | toy |", "## Test metrics", "| single final (SF) | 0.5000 |",
                   "| multiple average (MA) | 0.7500 |", "## Convergence", "`eta_norm`",
                   "r_hat_classic", "ess_tail", "mcse_mean", "## Timing",
                   "first chunk 2.000 (includes compilation)", "median of the 2 other chunk(s)",
                   "training snapshots (T_TR) | 3 per chain, iterations 40, 50, 60"):
        assert needle in text, needle
    assert "eta[" not in text  # label-switching parameters stay out
    assert set(report.figures) == {"trace", "rank", "gelman_rubin_brooks", "autocorr"}
    for figure in report.figures.values():
        assert figure.parent == tmp_path and f"]({figure.name})" in text
        assert_png(figure)
    assert {k: m["accuracy"] for k, m in report.metrics.items()} == {
        "sf": 0.5, "sa": 0.625, "mf": 0.6875, "ma": 0.75}
    out = diagnose(tmp_path)
    assert out.startswith("test accuracy: sf 0.5000  sa 0.6250  mf 0.6875  ma 0.7500")
    assert table in out and str(tmp_path / "report.md") in out


def test_write_report_names_the_response_once(tmp_path, report_fit):
    # the CLI's summary lists the response among the hyperparameters; the report gives it a row
    _run_dir(tmp_path, report_fit, hyperparameters={"alpha": 1.0, "response": "hinge", "c": 2.0})
    text = write_report(tmp_path).path.read_text()
    assert "| hyperparameters | alpha = 1, c = 2 |" in text
    assert text.count("hinge") == 1 and "| response | hinge |" in text


def test_write_report_without_summary_and_one_chain(tmp_path, report_fit):
    result, scores, labels = report_fit
    one = fake_result({k: v[:1] for k, v in result.draws.items()}, result.draw_iterations,
                      30, snapshots=(40, 50, 60))
    tree = _run_dir(tmp_path, (one, scores[:1], labels), summary=False)
    report = write_report(tmp_path)
    y = labels[None]
    from topiczoo.predict import reduce_scores
    for s in ("sf", "sa", "mf", "ma"):  # recomputed from the tree
        assert report.metrics[s]["accuracy"] == pytest.approx(np.mean((reduce_scores(scores[:1], s) > 0)
                                                           == y))
    assert "recomputed from the tree" in report.path.read_text()
    # both need 2 chains: said in the report, not raised
    assert set(report.figures) == {"trace", "autocorr"}
    assert any(n.startswith("gelman_rubin_brooks:") and "2 chains" in n for n in report.notes)
    assert any(n.startswith("rank:") and "at least 2" in n for n in report.notes)
    assert "not drawn" in report.path.read_text()
    assert "R-hat not shown: it compares chains" in report.table  # one chain
    assert tree.attrs["num_chains"] == 1


def test_report_table_is_condensed_as_the_printed_one(tmp_path, report_fit):
    result, scores, labels = report_fit
    draws = {**result.draws, "train_accuracy": np.ones((4, 60), np.float32)}
    constant = fake_result(draws, result.draw_iterations, 30, snapshots=(40, 50, 60))
    _run_dir(tmp_path, (constant, scores, labels))
    report = write_report(tmp_path)
    text = report.path.read_text()
    assert "`train_accuracy`" not in text and "`eta_norm`" in text
    assert "left out, constant in every chain and draw: train_accuracy = 1" in text
    assert "train_accuracy = 1" in report.table and "train_accuracy  " not in report.table


def test_write_report_needs_posterior_nc(tmp_path):
    with pytest.raises(FileNotFoundError, match="posterior.nc"):
        write_report(tmp_path)


# ------------------------------------------------------------------------------ real fit


@pytest.mark.slow
def test_real_tiny_fit_end_to_end(tmp_path):
    from topiczoo.corpus import Corpus
    from topiczoo.fit import fit
    from topiczoo.models import gslda
    from topiczoo.predict import predict

    rng = np.random.default_rng(0)
    words = ["apple", "banana", "cherry", "grape", "lemon", "mango", "olive", "peach",
             "plum", "berry", "stone", "river", "cloud", "storm", "rain", "snow"]
    texts = [" ".join(rng.choice(words[:8] if i % 2 else words[8:], 30)) for i in range(24)]
    corpus = Corpus.from_texts(texts, np.arange(24) % 2, stop_words=None)
    result = fit(gslda(3), corpus, num_chains=2, num_iterations=12, num_snapshots=2, chunk=6,
                 progress=False)
    prediction = predict(result, corpus, num_burnin=2, num_draws=2)
    tree = to_datatree(result, prediction, corpus.labels)
    np.testing.assert_array_equal(tree["warmup_posterior"]["draw"].values, np.arange(6))
    np.testing.assert_array_equal(tree["warmup_posterior"]["iteration"].values, np.arange(1, 7))
    np.testing.assert_array_equal(tree["posterior"]["draw"].values, np.arange(6))
    np.testing.assert_array_equal(tree["posterior"]["iteration"].values, np.arange(7, 13))
    np.testing.assert_array_equal(tree["sample_stats"]["iteration"].values, np.arange(7, 13))
    np.testing.assert_array_equal(tree["predictions"]["snapshot"].values,
                                  [s.iteration for s in result.snapshots])
    assert tree["posterior"]["eta"].shape == (2, 6, 1, 3)
    timing = tree["sample_stats"]["time_per_iteration"]  # per-draw timing of the fit
    assert timing.dims == ("chain", "draw") and timing.shape == (2, 6)
    assert float(timing.min()) > 0
    assert tree.attrs == {**tree.attrs, **result.model.describe(),
                          "sampler": getattr(result, "sampler", "exact")}
    table = summary_table(tree)
    assert "eta_norm" in table.index and table.notna().any().all()
    xr.testing.assert_identical(load_datatree(save_datatree(tree, tmp_path / "run")), tree)


# ------------------------------------------------------------------------------ review findings


def test_summary_table_one_chain_and_nan_draws():
    # one chain whose halves are constant and differ: NaN, as R-hat is with one chain (the
    # stuck-chains rule gave inf and the mark "chains disagree")
    table = summary_table(tree_of([[3.0, 3, 3, 3, 4, 4, 4, 4]]))
    assert np.isnan(table.loc["eta_norm", "r_hat"]) and np.isnan(table.loc["eta_norm",
                                                                           "r_hat_classic"])
    full = format_table(table, compact=False)
    assert "?" in full and "*" not in full.split("\n")[2]
    # condensed: no column of NaN; the means and ESS stay, a line says why R-hat went
    one_chain = format_table(table)
    assert "r_hat" not in one_chain and "nan" not in one_chain and "?" not in one_chain
    assert "ess_bulk" in one_chain and "R-hat not shown: it compares chains" in one_chain
    # a NaN draw: every column of the monitor NaN (mean and sd skipped it), legend says why
    values = np.random.default_rng(0).normal(size=(2, 8))
    values[1, 3] = np.nan
    table = summary_table(tree_of(values))
    assert table.loc["eta_norm"].isna().all()
    assert "NaN draws" in format_table(table)


def _with(tree, group, **variables):
    """``tree`` with ``variables`` [C, S] put into ``group`` (attrs kept)."""
    out = tree.copy()
    ds = out[group].to_dataset()
    out[group] = ds.assign({k: (("chain", "draw"), np.asarray(v, np.float32))
                            for k, v in variables.items()})
    return out


def test_plot_trace_hist_with_a_constant_monitor(plot_tree, no_open_figures):
    """train_accuracy 1 in every draw (MedLDA) made arviz-stats' histogram fail."""
    tree = _with(plot_tree, "posterior", train_accuracy=np.ones((4, 30)))
    for kind in ("hist", "kde", "ecdf"):
        pc = plot_trace(tree, kind=kind)
        assert "train_accuracy" in pc.viz["plot"].data_vars


def test_plot_trace_with_one_chain_at_one_value_warns_nothing(plot_tree, no_open_figures):
    """A monitor constant in one chain only (train accuracy 1 there) has no density in that
    chain: arviz-stats' warning about it reached the user (the command's multi-label fit)."""
    values = np.ones((4, 30))
    values[1:] = np.random.default_rng(0).random((3, 30))
    tree = _with(plot_tree, "posterior", train_accuracy=values)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_trace(tree, var_names=["train_accuracy"])


def test_plots_of_a_run_that_is_all_burn_in(plot_tree, no_open_figures):
    warmup_only = xr.DataTree.from_dict({"warmup_posterior": plot_tree["warmup_posterior"]
                                         .to_dataset()})
    warmup_only.attrs = dict(plot_tree.attrs)
    pc = plot_trace(warmup_only, include_warmup=True, kind=None)  # default names from burn-in
    assert "eta_norm" in pc.viz["plot"].data_vars
    pc = plot_trace(warmup_only, var_names="eta_norm", include_warmup=True, kind=None)
    for plot in (plot_rank, plot_autocorr):  # posterior draws only: say the group is missing
        with pytest.raises(DiagnosticUnavailable, match="no 'posterior' group"):
            plot(warmup_only)
    with pytest.raises(DiagnosticUnavailable, match="no 'warmup' group"):
        plot_autocorr(plot_tree, group="warmup")


def test_plot_autocorr_checks_max_lag(plot_tree, no_open_figures):
    for bad in (-1, 0, 2.5, True):
        with pytest.raises(ValueError, match="max_lag must be an integer >= 1"):
            plot_autocorr(plot_tree, max_lag=bad)


def test_titles_and_report_say_initial_k_for_the_hdp(tmp_path, plot_tree, no_open_figures):
    from topiczoo.diagnostics.plots import _title

    assert "K=3" in _title(plot_tree, "Trace", None)
    hdp = plot_tree.copy()
    hdp.attrs = {**plot_tree.attrs, "learn_gamma": 1, "model": "shdp-hinge"}
    assert "shdp-hinge, initial K=3" in _title(hdp, "Trace", None)
    save_datatree(hdp, tmp_path / "posterior.nc")
    report = write_report(tmp_path)
    assert "| topics initial K | 3 |" in report.path.read_text()


def test_report_of_multitask_predictions_without_summary(tmp_path, report_fit):
    result, _, _ = report_fit
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(4, 3, 5, 2, 16)).astype(np.float32)  # 2 tasks
    tree = to_datatree(result, types.SimpleNamespace(scores=scores, zbar=None),
                       rng.integers(0, 2, size=(16, 2)))
    save_datatree(tree, tmp_path / "posterior.nc")
    text = write_report(tmp_path).path.read_text()
    assert "No test predictions" not in text
    assert "only a single binary task's accuracy can be recomputed" in text


def test_to_datatree_takes_class_ids_of_a_multiclass_prediction():
    from topiczoo.models.tasks import Task

    rng = np.random.default_rng(4)
    result = fake_result(supervised_draws(rng, num_chains=2, num_draws=12, num_tasks=3),
                         np.arange(1, 13), num_burnin=6, snapshots=(12,))
    scores = rng.normal(size=(2, 1, 2, 3, 5)).astype(np.float32)
    prediction = types.SimpleNamespace(scores=scores, zbar=None, task=Task("multiclass", 3))
    tree = to_datatree(result, prediction, np.array([0, 2, 1, 1, 0]))  # it was refused
    np.testing.assert_array_equal(tree["observed_data"]["y"].values,
                                  [[1, 0, 0, 0, 1], [0, 0, 1, 1, 0], [0, 1, 0, 0, 0]])


# ------------------------------------------------------------------------------ review 2


def test_rhat_one_rule_for_degenerate_traces():
    """rhat() is the one R-hat of summary_table, gelman_rubin_brooks and fit(until_rhat=...):
    1 for a trace constant and equal in every chain (it was NaN in the table and 1 in
    until_rhat), inf for chains stuck at different constant values, NaN when undefined."""
    rng = np.random.default_rng(20)
    values = np.stack([rng.normal(size=(2, 40)),          # mixing
                       np.full((2, 40), 3.0),              # constant, chains agree
                       np.repeat([[3.0], [4.0]], 40, 1)],  # stuck at 3 and at 4
                      axis=-1)                             # [C, S, 3 elements]
    for method in ("rank", "identity"):
        r = rhat(values, method)
        assert r.shape == (3,) and r[0] < 1.2 and r[1] == 1.0 and np.isposinf(r[2])
    jump = np.full((2, 40), 3.0)
    jump[:, 20:] = 4.0  # every chain jumps at the same iteration: not stationary
    assert np.isposinf(rhat(jump)) and rhat(jump, "identity") < 1  # identical chains
    with_nan = np.full((2, 40), 3.0)
    with_nan[1, 5] = np.nan
    for undefined in (np.full((1, 40), 3.0), np.full((2, 3), 3.0), with_nan):
        assert np.isnan(rhat(undefined))
    assert rhat_meaning(1.0) == "" and "undefined" in rhat_meaning(float("nan"))
    assert "zero variance within chains" in rhat_meaning(float("inf"))
    # the table's two columns are rhat()'s, element by element
    table = summary_table(tree_of(values[..., 2]))
    assert np.isposinf(table.loc["eta_norm", "r_hat"])
    constant = summary_table(tree_of(values[..., 1]))
    assert (constant[["r_hat", "r_hat_classic"]] == 1.0).all(axis=None)


def test_no_numerical_warnings_from_short_single_chain_or_stuck_runs():
    """numpy's 'Degrees of freedom <= 0' (a single draw) and arviz-stats' 'divide by zero'
    (chains stuck at different values) leaked to users; the results say it (NaN, inf)."""
    rng = np.random.default_rng(21)
    stuck = np.repeat([[3.0], [4.0]], 40, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for shape in ((1, 1), (1, 2), (2, 1), (2, 2), (1, 5)):
            table = summary_table(tree_of(rng.normal(size=shape)))
            assert np.isnan(table["r_hat"]).all()
            format_table(table)
        assert np.isposinf(summary_table(tree_of(stuck))["r_hat"]).all()
        _, curve = gelman_rubin_brooks(tree_of(stuck), "eta_norm", num_points=4)
        assert np.isposinf(curve).all()
        assert np.isposinf(rhat(stuck))


def test_plot_and_summary_functions_take_a_fit_result(no_open_figures):
    """plot_trace(result) failed with AttributeError 'FitResult' object has no attribute
    'children': every function taking a tree takes the fit too (through to_datatree), and
    anything else is a TypeError that says what to pass."""
    rng = np.random.default_rng(22)
    draws = supervised_draws(rng, num_draws=40, num_tasks=1)
    result = fake_result(draws, np.arange(1, 41), num_burnin=20)
    tree = to_datatree(result)
    pc = plot_trace(result)
    assert "eta_norm" in pc.viz["plot"].data_vars
    plot_rank(result)
    plot_autocorr(result)
    plot_gelman_rubin_brooks(result)
    plt.close("all")
    assert summary_table(result).equals(summary_table(tree))
    np.testing.assert_array_equal(gelman_rubin_brooks(result, "eta_norm")[1],
                                  gelman_rubin_brooks(tree, "eta_norm")[1])
    for function in (plot_trace, plot_rank, plot_autocorr, plot_gelman_rubin_brooks,
                     summary_table):
        with pytest.raises(TypeError, match=r"to_datatree\(result\)"):
            function(tree["posterior"].to_dataset())
    with pytest.raises(TypeError, match="got dict"):
        gelman_rubin_brooks({"eta_norm": 1}, "eta_norm")


def test_plot_trace_shows_an_integer_monitor_as_a_histogram(plot_tree, no_open_figures):
    """num_topics (occupied topics of an HDP, int) had a KDE; now a histogram with a bin per
    integer, the float monitors keeping their KDE (kind "kde") or histogram (kind "hist")."""
    rng = np.random.default_rng(23)
    tree = plot_tree.copy()
    post = tree["posterior"].to_dataset()
    tree["posterior"] = post.assign(num_topics=(("chain", "draw"),
                                                rng.integers(3, 7, (4, 30)).astype(np.int32)))
    names = ["eta_norm", "num_topics"]
    for kind in ("kde", "hist"):
        pc = plot_trace(tree, var_names=names, kind=kind)
        dist = pc.viz["plot"]["num_topics"].sel(column="dist").item()
        edges = np.unique(np.concatenate([line.get_xdata() for line in dist.lines]))
        np.testing.assert_array_equal(edges, [2.5, 3.5, 4.5, 5.5, 6.5])  # a bin per integer
        eta = pc.viz["plot"]["eta_norm"].sel(column="dist").item()
        points = len(eta.lines[0].get_xdata())
        assert points > 100 if kind == "kde" else points < 40  # KDE grid / histogram steps
    pc = plot_trace(tree, var_names=names, kind="ecdf")  # an ECDF is a step function anyway
    dist = pc.viz["plot"]["num_topics"].sel(column="dist").item()
    assert len(dist.lines[0].get_xdata()) > 10
    with pytest.raises(ValueError, match="kind must be"):
        plot_trace(tree, kind="violin")


# ------------------------------------------------------------------------------ condensed table


def _monitor_table(num_chains=4, num_draws=60, num_tasks=20, response="hinge", seed=30,
                   **replace):
    """summary_table of synthetic supervised monitors (``replace``: draws to put instead)."""
    rng = np.random.default_rng(seed)
    draws = supervised_draws(rng, num_chains, num_draws, num_tasks)
    draws.update(replace)
    result = fake_result(draws, np.arange(1, num_draws + 1), 0)
    facts = {**result.model.describe(), "response": response}
    result.model = types.SimpleNamespace(describe=lambda: dict(facts))
    return summary_table(to_datatree(result))


def _line(text, start):
    return [line for line in text.splitlines() if line.startswith(start)]


def test_format_table_folds_a_monitor_per_task_into_one_line():
    """Twenty `augmentation_mean[t]` rows for a 20-class model: one line, its worst R-hat."""
    from topiczoo.diagnostics.convergence import _fmt

    table = _monitor_table(num_tasks=20)
    assert sum(label.startswith("augmentation_mean[") for label in table.index) == 20  # kept
    text = format_table(table)
    folded = _line(text.split("\n* ")[0], "augmentation_mean")  # the rows, not the legend
    assert len(folded) == 1 and folded[0].startswith("augmentation_mean[0..19] ")
    part = table.loc[[f"augmentation_mean[{t}]" for t in range(20)]]
    cells = folded[0].split()
    assert cells[1] == f"{_fmt('mean', part['mean'].min())}..{_fmt('mean', part['mean'].max())}"
    assert cells[4] == _fmt("ess_bulk", part["ess_bulk"].min())       # the smallest ESS
    assert cells[6] == _fmt("r_hat", part["r_hat"].max())             # the worst R-hat
    assert "augmentation_mean[0..19]: 20 tasks on one line" in text
    assert len(_line(format_table(table, compact=False), "augmentation_mean")) == 20
    markdown = format_table_markdown(table)
    assert "| `augmentation_mean[0..19]` |" in markdown and "`augmentation_mean[1]`" not in markdown


def test_format_table_hides_monitors_of_too_few_draws_in_one_line():
    """A short run printed rows of `nan ?`: R-hat and ESS need 4 draws per chain."""
    short = format_table(_monitor_table(num_chains=2, num_draws=3, num_tasks=2))
    assert short == ("6 monitors not shown: R-hat and ESS need at least 4 draws per chain, "
                     "this run kept 3 after burn-in (run more iterations)")
    enough = format_table(_monitor_table(num_chains=2, num_draws=4, num_tasks=2))
    assert "not shown" not in enough and _line(enough, "eta_norm") and "nan" not in enough
    assert "not shown" in format_table_markdown(_monitor_table(num_chains=2, num_draws=3))


def test_format_table_leaves_out_a_constant_monitor_with_a_note():
    """shdp-gaussian's `augmentation_mean[0]` (its fixed noise variance) was a row of sd 0."""
    fixed = np.full((4, 60, 1), 0.25)
    text = format_table(_monitor_table(num_tasks=1, augmentation_mean=fixed,
                                       train_accuracy=np.ones((4, 60))))
    assert not _line(text, "augmentation_mean") and not _line(text, "train_accuracy")
    assert ("left out, constant in every chain and draw: train_accuracy = 1, "
            "augmentation_mean[0] = 0.25") in text
    gaussian = format_table(_monitor_table(num_tasks=1, augmentation_mean=fixed,
                                           response="gaussian"))
    assert "augmentation_mean[0] = 0.25 (the noise variance s2, fixed)" in gaussian
    per_task = format_table(_monitor_table(num_tasks=3, augmentation_mean=np.ones((4, 60, 3))))
    assert "augmentation_mean[0..2] = 1" in per_task and not _line(per_task, "augmentation_mean")


def test_format_table_explains_a_negative_gaussian_train_loss():
    """The Gaussian's train_loss is minus a log density: it can be negative."""
    rng = np.random.default_rng(31)
    negative = rng.normal(-1.3, 0.01, (4, 60))
    explained = "not a loss bounded below by 0"
    assert explained in format_table(_monitor_table(response="gaussian", train_loss=negative))
    assert explained in format_table(_monitor_table(response="gaussian"))  # it can be
    assert explained in format_table(_monitor_table(response=None, train_loss=negative))
    assert explained not in format_table(_monitor_table(response="hinge"))  # >= 0: no line
