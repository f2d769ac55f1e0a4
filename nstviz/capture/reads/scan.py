"""The scan: a function's bytecode, then the globals, closures and ``self`` attributes it reads."""

from __future__ import annotations

import builtins
import dataclasses
import dis
import functools
import types
from collections.abc import Callable
from typing import Any

import torch

from nstviz.capture._introspect import unwrap_bound
from nstviz.capture.reads.bytecode import (
    _TRAINING,
    _chain,
    _chain_len,
    _class_attr,
    _instance_chain,
    _instructions,
    _is_registered,
    _loads_self,
    _local_imports,
    _looks_like_method,
    _mutation,
    _owner_class,
    _registered_in_init,
    _resolve_attrs,
)
from nstviz.capture.reads.classify import (
    _LOAD_ATTRS,
    _MAX_DEPTH,
    _MAX_FUNCTIONS,
    _SKIP_VALUE_TYPES,
    _add,
    _add_random,
    _baked_detail,
    _Ctx,
    _describe,
    _is_code_like,
    _is_randomness,
    _is_rng_object,
    _user_function,
)
from nstviz.report import NonInputRead, ReadKind


def find_non_input_reads(fn: Callable) -> tuple[NonInputRead, ...]:
    """List what ``fn`` reads (or changes) that is not one of its inputs.

    Args:
        fn: a Python function, method (bound or not), ``functools.partial``, callable object,
            or a function already wrapped by ``torch._dynamo.nonstrict_trace``.

    Returns:
        One :class:`~nstviz.report.NonInputRead` per distinct name and kind, in code order,
        each with the line of ``fn`` where it first happens (for reads inside functions it
        calls: the line of that call) and a ``detail`` explaining the risk.
        Empty for builtins and other callables without Python bytecode.
    """
    func, instance = unwrap_bound(fn)
    if func is None:
        return ()
    ctx = _Ctx(results={}, scanned=set(), root=getattr(func, "__qualname__", getattr(func, "__name__", "?")))
    _scan_function(func, instance, ctx, depth=0, via=None)
    return tuple(ctx.results.values())


@dataclasses.dataclass(frozen=True, slots=True)
class _At:
    """Where a read happens: the instruction ``instrs[i]`` at ``line``, in the scan ``ctx``.

    ``via`` is the call path from the root function (None in the root), ``callees`` the
    functions this function's scan found to scan next.
    """

    instrs: list[dis.Instruction]
    i: int
    line: int
    ctx: _Ctx
    via: str | None
    callees: list

    def add(self, name: str, kind: ReadKind, detail: str) -> None:
        """Note a read of ``name`` here (the first of each name and kind is kept)."""
        _add(self.ctx, name, kind, self.line, self.via, detail)


def _scan_function(func: types.FunctionType, instance: Any, ctx: _Ctx, depth: int, via: str | None) -> None:
    if id(func.__code__) in ctx.scanned or len(ctx.scanned) >= _MAX_FUNCTIONS:
        return
    ctx.scanned.add(id(func.__code__))
    code = func.__code__
    self_name = code.co_varnames[0] if code.co_argcount and _looks_like_method(func, instance) else None
    cells = dict(zip(code.co_freevars, func.__closure__ or (), strict=False))
    callees: list[tuple[types.FunctionType, Any, str]] = []
    for instrs, sub in _instructions(code):
        line = sub.co_firstlineno
        local_imports = _local_imports(instrs)
        for i, ins in enumerate(instrs):
            if ins.starts_line is not None:
                line = ins.starts_line
            op = ins.opname
            if op == "LOAD_FAST" and ins.argval in local_imports:
                _on_value(str(ins.argval), local_imports[ins.argval], _At(instrs, i, line, ctx, via, callees))
            elif op == "LOAD_GLOBAL":
                _on_global(func, _At(instrs, i, line, ctx, via, callees))
            elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF") and ins.argval in cells:
                _on_closure(ins.argval, cells[ins.argval], _At(instrs, i, line, ctx, via, callees))
            elif op in ("STORE_GLOBAL", "DELETE_GLOBAL") or (
                op in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars
            ):
                scope = "global" if op.endswith("GLOBAL") else "nonlocal"
                _add(
                    ctx,
                    f"{ins.argval}",
                    "nonlocal_mutation",
                    line,
                    via,
                    f"assigns the {scope} `{ins.argval}`: under nonstrict_trace this assignment runs once, "
                    "when the function is traced, not on every call of the compiled code",
                )
            elif self_name is not None and ins.argval == self_name and _loads_self(op, sub is code):
                _on_self(func, instance, _At(instrs, i, line, ctx, via, callees))
    if depth < _MAX_DEPTH:
        for callee, callee_self, label, call_line in callees:
            outer = ctx.at_line
            # Reads inside callees are reported at the root function's line that leads to them.
            ctx.at_line = outer if outer is not None else call_line
            try:
                _scan_function(callee, callee_self, ctx, depth + 1, label)
            finally:
                ctx.at_line = outer


