"""Experts as one module each (Switch Transformers' and NLLB-MoE's form): no batched switch, the eager loop only."""

from __future__ import annotations

import torch
from torch import nn


class ToyModuleExperts(nn.ModuleDict):
    """Mixtral's eager loop over the experts ``nonzero`` finds, calling ``self[f"expert_{i}"]``."""

    def __init__(self, num_experts: int = 4, dim: int = 6) -> None:
        super().__init__()
        self.num_experts = num_experts
        for i in range(num_experts):
            self[f"expert_{i}"] = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))

    def forward(self, hidden_states, router_mask, router_probs):
        final_hidden_states = torch.zeros_like(hidden_states)
        with torch.no_grad():
            expert_mask = torch.nn.functional.one_hot(router_mask, num_classes=self.num_experts).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            current_state = hidden_states[None, top_x].reshape(-1, hidden_states.shape[-1])
            current_hidden_states = self[f"expert_{expert_idx[0]}"](current_state) * router_probs[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        return final_hidden_states


class ToyModuleMoE(nn.Module):
    """Top-2 routing over :class:`ToyModuleExperts`, then a residual."""

    def __init__(self, top_k: int = 2) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.top_k = top_k
        self.router = nn.Linear(6, 4)
        self.experts = ToyModuleExperts()

    def forward(self, x):
        probs, index = torch.topk(self.router(x).softmax(-1), self.top_k, dim=-1)
        return x + self.experts(x, index, probs)


def build(top_k: int = 2):
    """The toy in eval mode and its input (for the paste check in a fresh process)."""
    torch.manual_seed(0)
    return ToyModuleMoE(top_k).eval(), (torch.randn(10, 6),)
