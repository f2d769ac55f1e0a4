"""What a capture runs: a :class:`Subject`, made from a callable or from code in a namespace.

A Subject is all the session needs to know about the user's code: how to run it (compiled,
and, for a callable, eagerly), which namespace to roll back between runs, what its outputs
are, which functions to mark and how to find them again after the code redefined them.
:func:`callable_subject` is what :func:`nstviz.compare` runs, :func:`code_subject` what
:func:`nstviz.trace_code` (and so ``%%nstrace`` and the CLI) runs.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import linecache
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from nstviz.capture import _torch_compat, marking, toplevel_await
from nstviz.capture._introspect import code_key, entry_function, qualified_name
from nstviz.capture.compiled_entry import own_wrapper
from nstviz.capture.runner import Body, RunResult
from nstviz.errors import NameResolutionError, UsageError

Functions = Sequence[Callable[..., Any]]
_cell_counter = itertools.count(1)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Subject:
    """The user's code, as the capture session runs it.

    Attributes:
        entry: ``"compare"`` (a callable) or ``"trace_code"`` (code in a namespace).
        title: the Report's title.
        namespace: what is rolled back between runs (a callable's arguments; the code's globals).
        body: runs the code once, compiled as it is written.
        eager_body: runs the callable eagerly (``compare``), or None.
        outputs_of: the values to compare, after a run.
        requested: the functions to mark, as given (names, dotted paths, callables).
        resolve_namespace: where ``requested`` names are looked up (after the baseline run,
            so that names the code defines exist).
        code_namespace: the namespace Dynamo installs its globals into (``trace_code``), or None.
        rematch: with the code's ``def`` s re-run, the functions to mark now (given those resolved).
    """

    entry: Literal["compare", "trace_code"]
    title: str
    namespace: dict[str, Any]
    body: Body
    eager_body: Body | None
    outputs_of: Callable[[RunResult], Mapping[str, Any]]
    requested: tuple[marking.Spec, ...]
    resolve_namespace: Mapping[str, Any]
    code_namespace: dict[str, Any] | None = None
    rematch: Callable[[Functions], Callable[[], Functions]] = lambda fixed: lambda: fixed

    def resolve(self) -> tuple[marking.Target, ...]:
        """The requested functions, resolved (raises NameResolutionError/NotMarkableError)."""
        return marking.resolve(self.requested, self.resolve_namespace)

    def resolve_name(self, name: str) -> Callable[..., Any] | None:
        """The function a name stands for (the advisor's candidates), or None."""
        try:
            return marking.resolve_one(name, self.resolve_namespace).function
        except (NameResolutionError, UsageError):
            return None


def callable_subject(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *, backend: Any, nonstrict: Iterable[marking.Spec]
) -> Subject:
    """``fn(*args, **kwargs)`` compiled (or as compiled already) and eagerly.

    Raises:
        NameResolutionError, NotMarkableError: a ``nonstrict`` name is unknown or not markable
            (checked now, before anything runs).
    """
    import torch

    if _torch_compat.is_compiled_object(fn):
        compiled = fn
        eager = _torch_compat.compiled_original(fn) or fn
        if isinstance(fn, types.MethodType) and not isinstance(eager, types.MethodType):
            eager = types.MethodType(eager, fn.__self__)  # @torch.compile on a method: keep self
    else:
        compiled = torch.compile(fn, backend="eager" if backend == "record" else _plain_backend(backend))
        compiled = own_wrapper(compiled, fn)  # fn itself marked: torch's way (capture/compiled_entry.py)
        eager = fn
    globals_ = dict(getattr(entry_function(eager), "__globals__", {}) or {})
    requested = tuple(nonstrict)
    marking.resolve(requested, globals_)  # fail before running anything

    def body_of(target: Callable[..., Any]) -> Body:
        def body(_remark: Callable[[], None]) -> Any:
            return target(*args, **kwargs)

        return body

    return Subject(
        entry="compare",
        title=qualified_name(entry_function(eager)),
        namespace={"fn": fn, "args": args, "kwargs": kwargs},
        body=body_of(compiled),
        eager_body=body_of(eager),
        outputs_of=lambda result: {"return": result.value} if result.exception is None else {},
        requested=requested,
        resolve_namespace=globals_,
    )


def code_subject(
    source: str, namespace: dict[str, Any], *, nonstrict: Iterable[marking.Spec], filename: str | None, title: str
) -> Subject:
    """``source`` run in ``namespace``, one top-level statement at a time.

    Raises:
        UsageError: the code has a syntax error.
        NameResolutionError, NotMarkableError: a ``nonstrict`` name can exist neither in the
            namespace nor among the names the code binds.
    """
    filename = filename or f"<nstviz-cell-{next(_cell_counter)}>"
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise UsageError(
            f"the code has a syntax error at line {exc.lineno}: {exc.msg}; fix it and run again"
        ) from exc
    if not linecache.getlines(filename):
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    flags = _future_flags(tree) | toplevel_await.COMPILE_FLAGS  # a notebook cell may await
    statements = [
        compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec", flags=flags, dont_inherit=True)
        for stmt in tree.body
    ]
    specs = tuple(nonstrict)
    defined = _bound_names(tree)
    for spec in specs:  # fail before running anything when a name cannot exist
        if not isinstance(spec, str) or spec.split(".")[0] not in defined:
            marking.resolve_one(spec, namespace)

    def body(remark: Callable[[], None]) -> None:
        for code in statements:
            toplevel_await.run_statement(code, namespace)
            remark()

    return Subject(
        entry="trace_code",
        title=title,
        namespace=namespace,
        body=body,
        eager_body=None,
        outputs_of=_assigned_values(namespace, _loaded_names(tree)),
        requested=specs,
        resolve_namespace=namespace,
        code_namespace=namespace,
        rematch=lambda fixed: _rematcher(fixed, namespace),
    )


def _plain_backend(backend: Any) -> Any:
    return "inductor" if backend in ("as_written",) else ("eager" if isinstance(backend, str) else backend)


def _future_flags(tree: ast.Module) -> int:
    """Compiler flags of the code's ``from __future__ import ...`` (statements compile one by one)."""
    import __future__

    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:
                feature = getattr(__future__, alias.name, None)
                if feature is not None:
                    flags |= feature.compiler_flag
    return flags


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names


def _loaded_names(tree: ast.Module) -> list[str]:
    return [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _rematcher(fixed: Functions, namespace: dict[str, Any]) -> Callable[[], Functions]:
    """Marks for a re-executed cell.

    The fixed functions plus those the code redefined with the same code location and name.
    """
    keys = {code_key(f) for f in fixed}

    def current() -> Functions:
        found = list(fixed)
        for value in list(namespace.values()):
            for fn in _functions_in(value):
                if code_key(fn) in keys:
                    found.append(fn)
        return found

    return current


def _functions_in(value: Any) -> Iterable[Any]:
    if isinstance(value, types.FunctionType):
        yield value
    elif isinstance(value, type):
        for member in list(vars(value).values()):
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if isinstance(member, types.FunctionType):
                yield member


_SKIP_OUTPUT_TYPES = (types.FunctionType, types.ModuleType, type, types.BuiltinFunctionType, types.MethodType)

MAX_STATE_NUMEL = 50_000_000
"""Modules and tensors the code mentions are compared only up to this many elements in all."""


def _assigned_values(namespace: dict[str, Any], mentioned: Iterable[str] = ()) -> Callable[[RunResult], Mapping[str, Any]]:
    """Outputs of a trace_code run.

    Names the run bound or rebound (not functions, classes or modules), plus the state of
    tensors and ``nn.Module`` s bound before the run that the code mentions by name (a training
    step updates them in place: ``model.state_dict``).
    """
    import torch

    before = {k: id(v) for k, v in namespace.items()}
    mentioned = [m for m in dict.fromkeys(mentioned) if m in namespace]

    def outputs(_result: RunResult) -> Mapping[str, Any]:
        out: dict[str, Any] = {}
        for key, value in namespace.items():
            if key.startswith("_") or isinstance(value, _SKIP_OUTPUT_TYPES):
                continue
            if before.get(key) != id(value) and _has_tensor_or_number(value):
                out[key] = value
        budget = MAX_STATE_NUMEL
        for key in mentioned:
            value = namespace.get(key)
            if key in out or before.get(key) != id(value):
                continue
            if isinstance(value, torch.nn.Module):
                state = value.state_dict()
                numel = sum(t.numel() for t in state.values() if isinstance(t, torch.Tensor))
                if numel <= budget:
                    out[f"{key}.state_dict()"] = dict(state)
                    budget -= numel
            elif isinstance(value, torch.Tensor) and value.numel() <= budget:
                out[key] = value
                budget -= value.numel()
        return out

    return outputs


def _has_tensor_or_number(value: Any, depth: int = 0) -> bool:
    import torch

    if isinstance(value, (torch.Tensor, int, float, complex)) and not isinstance(value, bool):
        return True
    if _is_numpy_number(value):
        return True
    if depth > 3:
        return False
    if isinstance(value, Mapping):
        return any(_has_tensor_or_number(v, depth + 1) for v in list(value.values())[:64])
    if isinstance(value, (list, tuple)):
        return any(_has_tensor_or_number(v, depth + 1) for v in value[:64])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_tensor_or_number(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    return False


def _is_numpy_number(value: Any) -> bool:
    """A numpy array or scalar of a numeric dtype: compared like a tensor (numpy only if loaded)."""
    import sys

    np = sys.modules.get("numpy")
    if np is None or not isinstance(value, (np.ndarray, np.generic)):
        return False
    return value.dtype.kind in ("biufc" if isinstance(value, np.ndarray) else "iufc")


__all__ = ["MAX_STATE_NUMEL", "Subject", "callable_subject", "code_subject"]
