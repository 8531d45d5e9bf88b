# %% [markdown]
# # Your own data: a CSV of labelled texts
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/04_your_own_data.ipynb)
#
# Notebooks 00-02 fine-tune on emotion, a dataset the package knows by name. Yours is a file: a column of texts, a
# column of labels, names of its own, no validation split, and a label or two that is rarer than the rest. This
# notebook takes such a file through ktrain's steps and checks at each one that it was read as you meant. ktrain's
# calls do the training (STEP 4); the `kr.` calls, more of them here than ktrain's, are what ktrain leaves to you with
# a file of your own: reading and checking it, the baseline and the scores, the checked save.
#
# **You will learn**
#
# - to point the steps at a CSV with columns of its own (`text_column`, `label_column`) and to check how it was read:
#   the label names and their order, the rows per label, the validation split held out from it;
# - why
#   [accuracy and macro-F1](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#accuracy-and-macro-f1)
#   part ways when one label is rare, and what a baseline scores;
# - to choose the batch size by the number of weight updates a small dataset gives;
# - to judge a small file by 5-fold cross-validation (scikit-learn's `StratifiedKFold`): a mean and its spread, not
#   one split's figure;
# - what a mistake in the file gets: one line that says what to do.
#
# **What it needs.** A CPU: 1,600 training texts take a few minutes on a 2-core CPU. The CSV here ships with the
# package (`ktrain_recipes/data/feelings`: its SOURCE.md says where the texts come from and on what terms); set `DATA`
# to your own file.
#
# Every notebook's time and results in one page:
# [What to expect](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/expect.md).
#
# **What you will see.** The outputs of a real run on a 2-core AMD EPYC CPU (AVX-512 with VNNI and bfloat16; the
# notebook trains in float32) and no GPU, with other work on its cores: the epochs' times below are longer than alone.
#
# **What `kr` adds here.** The ktrain calls are notebook 01's; what a file of your own needs and ktrain does not do
# comes from `kr.`: reading any CSV, TSV or folder with its label words, checked (`kr.load_data_for`, whose one-line
# errors are `kr.RecipesError`), a stratified slice (`kr.sample`), maxlen from the texts (`kr.resolve_model`,
# `kr.load_tokenizer`, `kr.resolve_maxlen`), batches of similar length (`kr.bucket_batches`), a seed
# (`kr.set_seed`), epoch times and the too-few-updates warning (`kr.epoch_timer`, `kr.few_steps_note`), scores as
# values and plots (`kr.score`, `kr.report_table`, `kr.plot_label_distribution`, `kr.plot_confusion_matrix`), timing
# (`kr.time_inference`), a checked save and load (`kr.record_run`, `kr.save_checked_predictor`,
# `kr.load_checked_predictor`), and `kr.run_recipe` for the same steps in one call.

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
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters
# Your file, the names of its two columns, and the training settings. A file without a validation split gets one:
# `val_fraction` of its rows, held out with every label in proportion (stratified) and the same rows every time
# (seeded).

# %%
from pathlib import Path

RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
DATA = str(Path(kr.__file__).parent / "data" / "feelings" / "feelings.csv")  # your CSV (or .tsv, .jsonl, .parquet)
config = kr.RecipeConfig(
    model="minilm",          # a registry name (`python -m ktrain_recipes models`), a hub id or a local folder
    data=DATA,
    text_column="tweet",     # the column that holds the texts
    label_column="feeling",  # the column that holds the labels: words or whole numbers
    val_fraction=0.2,        # no validation split in the file: hold out a fifth of it
    out=f"{RUNS}/own-data",  # where the predictor is saved
    maxlen="auto",
    batch_size=8,            # small data: small batches give more weight updates (STEP 3)
    lr=1e-4,
    epochs=3,
    limit=None,              # None: every training row
    eval_limit=None,
    seed=42,
)

