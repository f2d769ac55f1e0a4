"""Snapshot and restore everything nstviz touches.

:class:`StateSnapshot` records the trace-rule id sets, ``torch._dynamo.config``, the
``torch.__trace`` logger (handlers, level, propagate), the RNG states (torch, random,
numpy), ``sys.stdout``/``sys.stderr``, the inductor post-grad hook and the patched torch
attributes. :meth:`StateSnapshot.restore` puts all of it back; the API calls it in
``finally`` (also on ``KeyboardInterrupt``).
"""

from __future__ import annotations

import contextlib
import random
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from nstviz.capture import _torch_compat


def rng_state() -> dict[str, Any]:
    """The RNG states of torch, :mod:`random` and numpy (when imported)."""
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "random": random.getstate()}
    np = sys.modules.get("numpy")
    if np is not None:
        state["numpy"] = np.random.get_state()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Set the RNG states captured by :func:`rng_state`."""
    torch.set_rng_state(state["torch"])
    random.setstate(state["random"])
    np = sys.modules.get("numpy")
    if np is not None and "numpy" in state:
        np.random.set_state(state["numpy"])


def buffers_kept(fn: Any) -> Callable[[], None]:
    """A function that puts the buffers of ``fn``'s module (``fn`` a module or one's bound method) back as they are now.

    A training forward updates running statistics (BatchNorm's, a quantizer's observed min and max):
    without this, the second of two runs meant to be compared starts where the first left off.
    Anything else: a function that does nothing.
    """
    owner = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    if not isinstance(owner, torch.nn.Module):
        return lambda: None
    saved = [(b, b.detach().clone()) for b in owner.buffers()]

    def put_back() -> None:
        with torch.no_grad():
            for live, copy in saved:
                if live.shape == copy.shape and live.dtype == copy.dtype:
                    live.copy_(copy)

    return put_back


def _patched_attrs() -> dict[str, Any]:
    owner = _torch_compat.call_user_compiler_owner()
    out = {"OutputGraph.call_user_compiler": owner.__dict__.get("call_user_compiler") if owner is not None else None}
    for key, module in _torch_compat.nonstrict_trace_holders():
        out[key] = module.__dict__.get("nonstrict_trace")
    # only when inductor is loaded already: importing it costs seconds, and nstviz touches
    # its config only after loading it for the inductor backend
    if _torch_compat.inductor_config_loaded():
        with contextlib.suppress(Exception):
            config, name = _torch_compat.post_grad_pass_hook()
            out["inductor.post_grad_custom_post_pass"] = getattr(config, name)
    return out


@dataclass(frozen=True, slots=True)
class StateSnapshot:
    """What nstviz may change, as it was when :meth:`take` ran."""

    id_sets: tuple[frozenset[int], frozenset[int]]
    marked_refs: dict[int, Any]
    dynamo_config: dict[str, Any]
    trace_handlers: tuple[Any, ...]
    trace_level: int
    trace_propagate: bool
    rng: dict[str, Any]
    stdout: Any
    stderr: Any
    patched: dict[str, Any]

    @classmethod
    def take(cls) -> StateSnapshot:
        """Record the current state.

        The id sets hold ids, not objects: the functions ``nonstrict_trace`` marked are held
        weakly too, so that :meth:`restore` does not put back the id of one freed meanwhile
        (an unreachable one, a cell's function in a cycle with its dropped namespace, is freed
        whenever the collector runs), which would mark whatever object is made later at that
        address.
        """
        logger = _torch_compat.trace_logger()
        return cls(
            id_sets=_torch_compat.id_set_contents(),
            marked_refs=_torch_compat.marked_function_refs(),
            dynamo_config=_torch_compat.dynamo_config_copy(),
            trace_handlers=tuple(logger.handlers),
            trace_level=logger.level,
            trace_propagate=logger.propagate,
            rng=rng_state(),
            stdout=sys.stdout,
            stderr=sys.stderr,
            patched=_patched_attrs(),
        )

    def restore(self, *, rng: bool = True) -> None:
        """Put everything back as it was (``rng=False`` leaves the RNG states alone)."""
        _torch_compat.restore_id_sets(self.id_sets, freed=_torch_compat.freed_ids(self.marked_refs))
        current = _torch_compat.dynamo_config_copy()
        changed = {k: v for k, v in self.dynamo_config.items() if current.get(k) is not v and current.get(k) != v}
        if changed:
            _torch_compat.load_dynamo_config(changed)
        logger = _torch_compat.trace_logger()
        if tuple(logger.handlers) != self.trace_handlers:
            # the same handlers in the same order: torch's LazyTraceHandler removes itself on
            # the first record it gets (no TORCH_TRACE), and re-adding it alone would append it
            for h in list(logger.handlers):
                logger.removeHandler(h)
            for h in self.trace_handlers:
                logger.addHandler(h)
        logger.setLevel(self.trace_level)
        logger.propagate = self.trace_propagate
        if rng:
            set_rng_state(self.rng)
        sys.stdout = self.stdout
        sys.stderr = self.stderr
        self._restore_patched()

    def _restore_patched(self) -> None:
        owner = _torch_compat.call_user_compiler_owner()
        value = self.patched.get("OutputGraph.call_user_compiler")
        if owner is not None and value is not None and owner.__dict__.get("call_user_compiler") is not value:
            owner.call_user_compiler = value
        for key, mod in _torch_compat.nonstrict_trace_holders():
            value = self.patched.get(key)
            if value is not None and mod.__dict__.get("nonstrict_trace") is not value:
                mod.nonstrict_trace = value
        if "inductor.post_grad_custom_post_pass" in self.patched:
            config, name = _torch_compat.post_grad_pass_hook()
            setattr(config, name, self.patched["inductor.post_grad_custom_post_pass"])


class InterruptLatch:
    """Notes every SIGINT (Ctrl-C, the kernel's interrupt) while :func:`interrupt_latch` is active.

    torch evaluates Dynamo's guards in C++, calling Python guard functions, and treats any
    exception they raise as a failed guard: a ``KeyboardInterrupt`` that lands there is
    swallowed (measured on torch 2.13: about one interrupt in four during a compile-heavy run,
    sometimes turning into "Guard failed on the same frame it was created"). The latch lets
    nstviz re-raise such an interrupt once the run is undone, so Ctrl-C always stops nstviz.
    """

    def __init__(self) -> None:
        self.tripped = False


@contextlib.contextmanager
def interrupt_latch(*, defer: bool = False) -> Iterator[InterruptLatch]:
    """Install a SIGINT handler that sets :attr:`InterruptLatch.tripped`, then restore the old one.

    With ``defer=False`` the previous handler still runs (raising ``KeyboardInterrupt`` as usual);
    with ``defer=True`` the interrupt is only noted and raised when the block ends (for code that
    must not be cut in half, such as restoring the state). Outside the main thread, or when
    SIGINT is not handled by Python, nothing is installed.
    """
    latch = InterruptLatch()
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield latch
        return

    def handler(signum: int, frame: Any) -> None:
        latch.tripped = True
        if not defer:
            previous(signum, frame)

    signal.signal(signal.SIGINT, handler)
    try:
        yield latch
    finally:
        if signal.getsignal(signal.SIGINT) is handler:
            signal.signal(signal.SIGINT, previous)
    if defer and latch.tripped:
        raise KeyboardInterrupt("interrupted (nstviz finished restoring the state first)")
