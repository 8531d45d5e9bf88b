"""Load labelled texts (or text pairs) from a folder, a file or the hub; split and slice them reproducibly.

Emotion is the default dataset (``$EMOTION_DATA``, else the hub's ``dair-ai/emotion``), but any labelled
text data works: name its columns, and the label names come from the data itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ktrain_recipes.config import check_fraction, check_limit
from ktrain_recipes.errors import RecipesError, note

HUB_DATASET = "dair-ai/emotion"
EMOTION_SLICE = Path(__file__).parent / "emotion_slice"  # the one copy of data this package ships
EMOTION_LABELS = ["sadness", "joy", "love", "anger", "fear", "surprise"]  # the hub's id order
SPLIT_FILES = {"train": ["train"], "validation": ["validation", "val", "valid", "dev"], "test": ["test"]}
FORMATS = {".txt": "text", ".csv": "csv", ".tsv": "csv", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}


@dataclass
class Columns:
    """Which columns hold the text, the optional second text of a pair, and the label."""

    text: str = "text"
    label: str = "label"
    pair: str | None = None


@dataclass
class LabelledTexts:
    """Texts (or text pairs) and label names per split, with the label names in the dataset's order."""

    splits: dict[str, tuple[list, list[str]]]
    label_names: list[str]
    source: str
    files: dict[str, str] = field(default_factory=dict)

    def texts(self, split: str) -> list:
        """Return the texts of one split (strings, or (text, text) pairs)."""
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

    def _split(self, split: str) -> tuple[list, list[str]]:
        if split not in self.splits:
            have = ", ".join(self.splits) or "none"
            if split == "train":
                raise RecipesError(f"{self.source} has no training split (it has: {have}): add a train file")
            raise RecipesError(f"split '{split}' is not in {self.source} (it has: {have}): choose another --split")
        return self.splits[split]


def load_emotion(data: str | os.PathLike | None = None) -> LabelledTexts:
    """Load emotion from a local folder (``data`` or $EMOTION_DATA), else from the hub, else (no hub) the slice
    this package ships.

    Args:
      data: a folder holding train/val(idation)/test as ``text;label`` .txt, .csv or .parquet
        (csv/parquet need ``text`` and ``label`` columns). None: $EMOTION_DATA, then the hub, then the slice.
    """
    return load_data(data or os.environ.get("EMOTION_DATA") or default_emotion())


def default_emotion() -> str:
    """The emotion dataset to use when no folder is named: the hub's, or where the hub cannot be reached, the
    2,000-text slice shipped with this package (``data/emotion_slice``, see its SOURCE.md), saying so."""
    from ktrain_recipes.models import hub_reachable

    if hub_reachable():
        return HUB_DATASET
    note(f"note: the Hugging Face hub cannot be reached: using the slice of emotion shipped with ktrain_recipes "
         f"(1,600 training, 400 validation texts; {EMOTION_SLICE / 'SOURCE.md'}); --data or $EMOTION_DATA names "
         "the full dataset")
    return str(EMOTION_SLICE)


def load_data(source: str | os.PathLike | None = None, columns: Columns | None = None,
              labels: list[str] | None = None, hub_config: str | None = None, val_fraction: float = 0.1,
              seed: int = 42, hold_out: bool = True) -> LabelledTexts:
    """Load labelled texts from a folder, a single file or a hub dataset id.

    Args:
      source: a folder with train/val/test files, one .txt/.csv/.tsv/.jsonl/.parquet file, or a hub id.
        None: emotion ($EMOTION_DATA, else the hub, else the slice shipped with this package).
      columns: the text, label and optional pair columns (default: text, label).
      labels: the label names, in id order: integer labels are positions in this list.
        Default: the hub's ClassLabel names, else the six emotions when the data has exactly those,
        else the sorted distinct values.
      hub_config: the hub dataset's configuration name.
      val_fraction: without a validation split, hold out this stratified share of train (seeded).
      hold_out: False leaves train whole (a caller that splits by groups does it itself).
    """
    columns = columns or Columns()
    source = str(source or os.environ.get("EMOTION_DATA") or default_emotion())
    path = Path(source).expanduser()
    if path.is_dir():
        raw, class_names, files = _read_folder(path, columns), None, {}
    elif path.is_file():
        if path.suffix.lower() not in FORMATS:
            raise RecipesError(f"'{path}': unknown data format (use {', '.join(FORMATS)} or a folder)")
        raw, class_names, files = {"train": _read_file(path, columns)}, None, {"train": str(path)}
    elif source.startswith((".", "/", "~")) or path.suffix.lower() in FORMATS or source.count("/") > 1:
        raise RecipesError(f"data '{source}' does not exist: pass --data DIR (a folder or a file) or set EMOTION_DATA")
    else:
        raw, class_names = _read_hub(source, hub_config, columns)
        files = {}
    names = _choose_label_names(raw, labels or class_names)
    by_position = bool(labels or class_names)  # integer labels are ids into names that were given
    splits = {split: (texts, _names_of(values, names, where, split, by_position))
              for split, (texts, values, where) in raw.items()}
    if "train" in splits and len(set(splits["train"][1])) < 2:
        raise RecipesError(f"{source}: the training data has only one label ({splits['train'][1][0]!r}): "
                           "a classifier needs at least two")
    data = LabelledTexts(splits, names, source if path.exists() else f"hub:{source}", files)
    if hold_out and "train" in splits and "validation" not in splits:
        _hold_out_validation(data, val_fraction, seed)
    return data