# %% [markdown]
# ## STEP 1: Read the file
# First the file as it is, with pandas: the first rows show whether the columns are the ones you named (a .tsv, a
# spreadsheet's byte-order mark and Windows line endings read the same way here).

# %%
pd.read_csv(config.data, sep=None, engine="python", encoding="utf-8-sig").head()

# %% [markdown]
# `kr.load_data_for(config)` reads it as training will: it checks every row (an empty text or label is refused with
# its line number), names the labels, and holds out the validation rows, saying how many.

# %%
ds = kr.load_data_for(config)
{split: len(ds.texts(split)) for split in ds.splits}

# %% [markdown]
# The label names are the file's own words in sorted order, and that order is the order of the model's outputs: the
# saved predictor keeps it. Whole numbers work too: as they are, they are the names (star ratings 1 to 5 become "1"
# to "5"). `labels=["no", "yes"]` names them by position, counted from 0, so it fits codes that start at 0; for
# labels counted from 1, such as stars, leave `labels` out.

# %%
ds.label_names

# %%
train = kr.sample(ds.texts("train"), ds.labels("train"), config.limit, config.seed)
val = kr.sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, config.seed)
kr.plot_label_distribution(train[1], ds.label_names)

# %% [markdown]
# On the shipped file one label is rare: `surprised` has a few dozen rows where the other two have hundreds. Most of
# what a model sees is `negative` and `positive`; how it does on `surprised` is what the next scores tell apart.

# %% [markdown]
# ## STEP 2: A baseline, and two scores
# Before any training: what guessing the most common label scores, and what a linear model on word counts scores.
# Accuracy counts texts; macro-F1 averages the labels' F1 with equal weight, so a rare label counts as much as a
# common one.

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
# On the shipped file, always answering `negative` is right more than half the time (0.5425), yet its macro-F1 is
# 0.2345: it never gets the other two labels. The linear model on words reaches 0.78 accuracy but 0.57 macro-F1, for the
# same reason in part: it seldom gets `surprised` right. On a file like this, read macro-F1 beside accuracy, and the
# rare label's own line in the report (STEP 5).
#
# If the bag of words scores as well as the model on your file, the labels follow from a few words (a product name, a
# star-rating phrase): keep the linear model, which is smaller, faster and easier to explain, or look for the rows
# where the two disagree before you spend an hour of training on more epochs.

# %% [markdown]
# ## STEP 3: How many weight updates
# A model learns once per batch, so a small file gives few updates: the same epochs at batch 32 give a quarter of the
# updates of batch 8. `kr.few_steps_note` says when this run's settings give too few to learn much, and what to change.

# %%
for batch in (32, 16, 8):
    print(f"batch {batch}: {-(-len(train[0]) // batch) * config.epochs} weight updates")
print(kr.few_steps_note(len(train[0]), config.batch_size, config.epochs, notebook=True)
      or f"batch {config.batch_size}, {config.epochs} epochs: enough weight updates")

# %% [markdown]
# On the emotion slice the package ships (the same 1,600 texts, six labels), MiniLM reached 0.7675 validation
# accuracy at batch 32 and 0.855 at batch 8
# ([docs/results.md](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md)): with small data,
# the number of updates matters more than the number of texts. This run uses batch 8.

# %% [markdown]
# ## STEP 4: The ktrain steps
# The steps of notebook 01, on your texts: the tokenizer chooses `maxlen`, `text.Transformer` preprocesses,
# `get_classifier` puts a head with one output per label on the model, and `fit_onecycle` trains. (Notebook 01 also
# runs the learning-rate finder; this one keeps its rate.)

