"""Resolve ``nonstrict=`` specs to functions and mark them non-strict by id.

A spec is a name in the namespace (``"get_magic_num"``), a dotted path
(``"mymod.helper"``, ``"Block.stats"``, ``"model.blocks.0.norm_stats"``) or a callable.
Marking adds the *function object's* id to Dynamo's trace-rule id sets, which makes every
call site of it non-strict without editing or rebinding anything; :func:`marked` always
undoes it. Methods are marked through their underlying function (``Block.stats``).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from nstviz.capture import _torch_compat
from nstviz.capture._introspect import qualified_name
from nstviz.capture.compiled_entry import compiled_entries, compiled_entries_wrapped
from nstviz.capture.forward_hooks import effective_forwards
from nstviz.errors import NameResolutionError, NotMarkableError
from nstviz.report import MarkedFunction
from nstviz.tracing.stacks import is_torch_file

Spec = str | Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved spec: the function to mark, how it was named, and any warning."""

    spec: str
    function: Callable[..., Any]
    warning: str | None = None

    @property
    def qualname(self) -> str:  # noqa: D102
        return qualified_name(self.function)


def source_range(fn: Any) -> tuple[str | None, int | None, int | None]:
    """``(file, first line, last line)`` of a Python function's source, where known."""
    fn = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(fn, "__code__", None)
    if code is None:
        return None, None, None
    try:
        lines, start = inspect.getsourcelines(fn)
        return code.co_filename, start, start + len(lines) - 1
    except (OSError, TypeError):
        return code.co_filename, code.co_firstlineno, None


def marked_function(target: Target, origin: str = "requested") -> MarkedFunction:
    """The :class:`MarkedFunction` record of a target (``applied`` is set after the run)."""
    file, start, end = source_range(target.function)
    return MarkedFunction(
        spec=target.spec,
        qualname=target.qualname,
        file=file,
        line_start=start,
        line_end=end,
        origin=origin,  # type: ignore[arg-type]
        warning=target.warning,
    )


def resolve(specs: Iterable[Spec], namespace: Mapping[str, Any] | None = None) -> tuple[Target, ...]:
    """Resolve every spec to exactly one markable function.

    Raises:
        NameResolutionError: a name is unknown or ambiguous.
        NotMarkableError: the object cannot be traced non-strictly (builtin, class, ...).
    """
    ns = dict(namespace or {})
    out: list[Target] = []
    seen: set[int] = set()
    for spec in specs:
        target = resolve_one(spec, ns)
        check_not_local_to_compiled(target, ns)
        if id(target.function) not in seen:
            seen.add(id(target.function))
            out.append(target)
    return tuple(out)


def resolve_one(spec: Spec, namespace: Mapping[str, Any]) -> Target:
    """Resolve one spec (see :func:`resolve`)."""
    if isinstance(spec, str):
        text = spec.strip()
        if not text:
            raise NameResolutionError("an empty name was given to nonstrict=; give a function name like 'helper'")
        obj = _lookup(text, namespace)
        return _to_target(text, obj)
    if callable(spec):
        return _to_target(qualified_name(spec), spec)
    raise NameResolutionError(
        f"nonstrict= takes function names or callables, got {type(spec).__name__} {spec!r:.60}"
    )


def _lookup(text: str, namespace: Mapping[str, Any]) -> Any:
    parts = text.split(".")
    head = parts[0]
    if head in namespace:
        obj = namespace[head]
    elif len(parts) > 1 and _importable(parts):
        module_name, rest = _importable(parts)
        obj = sys.modules[module_name]
        parts = [module_name, *rest]
    elif len(parts) == 1:
        return _search(head, namespace)
    else:
        raise NameResolutionError(
            f"cannot resolve {text!r}: {head!r} is not defined in the namespace; define or import it "
            "before the code runs, or pass the function object itself"
        )
    for i, part in enumerate(parts[1:], start=1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = obj[int(part)] if part.isdigit() else obj[part]
            except Exception:
                where = ".".join(parts[:i])
                raise NameResolutionError(
                    f"cannot resolve {text!r}: {where} ({type(obj).__name__}) has no attribute {part!r}"
                ) from None
    return obj


def _importable(parts: list[str]) -> tuple[str, list[str]] | None:
    """The longest module prefix of a dotted path that is (or can be) imported, and the rest."""
    import importlib

    for cut in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:cut])
        if name not in sys.modules:
            try:
                importlib.import_module(name)
            except Exception:
                continue
        return name, parts[cut:]
    return None


