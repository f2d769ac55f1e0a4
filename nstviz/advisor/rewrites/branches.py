"""Remedy 1: a data-dependent ``if`` on a tensor (GB0170) becomes ``torch.where`` or ``torch.cond``.

Both branches must be cheap and side-effect free (simple assignments to local names of tensor
expressions, or a ``return``). A condition only on shapes (``if x.shape[-1] % 4 != 0: pad``)
does not break: that is detected and said, with no rewrite.

A shortcut that trades a tensor for ``None`` when the data makes it trivial (``if not
mask.any(): mask = None``: fairseq's padding mask) cannot be selected by either: a graph cannot
return ``None`` on some data and a tensor on other. It is dropped instead (``branch-keep``): the
tensor is kept in every case, and code that checks ``is not None`` applies the trivial tensor.
That holds only where the trivial tensor does nothing (an all-False mask to ``masked_fill``), so,
like every rewrite, it is kept only when the outputs match eager on the inputs given and on
other input sets.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import (
    BreakSite,
    Proposal,
    Renamer,
    Rewrite,
    assigned_names,
    begin,
    call,
    function_locals,
    pure_block,
    pure_expr,
    shape_only,
    static_test,
    tensor_bool,
)
from nstviz.advisor.rewrites._source import FunctionSource, RewriteError
from nstviz.advisor.rewrites.checks import is_raise_check

__all__ = ["maybe_data", "propose_branch"]

_MAX_NODES = 80
def maybe_data(test: ast.expr, line_known: bool) -> bool:
    """Whether a condition can be on tensor data: never ``is``/``isinstance``/``hasattr`` tests.

    Such tests may be operands of ``and``/``or`` beside data ones (``x is not None and m.any()``):
    the data operands decide. Without the break's line, only comparisons and calls (``s > 1``,
    ``.any()``) count: a bare ``if flag:`` or ``if self.config.x:`` is not taken for a data-dependent branch.
    """
    parts = _data_parts(test)
    if not parts:
        return False
    for n in (n for part in parts for n in ast.walk(part)):
        if (isinstance(n, ast.Constant) and isinstance(n.value, str)) or (not isinstance(n, ast.Constant) and static_test(n)):
            return False
    return line_known or any(isinstance(n, (ast.Call, ast.Compare)) for part in parts for n in ast.walk(part))


def _data_parts(test: ast.expr) -> list[ast.expr]:
    """The operands of ``and``/``or``/``not`` that are not decided while tracing (``x is not None`` is)."""
    if static_test(test):
        return []
    if isinstance(test, ast.BoolOp):
        return [p for v in test.values for p in _data_parts(v)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _data_parts(test.operand)
    return [test]


def _find_if(src: FunctionSource, line: int | None) -> list[tuple[list[ast.stmt], int, ast.If]]:
    """``(enclosing block, index, if)`` for the ``if`` whose test is on ``line`` (every ``if`` when unknown)."""
    found = []
    for node in ast.walk(src.tree):
        for fld in ("body", "orelse"):
            block = getattr(node, fld, None)
            if not isinstance(block, list):
                continue
            for i, s in enumerate(block):
                if isinstance(s, ast.If) and (line is None or s.test.lineno <= line <= (s.test.end_lineno or s.lineno)):
                    found.append((block, i, s))
    return found


def _branch(stmts: list[ast.stmt], suffix: str, names: list[str]) -> tuple[list[ast.stmt], dict[str, str]]:
    """The branch with every name it assigns renamed ``n`` -> ``n__suffix`` (loads after the store too)."""
    mapping: dict[str, str] = {}
    out: list[ast.stmt] = []
    for s in stmts:
        s = copy.deepcopy(s)
        if isinstance(s, ast.Assign):
            s.value = Renamer(dict(mapping)).visit(s.value)
            for n in assigned_names([s]):
                mapping[n] = f"{n}__{suffix}"
            s.targets = [Renamer(mapping).visit(s.targets[0])]
            out.append(s)
        elif isinstance(s, ast.Return):
            s.value = Renamer(dict(mapping)).visit(s.value)
            out.append(s)
    del names
    return out, mapping


def _name(n: str) -> ast.Name:
    return ast.Name(id=n, ctx=ast.Load())


def _where(c: ast.expr, a: ast.expr, b: ast.expr) -> ast.expr:
    if isinstance(a, ast.Tuple) and isinstance(b, ast.Tuple) and len(a.elts) == len(b.elts):
        return ast.Tuple(elts=[_where(c, x, y) for x, y in zip(a.elts, b.elts, strict=False)], ctx=ast.Load())
    return call("torch.where", c, a, b)


def _read_outside(tree: ast.FunctionDef, node: ast.If) -> set[str]:
    """Names the function reads anywhere but inside ``node`` (a name read only there is the branch's own)."""
    inside = {id(n) for n in ast.walk(node)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in inside}


def _free_loads(stmts: list[ast.stmt]) -> list[str]:
    """Names a block reads before it assigns them."""
    out: list[str] = []
    bound: set[str] = set()
    for s in stmts:
        value = s.value if isinstance(s, (ast.Assign, ast.Return)) else None
        for n in ast.walk(value) if value is not None else ():
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound and n.id not in out:
                out.append(n.id)
        bound.update(assigned_names([s]))
    return out


def propose_branch(fn: object, brk: BreakSite | None = None) -> Proposal:
    """Rewrites of the data-dependent ``if`` at the break's line (``torch.where`` first, then ``torch.cond``)."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    local = function_locals(src.tree)
    out.rewrites += _ifexp_rewrites(src, src.local_line(brk.line), local, out.notes)
    for block, idx, node in _find_if(src, src.local_line(brk.line)):
        if not maybe_data(node.test, brk.line is not None) or is_raise_check(node):
            continue  # `if ...: raise` is a check: checks.py's
        if shape_only(node.test):
            out.notes.append(
                f"`if {ast.unparse(node.test)}` (line {node.lineno + src.firstlineno - 1}) depends on shapes only: "
                "Dynamo decides it at trace time and does not break; no rewrite is needed"
            )
            continue
        body, orelse = node.body, node.orelse
        tail: list[ast.stmt] = []
        if isinstance(body[-1], ast.Return) and not orelse and idx + 1 < len(block) and isinstance(block[idx + 1], ast.Return):
            orelse, tail = [block[idx + 1]], [block[idx + 1]]
        module_calls = False
        if not (pure_block(body, src, local) and pure_block(orelse, src, local) and pure_expr(node.test, src, local)):
            module_calls = _pure_but_submodules(body, orelse, node.test, src, local)
            if not module_calls:
                out.notes.append(f"`if {ast.unparse(node.test)}`: a branch is not side-effect free tensor code; not rewritten")
                continue
        size = sum(1 for s in [*body, *orelse] for _ in ast.walk(s))
        if size > _MAX_NODES and not module_calls:  # torch.cond runs one branch: any size
            out.notes.append(f"`if {ast.unparse(node.test)}`: branches too large to compute both ({size} nodes)")
            continue
        returns = isinstance(body[-1], ast.Return)
        if returns != (bool(orelse) and isinstance(orelse[-1], ast.Return)):
            out.notes.append(f"`if {ast.unparse(node.test)}`: one branch returns and the other does not")
            continue
        # a name only the branches read (a temporary like `clamp_value`) is not selected: it may be unbound before
        live = _read_outside(src.tree, node)
        names = [n for n in assigned_names(body) if n in live]
        if not returns and orelse and sorted(names) != sorted(n for n in assigned_names(orelse) if n in live):
            out.notes.append(f"`if {ast.unparse(node.test)}`: the branches assign different names")
            continue
        if not returns and not names:
            out.notes.append(f"`if {ast.unparse(node.test)}`: nothing it assigns is read after it")
            continue
        if (keep := _keep_rewrite(src, block, idx, node, names)) is not None:
            out.rewrites.append(keep)  # neither torch.where nor torch.cond can give None
            continue
        cond = tensor_bool(copy.deepcopy(node.test))
        kinds = ("cond",) if module_calls else ("where", "cond")
        if not module_calls and _draws_random([*body, *orelse]):
            # torch.cond's backward runs the branch again: a dropout there draws new masks, and the
            # gradients differ from eager's while the outputs match (torch.where's draws show in the outputs)
            kinds = ("where",)
            out.notes.append(f"`if {ast.unparse(node.test)}`: a branch draws random numbers; no torch.cond")
        for kind in kinds:
            new_stmts = _where_stmts(cond, body, orelse, names, returns) if kind == "where" else \
                _cond_stmts(cond, body, orelse, names, returns, local, closure=module_calls)
            if module_calls:
                new_stmts = [_in_eval_only(src, [copy.deepcopy(node), *copy.deepcopy(tail)], new_stmts)]
            new_def = copy.deepcopy(src.tree)
            new_block = _same_block(new_def, src.tree, block)
            j = idx
            new_block[j:j + 1 + len(tail)] = new_stmts
            ast.fix_missing_locations(new_def)
            why = (f"the data-dependent `if {ast.unparse(node.test)}` broke the graph (GB0170); "
                   + ("both sides are computed and selected with torch.where"
                      if kind == "where" else "the branches run as torch.cond"))
            if module_calls:
                why += (" in eval mode under torch.compile (its branch calls submodules: in training, their dropout"
                        " would draw new masks in torch.cond's backward, and run eagerly torch.cond compiles its"
                        " branches on every call, so the code as written runs there)")
            try:
                out.rewrites.append(Rewrite.of(
                    src, new_def, f"branch-{kind}",
                    f"{src.fn.__qualname__}: `if {ast.unparse(node.test)}` -> torch.{kind}", why))
            except SyntaxError as e:  # pragma: no cover - a bug in the rule
                out.notes.append(f"rewrite did not compile: {e}")
    return out


def _keep_rewrite(src: FunctionSource, block: list[ast.stmt], idx: int, node: ast.If, names: list[str]) -> Rewrite | None:
    """``if <data>: name = None`` (no else, each name bound before it) dropped, or None when it is not that shortcut."""
    body = node.body
    if node.orelse or not names or not all(
        isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant) and s.value.value is None for s in body
    ):
        return None
    params = {a.arg for a in node_args(src.tree)}
    bound_before = set(assigned_names(block[:idx])) | params
    if not set(names) <= bound_before:
        return None  # a name the shortcut alone binds would be unbound without it
    new_def = copy.deepcopy(src.tree)
    new_block = _same_block(new_def, src.tree, block)
    del new_block[idx]
    if not new_block:
        new_block.append(ast.Pass())
    ast.fix_missing_locations(new_def)
    kept = ", ".join(f"`{n}`" for n in names)
    test = ast.unparse(node.test)
    why = (f"the data-dependent shortcut `if {test}: ... = None` broke the graph (GB0170); it is dropped: {kept} "
           "stays a tensor in every case (code that checks `is not None` applies it, where it does nothing)")
    return Rewrite.of(src, new_def, "branch-keep",
                      f"{src.fn.__qualname__}: the shortcut `if {test}` to None dropped, {kept} kept", why)


def node_args(tree: ast.FunctionDef) -> list[ast.arg]:
    """Every parameter of a function definition."""
    a = tree.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x is not None)]


class _IfExpToWhere(ast.NodeTransformer):
    """``a if c else b`` (c on data, all parts pure) -> ``torch.where(c, a, b)``."""

    def __init__(self, src: FunctionSource, local: set[str], line: int | None, notes: list[str]) -> None:
        self.src, self.local, self.line, self.notes, self.done = src, local, line, notes, []

    def visit_ListComp(self, node: ast.ListComp) -> ast.ListComp:
        return node  # a comprehension's rows are remedy 3's

    visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        if self.line is not None and not (node.lineno <= self.line <= (node.end_lineno or node.lineno)):
            return node
        text = ast.unparse(node)
        if not maybe_data(node.test, self.line is not None):
            return node
        if shape_only(node.test):
            self.notes.append(f"`{text}` depends on shapes only: no break, no rewrite needed")
            return node
        if not all(pure_expr(p, self.src, self.local) for p in (node.test, node.body, node.orelse)):
            self.notes.append(f"`{text}`: not side-effect free tensor code; not rewritten")
            return node
        self.done.append(text)
        return call("torch.where", tensor_bool(node.test), node.body, node.orelse)


def _ifexp_rewrites(src: FunctionSource, line: int | None, local: set[str], notes: list[str]) -> list[Rewrite]:
    t = _IfExpToWhere(src, local, line, notes)
    new_def = t.visit(copy.deepcopy(src.tree))
    if not t.done:
        return []
    ast.fix_missing_locations(new_def)
    what = "; ".join(f"`{d}`" for d in t.done)
    why = f"the data-dependent {what} broke the graph (GB0170); both sides are computed and selected with torch.where"
    return [Rewrite.of(src, new_def, "branch-where", f"{src.fn.__qualname__}: {what} -> torch.where", why)]


def _same_block(new_def: ast.FunctionDef, old_def: ast.FunctionDef, block: list[ast.stmt]) -> list[ast.stmt]:
    """The list in the copied tree that corresponds to ``block`` of the original tree."""
    for a, b in zip(ast.walk(old_def), ast.walk(new_def), strict=False):
        for fld in ("body", "orelse"):
            if getattr(a, fld, None) is block:
                return getattr(b, fld)
    raise RewriteError("internal: block not found")


def _where_stmts(cond: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt], names: list[str], returns: bool) -> list[ast.stmt]:
    out: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id="_nstviz_c", ctx=ast.Store())], value=cond)]
    tb, tmap = _branch(body, "t", names)
    fb, fmap = _branch(orelse, "f", names)
    if returns:
        ta, fa = tb.pop(), fb.pop()
        out += tb + fb
        out.append(ast.Return(value=_where(_name("_nstviz_c"), ta.value, fa.value)))  # type: ignore[attr-defined, arg-type]
        return out
    out += tb + fb
    for n in names:
        out.append(ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())],
                              value=call("torch.where", _name("_nstviz_c"), _name(tmap[n]), _name(fmap.get(n, n)))))
    return out


_RANDOM_CALLS = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                           "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm",
                           "bernoulli", "multinomial", "normal", "poisson", "uniform_", "normal_"})


def _draws_random(stmts: list[ast.stmt]) -> bool:
    """A call of a random op (``F.dropout``, ``torch.rand``, ``x.bernoulli()``) in the statements."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name))
               and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) in _RANDOM_CALLS
               for s in stmts for n in ast.walk(s))


