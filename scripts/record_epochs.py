"""Record how long a run's finished epochs took, from its checkpoint, with the CPU they ran on: the figure the pages
quote for a run too long to finish in one sitting (MPNet-base on all of emotion takes hours on an AVX2-only CPU).

    python scripts/record_epochs.py runs/.base-size-cli.resume docs/mpnet/epochs-avx2.json "what ran, and beside what"

Run it on the machine that trained: the CPU is read from this machine. The record is written once: an existing file
is replaced only with --replace.
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

from ktrain_recipes.versions import cpu_features, cpu_model


def epochs_record(checkpoint: Path, about: str) -> dict:
    """The checkpoint's finished epochs (their training seconds, each one's validation accuracy), the run's settings
    and this CPU."""
    path = checkpoint / "run.json"
    if not path.is_file():
        raise SystemExit(f"{checkpoint} is not a run's checkpoint (no run.json): name the .OUT.resume folder")
    run = json.loads(path.read_text())
    done = run.get("epochs_completed", 0)
    if not done:
        raise SystemExit(f"{checkpoint} holds no finished epoch yet: let the run finish one first")
    seconds = float(run["train_seconds"])
    return {"about": about, "recorded": date.today().isoformat(), "cpu": cpu_model(), "cpu_features": cpu_features(),
            "settings": run["identity"], "epochs_completed": done, "epochs": run["identity"].get("epochs"),
            "train_seconds": round(seconds, 1), "seconds_per_epoch": round(seconds / done, 1),
            "val_accuracy": [round(float(a), 4) for a in run["history"].get("val_accuracy", [])[:done]]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path, help="the run's checkpoint folder (.OUT.resume beside --out OUT)")
    parser.add_argument("record", type=Path, help="the JSON record to write")
    parser.add_argument("about", help="what ran, and whether other work shared the cores")
    parser.add_argument("--replace", action="store_true", help="replace an existing record")
    args = parser.parse_args(argv)
    if args.record.exists() and not args.replace:
        raise SystemExit(f"{args.record} exists: a figure is written once (--replace to write it again)")
    args.record.write_text(json.dumps(epochs_record(args.checkpoint, args.about), indent=2) + "\n")
    print(f"recorded {args.record}")


if __name__ == "__main__":
    main()
