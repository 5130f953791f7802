"""The command line's table of the registry (``topiczoo/_registry_table.py``): generated from
the registry and up to date."""

from __future__ import annotations

import pytest

from topiczoo import registry_table
from topiczoo.models.lda import lda
from topiczoo.models.registry import ModelEntry


def test_the_stored_table_is_the_registrys():
    assert registry_table.TABLE_FILE.read_text() == registry_table.render(
        registry_table.build()), ("topiczoo/_registry_table.py is out of date with the "
                                  "registry: rewrite it with python -m topiczoo.registry_table")


def test_an_option_the_command_line_cannot_parse_is_a_clear_error():
    def tupled(num_topics: int, *, shape=(1, 2)):
        return lda(num_topics)

    def untyped(num_topics: int, *, thing=None):
        return lda(num_topics)

    for factory, words in ((tupled, "the default of option 'shape' is (1, 2)"),
                           (untyped, "cannot tell the type of option 'thing'")):
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            registry_table.build({"odd": ModelEntry("odd", factory, "odd")}, "odd", ())
