"""One precision setting: auto picks bfloat16 on a CPU with native bfloat16, float16 on a GPU with tensor cores and
float32 elsewhere; a model trained in bfloat16 saves float32 weights that load, predict and export like any other."""

import importlib.util
import json

import numpy as np
import pytest

import ktrain_recipes as kr
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.training.precision import choose_precision, cpu_flags


@pytest.mark.parametrize("gpus, flags, expected", [
    ([], {"avx2", "avx512f", "avx512_bf16"}, "bfloat16"),
    ([], {"avx2", "amx_bf16"}, "bfloat16"),
    ([], {"avx2", "avx512f", "avx512_vnni"}, "float32"),  # AVX-512 without BF16: emulated, slower
    ([(7, 5)], {"avx512_bf16"}, "float16"),  # a T4: float16 tensor cores, no native bfloat16
    ([(7, 0)], set(), "float16"),  # a V100
    ([(8, 0)], set(), "bfloat16"),  # an A100: bfloat16 as fast as float16, no loss scaling
    ([(9, 0)], set(), "bfloat16"),  # an H100/H200: float16 measured 14% slower than float32 there
    ([(7, 5), (8, 6)], set(), "bfloat16"),  # the best GPU decides
    ([(6, 1)], set(), "float32"),  # a GPU without tensor cores
])
def test_auto_chooses_from_the_devices_it_sees(gpus, flags, expected):
    chosen, why = choose_precision("auto", gpus=gpus, flags=flags)
    assert chosen == expected and why and "\n" not in why


def test_an_explicit_precision_is_kept_and_a_wrong_one_refused():
    assert choose_precision("bfloat16", gpus=[], flags=set())[0] == "bfloat16"
    with pytest.raises(RecipesError, match="--precision must be one of auto, float32"):
        kr.RecipeConfig(precision="bf16")


def test_cpu_flags_reads_the_first_cpu(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512_bf16\n\nprocessor\t: 1\nflags\t\t: fpu\n")
    assert cpu_flags(info) == {"fpu", "avx2", "avx512_bf16"}
    assert cpu_flags(tmp_path / "absent") == set()


@pytest.mark.slow
def test_a_model_trained_in_bfloat16_answers_like_a_float32_load_and_exports(tiny_models, small_data, tmp_path):
    import tensorflow as tf

    out = tmp_path / "bf16"
    metrics = kr.run_recipe(kr.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(out), epochs=1,
                                            batch_size=16, lr=1e-3, seed=3, precision="bfloat16"))
    assert metrics["settings"]["precision"] == "bfloat16"
    assert tf.keras.mixed_precision.global_policy().name == "float32"  # the process is left as it was
    loaded = kr.load_checked_predictor(out)
    assert all(w.dtype == tf.float32 for w in loaded.model.weights)  # saved weights are float32
    texts = kr.load_emotion(small_data).texts("validation")
    proba = loaded.predict_proba(texts)
    # the same weights computed in float32 give the figures the run recorded in bfloat16, within bfloat16's precision
    assert abs(kr.score(kr.load_emotion(small_data).labels("validation"), loaded.predict(texts),
                        loaded.get_classes())["accuracy"] - metrics["accuracy"]) <= 0.05
    assert np.allclose(proba.sum(axis=1), 1, atol=1e-5)
    kr.export_onnx(out)
    int8 = kr.open_predictor(out, int8=True)
    agree = np.mean([a == b for a, b in zip(kr.classify(int8, texts), loaded.predict(texts))])
    assert agree >= 0.9
    assert json.loads((out / "metrics.json").read_text())["settings"]["precision"] == "bfloat16"


@pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None,
                    reason="ktrain's path (not on the Keras 3 road without TensorFlow)")
def test_the_body_computes_in_bfloat16_and_the_head_in_float32(tiny_models):
    import tf_keras
    from transformers import TFAutoModelForSequenceClassification

    from ktrain_recipes.training.precision import float32_head, set_policy

    set_policy("bfloat16")
    try:
        model = TFAutoModelForSequenceClassification.from_pretrained(tiny_models["bert"], num_labels=6)
    finally:
        set_policy("float32")
    float32_head(model)
    ids = np.array([[2, 40, 50, 3]])
    body = model.bert(ids).last_hidden_state
    logits = model(ids).logits
    assert body.dtype.name == "bfloat16" and logits.dtype.name == "float32"
    assert all(w.dtype.name == "float32" for w in model.weights)  # weights are kept in float32
    assert tf_keras.mixed_precision.global_policy().name == "float32"


def test_auto_answers_where_tensorflow_cannot_be_imported(monkeypatch):
    import builtins
    import sys

    from ktrain_recipes.training import precision

    real_import = builtins.__import__

    def no_tensorflow(name, *args, **kwargs):
        if name == "tensorflow" or name.startswith("tensorflow."):
            raise ModuleNotFoundError("No module named 'tensorflow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tensorflow)
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    assert precision.gpu_capabilities("tensorflow") == []
    assert precision.choose_precision("auto", flags={"avx2"})[0] == "float32"


class _Device:
    def __init__(self, platform, capability=None):
        self.platform, self.compute_capability = platform, capability


def test_the_gpus_are_asked_of_jax_when_keras_runs_on_it(monkeypatch):
    import sys
    import types

    from ktrain_recipes.training import precision

    jax = types.SimpleNamespace(devices=lambda: [_Device("gpu", "9.0"), _Device("cpu")])
    monkeypatch.setitem(sys.modules, "jax", jax)
    assert precision.gpu_capabilities("jax") == [(9, 0)]
    keras = types.SimpleNamespace(backend=types.SimpleNamespace(backend=lambda: "jax"))
    assert precision.running_backend(keras) == "jax"
    chosen, why = precision.choose_precision("auto", gpus=precision.gpu_capabilities("jax"))
    assert (chosen, "9.0" in why) == ("bfloat16", True)


def test_the_gpus_are_asked_of_torch_when_keras_runs_on_it(monkeypatch):
    import sys
    import types

    from ktrain_recipes.training import precision

    cuda = types.SimpleNamespace(device_count=lambda: 2, get_device_capability=lambda i: [(7, 5), (8, 0)][i])
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    assert precision.gpu_capabilities("torch") == [(7, 5), (8, 0)]