def _on_global(func: types.FunctionType, at: _At) -> None:
    name = str(at.instrs[at.i].argval)
    g = func.__globals__
    if name in g:
        value = g[name]
    elif hasattr(builtins, name):
        return
    else:
        return  # undefined now; it fails at call time anyway
    _on_value(name, value, at)


def _on_value(name: str, value: Any, at: _At) -> None:
    attrs, end, is_method = _chain(at.instrs, at.i)
    dotted = name
    if isinstance(value, types.ModuleType):
        target, n = _resolve_attrs(value, attrs)
        dotted = ".".join([name, *attrs[:n]])
        if _is_randomness(target, value, attrs[:n]):
            _add_random(at.ctx, dotted, at.line, at.via)
            return
        if n == 0 or isinstance(target, types.ModuleType):
            return
        value = target
        attrs = attrs[n:]
    _on_nonlocal(value, dotted, "global", (attrs, end, is_method), at)


def _on_closure(name: str, cell: types.CellType, at: _At) -> None:
    try:
        value = cell.cell_contents
    except ValueError:
        at.add(
            name,
            "closure",
            f"reads the closure variable `{name}` (not bound yet): whatever it holds when the function "
            "is traced is baked in as a constant without a guard",
        )
        return
    attrs, end, is_method = _chain(at.instrs, at.i)
    if isinstance(value, types.ModuleType):
        target, n = _resolve_attrs(value, attrs)
        if _is_randomness(target, value, attrs[:n]):
            _add_random(at.ctx, ".".join([name, *attrs[:n]]), at.line, at.via)
        return
    _on_nonlocal(value, name, "closure", (attrs, end, is_method), at)


def _on_nonlocal(value: Any, label: str, kind: str, chain: tuple[list[str], int, bool], at: _At) -> None:
    """A non-module value read as a global or a closure variable (``kind``), named ``label``."""
    attrs, end, is_method = chain
    if _is_randomness(value, None, []):
        _add_random(at.ctx, label, at.line, at.via)
        return
    if _is_rng_object(value):
        _add_random(at.ctx, ".".join([label, *attrs[:1]]), at.line, at.via)
        return
    if _is_code_like(value):
        callee = _user_function(value)
        if callee is not None:
            at.callees.append((callee, None, f"{callee.__qualname__}()", at.line))
        return
    if isinstance(value, _SKIP_VALUE_TYPES):
        return
    what = "the global" if kind == "global" else "the closure variable"
    mutated = _mutation(at.instrs, end, attrs, is_method)
    if mutated:
        at.add(
            label,
            "nonlocal_mutation",
            f"changes {what.replace(' variable', '')} {_describe(value)} `{label}` in place ({mutated}): under "
            "nonstrict_trace this happens once, when the function is traced, not on every call of the compiled code",
        )
        return
    at.add(label, kind, _baked_detail(what, label, value))


