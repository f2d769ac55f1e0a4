"""Packed-sequence attention run per segment, and a placeholder count on a boolean-mask selection.

Kept in their own module: the remedies read these functions' source, and their tests patch them live.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def eager_attention(query, key, value, attention_mask=None, scale=1.0):
    weights = query @ key.transpose(-1, -2) * scale
    if attention_mask is not None:
        weights = weights + attention_mask
    return torch.softmax(weights, -1) @ value, weights


class PackedSdpa(torch.nn.Module):
    """Images packed in one sequence, attended one image at a time with SDPA (no mask keyword)."""

    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)

    def forward(self, x, cu_seqlens):
        n = x.shape[0]
        q, k, v = self.qkv(x).view(n, 3, self.heads, -1).permute(1, 2, 0, 3)[:, None].unbind(0)
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]
        splits = [torch.split(t, lengths.tolist(), dim=2) for t in (q, k, v)]
        outs = [F.scaled_dot_product_attention(a, b, c).transpose(1, 2) for a, b, c in zip(*splits, strict=True)]
        out = torch.cat(outs, dim=1)
        return out.reshape(n, -1)


class PackedEager(PackedSdpa):
    """The same with an attention function given ``attention_mask=None`` and other keywords."""

    def forward(self, x, cu_seqlens):
        n = x.shape[0]
        q, k, v = self.qkv(x).view(n, 3, self.heads, -1).permute(1, 2, 0, 3)[:, None].unbind(0)
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]
        splits = [torch.split(t, lengths.tolist(), dim=2) for t in (q, k, v)]
        outs = [eager_attention(a, b, c, attention_mask=None, scale=0.5)[0].transpose(1, 2) for a, b, c in zip(*splits, strict=True)]
        out = torch.cat(outs, dim=1)
        return out.reshape(n, -1)


class PackedWeightsKept(PackedSdpa):
    """The per-segment outputs are read again after the cat: not one call's worth."""

    def forward(self, x, cu_seqlens):
        n = x.shape[0]
        q, k, v = self.qkv(x).view(n, 3, self.heads, -1).permute(1, 2, 0, 3)[:, None].unbind(0)
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]
        splits = [torch.split(t, lengths.tolist(), dim=2) for t in (q, k, v)]
        outs = [eager_attention(a, b, c, attention_mask=None)[0] for a, b, c in zip(*splits, strict=True)]
        out = torch.cat(outs, dim=2)
        return out.reshape(n, -1), outs[0]


def merge_features(embeds, input_ids, features, token_id: int = 7):
    """Image features scattered at the placeholder tokens, after checking there are as many."""
    mask = (input_ids == token_id).unsqueeze(-1).expand_as(embeds)
    if embeds[mask].numel() != features.numel():
        raise ValueError("image features and image tokens do not match")
    return embeds.masked_scatter(mask, features) * 2


class LogDepthLoss(torch.nn.Module):
    """A scale-invariant log loss over the pixels with a depth, as depth estimators train."""

    def forward(self, pred, target):
        valid_mask = (target > 0).detach()
        diff_log = torch.log(target[valid_mask]) - torch.log(pred[valid_mask])
        return torch.sqrt(torch.pow(diff_log, 2).mean() - 0.5 * torch.pow(diff_log.mean(), 2))


def masked_rows_l1(pred, target, keep_rows):
    """An L1 over the kept rows only (a row mask over the leading dimension)."""
    return (pred[keep_rows] - target[keep_rows]).abs().sum()


def selection_returned(pred, keep_rows):
    """The selection itself is returned: no reduction to rewrite."""
    picked = pred[keep_rows]
    return picked.mean(), picked


def check_that(cond, msg):
    """A check helper in the style of transformers' ``torch_compilable_check``."""
    if isinstance(cond, torch.Tensor):
        torch._check_tensor_all(cond, lambda: msg)
    else:
        torch._check(cond, lambda: msg)


def merge_features_checked(embeds, input_ids, features, token_id: int = 7):
    """The placeholder count checked by a helper rather than an ``if``."""
    mask = (input_ids == token_id).unsqueeze(-1).expand_as(embeds)
    n_tokens = mask.sum()
    check_that(embeds[mask].numel() == features.numel(), f"tokens: {n_tokens}, features: {features.shape[0]}")
    return embeds.masked_scatter(mask, features) * 2
