"""The command line's copy of the model registry and of the data set names.

``topiczoo`` parses and checks its arguments before it imports JAX, so that a typo costs no
imports. The models (``topiczoo.models.registry``) import JAX, so the command line reads what it
needs of them from a table instead: every model's name, summary, label kinds, driver, samplers
and options with their defaults and types, and the data set names. The table lives in
``topiczoo/_registry_table.py``, written by this module from the registry itself::

    python -m topiczoo.registry_table

Nothing in it is written by hand: a new model or option reaches ``topiczoo fit --help`` when the
file is rewritten, and ``tests/test_registry_table.py`` fails (naming this command) while the
file differs from what the registry gives.
"""

from __future__ import annotations

import inspect
import pprint
import sys
from pathlib import Path

#: The option types the command line parses (``--flag/--no-flag`` for ``bool``).
KINDS = ("bool", "int", "float", "str")

#: The generated file, beside this module.
TABLE_FILE = Path(__file__).with_name("_registry_table.py")


def load() -> dict:
    """The stored table (``topiczoo/_registry_table.py``); imports no model."""
    from topiczoo._registry_table import TABLE

    return TABLE


def build(registry=None, default_model: str | None = None, datasets=None) -> dict:
    """The table of ``registry`` (default: ``topiczoo.models.registry.REGISTRY``, which imports
    the models), ``default_model`` (default ``DEFAULT_MODEL``) and the data set names
    ``datasets`` (default ``topiczoo.datasets.DATASETS``).

    Returns ``{"default_model", "datasets", "option_kinds", "models"}``: ``option_kinds`` maps
    every option of every model, in the order they first appear, to one of :data:`KINDS`;
    ``models`` maps each name to ``{"summary", "tasks", "driver", "topic_model", "samplers",
    "options"}``, where ``options`` is the entry's ``options()`` (name: default) and
    ``topic_model`` the name of the model the entry builds (another for a two-step entry).
    Raises ``ValueError`` for an option whose default is not a plain value, or whose type the
    command line cannot parse."""
    if registry is None or default_model is None:
        from topiczoo.models import registry as module

        registry = module.REGISTRY if registry is None else registry
        default_model = module.DEFAULT_MODEL if default_model is None else default_model
    if datasets is None:
        from topiczoo.datasets import DATASETS as datasets
    kinds, models = {}, {}
    for name, entry in registry.items():
        options = {option: _plain(default, name, option)
                   for option, default in entry.options().items()}
        parameters = inspect.signature(entry.factory).parameters
        for option, default in options.items():
            kind = _kind(parameters.get(option), default, name, option)
            kinds[option] = _merge(kinds.get(option), kind, option)
        model = entry.build(2)
        models[name] = {"summary": entry.summary, "tasks": tuple(entry.tasks),
                        "driver": entry.driver, "topic_model": model.name,
                        "samplers": tuple(model.samplers), "options": options}
    if default_model not in models:
        raise ValueError(f"the default model {default_model!r} is not in the registry")
    return {"default_model": default_model, "datasets": tuple(datasets),
            "option_kinds": kinds, "models": models}


def _plain(value, model: str, option: str):
    """``value`` as a plain Python value (a numpy scalar's ``item()``); a ValueError for one the
    command line cannot show or parse."""
    if hasattr(value, "item") and not isinstance(value, (bool, int, float, str)):
        value = value.item()
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise ValueError(f"{model}: the default of option {option!r} is {value!r}, not None, a "
                         f"bool, a number or a string: the command line cannot offer it")
    return value


def _kind(parameter, default, model: str, option: str) -> str:
    """The type of an option: its annotation (``float``, ``float | None``, ...) or, without
    one, its default's type."""
    names = set()
    if parameter is not None and parameter.annotation is not inspect.Parameter.empty:
        annotation = parameter.annotation
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__",
                                                                      str(annotation))
        names = {part.strip() for part in text.split("|")} - {"None", "NoneType"}
    if len(names) == 1 and next(iter(names)) in KINDS:
        return next(iter(names))
    if default is not None and type(default).__name__ in KINDS:
        return type(default).__name__
    raise ValueError(f"{model}: cannot tell the type of option {option!r} (annotation "
                     f"{getattr(parameter, 'annotation', None)!r}, default {default!r}); "
                     f"annotate it as one of {', '.join(KINDS)}")


def _merge(seen: str | None, kind: str, option: str) -> str:
    """One type for an option shared by several models: the same, or float for int and
    float."""
    if seen is None or seen == kind:
        return kind
    if {seen, kind} == {"int", "float"}:
        return "float"
    raise ValueError(f"option {option!r} is a {seen} in one model and a {kind} in another: "
                     "the command line offers one --option for both")


def render(table: dict) -> str:
    """The source of ``topiczoo/_registry_table.py`` holding ``table``."""
    body = pprint.pformat(table, width=99, sort_dicts=False)
    return ('"""The model registry and data set names as the command line reads them (no model is\n'
            'imported). Generated by ``python -m topiczoo.registry_table``: do not edit."""\n\n'
            f"TABLE = {body}\n")


def write(path: Path = TABLE_FILE) -> bool:
    """Rewrite ``path`` from the registry; True if it changed."""
    text = render(build())
    if path.is_file() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def main() -> int:
    """``python -m topiczoo.registry_table``: rewrite the table, say whether it changed."""
    changed = write()
    print(f"{'wrote' if changed else 'unchanged:'} {TABLE_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
