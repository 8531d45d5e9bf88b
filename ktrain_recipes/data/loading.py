"""Load labelled texts (or text pairs) from a folder, a file or the hub; split and slice them reproducibly.

Emotion is the default dataset (``$EMOTION_DATA``, else the hub's ``dair-ai/emotion``), but any labelled
text data works: name its columns, and the label names come from the data itself.
"""

from __future__ import annotations

from collections import Counter

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ktrain_recipes.config import check_fraction, check_limit
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes.data.readers import FORMATS, Columns, read_file, read_folder, read_hub

HUB_DATASET = "dair-ai/emotion"
EMOTION_SLICE = Path(__file__).parent / "emotion_slice"  # the one copy of data this package ships
EMOTION_LABELS = ["sadness", "joy", "love", "anger", "fear", "surprise"]  # the hub's id order


@dataclass
class LabelledTexts:
    """Texts (or text pairs) and label names per split, with the label names in the dataset's order."""

    splits: dict[str, tuple[list, list]]
    label_names: list[str]
    source: str
    files: dict[str, str] = field(default_factory=dict)
    multilabel: bool = False  # each text's label is a tuple of names (``data.label_sets``)

    def texts(self, split: str) -> list:
        """Return the texts of one split (strings, or (text, text) pairs)."""
        return self._split(split)[0]

    def labels(self, split: str) -> list[str]:
        """Return the labels (names) of one split."""
        return self._split(split)[1]

    def label_ids(self, labels: list):
        """Return the position of each label name in ``label_names`` (what ktrain's preprocess takes); for several
        labels per text, rows of 0/1 (multi-hot), which ktrain trains with a sigmoid per label."""
        if self.multilabel:
            from ktrain_recipes.data.label_sets import multi_hot

            return multi_hot(labels, self.label_names)
        return [self.label_names.index(y) for y in labels]

    def check_trainable(self, labels: list, min_per_class: int = 1) -> None:
        """Refuse training labels that miss a class: ktrain needs every label id from 0 to the last."""
        counts = Counter(n for row in labels for n in row) if self.multilabel else Counter(labels)
        missing = [n for n in self.label_names if counts[n] < min_per_class]
        if missing and self.multilabel:  # one output per label: a label never seen trains nothing, and stops nothing
            note(f"note: the training texts have no example of {', '.join(missing)}: their outputs learn nothing "
                 "(a larger --limit, or data with every label)")
            return
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
    from ktrain_recipes.data import label_sets

    columns = columns or Columns()
    source = str(source or os.environ.get("EMOTION_DATA") or default_emotion())
    path = Path(source).expanduser()
    multilabel = columns.multilabel
    if path.is_dir() and label_sets.is_goemotions_folder(path):
        (raw, class_names), files, multilabel = label_sets.read_goemotions(path), {}, True
    elif path.is_dir():
        raw, class_names, files = read_folder(path, columns), None, {}
    elif path.is_file():
        if path.suffix.lower() not in FORMATS:
            raise RecipesError(f"'{path}': unknown data format (use {', '.join(FORMATS)} or a folder)")
        raw, class_names, files = {"train": read_file(path, columns)}, None, {"train": str(path)}
    elif path.exists():  # a FIFO, a device, a socket (or a link to one): it exists, and is no data file
        raise RecipesError(f"data '{source}' is not a regular file or a folder (a FIFO or a device?): pass --data "
                           "DIR (a folder or a file)")
    elif source.startswith((".", "/", "~")) or path.suffix.lower() in FORMATS or source.count("/") > 1:
        raise RecipesError(f"data '{source}' does not exist: pass --data DIR (a folder or a file) or set EMOTION_DATA")
    else:
        raw, class_names = read_hub(source, hub_config, columns)
        files = {}
    multilabel = multilabel or any(rows and isinstance(rows[0], tuple) for _, rows, _ in raw.values())
    if multilabel:
        return _label_sets(raw, labels or class_names, columns, source if path.exists() else f"hub:{source}", files,
                           val_fraction, seed, hold_out)
    names = _choose_label_names(raw, labels or class_names)
    note_lookalike_labels(names, source)
    unwritable = [n for n in names if any(c in n for c in "\n\r\t")]
    if unwritable:  # predict writes one line per text, its label tab-separated: such a name would break the lines
        raise RecipesError(f"{source}: the label {unwritable[0]!r} holds a line break or a tab, which a label name "
                           "cannot carry into predict's one-line-per-text output: rename it in the data")
    by_position = bool(labels or class_names)  # integer labels are ids into names that were given
    splits = {split: (texts, _names_of(values, names, where, split, by_position))
              for split, (texts, values, where) in raw.items()}
    if "train" in splits and len(set(splits["train"][1])) < 2:
        raise RecipesError(f"{source}: the training data has only one label ({splits['train'][1][0]!r}): "
                           "a classifier needs at least two")
    data = LabelledTexts(splits, names, source if path.exists() else f"hub:{source}", files)
    if hold_out and "train" in splits and "validation" not in splits:
        _hold_out_validation(data, val_fraction, seed)
    report_overlap(data)
    return data


