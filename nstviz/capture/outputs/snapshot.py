"""Copies of a run's outputs, taken before the next run changes them (tensors cloned, containers rebuilt)."""

from __future__ import annotations

import contextlib
import dataclasses
import types
from collections.abc import Iterator, Mapping
from typing import Any

import torch

_MAX_DEPTH = 32


@contextlib.contextmanager
def _single_thread() -> Iterator[None]:
    """Run torch ops on one intra-op thread, restoring the setting afterwards.

    These passes are memory-bound, so threads barely help; but every op opens an OpenMP
    parallel region, and on a busy machine each region waits for descheduled threads
    (measured, 2 cores at load 8: comparing two 20M-element tensors took 5.8 s with 2 threads
    and 0.2 s with 1).
    """
    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _numpy() -> Any:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is installed with torch here
        return None
    return np


# -- snapshot -------------------------------------------------------------------------------


def snapshot_outputs(values: Any) -> Any:
    """Copy ``values`` so that later in-place changes do not alter what was captured.

    Tensors are detached and cloned (under ``no_grad``, autograd is not touched); numpy arrays
    are copied; containers (dict, list, tuple, namedtuple, dataclass, ``ModelOutput``) are
    rebuilt around the copies with their own type where possible. Other leaves (numbers,
    strings, arbitrary objects) are kept as they are.

    Args:
        values: any pytree, typically ``{name: value}`` of one run.

    Returns:
        The same structure holding copies.
    """
    with torch.no_grad(), _single_thread():
        return _snap(values, 0, {})


def _snap(value: Any, depth: int, memo: dict[int, Any]) -> Any:
    if isinstance(value, torch.Tensor):
        key = id(value)
        if key not in memo:
            memo[key] = _clone_tensor(value)
        return memo[key]
    if depth >= _MAX_DEPTH or value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return value
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        return value.copy()
    key = id(value)
    if key in memo:
        return memo[key]
    if isinstance(value, Mapping):
        items = {k: _snap(v, depth + 1, memo) for k, v in value.items()}
        out = _rebuild_mapping(value, items)
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        out = type(value)(*(_snap(v, depth + 1, memo) for v in value))
    elif isinstance(value, (list, tuple)):
        seq = [_snap(v, depth + 1, memo) for v in value]
        out = (
            seq if type(value) is list else (tuple(seq) if type(value) is tuple else _try_rebuild(value, seq))
        )
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = _rebuild_dataclass(value, depth, memo)
    elif _is_plain_object(value):
        out = _rebuild_object(value, depth, memo)
    else:
        out = value
    memo[key] = out
    return out


def _is_plain_object(value: Any) -> bool:
    """An object compared by identity (no ``__eq__`` of its own) whose state is its ``__dict__``.

    Such values (e.g. a transformers ``DynamicCache`` holding tensors) are compared and
    snapshotted attribute by attribute; two runs never return the *same* object.
    """
    if isinstance(value, (type, types.FunctionType, types.MethodType, types.ModuleType, torch.nn.Module)):
        return False
    return (
        type(value).__eq__ is object.__eq__
        and isinstance(getattr(value, "__dict__", None), dict)
        and not callable(value)
    )


def _rebuild_object(value: Any, depth: int, memo: dict[int, Any]) -> Any:
    import copy

    try:
        out = copy.copy(value)
        for k, v in vars(value).items():
            object.__setattr__(out, k, _snap(v, depth + 1, memo))
        return out
    except Exception:
        return value


def _clone_tensor(t: torch.Tensor) -> torch.Tensor:
    try:
        if t.is_sparse or t.device.type == "meta":
            return t.detach()
        return t.detach().clone()
    except Exception:  # exotic subclasses (fake, functional): keep a detached reference
        return t.detach()


def _rebuild_mapping(orig: Mapping, items: dict) -> Any:
    if type(orig) is dict:
        return items
    try:
        out = type(orig)(**items) if _all_str(items) else type(orig)(items)
        if dict(out) == {}:
            raise ValueError
        return out
    except Exception:
        try:
            return type(orig)(items)
        except Exception:
            return items


def _all_str(items: dict) -> bool:
    return all(isinstance(k, str) for k in items)


def _try_rebuild(orig: Any, seq: list) -> Any:
    try:
        return type(orig)(seq)
    except Exception:
        return seq


def _rebuild_dataclass(value: Any, depth: int, memo: dict[int, Any]) -> Any:
    import copy

    try:
        out = copy.copy(value)
        for f in dataclasses.fields(value):
            object.__setattr__(out, f.name, _snap(getattr(value, f.name), depth + 1, memo))
        return out
    except Exception:
        return value
