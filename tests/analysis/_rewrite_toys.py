"""Toys for the advisor's source rewrites (importable in a fresh process for the paste checks)."""

import torch


def gate(h):
    if h.sum() > 0:
        y = h.relu()
    else:
        y = h.tanh()
    return y + 1


def logged(h):
    if h.sum() > 0:
        print("positive")
        h = h.relu()
    return h + 1


class Gated(torch.nn.Module):
    """A linear layer, then a branch on the sign of its output's sum."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)

    def forward(self, x):
        return gate(self.lin(x)) * 2


class Logged(torch.nn.Module):
    """The same, with a print in the branch: no rewrite may drop it."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)

    def forward(self, x):
        return logged(self.lin(x)) * 2


def floor_quarters(h):
    # Python floats from a float tensor (GB0109): neither Dynamo nor nonstrict_trace can trace it
    vals = [int(v * 4) / 4 for v in h.flatten().tolist()]
    return torch.tensor(vals, dtype=h.dtype).reshape(h.shape)


class Quantized(torch.nn.Module):
    """A linear layer whose output is rounded down to quarters in Python, then used again."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)

    def forward(self, x):
        h = self.lin(x)
        return (floor_quarters(h) - h).abs().sum(-1)
