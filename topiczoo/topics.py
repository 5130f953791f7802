"""What a fitted model's topics are: their size, their coefficients and their words, as a
list, a markdown table and a picture (the sLDA and sHDP papers' tables of topics along their
coefficient).

Topics are read from ONE chain at ONE training snapshot (default: chain 0, the last snapshot).
A topic's label k is arbitrary and differs between chains (label switching), so topics of
different chains are never averaged or matched here; compare chains by looking at each.

A topic's words are ranked by relevance (Sievert and Shirley 2014, LDAvis):

    relevance(w, k | lambda) = lambda log phi_kw + (1 - lambda) log(phi_kw / p_w)

with phi_kw the topic's word probability and p_w the word's frequency in the training
corpus. lambda = 1 ranks by phi_kw alone (the most probable words, where words frequent
everywhere, such as the mail headers' "edu", "writes" and "com" of 20news, lead every topic);
smaller lambda favours the words particular to the topic (lift phi_kw / p_w). The default 0.6
is the value Sievert and Shirley's users found easiest to interpret. Only the ranking changes:
a topic's probabilities are phi_kw whatever lambda.

    from topiczoo.topics import topics, format_topics, plot_topics
    found = topics(result)                      # occupied topics, strongest eta first
    print(format_topics(found))
    plot_topics(found).savefig("topics.png")    # one panel per task for a multi-task model
    topics(result, relevance=1.0)               # the most probable words instead
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["DEFAULT_RELEVANCE", "Topic", "format_topics", "plot_topics", "topics",
           "word_frequencies", "write_topics"]

#: lambda of the relevance ranking of a topic's words by default (Sievert and Shirley 2014).
DEFAULT_RELEVANCE = 0.6


@dataclass(frozen=True)
class Topic:
    """One topic of one chain at one snapshot.

    index: its slot k in the chain's state (labels are arbitrary: see the module docstring);
    tokens: n_k, the training tokens assigned to it; share: n_k / N (fraction of all training
    tokens); eta: its coefficient for each task, a tuple of T floats in score units (omega =
    eta . zbar), empty for an unsupervised model; words: its top words, ranked by relevance
    with lambda = ``relevance`` (1: the most probable first; see the module docstring);
    probabilities: phi_kw of those words, (n_kw + beta) / (n_k + V beta), in the same order
    (not sorted when ``relevance`` < 1); relevance: the lambda the words were ranked by.
    """

    index: int
    tokens: int
    share: float
    eta: tuple
    words: tuple
    probabilities: tuple
    relevance: float = 1.0


def word_frequencies(arrays: dict, phi: np.ndarray) -> np.ndarray:
    """p_w, the frequency of each word in the training corpus: float64 [V], summing to 1.

    arrays: one chain's snapshot (``Snapshot.chain(c)``); phi: its topics [V, K]
    (``model.predictor().phi_hat(arrays)``). From the snapshot's counts, sum over topics of n_wk divided
    by N, where it holds them (the parametric family); else (the sHDP's snapshot holds phi
    only) the topics' mixture sum_k phi_kw n_k / N, the same frequencies smoothed by the
    prior beta. A word with no training token has p_w = 0.
    """
    if "n_wk" in arrays:
        counts = np.asarray(arrays["n_wk"], np.float64).sum(axis=-1)
    else:
        counts = np.asarray(phi, np.float64) @ np.asarray(arrays["n_k"], np.float64)
    total = counts.sum()
    return counts / total if total > 0 else counts


def _ranked_words(phi_k: np.ndarray, p_w: np.ndarray, relevance: float,
                  num_words: int) -> np.ndarray:
    """The ``num_words`` word ids of largest relevance(w, k | lambda = ``relevance``) of one
    topic phi_k [V], ties in vocabulary order. Words with p_w = 0 (no training token) come
    last, whatever lambda."""
    if relevance == 1.0:
        score = phi_k.copy()
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.log(phi_k) - (1.0 - relevance) * np.log(p_w)
    score[p_w <= 0] = -np.inf
    return np.argsort(-score, kind="stable")[:num_words]


def _snapshot_of(result, snapshot, chain) -> dict:
    """One chain's arrays at one snapshot, with the arguments checked."""
    snapshots = getattr(result, "snapshots", None)
    if not snapshots:
        raise ValueError("the fit kept no training snapshot: fit with num_snapshots >= 1")
    if not isinstance(snapshot, (int, np.integer)) or not -len(snapshots) <= snapshot < len(
            snapshots):
        raise ValueError(f"snapshot must index the fit's {len(snapshots)} snapshots, got "
                         f"{snapshot!r}")
    chosen = snapshots[snapshot].arrays
    if "n_k" not in chosen:
        raise ValueError("the snapshot holds no topic sizes n_k (a checkpoint written before "
                         "topiczoo.topics existed): continue or rerun the fit")
    num_chains = int(np.asarray(chosen["n_k"]).shape[0])
    if not isinstance(chain, (int, np.integer)) or not 0 <= chain < num_chains:
        raise ValueError(f"chain must be an integer in 0..{num_chains - 1}, got {chain!r}")
    return snapshots[snapshot].chain(chain)


