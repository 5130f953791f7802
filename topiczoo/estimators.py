"""scikit-learn estimators over the registry's models.

Each estimator is a thin adapter: ``fit`` builds a :class:`~topiczoo.corpus.Corpus` from ``X``
and ``y``, the model from its registry entry (``topiczoo.models.registry``) and runs
:func:`topiczoo.fit.fit`; ``predict`` and friends run :func:`topiczoo.predict.predict` on a
test corpus in the training vocabulary. Nothing here samples.

============================  ==========================================  =================
estimator                     registry entry                              ``score``
============================  ==========================================  =================
:class:`GSLDAClassifier`      ``gslda`` (2 classes), ``gslda-multitask``  accuracy
:class:`MedLDAClassifier`     ``medlda`` (2 classes), ``medlda-multitask``  accuracy
:class:`MedLDARegressor`      ``medlda-regression``                       R^2
:class:`SLDARegressor`        ``slda-gaussian``                           R^2
:class:`SHDPRegressor`        ``shdp-gaussian``, ``shdp-regression``      R^2
                              (``loss="epsilon_insensitive"``)
============================  ==========================================  =================

**Input.** ``X`` is either a ``[D, V]`` document-term matrix of non-negative whole-number
counts (numpy array or scipy.sparse; checked with scikit-learn's ``validate_data``, so NaN,
infinite, negative or fractional entries are clear errors), or a sequence of ``D`` texts (a
list, a 1-D array or a pandas Series of str), tokenized by the ``tokenizer`` parameter (a
:class:`topiczoo.text.Tokenizer`; default ``Tokenizer()``). Per-document token-id or token
lists, a DataFrame with text columns and a 2-D array of str are errors saying what to pass
instead (token-id lists of equal lengths cannot be told from a matrix of counts given as
nested lists, and are read as one).
For texts, the training vocabulary is the words of the training texts; words of later texts
outside it are dropped with a :class:`~topiczoo.errors.DataLossWarning` giving the count, as
the command line does. Training documents without any token are left out of the fit with a
:class:`~topiczoo.errors.DataLossWarning` (the samplers need tokens; the named data sets drop
them too). At ``predict`` (and ``predict_proba``, ``decision_function``, ``transform``) every
document without tokens (a row of zeros, a matrix of zeros, a text without a word of the
training vocabulary) gets the prior's prediction, the same for all of them, with a
:class:`~topiczoo.errors.DataLossWarning` giving the count; no rows (or no texts) give an
output without rows.

**Defaults** are small enough for a laptop and a corpus of a few thousand documents: 10 topics,
the chains and iterations of every interface (:mod:`topiczoo.defaults`: 4 chains of 100 Gibbs
iterations, half burn-in, 5 snapshots), test chains of 20 burn-in sweeps and 10 kept draws,
averaging strategy ``"ma"``. Papers' runs use more iterations (200-1000) and, for the
regressors, a c chosen by cross-validation (``c="cv"``).

**c = "cv"** (classifiers with c, :class:`MedLDARegressor`, :class:`SHDPRegressor` with
``loss="epsilon_insensitive"``): :func:`topiczoo.tuning.choose_c` runs a
``cv_folds``-fold cross-validation on the training set over ``c_grid`` (default
:data:`~topiczoo.tuning.C_GRID_CLASSIFICATION` or
:data:`~topiczoo.tuning.C_GRID_REGRESSION`), picks the c with the best mean
validation metric (accuracy, predictive R^2) and refits on all of ``X`` with it; ``c_`` is the c
used, ``cv_results_`` the search as scikit-learn's searches give it (a dict of arrays:
``params``, ``param_c``, ``split{k}_test_score``, ``mean_test_score``, ``std_test_score``,
``rank_test_score``) and ``c_tuning_`` the :class:`~topiczoo.tuning.CTuning` record
(``.table()`` prints it). scikit-learn's ``GridSearchCV(est, {"c": [...]})`` does the same
from the outside.

**Multi-label y.** The classifiers also take ``y`` as a ``[D, L]`` 0/1 indicator matrix
(scikit-learn's "multilabel-indicator"): the binary model (``gslda``, ``medlda``) then has one
task per label on shared topics; ``predict`` gives ``[D, L]`` 0/1 (int64), ``classes_`` is
``arange(L)``, ``decision_function`` and ``predict_proba`` give ``[D, L]`` (each label's own
score and probability) and ``score`` is the subset accuracy, as for scikit-learn's
multi-label classifiers.

**Probabilities.** :class:`GSLDAClassifier` has ``predict_proba``: sigmoid of the averaged
score ``eta . zbar`` (two classes), or, for more classes, the per-class sigmoids normalised to
sum to one (the multi-task model scores each class one-vs-rest; the argmax of both is the
prediction). :class:`MedLDAClassifier` has none: the hinge loss is a pseudo-likelihood, not a
probability model, so it offers ``decision_function`` only.

**scikit-learn's estimator checks** (``sklearn.utils.estimator_checks``). They feed random
fractional numbers as X, which a count model rejects (a clear error); ``tests/test_estimators.py``
therefore runs every check on the estimators with those X rounded up to whole numbers
(``ceil(3 X)``; negative, NaN, infinite and non-numeric X pass unchanged, so the input checks
meet them as they are). The checks that still fail by design are :data:`SKIPPED_CHECKS`, with
the reason; they run as expected failures, so a change in them is noticed.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (check_consistent_length, check_is_fitted,
                                      check_non_negative, column_or_1d, validate_data)

from topiczoo.corpus import (TOKEN_ID_RECIPE, Corpus, describe_lengths, nested_lengths,
                             text_columns)
from topiczoo.defaults import NUM_CHAINS, NUM_ITERATIONS
from topiczoo.errors import DataLossWarning, InputTypeError
from topiczoo.labels import shown
from topiczoo.models.registry import REGISTRY
from topiczoo.fit import fit
from topiczoo.predict import STRATEGIES, predict, warn_empty_test_documents
from topiczoo.text import Tokenizer
# the search for c lives in topiczoo.tuning; its names stay importable from here
from topiczoo.tuning import (C_GRID_CLASSIFICATION, C_GRID_REGRESSION, CTuning, choose_c,
                             default_c_grid)

#: scikit-learn estimator checks that fail by design, with the reason. The checks run (in
#: ``tests/test_estimators.py``) on the estimators with the checks' random fractional X rounded
#: up to counts, since a topic model takes counts; these are their expected failures.
SKIPPED_CHECKS = {
    "check_classifiers_train": "a quality bar (accuracy > 0.83 on scikit-learn's blobs) that "
                               "the test's 2-topic, 4-iteration fits, kept cheap, do not reach",
    "check_regressors_train": "a quality bar (R^2 > 0.5 on scikit-learn's regression data) that "
                              "the test's 2-topic, 4-iteration fits do not reach",
    "check_methods_sample_order_invariance": "Monte Carlo test chains: one random stream runs "
                                             "over the test documents in order, so a "
                                             "document's draws depend on the documents before "
                                             "it (equal in distribution, not bit for bit)",
    "check_methods_subset_invariance": "Monte Carlo test chains (as for sample order)",
    "check_decision_proba_consistency": "passes negative X (make_blobs, not shifted for the "
                                        "positive-only tag): not counts",
}


# ---------------------------------------------------------------------------------------------
# the estimators


def _vocabulary_of(estimator, num_words: int) -> tuple:
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return tuple(str(n) for n in names)
    return tuple(f"w{i}" for i in range(num_words))


_X_FORMS = ("a [D, V] document-term matrix of word counts (numpy, scipy.sparse or a numeric "
            "DataFrame) or a sequence of D texts (str, e.g. a list or a pandas Series)")


def _check_form(X, name: str) -> None:
    """Clear errors for the forms of X a user may try that are neither counts nor texts:
    per-document token-id or token lists, a DataFrame of text columns, a 2-D array of str."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):  # a pandas DataFrame
        columns = text_columns(X)
        if columns:
            raise InputTypeError(
                f"{name} takes {_X_FORMS}; X is a DataFrame with text in column(s) "
                f"{', '.join(map(repr, columns))}: pass the column of texts, "
                f"X[{columns[0]!r}] (a Series of D str)")
        return
    lengths = nested_lengths(X)
    if lengths is not None:
        tokens = any(isinstance(t, str) for doc in X for t in doc)
        if tokens or len(set(lengths)) > 1:
            what = "token lists" if tokens else "token-id lists"
            recipe = ("join each document's tokens into one text (' '.join(tokens))" if tokens
                      else "count them into a matrix, for lists docs "
                      + TOKEN_ID_RECIPE + ".document_term_matrix()")
            raise InputTypeError(
                f"{name} takes {_X_FORMS}; X holds {len(lengths)} sequences of lengths "
                f"{describe_lengths(lengths)} ({what}, one per document?): {recipe}")
    if hasattr(X, "shape") and hasattr(X, "dtype") and len(X.shape) == 2 \
            and X.dtype.kind in "US":
        raise InputTypeError(f"{name} takes {_X_FORMS}; X is a {X.shape} array of str: texts "
                             "are a 1-D sequence, one str per document")


