# %% [markdown]
# # Better, or noise? A change judged against the seed spread
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/05_better_or_noise.ipynb)
#
# Train the same recipe twice with two seeds and the two scores differ: the classification head starts from other
# random weights, the batches come in another order, dropout drops other units. So when a change (a rate, int8,
# a teacher) moves accuracy by half a point, the question is not whether it moved, but whether it moved more than the
# recipe moves by itself. This notebook measures that spread on a small slice, judges one change against it seed by
# seed, and then reads one of our own recorded results the same way. The training is ktrain's calls, as in 01; the
# judging is a few lines of scipy.
#
# **You will learn**
#
# - how far one recipe's
#   [accuracy and macro-F1](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#accuracy-and-macro-f1)
#   move from seed to seed, measured rather than assumed;
# - a paired comparison: the same seeds with and without the change, the difference seed by seed, its mean and a 95%
#   interval (Student's t), and why pairing narrows the interval;
# - to say plainly whether an interval excludes zero, and how many seeds it would take to tell;
# - to read a recorded result (notebook 09's distillation) with the same rule.
#
# **What it needs.**
# A CPU: ten short MiniLM runs on a 1,200-text slice, about an hour and a half in all on a 2-core AMD EPYC CPU with
# AVX2 only, shared with other work for most of it (minutes on a GPU). No hub: MiniLM ships offline.
#
# Every notebook's time and results in one page:
# [What to expect](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/expect.md).
#
# **What `kr` adds here.** The training is ktrain's; ktrain has no seeds or repeated runs, so `kr.` seeds each run
# (`kr.set_seed`) on a stratified slice (`kr.load_emotion`, `kr.sample`), with maxlen from the texts and batches of
# similar length (`kr.resolve_model`, `kr.load_tokenizer`, `kr.resolve_maxlen`, `kr.bucket_batches`), scores each as
# values (`kr.score`), and reads our recorded result (`kr.committed_results`).

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
import ktrain
from ktrain import text
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

kr.setup_notebook()

# %% [markdown]
# ## Parameters
# One small recipe that learns, the quickstart's model and rate on a slice: 1,200 training texts, 3 epochs at batch 8
# (450 weight updates, about as many as `make demo` makes). Every run reads the same texts; only the seed changes.
# The change to judge is the rate: `CHANGE` times the recipe's.

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
config = kr.RecipeConfig(
    model="minilm",        # the offline 6-layer MiniLM
    data=None,             # None: $EMOTION_DATA, else the hub, else (offline) a slice
    epochs=3,
    lr=1e-4,
    batch_size=8,
    limit=1200,            # training texts, the same for every run
    eval_limit=1000,       # validation texts, the same for every run
)
SEEDS = [0, 1, 2, 3, 4]  # five seeds: each setting is trained once per seed
CHANGE = 2.0             # the change to judge: a rate CHANGE times the recipe's

# %% [markdown]
# ## STEP 1: The texts and the preprocessing, once
# The slice is drawn once (seed 0), so every run below reads the same 1,200 training and 1,000 validation texts; what
# differs between runs is only what the training seed decides.

# %%
ds = kr.load_emotion(config.data)
train = kr.sample(ds.texts("train"), ds.labels("train"), config.limit, seed=0)
val = kr.sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, seed=0)
model_path = kr.resolve_model(config.model)
maxlen = kr.resolve_maxlen(config.maxlen, kr.load_tokenizer(model_path), train[0])
t = text.Transformer(model_path, maxlen=maxlen, class_names=ds.label_names, batch_size=config.batch_size)
trn = t.preprocess_train(train[0], ds.label_ids(train[1]), verbose=0)
val_data = t.preprocess_test(val[0], ds.label_ids(val[1]), verbose=0)
len(train[0]), len(val[0]), maxlen

# %% [markdown]
# ## STEP 2: One run, as a function of its seed and rate
# The steps of notebook 01 with the plots left out: seed everything, a fresh classifier (the head's random weights
# come from the seed), batches of like length in the seed's order, the one-cycle schedule, then the validation
# scores.

