"""The whole recipe as one function: the ktrain calls of notebook 02, with the bookkeeping kept apart."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from ktrain_recipes.config import RecipeConfig
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.data.loading import LabelledTexts, load_data_for, sample
from ktrain_recipes.data.maxlen import load_tokenizer, resolve_maxlen
from ktrain_recipes.models import resolve_model
from ktrain_recipes.plots import plot_confusion_matrix, save_figure
from ktrain_recipes.segments import takes_segment_ids
from ktrain_recipes.predictor.staging import check_out_dir, check_space, staged_predictor
from ktrain_recipes.predictor.swaps import check_locks_free
from ktrain_recipes.training.precision import float32_head, set_policy
from ktrain_recipes.training.checkpoint import Checkpoint
from ktrain_recipes.training.train import (
    batch_for_updates, fit_with_checkpoint, optimizer_steps, set_seed
)
from ktrain_recipes.training.record import epoch_scores, lr_find, measure, record_run


@dataclass
class Run:
    """What every training run starts from: its settings with defaults filled, its reserved ``out``, its data
    and the sampled train and validation texts (``start_run`` makes it)."""

    config: RecipeConfig
    out: Path
    data: LabelledTexts
    train: tuple[list, list]
    val: tuple[list, list]

    @property
    def pairs(self) -> bool:
        return isinstance(self.train[0][0], tuple)


def start_run(config: RecipeConfig, dataset: LabelledTexts | None = None) -> Run:
    """The first steps of every run, before any expensive work: fill in the defaults, check ``--out``, load
    and sample the data, and check that it can train. ``dataset`` skips loading (data already in memory)."""
    from ktrain_recipes.training.precision import choose_precision

    given_batch = config.batch_size is not None
    config = config.with_defaults()
    if config.resume:
        check_resumable(config.out)
    out = check_out_dir(config.out, config.overwrite or config.resume)
    check_locks_free(out)  # another user's lock beside --out would refuse the save after the whole training
    ds = dataset or load_data_for(config)
    train = sample(ds.texts("train"), ds.labels("train"), config.limit, config.seed)
    val = sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, config.seed)
    ds.check_trainable(train[1])
    if not given_batch:  # small data: the default batch shrinks so that the run makes enough weight updates
        batch = batch_for_updates(len(train[0]), config.batch_size, config.epochs)
        if batch != config.batch_size:
            note(f"note: {len(train[0])} training texts: batch {batch} instead of the model's {config.batch_size}, so "
                 f"that {config.epochs} epochs make {optimizer_steps(len(train[0]), batch, config.epochs)} weight "
                 "updates (give a batch size to choose it yourself)")
            config = dataclasses.replace(config, batch_size=batch)
    if config.precision == "auto":  # after every check that can refuse the run: its errors come first, alone
        precision, why = choose_precision(config.precision)
        note(f"precision: {precision} ({why})")
        config = dataclasses.replace(config, precision=precision)  # the run's identity holds what it trains in
    return Run(config, out, ds, train, val)


def check_resumable(out: str | None) -> None:
    """Refuse ``--resume`` before any expensive work when there is nothing to go on with, saying why."""

    out = Path(out or "")
    if Checkpoint(out, {}).exists():
        return
    from ktrain_recipes.predictor.manifest import read_metrics

    try:
        done = read_metrics(out)  # a regular file only: a FIFO there is refused, never waited on
    except RecipesError:
        done = None
    if isinstance(done, dict) and not done.get("interrupted"):
        raise RecipesError(f"'{out}' holds a finished run ({done.get('epochs_completed')} epochs): nothing to resume; "
                           "to train it again, leave out --resume and add --overwrite")
    raise RecipesError(f"nothing to resume: no checkpoint .{out.name}.resume beside '{out}' (a run that was cut off "
                       "leaves one): train without --resume")


def run_recipe(config: RecipeConfig, dataset: LabelledTexts | None = None, per_epoch=None) -> dict:
    """Fine-tune ``config.model`` with ktrain, save the predictor to ``config.out``; return metrics.json's content.

    The steps are notebook 02's: ``text.Transformer``, ``preprocess_train``/``preprocess_test``,
    ``get_classifier``, ``ktrain.get_learner``, (``lr_find``), ``fit_onecycle``, ``ktrain.get_predictor``,
    ``save``. ``dataset`` skips loading when the data is already in memory (bench). ``per_epoch``, a function
    of a ktrain predictor returning a dict of scores, is called after every epoch; its scores are printed and
    kept in metrics.json's ``per_epoch`` (ETHICS' validation exact match).
    """
    import ktrain
    import tensorflow as tf

    from ktrain_recipes.training.distribute import is_chief, make_strategy, replicas, scope

    model_path = resolve_model(config.model)  # an unknown model fails first, before the data is read
    run = start_run(config, dataset)
    config, ds = run.config, run.data
    strategy = make_strategy(config.distribute, config.devices, config.worker_timeout_s)  # before TF's first op
    batch, chief = config.batch_size * replicas(strategy), is_chief(strategy)
    if strategy is not None:
        note(f"{config.distribute}: {replicas(strategy)} replica(s), global batch {batch} "
             f"({config.batch_size} per device)")
    set_seed(config.seed)
    maxlen = resolve_maxlen(config.maxlen, load_tokenizer(model_path), run.train[0])
    identity = checkpoint_identity(run, maxlen)  # what --resume must find again: known once maxlen is

    t = transformer_preprocessor(model_path, maxlen, ds.label_names, batch)
    if ds.multilabel:  # ktrain discovers it from the multi-hot rows too; said here so that a sample never decides
        t.multilabel = True
    trn = t.preprocess_train(run.train[0], ds.label_ids(run.train[1]), verbose=0)
    val_data = t.preprocess_test(run.val[0], ds.label_ids(run.val[1]), verbose=0)
    if config.bucketing:
        from ktrain_recipes.training.batching import bucket_batches

        trn, val_data = bucket_batches(trn, config.seed), bucket_batches(val_data, config.seed)
    set_policy(config.precision)  # before the model is built: its layers keep the policy they were built under
    try:
        with scope(strategy):  # ktrain's FAQ: build the classifier and the learner inside the strategy's scope
            model = t.get_classifier()
    finally:
        set_policy("float32")  # what this process loads later (a predictor, a teacher) computes in float32
    if config.precision != "float32":
        float32_head(model)
    with scope(strategy):
        if strategy is not None:  # ktrain compiles with one optimizer shared by the process; one of the scope's
            model.compile(optimizer=tf.keras.optimizers.legacy.Adam(), loss=model.loss, metrics=["accuracy"])
        learner = ktrain.get_learner(model, train_data=trn, val_data=val_data, batch_size=batch)
        if config.weight_decay:
            learner.set_weight_decay(config.weight_decay)  # recompiles with ktrain's AdamWeightDecay
    return train_and_save(run, learner, t, identity, chief=chief, per_epoch=per_epoch,
                          class_weight=class_weights(config, run.train[1], ds))


def transformer_preprocessor(model_path: str, maxlen: int, class_names: list[str], batch_size: int):
    """ktrain's ``text.Transformer``, told whether the model reads segment ids (``segments.takes_segment_ids``).

    ktrain's own check answers False for every model on transformers 4.57, which sends the second sentence of a
    pair as segment 0; the answer set here is what the predictor folder records.
    """
    from ktrain import text

    t = text.Transformer(model_path, maxlen=maxlen, class_names=class_names, batch_size=batch_size)
    t.use_token_type_ids = takes_segment_ids(t.config)
    return t


def train_and_save(run: Run, learner, preproc, identity: dict, chief: bool = True, **options) -> dict:
    """``_train_and_save`` holding the run's lock (``checkpoint.run_lock``) on the chief: one writer per --out."""
    from contextlib import nullcontext

    from ktrain_recipes.training.checkpoint import run_lock

    with run_lock(run.out) if chief else nullcontext():
        return _train_and_save(run, learner, preproc, identity, chief, **options)


