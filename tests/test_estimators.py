"""The scikit-learn estimators: conventions, clone, GridSearchCV over c, c = "cv", input
errors, and scikit-learn's own estimator checks (on count input, see SKIPPED_CHECKS)."""

import inspect
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

import topiczoo.compare
import topiczoo.datasets
import topiczoo.run
import topiczoo.tuning
from topiczoo.errors import DataLossWarning
from topiczoo.estimators import (SKIPPED_CHECKS, GSLDAClassifier, MedLDAClassifier,
                                 MedLDARegressor, SHDPRegressor, SLDARegressor)
from topiczoo.tuning import choose_c

FAST = dict(num_iterations=4, num_chains=1, num_snapshots=2, test_burnin=2, test_draws=2)
ALL = (GSLDAClassifier, MedLDAClassifier, MedLDARegressor, SLDARegressor, SHDPRegressor)


def _counts(num_docs=24, seed=0, classes=2):
    """Documents of ``classes`` topics over 4 words each, label = topic."""
    rng = np.random.default_rng(seed)
    y = np.arange(num_docs) % classes
    phi = np.kron(np.eye(classes), np.full(4, 0.25))
    return np.stack([rng.multinomial(12, phi[c]) for c in y]), y


@pytest.mark.parametrize("cls", ALL)
def test_the_docstring_names_every_parameter(cls):
    """help(cls) shows the model's own text, then the run settings all estimators share."""
    doc = cls.__doc__
    assert doc is not None and "Run settings" in doc and "Fitted attributes" in doc
    missing = [name for name in inspect.signature(cls.__init__).parameters
               if name != "self" and not re.search(rf"\b{name}\b", doc)]
    assert not missing


@pytest.mark.parametrize("cls", ALL)
def test_init_stores_parameters_and_clone_copies_them(cls):
    est = cls(3, random_state=7, num_iterations=11)
    params = est.get_params()
    assert params["num_topics"] == 3 and params["random_state"] == 7
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    assert est.set_params(num_topics=5) is est and est.num_topics == 5
    assert not [k for k in vars(est) if k.endswith("_")]  # nothing fitted by __init__
    cls(num_topics="nonsense")  # checked at fit time, not in __init__
    with pytest.raises(ValueError, match="num_topics"):
        cls(num_topics=0).fit(*_counts())


def test_classifiers_fit_predict_proba_transform_score():
    X, y = _counts()
    names = np.array(["sport", "tech"])[y]
    gslda = GSLDAClassifier(2, **FAST).fit(sp.csr_matrix(X), names)
    assert list(gslda.classes_) == ["sport", "tech"] and gslda.n_features_in_ == 8
    proba = gslda.predict_proba(X)
    assert proba.shape == (24, 2) and np.allclose(proba.sum(1), 1)
    np.testing.assert_array_equal(gslda.classes_[proba.argmax(1)], gslda.predict(X))
    assert gslda.score(X, names) > 0.9
    assert gslda.transform(X[:5]).shape == (5, 2)
    assert np.allclose(gslda.transform(X[:5]).sum(1), 1, atol=1e-5)
    medlda = MedLDAClassifier(2, **FAST).fit(X, y)
    assert not hasattr(medlda, "predict_proba")  # the hinge gives no probabilities
    decision = medlda.decision_function(X)
    np.testing.assert_array_equal((decision > 0).astype(int), medlda.predict(X))
    X3, y3 = _counts(classes=3)
    multi = GSLDAClassifier(3, **FAST).fit(X3, y3)  # gslda-multitask
    assert multi.result_.model.describe()["model"] == "gslda-multitask"
    assert multi.predict_proba(X3).shape == (24, 3) and multi.decision_function(X3).shape == (24, 3)


def _multilabel_counts(num_docs=30, labels=3, seed=0):
    """Documents of 4 words per label they have (each label its own 4 words), [D, L] y."""
    rng = np.random.default_rng(seed)
    Y = np.zeros((num_docs, labels), np.int64)
    Y[np.arange(num_docs), np.arange(num_docs) % labels] = 1  # every document has a label
    Y |= rng.random((num_docs, labels)) < 0.3
    phi = np.kron(np.eye(labels), np.full(4, 0.25))
    X = np.stack([sum(rng.multinomial(8, phi[l]) for l in np.flatnonzero(row)) for row in Y])
    return X, Y


