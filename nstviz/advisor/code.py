"""Code that applies the advisor's marks when pasted, before the model is built.

A rebinding only helps where the function is looked up: a module-level function is looked up
in the globals of the module that calls it (``modeling_x.fn = nonstrict_trace(modeling_x.fn)``,
and again in every other module that imported the name), a method on its class
(``Class.method = ...``, ``staticmethod(...)`` kept). Functions of the user's own notebook or
``__main__`` are rebound by their bare name; for a function in the user's own file the
decorator at the definition is named too. A marked ``forward`` also needs a forward pre-hook
(:data:`nstviz.capture.forward_hooks.FORWARD_HOOK_CODE`). Config remedies come last, as
``torch._dynamo.config`` assignments.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nstviz.advisor.attempt import Attempt
from nstviz.advisor.propose import def_line, local_name
from nstviz.advisor.side_effects import print_notes
from nstviz.capture.adapters import adapter_source, prefix_for, pytree_source
from nstviz.capture.forward_hooks import FORWARD_HOOK_CODE
from nstviz.tracing.stacks import installed_package

__all__ = ["Mark", "apply_code", "recommendation_code", "rewrite_lines"]

_MAIN_MODULES = ("__main__", "builtins", "__mp_main__")


@dataclass
class Mark:
    """One function to mark: its qualified name, the object, and where it is called from."""

    qualname: str
    obj: Any
    where: str = ""
    """``file:line`` of its ``def``, for the comment."""
    caller_files: Sequence[str] = field(default_factory=tuple)
    forward: bool = False


def _raw(obj: Any) -> Any:
    for _ in range(10):
        if isinstance(obj, (staticmethod, classmethod)) or inspect.ismethod(obj):
            obj = obj.__func__
        elif hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
        else:
            break
    return obj


def _module_of(obj: Any) -> types.ModuleType | None:
    name = getattr(_raw(obj), "__module__", None) or getattr(obj, "__module__", None)
    return sys.modules.get(name) if name else None


def _is_users_namespace(module: types.ModuleType | None, obj: Any) -> bool:
    if module is None or module.__name__ in _MAIN_MODULES:
        return True
    code = getattr(_raw(obj), "__code__", None)
    return bool(code is not None and code.co_filename.startswith("<"))


def _module_for_file(path: str) -> types.ModuleType | None:
    norm = os.path.abspath(path)
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if f and os.path.abspath(f) == norm:
            return mod
    return None


def _import_line(module: types.ModuleType) -> tuple[str, str]:
    """``(import statement, alias)`` for a module: ``from a.b import c`` binds ``c``."""
    name = module.__name__
    if "." in name:
        pkg, _, leaf = name.rpartition(".")
        return f"from {pkg} import {leaf}", leaf
    return f"import {name}", name


def _owner_path(qualname: str) -> tuple[list[str], str]:
    parts = qualname.split(".")
    return parts[:-1], parts[-1]


def recommendation_code(
    marks: Sequence[Mark],
    config: Mapping[str, Any] | None = None,
    *,
    adapters: Sequence[Mark] = (),
    pytree: Sequence[Any] = (),
    decorator: str = "torch._dynamo.nonstrict_trace",
    rewrites: Sequence[Any] = (),
) -> str:
    """Paste-ready code: imports, one rebinding per place a function is looked up, hooks, config.

    Args:
        marks: the functions to trace non-strictly (``qualname`` without a module prefix).
        config: ``torch._dynamo.config`` flags that the verified attempt set.
        adapters: functions traced through an adapter that drops their ``None`` arguments
            (:mod:`nstviz.capture.adapters`); the adapter's code is rebound where they are
            looked up.
        pytree: user classes to register with ``torch.utils._pytree``
            (:class:`nstviz.capture.adapters.PytreeType`), registered before the marks.
        decorator: the spelling of nonstrict_trace in the code: ``torch.compiler.nonstrict_trace``
            on a torch that has the public name (2.14), ``torch._dynamo.nonstrict_trace`` (2.13).
        rewrites: source rewrites (:class:`nstviz.advisor.rewrites.Rewrite`): their rewritten
            ``def`` and the line that puts it in place (:func:`rewrite_lines`), first.
    """
    imports: dict[str, None] = {"import torch": None}
    body: list[str] = []
    decorator_notes: list[str] = []
    need_hook = False
    pytree_lines = [line for t in pytree for line in _pytree_lines(t, imports)]
    adapter_lines = [line for m in adapters for line in _adapter_lines(m, imports, decorator)]
    rewritten = [line for r in rewrites for line in rewrite_lines(r, imports)]
    config = {**{k: v for r in rewrites for k, v in r.config.items()}, **(config or {})}
    for m in marks:
        module = _module_of(m.obj)
        owners, attr = _owner_path(m.qualname)
        comment = f"  # def at {m.where}" if m.where else ""
        if _is_users_namespace(module, m.obj):
            prefixes = [""]
        else:
            assert module is not None
            stmt, alias = _import_line(module)
            imports[stmt] = None
            prefixes = [f"{alias}."]
            if not owners:  # a module-level function: also where the callers look it up
                for f in m.caller_files:
                    cm = _module_for_file(f)
                    if cm is None or cm is module or cm.__name__ in _MAIN_MODULES:
                        continue
                    if getattr(cm, attr, None) is m.obj:
                        s2, a2 = _import_line(cm)
                        imports[s2] = None
                        prefixes.append(f"{a2}.")
            code = getattr(_raw(m.obj), "__code__", None)
            if code is not None and installed_package(code.co_filename) is None:
                decorator_notes.append(
                    f"# or: put @{decorator} on the line above `def {attr}` ({m.where})"
                )
        body += [f"# note: {attr} {note.removeprefix('it ')}" for note in print_notes(_raw(m.obj))]
        entry = _compiled_entry_lines(m, owners, attr, decorator)
        if entry:  # the function torch.compile compiles: marked before torch.compile wraps it
            body += entry
            continue
        for prefix in dict.fromkeys(prefixes):
            target = f"{prefix}{m.qualname}"
            body.append(_rebind(target, owners, attr, m.obj, prefix, decorator) + comment)
        need_hook |= m.forward
    lines = [*sorted(imports, key=lambda line: line != "import functools"), ""]
    lines += rewritten
    if pytree_lines:
        lines += ["# Let nonstrict_trace take these classes as inputs and outputs (pytree containers):", *pytree_lines]
    if adapter_lines:
        lines += adapter_lines
    if marks:
        lines.append("# Trace these functions non-strictly; run this before the model is built and compiled")
        lines.append("# (or call torch._dynamo.reset() afterwards).")
        lines += body + decorator_notes
    if need_hook:
        lines += FORWARD_HOOK_CODE.rstrip("\n").splitlines()
    for key, value in (config or {}).items():
        lines.append(f"torch._dynamo.config.{key} = {value!r}")
    return "\n".join(lines) + "\n"


def _compiled_entry_lines(m: Mark, owners: list[str], attr: str, decorator: str) -> list[str]:
    """The lines for a function that its globals hold compiled by name (``f = torch.compile(f)``), else [].

    torch honours the mark only when it is made before ``torch.compile`` wraps the function
    (it then compiles a wrapper frame that calls it non-strictly), so the code re-wraps it.
    """
    raw = _raw(m.obj)
    held = getattr(raw, "__globals__", {}).get(attr) if not owners else None
    original = held.__dict__.get("_torchdynamo_orig_callable") if isinstance(held, types.FunctionType) else None
    code, mine = getattr(original, "__code__", None), getattr(raw, "__code__", None)
    if code is None or mine is None or (code.co_filename, code.co_firstlineno) != (mine.co_filename, mine.co_firstlineno):
        return []  # (a cell run again holds a new function object from the same def)
    return [
        f"# {attr} is the function torch.compile compiles: torch traces it non-strictly only when it is",
        f"# marked before torch.compile wraps it. Put the mark under the decorator ({m.where}):",
        "#     @torch.compile(...)",
        f"#     @{decorator}",
        f"#     def {attr}(...):",
        "# or wrap it again here (give torch.compile the options you gave it):",
        f"{attr} = torch.compile({decorator}({attr}.__wrapped__))",
    ]


def _installs_itself(source: str, attr: str) -> bool:
    """Whether a rewrite's source puts itself in place (a transformers switch, methods set on their class).

    True when it defines no ``attr`` function, or assigns ``<owner>.attr`` itself.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    defines = any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == attr for n in tree.body)
    assigns = any(
        isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == attr for t in n.targets)
        for n in tree.body
    )
    return not defines or assigns


