"""Several labels per text, measured: the bag-of-words baseline to beat, a predictor's probabilities on a split,
and a grouping of the labels (GoEmotions' Ekman six), each scored with thresholds chosen on validation and the test
split scored once (``ktrain_recipes.inference.thresholds``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ktrain_recipes.data.label_sets import multi_hot
from ktrain_recipes.inference.thresholds import choose_thresholds, score_with


def tfidf_baseline(data, seed: int = 0):
    """TF-IDF (words and word pairs, sublinear tf) and one logistic regression per label (scikit-learn's
    one-vs-rest), fitted on train; returns ``(validation probabilities, test probabilities or None)``."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2)
    features = vectorizer.fit_transform(data.texts("train"))
    model = OneVsRestClassifier(LogisticRegression(C=4.0, max_iter=2000, random_state=seed), n_jobs=1)
    model.fit(features, multi_hot(data.labels("train"), data.label_names))
    val = model.predict_proba(vectorizer.transform(data.texts("validation")))
    test = model.predict_proba(vectorizer.transform(data.texts("test"))) if "test" in data.splits else None
    return val, test


def predictor_probs(predictor, data):
    """A saved predictor's probabilities on validation and test (``classify``: length-sorted batches)."""
    from ktrain_recipes.inference.prediction import classify

    val = classify(predictor, data.texts("validation"), proba=True)
    test = classify(predictor, data.texts("test"), proba=True) if "test" in data.splits else None
    return val, test


def scored(data, names: list[str], val: np.ndarray, test: np.ndarray | None, truth=None) -> dict:
    """Thresholds chosen on validation, the validation scores with them, and the test split scored once.
    ``truth``: ``{split: label tuples}`` in ``names`` (default: the data's own labels)."""
    truth = truth or {s: data.labels(s) for s in data.splits}
    val_truth = multi_hot(truth["validation"], names)
    thresholds = choose_thresholds(val, val_truth, names)
    out = {"thresholds": thresholds, "validation": score_with(val, val_truth, names, thresholds)}
    if test is not None:
        out["test"] = score_with(test, multi_hot(truth["test"], names), names, thresholds)
    return out


def grouping(path: Path) -> dict[str, list[str]]:
    """A grouping file (GoEmotions' ``ekman_mapping.json``): group name -> the labels it gathers."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def grouped(probs: np.ndarray, names: list[str], groups: dict[str, list[str]], keep: tuple[str, ...] = ("neutral",)):
    """Each group's probability is the largest of its labels' (a text shows anger when it shows any of anger,
    annoyance or disapproval); labels in ``keep`` stay their own group. Returns ``(group names, probabilities)``."""
    columns = {**groups, **{k: [k] for k in keep if k in names}}
    order = list(columns)
    index = {n: i for i, n in enumerate(names)}
    return order, np.stack([probs[:, [index[n] for n in columns[g]]].max(axis=1) for g in order], axis=1)


def grouped_truth(rows: list[tuple[str, ...]], groups: dict[str, list[str]], keep: tuple[str, ...] = ("neutral",)):
    """Each text's groups: those any of its labels belongs to."""
    of = {label: g for g, labels in groups.items() for label in labels} | {k: k for k in keep}
    return [tuple(sorted({of[label] for label in row})) for row in rows]
