"""The one real fine-tune in the default suite: the offline MiniLM on a slice of emotion."""

import ktrain_recipes as kr


def test_minilm_fine_tune_beats_chance_by_a_wide_margin(emotion, tmp_path):
    config = kr.RecipeConfig("minilm", out=str(tmp_path / "minilm"), limit=480, eval_limit=400, epochs=4, lr=2e-4,
                             seed=42)
    metrics = kr.run_recipe(config, dataset=emotion)
    val = emotion.labels("validation")
    majority = val.count("joy") / len(val)  # ~0.35: always answering "joy"
    assert metrics["n"] == min(400, len(val))
    assert metrics["accuracy"] > majority + 0.2, metrics["accuracy"]
    assert kr.classify(kr.load_checked_predictor(tmp_path / "minilm"), ["i am so happy and excited today"]) == ["joy"]
