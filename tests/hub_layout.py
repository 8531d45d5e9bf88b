"""Test-only: a local folder laid out like the hub's EleutherAI/hendrycks_ethics parquet dataset, built from the
archive files (its dataset card: one configuration per task, train/test parquet files, these columns)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def write_hub_layout(archive: Path, out: Path, rows: int = 200) -> Path:
    """The first ``rows`` rows of each split of each task, in the hub's columns; commonsense's train split is
    made from its test file (the archive copy here has no cm_train.csv)."""
    def save(task: str, split: str, frame: pd.DataFrame) -> None:
        (out / task).mkdir(parents=True, exist_ok=True)
        frame.head(rows).to_parquet(out / task / f"{split}-00000-of-00001.parquet", index=False)

    for split in ("train", "test"):
        justice = pd.read_csv(archive / "justice" / f"justice_{split}.csv")
        save("justice", split, justice.assign(group_id=[i // 4 for i in range(len(justice))])
             [["group_id", "label", "scenario"]])
        deon = pd.read_csv(archive / "deontology" / f"deontology_{split}.csv")
        save("deontology", split, deon.assign(group_id=[i // 4 for i in range(len(deon))])
             [["group_id", "label", "scenario", "excuse"]])
        virtue = pd.read_csv(archive / "virtue" / f"virtue_{split}.csv")
        parts = virtue["scenario"].str.rpartition("[SEP]")
        save("virtue", split, pd.DataFrame({"group_id": [i // 5 for i in range(len(virtue))], "label": virtue["label"],
                                            "scenario": parts[0].str.strip(), "trait": parts[2].str.strip()}))
        util = pd.read_csv(archive / "utilitarianism" / f"util_{split}.csv", header=None, names=["a", "b"])
        save("utilitarianism", split, pd.DataFrame({"activity": util["a"], "baseline": util["b"], "rating": ""}))
    cm = pd.read_csv(archive / "commonsense" / "cm_test.csv")[["label", "input", "is_short", "edited"]]
    save("commonsense", "train", cm.iloc[: len(cm) // 2])
    save("commonsense", "test", cm.iloc[len(cm) // 2:])
    return out
