"""What a function reads that is not one of its inputs, found from its bytecode.

``torch._dynamo.nonstrict_trace`` runs the marked function once, at trace time, with fake
tensors, and records the tensor operations it performs. Everything else the function looks at
is evaluated then and baked into the graph **without a guard**:

- module globals and closure cells holding numbers, strings, containers or tensors: rebinding
  them later (``SCALE = ...``, ``CFG["k"] = ...``) is not seen by the compiled code (measured
  on torch 2.13: stale results, no error, no recompile). In-place updates of a *tensor* are
  seen, because the tensor itself is lifted into the graph;
- attributes of ``self`` (numbers, containers, plain tensor attributes): same as globals;
- Python-level randomness and clocks (``random.*``, ``numpy.random.*``, ``time.*``): drawn once,
  so every call of the compiled code returns the first call's values;
- assignments to globals, nonlocals or ``self`` attributes and in-place changes of global
  containers: they happen once, at trace time, not on every call.

:func:`find_non_input_reads` lists these from the code object (no source needed), following
calls into other plain Python functions and methods of ``self`` a few levels deep, because
nonstrict_trace traces through them too. It is a static scan: it sees names, not values that
flow through arguments, and it may list a read on a path the function never takes.
"""

from __future__ import annotations

import builtins
import dis
import enum
import functools
import inspect
import types
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from nstviz.capture._introspect import unwrap_bound
from nstviz.report import NonInputRead, ReadKind

__all__ = ["find_non_input_reads"]

_MAX_DEPTH = 3
"""How many levels of calls into other Python functions are followed."""
_MAX_FUNCTIONS = 40
"""Stop after scanning this many functions (a guard against huge call graphs)."""

_RANDOM_MODULES = ("random", "numpy.random", "time", "secrets", "uuid", "datetime")
_MUTATING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "popitem",
        "remove",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
        "sort",
        "reverse",
        "__setitem__",
        "__delitem__",
    }
)
_LOAD_ATTRS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_SKIP_VALUE_TYPES: tuple[type, ...] = (
    torch.dtype,
    torch.device,
    enum.Enum,
    types.ModuleType,
    type(None),
    type(Ellipsis),
    torch.layout,
    torch.memory_format,
    torch.nn.Module,
)


@dataclass
class _Ctx:
    results: dict[tuple[str, str], NonInputRead]
    scanned: set[int]
    root: str
    at_line: int | None = None


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


# -- scanning -----------------------------------------------------------------------------------


def _instructions(code: types.CodeType) -> Iterator[tuple[list[dis.Instruction], types.CodeType]]:
    """Yield the instructions of ``code`` and of nested comprehensions (not nested defs)."""
    yield list(dis.get_instructions(code)), code
    for const in code.co_consts:
        if (
            isinstance(const, types.CodeType)
            and const.co_name.startswith("<")
            and const.co_name != "<lambda>"
        ):
            yield from _instructions(const)


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
                _on_value(str(ins.argval), local_imports[ins.argval], instrs, i, line, ctx, via, callees)
            elif op == "LOAD_GLOBAL":
                _on_global(func, instrs, i, line, ctx, via, callees)
            elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF") and ins.argval in cells:
                _on_closure(ins.argval, cells[ins.argval], instrs, i, line, ctx, via, callees)
            elif op == "STORE_GLOBAL" or op == "DELETE_GLOBAL":
                _add(
                    ctx,
                    f"{ins.argval}",
                    "nonlocal_mutation",
                    line,
                    via,
                    f"assigns the global `{ins.argval}`: under nonstrict_trace this assignment runs once, "
                    "when the function is traced, not on every call of the compiled code",
                )
            elif op in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars:
                _add(
                    ctx,
                    f"{ins.argval}",
                    "nonlocal_mutation",
                    line,
                    via,
                    f"assigns the nonlocal `{ins.argval}`: under nonstrict_trace this assignment runs once, "
                    "when the function is traced, not on every call of the compiled code",
                )
            elif self_name is not None and ins.argval == self_name and _loads_self(op, sub is code):
                _on_self(func, instance, instrs, i, line, ctx, via, callees)
    if depth < _MAX_DEPTH:
        for callee, callee_self, label, call_line in callees:
            outer = ctx.at_line
            # Reads inside callees are reported at the root function's line that leads to them.
            ctx.at_line = outer if outer is not None else call_line
            try:
                _scan_function(callee, callee_self, ctx, depth + 1, label)
            finally:
                ctx.at_line = outer


