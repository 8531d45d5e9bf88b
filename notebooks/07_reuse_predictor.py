# %% [markdown]
# # Reuse a saved predictor
# [![Open In
# Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/ktrain-recipes/ktrain-recipes/blob/main/notebooks/07_reuse_predictor.ipynb)
#
# Load a predictor saved by any notebook or by `python -m ktrain_recipes train`, and use it.
#
# **You will learn**
#
# - to load a saved
#   [predictor](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#predictor)
#   without unpickling anything, and classify texts and a whole file;
# - to read its probabilities and ask why it chose a label (`explain`);
# - to see which texts were too long for the model and were cut;
# - to make an
#   [int8 ONNX](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/glossary.md#int8-and-onnx)
#   copy and serve the predictor over HTTP.
#
# **What it needs.**
# A CPU and a saved predictor (00_quickstart's; without one it trains a small one first, a few minutes on a CPU).
#
# **What you will see.** The outputs below are one real run on the 2-core CPU its first output names, where no
# quickstart predictor had been saved, so the notebook trained its small one first. That small model (MiniLM on 1,600
# texts) scores 0.8730 on the 2,000 validation texts, against 0.9315 for MiniLM trained on all 16,000: the labels and
# probabilities below are the small model's.
#
# Every notebook's time and results in one page:
# [What to expect](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/expect.md).
#
# **What `kr` adds here.** The predictor is ktrain's (`predict`, `predict_proba`, `explain`); `kr.` adds what reuse
# needs beyond it: a checked load without the pickle (`kr.load_checked_predictor`, `kr.open_predictor`), texts from
# files (`kr.read_texts`), one call for texts or pairs from any backend (`kr.classify`), an int8 ONNX copy
# (`kr.export_onnx`) timed beside the original (`kr.time_side_by_side`), and `kr.run_recipe` to train one when there
# is none.

# %% tags=["install", "extra-serve"]
# Colab / Gradient: fetch this project and install it with the versions it was tested with (2 to 4 minutes, once per
# runtime; skipped where ktrain_recipes is installed). On Colab, pip's red "dependency conflicts" lines are expected:
# they name preinstalled packages that want newer versions, which these notebooks do not use.
import importlib.util
import os
import subprocess

EXTRAS = ["serve"]  # the tools' packages this notebook needs besides the helper's (requirements-<extra>.txt)
if importlib.util.find_spec("ktrain_recipes") is None:
    if not os.path.isdir("ktrain-recipes"):
        subprocess.run("git clone -q --depth 1 https://github.com/ktrain-recipes/ktrain-recipes".split(), check=True)
    exec(open("ktrain-recipes/notebooks/shared/install.py").read())  # may restart the runtime: it says so

# %%
import ktrain_recipes as kr
import pandas as pd

kr.setup_notebook()

# %% [markdown]
# ## Parameters

# %%
RUNS = kr.runs_folder()  # on Colab, a folder in your Google Drive (the other notebooks look there); else "runs"
PREDICTOR = f"{RUNS}/quickstart"  # written by 00_quickstart
SMALL_RUN = kr.RecipeConfig("minilm", out=PREDICTOR, limit=1600, epochs=3, batch_size=8)  # if it is missing

# %% [markdown]
# On Colab, `RUNS` is in your Google Drive, so the predictor 00_quickstart saved there is found here. Where there is
# none yet, train a small one first (MiniLM on 1,600 texts, a few minutes on a CPU).

# %%
from pathlib import Path
if not Path(PREDICTOR).exists():
    print(f"No predictor in {PREDICTOR} (00_quickstart saves one there): training a small one, a few minutes on a CPU")
    kr.run_recipe(SMALL_RUN)

# %% [markdown]
# ## Load
# `kr.load_checked_predictor` checks the manifest, then rebuilds ktrain's predictor from the folder's config, weights,
# tokenizer files and label names: missing or edited files get a clear error instead of a TensorFlow traceback. Unlike
# `ktrain.load_predictor`, it does not unpickle `tf_model.preproc`, so a folder from someone else cannot run code when
# you load it.

# %% tags=["nbval-check-output"]
predictor = kr.load_checked_predictor(PREDICTOR)
predictor.get_classes()

# %% [markdown]
# ## Single texts
# ktrain's `predict` takes a list of texts:

# %%
predictor.predict(["i finally got the job and i feel amazing", "i miss her so much"])

# %% [markdown]
# Both answers are what most readers would say. A label alone hides how sure the model was; the service below
# answers with every label's probability, for these two texts too. (The quickstart's model, trained on all 16,000
# texts, read "i miss her so much" as anger in an earlier run of this notebook, narrowly: a larger training set does
# not make every answer better.)

# %% [markdown]
# ## A file
# One text per line (or a CSV with a `text` column). `kr.classify` adds input checks, length-sorted batches and a note
# on texts longer than maxlen to ktrain's `predict`.

