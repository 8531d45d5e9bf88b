"""Test-only: predictors made from another one, and saves into a folder the way our saves do them."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import ktrain_recipes as kr
from ktrain_recipes.onnx_inference import export_onnx
from ktrain_recipes.saving import MANIFEST, restage, swap_into_place, write_json_atomic


def reversed_twin(source: Path, out: Path) -> Path:
    """The same classifier with its labels in reverse order and its output rows permuted to match: it gives
    the same label names for every text, so a load mixing one's labels with the other's weights shows."""
    predictor = kr.load_checked_predictor(source)
    layer = predictor.model.classifier
    kernel, bias = layer.get_weights()
    layer.set_weights([kernel[:, ::-1], bias[::-1]])
    predictor.preproc.c = list(reversed(predictor.preproc.c))
    predictor.preproc.ytransform.c = predictor.c = predictor.preproc.c
    kr.save_checked_predictor(predictor, out, {"model_id": "twin"})
    export_onnx(out)
    return out


def save_copy(source: Path, out: Path) -> None:
    """Swap ``source``'s files into ``out`` with a fresh manifest (new save_id), as a save does."""
    stage = restage(source)
    manifest = json.loads((stage / MANIFEST).read_text())
    write_json_atomic(stage / MANIFEST, {**manifest, "save_id": uuid.uuid4().hex})
    swap_into_place(stage, out)
