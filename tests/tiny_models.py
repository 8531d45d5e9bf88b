"""Test-only: tiny, randomly initialised checkpoints of each model family, built offline.

CI cannot download BERT/RoBERTa/DistilBERT/ALBERT/ELECTRA weights, so the tests and the notebooks'
smoke runs use these: the real architecture and tokenizer type of each family, trained on local
text, at a size that fine-tunes in seconds. They learn little; they exercise every code path.

``python tests/tiny_models.py SMOKE.json`` builds them and writes the overrides file that
tests/notebook_smoke.py applies to the notebooks when $KTRAIN_RECIPES_SMOKE names it (see the Makefile).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import ktrain_recipes  # noqa: F401  (compat shims before TensorFlow)

FAMILIES = ["bert", "roberta", "distilbert", "albert", "electra"]
_SIZE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
             max_position_embeddings=130)
WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tiny_model(family: str, folder: str | os.PathLike, texts: list[str], vocab_size: int = 800) -> Path:
    """Build a tiny random ``family`` checkpoint (config, tf_model.h5, tokenizer) in ``folder``.

    Args:
      family: one of FAMILIES.
      folder: where to write it (created; reused when it already holds a checkpoint).
      texts: text to train the tokenizer on.
    """
    from transformers import TFAutoModel

    folder = Path(folder)
    if (folder / "tf_model.h5").exists():
        return folder
    work = Path(tempfile.mkdtemp(prefix="tok-"))
    tokenizer = {"roberta": _bpe_tokenizer, "albert": _unigram_tokenizer}.get(family, _wordpiece_tokenizer)(
        family, texts, vocab_size, work)
    config = _config(family, len(tokenizer))
    model = TFAutoModel.from_config(config)
    model(model.dummy_inputs, training=False)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_model(family: str, texts: list[str] | None = None) -> str:
    """Return the folder of a cached tiny ``family`` model, building it on first use from emotion text."""
    from ktrain_recipes.data.loading import load_emotion
    from ktrain_recipes.models import cache_dir

    if texts is None:
        texts = load_emotion().texts("train")[:3000]
    return str(build_tiny_model(family, cache_dir() / f"tiny-{family}", texts))


def _config(family: str, vocab_size: int):
    from transformers import AlbertConfig, BertConfig, DistilBertConfig, ElectraConfig, RobertaConfig

    if family == "bert":
        return BertConfig(vocab_size=vocab_size, **_SIZE)
    if family == "electra":
        return ElectraConfig(vocab_size=vocab_size, embedding_size=32, **_SIZE)
    if family == "roberta":
        # one segment, as every released RoBERTa checkpoint (roberta-base: type_vocab_size 1)
        return RobertaConfig(vocab_size=vocab_size, pad_token_id=1, bos_token_id=0, eos_token_id=2, type_vocab_size=1,
                             **_SIZE)
    if family == "albert":
        return AlbertConfig(vocab_size=vocab_size, embedding_size=16, pad_token_id=0, bos_token_id=2,
                            eos_token_id=3, **_SIZE)
    if family == "distilbert":
        return DistilBertConfig(vocab_size=vocab_size, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                max_position_embeddings=130)
    raise ValueError(f"unknown family {family!r}; choose one of {FAMILIES}")


def _wordpiece_tokenizer(family: str, texts: list[str], vocab_size: int, work: Path):
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast, DistilBertTokenizerFast, ElectraTokenizerFast

    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator(texts, vocab_size=vocab_size, special_tokens=WORDPIECE_SPECIALS)
    vocab = tok.save_model(str(work))[0]
    cls = {"bert": BertTokenizerFast, "distilbert": DistilBertTokenizerFast, "electra": ElectraTokenizerFast}
    return cls[family](vocab_file=vocab, do_lower_case=True, model_max_length=128)


def _bpe_tokenizer(family: str, texts: list[str], vocab_size: int, work: Path):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizerFast

    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(texts, vocab_size=vocab_size,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    vocab, merges = tok.save_model(str(work))
    return RobertaTokenizerFast(vocab_file=vocab, merges_file=merges, model_max_length=128)


def _unigram_tokenizer(family: str, texts: list[str], vocab_size: int, work: Path):
    """ALBERT's tokenizer is a SentencePiece unigram model, trained here with sentencepiece itself."""
    import sentencepiece as spm
    from transformers import AlbertTokenizerFast

    corpus = work / "corpus.txt"
    corpus.write_text("\n".join(texts))
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(work / "spiece"), vocab_size=vocab_size, model_type="unigram",
        pad_id=0, unk_id=1, bos_id=2, eos_id=3, pad_piece="<pad>", unk_piece="<unk>", bos_piece="[CLS]",
        eos_piece="[SEP]", user_defined_symbols=["[MASK]"], minloglevel=2,
    )
    return AlbertTokenizerFast(vocab_file=str(work / "spiece.model"), model_max_length=128)


