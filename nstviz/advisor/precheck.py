"""Pre-check: what can be known about a candidate before trying it (the reasons it is refused).

The name resolves (through the caller's ``resolve``, also as ``module.qualname``) to the very
function the stack shows (same file and line range); it is markable
(:func:`nstviz.capture.marking.refusals`, the rule the capture applies to names
the user gives); its call sites pass no explicit ``None`` (unless the torch takes ``None``
leaves), lambda or generator (GB0236); it is no ``leaf_function`` of the code; annotations name
no non-pytree type.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import sys
import types
from collections.abc import Callable, Collection
from typing import Any

from nstviz.advisor.attempt import Attempt
from nstviz.advisor.propose import _index, _plain_function_name, code_of
from nstviz.advisor.side_effects import print_notes
from nstviz.capture._introspect import is_module_method, unwrap
from nstviz.capture.marking import REFUSED_WHEN_NAMED, refusals
from nstviz.capture.reads import find_non_input_reads
from nstviz.report import Location

__all__ = ["precheck"]


def precheck(
    p: Attempt,
    resolve: Callable[[str], Callable | None],
    compiled_region: set[str],
    already_marked: Collection[str] = (),
    *,
    none_inputs_ok: bool = False,
    leaf_functions: Collection[str] = (),
) -> None:
    """Fill in ``p.problems`` (why it cannot be tried), ``p.obj``, ``p.notes`` and ``p.forward``."""
    if p.problems:
        return
    if p.name in leaf_functions:
        p.problems.append("it is a leaf_function in the code (it runs eagerly); the break happens inside it")
        return
    if p.name in already_marked:
        p.problems.append(
            "it is already traced non-strictly (marked in the code); the break happens inside it"
        )
        return
    name = _plain_function_name(p.frame.function)
    if name == "<lambda>":
        p.problems.append(
            "a lambda cannot be marked by name; give it a name with def, outside the compiled function"
        )
        return
    if "<locals>" in p.name:
        outer = p.name.split(".<locals>.")[0].split(".")[-1]
        if outer in compiled_region or outer in p.region_functions:
            p.problems.append(
                f"it is defined inside `{outer}`, which runs inside the compiled region: a new function "
                "object is created on every call, so it cannot be marked; define it at module level"
            )
            return
    obj, tried = _resolve(p, resolve)
    if obj is None:
        other = [t.removeprefix("<mismatch>") for t in tried if t.startswith("<mismatch>")]
        errors = [t.removeprefix("<error>") for t in tried if t.startswith("<error>")]
        names = ", ".join(repr(t) for t in tried if not t.startswith(("<mismatch>", "<error>")))
        if other:
            p.problems.append(
                f"the name {names} now refers to another function (defined at {other[0]}), not the one "
                f"on the break stack ({os.path.basename(p.frame.file)}:{p.frame.line}); it was redefined "
                "or rebound, so it cannot be marked by name"
            )
        elif errors:
            p.problems.append(f"cannot resolve it by name (tried {names}): {errors[0]}")
        elif "<locals>" in p.name:
            maker = p.name.split(".<locals>.")[0]
            p.problems.append(
                f"it is a function created at run time inside `{maker}` (e.g. by a decorator or a "
                "factory), so there is no name to mark it by; mark the function it wraps or calls instead"
            )
        else:
            p.problems.append(f"cannot find it by name (tried {names}) in the namespace")
        return
    p.obj = obj
    p.problems.extend(_object_problems(obj, p.frame))
    if not p.problems:
        p.problems.extend(_call_site_problems(p, none_inputs_ok=none_inputs_ok))
        # an explicit None at the call site is all that stands in the way: an adapter can take it
        p.none_args = bool(p.problems) and all("an explicit None" in x for x in p.problems)
    if not p.problems:
        p.notes.extend(_read_notes(obj))
        p.notes.extend(print_notes(unwrap(obj)))
    if not p.problems and unwrap(obj).__name__ == "forward" and is_module_method(unwrap(obj)):
        p.forward = True  # tried with a no-op forward pre-hook (nstviz.capture.forward_hooks)


def _resolve(p: Attempt, resolve: Callable[[str], Callable | None]) -> tuple[Callable | None, list[str]]:
    names = [p.name]
    module = _module_name_for(p.frame.file)
    if module and module != "__main__":
        names.append(f"{module}.{p.name}")
    tried = []
    mismatch = None
    for n in names:
        tried.append(n)
        try:
            obj = resolve(n)
        except Exception as exc:  # e.g. NameResolutionError for an ambiguous name
            tried.append(f"<error>{exc}")
            obj = None
        if obj is None:
            continue
        if _same_code(obj, p.frame):
            if n != p.name:
                p.module = n[: -len(p.name) - 1]
                p.name = n
            return obj, tried
        mismatch = obj
    if mismatch is not None and not code_of(mismatch):
        return mismatch, tried  # a builtin or C function by that name: let the checks say so
    if mismatch is not None:
        code = code_of(mismatch)
        assert code is not None
        tried.append(f"<mismatch>{os.path.basename(code.co_filename)}:{code.co_firstlineno}")
    return None, tried


def _module_name_for(path: str) -> str | None:
    if path.startswith("<"):
        return None
    norm = os.path.abspath(path)
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if f and os.path.abspath(f) == norm:
            return name
    return None

def _same_code(obj: Any, frame: Location) -> bool:
    code = code_of(obj)
    if code is None:
        return False
    if code.co_name != _plain_function_name(frame.function):
        return False
    if code.co_filename != frame.file:
        if frame.file.startswith("<") or code.co_filename.startswith("<"):
            return False
        if os.path.abspath(code.co_filename) != os.path.abspath(frame.file):
            return False
    if frame.line <= 0:
        return True
    # The function's own line range, from its code object (no source needed): tells apart
    # same-named functions of one file, e.g. a cell that redefines a helper.
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return code.co_firstlineno <= frame.line <= max(lines, default=code.co_firstlineno)


def _object_problems(obj: Any, frame: Location) -> list[str]:
    """Why the resolved object cannot be traced non-strictly (:func:`nstviz.capture.marking.refusals`)."""
    if isinstance(obj, type):
        return [f"`{obj.__name__}` is a class; mark one of its methods instead"]
    raw = unwrap(obj)
    refused = refusals(raw)
    if REFUSED_WHEN_NAMED.intersection(refused):  # not a Python function at all
        return [
            f"{type(raw).__name__} `{getattr(raw, '__name__', raw)}` is not a Python function (builtin or C code)"
        ]
    problems = []
    if raw.__name__ == "<lambda>":
        problems.append("a lambda cannot be marked by name; give it a name with def")
    if "generator" in refused:
        problems.append(
            "a generator or async function cannot be traced non-strictly (its result is not a pytree)"
        )
    if "torch" in refused:
        problems.append("it is part of torch itself; nstviz proposes only your code")
    problems.extend(_signature_problems(raw))
    return problems


def _call_site_problems(p: Attempt, *, none_inputs_ok: bool = False) -> list[str]:
    """Arguments visibly not accepted at the call sites the break stacks show (GB0236).

    An explicit ``None`` is one of them unless ``none_inputs_ok`` (a torch whose nonstrict_trace
    takes ``None`` leaves, :func:`nstviz.capture._torch_compat.nonstrict_accepts_none`).
    """
    name = _plain_function_name(p.frame.function)
    problems: list[str] = []
    for caller in p.callers:
        index = _index(caller.file)
        if index is None:
            continue
        for node in index.calls.get(caller.line, ()):
            func = node.func
            callee = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else None
            )
            if callee != name:
                continue
            args = [(f"argument {i + 1}", a) for i, a in enumerate(node.args)]
            args += [(f"argument `{k.arg}`", k.value) for k in node.keywords if k.arg]
            for label, value in args:
                kind = _bad_argument(value)
                if kind == "an explicit None" and none_inputs_ok:
                    continue
                if kind:
                    problems.append(
                        f"it is called with {kind} as its {label} at {os.path.basename(caller.file)}:{caller.line}: "
                        "nonstrict_trace refuses None, lambdas and generators as inputs on this torch (GB0236); "
                        "leave such parameters at their default or pass tensors, numbers or containers of them"
                    )
    return list(dict.fromkeys(problems))


def _bad_argument(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return "an explicit None"
    if isinstance(node, ast.Lambda):
        return "a lambda"
    if isinstance(node, ast.GeneratorExp):
        return "a generator"
    return None


def _read_notes(obj: Any) -> list[str]:
    try:
        reads = find_non_input_reads(obj)
    except Exception:
        return []
    if not reads:
        return []
    kinds = {
        "global": "global",
        "closure": "closure variable",
        "self_attribute": "attribute",
        "randomness": "randomness",
        "nonlocal_mutation": "state it changes",
    }
    listed = ", ".join(f"{r.name} ({kinds.get(r.kind, r.kind)})" for r in reads[:4])
    more = f" and {len(reads) - 4} more" if len(reads) > 4 else ""
    return [f"it reads {listed}{more}: nonstrict_trace bakes these in at trace time, so check the outputs"]


_NON_PYTREE_HINTS = ("Generator", "Iterator", "Callable", "IO")


def _signature_problems(func: types.FunctionType) -> list[str]:
    """Arguments that are visibly not pytree-able from annotations."""
    problems = []
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return problems
    for param in sig.parameters.values():
        ann = param.annotation
        if ann is inspect.Parameter.empty:
            continue
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", None) or repr(ann)
        if _annotation_refuses(str(text)):
            problems.append(
                f"argument `{param.name}` is annotated `{text}`, which is not a pytree: nonstrict_trace "
                "accepts tensors, numbers, and lists/tuples/dicts of them (GB0236 otherwise)"
            )
    return problems


_PYTREE_OK = re.compile(r"^(str|int|float|bool|None|NoneType|complex|Tensor|torch\.Tensor|list|tuple|dict)\b")


def _annotation_refuses(text: str) -> bool:
    """An annotation whose every alternative is a non-pytree type (``str | Callable`` is not)."""
    text = text.replace("typing.", "").strip()
    m = re.fullmatch(r"(?:Optional|Union)\[(.*)\]", text)
    inner = m.group(1) if m else text
    members = [t.strip() for t in re.split(r"\||,(?![^\[]*\])", inner) if t.strip()]
    if m and text.startswith("Optional"):
        members.append("None")
    if len(members) > 1 and any(_PYTREE_OK.match(t) for t in members):
        return False
    return any(h in text for h in _NON_PYTREE_HINTS)

