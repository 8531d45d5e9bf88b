"""The GPU check: notebook 10's road (Keras 3 + KerasHub, no TensorFlow) on a GPU machine, and the precision choice,
in a few minutes, with no network. Prints training examples/s per architecture and precision, and what
``--precision auto`` picks there and why.

On a machine with JAX (or PyTorch) and CUDA but neither TensorFlow nor Keras 3, carry Keras 3 and KerasHub as wheels
(made where there is a network, for that machine's Python; about 5 MB):

    pip download --no-deps --only-binary=:all: --python-version 3.12 -d wheels \\
        keras==3.15.1 keras-hub==0.32.0 namex==0.1.0 optree==0.20.0 kagglehub==1.0.2 kagglesdk==0.1.28
    python scripts/gpu_check.py --wheels wheels --json gpu.json          # on the GPU machine, from this checkout

The models are the four seed architectures at their real size with random weights (the arithmetic, and so the speed,
does not depend on the weights); the inputs are random token ids at --maxlen, already tokenized, so the figures time
the model, not a tokenizer. ``--tiny`` builds 2-layer models instead, to try the script on a CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the seed architectures at their published sizes (vocabulary, layers, heads, hidden, feed-forward)
REAL = {
    "bert": dict(vocabulary_size=30522, num_layers=12, num_heads=12, hidden_dim=768, intermediate_dim=3072),
    "distilbert": dict(vocabulary_size=30522, num_layers=6, num_heads=12, hidden_dim=768, intermediate_dim=3072),
    "roberta": dict(vocabulary_size=50265, num_layers=12, num_heads=12, hidden_dim=768, intermediate_dim=3072),
    "albert": dict(vocabulary_size=30000, num_layers=12, num_heads=12, hidden_dim=768, intermediate_dim=3072,
                   embedding_dim=128),
}
TINY = dict(num_layers=2, num_heads=2, hidden_dim=32, intermediate_dim=64)
BACKBONES = {"bert": "BertBackbone", "distilbert": "DistilBertBackbone", "roberta": "RobertaBackbone",
             "albert": "AlbertBackbone"}
POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16", "float16": "mixed_float16"}


def install_wheels(folder: str) -> None:
    """Keras 3, KerasHub and their few pure-Python needs from ``folder`` into a private folder on sys.path."""
    target = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    wheels = sorted(str(p) for p in Path(folder).glob("*.whl"))
    if not wheels:
        raise SystemExit(f"no .whl files in {folder}: see this script's docstring for the pip download command")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target",
                    str(target), *wheels], check=True)
    sys.path.insert(0, str(target))


def build(keras, keras_hub, architecture: str, maxlen: int, tiny: bool, num_classes: int = 6):
    """A classifier: the backbone at its real size (random weights), a dense head on the first token."""
    size = dict(REAL[architecture])
    if tiny:
        size.update(TINY, **({"embedding_dim": 16, "num_groups": 1, "num_inner_repetition": 1}
                             if architecture == "albert" else {}))
    backbone = getattr(keras_hub.models, BACKBONES[architecture])(max_sequence_length=max(maxlen, 64), **size)
    inputs = {name: keras.Input((maxlen,), dtype="int32", name=name) for name in backbone.input}
    first = backbone(inputs)["sequence_output"][:, 0, :]
    logits = keras.layers.Dense(num_classes, dtype="float32", name="logits")(first)  # the head stays in float32
    return keras.Model(inputs, logits), list(backbone.input)


def measure(keras, keras_hub, architecture: str, precision: str, batch: int, maxlen: int, steps: int,
            tiny: bool) -> dict:
    import numpy as np

    keras.config.set_dtype_policy(POLICIES[precision])
    try:
        keras.utils.set_random_seed(0)
        model, names = build(keras, keras_hub, architecture, maxlen, tiny)
        # Keras 3 wraps the optimizer in loss scaling under mixed_float16 by itself
        model.compile(optimizer=keras.optimizers.AdamW(5e-5),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        rng = np.random.default_rng(0)
        n = batch * steps
        vocab = REAL[architecture]["vocabulary_size"] if not tiny else 1000
        x = {}
        for name in names:
            if name == "padding_mask":
                x[name] = np.ones((n, maxlen), "int32")
            elif name == "segment_ids":
                x[name] = np.zeros((n, maxlen), "int32")
            else:
                x[name] = rng.integers(5, vocab, size=(n, maxlen), dtype="int32")
        y = rng.integers(0, 6, size=n)
        warm = {k: v[:2 * batch] for k, v in x.items()}
        model.fit(warm, y[:2 * batch], batch_size=batch, epochs=1, verbose=0, shuffle=False)  # compiles the step
        start = time.perf_counter()
        history = model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
        seconds = time.perf_counter() - start
        return {"architecture": architecture, "precision": precision, "examples_per_s": round(n / seconds, 1),
                "seconds": round(seconds, 3), "steps": steps, "loss": float(history.history["loss"][-1]),
                "parameters": int(model.count_params())}
    finally:
        keras.config.set_dtype_policy("float32")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", help="a folder of wheels: Keras 3, KerasHub and their needs (see above)")
    parser.add_argument("--backend", default=os.environ.get("KERAS_BACKEND", "jax"), choices=["jax", "torch"])
    parser.add_argument("--architectures", default="bert,distilbert,roberta,albert")
    parser.add_argument("--precisions", default="float32,bfloat16,float16")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--maxlen", type=int, default=64)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per model and precision")
    parser.add_argument("--tiny", action="store_true", help="2-layer models: to try the script on a CPU")
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args(argv)
    if args.wheels:
        install_wheels(args.wheels)
    os.environ["KERAS_BACKEND"] = args.backend  # before Keras is imported
    sys.path.insert(0, str(ROOT))
    import keras
    import keras_hub

    from ktrain_recipes.training.precision import choose_precision, gpu_capabilities

    gpus = gpu_capabilities(args.backend)
    chosen, why = choose_precision("auto", gpus=gpus)
    print(f"Keras {keras.__version__} on {keras.backend.backend()}, KerasHub {keras_hub.__version__}; GPUs (compute "
          f"capability): {gpus or 'none'}; TensorFlow loaded: {'tensorflow' in sys.modules}")
    print(f"--precision auto here: {chosen} ({why})")
    rows = []
    for architecture in args.architectures.split(","):
        for precision in args.precisions.split(","):
            row = measure(keras, keras_hub, architecture, precision, args.batch, args.maxlen, args.steps, args.tiny)
            rows.append(row)
            print(f"{architecture:>10} {precision:>8}: {row['examples_per_s']:>9,.1f} examples/s "
                  f"({row['parameters']:,} parameters, loss {row['loss']:.3f})", flush=True)
    result = {"machine": platform.node(), "python": platform.python_version(), "backend": keras.backend.backend(),
              "keras": keras.__version__, "keras_hub": keras_hub.__version__, "gpus": gpus,
              "auto": {"precision": chosen, "why": why}, "batch": args.batch, "maxlen": args.maxlen,
              "tiny": args.tiny, "rows": rows, "tensorflow_loaded": "tensorflow" in sys.modules}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