# %%
with open(f"{RUNS}/new_texts.txt", "w") as f:
    f.write("what a lovely surprise\ni am so annoyed with this\nthe storm made me nervous\n")
table = kr.read_texts(f"{RUNS}/new_texts.txt")
table.assign(label=kr.classify(predictor, table["text"]))

# %% [markdown]
# ## Probabilities

# %%
probs = predictor.predict_proba(list(table["text"]))
pd.DataFrame(probs, index=table["text"], columns=predictor.get_classes()).round(3)

# %% [markdown]
# ## Long texts are cut
# The model reads at most `maxlen` tokens of a text; ktrain cuts the rest off silently. With `report=True`,
# `kr.classify` says for each text how many tokens the model read and whether the text was cut:

# %%
print("maxlen:", predictor.preproc.maxlen)
long_text = "i was nervous all morning because the results were late, " * 8 + "but i passed and i am thrilled"
pd.DataFrame(kr.classify(predictor, ["i am thrilled", long_text], report=True), index=["short", "long"])

# %% [markdown]
# The long text's last words, "but i passed and i am thrilled", lie past the cut: the model never read them, and its
# label comes from the first `maxlen` tokens alone, here the nervous morning's `fear`. On the emotion texts this rarely
# matters (they are short, and the
# few that are cut keep their accuracy:
# [measured](https://github.com/ktrain-recipes/ktrain-recipes/blob/main/docs/results.md#what-truncation-costs-on-emotion));
# on your own long texts, check how many are cut before you trust the labels.

# %% [markdown]
# ## Explaining a prediction
# ktrain's `explain` perturbs the text and fits a simple model to the predictor's answers (LIME), then colours the
# words that pushed the prediction. It uses eli5's `TextExplainer`, which the pinned `eli5` from PyPI provides
# (ktrain's message names its author's GitHub fork, which is not needed).

# %%
predictor.explain(table["text"][0], n_samples=500)

# %% [markdown]
# ## Serve it over HTTP
# `ktrain-recipes serve` puts the predictor behind an HTTP API and a web page. It prefers the int8 ONNX copy of the
# model (no TensorFlow, no pickle, a few milliseconds per text), so export it first:

# %%
kr.export_onnx(PREDICTOR)

# %% [markdown]
# Start the service in the background on this machine (127.0.0.1, port 8765) and wait until it answers `/health`:

# %%
import subprocess
import sys
import time

import httpx

URL = "http://127.0.0.1:8765"


def start_service() -> subprocess.Popen:
    """Run `serve` in the background and return once it answers /health (at most 2 minutes)."""
    process = subprocess.Popen([sys.executable, "-m", "ktrain_recipes", "serve", "--predictor", PREDICTOR,
                                "--port", "8765"])
    for _ in range(240):
        try:
            if httpx.get(URL + "/health").status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.5)
    process.terminate()
    raise RuntimeError("the service did not answer within 2 minutes: read its log above")


server = start_service()
httpx.get(URL + "/metadata").json()["labels"]

# %% [markdown]
# From Python, `POST /predict` with a list of texts; each answer has the label and every label's probability, and says
# which predictor answered:

# %%
answer = httpx.post(URL + "/predict", json={"texts": ["i finally got the job", "i miss her so much"]}).json()
predictions = answer["predictions"]
pd.DataFrame([p["probabilities"] for p in predictions], index=[p["label"] for p in predictions]).round(3)

# %% [markdown]
# "i miss her so much" is sure here: sadness 0.942. The first text is less so: joy 0.663, the rest spread over the
# other five labels. Where a wrong label costs something, read the probabilities, not only the label: a client can
# treat a top probability under, say, one half as "unsure".

# %% [markdown]
# Bad input gets a 4xx with a one-line JSON error, never a 5xx:

# %%
response = httpx.post(URL + "/predict", json={"texts": ["   "]})
response.status_code, response.json()

# %% [markdown]
# Each prediction also says how many tokens the model read and whether the text was cut. A client that would rather
# be refused than get a label for half a text sends `"truncate": false`, and gets a 422 naming the text and its length:

# %%
answer = httpx.post(URL + "/predict", json={"texts": [long_text]}).json()
print({k: answer["predictions"][0][k] for k in ("label", "tokens", "truncated")})
response = httpx.post(URL + "/predict", json={"texts": [long_text], "truncate": False})
response.status_code, response.json()

# %% [markdown]
# The service also speaks vLLM's classification API, `POST /classify`, which client code written for vLLM, SGLang or
# NVIDIA Dynamo already sends: `probs` come in the order of the labels above, and `usage` counts the tokens read.

# %%
answer = httpx.post(URL + "/classify", json={"input": ["i finally got the job", long_text]}).json()
print(answer["usage"])
pd.DataFrame(answer["data"]).drop(columns="probs")