def _local_imports(instrs: list[dis.Instruction]) -> dict[str, Any]:
    """Local names bound by ``import m`` / ``from m import f`` inside the function.

    Only modules already imported are looked at (``sys.modules``): the scan never imports.
    """
    import sys

    found: dict[str, Any] = {}
    for i, ins in enumerate(instrs):
        if ins.opname != "IMPORT_NAME" or not isinstance(ins.argval, str):
            continue
        module = sys.modules.get(ins.argval)
        if module is None:
            continue
        j = i + 1
        if j < len(instrs) and instrs[j].opname == "STORE_FAST":
            found[str(instrs[j].argval)] = sys.modules.get(ins.argval.split(".")[0], module)
            continue
        while (
            j + 1 < len(instrs) and instrs[j].opname == "IMPORT_FROM" and instrs[j + 1].opname == "STORE_FAST"
        ):
            attr = getattr(module, str(instrs[j].argval), None)
            if attr is not None:
                found[str(instrs[j + 1].argval)] = attr
            j += 2
    return found


def _loads_self(op: str, in_function: bool) -> bool:
    # ``self`` is a local (LOAD_FAST), or a cell when a comprehension or inner function captures
    # it (LOAD_DEREF, in the function and in the comprehension alike).
    return op == "LOAD_DEREF" or (in_function and op == "LOAD_FAST")


def _looks_like_method(func: types.FunctionType, instance: Any) -> bool:
    if instance is not None:
        return True
    names = func.__code__.co_varnames
    return bool(names) and names[0] == "self" and "." in func.__qualname__


def _chain(instrs: list[dis.Instruction], i: int) -> tuple[list[str], int, bool]:
    """Attribute names loaded right after instruction ``i``; index of the last; last is a method."""
    attrs: list[str] = []
    j = i + 1
    is_method = False
    while j < len(instrs) and instrs[j].opname in _LOAD_ATTRS:
        attrs.append(str(instrs[j].argval))
        is_method = instrs[j].opname == "LOAD_METHOD"
        j += 1
    return attrs, j - 1, is_method


def _stored_into(instrs: list[dis.Instruction], end: int) -> str | None:
    """If the value loaded at ``end`` is the target of ``x[k] = v``/``del x[k]``/``x.a = v``."""
    for j in range(end + 1, min(end + 4, len(instrs))):
        op = instrs[j].opname
        if op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            return "item"
        if op == "STORE_ATTR" and j == end + 1:
            return f"attribute {instrs[j].argval}"
        if op not in ("LOAD_CONST", "LOAD_FAST", "LOAD_GLOBAL", "LOAD_DEREF", "COPY", "SWAP"):
            return None
    return None


def _resolve_attrs(value: Any, attrs: list[str]) -> tuple[Any, int]:
    """Follow ``attrs`` from ``value`` as far as they resolve; return (object, how many)."""
    for n, attr in enumerate(attrs):
        if isinstance(value, types.ModuleType) or n == 0 or _is_namespace_like(value):
            try:
                value = (
                    inspect.getattr_static(value, attr)
                    if not isinstance(value, types.ModuleType)
                    else getattr(value, attr)
                )
            except AttributeError:
                return value, n
        else:
            return value, n
    return value, len(attrs)


def _is_namespace_like(value: Any) -> bool:
    return isinstance(value, type | types.SimpleNamespace)


