# %% [markdown]
# # Smaller and faster: distillation and quantization
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/09_distill_and_quantize.ipynb)
#
# DistilBERT distilled BERT during *pre-training*, with a triple loss over masked words and hidden states (notebook
# 04). This notebook does something smaller and cheaper: *task-specific* logit distillation. A 3-layer MiniLM,
# initialised from every other layer of the pretrained 6-layer one, learns emotion from the labels and from the
# softened output probabilities of the MiniLM fine-tuned in the quickstart (the teacher). The distilled student is
# trained with ktrain's own calls, one per step; a second student, on the labels alone, is trained with the one-call
# `kr.distill`, and a third on the training texts plus altered copies of them that only the teacher labels
# (transfer data). Then each model is quantized to int8 with ONNX Runtime and measured side by side.
#
# **You will learn**
#
# - to train a student by
#   [distillation](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#distillation)
#   with ktrain's own calls and a loss of your own;
# - what the teacher's
#   [logits](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#logits)
#   add over the labels alone, and what transfer data adds;
# - to quantize to
#   [int8](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#int8-and-onnx)
#   and weigh accuracy against size and
#   [latency](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#p50-and-p99-latency).
#
# **What you will see.** The outputs below are those of a real run on all of emotion; run it yourself after
# 00_quickstart, whose predictor is the teacher (without one, it trains a small teacher first). On a 2-core CPU with
# no GPU, all 16,000 training texts take about 7 minutes of training per student, and the student with 5 copies of
# each text about 33 (a few minutes each on a GPU). T=7 and alpha=0.5 were chosen on the validation texts in a grid
# of T {2, 7} x alpha {0.1, 0.5}; our full runs' figures, with two seeds, are in
# [docs/results.md: distillation with augmented transfer
# data](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#distillation-with-augmented-transfer-data).

# %% tags=["install"]
# Colab / Gradient: fetch this project and install it with the versions it was tested with (2 to 4 minutes, once per
# runtime; skipped where ktrain_recipes is installed). On Colab, pip's red "dependency conflicts" lines are expected:
# they name preinstalled packages that want newer versions, which these notebooks do not use.
import importlib.util
import os
import subprocess

if importlib.util.find_spec("ktrain_recipes") is None:
    if not os.path.isdir("ktrain-recipes"):
        subprocess.run("git clone -q --depth 1 https://github.com/ktrain-recipes/ktrain-recipes".split(), check=True)
    exec(open("ktrain-recipes/notebooks/shared/install.py").read())  # may restart the runtime: it says so

# %%
import ktrain_recipes as kr
import ktrain
import dataclasses
import functools
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
config = kr.RecipeConfig(
    model="minilm",        # the teacher to train if none is saved yet (distill itself uses the teacher's)
    data=None,             # the teacher's data; None: $EMOTION_DATA, else the hub, else (offline) a slice
    out=f"{RUNS}/student",
    epochs=3,              # as many as the teacher had
    lr=1e-4,
    batch_size=32,
    limit=None,            # None: all 16,000 training texts
    eval_limit=None,       # None: all 2,000 validation texts
    overwrite=True,
)
settings = kr.DistillSettings(
    teacher=f"{RUNS}/quickstart",  # a predictor saved by 00_quickstart.ipynb (or any `train` run)
    layers=3,                   # MiniLM has 6: keep layers 0, 2 and 4
    temperature=7.0,            # softens the teacher's probabilities, so the small ones carry information
    alpha=0.5,                  # the weight of the true labels; 1 - alpha goes to the teacher
)
COPIES = 5  # altered copies of each training text for the third student (STEP 4): 5 makes 96,000 texts

# %% [markdown]
# ## STEP 1: What distillation transfers
# A fine-tuned classifier's probabilities say more than its label: *fear 0.7, surprise 0.25* tells the student that
# this text sits near the surprise border. Dividing the logits by a temperature T > 1 makes those small probabilities
# visible. The student's loss mixes the cross-entropy with the true labels (weight `alpha`) and with the teacher's
# softened probabilities (weight `1 - alpha`, times T squared so that its gradients keep their size as T grows).

# %% [markdown]
# On Colab, `RUNS` is in your Google Drive, so the teacher 00_quickstart saved there is found here. Where there is
# none yet, train a small one first, MiniLM on 1,600 texts for 3 epochs (a few minutes on a CPU); the quickstart's,
# trained on all 16,000, is better, and the figures in the text below come from it.

# %%
from pathlib import Path

if not Path(settings.teacher).exists():
    print(f"No teacher in {settings.teacher} (00_quickstart saves one there): training a small one, a few minutes")
    kr.run_recipe(dataclasses.replace(config, out=settings.teacher, limit=config.limit or 1600, batch_size=8))

# %%
teacher = kr.load_checked_predictor(settings.teacher)
f"teacher: {teacher.model.count_params():,} parameters"

