"""A mixture-of-experts loop over the experts ``nonzero`` finds, run over every expert with a mask.

Many transformers experts modules without a batched implementation (Switch Transformers,
NLLB-MoE: one ``nn.Module`` per expert) run Mixtral's eager loop::

    expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
    for expert_idx in expert_hit:
        idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
        current_state = hidden_states[None, top_x].reshape(-1, hidden_states.shape[-1])
        current_hidden_states = self[f"expert_{expert_idx[0]}"](current_state) * weights[top_x, idx, None]
        final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))

``nonzero`` and the one-argument ``torch.where`` have data-dependent output shapes (GB0036): one
graph break per layer, and ``capture_dynamic_output_shape_ops`` does not lower the graph count.
The rewrite keeps the body and makes every shape static:

- the loop runs over every expert (``for expert_idx in [[e] for e in range(len(expert_mask))]``:
  a one-element list indexes like the one-element rows of ``nonzero``, and ``expert_idx[0]`` is
  the expert's number);
- ``idx, top_x = torch.where(mask)`` takes every (slot, token) pair, in the same order;
- what ``index_add_`` adds is multiplied by the mask at those pairs, so the pairs the router did
  not choose add zero.

The cost: every expert runs on every routed slot (``num_experts`` times the expert compute of the
loop). Outputs are verified against eager on several input sets like any rewrite.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, begin

__all__ = ["propose_dense_experts"]

_MASK = "_nstviz_mask"


def _is_call(node: ast.AST, attr: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr


def _nonzero_source(value: ast.expr) -> str | None:
    """``expert_mask`` in ``torch.greater(expert_mask.sum(...), 0).nonzero()`` (the tensor the hits come from)."""
    if not _is_call(value, "nonzero"):
        return None
    for n in ast.walk(value):
        if _is_call(n, "sum") and isinstance(n.func.value, ast.Name):  # type: ignore[attr-defined]
            return n.func.value.id  # type: ignore[attr-defined]
    return None


def _where_pairs(stmt: ast.stmt) -> tuple[str, str, ast.expr] | None:
    """``(idx, top_x, mask)`` of ``idx, top_x = torch.where(mask)`` (the one-argument form)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)):
        return None
    names = stmt.targets[0].elts
    call = stmt.value
    if len(names) != 2 or not all(isinstance(n, ast.Name) for n in names):
        return None
    if not (_is_call(call, "where") and len(call.args) == 1 and not call.keywords):  # type: ignore[attr-defined]
        return None
    return names[0].id, names[1].id, call.args[0]  # type: ignore[attr-defined]


def _pairs_stmts(idx: str, top_x: str, mask: ast.expr) -> list[ast.stmt]:
    """Every (slot, token) pair of the 2-d ``mask``, in ``torch.where``'s order, and the mask kept."""
    text = (
        f"{_MASK} = {ast.unparse(mask)}\n"
        f"{idx} = torch.arange({_MASK}.shape[0], device={_MASK}.device).repeat_interleave({_MASK}.shape[1])\n"
        f"{top_x} = torch.arange({_MASK}.shape[1], device={_MASK}.device).repeat({_MASK}.shape[0])\n"
    )
    return ast.parse(text).body


def _masked_add(stmt: ast.stmt, idx: str, top_x: str) -> bool:
    """Multiply what ``out.index_add_(0, top_x, value)`` adds by the mask at the pairs; False when absent."""
    if not (isinstance(stmt, ast.Expr) and _is_call(stmt.value, "index_add_")):
        return False
    call = stmt.value
    if len(call.args) != 3 or not (isinstance(call.args[1], ast.Name) and call.args[1].id == top_x):  # type: ignore[attr-defined]
        return False
    value = call.args[2]  # type: ignore[attr-defined]
    weight = ast.parse(f"{_MASK}[{idx}, {top_x}].unsqueeze(-1).to(({ast.unparse(value)}).dtype)", mode="eval").body
    call.args[2] = ast.BinOp(left=value, op=ast.Mult(), right=weight)  # type: ignore[attr-defined]
    return True


def propose_dense_experts(fn: object, brk: BreakSite | None = None) -> Proposal:
    """The experts loop over ``nonzero``'s hits run over every expert with the router's mask (see the module)."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    new_def = copy.deepcopy(src.tree)
    hits: dict[str, str] = {}  # the name nonzero's rows go to -> the mask they come from
    for stmt in ast.walk(new_def):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            mask = _nonzero_source(stmt.value)
            if mask is not None:
                hits[stmt.targets[0].id] = mask
    done = sum(
        _densify(loop, hits[loop.iter.id])
        for loop in list(ast.walk(new_def))
        if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Name) and loop.iter.id in hits
    )
    for node in ast.walk(new_def):  # nonzero's hits no loop reads any more: not computed at all
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block:
                block[:] = [s for s in block if not _unused_hits(s, new_def, hits)] or [ast.Pass()]
    if not done:
        out.notes.append(f"{src.fn.__qualname__}: no loop over `nonzero`'s experts with `torch.where` and "
                         "`index_add_` (the eager experts loop); not rewritten")
        out.fits = False
        return out
    ast.fix_missing_locations(new_def)
    why = ("the eager experts loop over the experts `nonzero` finds has data-dependent shapes (GB0036); every "
           "expert runs on every routed slot, weighted by the router's mask (static shapes; num_experts times "
           "the expert compute)")
    out.rewrites.append(Rewrite.of(
        src, new_def, "experts-dense",
        f"{src.fn.__qualname__}: the loop over nonzero's experts -> every expert, masked", why))
    return out


def _unused_hits(stmt: ast.stmt, tree: ast.FunctionDef, hits: dict[str, str]) -> bool:
    """``expert_hit = ....nonzero()`` whose name nothing reads (its loop was rewritten)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    if name not in hits:
        return False
    return not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(tree))


def _densify(loop: ast.For, mask_name: str) -> int:
    """Rewrite one experts loop in place (1), or leave it (0) when its body is not the known form."""
    pairs = next(((i, p) for i, s in enumerate(loop.body) if (p := _where_pairs(s)) is not None), None)
    if pairs is None:
        return 0
    at, (idx, top_x, mask) = pairs
    adds = [s for s in ast.walk(ast.Module(body=loop.body[at + 1:], type_ignores=[]))
            if isinstance(s, ast.Expr) and _is_call(s.value, "index_add_")]
    if len(adds) != 1 or not _masked_add(adds[0], idx, top_x):
        return 0
    loop.body[at:at + 1] = _pairs_stmts(idx, top_x, mask)
    loop.iter = ast.parse(f"[[_nstviz_e] for _nstviz_e in range(len({mask_name}))]", mode="eval").body
    return 1
