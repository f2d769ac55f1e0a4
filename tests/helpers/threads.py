"""Which live threads count as a leak in the before/after state checks.

Rule (docs/reliability.md, "One-time lazy work"): a thread that torch (or tqdm, which torch
uses) starts on its own and keeps for the life of the process is torch's one-time lazy work,
like the modules its first compile imports; every other new thread is a leak, in particular
any thread started from nstviz's code. A thread is torch's when either

- its target function (or its ``Thread`` subclass) is defined in a ``torch.*`` module (e.g.
  the compile worker pool's reader thread, ``torch._inductor.compile_worker``), or tqdm's
  monitor thread (``tqdm._monitor.TMonitor``); or
- it is a worker of an executor that torch keeps for the process: inductor's compile thread
  pool (``AsyncCompile.pool()``, created by the first inductor compile, whose workers start one
  by one as kernels are submitted), its compile process pool (``AsyncCompile.process_pool()``)
  or ``torch.utils._functools._prefetch_executor``. The executor is found through the weak
  reference a worker thread holds to it, so a worker of any other executor (one nstviz would
  create) is still a leak.
"""

from __future__ import annotations

import concurrent.futures.process as cf_process
import concurrent.futures.thread as cf_thread
import sys
import threading
from typing import Any


def _torch_executors() -> list[Any]:
    """The process-lifetime executors torch has created so far (none are created here)."""
    found: list[Any] = []
    async_compile = sys.modules.get("torch._inductor.async_compile")
    if async_compile is not None:
        cls = async_compile.AsyncCompile
        for name in ("pool", "process_pool"):
            cached = getattr(cls, name, None)
            info = getattr(cached, "cache_info", None)
            if info is not None and info().currsize:  # created: calling it returns the cached one
                found.append(cached())
    functools_mod = sys.modules.get("torch.utils._functools")
    if functools_mod is not None and getattr(functools_mod, "_prefetch_executor", None) is not None:
        found.append(functools_mod._prefetch_executor)
    return found


def _executor_of(thread: threading.Thread) -> Any:
    """The executor a pool worker thread serves, or None if it is not a pool worker."""
    if getattr(thread, "_target", None) is cf_thread._worker:
        ref = (getattr(thread, "_args", None) or (None,))[0]
        return ref() if callable(ref) else None
    if isinstance(thread, cf_process._ExecutorManagerThread):
        ref = getattr(thread, "executor_reference", None)
        return ref() if callable(ref) else None
    return None


def _module_of(thread: threading.Thread) -> str:
    target = getattr(thread, "_target", None)
    if target is not None:
        return getattr(target, "__module__", None) or ""
    return type(thread).__module__


def is_torch_lazy_thread(thread: threading.Thread) -> bool:
    """Whether ``thread`` is one of torch's own long-lived threads (see the module docstring)."""
    module = _module_of(thread)
    if module == "torch" or module.startswith("torch.") or module == "tqdm._monitor":
        return True
    executor = _executor_of(thread)
    return executor is not None and any(executor is e for e in _torch_executors())


def leak_candidates() -> frozenset[tuple[int | None, str]]:
    """``(ident, name)`` of every live thread that is not torch's own lazy work."""
    return frozenset((t.ident, t.name) for t in threading.enumerate() if not is_torch_lazy_thread(t))


__all__ = ["is_torch_lazy_thread", "leak_candidates"]