def _hold_out_validation(data: LabelledTexts, fraction: float, seed: int) -> None:
    from sklearn.model_selection import train_test_split

    check_fraction(fraction)
    texts, labels = data.splits["train"]
    try:
        split = train_test_split(texts, labels, test_size=fraction, stratify=labels, random_state=seed)
    except ValueError:  # a class with a single example cannot be stratified
        split = train_test_split(texts, labels, test_size=fraction, random_state=seed)
    tr_x, va_x, tr_y, va_y = split
    data.splits["train"], data.splits["validation"] = (list(tr_x), list(tr_y)), (list(va_x), list(va_y))
    note(f"no validation split in {data.source}: held out {len(va_x)} of {len(texts)} training texts "
          f"({fraction:.0%}, stratified, seed {seed}); training on {len(tr_x)}")


def _read_folder(folder: Path, columns: Columns) -> dict:
    files = _find_split_files(folder)
    if not files:
        raise RecipesError(
            f"no train/val/test {'/'.join(FORMATS)} files in '{folder}': "
            "expected e.g. train.txt and val.txt with one `text;label` per line"
        )
    return {split: _read_file(path, columns) for split, path in files.items()}


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


def _read_file(path: Path, columns: Columns):
    """Read one split file with ``datasets``; return texts (or pairs), raw label values and a line locator."""
    import datasets

    kind = FORMATS[path.suffix.lower()]
    if path.stat().st_size == 0:
        raise RecipesError(f"{path}: the file is empty")
    if kind == "csv":
        with open(path, "rb") as f:
            lines = [line for _, line in zip(range(2), f) if line.strip()]
        if len(lines) < 2:
            raise RecipesError(f"{path}: no rows below the header: add the data rows")
    try:
        ds = datasets.load_dataset(kind, data_files=str(path), split="train", **_reader_args(path))
    except Exception as exc:  # pyarrow/datasets parse errors come in many types
        first = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise RecipesError(f"{path}: cannot be read as {kind} (is it UTF-8 {kind}?): {first}") from None
    if kind == "text":
        return _parse_txt(path, ds["text"])
    if len(ds) == 0:
        raise RecipesError(f"{path}: no rows below the header")
    header = 2 if kind == "csv" else 1

    def where(i: int) -> str:
        return f"{path}:{i + header}" if kind in ("csv", "json") else f"{path}: row {i + 1}"

    return _columns(ds, columns, str(path), where)


def _columns(ds, columns: Columns, source: str, where):
    """Take the text, pair and label columns of a datasets table, checking every row."""
    for name, flag in [(columns.text, "--text-column"), (columns.label, "--label-column"),
                       (columns.pair, "--pair-column")]:
        if name is not None and name not in ds.column_names:
            raise RecipesError(f"{source}: no column '{name}' (columns: {', '.join(ds.column_names)}): "
                               f"name the right one with {flag}")
    texts = [_text(v, where(i), columns.text) for i, v in enumerate(ds[columns.text])]
    if columns.pair:
        seconds = [_text(v, where(i), columns.pair) for i, v in enumerate(ds[columns.pair])]
        texts = list(zip(texts, seconds))
    values = list(ds[columns.label])
    for i, value in enumerate(values):
        if value is None or (isinstance(value, str) and not value.strip()):
            raise RecipesError(f"{where(i)}: empty label in column '{columns.label}'; every row needs one")
        if not isinstance(value, (str, int, float)):
            raise RecipesError(f"{where(i)}: the label in column '{columns.label}' is a {type(value).__name__}; give "
                               "one label (a name or an integer) per row")
    return texts, values, where


