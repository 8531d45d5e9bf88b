"""Load the emotion dataset from the hub or a local folder, and take reproducible slices."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from . import compat  # noqa: F401
from .errors import RecipesError

HUB_DATASET = "dair-ai/emotion"
EMOTION_LABELS = ["sadness", "joy", "love", "anger", "fear", "surprise"]  # the hub's id order
SPLIT_FILES = {"train": ["train"], "validation": ["validation", "val", "valid", "dev"], "test": ["test"]}
FORMATS = {".txt": "text", ".csv": "csv", ".parquet": "parquet"}


@dataclass
class EmotionData:
    """Texts and string labels per split, with the label names in the dataset's order."""

    splits: dict[str, tuple[list[str], list[str]]]
    label_names: list[str]
    source: str
    files: dict[str, str] = field(default_factory=dict)

    def texts(self, split: str) -> list[str]:
        """Return the texts of one split."""
        return self._split(split)[0]

    def labels(self, split: str) -> list[str]:
        """Return the labels (names) of one split."""
        return self._split(split)[1]

    def label_ids(self, labels: list[str]) -> list[int]:
        """Return the position of each label name in ``label_names`` (what ktrain's preprocess takes)."""
        return [self.label_names.index(y) for y in labels]

    def check_trainable(self, labels: list[str], min_per_class: int = 1) -> None:
        """Refuse training labels that miss a class: ktrain needs every label id from 0 to the last."""
        missing = [n for n in self.label_names if labels.count(n) < min_per_class]
        if missing:
            raise RecipesError(
                f"the training texts have no example of {', '.join(missing)}: every label needs at least "
                f"{min_per_class} (a larger --limit, or data with every label)")

    def _split(self, split: str) -> tuple[list[str], list[str]]:
        if split not in self.splits:
            have = ", ".join(self.splits) or "none"
            raise RecipesError(f"split '{split}' is not in {self.source} (it has: {have}): choose another --split")
        return self.splits[split]


def load_emotion(data: str | os.PathLike | None = None) -> EmotionData:
    """Load emotion from a local folder (``data`` or $EMOTION_DATA) or else from the hub.

    Args:
      data: a folder holding train/val(idation)/test as ``text;label`` .txt, .csv or .parquet
        (csv/parquet need ``text`` and ``label`` columns). None: $EMOTION_DATA, then the hub.
    """
    data = data or os.environ.get("EMOTION_DATA")
    return load_local(Path(data)) if data else load_hub()


def load_hub(name: str = HUB_DATASET) -> EmotionData:
    """Download emotion from the Hugging Face hub (what Colab and Gradient users get)."""
    import datasets

    from .models import hub_error, hub_reachable

    fix = "pass --data DIR (or set EMOTION_DATA) to a folder with train.txt and val.txt to work offline"
    if not hub_reachable():
        raise hub_error(f"the dataset '{name}'", fix)
    try:
        ds = datasets.load_dataset(name)
    except Exception as exc:  # the hub client raises many types for "no network"
        raise hub_error(f"the dataset '{name}' ({type(exc).__name__})", fix) from None
    names = ds["train"].features["label"].names
    splits = {s: (list(d["text"]), [names[i] for i in d["label"]]) for s, d in ds.items()}
    return EmotionData(splits, names, f"hub:{name}")


def load_local(folder: Path) -> EmotionData:
    """Load every split found in a local folder; see ``load_emotion`` for the formats."""
    if not folder.is_dir():
        raise RecipesError(f"data folder '{folder}' does not exist: pass --data DIR or set EMOTION_DATA")
    files = _find_split_files(folder)
    if "train" not in files and "validation" not in files and "test" not in files:
        raise RecipesError(
            f"no train/val/test .txt, .csv or .parquet files in '{folder}': "
            "expected e.g. train.txt and val.txt with one `text;label` per line"
        )
    raw = {split: _read_file(path) for split, path in files.items()}
    names = _label_names(raw)
    for _texts, labels, where in raw.values():
        for i, label in enumerate(labels):
            if label not in names:
                raise RecipesError(f"{where(i)}: unknown label '{label}' (known: {', '.join(names)})")
    splits = {s: (t, lab) for s, (t, lab, _) in raw.items()}
    return EmotionData(splits, names, str(folder), {s: str(p) for s, p in files.items()})


def _find_split_files(folder: Path) -> dict[str, Path]:
    found = {}
    for split, stems in SPLIT_FILES.items():
        paths = [folder / f"{stem}{ext}" for stem in stems for ext in FORMATS if (folder / f"{stem}{ext}").is_file()]
        if len(paths) > 1:
            raise RecipesError(f"'{folder}' has {' and '.join(p.name for p in paths)} for the {split} split: "
                               "keep one of them")
        if paths:
            found[split] = paths[0]
    return found


