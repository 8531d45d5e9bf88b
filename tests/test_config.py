"""``RecipeConfig`` checks its settings where they are written."""

import re

import pytest

import ktrain_recipes as kr
import ktrain_recipes_tools as krt
from ktrain_recipes import RecipeConfig, RecipesError
from ktrain_recipes_tools import cli


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
    from ktrain_recipes_tools.service.settings import ServiceSettings

    with pytest.raises(RecipesError, match=f"--{field.replace('_', '-')} must be a string"):
        ServiceSettings("some/folder", **{field: value})


def test_augment_refuses_a_negative_seed_in_one_line():
    import ktrain_recipes as kr

    with pytest.raises(kr.RecipesError, match="seed must be a whole number"):
        krt.augment(["i feel fine"], copies=1, seed=-1)


@pytest.mark.parametrize("value, kwargs, message", [
    (True, {}, "n must be a whole number of at least 1, got True"),
    (2.0, {}, "n must be a whole number of at least 1, got 2.0"),
    (0, {"least": 1, "most": 8}, "n must be a whole number from 1 to 8, got 0"),
    (9, {"least": 1, "most": 8}, "n must be a whole number from 1 to 8, got 9"),
    ("3", {"optional": True}, "n must be None or a whole number of at least 1, got '3'"),
    (-1, {"least": 0}, "n must be a whole number of at least 0, got -1"),
])
def test_one_rule_for_a_whole_number_refuses_bools_floats_and_out_of_range(value, kwargs, message):
    from ktrain_recipes.config import check_whole

    with pytest.raises(kr.RecipesError, match=f"^{re.escape(message)}$"):
        check_whole(value, "n", **kwargs)
    check_whole(None, "n", optional=True)
    check_whole(8, "n", 1, 8)


@pytest.mark.parametrize("call, message", [
    (lambda: krt.augment(["a b"], 1, window=True), "window must be a whole number of at least 1, got True"),
    (lambda: krt.CostSettings(steps=1.0), "CostSettings.steps must be a whole number of at least 1, got 1.0"),
    (lambda: krt.DistillSettings(teacher="t", layers=True), "--layers must be a whole number of at least 1, got True"),
])
def test_every_count_is_refused_by_the_one_rule(call, message):
    """A bool passed for a count was taken as 1 by the hand-written checks of augment and the distillation settings."""
    with pytest.raises(kr.RecipesError, match=re.escape(message)):
        call()


def test_each_settings_group_checks_its_own_fields_and_a_config_is_its_groups():
    """RecipeConfig was one class of 29 fields that every command took whole; its groups are now values of their
    own, each checked where it is written, and a command takes the groups it reads (evaluate: DataSettings)."""
    from ktrain_recipes.config import DataSettings, ModelSettings, OutputSettings, SampleSettings
    from ktrain_recipes.config import TrainingSettings

    with pytest.raises(RecipesError, match="--labels must name each label once"):
        DataSettings(labels=["a", "a"])
    with pytest.raises(RecipesError, match="--seed must be below 2\\*\\*32"):
        SampleSettings(seed=2**32)
    with pytest.raises(RecipesError, match="--lr must be a finite number above 0"):
        TrainingSettings(lr=float("nan"))
    with pytest.raises(RecipesError, match="--overwrite must be True or False"):
        OutputSettings(overwrite="False")
    with pytest.raises(RecipesError, match="--model must be a non-empty name"):
        ModelSettings(model=" ")
    config = RecipeConfig(model="bert", data="d", lr=1e-4, out="o")
    assert config.group(DataSettings) == DataSettings(data="d")
    assert config.group(TrainingSettings).lr == 1e-4 and config.group(OutputSettings) == OutputSettings(out="o")
    with pytest.raises(RecipesError, match="--labels must name each label once"):
        RecipeConfig(labels=["a", "a"])  # the whole config runs every group's checks


@pytest.mark.parametrize("make, words", [
    (lambda: RecipeConfig(weight_decay=None), "--weight-decay must be a number, got None"),  # W83: a YAML null
    (lambda: krt.DistillSettings(teacher=5), "--teacher must be a predictor folder"),
    (lambda: krt.DistillSettings(teacher="t", student=5), "--student must be a path or left out"),
    (lambda: krt.DistillSettings(teacher="t", logits_cache=5), "--logits-cache must be a path or left out"),
    (lambda: krt.DistillSettings(teacher="t", alpha=True), "--alpha must be a number, got True"),
    (lambda: krt.DistillSettings(teacher="t", temperature=True), "--temperature must be a number, got True"),
    (lambda: krt.augment([5], 1), "text 0 is int 5, not a string or a pair of strings"),
    (lambda: krt.augment([("a", None)], 1), "text 0 is tuple"),
])
def test_settings_of_the_wrong_kind_are_refused_in_one_line_not_a_traceback_later(make, words):
    """Battery v6 W83, W85, W86: each was accepted and failed later with a TypeError or AttributeError, or (alpha
    True) trained on the labels alone."""
    with pytest.raises(kr.RecipesError, match=re.escape(words)) as error:
        make()
    assert "\n" not in str(error.value)


def test_a_service_refuses_a_number_for_its_predictor():
    from ktrain_recipes_tools.service.settings import ServiceSettings

    with pytest.raises(RecipesError, match="--predictor must be a predictor folder"):
        ServiceSettings(predictor=5)


def test_numpy_whole_numbers_are_whole_numbers_and_are_written_as_plain_ones():
    """W84: a notebook's np.arange grid gives np.int64(2): taken as the 2 it is, and recorded as JSON's 2."""
    import dataclasses
    import json

    import numpy as np

    from ktrain_recipes.config import check_whole
    from ktrain_recipes_tools.service.settings import ServiceSettings

    config = RecipeConfig(epochs=np.int64(2), batch_size=np.int32(8), seed=np.int64(3), lr=np.float64(1e-4),
                          maxlen=np.int64(64))
    assert json.loads(json.dumps(dataclasses.asdict(config)))["epochs"] == 2 and type(config.maxlen) is int
    assert type(krt.DistillSettings(teacher="t", layers=np.int64(2)).layers) is int
    assert type(ServiceSettings("p", max_batch=np.int64(8)).max_batch) is int
    check_whole(np.int64(5), "n", 1, 8)
    assert krt.augment(["a b c"], 1, seed=np.int64(1)) == krt.augment(["a b c"], 1, seed=1)
    with pytest.raises(RecipesError, match="got np.True_|got True"):
        check_whole(np.bool_(True), "n")