def _on_self(func: types.FunctionType, instance: Any, at: _At) -> None:
    """A read of ``self`` (the method's first argument): an attribute set, read, changed, or a method called."""
    if _self_assignment(at):
        return
    attrs, end, is_method = _chain(at.instrs, at.i)
    if not attrs:
        return
    cls = type(instance) if instance is not None else _owner_class(func)
    first = attrs[0]
    if _self_callable(cls, first, instance, at):
        return
    if instance is not None:
        _on_instance_value(instance, (attrs, end, is_method), at)
        return
    if first in _registered_in_init(cls):
        return
    dotted = f"self.{first}"
    if first == "training" and cls is not None and issubclass(cls, torch.nn.Module):
        at.add(dotted, "self_attribute", _TRAINING)
        return
    at.add(
        dotted,
        "self_attribute",
        f"reads `{dotted}`: if it holds a number, string, container or plain tensor attribute, "
        "nonstrict_trace bakes its value in as a constant without a guard: changing or rebinding it "
        "later is not seen by the compiled code (parameters, buffers and submodules are fine)",
    )


def _self_assignment(at: _At) -> bool:
    """``self.x = ...`` or ``self.x += ...`` at ``at``: noted as a mutation (True), else False."""
    instrs, i = at.instrs, at.i
    nxt = instrs[i + 1] if i + 1 < len(instrs) else None
    if nxt is not None and nxt.opname == "STORE_ATTR":
        at.add(
            f"self.{nxt.argval}",
            "nonlocal_mutation",
            f"sets `self.{nxt.argval}`: under nonstrict_trace this assignment runs once, when the function "
            "is traced, not on every call of the compiled code",
        )
        return True
    if (
        nxt is not None
        and nxt.opname == "COPY"
        and i + 2 < len(instrs)
        and instrs[i + 2].opname in _LOAD_ATTRS
    ):
        # self.x += ...: COPY, LOAD_ATTR x, ..., STORE_ATTR x
        attr = instrs[i + 2].argval
        at.add(
            f"self.{attr}",
            "nonlocal_mutation",
            f"updates `self.{attr}` in place: under nonstrict_trace this runs once, when the function is "
            "traced, not on every call of the compiled code",
        )
        return True
    return False


def _self_callable(cls: type | None, first: str, instance: Any, at: _At) -> bool:
    """``self.first`` is a method, property or other callable of the class: its user code is scanned next (True)."""
    static = _class_attr(cls, first)
    if not (
        isinstance(static, (types.FunctionType, staticmethod, classmethod, property, functools.cached_property))
        or (static is not None and callable(static) and not isinstance(static, torch.nn.Module))
    ):
        return False
    callee = static.fget if isinstance(static, property) else static
    if isinstance(callee, (staticmethod, classmethod)):
        callee = callee.__func__
    if isinstance(callee, types.FunctionType) and _user_function(callee) is not None:
        at.callees.append((callee, instance, f"self.{first}", at.line))
    return True


def _on_instance_value(instance: Any, chain: tuple[list[str], int, bool], at: _At) -> None:
    """``self.a.b...`` read from a live instance: a value changed in place, or baked in as a constant."""
    attrs, end, is_method = chain
    value, known = _instance_chain(instance, attrs)
    if not known:
        return
    if _is_code_like(value) or isinstance(value, (torch.nn.Module, *_SKIP_VALUE_TYPES)):
        return
    n = _chain_len(instance, attrs)
    if isinstance(value, torch.Tensor) and _is_registered(instance, attrs[:n]):
        return  # parameters and buffers: lifted into the graph, in-place updates are seen
    dotted = "self." + ".".join(attrs[:n])
    mutated = _mutation(at.instrs, end, attrs, is_method)
    if mutated:
        at.add(
            dotted,
            "nonlocal_mutation",
            f"changes {_describe(value)} `{dotted}` in place ({mutated}): under nonstrict_trace this "
            "happens once, when the function is traced, not on every call of the compiled code",
        )
        return
    detail = _TRAINING if dotted == "self.training" and isinstance(instance, torch.nn.Module) else None
    at.add(dotted, "self_attribute", detail or _baked_detail("the attribute", dotted, value))
