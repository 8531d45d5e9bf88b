"""Shared fixtures: the emotion and ETHICS folders, small data folders, tiny models, an isolated cache.

The data is what the repository ships: the emotion slice of the package (ktrain_recipes/data/emotion_slice) and
the ETHICS fixture under tests/data/ethics, so that a clone passes its own tests. ``$EMOTION_DATA`` and
``$ETHICS_DATA`` point the same tests at the full data instead (an option, never a requirement).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import ktrain_recipes  # noqa: F401  (compat shims before anything imports TensorFlow)

ROOT = Path(__file__).resolve().parent.parent
EMOTION = Path(os.environ.get("EMOTION_DATA") or ROOT / "ktrain_recipes" / "data" / "emotion_slice")
ETHICS = Path(os.environ.get("ETHICS_DATA") or ROOT / "tests" / "data" / "ethics")


def pytest_configure(config):
    os.environ.setdefault("KTRAIN_RECIPES_CACHE", str(ROOT / ".cache"))
    os.environ["HF_HUB_OFFLINE"] = "1"  # tests never download; hub paths are tested explicitly
    os.environ["HF_DATASETS_OFFLINE"] = "1"


# Module-scoped fixtures that train, export or build models (10 to 20 s each): each xdist worker that runs one of
# their tests builds its own, so their tests share a worker and the fixture is built once.
BUILT_ONCE = {("test_segments.py", "pair_predictor"), ("test_params.py", "counts"), ("test_train.py", "cut_run"),
              ("test_onnx_inference.py", "exported"), ("test_multilabel.py", "multilabel_predictor"),
              ("test_local_hub.py", "hub"), ("test_connection_property.py", "server")}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the test ids
def pytest_collection_modifyitems(config, items):
    """With pytest-xdist (`make test` runs two workers), the tests that start Ray share one worker: two local Rays
    on one machine collide; so do the tests of each fixture in ``BUILT_ONCE``. ``--dist loadgroup`` reads the
    group; without xdist the mark does nothing."""
    for item in items:
        if item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.xdist_group("ray"))
            continue
        for module, fixture in BUILT_ONCE:
            if item.path.name == module and fixture in item.fixturenames:
                item.add_marker(pytest.mark.xdist_group(f"{module}::{fixture}"))
                break


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")  # after xdist's hook
def pytest_collection_modifyitems_group_ids(config, items):  # pytest registers only pytest_* names
    """xdist 3.8.0 tells its controller a test's group by appending "@group" to the test id, which pytest 9.2 no
    longer reads (pytest-dev/pytest-xdist#1386): every group was silently split across workers. Where a worker's
    ids lack the suffix, put it there the way pytest 9.2 keeps ids; where xdist did it, this does nothing."""
    if not getattr(config.option, "loadgroup", False):  # set only inside an xdist worker under --dist loadgroup
        return
    from _pytest.nodeid import NodeId  # pytest 9.2's structured ids (private: pinned in requirements-dev.txt)

    for item in items:
        groups = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                         for mark in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(groups)
        if groups and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)


def benchmark_module(name: str):
    """benchmarks/NAME.py as a module (benchmarks/ is not a package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def ethics_table():
    return benchmark_module("ethics_table")


@pytest.fixture(scope="session")
def seed_pairs():
    return benchmark_module("seed_pairs")


@pytest.fixture(scope="session")
def emotion_dir() -> Path:
    if not (EMOTION / "train.txt").is_file():
        pytest.fail(f"emotion data not found at {EMOTION}: unset EMOTION_DATA (the shipped slice) or point it "
                    "at a folder with train.txt and val.txt")
    return EMOTION


@pytest.fixture(scope="session")
def ethics_dir() -> Path:
    if not (ETHICS / "justice" / "justice_train.csv").is_file():
        pytest.fail(f"ETHICS data not found at {ETHICS}: unset ETHICS_DATA (tests/data/ethics) or point it at "
                    "the benchmark's folder")
    return ETHICS


@pytest.fixture(scope="session")
def emotion(emotion_dir):
    return ktrain_recipes.load_emotion(emotion_dir)


@pytest.fixture(scope="session")
def small_data(emotion, tmp_path_factory) -> Path:
    """A folder with 150 train and 60 val lines of the real data, in the original txt format."""
    folder = tmp_path_factory.mktemp("small")
    for split, name, n in [("train", "train.txt", 150), ("validation", "val.txt", 60)]:
        texts, labels = ktrain_recipes.sample(emotion.texts(split), emotion.labels(split), n, seed=1)
        (folder / name).write_text("".join(f"{t};{y}\n" for t, y in zip(texts, labels)))
    return folder


@pytest.fixture(scope="session")
def tiny_models(emotion) -> dict[str, str]:
    """Tiny random checkpoints of every family (built once, cached)."""
    import tiny_models as tiny

    texts = emotion.texts("train")[:3000]
    return {f: tiny.tiny_model(f, texts) for f in tiny.FAMILIES}


@pytest.fixture(scope="session")
def tiny_predictor(tiny_models, small_data, tmp_path_factory) -> Path:
    """A predictor trained (one epoch) from the tiny BERT, shared by predictor and CLI tests."""
    out = tmp_path_factory.mktemp("pred") / "bert"
    ktrain_recipes.run_recipe(ktrain_recipes.RecipeConfig(tiny_models["bert"], data=str(small_data), out=str(out),
                                                          epochs=1, batch_size=16, lr=1e-3, seed=3))
    return out


def build_learner(model_path: str, ds, batch_size: int = 16, maxlen: int | str = "auto", seed: int = 0,
                  train=None, val=None):
    """The notebooks' steps, from text.Transformer to ktrain.get_learner (bucketed); returns (t, learner)."""
    import ktrain
    from ktrain import text

    train = train or (ds.texts("train"), ds.labels("train"))
    val = val or (ds.texts("validation"), ds.labels("validation"))
    maxlen = ktrain_recipes.resolve_maxlen(maxlen, ktrain_recipes.load_tokenizer(model_path), train[0])
    t = text.Transformer(model_path, maxlen=maxlen, class_names=ds.label_names, batch_size=batch_size)
    trn = ktrain_recipes.bucket_batches(t.preprocess_train(train[0], ds.label_ids(train[1]), verbose=0), seed)
    vdata = ktrain_recipes.bucket_batches(t.preprocess_test(val[0], ds.label_ids(val[1]), verbose=0), seed)
    return t, ktrain.get_learner(t.get_classifier(), train_data=trn, val_data=vdata, batch_size=batch_size)


@pytest.fixture(scope="session")
def exported(tiny_predictor, tmp_path_factory) -> Path:
    """A copy of the tiny predictor with its ONNX files (fp32 and int8)."""
    import shutil

    from ktrain_recipes.inference.onnx_inference import export_onnx

    folder = tmp_path_factory.mktemp("exported") / "pred"
    shutil.copytree(tiny_predictor, folder)
    export_onnx(folder)
    return folder


@pytest.fixture(scope="session")
def twin(exported, tmp_path_factory) -> Path:
    """``exported``'s reversed twin (see ``predictor_copies.reversed_twin``)."""
    from predictor_copies import reversed_twin

    return reversed_twin(exported, tmp_path_factory.mktemp("twin") / "twin")