def _read_file(path: Path):
    """Read one split file with ``datasets``; return texts, labels and a line locator."""
    import datasets

    kind = FORMATS[path.suffix]
    try:
        ds = datasets.load_dataset(kind, data_files=str(path), split="train", **_reader_args(kind))
    except Exception as exc:  # pyarrow/datasets parse errors come in many types
        raise RecipesError(f"{path}: cannot be read as {kind} ({str(exc).splitlines()[0][:200]})") from None
    if kind == "text":
        return _parse_txt(path, ds["text"])
    missing = {"text", "label"} - set(ds.column_names)
    if missing:
        raise RecipesError(
            f"{path}: missing column(s) {', '.join(sorted(missing))} (has: {', '.join(ds.column_names)}); "
            "rename the columns to text and label"
        )
    header = 2 if kind == "csv" else 1

    def where(i: int) -> str:
        return f"{path}:{i + header}" if kind == "csv" else f"{path}: row {i + 1}"

    texts = [t if t is None or isinstance(t, str) else str(t) for t in ds["text"]]  # "123" may parse as int
    labels = [_label_str(v) for v in ds["label"]]
    for i, text in enumerate(texts):
        if text is None or not text.strip():
            raise RecipesError(f"{where(i)}: empty text; remove the row")
        if labels[i] == "":
            raise RecipesError(f"{where(i)}: missing label; every row needs one")
    return list(texts), labels, where


def _reader_args(kind: str) -> dict:
    # keep_default_na: a text like "null" or "NA" must stay a string, not become NaN
    return {"keep_default_na": False} if kind == "csv" else {}


def _label_str(value) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, (int, float)) and float(value).is_integer() and 0 <= value < len(EMOTION_LABELS):
        return EMOTION_LABELS[int(value)]  # integer ids, as on the hub
    return str(value).strip()


def _parse_txt(path: Path, lines: list[str]):
    texts, labels = [], []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        text, sep, label = line.rpartition(";")  # the label never holds ';', a tweet may
        if not sep or not text.strip() or not label.strip():
            raise RecipesError(f"{path}:{n}: expected `text;label`, got {line[:60]!r}")
        texts.append(text.strip())
        labels.append(label.strip())
    if not texts:
        raise RecipesError(f"{path}: the file is empty; expected one `text;label` per line")
    line_of = [n for n, line in enumerate(lines, start=1) if line.strip()]
    return texts, labels, lambda i: f"{path}:{line_of[i]}"


def _label_names(raw: dict) -> list[str]:
    """Label names in the dataset's order: emotion's own order, else first appearance in train.

    Data that uses any emotion label is emotion, so any other label in it is a typo to report.
    """
    first = raw.get("train") or next(iter(raw.values()))
    seen = list(dict.fromkeys(first[1]))
    return list(EMOTION_LABELS) if set(seen) & set(EMOTION_LABELS) else seen


def sample(texts: list[str], labels: list[str], limit: int | None, seed: int = 0):
    """Return a stratified random subset of ``limit`` examples (all of them when limit is None)."""
    if limit is None or limit >= len(texts):
        return list(texts), list(labels)
    if limit < 1:
        raise RecipesError(f"--limit must be at least 1, got {limit}")
    from sklearn.model_selection import train_test_split

    try:
        texts, _, labels, _ = train_test_split(texts, labels, train_size=limit, stratify=labels, random_state=seed)
    except ValueError:  # a class too rare to stratify in a tiny slice: fall back to plain random
        texts, _, labels, _ = train_test_split(texts, labels, train_size=limit, random_state=seed)
    return list(texts), list(labels)


def read_texts(path: str | os.PathLike, encoding: str = "utf-8"):
    """Read texts to classify into a table with a ``text`` column (plus a CSV's other columns).

    A ``.csv`` (any case) needs a ``text`` column; any other file holds one text per line. Bytes that
    are not valid in ``encoding`` are refused, naming the first bad byte's offset.
    """
    import pandas as pd

    path = Path(path)
    if path.is_dir():
        raise RecipesError(f"--input '{path}' is a folder: give a text file (one text per line) or a .csv")
    if not path.is_file():
        raise RecipesError(f"input file '{path}' does not exist")
    raw = path.read_bytes()
    try:
        content = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise RecipesError(f"{path}: byte {exc.start} is not valid {encoding} (a binary file?): give a text file, "
                           "or its encoding with --encoding") from None
    except LookupError:
        raise RecipesError(f"unknown --encoding {encoding!r}: try utf-8 or latin-1") from None
    if path.suffix.lower() == ".csv":
        import io

        try:
            table = pd.read_csv(io.StringIO(content), keep_default_na=False, dtype=str)
        except Exception as exc:  # pandas raises several parser error types
            raise RecipesError(f"{path}: cannot be read as CSV ({str(exc).splitlines()[0][:200]})") from None
        if "text" not in table.columns:
            raise RecipesError(f"{path}: no 'text' column (has: {', '.join(map(str, table.columns))})")
        return table
    return pd.DataFrame({"text": [line for line in content.splitlines() if line.strip()]})
