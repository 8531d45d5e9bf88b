# %% [markdown]
# # The ETHICS benchmark with ktrain
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/08_ethics_benchmark.ipynb)
#
# ETHICS (Hendrycks et al., *Aligning AI With Shared Human Values*, ICLR 2021) asks whether a model can predict basic
# human moral judgements. Its five tasks are your own data in practice: other columns, other labels, sentence pairs
# and a ranking task. Four are binary classification and go through the same ktrain recipe as emotion; utilitarianism
# needs a ranking loss, which ktrain's learners cannot express, so it is trained with Keras on the same backbone.
#
# **You will learn**
#
# - to train on other columns, other labels and
#   [sentence pairs](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#segment-ids);
# - to score
#   [exact match](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#exact-match)
#   over groups, the benchmark's own measure;
# - why one task (utilitarianism) needs a ranking loss, trained in plain Keras on the same model.
#
# **What it needs.** About 35 minutes on a 2-core CPU with AVX2 and no GPU (one task, 8,000 training rows, 4
# epochs), a few on a Colab GPU. The other tasks, on every training row, take hours on a CPU: their figures come from
# our full runs, committed with the project.
#
# Every notebook's time and results in one page:
# [What to expect](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/expect.md).
#
# **What you will see.** The outputs below are those of a real run on a 2-core CPU: justice trained with ktrain's
# calls in the open and scored by exact match, then set beside our full runs of every task and the paper's
# leaderboard.
#
# **What `kr` and `krt` add here.** ETHICS is a study, so this notebook imports its tools by name, as d2l's chapters
# import `d2l`: `krt` is `ktrain_recipes_tools`, the tools beside the helper `kr`. The training is ktrain's; ktrain has
# no ETHICS loader or score, so `krt.get_task` and
# `krt.load_ethics` read a task with whole groups held out, `krt.exact_match` scores it, `krt.transformer_preprocessor`
# is `text.Transformer` told whether the model reads segment ids (ktrain's own check is wrong for pairs),
# `kr.resolve_model`, `kr.sample`, `kr.set_seed`, `kr.bucket_batches` and `kr.epoch_timer` are notebook 01's, and
# `krt.committed_ethics_results` and `krt.results_table` set our full runs beside the leaderboard.

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
import dataclasses  # noqa: F401  (the "Try this" at the end uses it)
import os
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters
# The same `RecipeConfig` as the other notebooks. The recipe is the one our full ETHICS runs chose on validation:
# batch 16, decoupled weight decay 0.01, 4 epochs at lr 5e-5 (validation preferred 5e-5 to 3e-5 on three of the
# four tasks; the curves and test figures are in
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md)). `limit` keeps
# the run CPU-sized: 8,000 of justice's 19,622 training rows. Set `limit=None` on a GPU.

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
config = kr.RecipeConfig(
    model="minilm",     # any registry name, hub id or local folder; the paper used BERT, RoBERTa and ALBERT
    data=os.environ.get("ETHICS_DATA"),  # None: the hub's EleutherAI/hendrycks_ethics; or a folder like its archive
    out=f"{RUNS}/ethics-justice",
    batch_size=16,
    lr=5e-5,
    epochs=4,
    weight_decay=0.01,
    maxlen=64,          # the paper's; ETHICS texts are 20-25 tokens on average
    limit=8000,         # training rows; None: all 19,622 (about half an hour on a 2-core CPU)
    overwrite=True,
)

# %% [markdown]
# ## STEP 1: The data
# justice and deontology come in groups of 4 consecutive test rows that vary one detail of one scenario; virtue in
# groups of 5 (one sentence, five traits). deontology pairs a request with an excuse, and virtue a sentence with a
# trait: both are **sentence pairs**, which ktrain's `text.Transformer` takes as a list of `(first, second)` tuples.
# `krt.load_ethics` reads a task's train and test files (from `config.data`, else the hub) and holds out 10% of the
# training rows for validation, as whole groups: a validation row never shares its scenario with a training row.

# %%
task = krt.get_task("justice")
justice = krt.load_ethics(task, config.data)
pd.DataFrame({"scenario": justice.texts("test")[:4], "label": justice.labels("test")[:4]})

# %% [markdown]
# One scenario, four variants: the label says whether the person's claim is reasonable (1) or not (0). A model must
# get all four right for the group to count.

# %%
virtue = krt.load_ethics(krt.get_task("virtue"), config.data)
pd.DataFrame(virtue.texts("test")[:5], columns=["sentence", "trait"]).assign(label=virtue.labels("test")[:5])

