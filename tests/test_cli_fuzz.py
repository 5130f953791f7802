"""Fuzzing the command line's option values: whatever the values, ``topiczoo fit --check``
answers with exit code 0 or a one-line error (exit 2), never a traceback or a hang."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topiczoo.datasets
from chains import small_corpus
from topiczoo import Corpus
from topiczoo.cli import main
from topiczoo.datasets import DataSet

EXAMPLES = 120


def _tiny_dataset(name, data_dir=None, seed=0, **kwargs):
    corpus = small_corpus()
    labels = {"movie-scale": np.linspace(0, 1, 12), "bbc-5": np.arange(12) % 3}.get(
        name, np.arange(12) % 2)
    corpus = Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary, labels=labels)
    kind = {"movie-scale": "regression", "bbc-5": "multiclass"}.get(name, "binary")
    names = ("rating",) if kind == "regression" else tuple(f"c{i}" for i in range(3 if kind == "multiclass" else 2))
    return DataSet(name, corpus, corpus, kind, names, 0, "fuzz")


numbers = st.one_of(st.integers(-5, 300).map(str), st.floats(allow_nan=True).map(str),
                    st.sampled_from(["", "abc", "1e400", "-0", "nan", "inf", "0x10", "1_000"]))
OPTIONS = ["--topics", "--chains", "--iterations", "--burnin", "--snapshots", "--c", "--ell",
           "--eps", "--s2", "--alpha", "--beta", "--nu2", "--test-draws", "--test-burnin",
           "--seed", "--a0", "--b0", "--until-rhat", "--max-iterations"]


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(["medlda", "gslda", "lda-svm", "medlda-multitask", "gslda-ova",
                              "medlda-regression", "slda-gaussian", "lda", "nonsense"]),
       data=st.sampled_from(["bbc", "bbc-5", "movie-scale"]),
       options=st.lists(st.tuples(st.sampled_from(OPTIONS), numbers), max_size=4),
       multilabel=st.booleans())
def test_fit_check_never_raises(monkeypatch, capsys, tmp_path, model, data, options, multilabel):
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", _tiny_dataset)
    argv = ["fit", "--check", "--model", model, "--data", data, "--out", str(tmp_path / "o")]
    for flag, value in options:
        argv += [flag, value]
    if multilabel:
        argv.append("--multilabel")
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse: a value of the wrong type, usage printed
        code = exit_.code
    captured = capsys.readouterr()
    assert code in (0, 2)
    assert "Traceback" not in captured.err
    if code == 2:
        assert captured.err.strip(), "an error must say what is wrong"
