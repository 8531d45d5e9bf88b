"""Readers of labelled texts: a folder of split files, one file (.txt, .csv, .tsv, .jsonl, .json, .parquet), or a
hub dataset; each gives its splits as (texts, raw labels, where) with every row checked. ``is_blank`` is the one rule
for a text with nothing a model can read, which the readers and every classifier (``inference.prediction``) apply."""

from __future__ import annotations

import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ktrain_recipes.errors import RecipesError, disk_full, note

SPLIT_FILES = {"train": ["train"], "validation": ["validation", "val", "valid", "dev"], "test": ["test"]}
FORMATS = {".txt": "text", ".csv": "csv", ".tsv": "csv", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}


@dataclass
class Columns:
    """Which columns hold the text, the optional second text of a pair, and the label."""

    text: str = "text"
    label: str = "label"
    pair: str | None = None
    label_sep: str | None = None  # several labels per text in the label column, separated by this

    @property
    def flag_columns(self) -> list[str] | None:
        """``label`` naming two or more comma-separated columns: one 0/1 column per label."""
        names = [n.strip() for n in self.label.split(",")]
        return names if len(names) > 1 else None

    @property
    def multilabel(self) -> bool:
        """Several labels per text: a separator, or one 0/1 column per label (``data.label_sets``)."""
        return bool(self.label_sep) or self.flag_columns is not None


def read_folder(folder: Path, columns: Columns) -> dict:
    files = find_split_files(folder)
    if not files:
        raise RecipesError(
            f"no train/val/test {'/'.join(FORMATS)} files in '{folder}': "
            "expected e.g. train.txt and val.txt with one `text;label` per line"
        )
    return {split: read_file(path, columns) for split, path in files.items()}


def find_split_files(folder: Path) -> dict[str, Path]:
    found = {}
    for split, stems in SPLIT_FILES.items():
        paths = [folder / f"{stem}{ext}" for stem in stems for ext in FORMATS if (folder / f"{stem}{ext}").is_file()]
        if len(paths) > 1:
            raise RecipesError(f"'{folder}' has {' and '.join(p.name for p in paths)} for the {split} split: "
                               "keep one of them")
        if paths:
            found[split] = paths[0]
    return found


def read_file(path: Path, columns: Columns):
    """Read one split file with ``datasets``; return texts (or pairs), raw label values and a line locator.

    ``datasets`` parses the file into an Arrow copy of about its size. That copy goes to a temporary folder removed
    once the columns are read, not to the home folder's datasets cache, where one copy per version of the file
    would stay for ever (a 200 MB CSV left 210 MB each time it changed)."""
    kind = FORMATS[path.suffix.lower()]
    size = path.stat().st_size
    if size == 0:
        raise RecipesError(f"{path}: the file is empty")
    if size > LARGE:
        note(f"note: {path} is {size / 1e6:.0f} MB: reading it takes minutes and about four times its size in "
             "memory (its working copy goes to the temporary folder, $TMPDIR, and is removed afterwards)")
    with tempfile.TemporaryDirectory(prefix="ktrain-recipes-read-") as cache:
        return _read_file(path, kind, columns, cache)


LARGE = 100_000_000  # bytes: a file this size takes minutes to read, so it is said first


