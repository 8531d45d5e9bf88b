"""The Keras 3 road without TensorFlow (`make test-keras3-jax`, in an environment with Keras 3, KerasHub and JAX and
no TensorFlow): the helper imports, the precision choice answers, a KerasHub backbone trains on the one-cycle
schedule, and the GPU check runs (on 2-layer models, on the CPU). Elsewhere these tests are skipped."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is not None or importlib.util.find_spec("jax") is None
    or os.environ.get("KERAS_BACKEND") != "jax",
    reason="the Keras 3 road without TensorFlow: make test-keras3-jax")


def test_tensorflow_is_not_here_and_the_helper_imports_without_it():
    code = ("import sys, warnings; warnings.simplefilter('error'); import keras, ktrain_recipes as kr; "
            "from ktrain_recipes.training.precision import choose_precision; "
            "from ktrain_recipes.keras3 import one_cycle, lr_finder, presets; "
            "table = kr.setup_notebook(); "
            "assert table.loc['backend', 'runtime'] == 'jax' and table.loc['gpus', 'runtime'] == 'none', table; "
            "print(choose_precision('auto')[0], 'tensorflow' in sys.modules and sys.modules['tensorflow'] is not None)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "KERAS_BACKEND": "jax"})
    assert run.returncode == 0, run.stderr[-2000:]
    chosen, tensorflow_loaded = run.stdout.split()
    assert chosen in ("float32", "bfloat16") and tensorflow_loaded == "False"
    assert "TensorFlow was imported" not in run.stderr


def test_without_keras_backend_the_helper_names_jax_and_use_precision_answers():
    """Battery v7, X72 and X73: ``import ktrain_recipes`` then ``import keras`` with no KERAS_BACKEND, and
    ``kr.use_precision('auto')`` with no module given, on the road without TensorFlow."""
    code = ("import ktrain_recipes as kr, keras; print(keras.backend.backend()); "
            "print(kr.use_precision('auto'))")
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.strip().splitlines()
    backend, chosen = lines[0], lines[-1]  # use_precision prints its choice and why, then returns it
    assert backend == "jax" and chosen in ("float32", "bfloat16") and "Keras 3 will use jax" in run.stderr


def test_a_keras_hub_backbone_trains_on_the_one_cycle_schedule_on_jax():
    import keras
    import keras_hub
    import numpy as np

    import ktrain_recipes as kr

    assert keras.backend.backend() == "jax"
    keras.utils.set_random_seed(0)
    precision = kr.use_precision("auto", keras)  # on this CPU: what its flags allow, asked of JAX for GPUs
    try:
        backbone = keras_hub.models.BertBackbone(vocabulary_size=200, num_layers=2, num_heads=2, hidden_dim=16,
                                                 intermediate_dim=32, max_sequence_length=16)
        inputs = {name: keras.Input((16,), dtype="int32", name=name) for name in backbone.input}
        logits = keras.layers.Dense(3, dtype="float32")(backbone(inputs)["sequence_output"][:, 0, :])
        model = keras.Model(inputs, logits)
        rng = np.random.default_rng(0)
        y = rng.integers(0, 3, 256)
        tokens = rng.integers(5, 200, (256, 16))
        tokens[:, 0] = 1 + y  # the label is readable at the position the head reads
        x = {"token_ids": tokens.astype("int32"),
             "segment_ids": np.zeros((256, 16), "int32"), "padding_mask": np.ones((256, 16), "int32")}
        model.compile(optimizer=keras.optimizers.Adam(kr.OneCycle(3e-3, 8, 3)),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
    finally:
        keras.config.set_dtype_policy("float32")
    losses = history.history["loss"]
    assert precision in ("float32", "bfloat16") and all(np.isfinite(losses)) and losses[-1] < losses[0]
    assert "tensorflow" not in sys.modules or sys.modules["tensorflow"] is None


def test_the_gpu_check_runs_tiny_models_on_this_cpu(tmp_path):
    from ktrain_recipes.training.precision import choose_precision

    out = tmp_path / "gpu.json"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_check.py"), "--tiny", "--steps", "2",
                          "--batch", "4", "--maxlen", "16", "--architectures", "bert,albert",
                          "--precisions", "float32,bfloat16", "--json", str(out)],
                         capture_output=True, text=True, env={**os.environ, "KERAS_BACKEND": "jax"})
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert [(r["architecture"], r["precision"]) for r in result["rows"]] == [
        ("bert", "float32"), ("bert", "bfloat16"), ("albert", "float32"), ("albert", "bfloat16")]
    assert all(r["examples_per_s"] > 0 for r in result["rows"]) and result["tensorflow_loaded"] is False
    assert result["gpus"] == [] and result["auto"]["precision"] == choose_precision("auto", gpus=[])[0]
