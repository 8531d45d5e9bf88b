"""ETHICS's groups: the rows that vary one scenario, kept on one side of a validation split (a model that saw one
variant in training would be scored on its twin), and the exact-match score over a group."""

from __future__ import annotations

import re
import numpy as np

from ktrain_recipes.config import check_fraction

def word_set(text) -> set[str]:
    text = " ".join(text) if isinstance(text, tuple) else text
    return set(text.lower().split())


def train_groups(task, texts: list) -> list:
    """A group id per training row of ``task`` (an ETHICS ``Task``: its name decides the rule): the rows of a
    group vary one scenario, so they stay on one side.

    deontology: the scenario (the pair's first text); virtue: the sentence before [SEP]; justice: runs of
    consecutive rows whose neighbours share at least 30% of their words (Jaccard), as its files keep the
    variants of a scenario together, joined where two runs share a sentence; utilitarianism: pairs whose
    scenarios open with the same sentence ("I built a sandcastle with my nephew." with and without a second
    sentence); commonsense: each row alone.
    """
    if task.name in ("deontology", "virtue"):
        return [t[0] if isinstance(t, tuple) else t.rpartition("[SEP]")[0].strip() for t in texts]
    if task.name == "justice":
        groups, current, previous = [], 0, None
        for text in texts:
            words = word_set(text)
            if previous is not None and len(words & previous) / max(len(words | previous), 1) < 0.3:
                current += 1
            groups.append(current)
            previous = words
        return merge_sharing(groups, [[t if isinstance(t, str) else tuple(t)] for t in texts])
    if task.name == "utilitarianism":
        return merge_sharing(list(range(len(texts))), [{opening(a), opening(b)} for a, b in texts])
    return list(range(len(texts)))


def opening(scenario: str) -> str:
    """A scenario's first sentence, lower-cased, without its final punctuation."""
    return re.split(r"(?<=[.!?])\s", scenario.strip(), maxsplit=1)[0].rstrip(".!? ").lower()


def merge_sharing(groups: list, keys: list) -> list:
    """One group for the groups whose rows share a key (a sentence): it would otherwise sit on both sides."""
    parent = list(range(max(groups, default=-1) + 1))

    def root(g: int) -> int:
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    first_group: dict = {}
    for row_keys, group in zip(keys, groups):
        for key in row_keys:
            if key in first_group:
                parent[root(group)] = root(first_group[key])
            else:
                first_group[key] = group
    return [root(g) for g in groups]


def group_split(texts: list, labels: list, groups: list, fraction: float, seed: int):
    """Hold out ``fraction`` of the groups (never part of one); return (train, validation) as (texts, labels,
    groups), each in file order."""
    check_fraction(fraction)
    distinct = list(dict.fromkeys(groups))
    rng = np.random.default_rng(seed)
    held = set(rng.permutation(len(distinct))[: max(1, round(fraction * len(distinct)))].tolist())
    held = {distinct[i] for i in held}
    sides = ([], [], []), ([], [], [])
    for text, label, group in zip(texts, labels, groups):
        side = sides[group in held]
        side[0].append(text)
        side[1].append(label)
        side[2].append(group)
    return sides


def group_exact_match(correct: list[bool], groups: list) -> float:
    """The share of groups whose rows are all correct (groups of any size, given by id)."""
    right: dict = {}
    for ok, group in zip(correct, groups):
        right[group] = right.get(group, True) and bool(ok)
    return float(np.mean(list(right.values())))
