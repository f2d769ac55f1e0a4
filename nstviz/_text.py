"""Short text forms that passes and renderers share: one definition each (a shared leaf, imports nothing)."""

from __future__ import annotations


def first_line(text: str | None, limit: int) -> str:
    r"""The first line of ``text``, cut to ``limit`` characters with ``"..."``.

    ``first_line("  KeyError: 'x'\\n  more", 80) == "KeyError: 'x'"``; ``""`` for None or blank text.
    """
    stripped = (text or "").strip()
    line = stripped.splitlines()[0] if stripped else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def shorten(text: object, limit: int) -> str:
    """``text`` on one line (runs of whitespace made one space), cut to ``limit`` characters with ``"…"``."""
    first = " ".join(str(text).split())
    return first if len(first) <= limit else first[: limit - 1] + "…"


__all__ = ["first_line", "shorten"]
