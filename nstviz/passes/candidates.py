"""Which frames on a break's stack are worth proposing: run-time wrappers are not.

Libraries wrap functions at import time with decorators whose closure passes every argument
on (``def wrapper(*args, **kwargs): return func(*args, **kwargs)``): transformers'
``capture_outputs`` / ``can_return_tuple``, ``deprecate_kwarg``, the gradient-checkpointing
``forward_with_checkpointing``. Such a closure cannot be marked by name, and what breaks is
in the function it wraps or in the code around it, so the advisor passes over it and goes
outward along the stack.
"""

from __future__ import annotations

import ast
import functools
import linecache

from nstviz.report.model import Location

__all__ = ["is_runtime_wrapper"]


def is_runtime_wrapper(frame: Location) -> bool:
    """Whether ``frame`` runs a closure that takes ``*args`` and ``**kwargs`` (a decorator's wrapper)."""
    lines = linecache.getlines(frame.file)
    if not lines:
        return False
    return _wrapper_at("".join(lines), frame.line, frame.function)


@functools.lru_cache(maxsize=64)
def _wrappers(text: str) -> tuple[tuple[str, int, int], ...]:
    """(name, first line, last line) of every nested def that takes ``*args, **kwargs``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ()
    found: list[tuple[str, int, int]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                if in_function and a.vararg is not None and a.kwarg is not None:
                    found.append((child.name, child.lineno, child.end_lineno or child.lineno))
                walk(child, True)
            else:
                walk(child, in_function)

    walk(tree, False)
    return tuple(found)


def _wrapper_at(text: str, line: int, name: str) -> bool:
    return any(n == name and start <= line <= end for n, start, end in _wrappers(text))
