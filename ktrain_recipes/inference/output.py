"""Write predictions for people (text) and for tools (JSON, CSV), to the screen or a file."""

from __future__ import annotations

import csv
import io
import json
import sys

import numpy as np

from ktrain_recipes.inference.text_rules import escape


def format_predictions(texts: list[str], probs: np.ndarray, label_names: list[str], fmt: str = "text",
                       proba: bool = False, table=None) -> str:
    """Return predictions as text (label TAB [probabilities TAB] text), JSON records or CSV.

    Args:
      texts: the texts.  probs: texts x labels probabilities.  label_names: the predictor's labels.
      fmt: 'text', 'json' or 'csv'.  proba: include one probability per label.
      table: the input CSV as a DataFrame; its columns are kept in CSV and JSON output.
    """
    labels = [label_names[i] for i in probs.argmax(axis=1)]
    records = prediction_records(texts, probs, label_names, proba or fmt == "csv", table)
    if fmt == "json":
        return json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
        return buffer.getvalue()
    lines = []
    for i, (text, label) in enumerate(zip(texts, labels)):
        probs_part = "\t".join(f"{n}={p:.3f}" for n, p in zip(label_names, probs[i])) + "\t" if proba else ""
        shown = " ||| ".join(text) if isinstance(text, tuple) else text
        lines.append(f"{label}\t{probs_part}{escape(shown)}")
    return "\n".join(lines) + "\n"


def prediction_records(texts: list, probs: np.ndarray, label_names: list[str], proba: bool, table=None) -> list[dict]:
    """One dict per text: the input's columns (or text, and pair), the label, and with ``proba`` p_<label>."""
    records = []
    for i, text in enumerate(texts):
        row = dict(table.iloc[i]) if table is not None else {"text": text}
        if isinstance(text, tuple) and table is None:
            row = {"text": text[0], "pair": text[1]}
        row["label"] = label_names[int(probs[i].argmax())]
        if proba:
            row.update({f"p_{n}": round(float(p), 6) for n, p in zip(label_names, probs[i])})
        records.append(row)
    return records


def write_predictions(texts, probs, label_names, fmt="text", proba=False, output=None, table=None) -> None:
    """Format predictions (see ``format_predictions``) and write them to ``output`` or stdout."""
    content = format_predictions(texts, probs, list(label_names), fmt, proba, table)
    if output:
        with open(output, "w", encoding="utf-8", newline="") as f:
            f.write(content)
    else:
        sys.stdout.write(content)