def test_classifiers_take_a_multi_label_indicator_y():
    """A user's report: 2-D multi-label y was refused though the models support it. A [D, L]
    0/1 y fits one task per label (gslda / medlda); predict gives [D, L] 0/1 as scikit-learn's
    multi-label classifiers do, classes_ is arange(L), score the subset accuracy."""
    from sklearn.metrics import accuracy_score

    X, Y = _multilabel_counts()
    settings = {**FAST, "num_iterations": 20}
    for cls in (GSLDAClassifier, MedLDAClassifier):
        est = cls(4, c=4, **settings).fit(X, Y)
        assert est.result_.model.describe()["model"] == cls._entries["binary"]
        assert est.result_.task.kind == "multilabel" and list(est.classes_) == [0, 1, 2]
        predicted = est.predict(X)
        assert predicted.shape == (30, 3) and predicted.dtype == np.int64
        decision = est.decision_function(X)
        assert decision.shape == (30, 3)
        np.testing.assert_array_equal((decision > 0).astype(int), predicted)
        assert est.score(X, Y) == accuracy_score(Y, predicted)
        assert accuracy_score(Y.ravel(), predicted.ravel()) > 0.7  # per label
        # a list of lists is the same y
        again = cls(4, c=4, **settings).fit(X, Y.tolist()).predict(X)
        np.testing.assert_array_equal(again, predicted)
    gslda = GSLDAClassifier(4, c=4, **settings).fit(X, Y)
    proba = gslda.predict_proba(X)  # each label's probability: rows need not sum to 1
    assert proba.shape == (30, 3) and np.all((proba > 0) & (proba < 1))
    np.testing.assert_array_equal(proba.round().astype(int), gslda.predict(X))
    texts = [" ".join(w for l in np.flatnonzero(row) for w in (f"a{l}", f"b{l}", f"c{l}"))
             for row in Y]
    on_texts = GSLDAClassifier(4, c=4, **settings).fit(texts, Y)
    assert on_texts.predict(texts[:5]).shape == (5, 3)
    with pytest.raises(ValueError, match=r"a 2-D y must be a \[D, L\] 0/1 indicator matrix "
                                         r"\(multi-label.*got shape \(30, 3\) with values 0, 2"):
        GSLDAClassifier(2, **FAST).fit(X, 2 * Y)
    with pytest.raises(ValueError, match="y should be a 1d array"):  # regressors: one response
        MedLDARegressor(2, **FAST).fit(X, Y.astype(float))


def test_regressors_and_texts_with_unknown_words():
    X, y = _counts()
    ratings = y + 0.1 * np.arange(24) / 24
    for cls in (MedLDARegressor, SLDARegressor, SHDPRegressor):
        est = cls(2, **FAST, c=16.0) if cls is MedLDARegressor else cls(2, **FAST)
        est.fit(X, ratings)
        assert est.predict(X).shape == (24,) and est.score(X, ratings) > 0.5
    texts = ["goal match team goal"] * 6 + ["chip code data chip"] * 6 + [""]
    labels = [0] * 6 + [1] * 6 + [1]
    with pytest.warns(DataLossWarning, match="1 of 13 training documents have no tokens"):
        # the empty text is left out; 10 iterations, not FAST's 4: after 4, 2 of 40 seeds
        # still confuse the two topics, after 10 none does
        est = GSLDAClassifier(2, **{**FAST, "num_iterations": 10}).fit(texts, labels)
    assert est.vocabulary_ == ("chip", "code", "data", "goal", "match", "team")
    with pytest.warns(DataLossWarning, match="2 of 4 tokens are outside the training vocabulary"):
        assert list(est.predict(["goal zebra", "chip unicorn"])) == [0, 1]
    with pytest.raises(ValueError, match="fitted on texts"):
        est.predict(np.ones((2, 6), int))
    # texts without a known token get the prior's proportions, as a text of unknown words does
    with pytest.warns(DataLossWarning, match="2 of 2 test documents have no tokens"):
        assert est.predict(["", "  "]).shape == (2,)
    with pytest.warns(DataLossWarning, match="2 of 2 test documents have no tokens") as caught:
        assert est.transform(["", "  "]).shape == (2, 2)
    assert caught[0].filename == __file__  # the warning points at the caller
    assert est.transform([]).shape == (0, 2)
    with pytest.raises(TypeError, match=r"texts\[0\] is missing \(None\)"):
        est.transform([None])
    with pytest.raises(TypeError, match=r"texts\[0\] is missing \(None\)"):
        GSLDAClassifier(2, **FAST).fit([None] + texts[1:], labels)
    with pytest.raises(TypeError, match="y mixes strings and numbers"):
        GSLDAClassifier(2, **FAST).fit(texts, ["a"] + labels[1:])


