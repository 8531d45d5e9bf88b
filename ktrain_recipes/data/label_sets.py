"""Several labels per text: the rules for reading them, and the multi-hot rows ktrain trains on.

Three ways a file gives several labels per text:

- **GoEmotions' own folder**: ``train.tsv``, ``dev.tsv``, ``test.tsv`` with no header (text, comma-separated label ids,
  comment id) and ``emotions.txt`` naming the ids (``read_goemotions``);
- **one column with a separator** (``--label-sep ';'``): ``"joy;love"``;
- **one 0/1 column per label** (``--label-column joy,love,anger``: two or more names, comma-separated).

Each row's labels are a tuple of names in the order of the label list. Refused, naming the line: an id outside the
label list, an empty label set, a label given twice, a cell that is not 0 or 1, and a label name that holds the
separator. A file read as one label per text whose labels hold ';' is refused too: each combination would become a
class of its own without a word.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ktrain_recipes.errors import RecipesError

GOEMOTIONS_NAMES = "emotions.txt"
GOEMOTIONS_SPLITS = {"train": "train.tsv", "validation": "dev.tsv", "test": "test.tsv"}
LOOKS_LIKE_SEVERAL = (";", "|")


def is_goemotions_folder(folder: Path) -> bool:
    """A folder in GoEmotions' own layout: ``emotions.txt`` beside ``train.tsv``."""
    return (folder / GOEMOTIONS_NAMES).is_file() and (folder / GOEMOTIONS_SPLITS["train"]).is_file()


