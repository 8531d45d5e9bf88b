"""Knowledge distillation: a smaller student learns from a saved predictor (the teacher) and the labels.

The student starts from the pretrained checkpoint the teacher was fine-tuned from, keeping every other
encoder layer (DistilBERT's initialisation: layer ``2i`` becomes the student's layer ``i``) and a fresh
classification head. With ``alpha=1`` it learns from the labels alone, which shows what the teacher adds.
It trains with
ktrain's learner and ``fit_onecycle`` on the same length-bucketed batches as the recipe: ktrain's
transformer datasets accept any target array, so each example's target packs its one-hot label beside the
teacher's logits, and the student is compiled with the distillation loss::

    alpha * CE(labels, softmax(z_s)) + (1 - alpha) * T^2 * CE(softmax(z_t / T), softmax(z_s / T))
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.config import RecipeConfig, check_number, check_whole, plain_numbers
from ktrain_recipes_tools.training.students import (cut_layers, layer_count, pretrained_classifier, same_tokenizer,
                                              teacher_base)


@dataclass
class DistillSettings:
    """What distillation adds to a RecipeConfig (whose ``model`` is then ignored); checked when made."""

    teacher: str = field(metadata={"help": "a predictor folder written by train"})
    layers: int = field(default=3, metadata={
        "help": "encoder layers of the student (every other layer of the checkpoint it is cut from; a student of "
                "another tokenizer given its own layer count is used whole)"})
    student: str | None = field(default=None, metadata={
        "help": "pretrained checkpoint to cut (default: the one the teacher was fine-tuned from); one of another "
                "vocabulary (an MPNet teacher, a MiniLM student) reads the texts with its own tokenizer",
        "parse": str})
    temperature: float = field(default=7.0, metadata={
        "help": "softens the teacher's probabilities (7 won a grid of T {2, 7} x alpha {0.1, 0.5} on emotion)"})
    alpha: float = field(default=0.5, metadata={
        "help": "weight of the true labels in the loss (1: labels alone, no teacher)"})
    augment: int = field(default=0, metadata={
        "help": "add this many altered copies of each training text (masked, replaced, dropped and shuffled "
                "words; n-grams), labelled by the teacher's probabilities (0: the training texts only)"})
    logits_cache: str | None = field(default=None, metadata={
        "help": "a folder keeping the teacher's logits per text, so that other runs of the same teacher (seeds, "
                "copies) do not compute them again (default: none)", "parse": str})

    def __post_init__(self) -> None:
        plain_numbers(self)
        self.check()  # a bad setting fails where it is written, before any data or model loads

    def check(self) -> None:
        """Raise RecipesError for settings of the wrong kind or out of range."""
        if not isinstance(self.teacher, (str, os.PathLike)):
            raise RecipesError(f"--teacher must be a predictor folder (a path), got {self.teacher!r}")
        for name in ("student", "logits_cache"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (str, os.PathLike)):
                raise RecipesError(f"--{name.replace('_', '-')} must be a path or left out, got {value!r}")
        for name in ("temperature", "alpha"):
            check_number(getattr(self, name), f"--{name}", optional=False)  # True is not 1 here
        check_whole(self.layers, "--layers")
        if not (isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature)
                and self.temperature > 0):
            raise RecipesError(f"--temperature must be a finite number above 0 (1 to 10 is usual), got "
                               f"{self.temperature}")
        if not (isinstance(self.alpha, (int, float)) and 0 <= self.alpha <= 1):
            raise RecipesError(f"--alpha must be between 0 and 1, got {self.alpha}")
        check_whole(self.augment, "--augment", 0, 50)  # copies of each text
        if self.augment and self.alpha == 1:
            raise RecipesError("--augment adds texts only the teacher labels, and --alpha 1 ignores the teacher: "
                               "lower --alpha, or leave --augment out")


def distillation_loss(num_labels: int, temperature: float, alpha: float):
    """Return a Keras loss over targets ``[one-hot labels | teacher logits]`` and student logits."""
    import tensorflow as tf

    def loss(y, logits):
        hard, teacher = y[:, :num_labels], y[:, num_labels:]
        ce = tf.keras.losses.categorical_crossentropy(hard, logits, from_logits=True)
        soft = tf.nn.softmax(teacher / temperature)
        kd = tf.keras.losses.categorical_crossentropy(soft, logits / temperature, from_logits=True)
        return alpha * ce + (1 - alpha) * temperature ** 2 * kd

    return loss


def label_accuracy(num_labels: int):
    """Accuracy of the student's logits against the one-hot half of the packed targets."""
    import tensorflow as tf

    def accuracy(y, logits):
        return tf.cast(tf.equal(tf.argmax(y[:, :num_labels], 1), tf.argmax(logits, 1)), tf.float32)

    return accuracy


def teacher_logits_for(teacher, preproc, texts: list, ids: list) -> np.ndarray:
    """The teacher's logits for ``texts`` read with the teacher's own preprocessor, in the order of ``texts``:
    what a student of another tokenizer is taught, row for row."""
    from ktrain_recipes.training.batching import bucket_batches

    return teacher_logits(teacher, bucket_batches(preproc.preprocess_test(texts, ids, verbose=0)))


