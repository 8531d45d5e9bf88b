"""``ktrain-recipes models``: list the model registry."""

HELP = "list the model registry"


def add_arguments(p) -> None:
    pass


def uses_tensorflow(args) -> bool:
    return False


def run(args) -> None:
    from ktrain_recipes.models import REGISTRY

    print(f"{'name':<11}{'model':<40}{'params':>7}{'batch':>7}{'lr':>9}{'epochs':>8}  note")
    for s in REGISTRY.values():  # in table order
        print(f"{s.name:<11}{s.model_id:<40}{s.params:>7}{s.batch_size:>7}{s.lr:>9.0e}{s.epochs:>8}  {s.note}")
