"""Figures for the notebooks and the CLI. Every function returns its matplotlib Figure."""

from __future__ import annotations

import math

import os
import sys
from pathlib import Path

import matplotlib

if not os.environ.get("DISPLAY") and "ipykernel" not in sys.modules:
    matplotlib.use("Agg")  # CLI and CI: no screen
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402
import seaborn as sns  # noqa: E402

from ktrain_recipes.errors import note  # noqa: E402

DPI = 110


def save_figure(fig, path: str | os.PathLike) -> Path:
    """Write a figure as PNG at a fixed dpi (creating the folder) and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def plot_confusion_matrix(metrics: dict, normalize: bool = True):
    """Draw the confusion matrix as a heatmap (rows: true label, columns: predicted)."""
    cm = np.asarray(metrics["confusion_matrix"], dtype=float)
    if normalize:
        cm = cm / np.maximum(cm.sum(axis=1, keepdims=True), 1)
    names = metrics["label_names"]
    fig, ax = plt.subplots(figsize=(6, 5))
    sns.heatmap(cm, annot=True, fmt=".2f" if normalize else ".0f", cmap="Blues", cbar=False,
                xticklabels=names, yticklabels=names, ax=ax)
    what = "row-normalised: each row sums to 1" if normalize else "counts"
    ax.set(xlabel="predicted", ylabel="true",
           title=f"confusion matrix ({what}; accuracy {metrics['accuracy']:.4f})")
    plt.close(fig)
    return fig


def plot_history(history: dict):
    """Plot loss and accuracy per epoch for training and validation."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key in zip(axes, ["loss", "accuracy"]):
        for prefix, style in [("", "o-"), ("val_", "s--")]:
            if prefix + key in history:
                values = history[prefix + key]
                ax.plot(range(1, len(values) + 1), values, style, label=(prefix or "train_") + key)
        ax.set(xlabel="epoch", title=key)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.legend()
    plt.close(fig)
    return fig


def plot_lr_find(finder, skip_begin: int = 10, skip_end: int = 5):
    """Plot a learning-rate finder's loss against the rate (log scale) with the two rates ktrain's
    ``learner.lr_plot(suggest=True)`` marks: the longest valley (red) and the steepest fall (purple). ``finder``: a
    ``kr.LRFinder`` after its run (anything with ``lrs``, ``losses`` and ``suggestions()``)."""
    end = len(finder.lrs) - skip_end
    finite = [v for v in finder.losses[skip_begin:end] if math.isfinite(v)]
    if not finder.lrs:  # battery v7, X79: an empty plot drawn without a word
        note("the rate finder has no curve: it was never run (call its fit first)")
    elif end - skip_begin < 5:
        note(f"the rate finder ran {len(finder.lrs)} steps: too few to read once the first {skip_begin} and last "
             f"{skip_end} are left out; fit it on more batches")
    elif not finite:
        why = "the loss was not a number from the first step" if finder.losses else "no loss was recorded"
        note(f"the rate finder has no curve to read: {why}; lower the rates it starts from, or check the data")
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(finder.lrs[skip_begin:end], finder.losses[skip_begin:end])
    ax.set(xscale="log", xlabel="learning rate (log scale)", ylabel="loss (smoothed)", title="learning-rate finder")
    marks = finder.suggestions(skip_begin, skip_end)
    for name, color in [("longest valley", "red"), ("steepest fall", "purple")]:
        if name in marks:
            rate = marks[name]
            loss = finder.losses[finder.lrs.index(rate)]
            ax.plot(rate, loss, marker="o", markersize=10, color=color, linestyle="none", label=f"{name}: {rate:.1e}")
    if marks:
        ax.legend()
    plt.close(fig)
    return fig


def plot_label_distribution(labels: list[str], label_names: list[str]):
    """Bar chart of how many examples each label has."""
    counts = [labels.count(name) for name in label_names]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    sns.barplot(x=counts, y=label_names, ax=ax, color="steelblue")
    ax.set(xlabel="examples", title="label distribution")
    plt.close(fig)
    return fig


def plot_token_lengths(lengths: list[int], maxlen: int):
    """Histogram of token lengths with the chosen maxlen marked."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.hist(lengths, bins=40, color="steelblue")
    over = sum(n > maxlen for n in lengths)
    ax.axvline(maxlen, color="red", linestyle="--", label=f"maxlen {maxlen} ({over} texts longer)")
    ax.set(xlabel="tokens per text", ylabel="texts", title="token lengths")
    ax.legend()
    plt.close(fig)
    return fig


def plot_latency_vs_accuracy(table, x: str = "latency_p50_ms", y: str = "accuracy", size: str = "size_mb"):
    """Scatter latency against accuracy, one bubble per model, bubble area proportional to size."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    sizes = np.asarray(table[size], dtype=float)
    sizes = np.nan_to_num(sizes, nan=np.nanmedian(sizes) if np.isfinite(sizes).any() else 1.0)  # unknown: median
    areas = sizes / max(sizes.max(), 1e-9) * 2000
    colors = plt.get_cmap("tab10").colors
    # one colour per model, named in the legend: labels written beside the bubbles collide when two models have
    # nearly the same latency and accuracy (two int8 students, say)
    for i, (name, row) in enumerate(table.iterrows()):
        ax.scatter(row[x], row[y], s=areas[i], alpha=0.55, color=colors[i % len(colors)], label=str(name))
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8, title="model", borderaxespad=0)
    for handle in legend.legend_handles:  # legend markers of one size, not the bubbles'
        handle.set_sizes([60])
    ax.set(xlabel=x.replace("_", " "), ylabel=y.replace("_", " "), title="latency vs accuracy (bubble = size)")
    ax.margins(0.2)
    ax.set_xlim(left=0)  # from zero: small latency differences should look small
    plt.close(fig)
    return fig


def plot_parameters(table):
    """Stacked bars: each model's parameters (millions) in embeddings, encoder layers and pooler."""
    fig, ax = plt.subplots(figsize=(7, 4))
    left = np.zeros(len(table))
    for part, color in [("embeddings", "#8da0cb"), ("encoder", "#66c2a5"), ("pooler", "#fc8d62")]:
        ax.barh(table.index, table[part], left=left, label=part, color=color)
        left += np.asarray(table[part], dtype=float)
    for i, total in enumerate(left):
        ax.annotate(f"{total:.1f}M", (total, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set(xlabel="parameters (millions)", title="where the parameters live")
    ax.invert_yaxis()
    ax.legend(loc="lower right")
    plt.close(fig)
    return fig