def read_goemotions(folder: Path) -> tuple[dict, list[str]]:
    """GoEmotions' splits as ``{split: (texts, label tuples, where)}`` and its label names (``emotions.txt``)."""
    names = [line.strip() for line in (folder / GOEMOTIONS_NAMES).read_text(encoding="utf-8").splitlines()
             if line.strip()]
    if len(names) < 2 or len(set(names)) != len(names):
        raise RecipesError(f"{folder / GOEMOTIONS_NAMES}: expected one distinct label name per line, at least two")
    splits = {}
    for split, file in GOEMOTIONS_SPLITS.items():
        path = folder / file
        if not path.is_file():
            continue
        texts, labels, lines = [], [], []
        try:
            with open(path, encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
        except UnicodeDecodeError as exc:
            raise RecipesError(f"{path} is not UTF-8 (byte 0x{exc.object[exc.start]:02x} at byte {exc.start}): "
                               "save the file as UTF-8") from None
        for n, row in enumerate(rows, start=1):
            if not row or not any(cell.strip() for cell in row):
                continue
            if len(row) < 2:
                raise RecipesError(f"{path}:{n}: expected `text<TAB>label ids[<TAB>id]`, got {row[0][:60]!r}")
            if not row[0].strip():
                raise RecipesError(f"{path}:{n}: empty text; fill it or remove the line")
            texts.append(row[0])
            labels.append(ids_to_names(row[1], names, f"{path}:{n}"))
            lines.append(n)
        if not texts:
            raise RecipesError(f"{path}: the file is empty; expected one `text<TAB>label ids` per line")
        splits[split] = (texts, labels, lambda i, p=path, ln=lines: f"{p}:{ln[i]}")
    return splits, names


def ids_to_names(cell: str, names: list[str], where: str) -> tuple[str, ...]:
    """GoEmotions' label cell ("3,27") as names, in the label list's order."""
    parts = [p.strip() for p in cell.split(",")]
    if not any(parts):
        raise RecipesError(f"{where}: empty label set; every text needs at least one label id")
    ids = []
    for part in parts:
        if not part.isdigit() or int(part) >= len(names):
            raise RecipesError(f"{where}: label id {part!r} is not one of 0 to {len(names) - 1} "
                               f"({GOEMOTIONS_NAMES} names {len(names)} labels)")
        ids.append(int(part))
    return _once(ids, names, where)


def _once(ids: list[int], names: list[str], where: str) -> tuple[str, ...]:
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise RecipesError(f"{where}: label '{names[twice[0]]}' is given twice; name each label once per text")
    return tuple(names[i] for i in sorted(ids))


def split_cell(value, sep: str, where: str) -> tuple[str, ...]:
    """One label cell holding several labels (``"joy;love"``) as its names, as written (names are chosen after)."""
    parts = [p.strip() for p in str(value).split(sep)]
    if not any(parts):
        raise RecipesError(f"{where}: empty label set; every text needs at least one label")
    if not all(parts):
        raise RecipesError(f"{where}: an empty label between two {sep!r} in {str(value)!r}: remove the extra {sep!r}")
    twice = sorted({p for p in parts if parts.count(p) > 1})
    if twice:
        raise RecipesError(f"{where}: label '{twice[0]}' is given twice; name each label once per text")
    return tuple(parts)


def from_flag_columns(ds, columns: list[str], source: str, where) -> list[tuple[str, ...]]:
    """One 0/1 column per label (``--label-column joy,love``): each row's labels are the columns holding 1."""
    missing = [c for c in columns if c not in ds.column_names]
    if missing:
        raise RecipesError(f"{source}: no column '{missing[0]}' (columns: {', '.join(ds.column_names)}): name the "
                           "0/1 label columns in --label-column, comma-separated")
    values = [list(ds[c]) for c in columns]
    rows = []
    for i in range(len(ds)):
        chosen = []
        for name, column in zip(columns, values):
            cell = str(column[i]).strip() if column[i] is not None else ""
            if cell not in ("0", "1", "0.0", "1.0", "True", "False", "true", "false"):
                raise RecipesError(f"{where(i)}: column '{name}' holds {cell!r}: a label column holds 0 or 1")
            if cell in ("1", "1.0", "True", "true"):
                chosen.append(name)
        if not chosen:
            raise RecipesError(f"{where(i)}: empty label set (every label column is 0); every text needs at least "
                               "one label")
        rows.append(tuple(chosen))
    return rows


def check_names(names: list[str], sep: str | None) -> None:
    """Refuse label names that hold the separator: a cell naming them could not be split back."""
    if sep:
        bad = [n for n in names if sep in n]
        if bad:
            raise RecipesError(f"the label name {bad[0]!r} holds the separator {sep!r}: rename it, or choose "
                               "another --label-sep")


def refuse_hidden_sets(values: list, where) -> None:
    """For data read as one label per text: refuse labels that look like several (``"anxious;tired"``)."""
    for i, value in enumerate(values):
        if isinstance(value, str):
            for sep in LOOKS_LIKE_SEVERAL:
                if sep in value and all(p.strip() for p in value.split(sep)):
                    raise RecipesError(f"{where(i)}: the label {value!r} looks like several labels: pass --label-sep "
                                       f"'{sep}' to train one output per label (several labels per text), or "
                                       f"rename the label without {sep!r} to keep it as one class")


def multi_hot(label_sets: list[tuple[str, ...]], names: list[str]) -> np.ndarray:
    """Rows of 0/1, one column per name: what ktrain's multi-label path trains on (sigmoid, binary cross-entropy)."""
    index = {n: i for i, n in enumerate(names)}
    out = np.zeros((len(label_sets), len(names)), dtype=np.float32)
    for row, labels in enumerate(label_sets):
        for name in labels:
            out[row, index[name]] = 1.0
    return out


def threshold_vector(thresholds: dict, names: list[str]) -> np.ndarray:
    """The per-label thresholds as a vector in ``names``' order, each a number in (0, 1), checked."""
    per = thresholds.get("per_label") if isinstance(thresholds, dict) else None
    if not isinstance(per, dict) or set(per) != set(names):
        raise RecipesError("the thresholds do not name exactly the predictor's labels: re-run train")
    values = [per[n] for n in names]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1 for v in values):
        raise RecipesError("a threshold is not a number between 0 and 1: re-run train")
    return np.asarray(values, dtype=np.float32)
