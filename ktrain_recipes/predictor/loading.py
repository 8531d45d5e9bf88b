"""Load a saved predictor safely: without running code from its folder, and whole while another process saves.

ktrain's ``load_predictor`` unpickles ``tf_model.preproc``. A pickle runs code when it is read, and the
manifest's hashes guard against damage, not against whoever made the folder. So our loaders rebuild the
preprocessor from files that hold no code (``config.json``, the weights, the tokenizer files, and the label
names and maxlen from ``manifest.json``); the pickle is read only when a caller asks for it by name
(``unpickle_preproc=True``, the CLI's ``--unpickle-preproc``), for a folder they trust.

Saves replace a folder with two renames (``swaps.swap_into_place``), so a reader racing a writer could see
the folder missing, or read some files of one save and some of the next. ``load_consistent`` pins the folder and
reads it once (``saved.read_predictor``), loads every file from that pinned folder (``SavedPredictor.source``), then
checks that the folder still holds the same save; if a save happened meanwhile it loads again. A load gives one
whole predictor or a one-line error.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, TypeVar

from ktrain_recipes.batch_policy import KTRAIN_BATCH
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.predictor.saved import (FolderPin, SavedPredictor, SwappedWhileOpened, label_sets_of,
                                            manifest_stamp, read_predictor, temperature_of)
from ktrain_recipes.predictor.swaps import recover, swap_in_progress
from ktrain_recipes.segments import recorded_segment_ids

T = TypeVar("T")
PREPROC_PICKLE = "tf_model.preproc"


def load_consistent(folder: str | os.PathLike, load: Callable[[SavedPredictor], T], strict: bool = False,
                    timeout: float = 30.0) -> T:
    """Call ``load(saved)`` on the folder read once (``saved.read_predictor``), so that everything it loaded
    came from that one save of ``folder``.

    After ``load`` the folder is asked only whether it still holds the same save (a ``stat`` of its manifest, no
    read): if another save replaced it meanwhile, or the folder is between the two renames of a save, the load is
    retried (for up to ``timeout`` seconds). An error that is not caused by a save is raised as is.
    """
    folder = Path(folder)
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        recover(folder)  # a killed save's folder put back first, so that the folder itself is pinned
        pin = FolderPin.of(folder)  # held through the load: what was read and what is there now can be told apart
        before = manifest_stamp(folder)
        saved = None
        try:
            saved = read_predictor(folder, strict, pin)
            result = load(saved)
            if saved.is_current():
                return result
            error: Exception = RecipesError(f"'{folder}' was replaced by another save while it was loading")
        except Exception as exc:  # noqa: BLE001  (a half-swapped folder can make any loader fail)
            if not isinstance(exc, SwappedWhileOpened) and not _changing(folder, pin, saved.stamp if saved else before):
                if isinstance(exc, RecipesError):
                    raise
                raise RecipesError(f"cannot load '{folder}' ({type(exc).__name__}: "
                                   f"{str(exc).splitlines()[0][:160] if str(exc) else ''}): re-run train") from None
            error = exc
        if time.monotonic() > deadline:
            raise RecipesError(f"'{folder}' kept changing while loading ({error}): stop the process saving "
                               "into it, or load a copy") from None
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


def _changing(folder: Path, pin: FolderPin | None, before: tuple | None) -> bool:
    """True when a save is replacing ``folder`` now, or replaced it since it was pinned (``pin``: another folder
    is there now) or since ``before`` (its manifest's stamp)."""
    # with no pin, no folder was there to pin: one there now came with a save. Asked before and after the
    # sibling check: between two saves the folder is missing only while the old one is aside, so a racing
    # saver cannot hide from all three looks unless it completes a whole swap between each of them
    moved = not pin.is_at(folder) if pin else folder.is_dir()
    if moved or swap_in_progress(folder) or (pin is None and folder.is_dir()):
        return True
    now = manifest_stamp(folder)
    return now is not None and now != before


def is_ranker(manifest: dict) -> bool:
    """True for an ETHICS utilitarianism ranker: one score per text, not a classifier."""
    return manifest.get("kind") == "ranker" or manifest.get("label_names") == ["score"]


def refuse_ranker(saved: SavedPredictor) -> None:
    """Raise a one-line error for a ranker folder where a classifier is needed (it says how to use a ranker)."""
    if is_ranker(saved.manifest):
        raise RecipesError(f"'{saved.folder}' is an ETHICS utilitarianism ranker (one pleasantness score per text), "
                           "not a classifier: load it with transformers' "
                           "TFAutoModelForSequenceClassification.from_pretrained and compare the scores of two texts")


MAX_LAYERS = 96  # more than any BERT-family checkpoint has; a config declaring more is damaged or hostile


def check_model_files(saved: SavedPredictor) -> None:
    """Refuse a folder whose files disagree about the model's shape, before any weight loads: config.json's
    layer count against the layers stored in tf_model.h5, the manifest's maxlen against the position
    embeddings, and the tokenizer's largest id against the vocabulary. (Loaders would otherwise build missing
    layers at random, or fail on the texts that reach a position or an id the model does not have.)"""
    import json
    import re

    folder, source = saved.folder, saved.source
    try:
        config = json.loads((source / "config.json").read_text())
    except (OSError, ValueError):
        raise RecipesError(f"'{folder}/config.json' is missing or not JSON: re-run train") from None
    layers = config.get("num_hidden_layers", config.get("n_layers"))
    if not isinstance(layers, int) or isinstance(layers, bool) or not 1 <= layers <= MAX_LAYERS:
        raise RecipesError(f"'{folder}/config.json' declares {layers!r} layers (1 to {MAX_LAYERS} expected): "
                           "re-run train")
    weights = source / "tf_model.h5"
    if weights.is_file():
        import h5py

        names: list[str] = []
        with h5py.File(weights, "r") as f:
            f.visit(names.append)
        stored = {int(i) for name in names for i in re.findall(r"layer_\._(\d+)$", name)}
        if stored and stored != set(range(layers)):  # ALBERT shares one layer: nothing to count
            raise RecipesError(f"'{folder}/config.json' declares {layers} layers but tf_model.h5 holds "
                               f"{len(stored)}: the folder was edited; re-run train")
    positions, maxlen = config.get("max_position_embeddings"), saved.manifest.get("maxlen")
    if isinstance(positions, int) and isinstance(maxlen, int) and maxlen > positions:
        raise RecipesError(f"'{folder}': the manifest's maxlen {maxlen} is past the model's {positions} positions: "
                           "re-run train")
    vocab = config.get("vocab_size")
    largest = _largest_token_id(source)
    if isinstance(vocab, int) and largest is not None and largest >= vocab:
        raise RecipesError(f"'{folder}': the tokenizer gives ids up to {largest}, past the model's vocabulary of "
                           f"{vocab}: the tokenizer files do not belong to this model; re-run train")


def _largest_token_id(folder: Path) -> int | None:
    """The largest id the folder's fast tokenizer (tokenizer.json) can give, or None without one."""
    import json

    try:
        spec = json.loads((folder / "tokenizer.json").read_text())
    except (OSError, ValueError):
        return None
    vocab = (spec.get("model") or {}).get("vocab")
    ids = list(vocab.values()) if isinstance(vocab, dict) else list(range(len(vocab))) if isinstance(vocab, list) \
        else []
    ids += [t.get("id") for t in spec.get("added_tokens") or [] if isinstance(t, dict)]
    ids = [i for i in ids if isinstance(i, int)]
    return max(ids) if ids else None


def load_checked_predictor(folder: str | os.PathLike, batch_size: int = KTRAIN_BATCH, strict: bool = False,
                           unpickle_preproc: bool = False):
    """Load a saved predictor as a ktrain ``TextPredictor``, checked against its manifest, without its pickle.

    Args:
      folder: a predictor folder written by ``run_recipe`` (``train``), ``distill`` or ``ethics``.
      batch_size: the predictor's batch size.
      strict: refuse a predictor saved under other minor versions of TensorFlow/transformers/ktrain.
      unpickle_preproc: read ktrain's ``tf_model.preproc`` pickle with ``ktrain.load_predictor`` instead of
        rebuilding the preprocessor. A pickle runs code when read: only for folders you trust.
    """
    def load(saved: SavedPredictor):
        predictor = predictor_from(saved, batch_size, unpickle_preproc)
        predictor.saved = saved  # what was loaded: its manifest, metrics and identity, without reading them again
        return predictor

    return load_consistent(folder, load, strict)


def predictor_from(saved: SavedPredictor, batch_size: int = KTRAIN_BATCH, unpickle_preproc: bool = False):
    """The ktrain predictor of a save read once (inside ``load_consistent``, whose caller may load more from the
    same save without reading the folder again)."""
    refuse_ranker(saved)
    check_model_files(saved)
    predictor = (_load_with_pickle(saved, batch_size) if unpickle_preproc
                 else _rebuild_predictor(saved, batch_size))
    predictor.pairs = saved.pairs  # True, False, or None when the save did not record it
    predictor.multilabel, predictor.thresholds = label_sets_of(saved)
    predictor.temperature = temperature_of(saved)  # applied by classify (KtrainClassifier), not by ktrain's predict
    return predictor


def _load_with_pickle(saved: SavedPredictor, batch_size: int):
    import ktrain

    folder, source = saved.folder, saved.source
    if not (source / PREPROC_PICKLE).is_file():
        raise RecipesError(f"'{folder}' has no {PREPROC_PICKLE} to unpickle: load it without --unpickle-preproc")
    predictor = ktrain.load_predictor(str(source), batch_size=batch_size)
    predictor.preproc.model_name = str(source)  # tokenizer files live beside the weights: read from this save now
    predictor.preproc.get_tokenizer()
    predictor.preproc.model_name = str(folder)  # and named by the folder, not by the pinned path
    return predictor


def _rebuild_predictor(saved: SavedPredictor, batch_size: int):
    """A ktrain TextPredictor from config.json, tf_model.h5, the tokenizer files and the manifest: no pickle."""
    import ktrain
    import tensorflow as tf
    from ktrain import utils as U
    from ktrain.text.preprocessor import Transformer
    from transformers import AutoConfig, AutoTokenizer, TFAutoModelForSequenceClassification

    from ktrain_recipes.model_safety import check_model_folder

    folder, source, manifest = saved.folder, saved.source, saved.manifest
    check_model_folder(source, shown_as=folder)  # CVE-2026-4372: before transformers reads the configuration
    config = AutoConfig.from_pretrained(source, local_files_only=True)
    model = TFAutoModelForSequenceClassification.from_pretrained(source, local_files_only=True)
    config._name_or_path = model.config._name_or_path = str(folder)  # not the pinned path (a later save writes it)
    names = list(manifest["label_names"])
    if model.config.num_labels != len(names):
        raise RecipesError(f"'{folder}': the model has {model.config.num_labels} outputs but the manifest names "
                           f"{len(names)} labels: re-run train")
    preproc = Transformer.__new__(Transformer)  # __init__ would load the model once more to read its signature
    preproc.__dict__.update(
        maxlen=int(manifest["maxlen"]), c=names, lang="en", multilabel=manifest.get("multilabel") is True,
        preprocess_train_called=True,
        model_name=str(folder), name=config.model_type, config=config,
        model_type=TFAutoModelForSequenceClassification, tokenizer_type=AutoTokenizer,
        use_token_type_ids=recorded_segment_ids(manifest),  # as trained (segments.py)
        tok=None, tok_dct=None, max_features=10000, ngram_range=1, batch_size=batch_size, use_with_learner=True,
        ytransform=U.YTransform(class_names=names),
    )
    preproc.ytransform.train_called = True
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    tokenizer.name_or_path = str(folder)
    preproc.set_tokenizer(tokenizer)
    # ktrain's predictor reads model.loss; ktrain compiles with one optimizer shared by the whole process
    # (utils.DEFAULT_OPT), which a tf.distribute strategy scope then claims: a fresh one here keeps a load
    # after distributed training in the same process working
    # the loss is also how ktrain's predictor tells several labels per text (a sigmoid each) from one (softmax)
    loss = tf.keras.losses.BinaryCrossentropy(from_logits=True) if preproc.multilabel else \
        tf.keras.losses.CategoricalCrossentropy(from_logits=True)
    model.compile(loss=loss, optimizer=tf.keras.optimizers.Adam(), metrics=["accuracy"])
    return ktrain.get_predictor(model, preproc, batch_size=batch_size)
