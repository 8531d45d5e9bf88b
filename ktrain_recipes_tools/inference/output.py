"""Write predictions for people (text) and for tools (JSON, CSV), to the screen or a file."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import sys
from pathlib import Path

import numpy as np

from ktrain_recipes.errors import RecipesError
from ktrain_recipes.inference.prediction import escape
from ktrain_recipes.predictor.manifest import is_predictor_manifest, unchecked_manifest
from ktrain_recipes.predictor.swaps import HOST

# an --output suffix that names its format; .txt and .tsv keep --format (text by default)
SUFFIX_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet", ".json": "json"}
FORMAT_KEEPING = (".txt", ".tsv", "")


def output_format(fmt: str, output: str | os.PathLike | None) -> str:
    """The output format: from ``--output``'s suffix (.csv, .json, .jsonl, .parquet), else ``--format``. Any
    other suffix is refused, so that a file is never written in a format its name does not say."""
    suffix = Path(output).suffix.lower() if output else ""
    if suffix in SUFFIX_FORMATS:
        return SUFFIX_FORMATS[suffix]
    if suffix not in FORMAT_KEEPING:
        raise RecipesError(f"--output '{output}': cannot tell the format from {suffix!r}; name it .txt, .tsv, .csv, "
                           ".json, .jsonl or .parquet")
    return fmt


def check_output_file(output: str | os.PathLike, inputs: tuple = (), flag: str = "--output") -> Path:
    """Refuse, before any work, an output file that a write would destroy something through: one that is not a
    regular file or a new name in a writable folder (a device, a pipe, a folder, a symbolic link, whose target
    would be left stale), one of the command's ``inputs`` (or a file inside an input folder), or a file inside a
    predictor folder (its manifest's checksums would no longer hold). The output is renamed over that path."""
    if str(output).endswith(("/", os.sep)) and not os.path.isdir(output):
        raise RecipesError(f"{flag} '{output}' names a folder that does not exist (it ends with '/'): give a file "
                           f"name, e.g. '{Path(output) / 'predictions.csv'}'")
    path = Path(output)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise RecipesError(f"cannot use {flag} '{path}' ({exc.strerror}): choose another file") from None
    if mode is not None and stat.S_ISLNK(mode):
        raise RecipesError(f"{flag} '{path}' is a symbolic link: name the file itself ('{os.path.realpath(path)}')")
    if mode is not None and stat.S_ISDIR(mode):
        raise RecipesError(f"{flag} '{path}' is a folder: give a file name")
    if mode is not None and not stat.S_ISREG(mode):
        raise RecipesError(f"{flag} '{path}' is not a regular file (a device or a pipe?): it would be replaced; "
                           "give a file name")
    parent = path.absolute().parent
    if is_predictor_manifest(unchecked_manifest(parent)):  # a predictor's, not any manifest.json
        raise RecipesError(f"{flag} '{path}' is inside the predictor folder '{parent}': writing there breaks its "
                           "checksums; choose a file elsewhere")
    inputs = [given for given in inputs if given is not None and os.path.exists(given)]
    inside = [given for given in inputs
              if os.path.isdir(given) and Path(os.path.realpath(parent)).is_relative_to(os.path.realpath(given))]
    for given in inputs:
        if mode is not None and (os.path.samefile(path, given) or given in inside):  # a file this command reads
            raise RecipesError(f"{flag} '{path}' is one of this command's inputs ('{given}'): it would be "
                               "overwritten; choose another name")
    if inside:  # a new file in a data folder is read as part of it next time (evaluate --json DATA/test.json)
        raise RecipesError(f"{flag} '{path}' is inside the folder '{inside[0]}' this command reads: writing there "
                           "changes it; choose a file elsewhere")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise RecipesError(f"cannot write '{path}': its folder does not exist or is not writable")
    return path


def write_text_file(path: str | os.PathLike, content: str) -> None:
    """Write ``content`` through a partial file renamed into place: a full disk or a kill leaves the old file whole
    (or none), and the error is one line."""
    path = Path(path)
    partial = partial_file(path)
    try:
        with open(partial, "w", encoding="utf-8", newline="") as f:
            f.write(content)
        os.replace(partial, path)
    except OSError as exc:
        raise RecipesError(f"cannot write '{path}' ({exc.strerror or exc}): free some space or choose another "
                           "place; nothing was written") from None
    finally:
        partial.unlink(missing_ok=True)


def plain(value):
    """A table cell as written out: numpy and pandas scalars as Python values, and every kind of missing value
    (None, NaN, pandas' NA and NaT) as None, which JSON writes as null and CSV as an empty field."""
    if value is None:
        return None
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pandas is always there with the package; plain stays usable without it
        pass
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        try:
            value = value.item()
        except (ValueError, TypeError):
            return value
    if isinstance(value, float) and value != value:
        return None
    return value


def jsonable(value):
    """``json.dumps``' fallback for numpy and pandas scalars (int64, bool_, float32, Timestamp), decimals (as
    their exact digits, a string) and arrays; binary values are refused in one line."""
    import decimal

    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise RecipesError("the input has a column of binary values, which JSON cannot hold: write the output as "
                           ".parquet, or drop that column")
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def format_predictions(texts: list[str], probs: np.ndarray, label_names: list[str], fmt: str = "text",
                       proba: bool = False, table=None, cuts: np.ndarray | None = None,
                       min_confidence: float | None = None) -> str:
    """Return predictions as text (label TAB [probabilities TAB] text), JSON records or CSV.

    Args:
      texts: the texts.  probs: texts x labels probabilities.  label_names: the predictor's labels.
      fmt: 'text', 'json', 'jsonl' or 'csv'.  proba: include one probability per label.
      table: the input CSV as a DataFrame; its columns are kept in CSV and JSON output.
      cuts: a predictor of several labels per text: each label's threshold (``prediction.threshold_cuts``); each
        text's labels are then those over it (``labels``: a list in JSON, ';'-joined in text and CSV).
      min_confidence: a text whose top probability is under it gets no label (null; '-' in text) and
        ``withheld`` true.
    """
    records = prediction_records(texts, probs, label_names, proba or fmt == "csv", table, cuts=cuts,
                                 min_confidence=min_confidence)
    labels = [shown_labels(r) for r in records]
    if fmt == "json":
        return json.dumps(records, indent=2, ensure_ascii=False, default=jsonable) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False, default=jsonable) + "\n" for r in records)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(flat_labels(records))
        return buffer.getvalue()
    lines = []
    for i, (text, label) in enumerate(zip(texts, labels)):
        probs_part = "\t".join(f"{n}={p:.3f}" for n, p in zip(label_names, probs[i])) + "\t" if proba else ""
        shown = " ||| ".join(text) if isinstance(text, tuple) else text
        lines.append(f"{label}\t{probs_part}{escape(shown)}")
    return "\n".join(lines) + "\n"