# %% [markdown]
# ## STEP 2: The distilled student, step by step
# The same data as the teacher's. The student reads texts exactly as the teacher does, so the teacher's ktrain
# preprocessor (`teacher.preproc`: its tokenizer and maxlen) tokenizes them for both; `kr.bucket_batches` serves
# batches of texts of similar length, as in the other notebooks.

# %%
ds = kr.load_data_for(config)
train = kr.sample(ds.texts("train"), ds.labels("train"), config.limit, config.seed)
val = kr.sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, config.seed)

kr.set_seed(config.seed)
t = teacher.preproc
trn = kr.bucket_batches(t.preprocess_train(train[0], ds.label_ids(train[1])), config.seed)
val_data = kr.bucket_batches(t.preprocess_test(val[0], ds.label_ids(val[1])), config.seed)

# %% [markdown]
# The student: the pretrained checkpoint the teacher was fine-tuned from, with a fresh classification head, cut to
# `settings.layers` encoder layers. `kr.cut_layers` keeps every other layer (teacher layer 2i becomes student layer
# i, DistilBERT's initialisation) and the embeddings; it returns which layers it kept.

# %%
n = len(ds.label_names)
base = settings.student or kr.teacher_base(settings.teacher)
student, layer_map = kr.cut_layers(kr.pretrained_classifier(base, n), settings.layers)
f"student: {student.count_params():,} parameters, from the teacher's layers {layer_map}"

# %% [markdown]
# The targets. ktrain's transformer datasets accept any target array, so each example's target becomes its one-hot
# label followed by the teacher's logits for it; the loss splits them again. The teacher runs once over the data.

# %%
kr.pack_targets(teacher.model, trn, val_data)
trn.y.shape  # texts x (6 labels + 6 teacher logits)

# %% [markdown]
# The loss: `alpha` x cross-entropy with the labels + `(1 - alpha)` x T² x cross-entropy with the teacher's softened
# probabilities, and the accuracy of the student's logits against the labels' half of the targets. The optimizer is
# TensorFlow's legacy Adam, which `fit_onecycle` can cycle (it moves the rate and beta_1 every batch). Then ktrain
# takes over as for any model: `get_learner`, `fit_onecycle`.

# %%
import tensorflow as tf

student.compile(optimizer=tf.keras.optimizers.legacy.Adam(config.lr),
                loss=kr.distillation_loss(n, settings.temperature, settings.alpha),
                metrics=[kr.label_accuracy(n)])
learner = ktrain.get_learner(student, train_data=trn, val_data=val_data, batch_size=config.batch_size)

# %%
timer = kr.epoch_timer()
history = learner.fit_onecycle(config.lr, config.epochs, callbacks=[timer])

# %% [markdown]
# The loss is large (tens, where a student of the labels alone ends near 0.1) and that is no sign of failure: its
# soft term is T² times the cross-entropy with the teacher's softened probabilities, which includes their entropy, a
# constant the student cannot remove (T² = 49 here). The accuracy is the one to watch.

# %%
kr.plot_history(history.history)

# %% [markdown]
# A predictor, as in every notebook: `kr.ready_for_prediction` compiles the student with a plain loss and gives it a
# copy of the teacher's preprocessor that holds the student's own config (ktrain rebuilds a saved model from it);
# then `ktrain.get_predictor`, scores, timing and the checked save.

# %%
predictor = ktrain.get_predictor(*kr.ready_for_prediction(learner.model, t), batch_size=config.batch_size)
metrics = kr.score(val[1], predictor.predict(val[0]), ds.label_names)
metrics["inference"] = kr.time_inference(predictor.predict, val[0])
kr.record_run(metrics, config, t.maxlen, timer.trained(), learner, n_train=len(train[0]), data_source=ds.source,
              distillation={**dataclasses.asdict(settings), "layer_map": layer_map})
kr.save_checked_predictor(predictor, config.out, metrics, overwrite=True)
kr.report_table(metrics)

# %% [markdown]
# ## STEP 3: A student on the labels alone, in one call
# `kr.distill` makes the calls above in one (with a checkpoint, `--resume` and the same checked save); the command
# line's `python -m ktrain_recipes distill` runs it. The long runs below save their whole training state after every
# epoch: after a Colab disconnect, run the cells above again and call the same `kr.distill(...)` with
# `dataclasses.replace(config, ..., resume=True)` to go on from the last finished epoch, mid-schedule. With
# `alpha=1` the student learns from the labels alone, and shows what the teacher adds.

# %%
alone = kr.distill(dataclasses.replace(config, out=config.out + "-labels"), dataclasses.replace(settings, alpha=1.0))

