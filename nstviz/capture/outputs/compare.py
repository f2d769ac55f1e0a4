"""Comparing two runs' leaves: tensors, arrays, numbers, other values (see :mod:`nstviz.capture.outputs`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from nstviz.capture._dtypes import short_dtype
from nstviz.capture.outputs.flatten import _Empty, _flatten, _Opaque
from nstviz.capture.outputs.snapshot import _numpy, _single_thread
from nstviz.passes.output_verdict import comparison
from nstviz.report import OutputComparison, OutputDetail

_CHUNK = 1 << 20


# -- comparing leaves -----------------------------------------------------------------------


def _dtype_name(dtype: Any) -> str:
    return short_dtype(dtype)


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _as_tensor(value: Any) -> torch.Tensor | None:
    """Convert numpy arrays/scalars of a numeric dtype to tensors (no copy); else None."""
    np = _numpy()
    if np is None:
        return None
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        try:
            return torch.from_numpy(np.ascontiguousarray(value))
        except (TypeError, ValueError):  # dtypes torch lacks (e.g. uint32 on old torch)
            return torch.from_numpy(value.astype(np.float64 if value.dtype.kind in "iuf" else np.complex128))
    return None


def _compare_leaf(path: str, left: Any, right: Any, rtol: float, atol: float) -> OutputDetail:
    np = _numpy()
    is_np = np is not None and (
        isinstance(left, (np.ndarray, np.generic)) or isinstance(right, (np.ndarray, np.generic))
    )
    if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor) or is_np:
        lt = left if isinstance(left, torch.Tensor) else _as_tensor(left)
        rt = right if isinstance(right, torch.Tensor) else _as_tensor(right)
        if lt is None or rt is None:
            return OutputDetail(
                path=path,
                match=False,
                note=f"different kinds of value: {_kind(left)} vs {_kind(right)}",
            )
        if isinstance(left, torch.Tensor) != isinstance(right, torch.Tensor):
            detail = _compare_tensors(path, lt, rt, rtol, atol)
            return dataclasses.replace(
                detail, match=False, note=_join(f"a {_kind(left)} vs a {_kind(right)}", detail.note)
            )
        return _compare_tensors(path, lt, rt, rtol, atol)
    if isinstance(left, _Empty) or isinstance(right, _Empty):
        same = isinstance(left, _Empty) and isinstance(right, _Empty)
        return OutputDetail(path=path, match=same, note="" if same else f"{_kind(left)} vs {_kind(right)}")
    if isinstance(left, _Opaque) or isinstance(right, _Opaque):
        why = left.why if isinstance(left, _Opaque) else right.why  # type: ignore[union-attr]
        return OutputDetail(path=path, match=None, note=f"not compared: {why}")
    if _is_number(left) and _is_number(right):
        return _compare_numbers(path, left, right, rtol, atol)
    if type(left) is not type(right) and not (left is None or right is None):
        return OutputDetail(path=path, match=False, note=f"different types: {_kind(left)} vs {_kind(right)}")
    if left is None or right is None or isinstance(left, (str, bytes)):
        same = left == right
        return OutputDetail(path=path, match=same, note="" if same else f"{_short(left)} vs {_short(right)}")
    try:
        eq = left == right
        if isinstance(eq, bool):
            return OutputDetail(path=path, match=eq, note="" if eq else f"{_short(left)} != {_short(right)}")
    except Exception:
        pass
    return OutputDetail(path=path, match=None, note=f"not comparable: {_kind(left)} has no usable ==")


def _safe_compare_leaf(path: str, left: Any, right: Any, rtol: float, atol: float) -> OutputDetail:
    try:
        return _compare_leaf(path, left, right, rtol, atol)
    except Exception as exc:  # exotic tensors (fake, distributed), objects whose == raises oddly
        return OutputDetail(path=path, match=None, note=f"not compared: {type(exc).__name__}: {exc}"[:300])


def _is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, complex))


def _compare_numbers(path: str, left: Any, right: Any, rtol: float, atol: float) -> OutputDetail:
    if isinstance(left, (bool, int)) and isinstance(right, (bool, int)):
        diff = float(abs(int(left) - int(right)))
        rel = _rel(diff, abs(float(left)))
        return OutputDetail(
            path=path,
            match=diff == 0,
            max_abs_diff=diff,
            max_rel_diff=rel,
            dtype=type(left).__name__,
            note="" if diff == 0 else f"{left} vs {right} (integers must be equal)",
        )
    lc, rc = complex(left), complex(right)
    lnan = math.isnan(lc.real) or math.isnan(lc.imag)
    rnan = math.isnan(rc.real) or math.isnan(rc.imag)
    if lnan or rnan:
        same = lnan and rnan
        return OutputDetail(
            path=path,
            match=same,
            max_abs_diff=0.0 if same else None,
            dtype=type(left).__name__,
            note="NaN on both sides" if same else f"{left} vs {right} (NaN on one side only)",
        )
    if lc == rc:
        return OutputDetail(
            path=path, match=True, max_abs_diff=0.0, max_rel_diff=0.0, dtype=type(left).__name__
        )
    diff = abs(lc - rc)
    if math.isinf(diff) or math.isnan(diff):
        return OutputDetail(path=path, match=False, dtype=type(left).__name__, note=f"{left} vs {right}")
    match = diff <= atol + rtol * abs(rc)
    return OutputDetail(
        path=path,
        match=match,
        max_abs_diff=float(diff),
        max_rel_diff=_rel(diff, abs(lc)),
        dtype=type(left).__name__,
        note="" if match else f"{left} vs {right}",
    )


def _rel(diff: float, base: float) -> float:
    if diff == 0:
        return 0.0
    return diff / base if base > 0 else math.inf


def _compare_tensors(
    path: str, left: torch.Tensor, right: torch.Tensor, rtol: float, atol: float
) -> OutputDetail:
    shape = _shape_text(left.shape)
    dtype = _dtype_name(left.dtype)
    refused = _not_compared(path, left, right, shape, dtype)
    if refused is not None:
        return refused
    notes: list[str] = []
    dtype_ok = left.dtype == right.dtype
    if not dtype_ok:
        notes.append(f"dtype {_dtype_name(left.dtype)} vs {_dtype_name(right.dtype)}")
        dtype = f"{_dtype_name(left.dtype)}/{_dtype_name(right.dtype)}"
    with torch.no_grad():
        lt = left.detach()
        rt = right.detach()
        if rt.device != lt.device:
            rt = rt.to(lt.device)
        if lt.numel() == 0:
            return OutputDetail(
                path=path,
                match=dtype_ok,
                max_abs_diff=0.0,
                max_rel_diff=0.0,
                shape=shape,
                dtype=dtype,
                note=_join(*notes),
            )
        if dtype_ok and torch.equal(lt, rt):  # fast path: bitwise equal and no NaN
            return OutputDetail(
                path=path, match=True, max_abs_diff=0.0, max_rel_diff=0.0, shape=shape, dtype=dtype
            )
        exact = not (lt.is_floating_point() or lt.is_complex() or rt.is_floating_point() or rt.is_complex())
        if exact:
            bad, max_abs, rel = _integer_diff(lt, rt)
            if bad:
                notes.append(f"{bad} of {lt.numel()} elements differ (integers must be equal)")
        else:
            bad, max_abs, rel, float_notes = _float_diff(lt, rt, rtol, atol)
            notes.extend(float_notes)
    return OutputDetail(
        path=path,
        match=dtype_ok and bad == 0,
        max_abs_diff=max_abs,
        max_rel_diff=rel,
        shape=shape,
        dtype=dtype,
        note=_join(*notes),
    )


def _not_compared(
    path: str, left: torch.Tensor, right: torch.Tensor, shape: str, dtype: str
) -> OutputDetail | None:
    """The detail of two tensors that cannot be compared element by element (no data, other shapes), or None."""
    try:
        for t in (left, right):
            if t.is_sparse or t.device.type == "meta":
                return OutputDetail(
                    path=path,
                    match=None,
                    shape=shape,
                    dtype=dtype,
                    note=f"not compared: {t.layout} / {t.device} tensor",
                )
    except Exception as exc:  # fake/functional subclasses without real data
        return OutputDetail(path=path, match=None, shape=shape, dtype=dtype, note=f"not compared: {exc}")
    if tuple(left.shape) != tuple(right.shape):
        return OutputDetail(
            path=path,
            match=False,
            shape=shape,
            dtype=dtype,
            note=f"shape {_shape_text(left.shape)} vs {_shape_text(right.shape)}",
        )
    return None


def _integer_diff(lt: torch.Tensor, rt: torch.Tensor) -> tuple[int, float, float]:
    """(elements that differ, max abs diff, max rel diff) of two integer or bool tensors of one shape."""
    li, ri = (
        lt.to(torch.int64) if lt.dtype != torch.uint64 else lt.double(),
        rt.to(torch.int64) if rt.dtype != torch.uint64 else rt.double(),
    )
    d = (li - ri).abs()
    bad = int((d != 0).sum())
    max_abs = float(d.max())
    base = li.abs().to(torch.float64)
    return bad, max_abs, _max_rel(d.to(torch.float64), base, max_abs)


def _float_diff(
    lt: torch.Tensor, rt: torch.Tensor, rtol: float, atol: float
) -> tuple[int, float, float, list[str]]:
    """(elements beyond the tolerance, max abs diff, max rel diff, notes) of two floating tensors of one shape.

    Compared in chunks, in the promoted dtype (float32 at least); NaN at the same place on both
    sides counts as equal, NaN or inf on one side only as a mismatch.
    """
    work = torch.promote_types(lt.dtype, rt.dtype)
    if work in (torch.float16, torch.bfloat16):
        work = torch.float32
    if not (work.is_floating_point or work.is_complex):
        work = torch.float64
    lf = lt.reshape(-1)
    rf = rt.reshape(-1)
    n_bad = nan_mismatch = inf_mismatch = nan_same = 0
    max_abs = rel = 0.0
    # Chunks keep the temporaries in cache and avoid page-faulting fresh full-size buffers.
    for start in range(0, lf.numel(), _CHUNK):
        lw = lf[start : start + _CHUNK].to(work)
        rw = rf[start : start + _CHUNK].to(work)
        c = _float_chunk(lw, rw, rtol, atol)
        n_bad += c[0]
        max_abs = max(max_abs, c[1])
        rel = max(rel, c[2])
        nan_mismatch += c[3]
        inf_mismatch += c[4]
        nan_same += c[5]
    notes = []
    if nan_mismatch:
        notes.append(f"NaN on one side only at {nan_mismatch} element(s)")
    if inf_mismatch:
        notes.append(f"inf on one side only (or of opposite sign) at {inf_mismatch} element(s)")
    finite_bad = n_bad - nan_mismatch - inf_mismatch
    if finite_bad > 0:
        notes.append(f"{finite_bad} of {lt.numel()} elements beyond rtol={rtol:g}, atol={atol:g}")
    if nan_same and not nan_mismatch:
        notes.append("NaN at the same places on both sides (counted as equal)")
    return n_bad, max_abs, rel, notes


def _max_rel(d: torch.Tensor, base: torch.Tensor, max_abs: float) -> float:
    """Largest ``d / base`` over elements where ``d > 0`` (inf when ``base`` is 0 there)."""
    if max_abs == 0:
        return 0.0
    ratio = d.div_(base) if d.dtype == base.dtype else d / base  # 0/0 -> NaN, x/0 -> inf
    ratio = torch.nan_to_num_(ratio, nan=0.0, posinf=math.inf) if ratio.is_floating_point() else ratio
    return float(ratio.max())


def _float_chunk(
    lw: torch.Tensor, rw: torch.Tensor, rtol: float, atol: float
) -> tuple[int, float, float, int, int, int]:
    """(mismatches, max abs diff, max rel diff, one-sided NaN, inf mismatches, shared NaN) of a chunk."""
    d = (lw - rw).abs()
    if bool(torch.isfinite(d).all()):
        # No NaN/inf on either side (inf - inf would be NaN): a few passes, no boolean indexing.
        n_bad = int((d > rw.abs().mul_(rtol).add_(atol)).sum())
        max_abs = float(d.max())
        return n_bad, max_abs, _max_rel(d, lw.abs(), max_abs), 0, 0, 0
    close = torch.isclose(lw, rw, rtol=rtol, atol=atol, equal_nan=True)
    n_bad = int((~close).sum())
    lnan, rnan = torch.isnan(lw), torch.isnan(rw)
    nan_mismatch = int((lnan != rnan).sum())
    nan_same = int((lnan & rnan).sum())
    finite = torch.isfinite(lw) & torch.isfinite(rw)
    d = torch.where(finite, d, torch.zeros((), dtype=d.dtype))
    max_abs = float(d.max())
    rel = _max_rel(d, lw.abs(), max_abs)
    inf_mismatch = int(((torch.isinf(lw) | torch.isinf(rw)) & ~torch.eq(lw, rw) & ~(lnan | rnan)).sum())
    return n_bad, max_abs, rel, nan_mismatch, inf_mismatch, nan_same


def _kind(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor {_dtype_name(value.dtype)}{_shape_text(value.shape)}"
    if isinstance(value, _Empty):
        return f"empty {value.kind}"
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        return f"numpy array {value.dtype}{_shape_text(value.shape)}"
    if value is None:
        return "None"
    return type(value).__name__


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def compare_outputs(
    left: Mapping[str, Any],
    right: Mapping[str, Any],
    *,
    left_name: str,
    right_name: str,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> OutputComparison:
    """Compare two runs' outputs leaf by leaf.

    Args:
        left: ``{name: value}`` of the first run (e.g. ``{"return": out}`` or assigned names).
        right: the same for the second run.
        left_name: run name of ``left`` (``"baseline"``).
        right_name: run name of ``right`` (``"nonstrict"``, ``"eager"``).
        rtol: relative tolerance for floating values.
        atol: absolute tolerance for floating values.

    Returns:
        The comparison: ``match`` is False if any leaf differs (or a name is missing on one
        side), None if nothing could be compared, else True; ``details`` has one entry per
        leaf, differing leaves first.
    """
    lflat: dict[str, Any] = {}
    rflat: dict[str, Any] = {}
    for name, value in left.items():
        _flatten(value, str(name), lflat, 0, set())
    for name, value in right.items():
        _flatten(value, str(name), rflat, 0, set())
    details: list[OutputDetail] = []
    with _single_thread():
        compared = {
            p: _safe_compare_leaf(p, lv, rflat[p], rtol, atol) for p, lv in lflat.items() if p in rflat
        }
    for path in lflat:
        if path in compared:
            details.append(compared[path])
        else:
            details.append(
                OutputDetail(path=path, match=False, note=f"missing in {right_name} (present in {left_name})")
            )
    for path in rflat:
        if path not in lflat:
            details.append(
                OutputDetail(path=path, match=False, note=f"missing in {left_name} (present in {right_name})")
            )
    return comparison(left_name, right_name, details)
