import pytest

from ktrain_recipes import RecipesError, report_table, score
from ktrain_recipes.inference.evaluate import evaluate_predictor, format_report
import json
import ktrain_recipes as kr
from ktrain_recipes_tools import cli


NAMES = ["sadness", "joy", "love"]


def test_score_known_values():
    m = score(["joy", "joy", "sadness", "love"], ["joy", "sadness", "sadness", "joy"], NAMES)
    assert m["accuracy"] == 0.5 and m["n"] == 4
    # f1: sadness 2/3, joy 1/2, love 0
    assert m["macro_f1"] == pytest.approx((2 / 3 + 0.5 + 0) / 3)
    assert m["confusion_matrix"] == [[1, 0, 0], [1, 1, 0], [0, 1, 0]]
    table = report_table(m)
    assert list(table.index[:3]) == NAMES and table.loc["joy", "support"] == 2
    assert "macro-F1 0.3889" in format_report(m)


def test_score_rejects_mismatch_and_unknown_labels():
    with pytest.raises(RecipesError):
        score(["joy"], [], NAMES)
    with pytest.raises(RecipesError, match="does not know"):
        evaluate_predictor(lambda t: t, ["x"], ["anger"], NAMES)


def test_evaluate_can_score_a_whole_file(tiny_predictor, emotion, tmp_path, capsys):
    texts, labels = kr.sample(emotion.texts("validation"), emotion.labels("validation"), 120, seed=2)
    path = tmp_path / "all.csv"
    import pandas as pd

    pd.DataFrame({"text": texts, "label": labels}).to_csv(path, index=False)
    out = tmp_path / "m.json"
    assert cli.main(["evaluate", "--predictor", str(tiny_predictor), "--data", str(path), "--split", "all",
                     "--json", str(out)]) == 0
    assert json.loads(out.read_text())["n"] == 120
    assert cli.main(["evaluate", "--predictor", str(tiny_predictor), "--data", str(path), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["n"] == 12  # the default still scores the held-out 10%
