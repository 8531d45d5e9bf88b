"""Score a corpus on a Ray cluster (or a local Ray) with Ray Data: the one adapter to a cluster engine.

Ray Data reads the input in blocks; an actor pool runs ``map_batches`` with the int8 ONNX predictor (one model
load per actor, no TensorFlow in the workers) and answers each row's probabilities; the driver receives them in
input order (``preserve_order``) and writes them beside the rows as the single-process path reads them (the same
reader and writer: the same columns, types, refusals and line numbers). The same code runs locally
(``ray.init(num_cpus=...)``) and on a cluster (``--ray-address``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from ktrain_recipes.batch_policy import STREAM_CHUNK
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.network import connection_error, split_address
from ktrain_recipes.config import check_limit
from ktrain_recipes_tools.inference.output import output_format
from ktrain_recipes.inference.input_files import check_input, input_format, read_chunks, texts_of, where
from ktrain_recipes_tools.inference.writer import PredictionWriter

ERROR_COLUMN = "__error"
PROBA_PREFIX = "__proba_"  # the actors' answer columns: no input column is read from or written over


class _Scorer:
    """One per actor: loads the int8 model once, then scores pandas batches. It answers only each row's
    probabilities (under names no input can hold) and whether its text was unusable: the rows themselves are written
    from the driver's own reading of the input, by the local engine's rules."""

    def __init__(self, folder: str, pair_column: str | None, jsonl: bool):
        from ktrain_recipes.inference.onnx_inference import load_int8_predictor

        self.model = load_int8_predictor(folder)
        self.pair_column = pair_column
        self.jsonl = jsonl

    def texts(self, batch) -> list:
        if self.jsonl:  # each row a line of the file: JSON parsed here, as Python parses it for the local engine
            rows = [_json_object(line) for line in batch["text"]]
            firsts = [r.get("text") for r in rows]
            return list(zip(firsts, [r.get(self.pair_column) for r in rows])) if self.pair_column else firsts
        return list(zip(batch["text"], batch[self.pair_column])) if self.pair_column else list(batch["text"])

    def __call__(self, batch):
        import pandas as pd

        from ktrain_recipes.inference.prediction import classify
        from ktrain_recipes.inference.prediction import is_blank, unreadable

        texts = self.texts(batch)
        bad = [not all(isinstance(p, str) and not is_blank(p) and not unreadable(p)
                       for p in (t if isinstance(t, tuple) else (t,))) for t in texts]
        good = [t for t, b in zip(texts, bad) if not b]
        probs = np.full((len(texts), len(self.model.classes)), np.nan, dtype=np.float32)
        if good:
            # the same call, on the same chunk, as the single-process path: int8 results depend on which texts
            # share a model call (activations are quantized per call), so equal chunks give equal answers
            probs[~np.array(bad)] = classify(self.model, good, proba=True)
        out = pd.DataFrame({f"{PROBA_PREFIX}{i}": probs[:, i] for i in range(probs.shape[1])})
        out[ERROR_COLUMN] = bad
        return out


def _json_object(line: str) -> dict:
    """A .jsonl line as a dict; anything else (not JSON, not an object) as an empty one, whose missing text marks
    the row unusable (the driver's reading names the line and what is wrong with it)."""
    import json

    try:
        row = json.loads(line)
    except ValueError:
        return {}
    return row if isinstance(row, dict) else {}


def check_address(address: str | None) -> None:
    """Refuse, in one line, a ``--ray-address`` that is not ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``."""
    import re

    if address is None or address == "auto":
        return
    if not re.fullmatch(r"(ray://)?[A-Za-z0-9.\-_\[\]:]+:\d{1,5}", address) or int(address.rsplit(":", 1)[1]) > 65535:
        raise RecipesError(f"--ray-address {address!r} is not HOST:PORT, ray://HOST:PORT or auto: give the address "
                           "`ray start --head` printed")
    # Ray itself would retry for minutes against an address nothing answers
    exc = connection_error(*split_address(address.removeprefix("ray://")), timeout_s=5)
    if exc:
        raise RecipesError(f"nothing answers at --ray-address {address} ({exc.strerror or exc}): start the cluster "
                           "(`ray start --head`), or leave --ray-address out for a local Ray") from None


def _read(path: Path):
    import ray

    fmt = input_format(path)
    if fmt == "parquet":
        return ray.data.read_parquet(str(path))
    if fmt == "csv":  # every column as text, as the single-process reader keeps them ("007" stays "007")
        import pandas as pd
        import pyarrow as pa
        from pyarrow import csv as pacsv

        header = pd.read_csv(path, nrows=0).columns
        types = {name: pa.string() for name in header}
        return ray.data.read_csv(str(path), convert_options=pacsv.ConvertOptions(
            column_types=types, strings_can_be_null=False, quoted_strings_can_be_null=False))
    # .txt and .jsonl as lines: Arrow's JSON reader would unify the rows' fields (a missing one null, a column's ints
    # floats beside a null) and refuse rows whose types differ; the actors parse each line as the local reader does
    ds = ray.data.read_text(str(path))
    return ds.filter(lambda row: bool(row["text"].strip()))  # as the single-process reader: blank lines skipped


def _write_beside_the_input(scored, path: Path, pair_column: str | None, n_labels: int, chunk_size: int,
                            writer: PredictionWriter) -> int:
    """Write the actors' answers beside the rows as the driver reads them itself, with the local engine's reader
    (its columns, their types, its refusals and line numbers), chunk by chunk; return the rows written."""
    local = read_chunks(path, pair_column=pair_column, chunk_size=chunk_size)
    rows = 0
    for batch in scored.iter_batches(batch_format="pandas", batch_size=chunk_size):
        table = next(local, None)
        if table is None or len(table) != len(batch):
            raise RecipesError(f"{path}: Ray read {rows + len(batch)} rows where this process read "
                               f"{rows + (0 if table is None else len(table))}: score it with --engine local")
        if batch[ERROR_COLUMN].any():
            bad = int(np.argmax(batch[ERROR_COLUMN].to_numpy()))
            raise RecipesError(f"{path}: {where(table, rows, bad)} is empty, only whitespace, not text or "
                               "not valid Unicode: fix or remove it")
        probs = batch[[f"{PROBA_PREFIX}{i}" for i in range(n_labels)]].to_numpy()
        writer.write(texts_of(table, pair_column), probs, table if input_format(path) != "txt" else None)
        rows += len(batch)
    if next(local, None) is not None:
        raise RecipesError(f"{path}: Ray read {rows} rows, fewer than this process: score it with --engine local")
    return rows


def predict_with_ray(folder: str | os.PathLike, path: str | os.PathLike, output: str, fmt: str = "csv",
                     proba: bool = True, pair_column: str | None = None, address: str | None = None,
                     num_cpus: int | None = None, actors: int | None = None, chunk_size: int = STREAM_CHUNK) -> int:
    """Classify a file with Ray Data and write the predictions to ``output`` in input order; return the count.

    Args:
      folder: a predictor folder with its int8 ONNX model (``export``).
      path: .txt, .csv, .jsonl or .parquet, with a ``text`` column (and ``pair_column`` for pairs).
      output: the file to write (.parquet, .csv, .jsonl, or --format).
      address: a Ray cluster's address; None starts a local Ray with ``num_cpus`` CPUs.
      actors: how many model actors (default: the CPUs Ray reports).
    """
    import ray

    from ktrain_recipes.inference.onnx_inference import load_int8_predictor

    check_limit(chunk_size, "--chunk-size")
    check_address(address)
    model = load_int8_predictor(folder)  # fail early, in the driver, on a folder without its int8 model
    path = check_input(path)
    fmt = output_format(fmt, output)
    writer = PredictionWriter(output, fmt, model.classes, proba, inputs=(path,))
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, num_cpus=None if address else (num_cpus or os.cpu_count()),
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        ray.data.DataContext.get_current().execution_options.preserve_order = True
        ray.data.DataContext.get_current().enable_progress_bars = False
        ds = _read(path)
        # one CPU per model actor, and one left for reading blocks: without it the reads wait for the actors and
        # the actors for the reads
        n_actors = actors or max(1, int(ray.cluster_resources().get("CPU", 2)) - 1)
        scored = ds.map_batches(_Scorer, fn_constructor_args=(str(folder), pair_column, input_format(path) == "jsonl"),
                                batch_format="pandas", batch_size=chunk_size, num_cpus=1,
                                compute=ray.data.ActorPoolStrategy(size=n_actors))
        with writer:
            rows = _write_beside_the_input(scored, path, pair_column, len(model.classes), chunk_size, writer)
    finally:
        if started:
            ray.shutdown()
    print(f"ray: {rows} texts, {n_actors} model actor(s)", file=sys.stderr)
    return rows
