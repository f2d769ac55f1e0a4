"""Reading bytecode: instructions, attribute chains, stores, ``self`` attributes registered in ``__init__``."""

from __future__ import annotations

import builtins
import dis
import inspect
import types
import weakref
from collections.abc import Iterator
from typing import Any

import torch

from nstviz.capture.reads.classify import _LOAD_ATTRS, _MUTATING_METHODS


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
