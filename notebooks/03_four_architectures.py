# %% [markdown]
# # BERT, RoBERTa, DistilBERT and ALBERT, measured where no weights are needed
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/03_four_architectures.ipynb)
#
# The article this course grew from, Adrien Payong's
# ["BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"][payong]
# (Paperspace blog), fine-tunes four models of one family. They differ in how they cut text into pieces, where their
# parameters live and what they cost, and all of that can be shown without their pretrained weights: a tokenizer
# needs only its vocabulary, a parameter count only the model's configuration, and the time a forward and backward
# pass takes does not depend on the weights' values. Only accuracy needs the weights, and for that this notebook
# shows what others published. 02_base_size_emotion fine-tunes a model of this size step by step.
#
# **You will learn**
#
# - how WordPiece cuts a tweet, and that BERT-base and DistilBERT read it with one vocabulary file;
# - where each model's parameters live: embeddings, encoder layers, pooler (ALBERT's factorised embeddings and shared
#   layers);
# - to measure what a model costs to train and to run, at its real size, on your own hardware;
# - what the four score on emotion when fine-tuned, as published.
#
# **What it needs.** A CPU and about 20 minutes (six models measured twice, then the exercises). The hub is used
# only where it says so (RoBERTa's and ALBERT's tokenizers); without it those cells say what they would show.
#
# Every notebook's time and results in one page:
# [What to expect](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/expect.md).
#
# **What you will see.** The outputs of a real run on a 2-core AMD EPYC CPU (AVX2, no AVX-512) and no GPU. Other
# notebooks trained on the same two cores while the costs were measured, and that moved the rows unevenly: read the
# cost table's large ratios, not its small ones, and not as this CPU's best.
#
# **What `kr` and `krt` add here.** This notebook is a study, so it imports its tools by name, as d2l's chapters
# import `d2l`: `krt` is `ktrain_recipes_tools`, the tools beside the helper `kr` (the learner's notebooks 00-02 need
# only `kr`). ktrain has no calls for comparing architectures: the tokenizer check uses transformers,
# and every table here is this course's own measurement code. `kr.resolve_model` finds the offline MiniLM,
# `krt.hub_reachable` says whether the hub can be asked, `krt.parameter_table`, `krt.plot_parameters` and
# `krt.albert_arithmetic` count parameters from each model's configuration, `krt.CostSettings` and `krt.cost_table`
# time each architecture at its real size with random weights, and `krt.published_table` shows what others published.
#
# [payong]: https://blog.paperspace.com/bert-pre-training-of-deep-bidirectional-transformers-for-language-understanding/

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
import hashlib
from pathlib import Path

import ktrain_recipes as kr
import ktrain_recipes_tools as krt
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters
# Which architectures to measure, and the input shape: the recipe's maxlen and batch on emotion, and one tweet of
# average length for the single-text timing. MiniLM and MPNet, the two models with weights offline, are measured
# the same way beside the four.

# %%
settings = krt.CostSettings(
    architectures=("bert", "roberta", "distilbert", "albert", "minilm", "mpnet"),
    maxlen=64,        # tokens per training text (emotion's 99.9th percentile is 66 with [CLS] and [SEP])
    batch_size=32,    # texts per weight update
    text_tokens=22,   # one tweet at inference: emotion's mean length in tokens
    steps=5,          # timed training steps per model, after one that builds the graph
    rounds=2,         # passes over the models in turn: each figure is their median, with the training rate's spread
)

# %% [markdown]
# ## 1. Tokenizers: one vocabulary for BERT and DistilBERT
# `bert-base-uncased` and `distilbert-base-uncased` read text with the same file, `vocab.txt`: 30,522 WordPiece
# entries, lower-cased. The offline MiniLM ships a copy of it. Its size and digest:

