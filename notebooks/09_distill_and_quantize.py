# %% [markdown]
# # Smaller and faster: distillation and quantization
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/09_distill_and_quantize.ipynb)
#
# DistilBERT distilled BERT during *pre-training*, with a triple loss over masked words and hidden states (notebook
# [03](03_four_architectures.ipynb) shows what that left of BERT). This notebook does something smaller and cheaper:
# *task-specific* logit distillation. The teacher is
# MPNet-base (110M parameters) fine-tuned on emotion; the student is the 6-layer MiniLM (22.7M parameters, five times
# fewer), which learns emotion from the labels and from the teacher's softened output probabilities. The two read
# text with different tokenizers, so each reads the texts its own way and the teacher's answers are joined to the
# student's rows text by text. The distilled student is trained with ktrain's own calls, one per step; a second
# student, on the labels alone, is trained with the one-call `krt.distill`, and transfer data (altered copies of the
# training texts that only the teacher labels) is shown, to try. Then each model is quantized to int8 with
# ONNX Runtime and measured side by side.
#
# **You will learn**
#
# - to train a student by
#   [distillation](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#distillation)
#   with ktrain's own calls and a loss of your own, when teacher and student have different
#   [tokenizers](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#tokenizer);
# - what the teacher's
#   [logits](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#logits)
#   add over the labels alone, and what transfer data adds;
# - to quantize to
#   [int8](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#int8-and-onnx)
#   and weigh accuracy against size and
#   [latency](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#p50-p95-and-p99-latency).
#
# **What it needs.** A teacher: MPNet-base fine-tuned on emotion, saved in `runs/mpnet-base` (06_compare_models looks
# there too). Where there is none, the notebook trains it first (on all 16,000 texts, 3 epochs: 50 to 90 minutes alone
# on a 2-core CPU with AVX-512, about 3.7 hours with AVX2 only, minutes on a GPU); offline,
# `make mpnet` installs its weights (about 400 MB).
#
# **What you will see.** The outputs below are those of a real run on all of emotion, the teacher included: no
# teacher was saved, so the cell below trained it first (`kr.setup_notebook()`'s first output names the CPU it ran on;
# the teacher's `precision="auto"` chose bfloat16 there). The figures the prose quotes are this run's, read from its
# outputs; our other full runs are in docs/results.md. T=7 and alpha=0.5 were chosen on the
# validation texts in a grid of T {2, 7} x alpha {0.1, 0.5} for a MiniLM teacher; our full runs with an MPNet-base
# teacher, on five seeds, are in [docs/results.md: MPNet-base teaches
# MiniLM](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#mpnet-base-teaches-minilm).
#
# Every notebook's time and results in one page:
# [What to expect](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/expect.md).
#
# **What `kr` and `krt` add here.** Distillation is one of the tools, so this notebook imports it by name, as d2l's
# chapters import `d2l`: `krt` is `ktrain_recipes_tools`, the tools beside the helper `kr`. ktrain has no distillation
# and no int8 path. Distillation: `krt.DistillSettings` and `krt.distill` (the whole recipe in one call), and its parts
# in the open: `krt.pretrained_classifier` (the student, with a fresh head), `krt.teacher_logits_for`,
# `krt.pack_targets`, `krt.distillation_loss`, `krt.label_accuracy`, `krt.ready_for_prediction`, with `krt.augment`
# for transfer data. int8: `kr.export_onnx`, then `krt.side_by_side` and `krt.plot_latency_vs_accuracy` (the
# comparison, a study). Around them, a few of notebook 01's helpers, for what ktrain does not do: `kr.load_data_for`
# and `kr.sample` (the data), `kr.resolve_model` (the offline MiniLM), `kr.bucket_batches` (batches of similar
# length), `kr.save_checked_predictor` and `kr.load_checked_predictor` (the checked save), and `kr.run_recipe` (the
# teacher, when there is none). The scores are scikit-learn's. The rest is ktrain's: `text.Transformer`,
# `get_tokenizer`, `preprocess_train`, `preprocess_test`, `get_classes`, `predict_proba`, `get_learner`,
# `fit_onecycle`, `learner.plot`, `get_predictor`, `predict`.

