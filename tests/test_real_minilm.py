"""The one real fine-tune in the default suite: the offline MiniLM on the emotion slice.

CI runs `make demo` (the learner's first command: MiniLM on the shipped slice) before the tests and names its
predictor in $KTRAIN_RECIPES_DEMO_OUT: the test then checks that real run instead of training MiniLM a second time.
Without it (a developer's `make test`), the test fine-tunes a smaller run of its own.
"""

import json
import os
from pathlib import Path

import pytest

import ktrain_recipes as kr
from ktrain_recipes.models import REGISTRY


@pytest.mark.slow
def test_minilm_fine_tune_beats_chance_by_a_wide_margin(emotion, tmp_path):
    demo = os.environ.get("KTRAIN_RECIPES_DEMO_OUT")
    if demo:
        folder = Path(demo)
        metrics = json.loads((folder / "metrics.json").read_text())
        assert metrics["model_id"] == REGISTRY["minilm"].model_id and metrics["optimizer_steps"] >= 500
    else:
        folder = tmp_path / "minilm"
        # batch 8 as make demo: 240 weight updates (at batch 32, 60 gave a model that read joy as fear)
        config = kr.RecipeConfig("minilm", out=str(folder), limit=480, eval_limit=400, epochs=4, lr=1e-4, seed=42,
                                 batch_size=8)
        metrics = kr.run_recipe(config, dataset=emotion)
    val = emotion.labels("validation")
    majority = val.count("joy") / len(val)  # ~0.35: always answering "joy"
    assert metrics["n"] == min(400, len(val))
    assert metrics["accuracy"] > majority + 0.2, metrics["accuracy"]
    assert kr.classify(kr.load_checked_predictor(folder), ["i am so happy and excited today"]) == ["joy"]