# %%
model_path = kr.resolve_model(config.model)
maxlen = kr.resolve_maxlen(config.maxlen, kr.load_tokenizer(model_path), train[0])
t = text.Transformer(model_path, maxlen=maxlen, class_names=ds.label_names, batch_size=config.batch_size)
trn = t.preprocess_train(train[0], ds.label_ids(train[1]), verbose=0)
val_data = t.preprocess_test(val[0], ds.label_ids(val[1]), verbose=0)
trn, val_data = kr.bucket_batches(trn, config.seed), kr.bucket_batches(val_data, config.seed)
kr.set_seed(config.seed)
learner = ktrain.get_learner(t.get_classifier(), train_data=trn, val_data=val_data, batch_size=config.batch_size)
f"maxlen {maxlen}, {len(train[0]):,} training texts"

# %%
timer = kr.epoch_timer()
history = learner.fit_onecycle(config.lr, config.epochs, callbacks=[timer])

# %% [markdown]
# On the shipped file, validation accuracy reached 0.9350 in the second epoch and stayed there in the third, while
# the validation loss barely moved (0.2132, then 0.2080) and training accuracy kept climbing (0.9650): on 1,600 texts,
# three epochs are about as many as help.

# %% [markdown]
# ## STEP 5: Evaluate
# The report has a line per label: read the rare one.

# %%
predictor = ktrain.get_predictor(learner.model, preproc=t, batch_size=config.batch_size)
metrics = kr.score(val[1], predictor.predict(val[0]), ds.label_names)
kr.report_table(metrics)

# %%
kr.plot_confusion_matrix(metrics)

# %% [markdown]
# On the shipped file, MiniLM reaches 0.935 accuracy and 0.823 macro-F1, far above both baselines. The rare label is
# the weak one: `surprised` has an F1 of 0.571 on its 14 validation texts (it finds 8 of them, recall 0.571, and 0.571
# of what it calls surprised is), where the two common labels are near 0.95. Fourteen texts are too few to measure it
# well, and 59 training rows too few to learn it well: more rows of the rare label would help more than any setting.

# %% [markdown]
# ## STEP 6: Save the predictor and use it on new rows
# `kr.save_checked_predictor` writes the predictor with a manifest (label names, maxlen, a checksum per file) and the
# run's record; `kr.load_checked_predictor` checks them before it loads. New rows can be a list of texts, or a whole
# file from the command line, with its texts in a column named `text`: `python -m ktrain_recipes predict --predictor
# runs/own-data --input new.csv --output scored.csv` (notebook 07 shows more).

# %%
metrics["inference"] = kr.time_inference(predictor.predict, val[0])
kr.record_run(metrics, config, maxlen, timer.trained(), learner, n_train=len(train[0]), data_source=ds.source)
kr.save_checked_predictor(predictor, config.out, metrics, overwrite=True)
new_rows = pd.DataFrame({config.text_column: ["i can not believe they cancelled the trip again",
                                               "what a wonderful morning",
                                               "i did not expect a letter from her after all these years"]})
new_rows[config.label_column] = kr.load_checked_predictor(config.out).predict(list(new_rows[config.text_column]))
new_rows

# %% [markdown]
# With the shipped file's model, the first two come out as a reader would label them; the third, an unexpected letter,
# is read as `negative`, not `surprised`: the model gives the rare label least readily.

# %% [markdown]
# ## STEP 7: A small file, judged by k-fold
# With a few hundred rows, one validation split holds a few dozen texts of each label, and which rows it happens to
# hold moves the score by several points. Cross-validation trains on four fifths and scores the last fifth, five
# times, each row scored once (scikit-learn's `StratifiedKFold` keeps every label in proportion in each fold): the
# mean is the estimate, and the spread says how far one split could have been off. Here on `SMALL` rows of this file,
# MiniLM with the same ktrain calls as STEP 4 beside the linear model of STEP 2. ktrain's FAQ answers "how do I
# cross-validate?" with such a loop; the final model is then trained on every row, as in STEP 4.

# %%
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