# %% tags=["install"]
# Colab / Gradient: fetch this project and install it with the versions it was tested with (2 to 4 minutes, once per
# runtime; skipped where ktrain_recipes is installed). On Colab, pip's red "dependency conflicts" lines are expected:
# they name preinstalled packages that want newer versions, which these notebooks do not use.
import importlib.util
import os
import subprocess

EXTRAS = []  # the tools' packages this notebook needs besides the helper's (requirements-<extra>.txt)
if importlib.util.find_spec("ktrain_recipes") is None:
    if not os.path.isdir("ktrain-recipes"):
        subprocess.run("git clone -q --depth 1 https://github.com/ktrain-recipes/ktrain-recipes".split(), check=True)
    exec(open("ktrain-recipes/notebooks/shared/install.py").read())  # may restart the runtime: it says so

# %%
import ktrain_recipes as kr
import ktrain_recipes_tools as krt
import ktrain
import dataclasses
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
teacher_config = kr.RecipeConfig(  # the teacher, trained only if none is saved in `out` yet
    model="mpnet",         # MPNet-base, 110M parameters; the registry's rate (5e-5) and batch (16)
    data=None,             # None: $EMOTION_DATA, else the hub, else (offline) a slice
    out=f"{RUNS}/mpnet-base",
    epochs=3,
    seed=42,
)
config = kr.RecipeConfig(  # the students' run
    model="minilm",        # recorded in metrics.json; the student checkpoint is `settings.student`
    data=teacher_config.data,  # the teacher's data
    out=f"{RUNS}/student",
    epochs=3,
    lr=1e-4,
    batch_size=32,
    limit=None,            # None: all 16,000 training texts
    eval_limit=None,       # None: all 2,000 validation texts
    overwrite=True,
)
settings = krt.DistillSettings(
    teacher=teacher_config.out,  # a predictor saved by `train` (or the cell below)
    student="minilm",           # the pretrained 6-layer MiniLM, with its own tokenizer
    layers=6,                   # all of MiniLM's layers: the student is used whole
    temperature=7.0,            # softens the teacher's probabilities, so the small ones carry information
    alpha=0.5,                  # the weight of the true labels; 1 - alpha goes to the teacher
)

# %% [markdown]
# ## STEP 1: What distillation transfers
# A fine-tuned classifier's probabilities say more than its label: *fear 0.7, surprise 0.25* tells the student that
# this text sits near the surprise border. Dividing the logits by a temperature T > 1 makes those small probabilities
# visible. The student's loss mixes the cross-entropy with the true labels (weight `alpha`) and with the teacher's
# softened probabilities (weight `1 - alpha`, times T squared so that its gradients keep their size as T grows).

# %% [markdown]
# On Colab, `RUNS` is in your Google Drive, so a teacher saved there by an earlier session is found here. Where there
# is none yet, the cell below trains it with `kr.run_recipe` (the command line's `train`; 50 to 90 minutes alone on a
# 2-core CPU with AVX-512, about 3.7 hours with AVX2 only, minutes on a GPU).

# %%
from pathlib import Path

if not Path(settings.teacher).exists():
    print(f"No teacher in {settings.teacher}: training MPNet-base on the emotion data first (about 50 minutes "
          "alone on a 2-core CPU with AVX-512, about 3.7 hours with AVX2 only, minutes on a GPU)")
    kr.run_recipe(teacher_config)

# %%
import json

teacher = kr.load_checked_predictor(settings.teacher)
trained = json.loads(Path(settings.teacher, "metrics.json").read_text())  # what its run measured
f"teacher: {teacher.model.count_params():,} parameters, validation accuracy {trained['accuracy']:.4f}"

# %% [markdown]
# What the student will learn from: the teacher's probabilities for one text (ktrain's `predict_proba`), and the same
# probabilities softened at the temperature T, which is what the loss below compares the student's with.

