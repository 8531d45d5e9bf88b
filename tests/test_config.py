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


@pytest.mark.parametrize("make, words", [
    (lambda kr: kr.RecipeConfig(overwrite="False"), "--overwrite must be True or False"),
    (lambda kr: kr.RecipeConfig(resume="no"), "--resume must be True or False"),
    (lambda kr: kr.RecipeConfig(bucketing=1), "--bucketing must be True or False"),
    (lambda kr: kr.RecipeConfig(labels=iter(["a", "b"])), "must be a list"),
    (lambda kr: kr.RecipeConfig(labels=[b"a", b"b"]), "must be names"),
    (lambda kr: kr.RecipeConfig(labels=["a", None]), "must be names"),
    (lambda kr: kr.RecipeConfig(precision="half"), "--precision must be one of"),
])
def test_every_setting_checks_its_type_booleans_included(make, words):
    import ktrain_recipes as kr

    with pytest.raises(kr.RecipesError, match=words) as error:
        make(kr)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("field, value", [("cors_origin", 123), ("api_key_file", 5), ("ray_address", 7)])
def test_service_settings_refuse_a_number_where_a_path_or_origin_belongs(field, value):
    from ktrain_recipes.errors import RecipesError
    from ktrain_recipes.service.settings import ServiceSettings

    with pytest.raises(RecipesError, match=f"--{field.replace('_', '-')} must be a string"):
        ServiceSettings("some/folder", **{field: value})


def test_augment_refuses_a_negative_seed_in_one_line():
    import ktrain_recipes as kr

    with pytest.raises(kr.RecipesError, match="seed must be a whole number"):
        kr.augment(["i feel fine"], copies=1, seed=-1)