def shown_labels(record: dict) -> str:
    """A record's answer in one field: its label, or its labels ';'-joined ('-' for none over its threshold, or a
    label withheld under min_confidence)."""
    if "labels" in record:
        return ";".join(record["labels"]) or "-"
    return "-" if record["label"] is None else record["label"]


def flat_labels(records: list[dict]) -> list[dict]:
    """Records for a table (CSV, parquet): a text's several labels as one ';'-joined string."""
    return [{**r, "labels": ";".join(r["labels"])} if "labels" in r else r for r in records]


def prediction_records(texts: list, probs: np.ndarray, label_names: list[str], proba: bool, table=None,
                       counts: list[tuple[int, int]] | None = None, cuts: np.ndarray | None = None,
                       min_confidence: float | None = None) -> list[dict]:
    """One dict per text: the input's columns as given (or text, and pair), the label, with ``proba``
    p_<label>, and with ``counts`` (``truncation.token_counts``) ``tokens`` read and whether the text was
    ``truncated``. A .jsonl input keeps each row's own fields and values (``attrs['rows']``); a table keeps each
    column's type (a row of a DataFrame would turn the ints of a row with a float into floats); missing values are
    null. ``min_confidence``: a text whose top probability is under it gets ``label`` None and ``withheld`` true."""
    from ktrain_recipes.inference.calibration import withheld

    held = withheld(probs, min_confidence)
    records = []
    rows = None
    if table is not None:
        rows = table.attrs.get("rows") or table.to_dict("records")
        taken = [f"p_{n}" for n in label_names if f"p_{n}" in table.columns] if proba else []
        taken += [c for c in ("tokens", "truncated") if c in table.columns] if counts is not None else []
        if taken:
            raise RecipesError(f"the input has a '{taken[0]}' column, which the probabilities would overwrite: "
                               "rename it")
    for i, text in enumerate(texts):
        row = {k: plain(v) for k, v in rows[i].items()} if rows is not None else {"text": text}
        if isinstance(text, tuple) and rows is None:
            row = {"text": text[0], "pair": text[1]}
        if cuts is not None:  # several labels per text: those over their thresholds, in the labels' order
            row["labels"] = [n for n, p, c in zip(label_names, probs[i], cuts) if p >= c]
        else:
            row["label"] = None if held[i] else label_names[int(probs[i].argmax())]
        if min_confidence is not None:
            row["withheld"] = bool(held[i])
        if proba:
            row.update({f"p_{n}": round(float(p), 6) for n, p in zip(label_names, probs[i])})
        if counts is not None:
            row["tokens"], row["truncated"] = counts[i][0], counts[i][1] > counts[i][0]
        records.append(row)
    return records


def write_predictions(texts, probs, label_names, fmt="text", proba=False, output=None, table=None,
                      cuts=None, min_confidence=None) -> None:
    """Format predictions (see ``format_predictions``) and write them to ``output`` (through a temporary file
    renamed into place) or stdout."""
    content = format_predictions(texts, probs, list(label_names), fmt, proba, table, cuts, min_confidence)
    if not output:
        sys.stdout.write(content)
        return
    write_text_file(check_output_file(output), content)


def partial_file(out: Path) -> Path:
    """Where a file is written before it is renamed to ``out``: beside it, named so that ``clean_litter`` removes
    it once its writer has died."""
    out = Path(out)
    return out.absolute().parent / f".{out.name}.partial-{HOST}-{os.getpid()}"
