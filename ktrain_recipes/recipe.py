"""The fine-tuning recipe, step by step: build, lr_find, fit_onecycle, evaluate, time, save."""

from __future__ import annotations

import math
import os
import random
import shutil
import time
from pathlib import Path

import numpy as np

from . import compat  # noqa: F401
from .data import EmotionData, load_emotion, sample
from .errors import RecipesError
from .evaluate import evaluate_predictor, format_report
from .models import get_spec, resolve_model
from .plots import plot_confusion_matrix, plot_lr_find, save_figure
from .tiny import smoke_mode
from .predictor import (
    check_out_dir,
    package_versions,
    predict,
    save_predictor,
    stage_dir,
    time_inference,
    token_lengths,
)

MAXLEN_QUANTILE = 99.9  # cover all but 1 text in 1000; the rest are truncated
# MiniLM on emotion (docs/results.md): 100 updates of 32 texts reached 0.69 validation accuracy, 500 reached 0.91
FEW_STEPS = 500


def set_seed(seed: int) -> None:
    """Seed Python, numpy and TensorFlow and make TF ops deterministic (same CPU, same numbers)."""
    import tensorflow as tf

    random.seed(seed)
    np.random.seed(seed)
    tf.keras.utils.set_random_seed(seed)
    tf.config.experimental.enable_op_determinism()


def choose_maxlen(lengths: list[int], cap: int = 512, quantile: float = MAXLEN_QUANTILE) -> int:
    """Pick maxlen from the data: the quantile of token lengths, rounded up to a multiple of 8, capped."""
    if not lengths:
        raise RecipesError("cannot choose maxlen from no texts")
    return int(min(cap, max(8, math.ceil(np.percentile(lengths, quantile) / 8) * 8)))


def load_tokenizer(model_path: str):
    """Load the tokenizer of a resolved model (directory or hub id)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path)


def resolve_maxlen(maxlen: int | str, tokenizer, texts: list[str], verbose: bool = True) -> int:
    """Return maxlen as an int: ``'auto'`` picks it from the training texts' token lengths,
    ``'max'`` is the model's limit (512 for BERT: what the original tutorial used)."""
    cap = min(512, getattr(tokenizer, "model_max_length", 512) or 512)
    lengths = token_lengths(tokenizer, texts)
    if maxlen == "auto":
        maxlen = choose_maxlen(lengths, cap)
    elif maxlen == "max":
        maxlen = cap
    elif not isinstance(maxlen, int) or not 8 <= maxlen <= cap:
        raise RecipesError(f"maxlen must be 'auto', 'max' or an integer from 8 to {cap}, got {maxlen!r}")
    if verbose:
        over = sum(n > maxlen for n in lengths)
        print(f"maxlen {maxlen}: {over} of {len(lengths)} training texts are longer and get truncated "
              f"(mean {np.mean(lengths):.1f}, max {max(lengths)} tokens)")
    return maxlen


def build_transformer(model_path: str, maxlen: int, label_names: list[str], batch_size: int = 32):
    """Create ktrain's ``text.Transformer`` preprocessor for a resolved model."""
    from ktrain import text

    return text.Transformer(model_path, maxlen=maxlen, class_names=list(label_names), batch_size=batch_size)


def get_learner(transformer, train: tuple[list, list], val: tuple[list, list], batch_size: int = 32,
                bucketing: bool = True, seed: int = 42):
    """Preprocess train/validation texts and return a ktrain learner around a fresh classifier.

    Args:
      transformer: from ``build_transformer``.
      train, val: (texts, label names) pairs.
      batch_size: training batch size.
      bucketing: batch texts of similar length, padded per batch (see ``batching``); False pads
        every text to maxlen, as the original tutorial does.
      seed: seeds the per-epoch shuffling of the buckets.
    """
    import ktrain

    names = transformer.get_classes()
    ids = [[names.index(y) for y in labels] for labels in (train[1], val[1])]
    trn = transformer.preprocess_train(list(train[0]), ids[0], verbose=0)
    vdata = transformer.preprocess_test(list(val[0]), ids[1], verbose=0)
    if bucketing:
        from .batching import bucket_batches

        trn, vdata = bucket_batches(trn, seed), bucket_batches(vdata, seed)
    model = transformer.get_classifier()
    return ktrain.get_learner(model, train_data=trn, val_data=vdata, batch_size=batch_size)


def find_lr(learner, lr_mult: float = 1.03) -> dict:
    """Run ktrain's LR finder (weights are restored afterwards) and return lrs, losses and a suggestion.

    The rate grows by ``lr_mult`` per batch until the loss diverges (about 500 batches from 1e-7;
    ktrain sweeps 5 epochs instead on small data). The suggestion is the rate at the minimum loss
    divided by 10, ktrain's classic rule of thumb, ignoring the noisy first 10 and last 5 batches.
    """
    learner.lr_find(lr_mult=lr_mult, verbose=0)
    finder = learner.lr_finder
    lrs, losses = list(map(float, finder.lrs)), list(map(float, finder.losses))
    lo, hi = (10, len(losses) - 5) if len(losses) > 30 else (0, len(losses))
    best = lo + int(np.argmin(losses[lo:hi]))
    return {"lrs": lrs, "losses": losses, "suggested_lr": lrs[best] / 10}


