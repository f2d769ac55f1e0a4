"""Output check: do two runs produce the same values?

nonstrict_trace can be silently wrong (values baked in as constants, side effects run once at
trace time), and plain ``torch.compile`` can already change results. This pass compares the
values two runs produced, leaf by leaf, and says where and by how much they differ.

Values are pytrees of tensors and Python values: dicts, lists, tuples, namedtuples,
dataclasses, Hugging Face ``ModelOutput`` (a dict), numbers, strings, numpy arrays, ``None``.
Each leaf gets a path (``return.logits``, ``y[0]``, ``state['k']``) and an
:class:`~nstviz.report.OutputDetail`:

- floating/complex tensors and arrays match when ``|l - r| <= atol + rtol * |r|`` everywhere
  (``torch.isclose``); NaN at the same place counts as equal, ``inf`` must match in sign;
- integer and bool tensors must be exactly equal;
- a dtype or shape mismatch is a mismatch (its note says which);
- values that cannot be compared (arbitrary objects without a usable ``==``) get
  ``match=None`` and a note; they do not make the whole comparison fail.

Everything here is pure: inputs are not modified and no torch state is left changed. One
setting is changed *during* a call: torch's intra-op thread count is set to 1 and restored
afterwards (these passes are memory-bound, and on a busy machine one thread is an order of
magnitude faster); torch code running in another thread at that moment runs single-threaded
for as long.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import re
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import torch

from nstviz.capture._dtypes import short_dtype
from nstviz.report import OutputCheck, OutputComparison, OutputDetail

__all__ = ["MAX_DETAILS", "build_output_check", "compare_outputs", "snapshot_outputs"]

MAX_DETAILS = 2000
"""At most this many leaves are reported per comparison (the rest are summarised in a note)."""

_MAX_DEPTH = 32
_CHUNK = 1 << 20
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


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


# -- flattening -----------------------------------------------------------------------------


def _numpy() -> Any:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is installed with torch here
        return None
    return np


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
    notes: list[str] = []
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
        exact = not (lt.is_floating_point() or lt.is_complex() or rt.is_floating_point() or rt.is_complex())
        if exact:
            if dtype_ok and torch.equal(lt, rt):
                return OutputDetail(
                    path=path, match=True, max_abs_diff=0.0, max_rel_diff=0.0, shape=shape, dtype=dtype
                )
            li, ri = (
                lt.to(torch.int64) if lt.dtype != torch.uint64 else lt.double(),
                rt.to(torch.int64) if rt.dtype != torch.uint64 else rt.double(),
            )
            d = (li - ri).abs()
            bad = int((d != 0).sum())
            max_abs = float(d.max())
            base = li.abs().to(torch.float64)
            rel = _max_rel(d.to(torch.float64), base, max_abs)
            if bad:
                notes.append(f"{bad} of {lt.numel()} elements differ (integers must be equal)")
            return OutputDetail(
                path=path,
                match=dtype_ok and bad == 0,
                max_abs_diff=max_abs,
                max_rel_diff=rel,
                shape=shape,
                dtype=dtype,
                note=_join(*notes),
            )
        if dtype_ok and torch.equal(lt, rt):  # fast path: bitwise equal and no NaN
            return OutputDetail(
                path=path, match=True, max_abs_diff=0.0, max_rel_diff=0.0, shape=shape, dtype=dtype
            )
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
        if nan_mismatch:
            notes.append(f"NaN on one side only at {nan_mismatch} element(s)")
        if inf_mismatch:
            notes.append(f"inf on one side only (or of opposite sign) at {inf_mismatch} element(s)")
        finite_bad = n_bad - nan_mismatch - inf_mismatch
        if finite_bad > 0:
            notes.append(f"{finite_bad} of {lt.numel()} elements beyond rtol={rtol:g}, atol={atol:g}")
        if nan_same and not nan_mismatch:
            notes.append("NaN at the same places on both sides (counted as equal)")
    return OutputDetail(
        path=path,
        match=dtype_ok and n_bad == 0,
        max_abs_diff=max_abs,
        max_rel_diff=rel,
        shape=shape,
        dtype=dtype,
        note=_join(*notes),
    )


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


# -- public API -----------------------------------------------------------------------------


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
    match = _overall(details)
    diffs = [d.max_abs_diff for d in details if d.max_abs_diff is not None]
    rels = [d.max_rel_diff for d in details if d.max_rel_diff is not None]
    order = {False: 0, None: 1, True: 2}
    details.sort(key=lambda d: order[d.match])
    if len(details) > MAX_DETAILS:
        n_more = len(details) - MAX_DETAILS
        details = [
            *details[:MAX_DETAILS],
            OutputDetail(path="...", match=None, note=f"{n_more} more values not listed"),
        ]
    return OutputComparison(
        left=left_name,
        right=right_name,
        match=match,
        max_abs_diff=max(diffs) if diffs else None,
        max_rel_diff=max(rels) if rels else None,
        details=tuple(details),
    )


def _overall(details: Sequence[OutputDetail]) -> bool | None:
    if any(d.match is False for d in details):
        return False
    if any(d.match is True for d in details):
        return True
    return None


def build_output_check(
    comparisons: Sequence[OutputComparison], *, nondeterministic: bool = False
) -> OutputCheck:
    """Summarise pairwise comparisons into the Report's :class:`~nstviz.report.OutputCheck`.

    The headline (``match``, ``max_abs_diff``, ``details``) is baseline vs nonstrict when that
    pair was compared, else the first comparison.

    Args:
        comparisons: results of :func:`compare_outputs` (baseline vs nonstrict, vs eager...).
        nondeterministic: the code disagreed with itself on a re-run (e.g. eager vs eager), so
            differences may not be caused by compiling or by nonstrict_trace.

    Returns:
        The output check; ``match`` is None with a ``skipped_reason`` when nothing was compared.
    """
    if not comparisons:
        return OutputCheck(
            match=None, nondeterministic=nondeterministic, skipped_reason="no outputs were compared"
        )
    headline = next(
        (c for c in comparisons if {c.left, c.right} == {"baseline", "nonstrict"}),
        comparisons[0],
    )
    skipped = None
    if headline.match is None:
        skipped = "no comparable values: the code returned or assigned nothing that can be compared"
    return OutputCheck(
        match=headline.match,
        max_abs_diff=headline.max_abs_diff,
        max_rel_diff=headline.max_rel_diff,
        details=headline.details,
        comparisons=tuple(comparisons),
        nondeterministic=nondeterministic,
        skipped_reason=skipped,
    )