# %%
tweet = "i feel a little nervous about tomorrow but mostly excited"
proba = teacher.predict_proba(tweet)
soft = proba ** (1 / settings.temperature)  # softmax(logits / T) is p^(1/T), normalised
pd.DataFrame({"probability": proba, f"softened (T = {settings.temperature:g})": soft / soft.sum()},
             index=teacher.get_classes()).round(3)

# %% [markdown]
# ## STEP 2: The distilled student, step by step
# The same data as the teacher's. One tweet, read by each model's tokenizer: the pieces are the same (MPNet's
# vocabulary is BERT's uncased WordPiece plus a few entries of its own), but the vocabularies differ in size and the
# frame differs (`<s>` and `</s>` against `[CLS]` and `[SEP]`), so the ids one model reads mean nothing to the
# other: each needs its own reader.

# %%
from ktrain import text

ds = kr.load_data_for(config)
train = kr.sample(ds.texts("train"), ds.labels("train"), config.limit, config.seed)
val = kr.sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, config.seed)
n = len(ds.label_names)

t = teacher.preproc  # the teacher's reader: its tokenizer, and the maxlen it was trained with
s = text.Transformer(kr.resolve_model(settings.student), maxlen=t.maxlen, class_names=ds.label_names,
                     batch_size=config.batch_size)  # the student's own reader, at the teacher's maxlen
for name, tokenizer in [("teacher", t.get_tokenizer()), ("student", s.get_tokenizer())]:
    pieces = tokenizer.convert_ids_to_tokens(tokenizer(train[0][0])["input_ids"])
    print(f"{name}, {len(tokenizer.get_vocab()):,} pieces: {pieces}")

# %% [markdown]
# So the student's batches are made by its own reader, and `kr.bucket_batches` serves batches of texts of similar
# length, as in the other notebooks. Keras seeds Python, numpy and TensorFlow in one call, so that the batches'
# order and the new head's weights are the same on every run.

# %%
import tensorflow as tf

tf.keras.utils.set_random_seed(config.seed)
trn = kr.bucket_batches(s.preprocess_train(train[0], ds.label_ids(train[1])), config.seed)
val_data = kr.bucket_batches(s.preprocess_test(val[0], ds.label_ids(val[1])), config.seed)

# %% [markdown]
# The student: the pretrained MiniLM with a fresh classification head. (A student of the teacher's own checkpoint
# would be cut instead: `krt.cut_layers` keeps every other layer, DistilBERT's initialisation.)

# %%
student = krt.pretrained_classifier(settings.student, n)
f"student: {student.count_params():,} parameters"

# %% [markdown]
# The targets. ktrain's transformer datasets accept any target array, so each example's target becomes its one-hot
# label followed by the teacher's logits for that text; the loss splits them again. `krt.teacher_logits_for` runs the
# teacher once over the texts *as the teacher reads them* and returns its logits in the texts' order, the order of
# the student's rows.

# %%
logits = [krt.teacher_logits_for(teacher.model, t, train[0], ds.label_ids(train[1])),
          krt.teacher_logits_for(teacher.model, t, val[0], ds.label_ids(val[1]))]
krt.pack_targets(teacher.model, trn, val_data, logits=logits)
trn.y.shape  # texts x (6 labels + 6 teacher logits)

# %% [markdown]
# The loss: `alpha` x cross-entropy with the labels + `(1 - alpha)` x T² x cross-entropy with the teacher's softened
# probabilities, and the accuracy of the student's logits against the labels' half of the targets. The optimizer is
# TensorFlow's legacy Adam, which `fit_onecycle` can cycle (it moves the rate and beta_1 every batch). Then ktrain
# takes over as for any model: `get_learner`, `fit_onecycle`.

# %%
student.compile(optimizer=tf.keras.optimizers.legacy.Adam(config.lr),
                loss=krt.distillation_loss(n, settings.temperature, settings.alpha),
                metrics=[krt.label_accuracy(n)])
