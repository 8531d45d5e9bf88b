# %% [markdown]
# # How sure is it? Calibrated probabilities, and an answer withheld when the model is unsure
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/12_how_sure.ipynb)
#
# Every predictor so far answers every text, with a probability nobody has checked. When it says 0.9, is it right
# nine times in ten? Guo et al. ("On Calibration of Modern Neural Networks", ICML 2017) found modern networks too
# sure of themselves, and fixed it with one number, a *temperature*; Desai and Durrett ("Calibration of Pre-trained
# Transformers", EMNLP 2020) found fine-tuned BERT and RoBERTa nearly calibrated on data like their training data.
# This notebook measures it on emotion for the predictors notebooks 00 and 02 saved, fits a temperature on
# validation, and then lets the model decline to answer when it is unsure (*selective classification*, Geifman and
# El-Yaniv, NeurIPS 2017): fewer answers, more of them right.
#
# **You will learn**
#
# - to read a reliability diagram and the expected calibration error (ECE), with log-loss and the Brier score;
# - to fit a temperature on validation, and why it changes no label, only the probabilities;
# - to trade answers for accuracy: the accuracy-coverage curve, a confidence threshold chosen on validation for an
#   accuracy you name, and what it gives on the test split, scored once;
# - to record the temperature in the saved predictor and withhold answers from Python, the command line and HTTP;
# - which confident mistakes are the labels', not the model's.
#
# **What it needs.**
# A CPU and the predictors 00_quickstart (MiniLM) and 02_base_size_emotion (MPNet-base) saved in `RUNS`. Without
# the quickstart's it trains a small MiniLM first (a few minutes); without 02's it measures MiniLM alone. Scoring
# both on 4,000 texts takes a few minutes on a CPU.
#
# **What you will see.** The outputs below are one real run on the 2-core CPU its first output names, reading the
# predictor trained on all 16,000 emotion texts by `ktrain-recipes train` with 00's settings (MiniLM), and emotion's
# 2,000-text validation and test splits. 02's MPNet-base predictor was not in `RUNS` for that run, so its outputs show
# MiniLM alone; with 02's saved, every table and plot gets a row or curve for MPNet-base too.
#
# Every notebook's time and results in one page:
# [What to expect](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/expect.md).
#
# **What `kr` and `krt` add here.** ktrain's `predict_proba` gives the probabilities, and scikit-learn draws the
# reliability diagram (`CalibrationDisplay`). ktrain has no calibration: `krt.calibration_scores` measures it (ECE,
# log-loss, Brier), `krt.fit_temperature` fits the temperature with scipy and `krt.scaled` applies it,
# `krt.coverage_curve`, `krt.choose_min_confidence` and `krt.selective_scores` choose and score a confidence to
# withhold under, and `krt.record_temperature` writes the temperature into the predictor's folder, which
# `kr.open_predictor` and `kr.classify` (with `min_confidence`) then apply. `kr.load_emotion`,
# `kr.load_checked_predictor` and `kr.run_recipe` are the data, the load and the small run, as in 07;
# `kr.RecipesError` is the one-line refusal a target no threshold reaches gets.

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
from pathlib import Path

import ktrain_recipes as kr
import ktrain_recipes_tools as krt
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.calibration import CalibrationDisplay

kr.setup_notebook()

# %% [markdown]
# ## Parameters

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
MODELS = {"MiniLM": f"{RUNS}/quickstart", "MPNet-base": f"{RUNS}/base-size"}  # saved by 00 and 02
SMALL_RUN = kr.RecipeConfig("minilm", out=MODELS["MiniLM"], limit=1600, epochs=3, batch_size=8)  # if 00's is missing
ACCURACY = 0.97  # what the answered texts should reach: the confidence threshold is chosen on validation for it
BINS = 15  # equal-width bins of the top probability, for the ECE and the diagrams (Guo et al.'s count)

# %%
if not Path(MODELS["MiniLM"]).exists():
    print(f"No predictor in {MODELS['MiniLM']} (00_quickstart saves one there): training a small one first")
    kr.run_recipe(SMALL_RUN)
