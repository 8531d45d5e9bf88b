"""The hub's own paths, run against a hub on 127.0.0.1 (tests/local_hub.py) as they run on Colab.

The hub client keeps every downloaded file as a link from ``snapshots/REV`` into ``blobs/`` (battery v7, X53: every
hub model was refused through those links and no test had a hub). Each case runs in a fresh Python, with
``HF_ENDPOINT`` at the local hub and ``HF_HOME`` at an empty folder: the client reads both when it is imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from local_hub import serving_hub

pytestmark = pytest.mark.network

EMOTION_NAMES = ["sadness", "joy", "love", "anger", "fear", "surprise"]


def emotion_repo(folder: Path, emotion, rows: int = 120) -> None:
    """dair-ai/emotion as the hub lays it out: parquet files under split/, ClassLabel names, a README's configs."""
    import datasets

    (folder / "split").mkdir(parents=True)
    features = datasets.Features({"text": datasets.Value("string"), "label": datasets.ClassLabel(names=EMOTION_NAMES)})
    for split, source in [("train", "train"), ("validation", "validation"), ("test", "validation")]:
        texts, labels = emotion.texts(source)[:rows], emotion.labels(source)[:rows]
        table = datasets.Dataset.from_dict({"text": texts, "label": [EMOTION_NAMES.index(y) for y in labels]},
                                           features=features)
        table.to_parquet(str(folder / "split" / f"{split}-00000-of-00001.parquet"))
    configs = "\n".join(f"  - split: {s}\n    path: split/{s}-*" for s in ("train", "validation", "test"))
    card = f"---\nconfigs:\n- config_name: split\n  data_files:\n{configs}\n  default: true\n---\n"
    (folder / "README.md").write_text(card + "# emotion, a slice for the tests\n")


def goemotions_repo(folder: Path) -> None:
    """google-research-datasets/go_emotions as the hub lays out its "simplified" configuration: parquet files of
    text, labels (a Sequence of ClassLabel) and id, from the slice the package ships."""
    import datasets

    from ktrain_recipes.data.loading import load_data

    data = load_data(Path(kr_data_folder()) / "goemotions_slice")
    names = data.label_names
    features = datasets.Features({"text": datasets.Value("string"),
                                  "labels": datasets.Sequence(datasets.ClassLabel(names=names)),
                                  "id": datasets.Value("string")})
    (folder / "simplified").mkdir(parents=True)
    for split, ours in (("train", "train"), ("validation", "validation"), ("test", "test")):
        texts, rows = data.texts(ours)[:200], data.labels(ours)[:200]
        table = datasets.Dataset.from_dict({"text": texts, "labels": [[names.index(n) for n in r] for r in rows],
                                            "id": [f"c{i}" for i in range(len(texts))]}, features=features)
        table.to_parquet(str(folder / "simplified" / f"{split}-00000-of-00001.parquet"))
    configs = "\n".join(f"  - split: {s}\n    path: simplified/{s}-*" for s in ("train", "validation", "test"))
    (folder / "README.md").write_text(f"---\nconfigs:\n- config_name: simplified\n  data_files:\n{configs}\n"
                                      "  default: true\n---\n# go_emotions, a slice for the tests\n")


def kr_data_folder() -> str:
    import ktrain_recipes

    return str(Path(ktrain_recipes.__file__).parent / "data")


@pytest.fixture(scope="module")
def hub(tiny_models, emotion, tmp_path_factory):
    """The local hub, serving a tiny BERT (acme/tiny-bert), a KerasHub-readable BERT (acme/tiny-st-bert), a model
    whose chat template is named '../../x' (acme/bad-template) and a slice of emotion (dair-ai/emotion)."""
    import tiny_models as tiny

    root = tmp_path_factory.mktemp("hub") / "repos"
    shutil.copytree(tiny_models["bert"], root / "models" / "acme" / "tiny-bert")
    shutil.copytree(tiny_models["bert"], root / "models" / "bert-base-uncased")  # `--model bert`: notebook 02's id
    shutil.copytree(tiny.tiny_keras_hub_bert(), root / "models" / "acme" / "tiny-st-bert",
                    ignore=shutil.ignore_patterns("made_from.json"))
    bad = root / "models" / "acme" / "bad-template"
    shutil.copytree(tiny_models["bert"], bad)
    config = json.loads((bad / "tokenizer_config.json").read_text())
    config["chat_template"] = [{"name": "../../x", "template": "{{ messages }}"}]
    (bad / "tokenizer_config.json").write_text(json.dumps(config))
    emotion_repo(root / "datasets" / "dair-ai" / "emotion", emotion)
    goemotions_repo(root / "datasets" / "google-research-datasets" / "go_emotions")
    with serving_hub(root) as url:
        yield url


