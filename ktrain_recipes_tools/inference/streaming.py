"""Score a file of any size in constant memory: read it in chunks (``input_files``), classify each chunk, write as
you go.

``.txt`` (one text per line, split on newlines only), ``.csv``, ``.jsonl`` and ``.parquet`` are read in chunks
of ``chunk_size`` rows; the output keeps the input's order and columns and is written beside ``--output``, then
renamed into place, so a kill part-way leaves no half-written output. ``ray_scoring`` runs the same steps on
Ray Data.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


from ktrain_recipes.batch_policy import STREAM_CHUNK
from ktrain_recipes.config import check_limit
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.inference.input_files import check_input, input_format, read_chunks, texts_of, where
from ktrain_recipes_tools.inference.output import output_format
from ktrain_recipes_tools.inference.writer import PredictionWriter


def predict_file(predictor, path: str | os.PathLike, output: str | None = None, fmt: str = "text",
                 proba: bool = False, encoding: str = "utf-8", pair_column: str | None = None,
                 chunk_size: int = STREAM_CHUNK, progress: bool = True, report_truncation: bool = False,
                 min_confidence: float | None = None) -> int:
    """Classify every text of a file, chunk by chunk, writing as it goes; return the number of texts.

    Memory holds one chunk at a time. A bad row is reported with its row number; the partial output is removed.
    ``report_truncation``: two more columns, the tokens the model read of each text and whether it was cut.
    ``min_confidence``: texts whose top probability is under it get no label, marked ``withheld``.
    """
    from tqdm.auto import tqdm

    from ktrain_recipes.inference.prediction import as_classifier, classify
    from ktrain_recipes.inference.prediction import cut, threshold_cuts
    from ktrain_recipes_tools.inference.truncation import token_counts

    model = as_classifier(predictor)
    path = check_input(path)
    check_limit(chunk_size, "--chunk-size")
    fmt = output_format(fmt, output)
    if fmt == "parquet" and not output:
        raise RecipesError("parquet output needs --output FILE.parquet")
    writer = PredictionWriter(output, fmt, model.classes, proba, inputs=(path,), cuts=threshold_cuts(model),
                              min_confidence=min_confidence)
    bar = tqdm(total=count_rows(path), unit="texts", file=sys.stderr, disable=not progress, dynamic_ncols=True)
    start = 0
    with writer, bar:
        for chunk in read_chunks(path, encoding, pair_column, chunk_size):
            texts = texts_of(chunk, pair_column)
            if not texts:  # a .csv with a header only
                continue
            try:
                probs = classify(model, texts, proba=True)
            except RecipesError as exc:
                raise RecipesError(_shift_row(str(exc), start, path, chunk)) from None
            counts = token_counts(model.tokenizer, [tuple(cut(p, model.maxlen) for p in t) if isinstance(t, tuple)
                                                    else cut(t, model.maxlen) for t in texts],
                                  model.maxlen) if report_truncation else None
            writer.write(texts, probs, chunk if input_format(path) != "txt" else None, counts)
            start += len(texts)
            bar.update(len(texts))
    return start


def _shift_row(message: str, start: int, path: Path, chunk) -> str:
    """check_texts numbers texts within a chunk from 0: name the file's row (from 1) instead, or for a .txt or
    .jsonl its line (blank lines counted)."""
    import re

    match = re.match(r"text (\d+) (.*)", message)
    if not match:
        return message
    return f"{path}: {where(chunk, start, int(match.group(1)))} {match.group(2)}"


def count_rows(path: Path) -> int | None:
    """Rows in the input, for the progress bar (lines for text formats, less a CSV's header)."""
    if input_format(path) == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    lines = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            lines += block.count(b"\n")
    return max(lines - (input_format(path) == "csv"), 0) or None
