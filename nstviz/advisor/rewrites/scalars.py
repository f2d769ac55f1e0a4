"""Remedy 2: ``n = t.item()`` / ``int(t)`` used as a size or bound gets ``torch._check`` hints.

With ``torch._dynamo.config.capture_scalar_outputs=True`` Dynamo captures ``.item()`` as an
unbacked symbol (no GB0124 break), but any Python test on it (``if n < 0: raise``, a size
check) then breaks again on the data-dependent guard. ``torch._check(n >= 0)`` tells Dynamo
``n >= 0``, so those tests are decided while tracing. ``torch._check_is_size`` exists in torch
2.13 and 2.14 as well, but warns there that it will be removed ("Use _check(i >= 0) instead":
measured), so it is not used. The check is inserted only where ``n`` is used as a size or a
bound (slicing, a factory or shape argument, a comparison with 0), where a negative value
would fail in eager code anyway.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, begin, call

__all__ = ["propose_scalar", "size_check_name"]

_SIZE_CALLS = {
    "zeros", "ones", "empty", "full", "arange", "randn", "rand", "randint", "new_zeros", "new_ones", "new_empty",
    "new_full", "view", "reshape", "narrow", "expand", "repeat", "split", "unflatten", "tile", "repeat_interleave",
    "select", "pad", "eye", "linspace",
}


def size_check_name() -> str:
    """The check inserted: ``torch._check`` (``torch._check_is_size`` is deprecated in 2.13 and 2.14)."""
    return "torch._check"


def _scalar_source(value: ast.expr) -> bool:
    """``<expr>.item()`` or ``int(<expr>)``."""
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if isinstance(f, ast.Attribute) and f.attr == "item" and not value.args:
        return True
    return isinstance(f, ast.Name) and f.id == "int" and len(value.args) == 1


def _uses_as_size(tree: ast.AST, name: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper):
                if part is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(part)):
                    return True
        if isinstance(node, ast.Call):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if fname in _SIZE_CALLS and any(
                isinstance(n, ast.Name) and n.id == name for a in [*node.args, *(k.value for k in node.keywords)]
                for n in ast.walk(a)
            ):
                return True
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == name:
            if all(isinstance(c, ast.Constant) and c.value == 0 for c in node.comparators):
                return True
    return False


def propose_scalar(fn: object, brk: BreakSite | None = None) -> Proposal:
    """Insert a size check after each ``.item()`` / ``int(t)`` assignment (on the break's line if known)."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    line = src.local_line(brk.line)
    new_def = copy.deepcopy(src.tree)
    checked: list[str] = []
    check = size_check_name()
    for node in ast.walk(new_def):
        for fld in ("body", "orelse"):
            block = getattr(node, fld, None)
            if not isinstance(block, list):
                continue
            for i in range(len(block) - 1, -1, -1):
                s = block[i]
                if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                        and _scalar_source(s.value)):
                    continue
                if line is not None and not (s.lineno <= line <= (s.end_lineno or s.lineno)):
                    continue
                name = s.targets[0].id
                if not _uses_as_size(new_def, name):
                    out.notes.append(f"`{name} = {ast.unparse(s.value)}` is not used as a size or bound: no check added")
                    continue
                arg: ast.expr = ast.Name(id=name, ctx=ast.Load())
                if check == "torch._check":
                    arg = ast.Compare(left=arg, ops=[ast.GtE()], comparators=[ast.Constant(0)])
                block.insert(i + 1, ast.Expr(value=call(check, arg)))
                checked.append(name)
    if not checked:
        return out
    ast.fix_missing_locations(new_def)
    names = ", ".join(checked)
    why = (f"{names} from .item()/int() is a size: capture it (capture_scalar_outputs) and tell Dynamo it is >= 0 "
           "so tests on it do not break the graph")
    config_line = "torch._dynamo.config.capture_scalar_outputs = True  # set once, before compiling\n"
    out.rewrites.append(Rewrite.of(
        src, new_def, "item-check",
        f"{src.fn.__qualname__}: {check}(n >= 0) for {names} after .item(), with capture_scalar_outputs=True",
        why, before=config_line, config={"capture_scalar_outputs": True}))
    return out
