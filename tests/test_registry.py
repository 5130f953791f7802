"""The registry of named models: every entry builds, fits and predicts through the one API;
README's model table lists every entry; no code outside models/ names a model."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from chains import small_corpus
from topiczoo import Corpus, fit_and_predict
from topiczoo.models import REGISTRY
from topiczoo.models.registry import get

ROOT = Path(__file__).resolve().parents[1]


def _corpus_for(entry):
    corpus = small_corpus()
    kind = entry.tasks[0] if entry.tasks else None
    labels = {None: None, "binary": np.arange(12) % 2, "multiclass": np.arange(12) % 3,
              "multilabel": np.stack([np.arange(12) % 2, (np.arange(12) // 2) % 2], 1),
              "regression": np.linspace(-1.0, 1.0, 12)}[kind]
    return Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary, labels=labels)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_entry_fits_and_predicts(name):
    entry = REGISTRY[name]
    corpus = _corpus_for(entry)
    run = fit_and_predict(entry, 2, corpus, corpus, progress=False,
                          fit_kwargs=dict(num_chains=1, num_iterations=4, num_snapshots=1),
                          predict_kwargs=dict(num_burnin=2, num_draws=2))
    if not entry.tasks:
        assert run.prediction is None and run.result.task is None
        return
    predicted = run.prediction.labels()
    assert predicted.shape == np.asarray(corpus.labels).shape
    metrics = run.prediction.metrics(corpus.labels)
    assert metrics and all(np.isfinite(v) for v in metrics.values())


def test_options_are_the_factories_keywords_and_unknown_ones_are_refused():
    assert get("medlda").options()["ell"] == 164.0
    assert get("medlda-ova").options()["ell"] == 64.0  # the registry's own default
    assert "num_classes" not in get("medlda-multitask").options()
    with pytest.raises(ValueError, match="gslda has no option 'ell'"):
        get("gslda").build(3, ell=2.0)
    with pytest.raises(ValueError, match="unknown model 'nonsense'"):
        get("nonsense")


def test_multitask_models_take_the_number_of_classes_from_the_corpus():
    corpus = _corpus_for(get("medlda-multitask"))
    assert get("medlda-multitask").build(3, corpus=corpus).num_classes == 3


def test_readme_table_lists_every_model():
    readme = (ROOT / "README.md").read_text()
    table = [line for line in readme.splitlines() if line.startswith("|")]
    listed = set()
    for line in table:
        listed.update(re.findall(r"`([a-z0-9-]+)`", line.split("|")[-2]))
    assert set(REGISTRY) <= listed, f"README's model table lacks {set(REGISTRY) - listed}"


@pytest.mark.parametrize("path", ["topiczoo/cli.py", "topiczoo/fit.py", "topiczoo/predict.py",
                                  "topiczoo/run.py", *sorted(
                                      str(p.relative_to(ROOT))
                                      for p in (ROOT / "diagnostics").glob("*.py"))])
def test_no_model_name_outside_models(path):
    source = (ROOT / path).read_text()
    named = [name for name in REGISTRY if re.search(rf"[\"']{re.escape(name)}[\"']", source)]
    assert not named, f"{path} names models {named}"
