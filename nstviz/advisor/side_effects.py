"""Side effects a mark would change: a ``print`` in a function traced non-strictly.

Pure: reads the function's source, runs nothing.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

__all__ = ["print_notes"]


def print_notes(func: Any) -> list[str]:
    """A ``print(...)`` in the function's own body: traced non-strictly it runs only while tracing.

    Measured on torch 2.13: under ``aot_eager`` or inductor the print of a ``nonstrict_trace``
    function runs while the first call is traced (several times) and never on later calls; one
    call's outputs and stdout cannot show it, so the candidate says so (in its reasons, and in
    the recommendation's code when it is recommended).
    """
    try:
        source = inspect.getsource(func)
        first = func.__code__.co_firstlineno
        tree = ast.parse(textwrap.dedent(source))
    except (OSError, TypeError, SyntaxError, ValueError):
        return []
    body = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if body is None:
        return []
    lines = sorted(
        first + node.lineno - 1
        for node in _walk_own(body)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    )
    if not lines:
        return []
    return [
        f"it calls print (line {lines[0]}): traced non-strictly under aot_eager or inductor, the print runs only "
        "while the function is traced (the first call), never on later calls"
    ]


def _walk_own(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own body (not of the functions or classes it defines)."""
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out