def test_refit_empty_input_feature_names_and_one_sample():
    """A user's review: a refit on texts after a fit on a matrix could not predict; predict
    of no texts crashed; set_output(transform="pandas") had no column names; one sample gave
    a message scikit-learn's check_fit2d_1sample does not accept."""
    import pandas as pd

    X, y = _counts()
    texts = ["goal team match", "chip code data"] * 6
    labels = [0, 1] * 6
    est = GSLDAClassifier(2, **FAST).fit(X, y)
    assert est.n_features_in_ == 8
    est.fit(texts, labels)
    assert not hasattr(est, "n_features_in_")
    assert list(est.predict(texts[:2])) == [0, 1]
    assert est.predict([]).shape == (0,) and est.predict_proba([]).shape == (0, 2)
    assert est.decision_function([]).shape == (0,)
    assert est.decision_function(texts[:2]).dtype == np.float64
    assert list(est.get_feature_names_out()) == ["topic0", "topic1"]
    frame = clone(est).set_output(transform="pandas").fit(texts, labels).transform(texts[:3])
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["topic0", "topic1"]
    multi = MedLDAClassifier(2, **FAST).fit(texts + ["paint brush canvas"] * 6, labels + [2] * 6)
    assert multi.decision_function([]).shape == (0, 3) and multi.predict([]).shape == (0,)
    for cls in (SLDARegressor, SHDPRegressor, MedLDARegressor):
        with pytest.raises(ValueError, match="needs at least 2 samples to fit, got 1 sample"):
            cls(2, **FAST).fit(X[:1], [1.0])