def on_hub(hub: str, home: Path, code: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python whose hub is ``hub`` and whose hub cache is ``home``."""
    env = {**os.environ, "HF_ENDPOINT": hub, "HF_HOME": str(home), "HF_HUB_OFFLINE": "0",
           "HF_DATASETS_OFFLINE": "0", "PYTHONPATH": str(Path(__file__).parent)}
    env.pop("EMOTION_DATA", None)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)


def snapshot(home: Path, repo: str) -> Path:
    """The one snapshot folder of ``repo`` in the hub cache ``home``."""
    (folder,) = (home / "hub" / f"models--{repo.replace('/', '--')}" / "snapshots").iterdir()
    return folder


def test_a_hub_model_resolves_and_ktrain_reads_it_through_the_caches_links(hub, tmp_path):
    home = tmp_path / "hf"
    done = on_hub(hub, home, "from ktrain_recipes.models import resolve_model\n"
                             "from ktrain import text\n"
                             "path = resolve_model('acme/tiny-bert')\n"
                             "t = text.Transformer(path, maxlen=16, class_names=['a', 'b'])\n"
                             "print('resolved', path, type(t.config).__name__)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resolved acme/tiny-bert BertConfig" in done.stdout
    config = snapshot(home, "acme/tiny-bert") / "config.json"
    assert config.is_symlink() and "blobs" in os.readlink(config)  # laid out as the client lays it out


def test_train_from_the_hub_model_on_the_hubs_emotion(hub, tmp_path):
    """`--model org/name` with no --data: the model and emotion both come from the hub, as on Colab."""
    out = tmp_path / "run"
    done = on_hub(hub, tmp_path / "hf", "import sys\nfrom ktrain_recipes.__main__ import main\n"
                  f"sys.exit(main(['train', '--model', 'acme/tiny-bert', '--limit', '96', '--eval-limit', '48', "
                  f"'--epochs', '1', '--batch-size', '16', '--lr', '1e-3', '--out', {str(out)!r}]))")
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["data_source"] == "hub:dair-ai/emotion"
    assert metrics["label_names"] == EMOTION_NAMES and metrics["settings"]["model"] == "acme/tiny-bert"


def test_load_emotion_reads_the_hubs_dataset(hub, tmp_path):
    done = on_hub(hub, tmp_path / "hf", "import ktrain_recipes as kr\nd = kr.load_emotion()\n"
                                        "print(d.source, len(d.texts('train')), len(d.texts('test')), d.label_names)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[:3] == ["hub:dair-ai/emotion", "120", "120"]


def test_the_keras_hub_preset_from_the_hub(hub, tmp_path):
    done = on_hub(hub, tmp_path / "hf", "from ktrain_recipes.keras3.presets import keras_hub_preset\n"
                                        "print(keras_hub_preset('hf://acme/tiny-st-bert'))")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (Path(done.stdout.strip().splitlines()[-1]) / "model.safetensors").is_file()


def test_a_chat_template_named_to_leave_the_folder_is_refused_from_the_hub(hub, tmp_path):
    """CVE-2026-9856: the name would make ktrain's save write outside the predictor folder."""
    done = on_hub(hub, tmp_path / "hf", "from ktrain_recipes.models import resolve_model\n"
                                        "resolve_model('acme/bad-template')")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "CVE-2026-9856" in last and "'../../x'" in last, done.stderr[-2000:]


def test_an_unknown_hub_model_is_named(hub, tmp_path):
    done = on_hub(hub, tmp_path / "hf", "from ktrain_recipes.models import resolve_model\n"
                                        "resolve_model('acme/none')")
    assert done.returncode != 0
    assert "model 'acme/none' is not on the Hugging Face hub: check the id" in done.stderr


def test_goemotions_from_the_hub_reads_as_several_labels_per_text(hub, tmp_path):
    """The hub's go_emotions ("simplified"): a labels column of ClassLabel ids, several per text."""
    done = on_hub(hub, tmp_path / "hf", "from ktrain_recipes.data.loading import load_data\n"
                  "from ktrain_recipes.data.readers import Columns\n"
                  "d = load_data('google-research-datasets/go_emotions', Columns(label='labels'), "
                  "hub_config='simplified')\n"
                  "print(d.multilabel, len(d.label_names), d.label_names[0], len(d.texts('train')), "
                  "sum(len(r) > 1 for r in d.labels('train')) > 0)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-5:] == ["True", "28", "admiration", "200", "True"]


def test_the_registrys_bert_comes_from_the_hub_as_notebooks_02_and_03_fetch_it(hub, tmp_path):
    """`--model bert` is the hub's canonical `bert-base-uncased` (no owner): notebook 02's one-parameter switch."""
    out = tmp_path / "run"
    done = on_hub(hub, tmp_path / "hf", "import sys\nfrom ktrain_recipes.__main__ import main\n"
                  f"sys.exit(main(['train', '--model', 'bert', '--limit', '96', '--eval-limit', '48', "
                  f"'--epochs', '1', '--batch-size', '16', '--out', {str(out)!r}]))")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((out / "metrics.json").read_text())["model_id"] == "bert-base-uncased"
    assert snapshot(tmp_path / "hf", "bert-base-uncased").joinpath("config.json").is_symlink()