def _on_global(
    func: types.FunctionType,
    instrs: list[dis.Instruction],
    i: int,
    line: int,
    ctx: _Ctx,
    via: str | None,
    callees: list,
) -> None:
    name = str(instrs[i].argval)
    g = func.__globals__
    if name in g:
        value = g[name]
    elif hasattr(builtins, name):
        return
    else:
        return  # undefined now; it fails at call time anyway
    _on_value(name, value, instrs, i, line, ctx, via, callees)


def _on_value(
    name: str,
    value: Any,
    instrs: list[dis.Instruction],
    i: int,
    line: int,
    ctx: _Ctx,
    via: str | None,
    callees: list,
    local_import: bool = False,
) -> None:
    attrs, end, is_method = _chain(instrs, i)
    dotted = name
    if isinstance(value, types.ModuleType):
        target, n = _resolve_attrs(value, attrs)
        dotted = ".".join([name, *attrs[:n]])
        if _is_randomness(target, value, attrs[:n]):
            _add_random(ctx, dotted, line, via)
            return
        if n == 0 or isinstance(target, types.ModuleType):
            return
        value = target
        attrs = attrs[n:]
    if _is_randomness(value, None, []):
        _add_random(ctx, dotted, line, via)
        return
    if _is_rng_object(value):
        _add_random(ctx, ".".join([dotted, *attrs[:1]]), line, via)
        return
    if _is_code_like(value):
        callee = _user_function(value)
        if callee is not None:
            callees.append((callee, None, f"{callee.__qualname__}()", line))
        return
    if isinstance(value, _SKIP_VALUE_TYPES):
        return
    mutated = _mutation(instrs, end, attrs, is_method)
    if mutated:
        _add(
            ctx,
            dotted,
            "nonlocal_mutation",
            line,
            via,
            f"changes the global {_describe(value)} `{dotted}` in place ({mutated}): under nonstrict_trace "
            "this happens once, when the function is traced, not on every call of the compiled code",
        )
        return
    _add(ctx, dotted, "global", line, via, _baked_detail("the global", dotted, value))


def _on_closure(
    name: str,
    cell: types.CellType,
    instrs: list[dis.Instruction],
    i: int,
    line: int,
    ctx: _Ctx,
    via: str | None,
    callees: list,
) -> None:
    try:
        value = cell.cell_contents
    except ValueError:
        _add(
            ctx,
            name,
            "closure",
            line,
            via,
            f"reads the closure variable `{name}` (not bound yet): whatever it holds when the function "
            "is traced is baked in as a constant without a guard",
        )
        return
    attrs, end, is_method = _chain(instrs, i)
    if isinstance(value, types.ModuleType):
        target, n = _resolve_attrs(value, attrs)
        if _is_randomness(target, value, attrs[:n]):
            _add_random(ctx, ".".join([name, *attrs[:n]]), line, via)
        return
    if _is_randomness(value, None, []):
        _add_random(ctx, name, line, via)
        return
    if _is_rng_object(value):
        _add_random(ctx, ".".join([name, *attrs[:1]]), line, via)
        return
    if _is_code_like(value):
        callee = _user_function(value)
        if callee is not None:
            callees.append((callee, None, f"{callee.__qualname__}()", line))
        return
    if isinstance(value, _SKIP_VALUE_TYPES):
        return
    mutated = _mutation(instrs, end, attrs, is_method)
    if mutated:
        _add(
            ctx,
            name,
            "nonlocal_mutation",
            line,
            via,
            f"changes the closure {_describe(value)} `{name}` in place ({mutated}): under nonstrict_trace "
            "this happens once, when the function is traced, not on every call of the compiled code",
        )
        return
    _add(ctx, name, "closure", line, via, _baked_detail("the closure variable", name, value))