def rewrite_lines(rewrite: Any, imports: dict[str, None]) -> list[str]:
    """A source rewrite as pasted: its rewritten ``def``, then the line that puts it in place.

    In a library module the original keeps its place and its module's globals: its ``__code__``
    becomes the rewritten one (modules the rewrite uses that the module does not import are
    bound in it). A function of the user's own namespace is redefined by name (a method set on
    its class); paste it after the original ``def``.
    """
    original = rewrite.original
    module = _module_of(original)
    owners, attr = _owner_path(original.__qualname__)
    lines = [*rewrite.source.rstrip("\n").splitlines()]
    if _installs_itself(rewrite.source, attr):  # e.g. a config switch, or defs that it assigns itself
        return [*lines, ""]
    new_free = set(rewrite.function.__code__.co_freevars) - set(original.__code__.co_freevars)
    if _is_users_namespace(module, original) or module is None:
        if owners:
            owner = ".".join(owners)
            static = inspect.getattr_static(_owner_object(original, owners), attr, None)
            wrap = type(static).__name__ if isinstance(static, (staticmethod, classmethod)) else ""
            lines.append(f"{owner}.{attr} = {wrap}({attr})" if wrap else f"{owner}.{attr} = {attr}")
        return [*lines, ""]
    stmt, alias = _import_line(module)
    imports[stmt] = None
    target = f"{alias}.{original.__qualname__}{_unwrapping(module, original)}"
    cells = dict(zip(rewrite.function.__code__.co_freevars, rewrite.function.__closure__ or (), strict=False))
    for name in sorted(new_free):
        value = cells[name].cell_contents
        if isinstance(value, types.ModuleType) and not hasattr(module, name):
            imports[f"import {value.__name__}" if value.__name__ == name else f"import {value.__name__} as {name}"] = None
            lines.append(f"{alias}.{name} = {name}  # the rewrite uses it")
    for name in sorted(getattr(rewrite, "module_globals", {})):  # helpers its pasted source defines
        lines.append(f"{alias}.{name} = {name}  # the rewrite uses it")
    lines = [line for line in lines if line not in imports]  # an import the rewrite's source repeats
    if getattr(rewrite, "remedy", "") in ("custom-op", "numpy-op"):
        # the op runs the original: it keeps its code, and the name is rebound to the op's caller
        eager = f"_eager = {attr}  #"
        lines = [line.replace(eager, f"_eager = {target}  #", 1) if eager in line else line for line in lines]
        lines.append(f"{target} = {attr}  # callers that look {attr} up in {alias} call the op")
    elif original.__code__.co_freevars:  # a closure: its code cannot be swapped, rebind it instead
        lines.append(f"{target} = {attr}")
    else:
        # only the code is swapped: the original keeps its decorators' wrappers and annotations, which
        # name the module's globals (`@deprecate_kwarg`, `Cache`) a pasting script does not have
        lines = _bare_def("\n".join(lines), attr).splitlines()
        lines.append(f"{target}.__code__ = {attr}.__code__  # keeps {alias}'s globals; every caller sees it")
    return [*lines, ""]