def teacher_logits(teacher, dataset) -> np.ndarray:
    """The teacher's logits for every example of a bucketed dataset, in its order."""
    import tensorflow as tf

    # one graph for every batch shape: calling the Keras model eagerly costs seconds per batch on a CPU
    @tf.function(input_signature=[{k: tf.TensorSpec([None, None], tf.int32) for k in dataset.keys}])
    def logits(batch):
        return teacher(batch, training=False).logits

    out = np.zeros((len(dataset.x), teacher.config.num_labels), np.float32)
    for idx, features in dataset.padded_batches(train=False):
        out[idx] = logits(features).numpy()
    return out


def logits_of(teacher_predictor, cache: str | None, texts: list, ids: list) -> np.ndarray:
    """``teacher_logits_for`` the saved teacher, through ``--logits-cache`` when one is given."""
    model, preproc = teacher_predictor.model, teacher_predictor.preproc
    if not cache:
        return teacher_logits_for(model, preproc, texts, ids)
    from ktrain_recipes_tools.training.logit_cache import cached_logits

    return cached_logits(cache, teacher_predictor.saved.manifest["save_id"], texts, model.config.num_labels,
                         lambda rows: teacher_logits_for(model, preproc, [texts[i] for i in rows],
                                                         [ids[i] for i in rows]))


def pack_targets(teacher_model, *datasets, logits: list | None = None) -> None:
    """Put the teacher's logits beside each example's one-hot label, in place: ktrain's transformer datasets take
    any target array, so ``fit_onecycle`` trains on ``[labels | teacher logits]`` unchanged. ``logits``: one array
    per dataset, computed elsewhere (``teacher_logits_for``, for a student of another tokenizer)."""
    for i, data in enumerate(datasets):
        z = logits[i] if logits is not None else teacher_logits(teacher_model, data)
        data.y = np.concatenate([data.y.astype(np.float32), z], axis=1)


def ready_for_prediction(model, preproc):
    """The trained student and a preprocessor for ``ktrain.get_predictor``: compiled with a plain loss (its
    packed-target loss means nothing to a predictor) and a copy of the preprocessor it was trained with, holding the
    student's config, because ktrain rebuilds a saved model from its preprocessor's config."""
    import tensorflow as tf

    model.compile(optimizer="adam", loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True))
    own = copy.copy(preproc)
    own.config = model.config
    return model, own


def with_copies(texts: list, ids: list, copies: int, seed: int, mask_token: str) -> tuple[list, list]:
    """The training texts and, with ``copies``, that many altered copies of each after them (``augment``); the
    copies' label ids are placeholders, which ``teacher_labels`` replaces."""
    if not copies:
        return texts, ids
    from ktrain_recipes_tools.training.augment import augment

    extra = augment(texts, copies, seed, mask_token=mask_token)
    note(f"augmented: {len(extra)} altered copies of the {len(texts)} training texts, labelled by the teacher")
    return texts + extra, ids + [ids[0]] * len(extra)


def teacher_labels(data, start: int, num_labels: int) -> None:
    """Replace the one-hot labels of rows ``start:`` of packed targets by the teacher's probabilities (softmax of
    its logits beside them), in place: the altered copies have no true label."""
    logits = data.y[start:, num_labels:]
    soft = np.exp(logits - logits.max(axis=1, keepdims=True))
    data.y[start:, :num_labels] = soft / soft.sum(axis=1, keepdims=True)


def check_request(config: RecipeConfig, settings: DistillSettings) -> None:
    """Refuse, before any work, a distillation that cannot be made: another maxlen, or a student saved over its
    teacher."""
    if config.maxlen != "auto":
        raise RecipesError(f"distill takes the teacher's maxlen; leave --maxlen out (got {config.maxlen})")
    if config.out and Path(config.out).resolve() == Path(settings.teacher).resolve():
        raise RecipesError(f"--out '{config.out}' is the teacher: the student would replace it; choose another "
                           "folder")
    if settings.logits_cache:
        from ktrain_recipes_tools.training.logit_cache import check_cache_folder

        check_cache_folder(settings.logits_cache, config.out, settings.teacher)


def compile_student(student, config: RecipeConfig, settings: DistillSettings, n: int) -> None:
    """Compile ``student`` with the distillation loss on ``n`` labels and a legacy optimizer: fit_onecycle cycles
    the optimizer's lr and beta_1, which legacy optimizers hold as variables; with weight decay, the
    AdamWeightDecay that ktrain's ``learner.set_weight_decay`` compiles with."""
    import tensorflow as tf
    from ktrain.utils import get_default_optimizer

    optimizer = get_default_optimizer(config.lr, config.weight_decay) if config.weight_decay \
        else tf.keras.optimizers.legacy.Adam(config.lr)
    student.compile(optimizer=optimizer, loss=distillation_loss(n, settings.temperature, settings.alpha),
                    metrics=[label_accuracy(n)])