# %%
def train_once(seed: int, lr: float) -> dict:
    kr.set_seed(seed)  # Python, numpy and TensorFlow: the head's weights, the batch order, dropout
    learner = ktrain.get_learner(t.get_classifier(), train_data=kr.bucket_batches(trn, seed),
                                 val_data=kr.bucket_batches(val_data, seed), batch_size=config.batch_size)
    learner.fit_onecycle(lr, config.epochs, verbose=0)
    predictor = ktrain.get_predictor(learner.model, preproc=t, batch_size=64)
    metrics = kr.score(val[1], predictor.predict(val[0]), ds.label_names)
    return {"seed": seed, "lr": lr, "accuracy": metrics["accuracy"], "macro_f1": metrics["macro_f1"]}


# %% [markdown]
# ## STEP 3: The same recipe, five seeds
# Nothing changes between these runs but the seed.

# %%
base = pd.DataFrame([train_once(seed, config.lr) for seed in SEEDS]).set_index("seed")
base

# %% [markdown]
# On 450 weight updates the recipe learns: every seed scores far above 0.352, what answering the most common label
# to every text would score (the majority baseline in
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md)). It is still far
# from notebook 00's run on all 16,000 texts, and on so little training the seed decides a great deal: the head's
# first weights and the order of 150 batches an epoch set where the run ends. The spread in points (hundredths of
# accuracy): the standard deviation across seeds, and the gap between the best and the worst seed. A change smaller
# than this gap can look like a gain or a loss on one pair of runs by chance.

# %%
spread = (100 * base[["accuracy", "macro_f1"]]).agg(["mean", "std", "min", "max"]).T
spread["max - min"] = spread["max"] - spread["min"]
spread.round(2)

# %% [markdown]
# ## STEP 4: The change, on the same seeds
# Each seed now trains once more with the rate changed. Seed 0 with the change is the twin of seed 0 without it:
# same head weights at the start, same batch order.

# %%
changed = pd.DataFrame([train_once(seed, CHANGE * config.lr) for seed in SEEDS]).set_index("seed")
pairs = pd.DataFrame({"recipe": base["accuracy"], "changed": changed["accuracy"]})
pairs["difference (points)"] = 100 * (pairs["changed"] - pairs["recipe"])
pairs

# %% [markdown]
# Each line joins a seed's two runs. Lines that all slope the same way are a change the seeds agree on; lines that
# cross are a change lost in the spread.

# %%
fig, ax = plt.subplots(figsize=(4.5, 4))
for seed, row in pairs.iterrows():
    ax.plot([0, 1], [row["recipe"], row["changed"]], marker="o", color="tab:blue", alpha=0.7)
    ax.annotate(f"seed {seed}", (1.03, row["changed"]), va="center", fontsize=8)
ax.set_xticks([0, 1], [f"lr {config.lr:g}", f"lr {CHANGE * config.lr:g}"])
ax.set_xlim(-0.2, 1.35)
ax.set_ylabel("validation accuracy")
ax.set_title("each seed with and without the change")
fig

# %% [markdown]
# ## STEP 5: The paired comparison
# The differences, seed by seed, are what we judge: their mean, and a 95% interval from Student's t with one fewer
# degrees of freedom than seeds (few seeds, so the interval is wider than a normal one). If the interval lies wholly
# above zero, the seeds support a gain; if it holds zero, these runs cannot tell the change from the spread. The
# function says which, in words.

