"""ETHICS (Hendrycks et al., ICLR 2021) as data: its tasks, their files (the archive's or the hub's), and exact
match, the benchmark's score over groups of test rows (the training rows' groups: ``studies.ethics_groups``).

justice, deontology, virtue and commonsense are binary classification (deontology and virtue as sentence
pairs). The headline figure for justice, deontology and virtue is *exact match*: the share of groups of
consecutive test rows (4, 4, 5: one scenario varied) that are all classified right. utilitarianism is a
pairwise ranking of two scenarios by pleasantness.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ktrain_recipes.data.loading import Columns, LabelledTexts, load_data
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes_tools.studies.ethics_groups import group_split, train_groups


# The hub's parquet copy: datasets 5 reads it (the script-based hendrycks/ethics no longer loads). Its
# configurations are the task names; it has commonsense's training split, which the archive copy may lack.
HUB_ETHICS = "EleutherAI/hendrycks_ethics"


# each task's columns in that dataset (its card): (text, second text or None, label or None, group or None)
HUB_COLUMNS = {
    "justice": ("scenario", None, "label", "group_id"),
    "deontology": ("scenario", "excuse", "label", "group_id"),
    "virtue": ("scenario", "trait", "label", "group_id"),
    "commonsense": ("input", None, "label", None),
    "utilitarianism": ("activity", "baseline", None, None),  # activity: the more pleasant scenario
}


@dataclass(frozen=True)
class Task:
    """One ETHICS task: its files, columns and exact-match group size (0: plain accuracy)."""

    name: str
    prefix: str
    columns: Columns
    group: int


TASKS = {
    t.name: t
    for t in [
        Task("justice", "justice", Columns("scenario", "label"), 4),
        Task("deontology", "deontology", Columns("scenario", "label", "excuse"), 4),
        Task("virtue", "virtue", Columns("scenario", "label"), 5),  # "sentence [SEP] trait", split into a pair
        Task("commonsense", "cm", Columns("input", "label"), 0),
        Task("utilitarianism", "util", Columns(), 0),  # no header: (more pleasant, less pleasant)
    ]
}


LABELS = ["0", "1"]


def get_task(name: str) -> Task:
    """Return a task by name, or raise with the list of tasks."""
    if name not in TASKS:
        raise RecipesError(f"unknown ETHICS task '{name}': choose one of {', '.join(TASKS)}")
    return TASKS[name]


def task_file(data: str | os.PathLike, task: Task, split: str) -> Path:
    """Return ``DATA/<task>/<prefix>_<split>.csv``, the layout of the dataset's own archive."""
    return Path(data) / task.name / f"{task.prefix}_{split}.csv"


def load_ethics(task: Task, data: str | os.PathLike | None, split: str = "test", val_fraction: float = 0.1,
                seed: int = 42) -> LabelledTexts:
    """Load a classification task's train split, hold out whole groups for validation, and load its test split.

    Args:
      task: from ``get_task``.  data: a folder laid out like the archive, a folder laid out like the hub's
        parquet dataset (``hub_layout``), or None for the hub.
      split: 'test' or 'test_hard' (where the folder has it).
    The validation rows share no group with the training rows (``train_groups``); ``ds.groups`` holds the
    validation rows' group ids, for exact match over them.
    """
    if data is None or is_hub_layout(data):
        ds = _load_hub_layout(task, data, split)
    else:
        train_file, test_file = task_file(data, task, "train"), task_file(data, task, split)
        for path in (train_file, test_file):
            if not path.is_file():
                why = " (its training split is not in this copy; the hub has it)" if path == train_file else ""
                raise RecipesError(f"no {path}{why}: point --data at a folder laid out like the ETHICS archive")
        _check_header(train_file, task)  # load_data would suggest --label-column, which ethics does not have
        ds = load_data(train_file, task.columns, LABELS, val_fraction=val_fraction, seed=seed, hold_out=False)
        ds.splits["test"] = _file_order(test_file, task)
    if task.group and len(ds.splits["test"][0]) < task.group:
        raise RecipesError(f"{task.name}'s test split has {len(ds.splits['test'][0])} rows, fewer than one group of "
                           f"{task.group}: exact match needs whole groups; give the archive's full test file")
    if task.name == "virtue":
        ds.splits = {s: ([_virtue_pair(t) if isinstance(t, str) else t for t in x], y) for s, (x, y) in
                     ds.splits.items()}
    texts, labels = ds.splits["train"]
    groups = train_groups(task, texts)
    (tr_x, tr_y, _), (va_x, va_y, va_g) = group_split(texts, labels, groups, val_fraction, seed)
    ds.splits["train"], ds.splits["validation"] = (tr_x, tr_y), (va_x, va_y)
    ds.groups = va_g
    note(f"{task.name}: held out {len(va_x)} of {len(texts)} training rows ({len(set(va_g))} whole groups, "
          f"{val_fraction:.0%}, seed {seed}) for validation; training on {len(tr_x)}")
    return ds


def is_hub_layout(data: str | os.PathLike) -> bool:
    """True for a local folder laid out like the hub's parquet dataset: ``TASK/train-*.parquet``, ..."""
    return any(Path(data).glob("*/train-*.parquet")) or any(Path(data).glob("*/test-*.parquet"))


