"""Run ETHICS: train on a task, score every epoch on grouped validation (and record the test figure of each
epoch for the one validation picks), and set the result beside the published leaderboard."""

from __future__ import annotations

import dataclasses
import json
import os
import time

import numpy as np

from ktrain_recipes.config import RecipeConfig
from ktrain_recipes.errors import RecipesError, note
from ktrain_recipes_tools.studies.ethics_data import (
    TASKS, Task, get_task, is_hub_layout, load_ethics, load_pairs, score_task, split_pairs, task_file,
)
from ktrain_recipes_tools.studies.ethics_groups import group_exact_match


def run_ethics(task_name: str, config: RecipeConfig, split: str = "test") -> dict:
    """Train ``config.model`` on one ETHICS task, score it on the test split; return (and save) the result.

    The classification tasks run ``run_recipe`` (the predictor goes to ``config.out``) and are scored
    on the test rows in file order; utilitarianism trains a Keras ranker (``train_ranker``).
    """
    task = get_task(task_name)
    if (task.name == "commonsense" and config.data and not is_hub_layout(config.data)
            and not task_file(config.data, task, "train").is_file()):
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
    from ktrain_recipes.inference.prediction import classify
    from ktrain_recipes.training.recipe import run_recipe
    from ktrain_recipes.predictor.loading import load_checked_predictor

    ds = load_ethics(task, config.data, split, config.val_fraction, config.seed)
    val_texts, val_truth = ds.splits["validation"]
    if config.eval_limit:  # score the same rows that run_recipe validates on, with their groups
        from ktrain_recipes.data.loading import sample

        kept = sample(list(range(len(val_texts))), val_truth, config.eval_limit, config.seed)[0]
        groups = [ds.groups[i] for i in kept]
    else:
        groups = ds.groups

    test_texts, test_truth = ds.splits["test"]

    def per_epoch(predictor) -> dict:
        from ktrain_recipes.data.loading import sample

        texts, truth = sample(val_texts, val_truth, config.eval_limit, config.seed)
        correct = [p == t for p, t in zip(classify(predictor, texts), truth)]
        scores = {"val_accuracy": float(np.mean(correct)), "val_exact_match": group_exact_match(correct, groups)}
        # The test rows are scored too, as if each epoch's weights were kept: ``chosen_epoch`` picks an epoch
        # by validation alone, and only that epoch's test figure is reported.
        test = score_task(task, classify(predictor, test_texts), test_truth)
        return {**scores, **{f"test_{k}": v for k, v in test.items() if k in ("accuracy", "exact_match")}}

    metrics = run_recipe(config, dataset=ds, per_epoch=per_epoch)
    predictor = load_checked_predictor(config.with_defaults().out)
    texts, truth = ds.splits["test"]
    result = score_task(task, classify(predictor, texts), truth)
    curve = metrics.get("per_epoch", [])
    return {**result, "n_train": metrics["n_train"], "epochs": metrics["settings"]["epochs"],
            "interrupted": bool(metrics.get("interrupted")), "epochs_completed": metrics["epochs_completed"],
            "val_accuracy": metrics["accuracy"], "chosen": chosen_epoch(curve, "val_exact_match"),
            "val_per_epoch": curve, "train_seconds": metrics["train_seconds"],
            "segment_ids": bool(predictor.preproc.use_token_type_ids),  # pairs marked as two segments (segments.py)
            "settings": {k: metrics["settings"][k] for k in ("lr", "batch_size", "epochs", "weight_decay",
                                                              "average_last", "class_weight", "seed")}}


def _run_utilitarianism(task: Task, config: RecipeConfig, split: str) -> dict:
    from pathlib import Path

    from ktrain_recipes.data.loading import sample
    from ktrain_recipes.predictor.staging import staged_predictor
    from ktrain_recipes_tools.studies.ethics_ranker import rank_pairs, train_ranker
    from ktrain_recipes.training.checkpoint import Checkpoint, run_lock
    from ktrain_recipes.training.recipe import check_resumable

    config = config.with_defaults()
    if config.resume:
        check_resumable(config.out)  # before the data is read: nothing to go on with is said at once
    out = Path(config.out)
    checkpoint = Checkpoint(out, {})  # its identity is set once the texts and maxlen are known (train_ranker)
    # --out is checked before training; the lock keeps a second run of the same --out off this one's checkpoint
    with staged_predictor(out, config.overwrite or config.resume) as stage, run_lock(out):
        train, test = load_pairs(task, config.data, split)
        train, val = split_pairs(train, config.val_fraction, config.seed)
        if config.limit:
            train = sample(train, [0] * len(train), config.limit, config.seed)[0]
        if config.eval_limit:
            val = sample(val, [0] * len(val), config.eval_limit, config.seed)[0]
        scorer, info = train_ranker(config, train, val, test, checkpoint)
        right = rank_pairs(scorer, info["tokenizer"], info["maxlen"], test)
        scorer.save_pretrained(stage.path)
        info["tokenizer"].save_pretrained(stage.path)
        stage.commit(["score"], info["maxlen"], {"settings": dataclasses.asdict(config), "maxlen": info["maxlen"],
                                                 "model_id": config.model, "per_epoch": info["per_epoch"],
                                                 "train_seconds": info["train_seconds"]}, kind="ranker")
    if config.keep_checkpoint:  # as train keeps it
        note(f"checkpoint kept in {checkpoint.folder} (--keep-checkpoint)")
    else:
        checkpoint.clear()
    return {"accuracy": float(np.mean(right)), "n": len(right), "n_train": len(train), "epochs": config.epochs,
            "chosen": chosen_epoch(info["per_epoch"], "val_ranked_right"), "val_per_epoch": info["per_epoch"],
            "train_seconds": info["train_seconds"],
            "settings": {k: getattr(config, k) for k in ("lr", "batch_size", "epochs", "weight_decay", "seed")}}