def _read_file(path: Path, kind: str, columns: Columns, cache: str):
    import datasets

    if kind != "parquet":
        check_utf8(path)
    header, starts = csv_rows(path) if kind == "csv" else (None, None)
    quiet = not datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # a fresh working copy is generated each time: its bars would say so each time
    try:
        ds = datasets.load_dataset(kind, data_files=str(path), split="train", cache_dir=cache,
                                   **_reader_args(path, header))
    except Exception as exc:  # pyarrow/datasets parse errors come in many types
        first = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        if disk_full(exc):  # not the file's fault: no word about its encoding
            raise RecipesError(f"{path}: the disk holding the working copy datasets reads it into ({cache}) is full "
                               f"({first}): free space there, or set TMPDIR to a folder on a disk with room") from None
        raise RecipesError(f"{path}: cannot be read as {kind} (is it UTF-8 {kind}?): {first}") from None
    finally:
        if not quiet:
            datasets.enable_progress_bars()
    if kind == "text":
        return _parse_txt(path, ds["text"])
    if len(ds) == 0:
        raise RecipesError(f"{path}: no rows below the header")
    if path.suffix.lower() == ".jsonl":  # blank lines hold no record: number the records by the lines they are on
        with open(path, "rb") as f:
            line_of = [n for n, line in enumerate(f, start=1) if line.strip()]

        def where(i: int) -> str:
            return f"{path}:{line_of[i]}" if i < len(line_of) else f"{path}: record {i + 1}"
    elif starts is not None:  # the line each row starts on: a quoted text may span lines, blank lines hold none
        def where(i: int) -> str:
            return f"{path}:{starts[i]}" if i < len(starts) else f"{path}: row {i + 1}"
    else:
        def where(i: int) -> str:
            return f"{path}: row {i + 1}"

    return take_columns(ds, columns, str(path), where)


def take_columns(ds, columns: Columns, source: str, where):
    """Take the text, pair and label columns of a datasets table, checking every row."""
    from ktrain_recipes.data import label_sets

    label_column = None if columns.flag_columns else columns.label
    for name, flag in [(columns.text, "--text-column"), (label_column, "--label-column"),
                       (columns.pair, "--pair-column")]:
        if name is not None and name not in ds.column_names:
            raise RecipesError(f"{source}: no column '{name}' (columns: {', '.join(ds.column_names)}): "
                               f"name the right one with {flag}")
    texts = _texts(ds[columns.text], where, columns.text, source)
    if columns.pair:
        seconds = _texts(ds[columns.pair], where, columns.pair, source)
        texts = list(zip(texts, seconds))
    if columns.flag_columns:
        return texts, label_sets.from_flag_columns(ds, columns.flag_columns, source, where), where
    values = list(ds[columns.label])
    if columns.label_sep:
        for i, value in enumerate(values):
            if value is None:
                raise RecipesError(f"{where(i)}: empty label set in column '{columns.label}'; every text needs one")
        return texts, [label_sets.split_cell(v, columns.label_sep, where(i)) for i, v in enumerate(values)], where
    if values and all(isinstance(v, (list, tuple)) for v in values):  # a hub dataset's Sequence(ClassLabel) column
        for i, value in enumerate(values):
            if not value:
                raise RecipesError(f"{where(i)}: empty label set in column '{columns.label}'; every text needs one")
        return texts, [tuple(v) for v in values], where
    label_sets.refuse_hidden_sets(values, where)
    for i, value in enumerate(values):
        if value is None or (isinstance(value, str) and not value.strip()):
            raise RecipesError(f"{where(i)}: empty label in column '{columns.label}'; every row needs one")
        if not isinstance(value, (str, int, float)):
            raise RecipesError(f"{where(i)}: the label in column '{columns.label}' is a {type(value).__name__}; give "
                               "one label (a name or an integer) per row")
    return texts, values, where


def _texts(values, where, column: str, source: str) -> list[str]:
    """A column's texts, checked; its empty texts named all at once, in one line (a file with several gets one
    refusal to fix them by, not one per run)."""
    empty = [i for i, v in enumerate(values) if _empty(v)]
    if len(empty) > 1:
        places = [where(i).removeprefix(f"{source}:").strip() for i in empty[:5]]
        more = f" and {len(empty) - 5} more" if len(empty) > 5 else ""
        at = ("lines " if all(p.isdigit() for p in places) else "") + ", ".join(places)
        raise RecipesError(f"{source}: {len(empty)} empty texts in column '{column}' (at {at}{more}); fill them or "
                           "remove those rows")
    return [_text(v, where(i), column) for i, v in enumerate(values)]


def _empty(value) -> bool:
    """A cell with no text: missing, or only whitespace (a list or a dict is not text at all: ``_text`` says so)."""
    return value is None or (not isinstance(value, (dict, list, tuple)) and not str(value).strip())


