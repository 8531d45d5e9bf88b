"""``RecipeConfig`` checks its settings where they are written."""

import pytest

from ktrain_recipes import RecipeConfig, RecipesError, cli


# RecipeConfig refuses what would fail later
@pytest.mark.parametrize("settings, message", [
    ({"batch_size": float("nan")}, "--batch-size must be a whole number"),
    ({"epochs": 1.5}, "--epochs must be a whole number"),
    ({"limit": float("inf")}, "--limit must be a whole number"),
    ({"seed": 2**32}, "--seed must be below 2\\*\\*32"),
    ({"seed": 2**64}, "--seed must be below 2\\*\\*32"),
    ({"maxlen": "banana"}, "--maxlen must be 'auto', 'max' or a whole number"),
    ({"labels": ["only"]}, "--labels must name at least two labels"),
    ({"labels": []}, "--labels must name at least two labels"),
    ({"lr": float("inf")}, "--lr must be a finite number"),
    ({"distribute": "mirrored", "devices": 1000}, "give at most"),
])
def test_recipe_settings_of_the_wrong_kind_are_refused_where_written(settings, message):
    with pytest.raises(RecipesError, match=message):
        RecipeConfig(**settings)


def test_a_seed_past_two_to_the_32_is_refused_on_the_command_line(capsys):
    assert cli.main(["train", "--out", "o", "--seed", "4294967296"]) == 1
    assert "--seed must be below 2**32" in capsys.readouterr().err
