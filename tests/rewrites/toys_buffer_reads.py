"""EoMT's pattern in small: a loop over layers that branches on elements of a float buffer."""

from __future__ import annotations

import torch
from torch import nn


class Layer(nn.Module):
    """A layer of its own (as a model's are): Dynamo compiles its frame when the loop's frame is skipped."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)

    def forward(self, x):
        return self.lin(x).relu()


class Annealed(nn.Module):
    """Layers whose mask is applied with a probability a schedule anneals (a buffer, written from outside)."""

    def __init__(self, n: int = 3, width: int = 8) -> None:
        super().__init__()
        self.embed = nn.Linear(width, width)
        self.layers = nn.ModuleList(Layer(width) for _ in range(n))
        self.probs = nn.Buffer(torch.ones(n))

    def forward(self, x):
        """Every layer; from the second, masked where its probability says."""
        x = self.embed(x)
        for idx, layer in enumerate(self.layers):
            if idx >= 1 and (self.training or self.probs[idx] > 0):
                x = self._mask(x, prob=self.probs[idx])
            x = layer(x)
        return x

    @staticmethod
    def _mask(x, prob):
        if prob < 1:
            x = x * (torch.rand_like(x) > prob)
        return x


class Written(Annealed):
    """A loop that halves each probability it uses: the buffer changes while it is read, so it is not read once."""

    def forward(self, x):
        for idx, layer in enumerate(self.layers):
            if self.probs[idx] > 0:
                self.probs[idx] = self.probs[idx] * 0.5
            x = layer(x)
        return x