def _order(n_k: np.ndarray, eta: np.ndarray, sort_by: str, task: int) -> np.ndarray:
    """Occupied topic slots in the order ``sort_by`` asks for."""
    occupied = np.flatnonzero(n_k > 0)
    if sort_by == "eta":
        if not eta.shape[0]:
            raise ValueError("sort_by='eta' needs a supervised model (this one has no eta)")
        return occupied[np.argsort(-eta[task, occupied], kind="stable")]
    if sort_by == "tokens":
        return occupied[np.argsort(-n_k[occupied], kind="stable")]
    if sort_by == "index":
        return occupied
    raise ValueError(f"sort_by must be 'eta', 'tokens' or 'index', got {sort_by!r}")


def topics(result, *, chain: int = 0, snapshot: int = -1, num_words: int = 10,
           sort_by: str | None = None, task: int = 0,
           relevance: float = DEFAULT_RELEVANCE) -> list[Topic]:
    """The occupied topics of chain ``chain`` at training snapshot ``snapshot`` of a fit.

    result: a :class:`topiczoo.fit.FitResult` with at least one snapshot; num_words: words
    per topic (>= 1); sort_by: ``"eta"`` (largest coefficient of task ``task`` first; the
    default for a supervised model), ``"tokens"`` (largest first; the default otherwise) or
    ``"index"``; relevance: lambda in [0, 1] of the words' ranking (module docstring; 1 for
    the most probable words), p_w from the snapshot (:func:`word_frequencies`), so no corpus
    is needed. Topics with no token (the nonparametric models' free slots) are left out.
    Returns a list of :class:`Topic`.
    """
    arrays = _snapshot_of(result, snapshot, chain)
    if not isinstance(num_words, (int, np.integer)) or num_words < 1:
        raise ValueError(f"num_words must be an integer >= 1, got {num_words!r}")
    if (isinstance(relevance, bool) or not isinstance(relevance, (int, float, np.number))
            or not 0.0 <= relevance <= 1.0):
        raise ValueError(f"relevance must be a number in [0, 1] (lambda; 1 ranks the words by "
                         f"probability alone), got {relevance!r}")
    n_k = np.asarray(arrays["n_k"], np.int64)
    phi = np.asarray(result.model.predictor().phi_hat(arrays), np.float64)  # [V, K]
    eta = np.asarray(arrays["eta"], np.float64) if "eta" in arrays else np.zeros((0, n_k.size))
    if eta.shape[0] and not (isinstance(task, (int, np.integer)) and 0 <= task < eta.shape[0]):
        raise ValueError(f"task must be an integer in 0..{eta.shape[0] - 1}, got {task!r}")
    order = _order(n_k, eta, sort_by or ("eta" if eta.shape[0] else "tokens"), task)
    p_w = word_frequencies(arrays, phi)
    total = max(int(n_k.sum()), 1)
    vocabulary = result.vocabulary
    out = []
    for k in order:
        top = _ranked_words(phi[:, k], p_w, float(relevance), num_words)
        out.append(Topic(int(k), int(n_k[k]), n_k[k] / total,
                         tuple(float(v) for v in eta[:, k]),
                         tuple(vocabulary[w] for w in top),
                         tuple(float(p) for p in phi[top, k]), float(relevance)))
    return out


def _words_heading(found: list[Topic]) -> str:
    relevance = found[0].relevance if found else 1.0
    if relevance == 1.0:
        return "most probable words"
    return f"words by relevance (lambda = {relevance:g})"


