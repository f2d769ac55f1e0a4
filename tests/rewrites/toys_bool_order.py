"""Toys for ``static-first``: attention over the tokens a mask keeps, its causal flag decided by a chain
that tests the (data-dependent) query length before what Python knows (as transformers' SDPA wrapper does).

The attention is written out: on torch 2.14 ``scaled_dot_product_attention`` itself guards on an unbacked
length (``Eq(u0, 0)``), which no reordering of the caller's chain can take."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def attend(q: torch.Tensor, mask: torch.Tensor | None, is_causal: bool) -> torch.Tensor:
    q_length = q.shape[-2]
    is_causal = q_length > 1 and mask is None and is_causal
    scores = q @ q.transpose(-1, -2)
    if is_causal:
        scores = scores + torch.full_like(scores, float("-inf")).triu(1)
    elif mask is not None:
        scores = scores + mask
    return F.softmax(scores, dim=-1) @ q


def attend_kept(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Self-attention (not causal) over the tokens ``keep`` selects: ``x[:, keep]`` has a data-dependent length."""
    kept = x[keep]
    return attend(kept.unsqueeze(0), None, False).sum(dim=1)


def causal_if_long(q: torch.Tensor, mask: torch.Tensor | None, is_causal: bool) -> torch.Tensor:
    """A test, not a value: ``if`` takes the chain's truth as it is."""
    if q.shape[-2] > 1 and mask is None and is_causal:
        return q.cumsum(-2)
    return q


def already_ordered(q: torch.Tensor, mask: torch.Tensor | None, is_causal: bool) -> bool:
    """What Python knows is tested first already: nothing to reorder."""
    return is_causal and mask is None and q.shape[-2] > 1
