"""IPython start-up file for the notebooks' smoke runs in `make test` and `make colab-check` (never for learners).

The Makefile copies this file into a throw-away IPython profile's startup folder and points $IPYTHONDIR there, so
the kernels nbval starts run it before the first cell. After every cell it replaces the parameter cell's settings
(``config``, ``teacher_config``, ``settings``, ``SMALL_RUN``: dataclasses; ``MODELS``: row name -> model) with the
overrides in $KTRAIN_RECIPES_SMOKE, written by tests/tiny_models.py: tiny random models on a slice, so that each
notebook runs in seconds. The notebooks themselves carry no CI line.

Start-up files run in the notebook's own namespace, so everything here lives inside one function that is deleted
at the end: a name left behind could hide a missing import from the smoke run.
"""


def _install_smoke_overrides() -> None:
    import dataclasses
    import json
    import os

    path = os.environ.get("KTRAIN_RECIPES_SMOKE")
    try:
        shell = get_ipython()  # noqa: F821  (IPython's builtin in a kernel)
    except NameError:
        return
    if not path:
        return
    names = ("config", "teacher_config", "settings", "SMALL_RUN", "MODELS")
    done: set[int] = set()  # ids of the values made here, so that each is overridden once

    def smoke_value(value, smoke: dict):
        models = smoke.get("models", {})
        if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
            return {name: models.get(model, model) for name, model in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name for f in dataclasses.fields(value)}
            changes = {k: v for k, v in smoke.get("settings", {}).items() if k in fields}
            for key in ("model", "student"):  # RecipeConfig's model, DistillSettings' student checkpoint
                if key in fields and isinstance(getattr(value, key), str):
                    changes[key] = models.get(getattr(value, key), getattr(value, key))
            return dataclasses.replace(value, **changes)
        return None

    def override(result=None) -> None:
        smoke = json.loads(open(path).read())
        for name in names:
            value = shell.user_ns.get(name)
            if value is None or id(value) in done:
                continue
            new = smoke_value(value, smoke)
            if new is not None:
                shell.user_ns[name] = new
                done.add(id(new))
                print(f"CI smoke run: {name} now uses tiny random models on a slice; the figures below are not "
                      "results")

    shell.events.register("post_run_cell", override)


_install_smoke_overrides()
del _install_smoke_overrides
