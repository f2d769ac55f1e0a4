"""Remedy: a data-dependent ``if`` that updates the module's state becomes ``torch.where`` selects.

Statistics a module keeps on itself (a quantiser's running min and max, an average seeded by the
first batch) are updated under a test on their own values::

    if self.x_min.min() > -1.1e-5 and self.x_max.max() < 1.1e-5:   # not seeded yet
        self.x_min = self.x_min + x_min
    elif self.momentum == -1:
        self.x_min = torch.min(self.x_min, x_min)
    else:
        self.x_min = self.x_min * self.momentum + x_min * (1 - self.momentum)

Dynamo breaks on the test (GB0170) in every layer that keeps such state. ``branch-where`` takes
only local names; here every arm is computed into temporaries and each attribute an arm assigns
is selected: ``self.x_min = torch.where(c, x_min__t, x_min__f)`` (an arm that leaves it keeps the
current value). Tests Dynamo decides while tracing (``elif self.momentum == -1``) stay Python
``if`` statements inside the arm. The function's data checks (``assert x.isnan().sum() == 0``,
``if ...: raise``) become ``torch._assert_async`` in the same rewrite: they come first, and would
break before the branch is reached. Like every rewrite, it is kept only when outputs and gradients
equal eager's and the graph count goes down.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import (
    BreakSite,
    Proposal,
    Rewrite,
    at_break,
    begin,
    call,
    fresh_name,
    function_locals,
    pure_expr,
    shape_only,
    tensor_bool,
)
from nstviz.advisor.rewrites._source import FunctionSource
from nstviz.advisor.rewrites.branches import _read_outside, maybe_data, node_args
from nstviz.advisor.rewrites.checks import _ChecksToAsserts, is_raise_check

__all__ = ["propose_state_where"]

_MAX_NODES = 160

Key = tuple[str, str]
"""What an arm assigns: ``("attr", "x_min")`` for ``self.x_min``, ``("name", "scale")`` for a local."""


class _Unsupported(Exception):
    """An arm holds something other than assignments of pure expressions and tests decided while tracing."""


def _key(target: ast.expr, me: str | None) -> Key | None:
    if isinstance(target, ast.Name):
        return ("name", target.id)
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me and me:
        return ("attr", target.attr)
    return None


def _ref(key: Key, me: str, ctx: ast.expr_context | None = None) -> ast.expr:
    """``self.x_min`` or ``scale``, read (the current value) or stored to with ``ctx=ast.Store()``."""
    ctx = ctx or ast.Load()
    if key[0] == "attr":
        return ast.Attribute(value=ast.Name(id=me, ctx=ast.Load()), attr=key[1], ctx=ctx)
    return ast.Name(id=key[1], ctx=ctx)


class _ReadsRenamed(ast.NodeTransformer):
    """Reads of what the arm already assigned (``self.x_min`` or ``scale``) read its temporary instead."""

    def __init__(self, temps: dict[Key, str], me: str | None) -> None:
        self.temps, self.me = temps, me

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        key = _key(node, self.me)
        if key in self.temps and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(id=self.temps[key], ctx=ast.Load()), node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if ("name", node.id) in self.temps and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(id=self.temps[("name", node.id)], ctx=ast.Load()), node)
        return node


class _Arms:
    """Turns the arms of one ``if`` into statements that assign temporaries (``x_min__t``) instead of state."""

    def __init__(self, src: FunctionSource, local: set[str], me: str | None, taken: set[str]) -> None:
        self.src, self.local, self.me, self.taken = src, local, me, taken
        self.names: dict[tuple[Key, str], str] = {}

    def temp(self, key: Key, suffix: str) -> str:
        if (key, suffix) not in self.names:
            self.names[(key, suffix)] = fresh_name(f"{key[1]}__{suffix}", self.taken)
        return self.names[(key, suffix)]

    def arm(self, stmts: list[ast.stmt], suffix: str, temps: dict[Key, str]) -> list[ast.stmt]:
        """The arm's statements on temporaries; ``temps`` gets what it assigned (key -> temporary)."""
        out: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, ast.Pass):
                continue
            if isinstance(s, ast.Assign) and len(s.targets) == 1:
                targets = s.targets[0].elts if isinstance(s.targets[0], ast.Tuple) else [s.targets[0]]
                keys = [_key(t, self.me) for t in targets]
                if any(k is None for k in keys) or not pure_expr(s.value, self.src, self.local):
                    raise _Unsupported(ast.unparse(s))
                value = _ReadsRenamed(dict(temps), self.me).visit(copy.deepcopy(s.value))
                for k in keys:
                    temps[k] = self.temp(k, suffix)  # type: ignore[index]
                names = [ast.Name(id=temps[k], ctx=ast.Store()) for k in keys]  # type: ignore[index]
                target = names[0] if len(names) == 1 else ast.Tuple(elts=names, ctx=ast.Store())  # type: ignore[arg-type]
                out.append(ast.Assign(targets=[target], value=value))
            elif isinstance(s, ast.If) and pure_expr(s.test, self.src, self.local):
                # stays a Python `if` in the arm (`elif self.momentum == -1` is decided while tracing; one on
                # data would still break, and the rewrite not be kept): both sub-arms must assign the same
                inner_t, inner_f = dict(temps), dict(temps)
                body = self.arm(s.body, suffix, inner_t)
                orelse = self.arm(s.orelse, suffix, inner_f)
                if inner_t.keys() != inner_f.keys():
                    raise _Unsupported(f"`if {ast.unparse(s.test)}`: its arms assign different state")
                temps.update(inner_t)
                test = _ReadsRenamed(dict(temps), self.me).visit(copy.deepcopy(s.test))
                out.append(ast.If(test=test, body=body or [ast.Pass()], orelse=orelse))
            else:
                raise _Unsupported(ast.unparse(s).splitlines()[0])
        return out


