"""The garbage collector's pacing during a capture, and that it is always put back."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import weakref
from collections.abc import Iterator

import pytest
import torch

import nstviz
from nstviz.capture.gc_pace import YOUNG_THRESHOLD, fewer_collections


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    """The suite's workers freeze their warmed-up heap (``settle_heap``): undo only what a test did."""
    thresholds, enabled, frozen = gc.get_threshold(), gc.isenabled(), gc.get_freeze_count()
    yield
    gc.set_threshold(*thresholds)
    gc.enable() if enabled else gc.disable()
    if not frozen:
        gc.unfreeze()


def _frozen_as(frozen: int) -> bool:
    """Frozen now exactly when it was. Frozen objects freed by reference counting leave the frozen
    set, so the count itself may drop; an unfreeze would empty it."""
    return (gc.get_freeze_count() > 0) == (frozen > 0)


def _cycle() -> weakref.ref[object]:
    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # type: ignore[attr-defined]
    return weakref.ref(a)


def test_inside_young_collections_are_rarer() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with fewer_collections():
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
        dead = _cycle()
        gc.collect()
        assert dead() is None, "a cycle made inside is still collected"
    assert gc.get_threshold() == before
    assert _frozen_as(frozen)


def test_in_a_fresh_process_old_objects_are_frozen_then_unfrozen() -> None:
    """Run where nothing is frozen yet (the suite's own workers froze their heap)."""
    code = textwrap.dedent(
        """
        import gc
        from nstviz.capture.gc_pace import fewer_collections
        assert gc.get_freeze_count() == 0
        with fewer_collections():
            inside = gc.get_freeze_count()
        print(inside, gc.get_freeze_count())
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    inside, after = (int(v) for v in out.stdout.split())
    assert inside > 1000 and after == 0


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_put_back_on_errors_and_interrupts(error: type[BaseException]) -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with pytest.raises(error), fewer_collections():
        raise error("stop")
    assert gc.get_threshold() == before
    assert _frozen_as(frozen)


def test_what_the_user_froze_stays_frozen() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    with fewer_collections():
        pass
    assert _frozen_as(frozen)


def test_a_disabled_collector_is_left_alone() -> None:
    gc.disable()
    gc.set_threshold(500, 10, 10)
    frozen = gc.get_freeze_count()
    with fewer_collections():
        assert not gc.isenabled()
        assert gc.get_threshold() == (500, 10, 10)
        assert _frozen_as(frozen)
    assert not gc.isenabled()


def test_compare_paces_the_collector_and_puts_it_back() -> None:
    seen: list[tuple[int, int, int]] = []

    def helper(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    def f(x: torch.Tensor) -> torch.Tensor:
        seen.append(gc.get_threshold())
        return helper(x).sin()

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    report = nstviz.compare(f, torch.randn(4), nonstrict=[helper], backend="eager", time=False)
    assert report.outputs.match is True
    assert seen and all(t[0] == max(before[0], YOUNG_THRESHOLD) for t in seen)
    assert gc.get_threshold() == before
    assert _frozen_as(frozen)