learner = ktrain.get_learner(student, train_data=trn, val_data=val_data, batch_size=config.batch_size)

# %%
history = learner.fit_onecycle(config.lr, config.epochs)

# %% [markdown]
# The loss is large (tens, where a student of the labels alone ends near 0.1) and that is no sign of failure: its
# soft term is T² times the cross-entropy with the teacher's softened probabilities, which includes their entropy, a
# constant the student cannot remove (T² = 49 here). The accuracy is the one to watch.

# %%
learner.plot("loss")  # ktrain draws the history it keeps: the loss per epoch, training and validation

# %% [markdown]
# A predictor, as in every notebook: `krt.ready_for_prediction` compiles the student with a plain loss and gives it a
# copy of the student's reader that holds the trained model's config (ktrain rebuilds a saved model from it);
# then `ktrain.get_predictor`, scikit-learn's scores on the validation texts, and the checked save, whose
# metrics.json keeps them with the distillation's settings.

# %%
from sklearn.metrics import accuracy_score, classification_report, f1_score

predictor = ktrain.get_predictor(*krt.ready_for_prediction(learner.model, s), batch_size=config.batch_size)
said = predictor.predict(val[0])
metrics = {"accuracy": accuracy_score(val[1], said), "macro_f1": f1_score(val[1], said, average="macro"),
           "n": len(val[0]), "report": classification_report(val[1], said, output_dict=True, zero_division=0),
           "distillation": dataclasses.asdict(settings)}
kr.save_checked_predictor(predictor, config.out, metrics, overwrite=True)
pd.DataFrame(metrics["report"]).T.loc[ds.label_names + ["macro avg"]].round(3)

# %% [markdown]
# ## STEP 3: A student on the labels alone, in one call
# `krt.distill` makes the calls above in one (with a checkpoint, `--resume` and the same checked save); the command
# line's `python -m ktrain_recipes distill` runs it. The long runs below save their whole training state after every
# epoch: after a Colab disconnect, run the cells above again and call the same `krt.distill(...)` with
# `dataclasses.replace(config, ..., resume=True)` to go on from the last finished epoch, mid-schedule. With
# `alpha=1` the student learns from the labels alone, and shows what the teacher adds.

# %%
alone = krt.distill(dataclasses.replace(config, out=config.out + "-labels"), dataclasses.replace(settings, alpha=1.0))

# %% [markdown]
# ## STEP 4: Transfer data the teacher labels
# With 16,000 texts, the teacher's probabilities on those same texts tell the student little it cannot learn from
# the labels. What pays in the literature is more text for the teacher to speak about. Tang et al. (2019, "Distilling
# Task-Specific Knowledge from BERT into Simple Neural Networks") make it from the training texts alone: in each
# copy of a text some words are masked, some replaced by another word of the corpus, some dropped, the order is
# shuffled within windows of three words, and sometimes only an n-gram is kept. The copies may no longer mean what
# their text meant, so they get no true label: the teacher labels each with its probabilities. `krt.augment` makes
# the copies (seeded: the same call gives the same copies):

# %%
print(train[0][0])
for altered in krt.augment([train[0][0]], 3, seed=config.seed):
    print("  ", altered)

# %% [markdown]
# `krt.distill(..., dataclasses.replace(settings, augment=1))` adds one copy of each text after the training texts,
# runs the teacher over all of them and, for the copies, puts the teacher's probabilities where the one-hot labels
# were; the validation texts stay as they are. It is left to try (below), because one copy of each text costs about
# half an hour on a 2-core CPU with this teacher. Of everything we tried it is the only change that came out ahead on
# every seed, and even it is not shown to pay. Run separately on five seeds, the student with one copy scored above
# its twin on the labels alone on every seed, by +0.10 to +1.20 points: a mean of +0.40, whose 95% interval (-0.16
# to +0.96, a paired t interval over the seeds) still holds zero, so five seeds cannot tell it from the seed spread
# ([docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#mpnet-base-teaches-minilm)).
# A MiniLM teacher gained less from it
# ([the same page](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#distillation-with-augmented-transfer-data)).