def format_topics(found: list[Topic], *, task_names=None, max_tasks: int = 3) -> str:
    """A markdown table of :func:`topics`' list: topic, tokens, share (%), eta (one column
    per task up to ``max_tasks`` tasks, else the largest and the smallest with their task),
    and the words (headed "words by relevance (lambda = ...)", or "most probable words" for
    lambda = 1). task_names: names of the T tasks (default ``task 0``, ...)."""
    num_tasks = len(found[0].eta) if found else 0
    names = list(task_names) if task_names is not None else [f"task {t}" for t in
                                                              range(num_tasks)]
    if len(names) != num_tasks:
        raise ValueError(f"task_names has {len(names)} names for {num_tasks} tasks")
    if num_tasks == 0:
        eta_head, eta_cells = [], lambda topic: []
    elif num_tasks == 1:
        eta_head, eta_cells = ["eta"], lambda topic: [f"{topic.eta[0]:+.3f}"]
    elif num_tasks <= max_tasks:
        eta_head = [f"eta ({n})" for n in names]
        eta_cells = lambda topic: [f"{v:+.3f}" for v in topic.eta]  # noqa: E731
    else:
        eta_head = ["largest eta", "smallest eta"]

        def eta_cells(topic):
            hi, lo = int(np.argmax(topic.eta)), int(np.argmin(topic.eta))
            return [f"{topic.eta[hi]:+.3f} ({names[hi]})", f"{topic.eta[lo]:+.3f} ({names[lo]})"]
    head = ["topic", "tokens", "share %"] + eta_head + [_words_heading(found)]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---:"] * (len(head) - 1) + ["---"]) + "|"]
    for topic in found:
        cells = [str(topic.index), f"{topic.tokens:,}", f"{100 * topic.share:.2f}"]
        words = " ".join(topic.words).replace("|", "\\|")  # a word may hold the separator
        lines.append("| " + " | ".join(cells + eta_cells(topic) + [words]) + " |")
    return "\n".join(lines) + "\n"


def _check_count(name: str, value) -> None:
    if not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def _bars(ax, ranked: list[Topic], values: list, num_words: int) -> None:
    """One horizontal bar per topic (bottom to top), labelled with its index, first words and
    share of the tokens; negative values red, positive blue."""
    labels = [f"{t.index}: {' '.join(t.words[:num_words])} ({100 * t.share:.1f}%)"
              for t in ranked]
    ax.barh(range(len(ranked)), values, color=["tab:red" if v < 0 else "tab:blue"
                                               for v in values])
    ax.set_yticks(range(len(ranked)), labels, fontsize=8)
    ax.axvline(0.0, color="0.3", linewidth=0.8)


def _words_note(found: list[Topic]) -> str:
    relevance = found[0].relevance
    return ("most probable words" if relevance == 1.0
            else f"words by relevance, lambda = {relevance:g}")


def plot_topics(found: list[Topic], *, task: int | None = None, num_topics: int = 20,
                num_words: int = 5, task_name: str | None = None, task_names=None,
                per_task: int = 5, columns: int = 2, title: str | None = None, ax=None):
    """A horizontal bar chart of topics, each bar labelled with the topic's index, its first
    ``num_words`` words and its share of the training tokens.

    * Unsupervised model: the ``num_topics`` largest topics; the bar is their share (%).
    * One task, or ``task`` given: the ``num_topics // 2`` topics of smallest and the rest of
      largest eta of that task (default 0); the bar is eta; ``task_name`` names its axis.
    * Several tasks (a multi-task or multi-label model) and ``task`` None (the default): one
      panel per task, ``columns`` panels a row, each with the ``per_task`` topics of largest
      eta of that task (what pushes a document towards that class), titled by
      ``task_names`` (default ``task 0``, ...; ``task_name`` is not used). One figure rather
      than one per class: the classes are read side by side, and a topic that serves several
      classes shows in each of their panels.

    ax: a matplotlib ``Axes`` to draw one panel into (not with a panel per task; default: a
    new figure sized to the topics). Returns the matplotlib ``Figure`` (save it with
    ``topiczoo.diagnostics.save_figure``)."""
    from matplotlib.figure import Figure

    if not found:
        raise ValueError("no topic to plot")
    for name, value in (("num_topics", num_topics), ("per_task", per_task),
                        ("columns", columns)):
        _check_count(name, value)
    num_tasks = len(found[0].eta)
    if num_tasks > 1 and task is None:
        if ax is not None:
            raise ValueError("ax holds one panel: pass task=t to draw one task into it")
        return _plot_per_task(found, task_names, per_task, columns, num_words, title)
    if num_tasks:
        task = 0 if task is None else task
        if not isinstance(task, (int, np.integer)) or not 0 <= task < num_tasks:
            raise ValueError(f"task must be an integer in 0..{num_tasks - 1}, got {task!r}")
        ranked = sorted(found, key=lambda t: t.eta[task])
        if len(ranked) > num_topics:
            low = num_topics // 2
            ranked = ranked[:low] + ranked[len(ranked) - (num_topics - low):]
        values = [t.eta[task] for t in ranked]
        xlabel = f"eta ({task_name})" if task_name else "eta"
    else:
        ranked = sorted(found, key=lambda t: t.tokens)[-num_topics:]
        values = [100 * t.share for t in ranked]
        xlabel = "share of training tokens (%)"
    if ax is None:
        fig = Figure(figsize=(8, 0.3 * len(ranked) + 1.2))
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    _bars(ax, ranked, values, num_words)
    ax.set_xlabel(xlabel)
    what = ("the topics of largest and smallest coefficient" if num_tasks
            else "the largest topics")
    ax.set_title(title or f"{what} ({_words_note(found)})", fontsize=10)
    if len(fig.axes) == 1:
        fig.tight_layout()
    return fig


