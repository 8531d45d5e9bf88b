"""The notebooks' helpers (``ktrain_recipes.notebook``): where runs go on Colab."""

import pytest

from ktrain_recipes import RecipesError


# Google Drive keeps an absolute runs folder inside the Drive
def test_an_absolute_runs_folder_stays_in_the_drive():
    from ktrain_recipes.notebook import drive_path

    assert drive_path("/content/runs") == "/content/drive/MyDrive/ktrain-recipes/content/runs"
    assert drive_path("runs") == "/content/drive/MyDrive/ktrain-recipes/runs"


def test_runs_folder_never_climbs_out_of_drive():
    from ktrain_recipes.notebook import drive_path

    assert drive_path("runs") == "/content/drive/MyDrive/ktrain-recipes/runs"
    with pytest.raises(RecipesError, match="leads out of your Drive folder"):
        drive_path("../../..")


def test_the_runtime_table_names_the_cpu_whole():
    # issue 84: the CPU's model and features in one cell were cut by pandas at 50 characters ("avx5...")
    from ktrain_recipes.notebook import setup_notebook
    from ktrain_recipes.versions import cpu_features, cpu_model

    table = setup_notebook()
    assert table.loc["cpu", "runtime"] == cpu_model()
    assert table.loc["cpu_features", "runtime"] == (", ".join(cpu_features()) or "no AVX2")
    shown = repr(table) + table.to_html()
    assert "..." not in shown and cpu_model() in shown