def fit(learner, lr: float, epochs: int, checkpoint: str | os.PathLike | None = None,
        callbacks: list | None = None) -> dict:
    """Train with the one-cycle policy; return the per-epoch history, training seconds and whether interrupted.

    Args:
      learner: from ``get_learner``.  lr: peak learning rate.  epochs: epochs to train.
      checkpoint: a ``.h5`` file that keeps the weights of the best epoch so far (lowest validation loss).
        Then Ctrl-C (KeyboardInterrupt) stops training and restores those weights instead of losing the run.
      callbacks: extra Keras callbacks.
    """
    import tensorflow as tf

    note = few_steps_note(learner.train_data.nsamples(), learner.batch_size, epochs)
    if note:
        print(note)
    timer = _epoch_timer()
    callbacks = list(callbacks or []) + [timer]
    if checkpoint:
        callbacks.append(tf.keras.callbacks.ModelCheckpoint(
            str(checkpoint), monitor="val_loss", save_best_only=True, save_weights_only=True))
    start, interrupted = time.perf_counter(), False
    try:
        learner.fit_onecycle(lr, epochs, callbacks=callbacks)
    except tf.errors.ResourceExhaustedError:
        size = learner.batch_size
        raise RecipesError(f"out of memory at batch size {size}: try --batch-size {max(1, size // 2)} "
                           "(or a smaller --maxlen)") from None
    except KeyboardInterrupt:
        if not (checkpoint and Path(checkpoint).exists()):
            raise  # no epoch finished: nothing worth keeping
        learner.model.load_weights(str(checkpoint))
        interrupted = True
        print(f"\ninterrupted: restored the best epoch so far (kept in {checkpoint})")
    seconds = time.perf_counter() - start
    history = {k: [float(v) for v in vals] for k, vals in learner.model.history.history.items()}
    return {"history": history, "seconds": seconds, "epoch_seconds": timer.seconds, "interrupted": interrupted}


def optimizer_steps(n_train: int, batch_size: int, epochs: int) -> int:
    """Return how many weight updates training makes: batches per epoch times epochs."""
    return math.ceil(n_train / batch_size) * epochs


def few_steps_note(n_train: int, batch_size: int, epochs: int) -> str | None:
    """Return a one-line note when training makes too few weight updates to learn the task, else None.

    Large batches on a small sample under-train silently: on 1,600 emotion texts for 2 epochs, MiniLM
    reached 0.69 at batch 32 (100 updates), 0.74 at 16 (200), 0.77 at 8 (400) and 0.81 at 6 (534).
    """
    steps = optimizer_steps(n_train, batch_size, epochs)
    if epochs < 1 or steps >= FEW_STEPS:
        return None
    return (f"note: only {steps} optimizer steps ({n_train} texts / batch {batch_size} x {epochs} epochs); "
            f"fine-tuning usually needs {FEW_STEPS}+ to get close to its best accuracy: train more epochs, "
            "on more texts, or with a smaller --batch-size")


