# %% [markdown]
# # Compare the models side by side
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/06_compare_models.ipynb)
#
# Every run of the recipe writes `metrics.json` beside its predictor. This notebook reads them: nothing here is typed
# in. Run notebooks 00-02 (or `python -m ktrain_recipes train --out runs/<name>`) first.
#
# **You will learn**
#
# - to read several runs side by side from what each saved:
#   [accuracy and macro-F1](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#accuracy-and-macro-f1),
#   training time, size and latency;
# - where each model's parameters live, and why size and speed differ
#   [(FLOP)](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#flop);
# - how the models others fine-tuned score on the same test texts.
#
# **What it needs.**
# Saved runs (00 makes one on a CPU); scoring the published models needs the hub and a few minutes each on a CPU.
#
# Every notebook's time and results in one page:
# [What to expect](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/expect.md).
#
# **What `kr` and `krt` add here.** Comparing runs is a study, so this notebook imports its tools by name, as d2l's
# chapters import `d2l`: `krt` is `ktrain_recipes_tools`, the tools beside the helper `kr`. ktrain trains and predicts
# one model at a time; setting several side by side is ours:
# `krt.compare_runs` reads each saved run's metrics, `kr.committed_results` the course's reference runs,
# `krt.recommend` argues a choice from them, `krt.plot_latency_vs_accuracy` and `krt.save_figure` draw and keep the
# picture, `krt.parameter_table`, `krt.plot_parameters` and `krt.albert_arithmetic` count parameters, and the published
# models come through ktrain's own wrapper (`krt.published_models`, `krt.hub_reachable`, `krt.compare_finetuned`),
# scored on data from `kr.load_emotion` beside our predictors (`krt.read_manifest`, `kr.open_predictor`).

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
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
DATA = None          # emotion: None downloads it from the hub (or reads $EMOTION_DATA); or a folder
TEST_LIMIT = 400     # test texts each published model is scored on (None: all 2,000; minutes per model on a CPU)
MODELS, CARDS = krt.published_models()  # BERT, RoBERTa, DistilBERT and ALBERT fine-tuned on emotion (hub ids)
pd.set_option("display.precision", 3)

# %% [markdown]
# ## The table
# Accuracy and macro-F1 on validation; training time; single-text latency (p50) and batch throughput of the saved
# predictor; parameters (millions) and weights on disk (MB). Your runs (each folder under `RUNS`) sit beside the runs
# we recorded in `docs/results.json`, each of those named `<run> (record)`; on a fresh machine the record alone.
# Only runs on emotion's six labels are compared: a run on your own CSV (notebook 04) scores another task.

# %%
ds = kr.load_emotion(DATA)  # its labels pick the runs to compare here; its test split scores them further down
table = krt.compare_runs(RUNS, committed=kr.committed_results())
emotion = ",".join(ds.label_names)  # a run on other labels (your own data, ETHICS) is another task
print("left out, another task:", ", ".join(table.index[table["labels"] != emotion]) or "none")
table = table[table["labels"] == emotion]
table

# %% [markdown]
# Here the runs folder holds two runs of our own on emotion: notebook 01's MiniLM (`minilm-steps`) and MPNet-base
# trained with notebook 02's settings by the command line (`mpnet-base`), which the record also holds
# (`base-size-cli-3ep`): one run read twice, from its folder and from the record, so the two rows agree. The record
# adds the quickstart (`quickstart-3ep`), notebook 02's earlier run (`base-size-3ep`: its accuracies are those of 02's
# committed outputs, its times were taken with other work on the cores) and an earlier 4-epoch MiniLM run;
# notebook 04's two runs on its own CSV are left out (the line above names them). MPNet-base is about a point more
# accurate than the MiniLM runs on validation (0.944 against 0.931 to 0.936) for about five times the parameters: the
# trade-off the chart below draws.
#
# Whether a gap of a point or less between two runs is a real difference or the seed's doing is what
# [05_better_or_noise](05_better_or_noise.ipynb) measures: the same recipe moves by itself from seed to seed.
#
# The timing columns are what each run measured when it saved, on whatever else the CPU was doing then
# (docs/results.md says, run by run). The recommendation below reads the table as it is. The table of the published
# models further down times every model in one pass, and is the one to compare speeds with.