def _on_self(
    func: types.FunctionType,
    instance: Any,
    instrs: list[dis.Instruction],
    i: int,
    line: int,
    ctx: _Ctx,
    via: str | None,
    callees: list,
) -> None:
    nxt = instrs[i + 1] if i + 1 < len(instrs) else None
    if nxt is not None and nxt.opname == "STORE_ATTR":
        _add(
            ctx,
            f"self.{nxt.argval}",
            "nonlocal_mutation",
            line,
            via,
            f"sets `self.{nxt.argval}`: under nonstrict_trace this assignment runs once, when the function "
            "is traced, not on every call of the compiled code",
        )
        return
    if (
        nxt is not None
        and nxt.opname == "COPY"
        and i + 2 < len(instrs)
        and instrs[i + 2].opname in _LOAD_ATTRS
    ):
        # self.x += ...: COPY, LOAD_ATTR x, ..., STORE_ATTR x
        attr = instrs[i + 2].argval
        _add(
            ctx,
            f"self.{attr}",
            "nonlocal_mutation",
            line,
            via,
            f"updates `self.{attr}` in place: under nonstrict_trace this runs once, when the function is "
            "traced, not on every call of the compiled code",
        )
        return
    attrs, end, is_method = _chain(instrs, i)
    if not attrs:
        return
    cls = type(instance) if instance is not None else _owner_class(func)
    first = attrs[0]
    static = _class_attr(cls, first)
    if isinstance(
        static, (types.FunctionType, staticmethod, classmethod, property, functools.cached_property)
    ) or (static is not None and callable(static) and not isinstance(static, torch.nn.Module)):
        callee = static.fget if isinstance(static, property) else static
        if isinstance(callee, (staticmethod, classmethod)):
            callee = callee.__func__
        if isinstance(callee, types.FunctionType) and _user_function(callee) is not None:
            callees.append((callee, instance, f"self.{first}", line))
        return
    if instance is not None:
        value, known = _instance_chain(instance, attrs)
        if not known:
            return
        if _is_code_like(value) or isinstance(value, (torch.nn.Module, *_SKIP_VALUE_TYPES)):
            return
        n = _chain_len(instance, attrs)
        if isinstance(value, torch.Tensor) and _is_registered(instance, attrs[:n]):
            return  # parameters and buffers: lifted into the graph, in-place updates are seen
        dotted = "self." + ".".join(attrs[:n])
        mutated = _mutation(instrs, end, attrs, is_method)
        if mutated:
            _add(
                ctx,
                dotted,
                "nonlocal_mutation",
                line,
                via,
                f"changes {_describe(value)} `{dotted}` in place ({mutated}): under nonstrict_trace this "
                "happens once, when the function is traced, not on every call of the compiled code",
            )
            return
        detail = _TRAINING if dotted == "self.training" and isinstance(instance, torch.nn.Module) else None
        _add(
            ctx, dotted, "self_attribute", line, via, detail or _baked_detail("the attribute", dotted, value)
        )
        return
    if first in _registered_in_init(cls):
        return
    dotted = f"self.{first}"
    if first == "training" and cls is not None and issubclass(cls, torch.nn.Module):
        _add(ctx, dotted, "self_attribute", line, via, _TRAINING)
        return
    _add(
        ctx,
        dotted,
        "self_attribute",
        line,
        via,
        f"reads `{dotted}`: if it holds a number, string, container or plain tensor attribute, "
        "nonstrict_trace bakes its value in as a constant without a guard: changing or rebinding it "
        "later is not seen by the compiled code (parameters, buffers and submodules are fine)",
    )


_TRAINING = (
    "reads `self.training`: nonstrict_trace bakes the train/eval mode in as a constant without a "
    "guard, so calling model.eval() or model.train() later does not change what the compiled code "
    "does (dropout, batch-norm statistics...) until it is compiled again"
)


def _instance_chain(instance: Any, attrs: list[str]) -> tuple[Any, bool]:
    value = instance
    for n, attr in enumerate(attrs):
        if n > 0 and (isinstance(value, torch.Tensor) or not _walkable(value)):
            break
        try:
            value = getattr(value, attr)
        except Exception:
            return None, False
    return value, True


