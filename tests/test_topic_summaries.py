"""topiczoo.topics: the topics of one chain at one snapshot, as a list, a table and a plot
(the sweep of kernels/topics.py is tested in test_topics.py)."""

from types import SimpleNamespace

import numpy as np
import pytest

from topiczoo.fit import Snapshot
from topiczoo.models import lda
from topiczoo.models.shdp import hdp
from topiczoo.topics import format_topics, plot_topics, topics

VOCAB = ("apple", "bread", "cheese", "dates", "eggs")
BETA = 0.5


def _result(eta=True, nonparametric=False):
    """Two chains, two snapshots; chain 1 of the last snapshot is the one read below:
    topics 0 (apple, bread), 1 empty, 2 (eggs, then dates)."""
    n_wk = np.zeros((2, 2, 5, 3), np.int32)  # [snapshot, chain, V, K]
    n_wk[1, 1, :, 0] = [6, 3, 1, 0, 0]
    n_wk[1, 1, :, 2] = [0, 0, 0, 2, 8]
    n_wk[0] = 1  # another snapshot: not read
    n_k = n_wk.sum(axis=2)
    snapshots = []
    for s in range(2):
        arrays = {"n_k": n_k[s]}
        if nonparametric:
            phi = (n_wk[s] + BETA) / (n_k[s] + 5 * BETA)[:, None, :]
            arrays["phi_wk"] = np.where(n_k[s][:, None, :] > 0, phi, 0.0).astype(np.float32)
        else:
            arrays["n_wk"] = n_wk[s]
        if eta:
            arrays["eta"] = np.array([[[-1.0, 5.0, 2.0], [0.5, 0.0, -0.25]]] * 2, np.float32)
        snapshots.append(Snapshot(10 + 5 * s, arrays))
    model = hdp(3, beta=BETA) if nonparametric else lda(3, beta=BETA)  # their phi_hat
    return SimpleNamespace(snapshots=snapshots, vocabulary=VOCAB, model=model)


@pytest.mark.parametrize("nonparametric", [False, True])
def test_topics_of_one_chain_at_one_snapshot(nonparametric):
    found = topics(_result(nonparametric=nonparametric), chain=1, num_words=3)
    assert [t.index for t in found] == [2, 0]  # the empty topic 1 left out; eta 2 > -1
    top, other = found
    assert top.tokens == 10 and other.tokens == 10 and top.share == 0.5
    assert top.eta == (2.0, -0.25) and other.eta == (-1.0, 0.5)
    assert top.words == ("eggs", "dates", "apple") and other.words == ("apple", "bread", "cheese")
    # phi = (n_kw + beta) / (n_k + V beta), most probable first
    assert np.allclose(top.probabilities, np.array([8.5, 2.5, 0.5]) / 12.5)
    by_tokens = topics(_result(nonparametric=nonparametric), chain=1, sort_by="tokens")
    assert [t.index for t in by_tokens] == [0, 2]  # ties keep the slot order
    second_task = topics(_result(nonparametric=nonparametric), chain=1, task=1)
    assert [t.index for t in second_task] == [0, 2]  # eta of task 1: 0.5 > -0.25


def test_unsupervised_topics_are_ordered_by_size():
    result = _result(eta=False)
    result.snapshots[-1].arrays["n_wk"][1, 0, 2] = 5  # topic 2 grows to 15 tokens
    result.snapshots[-1].arrays["n_k"][1, 2] = 15
    found = topics(result, chain=1)
    assert [t.index for t in found] == [2, 0] and found[0].eta == ()
    assert found[0].share == 15 / 25 and len(found[0].words) == 5
    with pytest.raises(ValueError, match="needs a supervised model"):
        topics(result, sort_by="eta")
    table = format_topics(found)
    assert table.splitlines()[0] == "| topic | tokens | share % | most probable words |"
    assert table.splitlines()[2] == "| 2 | 15 | 60.00 | eggs apple dates bread cheese |"


def test_table_names_the_tasks_and_summarises_many():
    found = topics(_result(), chain=1, num_words=2)
    table = format_topics(found, task_names=["fruit", "dairy"]).splitlines()
    assert table[0] == "| topic | tokens | share % | eta (fruit) | eta (dairy) | most probable words |"
    assert table[2] == "| 2 | 10 | 50.00 | +2.000 | -0.250 | eggs dates |"
    many = format_topics(found, task_names=["fruit", "dairy"], max_tasks=1).splitlines()
    assert many[0] == ("| topic | tokens | share % | largest eta | smallest eta | most probable "
                       "words |")
    assert many[3] == "| 0 | 10 | 50.00 | +0.500 (dairy) | -1.000 (fruit) | apple bread |"
    piped = _result()
    piped.vocabulary = ("a|b",) + VOCAB[1:]
    assert "| a\\|b bread |" in format_topics(topics(piped, chain=1, num_words=2))
    with pytest.raises(ValueError, match="1 names for 2 tasks"):
        format_topics(found, task_names=["fruit"])


@pytest.mark.parametrize("kwargs, message", [
    (dict(chain=2), "chain must be an integer in 0..1"),
    (dict(snapshot=2), "snapshot must index the fit's 2 snapshots"),
    (dict(num_words=0), "num_words must be an integer >= 1"),
    (dict(task=2), "task must be an integer in 0..1"),
    (dict(sort_by="size"), "sort_by must be 'eta', 'tokens' or 'index'"),
])
def test_bad_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        topics(_result(), **kwargs)


def test_no_snapshot_is_a_clear_error():
    with pytest.raises(ValueError, match="num_snapshots >= 1"):
        topics(SimpleNamespace(snapshots=[]))
    old = _result(nonparametric=True)
    del old.snapshots[0].arrays["n_k"]  # the first snapshot from before n_k was kept
    assert [t.index for t in topics(old, chain=1)] == [2, 0]  # the last one has it
    with pytest.raises(ValueError, match="no topic sizes n_k"):
        topics(old, snapshot=0)


def test_plot_shows_the_extreme_coefficients_with_their_words():
    result = _result()
    found = topics(result, chain=1, num_words=2)
    fig = plot_topics(found, num_topics=1, task_name="fruit")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["2: eggs dates (50.0%)"]
    assert ax.get_xlabel() == "eta (fruit)"
    fig = plot_topics(found, task=1)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["2: eggs dates (50.0%)", "0: apple bread (50.0%)"]  # eta -0.25 < 0.5
    assert [p.get_width() for p in fig.axes[0].patches] == [-0.25, 0.5]
    from matplotlib.figure import Figure

    given = Figure()
    axes = given.subplots(1, 2)
    assert plot_topics(found, ax=axes[1]) is given and len(axes[1].patches) == 2
    assert not axes[0].patches
    unsupervised = plot_topics(topics(_result(eta=False), chain=1))
    assert unsupervised.axes[0].get_xlabel() == "share of training tokens (%)"
    with pytest.raises(ValueError, match="no topic to plot"):
        plot_topics([])
