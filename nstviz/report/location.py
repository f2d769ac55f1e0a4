"""A place in user source (:class:`Location`), the smallest part of a Report, shared by all others."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Location"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Location:
    """A place in user source: ``file`` path (or cell name), 1-based ``line``, ``function``."""

    file: str
    line: int
    function: str
    code: str | None = None
    """The source line itself, stripped, where known."""
