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
# **What it needs.**
# Hours on a CPU for all of a task (set `limit` for a first run); minutes per task on a Colab GPU.
#
# **What you will see.** This notebook is committed without outputs: run it. The last table sets your figures beside
# the paper's leaderboard; the figures of full runs on a CPU are in
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md).

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
import dataclasses
import os
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters
# The same `RecipeConfig` as the other notebooks; each task saves its predictor to `RUNS/ethics-<task>`. The recipe
# is the one our ETHICS runs chose on validation: batch 16, decoupled weight decay 0.01, 4 epochs at lr 5e-5 (validation
# preferred 5e-5 to 3e-5 on three of the four tasks; the curves and test figures are in
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md)). A full run
# trains on 13,000 to 25,000 rows per task: on a 2-core CPU that is 10 to 15 minutes per epoch and task, so set
# `limit=2000` for a first run that finishes in minutes, or use a GPU runtime.

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
config = kr.RecipeConfig(
    model="minilm",     # any registry name, hub id or local folder; the paper used BERT, RoBERTa and ALBERT
    data=os.environ.get("ETHICS_DATA"),  # None: the hub's EleutherAI/hendrycks_ethics; or a folder like its archive
    batch_size=16,
    lr=5e-5,
    epochs=4,
    weight_decay=0.01,
    limit=None,         # None: every training row (hours on a CPU); e.g. 2000 for a first run in minutes
    overwrite=True,
)
from ktrain_recipes.studies.ethics import TASKS  # the five tasks, in the benchmark's order

# %% [markdown]
# ## STEP 1: The data
# justice and deontology come in groups of 4 consecutive test rows that vary one detail of one scenario; virtue in
# groups of 5 (one sentence, five traits). deontology pairs a request with an excuse, and virtue a sentence with a
# trait: both are **sentence pairs**, which ktrain's `text.Transformer` takes as a list of `(first, second)` tuples.

# %%
justice = kr.load_ethics(kr.get_task("justice"), config.data)
pd.DataFrame({"scenario": justice.texts("test")[:4], "label": justice.labels("test")[:4]})

# %%
virtue = kr.load_ethics(kr.get_task("virtue"), config.data)
pd.DataFrame(virtue.texts("test")[:5], columns=["sentence", "trait"]).assign(label=virtue.labels("test")[:5])

# %% [markdown]
# ## STEP 2: How the benchmark scores
# Accuracy on single rows is easy to inflate: a model that gets 3 of 4 variants right has not understood the scenario.
# The benchmark's figure for justice, deontology and virtue is **exact match**: the share of groups in which every row
# is right. Two groups of 4, the second with one error, give 7/8 accuracy but an exact match of 1/2:

# %%
kr.exact_match([True, True, True, True, True, False, True, True], 4)

# %% [markdown]
# ## STEP 3: Train and score every task
# `run_ethics` runs the recipe of notebook 02 (`text.Transformer`, `preprocess_train` with pairs where the task has
# them, `get_learner`, `fit_onecycle`, `get_predictor`, `save`) on the task's training rows, holding out 10% for
# validation, then scores the test file in its row order. commonsense's training split is only on the hub; without it
# the task is skipped with a note. Each task's run saves its whole training state after every epoch: if the runtime
# disconnects, reconnect, run the cells above again, and go on with a task from its last finished epoch with
# `kr.run_ethics(task, dataclasses.replace(config, out=f"{RUNS}/ethics-{task}", resume=True))`.

# %%
results = []
for task in TASKS:
    try:
        results.append(kr.run_ethics(task, dataclasses.replace(config, out=f"{RUNS}/ethics-{task}")))
    except kr.RecipesError as exc:
        print(f"{task}: {exc}")

# %% [markdown]
# ## STEP 4: Beside the leaderboard
# The benchmark's figure per task, in percent: exact match for justice, deontology and virtue, accuracy for
# utilitarianism (pairs ranked right) and commonsense. The published rows are the paper's; ours follows with how it
# was made.

# %%
table, details = kr.results_table(results)
table

# %%
details

# %% [markdown]
# ## Recap
# ETHICS is classification on your own columns: pairs for deontology and virtue, single texts for justice and
# commonsense, and a ranking for utilitarianism. Exact match over groups is far below per-text accuracy, because
# one wrong variant fails its whole group.
#
# **Try this.**
# Train deontology with and without its second sentence (the excuse) and compare exact match.
#
# **Next:**
# [09_distill_and_quantize](09_distill_and_quantize.ipynb): a smaller, faster model from the one you trained.
