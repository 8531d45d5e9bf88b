"""Read a file of texts in chunks, whatever its format: ``.txt`` (one text per line, split on newlines only),
``.csv``, ``.jsonl`` and ``.parquet``, each checked as it is read (its encoding, its columns, its line lengths), so a
file of any size passes through constant memory. ``streaming`` scores what this reads; ``ray_scoring`` reads the same
formats on Ray Data; ``read_texts`` reads a file that fits in memory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator


from ktrain_recipes.batch_policy import STREAM_CHUNK
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.inference.prediction import unreadable

# A line (a .txt text, a .jsonl row) longer than this is refused rather than read whole: the model reads a few
# thousand characters of a text at most, and a line this long is a file without newlines, or not text; reading
# one in full costs several bytes of memory per character.
MAX_LINE_CHARS = 1_000_000

INPUT_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet"}  # anything else: one text per line
TABLE_SUFFIXES = {".tsv", ".json", ".xlsx", ".xls"}  # tables in formats predict does not read: refused


def input_format(path: Path) -> str:
    return INPUT_FORMATS.get(path.suffix.lower(), "txt")


def check_input(path: str | os.PathLike) -> Path:
    """Refuse, in one line, an input that is not a regular readable file."""
    path = Path(path)
    if path.is_dir():
        raise RecipesError(f"--input '{path}' is a folder: give a .txt (one text per line), .csv, .jsonl or .parquet")
    if not path.exists():
        raise RecipesError(f"input file '{path}' does not exist")
    if not path.is_file():
        raise RecipesError(f"--input '{path}' is not a regular file (a pipe or a device?): give a file")
    if path.suffix.lower() in TABLE_SUFFIXES:  # read as lines, its header or brackets would be classified as texts
        raise RecipesError(f"--input '{path}' is a {path.suffix} table, which predict does not read: save it as .csv, "
                           ".jsonl or .parquet (with a 'text' column), or as .txt with one text per line")
    return path


def read_chunks(path: str | os.PathLike, encoding: str = "utf-8", pair_column: str | None = None,
                chunk_size: int = STREAM_CHUNK) -> Iterator:
    """Yield the input as pandas DataFrames of at most ``chunk_size`` rows, each with a ``text`` column."""
    import pandas as pd

    path = check_input(path)
    fmt = input_format(path)
    if pair_column and fmt == "txt":
        raise RecipesError(f"{path}: text pairs need a .csv, .jsonl or .parquet with a text and a {pair_column} column")
    try:
        if fmt == "txt":
            yield from _text_chunks(path, encoding, chunk_size)
            return
        if fmt == "csv":
            _check_header(path, encoding)
            chunks = pd.read_csv(path, chunksize=chunk_size, dtype=str, keep_default_na=False, encoding=encoding)
        elif fmt == "jsonl":  # Python's own parser: pandas' drops escaped lone surrogates without a word
            chunks = _jsonl_chunks(path, encoding, chunk_size)
        else:
            chunks = _parquet_chunks(path, chunk_size)
        start = 0
        for chunk in chunks:
            _check_columns(path, chunk, pair_column, start)
            out = chunk.reset_index(drop=True)
            out.attrs.update(chunk.attrs)
            yield out
            start += len(chunk)
    except RecipesError:
        raise
    except UnicodeDecodeError as exc:
        raise RecipesError(f"{path}: not valid {encoding} ({exc.reason}): give its encoding with --encoding") from None
    except Exception as exc:  # pandas and pyarrow raise many parser error types
        raise RecipesError(f"{path}: cannot be read as {fmt} ({str(exc).splitlines()[0][:200]})") from None


def read_texts(path: str | os.PathLike, encoding: str = "utf-8", pair_column: str | None = None):
    """Read a whole input into one table with a ``text`` column (and the input's other columns): ``read_chunks``
    joined, for inputs that fit in memory."""
    import pandas as pd

    chunks = list(read_chunks(path, encoding, pair_column))
    return pd.concat(chunks, ignore_index=True) if chunks else pd.DataFrame({"text": []}, dtype=str)


def _text_chunks(path: Path, encoding: str, chunk_size: int) -> Iterator:
    """One text per line (lines end at \n only, not at U+2028, U+0085 or \f; blank lines are skipped), a
    leading byte-order mark dropped. Bytes not valid in ``encoding`` are refused naming their line and byte."""
    import pandas as pd

    lines: list[str] = []
    numbers: list[int] = []  # each text's line in the file, for errors: blank lines are skipped, not forgotten

    def frame():
        chunk = pd.DataFrame({"text": lines})
        chunk.attrs["lines"] = numbers
        return chunk

    for number, line in enumerate(_decoded_lines(path, encoding), 1):
        line = line.rstrip("\n").removesuffix("\r")
        if line.strip():
            lines.append(line)
            numbers.append(number)
        if len(lines) == chunk_size:
            yield frame()
            lines, numbers = [], []
    if lines:
        yield frame()


def _parquet_chunks(path: Path, chunk_size: int) -> Iterator:
    """A parquet file in chunks of exactly ``chunk_size`` rows (the last fewer), as the other formats are: its
    record batches end where its row groups do, and the Ray engine lines its batches up with these chunks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pq.ParquetFile(path)
    pending = pa.Table.from_batches([], schema=source.schema_arrow)
    for batch in source.iter_batches(batch_size=chunk_size):
        pending = pa.concat_tables([pending, pa.Table.from_batches([batch])])
        while pending.num_rows >= chunk_size:
            yield pending.slice(0, chunk_size).to_pandas(integer_object_nulls=True)  # ints stay ints, nulls None
            pending = pending.slice(chunk_size)
    if pending.num_rows:
        yield pending.to_pandas(integer_object_nulls=True)


def _jsonl_chunks(path: Path, encoding: str, chunk_size: int) -> Iterator:
    """One JSON object per line, blank lines skipped; each chunk knows its rows' line numbers (``attrs['lines']``),
    so that an error names the line a record is on."""
    rows: list[dict] = []
    numbers: list[int] = []
    for number, line in enumerate(_decoded_lines(path, encoding), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise RecipesError(f"{path}: line {number} is not JSON ({exc.args[0].split(':')[0]}): give one JSON "
                               "object per line") from None
        if not isinstance(row, dict):
            raise RecipesError(f"{path}: line {number} is a JSON {type(row).__name__}, not an object with a 'text' "
                               "field")
        for value in _strings(row):  # nested too: a lone surrogate anywhere cannot be written out again
            why = unreadable(value)
            if why:
                raise RecipesError(f"{path}: line {number} {why}")
        rows.append(row)
        numbers.append(number)
        if len(rows) == chunk_size:
            yield _rows_frame(rows, numbers)
            rows, numbers = [], []
    if rows:
        yield _rows_frame(rows, numbers)


def _strings(value) -> Iterator[str]:
    """Every string in a JSON value (keys included), however deeply nested."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _rows_frame(rows: list[dict], numbers: list[int]):
    """A chunk of .jsonl rows as a DataFrame that holds the rows themselves too (``attrs['rows']``): the output keeps
    each row's own fields and values, where pandas fills a missing field with NaN and makes its column's ints floats."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame.attrs["rows"] = rows
    frame.attrs["lines"] = numbers
    return frame


# checked longest first: a UTF-32-LE mark begins with UTF-16-LE's
_WIDE_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
               (b"\xfe\xff", "UTF-16"))


def _decoded_lines(path: Path, encoding: str) -> Iterator[str]:
    """The file's lines (split at \n only), each decoded; a byte that is not valid names its line and offset."""
    import codecs

    try:
        wide = codecs.lookup(encoding).name.startswith(("utf-16", "utf-32"))
    except LookupError:
        raise RecipesError(f"unknown --encoding {encoding!r}: try utf-8 or latin-1") from None

    def too_long(number: int) -> RecipesError:
        return RecipesError(f"{path}: line {number} is longer than {MAX_LINE_CHARS:,} characters (a file without "
                            "newlines, or not text?): split it into one text per line")

    if wide:  # a newline is several bytes: let Python's reader split the lines
        with open(path, encoding=encoding, newline="\n") as f:
            number = 0
            while line := f.readline(MAX_LINE_CHARS + 2):  # never more than the limit in memory
                number += 1
                if len(line.removeprefix("\ufeff").rstrip("\n")) > MAX_LINE_CHARS:
                    raise too_long(number)
                yield line.removeprefix("\ufeff") if number == 1 else line  # utf-16-le/-be keep the mark
        return
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(0)
        for mark, name in _WIDE_MARKS:
            if head.startswith(mark):
                raise RecipesError(f"{path} starts with a {name} byte-order mark: give --encoding {name.lower()}")
        offset, number = 0, 0
        while raw := f.readline(4 * MAX_LINE_CHARS + 8):  # UTF-8 takes up to 4 bytes a character
            number += 1
            if len(raw) > MAX_LINE_CHARS and len(raw.rstrip(b"\r\n").decode(encoding, "replace")) > MAX_LINE_CHARS:
                raise too_long(number)
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise RecipesError(f"{path}: line {number}, byte {offset + exc.start} is not valid {encoding} (a "
                                   "binary file?): give a text file, or its encoding with --encoding") from None
            yield line.removeprefix("\ufeff") if number == 1 else line
            offset += len(raw)


def _check_header(path: Path, encoding: str) -> None:
    """Refuse a .csv whose header names a column twice: pandas would rename the second ('id.1'), and the output would
    hold a column the input did not."""
    import csv
    from collections import Counter

    with open(path, encoding=encoding, newline="") as f:
        header = next(csv.reader(f), [])
    twice = [name for name, n in Counter(header).items() if n > 1]
    if twice:
        raise RecipesError(f"{path}: the header names the column '{twice[0]}' {Counter(header)[twice[0]]} times: "
                           "give each column its own name")


def _check_columns(path: Path, chunk, pair_column: str | None, start: int) -> None:
    for column in ["text"] + ([pair_column] if pair_column else []):
        if column not in chunk.columns:
            raise RecipesError(f"{path}: no '{column}' column (has: {', '.join(map(str, chunk.columns))})")
        bad = [i for i, v in enumerate(chunk[column]) if not isinstance(v, str)]
        if bad:
            value = chunk[column].iloc[bad[0]]
            what = "no text (null)" if value is None or value != value else f"a {type(value).__name__}"
            raise RecipesError(f"{path}: {where(chunk, start, bad[0])} has {what} in '{column}', not a string: give "
                               "plain text in that column")
    if "label" in chunk.columns:
        raise RecipesError(f"{path}: the input has a 'label' column, which the predictions would overwrite: rename it")


def where(chunk, start: int, i: int) -> str:
    """How an error names the chunk's ``i``-th text: its line in a .txt or .jsonl (blank lines counted), else its
    row of the table (from 1; ``start``: the rows of the chunks before)."""
    lines = chunk.attrs.get("lines")
    return f"line {lines[i]}" if lines else f"row {start + i + 1}"


def texts_of(chunk, pair_column: str | None) -> list:
    return list(zip(chunk["text"], chunk[pair_column])) if pair_column else list(chunk["text"])