# %% [markdown]
# ## STEP 4: Transfer data the teacher labels
# With 16,000 texts, the teacher's probabilities on those same texts tell the student little it cannot learn from
# the labels. What pays in the literature is more text for the teacher to speak about. Tang et al. (2019, "Distilling
# Task-Specific Knowledge from BERT into Simple Neural Networks") make it from the training texts alone: in each
# copy of a text some words are masked, some replaced by another word of the corpus, some dropped, the order is
# shuffled within windows of three words, and sometimes only an n-gram is kept. The copies may no longer mean what
# their text meant, so they get no true label: the teacher labels each with its probabilities. `kr.augment` makes
# the copies (seeded: the same call gives the same copies):

# %%
print(train[0][0])
for altered in kr.augment([train[0][0]], 3, seed=config.seed):
    print("  ", altered)

# %% [markdown]
# `kr.distill` with `augment=COPIES` adds the copies after the training texts, runs the teacher over all of them and,
# for the copies, puts the teacher's probabilities where the one-hot labels were; the validation texts stay as they
# are. Six times the texts in about five times the training time of STEP 3 (the copies are shorter).

# %%
augmented = kr.distill(dataclasses.replace(config, out=config.out + "-augmented"),
                       dataclasses.replace(settings, augment=COPIES))
f"{augmented['n_train']:,} training texts; validation accuracy {augmented['accuracy']:.4f}"

# %% [markdown]
# ## STEP 5: Quantize each model to int8
# `export_onnx` converts the Keras model with tf2onnx and quantizes its weights to int8 (dynamic quantization): a
# quarter of the size.

# %%
models = {"teacher": settings.teacher, "student, labels only": config.out + "-labels",
          "student, distilled": config.out, "student, augmented": config.out + "-augmented"}
for folder in models.values():
    kr.export_onnx(folder)

# %% [markdown]
# ## STEP 6: Side by side
# Each model as a ktrain predictor (fp32) and as int8 ONNX, on the same validation texts: accuracy, macro-F1,
# single-text latency (p50), batch throughput and size. The timings are medians of repeated measurements:
# `kr.time_side_by_side` calls the eight predictors in turn, 3 rounds of all validation texts (throughput: the median
# round) and 100 single texts (latency: the median of the 300 calls), so that a shared CPU's slow moments hit every
# row alike and one slow pass cannot reorder the rows. Every row predicts through `kr.classify`, which hands the
# predictor length-sorted chunks (the command line's `predict` does the same). Within each kind the rows differ
# only in the model; between kinds they also differ in the runtime: fp32 runs in TensorFlow, int8 in ONNX Runtime.

# %%
rows, predict = [], {}
for name, folder in models.items():
    for kind, int8, weights in [("fp32", False, "tf_model.h5"), ("int8", True, "model.int8.onnx")]:
        def load(f=folder, i=int8):  # loading is part of what inference_row measures
            return functools.partial(kr.classify, kr.open_predictor(f, int8=i))
        rows.append(kr.inference_row(f"{name} {kind}", load, folder, val, ds.label_names, weights))
        predict[f"{name} {kind}"] = load()
table = pd.DataFrame(rows).set_index("name").drop(columns=["train_examples_per_s", "peak_rss_mb"])
medians = pd.DataFrame(kr.time_side_by_side(predict, val[0], rounds=3)).T
timing = ["latency_p50_ms", "latency_p95_ms", "throughput_per_s"]
table[timing] = medians[timing].astype(float)
table

# %%
kr.plot_latency_vs_accuracy(table, y="val_accuracy")

# %% [markdown]
# Read the table for four things: how close the distilled students come to their teacher; whether the one distilled on
# the training texts beats the student that saw only the labels (what the teacher's probabilities add); whether the
# copies the teacher labelled add more (one run of each here; docs/results.md has two seeds of each, and a difference
# smaller than the gap between seeds is no difference); and what int8 costs in accuracy for what it saves in size
# and time. The students' files shrink less than their parameter count suggests: three layers hold 5.3M of MiniLM's
# 22.7M parameters, while the word embeddings (11.7M, a table the students keep whole) are most of what remains;
# 06_compare_models shows where each model's parameters live. Timings on a shared or virtual CPU move from run to
# run; compare rows measured in the same run, as here.

# %% [markdown]
# ## Recap
# Distillation trained a 3-layer student from a 6-layer teacher with ktrain's `get_learner` and `fit_onecycle` on a
# loss that mixes the labels with the teacher's softened probabilities; int8 quantization then cut each model's size
# and latency for a small cost in accuracy. That is the end of the path.
#
# **Try this.**
# Distil with `alpha=1` (the labels alone) and a different seed, and see how far two seeds of the same setting move:
# that spread is the smallest difference worth believing.
#
# **Next:**
# [10_keras3_keras_hub](10_keras3_keras_hub.ipynb): the same kind of run after ktrain, in Keras 3 and KerasHub; and
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md) for every figure with
# the command that made it.
