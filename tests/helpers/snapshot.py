"""One snapshot of everything nstviz could change in the process, and a readable diff.

It extends the shared :mod:`tests.helpers.state` snapshot (every entry of ``state.take()`` is
included) with the rest of the process, for the reliability tests.

Tests take a :class:`ProcessState` before an nstviz call and compare after it::

    before = ProcessState.take()
    ...  # compare / trace_code / %%nstrace, succeeding or failing
    assert_restored(before)

What is recorded (each entry compares with ``==``):

- torch: the trace-rule id sets, ``torch._dynamo.config``, ``torch._inductor.config``,
  ``torch._functorch.config``, the compiler stance, Dynamo's eval-frame callback and its
  compile start/end callbacks, the patched attributes (``OutputGraph.call_user_compiler``,
  ``nonstrict_trace``, inductor's post-grad hook), grad/inference mode, default dtype,
  deterministic algorithms, thread count, torch-function/dispatch mode stacks, global
  ``nn.Module`` hooks;
- logging: handlers, level, propagate and disabled of EVERY logger (root, ``torch.*``,
  ``torch.__trace`` and the rest); loggers created meanwhile must have no handlers/level;
- RNG states: torch, :mod:`random`, numpy;
- :mod:`sys`: stdout/stderr/stdin, displayhook/excepthook, trace/profile functions (also
  :mod:`threading`'s), recursion limit, ``sys.path``, modules removed;
- threads alive (new ones are reported after a short grace period; torch's own long-lived
  lazy threads are not counted, see :mod:`tests.helpers.threads`), ``atexit`` callbacks,
  :mod:`warnings` filters and ``showwarning``, :mod:`gc` callbacks, the SIGINT handler,
  ``os.environ`` and the working directory.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import os
import random
import signal
import sys
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch

from tests.helpers import state
from tests.helpers.threads import leak_candidates


def _loggers() -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    items: list[tuple[str, Any]] = [("<root>", logging.getLogger())]
    items += list(logging.Logger.manager.loggerDict.items())
    for name, logger in items:
        if not isinstance(logger, logging.Logger):
            continue  # a PlaceHolder
        handlers = tuple(h for h in logger.handlers if not _inert_lazy_trace_handler(h) and not _pytest_handler(h))
        out[name] = (handlers, logger.level, logger.propagate, logger.disabled)
    return out


def _pytest_handler(handler: logging.Handler) -> bool:
    """pytest's own capture handlers (``_pytest.logging``), not nstviz's.

    pytest 9 attaches them, for each test phase, to every logger that does not propagate at the
    phase's start; torch's artifact loggers stop propagating when torch first sets up its logs
    (torch 2.14 does that during the warm-up capture), so they get pytest's handlers from the
    next phase on, and a before/after pair straddling that moment differs by them.
    """
    return type(handler).__module__ == "_pytest.logging"


def _inert_lazy_trace_handler(handler: logging.Handler) -> bool:
    """torch's LazyTraceHandler with no trace dir: it removes itself at its first record.

    torch adds one at import; the first structured-trace record in ANY thread makes it remove
    itself, and nstviz's restore puts it back (the run removed it): its presence depends only on
    which thread logged last, and it has no effect, so snapshots leave it out.
    """
    return type(handler).__name__ == "LazyTraceHandler" and getattr(handler, "root_dir", None) is None


def _rng() -> dict[str, Any]:
    state: dict[str, Any] = {
        "torch": bytes(torch.get_rng_state().numpy().tobytes()),
        "random": random.getstate(),
    }
    np = sys.modules.get("numpy")
    if np is not None:
        kind, keys, pos, has_gauss, cached = np.random.get_state()
        state["numpy"] = (kind, keys.tobytes(), pos, has_gauss, cached)
    return state


def _config(module_name: str) -> dict[str, Any]:
    module = sys.modules.get(module_name)
    if module is None:
        return {}
    try:
        return {k: repr(v) for k, v in module.get_config_copy().items()}
    except Exception as exc:  # pragma: no cover - a torch without the config API
        return {"<error>": repr(exc)}


def _torch_state() -> dict[str, Any]:
    import torch._dynamo.decorators as decorators
    import torch._dynamo.eval_frame as eval_frame
    from torch._dynamo import trace_rules
    from torch._dynamo.output_graph import OutputGraph

    out: dict[str, Any] = {
        "trace_rules._allowed_callable_ids": frozenset(trace_rules._allowed_callable_ids()),
        "trace_rules._nonstrict_trace_callable_ids": frozenset(trace_rules._nonstrict_trace_callable_ids()),
        "torch._dynamo.config": _config("torch._dynamo.config"),
        "torch._inductor.config": _config("torch._inductor.config"),
        "torch._functorch.config": _config("torch._functorch.config"),
        "compiler stance": repr(getattr(eval_frame, "_stance", None)),
        "eval_frame callback": torch._C._dynamo.eval_frame.get_eval_frame_callback(),
        "dynamo start callbacks": tuple(torch._dynamo.callback_handler.start_callbacks),
        "dynamo end callbacks": tuple(torch._dynamo.callback_handler.end_callbacks),
        "OutputGraph.call_user_compiler": OutputGraph.__dict__.get("call_user_compiler"),
        "torch._dynamo.nonstrict_trace": torch._dynamo.__dict__.get("nonstrict_trace"),
        "decorators.nonstrict_trace": decorators.__dict__.get("nonstrict_trace"),
        "grad enabled": torch.is_grad_enabled(),
        "inference mode": torch.is_inference_mode_enabled(),
        "default dtype": torch.get_default_dtype(),
        "deterministic algorithms": torch.are_deterministic_algorithms_enabled(),
        "num threads": torch.get_num_threads(),
        "torch function mode stack": torch._C._len_torch_function_stack(),
        "global nn.Module hooks": tuple(
            len(getattr(torch.nn.modules.module, name, {}))
            for name in (
                "_global_forward_pre_hooks",
                "_global_forward_hooks",
                "_global_backward_pre_hooks",
                "_global_backward_hooks",
                "_global_module_registration_hooks",
            )
        ),
    }
    inductor_config = sys.modules.get("torch._inductor.config")
    if inductor_config is not None:
        out["inductor post_grad_custom_post_pass"] = inductor_config.post_grad_custom_post_pass
    return out


def _shared_state() -> dict[str, Any]:
    """The shared helper's snapshot, with tensors and configs made comparable with ``==``."""
    base = state.take()
    base.pop("trace_log", None)  # compared as the 'torch.__trace' logger below (inert handler aside)
    base.pop("loggers", None)  # every logger is compared below
    base["torch_rng"] = bytes(base["torch_rng"].numpy().tobytes())
    base["dynamo_config"] = {k: repr(v) for k, v in base["dynamo_config"].items()}
    base.pop("threads", None)  # compared below, with a grace period
    return base


