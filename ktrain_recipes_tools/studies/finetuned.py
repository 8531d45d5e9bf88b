"""Already fine-tuned models, scored as they are: ktrain's tutorial A3 wraps a fine-tuned transformers
classifier in a ktrain predictor without training it. This module does that for any folder or hub id and
measures what a learner compares models by: test accuracy, single-text latency and batch throughput.

The emotion models published by others (``PUBLISHED``) are BERT, RoBERTa, DistilBERT and ALBERT, each
fine-tuned on emotion; their cards quote their own figures, kept beside ours.
"""

from __future__ import annotations

import os

from ktrain_recipes.errors import RecipesError, note

# Public fine-tuned emotion classifiers (hub ids) and the test accuracy each card reports.
PUBLISHED = {
    "bert": ("bhadresh-savani/bert-base-uncased-emotion", 0.9405),
    "roberta": ("bhadresh-savani/roberta-base-emotion", 0.9395),
    "distilbert": ("bhadresh-savani/distilbert-base-uncased-emotion", 0.938),
    "albert": ("bhadresh-savani/albert-base-v2-emotion", 0.936),
}

# The hub's own verified evaluation of those models on emotion's test split (test accuracy; ALBERT's has none), and
# the prediction speed each card reports (samples/s; hardware unstated, a GPU by the figures).
VERIFIED = {"bert": 0.9265, "roberta": 0.931, "distilbert": 0.927, "albert": None}
CARD_SPEED = {"bert": 190, "roberta": 196, "distilbert": 399, "albert": 183}


def published_table():
    """The published emotion figures of BERT, RoBERTa, DistilBERT and ALBERT fine-tuned by others: a DataFrame."""
    import pandas as pd

    rows = {name: {"hub id": hub, "verified test accuracy": VERIFIED[name], "card test accuracy": card,
                   "card samples/s": CARD_SPEED[name]} for name, (hub, card) in PUBLISHED.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


def label_order(id2label: dict, label_names: list[str]) -> list[str]:
    """The data's label name for each of the model's outputs, checked.

    A model whose config names its labels (``{0: "sadness", ...}``) is mapped by name, whatever its order; a
    model with generic names (``LABEL_0``) is taken to follow the data's order, with a note saying so.
    """
    names = [str(id2label[i]) for i in range(len(id2label))]
    if len(names) != len(label_names):
        raise RecipesError(f"the model has {len(names)} outputs but the data has {len(label_names)} labels: score "
                           "it on the data it was fine-tuned on")
    if sorted(names) == sorted(map(str, label_names)):
        return names
    if all(n.upper().startswith("LABEL_") for n in names):
        note(f"note: the model's labels are {names[0]}..{names[-1]}: taking them in the data's order "
             f"({', '.join(label_names)}); check the model card")
        return list(label_names)
    raise RecipesError(f"the model's labels ({', '.join(names)}) are not the data's ({', '.join(label_names)}): "
                       "score it on the data it was fine-tuned on")


def wrap_finetuned(model: str | os.PathLike, label_names: list[str], maxlen: int = 128, batch_size: int = 32):
    """ktrain's tutorial A3: a ktrain predictor around an already fine-tuned classifier (folder or hub id).

    ``text.Transformer`` gives the preprocessor (the model's own tokenizer), the fine-tuned weights load with
    transformers, and ``ktrain.get_predictor`` joins them; its classes are the data's labels in the model's
    output order (``label_order``).
    """
    import ktrain
    import tensorflow as tf
    from ktrain import text
    from transformers import AutoConfig, TFAutoModelForSequenceClassification

    from ktrain_recipes.models import resolve_model
    from ktrain_recipes.segments import takes_segment_ids

    path = resolve_model(str(model))
    classes = label_order(AutoConfig.from_pretrained(path).id2label, label_names)
    preproc = text.Transformer(path, maxlen=maxlen, class_names=classes, batch_size=batch_size)
    preproc.preprocess_train_called = True  # ktrain's flag for "fitted": this model is fine-tuned already
    preproc.use_token_type_ids = takes_segment_ids(preproc.config)  # ktrain's own check is always False
    classifier = TFAutoModelForSequenceClassification.from_pretrained(path)
    # ktrain's predictor reads the loss to tell single-label from multi-label models
    classifier.compile(loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True))
    return ktrain.get_predictor(classifier, preproc, batch_size=batch_size)