# %% [markdown]
# One sentence, five traits: exactly one trait fits (label 1). The model reads each (sentence, trait) pair as two
# segments.

# %% [markdown]
# ## STEP 2: How the benchmark scores
# Accuracy on single rows is easy to inflate: a model that gets 3 of 4 variants right has not understood the scenario.
# The benchmark's figure for justice, deontology and virtue is **exact match**: the share of groups in which every row
# is right. Two groups of 4, the second with one error, give 7/8 accuracy but an exact match of 1/2:

# %%
krt.exact_match([True, True, True, True, True, False, True, True], 4)

# %% [markdown]
# ## STEP 3: Train on justice with ktrain
# The same calls as notebook 01, on another dataset: a ktrain `Transformer` for the model and maxlen, its
# preprocessing of the training and validation rows (in batches of similar length, `kr.bucket_batches`), a learner
# with decoupled weight decay, and the one-cycle schedule.

# %%
train = kr.sample(justice.texts("train"), justice.labels("train"), config.limit, config.seed)
val = justice.texts("validation"), justice.labels("validation")
f"{len(train[0]):,} training rows, {len(val[0]):,} validation rows, {len(justice.texts('test')):,} test rows"

# %%
kr.set_seed(config.seed)
t = krt.transformer_preprocessor(kr.resolve_model(config.model), config.maxlen, justice.label_names,
                                config.batch_size)  # ktrain's text.Transformer, told whether it reads segment ids
trn = kr.bucket_batches(t.preprocess_train(train[0], justice.label_ids(train[1]), verbose=0), config.seed)
val_data = kr.bucket_batches(t.preprocess_test(val[0], justice.label_ids(val[1]), verbose=0), config.seed)
learner = ktrain.get_learner(t.get_classifier(), train_data=trn, val_data=val_data, batch_size=config.batch_size)
learner.set_weight_decay(config.weight_decay)  # AdamW: weight decay apart from the gradient, as the paper trains

# %%
timer = kr.epoch_timer()
history = learner.fit_onecycle(config.lr, config.epochs, callbacks=[timer])

# %% [markdown]
# Read the epochs' validation accuracy and loss together: a loss that turns up while accuracy still climbs means the
# model grows more confident on the rows it gets wrong, a first sign of overfitting on 8,000 rows. Now
# the benchmark's own figure: the test rows in their file order, so that each group of 4 is together.

# %%
predictor = ktrain.get_predictor(learner.model, preproc=t, batch_size=64)
test_texts, test_labels = justice.texts("test"), justice.labels("test")
correct = [guess == truth for guess, truth in zip(predictor.predict(test_texts), test_labels)]
ours = {"task": "justice", "model": config.model, "accuracy": sum(correct) / len(correct),
        "exact_match": krt.exact_match(correct, task.group), "n": len(correct), "n_train": len(train[0]),
        "epochs": config.epochs, "seconds": timer.trained()["train_seconds"]}
pd.Series(ours)

# %% [markdown]
# Read the two figures together: 70.7% of the test rows are right, but only 18.6% of the groups, because one wrong
# variant fails its whole group of four. A model that guessed each row at random would get 6.3% of the groups (0.5
# to the power 4).

# %% [markdown]
# ## STEP 4: Beside our full runs and the leaderboard
# `krt.run_ethics(task, config)` runs these same steps, and saves the predictor, for any task (utilitarianism with
# a ranking loss in plain Keras). Our full runs on every training row of each task, made with it and committed with
# the project, are read here beside the paper's leaderboard: MiniLM (22.7M parameters, 4 epochs) and MPNet-base
# (110M, the paper's lower grid point: 2 epochs at lr 3e-5), each at the epoch validation chose. The figure per task
# is the benchmark's, in percent: exact match for justice, deontology and virtue, pairs ranked right for
# utilitarianism.

# %%
full = {"MiniLM, all rows (our full runs)": krt.committed_ethics_results("minilm"),  # 22.7M, 4 epochs (docs/ethics)
        "MPNet-base, all rows (our full runs)": krt.committed_ethics_results("mpnet")}  # 110M, 2 epochs (docs/mpnet)
table, details = krt.results_table(full)
table.loc[f"{config.model}, this notebook"] = {"justice": round(100 * ours["exact_match"], 1)}
table

# %%
details

