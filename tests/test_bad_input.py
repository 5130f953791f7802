"""Bad input gets a clear error, before any sampling starts."""

from __future__ import annotations

import numpy as np
import pytest

from topiczoo.cli import main
from topiczoo.corpus import Corpus
from topiczoo.fit import fit
from topiczoo.kernels.gibbs import GibbsKernel
from topiczoo.models import (gslda, gslda_multitask, lda, medlda, medlda_multitask,
                             medlda_regression, slda_gaussian)
from topiczoo.models.responses import EpsilonInsensitive, Gaussian
from topiczoo.models.shdp import shdp_gaussian, shdp_logistic, shdp_multitask
from topiczoo.predict import predict
from topiczoo.models.supervised import corpus_data

VOCAB = ("a", "b", "c")


def _corpus(docs, labels=None):
    lengths = [len(d) for d in docs]
    words = np.concatenate([np.asarray(d, np.int32) for d in docs]) if docs else np.zeros(0)
    return Corpus(words.astype(np.int32), np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                  VOCAB, labels=None if labels is None else np.asarray(labels))


def test_empty_training_document_is_named():
    corpus = _corpus([[0, 1], [], [2]], [0, 1, 0])
    with pytest.raises(ValueError, match=r"empty.*\b1\b.*drop_empty"):
        fit(gslda(2), corpus, num_iterations=2, progress=False)


def test_one_token_documents_are_fine():
    corpus = _corpus([[0], [1], [2], [0]], [0, 1, 0, 1])
    result = fit(medlda(2, ell=1.0), corpus, num_chains=1, num_iterations=4, num_burnin=2,
                 num_snapshots=1, progress=False)
    assert np.isfinite(result.draws["eta"]).all()


def test_unknown_word_ids():
    with pytest.raises(ValueError, match="word id"):
        _corpus([[0, 7]], [0])
    data = corpus_data(gslda(2), _corpus([[0, 2], [1]], [1, 0]))
    with pytest.raises(ValueError, match=r"word ids must lie in \[0, 2\)"):
        GibbsKernel(gslda(2), 2).init(np.zeros(2, np.uint32), 0, None, (data,), {})


@pytest.mark.parametrize("model, labels, match", [
    (gslda(2), [0, 2, 1], "takes binary or multilabel labels; the corpus has multiclass"),
    (medlda(2), [0.0, np.nan, 1.0], "non-finite rating at document 1"),
    (gslda(2), [-1, 1, 0], "document 0: class id -1 is negative"),
    (medlda_multitask(2, 5), [0, 7, 2], "class label 7 out of range for 5 classes at document 1"),
    (gslda_multitask(2, 3), [0.5, 1.0, 2.0], "takes multiclass labels; the corpus has regression"),
    (medlda_regression(2), [0.1, 0.2, np.nan], "non-finite rating at document 2"),
    (slda_gaussian(2), [0, 1, 1], "takes regression labels; the corpus has binary"),
    (slda_gaussian(2), [3, 1, 2], r"corpus has multiclass labels \(integer labels read as class "
                                  r"ids; give ratings as floats"),
])
def test_labels_that_do_not_fit_the_model(model, labels, match):
    with pytest.raises(ValueError, match=match):
        fit(model, _corpus([[0, 1], [2], [1]], labels), num_iterations=2, progress=False)


def test_supervised_model_needs_labels():
    with pytest.raises(ValueError, match="needs a corpus with labels"):
        fit(gslda(2), _corpus([[0, 1]]), num_iterations=2, progress=False)


