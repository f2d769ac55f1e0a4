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

    from tests.helpers.snapshot import settle_heap

    for backend in backends:
        if backend in _WARMED:
            continue
        torch._dynamo.reset()
        torch.compile(_graph_break_fn, backend=backend)(torch.ones(3))
        torch.compile(_graph_break_fn, backend=backend, dynamic=True)(torch.ones(4))
        torch._dynamo.reset()
        _WARMED.add(backend)
    settle_heap()  # collect, then freeze what survives


__all__ = ["warm"]
