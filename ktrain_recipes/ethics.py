"""The ETHICS benchmark (Hendrycks et al., ICLR 2021): its tasks as labelled texts, and its scores.

justice, deontology, virtue and commonsense are binary classification (deontology and virtue as
sentence pairs) and go through the usual ktrain recipe. The benchmark's headline figure for justice,
deontology and virtue is *exact match*: the share of groups of consecutive test rows (4, 4, 5: one
scenario varied) that are all classified right. utilitarianism ranks two scenarios by pleasantness;
ktrain has no learner for a pairwise ranking loss, so ``train_ranker`` builds it with Keras on the
same backbone (one scalar score per scenario, trained so the first of each pair scores higher).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .config import RecipeConfig
from .data import Columns, LabelledTexts, load_data
from .errors import RecipesError

HUB_ETHICS = "hendrycks/ethics"


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
    """Load a classification task's train split (with a held-out validation share) and its test split.

    Args:
      task: from ``get_task``.  data: a folder laid out like the archive, or None for the hub.
      split: 'test' or 'test_hard' (where the folder has it).
    """
    if data is None:
        return load_data(HUB_ETHICS, task.columns, LABELS, task.name, val_fraction, seed)
    train_file, test_file = task_file(data, task, "train"), task_file(data, task, split)
    for path in (train_file, test_file):
        if not path.is_file():
            why = " (its training split is not in this copy; the hub has it)" if path == train_file else ""
            raise RecipesError(f"no {path}{why}: point --data at a folder laid out like the ETHICS archive")
    train = load_data(train_file, task.columns, LABELS, val_fraction=val_fraction, seed=seed)
    train.splits["test"] = _file_order(test_file, task)
    if task.name == "virtue":
        train.splits = {s: ([_virtue_pair(t) for t in x], y) for s, (x, y) in train.splits.items()}
    return train


def _file_order(path: Path, task: Task) -> tuple[list, list[str]]:
    """The test rows in file order (groups are consecutive rows), read with pandas."""
    import pandas as pd

    table = pd.read_csv(path, keep_default_na=False, dtype=str)
    missing = {task.columns.text, task.columns.label, task.columns.pair} - {None} - set(table.columns)
    if missing:
        raise RecipesError(f"{path}: no column(s) {', '.join(sorted(missing))} (has: {', '.join(table.columns)})")
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
    table = pd.read_csv(path, header=None, keep_default_na=False, dtype=str)
    if table.shape[1] != 2:
        raise RecipesError(f"{path}: expected two columns (more pleasant, less pleasant), got {table.shape[1]}")
    return list(zip(table[0], table[1]))


def run_ethics(task_name: str, config: RecipeConfig, split: str = "test") -> dict:
    """Train ``config.model`` on one ETHICS task, score it on the test split; return (and save) the result.

    The classification tasks run ``run_recipe`` (the predictor goes to ``config.out``) and are scored
    on the test rows in file order; utilitarianism trains a Keras ranker (``train_ranker``).
    """
    task = get_task(task_name)
    if task.name == "commonsense" and config.data and not task_file(config.data, task, "train").is_file():
        raise RecipesError("commonsense skipped: its training split (commonsense/cm_train.csv) is not in "
                           f"{config.data}; run without --data to use the hub's copy")
    start = time.perf_counter()
    if task.name == "utilitarianism":
        result = _run_utilitarianism(task, config, split)
    else:
        result = _run_classification(task, config, split)
    result.update(task=task.name, split=split, model=config.model, seconds=time.perf_counter() - start)
    return result


def _run_classification(task: Task, config: RecipeConfig, split: str) -> dict:
    from .prediction import classify
    from .recipe import run_recipe
    from .loading import load_checked_predictor

    ds = load_ethics(task, config.data, split, config.val_fraction, config.seed)
    metrics = run_recipe(config, dataset=ds)
    predictor = load_checked_predictor(config.with_defaults().out)
    texts, truth = ds.splits["test"]
    result = score_task(task, classify(predictor, texts), truth)
    return {**result, "n_train": metrics["n_train"], "epochs": metrics["epochs"], "val_accuracy": metrics["accuracy"],
            "train_seconds": metrics["train_seconds"]}


def _run_utilitarianism(task: Task, config: RecipeConfig, split: str) -> dict:
    from .data import sample

    if config.data is None:
        raise RecipesError("utilitarianism from the hub is not supported yet: pass --data with the archive's "
                           "folder (utilitarianism/util_train.csv and util_test.csv)")
    train = read_pairs(task_file(config.data, task, "train"))
    test = read_pairs(task_file(config.data, task, split))
    if config.limit:
        train = sample(train, [0] * len(train), config.limit, config.seed)[0]
    config = config.with_defaults()
    scorer, info = train_ranker(config, train)
    right = rank_pairs(scorer, info["tokenizer"], info["maxlen"], test)
    _save_ranker(scorer, info, config)
    return {"accuracy": float(np.mean(right)), "n": len(right), "n_train": len(train), "epochs": config.epochs,
            "train_seconds": info["train_seconds"]}


def train_ranker(config: RecipeConfig, pairs: list[tuple[str, str]]):
    """Fine-tune a one-output model so that it scores the first scenario of each pair above the second.

    The loss is the paper's: binary cross-entropy on score(first) - score(second). Returns the scoring
    model and what scoring needs (tokenizer, maxlen) plus the training seconds.
    """
    import tensorflow as tf
    from transformers import TFAutoModelForSequenceClassification

    from .maxlen import load_tokenizer, resolve_maxlen
    from .models import resolve_model
    from .train import set_seed

    set_seed(config.seed)
    path = resolve_model(config.model)
    tokenizer = load_tokenizer(path)
    maxlen = resolve_maxlen(config.maxlen, tokenizer, [a for a, _ in pairs] + [b for _, b in pairs])
    scorer = TFAutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    first, second = (_encode(tokenizer, [p[i] for p in pairs], maxlen) for i in (0, 1))

    class Ranker(tf.keras.Model):
        def __init__(self, scorer):
            super().__init__()
            self.scorer = scorer  # an attribute, so that Keras trains its weights

        def call(self, inputs, training=False):
            a, b = inputs
            return self.scorer(a, training=training).logits[:, 0] - self.scorer(b, training=training).logits[:, 0]

    steps = -(-len(pairs) // config.batch_size) * config.epochs
    rate = tf.keras.optimizers.schedules.PolynomialDecay(config.lr, steps, 0.0)  # linear decay to 0
    ranker = Ranker(scorer)
    ranker.compile(optimizer=tf.keras.optimizers.Adam(rate), loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    start = time.perf_counter()
    ranker.fit((first, second), np.ones(len(pairs), np.float32), batch_size=config.batch_size, epochs=config.epochs,
               shuffle=True, callbacks=[tf.keras.callbacks.TerminateOnNaN()])
    return scorer, {"tokenizer": tokenizer, "maxlen": maxlen, "train_seconds": time.perf_counter() - start}


def _encode(tokenizer, texts: list[str], maxlen: int) -> dict:
    enc = tokenizer(list(texts), padding="max_length", truncation=True, max_length=maxlen, return_tensors="np")
    return {k: v.astype(np.int32) for k, v in enc.items()}


def rank_pairs(scorer, tokenizer, maxlen: int, pairs: list[tuple[str, str]], batch_size: int = 64) -> list[bool]:
    """Return, for each pair, whether the model scores its first scenario above its second."""
    scores = []
    for i in (0, 1):
        enc = _encode(tokenizer, [p[i] for p in pairs], maxlen)
        scores.append(scorer.predict(enc, batch_size=batch_size, verbose=0).logits[:, 0])
    return list(scores[0] > scores[1])


def _save_ranker(scorer, info: dict, config: RecipeConfig) -> None:
    from .saving import check_out_dir, stage_dir, swap_into_place, write_manifest

    out = check_out_dir(config.out, config.overwrite)
    stage = stage_dir(out)
    try:
        scorer.save_pretrained(stage)
        info["tokenizer"].save_pretrained(stage)
        (stage / "metrics.json").write_text(json.dumps({"settings": dataclasses.asdict(config),
                                                        "maxlen": info["maxlen"]}, indent=2))
        write_manifest(stage, ["score"], info["maxlen"], {"model_id": config.model}, kind="ranker")
        swap_into_place(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def write_result(result: dict, path: str | os.PathLike) -> None:
    """Write an ETHICS result as JSON."""
    Path(path).write_text(json.dumps(result, indent=2))


# Published test figures (hendrycks/ethics README): exact match for justice, deontology, virtue; accuracy otherwise.
LEADERBOARD = {
    "BERT-base": {"justice": 26.0, "deontology": 38.8, "virtue": 33.1, "utilitarianism": 73.4, "commonsense": 86.5},
    "BERT-large": {"justice": 32.7, "deontology": 44.2, "virtue": 40.6, "utilitarianism": 74.6, "commonsense": 88.5},
    "RoBERTa-large": {"justice": 56.7, "deontology": 60.3, "virtue": 53.0, "utilitarianism": 79.5,
                      "commonsense": 90.4},
    "ALBERT-xxlarge": {"justice": 59.9, "deontology": 64.1, "virtue": 64.1, "utilitarianism": 81.9,
                       "commonsense": 85.1},
    "random": {"justice": 6.3, "deontology": 6.3, "virtue": 8.2, "utilitarianism": 50.0, "commonsense": 50.0},
}


def results_table(results: list[dict]):
    """Our runs beside the published leaderboard, in percent: the benchmark's figure per task
    (exact match where the task has groups, else accuracy), then how each run was made."""
    import pandas as pd

    rows = {name: scores for name, scores in LEADERBOARD.items()}
    ours = {r["task"]: 100 * r.get("exact_match", r["accuracy"]) for r in results}
    label = f"{results[0]['model']} (ours)" if results else "ours"
    rows[label] = ours
    table = pd.DataFrame.from_dict(rows, orient="index")[list(TASKS)].round(1)
    keys = ("task", "accuracy", "exact_match", "n", "n_train", "epochs", "seconds")
    details = pd.DataFrame([{k: r.get(k) for k in keys} for r in results]).set_index("task") if results else None
    return table, details