# %% [markdown]
# This notebook's run (18.6) sits below our full run of justice (22.8, on all 19,622 rows): more data is worth
# several points here. MiniLM (22.7M parameters) sits between random and BERT-base (110M) on each task. MPNet-base,
# BERT-base's size (110M), is above BERT-base on all four tasks after 2 epochs (the `epochs` column above is the
# epoch validation chose), so the gap is the model's size at this budget, more than the recipe. Our audit of the
# scoring, the splits and the paper's grid is in
# [docs/ethics.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/ethics.md); MPNet-base's runs,
# with second seeds of justice (34.6 against 34.8) and deontology (45.4 against 43.0), in
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#mpnet-base-on-ethics).
# The empty cells (NaN) are runs that do not exist: this notebook trains justice only, and commonsense's training
# split is not available offline, so our full runs have no commonsense figure to set beside the paper's.

# %% [markdown]
# ## Recap
# ETHICS is classification on your own columns: pairs for deontology and virtue, single texts for justice and
# commonsense, and a ranking for utilitarianism. ktrain's calls are the same as for emotion; what changes is the
# data's shape and the score. Exact match over groups is far below per-row accuracy, because one wrong variant fails
# its whole group.

# %% [markdown]
# ## Exercises
# Each exercise has its solution in the hidden cell below it: try it first, then open the cell (on Colab,
# "Show code"; in Jupyter, the collapsed input). The solutions run in this project's tests, so they work
# with the code above.
#
# **Exercise 1.** Read five test scenarios the model got wrong, with their labels. Would you have agreed with the label?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
wrong = [(scenario, label) for scenario, label, ok in zip(test_texts, test_labels, correct) if not ok]
pd.DataFrame(wrong[:5], columns=["scenario", "label"])

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# Read each scenario with its label (1: a reasonable claim, 0: not). The first wrong row on the committed run is a
# variant of the park scenario shown at the top, a group whose four variants differ by a few words and alternate
# between the labels: the model read the shared words, not the difference. Some labels you may well dispute; the
# paper's annotators did not always agree either, which is one reason no model reaches 100.
# </details>

# %% [markdown]
# **Exercise 2.** If the model's mistakes fell on rows at random, a group of 4 would be all right with probability
# accuracy⁴. Compare that with the exact match measured. What does the difference say about where the mistakes fall?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
at_random = ours["accuracy"] ** task.group
pd.Series({"accuracy": ours["accuracy"], f"accuracy ** {task.group} (mistakes at random)": at_random,
           "exact match (measured)": ours["exact_match"]}).round(3)

# %% [markdown]
# <details><summary>What the solution finds on the committed run</summary>
#
# The exact match measured (0.186) is below accuracy⁴ (0.251): the mistakes are spread over more groups than chance
# would put them in, not heaped on a few hard scenarios. Each group holds variants with opposite labels that differ by
# a few words; a model that answers the shared words gets some variants of many groups right and few groups whole.
# </details>

# %% [markdown]
# ## Check yourself
# A few questions on this notebook's ideas, to answer from memory; open each answer to check yourself.
#
# **1.** Why is exact match over groups so far below per-row accuracy?
#
# <details><summary>Answer</summary>
#
# A group counts only when every one of its variants is right, so one wrong row fails the whole group; the more rows
# in a group, the further the two figures fall apart.
#
# </details>
#
# **2.** Why can utilitarianism not be trained with ktrain's classification recipe?
#
# <details><summary>Answer</summary>
#
# Its label is an order between two scenarios (which is more pleasant), not a class. The model gives each scenario a
# score and is trained so that the preferred one scores higher: a ranking loss, written in plain Keras.
#
# </details>
#
# **3.** Which tasks take a pair of texts, and how does ktrain read a pair?
#
# <details><summary>Answer</summary>
#
# Deontology (a scenario and an excuse) and virtue (a scenario and a trait). ktrain's `text.Transformer` joins each
# pair into one input, `[CLS] first [SEP] second [SEP]`; but on transformers 4.2x and later its own check for segment
# ids says no for every model, so left to itself it feeds the second sentence as segment 0, not as BERT reads a
# pair. This notebook tells it (`krt.transformer_preprocessor`), so the second sentence is segment 1.
#
# </details>

# %% [markdown]
# **More to try.**
# - Run another task: `krt.run_ethics("deontology", dataclasses.replace(config, out=f"{RUNS}/ethics-deontology"))`
#   (its rows are pairs), and compare its exact match with the table.
# - Train justice on every row (`limit=None`) and see how far exact match moves.
#
# **Next:**
# [09_distill_and_quantize](09_distill_and_quantize.ipynb): a smaller, faster model from the one you trained.