def _bare_def(source: str, attr: str) -> str:
    """``source`` with the top-level ``def attr`` stripped of its decorators and annotations."""
    tree = ast.parse(source)
    for n in tree.body:
        if isinstance(n, ast.FunctionDef) and n.name == attr and (n.decorator_list or n.returns or _annotated(n)):
            first = (n.decorator_list[0].lineno if n.decorator_list else n.lineno) - 1
            n.decorator_list, n.returns = [], None
            a = n.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None:
                    arg.annotation = None
            lines = source.splitlines()
            return "\n".join([*lines[:first], ast.unparse(n), *lines[n.end_lineno or len(lines):]])
    return source


def _annotated(fn: ast.FunctionDef) -> bool:
    a = fn.args
    return any(arg is not None and arg.annotation is not None
               for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg])


def _unwrapping(module: types.ModuleType, original: Any) -> str:
    """``.__wrapped__`` as many times as the decorators around ``original`` where it is looked up (none: "")."""
    obj: Any = module
    for part in original.__qualname__.split("."):
        obj = getattr(obj, part, None)
    for hops in range(10):
        if obj is original or obj is None:
            return ".__wrapped__" * hops if obj is original else ""
        obj = getattr(obj, "__wrapped__", None)
    return ""


def _rebind(target: str, owners: list[str], attr: str, obj: Any, prefix: str, decorator: str) -> str:
    kind = None
    if owners:
        owner_name = prefix + ".".join(owners)
        owner = _owner_object(obj, owners)
        if owner is not None:
            static = inspect.getattr_static(owner, attr, None)
            if isinstance(static, staticmethod):
                kind = "staticmethod"
            elif isinstance(static, classmethod):
                kind = "classmethod"
        del owner_name
    if kind == "staticmethod":
        return f"{target} = staticmethod({decorator}({target}))"
    if kind == "classmethod":
        return f"{target} = classmethod({decorator}({target}.__func__))"
    return f"{target} = {decorator}({target})"