def _selects(node: ast.If, arms: _Arms, live: set[str]) -> list[ast.stmt]:
    """``node`` as statements: the test, both arms on temporaries, one ``torch.where`` per attribute assigned.

    ``live``: the names read outside ``node``; a local only the arms read is their own, not selected.
    """
    took_t: dict[Key, str] = {}
    took_f: dict[Key, str] = {}
    body = arms.arm(node.body, "t", took_t)
    orelse = arms.arm(node.orelse, "f", took_f)
    keys = [k for k in dict.fromkeys([*took_t, *took_f]) if k[0] == "attr" or k[1] in live]
    if not any(k[0] == "attr" for k in keys):
        raise _Unsupported("no attribute of the instance is assigned (branch-where's case)")
    cond = fresh_name("_nstviz_c", arms.taken)
    out: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=cond, ctx=ast.Store())], value=tensor_bool(copy.deepcopy(node.test)))]
    out += body + orelse
    me = arms.me or ""
    for k in keys:
        t = ast.Name(id=took_t[k], ctx=ast.Load()) if k in took_t else _ref(k, me)
        f = ast.Name(id=took_f[k], ctx=ast.Load()) if k in took_f else _ref(k, me)
        out.append(ast.Assign(targets=[_ref(k, me, ast.Store())], value=call("torch.where", ast.Name(id=cond, ctx=ast.Load()), t, f)))
    return out


class _StateIfs(ast.NodeTransformer):
    """Every data-dependent ``if`` whose arms only update state, rewritten as selects (the break's, or all)."""

    def __init__(self, src: FunctionSource, local: set[str], me: str | None, tree: ast.FunctionDef) -> None:
        self.src, self.local, self.me, self.tree = src, local, me, tree
        self.arms = _Arms(src, local, me, set(local))
        self.done: list[str] = []
        self.lines: list[tuple[int, int]] = []
        self.notes: list[str] = []

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        if not maybe_data(node.test, False) or is_raise_check(node) or shape_only(node.test) \
                or not pure_expr(node.test, self.src, self.local):
            return self.generic_visit(node)
        text = f"if {ast.unparse(node.test)}"
        if sum(1 for _ in ast.walk(node)) > _MAX_NODES:
            self.notes.append(f"`{text}`: arms too large to compute both")
            return self.generic_visit(node)
        try:
            stmts = _selects(node, self.arms, _read_outside(self.tree, node))
        except _Unsupported as e:
            self.notes.append(f"`{text}`: not rewritten as selects of state ({e})")
            return self.generic_visit(node)
        self.done.append(text)
        self.lines.append((node.test.lineno, node.test.end_lineno or node.test.lineno))
        return stmts


def propose_state_where(fn: object, brk: BreakSite | None = None) -> Proposal:
    """One rewrite of ``fn``: its data-dependent ``if``s that update ``self``'s attributes become ``torch.where``.

    Its data checks become asserts in the same rewrite. The break's line must be on one of the
    ``if`` tests or on one of the checks.
    """
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    params = [a.arg for a in node_args(src.tree)]
    local = function_locals(src.tree)
    new_def = copy.deepcopy(src.tree)
    states = _StateIfs(src, local, params[0] if params else None, new_def)
    new_def = states.visit(new_def)
    if not states.done:
        out.fits = False  # a data `if` on locals is branch-where's: its notes say why not
        out.notes += states.notes or ["no data-dependent `if` that updates the instance's state"]
        return out
    checks = _ChecksToAsserts(src, local)
    new_def = checks.visit(new_def)
    if not at_break(src, brk, states.lines + checks.lines):
        out.fits = False
        out.notes.append("no data-dependent `if` on state, or check, at the break")
        return out
    ast.fix_missing_locations(new_def)
    what = "; ".join(f"`{d}`" for d in states.done)
    asserted = "".join(f"; `{d}` as torch._assert_async" for d in checks.done)
    why = (f"the data-dependent {what} broke the graph (GB0170); every arm is computed and each attribute it "
           f"assigns is selected with torch.where{asserted}")
    out.rewrites.append(Rewrite.of(
        src, new_def, "state-where", f"{src.fn.__qualname__}: {what} -> torch.where on the state{asserted}", why))
    return out