def student_reader(settings: DistillSettings, teacher_predictor):
    """The student's preprocessor and whether it is its own: the teacher's, or for a student of another vocabulary
    its own tokenizer at the teacher's maxlen. Refuses, before any copy is made or model cut, a student as deep as
    what it is cut from."""
    from ktrain_recipes.models import resolve_model
    from ktrain_recipes.training.recipe import transformer_preprocessor

    t = teacher_predictor.preproc
    own = settings.student is not None and not same_tokenizer(settings.student, t.get_tokenizer())
    s = transformer_preprocessor(resolve_model(settings.student), t.maxlen, list(t.get_classes()),
                                 t.batch_size) if own else t
    most = layer_count(s.config if own else teacher_predictor.model.config)
    if settings.layers > most or (settings.layers == most and not own):
        raise RecipesError(f"--layers {settings.layers}: the student is cut from a {most}-layer model, so it takes "
                           f"fewer layers (1 to {most - 1})" + (f", or {most} to use it whole" if own else ""))
    return s, own


def distill(config: RecipeConfig, settings: DistillSettings, dataset=None) -> dict:
    """Distil a student from a saved teacher predictor on ``config``'s data; save it to ``config.out``.

    The run is ``run_recipe``'s (``start_run`` and ``train_and_save``: checkpoint, ``--resume``, staged save);
    distillation adds only the student, its targets (labels beside the teacher's logits) and its loss.
    ``config.maxlen`` must stay 'auto': the student reads texts with the teacher's maxlen, and with the teacher's
    tokenizer unless ``settings.student`` has another vocabulary (then its own tokenizer reads the same texts, and
    the teacher's logits, computed on the teacher's reading, are joined to them by text).
    Returns metrics.json's content (with ``distillation``: teacher, T, alpha, layer map).
    """
    import ktrain

    from ktrain_recipes.training.batching import bucket_batches
    from ktrain_recipes.predictor.loading import load_checked_predictor
    from ktrain_recipes.training.recipe import run_identity, start_run, train_and_save
    from ktrain_recipes.training.train import set_seed

    check_request(config, settings)
    run = start_run(config, dataset)
    config, ds = run.config, run.data
    teacher_predictor = load_checked_predictor(settings.teacher)
    teacher_model = teacher_base(teacher_predictor.saved)
    if list(ds.label_names) != list(teacher_predictor.get_classes()):
        raise RecipesError(f"the data's labels ({', '.join(ds.label_names)}) differ from the teacher's "
                           f"({', '.join(teacher_predictor.get_classes())}): distil on the teacher's data")
    s, own = student_reader(settings, teacher_predictor)
    set_seed(config.seed)
    texts, ids = with_copies(list(run.train[0]), list(ds.label_ids(run.train[1])), settings.augment, config.seed,
                             s.get_tokenizer().mask_token or "[MASK]")
    val_ids = list(ds.label_ids(run.val[1]))
    trn = bucket_batches(s.preprocess_train(texts, ids, verbose=0), config.seed)
    val_data = bucket_batches(s.preprocess_test(run.val[0], val_ids, verbose=0), config.seed)
    n = len(ds.label_names)
    from ktrain_recipes.training.precision import float32_head, set_policy

    set_policy(config.precision)  # before the student is built: the precision recorded is the precision used
    try:
        student, mapping = cut_layers(pretrained_classifier(settings.student or teacher_model, n), settings.layers,
                                      whole=own)
    finally:
        set_policy("float32")  # the teacher and what this process loads later compute in float32
    if config.precision != "float32":
        float32_head(student)
    if settings.alpha == 1:  # the labels alone: the loss never reads the teacher's logits, so none are computed
        logits = [np.zeros((len(d.x), n), np.float32) for d in (trn, val_data)]
    elif own or settings.logits_cache:  # the teacher's logits on the teacher's reading of the same texts, row for row
        logits = [logits_of(teacher_predictor, settings.logits_cache, list(x), y)
                  for x, y in ((texts, ids), (run.val[0], val_ids))]
    else:  # a student of the teacher's vocabulary, no cache: pack_targets runs the teacher on the student's batches
        logits = None
    pack_targets(teacher_predictor.model, trn, val_data, logits=logits)
    originals = len(run.train[0])
    if settings.augment:
        run.train = (texts, list(run.train[1]) + [run.train[1][0]] * (len(texts) - originals))  # n_train counts all
        teacher_labels(trn, originals, n)
    compile_student(student, config, settings, n)
    learner = ktrain.get_learner(student, train_data=trn, val_data=val_data, batch_size=config.batch_size)

    # absolute paths: distilling from this student later, from another folder, finds its teacher
    teacher = str(Path(settings.teacher).resolve())
    about = {**dataclasses.asdict(settings), "teacher": teacher, "layer_map": mapping}
    identity = {"teacher": teacher, "teacher_save": teacher_predictor.saved.manifest["save_id"],
                "layers": settings.layers, "student": settings.student, "temperature": settings.temperature,
                "alpha": settings.alpha, "augment": settings.augment, **run_identity(run)}
    run.config = dataclasses.replace(config, model=settings.student or teacher)  # what metrics.json records
    return train_and_save(run, learner, s, identity, finish=ready_for_prediction, distillation=about)