def _owner_object(obj: Any, owners: Iterable[str]) -> Any:
    module = _module_of(obj)
    cur: Any = module
    for part in owners:
        cur = getattr(cur, part, None)
        if cur is None:
            return None
    return cur


def _where(obj: Any, qualname: str, caller_files: Sequence[str], imports: dict[str, None]) -> tuple[str, list[str]]:
    """(expression of the function now, every name it is looked up by) for a rebinding."""
    module = _module_of(obj)
    owners, attr = _owner_path(qualname)
    if _is_users_namespace(module, obj):
        return qualname, [qualname]
    assert module is not None
    stmt, alias = _import_line(module)
    imports[stmt] = None
    targets = [f"{alias}.{qualname}"]
    if not owners:
        for f in caller_files:
            cm = _module_for_file(f)
            if cm is None or cm is module or cm.__name__ in _MAIN_MODULES:
                continue
            if getattr(cm, attr, None) is obj:
                s2, a2 = _import_line(cm)
                imports[s2] = None
                targets.append(f"{a2}.{attr}")
    return targets[0], list(dict.fromkeys(targets))


def _adapter_lines(m: Mark, imports: dict[str, None], decorator: str) -> list[str]:
    """An adapter for a function called with None arguments, bound where it is looked up."""
    imports["import functools"] = None
    expr, targets = _where(m.obj, m.qualname, m.caller_files, imports)
    owners, attr = _owner_path(m.qualname)
    static = False
    if owners:
        owner = _owner_object(m.obj, owners)
        static = owner is not None and isinstance(inspect.getattr_static(owner, attr, None), staticmethod)
    prefix = prefix_for(m.qualname)
    comment = f"  # def at {m.where}" if m.where else ""
    adapter = f"staticmethod({prefix}_adapter)" if static else f"{prefix}_adapter"
    return [
        f"# {m.qualname} is called with None arguments, which nonstrict_trace refuses (GB0236): an adapter",
        "# traces it non-strictly with the other arguments and puts the Nones back inside.",
        f"{prefix} = {expr}{comment}",
        "",
        "",
        *adapter_source(prefix, decorator).rstrip("\n").splitlines(),
        "",
        "",
        *(f"{t} = {adapter}" for t in targets),
    ]


def _pytree_lines(t: Any, imports: dict[str, None]) -> list[str]:
    """``torch.utils._pytree`` registration of a user class (``PytreeType``)."""
    cls = t.cls
    module = sys.modules.get(cls.__module__)
    if module is None or module.__name__ in _MAIN_MODULES:
        expr = cls.__qualname__
    else:
        stmt, alias = _import_line(module)
        imports[stmt] = None
        expr = f"{alias}.{cls.__qualname__}"
    if t.flatten is None:
        return [f"torch.utils._pytree.register_dataclass({expr})"]
    prefix = prefix_for(cls.__qualname__)
    return [
        *pytree_source(prefix, expr).rstrip("\n").splitlines(),
        "",
        "",
        f"torch.utils._pytree.register_pytree_node({expr}, {prefix}_flatten, {prefix}_unflatten)",
    ]


def apply_code(
    kept: Sequence[Attempt], config: Mapping[str, Any] | None = None, *, decorator: str = "torch._dynamo.nonstrict_trace"
) -> str:
    """Paste-ready code that applies the kept proposals: marks, adapters and pytree registrations."""
    marks: list[Mark] = []
    adapters: list[Mark] = []
    classes: list[Any] = []
    rewrites = [p.remedy for p in kept if p.kind == "rewrite"]
    for p in kept:
        if p.kind == "rewrite":
            continue
        where = f"{os.path.basename(p.frame.file)}:{def_line(p) or p.frame.line}"
        mark = Mark(
            qualname=local_name(p), obj=p.obj, where=where, caller_files=[c.file for c in p.callers], forward=p.forward
        )
        if p.kind == "pytree":
            classes.append(p.remedy)
        if p.through_adapter:
            if not any(m.obj is p.obj for m in adapters):
                adapters.append(mark)
            continue
        if not any(m.obj is p.obj for m in marks):
            marks.append(mark)
    return recommendation_code(marks, config, adapters=adapters, pytree=classes, decorator=decorator, rewrites=rewrites)