def _sys_state() -> dict[str, Any]:
    return {
        "sys.stdout": sys.stdout,
        "sys.stderr": sys.stderr,
        "sys.stdin": sys.stdin,
        "sys.displayhook": sys.displayhook,
        "sys.excepthook": sys.excepthook,
        "sys.gettrace": sys.gettrace(),
        "sys.getprofile": sys.getprofile(),
        "threading.gettrace": threading.gettrace(),
        "threading.getprofile": threading.getprofile(),
        "recursion limit": sys.getrecursionlimit(),
        "sys.path": tuple(sys.path),
        "atexit callbacks": atexit._ncallbacks(),
        "warnings.filters": tuple(warnings.filters),
        "warnings.showwarning": warnings.showwarning,
        "gc.callbacks": tuple(gc.callbacks),
        "gc enabled": gc.isenabled(),
        "SIGINT handler": signal.getsignal(signal.SIGINT),
        "os.environ": {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"},
        "cwd": os.getcwd(),
    }


_FROZEN_MARKED: dict[int, weakref.ref[Any]] = {}
"""Weak references to the functions registered non-strict when :func:`settle_heap` froze them:
``gc.get_objects()`` no longer lists frozen objects, and one of them may still die in a test."""


def settle_heap() -> None:
    """Collect, then freeze what survives (``gc.freeze``): later full collections skip it.

    A test process holds torch's (and transformers') millions of objects; a full ``gc.collect()``
    walks them all (about 0.25 s), and every snapshot collects first (:meth:`ProcessState.take`).
    Frozen once the process is warm (``tests/helpers/warm.py``), they are the import-time world;
    the tests' own garbage is made later and is still collected. The non-strict functions among
    the frozen objects are remembered first, for :func:`_marked_refs`.
    """
    gc.collect()
    _FROZEN_MARKED.update(_marked_refs())
    gc.freeze()


def _marked_refs() -> dict[int, weakref.ref[Any]]:
    """Weak references to the live functions registered non-strict in torch, by id."""
    from torch._dynamo import trace_rules

    ids = frozenset(trace_rules._nonstrict_trace_callable_ids())
    if not ids:
        return {}
    refs = {i: r for i, r in _FROZEN_MARKED.items() if i in ids and r() is not None}
    for obj in gc.get_objects():  # the objects made since the freeze
        if id(obj) in ids:
            with contextlib.suppress(TypeError):  # not weak-referenceable: cannot die unseen either
                refs[id(obj)] = weakref.ref(obj)
    return refs


@dataclass(frozen=True)
class ProcessState:
    """Everything recorded at one moment (see the module docstring)."""

    values: dict[str, Any]
    loggers: dict[str, tuple[Any, ...]]
    threads: frozenset[tuple[int | None, str]]
    modules: frozenset[str]
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def take(cls) -> ProcessState:
        """Record the current state of the process."""
        # garbage of earlier tests (e.g. nonstrict_trace-decorated functions in a dropped cell
        # namespace) must be collected now, not while the test runs: its finalizers unregister ids
        gc.collect()
        values = {f"state.{k}": v for k, v in _shared_state().items()}
        values.update({**_torch_state(), **_sys_state(), **{f"rng.{k}": v for k, v in _rng().items()}})
        return cls(
            values=values,
            loggers=_loggers(),
            threads=leak_candidates(),
            modules=frozenset(sys.modules),
            extra={"marked_refs": _marked_refs()},
        )

    def diff(self, other: ProcessState, *, strict_modules: bool = False) -> list[str]:
        """What differs in ``other`` (a later snapshot), one readable line per difference."""
        problems: list[str] = []
        for key in sorted(set(self.values) | set(other.values)):
            a, b = self.values.get(key, "<absent>"), other.values.get(key, "<absent>")
            if _same(a, b):
                continue
            if isinstance(a, dict) and isinstance(b, dict):
                keys = sorted(k for k in set(a) | set(b) if not _same(a.get(k), b.get(k)))
                shown = ", ".join(f"{k}: {a.get(k, '<absent>')!s:.60} -> {b.get(k, '<absent>')!s:.60}" for k in keys[:8])
                problems.append(f"{key} changed ({len(keys)} entries): {shown}")
            elif isinstance(a, frozenset) and isinstance(b, frozenset):
                # an id torch itself dropped: its function died while the test ran (torch unregisters
                # a nonstrict_trace function with weakref.finalize), not a registration nstviz removed
                refs = self.extra.get("marked_refs", {})
                removed = {i for i in a - b if not (i in refs and refs[i]() is None)}
                if b - a or removed:
                    problems.append(f"{key} changed: added {len(b - a)}, removed {len(removed)}")
            else:
                problems.append(f"{key} changed: {a!r:.120} -> {b!r:.120}")
        for name, after in sorted(other.loggers.items()):
            before = self.loggers.get(name)
            if before is None:
                if after[0] or after[1] != logging.NOTSET or after[3]:
                    problems.append(f"logger {name!r} appeared with handlers/level/disabled {after!r:.200}")
            elif before != after:
                problems.append(f"logger {name!r} (handlers, level, propagate, disabled): {before!r:.200} -> {after!r:.200}")
        new_threads = other.threads - self.threads
        if new_threads:
            problems.append(f"threads left running: {sorted(name for _, name in new_threads)}")
        gone = self.modules - other.modules
        if gone:
            problems.append(f"modules removed from sys.modules: {sorted(gone)[:10]}")
        if strict_modules:
            added = other.modules - self.modules
            if added:
                problems.append(f"modules added to sys.modules: {sorted(added)[:10]} ({len(added)} in all)")
        return problems


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def assert_restored(before: ProcessState, *, strict_modules: bool = False, grace_s: float = 2.0) -> None:
    """Assert the process is as ``before`` recorded; threads get ``grace_s`` seconds to end."""
    deadline = time.monotonic() + grace_s
    while True:
        after = ProcessState.take()
        problems = before.diff(after, strict_modules=strict_modules)
        threads_only = all(p.startswith("threads left running") for p in problems)
        if not problems or not threads_only or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not problems, "nstviz left the process changed:\n  " + "\n  ".join(problems)


__all__ = ["ProcessState", "assert_restored", "settle_heap"]