def report_overlap(data: LabelledTexts) -> None:
    """Say once, with the counts, when validation or test texts are also training texts (their score is then
    partly a training score), and when one training text carries two different labels (battery v7, X27)."""
    if "train" not in data.splits:
        return
    texts, labels = data.splits["train"]
    seen: dict = {}
    for text, label in zip(texts, labels):
        seen.setdefault(text, set()).add(label)
    clashes = sum(len(v) > 1 for v in seen.values())
    # said when they are at least one text in a thousand: a small file's clash always, and a large corpus's
    # (GoEmotions 58 of 43,410, emotion 30 of 16,000), not a slice's single stray one
    if clashes and clashes * 1000 >= len(texts):
        note(f"note: {clashes} training text(s) of {data.source} occur with two or more different labels: the model "
             "cannot learn both; fix their labels or remove the duplicates")
    for split in ("validation", "test"):
        if split in data.splits:
            shared = sum(t in seen for t in data.splits[split][0])
            if shared:
                note(f"note: {shared} of {len(data.splits[split][0])} {split} texts of {data.source} are also "
                     f"training texts: their {split} score is partly a training score; remove them from one split")


def _label_sets(raw: dict, given: list[str] | None, columns: Columns, source: str, files: dict,
                val_fraction: float, seed: int, hold_out: bool) -> LabelledTexts:
    """Several labels per text: the names (given, else the sorted distinct labels of train), each checked."""
    from ktrain_recipes.data.label_sets import check_names

    first = raw.get("train") or next(iter(raw.values()))
    names = [str(n) for n in given] if given else sorted({str(n) for row in first[1] for n in row})
    if given:  # a hub dataset's ClassLabel ids are positions in its names
        raw = {split: (texts, [tuple(names[n] if isinstance(n, int) and 0 <= n < len(names) else str(n) for n in row)
                               for row in rows], where) for split, (texts, rows, where) in raw.items()}
    check_names(names, columns.label_sep)
    known = set(names)
    for split, (_texts, rows, where) in raw.items():
        for i, row in enumerate(rows):
            unknown = [n for n in row if n not in known]
            if unknown:
                what = "the label names given" if given or split == "train" else "the training data"
                raise RecipesError(f"{where(i)}: label '{unknown[0]}' is not in {what} ({', '.join(names)})")
    splits = {split: (texts, [tuple(n for n in names if n in row) for row in rows])
              for split, (texts, rows, _) in raw.items()}
    if len(names) < 2:
        raise RecipesError(f"{source}: the training data has only one label ({names[0]!r}): a classifier needs at "
                           "least two")
    data = LabelledTexts(splits, names, source, files, multilabel=True)
    if hold_out and "train" in splits and "validation" not in splits:
        _hold_out_validation(data, val_fraction, seed)
    report_overlap(data)
    return data


def _hold_out_validation(data: LabelledTexts, fraction: float, seed: int) -> None:
    from sklearn.model_selection import train_test_split

    check_fraction(fraction)
    texts, labels = data.splits["train"]
    once = [] if data.multilabel else sorted(str(label) for label, n in Counter(labels).items() if n == 1)
    if once:  # one row cannot be both learned from and scored: said once, in a line that says what to do
        note(f"label {', '.join(repr(n) for n in once[:5])} has a single row in {data.source}: it cannot be both "
             "learned and scored; add rows for it (a few dozen at least) or remove it")
    try:
        if data.multilabel:  # label sets are not classes to stratify by
            raise ValueError
        split = train_test_split(texts, labels, test_size=fraction, stratify=labels, random_state=seed)
        how = "stratified"
    except ValueError:  # a class with a single example cannot be stratified
        split = train_test_split(texts, labels, test_size=fraction, random_state=seed)
        how = "not stratified"
    tr_x, va_x, tr_y, va_y = split
    data.splits["train"], data.splits["validation"] = (list(tr_x), list(tr_y)), (list(va_x), list(va_y))
    note(f"no validation split in {data.source}: held out {len(va_x)} of {len(texts)} training texts "
          f"({fraction:.0%}, {how}, seed {seed}); training on {len(tr_x)}")