def score_row(name: str, predictor, texts: list, labels: list, label_names: list[str], n_single: int = 50,
              **extra) -> dict:
    """Score one predictor (ktrain's, or our int8 one) on (texts, labels) and time it: one comparison row.

    Returns accuracy, macro-F1, single-text latency p50/p95 (ms) and batch throughput (texts/s), plus ``extra``.
    """
    from ktrain_recipes.inference.evaluate import score
    from ktrain_recipes.inference.prediction import classify
    from ktrain_recipes.inference.timing import time_inference

    scores = score(list(labels), classify(predictor, texts), label_names)
    timing = time_inference(lambda t: classify(predictor, t), texts, n_single=n_single)
    return {"name": name, "accuracy": scores["accuracy"], "macro_f1": scores["macro_f1"], "n": scores["n"],
            "latency_p50_ms": timing["latency_p50_ms"], "latency_p95_ms": timing["latency_p95_ms"],
            "throughput_per_s": timing["throughput_per_s"], **extra}


def compare_finetuned(models: dict, dataset, split: str = "test", limit: int | None = None, seed: int = 42,
                      cards: dict[str, float] | None = None, maxlen: int = 128):
    """Score each of ``models`` on ``dataset``'s ``split``: one table, best first.

    ``models`` maps a row name to a fine-tuned transformers folder or hub id (wrapped with ``wrap_finetuned``)
    or to a loaded predictor (``kr.open_predictor(folder)``, ``kr.open_predictor(folder, int8=True)``).
    ``cards``: the accuracy each model's card reports, shown beside ours. ``limit`` scores a stratified sample.
    """
    import pandas as pd

    from ktrain_recipes.data.loading import sample

    if split not in dataset.splits:
        raise RecipesError(f"the data has no '{split}' split (it has {', '.join(dataset.splits)})")
    texts, labels = sample(dataset.texts(split), dataset.labels(split), limit, seed)
    rows = []
    for name, model in models.items():
        loaded = wrap_finetuned(model, dataset.label_names, maxlen) if isinstance(model, (str, os.PathLike)) \
            else model
        _check_fits(name, loaded, dataset.label_names, texts)
        model_params = getattr(getattr(loaded, "model", None), "count_params", None)  # the int8 one has none
        rows.append(score_row(name, loaded, texts, labels, dataset.label_names,
                              card_accuracy=(cards or {}).get(name),
                              params_m=model_params() / 1e6 if model_params else float("nan")))
    return pd.DataFrame(rows).set_index("name").sort_values("accuracy", ascending=False)


def _check_fits(name: str, model, label_names: list[str], texts: list) -> None:
    """Refuse, in one line, a loaded predictor that cannot be scored on this data: other labels, or a pair model
    on single texts (or the reverse). Its accuracy would be a meaningless 0.0."""
    from ktrain_recipes.inference.prediction import as_classifier

    classifier = as_classifier(model)
    if sorted(map(str, classifier.classes)) != sorted(map(str, label_names)):
        raise RecipesError(f"'{name}' predicts {', '.join(map(str, classifier.classes))}, but the data's labels are "
                           f"{', '.join(map(str, label_names))}: score it on its own data")
    pairs = getattr(classifier, "pairs", None)
    given = bool(texts) and isinstance(texts[0], tuple)
    if pairs is not None and pairs != given:
        raise RecipesError(f"'{name}' classifies {'sentence pairs' if pairs else 'single texts'}, but the data holds "
                           f"{'pairs' if given else 'single texts'}: score it on data of its kind")


def published_models() -> tuple[dict[str, str], dict[str, float]]:
    """The public fine-tuned emotion models (name -> hub id) and their cards' test accuracies."""
    return ({name: hub for name, (hub, _) in PUBLISHED.items()},
            {name: card for name, (_, card) in PUBLISHED.items()})