SMALL = 300  # rows: a file of a few hundred
rows_x, rows_y = kr.sample(train[0] + val[0], train[1] + val[1], SMALL, config.seed)
folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=config.seed)
scores = []
for fold, (fit_at, score_at) in enumerate(folds.split(rows_x, rows_y), start=1):
    fit_x, fit_y = [rows_x[i] for i in fit_at], [rows_y[i] for i in fit_at]
    test_x, test_y = [rows_x[i] for i in score_at], [rows_y[i] for i in score_at]
    t_fold = text.Transformer(model_path, maxlen=maxlen, class_names=ds.label_names, batch_size=config.batch_size)
    trn_fold = kr.bucket_batches(t_fold.preprocess_train(fit_x, ds.label_ids(fit_y), verbose=0), config.seed)
    kr.set_seed(config.seed)
    learner_fold = ktrain.get_learner(t_fold.get_classifier(), train_data=trn_fold, batch_size=config.batch_size)
    learner_fold.fit_onecycle(config.lr, config.epochs, verbose=0)
    guesses = ktrain.get_predictor(learner_fold.model, preproc=t_fold).predict(test_x)
    linear = clone(baselines["TF-IDF + linear SVM"]).fit(fit_x, fit_y).predict(test_x)
    scores.append({"fold": fold, "MiniLM": kr.score(test_y, guesses, ds.label_names)["macro_f1"],
                   "TF-IDF + linear SVM": kr.score(test_y, list(linear), ds.label_names)["macro_f1"]})
folds_table = pd.DataFrame(scores).set_index("fold")
summary = folds_table.agg(["mean", "std", "min", "max"])
for name in folds_table:
    print(f"{name}: macro-F1 {summary[name]['mean']:.3f} +/- {summary[name]['std']:.3f} over 5 folds of {SMALL} rows; "
          f"one split alone could have said anything from {summary[name]['min']:.3f} to {summary[name]['max']:.3f}")
pd.concat([folds_table, summary]).round(3)

# %% [markdown]
# Read the spread before the mean: two settings whose means differ by less than their spreads cannot be told apart on
# this file, whichever scored higher on one split. Use k-fold to choose between settings (or models) when the file has
# a few hundred rows; with thousands, one stratified split (STEP 1) is steady enough and k-fold costs five trainings.

# %% [markdown]
# ## STEP 8: What a mistake in the file gets
# Three files with a mistake each, made from the first rows of the one above: an empty label, a label that appears
# once, and a file saved in a spreadsheet's Windows encoding instead of UTF-8. Each gets one line that names the
# row and says what to do; nothing is trained on a file that was misread.

# %%
import contextlib
import dataclasses
import io

mistakes = Path(RUNS) / "mistakes"
mistakes.mkdir(parents=True, exist_ok=True)
rows = pd.read_csv(config.data, sep=None, engine="python", encoding="utf-8-sig", dtype=str).head(100)
label = config.label_column
rows.assign(**{label: rows[label].where(rows.index != 3, "")}).to_csv(mistakes / "empty_label.csv", index=False)
rows.assign(**{label: rows[label].where(rows.index != 5, "bored")}).to_csv(mistakes / "label_once.csv", index=False)
not_utf8 = f"{config.text_column},{label}\nmy caf\u00e9 au lait went cold,{rows[label][0]}\n"
(mistakes / "not_utf8.csv").write_bytes(not_utf8.encode("cp1252"))
for path in sorted(mistakes.glob("*.csv")):
    said = io.StringIO()  # the notes a load prints on stderr, shown here under the file's name
    try:
        with contextlib.redirect_stderr(said):
            kr.load_data_for(dataclasses.replace(config, data=str(path)))
        print(f"{path.name}: read")
    except kr.RecipesError as error:
        print(f"{path.name}: refused: {error}")
    for line in said.getvalue().splitlines():
        if line.strip() and "Generating" not in line:  # not the datasets library's progress bar
            print(f"  {line}")

# %% [markdown]
# The empty label and the encoding stop the load at the line to fix. A label seen once is read, with a note that names
# it: one row can be learned from or scored, not both, and the held-out split says it could not keep the labels in
# proportion.