# %% [markdown]
# ## Latency against accuracy
# Up and to the left is better; the bubble's area is the model's size.

# %%
fig = krt.plot_latency_vs_accuracy(table)
krt.save_figure(fig, f"{RUNS}/compare_models.png")
fig

# %% [markdown]
# ## Which model for which use
# Computed from the table above:

# %%
from IPython.display import Markdown
Markdown(krt.recommend(table))

# %% [markdown]
# ## Where the parameters live
# Each registry model, built by transformers from its published configuration with random weights (nothing is
# downloaded), its weights counted by part. Word embeddings (vocabulary x hidden size) are a large share of every
# small model; the encoder layers are most of a large one. Sizes are at fp32, fp16 and int8 (what `export` quantizes
# to).

# %%
params = krt.parameter_table()
params

# %%
krt.plot_parameters(params)

# %% [markdown]
# ALBERT is small for two reasons, both visible in the arithmetic: its word embeddings are factorised (V x E + E x H,
# with E = 128, instead of V x H), and its 12 encoder layers share one set of weights, so it stores one layer where
# BERT-base stores twelve.

# %%
pd.Series(krt.albert_arithmetic())

# %% [markdown]
# ## The four models of the article, fine-tuned by others
# The article is the one this course grew from, Adrien Payong's
# ["BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"][payong]
# (Paperspace blog).
# Fine-tuning BERT, RoBERTa, DistilBERT and ALBERT takes hours on a CPU, but others have published each one
# fine-tuned on emotion. ktrain's tutorial A3 shows how to use such a model as it is: `text.Transformer` gives
# the preprocessor (the model's own tokenizer), transformers loads the fine-tuned weights, and
# `ktrain.get_predictor` joins them. `krt.wrap_finetuned` does exactly that, and checks the model's label order
# against the data's (by name; a model whose labels are `LABEL_0..5` is taken in the data's order, with a note).
# `krt.compare_finetuned` scores each on the emotion **test** split (where the data has none, as the local copy
# behind the outputs below, on validation, and it says so) and times it: single-text latency (p50) and
# batch throughput. Our runs join the table when they exist: fp32, and int8 where exported. The last column is the test
# accuracy each model's card reports; where ours differs, both are shown. On a Colab CPU this takes minutes
# (`TEST_LIMIT` texts per model; `None` scores all 2,000). The published models come from the Hugging Face hub:
# where it cannot be reached, only our runs are scored, and the cards' figures are printed instead.
#
# [payong]: https://blog.paperspace.com/bert-pre-training-of-deep-bidirectional-transformers-for-language-understanding/

# %%
from pathlib import Path

ours = {}
for run in sorted(Path(RUNS).glob("*/manifest.json")):
    manifest = krt.read_manifest(run.parent)
    if manifest.get("kind") == "ranker" or manifest["label_names"] != ds.label_names:
        continue  # another task's run (ETHICS, your own data)
    ours[f"{run.parent.name} (ours, fp32)"] = kr.open_predictor(run.parent)
    if (run.parent / "model.int8.onnx").exists():
        ours[f"{run.parent.name} (ours, int8)"] = kr.open_predictor(run.parent, int8=True)
reachable = {name: model for name, model in MODELS.items() if Path(model).exists() or krt.hub_reachable()}
if len(reachable) < len(MODELS):
    print("The Hugging Face hub cannot be reached, so the published models are left out. Their cards report test "
          "accuracy " + ", ".join(f"{name} {accuracy}" for name, accuracy in CARDS.items()))
split = "test" if "test" in ds.splits else "validation"  # a copy of emotion without its test split: validation
print(f"scoring on {split}")
published = krt.compare_finetuned({**reachable, **ours}, ds, split=split, limit=TEST_LIMIT, cards=CARDS)
published

