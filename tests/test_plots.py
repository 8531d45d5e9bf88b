"""The figures say what the numbers say: titles as precise as the report, labels that never collide."""

import pandas as pd

import ktrain_recipes as kr
import ktrain_recipes_tools as krt


def test_two_models_at_the_same_point_keep_legible_labels():
    table = pd.DataFrame({"latency_p50_ms": [70.0, 2.40, 2.41], "val_accuracy": [0.93, 0.921, 0.921],
                          "size_mb": [91, 23, 23]}, index=["teacher fp32", "student int8", "student distilled int8"])
    fig = krt.plot_latency_vs_accuracy(table, y="val_accuracy")
    ax = fig.axes[0]
    assert not ax.texts  # no labels drawn beside the bubbles, where close ones overlap
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(table.index)
    colors = {tuple(c.get_facecolor()[0]) for c in ax.collections}
    assert len(colors) == 3  # one colour per model


def test_the_confusion_matrix_title_rounds_as_the_report_does():
    metrics = kr.score(["joy", "joy", "sadness", "anger"] * 500, ["joy", "joy", "sadness", "joy"] * 500,
                       ["sadness", "joy", "anger"])
    metrics["accuracy"] = 0.9325
    fig = kr.plot_confusion_matrix(metrics)
    assert "accuracy 0.9325" in fig.axes[0].get_title()
