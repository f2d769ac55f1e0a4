"""Outputs as leaves with paths (``return.logits``, ``y[0]``, ``state['k']``)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import torch

from nstviz.capture.outputs.snapshot import _is_plain_object, _numpy

_MAX_DEPTH = 32
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _key_path(prefix: str, key: Any) -> str:
    if isinstance(key, str) and _IDENT.match(key):
        return f"{prefix}.{key}" if prefix else key
    return f"{prefix}[{key!r}]"


def _flatten(value: Any, path: str, out: dict[str, Any], depth: int, seen: set[int]) -> None:
    """Fill ``out`` with ``path -> leaf``; containers become their children's paths."""
    if (
        isinstance(value, torch.Tensor)
        or value is None
        or isinstance(value, (bool, int, float, complex, str, bytes))
    ):
        out[path] = value
        return
    np = _numpy()
    if np is not None and isinstance(value, (np.ndarray, np.generic)):
        out[path] = value
        return
    if depth >= _MAX_DEPTH or id(value) in seen:
        out[path] = _Opaque(value, "nested too deeply or contains itself")
        return
    seen = seen | {id(value)}
    if isinstance(value, Mapping):
        if not value:
            out[path] = _Empty(type(value).__name__)
        for k, v in value.items():
            _flatten(v, _key_path(path, k), out, depth + 1, seen)
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        for name, v in zip(value._fields, value, strict=False):
            _flatten(v, _key_path(path, name), out, depth + 1, seen)
    elif isinstance(value, (list, tuple)):
        if not value:
            out[path] = _Empty(type(value).__name__)
        for i, v in enumerate(value):
            _flatten(v, f"{path}[{i}]", out, depth + 1, seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _flatten(getattr(value, f.name, None), _key_path(path, f.name), out, depth + 1, seen)
    elif _is_plain_object(value):
        attrs = {k: v for k, v in vars(value).items() if not k.startswith("__")}
        if not attrs:
            out[path] = _Opaque(value, f"{type(value).__name__} has no state to compare")
        for k, v in attrs.items():
            _flatten(v, _key_path(path, k), out, depth + 1, seen)
    elif isinstance(value, torch.nn.Module):
        out[path] = _Opaque(value, f"an nn.Module ({type(value).__name__})")
    else:
        out[path] = value


@dataclasses.dataclass(frozen=True)
class _Empty:
    kind: str


@dataclasses.dataclass(frozen=True, eq=False)
class _Opaque:
    value: Any
    why: str
