"""Remedy: attention run per segment of a split by sizes read from a tensor becomes one masked call.

Packed sequences (every image of a batch in one row, a vision tower's ``cu_seqlens``) are often
attended one segment at a time when no variable-length kernel is at hand::

    lengths = cu_seqlens[1:] - cu_seqlens[:-1]
    splits = [torch.split(t, lengths.tolist(), dim=2) for t in (q, k, v)]
    outs = [attention(self, q, k, v, attention_mask=None, ...)[0] for q, k, v in zip(*splits)]
    out = torch.cat(outs, dim=1)

``lengths.tolist()`` reads the segment sizes as Python ints, so Dynamo breaks the graph there
(GB0033), in every layer; ``capture_scalar_outputs`` only turns them into unbacked sizes that the
attention then guards on. Attention within segments is attention over the whole packed sequence
with a block-diagonal mask (a position attends only to positions of its own segment), and that
has static shapes: the segment of each position is the count of segment ends at or before it::

    ends = lengths.cumsum(0)
    segment = (torch.arange(q.shape[2])[:, None] >= ends[None, :]).sum(-1)
    mask = zeros(n, n).masked_fill(segment[:, None] != segment[None, :], finfo.min)
    out = attention(self, q, k, v, attention_mask=mask[None, None], ...)[0]

The masked positions get a weight of exactly 0 after the softmax, so the outputs and gradients
equal the per-segment ones up to rounding. The cost: one ``n x n`` score matrix for the packed
sequence instead of one per segment. The call either takes an ``attention_mask``/``attn_mask``
keyword given as None, or takes three segments (query, key, value) and is given the mask as
``attention_mask`` (``attn_mask`` for ``scaled_dot_product_attention``); a call that does not
accept it raises on the input sets and the rewrite is refused.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from nstviz.advisor.rewrites._core import (
    BreakSite,
    Proposal,
    Renamer,
    Rewrite,
    at_break,
    begin,
    fresh_name,
    function_locals,
)

__all__ = ["propose_segment_mask"]

_MASK_KEYWORDS = ("attention_mask", "attn_mask")


@dataclass
class _Site:
    """The three statements of a per-segment attention, in one block."""

    block: list[ast.stmt]
    index: int  # of the split statement; the calls and the cat follow it
    sizes: ast.expr  # the tensor whose .tolist() gave the segment sizes
    dim: ast.expr
    tensors: list[ast.expr]  # what is split, in order
    loop_names: list[str]  # the names each call sees a segment of them as
    call: ast.expr  # the call per segment (with any [0] after it)
    mask_keyword: str
    result: ast.expr  # the target the cat was assigned to
    cat_dim: ast.expr

    @property
    def lines(self) -> tuple[int, int]:
        last = self.block[self.index + 2]
        return self.block[self.index].lineno, last.end_lineno or last.lineno


def _dim(call: ast.Call, position: int) -> ast.expr | None:
    """The ``dim`` argument: keyword, or the positional at ``position``; a constant int."""
    node = next((k.value for k in call.keywords if k.arg == "dim"), None)
    if node is None and len(call.args) > position:
        node = call.args[position]
    inner = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else node
    return node if isinstance(inner, ast.Constant) and type(inner.value) is int else None


def _split_of_sizes(stmt: ast.stmt) -> tuple[str, ast.expr, ast.expr, list[ast.expr]] | None:
    """``S = [torch.split(t, X.tolist(), dim=d) for t in (a, b, c)]`` -> (S, X, d, [a, b, c])."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.ListComp) and len(stmt.value.generators) == 1):
        return None
    comp, gen = stmt.value, stmt.value.generators[0]
    split = comp.elt
    if not (isinstance(split, ast.Call) and ast.unparse(split.func) == "torch.split" and len(split.args) >= 2
            and isinstance(gen.target, ast.Name) and isinstance(gen.iter, (ast.Tuple, ast.List)) and not gen.ifs):
        return None
    first, sizes = split.args[0], split.args[1]
    if not (isinstance(first, ast.Name) and first.id == gen.target.id and isinstance(sizes, ast.Call)
            and isinstance(sizes.func, ast.Attribute) and sizes.func.attr == "tolist" and not sizes.args):
        return None
    dim = _dim(split, 2)
    return (stmt.targets[0].id, sizes.func.value, dim, list(gen.iter.elts)) if dim is not None else None