def _text(value, where: str, column: str) -> str:
    if isinstance(value, (dict, list, tuple)):
        raise RecipesError(f"{where}: column '{column}' holds a {type(value).__name__}, not text: give plain text "
                           "(or name the column that holds it)")
    if _empty(value):
        raise RecipesError(f"{where}: empty text in column '{column}'; fill it or remove the row")
    if isinstance(value, str) and is_blank(value):
        raise RecipesError(f"{where}: the text in column '{column}' has nothing to read (only invisible, replacement "
                           "or private-use characters); fix or remove the row")
    return value if isinstance(value, str) else str(value)  # "123" may parse as a number


def check_utf8(path: Path) -> None:
    """Refuse, naming the first line that is not UTF-8, a text file in another encoding (a spreadsheet's "CSV" is
    often Windows-1252): read line by line, so a large file is never held whole."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as f:
        head = f.read(4096)
        f.seek(0)
        if head.startswith(b"PK\x03\x04"):  # a zip: an Excel workbook (.xlsx) saved under another name
            raise RecipesError(f"{path} is a zip archive (an Excel workbook?), not a text file: in the spreadsheet, "
                               "save it as 'CSV UTF-8'")
        start = f.read(2)
        if start in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):  # a spreadsheet's "Unicode text": not cp1252
            raise RecipesError(f"{path} is UTF-16 (it starts with a UTF-16 byte-order mark): save it as UTF-8 (a "
                               "spreadsheet's 'CSV UTF-8', or: iconv -f utf-16 -t utf-8 FILE > NEW)")
        if len(head) >= 4 and head.count(b"\0") > len(head) // 4:  # letters with a NUL between them: UTF-16, no BOM
            raise RecipesError(f"{path} looks UTF-16 (NUL bytes between its letters): save it as UTF-8 (a "
                               "spreadsheet's 'CSV UTF-8', or: iconv -f utf-16le -t utf-8 FILE > NEW)")
        f.seek(0)
        for n, line in enumerate(f, start=1):
            try:
                decoder.decode(line)
            except UnicodeDecodeError as exc:
                byte = exc.object[exc.start]
                raise RecipesError(f"{path}:{n} is not UTF-8 (byte 0x{byte:02x}): save the file as UTF-8 (a "
                                   "spreadsheet's 'CSV UTF-8', or: iconv -f cp1252 -t utf-8 FILE > NEW)") from None


def csv_rows(path: Path) -> tuple[list[str], list[int]]:
    """A CSV/TSV's header and the line each data row starts on, read as ``csv`` reads it (a quoted text may hold
    line breaks; blank lines, before the header too, hold no row). Refuses in one line what the table reader would
    take silently or blame on the encoding: no header, a header naming a column twice, no rows, a row with more
    fields than the header."""
    import csv

    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    starts, header = [], None
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, delimiter=sep)
        before = 0
        for row in reader:
            start, before = before + 1, reader.line_num
            if not any(cell.strip() for cell in row) and len(row) <= 1:
                continue  # a blank line
            if header is None:
                header = row
                if len(row) == 1:  # one column: maybe another separator (spreadsheets save ';' in many locales)
                    for other, advice in ((";", "save it with commas, or name it .tsv if its separator is a tab"),
                                          ("\t", "name it .tsv"), (",", "name it .csv")):
                        if other != sep and other in row[0]:
                            raise RecipesError(f"{path}:{start}: the header {row[0][:60]!r} looks separated by "
                                               f"{other!r}, not {sep!r}: {advice}")
                twice = sorted({name for name in header if header.count(name) > 1})
                if twice:
                    raise RecipesError(f"{path}:{start}: the header names the column '{twice[0]}' "
                                       f"{header.count(twice[0])} times: give each column its own name")
                continue
            if row == header:  # two files pasted together, the second's header left in: it would become a class
                raise RecipesError(f"{path}:{start}: the row repeats the header ({', '.join(header)[:60]}): remove it")
            if len(row) > len(header):
                raise RecipesError(f"{path}:{start}: {len(row)} fields, the header has {len(header)} (a text "
                                   "holding the separator must be quoted)")
            starts.append(start)
    if header is None or not starts:
        raise RecipesError(f"{path}: no rows below the header: add the data rows")
    return header, starts


def _reader_args(path: Path, header: list[str] | None) -> dict:
    """What ``datasets`` reads a CSV/TSV with: its ``header`` as ``csv_rows`` read it (blank lines before it skipped,
    no name twice). Every column as written: a text or label like "null" or "NA" stays a string (keep_default_na),
    and "007", "1.50" or "true" stay themselves (every column a string): read as numbers, "007" and "7" would be one
    class."""
    if header is None:
        return {}
    import datasets

    tsv = path.suffix.lower() == ".tsv"
    # an empty header name (pandas' default to_csv writes the index under one; a spreadsheet's trailing comma) is
    # the column pandas names "Unnamed: <position>", which is what the schema must call it
    features = datasets.Features({(name or f"Unnamed: {i}"): datasets.Value("string") for i, name in enumerate(header)})
    return {"keep_default_na": False, **({"sep": "\t"} if tsv else {}), "features": features}


def _parse_txt(path: Path, lines: list[str]):
    texts, labels = [], []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        text, sep, label = line.rpartition(";")  # the label never holds ';', a tweet may
        if not sep or not text.strip() or not label.strip():
            raise RecipesError(f"{path}:{n}: expected `text;label`, got {line[:60]!r}")
        if is_blank(text):
            raise RecipesError(f"{path}:{n}: the text has nothing to read (only invisible, replacement or private-use "
                               "characters); fix or remove the line")
        texts.append(text.strip())
        labels.append(label.strip())
    if not texts:
        raise RecipesError(f"{path}: the file is empty; expected one `text;label` per line")
    line_of = [n for n, line in enumerate(lines, start=1) if line.strip()]
    return texts, labels, lambda i: f"{path}:{line_of[i]}"


def read_hub(name: str, config: str | None, columns: Columns):
    """Download a dataset from the Hugging Face hub; return its splits and its ClassLabel names (if any)."""
    import datasets

    from ktrain_recipes.models import hub_error, hub_reachable

    fix = "pass --data with a local folder or file to work offline"
    if not hub_reachable():
        raise hub_error(f"the dataset '{name}'", fix)
    try:
        ds = datasets.load_dataset(name, config)
    except Exception as exc:  # the hub client raises many types for "no network" or "no such dataset"
        raise hub_error(f"the dataset '{name}' ({type(exc).__name__}: {str(exc)[:120]})", fix) from None
    feature = next(iter(ds.values())).features.get(columns.label)
    feature = getattr(feature, "feature", feature)  # several labels per text: a Sequence of ClassLabel
    if isinstance(feature, list) and feature:  # datasets 4+ writes a Sequence of a ClassLabel as [ClassLabel]
        feature = feature[0]
    class_names = list(feature.names) if hasattr(feature, "names") else None
    raw = {}
    for split, table in ds.items():
        split = {"val": "validation", "valid": "validation", "dev": "validation"}.get(split, split)
        raw[split] = take_columns(table, columns, f"hub:{name}[{split}]", lambda i, s=split: f"hub:{name}[{s}] row {i}")
    return raw, class_names


# Letters and symbols that print as nothing: the Hangul fillers, the blank Braille pattern and the Khmer inherent
# vowels. The tokenizer drops most of them, so a text made only of these (and of marks) has nothing to read.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")
# Characters that stand for no text: U+FFFD, what a decoder puts where bytes were not text, and the private-use
# areas (Co), which mean nothing outside one program. The tokenizer maps them to nothing or to [UNK].
_NO_TEXT = frozenset("\ufffd")


def nothing_to_read(ch: str) -> bool:
    """Whether ``ch`` adds nothing a model can read: whitespace, control and format characters (zero-width ones, the
    soft hyphen), combining marks alone, fillers, U+FFFD and private-use characters."""
    # Mn/Me: combining marks and variation selectors (U+FE0F), which modify a character but are none on their own
    return ch.isspace() or ch in _FILLERS or ch in _NO_TEXT or \
        unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Co")


def is_blank(text: str) -> bool:
    """True for text with nothing to read (``nothing_to_read`` for every character; the empty text too)."""
    return all(nothing_to_read(ch) for ch in text)