def _search(name: str, namespace: Mapping[str, Any]) -> Any:
    """A bare name not bound in the namespace: look for it one level down (unique match)."""
    found: dict[int, tuple[str, Any]] = {}
    nested_in: list[str] = []
    for key, value in list(namespace.items()):
        if key.startswith("_"):
            continue
        if isinstance(value, type) and not _is_library(value):
            member = value.__dict__.get(name)
            if member is not None and _function_of(member) is not None:
                found[id(_function_of(member))] = (f"{key}.{name}", member)
        elif isinstance(value, types.ModuleType) and not _is_library(value):
            member = getattr(value, name, None)
            if isinstance(member, types.FunctionType):
                found[id(member)] = (f"{key}.{name}", member)
        inner = _plain(value)
        code = getattr(inner, "__code__", None)
        if isinstance(code, types.CodeType) and _defines(code, name):
            nested_in.append(key)
        # a helper the namespace's functions call, defined in their own module
        module_globals = getattr(inner, "__globals__", None)
        if module_globals is None and isinstance(value, type) and not _is_library(value):
            module_globals = getattr(sys.modules.get(value.__module__), "__dict__", None)
        if isinstance(module_globals, dict) and module_globals is not namespace:
            member = module_globals.get(name)
            if isinstance(member, types.FunctionType):
                found[id(member)] = (f"{getattr(member, '__module__', '?')}.{name}", member)
    if len(found) == 1:
        return next(iter(found.values()))[1]
    if len(found) > 1:
        options = ", ".join(sorted(path for path, _ in found.values()))
        raise NameResolutionError(f"{name!r} is ambiguous: it could be {options}; pass one of these dotted names")
    if nested_in:
        raise NotMarkableError(
            f"{name!r} is defined inside {nested_in[0]!r}: every call creates a new function object, "
            "so nonstrict_trace cannot mark it by name; move it to module level (or mark the enclosing "
            "function instead)"
        )
    raise NameResolutionError(
        f"{name!r} is not defined in the namespace; define or import it before the code runs, "
        "use a dotted path like 'module.func' or 'Class.method', or pass the function itself"
    )


def _plain(value: Any) -> Any:
    """The Python function behind a value: unwraps ``torch.compile`` and decorators."""
    value = _torch_compat.compiled_original(value, modules=False) or value
    if isinstance(value, (types.FunctionType, types.MethodType)):
        try:
            return inspect.unwrap(value)
        except ValueError:
            return value
    return value


def _defines(code: types.CodeType, name: str, depth: int = 0) -> bool:
    if depth > 0 and name in code.co_varnames + code.co_cellvars:
        return False  # a local of a nested function: reported by the caller's level
    if depth == 0 and name in code.co_varnames + code.co_cellvars and _has_nested_code(code):
        return True
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name or (depth < 3 and _defines(const, name, depth + 1)):
                return True
    return False


def _has_nested_code(code: types.CodeType) -> bool:
    return any(isinstance(const, types.CodeType) for const in code.co_consts)


def _is_library(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    if module == "builtins" and isinstance(obj, type):
        # a class defined in a namespace without ``__name__`` (a plain dict given to exec) also
        # gets ``__module__ == "builtins"``: only the real builtin types are library code
        return getattr(builtins, obj.__name__, None) is obj or not _has_python_methods(obj)
    root = str(module).split(".")[0]
    return root in ("torch", "numpy", "builtins", "typing", "transformers") or root in sys.stdlib_module_names


def _has_python_methods(cls: type) -> bool:
    return any(_function_of(member) is not None for member in list(vars(cls).values()))


def _function_of(obj: Any) -> Callable[..., Any] | None:
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        return obj
    return None


def _to_target(spec: str, obj: Any) -> Target:
    import torch

    if isinstance(obj, torch.nn.Module) and not _torch_compat.is_compiled_object(obj):
        forward = type(obj).forward
        return Target(
            spec=spec,
            function=forward,
            warning=(  # the mark is made effective with a no-op forward pre-hook
                f"{spec} is an nn.Module: its {type(obj).__name__}.forward was marked; nstviz registers a "
                "no-op forward pre-hook for the run, without which torch ignores marks "
                "on forward for module(...) calls"
            ),
        )
    compiled = _torch_compat.compiled_original(obj, modules=False) if _torch_compat.is_compiled_object(obj) else None
    if isinstance(compiled, types.FunctionType) and not refusals(compiled):
        # the function torch.compile compiles: marked as @nonstrict_trace under @torch.compile
        # is (capture/compiled_entry.py), torch then does what it does with it
        return Target(
            spec=spec,
            function=compiled,
            warning=(
                f"{spec} is wrapped by torch.compile: the function torch.compile compiles is marked, as torch "
                "does with @torch.compile over @nonstrict_trace (where the wrapper is called, Dynamo compiles a "
                "wrapper frame that calls it non-strictly)"
            ),
        )
    refused = [k for k in refusals(obj) if k in REFUSED_WHEN_NAMED]
    if refused:
        raise NotMarkableError(_refusal_text(refused[0], spec, obj))
    fn = _function_of(obj)
    assert fn is not None
    warning = None
    if fn.__name__ == "forward":  # made effective by forward_hooks.effective_forwards
        warning = (
            f"{spec} is an nn.Module forward: nstviz registers a no-op forward pre-hook for the run "
            "(without it torch ignores marks on forward for module(...) calls)"
        )
    return Target(spec=spec, function=fn, warning=warning)


Refusal = Literal["compiled", "class", "property", "partial", "builtin", "not_function", "generator", "torch"]
"""Why an object cannot be traced non-strictly (see :func:`refusals`)."""

REFUSED_WHEN_NAMED: frozenset[Refusal] = frozenset(
    ("compiled", "class", "property", "partial", "builtin", "not_function")
)
"""The refusals that stop a function the user names (``nonstrict=``): it is marked as asked
otherwise, and the run shows what torch does with it. The advisor refuses every kind: it
proposes only what can work."""


def refusals(obj: Any) -> tuple[Refusal, ...]:
    """Every reason ``obj`` cannot be traced non-strictly: the one markability rule.

    An object that is no Python function has one reason (wrapped by ``torch.compile``, a class,
    property, ``functools.partial``, builtin or C code, something else); a function can be a
    generator or async function (its result is no pytree) and part of torch itself. Empty when
    markable. An ``nn.Module`` instance is no function (its ``forward`` is what gets marked).
    """
    if _torch_compat.is_compiled_object(obj):
        return ("compiled",)
    if isinstance(obj, type):
        return ("class",)
    if isinstance(obj, property):
        return ("property",)
    if isinstance(obj, functools.partial):
        return ("partial",)
    fn = _function_of(obj)
    if fn is None:
        builtin = isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)) or callable(obj)
        return ("builtin",) if builtin else ("not_function",)
    found: list[Refusal] = []
    if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        found.append("generator")
    if is_torch_file(fn.__code__.co_filename):  # the one rule for "torch's code" (tracing.stacks)
        found.append("torch")
    return tuple(found)