def _chain_len(instance: Any, attrs: list[str]) -> int:
    value = instance
    for n, attr in enumerate(attrs):
        if n > 0 and (isinstance(value, torch.Tensor) or not _walkable(value)):
            return n
        value = getattr(value, attr, None)
    return len(attrs)


def _walkable(value: Any) -> bool:
    return isinstance(value, torch.nn.Module | types.SimpleNamespace) or (
        hasattr(value, "__dict__")
        and not isinstance(value, (types.FunctionType, type, types.ModuleType))
        and not callable(value)
    )


def _is_registered(instance: Any, attrs: list[str]) -> bool:
    owner = instance
    for attr in attrs[:-1]:
        owner = getattr(owner, attr, None)
    if not isinstance(owner, torch.nn.Module):
        return False
    leaf = attrs[-1] if len(attrs) else ""
    return leaf in owner._parameters or leaf in owner._buffers


def _registered_in_init(cls: type | None) -> frozenset[str]:
    """Names an ``nn.Module`` class registers in ``__init__`` (submodules, parameters, buffers).

    Read from the source of each ``__init__`` in the class's MRO: ``self.x = <Module or
    Parameter class>(...)`` and ``self.register_buffer("x", ...)`` / ``register_parameter``.
    """
    if cls is None or not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        return frozenset()
    cached = _INIT_CACHE.get(cls)
    if cached is not None:
        return cached
    import ast
    import textwrap

    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if not isinstance(init, types.FunctionType) or (klass.__module__ or "").startswith("torch."):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
        except (OSError, TypeError, SyntaxError):
            continue
        me = init.__code__.co_varnames[0] if init.__code__.co_argcount else "self"
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                callee = _eval_dotted(node.value.func, init.__globals__)
                if isinstance(callee, type) and issubclass(callee, torch.nn.Module | torch.nn.Parameter):
                    for target in node.targets:
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == me
                        ):
                            names.add(target.attr)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr
                in ("register_buffer", "register_parameter", "register_module", "add_module")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names.add(node.args[0].value)
    result = frozenset(names)
    _INIT_CACHE[cls] = result
    return result


_INIT_CACHE: weakref.WeakKeyDictionary[type, frozenset[str]] = weakref.WeakKeyDictionary()
"""Weak: classes redefined cell after cell must not be kept alive by nstviz."""


def _eval_dotted(node: Any, namespace: dict[str, Any]) -> Any:
    import ast

    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    obj = namespace.get(node.id, getattr(builtins, node.id, None))
    for part in reversed(parts):
        obj = getattr(obj, part, None)
    return obj


def _owner_class(func: types.FunctionType) -> type | None:
    parts = func.__qualname__.split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    obj: Any = func.__globals__.get(parts[0])
    for part in parts[1:-1]:
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) else None


def _class_attr(cls: type | None, name: str) -> Any:
    if cls is None:
        return None
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _mutation(instrs: list[dis.Instruction], end: int, attrs: list[str], is_method: bool) -> str | None:
    if is_method and attrs and attrs[-1] in _MUTATING_METHODS:
        return f".{attrs[-1]}()"
    if (
        attrs
        and attrs[-1] in _MUTATING_METHODS
        and end + 1 < len(instrs)
        and instrs[end + 1].opname in ("PRECALL", "CALL")
    ):
        return f".{attrs[-1]}()"
    stored = _stored_into(instrs, end)
    if stored == "item":
        return "item assignment"
    return stored


# -- classification -----------------------------------------------------------------------------


def _is_code_like(value: Any) -> bool:
    if isinstance(value, type):
        return True
    return callable(value) and not isinstance(value, torch.Tensor | torch.nn.Module)


def _user_function(value: Any) -> types.FunctionType | None:
    """The plain Python function behind ``value`` when it is user code worth following."""
    if isinstance(value, type):
        return None
    func, _ = unwrap_bound(value)
    if func is None:
        return None
    module = getattr(func, "__module__", "") or ""
    if module.split(".")[0] in ("torch", "numpy", "functools", "typing", "builtins", "transformers", "math"):
        return None
    return func


