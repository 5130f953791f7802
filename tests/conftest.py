import gc
import os
import sys

import jax
import pytest

from topiczoo.fit import enable_compilation_cache

# tests import their small shared helpers (tests/exact.py) as top-level modules
sys.path.insert(0, os.path.dirname(__file__))

# JAX's persistent compilation cache (the one fit uses: $TOPICZOO_CACHE or ~/.cache/topiczoo/jax)
# from the first test on, not from the first fit: what a module compiles again after the
# previous module's caches were dropped (below), or what the other worker process compiled,
# is read back instead (measured on four kernel and fit modules with an empty cache: 172 ->
# 154 s).
enable_compilation_cache()


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_code():
    """Drop JAX's compiled executables after each test module.

    XLA's CPU backend maps three memory regions (code, read-only data, data) per compiled
    module and frees them only when the executable is dropped. The suite compiles thousands of
    distinct closures, and a single process holding all of them passes the kernel's
    ``vm.max_map_count`` (65,530 by default) late in the run, where the next compilation dies
    with a segmentation fault (the failure mode of jax-ml/jax#27201). Clearing the caches per
    module kept the count at 2,000-7,000 for most of the run and under 16,000 at its peak
    (measured on the whole suite), at the price of recompiling what two modules share.
    """
    yield
    jax.clear_caches()
    gc.collect()


@pytest.fixture(autouse=True)
def _no_downloads(monkeypatch):
    """Tests never download a data set: a test that would (a data set missing from the folder
    it names) gets the error of a machine without network at once. tests/test_fetch.py
    replaces the download with a server of small sample archives."""
    import urllib.error

    from topiczoo import fetch

    def offline(url, timeout):
        raise urllib.error.URLError("the tests do not use the network")

    monkeypatch.setattr(fetch, "_open_url", offline)


