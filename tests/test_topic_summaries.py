"""topiczoo.topics: the topics of one chain at one snapshot, as a list, a table and a plot
(the sweep of kernels/topics.py is tested in test_topics.py)."""

from types import SimpleNamespace

import numpy as np
import pytest

from topiczoo.fit import Snapshot
from topiczoo.models import lda
from topiczoo.models.shdp import hdp
from topiczoo.topics import format_topics, plot_topics, topics, word_frequencies, write_topics

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
    found = topics(_result(nonparametric=nonparametric), chain=1, num_words=3, relevance=1.0)
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
    found = topics(result, chain=1, relevance=1.0)
    assert [t.index for t in found] == [2, 0] and found[0].eta == ()
    assert found[0].share == 15 / 25 and len(found[0].words) == 5
    with pytest.raises(ValueError, match="needs a supervised model"):
        topics(result, sort_by="eta")
    table = format_topics(found)
    assert table.splitlines()[0] == "| topic | tokens | share % | most probable words |"
    assert table.splitlines()[2] == "| 2 | 15 | 60.00 | eggs apple dates bread cheese |"


def test_table_names_the_tasks_and_summarises_many():
    found = topics(_result(), chain=1, num_words=2, relevance=1.0)
    table = format_topics(found, task_names=["fruit", "dairy"]).splitlines()
    assert table[0] == "| topic | tokens | share % | eta (fruit) | eta (dairy) | most probable words |"
    assert table[2] == "| 2 | 10 | 50.00 | +2.000 | -0.250 | eggs dates |"
    many = format_topics(found, task_names=["fruit", "dairy"], max_tasks=1).splitlines()
    assert many[0] == ("| topic | tokens | share % | largest eta | smallest eta | most probable "
                       "words |")
    assert many[3] == "| 0 | 10 | 50.00 | +0.500 (dairy) | -1.000 (fruit) | apple bread |"
    piped = _result()
    piped.vocabulary = ("a|b",) + VOCAB[1:]
    assert "| a\\|b bread |" in format_topics(topics(piped, chain=1, num_words=2, relevance=1))
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
    found = topics(result, chain=1, num_words=2, relevance=1.0)
    fig = plot_topics(found, task=0, num_topics=1, task_name="fruit")
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
    assert plot_topics(found, task=0, ax=axes[1]) is given and len(axes[1].patches) == 2
    assert not axes[0].patches
    with pytest.raises(ValueError, match="pass task=t"):  # one Axes, two tasks
        plot_topics(found, ax=axes[0])
    unsupervised = plot_topics(topics(_result(eta=False), chain=1), ax=axes[0])
    assert unsupervised.axes[0].get_xlabel() == "share of training tokens (%)"
    with pytest.raises(ValueError, match="no topic to plot"):
        plot_topics([])


# ------------------------------------------------------------------------------ relevance


COMMON = ("the", "apple", "bread", "cheese", "dates")


def _common_word_result(nonparametric=False, num_tasks=1):
    """One chain, two topics of 20 tokens; "the" is the most frequent word of both
    (10 tokens each), apple (8) and cheese (9) are each one topic's own. eta: +1 and -1 for
    task 0, then -0.5 and +0.5 for any other."""
    n_wk = np.array([[[10, 10], [8, 0], [2, 0], [0, 9], [0, 1]]], np.int32)  # [C, V, K]
    n_k = n_wk.sum(axis=1)
    eta = np.array([[[1.0, -1.0]] + [[-0.5, 0.5]] * (num_tasks - 1)], np.float32)
    arrays = {"n_k": n_k, "eta": eta}
    if nonparametric:
        arrays["phi_wk"] = ((n_wk + BETA) / (n_k + 5 * BETA)[:, None, :]).astype(np.float32)
    else:
        arrays["n_wk"] = n_wk
    model = hdp(2, beta=BETA) if nonparametric else lda(2, beta=BETA)
    return SimpleNamespace(snapshots=[Snapshot(10, arrays)], vocabulary=COMMON, model=model)


@pytest.mark.parametrize("nonparametric", [False, True])
def test_relevance_demotes_a_word_frequent_in_every_topic(nonparametric):
    result = _common_word_result(nonparametric)
    default, plain = topics(result), topics(result, relevance=1.0)
    assert [t.index for t in default] == [0, 1] and default[0].relevance == 0.6
    assert plain[0].words[0] == "the" and plain[1].words[0] == "the"  # by phi alone
    assert default[0].words[0] == "apple" and default[1].words[0] == "cheese"
    assert "the" in default[0].words  # ranked lower, not dropped
    for ours, theirs in zip(default, plain, strict=True):  # the data are unchanged
        assert dict(zip(ours.words, ours.probabilities)) == dict(zip(theirs.words,
                                                                    theirs.probabilities))