# %% [markdown]
# ## STEP 5: Quantize each model to int8
# `export_onnx` converts the Keras model with tf2onnx and quantizes its weights to int8 (dynamic quantization): a
# quarter of the size. The conversion runs in a separate Python process, so this kernel's memory stays as it is; a
# base-size model such as the teacher needs about 8 GB free while it converts, about a minute on a 2-core CPU.

# %%
models = {"teacher": settings.teacher, "student, labels only": config.out + "-labels",
          "student, distilled": config.out}
for folder in models.values():
    kr.export_onnx(folder)

# %% [markdown]
# ## STEP 6: Side by side
# Each model as a ktrain predictor (fp32) and as int8 ONNX, on the same validation texts: accuracy, macro-F1,
# single-text latency (p50), batch throughput and size. `krt.side_by_side` loads the six predictors, scores each,
# and takes the timings as medians of repeated measurements: it calls the six in turn, 3 rounds of all validation
# texts (throughput: the median round) and 100 single texts (latency: the median of the 300 calls), so that a shared
# CPU's slow moments hit every row alike and one slow pass cannot reorder the rows. Every row gets length-sorted
# chunks of texts (the command line's `predict` does the same). Within each kind the rows differ only in the model;
# between kinds they also differ in the runtime: fp32 runs in TensorFlow, int8 in ONNX Runtime.

# %%
table = krt.side_by_side(models, val, ds.label_names, rounds=3)
table

# %%
krt.plot_latency_vs_accuracy(table, y="val_accuracy")

# %% [markdown]
# Read the table for three things.
#
# - **How close the student comes to its teacher.** The distilled MiniLM scores 0.9340, 0.85 points below MPNet-base
#   (0.9425 in this table), with a fifth of its parameters and of its size on disk.
# - **What the teacher's probabilities add.** Nothing on this run: the student that saw only the labels scores 0.9340
#   too. Our series on five seeds says the same: on seed 43 the order turned (0.9385 distilled against 0.9405 on the
#   labels, in [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#mpnet-base-teaches-minilm)),
#   so the teacher's probabilities on the 16,000 training texts alone add nothing we can tell from noise. Transfer
#   data (STEP 4) gained on all five seeds we ran it on, +0.40 points on average, but its 95% interval (-0.16 to
#   +0.96) holds zero ([docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#mpnet-base-teaches-minilm));
#   [05_better_or_noise](05_better_or_noise.ipynb) reads those pairs with a paired interval.
# - **What int8 costs and saves.** Each model shrinks to a quarter. MPNet-base loses 0.3 points (0.9425 to 0.9395),
#   the labels-only student 0.4, and the distilled one gains 0.1: all within the noise. One text takes about 6.57 ms
#   in the distilled student's int8 copy, 20.3 ms in the teacher's, and 200 ms in the teacher at fp32 through ktrain.
#
# So the distilled int8 student is the one to serve: within about a point of the teacher, at a twentieth of its
# size and about 30 times faster per text. Timings on a shared or virtual CPU move from run to run; compare rows
# measured in the same run, as here.

# %% [markdown]
# ## Recap
# Distillation trained MiniLM (6 layers, 22.7M parameters) from MPNet-base (12 layers, 110M) with ktrain's
# `get_learner` and `fit_onecycle` on a loss that mixes the labels with the teacher's softened probabilities, each
# model reading the texts with its own tokenizer. The student came within a point of its teacher; on the labels
# alone it came as close, so what the teacher added here is within the noise between seeds. int8 quantization
# then cut each model to a quarter of its size and its single-text latency several times over, at the cost in accuracy
# the table shows. That is the end of the ktrain path.

