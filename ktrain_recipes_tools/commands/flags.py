"""One flag builder for every command: a flag per field of a settings dataclass (as ``run_glue.py`` builds its
parser with ``HfArgumentParser``), so a default or a help text is written once, on the field."""

from __future__ import annotations

import argparse
import dataclasses



def flag_type(parse):
    """Wrap a field's parser so that argparse prints its ValueError as a usage error."""
    def convert(value: str):
        try:
            return parse(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def _recorded(settings_class) -> str:
    return f"{settings_class.__name__}_flags"


def add_flags(parser: argparse.ArgumentParser, settings_class, groups: tuple[type, ...] | None = None,
              exclude: tuple[str, ...] = (), required: tuple[str, ...] = (), **defaults) -> None:
    """Add one flag per field of ``settings_class`` (``--batch-size`` for ``batch_size``), with its help.

    Args:
      groups: only the fields of these settings groups (``config.GROUPS``: the groups RecipeConfig is made of).
      exclude: fields left out (the command has a flag of that name that means something else).
      required: fields whose flag must be given although the field has a default (train's ``--out``).
      defaults: a command's own default for a field (bench trains on 400 texts).
    A field without a default is a required flag; a bool field is a switch (``--no-NAME`` when it defaults to
    True); other fields are parsed by ``metadata["parse"]``, else by the type of their default.
    """
    names = []
    chosen = None if groups is None else {f.name for group in groups for f in dataclasses.fields(group)}
    for f in dataclasses.fields(settings_class):
        if f.name in exclude or (chosen is not None and f.name not in chosen):
            continue
        names.append(f.name)
        flag = "--" + f.name.replace("_", "-")
        default = defaults.get(f.name, f.default)
        help_text = argparse.SUPPRESS if f.metadata.get("hidden") else f.metadata.get("help")
        if isinstance(default, bool):
            if default:
                parser.add_argument("--no-" + flag[2:], dest=f.name, action="store_false", help=help_text)
            else:
                parser.add_argument(flag, dest=f.name, action="store_true", help=help_text)
            continue
        parse = f.metadata.get("parse") or (type(default) if default not in (None, dataclasses.MISSING) else None)
        missing = default is dataclasses.MISSING
        parser.add_argument(flag, dest=f.name, type=flag_type(parse) if parse else None,
                            default=None if missing else default, required=missing or f.name in required,
                            help=help_text)
    parser.set_defaults(**{_recorded(settings_class): tuple(names)})


def settings_from_args(args: argparse.Namespace, settings_class, **fixed):
    """Build ``settings_class`` from the flags ``add_flags`` made for it and ``fixed`` values (a command's flag
    that means something else, like ethics' ``--data``); other fields keep their defaults."""
    return settings_class(**{name: getattr(args, name) for name in getattr(args, _recorded(settings_class))},
                          **fixed)


def add_loading_flags(parser: argparse.ArgumentParser, int8: bool = True) -> None:
    """The flags that say how a saved predictor is loaded (the int8 path, versions, the pickle)."""
    if int8:
        parser.add_argument("--int8", dest="int8", action="store_true",
                            help="use the exported int8 ONNX model (see export): no TensorFlow, no pickle")
    parser.add_argument("--strict", action="store_true", help="refuse a predictor saved under other package versions")
    parser.add_argument("--unpickle-preproc", action="store_true",
                        help="load ktrain's tf_model.preproc pickle (runs code from the folder: only for folders you "
                             "trust) instead of rebuilding the preprocessor from the folder's JSON and tokenizer files")


def check_writable_file(path: str, inputs: tuple = (), flag: str = "--json") -> None:
    """Refuse, before the work, an output file that cannot be written or whose writing would destroy an input
    (``output.check_output_file``)."""
    from ktrain_recipes_tools.inference.output import check_output_file

    check_output_file(path, inputs, flag)


class ShowDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """Show a flag's default after its help, unless the help already says it or there is none to show."""

    def _get_help_string(self, action):
        if action.default in (None, False, True, argparse.SUPPRESS) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)