# ---------------------------------------------------------------------------------------------
# The exhaustive tier: run by `python -m pytest -q -m ""` (everything) or `-m exhaustive`, not by
# the default `python -m pytest -q` (CI), which pyproject.toml's addopts limits to
# `-m "not exhaustive"`. Each entry is a node id prefix and why CI can leave it out: a planted
# mutant whose test's power another check in CI already shows (the exact posteriors of the
# near misses, tests/test_enumeration.py::test_near_misses_are_far, lie at least 3x the bound
# away), or a further variant of a proof CI runs for the same code path. Every statistical
# proof of every sampler and response stays in CI; the whole suite takes about 90 minutes on
# 2 cores, CI's tier under 30 (README, "Tests").
EXHAUSTIVE = {
    # planted mutants (the power of the enumeration tests)
    "tests/test_enumeration.py::test_enumeration_detects_": "mutant",
    "tests/test_light.py::test_enumeration_detects_": "mutant",
    "tests/test_light.py::test_coordinatewise_eta_mutants_fail": "mutant",
    "tests/test_light_kernel.py::test_enumeration_detects_a_mutant": "mutant",
    "tests/test_parallel.py::test_enumeration_detects_topics_drawn_with_the_wrong_prior": "mutant",
    "tests/test_parallel.py::test_enumeration_detects_rows_whose_counts_draw_one_exponential_short":
        "mutant",
    "tests/test_parallel.py::test_the_thread_test_sees_streams_keyed_by_thread": "mutant",
    "tests/test_unigram_mixture.py::test_enumeration_detects_a_wrong_conditional": "mutant",
    "tests/test_tempering.py::test_a_swap_with_the_temperatures_exchanged": "mutant",
    "tests/test_parallel_jax.py::test_the_device_test_sees_": "mutant",
    "tests/test_parallel_jax.py::test_enumeration_detects_topics_drawn_with_the_wrong_prior":
        "mutant",
    "tests/test_random.py::test_mutants_of_the_": "mutant",
    "tests/test_tempering.py::test_tempered_sweep_detects_": "mutant",
    "tests/test_tempering.py::test_an_anneal_that_never_reaches_power_1": "mutant",
    "tests/test_geweke.py::test_geweke_detects_wrong_conditional": "mutant",
    "tests/test_sbc.py::test_mutant_kernels_fail": "mutant",
    "tests/test_topics.py::test_enumeration_given_eta_detects_a_mutant": "mutant",
    "tests/test_shdp_globals.py::test_table_counts_detect_off_by_one": "mutant",
    "tests/test_shdp_globals.py::test_gamma_update_detects_wrong_auxiliary": "mutant",
    "tests/test_shdp_globals.py::test_alpha_update_detects_mutants": "mutant",
    "tests/test_shdp.py::test_enumeration_detects_": "mutant",
    "tests/test_shdp.py::test_enumeration_supervision_has_power": "mutant",
    "tests/test_shdp.py::test_geweke_detects_mutant": "mutant",
    "tests/test_shdp.py::test_born_topic_test_detects_": "mutant",
    "tests/test_shdp.py::test_test_chain_enumeration_detects_mutants": "mutant",
    # further variants of a proof CI runs on the same code path
    "tests/test_enumeration.py::test_sampler_matches_enumeration[logistic-c3]": "c = 1 runs",
    "tests/test_enumeration.py::test_sampler_matches_enumeration[logistic-two-tasks]":
        "hinge-two-tasks runs the tasks' code",
    "tests/test_enumeration.py::test_sampler_matches_enumeration[gaussian-fixed-s2]":
        "gaussian-learned-s2 runs",
    "tests/test_enumeration.py::test_exact_sampler_eta_options_match_enumeration[exact:eta=qr-l":
        "one QR case runs",
    "tests/test_enumeration.py::test_exact_sampler_eta_options_match_enumeration[exact:eta=qr-h":
        "one QR case runs",
    "tests/test_enumeration.py::test_exact_sampler_eta_options_match_enumeration[exact:eta=qr-e":
        "one QR case runs",
    "tests/test_enumeration.py::test_relative_cost_samples_the_posterior": "a c setting",
    "tests/test_tempering.py::test_an_annealed_chain_targets_the_posterior_after_its_anneal[lda]":
        "hinge-c3-ell1 runs the annealed chain's code",
    "tests/test_light.py::test_light_sweep_matches_enumeration[mixture-1-": "the kernel's run",
    "tests/test_light.py::test_light_sweep_matches_enumeration[cycle-1-": "the kernel's run",
    "tests/test_light.py::test_enumeration_with_unequal_alpha_and_beta[word-uniform":
        "the package case runs",
    "tests/test_light_kernel.py::test_cli_fit_with_the_light_sampler_records_it":
        "the command line's fit tests run",
    "tests/test_parallel.py::test_kernel_matches_enumeration[logistic-multiclass]":
        "the exact sampler's runs; parallel shares the blocks",
    "tests/test_parallel.py::test_kernel_matches_enumeration[gaussian-fixed-s2]":
        "gaussian-learned-s2 runs",
    "tests/test_parallel.py::test_kernel_matches_enumeration[hinge-c3-ell1]":
        "hinge-two-tasks runs",
    "tests/test_parallel_jax.py::test_kernel_matches_enumeration[hinge-c3-ell1]":
        "hinge-two-tasks runs",
    "tests/test_parallel_jax.py::test_kernel_matches_enumeration[hinge-two-tasks]":
        "the numba engine's runs; the engines share every block but Z's",
    "tests/test_parallel_jax.py::test_fit_draws_do_not_depend_on_the_devices":
        "the step's device test runs",
    "tests/test_hosts.py::test_two_processes_of_two_devices_draw_what_one_process_draws":
        "two processes of one device each run (the same code path; 49 s more)",
    "tests/test_hosts.py::test_a_fit_by_two_processes_is_the_fit_of_one":
        "the step by two processes runs (the same step in fit; 310 s)",
    "tests/test_cli_hosts.py::test_two_processes_write_one_processs_run_and_process_1_writes_":
        "test_hosts.py's step by two processes runs; the options' checks and the unreachable "
        "coordinator run (201 s)",
    "tests/test_cli_hosts.py::test_a_checkpoint_resumes_on_another_number_of_processes":
        "the checkpoint tests of one process run (two cases, 153 s and 266 s)",
    "tests/test_tempering.py::test_cold_and_hot_replicas_match_their_targets[hinge": "lda runs",
    "tests/test_light.py::test_light_sweep_matches_enumeration[mixture-2-2]": "mixture-2-3 runs",
    "tests/test_light.py::test_light_sweep_matches_enumeration[cycle-2-3]": "cycle-2-2 runs",
    "tests/test_light.py::test_read_ahead_does_not_change_the_draws[mixture-mild-2]":
        "mixture-mild-0 runs",
    "tests/test_light.py::test_read_ahead_does_not_change_the_draws[mixture-extreme-exponents-0]":
        "mixture-extreme-exponents-2 runs",
    "tests/test_light.py::test_read_ahead_does_not_change_the_draws[cycle-mild-0]":
        "cycle-mild-2 runs",
    "tests/test_light.py::test_read_ahead_does_not_change_the_draws[cycle-extreme-exponents-0]":
        "cycle-extreme-exponents-2 runs",
    "tests/test_light_kernel.py::test_light_kernel_matches_enumeration[logistic-c4-cycle]":
        "the mixture of the same response and cycle for the others run",
    "tests/test_light_kernel.py::test_light_kernel_matches_enumeration[hinge-c3-ell0.5-mixture]":
        "the cycle of the same response and mixture for the others run",
    "tests/test_light_kernel.py::test_light_kernel_matches_enumeration[gaussian-learned-s2-cycle]":
        "the mixture of the same response and cycle for the others run",
    "tests/test_parallel.py::test_kernel_matches_enumeration[gaussian-learned-s2]":
        "the JAX engine's gaussian runs (the same blocks but Z's)",
    "tests/test_parallel_jax.py::test_step_matches_enumeration_plain_lda":
        "the step given eta and the kernel's lda run",
    "tests/test_sbc.py::test_ranks_are_uniform[gaussian-s2]": "Geweke's gaussian runs",
    "tests/test_shdp.py::test_enumeration_fixed_concentrations[hdp]":
        "logistic-c1 runs the same sweep; the learned concentrations' test runs",
    "tests/test_shdp.py::test_enumeration_fixed_concentrations[multiclass": "logistic-c1 runs",
    "tests/test_geweke.py::test_geweke_joint_distribution_of_the_parallel_sampler":
        "the parallel kernel's enumerations and the exact sampler's Geweke run",
    "tests/test_enumeration.py::test_sampler_matches_enumeration[eps-insensitive-c3]":
        "the parallel sampler's eps-insensitive runs (the responses' blocks are shared)",
    "tests/test_enumeration.py::test_sampler_matches_enumeration[hinge-c3-ell1]":
        "hinge-two-tasks runs",
    "tests/test_enumeration.py::test_exact_sampler_eta_options_match_enumeration[exact:eta=qr-g":
        "the QR draw's draws are pinned by the draw digests",
    "tests/test_parallel.py::test_kernel_matches_enumeration[logistic-c3]":
        "the exact sampler's logistic runs; parallel's eps-insensitive runs its response table",
    "tests/test_shdp.py::test_enumeration_learned_concentrations":
        "logistic-c1 runs the sweep; test_shdp_globals the alpha and gamma conditionals",
    "tests/test_cli.py::test_a_relative_setting_is_reported_in_response_units[shdp-gaussian":
        "medlda-regression runs",
    "tests/test_sbc.py::test_ranks_are_uniform": "the kernels' enumeration and Geweke run",
    "tests/test_recovery.py::test_eta_direction_is_recovered[medlda]": "gslda runs",
    "tests/test_recovery.py::test_medlda_regression_recovers_eta": "gaussian sLDA runs",
    "tests/test_shdp_globals.py::test_table_counts_follow_antoniak[8-0.1": "two settings run",
    "tests/test_shdp_globals.py::test_table_counts_follow_antoniak[8-200": "two settings run",
    "tests/test_shdp_globals.py::test_gamma_update_keeps_its_conditional[1-1": "two settings run",
    "tests/test_shdp_globals.py::test_gamma_update_keeps_its_conditional[2-2000":
        "two settings run",
    "tests/test_shdp_globals.py::test_gamma_update_keeps_its_conditional[30-40":
        "two settings run",
    "tests/test_shdp_globals.py::test_alpha_update_keeps_its_conditional[one": "mixed runs",
    "tests/test_shdp_globals.py::test_alpha_update_keeps_its_conditional[distinct": "mixed runs",
    "tests/test_enumeration.py::test_sampler_matches_enumeration[logistic-multiclass]":
        "hinge-two-tasks runs the tasks' code",
    "tests/test_estimators.py::test_scikit_learn_estimator_checks":
        "the estimators' own tests of fit, predict, score and parameters run",
    "tests/test_hdp_baselines.py::test_regression_beats_a_constant[hdp-glm]": "shdp-map runs",
    "tests/test_hdp_baselines.py::test_binary_beats_a_constant[shdp-map": "the regression runs",
    "tests/test_draws_unchanged.py": "a guard for refactors, not a proof: run it (or "
        "python tests/draw_digests.py --check) after touching a kernel",
    "tests/test_tutorials.py::test_notebook_runs_at_small_size[02":
        "minutes; CI checks its cells against its source",
    "tests/test_topics.py::test_exact_sweep_matches_enumeration_given_eta":
        "the exact kernel's enumerations run the same sweep",
    "tests/test_enumeration.py::test_sequential_chains_are_the_vectorized_chains":
        "test_kernel.py's vectorized and sequential chains run",
    "tests/test_light.py::test_light_sweep_matches_enumeration_one_step": "the sweeps' run",
    "tests/test_shdp.py::test_table_form_matches_log_space_sweep":
        "the kernel's enumeration runs the table form; this compares it with the log-space "
        "form at larger scales (81 s in a fresh clone, mostly compiling the log-space sweep)",
    "tests/test_shdp_family.py::test_default_regression_cost_is_per_sd_so_a_change_of_units_"
    "changes_no_draw[shdp-regression]": "medlda-regression runs the same rule",
    "tests/test_cli.py::test_a_relative_setting_is_reported_in_response_units[shdp-regression":
        "medlda-regression runs",
    "tests/test_shdp.py::test_enumeration_fixed_concentrations[gaussian]":
        "the sweep's response table runs in logistic-c1; s2 in test_geweke_gaussian_shdp",
    "tests/test_shdp.py::test_enumeration_fixed_concentrations[logistic-c3]": "c = 1 runs",
    "tests/test_shdp.py::test_enumeration_fixed_concentrations[hinge": "logistic-c1 runs",
    "tests/test_shdp.py::test_enumeration_fixed_concentrations[eps": "logistic-c1 runs",
    "tests/test_shdp.py::test_enumeration_fixed_concentrations[hdp-alpha5": "hdp runs",
    "tests/test_shdp.py::test_enumeration_learned_concentrations[hdp]": "logistic-c3 runs",
    "tests/test_shdp.py::test_enumeration_several_auxiliary_topics": "one auxiliary topic runs",
    "tests/test_tutorials.py::test_notebook_runs_at_small_size[03":
        "minutes; CI checks its cells against its source",
    "tests/test_tutorials.py::test_notebook_runs_at_small_size[04": "real data, minutes; CI checks its cells against its source",
    "tests/test_tutorials.py::test_notebook_runs_at_small_size[05": "real data, minutes; CI checks its cells against its source",
    "tests/test_tutorials.py::test_notebook_runs_at_small_size[06": "real data, minutes; CI checks its cells against its source",
    "tests/test_tutorials.py::test_notebook_runs_at_small_size[07": "real data, minutes; CI checks its cells against its source",
    "tests/test_cli.py::test_fit_writes_summary_tree_and_plot[gslda-multitask": "medlda runs",
    "tests/test_cli.py::test_fit_writes_summary_tree_and_plot[medlda-extra3": "medlda runs",
    "tests/test_cli.py::test_twenty_tasks_get_their_metrics_summary_and_trace":
        "the multi-task report's unit tests run",
    "tests/test_cluster.py::test_c_cv_on_two_workers": "the grid on two workers runs",
    "tests/test_cluster.py::test_c_cv_on_the_command_line": "the grid on two workers runs",
    "tests/test_cluster.py::test_calibration_blocks_on_two_workers": "the grid runs",
    "tests/test_cluster.py::test_grid_search_with_the_dask_backend": "the grid runs",
}


#: The test files of CI's tier that take longest (measured in a fresh clone, one process:
#: 50-190 s each), slowest first. They are collected first, so that the test command's worker
#: processes (``-n 2 --dist loadfile``: a file per worker at a time, in collection order) do
#: not end with one of them alone; within a file the order stays.
SLOWEST_FILES = ("test_shdp.py", "test_light.py", "test_parallel.py", "test_enumeration.py",
                 "test_parallel_jax.py", "test_cli.py", "test_topics.py", "test_log_joint.py",
                 "test_diagnostics.py", "test_estimators.py", "test_hosts.py", "test_compare.py",
                 "test_shdp_family.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.nodeid.startswith(prefix) for prefix in EXHAUSTIVE):
            item.add_marker(pytest.mark.exhaustive)
    rank = {f"tests/{name}": i for i, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
