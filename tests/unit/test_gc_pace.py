"""The garbage collector's pacing during a capture, and that it is always put back."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
import torch

import nstviz
from nstviz.capture.gc_pace import YOUNG_THRESHOLD, fewer_collections


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*thresholds)
    gc.enable() if enabled else gc.disable()
    gc.unfreeze()


def _cycle() -> weakref.ref[object]:
    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # type: ignore[attr-defined]
    return weakref.ref(a)


def test_inside_young_collections_are_rarer_and_old_objects_frozen() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
        assert gc.get_freeze_count() > 0
        dead = _cycle()
        gc.collect()
        assert dead() is None, "a cycle made inside is still collected"
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_put_back_on_errors_and_interrupts(error: type[BaseException]) -> None:
    before = gc.get_threshold()
    with pytest.raises(error), fewer_collections():
        raise error("stop")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_what_the_user_froze_stays_frozen() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    with fewer_collections():
        pass
    assert gc.get_freeze_count() == frozen


def test_a_disabled_collector_is_left_alone() -> None:
    gc.disable()
    gc.set_threshold(500, 10, 10)
    with fewer_collections():
        assert not gc.isenabled()
        assert gc.get_threshold() == (500, 10, 10)
        assert gc.get_freeze_count() == 0
    assert not gc.isenabled()


def test_compare_paces_the_collector_and_puts_it_back() -> None:
    seen: list[tuple[int, int, int]] = []

    def helper(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    def f(x: torch.Tensor) -> torch.Tensor:
        seen.append(gc.get_threshold())
        return helper(x).sin()

    before = gc.get_threshold()
    report = nstviz.compare(f, torch.randn(4), nonstrict=[helper], backend="eager", time=False)
    assert report.outputs.match is True
    assert seen and all(t[0] == max(before[0], YOUNG_THRESHOLD) for t in seen)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