found = {name: folder for name, folder in MODELS.items() if Path(folder).exists()}
print("measuring:", ", ".join(f"{name} ({folder})" for name, folder in found.items()))

# %% [markdown]
# ## STEP 1: The splits, and each model's probabilities
# Validation chooses (the temperature, the threshold); the test split is scored once, at the end of each step that
# needs it. Where the data has no test split (the small slice this package ships), half of validation stands in.

# %%
ds = kr.load_emotion()
val = (ds.texts("validation"), ds.labels("validation"))
if "test" in ds.splits:
    test = (ds.texts("test"), ds.labels("test"))
else:
    print("this data has no test split: half of its validation texts stand in for one")
    half = len(val[0]) // 2
    val, test = (val[0][:half], val[1][:half]), (val[0][half:], val[1][half:])
print(f"validation {len(val[0])} texts, test {len(test[0])} texts")

# %% [markdown]
# ktrain's `predict_proba` gives the model's own softmax; the label ids follow the predictor's classes.

# %%
probs, truth = {}, {}
for name, folder in found.items():
    predictor = kr.load_checked_predictor(folder)
    classes = list(predictor.get_classes())
    for split, (texts, labels) in (("validation", val), ("test", test)):
        probs[name, split] = np.asarray(predictor.predict_proba(texts))
        truth[name, split] = np.array([classes.index(y) for y in labels])
    del predictor
print({key: p.shape for key, p in probs.items()})

# %% [markdown]
# ## STEP 2: How sure, and how often right
# For each text, the model's *confidence* is its top probability. Put the texts into 15 bins by confidence: in a
# calibrated model each bin's accuracy equals its mean confidence. The expected calibration error (ECE) is the gap
# between the two, averaged over the bins by their share of texts; log-loss and the Brier score punish a confident
# mistake more than a hesitant one.

# %%
rows = {name: krt.calibration_scores(probs[name, "validation"], truth[name, "validation"], BINS) for name in found}
pd.DataFrame(rows).T[["accuracy", "mean_confidence", "ece", "log_loss", "brier", "n"]].round(4)

# %% [markdown]
# The reliability diagram draws the bins: confidence on the x axis, the share right on the y axis, the diagonal where
# the two agree. scikit-learn's `CalibrationDisplay` draws it from "was the top label right" and the confidence.

# %%
fig, ax = plt.subplots(figsize=(5, 5))
for name in found:
    p, y = probs[name, "validation"], truth[name, "validation"]
    CalibrationDisplay.from_predictions(p.argmax(axis=1) == y, p.max(axis=1), n_bins=BINS, name=name, ax=ax)
ax.set(xlabel="confidence (top probability)", ylabel="share right", title="validation, before scaling")
plt.show()

# %% [markdown]
# ## STEP 3: One temperature, fitted on validation
# Temperature scaling divides the logits by one number `T` before the softmax, chosen to minimise log-loss on
# validation. `T` above 1 softens an over-confident model, below 1 sharpens a timid one. Every logit is divided by
# the same positive number, so their order, and so the label, never changes.

# %%
temperature = {name: krt.fit_temperature(probs[name, "validation"], truth[name, "validation"]) for name in found}
table = []
for name in found:
    for split in ("validation", "test"):
        p, y = probs[name, split], truth[name, split]
        before = krt.calibration_scores(p, y, BINS)
        after = krt.calibration_scores(krt.scaled(p, temperature[name]), y, BINS)
        table.append({"model": name, "split": split, "T": temperature[name], "accuracy": before["accuracy"],
                      "ECE before": before["ece"], "ECE after": after["ece"], "log-loss before": before["log_loss"],
                      "log-loss after": after["log_loss"]})
pd.DataFrame(table).round(4)

# %% [markdown]
# The test rows are the test split's one scoring, at the temperature validation chose.

# %%
fig, axes = plt.subplots(1, len(found), figsize=(5 * len(found), 5), squeeze=False)
for ax, name in zip(axes[0], found):
    p, y = probs[name, "test"], truth[name, "test"]
    for label, q in (("before", p), (f"after (T={temperature[name]:.3f})", krt.scaled(p, temperature[name]))):
        CalibrationDisplay.from_predictions(q.argmax(axis=1) == y, q.max(axis=1), n_bins=BINS, name=label, ax=ax)
    ax.set(title=f"{name}, test split", xlabel="confidence (top probability)", ylabel="share right")