# %%
def paired_interval(differences, confidence: float = 0.95) -> dict:
    """Mean of paired differences (points), its t interval and the paired t-test's p-value."""
    d = np.asarray(differences, dtype=float)
    low, high = stats.t.interval(confidence, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    return {"pairs": len(d), "mean": d.mean(), "sd": d.std(ddof=1), "low": low, "high": high,
            "p": stats.ttest_1samp(d, 0).pvalue}


def verdict(result: dict) -> str:
    interval = f"{result['mean']:+.2f} points, 95% interval {result['low']:+.2f} to {result['high']:+.2f}"
    if result["low"] > 0:
        return f"a gain the seeds support ({interval}: it excludes zero)"
    if result["high"] < 0:
        return f"a loss the seeds support ({interval}: it excludes zero)"
    return f"not told apart from the seed spread ({interval}: it holds zero)"


rate = paired_interval(pairs["difference (points)"])
print(verdict(rate))
pd.Series(rate).round(3)

# %% [markdown]
# Doubling the rate cost points on every seed, from 14.6 to 49.8, and the interval lies far below zero. Two seeds
# ended at 0.352, what answering the most common label to every text scores: at batch 8, a rate of 2e-4 unsettles
# the pretrained weights until the model stops reading the texts. That is this recipe's rate, not a rule about
# doubling: the quickstart trains MiniLM at 1e-4 on batches of 32, and a rate too high for small batches can suit
# larger ones (notebook 01's LR finder is how to choose one). A change this large needs few seeds (the count below
# says how few); the recorded result further down is the other kind.

# %% [markdown]
# Pairing helps when much of a run's score comes from its seed: a seed that draws a good start is good with and
# without the change, and the difference cancels it. Compared unpaired instead (two independent groups, Welch's
# interval), each group's seed-to-seed spread counts against the change. The same ten runs, both ways:

# %%
a, b = 100 * pairs["changed"], 100 * pairs["recipe"]
welch = stats.ttest_ind(a, b, equal_var=False)
low, high = welch.confidence_interval(0.95)
pd.DataFrame({"paired": [rate["low"], rate["high"]], "unpaired (Welch)": [low, high]},
             index=["95% low", "95% high"]).round(2)

# %% [markdown]
# How many seeds would tell? If the mean difference and its seed-to-seed spread stayed what these runs measured, the
# interval narrows as one over the square root of the number of pairs. The smallest number of pairs whose interval
# would exclude zero:

# %%
def pairs_needed(mean: float, sd: float, confidence: float = 0.95, most: int = 200) -> int | None:
    """The fewest pairs whose t interval around ``mean`` excludes zero, if the spread stays ``sd``."""
    for n in range(2, most + 1):
        if stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / np.sqrt(n) < abs(mean):
            return n
    return None  # more than `most`: the change is too small against the spread to measure this way


pairs_needed(rate["mean"], rate["sd"])

# %% [markdown]
# ## STEP 6: One of our results, read the same way
# Notebook 09 distils MPNet-base into MiniLM, and the student that also learns from altered copies of each text
# (transfer data, labelled by the teacher) scored above its twin trained on the labels alone. Each run wrote its
# figures to a file (`docs/mpnet/student-augment-s*.json` and `student-labels-s*.json` in this project); here are the
# pairs recorded so far, read from those files, judged by the same two functions.

# %%
from pathlib import Path

recorded = kr.committed_results()  # docs/results.json of the checkout this package runs from, or None
folder = Path(recorded).parent / "mpnet" if recorded else None
import json

rows = []
for path in sorted(folder.glob("student-augment-s*.json")) if folder else []:
    seed = path.stem.rsplit("-s", 1)[1]
    twin = folder / f"student-labels-s{seed}.json"
    if twin.is_file():
        rows.append({"seed": int(seed), "labels alone": json.loads(twin.read_text())["accuracy"],
                     "with transfer data": json.loads(path.read_text())["accuracy"]})
distill = pd.DataFrame(rows).set_index("seed") if rows else None
if distill is None:
    print("the recorded runs are not in this installation: clone the project to read them")
else:
    distill["difference (points)"] = 100 * (distill["with transfer data"] - distill["labels alone"])
distill

# %%
if distill is not None and len(distill) >= 2:
    transfer = paired_interval(distill["difference (points)"])
    print(verdict(transfer))
    print("pairs that would tell, at this mean and spread:", pairs_needed(transfer["mean"], transfer["sd"]))
    print(f"t's 95% point with {len(distill) - 1} degree(s) of freedom: "
          f"{stats.t.ppf(0.975, len(distill) - 1):.1f} standard errors")

# %% [markdown]
# Five pairs, and every seed gained with transfer data (+0.10 to +1.20 points), yet the interval (-0.16 to +0.96)
# still holds zero: these runs cannot tell the gain from the spread. The seeds agree on its sign but not on its size:
# seed 42's +1.20 is far from the other four, and with four degrees of freedom t's 95% point is still 2.8 standard
# errors (the last line above). If the mean and the spread stayed as measured, the count above says how many pairs
# would exclude zero (eight); it is an estimate, since each new seed moves both. And an interval that excluded zero
# would still not support the gain of half a point we aimed for: the mean itself, +0.40, is below it.
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#mpnet-base-teaches-minilm)
# adds the pairs as they are recorded, and this cell reads whatever is there.

# %% [markdown]
# ## Recap
# One recipe moves by itself from seed to seed; measure that spread before judging a change. Run the change on the
# same seeds, judge the differences seed by seed, and say whether their 95% interval excludes zero. Few seeds give
# wide intervals: two pairs can almost never settle a difference of a point, and five did not settle ours.

# %% [markdown]
# ## Exercises
# Each exercise has its solution in the hidden cell below it: try it first, then open the cell (on Colab,
# "Show code"; in Jupyter, the collapsed input). The solutions run in this project's tests, so they work
# with the code above.
#
# **Exercise 1.** Judge the change on macro-F1 instead of accuracy. Do the seeds agree on it as well?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
f1 = paired_interval(100 * (changed["macro_f1"] - base["macro_f1"]))
print(verdict(f1))

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# They do, and the loss is larger on macro-F1 (-56.31 points on average, interval -77.06 to -35.56) than on accuracy:
# a run that answers mostly one label still gets that label's texts right, so its accuracy keeps the label's share,
# while macro-F1 averages over all six labels and gives the five it never answers nothing.
# </details>

# %% [markdown]
# **Exercise 2.** The validation set is a sample too: an accuracy p measured on n texts has a standard error of
# about sqrt(p (1 - p) / n). Compare it with the seed-to-seed standard deviation of STEP 3. Which is larger here?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
p = base["accuracy"].mean()
pd.Series({"validation sample's standard error (points)": 100 * np.sqrt(p * (1 - p) / len(val[0])),
           "seed-to-seed standard deviation (points)": 100 * base["accuracy"].std()}).round(2)

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# On the committed run the seeds' spread is the larger: their standard deviation is 4.42 points (STEP 3), while
# 1,000 validation texts at this accuracy give a standard error of 1.18 points. Even on a recipe that learns, 450
# updates leave the seed deciding more of what a single run shows than the sample of validation texts does. With all
# the data the seeds agree to a few tenths and the two become comparable: then a bigger validation set matters as
# much as more seeds.
# </details>

# %% [markdown]
# ## Check yourself
# A few questions on this notebook's ideas, to answer from memory; open each answer to check yourself.
#
# **1.** Why run one recipe on several seeds before judging a change to it?
#
# <details><summary>Answer</summary>
#
# The seed moves the new head's starting weights, dropout and the batch order, and the score moves with them. A change
# counts only if it moves the score by more than that spread.
#
# </details>
#
# **2.** Why judge the change seed by seed, as differences, rather than by two averages?
#
# <details><summary>Answer</summary>
#
# Two runs on the same seed share much of their randomness; their difference removes it, so the interval on the
# differences is narrower than the one on two independent averages.
#
# </details>
#
# **3.** The 95% interval of the differences includes zero. What may you conclude?
#
# <details><summary>Answer</summary>
#
# That these runs do not settle whether the change helps. Not that it is useless: more seeds, or more validation
# texts, narrow the interval.
#
# </details>

# %% [markdown]
# **More to try.** Judge another change with the same cells: `epochs=4`, a `batch_size` of 16, or the int8 copy of
# each run's predictor (notebook 07 makes one). Then add seeds to `SEEDS` and watch the interval narrow.
#
# **Next:**
# [06_compare_models](06_compare_models.ipynb): every saved run side by side; a gap between two of them means more once
# you know the spread.