def _pure_but_submodules(body: list[ast.stmt], orelse: list[ast.stmt], test: ast.expr, src: FunctionSource,
                         local: set[str]) -> bool:
    """Pure tensor code but for calls of the instance's submodules (``self.ff(h)``), in a method."""
    params = node_args(src.tree)
    if not params or not pure_expr(test, src, local):
        return False
    me = params[0].arg
    stripped = _StripSubmoduleCalls(me)
    copies = [stripped.visit(copy.deepcopy(s)) for s in [*body, *orelse]]
    return stripped.found and pure_block(copies, src, local - {me})


class _StripSubmoduleCalls(ast.NodeTransformer):
    """``self.ff(h, m)`` -> ``(h, m)``, to check what remains; ``self`` read otherwise fails the check."""

    def __init__(self, me: str) -> None:
        self.me, self.found = me, False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == self.me:
            self.found = True
            return ast.Tuple(elts=[self.visit(a) for a in [*node.args, *(k.value for k in node.keywords)]],
                             ctx=ast.Load())
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.me:  # `self.gate` (a parameter) stays a read of an outer name: allowed
            return ast.copy_location(ast.Name(id=f"_nstviz_{self.me}", ctx=node.ctx), node)
        return node


def _in_eval_only(src: FunctionSource, original: list[ast.stmt], rewritten: list[ast.stmt]) -> ast.If:
    """``if self.training or not torch.compiler.is_compiling(): <as written> else: <rewritten>``.

    Dynamo decides the test while tracing. Run eagerly, the code stays as written: torch.cond outside
    torch.compile compiles its branches for every new module instance (Evolla, eager: 3 -> 86 ms a call).
    """
    me = node_args(src.tree)[0].arg
    training = ast.Attribute(value=ast.Name(id=me, ctx=ast.Load()), attr="training", ctx=ast.Load())
    eager = ast.UnaryOp(op=ast.Not(), operand=call("torch.compiler.is_compiling"))
    return ast.If(test=ast.BoolOp(op=ast.Or(), values=[training, eager]), body=original, orelse=rewritten)


