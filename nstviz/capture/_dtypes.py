"""Short dtype names (``f32``, ``bf16``, ``i64``...), the spelling FX and the viewer use."""

from __future__ import annotations

from typing import Any

import torch

_SHORT_DTYPE = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "bool",
    torch.complex64: "c64",
    torch.complex128: "c128",
}


def short_dtype(dtype: Any) -> str:
    """``torch.float32`` -> ``"f32"``; other dtypes lose their ``torch.`` prefix; non-dtypes as text."""
    if isinstance(dtype, torch.dtype):
        return _SHORT_DTYPE.get(dtype, str(dtype).removeprefix("torch."))
    return str(dtype).removeprefix("torch.")
