"""The student of a distillation: a pretrained checkpoint cut to fewer encoder layers (DistilBERT's
initialisation: teacher layer ``2i`` becomes the student's layer ``i``), and what it needs to know of its teacher."""

from __future__ import annotations

from ktrain_recipes.errors import RecipesError


def same_tokenizer(student: str, teacher_tokenizer) -> bool:
    """Whether the student checkpoint reads texts with the teacher's vocabulary (then it is fed the teacher's token
    ids; otherwise it reads the texts with its own tokenizer, and the teacher's logits are joined to it by text)."""
    from ktrain_recipes.data.maxlen import load_tokenizer
    from ktrain_recipes.models import resolve_model

    return load_tokenizer(resolve_model(student)).get_vocab() == teacher_tokenizer.get_vocab()


def encoder_layers(model) -> list:
    """Return the list of encoder layers of a BERT-family classification model (BERT, RoBERTa, ELECTRA,
    MiniLM: ``encoder.layer``; DistilBERT: ``transformer.layer``)."""
    main = model.layers[0]
    for path in ("encoder.layer", "transformer.layer"):
        obj = main
        for attr in path.split("."):
            obj = getattr(obj, attr, None)
        if isinstance(obj, list) and obj:
            return obj
    raise RecipesError(f"cannot find the encoder layers of a {type(model).__name__}: distil a BERT, RoBERTa, "
                       "ELECTRA, DistilBERT or MiniLM teacher (ALBERT shares one layer, so it cannot be cut)")


def layer_map(teacher_layers: int, student_layers: int) -> list[int]:
    """Which teacher layer initialises each student layer: every other one (0, 2, 4, ...)."""
    step = max(1, teacher_layers // student_layers)
    mapping = [min(i * step, teacher_layers - 1) for i in range(student_layers)]
    if student_layers >= teacher_layers:
        raise RecipesError(f"the student needs fewer layers than the teacher's {teacher_layers}, "
                           f"got --layers {student_layers}")
    return mapping


def layer_count(config) -> int:
    """The number of encoder layers a model's config declares."""
    return getattr(config, "n_layers", None) or config.num_hidden_layers


def cut_layers(model, layers: int, whole: bool = False):
    """Return a ``layers``-layer copy of a BERT-family classifier that keeps every other encoder layer
    (teacher layer ``map[i]`` becomes layer ``i``) and all other weights; also return the layer map.
    ``whole``: a ``layers`` equal to the model's own count returns the model itself, uncut."""
    from transformers import TFAutoModelForSequenceClassification

    if whole and layers == layer_count(model.config):
        return model, list(range(layers))
    config = model.config.__class__.from_dict(model.config.to_dict())
    key = "n_layers" if hasattr(config, "n_layers") else "num_hidden_layers"
    mapping = layer_map(getattr(config, key), layers)
    setattr(config, key, layers)
    student = TFAutoModelForSequenceClassification.from_config(config)
    student(student.dummy_inputs, training=False)  # create the weights
    src_layers, dst_layers = encoder_layers(model), encoder_layers(student)
    for i, j in enumerate(mapping):
        dst_layers[i].set_weights(src_layers[j].get_weights())
    copied = {id(w) for layer in dst_layers for w in layer.weights}
    by_name = {_strip(w.name): w for w in model.weights}
    for weight in student.weights:
        if id(weight) not in copied:  # embeddings, pooler, classifier: the same names in both models
            weight.assign(by_name[_strip(weight.name)])
    return student, mapping


def _strip(name: str) -> str:
    """A weight's name without its model prefix (``tf_bert_for_sequence_classification_3/``)."""
    return name.split("/", 1)[1] if "/" in name else name


def pretrained_classifier(name: str, num_labels: int):
    """The pretrained checkpoint ``name`` (registry name, hub id or folder) with a fresh classification head."""
    from transformers import TFAutoModelForSequenceClassification

    from ktrain_recipes.models import resolve_model

    return TFAutoModelForSequenceClassification.from_pretrained(resolve_model(name), num_labels=num_labels)


def teacher_base(saved) -> str:
    """The pretrained checkpoint a saved teacher predictor was fine-tuned from: its metrics.json's model, from the
    save as the folder reader checked it (``saved``: a ``SavedPredictor``), not read again by path."""
    return saved.metrics.get("settings", {}).get("model", "minilm")