def hub_splits(task: Task, data: str | os.PathLike | None) -> dict:
    """The task's splits from the hub (``data`` None) or from a local folder laid out like it, as pandas."""
    import datasets

    if data is None:
        try:
            loaded = datasets.load_dataset(HUB_ETHICS, task.name)
        except Exception as exc:  # no network, or the hub changed: say which
            raise RecipesError(f"cannot load {HUB_ETHICS} ({task.name}) from the hub ({str(exc).splitlines()[0][:120]})"
                               ": pass --data with a local copy of the archive") from None
        return {name: split.to_pandas() for name, split in loaded.items()}
    found = {}
    for path in sorted(Path(data, task.name).glob("*.parquet")):
        found.setdefault(path.name.split("-")[0], []).append(str(path))
    if not found:
        raise RecipesError(f"no {task.name}/*.parquet in {data}: lay it out as the hub's {HUB_ETHICS}")
    loaded = datasets.load_dataset("parquet", data_files=found)
    return {name: split.to_pandas() for name, split in loaded.items()}


def _load_hub_layout(task: Task, data, split: str) -> LabelledTexts:
    splits = hub_splits(task, data)
    if "train" not in splits:
        raise RecipesError(f"{task.name}: the {'hub' if data is None else data} copy has no training split")
    if split not in splits:
        raise RecipesError(f"{task.name}: no '{split}' split in the {'hub' if data is None else data} copy (it has "
                           f"{', '.join(splits)}): its 'test' is the leaderboard's Test column, 'test_hard' its "
                           "Hard Test column")
    text, pair, label, _ = HUB_COLUMNS[task.name]
    out = {}
    for name in ("train", split):
        frame = splits[name]
        texts = list(zip(frame[text], frame[pair])) if pair else list(frame[text])
        out["train" if name == "train" else "test"] = (texts, [str(int(v)) for v in frame[label]])
    return LabelledTexts(out, LABELS, f"hub:{HUB_ETHICS}/{task.name}" if data is None else str(data))


def _check_header(path: Path, task: Task) -> None:
    """Refuse a task file without the task's columns, naming the file the archive's own layout expects."""
    import pandas as pd

    try:
        header = list(pd.read_csv(path, nrows=0).columns)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise RecipesError(f"{path}: not a CSV file ({str(exc).splitlines()[0][:120]}): use the archive's file") \
            from None
    missing = [c for c in (task.columns.text, task.columns.label, task.columns.pair) if c and c not in header]
    if missing:
        raise RecipesError(f"{path}: no column(s) {', '.join(missing)} (has: {', '.join(map(str, header))}): "
                           f"{task.name} reads the ETHICS archive's own files unchanged")


def _file_order(path: Path, task: Task) -> tuple[list, list[str]]:
    """The test rows in file order (groups are consecutive rows), read with pandas."""
    import pandas as pd

    _check_header(path, task)
    table = pd.read_csv(path, keep_default_na=False, dtype=str)
    bad = [i for i, v in enumerate(table[task.columns.label]) if str(v).strip() not in LABELS]
    if bad:
        raise RecipesError(f"{path}:{bad[0] + 2}: label {table[task.columns.label][bad[0]]!r} is not 0 or 1")
    first = list(table[task.columns.text])
    texts = list(zip(first, table[task.columns.pair])) if task.columns.pair else first
    return texts, [str(v).strip() for v in table[task.columns.label]]


def _virtue_pair(text: str) -> tuple[str, str]:
    sentence, sep, trait = text.rpartition("[SEP]")
    if not sep:
        raise RecipesError(f"virtue row without ' [SEP] trait': {text[:60]!r}")
    return sentence.strip(), trait.strip()


def exact_match(correct: list[bool], group: int) -> float:
    """Return the share of consecutive groups of ``group`` rows that are all correct (a partial last group
    is left out)."""
    n = len(correct) // group
    if n == 0:
        raise RecipesError(f"exact match needs at least one full group of {group} rows, got {len(correct)}")
    return float(np.asarray(correct[: n * group]).reshape(n, group).all(axis=1).mean())


def score_task(task: Task, predicted: list[str], truth: list[str]) -> dict:
    """Accuracy, and exact match where the task has groups, of test predictions in file order."""
    correct = [p == t for p, t in zip(predicted, truth)]
    result = {"accuracy": float(np.mean(correct)), "n": len(correct)}
    if task.group:
        result["exact_match"] = exact_match(correct, task.group)
        result["groups"] = len(correct) // task.group
    return result


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """Read utilitarianism's header-less two-column CSV: (more pleasant, less pleasant) per row."""
    import pandas as pd

    if not path.is_file():
        raise RecipesError(f"no {path}: point --data at a folder laid out like the ETHICS archive")
    try:
        table = pd.read_csv(path, header=None, keep_default_na=False, dtype=str)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as exc:
        raise RecipesError(f"{path}: not two comma-separated columns ({str(exc).splitlines()[0][:120]}): use the "
                           "archive's file") from None
    if table.shape[1] != 2:
        raise RecipesError(f"{path}: expected two columns (more pleasant, less pleasant), got {table.shape[1]}")
    return list(zip(table[0], table[1]))


def load_pairs(task: Task, data, split: str) -> tuple[list, list]:
    """utilitarianism's (more pleasant, less pleasant) pairs: train and ``split``, from the archive or the hub."""
    if data is None or is_hub_layout(data):
        splits = hub_splits(task, data)
        if split not in splits:
            raise RecipesError(f"utilitarianism: no '{split}' split (it has {', '.join(splits)})")
        first, second = HUB_COLUMNS["utilitarianism"][:2]
        return [list(zip(splits[s][first], splits[s][second])) for s in ("train", split)]
    return [read_pairs(task_file(data, task, s)) for s in ("train", split)]


def split_pairs(pairs: list[tuple[str, str]], fraction: float, seed: int) -> tuple[list, list]:
    """utilitarianism's validation: hold out ``fraction`` of the groups of pairs that share an opening sentence."""
    groups = train_groups(get_task("utilitarianism"), pairs)
    (train, _, _), (val, _, _) = group_split(pairs, [0] * len(pairs), groups, fraction, seed)
    return train, val
