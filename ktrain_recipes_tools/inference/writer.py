"""Writing predictions to a file as they come, chunk by chunk, in the input's order: text, JSON, JSON lines, CSV or
Parquet, through a partial file beside ``--output`` that is renamed into place only when every chunk is written."""

from __future__ import annotations

import csv
import json
import errno
import os
import sys

import numpy as np

from ktrain_recipes.errors import RecipesError
from ktrain_recipes_tools.inference.output import check_output_file, jsonable, partial_file
from ktrain_recipes.predictor.swaps import clean_litter

FULL = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG)  # the output's disk, not the input, is at fault


class PredictionWriter:
    """Writes prediction records in order, to a file beside ``output`` renamed into place by ``close``
    (or to stdout). Formats: text (label TAB text), json (one list), jsonl, csv, parquet."""

    def __init__(self, output: str | os.PathLike | None, fmt: str, label_names: list[str], proba: bool,
                 inputs: tuple = (), cuts=None, min_confidence: float | None = None):
        self.fmt, self.names, self.proba = fmt, list(label_names), proba
        self.cuts = cuts  # several labels per text: each label's threshold (prediction.threshold_cuts)
        self.min_confidence = min_confidence  # a top probability under it: no label, withheld
        self.output = check_output_file(output, inputs) if output else None
        self.rows = 0
        if self.output is not None:
            clean_litter(self.output)  # partial files of runs that were killed part-way
            self.partial = partial_file(self.output)
        self._file = None
        self._csv = None
        self._parquet = None

    def _open(self):
        if self.output is None:
            return sys.stdout
        return open(self.partial, "w", encoding="utf-8", newline="")

    def write(self, texts: list, probs: np.ndarray, table=None, counts: list | None = None) -> None:
        """Write one chunk's records; ``counts``: each text's (tokens read, tokens it has), written as the columns
        ``tokens`` and ``truncated`` (``predict --report-truncation``)."""
        from ktrain_recipes_tools.inference.output import flat_labels, prediction_records, shown_labels
        from ktrain_recipes.inference.prediction import escape

        records = prediction_records(texts, probs, self.names, self.proba or self.fmt in ("csv", "parquet"), table,
                                     counts, cuts=self.cuts, min_confidence=self.min_confidence)
        if self.fmt == "csv":
            records = flat_labels(records)
        if self.fmt == "parquet":
            import pandas as pd
            import pyarrow as pa
            import pyarrow.parquet as pq

            batch = pa.Table.from_pandas(pd.DataFrame(records), preserve_index=False)
            if self._parquet is None:
                self._parquet = pq.ParquetWriter(self.partial, batch.schema)
            self._parquet.write_table(batch)
        else:
            if self._file is None:
                self._file = self._open()
                if self.fmt == "json":
                    self._file.write("[\n")
            f = self._file
            if self.fmt == "csv":
                if self._csv is None:
                    self._csv = csv.DictWriter(f, fieldnames=list(records[0]))
                    self._csv.writeheader()
                self._csv.writerows(records)
            elif self.fmt in ("json", "jsonl"):
                for i, record in enumerate(records):
                    text = json.dumps(record, ensure_ascii=False, default=jsonable)
                    if self.fmt == "json":
                        text = ("  " if self.rows + i == 0 else ",\n  ") + text
                    f.write(text if self.fmt == "json" else text + "\n")
            else:
                for text, record in zip(texts, records):
                    shown = " ||| ".join(text) if isinstance(text, tuple) else text
                    part = "\t".join(f"{n}={record[f'p_{n}']:.3f}" for n in self.names) + "\t" if self.proba else ""
                    if "tokens" in record:
                        part += f"tokens={record['tokens']}\ttruncated={str(record['truncated']).lower()}\t"
                    f.write(f"{shown_labels(record)}\t{part}{escape(shown)}\n")
        self.rows += len(records)

    def close(self) -> None:
        """Finish the file and rename it into place."""
        if self._parquet is not None:
            self._parquet.close()
        if self._file is None and self._parquet is None and self.fmt != "parquet":
            self._file = self._open()
            if self.fmt == "json":
                self._file.write("[")
        if self._file is not None:
            if self.fmt == "json":
                self._file.write("\n]\n")
            if self._file is not sys.stdout:
                self._file.close()
        if self.output is not None:
            os.replace(self.partial, self.output)

    def __enter__(self) -> "PredictionWriter":
        return self

    def __exit__(self, kind, error, trace) -> None:
        """Rename the output into place when every chunk was written; drop it on any error (or no text)."""
        if kind is None and self.rows == 0:
            self.abort()
            raise RecipesError("the input holds no text to classify: give a file with at least one non-blank text")
        try:
            if kind is None:
                self.close()
                return
        except OSError as exc:  # the last bytes reach the disk at close: a full disk shows here
            kind, error = OSError, exc
        self.abort()
        if kind is not None and issubclass(kind, OSError) and self.output is not None and error.errno in FULL:
            raise RecipesError(f"cannot write '{self.output}' ({error.strerror}): free some space or choose another "
                               "--output; nothing was written") from None

    def abort(self) -> None:
        """Drop the partial file: nothing is left at, or beside, ``output``."""
        for handle in (self._file, self._parquet):
            try:
                if handle is not None and handle is not sys.stdout:
                    handle.close()
            except Exception:  # noqa: BLE001  (closing a half-written file while already failing)
                pass
        if self.output is not None:
            self.partial.unlink(missing_ok=True)
