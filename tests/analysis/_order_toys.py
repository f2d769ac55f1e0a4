"""A small model whose breaks take four kinds of advisor attempt (tests/analysis/test_advisor_order.py).

A ``.item()`` break (its config flag), a ``print`` (a mark), a helper called with ``None`` in
a variable (the mark fails with GB0236, an adapter takes it) and a helper given a user class
(registered with pytree).
"""

from __future__ import annotations

import dataclasses

import torch


@dataclasses.dataclass
class Box:
    x: torch.Tensor
    scale: float


def noisy(x):
    print("noisy called")
    return x * 2


def shift_and_break(x, bias=None):
    torch._dynamo.graph_break()
    return x if bias is None else x + bias


def use_box(box):
    torch._dynamo.graph_break()
    return box.x * box.scale


def data_dependent(x):
    n = int(x.abs().sum().item())
    return x + n


def model(x):
    nothing = None
    y = noisy(x.sin())
    y = shift_and_break(y, nothing)
    y = use_box(Box(y, 2.0))
    y = data_dependent(y)
    return y.cos()