def _cond_stmts(cond: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt], names: list[str], returns: bool,
                local: set[str], closure: bool = False) -> list[ast.stmt]:
    """``torch.cond`` of the two branches.

    With ``closure``, the branches read every name as a free variable: their operands may be None
    or modules, which torch.cond does not take.
    """
    ops = [] if closure else [
        n for n in dict.fromkeys([*_free_loads(body), *_free_loads(orelse),
                                  *(n for n in names if n not in assigned_names(orelse))]) if n in local]
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in ops], kwonlyargs=[], kw_defaults=[], defaults=[])

    def fn(name: str, stmts: list[ast.stmt]) -> ast.FunctionDef:
        stmts = copy.deepcopy(stmts)
        if closure:  # a name the branch reads, then rebinds, is read from an outer alias (else unbound)
            rebound = [n for n in _free_loads(stmts) if n in assigned_names(stmts)]
            stmts = [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=_name(f"_nstviz_{n}")) for n in rebound] + stmts
        if not returns:
            assigned = set(assigned_names(stmts))
            # an output that is an input unchanged must be a copy: torch.cond refuses aliases
            elts = [_name(n) if n in assigned else call(f"{n}.clone") for n in names]
            stmts.append(ast.Return(value=ast.Tuple(elts=elts, ctx=ast.Load())))
        return ast.FunctionDef(name=name, args=copy.deepcopy(args), body=stmts or [ast.Pass()], decorator_list=[],
                               returns=None, type_params=[])

    aliases = [n for n in dict.fromkeys([*_free_loads(body), *_free_loads(orelse)])
               if closure and n in [*assigned_names(body), *assigned_names(orelse)]]
    out: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=f"_nstviz_{n}", ctx=ast.Store())], value=_name(n))
                           for n in aliases]
    out += [fn("_nstviz_true", body), fn("_nstviz_false", orelse)]
    c = call("torch.cond", cond, _name("_nstviz_true"), _name("_nstviz_false"),
             ast.Tuple(elts=[_name(n) for n in ops], ctx=ast.Load()))
    if returns:
        out.append(ast.Return(value=c))
    else:
        out.append(ast.Assign(targets=[ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names], ctx=ast.Store())],
                              value=c))
    return out
