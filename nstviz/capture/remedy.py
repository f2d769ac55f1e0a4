"""What an advisor attempt applies: its marks, and the :class:`Remedy` protocol of a source rewrite.

An attempt's marks (:data:`Mark`) are functions to mark non-strict, adapters
(:class:`~nstviz.capture.adapters.Adapter`, whose inner function is marked), user classes to
register with pytree (:class:`~nstviz.capture.adapters.PytreeType`) and source rewrites, which
implement :class:`Remedy` (the advisor's ``nstviz.advisor.rewrites.Rewrite`` does, by name).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeAlias, runtime_checkable

from nstviz.capture.adapters import Adapter, PytreeType

__all__ = ["Mark", "Remedy", "refreshing", "rewrites_applied", "rewrites_in", "split_remedies"]


@runtime_checkable
class Remedy(Protocol):
    """A source rewrite: applied live around a run, and pasted as code after.

    Attributes:
        source: paste-ready code (the rewritten ``def``, with a comment why).
    """

    source: str

    def applied(self) -> AbstractContextManager[None]:
        """The rewrite in place while the block runs; undone after, also on errors."""
        ...


Mark: TypeAlias = Callable[..., Any] | Adapter | PytreeType | Remedy
"""One thing an attempt applies: a function to mark, an adapter, a pytree class or a rewrite."""


def split_remedies(items: Iterable[Mark]) -> tuple[tuple[Callable[..., Any], ...], list[Adapter], list[PytreeType]]:
    """``(functions to mark, adapters to install, pytree classes to register)`` of an attempt's marks."""
    plain: list[Any] = []
    ads: list[Adapter] = []
    classes: list[PytreeType] = []
    for item in items:
        if isinstance(item, Adapter):
            ads.append(item)
            plain.append(item.inner)
        elif isinstance(item, PytreeType):
            classes.append(item)
        elif isinstance(item, Remedy):
            continue  # applied around the run (rewrites_in)
        else:
            plain.append(item)
    return tuple(plain), ads, classes


def rewrites_in(items: Iterable[Mark]) -> list[Remedy]:
    """The source rewrites among an attempt's marks (applied with ``rewrite.applied()`` around the run)."""
    return [item for item in items if isinstance(item, Remedy)]


@contextlib.contextmanager
def rewrites_applied(items: Iterable[Mark]) -> Iterator[None]:
    """Apply the source rewrites among ``items`` while the block runs; each undoes itself after, also on errors."""
    with contextlib.ExitStack() as stack:
        for rewrite in rewrites_in(items):
            stack.enter_context(rewrite.applied())
        yield


def _both(first: Callable[[], None], second: Callable[[], None]) -> Callable[[], None]:
    def both() -> None:
        first()
        second()

    return both


def refreshing(
    marks: Callable[[], Sequence[Callable[..., Any]]],
    refresh: Callable[[], None],
    readapt: Callable[[], Sequence[Callable[..., Any]]] | None = None,
) -> Callable[[], Sequence[Callable[..., Any]]]:
    """``marks`` that first takes in the code's new definitions of remedied classes and functions.

    New definitions of the pytree classes are registered (``adapters.registered``), new
    definitions of adapted functions get adapters (``adapters.installed``), whose inner
    functions are marked too.
    """

    def current() -> Sequence[Callable[..., Any]]:
        refresh()
        extra = readapt() if readapt is not None else ()
        return [*marks(), *extra]

    return current