# %% [markdown]
# From a shell, the same call with curl:
#
# ```bash
# curl -s -X POST http://127.0.0.1:8765/predict -H 'content-type: application/json' \
#      -d '{"texts": ["i finally got the job"]}'
# ```
#
# In a browser, http://127.0.0.1:8765/ is a page with a text box, a button and one probability bar per label, and
# http://127.0.0.1:8765/docs is the OpenAPI page, where every endpoint can be tried. (On Colab the service runs inside
# the runtime, so these addresses are only reachable from the notebook's own code.) Save a new predictor into the same
# folder and the running service switches to it without dropping a request. Stop it when done:

# %%
server.terminate()
server.wait()

# %% [markdown]
# 143 is the service's own exit status: it caught the SIGTERM `terminate` sent, finished the requests it was
# answering, and exited with 128 + 15, the status a shell reports for a run SIGTERM ended, so a scheduler reads it as
# stopped, not finished. (A process SIGTERM kills outright, with no handler, gives `wait()` -15 instead: Python's way
# of saying "ended by signal 15".)

# %% [markdown]
# ## Recap
# A saved predictor is a folder: `kr.load_checked_predictor` checks and loads it, `predictor.predict` and
# `kr.classify` classify, `explain` shows which words mattered, `kr.export_onnx` adds an int8 copy and `serve` answers
# HTTP requests with it, in its own format or vLLM's. Every answer says how many tokens the model read and whether
# a text was cut.

# %% [markdown]
# ## Exercises
# Each exercise has its solution in the hidden cell below it: try it first, then open the cell (on Colab,
# "Show code"; in Jupyter, the collapsed input). The solutions run in this project's tests, so they work
# with the code above.
#
# **Exercise 1.** Start the service again, send it a pair of texts where it expects single texts, and an empty string,
# and read the error each gets. Stop the service when done.

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
server = start_service()
try:
    for body in ({"pairs": [["i lost my keys", "i feel so stupid"]]}, {"texts": [""]}):
        response = httpx.post(URL + "/predict", json=body)
        print(response.status_code, response.json())
finally:
    server.terminate()
    server.wait()

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# Both are the client's fault, so both get a 4xx status with a one-line JSON `error` that says what to change, never
# a 5xx: the empty string the same 422 as the blank text above ("there is nothing to classify"), the pair a refusal
# saying this model classifies single texts. A client can show such an error to its user as it is.
#
# On the committed run: 422 for both, with those two messages.
# </details>

# %% [markdown]
# **Exercise 2.** Time the int8 ONNX copy against the ktrain predictor on the texts of your file
# (`kr.time_side_by_side` calls them in turn, so a busy moment of the machine hits both alike).

# %% tags=["solution"] cellView="form" jupyter={"source_hidden": true}
#@title Solution
import functools

predict = {"ktrain": predictor.predict,
           "int8 ONNX": functools.partial(kr.classify, kr.open_predictor(PREDICTOR, int8=True))}
pd.DataFrame(kr.time_side_by_side(predict, list(table["text"]) * 20, rounds=3, n_single=20)).T

# %% [markdown]
# <details><summary>What to read in the answer</summary>
#
# The int8 ONNX copy answers each text many times faster than ktrain's predictor and reads a batch faster too, on the
# same CPU in the same minutes (the two are called in turn, so a busy moment slows both alike). What it costs is a
# little accuracy: int8 weights move every probability a little, and about 2 texts in 100 change their label.
#
# On the committed run: one text in 5.10 ms at the median against ktrain's 89.52 ms (about 18 times faster), and
# about 1,564 texts a second in batches against 260, on the AVX-512 VNNI CPU of the first output.
# </details>

# %% [markdown]
# ## Check yourself
# A few questions on this notebook's ideas, to answer from memory; open each answer to check yourself.
#
# **1.** What does `kr.load_checked_predictor` do that `ktrain.load_predictor` does not?
#
# <details><summary>Answer</summary>
#
# It checks the folder's files against the digests in its manifest, so an edited or swapped file is refused, and it
# rebuilds the preprocessor instead of reading ktrain's pickle, which would run code when read.
#
# </details>
#
# **2.** A text is longer than the model's maxlen. What does the model read, and how do you know?
#
# <details><summary>Answer</summary>
#
# Its first maxlen tokens only; the answer reports how many tokens the model read and that the text was truncated.
#
# </details>
#
# **3.** Why serve the int8 ONNX copy rather than the TensorFlow model?
#
# <details><summary>Answer</summary>
#
# It is about a quarter of the size and faster on a CPU, and it needs onnxruntime, not TensorFlow; its cost in
# accuracy is small, and measured, not assumed.
#
# </details>

# %% [markdown]
# **Next:**
# [12_how_sure](12_how_sure.ipynb): how sure the predictor is, a temperature that makes its probabilities honest,
# and answers withheld when it is unsure. Then [08_ethics_benchmark](08_ethics_benchmark.ipynb): your own data in
# practice, on a benchmark of moral judgements.
