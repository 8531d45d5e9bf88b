"""A change judged against the seed spread: runs with and without it on the same seeds, paired seed by seed.

Reads ``<prefix><way>-s<seed>.json`` (the metrics.json a run wrote, as benchmarks/mpnet_series.sh keeps them) for two
ways, pairs them by seed, and prints each seed's validation accuracy and difference, then the mean difference in
points with its 95% interval (Student's t over the seeds, as notebook 05 teaches) and whether the interval excludes
zero and the target.

    python benchmarks/seed_pairs.py docs/mpnet student- augment labels [--target 0.5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path


def pairs(folder: Path, prefix: str, change: str, base: str) -> dict[int, tuple[float, float]]:
    """Per seed run both ways: (accuracy with the change, accuracy of its twin)."""
    found: dict[str, dict[int, float]] = {change: {}, base: {}}
    for path in sorted(folder.glob(f"{prefix}*-s*.json")):
        match = re.fullmatch(re.escape(prefix) + r"(.+)-s(\d+)", path.stem)
        if match and match[1] in found:
            found[match[1]][int(match[2])] = json.loads(path.read_text())["accuracy"]
    return {seed: (found[change][seed], found[base][seed]) for seed in sorted(found[change].keys() & found[base])}


def paired_interval(differences: list[float], confidence: float = 0.95) -> dict:
    """Mean of paired differences, its t interval (n - 1 degrees of freedom) and the paired t-test's p-value."""
    import numpy as np
    from scipy import stats

    d = np.asarray(differences, dtype=float)
    if len(d) < 2:
        raise ValueError("a paired interval needs at least two seeds run both ways")
    low, high = stats.t.interval(confidence, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    return {"n": len(d), "mean": float(d.mean()), "low": float(low), "high": float(high),
            "p": float(stats.ttest_1samp(d, 0).pvalue)}


def summary(folder: Path, prefix: str, change: str, base: str, target: float) -> dict:
    """The pairs, the mean difference in points with its interval, and the two verdicts, as a record."""
    runs = pairs(folder, prefix, change, base)
    result = paired_interval([100 * (c - b) for c, b in runs.values()])
    return {"change": change, "base": base, "target_points": target,
            "pairs": {str(seed): {base: b, change: c, "difference_points": round(100 * (c - b), 4)}
                      for seed, (c, b) in runs.items()},
            **result, "excludes_zero": result["low"] > 0 or result["high"] < 0, "target_met": result["low"] >= target}


def report(folder: Path, prefix: str, change: str, base: str, target: float) -> str:
    return format_summary(summary(folder, prefix, change, base, target))


def format_summary(found: dict) -> str:
    """``summary``'s record as the table and the one-line verdict the pages show."""
    base, change, target = found["base"], found["change"], found["target_points"]
    lines = [f"| seed | {base} | {change} | difference (points) |", "|---|---|---|---|"]
    lines += [f"| {seed} | {run[base]:.4f} | {run[change]:.4f} | {run['difference_points']:+.2f} |"
              for seed, run in found["pairs"].items()]
    verdict = ("excludes zero" if found["excludes_zero"] else "holds zero") + \
        (f", and lies above the {target:+.1f}-point target: met" if found["target_met"] else
         f"; the target ({target:+.1f} points, supported by the interval) is not met")
    lines += ["", f"{found['n']} seeds: mean {found['mean']:+.2f} points, 95% interval {found['low']:+.2f} to "
                  f"{found['high']:+.2f} (paired t-test p = {found['p']:.2f}): the interval {verdict}"]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("prefix")
    parser.add_argument("change")
    parser.add_argument("base")
    parser.add_argument("--target", type=float, default=0.5, help="the gain in points the interval must support")
    parser.add_argument("--json", type=Path, help="also write the pairs and the interval to this file (the record "
                                                    "the pages quote)")
    args = parser.parse_args()
    found = summary(args.folder, args.prefix, args.change, args.base, args.target)
    print(format_summary(found))
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")