plt.show()

# %% [markdown]
# ## STEP 4: Answer only when sure
# Sort the validation texts by confidence and answer only those above a threshold: the share answered (*coverage*)
# falls and the accuracy of what is answered rises. The threshold is chosen on validation as the lowest confidence
# at which the answered texts reach `ACCURACY`, then applied once to test.

# %%
fig, ax = plt.subplots(figsize=(6, 4))
for name in found:
    curve = krt.coverage_curve(krt.scaled(probs[name, "validation"], temperature[name]), truth[name, "validation"])
    ax.plot(curve["coverage"], curve["accuracy"], label=name)
ax.axhline(ACCURACY, color="grey", linestyle=":", label=f"accuracy {ACCURACY}")
ax.set(xlabel="coverage (share of texts answered)", ylabel="accuracy of the answered texts",
       title="validation: accuracy against coverage", ylim=(None, 1.0))
ax.legend()
plt.show()

# %%
chosen, withholding = {}, []
for name in found:
    val_p = krt.scaled(probs[name, "validation"], temperature[name])
    try:
        chosen[name] = krt.choose_min_confidence(val_p, truth[name, "validation"], ACCURACY)["min_confidence"]
    except kr.RecipesError as refused:  # a weak model never reaches it: say so, and show the middle of its range
        print(f"{name}: {refused}")
        chosen[name] = float(np.median(val_p.max(axis=1)))
    on_test = krt.selective_scores(krt.scaled(probs[name, "test"], temperature[name]), truth[name, "test"],
                                   chosen[name])
    withholding.append({"model": name, "min_confidence": chosen[name], **{k: on_test[k] for k in (
        "coverage", "accuracy_answered", "withheld", "n")}})
pd.DataFrame(withholding).round(4)

# %% [markdown]
# ## STEP 5: The confident mistakes
# emotion's labels come from the hashtags the authors wrote, and in a study of 48 of its texts human annotators
# agreed with those labels on 0.458 of them: some of the model's most confident "mistakes" are the labels'. Read
# the test texts the last model measured was surest of and got wrong:

# %%
name = list(found)[-1]
p, y = krt.scaled(probs[name, "test"], temperature[name]), truth[name, "test"]
names = list(kr.load_checked_predictor(found[name]).get_classes())
wrong = np.flatnonzero(p.argmax(axis=1) != y)
surest = wrong[np.argsort(-p[wrong].max(axis=1))][:8]
pd.DataFrame({"text": [test[0][i] for i in surest], "label": [names[y[i]] for i in surest],
              "model says": [names[p[i].argmax()] for i in surest], "confidence": p[surest].max(axis=1).round(3)})

# %% [markdown]
# ## STEP 6: Record it in the predictor, and let it answer
# `krt.record_temperature` writes the temperature into the predictor's manifest (through a staged copy and a swap,
# as `export` does; `overwrite=True` replaces one recorded before, such as this notebook's last run). Every loader
# then applies it: `kr.classify`, the int8 copy, the command line and the service. `min_confidence` withholds the
# label of a text under it, its probabilities still given.

# %%
name = "MiniLM"
krt.record_temperature(found[name], temperature[name], {"chosen_on": "validation", "bins": BINS}, overwrite=True)
reloaded = kr.open_predictor(found[name])
texts = ["i feel so happy and relaxed today", "i am not sure how i feel about the move",
         "i was shocked and a little scared when the door slammed"]
pd.DataFrame(kr.classify(reloaded, texts, report=True, min_confidence=chosen[name]), index=texts)[
    ["label", "withheld", "tokens"]]

