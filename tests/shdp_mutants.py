"""Planted bugs of the sHDP's kernels, for the tests that must notice them: each is a text
replacement in one step of the topic sweep (``kernels.hdp.sweep``) or of the global block
(``kernels.hdp.globals``), and the function the host step calls is recompiled around it."""

from __future__ import annotations

from functools import cache

from mutants import mutant
from topiczoo.kernels.hdp import globals as hdp_globals
from topiczoo.kernels.hdp import sweep as hdp_sweep

#: Mutants of the topic sweep: name -> (step of ``kernels.hdp.sweep``, replacements).
SWEEP_MUTANTS = {
    # a new topic weighs alpha instead of alpha beta_new (the unused mass forgotten)
    "new-topic-alpha": ("_sweep_document", [
        ("new_weight = alpha * beta_new / (num_new * n_wk.shape[0])",
         "new_weight = alpha / (num_new * n_wk.shape[0])")]),
    # each of the m auxiliary topics weighs alpha beta_new / V instead of / (m V)
    "new-topic-without-m": ("_sweep_document", [
        ("new_weight = alpha * beta_new / (num_new * n_wk.shape[0])",
         "new_weight = alpha * beta_new / n_wk.shape[0]")]),
    # a dead slot keeps its dab, so it is drawn as if its topic still existed
    "free-slot-with-weight": ("_death", [("    tb.dab[k_old] = 0.0\n", "")]),
    # a birth at the top slot does not raise S: later tokens cannot draw the born topic
    "frozen-top-slot": ("_birth", [("    num_slots = max(num_slots, k_new + 1)\n", "")]),
}

#: Mutants of the global block: name -> (step of ``kernels.hdp.globals``, replacements).
GLOBAL_MUTANTS = {
    # one table per (document, topic): the "minimal path"
    "tables-minimal": ("_seat_tables", [
        ("elif np.random.random() * (ab + c) < ab:", "elif False:")]),
    # customer i + 1 opens a table with probability ab / (ab + i + 1)
    "tables-off-by-one": ("_seat_tables", [
        ("np.random.random() * (ab + c) < ab", "np.random.random() * (ab + c + 1) < ab")]),
    # gamma's auxiliary x ~ Beta(gamma, m..) instead of Beta(gamma + 1, m..)
    "gamma-auxiliary": ("_draw_gamma", [
        ("np.random.beta(gamma + 1.0, tables)", "np.random.beta(gamma, tables)")]),
    # alpha's s_d ~ Bernoulli(alpha / (N_d + alpha)) instead of N_d / (N_d + alpha)
    "alpha-auxiliary": ("_draw_alpha", [
        ("np.random.random() * (n + alpha) < n:", "np.random.random() * (n + alpha) < alpha:")]),
}


@cache
def sweep_mutant(name: str):
    """``kernels.hdp.sweep._hdp_sweep`` with the mutant ``name`` of :data:`SWEEP_MUTANTS`."""
    step, replacements = SWEEP_MUTANTS[name]
    if step == "_sweep_document":
        document = mutant(hdp_sweep._sweep_document, replacements)
    else:
        changed = mutant(getattr(hdp_sweep, step), replacements)
        document = mutant(hdp_sweep._sweep_document, [], {step: changed})
    return mutant(hdp_sweep._hdp_sweep, [], {"_sweep_document": document})


@cache
def global_mutant(name: str):
    """``kernels.hdp.globals._hdp_global`` with the mutant ``name`` of :data:`GLOBAL_MUTANTS`."""
    step, replacements = GLOBAL_MUTANTS[name]
    changed = mutant(getattr(hdp_globals, step), replacements)
    return mutant(hdp_globals._hdp_global, [], {step: changed})


def plant(monkeypatch, name: str) -> None:
    """Make the sHDP's host steps run the mutant ``name`` (of either table) for this test."""
    if name in SWEEP_MUTANTS:
        monkeypatch.setattr(hdp_sweep, "_hdp_sweep", sweep_mutant(name))
    else:
        monkeypatch.setattr(hdp_globals, "_hdp_global", global_mutant(name))