def _text(value, where: str, column: str) -> str:
    if isinstance(value, (dict, list, tuple)):
        raise RecipesError(f"{where}: column '{column}' holds a {type(value).__name__}, not text: give plain text "
                           "(or name the column that holds it)")
    if value is None or not str(value).strip():
        raise RecipesError(f"{where}: empty text in column '{column}'; fill it or remove the row")
    return value if isinstance(value, str) else str(value)  # "123" may parse as a number


def _reader_args(path: Path) -> dict:
    if path.suffix.lower() == ".tsv":
        return {"keep_default_na": False, "sep": "\t"}
    # keep_default_na: a text like "null" or "NA" must stay a string, not become NaN
    return {"keep_default_na": False} if path.suffix.lower() == ".csv" else {}


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


def _read_hub(name: str, config: str | None, columns: Columns):
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
    class_names = list(feature.names) if hasattr(feature, "names") else None
    raw = {}
    for split, table in ds.items():
        split = {"val": "validation", "valid": "validation", "dev": "validation"}.get(split, split)
        raw[split] = _columns(table, columns, f"hub:{name}[{split}]", lambda i, s=split: f"hub:{name}[{s}] row {i}")
    return raw, class_names


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _choose_label_names(raw: dict, given: list[str] | None) -> list[str]:
    """The label names in id order: given (by the user or the hub), emotion's own, or sorted distinct values."""
    if given:
        return [str(n) for n in given]
    first = raw.get("train") or next(iter(raw.values()))
    values = set(first[1])
    if all(_is_int(v) for v in values):
        return [str(v) for v in sorted(values)]
    values = {str(v).strip() for v in values}
    if values == set(EMOTION_LABELS):
        return list(EMOTION_LABELS)  # the emotion data's own order, as on the hub
    return sorted(values)


def _names_of(values: list, names: list[str], where, split: str, by_position: bool = False) -> list[str]:
    """Turn raw label values into names; a value not among the names is an error naming its line.

    With ``by_position`` (names given by the user or the hub), an integer label is a position in ``names``,
    even when the names look like numbers (``--labels 1,0``: label 0 is named "1").
    """
    known = set(names)
    out = []
    for i, value in enumerate(values):
        name = str(value).strip()
        if _is_int(value) and by_position:
            if not 0 <= value < len(names):
                raise RecipesError(f"{where(i)}: label {value} is an id beyond the {len(names)} label names given "
                                   f"({', '.join(names)}): integer labels are positions in that list")
            name = names[value]
        elif _is_int(value) and name not in known and 0 <= value < len(names):
            name = names[value]  # an integer id into names given by the user or the hub
        if name not in known:
            what = "the training data" if split != "train" else "the label names"
            raise RecipesError(f"{where(i)}: label '{name}' is not in {what} ({', '.join(names)})")
        out.append(name)
    return out


def sample(texts: list, labels: list[str], limit: int | None, seed: int = 0):
    """Return a stratified random subset of ``limit`` examples (all of them when limit is None)."""
    if limit is None or limit >= len(texts):
        return list(texts), list(labels)
    check_limit(limit)
    from sklearn.model_selection import train_test_split

    try:
        texts, _, labels, _ = train_test_split(texts, labels, train_size=limit, stratify=labels, random_state=seed)
    except ValueError:  # a class too rare to stratify in a tiny slice: fall back to plain random
        texts, _, labels, _ = train_test_split(texts, labels, train_size=limit, random_state=seed)
    return list(texts), list(labels)


def load_data_for(config) -> LabelledTexts:
    """Load the data a RecipeConfig's data settings name (``data``, its columns, ``labels``, ``data_config``,
    ``val_fraction``; ``seed`` for the held-out split)."""
    columns = Columns(text=config.text_column, label=config.label_column, pair=config.pair_column)
    return load_data(config.data, columns, config.labels, config.data_config, config.val_fraction, config.seed)
