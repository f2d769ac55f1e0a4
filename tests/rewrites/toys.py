"""Small real functions that break torch.compile, one family per remedy (and ones that must not be rewritten)."""

from __future__ import annotations

import math

import numpy as np
import torch

# -- remedy 1: data-dependent if ----------------------------------------------------------------


def branch_assign(x):
    y = x * 2
    if y.sum() > 0:
        z = y + 1
    else:
        z = y - 1
    return z * 3


def branch_return(x):
    if x.mean() > 0:
        return x.sin()
    return x.cos()


def branch_no_else(x, w):
    h = x @ w
    if h.max() > 1 and h.min() < 0:
        h = h / h.max()
    return h.relu()


def soft_clip(x):
    s = x.abs().max()
    y = x / s if s > 1 else x
    return y + 1


def make_scaled_branch(scale):
    def scaled(x):
        if x.sum() > 0:
            y = x * scale
        else:
            y = x / scale
        return y + 1

    return scaled


def pad_to_multiple(x):
    if x.shape[-1] % 4 != 0:
        x = torch.nn.functional.pad(x, (0, 4 - x.shape[-1] % 4))
    return x * 2


def branch_side_effect(x, log):
    if x.sum() > 0:
        log.append("positive")
        x = x + 1
    return x * 2


class Gated(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)

    def gate(self, h):
        if h.norm() > 2.0:
            h = h / h.norm()
        return h

    def forward(self, x):
        return self.gate(self.lin(x)).tanh()


# -- remedy 2: .item() as a size -----------------------------------------------------------------


def take_prefix(x, k):
    n = k.max().item()
    if n < 0:
        raise ValueError("negative length")
    return x[:n] * 2


def scale_by_mean(x, k):
    v = k.float().mean().item()
    return x * v


# -- remedy 3: comprehension over a tensor --------------------------------------------------------


def flip_rows(t):
    return torch.stack([r if r.sum() > 0 else -r for r in t])


def affine_rows(t):
    y = torch.stack([r * 2 + 1 for r in t])
    return y.sin()


def _breaking_helper(r):
    torch._dynamo.graph_break()
    return r * 2


def rows_through_helper(t):
    return torch.stack([_breaking_helper(r) for r in t])


# -- remedy 4: C/builtin calls ------------------------------------------------------------------


def floor_bins(x):
    vals = [math.floor(v * 4) / 4 for v in x.flatten().tolist()]
    return torch.tensor(vals, dtype=x.dtype).reshape(x.shape)


def quantized_error(x):
    h = x * 2 + 1
    q = floor_bins(h)
    return (q - h).abs().sum(-1)


def rounded_unique(x):
    return torch.from_numpy(np.unique(x.numpy().round(0)))


def unique_plus_one(x):
    return rounded_unique(x * 2) + 1


def flip_rows_loop(t):
    out = []
    for r in t:
        out.append(r if r.sum() > 0 else -r)
    y = torch.stack(out)
    return y * 2


def optional_mask(x, mask=None, scale=True):
    if mask is not None:
        x = x * mask
    if scale:
        x = x * 2
    return x


# -- numpy on Python numbers (Reformer's chunk length helper) -------------------------------------


def chunk_multiple(sizes):
    return np.lcm(sizes[0], sizes[1])


def pad_to_chunks(x):
    m = chunk_multiple((4, 6))
    must_pad = x.shape[-1] % m != 0 and x.shape[-1] > 2
    if must_pad:
        x = torch.nn.functional.pad(x, (0, m - x.shape[-1] % m))
    return x * 2


def branch_on_a_prompt(x, ids):
    """A branch on values, in code whose integer input has structure: ids that rise by 0 or 1 (random ids raise)."""
    steps = torch.nn.functional.one_hot(torch.diff(ids), 2).float()  # like a label map read from a prompt
    y = x[:, 1:] * steps[..., 1]
    if y.sum() > 0:
        y = y + 1
    return y * 3


def focal_loss(inputs, targets):
    """Grounding DINO's sigmoid focal loss in small: the cross entropy needs the two lengths equal."""
    prob = inputs.sigmoid()
    ce = torch.nn.functional.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    return (ce * (1 - prob) ** 2).mean()


def masked_logits_loss(logits, onehot, mask):
    """Two masked_selects of one mask: equal lengths by construction, two unbacked sizes to Dynamo."""
    selected = torch.masked_select(logits.log_softmax(-1), mask)
    wanted = torch.masked_select(onehot, mask).float()
    return focal_loss(selected, wanted) * 2