# %% [markdown]
# The same from the command line and over HTTP, for the predictor folder named in `$P`:
#
# ```bash
# ktrain-recipes calibrate --predictor "$P" --data /path/to/emotion --accuracy 0.97 --test --record
# ktrain-recipes predict --predictor "$P" --min-confidence 0.64 "i am not sure how i feel"
# curl -s localhost:8000/predict -d '{"texts": ["i am not sure how i feel"], "min_confidence": 0.64}'
# ```
#
# A withheld text's answer carries `"label": null` and `"withheld": true`; the service counts them in `/metrics`
# (`ktrain_recipes_withheld_texts_total`), and vLLM's `/classify` returns the scaled probabilities (its
# `use_activation: false`, the model's own logits).
#
# ## Several labels per text
# Notebook 11's thresholds are this notebook's idea for a sigmoid per label: a label is given only when its
# probability reaches a threshold chosen on validation, so a text can get no label at all, which is withholding. A
# temperature would not change which labels pass (each label's threshold is chosen on the probabilities as they
# are), so a multi-label predictor refuses one, and `min_confidence` with it.

# %% [markdown]
# ## Exercises
# **1.** Fit the temperature by the ECE instead of log-loss (try values of `T` from 0.5 to 3 and keep the one with
# the lowest validation ECE). Does the test ECE improve?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
name = list(found)[0]
grid = np.round(np.arange(0.5, 3.01, 0.05), 2)
ece = [krt.calibration_scores(krt.scaled(probs[name, "validation"], t), truth[name, "validation"], BINS)["ece"]
       for t in grid]
best = float(grid[int(np.argmin(ece))])
print(f"{name}: T by validation ECE {best}, test ECE "
      f"{krt.calibration_scores(krt.scaled(probs[name, 'test'], best), truth[name, 'test'], BINS)['ece']:.4f}")

# %% [markdown]
# <details><summary>What to look for</summary>
#
# The ECE over 2,000 texts moves by about a point from one bin's few texts to the next, so a temperature chosen by it
# fits validation's noise: compare its test ECE with STEP 3's. Log-loss uses every text's probability, not bins,
# which is why it is the usual criterion.
#
# </details>

# %% [markdown]
# **2.** Choose the threshold for an accuracy of 0.99 instead. How much coverage does it cost on test?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
for name in found:
    val_p = krt.scaled(probs[name, "validation"], temperature[name])
    try:
        at = krt.choose_min_confidence(val_p, truth[name, "validation"], 0.99)["min_confidence"]
    except kr.RecipesError as refused:
        print(f"{name}: {refused}")
        continue
    print(name, krt.selective_scores(krt.scaled(probs[name, "test"], temperature[name]), truth[name, "test"], at))

# %% [markdown]
# <details><summary>What to look for</summary>
#
# Each point of accuracy near the top costs far more coverage than the one before: the last mistakes are texts the
# model is sure of, many of them the labels' own mistakes (STEP 5), which no threshold removes.
#
# </details>

# %% [markdown]
# ## Check yourself
# A few questions on this notebook's ideas, to answer from memory; open each answer to check yourself.
#
# **1.** Why can temperature scaling never change a predicted label?
#
# <details><summary>Answer</summary>
#
# It divides every logit of a text by the same positive number, which keeps their order; the softmax keeps the
# order too, so the largest probability stays on the same label. Only how sure the model says it is changes.
#
# </details>
#
# **2.** Why are the temperature and the confidence threshold chosen on validation, and the test split scored once?
#
# <details><summary>Answer</summary>
#
# Both are settings fitted to data, like a learning rate: chosen on test, they would flatter the test figures.
# Validation chooses them; test, scored once with what validation chose, says what to expect on new texts.
#
# </details>
#
# **3.** A threshold is chosen for 97% accuracy on validation. What does a user of the service see for a text under
# it, and what is the cost?
#
# <details><summary>Answer</summary>
#
# The text gets no label (`"label": null`, `"withheld": true`) but still every probability; the cost is coverage:
# the share of texts answered falls, and someone (a person, another model) must handle the withheld ones.
#
# </details>

# %% [markdown]
# **More to try.** Run `ktrain-recipes calibrate` on a predictor trained on your own CSV (04): a small data set's
# model is often less well calibrated than emotion's, and its validation split must hold at least 100 texts.
#
# **Next:**
# [08_ethics_benchmark](08_ethics_benchmark.ipynb): ETHICS, sentence pairs and exact match over groups.
