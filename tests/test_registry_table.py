"""The command line's table of the registry (``topiczoo/_registry_table.py``): generated from
the registry, up to date, and the source of every model option in ``topiczoo fit --help``."""

from __future__ import annotations

import numpy as np
import pytest

from topiczoo import cli, registry_table
from topiczoo.models.lda import lda
from topiczoo.models.registry import DEFAULT_MODEL, REGISTRY, ModelEntry


def _fit_help(table: dict) -> str:
    """``topiczoo fit --help`` of ``table``, its whitespace collapsed."""
    return " ".join(cli.build_parser(table).commands["fit"].format_help().split())


def test_the_stored_table_is_the_registrys():
    assert registry_table.TABLE_FILE.read_text() == registry_table.render(
        registry_table.build()), ("topiczoo/_registry_table.py is out of date with the "
                                  "registry: rewrite it with python -m topiczoo.registry_table")


def test_every_option_of_every_model_is_in_the_help_with_its_defaults():
    text = _fit_help(registry_table.load())
    for name, entry in REGISTRY.items():
        for option, default in entry.options().items():
            flag = "--" + option.replace("_", "-")
            assert flag in text, (name, option)
            assert f"{default!r} for" in text or f"(default {default!r})" in text, (name, option)
    assert "--response RESPONSE" in text and "(default 'gaussian' for shdp-map)" in text


def _knobbed(num_topics: int, *, alpha: float = 1.0, beta: float = 0.01,
             knob: float = np.float64(7.5), wobble: bool = False, flavour: str = "plain",
             steps: int | None = None):
    """LDA with three options it ignores (a model someone is adding)."""
    return lda(num_topics, alpha=alpha, beta=beta)


def test_a_new_option_reaches_the_help_and_a_removed_one_leaves_it():
    """Nothing in the command line is written per option: a new entry's options appear with
    their defaults (a numpy default as the number it holds), and are parsed by their type."""
    registry = {**REGISTRY, "knobbed": ModelEntry("knobbed", _knobbed, "LDA with a knob")}
    table = registry_table.build(registry, DEFAULT_MODEL)
    text = _fit_help(table)
    assert "--knob KNOB the model option knob (default 7.5 for knobbed)" in text
    assert "--wobble, --no-wobble the model option wobble (default False for knobbed)" in text
    assert "--flavour FLAVOUR the model option flavour (default 'plain' for knobbed)" in text
    assert "--steps STEPS the model option steps (default None for knobbed)" in text
    assert "knobbed: LDA with a knob" in text and "np." not in text
    args = cli.build_parser(table).parse_args(
        ["fit", "--model", "knobbed", "--knob", "2", "--no-wobble", "--steps", "3"])
    assert (args.knob, args.wobble, args.steps, args.flavour) == (2.0, False, 3, None)
    assert cli._options(args, table) == {"knob": 2.0, "wobble": False, "steps": 3}
    with pytest.raises(SystemExit):
        cli.build_parser(table).parse_args(["fit", "--steps", "2.5"])
    assert "--ell" in _fit_help(registry_table.load())
    without = {name: e for name, e in REGISTRY.items() if "ell" not in e.options()}
    text = _fit_help(registry_table.build(without, DEFAULT_MODEL if DEFAULT_MODEL in without
                                          else next(iter(without))))
    assert "--ell" not in text and "--c C" in text


def test_an_option_the_command_line_cannot_parse_is_a_clear_error():
    def tupled(num_topics: int, *, shape=(1, 2)):
        return lda(num_topics)

    def untyped(num_topics: int, *, thing=None):
        return lda(num_topics)

    for factory, words in ((tupled, "the default of option 'shape' is (1, 2)"),
                           (untyped, "cannot tell the type of option 'thing'")):
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            registry_table.build({"odd": ModelEntry("odd", factory, "odd")}, "odd", ())