def _epoch_timer():
    """A Keras callback recording each epoch's training seconds, without its validation pass."""
    import tensorflow as tf

    class EpochTimer(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seconds: list[float] = []

        def on_epoch_begin(self, epoch, logs=None):
            self._start, self._stop = time.perf_counter(), None

        def on_test_begin(self, logs=None):
            self._stop = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.seconds.append((self._stop or time.perf_counter()) - self._start)

    return EpochTimer()


def steady_examples_per_s(n_train: int, epoch_seconds: list[float]) -> float | None:
    """Training examples/s after warm-up: epochs 2+ (the first also traces the graph for each batch shape),
    validation passes excluded."""
    steady = epoch_seconds[1:] or epoch_seconds
    return n_train * len(steady) / sum(steady) if steady else None


def get_predictor(learner, transformer, batch_size: int = 32):
    """Wrap the trained model and its preprocessor into a ktrain predictor."""
    import ktrain

    return ktrain.get_predictor(learner.model, transformer, batch_size=batch_size)


def record_run(metrics: dict, *, model: str, trained: dict, timing: dict, learner, **settings) -> dict:
    """Add what a run used and measured to its metrics (this is what metrics.json holds).

    Args:
      metrics: from ``evaluate_predictor``.  model: the name asked for.  trained: from ``fit``.
      timing: from ``time_inference``.  learner: the trained learner.  settings: maxlen, lr, ... as used.
    """
    epochs_done = len(trained.get("epoch_seconds", []))
    metrics.update(
        model=model, model_id=get_spec(model).model_id or Path(model).name,
        smoke=smoke_mode() or "tiny-" in str(model), **settings,
        interrupted=trained.get("interrupted", False), epochs_completed=epochs_done, train_seconds=trained["seconds"],
        train_examples_per_s=steady_examples_per_s(settings.get("n_train", 0), trained.get("epoch_seconds", [])),
        optimizer_steps=optimizer_steps(learner.train_data.nsamples(), learner.batch_size, epochs_done),
        history=trained["history"], inference=timing, inference_ms_per_text=timing["ms_per_text"],
        latency_p50_ms=timing["latency_p50_ms"], throughput_per_s=timing["throughput_per_s"],
        params=int(learner.model.count_params()), versions=package_versions(),
    )
    return metrics


def run_recipe(
    model: str = "minilm",
    data: str | None = None,
    out: str | os.PathLike = "runs/minilm",
    maxlen: int | str = "auto",
    batch_size: int | None = None,
    lr: float | None = None,
    epochs: int | None = None,
    limit: int | None = None,
    eval_limit: int | None = None,
    seed: int = 42,
    lr_find: bool = False,
    overwrite: bool = False,
    bucketing: bool = True,
    resume: bool = False,
    dataset: EmotionData | None = None,
) -> dict:
    """Run the whole recipe and save the predictor to ``out``; return its metrics.json content.

    Args:
      model: registry name, hub id or local folder.  data: local data folder (None: $EMOTION_DATA or hub).
      out: predictor folder to create.  maxlen: int or 'auto'.  batch_size, lr, epochs: None = model default.
      limit: train on a stratified sample of this many texts.  eval_limit: same for validation.
      seed: random seed.  lr_find: run the LR finder first and save its plot.
      overwrite: replace an existing ``out``.  bucketing: length-bucketed batches (see ``get_learner``).
      resume: start from the checkpoint an interrupted or killed run left (``.<out>.checkpoint.h5``) and
        train ``epochs`` more; ``epochs=0`` just saves the checkpoint as a predictor.
      dataset: already-loaded data (skips loading).
    """
    out = check_out_dir(out, overwrite or resume)  # before any expensive work
    spec = get_spec(model)
    batch_size, lr = batch_size or spec.batch_size, lr or spec.lr
    epochs = spec.epochs if epochs is None else epochs
    checkpoint = out.parent / f".{out.name}.checkpoint.h5"
    if resume and not checkpoint.exists():
        raise RecipesError(f"nothing to resume: no checkpoint {checkpoint} (it exists after an interrupted run)")
    model_path = resolve_model(model)
    ds = dataset or load_emotion(data)
    train = sample(ds.texts("train"), ds.labels("train"), limit, seed)
    val = sample(ds.texts("validation"), ds.labels("validation"), eval_limit, seed)
    set_seed(seed)
    maxlen = resolve_maxlen(maxlen, load_tokenizer(model_path), train[0])
    transformer = build_transformer(model_path, maxlen, ds.label_names, batch_size)
    learner = get_learner(transformer, train, val, batch_size, bucketing, seed)
    if resume:
        learner.model.load_weights(str(checkpoint))
    stage = stage_dir(out)
    try:
        lr_info = _maybe_find_lr(learner, lr_find, stage)
        trained = fit(learner, lr, epochs, checkpoint) if epochs else {"history": {}, "seconds": 0.0}
        predictor = get_predictor(learner, transformer, batch_size)
        metrics = evaluate_predictor(lambda t: predict(predictor, t), val[0], val[1], ds.label_names)
        print(format_report(metrics))
        timing = time_inference(lambda t: predict(predictor, t), val[0])
        record_run(metrics, model=model, maxlen=maxlen, batch_size=batch_size, lr=lr, epochs=epochs, seed=seed,
                   trained=trained, timing=timing, learner=learner, n_train=len(train[0]), data=ds.source,
                   limit=limit, bucketing=bucketing, **lr_info)
        save_figure(plot_confusion_matrix(metrics), stage / "confusion_matrix.png")
        save_predictor(predictor, out, metrics, stage=stage, overwrite=overwrite or resume)
        if not trained.get("interrupted"):
            checkpoint.unlink(missing_ok=True)  # kept after Ctrl-C, for --resume
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)  # never leave a half-written staging folder
        raise
    print(f"predictor saved to {out}")
    return metrics


def _maybe_find_lr(learner, enabled: bool, stage: Path) -> dict:
    if not enabled:
        return {}
    found = find_lr(learner)
    save_figure(plot_lr_find(found["lrs"], found["losses"], found["suggested_lr"]), stage / "lr_find.png")
    print(f"lr_find suggests lr {found['suggested_lr']:.1e} (plot: lr_find.png)")
    return {"suggested_lr": found["suggested_lr"]}
