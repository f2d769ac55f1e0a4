"""Remedy: a data-dependent check that raises (GB0170) becomes ``torch._assert_async``.

``if not (boxes[:, 2:] >= boxes[:, :2]).all(): raise ValueError(...)`` asks Python for a tensor's
value, so Dynamo breaks the graph there (GB0170, or ``generic_jump`` on a tensor). The check is
an assertion: ``torch._assert_async(cond, msg)`` asserts the same condition as a graph op, which
raises (a ``RuntimeError``, with the message's fixed text) when the condition fails, compiled or
not. Every such check in the function is rewritten at once (losses check both arguments); leading
``x is not None and`` guards stay a Python ``if`` around the assert. On valid inputs the outputs are
the same; on invalid ones the exception type is ``RuntimeError`` instead.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import (
    _SHAPE_CALLS,
    BreakSite,
    Proposal,
    Rewrite,
    _is_torch_callable,
    _tensor_method,
    at_break,
    begin,
    call,
    function_locals,
    pure_expr,
    resolve,
    shape_only,
    size_names,
    static_test,
    tensor_bool,
)
from nstviz.advisor.rewrites._source import FunctionSource

__all__ = ["is_raise_check", "propose_check"]


def is_raise_check(node: ast.If) -> bool:
    """``if <test>: raise ...`` with no ``else``: a check, not a branch."""
    return not node.orelse and len(node.body) == 1 and isinstance(node.body[0], ast.Raise)


def _message(node: ast.Raise, test: ast.expr) -> str:
    """The fixed text of the raised message (an f-string's literal parts), or the check itself."""
    exc = node.exc
    name = ""
    if isinstance(exc, ast.Call):
        name = ast.unparse(exc.func)
        arg = exc.args[0] if exc.args else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return f"{name}: {arg.value}"
        if isinstance(arg, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "..." for v in arg.values)
            return f"{name}: {text}"
    elif exc is not None:
        name = ast.unparse(exc)
    return f"{name or 'error'}: check failed: {ast.unparse(test)}"


def _static(node: ast.expr) -> bool:
    """``x is None`` / ``isinstance(...)`` / ``not soft_labels`` / ``self.training``: decided in Python, not on tensor data."""
    return static_test(node, flags=True)


def _split(test: ast.expr) -> tuple[list[ast.expr], ast.expr | None]:
    """``a is not None and <data>`` -> ([a is not None], <data>): the Python guards stay an ``if``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        guards = [v for v in test.values if _static(v)]
        data = [v for v in test.values if not _static(v)]
        if guards and data and all(_static(v) for v in test.values[: len(guards)]):
            rest = data[0] if len(data) == 1 else ast.BoolOp(op=ast.And(), values=data)
            return guards, rest
    return [], (None if _static(test) else test)


def _asserted(test: ast.expr) -> ast.expr:
    """The condition that must hold (the negated test, as a tensor expression)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return tensor_bool(copy.deepcopy(test.operand))
    return ast.UnaryOp(op=ast.Invert(), operand=tensor_bool(copy.deepcopy(test)))


class _ChecksToAsserts(ast.NodeTransformer):
    def __init__(self, src: FunctionSource, local: set[str]) -> None:
        self.src, self.local = src, local
        self.sizes = size_names(src.tree)
        self.done: list[str] = []
        self.lines: list[tuple[int, int]] = []

    def visit_If(self, node: ast.If) -> ast.stmt:
        self.generic_visit(node)
        if not is_raise_check(node) or not pure_expr(node.test, self.src, self.local):
            return node
        guards, data = _split(node.test)
        if not _on_data(data, self.sizes):
            return node  # `if flag: raise`, `if x is None: raise`, `if x.dim() != 3: raise`: not on tensor data
        self.done.append(f"if {ast.unparse(node.test)}: raise")
        self.lines.append((node.test.lineno, node.test.end_lineno or node.test.lineno))
        msg = ast.Constant(value=_message(node.body[0], node.test))  # type: ignore[arg-type]
        check: ast.stmt = ast.Expr(value=call("torch._assert_async", _asserted(data), msg))
        if guards:  # `labels is not None and labels.max() >= n`: the assert runs only when labels is given
            test = guards[0] if len(guards) == 1 else ast.BoolOp(op=ast.And(), values=guards)
            check = ast.If(test=test, body=[check], orelse=[])
        return ast.copy_location(check, node)

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        """``assert <data>, msg`` -> ``torch._assert_async(<data>, msg)``; Python asserts on flags stay."""
        if not _on_data(node.test, self.sizes) or not self._reads_tensor(node.test) \
                or any(static_test(v) for v in _conjuncts(node.test)) or not pure_expr(node.test, self.src, self.local):
            return node
        self.done.append(f"assert {ast.unparse(node.test)}")
        self.lines.append((node.test.lineno, node.test.end_lineno or node.test.lineno))
        msg = ast.Constant(value=f"AssertionError: {_text(node.msg) or 'check failed: ' + ast.unparse(node.test)}")
        check = ast.Expr(value=call("torch._assert_async", tensor_bool(copy.deepcopy(node.test)), msg))
        return ast.copy_location(check, node)


    def _reads_tensor(self, test: ast.expr) -> bool:
        """A Tensor method (``x.isnan()``, ``.all()``) or a ``torch`` function is called: ``assert n % h == 0`` is not."""
        for n in ast.walk(test):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                root = n.func.value
                if (isinstance(root, ast.Name) and root.id in self.local) or not isinstance(root, ast.Name):
                    if _tensor_method(n.func.attr) and n.func.attr not in _SHAPE_CALLS:
                        return True
                elif _is_torch_callable(resolve(n.func, self.src)):
                    return True
        return False


def _on_data(test: ast.expr | None, sizes: frozenset[str] = frozenset()) -> bool:
    """A test that reads tensor values: a call or a comparison, not on shapes alone (``sizes``: locals holding sizes)."""
    return test is not None and not shape_only(test, sizes) and any(
        isinstance(n, (ast.Call, ast.Compare)) for n in ast.walk(test))


def _conjuncts(test: ast.expr) -> list[ast.expr]:
    return list(test.values) if isinstance(test, ast.BoolOp) else [test]


def _text(msg: ast.expr | None) -> str:
    """The fixed text of an assert's message (an f-string's literal parts)."""
    if isinstance(msg, ast.Constant) and isinstance(msg.value, str):
        return msg.value
    if isinstance(msg, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "..." for v in msg.values)
    return ""


def propose_check(fn: object, brk: BreakSite | None = None) -> Proposal:
    """One rewrite of every data-dependent ``if ...: raise`` of ``fn`` into ``torch._assert_async``.

    With the break's line known, the check on that line must be among them (else no rewrite).
    """
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    t = _ChecksToAsserts(src, function_locals(src.tree))
    new_def = t.visit(copy.deepcopy(src.tree))
    if not t.done or not at_break(src, brk, t.lines):
        out.fits = False
        out.notes.append("no data-dependent `if ...: raise` or `assert` check at the break")
        return out
    ast.fix_missing_locations(new_def)
    what = "; ".join(f"`{d}`" for d in t.done)
    why = (f"the data-dependent check {what} broke the graph (GB0170); torch._assert_async asserts it as a graph op "
           "(a failing check raises RuntimeError)")
    out.rewrites.append(Rewrite.of(
        src, new_def, "check-assert", f"{src.fn.__qualname__}: {what} -> torch._assert_async", why))
    return out