# %% [markdown]
# ## Exercises
# Each exercise has its solution in the hidden cell below it: try it first, then open the cell (on Colab,
# "Show code"; in Jupyter, the collapsed input). The solutions run in this project's tests, so they work
# with the code above.
#
# **Exercise 1.** On how many validation texts do the teacher and the distilled student disagree, and which of the two
# is right when they do?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
said = {"teacher": teacher.predict(val[0]), "student, distilled": predictor.predict(val[0])}  # both fp32
apart = [i for i, (a, b) in enumerate(zip(said["teacher"], said["student, distilled"])) if a != b]
right = {name: sum(said[name][i] == val[1][i] for i in apart) for name in said}
print(f"they disagree on {len(apart)} of {len(val[0])} texts; right there: {right}")

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# Two models within a point of each other in accuracy still disagree on some texts, and where they disagree neither
# is right every time (sometimes neither is right at all). Accuracy counts mistakes, not which texts they fall on: a
# student "as good as" its teacher is not a copy of it, and where the two disagree is where to read the texts.
#
# On the committed run: they disagree on 99 of the 2,000 texts; the teacher is right on 57 of them, the student on 40
# (on the other 2, neither).
# </details>

# %% [markdown]
# **Exercise 2.** For each model, what does int8 cost in accuracy and give in throughput? Read both from `table`.

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
pd.DataFrame({name: {"accuracy lost (points)": 100 * (table.loc[f"{name} fp32", "val_accuracy"]
                                                      - table.loc[f"{name} int8", "val_accuracy"]),
                     "throughput, int8 / fp32": table.loc[f"{name} int8", "throughput_per_s"]
                     / table.loc[f"{name} fp32", "throughput_per_s"]} for name in models}).T.round(2)

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# For each model int8 costs about a point of accuracy, or less, and gives a few times the throughput on a CPU with
# AVX2 (more where the CPU has AVX-512 VNNI, whose int8 instructions onnxruntime uses). The trade is the same in kind
# for teacher and student; distillation and int8 stack, which is why the int8 student is the fastest row.
#
# On the committed run: int8 costs the teacher 0.3 points and the labels-only student 0.4, and the distilled student
# gains 0.1 (-0.1 lost: one run's noise, 2 texts in 2,000); it gives 4.92 times the throughput for the teacher and
# about 4.1 (4.05 and 4.07) for the students, on this AVX-512 VNNI CPU.
# </details>

# %% [markdown]
# ## Check yourself
# A few questions on this notebook's ideas, to answer from memory; open each answer to check yourself.
#
# **1.** What does the student learn from the teacher that the labels alone do not give it?
#
# <details><summary>Answer</summary>
#
# The teacher's probabilities for every label, softened by the temperature, so that the near misses (a text close to
# the surprise border, say) carry information too; the loss mixes them with the true labels.
#
# </details>
#
# **2.** The teacher and the student read a text with different tokenizers. Why does distillation still work?
#
# <details><summary>Answer</summary>
#
# It matches their probabilities over the labels, not their tokens or hidden states, so each model tokenizes the text
# its own way.
#
# </details>
#
# **3.** What does int8 quantization trade, and how do you know whether the trade is worth it?
#
# <details><summary>Answer</summary>
#
# Weights in 8-bit integers: about a quarter of the size and faster inference on a CPU, for some accuracy. Measure
# both on the same texts, as the side-by-side table does.
#
# </details>

# %% [markdown]
# **More to try.** Distil with `alpha=1` (the labels alone) and a different seed, and see how far two seeds of the
# same setting move: that spread is the smallest difference worth believing
# ([05_better_or_noise](05_better_or_noise.ipynb) shows how to judge a change against it). Then give the student
# transfer data (STEP 4), one copy of each text:
# `krt.distill(dataclasses.replace(config, out=config.out + "-augmented"), dataclasses.replace(settings, augment=1))`,
# and add its folder to `models` before STEP 5.
#
# **Next:**
# [10_keras3_keras_hub](10_keras3_keras_hub.ipynb): the same kind of run after ktrain, in Keras 3 and KerasHub; and
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md) for every figure with
# the command that made it.