def test_relevance_ranks_by_sievert_and_shirleys_formula():
    result = _common_word_result()
    n_wk = result.snapshots[0].arrays["n_wk"][0].astype(float)
    phi = (n_wk + BETA) / (n_wk.sum(0) + 5 * BETA)
    p_w = n_wk.sum(1) / n_wk.sum()
    for lam in (0.0, 0.3, 0.6, 1.0):
        found = topics(result, relevance=lam, num_words=5, sort_by="index")
        for topic in found:
            k = topic.index
            score = lam * np.log(phi[:, k]) + (1 - lam) * np.log(phi[:, k] / p_w)
            expected = [COMMON[w] for w in np.argsort(-score, kind="stable")]
            assert list(topic.words) == expected, (lam, k)
            assert np.allclose(topic.probabilities, [phi[COMMON.index(w), k]
                                                     for w in topic.words])


def test_word_frequencies_from_the_counts_or_the_topics():
    counted = _common_word_result().snapshots[0].chain(0)
    p_w = word_frequencies(counted, np.zeros((5, 2)))  # the counts: phi is not read
    assert np.allclose(p_w, np.array([20, 8, 2, 9, 1]) / 40)
    mixed = _common_word_result(nonparametric=True).snapshots[0].chain(0)
    smoothed = word_frequencies(mixed, mixed["phi_wk"])  # sum_k phi_kw n_k / N
    assert smoothed.sum() == pytest.approx(1.0) and np.argmax(smoothed) == 0
    # two topics of 20 tokens: (n_w + 2 beta) 20 / (20 + V beta) / N
    assert np.allclose(smoothed, (np.array([20, 8, 2, 9, 1]) + 2 * BETA) * 20 / 22.5 / 40,
                       rtol=1e-6)


@pytest.mark.parametrize("relevance", [-0.1, 1.5, "high", True, None])
def test_relevance_outside_0_1_is_a_clear_error(relevance):
    with pytest.raises(ValueError, match=r"relevance must be a number in \[0, 1\]"):
        topics(_common_word_result(), relevance=relevance)


def test_table_heads_the_words_by_their_ranking():
    result = _common_word_result()
    assert "| words by relevance (lambda = 0.6) |" in format_topics(topics(result))
    assert "| most probable words |" in format_topics(topics(result, relevance=1.0))
    assert "| words by relevance (lambda = 0.3) |" in format_topics(topics(result,
                                                                          relevance=0.3))


# ------------------------------------------------------------------------------ several tasks


def test_plot_of_several_tasks_has_a_panel_per_task_with_its_eta():
    """The multi-task topics.png showed the first class's coefficients only."""
    found = topics(_result(), chain=1, num_words=2, relevance=1.0)  # eta tasks 0 and 1
    fig = plot_topics(found, task_names=["fruit", "dairy"], per_task=2)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["fruit", "dairy"]
    # each panel: that task's eta, largest on top (the last bar)
    assert [p.get_width() for p in panels[0].patches] == [-1.0, 2.0]
    assert [p.get_width() for p in panels[1].patches] == [-0.25, 0.5]
    assert [t.get_text() for t in panels[1].get_yticklabels()] == [
        "2: eggs dates (50.0%)", "0: apple bread (50.0%)"]
    one = plot_topics(found, task_names=["fruit", "dairy"], per_task=1, columns=1)
    assert [p.get_width() for ax in one.axes for p in ax.patches] == [2.0, 0.5]
    assert "task 1" in [ax.get_title() for ax in plot_topics(found).axes]
    with pytest.raises(ValueError, match="1 names for 2 tasks"):
        plot_topics(found, task_names=["fruit"])
    with pytest.raises(ValueError, match="per_task must be an integer >= 1"):
        plot_topics(found, per_task=0)


def test_write_topics_names_the_classes_and_the_ranking(tmp_path):
    result = _common_word_result(num_tasks=2)
    result.task = SimpleNamespace(kind="multiclass")
    paths = write_topics(result, tmp_path, label_names=("fruit", "dairy"), num_words=3)
    assert paths == [tmp_path / "topics.md", tmp_path / "topics.png"]
    text = paths[0].read_text()
    assert text.startswith("# Topics of chain 0 at iteration 10 (the last training snapshot)")
    assert "The eta of a class pushes a document towards it." in text
    assert "ranked by relevance" in text and "lambda = 0.6" in text
    assert "| eta (fruit) | eta (dairy) | words by relevance (lambda = 0.6) |" in text
    assert "| 0 | 20 | 50.00 | +1.000 | -0.500 | apple the bread |" in text
    assert paths[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    binary = _common_word_result()
    binary.task = SimpleNamespace(kind="binary")
    (tmp_path / "binary").mkdir()
    text = write_topics(binary, tmp_path / "binary", label_names=("business", "politics"),
                        relevance=1.0)[0].read_text()
    assert "eta > 0 pushes a document towards 'politics'." in text
    assert "Words: the most probable first." in text and "| most probable words |" in text