def _train_and_save(run: Run, learner, preproc, identity: dict, chief: bool = True, per_epoch=None,
                    class_weight: dict | None = None, finish=None, **extra) -> dict:
    """The rest of every run, once its learner is built: checkpoint (or ``--resume``), (``lr_find``),
    ``fit_onecycle``, ``ktrain.get_predictor``, measure, record and save through ``staged_predictor``.

    Args:
      run: from ``start_run``.  learner: a ktrain learner on the run's data.  preproc: its ktrain preprocessor.
      identity: what a checkpoint must match for ``--resume`` (``checkpoint_identity``).
      chief: False on the workers of a multi-worker run, which train but do not save.
      per_epoch: scores the model after every epoch (see ``run_recipe``).  class_weight: per label id.
      finish: ``finish(model, preproc) -> (model, preproc)`` before the predictor is made (distill compiles
        the student for inference and gives it a preprocessor of its own).
      extra: more entries for metrics.json (distill's ``distillation``).
    """
    import ktrain

    config, out, ds = run.config, run.out, run.data
    check_space(out, learner.model.count_params())  # a disk that fills while saving crashes h5py
    multiworker = config.distribute == "multiworker"
    # with several workers only the chief keeps one, of the best epoch only (saving the state is collective)
    checkpoint = Checkpoint(out, identity, backup=not multiworker) if chief else None
    if config.resume and multiworker:
        raise RecipesError("--resume goes on with runs on one machine (--distribute none or mirrored); a "
                           "multi-worker run starts again without it")
    record = checkpoint.resume() if config.resume else \
        (checkpoint.start_fresh() if checkpoint else Checkpoint.empty_record())
    with staged_predictor(out, config.overwrite or config.resume) if chief else scratch_folder() as stage:
        found = lr_find(learner, stage.path) if config.lr_find and not config.resume else {}
        scorer = epoch_scores(per_epoch, preproc, learner.batch_size, record) if per_epoch else None
        trained = fit_with_checkpoint(learner, config.lr, config.epochs, checkpoint, record,
                                      callbacks=[scorer] if scorer else None, average_last=config.average_last,
                                      class_weight=class_weight)
        model, preproc = finish(learner.model, preproc) if finish else (learner.model, preproc)
        predictor = ktrain.get_predictor(model, preproc, batch_size=learner.batch_size)
        predictor.multilabel = ds.multilabel  # what classify and the save read (ktrain infers it from the loss)
        test = (ds.texts("test"), ds.labels("test")) if "test" in ds.splits and not trained.get("interrupted") else None
        metrics = measure(predictor, run.val, ds.label_names, test)
        record_run(metrics, config, preproc.maxlen, trained, learner, n_train=len(run.train[0]), data_source=ds.source,
                   pairs=run.pairs, **found, **extra, **({"per_epoch": trained["per_epoch"]} if scorer else {}))
        if not ds.multilabel:  # several labels per text have no confusion matrix: their per-label table is in metrics
            save_figure(plot_confusion_matrix(metrics), stage.path / "confusion_matrix.png")
        if not chief:
            note("trained; the chief (worker 0) saves the predictor")
            return metrics
        try:
            stage.commit_predictor(predictor, metrics)
        except RecipesError as exc:  # refused at the very end (another user's lock, say): the training is not lost
            if checkpoint is None or not checkpoint.exists():
                raise
            raise RecipesError(f"{exc}. The trained run is kept in its checkpoint '{checkpoint.folder}': move it "
                               f"into a folder of your own as .NAME.resume beside NAME and run the same train "
                               f"command there with --resume --out NAME to save it without training again") from None
    if not trained.get("interrupted"):
        if config.keep_checkpoint:
            note(f"checkpoint kept in {checkpoint.folder} (--keep-checkpoint)")
        else:
            checkpoint.clear()  # kept after Ctrl-C, for --resume
    note(f"predictor saved to {out}")
    return metrics