# %% [markdown]
# On 400 of the test texts MPNet-base scores 0.940 and notebook 01's MiniLM 0.932; on all 2,000, each scored once
# after training, they score 0.9360 and 0.9250 (their records in docs/results.md). The published models' cards claim
# 0.936 to 0.9405 on the same split; the hub's verified figures are lower, 0.9265 to 0.931 (notebook 03). Like for
# like, MPNet-base's 0.9360 on the whole split is half a point above the best verified figure, RoBERTa-base's 0.931:
# one run, and notebook 05 shows how far one run can move. The MiniLM answers one text in a little over half the
# time and gets through a batch about six times faster (measured in one pass here, with other work on the CPU).
# Export a run (`python -m ktrain_recipes export --predictor runs/minilm-steps`, notebook 07) and its int8 copy joins
# this table; on all of validation, int8 costs MPNet-base 1.35 points where MiniLM loses none (docs/results.md). With
# the hub, the four published models join it too. 400 texts are too few to order models that are a point apart.

# %%
fig = krt.plot_latency_vs_accuracy(published, size="params_m")
krt.save_figure(fig, f"{RUNS}/published_models.png")
fig

# %% [markdown]
# ## Recap
# Every figure above was read from a run's own `metrics.json`, not typed in: one table of your runs, one of the
# published models, and a chart of latency against accuracy where a good model sits high and to the left.

# %% [markdown]
# ## Exercises
# Each exercise has its solution in the hidden cell below it: try it first, then open the cell (on Colab,
# "Show code"; in Jupyter, the collapsed input). The solutions run in this project's tests, so they work
# with the code above.
#
# **Exercise 1.** For each run in the first table, how many points of accuracy does it gain over the quickstart's
# record, and how many more minutes of training did that cost?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
base = table.loc["quickstart-3ep (record)"]
pd.DataFrame({"points gained": 100 * (table["accuracy"] - base["accuracy"]),
              "extra minutes of training": (table["train_seconds"] - base["train_seconds"]) / 60}).round(2)

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# On the committed run, MPNet-base gains 1.20 points of validation accuracy over the quickstart's record (the command
# line's run, 157.12 more minutes of training on a 2-core AVX2 CPU) and 0.70 (notebook 02's earlier run, 77.09 more,
# on an AVX-512 Xeon shared with other work); the MiniLM runs gain half a point or less and trained for less time than
# the quickstart, whose run shared its cores with other work, so its minutes are long. Gains of a point or less are
# within what a second seed can move on 2,000 validation texts: notebook 05 shows how to tell.
# </details>

# %% [markdown]
# **Exercise 2.** What share of each model's parameters is its embeddings (the vocabulary), and which model spends
# most there?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
(params["embeddings"] / params["total"]).sort_values(ascending=False).round(3).rename("share in embeddings")

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# The small models spend the most there: TinyBERT about two thirds of its parameters (9.68 of 14.35 million) and
# MiniLM about half (11.92 of 22.71 million), because a vocabulary of 30,522 words costs the same whatever the depth.
# The base-size models spend about a fifth, RoBERTa (a 50,265-word vocabulary) about a third, and ALBERT keeps its
# share to a third of a model about a tenth of BERT-base's size by factorising the embeddings (the arithmetic above).
# </details>

# %% [markdown]
# ## Check yourself
# A few questions on this notebook's ideas, to answer from memory; open each answer to check yourself.
#
# **1.** Why is every figure in these tables read from a run's `metrics.json` instead of typed in?
#
# <details><summary>Answer</summary>
#
# A typed figure stays as it was when the run changes; a figure read from the run's own file follows it, so the table
# cannot disagree with the runs.
#
# </details>
#
# **2.** In the chart of latency against accuracy, which models are worth choosing among?
#
# <details><summary>Answer</summary>
#
# Those no other model beats on both: more accurate and faster. They sit on the upper-left edge; any model below and
# to the right of another is never the better choice.
#
# </details>
#
# **3.** Why set the published models' figures beside our test-split scores, and not beside our validation ones?
#
# <details><summary>Answer</summary>
#
# The published figures were measured on the test split. Only test against test is like for like; and our validation
# figures helped choose our models, which flatters them.
#
# </details>

# %% [markdown]
# **More to try.** Train one more model with the command line (`python -m ktrain_recipes train --model distilbert
# --limit 2000 --out runs/distilbert-2k`) and run this notebook again: it joins the table.
#
# **Next:**
# [07_reuse_predictor](07_reuse_predictor.ipynb): put a saved predictor to work.