# %%
vocab = Path(kr.resolve_model("minilm")) / "vocab.txt"
entries = vocab.read_text(encoding="utf-8").splitlines()
{"entries": len(entries), "bytes": vocab.stat().st_size, "sha256": hashlib.sha256(vocab.read_bytes()).hexdigest(),
 "first special ids": {t: entries.index(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")}}

# %% [markdown]
# 30,522 entries and 231,508 bytes, with `[PAD]` at 0 and `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]` at 100-103: the
# layout of `bert-base-uncased`'s `vocab.txt`, whose size is the same 231,508 bytes in the public copies we compared
# it with, and whose ids transformers' own documentation prints: `"Hello world"` becomes `[101, 7592, 2088, 102]`.
# The tokenizers built from this file give the same:

# %%
from transformers import BertTokenizerFast, DistilBertTokenizerFast

bert_tokenizer = BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True)
distilbert_tokenizer = DistilBertTokenizerFast(vocab_file=str(vocab), do_lower_case=True)
bert_tokenizer("Hello world")["input_ids"]

# %% [markdown]
# A tweet, cut by both. The pieces and ids are the same; what differs is what the model is handed: BERT takes
# `token_type_ids` (which segment of a pair each piece is in), DistilBERT does not (it dropped them with BERT's
# next-sentence task).

# %%
tweet = "i feel so overwhelmed and unappreciated at work lately"
print(bert_tokenizer.tokenize(tweet))
print({name: list(tok(tweet)) for name, tok in [("bert", bert_tokenizer), ("distilbert", distilbert_tokenizer)]})
print(bert_tokenizer(tweet)["input_ids"])

# %% [markdown]
# `overwhelmed` and `unappreciated` are not in the vocabulary, so WordPiece cuts them into pieces it has; `##` marks
# a piece that continues a word. For a pair, BERT's segment ids tell the two sentences apart:

# %%
pair = bert_tokenizer("i lost my keys", "i feel so stupid")
pd.DataFrame({"piece": bert_tokenizer.convert_ids_to_tokens(pair["input_ids"]),
              "token_type_id": pair["token_type_ids"]}).T

# %% [markdown]
# RoBERTa reads bytes with a BPE of 50,265 entries (`vocab.json` and `merges.txt`, `<s>` and `</s>` in place of
# `[CLS]` and `[SEP]`, and a `Ġ` marking a piece that starts after a space); ALBERT reads SentencePiece's 30,000
# pieces (`spiece.model`, `▁` marking a word start). Those files come only with the models, from the hub: no package
# on PyPI carries them. With the hub, this cell prints both tokenizations of the same tweet.

# %%
if krt.hub_reachable():
    from transformers import AutoTokenizer

    for hub_id in ("roberta-base", "albert-base-v2"):
        other = AutoTokenizer.from_pretrained(hub_id)
        print(hub_id, len(other), other.tokenize(tweet), other(tweet)["input_ids"], sep="\n  ")
else:
    print("the Hugging Face hub is out of reach: RoBERTa's and ALBERT's tokenizer files cannot be fetched here")

# %% [markdown]
# ## 2. Where the parameters live
# Each model is built from its published configuration (layers, width, vocabulary) with random weights, and its
# weights are counted by part, in millions. Sizes are the weights on disk at 4, 2 and 1 bytes per parameter.

# %%
params = krt.parameter_table(settings.architectures)
params

# %%
krt.plot_parameters(params)

# %% [markdown]
# BERT-base and RoBERTa-base have the same encoder (85.1M in 12 layers); RoBERTa's larger vocabulary (50,265 byte
# pieces against 30,522) adds 15M to its embeddings. DistilBERT keeps 6 of the 12 layers: half the encoder, and no
# pooler. MPNet has BERT-base's shape. ALBERT is the odd one: 12 layers that share one set of weights (7.1M counted
# once), and embeddings factorised through a width of 128. The arithmetic of both savings:

# %%
krt.albert_arithmetic()

# %% [markdown]
# A BERT-style embedding table would be 30,000 x 768 = 23.0M; ALBERT's is 30,000 x 128 + 128 x 768 = 3.9M. Twelve
# separate layers would be 85.1M; shared, they are 7.1M. Shared weights are stored once but computed twelve times:
# the next section shows what that does to speed.
#
# ## 3. What each costs, measured
# For each model: a training step on a batch of 32 texts of 64 tokens (Adam, the classification head of 6
# emotions), timed over a few steps after one that builds the graph; then one tweet at a time at inference (the
# median over 20 calls), and one batch (the median of 3 calls). Every model is measured in two passes, taken in
# turn, and each figure is the median of the two: a busy minute of the machine falls on one pass, not on one model.
# `train_spread_pct` says how far apart the two passes' training rates were. The weights are random: the
# arithmetic, and so the time, is the same as with pretrained weights. GFLOP/s counts 6 x parameters per token
# (outside the embeddings, which are look-ups) x tokens per second. Compare rows, not machines.

# %%
cost = krt.cost_table(settings)
cost

# %% [markdown]
# Read the spread column first: the two passes of BERT-base were 29% apart, ALBERT's 1%, so only ratios well
# beyond about a third say something about the models. BERT-base and RoBERTa-base have the same encoder (RoBERTa's
# larger embedding table is a look-up) and train alike (2.6 and 2.9 examples/s); MPNet-base, the same shape, trains
# at 2.1, within that spread of them. DistilBERT's 6 layers answer one text in about half BERT's time (36.9 ms
# against 68.7) and train faster (4.0), though not twice as fast. ALBERT, with a tenth of BERT's parameters, is no
# faster at inference (78.7 ms per text; 11 texts/s in a batch against BERT's 12): it runs its one shared layer
# twelve times at the same width (its GFLOP/s column counts that layer once, so it understates ALBERT's arithmetic
# twelvefold). It trains a little faster than BERT (3.2, the steadiest row) although it computes as much per token:
# Adam reads and writes three numbers for every weight at each step, and ALBERT has a tenth of the weights, the
# likely difference, not measured apart. (A batch timed with one call, as an earlier version of this table did, once
# showed ALBERT at twice BERT's batch rate: one busy moment. Three calls and two passes keep that out.) MiniLM (6
# layers, width 384) is several times faster than any of them (14.6). The examples/s column turns into hours:
# 16,000 texts x 2 epochs divided by it is a full run's training time on this CPU (bucketed batches are shorter than
# 64 tokens, so a real run goes faster than this bound).

# %%
(2 * 16_000 / cost["train_examples_per_s"] / 60).round(0).rename("minutes for 2 epochs of emotion at maxlen 64")

# %% [markdown]
# ## 4. What they score, as published
# Accuracy needs the pretrained weights and a fine-tuning run. These are the figures others published for the four
# fine-tuned on emotion: the hub's own verified evaluation on the 2,000 test texts where there is one, and each model
# card's claim (about a point higher; the speeds are the cards', hardware unstated). Like for like, our quickstart's
# MiniLM scored once on the same 2,000 test texts reaches 0.9265, BERT-base's verified figure, with a fifth of its
# parameters, and MPNet-base (notebook 02's settings, trained by the command line) reaches 0.9360, half a point above
# RoBERTa-base's verified 0.931: one run each, and notebook 05 shows how far one run can move
# ([the record](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.json),
# [docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md) lists every run;
# 06_compare_models sets our runs beside these models).

# %%
krt.published_table()

# %% [markdown]
# Between 0.9265 and 0.931 verified: the four land within half a point of each other on this task, and single runs
# of one model differ by about as much. What separates them is the cost above.
#
# ## Recap
# BERT-base and DistilBERT share one WordPiece vocabulary (shown by its size, layout and ids); RoBERTa and ALBERT bring
# their own. Parameters live mostly in the encoder, except for ALBERT, which shares its layers and factorises its
# embeddings, and so is small on disk but not fast. Speed follows the arithmetic per token: layers x width², measured
# here with random weights at each model's real size. Accuracy on emotion is close across the four.

# %% [markdown]
# ## Exercises
# Each exercise has its solution in the hidden cell below it: try it first, then open the cell (on Colab,
# "Show code"; in Jupyter, the collapsed input). The solutions run in this project's tests, so they work
# with the code above.
#
# **Exercise 1.** Measure MiniLM's cost at `maxlen=128` instead of 64: does its training time per example double?
# (Attention grows with the square of the length, the rest with the length.)

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
import dataclasses

longer = krt.cost_table(dataclasses.replace(settings, architectures=("minilm",), maxlen=128))
ratio = cost.loc["minilm", "train_examples_per_s"] / longer.loc["minilm", "train_examples_per_s"]
print(f"maxlen 64: {cost.loc['minilm', 'train_examples_per_s']} examples/s, "
      f"maxlen 128: {longer.loc['minilm', 'train_examples_per_s']}: {ratio:.2f}x the time per example")

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# About double, not four times: 1.97x on the committed run. Per token, each layer's matrix products cost about
# 12 x hidden² operations whatever the length, while attention's scores cost about 2 x length x hidden: at 64 tokens
# and MiniLM's hidden size of 384 that is a few percent of the work, so the square term hardly shows until texts are
# several hundred tokens long. A measured ratio far from 2 says the machine was busy during one of the two runs.
# </details>

# %% [markdown]
# **Exercise 2.** Build DistilBERT with 3 layers instead of 6 (`layers=3`) and set its parameters, single-text time
# and training speed beside the row above. What halves, and what does not?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
import dataclasses

half_depth = max(1, (settings.layers or 6) // 2)  # DistilBERT has 6 layers (the table above may set another depth)
half = krt.cost_table(dataclasses.replace(settings, architectures=("distilbert",), layers=half_depth))
columns = ["parameters_m", "single_text_ms_p50", "train_examples_per_s"]
pd.DataFrame({"as measured above": cost.loc["distilbert", columns],
              f"{half_depth} layers": half.loc["distilbert", columns]})

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# The time per text halves (36.9 ms to 19.0 on the committed run) and training nearly doubles its rate (4.0 to 7.5
# examples/s): almost all of the work is in the encoder's layers, and half of them are gone. The parameters do not
# halve (67.0 million to 45.7): the embeddings (30,522 word vectors of 768 numbers, with the
# position vectors about 24 million of DistilBERT's 66 million parameters) stay whole, so 3 layers keep about two
# thirds of the parameters, and of the file's size. Depth buys speed; the vocabulary sets a floor on size.
# </details>

# %% [markdown]
# ## Check yourself
# A few questions on this notebook's ideas, to answer from memory; open each answer to check yourself.
#
# **1.** Why do BERT-base and DistilBERT give a text the same token ids, while RoBERTa gives other ones?
#
# <details><summary>Answer</summary>
#
# DistilBERT was distilled from BERT-base and keeps its WordPiece vocabulary; RoBERTa was trained with its own
# byte-level BPE vocabulary.
#
# </details>
#
# **2.** ALBERT is the smallest of the four on disk. Why is it not the fastest?
#
# <details><summary>Answer</summary>
#
# It shares one layer's weights across all its layers and factorises its embeddings, so it stores few parameters; but
# each token still goes through every layer at full width. Speed follows the arithmetic per token, not the parameter
# count.
#
# </details>
#
# **3.** Which two numbers of a model's configuration decide most of its cost per token?
#
# <details><summary>Answer</summary>
#
# The number of layers and the hidden width: the arithmetic grows with layers times width squared. Six layers instead
# of twelve, at the same width, roughly halve it.
#
# </details>

# %% [markdown]
# **Next:** [04_your_own_data](04_your_own_data.ipynb): the same steps on a CSV of your own; then
# [05_better_or_noise](05_better_or_noise.ipynb), whether a change is better or noise.
