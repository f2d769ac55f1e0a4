"""The shared short text forms (:mod:`nstviz._text`)."""

from __future__ import annotations

from nstviz._text import first_line, shorten


def test_first_line_strips_takes_the_first_line_and_cuts_with_dots():
    assert first_line("  KeyError: 'x'\n  more", 80) == "KeyError: 'x'"
    assert first_line(None, 10) == first_line("  \n ", 10) == ""
    assert first_line("abcdefghijk", 10) == "abcdefg..."
    assert first_line("abcdefghij", 10) == "abcdefghij"


def test_shorten_makes_one_line_and_cuts_with_an_ellipsis():
    assert shorten("a\n  b\tc", 10) == "a b c"
    assert shorten("abcdefghijk", 10) == "abcdefghi…"
    assert shorten(42, 10) == "42"