@pytest.mark.parametrize("make, match", [
    (lambda: gslda(0), "num_topics must be an integer >= 1"),
    (lambda: lda(2.5), "num_topics must be an integer"),
    (lambda: gslda(3, c=0), "c must be a positive"),
    (lambda: gslda(3, c=-1), "c must be a positive"),
    (lambda: gslda(3, c=2.5), "whole-number c"),
    (lambda: medlda(3, c=0), "c must be a positive"),
    (lambda: medlda(3, ell=float("nan")), "ell must be a positive"),
    (lambda: gslda(3, alpha=0), "alpha must be a positive"),
    (lambda: lda(3, beta=-0.1), "beta must be a positive"),
    (lambda: gslda(3, nu2=float("inf")), "nu2 must be a positive"),
    # float() and int() would take these, and bool() anything
    (lambda: gslda(3, alpha="1"), "alpha must be a positive finite number, got '1'"),
    (lambda: shdp_logistic(3, gamma=True), "gamma must be a positive finite number, got True"),
    (lambda: shdp_logistic(None), "num_topics must be an integer >= 1, got None"),
    (lambda: shdp_multitask(3, num_classes=2.5), "num_classes must be an integer >= 2"),
    (lambda: shdp_gaussian(3, center="no"), "center must be True or False, got 'no'"),
    (lambda: slda_gaussian(3, learn_s2="yes"), "learn_s2 must be True or False"),
])
def test_impossible_hyperparameters(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_run_settings():
    corpus = _corpus([[0, 1], [2, 1]], [0, 1])
    with pytest.raises(ValueError, match="num_chains must be an integer >= 1"):
        fit(gslda(2), corpus, num_chains=0, progress=False)
    with pytest.raises(ValueError, match="num_burnin"):
        fit(gslda(2), corpus, num_iterations=5, num_burnin=5, progress=False)
    with pytest.raises(ValueError, match="chain_method"):
        fit(gslda(2), corpus, chain_method="parallel", progress=False)
    for seed in (None, 1.5, -1, True):
        with pytest.raises(ValueError, match="seed must be an integer >= 0"):
            fit(gslda(2), corpus, seed=seed, progress=False)
    with pytest.raises(ValueError, match="the training corpus has no documents"):
        fit(lda(2), corpus.subset([]), progress=False)
    with pytest.raises(TypeError, match="corpus must be a topiczoo Corpus"):
        fit(lda(2), [[0, 1]], progress=False)


def test_test_corpus_must_use_training_vocabulary():
    corpus = _corpus([[0, 1], [2, 1]], [0, 1])
    result = fit(gslda(2), corpus, num_chains=1, num_iterations=4, num_snapshots=1,
                 progress=False)
    other = Corpus(np.array([0], np.int32), np.array([0, 1]), ("zzz",))
    with pytest.raises(ValueError, match="restrict_vocabulary"):
        predict(result, other)
    for bad, match in ((dict(num_draws=2.5), "num_draws must be an integer >= 1, got 2.5"),
                       (dict(num_burnin=-1), "num_burnin must be an integer >= 0"),
                       (dict(lag=0), "lag must be an integer >= 1"),
                       (dict(seed=-1), "seed must be an integer >= 0")):
        with pytest.raises(ValueError, match=match):
            predict(result, corpus, **bad)


def test_cli_reports_errors_without_traceback(capsys, tmp_path):
    assert main(["fit", "--topics", "0", "--out", str(tmp_path)]) == 2
    assert "--topics must be >= 1, got 0" in capsys.readouterr().err
    assert main(["fit", "--data", "nonsense", "--out", str(tmp_path)]) == 2
    assert "nonsense" in capsys.readouterr().err
    missing = tmp_path / "nowhere"
    assert main(["fit", "--data", "poliblog", "--data-dir", str(missing),
                 "--out", str(tmp_path)]) == 2
    assert str(missing) in capsys.readouterr().err


def test_impossible_response_constants():
    with pytest.raises(ValueError, match="eps must be a finite number >= 0"):
        EpsilonInsensitive(1.0, -0.1)
    with pytest.raises(ValueError, match="s2 must be a positive"):
        Gaussian(0.0)
    with pytest.raises(ValueError, match="num_classes must be an integer >= 2"):
        medlda_multitask(3, 1)


def test_multilabel_row_without_positive_label_when_forbidden():
    corpus = _corpus([[0, 1], [2, 1], [0]], np.array([[1, 0], [0, 0], [0, 1]]))
    with pytest.raises(ValueError, match="document 1 has no positive label"):
        corpus.require_labels("multilabel", at_least_one=True)
    corpus.require_labels("multilabel")  # allowed unless forbidden


def test_cli_rejects_a_model_for_the_wrong_task(capsys, tmp_path):
    assert main(["fit", "--model", "slda-gaussian", "--out", str(tmp_path)]) == 2
    assert "takes regression data" in capsys.readouterr().err
    assert main(["fit", "--model", "medlda-multitask", "--out", str(tmp_path)]) == 2
    assert "takes multiclass data" in capsys.readouterr().err
