"""One set of run defaults for every interface, and gSLDA's default c.

A user's report: chains x iterations were 4 x 100 on the command line, 4 x 200 in ``fit()``
and 2 x 100 in the estimators, and gSLDA's c was 1 where the README ran 25. The command line,
``fit``, the estimators and ``compare`` now read :mod:`topiczoo.defaults`; gSLDA's default c
was chosen on validation splits (``studies/gslda_default_c.py``).
"""

import inspect

import numpy as np
import pytest

from topiczoo.compare import Grid
from topiczoo.defaults import NUM_CHAINS, NUM_ITERATIONS
from topiczoo.estimators import (GSLDAClassifier, MedLDAClassifier, MedLDARegressor,
                                 SHDPRegressor, SLDARegressor)
from topiczoo.fit import fit
from topiczoo.models import REGISTRY, gslda


def test_every_interface_runs_the_same_chains_and_iterations_by_default():
    assert (NUM_CHAINS, NUM_ITERATIONS) == (4, 100)
    signature = inspect.signature(fit).parameters
    assert (signature["num_chains"].default, signature["num_iterations"].default) == \
        (NUM_CHAINS, NUM_ITERATIONS)
    from topiczoo.cli import build_parser

    args = build_parser().parse_args(["fit"])
    assert (args.chains, args.iterations) == (NUM_CHAINS, NUM_ITERATIONS)
    grid = Grid(data=["bbc"], models=["gslda"], topics=[10])
    assert (grid.chains, grid.iterations) == (NUM_CHAINS, NUM_ITERATIONS)
    for cls in (GSLDAClassifier, MedLDAClassifier, MedLDARegressor, SLDARegressor,
                SHDPRegressor):
        params = cls().get_params()
        assert (params["num_chains"], params["num_iterations"]) == (NUM_CHAINS, NUM_ITERATIONS)


def test_the_help_says_the_defaults_in_force(capsys):
    from topiczoo.cli import main

    for command in ("fit", "compare"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert f"(default {NUM_CHAINS})" in text and f"(default {NUM_ITERATIONS})" in text


def test_gslda_default_c_is_the_one_chosen_on_validation_data():
    """c = 25: the best mean validation accuracy over three binary corpora at K = 10 and 20
    (studies/results/gslda_default_c.md); the registry, the command line, compare and
    GSLDAClassifier (c=None: the registry's) take it from gslda's signature."""
    assert gslda(5).response.c == 25.0
    assert REGISTRY["gslda"].options()["c"] == 25.0
    assert GSLDAClassifier().get_params()["c"] is None
    rng = np.random.default_rng(0)
    y = np.arange(16) % 2
    X = np.stack([rng.multinomial(12, np.kron(np.eye(2), np.full(4, 0.25))[c]) for c in y])
    est = GSLDAClassifier(2, num_chains=1, num_iterations=2, num_snapshots=1, test_burnin=1,
                          test_draws=1).fit(X, y)
    assert est.c_ == 25.0 and est.result_.model.response.c == 25.0
