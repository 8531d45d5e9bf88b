"""What a run measures and keeps: its scores after each epoch, ktrain's LR finder's plot and suggestion, the
validation report and inference timing, and the record that becomes metrics.json."""

from __future__ import annotations

from pathlib import Path

from ktrain_recipes.config import RecipeConfig
from ktrain_recipes.errors import note
from ktrain_recipes.inference.evaluate import format_report, score
from ktrain_recipes.inference.prediction import classify
from ktrain_recipes.inference.timing import time_inference
from ktrain_recipes.versions import cpu_features, cpu_model
from ktrain_recipes.models import get_spec
from ktrain_recipes.plots import save_figure
from ktrain_recipes.training.train import optimizer_steps, steady_examples_per_s
from ktrain_recipes.versions import package_versions


def epoch_scores_class():
    import tensorflow as tf

    class EpochScores(tf.keras.callbacks.Callback):
        """After each epoch: wrap the model in a ktrain predictor, score it with ``score``, print and keep it."""

        def __init__(self, score, preproc, batch_size: int, record: dict):
            super().__init__()
            self.score, self.preproc, self.batch_size = score, preproc, batch_size
            self.scores = record.setdefault("per_epoch", [])  # the run's record keeps them for --resume

        def on_epoch_end(self, epoch, logs=None):
            import ktrain

            found = self.score(ktrain.get_predictor(self.model, self.preproc, batch_size=self.batch_size))
            self.scores.append({"epoch": epoch + 1, **found})
            print(f"epoch {epoch + 1}: " + ", ".join(f"{k} {v:.4f}" for k, v in found.items()))

    return EpochScores


def epoch_scores(score, preproc, batch_size: int, record: dict):
    """The callback that scores the model after each epoch (its class is built once TensorFlow is loaded)."""
    return epoch_scores_class()(score, preproc, batch_size, record)


def lr_find(learner, stage: Path) -> dict:
    """ktrain's LR finder (weights restored afterwards); its plot with ktrain's suggestion goes to lr_find.png."""
    learner.lr_find(lr_mult=1.03, verbose=1, show_plot=False)  # x1.03 per batch: about 600 batches to diverge
    fig = learner.lr_plot(suggest=True, return_fig=True)
    save_figure(fig, stage / "lr_find.png")
    suggested = suggested_lr(learner)
    if suggested:
        note(f"lr_find suggests lr {suggested:.1e} (plot: lr_find.png)")
    return {"suggested_lr": suggested}


def suggested_lr(learner) -> float | None:
    """ktrain's "min loss divided by 10" estimate, the classic rule of thumb (``learner.lr_estimate()``)."""
    try:
        return float(learner.lr_estimate()[1])
    except (AttributeError, TypeError, IndexError, ValueError):
        return None


def measure(predictor, val: tuple[list, list], label_names: list[str], test: tuple[list, list] | None = None) -> dict:
    """Score the predictor on the validation texts, print the report, and time its inference.

    ``test``: the data's test split, scored once here, after training (the model was chosen on validation; nothing
    else reads it), as ``metrics["test"]``: accuracy, macro-F1 and its size.
    """
    if getattr(predictor, "multilabel", False):
        return measure_label_sets(predictor, val, label_names, test)
    metrics = score(val[1], classify(predictor, val[0]), label_names)
    print(format_report(metrics))
    metrics["inference"] = time_inference(lambda t: classify(predictor, t), val[0])
    if test is not None and test[0] and not set(test[1]) - set(label_names):  # a test file with other labels: skipped
        found = score(test[1], classify(predictor, test[0]), label_names)
        metrics["test"] = {"accuracy": found["accuracy"], "macro_f1": found["macro_f1"], "n": len(test[0])}
        print(f"test split ({len(test[0])} texts, scored once): accuracy {found['accuracy']:.4f}, "
              f"macro-F1 {found['macro_f1']:.4f}")
    return metrics


def record_run(metrics: dict, config: RecipeConfig, maxlen: int, trained: dict, learner, **extra) -> dict:
    """Add what a run used and measured to its metrics (this is what metrics.json holds).

    Args:
      metrics: from ``score``, with the ``inference`` timing added.  config: the run's settings.
      maxlen: the maxlen used.  trained: ``timer.trained()`` or ``fit_with_checkpoint``'s record.
      learner: the trained ktrain learner.  extra: n_train, data_source and anything else worth keeping.
    """
    timing = metrics["inference"]
    metrics.update(
        maxlen=maxlen, model_id=get_spec(config.model).model_id or Path(config.model).name,
        settings=config.settings(), **extra, interrupted=trained.get("interrupted", False),
        epochs_completed=trained["epochs_completed"], train_seconds=trained["train_seconds"],
        averaged_epochs=trained.get("averaged_epochs", 1), optimizer=type(learner.model.optimizer).__name__,
        train_examples_per_s=steady_examples_per_s(extra.get("n_train", 0), trained.get("epoch_seconds", [])),
        optimizer_steps=trained.get("optimizer_steps") or optimizer_steps(learner.train_data.nsamples(),
                                                                          learner.batch_size,
                                                                          trained["epochs_completed"]),
        history=trained["history"], inference_ms_per_text=timing["ms_per_text"],
        latency_p50_ms=timing["latency_p50_ms"], throughput_per_s=timing["throughput_per_s"],
        params=int(learner.model.count_params()), versions=package_versions(),
        cpu=cpu_model(), cpu_features=cpu_features(),
    )
    return metrics


def measure_label_sets(predictor, val: tuple[list, list], label_names: list[str],
                       test: tuple[list, list] | None = None) -> dict:
    """``measure`` for several labels per text: thresholds chosen on validation (``inference.thresholds``), the
    validation scores with them, the inference timing, and the test split scored once with the same thresholds."""
    from ktrain_recipes.data.label_sets import multi_hot
    from ktrain_recipes.inference.thresholds import choose_thresholds, format_multilabel, score_with

    probs = classify(predictor, val[0], proba=True)
    thresholds = choose_thresholds(probs, multi_hot(val[1], label_names), label_names)
    predictor.thresholds = thresholds  # classify gives the labels over them from now on
    found = score_with(probs, multi_hot(val[1], label_names), label_names, thresholds)
    print(format_multilabel(found))
    metrics = {"multilabel": True, "accuracy": found["exact_match"], **found, "label_names": list(label_names),
               "thresholds": thresholds}
    metrics["inference"] = time_inference(lambda t: classify(predictor, t), val[0])
    if test is not None and test[0] and not {n for row in test[1] for n in row} - set(label_names):
        t = score_with(classify(predictor, test[0], proba=True), multi_hot(test[1], label_names), label_names,
                       thresholds)
        metrics["test"] = {"accuracy": t["exact_match"], **t}
        print(f"test split ({len(test[0])} texts, scored once, thresholds chosen on validation): macro-F1 "
              f"{t['macro_f1']:.4f}, micro-F1 {t['micro_f1']:.4f}, exact match {t['exact_match']:.4f}")
    return metrics
