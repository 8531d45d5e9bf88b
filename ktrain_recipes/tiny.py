"""Tiny, randomly initialised checkpoints of each model family, built offline.

No BERT/RoBERTa/DistilBERT/ALBERT/ELECTRA weights can be downloaded here, so tests and the
notebooks' smoke runs (``KTRAIN_RECIPES_SMOKE=1``) use these: the real architecture and
tokenizer type of each family, trained on local text, at a size that fine-tunes in seconds.
They learn little; they exist to exercise every code path, not to be accurate.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from . import compat  # noqa: F401

FAMILIES = ["bert", "roberta", "distilbert", "albert", "electra"]
_SIZE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
             max_position_embeddings=130)
WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def smoke_mode() -> bool:
    """True when notebooks should run a seconds-long smoke run (``KTRAIN_RECIPES_SMOKE=1``, set by make test)."""
    return os.environ.get("KTRAIN_RECIPES_SMOKE") == "1"


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
    from .data import load_emotion
    from .models import cache_dir

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
        return RobertaConfig(vocab_size=vocab_size, pad_token_id=1, bos_token_id=0, eos_token_id=2, **_SIZE)
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