def _is_texts(X) -> bool:
    if isinstance(X, (str, bytes)):
        raise InputTypeError("X must be a list of texts (one str per document) or a [D, V] "
                             "document-term matrix, not a single string")
    if hasattr(X, "shape") and hasattr(X, "dtype"):
        return len(X.shape) == 1 and X.dtype.kind in "OUS"
    # any text makes a list texts, so that a None or a number among them is named as such
    return isinstance(X, (list, tuple)) and any(isinstance(x, str) for x in X)


def _check_label_types(y) -> None:
    """Labels that mix strings and numbers are an error (numpy would turn the numbers into
    strings, and ``["a", 1, 0]`` would become three classes)."""
    if isinstance(y, (list, tuple)) or (hasattr(y, "dtype") and y.dtype.kind == "O"):
        kinds = {isinstance(v, str) for v in y}
        if kinds == {True, False}:
            raise InputTypeError("y mixes strings and numbers; give one kind of label")


class _TopicModelEstimator(TransformerMixin, BaseEstimator):
    """What the estimators share (see the module docstring). Subclasses set ``_entries``
    (registry names by label kind; SHDPRegressor's by loss), ``_kind`` (the label kind) and
    ``_model_options`` (their parameters that are model options)."""

    _entries: dict = {}
    _model_options: tuple = ()
    _kind: str = ""

    # ------------------------------------------------------------------ input
    def _texts_corpus(self, X, labels, fitting: bool) -> Corpus:
        tokenizer = self.tokenizer
        if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
            raise InputTypeError(f"tokenizer must be a topiczoo.text.Tokenizer or None, got "
                                 f"{type(tokenizer).__name__}")
        texts = list(X)
        if fitting:
            corpus = Corpus.from_texts(texts, labels, tokenizer=tokenizer)
            self.vocabulary_ = tuple(corpus.vocabulary)
            return corpus
        # no token in a text (or in any): those documents get the prior's prediction, with
        # a warning (predict's), as the rows of zeros of a matrix do
        corpus = Corpus.from_texts(texts, tokenizer=tokenizer, allow_empty=True)
        corpus, dropped = corpus.restrict_vocabulary(self.vocabulary_)
        if dropped:
            warnings.warn(f"{dropped} of {corpus.num_tokens + dropped} tokens are outside the "
                          "training vocabulary and were dropped", DataLossWarning, stacklevel=4)
        return corpus

    def _corpus(self, X, y=None, *, fitting: bool) -> tuple[Corpus, np.ndarray | None]:
        """The corpus of ``X`` (with ``y`` coded for the model when fitting) and y as given."""
        _check_form(X, type(self).__name__)
        if fitting:
            _check_label_types(y)
        # after a fit on texts, a list is texts whatever it holds (from_texts names a None)
        if _is_texts(X) or (not fitting and isinstance(X, (list, tuple))
                            and not hasattr(self, "n_features_in_")):
            if fitting:
                y = y if self._multilabel_y(y) else column_or_1d(y, warn=True)
                check_consistent_length(X, y)
                labels = self._encode_y(y)
            else:
                check_is_fitted(self)
                if not hasattr(self, "vocabulary_") or hasattr(self, "n_features_in_"):
                    raise ValueError(f"{type(self).__name__} was fitted on a document-term "
                                     "matrix: pass one with the same columns, not texts")
            return self._texts_corpus(X, labels if fitting else None, fitting), y
        if not fitting:
            check_is_fitted(self)
            if not hasattr(self, "n_features_in_"):
                raise ValueError(f"{type(self).__name__} was fitted on texts: pass texts, "
                                 "not a document-term matrix")
        kwargs = dict(accept_sparse=("csr", "csc", "coo"), reset=fitting)
        if fitting:
            X, y = validate_data(self, X, y, y_numeric=self._kind == "regression",
                                 multi_output=self._multilabel_y(y), **kwargs)
        else:  # no rows is no documents to score (as no texts is), not an error
            X = validate_data(self, X, ensure_min_samples=0, **kwargs)
        if X.shape[0]:  # (scikit-learn's check cannot take a matrix without rows)
            check_non_negative(X, f"{type(self).__name__} (X must hold word counts)")
        if fitting:
            vocabulary = _vocabulary_of(self, X.shape[1])
            self.vocabulary_ = vocabulary
            return Corpus.from_document_term(X, vocabulary, self._encode_y(y)), y
        # rows of zeros (or a matrix of them) get the prior's prediction, with predict's warning
        return Corpus.from_document_term(X, self.vocabulary_, allow_empty=True), None

    @staticmethod
    def _drop_empty(corpus: Corpus) -> Corpus:
        """The training documents with tokens (the samplers need them); a
        :class:`DataLossWarning` says how many were dropped, as the named data sets do."""
        empty = corpus.empty_documents
        if len(empty) == 0:
            return corpus
        if len(empty) == corpus.num_docs:
            raise ValueError("every training document is empty (no word counts)")
        warnings.warn(f"{len(empty)} of {corpus.num_docs} training documents have no tokens "
                      f"and are left out of the fit (e.g. document {empty[0]})",
                      DataLossWarning, stacklevel=4)
        return corpus.drop_empty()[0]

    def _encode_y(self, y):
        return y

    def _multilabel_y(self, y) -> bool:
        """Whether ``y`` is [D, L] with L > 1 (the classifiers' multi-label y)."""
        return False

    # ------------------------------------------------------------------ settings
    def _entry(self, corpus):
        return REGISTRY[self._entries[self._kind]]

    def _options(self) -> dict:
        return {name: getattr(self, name) for name in self._model_options
                if getattr(self, name) is not None}

    def _seed(self) -> int:
        """The run's seed from ``random_state``: an int is the seed itself; a RandomState or
        a Generator gives one draw (reproducible from its state, and advancing it, as
        scikit-learn's estimators do); None a fresh seed from the operating system."""
        rs = self.random_state
        if rs is None:
            return int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(2**31 - 1))
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(2**31 - 1))
        if isinstance(rs, bool) or not isinstance(rs, numbers.Integral) or rs < 0:
            raise ValueError(f"random_state must be a non-negative int, a numpy RandomState or "
                             f"Generator, or None, got {shown(rs)}")
        return int(rs)

    def _check_settings(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {shown(self.strategy)}")
        # num_snapshots >= 1: predict and transform run test chains from the snapshots
        for name, low in (("num_topics", 1), ("num_iterations", 1), ("num_chains", 1),
                          ("num_snapshots", 1), ("test_burnin", 0), ("test_draws", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {shown(value)}")
        c = getattr(self, "c", None)
        if isinstance(c, str) and c != "cv":
            raise ValueError(f"c must be a positive number or 'cv', got {c!r}")

    def _fit_kwargs(self, seed: int) -> dict:
        return dict(num_chains=self.num_chains, num_iterations=self.num_iterations,
                    num_burnin=self.num_burnin, num_snapshots=self.num_snapshots, seed=seed,
                    sampler=getattr(self, "sampler", "exact"))  # SHDPRegressor: exact only

    def _predict_kwargs(self, seed: int) -> dict:
        return dict(num_burnin=self.test_burnin, num_draws=self.test_draws, seed=seed)

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X, y):
        """Fit the model on documents ``X`` (``[D, V]`` counts or ``D`` texts) and responses
        ``y``: ``[D]`` class labels or real ratings, or (classifiers) a ``[D, L]`` 0/1
        indicator matrix of multi-label data. Returns self."""
        self._check_settings()
        # a refit starts afresh: what a fit on a matrix sets must not outlive a fit on texts
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(self, name):
                delattr(self, name)
        corpus, _ = self._corpus(X, y, fitting=True)
        corpus = self._drop_empty(corpus)
        entry = self._entry(corpus)
        options = self._options()
        seed = self._seed()
        self.cv_results_, self.c_tuning_ = None, None
        tune_c = options.get("c") == "cv"
        if tune_c:
            options.pop("c")
        # a bad sampler before any fit (cross-validation's included)
        entry.build(self.num_topics, corpus=corpus, **options).sampler(
            self._fit_kwargs(seed)["sampler"], corpus.vocab_size)
        if tune_c:
            tuning = choose_c(entry, self.num_topics, corpus, grid=self.c_grid,
                              num_folds=self.cv_folds, options=options,
                              fit_kwargs=self._fit_kwargs(seed),
                              predict_kwargs=self._predict_kwargs(seed),
                              strategy=self.strategy, seed=seed, progress=self.verbose)
            options["c"] = tuning.best_c
            self.cv_results_, self.c_tuning_ = tuning.cv_results(), tuning
        model = entry.build(self.num_topics, corpus=corpus, **options)
        # a relative c (the sHDP's default) in response units, as a fit's summary says it
        in_force = entry.hyperparameters(self.num_topics, corpus, **options).get("c_in_force")
        self.c_ = in_force if in_force is not None else options.get(
            "c", getattr(model.response, "c", None))
        self.result_ = fit(model, corpus, progress=self.verbose, **self._fit_kwargs(seed))
        self.seed_ = seed
        # the width of transform's output: K, or the sHDP's topic capacity
        self._n_features_out = int(self.result_.snapshots[-1].arrays["eta"].shape[-1])
        return self

    def _prediction(self, X, keep_zbar: bool = False):
        """The Prediction of ``X``; called by the public methods, so that the warning about
        documents without tokens points at their caller."""
        corpus, _ = self._corpus(X, fitting=False)
        warn_empty_test_documents(corpus, stacklevel=3)  # _prediction, the method, its caller
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "[0-9]+ of [0-9]+ test documents have no tokens",
                                    DataLossWarning)  # said above
            return predict(self.result_, corpus, keep_zbar=keep_zbar,
                           **self._predict_kwargs(self.seed_))

    def transform(self, X) -> np.ndarray:
        """Topic proportions zbar of the documents ``X``: float64 [D, K], the mean over the
        test draws of the first chain's last snapshot (topic labels differ between chains, so
        proportions are not averaged across them; K of the sHDP is its topic capacity)."""
        corpus, _ = self._corpus(X, fitting=False)
        warn_empty_test_documents(corpus, stacklevel=3)  # transform, set_output, its caller
        snapshot = self.result_.snapshots[-1].chain(0)
        zbar = self.result_.model.predictor().test_proportions(
            snapshot, corpus, num_burnin=self.test_burnin, num_draws=self.test_draws, lag=1,
            seed=self.seed_)
        return np.asarray(zbar, np.float64).mean(0)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of :meth:`transform`'s columns, ``topic0`` ... (object [K]): lets
        ``set_output(transform="pandas")`` and pipelines name the topic proportions."""
        check_is_fitted(self)
        return np.asarray([f"topic{k}" for k in range(self._n_features_out)], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        tags.input_tags.string = True
        tags.non_deterministic = self.random_state is None
        return tags


_SHARED_DOC = """
    Run settings (all checked at fit time):
      num_iterations: Gibbs cycles per chain (default 100, ``topiczoo.defaults``; half of them
        burn-in unless ``num_burnin``); num_chains (default 4); num_snapshots: training
        snapshots used for prediction (default 5); test_burnin, test_draws: sweeps of each test chain before its
        first kept draw and kept draws (defaults 20, 10); strategy: averaging strategy,
        ``sf``/``sa``/``mf``/``ma`` (default ``ma``).
      sampler: the sampler of ``topiczoo.fit.fit`` (``"exact"``, the default, or ``"light"``,
        with options such as ``"light:mh_steps=3"``; README "Samplers"); not SHDPRegressor's.
      random_state: int seed of the run (default 0), None (a fresh seed), or a numpy
        RandomState or Generator (the seed is one draw from it: reproducible from its state).
      tokenizer: how texts are tokenized when X is a list of texts (a
        :class:`topiczoo.text.Tokenizer`, default ``Tokenizer()``).
      verbose: progress lines on stderr.
    Fitted attributes: ``result_`` (:class:`topiczoo.fit.FitResult`), ``vocabulary_``,
    ``n_features_in_`` (matrix input), ``c_`` (the c used, when the model has one; a relative
    default's value in response units),
    ``cv_results_`` (with ``c="cv"``: the search as a dict of arrays, keys as scikit-learn's
    ``GridSearchCV.cv_results_``: ``params``, ``param_c``, ``split{k}_test_score``,
    ``mean_test_score``, ``std_test_score``, ``rank_test_score``; else None), ``c_tuning_``
    (with ``c="cv"``: the :class:`~topiczoo.tuning.CTuning` record, ``.table()`` prints it;
    else None), ``seed_``.
"""


def _with_shared_doc(cls):
    """Appends the run settings and fitted attributes every estimator shares to its docstring
    (in a class body, a string literal plus a string is an expression, not a docstring)."""
    cls.__doc__ = cls.__doc__.rstrip() + "\n" + _SHARED_DOC
    return cls


class _Classifier(ClassifierMixin, _TopicModelEstimator):
    _kind = "binary"

    def _multilabel_y(self, y) -> bool:
        if sp.issparse(y):
            return len(y.shape) == 2 and y.shape[1] > 1
        try:
            shape = np.shape(y)
        except (ValueError, TypeError):  # ragged: scikit-learn's checks say what is wrong
            return False
        return len(shape) == 2 and shape[1] > 1

    def _encode_y(self, y):
        if self._multilabel_y(y):
            y = y.toarray() if sp.issparse(y) else np.asarray(y)
            if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
                values = np.unique(y)
                some = ", ".join(map(str, values[:6].tolist())) + (", ..." if len(values) > 6
                                                                    else "")
                raise ValueError(
                    f"{type(self).__name__}: a 2-D y must be a [D, L] 0/1 indicator matrix "
                    f"(multi-label: column l is 1 where the document has label l), got "
                    f"shape {y.shape} with values {some}; for one class per document give "
                    "y as [D] class labels")
            self.classes_ = np.arange(y.shape[1])  # as scikit-learn's multi-label classifiers
            return y.astype(np.int64)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:  # scikit-learn's wording
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes in the "
                             "data, but the data contain only one class: "
                             f"{shown(self.classes_[0])}")
        return encoded.astype(np.int64)

    def _entry(self, corpus):
        # the binary models take [D, L] 0/1 labels too: one task per label
        binary = len(self.classes_) == 2 or corpus.label_kind == "multilabel"
        return REGISTRY[self._entries["binary" if binary else "multiclass"]]

    def _multilabel(self) -> bool:
        return self.result_.task.kind == "multilabel"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True  # [D, L] 0/1 y: one task per label
        tags.target_tags.multi_output = True
        return tags

    def decision_function(self, X) -> np.ndarray:
        """Averaged scores eta . zbar: [D] for two classes (> 0: ``classes_[1]``), [D, L]
        for more (one per class; the prediction is their argmax) and for multi-label y (one
        per label; > 0: the label is predicted)."""
        scores = np.asarray(self._prediction(X).decision_scores(self.strategy), np.float64)
        return scores[0] if scores.shape[0] == 1 and not self._multilabel() else scores.T

    def predict(self, X) -> np.ndarray:
        """Class labels [D] (values of ``classes_``), or for multi-label y 0/1 indicators
        int64 [D, L]."""
        ids = self._prediction(X).class_ids(self.strategy)
        return ids if self._multilabel() else self.classes_[ids]


class _Regressor(RegressorMixin, _TopicModelEstimator):
    _kind = "regression"

    def _encode_y(self, y):
        y = np.asarray(y, np.float64)
        if y.shape[0] < 2:  # scikit-learn's wording
            raise ValueError(f"{type(self).__name__} needs at least 2 samples to fit, got "
                             f"{y.shape[0]} sample")
        if not np.all(np.isfinite(y)):
            raise ValueError("y must be finite real responses")
        return y

    def predict(self, X) -> np.ndarray:
        """Predicted responses [D] (the strategy's average of eta . zbar, plus the training
        mean when ``center``)."""
        return np.asarray(self._prediction(X).labels(self.strategy), np.float64)


@_with_shared_doc
class GSLDAClassifier(_Classifier):
    """gSLDA (logistic supervised LDA with regularisation constant c, Polya-Gamma Gibbs) as a
    scikit-learn classifier: ``gslda`` for two classes, ``gslda-multitask`` (one logistic task
    per class, argmax) for more.

    Model parameters: num_topics K (default 10); c: the logistic pseudo-likelihood's power, a
    whole number (default None: the registry's, 25 for two classes and multi-label y, chosen
    on validation splits of three binary corpora, ``studies/gslda_default_c.py``; 1 for more
    classes, ``gslda-multitask``), or ``"cv"`` to choose it from ``c_grid`` (default 1, 2,
    ..., 64) by ``cv_folds``-fold cross-validation (default 3) on the training data; alpha (total
    Dirichlet concentration, theta ~ Dir(alpha/K)), beta, nu2 (prior variance of eta): the
    registry's defaults (1, 0.01, 1) when None.
    """

    _entries = {"binary": "gslda", "multiclass": "gslda-multitask"}
    _model_options = ("c", "alpha", "beta", "nu2")

    def __init__(self, num_topics=10, *, c=None, alpha=None, beta=None, nu2=None, c_grid=None,
                 cv_folds=3, num_iterations=NUM_ITERATIONS, num_burnin=None,
                 num_chains=NUM_CHAINS, num_snapshots=5, test_burnin=20, test_draws=10,
                 strategy="ma", sampler="exact", random_state=0, tokenizer=None, verbose=False):
        self.num_topics = num_topics
        self.c = c
        self.alpha = alpha
        self.beta = beta
        self.nu2 = nu2
        self.c_grid = c_grid
        self.cv_folds = cv_folds
        self.num_iterations = num_iterations
        self.num_burnin = num_burnin
        self.num_chains = num_chains
        self.num_snapshots = num_snapshots
        self.test_burnin = test_burnin
        self.test_draws = test_draws
        self.strategy = strategy
        self.sampler = sampler
        self.random_state = random_state
        self.tokenizer = tokenizer
        self.verbose = verbose

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities [D, L] in the order of ``classes_``: two classes,
        ``[1 - p, p]`` with p = sigmoid of the averaged score; more classes, the per-class
        sigmoids normalised to sum to one (see the module docstring); multi-label y, each
        label's probability, the sigmoid of its averaged score (rows need not sum to one)."""
        p = np.asarray(self._prediction(X).probabilities(self.strategy), np.float64)
        if self._multilabel():
            return p.reshape(-1, len(self.classes_))
        if p.ndim == 1:
            return np.stack([1.0 - p, p], axis=1)
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X) -> np.ndarray:
        """log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


@_with_shared_doc
class MedLDAClassifier(_Classifier):
    """Gibbs MedLDA (hinge loss with cost c and margin ell, inverse-Gaussian augmentation) as a
    scikit-learn classifier: ``medlda`` for two classes, ``medlda-multitask`` (one hinge task
    per class, argmax) for more. No ``predict_proba``: the hinge loss is a pseudo-likelihood,
    not a probability of the label; use ``decision_function``.

    Model parameters: num_topics K (default 10); c: the cost (default 1), or ``"cv"`` with
    ``c_grid`` and ``cv_folds`` (see :class:`GSLDAClassifier`); ell: the margin (None: the
    registry's default, 164 for two classes and 64 for more, the JMLR paper's); alpha, beta,
    nu2 as for :class:`GSLDAClassifier`.
    """

    _entries = {"binary": "medlda", "multiclass": "medlda-multitask"}
    _model_options = ("c", "ell", "alpha", "beta", "nu2")

    def __init__(self, num_topics=10, *, c=1.0, ell=None, alpha=None, beta=None, nu2=None,
                 c_grid=None, cv_folds=3, num_iterations=NUM_ITERATIONS, num_burnin=None,
                 num_chains=NUM_CHAINS, num_snapshots=5, test_burnin=20, test_draws=10,
                 strategy="ma", sampler="exact", random_state=0, tokenizer=None, verbose=False):
        self.num_topics = num_topics
        self.c = c
        self.ell = ell
        self.alpha = alpha
        self.beta = beta
        self.nu2 = nu2
        self.c_grid = c_grid
        self.cv_folds = cv_folds
        self.num_iterations = num_iterations
        self.num_burnin = num_burnin
        self.num_chains = num_chains
        self.num_snapshots = num_snapshots
        self.test_burnin = test_burnin
        self.test_draws = test_draws
        self.strategy = strategy
        self.sampler = sampler
        self.random_state = random_state
        self.tokenizer = tokenizer
        self.verbose = verbose


@_with_shared_doc
class MedLDARegressor(_Regressor):
    """Gibbs MedLDA regression (epsilon-insensitive loss, two inverse-Gaussian augmentations)
    as a scikit-learn regressor (registry ``medlda-regression``).

    Model parameters: num_topics K (default 10); c: the cost in 1 / response units (default
    None: 10 per standard deviation of the training responses, ``models.medlda
    .medlda_regression``; the fitted ``c_`` says its value), or ``"cv"``: chosen from
    ``c_grid`` (default powers of 4 from 1 to 1024) by ``cv_folds``-fold cross-validation on
    predictive R^2. eps: the insensitivity in response units; alpha, beta, nu2; center: fit
    y - mean(y) (registry defaults when None).
    """

    _entries = {"regression": "medlda-regression"}
    _model_options = ("c", "eps", "alpha", "beta", "nu2", "center")

    def __init__(self, num_topics=10, *, c=None, eps=None, alpha=None, beta=None, nu2=None,
                 center=None, c_grid=None, cv_folds=3, num_iterations=NUM_ITERATIONS,
                 num_burnin=None, num_chains=NUM_CHAINS, num_snapshots=5, test_burnin=20,
                 test_draws=10, strategy="ma", sampler="exact", random_state=0, tokenizer=None,
                 verbose=False):
        self.num_topics = num_topics
        self.c = c
        self.eps = eps
        self.alpha = alpha
        self.beta = beta
        self.nu2 = nu2
        self.center = center
        self.c_grid = c_grid
        self.cv_folds = cv_folds
        self.num_iterations = num_iterations
        self.num_burnin = num_burnin
        self.num_chains = num_chains
        self.num_snapshots = num_snapshots
        self.test_burnin = test_burnin
        self.test_draws = test_draws
        self.strategy = strategy
        self.sampler = sampler
        self.random_state = random_state
        self.tokenizer = tokenizer
        self.verbose = verbose


@_with_shared_doc
class SLDARegressor(_Regressor):
    """Gaussian supervised LDA (y ~ N(eta . zbar, s2), s2 drawn from its inverse-gamma
    conditional by default) as a scikit-learn regressor (registry ``slda-gaussian``).

    Model parameters: num_topics K (default 10); s2 (noise variance, or its start value when
    ``learn_s2``), learn_s2, a0, b0 (its inverse-gamma prior), alpha, beta, nu2, center:
    the registry's defaults when None.
    """

    _entries = {"regression": "slda-gaussian"}
    _model_options = ("s2", "learn_s2", "a0", "b0", "alpha", "beta", "nu2", "center")

    def __init__(self, num_topics=10, *, s2=None, learn_s2=None, a0=None, b0=None, alpha=None,
                 beta=None, nu2=None, center=None, num_iterations=NUM_ITERATIONS, num_burnin=None,
                 num_chains=NUM_CHAINS, num_snapshots=5, test_burnin=20, test_draws=10,
                 strategy="ma", sampler="exact", random_state=0, tokenizer=None, verbose=False):
        self.num_topics = num_topics
        self.s2 = s2
        self.learn_s2 = learn_s2
        self.a0 = a0
        self.b0 = b0
        self.alpha = alpha
        self.beta = beta
        self.nu2 = nu2
        self.center = center
        self.num_iterations = num_iterations
        self.num_burnin = num_burnin
        self.num_chains = num_chains
        self.num_snapshots = num_snapshots
        self.test_burnin = test_burnin
        self.test_draws = test_draws
        self.strategy = strategy
        self.sampler = sampler
        self.random_state = random_state
        self.tokenizer = tokenizer
        self.verbose = verbose


@_with_shared_doc
class SHDPRegressor(_Regressor):
    """The supervised HDP for real responses (topics born and removed, concentrations drawn)
    as a scikit-learn regressor.

    Model parameters: num_topics: the initial number of topics (default 10); loss:
    ``"squared_error"`` (the default: a Gaussian response, registry ``shdp-gaussian``) or
    ``"epsilon_insensitive"`` (MedLDA regression's loss, registry ``shdp-regression``).
    With the squared error: s2 (noise variance; default fixed at 1/4 of the training
    responses' variance, ``models.shdp.shdp_gaussian``), learn_s2. With the
    epsilon-insensitive loss: c (the cost in 1 / response units; default 3 per standard
    deviation of the training responses, ``models.shdp.shdp_regression``; ``"cv"``: chosen
    from ``c_grid``, default powers of 4 from 1 to 1024, by ``cv_folds``-fold
    cross-validation on predictive R^2), eps (the insensitivity, response units). Either loss:
    alpha, gamma, beta, nu2, center. None means the registry's default; a parameter of the
    other loss must stay None.
    """

    _entries = {"squared_error": "shdp-gaussian", "epsilon_insensitive": "shdp-regression"}
    _loss_options = {"squared_error": ("s2", "learn_s2"), "epsilon_insensitive": ("c", "eps")}
    _shared_options = ("alpha", "gamma", "beta", "nu2", "center")

    def __init__(self, num_topics=10, *, loss="squared_error", s2=None, learn_s2=None, c=None,
                 eps=None, alpha=None, gamma=None, beta=None, nu2=None, center=None, c_grid=None,
                 cv_folds=3, num_iterations=NUM_ITERATIONS, num_burnin=None,
                 num_chains=NUM_CHAINS, num_snapshots=5, test_burnin=20, test_draws=10,
                 strategy="ma", random_state=0, tokenizer=None, verbose=False):
        self.num_topics = num_topics
        self.loss = loss
        self.s2 = s2
        self.learn_s2 = learn_s2
        self.c = c
        self.eps = eps
        self.alpha = alpha
        self.gamma = gamma
        self.beta = beta
        self.nu2 = nu2
        self.center = center
        self.c_grid = c_grid
        self.cv_folds = cv_folds
        self.num_iterations = num_iterations
        self.num_burnin = num_burnin
        self.num_chains = num_chains
        self.num_snapshots = num_snapshots
        self.test_burnin = test_burnin
        self.test_draws = test_draws
        self.strategy = strategy
        self.random_state = random_state
        self.tokenizer = tokenizer
        self.verbose = verbose

    @property
    def _model_options(self) -> tuple:
        return self._loss_options.get(self.loss, ()) + self._shared_options

    def _check_settings(self) -> None:
        if self.loss not in self._entries:
            raise ValueError(f"loss must be one of {tuple(self._entries)}, got {self.loss!r}")
        for other, names in self._loss_options.items():
            given = [n for n in names if other != self.loss and getattr(self, n) is not None]
            if given:
                one = len(given) == 1
                raise ValueError(f"{', '.join(given)} {'belongs' if one else 'belong'} to "
                                 f"loss={other!r}, not to loss={self.loss!r}; leave "
                                 f"{'it' if one else 'them'} None")
        super()._check_settings()

    def _entry(self, corpus):
        return REGISTRY[self._entries[self.loss]]


__all__ = ["C_GRID_CLASSIFICATION", "C_GRID_REGRESSION", "CTuning", "GSLDAClassifier",
           "MedLDAClassifier", "MedLDARegressor", "SHDPRegressor", "SKIPPED_CHECKS",
           "SLDARegressor", "choose_c", "default_c_grid"]