@contextmanager
def scratch_folder():
    """A worker's stand-in for ``staged_predictor``: a temporary ``path`` for its plots, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="worker-"))
    try:
        yield SimpleNamespace(path=path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def class_weights(config: RecipeConfig, labels: list[str], ds: LabelledTexts) -> dict[int, float] | None:
    """``--class-weight balanced``: n / (classes * count) per label id (scikit-learn's 'balanced'), printed."""
    if config.class_weight != "balanced":
        return None
    if ds.multilabel:
        raise RecipesError("--class-weight balanced weighs one label per text; with several labels per text, leave it "
                           "out: the thresholds chosen per label on validation are what treats rare labels fairly")
    counts = {name: labels.count(name) for name in ds.label_names}
    weights = {i: len(labels) / (len(counts) * counts[name]) for i, name in enumerate(ds.label_names)}
    note("class weights: " + ", ".join(f"{n} {weights[i]:.2f}" for i, n in enumerate(ds.label_names)))
    return weights


def run_identity(run: Run) -> dict:
    """What any run's checkpoint must match for ``--resume``: everything that changes its schedule or its history
    (training and validation texts, epochs, rate, batch, devices, seed, the epochs averaged at the end, and the
    precision it trains in: a checkpoint of a float32 run does not go on in bfloat16)."""
    import hashlib
    import json

    def texts(pair) -> str:
        digest = hashlib.sha256(json.dumps([list(pair[0]), list(pair[1])]).encode()).hexdigest()[:16]
        return f"{len(pair[0])} texts, sha256 {digest}"

    config = run.config
    return {"data": texts(run.train), "validation": texts(run.val), "epochs": config.epochs, "lr": config.lr,
            "batch_size": config.batch_size, "seed": config.seed, "weight_decay": config.weight_decay,
            "class_weight": config.class_weight, "bucketing": config.bucketing, "average_last": config.average_last,
            "distribute": config.distribute, "devices": config.devices, "precision": config.precision}


def checkpoint_identity(run: Run, maxlen: int) -> dict:
    """What a checkpoint must match for ``--resume`` to continue it: the settings that change the model."""
    return {"model": run.config.model, "labels": list(run.data.label_names), "maxlen": maxlen, **run_identity(run)}