def _whole(value) -> int | None:
    """A label that is a whole number: an integer, or a string written as one ("7"; not "007", "+7" or "7.0", which
    are names as written); else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.fullmatch(r"0|[1-9][0-9]*", value.strip()):
        return int(value)
    return None


def _choose_label_names(raw: dict, given: list[str] | None) -> list[str]:
    """The label names in id order: given (by the user or the hub), emotion's own, or sorted distinct values."""
    if given:
        return [_nfc(str(n)) for n in given]
    first = raw.get("train") or next(iter(raw.values()))
    values = set(first[1])
    if all(_whole(v) is not None for v in values):
        return [str(v) for v in sorted({_whole(v) for v in values})]
    values = {_nfc(str(v).strip()) for v in values}
    if values == set(EMOTION_LABELS):
        return list(EMOTION_LABELS)  # the emotion data's own order, as on the hub
    return sorted(values)


def _nfc(value):
    """A label in Unicode's composed form (NFC): 'café' typed on one machine and read from a macOS file name on
    another are one label, not two that look alike."""
    import unicodedata

    return unicodedata.normalize("NFC", value) if isinstance(value, str) else value


def note_lookalike_labels(names: list[str], source: str) -> None:
    """Say which labels differ only by case or spaces ('joy' and 'Joy'): each is a class of its own."""
    groups: dict = {}
    for name in names:
        groups.setdefault(" ".join(name.split()).casefold(), []).append(name)
    alike = [g for g in groups.values() if len(g) > 1]
    if alike:
        shown = "; ".join(" and ".join(repr(n) for n in g) for g in alike[:3])
        note(f"note: labels of {source} that differ only by case or spaces are separate classes: {shown}; write "
             "each label one way if they mean the same")


def _names_of(values: list, names: list[str], where, split: str, by_position: bool = False) -> list[str]:
    """Turn raw label values into names; a value not among the names is an error naming its line.

    With ``by_position`` (names given by the user or the hub), an integer label is a position in ``names``,
    even when the names look like numbers (``--labels 1,0``: label 0 is named "1").
    """
    known = set(names)
    out = []
    for i, value in enumerate(values):
        name, whole = _nfc(str(value).strip()), _whole(value)
        if whole is not None and by_position:
            if not 0 <= whole < len(names):
                raise RecipesError(f"{where(i)}: label {whole} is an id beyond the {len(names)} label names given "
                                   f"({', '.join(names)}): integer labels are positions in that list, from 0; for "
                                   "labels counted from 1 (star ratings) leave the names out, and the numbers are "
                                   "the names")
            name = names[whole]
        # a whole number among names the data chose (a star rating without 1s: '2'..'5') is a name as written, never
        # a position: a test file's "1" would otherwise become the class '3' without a word (battery v7, X32)
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
        if labels and isinstance(labels[0], tuple):  # several labels per text: sets are not classes to stratify by
            raise ValueError
        texts, _, labels, _ = train_test_split(texts, labels, train_size=limit, stratify=labels, random_state=seed)
    except ValueError:  # a class too rare to stratify in a tiny slice: fall back to plain random
        texts, _, labels, _ = train_test_split(texts, labels, train_size=limit, random_state=seed)
    return list(texts), list(labels)


def load_data_for(config, seed: int | None = None) -> LabelledTexts:
    """Load the data that data settings name (``DataSettings``, or a ``RecipeConfig``: ``data``, its columns,
    ``labels``, ``data_config``, ``val_fraction``); ``seed`` for the held-out split, default the config's own."""
    columns = Columns(text=config.text_column, label=config.label_column, pair=config.pair_column,
                      label_sep=getattr(config, "label_sep", None))
    return load_data(config.data, columns, config.labels, config.data_config, config.val_fraction,
                     config.seed if seed is None else seed)