def chosen_epoch(curve: list[dict], key: str) -> dict | None:
    """The epoch whose validation ``key`` is highest (the earliest on a tie), with everything recorded for it:
    the test figures of the weights validation would keep."""
    scored = [row for row in curve if key in row]
    if not scored:
        return None
    return max(scored, key=lambda row: (row[key], -row.get("epoch", 0)))


def figure_keys(task: str) -> tuple[str, str]:
    """(validation key, test key) of a task's per-epoch figures: exact match, or pairs ranked right."""
    if task == "utilitarianism":
        return "val_ranked_right", "test_ranked_right"
    return "val_exact_match", "test_exact_match"


def validation_choice(runs: list[dict], task: str) -> tuple[dict, dict]:
    """(run, epoch) validation picks among a task's runs: each run's epoch as ``chosen_epoch`` picks it, then the
    run (rate) whose choice validation rates highest (the first on a tie)."""
    val, _ = figure_keys(task)
    return max(((r, chosen_epoch(r["val_per_epoch"], val)) for r in runs), key=lambda pair: pair[1][val])


def load_runs(folder: str | os.PathLike, task: str, prefix: str = "", seed: int | None = 42) -> list[dict]:
    """Every run of ``task`` a series wrote into ``folder`` (``<prefix><task>-lr<rate>[-s<seed>].json``) with
    ``seed`` (every seed when None), in file-name order. Runs of one seed at several rates are a grid that validation
    chooses from; other seeds repeat it, to say how far one seed can be trusted (``seed_figures``)."""
    from pathlib import Path

    runs = [json.loads(p.read_text()) for p in sorted(Path(folder).glob(f"{prefix}{task}-lr*.json"))]
    return [r for r in runs if seed is None or run_seed(r) == seed]


def run_seed(run: dict) -> int:
    """The seed a run recorded (42, the series' first, for records older than the field)."""
    return run.get("settings", {}).get("seed", 42)


def seed_figures(folder: str | os.PathLike, task: str, prefix: str = "") -> dict[int, dict]:
    """Per seed, the test figures of the run and epoch validation chose among that seed's runs: the benchmark's
    figure (exact match, or pairs ranked right) and, where recorded, per-row accuracy."""
    by_seed: dict[int, list[dict]] = {}
    for run in load_runs(folder, task, prefix, seed=None):
        by_seed.setdefault(run_seed(run), []).append(run)
    _, test = figure_keys(task)
    figures = {}
    for seed, runs in sorted(by_seed.items()):
        run, epoch = validation_choice(runs, task)
        figures[seed] = {"figure": epoch[test], "accuracy": epoch.get("test_accuracy", epoch[test]),
                         "epoch": epoch["epoch"], "lr": run["settings"]["lr"], "seconds": run["train_seconds"]}
    return figures


# where each model's committed full runs are kept, in the checkout: (folder under docs/, file-name prefix)
COMMITTED = {"minilm": ("ethics", ""), "mpnet": ("mpnet", "ethics-")}


def committed_ethics_results(model: str = "minilm", seed: int = 42) -> list[dict]:
    """Our full ETHICS runs of ``model`` (``COMMITTED``: MiniLM or MPNet-base), as ``results_table`` takes them: per
    task, the test figure of the run and epoch that validation chose among ``seed``'s runs. Read from docs/ in the
    checkout this package runs from (a clone, as the notebooks' install cell makes on Colab); an empty list when it
    is not there."""
    from pathlib import Path

    where, prefix = COMMITTED[model]
    folder = Path(__file__).resolve().parents[2] / "docs" / where
    results = []
    for task in TASKS:
        runs = load_runs(folder, task, prefix, seed) if folder.is_dir() else []
        if not runs:
            continue
        run, epoch = validation_choice(runs, task)
        _, test = figure_keys(task)
        figure = {"exact_match": epoch[test]} if test == "test_exact_match" else {"accuracy": epoch[test]}
        results.append({"task": task, "model": run["model"], "accuracy": epoch.get("test_accuracy"), **figure,
                        "n": run["n"], "n_train": run["n_train"], "epochs": epoch["epoch"],
                        "lr": run["settings"]["lr"], "seconds": run["train_seconds"]})
    return results


def write_result(result: dict, path: str | os.PathLike) -> None:
    """Write an ETHICS result as JSON (through a partial file renamed into place)."""
    from ktrain_recipes_tools.inference.output import write_text_file

    write_text_file(path, json.dumps(result, indent=2))


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


def results_table(ours: dict[str, list[dict]]):
    """Our runs beside the published leaderboard, in percent: the benchmark's figure per task (exact match where the
    task has groups, else accuracy), one row per entry of ``ours`` (its label: a model's runs, as
    ``committed_ethics_results`` gives them), then how each run was made (one row per task and model)."""
    import pandas as pd

    rows = {name: scores for name, scores in LEADERBOARD.items()}
    for label, results in ours.items():
        rows[label] = {r["task"]: 100 * r.get("exact_match", r["accuracy"]) for r in results}
    table = pd.DataFrame.from_dict(rows, orient="index")[list(TASKS)].round(1)
    keys = ("model", "task", "accuracy", "exact_match", "n", "n_train", "epochs", "lr", "seconds")
    made = [{k: r.get(k, r.get("settings", {}).get(k)) for k in keys} for results in ours.values() for r in results]
    details = pd.DataFrame(made).set_index(["model", "task"]) if made else None
    return table, details
