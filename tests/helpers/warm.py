"""Warm-up of the torch.compile backends, before any before/after state snapshot.

The first compile with a backend in a process does one-time lazy work of torch's own (imports,
``atexit`` callbacks, inductor's compile worker pool, caches on disk); a state check that
snapshots before it would blame nstviz for it. Tests that check state request the session
fixtures of ``tests/conftest.py`` (``warm_backends``, ``warm_inductor``), which call
:func:`warm` once per process for each backend they use.
"""

from __future__ import annotations

_WARMED: set[str] = set()


def _graph_break_fn(x):  # a tiny compiled function with one graph break
    y = x.sin() + 1
    print("", end="")
    return y * 2


def warm(*backends: str) -> None:
    """Compile and run a small function with a graph break once with each backend."""
    import torch

    for backend in backends:
        if backend in _WARMED:
            continue
        torch._dynamo.reset()
        torch.compile(_graph_break_fn, backend=backend)(torch.ones(3))
        torch.compile(_graph_break_fn, backend=backend, dynamic=True)(torch.ones(4))
        torch._dynamo.reset()
        _WARMED.add(backend)
    settle_heap()


def settle_heap() -> None:
    """Collect, then freeze what survives (``gc.freeze``): later full collections skip it.

    A test process holds torch's (and transformers') millions of objects; a full ``gc.collect()``
    walks them all (about 0.25 s), and the state snapshots collect before each comparison
    (:meth:`tests.helpers.snapshot.ProcessState.take`). Frozen here, after the one-time warm-up,
    they are the import-time world, which no test drops; the garbage of the tests themselves is
    made later and is still collected.
    """
    import gc

    gc.collect()
    gc.freeze()


__all__ = ["settle_heap", "warm"]
