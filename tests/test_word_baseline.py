"""The word baseline of every comparison (``topiczoo.word_baseline``): on small corpora its
score is that of scikit-learn's own pipeline on the texts (CountVectorizer, then tf-idf, then
the linear model whose regularisation its cross-validation chose on the training set)."""

import warnings

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.linear_model import LogisticRegressionCV, RidgeCV
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import StratifiedKFold
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline

from topiczoo.corpus import Corpus
from topiczoo.word_baseline import RIDGE_ALPHAS, word_baseline

WORDS = [["goal", "match", "team", "score", "league"], ["vote", "party", "minister", "tax"],
         ["market", "shares", "profit", "bank", "rate"]]


def _texts(num_docs, seed):
    """Texts of three word groups plus shared words; the group of each document is its
    class, and a rating grows with the share of the first group's words."""
    rng = np.random.default_rng(seed)
    shared = ["said", "year", "people", "new", "time", "week"]
    texts, classes, ratings = [], [], []
    for d in range(num_docs):
        group = d % 3
        own = rng.integers(2, 8)
        words = list(rng.choice(WORDS[group], own)) + list(rng.choice(shared, 6))
        words += list(rng.choice(WORDS[(group + 1) % 3], rng.integers(0, 4)))
        texts.append(" ".join(rng.permutation(words)))
        classes.append(group)
        ratings.append(own / len(words) + 0.1 * (group == 0) + rng.normal(0, 0.02))
    return texts, np.array(classes), np.array(ratings)


def _split(kind, texts, classes, ratings, num_train):
    """Train and test corpora of the texts through scikit-learn's CountVectorizer (the
    vocabulary of the training texts), and the labels of ``kind``."""
    labels = {"binary": (classes == 0).astype(int), "multiclass": classes,
              "regression": ratings}[kind]
    vectorizer = CountVectorizer()
    X_train = vectorizer.fit_transform(texts[:num_train]).toarray()
    X_test = vectorizer.transform(texts[num_train:]).toarray()
    vocab = list(vectorizer.get_feature_names_out())
    train = Corpus.from_document_term(X_train, vocab, labels[:num_train])
    test = Corpus.from_document_term(X_test, vocab, labels[num_train:])
    return train, test, labels


def _scikit_learn(kind):
    if kind == "regression":
        return RidgeCV(alphas=RIDGE_ALPHAS)
    logistic = LogisticRegressionCV(cv=StratifiedKFold(5), scoring="accuracy", max_iter=2000)
    return logistic if kind == "binary" else OneVsRestClassifier(logistic)


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_the_word_baseline_is_scikit_learns_pipeline(kind):
    texts, classes, ratings = _texts(90, seed=1)
    train, test, labels = _split(kind, texts, classes, ratings, 60)
    found = word_baseline(train, test)
    pipeline = make_pipeline(CountVectorizer(), TfidfTransformer(), _scikit_learn(kind))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        pipeline.fit(texts[:60], labels[:60])
    predicted = pipeline.predict(texts[60:])
    if kind == "regression":
        assert found["metrics"]["predictive_r2"] == pytest.approx(
            r2_score(labels[60:], predicted), rel=1e-12)
        assert found["regularisation"] == {"alpha": pipeline[-1].alpha_}
        assert found["model"] == "words: tf-idf + ridge"
    else:
        assert found["metrics"]["accuracy"] == accuracy_score(labels[60:], predicted)
        model = pipeline[-1]
        chosen = [model.C_[0]] if kind == "binary" else [e.C_[0] for e in model.estimators_]
        assert found["regularisation"]["C"] == pytest.approx(chosen, rel=1e-12)
    assert 0 < found["train_seconds"] < 60


def test_the_word_baseline_refuses_corpora_of_two_vocabularies():
    texts, classes, ratings = _texts(30, seed=2)
    train, test, _ = _split("binary", texts, classes, ratings, 20)
    other = Corpus.from_document_term(test.document_term_matrix()[:, ::-1],
                                      list(test.vocabulary)[::-1], test.labels)
    with pytest.raises(ValueError, match="encoded in the training vocabulary"):
        word_baseline(train, other)