def _plot_per_task(found, task_names, per_task, columns, num_words, title):
    """:func:`plot_topics`' figure of a panel per task."""
    from matplotlib.figure import Figure

    num_tasks = len(found[0].eta)
    names = list(task_names) if task_names is not None else [f"task {t}"
                                                             for t in range(num_tasks)]
    if len(names) != num_tasks:
        raise ValueError(f"task_names has {len(names)} names for {num_tasks} tasks")
    columns = min(columns, num_tasks)
    rows = -(-num_tasks // columns)
    shown = min(per_task, len(found))
    fig = Figure(figsize=(7.5 * columns, rows * (0.3 * shown + 0.8) + 0.6),
                 layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for t, name in enumerate(names):
        ranked = sorted(found, key=lambda topic: topic.eta[t])[-shown:]
        _bars(axes[t], ranked, [topic.eta[t] for topic in ranked], num_words)
        axes[t].set_title(str(name), fontsize=9)
        axes[t].set_xlabel("eta", fontsize=8)
    for extra in axes[num_tasks:]:
        extra.set_visible(False)
    fig.suptitle(title or f"the {shown} topics of largest coefficient of each task "
                 f"({_words_note(found)})", fontsize=10)
    return fig


def write_topics(result, out, *, label_names=None, num_words: int = 12,
                 relevance: float = DEFAULT_RELEVANCE) -> list:
    """Write ``out/topics.md`` (every occupied topic of chain 0 at the last snapshot: tokens,
    eta, ``num_words`` words ranked by ``relevance``; :func:`format_topics`) and
    ``out/topics.png`` (:func:`plot_topics`: one panel per task for a multi-task model);
    return the two paths. label_names: the corpus's class names (``Corpus.label_names``),
    naming the tasks of a multi-task model and the positive class of a binary one."""
    from topiczoo.diagnostics import save_figure

    out = Path(out)
    found = topics(result, num_words=num_words, relevance=relevance)
    num_tasks = len(found[0].eta) if found else 0
    names = list(label_names) if label_names and len(label_names) == num_tasks > 1 else None
    kind = result.task.kind if getattr(result, "task", None) is not None else None
    positive = (label_names[1] if kind == "binary" and label_names and len(label_names) == 2
                else None)
    (out / "topics.md").write_text(_topics_preamble(result, found, kind, positive)
                                   + format_topics(found, task_names=names))
    task_name = f"> 0: towards {positive}" if positive else None
    save_figure(plot_topics(found, task_name=task_name, task_names=names),
                out / "topics.png")
    return [out / "topics.md", out / "topics.png"]


def _topics_preamble(result, found, kind, positive) -> str:
    """topics.md's heading and the paragraph saying how to read its table."""
    num_tasks = len(found[0].eta) if found else 0
    meaning = {"binary": f" eta > 0 pushes a document towards {positive!r}." if positive
               else "",
               "regression": " eta > 0 raises the predicted response.",
               "multiclass": " The eta of a class pushes a document towards it.",
               "multilabel": " The eta of a label pushes a document towards it."}
    ordering = {0: "largest first", 1: "largest coefficient first"}.get(
        num_tasks, "largest coefficient of the first task first")
    relevance = found[0].relevance if found else 1.0
    words = (" Words: the most probable first." if relevance == 1.0 else
             f" Words: ranked by relevance, lambda log phi_kw + (1 - lambda) log(phi_kw / "
             f"p_w) with lambda = {relevance:g} and p_w the word's frequency in the training "
             "corpus (Sievert and Shirley 2014): words frequent in every topic give way to "
             "the topic's own.")
    return (f"# Topics of chain 0 at iteration {result.snapshots[-1].iteration} (the last "
            f"training snapshot)\n\n{len(found)} occupied topics, {ordering}; share: of the "
            f"training tokens.{meaning.get(kind, '')}{words} A topic's number is its label in "
            f"this chain only: chains label their topics differently.\n\n")
