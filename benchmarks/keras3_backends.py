"""Training throughput of one model on the same batches: KerasHub on Keras 3's TensorFlow and JAX backends, and
ktrain (tf_keras). all-MiniLM-L6-v2 with a 6-label head, the same 1,024 emotion texts padded to 72 tokens, batch
32, Adam at 1e-4: 32 timed steps per run, after warm-up steps that trace the step function (ktrain: one epoch).

    python benchmarks/keras3_backends.py EMOTION_DIR OUT.json [--python-keras PYTHON]

Each path runs in its own process (the Keras backend is chosen at import). ``--python-keras`` names the Python
whose environment has Keras 3, KerasHub and jax (default: this one); ktrain runs in this one.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

TEXTS, BATCH, MAXLEN, WARMUP = 1024, 32, 72, 4

KERAS_HUB = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[3])
import keras, keras_hub, numpy as np
from ktrain_recipes.data.loading import load_emotion
from ktrain_recipes.keras3.presets import keras_hub_preset
texts_n, batch, maxlen, warmup = (int(x) for x in sys.argv[4:8])
ds = load_emotion(sys.argv[1])
texts, labels = ds.texts("train")[:texts_n], np.array(ds.label_ids(ds.labels("train")[:texts_n]))
preset = keras_hub_preset("hf://sentence-transformers/all-MiniLM-L6-v2")
pre = keras_hub.models.BertTextClassifierPreprocessor.from_preset(preset, sequence_length=maxlen)
model = keras_hub.models.BertTextClassifier.from_preset(preset, num_classes=6, preprocessor=None, activation=None)
x = pre(texts)  # tokenized once: the steps time the model, not the tokenizer
x = {k: keras.ops.convert_to_numpy(v) for k, v in x.items()}
model.compile(optimizer=keras.optimizers.Adam(1e-4),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
head = {k: v[:warmup * batch] for k, v in x.items()}
model.fit(head, labels[:warmup * batch], batch_size=batch, epochs=1, verbose=0, shuffle=False)
start = time.perf_counter()
model.fit(x, labels, batch_size=batch, epochs=1, verbose=0, shuffle=False)
seconds = time.perf_counter() - start
print(json.dumps({"path": f"KerasHub, Keras {keras.__version__}, {keras.backend.backend()} backend",
                  "seconds": seconds, "examples_per_s": texts_n / seconds}))
"""

KTRAIN = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
import ktrain_recipes as kr
import ktrain_recipes_tools as krt
import ktrain
texts_n, batch, maxlen, warmup = (int(x) for x in sys.argv[4:8])
ds = kr.load_emotion(sys.argv[1])
texts, labels = ds.texts("train")[:texts_n], ds.labels("train")[:texts_n]
t = krt.transformer_preprocessor(kr.resolve_model("minilm"), maxlen, ds.label_names, batch)
trn = t.preprocess_train(texts, ds.label_ids(labels), verbose=0)  # padded to maxlen, as KerasHub's
learner = ktrain.get_learner(t.get_classifier(), train_data=trn, batch_size=batch)
learner.fit(1e-4, 1, verbose=0)  # warm-up: traces the step function
start = time.perf_counter()
learner.fit(1e-4, 1, verbose=0)
seconds = time.perf_counter() - start
print(json.dumps({"path": "ktrain 0.41.4 (tf_keras)", "seconds": seconds, "examples_per_s": texts_n / seconds}))
"""


def run(python: str, code: str, data: str, env: dict) -> dict:
    root = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run([python, "-c", code, data, "-", root, str(TEXTS), str(BATCH), str(MAXLEN), str(WARMUP)],
                         capture_output=True, text=True, env={**os.environ, **env})
    if out.returncode:
        raise SystemExit(f"{python} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--python-keras", default=sys.executable)
    args = parser.parse_args()
    rows = [run(sys.executable, KTRAIN, args.data, {})]
    for backend in ("tensorflow", "jax"):
        rows.append(run(args.python_keras, KERAS_HUB, args.data, {"KERAS_BACKEND": backend}))
    result = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "texts": TEXTS,
              "batch": BATCH, "maxlen": MAXLEN, "rows": rows}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    for row in rows:
        print(f"{row['path']:55s} {row['examples_per_s']:7.1f} examples/s ({row['seconds']:.1f} s)")


if __name__ == "__main__":
    main()