def _calls_per_segment(stmt: ast.stmt, splits: str) -> tuple[str, list[str], ast.expr, str] | None:
    """``O = [f(..., q, k, v, attention_mask=None, ...)[0] for q, k, v in zip(*S)]`` -> (O, [q, k, v], call, keyword)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.ListComp) and len(stmt.value.generators) == 1):
        return None
    gen = stmt.value.generators[0]
    it = gen.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip" and len(it.args) == 1
            and isinstance(it.args[0], ast.Starred) and isinstance(it.args[0].value, ast.Name)
            and it.args[0].value.id == splits and not gen.ifs):
        return None
    names = [e.id for e in gen.target.elts if isinstance(e, ast.Name)] if isinstance(gen.target, ast.Tuple) else []
    elt = stmt.value.elt
    inner = _segment_call(elt, names)
    if not names or inner is None:
        return None
    given = [k for k in inner.keywords if k.arg in _MASK_KEYWORDS]
    if given:  # a mask given as None: the call takes one; any other mask is not ours to replace
        ok = len(given) == 1 and isinstance(given[0].value, ast.Constant) and given[0].value.value is None
        return (stmt.targets[0].id, names, elt, str(given[0].arg)) if ok else None
    if len(names) != 3:  # no mask keyword: only a call on (query, key, value) segments is taken for an attention
        return None
    sdpa = ast.unparse(inner.func).endswith("scaled_dot_product_attention")
    return stmt.targets[0].id, names, elt, "attn_mask" if sdpa else "attention_mask"


def _segment_call(elt: ast.expr, names: list[str]) -> ast.Call | None:
    """The call in ``elt`` given every segment name as an argument (``f(q, k, v)`` in ``f(q, k, v)[0].transpose(1, 2)``)."""
    for node in ast.walk(elt):
        if isinstance(node, ast.Call):
            given = {a.id for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name)}
            if set(names) <= given:
                return node
    return None


def _cat_of(stmt: ast.stmt, outputs: str) -> tuple[ast.expr, ast.expr] | None:
    """``R = torch.cat(O, dim=d)`` -> (R, d)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)
            and ast.unparse(stmt.value.func) == "torch.cat" and stmt.value.args
            and isinstance(stmt.value.args[0], ast.Name) and stmt.value.args[0].id == outputs):
        return None
    dim = _dim(stmt.value, 1)
    return (stmt.targets[0], dim) if dim is not None else None


def _loaded(tree: ast.AST, name: str) -> int:
    return sum(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))


def _find(tree: ast.FunctionDef) -> _Site | None:
    """The first split-attend-cat of the function whose split and outputs lists are used nowhere else."""
    for node in ast.walk(tree):
        for block in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if not isinstance(block, list):
                continue
            for i in range(len(block) - 2):
                split = _split_of_sizes(block[i])
                calls = _calls_per_segment(block[i + 1], split[0]) if split else None
                cat = _cat_of(block[i + 2], calls[0]) if calls else None
                if split is None or calls is None or cat is None:
                    continue
                if _loaded(tree, split[0]) != 1 or _loaded(tree, calls[0]) != 1:
                    continue  # the segments or the per-segment outputs are read again later
                if len(calls[1]) != len(split[3]):
                    continue
                return _Site(block, i, split[1], split[2], split[3], calls[1], calls[2], calls[3], cat[0], cat[1])
    return None


def _masked_statements(site: _Site, taken: set[str]) -> list[ast.stmt]:
    """The mask from the sizes, and the one call over the whole sequence assigned where the cat was."""
    ends, segment, mask = (fresh_name(n, taken) for n in ("segment_ends", "segment_of", "segment_mask"))
    first = ast.unparse(site.tensors[0])
    dim = ast.unparse(site.dim)
    code = (
        f"{ends} = ({ast.unparse(site.sizes)}).cumsum(0).to({first}.device)\n"
        f"{segment} = (torch.arange({first}.shape[{dim}], device={first}.device)[:, None] >= {ends}[None, :]).sum(-1)\n"
        f"{mask} = torch.zeros({segment}.shape[0], {segment}.shape[0], dtype={first}.dtype, device={first}.device)"
        f".masked_fill({segment}[:, None] != {segment}[None, :], torch.finfo({first}.dtype).min)[None, None]\n"
    )
    stmts = ast.parse(code).body
    one_call = copy.deepcopy(site.call)
    inner = _segment_call(one_call, site.loop_names)
    assert inner is not None  # found there before
    keywords = inner.keywords
    given = [k for k in keywords if k.arg == site.mask_keyword]
    if given:
        given[0].value = ast.Name(id=mask, ctx=ast.Load())
    else:  # merged into `**kwargs`, which may carry a None mask; a call that takes none raises, and is refused
        mapping = ast.Dict(keys=[ast.Constant(site.mask_keyword)], values=[ast.Name(id=mask, ctx=ast.Load())])
        spread = next((k for k in keywords if k.arg is None), None)
        if spread is not None:
            mapping.keys.insert(0, None)
            mapping.values.insert(0, spread.value)
            spread.value = mapping
        else:
            keywords.append(ast.keyword(arg=site.mask_keyword, value=mapping.values[0]))
    one_call = Renamer({n: ast.unparse(t) for n, t in zip(site.loop_names, site.tensors, strict=True)}).visit(one_call)
    stmts.append(ast.Assign(targets=[copy.deepcopy(site.result)], value=one_call))
    return stmts


def propose_segment_mask(fn: object, brk: BreakSite | None = None) -> Proposal:
    """One masked attention call over the packed sequence in place of a call per segment of a split by ``.tolist()`` sizes."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    site = _find(src.tree)
    if site is None or not all(isinstance(t, ast.Name) for t in site.tensors) or not at_break(src, brk, [site.lines]):
        out.fits = False
        out.notes.append("no attention per segment of a split by sizes read from a tensor at the break")
        return out
    new_def = copy.deepcopy(src.tree)
    new_site = _find(new_def)
    assert new_site is not None  # the same tree, copied
    taken = function_locals(new_def)
    new_site.block[new_site.index:new_site.index + 3] = _masked_statements(new_site, taken)
    ast.fix_missing_locations(new_def)
    sizes = ast.unparse(site.sizes)
    why = (f"`{sizes}.tolist()` read the segment sizes as Python ints (a graph break in every call); attention within "
           "segments is one attention over the packed sequence with a block-diagonal mask, whose shapes are static "
           "(costs one n x n score matrix instead of one per segment)")
    what = f"attention per segment of `{sizes}.tolist()` -> one call with a block-diagonal mask"
    out.rewrites.append(Rewrite.of(src, new_def, "segment-mask", f"{src.fn.__qualname__}: {what}", why))
    return out