def _is_randomness(value: Any, module: types.ModuleType | None, attrs: list[str]) -> bool:
    mod_name = ""
    if module is not None:
        mod_name = ".".join([module.__name__, *attrs[:-1]]) if attrs else module.__name__
    if isinstance(value, types.ModuleType):
        return False
    owner = getattr(value, "__self__", None)
    try:
        import random as _random

        if isinstance(owner, _random.Random):
            return True
    except Exception:  # pragma: no cover
        pass
    np_owner = type(owner).__module__ if owner is not None else ""
    if np_owner.startswith("numpy.random"):
        return True
    fmod = getattr(value, "__module__", None) or mod_name
    return any(fmod == m or fmod.startswith(m + ".") for m in _RANDOM_MODULES) and callable(value)


def _is_rng_object(value: Any) -> bool:
    """A Python-level random generator instance (``random.Random``, numpy Generator/RandomState)."""
    import random as _random

    if isinstance(value, _random.Random):
        return True
    module = type(value).__module__ or ""
    return module.startswith("numpy.random")


def _add_random(ctx: _Ctx, dotted: str, line: int, via: str | None) -> None:
    _add(
        ctx,
        dotted,
        "randomness",
        line,
        via,
        f"calls `{dotted}()`: Python-level randomness and clocks run once, when nonstrict_trace traces "
        "the function, so every call of the compiled code reuses that first value (use torch's "
        "random functions on tensors instead, which are traced as ops)",
    )


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor (shape {list(value.shape)}, {str(value.dtype).removeprefix('torch.')})"
    if isinstance(value, bool):
        return f"bool ({value})"
    if isinstance(value, (int, float, complex)):
        return f"{type(value).__name__} ({value!r:.40})"
    if isinstance(value, str):
        text = repr(value)
        return f"str ({text if len(text) < 40 else text[:37] + '...'})"
    try:
        import numpy as np

        if isinstance(value, np.ndarray):
            return f"numpy array (shape {list(value.shape)})"
    except ImportError:  # pragma: no cover
        pass
    return type(value).__name__


_BACKENDS = (
    " (with aot_autograd backends: inductor, aot_eager, nstviz's record; the eager backend calls "
    "the function at run time instead)"
)
_INDUCTOR_TENSOR = (
    "; with the inductor backend, torch 2.13 fails to compile it at all ('Please convert all "
    "Tensors to FakeTensors first'): pass the tensor in as an argument instead"
)


def _baked_detail(what: str, name: str, value: Any) -> str:
    desc = _describe(value)
    if isinstance(value, torch.Tensor):
        return (
            f"reads {what} `{name}`, a {desc}: nonstrict_trace bakes this tensor in as a constant "
            f"without a guard{_BACKENDS}; in-place updates are seen, but if you rebind {name} later, "
            f"the compiled code keeps using the old tensor{_INDUCTOR_TENSOR}"
        )
    if isinstance(value, (dict, list, set, tuple)) or hasattr(value, "__dict__"):
        return (
            f"reads {what} `{name}`, {_article(desc)} {desc}: nonstrict_trace bakes what it reads from it "
            f"in as constants without a guard{_BACKENDS}: if you change an entry or rebind {name} later, "
            "the compiled code keeps the old values"
        )
    return (
        f"reads {what} `{name}`, {_article(desc)} {desc}: nonstrict_trace bakes this value in as a constant "
        f"without a guard{_BACKENDS}: if you rebind {name} later, the compiled code keeps the old value"
    )


def _article(desc: str) -> str:
    return "an" if desc[:1].lower() in "aeiou" else "a"


def _add(ctx: _Ctx, name: str, kind: ReadKind, line: int, via: str | None, detail: str) -> None:
    key = (name, kind)
    if key in ctx.results:
        return
    if via:
        detail = f"{detail} (in {via}, called from {ctx.root})"
    ctx.results[key] = NonInputRead(
        name=name, kind=kind, line=ctx.at_line if ctx.at_line is not None else line, detail=detail
    )