# %% [markdown]
# ## Recap
# A CSV of your own goes through the same ktrain steps as emotion once its two columns are named. Check how it was
# read (label names and their order, rows per label, the held-out split), read macro-F1 and the rare label's line
# beside accuracy, give a small file enough weight updates with a smaller batch, and judge a file of a few hundred
# rows by k-fold, its mean beside its spread.

# %% [markdown]
# ## Exercises
# Each exercise has its solution in the hidden cell below it: try it first, then open the cell (on Colab,
# "Show code"; in Jupyter, the collapsed input). The solutions run in this project's tests, so they work
# with the code above.
#
# **Exercise 1.** Which validation rows does the model get wrong, and how many of them carry the rarest label?

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
guesses = predictor.predict(val[0])
wrong = pd.DataFrame({"text": val[0], "truth": val[1], "guess": guesses}).query("truth != guess")
print(f"{len(wrong)} of {len(val[0])} wrong; by true label:")
print(wrong["truth"].value_counts().to_string())
wrong.head(5)

# %% [markdown]
# <details><summary>What the solution finds on the committed run</summary>
#
# 26 of the 400 rows are wrong (accuracy 0.935): 7 negative, 13 positive and 6 surprised rows (the report's recalls,
# 0.968, 0.923 and 0.571, times 217, 169 and 14 rows). The rare label is missed on almost half its rows, and it draws
# mistakes too: its precision of 0.571 means 6 of the 14 rows the model called surprised belong to the other labels.
# On your own file, read the wrong rows' texts too: some will be labelling mistakes, not the model's.
# </details>

# %% [markdown]
# **Exercise 2.** Train at `batch_size=32` (a quarter of the weight updates) and set the rarest label's line of the
# report beside this run's.

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
rarest = min(ds.label_names, key=list(train[1]).count)
other = kr.run_recipe(dataclasses.replace(config, batch_size=32, out=f"{RUNS}/own-data-batch32"))
pd.DataFrame({f"batch {config.batch_size}": metrics["report"][rarest], "batch 32": other["report"][rarest]}).T.round(3)

# %% [markdown]
# <details><summary>What the solution finds on the committed run</summary>
#
# At batch 32 the run makes 150 weight updates instead of 600, and the rare label pays for it: the model never
# predicts surprised (precision and recall 0.000 on its 14 rows), so macro-F1 falls from 0.823 to 0.6205 while
# accuracy falls only from 0.935 to 0.915. Accuracy alone would hide the loss; the rare label's line shows it, which
# is why STEP 3 chose small batches for a small file.
# </details>

# %% [markdown]
# ## Check yourself
# A few questions on this notebook's ideas, to answer from memory; open each answer to check yourself.
#
# **1.** Why check how the file was read (label names, their order, rows per label) before training?
#
# <details><summary>Answer</summary>
#
# A column read the wrong way, such as labels merged or a header taken for a row, trains without an error, on the
# wrong task. Those three checks show it before an hour of training does.
#
# </details>
#
# **2.** Your file has one rare label. Why read macro-F1 and that label's line beside accuracy?
#
# <details><summary>Answer</summary>
#
# A model that never predicts the rare label loses little accuracy; macro-F1 and the rare label's recall show the loss
# plainly.
#
# </details>
#
# **3.** A small file gives a model that barely beats the baseline. What do you change first, and why?
#
# <details><summary>Answer</summary>
#
# The number of weight updates: a smaller `batch_size` or more `epochs`. The model learns once per update, and a few
# hundred rows at a large batch give too few for it to adapt.
#
# </details>

# %% [markdown]
# **More to try.** Put your own CSV in `DATA`, with its column names; if its labels are numbers, name them with
# `labels=[...]`.
#
# **Next:**
# [11_several_labels](11_several_labels.ipynb): when a text carries several labels at once (GoEmotions), and
# thresholds chosen on dev. Then [05_better_or_noise](05_better_or_noise.ipynb): is a change better, or noise?
