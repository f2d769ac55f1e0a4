"""A mixture-of-experts block whose experts use transformers' ``use_experts_implementation`` switch."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from torch import nn
from transformers.integrations.moe import use_experts_implementation


@use_experts_implementation
class ToyExperts(nn.Module):
    """Experts as 3-D weights; ``forward`` is the eager loop over the experts ``nonzero`` finds (as Mixtral's)."""

    def __init__(self, config) -> None:
        super().__init__()
        self.num_experts = 4
        self.gate_up_proj = nn.Parameter(torch.randn(4, 2 * 8, 6) * 0.3)
        self.down_proj = nn.Parameter(torch.randn(4, 6, 8) * 0.3)
        self.act_fn = nn.SiLU()

    def forward(self, hidden_states, top_k_index, top_k_weights):
        final = torch.zeros_like(hidden_states)
        with torch.no_grad():
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=self.num_experts).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            expert_idx = expert_idx[0]
            top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
            gate, up = nn.functional.linear(hidden_states[token_idx], self.gate_up_proj[expert_idx]).chunk(2, dim=-1)
            h = nn.functional.linear(self.act_fn(gate) * up, self.down_proj[expert_idx])
            final.index_add_(0, token_idx, h * top_k_weights[token_idx, top_k_pos, None])
        return final


class ToyMoE(nn.Module):
    """Top-2 routing over :class:`ToyExperts`."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.router = nn.Linear(6, 4)
        self.experts = ToyExperts(SimpleNamespace(_experts_implementation="eager"))

    def forward(self, x):
        weights, index = torch.topk(self.router(x).softmax(-1), 2, dim=-1)
        return self.experts(x, index, weights / weights.sum(-1, keepdim=True))


def mixtral():
    """Mixtral from a tiny config with the eager experts (transformers 5.x), eval; and one input."""
    import transformers as T

    torch.manual_seed(0)
    cfg = T.MixtralConfig(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                          num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                          num_local_experts=4, num_experts_per_tok=2, experts_implementation="eager")
    return T.MixtralModel(cfg).eval()


def qwen2_moe():
    """Qwen2-MoE from a tiny config with the eager experts (a shared expert too), eval."""
    import transformers as T

    torch.manual_seed(0)
    cfg = T.Qwen2MoeConfig(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                           num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64, num_experts=4,
                           num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=16,
                           experts_implementation="eager")
    return T.Qwen2MoeModel(cfg).eval()
