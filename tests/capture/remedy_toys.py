"""Small real models for the advisor's adapter and pytree remedies (tests/capture/test_remedies.py).

Each breaks the graph in a helper (``torch._dynamo.graph_break()``) that nonstrict_trace can
trace, but that is called with an argument nonstrict_trace refuses: an explicit ``None``, a
``None`` in a variable, or an instance of a class that is not a pytree.
"""

from __future__ import annotations

import dataclasses

import torch


def scale_and_break(x, mask, scale):
    """Breaks the graph; ``mask`` is optional."""
    if mask is not None:
        x = x * mask
    torch._dynamo.graph_break()
    return x * scale


def explicit_none(x):
    return scale_and_break(x + 1, None, 2.0) - 1


def shift_and_break(x, bias=None, *, offset=None):
    """Breaks the graph; ``bias`` and ``offset`` are optional."""
    torch._dynamo.graph_break()
    if bias is not None:
        x = x + bias
    return x if offset is None else x - offset


def none_in_variable(x):
    nothing = None  # not visible at the call site: the nonstrict attempt fails with GB0236
    return shift_and_break(x.sin(), nothing, offset=nothing).cos()


class Gate(torch.nn.Module):
    """A submodule whose forward breaks and is called with None."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, mask):
        torch._dynamo.graph_break()
        return self.lin(x) if mask is None else self.lin(x * mask)


class GateModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()

    def forward(self, x):
        return self.gate(x.sin(), None).cos()


@dataclasses.dataclass
class Box:
    x: torch.Tensor
    scale: float


class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b


def use_box(box):
    torch._dynamo.graph_break()
    return box.x * box.scale


def use_pair(p):
    torch._dynamo.graph_break()
    return p.a + p.b


def box_model(x):
    return use_box(Box(x + 1, 2.0)) - 1


def pair_model(x):
    return use_pair(Pair(x + 1, x)) - 1


def make_gate_model() -> GateModel:
    torch.manual_seed(0)
    return GateModel()


def pair_of(x):
    torch._dynamo.graph_break()
    return Pair(x.sin(), x.cos())


def pair_out_model(x):
    p = pair_of(x + 1)
    return p.a * p.b