def test_every_kind_of_empty_input_at_predict_gets_the_prior_with_a_warning():
    """A user's report: an all-zero document-term matrix at predict was an error while texts
    without a known word got the prior's prediction with a warning. Now every document
    without tokens gets the prior's prediction (the same for all of them) and a
    DataLossWarning, whatever the input; no rows, as no texts, give empty output."""
    X, y = _counts()
    est = GSLDAClassifier(2, **FAST).fit(X, y)
    prior = None
    for empty in (np.zeros((3, 8), int), sp.csr_matrix((3, 8), dtype=np.int64),
                  np.vstack([X[:1], np.zeros((2, 8), int)])):
        with pytest.warns(DataLossWarning, match=r"test documents have no tokens") as caught:
            proba = est.predict_proba(empty)
        assert caught[0].filename == __file__
        assert proba.shape == (3, 2)
        prior = proba[-1] if prior is None else prior
        np.testing.assert_allclose(proba[1:], np.broadcast_to(prior, (2, 2)), rtol=1e-6)
    with pytest.warns(DataLossWarning, match="3 of 3 test documents have no tokens"):
        assert est.predict(np.zeros((3, 8), int)).shape == (3,)
    with pytest.warns(DataLossWarning, match="2 of 2 test documents have no tokens"):
        assert est.transform(np.zeros((2, 8), int)).shape == (2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no documents: nothing got a made-up prediction
        assert est.predict(np.zeros((0, 8), int)).shape == (0,)
        assert est.predict_proba(sp.csr_matrix((0, 8))).shape == (0, 2)
    texts = GSLDAClassifier(2, **FAST).fit(["goal match team", "chip code data"] * 6, [0, 1] * 6)
    for words in (["", "  "], ["the and of", "zebra"]):
        with pytest.warns(DataLossWarning, match="2 of 2 test documents have no tokens"):
            assert texts.predict(words).shape == (2,)
    with pytest.raises(ValueError, match="every entry of the document-term matrix is zero"):
        GSLDAClassifier(2, **FAST).fit(np.zeros((2, 8), int), [0, 1])  # fitting needs tokens


def test_token_lists_and_text_frames_are_clear_errors_and_a_series_of_texts_works():
    """A user's report: ragged token-id lists and a DataFrame text column gave raw numpy and
    pandas errors. They are errors saying what X was and what is expected; a pandas Series
    of texts (any index, str or object dtype) is texts."""
    import pandas as pd

    expected = r"takes a \[D, V\] document-term matrix of word counts .* or a sequence of D texts"
    frame = pd.DataFrame({"n": range(12), "text": ["goal match team", "chip code data"] * 6})
    for X, message in (
            ([[0, 1, 2], [1, 2]], r"X holds 2 sequences of lengths 3, 2 \(token-id lists, one per "
                                  r"document\?\): count them into a matrix, for lists docs "
                                  r"Corpus\(np.concatenate\(docs\)"),
            ([["goal", "team"], ["chip"]], r"\(token lists, one per document\?\): join each "),
            (np.array([[0, 1, 2], [1, 2]], dtype=object), "X holds 2 sequences of lengths 3, 2"),
            (frame, r"X is a DataFrame with text in column\(s\) 'text': pass the column of "
                    r"texts, X\['text'\]"),
            (frame[["text"]].to_numpy().astype(str), r"X is a \(12, 1\) array of str")):
        with pytest.raises(TypeError, match=expected + ".*" + message):
            GSLDAClassifier(2, **FAST).fit(X, [0, 1] * (len(X) // 2))
    est = GSLDAClassifier(2, **FAST).fit(frame["text"], pd.Series([0, 1] * 6, index=range(5, 17)))
    texts = pd.Series(["goal team", "chip data"], index=[7, 3], dtype="string")
    assert list(est.predict(texts)) == list(est.predict(["goal team", "chip data"]))
    with pytest.raises(TypeError, match=r"texts\[1\] is missing \(nan\); every document needs a "):
        est.predict(pd.Series(["goal team", None]))
    with pytest.raises(TypeError, match="X is a DataFrame with text in column"):
        est.predict(frame)


@pytest.mark.parametrize("X, y, error, message", [
    (np.array([[1, 2], [3, np.nan]]), [0, 1], ValueError, "NaN"),
    (np.array([[1, 2], [3, -1]]), [0, 1], ValueError, "Negative values"),
    (np.array([[1, 2.5], [3, 1]]), [0, 1], ValueError, "whole numbers"),
    (np.array([[1, 2], [3, 1]]), [0, 1, 1], ValueError, "inconsistent numbers of samples"),
    (np.array([[1, 2], [3, 1]]), [1, 1], ValueError, "only one class"),
    (np.array([[0, 0], [0, 0]]), [0, 1], ValueError, "zero"),
    ("one text", [0], TypeError, "not a single string"),
    (np.array([[1, 2], [3, 1]]), [0.5, 1.5], ValueError, "Unknown label type"),
])
def test_bad_input_is_a_clear_error(X, y, error, message):
    with pytest.raises(error, match=message):
        GSLDAClassifier(2, **FAST).fit(X, y)


def test_bad_settings_and_wrong_width_are_clear_errors():
    X, y = _counts()
    for bad, message in ((dict(strategy="last"), "strategy"), (dict(c="tune"), "'cv'"),
                         (dict(c=2.5), "whole-number"), (dict(num_chains=0), "num_chains"),
                         (dict(random_state=-1), "random_state"),
                         (dict(num_snapshots=0), "num_snapshots"),
                         (dict(test_burnin=-1), "test_burnin")):
        with pytest.raises(ValueError, match=message):
            GSLDAClassifier(2, **{**FAST, **bad}).fit(X, y)
    est = MedLDAClassifier(2, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="X has 5 features"):
        est.predict(X[:, :5])


def test_the_sampler_is_a_parameter_checked_at_fit_time():
    X, y = _counts()
    est = MedLDAClassifier(2, sampler="light:mh_steps=3", **FAST)
    assert est.get_params()["sampler"] == "light:mh_steps=3"
    est.fit(X, y)
    assert est.result_.sampler == "light:mh_steps=3"
    assert est.predict(X).shape == (X.shape[0],)
    with pytest.raises(ValueError, match="unknown sampler 'ligth'"):
        GSLDAClassifier(2, sampler="ligth", c="cv", **FAST).fit(X, y)


def test_grid_search_over_c_runs_and_reports_the_best_c():
    X, y = _counts(num_docs=32)
    search = GridSearchCV(GSLDAClassifier(2, **FAST), {"c": [1.0, 4.0]}, cv=2).fit(X, y)
    assert search.best_params_["c"] in (1.0, 4.0)
    assert search.cv_results_["mean_test_score"].shape == (2,)
    assert search.best_estimator_.c_ == search.best_params_["c"]


def test_choose_c_picks_the_best_mean_and_the_first_of_ties(monkeypatch):
    """fit_and_predict replaced by a scorer whose accuracy is known for each (c, fold)."""
    import topiczoo.run
    from topiczoo.models.registry import REGISTRY

    table = {1.0: [0.5, 0.7], 2.0: [0.9, 0.8], 4.0: [0.85, 0.85], 8.0: [0.8, 0.9]}
    folds = iter(range(10**6))

    def fake(entry, num_topics, train, valid, *, options, **_):
        k = next(folds) % 2
        value = table[options["c"]][k]
        metrics = {"accuracy": value}
        task = type("T", (), {"kind": "binary"})()
        prediction = type("P", (), {"task": task, "metrics": lambda self, *a: metrics})()
        return type("R", (), {"prediction": prediction})()

    monkeypatch.setattr(topiczoo.run, "fit_and_predict", fake)
    monkeypatch.setattr(topiczoo.compare, "fit_and_predict", fake)
    monkeypatch.setattr(topiczoo.tuning, "fit_and_predict", fake)
    X, y = _counts()
    from topiczoo.corpus import Corpus

    corpus = Corpus.from_document_term(X, [f"w{i}" for i in range(8)], y)
    tuning = choose_c(REGISTRY["gslda"], 2, corpus, grid=[1, 2, 4, 8], num_folds=2)
    # 2 and 8 tie at 0.85 with 4: the first of the best means
    assert tuning.best_c == 2.0 and tuning.metric == "accuracy"
    np.testing.assert_allclose(tuning.scores, [table[c] for c in (1.0, 2.0, 4.0, 8.0)])
    assert "*" in tuning.table().splitlines()[3]  # the row of c = 2
    with pytest.raises(ValueError, match="no option c"):
        choose_c(REGISTRY["slda-gaussian"], 2, corpus)


def test_the_search_for_c_is_its_own_module_and_keeps_its_old_import_path():
    """choose_c and what belongs with it live in topiczoo.tuning; the command line (and
    older scripts) import them from topiczoo.estimators, which re-exports them."""
    import topiczoo.estimators
    import topiczoo.tuning

    for name in ("choose_c", "CTuning", "C_GRID_CLASSIFICATION", "C_GRID_REGRESSION",
                 "default_c_grid"):
        assert getattr(topiczoo.estimators, name) is getattr(topiczoo.tuning, name)
        assert name in topiczoo.tuning.__all__
    assert topiczoo.tuning.choose_c.__module__ == "topiczoo.tuning"


def test_c_cv_in_the_estimator_refits_with_the_chosen_c():
    X, y = _counts(num_docs=24)
    est = MedLDARegressor(2, c="cv", c_grid=[1.0, 64.0], cv_folds=2, **FAST)
    est.fit(X, y + 0.5)
    scores = est.c_tuning_.scores.mean(1)
    assert est.c_ == (1.0, 64.0)[int(np.argmax(scores))]
    assert est.result_.model.response.c == est.c_ and est.get_params()["c"] == "cv"
    # cv_results_ as scikit-learn's searches have it (a user's report: it meant something
    # else), the CTuning record in c_tuning_
    results = est.cv_results_
    assert isinstance(results, dict) and results["params"] == [{"c": 1.0}, {"c": 64.0}]
    np.testing.assert_array_equal(results["param_c"], [1.0, 64.0])
    np.testing.assert_allclose(results["mean_test_score"], scores)
    np.testing.assert_allclose(results["split1_test_score"], est.c_tuning_.scores[:, 1])
    np.testing.assert_allclose(results["std_test_score"], est.c_tuning_.scores.std(1))
    assert results["params"][int(np.argmin(results["rank_test_score"]))] == {"c": est.c_}
    assert MedLDARegressor(2, **FAST).fit(X, y + 0.5).cv_results_ is None


def test_cv_results_rank_as_scikit_learn_ranks():
    """rank 1 the best mean; ties share the lowest rank (scipy's rankdata "min"); NaN last."""
    from topiczoo.tuning import CTuning

    tuning = CTuning(2.0, "accuracy", (1.0, 2.0, 4.0, 8.0),
                     np.array([[0.5, 0.5], [0.5, 1.0], [0.75, 0.75], [np.nan, 1.0]]))
    results = tuning.cv_results()
    assert results["rank_test_score"].tolist() == [3, 1, 1, 4]
    assert results["rank_test_score"].dtype == np.int32
    assert results["split0_test_score"].tolist()[:3] == [0.5, 0.5, 0.75]


def test_random_state_takes_generators_and_messages_show_plain_numbers():
    """A user's report: a numpy Generator was refused as random_state, and messages printed
    np.int64(1). A Generator (or RandomState) gives one seed, reproducibly from its state."""
    X, y = _counts()
    seeds = [GSLDAClassifier(2, **FAST, random_state=rs).fit(X, y).seed_
             for rs in (np.random.default_rng(5), np.random.default_rng(5),
                        np.random.RandomState(5), 7, np.int64(7))]
    assert seeds[0] == seeds[1] and seeds[3] == seeds[4] == 7
    assert all(isinstance(s, int) and 0 <= s < 2**31 for s in seeds)
    with pytest.raises(ValueError, match=r"only one class: 3$"):
        GSLDAClassifier(2, **FAST).fit(X, np.full(24, 3))
    with pytest.raises(ValueError, match=r"only one class: 'spam'$"):
        GSLDAClassifier(2, **FAST).fit(X, np.array(["spam"] * 24))
    for bad, message in ((dict(random_state=np.int64(-1)), r"or None, got -1$"),
                         (dict(num_chains=np.int64(0)), r"num_chains must be an integer >= 1, "
                                                        r"got 0$"),
                         (dict(strategy=np.str_("last")), r"got 'last'$")):
        with pytest.raises(ValueError, match=message):
            GSLDAClassifier(2, **{**FAST, **bad}).fit(X, y)


def test_shdp_regressor_with_the_epsilon_insensitive_loss():
    """loss="epsilon_insensitive" fits shdp-regression; its default c is 3 per sd of the
    training responses and c_ says it in response units; an explicit c and c = "cv" are
    absolute; a parameter of the other loss is refused at fit time."""
    X, y = _counts()
    ratings = 0.5 * y + 0.1 * np.arange(24) / 24
    # 12 iterations: from the dispersed start 4 reach R^2 0.23-0.72 by seed, 12 0.88-0.99
    est = SHDPRegressor(2, loss="epsilon_insensitive", **{**FAST, "num_iterations": 12})
    est.fit(X, ratings)
    assert est.result_.model.describe()["model"] == "shdp-regression"
    assert est.c_ == pytest.approx(3 / np.std(ratings), rel=1e-6)
    assert est.predict(X).shape == (24,) and est.score(X, ratings) > 0.5
    fixed = SHDPRegressor(2, loss="epsilon_insensitive", c=16.0, eps=0.01, **FAST)
    assert fixed.fit(X, ratings).c_ == 16.0
    assert fixed.result_.model.response.eps == pytest.approx(0.01)
    tuned = SHDPRegressor(2, loss="epsilon_insensitive", c="cv", c_grid=[1.0, 64.0],
                          cv_folds=2, **FAST).fit(X, ratings)
    assert tuned.c_ == (1.0, 64.0)[int(np.argmax(tuned.c_tuning_.scores.mean(1)))]
    gaussian = SHDPRegressor(2, **FAST).fit(X, ratings)
    assert gaussian.result_.model.describe()["model"] == "shdp-gaussian" and gaussian.c_ is None
    for bad, message in ((dict(loss="huber"), "loss must be one of"),
                         (dict(c=4.0), "c belongs to loss='epsilon_insensitive', not to "
                                       "loss='squared_error'; leave it None"),
                         (dict(loss="epsilon_insensitive", s2=0.1, learn_s2=False),
                          "s2, learn_s2 belong to loss='squared_error', not to "
                          "loss='epsilon_insensitive'; leave them None")):
        with pytest.raises(ValueError, match=message):
            SHDPRegressor(2, **{**FAST, **bad}).fit(X, ratings)


# ------------------------------------------------------------------------ scikit-learn checks


def _ceil_counts(values):
    """ceil(3 x) of finite non-negative fractional numbers; None for anything else (whole
    numbers, negative, NaN or infinite values, complex data), which stays as it is."""
    if np.iscomplexobj(values):
        return None
    try:
        x = np.asarray(values, np.float64)
    except (TypeError, ValueError):
        return None
    if not (np.all(np.isfinite(x)) and np.all(x >= 0)) or np.all(x == np.round(x)):
        return None
    return np.ceil(3 * x)


def _as_counts(X):
    """scikit-learn's checks draw X from continuous distributions (shifted to non-negative for
    a positive-only estimator); a topic model takes counts: fractional X becomes ceil(3 X),
    in its own container (array, sparse format, DataFrame, object array). Whole numbers,
    negative, NaN, infinite and non-numeric X pass unchanged (so the estimator's own input
    checks meet them, and applying it twice changes nothing)."""
    if sp.issparse(X):
        coo = X.tocoo()
        data = _ceil_counts(coo.data)
        if data is None:
            return X
        make = sp.coo_array if isinstance(X, sp.sparray) else sp.coo_matrix
        return make((data, (coo.row, coo.col)), shape=X.shape).asformat(X.format)
    if hasattr(X, "iloc"):  # a DataFrame: keep its column names
        data = _ceil_counts(X.to_numpy())
        return X if data is None else X.__class__(data, columns=X.columns, index=X.index)
    if isinstance(X, (str, bytes)):
        return X
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):
        return X
    if arr.ndim != 2:
        return X
    data = _ceil_counts(arr)
    if data is None:
        return X
    return data.astype(arr.dtype) if arr.dtype.kind in "fO" else data


def _counting(cls):
    """``cls`` with X rounded up to counts (:func:`_as_counts`) on its way into the methods
    that take X (the others, score and fit_transform, call these)."""
    def wrap(name):
        if name == "fit":
            def method(self, X, y=None, **kwargs):
                return getattr(super(counting, self), name)(_as_counts(X), y, **kwargs)
        else:
            def method(self, X, **kwargs):
                return getattr(super(counting, self), name)(_as_counts(X), **kwargs)
        return method

    names = [n for n in ("fit", "predict", "predict_proba", "decision_function", "transform")
             if hasattr(cls, n)]
    counting = type(f"Counts{cls.__name__}", (cls,), {n: wrap(n) for n in names})
    counting.__module__ = __name__
    globals()[counting.__name__] = counting  # picklable by name
    return counting


# a classifier (with predict_proba) and a regressor: the other estimators share their code
CHECKED = [_counting(GSLDAClassifier)(2, **FAST), _counting(MedLDARegressor)(2, **FAST)]


@pytest.mark.slow  # every check fits (and compiles for its data shape)
@parametrize_with_checks(CHECKED, expected_failed_checks=lambda est: SKIPPED_CHECKS)
def test_scikit_learn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLossWarning)
        check(estimator)


# ------------------------------------------------------------------------ topiczoo fit --c cv


def test_fit_c_cv_on_the_command_line(tmp_path, monkeypatch, capsys):
    import json

    import topiczoo.compare
    from topiczoo.cli import main
    from topiczoo.corpus import Corpus
    from topiczoo.datasets import DataSet

    X, y = _counts(num_docs=32)
    corpus = Corpus.from_document_term(X, [f"w{i}" for i in range(8)], y + 0.5)
    data = DataSet("movie-scale", corpus.subset(np.arange(24)), corpus.subset(np.arange(24, 32)),
                   "regression", ("rating",), 0, "synthetic")
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", lambda name, **kw: data)
    monkeypatch.setattr(topiczoo.compare, "load_dataset", lambda name, **kw: data)
    out = tmp_path / "run"
    argv = ["fit", "--model", "medlda-regression", "--data", "movie-scale", "--topics", "2",
            "--iterations", "4", "--chains", "1", "--snapshots", "2", "--test-burnin", "2",
            "--test-draws", "2", "--quiet", "--out", str(out)]
    assert main(argv + ["--c", "cv", "--c-grid", "1,64", "--cv-folds", "2",
                        "--workers", "0"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    tuning = summary["c_cross_validation"]
    assert tuning["grid"] == [1.0, 64.0] and len(tuning["scores"][0]) == 2
    best = tuning["grid"][int(np.argmax(np.mean(tuning["scores"], axis=1)))]
    assert tuning["best_c"] == best == summary["hyperparameters"]["c"]
    assert f"c = {best:g}" in printed and "predictive_r2 mean" in printed
    assert "(1 chain x 4 iterations per fit" in printed
    for extra, message in ((["--c-grid", "1,4"], "--c-grid is the grid of --c cv"),
                           (["--c", "cv", "--cv-folds", "1"], "--cv-folds must be >= 2")):
        assert main(argv + extra) == 2
        assert message in capsys.readouterr().err
    assert main(["fit", "--model", "slda-gaussian", "--c", "cv", "--check"]) == 2
    assert "has no option --c" in capsys.readouterr().err


def test_c_cv_search_resumes_from_its_record(tmp_path, monkeypatch, capsys):
    """--c cv --checkpoint: each finished (c, fold) is kept in OUT/choose_c.json; an
    interrupted search (or an interrupted final fit) used to rerun the whole search."""
    import json

    import topiczoo.datasets
    import topiczoo.run
    from topiczoo.cli import main
    from topiczoo.corpus import Corpus
    from topiczoo.datasets import DataSet

    X, y = _counts(num_docs=32)
    corpus = Corpus.from_document_term(X, [f"w{i}" for i in range(8)], y + 0.5)
    data = DataSet("movie-scale", corpus.subset(np.arange(24)), corpus.subset(np.arange(24, 32)),
                   "regression", ("rating",), 0, "synthetic")
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", lambda name, **kw: data)
    monkeypatch.setattr(topiczoo.compare, "load_dataset", lambda name, **kw: data)
    argv = ["fit", "--model", "medlda-regression", "--data", "movie-scale", "--topics", "2",
            "--iterations", "4", "--chains", "1", "--snapshots", "2", "--test-burnin", "2",
            "--test-draws", "2", "--quiet", "--c", "cv", "--c-grid", "1,64", "--cv-folds", "2",
            "--workers", "0"]  # in this process: the monkeypatches below reach no worker
    assert main(argv + ["--out", str(tmp_path / "whole")]) == 0
    whole = json.loads((tmp_path / "whole" / "summary.json").read_text())["c_cross_validation"]
    real, calls = topiczoo.run.fit_and_predict, []

    def counted(*args, **kwargs):  # Ctrl-C in the third of the four (c, fold) fits
        calls.append(kwargs.get("options", {}).get("c"))
        if len(calls) == 3 and stop:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(topiczoo.run, "fit_and_predict", counted)
    monkeypatch.setattr(topiczoo.compare, "fit_and_predict", counted)
    monkeypatch.setattr(topiczoo.tuning, "fit_and_predict", counted)
    out = tmp_path / "run"
    stop = True
    assert main(argv + ["--out", str(out), "--checkpoint"]) == 130
    record = json.loads((out / "choose_c.json").read_text())
    assert sorted(record["scores"]) == ["1.0/0", "1.0/1"]
    calls.clear()
    stop = False
    assert main(argv + ["--out", str(out), "--checkpoint"]) == 0
    assert calls == [64.0, 64.0, whole["best_c"]]  # the two missing folds, then the final fit
    resumed = json.loads((out / "summary.json").read_text())["c_cross_validation"]
    assert resumed["scores"] == whole["scores"] and resumed["best_c"] == whole["best_c"]
    capsys.readouterr()
    assert main(argv + ["--out", str(out), "--checkpoint", "--cv-iterations", "3"]) == 2
    assert "choose_c.json records a c search with other settings (fit_kwargs)" in \
        capsys.readouterr().err
