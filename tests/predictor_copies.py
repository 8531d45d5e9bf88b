"""Test-only: predictors made from another one, and saves into a folder the way our saves do them."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import ktrain_recipes as kr
from ktrain_recipes.inference.onnx_inference import export_onnx
from ktrain_recipes.predictor.manifest import MANIFEST, write_json_atomic
from ktrain_recipes.predictor.swaps import restage, swap_into_place


class Payload:
    """Unpickling this writes a marker file: proof that code from the folder ran."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "pwned"))


def rewrite_manifest(folder: Path, drop: tuple[str, ...] = ()) -> None:
    """Recompute a folder's manifest over its files as they are now, as the author of an edited folder would
    (``drop``: leave those keys out, as a save by an older version would have)."""
    from ktrain_recipes.predictor.manifest import write_manifest

    manifest = json.loads((folder / MANIFEST).read_text())
    extra = {k: manifest[k] for k in ("kind", "pairs", "onnx_inputs", "segment_ids") if k in manifest and k not in drop}
    write_manifest(folder, manifest["label_names"], manifest["maxlen"], {"model_id": manifest["model_id"]}, **extra)


def plant_payload(source: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of ``source`` whose tf_model.preproc is a pickle that writes a marker, with the manifest recomputed
    as its author would; returns (folder, marker)."""
    import pickle
    import shutil


    folder, marker = tmp_path / "planted", tmp_path / "marker"
    shutil.copytree(source, folder)
    (folder / "tf_model.preproc").write_bytes(pickle.dumps(Payload(str(marker))))
    rewrite_manifest(folder)
    return folder, marker


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
