"""Pace Python's garbage collector while a capture compiles.

Compiling allocates hundreds of thousands of short-lived container objects (FX nodes, fake
tensors, guards, trace records), so CPython's collector runs a young collection every 700 of
them and, every so often, a full collection that walks every object the process holds (torch's
own ~450k included). On the 48-block model of ``benchmarks/bench_capture.py`` that is 1.2-2.4 s
of a 11-12 s ``compare()``: work whose result is "nothing to free", since the objects that
existed before the capture outlive it.

:func:`fewer_collections` moves the objects that exist when the capture starts to the permanent
generation (``gc.freeze``), so no collection walks them, and collects the young generation every
10,000 allocations instead of 700. Cycles made during the capture are still collected, in
fewer, larger passes. Everything is put back afterwards, also on errors and interrupts; a
collector the user disabled, or objects the user froze, are left alone.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["YOUNG_THRESHOLD", "fewer_collections"]

YOUNG_THRESHOLD = 10_000
"""Allocations (less deallocations) of container objects between two young collections while capturing."""


@contextlib.contextmanager
def fewer_collections(young_threshold: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Collect less often inside the block; put the collector's thresholds and frozen set back after it."""
    if not gc.isenabled():
        yield
        return
    thresholds = gc.get_threshold()
    freezes = gc.get_freeze_count() == 0  # never unfreeze what the user froze
    if freezes:
        gc.freeze()
    gc.set_threshold(max(thresholds[0], young_threshold), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freezes:
            gc.unfreeze()
