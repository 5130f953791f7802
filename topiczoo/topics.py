"""What a fitted model's topics are: their size, their coefficients and their most probable
words, as a list, a markdown table and a picture (the sLDA and sHDP papers' tables of topics
along their coefficient).

Topics are read from ONE chain at ONE training snapshot (default: chain 0, the last snapshot).
A topic's label k is arbitrary and differs between chains (label switching), so topics of
different chains are never averaged or matched here; compare chains by looking at each.

    from topiczoo.topics import topics, format_topics, plot_topics
    found = topics(result)                      # occupied topics, strongest eta first
    print(format_topics(found))
    plot_topics(found).savefig("topics.png")
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Topic", "topics", "format_topics", "plot_topics"]


@dataclass(frozen=True)
class Topic:
    """One topic of one chain at one snapshot.

    index: its slot k in the chain's state (labels are arbitrary: see the module docstring);
    tokens: n_k, the training tokens assigned to it; share: n_k / N (fraction of all training
    tokens); eta: its coefficient for each task, a tuple of T floats in score units (omega =
    eta . zbar), empty for an unsupervised model; words: its most probable words, most
    probable first; probabilities: phi_k of those words, (n_kw + beta) / (n_k + V beta).
    """

    index: int
    tokens: int
    share: float
    eta: tuple
    words: tuple
    probabilities: tuple


def topics(result, *, chain: int = 0, snapshot: int = -1, num_words: int = 10,
           sort_by: str | None = None, task: int = 0) -> list[Topic]:
    """The occupied topics of chain ``chain`` at training snapshot ``snapshot`` of a fit.

    result: a :class:`topiczoo.fit.FitResult` with at least one snapshot; num_words: words
    per topic (>= 1); sort_by: ``"eta"`` (largest coefficient of task ``task`` first; the
    default for a supervised model), ``"tokens"`` (largest first; the default otherwise) or
    ``"index"``. Topics with no token (the nonparametric models' free slots) are left out.
    Returns a list of :class:`Topic`.
    """
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
    if not isinstance(num_words, (int, np.integer)) or num_words < 1:
        raise ValueError(f"num_words must be an integer >= 1, got {num_words!r}")
    arrays = snapshots[snapshot].chain(chain)
    n_k = np.asarray(arrays["n_k"], np.int64)
    phi = np.asarray(result.model.predictor().phi_hat(arrays), np.float64)  # [V, K]
    eta = np.asarray(arrays["eta"], np.float64) if "eta" in arrays else np.zeros((0, n_k.size))
    if eta.shape[0] and not (isinstance(task, (int, np.integer)) and 0 <= task < eta.shape[0]):
        raise ValueError(f"task must be an integer in 0..{eta.shape[0] - 1}, got {task!r}")
    sort_by = sort_by or ("eta" if eta.shape[0] else "tokens")
    occupied = np.flatnonzero(n_k > 0)
    if sort_by == "eta":
        if not eta.shape[0]:
            raise ValueError("sort_by='eta' needs a supervised model (this one has no eta)")
        order = occupied[np.argsort(-eta[task, occupied], kind="stable")]
    elif sort_by == "tokens":
        order = occupied[np.argsort(-n_k[occupied], kind="stable")]
    elif sort_by == "index":
        order = occupied
    else:
        raise ValueError(f"sort_by must be 'eta', 'tokens' or 'index', got {sort_by!r}")
    total = max(int(n_k.sum()), 1)
    vocabulary = result.vocabulary
    out = []
    for k in order:
        top = np.argsort(-phi[:, k], kind="stable")[:num_words]
        out.append(Topic(int(k), int(n_k[k]), n_k[k] / total,
                         tuple(float(v) for v in eta[:, k]),
                         tuple(vocabulary[w] for w in top),
                         tuple(float(p) for p in phi[top, k])))
    return out


def format_topics(found: list[Topic], *, task_names=None, max_tasks: int = 3) -> str:
    """A markdown table of :func:`topics`' list: topic, tokens, share (%), eta (one column
    per task up to ``max_tasks`` tasks, else the largest and the smallest with their task),
    and the words. task_names: names of the T tasks (default ``task 0``, ...)."""
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
    head = ["topic", "tokens", "share %"] + eta_head + ["most probable words"]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---:"] * (len(head) - 1) + ["---"]) + "|"]
    for topic in found:
        cells = [str(topic.index), f"{topic.tokens:,}", f"{100 * topic.share:.2f}"]
        words = " ".join(topic.words).replace("|", "\\|")  # a word may hold the separator
        lines.append("| " + " | ".join(cells + eta_cells(topic) + [words]) + " |")
    return "\n".join(lines) + "\n"


def plot_topics(found: list[Topic], *, task: int = 0, num_topics: int = 20,
                num_words: int = 5, task_name: str | None = None, title: str | None = None,
                ax=None):
    """A horizontal bar chart of topics, labelled with their words: for a supervised model
    the ``num_topics // 2`` topics of largest and of smallest eta of task ``task`` (the bar is
    eta), else the ``num_topics`` largest topics (the bar is their share of tokens, %). Each
    bar is labelled with the topic's index, its first ``num_words`` words and its share.
    ax: a matplotlib ``Axes`` to draw into (default: a new figure sized to the topics).
    Returns the matplotlib ``Figure`` (save it with ``topiczoo.diagnostics.save_figure``)."""
    from matplotlib.figure import Figure

    if not found:
        raise ValueError("no topic to plot")
    if not isinstance(num_topics, (int, np.integer)) or num_topics < 1:
        raise ValueError(f"num_topics must be an integer >= 1, got {num_topics!r}")
    supervised = bool(found[0].eta)
    if supervised:
        if not isinstance(task, (int, np.integer)) or not 0 <= task < len(found[0].eta):
            raise ValueError(f"task must be an integer in 0..{len(found[0].eta) - 1}, got "
                             f"{task!r}")
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
    labels = [f"{t.index}: {' '.join(t.words[:num_words])} ({100 * t.share:.1f}%)"
              for t in ranked]
    if ax is None:
        fig = Figure(figsize=(8, 0.3 * len(ranked) + 1.2))
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    colors = ["tab:red" if v < 0 else "tab:blue" for v in values]
    ax.barh(range(len(ranked)), values, color=colors)
    ax.set_yticks(range(len(ranked)), labels, fontsize=8)
    ax.axvline(0.0, color="0.3", linewidth=0.8)
    ax.set_xlabel(xlabel)
    ax.set_title(title or ("the topics of largest and smallest coefficient" if supervised
                           else "the largest topics"), fontsize=10)
    if len(fig.axes) == 1:
        fig.tight_layout()
    return fig
