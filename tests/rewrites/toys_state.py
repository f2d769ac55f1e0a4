"""Modules of our own that keep statistics on themselves and update them under a test on their values."""

from __future__ import annotations

import torch
from torch import nn


class RangeObserver(nn.Module):
    """A fake-quantiser's observer, shaped like I-BERT's ``QuantAct``: seeded by the first batch, then an average."""

    def __init__(self, momentum: float = 0.9) -> None:
        super().__init__()
        self.momentum = momentum
        self.x_min = nn.Buffer(torch.zeros(1) - 1e-5)
        self.x_max = nn.Buffer(torch.zeros(1) + 1e-5)

    def forward(self, x):
        if self.training:
            x_min = x.detach().min()
            x_max = x.detach().max()
            assert x_max.isnan().sum() == 0 and x_min.isnan().sum() == 0, "NaN detected when computing min/max"
            if self.x_min.min() > -1.1e-5 and self.x_max.max() < 1.1e-5:
                self.x_min = self.x_min + x_min
                self.x_max = self.x_max + x_max
            elif self.momentum == -1:
                self.x_min = torch.min(self.x_min, x_min)
                self.x_max = torch.max(self.x_max, x_max)
            else:
                self.x_min = self.x_min * self.momentum + x_min * (1 - self.momentum)
                self.x_max = self.x_max * self.momentum + x_max * (1 - self.momentum)
        scale = (self.x_max - self.x_min) / 255
        return x + (torch.round(x / scale) * scale - x).detach()


class QuantMlp(nn.Module):
    """Two observed linear layers: the observers' branch breaks the graph in each."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 8), nn.Linear(8, 3)
        self.act1, self.act2 = RangeObserver(), RangeObserver()

    def forward(self, x):
        return self.fc2(self.act2(torch.relu(self.fc1(self.act1(x)))))


class PeakTracker(nn.Module):
    """One arm updates the peak and a counter; the other leaves the peak and only counts."""

    def __init__(self) -> None:
        super().__init__()
        self.peak = nn.Buffer(torch.zeros(()))
        self.count = nn.Buffer(torch.zeros(()))

    def forward(self, x):
        level = x.abs().mean()
        if level > self.peak:
            self.peak = level
            self.count = self.count + 1
        else:
            self.count = self.count + 0.5
        return x / (self.peak + 1)


class LoggedTracker(nn.Module):
    """The arm calls a method of the instance (side effects unknown): not rewritten."""

    def __init__(self) -> None:
        super().__init__()
        self.peak = nn.Buffer(torch.zeros(()))

    def reset(self, level):
        self.peak = level
        return level

    def forward(self, x):
        level = x.abs().mean()
        if level > self.peak:
            self.peak = self.reset(level)
        return x / (self.peak + 1)