def _refusal_text(kind: Refusal, spec: str, obj: Any) -> str:
    """The error for a named function the capture refuses (``kind`` in :data:`REFUSED_WHEN_NAMED`)."""
    if kind == "compiled":
        return f"{spec!r} is already wrapped by torch.compile; mark the plain function it calls instead"
    if kind == "class":
        return (
            f"{spec!r} is a class ({obj.__name__}), not a function; mark one of its methods, "
            f"e.g. '{spec}.forward' or '{spec}.<method>'"
        )
    if kind == "property":
        return f"{spec!r} is a property; mark its getter function instead ({spec}.fget)"
    if kind == "partial":
        return f"{spec!r} is a functools.partial; mark the function it wraps ({obj.func!r:.60})"
    if kind == "builtin":
        return (
            f"{spec!r} is a builtin or C function ({type(obj).__name__}); nonstrict_trace only takes "
            "Python functions: wrap the call in a small Python function and mark that"
        )
    return f"{spec!r} is a {type(obj).__name__}, not a function"


def check_not_local_to_compiled(target: Target, namespace: Mapping[str, Any]) -> None:
    """Refuse a closure or lambda created inside a compiled function (a new object per call).

    Raises:
        NotMarkableError: ``target`` was defined inside a function that is compiled.
    """
    qual = getattr(target.function, "__qualname__", "")
    if ".<locals>." not in qual:
        return
    outer = qual.split(".<locals>.")[0].split(".")[-1]
    value = namespace.get(outer)
    if value is not None and _torch_compat.is_compiled_object(value):
        raise NotMarkableError(
            f"{target.spec!r} ({qual}) is defined inside the compiled function {outer!r}: every call creates "
            "a new function object, so it cannot be marked; move it to module level"
        )


@contextlib.contextmanager
def marked(functions: Iterable[Callable[..., Any]]) -> Iterator[set[int]]:
    """Mark the functions non-strict while the block runs; always unmark afterwards."""
    functions = list(functions)
    already = _torch_compat.nonstrict_ids()
    entries = compiled_entries(functions)  # the function torch.compile compiles, marked as torch does
    ids = ({id(f) for f in functions} | {id(original) for _, original in entries}) - already
    try:
        _torch_compat.mark_ids(ids)
        with effective_forwards(functions), compiled_entries_wrapped(entries):  # undone on exit
            yield ids
    finally:
        _torch_compat.unmark_ids(ids)


@contextlib.contextmanager
def source_marks_lifted() -> Iterator[frozenset[int]]:
    """Run with marks made by ``nonstrict_trace`` in the code lifted (``baseline="strict"``).

    The marks are put back after, except those of functions freed meanwhile (their ids may be
    reused by any later object, which would then be traced non-strict).
    """
    ids = _torch_compat.nonstrict_ids()
    refs = _torch_compat.marked_function_refs()
    _torch_compat.unmark_ids(set(ids))
    try:
        with _torch_compat.nonstrict_trace_disabled():
            yield ids
    finally:
        _torch_compat.mark_ids(set(ids - _torch_compat.freed_ids(refs)))