def stand_ins() -> dict[str, str]:
    """Every registry name and hub id, mapped to the tiny family that stands in for it (TinyBERT and MiniLM
    are BERTs; MPNet, whose vocabulary is not BERT's, gets a RoBERTa, so that a MiniLM student of an MPNet teacher
    reads with its own tokenizer in smoke runs too): derived from ``models.REGISTRY``, so a new registry entry gets
    its stand-in."""
    from ktrain_recipes.models import REGISTRY

    other_vocabulary = {"mpnet": "roberta"}
    families = {name: name if name in FAMILIES else other_vocabulary.get(name, "bert") for name in REGISTRY}
    return {**families, **{REGISTRY[name].model_id: family for name, family in families.items()}}


def tiny_finetuned(family: str, label_names: list[str]) -> str:
    """A tiny ``family`` classifier with one output per label, named in its config: it stands in for the
    published fine-tuned models (``studies.finetuned.PUBLISHED``), which are folders of this kind."""
    from transformers import TFAutoModelForSequenceClassification

    from ktrain_recipes.models import cache_dir

    folder = cache_dir() / f"tiny-{family}-finetuned"
    if not (folder / "tf_model.h5").exists():
        source = tiny_model(family)
        model = TFAutoModelForSequenceClassification.from_pretrained(
            source, num_labels=len(label_names), id2label=dict(enumerate(label_names)),
            label2id={n: i for i, n in enumerate(label_names)})
        model.save_pretrained(folder)
        for path in Path(source).iterdir():  # the tokenizer's files
            if path.name not in ("config.json", "tf_model.h5"):
                (folder / path.name).write_bytes(path.read_bytes())
    return str(folder)
def tiny_keras_hub_bert() -> str:
    """A tiny random BERT as a Hugging Face folder KerasHub reads (PyTorch weight names in model.safetensors),
    with the tiny BERT's WordPiece vocabulary: it stands in for ``hf://sentence-transformers/all-MiniLM-L6-v2``."""
    import json

    import numpy as np
    from safetensors.numpy import save_file

    from ktrain_recipes.models import cache_dir

    folder = cache_dir() / "tiny-bert-keras-hub"
    if (folder / "model.safetensors").exists():
        return str(folder)
    source = Path(tiny_model("bert"))
    config = json.loads((source / "config.json").read_text())
    config["max_position_embeddings"] = 512  # KerasHub 0.26 builds 512 positions whatever the config says
    h, inter, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    shapes = {"embeddings.word_embeddings.weight": (config["vocab_size"], h),
              "embeddings.position_embeddings.weight": (config["max_position_embeddings"], h),
              "embeddings.token_type_embeddings.weight": (config["type_vocab_size"], h),
              "pooler.dense.weight": (h, h), "pooler.dense.bias": (h,)}
    for norm in ("embeddings.LayerNorm",):
        shapes.update({f"{norm}.weight": (h,), f"{norm}.bias": (h,)})
    for i in range(layers):
        at = f"encoder.layer.{i}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes.update({f"{at}{name}.weight": (h, h), f"{at}{name}.bias": (h,)})
        shapes.update({f"{at}intermediate.dense.weight": (inter, h), f"{at}intermediate.dense.bias": (inter,),
                       f"{at}output.dense.weight": (h, inter), f"{at}output.dense.bias": (h,)})
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes.update({f"{at}{norm}.weight": (h,), f"{at}{norm}.bias": (h,)})
    rng = np.random.default_rng(0)
    weights = {name: (np.ones(shape) if name.endswith("LayerNorm.weight") else rng.normal(0, 0.02, shape))
               .astype("float32") for name, shape in shapes.items()}
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    save_file(weights, str(staging / "model.safetensors"))
    (staging / "config.json").write_text(json.dumps(config, indent=2))
    for path in source.iterdir():  # the tokenizer's files
        if path.name not in ("tf_model.h5", "config.json"):
            (staging / path.name).write_bytes(path.read_bytes())
    staging.rename(folder)
    return str(folder)


# tiny models have 2 layers; smoke marks the runs, so tables and charts say their figures are not results
SMOKE_SETTINGS = {"smoke": True, "limit": 200, "eval_limit": 100, "epochs": 1, "lr": 1e-3, "layers": 1, "rounds": 1,
                  "steps": 1, "calls": 5}  # the cost table (notebook 03): one pass, a step and a few calls per model


def write_smoke_overrides(path: str | os.PathLike) -> dict:
    """Build the tiny models and write the CI overrides file for the notebooks; return its content."""
    import json

    from ktrain_recipes.data.loading import EMOTION_LABELS
    from ktrain_recipes.keras3.presets import MINILM_PRESET
    from ktrain_recipes_tools.studies.finetuned import PUBLISHED

    models = {name: tiny_model(family) for name, family in stand_ins().items()}
    models.update({hub: tiny_finetuned(family, EMOTION_LABELS) for family, (hub, _) in PUBLISHED.items()})
    models[MINILM_PRESET] = tiny_keras_hub_bert()  # notebook 10's KerasHub preset
    content = {"models": models, "settings": SMOKE_SETTINGS}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(content, indent=2))
    return content


if __name__ == "__main__":
    import sys

    write_smoke_overrides(sys.argv[1])
    print(f"wrote {sys.argv[1]}")
