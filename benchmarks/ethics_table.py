"""The ETHICS table for docs/results.md, from the JSON files benchmarks/ethics_paper_budget.sh wrote: per task,
every run's validation curve, the rate and epoch validation picks, and that choice's test figure beside
BERT-base's. Choices use validation only; the test figure of an epoch is shown only where validation chose it.
A second table, for reference only, keeps the best test figure of any run and epoch: the paper's protocol, which
chooses on test, so it bounds what any choice among our runs could have reported. Both read seed 42's runs
(``-s<seed>`` files repeat a run with another seed); a third gives each seed's test figure and their spread.

    python benchmarks/ethics_table.py [RESULTS_DIR [PREFIX]]      # default: docs/ethics
    python benchmarks/ethics_table.py docs/mpnet ethics-          # MPNet-base's runs
"""

from __future__ import annotations

import sys
from pathlib import Path

from ktrain_recipes_tools.studies.ethics import LEADERBOARD, load_runs, seed_figures, validation_choice
from ktrain_recipes_tools.studies.ethics import figure_keys as key_of

TASKS = ("justice", "deontology", "virtue", "utilitarianism")


def table(folder: Path, prefix: str = "") -> str:
    lines = ["| task | runs (lr: validation after each epoch) | chosen on validation | test | BERT-base | training |",
             "|---|---|---|---|---|---|"]
    for task in TASKS:
        runs = load_runs(folder, task, prefix)
        if not runs:
            lines.append(f"| {task} | not run yet | | | {LEADERBOARD['BERT-base'][task]} | |")
            continue
        val, test = key_of(task)
        curves = "; ".join(f"{r['settings']['lr']:g}: " + " / ".join(f"{100 * e[val]:.1f}" for e in r["val_per_epoch"])
                           for r in runs)
        run, epoch = validation_choice(runs, task)
        minutes = sum(r["train_seconds"] for r in runs) / 60
        lines.append(f"| {task} | {curves} | lr {run['settings']['lr']:g}, epoch {epoch['epoch']} "
                     f"({100 * epoch[val]:.1f}) | **{100 * epoch[test]:.1f}** | {LEADERBOARD['BERT-base'][task]} | "
                     f"{minutes:.0f} min for {len(runs)} run(s) |")
    return "\n".join(lines)


def chosen_on_test(folder: Path, prefix: str = "") -> str:
    """Per task, the best test figure of any run and epoch (the paper's protocol), beside BERT-base's."""
    lines = ["| task | best test figure of any run and epoch (chosen on test) | BERT-base |", "|---|---|---|"]
    for task in TASKS:
        runs = load_runs(folder, task, prefix)
        if not runs:
            continue
        _, test = key_of(task)
        run, epoch = max(((r, e) for r in runs for e in r["val_per_epoch"]), key=lambda pair: pair[1][test])
        lines.append(f"| {task} | {100 * epoch[test]:.1f} (lr {run['settings']['lr']:g}, epoch {epoch['epoch']}) | "
                     f"{LEADERBOARD['BERT-base'][task]} |")
    return "\n".join(lines)


def seeds_table(folder: Path, prefix: str = "") -> str:
    """Per task run with more than one seed: each seed's test figure (as validation chose its epoch), their mean
    and spread (highest minus lowest), in points, beside BERT-base's."""
    lines = ["| task | test figure per seed (accuracy) | mean | spread | BERT-base |", "|---|---|---|---|---|"]
    for task in TASKS:
        seeds = seed_figures(folder, task, prefix)
        if len(seeds) < 2:
            continue
        figures = [100 * f["figure"] for f in seeds.values()]
        each = "; ".join(f"seed {seed}: {100 * f['figure']:.1f} ({100 * f['accuracy']:.1f})"
                         for seed, f in seeds.items())
        lines.append(f"| {task} | {each} | {sum(figures) / len(figures):.1f} | {max(figures) - min(figures):.1f} | "
                     f"{LEADERBOARD['BERT-base'][task]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/ethics")
    prefix = sys.argv[2] if len(sys.argv) > 2 else ""  # docs/mpnet names its runs ethics-<task>-lr<rate>.json
    print(table(folder, prefix))
    print()
    print(chosen_on_test(folder, prefix))
    print()
    print(seeds_table(folder, prefix))
